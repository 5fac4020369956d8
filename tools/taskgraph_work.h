/* SPDX-License-Identifier: MIT */
/*
 * The task-graph workloads that tools/accel-bench.c (the module in the VM,
 * or the in-process device natively) and
 * tools/taskgraph-bench.c (natively, over the fake kernel of
 * tests/lib-native/fake_kmod.h) measure, and their baselines:
 *
 *   tgw_eager()     N tasks of 4 tensor arguments submitted eagerly
 *                   (DELAY 0: no device work, so only the library's host
 *                   cost is measured), host time of accel_tg_submit()
 *   tgw_raw()       the raw accel_queue path for the same packets: a DELAY
 *                   whose completion action advances a timeline signal
 *                   (with IRQ, as the library's tasks), preceded by
 *                   @waits_per_task satisfied WAITs
 *   tgw_capture()   the same N tasks captured into a graph, instantiated
 *   tgw_replay()    host time of accel_graph_launch() of that graph
 *   tgw_matmul()    the tiled matmul of examples/tiled_matmul.c (partial
 *                   products into heap tiles, a REDUCE fan-in, a COPY into
 *                   C's tile), eager or captured
 *
 * The tasks of a batch: task i reads slices 4i and 4i + 1, updates
 * 4i + 2 (INOUT) and writes 4i + 3 (OUTPUT) of one buffer, 256-byte
 * slices. With @chain, its first input is instead slice 4(i - 1) + 3, the
 * output of the task before: every task then has a read-after-write
 * dependency on its predecessor, on another queue when the task graph
 * has several (round-robin), so one WAIT each.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef TASKGRAPH_WORK_H
#define TASKGRAPH_WORK_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <accel/accel.h>

#define TGW_SLICE	256u		/* bytes per tensor argument */
#define TGW_TIMEOUT	60000000000ll	/* 60 s */

static inline uint64_t tgw_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A buffer for @n tasks of 4 slices each. */
static inline int tgw_buffer(struct accel_device *dev, unsigned int n, struct accel_buffer **out)
{
	return accel_buffer_create(dev, (uint64_t)n * 4 * TGW_SLICE, 0, out);
}

/* Task @i of a batch (see the top of the file); @ts holds its 4 views. */
static inline void tgw_task(struct accel_task *task, struct accel_tensor ts[4],
			    struct accel_buffer *buf, unsigned int i, int chain)
{
	static const uint32_t access[4] = { ACCEL_INPUT, ACCEL_INPUT, ACCEL_INOUT, ACCEL_OUTPUT };
	const uint64_t shape[1] = { TGW_SLICE };
	unsigned int a, slice;

	accel_task_prep_delay(task, 0);
	for (a = 0; a < 4; a++) {
		slice = 4 * i + a;
		if (chain && a == 0 && i > 0)
			slice = 4 * (i - 1) + 3;
		accel_tensor_init(&ts[a], buf, (uint64_t)slice * TGW_SLICE, ACCEL_DTYPE_U8, 1,
				  shape);
		accel_task_arg(task, &ts[a], access[a]);
	}
}

/*
 * Submit @n tasks; the host time of the submission loop, in ns, into @ns
 * (the tasks and their views are prepared before it starts). Waits for
 * nothing (the caller syncs).
 */
