// SPDX-License-Identifier: GPL-2.0-only
/*
 * Regression tests of the task graph's 1.0 defects (issue #14) about its
 * state, in the VM:
 *
 *  1. a graph launch's per-queue summaries do not retire each other: the
 *     next launch's writer waits for this launch's reader on another queue
 *     (WAR), so does an eager writer, and an eager reader sees the last of
 *     two writers on two queues (RAW); checked on the data;
 *  2. task ids do not depend on what a reused signal slot held: after
 *     signals set to 2^62 and to values near 2^63 were destroyed, eager
 *     tasks, host tasks and launches get usable ids and the right data
 *     (also built with ASan: libaccel_tg_state_asan_test);
 *  3. buffers the program destroys are unpinned and their memory freed
 *     while another queue of the task graph is still busy;
 *  4. a submission that fails changes nothing: a capture failing on its
 *     second argument (graph, edges, task count, pins), an eager task
 *     struct reused from an earlier OUTPUT_NEW submission (the earlier
 *     block and the program's tensor), a submission or launch that times
 *     out for ring room (no packet on any queue);
 *  5. heap tensors have an identity: a stale release (-ESTALE) frees
 *     nothing, a second release is -EINVAL and logged, a view without a
 *     generation is -EINVAL, a released tensor cannot be read (-ESTALE);
 *     an open map keeps a released tensor's block until the unmap (the
 *     heap fills up behind it: -EDEADLK naming the map);
 *  6. launch bindings may not make two of the graph's buffers one;
 *  7. a map that would wait for another open map of the task graph fails
 *     at once with -EDEADLK, writing maps of sealed and read-only buffers
 *     with -EACCES;
 *  8. host tasks that call their own task graph get -EDEADLK, on the
 *     waiting thread, on the worker and inside a submission waiting for
 *     heap space; they may use other task graphs and host pointers, and
 *     accel_tg_host_buffer() names the buffers bound for their launch.
 *
 * Three more cover bugs found while writing these (not issue #14's): a map
 * waiting for a task that waits for an open map; re-entry through another
 * task graph's host task; a destroyed buffer's import that a graph's
 * sealed body still addresses.
 *
 * Every test ends with the module's live-object counters back where they
 * started. The tests that only use calls of the library before the
 * rewrite also build with -DTG_OLD_LIB against it (see libaccel_tg_util.h).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <pthread.h>

#include "kselftest_harness.h"
#include "libaccel_tg_util.h"

#define N1	1024u		/* u32 per test buffer */
#define B1	(N1 * 4u)	/* bytes */

FIXTURE(tgs) {
	struct accel_device *dev;
	struct vaccel_counts counts;
};

FIXTURE_SETUP(tgs)
{
	self->dev = NULL;
	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, lib_counted_open(LIB_ID_A, "memory=64M engines=2", &self->counts,
				      &self->dev));
}

FIXTURE_TEARDOWN(tgs)
{
	tg_log_stop();
	if (!lib_present())
		return;
	accel_device_close(self->dev);
	lib_del_device(LIB_ID_A);
	lib_del_device(LIB_ID_B);
	EXPECT_LIB_COUNTS_BACK(&self->counts, 5000);
}

/* the graph's DOT text (malloc'ed) */
static char *dot_of(struct accel_graph *g)
{
	char *dot = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&dot, &len);

	if (!f)
		return NULL;
	if (accel_graph_dot(g, f)) {
		fclose(f);
		free(dot);
		return NULL;
	}
	fclose(f);
	return dot;
}

/* task-to-task edges of a DOT text */
static unsigned int dot_edges(const char *dot)
{
	unsigned int n = 0;
	const char *p;

	for (p = dot; (p = strstr(p, "style=dashed")); p++)
		n++;
	return n;
}

/* ---- 1. a launch's summaries ---- */

/*
 * The graph of defect 1: queue 1 copies src into buf; queue 0 reads buf
 * slowly (a DELAY declaring buf as its input), then copies buf into out.
 */
struct war_graph {
	struct accel_buffer *src, *buf, *out;
	uint32_t *hsrc, *hbuf, *hout;
	struct accel_graph *g;
	struct accel_graph_exec *ge;
};

static void war_graph_make(struct __test_metadata *_metadata, struct accel_device *dev,
			   struct accel_tg *tg, struct war_graph *w)
{
	struct accel_tensor src, buf, out;
	struct accel_task t;

	ASSERT_EQ(0, tg_mkbuf(dev, B1, 0x50505050, &w->src, &w->hsrc));
	ASSERT_EQ(0, tg_mkbuf(dev, B1, 0, &w->buf, &w->hbuf));
	ASSERT_EQ(0, tg_mkbuf(dev, B1, 0, &w->out, &w->hout));
	src = tv1(w->src, 0, ACCEL_DTYPE_U32, N1);
	buf = tv1(w->buf, 0, ACCEL_DTYPE_U32, N1);
	out = tv1(w->out, 0, ACCEL_DTYPE_U32, N1);
	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	accel_task_prep_copy(&t, &buf, &src, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "write_buf", NULL));
	accel_task_prep_delay(&t, 60 * MS);
	accel_task_arg(&t, &buf, ACCEL_INPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "slow_read_buf", NULL));
	accel_task_prep_copy(&t, &out, &buf, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "read_buf", NULL));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &w->g));
	ASSERT_EQ(0, accel_graph_instantiate(w->g, &w->ge));
}

static void war_graph_free(struct war_graph *w)
{
	accel_graph_exec_destroy(w->ge);
	accel_graph_destroy(w->g);
	accel_buffer_destroy(w->src);
	accel_buffer_destroy(w->buf);
	accel_buffer_destroy(w->out);
}

/*
 * Two launches with their own source and output: the second launch's
 * write of buf (queue 1) waits for the first launch's read of it (queue 0).
 */
TEST_F(tgs, launch_war_between_launches)
{
	struct accel_buffer *sa, *sb, *oa, *ob;
	uint32_t *hsa, *hsb, *hoa, *hob;
	struct war_graph w;
	struct accel_tg *tg;

	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 0, 20 * SEC, &tg));
	war_graph_make(_metadata, self->dev, tg, &w);
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0xAAAA0001, &sa, &hsa));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0xBBBB0002, &sb, &hsb));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &oa, &hoa));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &ob, &hob));
	ASSERT_EQ(0, accel_graph_launch(w.ge, (struct accel_binding[]){
			{ .from = w.src, .to = sa }, { .from = w.out, .to = oa } }, 2));
	ASSERT_EQ(0, accel_graph_launch(w.ge, (struct accel_binding[]){
			{ .from = w.src, .to = sb }, { .from = w.out, .to = ob } }, 2));
	ASSERT_EQ(0, accel_tg_sync(tg, 20 * SEC));
	EXPECT_EQ(-1, tg_first_not(hoa, N1, 0xAAAA0001))
		TH_LOG("launch 1's output: 0x%08x (launch 2 overwrote buf before launch 1 read it)",
		       hoa[0]);
	EXPECT_EQ(-1, tg_first_not(hob, N1, 0xBBBB0002));
	EXPECT_EQ(-1, tg_first_not(w.hout, N1, 0));	/* rebound in both */
	war_graph_free(&w);
	accel_tg_destroy(tg);
	accel_buffer_destroy(sa);
	accel_buffer_destroy(sb);
	accel_buffer_destroy(oa);
	accel_buffer_destroy(ob);
}

/* An eager FILL of buf on queue 1 after one launch waits for its read on queue 0. */
TEST_F(tgs, launch_war_eager_writer)
{
	struct accel_tensor buf;
	struct war_graph w;
	struct accel_tg *tg;
	struct accel_task t;

	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 0, 20 * SEC, &tg));
	war_graph_make(_metadata, self->dev, tg, &w);
	ASSERT_EQ(0, accel_graph_launch(w.ge, NULL, 0));
	buf = tv1(w.buf, 0, ACCEL_DTYPE_U32, N1);
	accel_task_prep_fill(&t, &buf, ACCEL_OUTPUT, 0xEEEEEEEE);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "eager_overwrite", NULL));
	ASSERT_EQ(0, accel_tg_sync(tg, 20 * SEC));
	EXPECT_EQ(-1, tg_first_not(w.hout, N1, 0x50505050))
		TH_LOG("the launch's output: 0x%08x (the eager fill ran before its read)",
		       w.hout[0]);
	EXPECT_EQ(-1, tg_first_not(w.hbuf, N1, 0xEEEEEEEE));
	war_graph_free(&w);
	accel_tg_destroy(tg);
}

/*
 * Two writers of buf in one graph, queue 1 then (after a DELAY) queue 0:
 * an eager reader on queue 1 afterwards sees queue 0's data (RAW on the
 * last writer, not only on its own queue's).
 */
