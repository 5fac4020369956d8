// SPDX-License-Identifier: GPL-2.0-only
/*
 * Signals: the atomic update shared by device packets and SIGNAL_WRITE,
 * the wake-up of device queues and host waiters, and WAIT_SIGNALS.
 *
 * Wake path: the updater stores the value, bumps the generation, issues a
 * full barrier and then checks each waitqueue for sleepers; a waiter gets
 * on its waitqueue (prepare_to_wait() or wait_woken(), both with a full
 * barrier) before it reads the values. Either the updater sees the waiter
 * or the waiter sees the value: a spurious wake is possible, a lost one
 * is not.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/ktime.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include <drm/vaccel_accel.h>

#include "vaccel_drv.h"
#include "vaccel_gem.h"
#include "vaccel_queue.h"
#include "vaccel_signal.h"

DECLARE_WAIT_QUEUE_HEAD(vaccel_engine_wq);
static DECLARE_WAIT_QUEUE_HEAD(vaccel_host_wq);
static atomic_t vaccel_signal_gen = ATOMIC_INIT(0);

/**
 * vaccel_signal_generation() - count of signal updates so far
 *
 * An engine reads it before a pass and checks it again after preparing to
 * sleep: a change means a WAIT may have become satisfied meanwhile.
 *
 * Return: the generation.
 */
int vaccel_signal_generation(void)
{
	/* before the pass's signal reads, so none of them can be older */
	return atomic_read_acquire(&vaccel_signal_gen);
}

/**
 * vaccel_signal_apply() - apply a signal operation atomically
 * @word: the signal
 * @op: DRM_VACCEL_SIGNAL_SET, _ADD or _MAX (validated by the caller)
 * @value: operand
 *
 * Release ordering: whatever the updater wrote before is visible to a
 * waiter that reads the new value with acquire.
 */
void vaccel_signal_apply(atomic64_t *word, u32 op, u64 value)
{
	s64 old;

	switch (op) {
	case DRM_VACCEL_SIGNAL_SET:
		atomic64_set_release(word, value);
		break;
	case DRM_VACCEL_SIGNAL_ADD:
		atomic64_add_return_release(value, word);
		break;
	default:	/* MAX in the sequence order WAIT GE uses */
		old = atomic64_read(word);
		while ((s64)(value - (u64)old) > 0 &&
		       !atomic64_try_cmpxchg_release(word, &old, value))
			;
		break;
	}
}

/**
 * vaccel_signal_wake() - a signal changed: wake whoever may wait for it
 * @host: also wake host waiters (packets with the IRQ bit, SIGNAL_WRITE,
 *	queue faults)
 *
 * Called after the new value is stored.
 */
void vaccel_signal_wake(bool host)
{
	atomic_inc(&vaccel_signal_gen);
	/* value and generation before the sleeper checks: see the top */
	smp_mb__after_atomic();
	if (wq_has_sleeper(&vaccel_engine_wq))
		wake_up_all(&vaccel_engine_wq);
	if (host && wq_has_sleeper(&vaccel_host_wq))
		wake_up_all(&vaccel_host_wq);
}

/*
 * The signal at @offset of object @handle. On success *objp holds a
 * reference that keeps the word mapped (an import holds its exporter).
 */
static int vaccel_signal_lookup(struct drm_file *file, u32 handle, u64 offset,
				struct drm_gem_object **objp, atomic64_t **word)
{
	struct drm_gem_object *obj;
	struct vaccel_bo *owner;

	obj = drm_gem_object_lookup(file, handle);
	if (!obj)
		return -ENOENT;
	owner = vaccel_bo_owner(to_vaccel_bo(obj));
	if (!owner || !(owner->flags & DRM_VACCEL_BO_SIGNAL) || offset % 8 ||
	    offset >= obj->size) {
		drm_gem_object_put(obj);
		return -EINVAL;
	}
	*objp = obj;
	*word = owner->signal_map.vaddr + offset;
	return 0;
}

int vaccel_ioctl_signal_write(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct drm_vaccel_signal_write *args = data;
	struct drm_gem_object *obj;
	atomic64_t *word;
	int ret;

	if (args->op < DRM_VACCEL_SIGNAL_SET || args->op > DRM_VACCEL_SIGNAL_MAX)
		return -EINVAL;
	ret = vaccel_signal_lookup(file, args->handle, args->offset, &obj, &word);
	if (ret)
		return ret;
	vaccel_signal_apply(word, args->op, args->value);
	vaccel_signal_wake(true);
	drm_gem_object_put(obj);
	return 0;
}

