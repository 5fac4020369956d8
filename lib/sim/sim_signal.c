// SPDX-License-Identifier: MIT
/*
 * Signals of the in-process device: the atomic update shared by device
 * packets and SIGNAL_WRITE, per-word wake-ups of blocked queues, host
 * waiters and armed eventfds, WAIT_SIGNALS and SIGNAL_EVENTFD, with the
 * module's rules and errnos (kmod/vaccel_signal.c).
 *
 * Whoever waits on a word (a queue blocked in WAIT, a WAIT_SIGNALS
 * caller, an armed eventfd) puts a struct sim_waiter on the word's bucket:
 * a table of the process hashed by the word's address in its owner
 * object's engine mapping, so that the key is the same whichever device,
 * import or handle the word is reached through. An update of the word
 * walks that bucket only (at most SIM_SIGNAL_BUCKET_MAX waiters; a word
 * whose bucket is full is polled by its queue and by WAIT_SIGNALS every
 * SIM_SIGNAL_POLL_NS instead). A host waiter sleeps on a futex of its own
 * (WAIT_SIGNALS spins SIM_WAIT_SPIN_NS first), which updates of its words,
 * a queue fault of its file and the removal store and wake.
 *
 * Memory ordering, the module's argument (kmod/vaccel_signal.c):
 *
 *   updater                              waiter
 *   store the word (release/RMW)         put itself on the bucket
 *   full fence                           full fence
 *   bucket count? -> walk, wake          read the word: satisfied?
 *
 * One of them sees the other's store: the updater finds the waiter, or
 * the waiter reads the new value. The waiter always re-reads its words
 * after a wake-up; spurious wake-ups cost a re-check, none is lost.
 *
 * Words another process may write (of a foreign owner, or of an owner
 * this process exported) change without this process's buckets knowing:
 * their waiters also sleep on the word itself as a shared futex
 * (futex_waitv()), and every update of such a word, in any process, wakes
 * it (sim_futex_wake_shared()), with a bounded sleep
 * (SIM_SHARED_BACKSTOP_NS) for a change the futex cannot see.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sim_internal.h"

/**
 * struct sim_bucket - waiters of some words
 * @lock: protects @waiters and the change of @count; a signal handler
 *	never takes it while its own thread holds it (bucket_lock())
 * @count: entries on @waiters (read without the lock by updaters)
 * @waiters: struct sim_waiter.node
 */
struct sim_bucket {
	pthread_mutex_t lock;
	atomic_uint count;
	struct list waiters;
};

static struct sim_bucket buckets[SIM_SIGNAL_BUCKETS];
static pthread_once_t buckets_once = PTHREAD_ONCE_INIT;

static void buckets_init(void)
{
	unsigned int i;

	for (i = 0; i < SIM_SIGNAL_BUCKETS; i++) {
		pthread_mutex_init(&buckets[i].lock, NULL);
		atomic_store(&buckets[i].count, 0);
		list_init(&buckets[i].waiters);
	}
}

/*
 * At every open, before the file can be used: the buckets are ready before
 * any SIGNAL_WRITE, so that one in a signal handler never runs the
 * pthread_once() its own thread may be inside (the first wait or write).
 */
void sim_signal_init(void)
{
	pthread_once(&buckets_once, buckets_init);
}

/* In a child (fork()): the parent's waiters are not the child's (a lock may have been held). */
void sim_signal_fork_child(void)
{
	buckets_init();
}

static unsigned int bucket_index(const void *word)
{
	return (unsigned int)(((uintptr_t)word >> 3) % SIM_SIGNAL_BUCKETS);
}

