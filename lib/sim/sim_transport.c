// SPDX-License-Identifier: MIT
/*
 * acc_tp_sim: the in-process device behind the transport seam
 * (lib/transport.h). A device file is a memfd of the process named
 * "vaccel-sim-file" (so the fd is real: unique, close-on-exec, visible in
 * /proc/self/fd) that a table maps to its struct sim_file; ioctls are
 * dispatched by request number to the code that reproduces the module's;
 * mmap() offsets name buffer objects and queue pages as the module's do;
 * a dma-buf is the buffer object's memfd itself.
 *
 * The fd table is read lock-free (SRCU, sim_sync.c), and so are the
 * handle and queue tables, so that SIGNAL_WRITE and KICK take no lock
 * before the signal's bucket and may run in a signal handler. Every other
 * call takes a reference on the file.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim_internal.h"

/* ---- the fd table: fd -> file, two levels of 1024 ---- */

#define SIM_FD_CHUNK	1024u
#define SIM_FD_CHUNKS	1024u

/*
 * Chunks are allocated under fdtab_lock and never freed; entries are set
 * under it too, and read under the SRCU (sim_file_lookup()).
 */
static _Atomic(_Atomic(struct sim_file *) *) fdtab[SIM_FD_CHUNKS];
static pthread_mutex_t fdtab_lock = PTHREAD_MUTEX_INITIALIZER;

struct sim_file *sim_file_lookup(int fd)
{
	_Atomic(struct sim_file *) *chunk;

	if (fd < 0 || (unsigned int)fd >= SIM_FD_CHUNK * SIM_FD_CHUNKS)
		return NULL;
	chunk = atomic_load(&fdtab[(unsigned int)fd / SIM_FD_CHUNK]);
	return chunk ? atomic_load(&chunk[(unsigned int)fd % SIM_FD_CHUNK]) : NULL;
}

/* Point @fd at @f (which gains a reference) or at nothing (NULL); the old entry. */
static int fdtab_set(int fd, struct sim_file *f, struct sim_file **old)
{
	_Atomic(struct sim_file *) *chunk;
	unsigned int c;

	if (fd < 0 || (unsigned int)fd >= SIM_FD_CHUNK * SIM_FD_CHUNKS)
		return -EMFILE;
	c = (unsigned int)fd / SIM_FD_CHUNK;
	pthread_mutex_lock(&fdtab_lock);
	chunk = atomic_load(&fdtab[c]);
	if (!chunk && f) {
		chunk = calloc(SIM_FD_CHUNK, sizeof(*chunk));
		if (!chunk) {
			pthread_mutex_unlock(&fdtab_lock);
			return -ENOMEM;
		}
		atomic_store(&fdtab[c], chunk);
	}
	*old = chunk ? atomic_exchange(&chunk[(unsigned int)fd % SIM_FD_CHUNK], f) : NULL;
	if (f)
		atomic_fetch_add(&f->refs, 1);
	pthread_mutex_unlock(&fdtab_lock);
	return 0;
}

struct sim_file *sim_file_get(int fd)
{
	unsigned int idx = sim_srcu_read_lock();
	struct sim_file *f = sim_file_lookup(fd);

	/* the table's reference keeps it alive for the read section */
	if (f)
		atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
	sim_srcu_read_unlock(idx);
	return f;
}

/* The module's postclose: queues, arms, mappings and handles go. */
static void sim_file_release(struct sim_file *f)
{
	struct sim_dev *dev = f->dev;
	unsigned int i;

	sim_queues_fini(f);
	sim_arms_fini(&f->arms);
	sim_vm_fini(&f->vm);
	for (i = 0; i < SIM_MAX_BOS; i++) {
		struct sim_bo *bo = atomic_exchange(&f->handles[i], NULL);

		/* no reader: the file had no fd and no call left */
		if (bo)
			sim_bo_put(bo);
	}
	pthread_mutex_lock(&dev->lock);
	list_del(&f->node);
	pthread_mutex_unlock(&dev->lock);
	pthread_mutex_destroy(&f->lock);
	pthread_mutex_destroy(&f->queues_lock);
	free(f->engine_ns);
	free(f);
	atomic_fetch_sub(&sim_objects.files, 1);
	sim_dev_put(dev);
}

void sim_file_put(struct sim_file *f)
{
	if (f && atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) == 1)
		sim_file_release(f);
}

/* ---- handles ---- */

