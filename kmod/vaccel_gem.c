// SPDX-License-Identifier: GPL-2.0-only
/*
 * Buffer objects: GEM shmem objects with capacity accounting, pinning
 * charged to RLIMIT_MEMLOCK, sealing, and the BO_CREATE, BO_INFO and
 * BO_SEAL ioctls.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/dma-buf.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/drm_vma_manager.h>

#include <drm/vaccel_accel.h>

#include "vaccel_drv.h"
#include "vaccel_gem.h"

#define VACCEL_BO_FLAGS	(DRM_VACCEL_BO_PERSISTENT | DRM_VACCEL_BO_SIGNAL)

atomic_t vaccel_live_bos = ATOMIC_INIT(0);

/*
 * RLIMIT_MEMLOCK charges are undone from a workqueue: the last reference
 * to an object may be dropped by munmap() or process exit, with the very
 * mmap_lock held that account_locked_vm() takes.
 */
static struct workqueue_struct *vaccel_gem_wq;

/**
 * struct vaccel_memlock - pages charged to a process's RLIMIT_MEMLOCK
 * @work: undoes the charge
 * @mm: the charged address space (mmgrab()ed, so it can be uncharged even
 *	after the process is gone; its counter then went with it)
 * @pages: number of pages charged
 */
struct vaccel_memlock {
	struct work_struct work;
	struct mm_struct *mm;
	unsigned long pages;
};

static void vaccel_memlock_uncharge_work(struct work_struct *work)
{
	struct vaccel_memlock *ml = container_of(work, struct vaccel_memlock, work);

	if (mmget_not_zero(ml->mm)) {
		account_locked_vm(ml->mm, ml->pages, false);
		mmput(ml->mm);
	}
	mmdrop(ml->mm);
	kfree(ml);
}

static int vaccel_memlock_charge(struct vaccel_bo *bo)
{
	struct vaccel_memlock *ml;
	int ret;

	if (!current->mm)
		return -EINVAL;
	ml = kzalloc(sizeof(*ml), GFP_KERNEL);
	if (!ml)
		return -ENOMEM;
	ml->pages = bo->base.base.size >> PAGE_SHIFT;
	ret = account_locked_vm(current->mm, ml->pages, true);
	if (ret) {
		kfree(ml);
		return ret;
	}
	ml->mm = current->mm;
	mmgrab(ml->mm);
	INIT_WORK(&ml->work, vaccel_memlock_uncharge_work);
	bo->memlock = ml;
	return 0;
}

static int vaccel_capacity_charge(struct vaccel_device *vdev, u64 size)
{
	s64 used = atomic64_read(&vdev->mem_used);

	do {
		if (size > vdev->cfg.memory - used)
			return -ENOMEM;
	} while (!atomic64_try_cmpxchg(&vdev->mem_used, &used, used + size));
	return 0;
}

/*
 * Frees whatever vaccel_ioctl_bo_create() got to set up, so that every
 * error path there can simply drop the object.
 */
static void vaccel_bo_free(struct drm_gem_object *obj)
{
	struct vaccel_device *vdev = to_vaccel_device(obj->dev);
	struct vaccel_bo *bo = to_vaccel_bo(obj);

	if (bo->signal_map.vaddr) {
		dma_resv_lock(obj->resv, NULL);
		drm_gem_shmem_object_vunmap(obj, &bo->signal_map);
		dma_resv_unlock(obj->resv);
	}
	if (bo->pinned) {
		drm_gem_shmem_unpin(&bo->base);
		atomic64_sub(obj->size, &vdev->mem_pinned);
	}
	if (bo->memlock)
		queue_work(vaccel_gem_wq, &bo->memlock->work);
	atomic64_sub(bo->charged, &vdev->mem_used);
	drm_gem_shmem_free(&bo->base);
	atomic_dec(&vaccel_live_bos);
}

/* Handles count against the context's limit, imports included. */
static int vaccel_bo_open(struct drm_gem_object *obj, struct drm_file *file)
{
	struct vaccel_file *vfile = file->driver_priv;

	if (atomic_inc_return(&vfile->num_bos) > VACCEL_MAX_BOS) {
		atomic_dec(&vfile->num_bos);
		return -ENOSPC;
	}
	return 0;
}

static void vaccel_bo_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct vaccel_file *vfile = file->driver_priv;

	atomic_dec(&vfile->num_bos);
}

/*
 * Host mappings. A mapping made without PROT_WRITE loses VM_MAYWRITE, so
 * it can never become writable; every mapping with VM_MAYWRITE is counted
 * in writable_mmaps, which BO_SEAL requires to be zero. An imported object
 * is mapped through its exporter, which applies these rules itself.
 */
