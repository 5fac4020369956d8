// SPDX-License-Identifier: GPL-2.0-only
/*
 * Packets through real queues: EXEC of sealed buffers, the seed 004 and
 * seed 001 regressions end to end, REDUCE results of the kernel's FPU path
 * against references computed here, TIMESTAMP, and unbinding a range
 * while a COPY is using it.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <math.h>

#include "vaccel_common.h"
#include "vaccel_queue_util.h"
#include "float_ref.h"
#include "kselftest_harness.h"

#define EXEC_SIZE	(64 * 1024)

FIXTURE(ex) {
	int fd;
	struct bo ring, data, sig, exec;
	struct q q;
};

FIXTURE_SETUP(ex)
{
	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	self->fd = vaccel_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, packet_ctx_new(self->fd, EXEC_SIZE, &self->ring, &self->data, &self->sig,
				    &self->exec, &self->q));
}

FIXTURE_TEARDOWN(ex)
{
	if (vaccel_present())
		close(self->fd);
}

/* Record @n packets into the persistent buffer, seal it, map it read-only. */
static void record(struct __test_metadata *_metadata, int fd, struct bo *exec,
		   const struct drm_vaccel_packet *p, unsigned int n)
{
	struct drm_vaccel_bo_seal s = { .handle = exec->handle };

	memcpy(exec->map, p, n * sizeof(*p));
	ASSERT_EQ(0, munmap(exec->map, exec->size));	/* no writable mapping */
	exec->map = NULL;
	ASSERT_EQ(0, ioctl(fd, DRM_IOCTL_VACCEL_BO_SEAL, &s));
	ASSERT_EQ(0, vaccel_vm_bind(fd, exec->handle, DRM_VACCEL_VM_READ, 0, EXEC_VA, exec->size));
}

static volatile uint64_t *sigs(struct bo *b)
{
	return (volatile uint64_t *)b->map;
}

TEST_F(ex, exec_needs_sealed_buffer)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA, 1, 0, 0);

	self->exec.map[0] = 0;	/* a NOP */
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->exec.handle, DRM_VACCEL_VM_READ, 0, EXEC_VA,
				    EXEC_SIZE));
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	EXPECT_FALSE(drain(&self->q, 10000));
	EXPECT_EQ(DRM_VACCEL_FAULT_NOT_SEALED, self->q.ctrl->fault);
	EXPECT_EQ(EXEC_VA, self->q.ctrl->fault_addr);
}

/*
 * Seed 004: 10,000 replays of a 5-packet sealed buffer interleaved with
 * eager packets through a 64-slot ring. Each replay takes one slot: the
 * submitter never has more than 64 packets outstanding, and every packet
 * completes.
 */
TEST_F_TIMEOUT(ex, seed004_replays_take_one_slot, 300)
{
	struct drm_vaccel_packet body[5], p;
	unsigned int i, launched = 0, eager = 0;

	for (i = 0; i < 5; i++) {
		body[i] = pkt(DRM_VACCEL_PKT_SIGNAL, SIG_VA, 1, 0, 0);
		body[i].arg = DRM_VACCEL_SIGNAL_ADD;
	}
	record(_metadata, self->fd, &self->exec, body, 5);
	while (launched < 10000) {
		uint64_t done = __atomic_load_n(&self->q.ctrl->read_index, __ATOMIC_ACQUIRE);

		ASSERT_LE(self->q.wi - done, RING_N);
		if (self->q.wi - done == RING_N) {
			ASSERT_EQ(DRM_VACCEL_QUEUE_RUNNING, self->q.ctrl->state);
			sched_yield();
			continue;
		}
		if (self->q.wi % 3 == 2) {
			p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
			eager++;
		} else {
			p = pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA, 5, launched, 0);
			launched++;
		}
		ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	}
	ASSERT_TRUE(drain(&self->q, 60000));
	EXPECT_EQ(launched + eager, self->q.ctrl->read_index);
	EXPECT_EQ(5ull * launched, sigs(&self->sig)[0]);
}

