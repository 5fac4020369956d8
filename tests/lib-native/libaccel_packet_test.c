// SPDX-License-Identifier: MIT
/*
 * Every accel_prep_*() builder of <accel/packet.h> against a packet built
 * by hand from the uAPI's field descriptions (uapi/drm/vaccel_accel.h).
 * Each builder starts from a garbage-filled packet, so a field it forgets
 * to clear shows.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <stdint.h>
#include <string.h>

#include <accel/packet.h>
#include "kselftest_harness.h"

static struct drm_vaccel_packet dirty(void)
{
	struct drm_vaccel_packet p;

	memset(&p, 0xa5, sizeof(p));
	return p;
}

static struct drm_vaccel_packet hand(uint16_t header, uint16_t arg, uint32_t flags, uint64_t o0,
				     uint64_t o1, uint64_t o2, uint64_t o3)
{
	struct drm_vaccel_packet p;

	memset(&p, 0, sizeof(p));
	p.header = header;
	p.arg = arg;
	p.flags = flags;
	p.operand[0] = o0;
	p.operand[1] = o1;
	p.operand[2] = o2;
	p.operand[3] = o3;
	return p;
}

#define SAME(a, b) ASSERT_EQ(0, memcmp(&(a), &(b), sizeof(a)))

TEST(layout)
{
	ASSERT_EQ(64, sizeof(struct drm_vaccel_packet));
}

TEST(nop)
{
	struct drm_vaccel_packet p = dirty(), w = hand(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0, 0, 0);

	accel_prep_nop(&p);
	SAME(p, w);
}

TEST(copy)
{
	struct drm_vaccel_packet p = dirty();
	/* COPY: operand[0] src, [1] dst, [2] bytes */
	struct drm_vaccel_packet w = hand(DRM_VACCEL_PKT_COPY, 0, 0, 0x2000, 0x1000, 4096, 0);

	accel_prep_copy(&p, 0x1000, 0x2000, 4096);
	SAME(p, w);
}

TEST(fill)
{
	struct drm_vaccel_packet p = dirty();
	/* FILL: operand[0] dst, [1] bytes, [2] pattern; arg width */
	struct drm_vaccel_packet w = hand(DRM_VACCEL_PKT_FILL, 4, 0, 0x3000, 64, 0xdeadbeef, 0);

	accel_prep_fill(&p, 0x3000, 64, 0xdeadbeef, 4);
	SAME(p, w);
}

TEST(reduce)
{
	struct drm_vaccel_packet p = dirty();
	/* REDUCE: operand[0] src0, [1] src1, [2] dst, [3] count; arg dtype | op << 8 */
	struct drm_vaccel_packet w = hand(DRM_VACCEL_PKT_REDUCE,
					  DRM_VACCEL_DTYPE_BF16 | DRM_VACCEL_REDOP_MAX << 8, 0,
					  0xa000, 0xb000, 0xc000, 77);

	accel_prep_reduce(&p, 0xc000, 0xa000, 0xb000, 77, DRM_VACCEL_DTYPE_BF16,
			  DRM_VACCEL_REDOP_MAX);
	SAME(p, w);
}

TEST(signal_packet)
{
	struct drm_vaccel_packet p = dirty();
	struct drm_vaccel_packet w = hand(DRM_VACCEL_PKT_SIGNAL, DRM_VACCEL_SIGNAL_ADD, 0,
					  0x5040, 3, 0, 0);

	accel_prep_signal(&p, 0x5040, DRM_VACCEL_SIGNAL_ADD, 3);
	SAME(p, w);
}

TEST(wait_packet)
{
	struct drm_vaccel_packet p = dirty();
	/* WAIT: operand[0] signal, [1] value, [2] mask, [3] timeout; arg cond */
	struct drm_vaccel_packet w = hand(DRM_VACCEL_PKT_WAIT, DRM_VACCEL_WAIT_NE, 0, 0x5080, 9,
					  0xff00, 1000000);

	accel_prep_wait(&p, 0x5080, DRM_VACCEL_WAIT_NE, 9, 0xff00, 1000000);
	SAME(p, w);
}

TEST(exec_and_bindings)
{
	struct drm_vaccel_packet p = dirty();
	/* EXEC: operand[0] body, [1] packets, [2] epoch, [3] table; arg bindings */
	struct drm_vaccel_packet w = hand(DRM_VACCEL_PKT_EXEC, 0, 0, 0x70000, 12, 5, 0);

	accel_prep_exec(&p, 0x70000, 12, 5);
	SAME(p, w);
	accel_prep_exec_bindings(&p, 0x80000, 3);
	w.arg = 3;
	w.operand[3] = 0x80000;
	SAME(p, w);
}

TEST(timestamp_delay)
{
	struct drm_vaccel_packet p = dirty();
	struct drm_vaccel_packet w = hand(DRM_VACCEL_PKT_TIMESTAMP, 0, 0, 0x9008, 0, 0, 0);

	accel_prep_timestamp(&p, 0x9008);
	SAME(p, w);
	p = dirty();
	w = hand(DRM_VACCEL_PKT_DELAY, 0, 0, 123456, 0, 0, 0);
	accel_prep_delay(&p, 123456);
	SAME(p, w);
}

TEST(matmul)
{
	struct drm_vaccel_packet p = dirty();
	/* MATMUL: operand[0] descriptor; arg dtype; flags */
	struct drm_vaccel_packet w = hand(DRM_VACCEL_PKT_MATMUL, DRM_VACCEL_DTYPE_F16,
					  DRM_VACCEL_MATMUL_F_ACCUMULATE, 0xd000, 0, 0, 0);

	accel_prep_matmul(&p, 0xd000, DRM_VACCEL_DTYPE_F16, DRM_VACCEL_MATMUL_F_ACCUMULATE);
	SAME(p, w);
}

TEST(completion_and_irq)
{
	struct drm_vaccel_packet p = dirty();
	struct drm_vaccel_packet w = hand(DRM_VACCEL_PKT_COPY | DRM_VACCEL_PKT_IRQ, 0, 0, 2, 1, 8,
					  0);

	w.completion_addr = 0x5000;
	w.completion_op = DRM_VACCEL_SIGNAL_MAX;
	w.completion_value = 42;
	accel_prep_copy(&p, 1, 2, 8);
	accel_prep_completion(&p, 0x5000, DRM_VACCEL_SIGNAL_MAX, 42);
	accel_prep_irq(&p);
	SAME(p, w);
}

TEST(binding_addresses)
{
	struct drm_vaccel_packet p = dirty();
	uint64_t a = DRM_VACCEL_BINDING_ADDR(2, 0x40), b = DRM_VACCEL_BINDING_ADDR(0, 0);
	struct drm_vaccel_packet w = hand(DRM_VACCEL_PKT_COPY, 0, 0, b, a, 64, 0);

	accel_prep_copy(&p, a, b, 64);
	SAME(p, w);
	ASSERT_EQ(2, DRM_VACCEL_BINDING_INDEX(p.operand[1]));
	ASSERT_EQ(0x40, DRM_VACCEL_BINDING_OFFSET(p.operand[1]));
}

TEST_HARNESS_MAIN