TEST_F(tgs, launch_raw_last_writer)
{
	struct accel_buffer *src, *buf, *out;
	struct accel_tensor s, b, o;
	uint32_t *hs, *hb, *ho;
	struct accel_graph_exec *ge;
	struct accel_graph *g;
	struct accel_tg *tg;
	struct accel_task t;

	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 0, 20 * SEC, &tg));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0xC0C0C0C0, &src, &hs));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &buf, &hb));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &out, &ho));
	s = tv1(src, 0, ACCEL_DTYPE_U32, N1);
	b = tv1(buf, 0, ACCEL_DTYPE_U32, N1);
	o = tv1(out, 0, ACCEL_DTYPE_U32, N1);
	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	accel_task_prep_fill(&t, &b, ACCEL_OUTPUT, 0x11111111);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "first_writer", NULL));
	accel_task_prep_delay(&t, 60 * MS);
	accel_task_arg(&t, &b, ACCEL_INPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "slow", NULL));
	accel_task_prep_copy(&t, &b, &s, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "last_writer", NULL));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	ASSERT_EQ(0, accel_graph_instantiate(g, &ge));
	ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0));
	accel_task_prep_copy(&t, &o, &b, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "eager_reader", NULL));
	ASSERT_EQ(0, accel_tg_sync(tg, 20 * SEC));
	EXPECT_EQ(-1, tg_first_not(ho, N1, 0xC0C0C0C0))
		TH_LOG("the reader saw 0x%08x (the first writer's, not the last)", ho[0]);
	EXPECT_EQ(-1, tg_first_not(hb, N1, 0xC0C0C0C0));
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);
	accel_tg_destroy(tg);
	accel_buffer_destroy(src);
	accel_buffer_destroy(buf);
	accel_buffer_destroy(out);
}

/* ---- 2. task ids ---- */

static void count_host(void *arg)
{
	uint32_t *h = arg;

	h[1] = h[0] + 1;		/* reads what the device wrote */
}

/*
 * Signal slots go back to the pool with the values the program left in
 * them: values just below 2^63 (where signed comparisons turn), each slot
 * 2^52 from the next, so that no two reused slots hold values within 2^48
 * of each other.
 * A task graph created afterwards hands out ids that accel_tg_task_done()
 * and _wait() understand, and its work (eager, host, launched) is right.
 */
TEST_F(tgs, ids_after_huge_signal_values)
{
	enum { NSIGS = 160 };
	struct accel_signal *s[NSIGS];
	struct accel_buffer *bx, *by, *bz, *bw, *bh;
	struct accel_tensor x, y, z, w, hv, y2;
	uint32_t *hx, *hy, *hz, *hw, *hh;
	struct accel_graph_exec *ge;
	struct accel_graph *g;
	struct accel_tg *tg;
	struct accel_task t;
	uint64_t id[5];
	unsigned int i, j;

	for (i = 0; i < NSIGS; i++) {
		ASSERT_EQ(0, accel_signal_create(self->dev, &s[i]));
		ASSERT_EQ(0, accel_signal_write(s[i], DRM_VACCEL_SIGNAL_SET,
						(1ull << 63) - ((uint64_t)(i + 1) << 52)));
	}
	for (i = 0; i < NSIGS; i++)
		accel_signal_destroy(s[i]);
	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 0, 20 * SEC, &tg));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &bx, &hx));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &by, &hy));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &bz, &hz));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &bw, &hw));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &bh, &hh));
	x = tv1(bx, 0, ACCEL_DTYPE_U32, N1);
	y = tv1(by, 0, ACCEL_DTYPE_U32, N1);
	z = tv1(bz, 0, ACCEL_DTYPE_U32, N1);
	w = tv1(bw, 0, ACCEL_DTYPE_U32, N1);
	hv = tv1(bh, 0, ACCEL_DTYPE_U32, 2);

	accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 7);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "fill_x", &id[0]));
	accel_task_prep_copy(&t, &y, &x, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "copy_y", &id[1]));
	y2 = tv1(by, 0, ACCEL_DTYPE_U32, 2);
	accel_task_prep_copy(&t, &hv, &y2, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "copy_h", &id[2]));
	accel_task_prep_host(&t, count_host, hh);
	accel_task_arg(&t, &hv, ACCEL_INOUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &id[3]));
	accel_task_prep_fill(&t, &z, ACCEL_OUTPUT, 9);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "fill_z", &id[4]));
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(0, accel_tg_task_wait(tg, id[i], 10 * SEC)) TH_LOG("task %u", i);
		EXPECT_EQ(1, accel_tg_task_done(tg, id[i])) TH_LOG("task %u", i);
		for (j = 0; j < i; j++)
			EXPECT_NE(id[j], id[i]);
	}
	EXPECT_EQ(-EINVAL, accel_tg_task_done(tg, id[4] + 1000));
	EXPECT_EQ(-1, tg_first_not(hy, N1, 7));
	EXPECT_EQ(-1, tg_first_not(hz, N1, 9));
	EXPECT_EQ(7, hh[0]);
	EXPECT_EQ(8, hh[1]);

	/* a graph: queue 0 copies y into w, queue 1 refills z; launched twice */
	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	accel_task_prep_copy(&t, &w, &y, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "copy_w", NULL));
	accel_task_prep_fill(&t, &z, ACCEL_OUTPUT, 11);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "fill_z2", NULL));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	ASSERT_EQ(0, accel_graph_instantiate(g, &ge));
	ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0));
	ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0));
	EXPECT_EQ(0, accel_graph_exec_wait(ge, 10 * SEC));
	/* eager after the launches: reads what each of their queues wrote */
	accel_task_prep_copy(&t, &x, &w, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "copy_back", &id[0]));
	accel_task_prep_copy(&t, &y, &z, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "copy_z", &id[1]));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, accel_tg_task_wait(tg, id[i], 10 * SEC));
		EXPECT_EQ(1, accel_tg_task_done(tg, id[i]));
	}
	EXPECT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	EXPECT_EQ(-1, tg_first_not(hw, N1, 7));
	EXPECT_EQ(-1, tg_first_not(hx, N1, 7));
	EXPECT_EQ(-1, tg_first_not(hz, N1, 11));
	EXPECT_EQ(-1, tg_first_not(hy, N1, 11));
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);
	accel_tg_destroy(tg);
	accel_buffer_destroy(bx);
	accel_buffer_destroy(by);
	accel_buffer_destroy(bz);
	accel_buffer_destroy(bw);
	accel_buffer_destroy(bh);
}

/* ---- 3. buffers the program destroys ---- */

/*
 * 400 rounds of create, fill, wait, destroy on queue 0 beside a chain of
 * DELAYs kept running on queue 1: the device memory and the task graph's
 * index of buffers come back while queue 1 is still busy.
 */
TEST_F(tgs, destroyed_buffers_freed_while_busy)
{
	enum { ROUNDS = 400, SIZE = 64 << 10, CHAIN = 512 };
	uint64_t busy[CHAIN], m0, m1, mmax = 0, id;
	struct accel_tg_stats st0, st1;
	struct accel_buffer *b;
	struct accel_tensor v;
	struct accel_tg *tg;
	struct accel_task t;
	unsigned int r, nb = 0;

	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 0, 20 * SEC, &tg));
	/* warm up: the lines' pages and imports exist before the baseline */
	ASSERT_EQ(0, accel_buffer_create(self->dev, SIZE, 0, &b));
	v = tv1(b, 0, ACCEL_DTYPE_U8, SIZE);
	accel_task_prep_fill(&t, &v, ACCEL_OUTPUT, 1);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "warm", &id));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	accel_buffer_destroy(b);
	accel_task_prep_delay(&t, 1000);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "collect", &id));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	ASSERT_EQ(0, accel_device_memory_used(self->dev, &m0));
	tg_stats(tg, &st0);

	for (r = 0; r < ROUNDS; r++) {
		/* keep five DELAYs of 200 ms queued on queue 1 */
		while (nb < CHAIN && (nb < 5 || accel_tg_task_done(tg, busy[nb - 5]) == 1)) {
			accel_task_prep_delay(&t, 200 * MS);
			ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "busy", &busy[nb]));
			nb++;
		}
		ASSERT_EQ(0, accel_buffer_create(self->dev, SIZE, 0, &b)) TH_LOG("round %u", r);
		v = tv1(b, 0, ACCEL_DTYPE_U8, SIZE);
		accel_task_prep_fill(&t, &v, ACCEL_OUTPUT, r);
		ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "churn", &id));
		ASSERT_EQ(0, accel_tg_task_wait(tg, id, 10 * SEC));
		accel_buffer_destroy(b);
		ASSERT_EQ(0, accel_device_memory_used(self->dev, &m1));
		if (m1 > mmax)
			mmax = m1;
	}
	/* one more task: the task graph takes the last orphan */
	accel_task_prep_delay(&t, 1000);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "collect", &id));
	ASSERT_EQ(0, accel_tg_task_wait(tg, id, 10 * SEC));
	ASSERT_EQ(0, accel_device_memory_used(self->dev, &m1));
	tg_stats(tg, &st1);
	/* queue 1 must still be busy, or this proves nothing */
	ASSERT_EQ(0, accel_tg_task_done(tg, busy[nb - 1])) TH_LOG("the chain on queue 1 ended early");
	EXPECT_LE(m1, m0) TH_LOG("memory %llu, at the start %llu",
				 (unsigned long long)m1, (unsigned long long)m0);
	EXPECT_LE(mmax, m0 + 4 * SIZE) TH_LOG("at most %llu during the rounds, %llu at the start",
					       (unsigned long long)mmax, (unsigned long long)m0);
