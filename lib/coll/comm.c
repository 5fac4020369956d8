// SPDX-License-Identifier: MIT
/*
 * Communicators: settings, accel_comm_init_all(), accel_comm_destroy() and
 * the small queries.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll.h"

uint64_t acc_comm_test_base;

/* The lock is ours: name this process's rank as its holder (multi-process). */
static void lock_taken(struct acc_group *g, int ret)
{
	if (ret == EOWNERDEAD) {
		int dead = __atomic_load_n(&g->lock_owner, __ATOMIC_RELAXED);

		/*
		 * the holder died with it: its changes may be half done, so
		 * the group fails with its death (-ECONNRESET), as its
		 * monitor would find
		 */
		pthread_mutex_consistent(&g->lock);
		if (dead >= 0 && (unsigned int)dead < g->nranks && acc_group_fail_claim(g)) {
			g->fail_rank = dead;
			acc_group_fail_publish(g, ACC_FAIL_DEAD);
			acc_comm_poison(g, 4);
		}
		acc_err("comm %p: rank %d (pid %d) died holding the communicator's lock",
			(void *)g, dead, dead >= 0 && dead < ACCEL_COMM_MAX_RANKS ?
			(int)g->pids[dead] : -1);
	}
	if (g->mp)
		__atomic_store_n(&g->lock_owner, (int32_t)g->mp->rank, __ATOMIC_RELAXED);
}

#if defined(__SANITIZE_THREAD__)
#define COMM_TSAN	1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define COMM_TSAN	1
#endif
#endif
#ifdef COMM_TSAN
#include <sanitizer/tsan_interface.h>
/*
 * ThreadSanitizer's pthread_mutex_timedlock() counts only 0 as the lock
 * taken (its lock and trylock count EOWNERDEAD too): say it is ours.
 */
static void tsan_owner_dead(pthread_mutex_t *m)
{
	__tsan_mutex_pre_lock(m, __tsan_mutex_try_lock);
	__tsan_mutex_post_lock(m, __tsan_mutex_try_lock, 0);
}
#else
static void tsan_owner_dead(pthread_mutex_t *m)
{
	(void)m;
}
#endif

/*
 * One slice of a multi-process group's wait for its lock: at most @ns,
 * on CLOCK_REALTIME as pthread_mutex_timedlock() wants (a slice is short,
 * so a jump of the wall clock moves one slice, never the whole wait).
 * 0 or EOWNERDEAD with the lock held, ETIMEDOUT, or another error.
 */
