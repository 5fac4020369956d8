// SPDX-License-Identifier: GPL-2.0-only
/*
 * Large COPY, FILL and REDUCE packets split across idle engines: the
 * results are those of one engine, the packet completes once and in queue
 * order (the packets after it see all of it), a fault names the first
 * failing byte, and a queue destroyed or a file closed while other engines
 * run its ranges frees everything.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "vaccel_common.h"
#include "vaccel_queue_util.h"
#include "kselftest_harness.h"

#define ID	VACCEL_TEST_ID
#define BIG	(32ull << 20)
#define BIG_VA	(1ull << 36)	/* three BIG buffers from here */

FIXTURE(split) {
	int fd;
	struct bo ring, sig, big;
	struct q q;
};

FIXTURE_SETUP(split)
{
	char spec[64];

	self->fd = -1;
	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	snprintf(spec, sizeof(spec), "%u engines=4", ID);
	ASSERT_EQ(0, vaccel_fresh_device(ID, spec));
	self->fd = vaccel_open(ID);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bo_new(self->fd, RING_N * 64, 0, &self->ring));
	ASSERT_EQ(0, bo_new(self->fd, PAGE, DRM_VACCEL_BO_SIGNAL, &self->sig));
	ASSERT_EQ(0, bo_new(self->fd, 3 * BIG, 0, &self->big));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA,
				    PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->sig.handle, VM_RW, 0, SIG_VA, PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->big.handle, VM_RW, 0, BIG_VA, 3 * BIG));
	ASSERT_EQ(0, queue_new(self->fd, RING_VA, RING_N, (void *)self->ring.map, &self->q));
}

FIXTURE_TEARDOWN(split)
{
	if (!vaccel_present())
		return;
	if (self->fd >= 0)
		close(self->fd);
	vaccel_del_device(ID);
}

static long long dev_stat(const char *key)
{
	char buf[1024];

	if (vaccel_dev_debugfs(ID, "stats", buf, sizeof(buf)) < 0)
		return -1;
	return vaccel_kv(buf, key);
}

static void fill_pattern(uint8_t *p, uint64_t n, uint32_t seed)
{
	uint32_t *w = (uint32_t *)p;
	uint64_t i;

	for (i = 0; i < n / 4; i++) {
		seed = seed * 1103515245 + 12345;
		w[i] = seed;
	}
}

/*
 * A 32 MiB COPY, then a COPY of its destination, then a SIGNAL: other
 * engines ran ranges (split_helps moved), every byte arrived, and the
 * second copy saw all of the first (the split packet completed before
 * the next packet started).
 */
TEST_F(split, copy_is_split_in_order)
{
	volatile uint64_t *s = (volatile uint64_t *)self->sig.map;
	struct drm_vaccel_packet p;
	long long splits = dev_stat("splits"), helps = dev_stat("split_helps");

	fill_pattern(self->big.map, BIG, 1);
	p = completing(pkt(DRM_VACCEL_PKT_COPY, BIG_VA, BIG_VA + BIG, BIG, 0), SIG_VA,
		       DRM_VACCEL_SIGNAL_SET, 1);
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	p = pkt(DRM_VACCEL_PKT_COPY, BIG_VA + BIG, BIG_VA + 2 * BIG, BIG, 0);
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	p = pkt(DRM_VACCEL_PKT_SIGNAL, SIG_VA + 8, 2, 0, 0);
	p.arg = DRM_VACCEL_SIGNAL_SET;
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	ASSERT_TRUE(drain(&self->q, 60000));
	EXPECT_EQ(1, s[0]);
	EXPECT_EQ(2, s[1]);
	EXPECT_EQ(0, memcmp(self->big.map, self->big.map + BIG, BIG));
	EXPECT_EQ(0, memcmp(self->big.map, self->big.map + 2 * BIG, BIG));
	EXPECT_LE(splits + 2, dev_stat("splits"));
	TH_LOG("ranges run by other engines: %lld", dev_stat("split_helps") - helps);
	EXPECT_LT(helps, dev_stat("split_helps"));
}

/* FILL and REDUCE split the same way, with their own units. */
TEST_F(split, fill_and_reduce)
{
	float *a = (float *)self->big.map, *b = a + BIG / 4, *d = b + BIG / 4;
	struct drm_vaccel_packet p;
	uint64_t i, n = BIG / 4;
	long long splits = dev_stat("splits");

	p = pkt(DRM_VACCEL_PKT_FILL, BIG_VA + BIG, BIG, 0x40000000, 0);	/* 2.0f */
	p.arg = 4;
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	for (i = 0; i < n; i++)
		a[i] = (float)(i % 1000);
	ASSERT_TRUE(drain(&self->q, 60000));
	EXPECT_EQ(splits + 1, dev_stat("splits"));
	p = pkt(DRM_VACCEL_PKT_REDUCE, BIG_VA, BIG_VA + BIG, BIG_VA + 2 * BIG, n);
	p.arg = DRM_VACCEL_DTYPE_F32 | DRM_VACCEL_REDOP_PROD << 8;
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	ASSERT_TRUE(drain(&self->q, 60000));
	EXPECT_EQ(splits + 2, dev_stat("splits"));
	for (i = 0; i < n; i++)
		ASSERT_EQ((float)(i % 1000) * 2.0f, d[i]) TH_LOG("element %llu",
								 (unsigned long long)i);
	EXPECT_LE(splits + 2, dev_stat("splits"));
}

