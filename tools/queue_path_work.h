/* SPDX-License-Identifier: MIT */
/*
 * The raw queue path against the floor of user-mode submission, shared by
 * taskgraph-bench (natively, over the fake kernel) and accel-bench (against
 * the module in the VM, or the in-process device natively), so that both
 * measure the same loops:
 *
 *   qp_bare()   the floor: copy 64-byte packet i into ring slot i and
 *               store-release the doorbell, every @batch packets; with
 *               @nw also what the doorbell protocol adds to each doorbell
 *               (a full fence and a load of need_wakeup)
 *   qp_reader   another thread that reads the bare loop's ring after each
 *               batch, as the engine reads the queue's ring after each
 *               library batch: the bare loop's slots were last read by
 *               another CPU, as every device ring's are, and writing them
 *               costs the same cache-line transfers as the library's
 *               stores pay. The bare loop into a ring no other CPU reads
 *               (its lines stay in this CPU's cache) is timed too; it is
 *               not a floor that a ring a device consumes can reach.
 *   qp_lib()    the library: one packet per doorbell (get_packet, copy,
 *               submit), 64 per doorbell (64 x get_packet and copy, one
 *               submit), or accel_queue_submit_packets() of 64 packets;
 *               one packet per doorbell also with the submitter's full
 *               fence kept where the backend's engines would take it on
 *               themselves (lib/membarrier.c): the library before that
 *               change, timed on the same queue in the same run
 *
 * Every loop copies packet i from an array of 64 prepared ones
 * (qp_packets()), a load from memory each time in every loop. The caller holds the engine while
 * it times a library loop (the ring must have room for @n packets and
 * their progress marks) and lets it drain the ring afterwards.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef QUEUE_PATH_WORK_H
#define QUEUE_PATH_WORK_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <accel/accel.h>

#define QP_RING		4096u	/* ring slots of the queue and of the bare loop */
#define QP_PACKETS	3000u	/* per timed batch: fits the ring with its marks */

enum qp_way {
	QP_LIB_ONE,		/* library, one packet per doorbell */
	QP_BARE_ONE,		/* bare loop, one packet per doorbell */
	QP_FENCED_ONE,		/* the same + full fence + need_wakeup load */
	QP_LIB_64,		/* library, 64 x get_packet, one submit */
	QP_BARE_64,		/* bare loop, one doorbell per 64 packets */
	QP_COPY_64,		/* accel_queue_submit_packets() of 64 */
	QP_PRIV_ONE,		/* QP_BARE_ONE into a ring no other CPU reads */
	QP_PRIV_FENCED_ONE,	/* QP_FENCED_ONE into that ring */
	QP_PRIV_64,		/* QP_BARE_64 into that ring */
	QP_LIB_ONE_FULL,	/* QP_LIB_ONE keeping the submitter's full fence */
	QP_N,
};

/*
 * The CPUs of the measurement: the submitting thread stays on the CPU it
 * runs on (@cpu), the reader (and, where the bench runs it, the engine)
 * on another (@other), so that the rings' lines really move between two
 * CPUs in every batch; with both threads on one CPU the bare ring would
 * never leave its cache. Without two CPUs to choose from, nothing is
 * pinned (@on false).
 */
struct qp_pin {
	cpu_set_t saved;	/* the caller's affinity before */
	int cpu, other;
	bool on;
};

static inline void qp_pin_begin(struct qp_pin *p)
{
	cpu_set_t one;
	int c;

	p->on = false;
	if (sched_getaffinity(0, sizeof(p->saved), &p->saved) || CPU_COUNT(&p->saved) < 2)
		return;
	p->cpu = sched_getcpu();
	if (p->cpu < 0 || !CPU_ISSET(p->cpu, &p->saved))
		return;
	for (c = 0; c < CPU_SETSIZE; c++)
		if (c != p->cpu && CPU_ISSET(c, &p->saved))
			break;
	p->other = c;
	CPU_ZERO(&one);
	CPU_SET(p->cpu, &one);
	p->on = !sched_setaffinity(0, sizeof(one), &one);
}

