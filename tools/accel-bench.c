// SPDX-License-Identifier: GPL-2.0-only
/*
 * accel-bench: what libaccel's submission path costs, next to baselines
 * measured in the same run (tools/vaccel-bench.c stays the raw-uAPI
 * reference for the device itself). Runs on either backend: the module
 * (in the VM) or the in-process device (ACCEL_BACKEND=sim, natively); the
 * raw-uAPI baseline needs a /dev/accel file, so on the in-process device
 * its cells say that it was not measured and why.
 *
 *   NOP submit-to-completion latency, engine hot:
 *       library (get_packet, prep, submit, poll completed)
 *       vs the raw path (same packet; ring store, doorbell, fence, KICK if
 *       needed, poll the control page: vaccel-bench's code; module only)
 *   the same through an event (accel_queue_record + accel_event_wait)
 *   NOP packets/s: one doorbell per 64 packets vs one per packet
 *   host wait latency after the device completes (TIMESTAMP packet to the
 *       host noticing): polling the signal vs accel_event_wait() asleep
 *   two-thread cache-line ping-pong: the physical floor of a polled
 *       doorbell round trip (a store seen by another CPU and back): one
 *       64-byte line each way, waited for as the engine and the submitter
 *       wait (the "engine" thread spins up to the device's poll budget,
 *       then sleeps on a futex; the "submitter" stores, fences, and wakes
 *       it only if it sleeps; then spins for the answer)
 *   COPY bandwidth, 64 KiB to 64 MiB, engine hot (submit, wait in
 *       accel_queue_sync(); and again polling the completion in a loop)
 *       vs the host copying the same bytes between the same buffers'
 *       host mappings: memcpy() on one thread, and on as many threads as
 *       the device has engines to split a large COPY over (at most the
 *       CPUs); the ratio is against the faster of the two
 *   the raw queue path (tools/queue_path_work.h) against a bare loop
 *       that copies a 64-byte packet into a ring slot and store-releases
 *       the doorbell (a ring another CPU reads after each batch, and one
 *       nobody reads), the engines held with the stall_engine knob while a
 *       batch is timed: one packet per doorbell (also against the bare
 *       loop plus the protocol's full fence and need_wakeup load), 64 per
 *       doorbell, accel_queue_submit_packets() of 64
 *   the task graph (tools/taskgraph_work.h):
 *       host time per eager task of 4 tensor arguments (accel_tg_submit)
 *           vs the raw accel_queue path for the same packets
 *       host time per task of a graph launch vs the same tasks eager
 *       the tiled matmul's GFLOP/s (graph launches) vs a single-threaded
 *           host reference
 *
 * Figures only (the targets are printed beside them): exits 0
 * unless something failed to run. Usage: accel-bench [--quick] [INDEX];
 * --quick runs every measurement with a few repeats only (seconds: the
 * smoke test of tools/accel-bench-check), figures not to be quoted.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <inttypes.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include <accel/accel.h>

#include "../tests/kselftest/vaccel_queue_util.h"
#include "queue_path_work.h"
#include "taskgraph_work.h"
#include "bench_noise.h"
#include "accel_bench_coll.h"

#define ROUNDS		10		/* alternate library and raw blocks */
#define WAIT_DELAY_NS	1000000		/* far above the library's spin budget */
#define TG_BATCHES	10		/* after one unmeasured batch */
#define RUNS		3		/* runs of the rates and the ping-pong, median */
#define QP_BATCHES	11
#define COPY_SIZES	4
#define COPY_REPS_MAX	64

/* Repeats: the full run, or --quick (a smoke test: seconds, figures meaningless). */
static struct {
	unsigned int per_round;		/* NOP round trips per block */
	unsigned int rate_packets;	/* packets per rate run (a multiple of 64) */
	unsigned int waits;		/* wake-up latencies of each kind */
	unsigned int pingpongs;		/* round trips per ping-pong run */
	unsigned int tg_tasks;		/* tasks per batch and per graph */
	unsigned int tg_batches;
	unsigned int qp_batches;
	unsigned int mm_launches;
	unsigned int pipe_runs;
	uint64_t copy_bytes;		/* bytes per COPY size, at least 5 repeats */
	unsigned int copy_sizes;	/* how many of copy_size[] */
} cfg = { 2000, 200000, 200, 200000, 1000, TG_BATCHES, QP_BATCHES, 5, 7, 512ull << 20,
	  COPY_SIZES };

static const uint64_t copy_size[COPY_SIZES] = { 64ull << 10, 1ull << 20, 16ull << 20,
						64ull << 20 };

static struct bench_noise noise;

static void die(const char *what, int err)
{
	fprintf(stderr, "accel-bench: %s: %s\n", what, accel_strerror(err));
	exit(1);
}

/* Library: one NOP, polled to completion; ns. */
static uint64_t lib_roundtrip(struct accel_queue *q)
{
	struct drm_vaccel_packet *p;
	uint64_t t0 = now_ns(), target;
	int ret;

	p = accel_queue_get_packet(q);
	if (!p)
		die("get_packet", -EAGAIN);
	accel_prep_nop(p);
	ret = accel_queue_submit(q);
	if (ret < 0)
		die("submit", ret);
	target = accel_queue_submitted(q);
	while (accel_queue_completed(q) < target)
		;
	return now_ns() - t0;
}

/* Library: one NOP and an event, waited for with accel_event_wait(); ns. */
static uint64_t lib_event_roundtrip(struct accel_queue *q)
{
	struct drm_vaccel_packet *p;
	struct accel_event ev;
	uint64_t t0 = now_ns();
	int ret;

	p = accel_queue_get_packet(q);
	if (!p)
		die("get_packet", -EAGAIN);
	accel_prep_nop(p);
	ret = accel_queue_record(q, &ev);
	if (!ret)
		ret = accel_queue_submit(q);
	if (ret >= 0)
		ret = accel_event_wait(&ev, 10000000000ll);
	if (ret < 0)
		die("event round trip", ret);
	return now_ns() - t0;
}

/* Raw uAPI: vaccel-bench's NOP round trip (the module only). */
static uint64_t raw_roundtrip(int fd, struct q *q)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	uint64_t t0 = now_ns();
	int ret = submit(fd, q, &p, NULL);

	if (ret)
		die("raw submit", ret);
	while (__atomic_load_n(&q->ctrl->read_index, __ATOMIC_ACQUIRE) < q->wi)
		;
	return now_ns() - t0;
}