static inline int tgw_eager(struct accel_tg *tg, struct accel_buffer *buf, unsigned int n,
			    int chain, uint64_t *ns)
{
	struct accel_tensor (*ts)[4] = calloc(n, sizeof(*ts));
	struct accel_task *tasks = calloc(n, sizeof(*tasks));
	unsigned int i;
	uint64_t t0;
	int ret = 0;

	if (!ts || !tasks) {
		free(ts);
		free(tasks);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		tgw_task(&tasks[i], ts[i], buf, i, chain);
	t0 = tgw_now();
	for (i = 0; i < n && !ret; i++)
		ret = accel_tg_submit(tg, &tasks[i], NULL);
	*ns = tgw_now() - t0;
	free(ts);
	free(tasks);
	return ret;
}

/* Capture the @n tasks of tgw_eager() and instantiate them. */
static inline int tgw_capture(struct accel_tg *tg, struct accel_buffer *buf, unsigned int n,
			      int chain, struct accel_graph **g, struct accel_graph_exec **ge)
{
	struct accel_tensor ts[4];
	struct accel_task task;
	unsigned int i;
	int ret;

	ret = accel_tg_capture_begin(tg);
	for (i = 0; i < n && !ret; i++) {
		tgw_task(&task, ts, buf, i, chain);
		ret = accel_tg_submit(tg, &task, NULL);
	}
	if (ret) {
		struct accel_graph *junk = NULL;

		accel_tg_capture_end(tg, &junk);
		accel_graph_destroy(junk);
		return ret;
	}
	ret = accel_tg_capture_end(tg, g);
	if (!ret) {
		ret = accel_graph_instantiate(*g, ge);
		if (ret) {
			accel_graph_destroy(*g);
			*g = NULL;
		}
	}
	return ret;
}

/* Launch @ge @launches times; host time of accel_graph_launch() into @ns. */
static inline int tgw_replay(struct accel_graph_exec *ge, unsigned int launches, uint64_t *ns)
{
	uint64_t t0, total = 0;
	unsigned int i;
	int ret;

	for (i = 0; i < launches; i++) {
		t0 = tgw_now();
		ret = accel_graph_launch(ge, NULL, 0);
		total += tgw_now() - t0;
		if (ret)
			return ret;
	}
	*ns = total;
	return 0;
}

/*
 * The raw path for @n tasks: per task @waits_per_task WAITs that hold at
 * once, then a DELAY 0 whose completion action raises @sig to the task's
 * number, one doorbell per task (as eager submission publishes each task).
 * The host time of it all into @ns.
 */
static inline int tgw_raw(struct accel_queue *q, struct accel_signal *sig, unsigned int n,
			  unsigned int waits_per_task, uint64_t *ns)
{
	uint64_t t0 = tgw_now(), v = accel_signal_read(sig);
	struct drm_vaccel_packet *p;
	unsigned int i, w;
	int ret;

	for (i = 0; i < n; i++) {
		ret = accel_queue_reserve(q, waits_per_task + 1, TGW_TIMEOUT);
		if (ret)
			return ret;
		for (w = 0; w < waits_per_task; w++)
			accel_prep_wait(accel_queue_get_packet(q), accel_signal_va(sig),
					DRM_VACCEL_WAIT_GE, v, 0, 0);
		p = accel_queue_get_packet(q);
		accel_prep_delay(p, 0);
		accel_prep_completion(p, accel_signal_va(sig), DRM_VACCEL_SIGNAL_MAX, ++v);
		accel_prep_irq(p);
		ret = accel_queue_submit(q);
		if (ret < 0)
			return ret;
	}
	*ns = tgw_now() - t0;
	return 0;
}

/* ---- a pipeline: 200 tasks over 4 queues (matmuls and copies) ---- */

#define TGW_PIPE_STAGES	100	/* two tasks each */
#define TGW_PIPE_T	16	/* f32 tiles of TGW_PIPE_T x TGW_PIPE_T */
#define TGW_PIPE_TILE	(TGW_PIPE_T * TGW_PIPE_T * 4)

/* The buffer of a pipeline: a weight tile, then two tiles per stage. */
static inline int tgw_pipe_buffer(struct accel_device *dev, struct accel_buffer **out)
{
	return accel_buffer_create(dev, (uint64_t)(1 + 2 * TGW_PIPE_STAGES) * TGW_PIPE_TILE, 0,
				   out);
}

static inline void tgw_pipe_tile(struct accel_tensor *t, struct accel_buffer *buf,
				 unsigned int k)
{
	const uint64_t shape[2] = { TGW_PIPE_T, TGW_PIPE_T };

	accel_tensor_init(t, buf, (uint64_t)k * TGW_PIPE_TILE, ACCEL_DTYPE_F32, 2, shape);
}

/*
 * Submit the pipeline: stage i multiplies the tile stage i - 1 copied out
 * by the weight tile (a MATMUL on queue i % 4), then copies the product out
 * (a COPY on queue (i + 1) % 4): every task depends on the one before it,
 * on another queue. The host time of the submissions into @ns.
 */
static inline int tgw_pipeline(struct accel_tg *tg, struct accel_buffer *buf, uint64_t *ns)
{
	struct accel_tensor w, in, prod, out;
	struct accel_task task;
	unsigned int i, nq = accel_tg_num_queues(tg, 0);
	uint64_t t0 = tgw_now();
	int ret = 0;

	tgw_pipe_tile(&w, buf, 0);
	for (i = 0; i < TGW_PIPE_STAGES && !ret; i++) {
		tgw_pipe_tile(&in, buf, i ? 2 * i : 0);
		tgw_pipe_tile(&prod, buf, 2 * i + 1);
		tgw_pipe_tile(&out, buf, 2 * i + 2);
		accel_task_prep_matmul(&task, &prod, ACCEL_OUTPUT, &in, &w, 0);
		task.queue = i % nq;
		ret = accel_tg_submit(tg, &task, NULL);
		if (ret)
			break;
		accel_task_prep_copy(&task, &out, &prod, ACCEL_OUTPUT);
		task.queue = (i + 1) % nq;
		ret = accel_tg_submit(tg, &task, NULL);
	}
	*ns = tgw_now() - t0;
	return ret;
}

static inline int tgw_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* the pipeline's figures: host ns per task and per launch, medians of @runs */
struct tgw_pipe_figures {
	double eager_task;		/* eager submission, per task */
	double replay_task;		/* graph launch, per task */
	double launch_fixed;		/* launch of a one-task graph on one queue */
	double b2b_task;		/* graph launch, back to back, per task */
	uint64_t eager_runs[16], replay_runs[16], fixed_runs[16], b2b_runs[16];
	unsigned int runs;
};

/*
 * The pipeline on a task graph of 4 queues on @dev: @runs (<= 16) eager
 * submissions of it, @runs launches of it captured, and @runs launches of a
 * one-task graph (the fixed cost of a launch); each followed by a sync.
 * And @runs launches of the pipeline back to back, one sync after the
 * last (what runtimes do: the engines are still busy with the previous
 * launch, so the doorbells need no KICK), each launch timed alone.
 */
static inline int tgw_pipe_measure(struct accel_device *dev, unsigned int runs,
				   struct tgw_pipe_figures *f)
{
	struct accel_tg_params params = { .size = sizeof(params), .queues_per_device = 4,
					  .ring_size = 1024 };
	struct accel_graph_exec *ge = NULL, *ge1 = NULL;
	struct accel_graph *g = NULL, *g1 = NULL;
	struct accel_buffer *buf = NULL;
	struct accel_tensor w;
	struct accel_task task;
	struct accel_tg *tg;
	uint64_t v[16], ns, t0;
	unsigned int r;
	int ret;

	if (runs > 16)
		runs = 16;
	f->runs = runs;
	ret = accel_tg_create(&dev, 1, &params, &tg);
	if (ret)
		return ret;
	ret = tgw_pipe_buffer(dev, &buf);
	for (r = 0; r <= runs && !ret; r++) {	/* run 0 warms up */
		ret = tgw_pipeline(tg, buf, &ns);
		if (!ret)
			ret = accel_tg_sync(tg, TGW_TIMEOUT);
		if (r)
			f->eager_runs[r - 1] = ns;
	}
	if (!ret)
		ret = accel_tg_capture_begin(tg);
	if (!ret) {
		ret = tgw_pipeline(tg, buf, &ns);
		if (ret) {
			accel_tg_capture_end(tg, &g);
		} else {
			ret = accel_tg_capture_end(tg, &g);
			if (!ret)
				ret = accel_graph_instantiate(g, &ge);
		}
	}
	for (r = 0; r <= runs && !ret; r++) {
		ret = tgw_replay(ge, 1, &ns);
		if (!ret)
			ret = accel_tg_sync(tg, TGW_TIMEOUT);
		if (r)
			f->replay_runs[r - 1] = ns;
	}
	/* back to back: run 0 warms up, one sync at the end */
	for (r = 0; r <= runs && !ret; r++) {
		ret = tgw_replay(ge, 1, &ns);
		if (r)
			f->b2b_runs[r - 1] = ns;
	}
	if (!ret)
		ret = accel_tg_sync(tg, TGW_TIMEOUT);
	/* the fixed cost: a graph of one task */
	if (!ret)
		ret = accel_tg_capture_begin(tg);
	if (!ret) {
		tgw_pipe_tile(&w, buf, 0);
		accel_task_prep_delay(&task, 0);
		accel_task_arg(&task, &w, ACCEL_INPUT);
		task.queue = 0;
		ret = accel_tg_submit(tg, &task, NULL);
		if (ret) {
			accel_tg_capture_end(tg, &g1);
		} else {
			ret = accel_tg_capture_end(tg, &g1);
			if (!ret)
				ret = accel_graph_instantiate(g1, &ge1);
		}
	}
	for (r = 0; r <= runs && !ret; r++) {
		t0 = tgw_now();
		ret = accel_graph_launch(ge1, NULL, 0);
		ns = tgw_now() - t0;
		if (!ret)
			ret = accel_tg_sync(tg, TGW_TIMEOUT);
		if (r)
			f->fixed_runs[r - 1] = ns;
	}
	if (!ret) {
		memcpy(v, f->eager_runs, runs * sizeof(*v));
		qsort(v, runs, sizeof(*v), tgw_cmp_u64);
		f->eager_task = (double)v[runs / 2] / (2 * TGW_PIPE_STAGES);
		memcpy(v, f->replay_runs, runs * sizeof(*v));
		qsort(v, runs, sizeof(*v), tgw_cmp_u64);
		f->replay_task = (double)v[runs / 2] / (2 * TGW_PIPE_STAGES);
		memcpy(v, f->fixed_runs, runs * sizeof(*v));
		qsort(v, runs, sizeof(*v), tgw_cmp_u64);
		f->launch_fixed = (double)v[runs / 2];
		memcpy(v, f->b2b_runs, runs * sizeof(*v));
		qsort(v, runs, sizeof(*v), tgw_cmp_u64);
		f->b2b_task = (double)v[runs / 2] / (2 * TGW_PIPE_STAGES);
	}
	accel_graph_exec_destroy(ge1);
	accel_graph_destroy(g1);
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);
	accel_tg_destroy(tg);
	accel_buffer_destroy(buf);
	return ret;
}

