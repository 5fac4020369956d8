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
 * The fast path (accel_queue_get_packet(), accel_queue_submit() with the
 * engine awake) reads no clock and no control-page word but need_wakeup,
 * which the doorbell protocol needs (after a full fence, or after the
 * compiler's only when the engine takes the fence on itself:
 * lib/membarrier.c); the state and the read index are read
 * when the ring looks full, in waits and in accel_queue_status(). A fault
 * the producer has not seen yet therefore does not stop a submit: the
 * packets go to a stopped queue and the next wait, reserve, sync or
 * status reports -EIO.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/*
 * The flight recorder: written by the producer only, read by
 * accel_queue_describe() from any thread. An entry's seq holds the entry's
 * index + 1 in its upper 32 bits and a "being written" bit (bit 0). The
 * writer sets the bit, stores the fields with release, then stores seq
 * with the bit clear; a reader loads seq (acquire), the fields (acquire),
 * and seq again: any change, the bit, or another index means the entry
 * was overwritten under it, and it is skipped instead of printed as a
 * mix. Fast-path entries (@timed false) carry no timestamp: no clock read
 * per submit.
 */
#define FR_SEQ(idx)	((uint64_t)((idx) + 1) << 32)

static void fr_put(struct accel_queue *q, uint32_t op, uint64_t a, uint64_t b, bool timed)
{
	/* one writer: a load and a store, no read-modify-write */
	unsigned int idx = atomic_load_explicit(&q->fr_next, memory_order_relaxed);
	struct acc_fr_entry *e = &q->fr[idx % ACC_FR_SIZE];

	atomic_store_explicit(&e->seq, FR_SEQ(idx) | 1, memory_order_relaxed);
	/* release: pairs with the acquire loads of acc_fr_read() (see above) */
	atomic_store_explicit(&e->t, timed ? acc_now_ns() : 0, memory_order_release);
	atomic_store_explicit(&e->op, op, memory_order_release);
	atomic_store_explicit(&e->a, a, memory_order_release);
	atomic_store_explicit(&e->b, b, memory_order_release);
	atomic_store_explicit(&e->seq, FR_SEQ(idx), memory_order_release);
	/* release: a reader acquiring fr_next sees the complete entry */
	atomic_store_explicit(&q->fr_next, idx + 1, memory_order_release);
}

/*
 * Submits are recorded lazily: accel_queue_submit() writes no entry (its
 * stores were about 9 ns of a 35 ns one-packet submit), and the run of
 * submits since the last entry (write indices fr_wi to wi) becomes one
 * FR_SUBMIT entry just before the next entry of any other kind.
 * accel_queue_describe() shows a run not yet recorded from fr_wi and wi.
 */
static void fr_flush_submits(struct accel_queue *q)
{
	uint64_t from = atomic_load_explicit(&q->fr_wi, memory_order_relaxed);

	if (q->wi == from)
		return;
	fr_put(q, FR_SUBMIT, q->wi - from, q->wi, false);
	/* release: a describe that sees the new fr_wi finds the entry (fr_next) */
	atomic_store_explicit(&q->fr_wi, q->wi, memory_order_release);
}

void acc_fr_add(struct accel_queue *q, uint32_t op, uint64_t a, uint64_t b, bool timed)
{
	fr_flush_submits(q);
	fr_put(q, op, a, b, timed);
}

bool acc_fr_read(const struct accel_queue *q, unsigned int idx, struct acc_fr_rec *out)
{
	const struct acc_fr_entry *e = &q->fr[idx % ACC_FR_SIZE];
	/* acquire: pairs with the final release store of seq in acc_fr_add() */
	uint64_t seq = atomic_load_explicit(&e->seq, memory_order_acquire);

	if ((seq & ~0xffffffffull) != FR_SEQ(idx) || seq & 1)
		return false;
	/* acquire: a field of a newer write makes its changed seq visible to the re-check */
	out->t = atomic_load_explicit(&e->t, memory_order_acquire);
	out->op = atomic_load_explicit(&e->op, memory_order_acquire);
	out->a = atomic_load_explicit(&e->a, memory_order_acquire);
	out->b = atomic_load_explicit(&e->b, memory_order_acquire);
	out->seq = seq;
	return atomic_load_explicit(&e->seq, memory_order_relaxed) == seq;
}

static void fr_add(struct accel_queue *q, uint32_t op, uint64_t a, uint64_t b)
{
	acc_fr_add(q, op, a, b, true);
}