static bool vaccel_file_faulted(struct vaccel_file *vfile)
{
	struct vaccel_queue *q;
	unsigned long id;
	bool faulted = false;

	xa_lock(&vfile->queues);
	xa_for_each(&vfile->queues, id, q) {
		/* pairs with the store-release of the state in vaccel_engine.c */
		if (smp_load_acquire(&q->ctrl->state) != DRM_VACCEL_QUEUE_RUNNING) {
			faulted = true;
			break;
		}
	}
	xa_unlock(&vfile->queues);
	return faulted;
}

/* The index that satisfies the wait, or -1. */
static int vaccel_signals_check(const struct drm_vaccel_signal_cond *c,
				atomic64_t **words, u32 count, bool all)
{
	u32 i;

	for (i = 0; i < count; i++) {
		bool done = vaccel_core_wait_done(atomic64_read_acquire(words[i]),
						  c[i].value, c[i].mask, c[i].cond);

		if (done && !all)
			return i;
		if (!done && all)
			return -1;
	}
	return all ? 0 : -1;
}

static int vaccel_signals_wait(struct drm_device *drm, struct vaccel_file *vfile,
			       struct drm_vaccel_wait_signals *args,
			       const struct drm_vaccel_signal_cond *c,
			       atomic64_t **words)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	bool all = args->flags & DRM_VACCEL_WAIT_ALL;
	int ret, first;

	add_wait_queue(&vaccel_host_wq, &wait);
	/*
	 * On the queue before the first read of the signals: add_wait_queue()
	 * is no barrier, and vaccel_signal_wake() looks for sleepers without
	 * the queue's lock. Later rounds get theirs from wait_woken().
	 */
	smp_mb();
	for (;;) {
		s64 left;

		first = vaccel_signals_check(c, words, args->count, all);
		if (first >= 0) {
			args->first = first;
			ret = 0;
			break;
		}
		/* an unplugged device signals nothing any more */
		if (drm_dev_is_unplugged(drm)) {
			ret = -ENODEV;
			break;
		}
		if (!(args->flags & DRM_VACCEL_WAIT_IGNORE_FAULTS) &&
		    vaccel_file_faulted(vfile)) {
			ret = -EIO;
			break;
		}
		left = args->timeout_ns - (s64)ktime_get_ns();
		if (left <= 0) {
			ret = -ETIME;
			break;
		}
		if (signal_pending(current)) {
			/* absolute timeout: restarting repeats the same wait */
			ret = -ERESTARTSYS;
			break;
		}
		wait_woken(&wait, TASK_INTERRUPTIBLE,
			   min_t(u64, nsecs_to_jiffies(left) + 1, MAX_SCHEDULE_TIMEOUT));
	}
	remove_wait_queue(&vaccel_host_wq, &wait);
	return ret;
}

int vaccel_ioctl_wait_signals(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct vaccel_file *vfile = file->driver_priv;
	struct drm_vaccel_wait_signals *args = data;
	struct drm_vaccel_signal_cond *c;
	struct drm_gem_object **objs;
	atomic64_t **words;
	u32 i, n = 0;
	int ret;

	if (!args->count || args->count > DRM_VACCEL_WAIT_MAX_ITEMS || args->pad ||
	    (args->flags & ~(DRM_VACCEL_WAIT_ALL | DRM_VACCEL_WAIT_IGNORE_FAULTS)))
		return -EINVAL;

	c = kcalloc(args->count, sizeof(*c), GFP_KERNEL);
	objs = kcalloc(args->count, sizeof(*objs), GFP_KERNEL);
	words = kcalloc(args->count, sizeof(*words), GFP_KERNEL);
	if (!c || !objs || !words) {
		ret = -ENOMEM;
		goto out;
	}
	/* one copy; only the copy is validated and used */
	if (copy_from_user(c, u64_to_user_ptr(args->conds),
			   array_size(args->count, sizeof(*c)))) {
		ret = -EFAULT;
		goto out;
	}
	for (n = 0; n < args->count; n++) {
		if (c[n].cond > DRM_VACCEL_WAIT_NE) {
			ret = -EINVAL;
			goto out;
		}
		ret = vaccel_signal_lookup(file, c[n].handle, c[n].offset,
					   &objs[n], &words[n]);
		if (ret)
			goto out;
	}
	ret = vaccel_signals_wait(drm, vfile, args, c, words);
out:
	for (i = 0; i < n; i++)
		drm_gem_object_put(objs[i]);
	kfree(words);
	kfree(objs);
	kfree(c);
	return ret;
}
