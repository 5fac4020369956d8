// SPDX-License-Identifier: MIT
/*
 * tiled_matmul: C = A x B (f32, N x N) as a task graph of tiles, first
 * eagerly, then captured once and replayed with new matrices bound to
 * each launch.
 *
 * The three matrices are big buffers; a tile is only a view of one
 * (accel_tensor_slice() of the whole matrix: no copy). For every tile
 * (i, j) of C and every k, a MATMUL task computes the partial product
 * A(i, k) x B(k, j) into a tile of its own that the library allocates
 * from its output heap (ACCEL_OUTPUT_NEW). REDUCE tasks then add the
 * partial products pairwise (a tree: NT partials fan in to one) and a COPY
 * puts the sum into C's tile. The program declares only what each task
 * reads and writes; the library finds the dependencies (every partial
 * product before the REDUCE that reads it, across queues), spreads the
 * tasks over the device's queues and reclaims each partial tile once the
 * program has released it and its last reader has completed.
 *
 * The graph: the same tasks recorded between accel_tg_capture_begin() and
 * accel_tg_capture_end(), instantiated once (one sealed packet list per
 * queue), then launched LAUNCHES times. Launch 0 runs on the captured
 * buffers (with new contents); each later launch binds other A, B and C
 * buffers (struct accel_binding), so the same instantiation multiplies
 * other matrices without being recorded again. All launches are in
 * flight together; each result is checked.
 *
 * Each result is compared with a host reference (double accumulation),
 * element by element, with a tolerance for f32 rounding. Exits 0 only if
 * every check passed. Prints the timings: eager (submit to completion),
 * graph launch (per launch, and the host time of accel_graph_launch()
 * alone) and the host reference.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <accel/accel.h>

#define N		256		/* matrix size */
#define T		64		/* tile size */
#define NT		(N / T)		/* tiles per row */
#define LAUNCHES	4
#define TIMEOUT		60000000000ll	/* 60 s */
/*
 * Largest |C - reference|: the f32 sums of N products of |x| < 1 are off
 * by about 1e-5 here; a missing or doubled partial product by about 1.
 */
#define TOLERANCE	1e-3

/* The tasks each multiplication submits: NT^2 * (NT matmuls, NT - 1 reduces, 1 copy). */
#define TASKS		(NT * NT * (2 * NT))

struct mats {
	struct accel_buffer *a, *b, *c;
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "tiled_matmul: %s: %s\n", what, accel_strerror(err));
	return err ? err : -EIO;
}

/* Tile (i, j) of an N x N f32 matrix in @buf: a T x T view, row stride N. */
static void tile(struct accel_tensor *t, struct accel_buffer *buf, unsigned int i, unsigned int j)
{
	const uint64_t shape[2] = { N, N };

	accel_tensor_init(t, buf, 0, ACCEL_DTYPE_F32, 2, shape);
	accel_tensor_slice(t, 0, i * T, T, 1);
	accel_tensor_slice(t, 1, j * T, T, 1);
}

/* An OUTPUT_NEW T x T f32 tile: the library fills in its buffer and offset. */
static void new_tile(struct accel_tensor *t)
{
	const uint64_t shape[2] = { T, T };

	accel_tensor_init(t, NULL, 0, ACCEL_DTYPE_F32, 2, shape);
}

/*
 * Submit (or, while capturing, record) C = A x B: per tile of C, NT partial
 * products, a tree of REDUCEs, a COPY into C. Each heap tile is released
 * as soon as the task reading it is submitted: the library keeps it until
 * that task has completed.
 */
