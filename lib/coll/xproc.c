// SPDX-License-Identifier: MIT
/*
 * alltoallv, send/recv and split across processes: the shared extension
 * of a multi-process group and accel_comm_split() of a multi-process
 * rank.
 *
 * The extension lies in the group's memfd right after the shared part of
 * struct acc_group (bootstrap.c maps both); its size depends on the rank
 * count only, and it holds no pointers: each process points its own
 * group's local fields into its own mapping (acc_xp_attach()). Layout,
 * each part 64-byte aligned:
 *
 *   struct acc_p2p         the sends and receives not matched yet (p2p.c)
 *   struct acc_xsplit      the split's rendezvous (below)
 *   uint64_t vc[W][2n][n]  alltoallv's counts, one table per call-window
 *                          slot (W = %ACC_COMM_WINDOW, n ranks)
 *
 * Everything in it is read and written under the group's process-shared
 * lock, as the rest of the shared state is.
 *
 * Split: every rank of the parent (one per process) takes the parent's
 * next sequence number (acc_call_arrive_host(), as in one process) and
 * arrives with its color and key in the round's buffer; when all have
 * arrived, each rank reads every color and key, and the ranks of one
 * color, ordered by (key, parent rank), make a new multi-process
 * communicator: the first
 * of them (the child's rank 0) takes a new accel_comm_id and publishes
 * it in the buffer, and each calls accel_comm_init_rank() with it. The
 * child's staging and counters are therefore new and re-imported over
 * the child's own rendezvous (a new abstract socket, SCM_RIGHTS); it
 * shares nothing with the parent, so the two are destroyed in any order.
 * The whole split (meeting, the id, the child's init) is bounded by one
 * parent's timeout from the call, and every wait fails at once with the
 * parent's error (abort, a peer's death); while the child's bootstrap
 * runs, a watcher thread stops it (accel_comm_init_abort()) when the
 * parent fails, so a rank dying during the split gives -ECONNRESET, not
 * a wait for the timeout.
 * A leader that cannot make the child's id publishes its error instead:
 * the child's other ranks fail with it at once.
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

void (*acc_comm_test_split_hook)(unsigned int rank);

#define XP_ALIGN	64u
#define XP_PAGE		4096u

/* One split's rendezvous: the buffer of split number @k (a rank's count of splits). */
struct acc_xsplit_round {
	uint64_t k;
	uint64_t arrived;		/* ranks that called it and wait in it */
	uint64_t seen;			/* ranks that called it (even if they left since) */
	uint64_t idset;			/* ranks whose @id (or @iderr) is published */
	int32_t color[ACCEL_COMM_MAX_RANKS], key[ACCEL_COMM_MAX_RANKS];
	struct accel_comm_id id[ACCEL_COMM_MAX_RANKS];	/* by each child's rank 0 */
	int32_t iderr[ACCEL_COMM_MAX_RANKS];	/* or why it has none (-errno) */
};

/*
 * Rank r's split number k = @round[r] (the splits it completed) uses
 * @buf[k % 2]. A rank arrives at split k + 2 only after split k + 1
 * completed, that is after every rank arrived at k + 1 and so had left
 * split k: the first rank at k + 2 may reset the buffer of k.
 */
struct acc_xsplit {
	uint64_t round[ACCEL_COMM_MAX_RANKS];
	struct acc_xsplit_round buf[2];
};

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static size_t off_xsplit(void)
{
	return align_up(acc_p2p_state_bytes(), XP_ALIGN);
}

static size_t off_vc(void)
{
	return off_xsplit() + align_up(sizeof(struct acc_xsplit), XP_ALIGN);
}

size_t acc_xp_bytes(unsigned int nranks)
{
	size_t vc = (size_t)ACC_COMM_WINDOW * 2 * nranks * nranks * sizeof(uint64_t);

	return align_up(off_vc() + vc, XP_PAGE);
}

void acc_xp_attach(struct acc_group *g, void *base)
{
	g->p2p = base;
	g->xsplit = (struct acc_xsplit *)((char *)base + off_xsplit());
	g->xp_vc = (uint64_t *)((char *)base + off_vc());
}

