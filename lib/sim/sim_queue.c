// SPDX-License-Identifier: MIT
/*
 * Queues of the in-process device: QUEUE_CREATE, QUEUE_DESTROY,
 * QUEUE_QUERY and KICK with the module's checks and errnos
 * (kmod/vaccel_queue.c), the doorbell and control pages, and the engine
 * time credited to each file (the module's fdinfo drm-engine-compute,
 * kmod/vaccel_engine.c).
 *
 * A queue's two pages are a memfd of its own: the engine maps both
 * read-write; user space maps the doorbell read-write and the control
 * page from a read-only open of the memfd, so mprotect() cannot make it
 * writable. A mapping keeps its page after QUEUE_DESTROY, as the module's
 * do. KICK is the engine's futex wake-up (sim_engine_wake()).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sim_internal.h"

/* capable(CAP_SYS_NICE) of the calling thread: its effective set */
static bool sim_cap_sys_nice(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[CAP_SYS_NICE / 32].effective & (1u << (CAP_SYS_NICE % 32));
}

/*
 * Off its engine (dead: no turn runs it again, not even a kicking or
 * helping thread's, sim_engine.c) and off its bucket. Its memory stays
 * until sim_queue_free(), after an SRCU grace period: a thread that found
 * it on a bucket or in the file's table during a read section may still
 * look at it.
 */
static void sim_queue_unlink(struct sim_queue *q)
{
	struct sim_engine *e = q->engine;

	/* waits for a turn on this queue, if any, to end */
	pthread_mutex_lock(&e->lock);
	list_del(&q->node);
	q->dead = true;
	pthread_mutex_unlock(&e->lock);
	/* nobody runs it now: its split job and its waiter go */
	sim_split_cancel(q);
	sim_waiter_disarm(&q->wait);
}

/* After sim_queue_unlink() and a grace period. */
static void sim_queue_free(struct sim_queue *q)
{
	sim_acct_queue_fini(q);
	sim_vm_tlb_flush(&q->file->vm, &q->tlb, true);
	/* user mappings keep their pages */
	munmap(q->pages, 2 * SIM_PAGE);
	close(q->fd);
	free(q);
	atomic_fetch_sub(&sim_objects.queues, 1);
}

