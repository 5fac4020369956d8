// SPDX-License-Identifier: MIT
/*
 * The output heaps (one per device, created on first use): OUTPUT_NEW
 * tensors get their memory from a ring of bytes (heap.c) that is
 * reclaimed by exact reference counts: a block comes back once the program
 * has released it (accel_tg_release()) and every task that retained it has
 * completed (seed 000).
 *
 * Identity: a heap tensor carries its block's generation (accel_tensor.gen,
 * the block id + 1: block ids only grow). A view whose generation does not
 * name the live block at its offset is stale (-ESTALE): its block was
 * reclaimed, and maybe given to another tensor that is still held, so a
 * stale release or use frees or touches nothing.
 *
 * Holds: each task that reads or writes a heap block retains it; the hold
 * is queued on the task's line in value order and completed when the
 * line's signal passes the task (tg_retire_holds()). A host map of a heap
 * tensor is such a user too: its hold sits on the map's line, which
 * accel_tg_unmap() completes, so a tensor released while a map of it is
 * open keeps its block until the unmap.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tg_internal.h"

#define TG_HEAP_ALIGN		256u

int tg_heap_get(struct accel_tg *tg, uint32_t devi, struct tg_heap **out)
{
	struct tg_heap *hp = &tg->heaps[devi];
	int ret;

	if (!hp->h) {
		ret = accel_buffer_create(tg->devs[devi], tg->p.heap_size, 0, &hp->buf);
		if (ret)
			return ret;
		ret = gheap_create(tg->p.heap_size, &hp->h);
		if (ret) {
			accel_buffer_destroy(hp->buf);
			hp->buf = NULL;
			return ret;
		}
	}
	*out = hp;
	return 0;
}

int tg_heap_of(const struct accel_tg *tg, const struct accel_buffer *buf)
{
	unsigned int d;

	for (d = 0; d < tg->ndevs; d++)
		if (tg->heaps[d].buf && buf == tg->heaps[d].buf)
			return (int)d;
	return -1;
}

/*
 * The live block of a heap view: 0 and *block, or -ESTALE / -EINVAL (the
 * log says why). @held: 1 if the program holds it.
 */
static int heap_view_block(struct accel_tg *tg, int devi, const struct accel_tensor *v,
			   const struct tm_layout *lay, const char *what, uint64_t *block,
			   int *held)
{
	struct gheap *h = tg->heaps[devi].h;
	uint64_t off, size;
	int ret;

	if (!v->gen) {
		acc_err("%s: a view of the output heap without a generation: derive it from the tensor accel_tg_submit() filled",
			what);
		return -EINVAL;
	}
	*block = v->gen - 1;
	ret = gheap_query(h, *block, &off, &size);
	if (ret < 0) {
		acc_err("%s: heap tensor at offset %llu (generation %llu) is stale: its block was reclaimed",
			what, (unsigned long long)v->offset, (unsigned long long)v->gen);
		return -ESTALE;
	}
	if (v->offset < off || (!lay->empty && (uint64_t)lay->hi > off + size)) {
		acc_err("%s: heap tensor at offset %llu (generation %llu) is not inside its block [%llu, %llu)%s",
			what, (unsigned long long)v->offset, (unsigned long long)v->gen,
			(unsigned long long)off, (unsigned long long)(off + size),
			v->offset >= off + size || (uint64_t)lay->hi <= off ?
			": a stale generation (the block was reclaimed and the memory reused)" : "");
		return v->offset >= off + size || (uint64_t)lay->hi <= off ? -ESTALE : -EINVAL;
	}
	*held = ret;
	return 0;
}

