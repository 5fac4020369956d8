// SPDX-License-Identifier: GPL-2.0-only
/*
 * Queues: QUEUE_CREATE, QUEUE_DESTROY, QUEUE_QUERY and KICK, and the
 * doorbell and control pages user space maps to submit without system
 * calls.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/capability.h>
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
#include "vaccel_split.h"
#include "vaccel_trace.h"
#include "vaccel_vm.h"

static void vaccel_queue_free(struct vaccel_queue *q)
{
	struct vaccel_engine *e = q->engine;

	/* waits for the engine's turn on this queue, if any, to end */
	mutex_lock(&e->lock);
	list_del(&q->node);
	mutex_unlock(&e->lock);
	/* no engine runs it now: stop its split job and its signal waiter */
	vaccel_split_cancel(q);
	vaccel_queue_fini_wait(q);
	vaccel_acct_queue_fini(q);
	vaccel_vm_tlb_flush(&q->vfile->vm, &q->tlb, true);

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
	int idx, ret;
	u32 id;

	if (VACCEL_IOCTL_DBG(drm, args->flags) ||
	    VACCEL_IOCTL_DBG(drm, args->ring_size < DRM_VACCEL_RING_MIN ||
			     args->ring_size > DRM_VACCEL_RING_MAX ||
			     !is_power_of_2(args->ring_size)) ||
	    VACCEL_IOCTL_DBG(drm, args->priority > DRM_VACCEL_QUEUE_PRIORITY_HIGH) ||
	    VACCEL_IOCTL_DBG(drm, args->ring_va % sizeof(struct drm_vaccel_packet)))
		return -EINVAL;
	/* more than the normal share of an engine, as other DRM drivers */
	if (VACCEL_IOCTL_DBG(drm, args->priority > DRM_VACCEL_QUEUE_PRIORITY_NORMAL &&
			     !capable(CAP_SYS_NICE)))
		return -EPERM;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	ret = -ENOMEM;
	if (vaccel_inject(&vdev->knobs.fail_queue_create))
		goto out_exit;
	/*
	 * The ring must be mapped readable now (the engine checks every fetch
	 * again): -ENXIO if some of it is not mapped, -EACCES if not readable.
	 */
	ring = vaccel_vm_translate(&vfile->vm, args->ring_va,
				   (u64)args->ring_size * sizeof(struct drm_vaccel_packet),
				   DRM_VACCEL_VM_READ, &map, NULL);
	if (IS_ERR(ring)) {
		ret = PTR_ERR(ring) == -EACCES ? -EACCES : -ENXIO;
		drm_dbg(drm, "ring at 0x%llx: %d\n", args->ring_va, ret);
		goto out_exit;
	}
	vaccel_vm_map_put(map);

	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		goto out_exit;
	q->pages[0] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	q->pages[1] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
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
	INIT_LIST_HEAD(&q->acct_node);
	atomic64_set(&q->charge_ns, 0);
	atomic64_set(&q->link_from, 0);
	vaccel_queue_init_wait(q);
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
		if (ret == -EBUSY)
			drm_dbg(drm, "context holds %u queues\n", VACCEL_MAX_QUEUES);
		ret = ret == -EBUSY ? -ENOSPC : ret;
		goto out_exit;
	}

	args->queue_id = id;
	args->doorbell_offset = VACCEL_MMAP_QUEUE_BASE + (u64)id * 2 * PAGE_SIZE;
	args->control_offset = args->doorbell_offset + PAGE_SIZE;
	drm_dev_exit(idx);
	return 0;

err_free:
	if (q->pages[0])
		__free_page(q->pages[0]);
	if (q->pages[1])
		__free_page(q->pages[1]);
	kfree(q);
out_exit:
	drm_dev_exit(idx);
	return ret;
}

int vaccel_ioctl_queue_destroy(struct drm_device *drm, void *data,
			       struct drm_file *file)
{
	struct vaccel_file *vfile = file->driver_priv;
	struct drm_vaccel_queue_destroy *args = data;
	struct vaccel_queue *q;

	if (VACCEL_IOCTL_DBG(drm, args->pad))
		return -EINVAL;
	mutex_lock(&vfile->queues_lock);
	q = xa_erase(&vfile->queues, args->queue_id);
	if (q)
		vaccel_queue_free(q);
	mutex_unlock(&vfile->queues_lock);
	if (VACCEL_IOCTL_DBG(drm, !q))
		return -ENOENT;
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

