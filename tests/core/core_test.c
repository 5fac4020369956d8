// SPDX-License-Identifier: GPL-2.0-only
/*
 * Native unit tests of the packet core (kmod/core/), built with
 * AddressSanitizer and UndefinedBehaviorSanitizer: every packet type's
 * results byte-exact against a reference computed here, every invalid
 * packet's fault record, chunking, EXEC, and the seed 001/004 regressions.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <math.h>
#include <stdlib.h>

#include "../../kmod/core/vaccel_reduce.h"
#include "float_ref.h"

#include "core_fixture.h"

TEST_F(core, nop_with_completion)
{
	struct drm_vaccel_packet p = with_completion(pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0),
						     SIG_VA, DRM_VACCEL_SIGNAL_ADD, 5);

	p.header |= DRM_VACCEL_PKT_IRQ;
	EMIT(p);
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(5, self->sig[0]);
	EXPECT_EQ(1, self->os.irqs);
	EXPECT_EQ(1, self->q.read_index);
	EXPECT_EQ(0, self->os.maps);
}

TEST_F(core, copy_in_chunks)
{
	u64 size = 3 * VACCEL_CORE_CHUNK + 3, steps = 0;
	enum vaccel_core_status st;

	fill_random(self->data, size, 1);
	EMIT(pkt(DRM_VACCEL_PKT_COPY, DATA_VA, DATA_VA + 2 * size, size, 0));
	/* one step at a time: a chunk per step, so others get turns */
	do {
		st = vaccel_core_run(&self->q, self->wi, 1);
		steps++;
	} while (st == VACCEL_CORE_BUDGET);
	EXPECT_EQ(VACCEL_CORE_IDLE, st);
	EXPECT_EQ(5, steps);	/* 4 chunks, then the idle check */
	EXPECT_EQ(0, memcmp(self->data, self->data + 2 * size, size));
	EXPECT_EQ(size, self->q.bytes);
	EXPECT_EQ(0, self->os.maps);
}

/* A copy across the boundary between two adjacent mappings. */
TEST_F(core, copy_across_mappings)
{
	u8 *hi = os_add(&self->os, DATA_VA + DATA_SIZE, 8192,
			DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE, false, false);

	fill_random(self->data + DATA_SIZE - 5000, 5000, 2);
	fill_random(hi, 3000, 3);
	EMIT(pkt(DRM_VACCEL_PKT_COPY, DATA_VA + DATA_SIZE - 5000, DATA_VA, 8000, 0));
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(0, memcmp(self->data, self->data + DATA_SIZE - 5000, 5000));
	EXPECT_EQ(0, memcmp(self->data + 5000, hi, 3000));
}

TEST_F(core, fill_widths)
{
	static const struct { u16 width; u64 pattern; u64 size; } f[] = {
		{ 1, 0xab, 1001 }, { 2, 0xbeef, 998 }, { 4, 0xdeadbeef, 1004 },
		{ 8, 0x0123456789abcdefull, 1000 }, { 8, 0, VACCEL_CORE_CHUNK + 8 },
	};
	unsigned int i;
	u64 j;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_FILL, DATA_VA + 64,
						 f[i].size, f[i].pattern, 0);

		memset(self->data, 0x55, f[i].size + 128);
		p.arg = f[i].width;
		EMIT(p);
		ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
		for (j = 0; j < f[i].size; j++)
			ASSERT_EQ((u8)(f[i].pattern >> (8 * (j % f[i].width))),
				  self->data[64 + j]) TH_LOG("width %u byte %llu",
							      f[i].width, (unsigned long long)j);
		EXPECT_EQ(0x55, self->data[63]);
		EXPECT_EQ(0x55, self->data[64 + f[i].size]);
	}
}

static struct drm_vaccel_packet reduce(u32 dtype, u32 op, u64 a, u64 b, u64 d, u64 n)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_REDUCE, a, b, d, n);

	p.arg = dtype | op << 8;
	return p;
}

