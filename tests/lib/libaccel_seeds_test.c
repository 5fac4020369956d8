// SPDX-License-Identifier: GPL-2.0-only
/*
 * The seed regressions of issue 9 against libaccel's task graph in the VM:
 * real failures of other runtimes (../shared/seeds/ 000, 001, 004), each
 * made into a program that the naive design gets wrong. Each test says how
 * the naive design fails it. Fresh device LIB_ID_A; every test ends with
 * the module's live-object counters back where they started.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "kselftest_harness.h"
#include "libaccel_tg_util.h"

FIXTURE(seed) {
	struct accel_device *dev;
	struct vaccel_counts counts;
};

FIXTURE_SETUP(seed)
{
	self->dev = NULL;
	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, lib_counted_open(LIB_ID_A, "memory=256M engines=2", &self->counts,
				      &self->dev));
}

FIXTURE_TEARDOWN(seed)
{
	if (!lib_present())
		return;
	accel_device_close(self->dev);
	lib_del_device(LIB_ID_A);
	EXPECT_LIB_COUNTS_BACK(&self->counts, 5000);
}

static int tg_make(struct accel_device *dev, uint32_t queues, uint32_t ring, uint64_t heap,
		   struct accel_tg **tg)
{
	struct accel_tg_params p = {
		.size = sizeof(p),
		.queues_per_device = queues,
		.ring_size = ring,
		.heap_size = heap,
		.timeout_ns = 30 * SEC,
	};

	return accel_tg_create(&dev, 1, &p, tg);
}

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/* xorshift: the tests' random run times, reproducible */
static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)(*s >> 11);
}

/*
 * (i) Multi-producer fan-in (seed 000, remaining issue 2). 100 tasks on 4
 * queues write disjoint [16, 16] column blocks of one [16, 1600] f32 tile,
 * behind DELAYs on their queues: 300 ms on queue 3 (writer 99, the newest,
 * finishes first), 400-600 ms on queues 0-2. Then 64 tasks each copy the
 * whole tile out, all submitted while every writer is still pending.
 *
 * Naive design: seed 000's MapEntry::lookup returns only the newest
 * overlapping producer (writer 99). Every reader would then wait for
 * queue 3 only and copy a tile whose blocks from queues 0-2 are still
 * zero; a bounded result array (say 16 producers) would drop most of the
 * writers the same way. Here each copy must equal the full tile, and the
 * statistics must show at least 100 RAW dependencies per reader.
 */