/* Read the control page: read index and state. The producer only. */
static int q_ctrl(struct accel_queue *q, uint64_t *ri, uint32_t *state)
{
	int ret = tp_check(&q->dev->tp);

	if (ret)
		return ret;
	/* acquire: pairs with the engine's store-release of the state (after the fault record) */
	*state = acc_load_acquire_u32(&q->ctrl->state);
	/* acquire: the packets' effects before the read index are visible */
	*ri = acc_load_acquire_u64(&q->ctrl->read_index);
	/* published for accel_queue_completed() after a removal */
	acc_store_relaxed_u64(&q->ri, *ri);
	return 0;
}

/*
 * The queue is not running: -ENODEV if the device is gone (the module
 * stops every queue of a removed device with REMOVED), else -EIO, logged
 * once whichever thread sees it first. Any thread.
 */
static int q_faulted(struct accel_queue *q)
{
	char text[2048];

	if (acc_load_relaxed_u32(&q->ctrl->fault) == DRM_VACCEL_FAULT_REMOVED) {
		tp_mark_gone(&q->dev->tp);
		return -ENODEV;
	}
	atomic_store_explicit(&q->faulted, true, memory_order_relaxed);
	if (!atomic_exchange_explicit(&q->fault_logged, true, memory_order_relaxed) &&
	    acc_log_enabled(ACCEL_LOG_ERROR)) {
		accel_queue_describe(q, text, sizeof(text));
		acc_err("%s", text);
	}
	return -EIO;
}

int acc_queue_check(struct accel_queue *q)
{
	int ret = tp_check(&q->dev->tp);

	if (ret)
		return ret;
	/* acquire: pairs with the engine's store-release of the state */
	if (acc_load_acquire_u32(&q->ctrl->state) != DRM_VACCEL_QUEUE_RUNNING)
		return q_faulted(q);
	return 0;
}

/* A timeline SIGNAL (a progress mark, record or sync mark) for ring index @idx. */
static void put_mark(struct accel_queue *q, struct drm_vaccel_packet *slot, uint64_t idx)
{
	struct drm_vaccel_packet p;

	memset(&p, 0, sizeof(p));
	accel_prep_signal(&p, q->timeline->va, DRM_VACCEL_SIGNAL_MAX, q->base + idx + 1);
	accel_prep_irq(&p);
	acc_packet_publish(slot, &p);
	q->last_sig = idx + 1;
}

/*
 * Slots are handed out zeroed, but not zeroed one by one as they are
 * taken: the slow path zeroes the next ACC_ZERO_AHEAD free slots at once
 * (@zi), and the fast path hands them out as they are. A slot's line was
 * last read by the engine, on another CPU, so the first store into it
 * waits for the line to come back; zeroed one at a time, the zeroing and
 * the program's packet were two stores into a line not yet here, and the
 * store buffer held half as many lines in flight (an experiment without
 * any zeroing: the one-packet submit at 1.9-2.1 times the bare loop in two
 * runs of three, against 3.1-3.7 with it). In a batch the zeroing
 * streams, and the packets then land in lines this CPU owns.
 */
#define ACC_ZERO_AHEAD	64u

/* Zero up to ACC_ZERO_AHEAD slots from pi, all known free (below ri + size). */
static void zero_ahead(struct accel_queue *q)
{
	uint64_t end, i, ri;
	uint32_t st;

	/* fewer free slots than a chunk by the read index last seen: look again */
	if (q->ri + q->size - q->pi < ACC_ZERO_AHEAD)
		(void)q_ctrl(q, &ri, &st);	/* an error or a fault: the next full ring says so */
	end = q->ri + q->size;

	if (end > q->pi + ACC_ZERO_AHEAD)
		end = q->pi + ACC_ZERO_AHEAD;
	/*
	 * slot by slot, each a fixed-size memset the compiler writes as a few
	 * vector stores: a libc memset() of the whole range may take
	 * "rep stosb", which an emulator (the TCG test VM) runs a byte at a
	 * time (the one-packet path went from 122-147 to 224-283 ns there)
	 */
	for (i = q->pi; i < end; i++)
		memset(&q->ring[i & q->mask], 0, sizeof(q->ring[0]));
	q->zi = end;
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
		/* the slow path: the ring looks full, read the control page */
		*err = q_ctrl(q, &ri, &st);
		if (*err)
			return NULL;
		if (st != DRM_VACCEL_QUEUE_RUNNING) {
			*err = q_faulted(q);
			return NULL;
		}
		if (q->pi + need - ri > q->size) {
			unsigned int last = atomic_load_explicit(&q->fr_next,
								 memory_order_relaxed) - 1;

			if (atomic_load_explicit(&q->fr[last % ACC_FR_SIZE].op,
						 memory_order_relaxed) != FR_FULL)
				fr_add(q, FR_FULL, q->pi + need - q->size, ri);
			*err = -EAGAIN;
			return NULL;
		}
	}
	if (q->pi == q->next_mark) {
		put_mark(q, &q->ring[q->pi & q->mask], q->pi);
		acc_fr_add(q, FR_MARK, q->pi, q->base + q->pi + 1, false);
		acc_store_relaxed_u64(&q->pi, q->pi + 1);
		q->next_mark += q->interval + 1;
	}
	if (q->pi >= q->zi)
		zero_ahead(q);
	p = &q->ring[q->pi & q->mask];
	acc_store_relaxed_u64(&q->pi, q->pi + 1);
	return p;
}

