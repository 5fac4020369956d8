// SPDX-License-Identifier: MIT
/*
 * Sends and receives between ranks, and the thread-local groups that
 * issue them (accel_group_start()/accel_group_end(), NCCL's shape).
 *
 * A send or receive takes no sequence number of the communicator (the
 * ranks not involved do not call): the k-th send from rank i to rank j
 * matches the k-th receive of j from i, and both must follow the same
 * collective (the collective sequence number each rank is at, its
 * "position"), so that the channel's chunk counts agree on both ends.
 * A difference (dtype, count, position) fails the communicator with
 * -EPROTO; so does a send or receive still unmatched when the gate of a
 * later collective opens (ops.c calls acc_p2p_gate_check()).
 *
 * At the end of the outermost group each rank's part is issued as chunk
 * rounds: round t sends chunk t of every outgoing channel's stream, then
 * receives chunk t of every incoming one, and at the end waits until the
 * peers consumed what it sent (Documentation/collectives.rst, "Send and
 * receive": why no pairing inside a group can deadlock).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"

#define ACC_P2P_PENDING		1024		/* unmatched posts per communicator */
#define ACC_GROUP_MAX_DEPTH	(1u << 20)

unsigned int acc_p2p_test_pending;

/* The most unmatched posts a communicator keeps (a test may lower it). */
static unsigned int pending_max(void)
{
	unsigned int t = acc_p2p_test_pending;

	return t && t < ACC_P2P_PENDING ? t : ACC_P2P_PENDING;
}

/* A send or receive posted by one rank, not yet matched by its peer. */
struct acc_p2p_post {
	unsigned int src, dst;
	bool by_send;		/* posted by @src (a send), or by @dst (a receive) */
	struct acc_call call;	/* op, dtype, count, root = the peer, seq = the position */
};

struct acc_p2p {
	unsigned int n;
	struct acc_p2p_post post[ACC_P2P_PENDING];
};

/* One call recorded in this thread's group. */
struct p2p_op {
	struct accel_comm *c;
	bool send;
	uint64_t buf, count;
	enum accel_dtype dtype;
	unsigned int esize;
	unsigned int peer;
	struct accel_queue *q;
	struct accel_event *ev;
};

/* This thread's group: depth and the calls recorded. */
static _Thread_local struct p2p_group {
	unsigned int depth;
	struct p2p_op *ops;
	unsigned int n, cap;
} tl;

/*
 * Multi-process communicators keep their struct acc_p2p in the shared
 * extension of the group (xproc.c): it holds no pointers, and g->lock is
 * process-shared, so the matching below is the same in both cases.
 */
size_t acc_p2p_state_bytes(void)
{
	return sizeof(struct acc_p2p);
}

unsigned int acc_group_depth(void)
{
	return tl.depth;
}

void acc_comm_ops_fini(struct acc_group *g)
{
	unsigned int i;

	acc_split_fini(g);
	free(g->p2p);
	g->p2p = NULL;
	for (i = 0; i < ACC_COMM_WINDOW; i++) {
		free(g->win[i].vc);
		g->win[i].vc = NULL;
	}
}

static void describe(const struct acc_call *call, unsigned int rank, char *buf, size_t len)
{
	snprintf(buf, len, "rank %u's %s %s rank %d (dtype %u, count %llu, before collective "
		 "seq %llu)", rank, call->op == ACCEL_COMM_OP_SEND ? "send" : "receive",
		 call->op == ACCEL_COMM_OP_SEND ? "to" : "from", call->root, call->dtype,
		 (unsigned long long)call->count, (unsigned long long)call->seq);
}

static void post_describe(const struct acc_p2p_post *pp, char *buf, size_t len)
{
	describe(&pp->call, pp->by_send ? pp->src : pp->dst, buf, len);
}

int acc_p2p_gate_check(struct acc_group *g, uint64_t seq)
{
	struct acc_p2p *s = g->p2p;
	unsigned int i;

	for (i = 0; i < s->n; i++) {
		const struct acc_p2p_post *pp = &s->post[i];
		unsigned int poster = pp->by_send ? pp->src : pp->dst;
		unsigned int other = pp->by_send ? pp->dst : pp->src;
		char x[200];

		if ((int64_t)(pp->call.seq - seq) > 0)
			continue;
		post_describe(pp, x, sizeof(x));
		acc_err("comm %p: %s has no matching %s: rank %u called collective seq %llu "
			"before it; the communicator fails on every rank (-EPROTO)", (void *)g, x,
			pp->by_send ? "receive" : "send", other, (unsigned long long)seq);
		acc_comm_fail_proto(g, &pp->call, (int)poster, &pp->call, (int)other,
				    "send/receive before the collective");
		return -EPROTO;
	}
	return 0;
}

