// SPDX-License-Identifier: GPL-2.0-only
/*
 * Engines: one kernel thread each, running the queues assigned to it in
 * turn, a bounded number of steps per queue per pass.
 *
 * Doorbell protocol, engine side (the submitter's side is in the uAPI
 * header): an engine that found no work for the device's poll budget
 * (1) sets need_wakeup in every control page, (2) issues a full barrier,
 * (3) reads every doorbell again and (4) sleeps only if none moved and no
 * KICK or signal arrived. The submitter stores the doorbell, issues a full
 * barrier, then reads need_wakeup. Each side stores, fences, then loads
 * what the other stored, so at least one of them sees the other's store:
 * either the engine finds the new doorbell in (3) or the submitter finds
 * need_wakeup and kicks. A KICK sets @kicked before waking the thread and
 * the thread tests @kicked after marking itself asleep, so a kick between
 * (3) and (4) is not lost either.
 *
 * Device-side WAITs sleep the same way: every sleeping engine is on
 * vaccel_engine_wq and records the signal generation before its last pass;
 * a signal update bumps the generation, then wakes the queue.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "vaccel_drv.h"
#include "vaccel_queue.h"
#include "vaccel_signal.h"

#define CREATE_TRACE_POINTS
#include "vaccel_trace.h"

/**
 * vaccel_queue_fault() - publish a queue's fault and stop it
 * @q: the queue, whose core fault record is set; called by its engine or
 *	with its engine's lock held
 */
void vaccel_queue_fault(struct vaccel_queue *q)
{
	struct drm_vaccel_queue_control *c = q->ctrl;

	trace_vaccel_fault(q->vfile->vdev->id, q->vfile->id, q->id, q->core.fault,
			   q->core.fault_index, q->core.fault_addr);
	WRITE_ONCE(c->fault, q->core.fault);
	WRITE_ONCE(c->fault_index, q->core.fault_index);
	WRITE_ONCE(c->fault_addr, q->core.fault_addr);
	/* the record is complete before the state says so */
	smp_store_release(&c->state, DRM_VACCEL_QUEUE_ERROR);
	atomic64_inc(&q->vfile->vdev->stats.faults);
	vaccel_signal_wake(true);
}

/*
 * Stop @q with @code for a reason outside its packets (doorbell, injection,
 * reset): the record points at the packet it was on. Same locking as
 * vaccel_queue_fault().
 */
static void vaccel_queue_stop(struct vaccel_queue *q, u32 code)
{
	q->core.fault = code;
	q->core.fault_index = q->core.read_index;
	q->core.fault_addr = 0;
	vaccel_queue_fault(q);
}

/* The doorbell's new value, or false if the queue faulted on it. */
static bool vaccel_queue_doorbell(struct vaccel_queue *q)
{
	/* pairs with the submitter's store-release: packets before index */
	u64 db = smp_load_acquire(q->doorbell);

	/* backward and repeated values are ignored */
	if (db <= q->write_index)
		return true;
	if (db - q->core.read_index > q->core.ring_size) {
		vaccel_queue_stop(q, DRM_VACCEL_FAULT_DOORBELL);
		return false;
	}
	q->write_index = db;
	trace_vaccel_doorbell(q->vfile->vdev->id, q->vfile->id, q->id, db);
	return true;
}

static bool vaccel_queue_idle(struct vaccel_queue *q)
{
	return q->write_index == q->core.read_index && !q->core.depth &&
	       !q->core.have_pkt;
}

/*
 * Give one queue its turn: up to its priority's budget of steps, bounded in
 * time. Returns true if it made progress; lowers *deadline to the end of a
 * timed WAIT it blocks on.
 */
