/* SPDX-License-Identifier: MIT */
/*
 * Raw uAPI helpers for the in-process device's native tests: its files,
 * ioctls and mappings straight through the backend's ops (acc_tp_sim),
 * as the kselftests use the module's through syscalls
 * (tests/kselftest/vaccel_queue_util.h), so that every errno is the
 * backend's own. Include after internal.h and sim/sim.h.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef SIM_RAW_H
#define SIM_RAW_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define RAW_PAGE	4096ull
#define RAW_VA		0x200000000ull	/* inside the window: 8 GiB */
#define RAW_SEC		1000000000ull

static inline uint64_t raw_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * RAW_SEC + (uint64_t)t.tv_nsec;
}

/* A file of in-process device @id, or -errno. */
static inline int raw_open(unsigned int id)
{
	char path[32];

	snprintf(path, sizeof(path), "sim:%u", id);
	return acc_tp_sim.open(path, 0);
}

static inline void raw_close(int fd)
{
	acc_tp_sim.close(fd);
}

static inline int raw_ioctl(int fd, unsigned long req, void *arg)
{
	return acc_tp_sim.ioctl(fd, req, arg);
}

static inline uint64_t raw_param(int fd, uint32_t param)
{
	struct drm_vaccel_get_param p = { .param = param };

	return raw_ioctl(fd, DRM_IOCTL_VACCEL_GET_PARAM, &p) ? ~0ull : p.value;
}

/* 0 or -errno; *handle and *offset of the new object. */
static inline int raw_bo(int fd, uint64_t size, uint32_t flags, uint32_t *handle,
			 uint64_t *offset)
{
	struct drm_vaccel_bo_create c = { .size = size, .flags = flags };
	int ret = raw_ioctl(fd, DRM_IOCTL_VACCEL_BO_CREATE, &c);

	if (!ret) {
		*handle = c.handle;
		if (offset)
			*offset = c.mmap_offset;
	}
	return ret;
}

static inline int raw_close_bo(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return raw_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

static inline int raw_bind(int fd, uint32_t handle, uint32_t flags, uint64_t va, uint64_t size,
			   uint64_t bo_offset)
{
	struct drm_vaccel_vm_bind b = { .handle = handle, .flags = flags, .va = va,
					.size = size, .bo_offset = bo_offset };

	return raw_ioctl(fd, DRM_IOCTL_VACCEL_VM_BIND, &b);
}

static inline int raw_unbind(int fd, uint64_t va, uint64_t size)
{
	struct drm_vaccel_vm_unbind u = { .va = va, .size = size };

	return raw_ioctl(fd, DRM_IOCTL_VACCEL_VM_UNBIND, &u);
}

/* A mapping of @len bytes at @offset, or NULL with *err. */
static inline void *raw_mmap(int fd, uint64_t offset, size_t len, int prot, int *err)
{
	return acc_tp_sim.mmap(fd, offset, len, prot, err);
}

static inline void raw_munmap(void *p, size_t len)
{
	acc_tp_sim.munmap(p, len);
}

/* An object of @size bytes bound at @va read-write and mapped: the mapping, or NULL. */
static inline void *raw_buffer(int fd, uint64_t size, uint32_t flags, uint64_t va,
			       uint32_t *handle)
{
	uint64_t off;
	void *p;
	int err;

	if (raw_bo(fd, size, flags, handle, &off) ||
	    raw_bind(fd, *handle, DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE, va, size, 0))
		return NULL;
	p = raw_mmap(fd, off, size, PROT_READ | PROT_WRITE, &err);
	return p;
}

/**
 * struct raw_queue - a queue with its ring, doorbell and control page mapped
 */
struct raw_queue {
	int fd;
	uint32_t id, size, ring_handle;
	uint64_t ring_va;
	struct drm_vaccel_packet *ring;
	uint64_t *doorbell;
	const struct drm_vaccel_queue_control *ctrl;
	uint64_t wi;
	unsigned int kicks;
};

/* A queue of @size packets with its ring at @va: 0 or -errno. */
static inline int raw_queue_create(int fd, uint64_t va, uint32_t size, uint32_t priority,
				   struct raw_queue *q)
{
	struct drm_vaccel_queue_create c = { .ring_va = va, .ring_size = size,
					     .priority = priority };
	uint64_t bytes = (size * 64ull + RAW_PAGE - 1) & ~(RAW_PAGE - 1);
	int ret, err = 0;

	memset(q, 0, sizeof(*q));
	q->fd = fd;
	q->ring = raw_buffer(fd, bytes, 0, va, &q->ring_handle);
	if (!q->ring)
		return -ENOMEM;
	ret = raw_ioctl(fd, DRM_IOCTL_VACCEL_QUEUE_CREATE, &c);
	if (ret)
		return ret;
	q->id = c.queue_id;
	q->size = size;
	q->ring_va = va;
	q->doorbell = raw_mmap(fd, c.doorbell_offset, RAW_PAGE, PROT_READ | PROT_WRITE, &err);
	q->ctrl = raw_mmap(fd, c.control_offset, RAW_PAGE, PROT_READ, &err);
	return q->doorbell && q->ctrl ? 0 : err;
}

/* The doorbell protocol, submitter side: packet, doorbell, full fence, KICK if asked. */
static inline int raw_submit(struct raw_queue *q, const struct drm_vaccel_packet *p)
{
	struct drm_vaccel_kick k = { .queue_id = q->id };

	q->ring[q->wi % q->size] = *p;
	q->wi++;
	__atomic_store_n(q->doorbell, q->wi, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&q->ctrl->need_wakeup, __ATOMIC_RELAXED)) {
		q->kicks++;
		return raw_ioctl(q->fd, DRM_IOCTL_VACCEL_KICK, &k);
	}
	return 0;
}

