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
		r->len = tg_nelems(t) * r->esz;
		r->count = r->len ? 1 : 0;
		r->outer = 0;
		return;
	}
	if (!tg_rows_ok(t)) {
		/* strided innermost dimension (FILL only): one element per row */
		r->outer = t->ndims;
		r->len = r->esz;
		r->count = tg_nelems(t);
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
static int addr3(struct tg_lower *lw, const struct tg_arg *a, uint64_t *a0, uint64_t *a1,
		 uint64_t *a2)
{
	int ret = lw->addr(lw, &a[0], a[0].v.offset, a0);

	if (!ret)
		ret = lw->addr(lw, &a[1], a[1].v.offset, a1);
	if (!ret)
		ret = lw->addr(lw, &a[2], a[2].v.offset, a2);
	return ret;
}

int tg_lower_task(struct tg_lower *lw, uint32_t op, const struct tg_arg *a, uint64_t u0,
		  struct drm_vaccel_packet *out, unsigned int max, const char *name)
{
	const struct accel_tensor *t[ACCEL_TASK_MAX_ARGS] = {
		&a[0].v, &a[1].v, &a[2].v, &a[3].v, &a[4].v, &a[5].v, &a[6].v, &a[7].v,
	};
	struct drm_vaccel_matmul m;
	struct rows r0, r1;
	uint64_t x, y, c, k;
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
			r0.count = r1.count = tg_nelems(t[0]) ? tg_nelems(t[0]) /
					      t[0]->shape[t[0]->ndims - 1] : 0;
		}
		if (r0.count > max)
			goto big;
		for (k = 0; k < r0.count; k++) {
			ret = lw->addr(lw, &a[0], rows_next(&r0), &x);
			if (!ret)
				ret = lw->addr(lw, &a[1], rows_next(&r1), &y);
			if (ret)
				return ret;
			accel_prep_copy(&out[n++], x, y, r0.len);
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
			ret = lw->addr(lw, &a[0], rows_next(&r0), &x);
			if (ret)
				return ret;
			accel_prep_fill(&out[n++], x, r0.len, u0, (unsigned int)r0.esz);
		}
		break;
	case ACCEL_TASK_REDUCE:
		if (!tg_nelems(t[0]))
			break;
		dt = acc_reduce_dtype(t[0]->dtype);
		ret = addr3(lw, a, &c, &x, &y);
		if (ret)
			return ret;
		accel_prep_reduce(&out[n++], c, x, y, tg_nelems(t[0]), (unsigned int)dt,
				  (unsigned int)u0);
		break;
	case ACCEL_TASK_MATMUL:
		memset(&m, 0, sizeof(m));
		ret = addr3(lw, a, &c, &x, &y);
		if (ret)
			return ret;
		m.a = x;
		m.b = y;
		m.c = c;
		m.m = (uint32_t)t[0]->shape[0];
		m.n = (uint32_t)t[0]->shape[1];
		m.k = (uint32_t)t[1]->shape[1];
		m.ldc = (uint32_t)(t[0]->shape[0] > 1 ? t[0]->strides[0] : m.n);
		m.lda = (uint32_t)(t[1]->shape[0] > 1 ? t[1]->strides[0] : m.k);
		m.ldb = (uint32_t)(t[2]->shape[0] > 1 ? t[2]->strides[0] : m.n);
		ret = lw->desc(lw, &m, &x);
		if (ret)
			return ret;
		dt = acc_reduce_dtype(t[1]->dtype);
		accel_prep_matmul(&out[n++], x, (unsigned int)dt,
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