static int vaccel_bo_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	struct vaccel_bo *bo = to_vaccel_bo(obj);
	bool writable;
	int ret;

	if (obj->import_attach)
		return drm_gem_shmem_mmap(&bo->base, vma);

	/* before VM_MAYWRITE goes: shmem's copy-on-write check needs it */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (!(vma->vm_flags & VM_WRITE))
		vm_flags_clear(vma, VM_MAYWRITE);
	writable = vma->vm_flags & VM_MAYWRITE;

	spin_lock(&bo->seal_lock);
	if (writable && bo->sealed) {
		spin_unlock(&bo->seal_lock);
		return -EACCES;
	}
	if (writable)
		bo->writable_mmaps++;
	spin_unlock(&bo->seal_lock);

	ret = drm_gem_shmem_mmap(&bo->base, vma);
	if (ret && writable) {
		spin_lock(&bo->seal_lock);
		bo->writable_mmaps--;
		spin_unlock(&bo->seal_lock);
	}
	return ret;
}

static void vaccel_bo_vm_open(struct vm_area_struct *vma)
{
	struct vaccel_bo *bo = to_vaccel_bo(vma->vm_private_data);

	if (vma->vm_flags & VM_MAYWRITE) {
		spin_lock(&bo->seal_lock);
		bo->writable_mmaps++;
		spin_unlock(&bo->seal_lock);
	}
	drm_gem_shmem_vm_ops.open(vma);
}

static void vaccel_bo_vm_close(struct vm_area_struct *vma)
{
	struct vaccel_bo *bo = to_vaccel_bo(vma->vm_private_data);

	if (vma->vm_flags & VM_MAYWRITE) {
		spin_lock(&bo->seal_lock);
		bo->writable_mmaps--;
		spin_unlock(&bo->seal_lock);
	}
	drm_gem_shmem_vm_ops.close(vma);	/* may free the object */
}

static vm_fault_t vaccel_bo_vm_fault(struct vm_fault *vmf)
{
	return drm_gem_shmem_vm_ops.fault(vmf);
}

static const struct vm_operations_struct vaccel_bo_vm_ops = {
	.fault = vaccel_bo_vm_fault,
	.open = vaccel_bo_vm_open,
	.close = vaccel_bo_vm_close,
};

static const struct drm_gem_object_funcs vaccel_bo_funcs = {
	.free = vaccel_bo_free,
	.open = vaccel_bo_open,
	.close = vaccel_bo_close,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = vaccel_bo_mmap,
	.vm_ops = &vaccel_bo_vm_ops,
};

/**
 * vaccel_gem_create_object() - &drm_driver.gem_create_object
 * @drm: the device
 * @size: object size
 *
 * Allocates every object of the device, local and imported, as a
 * &struct vaccel_bo.
 *
 * Return: the embedded GEM object or an ERR_PTR().
 */
struct drm_gem_object *vaccel_gem_create_object(struct drm_device *drm,
						size_t size)
{
	struct vaccel_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&bo->seal_lock);
	bo->base.base.funcs = &vaccel_bo_funcs;
	atomic_inc(&vaccel_live_bos);
	return &bo->base.base;
}

/**
 * vaccel_bo_owner() - the vaccel object whose pages @bo refers to
 * @bo: a local or imported object
 *
 * Return: @bo itself if it is local; for an import of a dma-buf exported
 * by a vaccel device (any device of this module), the exporting object,
 * which lives as long as the import holds the dma-buf; NULL for a dma-buf
 * from another driver.
 */
struct vaccel_bo *vaccel_bo_owner(struct vaccel_bo *bo)
{
	struct dma_buf *dmabuf;
	struct drm_gem_object *exp;

	if (!bo->base.base.import_attach)
		return bo;
	/*
	 * Every dma-buf this module exports comes from drm_gem_prime_export(),
	 * which makes the module its owner and the GEM object its priv.
	 */
	dmabuf = bo->base.base.import_attach->dmabuf;
	if (dmabuf->owner != THIS_MODULE)
		return NULL;
	exp = dmabuf->priv;
	if (exp->funcs != &vaccel_bo_funcs)
		return NULL;
	return to_vaccel_bo(exp);
}

/**
 * vaccel_bo_read_only() - may nobody write @bo through this handle
 * @bo: a local or imported object
 *
 * Return: true for an import of a dma-buf whose file is not writable
 * (exported without DRM_RDWR).
 */
bool vaccel_bo_read_only(struct vaccel_bo *bo)
{
	struct dma_buf_attachment *attach = bo->base.base.import_attach;

	return attach && !(attach->dmabuf->file->f_mode & FMODE_WRITE);
}

/**
 * vaccel_bo_get_write() - register a writable device mapping of @bo
 * @bo: a local or imported object
 *
 * Return: 0, or -EACCES if the object (or the vaccel object it imports)
 * is sealed. Undo with vaccel_bo_put_write().
 */
int vaccel_bo_get_write(struct vaccel_bo *bo)
{
	struct vaccel_bo *owner = vaccel_bo_owner(bo);
	int ret = 0;

	if (!owner)
		return 0;
	spin_lock(&owner->seal_lock);
	if (owner->sealed)
		ret = -EACCES;
	else
		owner->writable_binds++;
	spin_unlock(&owner->seal_lock);
	return ret;
}

/**
 * vaccel_bo_put_write() - drop a writable device mapping of @bo
 * @bo: the object given to a successful vaccel_bo_get_write()
 */
