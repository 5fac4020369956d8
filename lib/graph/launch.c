// SPDX-License-Identifier: MIT
/*
 * Graph launches. A launch is, per queue of the graph, the WAITs on
 * earlier work that overlaps what the queue's part of the graph touches
 * (through the summaries of instantiate.c) and one EXEC of the queue's
 * sealed body with this launch's epoch and binding table: one ring slot
 * however many tasks (seed 004). Host tasks of the graph are queued at
 * their points of the host line. Later work depends on the launch through
 * the same summaries, registered in the TensorMap as one group: the
 * summaries of one launch are not ordered with each other, so none may
 * retire another (each queue's summary stays visible to later work).
 *
 * All or nothing: the first pass finds every queue's WAITs, makes the
 * imports, reserves ring room on every queue, prepares the host task
 * records and TensorMap room; only then does the second pass write and
 * publish, and it cannot fail (a queue found dead while publishing stops
 * the task graph, and the error says so).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tg_internal.h"

/* the buffer graph buffer @bi stands for in this launch */
static struct accel_buffer *actual(const struct accel_graph_exec *ge, uint32_t bi,
				   const struct accel_binding *bindings, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (bindings[i].from == ge->g->bufs[bi]->buf)
			return bindings[i].to;
	return ge->g->bufs[bi]->buf;
}

static int check_bindings(struct accel_graph_exec *ge, const struct accel_binding *bindings,
			  unsigned int n, struct accel_buffer **act)
{
	struct accel_graph *g = ge->g;
	struct accel_tg *tg = ge->tg;
	unsigned int i, j;
	uint32_t bi;

	if (n > DRM_VACCEL_EXEC_MAX_BINDINGS || (n && !bindings)) {
		acc_err("accel_graph_launch: %u bindings (at most %u)", n,
			DRM_VACCEL_EXEC_MAX_BINDINGS);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		const struct accel_binding *bd = &bindings[i];

		if (!bd->from || !bd->to) {
			acc_err("accel_graph_launch: binding %u: a NULL buffer", i);
			return -EINVAL;
		}
		bi = tg_graph_buf_index(g, bd->from);
		if (bi == g->nbufs || ge->bind[bi] < 0) {
			acc_err("accel_graph_launch: binding %u: buffer 0x%llx is %s", i,
				(unsigned long long)bd->from->va,
				bi == g->nbufs ? "not used by the graph" :
				"not bound (an output heap, or past the binding table)");
			return -EINVAL;
		}
		if (bd->to->dev != bd->from->dev || bd->to->size < g->bufs[bi]->hi ||
		    tg_heap_of(tg, bd->to) >= 0) {
			acc_err("accel_graph_launch: binding %u: buffer 0x%llx must be of %s, not an output heap, and at least %llu bytes",
				i, (unsigned long long)bd->to->va, bd->from->dev->path,
				(unsigned long long)g->bufs[bi]->hi);
			return -EINVAL;
		}
		for (j = 0; j < i; j++)
			if (bindings[j].from == bd->from) {
				acc_err("accel_graph_launch: bindings %u and %u both replace buffer 0x%llx",
					j, i, (unsigned long long)bd->from->va);
				return -EINVAL;
			}
	}
	for (i = 0; i < ge->nsums; i++) {
		const struct tg_summary *s = &ge->sums[i];
		const struct accel_buffer *to = actual(ge, s->buf, bindings, n);

		if (s->write && !(to->vm_flags & DRM_VACCEL_VM_WRITE)) {
			acc_err("accel_graph_launch: buffer 0x%llx, bound for graph buffer %u (0x%llx) that the graph writes, is %s",
				(unsigned long long)to->va, s->buf,
				(unsigned long long)g->bufs[s->buf]->buf->va,
				to->sealed ? "sealed" : "read-only");
			return -EACCES;
		}
	}
	/* two of the graph's buffers may not become one: unordered writers */
	for (i = 0; i < g->nbufs; i++) {
		act[i] = actual(ge, i, bindings, n);
		for (j = 0; j < i; j++)
			if (act[j] == act[i]) {
				acc_err("accel_graph_launch: buffer 0x%llx would stand for both graph buffers %u (0x%llx) and %u (0x%llx): their tasks are not ordered with each other",
					(unsigned long long)act[i]->va, j,
					(unsigned long long)g->bufs[j]->buf->va, i,
					(unsigned long long)g->bufs[i]->buf->va);
				return -EINVAL;
			}
	}
	return 0;
}

