// SPDX-License-Identifier: GPL-2.0-only
/*
 * The packet core's OS layer in the kernel: device memory through the
 * context's VA translation, signals in signal buffers, time, modelled
 * link time and FPU sections. The core's "os" pointer is the &struct
 * vaccel_queue. Nothing here sleeps: the core runs under the engine lock.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/fpu.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/math64.h>
#include <linux/percpu.h>

#include "vaccel_drv.h"
#include "vaccel_gem.h"
#include "vaccel_queue.h"
#include "vaccel_signal.h"
#include "vaccel_trace.h"
#include "vaccel_vm.h"

static u32 vaccel_os_fault(void *ptr)
{
	return PTR_ERR(ptr) == -EACCES ? DRM_VACCEL_FAULT_ACCESS :
					 DRM_VACCEL_FAULT_UNMAPPED;
}

/*
 * The link model: an access to memory of another vaccel device (an import
 * of its dma-buf) costs the accessing device's link latency plus the
 * bytes at its link bandwidth, 0 meaning unthrottled. The time is charged
 * to the queue, which the core then makes busy for it: the engine runs
 * other queues meanwhile. The transfer starts with the step's first
 * charged access: the time the step itself took (the copy that stands for
 * the transfer, a reduction streaming into the link) is part of it.
 */
static void vaccel_os_link(struct vaccel_queue *q, struct vaccel_vm_map *map,
			   u64 bytes)
{
	struct vaccel_device *vdev = q->vfile->vdev;
	struct vaccel_bo *owner;
	u64 ns;

	if (!vdev->cfg.link_bw_mbps && !vdev->cfg.link_latency_ns)
		return;
	owner = vaccel_bo_owner(map->bo);
	if (!owner || owner->base.base.dev == &vdev->drm)
		return;
	ns = vdev->cfg.link_latency_ns;
	if (vdev->cfg.link_bw_mbps)	/* MB/s is bytes per us */
		ns += div64_u64(bytes * NSEC_PER_USEC, vdev->cfg.link_bw_mbps);
	atomic64_cmpxchg(&q->link_from, 0, ktime_get_ns());
	atomic64_add(ns, &q->charge_ns);
	atomic64_add(bytes, &vdev->stats.link_bytes);
	atomic64_add(ns, &vdev->stats.link_ns);
}

/*
 * The link time charged by the step just taken and the time of its first
 * charged access; the core's charge() subtracts what has passed of it.
 * The engine's thread.
 */
u64 vaccel_os_charge(void *os, u64 *first)
{
	struct vaccel_queue *q = os;

	/* the common case is nothing charged: no atomic RMW for it */
	if (!atomic64_read(&q->charge_ns)) {
		*first = 0;
		return 0;
	}
	*first = atomic64_xchg(&q->link_from, 0);
	return atomic64_xchg(&q->charge_ns, 0);
}

/*
 * Translate for @q. On its engine's own thread through the queue's cache
 * (no lock, no atomic on a hit): that thread runs the queue only in its
 * turns, under the engine lock that VM_UNBIND's cache flush takes (it
 * never helps its own split job: vaccel_split.c). Other threads (engines
 * running ranges of a split packet) take the VM's lock. *@mapp is the
 * mapping; *@cookie is the reference the caller must drop with
 * vaccel_os_unmap() (NULL for a cache hit).
 */
static void *vaccel_os_translate(struct vaccel_queue *q, u64 va, u64 len, u32 access,
				 u64 *avail, struct vaccel_vm_map **mapp, void **cookie)
{
	bool held = true;
	void *p;

	if (current == q->engine->thread) {
		lockdep_assert_held(&q->engine->lock);
		p = vaccel_vm_translate_tlb(&q->vfile->vm, &q->tlb, va, len, access,
					    mapp, avail, &held);
	} else {
		p = vaccel_vm_translate(&q->vfile->vm, va, len, access, mapp, avail);
	}
	if (!IS_ERR(p))
		*cookie = held ? *mapp : NULL;
	return p;
}

/*
 * debugfs split_stall ("ENGINE NS"): the next range that engine runs
 * outside a turn of its own (in vaccel_split_help()) stops for NS once
 * its destination is mapped, as a helper preempted in the middle of its
 * range would. Never in a turn: nothing sleeps under an engine lock.
 */