static bool vaccel_queue_run(struct vaccel_queue *q, u64 *deadline)
{
	struct vaccel_device *vdev = q->vfile->vdev;
	u64 packets = q->core.packets, bytes = q->core.bytes;
	u64 latency = READ_ONCE(vdev->knobs.packet_latency_ns);
	unsigned int budget, n;
	enum vaccel_core_status st;
	bool blocked;
	u64 start;

	if (READ_ONCE(q->ctrl->state) != DRM_VACCEL_QUEUE_RUNNING)
		return false;
	/*
	 * A new queue starts with need_wakeup set, as its engine may be
	 * asleep; the engine is awake now and checks the doorbell again
	 * before it sleeps.
	 */
	if (unlikely(READ_ONCE(q->ctrl->need_wakeup)))
		WRITE_ONCE(q->ctrl->need_wakeup, 0);
	if (!vaccel_queue_doorbell(q))
		return true;
	if (vaccel_queue_idle(q))
		return false;

	/* injected latency: one step at a time, each after the delay */
	if (latency)
		vaccel_os_delay(q, min_t(u64, latency, VACCEL_CORE_MAX_DELAY_NS));
	budget = latency ? 1 : VACCEL_QUEUE_BUDGET << (2 * q->priority);
	start = ktime_get_ns();
	do {
		n = min(budget, VACCEL_QUEUE_SLICE);
		st = vaccel_core_run(&q->core, q->write_index, n);
		budget -= n;
	} while (st == VACCEL_CORE_BUDGET && budget &&
		 ktime_get_ns() - start < VACCEL_QUEUE_TURN_NS);
	/* the packets' effects are visible before their completion is */
	smp_store_release(&q->ctrl->read_index, q->core.read_index);
	blocked = st == VACCEL_CORE_BLOCKED;
	if (q->blocked != blocked) {
		q->blocked = blocked;
		if (q->blocked)
			trace_vaccel_wait_block(vdev->id, q->vfile->id, q->id,
						q->core.read_index);
		else
			trace_vaccel_wait_unblock(vdev->id, q->vfile->id, q->id,
						  q->core.read_index);
	}
	if (st == VACCEL_CORE_FAULT)
		vaccel_queue_fault(q);
	if (q->blocked && q->core.deadline && q->core.deadline < *deadline)
		*deadline = q->core.deadline;

	/* shared counters: touched only when something ran */
	if (q->core.packets != packets)
		atomic64_add(q->core.packets - packets, &vdev->stats.packets);
	if (q->core.bytes != bytes)
		atomic64_add(q->core.bytes - bytes, &vdev->stats.bytes);
	return q->core.packets != packets || q->core.bytes != bytes ||
	       st == VACCEL_CORE_BUDGET || st == VACCEL_CORE_FAULT;
}

/*
 * One pass over the engine's queues: a turn each. The lock is taken per
 * turn; the queue whose turn it is moves to the tail, so queues created or
 * destroyed meanwhile do not disturb the rotation.
 */
static bool vaccel_engine_pass(struct vaccel_engine *e, u64 *deadline)
{
	struct vaccel_queue *q;
	bool progress = false;
	size_t i, n;

	mutex_lock(&e->lock);
	n = list_count_nodes(&e->queues);
	mutex_unlock(&e->lock);
	for (i = 0; i < n; i++) {
		mutex_lock(&e->lock);
		q = list_first_entry_or_null(&e->queues, struct vaccel_queue, node);
		if (q) {
			list_move_tail(&q->node, &e->queues);
			progress |= vaccel_queue_run(q, deadline);
		}
		mutex_unlock(&e->lock);
		if (!q)
			break;
		cond_resched();
	}
	return progress;
}

/* Is there work an engine must not sleep through? Called with e->lock. */
static bool vaccel_engine_pending(struct vaccel_engine *e)
{
	struct vaccel_queue *q;

	list_for_each_entry(q, &e->queues, node) {
		if (READ_ONCE(q->ctrl->state) != DRM_VACCEL_QUEUE_RUNNING)
			continue;
		/* after the full barrier in vaccel_engine_sleep() */
		if (smp_load_acquire(q->doorbell) > q->write_index)
			return true;
		if (!q->blocked && !vaccel_queue_idle(q))
			return true;
	}
	return false;
}