/* The field in which a send and its receive differ, or NULL. */
static const char *p2p_differs(const struct acc_call *x, const struct acc_call *y)
{
	if (x->dtype != y->dtype)
		return "dtype";
	if (x->count != y->count)
		return "count";
	if (x->seq != y->seq)
		return "collective sequence number before it";
	return NULL;
}

/*
 * The table's change for one call of direction @send on stream (@src,
 * @dst): a post of the other direction waiting there (a stream's posts
 * all go one way) is the call's match, taken out of the table into
 * *@match (true); else the call is posted (false: the caller appends).
 * The one place that matches, for the calls (p2p_match()) and for a
 * launch's check (acc_p2p_sim_post()).
 */
static bool table_take(struct acc_p2p *s, unsigned int src, unsigned int dst, bool send,
		       struct acc_p2p_post *match)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (s->post[i].src == src && s->post[i].dst == dst)
			break;
	if (i == s->n || s->post[i].by_send == send)
		return false;
	*match = s->post[i];
	memmove(&s->post[i], &s->post[i + 1], (s->n - i - 1) * sizeof(s->post[0]));
	s->n--;
	return true;
}

/* Match (or post) one call of rank @r at position @pos (g->lock). 0 or -EPROTO. */
static int p2p_match(struct acc_group *g, const struct p2p_op *o, uint64_t pos)
{
	struct acc_p2p *s = g->p2p;
	unsigned int r = o->c->rank, src = o->send ? r : o->peer, dst = o->send ? o->peer : r;
	struct acc_call call = {
		.seq = pos, .op = o->send ? ACCEL_COMM_OP_SEND : ACCEL_COMM_OP_RECV,
		.dtype = o->dtype, .count = o->count, .root = (int32_t)o->peer,
	};
	struct acc_p2p_post pp;
	char x[200], y[200];
	const char *field;

	if (table_take(s, src, dst, o->send, &pp)) {
		field = p2p_differs(&pp.call, &call);
		if (!field)
			return 0;
		post_describe(&pp, x, sizeof(x));
		describe(&call, r, y, sizeof(y));
		acc_err("comm %p: %s and %s differ in the %s; the communicator fails on every "
			"rank (-EPROTO)", (void *)g, x, y, field);
		acc_comm_fail_proto(g, &pp.call, (int)o->peer, &call, (int)r, field);
		return -EPROTO;
	}
	if ((int64_t)(g->next_seq[o->peer] - pos) > 0) {
		/* the peer is past this position: it can never post the match */
		describe(&call, r, x, sizeof(x));
		acc_err("comm %p: %s has no matching %s: rank %u called collective seq %llu "
			"before it; the communicator fails on every rank (-EPROTO)", (void *)g, x,
			o->send ? "receive" : "send", o->peer, (unsigned long long)pos);
		acc_comm_fail_proto(g, &call, (int)r, &call, (int)o->peer,
				    "send/receive before the collective");
		return -EPROTO;
	}
	s->post[s->n++] = (struct acc_p2p_post){
		.src = src, .dst = dst, .by_send = o->send, .call = call,
	};
	return 0;
}

/*
 * Call @i of a rank's calls in *@peer, *@send: false if it is another
 * rank's (rank_posts() skips the calls to itself).
 */
typedef bool (*rank_call_fn)(const void *ctx, unsigned int i, unsigned int *peer, bool *send);

/*
 * How many of rank @rank's @n calls (in issue order, read through @call)
 * would wait for their match in table @s, that is, be posted: on each of
 * its streams the first calls match the posts of the other direction
 * waiting there (a stream's posts all go one way, and so do one rank's
 * calls on a stream), the rest are posted. O(table + calls): one pass
 * over each, counting per stream. The one count for a group's calls
 * (batch_posts()) and for a launch's check (acc_p2p_sim_fits()).
 */
static unsigned int rank_posts(const struct acc_p2p *s, unsigned int rank, unsigned int n,
			       rank_call_fn call, const void *ctx)
{
	/* posts waiting for rank's sends to p (receives by p), for its receives from p */
	unsigned int for_send[ACCEL_COMM_MAX_RANKS] = { 0 }, for_recv[ACCEL_COMM_MAX_RANKS] = { 0 };
	unsigned int posts = 0, i, peer, *opp;
	bool send;

	/* bounded: a multi-process table is shared memory every rank's process writes */
	for (i = 0; i < s->n && i < ACC_P2P_PENDING; i++) {
		const struct acc_p2p_post *pp = &s->post[i];

		if (pp->src == rank && !pp->by_send && pp->dst < ACCEL_COMM_MAX_RANKS)
			for_send[pp->dst]++;
		else if (pp->dst == rank && pp->by_send && pp->src < ACCEL_COMM_MAX_RANKS)
			for_recv[pp->src]++;
	}
	for (i = 0; i < n; i++) {
		if (!call(ctx, i, &peer, &send) || peer == rank)
			continue;
		opp = send ? &for_send[peer] : &for_recv[peer];
		if (*opp)
			(*opp)--;
		else
			posts++;
	}
	return posts;
}

