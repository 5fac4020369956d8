// SPDX-License-Identifier: MIT
/*
 * A large COPY, FILL or REDUCE of the in-process device split across the
 * device's idle engines: kmod/vaccel_split.c, the same in user space (the
 * core's vaccel_core_bulk_range() touches only the packet's memory and
 * may run on any thread).
 *
 * The engine running the queue (the owner) turns the rest of the packet
 * into a job of 256 KiB ranges listed on the device; idle engines (and the
 * owner, in its turns) claim ranges with an atomic counter. When every
 * range is claimed and none runs, the owner reports to the core
 * (vaccel_core_bulk_done()) and the packet completes on its queue as any
 * other. The owner never helps its own job outside its turns (it would
 * use the queue's TLB outside the engine lock, which VM_UNBIND flushes
 * under it); helpers translate with references of their own. A job
 * belongs to its queue: helpers take it only while it is listed and count
 * themselves in @inflight; it is freed only once unlisted with @inflight
 * zero.
 *
 * A host thread of the process waiting for the packet (the library's
 * waits spin before they sleep) runs ranges too: sim_split_host_help(),
 * as a helper with no engine (it translates with references of its own,
 * its time is nobody's engine time). In-process, the thread that would
 * only spin on the completion copies, so a COPY has the submitter's CPU
 * as well as the engines'. The owner wakes only as many sleeping engines
 * as there are ranges left and other CPUs to run them: a futex wake is
 * microseconds on the owner's path, and an engine woken with no CPU free
 * only takes one from the work.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "sim_internal.h"

/**
 * struct sim_split - a bulk packet split into ranges
 * @q: the queue, whose engine owns the job
 * @pkt: a copy of the packet
 * @end: units of the packet (bytes, or REDUCE elements)
 * @chunk: units per range
 * @next: next unit to claim; set to @end to stop claims
 * @inflight: helpers holding the job
 * @node: on the device's split list while @listed
 * @listed: on the list (device split lock)
 * @lock: protects the fault record
 * @fault: DRM_VACCEL_FAULT_* of the lowest failing range, or NONE
 * @fault_from: start unit of that range
 * @fault_addr: its faulting address
 * @slot: its enum vaccel_core_slot
 */
struct sim_split {
	struct sim_queue *q;
	struct drm_vaccel_packet pkt;
	uint64_t end;
	uint64_t chunk;
	_Atomic uint64_t next;
	atomic_int inflight;
	struct list node;
	bool listed;
	pthread_mutex_t lock;
	uint32_t fault;
	uint64_t fault_from;
	uint64_t fault_addr;
	unsigned int slot;
};

static bool sim_split_claim(struct sim_split *s, uint64_t *from, uint64_t *to)
{
	*from = atomic_fetch_add(&s->next, s->chunk);
	if (*from >= s->end)
		return false;
	*to = *from + s->chunk < s->end ? *from + s->chunk : s->end;
	return true;
}

static bool sim_split_work(struct sim_split *s, uint64_t deadline)
{
	bool progress = false;
	unsigned int slot;
	u64 addr;
	uint64_t from, to;
	u32 f;

	while (sim_now() < deadline && sim_split_claim(s, &from, &to)) {
		progress = true;
		f = acc_sim_core_bulk_range(s->q, &s->pkt, from, to, &addr, &slot);
		if (!f)
			continue;
		pthread_mutex_lock(&s->lock);
		if (!s->fault || from < s->fault_from) {
			s->fault = f;
			s->fault_from = from;
			s->fault_addr = addr;
			s->slot = slot;
		}
		pthread_mutex_unlock(&s->lock);
		atomic_store(&s->next, s->end);	/* no more claims */
	}
	return progress;
}

/* jobs listed on every device of the process: see sim_split_any() */
static atomic_uint sim_split_jobs;

/* In a child (fork()): none of the parent's jobs is its. */
void sim_split_fork_child(void)
{
	atomic_store(&sim_split_jobs, 0);
}

static long sim_split_cpus;
static pthread_once_t sim_split_cpus_once = PTHREAD_ONCE_INIT;

static void sim_split_cpus_init(void)
{
	sim_split_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (sim_split_cpus < 1)
		sim_split_cpus = 1;
}

