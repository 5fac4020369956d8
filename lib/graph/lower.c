// SPDX-License-Identifier: MIT
/*
 * Tasks to packets: the checks each operation makes of its operands, and
 * the COPY/FILL/REDUCE/MATMUL/DELAY packets it lowers to. Shared by eager
 * submission and graph instantiation, which differ only in how a buffer
 * offset becomes a device address (plain, imported or a binding address)
 * and where MATMUL descriptors live.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <string.h>

#include "tg_internal.h"

static const char *nm(const char *name)
{
	return name ? name : "task";
}

static int reduce_dtype(enum accel_dtype d)
{
	switch (d) {
	case ACCEL_DTYPE_F32:
		return DRM_VACCEL_DTYPE_F32;
	case ACCEL_DTYPE_F16:
		return DRM_VACCEL_DTYPE_F16;
	case ACCEL_DTYPE_BF16:
		return DRM_VACCEL_DTYPE_BF16;
	case ACCEL_DTYPE_I32:
		return DRM_VACCEL_DTYPE_I32;
	case ACCEL_DTYPE_I64:
		return DRM_VACCEL_DTYPE_I64;
	case ACCEL_DTYPE_U8:
		return DRM_VACCEL_DTYPE_U8;
	default:
		return -1;
	}
}

static uint64_t nelems(const struct accel_tensor *t)
{
	uint64_t n = 1;
	uint32_t i;

	for (i = 0; i < t->ndims; i++)
		n *= t->shape[i];
	return n;
}

static bool rows_ok(const struct accel_tensor *t)
{
	return t->strides[t->ndims - 1] == 1 || t->shape[t->ndims - 1] == 1 ||
	       accel_tensor_is_contiguous(t);
}

static bool reads(uint32_t a)
{
	return a == ACCEL_INPUT || a == ACCEL_INOUT;
}

static bool writes(uint32_t a)
{
	return a != ACCEL_INPUT;
}

static bool hull_overlap(const struct accel_tensor *a, const struct accel_tensor *b)
{
	struct tm_layout la, lb;
	int fb = 0;

	if (a->buf != b->buf)
		return false;
	if (tm_layout_make(a, &la) || tm_layout_make(b, &lb))
		return true;
	return tm_layout_overlap(&la, &lb, &fb);
}

int tg_validate_op(uint32_t op, uint32_t nargs, const struct accel_tensor *const *t,
		   const uint32_t *access, uint64_t u0, const char *name)
{
	uint32_t i;

	switch (op) {
	case ACCEL_TASK_COPY:
		if (nargs < 2)
			goto few;
		if (!writes(access[0]) || !reads(access[1]))
			goto acc;
		if (accel_dtype_size(t[0]->dtype) != accel_dtype_size(t[1]->dtype) ||
		    t[0]->ndims != t[1]->ndims) {
			acc_err("%s: copy: element size or dimensions of dst and src differ", nm(name));
			return -EINVAL;
		}
		for (i = 0; i < t[0]->ndims; i++)
			if (t[0]->shape[i] != t[1]->shape[i]) {
				acc_err("%s: copy: shape of dst and src differ in dimension %u",
					nm(name), i);
				return -EINVAL;
			}
		if (!rows_ok(t[0]) || !rows_ok(t[1])) {
			acc_err("%s: copy: the innermost stride must be 1", nm(name));
			return -EINVAL;
		}
		if (hull_overlap(t[0], t[1])) {
			acc_err("%s: copy: dst and src overlap", nm(name));
			return -EINVAL;
		}
		return 0;
	case ACCEL_TASK_FILL:
		if (nargs < 1)
			goto few;
		if (!writes(access[0]))
			goto acc;
		return 0;
	case ACCEL_TASK_REDUCE:
		if (nargs < 3)
			goto few;
		if (!writes(access[0]) || !reads(access[1]) || !reads(access[2]))
			goto acc;
		if (u0 > DRM_VACCEL_REDOP_MAX || reduce_dtype(t[0]->dtype) < 0 ||
		    t[1]->dtype != t[0]->dtype || t[2]->dtype != t[0]->dtype) {
			acc_err("%s: reduce: bad operation or dtype (all three of one of f32, f16, bf16, i32, i64, u8)",
				nm(name));
			return -EINVAL;
		}
		for (i = 0; i < 3; i++)
			if (!accel_tensor_is_contiguous(t[i]) || nelems(t[i]) != nelems(t[0])) {
				acc_err("%s: reduce: argument %u is not contiguous or has another element count",
					nm(name), i);
				return -EINVAL;
			}
		return 0;
	case ACCEL_TASK_MATMUL:
		{
		const struct accel_tensor *c = t[0], *a = t[1], *b = t[2];

		if (nargs < 3)
			goto few;
		if (!writes(access[0]) || !reads(access[1]) || !reads(access[2]))
			goto acc;
		if (u0 && access[0] != ACCEL_INOUT) {
			acc_err("%s: matmul: accumulating into C needs C as INOUT", nm(name));
			return -EINVAL;
		}
		if (c->dtype != ACCEL_DTYPE_F32 || a->dtype != b->dtype ||
		    (a->dtype != ACCEL_DTYPE_F32 && a->dtype != ACCEL_DTYPE_F16 &&
		     a->dtype != ACCEL_DTYPE_BF16)) {
			acc_err("%s: matmul: C must be f32, A and B one of f32, f16, bf16", nm(name));
			return -EINVAL;
		}
		if (a->ndims != 2 || b->ndims != 2 || c->ndims != 2 ||
		    a->shape[0] != c->shape[0] || b->shape[1] != c->shape[1] ||
		    a->shape[1] != b->shape[0]) {
			acc_err("%s: matmul: shapes must be C m x n, A m x k, B k x n", nm(name));
			return -EINVAL;
		}
		for (i = 0; i < 3; i++) {
			if (!t[i]->shape[0] || !t[i]->shape[1] ||
			    t[i]->shape[0] > DRM_VACCEL_MATMUL_MAX_DIM ||
			    t[i]->shape[1] > DRM_VACCEL_MATMUL_MAX_DIM ||
			    (t[i]->strides[1] != 1 && t[i]->shape[1] != 1) ||
			    (t[i]->shape[0] > 1 && t[i]->strides[0] < t[i]->shape[1]) ||
			    t[i]->strides[0] > UINT32_MAX) {
				acc_err("%s: matmul: argument %u: dimensions 1..%u, row-major rows (stride 1)",
					nm(name), i, DRM_VACCEL_MATMUL_MAX_DIM);
				return -EINVAL;
			}
		}
		if (hull_overlap(c, a) || hull_overlap(c, b)) {
			acc_err("%s: matmul: C overlaps A or B", nm(name));
			return -EINVAL;
		}
		return 0;
	}
	case ACCEL_TASK_DELAY:
		if (u0 > 1000000000ull) {
			acc_err("%s: delay of %llu ns: at most 1 s", nm(name), (unsigned long long)u0);
			return -EINVAL;
		}
		return 0;
	case ACCEL_TASK_HOST:
		return 0;
	default:
		acc_err("%s: unknown task op %u", nm(name), op);
		return -EINVAL;
	}
few:
	acc_err("%s: too few arguments (%u) for its operation", nm(name), nargs);
	return -EINVAL;
acc:
	acc_err("%s: an operand's access does not match the operation (outputs first, then inputs)",
		nm(name));
	return -EINVAL;
}

/* the byte offsets of a view's rows: each row is @len contiguous bytes */
struct rows {
	const struct accel_tensor *t;
	uint64_t esz, len, count;
	uint64_t idx[ACCEL_TENSOR_MAX_DIMS];
	uint32_t outer;			/* dimensions iterated */
};

