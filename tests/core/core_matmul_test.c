// SPDX-License-Identifier: GPL-2.0-only
/*
 * Native tests of the MATMUL packet: results bit-exact against the
 * reference in tests/include/float_ref.h for f32, f16 and bf16 inputs,
 * with and without accumulation and with padded leading dimensions; the
 * work per step is bounded; FPU sections end on the clock, in the middle
 * of an element if need be, without changing a bit of the result; the
 * link model is charged the bytes a step reads; every invalid descriptor
 * faults with its record; operands can come from an EXEC binding table.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "float_ref.h"

#include "core_fixture.h"

#define DESC_VA		(DATA_VA + 0x3f0000)	/* 64-byte aligned */
#define A_VA		(DATA_VA)
#define B_VA		(DATA_VA + 0x100000)
#define C_VA		(DATA_VA + 0x200000)
#define LINK_VA		0x800000000ull	/* the link test's own regions */

static struct drm_vaccel_packet matmul_pkt(u64 desc, u16 dtype, u32 flags)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_MATMUL, desc, 0, 0, 0);

	p.arg = dtype;
	p.flags = flags;
	return p;
}

/* Random inputs of @dtype: small integers and fractions, some negative. */
static void fill_matrix(void *m, u64 n, unsigned int dtype, unsigned int seed)
{
	u64 i;

	srand(seed);
	for (i = 0; i < n; i++) {
		float x = (float)(rand() % 201 - 100) / 16.0f;
		_Float16 h = (_Float16)x;
		u16 b = ref_bf16(x);

		if (dtype == DRM_VACCEL_DTYPE_F32)
			memcpy((u8 *)m + 4 * i, &x, 4);
		else if (dtype == DRM_VACCEL_DTYPE_F16)
			memcpy((u8 *)m + 2 * i, &h, 2);
		else
			memcpy((u8 *)m + 2 * i, &b, 2);
	}
}

TEST_F(core, matmul_matches_reference)
{
	static const struct { u32 m, n, k, pad; u16 dtype; bool acc; } c[] = {
		{ 1, 1, 1, 0, DRM_VACCEL_DTYPE_F32, false },
		{ 17, 9, 33, 3, DRM_VACCEL_DTYPE_F32, false },
		{ 16, 16, 16, 0, DRM_VACCEL_DTYPE_F32, true },
		{ 64, 48, 32, 5, DRM_VACCEL_DTYPE_F16, false },
		{ 31, 7, 129, 1, DRM_VACCEL_DTYPE_BF16, true },
		{ 3, 200, 300, 0, DRM_VACCEL_DTYPE_F16, true },
	};
	struct drm_vaccel_matmul *d = (void *)(self->data + (DESC_VA - DATA_VA));
	float *want = malloc(1u << 20);
	unsigned int i;

	ASSERT_NE(NULL, want);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		float *cm = (float *)(self->data + (C_VA - DATA_VA));
		u64 csize;

		memset(d, 0, sizeof(*d));
		d->a = A_VA;
		d->b = B_VA;
		d->c = C_VA;
		d->m = c[i].m;
		d->n = c[i].n;
		d->k = c[i].k;
		d->lda = c[i].k + c[i].pad;
		d->ldb = c[i].n + c[i].pad;
		d->ldc = c[i].n + 2 * c[i].pad;
		fill_matrix(self->data, (u64)d->m * d->lda, c[i].dtype, 100 + i);
		fill_matrix(self->data + (B_VA - DATA_VA), (u64)d->k * d->ldb, c[i].dtype,
			    200 + i);
		csize = (u64)d->m * d->ldc;
		fill_matrix(cm, csize, DRM_VACCEL_DTYPE_F32, 300 + i);
		memcpy(want, cm, csize * 4);
		ref_matmul(want, self->data, self->data + (B_VA - DATA_VA), d, c[i].dtype,
			   c[i].acc);

		EMIT(with_completion(matmul_pkt(DESC_VA, c[i].dtype,
						c[i].acc ? DRM_VACCEL_MATMUL_F_ACCUMULATE : 0),
				     SIG_VA, DRM_VACCEL_SIGNAL_ADD, 1));
		ASSERT_EQ(VACCEL_CORE_IDLE, RUN()) TH_LOG("case %u fault %u", i, self->q.fault);
		/* padding between rows of C is left alone too */
		ASSERT_EQ(0, memcmp(want, cm, csize * 4)) TH_LOG("case %u", i);
		EXPECT_EQ(i + 1, self->sig[0]);
	}
	EXPECT_EQ(0, self->os.maps);
	free(want);
}

