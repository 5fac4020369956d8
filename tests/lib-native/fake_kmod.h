/* SPDX-License-Identifier: MIT */
/*
 * A fake vaccel module for native tests of libaccel: an in-memory model of
 * the ioctls, mmap and PRIME calls the library makes, behind a transport
 * backend (lib/transport.h), with the module's own packet core
 * (kmod/core/, compiled in here) executing the rings. Include it in one
 * translation unit of a program; the program then contains the core
 * (GPL-2.0-only OR MIT).
 *
 * Devices. Up to FAKE_MAX_DEVICES devices in one process, opened as "fake0",
 * "fake1", ... ("fake" is "fake0"), each once at a time: one file, one
 * context, with its own GEM handles, device VA space and queues, and a
 * capacity of FAKE_CAPACITY bytes.
 *
 * Memory. Every object's pages are a run of one arena: a memfd mapped once
 * (MAP_SHARED) and never unmapped. An object's "mmap offset" is its place
 * in the arena; the backend's mmap returns the arena address itself (the
 * protection asked for is checked, not applied) and its munmap leaves the
 * arena alone, so the library, the program and the engine touch the same
 * words at the same addresses: ThreadSanitizer sees the release/acquire
 * pairs of the doorbell, read index and signal words, and any plain access
 * racing with them. Freed pages are punched out of the memfd (they read
 * zero again) and their shadow state is reset when they are reused
 * (AnnotateNewMemory), as a fresh mmap would. Doorbell and control pages are
 * objects of their own (no handle), so that a host mapping keeps them, as
 * in the kernel.
 *
 * Objects live while a handle, a device mapping or a host mapping holds
 * them. The rules of Documentation/memory.rst that the library meets are
 * the kernel's, with its errnos:
 *  - BO_SEAL seals a persistent local object; -EBUSY while a writable host
 *    mapping or a writable device mapping of it exists on any device;
 *    afterwards a writable mmap or a write VM_BIND fails with -EACCES
 *    everywhere it is shared;
 *  - PRIME: a dma-buf is a memfd of the fake's (the fake keeps one fd of
 *    each and recognises the ones it is given by inode). A writable export
 *    is one dma-buf per object, returned again on every writable export; a
 *    read-only export (no DRM_RDWR) is a new dma-buf whose fd is opened
 *    O_RDONLY. Importing gives the exporting device its own handle back
 *    (writable dma-buf) and any other device (or a read-only dma-buf) an
 *    import of the same pages, one handle per dma-buf and file; imports
 *    follow the owner's sealing, read-only imports refuse write binds,
 *    writable mmaps and SIGNAL_WRITE (-EACCES). BO_INFO reports IMPORTED,
 *    SEALED and the owner's flags;
 *  - VM_BIND and QUEUE_CREATE validate as the module does (the same order
 *    and errnos), WAIT_SIGNALS fails with -EIO once a queue of the file
 *    faulted (unless IGNORE_FAULTS) and -ETIME at its deadline.
 *
 * Execution. The rings run on the module's packet core (kmod/core/): every
 * packet type with its exact semantics and faults (WAITs that block their
 * queue with GE/EQ/NE, masks, wrap-safe GE, epochs and timeouts that fault
 * WAIT_TIMEOUT; EXEC of sealed bodies with binding tables and nested
 * epochs; SIGNAL and completion actions; TIMESTAMP; DELAY making its queue
 * busy; COPY, FILL, REDUCE and MATMUL moving the arena's bytes). The
 * vaccel_os_*() layer below translates through the device's mappings, like
 * kmod/vaccel_core_os.c. The clock (fake_clock()) is CLOCK_MONOTONIC-based
 * but strictly increasing across all its readers, so no two events of the
 * device or of the host share a time; TIMESTAMP, DELAY and WAIT timeouts
 * use it. Doorbells behave as in the module: values at or below the last
 * accepted one are ignored, one more than a ring ahead of the read index
 * faults the queue (DOORBELL).
 *
 * Two ways to run the engine, one at a time in a process:
 *  - fake_engine_step(budget): a pass over every queue of every device,
 *    run by a thread of the test (as before);
 *  - fake_engine_start(&params): the fake's own engine thread, which picks
 *    a random runnable queue of any device for each burst of a few steps
 *    (seeded), so that work that nothing orders runs in a random order.
 *    It polls for the poll budget after its last progress, then sets
 *    need_wakeup in every control page, calls membarrier() (for the
 *    queues that skip the submitter's fence: lib/membarrier.c), issues a
 *    full fence, looks at the doorbells again and only then sleeps, until a KICK, a SIGNAL_WRITE,
 *    the earliest DELAY or WAIT deadline, or fake_engine_resume(). This is
 *    the module's NEED_WAKEUP protocol (Documentation/queues.rst), so the
 *    library's KICK path runs. fake_engine_pause(ns) holds it for a while
 *    (the device lags behind the program, as a busy one would).
 *
 * Ordering evidence: for each TIMESTAMP it runs, the engine records when
 * the last packet doing work on its queue before it completed
 * (fake_stamp_prev(); SIGNALs, WAITs and TIMESTAMPs are not work: the
 * queue layer's progress marks are SIGNALs that can come between a task's
 * last packet and its end TIMESTAMP). That is the end of a task's work,
 * taken before its completion action is applied, so before anyone can see
 * the task done (the task graph's end TIMESTAMP comes after the completion
 * action, when another queue may already run).
 *
 * With fake_complete_all set (benchmarks of the library's host cost, such
 * as tools/taskgraph-bench.c), the core is not used: every packet completes
 * at once with only its completion action applied (WAITs count as
 * satisfied, DELAY, COPY, FILL, REDUCE, MATMUL and TIMESTAMP touch no
 * memory); an EXEC of a sealed buffer walks its body the same way,
 * applying the body's SIGNAL packets (with the launch's epoch where the
 * packet asks for it) and completion actions, binding addresses resolved
 * through the EXEC's table, nested EXECs included; then the EXEC's own
 * completion action.
 *
 * The fake's own bookkeeping sits behind one mutex. Its lock, unlock and
 * bookkeeping accesses (and the clock) are hidden from TSan
 * (AnnotateIgnoreSync/Reads/Writes): otherwise every ioctl would order the
 * calling threads with each other, and that ordering would hide races
 * between the library's threads that a real kernel does not order. Only
 * the words the device and the program share (arena memory) are seen. The
 * packet core's state of a queue is only touched by the engine, so one
 * thread at a time may run it.
 *
 * Not modelled: removal (no -ENODEV), other drivers' dma-bufs, a dma-buf
 * keeping its object alive after the last handle and mapping are gone,
 * RLIMIT_MEMLOCK, the link model, priorities, QUEUE_QUERY, eventfds,
 * several files of one device. A host mapping is identified by its
 * address and length when unmapped (the library never maps one object
 * twice with the same length).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef FAKE_KMOD_H
#define FAKE_KMOD_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "signal_ref.h"

/* the module's packet core, natively (it includes only its own headers) */
#include "../../kmod/core/vaccel_core.c"
#include "../../kmod/core/vaccel_reduce.c"
#include "../../kmod/core/vaccel_matmul.c"

/* ThreadSanitizer's dynamic annotations: used only in a TSan build */
#if defined(__SANITIZE_THREAD__)
#define FAKE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FAKE_TSAN 1
#endif
#endif

#ifdef FAKE_TSAN
void AnnotateIgnoreSyncBegin(const char *file, int line);
void AnnotateIgnoreSyncEnd(const char *file, int line);
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
void AnnotateNewMemory(const char *file, int line, const volatile void *mem, size_t size);
#define FAKE_ANNOTATE(call)	call
#else
#define FAKE_ANNOTATE(call)	do { } while (0)
#endif

/* the fake's entry points: a program uses some of them */
#define FAKE_API		static __attribute__((unused))

#define FAKE_PAGE		4096ull
#define FAKE_ARENA_PAGES	32768u		/* 128 MiB, shared by the devices */
#define FAKE_MAX_DEVICES	4u
#define FAKE_MAX_OBJS		4096u
#define FAKE_MAX_BOS		1024u		/* handles per device */
#define FAKE_MAX_MAPS		1024u		/* device mappings per device */
#define FAKE_MAX_QUEUES		32u		/* per device */
#define FAKE_MAX_DMABUFS	512u
#define FAKE_MAX_HOSTMAPS	4096u
#define FAKE_VA_START		0x100000000ull
#define FAKE_VA_SIZE		(1ull << 36)
#define FAKE_CAPACITY		(64ull << 20)	/* per device */

#define FAKE_OBJ_PAGE		0x80000000u	/* object flag: a doorbell or control page */

/* an object: a run of arena pages; free while refs is 0 */
struct fake_obj {
	uint32_t refs;			/* handles, device and host mappings, queues */
	uint32_t flags;			/* DRM_VACCEL_BO_*, or FAKE_OBJ_PAGE */
	int dev;			/* the device charged for it, -1 for none */
	bool sealed;
	uint64_t size, off;
	uint32_t writable_binds, writable_mmaps;
	uint32_t dmabuf;		/* 1 + its writable dma-buf, 0 none yet */
};

/* a GEM handle of a device's file: handle = index + 1 */
struct fake_handle {
	uint32_t obj;			/* 1 + object index; 0: free */
	bool imported, read_only;
	uint32_t dmabuf;		/* 1 + the dma-buf it was imported from, 0: local */
};

