/* SPDX-License-Identifier: MIT */
/*
 * A fake vaccel module for native tests of libaccel: an in-memory model of
 * the ioctls the library calls (GET_PARAM, BO_CREATE/INFO, GEM_CLOSE,
 * VM_BIND/UNBIND, QUEUE_CREATE/DESTROY, KICK, SIGNAL_WRITE, WAIT_SIGNALS)
 * behind a transport backend (lib/transport.h), and an engine step that a
 * test thread calls to run what the doorbells published (NOP and SIGNAL
 * packets and completion actions; anything else faults the queue with
 * BAD_PACKET).
 *
 * With fake_complete_all set (benchmarks of the library's host cost, such
 * as tools/taskgraph-bench.c), every packet type completes at once: only
 * its completion action is applied (WAITs count as satisfied, DELAY,
 * COPY, FILL, REDUCE, MATMUL and TIMESTAMP touch no memory). An EXEC of a
 * sealed buffer walks its body the same way, applying the body's SIGNAL
 * packets (with the launch's epoch where the packet asks for it) and
 * completion actions, binding addresses resolved through the EXEC's
 * table, nested EXECs included; then the EXEC's own completion action.
 *
 * One device per process. Object memory is an arena: a memfd mapped once
 * (MAP_SHARED); a BO, doorbell or control page is a run of its pages and
 * its "mmap offset" is its place in the arena. The backend's mmap returns
 * the arena address itself (the protection asked for is not applied) and
 * its munmap leaves the arena alone, so the library and the fake's engine
 * touch the same words at the same addresses: ThreadSanitizer sees the
 * release/acquire pairs of the doorbell, read index and signal words, and
 * any plain access racing with them. Freed pages are punched out of the
 * memfd (they read zero again) and their shadow state is reset when they
 * are reused (AnnotateNewMemory), as a fresh mmap would.
 *
 * The fake's own bookkeeping sits behind one mutex. Its lock, unlock and
 * bookkeeping accesses are hidden from TSan (AnnotateIgnoreSync/Reads/
 * Writes): otherwise every ioctl would order the calling threads with each
 * other, and that ordering would hide races between the library's threads
 * that a real kernel does not order. Only the words the device and the
 * program share (arena memory) are seen.
 *
 * Not modelled: removal (no -ENODEV), PRIME export and import (one device),
 * the checks of sealing (BO_SEAL only marks a persistent object sealed, for
 * EXEC), WAIT packets that block, need_wakeup (the engine never sleeps, so the
 * library never needs to KICK), faults other than BAD_PACKET and a
 * doorbell more than a ring ahead.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef FAKE_KMOD_H
#define FAKE_KMOD_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "signal_ref.h"

/* ThreadSanitizer's dynamic annotations (the runtime defines them) */
void AnnotateIgnoreSyncBegin(const char *file, int line);
void AnnotateIgnoreSyncEnd(const char *file, int line);
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
void AnnotateNewMemory(const char *file, int line, const volatile void *mem, size_t size);

#define FAKE_PAGE		4096ull
#define FAKE_ARENA_PAGES	16384u		/* 64 MiB */
#define FAKE_MAX_BOS		1024u
#define FAKE_MAX_MAPS		1024u
#define FAKE_MAX_QUEUES		32u
#define FAKE_VA_START		0x100000000ull
#define FAKE_VA_SIZE		(1ull << 36)
#define FAKE_CAPACITY		(FAKE_ARENA_PAGES * FAKE_PAGE)

struct fake_bo {
	bool used, sealed;
	uint32_t flags;
	uint64_t size, off;
};

struct fake_map {
	bool used;
	uint32_t handle, flags;
	uint64_t va, size, bo_offset;
};

struct fake_queue {
	bool used;
	struct drm_vaccel_packet *ring;
	uint32_t size;
	uint64_t db_off, ctrl_off;
};

static struct fake_dev {
	int fd;
	char *arena;
	pthread_mutex_t lock;
	uint64_t mem_used;
	uint32_t page_hint;
	uint8_t page_used[FAKE_ARENA_PAGES];
	struct fake_bo bos[FAKE_MAX_BOS];		/* handle = index + 1 */
	struct fake_map maps[FAKE_MAX_MAPS];
	struct fake_queue queues[FAKE_MAX_QUEUES];	/* id = index + 1 */
} fake = { .fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

/* Counters for the test's checks (relaxed: they order nothing). */
static uint64_t fake_packets_run, fake_waits, fake_signal_writes;

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
	AnnotateIgnoreSyncBegin(__FILE__, __LINE__);
	AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
	AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
}