TEST_F_TIMEOUT(seed, i_fan_in, 120)
{
	enum { ROWS = 16, COLS = 1600, W = 100, R = 64, Q = 4, BLK = COLS / W };
	const uint64_t tile_bytes = (uint64_t)ROWS * COLS * 4;
	struct accel_buffer *tb, *ob, *sb;
	struct accel_tensor tile, blk, out, scratch;
	struct accel_tg_stats st;
	struct accel_tg *tg;
	struct accel_task t;
	uint32_t *o;
	unsigned int i, r, row, col;
	void *ht, *ho, *hs;

	ASSERT_EQ(0, tg_buf(self->dev, tile_bytes, &tb, &ht));
	ASSERT_EQ(0, tg_buf(self->dev, R * tile_bytes, &ob, &ho));
	ASSERT_EQ(0, tg_buf(self->dev, 4096, &sb, &hs));
	o = ho;
	ASSERT_EQ(0, tg_make(self->dev, Q, 0, 0, &tg));
	ASSERT_EQ(Q, accel_tg_num_queues(tg, 0));
	tile = tv2(tb, 0, ACCEL_DTYPE_F32, ROWS, COLS);

	for (i = 0; i < Q; i++) {
		scratch = tv1(sb, 256 * i, ACCEL_DTYPE_U32, 16);
		accel_task_prep_delay(&t, (i == Q - 1 ? 3 : i + 4) * 100 * MS);
		accel_task_arg(&t, &scratch, ACCEL_OUTPUT);
		t.queue = i;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	}
	for (i = 0; i < W; i++) {
		blk = tsub(tile, 0, ROWS, i * BLK, BLK);
		accel_task_prep_fill(&t, &blk, ACCEL_OUTPUT, f32_bits((float)(i + 1)));
		t.name = "fan-in writer";
		t.queue = i % Q;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL)) TH_LOG("writer %u", i);
	}
	for (r = 0; r < R; r++) {
		out = tv2(ob, r * tile_bytes, ACCEL_DTYPE_F32, ROWS, COLS);
		accel_task_prep_copy(&t, &out, &tile, ACCEL_OUTPUT);
		t.name = "fan-in reader";
		t.queue = r % 2 ? Q - 1 : ACCEL_TG_AUTO;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL)) TH_LOG("reader %u", r);
	}
	tg_stats(tg, &st);
	EXPECT_LE(R * W, st.deps[0]) TH_LOG("RAW dependencies: %llu",
					    (unsigned long long)st.deps[0]);
	ASSERT_EQ(0, accel_tg_sync(tg, 30 * SEC));
	for (r = 0; r < R; r++)
		for (row = 0; row < ROWS; row++)
			for (col = 0; col < COLS; col++)
				ASSERT_EQ(f32_bits((float)(col / BLK + 1)),
					  o[(uint64_t)r * ROWS * COLS + row * COLS + col])
					TH_LOG("reader %u (%u, %u): writer %u not waited for", r,
					       row, col, col / BLK);
	accel_tg_destroy(tg);
	accel_buffer_destroy(sb);
	accel_buffer_destroy(ob);
	accel_buffer_destroy(tb);
}

/*
 * (ii) Lagging reclaim (seed 000's heap watermark). N producers on queue 0
 * each get a 4 KiB OUTPUT_NEW tensor from a 64 KiB heap (16 blocks) and
 * fill it with their own pattern; each consumer copies its tensor out,
 * behind a random DELAY (0-15 ms) on queue 1 or 2, so consumers finish
 * late and out of order, and the consumer of tensor k is submitted only
 * after producer k + LAG. The program releases each tensor right after
 * submitting its consumer.
 *
 * Naive design: seed 000 reclaimed a producer's block once task
 * "producer + H" had completed; with consumers lagging more than H tasks,
 * the block is handed to a new producer and overwritten before its
 * consumer copies it, so out[k] would hold another producer's pattern. Its
 * watermark "heap_next - vend[F - H]" also underflowed when a core lagged
 * (a fatal "heap ring too small"). Here:
 * - no new tensor may share a byte with a tensor the program still holds,
 *   or with one whose consumer is still pending after the allocation
 *   returned (then it certainly was at allocation). This checks the
 *   heap's placement itself: the data alone would not show an early
 *   reuse, since the TensorMap also orders the new producer's write after
 *   the old consumer's read of those bytes (WAR), and the producer would
 *   only wait (a mutation that frees blocks with tasks in flight passes
 *   the data check and fails this one);
 * - every out[k] holds pattern k;
 * - no submission fails (no -EDEADLK: the blocks in the way are released
 *   and only held by submitted tasks), the heap made producers wait (the
 *   lag really reached it) and reclaimed every block.
 */