/*
 * Bucket locks and signal handlers. SIGNAL_WRITE may run in a signal
 * handler (acc_signal_write_raw(), accel_tg_abort()) and its wake-up takes
 * the word's bucket lock: taken in a handler that interrupted its own
 * thread inside a bucket section, it would deadlock. Engine threads block
 * every signal. A user thread counts the bucket sections it is in
 * (@bucket_depth: only the thread and its own handlers touch it); a
 * wake-up that finds the count non-zero is a handler's that interrupted
 * such a section: it takes no lock, it marks the bucket in
 * @bucket_deferred and the interrupted thread, leaving its outermost
 * section, wakes every waiter of each marked bucket (bucket_drain(); a
 * spurious wake-up costs a re-check, an arm fires only if its condition
 * holds). The word's store and the fence before the count check are the
 * handler's, so the protocol at the top holds: a waiter that was on the
 * bucket is woken by the drain, one that arrives later reads the word.
 * (This replaced blocking every signal around each section: two
 * rt_sigprocmask() calls a section, 18 per 4-rank allreduce iteration.)
 * The counters are lock-free atomics, which a handler may use; the
 * compiler keeps them in order with the section (signal fences).
 */
#define SIM_DEFER_WORDS	(SIM_SIGNAL_BUCKETS / 64)

static _Thread_local atomic_uint bucket_depth;
static _Thread_local atomic_bool bucket_draining;
static _Thread_local atomic_bool bucket_any_deferred;
static _Thread_local _Atomic uint64_t bucket_deferred[SIM_DEFER_WORDS];

atomic_ulong sim_signal_deferred;

static void bucket_walk(struct sim_bucket *b, const void *word, bool host, uint64_t *walked);

