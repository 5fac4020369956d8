// SPDX-License-Identifier: MIT
/*
 * Which algorithm runs a call: a pure function of the operation, dtype,
 * count, number of ranks and the settings every rank agreed on at init,
 * so that the ranks can never disagree.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>

#include "coll.h"

const char *acc_algo_name(uint32_t algo)
{
	switch (algo) {
	case ACCEL_COMM_ALGO_AUTO:
		return "auto";
	case ACCEL_COMM_ALGO_RING:
		return "ring";
	case ACCEL_COMM_ALGO_ONESHOT:
		return "oneshot";
	}
	return "?";
}

const char *acc_op_name(uint32_t op)
{
	static const char *const names[] = {
		"none", "allreduce", "reduce", "broadcast", "allgather", "reducescatter",
		"alltoall", "barrier", "alltoallv", "send", "recv", "split",
	};

	return op < sizeof(names) / sizeof(names[0]) ? names[op] : "?";
}

/* The ring runs everything but alltoall and alltoallv (direct by nature). */
static bool ring_can(uint32_t op)
{
	return op != ACCEL_COMM_OP_ALLTOALL && op != ACCEL_COMM_OP_ALLTOALLV;
}

int acc_algo_select(const struct acc_group *g, const struct acc_args *a, uint32_t *algo)
{
	uint64_t bytes = a->count * a->esize;

	if (g->algo == ACCEL_COMM_ALGO_RING && !ring_can(a->op)) {
		acc_err("comm: %s: the forced algorithm ring cannot run it", acc_op_name(a->op));
		return -EINVAL;
	}
	if (g->algo != ACCEL_COMM_ALGO_AUTO) {
		*algo = g->algo;
		return 0;
	}
	if (!ring_can(a->op) || bytes <= g->oneshot_max)
		*algo = ACCEL_COMM_ALGO_ONESHOT;
	else
		*algo = ACCEL_COMM_ALGO_RING;
	return 0;
}
