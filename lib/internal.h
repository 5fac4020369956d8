/* SPDX-License-Identifier: MIT */
/*
 * libaccel's private declarations: the objects behind the opaque public
 * types, lists, logging and the knobs.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_INTERNAL_H
#define ACCEL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <accel/accel.h>

#include "barrier.h"
#include "slots.h"
#include "transport.h"
#include "va.h"

/*
 * libaccel is 64-bit only: buffer sizes are 64-bit and must fit size_t
 * for host mappings, and device addresses are stored in pointers'
 * neighbours without checks. A 32-bit build stops here.
 */
_Static_assert(sizeof(void *) == 8 && sizeof(size_t) == 8,
	       "libaccel is 64-bit only (buffers may exceed 4 GiB)");

/* Public entry points; everything else is hidden (-fvisibility=hidden). */
#define ACCEL_API __attribute__((visibility("default")))

#define ACC_PAGE		4096ull
#define ACC_SIGNAL_STRIDE	64u	/* one signal per cache line */
#define ACC_SLOTS_PER_PAGE	(ACC_PAGE / ACC_SIGNAL_STRIDE)
#define ACC_FR_SIZE		32	/* flight recorder entries per queue */

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct list {
	struct list *prev, *next;
};

static inline void list_init(struct list *l)
{
	l->prev = l->next = l;
}

static inline bool list_empty(const struct list *l)
{
	return l->next == l;
}

static inline void list_add_tail(struct list *l, struct list *n)
{
	n->prev = l->prev;
	n->next = l;
	l->prev->next = n;
	l->prev = n;
}

static inline void list_del(struct list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	list_init(n);
}

/* --- logging (error.c) --- */
int acc_log_enabled(int level);
void acc_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define acc_err(...)	acc_log(ACCEL_LOG_ERROR, __VA_ARGS__)
#define acc_warn(...)	acc_log(ACCEL_LOG_WARN, __VA_ARGS__)
#define acc_info(...)	acc_log(ACCEL_LOG_INFO, __VA_ARGS__)
#define acc_trace(...)	\
	do { if (acc_log_enabled(ACCEL_LOG_TRACE)) acc_log(ACCEL_LOG_TRACE, __VA_ARGS__); } while (0)

/*
 * Test hooks: tests/lib/ sets acc_test_hook (a hidden symbol, reachable
 * from a program linked statically with libaccel.a) to stop a thread at a
 * fixed point and widen a race window deterministically. NULL otherwise:
 * one predictable branch.
 */
enum acc_hook {
	ACC_HOOK_BUFFER_LAST_REF,	/* the program's last reference is going (buffer) */
	ACC_HOOK_SIGIMPORT_MISS,	/* a signal page is not imported yet (page uid) */
};
extern void (*acc_test_hook)(int where, const void *obj);
#define ACC_HOOK(where, obj) \
	do { if (__builtin_expect(acc_test_hook != NULL, 0)) acc_test_hook(where, obj); } while (0)

/* pthread_atfork() handlers of the log lock (error.c), see acc_fork_init() */
void acc_log_fork_prepare(void);
void acc_log_fork_parent(void);
void acc_log_fork_child(void);

/* ACCEL_SPIN_NS: how long host waits spin before they sleep (default 20 us) */
int64_t acc_spin_ns(void);

/* The device REDUCE dtype (DRM_VACCEL_DTYPE_*) of @d, or -1 if it has none. */
static inline int acc_reduce_dtype(enum accel_dtype d)
{
	switch (d) {
	case ACCEL_DTYPE_F32:
		return DRM_VACCEL_DTYPE_F32;
	case ACCEL_DTYPE_F16:
		return DRM_VACCEL_DTYPE_F16;
	case ACCEL_DTYPE_BF16:
		return DRM_VACCEL_DTYPE_BF16;
	case ACCEL_DTYPE_I32:
		return DRM_VACCEL_DTYPE_I32;
	case ACCEL_DTYPE_I64:
		return DRM_VACCEL_DTYPE_I64;
	case ACCEL_DTYPE_U8:
		return DRM_VACCEL_DTYPE_U8;
	default:
		return -1;
	}
}

