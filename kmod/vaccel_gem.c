// SPDX-License-Identifier: GPL-2.0-only
/*
 * Buffer objects: GEM shmem objects with capacity accounting, pinning
 * charged to RLIMIT_MEMLOCK, sealing, PRIME export and import with
 * vaccel's own dma-buf operations, and the BO_CREATE, BO_INFO and BO_SEAL
 * ioctls.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/dma-buf.h>
#include <linux/dma-direction.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/drm_vma_manager.h>

#include <drm/vaccel_accel.h>

#include "vaccel_drv.h"
#include "vaccel_gem.h"

MODULE_IMPORT_NS(DMA_BUF);

#define VACCEL_BO_FLAGS	(DRM_VACCEL_BO_PERSISTENT | DRM_VACCEL_BO_SIGNAL)

atomic_t vaccel_live_bos = ATOMIC_INIT(0);

/**
 * vaccel_pin_charge() - charge pinned pages to the current task
 * @charge: zeroed record of the charge, for vaccel_pin_uncharge()
 * @bytes: page-aligned number of bytes about to be pinned
 *
 * The io_uring way: without CAP_IPC_LOCK the pages go to the user's
 * &user_struct.locked_vm, which may not exceed the task's RLIMIT_MEMLOCK;
 * in every case they are added to the task's &mm_struct.pinned_vm, where
 * /proc/PID/status shows them as VmPin. No lock is taken.
 *
 * Return: 0, or -ENOMEM if the limit does not allow it.
 */
int vaccel_pin_charge(struct vaccel_pin_charge *charge, u64 bytes)
{
	unsigned long pages = bytes >> PAGE_SHIFT;
	struct user_struct *user = NULL;
	struct mm_struct *mm = current->mm;

	if (!pages)
		return 0;
	if (!capable(CAP_IPC_LOCK)) {
		unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
		unsigned long cur, new;

		user = current_user();
		cur = atomic_long_read(&user->locked_vm);
		do {
			if (check_add_overflow(cur, pages, &new) || new > limit)
				return -ENOMEM;
		} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
		get_uid(user);
	}
	if (mm) {
		mmgrab(mm);
		atomic64_add(pages, &mm->pinned_vm);
	}
	charge->user = user;
	charge->mm = mm;
	charge->pages = pages;
	return 0;
}

/**
 * vaccel_pin_uncharge() - undo vaccel_pin_charge()
 * @charge: the record; nothing happens if it holds no charge
 *
 * Synchronous: the limit has room again when this returns, whoever calls
 * it and whether or not the charged task still exists.
 */
