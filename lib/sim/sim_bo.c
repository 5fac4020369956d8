// SPDX-License-Identifier: MIT
/*
 * Buffer objects of the in-process device, each on its own memfd: the
 * memfd is the object's memory and its dma-buf, so it can be passed to
 * another process over a Unix socket (SCM_RIGHTS) and imported there.
 * The rules and errnos are the module's (kmod/vaccel_gem.c,
 * Documentation/memory.rst); the protections are real where the kernel
 * allows a process to have them:
 *
 *  - the memfd is sealed against growing and shrinking at creation, so
 *    nobody can truncate memory the engines access;
 *  - a read-only host mapping and a read-only export are made from an
 *    O_RDONLY open of the memfd (/proc/self/fd/N), so neither can be made
 *    writable later (mprotect() or mmap() fail);
 *  - BO_SEAL remaps the engine's own mapping read-only (from a read-only
 *    open) and adds F_SEAL_WRITE, which the kernel grants only when no
 *    writable shared mapping of the memfd exists anywhere (any process):
 *    after it nothing can write the object. The module's -EBUSY for a
 *    writable host or device mapping comes first, from the sim's own
 *    counts.
 *
 * Objects are owners (a local object of a device, charged to its
 * capacity; or a "foreign" owner made of a memfd another process
 * exported) or imports of an owner, as the module's imports of vaccel
 * dma-bufs are. Owners are found by their memfd's inode in a registry,
 * every object by its mmap offset in another.
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

#define SIM_BO_FLAGS	(DRM_VACCEL_BO_PERSISTENT | DRM_VACCEL_BO_SIGNAL)
#define SIM_OFF_BUCKETS	1024u

/*
 * reg_lock protects the owner registry (@owners, by inode) and the
 * offset registry (@by_off, every object by mmap offset); a leaf.
 */
static struct {
	pthread_mutex_t lock;
	struct list owners;
	struct sim_bo *by_off[SIM_OFF_BUCKETS];
	uint64_t next_off;
} reg = { .lock = PTHREAD_MUTEX_INITIALIZER, .owners = { &reg.owners, &reg.owners },
	  .next_off = SIM_MMAP_BO_BASE };

static unsigned int off_hash(uint64_t off)
{
	return (unsigned int)((off >> 12) % SIM_OFF_BUCKETS);
}

/* Give @bo an mmap offset and list it (an owner also by inode). */
static void reg_add(struct sim_bo *bo)
{
	pthread_mutex_lock(&reg.lock);
	bo->mmap_offset = reg.next_off;
	reg.next_off += bo->size;
	bo->off_next = reg.by_off[off_hash(bo->mmap_offset)];
	reg.by_off[off_hash(bo->mmap_offset)] = bo;
	if (!bo->owner)
		list_add_tail(&reg.owners, &bo->reg_node);
	pthread_mutex_unlock(&reg.lock);
}

static void reg_del(struct sim_bo *bo)
{
	struct sim_bo **pp;

	pthread_mutex_lock(&reg.lock);
	for (pp = &reg.by_off[off_hash(bo->mmap_offset)]; *pp; pp = &(*pp)->off_next)
		if (*pp == bo) {
			*pp = bo->off_next;
			break;
		}
	if (!bo->owner)
		list_del(&bo->reg_node);
	pthread_mutex_unlock(&reg.lock);
}

/* A reference on the live object @bo unless it is going (its count reached 0). */
static bool bo_tryget(struct sim_bo *bo)
{
	long r = atomic_load(&bo->refs);

	while (r > 0)
		if (atomic_compare_exchange_weak(&bo->refs, &r, r + 1))
			return true;
	return false;
}

/* The owner whose memfd is the inode of @st (a foreign one also by mode), referenced. */
static struct sim_bo *reg_find_owner(const struct stat *st, bool writable)
{
	struct sim_bo *bo, *found = NULL;
	struct list *l;

	pthread_mutex_lock(&reg.lock);
	for (l = reg.owners.next; l != &reg.owners && !found; l = l->next) {
		bo = container_of(l, struct sim_bo, reg_node);
		if (bo->st_ino != st->st_ino || bo->st_dev != st->st_dev)
			continue;
		if (bo->foreign && bo->fd_writable != writable)
			continue;
		if (bo_tryget(bo))
			found = bo;
	}
	pthread_mutex_unlock(&reg.lock);
	return found;
}

