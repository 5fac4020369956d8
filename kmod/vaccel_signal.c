// SPDX-License-Identifier: GPL-2.0-only
/*
 * Signals: the atomic update shared by device packets and SIGNAL_WRITE,
 * per-signal wake-ups of device queues and host waiters, WAIT_SIGNALS and
 * SIGNAL_EVENTFD.
 *
 * Wake-ups are per signal word. Whoever waits on a word (a queue blocked
 * in WAIT, a WAIT_SIGNALS caller, an armed eventfd) puts a &struct
 * vaccel_signal_waiter on a bucket of the table of the word's signal
 * object (its owner: the same whichever device or import the word is
 * reached through); an update of the word wakes only the waiters of that
 * word (the key is the word's kernel address). Engines without a blocked
 * queue, other devices and waiters of other words are not woken.
 *
 * The buckets are per object, so waiters of one object never lengthen the
 * wake-ups of another (other tenants' objects in particular), and a
 * bucket holds at most VACCEL_SIGNAL_BUCKET_MAX waiters, so a wake-up
 * walks at most that many, under a plain spinlock (interrupts stay on:
 * nothing wakes signal waiters from interrupt context). A word whose
 * bucket is full is polled instead: a queue's engine looks at it again
 * every VACCEL_SIGNAL_POLL_NS, so does WAIT_SIGNALS; SIGNAL_EVENTFD fails
 * with -ENOSPC. Waiters hold a reference on the table, which outlives
 * its object when a queue stays blocked on a word of an object that was
 * unbound and freed.
 *
 * Memory ordering (the argument Documentation/queues.rst makes for the
 * doorbell, here for signals):
 *
 *   updater                              waiter
 *   store the word (release/RMW)         add its entry to the bucket
 *   smp_mb()                             full barrier (set_current_state()
 *                                        or smp_mb())
 *   waitqueue_active(bucket)?            read the word (acquire)
 *     -> wake the word's waiters           -> satisfied? do not sleep
 *
 * Each side stores, issues a full barrier, then loads what the other side
 * stored, so at least one of them sees the other's store: either the
 * updater finds the entry and wakes it, or the waiter reads the new value.
 * There is no generation counter to get out of order with the word: the
 * word itself is the condition, and the waiter always re-reads it after
 * a wake-up. A spurious wake-up (a hash collision, an update that does
 * not satisfy the condition) costs a re-check; a lost one cannot happen.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/eventfd.h>
#include <linux/hrtimer.h>
#include <linux/kref.h>
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

/**
 * struct vaccel_signal_bucket - waiters of some words of one object
 * @lock: protects @waiters and @count; taken with interrupts on, the
 *	waiters' wake functions run under it
 * @count: entries on @waiters, at most VACCEL_SIGNAL_BUCKET_MAX
 * @waiters: the &wait_queue_entry of each armed waiter
 */
struct vaccel_signal_bucket {
	spinlock_t lock;	/* see above */
	unsigned int count;
	struct list_head waiters;
};

/**
 * struct vaccel_signal_table - the waiters of one signal object's words
 * @ref: one for the object, one per armed waiter
 * @base: kernel address of the object's first word (the key of a word is
 *	its address; its bucket is its index modulo VACCEL_SIGNAL_BUCKETS)
 * @b: the buckets
 */
struct vaccel_signal_table {
	struct kref ref;
	const void *base;
	struct vaccel_signal_bucket b[VACCEL_SIGNAL_BUCKETS];
};

/* What a wake-up passes to the wake functions of a bucket. */
struct vaccel_signal_key {
	const void *word;
	bool host;
};

/**
 * struct vaccel_signal_arm - an eventfd armed on a signal condition
 * @w: the waiter, on the word's bucket until disarmed
 * @node: entry in the context's &vaccel_signal_arms.list
 * @efd: the eventfd, referenced
 * @obj: the signal object, referenced so that @word stays mapped
 * @word: the signal word
 * @cond: the condition (copied, validated)
 * @flags: DRM_VACCEL_EVENTFD_*
 * @id: returned to user space for CANCEL
 * @fired: the eventfd was signalled; set once
 */