#ifndef TG_OLD_LIB
	EXPECT_LE(st1.buffers, st0.buffers) TH_LOG("buffers indexed %llu, at the start %llu",
						   (unsigned long long)st1.buffers,
						   (unsigned long long)st0.buffers);
#endif
	EXPECT_EQ(0, accel_tg_sync(tg, 20 * SEC));
	accel_tg_destroy(tg);
}

/*
 * A graph over two devices whose task on device 1 reads a buffer S of
 * device 0 that is past the binding table (the 18th buffer): the sealed
 * body addresses S through its import into device 1. The program destroys
 * S after instantiating (the executable keeps what it needs); the import
 * must stay too: later launches copy S's data, whatever else is created
 * on device 1 meanwhile.
 */
TEST_F(tgs, destroyed_buffer_import_kept_for_graph)
{
	enum { NF = DRM_VACCEL_EXEC_MAX_BINDINGS };
	struct accel_buffer *f[NF], *s, *dst, *z[4];
	struct accel_tensor tf[NF], ts, td;
	struct accel_tg_params p = { .size = sizeof(p), .queues_per_device = 1,
				     .timeout_ns = 5 * SEC };
	struct accel_device *devs[2], *devb;
	struct accel_graph_exec *ge;
	struct accel_graph *g;
	struct accel_tg *tg;
	struct accel_task t;
	uint32_t *hs, *hd, *hz;
	unsigned int i;
	void *h;

	ASSERT_EQ(0, lib_fresh_open(LIB_ID_B, "memory=16M engines=1", &devb));
	devs[0] = self->dev;
	devs[1] = devb;
	ASSERT_EQ(0, accel_tg_create(devs, 2, &p, &tg));
	for (i = 0; i < NF; i++) {
		ASSERT_EQ(0, accel_buffer_create(self->dev, 4096, 0, &f[i]));
		tf[i] = tv1(f[i], 0, ACCEL_DTYPE_U32, 16);
	}
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0x5a5a0000, &s, &hs));
	ASSERT_EQ(0, tg_buf(devb, B1, &dst, &h));
	hd = h;
	ts = tv1(s, 0, ACCEL_DTYPE_U32, N1);
	td = tv1(dst, 0, ACCEL_DTYPE_U32, N1);
	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	for (i = 0; i < NF; i++) {
		accel_task_prep_fill(&t, &tf[i], ACCEL_OUTPUT, i);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	}
	accel_task_prep_copy(&t, &td, &ts, ACCEL_OUTPUT);
	t.device = 1;
	t.name = "copy_from_import";
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	ASSERT_EQ(0, accel_graph_instantiate(g, &ge));
	ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	EXPECT_EQ(-1, tg_first_not(hd, N1, 0x5a5a0000));
	/* the program lets go of S; other work and buffers come and go on device 1 */
	accel_buffer_destroy(s);
	accel_graph_destroy(g);
	tg_set_u32(hd, N1, 0);
	accel_task_prep_fill(&t, &tf[0], ACCEL_OUTPUT, 7);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, tg_buf(devb, B1, &z[i], &h));
		hz = h;
		tg_set_u32(hz, N1, 0xeeee0000 + i);
	}
	ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0));
	EXPECT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	EXPECT_EQ(-1, tg_first_not(hd, N1, 0x5a5a0000)) TH_LOG("the launch read 0x%08x", hd[0]);
	accel_graph_exec_destroy(ge);
	accel_tg_destroy(tg);
	for (i = 0; i < NF; i++)
		accel_buffer_destroy(f[i]);
	for (i = 0; i < 4; i++)
		accel_buffer_destroy(z[i]);
	accel_buffer_destroy(dst);
	accel_device_close(devb);
}

/* ---- 4. half-done mutations ---- */

/*
 * A capture that fails on its second argument (a heap tensor released
 * while a DELAY still reads it; a bad view; an OUTPUT_NEW larger than the
 * heap) leaves the graph as it was: a later reader still gets its RAW
 * edge on the earlier writer, the task count does not move, and a buffer
 * only the failed task named is not kept alive by the graph.
 */
TEST_F(tgs, capture_failure_changes_nothing)
{
	struct accel_buffer *bv, *bo, *bad, *fresh;
	struct accel_tensor v, o, badv, fv, big, r;
	uint32_t *hv, *ho, *hbad, *hf;
	struct accel_graph_exec *ge;
	struct accel_graph *g;
	struct accel_tg *tg;
	struct accel_task t;
	uint64_t m1, m2, shape = 1 << 20;
	char *dot;

	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 64 << 10, 20 * SEC, &tg));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &bv, &hv));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &bo, &ho));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &bad, &hbad));
	v = tv1(bv, 0, ACCEL_DTYPE_U32, N1);
	o = tv1(bo, 0, ACCEL_DTYPE_U32, N1);
	badv = tv1(bad, 4, ACCEL_DTYPE_U32, N1);	/* one element past the end */
	/* r: a heap tensor, released while a DELAY still reads it */
	memset(&r, 0, sizeof(r));
	r.dtype = ACCEL_DTYPE_U32;
	r.ndims = 1;
	r.shape[0] = N1;
	accel_task_prep_fill(&t, &r, ACCEL_OUTPUT_NEW, 1);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "r", NULL));
	accel_task_prep_delay(&t, 500 * MS);
	accel_task_arg(&t, &r, ACCEL_INPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "hold_r", NULL));
	ASSERT_EQ(0, accel_tg_release(tg, &r));

	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	accel_task_prep_fill(&t, &v, ACCEL_OUTPUT, 0x12345678);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "writer", NULL));

	/* arg 0 an OUTPUT over the writer's view, arg 1 the released tensor */
	accel_task_prep_copy(&t, &v, &r, ACCEL_OUTPUT);
	EXPECT_EQ(-ESTALE, tg_submit_on(tg, &t, 1, "ghost", NULL));
	/* arg 1 a bad view */
	accel_task_prep_copy(&t, &v, &badv, ACCEL_OUTPUT);
	EXPECT_EQ(-EINVAL, tg_submit_on(tg, &t, 1, "ghost1", NULL));
	/* the same, failing later: arg 1 an OUTPUT_NEW larger than the heap */
	accel_task_prep_delay(&t, 1000);
	accel_task_arg(&t, &v, ACCEL_OUTPUT);
	memset(&big, 0, sizeof(big));
	big.dtype = ACCEL_DTYPE_U8;
	big.ndims = 1;
	big.shape[0] = shape;
	accel_task_arg(&t, &big, ACCEL_OUTPUT_NEW);
	EXPECT_EQ(-E2BIG, tg_submit_on(tg, &t, 1, "ghost2", NULL));
	EXPECT_EQ(NULL, big.buf);

	/* a buffer only a failed task names */
	ASSERT_EQ(0, accel_device_memory_used(self->dev, &m1));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &fresh, &hf));
	fv = tv1(fresh, 0, ACCEL_DTYPE_U32, N1);
	accel_task_prep_copy(&t, &fv, &r, ACCEL_OUTPUT);
	EXPECT_EQ(-ESTALE, tg_submit_on(tg, &t, 1, "ghost3", NULL));
	accel_buffer_destroy(fresh);
	ASSERT_EQ(0, accel_device_memory_used(self->dev, &m2));
	EXPECT_EQ(m1, m2) TH_LOG("the failed capture kept its buffer: %llu bytes, before %llu",
				 (unsigned long long)m2, (unsigned long long)m1);

	accel_task_prep_copy(&t, &o, &v, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "reader", NULL));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	EXPECT_EQ(2, accel_graph_num_tasks(g));
	dot = dot_of(g);
	ASSERT_NE(NULL, dot);
	EXPECT_NE(NULL, strstr(dot, "\tt0 -> t1 [style=dashed, color=black, label=\"RAW\"];"))
		TH_LOG("%s", dot);
	EXPECT_EQ(1, dot_edges(dot)) TH_LOG("%s", dot);
	EXPECT_EQ(NULL, strstr(dot, "ghost"));
	free(dot);
	ASSERT_EQ(0, accel_graph_instantiate(g, &ge));
	ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0));
	ASSERT_EQ(0, accel_graph_exec_wait(ge, 10 * SEC));
	EXPECT_EQ(-1, tg_first_not(ho, N1, 0x12345678));
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);
	accel_tg_destroy(tg);
	accel_buffer_destroy(bv);
	accel_buffer_destroy(bo);
	accel_buffer_destroy(bad);
}

