// SPDX-License-Identifier: MIT
/*
 * Ring algorithms: allreduce (reduce-scatter then allgather),
 * reducescatter, allgather, broadcast and reduce along a chain, and a
 * token-ring barrier. The data is cut into chunks of the staging slot
 * size; the outer loop runs over chunks and the inner one over the ring's
 * steps, so that a rank's credit wait only ever needs a peer's work of an
 * earlier step (Documentation/collectives.rst, "Why it cannot deadlock").
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

static void ring_allreduce(struct acc_plan *pl, const struct acc_args *a)
{
	struct accel_comm *c = pl->c;
	unsigned int n = c->nranks, r = c->rank, next = (r + 1) % n, prev = (r + n - 1) % n;
	uint64_t e = c->g->chunk / a->esize, es = a->esize, off, len, off2, len2, maxlen, j;
	unsigned int s;

	block_of(a->count, n, 0, &off, &maxlen);
	if (a->avg)
		acc_plan_fill_scale(pl, a->dtype);
	for (j = 0; j < nchunks(maxlen, e); j++) {
		/* reduce-scatter: after it, rank r holds block r + 1 reduced */
		for (s = 0; s + 1 < n; s++) {
			uint64_t sl, rl;

			block_of(a->count, n, mod((long long)r - s, n), &off, &len);
			block_of(a->count, n, mod((long long)r - s - 1, n), &off2, &len2);
			sl = chunk_len(len, j, e);
			rl = chunk_len(len2, j, e);
			if (!s && sl)
				acc_plan_send(pl, next, a->send + (off + j * e) * es, sl * es);
			if (!rl)
				continue;
			if (s + 2 < n) {
				acc_plan_recv_reduce_send(pl, prev, next,
							  a->send + (off2 + j * e) * es, rl,
							  a->dtype, a->redop);
			} else {
				uint64_t dst = a->recv + (off2 + j * e) * es;
				uint64_t slot = acc_plan_recv_wait(pl, prev);

				acc_plan_reduce(pl, dst, a->send + (off2 + j * e) * es, slot, rl,
						a->dtype, a->redop);
				acc_plan_recv_done(pl, prev);
				if (a->avg)
					acc_plan_scale(pl, dst, rl, a->dtype);
			}
		}
		/* allgather of the reduced blocks */
		for (s = 0; s + 1 < n; s++) {
			uint64_t sl, rl;

			block_of(a->count, n, mod((long long)r + 1 - s, n), &off, &len);
			block_of(a->count, n, mod((long long)r - s, n), &off2, &len2);
			sl = chunk_len(len, j, e);
			rl = chunk_len(len2, j, e);
			if (sl)
				acc_plan_send(pl, next, a->recv + (off + j * e) * es, sl * es);
			if (rl) {
				uint64_t slot = acc_plan_recv_wait(pl, prev);

				acc_plan_copy(pl, a->recv + (off2 + j * e) * es, slot, rl * es);
				acc_plan_recv_done(pl, prev);
			}
		}
	}
}

static void ring_reducescatter(struct acc_plan *pl, const struct acc_args *a)
{
	struct accel_comm *c = pl->c;
	unsigned int n = c->nranks, r = c->rank, next = (r + 1) % n, prev = (r + n - 1) % n;
	uint64_t e = c->g->chunk / a->esize, es = a->esize, bytes = a->count * es, j;
	unsigned int s;

	if (a->avg)
		acc_plan_fill_scale(pl, a->dtype);
	for (j = 0; j < nchunks(a->count, e); j++) {
		uint64_t l = chunk_len(a->count, j, e), at = j * e * es;

		/* step s: send block r - s - 1, receive block r - s - 2; the last is block r */
		acc_plan_send(pl, next, a->send + mod((long long)r - 1, n) * bytes + at, l * es);
		for (s = 0; s + 1 < n; s++) {
			unsigned int rb = mod((long long)r - s - 2, n);

			if (s + 2 < n) {
				acc_plan_recv_reduce_send(pl, prev, next, a->send + rb * bytes + at, l,
							  a->dtype, a->redop);
			} else {
				uint64_t slot = acc_plan_recv_wait(pl, prev);

				acc_plan_reduce(pl, a->recv + at, a->send + rb * bytes + at, slot, l,
						a->dtype, a->redop);
				acc_plan_recv_done(pl, prev);
				if (a->avg)
					acc_plan_scale(pl, a->recv + at, l, a->dtype);
			}
		}
	}
}

static void ring_allgather(struct acc_plan *pl, const struct acc_args *a)
{
	struct accel_comm *c = pl->c;
	unsigned int n = c->nranks, r = c->rank, next = (r + 1) % n, prev = (r + n - 1) % n;
	uint64_t e = c->g->chunk / a->esize, es = a->esize, bytes = a->count * es, j;
	unsigned int s;

	for (j = 0; j < nchunks(a->count, e); j++) {
		uint64_t l = chunk_len(a->count, j, e) * es, at = j * e * es;

		acc_plan_copy(pl, a->recv + r * bytes + at, a->send + at, l);
		for (s = 0; s + 1 < n; s++) {
			unsigned int sb = mod((long long)r - s, n), rb = mod((long long)r - s - 1, n);
			uint64_t slot;

			acc_plan_send(pl, next, (s ? a->recv + sb * bytes : a->send) + at, l);
			slot = acc_plan_recv_wait(pl, prev);
			acc_plan_copy(pl, a->recv + rb * bytes + at, slot, l);
			acc_plan_recv_done(pl, prev);
		}
	}
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
