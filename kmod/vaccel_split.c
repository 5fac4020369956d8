// SPDX-License-Identifier: GPL-2.0-only
/*
 * Splitting a large COPY, FILL or REDUCE across the device's idle engines.
 *
 * The engine running the queue (the owner) turns the rest of the packet
 * into a job of 256 KiB ranges and lists it on the device; idle engines
 * (and the owner, in its turns) claim ranges with an atomic counter and
 * run them with vaccel_core_bulk_range(), which touches only the packet's
 * memory. When every range is claimed and none is running, the owner
 * reports the outcome to the core (vaccel_core_bulk_done()) and the packet
 * completes on its queue like any other: its completion action, the read
 * index and the packets after it all come after every range's writes.
 * With a fault, the lowest failing range's address is recorded (ranges
 * after it may have been written: the queue stops anyway).
 *
 * The owner runs ranges of its job only in its turns, under its engine
 * lock: vaccel_split_help() skips the engine's own jobs. Its turns
 * translate through the queue's cache (vaccel_core_os.c), which only the
 * owner's thread touches and only under that lock (VM_UNBIND flushes it
 * under the lock); a range run outside the turn would use the cache
 * while an unbind frees the mapping it writes through. Other engines
 * translate with references of their own. While helpers finish ranges
 * and none is left to claim, the owner's engine does not count the queue
 * as pending (vaccel_split_waiting()): it sleeps, and the helper that
 * leaves the job finished wakes it.
 *
 * Lifetime: a job belongs to its queue. Helpers take a job only while it
 * is listed, under the device's split lock, and count themselves in
 * @inflight; the owner frees it only once it is unlisted and @inflight is
 * zero, so no helper can still hold it. A helper reads everything it needs
 * (the owner's engine) before it drops its count, and touches the job no
 * more afterwards.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait_bit.h>

#include "vaccel_drv.h"
#include "vaccel_queue.h"
#include "vaccel_split.h"

/**
 * struct vaccel_split - a bulk packet split into ranges
 * @q: the queue, whose engine owns the job
 * @pkt: a copy of the packet
 * @end: units of the packet (bytes, or REDUCE elements)
 * @chunk: units per range
 * @next: next unit to claim; set to @end to stop claims
 * @inflight: helpers holding the job
 * @node: entry in the device's split list, while @listed
 * @listed: on the list (under the device's split lock)
 * @lock: protects the fault record
 * @fault: DRM_VACCEL_FAULT_* of the lowest failing range, or NONE
 * @fault_from: start unit of that range
 * @fault_addr: its faulting address
 * @slot: its &enum vaccel_core_slot
 */
struct vaccel_split {
	struct vaccel_queue *q;
	struct drm_vaccel_packet pkt;
	u64 end;
	u64 chunk;
	atomic64_t next;
	atomic_t inflight;
	struct list_head node;
	bool listed;
	spinlock_t lock;	/* see above */
	u32 fault;
	u64 fault_from;
	u64 fault_addr;
	unsigned int slot;
};

/* Claim the next range; false when none is left. */
static bool vaccel_split_claim(struct vaccel_split *s, u64 *from, u64 *to)
{
	*from = atomic64_fetch_add(s->chunk, &s->next);
	if (*from >= s->end)
		return false;
	*to = min(*from + s->chunk, s->end);
	return true;
}

/* Run claimed ranges until none is left or @deadline passes. */
static bool vaccel_split_work(struct vaccel_split *s, u64 deadline)
{
	bool progress = false;
	unsigned int slot;
	u64 from, to, addr;
	u32 f;

	while (ktime_get_ns() < deadline && vaccel_split_claim(s, &from, &to)) {
		progress = true;
		f = vaccel_core_bulk_range(s->q, &s->pkt, from, to, &addr, &slot);
		if (!f)
			continue;
		spin_lock(&s->lock);
		if (!s->fault || from < s->fault_from) {
			s->fault = f;
			s->fault_from = from;
			s->fault_addr = addr;
			s->slot = slot;
		}
		spin_unlock(&s->lock);
		atomic64_set(&s->next, s->end);	/* no more claims */
	}
	return progress;
}

/**
 * vaccel_split_start() - split the queue's current packet if it is worth it
 * @q: the queue, in its engine's turn
 *
 * Return: true if a job was started (the queue's turns now run it).
 */
bool vaccel_split_start(struct vaccel_queue *q)
{
	struct vaccel_device *vdev = q->vfile->vdev;
	struct vaccel_split *s;
	u64 unit, left;
	unsigned int i;

	if (vdev->cfg.engines < 2 || q->split)
		return false;
	left = vaccel_core_bulk_left(&q->core, &unit);
	if (left * unit < VACCEL_SPLIT_MIN)
		return false;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return false;	/* the queue's engine does it alone */
	s->q = q;
	s->pkt = q->core.pkt;
	s->end = q->core.progress + left;
	s->chunk = VACCEL_CORE_CHUNK / unit;
	atomic64_set(&s->next, q->core.progress);
	atomic_set(&s->inflight, 0);
	spin_lock_init(&s->lock);
	q->split = s;

	spin_lock(&vdev->split_lock);
	list_add_tail(&s->node, &vdev->splits);
	s->listed = true;
	spin_unlock(&vdev->split_lock);
	atomic64_inc(&vdev->stats.splits);
	for (i = 0; i < vdev->cfg.engines; i++)
		if (&vdev->engines[i] != q->engine)
			vaccel_engine_wake(&vdev->engines[i]);
	return true;
}

