// SPDX-License-Identifier: MIT
/*
 * Graph mode: capture, instantiation, launch, DOT.
 *
 * Capture records tasks by value with their dependencies on each other
 * (a TensorMap of the capture alone). Instantiation lowers each queue's
 * tasks, in capture order, to one packet list in a sealed persistent
 * buffer: before a task, a WAIT for each other queue it depends on (the
 * latest producer only, and only if the body has not waited that far
 * already); after a task that another queue waits for (and after the last
 * one), a SIGNAL of the queue's timeline. Waits and signals are
 * epoch-relative (DRM_VACCEL_WAIT_F_EPOCH, DRM_VACCEL_SIGNAL_F_EPOCH): a
 * launch picks one epoch E for all its queues, above every value handed out
 * on them so far, and point j of a queue's body is timeline value E + j.
 * So values only grow, nothing is ever reset, and eager work before and
 * after a launch orders against it like against any task (seeds 001, 004).
 *
 * A launch is, per queue, the WAITs on earlier work that overlaps what the
 * queue's part of the graph touches (one summary per buffer: the byte hull
 * of its accesses, conservative) and one EXEC: one ring slot however many
 * tasks. Later work depends on the launch through the same summaries.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tg_internal.h"

static const char *op_name(uint32_t op)
{
	static const char *const names[] = { "copy", "fill", "reduce", "matmul", "delay", "host" };

	return op < 6 ? names[op] : "?";
}

static void graph_free(struct accel_graph *g)
{
	struct accel_tg *tg = g->tg;
	uint32_t i;

	for (i = 0; i < g->npins; i++)
		gheap_unpin(tg->heaps[g->pins[i].devi].h, g->pins[i].block);
	for (i = 0; i < g->nbufs; i++)
		accel_buffer_destroy(g->bufs[i].buf);
	for (i = 0; i < g->ntasks; i++)
		free(g->tasks[i].deps);
	tm_destroy(g->tm);
	free(g->tasks);
	free(g->bufs);
	free(g->pins);
	free(g);
}

void tg_graph_put(struct accel_graph *g)
{
	if (--g->refs == 0)
		graph_free(g);
}

ACCEL_API int accel_tg_capture_begin(struct accel_tg *tg)
{
	struct accel_graph *g;
	int ret;

	if (!tg)
		return -EINVAL;
	if (tg->capture)
		return -EBUSY;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	ret = tm_create(NULL, NULL, &g->tm);
	if (ret) {
		free(g);
		return ret;
	}
	g->tg = tg;
	g->refs = 1;
	list_init(&g->node);
	tg->capture = g;
	return 0;
}

ACCEL_API int accel_tg_capture_end(struct accel_tg *tg, struct accel_graph **out)
{
	if (!tg || !out)
		return -EINVAL;
	*out = NULL;
	if (!tg->capture)
		return -EINVAL;
	*out = tg->capture;
	list_add_tail(&tg->graphs, &tg->capture->node);
	tg->capture = NULL;
	return 0;
}

ACCEL_API void accel_graph_destroy(struct accel_graph *g)
{
	if (!g || g->destroyed)
		return;
	g->destroyed = true;
	list_del(&g->node);
	tg_graph_put(g);
}

ACCEL_API unsigned int accel_graph_num_tasks(const struct accel_graph *g)
{
	return g ? g->ntasks : 0;
}

/* index of @buf in g->bufs, g->nbufs if the graph does not use it */
static uint32_t graph_buf_index(const struct accel_graph *g, const struct accel_buffer *buf)
{
	uint32_t i;

	for (i = 0; i < g->nbufs && g->bufs[i].buf != buf; i++)
		;
	return i;
}

static int graph_buf(struct accel_graph *g, struct accel_buffer *buf, uint64_t hi)
{
	uint32_t i = graph_buf_index(g, buf);
	void *p;

	if (i == g->nbufs) {
		p = tg_grow(g->bufs, &g->bufcap, g->nbufs + 1, sizeof(*g->bufs), 8);
		if (!p)
			return -ENOMEM;
		g->bufs = p;
		tg_buffer_get(buf);
		g->bufs[i].buf = buf;
		g->bufs[i].hi = 0;
		g->nbufs++;
	}
	if (hi > g->bufs[i].hi)
		g->bufs[i].hi = hi;
	return 0;
}

