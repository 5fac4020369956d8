// SPDX-License-Identifier: MIT
/*
 * The kernel transport: libdrm and system calls on a vaccel device file.
 * The only file of the library that calls open/close/ioctl/mmap/munmap or
 * libdrm on the device.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "internal.h"

/* ---- the kernel backend ---- */

static int k_open(const char *path, int read_only)
{
	int fd = open(path, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static void k_close(int fd)
{
	close(fd);
}

static int k_driver_name(int fd, char *buf, size_t len)
{
	drmVersionPtr v = drmGetVersion(fd);

	if (!v)
		return errno ? -errno : -ENODEV;
	snprintf(buf, len, "%.*s", v->name_len, v->name ? v->name : "");
	drmFreeVersion(v);
	return 0;
}

static int k_ioctl(int fd, unsigned long request, void *arg)
{
	/* drmIoctl() restarts on EINTR and EAGAIN */
	return drmIoctl(fd, request, arg) ? -errno : 0;
}

static int k_ioctl_once(int fd, unsigned long request, void *arg)
{
	return ioctl(fd, request, arg) ? -errno : 0;
}

static void *k_mmap(int fd, uint64_t offset, size_t len, int prot, int *err)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)offset);

	if (p == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	return p;
}

static int k_munmap(void *addr, size_t len)
{
	return munmap(addr, len) ? -errno : 0;
}

static int k_replace_anon(void *addr, size_t len, int prot)
{
	void *p = mmap(addr, len, prot, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? -errno : 0;
}

static int k_prime_export(int fd, uint32_t handle, int writable, int *dmabuf)
{
	return drmPrimeHandleToFD(fd, handle, DRM_CLOEXEC | (writable ? DRM_RDWR : 0), dmabuf) ?
	       -errno : 0;
}

static int k_prime_import(int fd, int dmabuf, uint32_t *handle)
{
	return drmPrimeFDToHandle(fd, dmabuf, handle) ? -errno : 0;
}

static int k_dmabuf_read_only(int dmabuf)
{
	int fl = fcntl(dmabuf, F_GETFL);

	if (fl < 0)
		return -errno;
	return (fl & O_ACCMODE) == O_RDONLY;
}

static int k_dup(int fd)
{
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);

	return nfd < 0 ? -errno : nfd;
}

static int k_remap(void *addr, int fd, uint64_t offset, size_t len, int prot)
{
	void *p = mmap(addr, len, prot, MAP_SHARED | MAP_FIXED, fd, (off_t)offset);

	return p == MAP_FAILED ? -errno : 0;
}

const struct tp_ops acc_tp_kernel = {
	.name = "kernel",
	.open = k_open,
	.close = k_close,
	.driver_name = k_driver_name,
	.ioctl = k_ioctl,
	.ioctl_once = k_ioctl_once,
	.mmap = k_mmap,
	.munmap = k_munmap,
	.replace_anon = k_replace_anon,
	.prime_export = k_prime_export,
	.prime_import = k_prime_import,
	.dmabuf_read_only = k_dmabuf_read_only,
	.dup = k_dup,
	.remap = k_remap,
};

/* ---- fork ---- */

_Atomic unsigned int acc_fork_gen;

static void fork_child(void)
{
	/*
	 * every transport opened before is the parent's from now on (relaxed:
	 * the child has one thread now, the one that reads it next)
	 */
	atomic_fetch_add_explicit(&acc_fork_gen, 1, memory_order_relaxed);
	acc_log_fork_child();
}

static void fork_register(void)
{
	pthread_atfork(acc_log_fork_prepare, acc_log_fork_parent, fork_child);
}

void acc_fork_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fork_register);
}

/* ---- the transport object ---- */

int tp_fd_driver_is(const struct tp_ops *ops, int fd, const char *driver)
{
	char name[64];
	int ret = ops->driver_name(fd, name, sizeof(name));

	/* drmGetVersion() of a file that is not a DRM node */
	if (ret == -ENOTTY || ret == -EINVAL)
		return 0;
	if (ret)
		return ret;
	return !strcmp(name, driver);
}

