// SPDX-License-Identifier: GPL-2.0-only
/*
 * libaccel's task graph in the VM (accel/taskgraph.h): every bad input of
 * every public call with its exact errno; eager correctness of each op
 * against a host computation; OUTPUT_NEW memory, release and reuse; host
 * tasks on the waiting thread and on the worker; host maps that wait for
 * exactly the overlapping tasks and order the host's writes before later
 * tasks; dependencies across queues and across two devices; the DOT dump,
 * the trace and the statistics. Fresh devices (LIB_ID_A, LIB_ID_B); every
 * test ends with the module's live-object counters back where they started.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <math.h>
#include <pthread.h>

#include "kselftest_harness.h"
#include "libaccel_tg_util.h"

FIXTURE(tg) {
	struct accel_device *dev;
	struct vaccel_counts counts;
};

FIXTURE_SETUP(tg)
{
	self->dev = NULL;
	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, lib_counted_open(LIB_ID_A, "memory=64M engines=2", &self->counts,
				      &self->dev));
}

FIXTURE_TEARDOWN(tg)
{
	if (!lib_present())
		return;
	accel_device_close(self->dev);
	lib_del_device(LIB_ID_A);
	EXPECT_LIB_COUNTS_BACK(&self->counts, 5000);
}

/* A task graph over @dev with @queues queues (0: one per engine). */
static int tg_new(struct accel_device *dev, uint32_t queues, uint32_t flags, uint64_t heap,
		  struct accel_tg **tg)
{
	struct accel_tg_params p = {
		.size = sizeof(p),
		.queues_per_device = queues,
		.flags = flags,
		.heap_size = heap,
		.timeout_ns = 20 * SEC,
	};

	return accel_tg_create(&dev, 1, &p, tg);
}

TEST_F(tg, create_errors)
{
	struct accel_device *devs[9], *nulldev = NULL;
	struct accel_tg_params p = { .size = sizeof(p) };
	struct accel_tg *tg = NULL;
	unsigned int i;

	for (i = 0; i < 9; i++)
		devs[i] = self->dev;
	EXPECT_EQ(-EINVAL, accel_tg_create(NULL, 1, NULL, &tg));
	EXPECT_EQ(-EINVAL, accel_tg_create(devs, 0, NULL, &tg));
	EXPECT_EQ(-EINVAL, accel_tg_create(devs, ACCEL_TG_MAX_DEVICES + 1, NULL, &tg));
	EXPECT_EQ(-EINVAL, accel_tg_create(&nulldev, 1, NULL, &tg));
	EXPECT_EQ(-EINVAL, accel_tg_create(devs, 1, NULL, NULL));
	p.size = 0;
	EXPECT_EQ(-EINVAL, accel_tg_create(devs, 1, &p, &tg));
	p.size = sizeof(p);
	p.heap_size = 4096 + 100;	/* not a multiple of 4096 */
	EXPECT_EQ(-EINVAL, accel_tg_create(devs, 1, &p, &tg));
	p.heap_size = 0;
	p.ring_size = 100;		/* not a power of two */
	EXPECT_EQ(-EINVAL, accel_tg_create(devs, 1, &p, &tg));
	p.ring_size = 0;
	p.flags = 1u << 30;		/* unknown flag */
	EXPECT_EQ(-EINVAL, accel_tg_create(devs, 1, &p, &tg));
	EXPECT_EQ(NULL, tg);

	/* the defaults: one queue per engine */
	ASSERT_EQ(0, accel_tg_create(devs, 1, NULL, &tg));
	EXPECT_EQ(2, accel_tg_num_queues(tg, 0));
	EXPECT_EQ(0, accel_tg_num_queues(tg, 1));
	accel_tg_destroy(tg);
	p.flags = 0;
	p.queues_per_device = 3;
	ASSERT_EQ(0, accel_tg_create(devs, 1, &p, &tg));
	EXPECT_EQ(3, accel_tg_num_queues(tg, 0));
	accel_tg_destroy(tg);
	accel_tg_destroy(NULL);
	accel_graph_destroy(NULL);
	accel_graph_exec_destroy(NULL);
}

/* accel_tg_submit() with everything a task can get wrong: -EINVAL, none submitted. */
TEST_F(tg, submit_errors)
{
	struct accel_buffer *b, *small;
	struct accel_tensor x, y, z, bad, m1, m2, m3, xt;
	struct accel_tg_stats st;
	struct accel_task t;
	struct accel_tg *tg;
	uint64_t id = 77;
	void *host, *sh;
	unsigned int i;

	ASSERT_EQ(0, tg_buf(self->dev, 1 << 16, &b, &host));
	ASSERT_EQ(0, tg_buf(self->dev, 4096, &small, &sh));
	ASSERT_EQ(0, tg_new(self->dev, 0, 0, 0, &tg));
	x = tv1(b, 0, ACCEL_DTYPE_U32, 256);
	y = tv1(b, 4096, ACCEL_DTYPE_U32, 256);

	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, NULL, &id));

	/* bad op */
	accel_task_prep_copy(&t, &y, &x, ACCEL_OUTPUT);
	t.op = ACCEL_TASK_HOST + 1;
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	t.op = 0xffffffffu;
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));

	/* argument counts: too few operands, too many arguments */
	accel_task_init(&t, ACCEL_TASK_COPY, "one-arg copy");
	accel_task_arg(&t, &y, ACCEL_OUTPUT);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	accel_task_init(&t, ACCEL_TASK_FILL, "no-arg fill");
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	accel_task_prep_delay(&t, 1000);
	for (i = 0; i < ACCEL_TASK_MAX_ARGS; i++)
		EXPECT_EQ(0, accel_task_arg(&t, &x, ACCEL_INPUT));
	EXPECT_EQ(-E2BIG, accel_task_arg(&t, &x, ACCEL_INPUT));
	t.nargs = ACCEL_TASK_MAX_ARGS + 1;
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));

	/* bad access: unknown mode, operands of the wrong direction, NULL tensor */
	accel_task_prep_copy(&t, &y, &x, ACCEL_OUTPUT);
	t.args[0].access = ACCEL_OUTPUT_NEW + 1;
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	accel_task_prep_copy(&t, &y, &x, ACCEL_INPUT);		/* dst read-only */
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	accel_task_prep_copy(&t, &y, &x, ACCEL_OUTPUT);
	t.args[1].access = ACCEL_OUTPUT;			/* src written */
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	accel_task_prep_fill(&t, &y, ACCEL_INPUT, 1);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	accel_task_prep_copy(&t, &y, NULL, ACCEL_OUTPUT);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	accel_task_prep_delay(&t, 1000);
	accel_task_arg(&t, &x, 7);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));

	/* bad views: dtype, dimensions, stride 0, NULL buffer, outside the buffer */
	bad = x;
	bad.dtype = ACCEL_DTYPE_COUNT;
	accel_task_prep_fill(&t, &bad, ACCEL_OUTPUT, 1);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	bad = x;
	bad.ndims = 0;
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	bad = x;
	bad.ndims = ACCEL_TENSOR_MAX_DIMS + 1;
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	bad = x;
	bad.strides[0] = 0;
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	bad = x;
	bad.buf = NULL;
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	bad = tv1(small, 4096 - 8, ACCEL_DTYPE_U32, 3);		/* one element past the end */
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	bad = tv1(small, 0, ACCEL_DTYPE_U32, 1);
	bad.offset = 1ull << 40;
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	bad = tv1(small, 0, ACCEL_DTYPE_U32, 1);
	bad.offset = 2;						/* misaligned element */
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));

	/* copy: dtype size, shape, innermost stride */
	z = tv1(b, 8192, ACCEL_DTYPE_U16, 256);
	accel_task_prep_copy(&t, &z, &x, ACCEL_OUTPUT);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	z = tv1(b, 8192, ACCEL_DTYPE_U32, 255);
	accel_task_prep_copy(&t, &z, &x, ACCEL_OUTPUT);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	m1 = tv2(b, 0, ACCEL_DTYPE_U32, 16, 16);
	xt = m1;
	accel_tensor_transpose(&xt, 0, 1);			/* innermost stride 16 */
	m2 = tv2(b, 8192, ACCEL_DTYPE_U32, 16, 16);
	accel_task_prep_copy(&t, &m2, &xt, ACCEL_OUTPUT);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	accel_task_prep_copy(&t, &xt, &m2, ACCEL_OUTPUT);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));

	/* reduce: dtype mismatch, unsupported dtype, bad op, shape, non-contiguous */
	x = tv1(b, 0, ACCEL_DTYPE_F32, 256);
	y = tv1(b, 4096, ACCEL_DTYPE_F32, 256);
	z = tv1(b, 8192, ACCEL_DTYPE_I32, 256);
	accel_task_prep_reduce(&t, &z, ACCEL_OUTPUT, &x, &y, DRM_VACCEL_REDOP_SUM);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	z = tv1(b, 8192, ACCEL_DTYPE_F32, 256);
	accel_task_prep_reduce(&t, &z, ACCEL_OUTPUT, &x, &y, DRM_VACCEL_REDOP_MAX + 1);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	z = tv1(b, 8192, ACCEL_DTYPE_F32, 128);
	accel_task_prep_reduce(&t, &z, ACCEL_OUTPUT, &x, &y, DRM_VACCEL_REDOP_SUM);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	m1 = tv1(b, 0, ACCEL_DTYPE_U16, 256);
	m2 = tv1(b, 4096, ACCEL_DTYPE_U16, 256);
	m3 = tv1(b, 8192, ACCEL_DTYPE_U16, 256);
	accel_task_prep_reduce(&t, &m3, ACCEL_OUTPUT, &m1, &m2, DRM_VACCEL_REDOP_SUM);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	m1 = tv2(b, 0, ACCEL_DTYPE_F32, 16, 32);
	m1 = tsub(m1, 0, 16, 0, 16);				/* rows 32 apart */
	m2 = tv2(b, 4096, ACCEL_DTYPE_F32, 16, 16);
	m3 = tv2(b, 8192, ACCEL_DTYPE_F32, 16, 16);
	accel_task_prep_reduce(&t, &m3, ACCEL_OUTPUT, &m1, &m2, DRM_VACCEL_REDOP_SUM);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));

	/* matmul: inner dimensions, C's dtype, 1-D operands, innermost stride */
	m1 = tv2(b, 0, ACCEL_DTYPE_F32, 8, 4);			/* A 8 x 4 */
	m2 = tv2(b, 4096, ACCEL_DTYPE_F32, 5, 6);		/* B 5 x 6: k differs */
	m3 = tv2(b, 8192, ACCEL_DTYPE_F32, 8, 6);
	accel_task_prep_matmul(&t, &m3, ACCEL_OUTPUT, &m1, &m2, 0);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	m2 = tv2(b, 4096, ACCEL_DTYPE_F32, 4, 6);
	m3 = tv2(b, 8192, ACCEL_DTYPE_F32, 8, 7);		/* C n differs */
	accel_task_prep_matmul(&t, &m3, ACCEL_OUTPUT, &m1, &m2, 0);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	m3 = tv2(b, 8192, ACCEL_DTYPE_I32, 8, 6);		/* C not f32 */
	accel_task_prep_matmul(&t, &m3, ACCEL_OUTPUT, &m1, &m2, 0);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	m3 = tv1(b, 8192, ACCEL_DTYPE_F32, 48);			/* 1-D */
	accel_task_prep_matmul(&t, &m3, ACCEL_OUTPUT, &m1, &m2, 0);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	m3 = tv2(b, 8192, ACCEL_DTYPE_F32, 8, 6);
	xt = tv2(b, 0, ACCEL_DTYPE_F32, 4, 8);
	accel_tensor_transpose(&xt, 0, 1);			/* A 8 x 4, innermost stride 8 */
	accel_task_prep_matmul(&t, &m3, ACCEL_OUTPUT, &xt, &m2, 0);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));

	/* delay beyond 1 s, host task without a function */
	accel_task_prep_delay(&t, 1000000001ull);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	accel_task_prep_host(&t, NULL, NULL);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));

	/* device and queue out of range */
	x = tv1(b, 0, ACCEL_DTYPE_U32, 256);
	accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 1);
	t.device = 1;
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	t.device = ACCEL_TG_AUTO;
	t.queue = accel_tg_num_queues(tg, 0);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));

	/* OUTPUT_NEW on an op that only reads it, and with a bad shape */
	accel_task_prep_copy(&t, &y, &x, ACCEL_OUTPUT);
	t.args[1].access = ACCEL_OUTPUT_NEW;
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));
	memset(&z, 0, sizeof(z));
	z.dtype = ACCEL_DTYPE_U32;
	z.ndims = 0;
	accel_task_prep_fill(&t, &z, ACCEL_OUTPUT_NEW, 1);
	EXPECT_EQ(-EINVAL, accel_tg_submit(tg, &t, &id));

	tg_stats(tg, &st);
	EXPECT_EQ(0, st.tasks);
	EXPECT_EQ(0, st.heap_allocs);
	EXPECT_EQ(77, id);					/* untouched on failure */
	EXPECT_EQ(-EINVAL, accel_tg_task_done(tg, 1ull << 40));
	EXPECT_EQ(-EINVAL, accel_tg_task_wait(tg, 1ull << 40, SEC));

	/* and a good task still runs */
	accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 0x5a5a5a5a);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &id));
	EXPECT_EQ(0, accel_tg_task_wait(tg, id, 10 * SEC));
	EXPECT_EQ(1, accel_tg_task_done(tg, id));
	EXPECT_EQ(0x5a5a5a5au, ((uint32_t *)host)[255]);
	EXPECT_EQ(0, ((uint32_t *)host)[256]);
	accel_tg_destroy(tg);
	accel_buffer_destroy(small);
	accel_buffer_destroy(b);
}