static int lock_slice(struct acc_group *g, int64_t ns)
{
	struct timespec ts;
	int ret;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += ns;
	while (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	ret = pthread_mutex_timedlock(&g->lock, &ts);
	if (ret == EOWNERDEAD)
		tsan_owner_dead(&g->lock);
	return ret;
}

#define LOCK_SLICE_NS	10000000	/* 10 ms */

int acc_group_lock_until(struct acc_group *g, int64_t deadline, const atomic_bool *stop)
{
	int ret;

	if (!g->mp) {
		acc_group_lock(g);
		return 0;
	}
	for (;;) {
		int64_t left = deadline - acc_now_ns();

		if (stop && atomic_load(stop))
			return -ECANCELED;
		if (left <= 0)
			ret = pthread_mutex_trylock(&g->lock);
		else
			ret = lock_slice(g, left < LOCK_SLICE_NS ? left : LOCK_SLICE_NS);
		if (!ret || ret == EOWNERDEAD) {
			lock_taken(g, ret);
			return 0;
		}
		if (ret != ETIMEDOUT && ret != EBUSY && ret != EINTR) {
			acc_err("comm %p: the communicator's lock: %s", (void *)g, strerror(ret));
			return -ret;
		}
		if (left <= 0)
			return -ETIMEDOUT;
	}
}

const char *acc_group_lock_holder(struct acc_group *g, char *buf, size_t len)
{
	int who = __atomic_load_n(&g->lock_owner, __ATOMIC_RELAXED);

	snprintf(buf, len, "rank %d (pid %d)", who,
		 who >= 0 && who < ACCEL_COMM_MAX_RANKS ? (int)g->pids[who] : -1);
	return buf;
}

int acc_group_lock_call(struct acc_group *g, unsigned int rank, const char *what)
{
	int64_t t0, deadline;
	char who[48];
	int ret;

	if (!g->mp) {
		acc_group_lock(g);
		return 0;
	}
	ret = pthread_mutex_trylock(&g->lock);
	if (!ret || ret == EOWNERDEAD) {
		lock_taken(g, ret);
		return 0;
	}
	if (ret != EBUSY) {
		acc_err("%s: comm %p rank %u: the communicator's lock: %s", what, (void *)g, rank,
			strerror(ret));
		return -ret;
	}
	t0 = acc_now_ns();
	deadline = t0 + (int64_t)g->timeout_ns;
	for (;;) {
		int64_t left = deadline - acc_now_ns();

		/* failed meanwhile (an abort of this process without the lock): its error */
		ret = acc_comm_group_error(g, rank);
		if (ret)
			return ret;
		ret = lock_slice(g, left <= 0 ? 0 : left < LOCK_SLICE_NS ? left : LOCK_SLICE_NS);
		if (!ret || ret == EOWNERDEAD) {
			lock_taken(g, ret);
			return 0;
		}
		if (ret != ETIMEDOUT && ret != EINTR) {
			acc_err("%s: comm %p rank %u: the communicator's lock: %s", what, (void *)g,
				rank, strerror(ret));
			return -ret;
		}
		if (left <= 0)
			break;
	}
	acc_err("%s: comm %p rank %u: the communicator's lock has been held by %s for more than "
		"%llu ms (a process stopped inside the library?); nothing was issued", what,
		(void *)g, rank, acc_group_lock_holder(g, who, sizeof(who)),
		(unsigned long long)(g->timeout_ns / 1000000));
	return -ETIMEDOUT;
}

int acc_comm_check_error(struct accel_comm *c, const char *what)
{
	int ret = acc_group_lock_call(c->g, c->rank, what);

	if (ret)
		return ret;
	ret = acc_comm_group_error(c->g, c->rank);
	acc_group_unlock(c->g);
	return ret;
}

/*
 * Multi-process: the lock may be held by a process that a signal or a
 * debugger stopped inside the library. After the group's timeout, say
 * who holds it (once), then go on waiting: it resumes, or dies
 * (EOWNERDEAD ends the wait with the group failed).
 */
void acc_group_lock(struct acc_group *g)
{
	int64_t t0, told;
	int ret;

	ret = g->mp ? pthread_mutex_trylock(&g->lock) : pthread_mutex_lock(&g->lock);
	if (ret == EBUSY) {
		t0 = acc_now_ns();
		told = 0;
		do {
			ret = lock_slice(g, LOCK_SLICE_NS);
			if (ret == ETIMEDOUT && !told &&
			    (uint64_t)(acc_now_ns() - t0) >= g->timeout_ns) {
				char who[48];

				told = 1;
				acc_err("comm %p rank %u: the communicator's lock has been held by "
					"%s for more than %llu ms (a process stopped inside the "
					"library?); waiting on: it must resume or end", (void *)g,
					g->mp->rank, acc_group_lock_holder(g, who, sizeof(who)),
					(unsigned long long)(g->timeout_ns / 1000000));
			}
		} while (ret == ETIMEDOUT || ret == EINTR);
	}
	lock_taken(g, ret);
}

void acc_group_unlock(struct acc_group *g)
{
	struct acc_rec_doc *docs = g->rec_pending;

	g->rec_pending = NULL;
	pthread_mutex_unlock(&g->lock);
	/* flight recorder dumps rendered under the lock: file I/O after it */
	if (docs)
		acc_rec_write_docs(docs);
}

/* The settings: the caller's, then the environment's, then the defaults. */
int acc_comm_settings(struct acc_group *g, const struct accel_comm_params *params)
{
	struct accel_comm_params p;
	const char *env;
	unsigned int i;
	int ret;

	memset(&p, 0, sizeof(p));
	if (params) {
		ret = acc_copy_struct(&p, sizeof(p), params, params->size,
				      ACCEL_COMM_PARAMS_SIZE_1_2);
		if (ret) {
			acc_err("comm_init: accel_comm_params size %u: %s", params->size,
				ret == -E2BIG ? "unknown non-zero fields or above 4096" :
						"below the 1.2 size");
			return ret;
		}
	}
	for (i = 0; i < 2; i++)
		if (p.reserved[i])
			goto bad;
	if (p.reserved32 || p.flags || p.algo > ACCEL_COMM_ALGO_ONESHOT || p.slots == 1 ||
	    p.slots > 16 || p.chunk_bytes % 4096 || p.chunk_bytes > (64u << 20))
		goto bad;
	g->algo = p.algo;
	if (g->algo == ACCEL_COMM_ALGO_AUTO) {
		env = getenv("ACCEL_ALGO");
		if (env && !strcmp(env, "ring")) {
			g->algo = ACCEL_COMM_ALGO_RING;
		} else if (env && !strcmp(env, "oneshot")) {
			g->algo = ACCEL_COMM_ALGO_ONESHOT;
		} else if (env && *env && strcmp(env, "auto")) {
			acc_err("comm_init: ACCEL_ALGO=%s: not ring, oneshot or auto", env);
			return -EINVAL;
		}
	}
	g->timeout_ns = (uint64_t)(p.timeout_ms ? p.timeout_ms : ACC_COMM_DEF_TIMEOUT_MS) * 1000000;
	env = getenv("ACCEL_COMM_TIMEOUT_MS");
	if (!p.timeout_ms && env && *env) {
		char *end;
		unsigned long v = strtoul(env, &end, 10);

		if (*end || !v || v > 86400000ul) {
			acc_err("comm_init: ACCEL_COMM_TIMEOUT_MS=%s: not 1 to 86400000", env);
			return -EINVAL;
		}
		g->timeout_ns = (uint64_t)v * 1000000;
	}
	g->chunk = p.chunk_bytes ? p.chunk_bytes : ACC_COMM_DEF_CHUNK;
	g->slots = p.slots ? p.slots : ACC_COMM_DEF_SLOTS;
	g->oneshot_max = p.oneshot_max ? p.oneshot_max : ACC_COMM_DEF_ONESHOT;
	return acc_rec_settings(g, &p);
bad:
	acc_err("comm_init: accel_comm_params: algo %u, chunk_bytes %u, slots %u, flags %#x or "
		"reserved fields out of range", p.algo, p.chunk_bytes, p.slots, p.flags);
	return -EINVAL;
}

static void group_free(struct acc_group *g)
{
	acc_comm_ops_fini(g);
	pthread_mutex_destroy(&g->lock);
	acc_rec_group_fini(g);
	free(g->ranks);
	free(g);
}

static void comm_free(struct accel_comm *c)
{
	acc_comm_transport_fini(c);
	acc_rec_fini(c);
	free(c);
}

ACCEL_API int accel_comm_init_all(struct accel_comm **comms, unsigned int ndevs,
				  struct accel_device *const *devs,
				  const struct accel_comm_params *params)
{
	struct acc_group *g;
	unsigned int i, j;
	int ret;

	if (!comms || !devs || !ndevs || ndevs > ACCEL_COMM_MAX_RANKS) {
		acc_err("comm_init_all: %u devices (1 to %u, non-NULL arrays)", ndevs,
			ACCEL_COMM_MAX_RANKS);
		return -EINVAL;
	}
	for (i = 0; i < ndevs; i++) {
		if (!devs[i]) {
			acc_err("comm_init_all: device %u is NULL", i);
			return -EINVAL;
		}
		ret = acc_check_dev(devs[i], "comm_init_all");
		if (ret)
			return ret;
		for (j = 0; j < i; j++)
			if (devs[j] == devs[i]) {
				acc_err("comm_init_all: devices %u and %u are the same (%s)", j, i,
					devs[i]->path);
				return -EINVAL;
			}
	}
	g = calloc(1, sizeof(*g));
	if (g)
		g->ranks = calloc(ndevs, sizeof(*g->ranks));
	if (!g || !g->ranks) {
		acc_err("comm_init_all: %u ranks: no memory for the communicator", ndevs);
		free(g);
		return -ENOMEM;
	}
	pthread_mutex_init(&g->lock, NULL);
	g->nranks = ndevs;
	ret = acc_comm_settings(g, params);
	if (ret)
		goto fail;
	g->seq0 = acc_comm_test_base;
	for (i = 0; i < ndevs; i++)
		g->next_seq[i] = g->seq0;
	for (i = 0; i < ndevs; i++) {
		struct accel_comm *c = calloc(1, sizeof(*c));

		if (!c) {
			acc_err("comm_init_all: comm %p rank %u (%s): no memory for the rank",
				(void *)g, i, devs[i]->path);
			ret = -ENOMEM;
			goto fail;
		}
		c->g = g;
		c->rank = i;
		c->nranks = ndevs;
		c->dev = devs[i];
		g->ranks[i] = c;
		ret = acc_rec_init(c);
		if (ret) {
			acc_err("comm_init_all: comm %p rank %u (%s): no memory for the flight "
				"recorder (%u entries)", (void *)g, i, devs[i]->path, g->rec_ops);
			goto fail;
		}
	}
	ret = acc_comm_transport_init(g);
	if (ret)
		goto fail;
	g->live = ndevs;
	for (i = 0; i < ndevs; i++)
		comms[i] = g->ranks[i];
	acc_info("comm %p: %u ranks, algorithm %s, chunk %llu bytes x %u slots, one-shot up to "
		 "%llu bytes, timeout %llu ms", (void *)g, ndevs, acc_algo_name(g->algo),
		 (unsigned long long)g->chunk, g->slots, (unsigned long long)g->oneshot_max,
		 (unsigned long long)(g->timeout_ns / 1000000));
	return 0;
fail:
	for (i = 0; i < ndevs; i++)
		if (g->ranks[i])
			comm_free(g->ranks[i]);
	group_free(g);
	return ret;
}

void acc_mp_ranks_free(struct acc_group *g)
{
	unsigned int p;

	if (!g->ranks)
		return;
	for (p = 0; p < g->nranks; p++)
		if (g->ranks[p])
			comm_free(g->ranks[p]);
	free(g->ranks);
	g->ranks = NULL;
	acc_rec_group_fini(g);
}

/* FNV-1a of the id: the recorder's communicator id, the same in every process */
static uint64_t id_hash(const struct accel_comm_id *id)
{
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned int i;

	for (i = 0; i < sizeof(id->internal); i++)
		h = (h ^ id->internal[i]) * 0x100000001b3ull;
	return h;
}

ACCEL_API int accel_comm_init_rank(struct accel_comm **comm, unsigned int nranks,
				   const struct accel_comm_id *id, unsigned int rank,
				   struct accel_device *dev, const struct accel_comm_params *params)
{
	return acc_comm_init_rank_until(comm, nranks, id, rank, dev, params, 0);
}

int acc_comm_init_rank_until(struct accel_comm **comm, unsigned int nranks,
			     const struct accel_comm_id *id, unsigned int rank,
			     struct accel_device *dev, const struct accel_comm_params *params,
			     int64_t deadline)
{
	struct acc_group *set, *g;
	int ret;

	if (!comm || !id || !dev || !nranks || nranks > ACCEL_COMM_MAX_RANKS || rank >= nranks) {
		acc_err("comm_init_rank: rank %u of %u ranks (1 to %u), NULL comm, id or device",
			rank, nranks, ACCEL_COMM_MAX_RANKS);
		return -EINVAL;
	}
	ret = acc_check_dev(dev, "comm_init_rank");
	if (ret)
		return ret;
	set = calloc(1, sizeof(*set));
	if (!set)
		return -ENOMEM;
	ret = acc_comm_settings(set, params);
	set->seq0 = acc_comm_test_base;
	set->boot_deadline = deadline;
	if (!ret)
		ret = acc_mp_bootstrap(&g, set, id, nranks, rank, dev);
	if (ret) {
		acc_rec_group_fini(set);
		free(set);
		return ret;
	}
	/* the recorder is this process's: its settings move to the mapped group */
	g->rec_id = id_hash(id);
	g->rec_dir = set->rec_dir;	/* rec_ops: set by the bootstrap, which made the recorder */
	free(set);
	ret = acc_mp_monitor_start(g);
	if (ret) {
		/* the peers' init succeeded: fail the communicator for them too */
		acc_err("comm_init_rank: rank %u: no monitor thread: %s; the communicator is "
			"aborted on every rank", rank, strerror(-ret));
		accel_comm_abort(g->ranks[rank]);
		atomic_fetch_or(&g->left, 1ull << rank);
		acc_mp_monitor_stop(g);
		acc_mp_ranks_free(g);	/* as in mp_destroy(): no lock */
		free(g->mp);
		acc_mp_group_unmap(g);
		return ret;
	}
	*comm = g->ranks[rank];
	acc_info("comm %p: rank %u of %u (pid %d), algorithm %s, chunk %llu bytes x %u slots, "
		 "one-shot up to %llu bytes, timeout %llu ms", (void *)g, rank, nranks,
		 (int)getpid(), acc_algo_name(g->algo), (unsigned long long)g->chunk, g->slots,
		 (unsigned long long)g->oneshot_max, (unsigned long long)(g->timeout_ns / 1000000));
	return 0;
}

/* Multi-process: this process's rank goes, and with it the process's view of the group. */
static void mp_destroy(struct accel_comm *comm)
{
	struct acc_group *g = comm->g;

	if (g->mp->pid != getpid()) {
		/* a forked child: the rank and the monitor are the parent's; free the copies */
		g->mp->have_monitor = false;
		acc_mp_monitor_stop(g);
		acc_mp_ranks_free(g);
		free(g->mp);
		acc_mp_group_unmap(g);
		return;
	}
	atomic_fetch_or(&g->left, 1ull << comm->rank);	/* peers: a normal end */
	acc_mp_monitor_stop(g);
	/*
	 * Without the group's lock: ->ranks is this process's (its rank and
	 * the stand-ins of its peers), and with the monitor stopped no other
	 * thread of the library uses it (the program's may not: the rank is
	 * being destroyed). So a process stopped while it holds the lock
	 * cannot hold up this destroy, and the pending recorder dumps are
	 * written with no lock held.
	 */
	acc_mp_ranks_free(g);
	free(g->mp);
	acc_mp_group_unmap(g);
}

ACCEL_API void accel_comm_destroy(struct accel_comm *comm)
{
	/* graphs holding the rank keep it until the last goes */
	if (comm && !(atomic_fetch_or(&comm->refs, ACC_COMM_DESTROYED) & ~ACC_COMM_DESTROYED))
		acc_comm_destroy_now(comm);
}

void acc_comm_destroy_now(struct accel_comm *comm)
{
	struct acc_group *g;
	bool last;

	g = comm->g;
	if (g->mp) {
		mp_destroy(comm);
		return;
	}
	acc_group_lock(g);
	g->ranks[comm->rank] = NULL;
	last = --g->live == 0;
	/* freed under the lock: an abort on another rank skips it or finishes first */
	comm_free(comm);
	acc_group_unlock(g);
	if (last)
		group_free(g);
}

ACCEL_API int accel_comm_count(const struct accel_comm *comm)
{
	return comm ? (int)comm->nranks : -EINVAL;
}

ACCEL_API int accel_comm_rank(const struct accel_comm *comm)
{
	return comm ? (int)comm->rank : -EINVAL;
}

ACCEL_API struct accel_device *accel_comm_device(const struct accel_comm *comm)
{
	return comm ? comm->dev : NULL;
}

/*
 * Test hook (hidden; the tests link the library statically): rank @c's
 * process takes the group's lock and keeps it, as a process stopped
 * inside the library would.
 */
void acc_comm_test_hold_lock(struct accel_comm *c);
void acc_comm_test_hold_lock(struct accel_comm *c)
{
	acc_group_lock(c->g);
}