/* Lock @b: on a user thread, inside a counted section. */
static void bucket_lock(struct sim_bucket *b)
{
	if (!sim_cur_engine) {
		atomic_fetch_add_explicit(&bucket_depth, 1, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
	}
	pthread_mutex_lock(&b->lock);
}

/* The buckets handlers of this thread marked: every waiter of each is woken. */
static void bucket_drain(void)
{
	unsigned int i;

	atomic_store_explicit(&bucket_draining, true, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	/* a handler that marks one more after the exchange sets the flag again */
	while (atomic_exchange_explicit(&bucket_any_deferred, false, memory_order_relaxed)) {
		for (i = 0; i < SIM_DEFER_WORDS; i++) {
			uint64_t bits = atomic_exchange_explicit(&bucket_deferred[i], 0,
								 memory_order_relaxed);

			while (bits) {
				unsigned int bit = (unsigned int)__builtin_ctzll(bits);
				struct sim_bucket *b = &buckets[i * 64 + bit];
				uint64_t walked = 0;

				bits &= bits - 1;
				bucket_lock(b);
				bucket_walk(b, NULL, true, &walked);
				pthread_mutex_unlock(&b->lock);
				atomic_fetch_sub_explicit(&bucket_depth, 1, memory_order_relaxed);
			}
		}
	}
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&bucket_draining, false, memory_order_relaxed);
}

static void bucket_unlock(struct sim_bucket *b)
{
	pthread_mutex_unlock(&b->lock);
	if (sim_cur_engine)
		return;
	atomic_signal_fence(memory_order_seq_cst);
	if (atomic_fetch_sub_explicit(&bucket_depth, 1, memory_order_relaxed) == 1 &&
	    atomic_load_explicit(&bucket_any_deferred, memory_order_relaxed) &&
	    !atomic_load_explicit(&bucket_draining, memory_order_relaxed))
		bucket_drain();
}

/* Is this user thread inside a bucket section (its own, or one a handler interrupted)? */
bool sim_signal_in_section(void)
{
	return atomic_load_explicit(&bucket_depth, memory_order_relaxed) != 0;
}

/* In a signal handler that interrupted this thread inside a bucket section: wake @i later. */
static bool bucket_defer(unsigned int i)
{
	if (sim_cur_engine || !atomic_load_explicit(&bucket_depth, memory_order_relaxed))
		return false;
	atomic_fetch_or_explicit(&bucket_deferred[i / 64], 1ull << (i % 64),
				 memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&bucket_any_deferred, true, memory_order_relaxed);
	atomic_fetch_add_explicit(&sim_signal_deferred, 1, memory_order_relaxed);
	return true;
}

void sim_signal_apply(uint64_t *word, uint32_t op, uint64_t value)
{
	uint64_t old;

	switch (op) {
	case DRM_VACCEL_SIGNAL_SET:
		__atomic_store_n(word, value, __ATOMIC_RELEASE);
		break;
	case DRM_VACCEL_SIGNAL_ADD:
		__atomic_fetch_add(word, value, __ATOMIC_RELEASE);
		break;
	default:	/* MAX in the sequence order WAIT GE uses */
		old = __atomic_load_n(word, __ATOMIC_RELAXED);
		while ((int64_t)(value - old) > 0 &&
		       !__atomic_compare_exchange_n(word, &old, value, true, __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED))
			;
		break;
	}
}

int sim_waiter_arm(struct sim_waiter *w, const void *word)
{
	unsigned int i = bucket_index(word);
	struct sim_bucket *b = &buckets[i];
	int ret = 0;

	pthread_once(&buckets_once, buckets_init);
	bucket_lock(b);
	if (atomic_load_explicit(&b->count, memory_order_relaxed) >= SIM_SIGNAL_BUCKET_MAX) {
		ret = -ENOSPC;
	} else {
		w->word = word;
		w->bucket = i;
		w->armed = true;
		list_add_tail(&b->waiters, &w->node);
		atomic_fetch_add(&b->count, 1);
	}
	bucket_unlock(b);
	return ret;
}

void sim_waiter_disarm(struct sim_waiter *w)
{
	struct sim_bucket *b;

	if (!w->word)
		return;
	b = &buckets[w->bucket];
	bucket_lock(b);
	/* an arm's wake-up may have taken it off already */
	if (w->armed) {
		list_del(&w->node);
		atomic_fetch_sub(&b->count, 1);
		w->armed = false;
	}
	bucket_unlock(b);
	w->word = NULL;
}

static bool cond_done(const struct drm_vaccel_signal_cond *c, const uint64_t *word)
{
	return acc_sim_core_wait_done(__atomic_load_n(word, __ATOMIC_ACQUIRE), c->value, c->mask,
				      c->cond);
}

/* An arm's eventfd gets 1, once. Async-signal-safe (write()). */
static void sim_arm_fire(struct sim_arm *arm)
{
	uint64_t one = 1;

	if (!atomic_exchange(&arm->fired, 1) && write(arm->efd, &one, sizeof(one)) < 0)
		acc_warn("vaccel-sim: eventfd arm %llu: write: %s", (unsigned long long)arm->id,
			 strerror(errno));
}

static void sim_host_wake(struct sim_hwait *hw)
{
	atomic_store(&hw->futex, 1);
	sim_futex_wake(&hw->futex, 1);
}

static void count_walk(struct sim_dev *dev, uint64_t walked)
{
	uint64_t max;

	atomic_fetch_add_explicit(&dev->stats.signal_wakes, 1, memory_order_relaxed);
	if (!walked)
		return;
	atomic_fetch_add_explicit(&dev->stats.signal_walked, walked, memory_order_relaxed);
	max = atomic_load_explicit(&dev->stats.signal_walk_max, memory_order_relaxed);
	while (walked > max && !atomic_compare_exchange_weak(&dev->stats.signal_walk_max, &max,
							     walked))
		;
}

/* Wake the waiters of @word on @b (any word's if NULL); @b locked. */
static void bucket_walk(struct sim_bucket *b, const void *word, bool host, uint64_t *walked)
{
	struct list *l, *next;

	for (l = b->waiters.next; l != &b->waiters; l = next) {
		struct sim_waiter *w = container_of(l, struct sim_waiter, node);

		next = l->next;
		(*walked)++;
		if ((word && w->word != word) || (w->host && !host))
			continue;
		if (w->kind == SIM_W_HOST) {
			sim_host_wake(w->owner);
		} else if (w->kind == SIM_W_QUEUE) {
			sim_queue_wake(w->owner);
		} else {
			struct sim_arm *arm = w->owner;

			if (!cond_done(&arm->cond, arm->word))
				continue;
			sim_arm_fire(arm);
			/* one-shot: off the bucket now; disarming later finds it off */
			list_del(&w->node);
			atomic_fetch_sub(&b->count, 1);
			w->armed = false;
		}
	}
}

void sim_signal_wake(struct sim_dev *dev, const void *word, bool host, bool shared)
{
	unsigned int i = bucket_index(word);
	struct sim_bucket *b = &buckets[i];
	uint64_t walked = 0;

	pthread_once(&buckets_once, buckets_init);
	/* the word before the waiter check: see the top */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&b->count, memory_order_relaxed) && !bucket_defer(i)) {
		bucket_lock(b);
		bucket_walk(b, word, host, &walked);
		bucket_unlock(b);
	}
	/* waiters of other processes (and this one's sleeping on the word itself) */
	if (shared) {
		atomic_fetch_add_explicit(&dev->stats.signal_shared_wakes, 1,
					  memory_order_relaxed);
		sim_futex_wake_shared(word);
	}
	count_walk(dev, walked);
}

