// SPDX-License-Identifier: MIT
/*
 * Queues: creation, the submission protocol of Documentation/queues.rst,
 * progress marks, waiting for room and for completion, fault records.
 *
 * Packets are prepared in place in the device ring, as liburing prepares
 * SQEs: the engine reads nothing past the doorbell, so a slot taken but
 * not yet submitted is the program's. The ring is bound read-only for the
 * device, so the fault record's packet is the ring slot itself.
 *
 * Progress marks: ring indices k * (interval + 1) + interval hold a SIGNAL
 * packet (MAX, with IRQ) raising the queue's timeline signal to
 * base + index + 1, so "timeline >= base + i + 1" means "ring packet i
 * completed". Records (accel_queue_record) and sync marks use the same
 * rule at any index. A submitter that needs room sleeps until the mark
 * that frees it.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/*
 * The flight recorder: written by the producer (and by whichever thread
 * first sees a fault), read by accel_queue_describe() from any thread.
 * Every field is an atomic; an entry's seq is odd while it is written and
 * 2 * (index + 1) once entry @index is complete. The fields are stored
 * with release, so a reader that loads a newer field also sees the odd
 * seq after it, and skips the entry instead of printing a mix.
 */
void acc_fr_add(struct accel_queue *q, uint32_t op, uint64_t a, uint64_t b)
{
	unsigned int idx = __atomic_fetch_add(&q->fr_next, 1, __ATOMIC_RELAXED);
	struct acc_fr_entry *e = &q->fr[idx % ACC_FR_SIZE];

	__atomic_store_n(&e->seq, 2 * (uint64_t)idx + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&e->t, acc_now_ns(), __ATOMIC_RELEASE);
	__atomic_store_n(&e->op, op, __ATOMIC_RELEASE);
	__atomic_store_n(&e->a, a, __ATOMIC_RELEASE);
	__atomic_store_n(&e->b, b, __ATOMIC_RELEASE);
	__atomic_store_n(&e->seq, 2 * (uint64_t)idx + 2, __ATOMIC_RELEASE);
}

bool acc_fr_read(const struct accel_queue *q, unsigned int idx, struct acc_fr_entry *out)
{
	const struct acc_fr_entry *e = &q->fr[idx % ACC_FR_SIZE];
	uint64_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);

	if (seq != 2 * (uint64_t)idx + 2)
		return false;
	out->t = __atomic_load_n(&e->t, __ATOMIC_ACQUIRE);
	out->op = __atomic_load_n(&e->op, __ATOMIC_ACQUIRE);
	out->a = __atomic_load_n(&e->a, __ATOMIC_ACQUIRE);
	out->b = __atomic_load_n(&e->b, __ATOMIC_ACQUIRE);
	out->seq = seq;
	return __atomic_load_n(&e->seq, __ATOMIC_RELAXED) == seq;
}

/* Read the control page: read index and state. */
static int q_ctrl(struct accel_queue *q, uint64_t *ri, uint32_t *state)
{
	struct acc_tp *tp = &q->dev->tp;

	if (tp_is_gone(tp))
		return -ENODEV;
	*state = __atomic_load_n(&q->ctrl->state, __ATOMIC_ACQUIRE);
	*ri = __atomic_load_n(&q->ctrl->read_index, __ATOMIC_ACQUIRE);
	/* the producer's; accel_queue_completed() reads it from any thread */
	__atomic_store_n(&q->ri, *ri, __ATOMIC_RELAXED);
	return 0;
}

static int q_faulted(struct accel_queue *q)
{
	char text[2048];

	/* the module stops every queue of a removed device with REMOVED */
	if (q->ctrl && __atomic_load_n(&q->ctrl->fault, __ATOMIC_RELAXED) ==
	    DRM_VACCEL_FAULT_REMOVED) {
		tp_mark_gone(&q->dev->tp);
		return -ENODEV;
	}

	/* the producer and readers of the state may all get here */
	if (!__atomic_exchange_n(&q->fault_logged, true, __ATOMIC_RELAXED)) {
		acc_fr_add(q, FR_FAULT, q->ctrl ? q->ctrl->fault : 0, q->ctrl ? q->ctrl->fault_index : 0);
		if (acc_log_enabled(ACCEL_LOG_ERROR)) {
			accel_queue_describe(q, text, sizeof(text));
			acc_err("%s", text);
		}
	}
	return -EIO;
}

