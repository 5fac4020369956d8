// SPDX-License-Identifier: MIT
/*
 * The signal slot allocator (lib/slots.c) against a brute-force oracle:
 * seeded random sequences of 10^5 allocations and frees. A slot is never
 * handed out twice, a page is added only when every slot is taken, freed
 * slots are reused, and freeing a free slot is refused.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "slots.h"
#include "kselftest_harness.h"
#include "prng.h"

#define MAXP	64
#define OPS	100000

static void run(struct __test_metadata *_metadata, uint64_t seed, unsigned int per_page)
{
	static unsigned char used[MAXP][64];
	static unsigned int live[MAXP * 64][2];
	unsigned int nlive = 0, npages = 0, i, reused = 0;
	struct acc_slots s;

	rng_state = seed;
	memset(used, 0, sizeof(used));
	ASSERT_EQ(0, slots_init(&s, per_page));
	for (i = 0; i < OPS; i++) {
		/* drift up to about 40 pages, then down, then up */
		unsigned int bias = (i / 20000) % 2 ? 35 : 60;

		if (nlive && (rnd() % 100 >= bias || nlive == MAXP * per_page)) {
			unsigned int k = (unsigned int)(rnd() % nlive);
			unsigned int pg = live[k][0], sl = live[k][1];

			ASSERT_EQ(0, slots_free(&s, pg, sl));
			ASSERT_EQ(-EINVAL, slots_free(&s, pg, sl));
			used[pg][sl] = 0;
			live[k][0] = live[nlive - 1][0];
			live[k][1] = live[--nlive][1];
		} else {
			unsigned int pg, sl;
			int ret = slots_alloc(&s, &pg, &sl);

			if (ret == -ENOSPC) {
				ASSERT_EQ(npages * per_page, nlive);	/* all full */
				ASSERT_EQ((int)npages, slots_add_page(&s));
				npages++;
				ASSERT_EQ(0, slots_alloc(&s, &pg, &sl));
			} else {
				ASSERT_EQ(0, ret);
				reused++;
			}
			ASSERT_LT(pg, npages);
			ASSERT_LT(sl, per_page);
			ASSERT_EQ(0, used[pg][sl]);
			used[pg][sl] = 1;
			live[nlive][0] = pg;
			live[nlive++][1] = sl;
		}
		ASSERT_EQ(nlive, s.used);
	}
	TH_LOG("seed %llu, %u per page: %u pages, %u allocations reused a slot",
	       (unsigned long long)seed, per_page, npages, reused);
	ASSERT_GT(reused, 0);
	EXPECT_EQ(-EINVAL, slots_free(&s, npages, 0));
	EXPECT_EQ(-EINVAL, slots_free(&s, 0, per_page));
	slots_fini(&s);
}

TEST(random_vs_oracle_64)
{
	run(_metadata, 7, 64);
}

TEST(random_vs_oracle_5)
{
	run(_metadata, 12345, 5);
}

TEST(bad_arguments)
{
	struct acc_slots s;

	EXPECT_EQ(-EINVAL, slots_init(&s, 0));
	EXPECT_EQ(-EINVAL, slots_init(&s, 65));
}

TEST_HARNESS_MAIN