/* ---- the signal of a condition or a SIGNAL_WRITE ---- */

/*
 * The word at @offset of @bo (a handle's object): -EINVAL unless a signal
 * object's aligned word, as the module's vaccel_signal_lookup().
 */
static int signal_word(struct sim_bo *bo, uint64_t offset, uint64_t **word)
{
	struct sim_bo *o = sim_bo_owner(bo);

	if (!(o->flags & DRM_VACCEL_BO_SIGNAL) || offset % 8 || offset >= bo->size)
		return -EINVAL;
	*word = (uint64_t *)(o->kmap + offset);
	return 0;
}

/* Under the SRCU read lock (sim_transport.c): no lock before the bucket. */
int sim_signal_write(struct sim_file *f, struct drm_vaccel_signal_write *w)
{
	struct sim_bo *bo;
	uint64_t *word;
	int ret;

	if (w->flags || w->pad || w->op < DRM_VACCEL_SIGNAL_SET || w->op > DRM_VACCEL_SIGNAL_MAX)
		return -EINVAL;
	bo = sim_handle_lookup(f, w->handle);
	if (!bo)
		return -ENOENT;
	ret = signal_word(bo, w->offset, &word);
	if (ret)
		return ret;
	/* a read-only import (or another process's read-only memfd) */
	if (bo->read_only || !sim_bo_owner(bo)->fd_writable)
		return -EACCES;
	sim_signal_apply(word, w->op, w->value);
	sim_signal_wake(f->dev, word, true, sim_bo_shared(bo));
	return 0;
}

/* ---- WAIT_SIGNALS ---- */

/* Copy @len bytes at user address @src: -EFAULT if it is not readable. */
static int copy_from_user(void *dst, uint64_t src, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)(uintptr_t)src, len };
	ssize_t n;

	if (!src)
		return -EFAULT;
	n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	/* without process_vm_readv (seccomp, no ptrace rights on itself): trust it */
	if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
		memcpy(dst, (const void *)(uintptr_t)src, len);
		return 0;
	}
	return -EFAULT;
}

/* The index satisfying the wait, or -1; the low halves of the values read into @seen. */
static int check_conds(const struct drm_vaccel_signal_cond *c, uint64_t *const *words,
		       uint32_t n, bool all, uint32_t *seen)
{
	uint64_t v;
	uint32_t i;

	for (i = 0; i < n; i++) {
		bool done;

		v = __atomic_load_n(words[i], __ATOMIC_ACQUIRE);
		seen[i] = (uint32_t)v;
		done = acc_sim_core_wait_done(v, c[i].value, c[i].mask, c[i].cond);

		if (done && !all)
			return (int)i;
		if (!done && all)
			return -1;
	}
	return all ? 0 : -1;
}

/* No signal handler takes the event lock (SIGNAL_WRITE and KICK do not): signals stay open. */
static void event_add(struct sim_dev *dev, struct sim_hwait *hw)
{
	pthread_mutex_lock(&dev->event_lock);
	list_add_tail(&dev->event_waiters, &hw->dev_node);
	pthread_mutex_unlock(&dev->event_lock);
}