static inline int64_t acc_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Absolute deadline of a relative timeout (ACCEL_FOREVER: INT64_MAX). */
static inline int64_t acc_deadline(int64_t timeout_ns)
{
	int64_t now;

	if (timeout_ns < 0)
		return INT64_MAX;
	now = acc_now_ns();
	return timeout_ns > INT64_MAX - now ? INT64_MAX : now + timeout_ns;
}

static inline void acc_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Wrap-safe "signal value @v is at or after @target" (WAIT GE). */
static inline bool acc_ge(uint64_t v, uint64_t target)
{
	return (int64_t)(v - target) >= 0;
}

/* --- objects --- */

/*
 * A pin: the library's own hold on a buffer (see acc_buffer_pin()). The
 * holder embeds it; @node is on the buffer's pin list while it pins.
 */
struct acc_pin {
	struct list node;
	void (*orphaned)(struct acc_pin *pin);
};

/*
 * A buffer lives while anything holds it: the program's references
 * (@refs: accel_buffer_create() and each accel_buffer_import() of the same
 * dma-buf, deduplicated by GEM handle), the library's pins (@pins) and,
 * for a ring or a signal page, the library's ownership (@internal). When
 * the last holder goes, the buffer is unlinked from the handle table,
 * unmapped, unbound and its handle closed in one critical section under
 * dev->lock, so that an import racing with it either finds a live buffer
 * with a valid handle or does not find it at all.
 *
 * Locking: @refs, @pins, @internal, @node, @hnext, @host, @map_offset,
 * @host_prot, @vm_flags and @sealed are protected by dev->lock. @dev,
 * @handle, @size, @va, @imported, @read_only, @flags and @bo_flags are set
 * before the buffer is published (handle table, lists, the caller's
 * pointer) and never change. @host changes only from NULL to the mapping
 * (sealing and a removal keep its address).
 */
struct accel_buffer {
	struct accel_device *dev;
	struct list node;		/* dev->buffers or dev->internal */
	struct accel_buffer *hnext;	/* dev->by_handle chain */
	struct list pins;		/* struct acc_pin.node */
	uint32_t handle;
	uint32_t flags;			/* ACCEL_BUFFER_* */
	uint32_t bo_flags;		/* DRM_VACCEL_BO_* (the exporter's for imports) */
	uint32_t vm_flags;		/* DRM_VACCEL_VM_* it is bound with */
	uint64_t size;
	uint64_t va;
	void *host;
	uint64_t map_offset;		/* of @host */
	int host_prot;
	unsigned int refs;		/* the program's references */
	bool imported;
	bool read_only;			/* a read-only import */
	bool sealed;
	bool internal;			/* the library owns it: a ring or a signal page */
};

/*
 * A page of signal slots: a DRM_VACCEL_BO_SIGNAL buffer of this device
 * (slots handed out by dev->slots), or a signal page imported with
 * accel_signal_import() (@imported: its signals are views of words another
 * process or device owns; the page lives while one of them does).
 */
struct acc_sigpage {
	struct accel_buffer *buf;
	uint64_t uid;			/* process-unique, keys imports */
	const volatile uint64_t *host;
	bool imported;
	unsigned int users;		/* imported: signals on it (dev->lock) */
	struct list node;		/* imported: dev->imported_pages */
	struct acc_pin pin;		/* imported: on @buf */
};

/* A signal page of another device imported into this one. */
struct acc_sigimport {
	struct list node;
	uint64_t uid;
	struct accel_buffer *buf;
	struct acc_pin pin;		/* on @buf */
};

struct accel_signal {
	struct accel_device *dev;
	struct list node;		/* dev->signals (user signals) */
	struct acc_sigpage *page;
	unsigned int pageno, slot;
	uint64_t offset;		/* in its page */
	uint64_t va;
	const volatile uint64_t *word;
	_Atomic uint64_t next;		/* accel_signal_next() */
	struct accel_queue *queue;	/* whose timeline it is (its faults matter), or NULL */
	bool internal;
};

#define ACC_BY_HANDLE	64