static bool group_call(const void *ctx, unsigned int i, unsigned int *peer, bool *send)
{
	if (tl.ops[i].c != ctx)
		return false;
	*peer = tl.ops[i].peer;
	*send = tl.ops[i].send;
	return true;
}

/* How many of rank @c's calls in this thread's group would be posted (not match one in @s). */
static unsigned int batch_posts(const struct acc_p2p *s, const struct accel_comm *c)
{
	return rank_posts(s, c->rank, tl.n, group_call, c);
}

/* A position in the stream of a rank's sends to (or receives from) one peer. */
struct cursor {
	unsigned int op;	/* index in tl.ops */
	uint64_t j;		/* chunk of that op */
};

/*
 * The next chunk of @c's stream of sends (@send) to, or receives from,
 * @p: every call is max(1, bytes / chunk rounded up) chunks, so a call of
 * 0 elements is one empty chunk (still matched, still waited for).
 */
static bool next_chunk(const struct accel_comm *c, bool send, unsigned int p, struct cursor *cu,
		       uint64_t *addr, uint64_t *bytes)
{
	uint64_t chunk = c->g->chunk;

	for (; cu->op < tl.n; cu->op++, cu->j = 0) {
		const struct p2p_op *o = &tl.ops[cu->op];
		uint64_t len = o->count * o->esize, nch = len ? (len + chunk - 1) / chunk : 1;

		if (o->c != c || o->send != send || o->peer != p || cu->j >= nch)
			continue;
		*addr = o->buf + cu->j * chunk;
		*bytes = len - cu->j * chunk < chunk ? len - cu->j * chunk : chunk;
		cu->j++;
		return true;
	}
	return false;
}

/* The packets of @c's part of the group (without the checks around them). 0 or -errno. */
static int batch_plan(struct acc_plan *pl, struct accel_comm *c)
{
	unsigned int n = c->nranks, r = c->rank, i, p;
	struct cursor out[ACCEL_COMM_MAX_RANKS] = { 0 }, in[ACCEL_COMM_MAX_RANKS] = { 0 };
	struct cursor so = { 0 }, si = { 0 };
	uint64_t sa, sb, ra, rb;
	bool more = true;

	/* to itself: the k-th send to itself is the k-th receive from itself */
	for (;;) {
		bool hs = next_chunk(c, true, r, &so, &sa, &sb);
		bool hr = next_chunk(c, false, r, &si, &ra, &rb);

		if (!hs && !hr)
			break;
		if (hs != hr || sb != rb || tl.ops[so.op].dtype != tl.ops[si.op].dtype ||
		    tl.ops[so.op].count != tl.ops[si.op].count) {
			acc_err("group: rank %u: its sends to itself and its receives from "
				"itself in this group differ in number, dtype or count (each send "
				"to itself needs its receive in the same group)", r);
			return -EINVAL;
		}
		acc_plan_copy(pl, ra, sa, sb);
	}
	while (more) {
		more = false;
		for (i = 1; i < n; i++) {
			p = (r + i) % n;
			if (next_chunk(c, true, p, &out[p], &sa, &sb)) {
				acc_plan_send(pl, p, sa, sb);
				more = true;
			}
		}
		for (i = 1; i < n; i++) {
			uint64_t slot;

			p = (r + n - i) % n;
			if (!next_chunk(c, false, p, &in[p], &ra, &rb))
				continue;
			slot = acc_plan_recv_wait(pl, p);
			acc_plan_check(pl);	/* nothing is copied out after a failure */
			acc_plan_copy(pl, ra, slot, rb);
			acc_plan_recv_done(pl, p);
			more = true;
		}
	}
	/* a send is done when its peer consumed it: a receive that never comes times out */
	for (p = 0; p < n; p++)
		if (p != r && pl->sent[p] != c->sent[p])
			accel_prep_wait(acc_plan_add(pl), c->credit[p].va, DRM_VACCEL_WAIT_GE,
					c->credit[p].base + pl->sent[p], 0, pl->timeout_ns);
	return pl->err;
}

