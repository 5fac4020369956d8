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
 * call takes a reference on the file. A descriptor the sim handed out is
 * found through the fd table without a system call; any other through
 * fstat() (below).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_internal.h"

/*
 * ---- the file table: identity -> file; the fd table: fd -> owner ----
 *
 * A file is found by what its fd names, as the kernel finds a struct file:
 * fstat() gives the memfd's device and inode, which every dup() of any of
 * its fds shares, and the file table maps that identity to the file. An fd
 * number means nothing by itself: once closed and reused for another file
 * it names that file (or none), and dup2() over an fd makes it name what
 * it was given. The file keeps a descriptor of its own on the memfd, so
 * its identity cannot be reused while the structure lives.
 *
 * The fd table says which file each descriptor the sim handed out (open,
 * dup) belongs to, so that closing it drops that file's count (@nfds)
 * whatever the number names by then. The file leaves the file table when
 * its count reaches 0: a program's own dup() of one of its fds names no
 * file after that (Documentation/sim.rst, *Differences*).
 *
 * The fd table is also the hot calls' lookup (KICK, SIGNAL_WRITE,
 * WAIT_SIGNALS: the ones the library makes per collective call;
 * sim_file_lookup_hot()): a number in it names its file without a system
 * call (an fstat() was one of the two system calls of a KICK that wakes
 * an engine, one of SIGNAL_WRITE's and WAIT_SIGNALS's). The entry follows
 * every change of the number the sim can see: the sim's close() empties it
 * before the number is free (so a close and an open() of any other file
 * at the same number, or a dup2() onto it after that, find no entry:
 * fstat() decides, -EBADF as before), and the sim's open and dup set it
 * after the kernel handed the number out (replacing an entry left behind,
 * see fdtab_claim()). What the sim cannot see, as the kernel would, is a
 * program closing a descriptor the sim handed out behind its back
 * (close() or dup2() instead of the library's close): until the sim hands
 * that number out again, the hot calls on that number still reach the
 * sim's file, where the module's reach whatever file the number names by
 * then. Every other call (accel_device_open_fd()'s dup, mmap, GET_PARAM,
 * ...) looks the number up with fstat() (sim_file_lookup()), as before.
 * Only a program that closes the library's own descriptors sees the
 * difference (Documentation/sim.rst, *Differences*).
 *
 * idtab buckets, each file's @id_next, the fd table's chunk pointers and
 * entries are read lock-free under the SRCU (sim_file_lookup());
 * fdtab_lock serialises every change of both tables and of @nfds.
 */

#define SIM_FD_CHUNK	1024u
#define SIM_FD_CHUNKS	1024u
#define SIM_ID_BUCKETS	256u

static _Atomic(struct sim_file *) idtab[SIM_ID_BUCKETS];
/* chunks are allocated under fdtab_lock and never freed */
static _Atomic(_Atomic(struct sim_file *) *) fdtab[SIM_FD_CHUNKS];
static pthread_mutex_t fdtab_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned int id_hash(dev_t dev, ino_t ino)
{
	return (unsigned int)(((uint64_t)ino * 31 + (uint64_t)dev) % SIM_ID_BUCKETS);
}

/*
 * The file tables of the parents (fork()): a child keeps each ancestor's
 * as it was at the fork, frozen (never changed, its files never freed in
 * the child), so that the child's copies of their fds are told apart from
 * other files: -ECHILD. Set only by the fork handler.
 */
struct sim_idtab_gen {
	struct sim_idtab_gen *prev;
	struct sim_file *head[SIM_ID_BUCKETS];
};

static struct sim_idtab_gen *idtab_parents;

/* The live file of identity @st (SRCU read lock held), or NULL. */
static struct sim_file *idtab_find(const struct stat *st)
{
	struct sim_file *f;

	for (f = atomic_load(&idtab[id_hash(st->st_dev, st->st_ino)]); f;
	     f = atomic_load(&f->id_next))
		if (f->st_ino == st->st_ino && f->st_dev == st->st_dev)
			return f;
	return NULL;
}

/* The file the sim handed @fd out for (SRCU read lock held), or NULL. No system call. */
static struct sim_file *fdtab_find(int fd)
{
	_Atomic(struct sim_file *) *chunk;

	if (fd < 0 || (unsigned int)fd >= SIM_FD_CHUNK * SIM_FD_CHUNKS)
		return NULL;
	chunk = atomic_load(&fdtab[(unsigned int)fd / SIM_FD_CHUNK]);
	return chunk ? atomic_load(&chunk[(unsigned int)fd % SIM_FD_CHUNK]) : NULL;
}

struct sim_file *sim_file_lookup(int fd)
{
	struct stat st;