/*
 * In a child (fork()): the registries start empty (the parent's objects
 * stay in memory, reachable from its devices and files, never touched).
 * The offsets go on from the parent's.
 */
void sim_bo_fork_child(void)
{
	pthread_mutex_init(&reg.lock, NULL);
	list_init(&reg.owners);
	memset(reg.by_off, 0, sizeof(reg.by_off));
}

/* Is there an object at mmap offset @off (whoever holds it)? */
static bool reg_has_offset(uint64_t off)
{
	struct sim_bo *bo;
	bool found = false;

	pthread_mutex_lock(&reg.lock);
	for (bo = reg.by_off[off_hash(off)]; bo && !found; bo = bo->off_next)
		found = bo->mmap_offset == off;
	pthread_mutex_unlock(&reg.lock);
	return found;
}

void sim_bo_ref(struct sim_bo *bo)
{
	atomic_fetch_add_explicit(&bo->refs, 1, memory_order_relaxed);
}

static void sim_bo_free(struct sim_bo *bo)
{
	reg_del(bo);
	if (bo->owner) {
		sim_bo_put(bo->owner);
	} else {
		if (bo->kmap)
			munmap(bo->kmap, bo->size);
		if (bo->fd >= 0)
			close(bo->fd);
		if (bo->dev) {
			atomic_fetch_sub(&bo->dev->mem_used, bo->size);
			if (bo->flags & SIM_BO_FLAGS)
				atomic_fetch_sub(&bo->dev->mem_pinned, bo->size);
			sim_dev_put(bo->dev);
		}
	}
	pthread_mutex_destroy(&bo->seal_lock);
	free(bo);
	atomic_fetch_sub(&sim_objects.bos, 1);
}

void sim_bo_put(struct sim_bo *bo)
{
	if (bo && atomic_fetch_sub_explicit(&bo->refs, 1, memory_order_acq_rel) == 1)
		sim_bo_free(bo);
}

static struct sim_bo *bo_alloc(void)
{
	struct sim_bo *bo = calloc(1, sizeof(*bo));

	if (!bo)
		return NULL;
	atomic_init(&bo->refs, 1);
	bo->fd = -1;
	pthread_mutex_init(&bo->seal_lock, NULL);
	list_init(&bo->reg_node);
	atomic_fetch_add(&sim_objects.bos, 1);
	return bo;
}

/* A read-only open of @fd's file (the same memfd): its mappings can never be writable. */
static int reopen_ro(int fd)
{
	char path[64];
	int ro;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	return ro < 0 ? -errno : ro;
}

/* The error of a failed memfd or mmap call, as the uAPI names it. */
static int sys_err(int err)
{
	return err == EMFILE || err == ENFILE ? -err : -ENOMEM;
}

static int capacity_charge(struct sim_dev *dev, uint64_t size)
{
	uint64_t used = atomic_load(&dev->mem_used);

	do {
		if (size > dev->cfg.memory - used)
			return -ENOMEM;
	} while (!atomic_compare_exchange_weak(&dev->mem_used, &used, used + size));
	return 0;
}

/* A new local owner of @size bytes with @flags, charged to @dev (already done). */
static int bo_new_local(struct sim_dev *dev, uint64_t size, uint32_t flags, struct sim_bo **out)
{
	struct sim_bo *bo = bo_alloc();
	char name[64];
	struct stat st;
	int ret;

	if (!bo)
		return -ENOMEM;
	snprintf(name, sizeof(name), SIM_BO_NAME ":flags=%u", flags);
	bo->fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (bo->fd < 0) {
		ret = sys_err(errno);
		goto err;
	}
	bo->fd_writable = true;
	bo->size = size;
	bo->flags = flags;
	/* nobody may truncate memory the engines map */
	if (ftruncate(bo->fd, (off_t)size) ||
	    fcntl(bo->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) || fstat(bo->fd, &st)) {
		ret = sys_err(errno);
		goto err;
	}
	bo->st_dev = st.st_dev;
	bo->st_ino = st.st_ino;
	bo->kmap = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, bo->fd, 0);
	if (bo->kmap == MAP_FAILED) {
		bo->kmap = NULL;
		ret = sys_err(errno);
		goto err;
	}
	/* charged by the caller: the object uncharges when it goes */
	sim_dev_ref(dev);
	bo->dev = dev;
	if (flags & SIM_BO_FLAGS)
		atomic_fetch_add(&dev->mem_pinned, size);
	reg_add(bo);
	*out = bo;
	return 0;