struct sim_bo *sim_handle_lookup(struct sim_file *f, uint32_t h)
{
	if (!h || h > SIM_MAX_BOS)
		return NULL;
	return atomic_load(&f->handles[h - 1]);
}

struct sim_bo *sim_handle_get(struct sim_file *f, uint32_t h)
{
	unsigned int idx = sim_srcu_read_lock();
	struct sim_bo *bo = sim_handle_lookup(f, h);

	if (bo)
		sim_bo_ref(bo);
	sim_srcu_read_unlock(idx);
	return bo;
}

int sim_handle_add(struct sim_file *f, struct sim_bo *bo, uint32_t *handle)
{
	unsigned int i;

	if (f->num_bos >= SIM_MAX_BOS)
		return -ENOSPC;
	for (i = 0; i < SIM_MAX_BOS && atomic_load_explicit(&f->handles[i], memory_order_relaxed);
	     i++)
		;
	if (i == SIM_MAX_BOS)
		return -ENOSPC;
	sim_bo_ref(bo);
	f->num_bos++;
	atomic_store(&f->handles[i], bo);
	*handle = i + 1;
	return 0;
}

/* DRM_IOCTL_GEM_CLOSE: the handle goes; mappings keep the object. */
int sim_gem_close(struct sim_file *f, struct drm_gem_close *c)
{
	struct sim_bo *bo;

	/* drm_gem_close_ioctl(): an unknown handle is -EINVAL; @pad is not looked at */
	if (!c->handle || c->handle > SIM_MAX_BOS)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	bo = atomic_exchange(&f->handles[c->handle - 1], NULL);
	if (bo)
		f->num_bos--;
	pthread_mutex_unlock(&f->lock);
	if (!bo)
		return -EINVAL;
	/* SIGNAL_WRITE may be using it under the read lock */
	sim_srcu_synchronize();
	sim_bo_put(bo);
	return 0;
}

/* ---- open, close, dup ---- */

int sim_path_id(const char *path)
{
	char *end;
	long v;

	if (!path || strncmp(path, "sim:", 4) || path[4] < '0' || path[4] > '9')
		return -1;
	v = strtol(path + 4, &end, 10);
	return *end || v < 0 || v > (long)SIM_MAX_ID ? -1 : (int)v;
}

static int s_open(const char *path, int read_only)
{
	int id = sim_path_id(path), fd, ret;
	struct sim_file *f, *old;
	struct sim_dev *dev;

	if (sim_forked())
		return -ECHILD;
	if (id < 0)
		return -ENOENT;
	ret = sim_bus_init();
	if (ret)
		return ret;
	dev = sim_dev_get((unsigned int)id);
	if (!dev)
		return -ENOENT;
	if (!sim_dev_enter(dev)) {
		sim_dev_put(dev);
		return -ENODEV;
	}
	f = calloc(1, sizeof(*f));
	if (f)
		f->engine_ns = calloc(dev->cfg.engines, sizeof(*f->engine_ns));
	if (!f || !f->engine_ns) {
		free(f);
		ret = -ENOMEM;
		goto err;
	}
	fd = memfd_create(SIM_FILE_NAME, MFD_CLOEXEC);
	if (fd < 0) {
		ret = errno == EMFILE || errno == ENFILE ? -errno : -ENOMEM;
		free(f->engine_ns);
		free(f);
		goto err;
	}
	f->dev = dev;	/* the reference of sim_dev_get() */
	f->read_only = read_only;
	f->pid = getpid();
	pthread_mutex_init(&f->lock, NULL);
	pthread_mutex_init(&f->queues_lock, NULL);
	sim_vm_init(&f->vm);
	sim_arms_init(&f->arms);
	f->id = atomic_fetch_add(&dev->next_ctx_id, 1) + 1;
	pthread_mutex_lock(&dev->lock);
	list_add_tail(&dev->files, &f->node);
	pthread_mutex_unlock(&dev->lock);
	atomic_fetch_add(&sim_objects.files, 1);
	ret = fdtab_set(fd, f, &old);
	if (ret) {
		close(fd);
		atomic_init(&f->refs, 1);
		sim_dev_exit(dev);
		sim_file_put(f);
		return ret;
	}
	sim_dev_exit(dev);
	if (old) {
		/* a stale entry: its fd was closed behind the sim's back */
		sim_srcu_synchronize();
		sim_file_put(old);
	}
	return fd;
err:
	sim_dev_exit(dev);
	sim_dev_put(dev);
	return ret;
}