/* A buffer of another device: -ENOENT; binding to it: -EINVAL. */
TEST_F(tg, foreign_device)
{
	struct accel_device *other;
	struct accel_buffer *b, *ob, *ob2;
	struct accel_tensor x, y, ox;
	struct accel_binding bind;
	struct accel_graph_exec *ge;
	struct accel_graph *g;
	struct accel_tg *tg;
	struct accel_task t;
	void *h, *oh, *oh2;
	uint64_t id;
	void *p;
	int ret;

	lib_del_device(LIB_ID_B);
	ASSERT_EQ(0, lib_fresh_open(LIB_ID_B, "memory=16M", &other));
	ASSERT_EQ(0, tg_buf(self->dev, 8192, &b, &h));
	ASSERT_EQ(0, tg_buf(other, 8192, &ob, &oh));
	ASSERT_EQ(0, tg_buf(other, 8192, &ob2, &oh2));
	ASSERT_EQ(0, tg_new(self->dev, 0, 0, 0, &tg));
	x = tv1(b, 0, ACCEL_DTYPE_U32, 256);
	y = tv1(b, 4096, ACCEL_DTYPE_U32, 256);
	ox = tv1(ob, 0, ACCEL_DTYPE_U32, 256);

	accel_task_prep_fill(&t, &ox, ACCEL_OUTPUT, 1);
	EXPECT_EQ(-ENOENT, accel_tg_submit(tg, &t, &id));
	accel_task_prep_copy(&t, &x, &ox, ACCEL_OUTPUT);
	EXPECT_EQ(-ENOENT, accel_tg_submit(tg, &t, &id));
	accel_task_prep_delay(&t, 1000);
	accel_task_arg(&t, &x, ACCEL_INPUT);
	accel_task_arg(&t, &ox, ACCEL_INPUT);
	EXPECT_EQ(-ENOENT, accel_tg_submit(tg, &t, &id));
	/* the header names no errno for this one: -ENOENT as submit, or -EINVAL */
	ret = accel_tg_map(tg, &ox, ACCEL_MAP_READ, SEC, &p);
	EXPECT_TRUE(ret == -ENOENT || ret == -EINVAL) TH_LOG("map: %d", ret);
	EXPECT_EQ(-ENOENT, accel_tg_release(tg, &ox));

	/* a binding to a buffer of another device */
	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	accel_task_prep_copy(&t, &y, &x, ACCEL_OUTPUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	ASSERT_EQ(0, accel_graph_instantiate(g, &ge));
	bind.from = b;
	bind.to = ob2;
	EXPECT_EQ(-EINVAL, accel_graph_launch(ge, &bind, 1));
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);

	accel_tg_destroy(tg);
	accel_buffer_destroy(ob2);
	accel_buffer_destroy(ob);
	accel_buffer_destroy(b);
	accel_device_close(other);
	lib_del_device(LIB_ID_B);
}