static void vaccel_engine_set_need_wakeup(struct vaccel_engine *e, u32 v)
{
	struct vaccel_queue *q;

	list_for_each_entry(q, &e->queues, node)
		WRITE_ONCE(q->ctrl->need_wakeup, v);
}

static void vaccel_engine_sleep(struct vaccel_engine *e, int gen, u64 deadline)
{
	long timeout = MAX_SCHEDULE_TIMEOUT;
	DEFINE_WAIT(wait);
	bool pending;

	mutex_lock(&e->lock);
	vaccel_engine_set_need_wakeup(e, 1);
	smp_mb();	/* need_wakeup before the doorbells: see the top */
	pending = vaccel_engine_pending(e);
	mutex_unlock(&e->lock);

	if (deadline != U64_MAX) {
		u64 now = ktime_get_ns();

		timeout = deadline > now ? nsecs_to_jiffies(deadline - now) + 1 : 0;
	}
	prepare_to_wait(&vaccel_engine_wq, &wait, TASK_INTERRUPTIBLE);
	if (!pending && timeout && !atomic_xchg(&e->kicked, 0) &&
	    vaccel_signal_generation() == gen && !kthread_should_stop()) {
		atomic64_inc(&e->vdev->stats.sleeps);
		schedule_timeout(timeout);
		atomic64_inc(&e->vdev->stats.wakeups);
	}
	finish_wait(&vaccel_engine_wq, &wait);

	mutex_lock(&e->lock);
	vaccel_engine_set_need_wakeup(e, 0);
	mutex_unlock(&e->lock);
}

/**
 * vaccel_device_force_fault() - stop a queue with DRM_VACCEL_FAULT_INJECTED
 * @vdev: the device
 * @ctx: context id (debugfs "contexts")
 * @id: queue id in that context
 *
 * Queues are found through the engines' lists, under each engine's lock:
 * a queue is on its list exactly as long as it is alive.
 *
 * Return: 0, or -ENOENT if there is no such running queue.
 */
int vaccel_device_force_fault(struct vaccel_device *vdev, u32 ctx, u32 id)
{
	unsigned int i;
	int ret = -ENOENT;

	for (i = 0; i < vdev->cfg.engines && ret; i++) {
		struct vaccel_engine *e = &vdev->engines[i];
		struct vaccel_queue *q;

		mutex_lock(&e->lock);
		list_for_each_entry(q, &e->queues, node) {
			if (q->vfile->id != ctx || q->id != id ||
			    READ_ONCE(q->ctrl->state) != DRM_VACCEL_QUEUE_RUNNING)
				continue;
			vaccel_queue_stop(q, DRM_VACCEL_FAULT_INJECTED);
			ret = 0;
			break;
		}
		mutex_unlock(&e->lock);
	}
	return ret;
}

/**
 * vaccel_device_reset() - reset the device, as after a hang
 * @vdev: the device
 *
 * Every running queue of every context stops with DRM_VACCEL_FAULT_RESET
 * after the step in progress (its record points at the packet it was on),
 * injected engine stalls end, and host waiters wake (and see -EIO). Queues
 * created afterwards run normally.
 *
 * Return: the number of queues stopped, or -ENODEV after an unplug.
 */
int vaccel_device_reset(struct vaccel_device *vdev)
{
	unsigned int i;
	int idx, n = 0;

	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	for (i = 0; i < vdev->cfg.engines; i++) {
		struct vaccel_engine *e = &vdev->engines[i];
		struct vaccel_queue *q;

		mutex_lock(&e->lock);
		list_for_each_entry(q, &e->queues, node) {
			if (READ_ONCE(q->ctrl->state) != DRM_VACCEL_QUEUE_RUNNING)
				continue;
			vaccel_queue_stop(q, DRM_VACCEL_FAULT_RESET);
			n++;
		}
		mutex_unlock(&e->lock);
		vaccel_engine_stall_set(e, 0);	/* and wakes the thread */
	}
	atomic64_inc(&vdev->stats.resets);
	drm_dev_exit(idx);
	return n;
}