static void s_close(int fd)
{
	struct sim_file *old = NULL;

	/* in a child of the opener, the fd is the child's own copy: close it alone */
	if (!sim_forked() && !fdtab_set(fd, NULL, &old) && old) {
		sim_srcu_synchronize();
		sim_file_put(old);
	}
	close(fd);
}

/* A duplicate of @fd: the same file (context), as dup() of a DRM fd. */
static int s_dup(int fd)
{
	struct sim_file *f, *old;
	int nfd, ret;

	if (sim_forked())
		return -ECHILD;
	f = sim_file_get(fd);
	if (!f)
		return -EBADF;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0) {
		ret = -errno;
		sim_file_put(f);
		return ret;
	}
	ret = fdtab_set(nfd, f, &old);
	sim_file_put(f);
	if (ret) {
		close(nfd);
		return ret;
	}
	if (old) {
		sim_srcu_synchronize();
		sim_file_put(old);
	}
	return nfd;
}

bool sim_fd_is_file(int fd)
{
	unsigned int idx;
	bool ours;

	if (sim_forked())
		return false;
	idx = sim_srcu_read_lock();
	ours = sim_file_lookup(fd) != NULL;
	sim_srcu_read_unlock(idx);
	return ours;
}

static int s_driver_name(int fd, char *buf, size_t len)
{
	unsigned int idx = sim_srcu_read_lock();
	bool ours = sim_file_lookup(fd) != NULL;

	sim_srcu_read_unlock(idx);
	if (!ours)
		return fcntl(fd, F_GETFD) < 0 ? -EBADF : -ENOTTY;
	snprintf(buf, len, "vaccel");
	return 0;
}

/* ---- ioctls ---- */

