// SPDX-License-Identifier: MIT
/*
 * One-shot (direct) algorithms: every rank writes its data straight into
 * the staging slot of each peer that needs it, then consumes what it
 * received. Reductions run locally in rank order (x0 op x1 op ... op
 * xn-1), so every rank computes the same bits. Large operations are cut
 * into chunks of the staging slot size, all sends of a chunk before its
 * receives.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "coll.h"

static uint64_t chunk_len(uint64_t count, uint64_t j, uint64_t e)
{
	return count - j * e < e ? count - j * e : e;
}

/*
 * recv[0, l) = x0 op x1 op ... with x_i = the slot from rank i, or @own for
 * this rank: @own is copied to the scratch first if the chain would
 * overwrite it before reading it (in place, rank 2 or above). Waits for
 * every peer's chunk first and gives all slots back after.
 */
static void reduce_chain(struct acc_plan *pl, const struct acc_args *a, uint64_t dst,
			 uint64_t own, uint64_t l)
{
	struct accel_comm *c = pl->c;
	unsigned int n = c->nranks, i;
	uint64_t x[ACCEL_COMM_MAX_RANKS] = { 0 };

	if (dst == own && c->rank >= 2) {
		acc_plan_copy(pl, accel_buffer_va(c->scratch), own, l * a->esize);
		own = accel_buffer_va(c->scratch);
	}
	for (i = 0; i < n; i++)
		x[i] = i == c->rank ? own : acc_plan_recv_wait(pl, i);
	acc_plan_reduce(pl, dst, x[0], x[1], l, a->dtype, a->redop);
	for (i = 2; i < n; i++)
		acc_plan_reduce(pl, dst, dst, x[i], l, a->dtype, a->redop);
	for (i = 0; i < n; i++)
		if (i != c->rank)
			acc_plan_recv_done(pl, i);
	if (a->avg)
		acc_plan_scale(pl, dst, l, a->dtype);
}

void acc_oneshot_plan(struct acc_plan *pl, const struct acc_args *a)
{
	struct accel_comm *c = pl->c;
	unsigned int n = c->nranks, r = c->rank, i, p;
	uint64_t es = a->esize, e = c->g->chunk / es, bytes = a->count * es, j;
	bool to_root = a->op == ACCEL_COMM_OP_REDUCE;

	if (a->avg && (!to_root || (int)r == a->root))
		acc_plan_fill_scale(pl, a->dtype);
	if (a->op == ACCEL_COMM_OP_BARRIER) {
		for (i = 1; i < n; i++)
			acc_plan_send(pl, (r + i) % n, 0, 0);
		for (i = 1; i < n; i++)
			acc_plan_recv_wait(pl, (r + n - i) % n);
		for (i = 1; i < n; i++)
			acc_plan_recv_done(pl, (r + n - i) % n);
		return;
	}
	for (j = 0; j * e < a->count; j++) {
		uint64_t l = chunk_len(a->count, j, e), lb = l * es, at = j * e * es;

		/* sends, to r + 1, r + 2, ... (each peer's first source differs) */
		for (i = 1; i < n; i++) {
			p = (r + i) % n;
			switch (a->op) {
			case ACCEL_COMM_OP_ALLREDUCE:
			case ACCEL_COMM_OP_ALLGATHER:
				acc_plan_send(pl, p, a->send + at, lb);
				break;
			case ACCEL_COMM_OP_REDUCESCATTER:
			case ACCEL_COMM_OP_ALLTOALL:
				acc_plan_send(pl, p, a->send + p * bytes + at, lb);
				break;
			case ACCEL_COMM_OP_REDUCE:
				if ((int)p == a->root)
					acc_plan_send(pl, p, a->send + at, lb);
				break;
			case ACCEL_COMM_OP_BROADCAST:
				if ((int)r == a->root)
					acc_plan_send(pl, p, a->send + at, lb);
				break;
			}
		}
		/* receives */
		switch (a->op) {
		case ACCEL_COMM_OP_ALLREDUCE:
			reduce_chain(pl, a, a->recv + at, a->send + at, l);
			break;
		case ACCEL_COMM_OP_REDUCESCATTER:
			reduce_chain(pl, a, a->recv + at, a->send + r * bytes + at, l);
			break;
		case ACCEL_COMM_OP_REDUCE:
			if ((int)r == a->root)
				reduce_chain(pl, a, a->recv + at, a->send + at, l);
			break;
		case ACCEL_COMM_OP_ALLGATHER:
		case ACCEL_COMM_OP_ALLTOALL: {
			uint64_t mine = a->op == ACCEL_COMM_OP_ALLGATHER ? a->send : a->send + r * bytes;

			acc_plan_copy(pl, a->recv + r * bytes + at, mine + at, lb);
			for (i = 1; i < n; i++) {
				p = (r + n - i) % n;
				acc_plan_copy(pl, a->recv + p * bytes + at, acc_plan_recv_wait(pl, p),
					      lb);
				acc_plan_recv_done(pl, p);
			}
			break;
		}
		case ACCEL_COMM_OP_BROADCAST:
			if ((int)r == a->root) {
				acc_plan_copy(pl, a->recv + at, a->send + at, lb);
			} else {
				p = (unsigned int)a->root;
				acc_plan_copy(pl, a->recv + at, acc_plan_recv_wait(pl, p), lb);
				acc_plan_recv_done(pl, p);
			}
			break;
		}
	}
}
