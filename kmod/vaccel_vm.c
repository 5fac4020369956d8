// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-context device VA space: VM_BIND, VM_UNBIND and the translation of
 * device addresses to kernel addresses, which is the only way the device
 * model touches memory.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/overflow.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include <drm/vaccel_accel.h>

#include "vaccel_drv.h"
#include "vaccel_gem.h"
#include "vaccel_vm.h"

#define VACCEL_VM_ACCESS	(DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE)

atomic_t vaccel_live_maps = ATOMIC_INIT(0);

/**
 * vaccel_vm_init() - set up an empty VA space covering the VA window
 * @vm: the VM to initialise
 */
void vaccel_vm_init(struct vaccel_vm *vm)
{
	spin_lock_init(&vm->lock);
	drm_mm_init(&vm->mm, VACCEL_VA_START, VACCEL_VA_END - VACCEL_VA_START);
	vm->num_maps = 0;
	vm->gen = 0;
}

/* Undo vaccel_vm_map_pin(); @dirty: the device may have written the pages. */
static void vaccel_vm_map_unpin(struct vaccel_vm_map *map, bool dirty)
{
	struct drm_gem_object *obj = &map->bo->base.base;

	if (map->pages) {
		vunmap(map->vaddr);
		vaccel_bo_unpin_pages(map->pages, map->npages, dirty);
		vaccel_pin_uncharge(&map->charge);
	} else {
		dma_resv_lock(obj->resv, NULL);
		drm_gem_shmem_object_vunmap(obj, &map->vmap);
		dma_resv_unlock(obj->resv);
	}
}

static void vaccel_vm_map_release(struct kref *ref)
{
	struct vaccel_vm_map *map = container_of(ref, struct vaccel_vm_map, ref);
	struct drm_gem_object *obj = &map->bo->base.base;

	vaccel_vm_map_unpin(map, map->access & DRM_VACCEL_VM_WRITE);
	if (map->access & DRM_VACCEL_VM_WRITE)
		vaccel_bo_put_write(map->bo);
	drm_gem_object_put(obj);
	kfree(map);
	atomic_dec(&vaccel_live_maps);
}

/**
 * vaccel_vm_map_put() - drop a reference from vaccel_vm_translate()
 * @map: the mapping; may sleep when it is the last reference
 */
void vaccel_vm_map_put(struct vaccel_vm_map *map)
{
	kref_put(&map->ref, vaccel_vm_map_release);
}

/*
 * The mapping containing @va, or NULL. Called with vm->lock held.
 *
 * @va is untrusted: outside the window drm_mm's range iterator can yield
 * its head node (which sits at the end of the range), so only an
 * allocated node that really contains @va is returned.
 */
static struct vaccel_vm_map *vaccel_vm_lookup(struct vaccel_vm *vm, u64 va)
{
	struct drm_mm_node *node;

	lockdep_assert_held(&vm->lock);
	if (va < VACCEL_VA_START || va >= VACCEL_VA_END)
		return NULL;
	drm_mm_for_each_node_in_range(node, &vm->mm, va, va + 1) {
		if (node == &vm->mm.head_node || !drm_mm_node_allocated(node) ||
		    va - node->start >= node->size)
			return NULL;
		return container_of(node, struct vaccel_vm_map, node);
	}
	return NULL;
}

/**
 * vaccel_vm_translate() - device address range to kernel address
 * @vm: the context's VM
 * @va: first device address
 * @len: number of bytes, at least 1
 * @access: DRM_VACCEL_VM_READ and/or DRM_VACCEL_VM_WRITE, all required
 * @mapp: set to the mapping, whose reference the caller must drop with
 *	vaccel_vm_map_put() when done with the memory
 * @avail: NULL if the whole range must lie in one mapping; otherwise set to
 *	the number of bytes (1 to @len) that do, from @va on
 *
 * While the reference is held the pages stay mapped even if the range is
 * unbound meanwhile.
 *
 * Return: the kernel address of @va; ERR_PTR(-EFAULT) if @va (or, without
 * @avail, some byte of the range) is not mapped, ERR_PTR(-EACCES) if the
 * mapping lacks @access.
 */