err:
	sim_bo_free(bo);
	return ret;
}

int sim_bo_create(struct sim_file *f, struct drm_vaccel_bo_create *c)
{
	struct sim_dev *dev = f->dev;
	struct sim_bo *bo;
	uint32_t handle;
	uint64_t size;
	int ret;

	if (c->flags & ~SIM_BO_FLAGS)
		return -EINVAL;
	if ((c->flags & DRM_VACCEL_BO_PERSISTENT) && (c->flags & DRM_VACCEL_BO_SIGNAL))
		return -EINVAL;
	if (!c->size)
		return -EINVAL;
	if (c->size > dev->cfg.memory)
		return -E2BIG;
	size = (c->size + SIM_PAGE - 1) & ~(SIM_PAGE - 1);
	if (!sim_dev_enter(dev))
		return -ENODEV;
	ret = -ENOMEM;
	if (sim_inject(&dev->knobs.fail_bo_create))
		goto out;
	ret = capacity_charge(dev, size);
	if (ret)
		goto out;
	ret = bo_new_local(dev, size, c->flags, &bo);
	if (ret) {
		atomic_fetch_sub(&dev->mem_used, size);
		goto out;
	}
	pthread_mutex_lock(&f->lock);
	ret = sim_handle_add(f, bo, &handle);
	pthread_mutex_unlock(&f->lock);
	if (!ret) {
		c->size = size;
		c->handle = handle;
		c->mmap_offset = bo->mmap_offset;
	}
	sim_bo_put(bo);	/* the handle holds it now, or it goes */
out:
	sim_dev_exit(dev);
	return ret;
}

bool sim_bo_sealed(struct sim_bo *bo)
{
	struct sim_bo *o = sim_bo_owner(bo);
	int seals;

	if (atomic_load_explicit(&o->sealed, memory_order_acquire))
		return true;
	if (!o->foreign)
		return false;
	/* another process seals its object with F_SEAL_WRITE: look at the memfd */
	seals = fcntl(o->fd, F_GET_SEALS);
	if (seals < 0 || !(seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)))
		return false;
	atomic_store(&o->sealed, true);
	return true;
}

int sim_bo_info(struct sim_file *f, struct drm_vaccel_bo_info *i)
{
	struct sim_bo *bo;

	if (i->pad)
		return -EINVAL;
	bo = sim_handle_get(f, i->handle);
	if (!bo)
		return -ENOENT;
	i->flags = sim_bo_owner(bo)->flags;
	i->size = bo->size;
	i->mmap_offset = bo->mmap_offset;
	i->status = (bo->owner ? DRM_VACCEL_BO_STATUS_IMPORTED : 0) |
		    (sim_bo_sealed(bo) ? DRM_VACCEL_BO_STATUS_SEALED : 0);
	sim_bo_put(bo);
	return 0;
}

/*
 * Seal owner @o (seal lock held): the engine's mapping becomes read-only
 * for good and F_SEAL_WRITE is added, which fails with EBUSY while any
 * writable shared mapping of the memfd exists (the program's own mmap()
 * of an export, another process's): then everything is as before.
 */
static int bo_seal_memfd(struct sim_bo *o)
{
	int ro = reopen_ro(o->fd), ret = 0;
	void *p;

	if (ro < 0) {
		/* no /proc: the weaker seal, new writable mappings only */
		if (mprotect(o->kmap, o->size, PROT_READ) ||
		    fcntl(o->fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE))
			return -errno;
		return 0;
	}
	/* in one step: engines reading the object meanwhile see the same pages */
	p = mmap(o->kmap, o->size, PROT_READ, MAP_SHARED | MAP_FIXED, ro, 0);
	close(ro);
	if (p == MAP_FAILED)
		return -errno;
	if (fcntl(o->fd, F_ADD_SEALS, F_SEAL_WRITE)) {
		ret = errno == EBUSY ? -EBUSY : -errno;
		p = mmap(o->kmap, o->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, o->fd, 0);
		if (p == MAP_FAILED)
			abort();	/* the same pages again cannot fail short of memory */
	}
	return ret;
}