/* One rank's part of the group. */
struct batch {
	struct accel_comm *c;
	struct accel_queue *q;
	struct acc_plan pl;
	bool xq, planned;
	unsigned int need, nposts;
	uint64_t gen;		/* the rank's commits when planned */
};

/* 0, or the queue's error (-EIO: it faulted since the check; logged, the events cleared) */
static int batch_commit(struct batch *b, uint64_t pos, struct acc_coll_hook *hook)
{
	struct accel_comm *c = b->c;
	struct acc_group *g = c->g;
	struct accel_queue *q = b->q;
	struct accel_event ev;
	const struct p2p_op *first = NULL;
	uint64_t ring_first = q->pi;
	unsigned int i;
	int ret;

	if (hook) {	/* a task graph's WAITs (lib/graph/coll_task.c) */
		hook->pre(hook, q);
		hook->committed = true;
	}
	if (b->xq)
		accel_prep_wait(accel_queue_get_packet(q), accel_signal_va(c->last_ev.signal),
				DRM_VACCEL_WAIT_GE, c->last_ev.value, 0, g->timeout_ns);
	accel_prep_wait(accel_queue_get_packet(q), c->abort.va, DRM_VACCEL_WAIT_EQ, c->abort.base,
			0, 1);
	for (i = 0; i < b->pl.n; i++)
		*accel_queue_get_packet(q) = b->pl.pkts[i];
	accel_prep_wait(accel_queue_get_packet(q), c->abort.va, DRM_VACCEL_WAIT_EQ, c->abort.base,
			0, 1);
	if (hook)	/* the task's completion */
		hook->post(hook, q);
	ret = accel_queue_record(q, &ev);
	if (!ret) {
		ret = accel_queue_submit(q);
		ret = ret < 0 ? ret : 0;
	}
	if (ret) {
		memset(&ev, 0, sizeof(ev));
		acc_err("group: rank %u: its queue stopped as its sends and receives were issued "
			"(%s): their peers wait for them until their timeout", c->rank,
			strerror(-ret));
	}
	memcpy(c->sent, b->pl.sent, c->nranks * sizeof(uint64_t));
	memcpy(c->recvd, b->pl.recvd, c->nranks * sizeof(uint64_t));
	for (i = 0; i < tl.n; i++)
		if (tl.ops[i].c == c) {
			if (!first)
				first = &tl.ops[i];
			*tl.ops[i].ev = ev;
		}
	acc_group_lock(g);
	c->hist[c->nhist % ACC_COMM_HISTORY] = (struct acc_hist){
		.call = {
			.seq = pos, .op = first->send ? ACCEL_COMM_OP_SEND : ACCEL_COMM_OP_RECV,
			.dtype = first->dtype, .count = first->count, .root = (int32_t)first->peer,
			.algo = ACCEL_COMM_ALGO_ONESHOT,
		},
		.q = q, .qid = q->id, .ring_first = ring_first, .ring_end = q->pi,
	};
	c->nhist++;
	acc_group_unlock(g);
	if (!ret) {
		c->last_q = q;
		c->last_qid = q->id;
		c->last_ev = ev;
		c->have_last = true;
	}
	acc_trace("comm %p rank %u: group of sends and receives before collective seq %llu: %u "
		  "packets", (void *)g, c->rank, (unsigned long long)pos, b->pl.n);
	return ret;
}

/* Order of group_overlaps(): by rank, then address. */
static int op_order(const void *pa, const void *pb)
{
	const struct p2p_op *x = &tl.ops[*(const unsigned int *)pa];
	const struct p2p_op *y = &tl.ops[*(const unsigned int *)pb];

	if (x->c != y->c)
		return (uintptr_t)x->c < (uintptr_t)y->c ? -1 : 1;
	if (x->buf != y->buf)
		return x->buf < y->buf ? -1 : 1;
	return 0;
}

/*
 * A receive shares no byte with any other operation of its rank in the
 * group (sends may overlap each other). The exception is NCCL's in-place
 * sendrecv: a rank's part of exactly one send and one receive of the very
 * same bytes and dtype; each is then alone in its peer's stream, so round t
 * sends chunk t before it receives chunk t over it. p2p_prepare() applies
 * the same rule to a task. O(n log n): sorted by (rank, address), a
 * receive is checked against the furthest end of everything before it, a
 * send against the furthest end of the receives before it. -EINVAL naming
 * both operations, or 0; nothing changes.
 */