static int check_running(struct accel_queue *q)
{
	uint64_t ri;
	uint32_t st;
	int ret = q_ctrl(q, &ri, &st);

	if (ret)
		return ret;
	return st == DRM_VACCEL_QUEUE_RUNNING ? 0 : q_faulted(q);
}

static void put_mark(struct accel_queue *q, struct drm_vaccel_packet *p, uint64_t idx)
{
	accel_prep_signal(p, q->timeline->va, DRM_VACCEL_SIGNAL_MAX, q->base + idx + 1);
	accel_prep_irq(p);
	q->last_sig = idx + 1;
}

/* Take a slot (after a progress mark if one is due); NULL if full. */
static struct drm_vaccel_packet *take(struct accel_queue *q, int *err)
{
	unsigned int need = q->pi == q->next_mark ? 2 : 1;
	struct drm_vaccel_packet *p;
	uint64_t ri;
	uint32_t st;

	*err = 0;
	if (q->pi + need - q->ri > q->size) {
		*err = q_ctrl(q, &ri, &st);
		if (*err)
			return NULL;
		if (st != DRM_VACCEL_QUEUE_RUNNING) {
			*err = q_faulted(q);
			return NULL;
		}
		if (q->pi + need - ri > q->size) {
			unsigned int last = __atomic_load_n(&q->fr_next, __ATOMIC_RELAXED) - 1;

			if (__atomic_load_n(&q->fr[last % ACC_FR_SIZE].op, __ATOMIC_RELAXED) !=
			    FR_FULL)
				acc_fr_add(q, FR_FULL, q->pi + need - q->size, ri);
			*err = -EAGAIN;
			return NULL;
		}
	}
	if (q->pi == q->next_mark) {
		put_mark(q, &q->ring[q->pi & q->mask], q->pi);
		acc_fr_add(q, FR_MARK, q->pi, q->base + q->pi + 1);
		/* pi and wi: stored atomically for accel_queue_describe() */
		__atomic_store_n(&q->pi, q->pi + 1, __ATOMIC_RELAXED);
		q->next_mark += q->interval + 1;
	}
	p = &q->ring[q->pi & q->mask];
	memset(p, 0, sizeof(*p));
	__atomic_store_n(&q->pi, q->pi + 1, __ATOMIC_RELAXED);
	return p;
}

ACCEL_API struct drm_vaccel_packet *accel_queue_get_packet(struct accel_queue *q)
{
	int err;

	if (!q || tp_is_gone(&q->dev->tp))
		return NULL;
	return take(q, &err);
}

ACCEL_API int accel_queue_submit(struct accel_queue *q)
{
	struct acc_tp *tp;
	uint32_t state, nw = 0;
	uint64_t n;
	int ret;

	if (!q)
		return -EINVAL;
	tp = &q->dev->tp;
	if (tp_is_gone(tp))
		return -ENODEV;
	n = q->pi - q->wi;
	state = __atomic_load_n(&q->ctrl->state, __ATOMIC_ACQUIRE);
	if (state == DRM_VACCEL_QUEUE_RUNNING && n) {
		/* 1. the bodies are in the ring already (taken in place) */
		/* 2. commit: store-release of the write index */
		__atomic_store_n(q->doorbell, q->pi, __ATOMIC_RELEASE);
		/*
		 * 3. full fence (StoreLoad): the engine stores need_wakeup, fences
		 * and reloads the doorbell; one of us sees the other's store.
		 */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		/* 4. KICK only if the engine said it sleeps */
		nw = __atomic_load_n(&q->ctrl->need_wakeup, __ATOMIC_RELAXED);
	}
	if (state != DRM_VACCEL_QUEUE_RUNNING)
		return q_faulted(q);
	if (!n)
		return 0;
	__atomic_store_n(&q->wi, q->pi, __ATOMIC_RELAXED);
	acc_fr_add(q, FR_SUBMIT, n, q->wi);
	if (nw) {
		acc_fr_add(q, FR_KICK, q->wi, 0);
		ret = tp_kick(tp, q->id);
		if (ret) {
			acc_err("queue %u on %s: KICK at write index %llu: %s", q->id, q->dev->path,
				(unsigned long long)q->wi, strerror(-ret));
			return ret;
		}
	}
	return (int)n;
}