const char *acc_ranks_pids(const struct acc_group *g, uint64_t mask, char *buf, size_t len)
{
	size_t at = 0;
	unsigned int r;

	buf[0] = 0;
	for (r = 0; r < g->nranks && r < ACCEL_COMM_MAX_RANKS && at + 1 < len; r++) {
		int n;

		if (!(mask & (1ull << r)))
			continue;
		if (g->mp)
			n = snprintf(buf + at, len - at, "%s%u (pid %d)", at ? "," : "", r,
				     (int)g->pids[r]);
		else
			n = snprintf(buf + at, len - at, "%s%u", at ? "," : "", r);
		if (n < 0)
			break;
		at += (size_t)n;
	}
	if (!at)
		snprintf(buf, len, "none");
	return buf;
}

static uint64_t all_of(unsigned int n)
{
	return n == 64 ? ~0ull : (1ull << n) - 1;
}

/* A wait on the shared state (g->lock held): 0 to go on, else its error or -ETIMEDOUT */
static int wait_status(struct acc_group *g, unsigned int rank, int64_t deadline)
{
	int ret = acc_comm_group_error(g, rank);

	return !ret && acc_now_ns() >= deadline ? -ETIMEDOUT : ret;
}

/* Sleep between two looks at the shared state: 1 ms for the first 20 ms, then 5 ms. */
static void nap(int64_t since)
{
	struct timespec ts = { 0, acc_now_ns() - since < 20000000 ? 1000000 : 5000000 };

	nanosleep(&ts, NULL);
}

/* --- the watcher: stops the child's bootstrap when the parent fails --- */

struct watch {
	struct acc_group *g;		/* the parent */
	struct accel_comm_id id;	/* the child's */
	pthread_mutex_t m;
	pthread_cond_t cv;
	bool stop;
};

static void *watch_main(void *arg)
{
	struct watch *w = arg;
	struct timespec until;

	pthread_mutex_lock(&w->m);
	while (!w->stop) {
		/* again every 10 ms: the init may not have registered the id yet */
		if (atomic_load(&w->g->fail) != ACC_FAIL_NONE)
			accel_comm_init_abort(&w->id);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += 10000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&w->cv, &w->m, &until);
	}
	pthread_mutex_unlock(&w->m);
	return NULL;
}

/*
 * The child's accel_comm_init_rank(), its bootstrap bounded by the
 * split's @deadline (so that the whole split takes at most the parent's
 * timeout, not one timeout per stage; the child keeps the parent's
 * timeout as its own), and stopped if the parent @g fails meanwhile.
 */
static int child_init(struct acc_group *g, struct accel_comm **out, unsigned int m,
		      const struct accel_comm_id *id, unsigned int rank, struct accel_device *dev,
		      int64_t deadline)
{
	struct accel_comm_params p = {
		.size = sizeof(p), .algo = g->algo,
		.timeout_ms = (uint32_t)(g->timeout_ns / 1000000),
		.chunk_bytes = (uint32_t)g->chunk,
		.slots = g->slots, .oneshot_max = g->oneshot_max,
	};
	pthread_condattr_t ca;
	struct watch w;
	pthread_t t;
	bool watching;
	int ret;

	memset(&w, 0, sizeof(w));
	w.g = g;
	w.id = *id;
	pthread_mutex_init(&w.m, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w.cv, &ca);
	pthread_condattr_destroy(&ca);
	/* without the thread the split still ends: at the timeout */
	watching = m > 1 && !pthread_create(&t, NULL, watch_main, &w);
	ret = acc_comm_init_rank_until(out, m, id, rank, dev, &p, deadline);
	if (watching) {
		pthread_mutex_lock(&w.m);
		w.stop = true;
		pthread_cond_signal(&w.cv);
		pthread_mutex_unlock(&w.m);
		pthread_join(t, NULL);
	}
	pthread_cond_destroy(&w.cv);
	pthread_mutex_destroy(&w.m);
	return ret;
}

/*
 * The parent's error, waiting up to 500 ms for it to show (a peer's death
 * closes its sockets, which the child's bootstrap may see a moment before
 * the parent's monitor sees the death): 0 if none came.
 */