TEST_F(core, reduce_integers)
{
	int32_t *a = (int32_t *)self->data, *b = a + 1024, *d = a + 2048;
	int64_t *a64 = (int64_t *)(self->data + 65536), *b64 = a64 + 8, *d64 = a64 + 16;
	u8 *a8 = self->data + 131072, *b8 = a8 + 16, *d8 = a8 + 32;
	int i;

	for (i = 0; i < 1024; i++) {
		a[i] = i % 2 ? INT32_MAX - i : -i * 1000;
		b[i] = i % 3 ? i * 7 : INT32_MIN + i;
	}
	for (i = 0; i < 8; i++) {
		a64[i] = (int64_t)0x7fffffffffffff00ll + i;
		b64[i] = i % 2 ? 1000 : -(int64_t)i;
	}
	for (i = 0; i < 16; i++) {
		a8[i] = 250 + i;
		b8[i] = 3 * i;
	}
	EMIT(reduce(DRM_VACCEL_DTYPE_I32, DRM_VACCEL_REDOP_SUM, DATA_VA, DATA_VA + 4096,
		    DATA_VA + 8192, 1024));
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	for (i = 0; i < 1024; i++)
		ASSERT_EQ((int32_t)((uint32_t)a[i] + (uint32_t)b[i]), d[i]);
	EMIT(reduce(DRM_VACCEL_DTYPE_I32, DRM_VACCEL_REDOP_MIN, DATA_VA, DATA_VA + 4096,
		    DATA_VA + 8192, 1024));
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	for (i = 0; i < 1024; i++)
		ASSERT_EQ(a[i] < b[i] ? a[i] : b[i], d[i]);
	EMIT(reduce(DRM_VACCEL_DTYPE_I32, DRM_VACCEL_REDOP_PROD, DATA_VA, DATA_VA + 4096,
		    DATA_VA + 8192, 1024));
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	for (i = 0; i < 1024; i++)
		ASSERT_EQ((int32_t)((uint32_t)a[i] * (uint32_t)b[i]), d[i]);
	EMIT(reduce(DRM_VACCEL_DTYPE_I64, DRM_VACCEL_REDOP_SUM, DATA_VA + 65536,
		    DATA_VA + 65536 + 64, DATA_VA + 65536 + 128, 8));
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	for (i = 0; i < 8; i++)
		ASSERT_EQ((int64_t)((uint64_t)a64[i] + (uint64_t)b64[i]), d64[i]);
	EMIT(reduce(DRM_VACCEL_DTYPE_I64, DRM_VACCEL_REDOP_MAX, DATA_VA + 65536,
		    DATA_VA + 65536 + 64, DATA_VA + 65536 + 128, 8));
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	for (i = 0; i < 8; i++)
		ASSERT_EQ(a64[i] > b64[i] ? a64[i] : b64[i], d64[i]);
	EMIT(reduce(DRM_VACCEL_DTYPE_U8, DRM_VACCEL_REDOP_SUM, DATA_VA + 131072,
		    DATA_VA + 131072 + 16, DATA_VA + 131072 + 32, 16));
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	for (i = 0; i < 16; i++)
		ASSERT_EQ((u8)(a8[i] + b8[i]), d8[i]);
	EMIT(reduce(DRM_VACCEL_DTYPE_U8, DRM_VACCEL_REDOP_MAX, DATA_VA + 131072,
		    DATA_VA + 131072 + 16, DATA_VA + 131072 + 32, 16));
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	for (i = 0; i < 16; i++)
		ASSERT_EQ(a8[i] > b8[i] ? a8[i] : b8[i], d8[i]);
}

/* f32, f16 (against the compiler's _Float16) and bf16, every op,
 * random values plus infinities, NaN, subnormals and overflow. */
TEST_F(core, reduce_floats_exact)
{
	static const float special[] = {
		0.0f, -0.0f, INFINITY, -INFINITY, NAN, 65504.0f, 65520.0f, 1e-7f,
		5.96e-8f, 2.98e-8f, 6.1e-5f, 1.0f, -1.0f, 3.0e38f, 1e-40f, 0.1f,
	};
	float *fa = (float *)self->data, *fb = fa + 4096, *fd = fa + 8192;
	u16 *ha = (u16 *)(self->data + 65536), *hb = ha + 4096, *hd = ha + 8192;
	u16 *ba = (u16 *)(self->data + 131072), *bb = ba + 4096, *bd = ba + 8192;
	unsigned int i, op;

	srand(7);
	for (i = 0; i < 4096; i++) {
		float x = i < 16 ? special[i] : (rand() - RAND_MAX / 2) / 1000.0f;
		float y = i < 16 ? special[(i * 7) % 16] : (rand() - RAND_MAX / 2) / 3000.0f;
		_Float16 hx = (_Float16)x, hy = (_Float16)y;

		if (i >= 16 && i % 5 == 0)
			y = x;		/* MIN/MAX ties */
		fa[i] = x;
		fb[i] = y;
		memcpy(&ha[i], &hx, 2);
		memcpy(&hb[i], &hy, 2);
		ba[i] = ref_bf16(x);
		bb[i] = ref_bf16(y);
	}
	for (op = 0; op <= DRM_VACCEL_REDOP_MAX; op++) {
		EMIT(reduce(DRM_VACCEL_DTYPE_F32, op, DATA_VA, DATA_VA + 16384,
			    DATA_VA + 32768, 4096));
		EMIT(reduce(DRM_VACCEL_DTYPE_F16, op, DATA_VA + 65536, DATA_VA + 65536 + 8192,
			    DATA_VA + 65536 + 16384, 4096));
		EMIT(reduce(DRM_VACCEL_DTYPE_BF16, op, DATA_VA + 131072,
			    DATA_VA + 131072 + 8192, DATA_VA + 131072 + 16384, 4096));
		ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
		for (i = 0; i < 4096; i++) {
			float r = ref_op(fa[i], fb[i], op);
			_Float16 hx, hy, hr;
			u16 want;

			ASSERT_EQ(0, memcmp(&r, &fd[i], 4)) TH_LOG("f32 op %u i %u", op, i);
			memcpy(&hx, &ha[i], 2);
			memcpy(&hy, &hb[i], 2);
			hr = (_Float16)ref_op((float)hx, (float)hy, op);
			memcpy(&want, &hr, 2);
			if (isnan((float)hr)) {	/* any quiet NaN will do */
				ASSERT_TRUE(isnan(vaccel_core_f16_to_f32(hd[i])));
			} else {
				ASSERT_EQ(want, hd[i]) TH_LOG("f16 op %u i %u", op, i);
			}
			want = ref_bf16(ref_op(bf16_f(ba[i]), bf16_f(bb[i]), op));
			ASSERT_EQ(want, bd[i]) TH_LOG("bf16 op %u i %u", op, i);
		}
	}
}

