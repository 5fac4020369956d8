// SPDX-License-Identifier: MIT
/*
 * The output heap (lib/graph/heap.c) against an oracle of live byte
 * ranges: randomized allocations, releases, task submissions and
 * completions in random order. A block is live for the oracle until the
 * program released it and every task that retained it completed; a new
 * block must never overlap a live one (no reuse before release and
 * completion), must be aligned and inside the heap; -EAGAIN must come only
 * when some submitted task still holds a block (so waiting can help), and
 * -EDEADLK only with a report naming a block that really is held by the
 * program or by an unsubmitted task. Plus seed 000 (ii): a consumer
 * lagging hundreds of tasks behind, with random run times, keeps the heap
 * flowing with no early reuse and no underflow; and constructed -EDEADLK
 * cases.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph/heap.h"
#include "kselftest_harness.h"
#include "prng.h"
#include "sweep.h"

struct oblock {
	uint64_t id, off, size, owner;
	int held;
	uint32_t unsubmitted, inflight;
};

struct model {
	struct oblock *b;
	uint32_t n, cap;
};

static int o_live(const struct oblock *b)
{
	return b->held || b->unsubmitted || b->inflight;
}

static struct oblock *o_find(struct model *m, uint64_t id)
{
	uint32_t i;

	for (i = 0; i < m->n; i++)
		if (m->b[i].id == id)
			return &m->b[i];
	return NULL;
}

/* forget dead blocks */
static void o_prune(struct model *m)
{
	uint32_t i, k = 0;

	for (i = 0; i < m->n; i++)
		if (o_live(&m->b[i]))
			m->b[k++] = m->b[i];
	m->n = k;
}

static uint32_t o_inflight(const struct model *m)
{
	uint32_t i, n = 0;

	for (i = 0; i < m->n; i++)
		n += m->b[i].inflight;
	return n;
}

#define CAP	(64 * 1024ull)

/* one allocation checked against the oracle; returns the gheap_alloc() code */
static int checked_alloc(struct __test_metadata *_metadata, struct gheap *h, struct model *m,
			 uint64_t size, uint64_t align, uint64_t owner, uint64_t *id)
{
	struct gheap_report rep;
	struct oblock *o;
	uint64_t off;
	uint32_t i;
	int ret;

	memset(&rep, 0xa5, sizeof(rep));
	ret = gheap_alloc(h, size, align, owner, id, &off, &rep);
	o_prune(m);
	if (ret == -EAGAIN) {
		EXPECT_GT(o_inflight(m), 0);	/* waiting can free something */
		return ret;
	}
	if (ret == -EDEADLK) {
		o = o_find(m, rep.block);
		EXPECT_NE(NULL, o);
		if (!o)
			return ret;
		EXPECT_EQ(o->owner, rep.owner);
		EXPECT_EQ(o->off, rep.offset);
		EXPECT_EQ(o->size, rep.size);
		EXPECT_EQ(size, rep.need);
		if (rep.reason == GHEAP_HELD_BY_PROGRAM) {
			EXPECT_TRUE(o->held);
		} else {
			EXPECT_EQ(GHEAP_HELD_BY_UNSUBMITTED, rep.reason);
			EXPECT_FALSE(o->held);
			EXPECT_GT(o->unsubmitted, 0);
			EXPECT_EQ(o->unsubmitted, rep.unsubmitted);
		}
		return ret;
	}
	EXPECT_EQ(0, ret);
	if (ret)
		return ret;
	EXPECT_EQ(0, off % align);
	EXPECT_LE(off + size, CAP);
	for (i = 0; i < m->n; i++) {
		o = &m->b[i];
		/* never on top of a live block */
		EXPECT_TRUE(off + size <= o->off || o->off + o->size <= off) {
			TH_LOG("block %llu [%llu,+%llu) on live block %llu [%llu,+%llu)",
			       (unsigned long long)*id, (unsigned long long)off,
			       (unsigned long long)size, (unsigned long long)o->id,
			       (unsigned long long)o->off, (unsigned long long)o->size);
		}
	}
	if (m->n == m->cap) {
		m->cap = m->cap * 2 + 64;
		m->b = realloc(m->b, m->cap * sizeof(*m->b));
	}
	o = &m->b[m->n++];
	memset(o, 0, sizeof(*o));
	o->id = *id;
	o->off = off;
	o->size = size;
	o->owner = owner;
	o->held = 1;
	return 0;
}