static int parent_error(struct accel_comm *c)
{
	int64_t t0 = acc_now_ns();
	int ret;

	for (;;) {
		acc_group_lock(c->g);
		ret = acc_comm_group_error(c->g, c->rank);
		acc_group_unlock(c->g);
		if (ret || acc_now_ns() - t0 >= 500000000)
			return ret;
		nap(t0);
	}
}

/*
 * Arrive at the split (taking a sequence number, as every call does) and
 * wait until every rank did; its colors and keys, and the recorder's
 * entry in *@rec_n (acc_xsplit() ends it). 0 or -errno (this rank left
 * the split).
 */
static int xsplit_meet(struct accel_comm *c, int color, int key, uint64_t *k,
		       int32_t *colors, int32_t *keys, uint64_t *rec_n, int64_t deadline)
{
	struct acc_call call = { .op = ACCEL_COMM_OP_SPLIT, .root = -1 };
	struct acc_group *g = c->g;
	struct acc_xsplit *xs = g->xsplit;
	struct acc_xsplit_round *b;
	uint64_t all = all_of(g->nranks), bit = 1ull << c->rank;
	int64_t t0 = acc_now_ns();
	char who[ACCEL_COMM_MAX_RANKS * 24];
	int ret;

	ret = acc_group_lock_call(g, c->rank, "comm_split");
	if (ret)
		return ret;
	ret = acc_comm_group_error(g, c->rank);
	if (ret)
		goto unlock;
	*k = xs->round[c->rank];
	b = &xs->buf[*k % 2];
	if (b->k != *k) {	/* the first rank at split k: the buffer of k - 2 is free */
		memset(b, 0, sizeof(*b));
		b->k = *k;
	}
	if (b->arrived & bit) {
		acc_err("comm_split: comm %p rank %u: called it again before every rank called it "
			"once", (void *)g, c->rank);
		ret = -EINVAL;
		goto unlock;
	}
	ret = acc_call_arrive_host(c, &call, rec_n);
	if (ret)
		goto unlock;
	b->color[c->rank] = color;
	b->key[c->rank] = key;
	b->arrived |= bit;
	b->seen |= bit;
	for (;;) {
		if (b->arrived == all) {
			memcpy(colors, b->color, sizeof(b->color));
			memcpy(keys, b->key, sizeof(b->key));
			xs->round[c->rank] = *k + 1;
			ret = 0;
			break;
		}
		ret = wait_status(g, c->rank, deadline);
		if (ret) {
			uint64_t miss = all & ~b->seen;	/* not those that timed out first */

			/* this rank leaves it, freeing its sequence number; it may call again */
			b->arrived &= ~bit;
			acc_call_leave_host(c, call.seq);
			acc_err("comm_split: comm %p rank %u/%u (pid %d): split %llu (seq %llu) %s; "
				"ranks that had not called it: %s", (void *)g, c->rank, g->nranks,
				(int)getpid(), (unsigned long long)*k, (unsigned long long)call.seq,
				ret == -ETIMEDOUT ? "timed out" : "failed with the communicator",
				acc_ranks_pids(g, miss, who, sizeof(who)));
			break;
		}
		acc_group_unlock(g);
		nap(t0);
		acc_group_lock(g);
	}
unlock:
	acc_group_unlock(g);
	return ret;
}

/*
 * Wait until rank @leader published the child's id in split @k's buffer,
 * or that it could not make one (its error, at once: not a timeout).
 */
static int xsplit_id(struct accel_comm *c, uint64_t k, unsigned int leader,
		     struct accel_comm_id *id, int64_t deadline)
{
	struct acc_group *g = c->g;
	struct acc_xsplit_round *b = &g->xsplit->buf[k % 2];
	int64_t t0 = acc_now_ns();
	char who[32];
	int ret;

