// SPDX-License-Identifier: MIT
/*
 * The dependencies of one submission (an eager task, a map, one line of a
 * launch): the TensorMap reports every earlier task an argument depends
 * on; per other line only the latest value matters (a line completes in
 * order), and dependencies on the submission's own queue line are free
 * (the queue runs in order). What is left becomes one WAIT per line on
 * that line's timeline signal, imported into the waiting device once.
 *
 * Collection is a read-only pass: the statistics it gathers are committed
 * by tg_deps_count() only when the submission commits.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <string.h>

#include "tg_internal.h"

void tg_deps_begin(struct accel_tg *tg, uint32_t line, uint64_t id)
{
	struct tg_deps *d = &tg->deps;
	uint32_t i;

	for (i = 0; i < d->ntouched; i++)
		d->need[d->touched[i]] = 0;
	d->ntouched = 0;
	d->line = line;
	d->id = id;
	d->nwaits = 0;
	memset(d->found, 0, sizeof(d->found));
	d->same_line = 0;
}

void tg_dep_cb(void *arg, uint64_t task, enum tm_dep_kind kind)
{
	struct accel_tg *tg = arg;
	struct tg_deps *d = &tg->deps;
	uint32_t line = TG_ID_LINE(task);
	uint64_t value = TG_ID_VALUE(task);

	d->found[kind]++;
	if (line == d->line) {
		d->same_line++;
		return;
	}
	if (!d->need[line])
		d->touched[d->ntouched++] = line;
	if (value > d->need[line])
		d->need[line] = value;
}

int tg_deps_resolve(struct accel_tg *tg, uint32_t devi)
{
	struct tg_deps *d = &tg->deps;
	uint32_t i, n = 0;
	uint64_t va;
	int ret;

	for (i = 0; i < d->ntouched; i++) {
		uint32_t src = d->touched[i];

		if (!d->need[src])
			continue;
		if (acc_ge(accel_signal_read(tg->lines[src].sig), d->need[src])) {
			d->need[src] = 0;	/* done already: no packet */
			continue;
		}
		ret = tg_line_va(tg, src, devi, &va);
		if (ret)
			return ret;
		n++;
	}
	d->nwaits = n;
	return 0;
}

void tg_deps_emit(struct accel_tg *tg, struct tg_line *l)
{
	struct tg_deps *d = &tg->deps;
	uint32_t i;

	for (i = 0; i < d->ntouched; i++) {
		uint32_t src = d->touched[i];
		struct tg_line *s = &tg->lines[src];

		if (!d->need[src])
			continue;
		acc_trace("task graph: queue line %u waits for line %u (%s) value %llu",
			  (unsigned int)(l - tg->lines), src,
			  s->kind == TG_LINE_QUEUE ? "queue" : s->kind == TG_LINE_HOST ? "host" : "map",
			  (unsigned long long)d->need[src]);
		accel_prep_wait(accel_queue_get_packet(l->q), s->va_on[l->devi], DRM_VACCEL_WAIT_GE,
				d->need[src], 0, tg->timeout_ns > 0 ? (uint64_t)tg->timeout_ns : 0);
	}
	tg->st.waits += d->nwaits;
}

void tg_deps_count(struct accel_tg *tg)
{
	struct tg_deps *d = &tg->deps;
	int k;

	for (k = 0; k < TM_DEP_KINDS; k++)
		tg->st.deps[k] += d->found[k];
	tg->st.deps_same_queue += d->same_line;
}

int tg_map_blocking(const struct accel_tg *tg, uint32_t line, uint64_t value)
{
	uint32_t m = tg->open_maps;

	while (m) {
		int slot = __builtin_ctz(m);
		uint64_t f = tg->maps[slot].from[line];

		m &= m - 1;
		if (f && value >= f)
			return slot;
	}
	return -1;
}

void tg_deps_mark_blocked(struct accel_tg *tg, uint32_t line, uint64_t first)
{
	struct tg_deps *d = &tg->deps;
	uint32_t m = tg->open_maps, i;

	while (m) {
		uint64_t *from = tg->maps[__builtin_ctz(m)].from;

		m &= m - 1;
		if (from[line])
			continue;
		for (i = 0; i < d->ntouched; i++) {
			uint32_t src = d->touched[i];

			if (d->need[src] && from[src] && d->need[src] >= from[src]) {
				from[line] = first;
				break;
			}
		}
	}
}
