// SPDX-License-Identifier: MIT
/*
 * Buffers: create, destroy, host mapping, sealing, dma-buf export and
 * import, and the library's own references (pins). Every buffer gets a
 * device address from the device's VA allocator and is bound there
 * (VM_BIND) with the access it needs; the unbind is automatic. Imports are
 * deduplicated by GEM handle (handles are per file: closing one copy would
 * close them all). See struct accel_buffer for who holds a buffer and the
 * locking.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#define BUFFER_FLAGS (ACCEL_BUFFER_PERSISTENT | ACCEL_BUFFER_HOST | ACCEL_BUFFER_DEVICE_READ_ONLY)

static void by_handle_add(struct accel_device *dev, struct accel_buffer *b)
{
	struct accel_buffer **head = &dev->by_handle[b->handle % ACC_BY_HANDLE];

	b->hnext = *head;
	*head = b;
}

static void by_handle_del(struct accel_device *dev, struct accel_buffer *b)
{
	struct accel_buffer **pp = &dev->by_handle[b->handle % ACC_BY_HANDLE];

	for (; *pp; pp = &(*pp)->hnext)
		if (*pp == b) {
			*pp = b->hnext;
			return;
		}
}

static struct accel_buffer *by_handle_find(struct accel_device *dev, uint32_t handle)
{
	struct accel_buffer *b;

	for (b = dev->by_handle[handle % ACC_BY_HANDLE]; b; b = b->hnext)
		if (b->handle == handle)
			return b;
	return NULL;
}

/* VA + bind for a buffer with a handle; dev->lock held. */
static int place(struct accel_buffer *b)
{
	struct accel_device *dev = b->dev;
	int ret = va_alloc(&dev->va, b->size, 0, &b->va);

	if (ret) {
		acc_err("%s: no device VA for %llu bytes (handle %u): %s", dev->path,
			(unsigned long long)b->size, b->handle, strerror(-ret));
		return ret;
	}
	ret = tp_vm_bind(&dev->tp, b->handle, b->vm_flags, b->va, b->size);
	if (ret) {
		acc_err("%s: VM_BIND handle %u at 0x%llx size %llu access %s: %s", dev->path,
			b->handle, (unsigned long long)b->va, (unsigned long long)b->size,
			b->vm_flags & DRM_VACCEL_VM_WRITE ? "rw" : "r", strerror(-ret));
		va_free(&dev->va, b->va);
		b->va = 0;
	}
	return ret;
}

static int map_locked(struct accel_buffer *b, int prot)
{
	struct drm_vaccel_bo_info info = { .handle = b->handle };
	void *p;
	int ret;

	if (b->host)
		return 0;
	ret = tp_bo_info(&b->dev->tp, &info);
	if (!ret)
		ret = tp_mmap(&b->dev->tp, info.mmap_offset, (size_t)b->size, prot, &p);
	if (ret) {
		acc_err("%s: mmap of buffer 0x%llx (handle %u, %llu bytes, %s): %s", b->dev->path,
			(unsigned long long)b->va, b->handle, (unsigned long long)b->size,
			prot & PROT_WRITE ? "rw" : "r", strerror(-ret));
		return ret;
	}
	b->host = p;
	b->map_offset = info.mmap_offset;
	b->host_prot = prot;
	return 0;
}

void (*acc_test_hook)(int where, const void *obj);

int acc_buffer_new(struct accel_device *dev, uint64_t size, uint32_t bo_flags, uint32_t vm_flags,
		   int map_prot, bool internal, struct accel_buffer **out)
{
	struct drm_vaccel_bo_create c = { .size = size, .flags = bo_flags };
	struct accel_buffer *b = calloc(1, sizeof(*b));
	int ret;

	if (!b)
		return -ENOMEM;
	ret = tp_bo_create(&dev->tp, &c);
	if (ret) {
		acc_err("%s: BO_CREATE %llu bytes flags 0x%x: %s", dev->path,
			(unsigned long long)size, bo_flags, strerror(-ret));
		free(b);
		return ret;
	}
	b->dev = dev;
	b->handle = c.handle;
	b->size = c.size;
	b->bo_flags = bo_flags;
	b->vm_flags = vm_flags;
	/* the program's buffer, or the library's own (a ring, a signal page) */
	b->refs = internal ? 0 : 1;
	b->internal = internal;
	list_init(&b->pins);
	acc_dev_lock(dev);
	ret = place(b);
	if (!ret && map_prot)
		ret = map_locked(b, map_prot);
	if (ret) {
		if (b->va) {
			tp_vm_unbind(&dev->tp, b->va, b->size);
			va_free(&dev->va, b->va);
		}
		acc_dev_unlock(dev);
		tp_gem_close(&dev->tp, b->handle);
		free(b);
		return ret;
	}
	by_handle_add(dev, b);
	list_add_tail(internal ? &dev->internal : &dev->buffers, &b->node);
	acc_dev_unlock(dev);
	*out = b;
	return 0;
}