/* ---- the tiled matmul (examples/tiled_matmul.c, without the checks) ---- */

#define TGW_MM_N	256
#define TGW_MM_T	64
#define TGW_MM_NT	(TGW_MM_N / TGW_MM_T)

static inline void tgw_tile(struct accel_tensor *t, struct accel_buffer *buf, unsigned int i,
			    unsigned int j)
{
	const uint64_t shape[2] = { TGW_MM_N, TGW_MM_N };

	accel_tensor_init(t, buf, 0, ACCEL_DTYPE_F32, 2, shape);
	accel_tensor_slice(t, 0, i * TGW_MM_T, TGW_MM_T, 1);
	accel_tensor_slice(t, 1, j * TGW_MM_T, TGW_MM_T, 1);
}

static inline void tgw_new_tile(struct accel_tensor *t)
{
	const uint64_t shape[2] = { TGW_MM_T, TGW_MM_T };

	accel_tensor_init(t, NULL, 0, ACCEL_DTYPE_F32, 2, shape);
}

/* C = A x B (TGW_MM_N square f32 buffers) as tile tasks, eager or captured. */
static inline int tgw_matmul(struct accel_tg *tg, struct accel_buffer *a,
			     struct accel_buffer *b, struct accel_buffer *c)
{
	struct accel_tensor ta, tb, tc, part[TGW_MM_NT], sum;
	struct accel_task task;
	unsigned int i, j, k, n;
	int ret = 0;

