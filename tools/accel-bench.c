// SPDX-License-Identifier: GPL-2.0-only
/*
 * accel-bench: what libaccel's submission path costs, next to baselines
 * measured in the same run (tools/vaccel-bench.c stays the raw-uAPI
 * reference for the device itself):
 *
 *   NOP submit-to-completion latency, engine hot:
 *       library (get_packet, prep, submit, poll completed)
 *       vs the raw path (same packet; ring store, doorbell, fence, KICK if
 *       needed, poll the control page: vaccel-bench's code)
 *   the same through an event (accel_queue_record + accel_event_wait)
 *   NOP packets/s: one doorbell per 64 packets vs one per packet
 *   host wait latency after the device completes (TIMESTAMP packet to the
 *       host noticing): polling the signal vs accel_event_wait() asleep
 *   two-thread cache-line ping-pong: the physical floor of a polled
 *       doorbell round trip (a store seen by another CPU and back)
 *   the raw queue path (tools/queue_path_work.h) against a bare loop
 *       that copies a 64-byte packet into a ring slot and store-releases
 *       the doorbell, the engines held with the stall_engine knob while a
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
 * unless something failed to run. Usage: accel-bench [INDEX].
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <accel/accel.h>

#include "../tests/kselftest/vaccel_queue_util.h"
#include "queue_path_work.h"
#include "taskgraph_work.h"
#include "bench_noise.h"

#define ROUNDS		10		/* alternate library and raw blocks */
#define PER_ROUND	2000
#define RATE_PACKETS	200000
#define WAITS		200
#define WAIT_DELAY_NS	1000000		/* far above the library's spin budget */
#define PINGPONGS	200000
#define TG_TASKS	1000		/* tasks per batch and per graph */
#define TG_BATCHES	10		/* after one unmeasured batch */
#define MM_LAUNCHES	5
#define RUNS		3		/* runs of the rates and the ping-pong, median */

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

/* Raw uAPI: vaccel-bench's NOP round trip. */
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

	for (i = 0; i < RATE_PACKETS / batch; i++) {
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
	return (RATE_PACKETS / batch) * batch * 1e9 / (double)(now_ns() - t0);
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

struct pingpong {
	_Alignas(64) atomic_uint_fast64_t line;
	unsigned int cpu;
};

static void pin(unsigned int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *pong(void *arg)
{
	struct pingpong *pp = arg;
	uint64_t i;

	pin(pp->cpu);
	for (i = 0; i < PINGPONGS; i++) {
		while (atomic_load_explicit(&pp->line, memory_order_acquire) != 2 * i + 1)
			;
		atomic_store_explicit(&pp->line, 2 * i + 2, memory_order_release);
	}
	return NULL;
}

/* Round trip of a cache line between two threads on two CPUs; ns. */
static double pingpong_ns(void)
{
	static struct pingpong pp;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t t;
	uint64_t i, t0;

	atomic_store(&pp.line, 0);
	pp.cpu = ncpu > 1 ? 1 : 0;
	if (pthread_create(&t, NULL, pong, &pp))
		die("pthread_create", -EAGAIN);
	pin(0);
	t0 = now_ns();
	for (i = 0; i < PINGPONGS; i++) {
		atomic_store_explicit(&pp.line, 2 * i + 1, memory_order_release);
		while (atomic_load_explicit(&pp.line, memory_order_acquire) != 2 * i + 2)
			;
	}
	t0 = now_ns() - t0;
	pthread_join(t, NULL);
	return (double)t0 / PINGPONGS;
}

struct tg_figures {
	double eager_ns, raw_ns, replay_ns, chain_eager_ns, chain_replay_ns;
	double mm_eager_gflops, mm_graph_gflops, mm_host_gflops, mm_err;
	uint64_t waits_chain;
	unsigned int queues;
};

/* Per-task host ns of TG_BATCHES batches (median), eager and replayed. */
static void tg_tasks(struct accel_device *dev, int chain, double *eager, double *replay,
		     uint64_t *waits)
{
	struct accel_tg_params params = { .size = sizeof(params), .ring_size = 4096 };
	uint64_t e[TG_BATCHES], r[TG_BATCHES], ns;
	struct accel_graph_exec *ge;
	struct accel_tg_stats st0, st1;
	struct accel_buffer *buf;
	struct accel_graph *g;
	struct accel_tg *tg;
	unsigned int b;
	int ret;

	ret = accel_tg_create(&dev, 1, &params, &tg);
	if (!ret)
		ret = tgw_buffer(dev, TG_TASKS, &buf);
	if (ret)
		die("task graph set-up", ret);
	for (b = 0; b <= TG_BATCHES; b++) {
		st0.size = sizeof(st0);
		accel_tg_get_stats(tg, &st0);
		ret = tgw_eager(tg, buf, TG_TASKS, chain, &ns);
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
	ret = tgw_capture(tg, buf, TG_TASKS, chain, &g, &ge);
	if (ret)
		die("capture", ret);
	for (b = 0; b <= TG_BATCHES; b++) {
		ret = tgw_replay(ge, 1, &ns);
		if (!ret)
			ret = accel_tg_sync(tg, TGW_TIMEOUT);
		if (ret)
			die("graph launch", ret);
		if (b)
			r[b - 1] = ns;
	}
	bench_noise_samples(&noise, chain ? "eager chained tasks" : "eager tasks", e, TG_BATCHES,
			    TG_BATCHES);
	bench_noise_samples(&noise, chain ? "graph launch, chained" : "graph launch", r, TG_BATCHES,
			    TG_BATCHES);
	*eager = (double)median(e, TG_BATCHES) / TG_TASKS;
	*replay = (double)median(r, TG_BATCHES) / TG_TASKS;
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);
	accel_tg_destroy(tg);
	accel_buffer_destroy(buf);
}

/* The raw path for the packets of TG_TASKS independent tasks; per-task ns. */
static double tg_raw(struct accel_device *dev)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 4096 };
	uint64_t t[TG_BATCHES], ns;
	struct accel_signal *sig;
	struct accel_queue *q;
	unsigned int b;
	int ret;

	ret = accel_queue_create(dev, &qp, &q);
	if (!ret)
		ret = accel_signal_create(dev, &sig);
	if (ret)
		die("raw queue set-up", ret);
	for (b = 0; b <= TG_BATCHES; b++) {
		ret = tgw_raw(q, sig, TG_TASKS, 0, &ns);
		if (!ret)
			ret = accel_queue_sync(q, TGW_TIMEOUT);
		if (ret)
			die("raw tasks", ret);
		if (b)
			t[b - 1] = ns;
	}
	accel_signal_destroy(sig);
	accel_queue_destroy(q);
	bench_noise_samples(&noise, "raw accel_queue tasks", t, TG_BATCHES, TG_BATCHES);
	return (double)median(t, TG_BATCHES) / TG_TASKS;
}

