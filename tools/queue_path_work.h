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
 *   qp_lib()    the library: one packet per doorbell (get_packet, copy,
 *               submit), 64 per doorbell (64 x get_packet and copy, one
 *               submit), or accel_queue_submit_packets() of 64 packets
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

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

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
	QP_N,
};

static inline int qp_is_lib(enum qp_way w)
{
	return w == QP_LIB_ONE || w == QP_LIB_64 || w == QP_COPY_64;
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

#endif /* QUEUE_PATH_WORK_H */
