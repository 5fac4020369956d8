// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * MATMUL arithmetic: elements of C = A x B (+ C), products and sums in
 * f32, in a fixed order (k ascending), so a host reference computing the
 * same sums gets the same bits. f16 and bf16 inputs are widened to f32
 * exactly. In the kernel this file is built with floating point enabled
 * (CC_FLAGS_FPU) and every call is bracketed by vaccel_os_fpu_begin()/end():
 * one call is one FPU section, bounded in time.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "vaccel_core.h"
#include "vaccel_reduce.h"

static float load(const void *base, u64 i, u32 dtype)
{
	const u16 *h = base;
	float f;

	switch (dtype) {
	case DRM_VACCEL_DTYPE_F16:
		return vaccel_core_f16_to_f32(h[i]);
	case DRM_VACCEL_DTYPE_BF16:
		return vaccel_core_bf16_to_f32(h[i]);
	}
	memcpy(&f, (const u8 *)base + 4 * i, 4);
	return f;
}

/**
 * vaccel_core_matmul() - compute elements of C in one FPU section
 * @os: the queue's OS layer pointer, for its clock
 * @c: C, f32, mapped
 * @a: A, mapped
 * @b: B, mapped
 * @d: the validated descriptor (leading dimensions, sizes)
 * @dtype: input dtype, DRM_VACCEL_DTYPE_F32, _F16 or _BF16
 * @accumulate: add to C instead of overwriting it
 * @pos: where to start; updated to where to go on
 * @to: end element, at most m * n
 *
 * The section is bounded in time, not only in multiply-adds: strided
 * loads (a large ldb puts every load of a column on a new page) and
 * subnormal operands (the slow path of real FPUs) make a multiply-add
 * cost anything from a cycle to hundreds. The clock is read every
 * VACCEL_CORE_FPU_CHECK multiply-adds, and the section ends at the first
 * reading VACCEL_CORE_FPU_NS or more after it began, in the middle of an
 * element if need be.
 */
void vaccel_core_matmul(void *os, float *c, const void *a, const void *b,
			const struct drm_vaccel_matmul *d, u32 dtype,
			bool accumulate, struct vaccel_core_mm_pos *pos, u64 to)
{
	u64 start = vaccel_os_now_ns(os), e = pos->e, kk = pos->k;
	u64 left = VACCEL_CORE_FPU_CHECK;
	float acc;

	memcpy(&acc, &pos->acc, 4);
	while (e < to) {
		u64 r = e / d->n, col = e % d->n, end;
		float *out = c + r * d->ldc + col;

		if (!kk)
			acc = accumulate ? *out : 0.0f;
		end = d->k - kk < left ? d->k : kk + left;
		left -= end - kk;
		for (; kk < end; kk++)
			acc += load(a, r * d->lda + kk, dtype) *
			       load(b, kk * d->ldb + col, dtype);
		if (kk == d->k) {
			*out = acc;
			e++;
			kk = 0;
		}
		if (!left) {
			left = VACCEL_CORE_FPU_CHECK;
			if (vaccel_os_now_ns(os) - start >= VACCEL_CORE_FPU_NS)
				break;
		}
	}
	pos->e = e;
	pos->k = kk;
	memcpy(&pos->acc, &acc, 4);
}