/* release, map/unmap, capture, launch, trace, worker: their errors. */
TEST_F(tg, call_errors)
{
	struct accel_buffer *b, *b2, *tiny, *unused;
	struct accel_tensor x, y, n, bad, xs[ACCEL_TG_MAX_MAPS + 1];
	struct accel_binding bind[DRM_VACCEL_EXEC_MAX_BINDINGS + 1];
	struct accel_graph_exec *ge = NULL;
	struct accel_graph *g = NULL, *g2;
	struct accel_tg *tg;
	struct accel_task t;
	void *h, *h2, *ht, *hu, *p, *ptrs[ACCEL_TG_MAX_MAPS + 1];
	uint64_t id;
	unsigned int i;
	FILE *f;
	char *fbuf = NULL;
	size_t flen = 0;
	int ret;

	ASSERT_EQ(0, tg_buf(self->dev, 1 << 16, &b, &h));
	ASSERT_EQ(0, tg_buf(self->dev, 1 << 16, &b2, &h2));
	ASSERT_EQ(0, tg_buf(self->dev, 4096, &tiny, &ht));
	ASSERT_EQ(0, tg_buf(self->dev, 1 << 16, &unused, &hu));
	ASSERT_EQ(0, tg_new(self->dev, 0, 0, 1 << 20, &tg));
	x = tv1(b, 0, ACCEL_DTYPE_U32, 4096);
	y = tv1(b, 1 << 15, ACCEL_DTYPE_U32, 4096);

	/* release: not a heap tensor; twice */
	EXPECT_EQ(-ENOENT, accel_tg_release(tg, &x));
	memset(&n, 0, sizeof(n));
	n.dtype = ACCEL_DTYPE_U32;
	n.ndims = 1;
	n.shape[0] = 64;
	accel_task_prep_fill(&t, &n, ACCEL_OUTPUT_NEW, 3);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &id));
	EXPECT_NE(NULL, n.buf);
	EXPECT_EQ(1, n.strides[0]);
	EXPECT_EQ(0, accel_tg_release(tg, &n));
	EXPECT_EQ(-EINVAL, accel_tg_release(tg, &n));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));

	/* map: flags, view, too many maps; unmap: unknown and twice */
	EXPECT_EQ(-EINVAL, accel_tg_map(tg, &x, 0, SEC, &p));
	EXPECT_EQ(-EINVAL, accel_tg_map(tg, &x, 1u << 2, SEC, &p));
	bad = x;
	bad.strides[0] = 0;
	EXPECT_EQ(-EINVAL, accel_tg_map(tg, &bad, ACCEL_MAP_READ, SEC, &p));
	bad = tv1(tiny, 4000, ACCEL_DTYPE_U32, 100);		/* past the end */
	EXPECT_EQ(-EINVAL, accel_tg_map(tg, &bad, ACCEL_MAP_READ, SEC, &p));
	EXPECT_EQ(-ENOENT, accel_tg_unmap(tg, h));
	/* NULL: the header names -ENOENT only, the library says -EINVAL */
	ret = accel_tg_unmap(tg, NULL);
	EXPECT_TRUE(ret == -ENOENT || ret == -EINVAL) TH_LOG("unmap(NULL): %d", ret);
	for (i = 0; i <= ACCEL_TG_MAX_MAPS; i++) {
		xs[i] = tv1(b, 64 * i, ACCEL_DTYPE_U32, 16);
		((uint32_t *)h)[16 * i] = 0xabc0 + i;
	}
	for (i = 0; i < ACCEL_TG_MAX_MAPS; i++) {
		ASSERT_EQ(0, accel_tg_map(tg, &xs[i], ACCEL_MAP_READ, SEC, &ptrs[i]));
		EXPECT_EQ(0xabc0 + i, *(uint32_t *)ptrs[i]);
	}
	EXPECT_EQ(-EBUSY, accel_tg_map(tg, &xs[i], ACCEL_MAP_READ, SEC, &ptrs[i]));
	for (i = 0; i < ACCEL_TG_MAX_MAPS; i++)
		EXPECT_EQ(0, accel_tg_unmap(tg, ptrs[i]));
	EXPECT_EQ(-ENOENT, accel_tg_unmap(tg, ptrs[0]));

	/* capture */
	EXPECT_EQ(-EINVAL, accel_tg_capture_end(tg, &g));
	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	EXPECT_EQ(-EBUSY, accel_tg_capture_begin(tg));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g2));		/* empty */
	EXPECT_EQ(0, accel_graph_num_tasks(g2));
	EXPECT_EQ(-EINVAL, accel_graph_instantiate(g2, &ge));
	accel_graph_destroy(g2);
	EXPECT_EQ(-EINVAL, accel_tg_capture_end(tg, &g));

	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	accel_task_prep_copy(&t, &y, &x, ACCEL_OUTPUT);
	id = 5;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &id));
	EXPECT_EQ(0, id);					/* 0 while capturing */
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	EXPECT_EQ(1, accel_graph_num_tasks(g));
	ASSERT_EQ(0, accel_graph_instantiate(g, &ge));

	/* launch: bindings */
	bind[0].from = unused;					/* not used by the graph */
	bind[0].to = b2;
	EXPECT_EQ(-EINVAL, accel_graph_launch(ge, bind, 1));
	bind[0].from = b;
	bind[0].to = tiny;					/* smaller than the graph's use */
	EXPECT_EQ(-EINVAL, accel_graph_launch(ge, bind, 1));
	bind[0].to = NULL;
	EXPECT_EQ(-EINVAL, accel_graph_launch(ge, bind, 1));
	EXPECT_EQ(-EINVAL, accel_graph_launch(ge, NULL, 1));
	for (i = 0; i <= DRM_VACCEL_EXEC_MAX_BINDINGS; i++) {
		bind[i].from = b;
		bind[i].to = b2;
	}
	EXPECT_EQ(-EINVAL, accel_graph_launch(ge, bind, DRM_VACCEL_EXEC_MAX_BINDINGS + 1));
	/* a good launch with a binding: the copy runs inside b2 */
	for (i = 0; i < 4096; i++)
		((uint32_t *)h2)[i] = i + 7;
	ASSERT_EQ(0, accel_graph_launch(ge, bind, 1));
	ASSERT_EQ(0, accel_graph_exec_wait(ge, 10 * SEC));
	EXPECT_EQ(7, ((uint32_t *)h2)[4096 * 2]);
	EXPECT_EQ(4095 + 7, ((uint32_t *)h2)[4096 * 2 + 4095]);
	EXPECT_EQ(0, ((uint32_t *)h)[4096 * 2]);		/* b untouched */
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);

	/* trace without ACCEL_TG_TRACE; the worker twice */
	f = open_memstream(&fbuf, &flen);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(-EINVAL, accel_tg_trace_write(tg, f));
	fclose(f);
	free(fbuf);
	ASSERT_EQ(0, accel_tg_start_worker(tg));
	EXPECT_EQ(-EBUSY, accel_tg_start_worker(tg));

	accel_tg_destroy(tg);
	accel_buffer_destroy(unused);
	accel_buffer_destroy(tiny);
	accel_buffer_destroy(b2);
	accel_buffer_destroy(b);
}

/* FILL of 2-D blocks of several dtypes: the view's elements, nothing else. */
TEST_F(tg, eager_fill)
{
	struct accel_buffer *b;
	struct accel_tensor m, v8, v64;
	struct accel_tg *tg;
	struct accel_task t;
	uint32_t *u32;
	uint8_t *u8;
	uint64_t *u64;
	unsigned int r, c, i;
	void *h;

	ASSERT_EQ(0, tg_buf(self->dev, 1 << 16, &b, &h));
	ASSERT_EQ(0, tg_new(self->dev, 0, 0, 0, &tg));
	u32 = h;
	u8 = (uint8_t *)h + 4096;
	u64 = (uint64_t *)((char *)h + 12288);

	m = tsub(tv2(b, 0, ACCEL_DTYPE_U32, 16, 16), 2, 8, 3, 10);
	accel_task_prep_fill(&t, &m, ACCEL_OUTPUT, 0xA5A5F00Dull);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	v8 = tsub(tv2(b, 4096, ACCEL_DTYPE_U8, 10, 10), 1, 5, 0, 7);
	accel_tensor_slice(&v8, 0, 0, 3, 2);			/* rows 1, 3, 5 */
	accel_task_prep_fill(&t, &v8, ACCEL_OUTPUT, 0x34);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	v64 = tv1(b, 12288, ACCEL_DTYPE_U64, 100);
	accel_task_prep_fill(&t, &v64, ACCEL_OUTPUT, 0x0102030405060708ull);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));

	for (r = 0; r < 16; r++)
		for (c = 0; c < 16; c++) {
			uint32_t want = (r >= 2 && r < 10 && c >= 3 && c < 13) ? 0xA5A5F00Du : 0;

			ASSERT_EQ(want, u32[r * 16 + c]) TH_LOG("u32 (%u, %u)", r, c);
		}
	for (r = 0; r < 10; r++)
		for (c = 0; c < 10; c++)
			ASSERT_EQ((r == 1 || r == 3 || r == 5) && c < 7 ? 0x34 : 0, u8[r * 10 + c])
				TH_LOG("u8 (%u, %u)", r, c);
	for (i = 0; i < 101; i++)
		ASSERT_EQ(i < 100 ? 0x0102030405060708ull : 0, u64[i]) TH_LOG("u64 %u", i);
	accel_tg_destroy(tg);
	accel_buffer_destroy(b);
}

/*
 * FILL as the header defines it: "every element of args[0] = the
 * pattern's low bytes (the dtype's size)", for any view: a pattern with
 * bits above the element size, a step slice, a transposed column.
 */
TEST_F(tg, eager_fill_any_view)
{
	struct accel_buffer *b;
	struct accel_tensor m, v8, v16;
	struct accel_tg *tg;
	struct accel_task t;
	uint32_t *u32;
	uint8_t *u8;
	uint16_t *u16;
	unsigned int r, c, i;
	void *h;

	ASSERT_EQ(0, tg_buf(self->dev, 1 << 16, &b, &h));
	ASSERT_EQ(0, tg_new(self->dev, 0, 0, 0, &tg));
	u32 = h;
	u8 = (uint8_t *)h + 4096;
	u16 = (uint16_t *)((char *)h + 8192);

	m = tv1(b, 0, ACCEL_DTYPE_U32, 16);
	accel_task_prep_fill(&t, &m, ACCEL_OUTPUT, 0xA5A5F00Dull | (0xffull << 32));
	EXPECT_EQ(0, accel_tg_submit(tg, &t, NULL));
	v8 = tv1(b, 4096, ACCEL_DTYPE_U8, 100);
	accel_tensor_slice(&v8, 0, 1, 33, 3);			/* 1, 4, ..., 97 */
	accel_task_prep_fill(&t, &v8, ACCEL_OUTPUT, 0x34);
	EXPECT_EQ(0, accel_tg_submit(tg, &t, NULL));
	v16 = tv2(b, 8192, ACCEL_DTYPE_U16, 8, 8);
	accel_tensor_transpose(&v16, 0, 1);
	accel_tensor_slice(&v16, 0, 2, 1, 1);			/* column 2 of the 8 x 8 */
	accel_task_prep_fill(&t, &v16, ACCEL_OUTPUT, 0xBEEF);
	EXPECT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	for (i = 0; i < 17; i++)
		ASSERT_EQ(i < 16 ? 0xA5A5F00Du : 0, u32[i]) TH_LOG("u32 %u", i);
	for (i = 0; i < 128; i++)
		ASSERT_EQ((i >= 1 && i <= 97 && (i - 1) % 3 == 0) ? 0x34 : 0, u8[i])
			TH_LOG("u8 %u", i);
	for (r = 0; r < 8; r++)
		for (c = 0; c < 8; c++)
			ASSERT_EQ(c == 2 ? 0xBEEF : 0, u16[r * 8 + c]) TH_LOG("u16 (%u, %u)", r, c);
	accel_tg_destroy(tg);
	accel_buffer_destroy(b);
}