/*
 * The source's mapping ends 20 MiB in: the queue faults UNMAPPED at that
 * exact address, the first failing byte, whichever engine found it.
 */
TEST_F(split, fault_names_the_first_failing_byte)
{
	struct drm_vaccel_packet p;

	ASSERT_EQ(0, vaccel_vm_unbind(self->fd, BIG_VA, 3 * BIG));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->big.handle, VM_RW, 0, BIG_VA, 20ull << 20));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->big.handle, VM_RW, BIG, BIG_VA + BIG, BIG));
	p = pkt(DRM_VACCEL_PKT_COPY, BIG_VA, BIG_VA + BIG, BIG, 0);
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	EXPECT_FALSE(drain(&self->q, 60000));
	EXPECT_EQ(DRM_VACCEL_FAULT_UNMAPPED, self->q.ctrl->fault);
	EXPECT_EQ(BIG_VA + (20ull << 20), self->q.ctrl->fault_addr);
	EXPECT_EQ(0, self->q.ctrl->fault_index);
}

/* One engine: nothing to split with. */
TEST_F(split, single_engine_does_not_split)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_COPY, BIG_VA, BIG_VA + BIG, BIG, 0);
	char spec[64];

	close(self->fd);
	snprintf(spec, sizeof(spec), "%u engines=1", ID);
	ASSERT_EQ(0, vaccel_fresh_device(ID, spec));
	self->fd = vaccel_open(ID);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bo_new(self->fd, RING_N * 64, 0, &self->ring));
	ASSERT_EQ(0, bo_new(self->fd, 2 * BIG, 0, &self->big));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA,
				    PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->big.handle, VM_RW, 0, BIG_VA, 2 * BIG));
	ASSERT_EQ(0, queue_new(self->fd, RING_VA, RING_N, (void *)self->ring.map, &self->q));
	fill_pattern(self->big.map, BIG, 3);
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	ASSERT_TRUE(drain(&self->q, 60000));
	EXPECT_EQ(0, memcmp(self->big.map, self->big.map + BIG, BIG));
	EXPECT_EQ(0, dev_stat("splits"));
}

/*
 * Destroying a queue, or ending the process that holds its file, while
 * other engines run its ranges waits for them and frees everything.
 */
TEST_F(split, teardown_during_split)
{
	long queues = vaccel_objects("queues"), files = vaccel_objects("files");
	long bos = vaccel_objects("bos");
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_COPY, BIG_VA, BIG_VA + BIG, BIG, 0);
		struct drm_vaccel_queue_destroy d;
		struct bo ring, big;
		int fd = vaccel_open(ID), i;
		struct q q;

		CHILD_ASSERT(fd >= 0);
		CHILD_ASSERT(!bo_new(fd, RING_N * 64, 0, &ring) && !bo_new(fd, 2 * BIG, 0, &big));
		CHILD_ASSERT(!vaccel_vm_bind(fd, ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA, PAGE));
		CHILD_ASSERT(!vaccel_vm_bind(fd, big.handle, VM_RW, 0, BIG_VA, 2 * BIG));
		CHILD_ASSERT(!queue_new(fd, RING_VA, RING_N, (void *)ring.map, &q));
		for (i = 0; i < 4; i++)
			CHILD_ASSERT(!submit(fd, &q, &p, NULL));
		usleep(5000);
		d.queue_id = q.id;
		d.pad = 0;
		CHILD_ASSERT(!ioctl(fd, DRM_IOCTL_VACCEL_QUEUE_DESTROY, &d));
		CHILD_ASSERT(!queue_new(fd, RING_VA, RING_N, (void *)ring.map, &q));
		for (i = 0; i < 4; i++)
			CHILD_ASSERT(!submit(fd, &q, &p, NULL));
		usleep(5000);
		_exit(0);	/* with copies in flight */
	}
	ASSERT_EQ(0, vaccel_wait_child(pid));
	EXPECT_EQ(queues, vaccel_objects_wait("queues", queues, 10000));
	EXPECT_EQ(files, vaccel_objects_wait("files", files, 10000));
	EXPECT_EQ(bos, vaccel_objects_wait("bos", bos, 10000));
}

TEST_HARNESS_MAIN
