// SPDX-License-Identifier: MIT
/*
 * The task graph natively, under ASan and UBSan: the whole library over
 * the fake kernel of fake_kmod.h in its complete-all mode (every packet
 * completes at once; an engine thread runs the queues).
 *
 * Defect 11 of issue #14, task struct sizes: struct accel_task carries its
 * size (accel_task_init() sets it). A size below the first release's is
 * -EINVAL, above ACC_STRUCT_MAX or with a non-zero byte past the fields
 * this library knows -E2BIG, a larger size with a zero tail works; checked
 * against an oracle over random sizes and tails, for accel_tg_submit()
 * eager and while capturing and for accel_tg_submit_batch(). A refused
 * task changes nothing: no task counted, no id, its OUTPUT_NEW tensor
 * untouched.
 *
 * Ring room: a full ring at every position relative to the queue's
 * progress marks (the engine stopped, so nothing completes).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* fake_kmod.h's TSan annotations: no TSan here */
void AnnotateIgnoreSyncBegin(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreSyncEnd(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreReadsBegin(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreReadsEnd(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreWritesBegin(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreWritesEnd(const char *file, int line) { (void)file; (void)line; }
void AnnotateNewMemory(const char *file, int line, const volatile void *mem, size_t size)
{
	(void)file; (void)line; (void)mem; (void)size;
}

#include "fake_kmod.h"
#include "kselftest_harness.h"
#include "prng.h"

#include <accel/taskgraph.h>

#define SEED		0x7a5c512eull

/*
 * At the top of a test of a library bug not fixed yet: skipped (naming
 * the bug) unless TG_KNOWN_BUGS=1 is set. The fix removes the line.
 */
#define TG_KNOWN_BUG(what) do {							\
	if (!getenv("TG_KNOWN_BUGS"))						\
		SKIP(return, "known library bug, not fixed yet: %s (TG_KNOWN_BUGS=1 runs the test)", \
		     what);							\
} while (0)
#define ROUNDS		3000
#define NO_ID		0xdeadbeefdeadbeefull	/* never an id */

static int stop_engine;

static void *engine(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_engine, __ATOMIC_RELAXED))
		if (!fake_engine_step(256))
			sched_yield();
	return NULL;
}

FIXTURE(fk) {
	struct accel_device *dev;
	struct accel_buffer *buf;
	struct accel_tg *tg;
	pthread_t eng;
};

FIXTURE_SETUP(fk)
{
	struct accel_tg_params p = { .size = sizeof(p), .queues_per_device = 2,
				     .heap_size = 1 << 20, .timeout_ns = 10000000000ll };

	fake_complete_all = true;
	__atomic_store_n(&stop_engine, 0, __ATOMIC_RELAXED);
	ASSERT_EQ(0, pthread_create(&self->eng, NULL, engine, NULL));
	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake", &self->dev));
	ASSERT_EQ(0, accel_buffer_create(self->dev, 1 << 16, 0, &self->buf));
	ASSERT_EQ(0, accel_tg_create(&self->dev, 1, &p, &self->tg));
}

FIXTURE_TEARDOWN(fk)
{
	accel_tg_destroy(self->tg);
	accel_buffer_destroy(self->buf);
	accel_device_close(self->dev);
	__atomic_store_n(&stop_engine, 1, __ATOMIC_RELAXED);
	pthread_join(self->eng, NULL);
}

/*
 * A task of @size bytes in @raw: @t's fields, then zeros, then @tail at
 * byte @at (if @at is past sizeof(*t) and below @size).
 */
static struct accel_task *sized(unsigned char *raw, const struct accel_task *t, uint32_t size,
				uint32_t at, unsigned char tail)
{
	struct accel_task *r = (struct accel_task *)raw;

	memset(raw, 0, ACC_STRUCT_MAX + 64);
	memcpy(raw, t, sizeof(*t));
	r->size = size;
	if (at >= sizeof(*t) && at < size && at < ACC_STRUCT_MAX + 64)
		raw[at] = tail;
	return r;
}

/* what the library must answer for a task of @size bytes with @tail at @at */
static int oracle(uint32_t size, uint32_t at, unsigned char tail)
{
	if (size < ACCEL_TASK_SIZE_1_0)
		return -EINVAL;
	if (size > ACC_STRUCT_MAX)
		return -E2BIG;
	if (tail && at >= sizeof(struct accel_task) && at < size)
		return -E2BIG;
	return 0;
}

/* a size around the edges, or anywhere */
static uint32_t pick_size(void)
{
	static const uint32_t edges[] = {
		0, 1, 4, 8, ACCEL_TASK_SIZE_1_0 - 1, ACCEL_TASK_SIZE_1_0,
		sizeof(struct accel_task), sizeof(struct accel_task) + 1,
		sizeof(struct accel_task) + 8, 512, ACC_STRUCT_MAX - 1, ACC_STRUCT_MAX,
		ACC_STRUCT_MAX + 1, ACC_STRUCT_MAX + 64, UINT32_MAX,
	};

	if (rn(2))
		return edges[rn(sizeof(edges) / sizeof(edges[0]))];
	return (uint32_t)rn(ACC_STRUCT_MAX + 64);
}

static uint64_t tasks_counted(struct accel_tg *tg)
{
	struct accel_tg_stats st = { .size = sizeof(st) };

	if (accel_tg_get_stats(tg, &st))
		abort();
	return st.tasks + st.captured;
}

/*
 * Random sizes and tails against the oracle: eager, batched (the sized
 * task second of three) and captured. Refused tasks change nothing.
 */
TEST_F(fk, task_size_oracle)
{
	static unsigned char raw[ACC_STRUCT_MAX + 64] __attribute__((aligned(16)));
	struct accel_tensor v = { 0 }, out;
	struct accel_task base, good, *r, *batch[3];
	struct accel_graph *g;
	uint64_t shape = 64, id, ids[3], before;
	unsigned int round, nok = 0, nbad = 0, mode;
	uint32_t size, at;
	unsigned char tail;
	int want, got;

	rng_state = SEED;
	ASSERT_EQ(0, accel_tensor_init(&v, self->buf, 0, ACCEL_DTYPE_U32, 1, &shape));
	accel_task_prep_fill(&good, &v, ACCEL_OUTPUT, 1);
	for (round = 0; round < ROUNDS; round++) {
		size = pick_size();
		at = sizeof(struct accel_task) + (uint32_t)rn(ACC_STRUCT_MAX + 64 - sizeof(base));
		tail = rn(2) ? 0 : (unsigned char)(1 + rn(255));
		want = oracle(size, at, tail);
		/* a copy into a new heap tensor, so that a refusal can be seen to leave it */
		memset(&out, 0, sizeof(out));
		out.dtype = ACCEL_DTYPE_U32;
		out.ndims = 1;
		out.shape[0] = 64;
		accel_task_prep_copy(&base, &out, &v, ACCEL_OUTPUT_NEW);
		r = sized(raw, &base, size, at, tail);
		mode = round % 3;
		before = tasks_counted(self->tg);
		id = NO_ID;
		if (mode == 0) {
			got = accel_tg_submit(self->tg, r, &id);
		} else if (mode == 1) {
			batch[0] = &good;
			batch[1] = r;
			batch[2] = &good;
			ids[1] = NO_ID;
			got = accel_tg_submit_batch(self->tg, batch, 3, ids);
			/* the first always goes; the batch stops at a refused second */
			if (got == 3)
				got = 0;
			else if (got == 1)
				got = want;	/* compared below through the counts */
			else
				got = 1000 + got;
			id = ids[1];
		} else {
			ASSERT_EQ(0, accel_tg_capture_begin(self->tg));
			got = accel_tg_submit(self->tg, r, &id);
			ASSERT_EQ(0, accel_tg_capture_end(self->tg, &g));
			EXPECT_EQ(want ? 0 : 1, accel_graph_num_tasks(g)) TH_LOG("round %u", round);
			accel_graph_destroy(g);
		}
		ASSERT_EQ(want, got) TH_LOG("round %u (mode %u): size %u, byte %u = %u", round,
					    mode, size, at, tail);
		if (want) {
			nbad++;
			EXPECT_EQ(before + (mode == 1), tasks_counted(self->tg))
				TH_LOG("round %u: a refused task was counted", round);
			EXPECT_EQ(NO_ID, id) TH_LOG("round %u: the id was written", round);
			EXPECT_EQ(NULL, out.buf) TH_LOG("round %u: the tensor was filled", round);
		} else {
			nok++;
			EXPECT_EQ(before + 1 + 2 * (mode == 1), tasks_counted(self->tg))
				TH_LOG("round %u", round);
			EXPECT_NE(NULL, out.buf) TH_LOG("round %u", round);
			if (mode != 2)
				EXPECT_NE(NO_ID, id) TH_LOG("round %u", round);
		}
		if (out.buf)
			ASSERT_EQ(0, accel_tg_release(self->tg, &out));
		if (round % 64 == 63)
			ASSERT_EQ(0, accel_tg_sync(self->tg, 10000000000ll));
	}
	EXPECT_EQ(0, accel_tg_sync(self->tg, 10000000000ll));
	TH_LOG("%u accepted, %u refused", nok, nbad);
	EXPECT_LT(ROUNDS / 10, nok);
	EXPECT_LT(ROUNDS / 10, nbad);
}

/* The cases by name: 0, the 1.0 size, larger with a zero tail, a set byte past it. */
TEST_F(fk, task_size_cases)
{
	static unsigned char raw[ACC_STRUCT_MAX + 64] __attribute__((aligned(16)));
	struct accel_tensor v = { 0 };
	struct accel_task t, *r;
	uint64_t shape = 64, id;

	ASSERT_EQ(0, accel_tensor_init(&v, self->buf, 0, ACCEL_DTYPE_U32, 1, &shape));
	accel_task_prep_fill(&t, &v, ACCEL_OUTPUT, 1);
	EXPECT_EQ(sizeof(t), t.size);
	EXPECT_EQ(ACCEL_TASK_SIZE_1_0, sizeof(t));
	t.size = 0;
	EXPECT_EQ(-EINVAL, accel_tg_submit(self->tg, &t, &id));
	t.size = ACCEL_TASK_SIZE_1_0 - 8;
	EXPECT_EQ(-EINVAL, accel_tg_submit(self->tg, &t, &id));
	t.size = sizeof(t);
	EXPECT_EQ(0, accel_tg_submit(self->tg, &t, &id));
	r = sized(raw, &t, sizeof(t) + 256, 0, 0);
	EXPECT_EQ(0, accel_tg_submit(self->tg, r, &id));
	r = sized(raw, &t, sizeof(t) + 256, sizeof(t) + 255, 1);
	EXPECT_EQ(-E2BIG, accel_tg_submit(self->tg, r, &id));
	r = sized(raw, &t, sizeof(t) + 256, sizeof(t), 0x80);
	EXPECT_EQ(-E2BIG, accel_tg_submit(self->tg, r, &id));
	r = sized(raw, &t, ACC_STRUCT_MAX + 1, 0, 0);
	EXPECT_EQ(-E2BIG, accel_tg_submit(self->tg, r, &id));
	EXPECT_EQ(2, tasks_counted(self->tg));
	EXPECT_EQ(0, accel_tg_sync(self->tg, 10000000000ll));
}

/*
 * Ring room and the queues' progress marks (a SIGNAL every ring size / 4
 * packets takes a slot of its own): with the engine stopped, tasks of one
 * packet, and of two (a WAIT on queue 0's unfinished task, and the task),
 * fill queue 1's 16-packet ring, starting at each position relative to
 * the marks. Each submission fits or times out (-ETIMEDOUT); none may
 * take a slot the ring does not have.
 */
TEST(ring_full_at_every_mark_alignment)
{
	struct accel_tg_params p = { .size = sizeof(p), .queues_per_device = 2,
				     .ring_size = 16, .timeout_ns = 20000000 };
	struct accel_tensor x = { 0 }, w = { 0 };
	struct accel_device *dev;
	struct accel_buffer *buf;
	unsigned int two, shift, k, i;
	uint64_t shape = 16;
	struct accel_tg *tg;
	struct accel_task t;
	int ret = 0;

	fake_complete_all = true;
	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake", &dev));
	ASSERT_EQ(0, accel_buffer_create(dev, 4096, 0, &buf));
	ASSERT_EQ(0, accel_tensor_init(&x, buf, 0, ACCEL_DTYPE_U32, 1, &shape));
	ASSERT_EQ(0, accel_tensor_init(&w, buf, 1024, ACCEL_DTYPE_U32, 1, &shape));
	for (two = 0; two < 2; two++) {
		for (shift = 0; shift < 16; shift++) {
			ASSERT_EQ(0, accel_tg_create(&dev, 1, &p, &tg));
			for (k = 0; k < shift; k++) {
				accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, k);
				t.queue = 1;
				ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
				while (fake_engine_step(256))
					;
			}
			if (two) {
				accel_task_prep_fill(&t, &w, ACCEL_OUTPUT, 1);
				t.queue = 0;
				ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
			}
			/* the engine is stopped: nothing completes from here */
			for (i = 0; i < 40; i++) {
				accel_task_prep_delay(&t, 1000);
				accel_task_arg(&t, two ? &w : &x, ACCEL_INPUT);
				t.queue = 1;
				ret = accel_tg_submit(tg, &t, NULL);
				if (ret)
					break;
			}
			EXPECT_EQ(-ETIMEDOUT, ret) TH_LOG("%s-packet tasks, shift %u: %u fit",
							  two ? "two" : "one", shift, i);
			while (fake_engine_step(256))
				;
			EXPECT_EQ(0, accel_tg_sync(tg, 1000000000ll));
			accel_tg_destroy(tg);
		}
	}
	accel_buffer_destroy(buf);
	accel_device_close(dev);
}

TEST_HARNESS_MAIN