/* COPY of strided, step-sliced and transposed 2-D views, checked row by row. */
TEST_F(tg, eager_copy_views)
{
	enum { N = 64 };
	struct accel_buffer *sb, *db;
	struct accel_tensor s, sv, dv;
	struct accel_tg *tg;
	struct accel_task t;
	uint32_t *S, *D;
	unsigned int r, c;
	void *hs, *hd;

	ASSERT_EQ(0, tg_buf(self->dev, N * N * 4, &sb, &hs));
	ASSERT_EQ(0, tg_buf(self->dev, 4 * N * N * 4, &db, &hd));
	S = hs;
	D = hd;
	for (r = 0; r < N; r++)
		for (c = 0; c < N; c++)
			S[r * N + c] = r * 1000 + c;
	ASSERT_EQ(0, tg_new(self->dev, 0, 0, 0, &tg));
	s = tv2(sb, 0, ACCEL_DTYPE_U32, N, N);

	/* block [8, 40) x [4, 36) to D0's [16, 48) x [20, 52) */
	sv = tsub(s, 8, 32, 4, 32);
	dv = tsub(tv2(db, 0, ACCEL_DTYPE_U32, N, N), 16, 32, 20, 32);
	accel_task_prep_copy(&t, &dv, &sv, ACCEL_OUTPUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	/* even rows of S to D1 (32 x 64) */
	sv = s;
	accel_tensor_slice(&sv, 0, 0, 32, 2);
	dv = tv2(db, N * N * 4, ACCEL_DTYPE_U32, 32, N);
	accel_task_prep_copy(&t, &dv, &sv, ACCEL_OUTPUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	/* column 5 of S to row 3 of D2, through a transposed view of that row */
	sv = tsub(s, 0, N, 5, 1);				/* (64, 1), strides (64, 1) */
	dv = tsub(tv2(db, 2 * N * N * 4, ACCEL_DTYPE_U32, N, N), 3, 1, 0, N);
	accel_tensor_transpose(&dv, 0, 1);			/* (64, 1), strides (1, 64) */
	accel_task_prep_copy(&t, &dv, &sv, ACCEL_OUTPUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	/* every other column of S's rows 1, 4, 7, ... into D3's step-sliced rows */
	sv = s;
	accel_tensor_slice(&sv, 0, 1, 21, 3);
	accel_tensor_slice(&sv, 1, 0, 1, 1);
	dv = tv2(db, 3 * N * N * 4, ACCEL_DTYPE_U32, N, N);
	accel_tensor_slice(&dv, 0, 0, 21, 3);
	accel_tensor_slice(&dv, 1, 7, 1, 1);
	accel_task_prep_copy(&t, &dv, &sv, ACCEL_OUTPUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));

	for (r = 0; r < N; r++) {
		for (c = 0; c < N; c++) {
			uint32_t w0 = 0, w1 = 0, w2 = 0, w3 = 0;

			if (r >= 16 && r < 48 && c >= 20 && c < 52)
				w0 = S[(r - 16 + 8) * N + (c - 20 + 4)];
			if (r < 32)
				w1 = S[2 * r * N + c];
			if (r == 3)
				w2 = S[c * N + 5];
			if (r % 3 == 0 && r / 3 < 21 && c == 7)
				w3 = S[(1 + r) * N];
			ASSERT_EQ(w0, D[r * N + c]) TH_LOG("block (%u, %u)", r, c);
			ASSERT_EQ(w1, D[N * N + r * N + c]) TH_LOG("step rows (%u, %u)", r, c);
			ASSERT_EQ(w2, D[2 * N * N + r * N + c]) TH_LOG("transposed (%u, %u)", r, c);
			ASSERT_EQ(w3, D[3 * N * N + r * N + c]) TH_LOG("steps (%u, %u)", r, c);
		}
	}
	accel_tg_destroy(tg);
	accel_buffer_destroy(db);
	accel_buffer_destroy(sb);
}

/* REDUCE: f32 sum exactly as the host's f32 sum; i32 max; into one of its inputs. */
TEST_F(tg, eager_reduce)
{
	enum { N = 4096 };
	struct accel_buffer *b;
	struct accel_tensor a, bb, d, ia, ib, id;
	struct accel_tg *tg;
	struct accel_task t;
	float *fa, *fb, *fd, want;
	int32_t *xa, *xb, *xd;
	unsigned int i;
	void *h;

	ASSERT_EQ(0, tg_buf(self->dev, 8 * N * 4, &b, &h));
	fa = h;
	fb = fa + N;
	fd = fb + N;
	xa = (int32_t *)(fd + N);
	xb = xa + N;
	xd = xb + N;
	for (i = 0; i < N; i++) {
		fa[i] = (float)i * 0.37f - 100.0f;
		fb[i] = 1.0f / (float)(i + 1);
		xa[i] = (int32_t)(i * 7919) - 5000;
		xb[i] = (int32_t)(N - i) * 3;
	}
	ASSERT_EQ(0, tg_new(self->dev, 0, 0, 0, &tg));
	a = tv1(b, 0, ACCEL_DTYPE_F32, N);
	bb = tv1(b, 4 * N, ACCEL_DTYPE_F32, N);
	d = tv1(b, 8 * N, ACCEL_DTYPE_F32, N);
	accel_task_prep_reduce(&t, &d, ACCEL_OUTPUT, &a, &bb, DRM_VACCEL_REDOP_SUM);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ia = tv2(b, 12 * N, ACCEL_DTYPE_I32, 64, N / 64);
	ib = tv2(b, 16 * N, ACCEL_DTYPE_I32, 64, N / 64);
	id = tv2(b, 20 * N, ACCEL_DTYPE_I32, 64, N / 64);
	accel_task_prep_reduce(&t, &id, ACCEL_OUTPUT, &ia, &ib, DRM_VACCEL_REDOP_MAX);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	for (i = 0; i < N; i++) {
		want = fa[i] + fb[i];
		ASSERT_EQ(0, memcmp(&want, &fd[i], 4)) TH_LOG("f32 %u: %g vs %g", i, want, fd[i]);
		ASSERT_EQ(xa[i] > xb[i] ? xa[i] : xb[i], xd[i]) TH_LOG("i32 %u", i);
	}
	/* a = a + b twice, INOUT: the second waits for the first */
	accel_task_prep_reduce(&t, &a, ACCEL_INOUT, &a, &bb, DRM_VACCEL_REDOP_SUM);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	for (i = 0; i < N; i++) {
		float w = ((float)i * 0.37f - 100.0f + fb[i]) + fb[i];

		ASSERT_EQ(0, memcmp(&w, &fa[i], 4)) TH_LOG("inout %u: %g vs %g", i, w, fa[i]);
	}
	accel_tg_destroy(tg);
	accel_buffer_destroy(b);
}

/* MATMUL f32 of strided views (leading dimensions > width), plain and accumulating. */
TEST_F(tg, eager_matmul)
{
	enum { M = 33, K = 47, NN = 29, LDA = 64, LDB = 40, LDC = 32 };
	struct accel_buffer *b;
	struct accel_tensor a, bm, c;
	struct accel_tg *tg;
	struct accel_task t;
	float *A, *B, *C, ref[M][NN];
	unsigned int i, j, k, pass;
	void *h;

	ASSERT_EQ(0, tg_buf(self->dev, 1 << 16, &b, &h));
	A = h;
	B = A + M * LDA;
	C = B + K * LDB;
	for (i = 0; i < M * LDA; i++)
		A[i] = (float)((int)(i * 37 % 101) - 50) / 16.0f;
	for (i = 0; i < K * LDB; i++)
		B[i] = (float)((int)(i * 53 % 97) - 48) / 8.0f;
	for (i = 0; i < M * LDC; i++)
		C[i] = -1.0f;
	ASSERT_EQ(0, tg_new(self->dev, 0, 0, 0, &tg));
	a = tsub(tv2(b, 0, ACCEL_DTYPE_F32, M, LDA), 0, M, 3, K);
	bm = tsub(tv2(b, 4ull * M * LDA, ACCEL_DTYPE_F32, K, LDB), 0, K, 5, NN);
	c = tsub(tv2(b, 4ull * (M * LDA + K * LDB), ACCEL_DTYPE_F32, M, LDC), 0, M, 1, NN);
	for (pass = 0; pass < 2; pass++) {
		accel_task_prep_matmul(&t, &c, pass ? ACCEL_INOUT : ACCEL_OUTPUT, &a, &bm, pass);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	}
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	for (i = 0; i < M; i++)
		for (j = 0; j < NN; j++) {
			double s = 0;

			for (k = 0; k < K; k++)
				s += (double)A[i * LDA + 3 + k] * B[k * LDB + 5 + j];
			ref[i][j] = (float)(2 * s);
		}
	for (i = 0; i < M; i++) {
		for (j = 0; j < LDC; j++) {
			float got = C[i * LDC + j];

			if (j < 1 || j >= 1 + NN) {
				ASSERT_EQ(-1.0f, got) TH_LOG("outside C (%u, %u)", i, j);
				continue;
			}
			ASSERT_GE(1e-3, fabsf(got - ref[i][j - 1]) / (1.0f + fabsf(ref[i][j - 1])))
				TH_LOG("C (%u, %u): %g vs %g", i, j, got, ref[i][j - 1]);
		}
	}
	accel_tg_destroy(tg);
	accel_buffer_destroy(b);
}

/* DELAY keeps its queue busy for its time; the next task on that queue waits. */
TEST_F(tg, eager_delay)
{
	struct accel_buffer *b;
	struct accel_tensor x;
	struct accel_tg *tg;
	struct accel_task t;
	uint64_t d, f;
	int64_t t0, el;
	void *h;

	ASSERT_EQ(0, tg_buf(self->dev, 4096, &b, &h));
	ASSERT_EQ(0, tg_new(self->dev, 0, 0, 0, &tg));
	x = tv1(b, 0, ACCEL_DTYPE_U32, 16);
	t0 = tg_now_ns();
	accel_task_prep_delay(&t, 300 * MS);
	t.queue = 0;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &d));
	accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 9);
	t.queue = 0;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &f));
	EXPECT_EQ(0, accel_tg_task_done(tg, d));
	EXPECT_EQ(0, accel_tg_task_done(tg, f));
	EXPECT_EQ(0, ((uint32_t *)h)[0]);
	EXPECT_EQ(-ETIMEDOUT, accel_tg_task_wait(tg, f, 50 * MS));
	ASSERT_EQ(0, accel_tg_task_wait(tg, f, 10 * SEC));
	el = tg_now_ns() - t0;
	EXPECT_LE(300 * MS, el);
	EXPECT_EQ(1, accel_tg_task_done(tg, d));
	EXPECT_EQ(9, ((uint32_t *)h)[15]);
	accel_tg_destroy(tg);
	accel_buffer_destroy(b);
}

