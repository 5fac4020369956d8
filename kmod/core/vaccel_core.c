// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The packet core: fetch (copy, resolve binding addresses, then validate),
 * execute in bounded steps, complete. Packets come from user-writable
 * memory and are hostile: each is copied once into the queue's private
 * state and only the copy is looked at; every address goes through
 * vaccel_os_map(); every loop is bounded by the step budget or by a
 * constant. Modelled time never blocks: it makes the queue busy.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "vaccel_core.h"

#define PKT_SIZE	sizeof(struct drm_vaccel_packet)

#define NONE		DRM_VACCEL_FAULT_NONE
#define BAD		DRM_VACCEL_FAULT_BAD_PACKET
#define ALIGN		DRM_VACCEL_FAULT_ALIGNMENT

#define SLOT(n)		(VACCEL_CORE_SLOT_OP0 + (n))
#define NO_SLOT		VACCEL_CORE_SLOT_NONE

/* Outcome of one step of a packet. */
enum step {
	STEP_DONE,	/* the packet completed */
	STEP_MORE,	/* progress made, the packet needs more steps */
	STEP_NEXT,	/* nothing to complete (an EXEC was entered) */
	STEP_BLOCKED,	/* a WAIT is not satisfied */
	STEP_FAULT,	/* q->fault is set */
};

unsigned int vaccel_core_dtype_size(u32 dtype)
{
	switch (dtype) {
	case DRM_VACCEL_DTYPE_F32:
	case DRM_VACCEL_DTYPE_I32:
		return 4;
	case DRM_VACCEL_DTYPE_F16:
	case DRM_VACCEL_DTYPE_BF16:
		return 2;
	case DRM_VACCEL_DTYPE_I64:
		return 8;
	case DRM_VACCEL_DTYPE_U8:
		return 1;
	}
	return 0;
}

static bool operands_zero(const struct drm_vaccel_packet *p, unsigned int from)
{
	unsigned int i;

	for (i = from; i < 4; i++)
		if (p->operand[i])
			return false;
	return true;
}

/* [a, a + n) and [b, b + m) overlap; neither range wraps. */
static bool overlap2(u64 a, u64 n, u64 b, u64 m)
{
	return n && m && a < b + m && b < a + n;
}

static bool overlap(u64 a, u64 b, u64 n)
{
	return overlap2(a, n, b, n);
}

static bool wraps(u64 a, u64 n)
{
	return a + n < a;
}

/**
 * vaccel_core_wait_valid() - can a WAIT condition be evaluated
 * @mask: bits compared (0 means all)
 * @cond: DRM_VACCEL_WAIT_*
 *
 * GE compares in the mask's width, so its mask must be one run of bits.
 *
 * Return: true if @cond and @mask make a valid condition.
 */
bool vaccel_core_wait_valid(u64 mask, u32 cond)
{
	if (cond > DRM_VACCEL_WAIT_NE)
		return false;
	if (cond != DRM_VACCEL_WAIT_GE || !mask)
		return true;
	mask >>= __builtin_ctzll(mask);
	return !(mask & (mask + 1));
}

