// SPDX-License-Identifier: MIT
/*
 * Ring algorithms: allreduce (reduce-scatter then allgather),
 * reducescatter, allgather, broadcast and reduce along a chain, and a
 * token-ring barrier. The data is cut into chunks of the staging slot
 * size. Allreduce, reducescatter and allgather run as columns of units
 * (chunk j of every block through the ring's steps), up to slots - 1
 * columns at once, in an order every rank shares (ring_schedule()), so
 * that every wait is for a peer's unit earlier in that order
 * (Documentation/collectives.rst, "Why it cannot deadlock"); the chains
 * run chunk after chunk.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "coll.h"

/* Block @b of @count elements cut into @n: its first element and length. */
static void block_of(uint64_t count, unsigned int n, unsigned int b, uint64_t *off,
		     uint64_t *len)
{
	uint64_t q = count / n, r = count % n;

	*off = b * q + (b < r ? b : r);
	*len = q + (b < r);
}

/* Chunk @j (of @e elements) of a block of @len: its length, 0 if none. */
static uint64_t chunk_len(uint64_t len, uint64_t j, uint64_t e)
{
	if (j * e >= len)
		return 0;
	return len - j * e < e ? len - j * e : e;
}

static unsigned int mod(long long v, unsigned int n)
{
	return (unsigned int)(((v % n) + n) % n);
}

static uint64_t nchunks(uint64_t len, uint64_t e)
{
	return (len + e - 1) / e;
}

/*
 * The ring operations as columns of units. Column j is chunk j of every
 * block; its unit u receives (but for u = 0) the chunk prev sent in its
 * unit u - 1 of the same column, then sends (but for the last unit) one
 * chunk to next. Every rank runs the same units in the same order
 * (ring_schedule()), so the k-th chunk a rank receives from prev is the
 * k-th prev sent it.
 */
struct ring_op {
	struct acc_plan *pl;
	const struct acc_args *a;
	unsigned int n, r, next, prev;
	uint64_t e, es;
};

static struct ring_op ring_op(struct acc_plan *pl, const struct acc_args *a)
{
	struct accel_comm *c = pl->c;

	return (struct ring_op){
		.pl = pl, .a = a, .n = c->nranks, .r = c->rank,
		.next = (c->rank + 1) % c->nranks,
		.prev = (c->rank + c->nranks - 1) % c->nranks,
		.e = c->g->chunk / a->esize, .es = a->esize,
	};
}

/* Chunk @j of block @b (< n) of the allreduce: its byte offset in *@at, its length. */
static uint64_t ar_chunk(const struct ring_op *o, unsigned int b, uint64_t j, uint64_t *at)
{
	uint64_t off, len;

	block_of(o->a->count, o->n, b, &off, &len);
	*at = (off + j * o->e) * o->es;
	return chunk_len(len, j, o->e);
}

/*
 * Allreduce, 2n - 1 units: 0 sends block r; 1..n-2 reduce the block from
 * prev into the one sent next (reduce-scatter); n - 1 finishes block r + 1
 * into recv and sends it (the allgather's first step); n..2n-2 copy the
 * block from prev into recv and (but the last) forward it.
 */
static void ar_unit(const struct ring_op *o, uint64_t j, unsigned int u)
{
	const struct acc_args *a = o->a;
	struct acc_plan *pl = o->pl;
	unsigned int n = o->n;
	long long r = o->r;
	uint64_t at, l, slot;

	if (!u) {
		l = ar_chunk(o, o->r, j, &at);
		if (l)
			acc_plan_send(pl, o->next, a->send + at, l * o->es);
	} else if (u + 1 < n) {		/* reduce-scatter step s = u - 1 */
		l = ar_chunk(o, mod(r - u, n), j, &at);
		if (l)
			acc_plan_recv_reduce_send(pl, o->prev, o->next, a->send + at, l,
						  a->dtype, a->redop);
	} else if (u + 1 == n) {	/* block r + 1 is complete here */
		l = ar_chunk(o, mod(r + 1, n), j, &at);
		if (!l)
			return;
		slot = acc_plan_recv_wait(pl, o->prev);
		acc_plan_reduce(pl, a->recv + at, a->send + at, slot, l, a->dtype, a->redop);
		acc_plan_recv_done(pl, o->prev);
		if (a->avg)
			acc_plan_scale(pl, a->recv + at, l, a->dtype);
		acc_plan_send(pl, o->next, a->recv + at, l * o->es);
	} else {			/* allgather step s = u - n: block r - s */
		l = ar_chunk(o, mod(r - (u - n), n), j, &at);
		if (!l)
			return;
		slot = acc_plan_recv_wait(pl, o->prev);
		acc_plan_copy(pl, a->recv + at, slot, l * o->es);
		acc_plan_recv_done(pl, o->prev);
		if (u + 1 < 2 * n - 1)
			acc_plan_send(pl, o->next, a->recv + at, l * o->es);
	}
}

