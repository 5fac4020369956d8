/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef __VACCEL_SIGNAL_H__
#define __VACCEL_SIGNAL_H__

#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

struct drm_device;
struct drm_file;
struct vaccel_device;
struct vaccel_file;
struct vaccel_signal_table;

/*
 * The waiters of a signal object's words are kept in buckets of the
 * object's own table (vaccel_signal.c): this many per object, each
 * holding at most VACCEL_SIGNAL_BUCKET_MAX waiters, so that a wake-up
 * walks at most that many. A word whose bucket is full is polled every
 * VACCEL_SIGNAL_POLL_NS by queues and WAIT_SIGNALS instead.
 */
#define VACCEL_SIGNAL_BUCKETS		64
#define VACCEL_SIGNAL_BUCKET_MAX	512
#define VACCEL_SIGNAL_POLL_NS		NSEC_PER_MSEC

/**
 * struct vaccel_signal_waiter - interest in one signal word
 * @wq: entry on the word's bucket (see vaccel_signal.c); its func is the
 *	waiter's own wake function, called with the bucket's lock held
 * @word: the kernel address of the signal word, used as a key only (the
 *	waiter may outlive the mapping: it is never dereferenced here)
 * @table: the table of the word's object while armed (a reference), or
 *	NULL
 * @host: a host waiter, woken only by updates that wake the host
 *	(SIGNAL_WRITE, packets with DRM_VACCEL_PKT_IRQ)
 */
struct vaccel_signal_waiter {
	struct wait_queue_entry wq;
	const void *word;
	struct vaccel_signal_table *table;
	bool host;
};

/**
 * struct vaccel_signal_arms - a context's armed eventfds
 * @lock: protects @list and @count (taken before a bucket lock, never
 *	inside one: wake functions do not take it)
 * @list: the &struct vaccel_signal_arm of the context
 * @count: arms on @list, fired or not
 * @next_id: id of the next arm
 */
struct vaccel_signal_arms {
	spinlock_t lock;	/* see above */
	struct list_head list;
	unsigned int count;
	u64 next_id;
};

struct vaccel_signal_table *vaccel_signal_table_new(const void *base);
void vaccel_signal_table_get(struct vaccel_signal_table *t);
void vaccel_signal_table_put(struct vaccel_signal_table *t);
void vaccel_signal_apply(atomic64_t *word, u32 op, u64 value);
void vaccel_signal_wake(struct vaccel_device *vdev, struct vaccel_signal_table *t,
			atomic64_t *word, bool host);
void vaccel_signal_waiter_init(struct vaccel_signal_waiter *w,
			       wait_queue_func_t func, void *private);
bool vaccel_signal_waiter_match(struct vaccel_signal_waiter *w, void *key);
int vaccel_signal_arm_waiter(struct vaccel_signal_waiter *w,
			     struct vaccel_signal_table *t, const void *word);
void vaccel_signal_disarm_waiter(struct vaccel_signal_waiter *w);
void vaccel_signal_device_event(struct vaccel_device *vdev,
				struct vaccel_file *vfile, bool fault);

void vaccel_signal_file_init(struct vaccel_file *vfile);
void vaccel_signal_file_fini(struct vaccel_file *vfile);

int vaccel_ioctl_wait_signals(struct drm_device *drm, void *data,
			      struct drm_file *file);
int vaccel_ioctl_signal_write(struct drm_device *drm, void *data,
			      struct drm_file *file);
int vaccel_ioctl_signal_eventfd(struct drm_device *drm, void *data,
				struct drm_file *file);

#endif /* __VACCEL_SIGNAL_H__ */
