/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef __VACCEL_VM_H__
#define __VACCEL_VM_H__

#include <linux/iosys-map.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <drm/drm_mm.h>

#include "vaccel_gem.h"

struct drm_device;
struct drm_file;
struct seq_file;
struct vaccel_file;

/**
 * struct vaccel_vm - the device VA space of one context
 * @lock: protects @mm and @num_maps; held only for lookups and for
 *	inserting or removing nodes, never while sleeping
 * @mm: the mapped ranges, each the @node of a &struct vaccel_vm_map
 * @num_maps: number of mappings, at most VACCEL_MAX_MAPPINGS
 * @gen: bumped under @lock whenever a mapping is removed, so that a
 *	&struct vaccel_vm_tlb can tell its entries may be stale
 */
struct vaccel_vm {
	spinlock_t lock;	/* see above */
	struct drm_mm mm;
	unsigned int num_maps;
	u64 gen;
};

#define VACCEL_VM_TLB_SIZE	4

/**
 * struct vaccel_vm_tlb - mappings one thread used last, with references
 * @map: the mappings, each referenced, or NULL
 * @gen: the VM's @gen when each was looked up
 * @next: the entry to replace next
 *
 * Used by one thread (a queue's engine, under its lock): a hit costs no
 * lock and no atomic operation. An entry is used only while the VM's
 * generation is the one it was looked up in, so after an unbind every
 * entry is looked up again; VM_UNBIND also drops the stale entries of the
 * context's queues (vaccel_queues_tlb_flush()), so an unbound range is
 * released at once unless a step in progress uses it.
 */
struct vaccel_vm_tlb {
	struct vaccel_vm_map *map[VACCEL_VM_TLB_SIZE];
	u64 gen[VACCEL_VM_TLB_SIZE];
	unsigned int next;
};

/**
 * struct vaccel_vm_map - one VM_BIND mapping
 * @node: the VA range; in the VM's @mm while bound
 * @ref: one reference for being bound, one per vaccel_vm_translate() user
 * @bo: the mapped object; a GEM reference is held
 * @bo_offset: offset of @node.start in @bo
 * @access: DRM_VACCEL_VM_READ and/or DRM_VACCEL_VM_WRITE
 * @vaddr: kernel address of @node.start: contiguous for the whole range
 * @pages: the bound pages of @bo's owner (a local vaccel object), each
 *	referenced and so kept in memory; @vaddr is their vmap(). NULL for
 *	an import of another driver's dma-buf, which is mapped through @vmap
 * @npages: number of entries in @pages
 * @vmap: kernel mapping of a whole foreign import (its exporter pins it)
 * @charge: RLIMIT_MEMLOCK charge of @pages to the binder; nothing when
 *	the owner is persistent or signal (charged at its creation) or for a
 *	foreign import
 * @unbound: entry on a private list while being torn down
 *
 * Immutable once bound. Unbinding removes @node from the VM and drops the
 * bound reference; pages, charge and object go when the last user is
 * done.
 */
struct vaccel_vm_map {
	struct drm_mm_node node;
	struct kref ref;
	struct vaccel_bo *bo;
	u64 bo_offset;
	u32 access;
	void *vaddr;
	struct page **pages;
	unsigned long npages;
	struct iosys_map vmap;
	struct vaccel_pin_charge charge;
	struct list_head unbound;
};

void vaccel_vm_init(struct vaccel_vm *vm);
void vaccel_vm_fini(struct vaccel_vm *vm);
void *vaccel_vm_translate(struct vaccel_vm *vm, u64 va, u64 len, u32 access,
			  struct vaccel_vm_map **mapp, u64 *avail);
void vaccel_vm_map_put(struct vaccel_vm_map *map);
void *vaccel_vm_translate_tlb(struct vaccel_vm *vm, struct vaccel_vm_tlb *tlb, u64 va,
			      u64 len, u32 access, struct vaccel_vm_map **mapp,
			      u64 *avail, bool *held);
void vaccel_vm_tlb_flush(struct vaccel_vm *vm, struct vaccel_vm_tlb *tlb, bool all);
void vaccel_queues_tlb_flush(struct vaccel_file *vfile);
void vaccel_vm_debugfs_show(struct vaccel_vm *vm, struct seq_file *m, u32 ctx);

int vaccel_ioctl_vm_bind(struct drm_device *drm, void *data,
			 struct drm_file *file);
int vaccel_ioctl_vm_unbind(struct drm_device *drm, void *data,
			   struct drm_file *file);

#endif /* __VACCEL_VM_H__ */