struct fake_map {
	uint32_t obj;			/* 1 + object index; 0: free */
	uint32_t flags;			/* DRM_VACCEL_VM_* */
	uint64_t va, size, bo_offset;
};

struct fake_queue {
	bool used;
	uint32_t dev;
	uint32_t size;
	uint32_t db_obj, ctrl_obj;	/* 1 + object index */
	uint64_t *doorbell;
	struct drm_vaccel_queue_control *ctrl;
	uint64_t accepted;		/* the last doorbell value accepted */
	struct vaccel_core_queue core;	/* the engine's only */
	uint64_t sig_clock;		/* clock before the first signal of the current packet */
	uint64_t last_done;		/* completion time of the last packet doing work */
};

struct fake_dev {
	bool open;
	int fd;
	uint64_t mem_used;
	struct fake_handle handles[FAKE_MAX_BOS];
	struct fake_map maps[FAKE_MAX_MAPS];
	uint32_t maps_hi;		/* maps[maps_hi...] are free */
	struct fake_queue queues[FAKE_MAX_QUEUES];	/* id = index + 1 */
};

struct fake_dmabuf {
	int fd;				/* the fake's own fd of it; -1: free slot */
	dev_t st_dev;
	ino_t st_ino;
	uint32_t obj;			/* 1 + object index */
	bool writable;
};

struct fake_hostmap {
	void *addr;			/* NULL: free */
	size_t len;
	uint32_t obj;
	bool writable;
};

static struct fake_state {
	pthread_mutex_t lock;
	bool inited;
	int arena_fd;
	char *arena;
	uint16_t page_obj[FAKE_ARENA_PAGES];	/* 1 + object index of each page, 0 free */
	uint32_t page_hint;
	struct fake_obj objs[FAKE_MAX_OBJS];
	struct fake_dev devs[FAKE_MAX_DEVICES];
	struct fake_dmabuf dmabufs[FAKE_MAX_DMABUFS];
	struct fake_hostmap hostmaps[FAKE_MAX_HOSTMAPS];
} fake = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Counters for the tests' checks (relaxed: they order nothing). */
static uint64_t fake_packets_run, fake_waits, fake_signal_writes, fake_kicks, fake_sleeps;

/* Complete every packet type (see the top of the file); set before the engine runs. */
static bool fake_complete_all;

/*
 * Hold the caller this long after each SIGNAL_WRITE has taken effect:
 * widens the window in which others see a write its caller has not yet
 * returned from. May be set at any time.
 */
static unsigned int fake_signal_write_delay_us;

/* Hide the fake's own synchronisation and bookkeeping from TSan (nests). */
static void fake_ignore_begin(void)
{
	FAKE_ANNOTATE(AnnotateIgnoreSyncBegin(__FILE__, __LINE__));
	FAKE_ANNOTATE(AnnotateIgnoreReadsBegin(__FILE__, __LINE__));
	FAKE_ANNOTATE(AnnotateIgnoreWritesBegin(__FILE__, __LINE__));
}

static void fake_ignore_end(void)
{
	FAKE_ANNOTATE(AnnotateIgnoreWritesEnd(__FILE__, __LINE__));
	FAKE_ANNOTATE(AnnotateIgnoreReadsEnd(__FILE__, __LINE__));
	FAKE_ANNOTATE(AnnotateIgnoreSyncEnd(__FILE__, __LINE__));
}

static void fake_enter(void)
{
	fake_ignore_begin();
	pthread_mutex_lock(&fake.lock);
}

static void fake_leave(void)
{
	pthread_mutex_unlock(&fake.lock);
	fake_ignore_end();
}

static int64_t fake_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* ---- the clock ---- */

static uint64_t fake_clock_base, fake_clock_last;

/*
 * The device's and the tests' clock, in ns: CLOCK_MONOTONIC since the
 * first call plus 1 ms, but strictly increasing over all callers (two
 * reads never return the same value), so events are totally ordered by it.
 */
