// SPDX-License-Identifier: MIT
/*
 * The buffers a task graph has seen. Each gets an entry (struct tg_buf)
 * that pins it (acc_buffer_pin()): the TensorMap keys its entries by the
 * buffer's address, so the object must not be freed and its address reused
 * while entries or work may still refer to it. The entry also caches the
 * buffer's imports into the task graph's other devices and remembers, per
 * line, the last value of work that used it.
 *
 * When the program destroys a buffer the task graph pins, the core calls
 * the pin's orphaned() hook (from whatever thread destroyed it, under the
 * device lock): the entry goes onto a lock-free stack. The task graph's own
 * thread takes the stack at its next submission or wait, and drops each
 * entry (its TensorMap entries, imports and pin) once the buffer's own last
 * uses have completed: a queue that stays busy with other work does not
 * hold it back, and nothing scans the whole TensorMap or every buffer.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tg_internal.h"

static uint32_t bhash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (uint32_t)x;
}

/* the table slot of @buf: its entry, or the empty slot where it would go */
static uint32_t slot_of(const struct accel_tg *tg, const struct accel_buffer *buf)
{
	uint32_t i = bhash(buf) & (tg->bcap - 1);

	while (tg->bufs[i] && tg->bufs[i]->buf != buf)
		i = (i + 1) & (tg->bcap - 1);
	return i;
}

struct tg_buf *tg_buf_find(const struct accel_tg *tg, const struct accel_buffer *buf)
{
	return tg->bufs[slot_of(tg, buf)];
}

static int table_grow(struct accel_tg *tg)
{
	struct tg_buf **old = tg->bufs;
	uint32_t ocap = tg->bcap, i;

	tg->bufs = calloc((size_t)ocap * 2, sizeof(*tg->bufs));
	if (!tg->bufs) {
		tg->bufs = old;
		return -ENOMEM;
	}
	tg->bcap = ocap * 2;
	for (i = 0; i < ocap; i++)
		if (old[i])
			tg->bufs[slot_of(tg, old[i]->buf)] = old[i];
	free(old);
	return 0;
}

/* remove @b's slot, keeping every probe chain whole (backward shift) */
static void table_remove(struct accel_tg *tg, struct tg_buf *b)
{
	uint32_t mask = tg->bcap - 1, i = slot_of(tg, b->buf), j = i, k;

	tg->bufs[i] = NULL;
	for (;;) {
		j = (j + 1) & mask;
		if (!tg->bufs[j])
			break;
		k = bhash(tg->bufs[j]->buf) & mask;
		/* move j back to i unless its home k lies cyclically in (i, j] */
		if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		tg->bufs[i] = tg->bufs[j];
		tg->bufs[j] = NULL;
		i = j;
	}
	tg->nbufs--;
}

/* the program destroyed @pin's buffer: any thread, device lock held */
static void orphaned(struct acc_pin *pin)
{
	struct tg_buf *b = container_of(pin, struct tg_buf, pin);
	struct accel_tg *tg = b->tg;
	struct tg_buf *head;

	if (atomic_exchange(&b->queued, true))
		return;
	head = atomic_load_explicit(&tg->orphans, memory_order_relaxed);
	do {
		b->onext = head;
	} while (!atomic_compare_exchange_weak_explicit(&tg->orphans, &head, b,
							memory_order_release,
							memory_order_relaxed));
}

struct tg_buf *tg_buf_get(struct accel_tg *tg, struct accel_buffer *buf, int *err)
{
	uint32_t i;
	struct tg_buf *b = tg->last_buf, **staged;

	/* most tasks name the buffer the one before named */
	if (b && b->buf == buf)
		return b;
	i = slot_of(tg, buf);
	b = tg->bufs[i];
	if (b) {
		tg->last_buf = b;
		return b;
	}
	if ((tg->nbufs + 1) * 2 > tg->bcap) {
		*err = table_grow(tg);
		if (*err)
			return NULL;
		i = slot_of(tg, buf);
	}
	staged = tg_grow(tg->staged, &tg->stagedcap, tg->nstaged + 1, sizeof(*tg->staged), 16);
	if (!staged) {
		*err = -ENOMEM;
		return NULL;
	}
	tg->staged = staged;
	b = calloc(1, sizeof(*b));
	if (!b) {
		*err = -ENOMEM;
		return NULL;
	}
	tg->staged[tg->nstaged++] = b;
	b->tg = tg;
	b->buf = buf;
	b->fresh = true;
	b->pin.orphaned = orphaned;
	list_init(&b->pending);
	acc_buffer_pin(buf, &b->pin);
	tg->bufs[i] = b;
	tg->nbufs++;
	return b;
}

static void entry_free(struct accel_tg *tg, struct tg_buf *b)
{
	unsigned int d;

	if (tg->last_buf == b)
		tg->last_buf = NULL;
	tm_forget_buffer(tg->tm, b->buf);
	for (d = 0; d < ACCEL_TG_MAX_DEVICES; d++)
		if (b->import[d])
			acc_buffer_unpin(b->import[d], &b->import_pin[d]);
	list_del(&b->pending);
	/* no orphaned() call comes after this (both under the device lock) */
	acc_buffer_unpin(b->buf, &b->pin);
	free(b->snapshot);
	b->snapshot = NULL;
	if (atomic_load(&b->queued))
		b->dead = true;		/* on the orphan stack: tg_bufs_collect() frees it */
	else
		free(b);
}