/* The f16 conversion agrees with the compiler on every f16 bit pattern
 * and on f32 values around every rounding boundary. */
TEST(f16_conversions_exhaustive)
{
	u32 h, k;

	for (h = 0; h < 65536; h++) {
		_Float16 c;
		float f, g;

		memcpy(&c, &h, 2);
		f = (float)c;
		g = vaccel_core_f16_to_f32(h);
		if (isnan(f)) {
			ASSERT_TRUE(isnan(g));
			continue;
		}
		ASSERT_EQ(0, memcmp(&f, &g, 4)) TH_LOG("h 0x%x", h);
		/* f32 neighbours of the value and of the halfway points */
		for (k = 0; k < 8; k++) {
			float x = nextafterf(f, k & 1 ? INFINITY : -INFINITY);
			_Float16 want;
			u16 w;

			if (k & 2)
				x = (f + vaccel_core_f16_to_f32((h + 1) & 0xffff)) / 2;
			if (k & 4)
				x = nextafterf(x, k & 1 ? -INFINITY : INFINITY);
			want = (_Float16)x;
			memcpy(&w, &want, 2);
			if (isnan(x))
				continue;
			ASSERT_EQ(w, vaccel_core_f32_to_f16(x)) TH_LOG("x %a", x);
		}
	}
}

TEST_F(core, signals)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_SIGNAL, SIG_VA + 8, 10, 0, 0);

	p.arg = DRM_VACCEL_SIGNAL_SET;
	EMIT(p);
	p.arg = DRM_VACCEL_SIGNAL_ADD;
	p.operand[1] = 5;
	EMIT(p);
	p.arg = DRM_VACCEL_SIGNAL_MAX;
	p.operand[1] = 12;	/* lower than 15: no change */
	EMIT(p);
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(15, self->sig[1]);
	p.operand[1] = 40;
	EMIT(p);
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(40, self->sig[1]);
	/* MAX orders like WAIT GE: across the wrap, 3 comes after ~0 - 1 */
	self->sig[1] = ~0ull - 1;
	p.operand[1] = 3;
	EMIT(p);
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(3, self->sig[1]);
	p.operand[1] = ~0ull;		/* behind 3 now: no change */
	EMIT(p);
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(3, self->sig[1]);
	EXPECT_EQ(0, self->os.irqs);
}

TEST_F(core, wait_blocks_until_signalled)
{
	EMIT(wait_pkt(SIG_VA, 3, 0, 0, DRM_VACCEL_WAIT_GE));
	EMIT(pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0));
	EXPECT_EQ(VACCEL_CORE_BLOCKED, RUN());
	EXPECT_EQ(SIG_VA, self->q.wait_addr);
	EXPECT_EQ(0, self->q.read_index);
	self->sig[0] = 2;
	EXPECT_EQ(VACCEL_CORE_BLOCKED, RUN());
	self->sig[0] = 3;
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(2, self->q.read_index);
}