int sim_bo_seal(struct sim_file *f, struct drm_vaccel_bo_seal *s)
{
	struct sim_bo *bo;
	int ret = 0;

	if (s->flags)
		return -EINVAL;
	bo = sim_handle_get(f, s->handle);
	if (!bo)
		return -ENOENT;
	if (bo->owner || !(bo->flags & DRM_VACCEL_BO_PERSISTENT)) {
		ret = -EINVAL;
		goto out;
	}
	if (!sim_dev_enter(f->dev)) {
		ret = -ENODEV;
		goto out;
	}
	pthread_mutex_lock(&bo->seal_lock);
	if (!atomic_load(&bo->sealed)) {
		if (bo->writable_mmaps || bo->writable_binds)
			ret = -EBUSY;
		else
			ret = bo_seal_memfd(bo);
		if (!ret)
			atomic_store_explicit(&bo->sealed, true, memory_order_release);
	}
	pthread_mutex_unlock(&bo->seal_lock);
	sim_dev_exit(f->dev);
out:
	sim_bo_put(bo);
	return ret;
}

int sim_bo_get_write(struct sim_bo *bo)
{
	struct sim_bo *o = sim_bo_owner(bo);
	int ret = 0;

	if (bo->read_only || !o->fd_writable)
		return -EACCES;
	if (o->foreign && sim_bo_sealed(o))
		return -EACCES;
	pthread_mutex_lock(&o->seal_lock);
	if (atomic_load(&o->sealed))
		ret = -EACCES;
	else
		o->writable_binds++;
	pthread_mutex_unlock(&o->seal_lock);
	return ret;
}

void sim_bo_put_write(struct sim_bo *bo)
{
	struct sim_bo *o = sim_bo_owner(bo);

	pthread_mutex_lock(&o->seal_lock);
	o->writable_binds--;
	pthread_mutex_unlock(&o->seal_lock);
}

/* ---- host mappings ---- */

/* The object of @f's handles at @offset, referenced; -EINVAL / -EACCES otherwise. */
static int bo_at_offset(struct sim_file *f, uint64_t offset, struct sim_bo **out)
{
	unsigned int idx = sim_srcu_read_lock(), i;
	struct sim_bo *bo, *found = NULL;

	for (i = 0; i < SIM_MAX_BOS && !found; i++) {
		bo = atomic_load(&f->handles[i]);
		if (bo && bo->mmap_offset == offset) {
			sim_bo_ref(bo);
			found = bo;
		}
	}
	sim_srcu_read_unlock(idx);
	if (found) {
		*out = found;
		return 0;
	}
	/* drm_gem_mmap(): an object this file holds no handle of is -EACCES */
	return reg_has_offset(offset) ? -EACCES : -EINVAL;
}

int sim_bo_mmap(struct sim_file *f, uint64_t offset, size_t len, int prot, void **addr,
		struct sim_bo **bop)
{
	bool writable = prot & PROT_WRITE;
	struct sim_bo *bo, *o;
	int ret, fd;
	void *p;

