/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reference arithmetic for REDUCE tests, written independently of the
 * packet core: libm's fminf/fmaxf/isnan for the ops, and bf16 rounding by
 * double arithmetic (frexp/ldexp/nearbyint) instead of bit manipulation.
 * Used by the native core tests and by the kselftests.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef FLOAT_REF_H
#define FLOAT_REF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <drm/vaccel_accel.h>

/* x op y in f32; MIN and MAX propagate NaN. */
static inline float ref_op(float x, float y, unsigned int op)
{
	switch (op) {
	case DRM_VACCEL_REDOP_SUM:
		return x + y;
	case DRM_VACCEL_REDOP_PROD:
		return x * y;
	case DRM_VACCEL_REDOP_MIN:
		return isnan(x) ? x : isnan(y) ? y : fminf(x, y);
	default:
		return isnan(x) ? x : isnan(y) ? y : fmaxf(x, y);
	}
}

/* f32 to bf16: round to 8 significant bits, nearest even; quiet NaN. */
static inline uint16_t ref_bf16(float f)
{
	double d = f, m;
	uint32_t u;
	int e;

	if (!isnan(f) && !isinf(f) && f != 0) {
		m = frexp(d, &e);	/* d = m * 2^e, 0.5 <= |m| < 1 */
		d = e < -125 ? ldexp(nearbyint(ldexp(d, 133)), -133)	/* subnormal */
			     : ldexp(nearbyint(ldexp(m, 8)), e - 8);
		f = (float)d;		/* exact, or +-inf on overflow */
	}
	memcpy(&u, &f, 4);
	return isnan(f) ? (u >> 16) | 0x40 : u >> 16;
}

static inline float bf16_f(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* Element @i of a matrix of @dtype (F32, F16 or BF16), widened to f32. */
static inline float ref_load(const void *base, uint64_t i, unsigned int dtype)
{
	_Float16 h;
	uint16_t u;
	float f;

	if (dtype == DRM_VACCEL_DTYPE_F32) {
		memcpy(&f, (const char *)base + 4 * i, 4);
		return f;
	}
	memcpy(&u, (const char *)base + 2 * i, 2);
	if (dtype == DRM_VACCEL_DTYPE_BF16)
		return bf16_f(u);
	memcpy(&h, &u, 2);
	return (float)h;
}

/*
 * C = A x B (+ C) as MATMUL defines it: each element summed in f32 over
 * k in ascending order, starting from C's value or from 0.
 */
static inline void ref_matmul(float *c, const void *a, const void *b,
			      const struct drm_vaccel_matmul *d, unsigned int dtype,
			      int accumulate)
{
	uint64_t r, col, kk;

	for (r = 0; r < d->m; r++) {
		for (col = 0; col < d->n; col++) {
			float acc = accumulate ? c[r * d->ldc + col] : 0.0f;

			for (kk = 0; kk < d->k; kk++)
				acc += ref_load(a, r * d->lda + kk, dtype) *
				       ref_load(b, kk * d->ldb + col, dtype);
			c[r * d->ldc + col] = acc;
		}
	}
}

#endif /* FLOAT_REF_H */