FAKE_API uint64_t fake_clock(void)
{
	uint64_t now, last, v;

	fake_ignore_begin();
	now = (uint64_t)fake_now();
	if (!__atomic_load_n(&fake_clock_base, __ATOMIC_RELAXED)) {
		uint64_t zero = 0;

		__atomic_compare_exchange_n(&fake_clock_base, &zero, now, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
	}
	now = now - __atomic_load_n(&fake_clock_base, __ATOMIC_RELAXED) + 1000000;
	last = __atomic_load_n(&fake_clock_last, __ATOMIC_SEQ_CST);
	do
		v = now > last ? now : last + 1;
	while (!__atomic_compare_exchange_n(&fake_clock_last, &last, v, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST));
	fake_ignore_end();
	return v;
}

/* ---- arena pages and objects (lock held) ---- */

static int pages_alloc(uint64_t bytes, uint32_t o, uint64_t *off)
{
	uint32_t n = (uint32_t)((bytes + FAKE_PAGE - 1) / FAKE_PAGE), start, i, tries;

	if (!n || n > FAKE_ARENA_PAGES)
		return -ENOMEM;
	start = fake.page_hint;
	for (tries = 0; tries < 2 * FAKE_ARENA_PAGES; tries++) {
		if (start + n > FAKE_ARENA_PAGES)
			start = 0;
		for (i = 0; i < n && !fake.page_obj[start + i]; i++)
			;
		if (i == n) {
			for (i = 0; i < n; i++)
				fake.page_obj[start + i] = (uint16_t)o;
			fake.page_hint = start + n;
			*off = start * FAKE_PAGE;
			/* fresh memory for TSan, as a new mapping would be */
			FAKE_ANNOTATE(AnnotateNewMemory(__FILE__, __LINE__, fake.arena + *off,
							n * FAKE_PAGE));
			return 0;
		}
		start += i + 1;
	}
	return -ENOMEM;
}

static void pages_free(uint64_t off, uint64_t bytes)
{
	uint32_t n = (uint32_t)((bytes + FAKE_PAGE - 1) / FAKE_PAGE);

	/* zero pages again for the next user */
	fallocate(fake.arena_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
		  (off_t)(n * FAKE_PAGE));
	memset(&fake.page_obj[off / FAKE_PAGE], 0, n * sizeof(fake.page_obj[0]));
}

/* A new object of @size bytes (page-rounded) with one reference, charged to @dev. */
static int obj_new(uint64_t size, uint32_t flags, int dev, uint32_t *out)
{
	struct fake_obj *obj;
	uint32_t i;
	int ret;

	size = (size + FAKE_PAGE - 1) & ~(FAKE_PAGE - 1);
	for (i = 0; i < FAKE_MAX_OBJS && fake.objs[i].refs; i++)
		;
	if (i == FAKE_MAX_OBJS)
		return -ENOMEM;
	if (dev >= 0 && size > FAKE_CAPACITY - fake.devs[dev].mem_used)
		return -ENOMEM;
	obj = &fake.objs[i];
	ret = pages_alloc(size, i + 1, &obj->off);
	if (ret)
		return ret;
	obj->refs = 1;
	obj->flags = flags;
	obj->dev = dev;
	obj->sealed = false;
	obj->size = size;
	obj->writable_binds = 0;
	obj->writable_mmaps = 0;
	obj->dmabuf = 0;
	if (dev >= 0)
		fake.devs[dev].mem_used += size;
	*out = i + 1;
	return 0;
}

static void obj_get(uint32_t o)
{
	fake.objs[o - 1].refs++;
}

static void obj_put(uint32_t o)
{
	struct fake_obj *obj = &fake.objs[o - 1];
	unsigned int i;

	if (--obj->refs)
		return;
	pages_free(obj->off, obj->size);
	if (obj->dev >= 0)
		fake.devs[obj->dev].mem_used -= obj->size;
	for (i = 0; i < FAKE_MAX_DMABUFS; i++)
		if (fake.dmabufs[i].fd >= 0 && fake.dmabufs[i].obj == o) {
			close(fake.dmabufs[i].fd);
			fake.dmabufs[i].fd = -1;
		}
}

/* The object whose pages start at arena offset @off, or 0. */
static uint32_t obj_at_offset(uint64_t off)
{
	uint32_t o;

	if (off % FAKE_PAGE || off / FAKE_PAGE >= FAKE_ARENA_PAGES)
		return 0;
	o = fake.page_obj[off / FAKE_PAGE];
	return o && fake.objs[o - 1].off == off ? o : 0;
}

/* ---- devices, handles, mappings (lock held) ---- */

static struct fake_dev *dev_of(int fd)
{
	unsigned int i;

	for (i = 0; i < FAKE_MAX_DEVICES; i++)
		if (fake.devs[i].open && fake.devs[i].fd == fd)
			return &fake.devs[i];
	return NULL;
}

static unsigned int dev_index(const struct fake_dev *d)
{
	return (unsigned int)(d - fake.devs);
}

static struct fake_handle *handle_get(struct fake_dev *d, uint32_t h)
{
	if (!h || h > FAKE_MAX_BOS || !d->handles[h - 1].obj)
		return NULL;
	return &d->handles[h - 1];
}

static int handle_new(struct fake_dev *d, uint32_t o, bool imported, bool read_only,
		      uint32_t dmabuf, uint32_t *h)
{
	unsigned int i;

	for (i = 0; i < FAKE_MAX_BOS && d->handles[i].obj; i++)
		;
	if (i == FAKE_MAX_BOS)
		return -ENOSPC;
	d->handles[i] = (struct fake_handle){
		.obj = o, .imported = imported, .read_only = read_only, .dmabuf = dmabuf,
	};
	obj_get(o);
	*h = i + 1;
	return 0;
}

static void handle_close(struct fake_handle *fh)
{
	uint32_t o = fh->obj;

	fh->obj = 0;
	obj_put(o);
}

static struct fake_map *map_find(struct fake_dev *d, uint64_t va)
{
	uint32_t i;

	for (i = 0; i < d->maps_hi; i++) {
		struct fake_map *m = &d->maps[i];

		if (m->obj && va >= m->va && va - m->va < m->size)
			return m;
	}
	return NULL;
}

/*
 * Device address [@va, @va + @len) of device @d with @access: the arena
 * address, and in *@avail (if not NULL) how many bytes from @va lie in
 * the mapping (then only @va must be mapped). 0 or a DRM_VACCEL_FAULT_*.
 */
static uint32_t dev_translate(struct fake_dev *d, uint64_t va, uint64_t len, uint32_t access,
			      void **ptr, uint64_t *avail, struct fake_obj **objp)
{
	struct fake_map *m = len ? map_find(d, va) : NULL;
	uint64_t left;

	if (!m)
		return DRM_VACCEL_FAULT_UNMAPPED;
	left = m->size - (va - m->va);
	if (!avail && len > left)
		return DRM_VACCEL_FAULT_UNMAPPED;
	if ((m->flags & access) != access)
		return DRM_VACCEL_FAULT_ACCESS;
	if (avail)
		*avail = len < left ? len : left;
	*ptr = fake.arena + fake.objs[m->obj - 1].off + m->bo_offset + (va - m->va);
	if (objp)
		*objp = &fake.objs[m->obj - 1];
	return DRM_VACCEL_FAULT_NONE;
}

/* The signal word at @offset of signal object @handle of @d (an object reference in *@o). */
static uint64_t *signal_word(struct fake_dev *d, uint32_t handle, uint64_t offset, uint32_t *o)
{
	struct fake_handle *fh = handle_get(d, handle);
	struct fake_obj *obj = fh ? &fake.objs[fh->obj - 1] : NULL;

	if (!obj || !(obj->flags & DRM_VACCEL_BO_SIGNAL) || offset % 8 || offset >= obj->size)
		return NULL;
	obj_get(fh->obj);
	*o = fh->obj;
	return (uint64_t *)(fake.arena + obj->off + offset);
}

static bool dev_faulted(const struct fake_dev *d)
{
	unsigned int i;

	for (i = 0; i < FAKE_MAX_QUEUES; i++)
		if (d->queues[i].used &&
		    __atomic_load_n(&d->queues[i].ctrl->state, __ATOMIC_ACQUIRE) !=
		    DRM_VACCEL_QUEUE_RUNNING)
			return true;
	return false;
}

/* ---- the engine's wake-up ---- */

static struct fake_engine {
	pthread_t thread;
	bool running, stop;
	pthread_mutex_t lock;		/* wake, sleeping, pause_until */
	pthread_cond_t cond;
	bool wake;
	uint64_t pause_until;		/* fake_clock(); 0: not paused */
	uint64_t rng;
	uint64_t poll_ns;
	unsigned int max_burst;
} fake_eng = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* KICK, SIGNAL_WRITE, resume: the engine looks at its queues again. */
static void feng_wake(void)
{
	fake_ignore_begin();
	pthread_mutex_lock(&fake_eng.lock);
	fake_eng.wake = true;
	pthread_cond_broadcast(&fake_eng.cond);
	pthread_mutex_unlock(&fake_eng.lock);
	fake_ignore_end();
}

/* ---- ioctls ---- */

static int f_get_param(struct fake_dev *d, struct drm_vaccel_get_param *p)
{
	const uint64_t values[] = {
		[DRM_VACCEL_PARAM_UAPI_VERSION] = VACCEL_UAPI_VERSION,
		[DRM_VACCEL_PARAM_DEVICE_ID] = dev_index(d),
		[DRM_VACCEL_PARAM_NUM_ENGINES] = 1,
		[DRM_VACCEL_PARAM_MEMORY_CAPACITY] = FAKE_CAPACITY,
		[DRM_VACCEL_PARAM_VA_START] = FAKE_VA_START,
		[DRM_VACCEL_PARAM_VA_SIZE] = FAKE_VA_SIZE,
		[DRM_VACCEL_PARAM_CAPABILITIES] = 0,
		[DRM_VACCEL_PARAM_LINK_BANDWIDTH] = 0,
		[DRM_VACCEL_PARAM_LINK_LATENCY] = 0,
		[DRM_VACCEL_PARAM_POLL_BUDGET] = 0,
		[DRM_VACCEL_PARAM_MAX_BOS] = FAKE_MAX_BOS,
		[DRM_VACCEL_PARAM_MAX_MAPPINGS] = FAKE_MAX_MAPS,
		[DRM_VACCEL_PARAM_MAX_QUEUES] = FAKE_MAX_QUEUES,
	};

	if (p->pad)
		return -EINVAL;
	if (p->param == DRM_VACCEL_PARAM_MEMORY_USED) {
		p->value = d->mem_used;
		return 0;
	}
	if (p->param >= sizeof(values) / sizeof(values[0]))
		return -EINVAL;
	p->value = values[p->param];
	return 0;
}

static int f_bo_create(struct fake_dev *d, struct drm_vaccel_bo_create *c)
{
	uint32_t o, h;
	int ret;

	if (c->flags & ~(DRM_VACCEL_BO_PERSISTENT | DRM_VACCEL_BO_SIGNAL) ||
	    c->flags == (DRM_VACCEL_BO_PERSISTENT | DRM_VACCEL_BO_SIGNAL) || !c->size)
		return -EINVAL;
	if (c->size > FAKE_CAPACITY)
		return -E2BIG;
	ret = obj_new(c->size, c->flags, (int)dev_index(d), &o);
	if (ret)
		return ret;
	ret = handle_new(d, o, false, false, 0, &h);
	obj_put(o);	/* the handle holds it now, or it goes */
	if (ret)
		return ret;
	c->handle = h;
	c->size = fake.objs[o - 1].size;
	c->mmap_offset = fake.objs[o - 1].off;
	return 0;
}

static int f_bo_seal(struct fake_dev *d, struct drm_vaccel_bo_seal *s)
{
	struct fake_handle *fh;
	struct fake_obj *obj;

	if (s->flags)
		return -EINVAL;
	fh = handle_get(d, s->handle);
	if (!fh)
		return -ENOENT;
	obj = &fake.objs[fh->obj - 1];
	if (fh->imported || !(obj->flags & DRM_VACCEL_BO_PERSISTENT))
		return -EINVAL;
	if (obj->sealed)
		return 0;
	if (obj->writable_mmaps || obj->writable_binds)
		return -EBUSY;
	obj->sealed = true;
	return 0;
}

static int f_bo_info(struct fake_dev *d, struct drm_vaccel_bo_info *info)
{
	struct fake_handle *fh = handle_get(d, info->handle);
	struct fake_obj *obj;

	if (!fh)
		return -ENOENT;
	obj = &fake.objs[fh->obj - 1];
	info->flags = obj->flags;
	info->size = obj->size;
	info->mmap_offset = obj->off;
	info->status = (fh->imported ? DRM_VACCEL_BO_STATUS_IMPORTED : 0) |
		       (obj->sealed ? DRM_VACCEL_BO_STATUS_SEALED : 0);
	return 0;
}

static int f_gem_close(struct fake_dev *d, struct drm_gem_close *c)
{
	struct fake_handle *fh = handle_get(d, c->handle);

	if (!fh || c->pad)
		return -EINVAL;
	/* device mappings keep the object (they hold a reference) */
	handle_close(fh);
	return 0;
}

static int f_vm_bind(struct fake_dev *d, struct drm_vaccel_vm_bind *b)
{
	struct fake_handle *fh;
	struct fake_obj *obj;
	uint32_t i, slot = FAKE_MAX_MAPS;

	if (!b->flags || b->flags & ~(DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE))
		return -EINVAL;
	if (!b->size || b->size % FAKE_PAGE || b->va % FAKE_PAGE || b->bo_offset % FAKE_PAGE)
		return -EINVAL;
	if (b->va + b->size < b->va || b->bo_offset + b->size < b->bo_offset)
		return -EOVERFLOW;
	if (b->va < FAKE_VA_START || b->va + b->size > FAKE_VA_START + FAKE_VA_SIZE)
		return -ERANGE;
	fh = handle_get(d, b->handle);
	if (!fh)
		return -ENOENT;
	obj = &fake.objs[fh->obj - 1];
	if (b->bo_offset + b->size > obj->size)
		return -EINVAL;
	if (b->flags & DRM_VACCEL_VM_WRITE && (fh->read_only || obj->sealed))
		return -EACCES;
	for (i = 0; i < FAKE_MAX_MAPS; i++) {
		struct fake_map *m = &d->maps[i];

		if (!m->obj) {
			if (slot == FAKE_MAX_MAPS)
				slot = i;
			if (i >= d->maps_hi)
				break;
			continue;
		}
		if (b->va < m->va + m->size && m->va < b->va + b->size)
			return -EBUSY;
	}
	if (slot == FAKE_MAX_MAPS)
		return -ENOSPC;
	d->maps[slot] = (struct fake_map){
		.obj = fh->obj, .flags = b->flags, .va = b->va, .size = b->size,
		.bo_offset = b->bo_offset,
	};
	if (slot >= d->maps_hi)
		d->maps_hi = slot + 1;
	obj_get(fh->obj);
	if (b->flags & DRM_VACCEL_VM_WRITE)
		obj->writable_binds++;
	return 0;
}

static void map_remove(struct fake_dev *d, struct fake_map *m)
{
	uint32_t o = m->obj;

	if (m->flags & DRM_VACCEL_VM_WRITE)
		fake.objs[o - 1].writable_binds--;
	m->obj = 0;
	while (d->maps_hi && !d->maps[d->maps_hi - 1].obj)
		d->maps_hi--;
	obj_put(o);
}

static int f_vm_unbind(struct fake_dev *d, struct drm_vaccel_vm_unbind *u)
{
	struct fake_map *m;

	if (u->flags || u->pad)
		return -EINVAL;
	m = map_find(d, u->va);
	if (!m || m->va != u->va)
		return -ENOENT;
	if (m->size != u->size)
		return -EINVAL;
	map_remove(d, m);
	return 0;
}

static int f_queue_create(struct fake_dev *d, struct drm_vaccel_queue_create *c)
{
	struct fake_queue *q;
	struct fake_map *m;
	unsigned int i;
	int ret;

	if (c->flags || c->ring_size < DRM_VACCEL_RING_MIN || c->ring_size > DRM_VACCEL_RING_MAX ||
	    c->ring_size & (c->ring_size - 1) || c->priority > DRM_VACCEL_QUEUE_PRIORITY_HIGH ||
	    c->ring_va % sizeof(struct drm_vaccel_packet))
		return -EINVAL;
	if (c->priority > DRM_VACCEL_QUEUE_PRIORITY_NORMAL)
		return -EPERM;	/* the fake's processes have no CAP_SYS_NICE */
	m = map_find(d, c->ring_va);
	if (!m || c->ring_va - m->va + (uint64_t)c->ring_size * sizeof(struct drm_vaccel_packet) >
		  m->size)
		return -ENXIO;
	if (!(m->flags & DRM_VACCEL_VM_READ))
		return -EACCES;
	for (i = 0; i < FAKE_MAX_QUEUES && d->queues[i].used; i++)
		;
	if (i == FAKE_MAX_QUEUES)
		return -ENOSPC;
	q = &d->queues[i];
	memset(q, 0, sizeof(*q));
	ret = obj_new(FAKE_PAGE, FAKE_OBJ_PAGE, -1, &q->db_obj);
	if (ret)
		return ret;
	ret = obj_new(FAKE_PAGE, FAKE_OBJ_PAGE, -1, &q->ctrl_obj);
	if (ret) {
		obj_put(q->db_obj);
		return ret;
	}
	q->doorbell = (uint64_t *)(fake.arena + fake.objs[q->db_obj - 1].off);
	q->ctrl = (struct drm_vaccel_queue_control *)(fake.arena +
						      fake.objs[q->ctrl_obj - 1].off);
	/* the engine may sleep already: the first submission must KICK */
	q->ctrl->need_wakeup = 1;
	q->dev = dev_index(d);
	q->size = c->ring_size;
	vaccel_core_queue_init(&q->core, q, c->ring_va, c->ring_size);
	q->used = true;
	c->queue_id = i + 1;
	c->doorbell_offset = fake.objs[q->db_obj - 1].off;
	c->control_offset = fake.objs[q->ctrl_obj - 1].off;
	return 0;
}

static struct fake_queue *queue_get(struct fake_dev *d, uint32_t id)
{
	if (!id || id > FAKE_MAX_QUEUES || !d->queues[id - 1].used)
		return NULL;
	return &d->queues[id - 1];
}

static void queue_free(struct fake_queue *q)
{
	q->used = false;
	obj_put(q->db_obj);
	obj_put(q->ctrl_obj);
}

static int f_queue_destroy(struct fake_dev *d, struct drm_vaccel_queue_destroy *x)
{
	struct fake_queue *q;

	if (x->pad)
		return -EINVAL;
	q = queue_get(d, x->queue_id);
	if (!q)
		return -ENOENT;
	/* the engine runs steps under the lock: none is in flight */
	queue_free(q);
	return 0;
}

static int f_kick(struct fake_dev *d, struct drm_vaccel_kick *k)
{
	if (k->pad)
		return -EINVAL;
	if (!queue_get(d, k->queue_id))
		return -ENOENT;
	__atomic_fetch_add(&fake_kicks, 1, __ATOMIC_RELAXED);
	return 0;	/* the caller wakes the engine, without the lock */
}

static int f_signal_write(int fd, struct drm_vaccel_signal_write *w)
{
	struct fake_handle *fh;
	struct fake_dev *d;
	uint64_t *word = NULL;
	uint32_t o = 0;
	int ret = 0;

	if (w->flags || w->pad || w->op < DRM_VACCEL_SIGNAL_SET || w->op > DRM_VACCEL_SIGNAL_MAX)
		return -EINVAL;
	fake_enter();
	d = dev_of(fd);
	if (!d) {
		ret = -EBADF;
	} else if (!handle_get(d, w->handle)) {
		ret = -ENOENT;
	} else {
		word = signal_word(d, w->handle, w->offset, &o);
		fh = handle_get(d, w->handle);
		if (!word) {
			ret = -EINVAL;
		} else if (fh->read_only) {
			ret = -EACCES;
			obj_put(o);
			word = NULL;
		}
	}
	fake_leave();
	if (ret)
		return ret;
	signal_ref_apply(word, w->op, w->value);
	feng_wake();
	__atomic_fetch_add(&fake_signal_writes, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&fake_signal_write_delay_us, __ATOMIC_RELAXED))
		usleep(__atomic_load_n(&fake_signal_write_delay_us, __ATOMIC_RELAXED));
	fake_enter();
	obj_put(o);
	fake_leave();
	return 0;
}

