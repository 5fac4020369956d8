// SPDX-License-Identifier: GPL-2.0-only
/*
 * debugfs: per-device state under /sys/kernel/debug/accel/vaccel<id>/ and
 * module-wide object counters under /sys/kernel/debug/vaccel/.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/ktime.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_debugfs.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include <drm/vaccel_accel.h>

#include "vaccel_drv.h"
#include "vaccel_gem.h"
#include "vaccel_queue.h"

static struct dentry *vaccel_debugfs_root;

static int vaccel_debugfs_objects_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "bus_devices %d\n", atomic_read(&vaccel_live_bus_devs));
	seq_printf(m, "devices %d\n", atomic_read(&vaccel_live_devices));
	seq_printf(m, "files %d\n", atomic_read(&vaccel_live_files));
	seq_printf(m, "bos %d\n", atomic_read(&vaccel_live_bos));
	seq_printf(m, "mappings %d\n", atomic_read(&vaccel_live_maps));
	seq_printf(m, "queues %d\n", atomic_read(&vaccel_live_queues));
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

/*
 * The contexts, buffers and vm files walk the DRM core's file list: a file
 * leaves it under filelist_mutex before its handles and VM are torn down,
 * so every file seen here is whole.
 */
static int vaccel_debugfs_files_show(struct seq_file *m,
				     void (*show)(struct seq_file *m,
						  struct drm_file *file))
{
	struct drm_debugfs_entry *entry = m->private;
	struct drm_device *drm = entry->dev;
	struct drm_file *file;

	mutex_lock(&drm->filelist_mutex);
	list_for_each_entry(file, &drm->filelist, lhead)
		show(m, file);
	mutex_unlock(&drm->filelist_mutex);
	return 0;
}

static void vaccel_debugfs_context(struct seq_file *m, struct drm_file *file)
{
	struct vaccel_file *vfile = file->driver_priv;
	unsigned int maps;

	spin_lock(&vfile->vm.lock);
	maps = vfile->vm.num_maps;
	spin_unlock(&vfile->vm.lock);
	seq_printf(m, "ctx %u pid %d bos %d mappings %u\n", vfile->id,
		   pid_nr(vfile->pid), atomic_read(&vfile->num_bos), maps);
}