bool sim_split_start(struct sim_queue *q)
{
	struct sim_dev *dev = q->file->dev;
	struct sim_split *s;
	u64 unit;
	uint64_t left, ranges, wakes;
	unsigned int i;

	if (dev->cfg.engines < 2 || q->split)
		return false;
	left = acc_sim_core_bulk_left(&q->core, &unit);
	if (left * unit < SIM_SPLIT_MIN)
		return false;
	s = calloc(1, sizeof(*s));
	if (!s)
		return false;	/* the queue's engine does it alone */
	s->q = q;
	s->pkt = q->core.pkt;
	s->end = q->core.progress + left;
	s->chunk = VACCEL_CORE_CHUNK / unit;
	atomic_init(&s->next, q->core.progress);
	atomic_init(&s->inflight, 0);
	pthread_mutex_init(&s->lock, NULL);
	q->split = s;

	pthread_mutex_lock(&dev->split_lock);
	list_add_tail(&dev->splits, &s->node);
	s->listed = true;
	atomic_fetch_add(&dev->nsplits, 1);
	atomic_fetch_add(&sim_split_jobs, 1);
	pthread_mutex_unlock(&dev->split_lock);
	atomic_fetch_add(&dev->stats.splits, 1);
	/*
	 * Engines awake see the job themselves (a store to tell them); of the
	 * sleeping ones wake at most one per range beyond the owner's and
	 * per other CPU: see the top.
	 */
	pthread_once(&sim_split_cpus_once, sim_split_cpus_init);
	ranges = (left + s->chunk - 1) / s->chunk;
	wakes = (uint64_t)sim_split_cpus - 1;
	if (wakes > ranges - 1)
		wakes = ranges - 1;
	for (i = 0; i < dev->cfg.engines; i++) {
		struct sim_engine *e = &dev->engines[i];

		if (e == q->engine)
			continue;
		if (!atomic_load(&e->sleeping)) {
			atomic_store(&e->wake, 1);
			/* it may have gone to sleep since: then it is one of the woken */
			if (!atomic_load(&e->sleeping))
				continue;
		}
		if (!wakes)
			continue;
		wakes--;
		sim_engine_wake(e);
	}
	return true;
}

static void sim_split_unlist(struct sim_split *s)
{
	struct sim_dev *dev = s->q->file->dev;

	pthread_mutex_lock(&dev->split_lock);
	if (s->listed) {
		list_del(&s->node);
		s->listed = false;
		atomic_fetch_sub(&dev->nsplits, 1);
		atomic_fetch_sub(&sim_split_jobs, 1);
	}
	pthread_mutex_unlock(&dev->split_lock);
}

static void sim_split_free(struct sim_split *s)
{
	pthread_mutex_destroy(&s->lock);
	free(s);
}

bool sim_split_run(struct sim_queue *q, uint64_t deadline)
{
	struct sim_split *s = q->split;
	bool progress;

	/* knob split_owner_yield: a turn preempted past its end */
	if (sim_inject(&q->file->dev->knobs.split_owner_yield))
		deadline = 0;
	progress = sim_split_work(s, deadline);
	if (atomic_load(&s->next) < s->end)
		return progress;
	sim_split_unlist(s);
	/* unlisted before @inflight is read: pairs with the helpers' decrement */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&s->inflight, memory_order_acquire))
		return progress;	/* the last helper wakes this engine */
	acc_sim_core_bulk_done(&q->core, s->fault ? s->fault_from : s->end, s->fault,
			       s->fault_addr, s->slot);
	q->split = NULL;
	sim_split_free(s);
	return true;
}