/* a random step of program or device on a random live block */
static void random_step(struct __test_metadata *_metadata, struct gheap *h, struct model *m)
{
	struct oblock *o;

	if (!m->n)
		return;
	o = &m->b[rn(m->n)];
	switch (rn(5)) {
	case 0:
		if (o->held) {
			ASSERT_EQ(0, gheap_retain(h, o->id, 1000000 + rn(1000)));
			o->unsubmitted++;
		} else {
			ASSERT_EQ(-EINVAL, gheap_retain(h, o->id, 1));
		}
		break;
	case 1:
		if (o->unsubmitted) {
			ASSERT_EQ(0, gheap_submit(h, o->id));
			o->unsubmitted--;
			o->inflight++;
		} else {
			ASSERT_EQ(-EINVAL, gheap_submit(h, o->id));
		}
		break;
	case 2:
	case 3:
		if (o->inflight) {
			ASSERT_EQ(0, gheap_complete(h, o->id));
			o->inflight--;
		} else {
			ASSERT_EQ(-EINVAL, gheap_complete(h, o->id));	/* no underflow */
		}
		break;
	default:
		if (o->held) {
			ASSERT_EQ(0, gheap_release(h, o->id));
			o->held = 0;
		} else {
			ASSERT_EQ(-EINVAL, gheap_release(h, o->id));
		}
		break;
	}
}

static void random_run(struct __test_metadata *_metadata, uint64_t seed)
{
	struct model m = { 0 };
	struct gheap_stats st;
	struct gheap *h;
	uint64_t id, i, ok = 0, again = 0, dead = 0;
	uint32_t k;
	int ret;

	rng_state = seed;
	ASSERT_EQ(0, gheap_create(CAP, &h));
	for (i = 0; i < 100000; i++) {
		uint64_t size = 1 + (rn(8) ? rn(2048) : rn(CAP / 2));
		uint64_t align = 1ull << rn(13);

		ret = checked_alloc(_metadata, h, &m, size, align, i, &id);
		if (ret == 0)
			ok++;
		else if (ret == -EAGAIN)
			again++;
		else if (ret == -EDEADLK)
			dead++;
		else
			ASSERT_EQ(0, ret);
		if (ret == -EDEADLK) {
			/* the program gives up what it holds, submits what it built */
			for (k = 0; k < m.n; k++) {
				if (m.b[k].held && rn(2)) {
					ASSERT_EQ(0, gheap_release(h, m.b[k].id));
					m.b[k].held = 0;
				}
				while (m.b[k].unsubmitted) {
					ASSERT_EQ(0, gheap_submit(h, m.b[k].id));
					m.b[k].unsubmitted--;
					m.b[k].inflight++;
				}
			}
		}
		for (k = (uint32_t)rn(6); k > 0; k--)
			random_step(_metadata, h, &m);
	}
	gheap_get_stats(h, &st);
	TH_LOG("seed %llu: %llu allocated, %llu EAGAIN, %llu EDEADLK, high water %llu of %llu",
	       (unsigned long long)seed, (unsigned long long)ok, (unsigned long long)again,
	       (unsigned long long)dead, (unsigned long long)st.high_water,
	       (unsigned long long)st.capacity);
	ASSERT_GT(ok, 10000);
	ASSERT_GT(again, 0);
	ASSERT_GT(dead, 0);
	ASSERT_EQ(again, st.eagain);
	ASSERT_EQ(dead, st.edeadlk);
	ASSERT_LE(st.high_water, CAP);
	gheap_destroy(h);
	free(m.b);
}

TEST(random_oracle)
{
	random_run(_metadata, 11);
	random_run(_metadata, 0xfeedfaceull);
}