/*
 * OUTPUT_NEW: the library fills buf, offset and strides; release + sync
 * brings the heap back to 0 used; many more rounds than the heap holds
 * reuse it; a full heap of tensors the program holds is -EDEADLK.
 */
TEST_F(tg, output_new_reuse)
{
	enum { HEAP = 64 << 10, ELEMS = 2048, ROUNDS = 40 };	/* 8 KiB tensors */
	struct accel_buffer *ob;
	struct accel_tensor n[8], o, extra;
	struct accel_tg_stats st;
	struct accel_tg *tg;
	struct accel_task t;
	unsigned int r, i, held = 0;
	uint32_t *out;
	void *h;
	int ret;

	ASSERT_EQ(0, tg_buf(self->dev, ROUNDS * ELEMS * 4, &ob, &h));
	out = h;
	ASSERT_EQ(0, tg_new(self->dev, 0, 0, HEAP, &tg));
	for (r = 0; r < ROUNDS; r++) {
		struct accel_tensor *nt = &n[r % 2];

		memset(nt, 0, sizeof(*nt));
		nt->dtype = ACCEL_DTYPE_U32;
		nt->ndims = 2;
		nt->shape[0] = 32;
		nt->shape[1] = ELEMS / 32;
		accel_task_prep_fill(&t, nt, ACCEL_OUTPUT_NEW, 0x1000 + r);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL)) TH_LOG("round %u", r);
		ASSERT_NE(NULL, nt->buf);
		EXPECT_EQ(ELEMS / 32, nt->strides[0]);
		EXPECT_EQ(1, nt->strides[1]);
		EXPECT_EQ(0, nt->offset % 4);
		o = tv2(ob, 4ull * ELEMS * r, ACCEL_DTYPE_U32, 32, ELEMS / 32);
		accel_task_prep_copy(&t, &o, nt, ACCEL_OUTPUT);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		ASSERT_EQ(0, accel_tg_release(tg, nt));
	}
	ASSERT_EQ(0, accel_tg_sync(tg, 20 * SEC));
	for (r = 0; r < ROUNDS; r++)
		for (i = 0; i < ELEMS; i++)
			ASSERT_EQ(0x1000 + r, out[r * ELEMS + i]) TH_LOG("round %u elem %u", r, i);
	tg_stats(tg, &st);
	EXPECT_EQ(0, st.heap_used);
	EXPECT_EQ(ROUNDS, st.heap_allocs);
	EXPECT_EQ(ROUNDS, st.heap_reclaimed);
	EXPECT_LE(ELEMS * 4, st.heap_high_water);
	EXPECT_GE(HEAP, st.heap_high_water);

	/* hold tensors until the heap is full: the next one can never fit */
	for (i = 0; i < 8; i++) {
		memset(&n[i], 0, sizeof(n[i]));
		n[i].dtype = ACCEL_DTYPE_U32;
		n[i].ndims = 1;
		n[i].shape[0] = ELEMS;
		accel_task_prep_fill(&t, &n[i], ACCEL_OUTPUT_NEW, i);
		ret = accel_tg_submit(tg, &t, NULL);
		if (ret == -EDEADLK)
			break;
		ASSERT_EQ(0, ret);
		held++;
	}
	ASSERT_LE(6, held);		/* at most some alignment lost */
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	memset(&extra, 0, sizeof(extra));
	extra.dtype = ACCEL_DTYPE_U32;
	extra.ndims = 1;
	extra.shape[0] = ELEMS;
	accel_task_prep_fill(&t, &extra, ACCEL_OUTPUT_NEW, 1);
	if (held == 8)
		EXPECT_EQ(-EDEADLK, accel_tg_submit(tg, &t, NULL));
	/* a tensor larger than the heap */
	extra.shape[0] = HEAP;
	EXPECT_NE(0, accel_tg_submit(tg, &t, NULL));
	for (i = 0; i < held; i++)
		ASSERT_EQ(0, accel_tg_release(tg, &n[i]));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	tg_stats(tg, &st);
	EXPECT_EQ(0, st.heap_used);
	/* and the heap works again */
	extra.shape[0] = ELEMS;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_release(tg, &extra));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	tg_stats(tg, &st);
	EXPECT_EQ(0, st.heap_used);
	accel_tg_destroy(tg);
	accel_buffer_destroy(ob);
}

struct host_rec {
	pthread_t thread;
	int runs;
	uint32_t seen;			/* what the function read */
	uint32_t *src, *dst;		/* read one, write the other */
	unsigned int n;
};

static void host_fn(void *arg)
{
	struct host_rec *r = arg;
	unsigned int i;

	r->thread = pthread_self();
	r->runs++;
	r->seen = r->src[r->n - 1];
	for (i = 0; i < r->n; i++)
		r->dst[i] = r->src[i] + 1;
}

/*
 * Host tasks: after their device inputs (a slow fill), before the device
 * tasks that read their outputs; on the waiting thread, or on the worker
 * with nobody waiting.
 */
static void host_tasks(struct __test_metadata *_metadata, struct accel_device *dev, int worker)
{
	enum { N = 1024 };
	struct accel_buffer *b;
	struct accel_tensor x, y, z;
	struct accel_tg_stats st;
	struct host_rec rec = { .n = N };
	struct accel_tg *tg;
	struct accel_task t;
	uint64_t hid, cid;
	uint32_t *u;
	unsigned int i;
	void *h;

	ASSERT_EQ(0, tg_buf(dev, 3 * N * 4, &b, &h));
	u = h;
	rec.src = u;
	rec.dst = u + N;
	ASSERT_EQ(0, tg_new(dev, 0, 0, 0, &tg));
	if (worker)
		ASSERT_EQ(0, accel_tg_start_worker(tg));
	x = tv1(b, 0, ACCEL_DTYPE_U32, N);
	y = tv1(b, 4 * N, ACCEL_DTYPE_U32, N);
	z = tv1(b, 8 * N, ACCEL_DTYPE_U32, N);
	accel_task_prep_delay(&t, 200 * MS);
	accel_task_arg(&t, &x, ACCEL_OUTPUT);
	t.queue = 0;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 41);
	t.queue = 0;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	accel_task_prep_host(&t, host_fn, &rec);
	accel_task_arg(&t, &x, ACCEL_INPUT);
	accel_task_arg(&t, &y, ACCEL_OUTPUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &hid));
	accel_task_prep_copy(&t, &z, &y, ACCEL_OUTPUT);
	t.queue = 1;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &cid));
	if (worker) {
		/* nobody waits: the worker runs it */
		ASSERT_EQ(1, tg_poll_done(tg, cid, 10 * SEC));
		EXPECT_EQ(1, accel_tg_task_done(tg, hid));
		EXPECT_EQ(0, pthread_equal(rec.thread, pthread_self()));
	} else {
		ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
		EXPECT_NE(0, pthread_equal(rec.thread, pthread_self()));
	}
	EXPECT_EQ(1, rec.runs);
	EXPECT_EQ(41, rec.seen);			/* after the fill */
	for (i = 0; i < N; i++)
		ASSERT_EQ(42, u[2 * N + i]) TH_LOG("copy of the host's output, %u", i);
	tg_stats(tg, &st);
	EXPECT_EQ(1, st.host_tasks);
	EXPECT_EQ(4, st.tasks);
	EXPECT_LE(1, st.waits);			/* queue 1 waits for the host task */
	accel_tg_destroy(tg);
	accel_buffer_destroy(b);
}

TEST_F(tg, host_task_waiting_thread)
{
	host_tasks(_metadata, self->dev, 0);
}

TEST_F(tg, host_task_worker)
{
	host_tasks(_metadata, self->dev, 1);
}

/*
 * Map for reading waits for the writers of the tensor and nothing else:
 * not for a long DELAY writing another tensor, nor for a DELAY reading
 * it. Map for writing also waits for that reader.
 */
