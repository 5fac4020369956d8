// SPDX-License-Identifier: GPL-2.0-only
/*
 * debugfs: per-device state under /sys/kernel/debug/accel/vaccel<id>/ and
 * module-wide object counters under /sys/kernel/debug/vaccel/.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include <drm/drm_debugfs.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include <drm/vaccel_accel.h>

#include "vaccel_drv.h"
#include "vaccel_gem.h"

static struct dentry *vaccel_debugfs_root;

static int vaccel_debugfs_objects_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "bus_devices %d\n", atomic_read(&vaccel_live_bus_devs));
	seq_printf(m, "devices %d\n", atomic_read(&vaccel_live_devices));
	seq_printf(m, "files %d\n", atomic_read(&vaccel_live_files));
	seq_printf(m, "bos %d\n", atomic_read(&vaccel_live_bos));
	seq_printf(m, "mappings %d\n", atomic_read(&vaccel_live_maps));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vaccel_debugfs_objects);

/**
 * vaccel_debugfs_module_init() - create /sys/kernel/debug/vaccel/
 *
 * The "objects" file there counts live bus devices, DRM devices, open
 * files, buffer objects and VM mappings across all devices, so that tests
 * can check that teardown freed everything. debugfs failures are not fatal.
 */
void vaccel_debugfs_module_init(void)
{
	vaccel_debugfs_root = debugfs_create_dir(DRIVER_NAME, NULL);
	debugfs_create_file("objects", 0444, vaccel_debugfs_root, NULL,
			    &vaccel_debugfs_objects_fops);
}

/**
 * vaccel_debugfs_module_exit() - remove /sys/kernel/debug/vaccel/
 */
void vaccel_debugfs_module_exit(void)
{
	debugfs_remove_recursive(vaccel_debugfs_root);
}

static int vaccel_debugfs_info_show(struct seq_file *m, void *unused)
{
	struct drm_debugfs_entry *entry = m->private;
	struct vaccel_device *vdev = to_vaccel_device(entry->dev);
	const struct vaccel_config *cfg = &vdev->cfg;

	seq_printf(m, "id %u\n", vdev->id);
	seq_printf(m, "engines %llu\n", cfg->engines);
	seq_printf(m, "memory %llu\n", cfg->memory);
	seq_printf(m, "link_bw_mbps %llu\n", cfg->link_bw_mbps);
	seq_printf(m, "link_latency_ns %llu\n", cfg->link_latency_ns);
	seq_printf(m, "poll_budget_ns %llu\n", cfg->poll_budget_ns);
	seq_printf(m, "va_start 0x%llx\n", VACCEL_VA_START);
	seq_printf(m, "va_end 0x%llx\n", VACCEL_VA_END);
	seq_printf(m, "open_files %d\n", atomic_read(&vdev->open_files));
	seq_printf(m, "memory_used %lld\n", atomic64_read(&vdev->mem_used));
	seq_printf(m, "pinned %lld\n", atomic64_read(&vdev->mem_pinned));
	return 0;
}

static int vaccel_debugfs_contexts_show(struct seq_file *m, void *unused)
{
	struct drm_debugfs_entry *entry = m->private;
	struct drm_device *drm = entry->dev;
	struct drm_file *file;

	mutex_lock(&drm->filelist_mutex);
	list_for_each_entry(file, &drm->filelist, lhead) {
		struct vaccel_file *vfile = file->driver_priv;
		unsigned int maps;

		spin_lock(&vfile->vm.lock);
		maps = vfile->vm.num_maps;
		spin_unlock(&vfile->vm.lock);
		seq_printf(m, "ctx %u pid %d bos %d mappings %u\n", vfile->id,
			   pid_nr(vfile->pid), atomic_read(&vfile->num_bos), maps);
	}
	mutex_unlock(&drm->filelist_mutex);
	return 0;
}

/*
 * The contexts, buffers and vm files walk the DRM core's file list: a file
 * leaves it under filelist_mutex before its handles and VM are torn down.
 */
static int vaccel_debugfs_buffers_show(struct seq_file *m, void *unused)
{
	struct drm_debugfs_entry *entry = m->private;
	struct drm_device *drm = entry->dev;
	struct drm_file *file;

	mutex_lock(&drm->filelist_mutex);
	list_for_each_entry(file, &drm->filelist, lhead) {
		struct vaccel_file *vfile = file->driver_priv;
		struct drm_gem_object *obj;
		int handle;

		spin_lock(&file->table_lock);
		idr_for_each_entry(&file->object_idr, obj, handle) {
			struct vaccel_bo *bo = to_vaccel_bo(obj);
			struct vaccel_bo *owner = vaccel_bo_owner(bo);
			u32 status = 0;

			if (obj->import_attach)
				status |= DRM_VACCEL_BO_STATUS_IMPORTED;
			if (owner && READ_ONCE(owner->sealed))
				status |= DRM_VACCEL_BO_STATUS_SEALED;
			seq_printf(m, "ctx %u handle %d size %zu flags 0x%x status 0x%x\n",
				   vfile->id, handle, obj->size,
				   owner ? owner->flags : 0, status);
		}
		spin_unlock(&file->table_lock);
	}
	mutex_unlock(&drm->filelist_mutex);
	return 0;
}

static int vaccel_debugfs_vm_show(struct seq_file *m, void *unused)
{
	struct drm_debugfs_entry *entry = m->private;
	struct drm_device *drm = entry->dev;
	struct drm_file *file;

	mutex_lock(&drm->filelist_mutex);
	list_for_each_entry(file, &drm->filelist, lhead) {
		struct vaccel_file *vfile = file->driver_priv;

		vaccel_vm_debugfs_show(&vfile->vm, m, vfile->id);
	}
	mutex_unlock(&drm->filelist_mutex);
	return 0;
}

/**
 * vaccel_debugfs_device_init() - create the per-device debugfs files
 * @vdev: device, before drm_dev_register()
 *
 * The directory is created and removed by the DRM core; files hold no
 * reference beyond the device itself, which outlives them.
 */
void vaccel_debugfs_device_init(struct vaccel_device *vdev)
{
	drm_debugfs_add_file(&vdev->drm, "info", vaccel_debugfs_info_show, NULL);
	drm_debugfs_add_file(&vdev->drm, "contexts", vaccel_debugfs_contexts_show, NULL);
	drm_debugfs_add_file(&vdev->drm, "buffers", vaccel_debugfs_buffers_show, NULL);
	drm_debugfs_add_file(&vdev->drm, "vm", vaccel_debugfs_vm_show, NULL);
}