/*
 * The graph's host tasks for this launch, at values epoch + point of the
 * host line, in @q. The first also waits for what the summaries found
 * (@el->waits): the host line runs in order, so the others come after it.
 */
static int host_records(struct accel_graph_exec *ge, struct tg_exec_line *el, uint64_t epoch,
			const struct accel_binding *bindings, unsigned int n, struct list *q)
{
	struct accel_graph *g = ge->g;
	struct tg_bindings *bind = NULL;
	struct tg_host *h;
	bool first = true;
	uint32_t i, k, nd;

	if (n) {
		bind = malloc(sizeof(*bind) + n * sizeof(bind->b[0]));
		if (!bind)
			return -ENOMEM;
		bind->refs = 0;
		bind->n = n;
		memcpy(bind->b, bindings, n * sizeof(bind->b[0]));
	}
	for (i = 0; i < g->ntasks; i++) {
		struct tg_gtask *t = &g->tasks[i];

		if (t->line != el->line)
			continue;
		nd = t->ndeps + (first ? el->nwaits : 0);
		h = calloc(1, sizeof(*h));
		if (h)
			h->deps = calloc(nd ? nd : 1, sizeof(*h->deps));
		if (!h || !h->deps) {
			free(h);
			goto nomem;
		}
		for (k = 0; k < t->ndeps; k++) {
			struct tg_gtask *d = &g->tasks[t->deps[k].task];

			if (d->line != el->line)
				h->deps[h->ndeps++] = tg_id(d->line, epoch + d->point);
		}
		for (k = 0; first && k < el->nwaits; k++)
			h->deps[h->ndeps++] = tg_id(el->waits[k].line, el->waits[k].value);
		first = false;
		h->value = epoch + t->point;
		h->fn = t->fn;
		h->arg = t->arg;
		h->ge = ge;
		h->bind = bind;
		if (bind)
			bind->refs++;
		snprintf(h->name, sizeof(h->name), "%s", t->name);
		list_add_tail(q, &h->node);
	}
	if (bind && !bind->refs)
		free(bind);
	return 0;
nomem:
	while (!list_empty(q)) {
		h = container_of(q->next, struct tg_host, node);
		list_del(&h->node);
		tg_host_free(h);
	}
	free(bind);
	return -ENOMEM;
}

/* pass 1 of line @i: its WAITs, ring room */
static int prepare_line(struct accel_graph_exec *ge, uint32_t i, uint64_t epoch,
			struct accel_buffer **act, bool trace)
{
	struct accel_tg *tg = ge->tg;
	struct tg_exec_line *el = &ge->lines[i];
	struct tg_line *l = &tg->lines[el->line];
	struct tg_deps *d = &tg->deps;
	uint64_t end = epoch + el->npoints - 1;
	uint32_t k;
	int ret;

