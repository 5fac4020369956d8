/* SPDX-License-Identifier: MIT */
/*
 * Whether a benchmark's figures mean anything: the benchmarks (accel-bench,
 * vaccel-bench, taskgraph-bench, tensormap-bench) measure each figure as
 * several repeats (rounds, blocks of samples, batches, runs) and record the
 * repeats here; after its table, a benchmark prints a "noise:" line that
 * says whether the repeats of every figure agreed, or that the machine was
 * too noisy for some figures to mean anything (how loaded it was, and a
 * line per such figure).
 *
 * The spread of a figure is the range of the middle of its repeats (a
 * quarter of them, rounded down, dropped at each end: one descheduled
 * repeat out of five does not count, a busy machine does) relative to
 * their median. A figure whose spread is above BENCH_NOISE_LIMIT (or the
 * environment's BENCH_NOISE_LIMIT, a fraction) is noisy.
 *
 *	static struct bench_noise noise;
 *	...
 *	bench_noise_samples(&noise, "NOP latency", lat, n, 10);	// 10 blocks of n/10
 *	bench_noise_repeats(&noise, "COPY 64 MiB", gbs, 5);		// 5 runs
 *	...print the table...
 *	bench_noise_report(&noise, stdout);
 *
 * Header-only, no allocation; at most BENCH_NOISE_MAX figures and
 * BENCH_NOISE_REPEATS repeats each (more are ignored).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef BENCH_NOISE_H
#define BENCH_NOISE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NOISE_LIMIT	0.25
#define BENCH_NOISE_MAX		48
#define BENCH_NOISE_REPEATS	64

struct bench_noise {
	unsigned int n;
	struct {
		char what[80];
		unsigned int repeats;
		double spread;
	} fig[BENCH_NOISE_MAX];
};

static inline int bench_noise_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static inline double bench_noise_limit(void)
{
	const char *s = getenv("BENCH_NOISE_LIMIT");
	double v = s ? strtod(s, NULL) : 0;

	return v > 0 ? v : BENCH_NOISE_LIMIT;
}

/*
 * bench_noise_repeats() - record the @n repeats @v of the figure @what
 * Return: their median (@v is not changed).
 */
static inline double bench_noise_repeats(struct bench_noise *bn, const char *what,
					 const double *v, unsigned int n)
{
	double s[BENCH_NOISE_REPEATS], med;
	unsigned int cut;

	if (n > BENCH_NOISE_REPEATS)
		n = BENCH_NOISE_REPEATS;
	if (!n)
		return 0;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), bench_noise_cmp);
	med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	cut = n / 4;
	if (bn->n < BENCH_NOISE_MAX) {
		snprintf(bn->fig[bn->n].what, sizeof(bn->fig[0].what), "%s", what);
		bn->fig[bn->n].repeats = n;
		bn->fig[bn->n].spread = med > 0 ? (s[n - 1 - cut] - s[cut]) / med : 0;
		bn->n++;
	}
	return med;
}

static inline double bench_noise_median_u64(const uint64_t *v, size_t n)
{
	double *s = malloc(n * sizeof(*s)), med;
	size_t i;

	if (!s || !n) {
		free(s);
		return 0;
	}
	for (i = 0; i < n; i++)
		s[i] = (double)v[i];
	qsort(s, n, sizeof(*s), bench_noise_cmp);
	med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return med;
}

/*
 * bench_noise_samples() - record @n samples @v, in the order they were
 * taken, as @blocks repeats: the medians of @blocks consecutive blocks
 * Return: the median of the block medians (@v is not changed).
 */
static inline double bench_noise_samples(struct bench_noise *bn, const char *what,
					 const uint64_t *v, size_t n, unsigned int blocks)
{
	double m[BENCH_NOISE_REPEATS];
	unsigned int b;

	if (blocks > BENCH_NOISE_REPEATS)
		blocks = BENCH_NOISE_REPEATS;
	if (blocks > n)
		blocks = (unsigned int)n;
	for (b = 0; b < blocks; b++)
		m[b] = bench_noise_median_u64(v + n * b / blocks, n * (b + 1) / blocks - n * b / blocks);
	return bench_noise_repeats(bn, what, m, blocks);
}

/*
 * bench_noise_report() - the "noise:" line: every figure within the limit
 * (and the widest spread), or how many are noisy, with the load average,
 * and one more line for each
 * Return: the number of noisy figures.
 */
static inline unsigned int bench_noise_report(const struct bench_noise *bn, FILE *f)
{
	double limit = bench_noise_limit(), load[3] = { -1, -1, -1 };
	unsigned int i, noisy = 0, widest = 0;
	char loadavg[64] = "";
	FILE *la = fopen("/proc/loadavg", "r");

	if (la) {
		if (fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) == 3)
			snprintf(loadavg, sizeof(loadavg), "; load average %.2f %.2f %.2f", load[0],
				 load[1], load[2]);
		fclose(la);
	}
	for (i = 0; i < bn->n; i++) {
		noisy += bn->fig[i].spread > limit;
		if (bn->fig[i].spread > bn->fig[widest].spread)
			widest = i;
	}
	if (!bn->n) {
		fprintf(f, "noise: no figure was repeated%s\n", loadavg);
		return 0;
	}
	if (!noisy) {
		fprintf(f, "noise: the repeats of each of the %u figures agree within %.0f%% (the "
			"widest: %s, %.0f%% over %u repeats)%s\n", bn->n, limit * 100,
			bn->fig[widest].what, bn->fig[widest].spread * 100, bn->fig[widest].repeats,
			loadavg);
		return 0;
	}
	fprintf(f, "noise: TOO NOISY: the machine was too busy for %u of these %u figures to mean "
		"anything: their repeats spread more than %.0f%%%s; measure again on a quiet "
		"machine\n", noisy, bn->n, limit * 100, loadavg);
	for (i = 0; i < bn->n; i++)
		if (bn->fig[i].spread > limit)
			fprintf(f, "noise:   %s: %.0f%% over %u repeats\n", bn->fig[i].what,
				bn->fig[i].spread * 100, bn->fig[i].repeats);
	return noisy;
}

#endif /* BENCH_NOISE_H */