int tg_heap_check(struct accel_tg *tg, struct tg_arg *a, const char *name, uint32_t i)
{
	char what[64];
	int held, ret;

	snprintf(what, sizeof(what), "%s: argument %u", name ? name : "task", i);
	ret = heap_view_block(tg, a->heap, &a->v, &a->lay, what, &a->block, &held);
	if (ret)
		return ret;
	/* a task of a collective graph's launch: the graph's block, released or not */
	if (!held && tg->launch_ge && tg_graph_pins(tg->launch_ge->g, (uint32_t)a->heap, a->block))
		return 0;
	if (!held) {
		acc_err("%s: the heap tensor (generation %llu) was released",
			what, (unsigned long long)a->v.gen);
		return -ESTALE;
	}
	return 0;
}

/* The holds of @l whose values its signal passed back to the heap; true if none is left. */
static bool retire_line(struct accel_tg *tg, struct tg_line *l)
{
	uint64_t v;

	if (l->hhead == l->htail)
		return true;
	v = accel_signal_read(l->sig);
	while (l->hhead != l->htail && acc_ge(v, l->holds[l->hhead].value)) {
		struct tg_hold *h = &l->holds[l->hhead];

		gheap_complete(tg->heaps[h->devi].h, h->block);
		l->hhead = (l->hhead + 1) % l->hcap;
	}
	return l->hhead == l->htail;
}

/*
 * Heap blocks of completed tasks back to the heap (each line in order).
 * Map lines only while they hold something: this runs before every
 * OUTPUT_NEW placement.
 */
void tg_retire_holds(struct accel_tg *tg)
{
	uint32_t i, m;

	for (i = 0; i < tg->map_line; i++)
		retire_line(tg, &tg->lines[i]);
	for (m = tg->map_holding; m; m &= m - 1) {
		i = (uint32_t)__builtin_ctz(m);
		if (retire_line(tg, &tg->lines[tg->map_line + i]))
			tg->map_holding &= ~(1u << i);
	}
	for (i = 0; i < tg->ndevs; i++)
		if (tg->heaps[i].h)
			gheap_reclaim(tg->heaps[i].h);
}

void tg_holds_abandon(struct accel_tg *tg)
{
	uint32_t i;

	for (i = 0; i < tg->nlines; i++) {
		struct tg_line *l = &tg->lines[i];

		for (; l->hhead != l->htail; l->hhead = (l->hhead + 1) % l->hcap)
			gheap_complete(tg->heaps[l->holds[l->hhead].devi].h,
				       l->holds[l->hhead].block);
	}
	tg->map_holding = 0;
	for (i = 0; i < tg->ndevs; i++)
		if (tg->heaps[i].h)
			gheap_reclaim(tg->heaps[i].h);
}