/* NOPs per second through the library, @batch packets per doorbell. */
static double lib_rate(struct accel_queue *q, unsigned int batch)
{
	uint64_t t0 = now_ns();
	unsigned int i, j;
	int ret;

	for (i = 0; i < cfg.rate_packets / batch; i++) {
		ret = accel_queue_reserve(q, batch, ACCEL_FOREVER);
		if (ret)
			die("reserve", ret);
		for (j = 0; j < batch; j++)
			accel_prep_nop(accel_queue_get_packet(q));
		ret = accel_queue_submit(q);
		if (ret < 0)
			die("submit", ret);
	}
	ret = accel_queue_sync(q, ACCEL_FOREVER);
	if (ret)
		die("sync", ret);
	return (cfg.rate_packets / batch) * batch * 1e9 / (double)(now_ns() - t0);
}

/*
 * From the device's completion (a TIMESTAMP after a DELAY, whose
 * completion action raises the signal) to the host seeing it: @sleep
 * waits with accel_event_wait() (its spin budget runs out during the
 * DELAY, so it sleeps in WAIT_SIGNALS), otherwise polls the signal.
 */
static uint64_t wake_latency(struct accel_queue *q, struct accel_signal *sig,
			     struct accel_buffer *ts, bool sleep)
{
	volatile uint64_t *stamp = accel_buffer_host(ts);
	struct drm_vaccel_packet *p;
	struct accel_event ev = { .signal = sig, .value = accel_signal_next(sig) };
	uint64_t seen;
	int ret;

	*stamp = 0;
	ret = accel_queue_reserve(q, 2, 10000000000ll);
	if (ret)
		die("reserve", ret);
	p = accel_queue_get_packet(q);	/* reserved: never NULL */
	accel_prep_delay(p, WAIT_DELAY_NS);
	p = accel_queue_get_packet(q);
	accel_prep_timestamp(p, accel_buffer_va(ts));
	accel_prep_completion(p, accel_signal_va(sig), DRM_VACCEL_SIGNAL_MAX, ev.value);
	accel_prep_irq(p);
	ret = accel_queue_submit(q);
	if (ret < 0)
		die("submit", ret);
	if (sleep) {
		ret = accel_event_wait(&ev, 10000000000ll);
		if (ret)
			die("event wait", ret);
	} else {
		while (!accel_event_done(&ev))
			;
	}
	seen = now_ns();
	return seen > *stamp ? seen - *stamp : 0;
}

/* ---- the ping-pong: the doorbell protocol between two plain threads ---- */

static void futex_wait(_Atomic uint32_t *word, uint32_t val)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/*
 * @ping is the "doorbell" (written by the submitter), @pong the
 * "completion" (written by the engine), each on a line of its own;
 * @sleeping is the engine's need_wakeup, beside the doorbell as in a
 * control page.
 */
struct pingpong {
	_Alignas(64) _Atomic uint32_t ping;
	_Atomic uint32_t sleeping;
	_Alignas(64) _Atomic uint32_t pong;
	_Alignas(64) uint64_t budget_ns;
	unsigned int n;
	uint64_t sleeps;
};

/* The engine's wait: spin up to the poll budget, then sleep on the futex. */
static void pp_engine_wait(struct pingpong *pp, uint32_t want)
{
	uint64_t t0 = 0;
	unsigned int spins = 0;
	uint32_t seen;

	while (atomic_load_explicit(&pp->ping, memory_order_acquire) != want) {
		if (++spins % 64)
			continue;
		if (!t0) {
			t0 = now_ns();
			continue;
		}
		if (now_ns() - t0 < pp->budget_ns)
			continue;
		/* need_wakeup, full fence, look again, sleep: the engine's protocol */
		atomic_store(&pp->sleeping, 1);
		seen = atomic_load(&pp->ping);
		if (seen != want) {
			pp->sleeps++;
			futex_wait(&pp->ping, seen);
		}
		atomic_store(&pp->sleeping, 0);
		t0 = 0;
	}
}

static void *pp_engine(void *arg)
{
	struct pingpong *pp = arg;
	uint32_t i;

	for (i = 1; i <= pp->n; i++) {
		pp_engine_wait(pp, i);
		atomic_store_explicit(&pp->pong, i, memory_order_release);
	}
	return NULL;
}

/*
 * Round trip of a cache line each way between two threads (not pinned,
 * as the engine threads are not), the "engine" waiting as the engine
 * does and the "submitter" as the library does; ns.
 */
static double pingpong_ns(uint64_t budget_ns, uint64_t *sleeps)
{
	static struct pingpong pp;
	pthread_t t;
	uint64_t t0 = 0;
	uint32_t i;

	atomic_store(&pp.ping, 0);
	atomic_store(&pp.pong, 0);
	atomic_store(&pp.sleeping, 0);
	pp.budget_ns = budget_ns;
	pp.n = cfg.pingpongs;
	pp.sleeps = 0;
	if (pthread_create(&t, NULL, pp_engine, &pp))
		die("pthread_create", -EAGAIN);
	/* the first round trips start the thread: not measured */
	for (i = 1; i <= pp.n; i++) {
		if (i == 101)
			t0 = now_ns();
		/* doorbell, full fence, need_wakeup: the library's submit */
		atomic_store_explicit(&pp.ping, i, memory_order_release);
		atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load_explicit(&pp.sleeping, memory_order_relaxed))
			futex_wake(&pp.ping);
		while (atomic_load_explicit(&pp.pong, memory_order_acquire) != i)
			;
	}
	t0 = now_ns() - t0;
	pthread_join(t, NULL);
	*sleeps += pp.sleeps;
	return (double)t0 / (pp.n - 100);
}

/* ---- COPY bandwidth against the host's copy of the same bytes ---- */

#define HOST_COPY_THREADS	8

/*
 * The host's threaded copy: the calling thread and @n - 1 helpers that
 * wait for a job as the engines do (spin, then a futex), each copying
 * one @n-th of it.
 */
struct host_copy {
	_Alignas(64) _Atomic uint32_t job;	/* generation */
	_Atomic uint32_t sleepers;
	_Alignas(64) _Atomic uint32_t done;
	_Atomic bool stop;
	unsigned int n;
	uint8_t *dst;
	const uint8_t *src;
	uint64_t len;
	pthread_t helper[HOST_COPY_THREADS];
	unsigned int index[HOST_COPY_THREADS];
};

