// SPDX-License-Identifier: MIT
/*
 * Instantiation: each queue's tasks of a captured graph, in capture order,
 * become one packet list in a sealed persistent buffer. Before a task, a
 * WAIT for each other queue it depends on (the latest producer only, and
 * only if the body has not waited that far already); after a task that
 * another queue waits for (and after the last one), a SIGNAL of the
 * queue's timeline. Waits and signals are epoch-relative
 * (DRM_VACCEL_WAIT_F_EPOCH, DRM_VACCEL_SIGNAL_F_EPOCH): a launch picks one
 * epoch E for all its queues, above every value handed out on them so far,
 * and point j of a queue's body is timeline value E + j. So values only
 * grow, nothing is ever reset, and eager work before and after a launch
 * orders against it like against any task (seeds 001, 004).
 *
 * Each (queue, buffer) the graph touches gets a summary: the byte hull of
 * the queue's accesses, read and/or write (conservative). A launch orders
 * itself after earlier work through the summaries, and later work after
 * the launch (launch.c).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tg_internal.h"

struct body {
	struct drm_vaccel_packet *pk;
	uint32_t *task_of;
	uint32_t n, cap, tcap;
	struct drm_vaccel_matmul *desc;
	uint32_t nd, dcap;
	int32_t *bind;			/* per graph buffer: binding slot or -1 */
	struct accel_graph *g;
};

static int body_room(struct body *b, uint32_t n)
{
	void *np = tg_grow(b->pk, &b->cap, b->n + n, sizeof(*b->pk), 256);

	if (!np)
		return -ENOMEM;
	b->pk = np;
	np = tg_grow(b->task_of, &b->tcap, b->n + n, sizeof(*b->task_of), 256);
	if (!np)
		return -ENOMEM;
	b->task_of = np;
	return 0;
}

static int graph_addr(struct tg_lower *lw, const struct tg_arg *a, uint64_t off, uint64_t *va)
{
	struct body *b = lw->priv;
	uint32_t i = tg_graph_buf_index(b->g, a->v.buf);
	struct accel_device *dev = lw->tg->devs[lw->devi];
	struct tg_gbuf *gb;
	int ret, fd;

	if (b->bind[i] >= 0) {
		*va = DRM_VACCEL_BINDING_ADDR(b->bind[i], off);
		return 0;
	}
	/* addressed directly: the graph keeps its import (the list outlives any entry) */
	gb = b->g->bufs[i];
	if (gb->buf->dev == dev) {
		*va = gb->buf->va + off;
		return 0;
	}
	if (!gb->import[lw->devi]) {
		ret = accel_buffer_export(gb->buf, 0, &fd);
		if (ret)
			return ret;
		ret = acc_buffer_import_pinned(dev, fd, &gb->import_pin[lw->devi],
					       &gb->import[lw->devi]);
		close(fd);
		if (ret) {
			gb->import[lw->devi] = NULL;
			return ret;
		}
	}
	*va = gb->import[lw->devi]->va + off;
	return 0;
}

/* descriptors go after the packets: the address is patched once the body has one */
static int graph_desc(struct tg_lower *lw, const struct drm_vaccel_matmul *m, uint64_t *va)
{
	struct body *b = lw->priv;
	void *np = tg_grow(b->desc, &b->dcap, b->nd + 1, sizeof(*b->desc), 16);

	if (!np)
		return -ENOMEM;
	b->desc = np;
	b->desc[b->nd] = *m;
	*va = (uint64_t)b->nd++ * sizeof(*m);
	return 0;
}

void tg_exec_free(struct accel_graph_exec *ge)
{
	uint32_t i;

	list_del(&ge->node);
	tg_trace_forget_exec(ge->tg, ge);
	for (i = 0; i < ge->nlines; i++) {
		accel_buffer_destroy(ge->lines[i].body);
		free(ge->lines[i].task_of);
		free(ge->lines[i].waits);
	}
	for (i = 0; i < ACCEL_TG_MAX_DEVICES; i++) {
		accel_buffer_destroy(ge->tables[i]);
		accel_buffer_destroy(ge->tstamps[i]);
	}
	if (ge->g)
		tg_graph_put(ge->g);
	free(ge->bind);
	free(ge->lines);
	free(ge->sums);
	free(ge->table_last);
	free(ge);
}