static bool cond_holds(const struct drm_vaccel_signal_cond *c, uint64_t v)
{
	return vaccel_core_wait_done(v, c->value, c->mask, c->cond);
}

/*
 * A bounded poll of the signal words until the conditions hold, a queue of
 * the file faulted or the deadline passed.
 */
static int f_wait_signals(int fd, struct drm_vaccel_wait_signals *w)
{
	struct drm_vaccel_signal_cond conds[DRM_VACCEL_WAIT_MAX_ITEMS];
	uint64_t *words[DRM_VACCEL_WAIT_MAX_ITEMS];
	uint32_t objs[DRM_VACCEL_WAIT_MAX_ITEMS];
	unsigned int i, n = 0, held, first;
	struct fake_dev *d;
	int ret = 0;
	bool faulted;

	if (!w->count || w->count > DRM_VACCEL_WAIT_MAX_ITEMS || w->pad ||
	    w->flags & ~(DRM_VACCEL_WAIT_ALL | DRM_VACCEL_WAIT_IGNORE_FAULTS))
		return -EINVAL;
	/* one copy; only the copy is validated and used */
	memcpy(conds, (const void *)(uintptr_t)w->conds, w->count * sizeof(conds[0]));
	fake_enter();
	d = dev_of(fd);
	for (n = 0; d && n < w->count; n++) {
		if (!vaccel_core_wait_valid(conds[n].mask, conds[n].cond)) {
			ret = -EINVAL;
			break;
		}
		if (!handle_get(d, conds[n].handle)) {
			ret = -ENOENT;
			break;
		}
		words[n] = signal_word(d, conds[n].handle, conds[n].offset, &objs[n]);
		if (!words[n]) {
			ret = -EINVAL;
			break;
		}
	}
	if (!d)
		ret = -EBADF;
	fake_leave();
	if (!ret)
		__atomic_fetch_add(&fake_waits, 1, __ATOMIC_RELAXED);
	while (!ret) {
		held = 0;
		first = w->count;
		for (i = 0; i < w->count; i++)
			if (cond_holds(&conds[i], __atomic_load_n(words[i], __ATOMIC_ACQUIRE))) {
				held++;
				if (first == w->count)
					first = i;
			}
		if (w->flags & DRM_VACCEL_WAIT_ALL ? held == w->count : held > 0) {
			w->first = w->flags & DRM_VACCEL_WAIT_ALL ? 0 : first;
			break;
		}
		if (!(w->flags & DRM_VACCEL_WAIT_IGNORE_FAULTS)) {
			fake_enter();
			faulted = dev_faulted(d);
			fake_leave();
			if (faulted) {
				ret = -EIO;
				break;
			}
		}
		if (fake_now() >= w->timeout_ns) {
			ret = -ETIME;
			break;
		}
		nanosleep(&(struct timespec){ 0, 20000 }, NULL);
	}
	fake_enter();
	for (i = 0; i < n; i++)
		obj_put(objs[i]);
	fake_leave();
	return ret;
}

