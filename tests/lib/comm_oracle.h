/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The collectives tests' host values and oracle (libaccel_comm_test.c,
 * libaccel_comm_mp_test.c): f16/bf16 by double arithmetic, element access
 * by dtype, each rank's input values, the reduction and its tolerance.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef LIBACCEL_COMM_ORACLE_H
#define LIBACCEL_COMM_ORACLE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <accel/accel.h>

/*
 * IEEE half precision by double arithmetic (the ThreadSanitizer build's
 * clang has no half-precision type on x86-64). Decoding is exact;
 * encoding rounds to nearest even.
 */
static inline double f16_to_d(uint16_t h)
{
	int e = (h >> 10) & 0x1f;
	double m = h & 0x3ff, v;

	if (e == 0x1f)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(m, -24);
	else
		v = ldexp(m + 1024, e - 25);
	return h & 0x8000 ? -v : v;
}

static inline uint16_t d_to_f16(double v)
{
	uint16_t s = signbit(v) ? 0x8000 : 0;
	double m, q;
	int e;

	v = fabs(v);
	if (isnan(v))
		return s | 0x7e00;
	if (isinf(v))
		return s | 0x7c00;
	if (v == 0)
		return s;
	m = frexp(v, &e);			/* v = m * 2^e, 0.5 <= m < 1 */
	if (e - 1 < -14)			/* subnormal: units of 2^-24 */
		return s | (uint16_t)nearbyint(ldexp(v, 24));
	q = nearbyint(ldexp(m, 11));		/* 1024 .. 2048 */
	if (q == 2048) {
		q = 1024;
		e++;
	}
	if (e - 1 > 15)
		return s | 0x7c00;
	return s | (uint16_t)((e - 1 + 15) << 10) | ((uint16_t)q & 0x3ff);
}

static inline double get(const void *base, enum accel_dtype t, uint64_t i)
{
	const unsigned char *p = base;

	switch (t) {
	case ACCEL_DTYPE_F32: { float f; memcpy(&f, p + 4 * i, 4); return f; }
	case ACCEL_DTYPE_F16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return f16_to_d(h); }
	case ACCEL_DTYPE_BF16: {
		uint16_t b; uint32_t u; float f;

		memcpy(&b, p + 2 * i, 2);
		u = (uint32_t)b << 16;
		memcpy(&f, &u, 4);
		return f;
	}
	case ACCEL_DTYPE_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
	case ACCEL_DTYPE_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
	case ACCEL_DTYPE_U8: return p[i];
	default: return 0;
	}
}

/* small integers: exact in every dtype (bf16 holds integers up to 256) */
static inline void put(void *base, enum accel_dtype t, uint64_t i, double v)
{
	unsigned char *p = base;

	switch (t) {
	case ACCEL_DTYPE_F32: { float f = (float)v; memcpy(p + 4 * i, &f, 4); break; }
	case ACCEL_DTYPE_F16: { uint16_t h = d_to_f16(v); memcpy(p + 2 * i, &h, 2); break; }
	case ACCEL_DTYPE_BF16: {
		float f = (float)v; uint32_t u; uint16_t b;

		memcpy(&u, &f, 4);
		b = (uint16_t)(u >> 16);	/* exact for these values */
		memcpy(p + 2 * i, &b, 2);
		break;
	}
	case ACCEL_DTYPE_I32: { int32_t x = (int32_t)v; memcpy(p + 4 * i, &x, 4); break; }
	case ACCEL_DTYPE_I64: { int64_t x = (int64_t)v; memcpy(p + 8 * i, &x, 8); break; }
	case ACCEL_DTYPE_U8: p[i] = (uint8_t)(int)v; break;
	default: break;
	}
}

/* Input element @i of rank @r: exact products and sums in every dtype. */
static inline double value(unsigned int r, uint64_t i, enum accel_redop op, enum accel_dtype t)
{
	static const double prod[] = { 1, 2, -1, -2, 1, 1 };
	unsigned int h = (unsigned int)((r * 2654435761u) ^ (i * 40503u) ^ (i >> 3));

	if (op == ACCEL_REDOP_PROD)
		return t == ACCEL_DTYPE_U8 ? (double)(h % 3 + 1) : prod[h % 6];
	if (t == ACCEL_DTYPE_U8)
		return h % 60;
	return (double)(h % 21) - 10;
}

static inline double combine(double a, double b, enum accel_redop op, enum accel_dtype t)
{
	double v;

	switch (op) {
	case ACCEL_REDOP_PROD: v = a * b; break;
	case ACCEL_REDOP_MIN: v = a < b ? a : b; break;
	case ACCEL_REDOP_MAX: v = a > b ? a : b; break;
	default: v = a + b; break;
	}
	return t == ACCEL_DTYPE_U8 ? (double)((unsigned int)v & 0xff) : v;
}

/* The reduction over ranks of element @i (AVG: the sum divided). */
static inline double reduced(unsigned int n, uint64_t i, enum accel_redop op, enum accel_dtype t)
{
	double v = value(0, i, op, t);
	unsigned int r;

	for (r = 1; r < n; r++)
		v = combine(v, value(r, i, op, t), op == ACCEL_REDOP_AVG ? ACCEL_REDOP_SUM : op, t);
	return op == ACCEL_REDOP_AVG ? v / n : v;
}

/*
 * Stated tolerance: exact, except AVG, which multiplies the exact sum by
 * 1/n rounded to the dtype, then rounds the product: relative error at
 * most 2^-22 (f32), 2^-9 (f16), 2^-7 (bf16).
 */
static inline bool close_enough(double got, double want, enum accel_redop op, enum accel_dtype t)
{
	double tol;

	if (op != ACCEL_REDOP_AVG)
		return got == want;
	tol = t == ACCEL_DTYPE_F32 ? 0x1p-22 : t == ACCEL_DTYPE_F16 ? 0x1p-9 : 0x1p-7;
	return fabs(got - want) <= tol * (fabs(want) > 1 ? fabs(want) : 1);
}

#endif