/* an OUTPUT_NEW tensor of @n u32 (shape only) */
static struct accel_tensor tnew(uint64_t n)
{
	struct accel_tensor t;

	memset(&t, 0, sizeof(t));
	t.dtype = ACCEL_DTYPE_U32;
	t.ndims = 1;
	t.shape[0] = n;
	t.strides[0] = 1;
	return t;
}

/* do [a, a + n) and [b, b + n) overlap */
static bool overlaps(uint64_t a, uint64_t b, uint64_t n)
{
	return a < b + n && b < a + n;
}

/*
 * Eager: a task struct reused from an earlier OUTPUT_NEW submission (its
 * tensor filled in) fails on another argument. The program's tensor is
 * untouched, the earlier block stays held (the ring heap stops at it,
 * no later OUTPUT_NEW lands on it, its data survives) and releasing it
 * afterwards works.
 */
TEST_F(tgs, eager_failure_keeps_earlier_block)
{
	enum { QN = 4096 };		/* u32: 16 KiB, a quarter of the heap */
	struct accel_tensor tn, saved, x, r, big, f;
	struct accel_buffer *bx;
	struct accel_tg *tg;
	struct accel_task t, t2;
	uint32_t *hx, *p;
	unsigned int i;
	char off[64];
	uint64_t id;
	void *host;
	int ret = 0;

	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 64 << 10, 20 * SEC, &tg));
	ASSERT_EQ(0, tg_buf(self->dev, QN * 4, &bx, &host));
	hx = host;
	for (i = 0; i < QN; i++)
		hx[i] = 0x1000 + i;
	x = tv1(bx, 0, ACCEL_DTYPE_U32, QN);
	tn = tnew(QN);
	accel_task_prep_copy(&t, &tn, &x, ACCEL_OUTPUT_NEW);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "first", NULL));
	ASSERT_NE(NULL, tn.buf);
	saved = tn;

	/* arg 1: a heap tensor released while a DELAY still reads it */
	r = tnew(QN);
	accel_task_prep_fill(&t2, &r, ACCEL_OUTPUT_NEW, 5);
	ASSERT_EQ(0, tg_submit_on(tg, &t2, 1, "r", NULL));
	accel_task_prep_delay(&t2, 300 * MS);
	accel_task_arg(&t2, &r, ACCEL_INPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t2, 1, "hold_r", NULL));
	ASSERT_EQ(0, accel_tg_release(tg, &r));
	t.args[1].t = &r;
	EXPECT_GT(0, tg_submit_on(tg, &t, 0, "reused", &id));
	EXPECT_EQ(0, memcmp(&tn, &saved, sizeof(tn))) TH_LOG("the program's tensor was changed");

	/* arg 1: an OUTPUT_NEW larger than the heap */
	accel_task_prep_delay(&t2, 1000);
	accel_task_arg(&t2, &tn, ACCEL_OUTPUT_NEW);
	big = tnew(1 << 20);
	accel_task_arg(&t2, &big, ACCEL_OUTPUT_NEW);
	EXPECT_EQ(-E2BIG, tg_submit_on(tg, &t2, 0, "reused2", NULL));
	EXPECT_EQ(0, memcmp(&tn, &saved, sizeof(tn))) TH_LOG("the program's tensor was changed");
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));

	/*
	 * New tensors, each released at once, until the ring comes round to
	 * the held block: it stops there (-EDEADLK, the log names the block
	 * held by the program); nothing lands on it.
	 */
	snprintf(off, sizeof(off), "the block at offset %llu", (unsigned long long)saved.offset);
	tg_log_start();
	for (i = 0; i < 8; i++) {
		f = tnew(QN);
		accel_task_prep_fill(&t2, &f, ACCEL_OUTPUT_NEW, 0xdead0000 + i);
		ret = tg_submit_on(tg, &t2, i % 2, "churn", NULL);
		if (ret == -EDEADLK)
			break;
		ASSERT_EQ(0, ret) TH_LOG("round %u", i);
		EXPECT_FALSE(f.buf == saved.buf && overlaps(f.offset, saved.offset, QN * 4))
			TH_LOG("round %u: a new tensor at %llu on the held block at %llu", i,
			       (unsigned long long)f.offset, (unsigned long long)saved.offset);
		ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
		ASSERT_EQ(0, accel_tg_release(tg, &f));
	}
	EXPECT_EQ(-EDEADLK, ret) TH_LOG("the ring went round %u times past the held block", i);
	EXPECT_EQ(1, tg_log_has(off, "held by the program"));
	tg_log_stop();
	ASSERT_EQ(0, accel_tg_map(tg, &saved, ACCEL_MAP_READ, 10 * SEC, &host));
	p = host;
	for (i = 0; i < QN; i++)
		ASSERT_EQ(0x1000 + i, p[i]) TH_LOG("element %u of the held tensor", i);
	EXPECT_EQ(0, accel_tg_unmap(tg, host));
	EXPECT_EQ(0, accel_tg_release(tg, &tn));
	accel_tg_destroy(tg);
	accel_buffer_destroy(bx);
}

/*
 * Ring room: queue 1 of a 16-packet ring behind a 1 s DELAY. A task that
 * cannot get room within the timeout (300 ms) fails and leaves the
 * program's reused OUTPUT_NEW tensor alone; a launch that cannot get room
 * on queue 1 writes nothing on queue 0 either, and never runs.
 */
TEST_F(tgs, ring_timeout_writes_nothing)
{
	struct accel_buffer *bm0, *bm1, *bx;
	struct accel_tensor m0, m1, x, tn, saved;
	uint32_t *hm0, *hm1, *hx;
	uint64_t sub0, sub1, id;
	struct accel_graph_exec *ge;
	struct accel_queue *q0, *q1;
	struct accel_graph *g;
	struct accel_tg *tg;
	struct accel_task t;
	int ret = 0;
	unsigned int i;

	ASSERT_EQ(0, tg_create1(self->dev, 2, 16, 0, 300 * MS, &tg));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &bm0, &hm0));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &bm1, &hm1));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 3, &bx, &hx));
	m0 = tv1(bm0, 0, ACCEL_DTYPE_U32, N1);
	m1 = tv1(bm1, 0, ACCEL_DTYPE_U32, N1);
	x = tv1(bx, 0, ACCEL_DTYPE_U32, N1);
	q0 = accel_tg_queue(tg, 0, 0);
	q1 = accel_tg_queue(tg, 0, 1);
	ASSERT_NE(NULL, q0);
	ASSERT_NE(NULL, q1);
	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	accel_task_prep_fill(&t, &m0, ACCEL_OUTPUT, 0x5a5a5a5a);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "marker0", NULL));
	accel_task_prep_fill(&t, &m1, ACCEL_OUTPUT, 0x5b5b5b5b);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "marker1", NULL));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	ASSERT_EQ(0, accel_graph_instantiate(g, &ge));
	tn = tnew(N1);
	accel_task_prep_copy(&t, &tn, &x, ACCEL_OUTPUT_NEW);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "tn", NULL));
	saved = tn;

	/* fill queue 1's ring behind a 1 s DELAY, until a task times out */
	accel_task_prep_delay(&t, 1000 * MS);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "long", NULL));
	for (i = 0; i < 64; i++) {
		struct accel_tensor f = tv1(bx, 0, ACCEL_DTYPE_U32, 1);

		accel_task_prep_delay(&t, 1000);
		accel_task_arg(&t, &f, ACCEL_INPUT);
		ret = tg_submit_on(tg, &t, 1, "filler", &id);
		if (ret)
			break;
	}
	ASSERT_EQ(-ETIMEDOUT, ret) TH_LOG("%u tasks fit", i);
	/* a reused OUTPUT_NEW task on the full queue */
	sub0 = accel_queue_submitted(q0);
	sub1 = accel_queue_submitted(q1);
	accel_task_prep_copy(&t, &tn, &x, ACCEL_OUTPUT_NEW);
	EXPECT_EQ(-ETIMEDOUT, tg_submit_on(tg, &t, 1, "tn_again", NULL));
	EXPECT_EQ(0, memcmp(&tn, &saved, sizeof(tn))) TH_LOG("the program's tensor was changed");
	/* the launch: queue 0 has room, queue 1 has none */
	EXPECT_EQ(-ETIMEDOUT, accel_graph_launch(ge, NULL, 0));
	EXPECT_EQ(sub0, accel_queue_submitted(q0));
	EXPECT_EQ(sub1, accel_queue_submitted(q1));
	/* once the DELAY is over: nothing of the launch ran, or runs now */
	usleep(1200 * 1000);
	accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 4);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "after", &id));
	EXPECT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	EXPECT_EQ(-1, tg_first_not(hm0, N1, 0)) TH_LOG("marker0 ran: 0x%08x", hm0[0]);
	EXPECT_EQ(-1, tg_first_not(hm1, N1, 0)) TH_LOG("marker1 ran: 0x%08x", hm1[0]);
	EXPECT_EQ(-1, tg_first_not(hx, N1, 4));
	/* and the launch works now */
	ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0));
	EXPECT_EQ(0, accel_graph_exec_wait(ge, 10 * SEC));
	EXPECT_EQ(-1, tg_first_not(hm0, N1, 0x5a5a5a5a));
	EXPECT_EQ(-1, tg_first_not(hm1, N1, 0x5b5b5b5b));
	EXPECT_EQ(0, accel_tg_release(tg, &tn));
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);
	accel_tg_destroy(tg);
	accel_buffer_destroy(bm0);
	accel_buffer_destroy(bm1);
	accel_buffer_destroy(bx);
}