ACCEL_API struct drm_vaccel_packet *accel_queue_get_packet(struct accel_queue *q)
{
	int err;

	/*
	 * Not after a fork (the ring is the parent's). After a removal it
	 * still hands out the slots the producer knows are free (the ring is
	 * anonymous memory then, and submit says -ENODEV), so that the slots
	 * of a successful accel_queue_reserve() are always there.
	 */
	if (!q || tp_forked(&q->dev->tp))
		return NULL;
	/* the fast path: a slot zeroed ahead (so free by the read index last seen), no mark due */
	if (q->pi != q->next_mark && q->pi < q->zi) {
		struct drm_vaccel_packet *p = &q->ring[q->pi & q->mask];

		acc_store_relaxed_u64(&q->pi, q->pi + 1);
		return p;
	}
	return take(q, &err);
}

/* Whether the submitter may skip its fence: the backend's engines take it on themselves. */
static bool light_fence_offered(const struct accel_device *dev)
{
	return dev->tp.ops->asym_doorbell && dev->tp.ops->asym_doorbell(dev->tp.fd);
}

/* KICK, the engine said it sleeps (the slow path of a submit). */
static int kick(struct accel_queue *q)
{
	int ret;

	fr_add(q, FR_KICK, q->wi, 0);
	ret = tp_kick(&q->dev->tp, q->id);
	if (ret)
		acc_err("queue %u on %s: KICK at write index %llu: %s", q->id, q->dev->path,
			(unsigned long long)q->wi, strerror(-ret));
	return ret;
}