TEST_F_TIMEOUT(seed, ii_lagging_reclaim, 180)
{
	enum { N = 300, ELEMS = 1024, LAG = 8, HEAP = 64 << 10 };
	struct accel_tensor nt[N], out, scratch;
	uint64_t cons[N], early = 0;
	struct accel_buffer *ob, *sb;
	struct accel_tg_stats st;
	struct accel_tg *tg;
	struct accel_task t;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned int k, i, c = 0;
	uint32_t *o;
	void *ho, *hs;

	ASSERT_EQ(0, tg_buf(self->dev, (uint64_t)N * ELEMS * 4, &ob, &ho));
	ASSERT_EQ(0, tg_buf(self->dev, 4096, &sb, &hs));
	o = ho;
	ASSERT_EQ(0, tg_make(self->dev, 3, 0, HEAP, &tg));
	for (k = 0; k < N + LAG; k++) {
		if (k < N) {
			if (rnd(&seed) % 4 == 0) {
				/* a producer that takes a while */
				scratch = tv1(sb, 0, ACCEL_DTYPE_U32, 16);
				accel_task_prep_delay(&t, (rnd(&seed) % 3000) * 1000ull);
				accel_task_arg(&t, &scratch, ACCEL_OUTPUT);
				t.queue = 0;
				ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
			}
			memset(&nt[k], 0, sizeof(nt[k]));
			nt[k].dtype = ACCEL_DTYPE_U32;
			nt[k].ndims = 1;
			nt[k].shape[0] = ELEMS;
			accel_task_prep_fill(&t, &nt[k], ACCEL_OUTPUT_NEW, 0x5eed0000u + k * 7919u);
			t.name = "producer";
			t.queue = 0;
			ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL)) TH_LOG("producer %u", k);
			for (i = 0; i < k; i++) {
				bool held = i + LAG >= k;	/* not released yet */

				if (nt[i].buf != nt[k].buf ||
				    nt[i].offset >= nt[k].offset + ELEMS * 4 ||
				    nt[k].offset >= nt[i].offset + ELEMS * 4)
					continue;
				if (held || accel_tg_task_done(tg, cons[i]) == 0)
					early++;
				EXPECT_FALSE(held) TH_LOG("tensor %u placed over held tensor %u",
							  k, i);
			}
		}
		if (k < LAG)
			continue;
		c = k - LAG;
		/* the consumer of tensor c, late and slow */
		scratch = tv1(sb, 1024 + 256 * (c % 2), ACCEL_DTYPE_U32, 16);
		accel_task_prep_delay(&t, (rnd(&seed) % 15000) * 1000ull);
		accel_task_arg(&t, &scratch, ACCEL_OUTPUT);
		t.queue = 1 + c % 2;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		out = tv1(ob, (uint64_t)c * ELEMS * 4, ACCEL_DTYPE_U32, ELEMS);
		accel_task_prep_copy(&t, &out, &nt[c], ACCEL_OUTPUT);
		t.name = "lagging consumer";
		t.queue = 1 + c % 2;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, &cons[c])) TH_LOG("consumer %u", c);
		ASSERT_EQ(0, accel_tg_release(tg, &nt[c]));
	}
	tg_stats(tg, &st);
	TH_LOG("before sync: allocs %llu reclaimed %llu stall_heap %llu high water %llu",
	       (unsigned long long)st.heap_allocs, (unsigned long long)st.heap_reclaimed,
	       (unsigned long long)st.stall_heap, (unsigned long long)st.heap_high_water);
	EXPECT_EQ(0, early) TH_LOG("%llu blocks reused while held or read",
				   (unsigned long long)early);
	EXPECT_EQ(N, st.heap_allocs);
	EXPECT_LE(N - HEAP / (ELEMS * 4), st.heap_reclaimed);	/* the heap kept flowing */
	EXPECT_LT(0, st.stall_heap);			/* and the lag did reach it */
	EXPECT_GE(HEAP, st.heap_high_water);
	ASSERT_EQ(0, accel_tg_sync(tg, 60 * SEC));
	for (k = 0; k < N; k++)
		for (i = 0; i < ELEMS; i++)
			ASSERT_EQ(0x5eed0000u + k * 7919u, o[(uint64_t)k * ELEMS + i])
				TH_LOG("tensor %u element %u: block reused before its consumer", k,
				       i);
	/* a new allocation lets the heap pass over every released block */
	memset(&nt[0], 0, sizeof(nt[0]));
	nt[0].dtype = ACCEL_DTYPE_U32;
	nt[0].ndims = 1;
	nt[0].shape[0] = ELEMS;
	accel_task_prep_fill(&t, &nt[0], ACCEL_OUTPUT_NEW, 1);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_release(tg, &nt[0]));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	tg_stats(tg, &st);
	EXPECT_LE(N, st.heap_reclaimed);
	EXPECT_GE(HEAP, st.heap_high_water);
	accel_tg_destroy(tg);
	accel_buffer_destroy(sb);
	accel_buffer_destroy(ob);
}