int tg_holds_room(struct tg_line *l, size_t n)
{
	size_t used = l->hcap ? (l->htail + l->hcap - l->hhead) % l->hcap : 0, ncap, k = 0, i;
	struct tg_hold *nh;

	if (!n || (l->hcap && used + n < l->hcap))
		return 0;
	ncap = l->hcap ? l->hcap : 64;
	while (used + n >= ncap)
		ncap *= 2;
	nh = malloc(ncap * sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	for (i = l->hhead; l->hcap && i != l->htail; i = (i + 1) % l->hcap)
		nh[k++] = l->holds[i];
	free(l->holds);
	l->holds = nh;
	l->hcap = ncap;
	l->hhead = 0;
	l->htail = k;
	return 0;
}

void tg_hold_commit(struct accel_tg *tg, struct tg_line *l, uint64_t value,
		    const struct tg_arg *a)
{
	uint32_t line = (uint32_t)(l - tg->lines);
	struct gheap *h = tg->heaps[a->heap].h;

	if (line >= tg->map_line)
		tg->map_holding |= 1u << (line - tg->map_line);
	/* validated (held, live) or placed by this call: neither can fail */
	gheap_retain(h, a->block, tg_id(line, value));
	gheap_submit(h, a->block);
	l->holds[l->htail] = (struct tg_hold){ .value = value, .block = a->block,
					       .devi = (uint32_t)a->heap };
	l->htail = (l->htail + 1) % l->hcap;
}

void tg_holds_commit(struct accel_tg *tg, struct tg_line *l, const struct tg_task *tt,
		     uint64_t value)
{
	uint32_t i;

	for (i = 0; tt->nheap && i < tt->nargs; i++)
		if (tt->a[i].heap >= 0)
			tg_hold_commit(tg, l, value, &tt->a[i]);
}

/* the first in-flight hold on device @devi of line @l, or NULL */
static const struct tg_hold *line_hold_on(const struct tg_line *l, uint32_t devi)
{
	size_t k;

	for (k = l->hhead; k != l->htail; k = (k + 1) % l->hcap)
		if (l->holds[k].devi == devi)
			return &l->holds[k];
	return NULL;
}

/*
 * An in-flight heap hold on device @devi of a task: wait for it. Holds of
 * open maps come back only at their unmap, which only this thread could
 * do: -EDEADLK (logged) when nothing else holds any of the heap.
 */
static int heap_wait_progress(struct accel_tg *tg, const struct tg_task *tt, uint32_t arg,
			      uint32_t devi, int64_t deadline)
{
	const struct tg_hold *h;
	uint32_t i;

	for (i = 0; i < tg->map_line; i++) {
		h = line_hold_on(&tg->lines[i], devi);
		if (h)
			return tg_wait_id(tg, tg_id(i, h->value), deadline,
					  "heap space (a task holding a heap block)");
	}
	for (i = 0; i < ACCEL_TG_MAX_MAPS; i++) {
		const struct tg_map *m = &tg->maps[i];
		uint64_t off = 0, size = 0;

		if (!(tg->map_holding & (1u << i)))
			continue;
		h = line_hold_on(&tg->lines[tg->map_line + i], devi);
		if (!h)
			continue;
		gheap_query(tg->heaps[devi].h, h->block, &off, &size);
		acc_err("%s: argument %u: the output heap of %s is full up to the block at offset %llu (%llu bytes, generation %llu), which the open map %p keeps: unmap it first (only this thread could)",
			tg_name(&tt->tk), arg, tg->devs[devi]->path, (unsigned long long)off,
			(unsigned long long)size, (unsigned long long)h->block + 1, m->ptr);
		return -EDEADLK;
	}
	acc_err("%s: argument %u: the output heap of %s is full and no task in flight holds any of it",
		tg_name(&tt->tk), arg, tg->devs[devi]->path);
	return -EDEADLK;
}

static uint64_t t_bytes(const struct accel_tensor *t)
{
	uint64_t n = accel_dtype_size(t->dtype);
	uint32_t i;

	for (i = 0; i < t->ndims; i++)
		n *= t->shape[i];
	return n;
}

static const char *hold_reason(enum gheap_hold r)
{
	switch (r) {
	case GHEAP_HELD_BY_PROGRAM:
		return "held by the program (not released)";
	case GHEAP_HELD_BY_GRAPH:
		return "used by a captured graph (destroy the graph to free it)";
	default:
		return "retained by a task not submitted";
	}
}

static int place_one(struct accel_tg *tg, struct tg_task *tt, uint32_t i, uint32_t devi,
		     bool *stalled, int64_t *deadline)
{
	struct tg_arg *a = &tt->a[i];
	struct gheap_report rep;
	struct tg_heap *hp;
	uint64_t block, off, size;
	int ret;

	ret = tg_heap_get(tg, devi, &hp);
	if (ret)
		return ret;
	size = t_bytes(&a->v);
	if (!size)
		size = 1;
	for (;;) {
		tg_retire_holds(tg);
		ret = gheap_alloc(hp->h, size, TG_HEAP_ALIGN, i, &block, &off, &rep);
		if (ret != -EAGAIN)
			break;
		if (!*stalled) {
			*stalled = true;
			tg->st.stall_heap++;
			*deadline = acc_deadline(tg->timeout_ns);
		}
		ret = heap_wait_progress(tg, tt, i, devi, *deadline);
		if (ret)
			return ret;
	}
	if (ret == -EDEADLK) {
		acc_err("%s: argument %u: %llu bytes of output heap (%s) can never come back: the block at offset %llu (%llu bytes, generation %llu) is %s",
			tg_name(&tt->tk), i, (unsigned long long)size, tg->devs[devi]->path,
			(unsigned long long)rep.offset, (unsigned long long)rep.size,
			(unsigned long long)rep.block + 1, hold_reason(rep.reason));
		return ret;
	}
	if (ret == -E2BIG)
		acc_err("%s: argument %u: %llu bytes exceed the output heap (%llu)", tg_name(&tt->tk),
			i, (unsigned long long)size, (unsigned long long)tg->p.heap_size);
	if (ret)
		return ret;
	accel_tensor_init(&a->v, hp->buf, off, a->v.dtype, a->v.ndims, a->v.shape);
	a->v.gen = block + 1;
	a->block = block;
	a->heap = (int32_t)devi;
	a->placed = true;
	tt->nheap++;
	tm_layout_make(&a->v, &a->lay);
	return 0;
}

int tg_outputs_place(struct accel_tg *tg, struct tg_task *tt, uint32_t devi)
{
	int64_t deadline = 0;
	bool stalled = false;
	uint32_t i;
	int ret;

	for (i = 0; tt->nnew && i < tt->nargs; i++) {
		if (tt->a[i].access != ACCEL_OUTPUT_NEW)
			continue;
		ret = place_one(tg, tt, i, devi, &stalled, &deadline);
		if (ret) {
			tg_outputs_undo(tg, tt);
			return ret;
		}
	}
	return 0;
}

void tg_outputs_undo(struct accel_tg *tg, struct tg_task *tt)
{
	uint32_t i;

	for (i = 0; tt->nnew && i < tt->nargs; i++) {
		struct tg_arg *a = &tt->a[i];

		if (!a->placed)
			continue;
		gheap_release(tg->heaps[a->heap].h, a->block);
		gheap_reclaim(tg->heaps[a->heap].h);
		a->placed = false;
		a->heap = -1;
		tt->nheap--;
	}
}

void tg_outputs_commit(struct tg_task *tt)
{
	uint32_t i;

	for (i = 0; tt->nnew && i < tt->nargs; i++)
		if (tt->a[i].placed)
			*tt->a[i].t = tt->a[i].v;
}

void tg_heaps_fini(struct accel_tg *tg)
{
	unsigned int d;

	for (d = 0; d < ACCEL_TG_MAX_DEVICES; d++) {
		gheap_destroy(tg->heaps[d].h);
		accel_buffer_destroy(tg->heaps[d].buf);
		tg->heaps[d].h = NULL;
		tg->heaps[d].buf = NULL;
	}
}

ACCEL_API int accel_tg_release(struct accel_tg *tg, const struct accel_tensor *t)
{
	struct tm_layout lay;
	uint64_t block;
	int ret, d, held;

	ret = tg_enter(tg, 0, "accel_tg_release");
	if (ret)
		return ret;
	if (!t)
		return -EINVAL;
	d = tg_heap_of(tg, t->buf);
	if (d < 0 || tm_layout_make(t, &lay)) {
		acc_err("accel_tg_release: not a tensor of the task graph's output heap");
		return -ENOENT;
	}
	ret = heap_view_block(tg, d, t, &lay, "accel_tg_release", &block, &held);
	if (ret)
		return ret;
	if (!held) {
		acc_err("accel_tg_release: heap tensor at offset %llu (generation %llu) was already released",
			(unsigned long long)t->offset, (unsigned long long)t->gen);
		return -EINVAL;
	}
	gheap_release(tg->heaps[d].h, block);
	gheap_reclaim(tg->heaps[d].h);
	return 0;
}