/* The tiled matmul: eager once, graph launches, host reference; GFLOP/s. */
static void tg_matmul(struct accel_device *dev, struct tg_figures *f)
{
	const uint64_t bytes = TGW_MM_N * TGW_MM_N * sizeof(float);
	const double flop = 2.0 * TGW_MM_N * TGW_MM_N * TGW_MM_N;
	struct accel_buffer *a, *b, *c;
	struct accel_graph_exec *ge;
	uint64_t t[MM_LAUNCHES], t0;
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
	for (i = 0; i < MM_LAUNCHES; i++) {
		memset(hc, 0, bytes);
		t0 = now_ns();
		ret = accel_graph_launch(ge, NULL, 0);
		if (!ret)
			ret = accel_tg_sync(tg, TGW_TIMEOUT);
		if (ret)
			die("matmul launch", ret);
		t[i] = now_ns() - t0;
	}
	bench_noise_samples(&noise, "tiled matmul launches", t, MM_LAUNCHES, MM_LAUNCHES);
	f->mm_graph_gflops = flop / median(t, MM_LAUNCHES);
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

#define QP_BATCHES	11

struct qp_figures {
	double med[QP_N];
	double kicks_per_packet;
};

/* Hold (@ns > 0) or release (0) every engine of device @id (debugfs stall_engine). */
static void stall_engines(unsigned int id, unsigned int engines, uint64_t ns)
{
	char path[128], val[64];
	unsigned int e;
	int ret;

	snprintf(path, sizeof(path), ACCEL_DEBUGFS "/vaccel%u/stall_engine", id);
	for (e = 0; e < engines; e++) {
		snprintf(val, sizeof(val), "%u %llu", e, (unsigned long long)ns);
		ret = vaccel_sysfs_write(path, val);
		if (ret)
			die("stall_engine (debugfs)", ret);
	}
}

static long long kicks_of(unsigned int id)
{
	char buf[1024];

	if (vaccel_dev_debugfs(id, "stats", buf, sizeof(buf)) <= 0)
		return -1;
	return vaccel_kv(buf, "kicks");
}

static void queue_path(struct accel_device *dev, const struct accel_device_props *props,
		       struct qp_figures *f)
{
	static uint64_t ns[QP_N][QP_BATCHES];
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = QP_RING };
	struct drm_vaccel_packet pkts[64], *bare_ring;
	struct accel_buffer *ring_buf, *db_buf;
	long long k0, k1, lib_packets = 0;
	struct accel_queue *q;
	uint64_t start = 0, t0, *db;
	unsigned int b, w;
	int ret;

	ret = accel_queue_create(dev, &qp, &q);
	if (!ret)
		ret = accel_buffer_create(dev, QP_RING * sizeof(*bare_ring), ACCEL_BUFFER_HOST,
					  &ring_buf);
	if (!ret)
		ret = accel_buffer_create(dev, 4096, ACCEL_BUFFER_HOST, &db_buf);
	if (ret)
		die("raw queue path set-up", ret);
	bare_ring = accel_buffer_host(ring_buf);
	db = accel_buffer_host(db_buf);
	qp_packets(pkts);
	k0 = kicks_of(props->id);
	for (b = 0; b <= QP_BATCHES; b++)	/* batch 0 unmeasured */
		for (w = 0; w < QP_N; w++) {
			if (qp_is_lib(w)) {
				/* the engine awake (need_wakeup clear), then held */
				ret = qp_lib(QP_LIB_ONE, q, pkts, 1);
				if (!ret)
					ret = accel_queue_sync(q, 10000000000ll);
				if (ret)
					die("raw queue path: prime", ret);
				stall_engines(props->id, props->engines, 10000000000ull);
			}
			t0 = now_ns();
			if (qp_is_lib(w)) {
				ret = qp_lib(w, q, pkts, QP_PACKETS);
				lib_packets += QP_PACKETS;
			} else {
				/* need_wakeup: a word of its own cache line beside the doorbell */
				qp_bare(bare_ring, db, pkts, start, QP_PACKETS,
					w == QP_BARE_64 ? 64 : 1,
					w == QP_FENCED_ONE ? (const volatile uint32_t *)(db + 8) :
					NULL);
				start += QP_PACKETS;
			}
			if (b)
				ns[w][b - 1] = now_ns() - t0;
			if (ret)
				die("raw queue path", ret);
			if (qp_is_lib(w)) {
				stall_engines(props->id, props->engines, 0);
				ret = accel_queue_sync(q, 10000000000ll);
				if (ret)
					die("raw queue path: sync", ret);
			}
		}
	k1 = kicks_of(props->id);
	for (w = 0; w < QP_N; w++)
		f->med[w] = (double)median(ns[w], QP_BATCHES) / QP_PACKETS;
	/* the primes' KICKs counted too: at most one each */
	f->kicks_per_packet = k0 >= 0 && k1 >= k0 ? (double)(k1 - k0) / lib_packets : -1;
	accel_buffer_destroy(db_buf);
	accel_buffer_destroy(ring_buf);
	accel_queue_destroy(q);
}