static void event_del(struct sim_dev *dev, struct sim_hwait *hw)
{
	pthread_mutex_lock(&dev->event_lock);
	list_del(&hw->dev_node);
	pthread_mutex_unlock(&dev->event_lock);
}

/* Sleep until the conditions hold (the module's vaccel_signals_wait()). */
static int wait_loop(struct sim_file *f, struct drm_vaccel_wait_signals *a,
		     const struct drm_vaccel_signal_cond *c, uint64_t *const *words,
		     const bool *shared, bool restart)
{
	const uint32_t *swords[DRM_VACCEL_WAIT_MAX_ITEMS];
	uint32_t seen[DRM_VACCEL_WAIT_MAX_ITEMS], svals[DRM_VACCEL_WAIT_MAX_ITEMS];
	struct sim_waiter w[DRM_VACCEL_WAIT_MAX_ITEMS];
	bool all = a->flags & DRM_VACCEL_WAIT_ALL, poll = false;
	struct sim_dev *dev = f->dev;
	struct sim_hwait hw;
	int64_t now, spin_end;
	uint64_t until;
	int ret, first;
	uint32_t i, ns;

	/* spin briefly: a wait that is about to be satisfied costs no sleep */
	spin_end = (int64_t)sim_now() + SIM_WAIT_SPIN_NS;
	do {
		first = check_conds(c, words, a->count, all, seen);
		if (first >= 0) {
			a->first = (uint32_t)first;
			return 0;
		}
		acc_cpu_relax();
	} while ((int64_t)sim_now() < spin_end);

	/* on every bucket before the first read: see the top */
	atomic_init(&hw.futex, 0);
	event_add(dev, &hw);
	for (i = 0; i < a->count; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].kind = SIM_W_HOST;
		w[i].host = true;
		w[i].owner = &hw;
		if (sim_waiter_arm(&w[i], words[i]))
			poll = true;
	}
	for (;;) {
		atomic_store(&hw.futex, 0);
		/* the entries (and the reset futex) before the reads */
		atomic_thread_fence(memory_order_seq_cst);
		first = check_conds(c, words, a->count, all, seen);
		if (first >= 0) {
			a->first = (uint32_t)first;
			ret = 0;
			break;
		}
		/* a removed device signals nothing any more */
		if (atomic_load(&dev->removed)) {
			ret = -ENODEV;
			break;
		}
		if (!(a->flags & DRM_VACCEL_WAIT_IGNORE_FAULTS) && sim_file_faulted(f)) {
			ret = -EIO;
			break;
		}
		now = (int64_t)sim_now();
		if (a->timeout_ns <= now) {
			ret = -ETIME;
			break;
		}
		until = (uint64_t)a->timeout_ns;
		if (poll && now + (int64_t)SIM_SIGNAL_POLL_NS < a->timeout_ns)
			until = (uint64_t)now + SIM_SIGNAL_POLL_NS;
		/* words other processes write: also their shared futexes, with the values read */
		for (i = 0, ns = 0; i < a->count; i++)
			if (shared[i]) {
				swords[ns] = (const uint32_t *)words[i];
				svals[ns++] = seen[i];
			}
		if (ns && (uint64_t)now + SIM_SHARED_BACKSTOP_NS < until)
			until = (uint64_t)now + SIM_SHARED_BACKSTOP_NS;
		if (ns)
			ret = sim_futex_waitv(&hw.futex, swords, svals, ns, until);
		else
			ret = sim_futex_wait(&hw.futex, 0, until);
		/* an absolute deadline: restarting repeats the same wait */
		if (ret == -EINTR && !restart)
			break;
	}
	for (i = 0; i < a->count; i++)
		sim_waiter_disarm(&w[i]);
	event_del(dev, &hw);
	return ret;
}