static void vaccel_os_split_stall(struct vaccel_queue *q, u64 ns)
{
	struct vaccel_device *vdev = q->vfile->vdev;
	struct vaccel_engine *e;
	u64 until;

	/* the engine with the armed stall, read after its NS */
	smp_rmb();
	e = &vdev->engines[READ_ONCE(vdev->knobs.split_stall_engine)];
	if (e->thread != current || !READ_ONCE(e->helping) ||
	    cmpxchg(&vdev->knobs.split_stall_ns, ns, 0) != ns)
		return;
	until = ktime_get_ns() + ns;
	while (ktime_get_ns() < until && !kthread_should_stop()) {
		ktime_t t = ns_to_ktime(until);

		set_current_state(TASK_INTERRUPTIBLE);
		schedule_hrtimeout(&t, HRTIMER_MODE_ABS);
	}
}

/* vaccel_os_map() charging the link for @charge bytes, U64_MAX: all. */
static u32 vaccel_os_map_charged(struct vaccel_queue *q, u64 va, u64 len, u32 access,
				 void **ptr, u64 *avail, void **cookie, u64 charge)
{
	struct vaccel_vm_map *map;
	u64 stall;
	void *p;

	if (vaccel_inject(&q->vfile->vdev->knobs.fault_access))
		return DRM_VACCEL_FAULT_INJECTED;
	p = vaccel_os_translate(q, va, len, access & ~VACCEL_CORE_ACCESS_SEALED, avail,
				&map, cookie);
	if (IS_ERR(p))
		return vaccel_os_fault(p);
	if (access & VACCEL_CORE_ACCESS_SEALED) {
		struct vaccel_bo *owner = vaccel_bo_owner(map->bo);

		if (!owner || !READ_ONCE(owner->sealed)) {
			vaccel_os_unmap(q, *cookie);
			return DRM_VACCEL_FAULT_NOT_SEALED;
		}
	}
	vaccel_os_link(q, map, charge != U64_MAX ? charge : avail ? *avail : len);
	stall = READ_ONCE(q->vfile->vdev->knobs.split_stall_ns);
	if (unlikely(stall) && (access & DRM_VACCEL_VM_WRITE))
		vaccel_os_split_stall(q, stall);
	*ptr = p;
	return DRM_VACCEL_FAULT_NONE;
}

u32 vaccel_os_map(void *os, u64 va, u64 len, u32 access, void **ptr,
		  u64 *avail, void **cookie)
{
	return vaccel_os_map_charged(os, va, len, access, ptr, avail, cookie, U64_MAX);
}

u32 vaccel_os_map_part(void *os, u64 va, u64 len, u64 touched, u32 access,
		       void **ptr, void **cookie)
{
	return vaccel_os_map_charged(os, va, len, access, ptr, NULL, cookie, touched);
}

void vaccel_os_unmap(void *os, void *cookie)
{
	if (cookie)
		vaccel_vm_map_put(cookie);
}

/*
 * The signal word at @va and its object's waiter table, with a mapping
 * reference to drop with vaccel_os_unmap() in *cookie.
 */
static u32 vaccel_os_signal_word(struct vaccel_queue *q, u64 va, u32 access,
				 atomic64_t **word, struct vaccel_signal_table **table,
				 void **cookie)
{
	struct vaccel_vm_map *map;
	struct vaccel_bo *owner;
	void *p;

	if (va % 8)
		return DRM_VACCEL_FAULT_ALIGNMENT;
	/* 8-byte aligned: one page of one mapping */
	p = vaccel_os_translate(q, va, 8, access, NULL, &map, cookie);
	if (IS_ERR(p))
		return vaccel_os_fault(p);
	owner = vaccel_bo_owner(map->bo);
	if (!owner || !(owner->flags & DRM_VACCEL_BO_SIGNAL)) {
		vaccel_os_unmap(q, *cookie);
		return DRM_VACCEL_FAULT_NOT_SIGNAL;
	}
	vaccel_os_link(q, map, 8);
	/*
	 * The word through the owner's own kernel mapping, not the bind's:
	 * its address is the key of the word's waiters (vaccel_signal.c), the
	 * same for every bind, import and SIGNAL_WRITE. An import maps its
	 * exporter's object from offset 0, so the offsets agree.
	 */
	*word = owner->signal_map.vaddr + map->bo_offset + (va - map->node.start);
	*table = owner->signal_table;
	return DRM_VACCEL_FAULT_NONE;
}