/*
 * (iii) A graph whose buffers the program destroys while it is
 * instantiated and while a launch runs (seed 001's recycled KernelElems).
 * The graph: a 200 ms DELAY, tmp1 = in, tmp2 = tmp1, out = tmp2. After the
 * first launch the program destroys the captured graph and tmp1, tmp2 (the
 * launch still running), then creates new buffers of the same sizes and
 * fills them eagerly with its own values, launch after launch.
 *
 * Naive design: without the executable's references, tmp1/tmp2's memory
 * (and device addresses) go back to the allocator at destroy, the new
 * buffers get them, and each replay writes the graph's data into the
 * program's new buffers (and reads theirs into out), as seed 001's
 * recycled elements were overwritten under the captured graph. Here each
 * launch's out must equal that launch's in, and the new buffers must keep
 * the program's values.
 */
TEST_F_TIMEOUT(seed, iii_buffers_freed_under_graph, 120)
{
	enum { N = 16384, L = 12 };
	struct accel_buffer *in, *out, *tmp1, *tmp2, *nb[2];
	struct accel_tensor tin, tout, t1, t2, nt;
	struct accel_graph_exec *ge;
	struct accel_graph *g;
	struct accel_tg *tg;
	struct accel_task t;
	unsigned int it, i, j;
	uint32_t *p;
	void *hin, *hout, *h1, *h2, *hn;

	ASSERT_EQ(0, tg_buf(self->dev, N * 4, &in, &hin));
	ASSERT_EQ(0, tg_buf(self->dev, N * 4, &out, &hout));
	ASSERT_EQ(0, tg_buf(self->dev, N * 4, &tmp1, &h1));
	ASSERT_EQ(0, tg_buf(self->dev, N * 4, &tmp2, &h2));
	ASSERT_EQ(0, tg_make(self->dev, 2, 0, 0, &tg));
	tin = tv1(in, 0, ACCEL_DTYPE_U32, N);
	tout = tv1(out, 0, ACCEL_DTYPE_U32, N);
	t1 = tv1(tmp1, 0, ACCEL_DTYPE_U32, N);
	t2 = tv1(tmp2, 0, ACCEL_DTYPE_U32, N);

	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	accel_task_prep_delay(&t, 200 * MS);
	accel_task_arg(&t, &t1, ACCEL_OUTPUT);
	t.queue = 0;
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, tg_copy(tg, &t1, &tin, 0));
	ASSERT_EQ(0, tg_copy(tg, &t2, &t1, 1));
	ASSERT_EQ(0, tg_copy(tg, &tout, &t2, 0));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	ASSERT_EQ(0, accel_graph_instantiate(g, &ge));

	for (it = 0; it < L; it++) {
		ASSERT_EQ(0, accel_tg_map(tg, &tin, ACCEL_MAP_WRITE, 10 * SEC, (void **)&p));
		for (i = 0; i < N; i++)
			p[i] = it * 100000 + i;
		ASSERT_EQ(0, accel_tg_unmap(tg, p));
		ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0)) TH_LOG("launch %u", it);
		if (it == 0) {
			/* the launch runs (200 ms DELAY first): free what it uses */
			accel_graph_destroy(g);
			accel_buffer_destroy(tmp2);
			accel_buffer_destroy(tmp1);
		}
		/* new buffers of the same size, the program's own data */
		for (j = 0; j < 2; j++) {
			ASSERT_EQ(0, accel_buffer_create(self->dev, N * 4, 0, &nb[j]));
			nt = tv1(nb[j], 0, ACCEL_DTYPE_U32, N);
			accel_task_prep_fill(&t, &nt, ACCEL_OUTPUT, 0xdead0000u + it * 2 + j);
			t.queue = j;
			ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		}
		ASSERT_EQ(0, accel_tg_map(tg, &tout, ACCEL_MAP_READ, 10 * SEC, (void **)&p));
		for (i = 0; i < N; i++)
			ASSERT_EQ(it * 100000 + i, p[i]) TH_LOG("launch %u element %u", it, i);
		ASSERT_EQ(0, accel_tg_unmap(tg, p));
		ASSERT_EQ(0, accel_graph_exec_wait(ge, 10 * SEC));
		ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
		for (j = 0; j < 2; j++) {
			ASSERT_EQ(0, accel_buffer_map(nb[j], &hn));
			for (i = 0; i < N; i++)
				ASSERT_EQ(0xdead0000u + it * 2 + j, ((uint32_t *)hn)[i])
					TH_LOG("launch %u: new buffer %u element %u", it, j, i);
			accel_buffer_destroy(nb[j]);
		}
	}
	accel_graph_exec_destroy(ge);
	accel_tg_destroy(tg);
	accel_buffer_destroy(out);
	accel_buffer_destroy(in);
}

