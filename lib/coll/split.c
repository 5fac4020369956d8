// SPDX-License-Identifier: MIT
/*
 * accel_comm_split(): NCCL's ncclCommSplit. Every rank of the parent
 * calls it with a color and a key; the ranks of one color form a new
 * communicator, ordered by (key, parent rank); ACCEL_COMM_SPLIT_NOCOLOR
 * gives NULL. The rank whose call completes the set makes every child
 * (accel_comm_init_all() over the parent's devices, with the parent's
 * settings) and hands each rank its own; the others wait for it, bounded
 * by the parent's timeout and its abort. Like every call, a split takes
 * the next number of the parent's sequence (acc_call_arrive_host()): a
 * rank that calls another operation at that number fails every rank with
 * -EPROTO; a rank that times out leaves the split and frees its number.
 * Inside a group (p2p.c) the calls
 * only arrive, and accel_group_end() collects them: so one thread can
 * split every rank of an accel_comm_init_all() communicator. A rank of a
 * multi-process communicator splits through the shared state instead
 * (xproc.c, acc_xsplit()).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll.h"

/* The split in progress and the last one's results (g->lock). */
struct acc_split {
	pthread_cond_t cv;
	uint64_t gen;			/* splits completed */
	uint64_t arrived;		/* ranks that called the current one */
	uint64_t seen;			/* ranks that called it, even if they left since */
	bool busy;			/* its last rank is making the children */
	int color[ACCEL_COMM_MAX_RANKS], key[ACCEL_COMM_MAX_RANKS];
	/* rank r's sequence number for this split, and its recorder's entry */
	uint64_t seq[ACCEL_COMM_MAX_RANKS], rec_n[ACCEL_COMM_MAX_RANKS];
	struct accel_comm *child[ACCEL_COMM_MAX_RANKS];	/* rank r's, until it takes it */
	int ret;			/* the last completed split's result */
	bool parent_failed;		/* ...: the parent failed as it was made */
};

void acc_split_fini(struct acc_group *g)
{
	if (!g->split)
		return;
	pthread_cond_destroy(&g->split->cv);
	free(g->split);
	g->split = NULL;
}

static uint64_t all_of(unsigned int n)
{
	return n == 64 ? ~0ull : (1ull << n) - 1;
}

/* Make the children of @s's colors (g->lock not held: it was busy). 0 or -errno. */
static int make_children(struct acc_group *g, struct acc_split *s)
{
	struct accel_comm_params p = {
		.size = sizeof(p), .algo = g->algo,
		.timeout_ms = (uint32_t)(g->timeout_ns / 1000000),
		.chunk_bytes = (uint32_t)g->chunk,
		.slots = g->slots, .oneshot_max = g->oneshot_max,
	};
	unsigned int n = g->nranks, i, j, m, order[ACCEL_COMM_MAX_RANKS];
	struct accel_device *devs[ACCEL_COMM_MAX_RANKS];
	struct accel_comm *kids[ACCEL_COMM_MAX_RANKS];
	bool done[ACCEL_COMM_MAX_RANKS] = { false };
	int ret = 0;

	memset(s->child, 0, sizeof(s->child));
	s->parent_failed = false;
	for (i = 0; i < n && !ret; i++) {
		if (done[i] || s->color[i] == ACCEL_COMM_SPLIT_NOCOLOR)
			continue;
		/* the ranks of i's color, by (key, parent rank): insertion sort */
		for (m = 0, j = i; j < n; j++) {
			unsigned int k;

			if (s->color[j] != s->color[i])
				continue;
			done[j] = true;
			for (k = m++; k > 0 && s->key[order[k - 1]] > s->key[j]; k--)
				order[k] = order[k - 1];
			order[k] = j;
		}
		for (j = 0; j < m; j++)
			devs[j] = g->ranks[order[j]]->dev;
		ret = accel_comm_init_all(kids, m, devs, &p);
		for (j = 0; !ret && j < m; j++)
			s->child[order[j]] = kids[j];
		if (!ret)
			acc_info("comm %p: split: color %d, %u ranks: comm %p", (void *)g,
				 s->color[i], m, (void *)kids[0]->g);
		else
			acc_err("comm_split: comm %p: the new communicator of color %d (%u ranks): "
				"%s", (void *)g, s->color[i], m, strerror(-ret));
	}
	if (!ret) {
		/*
		 * the parent failed or was aborted while they were made (its
		 * waiters ignore that while the children are being made): no
		 * rank gets one, as across processes
		 */
		acc_group_lock(g);
		ret = acc_comm_group_error(g, 0);
		s->parent_failed = ret != 0;
		acc_group_unlock(g);
		if (ret)
			acc_err("comm_split: comm %p: the parent failed while the new communicators "
				"were made (%s): they are destroyed", (void *)g, strerror(-ret));
	}
	if (ret)
		for (i = 0; i < n; i++) {
			accel_comm_destroy(s->child[i]);
			s->child[i] = NULL;
		}
	return ret;
}