static int graph_pin(struct accel_graph *g, uint32_t devi, uint64_t block)
{
	uint32_t i;
	void *np;
	int ret;

	for (i = 0; i < g->npins; i++)
		if (g->pins[i].devi == devi && g->pins[i].block == block)
			return 0;
	np = tg_grow(g->pins, &g->pincap, g->npins + 1, sizeof(*g->pins), 8);
	if (!np)
		return -ENOMEM;
	g->pins = np;
	ret = gheap_pin(g->tg->heaps[devi].h, block);
	if (ret)
		return ret;
	g->pins[g->npins].devi = devi;
	g->pins[g->npins].block = block;
	g->npins++;
	return 0;
}

struct cap_ctx {
	struct tg_gtask *t;
	int err;
};

static void cap_dep(void *arg, uint64_t task, enum tm_dep_kind kind)
{
	struct cap_ctx *c = arg;
	uint32_t idx = (uint32_t)TG_ID_REL(task) - 1, i;
	struct tg_gdep *nd;

	for (i = 0; i < c->t->ndeps; i++)
		if (c->t->deps[i].task == idx && c->t->deps[i].kind == (uint32_t)kind)
			return;
	nd = tg_grow(c->t->deps, &c->t->depcap, c->t->ndeps + 1, sizeof(*nd), 4);
	if (!nd) {
		c->err = -ENOMEM;
		return;
	}
	c->t->deps = nd;
	nd[c->t->ndeps].task = idx;
	nd[c->t->ndeps].kind = kind;
	c->t->ndeps++;
}

int tg_capture_task(struct accel_tg *tg, struct accel_task *task, uint32_t line)
{
	struct accel_graph *g = tg->capture;
	struct cap_ctx c = { 0 };
	struct tg_gtask *t, *nt;
	struct tm_layout lay;
	uint64_t id, block;
	uint32_t i, devi;
	int ret;

	nt = tg_grow(g->tasks, &g->tcap, g->ntasks + 1, sizeof(*g->tasks), 64);
	if (!nt)
		return -ENOMEM;
	g->tasks = nt;
	ret = tg_alloc_outputs(tg, task, tg->lines[line].devi);
	if (ret)
		return ret;
	t = &g->tasks[g->ntasks];
	memset(t, 0, sizeof(*t));
	t->op = task->op;
	t->line = line;
	t->nargs = task->nargs;
	switch (task->op) {
	case ACCEL_TASK_FILL:
		t->u0 = task->fill.pattern;
		break;
	case ACCEL_TASK_REDUCE:
		t->u0 = task->reduce.op;
		break;
	case ACCEL_TASK_MATMUL:
		t->u0 = task->matmul.accumulate;
		break;
	case ACCEL_TASK_DELAY:
		t->u0 = task->delay.ns;
		break;
	case ACCEL_TASK_HOST:
		t->fn = task->host.fn;
		t->arg = task->host.arg;
		break;
	default:
		break;
	}
	snprintf(t->name, sizeof(t->name), "%s", task->name ? task->name : op_name(task->op));
	id = TG_ID(line, g->ntasks + 1);
	c.t = t;
	for (i = 0; i < task->nargs; i++) {
		t->t[i] = *task->args[i].t;
		t->access[i] = task->args[i].access;
		ret = tm_deps(g->tm, &t->t[i], (enum accel_access)t->access[i], id, cap_dep, &c);
		if (ret < 0 || c.err)
			goto fail;
	}
	for (i = 0; i < task->nargs; i++) {
		ret = tm_layout_make(&t->t[i], &lay);
		if (!ret)
			ret = graph_buf(g, t->t[i].buf, lay.empty ? 0 : (uint64_t)lay.hi);
		if (!ret && !tg_heap_block(tg, &t->t[i], &devi, &block))
			ret = graph_pin(g, devi, block);
		if (!ret)
			ret = tm_insert(g->tm, &t->t[i], (enum accel_access)t->access[i], id);
		if (ret)
			goto fail;
	}
	g->ntasks++;
	tg->st.captured++;
	return 0;
fail:
	free(t->deps);
	if (!ret)
		ret = c.err;
	acc_err("%s: capture: %s", t->name, strerror(-ret));
	return ret;
}