/* Ring slots that taking @n packets uses (marks included). */
static uint64_t slots_for(const struct accel_queue *q, uint64_t n)
{
	uint64_t m = 0, pos = q->next_mark;

	while (pos < q->pi + n + m) {
		m++;
		pos += q->interval + 1;
	}
	return n + m;
}

/* The timeline value that says ring packet @idx completed. */
static uint64_t value_of(const struct accel_queue *q, uint64_t idx)
{
	return q->base + idx + 1;
}

/*
 * The ring index of the submitted timeline packet to sleep on for a read
 * index of at least @need: the first at or after @need - 1, or else the
 * last one submitted. Return false if there is none.
 */
static bool sleep_target(const struct accel_queue *q, uint64_t need, uint64_t *idx)
{
	uint64_t P = q->interval, m0, latest = 0;
	bool have_latest = false;

	m0 = need <= P + 1 ? P : P + (need - 1 - P + P) / (P + 1) * (P + 1);
	if (m0 < q->wi) {
		*idx = m0;
		if (q->last_sig && q->last_sig - 1 >= need - 1 && q->last_sig - 1 < m0 &&
		    q->last_sig <= q->wi)
			*idx = q->last_sig - 1;
		return true;
	}
	if (q->last_sig && q->last_sig <= q->wi) {
		latest = q->last_sig - 1;
		have_latest = true;
	}
	if (q->wi > P) {
		m0 = (q->wi - 1 - P) / (P + 1) * (P + 1) + P;
		if (!have_latest || m0 > latest)
			latest = m0;
		have_latest = true;
	}
	*idx = latest;
	return have_latest;
}

/* Sleep until the timeline reaches @value or @deadline passes. */
static int q_sleep(struct accel_queue *q, uint64_t value, int64_t deadline)
{
	struct drm_vaccel_signal_cond c = {
		.handle = q->timeline->page->buf->handle, .cond = DRM_VACCEL_WAIT_GE,
		.offset = q->timeline->offset, .value = value,
	};
	int64_t d = deadline;
	uint64_t ri;
	uint32_t st;
	int ret;

	if (q->ignore_faults && d - acc_now_ns() > 1000000)
		d = acc_now_ns() + 1000000;
	ret = acc_wait(q->dev, &c, 1, q->ignore_faults ? DRM_VACCEL_WAIT_IGNORE_FAULTS : 0, d,
		       NULL);
	if (ret == -ETIMEDOUT && d < deadline)
		return 0;
	if (ret == -EIO) {
		/* another queue of the context faulted: ours? */
		ret = q_ctrl(q, &ri, &st);
		if (ret)
			return ret;
		if (st != DRM_VACCEL_QUEUE_RUNNING)
			return q_faulted(q);
		acc_warn("queue %u on %s: another queue of the context faulted; waiting in 1 ms "
			 "slices from now on", q->id, q->dev->path);
		q->ignore_faults = true;
		return 0;
	}
	return ret;
}

/*
 * Wait until the read index reaches @need: spin for the budget, then
 * sleep on the timeline (or, when no mark covers @need, in short naps).
 */
static int wait_index(struct accel_queue *q, uint64_t need, int64_t timeout_ns,
		      bool nonblock_eagain, uint32_t fr_op)
{
	int64_t deadline = acc_deadline(timeout_ns), spin_end = acc_now_ns() + acc_spin_ns();
	int64_t nap = 20000, now;
	uint64_t ri, idx;
	uint32_t st;
	int ret, err;

	for (;;) {
		ret = q_ctrl(q, &ri, &st);
		if (ret)
			return ret;
		if (st != DRM_VACCEL_QUEUE_RUNNING)
			return q_faulted(q);
		if ((int64_t)(ri - need) >= 0)
			return 0;
		if (!timeout_ns)
			return nonblock_eagain ? -EAGAIN : -ETIMEDOUT;
		now = acc_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		if (now < spin_end) {
			acc_cpu_relax();
			continue;
		}
		if (sleep_target(q, need, &idx) &&
		    !acc_ge(acc_signal_load(q->timeline, &err), value_of(q, idx))) {
			if (err)
				return err;
			acc_fr_add(q, fr_op, need, idx);
			ret = q_sleep(q, value_of(q, idx), deadline);
			if (ret)
				return ret;
			nap = 20000;
			continue;
		}
		/* the mark we could sleep on is done and the read index lags, or none */
		if (nap > deadline - now)
			nap = deadline - now;
		{
			struct timespec ts = { 0, (long)nap };

			nanosleep(&ts, NULL);
		}
		if (nap < 1000000)
			nap *= 2;
	}
}