/* ---- 5. heap tensor identity ---- */

/* a FILL of a new heap tensor of @n u32, completed */
static int heap_fill(struct accel_tg *tg, struct accel_tensor *out, uint64_t n, uint32_t v,
		     uint32_t queue)
{
	struct accel_task t;
	int ret;

	*out = tnew(n);
	accel_task_prep_fill(&t, out, ACCEL_OUTPUT_NEW, v);
	ret = tg_submit_on(tg, &t, queue, "heap_fill", NULL);
	return ret ? ret : accel_tg_sync(tg, 10 * SEC);
}

/*
 * A released tensor whose block was reclaimed and given to a new tensor
 * at the same offset: releasing the stale descriptor is -ESTALE and frees
 * nothing (the new tensor's own release still works), reading it is
 * -ESTALE.
 */
TEST_F(tgs, heap_stale_release)
{
	enum { QN = 4096 };		/* 16 KiB of a 64 KiB heap */
	struct accel_tensor t1, t2, y;
	struct accel_buffer *by;
	struct accel_tg *tg;
	struct accel_task t;
	unsigned int i;
	uint32_t *hy;
	int ret;

	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 64 << 10, 20 * SEC, &tg));
	ASSERT_EQ(0, tg_buf(self->dev, QN * 4, &by, (void **)&hy));
	y = tv1(by, 0, ACCEL_DTYPE_U32, QN);
	ASSERT_EQ(0, heap_fill(tg, &t1, QN, 1, 0));
	ASSERT_EQ(0, accel_tg_release(tg, &t1));
	for (i = 0; i < 16; i++) {
		ASSERT_EQ(0, heap_fill(tg, &t2, QN, 2 + i, i % 2));
		if (t2.offset == t1.offset)
			break;
		ASSERT_EQ(0, accel_tg_release(tg, &t2));
	}
	ASSERT_GT(16, i) TH_LOG("the heap never came back to offset %llu",
				(unsigned long long)t1.offset);
	tg_log_start();
	EXPECT_EQ(-ESTALE, accel_tg_release(tg, &t1));
	/* reading through the stale descriptor */
	accel_task_prep_copy(&t, &y, &t1, ACCEL_OUTPUT);
	EXPECT_EQ(-ESTALE, tg_submit_on(tg, &t, 0, "stale_read", NULL));
	tg_log_stop();
	/* t2 is still held and intact */
	accel_task_prep_copy(&t, &y, &t2, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "live_read", NULL));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	EXPECT_EQ(-1, tg_first_not(hy, QN, 2 + i));
	/* released through a view derived from it (it keeps the generation) */
	y = t2;
	ASSERT_EQ(0, accel_tensor_slice(&y, 0, 16, 32, 1));
	ret = accel_tg_release(tg, &y);
	EXPECT_EQ(0, ret);
	if (ret)
		accel_tg_release(tg, &t2);
	accel_tg_destroy(tg);
	accel_buffer_destroy(by);
}

/*
 * A live tensor released twice: -EINVAL and a log line. A view of the heap
 * made with accel_tensor_init() carries no generation: -EINVAL for
 * release, submission and map, and the tensor it points into stays held.
 * Reading a released tensor whose block is still in use: -ESTALE.
 */
TEST_F(tgs, heap_release_rules)
{
	enum { QN = 1024 };
	struct accel_tensor t3, t4, v0, y;
	struct accel_buffer *by;
	struct accel_tg *tg;
	struct accel_task t;
	uint32_t *hy;
	uint64_t shape = QN;
	void *p;

	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 64 << 10, 20 * SEC, &tg));
	ASSERT_EQ(0, tg_buf(self->dev, QN * 4, &by, (void **)&hy));
	y = tv1(by, 0, ACCEL_DTYPE_U32, QN);
	ASSERT_EQ(0, heap_fill(tg, &t3, QN, 3, 0));
	/* a DELAY keeps t3's block in use */
	accel_task_prep_delay(&t, 300 * MS);
	accel_task_arg(&t, &t3, ACCEL_INPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "hold", NULL));
	tg_log_start();
	EXPECT_EQ(0, accel_tg_release(tg, &t3));
	EXPECT_EQ(-EINVAL, accel_tg_release(tg, &t3));
	EXPECT_EQ(1, tg_log_has("accel_tg_release", "already released"));
	/* still in use, but released: no new reader */
	accel_task_prep_copy(&t, &y, &t3, ACCEL_OUTPUT);
	EXPECT_EQ(-ESTALE, tg_submit_on(tg, &t, 0, "read_released", NULL));
	EXPECT_EQ(-ESTALE, accel_tg_map(tg, &t3, ACCEL_MAP_READ, 10 * SEC, &p));

	/* a view of the heap without a generation */
	ASSERT_EQ(0, heap_fill(tg, &t4, QN, 4, 0));
	ASSERT_EQ(0, accel_tensor_init(&v0, t4.buf, t4.offset, ACCEL_DTYPE_U32, 1, &shape));
	EXPECT_EQ(-EINVAL, accel_tg_release(tg, &v0));
	accel_task_prep_copy(&t, &y, &v0, ACCEL_OUTPUT);
	EXPECT_EQ(-EINVAL, tg_submit_on(tg, &t, 0, "read_gen0", NULL));
	EXPECT_EQ(-EINVAL, accel_tg_map(tg, &v0, ACCEL_MAP_READ, 10 * SEC, &p));
	tg_log_stop();
	/* t4 is still held */
	accel_task_prep_copy(&t, &y, &t4, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "read_t4", NULL));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	EXPECT_EQ(-1, tg_first_not(hy, QN, 4));
	EXPECT_EQ(0, accel_tg_release(tg, &t4));
	accel_tg_destroy(tg);
	accel_buffer_destroy(by);
}

/*
 * An open map keeps its heap block, released or not: the program may
 * release a heap tensor while a map of it is open, and the block must not
 * go to a new tensor (and a task write it) before the unmap. The heap
 * fills up behind the mapped block instead; an allocation that could only
 * get space from it fails at once with -EDEADLK naming the open map, not
 * after the timeout. After the unmap the block comes back.
 * (The whole-task-graph oracle found it: seed 548 of 300 steps.)
 */
TEST_F_TIMEOUT(tgs, map_keeps_a_released_heap_block, 60)
{
	enum { QN = 4096 };		/* 16 KiB of a 64 KiB heap */
	struct accel_tensor t1, t2[4];
	struct accel_tg *tg;
	unsigned int i, n;
	uint32_t *p;
	int64_t t0;
	int ret;

	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 64 << 10, 20 * SEC, &tg));
	ASSERT_EQ(0, heap_fill(tg, &t1, QN, 1, 0));
	ASSERT_EQ(0, accel_tg_map(tg, &t1, ACCEL_MAP_READ | ACCEL_MAP_WRITE, 10 * SEC,
				  (void **)&p));
	EXPECT_EQ(-1, tg_first_not(p, QN, 1));
	ASSERT_EQ(0, accel_tg_release(tg, &t1));
	tg_log_start();
	t0 = tg_now_ns();
	for (n = 0; n < 4; n++) {
		ret = heap_fill(tg, &t2[n], QN, 2 + n, n % 2);
		if (ret)
			break;
		EXPECT_TRUE(t2[n].offset + QN * 4 <= t1.offset || t2[n].offset >= t1.offset + QN * 4)
			TH_LOG("tensor %u at offset %llu overlaps the mapped block at %llu", n,
			       (unsigned long long)t2[n].offset, (unsigned long long)t1.offset);
		ASSERT_EQ(0, accel_tg_release(tg, &t2[n]));
	}
	EXPECT_EQ(-EDEADLK, ret);
	EXPECT_EQ(3, n);
	EXPECT_GT(1 * SEC, tg_now_ns() - t0);
	EXPECT_EQ(1, tg_log_has("output heap", "open map"));
	tg_log_stop();
	/* the host's bytes are intact and it may still write them */
	EXPECT_EQ(-1, tg_first_not(p, QN, 1));
	tg_set_u32(p, QN, 7);
	ASSERT_EQ(0, accel_tg_unmap(tg, p));
	/* unmapped: the block comes back, the heap flows again */
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, heap_fill(tg, &t2[0], QN, 20 + i, i % 2));
		ASSERT_EQ(0, accel_tg_release(tg, &t2[0]));
	}
	accel_tg_destroy(tg);
}

