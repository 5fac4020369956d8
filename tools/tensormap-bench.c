// SPDX-License-Identifier: MIT
/*
 * tensormap-bench: TensorMap lookups per second at 16, 64, 256 and 1024
 * live entries per buffer, against a linear scan of the same entries with
 * the same exact overlap test, measured in the same run. No device.
 *
 * Two layouts of the live entries (writers), each lookup an INPUT argument
 * that depends on exactly one of them:
 *   1-D: N disjoint 256-byte slices of a vector; the query is one slice;
 *   2-D: a sqrt(N) x sqrt(N) grid of 16x16 f32 tiles of a row-major matrix;
 *        the query is one tile. Tiles of one row of tiles have overlapping
 *        byte hulls: the tree's phase pruning (lib/graph/tensormap.c) has
 *        to skip them, and the same-stride box test decides the rest.
 *
 * Usage: tensormap-bench [lookups per measurement, default 2000000]
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "graph/tensormap.h"
#include "../tools/bench_noise.h"

#define BLOCKS	5	/* each rate is also timed in blocks: repeats for bench_noise.h */

static uint64_t sink;
static struct bench_noise noise;

static void on_dep(void *arg, uint64_t task, enum tm_dep_kind kind)
{
	(void)arg;
	sink += task + kind;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#define BUF	((struct accel_buffer *)(uintptr_t)0x10000)

/* entry i of n, 1-D or 2-D */
static void view(struct accel_tensor *t, int two_d, uint32_t n, uint32_t i)
{
	if (!two_d) {
		uint64_t shape[1] = { 64ull * n };

		accel_tensor_init(t, BUF, 0, ACCEL_DTYPE_F32, 1, shape);
		accel_tensor_slice(t, 0, 64ull * i, 64, 1);
	} else {
		uint32_t g = 1;
		uint64_t shape[2];

		while (g * g < n)
			g++;
		shape[0] = shape[1] = 16ull * g;
		accel_tensor_init(t, BUF, 0, ACCEL_DTYPE_F32, 2, shape);
		accel_tensor_slice(t, 0, 16ull * (i / g), 16, 1);
		accel_tensor_slice(t, 1, 16ull * (i % g), 16, 1);
	}
}

struct lin {
	struct tm_layout *lay;
	uint64_t *task;
	uint32_t n;
};

/* the baseline: every entry, hull test then the exact test */
static int lin_deps(const struct lin *l, const struct accel_tensor *t)
{
	struct tm_layout q;
	uint32_t i;
	int n = 0, fb = 0;

	if (tm_layout_make(t, &q))
		return -1;
	for (i = 0; i < l->n; i++) {
		if (l->lay[i].lo >= q.hi || q.lo >= l->lay[i].hi)
			continue;
		if (tm_layout_overlap(&q, &l->lay[i], &fb)) {
			on_dep(NULL, l->task[i], TM_DEP_RAW);
			n++;
		}
	}
	return n;
}

static int measure(int two_d, uint32_t n, uint64_t iters, double *tree_rate, double *lin_rate)
{
	struct accel_tensor *q = malloc(1024 * sizeof(*q));
	struct lin l = { malloc(n * sizeof(*l.lay)), malloc(n * sizeof(*l.task)), n };
	struct tensormap *tm;
	struct accel_tensor t;
	uint64_t k, lin_iters;
	uint32_t i, b;
	double t0, tb, blk[BLOCKS];
	char what[48];
	int ret;

	if (!q || !l.lay || !l.task || tm_create(NULL, NULL, &tm))
		return -1;
	for (i = 0; i < n; i++) {
		view(&t, two_d, n, i);
		if (tm_insert(tm, &t, ACCEL_OUTPUT, i) || tm_layout_make(&t, &l.lay[i]))
			return -1;
		l.task[i] = i;
	}
	for (i = 0; i < 1024; i++)
		view(&q[i], two_d, n, (uint32_t)(rnd() % n));
	/* check both give one dependency */
	for (i = 0; i < 1024; i++)
		if (tm_deps(tm, &q[i], ACCEL_INPUT, n, on_dep, NULL) != 1 || lin_deps(&l, &q[i]) != 1)
			return -1;
	t0 = now();
	for (b = 0, k = 0; b < BLOCKS; b++) {
		for (tb = now(); k < iters * (b + 1) / BLOCKS; k++) {
			ret = tm_deps(tm, &q[k & 1023], ACCEL_INPUT, n, on_dep, NULL);
			sink += (uint64_t)ret;
		}
		blk[b] = (double)(iters / BLOCKS) / (now() - tb);
	}
	*tree_rate = iters / (now() - t0);
	snprintf(what, sizeof(what), "%s-D tree, N=%u", two_d ? "2" : "1", n);
	bench_noise_repeats(&noise, what, blk, BLOCKS);
	lin_iters = iters * 16 / n;
	if (lin_iters > iters)
		lin_iters = iters;
	t0 = now();
	for (b = 0, k = 0; b < BLOCKS; b++) {
		for (tb = now(); k < lin_iters * (b + 1) / BLOCKS; k++)
			sink += (uint64_t)lin_deps(&l, &q[k & 1023]);
		blk[b] = (double)(lin_iters / BLOCKS) / (now() - tb);
	}
	*lin_rate = lin_iters / (now() - t0);
	snprintf(what, sizeof(what), "%s-D linear, N=%u", two_d ? "2" : "1", n);
	bench_noise_repeats(&noise, what, blk, BLOCKS);
	tm_destroy(tm);
	free(l.lay);
	free(l.task);
	free(q);
	return 0;
}

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 16, 64, 256, 1024 };
	uint64_t iters = argc > 1 ? strtoull(argv[1], NULL, 0) : 2000000;
	double r[4];
	int i, d;

	printf("TensorMap lookups per second (millions), one buffer, N live writer entries\n");
	printf("%6s  %12s %12s %7s  %12s %12s %7s\n", "N", "1-D tree", "1-D linear", "ratio",
	       "2-D tree", "2-D linear", "ratio");
	for (i = 0; i < 4; i++) {
		for (d = 0; d < 2; d++) {
			if (measure(d, sizes[i], iters, &r[2 * d], &r[2 * d + 1])) {
				fprintf(stderr, "tensormap-bench: setup failed at N=%u\n", sizes[i]);
				return 1;
			}
		}
		printf("%6u  %12.2f %12.2f %6.1fx  %12.2f %12.2f %6.1fx\n", sizes[i], r[0] / 1e6,
		       r[1] / 1e6, r[0] / r[1], r[2] / 1e6, r[3] / 1e6, r[2] / r[3]);
	}
	bench_noise_report(&noise, stdout);
	return sink == 42 ? 2 : 0;
}