/* Pin @t to the other CPU (no-op if the caller is not pinned). */
static inline void qp_pin_other(const struct qp_pin *p, pthread_t t)
{
	cpu_set_t one;

	if (!p->on)
		return;
	CPU_ZERO(&one);
	CPU_SET(p->other, &one);
	pthread_setaffinity_np(t, sizeof(one), &one);
}

/* Give the caller and @t (0: none) back the caller's old affinity. */
static inline void qp_pin_end(const struct qp_pin *p, const pthread_t *t)
{
	if (!p->on)
		return;
	if (t)
		pthread_setaffinity_np(*t, sizeof(p->saved), &p->saved);
	sched_setaffinity(0, sizeof(p->saved), &p->saved);
}

/* The bare loop's ring and what reads it (see the top of the file). */
struct qp_reader {
	const struct drm_vaccel_packet *ring;	/* QP_RING slots */
	_Atomic uint64_t want;		/* read the slots up to here */
	_Atomic uint64_t done;		/* slots read so far */
	_Atomic int stop;
	volatile uint64_t sink;		/* what it read, so that the loads stay */
	pthread_t thread;
};

static void *qp_reader_main(void *arg)
{
	struct qp_reader *r = arg;
	uint64_t i, end, sum = 0;
	unsigned int w;

	while (!atomic_load_explicit(&r->stop, memory_order_acquire)) {
		/* acquire: pairs with qp_reader_read()'s release, after the batch */
		end = atomic_load_explicit(&r->want, memory_order_acquire);
		i = atomic_load_explicit(&r->done, memory_order_relaxed);
		if (i == end) {
			nanosleep(&(struct timespec){ 0, 20000 }, NULL);
			continue;
		}
		for (; i < end; i++)	/* the whole packet, as an engine copies it */
			for (w = 0; w < 8; w++)
				sum += ((const volatile uint64_t *)&r->ring[i & (QP_RING - 1)])[w];
		r->sink = sum;
		atomic_store_explicit(&r->done, end, memory_order_release);
	}
	return NULL;
}

/* Start the reader of @ring on @pin's other CPU; 0 or -errno. */
static inline int qp_reader_start(struct qp_reader *r, const struct drm_vaccel_packet *ring,
				  const struct qp_pin *pin)
{
	int ret;

	r->ring = ring;
	atomic_init(&r->want, 0);
	atomic_init(&r->done, 0);
	atomic_init(&r->stop, 0);
	ret = pthread_create(&r->thread, NULL, qp_reader_main, r);
	if (!ret)
		qp_pin_other(pin, r->thread);
	return -ret;
}

/*
 * Have the reader read every slot before @end (untimed, between batches);
 * 0, or -ETIMEDOUT after 10 s.
 */
static inline int qp_reader_read(struct qp_reader *r, uint64_t end)
{
	struct timespec t0, t;

	/* release: the batch's packets are in the ring */
	atomic_store_explicit(&r->want, end, memory_order_release);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (atomic_load_explicit(&r->done, memory_order_acquire) < end) {
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10)
			return -ETIMEDOUT;
	}
	return 0;
}

static inline void qp_reader_stop(struct qp_reader *r)
{
	atomic_store_explicit(&r->stop, 1, memory_order_release);
	pthread_join(r->thread, NULL);
}

static inline int qp_is_lib(enum qp_way w)
{
	return w == QP_LIB_ONE || w == QP_LIB_64 || w == QP_COPY_64 || w == QP_LIB_ONE_FULL;
}

/*
 * The library's test hooks (hidden, lib/queue.c; these programs link
 * libaccel statically): whether a queue's submits skip the fence where
 * the backend's engines take it on themselves (lib/membarrier.c), and a
 * switch that makes a queue keep it, so that both are timed on the same
 * queue in one run.
 */
bool acc_queue_light_fence(const struct accel_queue *q);
void acc_test_queue_full_fence(struct accel_queue *q, bool full);

