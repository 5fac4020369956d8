// SPDX-License-Identifier: MIT
/*
 * Eager submission. One task passes each stage once, in order:
 *
 *   1. validate    the task and each argument's view; layouts made once
 *                  (validate.c; no state changes)
 *   2. register    the buffers it names (a new entry is "staged" and
 *                  forgotten again if the submission fails)
 *   3. place       OUTPUT_NEW tensors in the output heap (may wait for
 *                  heap space; undone if the submission fails)
 *   4. find        the dependencies: a read-only pass over the TensorMap
 *   5. prepare     everything the commit needs: TensorMap and hold room,
 *                  signal imports, the packets (lowered into a scratch
 *                  array), ring room (may wait), a host task record
 *   6. commit      write the WAITs and packets into the reserved ring
 *                  slots, register the task's views in the TensorMap,
 *                  retain its heap blocks, hand out its value, publish.
 *                  Nothing in this stage can fail.
 *
 * A submission that fails in stages 1-5 changes nothing the program can
 * observe: no TensorMap entry, no heap block, no ring slot, no value.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tg_internal.h"

static int eager_addr(struct tg_lower *lw, const struct tg_arg *a, uint64_t off, uint64_t *va)
{
	int ret = tg_buf_va(lw->tg, a->b, lw->devi, va);

	*va += off;
	return ret;
}

static int eager_desc(struct tg_lower *lw, const struct drm_vaccel_matmul *m, uint64_t *va)
{
	struct tg_line *l = lw->priv;
	uint64_t value = l->next, slot = value % TG_DESC_SLOTS;
	void *host;
	int ret;

	if (!l->desc) {
		ret = accel_buffer_create(lw->tg->devs[lw->devi], TG_DESC_SLOTS * 64,
					  ACCEL_BUFFER_HOST, &l->desc);
		if (ret)
			return ret;
	}
	/* the task that used this slot last must be done with it */
	if (value > TG_DESC_SLOTS) {
		ret = tg_wait_id(lw->tg, tg_id((uint32_t)(l - lw->tg->lines), value - TG_DESC_SLOTS),
				 acc_deadline(lw->tg->timeout_ns), "a MATMUL descriptor slot");
		if (ret)
			return ret;
	}
	host = (char *)accel_buffer_host(l->desc) + slot * 64;
	memcpy(host, m, sizeof(*m));
	*va = l->desc->va + slot * 64;
	return 0;
}

int tg_lower_eager(struct accel_tg *tg, struct tg_task *tt, struct tg_line *l, uint64_t value)
{
	struct tg_lower lw = { .tg = tg, .devi = l->devi, .addr = eager_addr, .desc = eager_desc,
			       .priv = l };

	(void)value;
	return tg_lower_task(&lw, tt->tk.op, tt->a, tt->u0, tg->pk, TG_MAX_TASK_PACKETS,
			     tt->tk.name);
}

/* a host task's record, with the dependencies found (stage 5) */
static struct tg_host *host_record(struct accel_tg *tg, struct tg_task *tt, uint64_t value)
{
	struct tg_deps *d = &tg->deps;
	struct tg_host *h = calloc(1, sizeof(*h));
	uint32_t i;

	if (!h)
		return NULL;
	h->deps = calloc(d->ntouched ? d->ntouched : 1, sizeof(*h->deps));
	if (!h->deps) {
		free(h);
		return NULL;
	}
	for (i = 0; i < d->ntouched; i++)
		if (d->need[d->touched[i]])
			h->deps[h->ndeps++] = tg_id(d->touched[i], d->need[d->touched[i]]);
	h->value = value;
	h->fn = tt->tk.host.fn;
	h->arg = tt->tk.host.arg;
	snprintf(h->name, sizeof(h->name), "%s", tg_name(&tt->tk));
	return h;
}

static void name_copy(char *dst, size_t len, const char *src)
{
	size_t i;

	if (!src)
		src = "task";
	for (i = 0; i + 1 < len && src[i]; i++)
		dst[i] = src[i];
	dst[i] = 0;
}

void tg_ring_rec_set(struct tg_line *l, uint64_t value, uint64_t first, const char *name)
{
	struct tg_ring_rec *rec = &l->recs[value & (l->q->size - 1)];

	rec->value = value;
	rec->first = first;
	rec->last = l->q->pi - 1;
	rec->ge = NULL;
	name_copy(rec->name, sizeof(rec->name), name);
}