TEST_F(tg, map_waits_exactly)
{
	struct accel_buffer *b;
	struct accel_tensor x, y;
	struct accel_tg_stats st;
	struct accel_tg *tg;
	struct accel_task t;
	uint64_t dy, fx, rx;
	int64_t t0;
	uint32_t *p;
	void *h;

	ASSERT_EQ(0, tg_buf(self->dev, 8192, &b, &h));
	ASSERT_EQ(0, tg_new(self->dev, 0, 0, 0, &tg));
	x = tv1(b, 0, ACCEL_DTYPE_U32, 256);
	y = tv1(b, 4096, ACCEL_DTYPE_U32, 256);

	accel_task_prep_delay(&t, 1000 * MS);
	accel_task_arg(&t, &y, ACCEL_OUTPUT);
	t.queue = 0;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &dy));
	accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 5);
	t.queue = 1;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &fx));
	t0 = tg_now_ns();
	ASSERT_EQ(0, accel_tg_map(tg, &x, ACCEL_MAP_READ, 10 * SEC, (void **)&p));
	EXPECT_EQ(0, accel_tg_task_done(tg, dy)) TH_LOG("map waited %lld ms",
							 (long long)(tg_now_ns() - t0) / MS);
	EXPECT_EQ(1, accel_tg_task_done(tg, fx));
	EXPECT_EQ(5, p[0]);
	EXPECT_EQ(5, p[255]);
	EXPECT_EQ(0, accel_tg_unmap(tg, p));
	/* the map of y waits for the DELAY writing it */
	ASSERT_EQ(0, accel_tg_map(tg, &y, ACCEL_MAP_READ, 10 * SEC, (void **)&p));
	EXPECT_EQ(1, accel_tg_task_done(tg, dy));
	EXPECT_LE(900 * MS, tg_now_ns() - t0);
	EXPECT_EQ(0, accel_tg_unmap(tg, p));

	/* a slow reader of x: a read map does not wait for it, a write map does */
	accel_task_prep_delay(&t, 600 * MS);
	accel_task_arg(&t, &x, ACCEL_INPUT);
	t.queue = 0;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &rx));
	ASSERT_EQ(0, accel_tg_map(tg, &x, ACCEL_MAP_READ, 10 * SEC, (void **)&p));
	EXPECT_EQ(0, accel_tg_task_done(tg, rx));
	EXPECT_EQ(0, accel_tg_unmap(tg, p));
	/* the bytes next to x are not x: no wait either */
	y = tv1(b, 1024, ACCEL_DTYPE_U32, 16);
	ASSERT_EQ(0, accel_tg_map(tg, &y, ACCEL_MAP_WRITE, 10 * SEC, (void **)&p));
	EXPECT_EQ(0, accel_tg_task_done(tg, rx));
	EXPECT_EQ(0, accel_tg_unmap(tg, p));
	ASSERT_EQ(0, accel_tg_map(tg, &x, ACCEL_MAP_WRITE, 10 * SEC, (void **)&p));
	EXPECT_EQ(1, accel_tg_task_done(tg, rx));
	EXPECT_EQ(0, accel_tg_unmap(tg, p));
	tg_stats(tg, &st);
	EXPECT_LE(2, st.stall_map);
	accel_tg_destroy(tg);
	accel_buffer_destroy(b);
}

/*
 * Map for writing orders the host's writes before later tasks: a copy
 * submitted while the map is open waits for the unmap, so it sees the
 * values written after its submission.
 */
TEST_F(tg, map_write_orders_later_tasks)
{
	enum { N = 512 };
	struct accel_buffer *b;
	struct accel_tensor x, y;
	struct accel_tg *tg;
	struct accel_task t;
	uint32_t *p, *u;
	uint64_t cid;
	unsigned int i;
	void *h;

	ASSERT_EQ(0, tg_buf(self->dev, 2 * N * 4, &b, &h));
	u = h;
	ASSERT_EQ(0, tg_new(self->dev, 0, 0, 0, &tg));
	x = tv1(b, 0, ACCEL_DTYPE_U32, N);
	y = tv1(b, 4 * N, ACCEL_DTYPE_U32, N);
	accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 1);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));

	/* write, unmap, copy */
	ASSERT_EQ(0, accel_tg_map(tg, &x, ACCEL_MAP_WRITE, 10 * SEC, (void **)&p));
	EXPECT_EQ(1, p[N - 1]);				/* after the fill */
	for (i = 0; i < N; i++)
		p[i] = 1000 + i;
	ASSERT_EQ(0, accel_tg_unmap(tg, p));
	accel_task_prep_copy(&t, &y, &x, ACCEL_OUTPUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &cid));
	ASSERT_EQ(0, accel_tg_task_wait(tg, cid, 10 * SEC));
	for (i = 0; i < N; i++)
		ASSERT_EQ(1000 + i, u[N + i]);

	/* map, copy submitted, then write, then unmap */
	ASSERT_EQ(0, accel_tg_map(tg, &x, ACCEL_MAP_WRITE, 10 * SEC, (void **)&p));
	accel_task_prep_copy(&t, &y, &x, ACCEL_OUTPUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &cid));
	usleep(100000);
	EXPECT_EQ(0, accel_tg_task_done(tg, cid));
	for (i = 0; i < N; i++)
		p[i] = 2000 + i;
	ASSERT_EQ(0, accel_tg_unmap(tg, p));
	ASSERT_EQ(0, accel_tg_task_wait(tg, cid, 10 * SEC));
	for (i = 0; i < N; i++)
		ASSERT_EQ(2000 + i, u[N + i]) TH_LOG("element %u", i);
	accel_tg_destroy(tg);
	accel_buffer_destroy(b);
}

/*
 * Tasks on explicit different queues: the consumer waits for a slow
 * producer on the other queue (a WAIT on its timeline); on one queue the
 * dependency is free.
 */
TEST_F(tg, cross_queue)
{
	enum { N = 4096 };
	struct accel_buffer *b;
	struct accel_tensor x, y, z;
	struct accel_tg_stats s0, s1;
	struct accel_tg *tg;
	struct accel_task t;
	uint32_t *u;
	unsigned int i;
	void *h;

	ASSERT_EQ(0, tg_buf(self->dev, 3 * N * 4, &b, &h));
	u = h;
	ASSERT_EQ(0, tg_new(self->dev, 2, 0, 0, &tg));
	x = tv1(b, 0, ACCEL_DTYPE_U32, N);
	y = tv1(b, 4 * N, ACCEL_DTYPE_U32, N);
	z = tv1(b, 8 * N, ACCEL_DTYPE_U32, N);
	accel_task_prep_delay(&t, 200 * MS);
	accel_task_arg(&t, &x, ACCEL_OUTPUT);
	t.queue = 0;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 77);
	t.queue = 0;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	tg_stats(tg, &s0);
	EXPECT_EQ(1, s0.deps[2]);			/* WAW, same queue */
	EXPECT_EQ(1, s0.deps_same_queue);
	EXPECT_EQ(0, s0.waits);
	ASSERT_EQ(0, tg_copy(tg, &y, &x, 1));
	ASSERT_EQ(0, tg_copy(tg, &z, &y, 0));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	tg_stats(tg, &s1);
	EXPECT_EQ(2, s1.deps[0]);			/* RAW x, RAW y */
	EXPECT_EQ(2, s1.waits);
	EXPECT_EQ(1, s1.deps_same_queue);
	EXPECT_EQ(4, s1.tasks);
	for (i = 0; i < N; i++) {
		ASSERT_EQ(77, u[N + i]) TH_LOG("y %u", i);
		ASSERT_EQ(77, u[2 * N + i]) TH_LOG("z %u", i);
	}
	accel_tg_destroy(tg);
	accel_buffer_destroy(b);
}

/*
 * DOT of a captured graph: every task's name, the dependency kinds; the
 * statistics of the capture.
 */
TEST_F(tg, dot_dump)
{
	struct accel_buffer *b;
	struct accel_tensor x, y;
	struct accel_tg_stats st;
	struct accel_graph *g;
	struct accel_tg *tg;
	struct accel_task t;
	char *dot = NULL;
	size_t len = 0;
	FILE *f;
	void *h;

	ASSERT_EQ(0, tg_buf(self->dev, 8192, &b, &h));
	ASSERT_EQ(0, tg_new(self->dev, 0, 0, 0, &tg));
	x = tv1(b, 0, ACCEL_DTYPE_U32, 256);
	y = tv1(b, 4096, ACCEL_DTYPE_U32, 256);
	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 1);
	t.name = "writer_alpha";
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	accel_task_prep_copy(&t, &y, &x, ACCEL_OUTPUT);
	t.name = "reader_beta";				/* RAW on alpha */
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 2);
	t.name = "overwriter_gamma";			/* WAR on beta, WAW on alpha */
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	EXPECT_EQ(3, accel_graph_num_tasks(g));
	tg_stats(tg, &st);
	EXPECT_EQ(3, st.captured);
	EXPECT_EQ(0, st.tasks);
	f = open_memstream(&dot, &len);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, accel_graph_dot(g, f));
	fclose(f);
	ASSERT_NE(NULL, dot);
	EXPECT_NE(NULL, strstr(dot, "digraph"));
	EXPECT_NE(NULL, strstr(dot, "writer_alpha"));
	EXPECT_NE(NULL, strstr(dot, "reader_beta"));
	EXPECT_NE(NULL, strstr(dot, "overwriter_gamma"));
	EXPECT_NE(NULL, strstr(dot, "RAW"));
	EXPECT_NE(NULL, strstr(dot, "WAR"));
	EXPECT_NE(NULL, strstr(dot, "WAW"));
	EXPECT_EQ('}', dot[len - 1 - (dot[len - 1] == '\n')]);
	TH_LOG("%s", dot);
	free(dot);
	/* the capture ran nothing */
	EXPECT_EQ(0, ((uint32_t *)h)[0]);
	accel_graph_destroy(g);
	accel_tg_destroy(tg);
	accel_buffer_destroy(b);
}

