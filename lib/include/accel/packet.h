/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_PACKET_H
#define ACCEL_PACKET_H

#include <stdint.h>
#include <string.h>

#include <drm/vaccel_accel.h>

#include <accel/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: packet builders
 *
 * Inline helpers that fill a &struct drm_vaccel_packet (from
 * accel_queue_get_packet(), or any array that becomes an EXEC body), as
 * liburing's io_uring_prep_*() fill SQEs. They touch only the uAPI
 * layout, so they cannot break with the library's ABI. They are
 * ACCEL_INLINE (<accel/version.h>): inline in C programs, and exported by
 * the library under the same names for FFI users. Each starts from a
 * zeroed packet; the completion and IRQ helpers add to one already
 * prepared. Destination first, as memcpy(). Device addresses are plain
 * addresses or, inside an EXEC body, DRM_VACCEL_BINDING_ADDR(i, offset).
 */

/** accel_prep_packet() - a zeroed packet of @type (DRM_VACCEL_PKT_*) */
ACCEL_INLINE void accel_prep_packet(struct drm_vaccel_packet *p, uint16_t type)
{
	memset(p, 0, sizeof(*p));
	p->header = type;
}

/** accel_prep_nop() - a packet that does nothing (but its completion) */
ACCEL_INLINE void accel_prep_nop(struct drm_vaccel_packet *p)
{
	accel_prep_packet(p, DRM_VACCEL_PKT_NOP);
}

/** accel_prep_copy() - copy @n bytes from @src to @dst (no overlap) */
ACCEL_INLINE void accel_prep_copy(struct drm_vaccel_packet *p, uint64_t dst, uint64_t src,
				  uint64_t n)
{
	accel_prep_packet(p, DRM_VACCEL_PKT_COPY);
	p->operand[0] = src;
	p->operand[1] = dst;
	p->operand[2] = n;
}

/**
 * accel_prep_fill() - fill @n bytes at @dst with a @width-byte pattern
 * @width: 1, 2, 4 or 8; @dst and @n are multiples of it
 */
ACCEL_INLINE void accel_prep_fill(struct drm_vaccel_packet *p, uint64_t dst, uint64_t n,
				  uint64_t pattern, unsigned int width)
{
	accel_prep_packet(p, DRM_VACCEL_PKT_FILL);
	p->arg = width;
	p->operand[0] = dst;
	p->operand[1] = n;
	p->operand[2] = pattern;
}

/**
 * accel_prep_reduce() - dst[i] = a[i] op b[i] for @count elements
 * @dtype: DRM_VACCEL_DTYPE_*
 * @op: DRM_VACCEL_REDOP_*
 */
ACCEL_INLINE void accel_prep_reduce(struct drm_vaccel_packet *p, uint64_t dst, uint64_t a,
				    uint64_t b, uint64_t count, unsigned int dtype,
				    unsigned int op)
{
	accel_prep_packet(p, DRM_VACCEL_PKT_REDUCE);
	p->arg = (uint16_t)(dtype | op << 8);
	p->operand[0] = a;
	p->operand[1] = b;
	p->operand[2] = dst;
	p->operand[3] = count;
}

/** accel_prep_signal() - apply @op (DRM_VACCEL_SIGNAL_SET/ADD/MAX) to a signal */
ACCEL_INLINE void accel_prep_signal(struct drm_vaccel_packet *p, uint64_t signal,
				    unsigned int op, uint64_t value)
{
	accel_prep_packet(p, DRM_VACCEL_PKT_SIGNAL);
	p->arg = op;
	p->operand[0] = signal;
	p->operand[1] = value;
}

/**
 * accel_prep_wait() - block the queue until (signal & mask) @cond @value
 * @cond: DRM_VACCEL_WAIT_GE (wrap-safe), _EQ or _NE
 * @mask: 0 for all bits
 * @timeout_ns: fault the queue after this long, 0 for never
 */
ACCEL_INLINE void accel_prep_wait(struct drm_vaccel_packet *p, uint64_t signal,
				  unsigned int cond, uint64_t value, uint64_t mask,
				  uint64_t timeout_ns)
{
	accel_prep_packet(p, DRM_VACCEL_PKT_WAIT);
	p->arg = cond;
	p->operand[0] = signal;
	p->operand[1] = value;
	p->operand[2] = mask;
	p->operand[3] = timeout_ns;
}

/** accel_prep_exec() - run @n packets of a sealed buffer at @body */
ACCEL_INLINE void accel_prep_exec(struct drm_vaccel_packet *p, uint64_t body, uint64_t n,
				  uint64_t epoch)
{
	accel_prep_packet(p, DRM_VACCEL_PKT_EXEC);
	p->operand[0] = body;
	p->operand[1] = n;
	p->operand[2] = epoch;
}

/** accel_prep_exec_bindings() - give a prepared EXEC a table of @n addresses */
ACCEL_INLINE void accel_prep_exec_bindings(struct drm_vaccel_packet *p, uint64_t table,
					   unsigned int n)
{
	p->arg = n;
	p->operand[3] = table;
}

/** accel_prep_timestamp() - store the device clock (ns) at @dst */
ACCEL_INLINE void accel_prep_timestamp(struct drm_vaccel_packet *p, uint64_t dst)
{
	accel_prep_packet(p, DRM_VACCEL_PKT_TIMESTAMP);
	p->operand[0] = dst;
}

/** accel_prep_delay() - keep the queue busy for @ns (a modelled kernel) */
ACCEL_INLINE void accel_prep_delay(struct drm_vaccel_packet *p, uint64_t ns)
{
	accel_prep_packet(p, DRM_VACCEL_PKT_DELAY);
	p->operand[0] = ns;
}

/**
 * accel_prep_matmul() - C (+)= A x B from a &struct drm_vaccel_matmul
 * @desc: device address of the descriptor (64-byte aligned)
 * @dtype: DRM_VACCEL_DTYPE_F32, _F16 or _BF16
 * @flags: DRM_VACCEL_MATMUL_F_ACCUMULATE or 0
 */
ACCEL_INLINE void accel_prep_matmul(struct drm_vaccel_packet *p, uint64_t desc,
				    unsigned int dtype, uint32_t flags)
{
	accel_prep_packet(p, DRM_VACCEL_PKT_MATMUL);
	p->arg = dtype;
	p->flags = flags;
	p->operand[0] = desc;
}

/**
 * accel_prep_completion() - apply @op to a signal when the packet is done
 * @p: a prepared packet
 */
ACCEL_INLINE void accel_prep_completion(struct drm_vaccel_packet *p, uint64_t signal,
					unsigned int op, uint64_t value)
{
	p->completion_addr = signal;
	p->completion_op = op;
	p->completion_value = value;
}

/** accel_prep_irq() - also wake host waiters of the signal the packet updates */
ACCEL_INLINE void accel_prep_irq(struct drm_vaccel_packet *p)
{
	p->header |= DRM_VACCEL_PKT_IRQ;
}

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_PACKET_H */