TEST(wait_conditions)
{
	/* GE is a sequence-number comparison: right across wrap-around */
	EXPECT_TRUE(vaccel_core_wait_done(5, 5, 0, DRM_VACCEL_WAIT_GE));
	EXPECT_TRUE(vaccel_core_wait_done(6, 5, 0, DRM_VACCEL_WAIT_GE));
	EXPECT_FALSE(vaccel_core_wait_done(4, 5, 0, DRM_VACCEL_WAIT_GE));
	EXPECT_TRUE(vaccel_core_wait_done(2, ~0ull - 1, 0, DRM_VACCEL_WAIT_GE));
	EXPECT_FALSE(vaccel_core_wait_done(~0ull - 1, 2, 0, DRM_VACCEL_WAIT_GE));
	EXPECT_TRUE(vaccel_core_wait_done(7, 7, 0, DRM_VACCEL_WAIT_EQ));
	EXPECT_FALSE(vaccel_core_wait_done(8, 7, 0, DRM_VACCEL_WAIT_EQ));
	EXPECT_TRUE(vaccel_core_wait_done(8, 7, 0, DRM_VACCEL_WAIT_NE));
	/* mask selects the bits compared */
	EXPECT_TRUE(vaccel_core_wait_done(0xff01, 0x01, 0xff, DRM_VACCEL_WAIT_EQ));
	EXPECT_FALSE(vaccel_core_wait_done(0xff01, 0x01, 0xff00, DRM_VACCEL_WAIT_EQ));
}

TEST_F(core, wait_timeout_faults)
{
	EMIT(pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0));
	EMIT(wait_pkt(SIG_VA, 1, 0, 1000, DRM_VACCEL_WAIT_GE));
	EXPECT_EQ(VACCEL_CORE_BLOCKED, RUN());
	self->os.now += 999;
	EXPECT_EQ(VACCEL_CORE_BLOCKED, RUN());
	self->os.now += 1;
	EXPECT_EQ(VACCEL_CORE_FAULT, RUN());
	EXPECT_EQ(DRM_VACCEL_FAULT_WAIT_TIMEOUT, self->q.fault);
	EXPECT_EQ(1, self->q.fault_index);
	EXPECT_EQ(SIG_VA, self->q.fault_addr);
	/* a faulted queue stays faulted */
	self->sig[0] = 1;
	EXPECT_EQ(VACCEL_CORE_FAULT, RUN());
}

/* A timeout so large that now + timeout wraps means "for ever". */
TEST_F(core, wait_huge_timeout_saturates)
{
	self->os.now = 1000000000;
	EMIT(wait_pkt(SIG_VA, 1, 0, ~0ull, DRM_VACCEL_WAIT_GE));
	EXPECT_EQ(VACCEL_CORE_BLOCKED, RUN());
	EXPECT_EQ(~0ull, self->q.deadline);
	self->os.now += 1;
	EXPECT_EQ(VACCEL_CORE_BLOCKED, RUN());
	self->os.now = ~0ull - 1;
	EXPECT_EQ(VACCEL_CORE_BLOCKED, RUN());
	self->sig[0] = 1;
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(0, self->q.fault);
}

/*
 * DELAY makes the queue busy for its time, measured on the clock from
 * when it starts; it never sleeps in the core. Its completion, and the
 * packets after it, wait for the clock.
 */
TEST_F(core, timestamp_and_delay)
{
	struct drm_vaccel_packet d = pkt(DRM_VACCEL_PKT_DELAY, 25000000, 0, 0, 0);
	u64 t;

	self->os.now = 1000;
	EMIT(with_completion(d, SIG_VA, DRM_VACCEL_SIGNAL_SET, 1));
	EMIT(pkt(DRM_VACCEL_PKT_TIMESTAMP, DATA_VA + 8, 0, 0, 0));
	EXPECT_EQ(VACCEL_CORE_BUSY, RUN());
	EXPECT_EQ(1000 + 25000000, self->q.busy_until);
	EXPECT_EQ(0, self->sig[0]);		/* not complete yet */
	self->os.now += 24999999;
	EXPECT_EQ(VACCEL_CORE_BUSY, RUN());
	EXPECT_EQ(0, self->sig[0]);
	EXPECT_EQ(0, self->q.read_index);
	self->os.now += 1;
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(1, self->sig[0]);
	memcpy(&t, self->data + 8, 8);
	EXPECT_EQ(1000 + 25000000, t);
	EXPECT_EQ(2, self->q.read_index);
	EXPECT_EQ(0, self->q.busy_until);

	/* a zero DELAY completes at once */
	EMIT(pkt(DRM_VACCEL_PKT_DELAY, 0, 0, 0, 0));
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
}

