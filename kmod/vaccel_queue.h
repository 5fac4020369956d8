/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef __VACCEL_QUEUE_H__
#define __VACCEL_QUEUE_H__

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "core/vaccel_core.h"
#include "vaccel_signal.h"
#include "vaccel_vm.h"

struct drm_device;
struct drm_file;
struct drm_printer;
struct file;
struct task_struct;
struct vm_area_struct;
struct vaccel_device;
struct vaccel_file;
struct vaccel_split;

/* Queues per context, reported by GET_PARAM MAX_QUEUES. */
#define VACCEL_MAX_QUEUES	64
/*
 * Steps of one turn. A pass over an engine's queues gives a queue of
 * priority p VACCEL_QUEUE_TURNS(p) turns (1, 4, 16), so priority weights
 * both steps and time (a turn is also bounded in time, below).
 */
#define VACCEL_QUEUE_BUDGET	64
#define VACCEL_QUEUE_TURNS(p)	(1u << (2 * (p)))
/*
 * A turn also ends after this long, whatever its budget (the clock is read
 * after every step, and a step is bounded), so the engine's lock is never
 * held long: QUEUE_CREATE, QUEUE_DESTROY and close() of other contexts
 * wait for at most one turn. Nothing sleeps in a turn.
 */
#define VACCEL_QUEUE_TURN_NS	(2 * NSEC_PER_MSEC)
/*
 * mmap() offsets of queue pages: below the GEM offset range (which starts
 * at 4 GiB) and below 2^32, so that 32-bit processes can map them.
 */
#define VACCEL_MMAP_QUEUE_BASE	SZ_1G
#define VACCEL_MMAP_QUEUE_END	(VACCEL_MMAP_QUEUE_BASE + \
				 VACCEL_MAX_QUEUES * 2 * PAGE_SIZE)

/**
 * struct vaccel_engine_acct - the engine's time as credited to contexts
 * @lock: protects the fields below, each queue's @acct_from, @acct_to and
 *	@acct_node, and the engine's entry of each context's
 *	&vaccel_file.engine_ns; a leaf lock
 * @cursor: the engine's time before this (ktime_get_ns()) is credited to
 *	someone; ahead of the clock while modelled time is attributed
 * @cur: the context whose turn, or range of a split packet, the engine is
 *	running; NULL between them
 * @cur_from: when that started
 * @cur_seen: a reader counted it while it ran: it is credited even if it
 *	ran nothing (a credit never goes back)
 * @busy: queues with modelled time attributed (&vaccel_queue.acct_node)
 *
 * Every instant of the engine's time is credited at most once, and only
 * once it has passed: to the context whose turn or range ran then, or to
 * the queue whose modelled time (DELAY, link, injected latency) covered it
 * first. See vaccel_acct_read().
 */
struct vaccel_engine_acct {
	spinlock_t lock;	/* see above */
	u64 cursor;
	struct vaccel_file *cur;
	u64 cur_from;
	bool cur_seen;
	struct list_head busy;
};

/**
 * struct vaccel_engine - one execution engine: a kernel thread
 * @vdev: the device
 * @thread: the thread; NULL before start and after stop
 * @task: the thread's task, referenced until the device is released, so
 *	that wakers (signal wake functions of queues of files still open
 *	after an unplug) never touch a freed task
 * @index: engine number on the device
 * @lock: protects @queues; held by the thread during each queue's turn
 *	(not across turns, and never while sleeping), so removing a queue
 *	waits for the turn in progress, at most about VACCEL_QUEUE_TURN_NS
 * @queues: the &struct vaccel_queue assigned to this engine
 * @wake: set by whoever wakes the thread (KICK, a signal a queue of the
 *	engine waits on, a split job, a stall change) before it looks at
 *	@sleeping, so a wake-up between the thread's last check and its sleep
 *	is not lost
 * @sleeping: the thread is (about to be) asleep: wakers must wake it
 * @stall_until: injected stall: the thread runs nothing before this time
 *	(ktime_get_ns()); set through debugfs
 * @helping: the thread is running ranges of a split job in
 *	vaccel_split_help(), outside any turn (only the thread touches it)
 * @sleeps: times the thread went to sleep
 * @wakeups: times it woke up from a sleep
 * @acct: its time as credited to contexts (fdinfo drm-engine-compute)
 */
struct vaccel_engine {
	struct vaccel_device *vdev;
	struct task_struct *thread;
	struct task_struct *task;
	unsigned int index;
	struct mutex lock;	/* see above */
	struct list_head queues;
	atomic_t wake;
	bool sleeping;
	u64 stall_until;
	bool helping;
	atomic64_t sleeps;
	atomic64_t wakeups;
	struct vaccel_engine_acct acct;
};