/* seeds 1..8 more; HEAP_SWEEP=N runs 1..N (a long search: 0.06 s each) */
SWEEP_TEST(random_sweep)
{
	uint64_t n = sweep_env("HEAP_SWEEP", 8), k;

	for (k = 1; k <= n && !_metadata->exit_code; k++)
		random_run(_metadata, 0x4ea90000ull + k);
}

/*
 * Seed 000 (ii), lagging reclaim: each task allocates an output block
 * that its consumer reads; consumers run with random run times and lag
 * the producer by up to LAG tasks, completing out of order. A reclaim rule
 * "producer id + H" with H < LAG (seed 000's constant span) would reuse
 * blocks still being read, and its unsigned watermark (heap_next -
 * vend[F - H]) underflowed when a core lagged. Here: no reuse while a
 * consumer is in flight (the oracle), no underflow (used <= capacity),
 * the heap keeps flowing (no -EDEADLK; -EAGAIN is answered by completing
 * the oldest consumers, as a wait for device progress would).
 */
TEST(lagging_consumer)
{
	enum { TASKS = 100000, LAG = 600 };
	struct model m = { 0 };
	struct gheap_stats st;
	struct gheap *h;
	uint64_t *fin, *blkid, t, id, waits = 0, now = 0;
	int ret;

	fin = calloc(TASKS, sizeof(*fin));
	blkid = calloc(TASKS, sizeof(*blkid));
	ASSERT_NE(NULL, fin);
	ASSERT_NE(NULL, blkid);
	rng_state = 77;
	ASSERT_EQ(0, gheap_create(CAP, &h));
	for (t = 0; t < TASKS; t++) {
		uint64_t size = 64 + rn(256), c;
		struct oblock *o;

		/* device progress: consumers whose finish time has come */
		now++;
		for (c = t > 2 * LAG ? t - 2 * LAG : 0; c < t; c++) {
			if (fin[c] && fin[c] <= now) {
				ASSERT_EQ(0, gheap_complete(h, blkid[c]));
				o = o_find(&m, blkid[c]);
				ASSERT_NE(NULL, o);
				o->inflight--;
				fin[c] = 0;
			}
		}
		for (;;) {
			ret = checked_alloc(_metadata, h, &m, size, 64, t, &id);
			if (ret != -EAGAIN)
				break;
			/* wait: time passes until the earliest consumer finishes */
			waits++;
			for (c = t > 2 * LAG ? t - 2 * LAG : 0, now = UINT64_MAX; c < t; c++)
				if (fin[c] && fin[c] < now)
					now = fin[c];
			ASSERT_NE(UINT64_MAX, now);
			for (c = t > 2 * LAG ? t - 2 * LAG : 0; c < t; c++) {
				if (fin[c] && fin[c] <= now) {
					ASSERT_EQ(0, gheap_complete(h, blkid[c]));
					o_find(&m, blkid[c])->inflight--;
					fin[c] = 0;
				}
			}
		}
		ASSERT_EQ(0, ret);
		blkid[t] = id;
		/* the consumer task: retained, submitted, done after a random lag */
		ASSERT_EQ(0, gheap_retain(h, id, t));
		ASSERT_EQ(0, gheap_submit(h, id));
		o = o_find(&m, id);
		o->inflight++;
		fin[t] = now + 1 + rn(LAG);
		/* the program drops its tensor right away (the consumer still reads it) */
		ASSERT_EQ(0, gheap_release(h, id));
		o->held = 0;
		gheap_get_stats(h, &st);
		ASSERT_LE(st.used, CAP);
	}
	gheap_get_stats(h, &st);
	TH_LOG("%d tasks, lag up to %d: %llu waits, %llu reclaimed, high water %llu of %llu",
	       TASKS, LAG, (unsigned long long)waits, (unsigned long long)st.reclaimed,
	       (unsigned long long)st.high_water, (unsigned long long)st.capacity);
	ASSERT_EQ(0, st.edeadlk);
	ASSERT_GT(st.reclaimed, TASKS - 2 * LAG);
	ASSERT_GT(waits, 0);
	gheap_destroy(h);
	free(m.b);
	free(fin);
	free(blkid);
}