	acc_group_lock(g);
	for (;;) {
		if (b->idset & (1ull << leader)) {
			*id = b->id[leader];
			ret = b->iderr[leader];
			if (ret)
				acc_err("comm_split: comm %p rank %u: split %llu: rank %s, the new "
					"communicator's rank 0, could not make its id: %s", (void *)g,
					c->rank, (unsigned long long)k,
					acc_ranks_pids(g, 1ull << leader, who, sizeof(who)),
					strerror(-ret));
			break;
		}
		ret = wait_status(g, c->rank, deadline);
		if (ret) {
			acc_err("comm_split: comm %p rank %u: split %llu: no id from rank %s, the "
				"new communicator's rank 0: %s", (void *)g, c->rank,
				(unsigned long long)k,
				acc_ranks_pids(g, 1ull << leader, who, sizeof(who)), strerror(-ret));
			break;
		}
		acc_group_unlock(g);
		nap(t0);
		acc_group_lock(g);
	}
	acc_group_unlock(g);
	return ret;
}

static int xsplit(struct accel_comm *c, int color, int key, struct accel_comm **newcomm,
		  uint64_t *rec_n);

int acc_xsplit(struct accel_comm *c, int color, int key, struct accel_comm **newcomm)
{
	uint64_t rec_n = UINT64_MAX;	/* no entry until the split is arrived at */
	int ret = xsplit(c, color, key, newcomm, &rec_n);

	if (rec_n == UINT64_MAX)
		return ret;	/* never arrived (perhaps no lock): no entry */
	acc_group_lock(c->g);
	acc_rec_end(c, rec_n, ret);	/* the recorder's entry of the split: how it ended */
	acc_group_unlock(c->g);
	return ret;
}

static int xsplit(struct accel_comm *c, int color, int key, struct accel_comm **newcomm,
		  uint64_t *rec_n)
{
	struct acc_group *g = c->g;
	int32_t colors[ACCEL_COMM_MAX_RANKS], keys[ACCEL_COMM_MAX_RANKS];
	unsigned int n = g->nranks, order[ACCEL_COMM_MAX_RANKS], m = 0, me = 0, j, q;
	struct accel_comm_id id;
	struct accel_comm *child = NULL;
	/* one timeout for the whole split: meeting, the id, the child's init */
	int64_t deadline = acc_now_ns() + (int64_t)g->timeout_ns;
	uint64_t k;
	int ret, err;

	*newcomm = NULL;
	ret = xsplit_meet(c, color, key, &k, colors, keys, rec_n, deadline);
	if (ret || color == ACCEL_COMM_SPLIT_NOCOLOR)
		return ret;
	/* the ranks of this color by (key, parent rank): insertion sort */
	for (j = 0; j < n; j++) {
		if (colors[j] != color)
			continue;
		for (q = m++; q > 0 && keys[order[q - 1]] > keys[j]; q--)
			order[q] = order[q - 1];
		order[q] = j;
	}
	for (j = 0; j < m; j++)
		if (order[j] == c->rank)
			me = j;
	if (me == 0) {
		ret = accel_comm_get_unique_id(&id);
		/* the id, or the error: the others fail with it at once */
		acc_group_lock(g);
		if (ret)
			memset(&id, 0, sizeof(id));
		g->xsplit->buf[k % 2].id[c->rank] = id;
		g->xsplit->buf[k % 2].iderr[c->rank] = ret;
		g->xsplit->buf[k % 2].idset |= 1ull << c->rank;
		acc_group_unlock(g);
		if (ret)
			return ret;
	} else {
		ret = xsplit_id(c, k, order[0], &id, deadline);
		if (ret)
			return ret;
	}
	if (acc_comm_test_split_hook)
		acc_comm_test_split_hook(c->rank);
	ret = child_init(g, &child, m, &id, me, c->dev, deadline);
	err = ret ? parent_error(c) : 0;
	if (!ret) {
		acc_group_lock(g);
		err = acc_comm_group_error(g, c->rank);
		acc_group_unlock(g);
		if (err) {
			/* the parent failed during the split: it fails, as on the others */
			accel_comm_destroy(child);
			child = NULL;
		}
	}
	if (err) {
		acc_err("comm_split: comm %p rank %u: the communicator failed during the split "
			"(color %d): %s", (void *)g, c->rank, color, strerror(-err));
		return err;
	}
	if (ret)
		return ret;
	acc_info("comm %p: split %llu: rank %u, color %d, key %d: rank %u of %u of comm %p",
		 (void *)g, (unsigned long long)k, c->rank, color, key, me, m, (void *)child->g);
	*newcomm = child;
	return 0;
}
