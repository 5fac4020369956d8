// SPDX-License-Identifier: GPL-2.0-only
/*
 * vaccel: software-modelled compute accelerators under DRM accel.
 *
 * This file holds the DRM driver: binding a bus device to a DRM accel
 * device, per-file contexts, the ioctl table, and module load/unload.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/slab.h>

#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include <drm/vaccel_accel.h>

#include "vaccel_drv.h"
#include "vaccel_gem.h"
#include "vaccel_queue.h"
#include "vaccel_signal.h"
#include "vaccel_vm.h"

#define VACCEL_MAX_DEVICES	64

static unsigned int num_devices = 4;
module_param(num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "Number of devices created at load (default 4, at most 64)");

atomic_t vaccel_live_devices = ATOMIC_INIT(0);
atomic_t vaccel_live_files = ATOMIC_INIT(0);
atomic_t vaccel_live_queues = ATOMIC_INIT(0);

static int vaccel_open(struct drm_device *drm, struct drm_file *file)
{
	struct vaccel_device *vdev = to_vaccel_device(drm);
	struct vaccel_file *vfile;
	int idx;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	vfile = kzalloc(sizeof(*vfile), GFP_KERNEL_ACCOUNT);
	if (vfile)
		vfile->engine_ns = kcalloc(vdev->cfg.engines, sizeof(*vfile->engine_ns),
					   GFP_KERNEL_ACCOUNT);
	if (!vfile || !vfile->engine_ns) {
		kfree(vfile);
		drm_dev_exit(idx);
		return -ENOMEM;
	}
	vfile->vdev = vdev;
	vfile->pid = get_pid(task_tgid(current));
	atomic_set(&vfile->num_bos, 0);
	vaccel_vm_init(&vfile->vm);
	xa_init_flags(&vfile->queues, XA_FLAGS_ALLOC);
	mutex_init(&vfile->queues_lock);
	vaccel_signal_file_init(vfile);
	file->driver_priv = vfile;
	vfile->id = atomic_inc_return(&vdev->next_ctx_id);
	atomic_inc(&vdev->open_files);
	atomic_inc(&vaccel_live_files);

	drm_dev_exit(idx);
	return 0;
}

static void vaccel_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct vaccel_file *vfile = file->driver_priv;
	struct vaccel_device *vdev = vfile->vdev;

	/*
	 * The DRM core closed every GEM handle of the file already; queues
	 * go before the VM they run in.
	 */
	vaccel_queues_fini(vfile);
	vaccel_signal_file_fini(vfile);
	vaccel_vm_fini(&vfile->vm);
	mutex_destroy(&vfile->queues_lock);
	atomic_dec(&vdev->open_files);
	put_pid(vfile->pid);
	kfree(vfile->engine_ns);
	kfree(vfile);
	atomic_dec(&vaccel_live_files);
}

static int vaccel_ioctl_get_param(struct drm_device *drm, void *data,
				  struct drm_file *file)
{
	struct vaccel_device *vdev = to_vaccel_device(drm);
	struct drm_vaccel_get_param *args = data;

	if (VACCEL_IOCTL_DBG(drm, args->pad))
		return -EINVAL;

	switch (args->param) {
	case DRM_VACCEL_PARAM_UAPI_VERSION:
		args->value = VACCEL_UAPI_VERSION;
		break;
	case DRM_VACCEL_PARAM_DEVICE_ID:
		args->value = vdev->id;
		break;
	case DRM_VACCEL_PARAM_NUM_ENGINES:
		args->value = vdev->cfg.engines;
		break;
	case DRM_VACCEL_PARAM_MEMORY_CAPACITY:
		args->value = vdev->cfg.memory;
		break;
	case DRM_VACCEL_PARAM_VA_START:
		args->value = VACCEL_VA_START;
		break;
	case DRM_VACCEL_PARAM_VA_SIZE:
		args->value = VACCEL_VA_END - VACCEL_VA_START;
		break;
	case DRM_VACCEL_PARAM_CAPABILITIES:
		args->value = DRM_VACCEL_CAP_HOTPLUG | DRM_VACCEL_CAP_EXEC_BINDINGS |
			      DRM_VACCEL_CAP_MATMUL | DRM_VACCEL_CAP_SIGNAL_EVENTFD |
			      DRM_VACCEL_CAP_ENGINE_SPLIT;
		break;
	case DRM_VACCEL_PARAM_LINK_BANDWIDTH:
		args->value = vdev->cfg.link_bw_mbps;
		break;
	case DRM_VACCEL_PARAM_LINK_LATENCY:
		args->value = vdev->cfg.link_latency_ns;
		break;
	case DRM_VACCEL_PARAM_POLL_BUDGET:
		args->value = vdev->cfg.poll_budget_ns;
		break;
	case DRM_VACCEL_PARAM_MEMORY_USED:
		args->value = atomic64_read(&vdev->mem_used);
		break;
	case DRM_VACCEL_PARAM_MAX_BOS:
		args->value = VACCEL_MAX_BOS;
		break;
	case DRM_VACCEL_PARAM_MAX_MAPPINGS:
		args->value = VACCEL_MAX_MAPPINGS;
		break;
	case DRM_VACCEL_PARAM_MAX_QUEUES:
		args->value = VACCEL_MAX_QUEUES;
		break;
	default:
		drm_dbg(drm, "unknown param %u\n", args->param);
		return -EINVAL;
	}
	return 0;
}