/*
 * Rank @c arrives with @color and @key. The last rank makes the children.
 * Returns 0 and the generation to wait for, or -errno (nothing changed).
 */
static int split_arrive(struct accel_comm *c, int color, int key, uint64_t *gen)
{
	struct acc_call call = { .op = ACCEL_COMM_OP_SPLIT, .root = -1 };
	struct acc_group *g = c->g;
	struct acc_split *s;
	int ret;

	acc_group_lock(g);
	ret = acc_comm_group_error(g, c->rank);
	if (ret)
		goto unlock;
	if (!g->split) {
		pthread_condattr_t a;

		s = calloc(1, sizeof(*s));
		if (!s) {
			acc_err("comm_split: comm %p rank %u: its state: %s", (void *)g, c->rank,
				strerror(ENOMEM));
			ret = -ENOMEM;
			goto unlock;
		}
		pthread_condattr_init(&a);
		pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
		pthread_cond_init(&s->cv, &a);
		pthread_condattr_destroy(&a);
		g->split = s;
	}
	s = g->split;
	if (s->arrived & (1ull << c->rank) || s->busy) {
		acc_err("comm_split: comm %p: rank %u called it twice before every rank called it "
			"once", (void *)g, c->rank);
		ret = -EINVAL;
		goto unlock;
	}
	/* a number of the communicator's sequence, as every call takes */
	ret = acc_call_arrive_host(c, &call, &s->rec_n[c->rank]);
	if (ret)
		goto unlock;
	s->seq[c->rank] = call.seq;
	s->color[c->rank] = color;
	s->key[c->rank] = key;
	s->arrived |= 1ull << c->rank;
	s->seen |= 1ull << c->rank;
	*gen = s->gen;
	if (s->arrived != all_of(g->nranks))
		goto unlock;
	s->busy = true;
	acc_group_unlock(g);
	if (acc_comm_test_split_hook)
		acc_comm_test_split_hook(c->rank);
	ret = make_children(g, s);	/* the others wait: nothing else changes s */
	acc_group_lock(g);
	s->ret = ret;
	s->busy = false;
	s->arrived = 0;
	s->seen = 0;
	s->gen++;
	pthread_cond_broadcast(&s->cv);
	ret = 0;
unlock:
	acc_group_unlock(g);
	return ret;
}

/* The end of rank @c's wait in a split it arrives at now (CLOCK_MONOTONIC, ns). */
static uint64_t split_deadline(const struct accel_comm *c)
{
	return (uint64_t)acc_now_ns() + c->g->timeout_ns;
}

/* Wait until @deadline for split @gen to complete and take rank @c's result. */
static int split_take(struct accel_comm *c, uint64_t gen, uint64_t deadline,
		      struct accel_comm **newcomm)
{
	struct acc_group *g = c->g;
	struct acc_split *s;
	struct timespec now, until;
	int ret = 0;

	acc_group_lock(g);
	s = g->split;
	while (s->gen == gen) {
		uint64_t t;

		ret = acc_comm_group_error(g, c->rank);
		clock_gettime(CLOCK_MONOTONIC, &now);
		t = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
		if (!ret && t >= deadline)
			ret = -ETIMEDOUT;
		if (s->busy)
			ret = 0;	/* the children are being made: bounded, and this rank's */
		if (ret) {
			uint64_t miss = all_of(g->nranks) & ~s->seen;

			/* this rank leaves it, and its sequence number is free again */
			s->arrived &= ~(1ull << c->rank);
			if (!s->arrived)
				s->seen = 0;	/* all left: the next call starts afresh */
			acc_call_leave_host(c, s->seq[c->rank]);
			acc_rec_end(c, s->rec_n[c->rank], ret);
			acc_err("comm_split: comm %p rank %u: seq %llu: %s; ranks that had not "
				"called it: %#llx", (void *)g, c->rank,
				(unsigned long long)s->seq[c->rank], ret == -ETIMEDOUT ?
				"timed out" : "the communicator failed", (unsigned long long)miss);
			acc_group_unlock(g);
			return ret;
		}
		t += 10000000;	/* look at the abort flag every 10 ms */
		if (t > deadline)
			t = deadline;
		until.tv_sec = (time_t)(t / 1000000000ull);
		until.tv_nsec = (long)(t % 1000000000ull);
		pthread_cond_timedwait(&s->cv, &g->lock, &until);
	}
	ret = s->ret;
	if (ret && s->parent_failed) {
		int err = acc_comm_group_error(g, c->rank);	/* -ECANCELED if it aborted */

		if (err)
			ret = err;
	}
	if (ret)
		acc_err("comm_split: comm %p rank %u: seq %llu: the new communicators could not be "
			"made (this rank's color %d): %s; none is made", (void *)g, c->rank,
			(unsigned long long)s->seq[c->rank], s->color[c->rank], strerror(-ret));
	acc_rec_end(c, s->rec_n[c->rank], ret);
	*newcomm = s->child[c->rank];
	s->child[c->rank] = NULL;
	acc_group_unlock(g);
	return ret;
}