struct accel_device {
	struct acc_tp tp;
	char path[ACCEL_PATH_MAX];
	struct accel_device_props props;
	/*
	 * Protects everything below, the buffers' and signal pages' fields
	 * named in their comments, and dev->queues. Not taken in a child
	 * of the opener (acc_dev_lock()).
	 */
	pthread_mutex_t lock;
	struct acc_va va;
	struct acc_slots slots;
	struct acc_sigpage **pages;
	unsigned int npages;
	struct list buffers, internal, signals, queues, sigimports, imported_pages;
	struct accel_buffer *by_handle[ACC_BY_HANDLE];
	atomic_bool warned_no_irq;	/* acc_wait_events()' warning, once */
};

enum acc_fr_op {
	FR_NONE, FR_CREATE, FR_SUBMIT, FR_KICK, FR_MARK, FR_RECORD, FR_WAIT_EVENT,
	FR_RESERVE_SLEEP, FR_SYNC, FR_SYNC_MARK, FR_FAULT, FR_FULL,
};

/* A flight recorder entry, shared with readers: see acc_fr_add(). */
struct acc_fr_entry {
	_Atomic uint64_t seq;
	_Atomic int64_t t;		/* 0: not timestamped (a fast-path entry) */
	_Atomic uint32_t op;
	_Atomic uint64_t a, b;
};

/* An entry as read (acc_fr_read()). */
struct acc_fr_rec {
	uint64_t seq;
	int64_t t;
	uint32_t op;
	uint64_t a, b;
};

struct accel_queue {
	struct accel_device *dev;
	struct list node;		/* dev->queues (dev->lock) */
	uint32_t id;
	uint32_t size, mask, interval;
	struct accel_buffer *ring_buf;
	struct drm_vaccel_packet *ring;		/* the device ring (host mapping) */
	volatile uint64_t *doorbell;
	const volatile struct drm_vaccel_queue_control *ctrl;
	struct accel_signal *timeline;
	uint64_t base;			/* timeline value of ring index -1 */
	/*
	 * The producer's. wi, pi and ri are read by other threads
	 * (accel_queue_completed(), _describe()): the producer stores them
	 * with acc_store_relaxed_u64() and others load them relaxed.
	 */
	uint64_t wi;			/* published (doorbell) */
	uint64_t pi;			/* taken */
	uint64_t ri;			/* last read index seen */
	uint64_t next_mark;		/* ring index of the next progress mark */
	uint64_t zi;			/* slots [pi, zi) are zeroed (ACC_ZERO_AHEAD) */
	uint64_t last_sig;		/* 1 + index of the last timeline packet, 0 none */
	bool created;			/* QUEUE_CREATE succeeded */
	bool light_fence;		/* the engine fences for the submitter (lib/membarrier.c) */
	atomic_bool faulted;		/* seen faulted: submit publishes nothing */
	atomic_bool fault_logged;
	_Atomic unsigned int fr_next;
	_Atomic uint64_t fr_wi;		/* submits up to here are in fr[] (fr_flush_submits()) */
	struct acc_fr_entry fr[ACC_FR_SIZE];
	uint64_t doorbells;		/* doorbell stores (the producer's; acc_queue_doorbells()) */
};

/* Test hook (hidden; tests linked with libaccel.a): doorbells @q rang so far. */
uint64_t acc_queue_doorbells(const struct accel_queue *q);
/*
 * Test hooks (hidden): whether @q's submits skip the fence (the engine
 * calls acc_membarrier() instead); make @q keep the full fence (@full), or
 * skip it again where the backend allows (benchmarks time both on one
 * queue). Only between submits, from the producer's thread.
 */
bool acc_queue_light_fence(const struct accel_queue *q);
void acc_test_queue_full_fence(struct accel_queue *q, bool full);

/* --- fork (see transport.h) --- */

/* @dev was opened by a parent of this process: calls fail with -ECHILD. */
static inline bool acc_dev_forked(const struct accel_device *dev)
{
	return tp_forked(&dev->tp);
}

/*
 * dev->lock, except in a child of the opener: a parent thread may have
 * held it at the fork. There, only destroy and close calls get this far
 * (every other call fails first with -ECHILD), and they must not run
 * concurrently on the same device (documented).
 */
static inline void acc_dev_lock(struct accel_device *dev)
{
	if (!acc_dev_forked(dev))
		pthread_mutex_lock(&dev->lock);
}