static struct host_copy hc;

static void hc_part(unsigned int i)
{
	uint64_t from = hc.len * i / hc.n, to = hc.len * (i + 1) / hc.n;

	memcpy(hc.dst + from, hc.src + from, to - from);
}

static void *hc_helper(void *arg)
{
	unsigned int i = *(unsigned int *)arg;
	uint32_t gen = 0, seen;
	uint64_t t0;

	for (;;) {
		t0 = now_ns();
		while ((seen = atomic_load_explicit(&hc.job, memory_order_acquire)) == gen) {
			if (now_ns() - t0 < 50000)
				continue;
			atomic_fetch_add(&hc.sleepers, 1);
			if (atomic_load(&hc.job) == gen)
				futex_wait(&hc.job, gen);
			atomic_fetch_sub(&hc.sleepers, 1);
		}
		gen = seen;
		if (atomic_load(&hc.stop))
			return NULL;
		hc_part(i);
		atomic_fetch_add_explicit(&hc.done, 1, memory_order_release);
	}
}

static void hc_start(unsigned int n)
{
	unsigned int i;

	hc.n = n;
	for (i = 1; i < n; i++) {
		hc.index[i] = i;
		if (pthread_create(&hc.helper[i], NULL, hc_helper, &hc.index[i]))
			die("pthread_create", -EAGAIN);
	}
}

static void hc_stop(void)
{
	unsigned int i;

	atomic_store(&hc.stop, true);
	atomic_fetch_add(&hc.job, 1);
	syscall(SYS_futex, (uint32_t *)&hc.job, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
	for (i = 1; i < hc.n; i++)
		pthread_join(hc.helper[i], NULL);
}

/* Copy @len bytes on hc.n threads; ns. */
static uint64_t hc_copy(uint8_t *dst, const uint8_t *src, uint64_t len)
{
	uint64_t t0 = now_ns();

	hc.dst = dst;
	hc.src = src;
	hc.len = len;
	atomic_store(&hc.done, 0);
	atomic_fetch_add_explicit(&hc.job, 1, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&hc.sleepers))
		syscall(SYS_futex, (uint32_t *)&hc.job, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL,
			0);
	hc_part(0);
	while (atomic_load_explicit(&hc.done, memory_order_acquire) != hc.n - 1)
		;
	return now_ns() - t0;
}

/*
 * One COPY of @len bytes on @q, engine hot; ns: submitted, then waited
 * for with accel_queue_sync() as a program would (it spins, then sleeps;
 * on the in-process device the spinning thread runs ranges of the split
 * COPY instead of only spinning). With @polled, waited for by reading
 * the completion in a loop instead (the thread takes a CPU and does
 * nothing else with it: the row before issue 15's change).
 */
static uint64_t dev_copy(struct accel_queue *q, uint64_t dst, uint64_t src, uint64_t len,
			 bool polled)
{
	struct drm_vaccel_packet *p;
	uint64_t t0 = now_ns(), target, polls = 0;
	int ret;

	p = accel_queue_get_packet(q);
	if (!p)
		die("get_packet", -EAGAIN);
	accel_prep_copy(p, dst, src, len);
	ret = accel_queue_submit(q);
	if (ret < 0)
		die("submit", ret);
	target = accel_queue_submitted(q);
	if (!polled) {
		ret = accel_queue_sync(q, 10000000000ll);
		if (ret)
			die("COPY", ret);
	}
	/* a fault would leave the queue stopped: looked at now and then */
	while (accel_queue_completed(q) < target)
		if (!(++polls % 4096) && (ret = accel_queue_status(q, NULL, 0)))
			die("COPY", ret);
	return now_ns() - t0;
}

struct copy_figures {
	double dev_gbs[COPY_SIZES], polled_gbs[COPY_SIZES], memcpy_gbs[COPY_SIZES];
	double threads_gbs[COPY_SIZES];
	unsigned int reps[COPY_SIZES];
	unsigned int threads;		/* of the threaded host copy; 1: none */
};

static double gbs(uint64_t bytes, double ns)
{
	return ns > 0 ? bytes / ns : 0;
}

/*
 * Each size: device COPYs, memcpy()s and (the device splitting over
 * several engines) threaded copies, a block of each, on the same two
 * buffers (written once, so that no figure pays first-touch faults).
 */
static void copy_bandwidth(struct accel_device *dev, const struct accel_device_props *props,
			   struct copy_figures *f)
{
	static uint64_t t[4][COPY_REPS_MAX];
	uint64_t max = copy_size[cfg.copy_sizes - 1];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct accel_buffer *src, *dst;
	struct accel_queue *q;
	uint8_t *hs, *hd;
	unsigned int s, r, reps;
	char what[80];
	int ret;

