// SPDX-License-Identifier: MIT
/*
 * The signal slot allocator: a free bitmap per page and the set of pages
 * that have a free slot, so that allocating and freeing are O(1).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "slots.h"

static uint64_t full_mask(const struct acc_slots *s)
{
	return s->per_page == 64 ? ~0ull : (1ull << s->per_page) - 1;
}

int slots_init(struct acc_slots *s, unsigned int per_page)
{
	memset(s, 0, sizeof(*s));
	if (!per_page || per_page > 64)
		return -EINVAL;
	s->per_page = per_page;
	return 0;
}

void slots_fini(struct acc_slots *s)
{
	free(s->free);
	free(s->avail);
	free(s->avail_pos);
	memset(s, 0, sizeof(*s));
}

static void avail_add(struct acc_slots *s, unsigned int page)
{
	s->avail_pos[page] = s->navail;
	s->avail[s->navail++] = page;
}

static void avail_del(struct acc_slots *s, unsigned int page)
{
	unsigned int pos = s->avail_pos[page], last = s->avail[--s->navail];

	s->avail[pos] = last;
	s->avail_pos[last] = pos;
	s->avail_pos[page] = ~0u;
}

int slots_add_page(struct acc_slots *s)
{
	if (s->npages == s->cap) {
		unsigned int cap = s->cap ? s->cap * 2 : 4;
		uint64_t *f = realloc(s->free, cap * sizeof(*f));
		unsigned int *a, *p;

		if (!f)
			return -ENOMEM;
		s->free = f;
		a = realloc(s->avail, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		s->avail = a;
		p = realloc(s->avail_pos, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->avail_pos = p;
		s->cap = cap;
	}
	s->free[s->npages] = full_mask(s);
	avail_add(s, s->npages);
	return (int)s->npages++;
}

int slots_alloc(struct acc_slots *s, unsigned int *page, unsigned int *slot)
{
	unsigned int p, i;

	if (!s->navail)
		return -ENOSPC;
	p = s->avail[s->navail - 1];
	i = (unsigned int)__builtin_ctzll(s->free[p]);
	s->free[p] &= ~(1ull << i);
	if (!s->free[p])
		avail_del(s, p);
	s->used++;
	*page = p;
	*slot = i;
	return 0;
}

int slots_free(struct acc_slots *s, unsigned int page, unsigned int slot)
{
	if (page >= s->npages || slot >= s->per_page || s->free[page] & (1ull << slot))
		return -EINVAL;
	if (!s->free[page])
		avail_add(s, page);
	s->free[page] |= 1ull << slot;
	s->used--;
	return 0;
}