TEST_F(core, exec_runs_sealed_buffer_with_epoch)
{
	struct drm_vaccel_packet body[3];
	struct drm_vaccel_packet e;
	u64 va;

	body[0] = pkt(DRM_VACCEL_PKT_COPY, DATA_VA, DATA_VA + 4096, 16, 0);
	body[1] = wait_pkt(SIG_VA, 0, 0, 0, DRM_VACCEL_WAIT_GE);	/* >= epoch */
	body[1].flags = DRM_VACCEL_WAIT_F_EPOCH;
	body[2] = pkt(DRM_VACCEL_PKT_SIGNAL, SIG_VA + 8, 100, 0, 0);
	body[2].arg = DRM_VACCEL_SIGNAL_SET;
	body[2].flags = DRM_VACCEL_SIGNAL_F_EPOCH;
	va = exec_buf(self->exec, 0, body, 3);
	fill_random(self->data, 16, 9);

	e = with_completion(pkt(DRM_VACCEL_PKT_EXEC, va, 3, 7, 0), SIG_VA + 16,
			    DRM_VACCEL_SIGNAL_ADD, 1);
	EMIT(e);
	EXPECT_EQ(VACCEL_CORE_BLOCKED, RUN());	/* waits for signal >= 7 */
	EXPECT_EQ(0, self->q.read_index);
	EXPECT_EQ(1, self->q.depth);
	self->sig[0] = 7;
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(0, memcmp(self->data, self->data + 4096, 16));
	EXPECT_EQ(107, self->sig[1]);
	EXPECT_EQ(1, self->sig[2]);		/* the EXEC's own completion */
	EXPECT_EQ(1, self->q.read_index);	/* one ring slot */
	EXPECT_EQ(4, self->q.packets);
}

/*
 * An EXEC is left only when its last packet has retired, not when it has
 * been fetched. A last packet that takes several steps (a blocked WAIT, a
 * multi-step DELAY, a COPY of several chunks) keeps the EXEC entered: its
 * completion action waits, and the ring advances by exactly one slot.
 * Leaving at fetch let the read index overtake the write index (found by
 * the fuzzer).
 */
TEST_F(core, exec_last_packet_multi_step)
{
	struct drm_vaccel_packet body[2];
	u64 va_wait, va_delay, va_copy;

	body[0] = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	body[1] = wait_pkt(SIG_VA, 1, 0, 0, DRM_VACCEL_WAIT_GE);
	va_wait = exec_buf(self->exec, 0, body, 2);
	body[1] = pkt(DRM_VACCEL_PKT_DELAY, 25000000, 0, 0, 0);	/* busy 25 ms */
	va_delay = exec_buf(self->exec, 128, body, 2);
	body[1] = pkt(DRM_VACCEL_PKT_COPY, DATA_VA, DATA_VA + (2u << 20),
		      3 * VACCEL_CORE_CHUNK, 0);
	va_copy = exec_buf(self->exec, 256, body, 2);
	fill_random(self->data, 3 * VACCEL_CORE_CHUNK, 11);

	EMIT(with_completion(pkt(DRM_VACCEL_PKT_EXEC, va_wait, 2, 0, 0), SIG_VA + 8,
			     DRM_VACCEL_SIGNAL_SET, 1));
	EXPECT_EQ(VACCEL_CORE_BLOCKED, RUN());
	EXPECT_EQ(VACCEL_CORE_BLOCKED, RUN());	/* still blocked, still entered */
	EXPECT_EQ(1, self->q.depth);
	EXPECT_EQ(0, self->q.read_index);
	EXPECT_EQ(0, self->sig[1]);		/* the EXEC has not completed */
	self->sig[0] = 1;
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(1, self->sig[1]);
	EXPECT_EQ(1, self->q.read_index);

	/* budget 1: every call takes one step, so each gap is observable */
	EMIT(with_completion(pkt(DRM_VACCEL_PKT_EXEC, va_delay, 2, 0, 0), SIG_VA + 8,
			     DRM_VACCEL_SIGNAL_SET, 2));
	EMIT(with_completion(pkt(DRM_VACCEL_PKT_EXEC, va_copy, 2, 0, 0), SIG_VA + 16,
			     DRM_VACCEL_SIGNAL_SET, 3));
	for (;;) {
		enum vaccel_core_status st = vaccel_core_run(&self->q, self->wi, 1);

		if (st == VACCEL_CORE_BUSY)
			self->os.now += 1000000;	/* the DELAY's time passes */
		else if (st != VACCEL_CORE_BUDGET)
			break;
		ASSERT_LE(self->q.read_index, self->wi);
		if (self->q.depth) {	/* inside EXEC n: it has not completed */
			ASSERT_EQ(self->q.read_index, self->sig[1]);
			ASSERT_EQ(0, self->sig[2]);
		}
	}
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(3, self->q.read_index);
	EXPECT_EQ(2, self->sig[1]);
	EXPECT_EQ(3, self->sig[2]);
	EXPECT_EQ(0, memcmp(self->data, self->data + (2u << 20), 3 * VACCEL_CORE_CHUNK));
	EXPECT_EQ(9, self->q.packets);		/* 3 EXECs, 6 packets inside */
	EXPECT_EQ(0, self->os.maps);
}