static void fake_ignore_end(void)
{
	AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
	AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
	AnnotateIgnoreSyncEnd(__FILE__, __LINE__);
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

/* ---- arena pages (lock held) ---- */

static int pages_alloc(uint64_t bytes, uint64_t *off)
{
	uint32_t n = (uint32_t)((bytes + FAKE_PAGE - 1) / FAKE_PAGE), start, i, tries;

	if (!n || n > FAKE_ARENA_PAGES)
		return -ENOMEM;
	start = fake.page_hint;
	for (tries = 0; tries < 2 * FAKE_ARENA_PAGES; tries++) {
		if (start + n > FAKE_ARENA_PAGES)
			start = 0;
		for (i = 0; i < n && !fake.page_used[start + i]; i++)
			;
		if (i == n) {
			memset(&fake.page_used[start], 1, n);
			fake.page_hint = start + n;
			*off = start * FAKE_PAGE;
			/* fresh memory for TSan, as a new mapping would be */
			AnnotateNewMemory(__FILE__, __LINE__, fake.arena + *off, n * FAKE_PAGE);
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
	fallocate(fake.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
		  (off_t)(n * FAKE_PAGE));
	memset(&fake.page_used[off / FAKE_PAGE], 0, n);
}

static struct fake_bo *bo_get(uint32_t handle)
{
	if (!handle || handle > FAKE_MAX_BOS || !fake.bos[handle - 1].used)
		return NULL;
	return &fake.bos[handle - 1];
}

/* The arena address of device address [va, va + len), or NULL. */
static void *va_to_ptr(uint64_t va, uint64_t len, bool want_signal)
{
	unsigned int i;

	for (i = 0; i < FAKE_MAX_MAPS; i++) {
		struct fake_map *m = &fake.maps[i];
		struct fake_bo *bo;

		if (!m->used || va < m->va || va + len > m->va + m->size)
			continue;
		bo = bo_get(m->handle);
		if (!bo || (want_signal && !(bo->flags & DRM_VACCEL_BO_SIGNAL)))
			return NULL;
		return fake.arena + bo->off + m->bo_offset + (va - m->va);
	}
	return NULL;
}

/* The signal word at @offset of signal object @handle, or NULL. */
static uint64_t *signal_word(uint32_t handle, uint64_t offset)
{
	struct fake_bo *bo = bo_get(handle);

	if (!bo || !(bo->flags & DRM_VACCEL_BO_SIGNAL) || offset % 8 || offset + 8 > bo->size)
		return NULL;
	return (uint64_t *)(fake.arena + bo->off + offset);
}

/* ---- the shared words (seen by TSan) ---- */

static bool cond_holds(const struct drm_vaccel_signal_cond *c, uint64_t v)
{
	uint64_t mask = c->mask ? c->mask : ~0ull;

	v &= mask;
	switch (c->cond) {
	case DRM_VACCEL_WAIT_GE:
		return c->mask ? ((v - c->value) & mask) <= (mask >> 1) :
		       (int64_t)(v - c->value) >= 0;
	case DRM_VACCEL_WAIT_EQ:
		return v == (c->value & mask);
	default:
		return v != (c->value & mask);
	}
}

/* ---- ioctls ---- */

static int f_get_param(struct drm_vaccel_get_param *p)
{
	static const uint64_t values[] = {
		[DRM_VACCEL_PARAM_UAPI_VERSION] = VACCEL_UAPI_VERSION,
		[DRM_VACCEL_PARAM_DEVICE_ID] = 0,
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
		p->value = fake.mem_used;
		return 0;
	}
	if (p->param >= sizeof(values) / sizeof(values[0]))
		return -EINVAL;
	p->value = values[p->param];
	return 0;
}

static int f_bo_create(struct drm_vaccel_bo_create *c)
{
	uint64_t size = (c->size + FAKE_PAGE - 1) & ~(FAKE_PAGE - 1);
	unsigned int i;
	int ret;

	if (!c->size || c->flags & ~(DRM_VACCEL_BO_PERSISTENT | DRM_VACCEL_BO_SIGNAL) ||
	    c->flags == (DRM_VACCEL_BO_PERSISTENT | DRM_VACCEL_BO_SIGNAL))
		return -EINVAL;
	for (i = 0; i < FAKE_MAX_BOS && fake.bos[i].used; i++)
		;
	if (i == FAKE_MAX_BOS)
		return -ENOSPC;
	ret = pages_alloc(size, &fake.bos[i].off);
	if (ret)
		return ret;
	fake.bos[i].used = true;
	fake.bos[i].flags = c->flags;
	fake.bos[i].size = size;
	fake.mem_used += size;
	c->handle = i + 1;
	c->size = size;
	c->mmap_offset = fake.bos[i].off;
	return 0;
}

static int f_bo_seal(struct drm_vaccel_bo_seal *s)
{
	struct fake_bo *bo = bo_get(s->handle);

	if (!bo)
		return -ENOENT;
	if (s->flags || !(bo->flags & DRM_VACCEL_BO_PERSISTENT))
		return -EINVAL;
	bo->sealed = true;
	return 0;
}

static int f_bo_info(struct drm_vaccel_bo_info *info)
{
	struct fake_bo *bo = bo_get(info->handle);

	if (!bo)
		return -ENOENT;
	info->flags = bo->flags;
	info->size = bo->size;
	info->mmap_offset = bo->off;
	info->status = 0;
	return 0;
}

static int f_gem_close(struct drm_gem_close *c)
{
	struct fake_bo *bo = bo_get(c->handle);
	unsigned int i;

	if (!bo)
		return -EINVAL;
	for (i = 0; i < FAKE_MAX_MAPS; i++)
		if (fake.maps[i].used && fake.maps[i].handle == c->handle)
			return -EBUSY;	/* the library unbinds first */
	pages_free(bo->off, bo->size);
	fake.mem_used -= bo->size;
	bo->used = false;
	bo->sealed = false;
	return 0;
}

static int f_vm_bind(struct drm_vaccel_vm_bind *b)
{
	struct fake_bo *bo = bo_get(b->handle);
	unsigned int i, free_slot = FAKE_MAX_MAPS;

	if (!bo)
		return -ENOENT;
	if (!b->size || b->va % FAKE_PAGE || b->size % FAKE_PAGE || b->bo_offset % FAKE_PAGE ||
	    !(b->flags & (DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE)) ||
	    b->flags & ~(DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE) ||
	    b->bo_offset + b->size > bo->size)
		return -EINVAL;
	if (b->va < FAKE_VA_START || b->va + b->size > FAKE_VA_START + FAKE_VA_SIZE)
		return -ERANGE;
	for (i = 0; i < FAKE_MAX_MAPS; i++) {
		struct fake_map *m = &fake.maps[i];

		if (!m->used) {
			if (free_slot == FAKE_MAX_MAPS)
				free_slot = i;
			continue;
		}
		if (b->va < m->va + m->size && m->va < b->va + b->size)
			return -EBUSY;
	}
	if (free_slot == FAKE_MAX_MAPS)
		return -ENOSPC;
	fake.maps[free_slot] = (struct fake_map){
		.used = true, .handle = b->handle, .flags = b->flags, .va = b->va,
		.size = b->size, .bo_offset = b->bo_offset,
	};
	return 0;
}

static int f_vm_unbind(struct drm_vaccel_vm_unbind *u)
{
	unsigned int i;

	if (u->flags || u->pad)
		return -EINVAL;
	for (i = 0; i < FAKE_MAX_MAPS; i++)
		if (fake.maps[i].used && fake.maps[i].va == u->va && fake.maps[i].size == u->size) {
			fake.maps[i].used = false;
			return 0;
		}
	return -ENOENT;
}

static int f_queue_create(struct drm_vaccel_queue_create *c)
{
	struct fake_queue *q;
	unsigned int i;
	void *ring;
	int ret;

	if (c->flags || c->ring_size < 4 || c->ring_size > DRM_VACCEL_RING_MAX ||
	    c->ring_size & (c->ring_size - 1) || c->ring_va % 64 ||
	    c->priority > DRM_VACCEL_QUEUE_PRIORITY_HIGH)
		return -EINVAL;
	ring = va_to_ptr(c->ring_va, (uint64_t)c->ring_size * sizeof(struct drm_vaccel_packet),
			 false);
	if (!ring)
		return -EFAULT;
	for (i = 0; i < FAKE_MAX_QUEUES && fake.queues[i].used; i++)
		;
	if (i == FAKE_MAX_QUEUES)
		return -ENOSPC;
	q = &fake.queues[i];
	ret = pages_alloc(FAKE_PAGE, &q->db_off);
	if (ret)
		return ret;
	ret = pages_alloc(FAKE_PAGE, &q->ctrl_off);
	if (ret) {
		pages_free(q->db_off, FAKE_PAGE);
		return ret;
	}
	q->used = true;
	q->ring = ring;
	q->size = c->ring_size;
	c->queue_id = i + 1;
	c->doorbell_offset = q->db_off;
	c->control_offset = q->ctrl_off;
	return 0;
}

static struct fake_queue *queue_get(uint32_t id)
{
	if (!id || id > FAKE_MAX_QUEUES || !fake.queues[id - 1].used)
		return NULL;
	return &fake.queues[id - 1];
}

static int f_queue_destroy(struct drm_vaccel_queue_destroy *d)
{
	struct fake_queue *q = queue_get(d->queue_id);

	if (!q || d->pad)
		return -EINVAL;
	pages_free(q->db_off, FAKE_PAGE);
	pages_free(q->ctrl_off, FAKE_PAGE);
	q->used = false;
	return 0;
}

static int f_signal_write(struct drm_vaccel_signal_write *w)
{
	uint64_t *word;

	if (w->flags || w->pad || w->op < DRM_VACCEL_SIGNAL_SET || w->op > DRM_VACCEL_SIGNAL_MAX)
		return -EINVAL;
	fake_enter();
	word = signal_word(w->handle, w->offset);
	fake_leave();
	if (!word)
		return -EINVAL;
	signal_ref_apply(word, w->op, w->value);
	__atomic_fetch_add(&fake_signal_writes, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&fake_signal_write_delay_us, __ATOMIC_RELAXED))
		usleep(__atomic_load_n(&fake_signal_write_delay_us, __ATOMIC_RELAXED));
	return 0;
}

/* A bounded poll of the signal words until the conditions hold or the deadline. */
static int f_wait_signals(struct drm_vaccel_wait_signals *w)
{
	const struct drm_vaccel_signal_cond *conds =
		(const struct drm_vaccel_signal_cond *)(uintptr_t)w->conds;
	uint64_t *words[DRM_VACCEL_WAIT_MAX_ITEMS];
	unsigned int i, held, first;

	if (!w->count || w->count > DRM_VACCEL_WAIT_MAX_ITEMS || w->pad ||
	    w->flags & ~(DRM_VACCEL_WAIT_ALL | DRM_VACCEL_WAIT_IGNORE_FAULTS))
		return -EINVAL;
	fake_enter();
	for (i = 0; i < w->count; i++) {
		words[i] = signal_word(conds[i].handle, conds[i].offset);
		if (!words[i] || conds[i].cond > DRM_VACCEL_WAIT_NE)
			break;
	}
	fake_leave();
	if (i < w->count)
		return -EINVAL;
	__atomic_fetch_add(&fake_waits, 1, __ATOMIC_RELAXED);
	for (;;) {
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
			return 0;
		}
		if (fake_now() >= w->timeout_ns)
			return -ETIME;
		nanosleep(&(struct timespec){ 0, 20000 }, NULL);
	}
}

static int f_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	if (fd != fake.fd)
		return -EBADF;
	if (req == DRM_IOCTL_VACCEL_SIGNAL_WRITE)
		return f_signal_write(arg);
	if (req == DRM_IOCTL_VACCEL_WAIT_SIGNALS)
		return f_wait_signals(arg);
	fake_enter();
	switch (req) {
	case DRM_IOCTL_VACCEL_GET_PARAM:
		ret = f_get_param(arg);
		break;
	case DRM_IOCTL_VACCEL_BO_CREATE:
		ret = f_bo_create(arg);
		break;
	case DRM_IOCTL_VACCEL_BO_INFO:
		ret = f_bo_info(arg);
		break;
	case DRM_IOCTL_VACCEL_BO_SEAL:
		ret = f_bo_seal(arg);
		break;
	case DRM_IOCTL_GEM_CLOSE:
		ret = f_gem_close(arg);
		break;
	case DRM_IOCTL_VACCEL_VM_BIND:
		ret = f_vm_bind(arg);
		break;
	case DRM_IOCTL_VACCEL_VM_UNBIND:
		ret = f_vm_unbind(arg);
		break;
	case DRM_IOCTL_VACCEL_QUEUE_CREATE:
		ret = f_queue_create(arg);
		break;
	case DRM_IOCTL_VACCEL_QUEUE_DESTROY:
		ret = f_queue_destroy(arg);
		break;
	case DRM_IOCTL_VACCEL_KICK:
		/* the engine polls every doorbell: nothing to wake */
		ret = queue_get(((struct drm_vaccel_kick *)arg)->queue_id) ? 0 : -EINVAL;
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	fake_leave();
	return ret;
}

/* ---- the engine ---- */

static void queue_fault(struct drm_vaccel_queue_control *ctrl, uint32_t code, uint64_t index,
			uint64_t addr)
{
	ctrl->fault = code;
	ctrl->fault_index = index;
	ctrl->fault_addr = addr;
	__atomic_store_n(&ctrl->state, DRM_VACCEL_QUEUE_ERROR, __ATOMIC_RELEASE);
}

/* A SIGNAL or completion action at device address @va; false if not a signal. */
static bool engine_signal(uint64_t va, uint32_t op, uint64_t value)
{
	uint64_t *w;

	if (va % 8 || op < DRM_VACCEL_SIGNAL_SET || op > DRM_VACCEL_SIGNAL_MAX)
		return false;
	fake_ignore_begin();
	w = va_to_ptr(va, 8, true);
	fake_ignore_end();
	if (w)
		signal_ref_apply(w, op, value);
	return w;
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
static bool engine_complete(const struct drm_vaccel_packet *p, const struct fake_frame *fr,
			    unsigned int depth)
{
	uint32_t type = p->header & DRM_VACCEL_PKT_TYPE_MASK;
	uint64_t value;

	if (type == DRM_VACCEL_PKT_SIGNAL) {
		value = p->operand[1];
		if (p->flags & DRM_VACCEL_SIGNAL_F_EPOCH)
			value += fr ? fr->epoch : 0;
		if (!engine_signal(frame_addr(fr, p->operand[0]), p->arg, value))
			return false;
	} else if (type == DRM_VACCEL_PKT_EXEC) {
		const struct drm_vaccel_packet *body;
		struct fake_frame sub = { 0 };
		const uint64_t *table = NULL;
		uint64_t i, n = p->operand[1];
		struct fake_bo *bo;
		unsigned int m;
		bool ok;

		if (depth >= 4 || p->arg > DRM_VACCEL_EXEC_MAX_BINDINGS)
			return false;
		fake_ignore_begin();
		body = va_to_ptr(frame_addr(fr, p->operand[0]), n * sizeof(*body), false);
		if (p->arg)
			table = va_to_ptr(frame_addr(fr, p->operand[3]), 8ull * p->arg, false);
		/* the body must be in a sealed object */
		for (m = 0, bo = NULL; body && m < FAKE_MAX_BOS; m++) {
			const char *start = fake.arena + fake.bos[m].off;

			if (fake.bos[m].used && (const char *)body >= start &&
			    (const char *)body < start + fake.bos[m].size)
				bo = &fake.bos[m];
		}
		ok = body && bo && bo->sealed && (!p->arg || table);
		fake_ignore_end();
		if (!ok)
			return false;
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
			if (!engine_complete(&body[i], &sub, depth + 1))
				return false;
	}
	return !p->completion_op ||
	       engine_signal(frame_addr(fr, p->completion_addr), p->completion_op,
			     p->completion_value);
}

/* Run up to @budget published packets of a queue (fake lock held). */
static unsigned int engine_queue(const struct fake_queue *q, unsigned int budget)
{
	uint64_t *doorbell = (uint64_t *)(fake.arena + q->db_off);
	struct drm_vaccel_queue_control *ctrl =
		(struct drm_vaccel_queue_control *)(fake.arena + q->ctrl_off);
	uint64_t wi, ri;
	unsigned int n = 0;

	if (__atomic_load_n(&ctrl->state, __ATOMIC_RELAXED) != DRM_VACCEL_QUEUE_RUNNING)
		return 0;
	wi = __atomic_load_n(doorbell, __ATOMIC_ACQUIRE);
	ri = __atomic_load_n(&ctrl->read_index, __ATOMIC_RELAXED);
	if (wi - ri > q->size) {
		queue_fault(ctrl, DRM_VACCEL_FAULT_DOORBELL, ri, 0);
		return 0;
	}
	for (; ri != wi && n < budget; ri++, n++) {
		const struct drm_vaccel_packet *p = &q->ring[ri & (q->size - 1)];
		uint32_t type = p->header & DRM_VACCEL_PKT_TYPE_MASK;

		if (fake_complete_all) {
			if (!engine_complete(p, NULL, 0)) {
				queue_fault(ctrl, DRM_VACCEL_FAULT_BAD_PACKET, ri, p->operand[0]);
				break;
			}
		} else if ((type != DRM_VACCEL_PKT_NOP && type != DRM_VACCEL_PKT_SIGNAL) ||
			   (type == DRM_VACCEL_PKT_SIGNAL &&
			    !engine_signal(p->operand[0], p->arg, p->operand[1])) ||
			   (p->completion_op &&
			    !engine_signal(p->completion_addr, p->completion_op,
					   p->completion_value))) {
			queue_fault(ctrl, DRM_VACCEL_FAULT_BAD_PACKET, ri, p->operand[0]);
			break;
		}
		__atomic_store_n(&ctrl->read_index, ri + 1, __ATOMIC_RELEASE);
	}
	__atomic_fetch_add(&fake_packets_run, n, __ATOMIC_RELAXED);
	return n;
}

/* One pass over every queue; returns the packets run. */
static unsigned int fake_engine_step(unsigned int budget)
{
	struct fake_queue q;
	unsigned int i, n = 0;

	for (i = 0; i < FAKE_MAX_QUEUES; i++) {
		fake_enter();
		q = fake.queues[i];
		if (q.used) {
			/* the queue cannot go while the lock is held: run it, seen by TSan */
			fake_ignore_end();
			n += engine_queue(&q, budget);
			fake_ignore_begin();
		}
		fake_leave();
	}
	return n;
}

/* ---- the backend ---- */

static int f_open(const char *path, int read_only)
{
	int fd, ret = 0;
	void *arena;

	if (strcmp(path, "fake"))
		return -ENOENT;
	fd = memfd_create("fake-vaccel", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (read_only)
		return fd;	/* tp_driver_is(): a file to ask the driver's name */
	fake_enter();
	if (fake.fd >= 0) {
		ret = -EBUSY;
	} else if (ftruncate(fd, (off_t)FAKE_CAPACITY)) {
		ret = -errno;
	} else {
		arena = mmap(NULL, FAKE_CAPACITY, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (arena == MAP_FAILED) {
			ret = -errno;
		} else {
			memset(&fake.mem_used, 0,
			       sizeof(fake) - offsetof(struct fake_dev, mem_used));
			fake.fd = fd;
			fake.arena = arena;
		}
	}
	fake_leave();
	if (ret)
		close(fd);
	return ret ? ret : fd;
}

static void f_close(int fd)
{
	fake_enter();
	if (fd == fake.fd) {
		munmap(fake.arena, FAKE_CAPACITY);
		fake.arena = NULL;
		fake.fd = -1;
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
	void *p = NULL;
	uint64_t i;

	(void)prot;
	*err = -EINVAL;
	fake_enter();
	if (fd == fake.fd && !(offset % FAKE_PAGE) && len && offset + len <= FAKE_CAPACITY) {
		for (i = offset / FAKE_PAGE; i < (offset + len + FAKE_PAGE - 1) / FAKE_PAGE; i++)
			if (!fake.page_used[i])
				break;
		if (i == (offset + len + FAKE_PAGE - 1) / FAKE_PAGE)
			p = fake.arena + offset;
	}
	fake_leave();
	return p;
}

static int f_munmap(void *addr, size_t len)
{
	/* the arena stays; the pages go with their object */
	(void)addr;
	(void)len;
	return 0;
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
};

#endif /* FAKE_KMOD_H */
