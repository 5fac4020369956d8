// SPDX-License-Identifier: GPL-2.0-only
/*
 * Engines: one kernel thread each, running the queues assigned to it in
 * turn, a bounded number of steps per queue per pass, and helping other
 * engines' split packets when it has nothing of its own.
 *
 * Doorbell protocol, engine side (the submitter's side is in the uAPI
 * header): an engine that found no work for the device's poll budget
 * (1) sets need_wakeup in every control page, (2) issues a full barrier,
 * (3) reads every doorbell again and (4) sleeps only if none moved and
 * nobody woke it. The submitter stores the doorbell, issues a full
 * barrier, then reads need_wakeup. Each side stores, fences, then loads
 * what the other stored, so at least one of them sees the other's store:
 * either the engine finds the new doorbell in (3) or the submitter finds
 * need_wakeup and kicks. A waker (KICK, a signal a blocked queue of the
 * engine waits on, a split job, a stall change) sets @wake before it
 * looks at @sleeping, and the thread sets @sleeping before it tests
 * @wake, each with a full barrier in between, so a wake-up between (3)
 * and (4) is not lost either.
 *
 * Time never passes under the engine lock: DELAY, the link model and
 * injected latency make a queue busy until a deadline (see the packet
 * core); the engine runs its other queues meanwhile and, with nothing
 * else to do, sleeps until the earliest deadline without the lock.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/freezer.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "vaccel_drv.h"
#include "vaccel_queue.h"
#include "vaccel_signal.h"
#include "vaccel_split.h"

#define CREATE_TRACE_POINTS
#include "vaccel_trace.h"

/* Slack of an engine's timed sleep: DELAY ends at most this late. */
#define VACCEL_ENGINE_SLACK_NS	(50 * NSEC_PER_USEC)

/**
 * vaccel_engine_wake() - make sure an engine looks at its queues again
 * @e: the engine
 *
 * Safe from any context, including wake functions run under a waitqueue
 * lock.
 */
void vaccel_engine_wake(struct vaccel_engine *e)
{
	/*
	 * @wake before @sleeping: see the top of this file. A full barrier:
	 * atomic_xchg() is a fully ordered read-modify-write, where
	 * atomic_set() is a plain store that smp_mb__after_atomic() does not
	 * order before the load (on x86 the load passed the buffered store,
	 * and a wake-up between the engine's last pass and its sleep was lost).
	 */
	atomic_xchg(&e->wake, 1);
	if (READ_ONCE(e->sleeping) && e->task)
		wake_up_process(e->task);	/* a no-op for a stopped thread */
}

/**
 * vaccel_queue_fault() - publish a queue's fault and stop it
 * @q: the queue, whose core fault record is set; called by its engine or
 *	with its engine's lock held
 */
void vaccel_queue_fault(struct vaccel_queue *q)
{
	struct drm_vaccel_queue_control *c = q->ctrl;
	struct vaccel_core_queue *core = &q->core;

	trace_vaccel_fault(q->vfile->vdev->id, q->vfile->id, q->id, core->fault,
			   core->fault_index, core->fault_addr);
	WRITE_ONCE(c->fault, core->fault);
	WRITE_ONCE(c->fault_index, core->fault_index);
	WRITE_ONCE(c->fault_addr, core->fault_addr);
	WRITE_ONCE(c->fault_depth, core->fault_depth);
	WRITE_ONCE(c->fault_binding, core->fault_binding);
	WRITE_ONCE(c->fault_exec_index, core->fault_exec_index);
	/* the record is complete before the state says so */
	smp_store_release(&c->state, DRM_VACCEL_QUEUE_ERROR);
	vaccel_split_stop(q);
	atomic64_inc(&q->vfile->vdev->stats.faults);
	vaccel_signal_device_event(q->vfile->vdev, q->vfile, true);
}

/*
 * Stop @q with @code for a reason outside its packets (doorbell, injection,
 * reset): the record points at the packet it was on. Same locking as
 * vaccel_queue_fault().
 */
