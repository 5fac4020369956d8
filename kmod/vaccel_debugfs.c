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

#include "vaccel_drv.h"

static struct dentry *vaccel_debugfs_root;

static int vaccel_debugfs_objects_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "bus_devices %d\n", atomic_read(&vaccel_live_bus_devs));
	seq_printf(m, "devices %d\n", atomic_read(&vaccel_live_devices));
	seq_printf(m, "files %d\n", atomic_read(&vaccel_live_files));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vaccel_debugfs_objects);

/**
 * vaccel_debugfs_module_init() - create /sys/kernel/debug/vaccel/
 *
 * The "objects" file there counts live bus devices, DRM devices and open
 * files across all devices, so that tests can check that teardown freed
 * everything. debugfs failures are not fatal.
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
}