/**
 * vaccel_engine_stall_set() - inject a stall, or end one
 * @e: the engine
 * @ns: how long from now the engine runs nothing; 0 ends a stall now
 *
 * The thread is woken so that a new deadline takes effect at once, also
 * when it shortens or ends a stall in progress.
 *
 * Return: 0, or -ENODEV after an unplug.
 */
int vaccel_engine_stall_set(struct vaccel_engine *e, u64 ns)
{
	int idx;

	if (!drm_dev_enter(&e->vdev->drm, &idx))
		return -ENODEV;
	WRITE_ONCE(e->stall_until, ns ? ktime_get_ns() + ns : 0);
	if (e->thread)
		wake_up_process(e->thread);
	drm_dev_exit(idx);
	return 0;
}

/* An injected stall: the engine does nothing until it ends. */
static void vaccel_engine_stall(struct vaccel_engine *e)
{
	u64 until = READ_ONCE(e->stall_until), now = ktime_get_ns();

	while (now < until && !kthread_should_stop()) {
		schedule_timeout_interruptible(nsecs_to_jiffies(until - now) + 1);
		now = ktime_get_ns();
		until = READ_ONCE(e->stall_until);
	}
}

static int vaccel_engine_thread(void *data)
{
	struct vaccel_engine *e = data;
	u64 idle_since = ktime_get_ns();

	while (!kthread_should_stop()) {
		vaccel_engine_stall(e);
		u64 deadline = U64_MAX;
		int gen = vaccel_signal_generation();
		bool progress;

		atomic_set(&e->kicked, 0);
		progress = vaccel_engine_pass(e, &deadline);

		if (progress) {
			idle_since = ktime_get_ns();
		} else if (ktime_get_ns() - idle_since >= e->vdev->cfg.poll_budget_ns) {
			vaccel_engine_sleep(e, gen, deadline);
			idle_since = ktime_get_ns();
			continue;
		}
		cond_resched();
	}
	return 0;
}

static void vaccel_engines_stop(void *data)
{
	struct vaccel_device *vdev = data;
	unsigned int i;

	for (i = 0; i < vdev->cfg.engines; i++) {
		if (vdev->engines[i].thread) {
			kthread_stop(vdev->engines[i].thread);
			vdev->engines[i].thread = NULL;
		}
	}
}

/**
 * vaccel_engines_start() - create and start the device's engines
 * @vdev: the device being probed
 *
 * They stop when the device is unbound (a devres action); their structures
 * live until the DRM device is released, as queues of files still open
 * after the unplug refer to them.
 *
 * Return: 0 or a negative errno.
 */
int vaccel_engines_start(struct vaccel_device *vdev)
{
	unsigned int i;
	int ret;

	vdev->engines = drmm_kcalloc(&vdev->drm, vdev->cfg.engines,
				     sizeof(*vdev->engines), GFP_KERNEL);
	if (!vdev->engines)
		return -ENOMEM;
	for (i = 0; i < vdev->cfg.engines; i++) {
		struct vaccel_engine *e = &vdev->engines[i];

		e->vdev = vdev;
		e->index = i;
		INIT_LIST_HEAD(&e->queues);
		ret = drmm_mutex_init(&vdev->drm, &e->lock);
		if (ret)
			return ret;
	}
	ret = devm_add_action_or_reset(vdev->drm.dev, vaccel_engines_stop, vdev);
	if (ret)
		return ret;
	for (i = 0; i < vdev->cfg.engines; i++) {
		struct task_struct *t;

		t = kthread_run(vaccel_engine_thread, &vdev->engines[i],
				"vaccel%u/%u", vdev->id, i);
		if (IS_ERR(t))
			return PTR_ERR(t);
		vdev->engines[i].thread = t;
	}
	return 0;
}