static u32 validate_body(const struct drm_vaccel_packet *p, unsigned int depth)
{
	const u64 *op = p->operand;
	unsigned int esize;
	u32 width;

	switch (p->header & DRM_VACCEL_PKT_TYPE_MASK) {
	case DRM_VACCEL_PKT_NOP:
		return p->arg || p->flags || !operands_zero(p, 0) ? BAD : NONE;
	case DRM_VACCEL_PKT_COPY:
		if (p->arg || p->flags || op[3] || wraps(op[0], op[2]) ||
		    wraps(op[1], op[2]) || overlap(op[0], op[1], op[2]))
			return BAD;
		return NONE;
	case DRM_VACCEL_PKT_FILL:
		width = p->arg;
		if (p->flags || op[3] || wraps(op[0], op[1]))
			return BAD;
		if (width != 1 && width != 2 && width != 4 && width != 8)
			return BAD;
		if (width < 8 && op[2] >> (8 * width))
			return BAD;
		if (op[1] % width)
			return BAD;
		return op[0] % width ? ALIGN : NONE;
	case DRM_VACCEL_PKT_REDUCE:
		esize = vaccel_core_dtype_size(p->arg & 0xff);
		if (!esize || (p->arg >> 8) > DRM_VACCEL_REDOP_MAX || p->flags)
			return BAD;
		if (op[3] > ~0ull / esize)
			return BAD;
		if (wraps(op[0], op[3] * esize) || wraps(op[1], op[3] * esize) ||
		    wraps(op[2], op[3] * esize))
			return BAD;
		/* in place (dst == src) is fine, partial overlap is not */
		if ((op[2] != op[0] && overlap(op[2], op[0], op[3] * esize)) ||
		    (op[2] != op[1] && overlap(op[2], op[1], op[3] * esize)))
			return BAD;
		if ((op[0] | op[1] | op[2]) % esize)
			return ALIGN;
		return NONE;
	case DRM_VACCEL_PKT_SIGNAL:
		if (p->arg < DRM_VACCEL_SIGNAL_SET || p->arg > DRM_VACCEL_SIGNAL_MAX ||
		    (p->flags & ~DRM_VACCEL_SIGNAL_F_EPOCH) || !operands_zero(p, 2))
			return BAD;
		return op[0] % 8 ? ALIGN : NONE;
	case DRM_VACCEL_PKT_WAIT:
		if (!vaccel_core_wait_valid(op[2], p->arg) ||
		    (p->flags & ~DRM_VACCEL_WAIT_F_EPOCH))
			return BAD;
		return op[0] % 8 ? ALIGN : NONE;
	case DRM_VACCEL_PKT_EXEC:
		if ((p->flags & ~DRM_VACCEL_EXEC_F_EPOCH) || !op[1] ||
		    op[1] > VACCEL_CORE_MAX_EXEC_PACKETS || wraps(op[0], op[1] * PKT_SIZE) ||
		    p->arg > DRM_VACCEL_EXEC_MAX_BINDINGS || !p->arg != !op[3] ||
		    wraps(op[3], 8ull * p->arg))
			return BAD;
		if (op[0] % PKT_SIZE || op[3] % 8)
			return ALIGN;
		return depth >= VACCEL_CORE_MAX_DEPTH ? DRM_VACCEL_FAULT_EXEC_DEPTH : NONE;
	case DRM_VACCEL_PKT_TIMESTAMP:
		if (p->arg || p->flags || !operands_zero(p, 1))
			return BAD;
		return op[0] % 8 ? ALIGN : NONE;
	case DRM_VACCEL_PKT_DELAY:
		if (p->arg || p->flags || !operands_zero(p, 1) ||
		    op[0] > VACCEL_CORE_MAX_DELAY_NS)
			return BAD;
		return NONE;
	case DRM_VACCEL_PKT_MATMUL:
		if ((p->arg != DRM_VACCEL_DTYPE_F32 && p->arg != DRM_VACCEL_DTYPE_F16 &&
		     p->arg != DRM_VACCEL_DTYPE_BF16) ||
		    (p->flags & ~DRM_VACCEL_MATMUL_F_ACCUMULATE) || !operands_zero(p, 1))
			return BAD;
		return op[0] % sizeof(struct drm_vaccel_matmul) ? ALIGN : NONE;
	}
	return BAD;
}

/**
 * vaccel_core_validate() - check a packet copy before executing it
 * @pkt: the packet, already copied out of device memory, binding
 *	addresses resolved
 * @depth: EXEC nesting depth it would run at
 *
 * Return: DRM_VACCEL_FAULT_NONE or the fault it must raise.
 */
u32 vaccel_core_validate(const struct drm_vaccel_packet *pkt, unsigned int depth)
{
	u16 h = pkt->header;

	if ((h & DRM_VACCEL_PKT_RESERVED) || pkt->reserved)
		return BAD;
	/* scopes are accepted (see the uAPI header); the value 3 is not one */
	if (((h >> DRM_VACCEL_PKT_ACQUIRE_SHIFT) & 3) > DRM_VACCEL_SCOPE_SYSTEM ||
	    ((h >> DRM_VACCEL_PKT_RELEASE_SHIFT) & 3) > DRM_VACCEL_SCOPE_SYSTEM)
		return BAD;
	if (pkt->completion_op > DRM_VACCEL_SIGNAL_MAX)
		return BAD;
	if (pkt->completion_op == DRM_VACCEL_SIGNAL_NONE) {
		/* IRQ wakes the waiters of the completion signal: needs one */
		if (pkt->completion_addr || pkt->completion_value ||
		    ((h & DRM_VACCEL_PKT_IRQ) &&
		     (h & DRM_VACCEL_PKT_TYPE_MASK) != DRM_VACCEL_PKT_SIGNAL))
			return BAD;
	} else if (pkt->completion_addr % 8) {
		return ALIGN;
	}
	return validate_body(pkt, depth);
}

/**
 * vaccel_core_wait_done() - is a WAIT condition met
 * @value: the signal's value
 * @target: the value waited for
 * @mask: bits compared (0 means all); for GE one run of bits (see
 *	vaccel_core_wait_valid())
 * @cond: DRM_VACCEL_WAIT_*
 *
 * GE compares sequence numbers, so it stays right across wrap-around:
 * @value is "at or after" @target when their difference, in the mask's
 * width, has its top bit clear.
 *
 * Return: true if the condition holds.
 */
bool vaccel_core_wait_done(u64 value, u64 target, u64 mask, u32 cond)
{
	unsigned int shift;
	u64 diff;

	if (!mask)
		mask = ~0ull;
	value &= mask;
	target &= mask;
	switch (cond) {
	case DRM_VACCEL_WAIT_GE:
		shift = __builtin_ctzll(mask);
		diff = ((value - target) & mask) >> shift;
		/* the run's top bit, in the shifted mask */
		return !(diff & ((mask >> shift) ^ ((mask >> shift) >> 1)));
	case DRM_VACCEL_WAIT_EQ:
		return value == target;
	default:
		return value != target;
	}
}

