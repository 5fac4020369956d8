// SPDX-License-Identifier: GPL-2.0-only
/*
 * vaccel-bench: submission latency, packet rate and COPY bandwidth of a
 * vaccel device, each next to a baseline measured in the same run:
 *
 *   NOP latency, hot doorbell path (engine polling)   vs   bare ioctl
 *   NOP latency, KICK path (engine asleep)             vs   hot path
 *   packets/s on 1, 2 and 4 queues (one engine each)   vs   1 queue
 *   COPY of 64 MiB (split across the engines)          vs   the machine's
 *        copy bandwidth: the best of glibc memcpy() and the kernel's
 *        "rep movsq" over 1..N threads, N the CPUs
 *
 * A benchmark, not a test: it prints figures and the ratios the project
 * targets (hot path <= 1/3 of the KICK path, COPY >= 0.9x the machine's
 * bandwidth) and exits 0 unless something failed to run.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <pthread.h>
#include <stdlib.h>

#include "../tests/kselftest/vaccel_queue_util.h"
#include "bench_noise.h"

#define COPY_SIZE	(64ull << 20)
#define RATE_RUNS	3	/* runs of each packet rate, median */

static struct bench_noise noise;
#define BIG_VA		(RING_VA + (1ull << 30))

static void die(const char *what, int err)
{
	fprintf(stderr, "vaccel-bench: %s: %s\n", what, strerror(-err));
	exit(1);
}

/* Submit one NOP and spin until it completes; returns ns. */
static uint64_t nop_roundtrip(int fd, struct q *q)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	uint64_t t0 = now_ns();
	int ret = submit(fd, q, &p, NULL);

	if (ret)
		die("submit", ret);
	while (__atomic_load_n(&q->ctrl->read_index, __ATOMIC_ACQUIRE) < q->wi)
		;
	return now_ns() - t0;
}

struct rate {
	int fd;
	struct q q;
	uint64_t packets;
};

/* Keep the ring full of NOPs for @n packets. */
static void *rate_thread(void *arg)
{
	struct rate *r = arg;
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);

	while (r->q.wi < r->packets) {
		uint64_t done = __atomic_load_n(&r->q.ctrl->read_index, __ATOMIC_ACQUIRE);

		if (r->q.wi - done >= RING_N) {
			sched_yield();
			continue;
		}
		if (submit(r->fd, &r->q, &p, NULL))
			return NULL;
	}
	drain(&r->q, 60000);
	return NULL;
}

/*
 * Packets per second with @nq queues, each fed by its own thread. Queues
 * are placed on the engines round-robin, so @nq consecutive new queues
 * land on @nq different engines (when the device has as many).
 */
static double packets_per_s(int fd, struct bo *ring, unsigned int nq, uint64_t per_q)
{
	struct drm_vaccel_queue_destroy d = {};
	struct rate r[8];
	pthread_t t[8];
	double pps;
	uint64_t t0;
	unsigned int i;
	int ret;

	for (i = 0; i < nq; i++) {
		r[i].fd = fd;
		r[i].packets = per_q;
		ret = queue_new(fd, RING_VA + 4096ull * (i + 1), RING_N,
				(struct drm_vaccel_packet *)(ring->map + 4096 * (i + 1)), &r[i].q);
		if (ret)
			die("queue_new", ret);
	}
	t0 = now_ns();
	for (i = 0; i < nq; i++)
		pthread_create(&t[i], NULL, rate_thread, &r[i]);
	for (i = 0; i < nq; i++)
		pthread_join(t[i], NULL);
	pps = nq * per_q * 1e9 / (double)(now_ns() - t0);
	for (i = 0; i < nq; i++) {
		d.queue_id = r[i].q.id;
		ioctl(fd, DRM_IOCTL_VACCEL_QUEUE_DESTROY, &d);
	}
	return pps;
}

struct copier {
	void *dst;
	const void *src;
	size_t n;
	bool rep;
	pthread_barrier_t *start;
	uint64_t t0, t1;	/* out: this thread's copy, CLOCK_MONOTONIC ns */
};

/* The kernel's copy_page/memcpy fast path on x86: rep movsq. */
static void rep_movsq(void *dst, const void *src, size_t n)
{
	size_t q = n / 8;

	__asm__ volatile("rep movsq" : "+D"(dst), "+S"(src), "+c"(q) : : "memory");
}