static int f_ioctl(int fd, unsigned long req, void *arg)
{
	struct fake_dev *d;
	int ret;

	if (req == DRM_IOCTL_VACCEL_SIGNAL_WRITE)
		return f_signal_write(fd, arg);
	if (req == DRM_IOCTL_VACCEL_WAIT_SIGNALS)
		return f_wait_signals(fd, arg);
	fake_enter();
	d = dev_of(fd);
	if (!d) {
		fake_leave();
		return -EBADF;
	}
	switch (req) {
	case DRM_IOCTL_VACCEL_GET_PARAM:
		ret = f_get_param(d, arg);
		break;
	case DRM_IOCTL_VACCEL_BO_CREATE:
		ret = f_bo_create(d, arg);
		break;
	case DRM_IOCTL_VACCEL_BO_INFO:
		ret = f_bo_info(d, arg);
		break;
	case DRM_IOCTL_VACCEL_BO_SEAL:
		ret = f_bo_seal(d, arg);
		break;
	case DRM_IOCTL_GEM_CLOSE:
		ret = f_gem_close(d, arg);
		break;
	case DRM_IOCTL_VACCEL_VM_BIND:
		ret = f_vm_bind(d, arg);
		break;
	case DRM_IOCTL_VACCEL_VM_UNBIND:
		ret = f_vm_unbind(d, arg);
		break;
	case DRM_IOCTL_VACCEL_QUEUE_CREATE:
		ret = f_queue_create(d, arg);
		break;
	case DRM_IOCTL_VACCEL_QUEUE_DESTROY:
		ret = f_queue_destroy(d, arg);
		break;
	case DRM_IOCTL_VACCEL_KICK:
		ret = f_kick(d, arg);
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	fake_leave();
	if (!ret && req == DRM_IOCTL_VACCEL_KICK)
		feng_wake();
	return ret;
}

/* ---- PRIME ---- */

static struct fake_dmabuf *dmabuf_of_fd(int fd)
{
	struct stat st;
	unsigned int i;

	if (fstat(fd, &st))
		return NULL;
	for (i = 0; i < FAKE_MAX_DMABUFS; i++)
		if (fake.dmabufs[i].fd >= 0 && fake.dmabufs[i].st_ino == st.st_ino &&
		    fake.dmabufs[i].st_dev == st.st_dev)
			return &fake.dmabufs[i];
	return NULL;
}

/* A new dma-buf of object @o: a memfd, read-only when not @writable. */
static int dmabuf_new(uint32_t o, bool writable, uint32_t *out)
{
	struct fake_dmabuf *db = NULL;
	char path[64];
	struct stat st;
	unsigned int i;
	int mfd, fd;

	for (i = 0; i < FAKE_MAX_DMABUFS && !db; i++)
		if (fake.dmabufs[i].fd < 0)
			db = &fake.dmabufs[i];
	if (!db)
		return -EMFILE;
	mfd = memfd_create("fake-dmabuf", MFD_CLOEXEC);
	if (mfd < 0)
		return -errno;
	fd = mfd;
	if (!writable) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		close(mfd);
		if (fd < 0)
			return -errno;
	}
	if (fstat(fd, &st)) {
		close(fd);
		return -errno;
	}
	*db = (struct fake_dmabuf){ .fd = fd, .st_dev = st.st_dev, .st_ino = st.st_ino, .obj = o,
				    .writable = writable };
	*out = (uint32_t)(db - fake.dmabufs) + 1;
	return 0;
}

static int f_prime_export(int fd, uint32_t handle, int writable, int *out)
{
	struct fake_handle *fh;
	struct fake_obj *obj;
	struct fake_dev *d;
	uint32_t db = 0;
	int ret = 0;

	fake_enter();
	d = dev_of(fd);
	fh = d ? handle_get(d, handle) : NULL;
	if (!d) {
		ret = -EBADF;
	} else if (!fh) {
		ret = -ENOENT;
	} else {
		obj = &fake.objs[fh->obj - 1];
		writable = writable && !fh->read_only;
		if (!writable) {
			/* always a new read-only dma-buf */
			ret = dmabuf_new(fh->obj, false, &db);
		} else if (!obj->dmabuf) {
			ret = dmabuf_new(fh->obj, true, &db);
			if (!ret)
				obj->dmabuf = db;
		} else {
			db = obj->dmabuf;
		}
	}
	if (!ret) {
		*out = fcntl(fake.dmabufs[db - 1].fd, F_DUPFD_CLOEXEC, 0);
		if (*out < 0)
			ret = -errno;
	}
	fake_leave();
	return ret;
}

static int f_prime_import(int fd, int dmabuf, uint32_t *handle)
{
	struct fake_dmabuf *db;
	struct fake_dev *d;
	uint32_t i, id;
	int ret = 0;

	fake_enter();
	d = dev_of(fd);
	db = d ? dmabuf_of_fd(dmabuf) : NULL;
	if (!d) {
		ret = -EBADF;
	} else if (!db) {
		ret = fcntl(dmabuf, F_GETFD) < 0 ? -EBADF : -EINVAL;
	} else {
		id = (uint32_t)(db - fake.dmabufs) + 1;
		ret = -ENOENT;	/* "not found yet" */
		for (i = 0; i < FAKE_MAX_BOS && ret == -ENOENT; i++) {
			struct fake_handle *fh = &d->handles[i];

			/* our own object again (writable), or this dma-buf imported before */
			if (fh->obj == db->obj &&
			    ((db->writable && !fh->imported && fake.objs[db->obj - 1].dev ==
			      (int)dev_index(d)) || fh->dmabuf == id)) {
				*handle = i + 1;
				ret = 0;
			}
		}
		if (ret == -ENOENT)
			ret = handle_new(d, db->obj,
					 fake.objs[db->obj - 1].dev != (int)dev_index(d) ||
					 !db->writable, !db->writable, id, handle);
	}
	fake_leave();
	return ret;
}

static int f_dmabuf_read_only(int dmabuf)
{
	int fl = fcntl(dmabuf, F_GETFL);

	if (fl < 0)
		return -errno;
	return (fl & O_ACCMODE) == O_RDONLY;
}

/* ---- the packet core's OS layer ---- */

/* The queue the core runs: its "os" pointer is the struct fake_queue. */
static struct fake_dev *q_dev(const struct fake_queue *q)
{
	return &fake.devs[q->dev];
}

u32 vaccel_os_map(void *os, u64 va, u64 len, u32 access, void **ptr, u64 *avail, void **cookie)
{
	struct fake_queue *q = os;
	struct fake_obj *obj = NULL;
	uint64_t av = 0;
	u32 f;

	fake_ignore_begin();
	f = dev_translate(q_dev(q), va, len, access & ~VACCEL_CORE_ACCESS_SEALED, ptr,
			  avail ? &av : NULL, &obj);
	if (!f && (access & VACCEL_CORE_ACCESS_SEALED) && !obj->sealed)
		f = DRM_VACCEL_FAULT_NOT_SEALED;
	fake_ignore_end();
	if (!f && avail)
		*avail = av;
	*cookie = NULL;
	return f;
}

void vaccel_os_unmap(void *os, void *cookie)
{
	(void)os;
	(void)cookie;
}

/* The signal word at @va for @access: 0 or a fault. */
static u32 os_signal_word(struct fake_queue *q, u64 va, u32 access, uint64_t **word)
{
	struct fake_obj *obj = NULL;
	void *p;
	u32 f;

	if (va % 8)
		return DRM_VACCEL_FAULT_ALIGNMENT;
	fake_ignore_begin();
	f = dev_translate(q_dev(q), va, 8, access, &p, NULL, &obj);
	if (!f && !(obj->flags & DRM_VACCEL_BO_SIGNAL))
		f = DRM_VACCEL_FAULT_NOT_SIGNAL;
	fake_ignore_end();
	*word = p;
	return f;
}

u32 vaccel_os_signal(void *os, u64 va, u32 op, u64 value, bool irq)
{
	struct fake_queue *q = os;
	uint64_t *w;
	u32 f;

	(void)irq;
	f = os_signal_word(q, va, DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE, &w);
	if (f)
		return f;
	/* the work before this signal is done: its time, before anyone sees it */
	if (!q->sig_clock)
		q->sig_clock = fake_clock();
	signal_ref_apply(w, op, value);
	return DRM_VACCEL_FAULT_NONE;
}

u32 vaccel_os_signal_read(void *os, u64 va, u64 *value)
{
	uint64_t *w;
	u32 f = os_signal_word(os, va, DRM_VACCEL_VM_READ, &w);

	if (!f)
		*value = __atomic_load_n(w, __ATOMIC_ACQUIRE);
	return f;
}

u32 vaccel_os_exec_check(void *os, u64 va, u64 len)
{
	struct fake_queue *q = os;
	struct fake_obj *obj = NULL;
	void *p;
	u32 f;

	fake_ignore_begin();
	f = dev_translate(q_dev(q), va, len, DRM_VACCEL_VM_READ, &p, NULL, &obj);
	if (!f && !obj->sealed)
		f = DRM_VACCEL_FAULT_NOT_SEALED;
	fake_ignore_end();
	return f;
}

u64 vaccel_os_now_ns(void *os)
{
	(void)os;
	return fake_clock();
}

u64 vaccel_os_charge(void *os, u64 *first)
{
	(void)os;
	*first = 0;
	return 0;
}

/* ---- TIMESTAMPs and the completion of the packet before them ---- */

struct fake_stamp {
	uint64_t value;		/* what the TIMESTAMP wrote */
	uint64_t prev_done;	/* when the packet before it on its queue completed */
};

static struct {
	struct fake_stamp *v;
	size_t n, cap;
} fake_stamps;