/* The trace tests' JSON reader: what it keeps, and that it rejects bad syntax. */
TEST(json_reader)
{
	static const char good[] =
		"{\"traceEvents\": [ {\"ph\":\"X\",\"pid\":0,\"tid\":1,\"ts\":12.5,"
		"\"dur\":2,\"name\":\"a\",\"args\":{\"task\":\"0x1\"}},\n"
		"{\"other\": [1, -2.5e3, true, null, \"s\\\"q\"]}, {\"ph\":\"M\"} ]}";
	static const char *const bad[] = {
		"", "{", "[1,]", "[1 2]", "{\"a\" 1}", "{\"a\":1,}", "{\"a\":1]",
		"[\"open]", "{} {}", "[1]x", "{1:2}", "[1", "{\"a\":1", "[[1]",
	};
	struct jev ev[4];
	unsigned int nev, i;

	ASSERT_EQ(0, json_parse(good, strlen(good), ev, 4, &nev));
	ASSERT_EQ(2, nev);
	EXPECT_STREQ("X", ev[0].ph);
	EXPECT_STREQ("1", ev[0].tid);
	EXPECT_STREQ("a", ev[0].name);
	EXPECT_EQ(12.5, ev[0].ts);
	EXPECT_EQ(2.0, ev[0].dur);
	EXPECT_STREQ("M", ev[1].ph);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_EQ(-1, json_parse(bad[i], strlen(bad[i]), ev, 4, &nev)) TH_LOG("%s", bad[i]);
}

/*
 * Trace: valid JSON, one track per queue used, a slice per task with its
 * name; written records are forgotten.
 */
TEST_F(tg, trace_json)
{
	struct accel_buffer *b;
	struct accel_tensor x, y;
	struct accel_tg *tg;
	struct accel_task t;
	struct jev ev[256];
	char tracks[8][64], *js = NULL;
	unsigned int nev, i, j, ntracks = 0, named_a = 0, named_b = 0;
	size_t len = 0;
	FILE *f;
	void *h;
	int n;

	ASSERT_EQ(0, tg_buf(self->dev, 8192, &b, &h));
	ASSERT_EQ(0, tg_new(self->dev, 2, ACCEL_TG_TRACE, 0, &tg));
	x = tv1(b, 0, ACCEL_DTYPE_U32, 256);
	y = tv1(b, 4096, ACCEL_DTYPE_U32, 256);
	for (i = 0; i < 3; i++) {
		accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, i);
		t.name = "trace_a";
		t.queue = 0;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		accel_task_prep_copy(&t, &y, &x, ACCEL_OUTPUT);
		t.name = "trace_b";
		t.queue = 1;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	}
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	f = open_memstream(&js, &len);
	ASSERT_NE(NULL, f);
	n = accel_tg_trace_write(tg, f);
	fclose(f);
	EXPECT_EQ(6, n);
	ASSERT_NE(NULL, js);
	TH_LOG("%s", js);
	ASSERT_EQ(0, json_parse(js, len, ev, 256, &nev));
	for (i = 0; i < nev; i++) {
		char key[64];

		if (!strcmp(ev[i].ph, "M"))			/* metadata: track names */
			continue;
		snprintf(key, sizeof(key), "%s/%s", ev[i].pid, ev[i].tid);
		for (j = 0; j < ntracks && strcmp(tracks[j], key); j++)
			;
		if (j == ntracks && ntracks < 8)
			snprintf(tracks[ntracks++], sizeof(tracks[0]), "%s", key);
		named_a += !strcmp(ev[i].name, "trace_a");
		named_b += !strcmp(ev[i].name, "trace_b");
	}
	EXPECT_EQ(2, ntracks);
	EXPECT_LE(3, named_a);
	EXPECT_LE(3, named_b);
	free(js);

	/* nothing new: nothing (but still valid JSON) */
	js = NULL;
	f = open_memstream(&js, &len);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, accel_tg_trace_write(tg, f));
	fclose(f);
	if (len)
		EXPECT_EQ(0, json_parse(js, len, ev, 256, &nev));
	free(js);

	/*
	 * A graph's tasks get slices of their own: two launches of a graph of
	 * a fill (queue 0) and a copy (queue 1) give two "graph launch"
	 * slices per queue and one slice per task and launch, each inside its
	 * launch's slice on the same track.
	 */
	{
		struct accel_graph *g;
		struct accel_graph_exec *ge;
		unsigned int launches = 0, ga = 0, gb = 0;
		double lts[2][2] = { { 0 } }, ldur[2][2] = { { 0 } };
		unsigned int nl[2] = { 0, 0 };

		ASSERT_EQ(0, accel_tg_capture_begin(tg));
		accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 7);
		t.name = "graph_a";
		t.queue = 0;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		accel_task_prep_copy(&t, &y, &x, ACCEL_OUTPUT);
		t.name = "graph_b";
		t.queue = 1;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
		ASSERT_EQ(0, accel_graph_instantiate(g, &ge));
		ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0));
		ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0));
		ASSERT_EQ(0, accel_graph_exec_wait(ge, 10 * SEC));
		js = NULL;
		f = open_memstream(&js, &len);
		ASSERT_NE(NULL, f);
		EXPECT_EQ(8, accel_tg_trace_write(tg, f));
		fclose(f);
		ASSERT_EQ(0, json_parse(js, len, ev, 256, &nev));
		for (i = 0; i < nev; i++) {
			if (!strcmp(ev[i].ph, "M"))
				continue;
			if (!strcmp(ev[i].name, "graph launch")) {
				j = !strcmp(ev[i].tid, "1");
				if (nl[j] < 2) {
					lts[j][nl[j]] = ev[i].ts;
					ldur[j][nl[j]] = ev[i].dur;
					nl[j]++;
				}
				launches++;
			}
		}
		for (i = 0; i < nev; i++) {
			unsigned int q;
			bool inside = false;

			if (strcmp(ev[i].name, "graph_a") && strcmp(ev[i].name, "graph_b"))
				continue;
			q = !strcmp(ev[i].name, "graph_b");
			ga += !q;
			gb += q;
			EXPECT_EQ(q, (unsigned int)!strcmp(ev[i].tid, "1"));
			for (j = 0; j < nl[q]; j++)
				inside |= ev[i].ts >= lts[q][j] &&
					  ev[i].ts + ev[i].dur <= lts[q][j] + ldur[q][j] + 0.001;
			EXPECT_TRUE(inside) TH_LOG("%s at %.3f dur %.3f; launches on its queue at %.3f+%.3f, %.3f+%.3f", ev[i].name, ev[i].ts, ev[i].dur, lts[q][0], ldur[q][0], lts[q][1], ldur[q][1]);
		}
		EXPECT_EQ(4, launches);
		EXPECT_EQ(2, ga);
		EXPECT_EQ(2, gb);
		free(js);
		accel_graph_exec_destroy(ge);
		accel_graph_destroy(g);
	}
	accel_tg_destroy(tg);
	accel_buffer_destroy(b);
}

/* Statistics of a known program: tasks, deps by kind, fallbacks, TensorMap entries. */
TEST_F(tg, stats_numbers)
{
	struct accel_buffer *b;
	struct accel_tensor x, y, il, w;
	struct accel_tg_stats st;
	struct accel_tg *tg;
	struct accel_task t;
	void *h;

	ASSERT_EQ(0, tg_buf(self->dev, 8192, &b, &h));
	ASSERT_EQ(0, tg_new(self->dev, 1, 0, 0, &tg));
	x = tv1(b, 0, ACCEL_DTYPE_U32, 256);
	y = tv1(b, 4096, ACCEL_DTYPE_U32, 256);
	/*
	 * T0 keeps the one queue busy so that none of T1..T5 completes before
	 * the last is submitted (entries of completed tasks are dropped, and
	 * would give no dependency).
	 */
	w = tv1(b, 6144, ACCEL_DTYPE_U8, 16);
	accel_task_prep_delay(&t, 300 * MS);
	accel_task_arg(&t, &w, ACCEL_OUTPUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 1);		/* T1 */
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	accel_task_prep_copy(&t, &y, &x, ACCEL_OUTPUT);		/* T2: RAW T1 */
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 2);		/* T3: WAR T2, WAW T1 */
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	tg_stats(tg, &st);
	EXPECT_EQ(4, st.tasks);
	EXPECT_EQ(1, st.deps[0]);
	EXPECT_EQ(1, st.deps[1]);
	EXPECT_EQ(1, st.deps[2]);
	EXPECT_EQ(3, st.deps_same_queue);		/* one queue */
	EXPECT_EQ(0, st.waits);
	EXPECT_EQ(0, st.fallbacks);
	EXPECT_LE(1, st.tm_max_live);

	/*
	 * An interleaved view, shape (4, 3) with strides (3, 2) u8: its
	 * bytes are the hull test's business; it overlaps the write of bytes
	 * [0, 4) of x: a RAW found by the fallback.
	 */
	memset(&il, 0, sizeof(il));
	il.buf = b;
	il.offset = 0;
	il.dtype = ACCEL_DTYPE_U8;
	il.ndims = 2;
	il.shape[0] = 4;
	il.shape[1] = 3;
	il.strides[0] = 3;
	il.strides[1] = 2;
	ASSERT_EQ(0, accel_tensor_check(&il));
	w = tv1(b, 0, ACCEL_DTYPE_U32, 1);
	accel_task_prep_fill(&t, &w, ACCEL_OUTPUT, 3);		/* T4: WAW T3 */
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	accel_task_prep_delay(&t, 1000);			/* T5: RAW T4 (fallback) */
	accel_task_arg(&t, &il, ACCEL_INPUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	tg_stats(tg, &st);
	EXPECT_EQ(6, st.tasks);
	EXPECT_LE(1, st.fallbacks);
	EXPECT_LE(2, st.deps[0]);
	EXPECT_EQ(0, st.host_tasks);
	EXPECT_EQ(0, st.heap_allocs);
	EXPECT_EQ(0, st.stall_ring);
	accel_tg_destroy(tg);
	accel_buffer_destroy(b);
}

