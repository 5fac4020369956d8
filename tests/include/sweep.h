/* SPDX-License-Identifier: MIT */
/*
 * Long randomized searches: the reading of the variables that size them
 * (ORACLE_SEEDS, TM_SWEEP, ...), and a test named @name whose harness
 * timeout (a day) lets them ask for thousands of programs (the macro needs
 * kselftest_harness.h first).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef SWEEP_H
#define SWEEP_H

#include <stdint.h>
#include <stdlib.h>

#define SWEEP_TEST(name)						\
	FIXTURE(name) {							\
		int unused;						\
	};								\
	FIXTURE_SETUP(name)						\
	{								\
		self->unused = 0;					\
	}								\
	FIXTURE_TEARDOWN(name)						\
	{								\
	}								\
	TEST_F_TIMEOUT(name, name, 86400)

/* the number in environment variable @var, or @def */
static inline uint64_t sweep_env(const char *var, uint64_t def)
{
	const char *s = getenv(var);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

#endif
