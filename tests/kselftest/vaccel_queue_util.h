/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers for tests that run packets: buffer objects, bindings, queues,
 * the submission protocol, waiting for completion.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef VACCEL_QUEUE_UTIL_H
#define VACCEL_QUEUE_UTIL_H

#include <sched.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>

#include "vaccel_common.h"

#define PAGE		4096ull
#define RING_VA		(1ull << 32)
#define DATA_VA		(RING_VA + (1ull << 20))
#define SIG_VA		(RING_VA + (2ull << 20))
#define EXEC_VA		(RING_VA + (3ull << 20))
#define RING_N		64
#define VM_RW		(DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE)
#define DATA_SIZE	(256 * 1024)

struct q {
	uint32_t id;
	volatile uint64_t *doorbell;
	const volatile struct drm_vaccel_queue_control *ctrl;
	struct drm_vaccel_packet *ring;
	uint64_t wi;
};

struct bo {
	uint32_t handle;
	uint64_t size;
	uint8_t *map;
};

static inline uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of @n samples (sorts @v). */
static inline uint64_t median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static inline int bo_new(int fd, uint64_t size, uint32_t flags, struct bo *bo)
{
	struct drm_vaccel_bo_create c = {};
	int ret;

	memset(bo, 0, sizeof(*bo));
	ret = vaccel_bo_create(fd, size, flags, &c);
	if (ret)
		return ret;
	bo->handle = c.handle;
	bo->size = c.size;
	bo->map = vaccel_bo_mmap(fd, c.mmap_offset, c.size, PROT_READ | PROT_WRITE);
	return bo->map == MAP_FAILED ? -errno : 0;
}

static inline int queue_new_prio(int fd, uint64_t ring_va, uint32_t n,
				 struct drm_vaccel_packet *ring, uint32_t priority, struct q *q)
{
	struct drm_vaccel_queue_create c = {
		.ring_va = ring_va, .ring_size = n, .priority = priority,
	};
	void *db, *ctrl;

	memset(q, 0, sizeof(*q));
	if (ioctl(fd, DRM_IOCTL_VACCEL_QUEUE_CREATE, &c))
		return -errno;
	db = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, c.doorbell_offset);
	ctrl = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, c.control_offset);
	if (db == MAP_FAILED || ctrl == MAP_FAILED)
		return -errno;
	q->id = c.queue_id;
	q->doorbell = db;
	q->ctrl = ctrl;
	q->ring = ring;
	q->wi = 0;
	return 0;
}

static inline int queue_new(int fd, uint64_t ring_va, uint32_t n, struct drm_vaccel_packet *ring,
			    struct q *q)
{
	return queue_new_prio(fd, ring_va, n, ring, DRM_VACCEL_QUEUE_PRIORITY_NORMAL, q);
}

/*
 * The usual context of the packet tests on @fd: a ring bound read-only at
 * RING_VA with a queue on it, a data buffer at DATA_VA, a signal page at
 * SIG_VA, and a persistent buffer of @exec_size bytes (not bound) for EXEC
 * bodies. 0 or the first negative errno.
 */
static inline int packet_ctx_new(int fd, uint64_t exec_size, struct bo *ring, struct bo *data,
				 struct bo *sig, struct bo *exec, struct q *q)
{
	int ret;

	ret = bo_new(fd, RING_N * 64, 0, ring);
	if (!ret)
		ret = bo_new(fd, DATA_SIZE, 0, data);
	if (!ret)
		ret = bo_new(fd, PAGE, DRM_VACCEL_BO_SIGNAL, sig);
	if (!ret)
		ret = bo_new(fd, exec_size, DRM_VACCEL_BO_PERSISTENT, exec);
	if (!ret)
		ret = vaccel_vm_bind(fd, ring->handle, DRM_VACCEL_VM_READ, 0, RING_VA, PAGE);
	if (!ret)
		ret = vaccel_vm_bind(fd, data->handle, VM_RW, 0, DATA_VA, DATA_SIZE);
	if (!ret)
		ret = vaccel_vm_bind(fd, sig->handle, VM_RW, 0, SIG_VA, PAGE);
	if (!ret)
		ret = queue_new(fd, RING_VA, RING_N, (void *)ring->map, q);
	return ret;
}

/* drm-engine-compute of file @fd from its fdinfo, in ns; -1 if absent. */
static inline long long engine_ns(int fd)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (vaccel_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "drm-engine-compute:");
	return p ? strtoll(p + 19, NULL, 10) : -1;
}

/*
 * The submission protocol: body, then the doorbell with release, a full
 * fence, and KICK only if the engine said it sleeps.
 */
static inline int submit(int fd, struct q *q, const struct drm_vaccel_packet *p, bool *kicked)
{
	q->ring[q->wi % RING_N] = *p;
	q->wi++;
	__atomic_store_n(q->doorbell, q->wi, __ATOMIC_RELEASE);
	atomic_thread_fence(memory_order_seq_cst);
	if (__atomic_load_n(&q->ctrl->need_wakeup, __ATOMIC_RELAXED)) {
		struct drm_vaccel_kick k = { .queue_id = q->id };

		if (kicked)
			*kicked = true;
		return ioctl(fd, DRM_IOCTL_VACCEL_KICK, &k) ? -errno : 0;
	}
	return 0;
}

