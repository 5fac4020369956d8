// SPDX-License-Identifier: MIT
/*
 * tensormap-bench: TensorMap lookups per second at 16, 64, 256 and 1024
 * live entries per buffer, against a linear scan of the same entries with
 * the same exact overlap test, measured in the same run; then the insert
 * and lookup cycle of a steady-state task, against the same rules on
 * linear lists. No device.
 *
 * Lookups: two layouts of the live entries (writers), each lookup an
 * INPUT argument that depends on exactly one of them:
 *   1-D: N disjoint 256-byte slices of a vector; the query is one slice;
 *   2-D: a sqrt(N) x sqrt(N) grid of 16x16 f32 tiles of a row-major matrix;
 *        the query is one tile. Tiles of one row of tiles have overlapping
 *        byte hulls: the tree's phase pruning (lib/graph/tensormap.c) has
 *        to skip them, and the same-stride box test decides the rest.
 * Columns: "map", the TensorMap as the task graph uses it (a lookup of
 * exactly the view of a writer that no other writer overlaps is answered
 * by the view index, O(1)); "walk", the same map with TM_NO_SAME_VIEW and
 * TM_NO_RUN (the interval-tree walk for every lookup, every entry in the
 * trees); "linear", every entry's hull, then
 * the exact test.
 *
 * Steady state: a task with 4 arguments, the same views every time: a
 * tile of A and of B read (INPUT), a tile of C read and written (INOUT),
 * a tile of D written (OUTPUT), each matrix a 128 x 128 f32 buffer whose
 * 64 16x16 tiles were written by earlier tasks (64 live writers per
 * buffer). Tasks complete 16 behind the newest. One cycle: the 4 lookups
 * (tm_deps()), then the 4 inserts (tm_insert()). Columns: "map", "walk"
 * (TM_NO_SAME_VIEW and TM_NO_RUN: every lookup walks, every writer walks,
 * removes and inserts into the trees) and "linear" (per buffer a list of entries with the map's
 * rules: scan for dependencies; on insert drop completed entries, retire
 * covered ones, append).
 *
 * Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), the best of 5
 * repetitions of each measurement: the build machines are shared, and the
 * best repetition is the one least disturbed.
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


#define REPS	5

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

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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

/* ---- the linear baseline: a list of entries with the map's rules ---- */

struct lin_ent {
	struct tm_layout lay;
	uint64_t task;
	int write;
};

struct lin {
	struct lin_ent *e;
	uint32_t n, cap;
};

/* every entry, hull test then the exact test */
static int lin_deps(const struct lin *l, const struct tm_layout *q, enum accel_access acc,
		    uint64_t task, uint64_t done_below)
{
	enum tm_dep_kind kind;
	uint32_t i;
	int n = 0, fb = 0;

	for (i = 0; i < l->n; i++) {
		const struct lin_ent *e = &l->e[i];

		if (e->lay.lo >= q->hi || q->lo >= e->lay.hi || e->task == task ||
		    e->task < done_below || (!e->write && acc == ACCEL_INPUT))
			continue;
		if (tm_layout_overlap(q, &e->lay, &fb)) {
			kind = !e->write ? TM_DEP_WAR : acc == ACCEL_INPUT || acc == ACCEL_INOUT ?
				TM_DEP_RAW : TM_DEP_WAW;
			on_dep(NULL, e->task, kind);
			n++;
		}
	}
	return n;
}

/* drop completed entries, a writer retires what it covers; then append */
static int lin_insert(struct lin *l, const struct tm_layout *q, enum accel_access acc,
		      uint64_t task, uint64_t done_below)
{
	uint32_t i;
	int fb = 0;

	for (i = 0; i < l->n;) {
		if (l->e[i].task < done_below ||
		    (acc != ACCEL_INPUT && tm_layout_covers(q, &l->e[i].lay, &fb)))
			l->e[i] = l->e[--l->n];
		else
			i++;
	}
	if (l->n == l->cap) {
		struct lin_ent *e = realloc(l->e, (l->cap * 2 + 16) * sizeof(*e));

		if (!e)
			return -1;
		l->e = e;
		l->cap = l->cap * 2 + 16;
	}
	l->e[l->n].lay = *q;
	l->e[l->n].task = task;
	l->e[l->n++].write = acc != ACCEL_INPUT;
	return 0;
}

/* ---- lookups ---- */