void vaccel_pin_uncharge(struct vaccel_pin_charge *charge)
{
	if (!charge->pages)
		return;
	if (charge->user) {
		atomic_long_sub(charge->pages, &charge->user->locked_vm);
		free_uid(charge->user);
	}
	if (charge->mm) {
		atomic64_sub(charge->pages, &charge->mm->pinned_vm);
		mmdrop(charge->mm);
	}
	charge->user = NULL;
	charge->mm = NULL;
	charge->pages = 0;
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
 * Whole-object pins: the shmem helpers pin every page of the object for a
 * host mapping, a dma-buf attachment and a dma-buf vmap. A plain object
 * is charged its size once while any of them holds the pages; persistent
 * and signal objects were charged at creation and cost nothing more.
 * Callers take the pin after vaccel_bo_whole_get() and drop it before
 * vaccel_bo_whole_put(). pin_lock is taken inside the dma_resv lock (by
 * the dma-buf vmap) but never held while taking it.
 */
static int vaccel_bo_whole_get(struct vaccel_bo *bo)
{
	int ret = 0;

	mutex_lock(&bo->pin_lock);
	if (!bo->whole_pins && !(bo->flags & VACCEL_BO_FLAGS))
		ret = vaccel_pin_charge(&bo->whole_charge, bo->base.base.size);
	if (!ret)
		bo->whole_pins++;
	mutex_unlock(&bo->pin_lock);
	return ret;
}

/* Another holder while one exists already (a VMA copied by fork or split). */
static void vaccel_bo_whole_dup(struct vaccel_bo *bo)
{
	mutex_lock(&bo->pin_lock);
	if (!drm_WARN_ON_ONCE(bo->base.base.dev, !bo->whole_pins))
		bo->whole_pins++;
	mutex_unlock(&bo->pin_lock);
}

static void vaccel_bo_whole_put(struct vaccel_bo *bo)
{
	mutex_lock(&bo->pin_lock);
	if (!drm_WARN_ON_ONCE(bo->base.base.dev, !bo->whole_pins) &&
	    !--bo->whole_pins)
		vaccel_pin_uncharge(&bo->whole_charge);
	mutex_unlock(&bo->pin_lock);
}

/*
 * Frees whatever creation or import got to set up, so that every error
 * path there can simply drop the object. Every object that reaches this
 * was counted in vaccel_live_bos.
 */
static void vaccel_bo_free(struct drm_gem_object *obj)
{
	struct vaccel_device *vdev = to_vaccel_device(obj->dev);
	struct vaccel_bo *bo = to_vaccel_bo(obj);

	/* waiters still armed (a blocked queue) hold the table */
	vaccel_signal_table_put(bo->signal_table);
	if (bo->signal_map.vaddr) {
		dma_resv_lock(obj->resv, NULL);
		drm_gem_shmem_object_vunmap(obj, &bo->signal_map);
		dma_resv_unlock(obj->resv);
	}
	if (bo->pinned) {
		drm_gem_shmem_unpin(&bo->base);
		atomic64_sub(obj->size, &vdev->mem_pinned);
	}
	vaccel_pin_uncharge(&bo->create_charge);
	drm_WARN_ON(obj->dev, bo->whole_pins);
	drm_WARN_ON(obj->dev, !list_empty(&bo->exports));
	atomic64_sub(bo->charged, &vdev->mem_used);
	mutex_destroy(&bo->pin_lock);
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
 * An import is mapped through its exporter, which applies its own rules
 * (for a vaccel exporter: vaccel_bo_mmap() below, on the exporting
 * object). What the import adds is the dma-buf's mode: a read-only
 * dma-buf gives read-only mappings that can never become writable.
 */
static int vaccel_bo_mmap_import(struct vaccel_bo *bo, struct vm_area_struct *vma)
{
	struct vaccel_device *vdev = to_vaccel_device(bo->base.base.dev);

	/*
	 * debugfs foreign_import_mmap: forward unchecked, as
	 * drm_gem_shmem_mmap() of another driver's import does, so that
	 * tests reach the exporter's own checks.
	 */
	if (READ_ONCE(vdev->knobs.foreign_import_mmap))
		return drm_gem_shmem_mmap(&bo->base, vma);
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vaccel_bo_read_only(bo)) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		vm_flags_clear(vma, VM_MAYWRITE);
	}
	return drm_gem_shmem_mmap(&bo->base, vma);
}

/*
 * Host mappings, through the DRM file or the dma-buf. Only MAP_SHARED is
 * allowed: VM_MAYSHARE, which a read-only file's shared mapping has too
 * (unlike VM_SHARED). A mapping made without PROT_WRITE loses
 * VM_MAYWRITE, so it can never become writable; every mapping with
 * VM_MAYWRITE is counted in writable_mmaps, which BO_SEAL requires to be
 * zero. The shmem helper pins the whole object while it is mapped.
 */
static int vaccel_bo_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	struct vaccel_bo *bo = to_vaccel_bo(obj);
	bool writable;
	int ret;

	if (obj->import_attach)
		return vaccel_bo_mmap_import(bo, vma);

	if (!(vma->vm_flags & VM_MAYSHARE))
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

	ret = vaccel_bo_whole_get(bo);
	if (ret)
		goto err_writable;
	ret = drm_gem_shmem_mmap(&bo->base, vma);
	if (ret)
		goto err_whole;
	return 0;

err_whole:
	vaccel_bo_whole_put(bo);
err_writable:
	if (writable) {
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
	vaccel_bo_whole_dup(bo);
	drm_gem_shmem_vm_ops.open(vma);
}