/* A step computes at most max(VACCEL_CORE_MATMUL_STEP, k) multiply-adds. */
TEST_F(core, matmul_steps_are_bounded)
{
	struct drm_vaccel_matmul *d = (void *)(self->data + (DESC_VA - DATA_VA));
	unsigned int steps = 0;
	enum vaccel_core_status st;

	memset(d, 0, sizeof(*d));
	d->a = A_VA;
	d->b = B_VA;
	d->c = C_VA;
	d->m = 64;
	d->n = 64;
	d->k = 64;
	d->lda = d->ldb = d->ldc = 64;
	EMIT(matmul_pkt(DESC_VA, DRM_VACCEL_DTYPE_F32, 0));
	do {
		u64 before = self->q.progress;

		st = vaccel_core_run(&self->q, self->wi, 1);
		if (self->q.have_pkt && self->q.have_mm)
			ASSERT_LE((self->q.progress - before) * d->k, VACCEL_CORE_MATMUL_STEP);
		steps++;
	} while (st == VACCEL_CORE_BUDGET);
	EXPECT_EQ(VACCEL_CORE_IDLE, st);
	/* fetch + descriptor, 64^3 / 16384 = 16 compute steps, idle check */
	EXPECT_EQ(1 + 16 + 1, steps);
}

/*
 * FPU sections are bounded in time, not only in multiply-adds: with a
 * clock that moves 10 us at every read, no section lasts past the first
 * check after VACCEL_CORE_FPU_NS, checks come every VACCEL_CORE_FPU_CHECK
 * multiply-adds, so a step of 16,384 multiply-adds takes dozens of
 * sections, ending in the middle of elements (k = 300); the result is the
 * reference's to the bit. (One section per step before.)
 */
TEST_F(core, matmul_fpu_sections_end_on_time)
{
	struct drm_vaccel_matmul *d = (void *)(self->data + (DESC_VA - DATA_VA));
	float *cm = (float *)(self->data + (C_VA - DATA_VA)), *want = malloc(1u << 20);
	u64 macs, csize, sections;

	ASSERT_NE(NULL, want);
	memset(d, 0, sizeof(*d));
	d->a = A_VA;
	d->b = B_VA;
	d->c = C_VA;
	d->m = 17;
	d->n = 23;
	d->k = 300;
	d->lda = 301;
	d->ldb = 29;
	d->ldc = 24;
	fill_matrix(self->data, (u64)d->m * d->lda, DRM_VACCEL_DTYPE_F16, 1);
	fill_matrix(self->data + (B_VA - DATA_VA), (u64)d->k * d->ldb, DRM_VACCEL_DTYPE_F16, 2);
	csize = (u64)d->m * d->ldc;
	fill_matrix(cm, csize, DRM_VACCEL_DTYPE_F32, 3);
	memcpy(want, cm, csize * 4);
	ref_matmul(want, self->data, self->data + (B_VA - DATA_VA), d, DRM_VACCEL_DTYPE_F16, 1);

	self->os.tick = 10000;
	EMIT(matmul_pkt(DESC_VA, DRM_VACCEL_DTYPE_F16, DRM_VACCEL_MATMUL_F_ACCUMULATE));
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN()) TH_LOG("fault %u", self->q.fault);
	EXPECT_EQ(0, memcmp(want, cm, csize * 4));
	macs = (u64)d->m * d->n * d->k;
	sections = self->os.fpu_sections;
	TH_LOG("%llu multiply-adds in %llu FPU sections", (unsigned long long)macs,
	       (unsigned long long)sections);
	/* each section: at most budget / tick + 1 checks of CHECK multiply-adds */
	EXPECT_GE(sections * (VACCEL_CORE_FPU_NS / 10000 + 1) * VACCEL_CORE_FPU_CHECK, macs);
	free(want);
}

/* Bytes of @d's matrices elements [from, to) of C read: a brute-force oracle. */
static void mm_touched(const struct drm_vaccel_matmul *d, unsigned int es, u64 from, u64 to,
		       u64 *a, u64 *b, u64 *c)
{
	static bool row[4096], col[4096];
	u64 e, rows = 0, cols = 0;

	memset(row, 0, sizeof(row));
	memset(col, 0, sizeof(col));
	for (e = from; e < to; e++) {
		rows += !row[e / d->n];
		cols += !col[e % d->n];
		row[e / d->n] = col[e % d->n] = true;
	}
	*a += rows * d->k * es;
	*b += cols * d->k * es;
	*c += (to - from) * 4;
}

/*
 * The link model is charged what a step reads, not the extents: per step
 * the rows of A and the columns of B its elements use (k elements each)
 * and its elements of C, against an oracle that marks them one by one.
 * (Each step was charged the whole of A, B and C, padding included: a
 * 64 x 64 x 64 product charged 16 times its A and C.)
 */