int main(int argc, char **argv)
{
	unsigned int index = argc > 1 ? (unsigned int)atoi(argv[1]) : 0, i, r;
	uint64_t *lib = calloc(ROUNDS * PER_ROUND, sizeof(uint64_t));
	uint64_t *raw = calloc(ROUNDS * PER_ROUND, sizeof(uint64_t));
	uint64_t *evt = calloc(ROUNDS * PER_ROUND, sizeof(uint64_t));
	uint64_t spin[WAITS], slept[WAITS], lib_med, raw_med, evt_med, spin_med, sleep_med;
	struct accel_device_props props = { .size = sizeof(props) };
	struct accel_queue *q, *rq;
	struct accel_device *dev;
	struct accel_signal *sig;
	struct accel_buffer *ts;
	double pps1, pps64, pp, runs[3][RUNS];
	struct tgw_pipe_figures pipe;
	struct tg_figures tgf;
	struct qp_figures qpf;
	struct bo ring;
	struct q rawq;
	int fd, ret;

	if (!lib || !raw || !evt)
		die("calloc", -ENOMEM);
	ret = accel_device_open(index, &dev);
	if (ret)
		die("open", ret);
	accel_device_query(dev, &props);

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
	fd = vaccel_open(props.id);
	if (fd < 0)
		die("raw open", fd);
	ret = bo_new(fd, 4096, 0, &ring);
	if (!ret)
		ret = vaccel_vm_bind(fd, ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA, 4096);
	if (!ret)
		ret = queue_new(fd, RING_VA, RING_N, (void *)ring.map, &rawq);
	if (ret)
		die("raw set-up", ret);

	/* Latency: alternate blocks so that drift hits both alike. */
	for (i = 0; i < 200; i++) {
		lib_roundtrip(q);
		raw_roundtrip(fd, &rawq);
	}
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < PER_ROUND; i++)
			lib[r * PER_ROUND + i] = lib_roundtrip(q);
		for (i = 0; i < PER_ROUND; i++)
			raw[r * PER_ROUND + i] = raw_roundtrip(fd, &rawq);
		for (i = 0; i < PER_ROUND; i++)
			evt[r * PER_ROUND + i] = lib_event_roundtrip(q);
	}
	bench_noise_samples(&noise, "library NOP latency", lib, ROUNDS * PER_ROUND, ROUNDS);
	bench_noise_samples(&noise, "raw NOP latency", raw, ROUNDS * PER_ROUND, ROUNDS);
	bench_noise_samples(&noise, "NOP + event latency", evt, ROUNDS * PER_ROUND, ROUNDS);
	lib_med = median(lib, ROUNDS * PER_ROUND);
	raw_med = median(raw, ROUNDS * PER_ROUND);
	evt_med = median(evt, ROUNDS * PER_ROUND);

	/* Packet rate: batched doorbells vs one per packet (median of RUNS). */
	lib_rate(rq, 64);
	for (r = 0; r < RUNS; r++) {
		runs[0][r] = lib_rate(rq, 64);
		runs[1][r] = lib_rate(rq, 1);
	}
	pps64 = bench_noise_repeats(&noise, "packets/s, 64 per doorbell", runs[0], RUNS);
	pps1 = bench_noise_repeats(&noise, "packets/s, 1 per doorbell", runs[1], RUNS);

	/* Host wake-up latency, polled vs asleep. */
	for (i = 0; i < WAITS; i++) {
		spin[i] = wake_latency(q, sig, ts, false);
		slept[i] = wake_latency(q, sig, ts, true);
	}
	bench_noise_samples(&noise, "wake-up, polling", spin, WAITS, 10);
	bench_noise_samples(&noise, "wake-up, asleep", slept, WAITS, 10);
	spin_med = median(spin, WAITS);
	sleep_med = median(slept, WAITS);

	for (r = 0; r < RUNS; r++)
		runs[2][r] = pingpong_ns();
	pp = bench_noise_repeats(&noise, "ping-pong", runs[2], RUNS);

	/* The raw queue path against the bare loop. */
	queue_path(dev, &props, &qpf);

	/* The task graph: eager and replayed tasks, the raw path, the matmul. */
	tg_tasks(dev, 0, &tgf.eager_ns, &tgf.replay_ns, &tgf.waits_chain);
	tg_tasks(dev, 1, &tgf.chain_eager_ns, &tgf.chain_replay_ns, &tgf.waits_chain);
	tgf.raw_ns = tg_raw(dev);
	tg_matmul(dev, &tgf);
	ret = tgw_pipe_measure(dev, 7, &pipe);
	if (ret)
		die("the pipeline", ret);
	bench_noise_samples(&noise, "pipeline, eager", pipe.eager_runs, pipe.runs, pipe.runs);
	bench_noise_samples(&noise, "pipeline, launch", pipe.replay_runs, pipe.runs, pipe.runs);
	bench_noise_samples(&noise, "launch of one task", pipe.fixed_runs, pipe.runs, pipe.runs);

	printf("accel-bench: device %u (vaccel%u), %u engines, %ld CPUs, libaccel %d.%d\n", index,
	       props.id, props.engines, sysconf(_SC_NPROCESSORS_ONLN), accel_version_major(),
	       accel_version_minor());
	printf("| measurement | libaccel | baseline | ratio | target |\n");
	printf("|---|---|---|---|---|\n");
	printf("| NOP submit-to-completion, engine hot, polled (median of %d) | %.2f us | raw uAPI %.2f us | %.2f | <= 1.10 |\n",
	       ROUNDS * PER_ROUND, lib_med / 1e3, raw_med / 1e3, (double)lib_med / raw_med);
	printf("| NOP + event, accel_event_wait() (median of %d) | %.2f us | raw uAPI %.2f us | %.2f | |\n",
	       ROUNDS * PER_ROUND, evt_med / 1e3, raw_med / 1e3, (double)evt_med / raw_med);
	printf("| NOP packets/s, one doorbell per 64 packets (%d packets, median of %d runs) | %.0f | one per packet %.0f | %.2f | |\n",
	       RATE_PACKETS, RUNS, pps64, pps1, pps64 / pps1);
	printf("| host wake-up after device completion, polling (median of %d) | %.2f us | asleep in accel_event_wait() %.2f us | %.2f | |\n",
	       WAITS, spin_med / 1e3, sleep_med / 1e3, (double)sleep_med / spin_med);
	printf("| polled doorbell round trip (library hot path) vs cache-line ping-pong, 2 threads | %.2f us | ping-pong %.2f us | %.2f | <= 2 |\n",
	       lib_med / 1e3, pp / 1e3, lib_med / pp);
	printf("| raw queue path, 1 packet per doorbell: get_packet, 64-byte copy, submit (%.3f KICKs per packet), host ns per packet (median of %d x %u, engines held) | %.1f ns | bare loop: copy + store-release of the doorbell %.1f ns | %.2f | <= 1.5 |\n",
	       qpf.kicks_per_packet, QP_BATCHES, QP_PACKETS, qpf.med[QP_LIB_ONE],
	       qpf.med[QP_BARE_ONE], qpf.med[QP_LIB_ONE] / qpf.med[QP_BARE_ONE]);
	printf("| the same | %.1f ns | bare loop + the protocol's full fence and need_wakeup load %.1f ns | %.2f | |\n",
	       qpf.med[QP_LIB_ONE], qpf.med[QP_FENCED_ONE],
	       qpf.med[QP_LIB_ONE] / qpf.med[QP_FENCED_ONE]);
	printf("| raw queue path, 64 packets per doorbell: 64 x (get_packet, copy), one submit | %.1f ns | bare loop, one doorbell per 64 packets %.1f ns | %.2f | <= 1.5 |\n",
	       qpf.med[QP_LIB_64], qpf.med[QP_BARE_64], qpf.med[QP_LIB_64] / qpf.med[QP_BARE_64]);
	printf("| accel_queue_submit_packets() of 64 prepared packets | %.1f ns | bare loop, one doorbell per 64 packets %.1f ns | %.2f | <= 1.5 |\n",
	       qpf.med[QP_COPY_64], qpf.med[QP_BARE_64], qpf.med[QP_COPY_64] / qpf.med[QP_BARE_64]);
	printf("| eager task, 4 tensor args (DELAY 0), host time per task (median of %d x %d) | %.2f us | raw accel_queue, same packet %.2f us | %.2f | <= 1 us natively (taskgraph-bench) |\n",
	       TG_BATCHES, TG_TASKS, tgf.eager_ns / 1e3, tgf.raw_ns / 1e3,
	       tgf.eager_ns / tgf.raw_ns);
	printf("| graph launch of %d such tasks, host time per task | %.1f ns | eager %.1f ns | %.0fx cheaper | >= 20x |\n",
	       TG_TASKS, tgf.replay_ns, tgf.eager_ns, tgf.eager_ns / tgf.replay_ns);
	printf("| the same, each task reading its predecessor's output (%llu WAITs per %d tasks on %u queues) | %.1f ns | eager %.1f ns | %.0fx cheaper | >= 20x |\n",
	       (unsigned long long)tgf.waits_chain, TG_TASKS, tgf.queues, tgf.chain_replay_ns,
	       tgf.chain_eager_ns, tgf.chain_eager_ns / tgf.chain_replay_ns);
	printf("| tiled matmul %dx%d f32, %dx%d tiles, graph launch (median of %d; eager %.3f) | %.3f GFLOP/s | host, 1 thread %.3f GFLOP/s | %.2f | |\n",
	       TGW_MM_N, TGW_MM_N, TGW_MM_T, TGW_MM_T, MM_LAUNCHES, tgf.mm_eager_gflops,
	       tgf.mm_graph_gflops, tgf.mm_host_gflops, tgf.mm_graph_gflops / tgf.mm_host_gflops);
	printf("| pipeline graph: %d tasks (MATMUL and COPY) on 4 queues, each after the one before on another queue, graph launch, host time per task (median of %u) | %.1f ns | eager %.0f ns | %.0fx cheaper | >= 20x |\n",
	       2 * TGW_PIPE_STAGES, pipe.runs, pipe.replay_task, pipe.eager_task,
	       pipe.eager_task / pipe.replay_task);
	printf("| graph launch, fixed cost: a one-task graph, host time per launch (median of %u) | %.0f ns | one eager task of the pipeline %.0f ns | %.2f | |\n",
	       pipe.runs, pipe.launch_fixed, pipe.eager_task, pipe.launch_fixed / pipe.eager_task);
	bench_noise_report(&noise, stdout);

	accel_buffer_destroy(ts);
	accel_signal_destroy(sig);
	accel_queue_destroy(rq);
	accel_queue_destroy(q);
	accel_device_close(dev);
	close(fd);
	free(lib);
	free(raw);
	free(evt);
	return 0;
}