static void vaccel_bo_vm_close(struct vm_area_struct *vma)
{
	struct drm_gem_object *obj = vma->vm_private_data;
	struct vaccel_bo *bo = to_vaccel_bo(obj);

	if (vma->vm_flags & VM_MAYWRITE) {
		spin_lock(&bo->seal_lock);
		bo->writable_mmaps--;
		spin_unlock(&bo->seal_lock);
	}
	/* uncharge only once the helper has let go of the pages */
	drm_gem_object_get(obj);
	drm_gem_shmem_vm_ops.close(vma);
	vaccel_bo_whole_put(bo);
	drm_gem_object_put(obj);
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

/*
 * dma-buf operations of every dma-buf this module exports: the DRM PRIME
 * helpers, wrapped so that other drivers' importers count as writers of
 * the object and cannot write a sealed object or through a read-only
 * dma-buf (mapping it included: vaccel_dmabuf_mmap()).
 *
 * An attachment of another driver to a writable dma-buf makes BO_SEAL
 * fail with -EBUSY until it is detached; mapping it for any direction but
 * DMA_TO_DEVICE fails with -EACCES once the object is sealed, and always
 * through a read-only dma-buf. Attaching pins the whole object (the shmem
 * helper's page array), charged like a host mapping.
 *
 * A kernel mapping (dma_buf_vmap()) is different: the dma-buf core warns
 * when an exporter's vmap fails, as importers are not prepared for it, so
 * it must not be refused for anything a user can cause. vaccel therefore
 * offers it only where it can neither write a sealed or read-only object
 * nor pin anything uncharged: on a writable dma-buf of an unsealed object
 * whose pages are pinned and charged already, a persistent or signal
 * object, or a plain one that another driver has attached (as
 * vb2-dma-contig does before it vmaps). Elsewhere the dma-buf uses
 * vaccel_dmabuf_ops_novmap, whose missing vmap makes the dma-buf core
 * refuse with -EINVAL without calling us. The choice is made under the
 * object's reservation lock, which dma_buf_vmap() holds, whenever it can
 * change: at export, when another driver attaches or detaches, and when
 * the object is sealed; the writable dma-bufs of an object are on its
 * &vaccel_bo.exports list for that. A vmap made while offered holds a
 * whole-object pin and counts as a writer (BO_SEAL -EBUSY) until it goes.
 *
 * vaccel devices import these dma-bufs without mapping them: they reach
 * the pages through the exporting object (vaccel_bo_owner()) and apply
 * the sealing and read-only rules there. Their attachments are told apart
 * by the importing device, which is on the vaccel bus.
 */
static const struct dma_buf_ops vaccel_dmabuf_ops;
static const struct dma_buf_ops vaccel_dmabuf_ops_novmap;

/**
 * struct vaccel_export - a writable dma-buf of an object
 * @link: entry in &vaccel_bo.exports
 * @dmabuf: the dma-buf (no reference: removed from the list on release)
 */
struct vaccel_export {
	struct list_head link;
	struct dma_buf *dmabuf;
};

static bool vaccel_dmabuf_is_ours(struct dma_buf *dmabuf)
{
	const struct dma_buf_ops *ops = READ_ONCE(dmabuf->ops);

	return ops == &vaccel_dmabuf_ops || ops == &vaccel_dmabuf_ops_novmap;
}

/* Offer vmap on the object's writable dma-bufs, or not. */
static void vaccel_bo_update_vmap(struct vaccel_bo *bo)
{
	struct vaccel_export *exp;
	bool vmap;

	dma_resv_assert_held(bo->base.base.resv);
	vmap = !READ_ONCE(bo->sealed) &&
	       ((bo->flags & VACCEL_BO_FLAGS) || bo->foreign_attachments);
	list_for_each_entry(exp, &bo->exports, link)
		WRITE_ONCE(exp->dmabuf->ops, vmap ? &vaccel_dmabuf_ops :
						    &vaccel_dmabuf_ops_novmap);
}

static bool vaccel_dmabuf_writable(struct dma_buf *dmabuf)
{
	return dmabuf->file->f_mode & FMODE_WRITE;
}

static int vaccel_dmabuf_attach(struct dma_buf *dmabuf,
				struct dma_buf_attachment *attach)
{
	struct drm_gem_object *obj = dmabuf->priv;
	struct vaccel_bo *bo = to_vaccel_bo(obj);
	int ret;

	/* only vaccel_gem_prime_import() attaches with vaccel bus devices */
	if (attach->dev->bus && attach->dev->bus == obj->dev->dev->bus)
		return 0;

	ret = vaccel_bo_whole_get(bo);
	if (ret)
		return ret;
	ret = drm_gem_map_attach(dmabuf, attach);
	if (ret) {
		vaccel_bo_whole_put(bo);
		return ret;
	}
	if (vaccel_dmabuf_writable(dmabuf)) {
		dma_resv_lock(obj->resv, NULL);
		spin_lock(&bo->seal_lock);
		bo->foreign_attachments++;
		spin_unlock(&bo->seal_lock);
		vaccel_bo_update_vmap(bo);
		dma_resv_unlock(obj->resv);
	}
	attach->priv = bo;
	return 0;
}

static void vaccel_dmabuf_detach(struct dma_buf *dmabuf,
				 struct dma_buf_attachment *attach)
{
	struct vaccel_bo *bo = attach->priv;
	struct drm_gem_object *obj;

	if (!bo)
		return;
	obj = &bo->base.base;
	if (vaccel_dmabuf_writable(dmabuf)) {
		dma_resv_lock(obj->resv, NULL);
		spin_lock(&bo->seal_lock);
		bo->foreign_attachments--;
		spin_unlock(&bo->seal_lock);
		vaccel_bo_update_vmap(bo);
		dma_resv_unlock(obj->resv);
	}
	drm_gem_map_detach(dmabuf, attach);
	vaccel_bo_whole_put(bo);
}

static struct sg_table *vaccel_dmabuf_map(struct dma_buf_attachment *attach,
					  enum dma_data_direction dir)
{
	struct vaccel_bo *bo = attach->priv;

	/* vaccel importers never map */
	if (!bo)
		return ERR_PTR(-EINVAL);
	/* an attachment made before the seal keeps it from happening */
	if (dir != DMA_TO_DEVICE &&
	    (!vaccel_dmabuf_writable(attach->dmabuf) || READ_ONCE(bo->sealed)))
		return ERR_PTR(-EACCES);
	return drm_gem_map_dma_buf(attach, dir);
}

/*
 * Only reached through vaccel_dmabuf_ops, with the reservation lock held:
 * the object is not sealed and its pages are pinned and charged already,
 * so nothing here fails but vmap() itself.
 */
static int vaccel_dmabuf_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct vaccel_bo *bo = to_vaccel_bo(dmabuf->priv);
	int ret;

	ret = vaccel_bo_whole_get(bo);
	if (ret)
		return ret;
	ret = drm_gem_dmabuf_vmap(dmabuf, map);
	if (ret) {
		vaccel_bo_whole_put(bo);
		return ret;
	}
	spin_lock(&bo->seal_lock);
	bo->foreign_vmaps++;
	spin_unlock(&bo->seal_lock);
	return 0;
}

