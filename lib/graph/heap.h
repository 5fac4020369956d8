/* SPDX-License-Identifier: MIT */
/*
 * The output heap: a ring of bytes in one device buffer from which
 * OUTPUT_NEW tensors get their memory.
 *
 * Internal to libaccel; pure logic (offsets only, no device access), no
 * threads, not thread-safe.
 *
 * Blocks are carved in order from the head of the ring and come back in
 * the same order from its tail. A block is reclaimed only when the program
 * has released it AND every task that retained it (each task that reads or
 * writes it) has completed: exact reference counts, no span guessed from
 * task ids. Blocks may become free in any order; the tail passes over every
 * free block it reaches. Window arithmetic uses 64-bit positions that only
 * grow (offset = position % capacity), and lives in one function,
 * ring_place().
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_GRAPH_HEAP_H
#define ACCEL_GRAPH_HEAP_H

#include <stdint.h>

#define GHEAP_MAX_ALIGN		4096u

enum gheap_hold {
	GHEAP_HELD_BY_PROGRAM,		/* the program has not released the tensor */
	GHEAP_HELD_BY_UNSUBMITTED,	/* a task retains it but was never submitted */
	GHEAP_HELD_BY_GRAPH,		/* a captured graph uses it */
};

/*
 * Why an allocation can never succeed: the first block in the way (in ring
 * order) that no device progress will free.
 */
struct gheap_report {
	uint64_t block;			/* its id */
	uint64_t offset, size;		/* where it is */
	uint64_t owner;			/* the owner tag given to gheap_alloc() */
	enum gheap_hold reason;
	uint64_t task;			/* GHEAP_HELD_BY_UNSUBMITTED: the last such task */
	uint32_t unsubmitted;		/* how many unsubmitted tasks retain it */
	uint32_t inflight;		/* how many submitted ones */
	uint64_t need;			/* the size asked for */
};

struct gheap_stats {
	uint64_t capacity;
	uint64_t used;			/* bytes between tail and head, padding included */
	uint64_t high_water;		/* the most "used" has been */
	uint64_t live_blocks;		/* allocated, not reclaimed */
	uint64_t allocs;
	uint64_t reclaimed;
	uint64_t eagain;		/* allocations that must wait for device progress */
	uint64_t edeadlk;		/* allocations that never can succeed */
};

struct gheap;

/* @capacity: bytes, a multiple of GHEAP_MAX_ALIGN. 0, -EINVAL, -ENOMEM */
int gheap_create(uint64_t capacity, struct gheap **out);
void gheap_destroy(struct gheap *h);

/*
 * Allocate @size bytes aligned to @align (a power of two up to
 * GHEAP_MAX_ALIGN). The block starts held by the program (gheap_release()
 * gives it up). @owner is a tag (tensor or task id) named in reports.
 *
 * Return: 0 and *block, *offset; -EINVAL (zero size, bad alignment);
 * -E2BIG (larger than the heap); -EAGAIN when the space will come back
 * once submitted tasks complete (wait for device progress and call again);
 * -EDEADLK when it never will by device progress alone: a block in the
 * way is held by the program or retained by a task not yet submitted, and
 * *rep (if not NULL) names the first such block and its owner; -ENOMEM.
 */
int gheap_alloc(struct gheap *h, uint64_t size, uint64_t align, uint64_t owner,
		uint64_t *block, uint64_t *offset, struct gheap_report *rep);

/*
 * A task (not yet submitted) will read or write the block. The program
 * must still hold it, or a graph pin it (a launch's task). 0, -ENOENT (no
 * such block), -EINVAL (released, and no graph pins it).
 */
int gheap_retain(struct gheap *h, uint64_t block, uint64_t task);
/* a retaining task was dropped without being submitted. 0, -ENOENT, -EINVAL */
int gheap_unretain(struct gheap *h, uint64_t block);
/* a retaining task was submitted. 0, -ENOENT, -EINVAL (none unsubmitted) */
int gheap_submit(struct gheap *h, uint64_t block);
/* a submitted retaining task completed. 0, -ENOENT, -EINVAL (none in flight) */
int gheap_complete(struct gheap *h, uint64_t block);
/* the program lets go of the block. 0, -ENOENT, -EINVAL (already released) */
int gheap_release(struct gheap *h, uint64_t block);

/*
 * A graph uses the block (until gheap_unpin()); it counts like a hold of
 * the program. The program must still hold it. 0, -ENOENT, -EINVAL.
 */
int gheap_pin(struct gheap *h, uint64_t block);
/* move the tail past the blocks free now (gheap_alloc() does it too) */
void gheap_reclaim(struct gheap *h);
int gheap_unpin(struct gheap *h, uint64_t block);
/*
 * The live block whose bytes include @offset: 0 and *block, *start (its
 * offset), or -ENOENT (padding, free space, out of range). O(log blocks).
 */
int gheap_find(const struct gheap *h, uint64_t offset, uint64_t *block, uint64_t *start);

/*
 * Where live block @block is: *offset, *size. Returns 1 if the program
 * still holds it, 0 if it was released (still live: tasks or graphs use
 * it), -ENOENT if it is not live (reclaimed, or never allocated). O(1).
 */
int gheap_query(const struct gheap *h, uint64_t block, uint64_t *offset, uint64_t *size);

void gheap_get_stats(const struct gheap *h, struct gheap_stats *st);

#endif /* ACCEL_GRAPH_HEAP_H */