/*
 * Seed 001: replayed and eager work share one monotonic counter, and a
 * host waiter waits for every value in turn. No reset exists, so no wait
 * can miss its value.
 */
TEST_F_TIMEOUT(ex, seed001_shared_counter_no_missed_wait, 120)
{
	struct drm_vaccel_packet body = pkt(DRM_VACCEL_PKT_SIGNAL, SIG_VA, 1, 0, 0), p;
	struct drm_vaccel_signal_cond c = {
		.handle = self->sig.handle, .cond = DRM_VACCEL_WAIT_GE,
	};
	struct drm_vaccel_wait_signals w = { .conds = (uintptr_t)&c, .count = 1 };
	uint64_t round;

	body.arg = DRM_VACCEL_SIGNAL_ADD;
	body.header |= DRM_VACCEL_PKT_IRQ;
	record(_metadata, self->fd, &self->exec, &body, 1);
	for (round = 0; round < 1000; round++) {
		p = pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA, 1, round, 0);
		ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
		p = pkt(DRM_VACCEL_PKT_SIGNAL | DRM_VACCEL_PKT_IRQ, SIG_VA, 1, 0, 0);
		p.arg = DRM_VACCEL_SIGNAL_ADD;
		ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
		c.value = 2 * round + 2;
		w.timeout_ns = now_ns() + 10000000000ll;
		ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VACCEL_WAIT_SIGNALS, &w))
			TH_LOG("round %llu value %llu", (unsigned long long)round,
			       (unsigned long long)sigs(&self->sig)[0]);
	}
	EXPECT_EQ(2000, sigs(&self->sig)[0]);
}

/* EXEC epochs: a replay's waits and signals are relative to its launch. */
TEST_F(ex, exec_epochs)
{
	struct drm_vaccel_packet body[2], p;
	int i;

	body[0] = pkt(DRM_VACCEL_PKT_WAIT, SIG_VA, 0, 0, 0);
	body[0].flags = DRM_VACCEL_WAIT_F_EPOCH;	/* host signal >= epoch */
	body[1] = pkt(DRM_VACCEL_PKT_SIGNAL, SIG_VA + 8, 0, 0, 0);
	body[1].arg = DRM_VACCEL_SIGNAL_SET;
	body[1].flags = DRM_VACCEL_SIGNAL_F_EPOCH;	/* = epoch */
	record(_metadata, self->fd, &self->exec, body, 2);
	for (i = 1; i <= 3; i++) {
		struct drm_vaccel_signal_write sw = {
			.handle = self->sig.handle, .op = DRM_VACCEL_SIGNAL_SET, .value = 100 * i,
		};

		p = pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA, 2, 100 * i, 0);
		ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
		usleep(20000);
		EXPECT_EQ(i - 1, self->q.ctrl->read_index);	/* waiting for 100 * i */
		ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &sw));
		ASSERT_TRUE(drain(&self->q, 10000));
		EXPECT_EQ(100 * i, sigs(&self->sig)[1]);
	}
}

/*
 * A replay whose last packet blocks: the EXEC completes only after that
 * WAIT is satisfied, and the ring advances by exactly its one slot. (The
 * core once left the EXEC when its last packet was fetched, so its
 * completion ran early and the read index ran past the doorbell.)
 */