void tg_buf_unstage(struct accel_tg *tg)
{
	uint32_t i;

	for (i = 0; i < tg->nstaged; i++) {
		table_remove(tg, tg->staged[i]);
		entry_free(tg, tg->staged[i]);
	}
	tg->nstaged = 0;
}

void tg_buf_commit_staged(struct accel_tg *tg)
{
	uint32_t i;

	for (i = 0; i < tg->nstaged; i++)
		tg->staged[i]->fresh = false;
	tg->nstaged = 0;
}

int tg_buf_va(struct accel_tg *tg, struct tg_buf *b, uint32_t devi, uint64_t *va)
{
	struct accel_device *dev = tg->devs[devi];
	struct accel_buffer *buf = b->buf;
	int ret, fd;

	if (buf->dev == dev) {
		*va = buf->va;
		return 0;
	}
	if (!b->import[devi]) {
		ret = accel_buffer_export(buf, 0, &fd);
		if (ret)
			return ret;
		ret = acc_buffer_import_pinned(dev, fd, &b->import_pin[devi], &b->import[devi]);
		close(fd);
		if (ret) {
			acc_err("%s: import of buffer 0x%llx of %s: %s", dev->path,
				(unsigned long long)buf->va, buf->dev->path, strerror(-ret));
			b->import[devi] = NULL;
			return ret;
		}
	}
	*va = b->import[devi]->va;
	return 0;
}

void tg_buf_used(struct tg_buf *b, uint32_t line, uint64_t value)
{
	uint32_t i;

	for (i = 0; i < b->nlast && i < TG_LAST_USES; i++)
		if (b->last_line[i] == line) {
			b->last_value[i] = value;
			return;
		}
	if (b->nlast < TG_LAST_USES) {
		b->last_line[b->nlast] = line;
		b->last_value[b->nlast++] = value;
	} else {
		b->nlast = TG_LAST_USES + 1;	/* many: see uses_done() */
	}
}

static bool line_reached(struct accel_tg *tg, uint32_t line, uint64_t value)
{
	return acc_ge(accel_signal_read(tg->lines[line].sig), value);
}

/* has every use of @b completed (or been abandoned by a recovery)? */
static bool uses_done(struct accel_tg *tg, struct tg_buf *b)
{
	uint32_t i;

	if (b->nlast > TG_LAST_USES) {
		if (!b->snapshot)
			return false;
		for (i = 0; i < tg->nlines; i++)
			if (b->snapshot[i] && !line_reached(tg, i, b->snapshot[i]))
				return false;
		return true;
	}
	for (i = 0; i < b->nlast; i++)
		if (!line_reached(tg, b->last_line[i], b->last_value[i]))
			return false;
	return true;
}

/* @b was destroyed by the program: remember what it still waits for */
static void orphan_take(struct accel_tg *tg, struct tg_buf *b)
{
	uint32_t i;

	b->orphaned = true;
	if (b->nlast > TG_LAST_USES && !b->snapshot) {
		/* used by many lines: every line's latest value (all were before the destroy) */
		b->snapshot = calloc(tg->nlines, sizeof(*b->snapshot));
		for (i = 0; b->snapshot && i < tg->nlines; i++)
			b->snapshot[i] = tg->lines[i].next - 1;
	}
	list_add_tail(&tg->pending_drop, &b->pending);
}

void tg_bufs_collect(struct accel_tg *tg)
{
	struct tg_buf *b, *next;
	struct list *l, *ln;

	b = atomic_exchange_explicit(&tg->orphans, NULL, memory_order_acquire);
	for (; b; b = next) {
		next = b->onext;
		atomic_store(&b->queued, false);
		if (b->dead) {
			free(b);
			continue;
		}
		/* an import may have given the program its buffer back meanwhile */
		if (acc_buffer_orphaned(b->buf) && list_empty(&b->pending))
			orphan_take(tg, b);
	}
	for (l = tg->pending_drop.next; l != &tg->pending_drop; l = ln) {
		ln = l->next;
		b = container_of(l, struct tg_buf, pending);
		if (!acc_buffer_orphaned(b->buf)) {
			list_del(&b->pending);	/* alive again */
			b->orphaned = false;
			continue;
		}
		if (!uses_done(tg, b))
			continue;
		table_remove(tg, b);
		entry_free(tg, b);
	}
}

void tg_bufs_fini(struct accel_tg *tg)
{
	uint32_t i;

	for (i = 0; i < tg->bcap; i++)
		if (tg->bufs[i]) {
			entry_free(tg, tg->bufs[i]);
			tg->bufs[i] = NULL;
		}
	tg->nbufs = 0;
	tg_bufs_collect(tg);	/* frees what was still on the orphan stack */
	free(tg->staged);
	tg->staged = NULL;
}
