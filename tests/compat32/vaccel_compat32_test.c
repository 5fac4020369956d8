// SPDX-License-Identifier: GPL-2.0-only
/*
 * A 32-bit process (built with -m32, run on the 64-bit kernel through the
 * compat ioctl path) uses a device end to end: the structure layouts are
 * the same in both ABIs, and buffer and queue page offsets fit the 32-bit
 * mmap2() page offset (queue pages are below 4 GiB since uAPI 3; at 2^48
 * they could not be mapped from 32-bit code at all).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <assert.h>

#include "../kselftest/vaccel_common.h"
#include "../kselftest/vaccel_queue_util.h"
#include "kselftest_harness.h"

/* The same sizes as in the 64-bit ABI (tests/host/uapi_test.c) */
static_assert(sizeof(void *) == 4, "built as 32-bit code");
static_assert(sizeof(struct drm_vaccel_get_param) == 16, "get_param");
static_assert(sizeof(struct drm_vaccel_bo_create) == 24, "bo_create");
static_assert(sizeof(struct drm_vaccel_vm_bind) == 32, "vm_bind");
static_assert(sizeof(struct drm_vaccel_queue_create) == 40, "queue_create");
static_assert(sizeof(struct drm_vaccel_queue_query) == 64, "queue_query");
static_assert(sizeof(struct drm_vaccel_queue_control) == 56, "queue_control");
static_assert(sizeof(struct drm_vaccel_wait_signals) == 32, "wait_signals");
static_assert(sizeof(struct drm_vaccel_signal_write) == 32, "signal_write");
static_assert(sizeof(struct drm_vaccel_signal_eventfd) == 48, "signal_eventfd");
static_assert(sizeof(struct drm_vaccel_packet) == 64, "packet");
static_assert(sizeof(struct drm_vaccel_matmul) == 64, "matmul");

TEST(submit_from_32bit_process)
{
	struct drm_vaccel_queue_query qq = {};
	struct drm_vaccel_signal_cond c;
	struct drm_vaccel_packet p;
	struct bo ring, data, sig;
	uint64_t v = 0;
	struct q q;
	int fd;

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	fd = vaccel_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vaccel_get_param(fd, DRM_VACCEL_PARAM_UAPI_VERSION, &v));
	EXPECT_EQ(VACCEL_UAPI_VERSION, v);
	ASSERT_EQ(0, bo_new(fd, RING_N * 64, 0, &ring));	/* mmap at a GEM offset */
	ASSERT_EQ(0, bo_new(fd, PAGE, 0, &data));
	ASSERT_EQ(0, bo_new(fd, PAGE, DRM_VACCEL_BO_SIGNAL, &sig));
	ASSERT_EQ(0, vaccel_vm_bind(fd, ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA, PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(fd, data.handle, VM_RW, 0, DATA_VA, PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(fd, sig.handle, VM_RW, 0, SIG_VA, PAGE));
	ASSERT_EQ(0, queue_new(fd, RING_VA, RING_N, (void *)ring.map, &q));

	p = pkt(DRM_VACCEL_PKT_FILL, DATA_VA, PAGE, 0xab, 0);
	p.arg = 1;
	ASSERT_EQ(0, submit(fd, &q, &p, NULL));
	p = pkt(DRM_VACCEL_PKT_SIGNAL | DRM_VACCEL_PKT_IRQ, SIG_VA, 42, 0, 0);
	p.arg = DRM_VACCEL_SIGNAL_SET;
	ASSERT_EQ(0, submit(fd, &q, &p, NULL));
	c = cond(sig.handle, 0, 42, DRM_VACCEL_WAIT_GE);
	EXPECT_EQ(0, sig_wait(fd, &c, 1, 0, 10000, NULL));
	EXPECT_EQ(0xab, data.map[PAGE - 1]);
	EXPECT_EQ(0, sig_write(fd, sig.handle, 8, DRM_VACCEL_SIGNAL_SET, 1ull << 40));
	EXPECT_EQ(1ull << 40, ((volatile uint64_t *)sig.map)[1]);
	qq.queue_id = q.id;
	ASSERT_EQ(0, ioctl(fd, DRM_IOCTL_VACCEL_QUEUE_QUERY, &qq));
	EXPECT_EQ(2, qq.read_index);
	EXPECT_EQ(DRM_VACCEL_QUEUE_RUNNING, qq.state);
	close(fd);
}

TEST_HARNESS_MAIN
