// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * REDUCE arithmetic. f16 and bf16 are computed in f32 and rounded to
 * nearest even, so results are exact to the rounded f32 result. In the
 * kernel this file and vaccel_matmul.c are the only ones built with
 * floating point enabled, and every call is bracketed by
 * vaccel_os_fpu_begin()/end().
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "vaccel_core.h"
#include "vaccel_reduce.h"

static u32 f32_bits(float f)
{
	u32 u;

	memcpy(&u, &f, 4);
	return u;
}

static float bits_f32(u32 u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

float vaccel_core_bf16_to_f32(u16 h)
{
	return bits_f32((u32)h << 16);
}

u16 vaccel_core_f32_to_bf16(float f)
{
	u32 u = f32_bits(f);

	if ((u & 0x7fffffff) > 0x7f800000)	/* NaN: keep it quiet */
		return (u >> 16) | 0x40;
	u += 0x7fff + ((u >> 16) & 1);		/* round to nearest even */
	return u >> 16;
}

float vaccel_core_f16_to_f32(u16 h)
{
	u32 sign = (u32)(h & 0x8000) << 16;
	u32 exp = (h >> 10) & 0x1f;
	u32 man = h & 0x3ff;

	if (exp == 0x1f)			/* inf, NaN */
		return bits_f32(sign | 0x7f800000 | (man << 13));
	if (exp)				/* normal */
		return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
	if (!man)
		return bits_f32(sign);
	/* subnormal: normalise */
	exp = 113;
	while (!(man & 0x400)) {
		man <<= 1;
		exp--;
	}
	return bits_f32(sign | (exp << 23) | ((man & 0x3ff) << 13));
}

u16 vaccel_core_f32_to_f16(float f)
{
	u32 u = f32_bits(f);
	u32 sign = (u >> 16) & 0x8000;
	u32 abs = u & 0x7fffffff;
	u32 exp = abs >> 23, man, shift, round, rest, half;

	if (abs > 0x7f800000)			/* NaN */
		return sign | 0x7e00 | ((abs >> 13) & 0x3ff);
	if (exp >= 143)				/* >= 65520 rounds to inf */
		return abs >= 0x477ff000 ? sign | 0x7c00 : sign | 0x7bff;
	if (exp >= 113) {			/* normal f16 */
		u32 r = ((exp - 112) << 10) | ((abs >> 13) & 0x3ff);

		rest = abs & 0x1fff;
		if (rest > 0x1000 || (rest == 0x1000 && (r & 1)))
			r++;			/* may carry into inf: correct */
		return sign | r;
	}
	if (exp < 102)				/* below half the smallest subnormal */
		return sign;
	/* subnormal f16: value = man * 2^-24 */
	man = (abs & 0x7fffff) | 0x800000;
	shift = 126 - exp;			/* 14..24 */
	round = man >> shift;
	rest = man & ((1u << shift) - 1);
	half = 1u << (shift - 1);
	if (rest > half || (rest == half && (round & 1)))
		round++;
	return sign | round;
}

/*
 * Floating point: computed in f32. MIN and MAX propagate NaN (either
 * operand NaN gives that NaN), like torch.minimum/maximum.
 */
static float fop(float x, float y, u32 op)
{
	switch (op) {
	case DRM_VACCEL_REDOP_SUM:
		return x + y;
	case DRM_VACCEL_REDOP_PROD:
		return x * y;
	case DRM_VACCEL_REDOP_MIN:
		if (x != x || y != y)
			return x != x ? x : y;
		return y < x ? y : x;
	default:
		if (x != x || y != y)
			return x != x ? x : y;
		return y > x ? y : x;
	}
}

/* Integers: sums and products wrap (two's complement); MIN/MAX are signed. */
static s64 iop(s64 x, s64 y, u32 op)
{
	switch (op) {
	case DRM_VACCEL_REDOP_SUM:
		return (s64)((u64)x + (u64)y);
	case DRM_VACCEL_REDOP_PROD:
		return (s64)((u64)x * (u64)y);
	case DRM_VACCEL_REDOP_MIN:
		return y < x ? y : x;
	default:
		return y > x ? y : x;
	}
}

/**
 * vaccel_core_reduce() - dst[i] = a[i] op b[i]
 * @dst: destination, may be @a or @b
 * @a: first operand
 * @b: second operand
 * @n: element count
 * @dtype: DRM_VACCEL_DTYPE_*, validated
 * @op: DRM_VACCEL_REDOP_*, validated
 *
 * Elements are loaded and stored with memcpy(): no alignment or aliasing
 * assumptions beyond what validation guarantees.
 */
void vaccel_core_reduce(void *dst, const void *a, const void *b, u64 n,
			u32 dtype, u32 op)
{
	const u8 *pa = a, *pb = b;
	u8 *pd = dst;
	u64 i;

	/* the dtype is chosen once per step, not per element */
	switch (dtype) {
	case DRM_VACCEL_DTYPE_F32:
		for (i = 0; i < n; i++) {
			float x, y, r;

			memcpy(&x, pa + 4 * i, 4);
			memcpy(&y, pb + 4 * i, 4);
			r = fop(x, y, op);
			memcpy(pd + 4 * i, &r, 4);
		}
		break;
	case DRM_VACCEL_DTYPE_F16:
		for (i = 0; i < n; i++) {
			u16 x, y, r;

			memcpy(&x, pa + 2 * i, 2);
			memcpy(&y, pb + 2 * i, 2);
			r = vaccel_core_f32_to_f16(fop(vaccel_core_f16_to_f32(x),
						       vaccel_core_f16_to_f32(y), op));
			memcpy(pd + 2 * i, &r, 2);
		}
		break;
	case DRM_VACCEL_DTYPE_BF16:
		for (i = 0; i < n; i++) {
			u16 x, y, r;

			memcpy(&x, pa + 2 * i, 2);
			memcpy(&y, pb + 2 * i, 2);
			r = vaccel_core_f32_to_bf16(fop(vaccel_core_bf16_to_f32(x),
							vaccel_core_bf16_to_f32(y), op));
			memcpy(pd + 2 * i, &r, 2);
		}
		break;
	case DRM_VACCEL_DTYPE_I32:
		for (i = 0; i < n; i++) {
			s32 x, y, r;

			memcpy(&x, pa + 4 * i, 4);
			memcpy(&y, pb + 4 * i, 4);
			r = (s32)(u32)iop(x, y, op);
			memcpy(pd + 4 * i, &r, 4);
		}
		break;
	case DRM_VACCEL_DTYPE_I64:
		for (i = 0; i < n; i++) {
			s64 x, y, r;

			memcpy(&x, pa + 8 * i, 8);
			memcpy(&y, pb + 8 * i, 8);
			r = iop(x, y, op);
			memcpy(pd + 8 * i, &r, 8);
		}
		break;
	default:	/* U8: unsigned, sums and products wrap */
		for (i = 0; i < n; i++)
			pd[i] = (u8)iop(pa[i], pb[i], op);
		break;
	}
}
