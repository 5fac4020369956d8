// SPDX-License-Identifier: MIT
/*
 * Graph capture: between accel_tg_capture_begin() and
 * accel_tg_capture_end(), accel_tg_submit() records tasks by value with
 * their dependencies on each other (a TensorMap of the capture alone).
 * OUTPUT_NEW tensors get their heap blocks at capture, pinned by the graph
 * until it is destroyed; every buffer the graph names gets a pin.
 *
 * A capture that fails changes nothing: the task's dependencies are found
 * (read-only), room is made for everything it adds, and only then is it
 * appended, its views registered and its buffers and blocks pinned.
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
	for (i = 0; i < g->nbufs; i++) {
		struct tg_gbuf *gb = g->bufs[i];
		unsigned int d;

		for (d = 0; d < ACCEL_TG_MAX_DEVICES; d++)
			if (gb->import[d])
				acc_buffer_unpin(gb->import[d], &gb->import_pin[d]);
		acc_buffer_unpin(gb->buf, &gb->pin);
		free(gb);
	}
	tg_coll_graph_free(g);	/* its collectives (coll_task.c) */
	for (i = 0; i < g->ntasks; i++) {
		free(g->tasks[i].deps);
		free(g->tasks[i].xt);
		free(g->tasks[i].xacc);
	}
	tm_destroy(g->tm);
	free(g->tasks);
	free(g->bufs);
	free(g->pins);
	free(g->scratch);
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
	int ret = tg_enter(tg, TG_E_ABORT | TG_E_FAULT, "accel_tg_capture_begin");

	if (ret)
		return ret;
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
	int ret = tg_enter(tg, 0, "accel_tg_capture_end");

	if (ret)
		return ret;
	if (!out)
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
	if (!g || g->destroyed || tg_in_host_task(g->tg))
		return;
	g->destroyed = true;
	list_del(&g->node);
	tg_graph_put(g);
}

ACCEL_API unsigned int accel_graph_num_tasks(const struct accel_graph *g)
{
	return g ? g->ntasks : 0;
}

uint32_t tg_graph_buf_index(const struct accel_graph *g, const struct accel_buffer *buf)
{
	uint32_t i;

	for (i = 0; i < g->nbufs && g->bufs[i]->buf != buf; i++)
		;
	return i;
}

/* the dependencies found for the task being captured (deduplicated) */
static void cap_dep(void *arg, uint64_t task, enum tm_dep_kind kind)
{
	struct accel_graph *g = arg;
	uint32_t idx = (uint32_t)TG_ID_VALUE(task) - 1, i;
	struct tg_gdep *nd;

	if (g->scratch_err)
		return;
	for (i = 0; i < g->nscratch; i++)
		if (g->scratch[i].task == idx && g->scratch[i].kind == (uint32_t)kind)
			return;
	nd = tg_grow(g->scratch, &g->scratchcap, g->nscratch + 1, sizeof(*nd), 16);
	if (!nd) {
		g->scratch_err = -ENOMEM;
		return;
	}
	g->scratch = nd;
	nd[g->nscratch].task = idx;
	nd[g->nscratch].kind = kind;
	g->nscratch++;
}

bool tg_graph_pins(const struct accel_graph *g, uint32_t devi, uint64_t block)
{
	uint32_t i;

	for (i = 0; i < g->npins; i++)
		if (g->pins[i].devi == devi && g->pins[i].block == block)
			return true;
	return false;
}