static int group_overlaps(void)
{
	unsigned int *ix, i, k, first = 0;
	int ret = 0;

	/* a call outside a group (one operation) overlaps nothing: no allocation */
	if (tl.n < 2)
		return 0;
	ix = malloc(tl.n * sizeof(*ix));
	if (!ix) {
		acc_err("group: the overlap check of its %u calls: %s", tl.n, strerror(ENOMEM));
		return -ENOMEM;
	}
	for (i = 0; i < tl.n; i++)
		ix[i] = i;
	qsort(ix, tl.n, sizeof(*ix), op_order);
	for (k = 0; k < tl.n && !ret; k = first) {
		const struct accel_comm *c = tl.ops[ix[k]].c;
		uint64_t end_all = 0, end_recv = 0;
		unsigned int all = 0, recv = 0, nops;

		for (first = k; first < tl.n && tl.ops[ix[first]].c == c; first++)
			;
		nops = first - k;
		for (i = k; i < first; i++) {
			const struct p2p_op *y = &tl.ops[ix[i]], *x;
			uint64_t len = y->count * y->esize;

			if (!len)
				continue;
			x = NULL;
			if (!y->send && end_all > y->buf)
				x = &tl.ops[all];
			else if (y->send && end_recv > y->buf)
				x = &tl.ops[recv];
			if (x && nops == 2 && x->send != y->send && x->buf == y->buf &&
			    x->count * x->esize == len && x->dtype == y->dtype)
				x = NULL;	/* in place */
			if (x) {
				acc_err("group: rank %u: its %s of %llu bytes at 0x%llx (from/to %u) overlaps its %s of %llu bytes at 0x%llx (from/to %u); a receive overlaps no other operation of its rank (in place, one send and one receive of the same bytes, is the exception)",
					c->rank, y->send ? "send" : "receive",
					(unsigned long long)len, (unsigned long long)y->buf, y->peer,
					x->send ? "send" : "receive",
					(unsigned long long)(x->count * x->esize),
					(unsigned long long)x->buf, x->peer);
				ret = -EINVAL;
				break;
			}
			if (y->buf + len > end_all) {
				end_all = y->buf + len;
				all = ix[i];
			}
			if (!y->send && y->buf + len > end_recv) {
				end_recv = y->buf + len;
				recv = ix[i];
			}
		}
	}
	free(ix);
	return ret;
}

/*
 * What the checks before the commit cannot rule out: rank @k's part
 * failed at its commit (@err: its communicator failed, its queue faulted,
 * another thread's calls filled the table since the check) after the
 * parts of b[0, @k) were issued, which cannot be taken back (their peers
 * may have matched them). Logs which were issued and which not, and
 * clears the events of the calls not issued (the failed rank's included).
 */
static void partial(struct batch *b, unsigned int k, unsigned int nb, int err)
{
	char done[160], left[160];
	size_t dl = 0, ll = 0;
	unsigned int j, i;

	done[0] = left[0] = 0;
	for (j = 0; j < nb; j++) {
		if (j < k && dl < sizeof(done))
			dl += (size_t)snprintf(done + dl, sizeof(done) - dl, "%s%u", dl ? ", " : "",
					       b[j].c->rank);
		else if (j >= k && ll < sizeof(left))
			ll += (size_t)snprintf(left + ll, sizeof(left) - ll, "%s%u", ll ? ", " : "",
					       b[j].c->rank);
		if (j < k)
			continue;
		for (i = 0; i < tl.n; i++)
			if (tl.ops[i].c == b[j].c)
				memset(tl.ops[i].ev, 0, sizeof(*tl.ops[i].ev));
	}
	acc_err("group: rank %u's part failed as it was issued (%s): the parts of rank(s) %s "
		"are issued, those of rank(s) %s are not (their events cleared)", b[k].c->rank,
		strerror(-err), done, left);
}

/*
 * Issue this thread's group: check and plan every rank's part, then commit
 * each. @hook (a task graph's send/receive task: one rank's part only)
 * adds its packets around the part's.
 */