static int submit_matmul(struct accel_tg *tg, const struct mats *m)
{
	struct accel_tensor a, b, c, part[NT];
	struct accel_task task;
	unsigned int i, j, k, n;
	int ret;

	for (i = 0; i < NT; i++) {
		for (j = 0; j < NT; j++) {
			for (k = 0; k < NT; k++) {
				tile(&a, m->a, i, k);
				tile(&b, m->b, k, j);
				new_tile(&part[k]);
				accel_task_prep_matmul(&task, &part[k], ACCEL_OUTPUT_NEW, &a, &b,
						       0);
				task.name = "partial";
				ret = accel_tg_submit(tg, &task, NULL);
				if (ret)
					return fail("submit matmul", ret);
			}
			/* the fan-in: part[k] = part[k] + part[k + step], pairwise */
			for (n = NT; n > 1; n = (n + 1) / 2) {
				for (k = 0; k + 1 < n; k += 2) {
					struct accel_tensor sum;

					new_tile(&sum);
					accel_task_prep_reduce(&task, &sum, ACCEL_OUTPUT_NEW,
							       &part[k], &part[k + 1],
							       DRM_VACCEL_REDOP_SUM);
					task.name = "fan-in";
					ret = accel_tg_submit(tg, &task, NULL);
					if (!ret)
						ret = accel_tg_release(tg, &part[k]);
					if (!ret)
						ret = accel_tg_release(tg, &part[k + 1]);
					if (ret)
						return fail("submit reduce", ret);
					part[k / 2] = sum;
				}
				if (n & 1)
					part[n / 2] = part[n - 1];
			}
			/* C's tile, a strided view of C, gets the sum */
			tile(&c, m->c, i, j);
			accel_task_prep_copy(&task, &c, &part[0], ACCEL_OUTPUT);
			task.name = "store";
			ret = accel_tg_submit(tg, &task, NULL);
			if (!ret)
				ret = accel_tg_release(tg, &part[0]);
			if (ret)
				return fail("submit copy", ret);
		}
	}
	return 0;
}

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* New A and B in [-1, 1), C cleared, written through their host mappings. */
static void fill(const struct mats *m, uint32_t seed)
{
	float *a = accel_buffer_host(m->a), *b = accel_buffer_host(m->b);
	unsigned int i;

	for (i = 0; i < N * N; i++) {
		a[i] = (float)(rnd(&seed) % 2048) / 1024.0f - 1.0f;
		b[i] = (float)(rnd(&seed) % 2048) / 1024.0f - 1.0f;
	}
	memset(accel_buffer_host(m->c), 0, N * N * sizeof(float));
}

/* The host reference, single-threaded, into @ref. */
static void host_matmul(const struct mats *m, double *ref)
{
	const float *a = accel_buffer_host(m->a), *b = accel_buffer_host(m->b);
	unsigned int i, j, k;

	for (i = 0; i < N; i++) {
		double *r = &ref[i * N];

		for (j = 0; j < N; j++)
			r[j] = 0;
		for (k = 0; k < N; k++) {
			double x = a[i * N + k];

			for (j = 0; j < N; j++)
				r[j] += x * b[k * N + j];
		}
	}
}

/* C against the reference. */
static int check(const char *what, const struct mats *m, const double *ref)
{
	const float *c = accel_buffer_host(m->c);
	unsigned int i, bad = 0;
	double err, worst = 0;

	for (i = 0; i < N * N; i++) {
		err = fabs(c[i] - ref[i]);
		if (!(err <= TOLERANCE)) {	/* NaN fails too */
			if (bad++ < 5)
				fprintf(stderr,
					"tiled_matmul: %s: C[%u][%u] = %.7g, expected %.7g\n",
					what, i / N, i % N, c[i], ref[i]);
		}
		if (err > worst)
			worst = err;
	}
	if (bad)
		fprintf(stderr, "tiled_matmul: %s: %u of %u elements wrong\n", what, bad, N * N);
	else
		printf("tiled_matmul: %s: verified (largest error %.2g)\n", what, worst);
	return bad ? -1 : 0;
}

static int mats_create(struct accel_device *dev, struct mats *m)
{
	int ret;

	ret = accel_buffer_create(dev, N * N * sizeof(float), ACCEL_BUFFER_HOST, &m->a);
	if (!ret)
		ret = accel_buffer_create(dev, N * N * sizeof(float), ACCEL_BUFFER_HOST, &m->b);
	if (!ret)
		ret = accel_buffer_create(dev, N * N * sizeof(float), ACCEL_BUFFER_HOST, &m->c);
	return ret;
}

static void mats_destroy(struct mats *m)
{
	accel_buffer_destroy(m->a);
	accel_buffer_destroy(m->b);
	accel_buffer_destroy(m->c);
}

