/* SPDX-License-Identifier: MIT */
/*
 * The transport: the only code that reaches a device (open, close, ioctl,
 * mmap, munmap, PRIME), behind an ops table so that an in-process backend
 * can replace the kernel one without touching the rest of the library.
 * Every call returns 0 (or a value >= 0) or -errno. A call failing with
 * -ENODEV marks the transport gone: its host mappings are replaced by
 * anonymous memory, so that nothing the library or the program touches
 * afterwards faults.
 *
 * fork(): a transport belongs to the process that opened it. A
 * pthread_atfork() child handler bumps the process generation
 * (acc_fork_gen); in a child, every call on a transport of the parent
 * fails with -ECHILD without reaching the device (no ioctl: the file is
 * shared with the parent, so a GEM_CLOSE or QUEUE_DESTROY there would
 * tear down the parent's objects), and only tp_munmap() and tp_close()
 * work, on the child's own copies of the mappings and of the fd.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_TRANSPORT_H
#define ACCEL_TRANSPORT_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <drm/vaccel_accel.h>

struct tp_ops {
	const char *name;
	/* fd or -errno */
	int (*open)(const char *path, int read_only);
	void (*close)(int fd);
	/* the DRM driver's name into @buf: 0 or -errno */
	int (*driver_name)(int fd, char *buf, size_t len);
	/* 0 or -errno (restarted on EINTR/EAGAIN) */
	int (*ioctl)(int fd, unsigned long request, void *arg);
	/* 0 or -errno, not restarted: -EINTR reaches the caller (WAIT_SIGNALS) */
	int (*ioctl_once)(int fd, unsigned long request, void *arg);
	/* the address or NULL with *err set */
	void *(*mmap)(int fd, uint64_t offset, size_t len, int prot, int *err);
	int (*munmap)(void *addr, size_t len);
	/* replace [addr, addr + len) by anonymous zero pages with @prot */
	int (*replace_anon)(void *addr, size_t len, int prot);
	int (*prime_export)(int fd, uint32_t handle, int writable, int *dmabuf);
	/*
	 * an export the library imports into another device of this process
	 * and closes at once: the fd never leaves the process, so a backend
	 * may keep treating the object as unshared; NULL: prime_export
	 */
	int (*prime_export_local)(int fd, uint32_t handle, int writable, int *dmabuf);
	int (*prime_import)(int fd, int dmabuf, uint32_t *handle);
	/* 1 if the dma-buf file is read-only, 0 if not, -errno */
	int (*dmabuf_read_only)(int dmabuf);
	/* a close-on-exec duplicate of @fd, or -errno; NULL: not supported */
	int (*dup)(int fd);
	/*
	 * map @len bytes of @offset with @prot exactly at @addr, replacing what
	 * is there in one step (MAP_FIXED); NULL: the backend's mappings carry
	 * no protection, nothing to do
	 */
	int (*remap)(void *addr, int fd, uint64_t offset, size_t len, int prot);
	/*
	 * a waiting thread lends itself to the device for up to @ns: 1 if it
	 * ran some of the device's work, 0 if there was none for it; NULL:
	 * the device runs elsewhere (the module)
	 */
	int (*help)(int fd, int64_t ns);
	/*
	 * true if the device's engines run in this process and call
	 * acc_membarrier() between setting need_wakeup and their last look at
	 * the doorbells before they sleep, so that a submitter needs no fence
	 * of its own (lib/membarrier.c); NULL: false (the module)
	 */
	bool (*asym_doorbell)(int fd);
};

extern const struct tp_ops acc_tp_kernel;

struct tp_map {
	void *addr;
	size_t len;
	int prot;
	struct tp_map *prev, *next;
};

/*
 * The process generation: bumped in the child by a pthread_atfork()
 * handler. Hidden: read on the fast path without going through the GOT.
 */
extern _Atomic unsigned int acc_fork_gen __attribute__((visibility("hidden")));
/* Register the fork handlers (once per process). */
void acc_fork_init(void);

struct acc_tp {
	const struct tp_ops *ops;
	int fd;
	unsigned int gen;		/* acc_fork_gen when it was opened */
	char name[64];			/* the node, for messages */
	atomic_int gone;
	pthread_mutex_t map_lock;
	struct tp_map maps;		/* list head of live mappings */
};