/* ---- 6. binding aliases ---- */

/*
 * The graph copies a into b and fills x. {a->x, b->x} and {a->b} (b used
 * unbound) would make two of its buffers one: -EINVAL, the log naming
 * both; {a->b, b->a} swaps them and works.
 */
TEST_F(tgs, launch_binding_aliases)
{
	struct accel_buffer *a, *b, *x;
	struct accel_tensor ta, tb, tx;
	uint32_t *ha, *hb, *hx;
	struct accel_graph_exec *ge;
	struct accel_graph *g;
	struct accel_tg *tg;
	struct accel_task t;
	char sa[32], sb[32], sx[32];

	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 0, 20 * SEC, &tg));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0xA, &a, &ha));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0xB, &b, &hb));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &x, &hx));
	ta = tv1(a, 0, ACCEL_DTYPE_U32, N1);
	tb = tv1(b, 0, ACCEL_DTYPE_U32, N1);
	tx = tv1(x, 0, ACCEL_DTYPE_U32, N1);
	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	accel_task_prep_copy(&t, &tb, &ta, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "copy_a_b", NULL));
	accel_task_prep_fill(&t, &tx, ACCEL_OUTPUT, 0x77);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "fill_x", NULL));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	ASSERT_EQ(0, accel_graph_instantiate(g, &ge));
	/* the log names a graph buffer as "(0x<address>)" */
	snprintf(sa, sizeof(sa), "(0x%llx)", (unsigned long long)accel_buffer_va(a));
	snprintf(sb, sizeof(sb), "(0x%llx)", (unsigned long long)accel_buffer_va(b));
	snprintf(sx, sizeof(sx), "(0x%llx)", (unsigned long long)accel_buffer_va(x));

	tg_log_start();
	EXPECT_EQ(-EINVAL, accel_graph_launch(ge, (struct accel_binding[]){
			{ .from = a, .to = x }, { .from = b, .to = x } }, 2));
	EXPECT_EQ(1, tg_log_has(sa, sb));
	tg_log_start();
	EXPECT_EQ(-EINVAL, accel_graph_launch(ge, (struct accel_binding[]){
			{ .from = a, .to = b } }, 1));
	EXPECT_EQ(1, tg_log_has(sa, sb));
	tg_log_start();
	EXPECT_EQ(-EINVAL, accel_graph_launch(ge, (struct accel_binding[]){
			{ .from = a, .to = x } }, 1));
	EXPECT_EQ(1, tg_log_has(sa, sx));
	tg_log_stop();
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	/* nothing ran */
	EXPECT_EQ(-1, tg_first_not(ha, N1, 0xA));
	EXPECT_EQ(-1, tg_first_not(hb, N1, 0xB));
	EXPECT_EQ(-1, tg_first_not(hx, N1, 0));

	/* the swap: copies b into a */
	ASSERT_EQ(0, accel_graph_launch(ge, (struct accel_binding[]){
			{ .from = a, .to = b }, { .from = b, .to = a } }, 2));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	EXPECT_EQ(-1, tg_first_not(ha, N1, 0xB));
	EXPECT_EQ(-1, tg_first_not(hb, N1, 0xB));
	EXPECT_EQ(-1, tg_first_not(hx, N1, 0x77));
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);
	accel_tg_destroy(tg);
	accel_buffer_destroy(a);
	accel_buffer_destroy(b);
	accel_buffer_destroy(x);
}

/* ---- 7. maps ---- */

/*
 * A second map over an open one of the same task graph that would wait
 * for it (WRITE over READ, anything over WRITE) fails at once with
 * -EDEADLK, even with ACCEL_FOREVER (the harness's timeout turns a hang
 * into a failure); READ over READ and disjoint maps work.
 */
TEST_F_TIMEOUT(tgs, map_self_deadlock, 30)
{
	struct accel_tensor v, w, u, u2, all;
	struct accel_buffer *b;
	struct accel_tg *tg;
	void *host, *p1, *p2, *p3, *p4, *p;
	int64_t t0;

	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 0, 20 * SEC, &tg));
	ASSERT_EQ(0, tg_buf(self->dev, 64 << 10, &b, &host));
	v = tv1(b, 0, ACCEL_DTYPE_U8, 16 << 10);
	w = tv1(b, 8 << 10, ACCEL_DTYPE_U8, 16 << 10);
	u = tv1(b, 32 << 10, ACCEL_DTYPE_U8, 16 << 10);
	u2 = tv1(b, 40 << 10, ACCEL_DTYPE_U8, 4 << 10);
	all = tv1(b, 0, ACCEL_DTYPE_U8, 64 << 10);

	ASSERT_EQ(0, accel_tg_map(tg, &v, ACCEL_MAP_READ, ACCEL_FOREVER, &p1));
	ASSERT_EQ(0, accel_tg_map(tg, &v, ACCEL_MAP_READ, ACCEL_FOREVER, &p2));
	t0 = tg_now_ns();
	EXPECT_EQ(-EDEADLK, accel_tg_map(tg, &w, ACCEL_MAP_WRITE, ACCEL_FOREVER, &p));
	EXPECT_EQ(-EDEADLK, accel_tg_map(tg, &w, ACCEL_MAP_READ | ACCEL_MAP_WRITE, 5 * SEC, &p));
	EXPECT_GT(1 * SEC, tg_now_ns() - t0);
	ASSERT_EQ(0, accel_tg_map(tg, &u, ACCEL_MAP_WRITE, ACCEL_FOREVER, &p3));
	ASSERT_EQ(0, accel_tg_map(tg, &w, ACCEL_MAP_READ, ACCEL_FOREVER, &p4));
	t0 = tg_now_ns();
	EXPECT_EQ(-EDEADLK, accel_tg_map(tg, &u2, ACCEL_MAP_READ, ACCEL_FOREVER, &p));
	EXPECT_EQ(-EDEADLK, accel_tg_map(tg, &u2, ACCEL_MAP_WRITE, ACCEL_FOREVER, &p));
	EXPECT_EQ(-EDEADLK, accel_tg_map(tg, &all, ACCEL_MAP_READ, ACCEL_FOREVER, &p));
	EXPECT_GT(1 * SEC, tg_now_ns() - t0);
	EXPECT_EQ(0, accel_tg_unmap(tg, p1));
	EXPECT_EQ(0, accel_tg_unmap(tg, p2));
	EXPECT_EQ(0, accel_tg_unmap(tg, p3));
	EXPECT_EQ(0, accel_tg_unmap(tg, p4));
	/* all closed: the write map works now */
	ASSERT_EQ(0, accel_tg_map(tg, &all, ACCEL_MAP_WRITE, 5 * SEC, &p));
	EXPECT_EQ(0, accel_tg_unmap(tg, p));
	accel_tg_destroy(tg);
	accel_buffer_destroy(b);
}

/*
 * A map that would wait for a task that itself waits (on the device) for
 * another open map of the task graph: the same self-deadlock, one step
 * removed. It fails at once with -EDEADLK; after the unmap everything runs.
 */
TEST_F_TIMEOUT(tgs, map_self_deadlock_through_task, 60)
{
	struct accel_buffer *bx, *by;
	struct accel_tensor x, y;
	uint32_t *hx, *hy;
	struct accel_tg *tg;
	struct accel_task t;
	void *px, *p;
	int64_t t0;
	uint64_t id;

	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 0, 20 * SEC, &tg));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 1, &bx, &hx));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 2, &by, &hy));
	x = tv1(bx, 0, ACCEL_DTYPE_U32, N1);
	y = tv1(by, 0, ACCEL_DTYPE_U32, N1);
	ASSERT_EQ(0, accel_tg_map(tg, &x, ACCEL_MAP_WRITE, 5 * SEC, &px));
	tg_set_u32(px, N1, 0x3333);
	accel_task_prep_copy(&t, &y, &x, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "waits_for_map", &id));
	t0 = tg_now_ns();
	EXPECT_EQ(-EDEADLK, accel_tg_map(tg, &y, ACCEL_MAP_READ, ACCEL_FOREVER, &p));
	EXPECT_GT(1 * SEC, tg_now_ns() - t0)
		TH_LOG("%lld ms", (long long)((tg_now_ns() - t0) / MS));
	EXPECT_EQ(0, accel_tg_unmap(tg, px));
	EXPECT_EQ(0, accel_tg_task_wait(tg, id, 10 * SEC));
	EXPECT_EQ(-1, tg_first_not(hy, N1, 0x3333));
	accel_tg_destroy(tg);
	accel_buffer_destroy(bx);
	accel_buffer_destroy(by);
}