int main(void)
{
	struct mats m[LAUNCHES] = { 0 };
	struct accel_graph_exec *ge = NULL;
	struct accel_graph *g = NULL;
	struct accel_device *dev = NULL;
	struct accel_tg *tg = NULL;
	struct accel_tg_stats st;
	uint64_t t0, t_eager, t_host, t_launch = 0, t_graph;
	double *ref[LAUNCHES] = { 0 }, gflop = 2.0 * N * N * N / 1e9;
	unsigned int l, bad = 0;
	int ret;

	ret = accel_device_open(0, &dev);
	if (ret) {
		fail("open device 0", ret);
		return 1;
	}
	/* One queue per engine, 16 MiB of output heap: the defaults. */
	ret = accel_tg_create(&dev, 1, NULL, &tg);
	if (ret) {
		fail("create the task graph", ret);
		goto out;
	}
	for (l = 0; l < LAUNCHES; l++) {
		ret = mats_create(dev, &m[l]);
		ref[l] = malloc(N * N * sizeof(double));
		if (!ret && !ref[l])
			ret = -ENOMEM;
		if (ret) {
			fail("matrices", ret);
			goto out;
		}
	}

	/* Eager: the tasks run as they are submitted. */
	fill(&m[0], 1);
	t0 = now_ns();
	ret = submit_matmul(tg, &m[0]);
	if (!ret)
		ret = accel_tg_sync(tg, TIMEOUT);
	t_eager = now_ns() - t0;
	if (ret) {
		fail("eager", ret);
		goto out;
	}
	t0 = now_ns();
	host_matmul(&m[0], ref[0]);
	t_host = now_ns() - t0;
	if (check("eager", &m[0], ref[0]))
		bad++;
	st.size = sizeof(st);
	accel_tg_get_stats(tg, &st);
	printf("tiled_matmul: eager: %llu tasks, dependencies %llu RAW %llu WAR %llu WAW, %llu WAITs, heap high water %llu KiB, %llu blocks reclaimed\n",
	       (unsigned long long)st.tasks, (unsigned long long)st.deps[0],
	       (unsigned long long)st.deps[1], (unsigned long long)st.deps[2],
	       (unsigned long long)st.waits, (unsigned long long)st.heap_high_water / 1024,
	       (unsigned long long)st.heap_reclaimed);

	/* Graph: record the same tasks on m[0]'s buffers, instantiate once. */
	ret = accel_tg_capture_begin(tg);
	if (!ret)
		ret = submit_matmul(tg, &m[0]);
	if (!ret)
		ret = accel_tg_capture_end(tg, &g);
	if (ret) {
		fail("capture", ret);
		goto out;
	}
	t0 = now_ns();
	ret = accel_graph_instantiate(g, &ge);
	if (ret) {
		fail("instantiate", ret);
		goto out;
	}
	printf("tiled_matmul: graph of %u tasks instantiated in %.2f ms\n",
	       accel_graph_num_tasks(g), (now_ns() - t0) / 1e6);

	/*
	 * New inputs for every launch: launch 0 on the captured buffers,
	 * launch l on m[l]'s (A, B and C bound in place of m[0]'s). All of
	 * them in flight at once.
	 */
	for (l = 0; l < LAUNCHES; l++)
		fill(&m[l], 100 + l);
	t0 = now_ns();
	for (l = 0; l < LAUNCHES && !ret; l++) {
		struct accel_binding bind[3] = {
			{ m[0].a, m[l].a }, { m[0].b, m[l].b }, { m[0].c, m[l].c },
		};
		uint64_t t1 = now_ns();

		ret = accel_graph_launch(ge, l ? bind : NULL, l ? 3 : 0);
		t_launch += now_ns() - t1;
	}
	if (!ret)
		ret = accel_tg_sync(tg, TIMEOUT);
	t_graph = now_ns() - t0;
	if (ret) {
		fail("launch", ret);
		goto out;
	}
	for (l = 0; l < LAUNCHES; l++) {
		char what[32];

		snprintf(what, sizeof(what), "graph launch %u", l);
		host_matmul(&m[l], ref[l]);
		if (check(what, &m[l], ref[l]))
			bad++;
	}

	printf("tiled_matmul: %dx%d f32, %dx%d tiles, %d tasks per product\n", N, N, T, T, TASKS);
	printf("tiled_matmul: eager %.2f ms (%.3f GFLOP/s), graph %.2f ms per launch (%.3f GFLOP/s; accel_graph_launch() %.1f us of host time), host reference %.2f ms (%.3f GFLOP/s)\n",
	       t_eager / 1e6, gflop / (t_eager / 1e9), t_graph / 1e6 / LAUNCHES,
	       gflop * LAUNCHES / (t_graph / 1e9), t_launch / 1e3 / LAUNCHES, t_host / 1e6,
	       gflop / (t_host / 1e9));
	if (bad)
		ret = -1;
	else
		printf("tiled_matmul: eager and %d graph launches verified\n", LAUNCHES);
out:
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);
	accel_tg_destroy(tg);
	for (l = 0; l < LAUNCHES; l++) {
		mats_destroy(&m[l]);
		free(ref[l]);
	}
	accel_device_close(dev);
	return ret ? 1 : 0;
}