int tp_driver_is(const struct tp_ops *ops, const char *path, const char *driver)
{
	int fd = ops->open(path, 1), ret;

	if (fd < 0)
		return fd;
	ret = tp_fd_driver_is(ops, fd, driver);
	ops->close(fd);
	return ret;
}

static void tp_init(struct acc_tp *tp, const struct tp_ops *ops, const char *name)
{
	acc_fork_init();
	memset(tp, 0, sizeof(*tp));
	tp->ops = ops;
	tp->fd = -1;
	tp->gen = atomic_load_explicit(&acc_fork_gen, memory_order_relaxed);	/* this process's */
	snprintf(tp->name, sizeof(tp->name), "%s", name);
	tp->maps.prev = tp->maps.next = &tp->maps;
	pthread_mutex_init(&tp->map_lock, NULL);
}

int tp_open(struct acc_tp *tp, const struct tp_ops *ops, const char *path)
{
	int fd;

	tp_init(tp, ops, path);
	fd = ops->open(path, 0);
	if (fd < 0) {
		pthread_mutex_destroy(&tp->map_lock);
		return fd;
	}
	tp->fd = fd;
	return 0;
}

int tp_open_fd(struct acc_tp *tp, const struct tp_ops *ops, int fd)
{
	char name[64];
	int nfd;

	snprintf(name, sizeof(name), "fd %d", fd);
	tp_init(tp, ops, name);
	nfd = ops->dup ? ops->dup(fd) : -EOPNOTSUPP;
	if (nfd < 0) {
		pthread_mutex_destroy(&tp->map_lock);
		return nfd;
	}
	tp->fd = nfd;
	return 0;
}

/*
 * Unmap everything, close the file. In a child of the opener the list and
 * its lock are a snapshot of the parent's (the lock may have been held by
 * a parent thread at the fork): walk it without the lock, do not destroy
 * the lock; the child's munmap and close touch only the child.
 */
void tp_close(struct acc_tp *tp)
{
	struct tp_map *m, *next;
	bool forked = tp_forked(tp);

	for (m = tp->maps.next; m != &tp->maps; m = next) {
		next = m->next;
		tp->ops->munmap(m->addr, m->len);
		free(m);
	}
	tp->maps.prev = tp->maps.next = &tp->maps;
	if (tp->fd >= 0)
		tp->ops->close(tp->fd);
	tp->fd = -1;
	if (!forked)
		pthread_mutex_destroy(&tp->map_lock);
}

int tp_is_gone(const struct acc_tp *tp)
{
	/* acquire: pairs with the release below */
	return atomic_load_explicit(&tp->gone, memory_order_acquire);
}

void tp_mark_gone(struct acc_tp *tp)
{
	struct tp_map *m;

	pthread_mutex_lock(&tp->map_lock);
	if (!atomic_load(&tp->gone)) {
		for (m = tp->maps.next; m != &tp->maps; m = m->next)
			tp->ops->replace_anon(m->addr, m->len, m->prot);
		/* release: whoever sees gone sees the mappings replaced */
		atomic_store_explicit(&tp->gone, 1, memory_order_release);
		acc_err("%s was removed: calls on it fail with -ENODEV from now on",
			tp->name);
	}
	pthread_mutex_unlock(&tp->map_lock);
}

/* the result of a call on the device: -ENODEV means it was removed */
static int tp_result(struct acc_tp *tp, int ret)
{
	if (ret == -ENODEV)
		tp_mark_gone(tp);
	return ret;
}

static int tp_ioctl(struct acc_tp *tp, unsigned long request, void *arg)
{
	int ret = tp_check(tp);

	if (ret)
		return ret;
	return tp_result(tp, tp->ops->ioctl(tp->fd, request, arg));
}

