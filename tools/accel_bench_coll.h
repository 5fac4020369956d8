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
#include <string.h>

#include <accel/accel.h>

/*
 * The in-process device runs a kicked queue in the submitting thread when
 * its engine sleeps (Documentation/sim.rst, knob inline_kick): @on false
 * leaves all the work to the engines, as the module does, so that a round
 * trip measures the engine. Returns the setting before ('Y' or 'N'), 0
 * where there is no such knob (the module).
 */
static inline char bench_inline_kick(struct accel_device *dev, bool on)
{
	char buf[8];

	if (strcmp(accel_device_backend(dev), "sim") ||
	    accel_device_debug_read(dev, "inline_kick", buf, sizeof(buf)) < 1)
		return 0;
	accel_device_debug_write(dev, "inline_kick", on ? "Y" : "N");
	return buf[0];
}

/* Put back what bench_inline_kick() returned. */
static inline void bench_inline_restore(struct accel_device *dev, char was)
{
	if (was)
		accel_device_debug_write(dev, "inline_kick", was == 'Y' ? "Y" : "N");
}

/* Is @name a collective accel-bench runs? */
bool accel_bench_coll_is_op(const char *name);

/* Run it: argv[0] is the operation. Returns the exit status. */
int accel_bench_coll(int argc, char **argv);

#endif /* ACCEL_BENCH_COLL_H */
