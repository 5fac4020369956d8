// SPDX-License-Identifier: GPL-2.0-only
/*
 * The whole-task-graph oracle (tests/lib/tg_oracle.h) natively, over the
 * fake kernel of fake_kmod.h: two fake devices, the fake's engine thread
 * picking a random runnable queue for each burst of steps, the program
 * holding the engine back (fake_engine_pause()) for stretches so that work
 * piles up and runs in a random order. The fake records when the work
 * before each TIMESTAMP completed, so every interval is exact.
 *
 * ORACLE_SEEDS=N runs seeds 1..N (default 32), ORACLE_SEED=S only seed S,
 * ORACLE_STEPS=N changes the program length (default 160).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <stdlib.h>

#include "fake_kmod.h"

/* the harness ends test processes with _exit(), before LeakSanitizer's own check */
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define NO_LEAKS() EXPECT_EQ(0, __lsan_do_recoverable_leak_check())
#else
#define NO_LEAKS() do { } while (0)
#endif
#include "kselftest_harness.h"
#include "../lib/tg_oracle.h"

static void native_lag(int on)
{
	if (on)
		fake_engine_pause(100000000ull);	/* at most 100 ms */
	else
		fake_engine_resume();
}

/*
 * One program on fresh devices, the engine seeded like the program: the
 * random one of @seed, or with @rounds the scenarios.
 */
static int run_seed(uint64_t seed, unsigned int steps, unsigned int rounds)
{
	struct fake_engine_params ep = { .seed = seed, .poll_ns = 20000, .max_burst = 4 };
	struct or_env env = {
		.now = fake_clock, .lag = native_lag, .work_end = fake_stamp_prev,
		.steps = steps, .delay_max_ns = 20000,
	};
	unsigned int d;
	int ret;

	ret = acc_device_open_ops(&fake_ops, "fake0", &env.devs[0]);
	if (ret)
		return ret;
	ret = acc_device_open_ops(&fake_ops, "fake1", &env.devs[1]);
	if (ret) {
		accel_device_close(env.devs[0]);
		return ret;
	}
	ret = fake_engine_start(&ep);
	if (!ret) {
		ret = rounds ? or_defect1(&env, seed, rounds) : or_run(&env, seed);
		fake_engine_stop();
	}
	for (d = 0; d < OR_DEVS; d++)
		accel_device_close(env.devs[d]);
	fake_stamp_reset();
	for (d = 0; d < OR_DEVS; d++)
		if (fake_mem_used(d)) {
			fprintf(stderr, "# seed %" PRIu64 ": %" PRIu64 " bytes left on device %u\n",
				seed, fake_mem_used(d), d);
			ret = ret ? ret : 1;
		}
	return ret;
}

FIXTURE(oracle) {
};

FIXTURE_SETUP(oracle)
{
}

FIXTURE_TEARDOWN(oracle)
{
}

/* long enough for ORACLE_SEEDS in the thousands */
TEST_F_TIMEOUT(oracle, random_programs, 86400)
{
	uint64_t one = sweep_env("ORACLE_SEED", 0), n = sweep_env("ORACLE_SEEDS", 32), seed;
	unsigned int steps = (unsigned int)sweep_env("ORACLE_STEPS", 160), failed = 0;
	int64_t t0 = fake_now();
	int ret;

	if (!sweep_env("ORACLE_LOG", 0))
		accel_log_set_level(ACCEL_LOG_NONE);
	for (seed = one ? one : 1; seed <= (one ? one : n); seed++) {
		ret = run_seed(seed, steps, 0);
		if (ret) {
			failed++;
			fprintf(stderr, "# seed %" PRIu64 " FAILED (%d); rerun it alone with ORACLE_SEED=%" PRIu64 "\n",
				seed, ret, seed);
		}
	}
	TH_LOG("%u of %" PRIu64 " seeds failed, %.1f s", failed, one ? 1 : n,
	       (double)(fake_now() - t0) / 1e9);
	ASSERT_EQ(0, failed);
	NO_LEAKS();
}

/*
 * Issue #14's defect 1, each case 20 times (tg_oracle.h, or_defect1()):
 * a launch's summaries must not retire each other's.
 */
TEST_F_TIMEOUT(oracle, launch_summaries, 600)
{
	if (!sweep_env("ORACLE_LOG", 0))
		accel_log_set_level(ACCEL_LOG_NONE);
	ASSERT_EQ(0, run_seed(1, 0, 20));
	NO_LEAKS();
}

TEST_HARNESS_MAIN