/*
 * The last holder went: unlink, unmap, unbind and close the handle, all
 * under dev->lock (held), so that no import can find the buffer once its
 * handle may be closed, and no import can get the handle back from the
 * kernel while the buffer is still in the table. The caller frees @b
 * after unlocking.
 */
static void release_locked(struct accel_buffer *b)
{
	struct accel_device *dev = b->dev;
	int ret;

	list_del(&b->node);
	by_handle_del(dev, b);
	if (b->host)
		tp_munmap(&dev->tp, b->host, b->size);
	if (b->va) {
		/* no ioctl in a child of the opener (-ECHILD): the binding is the parent's */
		ret = tp_vm_unbind(&dev->tp, b->va, b->size);
		if (ret && ret != -ENODEV && ret != -ECHILD)
			acc_warn("%s: VM_UNBIND buffer 0x%llx (handle %u): %s", dev->path,
				 (unsigned long long)b->va, b->handle, strerror(-ret));
		/*
		 * Quarantined, not reused at once: work still running on the
		 * old address faults UNMAPPED instead of writing the next buffer.
		 */
		va_retire(&dev->va, b->va);
	}
	tp_gem_close(&dev->tp, b->handle);
}

static bool held_locked(const struct accel_buffer *b)
{
	return b->refs || b->internal || !list_empty(&b->pins);
}

/*
 * The library lets go of its own buffer (a ring, a signal page): freed now
 * unless the program imported it too (then it is the program's from here).
 */
void acc_buffer_free(struct accel_buffer *b)
{
	struct accel_device *dev = b->dev;

	acc_dev_lock(dev);
	if (b->internal) {
		b->internal = false;
		if (held_locked(b)) {
			list_del(&b->node);
			list_add_tail(&dev->buffers, &b->node);
			acc_dev_unlock(dev);
			return;
		}
	}
	release_locked(b);
	acc_dev_unlock(dev);
	free(b);
}

/* accel_device_close(): free @b whoever holds it (dev->lock held). */
void acc_buffer_release_all_locked(struct accel_buffer *b)
{
	while (!list_empty(&b->pins))
		list_del(b->pins.next);	/* the pin's node is self-linked again */
	b->refs = 0;
	b->internal = false;
	release_locked(b);
	free(b);
}

void acc_buffer_pin(struct accel_buffer *buf, struct acc_pin *pin)
{
	acc_dev_lock(buf->dev);
	list_add_tail(&buf->pins, &pin->node);
	acc_dev_unlock(buf->dev);
}

void acc_buffer_unpin(struct accel_buffer *buf, struct acc_pin *pin)
{
	struct accel_device *dev = buf->dev;
	bool freed = false;

	acc_dev_lock(dev);
	list_del(&pin->node);
	if (!held_locked(buf)) {
		release_locked(buf);
		freed = true;
	}
	acc_dev_unlock(dev);
	if (freed)
		free(buf);
}

bool acc_buffer_orphaned(const struct accel_buffer *buf)
{
	struct accel_device *dev = buf->dev;
	bool orphaned;

	acc_dev_lock(dev);
	orphaned = !buf->refs;
	acc_dev_unlock(dev);
	return orphaned;
}

ACCEL_API int accel_buffer_create(struct accel_device *dev, uint64_t size, uint32_t flags,
				  struct accel_buffer **out)
{
	struct accel_buffer *b;
	uint32_t vm = DRM_VACCEL_VM_READ;
	int ret = acc_check_dev(dev, "buffer_create");