/* The two pages of a new queue. */
static int sim_queue_pages(struct sim_queue *q)
{
	q->fd = memfd_create(SIM_QUEUE_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (q->fd < 0)
		return errno == EMFILE || errno == ENFILE ? -errno : -ENOMEM;
	if (ftruncate(q->fd, 2 * SIM_PAGE) ||
	    fcntl(q->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto err;
	q->pages = mmap(NULL, 2 * SIM_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, q->fd, 0);
	if (q->pages == MAP_FAILED)
		goto err;
	q->doorbell = (uint64_t *)q->pages;
	q->ctrl = (struct drm_vaccel_queue_control *)(q->pages + SIM_PAGE);
	return 0;
err:
	close(q->fd);
	return -ENOMEM;
}

int sim_queue_create(struct sim_file *f, struct drm_vaccel_queue_create *c)
{
	struct sim_dev *dev = f->dev;
	struct sim_engine *e;
	struct sim_queue *q;
	struct sim_map *map;
	unsigned int id;
	int ret, err;

	if (c->flags || c->ring_size < DRM_VACCEL_RING_MIN || c->ring_size > DRM_VACCEL_RING_MAX ||
	    (c->ring_size & (c->ring_size - 1)) || c->priority > DRM_VACCEL_QUEUE_PRIORITY_HIGH ||
	    c->ring_va % sizeof(struct drm_vaccel_packet))
		return -EINVAL;
	/* more than the normal share of an engine, as other DRM drivers */
	if (c->priority > DRM_VACCEL_QUEUE_PRIORITY_NORMAL && !sim_cap_sys_nice())
		return -EPERM;
	if (!sim_dev_enter(dev))
		return -ENODEV;
	ret = -ENOMEM;
	if (sim_inject(&dev->knobs.fail_queue_create))
		goto out_exit;
	/* the ring is mapped readable now (the engine checks every fetch again) */
	if (!sim_vm_translate(&f->vm, c->ring_va,
			      (uint64_t)c->ring_size * sizeof(struct drm_vaccel_packet),
			      DRM_VACCEL_VM_READ, &map, NULL, &err)) {
		ret = err == -EACCES ? -EACCES : -ENXIO;
		goto out_exit;
	}
	sim_map_put(map);
	ret = sim_dev_start_engines(dev);
	if (ret)
		goto out_exit;
	ret = -ENOMEM;
	q = calloc(1, sizeof(*q));
	if (!q)
		goto out_exit;
	ret = sim_queue_pages(q);
	if (ret) {
		free(q);
		goto out_exit;
	}
	/* its engine may be asleep: the first submission must kick */
	q->ctrl->need_wakeup = 1;
	q->file = f;
	q->priority = c->priority;
	list_init(&q->acct_node);
	atomic_init(&q->charge_ns, 0);
	atomic_init(&q->link_from, 0);
	q->wait.kind = SIM_W_QUEUE;
	q->wait.owner = q;
	list_init(&q->wait.node);
	acc_sim_core_queue_init(&q->core, q, c->ring_va, c->ring_size);
	atomic_fetch_add(&sim_objects.queues, 1);

	/*
	 * Its id first, then on its engine (which may run it from then on),
	 * then visible to KICK, QUERY and DESTROY; the file lock keeps the id
	 * free meanwhile.
	 */
	e = &dev->engines[(atomic_fetch_add(&dev->next_engine, 1) + 1) % dev->cfg.engines];
	q->engine = e;
	pthread_mutex_lock(&f->lock);
	for (id = 0; id < SIM_MAX_QUEUES && atomic_load(&f->queues[id]); id++)
		;
	if (id < SIM_MAX_QUEUES) {
		q->id = id;
		pthread_mutex_lock(&e->lock);
		list_add_tail(&e->queues, &q->node);
		pthread_mutex_unlock(&e->lock);
		atomic_store(&f->queues[id], q);
	}
	pthread_mutex_unlock(&f->lock);
	if (id == SIM_MAX_QUEUES) {
		/* never on an engine: nothing to wait for */
		munmap(q->pages, 2 * SIM_PAGE);
		close(q->fd);
		free(q);
		atomic_fetch_sub(&sim_objects.queues, 1);
		ret = -ENOSPC;
		goto out_exit;
	}
	c->queue_id = id;
	c->doorbell_offset = SIM_MMAP_QUEUE_BASE + (uint64_t)id * 2 * SIM_PAGE;
	c->control_offset = c->doorbell_offset + SIM_PAGE;
	ret = 0;
out_exit:
	sim_dev_exit(dev);
	return ret;
}

int sim_queue_destroy(struct sim_file *f, struct drm_vaccel_queue_destroy *d)
{
	struct sim_queue *q = NULL;

	if (d->pad)
		return -EINVAL;
	pthread_mutex_lock(&f->queues_lock);
	if (d->queue_id < SIM_MAX_QUEUES) {
		pthread_mutex_lock(&f->lock);
		q = atomic_exchange(&f->queues[d->queue_id], NULL);
		pthread_mutex_unlock(&f->lock);
	}
	if (q) {
		sim_queue_unlink(q);
		/* KICK, or a turn that found it on its bucket, may be using it */
		sim_srcu_synchronize();
		sim_queue_free(q);
	}
	pthread_mutex_unlock(&f->queues_lock);
	return q ? 0 : -ENOENT;
}

int sim_queue_query(struct sim_file *f, struct drm_vaccel_queue_query *a)
{
	unsigned int idx;
	struct drm_vaccel_queue_control *c;
	struct sim_queue *q;
	uint64_t wi;
	int ret = 0;

	if (a->pad)
		return -EINVAL;
	idx = sim_srcu_read_lock();
	q = a->queue_id < SIM_MAX_QUEUES ? atomic_load(&f->queues[a->queue_id]) : NULL;
	if (q) {
		c = q->ctrl;
		/* pairs with sim_queue_fault(): the record, then the state */
		a->state = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		a->read_index = __atomic_load_n(&c->read_index, __ATOMIC_RELAXED);
		wi = __atomic_load_n(&q->write_index, __ATOMIC_RELAXED);
		a->write_index = wi > a->read_index ? wi : a->read_index;
		/* the record only once the state publishes it (as the module) */
		if (a->state != DRM_VACCEL_QUEUE_RUNNING) {
			a->fault = __atomic_load_n(&c->fault, __ATOMIC_RELAXED);
			a->fault_index = __atomic_load_n(&c->fault_index, __ATOMIC_RELAXED);
			a->fault_addr = __atomic_load_n(&c->fault_addr, __ATOMIC_RELAXED);
			a->fault_depth = __atomic_load_n(&c->fault_depth, __ATOMIC_RELAXED);
			a->fault_binding = __atomic_load_n(&c->fault_binding, __ATOMIC_RELAXED);
			a->fault_exec_index = __atomic_load_n(&c->fault_exec_index,
							      __ATOMIC_RELAXED);
		} else {
			a->fault = DRM_VACCEL_FAULT_NONE;
			a->fault_index = 0;
			a->fault_addr = 0;
			a->fault_depth = 0;
			a->fault_binding = 0;
			a->fault_exec_index = 0;
		}
	} else {
		ret = -ENOENT;
	}
	sim_srcu_read_unlock(idx);
	return ret;
}

/* Under the SRCU read lock (sim_transport.c): a futex wake-up of the engine. */
int sim_kick(struct sim_file *f, struct drm_vaccel_kick *k)
{
	struct sim_queue *q;

	if (k->pad)
		return -EINVAL;
	q = k->queue_id < SIM_MAX_QUEUES ? atomic_load(&f->queues[k->queue_id]) : NULL;
	if (!q)
		return -ENOENT;
	atomic_fetch_add_explicit(&f->dev->stats.kicks, 1, memory_order_relaxed);
	sim_queue_kick(q);
	return 0;
}

void sim_queues_fini(struct sim_file *f)
{
	struct sim_queue *qs[SIM_MAX_QUEUES];
	unsigned int i, n = 0;

	pthread_mutex_lock(&f->queues_lock);
	pthread_mutex_lock(&f->lock);
	for (i = 0; i < SIM_MAX_QUEUES; i++) {
		qs[n] = atomic_exchange(&f->queues[i], NULL);
		if (qs[n])
			n++;
	}
	pthread_mutex_unlock(&f->lock);
	for (i = 0; i < n; i++)
		sim_queue_unlink(qs[i]);
	if (n)
		sim_srcu_synchronize();
	for (i = 0; i < n; i++)
		sim_queue_free(qs[i]);
	pthread_mutex_unlock(&f->queues_lock);
}

void sim_queues_tlb_flush(struct sim_file *f)
{
	unsigned int i;

	/* no queue is freed meanwhile; engine locks nest inside */
	pthread_mutex_lock(&f->queues_lock);
	for (i = 0; i < SIM_MAX_QUEUES; i++) {
		struct sim_queue *q = atomic_load(&f->queues[i]);

		if (!q)
			continue;
		pthread_mutex_lock(&q->engine->lock);
		sim_vm_tlb_flush(&f->vm, &q->tlb, false);
		pthread_mutex_unlock(&q->engine->lock);
	}
	pthread_mutex_unlock(&f->queues_lock);
}

int sim_queue_mmap(struct sim_file *f, uint64_t offset, size_t len, int prot, void **addr)
{
	uint64_t off = offset - SIM_MMAP_QUEUE_BASE;
	bool control = (off / SIM_PAGE) & 1;
	struct sim_queue *q;
	int fd, ret = 0;
	void *p;

	if (len != SIM_PAGE || off % SIM_PAGE)
		return -EINVAL;
	if (control && (prot & (PROT_WRITE | PROT_EXEC)))
		return -EACCES;
	if ((prot & PROT_WRITE) && f->read_only)
		return -EACCES;
	pthread_mutex_lock(&f->queues_lock);
	q = atomic_load(&f->queues[off / (2 * SIM_PAGE)]);
	if (!q) {
		ret = -EINVAL;
		goto out;
	}
	if (SIM_ONE_MAPPING) {
		/* the engine's pages themselves (sim_internal.h) */
		*addr = q->pages + (control ? SIM_PAGE : 0);
		goto out;
	}
	if (control) {
		char path[64];

		/* a read-only open: the mapping can never become writable */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", q->fd);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			goto out;
		}
		p = mmap(NULL, SIM_PAGE, prot, MAP_SHARED, fd, (off_t)SIM_PAGE);
		close(fd);
	} else {
		p = mmap(NULL, SIM_PAGE, prot, MAP_SHARED, q->fd, 0);
	}
	if (p == MAP_FAILED)
		ret = -errno;
	else
		*addr = p;
out:
	pthread_mutex_unlock(&f->queues_lock);
	return ret;
}

bool sim_file_faulted(struct sim_file *f)
{
	unsigned int idx = sim_srcu_read_lock(), i;
	bool faulted = false;

	for (i = 0; i < SIM_MAX_QUEUES && !faulted; i++) {
		struct sim_queue *q = atomic_load(&f->queues[i]);

		/* pairs with the store-release of the state in sim_queue_fault() */
		faulted = q && __atomic_load_n(&q->ctrl->state, __ATOMIC_ACQUIRE) !=
			       DRM_VACCEL_QUEUE_RUNNING;
	}
	sim_srcu_read_unlock(idx);
	return faulted;
}

/*
 * Engine time accounting, the module's (kmod/vaccel_engine.c): each
 * engine credits its time once, as it passes, to the file whose turn (or
 * split range) ran then, or to the queue whose modelled time (DELAY, link,
 * injected latency) covered it first.
 */

void sim_acct_begin(struct sim_engine *e, struct sim_file *f, uint64_t now)
{
	pthread_mutex_lock(&e->acct.lock);
	e->acct.cur = f;
	e->acct.cur_from = now;
	e->acct.cur_seen = false;
	pthread_mutex_unlock(&e->acct.lock);
}

/* Returns the end, up to which the turn was credited. */
uint64_t sim_acct_end(struct sim_engine *e, bool ran)
{
	struct sim_acct *a = &e->acct;
	uint64_t now = sim_now(), from;

	pthread_mutex_lock(&a->lock);
	from = a->cur_from > a->cursor ? a->cur_from : a->cursor;
	if ((ran || a->cur_seen) && now > from) {
		a->cur->engine_ns[e->index] += now - from;
		a->cursor = now;
	}
	a->cur = NULL;
	pthread_mutex_unlock(&a->lock);
	return now;
}

/* Credit the part of @q's attributed time that passed; forget the rest. Acct lock held. */
static void sim_acct_settle(struct sim_engine *e, struct sim_queue *q, uint64_t now)
{
	if (list_empty(&q->acct_node))
		return;
	if (now > q->acct_from)
		q->file->engine_ns[e->index] += (now < q->acct_to ? now : q->acct_to) - q->acct_from;
	list_del(&q->acct_node);
}

/*
 * From the end of the turn that charged @until (sim_acct_end()), not from
 * now: a thread preempted between the two would lose that gap from the
 * step's modelled time (the module's vaccel_acct_model()).
 */
void sim_acct_model(struct sim_queue *q, uint64_t until, uint64_t end)
{
	struct sim_engine *e = q->engine;
	struct sim_acct *a = &e->acct;
	uint64_t now = sim_now(), from;

	pthread_mutex_lock(&a->lock);
	sim_acct_settle(e, q, now);
	from = end > a->cursor ? end : a->cursor;
	if (until > from) {
		q->acct_from = from;
		q->acct_to = until;
		list_add_tail(&a->busy, &q->acct_node);
		a->cursor = until;
	}
	pthread_mutex_unlock(&a->lock);
}

void sim_acct_queue_fini(struct sim_queue *q)
{
	pthread_mutex_lock(&q->engine->acct.lock);
	sim_acct_settle(q->engine, q, sim_now());
	pthread_mutex_unlock(&q->engine->acct.lock);
}

uint64_t sim_acct_read(struct sim_file *f)
{
	struct sim_dev *dev = f->dev;
	uint64_t total = 0, now, from;
	unsigned int i;
	struct list *l;

	for (i = 0; i < dev->cfg.engines; i++) {
		struct sim_acct *a = &dev->engines[i].acct;

		pthread_mutex_lock(&a->lock);
		now = sim_now();
		total += f->engine_ns[i];
		from = a->cur_from > a->cursor ? a->cur_from : a->cursor;
		if (a->cur == f && now > from) {
			total += now - from;
			a->cur_seen = true;
		}
		for (l = a->busy.next; l != &a->busy; l = l->next) {
			struct sim_queue *q = container_of(l, struct sim_queue, acct_node);

			if (q->file == f && now > q->acct_from)
				total += (now < q->acct_to ? now : q->acct_to) - q->acct_from;
		}
		pthread_mutex_unlock(&a->lock);
	}
	return total;
}
