/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The packet core: decoder, validator and executor of vaccel command
 * packets. It has no kernel dependencies: everything it needs from the
 * outside world (memory, signals, time) is a vaccel_os_*() function,
 * implemented by the module (kmod/vaccel_core_os.c) and by the native test
 * and fuzz builds (tests/core/), the way tools/testing/vma builds mm code.
 *
 * The core never sleeps and never waits: modelled time (DELAY, the link
 * model, injected latency) makes the queue *busy* until a deadline, and
 * the caller runs other queues meanwhile.
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
 * Longest DELAY
 */
#define VACCEL_CORE_MAX_DELAY_NS	1000000000ull
/*
 * Multiply-adds of one MATMUL step (a step computes at least one element
 * of C, so at most max(this, k) of them)
 */
#define VACCEL_CORE_MATMUL_STEP		16384u
/*
 * An FPU section (non-preemptible in the kernel) of a MATMUL step or a
 * REDUCE ends at the first clock check after this many ns; checks come
 * every VACCEL_CORE_FPU_CHECK multiply-adds (MATMUL) or
 * VACCEL_CORE_REDUCE_BLOCK elements (REDUCE)
 */
#define VACCEL_CORE_FPU_NS		50000ull
#define VACCEL_CORE_FPU_CHECK		64u
#define VACCEL_CORE_REDUCE_BLOCK	1024u

/*
 * Address slots of a packet: the device addresses it takes, for naming the
 * binding table entry a faulting address came from.
 */
enum vaccel_core_slot {
	VACCEL_CORE_SLOT_OP0,		/* operand[0] .. [3] */
	VACCEL_CORE_SLOT_OP1,
	VACCEL_CORE_SLOT_OP2,
	VACCEL_CORE_SLOT_OP3,
	VACCEL_CORE_SLOT_COMPLETION,	/* completion_addr */
	VACCEL_CORE_SLOT_MM_A,		/* the MATMUL descriptor's a, b, c */
	VACCEL_CORE_SLOT_MM_B,
	VACCEL_CORE_SLOT_MM_C,
	VACCEL_CORE_SLOTS,
	VACCEL_CORE_SLOT_NONE = VACCEL_CORE_SLOTS,
};

/**
 * struct vaccel_core_frame - a running EXEC
 * @pkt: the EXEC packet (addresses resolved), for its completion action
 * @next: index of the next packet of the buffer to fetch
 * @epoch: the launch's epoch: operand[2], plus the enclosing EXEC's epoch
 *	with DRM_VACCEL_EXEC_F_EPOCH
 * @completion_binding: 1 + the binding entry @pkt's completion address
 *	came from, 0 if none
 * @nbindings: entries of @bindings in use
 * @bindings: the binding table packets of the body address (the EXEC's
 *	own, copied once at its start, or the enclosing EXEC's)
 */
struct vaccel_core_frame {
	struct drm_vaccel_packet pkt;
	u64 next;
	u64 epoch;
	u32 completion_binding;
	u32 nbindings;
	u64 bindings[DRM_VACCEL_EXEC_MAX_BINDINGS];
};

/**
 * struct vaccel_core_queue - executor state of one queue
 * @os: the OS layer's queue, passed back to every vaccel_os_*() call
 * @ring_va: device address of the ring
 * @ring_size: packets in the ring, a power of two
 * @read_index: ring packets completed; an EXEC counts once, when all the
 *	packets it runs have completed
 * @pkt: private copy of the packet being executed (binding addresses
 *	resolved), valid if @have_pkt
 * @have_pkt: @pkt was fetched and validated
 * @done: @pkt's work is done; it completes when the queue stops being busy
 * @progress: bytes (COPY, FILL), elements (REDUCE, MATMUL) done of @pkt
 * @deadline: end of the current WAIT's timeout, 0 if none
 * @busy_until: the queue does nothing before this time (vaccel_os_now_ns());
 *	0 when not busy
 * @step_ns: modelled time the current step adds (DELAY)
 * @resume: the end of the busy period the queue went straight on from
 *	(the next step's link time runs from there, not from when the
 *	engine came back to it), 0 if none
 * @mm: private copy of the MATMUL descriptor, valid if @have_mm
 * @have_mm: @mm was read and validated
 * @binding: for each &enum vaccel_core_slot of @pkt (and @mm), 1 + the
 *	binding entry its address came from, 0 if it was a plain address
 * @depth: number of running EXECs
 * @frames: the running EXECs, outermost first
 * @fault: DRM_VACCEL_FAULT_* once the queue stopped, else NONE
 * @fault_index: ring index of the packet that faulted
 * @fault_addr: device address involved in the fault, or 0
 * @fault_depth: EXEC nesting of the packet that faulted
 * @fault_exec_index: its index in the innermost EXEC body, if
 *	@fault_depth > 0
 * @fault_binding: 1 + the binding entry @fault_addr came from, or 0
 * @wait_addr: signal address the queue is blocked on
 * @packets: packets completed, EXEC bodies included
 * @bytes: bytes written by COPY, FILL, REDUCE and MATMUL
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
	bool done;
	u64 progress;
	u64 deadline;
	u64 busy_until;
	u64 step_ns;
	u64 resume;
	struct drm_vaccel_matmul mm;
	bool have_mm;
	u8 binding[VACCEL_CORE_SLOTS];

	unsigned int depth;
	struct vaccel_core_frame frames[VACCEL_CORE_MAX_DEPTH];

	u32 fault;
	u64 fault_index;
	u64 fault_addr;
	u32 fault_depth;
	u64 fault_exec_index;
	u32 fault_binding;
	u64 wait_addr;

	u64 packets;
	u64 bytes;
};

/**
 * enum vaccel_core_status - why vaccel_core_run() returned
 * @VACCEL_CORE_IDLE: every committed packet completed
 * @VACCEL_CORE_BUDGET: the step budget ran out with work left
 * @VACCEL_CORE_BLOCKED: a WAIT is not satisfied; see @wait_addr, @deadline
 * @VACCEL_CORE_BUSY: modelled time runs; nothing happens before @busy_until
 * @VACCEL_CORE_FAULT: the queue stopped; see @fault
 */
