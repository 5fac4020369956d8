// SPDX-License-Identifier: GPL-2.0-only
/*
 * Queues: QUEUE_CREATE, QUEUE_DESTROY, QUEUE_QUERY and KICK, and the
 * doorbell and control pages user space maps to submit without system
 * calls.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include <drm/vaccel_accel.h>

#include "vaccel_drv.h"
#include "vaccel_queue.h"
#include "vaccel_trace.h"
#include "vaccel_vm.h"

static void vaccel_queue_free(struct vaccel_queue *q)
{
	struct vaccel_engine *e = q->engine;

	/* waits for the engine's step on this queue, if any, to end */
	mutex_lock(&e->lock);
	list_del(&q->node);
	mutex_unlock(&e->lock);

	/* user mappings keep their own page references */
	put_page(q->pages[0]);
	put_page(q->pages[1]);
	kfree(q);
	atomic_dec(&vaccel_live_queues);
}

int vaccel_ioctl_queue_create(struct drm_device *drm, void *data,
			      struct drm_file *file)
{
	struct vaccel_device *vdev = to_vaccel_device(drm);
	struct vaccel_file *vfile = file->driver_priv;
	struct drm_vaccel_queue_create *args = data;
	struct vaccel_vm_map *map;
	struct vaccel_engine *e;
	struct vaccel_queue *q;
	void *ring;
	u32 id;
	int ret;

	if (args->flags)
		return -EINVAL;
	if (args->ring_size < DRM_VACCEL_RING_MIN ||
	    args->ring_size > DRM_VACCEL_RING_MAX ||
	    !is_power_of_2(args->ring_size) || args->priority > DRM_VACCEL_QUEUE_PRIORITY_HIGH ||
	    args->ring_va % sizeof(struct drm_vaccel_packet))
		return -EINVAL;
	if (vaccel_inject(&vdev->knobs.fail_queue_create))
		return -ENOMEM;
	/* The ring must be readable now; the engine checks every fetch again. */
	ring = vaccel_vm_translate(&vfile->vm, args->ring_va,
				   (u64)args->ring_size * sizeof(struct drm_vaccel_packet),
				   DRM_VACCEL_VM_READ, &map, NULL);
	if (IS_ERR(ring))
		return -EFAULT;
	vaccel_vm_map_put(map);

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	q->pages[0] = alloc_page(GFP_KERNEL | __GFP_ZERO);
	q->pages[1] = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!q->pages[0] || !q->pages[1]) {
		ret = -ENOMEM;
		goto err_free;
	}
	q->doorbell = page_address(q->pages[0]);
	q->ctrl = page_address(q->pages[1]);
	/*
	 * Its engine may be asleep: the first submission must kick. The
	 * engine clears the flag once it runs with the queue on its list.
	 */
	q->ctrl->need_wakeup = 1;
	q->vfile = vfile;
	q->priority = args->priority;
	vaccel_core_queue_init(&q->core, q, args->ring_va, args->ring_size);

	/* on its engine before it is visible to KICK, QUERY and DESTROY */
	e = &vdev->engines[atomic_inc_return(&vdev->next_engine) % vdev->cfg.engines];
	q->engine = e;
	mutex_lock(&e->lock);
	list_add_tail(&q->node, &e->queues);
	mutex_unlock(&e->lock);
	atomic_inc(&vaccel_live_queues);

	/*
	 * Once stored, QUEUE_DESTROY (xa_erase(), under the xarray lock) may
	 * free the queue at any moment: its id is set while that lock is
	 * still held, and only the local copy is used afterwards.
	 */
	xa_lock(&vfile->queues);
	ret = __xa_alloc(&vfile->queues, &id, q,
			 XA_LIMIT(0, VACCEL_MAX_QUEUES - 1), GFP_KERNEL);
	if (!ret)
		q->id = id;
	xa_unlock(&vfile->queues);
	if (ret) {
		vaccel_queue_free(q);
		return ret == -EBUSY ? -ENOSPC : ret;
	}

	args->queue_id = id;
	args->doorbell_offset = VACCEL_MMAP_QUEUE_BASE + (u64)id * 2 * PAGE_SIZE;
	args->control_offset = args->doorbell_offset + PAGE_SIZE;
	return 0;

err_free:
	if (q->pages[0])
		__free_page(q->pages[0]);
	if (q->pages[1])
		__free_page(q->pages[1]);
	kfree(q);
	return ret;
}

int vaccel_ioctl_queue_destroy(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	struct vaccel_file *vfile = file->driver_priv;
	struct drm_vaccel_queue_destroy *args = data;
	struct vaccel_queue *q;

	if (args->pad)
		return -EINVAL;
	q = xa_erase(&vfile->queues, args->queue_id);
	if (!q)
		return -ENOENT;
	vaccel_queue_free(q);
	return 0;
}

