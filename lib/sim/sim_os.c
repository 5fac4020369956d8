// SPDX-License-Identifier: MIT
/*
 * The packet core's OS layer in the in-process device, the counterpart of
 * kmod/vaccel_core_os.c: device memory through the file's VA translation,
 * signals in signal objects, time, the link model and FPU sections. The
 * core's "os" pointer is the struct sim_queue. Nothing here sleeps except
 * the injected split stall, which only a helper outside any turn takes.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <time.h>

#include "sim_internal.h"

static u32 sim_os_fault(int err)
{
	return err == -EACCES ? DRM_VACCEL_FAULT_ACCESS : DRM_VACCEL_FAULT_UNMAPPED;
}

/*
 * The link model: an access to memory of another device (an import of
 * its dma-buf; also another process's memory) costs this device's link
 * latency plus the bytes at its link bandwidth (0: unthrottled), charged
 * to the queue, which the core then makes busy for it. The transfer
 * starts with the step's first charged access: the time the step itself
 * took (the copy that stands for the transfer, a reduction streaming
 * into the link) is part of the transfer's time, not added to it.
 */
static void sim_os_link(struct sim_queue *q, const struct sim_map *map, uint64_t bytes)
{
	struct sim_dev *dev = q->file->dev;
	uint64_t ns, zero = 0;

	if ((!dev->cfg.link_bw_mbps && !dev->cfg.link_latency_ns) || !map->remote)
		return;
	ns = dev->cfg.link_latency_ns;
	if (dev->cfg.link_bw_mbps)	/* MB/s is bytes per us */
		ns += bytes * 1000 / dev->cfg.link_bw_mbps;
	atomic_compare_exchange_strong(&q->link_from, &zero, sim_now());
	atomic_fetch_add(&q->charge_ns, ns);
	atomic_fetch_add_explicit(&dev->stats.link_bytes, bytes, memory_order_relaxed);
	atomic_fetch_add_explicit(&dev->stats.link_ns, ns, memory_order_relaxed);
}

/*
 * The link time charged by the step just taken and the time of its first
 * charged access; the core's charge() subtracts what has passed of it.
 * Engine thread.
 */
u64 vaccel_os_charge(void *os, u64 *first)
{
	struct sim_queue *q = os;

	/* the common case is nothing charged: no atomic RMW for it */
	if (!atomic_load_explicit(&q->charge_ns, memory_order_relaxed)) {
		*first = 0;
		return 0;
	}
	*first = atomic_exchange(&q->link_from, 0);
	return atomic_exchange(&q->charge_ns, 0);
}

/*
 * Translate for @q: in a turn of its engine (under the engine lock: on
 * the engine's own thread, or an inline turn of a KICK or of another
 * engine's thread) through the queue's TLB, elsewhere (a helper running
 * a split range) with a reference of its own. *@cookie is the reference
 * to drop with vaccel_os_unmap() (NULL for a TLB hit).
 */
static void *sim_os_translate(struct sim_queue *q, u64 va, u64 len, u32 access, u64 *avail,
			      struct sim_map **mapp, void **cookie, int *err)
{
	uint64_t av = 0;
	bool held = true;
	void *p;

	if (sim_turn_engine == q->engine)
		p = sim_vm_translate_tlb(&q->file->vm, &q->tlb, va, len, access, mapp,
					 avail ? &av : NULL, &held, err);
	else
		p = sim_vm_translate(&q->file->vm, va, len, access, mapp, avail ? &av : NULL, err);
	if (p) {
		*cookie = held ? *mapp : NULL;
		if (avail)
			*avail = av;
	}
	return p;
}

/*
 * Knob split_stall ("ENGINE NS"): the next range that engine runs outside
 * a turn of its own stops for NS once its destination is mapped, as a
 * helper preempted in the middle of its range would.
 */
static void sim_os_split_stall(struct sim_queue *q, uint64_t ns)
{
	struct sim_dev *dev = q->file->dev;
	uint32_t idx = atomic_load(&dev->knobs.split_stall_engine);
	struct sim_engine *e;
	uint64_t until, expected = ns;

	if (idx >= dev->cfg.engines)
		return;
	e = &dev->engines[idx];
	if (sim_cur_engine != e || !atomic_load(&e->helping) ||
	    !atomic_compare_exchange_strong(&dev->knobs.split_stall_ns, &expected, 0))
		return;
	until = sim_now() + ns;
	while (sim_now() < until && !atomic_load(&e->stop))
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
}

/* vaccel_os_map() charging the link for @charge bytes, UINT64_MAX: all. */
static u32 sim_os_map_charged(struct sim_queue *q, u64 va, u64 len, u32 access, void **ptr,
			      u64 *avail, void **cookie, uint64_t charge)
{
	struct sim_map *map;
	uint64_t stall;
	int err;
	void *p;

	if (sim_inject(&q->file->dev->knobs.fault_access))
		return DRM_VACCEL_FAULT_INJECTED;
	p = sim_os_translate(q, va, len, access & ~VACCEL_CORE_ACCESS_SEALED, avail, &map, cookie,
			     &err);
	if (!p)
		return sim_os_fault(err);
	if ((access & VACCEL_CORE_ACCESS_SEALED) && !sim_bo_sealed(map->bo)) {
		vaccel_os_unmap(q, *cookie);
		return DRM_VACCEL_FAULT_NOT_SEALED;
	}
	sim_os_link(q, map, charge != UINT64_MAX ? charge : avail ? *avail : len);
	stall = atomic_load_explicit(&q->file->dev->knobs.split_stall_ns, memory_order_relaxed);
	if (__builtin_expect(stall != 0, 0) && (access & DRM_VACCEL_VM_WRITE))
		sim_os_split_stall(q, stall);
	*ptr = p;
	return DRM_VACCEL_FAULT_NONE;
}