/* Writing maps of a sealed buffer and of a read-only import: -EACCES; reading ones work. */
TEST_F(tgs, map_write_sealed_or_read_only)
{
	struct accel_buffer *pb, *rb, *imp;
	struct accel_device *devb;
	struct accel_tensor pv, iv;
	struct accel_tg *tg, *tgb;
	void *host, *p;
	int fd;

	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 0, 20 * SEC, &tg));
	ASSERT_EQ(0, accel_buffer_create(self->dev, 4096, ACCEL_BUFFER_PERSISTENT |
					 ACCEL_BUFFER_HOST, &pb));
	memset(accel_buffer_host(pb), 0x3c, 4096);
	ASSERT_EQ(0, accel_buffer_seal(pb));
	pv = tv1(pb, 0, ACCEL_DTYPE_U8, 4096);
	EXPECT_EQ(-EACCES, accel_tg_map(tg, &pv, ACCEL_MAP_WRITE, 5 * SEC, &p));
	EXPECT_EQ(-EACCES, accel_tg_map(tg, &pv, ACCEL_MAP_READ | ACCEL_MAP_WRITE, 5 * SEC, &p));
	ASSERT_EQ(0, accel_tg_map(tg, &pv, ACCEL_MAP_READ, 5 * SEC, &p));
	EXPECT_EQ(0x3c, ((uint8_t *)p)[4095]);
	EXPECT_EQ(0, accel_tg_unmap(tg, p));

	/* a read-only import on a second device */
	ASSERT_EQ(0, lib_fresh_open(LIB_ID_B, "memory=16M engines=1", &devb));
	ASSERT_EQ(0, tg_buf(self->dev, 4096, &rb, &host));
	memset(host, 0x4d, 4096);
	ASSERT_EQ(0, accel_buffer_export(rb, ACCEL_EXPORT_READ_ONLY, &fd));
	ASSERT_EQ(0, accel_buffer_import(devb, fd, 0, &imp));
	close(fd);
	ASSERT_EQ(0, tg_create1(devb, 1, 0, 0, 20 * SEC, &tgb));
	iv = tv1(imp, 0, ACCEL_DTYPE_U8, 4096);
	EXPECT_EQ(-EACCES, accel_tg_map(tgb, &iv, ACCEL_MAP_WRITE, 5 * SEC, &p));
	ASSERT_EQ(0, accel_tg_map(tgb, &iv, ACCEL_MAP_READ, 5 * SEC, &p));
	EXPECT_EQ(0x4d, ((uint8_t *)p)[17]);
	EXPECT_EQ(0, accel_tg_unmap(tgb, p));
	accel_tg_destroy(tgb);
	accel_buffer_destroy(imp);
	accel_device_close(devb);
	accel_tg_destroy(tg);
	accel_buffer_destroy(pb);
	accel_buffer_destroy(rb);
}

/* ---- 8. host tasks and their task graph ---- */

struct reent {
	struct accel_tg *tg, *other;
	struct accel_tensor *own, *oth;	/* a view of each task graph's */
	uint32_t *own_host;		/* its host pointer */
	uint64_t some_id;
	int r_submit, r_sync, r_map, r_wait, r_capture, r_release;
	int r_other_submit, r_other_sync;
	uint32_t seen;
	bool in_submit;			/* set by the test around a submission */
	bool ran_in_submit;
	int runs;
	pthread_t thread;
};

static void reent_fn(void *arg)
{
	struct reent *r = arg;
	struct accel_task t;
	void *p = NULL;

	r->runs++;
	r->thread = pthread_self();
	r->ran_in_submit = r->in_submit;
	accel_task_prep_fill(&t, r->own, ACCEL_OUTPUT, 0xbad);
	r->r_submit = accel_tg_submit(r->tg, &t, NULL);
	r->r_sync = accel_tg_sync(r->tg, 100 * MS);
	r->r_map = accel_tg_map(r->tg, r->own, ACCEL_MAP_READ, 100 * MS, &p);
	if (!r->r_map)
		accel_tg_unmap(r->tg, p);
	r->r_wait = accel_tg_task_wait(r->tg, r->some_id, 100 * MS);
	r->r_capture = accel_tg_capture_begin(r->tg);
	r->r_release = accel_tg_release(r->tg, r->own);
	/* another task graph: fine */
	accel_task_prep_fill(&t, r->oth, ACCEL_OUTPUT, 0x600d);
	r->r_other_submit = accel_tg_submit(r->other, &t, NULL);
	r->r_other_sync = accel_tg_sync(r->other, 10 * SEC);
	/* host pointers: fine; the task declared own as INOUT */
	r->seen = r->own_host[0];
	r->own_host[1] = r->seen + 1;
}

static void reent_check(struct __test_metadata *_metadata, const struct reent *r,
			const uint32_t *oth_host)
{
	EXPECT_EQ(1, r->runs);
	EXPECT_EQ(-EDEADLK, r->r_submit);
	EXPECT_EQ(-EDEADLK, r->r_sync);
	EXPECT_EQ(-EDEADLK, r->r_map);
	EXPECT_EQ(-EDEADLK, r->r_wait);
	EXPECT_EQ(-EDEADLK, r->r_capture);
	EXPECT_EQ(-EDEADLK, r->r_release);
	EXPECT_EQ(0, r->r_other_submit);
	EXPECT_EQ(0, r->r_other_sync);
	EXPECT_EQ(-1, tg_first_not(oth_host, N1, 0x600d));
}

/*
 * A host task that calls its own task graph (submit, sync, map, wait,
 * capture, release) gets -EDEADLK for each, on the waiting thread or on
 * the worker; another task graph and its own host pointers are fine, and
 * the device task after it reads what it wrote.
 */
static void host_reentry(struct __test_metadata *_metadata, struct accel_device *dev, int worker)
{
	struct accel_buffer *bo, *bp, *bq;
	struct accel_tensor own, oth, q;
	uint32_t *ho, *hp, *hq;
	struct accel_tg *tg, *tg2;
	struct reent r;
	struct accel_task t;
	uint64_t id;

	memset(&r, 0, sizeof(r));
	ASSERT_EQ(0, tg_create1(dev, 2, 0, 0, 20 * SEC, &tg));
	ASSERT_EQ(0, tg_create1(dev, 1, 0, 0, 20 * SEC, &tg2));
	ASSERT_EQ(0, tg_mkbuf(dev, B1, 0, &bo, &ho));
	ASSERT_EQ(0, tg_mkbuf(dev, B1, 0, &bp, &hp));
	ASSERT_EQ(0, tg_mkbuf(dev, B1, 0, &bq, &hq));
	own = tv1(bo, 0, ACCEL_DTYPE_U32, 2);
	oth = tv1(bp, 0, ACCEL_DTYPE_U32, N1);
	q = tv1(bq, 0, ACCEL_DTYPE_U32, 2);
	r.tg = tg;
	r.other = tg2;
	r.own = &own;
	r.oth = &oth;
	r.own_host = ho;
	if (worker)
		ASSERT_EQ(0, accel_tg_start_worker(tg));
	/* the host task after a slow device write of own */
	accel_task_prep_delay(&t, 50 * MS);
	accel_task_arg(&t, &own, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "slow", NULL));
	accel_task_prep_fill(&t, &own, ACCEL_OUTPUT, 41);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "fill_own", &r.some_id));
	accel_task_prep_host(&t, reent_fn, &r);
	accel_task_arg(&t, &own, ACCEL_INOUT);
	t.name = "reentrant";
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &id));
	accel_task_prep_copy(&t, &q, &own, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "after_host", NULL));
	if (worker) {
		ASSERT_EQ(1, tg_poll_done(tg, id, 10 * SEC));
		EXPECT_EQ(0, pthread_equal(r.thread, pthread_self()));
	}
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	if (!worker)
		EXPECT_NE(0, pthread_equal(r.thread, pthread_self()));
	reent_check(_metadata, &r, hp);
	EXPECT_EQ(41, r.seen);
	EXPECT_EQ(41, hq[0]);
	EXPECT_EQ(42, hq[1]);
	/* the task graph is fine afterwards */
	accel_task_prep_fill(&t, &q, ACCEL_OUTPUT, 5);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "later", NULL));
	EXPECT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	EXPECT_EQ(5, hq[1]);
	accel_tg_destroy(tg);
	accel_tg_destroy(tg2);
	accel_buffer_destroy(bo);
	accel_buffer_destroy(bp);
	accel_buffer_destroy(bq);
}

TEST_F_TIMEOUT(tgs, host_reentry_waiting_thread, 60)
{
	host_reentry(_metadata, self->dev, 0);
}

TEST_F_TIMEOUT(tgs, host_reentry_worker, 60)
{
	host_reentry(_metadata, self->dev, 1);
}

/*
 * The host task becomes ready while a submission waits for heap space
 * (the heap is held by a tensor a 500 ms DELAY reads) and runs inside that
 * submission; its calls of the task graph get -EDEADLK there too.
 */
