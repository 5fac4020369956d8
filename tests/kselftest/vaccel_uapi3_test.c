// SPDX-License-Identifier: GPL-2.0-only
/*
 * uAPI 3 through the kernel: EXEC binding tables and the fault record's
 * depth, body index and binding; nested epochs; MATMUL against a host
 * reference, in short FPU sections; masked WAIT GE; SIGNAL_EVENTFD; SIGNAL_WRITE flags and the
 * uAPI 2 structure size; fdinfo usage stats; queue pages (offsets below
 * 4 GiB, MADV_DONTNEED, O_RDONLY files); priority needs CAP_SYS_NICE;
 * rejected arguments are logged at drm debug level; header bits; debugfs
 * vm_read under concurrent use.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>

#include "vaccel_common.h"
#include "vaccel_queue_util.h"
#include "float_ref.h"
#include "kselftest_harness.h"

#define ID		VACCEL_TEST_ID
#define EXEC_SIZE	(64 * 1024)
#define TABLE_VA	(DATA_VA + DATA_SIZE - 4096)	/* binding tables */
#define B(i, off)	DRM_VACCEL_BINDING_ADDR(i, off)

FIXTURE(u3) {
	int fd;
	struct bo ring, data, sig, exec;
	struct q q;
};

FIXTURE_SETUP(u3)
{
	char spec[64];

	self->fd = -1;
	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	snprintf(spec, sizeof(spec), "%u engines=2", ID);
	ASSERT_EQ(0, vaccel_fresh_device(ID, spec));
	self->fd = vaccel_open(ID);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, packet_ctx_new(self->fd, EXEC_SIZE, &self->ring, &self->data, &self->sig,
				    &self->exec, &self->q));
}

FIXTURE_TEARDOWN(u3)
{
	if (!vaccel_present())
		return;
	if (self->fd >= 0)
		close(self->fd);
	vaccel_del_device(ID);
}

static struct drm_vaccel_packet exec_pkt(uint64_t body, uint64_t n, uint64_t epoch,
					 uint64_t table, uint16_t nbind)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_EXEC, body, n, epoch, table);

	p.arg = nbind;
	return p;
}

/*
 * One sealed body, launched three times with three binding tables: the
 * same packets copy a different source to a different destination and
 * signal a different word each time. (Before uAPI 3 a sealed buffer could
 * only ever touch the addresses it was recorded with.)
 */
TEST_F(u3, bindings_retarget_a_sealed_body)
{
	uint64_t *table = (uint64_t *)(self->data.map + (TABLE_VA - DATA_VA));
	volatile uint64_t *s = (volatile uint64_t *)self->sig.map;
	struct drm_vaccel_packet body[2], e, nop = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	int l;

	body[0] = pkt(DRM_VACCEL_PKT_COPY, B(0, 0), B(1, 0), 256, 0);
	body[1] = completing(pkt(DRM_VACCEL_PKT_SIGNAL, B(2, 0), 7, 0, 0), B(2, 8),
			     DRM_VACCEL_SIGNAL_ADD, 1);
	body[1].arg = DRM_VACCEL_SIGNAL_SET;
	ASSERT_EQ(0, seal_body(self->fd, &self->exec, body, 2, EXEC_VA));
	for (l = 0; l < 3; l++) {
		memset(self->data.map + 4096 * l, 0x11 * (l + 1), 256);
		table[3 * l] = DATA_VA + 4096 * l;
		table[3 * l + 1] = DATA_VA + 65536 + 4096 * l;
		table[3 * l + 2] = SIG_VA + 64 * l;
		e = exec_pkt(EXEC_VA, 2, 0, TABLE_VA + 24 * l, 3);
		ASSERT_EQ(0, submit(self->fd, &self->q, &nop, NULL));
		ASSERT_EQ(0, submit(self->fd, &self->q, &e, NULL));
	}
	ASSERT_TRUE(drain(&self->q, 10000));
	for (l = 0; l < 3; l++) {
		EXPECT_EQ(0, memcmp(self->data.map + 4096 * l,
				    self->data.map + 65536 + 4096 * l, 256)) TH_LOG("launch %d", l);
		EXPECT_EQ(7, s[8 * l]);
		EXPECT_EQ(1, s[8 * l + 1]);
	}
}

/*
 * A fault inside a nested body names its EXEC depth, its index in the
 * innermost body and the binding entry its address came from, in the
 * control page and in QUEUE_QUERY.
 */
