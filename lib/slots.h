/* SPDX-License-Identifier: MIT */
/*
 * The signal slot allocator: pages of up to 64 slots (one signal per
 * 64-byte cache line of a 4 KiB page), pages added by the caller on
 * demand, free slots reused. Pure bookkeeping, tested natively.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_SLOTS_H
#define ACCEL_SLOTS_H

#include <stdint.h>

struct acc_slots {
	unsigned int per_page;		/* 1 .. 64 */
	unsigned int npages, cap;
	uint64_t *free;			/* per page: bit i set = slot i free */
	unsigned int *avail;		/* pages with a free slot, a set */
	unsigned int *avail_pos;	/* page -> index in avail, or ~0u */
	unsigned int navail;
	unsigned int used;
};

int slots_init(struct acc_slots *s, unsigned int per_page);
void slots_fini(struct acc_slots *s);
/* Return: 0 and a slot; -ENOSPC when every page is full (add one). O(1). */
int slots_alloc(struct acc_slots *s, unsigned int *page, unsigned int *slot);
/* Return: the new page's index, or -ENOMEM. Amortised O(1). */
int slots_add_page(struct acc_slots *s);
/* Return: 0, or -EINVAL for a slot that is not allocated. O(1). */
int slots_free(struct acc_slots *s, unsigned int page, unsigned int slot);

#endif /* ACCEL_SLOTS_H */