struct vaccel_signal_arm {
	struct vaccel_signal_waiter w;
	struct list_head node;
	struct eventfd_ctx *efd;
	struct drm_gem_object *obj;
	atomic64_t *word;
	struct drm_vaccel_signal_cond cond;
	u32 flags;
	u64 id;
	atomic_t fired;
};

static struct vaccel_signal_bucket *vaccel_signal_bucket(struct vaccel_signal_table *t,
							 const void *word)
{
	unsigned long index = ((unsigned long)word - (unsigned long)t->base) / 8;

	return &t->b[index % VACCEL_SIGNAL_BUCKETS];
}

/**
 * vaccel_signal_table_new() - the waiter table of a new signal object
 * @base: kernel address of the object's words
 *
 * Return: the table, with the object's reference, or NULL.
 */
struct vaccel_signal_table *vaccel_signal_table_new(const void *base)
{
	struct vaccel_signal_table *t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	unsigned int i;

	if (!t)
		return NULL;
	kref_init(&t->ref);
	t->base = base;
	for (i = 0; i < VACCEL_SIGNAL_BUCKETS; i++) {
		spin_lock_init(&t->b[i].lock);
		INIT_LIST_HEAD(&t->b[i].waiters);
	}
	return t;
}

/**
 * vaccel_signal_table_get() - take a reference on a table
 * @t: a table the caller already holds (or whose object it holds)
 */
void vaccel_signal_table_get(struct vaccel_signal_table *t)
{
	kref_get(&t->ref);
}

static void vaccel_signal_table_release(struct kref *ref)
{
	kfree(container_of(ref, struct vaccel_signal_table, ref));
}

/**
 * vaccel_signal_table_put() - drop a reference on a table
 * @t: the table, or NULL; freed with its last reference (from any context)
 */