	tg_deps_begin(tg, el->line, tg_id(el->line, end));
	for (k = 0; k < ge->nsums; k++) {
		struct tg_summary *s = &ge->sums[k];

		if (s->exec_line != i)
			continue;
		ret = tm_deps_layout(tg->tm, act[s->buf], &s->lay, (enum accel_access)s->access,
				     d->id, tg_dep_cb, tg);
		if (ret < 0)
			return ret;
	}
	memcpy(el->found, d->found, sizeof(el->found));
	el->same_line = d->same_line;
	if (l->kind == TG_LINE_QUEUE) {
		ret = tg_deps_resolve(tg, l->devi);
		if (ret)
			return ret;
	}
	el->nwaits = 0;
	for (k = 0; k < d->ntouched; k++) {
		uint32_t src = d->touched[k];

		if (d->need[src] && !acc_ge(accel_signal_read(tg->lines[src].sig), d->need[src]))
			el->waits[el->nwaits++] = (struct tg_lwait){ .line = src,
								     .value = d->need[src] };
	}
	if (l->kind != TG_LINE_QUEUE)
		return 0;
	ret = tg_reserve(tg, l, el->nwaits + 1 + (trace ? 2 : 0));
	if (ret == -EINVAL) {
		acc_err("accel_graph_launch: %u WAITs and the EXEC do not fit in the ring of queue %u",
			el->nwaits, l->qi);
		ret = -E2BIG;
	}
	return ret;
}

/* pass 2 of line @i: write its WAITs and EXEC (ring room reserved) */
static void commit_line(struct accel_graph_exec *ge, uint32_t i, uint64_t epoch, uint64_t slot,
			bool trace)
{
	struct accel_tg *tg = ge->tg;
	struct tg_exec_line *el = &ge->lines[i];
	struct tg_line *l = &tg->lines[el->line];
	uint64_t end = epoch + el->npoints - 1, first = l->q->pi, tva;
	struct drm_vaccel_packet *p;
	struct tg_ring_rec *rec;
	uint32_t k;

	for (k = 0; k < el->nwaits; k++) {
		const struct tg_line *s = &tg->lines[el->waits[k].line];

		accel_prep_wait(accel_queue_get_packet(l->q), s->va_on[l->devi], DRM_VACCEL_WAIT_GE,
				el->waits[k].value, 0,
				tg->timeout_ns > 0 ? (uint64_t)tg->timeout_ns : 0);
	}
	tg->st.waits += el->nwaits;
	if (trace) {
		tg_trace_stamp(l, end, 0, accel_queue_get_packet(l->q));
		tg_trace_note(l, end, tg_id(el->line, end), "graph launch");
		if (ge->trace_bind >= 0) {
			struct tg_trace_rec *r = &l->trace[end % TG_TRACE_SLOTS];

			r->ge = ge;
			r->ge_line = i;
			r->ge_slot = (uint32_t)slot;
		}
	}
	p = accel_queue_get_packet(l->q);
	accel_prep_exec(p, el->body->va, el->npk, epoch);
	if (ge->nbound || ge->trace_bind >= 0) {
		tva = ge->tables[l->devi]->va + slot * DRM_VACCEL_EXEC_MAX_BINDINGS * 8;
		accel_prep_exec_bindings(p, tva, ge->nbound + (ge->trace_bind >= 0));
	}
	if (trace)
		tg_trace_stamp(l, end, 1, accel_queue_get_packet(l->q));
	rec = &l->recs[end & (l->q->size - 1)];
	rec->value = end;
	rec->first = first;
	rec->last = l->q->pi - 1;
	rec->ge = ge;
	snprintf(rec->name, sizeof(rec->name), "graph launch");
}

/*
 * A launch committed while maps are open: the lines of it that wait for an
 * open map's unmap, through the WAITs before their EXEC or inside the graph
 * (@bp: scratch of tg->nlines).
 */
static void launch_mark_blocked(struct accel_graph_exec *ge, uint64_t epoch, uint32_t *bp)
{
	struct accel_tg *tg = ge->tg;
	struct accel_graph *g = ge->g;
	uint32_t m = tg->open_maps, i, k;

	while (m) {
		uint64_t *from = tg->maps[__builtin_ctz(m)].from;

		m &= m - 1;
		for (i = 0; i < ge->nlines; i++) {
			struct tg_exec_line *el = &ge->lines[i];

			bp[el->line] = UINT32_MAX;
			for (k = 0; k < el->nwaits; k++) {
				uint64_t f = from[el->waits[k].line];

				if (f && el->waits[k].value >= f)
					bp[el->line] = 0;
			}
		}
		for (i = 0; i < g->ntasks; i++) {
			const struct tg_gtask *t = &g->tasks[i];

			for (k = 0; k < t->ndeps && bp[t->line] > t->point; k++) {
				const struct tg_gtask *d = &g->tasks[t->deps[k].task];

				if (d->line != t->line && bp[d->line] != UINT32_MAX &&
				    d->point >= bp[d->line])
					bp[t->line] = t->point;
			}
		}
		for (i = 0; i < ge->nlines; i++) {
			uint32_t line = ge->lines[i].line;

			if (bp[line] != UINT32_MAX && !from[line])
				from[line] = epoch + bp[line];
		}
	}
}