int tp_get_param(struct acc_tp *tp, uint32_t param, uint64_t *value)
{
	struct drm_vaccel_get_param p = { .param = param };
	int ret = tp_ioctl(tp, DRM_IOCTL_VACCEL_GET_PARAM, &p);

	if (!ret)
		*value = p.value;
	return ret;
}

int tp_bo_create(struct acc_tp *tp, struct drm_vaccel_bo_create *c)
{
	return tp_ioctl(tp, DRM_IOCTL_VACCEL_BO_CREATE, c);
}

int tp_bo_info(struct acc_tp *tp, struct drm_vaccel_bo_info *i)
{
	return tp_ioctl(tp, DRM_IOCTL_VACCEL_BO_INFO, i);
}

int tp_bo_seal(struct acc_tp *tp, uint32_t handle)
{
	struct drm_vaccel_bo_seal s = { .handle = handle };

	return tp_ioctl(tp, DRM_IOCTL_VACCEL_BO_SEAL, &s);
}

int tp_gem_close(struct acc_tp *tp, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	/* after a removal the file still holds the handle: close it anyway */
	if (tp->fd < 0)
		return -EBADF;
	/* never in a child: the handle table is the parent's */
	if (tp_forked(tp))
		return -ECHILD;
	return tp->ops->ioctl(tp->fd, DRM_IOCTL_GEM_CLOSE, &c);
}

int tp_vm_bind(struct acc_tp *tp, uint32_t handle, uint32_t flags, uint64_t va, uint64_t size)
{
	struct drm_vaccel_vm_bind b = {
		.handle = handle, .flags = flags, .va = va, .size = size,
	};

	return tp_ioctl(tp, DRM_IOCTL_VACCEL_VM_BIND, &b);
}

int tp_vm_unbind(struct acc_tp *tp, uint64_t va, uint64_t size)
{
	struct drm_vaccel_vm_unbind u = { .va = va, .size = size };

	return tp_ioctl(tp, DRM_IOCTL_VACCEL_VM_UNBIND, &u);
}

int tp_queue_create(struct acc_tp *tp, struct drm_vaccel_queue_create *c)
{
	return tp_ioctl(tp, DRM_IOCTL_VACCEL_QUEUE_CREATE, c);
}

int tp_queue_destroy(struct acc_tp *tp, uint32_t id)
{
	struct drm_vaccel_queue_destroy d = { .queue_id = id };

	return tp_ioctl(tp, DRM_IOCTL_VACCEL_QUEUE_DESTROY, &d);
}

int tp_kick(struct acc_tp *tp, uint32_t id)
{
	struct drm_vaccel_kick k = { .queue_id = id };

	return tp_ioctl(tp, DRM_IOCTL_VACCEL_KICK, &k);
}

int tp_wait_signals(struct acc_tp *tp, struct drm_vaccel_signal_cond *conds, uint32_t n,
		    uint32_t flags, int64_t deadline_ns, uint32_t *first)
{
	struct drm_vaccel_wait_signals w = {
		.conds = (uintptr_t)conds, .count = n, .flags = flags,
		.timeout_ns = deadline_ns,
	};
	int ret = tp_check(tp);

	if (ret)
		return ret;
	/* not ->ioctl (drmIoctl()): -EINTR must reach the caller's restart loop */
	ret = tp_result(tp, tp->ops->ioctl_once(tp->fd, DRM_IOCTL_VACCEL_WAIT_SIGNALS, &w));
	if (!ret && first)
		*first = w.first;
	return ret;
}

int tp_signal_write(struct acc_tp *tp, uint32_t handle, uint64_t offset, uint32_t op,
		    uint64_t value)
{
	struct drm_vaccel_signal_write w = {
		.handle = handle, .op = op, .offset = offset, .value = value,
	};

	return tp_ioctl(tp, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &w);
}