/* Before a library batch of @w on @q: the fence it times. */
static inline void qp_fence_for(enum qp_way w, struct accel_queue *q)
{
	acc_test_queue_full_fence(q, w == QP_LIB_ONE_FULL);
}

/*
 * The order of the ways in round @round: a permutation drawn from a
 * fixed seed (the same in every run), so that each way follows each other
 * way about as often (a batch runs in the state of the caches and of the
 * engine that the batch before it left).
 */
static inline void qp_order(enum qp_way order[QP_N], unsigned int round)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (round + 1);
	unsigned int i, j;

	for (i = 0; i < QP_N; i++)
		order[i] = (enum qp_way)i;
	for (i = QP_N - 1; i > 0; i--) {
		enum qp_way t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = (unsigned int)(x % (i + 1));
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
}

/* A way's name for the noise line (bench_noise.h). */
static inline const char *qp_way_name(enum qp_way w)
{
	static const char *const names[QP_N] = {
		[QP_LIB_ONE] = "raw path, 1 per doorbell",
		[QP_BARE_ONE] = "bare loop, 1 per doorbell",
		[QP_FENCED_ONE] = "bare loop, fenced",
		[QP_LIB_64] = "raw path, 64 per doorbell",
		[QP_BARE_64] = "bare loop, 64 per doorbell",
		[QP_COPY_64] = "submit_packets of 64",
		[QP_PRIV_ONE] = "bare loop, unread ring",
		[QP_PRIV_FENCED_ONE] = "bare loop, fenced, unread ring",
		[QP_PRIV_64] = "bare loop, 64 per doorbell, unread ring",
		[QP_LIB_ONE_FULL] = "raw path, 1 per doorbell, full fence",
	};

	return names[w];
}

static inline int qp_is_private(enum qp_way w)
{
	return w == QP_PRIV_ONE || w == QP_PRIV_FENCED_ONE || w == QP_PRIV_64;
}

/* A bare way's packets per doorbell. */
static inline unsigned int qp_batch_of(enum qp_way w)
{
	return w == QP_BARE_64 || w == QP_PRIV_64 ? 64 : 1;
}

static inline int qp_is_fenced(enum qp_way w)
{
	return w == QP_FENCED_ONE || w == QP_PRIV_FENCED_ONE;
}

/* 64 NOPs to copy from (a NOP with non-zero operands is a bad packet). */
static inline void qp_packets(struct drm_vaccel_packet pkts[64])
{
	unsigned int i;

	for (i = 0; i < 64; i++)
		accel_prep_nop(&pkts[i]);
}

static __attribute__((noinline)) void qp_bare(struct drm_vaccel_packet *ring, uint64_t *db,
					      const struct drm_vaccel_packet *pkts, uint64_t start,
					      unsigned int n, unsigned int batch,
					      const volatile uint32_t *nw)
{
	uint64_t i = start, end = start + n, stop;

	while (i < end) {
		stop = end - i < batch ? end : i + batch;
		for (; i < stop; i++)
			ring[i & (QP_RING - 1)] = pkts[i & 63];
		atomic_store_explicit((volatile _Atomic uint64_t *)db, i, memory_order_release);
		if (nw) {
			atomic_thread_fence(memory_order_seq_cst);
			if (atomic_load_explicit((volatile _Atomic uint32_t *)nw,
						 memory_order_relaxed))
				__asm__ __volatile__("" ::: "memory");	/* a KICK would go here */
		}
	}
}

