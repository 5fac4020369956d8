// SPDX-License-Identifier: MIT
/*
 * A large COPY, FILL or REDUCE of the in-process device split across the
 * device's idle engines: kmod/vaccel_split.c, the same in user space (the
 * core's vaccel_core_bulk_range() touches only the packet's memory and
 * may run on any thread).
 *
 * The engine running the queue (the owner) turns the rest of the packet
 * into a job of ranges listed on the device (64 KiB to 256 KiB: at least
 * 16 of them); idle engines (and the owner, in its turns) claim ranges from
 * the front, host threads from the back, both through one atomic word.
 * From the back, so that a COPY repeated between the same buffers by the
 * owner and a waiting thread finds most of each one's half in the cache of
 * the CPU that copied it last (a two-thread host copy's partition is
 * static). A range that faults ends the claims above it, not below: every
 * range before the lowest faulting one still runs, so the packet stops
 * where one engine running it alone would have. When every range is
 * claimed and none runs, the owner reports to the core
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
 * as there are ranges left and CPUs to run them besides its own and the
 * submitter's (which either helps or does other work): a futex wake is
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
 * @start: the unit (byte, or REDUCE element) of range 0
 * @end: units of the packet
 * @chunk: units per range
 * @claims: the next range claimed from the front (bits 0-31) and one past
 *	the next claimed from the back (bits 32-63); claims stop when they
 *	meet (open() below)
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
	uint64_t start;
	uint64_t end;
	uint64_t chunk;
	_Atomic uint64_t claims;
	atomic_int inflight;
	struct list node;
	bool listed;
	pthread_mutex_t lock;
	uint32_t fault;
	uint64_t fault_from;
	uint64_t fault_addr;
	unsigned int slot;
};

#define CLAIM_FRONT(c)	((uint32_t)(c))
#define CLAIM_BACK(c)	((uint32_t)((c) >> 32))
#define CLAIMS(f, b)	((uint64_t)(b) << 32 | (f))

/* Are ranges left to claim? */
static bool sim_split_open(struct sim_split *s)
{
	uint64_t c = atomic_load(&s->claims);

	return CLAIM_FRONT(c) < CLAIM_BACK(c);
}

/* Claim a range from the front (engines) or the back (host threads). */
static bool sim_split_claim(struct sim_split *s, bool back, uint64_t *from, uint64_t *to)
{
	uint64_t c = atomic_load(&s->claims), n, r;

	do {
		if (CLAIM_FRONT(c) >= CLAIM_BACK(c))
			return false;
		r = back ? CLAIM_BACK(c) - 1 : CLAIM_FRONT(c);
		n = back ? CLAIMS(CLAIM_FRONT(c), r) : CLAIMS(r + 1, CLAIM_BACK(c));
	} while (!atomic_compare_exchange_weak(&s->claims, &c, n));
	*from = s->start + r * s->chunk;
	*to = *from + s->chunk < s->end ? *from + s->chunk : s->end;
	return true;
}

/* No claims at or above range @r from now on (@r 0: none at all). */
static void sim_split_close(struct sim_split *s, uint64_t r)
{
	uint64_t c = atomic_load(&s->claims), n;

	do {
		if (CLAIM_BACK(c) <= r)
			return;
		n = CLAIMS(CLAIM_FRONT(c) < r ? CLAIM_FRONT(c) : r, r);
	} while (!atomic_compare_exchange_weak(&s->claims, &c, n));
}

static bool sim_split_work(struct sim_split *s, bool back, uint64_t deadline)
{
	bool progress = false;
	unsigned int slot;
	u64 addr;
	uint64_t from, to;
	u32 f;

	while (sim_now() < deadline && sim_split_claim(s, back, &from, &to)) {
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
		/* the ranges below still run: see the top */
		sim_split_close(s, (from - s->start) / s->chunk);
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

/*
 * Bytes per range for @bytes: at least 16 ranges, so that the last range
 * to finish leaves little of the packet's time to one thread, and at most
 * VACCEL_CORE_CHUNK, the core's step, per range; a power of two.
 */
static uint64_t sim_split_chunk(uint64_t bytes)
{
	uint64_t c = SIM_SPLIT_CHUNK_MIN;

	while (c < VACCEL_CORE_CHUNK && c * 16 < bytes)
		c *= 2;
	return c;
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
	/* the range numbers are 32 bits: a longer packet runs unsplit (and faults) */
	if (left / (sim_split_chunk(left * unit) / unit) >= UINT32_MAX)
		return false;
	s = calloc(1, sizeof(*s));
	if (!s)
		return false;	/* the queue's engine does it alone */
	s->q = q;
	s->pkt = q->core.pkt;
	s->start = q->core.progress;
	s->end = q->core.progress + left;
	s->chunk = sim_split_chunk(left * unit) / unit;
	atomic_init(&s->claims, CLAIMS(0, (left + s->chunk - 1) / s->chunk));
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
	wakes = sim_split_cpus > 2 ? (uint64_t)sim_split_cpus - 2 : 0;
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
	progress = sim_split_work(s, false, deadline);
	if (sim_split_open(s))
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
		if (s->q->engine != e && sim_split_open(s)) {
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
	progress = sim_split_work(found, false, deadline);
	sim_acct_end(e, progress);
	atomic_store(&e->helping, false);
	owner = found->q->engine;
	last = !sim_split_open(found);
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
		if (sim_split_open(s)) {
			found = s;
			atomic_fetch_add(&s->inflight, 1);
			break;
		}
	}
	pthread_mutex_unlock(&dev->split_lock);
	if (!found)
		return 0;
	progress = sim_split_work(found, true, deadline);
	owner = found->q->engine;
	last = !sim_split_open(found);
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

	return s && !sim_split_open(s) && atomic_load(&s->inflight);
}

bool sim_split_pending(struct sim_dev *dev, struct sim_engine *e)
{
	bool pending = false;
	struct list *l;

	pthread_mutex_lock(&dev->split_lock);
	for (l = dev->splits.next; l != &dev->splits && !pending; l = l->next) {
		struct sim_split *s = container_of(l, struct sim_split, node);

		pending = s->q->engine != e && sim_split_open(s);
	}
	pthread_mutex_unlock(&dev->split_lock);
	return pending;
}

void sim_split_stop(struct sim_queue *q)
{
	if (q->split)
		sim_split_close(q->split, 0);
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