TEST(deadlock_reports)
{
	struct gheap_report rep;
	struct gheap *h;
	uint64_t a, b, c, off;

	ASSERT_EQ(0, gheap_create(4 * 4096, &h));
	ASSERT_EQ(-E2BIG, gheap_alloc(h, 4 * 4096 + 1, 1, 9, &a, &off, &rep));
	ASSERT_EQ(-EINVAL, gheap_alloc(h, 0, 1, 9, &a, &off, &rep));
	ASSERT_EQ(-EINVAL, gheap_alloc(h, 16, 3, 9, &a, &off, &rep));
	ASSERT_EQ(-EINVAL, gheap_alloc(h, 16, 8192, 9, &a, &off, &rep));

	/* 1: the program holds the block in the way */
	ASSERT_EQ(0, gheap_alloc(h, 3 * 4096, 4096, 101, &a, &off, &rep));
	ASSERT_EQ(0, off);
	ASSERT_EQ(0, gheap_alloc(h, 4096, 4096, 102, &b, &off, &rep));
	ASSERT_EQ(3 * 4096, off);
	ASSERT_EQ(0, gheap_release(h, b));
	ASSERT_EQ(-EDEADLK, gheap_alloc(h, 100, 1, 103, &c, &off, &rep));
	ASSERT_EQ(a, rep.block);
	ASSERT_EQ(101, rep.owner);
	ASSERT_EQ(GHEAP_HELD_BY_PROGRAM, rep.reason);
	ASSERT_EQ(0, rep.offset);
	ASSERT_EQ(3 * 4096, rep.size);

	/* 2: released, but a task that was never submitted retains it */
	ASSERT_EQ(0, gheap_retain(h, a, 555));
	ASSERT_EQ(0, gheap_release(h, a));
	ASSERT_EQ(-EINVAL, gheap_release(h, a));
	ASSERT_EQ(-EINVAL, gheap_retain(h, a, 556));	/* released: no new users */
	ASSERT_EQ(-EDEADLK, gheap_alloc(h, 100, 1, 103, &c, &off, &rep));
	ASSERT_EQ(a, rep.block);
	ASSERT_EQ(GHEAP_HELD_BY_UNSUBMITTED, rep.reason);
	ASSERT_EQ(555, rep.task);
	ASSERT_EQ(1, rep.unsubmitted);

	/* 3: submitted: device progress will free it */
	ASSERT_EQ(0, gheap_submit(h, a));
	ASSERT_EQ(-EAGAIN, gheap_alloc(h, 100, 1, 103, &c, &off, &rep));
	ASSERT_EQ(0, gheap_complete(h, a));
	ASSERT_EQ(-EINVAL, gheap_complete(h, a));	/* no underflow */
	ASSERT_EQ(0, gheap_alloc(h, 100, 1, 103, &c, &off, &rep));
	ASSERT_EQ(-ENOENT, gheap_release(h, a));	/* reclaimed */

	/*
	 * 4: a free block behind a held one does not help: c (held) is at
	 * the tail, the new block needs its space.
	 */
	ASSERT_EQ(0, gheap_alloc(h, 2 * 4096, 4096, 104, &a, &off, &rep));
	ASSERT_EQ(0, gheap_release(h, a));
	ASSERT_EQ(-EDEADLK, gheap_alloc(h, 3 * 4096, 4096, 105, &b, &off, &rep));
	ASSERT_EQ(c, rep.block);
	ASSERT_EQ(103, rep.owner);
	ASSERT_EQ(0, gheap_release(h, c));
	ASSERT_EQ(0, gheap_alloc(h, 3 * 4096, 4096, 105, &b, &off, &rep));
	gheap_destroy(h);
}