void *vaccel_vm_translate(struct vaccel_vm *vm, u64 va, u64 len, u32 access,
			  struct vaccel_vm_map **mapp, u64 *avail)
{
	struct vaccel_vm_map *map;
	u64 in_map;

	if (!len)
		return ERR_PTR(-EFAULT);

	spin_lock(&vm->lock);
	map = vaccel_vm_lookup(vm, va);
	if (!map) {
		spin_unlock(&vm->lock);
		return ERR_PTR(-EFAULT);
	}
	in_map = map->node.start + map->node.size - va;
	if (avail) {
		*avail = min(len, in_map);
	} else if (len > in_map) {
		spin_unlock(&vm->lock);
		return ERR_PTR(-EFAULT);
	}
	if ((map->access & access) != access) {
		spin_unlock(&vm->lock);
		return ERR_PTR(-EACCES);
	}
	kref_get(&map->ref);
	spin_unlock(&vm->lock);

	*mapp = map;
	return map->vaddr + (va - map->node.start);
}

/**
 * vaccel_vm_translate_tlb() - vaccel_vm_translate() through a cache
 * @vm: the context's VM
 * @tlb: the calling thread's cache of @vm's mappings
 * @va: first device address
 * @len: number of bytes, at least 1
 * @access: DRM_VACCEL_VM_READ and/or DRM_VACCEL_VM_WRITE, all required
 * @mapp: set to the mapping
 * @avail: as for vaccel_vm_translate()
 * @held: set to true if the caller holds a reference on *@mapp to drop
 *	with vaccel_vm_map_put(), false if it came from @tlb (which holds it)
 *
 * A hit takes no lock and no reference. A miss translates, keeps the
 * mapping in @tlb (a reference of its own) and hands the caller the
 * translation's reference as vaccel_vm_translate() does.
 *
 * Return: as vaccel_vm_translate().
 */
void *vaccel_vm_translate_tlb(struct vaccel_vm *vm, struct vaccel_vm_tlb *tlb, u64 va,
			      u64 len, u32 access, struct vaccel_vm_map **mapp,
			      u64 *avail, bool *held)
{
	u64 gen = READ_ONCE(vm->gen), in_map;
	struct vaccel_vm_map *map, *old;
	unsigned int i;
	void *p;

	for (i = 0; i < VACCEL_VM_TLB_SIZE; i++) {
		map = tlb->map[i];
		if (!map || tlb->gen[i] != gen || va < map->node.start ||
		    va - map->node.start >= map->node.size)
			continue;
		if (!len)
			return ERR_PTR(-EFAULT);
		in_map = map->node.start + map->node.size - va;
		if (avail)
			*avail = min(len, in_map);
		else if (len > in_map)
			break;	/* past this mapping: the slow path's answer */
		if ((map->access & access) != access)
			return ERR_PTR(-EACCES);
		*mapp = map;
		*held = false;
		return map->vaddr + (va - map->node.start);
	}
	/* gen was read before the lookup: a removal meanwhile stales the entry */
	p = vaccel_vm_translate(vm, va, len, access, mapp, avail);
	if (IS_ERR(p))
		return p;
	*held = true;
	i = tlb->next++ % VACCEL_VM_TLB_SIZE;
	old = tlb->map[i];
	kref_get(&(*mapp)->ref);
	tlb->map[i] = *mapp;
	tlb->gen[i] = gen;
	if (old)
		vaccel_vm_map_put(old);
	return p;
}

/**
 * vaccel_vm_tlb_flush() - drop the entries of a cache that may be stale
 * @vm: the VM the cache is of
 * @tlb: the cache, with whatever lock its owner holds while using it
 * @all: drop every entry, not just the stale ones
 *
 * May sleep when the cache held a mapping's last reference.
 */
void vaccel_vm_tlb_flush(struct vaccel_vm *vm, struct vaccel_vm_tlb *tlb, bool all)
{
	u64 gen = READ_ONCE(vm->gen);
	unsigned int i;

	for (i = 0; i < VACCEL_VM_TLB_SIZE; i++) {
		if (!tlb->map[i] || (!all && tlb->gen[i] == gen))
			continue;
		vaccel_vm_map_put(tlb->map[i]);
		tlb->map[i] = NULL;
	}
}