ACCEL_API int accel_queue_reserve(struct accel_queue *q, unsigned int n, int64_t timeout_ns)
{
	uint64_t slots;
	int ret;

	if (!q)
		return -EINVAL;
	ret = acc_check_dev(q->dev, "queue_reserve");
	if (ret)
		return ret;
	slots = slots_for(q, n);
	if (slots + (q->pi - q->wi) > q->size) {
		acc_err("queue %u on %s: reserve %u packets (%llu slots with marks) with %llu "
			"unsubmitted: can never fit a ring of %u", q->id, q->dev->path, n,
			(unsigned long long)slots, (unsigned long long)(q->pi - q->wi), q->size);
		return -EINVAL;
	}
	if (!n)
		return check_running(q);
	return wait_index(q, q->pi + slots - q->size, timeout_ns, true, FR_RESERVE_SLEEP);
}

ACCEL_API int accel_queue_sync(struct accel_queue *q, int64_t timeout_ns)
{
	struct drm_vaccel_packet *p;
	uint64_t ri;
	uint32_t st;
	int ret, err;

	if (!q)
		return -EINVAL;
	ret = acc_check_dev(q->dev, "queue_sync");
	if (ret)
		return ret;
	acc_fr_add(q, FR_SYNC, q->wi, 0);
	ret = q_ctrl(q, &ri, &st);
	if (ret)
		return ret;
	if (st != DRM_VACCEL_QUEUE_RUNNING)
		return q_faulted(q);
	if (ri == q->wi)
		return 0;
	/* make the last submitted packet one the host can sleep on */
	if (q->pi == q->wi && q->last_sig != q->wi && timeout_ns) {
		p = take(q, &err);
		if (p) {
			put_mark(q, p, q->pi - 1);
			acc_fr_add(q, FR_SYNC_MARK, q->pi - 1, value_of(q, q->pi - 1));
			ret = accel_queue_submit(q);
			if (ret < 0)
				return ret;
		}
	}
	return wait_index(q, q->wi, timeout_ns, false, FR_SYNC);
}

ACCEL_API int accel_queue_submit_packets(struct accel_queue *q,
					 const struct drm_vaccel_packet *pkts, unsigned int n,
					 int64_t timeout_ns)
{
	unsigned int chunk, i, done = 0;
	struct drm_vaccel_packet *p;
	int ret, err;

	if (!q || (n && !pkts))
		return -EINVAL;
	ret = acc_check_dev(q->dev, "queue_submit_packets");
	if (ret)
		return ret;
	chunk = (q->size - q->interval) / 2;
	if (!chunk)
		chunk = 1;
	while (done < n) {
		unsigned int k = n - done < chunk ? n - done : chunk;

		if (q->pi != q->wi) {
			ret = accel_queue_submit(q);
			if (ret < 0)
				return ret;
		}
		ret = accel_queue_reserve(q, k, timeout_ns);
		if (ret)
			return ret;
		for (i = 0; i < k; i++) {
			p = take(q, &err);
			if (!p)
				return err ? err : -EAGAIN;
			*p = pkts[done + i];
		}
		ret = accel_queue_submit(q);
		if (ret < 0)
			return ret;
		done += k;
	}
	return 0;
}

ACCEL_API int accel_queue_record(struct accel_queue *q, struct accel_event *ev)
{
	struct drm_vaccel_packet *p;
	int err;

	if (!q || !ev)
		return -EINVAL;
	err = acc_check_dev(q->dev, "queue_record");
	if (!err)
		err = check_running(q);	/* an event on a faulted queue never comes */
	if (err)
		return err;
	p = take(q, &err);
	if (!p)
		return err;
	put_mark(q, p, q->pi - 1);
	ev->signal = q->timeline;
	ev->value = value_of(q, q->pi - 1);
	acc_fr_add(q, FR_RECORD, q->pi - 1, ev->value);
	return 0;
}