/*
 * (iv) Eager tasks wait on signals that replays also advance (seed 001's
 * counter reset). A graph on two queues (queue 0: g1 = g0; queue 1:
 * g2 = g1, a WAIT across queues inside the graph) is launched LAUNCHES
 * times; around each launch, eager work on both queues: a fill of g0 with
 * the launch's number (queue 1, waits for the last launch's queue-0 part
 * to have read g0) and a copy of g2 into slot i % 64 of a history (queue
 * 0, waits for the launch's queue-1 part).
 *
 * Naive design: seed 001 reset the graph's counters at the end of each
 * replay (increment, then reset), so an eager waiter that had computed
 * "next value >= 2" waited forever once a replay reset the counter to
 * 1, and a replay could clobber its own signals. Here the eager tasks wait
 * on the very timelines the replays advance: a reset would hang them
 * (sync times out) or let them run early (history slots wrong), and a
 * completed task would read as not done again (checked on old ids).
 */
TEST_F_TIMEOUT(seed, iv_eager_waits_on_replayed_signals, 600)
{
	enum { LAUNCHES = 10000, H = 64, E = 64, CHECK = 500 };
	struct accel_buffer *gb, *hb;
	struct accel_tensor g0, g1, g2, hs;
	struct accel_graph_exec *ge;
	struct accel_graph *g;
	struct accel_tg_stats st;
	struct accel_tg *tg;
	struct accel_task t;
	uint64_t id, old_ids[LAUNCHES / CHECK + 1];
	unsigned int i, j, k, nold = 0;
	int64_t t0 = tg_now_ns();
	uint32_t *hist;
	void *hg, *hh;

	/*
	 * The in-process device would run each kicked queue in this thread
	 * (Documentation/sim.rst), finishing every launch before the eager
	 * copy behind it is submitted: no WAIT left to test. Its engines run
	 * the work here, as the module's do.
	 */
	if (lib_on_sim())
		ASSERT_EQ(0, accel_device_debug_write(self->dev, "inline_kick", "N"));
	ASSERT_EQ(0, tg_buf(self->dev, 3 * E * 4, &gb, &hg));
	ASSERT_EQ(0, tg_buf(self->dev, H * E * 4, &hb, &hh));
	hist = hh;
	ASSERT_EQ(0, tg_make(self->dev, 2, 0, 0, &tg));
	g0 = tv1(gb, 0, ACCEL_DTYPE_U32, E);
	g1 = tv1(gb, E * 4, ACCEL_DTYPE_U32, E);
	g2 = tv1(gb, 2 * E * 4, ACCEL_DTYPE_U32, E);

	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	ASSERT_EQ(0, tg_copy(tg, &g1, &g0, 0));
	ASSERT_EQ(0, tg_copy(tg, &g2, &g1, 1));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	ASSERT_EQ(0, accel_graph_instantiate(g, &ge));
	accel_graph_destroy(g);

	for (i = 0; i < LAUNCHES; i++) {
		accel_task_prep_fill(&t, &g0, ACCEL_OUTPUT, i + 1);
		t.queue = 1;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL)) TH_LOG("fill %u", i);
		ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0)) TH_LOG("launch %u", i);
		hs = tv1(hb, (uint64_t)(i % H) * E * 4, ACCEL_DTYPE_U32, E);
		accel_task_prep_copy(&t, &hs, &g2, ACCEL_OUTPUT);
		t.queue = 0;
		ASSERT_EQ(0, accel_tg_submit(tg, &t, &id)) TH_LOG("copy %u", i);
		if (i % CHECK == 0)
			old_ids[nold++] = id;
		if (i % CHECK != CHECK - 1)
			continue;
		ASSERT_EQ(0, accel_tg_sync(tg, 60 * SEC)) TH_LOG("hang after launch %u", i);
		for (k = 0; k < H; k++)
			for (j = 0; j < E; j++)
				ASSERT_EQ(i + 1 - ((i - k) % H + H) % H, hist[k * E + j])
					TH_LOG("after launch %u: slot %u element %u", i, k, j);
		for (k = 0; k < nold; k++)
			ASSERT_EQ(1, accel_tg_task_done(tg, old_ids[k]))
				TH_LOG("task %llu done earlier, not done after launch %u",
				       (unsigned long long)old_ids[k], i);
	}
	tg_stats(tg, &st);
	EXPECT_EQ(LAUNCHES, st.launches);
	EXPECT_EQ(2 * LAUNCHES, st.tasks);
	EXPECT_LE(LAUNCHES, st.waits);
	TH_LOG("%u launches with eager work around each: %lld ms; waits %llu, stall_ring %llu",
	       LAUNCHES, (long long)(tg_now_ns() - t0) / MS, (unsigned long long)st.waits,
	       (unsigned long long)st.stall_ring);
	accel_graph_exec_destroy(ge);
	accel_tg_destroy(tg);
	accel_buffer_destroy(hb);
	accel_buffer_destroy(gb);
}