/**
 * vaccel_core_queue_init() - reset a queue's executor state
 * @q: the queue
 * @os: the OS layer's queue, handed back to vaccel_os_*()
 * @ring_va: device address of the ring
 * @ring_size: number of packets in the ring, a power of two
 */
void vaccel_core_queue_init(struct vaccel_core_queue *q, void *os,
			    u64 ring_va, u32 ring_size)
{
	memset(q, 0, sizeof(*q));
	q->os = os;
	q->ring_va = ring_va;
	q->ring_size = ring_size;
}

static u64 body_index(const struct vaccel_core_queue *q, unsigned int depth)
{
	return depth ? q->frames[depth - 1].next - 1 : 0;
}

/*
 * Record a fault of the packet at nesting @depth; @binding is 1 + the
 * binding entry @addr came from, or 0.
 */
static enum step fault_at(struct vaccel_core_queue *q, unsigned int depth,
			  u32 code, u64 addr, u32 binding)
{
	q->fault = code;
	q->fault_index = q->read_index;
	q->fault_addr = addr;
	q->fault_depth = depth;
	q->fault_exec_index = body_index(q, depth);
	q->fault_binding = binding;
	return STEP_FAULT;
}

/* A fault of the current packet; @slot names the address involved. */
static enum step fault(struct vaccel_core_queue *q, u32 code, u64 addr,
		       unsigned int slot)
{
	return fault_at(q, q->depth, code, addr,
			slot < VACCEL_CORE_SLOTS ? q->binding[slot] : 0);
}

static u64 epoch(const struct vaccel_core_queue *q)
{
	return q->depth ? q->frames[q->depth - 1].epoch : 0;
}

/*
 * Replace a binding address by table[i] + offset of the running EXEC.
 * Returns false (the queue faulted) if it names no entry or wraps.
 */
static bool resolve(struct vaccel_core_queue *q, u64 *addr, unsigned int slot)
{
	const struct vaccel_core_frame *fr;
	u64 a = *addr, base, off;
	u32 i;

	if (!(a & DRM_VACCEL_BINDING_FLAG))
		return true;
	i = DRM_VACCEL_BINDING_INDEX(a);
	off = DRM_VACCEL_BINDING_OFFSET(a);
	fr = q->depth ? &q->frames[q->depth - 1] : NULL;
	/* bits 56-62 are not part of any binding address */
	if (!fr || (a & ~(DRM_VACCEL_BINDING_FLAG | 0xffffffffffffffull)) ||
	    i >= fr->nbindings) {
		fault(q, DRM_VACCEL_FAULT_BINDING, a, NO_SLOT);
		return false;
	}
	base = fr->bindings[i];
	if (wraps(base, off)) {
		q->binding[slot] = i + 1;
		fault(q, DRM_VACCEL_FAULT_BINDING, a, slot);
		return false;
	}
	*addr = base + off;
	q->binding[slot] = i + 1;
	return true;
}

/* Resolve every address of q->pkt; false if the queue faulted. */
static bool resolve_packet(struct vaccel_core_queue *q)
{
	struct drm_vaccel_packet *p = &q->pkt;
	unsigned int nops = 0, i;

	switch (p->header & DRM_VACCEL_PKT_TYPE_MASK) {
	case DRM_VACCEL_PKT_FILL:
	case DRM_VACCEL_PKT_SIGNAL:
	case DRM_VACCEL_PKT_WAIT:
	case DRM_VACCEL_PKT_TIMESTAMP:
	case DRM_VACCEL_PKT_MATMUL:
		nops = 1;
		break;
	case DRM_VACCEL_PKT_COPY:
		nops = 2;
		break;
	case DRM_VACCEL_PKT_REDUCE:
		nops = 3;
		break;
	case DRM_VACCEL_PKT_EXEC:
		nops = 1;
		if (p->arg && !resolve(q, &p->operand[3], VACCEL_CORE_SLOT_OP3))
			return false;
		break;
	}
	for (i = 0; i < nops; i++)
		if (!resolve(q, &p->operand[i], SLOT(i)))
			return false;
	if (p->completion_op != DRM_VACCEL_SIGNAL_NONE &&
	    !resolve(q, &p->completion_addr, VACCEL_CORE_SLOT_COMPLETION))
		return false;
	return true;
}

/* Copy the next packet into q->pkt, resolve and validate the copy. */
static enum step fetch(struct vaccel_core_queue *q, u64 write_index)
{
	void *src, *cookie;
	u64 va, avail;
	u32 f;

	if (q->depth) {
		struct vaccel_core_frame *fr = &q->frames[q->depth - 1];

		va = fr->pkt.operand[0] + fr->next * PKT_SIZE;
		fr->next++;
	} else {
		if (q->read_index >= write_index)
			return STEP_NEXT;
		va = q->ring_va + (q->read_index & (q->ring_size - 1)) * PKT_SIZE;
	}
	memset(q->binding, 0, sizeof(q->binding));