/*
 * Make the bound range reachable from the kernel. For a vaccel object
 * (local, or an import of another vaccel device's object) only the bound
 * pages of the owner are pinned and vmapped, charged to the binder unless
 * the owner is persistent or signal; another driver's dma-buf is mapped
 * whole through its exporter, which pinned it already.
 */
static int vaccel_vm_map_pin(struct vaccel_vm_map *map, u64 size)
{
	struct vaccel_bo *owner = vaccel_bo_owner(map->bo);
	struct drm_gem_object *obj = &map->bo->base.base;
	int ret;

	if (!owner) {
		dma_resv_lock(obj->resv, NULL);
		ret = drm_gem_shmem_object_vmap(obj, &map->vmap);
		dma_resv_unlock(obj->resv);
		if (ret)
			return ret;
		map->vaddr = map->vmap.vaddr + map->bo_offset;
		return 0;
	}

	if (!owner->flags) {
		ret = vaccel_pin_charge(&map->charge, size);
		if (ret)
			return ret;
	}
	map->npages = size >> PAGE_SHIFT;
	map->pages = vaccel_bo_pin_pages(owner, map->bo_offset >> PAGE_SHIFT,
					 map->npages);
	if (IS_ERR(map->pages)) {
		ret = PTR_ERR(map->pages);
		goto err_uncharge;
	}
	map->vaddr = vmap(map->pages, map->npages, VM_MAP, PAGE_KERNEL);
	if (!map->vaddr) {
		ret = -ENOMEM;
		goto err_unpin;
	}
	return 0;

err_unpin:
	vaccel_bo_unpin_pages(map->pages, map->npages, false);
err_uncharge:
	map->pages = NULL;
	vaccel_pin_uncharge(&map->charge);
	return ret;
}

int vaccel_ioctl_vm_bind(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct vaccel_file *vfile = file->driver_priv;
	struct drm_vaccel_vm_bind *args = data;
	struct vaccel_vm *vm = &vfile->vm;
	struct drm_gem_object *obj;
	struct vaccel_vm_map *map;
	u64 end, bo_end;
	int ret, idx;

	if (VACCEL_IOCTL_DBG(drm, !args->flags || (args->flags & ~VACCEL_VM_ACCESS)))
		return -EINVAL;
	if (VACCEL_IOCTL_DBG(drm, !args->size || !PAGE_ALIGNED(args->size) ||
			     !PAGE_ALIGNED(args->va) || !PAGE_ALIGNED(args->bo_offset)))
		return -EINVAL;
	if (VACCEL_IOCTL_DBG(drm, check_add_overflow(args->va, args->size, &end) ||
			     check_add_overflow(args->bo_offset, args->size, &bo_end)))
		return -EOVERFLOW;
	if (VACCEL_IOCTL_DBG(drm, args->va < VACCEL_VA_START || end > VACCEL_VA_END))
		return -ERANGE;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	if (vaccel_inject(&to_vaccel_device(drm)->knobs.fail_vm_bind)) {
		ret = -ENOMEM;
		goto err_exit;
	}
	obj = drm_gem_object_lookup(file, args->handle);
	if (VACCEL_IOCTL_DBG(drm, !obj)) {
		ret = -ENOENT;
		goto err_exit;
	}
	if (VACCEL_IOCTL_DBG(drm, bo_end > obj->size)) {
		ret = -EINVAL;
		goto err_put_obj;
	}

	map = kzalloc(sizeof(*map), GFP_KERNEL_ACCOUNT);
	if (!map) {
		ret = -ENOMEM;
		goto err_put_obj;
	}
	map->bo = to_vaccel_bo(obj);
	map->bo_offset = args->bo_offset;
	map->access = args->flags;
	map->node.start = args->va;
	map->node.size = args->size;
	kref_init(&map->ref);

	if (map->access & DRM_VACCEL_VM_WRITE) {
		ret = vaccel_bo_get_write(map->bo);
		if (VACCEL_IOCTL_DBG(drm, ret))
			goto err_free;
	}
	ret = vaccel_vm_map_pin(map, args->size);
	if (ret)
		goto err_put_write;

	spin_lock(&vm->lock);
	if (VACCEL_IOCTL_DBG(drm, vm->num_maps >= VACCEL_MAX_MAPPINGS)) {
		ret = -ENOSPC;
	} else {
		/* The range is inside the window: only an overlap fails. */
		ret = drm_mm_reserve_node(&vm->mm, &map->node);
		if (VACCEL_IOCTL_DBG(drm, ret))
			ret = -EBUSY;
		else
			vm->num_maps++;
	}
	spin_unlock(&vm->lock);
	if (ret)
		goto err_unpin;

	atomic_inc(&vaccel_live_maps);
	drm_dev_exit(idx);
	return 0;	/* the mapping keeps the object reference */

err_unpin:
	vaccel_vm_map_unpin(map, false);
err_put_write:
	if (map->access & DRM_VACCEL_VM_WRITE)
		vaccel_bo_put_write(map->bo);
err_free:
	kfree(map);
err_put_obj:
	drm_gem_object_put(obj);
err_exit:
	drm_dev_exit(idx);
	return ret;
}