bool sim_split_help(struct sim_engine *e, uint64_t deadline)
{
	struct sim_dev *dev = e->dev;
	struct sim_split *s, *found = NULL;
	struct sim_engine *owner;
	bool progress, last;
	struct list *l;

	pthread_mutex_lock(&dev->split_lock);
	for (l = dev->splits.next; l != &dev->splits; l = l->next) {
		s = container_of(l, struct sim_split, node);
		/* its own jobs an engine runs in its turns only: see the top */
		if (s->q->engine != e && atomic_load(&s->next) < s->end) {
			found = s;
			atomic_fetch_add(&s->inflight, 1);
			list_del(&s->node);
			list_add_tail(&dev->splits, &s->node);
			break;
		}
	}
	pthread_mutex_unlock(&dev->split_lock);
	if (!found)
		return false;

	atomic_store(&e->helping, true);
	/* the engine's time is the job's file's meanwhile */
	sim_acct_begin(e, found->q->file, sim_now());
	progress = sim_split_work(found, deadline);
	sim_acct_end(e, progress);
	atomic_store(&e->helping, false);
	owner = found->q->engine;
	last = atomic_load(&found->next) >= found->end;
	/* the ranges' writes before the count: the owner reads it with acquire */
	atomic_fetch_sub_explicit(&found->inflight, 1, memory_order_release);
	/* @found may be freed from here on */
	if (last)
		sim_engine_wake(owner);
	if (progress)
		atomic_fetch_add(&dev->stats.split_helps, 1);
	return progress;
}

/*
 * Is any job listed on any device of the process? A relaxed look without
 * a lock or a syscall, for host threads that spin: finding the device of
 * a file costs an fstat(), so they look here first.
 */
bool sim_split_any(void)
{
	return atomic_load_explicit(&sim_split_jobs, memory_order_relaxed) != 0;
}

/*
 * A host thread (no engine) runs ranges of any job of @dev until
 * @deadline or until none is left to claim. Return: 1 if it ran a range,
 * 0 if it found none. The caller keeps @dev alive (an SRCU read section
 * on one of its files); a job stays alive while the thread counts itself
 * in its @inflight, as an engine helper's.
 */
int sim_split_host_help(struct sim_dev *dev, uint64_t deadline)
{
	struct sim_split *s, *found = NULL;
	struct sim_engine *owner;
	bool progress, last;
	struct list *l;

	/* the common case, nothing split: no lock */
	if (!atomic_load_explicit(&dev->nsplits, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&dev->split_lock);
	for (l = dev->splits.next; l != &dev->splits; l = l->next) {
		s = container_of(l, struct sim_split, node);
		if (atomic_load(&s->next) < s->end) {
			found = s;
			atomic_fetch_add(&s->inflight, 1);
			break;
		}
	}
	pthread_mutex_unlock(&dev->split_lock);
	if (!found)
		return 0;
	progress = sim_split_work(found, deadline);
	owner = found->q->engine;
	last = atomic_load(&found->next) >= found->end;
	/* the ranges' writes before the count: the owner reads it with acquire */
	atomic_fetch_sub_explicit(&found->inflight, 1, memory_order_release);
	/* @found may be freed from here on */
	if (last)
		sim_engine_wake(owner);
	if (progress)
		atomic_fetch_add(&dev->stats.split_host_helps, 1);
	return progress;
}

bool sim_split_waiting(struct sim_queue *q)
{
	struct sim_split *s = q->split;

	return s && atomic_load(&s->next) >= s->end && atomic_load(&s->inflight);
}

bool sim_split_pending(struct sim_dev *dev, struct sim_engine *e)
{
	bool pending = false;
	struct list *l;

	pthread_mutex_lock(&dev->split_lock);
	for (l = dev->splits.next; l != &dev->splits && !pending; l = l->next) {
		struct sim_split *s = container_of(l, struct sim_split, node);

		pending = s->q->engine != e && atomic_load(&s->next) < s->end;
	}
	pthread_mutex_unlock(&dev->split_lock);
	return pending;
}

void sim_split_stop(struct sim_queue *q)
{
	if (q->split)
		atomic_store(&q->split->next, q->split->end);
}

void sim_split_cancel(struct sim_queue *q)
{
	struct sim_split *s = q->split;
	unsigned int spins = 0;

	if (!s)
		return;
	sim_split_stop(q);
	sim_split_unlist(s);
	/* helpers finish their range (at most one 256 KiB step each) */
	while (atomic_load_explicit(&s->inflight, memory_order_acquire))
		if (++spins < 64)
			sched_yield();
		else
			nanosleep(&(struct timespec){ 0, 20000 }, NULL);
	q->split = NULL;
	sim_split_free(s);
}