static void vaccel_dmabuf_vunmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct vaccel_bo *bo = to_vaccel_bo(dmabuf->priv);

	spin_lock(&bo->seal_lock);
	bo->foreign_vmaps--;
	spin_unlock(&bo->seal_lock);
	drm_gem_dmabuf_vunmap(dmabuf, map);
	vaccel_bo_whole_put(bo);
}

/*
 * mmap() of the dma-buf: directly on its fd (the VFS already refuses a
 * writable shared mapping of a read-only file), or forwarded by a kernel
 * importer with a VMA of its own (dma_buf_mmap(), as drm_gem_shmem_mmap()
 * does for an import), which may be writable whatever the dma-buf's mode.
 * So the dma-buf's mode is checked here, as vaccel_bo_mmap_import() checks
 * it for vaccel's own imports; the object's rules (the seal) follow in
 * vaccel_bo_mmap().
 */
static int vaccel_dmabuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	if (!vaccel_dmabuf_writable(dmabuf)) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		vm_flags_clear(vma, VM_MAYWRITE);
	}
	return drm_gem_dmabuf_mmap(dmabuf, vma);
}

static void vaccel_dmabuf_release(struct dma_buf *dmabuf)
{
	struct drm_gem_object *obj = dmabuf->priv;
	struct vaccel_bo *bo = to_vaccel_bo(obj);
	struct vaccel_export *exp, *found = NULL;

	dma_resv_lock(obj->resv, NULL);
	list_for_each_entry(exp, &bo->exports, link) {
		if (exp->dmabuf == dmabuf) {
			list_del(&exp->link);
			found = exp;
			break;
		}
	}
	dma_resv_unlock(obj->resv);
	kfree(found);
	drm_gem_dmabuf_release(dmabuf);	/* may free the object */
}

