// SPDX-License-Identifier: GPL-2.0-only
/*
 * MATMUL arithmetic: elements of C = A x B (+ C), products and sums in
 * f32, in a fixed order (k ascending), so a host reference computing the
 * same sums gets the same bits. f16 and bf16 inputs are widened to f32
 * exactly. In the kernel this file is built with floating point enabled
 * (CC_FLAGS_FPU) and every call is bracketed by vaccel_os_fpu_begin()/end().
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
 * vaccel_core_matmul() - compute elements of C
 * @c: C, f32, mapped
 * @a: A, mapped
 * @b: B, mapped
 * @d: the validated descriptor (leading dimensions, sizes)
 * @dtype: input dtype, DRM_VACCEL_DTYPE_F32, _F16 or _BF16
 * @accumulate: add to C instead of overwriting it
 * @from: first element, as row * n + column
 * @to: end element, at most m * n
 */
void vaccel_core_matmul(float *c, const void *a, const void *b,
			const struct drm_vaccel_matmul *d, u32 dtype,
			bool accumulate, u64 from, u64 to)
{
	u64 e, kk;

	for (e = from; e < to; e++) {
		u64 r = e / d->n, col = e % d->n;
		float *out = c + r * d->ldc + col;
		float acc = accumulate ? *out : 0.0f;

		for (kk = 0; kk < d->k; kk++)
			acc += load(a, r * d->lda + kk, dtype) *
			       load(b, kk * d->ldb + col, dtype);
		*out = acc;
	}
}