	/* EXEC bodies must still be sealed: the range may be rebound meanwhile */
	f = vaccel_os_map(q->os, va, PKT_SIZE,
			  DRM_VACCEL_VM_READ | (q->depth ? VACCEL_CORE_ACCESS_SEALED : 0),
			  &src, &avail, &cookie);
	if (f)
		return fault(q, f, va, NO_SLOT);
	if (avail < PKT_SIZE) {
		/* a packet straddling two mappings: not one we accept */
		vaccel_os_unmap(q->os, cookie);
		return fault(q, DRM_VACCEL_FAULT_BAD_PACKET, va, NO_SLOT);
	}
	memcpy(&q->pkt, src, PKT_SIZE);
	vaccel_os_unmap(q->os, cookie);

	if (!resolve_packet(q))
		return STEP_FAULT;
	f = vaccel_core_validate(&q->pkt, q->depth);
	if (f)
		return fault(q, f, va, NO_SLOT);
	vaccel_os_packet(q->os, &q->pkt, q->read_index, q->depth, false);
	q->have_pkt = true;
	q->have_mm = false;
	q->progress = 0;
	q->deadline = 0;
	return STEP_MORE;
}

/*
 * @n elements of a REDUCE. vaccel_reduce.c is built with FPU code allowed
 * (CC_FLAGS_FPU), so every dtype runs in FPU sections (the compiler may
 * vectorise integer loops). A section ends at the first clock check
 * VACCEL_CORE_FPU_NS or more after it began, checks coming every
 * VACCEL_CORE_REDUCE_BLOCK elements: a chunk is 256 KiB, and subnormal
 * operands make an element cost up to hundreds of cycles on real FPUs.
 */
static void reduce_sections(void *os, const struct drm_vaccel_packet *p, u8 *d,
			    const u8 *a, const u8 *b, u64 n, unsigned int es)
{
	u64 i = 0, blk, start;

	while (i < n) {
		vaccel_os_fpu_begin(os);
		start = vaccel_os_now_ns(os);
		do {
			blk = n - i < VACCEL_CORE_REDUCE_BLOCK ? n - i : VACCEL_CORE_REDUCE_BLOCK;
			vaccel_core_reduce(d + i * es, a + i * es, b + i * es, blk,
					   p->arg & 0xff, p->arg >> 8);
			i += blk;
		} while (i < n && vaccel_os_now_ns(os) - start < VACCEL_CORE_FPU_NS);
		vaccel_os_fpu_end(os);
	}
}

/*
 * Units (bytes; elements for REDUCE) [@from, @to) of a validated COPY,
 * FILL or REDUCE, however many mappings they cross. On a fault, the
 * faulting address and its slot are returned; units before it are done.
 */
static u32 bulk_range(void *os, const struct drm_vaccel_packet *p, u64 from,
		      u64 to, u64 *fault_addr, unsigned int *slot, u64 *done)
{
	const u64 *op = p->operand;
	u16 type = p->header & DRM_VACCEL_PKT_TYPE_MASK;
	unsigned int es = 1, width = p->arg, nsrc = 0, i;
	u64 pat = op[2], dst, src[2], n, k;
	void *d, *s[2], *dc, *sc[2];
	u32 f;

	switch (type) {
	case DRM_VACCEL_PKT_COPY:
		nsrc = 1;
		src[0] = op[0];
		dst = op[1];
		break;
	case DRM_VACCEL_PKT_FILL:
		dst = op[0];
		for (k = width; k < 8; k *= 2)
			pat |= pat << (8 * k);
		break;
	default:	/* REDUCE */
		es = vaccel_core_dtype_size(p->arg & 0xff);
		nsrc = 2;
		src[0] = op[0];
		src[1] = op[1];
		dst = op[2];
		break;
	}
	*done = from;
	while (*done < to) {
		u64 off = *done * es;

		n = (to - *done) * es;
		for (i = 0; i < nsrc; i++) {
			f = vaccel_os_map(os, src[i] + off, n, DRM_VACCEL_VM_READ,
					  &s[i], &n, &sc[i]);
			if (f) {
				*fault_addr = src[i] + off;
				*slot = SLOT(i);
				goto unmap;
			}
		}
		f = vaccel_os_map(os, dst + off, n, DRM_VACCEL_VM_WRITE, &d, &n, &dc);
		if (f) {
			*fault_addr = dst + off;
			*slot = SLOT(nsrc);
			goto unmap;
		}
		/*
		 * Mappings are page-aligned and addresses element-aligned, so
		 * whole elements are available; never make no progress.
		 */
		n -= n % es;
		if (!n) {
			f = ALIGN;
			*fault_addr = dst + off;
			*slot = SLOT(nsrc);
		} else if (type == DRM_VACCEL_PKT_COPY) {
			memcpy(d, s[0], n);
		} else if (type == DRM_VACCEL_PKT_FILL) {
			/*
			 * dst and every mapping boundary are multiples of the
			 * pattern width from dst, so the phase is 0 here.
			 */
			for (k = 0; k + 8 <= n; k += 8)
				memcpy((u8 *)d + k, &pat, 8);
			if (k < n)
				memcpy((u8 *)d + k, &pat, n - k);
		} else {
			reduce_sections(os, p, d, s[0], s[1], n / es, es);
		}
		vaccel_os_unmap(os, dc);
unmap:
		while (i--)
			vaccel_os_unmap(os, sc[i]);
		if (f)
			return f;
		*done += n / es;
	}
	return NONE;
}