static int group_flush(struct acc_coll_hook *hook)
{
	struct batch *b = NULL;
	unsigned int nb, i, k, replans = 0;
	int ret = 0;

	if (!tl.n)
		return 0;
	ret = group_overlaps();
	if (ret)
		return ret;
	b = calloc(tl.n, sizeof(*b));
	if (!b) {
		acc_err("group: the plans of its %u calls: %s", tl.n, strerror(ENOMEM));
		return -ENOMEM;
	}
again:
	nb = 0;
	for (i = 0; i < tl.n; i++) {
		for (k = 0; k < nb && b[k].c != tl.ops[i].c; k++)
			;
		if (k == nb) {
			b[nb].c = tl.ops[i].c;
			b[nb++].q = tl.ops[i].q;
		}
	}
	/* check, compute: nothing is issued for any rank if one fails here */
	for (k = 0; k < nb && !ret; k++) {
		struct accel_comm *c = b[k].c;
		struct acc_group *g = c->g;
		unsigned int posts = 0, j;

		b[k].gen = atomic_load_explicit(&c->commits, memory_order_relaxed);
		ret = acc_plan_init(&b[k].pl, c);
		if (ret)
			break;
		b[k].planned = true;
		ret = batch_plan(&b[k].pl, c);
		if (ret)
			break;
		b[k].xq = c->have_last && c->last_q != b[k].q &&
			  acc_comm_queue_alive(c->dev, c->last_q, c->last_qid);
		b[k].need = b[k].pl.n + 2 + b[k].xq + 1;
		if (hook)
			b[k].need += hook->npre + hook->npost;
		/* a queue that faulted, seen or not: no rank's part is issued */
		ret = acc_queue_check(b[k].q);
		if (ret) {
			acc_err("group: rank %u: its queue stopped (%s); nothing of the group is "
				"issued", c->rank, strerror(-ret));
			break;
		}
		ret = acc_group_lock_call(g, c->rank, "group");
		if (ret)
			break;
		ret = acc_comm_group_error(g, c->rank);
		if (!ret && !g->p2p) {
			g->p2p = calloc(1, sizeof(*g->p2p));
			if (!g->p2p) {
				acc_err("group: comm %p: its list of unmatched calls: %s", (void *)g,
					strerror(ENOMEM));
				ret = -ENOMEM;
			}
		}
		/*
		 * the calls that would wait for their match: of this rank,
		 * and of the group's ranks before it in this batch (counted
		 * against the same table: at most what their matches leave)
		 */
		if (!ret)
			b[k].nposts = batch_posts(g->p2p, c);
		for (j = 0; j <= k; j++)
			if (b[j].c->g == g)
				posts += b[j].nposts;
		if (!ret && g->p2p->n + posts > pending_max()) {
			acc_err("group: comm %p: %u sends and receives already wait for their "
				"match; %u more do not fit (%u)", (void *)g, g->p2p->n, posts,
				pending_max());
			ret = -EAGAIN;
		}
		acc_group_unlock(g);
	}
	/* room on every queue, for every rank's part on it */
	for (k = 0; k < nb && !ret; k++) {
		unsigned int need = 0, j;

		for (j = 0; j < nb; j++)
			if (b[j].q == b[k].q)
				need += b[j].need;
		if (hook) {
			/*
			 * may wait for the task graph's ring room, and run its
			 * host tasks meanwhile: their calls are groups of their
			 * own, not additions to this one
			 */
			struct p2p_group mine = tl;

			memset(&tl, 0, sizeof(tl));
			ret = hook->room(hook, b[k].q, need);
			free(tl.ops);	/* a group a host task left open */
			tl = mine;
		}
		if (!ret)
			ret = accel_queue_reserve(b[k].q, need, 0);
		if (ret == -EINVAL) {
			acc_err("group: rank %u: %u packets cannot fit the queue's ring: use a "
				"larger ring or chunk", b[k].c->rank, need);
			ret = -E2BIG;
		}
	}
	/*
	 * a host task the room wait ran issued on one of these ranks: its
	 * plan's channel counts are stale, plan again (nothing issued yet)
	 */
	for (k = 0; k < nb && !ret; k++)
		if (atomic_load_explicit(&b[k].c->commits, memory_order_relaxed) != b[k].gen)
			break;
	if (!ret && k < nb) {
		for (k = 0; k < nb; k++)
			if (b[k].planned)
				acc_plan_fini(&b[k].pl);
		memset(b, 0, tl.n * sizeof(*b));
		if (++replans < 8)
			goto again;
		acc_err("group: other calls of its ranks kept committing while it waited for "
			"ring room (%u plans)", replans);
		free(b);
		return -EAGAIN;
	}
	/* commit, rank after rank: match every call, then the packets */
	for (k = 0; k < nb && !ret; k++) {
		struct accel_comm *c = b[k].c;
		struct acc_group *g = c->g;
		unsigned int posts;
		uint64_t pos;

		acc_group_lock(g);
		ret = acc_comm_group_error(g, c->rank);
		/* what another thread's calls did meanwhile: the table's room, the queue */
		if (!ret) {
			posts = batch_posts(g->p2p, c);
			if (g->p2p->n + posts > pending_max()) {
				acc_err("group: comm %p rank %u: %u sends and receives wait for their "
					"match; %u more do not fit (%u)", (void *)g, c->rank,
					g->p2p->n, posts, pending_max());
				ret = -EAGAIN;
			}
		}
		if (!ret)
			ret = acc_queue_check(b[k].q);
		pos = g->next_seq[c->rank];
		for (i = 0; i < tl.n && !ret; i++)
			if (tl.ops[i].c == c && tl.ops[i].peer != c->rank)
				ret = p2p_match(g, &tl.ops[i], pos);
		if (!ret)
			atomic_fetch_add_explicit(&c->commits, 1, memory_order_relaxed);
		acc_group_unlock(g);
		if (!ret)
			ret = batch_commit(&b[k], pos, hook);
		if (ret && k)
			partial(b, k, nb, ret);
	}
	for (k = 0; k < nb; k++)
		if (b[k].planned)
			acc_plan_fini(&b[k].pl);
	free(b);
	return ret;
}