/*
 * (vii) Graphs of many tasks replayed between eager tasks on 64-slot rings
 * (seed 004: NCCL's work FIFO filled up with the work of captured graphs
 * and the host spun on it forever). The graph: 90% FILLs of single
 * elements of gb and 10% COPYs of 9 of those each into res, on the
 * task graph's queues round-robin (so with two queues the copies WAIT
 * across queues inside the graph).
 */
static void vii_graph(struct __test_metadata *_metadata, struct accel_tg *tg,
		      struct accel_buffer *gb, struct accel_buffer *rb, unsigned int tasks,
		      struct accel_graph_exec **ge)
{
	unsigned int copies = tasks / 10, fills = 9 * copies, i;
	struct accel_tensor e, d;
	struct accel_graph *g;
	struct accel_task t;

	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	for (i = 0; i < fills; i++) {
		e = tv1(gb, 4 * i, ACCEL_DTYPE_U32, 1);
		accel_task_prep_fill(&t, &e, ACCEL_OUTPUT, i + 1);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	}
	for (i = 0; i < copies; i++) {
		e = tv1(gb, 4 * 9 * i, ACCEL_DTYPE_U32, 9);
		d = tv1(rb, 4 * 9 * i, ACCEL_DTYPE_U32, 9);
		accel_task_prep_copy(&t, &d, &e, ACCEL_OUTPUT);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	}
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	ASSERT_EQ(fills + copies, accel_graph_num_tasks(g));
	ASSERT_EQ(0, accel_graph_instantiate(g, ge));
	accel_graph_destroy(g);
}

