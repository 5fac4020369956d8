// SPDX-License-Identifier: MIT
/*
 * The TensorMap from the inside: lib/graph/tensormap.c is compiled into
 * this test, with its allocator replaced by one that fails on demand, and
 * its work counters in reach.
 *
 * - enomem_changes_nothing: an insert that cannot get memory fails with
 *   -ENOMEM and leaves the map as it was (a writer that would retire
 *   entries retires none).
 * - reserve_random: random rounds of tm_reserve() for a random list of
 *   buffers (old, new, repeated), then the listed inserts with every
 *   allocation failing: none may fail; without a reservation, an insert
 *   that needs memory fails and changes nothing (statistics and the
 *   answers of a probe lookup unchanged). The same program runs on a
 *   second map with a healthy allocator: both must answer alike.
 * - refresh_needs_no_room: a same-view writer refresh allocates nothing.
 * - forget_cost: tm_forget_buffer() examines the entries of that buffer
 *   and no other (tensormap.c counts them in tm->scanned), and leaves the
 *   other buffers' answers intact.
 * - reclaim_skips_without_progress: with a progress count
 *   (tm_set_progress()), a reclaim scans only when the count changed
 *   since the last scan, and then drops every completed entry; the
 *   automatic reclaims of a run of inserts with nothing completing scan
 *   nothing; without a count, every reclaim scans.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "prng.h"

/* the allocator of the map under test: fails every call while @alloc_fail */
static int alloc_fail;
static uint64_t alloc_calls, alloc_failed;

static void *test_calloc(size_t n, size_t size)
{
	alloc_calls++;
	if (alloc_fail) {
		alloc_failed++;
		return NULL;
	}
	return calloc(n, size);
}

static void *test_malloc(size_t size)
{
	alloc_calls++;
	if (alloc_fail) {
		alloc_failed++;
		return NULL;
	}
	return malloc(size);
}

static void *test_realloc(void *p, size_t size)
{
	alloc_calls++;
	if (alloc_fail) {
		alloc_failed++;
		return NULL;
	}
	return realloc(p, size);
}

#define calloc(n, size)		test_calloc(n, size)
#define realloc(p, size)	test_realloc(p, size)
#define malloc(size)		test_malloc(size)
#include "graph/tensormap.c"
#undef calloc
#undef realloc
#undef malloc

struct rec {
	uint64_t task[512];
	enum tm_dep_kind kind[512];
	uint32_t n;
};

static void rec_fn(void *arg, uint64_t task, enum tm_dep_kind kind)
{
	struct rec *r = arg;

	if (r->n < 512) {
		r->task[r->n] = task;
		r->kind[r->n++] = kind;
	}
}