static void group_clear(void)
{
	free(tl.ops);
	tl.ops = NULL;
	tl.n = tl.cap = 0;
}

ACCEL_API int accel_group_start(void)
{
	if (tl.depth >= ACC_GROUP_MAX_DEPTH) {
		acc_err("group_start: nested %u deep", tl.depth);
		return -EINVAL;
	}
	tl.depth++;
	return 0;
}

ACCEL_API int accel_group_end(void)
{
	int ret, r2;

	if (!tl.depth) {
		acc_err("group_end: no group was started on this thread");
		return -EINVAL;
	}
	if (--tl.depth)
		return 0;
	ret = group_flush(NULL);
	group_clear();
	r2 = acc_split_group_end();
	return ret ? ret : r2;
}

static int p2p_call(bool send, uint64_t buf, uint64_t count, enum accel_dtype dtype, int peer,
		    struct accel_comm *c, struct accel_queue *q, struct accel_event *ev)
{
	const char *fn = send ? "send" : "recv";
	unsigned int i;
	int ret, es;

	if (!c || !q || !ev) {
		acc_err("%s: NULL communicator, queue or event", fn);
		return -EINVAL;
	}
	ret = acc_check_dev(c->dev, fn);
	if (ret)
		return ret;
	if (accel_queue_device(q) != c->dev) {
		acc_err("%s: rank %u: the queue is of another device than the rank's (%s)", fn,
			c->rank, c->dev->path);
		return -EINVAL;
	}
	if ((unsigned int)dtype >= ACCEL_DTYPE_COUNT) {
		acc_err("%s: rank %u: dtype %u unknown", fn, c->rank, (unsigned int)dtype);
		return -EINVAL;
	}
	if (peer < 0 || (unsigned int)peer >= c->nranks) {
		acc_err("%s: rank %u: peer %d out of range (%u ranks)", fn, c->rank, peer,
			c->nranks);
		return -EINVAL;
	}
	es = accel_dtype_size(dtype);
	if (count > (UINT64_MAX >> 16) / (uint64_t)es) {
		acc_err("%s: rank %u: count %llu too large", fn, c->rank,
			(unsigned long long)count);
		return -EINVAL;
	}
	if (count && (buf % es || buf + count * es < buf)) {
		acc_err("%s: rank %u: %s %#llx (%llu elements) not aligned to the element size %d "
			"or wrapping", fn, c->rank, send ? "send" : "recv", (unsigned long long)buf,
			(unsigned long long)count, es);
		return -EINVAL;
	}
	for (i = 0; i < tl.n; i++)
		if (tl.ops[i].c == c && tl.ops[i].q != q) {
			acc_err("%s: rank %u: another queue than its earlier call in this group "
				"(one queue per rank in a group)", fn, c->rank);
			return -EINVAL;
		}
	if (tl.n == tl.cap) {
		unsigned int cap = tl.cap ? 2 * tl.cap : 16;
		struct p2p_op *ops = cap > (1u << 20) ? NULL : realloc(tl.ops, cap * sizeof(*ops));

		if (!ops) {
			acc_err("%s: rank %u: the group's call %u: %s", fn, c->rank, tl.n + 1,
				cap > (1u << 20) ? "a group holds at most 2^20 calls" :
						   strerror(ENOMEM));
			return -ENOMEM;
		}
		tl.ops = ops;
		tl.cap = cap;
	}
	tl.ops[tl.n++] = (struct p2p_op){
		.c = c, .send = send, .buf = buf, .count = count, .dtype = dtype,
		.esize = (unsigned int)es, .peer = (unsigned int)peer, .q = q, .ev = ev,
	};
	return 0;
}

/* Outside a group, a call is a group of its own. */
static int p2p_issue(bool send, uint64_t buf, uint64_t count, enum accel_dtype dtype, int peer,
		     struct accel_comm *c, struct accel_queue *q, struct accel_event *ev)
{
	int ret;

