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

/* what keeps a block live: a count of each */
enum gref {
	REF_HELD,			/* the program (1 until gheap_release()) */
	REF_UNSUBMITTED,		/* tasks that retain it, not yet submitted */
	REF_INFLIGHT,			/* submitted tasks, not yet completed */
	REF_PINNED,			/* graphs that use it */
	NR_REFS,
	REF_NONE = NR_REFS,		/* move_ref(): the reference goes away */
};

struct gblock {
	uint64_t start, end;		/* positions: end - start = padding + size */
	uint64_t size;
	uint64_t owner;
	uint64_t last_task;		/* last task retained while unsubmitted */
	uint32_t refs[NR_REFS];
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
	return !b->refs[REF_HELD] && !b->refs[REF_UNSUBMITTED] && !b->refs[REF_INFLIGHT] &&
	       !b->refs[REF_PINNED];
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
		if (b->refs[REF_HELD] || b->refs[REF_UNSUBMITTED] || b->refs[REF_PINNED]) {
			if (rep) {
				rep->block = id;
				rep->offset = b->start % h->capacity;
				rep->size = b->size;
				rep->owner = b->owner;
				rep->reason = b->refs[REF_HELD] ? GHEAP_HELD_BY_PROGRAM :
					      b->refs[REF_PINNED] ? GHEAP_HELD_BY_GRAPH :
					      GHEAP_HELD_BY_UNSUBMITTED;
				rep->task = b->refs[REF_UNSUBMITTED] ? b->last_task : 0;
				rep->unsubmitted = b->refs[REF_UNSUBMITTED];
				rep->inflight = b->refs[REF_INFLIGHT];
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
	*b = (struct gblock){
		.start = s, .end = e, .size = size, .owner = owner, .refs[REF_HELD] = 1,
	};
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
	if ((!b->refs[REF_HELD] && !b->refs[REF_PINNED]) ||
	    b->refs[REF_UNSUBMITTED] == UINT32_MAX)
		return -EINVAL;
	b->refs[REF_UNSUBMITTED]++;
	b->last_task = task;
	return 0;
}

/*
 * Every other change of a block's state: one reference of kind @from
 * becomes one of kind @to (or goes away, REF_NONE). -ENOENT for a block
 * not live, -EINVAL when the block has no reference of kind @from.
 */
static int move_ref(struct gheap *h, uint64_t block, enum gref from, enum gref to)
{
	struct gblock *b = lookup(h, block);

	if (!b)
		return -ENOENT;
	if (!b->refs[from])
		return -EINVAL;
	b->refs[from]--;
	if (to != REF_NONE)
		b->refs[to]++;
	return 0;
}

int gheap_unretain(struct gheap *h, uint64_t block)
{
	return move_ref(h, block, REF_UNSUBMITTED, REF_NONE);
}

int gheap_submit(struct gheap *h, uint64_t block)
{
	return move_ref(h, block, REF_UNSUBMITTED, REF_INFLIGHT);
}

int gheap_complete(struct gheap *h, uint64_t block)
{
	return move_ref(h, block, REF_INFLIGHT, REF_NONE);
}

int gheap_release(struct gheap *h, uint64_t block)
{
	return move_ref(h, block, REF_HELD, REF_NONE);
}

void gheap_reclaim(struct gheap *h)
{
	reclaim(h);
}

int gheap_pin(struct gheap *h, uint64_t block)
{
	struct gblock *b = lookup(h, block);

	if (!b)
		return -ENOENT;
	if (!b->refs[REF_HELD] || b->refs[REF_PINNED] == UINT32_MAX)
		return -EINVAL;
	b->refs[REF_PINNED]++;
	return 0;
}

int gheap_unpin(struct gheap *h, uint64_t block)
{
	return move_ref(h, block, REF_PINNED, REF_NONE);
}

int gheap_find(const struct gheap *h, uint64_t offset, uint64_t *block, uint64_t *start)
{
	uint64_t lo = h->tail_id, hi = h->head_id, pos, mid;
	const struct gblock *b;

	if (offset >= h->capacity || lo == hi)
		return -ENOENT;
	/* the one position of the live window [tail_pos, tail_pos + capacity) at @offset */
	pos = h->tail_pos - h->tail_pos % h->capacity + offset;
	if (pos < h->tail_pos)
		pos += h->capacity;
	/* the last block starting at or before pos (blocks are in position order) */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (blk(h, mid)->start <= pos)
			lo = mid;
		else
			hi = mid;
	}
	b = blk(h, lo);
	if (pos < b->start || pos >= b->start + b->size)
		return -ENOENT;
	*block = lo;
	*start = b->start % h->capacity;
	return 0;
}

int gheap_query(const struct gheap *h, uint64_t block, uint64_t *offset, uint64_t *size)
{
	const struct gblock *b;

	if (block < h->tail_id || block >= h->head_id)
		return -ENOENT;
	b = blk(h, block);
	*offset = b->start % h->capacity;
	*size = b->size;
	return b->refs[REF_HELD] ? 1 : 0;
}

void gheap_get_stats(const struct gheap *h, struct gheap_stats *st)
{
	*st = h->st;
}