TEST(matmul_link_charge_is_what_a_step_reads)
{
	static const struct { u32 m, n, k, pad; u16 dtype; } c[] = {
		{ 64, 64, 64, 0, DRM_VACCEL_DTYPE_F32 },
		{ 3, 100, 200, 7, DRM_VACCEL_DTYPE_F16 },
		{ 40, 1, 700, 300, DRM_VACCEL_DTYPE_BF16 },
		{ 1, 300, 1, 0, DRM_VACCEL_DTYPE_F32 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct os_native os = { 0 };
		struct vaccel_core_queue q;
		struct drm_vaccel_packet *ring;
		struct drm_vaccel_matmul *d;
		unsigned int es = c[i].dtype == DRM_VACCEL_DTYPE_F32 ? 4 : 2;
		u64 a = 0, b = 0, cc = 0, per, p, total;

		/* regions 2, 3 and 4: A, B and C */
		ring = (void *)os_add(&os, RING_VA, RING_N * 64, DRM_VACCEL_VM_READ, false, false);
		d = (void *)os_add(&os, LINK_VA, 4096, DRM_VACCEL_VM_READ, false, false);
		os_add(&os, LINK_VA + (1ull << 30), 1u << 20, DRM_VACCEL_VM_READ, false, false);
		os_add(&os, LINK_VA + (2ull << 30), 1u << 20, DRM_VACCEL_VM_READ, false, false);
		os_add(&os, LINK_VA + (3ull << 30), 1u << 20,
		       DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE, false, false);
		d->a = LINK_VA + (1ull << 30);
		d->b = LINK_VA + (2ull << 30);
		d->c = LINK_VA + (3ull << 30);
		d->m = c[i].m;
		d->n = c[i].n;
		d->k = c[i].k;
		d->lda = c[i].k + c[i].pad;
		d->ldb = c[i].n + c[i].pad;
		d->ldc = c[i].n + c[i].pad;
		ring[0] = matmul_pkt(LINK_VA, c[i].dtype, 0);
		vaccel_core_queue_init(&q, &os, RING_VA, RING_N);
		ASSERT_EQ(VACCEL_CORE_IDLE, vaccel_core_run(&q, 1, 1u << 20)) TH_LOG("case %u", i);
		total = (u64)d->m * d->n;
		per = VACCEL_CORE_MATMUL_STEP / d->k ? VACCEL_CORE_MATMUL_STEP / d->k : 1;
		for (p = 0; p < total; p += per)
			mm_touched(d, es, p, p + per < total ? p + per : total, &a, &b, &cc);
		EXPECT_EQ(a, os.charged[2]) TH_LOG("case %u: A", i);
		EXPECT_EQ(b, os.charged[3]) TH_LOG("case %u: B", i);
		EXPECT_EQ(cc, os.charged[4]) TH_LOG("case %u: C", i);
		EXPECT_EQ(0, os.maps);
		os_free(&os);
	}
}

TEST_F(core, matmul_invalid)
{
	struct drm_vaccel_matmul *d = (void *)(self->data + (DESC_VA - DATA_VA));
	struct drm_vaccel_matmul good = {
		.a = A_VA, .b = B_VA, .c = C_VA, .m = 4, .n = 4, .k = 4,
		.lda = 4, .ldb = 4, .ldc = 4,
	};
	struct { struct drm_vaccel_matmul d; struct drm_vaccel_packet p; u32 fault;
		 u64 addr; } c[24];
	unsigned int n = 0, i;

#define CASE(f, a) (c[n].d = m, c[n].p = p, c[n].fault = (f), c[n].addr = (a), n++)
	{
		struct drm_vaccel_matmul m = good;
		struct drm_vaccel_packet p = matmul_pkt(DESC_VA, DRM_VACCEL_DTYPE_F32, 0);

		p.arg = DRM_VACCEL_DTYPE_I32;
		CASE(DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* dtype */
		p = matmul_pkt(DESC_VA, DRM_VACCEL_DTYPE_F32, 2);
		CASE(DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* flags */
		p = matmul_pkt(DESC_VA, DRM_VACCEL_DTYPE_F32, 0);
		p.operand[1] = 1;
		CASE(DRM_VACCEL_FAULT_BAD_PACKET, RING_VA);		/* operand */
		p = matmul_pkt(DESC_VA + 8, DRM_VACCEL_DTYPE_F32, 0);
		CASE(DRM_VACCEL_FAULT_ALIGNMENT, RING_VA);
		p = matmul_pkt(0x900000000ull, DRM_VACCEL_DTYPE_F32, 0);
		CASE(DRM_VACCEL_FAULT_UNMAPPED, 0x900000000ull);
		p = matmul_pkt(DESC_VA, DRM_VACCEL_DTYPE_F32, 0);
		m.m = 0;
		CASE(DRM_VACCEL_FAULT_BAD_PACKET, DESC_VA);
		m = good; m.k = DRM_VACCEL_MATMUL_MAX_DIM + 1;
		m.lda = m.k;
		CASE(DRM_VACCEL_FAULT_BAD_PACKET, DESC_VA);
		m = good; m.lda = 3;
		CASE(DRM_VACCEL_FAULT_BAD_PACKET, DESC_VA);
		m = good; m.ldc = 3;
		CASE(DRM_VACCEL_FAULT_BAD_PACKET, DESC_VA);
		m = good; m.reserved[1] = 1;
		CASE(DRM_VACCEL_FAULT_BAD_PACKET, DESC_VA);
		m = good; m.c = A_VA + 32;			/* C overlaps A */
		CASE(DRM_VACCEL_FAULT_BAD_PACKET, DESC_VA);
		m = good; m.b = B_VA + 2;
		CASE(DRM_VACCEL_FAULT_ALIGNMENT, B_VA + 2);
		m = good; m.c = RO_VA;				/* C read-only */
		CASE(DRM_VACCEL_FAULT_ACCESS, RO_VA);
		m = good; m.a = DATA_VA + DATA_SIZE - 32;	/* A runs off */
		CASE(DRM_VACCEL_FAULT_UNMAPPED, DATA_VA + DATA_SIZE - 32);
		m = good; m.a = DRM_VACCEL_BINDING_ADDR(0, 0);	/* no EXEC */
		CASE(DRM_VACCEL_FAULT_BINDING, DRM_VACCEL_BINDING_ADDR(0, 0));
	}
#undef CASE
	for (i = 0; i < n; i++) {
		vaccel_core_queue_init(&self->q, &self->os, RING_VA, RING_N);
		os_track_reset(&self->os);
		self->wi = 0;
		*d = c[i].d;
		EMIT(c[i].p);
		ASSERT_EQ(VACCEL_CORE_FAULT, RUN()) TH_LOG("case %u", i);
		EXPECT_EQ(c[i].fault, self->q.fault) TH_LOG("case %u", i);
		EXPECT_EQ(c[i].addr, self->q.fault_addr) TH_LOG("case %u", i);
		EXPECT_EQ(0, self->os.maps) TH_LOG("case %u", i);
	}
}

/* A sealed graph's MATMUL takes its matrices from the launch's bindings. */
TEST_F(core, matmul_operands_from_bindings)
{
	struct drm_vaccel_matmul *d = (void *)(self->exec + 4096);
	struct drm_vaccel_packet body = matmul_pkt(EXEC_VA + 4096, DRM_VACCEL_DTYPE_F32, 0);
	struct drm_vaccel_packet e;
	u64 *table = (u64 *)(self->data + 0x3e0000);
	float want[4 * 4];
	unsigned int launch;

	memset(d, 0, sizeof(*d));
	d->a = DRM_VACCEL_BINDING_ADDR(0, 0);
	d->b = DRM_VACCEL_BINDING_ADDR(1, 0);
	d->c = DRM_VACCEL_BINDING_ADDR(2, 0);
	d->m = d->n = d->k = 4;
	d->lda = d->ldb = d->ldc = 4;
	exec_buf(self->exec, 0, &body, 1);
	for (launch = 0; launch < 3; launch++) {
		u8 *a = self->data + launch * 4096, *b = a + 1024;
		float *cm = (float *)(a + 2048);

		fill_matrix(a, 16, DRM_VACCEL_DTYPE_F32, launch);
		fill_matrix(b, 16, DRM_VACCEL_DTYPE_F32, 10 + launch);
		table[3 * launch] = DATA_VA + launch * 4096;
		table[3 * launch + 1] = DATA_VA + launch * 4096 + 1024;
		table[3 * launch + 2] = DATA_VA + launch * 4096 + 2048;
		e = pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA, 1, 0, DATA_VA + 0x3e0000 + 24 * launch);
		e.arg = 3;
		EMIT(e);
		ASSERT_EQ(VACCEL_CORE_IDLE, RUN()) TH_LOG("fault %u", self->q.fault);
		ref_matmul(want, a, b, d, DRM_VACCEL_DTYPE_F32, 0);
		EXPECT_EQ(0, memcmp(want, cm, sizeof(want))) TH_LOG("launch %u", launch);
	}
}

TEST_HARNESS_MAIN