/**
 * vaccel_core_bulk_left() - work left of the current bulk packet
 * @q: the queue
 * @unit_bytes: set to the bytes per unit (1, or the REDUCE element size)
 *
 * Return: units of the current COPY, FILL or REDUCE not yet done; 0 if
 * the current packet is none of them, or done.
 */
u64 vaccel_core_bulk_left(const struct vaccel_core_queue *q, u64 *unit_bytes)
{
	const struct drm_vaccel_packet *p = &q->pkt;

	if (!q->have_pkt || q->done || q->busy_until)
		return 0;
	*unit_bytes = 1;
	switch (p->header & DRM_VACCEL_PKT_TYPE_MASK) {
	case DRM_VACCEL_PKT_COPY:
		return p->operand[2] - q->progress;
	case DRM_VACCEL_PKT_FILL:
		return p->operand[1] - q->progress;
	case DRM_VACCEL_PKT_REDUCE:
		*unit_bytes = vaccel_core_dtype_size(p->arg & 0xff);
		return p->operand[3] - q->progress;
	}
	return 0;
}

/**
 * vaccel_core_bulk_range() - run units [@from, @to) of a bulk packet
 * @os: the queue's OS layer pointer
 * @pkt: a copy of the queue's current packet (COPY, FILL or REDUCE)
 * @from: first unit
 * @to: end unit, at most the packet's total
 * @fault_addr: set to the faulting address on a fault
 * @slot: set to its &enum vaccel_core_slot on a fault
 *
 * Touches nothing but the packet's memory, so ranges of one packet can
 * run on several threads at once.
 *
 * Return: DRM_VACCEL_FAULT_NONE or the fault.
 */
u32 vaccel_core_bulk_range(void *os, const struct drm_vaccel_packet *pkt,
			   u64 from, u64 to, u64 *fault_addr, unsigned int *slot)
{
	u64 done;

	return bulk_range(os, pkt, from, to, fault_addr, slot, &done);
}

/**
 * vaccel_core_bulk_done() - units up to @to of the current bulk packet ran
 * @q: the queue
 * @to: units done from the start of the packet (the whole packet if the
 *	ranges ran without a fault)
 * @fault_code: DRM_VACCEL_FAULT_NONE, or the fault of the range that failed
 * @fault_addr: its address
 * @slot: its &enum vaccel_core_slot
 *
 * Return: false if the queue faulted.
 */
bool vaccel_core_bulk_done(struct vaccel_core_queue *q, u64 to, u32 fault_code,
			   u64 fault_addr, unsigned int slot)
{
	u64 unit = 1;

	if (to > q->progress) {
		vaccel_core_bulk_left(q, &unit);
		q->bytes += (to - q->progress) * unit;
		q->progress = to;
	}
	if (fault_code) {
		fault(q, fault_code, fault_addr, slot);
		return false;
	}
	return true;
}

/* One step of a COPY, FILL or REDUCE: a chunk of at most 256 KiB. */
static enum step step_bulk(struct vaccel_core_queue *q)
{
	u64 unit, left = vaccel_core_bulk_left(q, &unit), n, done, addr;
	unsigned int slot;
	u32 f;

	if (!left)
		return STEP_DONE;
	n = VACCEL_CORE_CHUNK / unit;
	if (n > left)
		n = left;
	f = bulk_range(q->os, &q->pkt, q->progress, q->progress + n, &addr, &slot,
		       &done);
	q->bytes += (done - q->progress) * unit;
	q->progress = done;
	if (f)
		return fault(q, f, addr, slot);
	return n == left ? STEP_DONE : STEP_MORE;
}

/* Read and check a MATMUL descriptor into q->mm. */
static enum step matmul_load(struct vaccel_core_queue *q)
{
	struct drm_vaccel_matmul *d = &q->mm;
	unsigned int es = vaccel_core_dtype_size(q->pkt.arg);
	u64 va = q->pkt.operand[0], avail, ea, eb, ec;
	void *src, *cookie;
	u32 f;

	f = vaccel_os_map(q->os, va, sizeof(*d), DRM_VACCEL_VM_READ, &src, &avail,
			  &cookie);
	if (f)
		return fault(q, f, va, SLOT(0));
	if (avail < sizeof(*d)) {
		vaccel_os_unmap(q->os, cookie);
		return fault(q, BAD, va, SLOT(0));
	}
	memcpy(d, src, sizeof(*d));
	vaccel_os_unmap(q->os, cookie);