/*
 * Part 1, one slot per launch: a 1,000-task graph on one queue of a
 * 64-slot ring, kept busy by a 1 s DELAY; 48 launches are submitted
 * behind it. With one EXEC per launch (and no WAIT: same queue) they take
 * 48 of the 64 slots, so none waits for ring room (stall_ring stays 0)
 * and all are submitted while the DELAY still runs; 20 more cannot fit
 * (stall_ring > 0): the ring really is 64 slots. A design that writes a
 * launch's 1,000 packets to the ring needs 1,000 slots per launch: -E2BIG,
 * or a stall on every launch.
 */
TEST_F_TIMEOUT(seed, vii_one_ring_slot_per_launch, 300)
{
	enum { TASKS = 1000, FILLS = 900 };
	struct accel_buffer *gb, *rb, *sb;
	struct accel_tensor scratch;
	struct accel_graph_exec *ge;
	struct accel_tg_stats st;
	struct accel_queue *q;
	struct accel_tg *tg;
	struct accel_task t;
	void *hg, *hr, *hsb;
	unsigned int i;
	uint64_t did, pk0, pk1;
	int64_t t0;

	ASSERT_EQ(0, tg_buf(self->dev, FILLS * 4, &gb, &hg));
	ASSERT_EQ(0, tg_buf(self->dev, FILLS * 4, &rb, &hr));
	ASSERT_EQ(0, tg_buf(self->dev, 4096, &sb, &hsb));
	ASSERT_EQ(0, tg_make(self->dev, 1, 64, 0, &tg));
	vii_graph(_metadata, tg, gb, rb, TASKS, &ge);
	scratch = tv1(sb, 0, ACCEL_DTYPE_U32, 16);
	accel_task_prep_delay(&t, 1000 * MS);
	accel_task_arg(&t, &scratch, ACCEL_OUTPUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, &did));
	q = accel_tg_queue(tg, 0, 0);
	ASSERT_NE(NULL, q);
	EXPECT_EQ(NULL, accel_tg_queue(tg, 0, 1));
	pk0 = accel_queue_submitted(q);
	t0 = tg_now_ns();
	for (i = 0; i < 48; i++)
		ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0)) TH_LOG("launch %u", i);
	tg_stats(tg, &st);
	pk1 = accel_queue_submitted(q);
	TH_LOG("48 launches submitted in %lld ms behind the DELAY: %llu packets",
	       (long long)(tg_now_ns() - t0) / MS, (unsigned long long)(pk1 - pk0));
	/* one EXEC each, plus the queue's progress marks (one per 16 packets) */
	EXPECT_LE(48, pk1 - pk0);
	EXPECT_GE(48 + 48 / 16 + 1, pk1 - pk0);
	EXPECT_EQ(0, st.stall_ring);
	EXPECT_EQ(0, accel_tg_task_done(tg, did));
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0)) TH_LOG("launch %u", i);
	tg_stats(tg, &st);
	EXPECT_LT(0, st.stall_ring);
	ASSERT_EQ(0, accel_tg_sync(tg, 120 * SEC));
	TH_LOG("68 launches of %u tasks done in %lld ms", TASKS,
	       (long long)(tg_now_ns() - t0) / MS);
	for (i = 0; i < FILLS; i++)
		ASSERT_EQ(i + 1, ((uint32_t *)hr)[i]) TH_LOG("res %u", i);
	accel_graph_exec_destroy(ge);
	accel_tg_destroy(tg);
	accel_buffer_destroy(sb);
	accel_buffer_destroy(rb);
	accel_buffer_destroy(gb);
}

/*
 * Part 2: @launches launches of a @tasks-task graph on two queues of
 * 64-slot rings, each between an eager FILL of res with 0 and an eager
 * COPY of res into slot i % 8 of a history, with at most 4 launches in
 * flight (accel_graph_exec_wait() every 4th). In flight per queue at most:
 * 4 launches x (EXEC + 2 WAITs) + 4 x 2 eager tasks x (task + 2 WAITs) =
 * 36 < 64 slots, so no submission may wait for ring room: stall_ring must
 * stay 0. (Pipelining launches without bound fills any ring with one
 * packet per launch too; that is not the seed's failure.) With packets
 * per task on the ring it would stall on each launch, or fail.
 */