	ret = accel_queue_create(dev, NULL, &q);
	if (!ret)
		ret = accel_buffer_create(dev, max, ACCEL_BUFFER_HOST, &src);
	if (!ret)
		ret = accel_buffer_create(dev, max, ACCEL_BUFFER_HOST, &dst);
	if (ret)
		die("COPY set-up", ret);
	hs = accel_buffer_host(src);
	hd = accel_buffer_host(dst);
	memset(hs, 0x5a, max);
	memset(hd, 0xa5, max);
	f->threads = props->engines < ncpu ? props->engines : (unsigned int)ncpu;
	if (f->threads > HOST_COPY_THREADS)
		f->threads = HOST_COPY_THREADS;
	if (f->threads > 1)
		hc_start(f->threads);
	for (s = 0; s < cfg.copy_sizes; s++) {
		uint64_t len = copy_size[s];

		reps = cfg.copy_bytes / len;
		reps = reps < 5 ? 5 : reps > COPY_REPS_MAX ? COPY_REPS_MAX : reps;
		f->reps[s] = reps;
		/*
		 * In blocks, each after an unmeasured copy: the engine polls
		 * (and the helpers spin) between two copies of a block, as
		 * they would not if the kinds took turns.
		 */
		dev_copy(q, accel_buffer_va(dst), accel_buffer_va(src), len, false);
		for (r = 0; r < reps; r++)
			t[0][r] = dev_copy(q, accel_buffer_va(dst), accel_buffer_va(src), len, false);
		dev_copy(q, accel_buffer_va(dst), accel_buffer_va(src), len, true);
		for (r = 0; r < reps; r++)
			t[3][r] = dev_copy(q, accel_buffer_va(dst), accel_buffer_va(src), len, true);
		memcpy(hd, hs, len);
		for (r = 0; r < reps; r++) {
			t[1][r] = now_ns();
			memcpy(hd, hs, len);
			__asm__ __volatile__("" : : "r"(hd) : "memory");
			t[1][r] = now_ns() - t[1][r];
		}
		if (f->threads > 1) {
			hc_copy(hd, hs, len);
			for (r = 0; r < reps; r++)
				t[2][r] = hc_copy(hd, hs, len);
		}
		snprintf(what, sizeof(what), "COPY %llu KiB", (unsigned long long)(len >> 10));
		f->dev_gbs[s] = gbs(len, bench_noise_samples(&noise, what, t[0], reps, reps));
		snprintf(what, sizeof(what), "COPY %llu KiB polled", (unsigned long long)(len >> 10));
		f->polled_gbs[s] = gbs(len, bench_noise_samples(&noise, what, t[3], reps, reps));
		snprintf(what, sizeof(what), "memcpy %llu KiB", (unsigned long long)(len >> 10));
		f->memcpy_gbs[s] = gbs(len, bench_noise_samples(&noise, what, t[1], reps, reps));
		if (f->threads > 1) {
			snprintf(what, sizeof(what), "%u-thread copy %llu KiB", f->threads,
				 (unsigned long long)(len >> 10));
			f->threads_gbs[s] = gbs(len, bench_noise_samples(&noise, what, t[2], reps,
									  reps));
		}
	}
	if (f->threads > 1)
		hc_stop();
	/* the device's copy must be right for its figure to mean anything */
	memset(hd, 0, max);
	for (r = 0; r < max; r += 4096)
		hs[r] = (uint8_t)(r >> 12);
	dev_copy(q, accel_buffer_va(dst), accel_buffer_va(src), max, false);
	if (memcmp(hd, hs, max)) {
		fprintf(stderr, "accel-bench: the COPY left wrong bytes\n");
		exit(1);
	}
	accel_buffer_destroy(dst);
	accel_buffer_destroy(src);
	accel_queue_destroy(q);
}

struct tg_figures {
	double eager_ns, raw_ns, replay_ns, chain_eager_ns, chain_replay_ns;
	double mm_eager_gflops, mm_graph_gflops, mm_host_gflops, mm_err;
	uint64_t waits_chain;
	unsigned int queues;
};

/* Per-task host ns of cfg.tg_batches batches (median), eager and replayed. */
static void tg_tasks(struct accel_device *dev, int chain, double *eager, double *replay,
		     uint64_t *waits)
{
	struct accel_tg_params params = { .size = sizeof(params), .ring_size = 4096 };
	uint64_t e[TG_BATCHES], r[TG_BATCHES], ns;
	const unsigned int nb = cfg.tg_batches, nt = cfg.tg_tasks;
	struct accel_graph_exec *ge;
	struct accel_tg_stats st0, st1;
	struct accel_buffer *buf;
	struct accel_graph *g;
	struct accel_tg *tg;
	unsigned int b;
	int ret;

	ret = accel_tg_create(&dev, 1, &params, &tg);
	if (!ret)
		ret = tgw_buffer(dev, nt, &buf);
	if (ret)
		die("task graph set-up", ret);
	for (b = 0; b <= nb; b++) {
		st0.size = sizeof(st0);
		accel_tg_get_stats(tg, &st0);
		ret = tgw_eager(tg, buf, nt, chain, &ns);
		if (!ret)
			ret = accel_tg_sync(tg, TGW_TIMEOUT);
		if (ret)
			die("eager tasks", ret);
		st1.size = sizeof(st1);
		accel_tg_get_stats(tg, &st1);
		if (b)
			e[b - 1] = ns;
	}
	*waits = st1.waits - st0.waits;
	ret = tgw_capture(tg, buf, nt, chain, &g, &ge);
	if (ret)
		die("capture", ret);
	for (b = 0; b <= nb; b++) {
		ret = tgw_replay(ge, 1, &ns);
		if (!ret)
			ret = accel_tg_sync(tg, TGW_TIMEOUT);
		if (ret)
			die("graph launch", ret);
		if (b)
			r[b - 1] = ns;
	}
	bench_noise_samples(&noise, chain ? "eager chained tasks" : "eager tasks", e, nb, nb);
	bench_noise_samples(&noise, chain ? "graph launch, chained" : "graph launch", r, nb, nb);
	*eager = (double)median(e, nb) / nt;
	*replay = (double)median(r, nb) / nt;
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);
	accel_tg_destroy(tg);
	accel_buffer_destroy(buf);
}

/* The raw path for the packets of cfg.tg_tasks independent tasks; per-task ns. */
static double tg_raw(struct accel_device *dev)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 4096 };
	uint64_t t[TG_BATCHES], ns;
	const unsigned int nb = cfg.tg_batches, nt = cfg.tg_tasks;
	struct accel_signal *sig;
	struct accel_queue *q;
	unsigned int b;
	int ret;

	ret = accel_queue_create(dev, &qp, &q);
	if (!ret)
		ret = accel_signal_create(dev, &sig);
	if (ret)
		die("raw queue set-up", ret);
	for (b = 0; b <= nb; b++) {
		ret = tgw_raw(q, sig, nt, 0, &ns);
		if (!ret)
			ret = accel_queue_sync(q, TGW_TIMEOUT);
		if (ret)
			die("raw tasks", ret);
		if (b)
			t[b - 1] = ns;
	}
	accel_signal_destroy(sig);
	accel_queue_destroy(q);
	bench_noise_samples(&noise, "raw accel_queue tasks", t, nb, nb);
	return (double)median(t, nb) / nt;
}