ACCEL_API int accel_graph_launch(struct accel_graph_exec *ge, const struct accel_binding *bindings,
				 unsigned int n)
{
	struct accel_buffer **act = NULL, **sumbufs = NULL;
	struct tg_buf **tb = NULL;
	uint32_t *bp = NULL;
	struct accel_graph *g;
	struct accel_tg *tg;
	struct list hostq;
	uint64_t epoch = 0, slot, *tab, va, v;
	uint32_t i, k;
	bool trace;
	int ret;

	if (!ge || ge->zombie)
		return -EINVAL;
	tg = ge->tg;
	g = ge->g;
	list_init(&hostq);
	ret = tg_enter(tg, TG_E_ABORT | TG_E_FAULT, "accel_graph_launch");
	if (ret)
		return ret;
	if (tg->capture) {
		acc_err("accel_graph_launch: the task graph is capturing");
		return -EBUSY;
	}
	act = calloc(g->nbufs, sizeof(*act));
	tb = calloc(g->nbufs, sizeof(*tb));
	sumbufs = calloc(ge->nsums ? ge->nsums : 1, sizeof(*sumbufs));
	if (tg->open_maps)
		bp = malloc(tg->nlines * sizeof(*bp));
	if (!act || !tb || !sumbufs || (tg->open_maps && !bp)) {
		ret = -ENOMEM;
		goto out;
	}
	ret = check_bindings(ge, bindings, n, act);
	if (ret)
		goto out;
	/* a queue that faulted, seen or not: nothing of the launch is issued */
	ret = tg_check_faults(tg);
	if (ret)
		goto out;
	if (ge->replay) {	/* a graph with collectives */
		ret = tg_coll_launch(ge, act, bindings, n);
		goto out;
	}
	if (atomic_load_explicit(&tg->orphans, memory_order_relaxed) ||
	    !list_empty(&tg->pending_drop))
		tg_bufs_collect(tg);
	for (i = 0; i < g->nbufs; i++) {
		tb[i] = tg_buf_get(tg, act[i], &ret);
		if (!tb[i])
			goto unstage;
	}
	/* this launch's binding tables: the launch that used them last must be done */
	slot = ge->launches % TG_TABLES;
	for (i = 0; i < ge->nlines; i++) {
		v = ge->table_last[slot * ge->nlines + i];
		if (v) {
			ret = tg_wait_id(tg, tg_id(ge->lines[i].line, v),
					 acc_deadline(tg->timeout_ns), "a binding table");
			if (ret)
				goto unstage;
		}
	}
	/* one epoch for every queue of the launch, above all they handed out */
	for (i = 0; i < ge->nlines; i++) {
		struct tg_line *l = &tg->lines[ge->lines[i].line];

		if (!i || l->next > epoch)
			epoch = l->next;
	}
	for (i = 0; i < ge->nlines; i++) {
		if (epoch + ge->lines[i].npoints - 1 > TG_VALUE_MAX) {
			acc_err("accel_graph_launch: timeline values exhausted (2^%u per line)",
				TG_VALUE_BITS);
			ret = -EOVERFLOW;
			goto unstage;
		}
	}
	trace = tg->p.flags & ACCEL_TG_TRACE;
	/* pass 1: everything that can fail or wait */
	for (i = 0; i < ge->nlines; i++) {
		ret = prepare_line(ge, i, epoch, act, trace);
		if (ret)
			goto unstage;
		if (tg->lines[ge->lines[i].line].kind == TG_LINE_HOST) {
			ret = host_records(ge, &ge->lines[i], epoch, bindings, n, &hostq);
			if (ret)
				goto unstage;
		}
	}
	for (k = 0; k < tg->ndevs; k++) {
		if (!ge->tables[k])
			continue;
		/* the slot's last launch is done: writing it now is harmless if we fail */
		tab = (uint64_t *)accel_buffer_host(ge->tables[k]) +
		      slot * DRM_VACCEL_EXEC_MAX_BINDINGS;
		for (i = 0; i < g->nbufs; i++) {
			if (ge->bind[i] < 0)
				continue;
			ret = tg_buf_va(tg, tb[i], k, &va);
			if (ret)
				goto unstage;
			tab[ge->bind[i]] = va;
		}
		if (ge->trace_bind >= 0 && ge->tstamps[k])
			tab[ge->trace_bind] = ge->tstamps[k]->va + slot * g->ntasks * 16;
	}
	for (k = 0; k < ge->nsums; k++)
		sumbufs[k] = act[ge->sums[k].buf];
	ret = tm_reserve(tg->tm, (const struct accel_buffer *const *)sumbufs, ge->nsums);
	if (ret)
		goto unstage;
	/* pass 2: commit; nothing below fails */
	tg_buf_commit_staged(tg);
	for (i = 0; i < ge->nlines; i++) {
		struct tg_exec_line *el = &ge->lines[i];
		struct tg_line *l = &tg->lines[el->line];
		uint64_t end = epoch + el->npoints - 1;

		if (l->kind == TG_LINE_QUEUE)
			commit_line(ge, i, epoch, slot, trace);
		for (k = 0; k < TM_DEP_KINDS; k++)
			tg->st.deps[k] += el->found[k];
		tg->st.deps_same_queue += el->same_line;
		l->next = end + 1;
		el->last_value = end;
		ge->table_last[slot * ge->nlines + i] = end;
	}
	if (!list_empty(&hostq))
		tg_host_queue(tg, &hostq);
	tm_group_begin(tg->tm);
	for (k = 0; k < ge->nsums; k++) {
		struct tg_summary *s = &ge->sums[k];
		uint64_t end = ge->lines[s->exec_line].last_value;

		tm_insert_layout(tg->tm, act[s->buf], &s->lay, (enum accel_access)s->access,
				 tg_id(s->line, end));
		tg_buf_used(tb[s->buf], s->line, end);
	}
	tm_group_end(tg->tm);
	if (tg->open_maps)
		launch_mark_blocked(ge, epoch, bp);
	ge->launches++;
	tg->st.launches++;
	/* publish every queue; a dead one stops the task graph */
	for (i = 0; i < ge->nlines; i++) {
		struct tg_line *l = &tg->lines[ge->lines[i].line];
		int r;

		if (l->kind != TG_LINE_QUEUE)
			continue;
		r = accel_queue_submit(l->q);
		if (r < 0 && !ret) {
			acc_err("accel_graph_launch: the launch is queued on every queue of the graph, but queue %u of %s is dead: %s",
				l->qi, tg->devs[l->devi]->path, strerror(-r));
			ret = r;
			if (!tg->fault) {
				tg->fault = r;
				tg->fault_line = ge->lines[i].line;
			}
		}
	}
	if (!ret && !tg->worker_running && !list_empty(&tg->host_pending))
		tg_run_host_tasks(tg, false);
	goto out;
unstage:
	while (!list_empty(&hostq)) {
		struct tg_host *h = container_of(hostq.next, struct tg_host, node);

		list_del(&h->node);
		tg_bindings_put(tg, h->bind);
		tg_host_free(h);
	}
	tg_buf_unstage(tg);
out:
	free(act);
	free(tb);
	free(sumbufs);
	free(bp);
	return ret;
}