TEST_F(u3, fault_record_names_depth_index_and_binding)
{
	uint64_t *table = (uint64_t *)(self->data.map + (TABLE_VA - DATA_VA));
	struct drm_vaccel_queue_query qq = { .queue_id = self->q.id };
	struct drm_vaccel_packet body[4];

	/* inner body at EXEC_VA + 1024: NOP, NOP, COPY to binding 1 (unmapped) */
	body[0] = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	body[1] = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	body[2] = pkt(DRM_VACCEL_PKT_COPY, B(0, 0), B(1, 0x10), 16, 0);
	memcpy(self->exec.map + 1024, body, 3 * sizeof(body[0]));
	/* outer body at EXEC_VA: NOP, EXEC inner (inherits the table) */
	body[0] = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	body[1] = exec_pkt(EXEC_VA + 1024, 3, 0, 0, 0);
	ASSERT_EQ(0, seal_body(self->fd, &self->exec, body, 2, EXEC_VA));
	table[0] = DATA_VA;
	table[1] = 0x7000000000ull;	/* nothing mapped there */
	body[3] = exec_pkt(EXEC_VA, 2, 0, TABLE_VA, 2);
	ASSERT_EQ(0, submit(self->fd, &self->q, &body[0], NULL));
	ASSERT_EQ(0, submit(self->fd, &self->q, &body[3], NULL));
	EXPECT_FALSE(drain(&self->q, 10000));
	EXPECT_EQ(DRM_VACCEL_QUEUE_ERROR, self->q.ctrl->state);
	EXPECT_EQ(DRM_VACCEL_FAULT_UNMAPPED, self->q.ctrl->fault);
	EXPECT_EQ(1, self->q.ctrl->fault_index);
	EXPECT_EQ(0x7000000010ull, self->q.ctrl->fault_addr);
	EXPECT_EQ(2, self->q.ctrl->fault_depth);
	EXPECT_EQ(2, self->q.ctrl->fault_exec_index);
	EXPECT_EQ(2, self->q.ctrl->fault_binding);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VACCEL_QUEUE_QUERY, &qq));
	EXPECT_EQ(2, qq.fault_depth);
	EXPECT_EQ(2, qq.fault_exec_index);
	EXPECT_EQ(2, qq.fault_binding);
	EXPECT_EQ(0x7000000010ull, qq.fault_addr);
}

/* A binding address on the ring has no table: BINDING, depth 0. */
TEST_F(u3, binding_address_on_the_ring_faults)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_SIGNAL, B(0, 0), 1, 0, 0);

	p.arg = DRM_VACCEL_SIGNAL_SET;
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	EXPECT_FALSE(drain(&self->q, 10000));
	EXPECT_EQ(DRM_VACCEL_FAULT_BINDING, self->q.ctrl->fault);
	EXPECT_EQ(B(0, 0), self->q.ctrl->fault_addr);
	EXPECT_EQ(0, self->q.ctrl->fault_depth);
}

/* Nested epochs compose with DRM_VACCEL_EXEC_F_EPOCH. */
TEST_F(u3, nested_epochs)
{
	volatile uint64_t *s = (volatile uint64_t *)self->sig.map;
	struct drm_vaccel_packet body[2], e;

	body[0] = pkt(DRM_VACCEL_PKT_SIGNAL, SIG_VA, 0, 0, 0);	/* inner, at +64 */
	body[0].arg = DRM_VACCEL_SIGNAL_SET;
	body[0].flags = DRM_VACCEL_SIGNAL_F_EPOCH;
	memcpy(self->exec.map + 64, body, sizeof(body[0]));
	body[0] = exec_pkt(EXEC_VA + 64, 1, 5, 0, 0);
	body[0].flags = DRM_VACCEL_EXEC_F_EPOCH;
	ASSERT_EQ(0, seal_body(self->fd, &self->exec, body, 1, EXEC_VA));
	e = exec_pkt(EXEC_VA, 1, 1000, 0, 0);
	ASSERT_EQ(0, submit(self->fd, &self->q, &e, NULL));
	ASSERT_TRUE(drain(&self->q, 10000));
	EXPECT_EQ(1005, s[0]);
}

static void fill_matrix(void *m, uint64_t n, unsigned int dtype, unsigned int seed)
{
	uint64_t i;

	srand(seed);
	for (i = 0; i < n; i++) {
		float x = (float)(rand() % 201 - 100) / 8.0f;
		_Float16 h = (_Float16)x;
		uint16_t b = ref_bf16(x);

		if (dtype == DRM_VACCEL_DTYPE_F32)
			memcpy((uint8_t *)m + 4 * i, &x, 4);
		else if (dtype == DRM_VACCEL_DTYPE_F16)
			memcpy((uint8_t *)m + 2 * i, &h, 2);
		else
			memcpy((uint8_t *)m + 2 * i, &b, 2);
	}
}