int sim_wait_signals(struct sim_file *f, struct drm_vaccel_wait_signals *a, bool restart)
{
	struct drm_vaccel_signal_cond c[DRM_VACCEL_WAIT_MAX_ITEMS];
	struct sim_bo *bos[DRM_VACCEL_WAIT_MAX_ITEMS];
	uint64_t *words[DRM_VACCEL_WAIT_MAX_ITEMS];
	bool shared[DRM_VACCEL_WAIT_MAX_ITEMS];
	uint32_t i, n = 0;
	int ret;

	if (!a->count || a->count > DRM_VACCEL_WAIT_MAX_ITEMS || a->pad ||
	    a->flags & ~(DRM_VACCEL_WAIT_ALL | DRM_VACCEL_WAIT_IGNORE_FAULTS))
		return -EINVAL;
	/* one copy; only the copy is validated and used */
	ret = copy_from_user(c, a->conds, a->count * sizeof(c[0]));
	if (ret)
		return ret;
	for (n = 0; n < a->count; n++) {
		if (!acc_sim_core_wait_valid(c[n].mask, c[n].cond)) {
			ret = -EINVAL;
			break;
		}
		bos[n] = sim_handle_get(f, c[n].handle);
		if (!bos[n]) {
			ret = -ENOENT;
			break;
		}
		ret = signal_word(bos[n], c[n].offset, &words[n]);
		if (ret) {
			sim_bo_put(bos[n]);
			break;
		}
		shared[n] = sim_bo_shared(bos[n]);
	}
	if (!ret)
		ret = wait_loop(f, a, c, words, shared, restart);
	for (i = 0; i < n; i++)
		sim_bo_put(bos[i]);
	return ret;
}

/* ---- SIGNAL_EVENTFD ---- */

void sim_arms_init(struct sim_arms *arms)
{
	pthread_mutex_init(&arms->lock, NULL);
	list_init(&arms->list);
	arms->count = 0;
	arms->next_id = 0;
}

static void sim_arm_free(struct sim_arm *arm)
{
	sim_waiter_disarm(&arm->w);
	close(arm->efd);
	sim_bo_put(arm->bo);
	free(arm);
}

/*
 * Move the fired arms (and the one with @id, if not 0) off the list onto
 * @dead; whether @id was found unfired. Arms lock held.
 */
static bool arms_reap(struct sim_arms *arms, uint64_t id, struct list *dead)
{
	struct list *l, *next;
	bool found = false;

	for (l = arms->list.next; l != &arms->list; l = next) {
		struct sim_arm *arm = container_of(l, struct sim_arm, node);

		next = l->next;
		if (arm->id == id && !atomic_load(&arm->fired))
			found = true;
		else if (!atomic_load(&arm->fired))
			continue;
		list_del(&arm->node);
		list_add_tail(dead, &arm->node);
		arms->count--;
	}
	return found;
}

static void arms_free(struct list *dead)
{
	while (!list_empty(dead)) {
		struct sim_arm *arm = container_of(dead->next, struct sim_arm, node);

		list_del(&arm->node);
		sim_arm_free(arm);
	}
}

void sim_arms_fini(struct sim_arms *arms)
{
	struct list dead;

	list_init(&dead);
	pthread_mutex_lock(&arms->lock);
	while (!list_empty(&arms->list)) {
		struct list *l = arms->list.next;

		list_del(l);
		list_add_tail(&dead, l);
	}
	arms->count = 0;
	pthread_mutex_unlock(&arms->lock);
	arms_free(&dead);
	pthread_mutex_destroy(&arms->lock);
}

/* -EBADF for a closed fd, -EINVAL for a file that is not an eventfd; else 0. */
static int check_eventfd(int fd)
{
	char path[64], target[64];
	ssize_t n;

	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -EINVAL;
	target[n] = '\0';
	return strcmp(target, "anon_inode:[eventfd]") ? -EINVAL : 0;
}

