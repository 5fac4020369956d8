// SPDX-License-Identifier: MIT
/*
 * Checking a task before anything is allocated or written: the task
 * structure (its size), each argument's view and layout (made once per
 * submission, used by every later stage), the operation's rules and the
 * line the task goes to. Nothing here changes the task graph's state.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tg_internal.h"

static const char *tg_nm(const char *name)
{
	return name ? name : "task";
}

const char *tg_name(const struct accel_task *task)
{
	return tg_nm(task->name);
}

/* struct accel_task as of the first release (libaccel 1.0) */
#define TASK_SIZE_1_0	sizeof(struct accel_task)

int tg_task_copy(struct tg_task *tt, const struct accel_task *task)
{
	int ret = acc_copy_struct(&tt->tk, sizeof(tt->tk), task, task->size, TASK_SIZE_1_0);

	tt->a = tt->a_in;
	if (ret == -EINVAL)
		acc_err("task: struct accel_task size %u: accel_task_init() sets it (at least %zu)",
			task->size, TASK_SIZE_1_0);
	else if (ret)
		acc_err("%s: struct accel_task of %u bytes: fields past the %zu this library knows are set",
			task->size >= TASK_SIZE_1_0 ? tg_nm(task->name) : "task", task->size,
			sizeof(*task));
	return ret;
}

int tg_check_view(const char *name, uint32_t i, const struct accel_tensor *t,
		  struct tm_layout *lay)
{
	int ret;

	if (!t->buf) {
		acc_err("%s: argument %u: no buffer", tg_nm(name), i);
		return -EINVAL;
	}
	ret = tm_layout_make(t, lay);
	if (ret) {
		acc_err("%s: argument %u: bad view (dtype, dimensions, strides or an offset not a multiple of the element size)",
			tg_nm(name), i);
		return ret;
	}
	if (!lay->empty && (uint64_t)lay->hi > t->buf->size) {
		acc_err("%s: argument %u: view ends at byte %lld, past its buffer (0x%llx, %llu bytes)",
			tg_nm(name), i, (long long)lay->hi, (unsigned long long)t->buf->va,
			(unsigned long long)t->buf->size);
		return -EINVAL;
	}
	return 0;
}

static uint64_t task_u0(const struct accel_task *task)
{
	switch (task->op) {
	case ACCEL_TASK_FILL:
		return task->fill.pattern;
	case ACCEL_TASK_REDUCE:
		return task->reduce.op;
	case ACCEL_TASK_MATMUL:
		return task->matmul.accumulate;
	case ACCEL_TASK_DELAY:
		return task->delay.ns;
	default:
		return 0;
	}
}

