// SPDX-License-Identifier: MIT
/*
 * The device-VA allocator: a buddy allocator. The window is cut into its
 * maximal naturally aligned power-of-two blocks; an allocation takes the
 * smallest free block of a large enough order and splits it; a free merges
 * the block with its buddy while the buddy is free and of the same order.
 * Allocation is O(orders) plus the splits, free is O(orders) merges, each
 * step an O(1) hash lookup: O(log window) both. Blocks are naturally
 * aligned, so a block of 2^k bytes is 2^k-aligned.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "va.h"

static size_t hash_of(const struct acc_va *va, uint64_t addr)
{
	return (size_t)(((addr >> va->min_order) * 0x9e3779b97f4a7c15ull) >> 20) &
	       (va->nbuckets - 1);
}

static struct va_block *hash_find(const struct acc_va *va, uint64_t addr)
{
	struct va_block *b;

	for (b = va->hash[hash_of(va, addr)]; b; b = b->hnext)
		if (b->addr == addr)
			return b;
	return NULL;
}

static int hash_grow(struct acc_va *va)
{
	size_t i, old_n = va->nbuckets;
	struct va_block **old = va->hash, *b, *next;
	struct va_block **nh = calloc(old_n * 2, sizeof(*nh));

	if (!nh)
		return -ENOMEM;
	va->hash = nh;
	va->nbuckets = old_n * 2;
	for (i = 0; i < old_n; i++)
		for (b = old[i]; b; b = next) {
			size_t h = hash_of(va, b->addr);

			next = b->hnext;
			b->hnext = nh[h];
			nh[h] = b;
		}
	free(old);
	return 0;
}

static void hash_add(struct acc_va *va, struct va_block *b)
{
	size_t h = hash_of(va, b->addr);

	b->hnext = va->hash[h];
	va->hash[h] = b;
	va->nblocks++;
}

static void hash_del(struct acc_va *va, struct va_block *b)
{
	struct va_block **pp = &va->hash[hash_of(va, b->addr)];

	while (*pp != b)
		pp = &(*pp)->hnext;
	*pp = b->hnext;
	va->nblocks--;
}

static void list_push(struct acc_va *va, struct va_block *b)
{
	b->prev = NULL;
	b->next = va->free[b->order];
	if (b->next)
		b->next->prev = b;
	va->free[b->order] = b;
}

static void list_unlink(struct acc_va *va, struct va_block *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		va->free[b->order] = b->next;
	if (b->next)
		b->next->prev = b->prev;
	b->prev = b->next = NULL;
}

/* A new free block; the hash grows first so that adding cannot fail. */
static int add_free(struct acc_va *va, uint64_t addr, unsigned int order)
{
	struct va_block *b;

	if (va->nblocks + 1 > va->nbuckets && hash_grow(va))
		return -ENOMEM;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->addr = addr;
	b->order = order;
	hash_add(va, b);
	list_push(va, b);
	return 0;
}

int va_init(struct acc_va *va, uint64_t start, uint64_t size, unsigned int min_order,
	    unsigned int max_order)
{
	uint64_t addr, end = start + size;
	int ret;

	memset(va, 0, sizeof(*va));
	if (min_order > max_order || max_order > VA_MAX_ORDER || !size || end < start ||
	    (start | size) & ((1ull << min_order) - 1))
		return -EINVAL;
	va->start = start;
	va->end = end;
	va->min_order = min_order;
	va->max_order = max_order;
	va->nbuckets = 64;
	va->hash = calloc(va->nbuckets, sizeof(*va->hash));
	if (!va->hash)
		return -ENOMEM;
	for (addr = start; addr < end;) {
		unsigned int k = addr ? (unsigned int)__builtin_ctzll(addr) : VA_MAX_ORDER;

		if (k > max_order)
			k = max_order;
		while (end - addr < (1ull << k))
			k--;
		ret = add_free(va, addr, k);
		if (ret) {
			va_fini(va);
			return ret;
		}
		addr += 1ull << k;
	}
	return 0;
}