/*
 * Per-client usage (Documentation/gpu/drm-usage-stats.rst), after the
 * DRM core's drm-driver and drm-client-id lines: memory of the client's
 * buffer handles, and the engine time credited to it (vaccel_acct_read():
 * never more than has passed, on any engine), as one "compute" engine
 * class of the device's engines.
 */
static void vaccel_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct vaccel_file *vfile = file->driver_priv;

	drm_show_memory_stats(p, file);
	drm_printf(p, "drm-engine-compute:\t%llu ns\n", vaccel_acct_read(vfile));
	drm_printf(p, "drm-engine-capacity-compute:\t%llu\n", vfile->vdev->cfg.engines);
}

/*
 * No driver ioctl is DRM_AUTH: on accel nodes only CAP_SYS_ADMIN clients
 * count as authenticated.
 */
static const struct drm_ioctl_desc vaccel_ioctls[] = {
	DRM_IOCTL_DEF_DRV(VACCEL_GET_PARAM, vaccel_ioctl_get_param, 0),
	DRM_IOCTL_DEF_DRV(VACCEL_BO_CREATE, vaccel_ioctl_bo_create, 0),
	DRM_IOCTL_DEF_DRV(VACCEL_BO_INFO, vaccel_ioctl_bo_info, 0),
	DRM_IOCTL_DEF_DRV(VACCEL_BO_SEAL, vaccel_ioctl_bo_seal, 0),
	DRM_IOCTL_DEF_DRV(VACCEL_VM_BIND, vaccel_ioctl_vm_bind, 0),
	DRM_IOCTL_DEF_DRV(VACCEL_VM_UNBIND, vaccel_ioctl_vm_unbind, 0),
	DRM_IOCTL_DEF_DRV(VACCEL_QUEUE_CREATE, vaccel_ioctl_queue_create, 0),
	DRM_IOCTL_DEF_DRV(VACCEL_QUEUE_DESTROY, vaccel_ioctl_queue_destroy, 0),
	DRM_IOCTL_DEF_DRV(VACCEL_QUEUE_QUERY, vaccel_ioctl_queue_query, 0),
	DRM_IOCTL_DEF_DRV(VACCEL_KICK, vaccel_ioctl_kick, 0),
	DRM_IOCTL_DEF_DRV(VACCEL_WAIT_SIGNALS, vaccel_ioctl_wait_signals, 0),
	DRM_IOCTL_DEF_DRV(VACCEL_SIGNAL_WRITE, vaccel_ioctl_signal_write, 0),
	DRM_IOCTL_DEF_DRV(VACCEL_SIGNAL_EVENTFD, vaccel_ioctl_signal_eventfd, 0),
};

/* Queue pages below 4 GiB, GEM objects at their offsets above it. */
static int vaccel_mmap(struct file *filp, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff >= VACCEL_MMAP_QUEUE_BASE >> PAGE_SHIFT &&
	    vma->vm_pgoff < VACCEL_MMAP_QUEUE_END >> PAGE_SHIFT)
		return vaccel_queue_mmap(filp, vma);
	return drm_gem_mmap(filp, vma);
}

/* DRM_ACCEL_FOPS with our own mmap. */
static const struct file_operations vaccel_fops = {
	.owner = THIS_MODULE,
	.open = accel_open,
	.release = drm_release,
	.unlocked_ioctl = drm_ioctl,
	.compat_ioctl = drm_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = vaccel_mmap,
	.show_fdinfo = drm_show_fdinfo,
	.fop_flags = FOP_UNSIGNED_OFFSET,
};