static void *copier_thread(void *arg)
{
	struct copier *c = arg;

	pthread_barrier_wait(c->start);
	c->t0 = now_ns();
	if (c->rep)
		rep_movsq(c->dst, c->src, c->n);
	else
		memcpy(c->dst, c->src, c->n);
	c->t1 = now_ns();
	return NULL;
}

/*
 * GB/s of copying @n bytes with @threads threads, best of 5: from the first
 * thread's start to the last one's end, as each thread times itself (the
 * main thread may be descheduled around the barrier, so its clock would
 * miss part of the copy).
 */
static double host_copy_gbs(void *dst, const void *src, size_t n, unsigned int threads,
			    bool rep)
{
	struct copier c[16];
	pthread_barrier_t start;
	pthread_t t[16];
	double best = 0;
	unsigned int i, r;

	for (r = 0; r < 5; r++) {
		uint64_t t0, t1;

		pthread_barrier_init(&start, NULL, threads + 1);
		for (i = 0; i < threads; i++) {
			c[i].dst = (char *)dst + n / threads * i;
			c[i].src = (const char *)src + n / threads * i;
			c[i].n = n / threads;
			c[i].rep = rep;
			c[i].start = &start;
			pthread_create(&t[i], NULL, copier_thread, &c[i]);
		}
		pthread_barrier_wait(&start);
		for (i = 0; i < threads; i++)
			pthread_join(t[i], NULL);
		t0 = c[0].t0;
		t1 = c[0].t1;
		for (i = 1; i < threads; i++) {
			t0 = c[i].t0 < t0 ? c[i].t0 : t0;
			t1 = c[i].t1 > t1 ? c[i].t1 : t1;
		}
		if (n / (double)(t1 - t0) > best)
			best = n / (double)(t1 - t0);
		pthread_barrier_destroy(&start);
	}
	return best;
}

