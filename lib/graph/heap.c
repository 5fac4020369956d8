// SPDX-License-Identifier: MIT
/*
 * The output heap (heap.h). Blocks are records in a FIFO indexed by their
 * id (a sequence number): ids [tail_id, head_id) are live, the record of id
 * n is at n & (cap - 1). Positions (tail_pos, head_pos, a block's start and
 * end) are byte counts since creation: they only grow, so "bytes in use"
 * is head_pos - tail_pos with tail_pos <= head_pos always, and nothing ever
 * wraps below zero (seed 000's reclaim watermark did).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>

#include "heap.h"

struct gblock {
	uint64_t start, end;		/* positions: end - start = padding + size */
	uint64_t size;
	uint64_t owner;
	uint64_t last_task;		/* last task retained while unsubmitted */
	uint32_t unsubmitted;
	uint32_t inflight;
	uint8_t held;
};

struct gheap {
	uint64_t capacity;
	uint64_t tail_pos, head_pos;
	uint64_t tail_id, head_id;
	struct gblock *blocks;
	uint64_t bcap;			/* power of two */
	struct gheap_stats st;
};

int gheap_create(uint64_t capacity, struct gheap **out)
{
	struct gheap *h;

	if (!capacity || capacity % GHEAP_MAX_ALIGN || capacity > (1ull << 62))
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->bcap = 64;
	h->blocks = calloc(h->bcap, sizeof(*h->blocks));
	if (!h->blocks) {
		free(h);
		return -ENOMEM;
	}
	h->capacity = capacity;
	h->st.capacity = capacity;
	*out = h;
	return 0;
}

void gheap_destroy(struct gheap *h)
{
	if (!h)
		return;
	free(h->blocks);
	free(h);
}

/*
 * The only window arithmetic: where a block of @size bytes aligned to
 * @align goes when the ring's oldest live byte is at @tail and the next
 * free one at @head (tail <= head <= tail + capacity). A block never
 * straddles the end of the buffer: if it does not fit before the end, it
 * starts at offset 0 of the next lap and the skipped bytes are padding
 * that belongs to it. Returns 1 and the block's start (its offset is
 * start % capacity) and end when it fits in the window, else 0.
 */
static int ring_place(uint64_t capacity, uint64_t tail, uint64_t head, uint64_t size,
		      uint64_t align, uint64_t *start, uint64_t *end)
{
	uint64_t off = head % capacity, pad = (align - off % align) % align;

	if (off + pad + size > capacity)
		pad = capacity - off;
	/* head >= tail: the difference cannot underflow */
	if (head + pad + size - tail > capacity)
		return 0;
	*start = head + pad;
	*end = head + pad + size;
	return 1;
}

static inline struct gblock *blk(const struct gheap *h, uint64_t id)
{
	return &h->blocks[id & (h->bcap - 1)];
}

static inline int is_free(const struct gblock *b)
{
	return !b->held && !b->unsubmitted && !b->inflight;
}

/* the tail passes every free block it reaches */
static void reclaim(struct gheap *h)
{
	while (h->tail_id < h->head_id && is_free(blk(h, h->tail_id))) {
		h->tail_pos = blk(h, h->tail_id)->end;
		h->tail_id++;
		h->st.reclaimed++;
		h->st.live_blocks--;
	}
	if (h->tail_id == h->head_id && h->tail_pos % h->capacity) {
		/* empty: start the next lap at offset 0, so any size fits */
		h->tail_pos += h->capacity - h->tail_pos % h->capacity;
		h->head_pos = h->tail_pos;
	}
	h->st.used = h->head_pos - h->tail_pos;
}

