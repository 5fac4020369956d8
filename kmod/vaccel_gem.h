/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef __VACCEL_GEM_H__
#define __VACCEL_GEM_H__

#include <linux/iosys-map.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <drm/drm_gem_shmem_helper.h>

struct vaccel_memlock;

/**
 * struct vaccel_bo - a vaccel buffer object (GEM shmem), local or imported
 * @base: the shmem object
 * @flags: DRM_VACCEL_BO_* it was created with; 0 for imports
 * @charged: bytes charged to the device's memory capacity (0 for imports)
 * @pinned: the pages are pinned for the object's life
 * @memlock: RLIMIT_MEMLOCK charge to undo when the object is freed
 * @signal_map: kernel mapping of a DRM_VACCEL_BO_SIGNAL object
 * @seal_lock: protects @sealed, @writable_mmaps and @writable_binds
 * @sealed: nobody may write the object any more; never cleared
 * @writable_mmaps: host mappings that are or may become writable
 *	(VM_MAYWRITE); read-only mappings are created without VM_MAYWRITE
 * @writable_binds: device mappings with DRM_VACCEL_VM_WRITE, including
 *	those made through imports of this object on other devices
 *
 * Everything but the @seal_lock fields is set at creation and immutable.
 */
struct vaccel_bo {
	struct drm_gem_shmem_object base;
	u32 flags;
	u64 charged;
	bool pinned;
	struct vaccel_memlock *memlock;
	struct iosys_map signal_map;

	spinlock_t seal_lock;	/* see above */
	bool sealed;
	unsigned int writable_mmaps;
	unsigned int writable_binds;
};

static inline struct vaccel_bo *to_vaccel_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct vaccel_bo, base);
}

struct drm_gem_object *vaccel_gem_create_object(struct drm_device *drm,
						size_t size);
struct vaccel_bo *vaccel_bo_owner(struct vaccel_bo *bo);
bool vaccel_bo_read_only(struct vaccel_bo *bo);
int vaccel_bo_get_write(struct vaccel_bo *bo);
void vaccel_bo_put_write(struct vaccel_bo *bo);

int vaccel_ioctl_bo_create(struct drm_device *drm, void *data,
			   struct drm_file *file);
int vaccel_ioctl_bo_info(struct drm_device *drm, void *data,
			 struct drm_file *file);
int vaccel_ioctl_bo_seal(struct drm_device *drm, void *data,
			 struct drm_file *file);

int vaccel_gem_module_init(void);
void vaccel_gem_module_exit(void);

#endif /* __VACCEL_GEM_H__ */