	if (!resolve(q, &d->a, VACCEL_CORE_SLOT_MM_A) ||
	    !resolve(q, &d->b, VACCEL_CORE_SLOT_MM_B) ||
	    !resolve(q, &d->c, VACCEL_CORE_SLOT_MM_C))
		return STEP_FAULT;
	if (d->reserved[0] || d->reserved[1] || !d->m || !d->n || !d->k ||
	    d->m > DRM_VACCEL_MATMUL_MAX_DIM || d->n > DRM_VACCEL_MATMUL_MAX_DIM ||
	    d->k > DRM_VACCEL_MATMUL_MAX_DIM || d->lda < d->k || d->ldb < d->n ||
	    d->ldc < d->n)
		return fault(q, BAD, va, SLOT(0));
	/* at most 2^12 * 2^32 * 4 bytes: no overflow */
	ea = ((u64)(d->m - 1) * d->lda + d->k) * es;
	eb = ((u64)(d->k - 1) * d->ldb + d->n) * es;
	ec = ((u64)(d->m - 1) * d->ldc + d->n) * 4;
	if (wraps(d->a, ea) || wraps(d->b, eb) || wraps(d->c, ec) ||
	    overlap2(d->c, ec, d->a, ea) || overlap2(d->c, ec, d->b, eb))
		return fault(q, BAD, va, SLOT(0));
	if (d->a % es)
		return fault(q, ALIGN, d->a, VACCEL_CORE_SLOT_MM_A);
	if (d->b % es)
		return fault(q, ALIGN, d->b, VACCEL_CORE_SLOT_MM_B);
	if (d->c % 4)
		return fault(q, ALIGN, d->c, VACCEL_CORE_SLOT_MM_C);
	q->have_mm = true;
	return STEP_MORE;
}

/*
 * One step of a MATMUL: the descriptor, then elements of C, at most
 * VACCEL_CORE_MATMUL_STEP multiply-adds (at least one element), in FPU
 * sections bounded in time (vaccel_core_matmul()).
 */
static enum step step_matmul(struct vaccel_core_queue *q)
{
	const struct drm_vaccel_matmul *d = &q->mm;
	unsigned int es = vaccel_core_dtype_size(q->pkt.arg);
	u64 total, n, len[3], va[3], touched[3], end;
	struct vaccel_core_mm_pos pos = { 0 };
	void *ptr[3], *cookie[3];
	unsigned int i;
	u32 f;

	if (!q->have_mm)
		return matmul_load(q);
	total = (u64)d->m * d->n;
	n = VACCEL_CORE_MATMUL_STEP / d->k;
	if (!n)
		n = 1;
	if (n > total - q->progress)
		n = total - q->progress;
	end = q->progress + n;
	va[0] = d->a;
	len[0] = ((u64)(d->m - 1) * d->lda + d->k) * es;
	va[1] = d->b;
	len[1] = ((u64)(d->k - 1) * d->ldb + d->n) * es;
	va[2] = d->c;
	len[2] = ((u64)(d->m - 1) * d->ldc + d->n) * 4;
	/*
	 * What the step reads and writes, for the link model: the rows of A
	 * and the columns of B its elements use (consecutive elements: fewer
	 * than n of them are in distinct columns), and its elements of C.
	 */
	touched[0] = ((end - 1) / d->n - q->progress / d->n + 1) * d->k * es;
	touched[1] = (n < d->n ? n : d->n) * d->k * es;
	touched[2] = n * 4;
	/* each matrix lies in one mapping */
	for (i = 0; i < 3; i++) {
		f = vaccel_os_map_part(q->os, va[i], len[i], touched[i],
				       i == 2 ? DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE :
						DRM_VACCEL_VM_READ,
				       &ptr[i], &cookie[i]);
		if (f) {
			unsigned int bad = i;

			while (i--)
				vaccel_os_unmap(q->os, cookie[i]);
			return fault(q, f, va[bad], VACCEL_CORE_SLOT_MM_A + bad);
		}
	}
	pos.e = q->progress;
	while (pos.e < end) {
		vaccel_os_fpu_begin(q->os);
		vaccel_core_matmul(q->os, ptr[2], ptr[0], ptr[1], d, q->pkt.arg,
				   q->pkt.flags & DRM_VACCEL_MATMUL_F_ACCUMULATE, &pos, end);
		vaccel_os_fpu_end(q->os);
	}
	for (i = 3; i--;)
		vaccel_os_unmap(q->os, cookie[i]);
	q->progress += n;
	q->bytes += 4 * n;
	return q->progress == total ? STEP_DONE : STEP_MORE;
}

static enum step step_wait(struct vaccel_core_queue *q)
{
	const struct drm_vaccel_packet *p = &q->pkt;
	u64 target = p->operand[1], value, now;
	u32 f;

