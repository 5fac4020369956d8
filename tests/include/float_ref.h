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

#endif /* FLOAT_REF_H */