	/* fstat() is async-signal-safe: SIGNAL_WRITE may come from a handler */
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode))
		return NULL;
	return idtab_find(&st);
}

/*
 * The hot calls' lookup (KICK, SIGNAL_WRITE, WAIT_SIGNALS, help; SRCU read
 * lock held): a number the sim handed out through the fd table, with no
 * system call; any other through fstat().
 */
static struct sim_file *sim_file_lookup_hot(int fd)
{
	struct sim_file *f = fdtab_find(fd);

	return f ? f : sim_file_lookup(fd);
}

/* @fd names a file of a parent of this process (fork()). */
static bool fd_of_parent(int fd)
{
	struct sim_idtab_gen *g;
	struct sim_file *f;
	struct stat st;

	if (!idtab_parents || fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode))
		return false;
	for (g = idtab_parents; g; g = g->prev)
		for (f = g->head[id_hash(st.st_dev, st.st_ino)]; f; f = atomic_load(&f->id_next))
			if (f->st_ino == st.st_ino && f->st_dev == st.st_dev)
				return true;
	return false;
}

/* The error for an fd that names no file of this process's sim. */
static int no_file(int fd)
{
	return fd_of_parent(fd) ? -ECHILD : -EBADF;
}

/* Take @f out of the file table (fdtab_lock held); its reference is the caller's to drop. */
static void idtab_del(struct sim_file *f)
{
	_Atomic(struct sim_file *) *pp = &idtab[id_hash(f->st_dev, f->st_ino)];
	struct sim_file *c;

	while ((c = atomic_load(pp))) {
		if (c == f) {
			/* readers standing on @f still see the rest of the chain */
			atomic_store(pp, atomic_load(&f->id_next));
			return;
		}
		pp = &c->id_next;
	}
}

/* One descriptor of @f fewer (fdtab_lock held): @f itself if it just left the file table. */
static struct sim_file *file_fd_dropped(struct sim_file *f)
{
	if (!f || --f->nfds)
		return NULL;
	idtab_del(f);
	return f;
}

/* A file that left the file table: wait for the readers that may have found it, drop it. */
static void file_unpublished(struct sim_file *dead)
{
	if (!dead)
		return;
	sim_srcu_synchronize();
	sim_file_put(dead);
}

/*
 * @fd, just handed out by the kernel, is a descriptor of @f (@first: @f's
 * first, which publishes @f in the file table with the table's reference,
 * its initial one). -EBADF if @f left the table meanwhile (a dup racing
 * with the last close); -EMFILE, -ENOMEM.
 */
static int fdtab_claim(int fd, struct sim_file *f, bool first)
{
	_Atomic(struct sim_file *) *chunk;
	struct sim_file *stale, *dead;
	unsigned int c, h;

	if (fd < 0 || (unsigned int)fd >= SIM_FD_CHUNK * SIM_FD_CHUNKS)
		return -EMFILE;
	c = (unsigned int)fd / SIM_FD_CHUNK;
	pthread_mutex_lock(&fdtab_lock);
	if (!first && !f->nfds) {
		pthread_mutex_unlock(&fdtab_lock);
		return -EBADF;
	}
	chunk = atomic_load(&fdtab[c]);
	if (!chunk) {
		chunk = calloc(SIM_FD_CHUNK, sizeof(*chunk));
		if (!chunk) {
			pthread_mutex_unlock(&fdtab_lock);
			return -ENOMEM;
		}
		/* (calloc's zeroes are NULL entries: atomic pointers have no other representation) */
		atomic_store(&fdtab[c], chunk);
	}
	if (first) {
		h = id_hash(f->st_dev, f->st_ino);
		atomic_store(&f->id_next, atomic_load(&idtab[h]));
		atomic_store(&idtab[h], f);
	}
	/*
	 * A descriptor the sim handed out under this number was closed behind
	 * its back; until now lookups of the number found that file (see the top).
	 */
	stale = atomic_exchange(&chunk[(unsigned int)fd % SIM_FD_CHUNK], f);
	f->nfds++;
	dead = file_fd_dropped(stale);
	pthread_mutex_unlock(&fdtab_lock);
	file_unpublished(dead);
	return 0;
}

/* @fd, handed out by the sim, is being closed: its file's count drops. */
static void fdtab_release(int fd)
{
	_Atomic(struct sim_file *) *chunk;
	struct sim_file *f = NULL, *dead;

	if (fd < 0 || (unsigned int)fd >= SIM_FD_CHUNK * SIM_FD_CHUNKS)
		return;
	pthread_mutex_lock(&fdtab_lock);
	chunk = atomic_load(&fdtab[(unsigned int)fd / SIM_FD_CHUNK]);
	/* empty before close() frees the number: see the top */
	if (chunk)
		f = atomic_exchange(&chunk[(unsigned int)fd % SIM_FD_CHUNK], NULL);
	dead = file_fd_dropped(f);
	pthread_mutex_unlock(&fdtab_lock);
	file_unpublished(dead);
}