	ret = bo_at_offset(f, offset, &bo);
	if (ret)
		return ret;
	o = sim_bo_owner(bo);
	ret = -EINVAL;
	if (!len || len > bo->size)
		goto err;
	ret = -EACCES;
	if (writable && (f->read_only || bo->read_only || !o->fd_writable || sim_bo_sealed(o)))
		goto err;
	if (SIM_ONE_MAPPING) {
		/* the engines' mapping itself (see sim_internal.h), counted as the mapping asked */
		pthread_mutex_lock(&o->seal_lock);
		if (writable && atomic_load(&o->sealed)) {
			pthread_mutex_unlock(&o->seal_lock);
			goto err;
		}
		if (writable)
			o->writable_mmaps++;
		pthread_mutex_unlock(&o->seal_lock);
		p = o->kmap;
		ret = 0;
	} else if (writable) {
		pthread_mutex_lock(&o->seal_lock);
		if (atomic_load(&o->sealed)) {
			pthread_mutex_unlock(&o->seal_lock);
			goto err;
		}
		p = mmap(NULL, len, prot, MAP_SHARED, o->fd, 0);
		if (p != MAP_FAILED)
			o->writable_mmaps++;
		ret = p == MAP_FAILED ? -errno : 0;
		pthread_mutex_unlock(&o->seal_lock);
	} else {
		/* from a read-only open: the mapping can never become writable */
		fd = reopen_ro(o->fd);
		if (fd < 0) {
			ret = fd;
			goto err;
		}
		p = mmap(NULL, len, prot, MAP_SHARED, fd, 0);
		ret = p == MAP_FAILED ? -errno : 0;
		close(fd);
	}
	if (ret)
		goto err;
	*addr = p;
	*bop = bo;	/* the mapping's reference */
	return 0;
err:
	sim_bo_put(bo);
	return ret;
}

int sim_bo_remap(struct sim_bo *bo, void *addr, size_t len, int prot, bool was_writable)
{
	struct sim_bo *o = sim_bo_owner(bo);
	bool writable = prot & PROT_WRITE;
	int ret = 0, fd;
	void *p;

	pthread_mutex_lock(&o->seal_lock);
	if (writable && !was_writable &&
	    (bo->read_only || !o->fd_writable || atomic_load(&o->sealed))) {
		ret = -EACCES;
		goto out;
	}
	/* an alias of the engines' mapping (SIM_ONE_MAPPING): the count only */
	fd = SIM_ONE_MAPPING ? -1 : writable ? o->fd : reopen_ro(o->fd);
	if (fd < 0 && !SIM_ONE_MAPPING) {
		ret = fd;
		goto out;
	}
	p = SIM_ONE_MAPPING ? addr : mmap(addr, len, prot, MAP_SHARED | MAP_FIXED, fd, 0);
	if (!writable && fd >= 0)
		close(fd);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	if (writable && !was_writable)
		o->writable_mmaps++;
	else if (!writable && was_writable)
		o->writable_mmaps--;
out:
	pthread_mutex_unlock(&o->seal_lock);
	return ret;
}

void sim_bo_unmapped(struct sim_bo *bo, bool writable)
{
	struct sim_bo *o = sim_bo_owner(bo);

	if (!writable)
		return;
	pthread_mutex_lock(&o->seal_lock);
	o->writable_mmaps--;
	pthread_mutex_unlock(&o->seal_lock);
}

/* ---- PRIME ---- */

int sim_prime_export(struct sim_file *f, uint32_t handle, int writable, int *dmabuf, bool local)
{
	struct sim_bo *bo = sim_handle_get(f, handle), *o;
	int fd;

	if (!bo)
		return -ENOENT;
	o = sim_bo_owner(bo);
	/*
	 * From now on another process may map it: its signals wake across
	 * processes. Not for the library's @local export, whose fd it
	 * imports into another device of this process and closes at once.
	 */
	if (!local)
		atomic_store(&o->exported, true);
	/*
	 * Writable: the object's own memfd (one dma-buf per object, as the
	 * kernel caches it); through a read-only import, that read-only
	 * dma-buf again. Read-only: a new read-only open of it.
	 */
	if (writable && !bo->read_only && o->fd_writable) {
		fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			fd = -errno;
	} else {
		fd = reopen_ro(o->fd);
	}
	sim_bo_put(bo);
	if (fd < 0)
		return fd == -EMFILE || fd == -ENFILE ? fd : -ENOMEM;
	*dmabuf = fd;
	return 0;
}

/*
 * The memfd's name says it is a buffer object of a sim ("/memfd:" + the
 * name, " (deleted)"): its flags, or -EINVAL for any other file.
 */
static int memfd_bo_flags(int fd, uint32_t *flags)
{
	char path[64], target[256];
	const char *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -EINVAL;
	target[n] = '\0';
	if (strncmp(target, "/memfd:" SIM_BO_NAME ":flags=", strlen("/memfd:" SIM_BO_NAME ":flags=")))
		return -EINVAL;
	p = target + strlen("/memfd:" SIM_BO_NAME ":flags=");
	*flags = (uint32_t)strtoul(p, NULL, 10);
	if (*flags & ~SIM_BO_FLAGS)
		return -EINVAL;
	return 0;
}