/* lookups per second: [0] map, [1] walk, [2] linear */
static int measure(int two_d, uint32_t n, uint64_t iters, double rate[3])
{
	struct accel_tensor *q = malloc(1024 * sizeof(*q));
	struct tm_layout *ql = malloc(1024 * sizeof(*ql));
	struct lin l = { 0 };
	struct tensormap *tm[2];
	struct accel_tensor t;
	struct tm_layout lay;
	uint64_t k, lin_iters, per;
	double reps[REPS];
	char what[48];
	uint32_t i, r, m;
	double t0, dt;

	if (!q || !ql || tm_create(NULL, NULL, &tm[0]) || tm_create(NULL, NULL, &tm[1]))
		return -1;
	tm_set_flags(tm[1], TM_NO_SAME_VIEW | TM_NO_RUN);
	for (i = 0; i < n; i++) {
		view(&t, two_d, n, i);
		if (tm_insert(tm[0], &t, ACCEL_OUTPUT, i) || tm_insert(tm[1], &t, ACCEL_OUTPUT, i) ||
		    tm_layout_make(&t, &lay) || lin_insert(&l, &lay, ACCEL_OUTPUT, i, 0))
			return -1;
	}
	for (i = 0; i < 1024; i++) {
		view(&q[i], two_d, n, (uint32_t)(rnd() % n));
		if (tm_layout_make(&q[i], &ql[i]))
			return -1;
	}
	/* check: each gives one dependency */
	for (i = 0; i < 1024; i++)
		if (tm_deps(tm[0], &q[i], ACCEL_INPUT, n, on_dep, NULL) != 1 ||
		    tm_deps(tm[1], &q[i], ACCEL_INPUT, n, on_dep, NULL) != 1 ||
		    lin_deps(&l, &ql[i], ACCEL_INPUT, n, 0) != 1)
			return -1;
	for (m = 0; m < 2; m++) {
		per = iters / REPS;
		rate[m] = 0;
		for (r = 0; r < REPS; r++) {
			t0 = now();
			for (k = 0; k < per; k++)
				sink += (uint64_t)tm_deps(tm[m], &q[k & 1023], ACCEL_INPUT, n, on_dep,
							  NULL);
			dt = now() - t0;
			reps[r] = per / dt;
			if (per / dt > rate[m])
				rate[m] = per / dt;
		}
		snprintf(what, sizeof(what), "%s-D %s, N=%u", two_d ? "2" : "1",
			 m ? "walk" : "map", n);
		bench_noise_repeats(&noise, what, reps, REPS);
	}
	/* the linear scan (the query's layout made as the map makes it) */
	lin_iters = iters * 16 / n;
	if (lin_iters > iters)
		lin_iters = iters;
	per = lin_iters / REPS;
	rate[2] = 0;
	for (r = 0; r < REPS; r++) {
		t0 = now();
		for (k = 0; k < per; k++) {
			tm_layout_make(&q[k & 1023], &lay);
			sink += (uint64_t)lin_deps(&l, &lay, ACCEL_INPUT, n, 0);
		}
		dt = now() - t0;
		reps[r] = per / dt;
		if (per / dt > rate[2])
			rate[2] = per / dt;
	}
	snprintf(what, sizeof(what), "%s-D linear, N=%u", two_d ? "2" : "1", n);
	bench_noise_repeats(&noise, what, reps, REPS);
	tm_destroy(tm[0]);
	tm_destroy(tm[1]);
	free(l.e);
	free(ql);
	free(q);
	return 0;
}

/* ---- the steady-state task ---- */

#define LAG		16
#define NBUFS		4
#define BG		(1ull << 40)	/* background task ids: never complete */

static uint64_t cur_task;

static int done(void *arg, uint64_t task)
{
	(void)arg;
	return task < BG && task + LAG <= cur_task;
}

static struct accel_buffer *mat(uint32_t b)
{
	return (struct accel_buffer *)(uintptr_t)(0x100000 * (b + 1));
}

static void tile(struct accel_tensor *t, uint32_t b, uint32_t i)
{
	uint64_t shape[2] = { 128, 128 };

	accel_tensor_init(t, mat(b), 0, ACCEL_DTYPE_F32, 2, shape);
	accel_tensor_slice(t, 0, 16ull * (i / 8), 16, 1);
	accel_tensor_slice(t, 1, 16ull * (i % 8), 16, 1);
}

static const enum accel_access cycle_acc[NBUFS] = {
	ACCEL_INPUT, ACCEL_INPUT, ACCEL_INOUT, ACCEL_OUTPUT
};