static void vaccel_split_unlist(struct vaccel_split *s)
{
	struct vaccel_device *vdev = s->q->vfile->vdev;

	spin_lock(&vdev->split_lock);
	if (s->listed) {
		list_del(&s->node);
		s->listed = false;
	}
	spin_unlock(&vdev->split_lock);
}

/**
 * vaccel_split_run() - the owner's turn on its job
 * @q: the queue, with a job, in its engine's turn
 * @deadline: end of the turn (ktime_get_ns())
 *
 * Runs ranges, and reports the outcome to the core once every range ran:
 * then @q->split is NULL again, and the core's next step completes the
 * packet (or the core has faulted).
 *
 * Return: true if something progressed.
 */
bool vaccel_split_run(struct vaccel_queue *q, u64 deadline)
{
	struct vaccel_split *s = q->split;
	bool progress;

	/* debugfs split_owner_yield: a turn preempted past its end */
	if (vaccel_inject(&q->vfile->vdev->knobs.split_owner_yield))
		deadline = 0;
	progress = vaccel_split_work(s, deadline);

	if (atomic64_read(&s->next) < s->end)
		return progress;
	vaccel_split_unlist(s);
	/* unlisted before @inflight is read: pairs with the helpers' dec */
	smp_mb();
	if (atomic_read_acquire(&s->inflight))
		return progress;	/* the last helper wakes this engine */
	vaccel_core_bulk_done(&q->core, s->fault ? s->fault_from : s->end, s->fault,
			      s->fault_addr, s->slot);
	q->split = NULL;
	kfree(s);
	return true;
}

/**
 * vaccel_split_help() - run ranges of another engine's job
 * @e: an engine with nothing of its own to run
 * @deadline: when to get back to its own queues (ktime_get_ns())
 *
 * Return: true if it ran something.
 */
bool vaccel_split_help(struct vaccel_engine *e, u64 deadline)
{
	struct vaccel_device *vdev = e->vdev;
	struct vaccel_split *s, *found = NULL;
	struct vaccel_engine *owner;
	bool progress, last;

	spin_lock(&vdev->split_lock);
	list_for_each_entry(s, &vdev->splits, node) {
		/* its own jobs an engine runs in its turns only: see the top */
		if (s->q->engine != e && atomic64_read(&s->next) < s->end) {
			found = s;
			atomic_inc(&s->inflight);
			list_move_tail(&s->node, &vdev->splits);
			break;
		}
	}
	spin_unlock(&vdev->split_lock);
	if (!found)
		return false;

	if (found->q->engine == e)
		atomic64_inc(&vdev->stats.split_self_helps);
	WRITE_ONCE(e->helping, true);
	/* the engine's time is the job's context's meanwhile (fdinfo) */
	vaccel_acct_begin(e, found->q->vfile, ktime_get_ns());
	progress = vaccel_split_work(found, deadline);
	vaccel_acct_end(e, progress);
	WRITE_ONCE(e->helping, false);
	owner = found->q->engine;
	last = atomic64_read(&found->next) >= found->end;
	/* the ranges' writes before the count: the owner reads it with acquire */
	if (atomic_dec_and_test(&found->inflight))
		wake_up_var(&found->inflight);	/* hashes the address only */
	/* @found may be freed from here on */
	if (last)
		vaccel_engine_wake(owner);
	if (progress)
		atomic64_inc(&vdev->stats.split_helps);
	return progress;
}

/**
 * vaccel_split_waiting() - is the queue's job waiting for helpers only
 * @q: a queue, under its engine's lock
 *
 * Return: true if @q has a job whose ranges are all claimed while some
 * helper still runs one: the owner has nothing to do until the last helper
 * wakes it (vaccel_split_help() wakes the owner whenever it leaves a job
 * with nothing left to claim).
 */
bool vaccel_split_waiting(struct vaccel_queue *q)
{
	struct vaccel_split *s = q->split;

	return s && atomic64_read(&s->next) >= s->end && atomic_read(&s->inflight);
}

/**
 * vaccel_split_pending() - has any job of the device ranges left
 * @vdev: the device
 *
 * @e: the engine asking, whose own jobs do not count (it runs them in its
 *	turns)
 *
 * Return: true if @e should help rather than sleep.
 */
bool vaccel_split_pending(struct vaccel_device *vdev, struct vaccel_engine *e)
{
	struct vaccel_split *s;
	bool pending = false;

	spin_lock(&vdev->split_lock);
	list_for_each_entry(s, &vdev->splits, node)
		if (s->q->engine != e && atomic64_read(&s->next) < s->end)
			pending = true;
	spin_unlock(&vdev->split_lock);
	return pending;
}

/**
 * vaccel_split_stop() - no more ranges of the queue's job start
 * @q: a queue that stopped (fault, reset), under its engine's lock
 *
 * Ranges already running finish; vaccel_split_cancel() frees the job.
 */
void vaccel_split_stop(struct vaccel_queue *q)
{
	if (q->split)
		atomic64_set(&q->split->next, q->split->end);
}

/**
 * vaccel_split_cancel() - stop and free the queue's job
 * @q: a queue no engine runs any more (off its engine's list); may sleep
 *	for the ranges still running (each at most one 256 KiB step)
 */
void vaccel_split_cancel(struct vaccel_queue *q)
{
	struct vaccel_split *s = q->split;

	if (!s)
		return;
	vaccel_split_stop(q);
	vaccel_split_unlist(s);
	wait_var_event(&s->inflight, !atomic_read(&s->inflight));
	q->split = NULL;
	kfree(s);
}
