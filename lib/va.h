/* SPDX-License-Identifier: MIT */
/*
 * The device-VA allocator: a buddy allocator over a context's VA window.
 * Pure memory bookkeeping (no I/O), so it is tested natively.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_VA_H
#define ACCEL_VA_H

#include <stddef.h>
#include <stdint.h>

#define VA_MAX_ORDER	63

/*
 * A block is a naturally aligned power-of-two range: a leaf of the buddy
 * tree, either free (on its order's list) or allocated. Every block is in
 * the hash table, keyed by its address (leaves never share an address).
 */
struct va_block {
	uint64_t addr;
	unsigned int order;
	int allocated;
	struct va_block *hnext;		/* hash chain */
	struct va_block *prev, *next;	/* free list of its order */
};

/* Freed blocks held back before they are reused (va_retire()). */
#define VA_QUARANTINE	256

struct acc_va {
	uint64_t start, end;
	unsigned int min_order, max_order;
	struct va_block *free[VA_MAX_ORDER + 1];
	struct va_block **hash;
	size_t nbuckets, nblocks;
	uint64_t allocated;		/* bytes in allocated blocks (quarantined ones too) */
	uint64_t quarantine[VA_QUARANTINE];	/* a FIFO of retired blocks */
	unsigned int qhead, qlen;
};

/*
 * va_init() - manage [@start, @start + @size); both multiples of
 * 2^@min_order. Blocks are at most 2^@max_order bytes.
 * Return: 0, -EINVAL, -ENOMEM.
 */
int va_init(struct acc_va *va, uint64_t start, uint64_t size, unsigned int min_order,
	    unsigned int max_order);
void va_fini(struct acc_va *va);

/*
 * va_alloc() - allocate a block of at least @size bytes aligned to @align
 * (0: no constraint beyond the block's natural alignment, which is its
 * size rounded up to a power of two). O(log window); when the window is
 * full, the retired blocks are freed first (O(VA_QUARANTINE log window)).
 * Return: 0, -EINVAL for a zero size, -ENOSPC, -ENOMEM.
 */
int va_alloc(struct acc_va *va, uint64_t size, uint64_t align, uint64_t *addr);

/*
 * va_free() - free the block allocated at @addr, merging free buddies.
 * Return: 0, or -EINVAL if no allocated block starts at @addr.
 */
int va_free(struct acc_va *va, uint64_t addr);

/*
 * va_retire() - free the block at @addr later: it joins a FIFO of the
 * last VA_QUARANTINE retired blocks and is freed when it leaves it, so
 * that an address is not handed out again right after its buffer went
 * (device work still using it faults instead of reaching the next
 * buffer). va_alloc() frees the whole quarantine before it fails with
 * -ENOSPC. O(log window).
 * Return: 0, or -EINVAL if no allocated block starts at @addr.
 */
int va_retire(struct acc_va *va, uint64_t addr);

/* va_block_size() - bytes of the allocated block at @addr, 0 if none */
uint64_t va_block_size(const struct acc_va *va, uint64_t addr);

/* va_order_for() - the block order va_alloc() uses for @size and @align */
unsigned int va_order_for(const struct acc_va *va, uint64_t size, uint64_t align);

#endif /* ACCEL_VA_H */