/*
 * MATMUL in the kernel's FPU sections: bit-exact against the host
 * reference, which sums in the same order, for each input dtype, with and
 * without accumulation and with padded leading dimensions.
 */
TEST_F(u3, matmul_matches_host_reference)
{
	static const struct { unsigned int dtype, m, n, k, pad, acc; } c[] = {
		{ DRM_VACCEL_DTYPE_F32, 48, 40, 56, 3, 0 },
		{ DRM_VACCEL_DTYPE_F16, 33, 64, 17, 0, 1 },
		{ DRM_VACCEL_DTYPE_BF16, 64, 8, 100, 5, 1 },
	};
	struct drm_vaccel_matmul *d = (void *)(self->data.map + (TABLE_VA - DATA_VA));
	float *cm = (float *)(self->data.map + 131072), want[64 * 80];
	struct drm_vaccel_packet p;
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		memset(d, 0, sizeof(*d));
		d->a = DATA_VA;
		d->b = DATA_VA + 65536;
		d->c = DATA_VA + 131072;
		d->m = c[i].m;
		d->n = c[i].n;
		d->k = c[i].k;
		d->lda = c[i].k + c[i].pad;
		d->ldb = c[i].n + c[i].pad;
		d->ldc = c[i].n + c[i].pad;
		fill_matrix(self->data.map, (uint64_t)d->m * d->lda, c[i].dtype, i);
		fill_matrix(self->data.map + 65536, (uint64_t)d->k * d->ldb, c[i].dtype, 10 + i);
		fill_matrix(cm, (uint64_t)d->m * d->ldc, DRM_VACCEL_DTYPE_F32, 20 + i);
		memcpy(want, cm, (uint64_t)d->m * d->ldc * 4);
		ref_matmul(want, self->data.map, self->data.map + 65536, d, c[i].dtype,
			   c[i].acc);
		p = pkt(DRM_VACCEL_PKT_MATMUL, TABLE_VA, 0, 0, 0);
		p.arg = c[i].dtype;
		p.flags = c[i].acc ? DRM_VACCEL_MATMUL_F_ACCUMULATE : 0;
		ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
		ASSERT_TRUE(drain(&self->q, 60000)) TH_LOG("fault %u", self->q.ctrl->fault);
		EXPECT_EQ(0, memcmp(want, cm, (uint64_t)d->m * d->ldc * 4)) TH_LOG("case %u", i);
	}
}

/*
 * The MATMUL's FPU sections, which the kernel runs without preemption,
 * are short in time whatever the operands: A subnormal (every product and
 * sum a subnormal, the slow path of real FPUs) and B read down columns
 * 64 KiB apart (a new page at every load) over k = 1024. Each section
 * ends at the first clock check after 50 us, checks coming every 64
 * multiply-adds: debugfs counts the sections over 1 ms, which only a vCPU
 * the host preempts inside a section can still produce (the guest clock
 * runs on meanwhile; 1-2% of them on a loaded host, at most 10% allowed
 * here), and the longest is logged, not asserted, for that reason; the
 * result is the host reference's to the bit. (A section was a whole step
 * of 16,384 multiply-adds: all 16 of them lasted over 1 ms in the TCG VM,
 * the longest 14 ms.)
 */
