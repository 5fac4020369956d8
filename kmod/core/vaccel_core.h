/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The packet core: decoder, validator and executor of vaccel command
 * packets. It has no kernel dependencies: everything it needs from the
 * outside world (memory, signals, time) is a vaccel_os_*() function,
 * implemented by the module (kmod/vaccel_core_os.c) and by the native test
 * and fuzz builds (tests/core/), the way tools/testing/vma builds mm code.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef __VACCEL_CORE_H__
#define __VACCEL_CORE_H__

#include "vaccel_core_types.h"

/*
 * Longest EXEC nesting: a ring packet may EXEC, which may EXEC, ...
 */
#define VACCEL_CORE_MAX_DEPTH		4
/*
 * Packets in one EXEC buffer
 */
#define VACCEL_CORE_MAX_EXEC_PACKETS	0x100000u
/*
 * Bytes a COPY/FILL/REDUCE moves in one step, so other queues get a turn
 */
#define VACCEL_CORE_CHUNK		(256u << 10)
/*
 * Longest DELAY, and the most one step of it sleeps
 */
#define VACCEL_CORE_MAX_DELAY_NS	1000000000ull
#define VACCEL_CORE_DELAY_STEP_NS	1000000ull

/**
 * struct vaccel_core_frame - a running EXEC
 * @pkt: the EXEC packet, for its completion action
 * @next: index of the next packet of the buffer to fetch
 */
struct vaccel_core_frame {
	struct drm_vaccel_packet pkt;
	u64 next;
};

/**
 * struct vaccel_core_queue - executor state of one queue
 * @os: the OS layer's queue, passed back to every vaccel_os_*() call
 * @ring_va: device address of the ring
 * @ring_size: packets in the ring, a power of two
 * @read_index: ring packets completed; an EXEC counts once, when all the
 *	packets it runs have completed
 * @pkt: private copy of the packet being executed, valid if @have_pkt
 * @have_pkt: @pkt was fetched and validated
 * @progress: bytes (COPY, FILL), elements (REDUCE) or ns (DELAY) done of @pkt
 * @deadline: end of the current WAIT's timeout or DELAY, 0 if none
 * @depth: number of running EXECs
 * @frames: the running EXECs, outermost first
 * @fault: DRM_VACCEL_FAULT_* once the queue stopped, else NONE
 * @fault_index: ring index of the packet that faulted
 * @fault_addr: device address involved in the fault, or 0
 * @wait_addr: signal address the queue is blocked on
 * @packets: packets completed, EXEC bodies included
 * @bytes: bytes written by COPY, FILL and REDUCE
 *
 * Only the engine running the queue touches it, except @fault* and
 * @read_index, which the OS layer publishes to user space.
 */
struct vaccel_core_queue {
	void *os;
	u64 ring_va;
	u32 ring_size;
	u64 read_index;

	struct drm_vaccel_packet pkt;
	bool have_pkt;
	u64 progress;
	u64 deadline;

	unsigned int depth;
	struct vaccel_core_frame frames[VACCEL_CORE_MAX_DEPTH];

	u32 fault;
	u64 fault_index;
	u64 fault_addr;
	u64 wait_addr;

	u64 packets;
	u64 bytes;
};

/**
 * enum vaccel_core_status - why vaccel_core_run() returned
 * @VACCEL_CORE_IDLE: every committed packet completed
 * @VACCEL_CORE_BUDGET: the step budget ran out with work left
 * @VACCEL_CORE_BLOCKED: a WAIT is not satisfied; see @wait_addr, @deadline
 * @VACCEL_CORE_FAULT: the queue stopped; see @fault
 */
enum vaccel_core_status {
	VACCEL_CORE_IDLE,
	VACCEL_CORE_BUDGET,
	VACCEL_CORE_BLOCKED,
	VACCEL_CORE_FAULT,
};

void vaccel_core_queue_init(struct vaccel_core_queue *q, void *os,
			    u64 ring_va, u32 ring_size);
enum vaccel_core_status vaccel_core_run(struct vaccel_core_queue *q,
					u64 write_index, unsigned int budget);
u32 vaccel_core_validate(const struct drm_vaccel_packet *pkt,
			 unsigned int depth);
bool vaccel_core_wait_done(u64 value, u64 target, u64 mask, u32 cond);

/*
 * The OS layer. Fault-returning functions return DRM_VACCEL_FAULT_NONE or
 * the fault to record.
 */

/*
 * Access @len bytes at @va: *ptr gets the address of @va, *avail how many
 * bytes (1..@len) are contiguous from there. Release with vaccel_os_unmap().
 * @access is DRM_VACCEL_VM_READ/_WRITE, plus VACCEL_CORE_ACCESS_SEALED when
 * the memory must belong to a sealed buffer (DRM_VACCEL_FAULT_NOT_SEALED).
 */
#define VACCEL_CORE_ACCESS_SEALED	0x80000000u
u32 vaccel_os_map(void *os, u64 va, u64 len, u32 access, void **ptr,
		  u64 *avail, void **cookie);
void vaccel_os_unmap(void *os, void *cookie);
/*
 * Apply a signal operation at @va (8-byte aligned, in a signal buffer) and
 * wake the device queues waiting on it, and the host waiters if @irq.
 */
u32 vaccel_os_signal(void *os, u64 va, u32 op, u64 value, bool irq);
/*
 * Read the signal at @va (acquire).
 */
u32 vaccel_os_signal_read(void *os, u64 va, u64 *value);
/*
 * Check that @len bytes at @va are readable and sealed, for EXEC.
 */
u32 vaccel_os_exec_check(void *os, u64 va, u64 len);
u64 vaccel_os_now_ns(void *os);
/*
 * Keep the engine busy for @ns (at most VACCEL_CORE_DELAY_STEP_NS).
 */
void vaccel_os_delay(void *os, u64 ns);
/*
 * A packet started (fetched and validated) or completed: @index is the
 * ring index it belongs to, @depth its EXEC nesting. For tracing.
 */
void vaccel_os_packet(void *os, const struct drm_vaccel_packet *pkt, u64 index,
		      unsigned int depth, bool done);
/* Bracket floating-point work (kernel_fpu_begin/end in the kernel). */
void vaccel_os_fpu_begin(void);
void vaccel_os_fpu_end(void);

/*
 * vaccel_reduce.c: elementwise a op b, @n elements of @dtype; the caller
 * validated dtype and op and brackets the call with the FPU functions.
 */
void vaccel_core_reduce(void *dst, const void *a, const void *b, u64 n,
			u32 dtype, u32 op);
unsigned int vaccel_core_dtype_size(u32 dtype);

#endif /* __VACCEL_CORE_H__ */