/* --- instantiation --- */

struct body {
	struct drm_vaccel_packet *pk;
	uint32_t n, cap;
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
	return 0;
}

static int graph_addr(struct tg_lower *lw, struct accel_buffer *buf, uint64_t off, uint64_t *va)
{
	struct body *b = lw->priv;
	uint32_t i = graph_buf_index(b->g, buf);

	if (i < b->g->nbufs && b->bind[i] >= 0) {
		*va = DRM_VACCEL_BINDING_ADDR(b->bind[i], off);
		return 0;
	}
	if (tg_buf_va(lw->tg, buf, lw->devi, va))
		return -ENOENT;
	*va += off;
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

static void exec_free(struct accel_graph_exec *ge)
{
	uint32_t i;

	for (i = 0; i < ge->nlines; i++)
		accel_buffer_destroy(ge->lines[i].body);
	for (i = 0; i < ACCEL_TG_MAX_DEVICES; i++) {
		accel_buffer_destroy(ge->tables[i]);
		accel_buffer_destroy(ge->tstamps[i]);
	}
	free(ge->lines);
	free(ge->sums);
	free(ge->table_last);
	free(ge);
}

static int add_summary(struct accel_graph_exec *ge, uint32_t line, uint32_t buf, uint64_t lo,
		       uint64_t hi, uint32_t access)
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
	*s = (struct tg_summary){ .line = line, .buf = buf, .lo = lo, .hi = hi };
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

static int task_summaries(struct accel_graph_exec *ge, const struct tg_gtask *t)
{
	struct accel_graph *g = ge->g;
	uint32_t k, bi;
	int ret;

	for (k = 0; k < t->nargs; k++) {
		struct tm_layout lay;

		if (tm_layout_make(&t->t[k], &lay) || lay.empty)
			continue;
		bi = graph_buf_index(g, t->t[k].buf);
		ret = add_summary(ge, t->line, bi, (uint64_t)lay.lo, (uint64_t)lay.hi,
				  t->access[k]);
		if (ret)
			return ret;
	}
	return 0;
}

/* the host line of a graph: no packets, the launch queues its host tasks */
static int host_summaries(struct accel_graph_exec *ge, struct tg_exec_line *el)
{
	uint32_t i;
	int ret;

	for (i = 0; i < ge->g->ntasks; i++) {
		if (ge->g->tasks[i].line != el->line)
			continue;
		ret = task_summaries(ge, &ge->g->tasks[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int build_line(struct accel_graph_exec *ge, struct tg_exec_line *el, struct body *b,
		      const bool *signalled, uint32_t *waited, uint32_t *need, uint32_t *touched)
{
	struct accel_tg *tg = ge->tg;
	struct accel_graph *g = ge->g;
	struct tg_line *l = &tg->lines[el->line];
	struct tg_lower lw = { .tg = tg, .devi = l->devi, .addr = graph_addr, .desc = graph_desc,
			       .priv = b };
	struct accel_tensor *tv[ACCEL_TASK_MAX_ARGS];
	uint64_t sva, va, size;
	uint32_t i, k, last = 0, nneed;
	void *host;
	int n, ret;

	if (l->kind == TG_LINE_HOST)
		return host_summaries(ge, el);
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
		for (k = 0; k < t->nargs; k++)
			tv[k] = &t->t[k];
		ret = body_room(b, TG_MAX_TASK_PACKETS + 3);
		if (ret)
			return ret;
		if (ge->trace_bind >= 0)
			accel_prep_timestamp(&b->pk[b->n++],
					     DRM_VACCEL_BINDING_ADDR(ge->trace_bind, i * 16));
		n = tg_lower_task(&lw, t->op, tv, t->u0, &b->pk[b->n], TG_MAX_TASK_PACKETS, t->name);
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
		ret = task_summaries(ge, t);
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
	return 0;
}

ACCEL_API int accel_graph_instantiate(struct accel_graph *g, struct accel_graph_exec **out)
{
	struct accel_graph_exec *ge;
	struct accel_tg *tg;
	struct body b = { 0 };
	uint32_t *npoints = NULL, *waited = NULL, *need = NULL, *touched = NULL, i, k, nl = 0;
	bool *signalled = NULL;
	int ret = -ENOMEM;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!g || g->destroyed)
		return -EINVAL;
	tg = g->tg;
	if (!g->ntasks) {
		acc_err("accel_graph_instantiate: the graph has no tasks");
		return -EINVAL;
	}
	ge = calloc(1, sizeof(*ge));
	npoints = calloc(tg->nlines, sizeof(*npoints));
	waited = calloc(tg->nlines, sizeof(*waited));
	need = calloc(tg->nlines, sizeof(*need));
	touched = calloc(tg->nlines, sizeof(*touched));
	signalled = calloc(g->ntasks, sizeof(*signalled));
	b.bind = calloc(g->nbufs, sizeof(*b.bind));
	if (!ge || !npoints || !waited || !need || !touched || !signalled || !b.bind)
		goto out;
	ge->tg = tg;
	ge->g = g;
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
		if (tg_heap_of(tg, g->bufs[i].buf) < 0 && ge->nbound < DRM_VACCEL_EXEC_MAX_BINDINGS)
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
		memset(waited, 0, tg->nlines * sizeof(*waited));
		b.n = 0;
		b.nd = 0;
		ret = build_line(ge, el, &b, signalled, waited, need, touched);
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
	ge->bind = b.bind;
	b.bind = NULL;
	g->refs++;
	list_add_tail(&tg->execs, &ge->node);
	*out = ge;
	ge = NULL;
	ret = 0;
out:
	if (ret)
		acc_err("accel_graph_instantiate: %s", strerror(-ret));
	if (ge)
		exec_free(ge);
	free(b.pk);
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
	for (i = 0; i < ge->nlines; i++) {
		struct tg_exec_line *el = &ge->lines[i];

		if (!el->last_value)
			continue;
		ret = tg_wait_id(tg, TG_ID(el->line, el->last_value - tg->lines[el->line].base),
				 deadline, "a graph launch");
		if (ret)
			return ret;
	}
	return 0;
}

ACCEL_API void accel_graph_exec_destroy(struct accel_graph_exec *ge)
{
	int ret;

	if (!ge)
		return;
	ret = accel_graph_exec_wait(ge, ge->tg->timeout_ns);
	if (ret)
		acc_warn("accel_graph_exec_destroy: launches still running: %s", strerror(-ret));
	list_del(&ge->node);
	tg_trace_forget_exec(ge->tg, ge);
	tg_graph_put(ge->g);
	free(ge->bind);
	exec_free(ge);
}

static struct accel_buffer *actual(const struct accel_graph_exec *ge, uint32_t bi,
				   const struct accel_binding *bindings, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (bindings[i].from == ge->g->bufs[bi].buf)
			return bindings[i].to;
	return ge->g->bufs[bi].buf;
}

static int check_bindings(struct accel_graph_exec *ge, const struct accel_binding *bindings,
			  unsigned int n)
{
	struct accel_graph *g = ge->g;
	unsigned int i, j;
	uint32_t bi;

	if (n > DRM_VACCEL_EXEC_MAX_BINDINGS || (n && !bindings))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const struct accel_binding *bd = &bindings[i];

		if (!bd->from || !bd->to)
			return -EINVAL;
		bi = graph_buf_index(g, bd->from);
		if (bi == g->nbufs || ge->bind[bi] < 0) {
			acc_err("accel_graph_launch: binding %u: buffer 0x%llx is %s", i,
				(unsigned long long)bd->from->va,
				bi == g->nbufs ? "not used by the graph" :
				"not bound (an output heap, or past the binding table)");
			return -EINVAL;
		}
		if (bd->to->dev != bd->from->dev || bd->to->size < g->bufs[bi].hi) {
			acc_err("accel_graph_launch: binding %u: buffer 0x%llx must be of %s and at least %llu bytes",
				i, (unsigned long long)bd->to->va, bd->from->dev->path,
				(unsigned long long)g->bufs[bi].hi);
			return -EINVAL;
		}
		for (j = 0; j < i; j++)
			if (bindings[j].from == bd->from)
				return -EINVAL;
	}
	return 0;
}

/*
 * Queue the graph's host tasks at values epoch + point of the host line.
 * The first one also waits for what the summaries found (collected by the
 * caller since tg_deps_begin()): the host line runs in order, so the others
 * come after it.
 */
static int launch_host(struct accel_graph_exec *ge, struct tg_exec_line *el, uint64_t epoch)
{
	struct accel_tg *tg = ge->tg;
	struct accel_graph *g = ge->g;
	struct tg_host *h, *first = NULL;
	struct list q;
	uint32_t i, k, n;

	list_init(&q);
	for (i = 0; i < g->ntasks; i++) {
		struct tg_gtask *t = &g->tasks[i];

		if (t->line != el->line)
			continue;
		n = t->ndeps + (first ? 0 : tg->ntouched);
		h = calloc(1, sizeof(*h));
		if (h)
			h->deps = calloc(n ? n : 1, sizeof(*h->deps));
		if (!h || !h->deps) {
			free(h);
			goto nomem;
		}
		for (k = 0; k < t->ndeps; k++) {
			struct tg_gtask *d = &g->tasks[t->deps[k].task];

			if (d->line != el->line)
				h->deps[h->ndeps++] = TG_ID(d->line, epoch + d->point -
							    tg->lines[d->line].base);
		}
		if (!first) {
			for (k = 0; k < tg->ntouched; k++)
				if (tg->need[tg->touched[k]])
					h->deps[h->ndeps++] = TG_ID(tg->touched[k],
								    tg->need[tg->touched[k]]);
			first = h;
		}
		h->value = epoch + t->point;
		h->fn = t->fn;
		h->arg = t->arg;
		snprintf(h->name, sizeof(h->name), "%s", t->name);
		list_add_tail(&q, &h->node);
	}
	pthread_mutex_lock(&tg->host_lock);
	while (!list_empty(&q)) {
		h = container_of(q.next, struct tg_host, node);
		list_del(&h->node);
		list_add_tail(&tg->host_pending, &h->node);
	}
	pthread_cond_broadcast(&tg->host_cond);
	pthread_mutex_unlock(&tg->host_lock);
	return 0;
nomem:
	while (!list_empty(&q)) {
		h = container_of(q.next, struct tg_host, node);
		list_del(&h->node);
		free(h->deps);
		free(h);
	}
	return -ENOMEM;
}

/*
 * One line of a launch. @pass 0: find the WAITs it needs and wait for ring
 * room for them and the EXEC; @pass 1: write and publish them (or queue the
 * host tasks).
 */
static int launch_line(struct accel_graph_exec *ge, uint32_t i, int pass, uint64_t epoch,
		       uint64_t slot, const struct accel_binding *bindings, unsigned int n,
		       bool trace)
{
	struct accel_tg *tg = ge->tg;
	struct tg_exec_line *el = &ge->lines[i];
	struct tg_line *l = &tg->lines[el->line];
	uint64_t end = epoch + el->npoints - 1, tva;
	struct drm_vaccel_packet *p;
	struct accel_tensor view;
	uint32_t k;
	int ret, nw;

	struct accel_tg_stats saved = tg->st;

	tg_deps_begin(tg, el->line, TG_ID(el->line, end - l->base));
	for (k = 0; k < ge->nsums; k++) {
		struct tg_summary *s = &ge->sums[k];
		uint64_t shape = s->hi - s->lo;

		if (s->line != el->line)
			continue;
		accel_tensor_init(&view, actual(ge, s->buf, bindings, n), s->lo, ACCEL_DTYPE_U8, 1,
				  &shape);
		ret = tg_deps_arg(tg, tg->tm, &view, s->write ? (s->read ? ACCEL_INOUT :
						ACCEL_OUTPUT) : ACCEL_INPUT);
		if (ret)
			return ret;
	}
	if (pass == 0) {
		/* counted once, in pass 1 */
		memcpy(tg->st.deps, saved.deps, sizeof(saved.deps));
		tg->st.deps_same_queue = saved.deps_same_queue;
	}
	if (l->kind == TG_LINE_HOST) {
		if (pass == 0)
			return 0;
		ret = launch_host(ge, el, epoch);
		if (ret)
			return ret;
		goto done;
	}
	nw = tg_prepare_waits(tg, l);
	if (nw < 0)
		return nw;
	if (pass == 0)
		return tg_reserve(tg, l, (unsigned int)nw + 1 + (trace ? 2 : 0));
	tg_emit_waits(tg, l);
	if (trace) {
		tg_trace_stamp(l, end, 0, accel_queue_get_packet(l->q));
		tg_trace_note(l, end, TG_ID(el->line, end - l->base), "graph launch");
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
	ret = accel_queue_submit(l->q);
	if (ret < 0)
		return ret;
done:
	l->next = end + 1;
	el->last_value = end;
	ge->table_last[slot * ge->nlines + i] = end;
	return 0;
}

ACCEL_API int accel_graph_launch(struct accel_graph_exec *ge, const struct accel_binding *bindings,
				 unsigned int n)
{
	struct accel_tensor view;
	struct accel_graph *g;
	struct accel_tg *tg;
	uint64_t epoch = 0, slot, *tab, va;
	uint32_t i, k;
	bool trace, lost = false;
	int ret;

	if (!ge)
		return -EINVAL;
	tg = ge->tg;
	g = ge->g;
	ret = check_bindings(ge, bindings, n);
	if (ret)
		return ret;
	if (tg->capture) {
		acc_err("accel_graph_launch: the task graph is capturing");
		return -EBUSY;
	}
	for (i = 0; i < tg->nq; i++)
		if (accel_queue_status(tg->lines[i].q, NULL, 0))
			return -EIO;
	for (i = 0; i < g->nbufs; i++) {
		ret = tg_buf_index(tg, actual(ge, i, bindings, n));
		if (ret)
			return ret;
	}
	/* this launch's binding tables: the launch that used them last must be done */
	slot = ge->launches % TG_TABLES;
	for (i = 0; i < ge->nlines; i++) {
		uint64_t v = ge->table_last[slot * ge->nlines + i];
		uint32_t line = ge->lines[i].line;

		if (v) {
			ret = tg_wait_id(tg, TG_ID(line, v - tg->lines[line].base),
					 acc_deadline(tg->timeout_ns), "a binding table");
			if (ret)
				return ret;
		}
	}
	for (k = 0; k < tg->ndevs; k++) {
		if (!ge->tables[k])
			continue;
		tab = (uint64_t *)accel_buffer_host(ge->tables[k]) +
		      slot * DRM_VACCEL_EXEC_MAX_BINDINGS;
		for (i = 0; i < g->nbufs; i++) {
			if (ge->bind[i] < 0)
				continue;
			ret = tg_buf_va(tg, actual(ge, i, bindings, n), k, &va);
			if (ret)
				return ret;
			tab[ge->bind[i]] = va;
		}
		if (ge->trace_bind >= 0 && ge->tstamps[k])
			tab[ge->trace_bind] = ge->tstamps[k]->va + slot * g->ntasks * 16;
	}
	/* one epoch for every queue of the launch, above all they handed out */
	for (i = 0; i < ge->nlines; i++) {
		struct tg_line *l = &tg->lines[ge->lines[i].line];

		if (!i || (int64_t)(l->next - epoch) > 0)
			epoch = l->next;
	}
	trace = tg->p.flags & ACCEL_TG_TRACE;
	/*
	 * Pass 0 makes sure every queue has room (and every WAIT's signal an
	 * address) before anything is written: a launch goes in whole or not
	 * at all. Pass 1 queues the host tasks (they may only fail for
	 * memory), then writes each queue's WAITs and EXEC. Nothing else
	 * writes to the rings meanwhile, and producers only complete, so pass
	 * 1 needs at most the WAITs pass 0 counted.
	 */
	for (k = 0; k < 2; k++) {
		for (i = 0; i < ge->nlines; i++) {
			uint32_t j = k == 0 ? i : (i + ge->nlines - 1) % ge->nlines;

			ret = launch_line(ge, j, k, epoch, slot, bindings, n, trace);
			if (ret)
				return ret;
		}
	}
	/* later work depends on the launch, per queue, through the summaries */
	for (k = 0; k < ge->nsums; k++) {
		struct tg_summary *s = &ge->sums[k];
		struct tg_line *l = &tg->lines[s->line];
		uint64_t shape = s->hi - s->lo;

		for (i = 0; i < ge->nlines && ge->lines[i].line != s->line; i++)
			;
		accel_tensor_init(&view, actual(ge, s->buf, bindings, n), s->lo, ACCEL_DTYPE_U8, 1,
				  &shape);
		if (tm_insert(tg->tm, &view, s->write ? (s->read ? ACCEL_INOUT : ACCEL_OUTPUT) :
			      ACCEL_INPUT, TG_ID(s->line, ge->lines[i].last_value - l->base)))
			lost = true;
	}
	ge->launches++;
	tg->st.launches++;
	if (lost) {
		/* no memory for its TensorMap entries: a completed launch needs none */
		acc_warn("accel_graph_launch: no memory for its TensorMap entries: waiting for it");
		return accel_graph_exec_wait(ge, tg->timeout_ns);
	}
	return 0;
}

/* --- DOT --- */

ACCEL_API int accel_graph_dot(const struct accel_graph *g, FILE *f)
{
	static const char *const kinds[] = { "RAW", "WAR", "WAW" };
	static const char *const colors[] = { "black", "blue", "red" };
	uint32_t i, k, bi;

	if (!g || !f)
		return -EINVAL;
	fprintf(f, "digraph taskgraph {\n\trankdir=LR;\n\tnode [fontname=\"monospace\"];\n");
	for (i = 0; i < g->ntasks; i++) {
		const struct tg_gtask *t = &g->tasks[i];
		const struct tg_line *l = &g->tg->lines[t->line];

		if (l->kind == TG_LINE_HOST)
			fprintf(f, "\tt%u [shape=box, style=rounded, label=\"%s\\nhost #%u\"];\n", i,
				t->name, i);
		else
			fprintf(f, "\tt%u [shape=box, label=\"%s\\n%s #%u\\ndevice %u queue %u\"];\n",
				i, t->name, op_name(t->op), i, l->devi, l->qi);
	}
	for (i = 0; i < g->ntasks; i++) {
		const struct tg_gtask *t = &g->tasks[i];

		for (k = 0; k < t->nargs; k++) {
			struct tm_layout lay;

			if (tm_layout_make(&t->t[k], &lay) || lay.empty)
				continue;
			bi = graph_buf_index(g, t->t[k].buf);
			fprintf(f, "\tb%u_%lld_%lld [shape=ellipse, label=\"buffer %u\\n[%lld, %lld)%s\"];\n",
				bi, (long long)lay.lo, (long long)lay.hi, bi, (long long)lay.lo,
				(long long)lay.hi, lay.interleaved ? " interleaved" : "");
			if (t->access[k] != ACCEL_INPUT)
				fprintf(f, "\tt%u -> b%u_%lld_%lld [label=\"%s\"];\n", i, bi,
					(long long)lay.lo, (long long)lay.hi,
					t->access[k] == ACCEL_INOUT ? "inout" :
					t->access[k] == ACCEL_OUTPUT_NEW ? "new" : "out");
			if (t->access[k] == ACCEL_INPUT || t->access[k] == ACCEL_INOUT)
				fprintf(f, "\tb%u_%lld_%lld -> t%u;\n", bi, (long long)lay.lo,
					(long long)lay.hi, i);
		}
		for (k = 0; k < t->ndeps; k++)
			fprintf(f, "\tt%u -> t%u [style=dashed, color=%s, label=\"%s\"];\n",
				t->deps[k].task, i, colors[t->deps[k].kind], kinds[t->deps[k].kind]);
	}
	fprintf(f, "}\n");
	return fflush(f) || ferror(f) ? -EIO : 0;
}