TEST_F(ex, exec_ending_in_wait)
{
	struct drm_vaccel_packet body[2], p[2];
	struct drm_vaccel_signal_write sw = {
		.handle = self->sig.handle, .op = DRM_VACCEL_SIGNAL_SET, .value = 1,
	};
	int i;

	body[0] = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	body[1] = pkt(DRM_VACCEL_PKT_WAIT, SIG_VA, 0, 0, 0);
	body[1].flags = DRM_VACCEL_WAIT_F_EPOCH;	/* host signal >= epoch */
	record(_metadata, self->fd, &self->exec, body, 2);
	for (i = 1; i <= 3; i++) {
		p[0] = pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA, 2, i, 0);
		p[0].completion_addr = SIG_VA + 8;
		p[0].completion_op = DRM_VACCEL_SIGNAL_SET;
		p[0].completion_value = i;
		p[1] = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
		p[1].completion_addr = SIG_VA + 16;
		p[1].completion_op = DRM_VACCEL_SIGNAL_SET;
		p[1].completion_value = i;
		ASSERT_EQ(0, submit(self->fd, &self->q, p, NULL));
		ASSERT_EQ(0, submit(self->fd, &self->q, p + 1, NULL));
		usleep(20000);
		EXPECT_EQ(2 * (i - 1), self->q.ctrl->read_index);
		EXPECT_EQ(i - 1, sigs(&self->sig)[1]);	/* the EXEC is still running */
		EXPECT_EQ(i - 1, sigs(&self->sig)[2]);
		sw.value = i;
		ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &sw));
		ASSERT_TRUE(drain(&self->q, 10000));
		EXPECT_EQ(2 * i, self->q.ctrl->read_index);
		EXPECT_EQ(i, sigs(&self->sig)[1]);
		EXPECT_EQ(i, sigs(&self->sig)[2]);
		EXPECT_EQ(DRM_VACCEL_QUEUE_RUNNING, self->q.ctrl->state);
	}
}

/*
 * Every packet of a replay comes from a sealed buffer: rebinding the body's
 * range to an unsealed buffer while the EXEC waits faults its next fetch.
 */
TEST_F(ex, exec_body_rebound_unsealed_faults)
{
	struct drm_vaccel_packet body[2], p;
	struct drm_vaccel_signal_write sw = {
		.handle = self->sig.handle, .op = DRM_VACCEL_SIGNAL_SET, .value = 1,
	};
	struct bo other;

	body[0] = pkt(DRM_VACCEL_PKT_WAIT, SIG_VA, 1, 0, 0);
	body[1] = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	record(_metadata, self->fd, &self->exec, body, 2);
	p = pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA, 2, 0, 0);
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	ASSERT_TRUE(wait_blocked(0, self->q.id, 30000));	/* in the WAIT */
	ASSERT_EQ(0, self->q.ctrl->read_index);

	ASSERT_EQ(0, vaccel_vm_unbind(self->fd, EXEC_VA, EXEC_SIZE));
	ASSERT_EQ(0, bo_new(self->fd, EXEC_SIZE, 0, &other));	/* NOPs, unsealed */
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, other.handle, DRM_VACCEL_VM_READ, 0, EXEC_VA,
				    EXEC_SIZE));
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &sw));
	EXPECT_FALSE(drain(&self->q, 10000));
	EXPECT_EQ(DRM_VACCEL_QUEUE_ERROR, self->q.ctrl->state);
	EXPECT_EQ(DRM_VACCEL_FAULT_NOT_SEALED, self->q.ctrl->fault);
	EXPECT_EQ(0, self->q.ctrl->fault_index);
	EXPECT_EQ(EXEC_VA + 64, self->q.ctrl->fault_addr);
}

/* A WAIT timeout so large that the deadline would wrap waits for ever. */
TEST_F(ex, wait_huge_timeout)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_WAIT, SIG_VA, 1, 0, ~0ull);
	struct drm_vaccel_signal_write sw = {
		.handle = self->sig.handle, .op = DRM_VACCEL_SIGNAL_SET, .value = 1,
	};

	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	usleep(100000);
	EXPECT_EQ(DRM_VACCEL_QUEUE_RUNNING, self->q.ctrl->state);
	EXPECT_EQ(0, self->q.ctrl->read_index);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &sw));
	EXPECT_TRUE(drain(&self->q, 10000));
}