/* The tiled matmul: eager once, graph launches, host reference; GFLOP/s. */
static void tg_matmul(struct accel_device *dev, struct tg_figures *f)
{
	const uint64_t bytes = TGW_MM_N * TGW_MM_N * sizeof(float);
	const double flop = 2.0 * TGW_MM_N * TGW_MM_N * TGW_MM_N;
	struct accel_buffer *a, *b, *c;
	struct accel_graph_exec *ge;
	uint64_t t[5], t0;
	struct accel_graph *g;
	struct accel_tg *tg;
	float *ha, *hb, *hc, *ref;
	unsigned int i, seed = 1;
	int ret;

	ret = accel_tg_create(&dev, 1, NULL, &tg);
	if (!ret)
		ret = accel_buffer_create(dev, bytes, ACCEL_BUFFER_HOST, &a);
	if (!ret)
		ret = accel_buffer_create(dev, bytes, ACCEL_BUFFER_HOST, &b);
	if (!ret)
		ret = accel_buffer_create(dev, bytes, ACCEL_BUFFER_HOST, &c);
	ref = malloc(bytes);
	if (!ret && !ref)
		ret = -ENOMEM;
	if (ret)
		die("matmul set-up", ret);
	f->queues = accel_tg_num_queues(tg, 0);
	ha = accel_buffer_host(a);
	hb = accel_buffer_host(b);
	hc = accel_buffer_host(c);
	for (i = 0; i < TGW_MM_N * TGW_MM_N; i++) {
		ha[i] = (float)(rand_r(&seed) % 2048) / 1024.0f - 1.0f;
		hb[i] = (float)(rand_r(&seed) % 2048) / 1024.0f - 1.0f;
	}
	t0 = now_ns();
	tgw_host_matmul(ha, hb, ref);
	f->mm_host_gflops = flop / (now_ns() - t0);

	t0 = now_ns();
	ret = tgw_matmul(tg, a, b, c);
	if (!ret)
		ret = accel_tg_sync(tg, TGW_TIMEOUT);
	if (ret)
		die("eager matmul", ret);
	f->mm_eager_gflops = flop / (now_ns() - t0);

	ret = accel_tg_capture_begin(tg);
	if (!ret)
		ret = tgw_matmul(tg, a, b, c);
	if (!ret)
		ret = accel_tg_capture_end(tg, &g);
	if (!ret)
		ret = accel_graph_instantiate(g, &ge);
	if (ret)
		die("matmul graph", ret);
	for (i = 0; i < cfg.mm_launches; i++) {
		memset(hc, 0, bytes);
		t0 = now_ns();
		ret = accel_graph_launch(ge, NULL, 0);
		if (!ret)
			ret = accel_tg_sync(tg, TGW_TIMEOUT);
		if (ret)
			die("matmul launch", ret);
		t[i] = now_ns() - t0;
	}
	bench_noise_samples(&noise, "tiled matmul launches", t, cfg.mm_launches, cfg.mm_launches);
	f->mm_graph_gflops = flop / median(t, cfg.mm_launches);
	/* a figure for a wrong result would be worthless */
	f->mm_err = 0;
	for (i = 0; i < TGW_MM_N * TGW_MM_N; i++)
		if (!(fabs(hc[i] - ref[i]) <= f->mm_err))
			f->mm_err = fabs(hc[i] - ref[i]);
	if (!(f->mm_err <= 1e-3)) {
		fprintf(stderr, "accel-bench: the tiled matmul is wrong (error %g)\n", f->mm_err);
		exit(1);
	}
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);
	accel_tg_destroy(tg);
	accel_buffer_destroy(a);
	accel_buffer_destroy(b);
	accel_buffer_destroy(c);
	free(ref);
}


/* ---- the raw queue path against the bare loop (tools/queue_path_work.h) ---- */

struct qp_figures {
	double med[QP_N];
	double kicks_per_packet;
	bool light_fence;	/* the engines fence for the submitter (lib/membarrier.c) */
};

/* Hold (@ns > 0) or release (0) every engine of @dev (knob stall_engine). */
static void stall_engines(struct accel_device *dev, unsigned int engines, uint64_t ns)
{
	char val[64];
	unsigned int e;
	int ret;

	for (e = 0; e < engines; e++) {
		snprintf(val, sizeof(val), "%u %llu", e, (unsigned long long)ns);
		ret = accel_device_debug_write(dev, "stall_engine", val);
		if (ret)
			die("stall_engine", ret);
	}
}

/* The device's KICK count (its debugfs "stats"), or -1. */
static long long kicks_of(struct accel_device *dev)
{
	char buf[2048];

	if (accel_device_debug_read(dev, "stats", buf, sizeof(buf)) <= 0)
		return -1;
	return vaccel_kv(buf, "kicks");
}

static void queue_path(struct accel_device *dev, const struct accel_device_props *props,
		       struct qp_figures *f)
{
	static uint64_t ns[QP_N][QP_BATCHES];
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = QP_RING };
	long long k0, k1, lib_packets = 0;
	const unsigned int nb = cfg.qp_batches;
	static struct qp_bare_rings br;
	enum qp_way order[QP_N];
	struct accel_queue *q;
	struct qp_pin pin;
	unsigned int b, k, w;
	uint64_t t0;
	int ret;

	qp_pin_begin(&pin);
	ret = accel_queue_create(dev, &qp, &q);
	if (!ret)
		ret = qp_bare_rings_create(dev, &br, &pin);
	if (ret)
		die("raw queue path set-up", ret);
	k0 = kicks_of(dev);
	for (b = 0; b <= nb; b++) {	/* batch 0 unmeasured */
		/* each round in its own order: a batch runs in the state its predecessor left */
		qp_order(order, b);
		for (k = 0; k < QP_N; k++) {
			w = order[k];
			if (qp_is_lib(w)) {
				qp_fence_for(w, q);
				/* the engine awake (need_wakeup clear), then held */
				ret = qp_lib(QP_LIB_ONE, q, br.pkts, 1);
				if (!ret)
					ret = accel_queue_sync(q, 10000000000ll);
				if (ret)
					die("raw queue path: prime", ret);
				stall_engines(dev, props->engines, 10000000000ull);
			}
			t0 = now_ns();
			if (qp_is_lib(w)) {
				ret = qp_lib(w, q, br.pkts, QP_PACKETS);
				lib_packets += QP_PACKETS;
			} else {
				qp_bare_batch(&br, w, NULL);
			}
			if (b)
				ns[w][b - 1] = now_ns() - t0;
			if (ret)
				die("raw queue path", ret);
			if (qp_is_lib(w)) {
				stall_engines(dev, props->engines, 0);
				ret = accel_queue_sync(q, 10000000000ll);
			} else {
				ret = qp_bare_after(&br, w);
			}
			if (ret)
				die("raw queue path: after a batch", ret);
		}
	}
	k1 = kicks_of(dev);
	qp_fence_for(QP_LIB_ONE, q);
	f->light_fence = acc_queue_light_fence(q);
	qp_bare_rings_destroy(&br);
	qp_pin_end(&pin, NULL);
	for (w = 0; w < QP_N; w++)
		f->med[w] = bench_noise_samples(&noise, qp_way_name(w), ns[w], nb, nb) / QP_PACKETS;
	/* the primes' KICKs counted too: at most one each */
	f->kicks_per_packet = k0 >= 0 && k1 >= k0 ? (double)(k1 - k0) / lib_packets : -1;
	accel_queue_destroy(q);
}

