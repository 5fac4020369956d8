// SPDX-License-Identifier: MIT
/*
 * tools/bench_noise.h, the benchmarks' noise verdict: the spread of the
 * middle repeats, block medians of time-ordered samples, the limit (and
 * BENCH_NOISE_LIMIT), and the report's verdict and lines.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <stdlib.h>
#include <string.h>

#include "../../tools/bench_noise.h"
#include "kselftest_harness.h"

/* the report of @bn as text (static buffer) and its return value */
static const char *report(const struct bench_noise *bn, unsigned int *noisy)
{
	static char text[4096];
	FILE *f = fmemopen(text, sizeof(text), "w");

	*noisy = bench_noise_report(bn, f);
	fclose(f);
	return text;
}

TEST(quiet_figures)
{
	struct bench_noise bn = { 0 };
	double a[] = { 100, 101, 99, 102, 98 }, b[] = { 10, 11, 10, 11, 10, 11, 10, 11 };
	unsigned int noisy;
	const char *t;

	unsetenv("BENCH_NOISE_LIMIT");
	EXPECT_EQ(100, bench_noise_repeats(&bn, "a", a, 5));
	EXPECT_EQ(10.5, bench_noise_repeats(&bn, "b", b, 8));
	/* a: the middle three (99, 100, 101): 2%; b: 10 .. 11 of 10.5: 9.5% */
	EXPECT_LT(0.019, bn.fig[0].spread);
	EXPECT_GT(0.021, bn.fig[0].spread);
	EXPECT_LT(0.095, bn.fig[1].spread);
	EXPECT_GT(0.096, bn.fig[1].spread);
	t = report(&bn, &noisy);
	EXPECT_EQ(0, noisy);
	EXPECT_NE(NULL, strstr(t, "noise: the repeats of each of the 2 figures agree within 25%"));
	EXPECT_NE(NULL, strstr(t, "the widest: b, 10% over 8 repeats")) TH_LOG("%s", t);
	EXPECT_EQ(NULL, strstr(t, "NOISY"));
}

/* One repeat out of five far off is an accident, not a noisy machine. */
TEST(one_outlier_of_five)
{
	struct bench_noise bn = { 0 };
	double a[] = { 100, 101, 102, 99, 1000 }, b[] = { 1, 100, 101, 102, 99 };
	unsigned int noisy;

	unsetenv("BENCH_NOISE_LIMIT");
	bench_noise_repeats(&bn, "slow once", a, 5);
	bench_noise_repeats(&bn, "fast once", b, 5);
	report(&bn, &noisy);
	EXPECT_EQ(0, noisy);
}

TEST(noisy_figures)
{
	struct bench_noise bn = { 0 };
	double a[] = { 100, 200, 50, 100, 300 }, c[] = { 100, 130 }, q[] = { 5, 5, 5 };
	unsigned int noisy;
	const char *t;

	unsetenv("BENCH_NOISE_LIMIT");
	EXPECT_EQ(100, bench_noise_repeats(&bn, "latency", a, 5));
	EXPECT_EQ(115, bench_noise_repeats(&bn, "rate", c, 2));
	bench_noise_repeats(&bn, "steady", q, 3);
	t = report(&bn, &noisy);
	EXPECT_EQ(2, noisy);
	EXPECT_NE(NULL, strstr(t, "noise: TOO NOISY: the machine was too busy for 2 of these 3 "
				  "figures to mean anything")) TH_LOG("%s", t);
	EXPECT_NE(NULL, strstr(t, "noise:   latency: 100% over 5 repeats\n"));
	EXPECT_NE(NULL, strstr(t, "noise:   rate: 26% over 2 repeats\n"));
	EXPECT_EQ(NULL, strstr(t, "steady"));
}

TEST(limit_from_environment)
{
	struct bench_noise bn = { 0 };
	double c[] = { 100, 130 };
	unsigned int noisy;

	setenv("BENCH_NOISE_LIMIT", "0.5", 1);
	bench_noise_repeats(&bn, "rate", c, 2);
	EXPECT_NE(NULL, strstr(report(&bn, &noisy), "within 50%"));
	EXPECT_EQ(0, noisy);
	setenv("BENCH_NOISE_LIMIT", "0.1", 1);
	report(&bn, &noisy);
	EXPECT_EQ(1, noisy);
	setenv("BENCH_NOISE_LIMIT", "garbage", 1);	/* the default */
	EXPECT_NE(NULL, strstr(report(&bn, &noisy), "more than 25%"));
	unsetenv("BENCH_NOISE_LIMIT");
}

/* Samples in time order: the repeats are the medians of consecutive blocks. */
TEST(blocks_of_samples)
{
	struct bench_noise bn = { 0 };
	uint64_t v[100];
	unsigned int i, noisy;

	unsetenv("BENCH_NOISE_LIMIT");
	/* a quiet first half, the second half twice as slow: block medians 10 or 20 */
	for (i = 0; i < 100; i++)
		v[i] = (i < 50 ? 10 : 20) + i % 3;
	EXPECT_EQ(16, bench_noise_samples(&bn, "drift", v, 100, 4));
	EXPECT_EQ(4, bn.fig[0].repeats);
	EXPECT_LT(0.5, bn.fig[0].spread);
	report(&bn, &noisy);
	EXPECT_EQ(1, noisy);
	/* no drift: every block alike */
	for (i = 0; i < 100; i++)
		v[i] = 10 + i % 5;
	bn.n = 0;
	bench_noise_samples(&bn, "even", v, 100, 4);
	report(&bn, &noisy);
	EXPECT_EQ(0, noisy);
	EXPECT_EQ(4, bn.fig[0].repeats);
	/* more blocks than samples: one sample each */
	bn.n = 0;
	bench_noise_samples(&bn, "few", v, 3, 10);
	EXPECT_EQ(3, bn.fig[0].repeats);
}

TEST_HARNESS_MAIN