static void vaccel_debugfs_buffers(struct seq_file *m, struct drm_file *file)
{
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

static void vaccel_debugfs_vm(struct seq_file *m, struct drm_file *file)
{
	struct vaccel_file *vfile = file->driver_priv;

	vaccel_vm_debugfs_show(&vfile->vm, m, vfile->id);
}

static int vaccel_debugfs_contexts_show(struct seq_file *m, void *unused)
{
	return vaccel_debugfs_files_show(m, vaccel_debugfs_context);
}

static int vaccel_debugfs_buffers_show(struct seq_file *m, void *unused)
{
	return vaccel_debugfs_files_show(m, vaccel_debugfs_buffers);
}

static int vaccel_debugfs_vm_show(struct seq_file *m, void *unused)
{
	return vaccel_debugfs_files_show(m, vaccel_debugfs_vm);
}

/*
 * vm_read: device memory as the device sees it. Write "CTX VA LEN" (LEN at
 * most VACCEL_VM_READ_MAX); reading the same open file then returns the
 * bytes in hex, or "error <errno>" if the translation failed. It goes
 * through vaccel_vm_translate(), exactly like the device model.
 */
#define VACCEL_VM_READ_MAX	4096

/**
 * struct vaccel_vm_read - state of one open vm_read file
 * @vdev: the device
 * @lock: serialises writers and readers of @out and @out_len (one open
 *	file may be used by several threads)
 * @out: the last result, or NULL
 * @out_len: its length
 */
struct vaccel_vm_read {
	struct vaccel_device *vdev;
	struct mutex lock;	/* see above */
	char *out;
	size_t out_len;
};

static int vaccel_vm_read_open(struct inode *inode, struct file *f)
{
	struct vaccel_vm_read *st = kzalloc(sizeof(*st), GFP_KERNEL);

	if (!st)
		return -ENOMEM;
	st->vdev = inode->i_private;
	mutex_init(&st->lock);
	f->private_data = st;
	return nonseekable_open(inode, f);
}

static int vaccel_vm_read_release(struct inode *inode, struct file *f)
{
	struct vaccel_vm_read *st = f->private_data;

	kvfree(st->out);
	mutex_destroy(&st->lock);
	kfree(st);
	return 0;
}

/* Copy @len bytes at @va of context @ctx; 0 or a negative errno. */
static int vaccel_vm_read_copy(struct vaccel_device *vdev, u32 ctx, u64 va,
			       u64 len, u8 *buf)
{
	struct drm_device *drm = &vdev->drm;
	struct vaccel_vm_map *map;
	struct drm_file *file;
	int ret = -ESRCH;
	void *src;

	mutex_lock(&drm->filelist_mutex);
	list_for_each_entry(file, &drm->filelist, lhead) {
		struct vaccel_file *vfile = file->driver_priv;

		if (vfile->id != ctx)
			continue;
		src = vaccel_vm_translate(&vfile->vm, va, len,
					  DRM_VACCEL_VM_READ, &map, NULL);
		if (IS_ERR(src)) {
			ret = PTR_ERR(src);
			break;
		}
		memcpy(buf, src, len);
		vaccel_vm_map_put(map);
		ret = 0;
		break;
	}
	mutex_unlock(&drm->filelist_mutex);
	return ret;
}

static ssize_t vaccel_vm_read_write(struct file *f, const char __user *ubuf,
				    size_t count, loff_t *ppos)
{
	struct vaccel_vm_read *st = f->private_data;
	char req[64], *out;
	u64 va, len;
	size_t i, out_len;
	u8 *buf;
	u32 ctx;
	int ret;

	if (count >= sizeof(req))
		return -EINVAL;
	if (copy_from_user(req, ubuf, count))
		return -EFAULT;
	req[count] = '\0';
	if (sscanf(req, "%u %llx %llu", &ctx, &va, &len) != 3 ||
	    !len || len > VACCEL_VM_READ_MAX)
		return -EINVAL;

	buf = kvmalloc(len, GFP_KERNEL);
	out = kvmalloc(2 * len + 32, GFP_KERNEL);
	if (!buf || !out) {
		kvfree(out);
		kvfree(buf);
		return -ENOMEM;
	}
	ret = vaccel_vm_read_copy(st->vdev, ctx, va, len, buf);
	if (ret) {
		out_len = scnprintf(out, 32, "error %d\n", ret);
	} else {
		for (i = 0; i < len; i++)
			sprintf(out + 2 * i, "%02x", buf[i]);
		out[2 * len] = '\n';
		out_len = 2 * len + 1;
	}
	kvfree(buf);
	/* the result is built privately and swapped in under the lock */
	mutex_lock(&st->lock);
	swap(st->out, out);
	st->out_len = out_len;
	*ppos = 0;	/* the next read starts at the new result */
	mutex_unlock(&st->lock);
	kvfree(out);
	return count;
}

static ssize_t vaccel_vm_read_read(struct file *f, char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	struct vaccel_vm_read *st = f->private_data;
	ssize_t ret = 0;

	mutex_lock(&st->lock);
	if (st->out)
		ret = simple_read_from_buffer(ubuf, count, ppos, st->out, st->out_len);
	mutex_unlock(&st->lock);
	return ret;
}

static const struct file_operations vaccel_vm_read_fops = {
	.owner = THIS_MODULE,
	.open = vaccel_vm_read_open,
	.release = vaccel_vm_read_release,
	.read = vaccel_vm_read_read,
	.write = vaccel_vm_read_write,
};

static int vaccel_debugfs_queues_show(struct seq_file *m, void *unused)
{
	struct drm_debugfs_entry *entry = m->private;
	struct vaccel_device *vdev = to_vaccel_device(entry->dev);
	unsigned int i;

	for (i = 0; i < vdev->cfg.engines; i++) {
		struct vaccel_engine *e = &vdev->engines[i];
		struct vaccel_queue *q;

		mutex_lock(&e->lock);
		list_for_each_entry(q, &e->queues, node)
			seq_printf(m, "engine %u ctx %u queue %u state %u read %llu write %llu fault %u fault_index %llu fault_addr 0x%llx blocked %d priority %u busy_until %llu depth %u split %d wait_addr 0x%llx\n",
				   i, q->vfile->id, q->id, READ_ONCE(q->ctrl->state),
				   q->core.read_index, q->write_index, q->core.fault,
				   q->core.fault_index, q->core.fault_addr, q->blocked,
				   q->priority, q->core.busy_until, q->core.depth,
				   !!q->split, q->blocked ? q->core.wait_addr : 0);
		mutex_unlock(&e->lock);
	}
	return 0;
}

static int vaccel_debugfs_engines_show(struct seq_file *m, void *unused)
{
	struct drm_debugfs_entry *entry = m->private;
	struct vaccel_device *vdev = to_vaccel_device(entry->dev);
	u64 now = ktime_get_ns();
	unsigned int i;

	for (i = 0; i < vdev->cfg.engines; i++) {
		struct vaccel_engine *e = &vdev->engines[i];
		struct vaccel_queue *q;
		unsigned int n = 0;

		mutex_lock(&e->lock);
		list_for_each_entry(q, &e->queues, node)
			n++;
		mutex_unlock(&e->lock);
		seq_printf(m, "engine %u queues %u running %d stalled %d sleeps %lld wakeups %lld\n",
			   i, n, !!e->thread, READ_ONCE(e->stall_until) > now,
			   atomic64_read(&e->sleeps), atomic64_read(&e->wakeups));
	}
	return 0;
}

static int vaccel_debugfs_stats_show(struct seq_file *m, void *unused)
{
	struct drm_debugfs_entry *entry = m->private;
	struct vaccel_device *vdev = to_vaccel_device(entry->dev);

	seq_printf(m, "packets %lld\n", atomic64_read(&vdev->stats.packets));
	seq_printf(m, "bytes %lld\n", atomic64_read(&vdev->stats.bytes));
	seq_printf(m, "faults %lld\n", atomic64_read(&vdev->stats.faults));
	seq_printf(m, "kicks %lld\n", atomic64_read(&vdev->stats.kicks));
	seq_printf(m, "sleeps %lld\n", atomic64_read(&vdev->stats.sleeps));
	seq_printf(m, "wakeups %lld\n", atomic64_read(&vdev->stats.wakeups));
	seq_printf(m, "resets %lld\n", atomic64_read(&vdev->stats.resets));
	seq_printf(m, "splits %lld\n", atomic64_read(&vdev->stats.splits));
	seq_printf(m, "split_helps %lld\n", atomic64_read(&vdev->stats.split_helps));
	seq_printf(m, "split_self_helps %lld\n",
		   atomic64_read(&vdev->stats.split_self_helps));
	seq_printf(m, "signal_wakes %lld\n", atomic64_read(&vdev->stats.signal_wakes));
	seq_printf(m, "signal_walked %lld\n", atomic64_read(&vdev->stats.signal_walked));
	seq_printf(m, "signal_walk_max %lld\n",
		   atomic64_read(&vdev->stats.signal_walk_max));
	seq_printf(m, "link_bytes %lld\n", atomic64_read(&vdev->stats.link_bytes));
	seq_printf(m, "link_ns %lld\n", atomic64_read(&vdev->stats.link_ns));
	seq_printf(m, "fpu_sections %lld\n", atomic64_read(&vdev->stats.fpu_sections));
	seq_printf(m, "fpu_ns %lld\n", atomic64_read(&vdev->stats.fpu_ns));
	seq_printf(m, "fpu_max_ns %lld\n", atomic64_read(&vdev->stats.fpu_max_ns));
	seq_printf(m, "fpu_over_100us %lld\n", atomic64_read(&vdev->stats.fpu_over_100us));
	seq_printf(m, "fpu_over_1ms %lld\n", atomic64_read(&vdev->stats.fpu_over_1ms));
	return 0;
}

/*
 * Write-only actions: "stall_engine" takes "ENGINE NS" and keeps that
 * engine idle for NS nanoseconds from now (0 ends a stall); "force_fault"
 * takes "CTX QUEUE" and stops that queue with DRM_VACCEL_FAULT_INJECTED.
 */
static ssize_t vaccel_debugfs_action(struct file *f, const char __user *ubuf,
				     size_t count, bool stall)
{
	struct vaccel_device *vdev = file_inode(f)->i_private;
	char buf[64];
	u32 a;
	u64 b;
	int ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sscanf(buf, "%u %llu", &a, &b) != 2)
		return -EINVAL;
	if (stall) {
		if (a >= vdev->cfg.engines || b > 60 * NSEC_PER_SEC)
			return -EINVAL;
		ret = vaccel_engine_stall_set(&vdev->engines[a], b);
	} else {
		ret = b > U32_MAX ? -EINVAL : vaccel_device_force_fault(vdev, a, b);
	}
	return ret ?: count;
}