	if (tl.depth)
		return p2p_call(send, buf, count, dtype, peer, c, q, ev);
	tl.depth = 1;
	ret = p2p_call(send, buf, count, dtype, peer, c, q, ev);
	tl.depth = 0;
	if (!ret)
		ret = group_flush(NULL);
	group_clear();
	return ret;
}

ACCEL_API int accel_send(uint64_t send, uint64_t count, enum accel_dtype dtype, int peer,
			 struct accel_comm *comm, struct accel_queue *queue, struct accel_event *ev)
{
	return p2p_issue(true, send, count, dtype, peer, comm, queue, ev);
}

ACCEL_API int accel_recv(uint64_t recv, uint64_t count, enum accel_dtype dtype, int peer,
			 struct accel_comm *comm, struct accel_queue *queue, struct accel_event *ev)
{
	return p2p_issue(false, recv, count, dtype, peer, comm, queue, ev);
}

/*
 * A task graph's send/receive task (lib/graph/coll_task.c): @n calls of
 * rank @c as one group of their own, issued at once (or, @check_only,
 * checked only, with the communicator's error), whatever group this
 * thread has open: the thread's group is set aside and restored. @hook
 * writes the task's packets around the group's. 0 or -errno; nothing is
 * issued on failure unless @hook->committed.
 */
int acc_p2p_task(struct accel_comm *c, const struct acc_p2p_desc *d, unsigned int n,
		 struct accel_queue *q, struct acc_coll_hook *hook, bool check_only,
		 struct accel_event *ev)
{
	unsigned int depth = tl.depth, nops = tl.n, cap = tl.cap, i;
	struct p2p_op *ops = tl.ops;
	int ret = 0;

	tl.depth = 1;
	tl.ops = NULL;
	tl.n = tl.cap = 0;
	for (i = 0; i < n && !ret; i++)
		ret = p2p_call(d[i].send, d[i].buf, d[i].count, d[i].dtype, d[i].peer, c, q, ev);
	tl.depth = 0;
	if (!ret && check_only) {
		ret = acc_comm_check_error(c, "send/recv");
	} else if (!ret) {
		ret = group_flush(hook);
	}
	group_clear();
	tl.depth = depth;
	tl.ops = ops;
	tl.n = nops;
	tl.cap = cap;
	return ret;
}

/* --- a launch's check of the unmatched posts (lib/graph/coll_task.c) --- */

struct acc_p2p_sim {
	struct acc_p2p t;	/* a copy of the communicator's table */
};

int acc_p2p_sim_begin(struct acc_group *g, struct acc_p2p_sim **out)
{
	struct acc_p2p_sim *sim = malloc(sizeof(*sim));
	*out = NULL;
	if (!sim)
		return -ENOMEM;
	sim->t.n = 0;
	acc_group_lock(g);
	if (g->p2p) {
		sim->t.n = g->p2p->n;
		memcpy(sim->t.post, g->p2p->post, sim->t.n * sizeof(sim->t.post[0]));
	}
	acc_group_unlock(g);
	*out = sim;
	return 0;
}

struct sim_calls {
	const unsigned int *peer;
	const bool *send;
};

static bool sim_call(const void *ctx, unsigned int i, unsigned int *peer, bool *send)
{
	const struct sim_calls *sc = ctx;

	*peer = sc->peer[i];
	*send = sc->send[i];
	return true;
}

bool acc_p2p_sim_fits(const struct acc_p2p_sim *sim, unsigned int rank, const unsigned int *peer,
		      const bool *send, unsigned int n, unsigned int *posts, unsigned int *waiting,
		      unsigned int *max)
{
	struct sim_calls sc = { .peer = peer, .send = send };

	*posts = rank_posts(&sim->t, rank, n, sim_call, &sc);
	*waiting = sim->t.n;
	*max = pending_max();
	return sim->t.n + *posts <= *max;
}

/* As p2p_match() changes the table (without its checks of the fields). */
void acc_p2p_sim_post(struct acc_p2p_sim *sim, unsigned int rank, unsigned int peer, bool send)
{
	unsigned int src = send ? rank : peer, dst = send ? peer : rank;
	struct acc_p2p_post match;

	if (peer == rank || table_take(&sim->t, src, dst, send, &match))
		return;
	if (sim->t.n < ACC_P2P_PENDING)	/* acc_p2p_sim_fits() came first */
		sim->t.post[sim->t.n++] = (struct acc_p2p_post){ .src = src, .dst = dst,
								 .by_send = send };
}

void acc_p2p_sim_end(struct acc_p2p_sim *sim)
{
	free(sim);
}