int tp_signal_write_raw(const struct acc_tp *tp, uint32_t handle, uint64_t offset, uint32_t op,
			uint64_t value)
{
	struct drm_vaccel_signal_write w = {
		.handle = handle, .op = op, .offset = offset, .value = value,
	};
	int saved = errno, ret = tp_check(tp);

	if (!ret)
		ret = tp->ops->ioctl(tp->fd, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &w);
	errno = saved;
	return ret;
}

int tp_signal_eventfd(struct acc_tp *tp, const struct drm_vaccel_signal_cond *cond, int efd,
		      uint32_t flags)
{
	struct drm_vaccel_signal_eventfd a = { .cond = *cond, .fd = efd, .flags = flags };

	return tp_ioctl(tp, DRM_IOCTL_VACCEL_SIGNAL_EVENTFD, &a);
}

int tp_mmap(struct acc_tp *tp, uint64_t offset, size_t len, int prot, void **addr)
{
	struct tp_map *m;
	int err = tp_check(tp);
	void *p;

	if (err)
		return err;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	p = tp->ops->mmap(tp->fd, offset, len, prot, &err);
	if (!p) {
		free(m);
		return err;
	}
	m->addr = p;
	m->len = len;
	m->prot = prot;
	pthread_mutex_lock(&tp->map_lock);
	m->next = &tp->maps;
	m->prev = tp->maps.prev;
	tp->maps.prev->next = m;
	tp->maps.prev = m;
	pthread_mutex_unlock(&tp->map_lock);
	*addr = p;
	return 0;
}

int tp_remap(struct acc_tp *tp, void *addr, uint64_t offset, size_t len, int prot)
{
	struct tp_map *m;
	int ret = tp_check(tp);

	if (ret)
		return ret;
	if (!tp->ops->remap)
		return 0;
	pthread_mutex_lock(&tp->map_lock);
	ret = tp_result(tp, tp->ops->remap(addr, tp->fd, offset, len, prot));
	if (!ret)
		for (m = tp->maps.next; m != &tp->maps; m = m->next)
			if (m->addr == addr)
				m->prot = prot;
	pthread_mutex_unlock(&tp->map_lock);
	return ret;
}

/* Also in a child of the opener: its own copy of the mapping (see tp_close()). */
void tp_munmap(struct acc_tp *tp, void *addr, size_t len)
{
	bool forked = tp_forked(tp);
	struct tp_map *m;

	if (!addr)
		return;
	if (!forked)
		pthread_mutex_lock(&tp->map_lock);
	for (m = tp->maps.next; m != &tp->maps; m = m->next)
		if (m->addr == addr) {
			m->prev->next = m->next;
			m->next->prev = m->prev;
			free(m);
			break;
		}
	if (!forked)
		pthread_mutex_unlock(&tp->map_lock);
	tp->ops->munmap(addr, len);
}

int tp_export(struct acc_tp *tp, uint32_t handle, int writable, int *dmabuf)
{
	int ret = tp_check(tp);

	if (ret)
		return ret;
	return tp_result(tp, tp->ops->prime_export(tp->fd, handle, writable, dmabuf));
}

int tp_export_local(struct acc_tp *tp, uint32_t handle, int writable, int *dmabuf)
{
	int ret = tp_check(tp);

	if (ret)
		return ret;
	if (!tp->ops->prime_export_local)
		return tp_result(tp, tp->ops->prime_export(tp->fd, handle, writable, dmabuf));
	return tp_result(tp, tp->ops->prime_export_local(tp->fd, handle, writable, dmabuf));
}

int tp_import(struct acc_tp *tp, int dmabuf, uint32_t *handle)
{
	int ret = tp_check(tp);

	if (ret)
		return ret;
	return tp_result(tp, tp->ops->prime_import(tp->fd, dmabuf, handle));
}

int tp_dmabuf_read_only(struct acc_tp *tp, int dmabuf)
{
	return tp->ops->dmabuf_read_only(dmabuf);
}

void tp_close_fd(int fd)
{
	close(fd);
}