ACCEL_API int accel_queue_submit(struct accel_queue *q)
{
	uint32_t nw;
	uint64_t n;
	int ret;

	if (!q)
		return -EINVAL;
	ret = tp_check(&q->dev->tp);
	if (ret)
		return ret;
	if (atomic_load_explicit(&q->faulted, memory_order_relaxed))
		return q_faulted(q);
	n = q->pi - q->wi;
	if (!n)
		return acc_queue_check(q);	/* nothing to publish: the state */
	/* 1. the packet bodies are in the ring already (taken in place) */
	/* 2. commit: store-release of the write index; pairs with the engine's acquire load */
	acc_store_release_u64(q->doorbell, q->pi);
	q->doorbells++;
	/*
	 * 3. StoreLoad: pairs with the engine's barrier between setting
	 * need_wakeup and re-reading the doorbells: one of us sees the
	 * other's store. A full fence, or, when the engine runs in this
	 * process and forces that barrier on this thread before it sleeps
	 * (acc_membarrier(), lib/membarrier.c), only the compiler's.
	 */
	if (q->light_fence)
		acc_compiler_fence();
	else
		acc_full_fence();
	/* 4. need_wakeup (relaxed: ordered by the fence); KICK only if set */
	nw = acc_load_relaxed_u32(&q->ctrl->need_wakeup);
	acc_store_relaxed_u64(&q->wi, q->pi);	/* the flight recorder's too (fr_flush_submits()) */
	if (nw) {
		/* the slow path anyway: a stopped queue's engine is not woken */
		ret = acc_queue_check(q);
		if (!ret)
			ret = kick(q);
		if (ret)
			return ret;
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


/* The longest a waiting thread lends itself to the device at a time. */
#define HELP_SLICE_NS	1000000ll

/* wait_index(): spin then sleep, only spin, only sleep */
enum wait_phase { WAIT_ALL, WAIT_SPIN, WAIT_SLEEP };

/*
 * Wait until the read index reaches @need or @deadline: spin for the
 * budget, then sleep on the timeline (or, when no mark covers @need, in
 * naps of 20 us doubling to 1 ms, checking the abort between them). While
 * it spins, the thread runs the device's work if the device can use it
 * (tp_help(): the in-process device's split packets); each slice that ran
 * some starts the spin budget again, as the thread did not spin.
 * @phase: WAIT_SPIN returns -EAGAIN once the spin budget is spent,
 * WAIT_SLEEP does not spin.
 */
static int wait_index(struct accel_queue *q, uint64_t need, int64_t deadline,
		      const struct acc_abort *abort, uint32_t fr_op, enum wait_phase phase)
{
	int64_t spin_end = acc_now_ns() + (phase == WAIT_SLEEP ? 0 : acc_spin_ns()), nap = 20000;
	int64_t now;
	struct accel_event ev = { .signal = q->timeline };
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
		if (abort && acc_ge(acc_signal_load(abort->sig, &err), abort->value))
			return err ? err : -ECANCELED;
		now = acc_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		if (now < spin_end) {
			if (tp_help(&q->dev->tp, deadline - now < HELP_SLICE_NS ? deadline - now :
					HELP_SLICE_NS))
				spin_end = acc_now_ns() + acc_spin_ns();
			else
				acc_cpu_relax();
			continue;
		}
		if (phase == WAIT_SPIN)
			return -EAGAIN;
		if (sleep_target(q, need, &idx) &&
		    !acc_ge(acc_signal_load(q->timeline, &err), value_of(q, idx))) {
			if (err)
				return err;
			fr_add(q, fr_op, need, idx);
			/* the timeline's producer is @q: only its faults end the wait */
			ev.value = value_of(q, idx);
			ret = acc_wait_events(&ev, 1, false, deadline, NULL, 0, abort, NULL);
			if (ret)
				return ret;
			nap = 20000;
			continue;
		}
		/* the mark we could sleep on is done and the read index lags, or none */
		if (nap > deadline - now)
			nap = deadline - now;
		nanosleep(&(struct timespec){ 0, (long)nap }, NULL);
		if (nap < 1000000)
			nap *= 2;
	}
}

/*
 * Is the ring index @need read already? From the read index last seen
 * first (no control-page read), then from the control page.
 */
static int read_past(struct accel_queue *q, uint64_t need, bool *done)
{
	uint64_t ri;
	uint32_t st;
	int ret;

	*done = (int64_t)(q->ri - need) >= 0;
	if (*done)
		return 0;
	ret = q_ctrl(q, &ri, &st);
	if (ret)
		return ret;
	if (st != DRM_VACCEL_QUEUE_RUNNING)
		return q_faulted(q);
	*done = (int64_t)(ri - need) >= 0;
	return 0;
}

/* Check: @n slots (with marks) can ever fit with what is taken and unsubmitted. */
static int reserve_fits(struct accel_queue *q, unsigned int n, uint64_t *slots)
{
	*slots = slots_for(q, n);
	if (*slots + (q->pi - q->wi) > q->size) {
		acc_err("queue %u on %s: reserve %u packets (%llu slots with marks) with %llu "
			"unsubmitted: can never fit a ring of %u", q->id, q->dev->path, n,
			(unsigned long long)*slots, (unsigned long long)(q->pi - q->wi), q->size);
		return -EINVAL;
	}
	return 0;
}

/*
 * Room for @n packets: 0 (no clock and no control-page read when the read
 * index last seen shows the room), or a wait until @deadline (computed
 * from @timeout_ns only then, when @deadline is 0), -EAGAIN if @timeout_ns
 * is 0.
 */
static int reserve(struct accel_queue *q, unsigned int n, int64_t timeout_ns, int64_t deadline,
		   const struct acc_abort *abort)
{
	uint64_t slots, need;
	bool room;
	int ret = acc_check_dev(q->dev, "queue_reserve");

	if (!ret)
		ret = reserve_fits(q, n, &slots);
	if (ret)
		return ret;
	if (!n)
		return acc_queue_check(q);
	/* a fault seen before: no room will ever be needed (no control-page read) */
	if (atomic_load_explicit(&q->faulted, memory_order_relaxed))
		return q_faulted(q);
	need = q->pi + slots - q->size;
	ret = read_past(q, need, &room);
	if (ret || room)
		return ret;
	if (!timeout_ns)
		return -EAGAIN;
	return wait_index(q, need, deadline ? deadline : acc_deadline(timeout_ns), abort,
			  FR_RESERVE_SLEEP, WAIT_ALL);
}

int acc_queue_reserve(struct accel_queue *q, unsigned int n, int64_t deadline,
		      const struct acc_abort *abort)
{
	return reserve(q, n, -1, deadline, abort);
}

ACCEL_API int accel_queue_reserve(struct accel_queue *q, unsigned int n, int64_t timeout_ns)
{
	if (!q)
		return -EINVAL;
	return reserve(q, n, timeout_ns, 0, NULL);
}

int acc_queue_sync(struct accel_queue *q, int64_t deadline, const struct acc_abort *abort)
{
	struct drm_vaccel_packet *p;
	uint64_t ri;
	uint32_t st;
	int ret, err;

	ret = acc_check_dev(q->dev, "queue_sync");
	if (ret)
		return ret;
	fr_add(q, FR_SYNC, q->wi, 0);
	ret = q_ctrl(q, &ri, &st);
	if (ret)
		return ret;
	if (st != DRM_VACCEL_QUEUE_RUNNING)
		return q_faulted(q);
	if (ri == q->wi)
		return 0;
	/*
	 * Spin (and help) first: the packet below is needed only to sleep,
	 * and costs the device a step and the host a doorbell when the wait
	 * is short.
	 */
	ret = wait_index(q, q->wi, deadline, abort, FR_SYNC, WAIT_SPIN);
	if (ret != -EAGAIN)
		return ret;
	/* make the last submitted packet one the host can sleep on */
	if (q->pi == q->wi && q->last_sig != q->wi && deadline > acc_now_ns()) {
		p = take(q, &err);
		if (p) {
			put_mark(q, p, q->pi - 1);
			fr_add(q, FR_SYNC_MARK, q->pi - 1, value_of(q, q->pi - 1));
			ret = accel_queue_submit(q);
			if (ret < 0)
				return ret;
		}
	}
	return wait_index(q, q->wi, deadline, abort, FR_SYNC, WAIT_SLEEP);
}

ACCEL_API int accel_queue_sync(struct accel_queue *q, int64_t timeout_ns)
{
	if (!q)
		return -EINVAL;
	return acc_queue_sync(q, timeout_ns ? acc_deadline(timeout_ns) : 0, NULL);
}

ACCEL_API int accel_queue_submit_packets(struct accel_queue *q,
					 const struct drm_vaccel_packet *pkts, unsigned int n,
					 int64_t timeout_ns, unsigned int *submitted)
{
	struct drm_vaccel_packet *ring;
	unsigned int chunk, i, done = 0;
	uint64_t pi, mark;
	uint32_t mask;
	int ret;

	if (submitted)
		*submitted = 0;
	if (!q || (n && !pkts))
		return -EINVAL;
	ret = acc_check_dev(q->dev, "queue_submit_packets");
	if (ret)
		return ret;
	chunk = (q->size - q->interval) / 2;
	if (!chunk)
		chunk = 1;
	/* the program's own packets taken before: published first, not counted */
	if (q->pi != q->wi) {
		ret = accel_queue_submit(q);
		if (ret < 0)
			return ret;
	}
	while (done < n) {
		unsigned int k = n - done < chunk ? n - done : chunk;

		/* room for the whole batch first: after this, writing it cannot fail */
		ret = reserve(q, k, timeout_ns, 0, NULL);
		if (ret)
			goto out;
		/* in locals: the ring stores could alias the queue's fields */
		ring = q->ring;
		mask = q->mask;
		mark = q->next_mark;
		for (i = 0, pi = q->pi; i < k; i++) {
			if (pi == mark) {
				put_mark(q, &ring[pi & mask], pi);
				acc_fr_add(q, FR_MARK, pi, q->base + pi + 1, false);
				pi++;
				mark += q->interval + 1;
			}
			/* the whole packet, then its header with a store-release */
			acc_packet_publish(&ring[pi & mask], &pkts[done + i]);
			pi++;
		}
		q->next_mark = mark;
		/* published for other threads' readers (describe) */
		acc_store_relaxed_u64(&q->pi, pi);
		ret = accel_queue_submit(q);
		if (ret < 0)
			goto out;
		done += k;
	}
	ret = 0;
out:
	if (submitted)
		*submitted = done;
	if (ret)
		acc_err("queue %u on %s: submit_packets: %u of %u packets published: %s", q->id,
			q->dev->path, done, n, strerror(-ret));
	return ret;
}

ACCEL_API int accel_queue_record(struct accel_queue *q, struct accel_event *ev)
{
	struct drm_vaccel_packet *p;
	int err;

	if (!q || !ev)
		return -EINVAL;
	err = acc_check_dev(q->dev, "queue_record");
	if (!err)
		err = acc_queue_check(q);	/* an event on a faulted queue never comes */
	if (err)
		return err;
	p = take(q, &err);
	if (!p)
		return err;
	put_mark(q, p, q->pi - 1);
	ev->signal = q->timeline;
	ev->value = value_of(q, q->pi - 1);
	acc_fr_add(q, FR_RECORD, q->pi - 1, ev->value, false);
	return 0;
}

ACCEL_API int accel_queue_wait_event(struct accel_queue *q, const struct accel_event *ev)
{
	struct drm_vaccel_packet *p, w;
	uint32_t handle;
	uint64_t va;
	int err;

	if (!q || !ev || !ev->signal)
		return -EINVAL;
	err = acc_check_dev(q->dev, "queue_wait_event");
	if (!err)
		err = acc_queue_check(q);
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
	memset(&w, 0, sizeof(w));
	accel_prep_wait(&w, va, DRM_VACCEL_WAIT_GE, ev->value, 0, 0);
	acc_packet_publish(p, &w);
	acc_fr_add(q, FR_WAIT_EVENT, va, ev->value, false);
	return 0;
}

uint64_t acc_queue_doorbells(const struct accel_queue *q)
{
	return q->doorbells;
}

bool acc_queue_light_fence(const struct accel_queue *q)
{
	return q->light_fence;
}

void acc_test_queue_full_fence(struct accel_queue *q, bool full)
{
	q->light_fence = !full && light_fence_offered(q->dev);
}

ACCEL_API uint64_t accel_queue_submitted(const struct accel_queue *q)
{
	return q ? acc_load_relaxed_u64(&q->wi) : 0;
}

ACCEL_API uint64_t accel_queue_completed(const struct accel_queue *q)
{
	if (!q)
		return 0;
	/* any thread: no store into the queue (q->ri is the producer's) */
	if (tp_check(&q->dev->tp))
		return acc_load_relaxed_u64(&q->ri);
	/* acquire: the completed packets' effects are visible to the caller */
	return acc_load_acquire_u64(&q->ctrl->read_index);
}

ACCEL_API int accel_queue_status(const struct accel_queue *q, struct accel_queue_fault *fault,
				 size_t fault_size)
{
	struct accel_queue *mq = (struct accel_queue *)q;
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
	ret = tp_check(&q->dev->tp);
	if (ret)
		return ret;
	/* acquire: pairs with the engine's store-release of the state after the record */
	st = acc_load_acquire_u32(&q->ctrl->state);
	if (st == DRM_VACCEL_QUEUE_RUNNING)
		return 0;
	memset(&f, 0, sizeof(f));
	f.code = acc_load_relaxed_u32(&q->ctrl->fault);
	f.ring_index = acc_load_relaxed_u64(&q->ctrl->fault_index);
	f.addr = acc_load_relaxed_u64(&q->ctrl->fault_addr);
	f.depth = acc_load_relaxed_u32(&q->ctrl->fault_depth);
	f.binding = acc_load_relaxed_u32(&q->ctrl->fault_binding);
	f.exec_index = acc_load_relaxed_u64(&q->ctrl->fault_exec_index);
	if (f.code == DRM_VACCEL_FAULT_REMOVED)
		return q_faulted(mq);	/* -ENODEV, not a fault of the program */
	f.packet = q->ring[f.ring_index & q->mask];
	if (fault)
		acc_put_struct(fault, fault_size, &f, sizeof(f), ACCEL_QUEUE_FAULT_SIZE_1_0);
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
	q->timeline->queue = q;
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
	q->light_fence = light_fence_offered(dev);
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
	fr_add(q, FR_CREATE, q->id, q->size);
	acc_dev_lock(dev);
	list_add_tail(&dev->queues, &q->node);
	acc_dev_unlock(dev);
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

	acc_dev_lock(dev);
	list_del(&q->node);
	acc_dev_unlock(dev);
	if (q->created) {
		/* not in a child of the opener: the queue is the parent's (-ECHILD, no ioctl) */
		ret = tp_queue_destroy(&dev->tp, q->id);
		if (ret && ret != -ENODEV && ret != -ECHILD)
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