/* The kernel's REDUCE (FPU sections included) against host references. */
TEST_F(ex, reduce_exact)
{
	enum { N = 1000 };
	uint8_t *a = self->data.map, *b = a + 16384, *d = a + 32768;
	unsigned int dt, op, i;

	srand(11);
	for (i = 0; i < 16384; i++) {
		a[i] = rand();
		b[i] = rand();
	}
	/* keep float inputs finite and tame: random bits are mostly fine,
	 * but make a few specials explicit */
	((float *)a)[0] = INFINITY;
	((float *)b)[1] = NAN;
	for (dt = 0; dt <= DRM_VACCEL_DTYPE_U8; dt++) {
		for (op = 0; op <= DRM_VACCEL_REDOP_MAX; op++) {
			struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_REDUCE, DATA_VA,
							 DATA_VA + 16384, DATA_VA + 32768, N);

			p.arg = dt | op << 8;
			memset(d, 0, 8 * N);
			ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
			ASSERT_TRUE(drain(&self->q, 10000));
			for (i = 0; i < N; i++) {
				switch (dt) {
				case DRM_VACCEL_DTYPE_F32: {
					float r = ref_op(((float *)a)[i], ((float *)b)[i], op);

					if (isnan(r)) {
						ASSERT_TRUE(isnan(((float *)d)[i]));
					} else {
						ASSERT_EQ(0, memcmp(&r, d + 4 * i, 4))
							TH_LOG("f32 op %u i %u", op, i);
					}
					break;
				}
				case DRM_VACCEL_DTYPE_F16: {
					_Float16 x, y, r;
					uint16_t want;

					memcpy(&x, a + 2 * i, 2);
					memcpy(&y, b + 2 * i, 2);
					r = (_Float16)ref_op((float)x, (float)y, op);
					memcpy(&want, &r, 2);
					if (isnan((float)r)) {
						memcpy(&r, d + 2 * i, 2);
						ASSERT_TRUE(isnan((float)r));
					} else {
						ASSERT_EQ(want, ((uint16_t *)d)[i])
							TH_LOG("f16 op %u i %u", op, i);
					}
					break;
				}
				case DRM_VACCEL_DTYPE_BF16: {
					uint16_t *ua = (uint16_t *)a, *ub = (uint16_t *)b;
					float r = ref_op(bf16_f(ua[i]), bf16_f(ub[i]), op);

					if (isnan(r)) {
						ASSERT_TRUE(isnan(bf16_f(((uint16_t *)d)[i])));
					} else {
						ASSERT_EQ(ref_bf16(r), ((uint16_t *)d)[i])
							TH_LOG("bf16 op %u i %u", op, i);
					}
					break;
				}
				case DRM_VACCEL_DTYPE_I32: {
					int32_t x = ((int32_t *)a)[i], y = ((int32_t *)b)[i], r;

					r = op == 0 ? (int32_t)((uint32_t)x + (uint32_t)y) :
					    op == 1 ? (int32_t)((uint32_t)x * (uint32_t)y) :
					    op == 2 ? (x < y ? x : y) : (x > y ? x : y);
					ASSERT_EQ(r, ((int32_t *)d)[i]);
					break;
				}
				case DRM_VACCEL_DTYPE_I64: {
					int64_t x = ((int64_t *)a)[i], y = ((int64_t *)b)[i], r;

					r = op == 0 ? (int64_t)((uint64_t)x + (uint64_t)y) :
					    op == 1 ? (int64_t)((uint64_t)x * (uint64_t)y) :
					    op == 2 ? (x < y ? x : y) : (x > y ? x : y);
					ASSERT_EQ(r, ((int64_t *)d)[i]);
					break;
				}
				default: {
					uint8_t x = a[i], y = b[i], r;

					r = op == 0 ? x + y : op == 1 ? x * y :
					    op == 2 ? (x < y ? x : y) : (x > y ? x : y);
					ASSERT_EQ(r, d[i]);
					break;
				}
				}
			}
		}
	}
}

