// SPDX-License-Identifier: GPL-2.0-only
/*
 * comm_issue_profile: the driver of the issue-path profile in
 * Documentation/collectives.rst ("Issue cost and small-message
 * latency"). One thread issues an 8-byte (2 x f32) allreduce, or a
 * barrier, on devices 0 .. NRANKS-1 (rank 0, 1, ... in turn) and then
 * waits for every rank, ITERS times; it prints the issue cost per rank
 * call (mean, median, 10th and 90th percentile of CLOCK_MONOTONIC, and
 * the issuing thread's CPU time), the process's CPU time per iteration
 * and the devices' counters per iteration (KICKs, engine sleeps and
 * wake-ups, signal updates, packets). Not built by make; for profilers:
 *
 *   gcc -O2 -g -std=gnu11 -Ilib/include -Iuapi $(pkg-config --cflags libdrm) \
 *       -o build/comm_issue_profile tools/comm_issue_profile.c \
 *       build/lib/libaccel.a $(pkg-config --libs libdrm) -pthread
 *   ACCEL_BACKEND=sim build/comm_issue_profile 4 2000 [barrier]
 *   ACCEL_BACKEND=sim valgrind --tool=callgrind --toggle-collect=accel_allreduce \
 *       build/comm_issue_profile 4 200
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <accel/accel.h>

#define MAX_RANKS	8
#define MAX_SAMPLES	400000u

static const char *const keys[] = { "kicks", "sleeps", "wakeups", "signal_wakes", "packets" };
#define NKEYS	(sizeof(keys) / sizeof(keys[0]))

static unsigned long long samples[MAX_SAMPLES];

static unsigned long long clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/* A counter of the device's "stats" file (0 if it cannot be read). */
static unsigned long long stat_of(struct accel_device *dev, const char *key)
{
	char buf[4096], name[64], *p;

	if (accel_device_debug_read(dev, "stats", buf, sizeof(buf)) < 0)
		return 0;
	snprintf(name, sizeof(name), "%s ", key);
	for (p = buf; (p = strstr(p, name)); p++)
		if (p == buf || p[-1] == '\n')
			return strtoull(p + strlen(name), NULL, 10);
	return 0;
}

int main(int argc, char **argv)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 4096 };
	unsigned int n = argc > 1 ? (unsigned int)atoi(argv[1]) : 4;
	unsigned int iters = argc > 2 ? (unsigned int)atoi(argv[2]) : 2000;
	int barrier = argc > 3 && !strcmp(argv[3], "barrier");
	struct accel_device *dev[MAX_RANKS];
	struct accel_queue *q[MAX_RANKS];
	struct accel_buffer *buf[MAX_RANKS];
	struct accel_comm *comm[MAX_RANKS];
	struct accel_event ev[MAX_RANKS];
	unsigned long long s0[NKEYS] = { 0 }, s1[NKEYS] = { 0 };
	unsigned long long issue = 0, cpu_issue = 0, t_start, t_all, t0, c0, t;
	unsigned int i, r, it, ns = 0;
	size_t k;
	int ret;

	if (n < 1 || n > MAX_RANKS || !iters) {
		fprintf(stderr, "usage: comm_issue_profile [NRANKS 1-%d] [ITERS] [barrier]\n",
			MAX_RANKS);
		return 2;
	}
	for (i = 0; i < n; i++) {
		ret = accel_device_open(i, &dev[i]);
		if (!ret)
			ret = accel_queue_create(dev[i], &qp, &q[i]);
		if (!ret)
			ret = accel_buffer_create(dev[i], 4096, ACCEL_BUFFER_HOST, &buf[i]);
		if (ret) {
			fprintf(stderr, "device %u: %s\n", i, accel_strerror(ret));
			return 1;
		}
	}
	ret = accel_comm_init_all(comm, n, dev, NULL);
	if (ret) {
		fprintf(stderr, "accel_comm_init_all: %s\n", accel_strerror(ret));
		return 1;
	}
	for (k = 0; k < NKEYS; k++)
		for (i = 0; i < n; i++)
			s0[k] += stat_of(dev[i], keys[k]);
	t_start = clock_ns(CLOCK_MONOTONIC);
	for (it = 0; it < iters; it++) {
		t0 = clock_ns(CLOCK_MONOTONIC);
		c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		for (r = 0; r < n; r++) {
			uint64_t va = accel_buffer_va(buf[r]);

			t = clock_ns(CLOCK_MONOTONIC);
			ret = barrier ? accel_barrier(comm[r], q[r], &ev[r]) :
			      accel_allreduce(va, va + 64, 2, ACCEL_DTYPE_F32, ACCEL_REDOP_SUM,
					      comm[r], q[r], &ev[r]);
			if (ret) {
				fprintf(stderr, "rank %u: %s\n", r, accel_strerror(ret));
				return 1;
			}
			if (ns < MAX_SAMPLES)
				samples[ns++] = clock_ns(CLOCK_MONOTONIC) - t;
		}
		issue += clock_ns(CLOCK_MONOTONIC) - t0;
		cpu_issue += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		for (r = 0; r < n; r++) {
			ret = accel_comm_wait(comm[r], &ev[r], 10000000000ll);
			if (ret) {
				fprintf(stderr, "rank %u: wait: %s\n", r, accel_strerror(ret));
				return 1;
			}
		}
	}
	t_all = clock_ns(CLOCK_MONOTONIC) - t_start;
	printf("%s, %u ranks, %u iterations: %.1f us per iteration; process CPU %.1f us per "
	       "iteration (set-up included)\n", barrier ? "barrier" : "8-byte allreduce", n,
	       iters, (double)t_all / iters / 1e3,
	       (double)clock_ns(CLOCK_PROCESS_CPUTIME_ID) / iters / 1e3);
	qsort(samples, ns, sizeof(samples[0]), cmp_ull);
	printf("issue per rank call: mean %.0f ns, median %llu, p10 %llu, p90 %llu; issuing "
	       "thread's CPU %.0f ns\n", (double)issue / iters / n, samples[ns / 2],
	       samples[ns / 10], samples[ns * 9 / 10], (double)cpu_issue / iters / n);
	printf("per iteration:");
	for (k = 0; k < NKEYS; k++) {
		for (i = 0; i < n; i++)
			s1[k] += stat_of(dev[i], keys[k]);
		printf(" %s %.2f", keys[k], (double)(s1[k] - s0[k]) / iters);
	}
	printf("\n");
	for (r = 0; r < n; r++)
		accel_comm_destroy(comm[r]);
	for (i = 0; i < n; i++) {
		accel_buffer_destroy(buf[i]);
		accel_queue_destroy(q[i]);
		accel_device_close(dev[i]);
	}
	return 0;
}