	if (ret)
		return ret;
	if (!out || !size || flags & ~BUFFER_FLAGS) {
		acc_err("buffer_create: %s: size %llu flags 0x%x: invalid", dev->path,
			(unsigned long long)size, flags);
		return -EINVAL;
	}
	if (!(flags & ACCEL_BUFFER_DEVICE_READ_ONLY))
		vm |= DRM_VACCEL_VM_WRITE;
	ret = acc_buffer_new(dev, size,
			     flags & ACCEL_BUFFER_PERSISTENT ? DRM_VACCEL_BO_PERSISTENT : 0, vm,
			     flags & ACCEL_BUFFER_HOST ? PROT_READ | PROT_WRITE : 0, false, &b);
	if (ret)
		return ret;
	b->flags = flags;
	acc_trace("%s: buffer 0x%llx size %llu flags 0x%x handle %u", dev->path,
		  (unsigned long long)b->va, (unsigned long long)b->size, flags, b->handle);
	*out = b;
	return 0;
}

ACCEL_API void accel_buffer_destroy(struct accel_buffer *buf)
{
	struct accel_device *dev;
	struct list *l;
	bool freed = false;

	if (!buf)
		return;
	dev = buf->dev;
	/* the decision and the unlink in one critical section (see release_locked()) */
	acc_dev_lock(dev);
	if (!buf->refs) {
		acc_dev_unlock(dev);
		acc_err("buffer_destroy: %s: buffer 0x%llx has no reference of the program left",
			dev->path, (unsigned long long)buf->va);
		return;
	}
	if (--buf->refs) {
		acc_dev_unlock(dev);
		return;
	}
	ACC_HOOK(ACC_HOOK_BUFFER_LAST_REF, buf);
	for (l = buf->pins.next; l != &buf->pins; l = l->next) {
		struct acc_pin *pin = container_of(l, struct acc_pin, node);

		if (pin->orphaned)
			pin->orphaned(pin);
	}
	if (!held_locked(buf)) {
		release_locked(buf);
		freed = true;
	}
	acc_dev_unlock(dev);
	acc_trace("%s: destroy buffer 0x%llx%s", dev->path, (unsigned long long)buf->va,
		  freed ? "" : " (pinned by the library: kept)");
	if (freed)
		free(buf);
}

ACCEL_API uint64_t accel_buffer_va(const struct accel_buffer *buf)
{
	return buf ? buf->va : 0;
}

ACCEL_API uint64_t accel_buffer_size(const struct accel_buffer *buf)
{
	return buf ? buf->size : 0;
}

ACCEL_API struct accel_device *accel_buffer_device(const struct accel_buffer *buf)
{
	return buf ? buf->dev : NULL;
}

int acc_buffer_map_prot(struct accel_buffer *buf, int prot, void **ptr)
{
	int ret;

	acc_dev_lock(buf->dev);
	ret = map_locked(buf, prot);
	if (!ret)
		*ptr = buf->host;
	acc_dev_unlock(buf->dev);
	return ret;
}

ACCEL_API int accel_buffer_map(struct accel_buffer *buf, void **ptr)
{
	int ret;

	if (!buf || !ptr)
		return -EINVAL;
	ret = acc_check_dev(buf->dev, "buffer_map");
	if (ret)
		return ret;
	acc_dev_lock(buf->dev);
	/* sealed is the lock's (a seal may be running in another thread) */
	ret = map_locked(buf, buf->sealed || buf->read_only ? PROT_READ : PROT_READ | PROT_WRITE);
	if (!ret)
		*ptr = buf->host;
	acc_dev_unlock(buf->dev);
	return ret;
}

ACCEL_API void *accel_buffer_host(const struct accel_buffer *buf)
{
	struct accel_device *dev;
	void *host;

	if (!buf)
		return NULL;
	dev = buf->dev;
	acc_dev_lock(dev);
	host = buf->host;
	acc_dev_unlock(dev);
	return host;
}

/*
 * Check, compute, commit: the program's writable host mapping is replaced
 * in place by a read-only one (same address: the program's pointer stays
 * valid), the writable binding by a read-only one at the same device
 * address, then BO_SEAL. If any step fails, the earlier ones are undone:
 * the mapping is writable again at the same address and the binding is
 * what it was, so a failed seal changes nothing.
 */