void tg_task_commit(struct accel_tg *tg, struct tg_line *l, struct tg_task *tt, uint64_t id,
		    uint64_t value)
{
	uint32_t i;

	tm_group_begin(tg->tm);
	for (i = 0; i < tt->nargs; i++) {
		struct tg_arg *a = &tt->a[i];

		tm_insert_layout(tg->tm, a->v.buf, &a->lay, (enum accel_access)a->access, id);
		tg_buf_used(a->b, tt->line, value);
	}
	tm_group_end(tg->tm);
	tg_holds_commit(tg, l, tt, value);
	tg_outputs_commit(tt);
	tg_deps_count(tg);
	if (tg->open_maps)
		tg_deps_mark_blocked(tg, tt->line, value);
	tg->st.tasks++;
	l->next = value + 1;
}

/* register the buffers of the arguments (stage 2) */
static int register_args(struct accel_tg *tg, struct tg_task *tt)
{
	uint32_t i;
	int ret = 0;

	for (i = 0; i < tt->nargs; i++) {
		struct tg_arg *a = &tt->a[i];

		if (!a->v.buf)
			continue;	/* OUTPUT_NEW not yet placed */
		a->b = tg_buf_get(tg, a->v.buf, &ret);
		if (!a->b)
			return ret;
	}
	return 0;
}

/* the views of a task as TensorMap arguments: reserve room for their entries */
static int tm_room(struct accel_tg *tg, const struct tg_task *tt)
{
	const struct accel_buffer *bufs[ACCEL_TASK_MAX_ARGS];
	uint32_t i;

	for (i = 0; i < tt->nargs; i++)
		bufs[i] = tt->a[i].v.buf;
	return tm_reserve(tg->tm, bufs, tt->nargs);
}

/*
 * Stages 2-6 of an eager task (stage 1 done by the caller). @publish:
 * ring the doorbell now (else the caller does, once for a batch).
 */
static int submit_eager(struct accel_tg *tg, struct tg_task *tt, uint64_t *id_out, bool publish)
{
	struct tg_line *l = &tg->lines[tt->line];
	bool host = l->kind == TG_LINE_HOST, trace = tg->p.flags & ACCEL_TG_TRACE;
	struct drm_vaccel_packet *p;
	struct tg_host *h = NULL;
	uint64_t value, id, sva = 0, first;
	uint32_t i, nplaced = 0;
	int ret, n = 0;

	if (atomic_load_explicit(&tg->orphans, memory_order_relaxed) ||
	    !list_empty(&tg->pending_drop))
		tg_bufs_collect(tg);
	if (++tg->submits % TG_FAULT_CHECK_EVERY == 0) {
		ret = tg_check_faults(tg);
		if (ret)
			return ret;
	}
	ret = tg_line_room(l, 1, tg_name(&tt->tk));
	if (ret)
		return ret;
	/* 2. register */
	ret = register_args(tg, tt);
	if (ret)
		goto unstage;
	/* 3. place (may wait: run nothing of ours meanwhile but host tasks) */
	ret = tg_outputs_place(tg, tt, host ? 0 : l->devi);
	if (ret)
		goto unstage;
	for (i = 0; i < tt->nargs; i++) {
		struct tg_arg *a = &tt->a[i];

		if (a->placed) {
			a->b = tg_buf_get(tg, a->v.buf, &ret);
			if (!a->b)
				goto unplace;
		}
	}
	value = l->next;
	id = tg_id(tt->line, value);
	/* 4. find */
	tg_deps_begin(tg, tt->line, id);
	for (i = 0; i < tt->nargs; i++) {
		struct tg_arg *a = &tt->a[i];

		if (a->placed) {
			nplaced++;
			continue;	/* fresh memory: every earlier user has completed */
		}
		ret = tm_deps_layout(tg->tm, a->v.buf, &a->lay, (enum accel_access)a->access, id,
				     tg_dep_cb, tg);
		if (ret < 0)
			goto unplace;
	}
	/* 5. prepare */
	ret = tg_holds_room(l, tt->nheap);
	if (!ret)
		ret = tm_room(tg, tt);
	if (ret)
		goto unplace;
	if (host) {
		h = host_record(tg, tt, value);
		if (!h) {
			ret = -ENOMEM;
			goto unplace;
		}
	} else {
		ret = tg_deps_resolve(tg, l->devi);
		if (!ret)
			ret = tg_line_va(tg, tt->line, l->devi, &sva);
		if (ret)
			goto unplace;
		n = tg_lower_eager(tg, tt, l, value);
		if (n < 0) {
			ret = n;
			goto unplace;
		}
		ret = tg_reserve(tg, l, tg->deps.nwaits + (unsigned int)n + (trace ? 2 : 0));
		if (ret == -EINVAL) {
			acc_err("%s: %u packets and %u WAITs do not fit in a ring of %u",
				tg_name(&tt->tk), n, tg->deps.nwaits, l->q->size);
			ret = -E2BIG;
		}
		if (ret)
			goto unplace;
	}
	/* 6. commit: nothing below fails */
	tg_buf_commit_staged(tg);
	tg_commit_line(tg, tt);
	if (host) {
		struct list one;

		/* a task of a collective graph's launch: that launch's buffers */
		if (tg->launch_bind) {
			pthread_mutex_lock(&tg->host_lock);
			tg->launch_bind->refs++;
			pthread_mutex_unlock(&tg->host_lock);
			h->bind = tg->launch_bind;
		}
		list_init(&one);
		list_add_tail(&one, &h->node);
		tg_host_queue(tg, &one);
	} else {
		first = l->q->pi;
		tg_deps_emit(tg, l);
		if (trace)
			tg_trace_stamp(l, value, 0, accel_queue_get_packet(l->q));
		accel_prep_completion(&tg->pk[n - 1], sva, DRM_VACCEL_SIGNAL_MAX, value);
		accel_prep_irq(&tg->pk[n - 1]);
		for (i = 0; i < (uint32_t)n; i++) {
			p = accel_queue_get_packet(l->q);
			*p = tg->pk[i];
		}
		if (trace) {
			tg_trace_stamp(l, value, 1, accel_queue_get_packet(l->q));
			tg_trace_note(l, value, id, tg_name(&tt->tk));
		}
		tg_ring_rec_set(l, value, first, tt->tk.name);
	}
	tg_task_commit(tg, l, tt, id, value);
	tg->st.heap_allocs += nplaced;
	if (id_out)
		*id_out = id;
	if (!host && publish) {
		ret = accel_queue_submit(l->q);
		if (ret < 0 && !tg->fault) {
			/* the task is queued, its queue dead: stop here until recovery */
			tg->fault = ret;
			tg->fault_line = tt->line;
			return ret;
		}
	}
	if (!tg->worker_running && !list_empty(&tg->host_pending))
		tg_run_host_tasks(tg, false);
	return 0;
unplace:
	tg_outputs_undo(tg, tt);
unstage:
	tg_buf_unstage(tg);
	return ret;
}