TEST_F(u3, matmul_fpu_sections_are_short)
{
	struct drm_vaccel_matmul *d = (void *)(self->data.map + (TABLE_VA - DATA_VA));
	const uint64_t ldb = 16384, k = 1024, n = 64, m = 4, big_va = 1ull << 36;
	float *a = (float *)self->data.map, *cm = (float *)(self->data.map + 65536);
	long long sections, over, max;
	struct drm_vaccel_packet p;
	float *want = calloc(m * n, 4), *b;
	struct bo big;
	uint64_t i, j;

	ASSERT_NE(NULL, want);
	ASSERT_EQ(0, bo_new(self->fd, ((k - 1) * ldb + n) * 4, 0, &big));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, big.handle, DRM_VACCEL_VM_READ, 0, big_va,
				    big.size));
	b = (float *)big.map;
	for (i = 0; i < m * k; i++)
		a[i] = 1e-40f;
	for (i = 0; i < k; i++)
		for (j = 0; j < n; j++)
			b[i * ldb + j] = 1.0f + (float)j / 64;
	memset(d, 0, sizeof(*d));
	d->a = DATA_VA;
	d->b = big_va;
	d->c = DATA_VA + 65536;
	d->m = m;
	d->n = n;
	d->k = k;
	d->lda = k;
	d->ldb = ldb;
	d->ldc = n;
	ref_matmul(want, a, b, d, DRM_VACCEL_DTYPE_F32, 0);
	sections = vaccel_dev_stat(ID, "stats", "fpu_sections");
	over = vaccel_dev_stat(ID, "stats", "fpu_over_1ms");
	p = pkt(DRM_VACCEL_PKT_MATMUL, TABLE_VA, 0, 0, 0);
	p.arg = DRM_VACCEL_DTYPE_F32;
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	ASSERT_TRUE(drain(&self->q, 120000)) TH_LOG("fault %u", self->q.ctrl->fault);
	EXPECT_EQ(0, memcmp(want, cm, m * n * 4));
	sections = vaccel_dev_stat(ID, "stats", "fpu_sections") - sections;
	over = vaccel_dev_stat(ID, "stats", "fpu_over_1ms") - over;
	max = vaccel_dev_stat(ID, "stats", "fpu_max_ns");
	TH_LOG("%lld FPU sections, mean %lld us, %lld over 1 ms (over 100 us: %lld), longest %lld us",
	       sections, vaccel_dev_stat(ID, "stats", "fpu_ns") / sections / 1000, over,
	       vaccel_dev_stat(ID, "stats", "fpu_over_100us"), max / 1000);
	EXPECT_LE(16, sections);
	EXPECT_LE(over * 10, sections);
	munmap(big.map, big.size);
	free(want);
}

TEST_F(u3, matmul_invalid_descriptor_faults)
{
	struct drm_vaccel_matmul *d = (void *)(self->data.map + (TABLE_VA - DATA_VA));
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_MATMUL, TABLE_VA, 0, 0, 0);

	memset(d, 0, sizeof(*d));
	d->a = DATA_VA;
	d->b = DATA_VA + 4096;
	d->c = DATA_VA + 8192;
	d->m = d->n = d->k = 8;
	d->lda = 7;		/* less than k */
	d->ldb = d->ldc = 8;
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	EXPECT_FALSE(drain(&self->q, 10000));
	EXPECT_EQ(DRM_VACCEL_FAULT_BAD_PACKET, self->q.ctrl->fault);
	EXPECT_EQ(TABLE_VA, self->q.ctrl->fault_addr);
}

/*
 * WAIT GE with a mask compares in the mask's width: a counter kept in the
 * low byte is past its target across that byte's wrap; WAIT_SIGNALS
 * agrees, and rejects GE with a mask that is not one run of bits.
 */
TEST_F(u3, masked_ge)
{
	struct drm_vaccel_signal_cond c = cond(self->sig.handle, 0, 0xff, DRM_VACCEL_WAIT_GE);
	struct drm_vaccel_packet w = pkt(DRM_VACCEL_PKT_WAIT, SIG_VA, 0xff, 0xff, 0);

	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 0, DRM_VACCEL_SIGNAL_SET, 0x3101));
	w.arg = DRM_VACCEL_WAIT_GE;
	ASSERT_EQ(0, submit(self->fd, &self->q, &w, NULL));
	EXPECT_TRUE(drain(&self->q, 10000));
	c.mask = 0xff;
	EXPECT_EQ(0, sig_wait(self->fd, &c, 1, 0, 0, NULL));
	c.mask = 0xf0f;
	EXPECT_EQ(-EINVAL, sig_wait(self->fd, &c, 1, 0, 0, NULL));
	c.cond = DRM_VACCEL_WAIT_NE;	/* any mask is fine for EQ and NE */
	EXPECT_EQ(0, sig_wait(self->fd, &c, 1, 0, 0, NULL));
	w.operand[2] = 0xf0f;
	ASSERT_EQ(0, submit(self->fd, &self->q, &w, NULL));
	EXPECT_FALSE(drain(&self->q, 10000));
	EXPECT_EQ(DRM_VACCEL_FAULT_BAD_PACKET, self->q.ctrl->fault);
}

static int arm(int fd, uint32_t handle, uint64_t offset, uint64_t value, int efd,
	       uint32_t flags, uint64_t *id)
{
	struct drm_vaccel_signal_eventfd a = {
		.cond = cond(handle, offset, value, DRM_VACCEL_WAIT_GE),
		.fd = efd, .flags = flags,
	};
	int ret = ioctl(fd, DRM_IOCTL_VACCEL_SIGNAL_EVENTFD, &a) ? -errno : 0;

	if (id)
		*id = a.id;
	return ret;
}