int vaccel_ioctl_vm_unbind(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct vaccel_file *vfile = file->driver_priv;
	struct drm_vaccel_vm_unbind *args = data;
	struct vaccel_vm *vm = &vfile->vm;
	struct vaccel_vm_map *map;
	int idx;

	if (VACCEL_IOCTL_DBG(drm, args->flags || args->pad))
		return -EINVAL;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	spin_lock(&vm->lock);
	map = vaccel_vm_lookup(vm, args->va);
	if (VACCEL_IOCTL_DBG(drm, !map || map->node.start != args->va)) {
		spin_unlock(&vm->lock);
		drm_dev_exit(idx);
		return -ENOENT;
	}
	if (VACCEL_IOCTL_DBG(drm, map->node.size != args->size)) {
		spin_unlock(&vm->lock);
		drm_dev_exit(idx);
		return -EINVAL;
	}
	drm_mm_remove_node(&map->node);
	vm->num_maps--;
	WRITE_ONCE(vm->gen, vm->gen + 1);	/* caches look again */
	spin_unlock(&vm->lock);

	/* queues' cached references go, so the pages go now unless in use */
	vaccel_queues_tlb_flush(vfile);
	vaccel_vm_map_put(map);
	drm_dev_exit(idx);
	return 0;
}

/**
 * vaccel_vm_fini() - unbind everything and tear the VA space down
 * @vm: the VM of a context being closed
 */
void vaccel_vm_fini(struct vaccel_vm *vm)
{
	struct drm_mm_node *node, *next;
	struct vaccel_vm_map *map, *tmp;
	LIST_HEAD(unbound);

	spin_lock(&vm->lock);
	drm_mm_for_each_node_safe(node, next, &vm->mm) {
		map = container_of(node, struct vaccel_vm_map, node);
		drm_mm_remove_node(node);
		list_add_tail(&map->unbound, &unbound);
	}
	vm->num_maps = 0;
	WRITE_ONCE(vm->gen, vm->gen + 1);
	spin_unlock(&vm->lock);

	list_for_each_entry_safe(map, tmp, &unbound, unbound)
		vaccel_vm_map_put(map);
	drm_mm_takedown(&vm->mm);
}

/**
 * vaccel_vm_debugfs_show() - print the mappings of a VM, one per line
 * @vm: the VM
 * @m: the debugfs file
 * @ctx: context id printed at the start of each line
 */
void vaccel_vm_debugfs_show(struct vaccel_vm *vm, struct seq_file *m, u32 ctx)
{
	static const char * const access[] = { "-", "r", "w", "rw" };
	struct drm_mm_node *node;

	spin_lock(&vm->lock);
	drm_mm_for_each_node(node, &vm->mm) {
		struct vaccel_vm_map *map =
			container_of(node, struct vaccel_vm_map, node);

		seq_printf(m, "ctx %u va 0x%llx size 0x%llx bo_offset 0x%llx access %s\n",
			   ctx, node->start, node->size, map->bo_offset,
			   access[map->access & VACCEL_VM_ACCESS]);
	}
	spin_unlock(&vm->lock);
}