int vaccel_ioctl_queue_query(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct vaccel_file *vfile = file->driver_priv;
	struct drm_vaccel_queue_query *args = data;
	struct drm_vaccel_queue_control *c;
	struct vaccel_queue *q;
	int ret = 0;

	if (args->pad)
		return -EINVAL;
	xa_lock(&vfile->queues);
	q = xa_load(&vfile->queues, args->queue_id);
	if (q) {
		c = q->ctrl;
		/* pairs with vaccel_queue_fault(): the record, then the state */
		args->state = smp_load_acquire(&c->state);
		args->read_index = READ_ONCE(c->read_index);
		args->write_index = max(READ_ONCE(q->write_index),
					args->read_index);
		args->fault = READ_ONCE(c->fault);
		args->fault_index = READ_ONCE(c->fault_index);
		args->fault_addr = READ_ONCE(c->fault_addr);
	} else {
		ret = -ENOENT;
	}
	xa_unlock(&vfile->queues);
	return ret;
}

int vaccel_ioctl_kick(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct vaccel_device *vdev = to_vaccel_device(drm);
	struct vaccel_file *vfile = file->driver_priv;
	struct drm_vaccel_kick *args = data;
	struct vaccel_queue *q;
	int idx, ret = 0;

	if (args->pad)
		return -EINVAL;
	/* engines stop after the unplug, which waits for this section */
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	xa_lock(&vfile->queues);
	q = xa_load(&vfile->queues, args->queue_id);
	if (q) {
		/* kicked before the wake: see vaccel_engine.c */
		atomic_set(&q->engine->kicked, 1);
		/* kicked before the engine's state is looked at */
		smp_mb__after_atomic();
		if (q->engine->thread)
			wake_up_process(q->engine->thread);
		atomic64_inc(&vdev->stats.kicks);
		trace_vaccel_kick(vdev->id, vfile->id, q->id,
				  READ_ONCE(q->ctrl->read_index));
	} else {
		ret = -ENOENT;
	}
	xa_unlock(&vfile->queues);
	drm_dev_exit(idx);
	return ret;
}

/**
 * vaccel_queues_fini() - destroy every queue of a closing context
 * @vfile: the context
 */
void vaccel_queues_fini(struct vaccel_file *vfile)
{
	struct vaccel_queue *q;
	unsigned long id;

	xa_for_each(&vfile->queues, id, q) {
		xa_erase(&vfile->queues, id);
		vaccel_queue_free(q);
	}
	xa_destroy(&vfile->queues);
}

/* Accessing a queue page after the device was unplugged. */
static vm_fault_t vaccel_queue_vm_fault(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static const struct vm_operations_struct vaccel_queue_vm_ops = {
	.fault = vaccel_queue_vm_fault,
};

/**
 * vaccel_queue_mmap() - map a doorbell (read-write) or control (read-only)
 * page of one of the file's own queues
 * @filp: the accel file
 * @vma: one page at VACCEL_MMAP_QUEUE_BASE + id * 2 pages (+ 1 for control)
 *
 * The page is inserted at once and holds its own reference, so it outlives
 * the queue in this mapping. An unplug zaps the mapping; later accesses
 * get SIGBUS.
 *
 * Return: 0 or a negative errno.
 */
int vaccel_queue_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct drm_file *file = filp->private_data;
	struct vaccel_file *vfile = file->driver_priv;
	u64 off = ((u64)vma->vm_pgoff << PAGE_SHIFT) - VACCEL_MMAP_QUEUE_BASE;
	bool control = (off >> PAGE_SHIFT) & 1;
	struct vaccel_queue *q;
	struct page *page = NULL;
	int idx, ret;

	if (!drm_dev_enter(file->minor->dev, &idx))
		return -ENODEV;
	ret = -EINVAL;
	if (vma->vm_end - vma->vm_start != PAGE_SIZE || !(vma->vm_flags & VM_SHARED) ||
	    off / (2 * PAGE_SIZE) >= VACCEL_MAX_QUEUES)
		goto out;
	if (control && (vma->vm_flags & (VM_WRITE | VM_EXEC))) {
		ret = -EACCES;
		goto out;
	}

	xa_lock(&vfile->queues);
	q = xa_load(&vfile->queues, off / (2 * PAGE_SIZE));
	if (q) {
		page = q->pages[control];
		get_page(page);
	}
	xa_unlock(&vfile->queues);
	if (!page)
		goto out;

	if (control)
		vm_flags_clear(vma, VM_MAYWRITE | VM_MAYEXEC);
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY);
	vma->vm_ops = &vaccel_queue_vm_ops;
	ret = vm_insert_page(vma, vma->vm_start, page);
	put_page(page);
out:
	drm_dev_exit(idx);
	return ret;
}