/* tasks per second: [0] map, [1] walk, [2] linear; @live: the map's live entries */
static int measure_cycle(uint64_t tasks, double rate[3], uint64_t *live)
{
	struct accel_tensor args[NBUFS], t;
	struct tm_layout lay[NBUFS], l;
	struct lin lin[NBUFS] = { 0 };
	struct tensormap *tm;
	struct tm_stats st;
	uint64_t k, per = tasks / REPS;
	double reps[REPS];
	uint32_t b, i, m, r;
	double t0, dt;

	for (b = 0; b < NBUFS; b++) {
		tile(&args[b], b, 9);		/* tile (1, 1) of each matrix */
		if (tm_layout_make(&args[b], &lay[b]))
			return -1;
	}
	for (m = 0; m < 3; m++) {
		rate[m] = 0;
		for (r = 0; r < REPS; r++) {
			tm = NULL;
			if (m < 2 && tm_create(done, NULL, &tm))
				return -1;
			if (m == 1)
				tm_set_flags(tm, TM_NO_SAME_VIEW | TM_NO_RUN);
			for (b = 0; b < NBUFS; b++) {
				lin[b].n = 0;
				for (i = 0; i < 64; i++) {
					tile(&t, b, i);
					if (tm_layout_make(&t, &l))
						return -1;
					if (m < 2 ? tm_insert_layout(tm, mat(b), &l, ACCEL_OUTPUT,
								     BG + b * 64 + i) :
					    lin_insert(&lin[b], &l, ACCEL_OUTPUT, BG + b * 64 + i, 0))
						return -1;
				}
			}
			cur_task = 1;
			t0 = now();
			for (k = 0; k < per; k++, cur_task++) {
				uint64_t below = cur_task > LAG ? cur_task - LAG : 0;

				for (b = 0; b < NBUFS; b++)
					sink += (uint64_t)(m < 2 ?
						tm_deps(tm, &args[b], cycle_acc[b], cur_task, on_dep,
							NULL) :
						lin_deps(&lin[b], &lay[b], cycle_acc[b], cur_task,
							 below));
				for (b = 0; b < NBUFS; b++) {
					if (m < 2 ? tm_insert(tm, &args[b], cycle_acc[b], cur_task) :
					    lin_insert(&lin[b], &lay[b], cycle_acc[b], cur_task,
						       below))
						return -1;
				}
			}
			dt = now() - t0;
			reps[r] = per / dt;
			if (per / dt > rate[m])
				rate[m] = per / dt;
			if (m == 0) {
				tm_get_stats(tm, &st);
				*live = st.live_entries;
			}
			tm_destroy(tm);
		}
		bench_noise_repeats(&noise, m == 0 ? "steady task, map" :
				    m == 1 ? "steady task, walk" : "steady task, linear", reps, REPS);
	}
	for (b = 0; b < NBUFS; b++)
		free(lin[b].e);
	return 0;
}

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 16, 64, 256, 1024 };
	uint64_t iters = argc > 1 ? strtoull(argv[1], NULL, 0) : 2000000, live = 0;
	double r[2][3], c[3];
	int i, d;

	printf("TensorMap lookups per second (millions), one buffer, N live writer entries\n");
	printf("(thread CPU time, best of %d)\n", REPS);
	printf("%6s  %8s %8s %8s %6s   %8s %8s %8s %6s\n", "N", "1-D map", "walk", "linear",
	       "ratio", "2-D map", "walk", "linear", "ratio");
	for (i = 0; i < 4; i++) {
		for (d = 0; d < 2; d++) {
			if (measure(d, sizes[i], iters, r[d])) {
				fprintf(stderr, "tensormap-bench: setup failed at N=%u\n", sizes[i]);
				return 1;
			}
		}
		printf("%6u  %8.2f %8.2f %8.2f %5.1fx   %8.2f %8.2f %8.2f %5.1fx\n", sizes[i],
		       r[0][0] / 1e6, r[0][1] / 1e6, r[0][2] / 1e6, r[0][0] / r[0][2],
		       r[1][0] / 1e6, r[1][1] / 1e6, r[1][2] / 1e6, r[1][0] / r[1][2]);
	}
	if (measure_cycle(iters / 8, c, &live)) {
		fprintf(stderr, "tensormap-bench: steady-state setup failed\n");
		return 1;
	}
	printf("\nSteady-state task, 4 arguments (2 INPUT, INOUT, OUTPUT tiles), the same views\n");
	printf("every time, 64 live writers per buffer, tasks complete %d behind: millions of\n",
	       LAG);
	printf("tasks (4 lookups + 4 inserts) per second\n");
	printf("%8s %8s %8s %6s %6s   %s\n", "map", "walk", "linear", "/walk", "/lin",
	       "live entries");
	printf("%8.2f %8.2f %8.2f %5.1fx %5.1fx   %llu\n", c[0] / 1e6, c[1] / 1e6, c[2] / 1e6,
	       c[0] / c[1], c[0] / c[2], (unsigned long long)live);
	bench_noise_report(&noise, stdout);
	return sink == 42 ? 2 : 0;
}