	if (p->flags & DRM_VACCEL_WAIT_F_EPOCH)
		target += epoch(q);
	f = vaccel_os_signal_read(q->os, p->operand[0], &value);
	if (f)
		return fault(q, f, p->operand[0], SLOT(0));
	if (vaccel_core_wait_done(value, target, p->operand[2], p->arg))
		return STEP_DONE;
	if (p->operand[3]) {
		now = vaccel_os_now_ns(q->os);
		if (!q->deadline)	/* saturating: ~0 waits for ever */
			q->deadline = now + p->operand[3] < now ? ~0ull :
				      now + p->operand[3];
		else if (now >= q->deadline)
			return fault(q, DRM_VACCEL_FAULT_WAIT_TIMEOUT, p->operand[0],
				     SLOT(0));
	}
	q->wait_addr = p->operand[0];
	return STEP_BLOCKED;
}

static enum step step_exec(struct vaccel_core_queue *q)
{
	const struct drm_vaccel_packet *p = &q->pkt;
	struct vaccel_core_frame *fr = &q->frames[q->depth];
	void *src, *cookie;
	u32 f;

	f = vaccel_os_exec_check(q->os, p->operand[0], p->operand[1] * PKT_SIZE);
	if (f)
		return fault(q, f, p->operand[0], SLOT(0));
	if (p->arg) {
		/* the table is copied once, here: later changes do not count */
		f = vaccel_os_map(q->os, p->operand[3], 8ull * p->arg,
				  DRM_VACCEL_VM_READ, &src, NULL, &cookie);
		if (f)
			return fault(q, f, p->operand[3], VACCEL_CORE_SLOT_OP3);
		memcpy(fr->bindings, src, 8ull * p->arg);
		vaccel_os_unmap(q->os, cookie);
		fr->nbindings = p->arg;
	} else if (q->depth) {
		fr->nbindings = q->frames[q->depth - 1].nbindings;
		memcpy(fr->bindings, q->frames[q->depth - 1].bindings,
		       sizeof(fr->bindings));
	} else {
		fr->nbindings = 0;
	}
	fr->epoch = p->operand[2];
	if (p->flags & DRM_VACCEL_EXEC_F_EPOCH)
		fr->epoch += epoch(q);
	fr->completion_binding = q->binding[VACCEL_CORE_SLOT_COMPLETION];
	fr->pkt = *p;
	fr->next = 0;
	q->depth++;
	q->have_pkt = false;
	return STEP_NEXT;
}

static enum step step_timestamp(struct vaccel_core_queue *q)
{
	u64 now = vaccel_os_now_ns(q->os);
	void *d, *cookie;
	u32 f;

	/* 8-byte aligned, so the word never straddles two mappings */
	f = vaccel_os_map(q->os, q->pkt.operand[0], 8, DRM_VACCEL_VM_WRITE, &d, NULL,
			  &cookie);
	if (f)
		return fault(q, f, q->pkt.operand[0], SLOT(0));
	memcpy(d, &now, 8);
	vaccel_os_unmap(q->os, cookie);
	return STEP_DONE;
}

static enum step step(struct vaccel_core_queue *q)
{
	const struct drm_vaccel_packet *p = &q->pkt;
	u64 value;
	u32 f;

	switch (p->header & DRM_VACCEL_PKT_TYPE_MASK) {
	case DRM_VACCEL_PKT_COPY:
	case DRM_VACCEL_PKT_FILL:
	case DRM_VACCEL_PKT_REDUCE:
		return step_bulk(q);
	case DRM_VACCEL_PKT_SIGNAL:
		value = p->operand[1];
		if (p->flags & DRM_VACCEL_SIGNAL_F_EPOCH)
			value += epoch(q);
		f = vaccel_os_signal(q->os, p->operand[0], p->arg, value,
				     p->header & DRM_VACCEL_PKT_IRQ);
		return f ? fault(q, f, p->operand[0], SLOT(0)) : STEP_DONE;
	case DRM_VACCEL_PKT_WAIT:
		return step_wait(q);
	case DRM_VACCEL_PKT_EXEC:
		return step_exec(q);
	case DRM_VACCEL_PKT_TIMESTAMP:
		return step_timestamp(q);
	case DRM_VACCEL_PKT_DELAY:
		/* all of it at once, measured on the clock from now */
		q->step_ns = p->operand[0];
		return STEP_DONE;
	case DRM_VACCEL_PKT_MATMUL:
		return step_matmul(q);
	}
	return STEP_DONE;	/* NOP */
}

/* The current packet is done: completion action, then retire it. */
static bool complete(struct vaccel_core_queue *q)
{
	const struct drm_vaccel_packet *p = &q->pkt;
	u32 f;

	if (p->completion_op != DRM_VACCEL_SIGNAL_NONE) {
		f = vaccel_os_signal(q->os, p->completion_addr, p->completion_op,
				     p->completion_value, p->header & DRM_VACCEL_PKT_IRQ);
		if (f) {
			fault(q, f, p->completion_addr, VACCEL_CORE_SLOT_COMPLETION);
			return false;
		}
	}
	vaccel_os_packet(q->os, p, q->read_index, q->depth, true);
	q->have_pkt = false;
	q->packets++;
	if (!q->depth)
		q->read_index++;
	return true;
}

