// SPDX-License-Identifier: GPL-2.0-only
/*
 * The link model: a device with link_bw_mbps/link_latency_ns set pays for
 * accesses to memory of another vaccel device (an imported dma-buf), and
 * not for its own memory.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "vaccel_common.h"
#include "vaccel_queue_util.h"
#include "kselftest_harness.h"

#define ID	VACCEL_TEST_ID
#define SIZE	(4ull << 20)

/* One COPY of SIZE bytes between two bound ranges; returns ns. */
static uint64_t timed_copy(struct __test_metadata *_metadata, int fd, struct q *q,
			   uint64_t src, uint64_t dst)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_COPY, src, dst, SIZE, 0);
	uint64_t t0 = now_ns();

	EXPECT_EQ(0, submit(fd, q, &p, NULL));
	EXPECT_TRUE(drain(q, 60000));
	return now_ns() - t0;
}

TEST(peer_copy_is_throttled)
{
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_prime_handle imp = { 0 };
	struct bo ring, local, peer_local;
	uint64_t t_local, t_peer;
	char spec[96];
	struct q q;
	int fd, fd0;

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	vaccel_del_device(ID);
	/* 100 MB/s and 2 ms: 4 MiB to a peer costs at least 42 ms */
	snprintf(spec, sizeof(spec), "%u link_bw_mbps=100 link_latency_ns=2000000", ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	fd = vaccel_open(ID);
	fd0 = vaccel_open(0);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, fd0);

	ASSERT_EQ(0, bo_new(fd, RING_N * 64, 0, &ring));
	ASSERT_EQ(0, bo_new(fd, 2 * SIZE, 0, &local));
	ASSERT_EQ(0, bo_new(fd0, SIZE, 0, &peer_local));
	exp.handle = peer_local.handle;
	ASSERT_EQ(0, ioctl(fd0, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
	imp.fd = exp.fd;
	ASSERT_EQ(0, ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp));

	ASSERT_EQ(0, vaccel_vm_bind(fd, ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA, PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(fd, local.handle, VM_RW, 0, DATA_VA, 2 * SIZE));
	ASSERT_EQ(0, vaccel_vm_bind(fd, imp.handle, VM_RW, 0, DATA_VA + 2 * SIZE, SIZE));
	ASSERT_EQ(0, queue_new(fd, RING_VA, RING_N, (void *)ring.map, &q));
	memset(local.map, 0x3c, SIZE);

	t_local = timed_copy(_metadata, fd, &q, DATA_VA, DATA_VA + SIZE);
	t_peer = timed_copy(_metadata, fd, &q, DATA_VA, DATA_VA + 2 * SIZE);
	TH_LOG("local %llu us, peer %llu us", (unsigned long long)t_local / 1000,
	       (unsigned long long)t_peer / 1000);
	EXPECT_LE(SIZE * 1000 / 100 + 2000000, t_peer);
	EXPECT_GT(t_peer, 2 * t_local);
	EXPECT_EQ(0x3c, peer_local.map[SIZE - 1]);	/* and the bytes arrived */

	close(exp.fd);
	close(fd0);
	close(fd);
	vaccel_del_device(ID);
}

/*
 * A MATMUL with one matrix in a peer's memory is charged what each step
 * reads of it (debugfs link_bytes): of A, the rows its elements use (the
 * whole of A once for 64 x 64 x 64); of C, its elements (C once). Each
 * step used to be charged the whole matrix: 16 times A and C here, and
 * a cross-device 1024^3 product was "busy" for hours.
 */
TEST(peer_matmul_charges_what_it_reads)
{
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_prime_handle imp = { 0 };
	const uint64_t dim = 64, msize = dim * dim * 4, peer_va = DATA_VA + 4 * PAGE * 64;
	struct bo ring, local, peer;
	struct drm_vaccel_matmul *d;
	struct drm_vaccel_packet p;
	long long before, charged;
	unsigned int which;
	char spec[96];
	struct q q;
	int fd, fd0;

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	vaccel_del_device(ID);
	snprintf(spec, sizeof(spec), "%u link_bw_mbps=1000", ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	fd = vaccel_open(ID);
	fd0 = vaccel_open(0);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, fd0);
	ASSERT_EQ(0, bo_new(fd, RING_N * 64, 0, &ring));
	ASSERT_EQ(0, bo_new(fd, 4 * msize, 0, &local));	/* descriptor, A, B, C */
	ASSERT_EQ(0, bo_new(fd0, msize, 0, &peer));
	exp.handle = peer.handle;
	ASSERT_EQ(0, ioctl(fd0, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
	imp.fd = exp.fd;
	ASSERT_EQ(0, ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp));
	ASSERT_EQ(0, vaccel_vm_bind(fd, ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA, PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(fd, local.handle, VM_RW, 0, DATA_VA, 4 * msize));
	ASSERT_EQ(0, vaccel_vm_bind(fd, imp.handle, VM_RW, 0, peer_va, msize));
	ASSERT_EQ(0, queue_new(fd, RING_VA, RING_N, (void *)ring.map, &q));
	d = (struct drm_vaccel_matmul *)local.map;

	for (which = 0; which < 2; which++) {	/* A, then C, in the peer */
		memset(d, 0, sizeof(*d));
		d->a = which == 0 ? peer_va : DATA_VA + msize;
		d->b = DATA_VA + 2 * msize;
		d->c = which == 1 ? peer_va : DATA_VA + 3 * msize;
		d->m = d->n = d->k = dim;
		d->lda = d->ldb = d->ldc = dim;
		before = vaccel_dev_stat(ID, "stats", "link_bytes");
		p = pkt(DRM_VACCEL_PKT_MATMUL, DATA_VA, 0, 0, 0);
		p.arg = DRM_VACCEL_DTYPE_F32;
		ASSERT_EQ(0, submit(fd, &q, &p, NULL));
		ASSERT_TRUE(drain(&q, 60000)) TH_LOG("fault %u", q.ctrl->fault);
		charged = vaccel_dev_stat(ID, "stats", "link_bytes") - before;
		TH_LOG("%s in the peer: %lld bytes charged", which ? "C" : "A", charged);
		EXPECT_EQ(msize, charged);
	}
	close(exp.fd);
	close(fd0);
	close(fd);
	vaccel_del_device(ID);
}

TEST_HARNESS_MAIN