static int add_summary(struct accel_graph_exec *ge, uint32_t line, uint32_t el, uint32_t buf,
		       uint64_t lo, uint64_t hi, uint32_t access)
{
	struct tg_summary *s;
	uint32_t i;
	void *np;

	for (i = 0; i < ge->nsums; i++) {
		s = &ge->sums[i];
		if (s->line == line && s->buf == buf)
			goto merge;
	}
	np = tg_grow(ge->sums, &ge->sumcap, ge->nsums + 1, sizeof(*ge->sums), 16);
	if (!np)
		return -ENOMEM;
	ge->sums = np;
	s = &ge->sums[ge->nsums++];
	memset(s, 0, sizeof(*s));
	s->line = line;
	s->exec_line = el;
	s->buf = buf;
	s->lo = lo;
	s->hi = hi;
merge:
	if (lo < s->lo)
		s->lo = lo;
	if (hi > s->hi)
		s->hi = hi;
	if (access != ACCEL_INPUT)
		s->write = true;
	if (access == ACCEL_INPUT || access == ACCEL_INOUT)
		s->read = true;
	return 0;
}

static int task_summaries(struct accel_graph_exec *ge, uint32_t el, const struct tg_gtask *t)
{
	const struct accel_tensor *tv = tg_gt_ct(t);
	const uint32_t *acc = tg_gt_cacc(t);
	struct accel_graph *g = ge->g;
	uint32_t k;
	int ret;

	for (k = 0; k < t->nargs; k++) {
		struct tm_layout lay;

		if (tm_layout_make(&tv[k], &lay) || lay.empty)
			continue;
		ret = add_summary(ge, t->line, el, tg_graph_buf_index(g, tv[k].buf),
				  (uint64_t)lay.lo, (uint64_t)lay.hi, acc[k]);
		if (ret)
			return ret;
	}
	return 0;
}

/* the summaries' accesses and layouts, once every task has added to them */
static void summaries_finish(struct accel_graph_exec *ge)
{
	uint32_t i;

	for (i = 0; i < ge->nsums; i++) {
		struct tg_summary *s = &ge->sums[i];
		struct accel_tensor view;
		uint64_t shape = s->hi - s->lo;

		s->access = s->write ? (s->read ? ACCEL_INOUT : ACCEL_OUTPUT) : ACCEL_INPUT;
		accel_tensor_init(&view, ge->g->bufs[s->buf]->buf, s->lo, ACCEL_DTYPE_U8, 1, &shape);
		tm_layout_make(&view, &s->lay);
	}
}