int tg_capture_task(struct accel_tg *tg, struct tg_task *tt)
{
	const struct accel_buffer *bufs_in[ACCEL_TASK_MAX_ARGS], **bufs = bufs_in;
	struct tg_gbuf *nb_in[ACCEL_TASK_MAX_ARGS] = { NULL }, **nb = nb_in;
	struct accel_graph *g = tg->capture;
	struct accel_tensor *xt = NULL, *tv;
	struct tg_gdep *deps = NULL;
	uint32_t i, k, nnew = 0, npin = 0, *xacc = NULL, *acc;
	struct tg_gtask *t;
	uint64_t id;
	void *p;
	int ret;

	/* place the outputs (the graph pins them) */
	ret = tg_outputs_place(tg, tt, tg->lines[tt->line].devi);
	if (ret)
		return ret;
	if (tt->nargs > ACCEL_TASK_MAX_ARGS) {	/* a send/receive task of more operations */
		ret = -ENOMEM;
		bufs = malloc(tt->nargs * sizeof(*bufs));
		nb = calloc(tt->nargs, sizeof(*nb));
		xt = malloc(tt->nargs * sizeof(*xt));
		xacc = malloc(tt->nargs * sizeof(*xacc));
		if (!bufs || !nb || !xt || !xacc)
			goto fail;
	}
	id = tg_id(tt->line, (uint64_t)g->ntasks + 1);
	/* find (read-only) */
	g->nscratch = 0;
	g->scratch_err = 0;
	for (i = 0; i < tt->nargs; i++) {
		struct tg_arg *a = &tt->a[i];

		ret = tm_deps_layout(g->tm, a->v.buf, &a->lay, (enum accel_access)a->access, id,
				     cap_dep, g);
		if (ret < 0)
			goto fail;
	}
	ret = g->scratch_err;
	if (ret)
		goto fail;
	/* prepare: room for everything the commit adds */
	ret = -ENOMEM;
	if (g->nscratch) {
		deps = malloc(g->nscratch * sizeof(*deps));
		if (!deps)
			goto fail;
		memcpy(deps, g->scratch, g->nscratch * sizeof(*deps));
	}
	p = tg_grow(g->tasks, &g->tcap, g->ntasks + 1, sizeof(*g->tasks), 64);
	if (!p)
		goto fail;
	g->tasks = p;
	for (i = 0; i < tt->nargs; i++) {
		struct accel_buffer *buf = tt->a[i].v.buf;

		bufs[i] = buf;
		if (tg_graph_buf_index(g, buf) < g->nbufs)
			continue;
		for (k = 0; k < nnew && nb[k]->buf != buf; k++)
			;
		if (k < nnew)
			continue;
		nb[nnew] = calloc(1, sizeof(*nb[nnew]));
		if (!nb[nnew])
			goto fail;
		nb[nnew++]->buf = buf;
	}
	if (nnew) {
		p = tg_grow(g->bufs, &g->bufcap, g->nbufs + nnew, sizeof(*g->bufs), 8);
		if (!p)
			goto fail;
		g->bufs = p;
	}
	for (i = 0; i < tt->nargs; i++)
		npin += tt->a[i].heap >= 0;
	if (npin) {
		p = tg_grow(g->pins, &g->pincap, g->npins + npin, sizeof(*g->pins), 8);
		if (!p)
			goto fail;
		g->pins = p;
	}
	ret = tm_reserve(g->tm, bufs, tt->nargs);
	if (ret)
		goto fail;
	/* commit */
	t = &g->tasks[g->ntasks];
	memset(t, 0, sizeof(*t));
	t->op = tt->tk.op;
	t->line = tt->line;
	t->nargs = tt->nargs;
	t->u0 = tt->u0;
	if (t->op == ACCEL_TASK_HOST || t->op == TG_TASK_COLL) {	/* COLL: arg is the comm */
		t->fn = tt->tk.host.fn;
		t->arg = tt->tk.host.arg;
	}
	snprintf(t->name, sizeof(t->name), "%s", tt->tk.name ? tt->tk.name : op_name(t->op));
	t->deps = deps;
	t->ndeps = g->nscratch;
	t->xt = xt;
	t->xacc = xacc;
	tv = xt ? xt : t->t;
	acc = xacc ? xacc : t->access;
	for (k = 0; k < nnew; k++) {
		acc_buffer_pin(nb[k]->buf, &nb[k]->pin);
		g->bufs[g->nbufs++] = nb[k];
	}
	tm_group_begin(g->tm);
	for (i = 0; i < tt->nargs; i++) {
		struct tg_arg *a = &tt->a[i];
		struct tg_gbuf *gb = g->bufs[tg_graph_buf_index(g, a->v.buf)];

		tv[i] = a->v;
		acc[i] = a->access;
		if (!a->lay.empty && (uint64_t)a->lay.hi > gb->hi)
			gb->hi = (uint64_t)a->lay.hi;
		tm_insert_layout(g->tm, a->v.buf, &a->lay, (enum accel_access)a->access, id);
		if (a->heap >= 0 && !tg_graph_pins(g, (uint32_t)a->heap, a->block)) {
			gheap_pin(tg->heaps[a->heap].h, a->block);
			g->pins[g->npins].devi = (uint32_t)a->heap;
			g->pins[g->npins++].block = a->block;
		}
	}
	tm_group_end(g->tm);
	g->ntasks++;
	tg_commit_line(tg, tt);
	tg_outputs_commit(tt);
	tg->st.captured++;
	ret = 0;
	goto out;
fail:
	free(deps);
	free(xt);
	free(xacc);
	for (k = 0; k < nnew; k++)
		free(nb[k]);
	tg_outputs_undo(tg, tt);
	acc_err("%s: capture: %s", tg_name(&tt->tk), strerror(-ret));
out:
	if (bufs != bufs_in)
		free(bufs);
	if (nb != nb_in)
		free(nb);
	return ret;
}

const char *tg_op_name(uint32_t op)
{
	return op_name(op);
}