static bool readable(int efd, int timeout_ms)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

static uint64_t efd_read(int efd)
{
	uint64_t v = 0;

	return read(efd, &v, 8) == 8 ? v : 0;
}

TEST_F(u3, eventfd_fires_when_the_signal_reaches_the_value)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_SIGNAL | DRM_VACCEL_PKT_IRQ, SIG_VA, 3,
					 0, 0);
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	ASSERT_LE(0, efd);
	ASSERT_EQ(0, arm(self->fd, self->sig.handle, 0, 5, efd, 0, NULL));
	EXPECT_FALSE(readable(efd, 50));
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 0, DRM_VACCEL_SIGNAL_SET, 4));
	EXPECT_FALSE(readable(efd, 50));	/* not there yet */
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 0, DRM_VACCEL_SIGNAL_SET, 5));
	EXPECT_TRUE(readable(efd, 2000));
	EXPECT_EQ(1, efd_read(efd));
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 0, DRM_VACCEL_SIGNAL_ADD, 5));
	EXPECT_FALSE(readable(efd, 50));	/* one-shot */

	/* already satisfied: fires at once */
	ASSERT_EQ(0, arm(self->fd, self->sig.handle, 0, 1, efd, 0, NULL));
	EXPECT_TRUE(readable(efd, 0));
	EXPECT_EQ(1, efd_read(efd));

	/* a device SIGNAL with IRQ fires it, with epoll-friendly semantics */
	ASSERT_EQ(0, arm(self->fd, self->sig.handle, 8, 3, efd, 0, NULL));
	p.operand[0] = SIG_VA + 8;
	p.arg = DRM_VACCEL_SIGNAL_SET;
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	EXPECT_TRUE(readable(efd, 5000));
	close(efd);
}

TEST_F(u3, eventfd_cancel_and_limits)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), pfd[2];
	struct drm_vaccel_signal_eventfd a = {};
	uint64_t id;
	int i;

	ASSERT_LE(0, efd);
	ASSERT_EQ(0, arm(self->fd, self->sig.handle, 0, 100, efd, 0, &id));
	a.flags = DRM_VACCEL_EVENTFD_CANCEL;
	a.id = id;
	EXPECT_EQ(0, ioctl(self->fd, DRM_IOCTL_VACCEL_SIGNAL_EVENTFD, &a));
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VACCEL_SIGNAL_EVENTFD, &a));
	EXPECT_EQ(ENOENT, errno);
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 0, DRM_VACCEL_SIGNAL_SET, 100));
	EXPECT_FALSE(readable(efd, 50));	/* cancelled: never fires */

	EXPECT_EQ(-EINVAL, arm(self->fd, self->sig.handle, 0, 1, efd, 0x4, NULL));
	EXPECT_EQ(-EBADF, arm(self->fd, self->sig.handle, 0, 1, -1, 0, NULL));
	ASSERT_EQ(0, pipe(pfd));
	EXPECT_EQ(-EINVAL, arm(self->fd, self->sig.handle, 0, 1, pfd[0], 0, NULL));
	EXPECT_EQ(-ENOENT, arm(self->fd, 9999, 0, 1, efd, 0, NULL));
	EXPECT_EQ(-EINVAL, arm(self->fd, self->data.handle, 0, 1, efd, 0, NULL));
	EXPECT_EQ(-EINVAL, arm(self->fd, self->sig.handle, 4, 1, efd, 0, NULL));
	for (i = 0; i < DRM_VACCEL_EVENTFD_MAX; i++)
		ASSERT_EQ(0, arm(self->fd, self->sig.handle, 8, 1000000 + i, efd, 0, NULL));
	EXPECT_EQ(-ENOSPC, arm(self->fd, self->sig.handle, 8, 1, efd, 0, NULL));
	/* fired arms free their slot */
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 8, DRM_VACCEL_SIGNAL_SET, 1000010));
	EXPECT_EQ(0, arm(self->fd, self->sig.handle, 8, 1, efd, 0, NULL));
	close(pfd[0]);
	close(pfd[1]);
	close(efd);
}

/*
 * Nothing waits for ever: a queue fault fires the context's arms (unless
 * they ignore faults), and removing the device fires all of them.
 */