/*
 * Every packet of an EXEC body comes from a sealed buffer, not only the
 * first: a body range rebound to an unsealed buffer while the EXEC waits
 * faults at the next fetch.
 */
TEST_F(core, exec_body_must_stay_sealed)
{
	struct drm_vaccel_packet body[2];
	unsigned int i;

	body[0] = wait_pkt(SIG_VA, 1, 0, 0, DRM_VACCEL_WAIT_GE);
	body[1] = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	exec_buf(self->exec, 0, body, 2);
	EMIT(pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA, 2, 0, 0));
	EXPECT_EQ(VACCEL_CORE_BLOCKED, RUN());
	for (i = 0; i < self->os.nregions; i++)
		if (self->os.regions[i].va == EXEC_VA)
			self->os.regions[i].sealed = false;	/* "rebound" */
	self->sig[0] = 1;
	EXPECT_EQ(VACCEL_CORE_FAULT, RUN());
	EXPECT_EQ(DRM_VACCEL_FAULT_NOT_SEALED, self->q.fault);
	EXPECT_EQ(0, self->q.fault_index);
	EXPECT_EQ(EXEC_VA + 64, self->q.fault_addr);
	EXPECT_EQ(0, self->os.maps);
}

TEST_F(core, exec_requires_sealed)
{
	EMIT(pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0));
	EMIT(pkt(DRM_VACCEL_PKT_EXEC, UNSEALED_VA, 1, 0, 0));
	EXPECT_EQ(VACCEL_CORE_FAULT, RUN());
	EXPECT_EQ(DRM_VACCEL_FAULT_NOT_SEALED, self->q.fault);
	EXPECT_EQ(1, self->q.fault_index);
	EXPECT_EQ(UNSEALED_VA, self->q.fault_addr);
}

TEST_F(core, exec_nesting_bounded)
{
	struct drm_vaccel_packet p;
	unsigned int level;

	/* buffer L at EXEC_VA + 64 * L execs buffer L + 1; the last is a NOP */
	for (level = 0; level < 6; level++) {
		p = pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA + 64 * (level + 1), 1, 0, 0);
		exec_buf(self->exec, 64 * level, &p, 1);
	}
	p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	/* depth 4 allowed: ring EXEC -> 3 nested EXECs -> NOP */
	exec_buf(self->exec, 64 * 3, &p, 1);
	EMIT(pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA, 1, 0, 0));
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(1, self->q.read_index);

	/* one level more faults */
	p = pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA + 64 * 5, 1, 0, 0);
	exec_buf(self->exec, 64 * 3, &p, 1);
	EMIT(pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA, 1, 0, 0));
	EXPECT_EQ(VACCEL_CORE_FAULT, RUN());
	EXPECT_EQ(DRM_VACCEL_FAULT_EXEC_DEPTH, self->q.fault);
	EXPECT_EQ(EXEC_VA + 64 * 3, self->q.fault_addr);
	EXPECT_EQ(0, self->os.maps);
}

/*
 * Seed 004: persistent work must not touch ring accounting. 10,000 EXECs
 * of a 5-packet buffer interleaved with eager packets through a 64-slot
 * ring: every EXEC takes exactly one slot, the ring never holds more than
 * its size, and nothing hangs.
 */
TEST_F(core, seed004_exec_takes_one_ring_slot)
{
	struct drm_vaccel_packet body[5];
	unsigned int i, launched = 0, eager = 0;
	u64 va;

	for (i = 0; i < 5; i++) {
		body[i] = pkt(DRM_VACCEL_PKT_SIGNAL, SIG_VA, 1, 0, 0);
		body[i].arg = DRM_VACCEL_SIGNAL_ADD;
	}
	va = exec_buf(self->exec, 0, body, 5);
	while (launched < 10000) {
		/* fill whatever room the ring has, never more */
		while (self->wi - self->q.read_index < RING_N && launched < 10000) {
			if (self->wi % 3 == 2) {
				EMIT(pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0));
				eager++;
			} else {
				EMIT(pkt(DRM_VACCEL_PKT_EXEC, va, 5, launched, 0));
				launched++;
			}
		}
		ASSERT_LE(self->wi - self->q.read_index, RING_N);
		ASSERT_NE(VACCEL_CORE_FAULT, vaccel_core_run(&self->q, self->wi, 50));
	}
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(launched + eager, self->q.read_index);
	EXPECT_EQ(5ull * launched, self->sig[0]);
	EXPECT_EQ(6ull * launched + eager, self->q.packets);
}