static void rows_init(struct rows *r, const struct accel_tensor *t)
{
	uint32_t i;

	memset(r, 0, sizeof(*r));
	r->t = t;
	r->esz = accel_dtype_size(t->dtype);
	if (accel_tensor_is_contiguous(t)) {
		r->len = nelems(t) * r->esz;
		r->count = r->len ? 1 : 0;
		r->outer = 0;
		return;
	}
	if (!rows_ok(t)) {
		/* strided innermost dimension (FILL only): one element per row */
		r->outer = t->ndims;
		r->len = r->esz;
		r->count = nelems(t);
		return;
	}
	r->outer = t->ndims - 1;
	r->len = t->shape[t->ndims - 1] * r->esz;
	r->count = t->shape[t->ndims - 1] ? 1 : 0;
	for (i = 0; i < r->outer; i++)
		r->count *= t->shape[i];
}

/* offset of the current row, then step to the next */
static uint64_t rows_next(struct rows *r)
{
	uint64_t off = r->t->offset;
	uint32_t i;

	for (i = 0; i < r->outer; i++)
		off += r->idx[i] * r->t->strides[i] * r->esz;
	for (i = r->outer; i-- > 0;) {
		if (++r->idx[i] < r->t->shape[i])
			break;
		r->idx[i] = 0;
	}
	return off;
}