	for (i = 0; i < TGW_MM_NT && !ret; i++) {
		for (j = 0; j < TGW_MM_NT && !ret; j++) {
			for (k = 0; k < TGW_MM_NT && !ret; k++) {
				tgw_tile(&ta, a, i, k);
				tgw_tile(&tb, b, k, j);
				tgw_new_tile(&part[k]);
				accel_task_prep_matmul(&task, &part[k], ACCEL_OUTPUT_NEW, &ta, &tb,
						       0);
				ret = accel_tg_submit(tg, &task, NULL);
			}
			for (n = TGW_MM_NT; n > 1 && !ret; n = (n + 1) / 2) {
				for (k = 0; k + 1 < n && !ret; k += 2) {
					tgw_new_tile(&sum);
					accel_task_prep_reduce(&task, &sum, ACCEL_OUTPUT_NEW,
							       &part[k], &part[k + 1],
							       DRM_VACCEL_REDOP_SUM);
					ret = accel_tg_submit(tg, &task, NULL);
					if (!ret)
						ret = accel_tg_release(tg, &part[k]);
					if (!ret)
						ret = accel_tg_release(tg, &part[k + 1]);
					part[k / 2] = sum;
				}
				if (n & 1)
					part[n / 2] = part[n - 1];
			}
			if (ret)
				break;
			tgw_tile(&tc, c, i, j);
			accel_task_prep_copy(&task, &tc, &part[0], ACCEL_OUTPUT);
			ret = accel_tg_submit(tg, &task, NULL);
			if (!ret)
				ret = accel_tg_release(tg, &part[0]);
		}
	}
	return ret;
}

/* The single-threaded host reference: C = A x B in f32, i-k-j order. */
static inline void tgw_host_matmul(const float *a, const float *b, float *c)
{
	unsigned int i, j, k;

	for (i = 0; i < TGW_MM_N; i++) {
		float *r = &c[i * TGW_MM_N];

		memset(r, 0, TGW_MM_N * sizeof(float));
		for (k = 0; k < TGW_MM_N; k++) {
			float x = a[i * TGW_MM_N + k];

			for (j = 0; j < TGW_MM_N; j++)
				r[j] += x * b[k * TGW_MM_N + j];
		}
	}
}

#endif /* TASKGRAPH_WORK_H */
