/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fixture of the native packet core tests: one queue over a fake
 * address space (ring, data, read-only, write-only, signal, sealed and
 * unsealed regions), and packet builders.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef CORE_FIXTURE_H
#define CORE_FIXTURE_H

#include <stdlib.h>

#include "os_native.h"
#include "kselftest_harness.h"

#define RING_VA		0x100000000ull
#define RING_N		64
#define DATA_VA		0x200000000ull
#define DATA_SIZE	(4u << 20)
#define RO_VA		0x300000000ull
#define SIG_VA		0x400000000ull
#define EXEC_VA		0x500000000ull
#define UNSEALED_VA	0x600000000ull
#define WO_VA		0x700000000ull

FIXTURE(core) {
	struct os_native os;
	struct vaccel_core_queue q;
	struct drm_vaccel_packet *ring;
	u8 *data, *ro, *exec, *unsealed;
	u64 *sig;
	u64 wi;
};

FIXTURE_SETUP(core)
{
	memset(&self->os, 0, sizeof(self->os));
	self->ring = (void *)os_add(&self->os, RING_VA, RING_N * 64, DRM_VACCEL_VM_READ,
				    false, false);
	self->data = os_add(&self->os, DATA_VA, DATA_SIZE,
			    DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE, false, false);
	self->ro = os_add(&self->os, RO_VA, 4096, DRM_VACCEL_VM_READ, false, false);
	self->sig = (void *)os_add(&self->os, SIG_VA, 4096,
				   DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE, true, false);
	self->exec = os_add(&self->os, EXEC_VA, 64 * 4096, DRM_VACCEL_VM_READ, false, true);
	self->unsealed = os_add(&self->os, UNSEALED_VA, 4096, DRM_VACCEL_VM_READ,
				false, false);
	os_add(&self->os, WO_VA, 4096, DRM_VACCEL_VM_WRITE, false, false);
	vaccel_core_queue_init(&self->q, &self->os, RING_VA, RING_N);
	self->wi = 0;
}

FIXTURE_TEARDOWN(core)
{
	EXPECT_EQ(0, self->os.order_errors);
	EXPECT_EQ(0, self->os.fpu_errors);
	EXPECT_FALSE(self->os.in_fpu);
	os_free(&self->os);
}

static inline struct drm_vaccel_packet pkt(u16 type, u64 a, u64 b, u64 c, u64 d)
{
	struct drm_vaccel_packet p = { .header = type };

	p.operand[0] = a;
	p.operand[1] = b;
	p.operand[2] = c;
	p.operand[3] = d;
	return p;
}

static inline struct drm_vaccel_packet with_completion(struct drm_vaccel_packet p, u64 addr,
						u32 op, u64 value)
{
	p.completion_addr = addr;
	p.completion_op = op;
	p.completion_value = value;
	return p;
}

#define EMIT(p)	(self->ring[self->wi++ % RING_N] = (p))
/* Run to completion (or block/fault) with a generous budget. */
#define RUN()	vaccel_core_run(&self->q, self->wi, 1u << 20)

static inline void fill_random(u8 *p, size_t n, unsigned int seed)
{
	size_t i;

	srand(seed);
	for (i = 0; i < n; i++)
		p[i] = rand();
}

static inline struct drm_vaccel_packet wait_pkt(u64 addr, u64 value, u64 mask, u64 timeout, u32 cond)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_WAIT, addr, value, mask, timeout);

	p.arg = cond;
	return p;
}

/* A sealed buffer of @n packets at EXEC_VA + @off; returns its address. */
static inline u64 exec_buf(u8 *exec, u64 off, const struct drm_vaccel_packet *p, unsigned int n)
{
	memcpy(exec + off, p, n * sizeof(*p));
	return EXEC_VA + off;
}

#endif