/* the host line of a graph: no packets, the launch queues its host tasks */
static int host_summaries(struct accel_graph_exec *ge, uint32_t el)
{
	uint32_t i;
	int ret;

	for (i = 0; i < ge->g->ntasks; i++) {
		if (ge->g->tasks[i].line != ge->lines[el].line)
			continue;
		ge->nhost++;
		ret = task_summaries(ge, el, &ge->g->tasks[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int build_line(struct accel_graph_exec *ge, uint32_t eli, struct body *b,
		      const bool *signalled, uint32_t *waited, uint32_t *need, uint32_t *touched)
{
	struct tg_exec_line *el = &ge->lines[eli];
	struct accel_tg *tg = ge->tg;
	struct accel_graph *g = ge->g;
	struct tg_line *l = &tg->lines[el->line];
	struct tg_lower lw = { .tg = tg, .devi = l->devi, .addr = graph_addr, .desc = graph_desc,
			       .priv = b };
	struct tg_arg args[ACCEL_TASK_MAX_ARGS];
	uint64_t sva, va, size;
	uint32_t i, k, last = 0, nneed, n0;
	void *host;
	int n, ret;

	if (l->kind == TG_LINE_HOST)
		return host_summaries(ge, eli);
	ret = tg_line_va(tg, el->line, l->devi, &sva);
	if (ret)
		return ret;
	for (i = 0; i < g->ntasks; i++)
		if (g->tasks[i].line == el->line)
			last = i;
	for (i = 0; i < g->ntasks; i++) {
		struct tg_gtask *t = &g->tasks[i];

		if (t->line != el->line)
			continue;
		n0 = b->n;
		/* the latest point needed of each other line, if not waited for already */
		nneed = 0;
		for (k = 0; k < t->ndeps; k++) {
			struct tg_gtask *d = &g->tasks[t->deps[k].task];

			if (d->line == el->line || waited[d->line] > d->point)
				continue;
			if (!need[d->line])
				touched[nneed++] = d->line;
			if (d->point + 1 > need[d->line])
				need[d->line] = d->point + 1;
		}
		for (k = 0; k < nneed; k++) {
			uint32_t r = touched[k];

			ret = tg_line_va(tg, r, l->devi, &va);
			if (!ret)
				ret = body_room(b, 1);
			if (ret)
				return ret;
			accel_prep_wait(&b->pk[b->n], va, DRM_VACCEL_WAIT_GE, need[r] - 1, 0,
					tg->timeout_ns > 0 ? (uint64_t)tg->timeout_ns : 0);
			b->pk[b->n++].flags = DRM_VACCEL_WAIT_F_EPOCH;
			waited[r] = need[r];
			need[r] = 0;
		}
		for (k = 0; k < t->nargs; k++) {
			memset(&args[k], 0, sizeof(args[k]));
			args[k].v = t->t[k];	/* at most ACCEL_TASK_MAX_ARGS: no collective */
			args[k].access = t->access[k];
			args[k].heap = -1;
		}
		ret = body_room(b, TG_MAX_TASK_PACKETS + 3);
		if (ret)
			return ret;
		if (ge->trace_bind >= 0)
			accel_prep_timestamp(&b->pk[b->n++],
					     DRM_VACCEL_BINDING_ADDR(ge->trace_bind, i * 16));
		n = tg_lower_task(&lw, t->op, args, t->u0, &b->pk[b->n], TG_MAX_TASK_PACKETS,
				  t->name);
		if (n < 0)
			return n;
		b->n += (uint32_t)n;
		if (ge->trace_bind >= 0)
			accel_prep_timestamp(&b->pk[b->n++],
					     DRM_VACCEL_BINDING_ADDR(ge->trace_bind, i * 16 + 8));
		if (signalled[i] || i == last) {
			/* IRQ: host waiters of the timeline sleep in the kernel */
			accel_prep_signal(&b->pk[b->n], sva, DRM_VACCEL_SIGNAL_MAX, t->point);
			accel_prep_irq(&b->pk[b->n]);
			b->pk[b->n++].flags = DRM_VACCEL_SIGNAL_F_EPOCH;
		}
		for (k = n0; k < b->n; k++)
			b->task_of[k] = i;
		ret = task_summaries(ge, eli, t);
		if (ret)
			return ret;
	}
	/* the body: packets, then descriptors */
	size = (uint64_t)b->n * sizeof(*b->pk) + (uint64_t)b->nd * sizeof(*b->desc);
	ret = accel_buffer_create(tg->devs[l->devi], size, ACCEL_BUFFER_PERSISTENT |
				  ACCEL_BUFFER_HOST, &el->body);
	if (ret)
		return ret;
	for (k = 0; k < b->n; k++)
		if ((b->pk[k].header & DRM_VACCEL_PKT_TYPE_MASK) == DRM_VACCEL_PKT_MATMUL)
			b->pk[k].operand[0] += el->body->va + (uint64_t)b->n * sizeof(*b->pk);
	host = accel_buffer_host(el->body);
	memcpy(host, b->pk, (size_t)b->n * sizeof(*b->pk));
	if (b->nd)
		memcpy((char *)host + (size_t)b->n * sizeof(*b->pk), b->desc,
		       (size_t)b->nd * sizeof(*b->desc));
	ret = accel_buffer_seal(el->body);
	if (ret)
		return ret;
	el->npk = b->n;
	el->task_of = malloc((size_t)b->n * sizeof(*el->task_of));
	if (!el->task_of)
		return -ENOMEM;
	memcpy(el->task_of, b->task_of, (size_t)b->n * sizeof(*el->task_of));
	return 0;
}

ACCEL_API int accel_graph_instantiate(struct accel_graph *g, struct accel_graph_exec **out)
{
	struct accel_graph_exec *ge = NULL;
	struct accel_tg *tg;
	struct body b = { 0 };
	uint32_t *npoints = NULL, *waited = NULL, *need = NULL, *touched = NULL, i, k, nl = 0;
	bool *signalled = NULL;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!g || g->destroyed)
		return -EINVAL;
	tg = g->tg;
	ret = tg_enter(tg, TG_E_ABORT, "accel_graph_instantiate");
	if (ret)
		return ret;
	if (!g->ntasks) {
		acc_err("accel_graph_instantiate: the graph has no tasks");
		return -EINVAL;
	}
	if (tg_graph_has_coll(g))	/* launched by replay */
		return tg_coll_instantiate(g, out);
	ret = -ENOMEM;
	ge = calloc(1, sizeof(*ge));
	npoints = calloc(tg->nlines, sizeof(*npoints));
	waited = calloc(tg->nlines, sizeof(*waited));
	need = calloc(tg->nlines, sizeof(*need));
	touched = calloc(tg->nlines, sizeof(*touched));
	signalled = calloc(g->ntasks, sizeof(*signalled));
	b.bind = calloc(g->nbufs, sizeof(*b.bind));
	if (!ge || !npoints || !waited || !need || !touched || !signalled || !b.bind)
		goto out;
	list_init(&ge->node);
	ge->tg = tg;
	ge->g = g;
	g->refs++;
	b.g = g;
	/* points: the place of each task on its line; who signals for another line */
	for (i = 0; i < g->ntasks; i++) {
		struct tg_gtask *t = &g->tasks[i];

		if (!npoints[t->line]++)
			nl++;
		t->point = npoints[t->line] - 1;
		for (k = 0; k < t->ndeps; k++)
			if (g->tasks[t->deps[k].task].line != t->line)
				signalled[t->deps[k].task] = true;
	}
	/* binding slots: the first DRM_VACCEL_EXEC_MAX_BINDINGS buffers but the heaps */
	for (i = 0; i < g->nbufs; i++) {
		b.bind[i] = -1;
		if (tg_heap_of(tg, g->bufs[i]->buf) < 0 &&
		    ge->nbound < DRM_VACCEL_EXEC_MAX_BINDINGS)
			b.bind[i] = (int32_t)ge->nbound++;
	}
	ge->trace_bind = -1;
	if ((tg->p.flags & ACCEL_TG_TRACE) && ge->nbound < DRM_VACCEL_EXEC_MAX_BINDINGS)
		ge->trace_bind = (int32_t)ge->nbound;
	ge->lines = calloc(nl, sizeof(*ge->lines));
	ge->table_last = calloc((size_t)TG_TABLES * nl, sizeof(*ge->table_last));
	if (!ge->lines || !ge->table_last)
		goto out;
	for (i = 0; i < tg->nlines; i++) {
		struct tg_exec_line *el;

		if (!npoints[i])
			continue;
		el = &ge->lines[ge->nlines++];
		el->line = i;
		el->npoints = npoints[i];
		el->waits = calloc(tg->nlines, sizeof(*el->waits));
		if (!el->waits) {
			ret = -ENOMEM;
			goto out;
		}
		memset(waited, 0, tg->nlines * sizeof(*waited));
		b.n = 0;
		b.nd = 0;
		ret = build_line(ge, ge->nlines - 1, &b, signalled, waited, need, touched);
		if (ret)
			goto out;
		if ((ge->nbound || ge->trace_bind >= 0) && tg->lines[i].kind == TG_LINE_QUEUE &&
		    !ge->tables[tg->lines[i].devi]) {
			ret = accel_buffer_create(tg->devs[tg->lines[i].devi],
						  TG_TABLES * DRM_VACCEL_EXEC_MAX_BINDINGS * 8,
						  ACCEL_BUFFER_HOST, &ge->tables[tg->lines[i].devi]);
			if (ret)
				goto out;
		}
		if (ge->trace_bind >= 0 && tg->lines[i].kind == TG_LINE_QUEUE &&
		    !ge->tstamps[tg->lines[i].devi]) {
			ret = accel_buffer_create(tg->devs[tg->lines[i].devi],
						  (uint64_t)TG_TABLES * g->ntasks * 16,
						  ACCEL_BUFFER_HOST, &ge->tstamps[tg->lines[i].devi]);
			if (ret)
				goto out;
		}
	}
	summaries_finish(ge);
	ge->bind = b.bind;
	b.bind = NULL;
	list_add_tail(&tg->execs, &ge->node);
	tg_buf_commit_staged(tg);
	*out = ge;
	ge = NULL;
	ret = 0;
out:
	if (ret) {
		acc_err("accel_graph_instantiate: %s", strerror(-ret));
		tg_buf_unstage(tg);
	}
	if (ge)
		tg_exec_free(ge);
	free(b.pk);
	free(b.task_of);
	free(b.desc);
	free(b.bind);
	free(npoints);
	free(waited);
	free(need);
	free(touched);
	free(signalled);
	return ret;
}

ACCEL_API int accel_graph_exec_wait(struct accel_graph_exec *ge, int64_t timeout_ns)
{
	int64_t deadline = acc_deadline(timeout_ns);
	struct accel_tg *tg;
	uint32_t i;
	int ret;

	if (!ge)
		return -EINVAL;
	tg = ge->tg;
	ret = tg_enter(tg, TG_E_ABORT | TG_E_FAULT, "accel_graph_exec_wait");
	if (ret)
		return ret;
	for (i = 0; i < ge->nlines; i++) {
		struct tg_exec_line *el = &ge->lines[i];

		if (!el->last_value)
			continue;
		ret = tg_wait_id(tg, tg_id(el->line, el->last_value), deadline, "a graph launch");
		if (!ret)
			ret = tg_trace_drain(tg, el->line, deadline);
		if (ret)
			return ret;
	}
	return 0;
}

ACCEL_API void accel_graph_exec_destroy(struct accel_graph_exec *ge)
{
	int ret;

	if (!ge || tg_in_host_task(ge->tg))
		return;
	if (!acc_dev_forked(ge->tg->devs[0])) {
		ret = accel_graph_exec_wait(ge, ge->tg->timeout_ns);
		if (ret && ret != -ECHILD) {
			/* its bodies may still run: kept until a recovery or the task graph's end */
			acc_warn("accel_graph_exec_destroy: launches still running (%s): the executable stays until accel_tg_recover() or accel_tg_destroy()",
				 strerror(-ret));
			ge->zombie = true;
			return;
		}
	}
	tg_exec_free(ge);
}