static void vii_replay(struct __test_metadata *_metadata, struct accel_device *dev,
		       unsigned int tasks, unsigned int launches)
{
	enum { INFLIGHT = 4, HIST = 8 };
	unsigned int fills = 9 * (tasks / 10), i, j, k;
	struct accel_buffer *gb, *rb, *hb;
	struct accel_tensor r, hs;
	struct accel_graph_exec *ge;
	struct accel_tg_stats st;
	struct accel_tg *tg;
	struct accel_task t;
	void *hg, *hr, *hh;
	uint32_t *hist;
	int64_t t0;

	ASSERT_EQ(0, tg_buf(dev, fills * 4, &gb, &hg));
	ASSERT_EQ(0, tg_buf(dev, fills * 4, &rb, &hr));
	ASSERT_EQ(0, tg_buf(dev, HIST * fills * 4, &hb, &hh));
	hist = hh;
	ASSERT_EQ(0, tg_make(dev, 2, 64, 0, &tg));
	vii_graph(_metadata, tg, gb, rb, tasks, &ge);
	t0 = tg_now_ns();
	r = tv1(rb, 0, ACCEL_DTYPE_U32, fills);
	for (i = 0; i < launches; i++) {
		accel_task_prep_fill(&t, &r, ACCEL_OUTPUT, 0);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL)) TH_LOG("fill %u", i);
		ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0)) TH_LOG("launch %u", i);
		hs = tv1(hb, 4ull * fills * (i % HIST), ACCEL_DTYPE_U32, fills);
		accel_task_prep_copy(&t, &hs, &r, ACCEL_OUTPUT);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL)) TH_LOG("copy %u", i);
		if (i % INFLIGHT == INFLIGHT - 1)
			ASSERT_EQ(0, accel_graph_exec_wait(ge, 60 * SEC)) TH_LOG("%u", i);
		if (i % 1000 != 999 && i != launches - 1)
			continue;
		ASSERT_EQ(0, accel_tg_sync(tg, 60 * SEC));
		TH_LOG("%u launches: %lld ms", i + 1, (long long)(tg_now_ns() - t0) / MS);
		for (k = 0; k < HIST && k <= i; k++)
			for (j = 0; j < fills; j++)
				ASSERT_EQ(j + 1, hist[k * fills + j])
					TH_LOG("launch %u, history %u, element %u", i, k, j);
		memset(hist, 0, HIST * fills * 4);
	}
	tg_stats(tg, &st);
	TH_LOG("%u launches of %u tasks: %lld ms, stall_ring %llu, waits %llu", launches,
	       tasks, (long long)(tg_now_ns() - t0) / MS, (unsigned long long)st.stall_ring,
	       (unsigned long long)st.waits);
	EXPECT_EQ(0, st.stall_ring);
	EXPECT_EQ(launches, st.launches);
	EXPECT_EQ(2 * launches, st.tasks);
	accel_graph_exec_destroy(ge);
	accel_tg_destroy(tg);
	accel_buffer_destroy(hb);
	accel_buffer_destroy(rb);
	accel_buffer_destroy(gb);
}

#ifndef VII_LAUNCHES
#define VII_LAUNCHES	10000
#endif
#ifndef VII_BIG_LAUNCHES
#define VII_BIG_LAUNCHES	10000
#endif

/* 10^4 launches of a small graph (20 tasks) interleaved with eager work */
TEST_F_TIMEOUT(seed, vii_replay_interleaved_small, 600)
{
	vii_replay(_metadata, self->dev, 20, VII_LAUNCHES);
}

/* launches of the 1,000-task graph interleaved with eager work */
TEST_F_TIMEOUT(seed, vii_replay_interleaved_1000, 900)
{
	vii_replay(_metadata, self->dev, 1000, VII_BIG_LAUNCHES);
}

TEST_HARNESS_MAIN