/* The raw uAPI's NOP round trip on its own file of the device (the module only). */
struct raw_path {
	int fd;
	struct bo ring;
	struct q q;
};

static void raw_open(unsigned int id, struct raw_path *r)
{
	int ret;

	r->fd = vaccel_open(id);
	if (r->fd < 0)
		die("raw open", r->fd);
	ret = bo_new(r->fd, 4096, 0, &r->ring);
	if (!ret)
		ret = vaccel_vm_bind(r->fd, r->ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA, 4096);
	if (!ret)
		ret = queue_new(r->fd, RING_VA, RING_N, (void *)r->ring.map, &r->q);
	if (ret)
		die("raw set-up", ret);
}

static void usage(void)
{
	fprintf(stderr, "usage: accel-bench [--quick] [INDEX]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const char no_raw[] = "raw uAPI: not measured (in-process device: no /dev/accel file)";
	unsigned int index = 0, i, r, n_lat;
	uint64_t *lib, *raw, *evt, *spin, *slept, lib_med, raw_med = 0, evt_med, spin_med, sleep_med;
	uint64_t inl_med = 0;
	char inl_was;
	struct accel_device_props props = { .size = sizeof(props) };
	uint64_t pp_sleeps = 0;
	struct accel_queue *q, *rq;
	struct accel_device *dev;
	struct accel_signal *sig;
	struct accel_buffer *ts;
	double pps1, pps64, pp, runs[3][RUNS];
	struct tgw_pipe_figures pipe;
	struct copy_figures cf;
	struct tg_figures tgf;
	struct qp_figures qpf;
	struct raw_path rp = { .fd = -1 };
	bool module, quick = false;
	char buf[128];
	int ret;

	if (argc > 1 && accel_bench_coll_is_op(argv[1]))
		return accel_bench_coll(argc - 1, argv + 1);
	for (i = 1; i < (unsigned int)argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--quick")) {
			quick = true;
			continue;
		}
		if (argv[i][0] == '-' || !argv[i][0])
			usage();
		index = (unsigned int)strtoul(argv[i], &end, 0);
		if (*end)
			usage();
	}
	if (quick) {
		cfg.per_round = 50;
		cfg.rate_packets = 64 * 64;
		cfg.waits = 10;
		cfg.pingpongs = 2000;
		cfg.tg_tasks = 50;
		cfg.tg_batches = 2;
		cfg.qp_batches = 2;
		cfg.mm_launches = 1;
		cfg.pipe_runs = 2;
		cfg.copy_bytes = 4ull << 20;
		cfg.copy_sizes = 2;
	}
	n_lat = ROUNDS * cfg.per_round;
	lib = calloc(n_lat, sizeof(uint64_t));
	raw = calloc(n_lat, sizeof(uint64_t));
	evt = calloc(n_lat, sizeof(uint64_t));
	spin = calloc(cfg.waits, sizeof(uint64_t));
	slept = calloc(cfg.waits, sizeof(uint64_t));
	if (!lib || !raw || !evt || !spin || !slept)
		die("calloc", -ENOMEM);
	ret = accel_device_open(index, &dev);
	if (ret)
		die("open", ret);
	accel_device_query(dev, &props);
	module = !strcmp(accel_device_backend(dev), "module");

	/* The library's queue and one for the rate test (default rings). */
	ret = accel_queue_create(dev, NULL, &q);
	if (!ret)
		ret = accel_queue_create(dev, NULL, &rq);
	if (!ret)
		ret = accel_signal_create(dev, &sig);
	if (!ret)
		ret = accel_buffer_create(dev, 4096, ACCEL_BUFFER_HOST, &ts);
	if (ret)
		die("library set-up", ret);

	/* The raw path on its own file of the same device, as vaccel-bench. */
	if (module)
		raw_open(props.id, &rp);

	/*
	 * Latency: alternate blocks so that drift hits both alike. The
	 * engine's round trip: on the in-process device without the kicking
	 * thread's turn (measured on its own below).
	 */
	inl_was = bench_inline_kick(dev, false);
	for (i = 0; i < 200; i++) {
		lib_roundtrip(q);
		if (module)
			raw_roundtrip(rp.fd, &rp.q);
	}
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < cfg.per_round; i++)
			lib[r * cfg.per_round + i] = lib_roundtrip(q);
		for (i = 0; module && i < cfg.per_round; i++)
			raw[r * cfg.per_round + i] = raw_roundtrip(rp.fd, &rp.q);
		for (i = 0; i < cfg.per_round; i++)
			evt[r * cfg.per_round + i] = lib_event_roundtrip(q);
	}
	bench_noise_samples(&noise, "library NOP latency", lib, n_lat, ROUNDS);
	if (module)
		bench_noise_samples(&noise, "raw NOP latency", raw, n_lat, ROUNDS);
	bench_noise_samples(&noise, "NOP + event latency", evt, n_lat, ROUNDS);
	lib_med = median(lib, n_lat);
	if (module)
		raw_med = median(raw, n_lat);
	evt_med = median(evt, n_lat);
	bench_inline_restore(dev, inl_was);
	/* the in-process device's turn in the kicking thread: its engine asleep throughout */
	if (inl_was == 'Y') {
		usleep(2000);
		for (i = 0; i < 200; i++)
			lib_roundtrip(q);
		for (i = 0; i < n_lat; i++)
			evt[i] = lib_roundtrip(q);
		bench_noise_samples(&noise, "NOP latency, kicked turn", evt, n_lat, ROUNDS);
		inl_med = median(evt, n_lat);
	}

	/* Packet rate: batched doorbells vs one per packet (median of RUNS). */
	lib_rate(rq, 64);
	for (r = 0; r < RUNS; r++) {
		runs[0][r] = lib_rate(rq, 64);
		runs[1][r] = lib_rate(rq, 1);
	}
	pps64 = bench_noise_repeats(&noise, "packets/s, 64 per doorbell", runs[0], RUNS);
	pps1 = bench_noise_repeats(&noise, "packets/s, 1 per doorbell", runs[1], RUNS);

	/* Host wake-up latency, polled vs asleep. */
	for (i = 0; i < cfg.waits; i++) {
		spin[i] = wake_latency(q, sig, ts, false);
		slept[i] = wake_latency(q, sig, ts, true);
	}
	bench_noise_samples(&noise, "wake-up, polling", spin, cfg.waits, 10);
	bench_noise_samples(&noise, "wake-up, asleep", slept, cfg.waits, 10);
	spin_med = median(spin, cfg.waits);
	sleep_med = median(slept, cfg.waits);

	for (r = 0; r < RUNS; r++)
		runs[2][r] = pingpong_ns(props.poll_budget_ns, &pp_sleeps);
	pp = bench_noise_repeats(&noise, "ping-pong", runs[2], RUNS);

	/* COPY bandwidth against the host's copies. */
	copy_bandwidth(dev, &props, &cf);

	/* The raw queue path against the bare loop. */
	queue_path(dev, &props, &qpf);

	/* The task graph: eager and replayed tasks, the raw path, the matmul. */
	tg_tasks(dev, 0, &tgf.eager_ns, &tgf.replay_ns, &tgf.waits_chain);
	tg_tasks(dev, 1, &tgf.chain_eager_ns, &tgf.chain_replay_ns, &tgf.waits_chain);
	tgf.raw_ns = tg_raw(dev);
	tg_matmul(dev, &tgf);
	ret = tgw_pipe_measure(dev, cfg.pipe_runs, &pipe);
	if (ret)
		die("the pipeline", ret);
	bench_noise_samples(&noise, "pipeline, eager", pipe.eager_runs, pipe.runs, pipe.runs);
	bench_noise_samples(&noise, "pipeline, launch", pipe.replay_runs, pipe.runs, pipe.runs);
	bench_noise_samples(&noise, "launch of one task", pipe.fixed_runs, pipe.runs, pipe.runs);
	bench_noise_samples(&noise, "pipeline, launches back to back", pipe.b2b_runs, pipe.runs,
			    pipe.runs);

	printf("accel-bench: device %u (%s %u), %u engines, poll budget %llu ns, %ld CPUs, libaccel %d.%d%s\n",
	       index, module ? "module, vaccel" : "in-process, sim:", props.id, props.engines,
	       (unsigned long long)props.poll_budget_ns, sysconf(_SC_NPROCESSORS_ONLN),
	       accel_version_major(), accel_version_minor(),
	       quick ? " (--quick: a few repeats only, figures not to be quoted)" : "");
	if (!module)
		printf("accel-bench: the %s backend: the raw-uAPI NOP round trip needs a /dev/accel file and is not measured; its cells say so\n",
		       accel_device_backend(dev));
	printf("| measurement | libaccel | baseline | ratio | target |\n");
	printf("|---|---|---|---|---|\n");
	if (module)
		printf("| NOP submit-to-completion, engine hot, polled (median of %u) | %.2f us | raw uAPI %.2f us | %.2f | <= 1.10 |\n",
		       n_lat, lib_med / 1e3, raw_med / 1e3, (double)lib_med / raw_med);
	else
		printf("| NOP submit-to-completion, engine hot, polled (median of %u) | %.2f us | %s | - | <= 1.10 |\n",
		       n_lat, lib_med / 1e3, no_raw);
	if (inl_med)
		printf("| NOP submit-to-completion, engine asleep: the in-process device runs the kicked queue in the submitting thread (median of %u) | %.2f us | engine hot, polled %.2f us | %.2f | |\n",
		       n_lat, inl_med / 1e3, lib_med / 1e3, (double)inl_med / lib_med);
	if (module)
		printf("| NOP + event, accel_event_wait() (median of %u) | %.2f us | raw uAPI %.2f us | %.2f | |\n",
		       n_lat, evt_med / 1e3, raw_med / 1e3, (double)evt_med / raw_med);
	else
		printf("| NOP + event, accel_event_wait() (median of %u) | %.2f us | polled %.2f us | %.2f | |\n",
		       n_lat, evt_med / 1e3, lib_med / 1e3, (double)evt_med / lib_med);
	printf("| NOP packets/s, one doorbell per 64 packets (%u packets, median of %d runs) | %.0f | one per packet %.0f | %.2f | |\n",
	       cfg.rate_packets, RUNS, pps64, pps1, pps64 / pps1);
	printf("| host wake-up after device completion, polling (median of %u) | %.2f us | asleep in accel_event_wait() %.2f us | %.2f | |\n",
	       cfg.waits, spin_med / 1e3, sleep_med / 1e3, (double)sleep_med / spin_med);
	printf("| polled doorbell round trip (library hot path) vs cache-line ping-pong, 2 threads, one line each way, engine-style wait (%llu futex sleeps) | %.2f us | ping-pong %.2f us | %.2f | <= 2 |\n",
	       (unsigned long long)pp_sleeps, lib_med / 1e3, pp / 1e3, lib_med / pp);
	for (i = 0; i < cfg.copy_sizes; i++) {
		double best = cf.threads_gbs[i] > cf.memcpy_gbs[i] ? cf.threads_gbs[i] :
				cf.memcpy_gbs[i];

		if (cf.threads > 1)
			snprintf(buf, sizeof(buf), "memcpy %.2f GB/s, %u threads %.2f GB/s",
				 cf.memcpy_gbs[i], cf.threads, cf.threads_gbs[i]);
		else
			snprintf(buf, sizeof(buf), "memcpy %.2f GB/s", cf.memcpy_gbs[i]);
		printf("| COPY %llu KiB, engine hot, waited in accel_queue_sync() (median of %u) | %.2f GB/s | %s | %.2f of %s | >= 0.9 |\n",
		       (unsigned long long)(copy_size[i] >> 10), cf.reps[i], cf.dev_gbs[i], buf,
		       cf.dev_gbs[i] / best, best == cf.memcpy_gbs[i] ? "memcpy" : "threads");
		printf("| the same, completion polled in a loop (the submitter's CPU does nothing else) | %.2f GB/s | %s | %.2f of %s | |\n",
		       cf.polled_gbs[i], buf,
		       cf.polled_gbs[i] / best, best == cf.memcpy_gbs[i] ? "memcpy" : "threads");
	}
	printf("| raw queue path, 1 packet per doorbell: get_packet, 64-byte copy, submit (%s; %.3f KICKs per packet), host ns per packet (median of %u x %u, engines held) | %.1f ns | bare loop: copy + store-release of the doorbell, ring read by another CPU %.1f ns | %.2f | <= 1.5 |\n",
	       qpf.light_fence ? "the engines fence for it: membarrier()" :
				 "a full fence after the doorbell",
	       qpf.kicks_per_packet, cfg.qp_batches, QP_PACKETS, qpf.med[QP_LIB_ONE],
	       qpf.med[QP_BARE_ONE], qpf.med[QP_LIB_ONE] / qpf.med[QP_BARE_ONE]);
	printf("| the same | %.1f ns | bare loop + the protocol's full fence and need_wakeup load, ring read by another CPU %.1f ns | %.2f | |\n",
	       qpf.med[QP_LIB_ONE], qpf.med[QP_FENCED_ONE],
	       qpf.med[QP_LIB_ONE] / qpf.med[QP_FENCED_ONE]);
	printf("| the same | %.1f ns | bare loop + fence, ring no other CPU reads %.1f ns | %.2f | |\n",
	       qpf.med[QP_LIB_ONE], qpf.med[QP_PRIV_FENCED_ONE],
	       qpf.med[QP_LIB_ONE] / qpf.med[QP_PRIV_FENCED_ONE]);
	printf("| the same | %.1f ns | bare loop, ring no other CPU reads %.1f ns | %.2f | |\n",
	       qpf.med[QP_LIB_ONE], qpf.med[QP_PRIV_ONE], qpf.med[QP_LIB_ONE] / qpf.med[QP_PRIV_ONE]);
	printf("| the same | %.1f ns | the library keeping the submitter's full fence (%s) %.1f ns | %.2f | |\n",
	       qpf.med[QP_LIB_ONE],
	       qpf.light_fence ? "as before lib/membarrier.c" :
				 "as every submit on this backend: the same path twice",
	       qpf.med[QP_LIB_ONE_FULL], qpf.med[QP_LIB_ONE] / qpf.med[QP_LIB_ONE_FULL]);
	printf("| raw queue path, 64 packets per doorbell: 64 x (get_packet, copy), one submit | %.1f ns | bare loop, one doorbell per 64 packets, ring read by another CPU %.1f ns | %.2f | <= 1.5 |\n",
	       qpf.med[QP_LIB_64], qpf.med[QP_BARE_64], qpf.med[QP_LIB_64] / qpf.med[QP_BARE_64]);
	printf("| accel_queue_submit_packets() of 64 prepared packets | %.1f ns | bare loop, one doorbell per 64 packets, ring read by another CPU %.1f ns | %.2f | <= 1.5 |\n",
	       qpf.med[QP_COPY_64], qpf.med[QP_BARE_64], qpf.med[QP_COPY_64] / qpf.med[QP_BARE_64]);
	printf("| the same | %.1f ns | bare loop, one doorbell per 64 packets, ring no other CPU reads %.1f ns | %.2f | |\n",
	       qpf.med[QP_COPY_64], qpf.med[QP_PRIV_64], qpf.med[QP_COPY_64] / qpf.med[QP_PRIV_64]);
	printf("| eager task, 4 tensor args (DELAY 0), host time per task (median of %u x %u) | %.2f us | raw accel_queue, same packet %.2f us | %.2f | <= 1 us natively (taskgraph-bench) |\n",
	       cfg.tg_batches, cfg.tg_tasks, tgf.eager_ns / 1e3, tgf.raw_ns / 1e3,
	       tgf.eager_ns / tgf.raw_ns);
	printf("| graph launch of %u such tasks, host time per task | %.1f ns | eager %.1f ns | %.0fx cheaper | >= 20x |\n",
	       cfg.tg_tasks, tgf.replay_ns, tgf.eager_ns, tgf.eager_ns / tgf.replay_ns);
	printf("| the same, each task reading its predecessor's output (%llu WAITs per %u tasks on %u queues) | %.1f ns | eager %.1f ns | %.0fx cheaper | >= 20x |\n",
	       (unsigned long long)tgf.waits_chain, cfg.tg_tasks, tgf.queues, tgf.chain_replay_ns,
	       tgf.chain_eager_ns, tgf.chain_eager_ns / tgf.chain_replay_ns);
	printf("| tiled matmul %dx%d f32, %dx%d tiles, graph launch (median of %u; eager %.3f) | %.3f GFLOP/s | host, 1 thread %.3f GFLOP/s | %.2f | |\n",
	       TGW_MM_N, TGW_MM_N, TGW_MM_T, TGW_MM_T, cfg.mm_launches, tgf.mm_eager_gflops,
	       tgf.mm_graph_gflops, tgf.mm_host_gflops, tgf.mm_graph_gflops / tgf.mm_host_gflops);
	printf("| pipeline graph: %d tasks (MATMUL and COPY) on 4 queues, each after the one before on another queue, graph launch, host time per task (median of %u) | %.1f ns | eager %.0f ns | %.0fx cheaper | >= 20x |\n",
	       2 * TGW_PIPE_STAGES, pipe.runs, pipe.replay_task, pipe.eager_task,
	       pipe.eager_task / pipe.replay_task);
	printf("| the same, launches back to back, one sync after the last (median of %u) | %.1f ns | eager %.0f ns | %.0fx cheaper | |\n",
	       pipe.runs, pipe.b2b_task, pipe.eager_task, pipe.eager_task / pipe.b2b_task);
	printf("| graph launch, fixed cost: a one-task graph, host time per launch (median of %u) | %.0f ns | one eager task of the pipeline %.0f ns | %.2f | |\n",
	       pipe.runs, pipe.launch_fixed, pipe.eager_task, pipe.launch_fixed / pipe.eager_task);
	bench_noise_report(&noise, stdout);

	accel_buffer_destroy(ts);
	accel_signal_destroy(sig);
	accel_queue_destroy(rq);
	accel_queue_destroy(q);
	accel_device_close(dev);
	if (rp.fd >= 0)
		close(rp.fd);
	free(lib);
	free(raw);
	free(evt);
	free(spin);
	free(slept);
	return 0;
}