int tg_validate(struct accel_tg *tg, struct tg_task *tt, const struct accel_task *task)
{
	const struct accel_tensor *tv[ACCEL_TASK_MAX_ARGS];
	const struct tm_layout *lv[ACCEL_TASK_MAX_ARGS];
	uint32_t acc[ACCEL_TASK_MAX_ARGS];
	const struct accel_task *tk = &tt->tk;
	const char *name = tk->name;
	uint32_t i, devi;
	int ret, d;

	(void)task;
	if (tk->nargs > ACCEL_TASK_MAX_ARGS) {
		acc_err("%s: %u arguments, at most %u", tg_nm(name), tk->nargs,
			ACCEL_TASK_MAX_ARGS);
		return -EINVAL;
	}
	if (tk->op > ACCEL_TASK_HOST) {
		acc_err("%s: unknown task op %u", tg_nm(name), tk->op);
		return -EINVAL;
	}
	if (tk->op == ACCEL_TASK_HOST && !tk->host.fn) {
		acc_err("%s: host task without a function", tg_nm(name));
		return -EINVAL;
	}
	tt->nargs = tk->nargs;
	tt->u0 = task_u0(tk);
	tt->nheap = 0;
	tt->nnew = 0;
	for (i = 0; i < tk->nargs; i++) {
		struct tg_arg *a = &tt->a[i];

		a->t = tk->args[i].t;
		a->access = tk->args[i].access;
		a->b = NULL;
		a->heap = -1;
		a->placed = false;
		if (!a->t) {
			acc_err("%s: argument %u: no tensor", tg_nm(name), i);
			return -EINVAL;
		}
		if (a->access > ACCEL_OUTPUT_NEW) {
			acc_err("%s: argument %u: unknown access %u", tg_nm(name), i, a->access);
			return -EINVAL;
		}
		a->v = *a->t;
		acc[i] = a->access;
		tv[i] = &a->v;
		lv[i] = NULL;
		if (a->access == ACCEL_OUTPUT_NEW) {
			/* the layout it will get: contiguous, in no buffer yet */
			ret = accel_tensor_init(&a->v, NULL, 0, a->t->dtype, a->t->ndims,
						a->t->shape);
			if (ret) {
				acc_err("%s: argument %u: bad OUTPUT_NEW dtype or shape", tg_nm(name), i);
				return ret;
			}
			tt->nnew++;
			continue;
		}
		ret = tg_check_view(name, i, &a->v, &a->lay);
		if (ret)
			return ret;
		lv[i] = &a->lay;
		d = tg_devi_of(tg, a->v.buf->dev);
		if (d < 0) {
			acc_err("%s: argument %u: buffer 0x%llx is on %s, not a device of the task graph",
				tg_nm(name), i, (unsigned long long)a->v.buf->va, a->v.buf->dev->path);
			return -ENOENT;
		}
		if (tg_writes(a->access) && !(a->v.buf->vm_flags & DRM_VACCEL_VM_WRITE)) {
			acc_err("%s: argument %u: buffer 0x%llx is %s: the device may not write it",
				tg_nm(name), i, (unsigned long long)a->v.buf->va,
				a->v.buf->sealed ? "sealed" : "read-only");
			return -EACCES;
		}
		a->heap = tg_heap_of(tg, a->v.buf);
		if (a->heap >= 0) {
			ret = tg_heap_check(tg, a, name, i);
			if (ret)
				return ret;
			tt->nheap++;
		}
	}
	ret = tg_validate_op(tk->op, tk->nargs, tv, lv, acc, tt->u0, name);
	if (ret)
		return ret;
	if (tk->op == ACCEL_TASK_HOST) {
		tt->line = tg->host_line;
		return 0;
	}
	if (tk->device == ACCEL_TG_AUTO) {
		devi = 0;
		for (i = 0; i < tk->nargs; i++) {
			if (acc[i] == ACCEL_OUTPUT_NEW)
				continue;
			d = tg_devi_of(tg, tv[i]->buf->dev);
			if (d >= 0) {
				devi = (uint32_t)d;
				break;
			}
		}
	} else if (tk->device >= tg->ndevs) {
		acc_err("%s: device %u, the task graph has %u", tg_nm(name), tk->device, tg->ndevs);
		return -EINVAL;
	} else {
		devi = tk->device;
	}
	if (tk->queue == ACCEL_TG_AUTO) {
		tt->line = tg->qbase[devi] + tg->rr[devi];
	} else if (tk->queue >= tg->qcount[devi]) {
		acc_err("%s: queue %u, device %u has %u", tg_nm(name), tk->queue, devi,
			tg->qcount[devi]);
		return -EINVAL;
	} else {
		tt->line = tg->qbase[devi] + tk->queue;
	}
	return 0;
}

void tg_commit_line(struct accel_tg *tg, const struct tg_task *tt)
{
	uint32_t devi;

	if (tt->tk.op == ACCEL_TASK_HOST || tt->tk.queue != ACCEL_TG_AUTO)
		return;
	devi = tg->lines[tt->line].devi;
	tg->rr[devi] = (tg->rr[devi] + 1) % tg->qcount[devi];
}

/* do operands @i and @j share a byte? (OUTPUT_NEW operands: fresh memory, never) */
static bool overlap(const struct accel_tensor *const *t, const struct tm_layout *const *lay,
		    uint32_t i, uint32_t j)
{
	int fb = 0;

	if (!lay[i] || !lay[j] || t[i]->buf != t[j]->buf)
		return false;
	return tm_layout_overlap(lay[i], lay[j], &fb);
}