void va_fini(struct acc_va *va)
{
	struct va_block *b, *next;
	size_t i;

	if (!va->hash)
		return;
	for (i = 0; i < va->nbuckets; i++)
		for (b = va->hash[i]; b; b = next) {
			next = b->hnext;
			free(b);
		}
	free(va->hash);
	memset(va, 0, sizeof(*va));
}

unsigned int va_order_for(const struct acc_va *va, uint64_t size, uint64_t align)
{
	unsigned int order = va->min_order;

	while (order < 64 && (1ull << order) < size)
		order++;
	while (order < 64 && (1ull << order) < align)
		order++;
	return order;
}

static int alloc_block(struct acc_va *va, uint64_t size, uint64_t align, uint64_t *addr)
{
	unsigned int order, k;
	struct va_block *b;

	if (!size || (align & (align - 1)))
		return -EINVAL;
	order = va_order_for(va, size, align);
	if (order > va->max_order)
		return -ENOSPC;
	for (k = order; k <= va->max_order && !va->free[k]; k++)
		;
	if (k > va->max_order)
		return -ENOSPC;
	b = va->free[k];
	/* split: the block keeps its left half, the right half becomes free */
	while (b->order > order) {
		unsigned int half = b->order - 1;

		if (add_free(va, b->addr + (1ull << half), half))
			return -ENOMEM;	/* consistent: what was split is free */
		list_unlink(va, b);
		b->order = half;
		list_push(va, b);
	}
	list_unlink(va, b);
	b->allocated = 1;
	va->allocated += 1ull << b->order;
	*addr = b->addr;
	return 0;
}

int va_free(struct acc_va *va, uint64_t addr)
{
	struct va_block *b = hash_find(va, addr), *buddy;

	if (!b || !b->allocated)
		return -EINVAL;
	b->allocated = 0;
	va->allocated -= 1ull << b->order;
	while (b->order < va->max_order) {
		buddy = hash_find(va, b->addr ^ (1ull << b->order));
		if (!buddy || buddy->allocated || buddy->order != b->order)
			break;
		/* the left one stays (its address is its hash key) */
		if (buddy->addr < b->addr) {
			struct va_block *t = b;

			b = buddy;
			buddy = t;
			list_unlink(va, b);
		} else {
			list_unlink(va, buddy);
		}
		hash_del(va, buddy);
		free(buddy);
		b->order++;
	}
	list_push(va, b);
	return 0;
}

/* Give the quarantined blocks back to the allocator, oldest first. */
static void flush_quarantine(struct acc_va *va)
{
	while (va->qlen) {
		va_free(va, va->quarantine[va->qhead]);
		va->qhead = (va->qhead + 1) % VA_QUARANTINE;
		va->qlen--;
	}
}

int va_alloc(struct acc_va *va, uint64_t size, uint64_t align, uint64_t *addr)
{
	int ret = alloc_block(va, size, align, addr);

	/* the quarantine never makes an allocation fail */
	if (ret == -ENOSPC && va->qlen) {
		flush_quarantine(va);
		ret = alloc_block(va, size, align, addr);
	}
	return ret;
}

int va_retire(struct acc_va *va, uint64_t addr)
{
	const struct va_block *b = hash_find(va, addr);

	if (!b || !b->allocated)
		return -EINVAL;
	if (va->qlen == VA_QUARANTINE) {
		va_free(va, va->quarantine[va->qhead]);
		va->qhead = (va->qhead + 1) % VA_QUARANTINE;
		va->qlen--;
	}
	va->quarantine[(va->qhead + va->qlen) % VA_QUARANTINE] = addr;
	va->qlen++;
	return 0;
}

uint64_t va_block_size(const struct acc_va *va, uint64_t addr)
{
	const struct va_block *b = va->hash ? hash_find(va, addr) : NULL;

	return b && b->allocated ? 1ull << b->order : 0;
}