static int grow(struct gheap *h)
{
	uint64_t ncap = h->bcap * 2, id;
	struct gblock *nb;

	nb = calloc(ncap, sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	for (id = h->tail_id; id < h->head_id; id++)
		nb[id & (ncap - 1)] = *blk(h, id);
	free(h->blocks);
	h->blocks = nb;
	h->bcap = ncap;
	return 0;
}

/* would waiting for device progress ever make room? fill *rep if not */
static int diagnose(const struct gheap *h, uint64_t size, uint64_t align,
		    struct gheap_report *rep)
{
	uint64_t tail = h->tail_pos, id, s, e;
	const struct gblock *b;

	for (id = h->tail_id; id < h->head_id; id++) {
		b = blk(h, id);
		if (b->held || b->unsubmitted) {
			if (rep) {
				rep->block = id;
				rep->offset = b->start % h->capacity;
				rep->size = b->size;
				rep->owner = b->owner;
				rep->reason = b->held ? GHEAP_HELD_BY_PROGRAM :
					      GHEAP_HELD_BY_UNSUBMITTED;
				rep->task = b->unsubmitted ? b->last_task : 0;
				rep->unsubmitted = b->unsubmitted;
				rep->inflight = b->inflight;
				rep->need = size;
			}
			return -EDEADLK;
		}
		/* freed by completions alone: reclaim it in thought */
		tail = b->end;
		if (ring_place(h->capacity, tail, h->head_pos, size, align, &s, &e))
			return -EAGAIN;
	}
	/* everything would go: the heap would be empty, and size <= capacity */
	return -EAGAIN;
}

int gheap_alloc(struct gheap *h, uint64_t size, uint64_t align, uint64_t owner,
		uint64_t *block, uint64_t *offset, struct gheap_report *rep)
{
	struct gblock *b;
	uint64_t s, e;
	int ret;

	if (!size || !align || (align & (align - 1)) || align > GHEAP_MAX_ALIGN)
		return -EINVAL;
	if (size > h->capacity)
		return -E2BIG;
	reclaim(h);
	if (!ring_place(h->capacity, h->tail_pos, h->head_pos, size, align, &s, &e)) {
		ret = diagnose(h, size, align, rep);
		if (ret == -EDEADLK)
			h->st.edeadlk++;
		else
			h->st.eagain++;
		return ret;
	}
	if (h->head_id - h->tail_id == h->bcap) {
		ret = grow(h);
		if (ret)
			return ret;
	}
	b = blk(h, h->head_id);
	b->start = s;
	b->end = e;
	b->size = size;
	b->owner = owner;
	b->last_task = 0;
	b->unsubmitted = 0;
	b->inflight = 0;
	b->held = 1;
	*block = h->head_id++;
	*offset = s % h->capacity;
	h->head_pos = e;
	h->st.allocs++;
	h->st.live_blocks++;
	h->st.used = h->head_pos - h->tail_pos;
	if (h->st.used > h->st.high_water)
		h->st.high_water = h->st.used;
	return 0;
}

static struct gblock *lookup(struct gheap *h, uint64_t id)
{
	if (id < h->tail_id || id >= h->head_id)
		return NULL;
	return blk(h, id);
}

int gheap_retain(struct gheap *h, uint64_t block, uint64_t task)
{
	struct gblock *b = lookup(h, block);

	if (!b)
		return -ENOENT;
	if (!b->held || b->unsubmitted == UINT32_MAX)
		return -EINVAL;
	b->unsubmitted++;
	b->last_task = task;
	return 0;
}

int gheap_unretain(struct gheap *h, uint64_t block)
{
	struct gblock *b = lookup(h, block);

	if (!b)
		return -ENOENT;
	if (!b->unsubmitted)
		return -EINVAL;
	b->unsubmitted--;
	return 0;
}

int gheap_submit(struct gheap *h, uint64_t block)
{
	struct gblock *b = lookup(h, block);

	if (!b)
		return -ENOENT;
	if (!b->unsubmitted)
		return -EINVAL;
	b->unsubmitted--;
	b->inflight++;
	return 0;
}

int gheap_complete(struct gheap *h, uint64_t block)
{
	struct gblock *b = lookup(h, block);

	if (!b)
		return -ENOENT;
	if (!b->inflight)
		return -EINVAL;
	b->inflight--;
	return 0;
}

int gheap_release(struct gheap *h, uint64_t block)
{
	struct gblock *b = lookup(h, block);

	if (!b)
		return -ENOENT;
	if (!b->held)
		return -EINVAL;
	b->held = 0;
	return 0;
}

void gheap_get_stats(const struct gheap *h, struct gheap_stats *st)
{
	*st = h->st;
}