ACCEL_API int accel_queue_wait_event(struct accel_queue *q, const struct accel_event *ev)
{
	struct drm_vaccel_packet *p;
	uint32_t handle;
	uint64_t va;
	int err;

	if (!q || !ev || !ev->signal)
		return -EINVAL;
	err = acc_check_dev(q->dev, "queue_wait_event");
	if (!err)
		err = check_running(q);
	if (err)
		return err;
	err = acc_signal_on(q->dev, ev->signal, &handle, &va);
	if (err) {
		acc_err("queue %u on %s: wait for signal 0x%llx of %s: %s", q->id, q->dev->path,
			(unsigned long long)ev->signal->va, ev->signal->dev->path, strerror(-err));
		return err;
	}
	p = take(q, &err);
	if (!p)
		return err;
	accel_prep_wait(p, va, DRM_VACCEL_WAIT_GE, ev->value, 0, 0);
	acc_fr_add(q, FR_WAIT_EVENT, va, ev->value);
	return 0;
}

ACCEL_API uint64_t accel_queue_submitted(const struct accel_queue *q)
{
	return q ? q->wi : 0;
}

ACCEL_API uint64_t accel_queue_completed(const struct accel_queue *q)
{
	if (!q)
		return 0;
	/* any thread: no store into the queue (q->ri is the producer's) */
	if (tp_is_gone(&q->dev->tp))
		return __atomic_load_n(&q->ri, __ATOMIC_RELAXED);
	return __atomic_load_n(&q->ctrl->read_index, __ATOMIC_ACQUIRE);
}

ACCEL_API int accel_queue_status(const struct accel_queue *q, struct accel_queue_fault *fault,
				 size_t fault_size)
{
	struct accel_queue *mq = (struct accel_queue *)q;
	struct acc_tp *tp;
	struct accel_queue_fault f;
	uint32_t st;
	int ret;

	if (!q)
		return -EINVAL;
	if (fault) {
		ret = acc_struct_size_check(fault_size, ACCEL_QUEUE_FAULT_SIZE_1_0);
		if (ret)
			return ret;
	}
	tp = &q->dev->tp;
	if (tp_is_gone(tp))
		return -ENODEV;
	memset(&f, 0, sizeof(f));
	st = __atomic_load_n(&q->ctrl->state, __ATOMIC_ACQUIRE);
	if (st != DRM_VACCEL_QUEUE_RUNNING) {
		f.code = q->ctrl->fault;
		f.ring_index = q->ctrl->fault_index;
		f.addr = q->ctrl->fault_addr;
		f.depth = q->ctrl->fault_depth;
		f.binding = q->ctrl->fault_binding;
		f.exec_index = q->ctrl->fault_exec_index;
	}
	if (st == DRM_VACCEL_QUEUE_RUNNING)
		return 0;
	if (f.code == DRM_VACCEL_FAULT_REMOVED)
		return q_faulted(mq);	/* -ENODEV, not a fault of the program */
	f.packet = q->ring[f.ring_index & q->mask];
	if (fault)
		acc_put_struct(fault, fault_size, &f, sizeof(f), ACCEL_QUEUE_FAULT_SIZE_1_0);
	(void)mq;
	return -EIO;
}

ACCEL_API struct accel_device *accel_queue_device(const struct accel_queue *q)
{
	return q ? q->dev : NULL;
}

ACCEL_API int accel_queue_create(struct accel_device *dev, const struct accel_queue_params *params,
				 struct accel_queue **out)
{
	struct accel_queue_params p = { .size = sizeof(p) };
	struct drm_vaccel_queue_create c = { 0 };
	struct accel_queue *q;
	void *db, *ctrl;
	int ret, err;