static ssize_t vaccel_debugfs_stall_write(struct file *f, const char __user *ubuf,
					  size_t count, loff_t *ppos)
{
	return vaccel_debugfs_action(f, ubuf, count, true);
}

static ssize_t vaccel_debugfs_fault_write(struct file *f, const char __user *ubuf,
					  size_t count, loff_t *ppos)
{
	return vaccel_debugfs_action(f, ubuf, count, false);
}

static const struct file_operations vaccel_debugfs_stall_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = vaccel_debugfs_stall_write,
};

static const struct file_operations vaccel_debugfs_fault_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = vaccel_debugfs_fault_write,
};

/*
 * "split_stall": write "ENGINE NS" (NS at most 10 s, 0 disarms): the next
 * range that engine runs outside its own turns stops for NS once its
 * destination is mapped. Reads back "ENGINE NS", NS 0 once taken.
 */
static ssize_t vaccel_debugfs_split_stall_write(struct file *f, const char __user *ubuf,
						size_t count, loff_t *ppos)
{
	struct vaccel_device *vdev = file_inode(f)->i_private;
	char buf[64];
	u32 engine;
	u64 ns;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sscanf(buf, "%u %llu", &engine, &ns) != 2 || engine >= vdev->cfg.engines ||
	    ns > 10 * NSEC_PER_SEC)
		return -EINVAL;
	WRITE_ONCE(vdev->knobs.split_stall_ns, 0);
	WRITE_ONCE(vdev->knobs.split_stall_engine, engine);
	smp_wmb();	/* the engine before the stall: vaccel_os_split_stall() */
	WRITE_ONCE(vdev->knobs.split_stall_ns, ns);
	return count;
}