void vaccel_bo_put_write(struct vaccel_bo *bo)
{
	struct vaccel_bo *owner = vaccel_bo_owner(bo);

	if (!owner)
		return;
	spin_lock(&owner->seal_lock);
	owner->writable_binds--;
	spin_unlock(&owner->seal_lock);
}

/* Pin, charge and (for signal objects) map a new object. */
static int vaccel_bo_setup_pinned(struct vaccel_bo *bo)
{
	struct drm_gem_object *obj = &bo->base.base;
	struct vaccel_device *vdev = to_vaccel_device(obj->dev);
	int ret;

	ret = vaccel_memlock_charge(bo);
	if (ret)
		return ret;
	ret = drm_gem_shmem_pin(&bo->base);
	if (ret)
		return ret;
	bo->pinned = true;
	atomic64_add(obj->size, &vdev->mem_pinned);

	if (bo->flags & DRM_VACCEL_BO_SIGNAL) {
		dma_resv_lock(obj->resv, NULL);
		ret = drm_gem_shmem_object_vmap(obj, &bo->signal_map);
		dma_resv_unlock(obj->resv);
	}
	return ret;
}

int vaccel_ioctl_bo_create(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct vaccel_device *vdev = to_vaccel_device(drm);
	struct drm_vaccel_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	struct vaccel_bo *bo;
	u32 handle;
	u64 size;
	int ret;

	if (args->flags & ~VACCEL_BO_FLAGS)
		return -EINVAL;
	if ((args->flags & DRM_VACCEL_BO_PERSISTENT) &&
	    (args->flags & DRM_VACCEL_BO_SIGNAL))
		return -EINVAL;
	if (!args->size)
		return -EINVAL;
	if (vaccel_inject(&vdev->knobs.fail_bo_create))
		return -ENOMEM;
	/* The capacity is page-aligned and at most 1 TiB: no overflow. */
	if (args->size > vdev->cfg.memory)
		return -E2BIG;
	size = PAGE_ALIGN(args->size);

	ret = vaccel_capacity_charge(vdev, size);
	if (ret)
		return ret;
	shmem = drm_gem_shmem_create(drm, size);
	if (IS_ERR(shmem)) {
		atomic64_sub(size, &vdev->mem_used);
		return PTR_ERR(shmem);
	}
	bo = container_of(shmem, struct vaccel_bo, base);
	bo->charged = size;
	bo->flags = args->flags;

	if (bo->flags & VACCEL_BO_FLAGS) {
		ret = vaccel_bo_setup_pinned(bo);
		if (ret)
			goto out_put;
	}
	ret = drm_gem_create_mmap_offset(&shmem->base);
	if (ret)
		goto out_put;
	ret = drm_gem_handle_create(file, &shmem->base, &handle);
	if (ret)
		goto out_put;

	args->size = size;
	args->handle = handle;
	args->mmap_offset = drm_vma_node_offset_addr(&shmem->base.vma_node);
out_put:
	/* The handle, if any, holds the object now. */
	drm_gem_object_put(&shmem->base);
	return ret;
}

int vaccel_ioctl_bo_info(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct drm_vaccel_bo_info *args = data;
	struct drm_gem_object *obj;
	struct vaccel_bo *bo, *owner;
	int ret;

	if (args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_vaccel_bo(obj);
	owner = vaccel_bo_owner(bo);

	ret = drm_gem_create_mmap_offset(obj);
	if (ret)
		goto out;
	args->flags = owner ? owner->flags : 0;
	args->size = obj->size;
	args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	args->status = 0;
	if (obj->import_attach)
		args->status |= DRM_VACCEL_BO_STATUS_IMPORTED;
	if (owner && READ_ONCE(owner->sealed))
		args->status |= DRM_VACCEL_BO_STATUS_SEALED;
out:
	drm_gem_object_put(obj);
	return ret;
}

int vaccel_ioctl_bo_seal(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct drm_vaccel_bo_seal *args = data;
	struct drm_gem_object *obj;
	struct vaccel_bo *bo;
	int ret = 0;

	if (args->flags)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_vaccel_bo(obj);

	if (obj->import_attach || !(bo->flags & DRM_VACCEL_BO_PERSISTENT)) {
		ret = -EINVAL;
		goto out;
	}
	spin_lock(&bo->seal_lock);
	if (bo->writable_mmaps || bo->writable_binds)
		ret = -EBUSY;
	else
		bo->sealed = true;
	spin_unlock(&bo->seal_lock);
out:
	drm_gem_object_put(obj);
	return ret;
}

/**
 * vaccel_gem_module_init() - set up what buffer objects need module-wide
 *
 * Return: 0 or -ENOMEM.
 */
int vaccel_gem_module_init(void)
{
	vaccel_gem_wq = alloc_workqueue("vaccel_gem", WQ_UNBOUND, 0);
	return vaccel_gem_wq ? 0 : -ENOMEM;
}

/**
 * vaccel_gem_module_exit() - wait for pending memlock uncharges
 *
 * Every object is gone by now: each holds the module through its file, a
 * mapping or a dma-buf.
 */
void vaccel_gem_module_exit(void)
{
	destroy_workqueue(vaccel_gem_wq);
}
