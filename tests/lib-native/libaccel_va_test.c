// SPDX-License-Identifier: MIT
/*
 * The device-VA allocator (lib/va.c) against a brute-force oracle: a page
 * map of the window. Seeded random sequences of 10^5 allocations and frees
 * check that every block is inside the window, aligned, disjoint from the
 * others, that an allocation fails only when no free aligned block of its
 * size exists anywhere (full coalescing), and that freeing everything
 * gives back the initial blocks.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "va.h"
#include "kselftest_harness.h"
#include "prng.h"

#define PG	4096ull
#define NPG	300			/* not a power of two */
#define START	(7 * 65536ull)		/* 64 KiB-aligned, not more */
#define OPS	100000

struct live {
	uint64_t addr, size;
};

/* Is there a free, naturally aligned block of 2^order bytes in a window of @npg pages? */
static int oracle_fits_n(const unsigned char *used, unsigned int order, unsigned int max_order,
			 uint64_t npg)
{
	uint64_t bs = 1ull << order, a, p;

	if (order > max_order)
		return 0;
	for (a = (START + bs - 1) & ~(bs - 1); a + bs <= START + npg * PG; a += bs) {
		for (p = a; p < a + bs; p += PG)
			if (used[(p - START) / PG])
				break;
		if (p == a + bs)
			return 1;
	}
	return 0;
}

static int oracle_fits(const unsigned char *used, unsigned int order, unsigned int max_order)
{
	return oracle_fits_n(used, order, max_order, NPG);
}

static void run(struct __test_metadata *_metadata, uint64_t seed, unsigned int max_order)
{
	static unsigned char used[NPG];
	static struct live live[NPG];
	unsigned int nlive = 0, i, fails = 0, allocs = 0;
	uint64_t in_use = 0, initial;
	struct acc_va va;

	rng_state = seed;
	memset(used, 0, sizeof(used));
	ASSERT_EQ(0, va_init(&va, START, NPG * PG, 12, max_order));
	initial = va.nblocks;
	for (i = 0; i < OPS; i++) {
		if (nlive && (rnd() % 100 < 45 || nlive == NPG)) {
			unsigned int k = (unsigned int)(rnd() % nlive);
			uint64_t p;

			ASSERT_EQ(live[k].size, va_block_size(&va, live[k].addr));
			ASSERT_EQ(0, va_free(&va, live[k].addr));
			ASSERT_EQ(-EINVAL, va_free(&va, live[k].addr));
			for (p = live[k].addr; p < live[k].addr + live[k].size; p += PG)
				used[(p - START) / PG] = 0;
			in_use -= live[k].size;
			live[k] = live[--nlive];
		} else {
			uint64_t size = 1 + rnd() % (rnd() % 4 ? 4 * PG : 40 * PG), addr, p;
			uint64_t align = rnd() % 8 ? 0 : 1ull << (12 + rnd() % 5);
			unsigned int order = va_order_for(&va, size, align);
			int ret = va_alloc(&va, size, align, &addr);

			if (ret) {
				ASSERT_EQ(-ENOSPC, ret);
				ASSERT_FALSE(oracle_fits(used, order, max_order));
				fails++;
				continue;
			}
			allocs++;
			ASSERT_EQ(0, addr & ((1ull << order) - 1));
			if (align)
				ASSERT_EQ(0, addr & (align - 1));
			ASSERT_GE(addr, START);
			ASSERT_LE(addr + (1ull << order), START + NPG * PG);
			for (p = addr; p < addr + (1ull << order); p += PG) {
				ASSERT_EQ(0, used[(p - START) / PG]);
				used[(p - START) / PG] = 1;
			}
			live[nlive].addr = addr;
			live[nlive++].size = 1ull << order;
			in_use += 1ull << order;
		}
		ASSERT_EQ(in_use, va.allocated);
	}
	TH_LOG("seed %llu: %u allocations, %u refused (oracle agreed), %u live at the end",
	       (unsigned long long)seed, allocs, fails, nlive);
	ASSERT_GT(fails, 0);
	ASSERT_GT(allocs, OPS / 4);
	while (nlive)
		ASSERT_EQ(0, va_free(&va, live[--nlive].addr));
	ASSERT_EQ(0, va.allocated);
	ASSERT_EQ(initial, va.nblocks);	/* coalesced back to the initial blocks */
	va_fini(&va);
}

TEST(random_vs_oracle_seed1)
{
	run(_metadata, 1, 20);
}

TEST(random_vs_oracle_seed2_small_blocks)
{
	run(_metadata, 0x9e3779b97f4a7c15ull, 15);
}

TEST(bad_arguments)
{
	struct acc_va va;
	uint64_t a;

	ASSERT_EQ(-EINVAL, va_init(&va, 4097, PG, 12, 20));
	ASSERT_EQ(-EINVAL, va_init(&va, 0, 0, 12, 20));
	ASSERT_EQ(-EINVAL, va_init(&va, 0, PG, 13, 12));
	ASSERT_EQ(0, va_init(&va, START, NPG * PG, 12, 20));
	EXPECT_EQ(-EINVAL, va_alloc(&va, 0, 0, &a));
	EXPECT_EQ(-EINVAL, va_alloc(&va, PG, 3 * PG, &a));
	EXPECT_EQ(-ENOSPC, va_alloc(&va, 2ull << 20, 0, &a));
	EXPECT_EQ(-EINVAL, va_free(&va, START + PG));
	va_fini(&va);
}