/*
 * Wait until debugfs shows queue @qid of device @dev blocked in a WAIT:
 * for tests that must act while a WAIT is pending, not merely submitted.
 */
static inline bool wait_blocked(unsigned int dev, uint32_t qid, uint64_t timeout_ms)
{
	uint64_t end = now_ns() + timeout_ms * 1000000ull;
	char buf[8192], *line;
	unsigned int e, c, id;

	do {
		if (vaccel_dev_debugfs(dev, "queues", buf, sizeof(buf)) > 0)
			for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
				if (sscanf(line, "engine %u ctx %u queue %u", &e, &c, &id) == 3 &&
				    id == qid && strstr(line, " blocked 1"))
					return true;
		usleep(1000);
	} while (now_ns() < end);
	return false;
}

/* Wait until the queue completed everything submitted or stopped. */
static inline bool drain(struct q *q, uint64_t timeout_ms)
{
	uint64_t end = now_ns() + timeout_ms * 1000000ull;

	while (__atomic_load_n(&q->ctrl->read_index, __ATOMIC_ACQUIRE) < q->wi) {
		if (q->ctrl->state != DRM_VACCEL_QUEUE_RUNNING || now_ns() > end)
			return false;
		sched_yield();
	}
	return true;
}

static inline struct drm_vaccel_packet pkt(uint16_t type, uint64_t a, uint64_t b, uint64_t c,
				    uint64_t d)
{
	struct drm_vaccel_packet p = { .header = type };

	p.operand[0] = a;
	p.operand[1] = b;
	p.operand[2] = c;
	p.operand[3] = d;
	return p;
}

static inline int sig_write(int fd, uint32_t handle, uint64_t offset, uint32_t op, uint64_t value)
{
	struct drm_vaccel_signal_write w = {
		.handle = handle, .op = op, .offset = offset, .value = value,
	};

	return ioctl(fd, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &w) ? -errno : 0;
}

/* WAIT_SIGNALS with a timeout relative to now; returns 0 or -errno. */
static inline int sig_wait(int fd, struct drm_vaccel_signal_cond *c, uint32_t n, uint32_t flags,
		    int64_t timeout_ms, uint32_t *first)
{
	struct drm_vaccel_wait_signals w = {
		.conds = (uintptr_t)c, .count = n, .flags = flags,
		.timeout_ns = (int64_t)now_ns() + timeout_ms * 1000000,
	};
	int ret = ioctl(fd, DRM_IOCTL_VACCEL_WAIT_SIGNALS, &w) ? -errno : 0;

	if (first)
		*first = w.first;
	return ret;
}

static inline struct drm_vaccel_signal_cond cond(uint32_t handle, uint64_t offset, uint64_t value,
					  uint32_t c)
{
	struct drm_vaccel_signal_cond k = {
		.handle = handle, .cond = c, .offset = offset, .value = value,
	};

	return k;
}

/*
 * Copy @n packets into the persistent buffer @exec, drop its writable
 * mapping, seal it and bind it read-only at @va: a body EXEC can run.
 */
static inline int seal_body(int fd, struct bo *exec, const struct drm_vaccel_packet *p,
			    unsigned int n, uint64_t va)
{
	struct drm_vaccel_bo_seal s = { .handle = exec->handle };

	memcpy(exec->map, p, n * sizeof(*p));
	if (munmap(exec->map, exec->size))
		return -errno;
	exec->map = NULL;
	if (ioctl(fd, DRM_IOCTL_VACCEL_BO_SEAL, &s))
		return -errno;
	return vaccel_vm_bind(fd, exec->handle, DRM_VACCEL_VM_READ, 0, va, exec->size);
}

/* Completion action of a packet. */
static inline struct drm_vaccel_packet completing(struct drm_vaccel_packet p, uint64_t addr,
						  uint32_t op, uint64_t value)
{
	p.completion_addr = addr;
	p.completion_op = op;
	p.completion_value = value;
	return p;
}

/*
 * What another context's control plane costs beside busy queues: open a
 * second file on device @id, then @n times create and destroy a queue on
 * it; returns the worst pair in ns (0 if a call failed), and in *@close_ns
 * how long closing that file took.
 */
static inline uint64_t control_plane_worst(unsigned int id, unsigned int n, uint64_t *close_ns)
{
	struct drm_vaccel_queue_destroy d = {};
	uint64_t t0, worst = 0;
	struct bo ring;
	unsigned int i;
	struct q q;
	int fd = vaccel_open(id);

	if (fd < 0 || bo_new(fd, RING_N * 64, 0, &ring) ||
	    vaccel_vm_bind(fd, ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA, PAGE))
		return 0;
	for (i = 0; i < n; i++) {
		t0 = now_ns();
		if (queue_new(fd, RING_VA, RING_N, (void *)ring.map, &q))
			return 0;
		d.queue_id = q.id;
		if (ioctl(fd, DRM_IOCTL_VACCEL_QUEUE_DESTROY, &d))
			return 0;
		if (now_ns() - t0 > worst)
			worst = now_ns() - t0;
		munmap((void *)q.doorbell, PAGE);
		munmap((void *)q.ctrl, PAGE);
	}
	munmap(ring.map, ring.size);
	t0 = now_ns();
	close(fd);
	*close_ns = now_ns() - t0;
	return worst;
}

#endif /* VACCEL_QUEUE_UTIL_H */