/*
 * REDUCE's FPU sections are short in time too: a PROD of 3 x 1 MiB of f32
 * whose products are all subnormal reads the clock every 1,024 elements
 * and ends a section 50 us on. At most 10% of the sections may exceed
 * 1 ms (a vCPU the host preempts inside one); the results are the host's
 * IEEE products. (A section was a whole 256 KiB chunk: 65,536 elements.)
 */
TEST_F(ex, reduce_fpu_sections_are_short)
{
	const uint64_t n = 256 * 1024, va = 1ull << 36;
	long long sections, over;
	struct drm_vaccel_packet p;
	float *a, *b, *d, want = 1e-20f * 1e-20f;
	struct bo big;
	uint64_t i;

	ASSERT_EQ(0, bo_new(self->fd, 3 * n * 4, 0, &big));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, big.handle, DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE,
				    0, va, big.size));
	a = (float *)big.map;
	b = a + n;
	d = b + n;
	for (i = 0; i < n; i++)
		a[i] = b[i] = 1e-20f;
	sections = vaccel_dev_stat(0, "stats", "fpu_sections");
	over = vaccel_dev_stat(0, "stats", "fpu_over_1ms");
	p = pkt(DRM_VACCEL_PKT_REDUCE, va, va + 4 * n, va + 8 * n, n);
	p.arg = DRM_VACCEL_DTYPE_F32 | DRM_VACCEL_REDOP_PROD << 8;
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	ASSERT_TRUE(drain(&self->q, 60000));
	sections = vaccel_dev_stat(0, "stats", "fpu_sections") - sections;
	over = vaccel_dev_stat(0, "stats", "fpu_over_1ms") - over;
	TH_LOG("%lld FPU sections, %lld over 1 ms", sections, over);
	EXPECT_LE(over * 10, sections);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, memcmp(&want, &d[i], 4)) TH_LOG("element %llu", (unsigned long long)i);
	munmap(big.map, big.size);
}

TEST_F(ex, timestamp)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_TIMESTAMP, DATA_VA + 8, 0, 0, 0);
	uint64_t before = now_ns(), t;

	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	ASSERT_TRUE(drain(&self->q, 10000));
	memcpy(&t, self->data.map + 8, 8);
	EXPECT_LE(before, t);
	EXPECT_GE(now_ns(), t);
}

/*
 * Unbinding the source of a COPY in flight: the copy stops with an
 * UNMAPPED fault at the first chunk after the unbind (or completes, if it
 * was quicker); the kernel keeps the pages of the chunk in use alive.
 */
TEST_F_TIMEOUT(ex, unbind_under_copy, 120)
{
	const uint64_t size = 32ull << 20, src = RING_VA + (1ull << 30);
	struct drm_vaccel_vm_unbind u = { .va = src, .size = size };
	struct drm_vaccel_packet p;
	struct bo big, dst;
	int i;

	ASSERT_EQ(0, bo_new(self->fd, size, 0, &big));
	ASSERT_EQ(0, bo_new(self->fd, size, 0, &dst));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, big.handle, DRM_VACCEL_VM_READ, 0, src, size));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, dst.handle, DRM_VACCEL_VM_WRITE, 0, src + size,
				    size));
	for (i = 0; i < 4; i++) {
		p = pkt(DRM_VACCEL_PKT_COPY, src, src + size, size, 0);
		ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	}
	usleep(10000);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VACCEL_VM_UNBIND, &u));
	if (!drain(&self->q, 60000)) {
		EXPECT_EQ(DRM_VACCEL_QUEUE_ERROR, self->q.ctrl->state);
		EXPECT_EQ(DRM_VACCEL_FAULT_UNMAPPED, self->q.ctrl->fault);
		EXPECT_LE(src, self->q.ctrl->fault_addr);
		EXPECT_GT(src + size, self->q.ctrl->fault_addr);
	}
	munmap(big.map, size);
	munmap(dst.map, size);
}

TEST_HARNESS_MAIN