static inline void acc_dev_unlock(struct accel_device *dev)
{
	if (!acc_dev_forked(dev))
		pthread_mutex_unlock(&dev->lock);
}

/* --- backends (backend.c) --- */
#define ACC_BACKEND_MODULE	0
#define ACC_BACKEND_SIM		1
/* ACCEL_BACKEND: ACC_BACKEND_MODULE (unset, "module"), _SIM ("sim"), or -EINVAL (logged) */
int acc_backend(void);

/* --- internal calls between files --- */
/* accel_device_open_path() over another transport backend (native tests) */
int acc_device_open_ops(const struct tp_ops *ops, const char *path, struct accel_device **out);
int acc_check_dev(const struct accel_device *dev, const char *fn);
int acc_buffer_new(struct accel_device *dev, uint64_t size, uint32_t bo_flags, uint32_t vm_flags,
		   int map_prot, bool internal, struct accel_buffer **out);
/* The library lets go of a buffer of its own (acc_buffer_new(.., internal = true, ..)). */
void acc_buffer_free(struct accel_buffer *buf);
/* accel_device_close(): free @buf whoever holds it; dev->lock held. */
void acc_buffer_release_all_locked(struct accel_buffer *buf);
/* Map @buf into the host with @prot if it is not mapped yet; the mapping. */
int acc_buffer_map_prot(struct accel_buffer *buf, int prot, void **ptr);

/*
 * Internal buffer references (the task graph's and the signal imports'),
 * counted apart from the program's.
 *
 * acc_buffer_pin() - keep @buf alive (object, VA binding, host mapping)
 * after the program's last accel_buffer_destroy(). @pin->orphaned, if not
 * NULL, is called each time the program's last reference goes (once per
 * such event: an import can give the program a reference again), under
 * dev->lock, from the thread that dropped it: it must only record the fact
 * (push onto a lock-free list, set an atomic flag) and call nothing of the
 * library. @pin must not be pinning anything already.
 */
void acc_buffer_pin(struct accel_buffer *buf, struct acc_pin *pin);
/* Drop a pin: frees the buffer if the program has dropped it and no pin is left. */
void acc_buffer_unpin(struct accel_buffer *buf, struct acc_pin *pin);
/* The program holds no reference to @buf (it is alive through pins only). */
bool acc_buffer_orphaned(const struct accel_buffer *buf);
/*
 * An import for the library itself: pins the (maybe already known) buffer
 * with @pin and gives the program no reference. 0 or -errno.
 */
/*
 * accel_buffer_export() and accel_signal_export(); @local: for an import
 * into another device of this process, the fd closed right after
 * (tp_export_local()).
 */
int acc_buffer_export(struct accel_buffer *buf, uint32_t flags, bool local, int *fd);
int acc_signal_export(const struct accel_signal *sig, bool local, int *fd, uint64_t *offset);
int acc_buffer_import_pinned(struct accel_device *dev, int fd, struct acc_pin *pin,
			     struct accel_buffer **out);
int acc_signal_new(struct accel_device *dev, bool internal, struct accel_signal **out);
/*
 * A signal on slot @slot of @pg, a signal page its caller owns (it must
 * outlive the signal): the task graph's timelines, on pages of their own
 * that start at 0.
 */
#define ACC_PAGE_FOREIGN	(~0u)
int acc_signal_at(struct accel_device *dev, struct acc_sigpage *pg, unsigned int slot,
		  struct accel_signal **out);
void acc_signal_free(struct accel_signal *sig);
/* The signal's page as seen by @dev (imported once): handle and VA base. */
int acc_signal_on(struct accel_device *dev, const struct accel_signal *sig, uint32_t *handle,
		  uint64_t *va);
void acc_device_remove_sigimports(struct accel_device *dev);
void acc_queue_free(struct accel_queue *q);
/* The signal's word (acquire); 0 with *err = -ENODEV or -ECHILD. Inline: the task graph's completion test. */
static inline uint64_t acc_signal_load(const struct accel_signal *sig, int *err)
{
	*err = tp_check(&sig->dev->tp);
	if (*err)
		return 0;
	/* acquire: pairs with the device's (or SIGNAL_WRITE's) release of the word */
	return acc_load_acquire_u64(sig->word);
}