/**
 * struct vaccel_queue - a user-mode queue
 * @vfile: the owning context
 * @engine: the engine that runs it
 * @id: queue id in the context
 * @node: entry in @engine's queues, under the engine's lock
 * @core: executor state; only @engine's thread touches it, under its lock
 * @doorbell: kernel address of the doorbell page (u64 write index)
 * @ctrl: kernel address of the control page
 * @pages: the doorbell and control pages; user mappings hold own references
 * @write_index: the highest doorbell value accepted
 * @priority: DRM_VACCEL_QUEUE_PRIORITY_*, which sets the steps per turn
 * @blocked: the last run stopped at an unsatisfied WAIT
 * @wait: waiter on the signal word a blocked WAIT reads; armed while
 *	@blocked (the engine's thread arms and disarms it)
 * @wait_word: the word the last WAIT step read (a key, never dereferenced
 *	outside the core's mapped access)
 * @wait_table: the waiter table of @wait_word's object, referenced
 * @wait_poll: blocked, but @wait could not be armed (the word's bucket is
 *	full): the engine looks at the queue every VACCEL_SIGNAL_POLL_NS
 * @charge_ns: modelled time (link transfers) charged by memory accesses
 *	since the core last collected it; atomic because split ranges of a
 *	packet run on other engines
 * @link_from: ktime_get_ns() at the first access charged to @charge_ns,
 *	0 for none: the transfer's time runs from there (atomic, as
 *	@charge_ns)
 * @turns_left: turns left in the current pass, under the engine's lock
 * @latency_paid: the injected per-step latency of the next step was charged
 * @acct_from: start of the modelled time attributed to the queue, under
 *	@engine's &vaccel_engine_acct.lock
 * @acct_to: its end; credited as it passes
 * @acct_node: on @engine's &vaccel_engine_acct.busy while attributed
 * @split: the split job of the current bulk packet, if any (vaccel_split.c)
 * @tlb: the mappings @engine's thread used last for this queue (only that
 *	thread touches it; flushed when the queue is freed)
 */
struct vaccel_queue {
	struct vaccel_file *vfile;
	struct vaccel_engine *engine;
	u32 id;
	struct list_head node;
	struct vaccel_core_queue core;
	u64 *doorbell;
	struct drm_vaccel_queue_control *ctrl;
	struct page *pages[2];
	u64 write_index;
	u32 priority;
	bool blocked;
	struct vaccel_signal_waiter wait;
	const void *wait_word;
	struct vaccel_signal_table *wait_table;
	bool wait_poll;
	atomic64_t charge_ns;
	atomic64_t link_from;
	unsigned int turns_left;
	bool latency_paid;
	u64 acct_from;
	u64 acct_to;
	struct list_head acct_node;
	struct vaccel_split *split;
	struct vaccel_vm_tlb tlb;
};

int vaccel_engines_start(struct vaccel_device *vdev);
void vaccel_engine_wake(struct vaccel_engine *e);
bool vaccel_queue_run(struct vaccel_queue *q, u64 *next);
void vaccel_queues_fini(struct vaccel_file *vfile);
int vaccel_queue_mmap(struct file *filp, struct vm_area_struct *vma);
void vaccel_queue_fault(struct vaccel_queue *q);
int vaccel_device_force_fault(struct vaccel_device *vdev, u32 ctx, u32 id);
int vaccel_device_reset(struct vaccel_device *vdev);
void vaccel_device_lost(struct vaccel_device *vdev);
int vaccel_engine_stall_set(struct vaccel_engine *e, u64 ns);
void vaccel_queue_init_wait(struct vaccel_queue *q);
void vaccel_queue_fini_wait(struct vaccel_queue *q);
void vaccel_acct_begin(struct vaccel_engine *e, struct vaccel_file *vfile, u64 now);
u64 vaccel_acct_end(struct vaccel_engine *e, bool ran);
void vaccel_acct_queue_fini(struct vaccel_queue *q);
u64 vaccel_acct_read(struct vaccel_file *vfile);

int vaccel_ioctl_queue_create(struct drm_device *drm, void *data,
			      struct drm_file *file);
int vaccel_ioctl_queue_destroy(struct drm_device *drm, void *data,
			       struct drm_file *file);
int vaccel_ioctl_queue_query(struct drm_device *drm, void *data,
			     struct drm_file *file);
int vaccel_ioctl_kick(struct drm_device *drm, void *data,
		      struct drm_file *file);

#endif /* __VACCEL_QUEUE_H__ */