int sim_signal_eventfd(struct sim_file *f, struct drm_vaccel_signal_eventfd *a)
{
	struct sim_arms *arms = &f->arms;
	struct sim_arm *arm;
	struct list dead;
	uint64_t *word;
	int ret;

	if (a->flags & ~(DRM_VACCEL_EVENTFD_CANCEL | DRM_VACCEL_EVENTFD_IGNORE_FAULTS))
		return -EINVAL;
	list_init(&dead);
	if (a->flags & DRM_VACCEL_EVENTFD_CANCEL) {
		bool found;

		pthread_mutex_lock(&arms->lock);
		found = arms_reap(arms, a->id, &dead);
		pthread_mutex_unlock(&arms->lock);
		arms_free(&dead);
		return found ? 0 : -ENOENT;
	}
	arm = calloc(1, sizeof(*arm));
	if (!arm)
		return -ENOMEM;
	arm->cond = a->cond;
	arm->flags = a->flags;
	arm->efd = -1;
	ret = -EINVAL;
	if (!acc_sim_core_wait_valid(arm->cond.mask, arm->cond.cond))
		goto err_free;
	arm->bo = sim_handle_get(f, arm->cond.handle);
	ret = -ENOENT;
	if (!arm->bo)
		goto err_free;
	ret = signal_word(arm->bo, arm->cond.offset, &word);
	if (ret)
		goto err_put;
	arm->word = word;
	ret = check_eventfd(a->fd);
	if (ret)
		goto err_put;
	arm->efd = fcntl(a->fd, F_DUPFD_CLOEXEC, 0);
	if (arm->efd < 0) {
		ret = -errno;
		goto err_put;
	}
	arm->w.kind = SIM_W_ARM;
	arm->w.host = true;
	arm->w.owner = arm;

	pthread_mutex_lock(&arms->lock);
	arms_reap(arms, 0, &dead);
	if (arms->count >= SIM_ARMS_MAX) {
		pthread_mutex_unlock(&arms->lock);
		ret = -ENOSPC;
		goto err_efd;
	}
	/* on the bucket before the first read: see the top */
	ret = sim_waiter_arm(&arm->w, word);
	if (ret) {
		pthread_mutex_unlock(&arms->lock);
		goto err_efd;
	}
	arm->id = ++arms->next_id;
	list_add_tail(&arms->list, &arm->node);
	arms->count++;
	atomic_thread_fence(memory_order_seq_cst);
	/* still under the lock: a CANCEL of this id cannot free it meanwhile */
	if (cond_done(&arm->cond, word) || atomic_load(&f->dev->removed) ||
	    (!(arm->flags & DRM_VACCEL_EVENTFD_IGNORE_FAULTS) && sim_file_faulted(f)))
		sim_arm_fire(arm);
	a->id = arm->id;
	pthread_mutex_unlock(&arms->lock);
	arms_free(&dead);
	return 0;

err_efd:
	close(arm->efd);
err_put:
	sim_bo_put(arm->bo);
err_free:
	free(arm);
	arms_free(&dead);
	return ret;
}

/* Fire the arms of one file: all of them, or those that want faults. */
static void file_event(struct sim_file *file, bool fault)
{
	struct list *l;

	pthread_mutex_lock(&file->arms.lock);
	for (l = file->arms.list.next; l != &file->arms.list; l = l->next) {
		struct sim_arm *arm = container_of(l, struct sim_arm, node);

		if (!fault || !(arm->flags & DRM_VACCEL_EVENTFD_IGNORE_FAULTS))
			sim_arm_fire(arm);
	}
	pthread_mutex_unlock(&file->arms.lock);
}

void sim_signal_device_event(struct sim_dev *dev, struct sim_file *file, bool fault)
{
	struct list *l;

	pthread_mutex_lock(&dev->event_lock);
	for (l = dev->event_waiters.next; l != &dev->event_waiters; l = l->next)
		sim_host_wake(container_of(l, struct sim_hwait, dev_node));
	pthread_mutex_unlock(&dev->event_lock);
	if (file) {
		file_event(file, fault);
		return;
	}
	pthread_mutex_lock(&dev->lock);
	for (l = dev->files.next; l != &dev->files; l = l->next)
		file_event(container_of(l, struct sim_file, node), false);
	pthread_mutex_unlock(&dev->lock);
}