static ssize_t vaccel_debugfs_split_stall_read(struct file *f, char __user *ubuf,
					       size_t count, loff_t *ppos)
{
	struct vaccel_device *vdev = file_inode(f)->i_private;
	char buf[64];
	int len;

	len = scnprintf(buf, sizeof(buf), "%u %llu\n", READ_ONCE(vdev->knobs.split_stall_engine),
			READ_ONCE(vdev->knobs.split_stall_ns));
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static const struct file_operations vaccel_debugfs_split_stall_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = vaccel_debugfs_split_stall_read,
	.write = vaccel_debugfs_split_stall_write,
};

/* "reset": writing a true value ("1", "y") resets the device. */
static ssize_t vaccel_debugfs_reset_write(struct file *f, const char __user *ubuf,
					  size_t count, loff_t *ppos)
{
	struct vaccel_device *vdev = file_inode(f)->i_private;
	bool reset;
	int ret;

	ret = kstrtobool_from_user(ubuf, count, &reset);
	if (ret)
		return ret;
	if (!reset)
		return -EINVAL;
	ret = vaccel_device_reset(vdev);
	return ret < 0 ? ret : count;
}

static const struct file_operations vaccel_debugfs_reset_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = vaccel_debugfs_reset_write,
};

/**
 * vaccel_debugfs_device_init() - create the per-device debugfs files
 * @vdev: device, before drm_dev_register()
 *
 * The directory is created and removed by the DRM core; files hold no
 * reference beyond the device itself, which outlives them.
 */
void vaccel_debugfs_device_init(struct vaccel_device *vdev)
{
	struct dentry *root = vdev->drm.debugfs_root;

	drm_debugfs_add_file(&vdev->drm, "info", vaccel_debugfs_info_show, NULL);
	drm_debugfs_add_file(&vdev->drm, "contexts", vaccel_debugfs_contexts_show, NULL);
	drm_debugfs_add_file(&vdev->drm, "buffers", vaccel_debugfs_buffers_show, NULL);
	drm_debugfs_add_file(&vdev->drm, "vm", vaccel_debugfs_vm_show, NULL);
	drm_debugfs_add_file(&vdev->drm, "queues", vaccel_debugfs_queues_show, NULL);
	drm_debugfs_add_file(&vdev->drm, "engines", vaccel_debugfs_engines_show, NULL);
	drm_debugfs_add_file(&vdev->drm, "stats", vaccel_debugfs_stats_show, NULL);
	debugfs_create_file("vm_read", 0600, root, vdev, &vaccel_vm_read_fops);
	debugfs_create_file("stall_engine", 0200, root, vdev, &vaccel_debugfs_stall_fops);
	debugfs_create_file("force_fault", 0200, root, vdev, &vaccel_debugfs_fault_fops);
	debugfs_create_file("reset", 0200, root, vdev, &vaccel_debugfs_reset_fops);
	/* fault injection: how many of the next operations fail */
	debugfs_create_atomic_t("fail_bo_create", 0600, root, &vdev->knobs.fail_bo_create);
	debugfs_create_atomic_t("fail_vm_bind", 0600, root, &vdev->knobs.fail_vm_bind);
	debugfs_create_atomic_t("fail_queue_create", 0600, root,
				&vdev->knobs.fail_queue_create);
	debugfs_create_atomic_t("fault_access", 0600, root, &vdev->knobs.fault_access);
	debugfs_create_u64("packet_latency_ns", 0600, root, &vdev->knobs.packet_latency_ns);
	debugfs_create_bool("foreign_import_mmap", 0600, root,
			    &vdev->knobs.foreign_import_mmap);
	debugfs_create_atomic_t("split_owner_yield", 0600, root,
				&vdev->knobs.split_owner_yield);
	debugfs_create_file("split_stall", 0600, root, vdev, &vaccel_debugfs_split_stall_fops);
}