/* The real window: [2^32, 2^48), blocks up to 2^47. */
TEST(device_window)
{
	static uint64_t addrs[4096];
	struct acc_va va;
	unsigned int i;

	rng_state = 42;
	ASSERT_EQ(0, va_init(&va, 1ull << 32, (1ull << 48) - (1ull << 32), 12, 47));
	for (i = 0; i < 4096; i++) {
		uint64_t size = 1 + rnd() % (64ull << 20);

		ASSERT_EQ(0, va_alloc(&va, size, 0, &addrs[i]));
		ASSERT_GE(addrs[i], 1ull << 32);
		ASSERT_LT(addrs[i], 1ull << 48);
	}
	for (i = 0; i < 4096; i++)
		ASSERT_EQ(0, va_free(&va, addrs[i]));
	ASSERT_EQ(16, va.nblocks);	/* 2^32, 2^33, ..., 2^47 */
	va_fini(&va);
}

/*
 * The quarantine (va_retire()) against a model: a FIFO of the last
 * VA_QUARANTINE retired blocks, the oldest freed when a new one comes, all
 * of them freed when an allocation would otherwise fail. Random
 * allocations, retirements and frees; the page-map oracle counts
 * quarantined blocks as used until the model frees them: no allocation
 * returns a quarantined or live page, and an allocation fails only when
 * even the live blocks alone leave no room. A window of QNPG pages, so
 * that both a full quarantine (evictions) and a full window (flushes)
 * happen.
 */
#define QNPG	1500
TEST(quarantine_vs_model)
{
	static unsigned char used[QNPG];
	static struct live live[QNPG];
	static uint64_t fifo[VA_QUARANTINE], fifo_size[VA_QUARANTINE];
	unsigned int nlive = 0, head = 0, qlen = 0, i, k, flushes = 0, evictions = 0, fails = 0;
	struct acc_va va;
	uint64_t a, p, size;
	int ret;

	rng_state = 7;
	memset(used, 0, sizeof(used));
	ASSERT_EQ(0, va_init(&va, START, QNPG * PG, 12, 20));
	for (i = 0; i < OPS; i++) {
		unsigned int r = rnd() % 100;

		if (nlive && r < 42) {
			/* retire (mostly) or free a live block */
			k = rnd() % nlive;
			a = live[k].addr;
			size = live[k].size;
			live[k] = live[--nlive];
			if (r < 34) {
				ASSERT_EQ(0, va_retire(&va, a));
				if (qlen == VA_QUARANTINE) {
					for (p = fifo[head]; p < fifo[head] + fifo_size[head]; p += PG)
						used[(p - START) / PG] = 0;
					head = (head + 1) % VA_QUARANTINE;
					qlen--;
					evictions++;
				}
				fifo[(head + qlen) % VA_QUARANTINE] = a;
				fifo_size[(head + qlen) % VA_QUARANTINE] = size;
				qlen++;
				/* still allocated while quarantined */
				ASSERT_EQ(size, va_block_size(&va, a));
			} else {
				ASSERT_EQ(0, va_free(&va, a));
				for (p = a; p < a + size; p += PG)
					used[(p - START) / PG] = 0;
			}
			continue;
		}
		size = (1 + rnd() % 4) * PG;
		k = va_order_for(&va, size, 0);
		if (!oracle_fits_n(used, k, 20, QNPG)) {
			/* the model's flush: every quarantined block is free again */
			static unsigned char live_only[QNPG];

			memset(live_only, 0, sizeof(live_only));
			for (unsigned int j = 0; j < nlive; j++)
				for (p = live[j].addr; p < live[j].addr + live[j].size; p += PG)
					live_only[(p - START) / PG] = 1;
			if (qlen) {
				memcpy(used, live_only, sizeof(used));
				qlen = 0;
				flushes++;
			}
		}
		ret = va_alloc(&va, size, 0, &a);
		ASSERT_EQ(va.qlen, qlen);
		if (!oracle_fits_n(used, k, 20, QNPG)) {
			ASSERT_EQ(-ENOSPC, ret);
			fails++;
			continue;
		}
		ASSERT_EQ(0, ret);
		size = va_block_size(&va, a);
		for (p = a; p < a + size; p += PG) {
			ASSERT_EQ(0, used[(p - START) / PG]);	/* neither live nor quarantined */
			used[(p - START) / PG] = 1;
		}
		live[nlive].addr = a;
		live[nlive++].size = size;
	}
	TH_LOG("%u evictions, %u flushes, %u refusals", evictions, flushes, fails);
	ASSERT_GT(evictions, 0);
	ASSERT_GT(flushes, 0);
	ASSERT_GT(fails, 0);
	EXPECT_EQ(-EINVAL, va_retire(&va, START + 5 * PG + 1));
	va_fini(&va);
}

/* Retired addresses come back only after VA_QUARANTINE others were retired. */
TEST(quarantine_delays_reuse)
{
	static uint64_t seen[VA_QUARANTINE + 1];
	struct acc_va va;
	uint64_t a;
	unsigned int i, j;

	ASSERT_EQ(0, va_init(&va, 1ull << 32, (1ull << 48) - (1ull << 32), 12, 47));
	for (i = 0; i <= VA_QUARANTINE; i++) {
		ASSERT_EQ(0, va_alloc(&va, 1 << 20, 0, &a));
		for (j = 0; j < i; j++)
			ASSERT_NE(seen[j], a);
		seen[i] = a;
		ASSERT_EQ(0, va_retire(&va, a));
	}
	/* the first one left the quarantine with the last retire: free again */
	EXPECT_EQ(0, va_block_size(&va, seen[0]));
	EXPECT_EQ(1 << 20, va_block_size(&va, seen[1]));
	va_fini(&va);
}

TEST_HARNESS_MAIN