	ret = acc_check_dev(dev, "queue_create");
	if (ret)
		return ret;
	if (!out)
		return -EINVAL;
	if (params) {
		ret = acc_copy_struct(&p, sizeof(p), params, params->size,
				      ACCEL_QUEUE_PARAMS_SIZE_1_0);
		if (ret || p.flags || p.reserved) {
			acc_err("queue_create: %s: params size %u flags 0x%x: invalid%s", dev->path,
				params->size, ret ? 0 : p.flags,
				ret == -E2BIG ? " (a field this library does not know is set)" : "");
			return ret ? ret : -EINVAL;
		}
	}
	if (!p.ring_size)
		p.ring_size = 1024;
	if (p.ring_size < 4 || p.ring_size > DRM_VACCEL_RING_MAX ||
	    p.ring_size & (p.ring_size - 1)) {
		acc_err("queue_create: %s: ring size %u is not a power of two from 4 to %u",
			dev->path, p.ring_size, DRM_VACCEL_RING_MAX);
		return -EINVAL;
	}
	if (!p.progress_interval)
		p.progress_interval = p.ring_size / 4;
	if (p.progress_interval > p.ring_size / 2) {
		acc_err("queue_create: %s: progress interval %u above half the ring (%u)",
			dev->path, p.progress_interval, p.ring_size);
		return -EINVAL;
	}
	if (p.priority > DRM_VACCEL_QUEUE_PRIORITY_HIGH) {
		acc_err("queue_create: %s: priority %u", dev->path, p.priority);
		return -EINVAL;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->dev = dev;
	q->size = p.ring_size;
	q->mask = p.ring_size - 1;
	q->interval = p.progress_interval;
	q->next_mark = q->interval;
	list_init(&q->node);
	ret = acc_buffer_new(dev, (uint64_t)q->size * sizeof(*q->ring), 0, DRM_VACCEL_VM_READ,
			     PROT_READ | PROT_WRITE, true, &q->ring_buf);
	if (ret)
		goto err;
	q->ring = q->ring_buf->host;
	ret = acc_signal_new(dev, true, &q->timeline);
	if (ret)
		goto err;
	q->base = acc_signal_load(q->timeline, &err);
	c.ring_va = q->ring_buf->va;
	c.ring_size = q->size;
	c.priority = p.priority;
	ret = tp_queue_create(&dev->tp, &c);
	if (ret) {
		acc_err("queue_create: %s: QUEUE_CREATE ring 0x%llx size %u priority %u: %s%s",
			dev->path, (unsigned long long)c.ring_va, c.ring_size, c.priority,
			strerror(-ret), ret == -EPERM ? " (needs CAP_SYS_NICE)" : "");
		goto err;
	}
	q->id = c.queue_id;
	q->created = true;
	ret = tp_mmap(&dev->tp, c.doorbell_offset, ACC_PAGE, PROT_READ | PROT_WRITE, &db);
	if (!ret) {
		q->doorbell = db;
		ret = tp_mmap(&dev->tp, c.control_offset, ACC_PAGE, PROT_READ, &ctrl);
		if (!ret)
			q->ctrl = ctrl;
	}
	if (ret) {
		acc_err("queue_create: %s: mmap of queue %u pages: %s", dev->path, q->id,
			strerror(-ret));
		goto err;
	}
	acc_fr_add(q, FR_CREATE, q->id, q->size);
	pthread_mutex_lock(&dev->lock);
	list_add_tail(&dev->queues, &q->node);
	pthread_mutex_unlock(&dev->lock);
	acc_info("%s: queue %u: ring 0x%llx of %u packets, marks every %u, timeline 0x%llx",
		 dev->path, q->id, (unsigned long long)c.ring_va, q->size, q->interval,
		 (unsigned long long)q->timeline->va);
	*out = q;
	return 0;
err:
	acc_queue_free(q);
	return ret;
}

void acc_queue_free(struct accel_queue *q)
{
	struct accel_device *dev = q->dev;
	int ret;

	pthread_mutex_lock(&dev->lock);
	list_del(&q->node);
	pthread_mutex_unlock(&dev->lock);
	if (q->created) {
		ret = tp_queue_destroy(&dev->tp, q->id);
		if (ret && ret != -ENODEV)
			acc_warn("%s: QUEUE_DESTROY %u: %s", dev->path, q->id, strerror(-ret));
	}
	tp_munmap(&dev->tp, (void *)q->doorbell, ACC_PAGE);
	tp_munmap(&dev->tp, (void *)q->ctrl, ACC_PAGE);
	if (q->timeline)
		acc_signal_free(q->timeline);
	if (q->ring_buf)
		acc_buffer_free(q->ring_buf);
	free(q);
}

ACCEL_API void accel_queue_destroy(struct accel_queue *q)
{
	if (!q)
		return;
	acc_trace("%s: destroy queue %u", q->dev->path, q->id);
	acc_queue_free(q);
}