/*
 * Reducescatter, n units: 0 sends block r - 1; 1..n-2 reduce the block
 * from prev into the one sent next; n - 1 reduces block r into recv.
 */
static void rs_unit(const struct ring_op *o, uint64_t j, unsigned int u)
{
	const struct acc_args *a = o->a;
	struct acc_plan *pl = o->pl;
	uint64_t bytes = a->count * o->es, l = chunk_len(a->count, j, o->e), at = j * o->e * o->es;
	uint64_t slot;
	long long r = o->r;

	if (!u) {
		acc_plan_send(pl, o->next, a->send + mod(r - 1, o->n) * bytes + at, l * o->es);
	} else if (u + 1 < o->n) {
		acc_plan_recv_reduce_send(pl, o->prev, o->next,
					  a->send + mod(r - u - 1, o->n) * bytes + at, l,
					  a->dtype, a->redop);
	} else {
		slot = acc_plan_recv_wait(pl, o->prev);
		acc_plan_reduce(pl, a->recv + at, a->send + o->r * bytes + at, slot, l,
				a->dtype, a->redop);
		acc_plan_recv_done(pl, o->prev);
		if (a->avg)
			acc_plan_scale(pl, a->recv + at, l, a->dtype);
	}
}

/*
 * Allgather, n units: 0 copies this rank's block into recv and sends it;
 * 1..n-1 copy the block from prev (block r - u) into recv and (but the
 * last) forward it.
 */
static void ag_unit(const struct ring_op *o, uint64_t j, unsigned int u)
{
	const struct acc_args *a = o->a;
	struct acc_plan *pl = o->pl;
	uint64_t bytes = a->count * o->es, l = chunk_len(a->count, j, o->e) * o->es;
	uint64_t at = j * o->e * o->es, dst, slot;

	if (!u) {
		acc_plan_copy(pl, a->recv + o->r * bytes + at, a->send + at, l);
		acc_plan_send(pl, o->next, a->send + at, l);
		return;
	}
	dst = a->recv + mod((long long)o->r - u, o->n) * bytes + at;
	slot = acc_plan_recv_wait(pl, o->prev);
	acc_plan_copy(pl, dst, slot, l);
	acc_plan_recv_done(pl, o->prev);
	if (u + 1 < o->n)
		acc_plan_send(pl, o->next, dst, l);
}

/*
 * The order of the units: column j's unit u at time j * d + u, and at each
 * time the columns in ascending order, with d chosen so that at most
 * slots - 1 columns are in flight at a time. A rank then works on another
 * column while the chunk of the next unit of this one crosses the link,
 * instead of waiting for it (slots 2: one column at a time).
 *
 * Why it cannot deadlock (Documentation/collectives.rst): order every
 * rank's units by (time, column). A receive waits for prev's unit one
 * time earlier. A send of chunk k waits for next to have consumed chunk
 * k - slots; at most slots - 1 chunks are sent per time, so that chunk
 * was sent at an earlier time, and next consumes it in a unit that comes
 * before this one. Every wait is on a unit strictly earlier in the order.
 */
static void ring_schedule(const struct ring_op *o, uint64_t ncols, unsigned int units,
			  void (*unit)(const struct ring_op *o, uint64_t j, unsigned int u))
{
	uint64_t w = o->pl->c->g->slots - 1, d = (units + w - 1) / w, t, j, lo, hi;

	if (!ncols)
		return;
	for (t = 0; t < (ncols - 1) * d + units; t++) {
		lo = t + 1 > units ? (t + 1 - units + d - 1) / d : 0;
		hi = t / d < ncols - 1 ? t / d : ncols - 1;
		for (j = lo; j <= hi; j++)
			unit(o, j, (unsigned int)(t - j * d));
	}
}

static void ring_allreduce(struct acc_plan *pl, const struct acc_args *a)
{
	struct ring_op o = ring_op(pl, a);
	uint64_t off, maxlen;

	block_of(a->count, o.n, 0, &off, &maxlen);
	if (a->avg)
		acc_plan_fill_scale(pl, a->dtype);
	ring_schedule(&o, nchunks(maxlen, o.e), 2 * o.n - 1, ar_unit);
}