int tg_validate_op(uint32_t op, uint32_t nargs, const struct accel_tensor *const *t,
		   const struct tm_layout *const *lay, const uint32_t *access, uint64_t u0,
		   const char *name)
{
	uint32_t i;

	switch (op) {
	case ACCEL_TASK_COPY:
		if (nargs < 2)
			goto few;
		if (!tg_writes(access[0]) || !tg_reads(access[1]))
			goto acc;
		if (accel_dtype_size(t[0]->dtype) != accel_dtype_size(t[1]->dtype) ||
		    t[0]->ndims != t[1]->ndims) {
			acc_err("%s: copy: element size or dimensions of dst and src differ", tg_nm(name));
			return -EINVAL;
		}
		for (i = 0; i < t[0]->ndims; i++)
			if (t[0]->shape[i] != t[1]->shape[i]) {
				acc_err("%s: copy: shape of dst and src differ in dimension %u",
					tg_nm(name), i);
				return -EINVAL;
			}
		if (!tg_rows_ok(t[0]) || !tg_rows_ok(t[1])) {
			acc_err("%s: copy: the innermost stride must be 1", tg_nm(name));
			return -EINVAL;
		}
		if (overlap(t, lay, 0, 1)) {
			acc_err("%s: copy: dst and src overlap", tg_nm(name));
			return -EINVAL;
		}
		return 0;
	case ACCEL_TASK_FILL:
		if (nargs < 1)
			goto few;
		if (!tg_writes(access[0]))
			goto acc;
		return 0;
	case ACCEL_TASK_REDUCE:
		if (nargs < 3)
			goto few;
		if (!tg_writes(access[0]) || !tg_reads(access[1]) || !tg_reads(access[2]))
			goto acc;
		if (u0 > DRM_VACCEL_REDOP_MAX || acc_reduce_dtype(t[0]->dtype) < 0 ||
		    t[1]->dtype != t[0]->dtype || t[2]->dtype != t[0]->dtype) {
			acc_err("%s: reduce: bad operation or dtype (all three of one of f32, f16, bf16, i32, i64, u8)",
				tg_nm(name));
			return -EINVAL;
		}
		for (i = 0; i < 3; i++)
			if (!accel_tensor_is_contiguous(t[i]) || tg_nelems(t[i]) != tg_nelems(t[0])) {
				acc_err("%s: reduce: argument %u is not contiguous or has another element count",
					tg_nm(name), i);
				return -EINVAL;
			}
		return 0;
	case ACCEL_TASK_MATMUL:
		{
		const struct accel_tensor *c = t[0], *a = t[1], *b = t[2];

		if (nargs < 3)
			goto few;
		if (!tg_writes(access[0]) || !tg_reads(access[1]) || !tg_reads(access[2]))
			goto acc;
		if (u0 && access[0] != ACCEL_INOUT) {
			acc_err("%s: matmul: accumulating into C needs C as INOUT", tg_nm(name));
			return -EINVAL;
		}
		if (c->dtype != ACCEL_DTYPE_F32 || a->dtype != b->dtype ||
		    (a->dtype != ACCEL_DTYPE_F32 && a->dtype != ACCEL_DTYPE_F16 &&
		     a->dtype != ACCEL_DTYPE_BF16)) {
			acc_err("%s: matmul: C must be f32, A and B one of f32, f16, bf16", tg_nm(name));
			return -EINVAL;
		}
		if (a->ndims != 2 || b->ndims != 2 || c->ndims != 2 ||
		    a->shape[0] != c->shape[0] || b->shape[1] != c->shape[1] ||
		    a->shape[1] != b->shape[0]) {
			acc_err("%s: matmul: shapes must be C m x n, A m x k, B k x n", tg_nm(name));
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
					tg_nm(name), i, DRM_VACCEL_MATMUL_MAX_DIM);
				return -EINVAL;
			}
		}
		if (overlap(t, lay, 0, 1) || overlap(t, lay, 0, 2)) {
			acc_err("%s: matmul: C overlaps A or B", tg_nm(name));
			return -EINVAL;
		}
		return 0;
	}
	case ACCEL_TASK_DELAY:
		if (u0 > 1000000000ull) {
			acc_err("%s: delay of %llu ns: at most 1 s", tg_nm(name), (unsigned long long)u0);
			return -EINVAL;
		}
		return 0;
	case ACCEL_TASK_HOST:
		return 0;
	default:
		acc_err("%s: unknown task op %u", tg_nm(name), op);
		return -EINVAL;
	}
few:
	acc_err("%s: too few arguments (%u) for its operation", tg_nm(name), nargs);
	return -EINVAL;
acc:
	acc_err("%s: an operand's access does not match the operation (outputs first, then inputs)",
		tg_nm(name));
	return -EINVAL;
}