static int sim_get_param(struct sim_file *f, struct drm_vaccel_get_param *p)
{
	struct sim_dev *dev = f->dev;

	if (p->pad)
		return -EINVAL;
	switch (p->param) {
	case DRM_VACCEL_PARAM_UAPI_VERSION:
		p->value = VACCEL_UAPI_VERSION;
		break;
	case DRM_VACCEL_PARAM_DEVICE_ID:
		p->value = dev->id;
		break;
	case DRM_VACCEL_PARAM_NUM_ENGINES:
		p->value = dev->cfg.engines;
		break;
	case DRM_VACCEL_PARAM_MEMORY_CAPACITY:
		p->value = dev->cfg.memory;
		break;
	case DRM_VACCEL_PARAM_VA_START:
		p->value = SIM_VA_START;
		break;
	case DRM_VACCEL_PARAM_VA_SIZE:
		p->value = SIM_VA_END - SIM_VA_START;
		break;
	case DRM_VACCEL_PARAM_CAPABILITIES:
		p->value = DRM_VACCEL_CAP_HOTPLUG | DRM_VACCEL_CAP_EXEC_BINDINGS |
			   DRM_VACCEL_CAP_MATMUL | DRM_VACCEL_CAP_SIGNAL_EVENTFD |
			   DRM_VACCEL_CAP_ENGINE_SPLIT;
		break;
	case DRM_VACCEL_PARAM_LINK_BANDWIDTH:
		p->value = dev->cfg.link_bw_mbps;
		break;
	case DRM_VACCEL_PARAM_LINK_LATENCY:
		p->value = dev->cfg.link_latency_ns;
		break;
	case DRM_VACCEL_PARAM_POLL_BUDGET:
		p->value = dev->cfg.poll_budget_ns;
		break;
	case DRM_VACCEL_PARAM_MEMORY_USED:
		p->value = atomic_load(&dev->mem_used);
		break;
	case DRM_VACCEL_PARAM_MAX_BOS:
		p->value = SIM_MAX_BOS;
		break;
	case DRM_VACCEL_PARAM_MAX_MAPPINGS:
		p->value = SIM_MAX_MAPPINGS;
		break;
	case DRM_VACCEL_PARAM_MAX_QUEUES:
		p->value = SIM_MAX_QUEUES;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/*
 * SIGNAL_WRITE and KICK: lock-free up to the signal's bucket (a signal
 * handler may call them), inside one SRCU read section.
 */
static int sim_ioctl_fast(int fd, unsigned long req, void *arg)
{
	unsigned int idx = sim_srcu_read_lock();
	struct sim_file *f = sim_file_lookup(fd);
	int ret;

	if (!f)
		ret = -EBADF;
	else if (atomic_load_explicit(&f->dev->removed, memory_order_acquire))
		ret = -ENODEV;
	else if (req == DRM_IOCTL_VACCEL_SIGNAL_WRITE)
		ret = sim_signal_write(f, arg);
	else
		ret = sim_kick(f, arg);
	sim_srcu_read_unlock(idx);
	return ret;
}

static int sim_ioctl(int fd, unsigned long req, void *arg, bool restart)
{
	struct sim_file *f;
	int ret;

	if (sim_forked())
		return -ECHILD;
	if (req == DRM_IOCTL_VACCEL_SIGNAL_WRITE || req == DRM_IOCTL_VACCEL_KICK)
		return sim_ioctl_fast(fd, req, arg);
	f = sim_file_get(fd);
	if (!f)
		return -EBADF;
	/* drm_ioctl(): every ioctl of an unplugged device */
	if (atomic_load_explicit(&f->dev->removed, memory_order_acquire)) {
		sim_file_put(f);
		return -ENODEV;
	}
	switch (req) {
	case DRM_IOCTL_VACCEL_GET_PARAM:
		ret = sim_get_param(f, arg);
		break;
	case DRM_IOCTL_VACCEL_BO_CREATE:
		ret = sim_bo_create(f, arg);
		break;
	case DRM_IOCTL_VACCEL_BO_INFO:
		ret = sim_bo_info(f, arg);
		break;
	case DRM_IOCTL_VACCEL_BO_SEAL:
		ret = sim_bo_seal(f, arg);
		break;
	case DRM_IOCTL_GEM_CLOSE:
		ret = sim_gem_close(f, arg);
		break;
	case DRM_IOCTL_VACCEL_VM_BIND:
		ret = sim_vm_bind(f, arg);
		break;
	case DRM_IOCTL_VACCEL_VM_UNBIND:
		ret = sim_vm_unbind(f, arg);
		break;
	case DRM_IOCTL_VACCEL_QUEUE_CREATE:
		ret = sim_queue_create(f, arg);
		break;
	case DRM_IOCTL_VACCEL_QUEUE_DESTROY:
		ret = sim_queue_destroy(f, arg);
		break;
	case DRM_IOCTL_VACCEL_QUEUE_QUERY:
		ret = sim_queue_query(f, arg);
		break;
	case DRM_IOCTL_VACCEL_WAIT_SIGNALS:
		ret = sim_wait_signals(f, arg, restart);
		break;
	case DRM_IOCTL_VACCEL_SIGNAL_EVENTFD:
		ret = sim_signal_eventfd(f, arg);
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	sim_file_put(f);
	return ret;
}

/* restarted after a signal handler, as drmIoctl() is */
static int s_ioctl(int fd, unsigned long req, void *arg)
{
	return sim_ioctl(fd, req, arg, true);
}

/* -EINTR reaches the caller (WAIT_SIGNALS from tp_wait_signals()) */
static int s_ioctl_once(int fd, unsigned long req, void *arg)
{
	return sim_ioctl(fd, req, arg, false);
}

/* ---- host mappings ---- */

/*
 * Every host mapping made through a device file, by address: which object
 * it maps (NULL for a queue page) and whether it is writable, so that
 * munmap() and remap() keep the object's writer count (BO_SEAL's -EBUSY).
 * hostmaps_lock protects the table; a leaf.
 */
struct sim_hostmap {
	void *addr;
	size_t len;
	struct sim_bo *bo;	/* referenced, or NULL */
	bool writable;
	struct sim_hostmap *next;
};

#define SIM_HOSTMAP_BUCKETS	256u

static struct sim_hostmap *hostmaps[SIM_HOSTMAP_BUCKETS];
static pthread_mutex_t hostmaps_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned int hostmap_hash(const void *addr)
{
	return (unsigned int)(((uintptr_t)addr >> 12) % SIM_HOSTMAP_BUCKETS);
}

static void *s_mmap(int fd, uint64_t offset, size_t len, int prot, int *err)
{
	struct sim_hostmap *hm;
	struct sim_bo *bo = NULL;
	struct sim_file *f;
	void *addr = NULL;
	int ret;

	if (sim_forked()) {
		*err = -ECHILD;
		return NULL;
	}
	f = sim_file_get(fd);
	if (!f) {
		*err = -EBADF;
		return NULL;
	}
	hm = calloc(1, sizeof(*hm));
	if (!hm)
		ret = -ENOMEM;
	else if (atomic_load(&f->dev->removed))
		ret = -ENODEV;
	else if (offset >= SIM_MMAP_QUEUE_BASE && offset < SIM_MMAP_QUEUE_END)
		ret = sim_queue_mmap(f, offset, len, prot, &addr);
	else
		ret = sim_bo_mmap(f, offset, len, prot, &addr, &bo);
	sim_file_put(f);
	if (ret) {
		free(hm);
		*err = ret;
		return NULL;
	}
	hm->addr = addr;
	hm->len = len;
	hm->bo = bo;	/* sim_bo_mmap()'s reference */
	hm->writable = prot & PROT_WRITE;
	pthread_mutex_lock(&hostmaps_lock);
	hm->next = hostmaps[hostmap_hash(addr)];
	hostmaps[hostmap_hash(addr)] = hm;
	pthread_mutex_unlock(&hostmaps_lock);
	return addr;
}

static struct sim_hostmap *hostmap_take(void *addr)
{
	struct sim_hostmap **pp, *hm = NULL;

	pthread_mutex_lock(&hostmaps_lock);
	for (pp = &hostmaps[hostmap_hash(addr)]; *pp; pp = &(*pp)->next)
		if ((*pp)->addr == addr) {
			hm = *pp;
			*pp = hm->next;
			break;
		}
	pthread_mutex_unlock(&hostmaps_lock);
	return hm;
}

static int s_munmap(void *addr, size_t len)
{
	struct sim_hostmap *hm = NULL;
	int ret;

	if (!sim_forked())
		hm = hostmap_take(addr);
	ret = munmap(addr, len) ? -errno : 0;
	if (hm) {
		if (hm->bo) {
			sim_bo_unmapped(hm->bo, hm->writable);
			sim_bo_put(hm->bo);
		}
		free(hm);
	}
	return ret;
}

static int s_replace_anon(void *addr, size_t len, int prot)
{
	void *p = mmap(addr, len, prot, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? -errno : 0;
}

/* accel_buffer_seal(): the same object's mapping again, with @prot, in one step. */
static int s_remap(void *addr, int fd, uint64_t offset, size_t len, int prot)
{
	struct sim_hostmap *hm;
	int ret = -EINVAL;

	(void)fd;
	(void)offset;
	if (sim_forked())
		return -ECHILD;
	pthread_mutex_lock(&hostmaps_lock);
	for (hm = hostmaps[hostmap_hash(addr)]; hm; hm = hm->next)
		if (hm->addr == addr)
			break;
	if (hm && hm->bo && hm->len == len) {
		ret = sim_bo_remap(hm->bo, addr, len, prot, hm->writable);
		if (!ret)
			hm->writable = prot & PROT_WRITE;
	}
	pthread_mutex_unlock(&hostmaps_lock);
	return ret;
}

/* ---- PRIME ---- */

static int s_prime_export(int fd, uint32_t handle, int writable, int *dmabuf)
{
	struct sim_file *f;
	int ret;

	if (sim_forked())
		return -ECHILD;
	f = sim_file_get(fd);
	if (!f)
		return -EBADF;
	ret = atomic_load(&f->dev->removed) ? -ENODEV :
	      sim_prime_export(f, handle, writable, dmabuf);
	sim_file_put(f);
	return ret;
}

static int s_prime_import(int fd, int dmabuf, uint32_t *handle)
{
	struct sim_file *f;
	int ret;

	if (sim_forked())
		return -ECHILD;
	f = sim_file_get(fd);
	if (!f)
		return -EBADF;
	ret = atomic_load(&f->dev->removed) ? -ENODEV : sim_prime_import(f, dmabuf, handle);
	sim_file_put(f);
	return ret;
}

static int s_dmabuf_read_only(int dmabuf)
{
	int fl = fcntl(dmabuf, F_GETFL);

	if (fl < 0)
		return -errno;
	return (fl & O_ACCMODE) == O_RDONLY;
}

const struct tp_ops acc_tp_sim = {
	.name = "sim",
	.open = s_open,
	.close = s_close,
	.driver_name = s_driver_name,
	.ioctl = s_ioctl,
	.ioctl_once = s_ioctl_once,
	.mmap = s_mmap,
	.munmap = s_munmap,
	.replace_anon = s_replace_anon,
	.prime_export = s_prime_export,
	.prime_import = s_prime_import,
	.dmabuf_read_only = s_dmabuf_read_only,
	.dup = s_dup,
	.remap = s_remap,
};