TEST_F(u3, eventfd_fires_on_fault_and_unplug)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int efd2 = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	char path[128], val[32];

	ASSERT_LE(0, efd);
	ASSERT_LE(0, efd2);
	ASSERT_EQ(0, arm(self->fd, self->sig.handle, 0, 100, efd, 0, NULL));
	ASSERT_EQ(0, arm(self->fd, self->sig.handle, 0, 100, efd2,
			 DRM_VACCEL_EVENTFD_IGNORE_FAULTS, NULL));
	{
		char buf[512];
		unsigned int ctx = 0;

		ASSERT_LT(0, vaccel_dev_debugfs(ID, "contexts", buf, sizeof(buf)));
		ASSERT_EQ(1, sscanf(buf, "ctx %u", &ctx));
		snprintf(val, sizeof(val), "%u %u", ctx, self->q.id);
	}
	snprintf(path, sizeof(path), ACCEL_DEBUGFS "/vaccel%u/force_fault", ID);
	ASSERT_EQ(0, vaccel_sysfs_write(path, val));
	EXPECT_TRUE(readable(efd, 2000));
	EXPECT_FALSE(readable(efd2, 50));
	ASSERT_EQ(0, vaccel_del_device(ID));
	EXPECT_TRUE(readable(efd2, 2000));
	close(efd);
	close(efd2);
}

/*
 * SIGNAL_WRITE has flags and padding in uAPI 3, which must be zero; a
 * uAPI 2 binary passes the old 24-byte structure and keeps working.
 */
TEST_F(u3, signal_write_flags_and_old_size)
{
	struct drm_vaccel_signal_write w = {
		.handle = self->sig.handle, .op = DRM_VACCEL_SIGNAL_SET, .value = 9,
	};
	volatile uint64_t *s = (volatile uint64_t *)self->sig.map;

	w.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &w));
	EXPECT_EQ(EINVAL, errno);
	w.flags = 0;
	w.pad = 1;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &w));
	EXPECT_EQ(EINVAL, errno);
	w.pad = 0;
	EXPECT_EQ(0, ioctl(self->fd, _IOC(_IOC_WRITE, DRM_IOCTL_BASE,
					  DRM_COMMAND_BASE + DRM_VACCEL_SIGNAL_WRITE, 24), &w));
	EXPECT_EQ(9, s[0]);
}

/* Per-client usage in fdinfo (Documentation/gpu/drm-usage-stats.rst). */
TEST_F(u3, fdinfo_usage_stats)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_DELAY, 50000000, 0, 0, 0);
	char path[64], buf[4096];
	long long before, after;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", self->fd);
	ASSERT_LT(0, vaccel_read_file(path, buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "drm-driver:\tvaccel"));
	EXPECT_NE(NULL, strstr(buf, "drm-client-id:"));
	EXPECT_NE(NULL, strstr(buf, "drm-total-memory:"));
	EXPECT_NE(NULL, strstr(buf, "drm-engine-capacity-compute:\t2"));
	ASSERT_NE(NULL, strstr(buf, "drm-engine-compute:"));
	before = strtoll(strstr(buf, "drm-engine-compute:") + 19, NULL, 10);
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	ASSERT_TRUE(drain(&self->q, 10000));
	ASSERT_LT(0, vaccel_read_file(path, buf, sizeof(buf)));
	after = strtoll(strstr(buf, "drm-engine-compute:") + 19, NULL, 10);
	TH_LOG("busy %lld ns after a 50 ms DELAY", after - before);
	EXPECT_LE(50000000, after - before);
}

/*
 * drm-engine-compute never credits more engine time than has passed:
 * over any window between two reads, the clients' credits grow by at most
 * the window times the engines. One engine; two clients with two queues
 * each, every queue running three 150 ms DELAYs, all at once: the engine
 * is modelled busy about 450 ms, and reads every 20 ms never see more
 * credited than elapsed, nor more than the elapsed time in all. (Each
 * DELAY was credited whole when it started, and the four queues'
 * overlapping DELAYs were summed: 1.8 s for about 450 ms.)
 */