static void vaccel_queue_stop(struct vaccel_queue *q, u32 code)
{
	struct vaccel_core_queue *core = &q->core;

	core->fault = code;
	core->fault_index = core->read_index;
	core->fault_addr = 0;
	core->fault_depth = core->depth;
	core->fault_exec_index = core->depth ?
				 core->frames[core->depth - 1].next - 1 : 0;
	core->fault_binding = 0;
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
 * Keep the queue's waiter on the word its WAIT reads while it is blocked.
 * Returns true when the waiter was (re)armed: the caller must then look
 * at the word once more, as an update between the WAIT's read and the
 * arming woke nobody. When the word's bucket is full the queue is left
 * unarmed, with @wait_poll set: its engine polls it.
 */
static bool vaccel_queue_arm(struct vaccel_queue *q, bool blocked)
{
	const void *word = blocked ? q->wait_word : NULL;
	struct vaccel_signal_table *t = blocked ? q->wait_table : NULL;

	if (!blocked)
		q->wait_poll = false;
	if (q->wait.word == word && q->wait.table == t)
		return false;
	vaccel_signal_disarm_waiter(&q->wait);
	q->wait_poll = false;
	if (!word)
		return false;
	if (vaccel_signal_arm_waiter(&q->wait, t, word)) {
		q->wait_poll = true;
		return false;
	}
	/* on the bucket before the word is read again: see vaccel_signal.c */
	smp_mb();
	return true;
}

static int vaccel_queue_signal_wake(struct wait_queue_entry *wq, unsigned int mode,
				    int flags, void *key)
{
	struct vaccel_queue *q = container_of(wq, struct vaccel_queue, wait.wq);

	if (!vaccel_signal_waiter_match(&q->wait, key))
		return 0;
	vaccel_engine_wake(q->engine);
	return 1;
}

/*
 * Injected per-step latency (debugfs packet_latency_ns): each step of a
 * queue is preceded by that much busy time, which starts once the queue
 * is no longer busy (so that its busy periods never overlap).
 */
static bool vaccel_queue_latency(struct vaccel_queue *q, u64 now)
{
	u64 latency = READ_ONCE(q->vfile->vdev->knobs.packet_latency_ns);

	if (!latency || q->latency_paid || q->core.busy_until > now)
		return false;
	q->core.busy_until = now + latency;
	q->latency_paid = true;
	return true;
}

/*
 * Engine time accounting (fdinfo drm-engine-compute). Each engine keeps a
 * cursor: its time before it is credited. A turn (or a range a helper
 * runs) is credited from the cursor or its start, whichever is later, to
 * its end, and moves the cursor there; modelled time a step charges
 * (busy_until) is attributed to its queue from the cursor on, up to its
 * end, and moves the cursor ahead of the clock: overlapping DELAYs of two
 * queues are one span of engine time, credited to the first. Attributed
 * modelled time is credited as it passes, so a reader never sees time
 * that has not passed; a running turn is seen live. Each context's credit
 * on each engine grows by at most the time that passed between two reads,
 * so the sum over contexts never exceeds the elapsed time times the
 * engines.
 */

/**
 * vaccel_acct_begin() - a turn or a helped range starts on an engine
 * @e: the engine, run by the calling thread
 * @vfile: the context it runs for
 * @now: the start (ktime_get_ns())
 */
void vaccel_acct_begin(struct vaccel_engine *e, struct vaccel_file *vfile, u64 now)
{
	spin_lock(&e->acct.lock);
	e->acct.cur = vfile;
	e->acct.cur_from = now;
	e->acct.cur_seen = false;
	spin_unlock(&e->acct.lock);
}

/**
 * vaccel_acct_end() - the turn or range of vaccel_acct_begin() ended
 * @e: the engine
 * @ran: it made progress; one that did not (a check of a blocked or busy
 *	queue) is credited only if a reader counted it already
 *
 * Return: the end (ktime_get_ns()), up to which the turn was credited
 */
u64 vaccel_acct_end(struct vaccel_engine *e, bool ran)
{
	struct vaccel_engine_acct *a = &e->acct;
	u64 now = ktime_get_ns(), from;

	spin_lock(&a->lock);
	from = max(a->cur_from, a->cursor);
	if ((ran || a->cur_seen) && now > from) {
		a->cur->engine_ns[e->index] += now - from;
		a->cursor = now;
	}
	a->cur = NULL;
	spin_unlock(&a->lock);
	return now;
}

/* Credit the part of @q's attributed time that passed; forget the rest. */
static void vaccel_acct_settle(struct vaccel_engine *e, struct vaccel_queue *q, u64 now)
{
	lockdep_assert_held(&e->acct.lock);
	if (list_empty(&q->acct_node))
		return;
	if (now > q->acct_from)
		q->vfile->engine_ns[e->index] += min(now, q->acct_to) - q->acct_from;
	list_del_init(&q->acct_node);
}

/*
 * @q, in its engine's turn that ended at @end (vaccel_acct_end()), became
 * busy until @until: attribute that time from the turn's end or the
 * cursor, whichever is later (its previous busy time has passed: a queue
 * runs no step while busy, and injected latency waits for it too). From
 * @end, not from now: the engine thread may be preempted between the two,
 * and that gap would be missing from the step's modelled time (a 50 ms
 * DELAY credited 49.993 ms).
 */
static void vaccel_acct_model(struct vaccel_queue *q, u64 until, u64 end)
{
	struct vaccel_engine *e = q->engine;
	struct vaccel_engine_acct *a = &e->acct;
	u64 now = ktime_get_ns(), from;

	spin_lock(&a->lock);
	vaccel_acct_settle(e, q, now);
	from = max(end, a->cursor);
	if (until > from) {
		q->acct_from = from;
		q->acct_to = until;
		list_add_tail(&q->acct_node, &a->busy);
		a->cursor = until;
	}
	spin_unlock(&a->lock);
}

/**
 * vaccel_acct_queue_fini() - credit what passed of a dying queue's time
 * @q: a queue no engine runs any more
 */
void vaccel_acct_queue_fini(struct vaccel_queue *q)
{
	spin_lock(&q->engine->acct.lock);
	vaccel_acct_settle(q->engine, q, ktime_get_ns());
	spin_unlock(&q->engine->acct.lock);
}

/**
 * vaccel_acct_read() - the engine time credited to a context, now
 * @vfile: the context
 *
 * For each engine, under its lock: what was credited, plus what passed of
 * the turn running for @vfile and of the modelled time attributed to its
 * queues. Engine by engine the value never decreases and grows at most as
 * fast as the clock.
 *
 * Return: nanoseconds of engine time.
 */
u64 vaccel_acct_read(struct vaccel_file *vfile)
{
	struct vaccel_device *vdev = vfile->vdev;
	u64 total = 0, now, from;
	struct vaccel_queue *q;
	unsigned int i;

	for (i = 0; i < vdev->cfg.engines; i++) {
		struct vaccel_engine_acct *a = &vdev->engines[i].acct;

		spin_lock(&a->lock);
		now = ktime_get_ns();
		total += vfile->engine_ns[i];
		from = max(a->cur_from, a->cursor);
		if (a->cur == vfile && now > from) {
			total += now - from;
			a->cur_seen = true;
		}
		list_for_each_entry(q, &a->busy, acct_node)
			if (q->vfile == vfile && now > q->acct_from)
				total += min(now, q->acct_to) - q->acct_from;
		spin_unlock(&a->lock);
	}
	return total;
}

/* Shared counters of what ran: touched only when something did. */
static void vaccel_queue_account(struct vaccel_queue *q, u64 packets, u64 bytes)
{
	struct vaccel_device *vdev = q->vfile->vdev;

	if (q->core.packets != packets)
		atomic64_add(q->core.packets - packets, &vdev->stats.packets);
	if (q->core.bytes != bytes)
		atomic64_add(q->core.bytes - bytes, &vdev->stats.bytes);
}

/**
 * vaccel_queue_run() - give one queue a turn
 * @q: the queue, under its engine's lock
 * @next: lowered to the earliest time the queue needs a look without a
 *	wake-up (end of its busy time or of its WAIT's timeout)
 *
 * Runs up to VACCEL_QUEUE_BUDGET steps, reading the clock after every
 * step, for at most VACCEL_QUEUE_TURN_NS.
 *
 * Return: true if it made progress.
 */
bool vaccel_queue_run(struct vaccel_queue *q, u64 *next)
{
	struct vaccel_core_queue *core = &q->core;
	u64 packets = core->packets, bytes = core->bytes, busy = core->busy_until;
	unsigned int budget = VACCEL_QUEUE_BUDGET;
	u64 start, now, turn_end, end;
	enum vaccel_core_status st = VACCEL_CORE_IDLE;
	bool progress = false, blocked;

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

	start = ktime_get_ns();
	now = start;
	turn_end = start + VACCEL_QUEUE_TURN_NS;
	vaccel_acct_begin(q->engine, q->vfile, start);
	if (q->split) {
		progress = vaccel_split_run(q, turn_end);
		if (q->split)
			goto out;
		now = ktime_get_ns();
	}
	while (budget) {
		if (vaccel_queue_latency(q, now)) {
			st = VACCEL_CORE_BUSY;
			break;
		}
		st = vaccel_core_run(core, q->write_index, 1);
		if (st == VACCEL_CORE_BUSY)
			break;
		q->latency_paid = false;
		now = ktime_get_ns();
		if (st == VACCEL_CORE_BLOCKED && vaccel_queue_arm(q, true))
			continue;	/* read the word again, armed */
		if (st != VACCEL_CORE_BUDGET)
			break;
		budget--;
		progress = true;
		if (vaccel_split_start(q)) {
			vaccel_split_run(q, turn_end);
			break;
		}
		if (now >= turn_end)
			break;
	}
out:
	/* the packets' effects are visible before their completion is */
	smp_store_release(&q->ctrl->read_index, core->read_index);
	blocked = st == VACCEL_CORE_BLOCKED;
	vaccel_queue_arm(q, blocked);
	if (q->blocked != blocked) {
		q->blocked = blocked;
		if (blocked)
			trace_vaccel_wait_block(q->vfile->vdev->id, q->vfile->id,
						q->id, core->read_index);
		else
			trace_vaccel_wait_unblock(q->vfile->vdev->id, q->vfile->id,
						  q->id, core->read_index);
	}
	if (st == VACCEL_CORE_FAULT)
		vaccel_queue_fault(q);
	if (blocked && core->deadline)
		*next = min(*next, core->deadline);
	if (blocked && q->wait_poll)
		*next = min(*next, now + VACCEL_SIGNAL_POLL_NS);
	if (core->busy_until)
		*next = min(*next, core->busy_until);

	progress |= core->packets != packets || core->bytes != bytes ||
		    st == VACCEL_CORE_FAULT;
	vaccel_queue_account(q, packets, bytes);
	/* a client's engine time: its turns, and the modelled time it charged */
	/*
	 * a turn that started a busy period (a DELAY) ran a step: credited,
	 * or the step's time from its start to @end would be missing from
	 * the modelled time (a 50 ms DELAY credited 49.990 ms in the VM)
	 */
	end = vaccel_acct_end(q->engine, progress || core->busy_until != busy);
	if (core->busy_until != busy && core->busy_until > now)
		vaccel_acct_model(q, core->busy_until, end);
	return progress;
}

/*
 * One pass over the engine's queues: 1, 4 or 16 turns each by priority.
 * The lock is taken per turn; a queue that used its turns (or had nothing
 * to do) moves to the tail, so queues created or destroyed meanwhile do
 * not disturb the rotation.
 */
static bool vaccel_engine_pass(struct vaccel_engine *e, u64 *next)
{
	struct vaccel_queue *q;
	bool progress = false, ran;
	size_t i, n = 0;

	mutex_lock(&e->lock);
	list_for_each_entry(q, &e->queues, node)
		n += VACCEL_QUEUE_TURNS(q->priority);
	mutex_unlock(&e->lock);
	for (i = 0; i < n && !kthread_should_stop(); i++) {
		mutex_lock(&e->lock);
		q = list_first_entry_or_null(&e->queues, struct vaccel_queue, node);
		if (q) {
			if (!q->turns_left)
				q->turns_left = VACCEL_QUEUE_TURNS(q->priority);
			ran = vaccel_queue_run(q, next);
			progress |= ran;
			/*
			 * A queue keeps the head for its priority's turns while
			 * it has work; the lock is released between them.
			 */
			if (!ran || !--q->turns_left) {
				q->turns_left = 0;
				list_move_tail(&q->node, &e->queues);
			}
		}
		mutex_unlock(&e->lock);
		if (!q)
			break;
		cond_resched();
	}
	return progress;
}

/* Is there work an engine must not sleep through? Called with e->lock. */
static bool vaccel_engine_pending(struct vaccel_engine *e, u64 now)
{
	struct vaccel_queue *q;

	list_for_each_entry(q, &e->queues, node) {
		if (READ_ONCE(q->ctrl->state) != DRM_VACCEL_QUEUE_RUNNING)
			continue;
		/* after the full barrier in vaccel_engine_sleep() */
		if (smp_load_acquire(q->doorbell) > q->write_index)
			return true;
		if (q->blocked || vaccel_queue_idle(q) || vaccel_split_waiting(q))
			continue;
		if (!q->core.busy_until || q->core.busy_until <= now)
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

/* Sleep until woken or until @deadline (U64_MAX: no deadline). */
static void vaccel_engine_sleep(struct vaccel_engine *e, u64 deadline)
{
	bool pending;

	mutex_lock(&e->lock);
	vaccel_engine_set_need_wakeup(e, 1);
	smp_mb();	/* need_wakeup before the doorbells: see the top */
	pending = vaccel_engine_pending(e, ktime_get_ns());
	mutex_unlock(&e->lock);
	pending = pending || vaccel_split_pending(e->vdev, e);

	WRITE_ONCE(e->sleeping, true);
	/* a full barrier: @sleeping before @wake, see the top */
	set_current_state(TASK_INTERRUPTIBLE | TASK_FREEZABLE);
	if (!pending && !atomic_xchg(&e->wake, 0) && !kthread_should_stop() &&
	    deadline > ktime_get_ns()) {
		ktime_t t = ns_to_ktime(deadline == U64_MAX ? KTIME_MAX : deadline);

		atomic64_inc(&e->sleeps);
		atomic64_inc(&e->vdev->stats.sleeps);
		schedule_hrtimeout_range(&t, VACCEL_ENGINE_SLACK_NS, HRTIMER_MODE_ABS);
		atomic64_inc(&e->wakeups);
		atomic64_inc(&e->vdev->stats.wakeups);
	}
	__set_current_state(TASK_RUNNING);
	WRITE_ONCE(e->sleeping, false);

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

/* Stop every running queue of every context with @code; count them. */
static int vaccel_device_stop_queues(struct vaccel_device *vdev, u32 code)
{
	unsigned int i;
	int n = 0;

	for (i = 0; i < vdev->cfg.engines; i++) {
		struct vaccel_engine *e = &vdev->engines[i];
		struct vaccel_queue *q;

		mutex_lock(&e->lock);
		list_for_each_entry(q, &e->queues, node) {
			if (READ_ONCE(q->ctrl->state) != DRM_VACCEL_QUEUE_RUNNING)
				continue;
			vaccel_queue_stop(q, code);
			n++;
		}
		mutex_unlock(&e->lock);
	}
	return n;
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
	int idx, n;

	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	n = vaccel_device_stop_queues(vdev, DRM_VACCEL_FAULT_RESET);
	for (i = 0; i < vdev->cfg.engines; i++)
		vaccel_engine_stall_set(&vdev->engines[i], 0);	/* and wakes the thread */
	atomic64_inc(&vdev->stats.resets);
	drm_dev_exit(idx);
	return n;
}

/**
 * vaccel_device_lost() - stop the queues of a device that was unplugged
 * @vdev: the device, after drm_dev_unplug()
 *
 * Every running queue stops with DRM_VACCEL_FAULT_REMOVED, so a program
 * polling its control page learns of the removal without a syscall.
 */
void vaccel_device_lost(struct vaccel_device *vdev)
{
	vaccel_device_stop_queues(vdev, DRM_VACCEL_FAULT_REMOVED);
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
		ktime_t t = ns_to_ktime(until);

		set_current_state(TASK_INTERRUPTIBLE | TASK_FREEZABLE);
		if (READ_ONCE(e->stall_until) == until)
			schedule_hrtimeout_range(&t, VACCEL_ENGINE_SLACK_NS,
						 HRTIMER_MODE_ABS);
		__set_current_state(TASK_RUNNING);
		now = ktime_get_ns();
		until = READ_ONCE(e->stall_until);
	}
}

static int vaccel_engine_thread(void *data)
{
	struct vaccel_engine *e = data;
	u64 idle_since = ktime_get_ns();

	set_freezable();
	while (!kthread_freezable_should_stop(NULL)) {
		u64 next = U64_MAX, now;
		bool progress;

		vaccel_engine_stall(e);
		/*
		 * wake-ups from now on count for the next sleep: a full
		 * barrier, so the pass reads what a waker stored before a
		 * @wake this clears
		 */
		atomic_xchg(&e->wake, 0);
		progress = vaccel_engine_pass(e, &next);
		if (!progress)
			progress = vaccel_split_help(e, ktime_get_ns() + VACCEL_QUEUE_TURN_NS);
		now = ktime_get_ns();
		if (progress) {
			idle_since = now;
		} else if (now - idle_since >= e->vdev->cfg.poll_budget_ns ||
			   !single_task_running()) {
			/*
			 * Polling only pays while the CPU has nothing else to
			 * run: with another task runnable here (a submitter,
			 * another engine), polling would take its time, so the
			 * engine sleeps at once (as KVM's halt polling does).
			 * The poll budget is not restarted: a wake-up that
			 * brings no work (a signal that does not satisfy the
			 * WAIT) sends the engine straight back to sleep.
			 */
			vaccel_engine_sleep(e, next);
			continue;
		}
		cond_resched();
	}
	return 0;
}

static void vaccel_engines_put_tasks(struct drm_device *drm, void *data)
{
	struct vaccel_device *vdev = data;
	unsigned int i;

	for (i = 0; i < vdev->cfg.engines; i++)
		if (vdev->engines[i].task)
			put_task_struct(vdev->engines[i].task);
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
		spin_lock_init(&e->acct.lock);
		INIT_LIST_HEAD(&e->acct.busy);
		ret = drmm_mutex_init(&vdev->drm, &e->lock);
		if (ret)
			return ret;
	}
	ret = drmm_add_action(&vdev->drm, vaccel_engines_put_tasks, vdev);
	if (ret)
		return ret;
	ret = devm_add_action_or_reset(vdev->drm.dev, vaccel_engines_stop, vdev);
	if (ret)
		return ret;
	for (i = 0; i < vdev->cfg.engines; i++) {
		struct task_struct *t;

		t = kthread_run(vaccel_engine_thread, &vdev->engines[i],
				"vaccel%u/%u", vdev->id, i);
		if (IS_ERR(t))
			return PTR_ERR(t);
		vdev->engines[i].task = get_task_struct(t);
		vdev->engines[i].thread = t;
	}
	return 0;
}

/**
 * vaccel_queue_init_wait() - set up a new queue's signal waiter
 * @q: the queue
 */
void vaccel_queue_init_wait(struct vaccel_queue *q)
{
	vaccel_signal_waiter_init(&q->wait, vaccel_queue_signal_wake, NULL);
}

/**
 * vaccel_queue_fini_wait() - disarm a queue no engine runs any more
 * @q: the queue
 */
void vaccel_queue_fini_wait(struct vaccel_queue *q)
{
	vaccel_signal_disarm_waiter(&q->wait);
	vaccel_signal_table_put(q->wait_table);
	q->wait_table = NULL;
}