/*
 * Seed 001: replayed and eager work share one monotonic counter with no
 * reset. Each round, a replay adds 1 and an eager SIGNAL adds 1, and a
 * WAIT for the running total (>=) follows each: no wait is ever missed,
 * and the counter only grows.
 */
TEST_F(core, seed001_shared_monotonic_signal)
{
	struct drm_vaccel_packet body = pkt(DRM_VACCEL_PKT_SIGNAL, SIG_VA, 1, 0, 0);
	struct drm_vaccel_packet eager = pkt(DRM_VACCEL_PKT_SIGNAL, SIG_VA, 1, 0, 0);
	u64 va, expect = 0, last = 0;
	unsigned int round;

	body.arg = DRM_VACCEL_SIGNAL_ADD;
	eager.arg = DRM_VACCEL_SIGNAL_ADD;
	va = exec_buf(self->exec, 0, &body, 1);
	for (round = 0; round < 1000; round++) {
		EMIT(pkt(DRM_VACCEL_PKT_EXEC, va, 1, round, 0));
		EMIT(wait_pkt(SIG_VA, ++expect, 0, 0, DRM_VACCEL_WAIT_GE));
		EMIT(eager);
		EMIT(wait_pkt(SIG_VA, ++expect, 0, 0, DRM_VACCEL_WAIT_GE));
		ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
		ASSERT_LT(last, self->sig[0]);
		last = self->sig[0];
	}
	EXPECT_EQ(2000, self->sig[0]);
	EXPECT_EQ(4000, self->q.read_index);
}