TEST_F_TIMEOUT(tgs, host_reentry_inside_heap_wait, 60)
{
	enum { QN = 12 << 10 };		/* u32: 48 KiB of a 64 KiB heap */
	struct accel_tensor own, oth, hbig, h2;
	struct accel_buffer *bo, *bp;
	struct accel_tg *tg, *tg2;
	uint32_t *ho, *hp;
	struct accel_tg_stats st;
	struct accel_task t;
	struct reent r;

	memset(&r, 0, sizeof(r));
	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 64 << 10, 20 * SEC, &tg));
	ASSERT_EQ(0, tg_create1(self->dev, 1, 0, 0, 20 * SEC, &tg2));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &bo, &ho));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &bp, &hp));
	own = tv1(bo, 0, ACCEL_DTYPE_U32, 2);
	oth = tv1(bp, 0, ACCEL_DTYPE_U32, N1);
	r.tg = tg;
	r.other = tg2;
	r.own = &own;
	r.oth = &oth;
	r.own_host = ho;
	/* the heap: most of it held by a tensor a 500 ms DELAY reads */
	hbig = tnew(QN);
	accel_task_prep_fill(&t, &hbig, ACCEL_OUTPUT_NEW, 1);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "big", NULL));
	accel_task_prep_delay(&t, 500 * MS);
	accel_task_arg(&t, &hbig, ACCEL_INPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 1, "hold_big", NULL));
	ASSERT_EQ(0, accel_tg_release(tg, &hbig));
	/* the host task: ready 100 ms from now */
	accel_task_prep_delay(&t, 100 * MS);
	accel_task_arg(&t, &own, ACCEL_OUTPUT);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "slow", &r.some_id));
	accel_task_prep_host(&t, reent_fn, &r);
	accel_task_arg(&t, &own, ACCEL_INOUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	EXPECT_EQ(0, r.runs);
	/* 32 KiB more than the heap has free: waits for the DELAY */
	h2 = tnew(8 << 10);
	accel_task_prep_fill(&t, &h2, ACCEL_OUTPUT_NEW, 2);
	r.in_submit = true;
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "waits_for_heap", NULL));
	r.in_submit = false;
	tg_stats(tg, &st);
	EXPECT_EQ(1, st.stall_heap);
	EXPECT_EQ(1, r.runs);
	EXPECT_TRUE(r.ran_in_submit);
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	reent_check(_metadata, &r, hp);
	EXPECT_EQ(0, accel_tg_release(tg, &h2));
	accel_tg_destroy(tg);
	accel_tg_destroy(tg2);
	accel_buffer_destroy(bo);
	accel_buffer_destroy(bp);
}

struct nest {
	struct accel_tg *a, *b;
	struct accel_tensor *va;
	int r_inner_submit, r_inner_sync, r_outer_sync, inner_runs, outer_runs;
};

/* a host task of b: calls a, whose host task is running further up this thread */
static void nest_inner(void *arg)
{
	struct nest *n = arg;
	struct accel_task t;

	n->inner_runs++;
	accel_task_prep_fill(&t, n->va, ACCEL_OUTPUT, 0xbad);
	n->r_inner_submit = accel_tg_submit(n->a, &t, NULL);
	n->r_inner_sync = accel_tg_sync(n->a, 100 * MS);
}

/* a host task of a: waits for b, which runs b's host tasks on this thread */
static void nest_outer(void *arg)
{
	struct nest *n = arg;

	n->outer_runs++;
	n->r_outer_sync = accel_tg_sync(n->b, 10 * SEC);
}

/*
 * Re-entry one task graph removed: a host task of task graph a syncs task
 * graph b (fine), and b's host task, run on the same thread inside it,
 * calls a: -EDEADLK, as if a's host task had called a itself.
 */
TEST_F_TIMEOUT(tgs, host_reentry_nested, 60)
{
	struct accel_buffer *ba, *bb;
	struct accel_tensor va, vb;
	struct accel_tg *a, *b;
	struct accel_task t;
	struct nest n = { 0 };
	uint32_t *ha, *hb;

	ASSERT_EQ(0, tg_create1(self->dev, 1, 0, 0, 20 * SEC, &a));
	ASSERT_EQ(0, tg_create1(self->dev, 1, 0, 0, 20 * SEC, &b));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &ba, &ha));
	ASSERT_EQ(0, tg_mkbuf(self->dev, B1, 0, &bb, &hb));
	va = tv1(ba, 0, ACCEL_DTYPE_U32, N1);
	vb = tv1(bb, 0, ACCEL_DTYPE_U32, N1);
	n.a = a;
	n.b = b;
	n.va = &va;
	/* b's host task: after a 100 ms DELAY, so that it runs inside a's */
	accel_task_prep_delay(&t, 100 * MS);
	accel_task_arg(&t, &vb, ACCEL_OUTPUT);
	ASSERT_EQ(0, accel_tg_submit(b, &t, NULL));
	accel_task_prep_host(&t, nest_inner, &n);
	accel_task_arg(&t, &vb, ACCEL_INPUT);
	ASSERT_EQ(0, accel_tg_submit(b, &t, NULL));
	EXPECT_EQ(0, n.inner_runs);
	accel_task_prep_host(&t, nest_outer, &n);
	ASSERT_EQ(0, accel_tg_submit(a, &t, NULL));
	ASSERT_EQ(0, accel_tg_sync(a, 10 * SEC));
	EXPECT_EQ(1, n.outer_runs);
	EXPECT_EQ(1, n.inner_runs);
	EXPECT_EQ(0, n.r_outer_sync);
	EXPECT_EQ(-EDEADLK, n.r_inner_submit);
	EXPECT_EQ(-EDEADLK, n.r_inner_sync);
	EXPECT_EQ(0, accel_tg_sync(a, 10 * SEC));
	EXPECT_EQ(-1, tg_first_not(ha, N1, 0));
	accel_tg_destroy(a);
	accel_tg_destroy(b);
	accel_buffer_destroy(ba);
	accel_buffer_destroy(bb);
}

#ifndef TG_OLD_LIB
struct hbuf_rec {
	struct accel_buffer *captured, *seen;
	int runs;
};

static void hbuf_fn(void *arg)
{
	struct hbuf_rec *r = arg;
	uint32_t *h;

	r->runs++;
	r->seen = accel_tg_host_buffer(r->captured);
	h = accel_buffer_host(r->seen);
	if (h)
		h[0] += 100;
}

/*
 * accel_tg_host_buffer() inside a launched host task is the buffer bound
 * for that launch; the captured buffer without a binding, in an eager
 * host task and outside host tasks.
 */
TEST_F(tgs, host_buffer_of_launch)
{
	struct accel_buffer *a, *a2;
	struct accel_tensor ta;
	struct hbuf_rec r = { 0 };
	struct accel_graph_exec *ge;
	struct accel_graph *g;
	struct accel_tg *tg;
	struct accel_task t;
	uint32_t *ha, *ha2;

	ASSERT_EQ(0, tg_create1(self->dev, 2, 0, 0, 20 * SEC, &tg));
	ASSERT_EQ(0, accel_buffer_create(self->dev, B1, ACCEL_BUFFER_HOST, &a));
	ASSERT_EQ(0, accel_buffer_create(self->dev, B1, ACCEL_BUFFER_HOST, &a2));
	ha = accel_buffer_host(a);
	ha2 = accel_buffer_host(a2);
	ha[0] = 1;
	ha2[0] = 2;
	r.captured = a;
	EXPECT_EQ(a, accel_tg_host_buffer(a));
	ta = tv1(a, 0, ACCEL_DTYPE_U32, N1);
	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	accel_task_prep_fill(&t, &ta, ACCEL_OUTPUT, 10);
	ASSERT_EQ(0, tg_submit_on(tg, &t, 0, "fill_a", NULL));
	accel_task_prep_host(&t, hbuf_fn, &r);
	accel_task_arg(&t, &ta, ACCEL_INOUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	ASSERT_EQ(0, accel_graph_instantiate(g, &ge));
	ASSERT_EQ(0, accel_graph_launch(ge, (struct accel_binding[]){
			{ .from = a, .to = a2 } }, 1));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	EXPECT_EQ(1, r.runs);
	EXPECT_EQ(a2, r.seen);
	EXPECT_EQ(110, ha2[0]);
	EXPECT_EQ(1, ha[0]);
	ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	EXPECT_EQ(2, r.runs);
	EXPECT_EQ(a, r.seen);
	EXPECT_EQ(110, ha[0]);
	/* eager */
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	EXPECT_EQ(3, r.runs);
	EXPECT_EQ(a, r.seen);
	EXPECT_EQ(210, ha[0]);
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);
	accel_tg_destroy(tg);
	accel_buffer_destroy(a);
	accel_buffer_destroy(a2);
}
#endif

TEST_HARNESS_MAIN