static void stamp_log(uint64_t value, uint64_t prev_done)
{
	fake_ignore_begin();
	if (fake_stamps.n == fake_stamps.cap) {
		size_t cap = fake_stamps.cap ? 2 * fake_stamps.cap : 4096;
		struct fake_stamp *v = realloc(fake_stamps.v, cap * sizeof(*v));

		if (!v)
			abort();
		fake_stamps.v = v;
		fake_stamps.cap = cap;
	}
	fake_stamps.v[fake_stamps.n++] = (struct fake_stamp){ value, prev_done };
	fake_ignore_end();
}

/*
 * The completion time of the packet that ran before the TIMESTAMP that
 * wrote @value, on its queue: 0, or -ENOENT if no TIMESTAMP wrote it.
 * Call while the engine is idle (after the work is done).
 */
FAKE_API int fake_stamp_prev(uint64_t value, uint64_t *prev_done)
{
	size_t lo = 0, hi, mid;
	int ret = -ENOENT;

	fake_enter();
	hi = fake_stamps.n;
	/* logged in the order they ran, so in increasing values */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (fake_stamps.v[mid].value < value)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < fake_stamps.n && fake_stamps.v[lo].value == value) {
		*prev_done = fake_stamps.v[lo].prev_done;
		ret = 0;
	}
	fake_leave();
	return ret;
}

FAKE_API void fake_stamp_reset(void)
{
	fake_enter();
	free(fake_stamps.v);
	memset(&fake_stamps, 0, sizeof(fake_stamps));
	fake_leave();
}

void vaccel_os_packet(void *os, const struct drm_vaccel_packet *pkt, u64 index,
		      unsigned int depth, bool done)
{
	uint32_t type = pkt->header & DRM_VACCEL_PKT_TYPE_MASK;
	struct fake_queue *q = os;
	uint64_t t;
	uint64_t *w;
	void *p;

	(void)index;
	(void)depth;
	if (!done)
		return;
	t = q->sig_clock ? q->sig_clock : fake_clock();
	q->sig_clock = 0;
	/*
	 * A task's work: not its WAITs, not TIMESTAMPs, not SIGNALs (the
	 * queue layer's progress marks are SIGNALs, and may come between a
	 * task's last packet and its end TIMESTAMP).
	 */
	if (type != DRM_VACCEL_PKT_SIGNAL && type != DRM_VACCEL_PKT_WAIT &&
	    type != DRM_VACCEL_PKT_TIMESTAMP)
		q->last_done = t;
	if (type != DRM_VACCEL_PKT_TIMESTAMP)
		return;
	fake_ignore_begin();
	if (dev_translate(q_dev(q), pkt->operand[0], 8, DRM_VACCEL_VM_READ, &p, NULL, NULL))
		p = NULL;
	fake_ignore_end();
	if (p) {
		w = p;
		stamp_log(*w, q->last_done);
	}
}

u32 vaccel_os_map_part(void *os, u64 va, u64 len, u64 touched, u32 access, void **ptr,
		       void **cookie)
{
	(void)touched;	/* no link model here */
	return vaccel_os_map(os, va, len, access, ptr, NULL, cookie);
}

void vaccel_os_fpu_begin(void *os)
{
	(void)os;
}

void vaccel_os_fpu_end(void *os)
{
	(void)os;
}

/* ---- running a queue ---- */

static void queue_fault(struct drm_vaccel_queue_control *ctrl, uint32_t code, uint64_t index,
			uint64_t addr)
{
	ctrl->fault = code;
	ctrl->fault_index = index;
	ctrl->fault_addr = addr;
	__atomic_store_n(&ctrl->state, DRM_VACCEL_QUEUE_ERROR, __ATOMIC_RELEASE);
}

/* fake_complete_all: a SIGNAL or completion action at @va of @d; false if not a signal. */
static bool feng_signal(struct fake_dev *d, uint64_t va, uint32_t op, uint64_t value)
{
	struct fake_obj *obj = NULL;
	uint32_t f;
	void *w;

	if (va % 8 || op < DRM_VACCEL_SIGNAL_SET || op > DRM_VACCEL_SIGNAL_MAX)
		return false;
	fake_ignore_begin();
	f = dev_translate(d, va, 8, DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE, &w, NULL, &obj);
	if (!f && !(obj->flags & DRM_VACCEL_BO_SIGNAL))
		f = DRM_VACCEL_FAULT_NOT_SIGNAL;
	fake_ignore_end();
	if (!f)
		signal_ref_apply(w, op, value);
	return !f;
}

/* fake_complete_all: an EXEC's frame (its binding table and epoch). */
struct fake_frame {
	uint64_t epoch, table[DRM_VACCEL_EXEC_MAX_BINDINGS];
	unsigned int n;
};

/* A device address of a body packet, binding addresses resolved; 0 if bad. */
static uint64_t frame_addr(const struct fake_frame *fr, uint64_t addr)
{
	if (!(addr & DRM_VACCEL_BINDING_FLAG))
		return addr;
	if (!fr || DRM_VACCEL_BINDING_INDEX(addr) >= fr->n)
		return 0;
	return fr->table[DRM_VACCEL_BINDING_INDEX(addr)] + DRM_VACCEL_BINDING_OFFSET(addr);
}

/*
 * fake_complete_all: complete packet @p in frame @fr (NULL on the ring):
 * its SIGNAL, the body of an EXEC, its completion action. false to fault.
 */
static bool feng_complete(struct fake_dev *d, const struct drm_vaccel_packet *p,
			    const struct fake_frame *fr, unsigned int depth)
{
	uint32_t type = p->header & DRM_VACCEL_PKT_TYPE_MASK;
	uint64_t value;

	if (type == DRM_VACCEL_PKT_SIGNAL) {
		value = p->operand[1];
		if (p->flags & DRM_VACCEL_SIGNAL_F_EPOCH)
			value += fr ? fr->epoch : 0;
		if (!feng_signal(d, frame_addr(fr, p->operand[0]), p->arg, value))
			return false;
	} else if (type == DRM_VACCEL_PKT_EXEC) {
		const struct drm_vaccel_packet *body = NULL;
		struct fake_frame sub = { 0 };
		const uint64_t *table = NULL;
		uint64_t i, n = p->operand[1];
		struct fake_obj *obj = NULL;
		void *bp, *tp = NULL;
		bool ok;

		if (depth >= VACCEL_CORE_MAX_DEPTH || p->arg > DRM_VACCEL_EXEC_MAX_BINDINGS)
			return false;
		fake_ignore_begin();
		ok = !dev_translate(d, frame_addr(fr, p->operand[0]), n * sizeof(*body),
				    DRM_VACCEL_VM_READ, &bp, NULL, &obj) && obj->sealed;
		if (ok && p->arg)
			ok = !dev_translate(d, frame_addr(fr, p->operand[3]), 8ull * p->arg,
					    DRM_VACCEL_VM_READ, &tp, NULL, NULL);
		fake_ignore_end();
		if (!ok)
			return false;
		body = bp;
		table = tp;
		if (p->arg) {
			memcpy(sub.table, table, 8ull * p->arg);
			sub.n = p->arg;
		} else if (fr) {
			memcpy(sub.table, fr->table, sizeof(sub.table));
			sub.n = fr->n;
		}
		sub.epoch = p->operand[2];
		if (p->flags & DRM_VACCEL_EXEC_F_EPOCH && fr)
			sub.epoch += fr->epoch;
		for (i = 0; i < n; i++)
			if (!feng_complete(d, &body[i], &sub, depth + 1))
				return false;
	}
	return !p->completion_op ||
	       feng_signal(d, frame_addr(fr, p->completion_addr), p->completion_op,
			     p->completion_value);
}

/* the core's progress, to tell a step that did something from one that did not */
struct core_mark {
	uint64_t read_index, packets, progress, busy_until, next;
	unsigned int depth;
	bool have_pkt, done;
};

static void core_mark(const struct vaccel_core_queue *c, struct core_mark *m)
{
	*m = (struct core_mark){
		.read_index = c->read_index, .packets = c->packets, .progress = c->progress,
		.busy_until = c->busy_until, .depth = c->depth, .have_pkt = c->have_pkt,
		.done = c->done, .next = c->depth ? c->frames[c->depth - 1].next : 0,
	};
}

/* Is there work on @q: a doorbell past the read index, or a packet under way? */
static bool queue_has_work(struct fake_queue *q)
{
	uint64_t wi;

	if (__atomic_load_n(&q->ctrl->state, __ATOMIC_RELAXED) != DRM_VACCEL_QUEUE_RUNNING)
		return false;
	wi = __atomic_load_n(q->doorbell, __ATOMIC_ACQUIRE);
	return wi != q->core.read_index || q->core.have_pkt || q->core.depth || q->core.busy_until;
}

/*
 * Run up to @budget steps of queue @q (fake lock held, TSan looking).
 * Returns true if it made progress.
 */