/* A library loop of @n packets; 0 or -errno. */
static inline int qp_lib(enum qp_way way, struct accel_queue *q,
			 const struct drm_vaccel_packet *pkts, unsigned int n)
{
	struct drm_vaccel_packet *p;
	unsigned int i;
	int ret = 0;

	switch (way) {
	case QP_LIB_ONE:
	case QP_LIB_ONE_FULL:
		for (i = 0; i < n && ret >= 0; i++) {
			p = accel_queue_get_packet(q);
			if (!p)
				return -EAGAIN;
			*p = pkts[i & 63];
			ret = accel_queue_submit(q);
		}
		break;
	case QP_LIB_64:
		for (i = 0; i < n && ret >= 0; i++) {
			p = accel_queue_get_packet(q);
			if (!p)
				return -EAGAIN;
			*p = pkts[i & 63];
			if (i % 64 == 63 || i == n - 1)
				ret = accel_queue_submit(q);
		}
		break;
	case QP_COPY_64:
		for (i = 0; i < n && !ret; i += 64)
			ret = accel_queue_submit_packets(q, pkts, n - i < 64 ? n - i : 64,
							 ACCEL_FOREVER, NULL);
		break;
	default:
		return -EINVAL;
	}
	return ret < 0 ? ret : 0;
}

/*
 * The bare loops' rings and doorbells, in buffers of @dev of the same kind
 * of memory as a queue's: @ring is read by @reader after each batch,
 * @priv by nobody (see the top of the file).
 */
struct qp_bare_rings {
	struct drm_vaccel_packet pkts[64];	/* what every loop copies (qp_packets()) */
	struct accel_buffer *bufs[4];		/* ring, doorbell, priv, priv's doorbell */
	struct drm_vaccel_packet *ring, *priv;
	uint64_t *db, *priv_db;
	uint64_t start, priv_start;		/* the next packet index of each */
	struct qp_reader reader;
};

/* Set up @br and start its reader on @pin's other CPU; 0 or -errno. */
static inline int qp_bare_rings_create(struct accel_device *dev, struct qp_bare_rings *br,
				       const struct qp_pin *pin)
{
	const uint64_t size[4] = { QP_RING * sizeof(struct drm_vaccel_packet), 4096,
				   QP_RING * sizeof(struct drm_vaccel_packet), 4096 };
	unsigned int i;
	int ret = 0;

	memset(br, 0, sizeof(*br));
	for (i = 0; i < 4 && !ret; i++)
		ret = accel_buffer_create(dev, size[i], ACCEL_BUFFER_HOST, &br->bufs[i]);
	if (!ret)
		ret = qp_reader_start(&br->reader, accel_buffer_host(br->bufs[0]), pin);
	if (ret) {
		while (i--)
			accel_buffer_destroy(br->bufs[i]);
		return ret;
	}
	br->ring = accel_buffer_host(br->bufs[0]);
	br->db = accel_buffer_host(br->bufs[1]);
	br->priv = accel_buffer_host(br->bufs[2]);
	br->priv_db = accel_buffer_host(br->bufs[3]);
	qp_packets(br->pkts);
	return 0;
}

static inline void qp_bare_rings_destroy(struct qp_bare_rings *br)
{
	unsigned int i;

	qp_reader_stop(&br->reader);
	for (i = 0; i < 4; i++)
		accel_buffer_destroy(br->bufs[i]);
}

/*
 * One timed batch of the bare way @way into its ring; @nw is the
 * need_wakeup word the fenced ways load (NULL: the word beside the ring's
 * doorbell, on a cache line of its own).
 */
static inline void qp_bare_batch(struct qp_bare_rings *br, enum qp_way way,
				 const volatile uint32_t *nw)
{
	int priv = qp_is_private(way);
	uint64_t *db = priv ? br->priv_db : br->db, *start = priv ? &br->priv_start : &br->start;

	if (!nw)
		nw = (const volatile uint32_t *)(db + 8);
	qp_bare(priv ? br->priv : br->ring, db, br->pkts, *start, QP_PACKETS, qp_batch_of(way),
		qp_is_fenced(way) ? nw : NULL);
	*start += QP_PACKETS;
}

/* After a bare batch (untimed): the reader reads what it wrote; 0 or -errno. */
static inline int qp_bare_after(struct qp_bare_rings *br, enum qp_way way)
{
	return qp_is_private(way) ? 0 : qp_reader_read(&br->reader, br->start);
}

#endif /* QUEUE_PATH_WORK_H */