static int same_stats(const struct tm_stats *a, const struct tm_stats *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/*
 * 64 readers fill the first node pool; a writer covering all of them needs
 * a 65th node. With no memory it must fail before retiring anything: a
 * map that retired the readers and then failed would lose 64 WAR
 * dependencies of the next writer.
 */
TEST(enomem_changes_nothing)
{
	struct accel_buffer *buf = (struct accel_buffer *)(uintptr_t)0x7000;
	uint64_t shape[1] = { 64 * 16 };
	struct tm_stats before, after;
	struct accel_tensor all, part;
	struct tensormap *tm;
	struct rec r;
	uint32_t i;

	ASSERT_EQ(0, tm_create(NULL, NULL, &tm));
	ASSERT_EQ(0, accel_tensor_init(&all, buf, 0, ACCEL_DTYPE_U8, 1, shape));
	for (i = 0; i < 64; i++) {
		part = all;
		ASSERT_EQ(0, accel_tensor_slice(&part, 0, i * 16, 16, 1));
		ASSERT_EQ(0, tm_insert(tm, &part, ACCEL_INPUT, i));
	}
	tm_get_stats(tm, &before);
	ASSERT_EQ(64, before.live_entries);
	alloc_fail = 1;
	ASSERT_EQ(-ENOMEM, tm_insert(tm, &all, ACCEL_OUTPUT, 100));
	/* a new buffer needs its index too: nothing added either */
	part = all;
	part.buf = (struct accel_buffer *)(uintptr_t)0x8000;
	ASSERT_EQ(-ENOMEM, tm_insert(tm, &part, ACCEL_INPUT, 101));
	ASSERT_EQ(-ENOMEM, tm_reserve(tm, (const struct accel_buffer *const *)&buf, 1));
	alloc_fail = 0;
	tm_get_stats(tm, &after);
	ASSERT_TRUE(same_stats(&before, &after));
	r.n = 0;
	ASSERT_EQ(64, tm_deps(tm, &all, ACCEL_OUTPUT, 102, rec_fn, &r));
	for (i = 0; i < 64; i++)
		ASSERT_EQ(TM_DEP_WAR, r.kind[i]);
	/* with memory back, the same insert goes in and retires the 64 */
	ASSERT_EQ(0, tm_insert(tm, &all, ACCEL_OUTPUT, 100));
	tm_get_stats(tm, &after);
	ASSERT_EQ(64, after.retired);
	ASSERT_EQ(1, after.live_entries);
	tm_destroy(tm);
}

/*
 * A writer of the same view as the buffer's last insert refreshes that
 * entry in place: it needs no room, so it goes in with a full node pool
 * and no memory. An interleaved writer of its own view covers nothing, so
 * it needs a new entry: with no memory it fails and changes nothing (its
 * cover decision is not counted either).
 */
TEST(refresh_needs_no_room)
{
	struct accel_buffer *buf = (struct accel_buffer *)(uintptr_t)0x7000;
	struct accel_tensor all, part, il = { .buf = buf, .dtype = ACCEL_DTYPE_U8, .ndims = 2,
					      .offset = 4096, .shape = { 4, 3 },
					      .strides = { 3, 2 } };
	uint64_t shape[1] = { 64 * 16 };
	struct tm_stats before, after;
	struct tensormap *tm;
	struct rec r;
	uint32_t i, k;

	ASSERT_EQ(0, accel_tensor_init(&all, buf, 0, ACCEL_DTYPE_U8, 1, shape));
	for (k = 0; k < 2; k++) {
		/* 64 entries fill the first pool; the last is a slice, or il */
		ASSERT_EQ(0, tm_create(NULL, NULL, &tm));
		for (i = 0; i < 64; i++) {
			part = all;
			ASSERT_EQ(0, accel_tensor_slice(&part, 0, i * 16, 16, 1));
			ASSERT_EQ(0, tm_insert(tm, i == 63 && k ? &il : &part, ACCEL_OUTPUT, i));
		}
		tm_get_stats(tm, &before);
		alloc_fail = 1;
		if (!k) {
			ASSERT_EQ(0, tm_insert(tm, &part, ACCEL_OUTPUT, 64));
			alloc_fail = 0;
			tm_get_stats(tm, &after);
			ASSERT_EQ(1, after.same_view_inserts);
			ASSERT_EQ(64, after.live_entries);
			r.n = 0;
			ASSERT_EQ(1, tm_deps(tm, &part, ACCEL_INPUT, 65, rec_fn, &r));
			ASSERT_EQ(64, r.task[0]);
		} else {
			ASSERT_EQ(-ENOMEM, tm_insert(tm, &il, ACCEL_OUTPUT, 64));
			alloc_fail = 0;
			tm_get_stats(tm, &after);
			ASSERT_TRUE(same_stats(&before, &after));
		}
		tm_destroy(tm);
	}
}

#define NB	40			/* buffers the program draws from */

static struct accel_buffer *bufp(uint32_t i)
{
	return (struct accel_buffer *)(uintptr_t)(0x10000 + 0x100 * (uintptr_t)i);
}

static void rand_view(struct accel_tensor *t, uint32_t b)
{
	uint64_t n = 1 + rn(256), lo = rn(4096 - n);

	if (accel_tensor_init(t, bufp(b), lo, ACCEL_DTYPE_U8, 1, &n))
		abort();
	if (rn(3) == 0 && n > 4 && accel_tensor_slice(t, 0, 0, n / 2, 2))
		abort();
}

/* sorted answers of one lookup, for comparing two maps */
static void probe(struct tensormap *tm, const struct accel_tensor *t, uint64_t task,
		  struct rec *r)
{
	uint32_t i, j;

	r->n = 0;
	tm_deps(tm, t, ACCEL_INOUT, task, rec_fn, r);
	for (i = 1; i < r->n; i++)
		for (j = i; j > 0 && r->task[j - 1] * 4 + r->kind[j - 1] >
					r->task[j] * 4 + r->kind[j]; j--) {
			uint64_t x = r->task[j];
			enum tm_dep_kind k = r->kind[j];

			r->task[j] = r->task[j - 1];
			r->kind[j] = r->kind[j - 1];
			r->task[j - 1] = x;
			r->kind[j - 1] = k;
		}
}

static int done_below(void *arg, uint64_t task)
{
	return task < *(uint64_t *)arg;
}

TEST(reserve_random)
{
	uint64_t task = 1, frontier = 0, reserved_ok = 0, refused = 0, plain_fail = 0;
	uint64_t max_live = 0;
	const struct accel_buffer *list[64];
	struct tensormap *tm, *ref;
	struct tm_stats st, st2;
	struct accel_tensor t;
	struct rec r1, r2;
	uint32_t round, i, n;

	rng_state = 0xa110cull;
	ASSERT_EQ(0, tm_create(done_below, &frontier, &tm));
	ASSERT_EQ(0, tm_create(done_below, &frontier, &ref));
	for (round = 0; round < 3000; round++) {
		if (round % 100 == 0) {
			/* a fresh pair of maps every 100 rounds: growth starts over */
			tm_get_stats(tm, &st);
			max_live = st.max_live_entries > max_live ? st.max_live_entries : max_live;
			tm_destroy(tm);
			tm_destroy(ref);
			ASSERT_EQ(0, tm_create(done_below, &frontier, &tm));
			ASSERT_EQ(0, tm_create(done_below, &frontier, &ref));
		}
		n = (uint32_t)rn(64) + 1;
		for (i = 0; i < n; i++)
			list[i] = bufp((uint32_t)(round % 200 < 100 ? rn(NB) : rn(NB * 4)));
		/* sometimes no memory even for the reservation */
		alloc_fail = rn(4) == 0;
		tm_get_stats(tm, &st);
		if (tm_reserve(tm, list, n)) {
			ASSERT_TRUE(alloc_fail);
			tm_get_stats(tm, &st2);
			ASSERT_TRUE(same_stats(&st, &st2));
			refused++;
			/* the inserts then may fail, and a failed one changes nothing */
			for (i = 0; i < n; i++) {
				uint32_t b = (uint32_t)((uintptr_t)list[i] - 0x10000) / 0x100;
				enum accel_access acc = (enum accel_access)rn(4);
				int ret;

				rand_view(&t, b);
				tm_get_stats(tm, &st);
				ret = tm_insert(tm, &t, acc, task);
				if (ret) {
					ASSERT_EQ(-ENOMEM, ret);
					tm_get_stats(tm, &st2);
					ASSERT_TRUE(same_stats(&st, &st2));
					plain_fail++;
				} else {
					alloc_fail = 0;
					ASSERT_EQ(0, tm_insert(ref, &t, acc, task));
					alloc_fail = 1;
				}
				task++;
			}
		} else {
			/* reserved: with every allocation failing, all n inserts go in */
			alloc_fail = 1;
			for (i = 0; i < n; i++) {
				uint32_t b = (uint32_t)((uintptr_t)list[n - 1 - i] - 0x10000) / 0x100;
				enum accel_access acc = (enum accel_access)rn(4);

				rand_view(&t, b);
				probe(tm, &t, task, &r1);	/* lookups never use the room up */
				ASSERT_EQ(0, tm_insert(tm, &t, acc, task));
				alloc_fail = 0;
				ASSERT_EQ(0, tm_insert(ref, &t, acc, task));
				alloc_fail = 1;
				task++;
			}
			reserved_ok++;
		}
		alloc_fail = 0;
		/* both maps answer alike */
		for (i = 0; i < 4; i++) {
			rand_view(&t, (uint32_t)rn(NB * 4));
			probe(tm, &t, task, &r1);
			probe(ref, &t, task, &r2);
			ASSERT_EQ(r2.n, r1.n);
			ASSERT_EQ(0, memcmp(r1.task, r2.task, r1.n * sizeof(r1.task[0])));
			ASSERT_EQ(0, memcmp(r1.kind, r2.kind, r1.n * sizeof(r1.kind[0])));
		}
		if (rn(8) == 0) {
			uint32_t b = (uint32_t)rn(NB * 4);

			tm_forget_buffer(tm, bufp(b));
			tm_forget_buffer(ref, bufp(b));
		}
		if (task > 300)
			frontier = task - 300;
	}
	tm_get_stats(tm, &st);
	TH_LOG("%llu reserved rounds, %llu refused, %llu inserts failed unreserved, "
	       "%llu allocations (%llu failed), max live %llu",
	       (unsigned long long)reserved_ok, (unsigned long long)refused,
	       (unsigned long long)plain_fail, (unsigned long long)alloc_calls,
	       (unsigned long long)alloc_failed, (unsigned long long)max_live);
	ASSERT_GT(max_live, 200);
	ASSERT_GT(reserved_ok, 1000);
	ASSERT_GT(refused, 10);
	ASSERT_GT(plain_fail, 10);
	tm_destroy(tm);
	tm_destroy(ref);
}

/*
 * One buffer with 10,000 entries, 60 with 3 each (their table slots in
 * probe chains, so forgetting moves slots): forgetting a small buffer
 * examines its 3 entries, not the 10,180 of the map (which a scan of the
 * whole node pool, as before, did).
 */
TEST(forget_cost)
{
	struct accel_buffer *big = (struct accel_buffer *)(uintptr_t)0x100000;
	uint64_t shape[1] = { 10000 * 8 }, before;
	struct accel_tensor all, t;
	struct tensormap *tm;
	struct tm_stats st;
	struct rec r;
	uint32_t i, k;

	ASSERT_EQ(0, tm_create(NULL, NULL, &tm));
	ASSERT_EQ(0, accel_tensor_init(&all, big, 0, ACCEL_DTYPE_U8, 1, shape));
	for (i = 0; i < 10000; i++) {
		t = all;
		ASSERT_EQ(0, accel_tensor_slice(&t, 0, i * 8, 8, 1));
		ASSERT_EQ(0, tm_insert(tm, &t, ACCEL_OUTPUT, i));
	}
	for (i = 0; i < 60; i++)
		for (k = 0; k < 3; k++) {
			t = all;
			t.buf = bufp(i);
			ASSERT_EQ(0, accel_tensor_slice(&t, 0, k * 8, 8, 1));
			ASSERT_EQ(0, tm_insert(tm, &t, ACCEL_OUTPUT, 20000 + i * 3 + k));
		}
	for (i = 0; i < 60; i += 2) {
		before = tm->scanned;
		tm_forget_buffer(tm, bufp(i));
		ASSERT_EQ(3, tm->scanned - before);
	}
	tm_get_stats(tm, &st);
	ASSERT_EQ(10000 + 30 * 3, st.live_entries);
	ASSERT_EQ(31, st.buffers);
	/* the others still answer: each remaining small buffer its 3 writers */
	for (i = 0; i < 60; i++) {
		t = all;
		t.buf = bufp(i);
		ASSERT_EQ(0, accel_tensor_slice(&t, 0, 0, 24, 1));
		r.n = 0;
		ASSERT_EQ(i % 2 ? 3 : 0, tm_deps(tm, &t, ACCEL_INPUT, 50000, rec_fn, &r));
	}
	r.n = 0;
	ASSERT_EQ(10000, tm_deps(tm, &all, ACCEL_OUTPUT, 50000, rec_fn, &r));
	before = tm->scanned;
	tm_forget_buffer(tm, big);
	ASSERT_EQ(10000, tm->scanned - before);
	tm_destroy(tm);
}

/* tasks below @complete_below are complete; @progress is what the count says */
static uint64_t complete_below, progress;

static int done_fn(void *arg, uint64_t task)
{
	(void)arg;
	return task < complete_below;
}

static uint64_t progress_fn(void *arg)
{
	(void)arg;
	return progress;
}

TEST(reclaim_skips_without_progress)
{
	struct accel_buffer *b = (struct accel_buffer *)(uintptr_t)0x200000;
	uint64_t shape[1] = { 4096 * 8 }, before;
	struct accel_tensor all, t;
	struct tensormap *tm, *plain;
	struct tm_stats st;
	struct rec r;
	uint32_t i;

	complete_below = 0;
	progress = 1;
	ASSERT_EQ(0, tm_create(done_fn, NULL, &tm));
	ASSERT_EQ(0, tm_create(done_fn, NULL, &plain));
	tm_set_progress(tm, progress_fn);
	ASSERT_EQ(0, accel_tensor_init(&all, b, 0, ACCEL_DTYPE_U8, 1, shape));
	/* 4,096 inserts, nothing completing: the first automatic reclaim scans, no other */
	for (i = 0; i < 4096; i++) {
		t = all;
		ASSERT_EQ(0, accel_tensor_slice(&t, 0, i * 8, 8, 1));
		ASSERT_EQ(0, tm_insert(tm, &t, i % 2 ? ACCEL_INPUT : ACCEL_OUTPUT, 100 + i));
		ASSERT_EQ(0, tm_insert(plain, &t, i % 2 ? ACCEL_INPUT : ACCEL_OUTPUT, 100 + i));
	}
	/* the first (at 256 live entries) scanned the 256 slots of that time */
	ASSERT_EQ(256, tm->scanned) TH_LOG("reclaims scanned %llu entries",
					   (unsigned long long)tm->scanned);
	/* without a count: each reclaim scans (at 256, 512, ... 4,096 live entries) */
	ASSERT_EQ(256 + 512 + 1024 + 2048 + 4096, plain->scanned);
	before = tm->scanned;
	tm_reclaim(tm);
	ASSERT_EQ(before, tm->scanned);
	/* half complete, the count unchanged: nothing scanned, nothing dropped */
	complete_below = 100 + 2048;
	tm_reclaim(tm);
	ASSERT_EQ(before, tm->scanned);
	tm_get_stats(tm, &st);
	ASSERT_EQ(4096, st.live_entries);
	/* the count moved: one scan drops them all, the next finds the count unchanged */
	progress++;
	tm_reclaim(tm);
	ASSERT_EQ(before + tm->ncap, tm->scanned);
	tm_get_stats(tm, &st);
	ASSERT_EQ(2048, st.live_entries);
	tm_reclaim(tm);
	ASSERT_EQ(before + tm->ncap, tm->scanned);
	/* lookups never depended on reclaims: only the incomplete entries answer */
	r.n = 0;
	ASSERT_EQ(2048, tm_deps(tm, &all, ACCEL_OUTPUT, 90000, rec_fn, &r));
	/* NULL: every reclaim scans again */
	tm_set_progress(tm, NULL);
	before = tm->scanned;
	tm_reclaim(tm);
	tm_reclaim(tm);
	ASSERT_EQ(before + 2 * tm->ncap, tm->scanned);
	tm_destroy(tm);
	tm_destroy(plain);
}

TEST_HARNESS_MAIN