TEST(fdinfo_never_credits_more_than_elapsed)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_DELAY, 150000000, 0, 0, 0);
	struct bo ring[2], ring2[2], data[2], sig[2], exec[2];
	long long c0 = 0, c, start_credit = 0, worst = -1000000000;
	uint64_t t0, tb = 0, ta, first;
	int fd[2], i, j, samples = 0;
	struct q q[2][2];
	char spec[64];
	bool done;

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	snprintf(spec, sizeof(spec), "%u engines=1", ID);
	ASSERT_EQ(0, vaccel_fresh_device(ID, spec));
	for (i = 0; i < 2; i++) {
		fd[i] = vaccel_open(ID);
		ASSERT_LE(0, fd[i]);
		ASSERT_EQ(0, packet_ctx_new(fd[i], PAGE, &ring[i], &data[i], &sig[i], &exec[i],
					    &q[i][0]));
		ASSERT_EQ(0, bo_new(fd[i], RING_N * 64, 0, &ring2[i]));
		ASSERT_EQ(0, vaccel_vm_bind(fd[i], ring2[i].handle, DRM_VACCEL_VM_READ, 0,
					    EXEC_VA, PAGE));
		ASSERT_EQ(0, queue_new(fd[i], EXEC_VA, RING_N, (void *)ring2[i].map, &q[i][1]));
		start_credit += engine_ns(fd[i]);
	}
	first = t0 = now_ns();
	for (j = 0; j < 3; j++)
		for (i = 0; i < 4; i++)
			ASSERT_EQ(0, submit(fd[i / 2], &q[i / 2][i % 2], &p, NULL));
	do {
		done = true;
		for (i = 0; i < 4; i++)
			done &= q[i / 2][i % 2].ctrl->read_index == 3;
		tb = now_ns();
		c = engine_ns(fd[0]) + engine_ns(fd[1]);
		ta = now_ns();
		if (samples++) {
			/* credited since the last reads, against the time between them */
			worst = c - c0 - (long long)(ta - t0) > worst ?
				c - c0 - (long long)(ta - t0) : worst;
			EXPECT_LE(c - c0, (long long)(ta - t0)) TH_LOG("sample %d", samples);
		}
		c0 = c;
		t0 = tb;
		usleep(20000);
	} while (!done && ta - first < 20000000000ull);
	ASSERT_TRUE(done);
	TH_LOG("%d samples; %lld ms credited in %llu ms; worst window %lld us over elapsed",
	       samples, (c - start_credit) / 1000000, (unsigned long long)(ta - first) / 1000000,
	       worst / 1000);
	EXPECT_LE(c - start_credit, (long long)(ta - first));
	EXPECT_LE(400000000, c - start_credit);
	for (i = 0; i < 2; i++)
		close(fd[i]);
	vaccel_del_device(ID);
}

/*
 * Queue pages: offsets below 2^32 (32-bit processes can map them), the
 * doorbell faults back in after MADV_DONTNEED (it was SIGBUS), and an
 * O_RDONLY file can map its queues' control pages read-only (the check
 * wants VM_MAYSHARE) but not their doorbells writable.
 */
TEST_F(u3, queue_pages)
{
	struct drm_vaccel_queue_create c = { .ring_va = RING_VA, .ring_size = 16 };
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	char node[300];
	struct bo ring;
	void *m;
	int rfd;

	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VACCEL_QUEUE_CREATE, &c));
	EXPECT_GT(1ull << 32, c.doorbell_offset);
	EXPECT_GT(1ull << 32, c.control_offset);

	ASSERT_EQ(0, madvise((void *)self->q.doorbell, PAGE, MADV_DONTNEED));
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));	/* a store: faults in */
	EXPECT_TRUE(drain(&self->q, 10000));

	ASSERT_EQ(0, vaccel_node_path(ID, node, sizeof(node)));
	rfd = open(node, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	ASSERT_EQ(0, bo_new(self->fd, PAGE, 0, &ring));	/* made on the writable fd */
	{
		struct drm_vaccel_bo_create bc = {};

		ASSERT_EQ(0, vaccel_bo_create(rfd, PAGE, 0, &bc));
		ASSERT_EQ(0, vaccel_vm_bind(rfd, bc.handle, DRM_VACCEL_VM_READ, 0, RING_VA,
					    PAGE));
		c = (struct drm_vaccel_queue_create){ .ring_va = RING_VA, .ring_size = 16 };
		ASSERT_EQ(0, ioctl(rfd, DRM_IOCTL_VACCEL_QUEUE_CREATE, &c));
	}
	m = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, rfd, c.control_offset);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(DRM_VACCEL_QUEUE_RUNNING,
		  ((struct drm_vaccel_queue_control *)m)->state);
	munmap(m, PAGE);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, rfd,
				   c.doorbell_offset));
	EXPECT_EQ(EACCES, errno);
	close(rfd);
}