static bool feng_queue(struct fake_queue *q, unsigned int budget)
{
	struct drm_vaccel_queue_control *ctrl = q->ctrl;
	uint64_t wi, ri;
	struct core_mark before, after;
	unsigned int n = 0;

	if (__atomic_load_n(&ctrl->state, __ATOMIC_RELAXED) != DRM_VACCEL_QUEUE_RUNNING)
		return false;
	/* the doorbell: values at or below the last accepted one are ignored */
	wi = __atomic_load_n(q->doorbell, __ATOMIC_ACQUIRE);
	if ((int64_t)(wi - q->accepted) > 0) {
		if (wi - q->core.read_index > q->size) {
			queue_fault(ctrl, DRM_VACCEL_FAULT_DOORBELL, q->core.read_index, 0);
			return false;
		}
		q->accepted = wi;
	}
	if (fake_complete_all) {
		struct fake_dev *d = q_dev(q);

		for (ri = q->core.read_index; ri != q->accepted && n < budget; ri++, n++) {
			struct drm_vaccel_packet p = { 0 };
			void *src;
			uint32_t f;

			fake_ignore_begin();
			f = dev_translate(d, q->core.ring_va + (ri & (q->size - 1)) * sizeof(p),
					  sizeof(p), DRM_VACCEL_VM_READ, &src, NULL, NULL);
			fake_ignore_end();
			if (!f) {
				memcpy(&p, src, sizeof(p));
				if (!feng_complete(d, &p, NULL, 0))
					f = DRM_VACCEL_FAULT_BAD_PACKET;
			}
			if (f) {
				queue_fault(ctrl, DRM_VACCEL_FAULT_BAD_PACKET, ri, p.operand[0]);
				break;
			}
			q->core.read_index = ri + 1;
			__atomic_store_n(&ctrl->read_index, ri + 1, __ATOMIC_RELEASE);
		}
		__atomic_fetch_add(&fake_packets_run, n, __ATOMIC_RELAXED);
		return n > 0;
	}
	core_mark(&q->core, &before);
	if (vaccel_core_run(&q->core, q->accepted, budget) == VACCEL_CORE_FAULT) {
		ctrl->fault_depth = q->core.fault_depth;
		ctrl->fault_binding = q->core.fault_binding;
		ctrl->fault_exec_index = q->core.fault_exec_index;
		queue_fault(ctrl, q->core.fault, q->core.fault_index, q->core.fault_addr);
	}
	core_mark(&q->core, &after);
	if (after.read_index != before.read_index)
		__atomic_store_n(&ctrl->read_index, after.read_index, __ATOMIC_RELEASE);
	__atomic_fetch_add(&fake_packets_run, after.packets - before.packets, __ATOMIC_RELAXED);
	return memcmp(&before, &after, sizeof(before)) != 0;
}

/* Run @q with the lock held but its accesses seen by TSan. */
static bool feng_queue_seen(struct fake_queue *q, unsigned int budget)
{
	bool progress;

	fake_ignore_end();
	progress = feng_queue(q, budget);
	fake_ignore_begin();
	return progress;
}

/*
 * One pass over every queue of every device, up to @budget steps each;
 * returns how many queues made progress. An engine that runs is awake:
 * need_wakeup is cleared.
 */
FAKE_API unsigned int fake_engine_step(unsigned int budget)
{
	unsigned int d, i, n = 0;

	for (d = 0; d < FAKE_MAX_DEVICES; d++) {
		for (i = 0; i < FAKE_MAX_QUEUES; i++) {
			struct fake_queue *q;

			fake_enter();
			q = &fake.devs[d].queues[i];
			if (fake.devs[d].open && q->used) {
				if (__atomic_load_n(&q->ctrl->need_wakeup, __ATOMIC_RELAXED))
					__atomic_store_n(&q->ctrl->need_wakeup, 0,
							 __ATOMIC_RELAXED);
				n += feng_queue_seen(q, budget);
			}
			fake_leave();
		}
	}
	return n;
}

/* ---- the fake's own engine thread ---- */

/**
 * struct fake_engine_params - how the fake's engine thread runs
 * @seed: of its choices (nonzero)
 * @poll_ns: how long it polls after its last progress before it sleeps
 * @max_burst: at most this many steps of a queue before it picks again (>= 1)
 */
struct fake_engine_params {
	uint64_t seed;
	uint64_t poll_ns;
	unsigned int max_burst;
};

static uint64_t feng_rand(void)
{
	fake_eng.rng ^= fake_eng.rng << 13;
	fake_eng.rng ^= fake_eng.rng >> 7;
	fake_eng.rng ^= fake_eng.rng << 17;
	return fake_eng.rng;
}

/*
 * One burst of a random queue that has work: try them in a random order
 * until one makes progress. Returns whether one did; *@deadline gets the
 * earliest time a busy or waiting queue changes by itself (0: none).
 */
static bool feng_round(uint64_t *deadline)
{
	struct fake_queue *cand[FAKE_MAX_DEVICES * FAKE_MAX_QUEUES];
	unsigned int n = 0, d, i, k;
	bool progress = false;

	*deadline = 0;
	fake_enter();
	for (d = 0; d < FAKE_MAX_DEVICES; d++)
		for (i = 0; i < FAKE_MAX_QUEUES; i++) {
			struct fake_queue *q = &fake.devs[d].queues[i];

			if (fake.devs[d].open && q->used && queue_has_work(q))
				cand[n++] = q;
		}
	while (n && !progress) {
		struct fake_queue *q;

		k = (unsigned int)(feng_rand() % n);
		q = cand[k];
		cand[k] = cand[--n];
		progress = feng_queue_seen(q, 1 + (unsigned int)(feng_rand() % fake_eng.max_burst));
		if (!progress) {
			uint64_t t = q->core.busy_until ? q->core.busy_until : q->core.deadline;

			if (t && (!*deadline || t < *deadline))
				*deadline = t;
		}
	}
	fake_leave();
	return progress;
}

/* need_wakeup of every queue: set (before sleeping) or cleared (awake) */
static void feng_flags(uint32_t v)
{
	unsigned int d, i;

	fake_enter();
	for (d = 0; d < FAKE_MAX_DEVICES; d++)
		for (i = 0; i < FAKE_MAX_QUEUES; i++) {
			struct fake_queue *q = &fake.devs[d].queues[i];

			if (fake.devs[d].open && q->used &&
			    __atomic_load_n(&q->ctrl->need_wakeup, __ATOMIC_RELAXED) != v) {
				fake_ignore_end();
				__atomic_store_n(&q->ctrl->need_wakeup, v, __ATOMIC_SEQ_CST);
				fake_ignore_begin();
			}
		}
	fake_leave();
}

/* After need_wakeup was set and a full fence: did a doorbell move? */
static bool feng_new_work(void)
{
	unsigned int d, i;
	bool work = false;

	fake_enter();
	for (d = 0; d < FAKE_MAX_DEVICES && !work; d++)
		for (i = 0; i < FAKE_MAX_QUEUES && !work; i++) {
			struct fake_queue *q = &fake.devs[d].queues[i];

			if (fake.devs[d].open && q->used &&
			    __atomic_load_n(&q->ctrl->state, __ATOMIC_RELAXED) ==
			    DRM_VACCEL_QUEUE_RUNNING) {
				fake_ignore_end();
				work = (int64_t)(__atomic_load_n(q->doorbell, __ATOMIC_SEQ_CST) -
						 q->accepted) > 0;
				fake_ignore_begin();
			}
		}
	fake_leave();
	return work;
}

/* Sleep until woken, @until (fake_clock(), 0: no limit) or the end of a pause. */
static void feng_sleep(uint64_t until)
{
	struct timespec ts;
	uint64_t now, ns;

	fake_ignore_begin();
	pthread_mutex_lock(&fake_eng.lock);
	while (!fake_eng.wake && !fake_eng.stop) {
		now = fake_clock();
		if (fake_eng.pause_until && (!until || fake_eng.pause_until < until))
			until = fake_eng.pause_until;
		if (until && now >= until)
			break;
		/* the fake clock runs at CLOCK_MONOTONIC's pace; the condition's is REALTIME */
		ns = until ? until - now : 1000000000ull;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)(ns / 1000000000ull);
		ts.tv_nsec += (long)(ns % 1000000000ull);
		if (ts.tv_nsec >= 1000000000l) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000l;
		}
		pthread_cond_timedwait(&fake_eng.cond, &fake_eng.lock, &ts);
	}
	fake_eng.wake = false;
	pthread_mutex_unlock(&fake_eng.lock);
	fake_ignore_end();
}

static bool feng_stopping(void)
{
	bool stop;

	fake_ignore_begin();
	pthread_mutex_lock(&fake_eng.lock);
	stop = fake_eng.stop;
	pthread_mutex_unlock(&fake_eng.lock);
	fake_ignore_end();
	return stop;
}

/* the end of the current pause (fake_clock()), 0 if not paused */
static uint64_t feng_paused(void)
{
	uint64_t until;

	fake_ignore_begin();
	pthread_mutex_lock(&fake_eng.lock);
	until = fake_eng.pause_until;
	if (until && fake_clock() >= until)
		until = fake_eng.pause_until = 0;
	pthread_mutex_unlock(&fake_eng.lock);
	fake_ignore_end();
	return until;
}

static void *feng_main(void *arg)
{
	uint64_t idle_since = 0, deadline, until, now;

	(void)arg;
	while (!feng_stopping()) {
		until = feng_paused();
		if (until) {
			feng_sleep(until);
			continue;
		}
		if (feng_round(&deadline)) {
			idle_since = 0;
			continue;
		}
		now = fake_clock();
		if (!idle_since)
			idle_since = now;
		if (now - idle_since < fake_eng.poll_ns) {
			sched_yield();
			continue;
		}
		/*
		 * the NEED_WAKEUP protocol: flag, full fence, look again,
		 * sleep; membarrier() first when the library's queues skip
		 * the submitter's fence (lib/membarrier.c). If it fails, a
		 * doorbell is late by the sleep's 1 ms at most, never lost.
		 */
		feng_flags(1);
		if (acc_membarrier_ready() && acc_membarrier() &&
		    (!deadline || deadline > fake_clock() + 1000000))
			deadline = fake_clock() + 1000000;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!feng_new_work()) {
			__atomic_fetch_add(&fake_sleeps, 1, __ATOMIC_RELAXED);
			feng_sleep(deadline);
		}
		feng_flags(0);
		idle_since = 0;
	}
	return NULL;
}