int tp_open(struct acc_tp *tp, const struct tp_ops *ops, const char *path);
/* A transport over a duplicate of @fd (the caller keeps @fd). */
int tp_open_fd(struct acc_tp *tp, const struct tp_ops *ops, int fd);
void tp_close(struct acc_tp *tp);
/* 1 if @path's (or @fd's) DRM driver is @driver, 0 if not (-ENOTTY/-EINVAL: not DRM), -errno */
int tp_driver_is(const struct tp_ops *ops, const char *path, const char *driver);
int tp_fd_driver_is(const struct tp_ops *ops, int fd, const char *driver);
int tp_is_gone(const struct acc_tp *tp);

/* tp_ops.help: 1 if the calling thread ran some of the device's work. */
static inline int tp_help(const struct acc_tp *tp, int64_t ns)
{
	return tp->ops->help ? tp->ops->help(tp->fd, ns) : 0;
}

/* Opened by a parent of this process (see fork above). Async-signal-safe. */
static inline bool tp_forked(const struct acc_tp *tp)
{
	/* relaxed: the child's handler ran in this very thread, before fork() returned */
	return tp->gen != atomic_load_explicit(&acc_fork_gen, memory_order_relaxed);
}

/* 0, -ECHILD (a parent's), -ENODEV (removed). Async-signal-safe. */
static inline int tp_check(const struct acc_tp *tp)
{
	if (tp_forked(tp))
		return -ECHILD;
	/* acquire: pairs with tp_mark_gone()'s release: the mappings are replaced */
	if (atomic_load_explicit(&tp->gone, memory_order_acquire))
		return -ENODEV;
	return 0;
}
/* Declare the device removed: replace every mapping (idempotent). */
void tp_mark_gone(struct acc_tp *tp);

int tp_get_param(struct acc_tp *tp, uint32_t param, uint64_t *value);
int tp_bo_create(struct acc_tp *tp, struct drm_vaccel_bo_create *c);
int tp_bo_info(struct acc_tp *tp, struct drm_vaccel_bo_info *i);
int tp_bo_seal(struct acc_tp *tp, uint32_t handle);
int tp_gem_close(struct acc_tp *tp, uint32_t handle);
int tp_vm_bind(struct acc_tp *tp, uint32_t handle, uint32_t flags, uint64_t va, uint64_t size);
int tp_vm_unbind(struct acc_tp *tp, uint64_t va, uint64_t size);
int tp_queue_create(struct acc_tp *tp, struct drm_vaccel_queue_create *c);
int tp_queue_destroy(struct acc_tp *tp, uint32_t id);
int tp_kick(struct acc_tp *tp, uint32_t id);
int tp_wait_signals(struct acc_tp *tp, struct drm_vaccel_signal_cond *conds, uint32_t n,
		    uint32_t flags, int64_t deadline_ns, uint32_t *first);
int tp_signal_write(struct acc_tp *tp, uint32_t handle, uint64_t offset, uint32_t op,
		    uint64_t value);
/*
 * SIGNAL_WRITE without logging, locking or marking the device gone: one
 * ioctl, errno preserved. Async-signal-safe.
 */
int tp_signal_write_raw(const struct acc_tp *tp, uint32_t handle, uint64_t offset, uint32_t op,
			uint64_t value);
/* Arm @efd on @cond (DRM_IOCTL_VACCEL_SIGNAL_EVENTFD). */
int tp_signal_eventfd(struct acc_tp *tp, const struct drm_vaccel_signal_cond *cond, int efd,
		      uint32_t flags);
int tp_mmap(struct acc_tp *tp, uint64_t offset, size_t len, int prot, void **addr);
/* Map @offset again at @addr (a mapping made by tp_mmap()) with @prot, in one step. */
int tp_remap(struct acc_tp *tp, void *addr, uint64_t offset, size_t len, int prot);
void tp_munmap(struct acc_tp *tp, void *addr, size_t len);
int tp_export(struct acc_tp *tp, uint32_t handle, int writable, int *dmabuf);
/* tp_export() for an import into this process only (tp_ops.prime_export_local) */
int tp_export_local(struct acc_tp *tp, uint32_t handle, int writable, int *dmabuf);
int tp_import(struct acc_tp *tp, int dmabuf, uint32_t *handle);
int tp_dmabuf_read_only(struct acc_tp *tp, int dmabuf);
void tp_close_fd(int fd);

#endif /* ACCEL_TRANSPORT_H */