ACCEL_API int accel_tg_submit(struct accel_tg *tg, struct accel_task *task, uint64_t *id)
{
	struct tg_task tt;
	int ret;

	ret = tg_enter(tg, TG_E_ABORT | TG_E_FAULT, "accel_tg_submit");
	if (ret)
		return ret;
	if (!task)
		return -EINVAL;
	ret = tg_task_copy(&tt, task);
	if (!ret)
		ret = tg_validate(tg, &tt, task);
	if (ret)
		return ret;
	if (tg->capture) {
		ret = tg_capture_task(tg, &tt);
		if (!ret && id)
			*id = 0;
		return ret;
	}
	return submit_eager(tg, &tt, id, true);
}

ACCEL_API int accel_tg_submit_batch(struct accel_tg *tg, struct accel_task *const *tasks,
				    unsigned int n, uint64_t *ids)
{
	struct tg_task tt;
	unsigned int k;
	uint32_t i;
	int ret;

	ret = tg_enter(tg, TG_E_ABORT | TG_E_FAULT, "accel_tg_submit_batch");
	if (ret)
		return ret;
	if (!tasks && n)
		return -EINVAL;
	for (k = 0; k < n; k++) {
		if (!tasks[k]) {
			ret = -EINVAL;
			break;
		}
		ret = tg_task_copy(&tt, tasks[k]);
		if (!ret)
			ret = tg_validate(tg, &tt, tasks[k]);
		if (ret)
			break;
		if (tg->capture) {
			ret = tg_capture_task(tg, &tt);
			if (!ret && ids)
				ids[k] = 0;
		} else {
			ret = submit_eager(tg, &tt, ids ? &ids[k] : NULL, false);
		}
		if (ret)
			break;
	}
	/* one doorbell per queue for the whole batch */
	for (i = 0; i < tg->nq; i++) {
		struct tg_line *l = &tg->lines[i];
		int r;

		if (l->q->pi == l->q->wi)
			continue;
		r = accel_queue_submit(l->q);
		if (r < 0 && !tg->fault) {
			tg->fault = r;
			tg->fault_line = i;
		}
	}
	if (ret && k)
		acc_info("accel_tg_submit_batch: %u of %u tasks submitted; task %u: %s", k, n, k,
			 strerror(-ret));
	return k ? (int)k : ret;
}