/* MEDIUM and HIGH priority need CAP_SYS_NICE; NORMAL does not. */
TEST_F(u3, priority_needs_cap_sys_nice)
{
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root to drop privileges");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct drm_vaccel_queue_create c = { .ring_va = RING_VA, .ring_size = 16 };

		/* an unprivileged user, using the file it was handed */
		CHILD_ASSERT(!setresgid(65534, 65534, 65534) && !setresuid(65534, 65534, 65534));
		c.priority = DRM_VACCEL_QUEUE_PRIORITY_HIGH;
		CHILD_ASSERT(ioctl(self->fd, DRM_IOCTL_VACCEL_QUEUE_CREATE, &c) == -1 &&
			     errno == EPERM);
		c.priority = DRM_VACCEL_QUEUE_PRIORITY_MEDIUM;
		CHILD_ASSERT(ioctl(self->fd, DRM_IOCTL_VACCEL_QUEUE_CREATE, &c) == -1 &&
			     errno == EPERM);
		c.priority = DRM_VACCEL_QUEUE_PRIORITY_NORMAL;
		CHILD_ASSERT(!ioctl(self->fd, DRM_IOCTL_VACCEL_QUEUE_CREATE, &c));
		_exit(0);
	}
	ASSERT_EQ(0, vaccel_wait_child(pid));
}

/* A rejected argument says why at drm debug level (drm.debug=0x2). */
TEST_F(u3, rejected_arguments_are_logged)
{
	struct drm_vaccel_get_param g = { .param = DRM_VACCEL_PARAM_DEVICE_ID, .pad = 1 };
	char old[32] = "0";
	int kmsg;

	if (vaccel_read_file("/sys/module/drm/parameters/debug", old, sizeof(old)) < 0)
		SKIP(return, "no drm.debug parameter");
	ASSERT_EQ(0, vaccel_sysfs_write("/sys/module/drm/parameters/debug", "0x2"));
	kmsg = vaccel_kmsg_open();
	ASSERT_LE(0, kmsg);
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VACCEL_GET_PARAM, &g));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(vaccel_kmsg_contains(kmsg, "ioctl argument check failed"));
	vaccel_sysfs_write("/sys/module/drm/parameters/debug", old);
	close(kmsg);
}

/*
 * BARRIER and the memory scopes are accepted and never weaken ordering: a
 * packet without them still sees everything earlier packets wrote.
 */
TEST_F(u3, header_bits_accepted_order_always_holds)
{
	struct drm_vaccel_packet p;
	int i;

	for (i = 0; i < 16; i++) {
		p = pkt(DRM_VACCEL_PKT_FILL, DATA_VA, 65536, i, 0);
		p.arg = 1;
		ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
		p = pkt(DRM_VACCEL_PKT_COPY, DATA_VA, DATA_VA + 65536 * (1 + i % 2), 65536, 0);
		p.header |= (i % 4) ? DRM_VACCEL_PKT_BARRIER : 0;
		p.header |= (i % 3) << DRM_VACCEL_PKT_ACQUIRE_SHIFT |
			    ((i + 1) % 3) << DRM_VACCEL_PKT_RELEASE_SHIFT;
		ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
		ASSERT_TRUE(drain(&self->q, 10000));
		EXPECT_EQ(i, self->data.map[65536 * (1 + i % 2) + 65535]);
	}
}

struct vmr {
	int fd;
	unsigned int ctx;
	volatile bool stop;
	int errors;
};

static void *vm_read_hammer(void *arg)
{
	struct vmr *v = arg;
	char req[64], out[256];

	snprintf(req, sizeof(req), "%u %llx 16", v->ctx, (unsigned long long)DATA_VA);
	while (!v->stop) {
		if (write(v->fd, req, strlen(req)) != (ssize_t)strlen(req))
			v->errors++;
		if (read(v->fd, out, sizeof(out)) < 0)
			v->errors++;
	}
	return NULL;
}

/*
 * debugfs vm_read: one open file written and read by four threads at once
 * (its result used to be replaced without a lock: a double free).
 */
TEST_F(u3, vm_read_concurrent)
{
	struct vmr v = { .stop = false };
	char path[128], buf[512];
	pthread_t t[4];
	int i;

	ASSERT_LT(0, vaccel_dev_debugfs(ID, "contexts", buf, sizeof(buf)));
	ASSERT_EQ(1, sscanf(buf, "ctx %u", &v.ctx));
	snprintf(path, sizeof(path), ACCEL_DEBUGFS "/vaccel%u/vm_read", ID);
	v.fd = open(path, O_RDWR);
	ASSERT_LE(0, v.fd);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, vm_read_hammer, &v));
	usleep(1000000);
	v.stop = true;
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(0, v.errors);
	close(v.fd);
}

TEST_HARNESS_MAIN