enum vaccel_core_status {
	VACCEL_CORE_IDLE,
	VACCEL_CORE_BUDGET,
	VACCEL_CORE_BLOCKED,
	VACCEL_CORE_BUSY,
	VACCEL_CORE_FAULT,
};

void vaccel_core_queue_init(struct vaccel_core_queue *q, void *os,
			    u64 ring_va, u32 ring_size);
enum vaccel_core_status vaccel_core_run(struct vaccel_core_queue *q,
					u64 write_index, unsigned int budget);
u32 vaccel_core_validate(const struct drm_vaccel_packet *pkt,
			 unsigned int depth);
bool vaccel_core_wait_done(u64 value, u64 target, u64 mask, u32 cond);
bool vaccel_core_wait_valid(u64 mask, u32 cond);

/*
 * Bulk packets (COPY, FILL, REDUCE) can be split: the OS layer may run
 * ranges of the current packet on other threads with
 * vaccel_core_bulk_range() and report the outcome with
 * vaccel_core_bulk_done(); the packet then completes on its queue as
 * usual. Units are bytes (COPY, FILL) or elements (REDUCE).
 */
u64 vaccel_core_bulk_left(const struct vaccel_core_queue *q, u64 *unit_bytes);
u32 vaccel_core_bulk_range(void *os, const struct drm_vaccel_packet *pkt,
			   u64 from, u64 to, u64 *fault_addr,
			   unsigned int *slot);
bool vaccel_core_bulk_done(struct vaccel_core_queue *q, u64 to, u32 fault_code,
			   u64 fault_addr, unsigned int slot);

/*
 * The OS layer. Fault-returning functions return DRM_VACCEL_FAULT_NONE or
 * the fault to record.
 */

/*
 * Access @len bytes at @va. With @avail, *avail gets how many bytes
 * (1..@len) are contiguous from there; without, the whole range must be.
 * *ptr gets the address of @va. Release with vaccel_os_unmap().
 * @access is DRM_VACCEL_VM_READ/_WRITE, plus VACCEL_CORE_ACCESS_SEALED when
 * the memory must belong to a sealed buffer (DRM_VACCEL_FAULT_NOT_SEALED).
 * May be called concurrently for one queue (split bulk packets).
 */
#define VACCEL_CORE_ACCESS_SEALED	0x80000000u
u32 vaccel_os_map(void *os, u64 va, u64 len, u32 access, void **ptr,
		  u64 *avail, void **cookie);
/*
 * As vaccel_os_map() without @avail (the whole range in one mapping), for
 * an access that reads or writes only @touched bytes of the range (the
 * rows and columns of a matrix a MATMUL step uses): the link model
 * charges those.
 */
u32 vaccel_os_map_part(void *os, u64 va, u64 len, u64 touched, u32 access,
		       void **ptr, void **cookie);
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
 * Modelled link time the OS layer charged the queue since the last call,
 * and in *@first the time (vaccel_os_now_ns()) of the first access it
 * charged, 0 if unknown. The core makes the queue busy for what is left
 * of it after the step in which it was charged. Resets both.
 */
u64 vaccel_os_charge(void *os, u64 *first);
/*
 * A packet started (fetched and validated) or completed: @index is the
 * ring index it belongs to, @depth its EXEC nesting. For tracing.
 */
void vaccel_os_packet(void *os, const struct drm_vaccel_packet *pkt, u64 index,
		      unsigned int depth, bool done);
/*
 * Bracket floating-point work (kernel_fpu_begin/end in the kernel): an
 * FPU section, which the kernel runs without preemption.
 */
void vaccel_os_fpu_begin(void *os);
void vaccel_os_fpu_end(void *os);

/*
 * vaccel_reduce.c: elementwise a op b, @n elements of @dtype; the caller
 * validated dtype and op and brackets the call with the FPU functions.
 */
void vaccel_core_reduce(void *dst, const void *a, const void *b, u64 n,
			u32 dtype, u32 op);
unsigned int vaccel_core_dtype_size(u32 dtype);

/**
 * struct vaccel_core_mm_pos - where a MATMUL step's FPU sections are
 * @e: the next element of C (row-major index r * n + c)
 * @k: the next multiply-add of element @e; 0 when it has not started
 * @acc: the partial sum of element @e (f32 bits) when @k > 0
 *
 * Kept outside the FPU sections (as bits: the core proper has no floating
 * point), so a section may end in the middle of an element and the next
 * one continue the same sum: the result does not depend on where
 * sections end.
 */
struct vaccel_core_mm_pos {
	u64 e;
	u64 k;
	u32 acc;
};

/*
 * vaccel_matmul.c: elements of C from @pos up to @to of the validated
 * MATMUL @d, with A, B and C mapped at @a, @b and @c, in one FPU section
 * (the caller brackets the call with the FPU functions): returns once
 * @pos reaches @to, or at the first clock check (vaccel_os_now_ns(@os),
 * every VACCEL_CORE_FPU_CHECK multiply-adds) VACCEL_CORE_FPU_NS or more
 * after it started, @pos saying where to go on.
 */
void vaccel_core_matmul(void *os, float *c, const void *a, const void *b,
			const struct drm_vaccel_matmul *d, u32 dtype,
			bool accumulate, struct vaccel_core_mm_pos *pos, u64 to);

#endif /* __VACCEL_CORE_H__ */
