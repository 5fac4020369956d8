/* SPDX-License-Identifier: MIT */
/*
 * The seeded pseudo-random generator of the native tests (xorshift64):
 * set rng_state to a nonzero seed, then draw with rnd() or rn().
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef LIBACCEL_TEST_PRNG_H
#define LIBACCEL_TEST_PRNG_H

#include <stdint.h>

static uint64_t rng_state;

static inline uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* uniform-ish in [0, n), 0 when n is 0 */
static inline uint64_t rn(uint64_t n)
{
	return n ? rnd() % n : 0;
}

#endif /* LIBACCEL_TEST_PRNG_H */