	if (VACCEL_IOCTL_DBG(drm, args->pad))
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
		/*
		 * The record only once the state publishes it: a fault
		 * being written now (record set, state still RUNNING) is
		 * not reported half, as a running queue with a fault.
		 */
		if (args->state != DRM_VACCEL_QUEUE_RUNNING) {
			args->fault = READ_ONCE(c->fault);
			args->fault_index = READ_ONCE(c->fault_index);
			args->fault_addr = READ_ONCE(c->fault_addr);
			args->fault_depth = READ_ONCE(c->fault_depth);
			args->fault_binding = READ_ONCE(c->fault_binding);
			args->fault_exec_index = READ_ONCE(c->fault_exec_index);
		} else {
			args->fault = DRM_VACCEL_FAULT_NONE;
			args->fault_index = 0;
			args->fault_addr = 0;
			args->fault_depth = 0;
			args->fault_binding = 0;
			args->fault_exec_index = 0;
		}
	} else {
		drm_dbg(drm, "no queue %u\n", args->queue_id);
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

	if (VACCEL_IOCTL_DBG(drm, args->pad))
		return -EINVAL;
	/* engines stop after the unplug, which waits for this section */
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	xa_lock(&vfile->queues);
	q = xa_load(&vfile->queues, args->queue_id);
	if (q) {
		vaccel_engine_wake(q->engine);
		atomic64_inc(&vdev->stats.kicks);
		trace_vaccel_kick(vdev->id, vfile->id, q->id,
				  READ_ONCE(q->ctrl->read_index));
	} else {
		drm_dbg(drm, "no queue %u\n", args->queue_id);
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

	mutex_lock(&vfile->queues_lock);
	xa_for_each(&vfile->queues, id, q) {
		xa_erase(&vfile->queues, id);
		vaccel_queue_free(q);
	}
	mutex_unlock(&vfile->queues_lock);
	xa_destroy(&vfile->queues);
}

/**
 * vaccel_queues_tlb_flush() - drop the stale cached mappings of a
 * context's queues
 * @vfile: the context, whose VM just lost a mapping
 *
 * Takes each queue's engine lock, so it waits for the turn in progress.
 */
void vaccel_queues_tlb_flush(struct vaccel_file *vfile)
{
	struct vaccel_queue *q;
	unsigned long id;

	/* no queue is freed meanwhile; engine locks nest inside */
	mutex_lock(&vfile->queues_lock);
	xa_for_each(&vfile->queues, id, q) {
		mutex_lock(&q->engine->lock);
		vaccel_vm_tlb_flush(&vfile->vm, &q->tlb, false);
		mutex_unlock(&q->engine->lock);
	}
	mutex_unlock(&vfile->queues_lock);
}

/*
 * A queue page mapping holds its page (vm_private_data, one reference per
 * VMA). The page is inserted at mmap() time; after MADV_DONTNEED or any
 * other zap, an unplug's included, it faults back in: the page is the
 * mapping's own, so a program racing with device removal reads the last
 * control state and rings a doorbell nobody reads instead of getting
 * SIGBUS; its next ioctl fails with -ENODEV.
 */
static vm_fault_t vaccel_queue_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;

	return vmf_insert_page(vma, vma->vm_start, vma->vm_private_data);
}

static void vaccel_queue_vm_open(struct vm_area_struct *vma)
{
	get_page(vma->vm_private_data);
}

static void vaccel_queue_vm_close(struct vm_area_struct *vma)
{
	put_page(vma->vm_private_data);
}

static const struct vm_operations_struct vaccel_queue_vm_ops = {
	.fault = vaccel_queue_vm_fault,
	.open = vaccel_queue_vm_open,
	.close = vaccel_queue_vm_close,
};

/**
 * vaccel_queue_mmap() - map a doorbell (read-write) or control (read-only)
 * page of one of the file's own queues
 * @filp: the accel file
 * @vma: one page at VACCEL_MMAP_QUEUE_BASE + id * 2 pages (+ 1 for control)
 *
 * The page is inserted at once and the mapping holds its own reference,
 * so it outlives the queue in this mapping. Shared mappings only (a
 * read-only mapping of an O_RDONLY file has VM_MAYSHARE but not
 * VM_SHARED).
 *
 * Return: 0 or a negative errno.
 */
int vaccel_queue_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct drm_file *file = filp->private_data;
	struct drm_device *drm = file->minor->dev;
	struct vaccel_file *vfile = file->driver_priv;
	u64 off = ((u64)vma->vm_pgoff << PAGE_SHIFT) - VACCEL_MMAP_QUEUE_BASE;
	bool control = (off >> PAGE_SHIFT) & 1;
	struct vaccel_queue *q;
	struct page *page = NULL;
	int idx, ret;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	ret = -EINVAL;
	if (VACCEL_IOCTL_DBG(drm, vma->vm_end - vma->vm_start != PAGE_SIZE) ||
	    VACCEL_IOCTL_DBG(drm, !(vma->vm_flags & VM_MAYSHARE)))
		goto out;
	if (VACCEL_IOCTL_DBG(drm, control && (vma->vm_flags & (VM_WRITE | VM_EXEC)))) {
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
	if (VACCEL_IOCTL_DBG(drm, !page))
		goto out;

	if (control)
		vm_flags_clear(vma, VM_MAYWRITE | VM_MAYEXEC);
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY);
	vma->vm_ops = &vaccel_queue_vm_ops;
	vma->vm_private_data = page;	/* the reference taken above */
	ret = vm_insert_page(vma, vma->vm_start, page);
	if (ret) {
		vma->vm_ops = NULL;
		put_page(page);
	}
out:
	drm_dev_exit(idx);
	return ret;
}