/*
 * A launch's completion wakes whoever waits for it at once: exec_wait,
 * sync and a map of its output return in far less than their timeouts
 * (the graph takes milliseconds). The timeline SIGNAL at the end of each
 * per-queue body must wake host waiters (the IRQ bit): without it they
 * sleep until their timeout and then find the work done.
 */
TEST_F(tg, launch_wakes_waiters)
{
	struct accel_buffer *b;
	struct accel_tensor x, y;
	struct accel_graph_exec *ge;
	struct accel_graph *g;
	struct accel_tg *tg;
	struct accel_task t;
	unsigned int i;
	int64_t t0;
	uint32_t *p;
	void *h;

	ASSERT_EQ(0, tg_buf(self->dev, 8192, &b, &h));
	ASSERT_EQ(0, tg_new(self->dev, 2, 0, 0, &tg));
	x = tv1(b, 0, ACCEL_DTYPE_U32, 256);
	y = tv1(b, 4096, ACCEL_DTYPE_U32, 256);
	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 11);
	t.queue = 0;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, tg_copy(tg, &y, &x, 1));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	ASSERT_EQ(0, accel_graph_instantiate(g, &ge));
	for (i = 0; i < 3; i++) {
		t0 = tg_now_ns();
		ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0));
		if (i == 0) {
			ASSERT_EQ(0, accel_graph_exec_wait(ge, 20 * SEC));
		} else if (i == 1) {
			ASSERT_EQ(0, accel_tg_sync(tg, 20 * SEC));
		} else {
			ASSERT_EQ(0, accel_tg_map(tg, &y, ACCEL_MAP_READ, 20 * SEC, (void **)&p));
		}
		EXPECT_GT(3 * SEC, tg_now_ns() - t0) TH_LOG("wait %u took %lld ms", i,
							   (long long)(tg_now_ns() - t0) / MS);
	}
	EXPECT_EQ(11, p[255]);
	EXPECT_EQ(0, accel_tg_unmap(tg, p));
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);
	accel_tg_destroy(tg);
	accel_buffer_destroy(b);
}

/* Two devices: a task on device 1 copies from a buffer of device 0 (through the link). */
TEST(two_devices)
{
	struct accel_device *devs[2] = { NULL, NULL };
	struct vaccel_counts counts;
	struct accel_buffer *b0, *b1;
	struct accel_tensor x0, y1, z1;
	struct accel_tg_params p = { .size = sizeof(p), .timeout_ns = 20 * SEC };
	struct accel_tg_stats st;
	struct accel_tg *tg;
	struct accel_task t;
	uint32_t *u0, *u1;
	unsigned int i;
	uint64_t id;
	void *h0, *h1;
	enum { N = 8192 };

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	lib_del_device(LIB_ID_B);
	ASSERT_EQ(0, lib_counted_open(LIB_ID_A, "memory=64M engines=2", &counts, &devs[0]));
	ASSERT_EQ(0, lib_fresh_open(LIB_ID_B, "memory=64M link_bw_mbps=2000 link_latency_ns=10000",
				    &devs[1]));
	ASSERT_EQ(0, tg_buf(devs[0], 4 * N, &b0, &h0));
	ASSERT_EQ(0, tg_buf(devs[1], 8 * N, &b1, &h1));
	u0 = h0;
	u1 = h1;
	ASSERT_EQ(0, accel_tg_create(devs, 2, &p, &tg));
	EXPECT_EQ(2, accel_tg_num_queues(tg, 0));
	EXPECT_LE(1, accel_tg_num_queues(tg, 1));
	x0 = tv1(b0, 0, ACCEL_DTYPE_U32, N);
	y1 = tv1(b1, 0, ACCEL_DTYPE_U32, N);
	z1 = tv1(b1, 4 * N, ACCEL_DTYPE_U32, N);

	/* a slow writer on device 0, a reader on device 1 */
	accel_task_prep_delay(&t, 200 * MS);
	accel_task_arg(&t, &x0, ACCEL_OUTPUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	accel_task_prep_fill(&t, &x0, ACCEL_OUTPUT, 0xC0FFEE);
	t.device = 0;
	t.queue = 0;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	accel_task_prep_copy(&t, &y1, &x0, ACCEL_OUTPUT);
	t.device = 1;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &id));
	/* AUTO: the device of the first argument (b1's device 1) */
	accel_task_prep_fill(&t, &z1, ACCEL_OUTPUT, 0xD00D);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	/* and back: device 0 reads device 1's result */
	accel_task_prep_copy(&t, &x0, &y1, ACCEL_OUTPUT);
	t.device = 0;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_sync(tg, 20 * SEC));
	EXPECT_EQ(1, accel_tg_task_done(tg, id));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0xC0FFEE, u1[i]) TH_LOG("device 1 copy %u", i);
		ASSERT_EQ(0xD00D, u1[N + i]) TH_LOG("device 1 fill %u", i);
		ASSERT_EQ(0xC0FFEE, u0[i]) TH_LOG("device 0 copy back %u", i);
	}
	tg_stats(tg, &st);
	EXPECT_LE(2, st.waits);				/* 0 -> 1 and 1 -> 0 */

	/*
	 * A graph across the two devices: device 0 fills x0 behind a DELAY,
	 * device 1 copies it into y1 (an epoch-relative WAIT on device 0's
	 * timeline through its imported signal page, inside device 1's
	 * packet list), device 0 adds one to it (REDUCE x0 = x0 + ones) after
	 * device 1's copy (WAR: waits for device 1). Launched with x0 bound to
	 * another buffer of device 0 every other time, interleaved with eager
	 * reads on device 1: every launch's copy must see its own fill.
	 */
	{
		struct accel_buffer *b0b, *ones;
		struct accel_tensor t1s, xr;
		struct accel_graph *g;
		struct accel_graph_exec *ge;
		struct accel_binding bd;
		uint32_t *u0b, *uo;
		void *h0b, *ho;
		unsigned int k;

		ASSERT_EQ(0, tg_buf(devs[0], 4 * N, &b0b, &h0b));
		ASSERT_EQ(0, tg_buf(devs[0], 4 * N, &ones, &ho));
		u0b = h0b;
		uo = ho;
		for (i = 0; i < N; i++)
			uo[i] = 1;
		t1s = tv1(ones, 0, ACCEL_DTYPE_I32, N);
		xr = tv1(b0, 0, ACCEL_DTYPE_I32, N);
		ASSERT_EQ(0, accel_tg_capture_begin(tg));
		accel_task_prep_delay(&t, 20 * MS);
		accel_task_arg(&t, &x0, ACCEL_OUTPUT);
		t.device = 0;
		t.queue = 0;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		accel_task_prep_fill(&t, &x0, ACCEL_OUTPUT, 0x1000);
		t.device = 0;
		t.queue = 1;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		accel_task_prep_copy(&t, &y1, &x0, ACCEL_OUTPUT);
		t.device = 1;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		accel_task_prep_reduce(&t, &xr, ACCEL_INOUT, &xr, &t1s, DRM_VACCEL_REDOP_SUM);
		t.device = 0;
		t.queue = 0;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
		ASSERT_EQ(0, accel_graph_instantiate(g, &ge));
		for (k = 0; k < 6; k++) {
			bd.from = b0;
			bd.to = b0b;
			ASSERT_EQ(0, accel_graph_launch(ge, (k & 1) ? &bd : NULL, (k & 1) ? 1 : 0));
			/* eager, on device 1: z1 = y1, after this launch's copy */
			accel_task_prep_copy(&t, &z1, &y1, ACCEL_OUTPUT);
			t.device = 1;
			ASSERT_EQ(0, accel_tg_submit(tg, &t, &id));
			ASSERT_EQ(0, accel_tg_task_wait(tg, id, 20 * SEC));
			for (i = 0; i < N; i += 97)
				ASSERT_EQ(0x1000, u1[N + i]) TH_LOG("launch %u element %u", k, i);
		}
		ASSERT_EQ(0, accel_graph_exec_wait(ge, 20 * SEC));
		for (i = 0; i < N; i += 97) {
			ASSERT_EQ(0x1001, u0[i]);
			ASSERT_EQ(0x1001, u0b[i]);
		}
		accel_graph_exec_destroy(ge);
		accel_graph_destroy(g);
		accel_buffer_destroy(ones);
		accel_buffer_destroy(b0b);
	}
	accel_tg_destroy(tg);
	accel_buffer_destroy(b1);
	accel_buffer_destroy(b0);
	accel_device_close(devs[1]);
	accel_device_close(devs[0]);
	lib_del_device(LIB_ID_B);
	lib_del_device(LIB_ID_A);
	EXPECT_LIB_COUNTS_BACK(&counts, 5000);
}

TEST_HARNESS_MAIN