/* a full-size block fits whenever the heap is empty, wherever the ring stood */
TEST(empty_rebase)
{
	struct gheap_stats st;
	struct gheap *h;
	uint64_t a, off, i;

	ASSERT_EQ(0, gheap_create(8192, &h));
	for (i = 0; i < 1000; i++) {
		ASSERT_EQ(0, gheap_alloc(h, 1 + i % 5000, 1, i, &a, &off, NULL));
		ASSERT_EQ(0, gheap_release(h, a));
		ASSERT_EQ(0, gheap_alloc(h, 8192, 1, i, &a, &off, NULL));
		ASSERT_EQ(0, off);
		ASSERT_EQ(0, gheap_release(h, a));
	}
	gheap_get_stats(h, &st);
	ASSERT_EQ(8192, st.high_water);
	ASSERT_EQ(2000, st.allocs);
	gheap_destroy(h);
}

/*
 * gheap_find() against the live blocks (every byte of every live block
 * maps back to it; padding and free space do not) while the ring laps;
 * a graph's pin keeps a released block, and is reported as the holder.
 */
TEST(find_and_pin)
{
	struct gheap_report rep;
	struct gheap *h;
	uint64_t id[64], off[64], size[64], blk, start, k, x;
	unsigned int head = 0, tail = 0, i;
	int ret;

	rng_state = 0x5eed;
	ASSERT_EQ(0, gheap_create(1 << 16, &h));
	for (k = 0; k < 20000; k++) {
		if (head - tail < 64 && rn(3)) {
			size[head % 64] = 1 + rn(5000);
			ret = gheap_alloc(h, size[head % 64], 256, k, &id[head % 64],
					  &off[head % 64], NULL);
			if (!ret) {
				head++;
				continue;
			}
			ASSERT_EQ(-EDEADLK, ret);
		}
		if (head == tail)
			continue;
		ASSERT_EQ(0, gheap_release(h, id[tail % 64]));
		tail++;
		for (i = tail; i != head; i++) {
			x = off[i % 64] + rn(size[i % 64]);
			ASSERT_EQ(0, gheap_find(h, x, &blk, &start));
			ASSERT_EQ(id[i % 64], blk);
			ASSERT_EQ(off[i % 64], start);
		}
	}
	ASSERT_EQ(-ENOENT, gheap_find(h, 1 << 16, &blk, &start));
	while (tail != head) {
		ASSERT_EQ(0, gheap_release(h, id[tail++ % 64]));
	}
	gheap_reclaim(h);
	ASSERT_EQ(-ENOENT, gheap_find(h, 0, &blk, &start));

	/* pinned: survives the program's release, blocks the heap until unpinned */
	ASSERT_EQ(0, gheap_alloc(h, 1 << 16, 1, 7, &blk, &start, NULL));
	ASSERT_EQ(0, gheap_pin(h, blk));
	ASSERT_EQ(0, gheap_release(h, blk));
	ASSERT_EQ(-EINVAL, gheap_pin(h, blk));		/* the program no longer holds it */
	ASSERT_EQ(-EINVAL, gheap_release(h, blk));		/* nor releases it twice */
	/* a task of the graph's launch may still use it (retain, submit, complete) */
	ASSERT_EQ(0, gheap_retain(h, blk, 9));
	ASSERT_EQ(0, gheap_submit(h, blk));
	ASSERT_EQ(0, gheap_complete(h, blk));
	ASSERT_EQ(-EDEADLK, gheap_alloc(h, 100, 1, 8, &x, &start, &rep));
	ASSERT_EQ(GHEAP_HELD_BY_GRAPH, rep.reason);
	ASSERT_EQ(7, rep.owner);
	ASSERT_EQ(0, gheap_unpin(h, blk));
	ASSERT_EQ(-EINVAL, gheap_retain(h, blk, 10));	/* unpinned: no new users */
	ASSERT_EQ(-EINVAL, gheap_unpin(h, blk));
	ASSERT_EQ(0, gheap_alloc(h, 100, 1, 8, &x, &start, &rep));
	ASSERT_EQ(0, start);
	gheap_destroy(h);
}

TEST_HARNESS_MAIN
