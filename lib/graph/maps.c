// SPDX-License-Identifier: MIT
/*
 * Host maps: the host reads or writes a tensor between tasks. A map waits
 * for exactly the overlapping writers (READ) or writers and readers
 * (WRITE), then registers itself on a map line (one per open map slot)
 * that accel_tg_unmap() completes: tasks submitted while the map is open
 * that conflict with it wait for the unmap on the device.
 *
 * A map that would wait for another open map of the task graph (an
 * overlapping write, or a write over an open read) fails at once with
 * -EDEADLK: the task graph is single-threaded, so the only thread that
 * could unmap the first is the one waiting.
 *
 * A map of a heap tensor holds its block like a task (a hold on the map's
 * line): the program may release the tensor while the map is open, and
 * the block comes back only after the unmap.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tg_internal.h"

static bool is_map_line(const struct accel_tg *tg, uint32_t line)
{
	return line >= tg->map_line && line < tg->map_line + ACCEL_TG_MAX_MAPS;
}

ACCEL_API int accel_tg_map(struct accel_tg *tg, const struct accel_tensor *t, uint32_t flags,
			   int64_t timeout_ns, void **ptr)
{
	int64_t deadline = acc_deadline(timeout_ns);
	const struct accel_buffer *bufs[1];
	struct tg_deps *d = &tg->deps;
	struct tg_arg a = { .heap = -1 };
	uint32_t acc, slot, i, line;
	bool stalled = false;
	struct tg_line *l;
	uint64_t id, value, *from = NULL;
	void *host;
	int ret;

	ret = tg_enter(tg, TG_E_ABORT | TG_E_FAULT, "accel_tg_map");
	if (ret)
		return ret;
	if (!t || !ptr || !flags || (flags & ~(ACCEL_MAP_READ | ACCEL_MAP_WRITE)))
		return -EINVAL;
	*ptr = NULL;
	a.v = *t;
	ret = tg_check_view("accel_tg_map", 0, &a.v, &a.lay);
	if (ret)
		return ret;
	if (tg_devi_of(tg, t->buf->dev) < 0)
		return -ENOENT;
	a.heap = tg_heap_of(tg, t->buf);
	if (a.heap >= 0) {
		ret = tg_heap_check(tg, &a, "accel_tg_map", 0);
		if (ret)
			return ret;
	}
	if ((flags & ACCEL_MAP_WRITE) && (t->buf->sealed || t->buf->read_only)) {
		acc_err("accel_tg_map: buffer 0x%llx is %s: no host writes",
			(unsigned long long)t->buf->va, t->buf->sealed ? "sealed" : "read-only");
		return -EACCES;
	}
	for (slot = 0; slot < ACCEL_TG_MAX_MAPS && tg->maps[slot].ptr; slot++)
		;
	if (slot == ACCEL_TG_MAX_MAPS) {
		acc_err("accel_tg_map: %u maps are open", ACCEL_TG_MAX_MAPS);
		return -EBUSY;
	}
	acc = flags == ACCEL_MAP_READ ? ACCEL_INPUT :
	      flags == ACCEL_MAP_WRITE ? ACCEL_OUTPUT : ACCEL_INOUT;
	line = tg->map_line + slot;
	l = &tg->lines[line];
	ret = tg_line_room(l, 1, "accel_tg_map");
	if (ret)
		return ret;
	a.b = tg_buf_get(tg, t->buf, &ret);
	if (!a.b)
		return ret;
	value = l->next;
	id = tg_id(line, value);
	tg_deps_begin(tg, line, id);
	ret = tm_deps_layout(tg->tm, t->buf, &a.lay, (enum accel_access)acc, id, tg_dep_cb, tg);
	if (ret < 0)
		goto unstage;
	/*
	 * An open map in the way, directly or through tasks that wait for its
	 * unmap: only this thread could unmap it.
	 */
	for (i = 0; tg->open_maps && i < d->ntouched; i++) {
		uint32_t src = d->touched[i];
		const struct tg_map *m;
		int blk;

		if (!d->need[src] || tg_id_done(tg, tg_id(src, d->need[src])))
			continue;
		blk = tg_map_blocking(tg, src, d->need[src]);
		if (blk < 0)
			continue;
		m = &tg->maps[blk];
		acc_err("accel_tg_map: the view [%lld, %lld) of buffer 0x%llx waits for %s the open map %p ([%llu, %llu) of buffer 0x%llx): unmap it first",
			(long long)a.lay.lo, (long long)a.lay.hi, (unsigned long long)t->buf->va,
			is_map_line(tg, src) ? "" : "tasks that wait for", m->ptr,
			(unsigned long long)m->lo, (unsigned long long)m->hi,
			m->buf ? (unsigned long long)m->buf->va : 0ull);
		ret = -EDEADLK;
		goto unstage;
	}
	ret = accel_buffer_map(t->buf, &host);
	if (ret)
		goto unstage;
	from = calloc(tg->nlines, sizeof(*from));
	if (!from) {
		ret = -ENOMEM;
		goto unstage;
	}
	bufs[0] = t->buf;
	ret = tm_reserve(tg->tm, bufs, 1);
	if (!ret && a.heap >= 0)
		ret = tg_holds_room(l, 1);
	if (ret)
		goto unstage;
	for (i = 0; i < d->ntouched; i++) {
		uint64_t dep = tg_id(d->touched[i], d->need[d->touched[i]]);

		if (!d->need[d->touched[i]] || tg_id_done(tg, dep))
			continue;
		if (!stalled) {
			stalled = true;
			tg->st.stall_map++;
		}
		ret = tg_wait_id(tg, dep, deadline, "the tasks a host map waits for");
		if (ret)
			goto unstage;
	}
	/* commit */
	tg_buf_commit_staged(tg);
	tg_deps_count(tg);
	tm_group_begin(tg->tm);
	tm_insert_layout(tg->tm, t->buf, &a.lay, (enum accel_access)acc, id);
	tm_group_end(tg->tm);
	tg_buf_used(a.b, line, value);
	/* the block stays live until the unmap, released or not */
	if (a.heap >= 0)
		tg_hold_commit(tg, l, value, &a);
	acc_trace("task graph: map slot %u (line %u) value %llu: %p", slot, line,
		  (unsigned long long)value, (void *)((char *)host + t->offset));
	l->next = value + 1;
	tg->maps[slot].value = value;
	tg->maps[slot].buf = t->buf;
	tg->maps[slot].lo = (uint64_t)a.lay.lo;
	tg->maps[slot].hi = (uint64_t)a.lay.hi;
	tg->maps[slot].ptr = (char *)host + t->offset;
	from[line] = value;
	tg->maps[slot].from = from;
	tg->open_maps |= 1u << slot;
	*ptr = tg->maps[slot].ptr;
	return 0;
unstage:
	free(from);
	tg_buf_unstage(tg);
	return ret;
}

ACCEL_API int accel_tg_unmap(struct accel_tg *tg, void *ptr)
{
	uint32_t slot;
	int ret = tg_enter(tg, 0, "accel_tg_unmap");

	if (ret)
		return ret;
	if (!ptr)
		return -EINVAL;
	for (slot = 0; slot < ACCEL_TG_MAX_MAPS; slot++)
		if (tg->maps[slot].ptr == ptr)
			break;
	if (slot == ACCEL_TG_MAX_MAPS) {
		acc_err("accel_tg_unmap: %p is not an open map", ptr);
		return -ENOENT;
	}
	tg->maps[slot].ptr = NULL;
	tg->maps[slot].buf = NULL;
	free(tg->maps[slot].from);
	tg->maps[slot].from = NULL;
	tg->open_maps &= ~(1u << slot);
	/* the host's accesses happen before whatever waits for this value */
	atomic_thread_fence(memory_order_seq_cst);
	return accel_signal_write(tg->lines[tg->map_line + slot].sig, DRM_VACCEL_SIGNAL_MAX,
				  tg->maps[slot].value);
}