/*
 * Leave every EXEC whose packets have all completed. fr->next counts the
 * packets fetched, so an EXEC whose last packet is still in flight (a
 * blocked WAIT, a busy DELAY or a COPY taking several steps) must stay
 * entered: leaving early would run its completion action before that
 * packet's, and the packet's own retirement would then advance the ring a
 * second time.
 */
static bool finish_execs(struct vaccel_core_queue *q)
{
	while (q->depth && !q->have_pkt) {
		struct vaccel_core_frame *fr = &q->frames[q->depth - 1];
		const struct drm_vaccel_packet *p = &fr->pkt;
		u32 f;

		if (fr->next < p->operand[1])
			return true;
		if (p->completion_op != DRM_VACCEL_SIGNAL_NONE) {
			f = vaccel_os_signal(q->os, p->completion_addr, p->completion_op,
					     p->completion_value,
					     p->header & DRM_VACCEL_PKT_IRQ);
			if (f) {
				/* the EXEC packet itself, one level out */
				fault_at(q, q->depth - 1, f, p->completion_addr,
					 fr->completion_binding);
				return false;
			}
		}
		vaccel_os_packet(q->os, p, q->read_index, q->depth - 1, true);
		q->depth--;
		q->packets++;
		if (!q->depth)
			q->read_index++;	/* the EXEC's one ring slot */
	}
	return true;
}

/*
 * Modelled time charged by the step just taken: make the queue busy for
 * it. A packet whose work is done completes when the time has passed.
 *
 * A DELAY's time starts now. A link transfer's time started with the
 * step's first charged access, or at the end of the busy period the
 * queue went straight on from (@resume), whichever is earlier: the time
 * the step itself took (the copy that stands for the transfer), the
 * engine coming back late to an expired busy period and other queues'
 * turns are the emulator's time, not the link's. So a transfer is never
 * shorter than its link time, and back-to-back transfers run at the
 * link's rate.
 */
static bool charge(struct vaccel_core_queue *q, enum step st)
{
	u64 first, link = vaccel_os_charge(q->os, &first), from = first, ns, now;

	if (q->resume && (!from || q->resume < from))
		from = q->resume;
	q->resume = 0;	/* a step of its own: the chain ends here */
	if (!link && !q->step_ns)	/* the common step: no clock read */
		return false;
	now = vaccel_os_now_ns(q->os);
	if (link && from && now > from)
		link = link > now - from ? link - (now - from) : 0;
	ns = q->step_ns + link;
	q->step_ns = 0;
	if (!ns)
		return false;
	q->busy_until = now + ns < now ? ~0ull : now + ns;
	if (!q->busy_until)	/* 0 means not busy */
		q->busy_until = 1;
	if (st == STEP_DONE)
		q->done = true;
	return true;
}

/**
 * vaccel_core_run() - execute a queue's packets
 * @q: the queue
 * @write_index: packets committed to the ring by the doorbell, at most
 *	@q->read_index + @q->ring_size (the caller checks)
 * @budget: most steps to take; each step is bounded (one packet, one
 *	chunk of VACCEL_CORE_CHUNK bytes, one VACCEL_CORE_MATMUL_STEP of
 *	multiply-adds)
 *
 * Return: why it stopped; a faulted queue stays faulted.
 */
enum vaccel_core_status vaccel_core_run(struct vaccel_core_queue *q,
					u64 write_index, unsigned int budget)
{
	enum step st;

	if (q->fault)
		return VACCEL_CORE_FAULT;
	while (budget--) {
		if (q->busy_until) {
			if (vaccel_os_now_ns(q->os) < q->busy_until)
				return VACCEL_CORE_BUSY;
			q->resume = q->busy_until;
			q->busy_until = 0;
			if (q->done) {
				q->done = false;
				if (!complete(q))
					return VACCEL_CORE_FAULT;
				continue;
			}
		}
		if (!finish_execs(q))
			return VACCEL_CORE_FAULT;
		if (!q->have_pkt) {
			st = fetch(q, write_index);
			if (st == STEP_NEXT) {
				q->resume = 0;	/* idle: not straight on */
				return VACCEL_CORE_IDLE;
			}
			if (st == STEP_FAULT)
				return VACCEL_CORE_FAULT;
		}
		st = step(q);
		if (st == STEP_FAULT)
			return VACCEL_CORE_FAULT;
		if (charge(q, st))
			return VACCEL_CORE_BUSY;
		switch (st) {
		case STEP_DONE:
			if (!complete(q))
				return VACCEL_CORE_FAULT;
			break;
		case STEP_BLOCKED:
			return VACCEL_CORE_BLOCKED;
		default:
			break;
		}
	}
	if (!finish_execs(q))
		return VACCEL_CORE_FAULT;
	return VACCEL_CORE_BUDGET;
}
