/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef __VACCEL_GEM_H__
#define __VACCEL_GEM_H__

#include <linux/iosys-map.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <drm/drm_gem_shmem_helper.h>

struct dma_buf;
struct dma_buf_attachment;
struct mm_struct;
struct page;
struct sg_table;
struct user_struct;
struct vaccel_signal_table;

/**
 * struct vaccel_pin_charge - pinned pages charged to RLIMIT_MEMLOCK
 * @user: the user whose &user_struct.locked_vm holds the charge; NULL when
 *	the charging task had CAP_IPC_LOCK (the pages are then not limited)
 * @mm: the address space whose &mm_struct.pinned_vm shows the charge
 *	(VmPin); mmgrab()ed, NULL for a task without one
 * @pages: number of pages charged; 0 when nothing is charged
 *
 * Filled by vaccel_pin_charge(), undone exactly once by
 * vaccel_pin_uncharge(). Both only use atomics, so the uncharge may run
 * from any context that may sleep, with any lock (mmap_lock included)
 * held. The owner of the structure serialises the two calls.
 */
struct vaccel_pin_charge {
	struct user_struct *user;
	struct mm_struct *mm;
	unsigned long pages;
};

int vaccel_pin_charge(struct vaccel_pin_charge *charge, u64 bytes);
void vaccel_pin_uncharge(struct vaccel_pin_charge *charge);

/**
 * struct vaccel_bo - a vaccel buffer object (GEM shmem), local or imported
 * @base: the shmem object
 * @flags: DRM_VACCEL_BO_* it was created with; 0 for imports
 * @charged: bytes charged to the device's memory capacity (0 for imports)
 * @pinned: the pages are pinned for the object's life (PERSISTENT, SIGNAL)
 * @create_charge: RLIMIT_MEMLOCK charge of those pages, to the creator
 * @signal_map: kernel mapping of a DRM_VACCEL_BO_SIGNAL object
 * @signal_table: the waiters of its words (vaccel_signal.c)
 * @pin_lock: protects @whole_pins and @whole_charge; never held while
 *	taking the object's dma_resv lock (the reverse order is allowed)
 * @whole_pins: holders of all the object's pages through the shmem
 *	helpers: host mappings (one per VMA), foreign dma-buf attachments and
 *	a foreign dma-buf vmap
 * @whole_charge: the object's size charged to whoever took the first of
 *	@whole_pins of a plain object; uncharged when the last goes
 * @seal_lock: protects @sealed and the writer counts below
 * @sealed: nobody may write the object any more; never cleared; read
 *	without the lock with READ_ONCE()
 * @writable_mmaps: host mappings that are or may become writable
 *	(VM_MAYWRITE); read-only mappings are created without VM_MAYWRITE
 * @writable_binds: device mappings with DRM_VACCEL_VM_WRITE, including
 *	those made through imports of this object on other devices
 * @foreign_attachments: other drivers' attachments to writable dma-bufs
 *	of the object; each may map the pages for writing while the object is
 *	not sealed. Changed with the dma_resv lock held too
 * @foreign_vmaps: other drivers' vmaps of the object's dma-bufs (the
 *	dma-buf core shares one vmap between all users of a dma-buf)
 * @exports: the object's writable dma-bufs (&struct vaccel_export), whose
 *	vmap is switched on and off; protected by the dma_resv lock
 *
 * @flags, @charged, @pinned, @create_charge, @signal_map and @signal_table
 * are set at creation and immutable afterwards.
 */
struct vaccel_bo {
	struct drm_gem_shmem_object base;
	u32 flags;
	u64 charged;
	bool pinned;
	struct vaccel_pin_charge create_charge;
	struct iosys_map signal_map;
	struct vaccel_signal_table *signal_table;

	struct mutex pin_lock;	/* see above */
	unsigned int whole_pins;
	struct vaccel_pin_charge whole_charge;

	spinlock_t seal_lock;	/* see above */
	bool sealed;
	unsigned int writable_mmaps;
	unsigned int writable_binds;
	unsigned int foreign_attachments;
	unsigned int foreign_vmaps;

	struct list_head exports;
};

static inline struct vaccel_bo *to_vaccel_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct vaccel_bo, base);
}

struct drm_gem_object *vaccel_gem_create_object(struct drm_device *drm,
						size_t size);
struct drm_gem_object *vaccel_gem_prime_import(struct drm_device *drm,
					       struct dma_buf *dmabuf);
struct drm_gem_object *
vaccel_gem_prime_import_sg_table(struct drm_device *drm,
				 struct dma_buf_attachment *attach,
				 struct sg_table *sgt);
int vaccel_prime_handle_to_fd(struct drm_device *drm, struct drm_file *file,
			      u32 handle, u32 flags, int *prime_fd);

struct vaccel_bo *vaccel_bo_owner(struct vaccel_bo *bo);
bool vaccel_bo_read_only(struct vaccel_bo *bo);
int vaccel_bo_get_write(struct vaccel_bo *bo);
void vaccel_bo_put_write(struct vaccel_bo *bo);
struct page **vaccel_bo_pin_pages(struct vaccel_bo *bo, pgoff_t first,
				  unsigned long count);
void vaccel_bo_unpin_pages(struct page **pages, unsigned long count,
			   bool dirty);

int vaccel_ioctl_bo_create(struct drm_device *drm, void *data,
			   struct drm_file *file);
int vaccel_ioctl_bo_info(struct drm_device *drm, void *data,
			 struct drm_file *file);
int vaccel_ioctl_bo_seal(struct drm_device *drm, void *data,
			 struct drm_file *file);

#endif /* __VACCEL_GEM_H__ */
