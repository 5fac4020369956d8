/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * accel-bench's collective benchmarks (tools/accel_bench_coll.c): the
 * columns of nccl-tests. accel-bench's main() hands "accel-bench OP ..."
 * over when OP is one of allreduce, allgather, reducescatter, alltoall,
 * broadcast, reduce, sendrecv.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_BENCH_COLL_H
#define ACCEL_BENCH_COLL_H

#include <stdbool.h>

/* Is @name a collective accel-bench runs? */
bool accel_bench_coll_is_op(const char *name);

/* Run it: argv[0] is the operation. Returns the exit status. */
int accel_bench_coll(int argc, char **argv);

#endif /* ACCEL_BENCH_COLL_H */