/* Until the read index reaches the write index or the queue stops: 0, -EIO, -ETIMEDOUT. */
static inline int raw_drain(struct raw_queue *q, uint64_t timeout_ns)
{
	uint64_t end = raw_now() + timeout_ns;

	while (__atomic_load_n(&q->ctrl->read_index, __ATOMIC_ACQUIRE) < q->wi) {
		if (__atomic_load_n(&q->ctrl->state, __ATOMIC_ACQUIRE) != DRM_VACCEL_QUEUE_RUNNING)
			return -EIO;
		if (raw_now() > end)
			return -ETIMEDOUT;
		usleep(50);
	}
	return 0;
}

/* Until the queue leaves the running state: 0, or -ETIMEDOUT. */
static inline int raw_wait_fault(struct raw_queue *q, uint64_t timeout_ns)
{
	uint64_t end = raw_now() + timeout_ns;

	while (__atomic_load_n(&q->ctrl->state, __ATOMIC_ACQUIRE) == DRM_VACCEL_QUEUE_RUNNING) {
		if (raw_now() > end)
			return -ETIMEDOUT;
		usleep(50);
	}
	return 0;
}

/* The value of "KEY N" in a debugfs-style text; -1 if there is none. */
static inline long long raw_kv(const char *text, const char *key)
{
	size_t len = strlen(key);
	const char *p;

	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, len) && p[len] == ' ')
			return strtoll(p + len + 1, NULL, 0);
	return -1;
}

/* A counter of file @file ("stats", "objects", ...) of the device of @dev. */
static inline long long sim_stat(struct accel_device *dev, const char *file, const char *key)
{
	char buf[8192];

	if (accel_device_debug_read(dev, file, buf, sizeof(buf)) < 0)
		return -1;
	return raw_kv(buf, key);
}

/* A counter of debugfs-style file @file of the device of file @fd. */
static inline long long raw_stat(int fd, const char *file, const char *key)
{
	char buf[8192];

	if (sim_fd_debug_read(fd, file, buf, sizeof(buf)) < 0)
		return -1;
	return raw_kv(buf, key);
}

/*
 * The counter once it reached @want (or after 5 s): the engine counts a
 * step's packets and a fault just after it publishes them, as the module's
 * does, so a reader that saw the read index or the state may be early.
 */
static inline long long raw_stat_wait(int fd, const char *file, const char *key,
				      long long want)
{
	long long v = raw_stat(fd, file, key);
	int i;

	for (i = 0; i < 5000 && v < want; i++) {
		usleep(1000);
		v = raw_stat(fd, file, key);
	}
	return v;
}

/* Whether file @file of @fd's device contains @text: a pointer into a static copy, or NULL. */
static inline const char *raw_text_has(int fd, const char *file, const char *text)
{
	static char buf[65536];

	if (sim_fd_debug_read(fd, file, buf, sizeof(buf)) < 0)
		return NULL;
	return strstr(buf, text);
}

/* The in-process bus with devices @spec (ACCEL_SIM_DEVICES syntax): 0 or -errno. */
static inline int sim_setup(const char *spec)
{
	setenv("ACCEL_BACKEND", "sim", 1);
	if (spec)
		setenv("ACCEL_SIM_DEVICES", spec, 1);
	else
		unsetenv("ACCEL_SIM_DEVICES");
	return sim_bus_ids(NULL, 0) < 0 ? -EINVAL : 0;
}

#endif /* SIM_RAW_H */