static const struct dma_buf_ops vaccel_dmabuf_ops = {
	.cache_sgt_mapping = true,
	.attach = vaccel_dmabuf_attach,
	.detach = vaccel_dmabuf_detach,
	.map_dma_buf = vaccel_dmabuf_map,
	.unmap_dma_buf = drm_gem_unmap_dma_buf,
	.release = vaccel_dmabuf_release,
	.mmap = vaccel_dmabuf_mmap,	/* then vaccel_bo_mmap() on the object */
	.vmap = vaccel_dmabuf_vmap,
	.vunmap = vaccel_dmabuf_vunmap,
};

/* The same without vmap; vunmap stays for a vmap made before the switch. */
static const struct dma_buf_ops vaccel_dmabuf_ops_novmap = {
	.cache_sgt_mapping = true,
	.attach = vaccel_dmabuf_attach,
	.detach = vaccel_dmabuf_detach,
	.map_dma_buf = vaccel_dmabuf_map,
	.unmap_dma_buf = drm_gem_unmap_dma_buf,
	.release = vaccel_dmabuf_release,
	.mmap = vaccel_dmabuf_mmap,
	.vunmap = vaccel_dmabuf_vunmap,
};

/*
 * A new dma-buf of local object @obj; @flags give the file's mode. A
 * writable one goes on the object's exports list, so that its vmap can
 * be switched on and off.
 */
static struct dma_buf *vaccel_bo_export(struct drm_gem_object *obj, int flags)
{
	struct dma_buf_export_info exp_info = {
		.exp_name = KBUILD_MODNAME,
		.owner = THIS_MODULE,
		.ops = &vaccel_dmabuf_ops_novmap,
		.size = obj->size,
		.flags = flags,
		.priv = obj,
		.resv = obj->resv,
	};
	struct vaccel_bo *bo = to_vaccel_bo(obj);
	struct vaccel_export *exp = NULL;
	struct dma_buf *dmabuf;

	if ((flags & O_ACCMODE) == O_RDWR) {
		exp = kzalloc(sizeof(*exp), GFP_KERNEL_ACCOUNT);
		if (!exp)
			return ERR_PTR(-ENOMEM);
	}
	dmabuf = drm_gem_dmabuf_export(obj->dev, &exp_info);
	if (IS_ERR(dmabuf)) {
		kfree(exp);
		return dmabuf;
	}
	if (exp) {
		exp->dmabuf = dmabuf;
		dma_resv_lock(obj->resv, NULL);
		list_add(&exp->link, &bo->exports);
		vaccel_bo_update_vmap(bo);
		dma_resv_unlock(obj->resv);
	}
	return dmabuf;
}

/* &drm_gem_object_funcs.export: the object's (cached) PRIME dma-buf */
static struct dma_buf *vaccel_gem_prime_export(struct drm_gem_object *obj,
					       int flags)
{
	return vaccel_bo_export(obj, flags);
}