static int split_check(struct accel_comm *comm, int color, struct accel_comm **newcomm)
{
	if (!comm || !newcomm) {
		acc_err("comm_split: NULL communicator or result");
		return -EINVAL;
	}
	if (color < ACCEL_COMM_SPLIT_NOCOLOR) {
		acc_err("comm_split: rank %u: color %d (0 or more, or "
			"ACCEL_COMM_SPLIT_NOCOLOR)", comm->rank, color);
		return -EINVAL;
	}
	return 0;
}

/* --- in groups (p2p.c's accel_group_end() calls acc_split_group_end()) --- */

struct split_op {
	struct accel_comm *comm;
	int color, key;
	struct accel_comm **out;
	uint64_t gen, deadline;
	bool arrived;
};

static _Thread_local struct {
	struct split_op *ops;
	unsigned int n, cap;
} ts;

/* Whether the split @o arrived at has completed: its result waits to be taken. */
static bool split_completed(const struct split_op *o)
{
	struct acc_group *g = o->comm->g;
	bool done;

	acc_group_lock(g);
	done = g->split->gen != o->gen;
	acc_group_unlock(g);
	return done;
}

int acc_split_group_end(void)
{
	unsigned int i, j;
	int ret = 0, r;

	/* every call arrives first (the last of a set makes the children), then each takes */
	for (i = 0; i < ts.n && !ret; i++) {
		if (ts.ops[i].comm->g->mp) {	/* one rank per process: no set to wait for */
			ret = acc_xsplit(ts.ops[i].comm, ts.ops[i].color, ts.ops[i].key,
					 ts.ops[i].out);
			ts.ops[i].arrived = false;
			continue;
		}
		/*
		 * an earlier call on this parent whose split completed takes its
		 * child now: the parent's next split overwrites the children
		 * that were not taken
		 */
		for (j = 0; j < i && !ret; j++) {
			if (!ts.ops[j].arrived || ts.ops[j].comm->g != ts.ops[i].comm->g ||
			    !split_completed(&ts.ops[j]))
				continue;
			ret = split_take(ts.ops[j].comm, ts.ops[j].gen, ts.ops[j].deadline,
					 ts.ops[j].out);
			ts.ops[j].arrived = false;
		}
		if (ret)
			break;
		ret = split_arrive(ts.ops[i].comm, ts.ops[i].color, ts.ops[i].key, &ts.ops[i].gen);
		ts.ops[i].arrived = !ret;
		/* each call's wait from its arrival: the calls wait at once, not in turn */
		ts.ops[i].deadline = split_deadline(ts.ops[i].comm);
	}
	for (i = 0; i < ts.n; i++) {
		if (!ts.ops[i].arrived)
			continue;
		r = split_take(ts.ops[i].comm, ts.ops[i].gen, ts.ops[i].deadline, ts.ops[i].out);
		ret = ret ? ret : r;
	}
	free(ts.ops);
	ts.ops = NULL;
	ts.n = ts.cap = 0;
	return ret;
}

ACCEL_API int accel_comm_split(struct accel_comm *comm, int color, int key,
			       struct accel_comm **newcomm)
{
	uint64_t gen;
	int ret = split_check(comm, color, newcomm);

	if (ret)
		return ret;
	*newcomm = NULL;
	if (acc_group_depth()) {
		if (ts.n == ts.cap) {
			unsigned int cap = ts.cap ? 2 * ts.cap : 8;
			struct split_op *ops = cap > (1u << 16) ? NULL :
					       realloc(ts.ops, cap * sizeof(*ops));

			if (!ops) {
				acc_err("comm_split: comm %p rank %u: the group's split call %u: %s",
					(void *)comm->g, comm->rank, ts.n + 1,
					cap > (1u << 16) ? "a group holds at most 2^16 splits" :
							   strerror(ENOMEM));
				return -ENOMEM;
			}
			ts.ops = ops;
			ts.cap = cap;
		}
		ts.ops[ts.n++] = (struct split_op){ .comm = comm, .color = color, .key = key,
						    .out = newcomm };
		return 0;
	}
	if (comm->g->mp)	/* across processes: xproc.c */
		return acc_xsplit(comm, color, key, newcomm);
	ret = split_arrive(comm, color, key, &gen);
	return ret ? ret : split_take(comm, gen, split_deadline(comm), newcomm);
}