/* Every invalid packet: the queue faults with the right record. */
TEST_F(core, invalid_packets)
{
	struct bad { struct drm_vaccel_packet p; u32 fault; u64 addr; };
	struct bad b[48];
	unsigned int n = 0, i;

#define BAD(pk, f, a)	(b[n].p = (pk), b[n].fault = (f), b[n].addr = (a), n++)
	{
		struct drm_vaccel_packet p;

		p = pkt(10, 0, 0, 0, 0);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* unknown type */
		p = pkt(DRM_VACCEL_PKT_NOP | 0x4000, 0, 0, 0, 0);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* reserved bit */
		p = pkt(DRM_VACCEL_PKT_NOP | 3 << DRM_VACCEL_PKT_ACQUIRE_SHIFT, 0, 0, 0, 0);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* bad scope */
		p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0); p.reserved = 1;
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);
		p = pkt(DRM_VACCEL_PKT_NOP, 1, 0, 0, 0);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* operand */
		p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0); p.flags = 1;
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);
		p = with_completion(pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0), SIG_VA, 4, 1);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* completion op */
		p = with_completion(pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0), SIG_VA, 0, 1);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* value, no op */
		p = with_completion(pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0), SIG_VA + 4, 1, 1);
		BAD(p, DRM_VACCEL_FAULT_ALIGNMENT, RING_VA);
		p = pkt(DRM_VACCEL_PKT_NOP | DRM_VACCEL_PKT_IRQ, 0, 0, 0, 0);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* IRQ, no signal */
		p = with_completion(pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0), DATA_VA, 1, 1);
		BAD(p, DRM_VACCEL_FAULT_NOT_SIGNAL, DATA_VA);
		p = pkt(DRM_VACCEL_PKT_COPY, DATA_VA, DATA_VA + 8, 16, 0);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* overlap */
		p = pkt(DRM_VACCEL_PKT_COPY, DATA_VA, 0x900000000ull, ~0ull - DATA_VA + 8, 0);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* wraps */
		/* bit 63 makes a binding address, which needs an EXEC */
		p = pkt(DRM_VACCEL_PKT_COPY, ~0ull - 8, DATA_VA, 16, 0);
		BAD(p, DRM_VACCEL_FAULT_BINDING, ~0ull - 8);
		p = pkt(DRM_VACCEL_PKT_COPY, 0x900000000ull, DATA_VA, 16, 0);
		BAD(p, DRM_VACCEL_FAULT_UNMAPPED, 0x900000000ull);
		p = pkt(DRM_VACCEL_PKT_COPY, DATA_VA, RO_VA, 16, 0);
		BAD(p, DRM_VACCEL_FAULT_ACCESS, RO_VA);
		p = pkt(DRM_VACCEL_PKT_COPY, WO_VA, DATA_VA, 16, 0);
		BAD(p, DRM_VACCEL_FAULT_ACCESS, WO_VA);
		p = pkt(DRM_VACCEL_PKT_COPY, DATA_VA + DATA_SIZE - 8, DATA_VA, 16, 0);
		BAD(p, DRM_VACCEL_FAULT_UNMAPPED, DATA_VA + DATA_SIZE);	/* runs off */
		p = pkt(DRM_VACCEL_PKT_FILL, DATA_VA, 16, 0, 0); p.arg = 3;
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* width */
		p = pkt(DRM_VACCEL_PKT_FILL, DATA_VA, 16, 0x100, 0); p.arg = 1;
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* pattern */
		p = pkt(DRM_VACCEL_PKT_FILL, DATA_VA, 15, 0, 0); p.arg = 4;
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* size */
		p = pkt(DRM_VACCEL_PKT_FILL, DATA_VA + 2, 16, 0, 0); p.arg = 4;
		BAD(p, DRM_VACCEL_FAULT_ALIGNMENT, RING_VA);
		p = reduce(6, 0, DATA_VA, DATA_VA + 64, DATA_VA + 128, 4);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* dtype */
		p = reduce(0, 4, DATA_VA, DATA_VA + 64, DATA_VA + 128, 4);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* op */
		p = reduce(0, 0, DATA_VA + 2, DATA_VA + 64, DATA_VA + 128, 4);
		BAD(p, DRM_VACCEL_FAULT_ALIGNMENT, RING_VA);
		p = reduce(0, 0, DATA_VA, DATA_VA + 64, DATA_VA + 4, 4);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* partial overlap */
		p = reduce(4, 0, DATA_VA, DATA_VA + 64, DATA_VA + 128, 1ull << 62);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* size overflow */
		p = pkt(DRM_VACCEL_PKT_SIGNAL, SIG_VA, 1, 0, 0);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* op NONE */
		p = pkt(DRM_VACCEL_PKT_SIGNAL, SIG_VA + 4, 1, 0, 0); p.arg = 1;
		BAD(p, DRM_VACCEL_FAULT_ALIGNMENT, RING_VA);
		p = pkt(DRM_VACCEL_PKT_SIGNAL, DATA_VA, 1, 0, 0); p.arg = 1;
		BAD(p, DRM_VACCEL_FAULT_NOT_SIGNAL, DATA_VA);
		p = wait_pkt(SIG_VA, 1, 0, 0, 3);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* cond */
		p = wait_pkt(0x900000000ull, 1, 0, 0, 0);
		BAD(p, DRM_VACCEL_FAULT_UNMAPPED, 0x900000000ull);
		p = pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA, 0, 0, 0);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* empty */
		p = pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA + 8, 1, 0, 0);
		BAD(p, DRM_VACCEL_FAULT_ALIGNMENT, RING_VA);
		p = pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA, 4097, 0, 0);
		BAD(p, DRM_VACCEL_FAULT_UNMAPPED, EXEC_VA);		/* past the buffer */
		p = pkt(DRM_VACCEL_PKT_TIMESTAMP, DATA_VA + 4, 0, 0, 0);
		BAD(p, DRM_VACCEL_FAULT_ALIGNMENT, RING_VA);
		p = pkt(DRM_VACCEL_PKT_TIMESTAMP, RO_VA, 0, 0, 0);
		BAD(p, DRM_VACCEL_FAULT_ACCESS, RO_VA);
		p = pkt(DRM_VACCEL_PKT_DELAY, VACCEL_CORE_MAX_DELAY_NS + 1, 0, 0, 0);
		BAD(p, DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);
	}
#undef BAD
	for (i = 0; i < n; i++) {
		vaccel_core_queue_init(&self->q, &self->os, RING_VA, RING_N);
		os_track_reset(&self->os);
		self->q.read_index = 0;
		self->wi = 0;
		EMIT(b[i].p);
		ASSERT_EQ(VACCEL_CORE_FAULT, RUN()) TH_LOG("packet %u", i);
		EXPECT_EQ(b[i].fault, self->q.fault) TH_LOG("packet %u", i);
		EXPECT_EQ(0, self->q.fault_index) TH_LOG("packet %u", i);
		EXPECT_EQ(b[i].addr, self->q.fault_addr) TH_LOG("packet %u", i);
		EXPECT_EQ(0, self->os.maps) TH_LOG("packet %u leaked a mapping", i);
	}
}

/* The budget bounds the work of one call, whatever the packets. */
TEST_F(core, budget_bounds_each_call)
{
	unsigned int i;

	for (i = 0; i < 40; i++)
		EMIT(pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0));
	EXPECT_EQ(VACCEL_CORE_BUDGET, vaccel_core_run(&self->q, self->wi, 16));
	EXPECT_EQ(16, self->q.read_index);
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(40, self->q.read_index);
}

TEST_HARNESS_MAIN