static const struct drm_gem_object_funcs vaccel_bo_funcs = {
	.free = vaccel_bo_free,
	.open = vaccel_bo_open,
	.close = vaccel_bo_close,
	.export = vaccel_gem_prime_export,
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
 * &struct vaccel_bo. The object is counted in vaccel_live_bos by whoever
 * finishes creating it: the shmem helpers free it without our &.free if
 * they fail after this.
 *
 * Return: the embedded GEM object or an ERR_PTR().
 */
struct drm_gem_object *vaccel_gem_create_object(struct drm_device *drm,
						size_t size)
{
	struct vaccel_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	mutex_init(&bo->pin_lock);
	spin_lock_init(&bo->seal_lock);
	INIT_LIST_HEAD(&bo->exports);
	bo->base.base.funcs = &vaccel_bo_funcs;
	return &bo->base.base;
}

/**
 * vaccel_gem_prime_import_sg_table() - &drm_driver.gem_prime_import_sg_table
 * @drm: the importing device
 * @attach: the attachment to another driver's dma-buf
 * @sgt: its mapping
 *
 * Return: the import or an ERR_PTR().
 */
struct drm_gem_object *
vaccel_gem_prime_import_sg_table(struct drm_device *drm,
				 struct dma_buf_attachment *attach,
				 struct sg_table *sgt)
{
	struct drm_gem_object *obj;

	obj = drm_gem_shmem_prime_import_sg_table(drm, attach, sgt);
	if (!IS_ERR(obj))
		atomic_inc(&vaccel_live_bos);
	return obj;
}

/**
 * vaccel_gem_prime_import() - &drm_driver.gem_prime_import
 * @drm: the importing device
 * @dmabuf: the dma-buf
 *
 * A writable dma-buf of an object of this device gives the object itself.
 * A dma-buf of another vaccel device, or a read-only one of this device,
 * gives an import that refers to the exporting object (its owner) without
 * mapping or pinning anything: binds and host mappings of the import pin
 * what they use of the owner's pages. Any other dma-buf is imported with
 * the PRIME helpers (attached and mapped for the object's life).
 *
 * Return: the object or an ERR_PTR().
 */
struct drm_gem_object *vaccel_gem_prime_import(struct drm_device *drm,
					       struct dma_buf *dmabuf)
{
	struct dma_buf_attachment *attach;
	struct drm_gem_object *obj;

	if (!vaccel_dmabuf_is_ours(dmabuf))
		return drm_gem_prime_import(drm, dmabuf);

	obj = dmabuf->priv;
	if (obj->dev == drm && (dmabuf->file->f_mode & FMODE_WRITE)) {
		drm_gem_object_get(obj);
		return obj;
	}

	attach = dma_buf_attach(dmabuf, drm->dev);
	if (IS_ERR(attach))
		return ERR_CAST(attach);
	get_dma_buf(dmabuf);
	obj = drm_gem_shmem_prime_import_sg_table(drm, attach, NULL);
	if (IS_ERR(obj)) {
		dma_buf_detach(dmabuf, attach);
		dma_buf_put(dmabuf);
		return obj;
	}
	obj->import_attach = attach;
	obj->resv = dmabuf->resv;
	atomic_inc(&vaccel_live_bos);
	return obj;
}

/**
 * vaccel_prime_handle_to_fd() - &drm_driver.prime_handle_to_fd
 * @drm: the device
 * @file: the exporting file
 * @handle: the object
 * @flags: DRM_CLOEXEC and/or DRM_RDWR (checked by the DRM core)
 * @prime_fd: set to the new dma-buf file descriptor
 *
 * With DRM_RDWR this is the standard export, whose dma-buf the DRM core
 * caches per object. Without it the caller gets a read-only dma-buf of
 * its own, even if a writable one exists, so that "read-only" holds
 * whatever was exported before: a new dma-buf of the object (of its
 * owner for an import of a vaccel dma-buf), or the imported dma-buf
 * itself when that is read-only already.
 *
 * Return: 0, -ENOENT for an unknown handle, -EOPNOTSUPP for a writable
 * import of another driver's dma-buf (which cannot be made read-only), or
 * another negative errno.
 */
int vaccel_prime_handle_to_fd(struct drm_device *drm, struct drm_file *file,
			      u32 handle, u32 flags, int *prime_fd)
{
	struct drm_gem_object *obj;
	struct dma_buf *dmabuf;
	struct vaccel_bo *owner;
	bool read_only;
	int fd;

	if (flags & DRM_RDWR)
		return drm_gem_prime_handle_to_fd(drm, file, handle, flags, prime_fd);

	obj = drm_gem_object_lookup(file, handle);
	if (VACCEL_IOCTL_DBG(drm, !obj))
		return -ENOENT;
	owner = vaccel_bo_owner(to_vaccel_bo(obj));
	if (!owner) {
		read_only = vaccel_bo_read_only(to_vaccel_bo(obj));
		drm_gem_object_put(obj);
		if (VACCEL_IOCTL_DBG(drm, !read_only))
			return -EOPNOTSUPP;
		return drm_gem_prime_handle_to_fd(drm, file, handle, flags, prime_fd);
	}

	dmabuf = vaccel_bo_export(&owner->base.base, flags & ~DRM_RDWR);
	drm_gem_object_put(obj);	/* the dma-buf holds the owner */
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	fd = dma_buf_fd(dmabuf, flags & DRM_CLOEXEC);
	if (fd < 0) {
		dma_buf_put(dmabuf);
		return fd;
	}
	*prime_fd = fd;
	return 0;
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

	if (!bo->base.base.import_attach)
		return bo;
	/* every dma-buf with our ops carries a local object in priv */
	dmabuf = bo->base.base.import_attach->dmabuf;
	if (!vaccel_dmabuf_is_ours(dmabuf))
		return NULL;
	return to_vaccel_bo(dmabuf->priv);
}

/**
 * vaccel_bo_read_only() - whether @bo may only be read
 * @bo: a local or imported object
 *
 * Return: true when @bo is an import of a dma-buf whose file is not
 * writable (exported without DRM_RDWR): nothing may write the memory
 * through it (write binds, writable mappings, SIGNAL_WRITE).
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
 * Return: 0, or -EACCES if @bo is a read-only import or the object (or
 * the vaccel object it imports) is sealed. Undo with vaccel_bo_put_write().
 */
int vaccel_bo_get_write(struct vaccel_bo *bo)
{
	struct vaccel_bo *owner = vaccel_bo_owner(bo);
	int ret = 0;

	if (vaccel_bo_read_only(bo))
		return -EACCES;
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

/**
 * vaccel_bo_pin_pages() - take references on a range of a local object's pages
 * @bo: a local object (an owner)
 * @first: index of the first page
 * @count: number of pages, at least 1; @first + @count within the object
 *
 * Allocates the pages that do not exist yet (zero-filled) and keeps each
 * in memory while its reference is held; the rest of the object stays
 * pageable. The caller charges them (vaccel_pin_charge()) first.
 *
 * Return: the page array (release with vaccel_bo_unpin_pages()), or an
 * ERR_PTR(): -ENOMEM, -EINTR if a fatal signal arrived meanwhile, or the
 * shmem error.
 */
struct page **vaccel_bo_pin_pages(struct vaccel_bo *bo, pgoff_t first,
				  unsigned long count)
{
	struct address_space *mapping = bo->base.base.filp->f_mapping;
	gfp_t gfp = mapping_gfp_mask(mapping);
	struct page **pages;
	unsigned long i;
	int ret;

	pages = kvmalloc_array(count, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < count; i++) {
		struct page *page;

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err;
		}
		page = shmem_read_mapping_page_gfp(mapping, first + i, gfp);
		if (IS_ERR(page)) {
			ret = PTR_ERR(page);
			goto err;
		}
		pages[i] = page;
		cond_resched();
	}
	return pages;

err:
	vaccel_bo_unpin_pages(pages, i, false);
	return ERR_PTR(ret);
}

/**
 * vaccel_bo_unpin_pages() - release pages from vaccel_bo_pin_pages()
 * @pages: the array, freed here
 * @count: number of pages in it
 * @dirty: the pages may have been written through a kernel mapping, which
 *	the page tables do not track: mark them dirty so they are saved
 */
void vaccel_bo_unpin_pages(struct page **pages, unsigned long count,
			   bool dirty)
{
	unsigned long i;

	for (i = 0; i < count; i++) {
		if (dirty)
			set_page_dirty(pages[i]);
		put_page(pages[i]);
	}
	kvfree(pages);
}

/* Pin, charge and (for signal objects) map a new object. */
static int vaccel_bo_setup_pinned(struct vaccel_bo *bo)
{
	struct drm_gem_object *obj = &bo->base.base;
	struct vaccel_device *vdev = to_vaccel_device(obj->dev);
	int ret;

	ret = vaccel_pin_charge(&bo->create_charge, obj->size);
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
		if (ret)
			return ret;
		bo->signal_table = vaccel_signal_table_new(bo->signal_map.vaddr);
		if (!bo->signal_table)
			return -ENOMEM;
	}
	return 0;
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
	int ret, idx;

	if (VACCEL_IOCTL_DBG(drm, args->flags & ~VACCEL_BO_FLAGS))
		return -EINVAL;
	if (VACCEL_IOCTL_DBG(drm, (args->flags & DRM_VACCEL_BO_PERSISTENT) &&
			     (args->flags & DRM_VACCEL_BO_SIGNAL)))
		return -EINVAL;
	if (VACCEL_IOCTL_DBG(drm, !args->size))
		return -EINVAL;
	/* The capacity is page-aligned and at most 1 TiB: no overflow. */
	if (VACCEL_IOCTL_DBG(drm, args->size > vdev->cfg.memory))
		return -E2BIG;
	size = PAGE_ALIGN(args->size);

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	if (vaccel_inject(&vdev->knobs.fail_bo_create)) {
		ret = -ENOMEM;
		goto out_exit;
	}
	ret = vaccel_capacity_charge(vdev, size);
	if (ret)
		goto out_exit;
	shmem = drm_gem_shmem_create(drm, size);
	if (IS_ERR(shmem)) {
		atomic64_sub(size, &vdev->mem_used);
		ret = PTR_ERR(shmem);
		goto out_exit;
	}
	atomic_inc(&vaccel_live_bos);
	bo = container_of(shmem, struct vaccel_bo, base);
	bo->charged = size;
	bo->flags = args->flags;

	if (bo->flags & VACCEL_BO_FLAGS) {
		ret = vaccel_bo_setup_pinned(bo);
		if (ret)
			goto out_put;
	}
	/* drm_gem_shmem_create() made the mmap offset */
	ret = drm_gem_handle_create(file, &shmem->base, &handle);
	if (ret)
		goto out_put;

	args->size = size;
	args->handle = handle;
	args->mmap_offset = drm_vma_node_offset_addr(&shmem->base.vma_node);
out_put:
	/* The handle, if any, holds the object now. */
	drm_gem_object_put(&shmem->base);
out_exit:
	drm_dev_exit(idx);
	return ret;
}