static void ring_reducescatter(struct acc_plan *pl, const struct acc_args *a)
{
	struct ring_op o = ring_op(pl, a);

	if (a->avg)
		acc_plan_fill_scale(pl, a->dtype);
	ring_schedule(&o, nchunks(a->count, o.e), o.n, rs_unit);
}

static void ring_allgather(struct acc_plan *pl, const struct acc_args *a)
{
	struct ring_op o = ring_op(pl, a);

	ring_schedule(&o, nchunks(a->count, o.e), o.n, ag_unit);
}

/* A chain from the root: each rank copies a chunk out and forwards it. */
static void ring_broadcast(struct acc_plan *pl, const struct acc_args *a)
{
	struct accel_comm *c = pl->c;
	unsigned int n = c->nranks, r = c->rank, next = (r + 1) % n, prev = (r + n - 1) % n;
	unsigned int pos = mod((long long)r - a->root, n);
	uint64_t e = c->g->chunk / a->esize, es = a->esize, j;

	for (j = 0; j < nchunks(a->count, e); j++) {
		uint64_t l = chunk_len(a->count, j, e) * es, at = j * e * es;

		if (pos) {
			uint64_t slot = acc_plan_recv_wait(pl, prev);

			acc_plan_copy(pl, a->recv + at, slot, l);
			acc_plan_recv_done(pl, prev);
		} else {
			acc_plan_copy(pl, a->recv + at, a->send + at, l);
		}
		if (pos + 1 < n)
			acc_plan_send(pl, next, (pos ? a->recv : a->send) + at, l);
	}
}

/* A chain ending at the root: each rank adds its chunk and forwards the sum. */
static void ring_reduce(struct acc_plan *pl, const struct acc_args *a)
{
	struct accel_comm *c = pl->c;
	unsigned int n = c->nranks, r = c->rank, next = (r + 1) % n, prev = (r + n - 1) % n;
	unsigned int pos = mod((long long)r - a->root - 1, n);
	uint64_t e = c->g->chunk / a->esize, es = a->esize, j;

	if (a->avg && pos == n - 1)
		acc_plan_fill_scale(pl, a->dtype);
	for (j = 0; j < nchunks(a->count, e); j++) {
		uint64_t l = chunk_len(a->count, j, e), at = j * e * es;

		if (!pos) {
			acc_plan_send(pl, next, a->send + at, l * es);
		} else if (pos + 1 < n) {
			acc_plan_recv_reduce_send(pl, prev, next, a->send + at, l, a->dtype,
						  a->redop);
		} else {
			uint64_t slot = acc_plan_recv_wait(pl, prev);

			acc_plan_reduce(pl, a->recv + at, a->send + at, slot, l, a->dtype, a->redop);
			acc_plan_recv_done(pl, prev);
			if (a->avg)
				acc_plan_scale(pl, a->recv + at, l, a->dtype);
		}
	}
}

/* n - 1 rounds of a token: the last one received has passed every rank. */
static void ring_barrier(struct acc_plan *pl)
{
	struct accel_comm *c = pl->c;
	unsigned int n = c->nranks, r = c->rank, s;

	for (s = 0; s + 1 < n; s++) {
		acc_plan_send(pl, (r + 1) % n, 0, 0);
		acc_plan_recv_wait(pl, (r + n - 1) % n);
		acc_plan_recv_done(pl, (r + n - 1) % n);
	}
}

void acc_ring_plan(struct acc_plan *pl, const struct acc_args *a)
{
	switch (a->op) {
	case ACCEL_COMM_OP_ALLREDUCE:
		ring_allreduce(pl, a);
		break;
	case ACCEL_COMM_OP_REDUCESCATTER:
		ring_reducescatter(pl, a);
		break;
	case ACCEL_COMM_OP_ALLGATHER:
		ring_allgather(pl, a);
		break;
	case ACCEL_COMM_OP_BROADCAST:
		ring_broadcast(pl, a);
		break;
	case ACCEL_COMM_OP_REDUCE:
		ring_reduce(pl, a);
		break;
	case ACCEL_COMM_OP_BARRIER:
		ring_barrier(pl);
		break;
	default:	/* acc_algo_select() never picks the ring for the others */
		pl->err = -EINVAL;
		break;
	}
}