/* Start the fake's engine thread: 0 or -errno. */
FAKE_API int fake_engine_start(const struct fake_engine_params *p)
{
	int ret;

	fake_eng.rng = p->seed ? p->seed : 1;
	fake_eng.poll_ns = p->poll_ns;
	fake_eng.max_burst = p->max_burst ? p->max_burst : 1;
	fake_eng.stop = false;
	fake_eng.wake = false;
	fake_eng.pause_until = 0;
	ret = pthread_create(&fake_eng.thread, NULL, feng_main, NULL);
	if (ret)
		return -ret;
	fake_eng.running = true;
	return 0;
}

FAKE_API void fake_engine_stop(void)
{
	if (!fake_eng.running)
		return;
	fake_ignore_begin();
	pthread_mutex_lock(&fake_eng.lock);
	fake_eng.stop = true;
	pthread_cond_broadcast(&fake_eng.cond);
	pthread_mutex_unlock(&fake_eng.lock);
	fake_ignore_end();
	pthread_join(fake_eng.thread, NULL);
	fake_eng.running = false;
}

/* The engine runs nothing for @ns (or until fake_engine_resume()). */
FAKE_API void fake_engine_pause(uint64_t ns)
{
	fake_ignore_begin();
	pthread_mutex_lock(&fake_eng.lock);
	fake_eng.pause_until = fake_clock() + ns;
	pthread_mutex_unlock(&fake_eng.lock);
	fake_ignore_end();
}

FAKE_API void fake_engine_resume(void)
{
	fake_ignore_begin();
	pthread_mutex_lock(&fake_eng.lock);
	fake_eng.pause_until = 0;
	fake_eng.wake = true;
	pthread_cond_broadcast(&fake_eng.cond);
	pthread_mutex_unlock(&fake_eng.lock);
	fake_ignore_end();
}

/* ---- the backend ---- */

static int fake_init(void)
{
	unsigned int i;
	void *arena;
	int fd;

	if (fake.inited)
		return 0;
	fd = memfd_create("fake-vaccel-arena", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)(FAKE_ARENA_PAGES * FAKE_PAGE))) {
		close(fd);
		return -errno;
	}
	arena = mmap(NULL, FAKE_ARENA_PAGES * FAKE_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (arena == MAP_FAILED) {
		close(fd);
		return -errno;
	}
	fake.arena_fd = fd;
	fake.arena = arena;
	for (i = 0; i < FAKE_MAX_DMABUFS; i++)
		fake.dmabufs[i].fd = -1;
	fake.inited = true;
	return 0;
}

/* "fake" or "fakeN": the device index, or -1 */
static int fake_path_index(const char *path)
{
	char *end;
	long n;

	if (strncmp(path, "fake", 4))
		return -1;
	if (!path[4])
		return 0;
	n = strtol(path + 4, &end, 10);
	return *end || n < 0 || n >= (long)FAKE_MAX_DEVICES ? -1 : (int)n;
}

static int f_open(const char *path, int read_only)
{
	int idx = fake_path_index(path), fd, ret = 0;
	struct fake_dev *d;

	if (idx < 0)
		return -ENOENT;
	fd = memfd_create("fake-vaccel", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (read_only)
		return fd;	/* tp_driver_is(): a file to ask the driver's name */
	fake_enter();
	ret = fake_init();
	d = &fake.devs[idx];
	if (!ret && d->open) {
		ret = -EBUSY;
	} else if (!ret) {
		memset(d, 0, sizeof(*d));
		d->open = true;
		d->fd = fd;
	}
	fake_leave();
	if (ret)
		close(fd);
	return ret ? ret : fd;
}

/* Closing the file: its queues, mappings and handles go, as in the module. */
static void f_close(int fd)
{
	struct fake_dev *d;
	unsigned int i;

	fake_enter();
	d = dev_of(fd);
	if (d) {
		for (i = 0; i < FAKE_MAX_QUEUES; i++)
			if (d->queues[i].used)
				queue_free(&d->queues[i]);
		for (i = 0; i < d->maps_hi; i++)
			if (d->maps[i].obj)
				map_remove(d, &d->maps[i]);
		for (i = 0; i < FAKE_MAX_BOS; i++)
			if (d->handles[i].obj)
				handle_close(&d->handles[i]);
		d->open = false;
	}
	fake_leave();
	close(fd);
}

static int f_driver_name(int fd, char *buf, size_t len)
{
	(void)fd;
	snprintf(buf, len, "vaccel");
	return 0;
}

static void *f_mmap(int fd, uint64_t offset, size_t len, int prot, int *err)
{
	struct fake_hostmap *hm = NULL;
	struct fake_dev *d;
	struct fake_obj *obj;
	void *p = NULL;
	uint32_t o, i;
	bool allowed = false, writable = prot & PROT_WRITE;

	*err = -EINVAL;
	fake_enter();
	d = dev_of(fd);
	o = obj_at_offset(offset);
	obj = o ? &fake.objs[o - 1] : NULL;
	if (!d || !obj || !len || len > obj->size)
		goto out;
	/* the file must hold the object: a handle, or a queue of its own */
	for (i = 0; i < FAKE_MAX_BOS && !allowed; i++)
		if (d->handles[i].obj == o) {
			allowed = true;
			if (writable && (d->handles[i].read_only || obj->sealed)) {
				*err = -EACCES;
				goto out;
			}
		}
	for (i = 0; i < FAKE_MAX_QUEUES && !allowed; i++)
		if (d->queues[i].used && (d->queues[i].db_obj == o || d->queues[i].ctrl_obj == o)) {
			allowed = true;
			if (writable && d->queues[i].ctrl_obj == o) {
				*err = -EACCES;	/* the control page is read-only */
				goto out;
			}
		}
	if (!allowed) {
		*err = -EACCES;
		goto out;
	}
	for (i = 0; i < FAKE_MAX_HOSTMAPS && !hm; i++)
		if (!fake.hostmaps[i].addr)
			hm = &fake.hostmaps[i];
	if (!hm) {
		*err = -ENOMEM;
		goto out;
	}
	p = fake.arena + offset;
	*hm = (struct fake_hostmap){ .addr = p, .len = len, .obj = o, .writable = writable };
	obj_get(o);
	if (writable)
		obj->writable_mmaps++;
out:
	fake_leave();
	return p;
}

static int f_munmap(void *addr, size_t len)
{
	unsigned int i;

	/* the arena stays; the pages go with their object */
	fake_enter();
	for (i = 0; i < FAKE_MAX_HOSTMAPS; i++) {
		struct fake_hostmap *hm = &fake.hostmaps[i];

		if (hm->addr == addr && hm->len == len) {
			if (hm->writable)
				fake.objs[hm->obj - 1].writable_mmaps--;
			hm->addr = NULL;
			obj_put(hm->obj);
			break;
		}
	}
	fake_leave();
	return 0;
}

/*
 * mmap(MAP_FIXED) over a mapping of the same object with another
 * protection (accel_buffer_seal() makes its mapping read-only in place):
 * the arena stays; the mapping's writability changes as the kernel's vma's
 * would.
 */
static int f_remap(void *addr, int fd, uint64_t offset, size_t len, int prot)
{
	bool writable = prot & PROT_WRITE;
	unsigned int i;
	int ret = -EINVAL;

	(void)fd;
	fake_enter();
	for (i = 0; i < FAKE_MAX_HOSTMAPS; i++) {
		struct fake_hostmap *hm = &fake.hostmaps[i];
		struct fake_obj *obj;

		if (hm->addr != addr || hm->len != len || obj_at_offset(offset) != hm->obj)
			continue;
		obj = &fake.objs[hm->obj - 1];
		if (writable && !hm->writable && obj->sealed) {
			ret = -EACCES;
			break;
		}
		if (writable != hm->writable) {
			if (writable)
				obj->writable_mmaps++;
			else
				obj->writable_mmaps--;
			hm->writable = writable;
		}
		ret = 0;
		break;
	}
	fake_leave();
	return ret;
}

/* Bytes of device memory charged to device @idx now. */
FAKE_API uint64_t fake_mem_used(unsigned int idx)
{
	uint64_t used;

	fake_enter();
	used = fake.devs[idx].mem_used;
	fake_leave();
	return used;
}

/* tp_ops.asym_doorbell: the fake's engine thread calls membarrier() before it sleeps */
static bool f_asym_doorbell(int fd)
{
	(void)fd;
	return acc_membarrier_ready();
}

static const struct tp_ops fake_ops = {
	.name = "fake",
	.open = f_open,
	.close = f_close,
	.driver_name = f_driver_name,
	.ioctl = f_ioctl,
	.ioctl_once = f_ioctl,
	.mmap = f_mmap,
	.munmap = f_munmap,
	.remap = f_remap,
	.prime_export = f_prime_export,
	.prime_import = f_prime_import,
	.dmabuf_read_only = f_dmabuf_read_only,
	.asym_doorbell = f_asym_doorbell,
};

#endif /* FAKE_KMOD_H */