static struct sim_file *file_get(int fd, bool hot)
{
	unsigned int idx = sim_srcu_read_lock();
	struct sim_file *f = hot ? sim_file_lookup_hot(fd) : sim_file_lookup(fd);

	/* the table's reference keeps it alive for the read section */
	if (f)
		atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
	sim_srcu_read_unlock(idx);
	return f;
}

struct sim_file *sim_file_get(int fd)
{
	return file_get(fd, false);
}

/* sim_file_get() through the hot calls' lookup. */
static struct sim_file *sim_file_get_hot(int fd)
{
	return file_get(fd, true);
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
	close(f->fd);
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
	struct sim_file *f;
	struct sim_dev *dev;
	struct stat st;

	if (id < 0)
		return -ENOENT;
	ret = sim_bus_init();
	if (ret)
		return ret;
	sim_signal_init();
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
	/* the file's own descriptor: its identity; the caller gets a duplicate */
	f->fd = memfd_create(SIM_FILE_NAME, MFD_CLOEXEC);
	fd = f->fd < 0 || fstat(f->fd, &st) ? -1 : fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		ret = errno == EMFILE || errno == ENFILE ? -errno : -ENOMEM;
		if (f->fd >= 0)
			close(f->fd);
		free(f->engine_ns);
		free(f);
		goto err;
	}
	f->st_dev = st.st_dev;
	f->st_ino = st.st_ino;
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
	atomic_init(&f->refs, 1);	/* the file table's, from fdtab_claim() on */
	ret = fdtab_claim(fd, f, true);
	sim_dev_exit(dev);
	if (ret) {
		close(fd);
		sim_file_put(f);
		return ret;
	}
	return fd;
err:
	sim_dev_exit(dev);
	sim_dev_put(dev);
	return ret;
}

/*
 * In a child of the opener (fork()) the fd is the child's copy of a
 * parent's: the child's fd table does not have it, it is closed alone.
 */
static void s_close(int fd)
{
	fdtab_release(fd);
	close(fd);
}

/*
 * A duplicate of @fd (one the sim handed out, or the program's own dup()
 * of one): another descriptor of the same file (context), as dup() of a
 * DRM fd, which keeps the file open until it is closed through s_close().
 */
static int s_dup(int fd)
{
	struct sim_file *f;
	int nfd, ret;

	f = sim_file_get(fd);
	if (!f)
		return no_file(fd);
	nfd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0) {
		ret = -errno;
		sim_file_put(f);
		return ret;
	}
	ret = fdtab_claim(nfd, f, false);
	sim_file_put(f);
	if (ret) {
		close(nfd);
		return ret;
	}
	return nfd;
}

bool sim_fd_is_file(int fd)
{
	unsigned int idx = sim_srcu_read_lock();
	bool ours = sim_file_lookup(fd) != NULL;

	sim_srcu_read_unlock(idx);
	return ours || fd_of_parent(fd);
}