/*
 * An owner for a memfd the sim does not know (another process's object,
 * or one of this process whose object is gone): its memory, flags and
 * seal as the memfd has them.
 */
static int bo_new_foreign(int dmabuf, const struct stat *st, bool writable, uint32_t flags,
			  struct sim_bo **out)
{
	struct sim_bo *bo;
	int seals, ret;

	seals = fcntl(dmabuf, F_GET_SEALS);
	/* memory that could shrink under the engines is refused */
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || !st->st_size || st->st_size % SIM_PAGE)
		return -EINVAL;
	bo = bo_alloc();
	if (!bo)
		return -ENOMEM;
	bo->fd = fcntl(dmabuf, F_DUPFD_CLOEXEC, 0);
	if (bo->fd < 0) {
		ret = sys_err(errno);
		goto err;
	}
	bo->foreign = true;
	bo->fd_writable = writable;
	bo->size = (uint64_t)st->st_size;
	bo->flags = flags;
	bo->st_dev = st->st_dev;
	bo->st_ino = st->st_ino;
	atomic_init(&bo->sealed, !!(seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)));
	bo->kmap = mmap(NULL, bo->size,
			PROT_READ | (writable && !atomic_load(&bo->sealed) ? PROT_WRITE : 0),
			MAP_SHARED, bo->fd, 0);
	if (bo->kmap == MAP_FAILED) {
		bo->kmap = NULL;
		ret = sys_err(errno);
		goto err;
	}
	reg_add(bo);
	*out = bo;
	return 0;
err:
	sim_bo_free(bo);
	return ret;
}

/* @f's handle of an object satisfying @match, or 0. File lock held. */
static uint32_t find_handle(struct sim_file *f, struct sim_bo *owner, bool import, bool ro)
{
	unsigned int i;

	for (i = 0; i < SIM_MAX_BOS; i++) {
		struct sim_bo *bo = atomic_load_explicit(&f->handles[i], memory_order_relaxed);

		if (!bo)
			continue;
		if (!import && bo == owner)
			return i + 1;
		if (import && bo->owner == owner && bo->read_only == ro)
			return i + 1;
	}
	return 0;
}

int sim_prime_import(struct sim_file *f, int dmabuf, uint32_t *handle)
{
	struct sim_bo *owner, *bo;
	struct stat st;
	uint32_t flags, h;
	bool ro;
	int fl, ret;

	fl = fcntl(dmabuf, F_GETFL);
	if (fl < 0)
		return -EBADF;
	ro = (fl & O_ACCMODE) == O_RDONLY;
	if (memfd_bo_flags(dmabuf, &flags) || fstat(dmabuf, &st))
		return -EINVAL;
	if (!sim_dev_enter(f->dev))
		return -ENODEV;
	pthread_mutex_lock(&f->lock);
	owner = reg_find_owner(&st, !ro);
	if (!owner) {
		ret = bo_new_foreign(dmabuf, &st, !ro, flags, &owner);
		if (ret)
			goto out;
	}
	if (!owner->foreign && owner->dev == f->dev && !ro) {
		/* a writable dma-buf of this device's object: the object itself */
		h = find_handle(f, owner, false, false);
		ret = h ? 0 : sim_handle_add(f, owner, &h);
	} else {
		h = find_handle(f, owner, true, ro);
		ret = 0;
		if (!h) {
			bo = bo_alloc();
			if (!bo) {
				ret = -ENOMEM;
				goto out_put;
			}
			sim_bo_ref(owner);
			bo->owner = owner;
			bo->read_only = ro;
			bo->size = owner->size;
			bo->flags = owner->flags;
			bo->kmap = owner->kmap;
			reg_add(bo);
			ret = sim_handle_add(f, bo, &h);
			sim_bo_put(bo);
		}
	}
	if (!ret)
		*handle = h;
out_put:
	sim_bo_put(owner);
out:
	pthread_mutex_unlock(&f->lock);
	sim_dev_exit(f->dev);
	return ret;
}