u32 vaccel_os_signal(void *os, u64 va, u32 op, u64 value, bool irq)
{
	struct vaccel_queue *q = os;
	struct vaccel_signal_table *t;
	atomic64_t *w;
	void *cookie;
	u32 f;

	f = vaccel_os_signal_word(q, va, DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE,
				  &w, &t, &cookie);
	if (f)
		return f;
	vaccel_signal_apply(w, op, value);
	vaccel_signal_wake(q->vfile->vdev, t, w, irq);
	vaccel_os_unmap(os, cookie);
	return DRM_VACCEL_FAULT_NONE;
}

u32 vaccel_os_signal_read(void *os, u64 va, u64 *value)
{
	struct vaccel_queue *q = os;
	struct vaccel_signal_table *t;
	atomic64_t *w;
	void *cookie;
	u32 f;

	f = vaccel_os_signal_word(q, va, DRM_VACCEL_VM_READ, &w, &t, &cookie);
	if (f)
		return f;
	*value = atomic64_read_acquire(w);
	/*
	 * The key a blocked WAIT's waiter is armed on (vaccel_engine.c), and
	 * its table, held while the mapping still holds the object. Only
	 * the queue's engine runs WAIT steps, in its turns.
	 */
	q->wait_word = w;
	if (q->wait_table != t) {
		vaccel_signal_table_get(t);
		vaccel_signal_table_put(q->wait_table);
		q->wait_table = t;
	}
	vaccel_os_unmap(q, cookie);
	return DRM_VACCEL_FAULT_NONE;
}

u32 vaccel_os_exec_check(void *os, u64 va, u64 len)
{
	struct vaccel_queue *q = os;
	struct vaccel_vm_map *map;
	struct vaccel_bo *owner;
	void *p, *cookie;
	bool sealed;

	p = vaccel_os_translate(q, va, len, DRM_VACCEL_VM_READ, NULL, &map, &cookie);
	if (IS_ERR(p))
		return vaccel_os_fault(p);
	owner = vaccel_bo_owner(map->bo);
	sealed = owner && READ_ONCE(owner->sealed);
	vaccel_os_unmap(q, cookie);
	return sealed ? DRM_VACCEL_FAULT_NONE : DRM_VACCEL_FAULT_NOT_SEALED;
}

void vaccel_os_packet(void *os, const struct drm_vaccel_packet *pkt, u64 index,
		      unsigned int depth, bool done)
{
	struct vaccel_queue *q = os;
	u16 type = pkt->header & DRM_VACCEL_PKT_TYPE_MASK;

	if (done)
		trace_vaccel_packet_end(q->vfile->vdev->id, q->vfile->id, q->id,
					index, depth, type);
	else
		trace_vaccel_packet_start(q->vfile->vdev->id, q->vfile->id, q->id,
					  index, depth, type);
}

u64 vaccel_os_now_ns(void *os)
{
	return ktime_get_ns();
}

/* Start of the FPU section running on this CPU (no preemption inside). */
static DEFINE_PER_CPU(u64, vaccel_fpu_start);

void vaccel_os_fpu_begin(void *os)
{
	kernel_fpu_begin();
	this_cpu_write(vaccel_fpu_start, ktime_get_ns());
}

/* Count the section in the device's statistics (debugfs "stats"). */
void vaccel_os_fpu_end(void *os)
{
	struct vaccel_device *vdev = ((struct vaccel_queue *)os)->vfile->vdev;
	u64 ns = ktime_get_ns() - this_cpu_read(vaccel_fpu_start);
	s64 max;

	kernel_fpu_end();
	atomic64_inc(&vdev->stats.fpu_sections);
	atomic64_add(ns, &vdev->stats.fpu_ns);
	if (ns > 100 * NSEC_PER_USEC)
		atomic64_inc(&vdev->stats.fpu_over_100us);
	if (ns > NSEC_PER_MSEC)
		atomic64_inc(&vdev->stats.fpu_over_1ms);
	max = atomic64_read(&vdev->stats.fpu_max_ns);
	while (ns > max && !atomic64_try_cmpxchg(&vdev->stats.fpu_max_ns, &max, ns))
		;
}