void vaccel_signal_table_put(struct vaccel_signal_table *t)
{
	if (t)
		kref_put(&t->ref, vaccel_signal_table_release);
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

/* Count a wake-up's walk in the updating device's statistics. */
static void vaccel_signal_count_walk(struct vaccel_device *vdev, u64 walked)
{
	s64 max = atomic64_read(&vdev->stats.signal_walk_max);

	atomic64_inc(&vdev->stats.signal_wakes);
	if (!walked)
		return;
	atomic64_add(walked, &vdev->stats.signal_walked);
	while (walked > max &&
	       !atomic64_try_cmpxchg(&vdev->stats.signal_walk_max, &max, walked))
		;
}

/**
 * vaccel_signal_wake() - a signal word changed: wake its waiters
 * @vdev: the device of the updater, whose statistics count the walk
 * @t: the table of the word's object
 * @word: the word, already updated
 * @host: also wake host waiters (SIGNAL_WRITE, packets with the IRQ bit)
 *
 * Walks the word's bucket: at most VACCEL_SIGNAL_BUCKET_MAX waiters, of
 * this object only. Not from interrupt context.
 */
void vaccel_signal_wake(struct vaccel_device *vdev, struct vaccel_signal_table *t,
			atomic64_t *word, bool host)
{
	struct vaccel_signal_bucket *b = vaccel_signal_bucket(t, word);
	struct vaccel_signal_key key = { .word = word, .host = host };
	struct wait_queue_entry *e, *tmp;
	u64 walked = 0;

	smp_mb();	/* the word before the sleeper check: see the top */
	/* lockless, like waitqueue_active(): the barrier pairs with the waiter's */
	if (!list_empty(&b->waiters)) {
		spin_lock(&b->lock);
		list_for_each_entry_safe(e, tmp, &b->waiters, entry) {
			walked++;
			e->func(e, TASK_NORMAL, 0, &key);
			/* a one-shot waiter (an eventfd arm) took itself off */
			if (list_empty(&e->entry))
				b->count--;
		}
		spin_unlock(&b->lock);
	}
	vaccel_signal_count_walk(vdev, walked);
}

/**
 * vaccel_signal_waiter_init() - prepare a waiter
 * @w: the waiter
 * @func: its wake function; it should start with
 *	vaccel_signal_waiter_match()
 * @private: for @func (a task for default_wake_function())
 */
void vaccel_signal_waiter_init(struct vaccel_signal_waiter *w,
			       wait_queue_func_t func, void *private)
{
	init_waitqueue_func_entry(&w->wq, func);
	w->wq.private = private;
	INIT_LIST_HEAD(&w->wq.entry);
	w->word = NULL;
	w->table = NULL;
	w->host = false;
}

/**
 * vaccel_signal_waiter_match() - is a wake-up for this waiter
 * @w: the waiter
 * @key: the key passed to the wake function
 *
 * Return: true if @key's word is @w's, and, for a host waiter, the update
 * wakes the host.
 */
bool vaccel_signal_waiter_match(struct vaccel_signal_waiter *w, void *key)
{
	const struct vaccel_signal_key *k = key;

	return k && k->word == w->word && (!w->host || k->host);
}

/**
 * vaccel_signal_arm_waiter() - start waiting for updates of @word
 * @w: an initialised waiter, not armed
 * @t: the table of @word's object, which the caller holds
 * @word: the signal word
 *
 * The caller must issue a full barrier before it reads the word (see the
 * top of this file); set_current_state() is one.
 *
 * Return: 0, or -ENOSPC when the word's bucket holds
 * VACCEL_SIGNAL_BUCKET_MAX waiters (@w is left unarmed).
 */
int vaccel_signal_arm_waiter(struct vaccel_signal_waiter *w,
			     struct vaccel_signal_table *t, const void *word)
{
	struct vaccel_signal_bucket *b = vaccel_signal_bucket(t, word);

	spin_lock(&b->lock);
	if (b->count >= VACCEL_SIGNAL_BUCKET_MAX) {
		spin_unlock(&b->lock);
		return -ENOSPC;
	}
	b->count++;
	w->word = word;
	w->table = t;
	list_add_tail(&w->wq.entry, &b->waiters);
	spin_unlock(&b->lock);
	vaccel_signal_table_get(t);
	return 0;
}

/**
 * vaccel_signal_disarm_waiter() - stop waiting
 * @w: an initialised waiter, armed or not; an armed one may have been
 *	taken off its bucket by its own wake function meanwhile
 */
void vaccel_signal_disarm_waiter(struct vaccel_signal_waiter *w)
{
	struct vaccel_signal_table *t = w->table;
	struct vaccel_signal_bucket *b;

	if (!t)
		return;
	b = vaccel_signal_bucket(t, w->word);
	spin_lock(&b->lock);
	if (!list_empty(&w->wq.entry)) {
		list_del_init(&w->wq.entry);
		b->count--;
	}
	spin_unlock(&b->lock);
	w->word = NULL;
	w->table = NULL;
	vaccel_signal_table_put(t);
}

/*
 * The signal at @offset of object @handle, and its object's waiter table.
 * On success *objp holds a reference that keeps the word mapped and the
 * table alive (an import holds its exporter).
 */
static int vaccel_signal_lookup(struct drm_file *file, u32 handle, u64 offset,
				struct drm_gem_object **objp, atomic64_t **word,
				struct vaccel_signal_table **table)
{
	struct drm_device *drm = file->minor->dev;
	struct drm_gem_object *obj;
	struct vaccel_bo *owner;

	obj = drm_gem_object_lookup(file, handle);
	if (VACCEL_IOCTL_DBG(drm, !obj))
		return -ENOENT;
	owner = vaccel_bo_owner(to_vaccel_bo(obj));
	if (VACCEL_IOCTL_DBG(drm, !owner || !(owner->flags & DRM_VACCEL_BO_SIGNAL)) ||
	    VACCEL_IOCTL_DBG(drm, offset % 8 || offset >= obj->size)) {
		drm_gem_object_put(obj);
		return -EINVAL;
	}
	*objp = obj;
	*word = owner->signal_map.vaddr + offset;
	*table = owner->signal_table;
	return 0;
}

int vaccel_ioctl_signal_write(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct drm_vaccel_signal_write *args = data;
	struct vaccel_signal_table *table;
	struct drm_gem_object *obj;
	atomic64_t *word;
	int idx, ret;

	if (VACCEL_IOCTL_DBG(drm, args->flags || args->pad) ||
	    VACCEL_IOCTL_DBG(drm, args->op < DRM_VACCEL_SIGNAL_SET ||
			     args->op > DRM_VACCEL_SIGNAL_MAX))
		return -EINVAL;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	ret = vaccel_signal_lookup(file, args->handle, args->offset, &obj, &word, &table);
	if (ret)
		goto out;
	if (VACCEL_IOCTL_DBG(drm, vaccel_bo_read_only(to_vaccel_bo(obj)))) {
		ret = -EACCES;
	} else {
		vaccel_signal_apply(word, args->op, args->value);
		vaccel_signal_wake(to_vaccel_device(drm), table, word, true);
	}
	drm_gem_object_put(obj);
out:
	drm_dev_exit(idx);
	return ret;
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

static int vaccel_signal_host_wake(struct wait_queue_entry *wq, unsigned int mode,
				   int flags, void *key)
{
	struct vaccel_signal_waiter *w = container_of(wq, struct vaccel_signal_waiter, wq);

	if (!vaccel_signal_waiter_match(w, key))
		return 0;
	return default_wake_function(wq, mode, flags, NULL);
}

/*
 * Sleep until the conditions hold. A word whose bucket is full is not
 * waited on but polled: the sleep then lasts at most VACCEL_SIGNAL_POLL_NS.
 */
static int vaccel_signals_wait(struct drm_device *drm, struct vaccel_file *vfile,
			       struct drm_vaccel_wait_signals *args,
			       const struct drm_vaccel_signal_cond *c,
			       atomic64_t **words, struct vaccel_signal_table **tables,
			       struct vaccel_signal_waiter *w)
{
	struct vaccel_device *vdev = vfile->vdev;
	bool all = args->flags & DRM_VACCEL_WAIT_ALL, poll = false;
	ktime_t deadline = ns_to_ktime(args->timeout_ns), until;
	DEFINE_WAIT_FUNC(event, default_wake_function);
	int ret, first;
	u32 i;

	/* on every queue before the first read: see the top of this file */
	add_wait_queue(&vdev->event_wq, &event);
	for (i = 0; i < args->count; i++) {
		vaccel_signal_waiter_init(&w[i], vaccel_signal_host_wake, current);
		w[i].host = true;
		if (vaccel_signal_arm_waiter(&w[i], tables[i], words[i]))
			poll = true;
	}
	for (;;) {
		/* a full barrier: the entries before the reads */
		set_current_state(TASK_INTERRUPTIBLE);
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
		if (args->timeout_ns <= (s64)ktime_get_ns()) {
			ret = -ETIME;
			break;
		}
		if (signal_pending(current)) {
			/* absolute timeout: restarting repeats the same wait */
			ret = -ERESTARTSYS;
			break;
		}
		/* the deadline is absolute CLOCK_MONOTONIC, as hrtimers take it */
		until = deadline;
		if (poll)
			until = min(deadline, ktime_add_ns(ktime_get(), VACCEL_SIGNAL_POLL_NS));
		schedule_hrtimeout_range(&until, 0, HRTIMER_MODE_ABS);
	}
	__set_current_state(TASK_RUNNING);
	for (i = 0; i < args->count; i++)
		vaccel_signal_disarm_waiter(&w[i]);
	remove_wait_queue(&vdev->event_wq, &event);
	return ret;
}

/* Copy and check @count conditions; look their words up. */
static int vaccel_signal_conds(struct drm_file *file,
			       struct drm_vaccel_signal_cond *c, u32 count,
			       struct drm_gem_object **objs, atomic64_t **words,
			       struct vaccel_signal_table **tables, u32 *n)
{
	struct drm_device *drm = file->minor->dev;
	int ret;

	for (*n = 0; *n < count; (*n)++) {
		if (VACCEL_IOCTL_DBG(drm, !vaccel_core_wait_valid(c[*n].mask, c[*n].cond)))
			return -EINVAL;
		ret = vaccel_signal_lookup(file, c[*n].handle, c[*n].offset,
					   &objs[*n], &words[*n], &tables[*n]);
		if (ret)
			return ret;
	}
	return 0;
}

int vaccel_ioctl_wait_signals(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct vaccel_file *vfile = file->driver_priv;
	struct drm_vaccel_wait_signals *args = data;
	struct vaccel_signal_table **tables;
	struct vaccel_signal_waiter *w;
	struct drm_vaccel_signal_cond *c;
	struct drm_gem_object **objs;
	atomic64_t **words;
	u32 i, n = 0;
	int ret;

	if (VACCEL_IOCTL_DBG(drm, !args->count || args->count > DRM_VACCEL_WAIT_MAX_ITEMS) ||
	    VACCEL_IOCTL_DBG(drm, args->pad) ||
	    VACCEL_IOCTL_DBG(drm, args->flags & ~(DRM_VACCEL_WAIT_ALL |
						  DRM_VACCEL_WAIT_IGNORE_FAULTS)))
		return -EINVAL;

	c = kcalloc(args->count, sizeof(*c), GFP_KERNEL_ACCOUNT);
	objs = kcalloc(args->count, sizeof(*objs), GFP_KERNEL_ACCOUNT);
	words = kcalloc(args->count, sizeof(*words), GFP_KERNEL_ACCOUNT);
	tables = kcalloc(args->count, sizeof(*tables), GFP_KERNEL_ACCOUNT);
	w = kcalloc(args->count, sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!c || !objs || !words || !tables || !w) {
		ret = -ENOMEM;
		goto out;
	}
	/* one copy; only the copy is validated and used */
	if (copy_from_user(c, u64_to_user_ptr(args->conds),
			   array_size(args->count, sizeof(*c)))) {
		ret = -EFAULT;
		goto out;
	}
	ret = vaccel_signal_conds(file, c, args->count, objs, words, tables, &n);
	if (!ret)
		ret = vaccel_signals_wait(drm, vfile, args, c, words, tables, w);
out:
	for (i = 0; i < n; i++)
		drm_gem_object_put(objs[i]);
	kfree(w);
	kfree(tables);
	kfree(words);
	kfree(objs);
	kfree(c);
	return ret;
}

/*
 * Signal an arm's eventfd, once. Called from its wake function (with the
 * bucket's lock held), from the fault and unplug events, and when it is
 * armed; never takes the context's arms lock.
 */
static void vaccel_signal_arm_fire(struct vaccel_signal_arm *arm)
{
	if (!atomic_xchg(&arm->fired, 1))
		eventfd_signal(arm->efd);
}

static int vaccel_signal_arm_wake(struct wait_queue_entry *wq, unsigned int mode,
				  int flags, void *key)
{
	struct vaccel_signal_arm *arm = container_of(wq, struct vaccel_signal_arm, w.wq);

	if (!vaccel_signal_waiter_match(&arm->w, key) ||
	    !vaccel_core_wait_done(atomic64_read_acquire(arm->word), arm->cond.value,
				   arm->cond.mask, arm->cond.cond))
		return 0;
	vaccel_signal_arm_fire(arm);
	/* one-shot: off the bucket now; disarming later finds it unlinked */
	list_del_init(&wq->entry);
	return 1;
}

static void vaccel_signal_arm_free(struct vaccel_signal_arm *arm)
{
	vaccel_signal_disarm_waiter(&arm->w);
	eventfd_ctx_put(arm->efd);
	drm_gem_object_put(arm->obj);
	kfree(arm);
}

/*
 * Take the fired arms (and the one with @id, if not 0) off the context's
 * list, onto @dead. Returns whether @id was found. Called with the lock.
 */
static bool vaccel_signal_arms_reap(struct vaccel_signal_arms *arms, u64 id,
				    struct list_head *dead)
{
	struct vaccel_signal_arm *arm, *tmp;
	bool found = false;

	lockdep_assert_held(&arms->lock);
	list_for_each_entry_safe(arm, tmp, &arms->list, node) {
		if (arm->id == id && !atomic_read(&arm->fired))
			found = true;
		else if (!atomic_read(&arm->fired))
			continue;
		list_move(&arm->node, dead);
		arms->count--;
	}
	return found;
}

static void vaccel_signal_arms_free(struct list_head *dead)
{
	struct vaccel_signal_arm *arm, *tmp;

	list_for_each_entry_safe(arm, tmp, dead, node)
		vaccel_signal_arm_free(arm);
}

static int vaccel_signal_eventfd_cancel(struct vaccel_file *vfile, u64 id)
{
	struct vaccel_signal_arms *arms = &vfile->arms;
	LIST_HEAD(dead);
	bool found;

	spin_lock(&arms->lock);
	found = vaccel_signal_arms_reap(arms, id, &dead);
	spin_unlock(&arms->lock);
	vaccel_signal_arms_free(&dead);
	return found ? 0 : -ENOENT;
}

int vaccel_ioctl_signal_eventfd(struct drm_device *drm, void *data,
				struct drm_file *file)
{
	struct vaccel_file *vfile = file->driver_priv;
	struct drm_vaccel_signal_eventfd *args = data;
	struct vaccel_signal_arms *arms = &vfile->arms;
	struct vaccel_signal_table *table;
	struct vaccel_signal_arm *arm;
	LIST_HEAD(dead);
	u32 n;
	int ret;

	if (VACCEL_IOCTL_DBG(drm, args->flags & ~(DRM_VACCEL_EVENTFD_CANCEL |
						  DRM_VACCEL_EVENTFD_IGNORE_FAULTS)))
		return -EINVAL;
	if (args->flags & DRM_VACCEL_EVENTFD_CANCEL)
		return vaccel_signal_eventfd_cancel(vfile, args->id);

	arm = kzalloc(sizeof(*arm), GFP_KERNEL_ACCOUNT);
	if (!arm)
		return -ENOMEM;
	arm->cond = args->cond;
	arm->flags = args->flags;
	ret = vaccel_signal_conds(file, &arm->cond, 1, &arm->obj, &arm->word, &table, &n);
	if (ret)
		goto err_free;
	arm->efd = eventfd_ctx_fdget(args->fd);
	if (IS_ERR(arm->efd)) {
		ret = PTR_ERR(arm->efd);
		drm_dbg(drm, "fd %d is not an eventfd: %d\n", args->fd, ret);
		goto err_put;
	}
	vaccel_signal_waiter_init(&arm->w, vaccel_signal_arm_wake, NULL);
	arm->w.host = true;

	spin_lock(&arms->lock);
	vaccel_signal_arms_reap(arms, 0, &dead);
	if (VACCEL_IOCTL_DBG(drm, arms->count >= DRM_VACCEL_EVENTFD_MAX)) {
		spin_unlock(&arms->lock);
		ret = -ENOSPC;
		goto err_efd;
	}
	/* on the bucket before the first read: see the top of this file */
	ret = vaccel_signal_arm_waiter(&arm->w, table, arm->word);
	if (ret) {
		spin_unlock(&arms->lock);
		drm_dbg(drm, "signal at 0x%llx: its bucket holds %u waiters\n",
			arm->cond.offset, VACCEL_SIGNAL_BUCKET_MAX);
		goto err_efd;
	}
	arm->id = ++arms->next_id;
	list_add_tail(&arm->node, &arms->list);
	arms->count++;
	smp_mb();	/* on the bucket before the read: see the top */
	/* still under the lock: a CANCEL of this id cannot free it meanwhile */
	if (vaccel_core_wait_done(atomic64_read_acquire(arm->word), arm->cond.value,
				  arm->cond.mask, arm->cond.cond) ||
	    drm_dev_is_unplugged(drm) ||
	    (!(arm->flags & DRM_VACCEL_EVENTFD_IGNORE_FAULTS) &&
	     vaccel_file_faulted(vfile)))
		vaccel_signal_arm_fire(arm);
	args->id = arm->id;
	spin_unlock(&arms->lock);
	vaccel_signal_arms_free(&dead);
	return 0;

err_efd:
	eventfd_ctx_put(arm->efd);
err_put:
	drm_gem_object_put(arm->obj);
err_free:
	kfree(arm);
	vaccel_signal_arms_free(&dead);
	return ret;
}

/* Fire the arms of one context: all of them, or those that want faults. */
static void vaccel_signal_file_event(struct vaccel_file *vfile, bool fault)
{
	struct vaccel_signal_arm *arm;

	spin_lock(&vfile->arms.lock);
	list_for_each_entry(arm, &vfile->arms.list, node)
		if (!fault || !(arm->flags & DRM_VACCEL_EVENTFD_IGNORE_FAULTS))
			vaccel_signal_arm_fire(arm);
	spin_unlock(&vfile->arms.lock);
}

/**
 * vaccel_signal_device_event() - a queue faulted, or the device is gone
 * @vdev: the device
 * @vfile: the context whose queue faulted; NULL when the device was
 *	unplugged (every context's arms fire; the caller holds no lock the
 *	file list needs)
 * @fault: a queue fault (arms with IGNORE_FAULTS stay armed)
 *
 * Wakes the device's WAIT_SIGNALS callers, which then see -EIO or -ENODEV,
 * and fires the eventfds that must not wait for ever.
 */
void vaccel_signal_device_event(struct vaccel_device *vdev,
				struct vaccel_file *vfile, bool fault)
{
	struct drm_file *file;

	wake_up_all(&vdev->event_wq);
	if (vfile) {
		vaccel_signal_file_event(vfile, fault);
		return;
	}
	mutex_lock(&vdev->drm.filelist_mutex);
	list_for_each_entry(file, &vdev->drm.filelist, lhead)
		vaccel_signal_file_event(file->driver_priv, false);
	mutex_unlock(&vdev->drm.filelist_mutex);
}

/**
 * vaccel_signal_file_init() - a new context has no arms
 * @vfile: the context
 */
void vaccel_signal_file_init(struct vaccel_file *vfile)
{
	spin_lock_init(&vfile->arms.lock);
	INIT_LIST_HEAD(&vfile->arms.list);
	vfile->arms.count = 0;
	vfile->arms.next_id = 0;
}

/**
 * vaccel_signal_file_fini() - free the arms of a closing context
 * @vfile: the context; nothing can arm or fire its arms any more but
 *	their own wake functions
 */
void vaccel_signal_file_fini(struct vaccel_file *vfile)
{
	LIST_HEAD(dead);

	spin_lock(&vfile->arms.lock);
	list_splice_init(&vfile->arms.list, &dead);
	vfile->arms.count = 0;
	spin_unlock(&vfile->arms.lock);
	vaccel_signal_arms_free(&dead);
}