/* the device addresses of the first element of operands 0, 1 and 2 */
static int addr3(struct tg_lower *lw, struct accel_tensor *const *t, uint64_t *a0, uint64_t *a1,
		 uint64_t *a2)
{
	int ret = lw->addr(lw, t[0]->buf, t[0]->offset, a0);

	if (!ret)
		ret = lw->addr(lw, t[1]->buf, t[1]->offset, a1);
	if (!ret)
		ret = lw->addr(lw, t[2]->buf, t[2]->offset, a2);
	return ret;
}

int tg_lower_task(struct tg_lower *lw, uint32_t op, struct accel_tensor *const *t, uint64_t u0,
		  struct drm_vaccel_packet *out, unsigned int max, const char *name)
{
	struct drm_vaccel_matmul m;
	struct rows r0, r1;
	uint64_t a, b, c, k;
	unsigned int n = 0;
	int ret, dt;

	switch (op) {
	case ACCEL_TASK_COPY:
		rows_init(&r0, t[0]);
		rows_init(&r1, t[1]);
		if (r0.len != r1.len || r0.count != r1.count) {
			/* one side contiguous, the other not: go by rows on both */
			r0.outer = t[0]->ndims - 1;
			r1.outer = t[1]->ndims - 1;
			r0.len = r1.len = t[0]->shape[t[0]->ndims - 1] * r0.esz;
			r0.count = r1.count = nelems(t[0]) ? nelems(t[0]) /
					      t[0]->shape[t[0]->ndims - 1] : 0;
		}
		if (r0.count > max)
			goto big;
		for (k = 0; k < r0.count; k++) {
			ret = lw->addr(lw, t[0]->buf, rows_next(&r0), &a);
			if (!ret)
				ret = lw->addr(lw, t[1]->buf, rows_next(&r1), &b);
			if (ret)
				return ret;
			accel_prep_copy(&out[n++], a, b, r0.len);
		}
		break;
	case ACCEL_TASK_FILL:
		rows_init(&r0, t[0]);
		if (r0.count > max)
			goto big;
		/* the pattern's low bytes, as many as an element has */
		if (r0.esz < 8)
			u0 &= (1ull << (8 * r0.esz)) - 1;
		for (k = 0; k < r0.count; k++) {
			ret = lw->addr(lw, t[0]->buf, rows_next(&r0), &a);
			if (ret)
				return ret;
			accel_prep_fill(&out[n++], a, r0.len, u0, (unsigned int)r0.esz);
		}
		break;
	case ACCEL_TASK_REDUCE:
		if (!nelems(t[0]))
			break;
		dt = reduce_dtype(t[0]->dtype);
		ret = addr3(lw, t, &c, &a, &b);
		if (ret)
			return ret;
		accel_prep_reduce(&out[n++], c, a, b, nelems(t[0]), (unsigned int)dt,
				  (unsigned int)u0);
		break;
	case ACCEL_TASK_MATMUL:
		memset(&m, 0, sizeof(m));
		ret = addr3(lw, t, &c, &a, &b);
		if (ret)
			return ret;
		m.a = a;
		m.b = b;
		m.c = c;
		m.m = (uint32_t)t[0]->shape[0];
		m.n = (uint32_t)t[0]->shape[1];
		m.k = (uint32_t)t[1]->shape[1];
		m.ldc = (uint32_t)(t[0]->shape[0] > 1 ? t[0]->strides[0] : m.n);
		m.lda = (uint32_t)(t[1]->shape[0] > 1 ? t[1]->strides[0] : m.k);
		m.ldb = (uint32_t)(t[2]->shape[0] > 1 ? t[2]->strides[0] : m.n);
		ret = lw->desc(lw, &m, &a);
		if (ret)
			return ret;
		dt = reduce_dtype(t[1]->dtype);
		accel_prep_matmul(&out[n++], a, (unsigned int)dt,
				  u0 ? DRM_VACCEL_MATMUL_F_ACCUMULATE : 0);
		break;
	case ACCEL_TASK_DELAY:
		accel_prep_delay(&out[n++], u0);
		break;
	default:
		return -EINVAL;
	}
	if (!n)
		accel_prep_nop(&out[n++]);	/* empty views: the completion still counts */
	return (int)n;
big:
	acc_err("%s: lowers to more than %u packets (one per row of a strided view)",
		nm(name), max);
	return -E2BIG;
}
