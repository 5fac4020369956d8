// SPDX-License-Identifier: MIT
/*
 * taskgraph-bench: the task graph's host cost natively, without the module.
 *
 * The target, "<= 1 us of library time per task", is about the
 * library's own code on a real CPU; inside the TCG VM every instruction is
 * emulated, so accel-bench's figures there cannot judge it. This program
 * links the whole library with the fake kernel backend of
 * tests/lib-native/fake_kmod.h in its complete-all mode (every packet
 * completes at once, only its completion action applied; WAITs count as
 * satisfied; EXEC bodies are walked for their signals), with a thread
 * running the fake's engine step on the other CPU. So the device costs
 * (almost) nothing and what is timed is the library: accel_tg_submit()
 * and accel_graph_launch(), nothing else.
 *
 * The engine is held while a batch is submitted and runs it afterwards
 * (the sync is not timed): every dependency is then on a task still in
 * flight, as with a device that is behind, so each one is found, kept in
 * the TensorMap and turned into a WAIT when it crosses queues. (With the
 * engine running, a fast fake completes many predecessors before the next
 * task is declared, and those cost nothing.)
 *
 * Measured, each against its baseline in the same run (the workloads of
 * tools/taskgraph_work.h, TASKS tasks of 4 tensor arguments per batch,
 * the median of BATCHES batches after one unmeasured):
 *   eager tasks, independent (no dependency), host ns per task, vs the
 *       raw accel_queue path writing the same packets (one DELAY with a
 *       completion action per task, one doorbell each);
 *   eager tasks each reading its predecessor's output (one RAW dependency
 *       each, on another queue: one WAIT), vs the raw path with as many
 *       WAITs per task as the library wrote;
 *   a graph of the same TASKS tasks launched: host ns per task of
 *       accel_graph_launch(), vs eager (target: 20 times cheaper).
 * The packets per task the fake's engine ran are printed too, so the
 * baseline's packet count can be checked against the library's.
 *
 * Then the raw queue path itself (queue_path_rows()): the library's host
 * ns per packet against a bare loop that copies a 64-byte packet into a
 * ring slot and store-releases the doorbell (the floor of user-mode
 * submission: into a ring that another CPU reads after each batch, as the
 * engine reads the queue's; the loop into a ring nobody reads is printed
 * too), measured in the same run, this thread and the engine pinned to
 * two CPUs:
 *   one packet per doorbell: accel_queue_get_packet(), a 64-byte copy,
 *       accel_queue_submit(); against the bare loop, against the bare
 *       loop plus what the doorbell protocol adds to it (a full fence and
 *       the need_wakeup load), and against itself on the same queue with
 *       the submitter's full fence kept (the fake's engine could take it
 *       on itself: lib/membarrier.c);
 *   64 packets per doorbell: 64 x (get_packet, copy), one submit;
 *   accel_queue_submit_packets() of 64 prepared packets;
 * the last two against the bare loop storing the doorbell once per 64.
 * Each round runs the ways in its own random order (qp_order()).
 *
 * Usage: taskgraph-bench [QUEUES]   (queues of the task graph, default 4)
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <sched.h>
#include <stdlib.h>

#include "../tests/lib-native/fake_kmod.h"
#include "queue_path_work.h"
#include "taskgraph_work.h"
#include "bench_noise.h"

#define TASKS		1000
#define BATCHES		50

static struct bench_noise noise;

/* fake_kmod.h hides its bookkeeping from ThreadSanitizer; not built with it here. */
void AnnotateIgnoreSyncBegin(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreSyncEnd(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreReadsBegin(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreReadsEnd(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreWritesBegin(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreWritesEnd(const char *file, int line) { (void)file; (void)line; }
void AnnotateNewMemory(const char *file, int line, const volatile void *mem, size_t size)
{
	(void)file;
	(void)line;
	(void)mem;
	(void)size;
}

static int stop_engine, engine_paused;
static pthread_t eng;	/* the thread running the fake's engine */

/* The backend's calls ("syscalls"), counted: the usual path should make none. */
static uint64_t calls;

static int count_ioctl(int fd, unsigned long req, void *arg)
{
	__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
	return f_ioctl(fd, req, arg);
}

static void *count_mmap(int fd, uint64_t offset, size_t len, int prot, int *err)
{
	__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
	return f_mmap(fd, offset, len, prot, err);
}

static int count_munmap(void *addr, size_t len)
{
	__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
	return f_munmap(addr, len);
}

static struct tp_ops counted_ops;

static void *engine(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_engine, __ATOMIC_RELAXED)) {
		if (__atomic_load_n(&engine_paused, __ATOMIC_ACQUIRE))
			nanosleep(&(struct timespec){ 0, 50000 }, NULL);	/* leave the CPU */
		else if (!fake_engine_step(256))
			sched_yield();
	}
	return NULL;
}

/* Hold the engine while a batch is submitted (see the top of the file). */
static void pause_engine(int on)
{
	__atomic_store_n(&engine_paused, on, __ATOMIC_RELEASE);
}

static void die(const char *what, int err)
{
	fprintf(stderr, "taskgraph-bench: %s: %s\n", what, accel_strerror(err));
	exit(1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median_per_task(uint64_t *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return (double)v[n / 2] / TASKS;
}

struct figures {
	double eager, replay, raw;
	double packets_per_task, waits_per_task, calls_per_task, launch_calls;
	uint64_t deps, same_queue;
};

static uint64_t packets_run(void)
{
	return __atomic_load_n(&fake_packets_run, __ATOMIC_RELAXED);
}

enum work { EAGER, REPLAY, RAW };

struct run {
	struct accel_tg *tg;
	struct accel_buffer *buf;
	struct accel_graph_exec *ge;
	struct accel_queue *q;
	struct accel_signal *sig;
	int chain;
	unsigned int waits;
};

/*
 * One batch of @w with the engine held, so that every dependency is still
 * in flight when the library looks it up: the library's host ns into *ns,
 * the backend calls it made into *made; then the engine runs it all.
 */
static void held_batch(enum work w, const struct run *r, uint64_t *ns, uint64_t *made)
{
	static const char *const what[] = { "eager tasks", "graph launch", "raw path" };
	uint64_t c0;
	int ret;

	pause_engine(1);
	c0 = __atomic_load_n(&calls, __ATOMIC_RELAXED);
	ret = w == EAGER ? tgw_eager(r->tg, r->buf, TASKS, r->chain, ns) :
	      w == REPLAY ? tgw_replay(r->ge, 1, ns) : tgw_raw(r->q, r->sig, TASKS, r->waits, ns);
	*made = __atomic_load_n(&calls, __ATOMIC_RELAXED) - c0;
	pause_engine(0);
	if (!ret)
		ret = w == RAW ? accel_queue_sync(r->q, TGW_TIMEOUT) : accel_tg_sync(r->tg, TGW_TIMEOUT);
	if (ret)
		die(what[w], ret);
}

/*
 * A warm-up batch, @after_warmup (if not NULL), then BATCHES measured
 * ones: their ns into @ns; returns the backend calls they made.
 */
static uint64_t batches(enum work w, const struct run *r, uint64_t *ns,
			void (*after_warmup)(void *), void *arg)
{
	uint64_t sum = 0, c, x;
	unsigned int b;

	held_batch(w, r, &x, &c);
	if (after_warmup)
		after_warmup(arg);
	for (b = 0; b < BATCHES; b++) {
		held_batch(w, r, &ns[b], &c);
		sum += c;
	}
	return sum;
}

struct mark {
	struct accel_tg *tg;
	struct accel_tg_stats st;
	uint64_t packets;
};

static void take_mark(void *arg)
{
	struct mark *m = arg;

	m->st.size = sizeof(m->st);
	accel_tg_get_stats(m->tg, &m->st);
	m->packets = packets_run();
}

/* Eager and replayed batches of the workload; then its raw baseline. */
static void measure(struct accel_device *dev, unsigned int queues, int chain, struct figures *f)
{
	struct accel_tg_params params = {
		.size = sizeof(params), .queues_per_device = queues, .ring_size = 4096,
	};
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 4096 };
	uint64_t e[BATCHES], r[BATCHES], w[BATCHES], made;
	struct run run = { .chain = chain };
	struct accel_tg_stats st1;
	struct accel_graph *g;
	struct mark m0;
	int ret;

	ret = accel_tg_create(&dev, 1, &params, &run.tg);
	if (!ret)
		ret = tgw_buffer(dev, TASKS, &run.buf);
	if (ret)
		die("task graph set-up", ret);
	m0.tg = run.tg;
	made = batches(EAGER, &run, e, take_mark, &m0);
	st1.size = sizeof(st1);
	accel_tg_get_stats(run.tg, &st1);
	bench_noise_samples(&noise, chain ? "eager, chained" : "eager, independent", e, BATCHES,
			    BATCHES);
	f->eager = median_per_task(e, BATCHES);
	f->calls_per_task = (double)made / (BATCHES * TASKS);
	f->packets_per_task = (double)(packets_run() - m0.packets) / (BATCHES * TASKS);
	f->waits_per_task = (double)(st1.waits - m0.st.waits) / (BATCHES * TASKS);
	f->deps = st1.deps[0] + st1.deps[1] + st1.deps[2] - m0.st.deps[0] - m0.st.deps[1] -
		  m0.st.deps[2];
	f->same_queue = st1.deps_same_queue - m0.st.deps_same_queue;

	ret = tgw_capture(run.tg, run.buf, TASKS, chain, &g, &run.ge);
	if (ret)
		die("capture", ret);
	made = batches(REPLAY, &run, r, NULL, NULL);
	bench_noise_samples(&noise, chain ? "graph launch, chained" : "graph launch, independent", r,
			    BATCHES, BATCHES);
	f->replay = median_per_task(r, BATCHES);
	f->launch_calls = (double)made / BATCHES;
	accel_graph_exec_destroy(run.ge);
	accel_graph_destroy(g);
	accel_tg_destroy(run.tg);
	accel_buffer_destroy(run.buf);

	/* The raw path: as many WAITs per task as the library wrote, rounded. */
	run.waits = (unsigned int)(f->waits_per_task + 0.5);
	ret = accel_queue_create(dev, &qp, &run.q);
	if (!ret)
		ret = accel_signal_create(dev, &run.sig);
	if (ret)
		die("raw queue set-up", ret);
	batches(RAW, &run, w, NULL, NULL);
	bench_noise_samples(&noise, chain ? "raw path, chained" : "raw path, independent", w, BATCHES,
			    BATCHES);
	f->raw = median_per_task(w, BATCHES);
	accel_signal_destroy(run.sig);
	accel_queue_destroy(run.q);
}

/* ---- the raw queue path against the bare loop (tools/queue_path_work.h) ---- */

#define QP_BATCHES	51

/* One timed batch of @way, engine (or reader) held: host ns per packet into @ns. */
static void qp_batch(enum qp_way way, struct accel_queue *q, struct qp_bare_rings *br, double *ns)
{
	uint64_t t0;
	int ret = 0;

	/* every way with the engine held: the fenced loops load need_wakeup from its page */
	if (qp_is_lib(way))
		qp_fence_for(way, q);
	pause_engine(1);
	t0 = tgw_now();
	if (qp_is_lib(way))
		ret = qp_lib(way, q, br->pkts, QP_PACKETS);
	else
		qp_bare_batch(br, way, &q->ctrl->need_wakeup);
	*ns = (double)(tgw_now() - t0) / QP_PACKETS;
	if (ret)
		die("raw queue path", ret);
	pause_engine(0);
	ret = qp_is_lib(way) ? accel_queue_sync(q, TGW_TIMEOUT) : qp_bare_after(br, way);
	if (ret)
		die("raw queue path: after a batch", ret);
}

/* The rows of the raw queue path (see the top of the file). */
static void queue_path_rows(struct accel_device *dev)
{
	static double ns[QP_N][QP_BATCHES];
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = QP_RING };
	static struct qp_bare_rings br;
	struct qp_pin pin;
	uint64_t c0, calls_lib;
	double med[QP_N], x;
	struct accel_queue *q;
	enum qp_way order[QP_N];
	const char *fence;
	unsigned int b, k, w;
	int ret;

	qp_pin_begin(&pin);
	qp_pin_other(&pin, eng);	/* the queue's reader on the bare ring's reader's CPU */
	ret = accel_queue_create(dev, &qp, &q);
	if (!ret)
		ret = qp_bare_rings_create(dev, &br, &pin);
	if (ret)
		die("raw queue path set-up", ret);
	/*
	 * one unmeasured round, then the ways round after round, each round
	 * in its own random order: a batch runs in the state of the caches
	 * its predecessor left (a library batch after a library batch ran at
	 * half speed), so no way may always follow the same one
	 */
	for (w = 0; w < QP_N; w++)
		qp_batch(w, q, &br, &x);
	c0 = __atomic_load_n(&calls, __ATOMIC_RELAXED);
	for (b = 0; b < QP_BATCHES; b++) {
		qp_order(order, b);
		for (k = 0; k < QP_N; k++)
			qp_batch(order[k], q, &br, &ns[order[k]][b]);
	}
	/* backend calls ("syscalls") of all of it: the syncs' waits only */
	calls_lib = __atomic_load_n(&calls, __ATOMIC_RELAXED) - c0;
	qp_bare_rings_destroy(&br);
	qp_pin_end(&pin, &eng);
	qp_fence_for(QP_LIB_ONE, q);
	fence = acc_queue_light_fence(q) ? "the engine fences for it: membarrier()" :
					   "a full fence after the doorbell";
	for (w = 0; w < QP_N; w++)
		med[w] = bench_noise_repeats(&noise, qp_way_name(w), ns[w], QP_BATCHES);
	printf("| raw queue path, 1 packet per doorbell: accel_queue_get_packet, 64-byte copy, accel_queue_submit (%s); host ns per packet (median of %d x %d) | %.2f ns | bare loop: copy + store-release of the doorbell, ring read by another CPU %.2f ns | %.2f | <= 1.5 |\n",
	       fence, QP_BATCHES, QP_PACKETS, med[QP_LIB_ONE], med[QP_BARE_ONE],
	       med[QP_LIB_ONE] / med[QP_BARE_ONE]);
	printf("| the same | %.2f ns | bare loop + the protocol's full fence and need_wakeup load, ring read by another CPU %.2f ns | %.2f | |\n",
	       med[QP_LIB_ONE], med[QP_FENCED_ONE], med[QP_LIB_ONE] / med[QP_FENCED_ONE]);
	printf("| the same | %.2f ns | bare loop + fence, ring no other CPU reads %.2f ns | %.2f | |\n",
	       med[QP_LIB_ONE], med[QP_PRIV_FENCED_ONE], med[QP_LIB_ONE] / med[QP_PRIV_FENCED_ONE]);
	printf("| the same | %.2f ns | bare loop, ring no other CPU reads %.2f ns | %.2f | |\n",
	       med[QP_LIB_ONE], med[QP_PRIV_ONE], med[QP_LIB_ONE] / med[QP_PRIV_ONE]);
	printf("| the same | %.2f ns | the library keeping the submitter's full fence (as before lib/membarrier.c) %.2f ns | %.2f | |\n",
	       med[QP_LIB_ONE], med[QP_LIB_ONE_FULL], med[QP_LIB_ONE] / med[QP_LIB_ONE_FULL]);
	printf("| raw queue path, 64 packets per doorbell: 64 x (get_packet, copy), one submit | %.2f ns | bare loop, one doorbell per 64 packets, ring read by another CPU %.2f ns | %.2f | <= 1.5 |\n",
	       med[QP_LIB_64], med[QP_BARE_64], med[QP_LIB_64] / med[QP_BARE_64]);
	printf("| accel_queue_submit_packets() of 64 prepared packets (%.4f backend calls per packet, syncs included) | %.2f ns | bare loop, one doorbell per 64 packets, ring read by another CPU %.2f ns | %.2f | <= 1.5 |\n",
	       (double)calls_lib / (QP_BATCHES * 4.0 * QP_PACKETS), med[QP_COPY_64],
	       med[QP_BARE_64], med[QP_COPY_64] / med[QP_BARE_64]);
	printf("| the same | %.2f ns | bare loop, one doorbell per 64 packets, ring no other CPU reads %.2f ns | %.2f | |\n",
	       med[QP_COPY_64], med[QP_PRIV_64], med[QP_COPY_64] / med[QP_PRIV_64]);
	accel_queue_destroy(q);
}

int main(int argc, char **argv)
{
	unsigned int queues = argc > 1 ? (unsigned int)atoi(argv[1]) : 4;
	struct tgw_pipe_figures pipe;
	struct figures ind, chn;
	struct accel_device *dev;
	int ret;

	fake_complete_all = true;
	if (pthread_create(&eng, NULL, engine, NULL))
		die("pthread_create", -EAGAIN);
	counted_ops = fake_ops;
	counted_ops.ioctl = count_ioctl;
	counted_ops.ioctl_once = count_ioctl;
	counted_ops.mmap = count_mmap;
	counted_ops.munmap = count_munmap;
	ret = acc_device_open_ops(&counted_ops, "fake", &dev);
	if (ret)
		die("open the fake device", ret);

	measure(dev, queues, 0, &ind);
	measure(dev, queues, 1, &chn);
	ret = tgw_pipe_measure(dev, 9, &pipe);
	if (ret)
		die("the pipeline", ret);
	bench_noise_samples(&noise, "pipeline, eager", pipe.eager_runs, pipe.runs, pipe.runs);
	bench_noise_samples(&noise, "pipeline, launch", pipe.replay_runs, pipe.runs, pipe.runs);
	bench_noise_samples(&noise, "launch of one task", pipe.fixed_runs, pipe.runs, pipe.runs);
	bench_noise_samples(&noise, "pipeline, launches back to back", pipe.b2b_runs, pipe.runs,
			    pipe.runs);

	printf("taskgraph-bench: native, fake kernel (every packet completes at once), %u queues, %ld CPUs, libaccel %d.%d\n",
	       queues, sysconf(_SC_NPROCESSORS_ONLN), accel_version_major(),
	       accel_version_minor());
	printf("| measurement | libaccel | baseline | ratio | target |\n");
	printf("|---|---|---|---|---|\n");
	printf("| eager task, 4 tensor args, independent (%.2f packets, %.3f backend calls per task), host ns per task (median of %d x %d) | %.0f ns | raw accel_queue, same packets %.0f ns | %.2f | <= 2 |\n",
	       ind.packets_per_task, ind.calls_per_task, BATCHES, TASKS, ind.eager, ind.raw,
	       ind.eager / ind.raw);
	printf("| eager task, 4 tensor args, reading its predecessor's output (%.2f deps, %.2f on the same queue, %.2f WAITs, %.2f packets, %.3f backend calls per task) | %.0f ns | raw accel_queue, same packets %.0f ns | %.2f | <= 2.5 |\n",
	       (double)chn.deps / (BATCHES * TASKS), (double)chn.same_queue / (BATCHES * TASKS),
	       chn.waits_per_task, chn.packets_per_task, chn.calls_per_task, chn.eager, chn.raw,
	       chn.eager / chn.raw);
	printf("| graph launch of %d independent tasks (%.1f backend calls per launch), host ns per task | %.1f ns | eager %.0f ns | %.0fx cheaper | >= 20x |\n",
	       TASKS, ind.launch_calls, ind.replay, ind.eager, ind.eager / ind.replay);
	printf("| graph launch of %d chained tasks (%.1f backend calls per launch), host ns per task | %.1f ns | eager %.0f ns | %.0fx cheaper | >= 20x |\n",
	       TASKS, chn.launch_calls, chn.replay, chn.eager, chn.eager / chn.replay);
	printf("| pipeline graph: %d tasks (MATMUL and COPY) on 4 queues, each after the one before on another queue, graph launch, host ns per task (median of %u) | %.1f ns | eager %.0f ns | %.0fx cheaper | >= 20x |\n",
	       2 * TGW_PIPE_STAGES, pipe.runs, pipe.replay_task, pipe.eager_task,
	       pipe.eager_task / pipe.replay_task);
	printf("| the same, launches back to back, one sync after the last (median of %u) | %.1f ns | eager %.0f ns | %.0fx cheaper | |\n",
	       pipe.runs, pipe.b2b_task, pipe.eager_task, pipe.eager_task / pipe.b2b_task);
	printf("| graph launch, fixed cost: a one-task graph, host ns per launch (median of %u) | %.0f ns | one eager task of the pipeline %.0f ns | %.2f | |\n",
	       pipe.runs, pipe.launch_fixed, pipe.eager_task, pipe.launch_fixed / pipe.eager_task);
	queue_path_rows(dev);
	bench_noise_report(&noise, stdout);

	accel_device_close(dev);
	__atomic_store_n(&stop_engine, 1, __ATOMIC_RELAXED);
	pthread_join(eng, NULL);
	return 0;
}