static int s_driver_name(int fd, char *buf, size_t len)
{
	unsigned int idx = sim_srcu_read_lock();
	bool ours = sim_file_lookup(fd) != NULL;

	sim_srcu_read_unlock(idx);
	if (!ours && fd_of_parent(fd))
		return -ECHILD;
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
	struct sim_file *f = sim_file_lookup_hot(fd);
	int ret;

	if (!f)
		ret = idtab_parents ? no_file(fd) : -EBADF;
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

	if (req == DRM_IOCTL_VACCEL_SIGNAL_WRITE || req == DRM_IOCTL_VACCEL_KICK)
		return sim_ioctl_fast(fd, req, arg);
	/* the host wait of every collective call: the hot lookup too */
	f = req == DRM_IOCTL_VACCEL_WAIT_SIGNALS ? sim_file_get_hot(fd) : sim_file_get(fd);
	if (!f)
		return no_file(fd);
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

/*
 * tp_ops.help: the calling thread runs ranges of the device's split
 * packets for up to @ns (sim_split.c), inside one SRCU read section.
 */
static int s_help(int fd, int64_t ns)
{
	struct sim_file *f;
	unsigned int idx;
	int ret = 0;

	/* the spinning caller's common case: nothing split anywhere, no fstat() */
	if (!sim_split_any())
		return 0;
	idx = sim_srcu_read_lock();
	f = sim_file_lookup_hot(fd);

	if (f && !atomic_load_explicit(&f->dev->removed, memory_order_acquire))
		ret = sim_split_host_help(f->dev, sim_now() + (uint64_t)ns);
	sim_srcu_read_unlock(idx);
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
	bool alias;		/* the engines' own mapping (SIM_ONE_MAPPING): never unmapped */
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

	f = sim_file_get(fd);
	if (!f) {
		*err = no_file(fd);
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
	hm->alias = SIM_ONE_MAPPING;
	pthread_mutex_lock(&hostmaps_lock);
	hm->next = hostmaps[hostmap_hash(addr)];
	hostmaps[hostmap_hash(addr)] = hm;
	pthread_mutex_unlock(&hostmaps_lock);
	return addr;
}

/* the parent's host mappings (fork()), kept reachable; never used */
static struct sim_hostmap *parent_hostmaps[SIM_HOSTMAP_BUCKETS];

/*
 * In a child (fork()): empty tables. The parent's file table is kept
 * frozen (its fds' copies fail with -ECHILD), its fd table and host
 * mappings are forgotten (the child's copies are closed and unmapped
 * alone).
 */
void sim_transport_fork_child(void)
{
	struct sim_idtab_gen *g = malloc(sizeof(*g));
	_Atomic(struct sim_file *) *chunk;
	unsigned int i, j;

	pthread_mutex_init(&fdtab_lock, NULL);
	pthread_mutex_init(&hostmaps_lock, NULL);
	for (i = 0; i < SIM_FD_CHUNKS; i++) {
		chunk = atomic_load(&fdtab[i]);
		for (j = 0; chunk && j < SIM_FD_CHUNK; j++)
			atomic_store_explicit(&chunk[j], NULL, memory_order_relaxed);
	}
	if (g) {
		/* (without memory the parent's fds give -EBADF instead) */
		g->prev = idtab_parents;
		for (i = 0; i < SIM_ID_BUCKETS; i++)
			g->head[i] = atomic_load(&idtab[i]);
		idtab_parents = g;
	}
	for (i = 0; i < SIM_ID_BUCKETS; i++)
		atomic_store(&idtab[i], NULL);
	memcpy(parent_hostmaps, hostmaps, sizeof(hostmaps));
	memset(hostmaps, 0, sizeof(hostmaps));
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

	/* (not one of this process's sim: a mapping of the parent's, in a child) */
	hm = hostmap_take(addr);
	ret = hm && hm->alias ? 0 : munmap(addr, len) ? -errno : 0;
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
	void *p;

	/*
	 * An alias of the engines' mapping (SIM_ONE_MAPPING) stays: other
	 * devices' imports may use it, and the host mapping's reference keeps
	 * it valid until it is unmapped.
	 */
	if (SIM_ONE_MAPPING)
		return 0;
	p = mmap(addr, len, prot, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? -errno : 0;
}

/* accel_buffer_seal(): the same object's mapping again, with @prot, in one step. */
static int s_remap(void *addr, int fd, uint64_t offset, size_t len, int prot)
{
	struct sim_hostmap *hm;
	int ret = -EINVAL;

	(void)fd;
	(void)offset;
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

static int prime_export(int fd, uint32_t handle, int writable, int *dmabuf, bool local)
{
	struct sim_file *f;
	int ret;

	f = sim_file_get(fd);
	if (!f)
		return no_file(fd);
	ret = atomic_load(&f->dev->removed) ? -ENODEV :
	      sim_prime_export(f, handle, writable, dmabuf, local);
	sim_file_put(f);
	return ret;
}

static int s_prime_export(int fd, uint32_t handle, int writable, int *dmabuf)
{
	return prime_export(fd, handle, writable, dmabuf, false);
}

/* The library's own export for a device of this process: the object stays unshared. */
static int s_prime_export_local(int fd, uint32_t handle, int writable, int *dmabuf)
{
	return prime_export(fd, handle, writable, dmabuf, true);
}

static int s_prime_import(int fd, int dmabuf, uint32_t *handle)
{
	struct sim_file *f;
	int ret;

	f = sim_file_get(fd);
	if (!f)
		return no_file(fd);
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

/* tp_ops.asym_doorbell: the engines call membarrier() before they sleep (sim_engine.c) */
static bool s_asym_doorbell(int fd)
{
	(void)fd;
	return acc_membarrier_ready();
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
	.prime_export_local = s_prime_export_local,
	.prime_import = s_prime_import,
	.dmabuf_read_only = s_dmabuf_read_only,
	.dup = s_dup,
	.remap = s_remap,
	.help = s_help,
	.asym_doorbell = s_asym_doorbell,
};