/*
 * Aborting a wait: it returns -ECANCELED once @sig is at or after @value
 * (WAIT GE). The aborting thread raises @sig with one SIGNAL_WRITE
 * (acc_signal_write_raw(), async-signal-safe), which also wakes a waiter
 * sleeping in WAIT_SIGNALS.
 */
struct acc_abort {
	const struct accel_signal *sig;
	uint64_t value;
};

/*
 * acc_wait_events() - the library's host wait
 * @evs, @n, @all: events (1 to 63), any or all of them
 * @deadline: absolute CLOCK_MONOTONIC ns (INT64_MAX: none)
 * @queues, @nq: queues whose faults fail the wait with -EIO, besides the
 *	queues producing @evs (accel_queue_record() events); a fault of any
 *	other queue of the devices does not end the wait
 * @abort: NULL, or the abort condition
 * @first: the lowest event done (any) or 0 (all); may be NULL
 *
 * Spins for ACCEL_SPIN_NS, then sleeps in WAIT_SIGNALS (restarted after
 * EINTR). Return: 0, -ETIMEDOUT, -EIO, -ECANCELED, -ENODEV, -ECHILD,
 * -EINVAL, -ENOMEM.
 */
int acc_wait_events(const struct accel_event *evs, unsigned int n, bool all, int64_t deadline,
		    struct accel_queue *const *queues, unsigned int nq,
		    const struct acc_abort *abort, unsigned int *first);
/* accel_queue_reserve() and _sync() with an absolute deadline and an abort condition. */
int acc_queue_reserve(struct accel_queue *q, unsigned int n, int64_t deadline,
		      const struct acc_abort *abort);
int acc_queue_sync(struct accel_queue *q, int64_t deadline, const struct acc_abort *abort);
/* 0 if @q runs; -EIO if it faulted (logged once); -ENODEV, -ECHILD. No syscall. */
int acc_queue_check(struct accel_queue *q);
/*
 * One SIGNAL_WRITE of @sig on its own device: no logging, no lock, no
 * allocation, errno preserved. Async-signal-safe. 0 or -errno.
 */
int acc_signal_write_raw(const struct accel_signal *sig, uint32_t op, uint64_t value);

void acc_fr_add(struct accel_queue *q, uint32_t op, uint64_t a, uint64_t b, bool timed);
/* Entry @idx (an fr_next value) if it is complete and still there. */
bool acc_fr_read(const struct accel_queue *q, unsigned int idx, struct acc_fr_rec *out);
const char *acc_fr_name(uint32_t op);
/*
 * A running queue's progress and the packet at its read index (a WAIT
 * with its word's value now), as snprintf(); two lines at most, no
 * newline at the end.
 */
int acc_queue_where(const struct accel_queue *q, char *buf, size_t len);

/*
 * --- structures that grow (copy_struct.c; the rule of <accel/accel.h>) ---
 * @min_size is the structure's size in the first stable release (1.0).
 */
#define ACC_STRUCT_MAX	4096	/* the largest size a caller may pass */
/* 0; -EINVAL for @size below @min_size; -E2BIG above ACC_STRUCT_MAX */
int acc_struct_size_check(size_t size, size_t min_size);
/*
 * Take a caller's input structure (@src, @src_size bytes as it says) into
 * the library's @dst (@dst_size bytes): a shorter one is zero-filled; of a
 * longer one, the bytes past @dst_size must be zero (-E2BIG). Returns 0 or
 * as acc_struct_size_check() for @src_size; on failure @dst is unchanged.
 */
int acc_copy_struct(void *dst, size_t dst_size, const void *src, size_t src_size,
		    size_t min_size);
/*
 * Give the library's @src (@src_size bytes) to a caller's output structure
 * @dst of @dst_size bytes: what fits is copied, the rest of @dst zeroed.
 * Returns 0 or as acc_struct_size_check() for @dst_size; on failure @dst
 * is not written.
 */
int acc_put_struct(void *dst, size_t dst_size, const void *src, size_t src_size,
		   size_t min_size);

#endif /* ACCEL_INTERNAL_H */
