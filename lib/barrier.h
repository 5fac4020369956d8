/* SPDX-License-Identifier: MIT */
/*
 * Every memory-ordering operation of libaccel, over C11 <stdatomic.h>.
 *
 * Two kinds of words are shared between threads:
 *
 * - words shared with the device, in the uAPI's plain __u32/__u64 layout:
 *   the doorbell, the control page (read index, state, fault record,
 *   need_wakeup) and the signal words of signal pages. The library reaches
 *   them through the helpers below, which access them as
 *   _Atomic objects of the same size and alignment (lock-free on every
 *   target the library builds for: see the static assertions);
 * - the library's own cross-thread words (a queue's published indices and
 *   its flight recorder, counters, flags): declared with C11 atomic types
 *   or accessed through the same helpers.
 *
 * Each helper says which ordering it gives; each call site says, in a
 * comment, what it pairs with. The doorbell protocol of
 * Documentation/queues.rst in these terms:
 *
 *   packet body                      plain stores into the ring slot
 *   acc_packet_publish()             body, then a store-release of the header
 *   acc_store_release_u64()      the doorbell: the write index
 *   acc_full_fence()                 StoreLoad, pairs with the engine's smp_mb()
 *     or acc_compiler_fence()        when the engine calls acc_membarrier()
 *                                    before it sleeps (lib/membarrier.c)
 *   acc_load_relaxed_u32()               need_wakeup (relaxed: after the fence)
 *   ioctl(KICK)                      only if need_wakeup was set
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_BARRIER_H
#define ACCEL_BARRIER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <drm/vaccel_accel.h>

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
	       "libaccel needs lock-free 32- and 64-bit atomics");
_Static_assert(sizeof(_Atomic uint64_t) == sizeof(uint64_t) &&
	       _Alignof(_Atomic uint64_t) == _Alignof(uint64_t),
	       "a device word must be usable as an _Atomic uint64_t");
_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t) &&
	       _Alignof(_Atomic uint32_t) == _Alignof(uint32_t),
	       "a device word must be usable as an _Atomic uint32_t");
_Static_assert(sizeof(_Atomic uint16_t) == sizeof(uint16_t) &&
	       _Alignof(_Atomic uint16_t) == _Alignof(uint16_t),
	       "a packet header must be usable as an _Atomic uint16_t");

/*
 * A word as the atomic object it is: the one cast of the library. The
 * macros below take a pointer to any 8-byte (or 4-byte) word (__u64 and
 * uint64_t are different types on LP64) and check its size at compile
 * time.
 */
#define ACC_WORD_IS(p, n)	((void)sizeof(char[sizeof(*(p)) == (n) ? 1 : -1]))
#define ACC_ATOMIC64(p)		((volatile _Atomic uint64_t *)(uintptr_t)(p))
#define ACC_ATOMIC32(p)		((volatile _Atomic uint32_t *)(uintptr_t)(p))

/* Load-acquire: what the device (or another thread) wrote before its release is visible. */
#define acc_load_acquire_u64(p) \
	(ACC_WORD_IS(p, 8), atomic_load_explicit(ACC_ATOMIC64(p), memory_order_acquire))
#define acc_load_acquire_u32(p) \
	(ACC_WORD_IS(p, 4), atomic_load_explicit(ACC_ATOMIC32(p), memory_order_acquire))

/* Relaxed load: the value only; the order comes from a fence or an acquire around it. */
#define acc_load_relaxed_u64(p) \
	(ACC_WORD_IS(p, 8), atomic_load_explicit(ACC_ATOMIC64(p), memory_order_relaxed))
#define acc_load_relaxed_u32(p) \
	(ACC_WORD_IS(p, 4), atomic_load_explicit(ACC_ATOMIC32(p), memory_order_relaxed))

/* Store-release: everything written before is visible to whoever acquires this word. */
#define acc_store_release_u64(p, v) \
	(ACC_WORD_IS(p, 8), atomic_store_explicit(ACC_ATOMIC64(p), (v), memory_order_release))

/* Relaxed store of a word other threads read (a published counter). */
#define acc_store_relaxed_u64(p, v) \
	(ACC_WORD_IS(p, 8), atomic_store_explicit(ACC_ATOMIC64(p), (v), memory_order_relaxed))

/*
 * Full fence (StoreLoad): no load after it is satisfied before a store
 * before it is visible. An acquire or release is not enough for the
 * doorbell's store-then-check-need_wakeup (see Documentation/queues.rst).
 */
static inline void acc_full_fence(void)
{
	atomic_thread_fence(memory_order_seq_cst);
}

/*
 * The light side of the asymmetric fence (lib/membarrier.c): the compiler
 * keeps the store before the load; the CPU may not, until the engine's
 * acc_membarrier() forces a full barrier on this thread.
 */
static inline void acc_compiler_fence(void)
{
	atomic_signal_fence(memory_order_seq_cst);
}

/*
 * The heavy side (lib/membarrier.c). acc_membarrier_ready(): whether this
 * process can use it (registers it once; false with
 * ACCEL_DOORBELL_FENCE=full). acc_membarrier(): every other running thread
 * of the process executes a full barrier before it returns; 0 or -errno.
 * acc_membarriers counts the calls (tests).
 */
bool acc_membarrier_ready(void);
int acc_membarrier(void);
extern _Atomic uint64_t acc_membarriers;

/*
 * Write a packet into a ring slot: the body first, then the header with a
 * store-release, so that a reader that sees the header sees the body. (The
 * engine reads nothing past the doorbell, whose own store-release already
 * orders the whole slot; the header release keeps the protocol of
 * Documentation/queues.rst exact for readers of the ring that do not go
 * through the doorbell.) The whole slot is copied in aligned stores, then
 * the header is stored once more, released (cheaper than copying around
 * it: measured with tools/taskgraph-bench).
 */
static inline void acc_packet_publish(struct drm_vaccel_packet *slot,
				      const struct drm_vaccel_packet *p)
{
	*slot = *p;
	/* release: pairs with a reader's acquire load of the header */
	atomic_store_explicit((volatile _Atomic uint16_t *)(uintptr_t)&slot->header, p->header,
			      memory_order_release);
}

#endif /* ACCEL_BARRIER_H */