int vaccel_ioctl_bo_info(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct drm_vaccel_bo_info *args = data;
	struct drm_gem_object *obj;
	struct vaccel_bo *bo, *owner;
	int ret;

	if (VACCEL_IOCTL_DBG(drm, args->pad))
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (VACCEL_IOCTL_DBG(drm, !obj))
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
	int ret = 0, idx;

	if (VACCEL_IOCTL_DBG(drm, args->flags))
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (VACCEL_IOCTL_DBG(drm, !obj))
		return -ENOENT;
	bo = to_vaccel_bo(obj);

	if (VACCEL_IOCTL_DBG(drm, obj->import_attach ||
			     !(bo->flags & DRM_VACCEL_BO_PERSISTENT))) {
		ret = -EINVAL;
		goto out_put;
	}
	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto out_put;
	}
	/* the reservation lock orders the seal with dma_buf_vmap() */
	dma_resv_lock(obj->resv, NULL);
	spin_lock(&bo->seal_lock);
	if (!bo->sealed) {
		if (bo->writable_mmaps || bo->writable_binds ||
		    bo->foreign_attachments || bo->foreign_vmaps)
			ret = -EBUSY;
		else
			WRITE_ONCE(bo->sealed, true);
	}
	spin_unlock(&bo->seal_lock);
	if (!ret)
		vaccel_bo_update_vmap(bo);
	dma_resv_unlock(obj->resv);
	drm_dev_exit(idx);
out_put:
	drm_gem_object_put(obj);
	return ret;
}