u32 vaccel_os_map(void *os, u64 va, u64 len, u32 access, void **ptr, u64 *avail, void **cookie)
{
	return sim_os_map_charged(os, va, len, access, ptr, avail, cookie, UINT64_MAX);
}

u32 vaccel_os_map_part(void *os, u64 va, u64 len, u64 touched, u32 access, void **ptr,
		       void **cookie)
{
	return sim_os_map_charged(os, va, len, access, ptr, NULL, cookie, touched);
}

void vaccel_os_unmap(void *os, void *cookie)
{
	(void)os;
	if (cookie)
		sim_map_put(cookie);
}

/*
 * The signal word at @va: its address in the owner's engine mapping (the
 * key of its waiters, the same through every import), with a mapping
 * reference to drop with vaccel_os_unmap() in *@cookie.
 */
static u32 sim_os_signal_word(struct sim_queue *q, u64 va, u32 access, uint64_t **word,
			      bool *shared, void **cookie)
{
	struct sim_map *map;
	int err;
	void *p;

	if (va % 8)
		return DRM_VACCEL_FAULT_ALIGNMENT;
	/* 8-byte aligned: one page of one mapping */
	p = sim_os_translate(q, va, 8, access, NULL, &map, cookie, &err);
	if (!p)
		return sim_os_fault(err);
	if (!(sim_bo_owner(map->bo)->flags & DRM_VACCEL_BO_SIGNAL)) {
		vaccel_os_unmap(q, *cookie);
		return DRM_VACCEL_FAULT_NOT_SIGNAL;
	}
	sim_os_link(q, map, 8);
	*word = p;
	*shared = sim_bo_shared(map->bo);
	return DRM_VACCEL_FAULT_NONE;
}

u32 vaccel_os_signal(void *os, u64 va, u32 op, u64 value, bool irq)
{
	struct sim_queue *q = os;
	uint64_t *w;
	bool shared;
	void *cookie;
	u32 f;

	f = sim_os_signal_word(q, va, DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE, &w, &shared,
			       &cookie);
	if (f)
		return f;
	sim_signal_apply(w, op, value);
	sim_signal_wake(q->file->dev, w, irq, shared);
	vaccel_os_unmap(q, cookie);
	return DRM_VACCEL_FAULT_NONE;
}

u32 vaccel_os_signal_read(void *os, u64 va, u64 *value)
{
	struct sim_queue *q = os;
	uint64_t *w;
	bool shared;
	void *cookie;
	u32 f;

	f = sim_os_signal_word(q, va, DRM_VACCEL_VM_READ, &w, &shared, &cookie);
	if (f)
		return f;
	*value = __atomic_load_n(w, __ATOMIC_ACQUIRE);
	/*
	 * The key a blocked WAIT's waiter is armed on (sim_engine.c): only
	 * used as a key once the mapping is gone. Only the queue's engine
	 * runs WAIT steps, in its turns.
	 */
	q->wait_word = w;
	q->wait_shared = shared;
	q->wait_val = (uint32_t)*value;
	vaccel_os_unmap(q, cookie);
	return DRM_VACCEL_FAULT_NONE;
}

u32 vaccel_os_exec_check(void *os, u64 va, u64 len)
{
	struct sim_queue *q = os;
	struct sim_map *map;
	void *cookie;
	bool sealed;
	int err;

	if (!sim_os_translate(q, va, len, DRM_VACCEL_VM_READ, NULL, &map, &cookie, &err))
		return sim_os_fault(err);
	sealed = sim_bo_sealed(map->bo);
	vaccel_os_unmap(q, cookie);
	return sealed ? DRM_VACCEL_FAULT_NONE : DRM_VACCEL_FAULT_NOT_SEALED;
}

void vaccel_os_packet(void *os, const struct drm_vaccel_packet *pkt, u64 index,
		      unsigned int depth, bool done)
{
	/* the module's tracepoints; nothing to trace here */
	(void)os;
	(void)pkt;
	(void)index;
	(void)depth;
	(void)done;
}

u64 vaccel_os_now_ns(void *os)
{
	(void)os;
	return sim_now();
}

/* Start of the calling thread's FPU section. */
static _Thread_local uint64_t sim_fpu_start;

void vaccel_os_fpu_begin(void *os)
{
	(void)os;
	sim_fpu_start = sim_now();
}

/* Count the section in the device's statistics ("stats"). */
void vaccel_os_fpu_end(void *os)
{
	struct sim_dev *dev = ((struct sim_queue *)os)->file->dev;
	uint64_t ns = sim_now() - sim_fpu_start, max;

	atomic_fetch_add_explicit(&dev->stats.fpu_sections, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&dev->stats.fpu_ns, ns, memory_order_relaxed);
	if (ns > 100000)
		atomic_fetch_add_explicit(&dev->stats.fpu_over_100us, 1, memory_order_relaxed);
	if (ns > 1000000)
		atomic_fetch_add_explicit(&dev->stats.fpu_over_1ms, 1, memory_order_relaxed);
	max = atomic_load_explicit(&dev->stats.fpu_max_ns, memory_order_relaxed);
	while (ns > max && !atomic_compare_exchange_weak(&dev->stats.fpu_max_ns, &max, ns))
		;
}