ACCEL_API int accel_buffer_seal(struct accel_buffer *buf)
{
	struct accel_device *dev;
	bool remapped = false, rebound = false;
	int ret, ret2;

	if (!buf)
		return -EINVAL;
	dev = buf->dev;
	ret = acc_check_dev(dev, "buffer_seal");
	if (ret)
		return ret;
	if (!(buf->flags & ACCEL_BUFFER_PERSISTENT) || buf->imported) {
		acc_err("buffer_seal: buffer 0x%llx is not a persistent buffer of this device",
			(unsigned long long)buf->va);
		return -EINVAL;
	}
	acc_dev_lock(dev);
	if (buf->sealed)
		goto out;
	if (buf->host && buf->host_prot & PROT_WRITE) {
		ret = tp_remap(&dev->tp, buf->host, buf->map_offset, (size_t)buf->size, PROT_READ);
		if (ret) {
			acc_err("buffer_seal: buffer 0x%llx: host mapping %p read-only: %s",
				(unsigned long long)buf->va, buf->host, strerror(-ret));
			goto out;
		}
		remapped = true;
	}
	if (buf->vm_flags & DRM_VACCEL_VM_WRITE) {
		ret = tp_vm_unbind(&dev->tp, buf->va, buf->size);
		if (ret) {
			acc_err("buffer_seal: VM_UNBIND 0x%llx: %s", (unsigned long long)buf->va,
				strerror(-ret));
			goto undo_host;
		}
		ret = tp_vm_bind(&dev->tp, buf->handle, DRM_VACCEL_VM_READ, buf->va, buf->size);
		if (ret) {
			acc_err("buffer_seal: VM_BIND 0x%llx read-only: %s",
				(unsigned long long)buf->va, strerror(-ret));
			goto undo_bind;
		}
		rebound = true;
	}
	ret = tp_bo_seal(&dev->tp, buf->handle);
	if (ret) {
		acc_err("buffer_seal: BO_SEAL buffer 0x%llx (handle %u): %s%s",
			(unsigned long long)buf->va, buf->handle, strerror(-ret),
			ret == -EBUSY ? " (a writable mapping or export of it exists)" : "");
		if (rebound) {
			ret2 = tp_vm_unbind(&dev->tp, buf->va, buf->size);
			if (ret2)
				acc_err("buffer_seal: undo: VM_UNBIND 0x%llx: %s; it stays bound "
					"read-only", (unsigned long long)buf->va, strerror(-ret2));
			else
				goto undo_bind;
		}
		goto undo_host;
	}
	/* commit */
	buf->sealed = true;
	if (rebound)
		buf->vm_flags = DRM_VACCEL_VM_READ;
	if (remapped)
		buf->host_prot = PROT_READ;
	goto out;
undo_bind:
	ret2 = tp_vm_bind(&dev->tp, buf->handle, buf->vm_flags, buf->va, buf->size);
	if (ret2) {
		/* not reachable in practice: the address and the mapping slot were ours */
		acc_err("buffer_seal: undo: VM_BIND 0x%llx again: %s; the buffer is unbound",
			(unsigned long long)buf->va, strerror(-ret2));
	}
undo_host:
	if (remapped) {
		ret2 = tp_remap(&dev->tp, buf->host, buf->map_offset, (size_t)buf->size,
				PROT_READ | PROT_WRITE);
		if (ret2)
			acc_err("buffer_seal: undo: host mapping %p writable again: %s; it stays "
				"read-only", buf->host, strerror(-ret2));
	}
out:
	acc_dev_unlock(dev);
	return ret;
}

ACCEL_API int accel_buffer_export(struct accel_buffer *buf, uint32_t flags, int *fd)
{
	return acc_buffer_export(buf, flags, false, fd);
}