int main(int argc, char **argv)
{
	unsigned int id = argc > 1 ? atoi(argv[1]) : 0, i, nq;
	enum { N_HOT = 20000, N_KICK = 300, N_IOCTL = 20000 };
	uint64_t *lat = calloc(N_HOT, sizeof(*lat)), hot, kick, bare, engines = 0;
	struct drm_vaccel_packet p;
	struct bo ring, src, dst;
	double pps1, pps2, pps4, copy_gbs, host_gbs = 0, g, rate[3][RATE_RUNS], copy[5];
	const char *host_how = "";
	static char how[64];
	unsigned int th, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct q q;
	void *a, *b;
	int fd, ret;

	fd = vaccel_open(id);
	if (fd < 0)
		die("open", fd);
	vaccel_get_param(fd, DRM_VACCEL_PARAM_NUM_ENGINES, &engines);
	nq = engines < 4 ? engines : 4;	/* ring pages 1..4 */
	ret = bo_new(fd, 16 * 4096, 0, &ring);
	if (!ret)
		ret = vaccel_vm_bind(fd, ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA, 16 * 4096);
	if (ret)
		die("ring", ret);
	ret = queue_new(fd, RING_VA, RING_N, (void *)ring.map, &q);
	if (ret)
		die("queue", ret);

	/* bare ioctl round trip */
	for (i = 0; i < N_IOCTL; i++) {
		uint64_t v, t0 = now_ns();

		vaccel_get_param(fd, DRM_VACCEL_PARAM_DEVICE_ID, &v);
		lat[i] = now_ns() - t0;
	}
	bench_noise_samples(&noise, "bare ioctl", lat, N_IOCTL, 10);
	bare = median(lat, N_IOCTL);

	/* hot path: back-to-back, the engine is still polling */
	for (i = 0; i < 100; i++)
		nop_roundtrip(fd, &q);
	for (i = 0; i < N_HOT; i++)
		lat[i] = nop_roundtrip(fd, &q);
	bench_noise_samples(&noise, "NOP latency, hot path", lat, N_HOT, 10);
	hot = median(lat, N_HOT);

	/* KICK path: wait until the engine sleeps, then submit */
	for (i = 0; i < N_KICK; i++) {
		while (!__atomic_load_n(&q.ctrl->need_wakeup, __ATOMIC_ACQUIRE))
			usleep(100);
		lat[i] = nop_roundtrip(fd, &q);
	}
	bench_noise_samples(&noise, "NOP latency, KICK path", lat, N_KICK, 10);
	kick = median(lat, N_KICK);

	/* packet rate: the median of RATE_RUNS runs, 200000 packets in all */
	for (i = 0; i < RATE_RUNS; i++) {
		rate[0][i] = packets_per_s(fd, &ring, 1, 200000 / RATE_RUNS);
		rate[1][i] = packets_per_s(fd, &ring, 2, 200000 / RATE_RUNS);
		rate[2][i] = packets_per_s(fd, &ring, nq, 200000 / RATE_RUNS);
	}
	pps1 = bench_noise_repeats(&noise, "packets/s, 1 queue", rate[0], RATE_RUNS);
	pps2 = bench_noise_repeats(&noise, "packets/s, 2 queues", rate[1], RATE_RUNS);
	snprintf(how, sizeof(how), "packets/s, %u queues", nq);
	pps4 = bench_noise_repeats(&noise, how, rate[2], RATE_RUNS);

	/* COPY 64 MiB vs memcpy, both warm, best of 5 */
	if (bo_new(fd, COPY_SIZE, 0, &src) || bo_new(fd, COPY_SIZE, 0, &dst) ||
	    vaccel_vm_bind(fd, src.handle, DRM_VACCEL_VM_READ, 0, BIG_VA, COPY_SIZE) ||
	    vaccel_vm_bind(fd, dst.handle, DRM_VACCEL_VM_WRITE, 0, BIG_VA + COPY_SIZE, COPY_SIZE))
		die("copy buffers", -ENOMEM);
	memset(src.map, 0x5a, COPY_SIZE);
	memset(dst.map, 0, COPY_SIZE);
	copy_gbs = 0;
	for (i = 0; i < 5; i++) {
		uint64_t t0 = now_ns(), t;

		p = pkt(DRM_VACCEL_PKT_COPY, BIG_VA, BIG_VA + COPY_SIZE, COPY_SIZE, 0);
		submit(fd, &q, &p, NULL);
		if (!drain(&q, 60000))
			die("copy", -EIO);
		t = now_ns() - t0;
		copy[i] = COPY_SIZE / (double)t;
		if (copy[i] > copy_gbs)
			copy_gbs = copy[i];
	}
	bench_noise_repeats(&noise, "COPY 64 MiB", copy, 5);
	a = aligned_alloc(4096, COPY_SIZE);
	b = aligned_alloc(4096, COPY_SIZE);
	memset(a, 0x5a, COPY_SIZE);
	memset(b, 0, COPY_SIZE);
	for (th = 1; th <= ncpu && th <= 16; th++) {
		g = host_copy_gbs(b, a, COPY_SIZE, th, false);
		if (g > host_gbs) {
			host_gbs = g;
			snprintf(how, sizeof(how), "memcpy x%u", th);
		}
		g = host_copy_gbs(b, a, COPY_SIZE, th, true);
		if (g > host_gbs) {
			host_gbs = g;
			snprintf(how, sizeof(how), "rep movsq x%u", th);
		}
	}
	host_how = how;

	printf("vaccel-bench: device %u, %llu engines, %ld CPUs\n", id,
	       (unsigned long long)engines, sysconf(_SC_NPROCESSORS_ONLN));
	printf("| measurement | vaccel | baseline | ratio | target |\n");
	printf("|---|---|---|---|---|\n");
	printf("| NOP latency, hot doorbell path (median of %d) | %.1f us | bare ioctl %.1f us | %.2f | |\n",
	       N_HOT, hot / 1e3, bare / 1e3, (double)hot / bare);
	printf("| NOP latency, KICK after engine sleep (median of %d) | %.1f us | hot path %.1f us | hot/kick %.2f | <= 0.33 |\n",
	       N_KICK, kick / 1e3, hot / 1e3, (double)hot / kick);
	printf("| NOP packets/s, 1 queue (median of %d runs) | %.0f | | | |\n", RATE_RUNS, pps1);
	printf("| NOP packets/s, 2 queues on 2 engines | %.0f | 1 queue %.0f | %.2f | |\n",
	       pps2, pps1, pps2 / pps1);
	printf("| NOP packets/s, %u queues on %u engines | %.0f | 1 queue %.0f | %.2f | |\n",
	       nq, nq, pps4, pps1, pps4 / pps1);
	printf("| COPY 64 MiB on %llu engines (best of 5) | %.2f GB/s | best host copy (%s) %.2f GB/s | %.2f | >= 0.9 |\n",
	       (unsigned long long)engines, copy_gbs, host_how, host_gbs, copy_gbs / host_gbs);
	bench_noise_report(&noise, stdout);
	return 0;
}