static const struct drm_driver vaccel_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_COMPUTE_ACCEL,
	.open = vaccel_open,
	.postclose = vaccel_postclose,
	.show_fdinfo = vaccel_show_fdinfo,
	.gem_create_object = vaccel_gem_create_object,
	.prime_handle_to_fd = vaccel_prime_handle_to_fd,
	.gem_prime_import = vaccel_gem_prime_import,
	.gem_prime_import_sg_table = vaccel_gem_prime_import_sg_table,
	.ioctls = vaccel_ioctls,
	.num_ioctls = ARRAY_SIZE(vaccel_ioctls),
	.fops = &vaccel_fops,
	.name = DRIVER_NAME,
	.desc = DRIVER_DESC,
#ifdef VACCEL_HAVE_DRM_DRIVER_DATE
	.date = "20261122",
#endif
	/* the major is fixed; the minor is the uAPI version */
	.major = 1,
	.minor = VACCEL_UAPI_VERSION,
};

static void vaccel_device_release(struct drm_device *drm, void *unused)
{
	atomic_dec(&vaccel_live_devices);
}

/**
 * vaccel_device_probe() - create and register the DRM device of a bus device
 * @bdev: the bus device being bound
 *
 * Return: 0 or a negative errno.
 */
int vaccel_device_probe(struct vaccel_bus_dev *bdev)
{
	struct vaccel_device *vdev;
	int ret;

	ret = dma_coerce_mask_and_coherent(&bdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;

	vdev = devm_drm_dev_alloc(&bdev->dev, &vaccel_drm_driver,
				  struct vaccel_device, drm);
	if (IS_ERR(vdev))
		return PTR_ERR(vdev);
	atomic_inc(&vaccel_live_devices);
	ret = drmm_add_action_or_reset(&vdev->drm, vaccel_device_release, NULL);
	if (ret)
		return ret;

	vdev->id = bdev->id;
	vdev->cfg = bdev->cfg;
	atomic_set(&vdev->open_files, 0);
	atomic64_set(&vdev->mem_used, 0);
	atomic64_set(&vdev->mem_pinned, 0);
	atomic_set(&vdev->next_ctx_id, 0);
	atomic_set(&vdev->next_engine, 0);
	init_waitqueue_head(&vdev->event_wq);
	spin_lock_init(&vdev->split_lock);
	INIT_LIST_HEAD(&vdev->splits);

	ret = vaccel_engines_start(vdev);
	if (ret)
		return ret;
	vaccel_debugfs_device_init(vdev);

	ret = drm_dev_register(&vdev->drm, 0);
	if (ret)
		return ret;
	dev_set_drvdata(&bdev->dev, vdev);
	return 0;
}

/**
 * vaccel_device_remove() - unplug the DRM device of a bus device
 * @bdev: the bus device being unbound
 *
 * Open files keep the &struct vaccel_device alive; their ioctls fail with
 * -ENODEV from now on, their mappings are zapped (and fault back in) and
 * their queues stop with DRM_VACCEL_FAULT_REMOVED. The memory is freed
 * when the last file is closed.
 */
void vaccel_device_remove(struct vaccel_bus_dev *bdev)
{
	struct vaccel_device *vdev = dev_get_drvdata(&bdev->dev);

	drm_dev_unplug(&vdev->drm);
	vaccel_device_lost(vdev);
	/* host waiters fail with -ENODEV now; armed eventfds fire */
	vaccel_signal_device_event(vdev, NULL, false);
	dev_set_drvdata(&bdev->dev, NULL);
}

static int __init vaccel_init(void)
{
	int ret;

	if (num_devices > VACCEL_MAX_DEVICES) {
		pr_err("num_devices=%u is more than %u\n",
		       num_devices, VACCEL_MAX_DEVICES);
		return -EINVAL;
	}

	vaccel_debugfs_module_init();
	ret = vaccel_bus_init(num_devices);
	if (ret)
		vaccel_debugfs_module_exit();
	return ret;
}

static void __exit vaccel_exit(void)
{
	vaccel_bus_exit();
	vaccel_debugfs_module_exit();
}

module_init(vaccel_init);
module_exit(vaccel_exit);

MODULE_DESCRIPTION(DRIVER_DESC);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("The vaccel authors");
