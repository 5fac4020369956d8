// SPDX-License-Identifier: GPL-2.0-only
/*
 * Native OS layer for the packet core (see os_native.h).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <stdlib.h>

#include "os_native.h"
#include "signal_ref.h"

u8 *os_add(struct os_native *os, u64 va, u64 size, u32 access, bool signal,
	   bool sealed)
{
	struct os_region *r;

	if (os->nregions == OS_MAX_REGIONS)
		abort();
	r = &os->regions[os->nregions++];
	r->va = va;
	r->size = size;
	r->mem = calloc(1, size ? size : 1);
	if (!r->mem)
		abort();
	r->access = access;
	r->signal = signal;
	r->sealed = sealed;
	return r->mem;
}

void os_free(struct os_native *os)
{
	unsigned int i;

	for (i = 0; i < os->nregions; i++)
		free(os->regions[i].mem);
	os->nregions = 0;
}

static struct os_region *lookup(struct os_native *os, u64 va)
{
	unsigned int i;

	for (i = 0; i < os->nregions; i++) {
		struct os_region *r = &os->regions[i];

		if (va >= r->va && va - r->va < r->size)
			return r;
	}
	return NULL;
}

void *os_ptr(struct os_native *os, u64 va)
{
	struct os_region *r = lookup(os, va);

	return r ? r->mem + (va - r->va) : NULL;
}

static u32 map(struct os_native *os, u64 va, u64 len, u32 access, void **ptr,
	       u64 *avail, void **cookie, u64 charge)
{
	struct os_region *r = lookup(os, va);
	u64 left;

	if (!r || !len)
		return DRM_VACCEL_FAULT_UNMAPPED;
	if ((access & VACCEL_CORE_ACCESS_SEALED) && !r->sealed)
		return DRM_VACCEL_FAULT_NOT_SEALED;
	access &= ~VACCEL_CORE_ACCESS_SEALED;
	if ((r->access & access) != access)
		return DRM_VACCEL_FAULT_ACCESS;
	left = r->size - (va - r->va);
	if (!avail && len > left)
		return DRM_VACCEL_FAULT_UNMAPPED;
	*ptr = r->mem + (va - r->va);
	if (avail)
		*avail = len < left ? len : left;
	os->charged[r - os->regions] += charge != ~0ull ? charge : avail ? *avail : len;
	*cookie = r;
	os->maps++;
	return DRM_VACCEL_FAULT_NONE;
}

u32 vaccel_os_map(void *o, u64 va, u64 len, u32 access, void **ptr,
		  u64 *avail, void **cookie)
{
	return map(o, va, len, access, ptr, avail, cookie, ~0ull);
}

u32 vaccel_os_map_part(void *o, u64 va, u64 len, u64 touched, u32 access,
		       void **ptr, void **cookie)
{
	return map(o, va, len, access, ptr, NULL, cookie, touched);
}

void vaccel_os_unmap(void *o, void *cookie)
{
	struct os_native *os = o;

	(void)cookie;
	os->maps--;
}

static u32 signal_word(struct os_native *os, u64 va, u64 **word)
{
	struct os_region *r = lookup(os, va);

	if (!r)
		return DRM_VACCEL_FAULT_UNMAPPED;
	if (!r->signal)
		return DRM_VACCEL_FAULT_NOT_SIGNAL;
	if (va % 8)
		return DRM_VACCEL_FAULT_ALIGNMENT;
	*word = (u64 *)(r->mem + (va - r->va));
	return DRM_VACCEL_FAULT_NONE;
}

u32 vaccel_os_signal(void *o, u64 va, u32 op, u64 value, bool irq)
{
	struct os_native *os = o;
	u64 *w;
	u32 f = signal_word(os, va, &w);

	if (f)
		return f;
	signal_ref_apply((uint64_t *)w, op, value);	/* __u64 is unsigned long long */
	os->signals++;
	os->irqs += irq;
	return DRM_VACCEL_FAULT_NONE;
}

u32 vaccel_os_signal_read(void *o, u64 va, u64 *value)
{
	u64 *w;
	u32 f = signal_word(o, va, &w);

	if (!f)
		*value = __atomic_load_n(w, __ATOMIC_ACQUIRE);
	return f;
}

u32 vaccel_os_exec_check(void *o, u64 va, u64 len)
{
	struct os_region *r = lookup(o, va);

	if (!r || r->size - (va - r->va) < len)
		return DRM_VACCEL_FAULT_UNMAPPED;
	if (!(r->access & DRM_VACCEL_VM_READ))
		return DRM_VACCEL_FAULT_ACCESS;
	return r->sealed ? DRM_VACCEL_FAULT_NONE : DRM_VACCEL_FAULT_NOT_SEALED;
}

u64 vaccel_os_now_ns(void *o)
{
	struct os_native *os = o;
	u64 now = os->now;

	os->now += os->tick;
	return now;
}

u64 vaccel_os_charge(void *o, u64 *first)
{
	struct os_native *os = o;
	u64 ns = os->charge;

	*first = ns ? os->charge_first : 0;
	os->charge = 0;
	os->charge_first = 0;
	return ns;
}

void vaccel_os_packet(void *o, const struct drm_vaccel_packet *pkt, u64 index,
		      unsigned int depth, bool done)
{
	struct os_native *os = o;

	(void)pkt;
	if (!done) {
		os->started++;
		if (depth != os->open)
			os->order_errors++;
		os->open++;
		return;
	}
	os->ended++;
	if (!os->open || depth != os->open - 1)
		os->order_errors++;
	else
		os->open--;
	if (!depth && index != os->retired++)
		os->order_errors++;
}

void os_track_reset(struct os_native *os)
{
	os->open = 0;
	os->retired = 0;
}

void vaccel_os_fpu_begin(void *o)
{
	struct os_native *os = o;

	os->fpu_errors += os->in_fpu;
	os->in_fpu = true;
	os->fpu_sections++;
}

void vaccel_os_fpu_end(void *o)
{
	struct os_native *os = o;

	os->fpu_errors += !os->in_fpu;
	os->in_fpu = false;
}