int acc_buffer_export(struct accel_buffer *buf, uint32_t flags, bool local, int *fd)
{
	int ret, w;

	if (!buf || !fd || flags & ~ACCEL_EXPORT_READ_ONLY)
		return -EINVAL;
	ret = acc_check_dev(buf->dev, "buffer_export");
	if (ret)
		return ret;
	w = !(flags & ACCEL_EXPORT_READ_ONLY) && !buf->read_only;
	ret = local ? tp_export_local(&buf->dev->tp, buf->handle, w, fd) :
		      tp_export(&buf->dev->tp, buf->handle, w, fd);
	if (ret)
		acc_err("buffer_export: buffer 0x%llx (handle %u): %s", (unsigned long long)buf->va,
			buf->handle, strerror(-ret));
	return ret;
}

/*
 * An import, placed (or an existing buffer found by its GEM handle): with
 * one more reference of the program, or pinned by @pin for the library.
 */
static int import(struct accel_device *dev, int fd, uint32_t flags, struct acc_pin *pin,
		  struct accel_buffer **out)
{
	struct drm_vaccel_bo_info info = { 0 };
	struct accel_buffer *b;
	uint32_t handle;
	int ret, ro;

	ro = tp_dmabuf_read_only(&dev->tp, fd);
	if (ro < 0) {
		acc_err("buffer_import: %s: fd %d: %s", dev->path, fd, strerror(-ro));
		return ro;
	}
	acc_dev_lock(dev);
	ret = tp_import(&dev->tp, fd, &handle);
	if (ret) {
		acc_err("buffer_import: %s: fd %d: %s", dev->path, fd, strerror(-ret));
		goto out;
	}
	b = by_handle_find(dev, handle);
	if (b) {
		/*
		 * the same dma-buf (or our own buffer) again: one more holder
		 * (a buffer only pinned gets a reference of the program back)
		 */
		if (pin)
			list_add_tail(&b->pins, &pin->node);
		else
			b->refs++;
		*out = b;
		goto out;
	}
	info.handle = handle;
	ret = tp_bo_info(&dev->tp, &info);
	if (ret) {
		acc_err("buffer_import: %s: BO_INFO of handle %u: %s", dev->path, handle,
			strerror(-ret));
		tp_gem_close(&dev->tp, handle);
		goto out;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		tp_gem_close(&dev->tp, handle);
		ret = -ENOMEM;
		goto out;
	}
	b->dev = dev;
	b->handle = handle;
	b->size = info.size;
	b->bo_flags = info.flags;
	b->imported = true;
	list_init(&b->pins);
	if (pin)
		list_add_tail(&b->pins, &pin->node);
	else
		b->refs = 1;
	b->sealed = info.status & DRM_VACCEL_BO_STATUS_SEALED;
	b->read_only = ro || b->sealed || flags & ACCEL_BUFFER_DEVICE_READ_ONLY;
	b->flags = flags;
	if (info.flags & DRM_VACCEL_BO_PERSISTENT)
		b->flags |= ACCEL_BUFFER_PERSISTENT;
	b->vm_flags = DRM_VACCEL_VM_READ | (b->read_only ? 0 : DRM_VACCEL_VM_WRITE);
	ret = place(b);
	if (ret == -EACCES && (b->vm_flags & DRM_VACCEL_VM_WRITE)) {
		/* a dma-buf we cannot write through */
		b->read_only = true;
		b->vm_flags = DRM_VACCEL_VM_READ;
		ret = place(b);
	}
	if (ret) {
		if (pin)
			list_del(&pin->node);
		tp_gem_close(&dev->tp, handle);
		free(b);
		goto out;
	}
	by_handle_add(dev, b);
	list_add_tail(&dev->buffers, &b->node);
	*out = b;
out:
	acc_dev_unlock(dev);
	return ret;
}

ACCEL_API int accel_buffer_import(struct accel_device *dev, int fd, uint32_t flags,
				  struct accel_buffer **out)
{
	int ret = acc_check_dev(dev, "buffer_import");

	if (ret)
		return ret;
	if (!out || flags & ~ACCEL_BUFFER_DEVICE_READ_ONLY)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	return import(dev, fd, flags, NULL, out);
}

int acc_buffer_import_pinned(struct accel_device *dev, int fd, struct acc_pin *pin,
			     struct accel_buffer **out)
{
	int ret = acc_check_dev(dev, "buffer_import");

	if (ret)
		return ret;
	if (!pin || !out)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	return import(dev, fd, 0, pin, out);
}
