// SPDX-License-Identifier: MIT
/*
 * The in-process device's synchronisation primitives: the clock, futexes,
 * signal blocking, the read side of the lock-free lookups, fork (a fresh
 * sim in a child).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sim_internal.h"

uint64_t sim_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int sim_futex_wait(_Atomic uint32_t *word, uint32_t val, uint64_t deadline)
{
	struct timespec ts, *tp = NULL;
	long r;

	/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC time */
	if (deadline && deadline < (uint64_t)INT64_MAX / 2) {
		ts.tv_sec = (time_t)(deadline / 1000000000ull);
		ts.tv_nsec = (long)(deadline % 1000000000ull);
		tp = &ts;
	}
	r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, val, tp,
		    NULL, FUTEX_BITSET_MATCH_ANY);
	if (!r)
		return 0;
	return errno == EWOULDBLOCK ? -EAGAIN : -errno;
}

void sim_futex_wake(_Atomic uint32_t *word, int n)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n, NULL, NULL, 0);
}

void sim_futex_wake_shared(const void *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static atomic_bool no_waitv;

int sim_futex_waitv(_Atomic uint32_t *priv, const uint32_t *const *shared, const uint32_t *vals,
		    unsigned int n, uint64_t deadline)
{
	struct futex_waitv w[FUTEX_WAITV_MAX];
	struct timespec ts;
	unsigned int i;
	uint64_t until;
	long r;

	if (!n || n >= FUTEX_WAITV_MAX || atomic_load_explicit(&no_waitv, memory_order_relaxed)) {
		until = sim_now() + SIM_SHARED_POLL_NS;
		return sim_futex_wait(priv, 0, n && (!deadline || deadline > until) ? until :
					       deadline);
	}
	memset(w, 0, (n + 1) * sizeof(w[0]));
	w[0].val = 0;
	w[0].uaddr = (uintptr_t)priv;
	w[0].flags = FUTEX_32 | FUTEX_PRIVATE_FLAG;
	for (i = 0; i < n; i++) {
		w[i + 1].val = vals[i];
		w[i + 1].uaddr = (uintptr_t)shared[i];
		w[i + 1].flags = FUTEX_32;
	}
	if (!deadline || deadline >= (uint64_t)INT64_MAX / 2)
		deadline = sim_now() + 3600ull * 1000000000ull;
	ts.tv_sec = (time_t)(deadline / 1000000000ull);
	ts.tv_nsec = (long)(deadline % 1000000000ull);
	r = syscall(SYS_futex_waitv, w, n + 1, 0, &ts, CLOCK_MONOTONIC);
	if (r >= 0)
		return 0;
	if (errno == ENOSYS) {
		atomic_store(&no_waitv, true);
		return sim_futex_waitv(priv, shared, vals, n, deadline);
	}
	return errno == EWOULDBLOCK ? -EAGAIN : errno == EFAULT ? -EAGAIN : -errno;
}

void sim_sigblock(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

void sim_sigrestore(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/*
 * The SRCU. A reader picks the current index, counts itself in that
 * index's counter (a sequentially consistent RMW) and then loads the
 * pointers it looks up (sequentially consistent loads). A writer stores
 * NULL over the pointer it unpublishes (sequentially consistent), flips
 * the index and waits until the old index's counter is zero: a reader it
 * did not wait for counted itself after the writer read the counter, so
 * after the writer's store in the total order, and loads NULL. Readers
 * that arrive after the flip count in the other counter and do not delay
 * the writer, so readers cannot starve it.
 */
static struct {
	atomic_ulong cnt[2];
	atomic_uint idx;
	pthread_mutex_t lock;	/* serialises writers */
} srcu = { .lock = PTHREAD_MUTEX_INITIALIZER };

unsigned int sim_srcu_read_lock(void)
{
	unsigned int i = atomic_load(&srcu.idx) & 1;

	atomic_fetch_add(&srcu.cnt[i], 1);
	return i;
}

void sim_srcu_read_unlock(unsigned int idx)
{
	/* release: the reader's uses of what it looked up come before */
	atomic_fetch_sub_explicit(&srcu.cnt[idx], 1, memory_order_release);
}

void sim_srcu_synchronize(void)
{
	unsigned int old, spins = 0;

	pthread_mutex_lock(&srcu.lock);
	old = atomic_load(&srcu.idx) & 1;
	atomic_store(&srcu.idx, old ^ 1);
	/* readers are short (at most a few turns of ms) and never sleep: spin, yield, nap */
	while (atomic_load(&srcu.cnt[old])) {
		if (++spins < 64)
			acc_cpu_relax();
		else if (spins < 256)
			sched_yield();
		else
			nanosleep(&(struct timespec){ 0, 20000 }, NULL);
	}
	pthread_mutex_unlock(&srcu.lock);
}

/* ---- fork ---- */

/* The SRCU in a child: no reader of the parent's exists here. */
static void sim_srcu_fork_child(void)
{
	atomic_store(&srcu.cnt[0], 0);
	atomic_store(&srcu.cnt[1], 0);
	atomic_store(&srcu.idx, 0);
	pthread_mutex_init(&srcu.lock, NULL);
}

/*
 * A child of a process that used the sim (fork()) starts a sim of its
 * own: it has none of the parent's engine threads, and any lock of the
 * sim may have been held by another thread of the parent. Right after the
 * fork, while the child has one thread, every global structure is reset:
 * locks initialised again, the tables emptied (the parent's devices,
 * files and objects stay in the child's memory, untouched, so that its
 * copies of the parent's fds fail with -ECHILD and its mappings stay
 * valid until it unmaps them). The child's bus mirrors the parent's
 * devices (ids and settings) at its first use (sim_bus.c).
 */
static void sim_fork_child(void)
{
	sim_srcu_fork_child();
	sim_signal_fork_child();
	sim_engines_fork_child();
	sim_split_fork_child();
	sim_bo_fork_child();
	sim_transport_fork_child();
	sim_bus_fork_child();
}

static void sim_fork_register(void)
{
	pthread_atfork(NULL, NULL, sim_fork_child);
}

void sim_fork_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, sim_fork_register);
}
