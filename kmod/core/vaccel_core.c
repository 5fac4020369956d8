// SPDX-License-Identifier: GPL-2.0-only
/*
 * The packet core: fetch (copy, then validate), execute in bounded steps,
 * complete. Packets come from user-writable memory and are hostile: each
 * is copied once into the queue's private state and only the copy is
 * looked at; every address goes through vaccel_os_map(); every loop is
 * bounded by the step budget or by a constant.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "vaccel_core.h"

#define PKT_SIZE	sizeof(struct drm_vaccel_packet)

#define NONE		DRM_VACCEL_FAULT_NONE
#define BAD		DRM_VACCEL_FAULT_BAD_PACKET
#define ALIGN		DRM_VACCEL_FAULT_ALIGNMENT

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

/* [a, a + n) and [b, b + n) overlap; neither range wraps. */
static bool overlap(u64 a, u64 b, u64 n)
{
	return n && a < b + n && b < a + n;
}

static bool wraps(u64 a, u64 n)
{
	return a + n < a;
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
		if (p->arg > DRM_VACCEL_WAIT_NE || (p->flags & ~DRM_VACCEL_WAIT_F_EPOCH))
			return BAD;
		return op[0] % 8 ? ALIGN : NONE;
	case DRM_VACCEL_PKT_EXEC:
		if (p->arg || p->flags || op[3] || !op[1] ||
		    op[1] > VACCEL_CORE_MAX_EXEC_PACKETS || wraps(op[0], op[1] * PKT_SIZE))
			return BAD;
		if (op[0] % PKT_SIZE)
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
	}
	return BAD;
}

/**
 * vaccel_core_validate() - check a packet copy before executing it
 * @pkt: the packet, already copied out of device memory
 * @depth: EXEC nesting depth it would run at
 *
 * Return: DRM_VACCEL_FAULT_NONE or the fault it must raise.
 */
u32 vaccel_core_validate(const struct drm_vaccel_packet *pkt, unsigned int depth)
{
	u16 h = pkt->header;

	if ((h & DRM_VACCEL_PKT_RESERVED) || pkt->reserved)
		return BAD;
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
 * @mask: bits compared (0 means all)
 * @cond: DRM_VACCEL_WAIT_*
 *
 * GE compares sequence numbers, so it stays right across wrap-around:
 * @value is "at or after" @target when the signed distance is >= 0.
 *
 * Return: true if the condition holds.
 */
bool vaccel_core_wait_done(u64 value, u64 target, u64 mask, u32 cond)
{
	if (!mask)
		mask = ~0ull;
	value &= mask;
	target &= mask;
	switch (cond) {
	case DRM_VACCEL_WAIT_GE:
		return (s64)(value - target) >= 0;
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

static enum step fault(struct vaccel_core_queue *q, u32 code, u64 addr)
{
	q->fault = code;
	q->fault_index = q->read_index;
	q->fault_addr = addr;
	return STEP_FAULT;
}

static u64 epoch(const struct vaccel_core_queue *q)
{
	return q->depth ? q->frames[q->depth - 1].pkt.operand[2] : 0;
}

/* Copy the next packet into q->pkt and validate the copy. */
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

	/* EXEC bodies must still be sealed: the range may be rebound meanwhile */
	f = vaccel_os_map(q->os, va, PKT_SIZE,
			  DRM_VACCEL_VM_READ | (q->depth ? VACCEL_CORE_ACCESS_SEALED : 0),
			  &src, &avail, &cookie);
	if (f)
		return fault(q, f, va);
	if (avail < PKT_SIZE) {
		/* a packet straddling two mappings: not one we accept */
		vaccel_os_unmap(q->os, cookie);
		return fault(q, DRM_VACCEL_FAULT_BAD_PACKET, va);
	}
	memcpy(&q->pkt, src, PKT_SIZE);
	vaccel_os_unmap(q->os, cookie);

	f = vaccel_core_validate(&q->pkt, q->depth);
	if (f)
		return fault(q, f, va);
	vaccel_os_packet(q->os, &q->pkt, q->read_index, q->depth, false);
	q->have_pkt = true;
	q->progress = 0;
	q->deadline = 0;
	return STEP_MORE;
}

/* One bounded step of a COPY. */
static enum step step_copy(struct vaccel_core_queue *q)
{
	const u64 *op = q->pkt.operand;
	u64 left = op[2] - q->progress, n, sn, dn;
	void *s, *d, *sc, *dc;
	u32 f;

	if (!left)
		return STEP_DONE;
	n = left < VACCEL_CORE_CHUNK ? left : VACCEL_CORE_CHUNK;
	f = vaccel_os_map(q->os, op[0] + q->progress, n, DRM_VACCEL_VM_READ,
			  &s, &sn, &sc);
	if (f)
		return fault(q, f, op[0] + q->progress);
	f = vaccel_os_map(q->os, op[1] + q->progress, sn, DRM_VACCEL_VM_WRITE,
			  &d, &dn, &dc);
	if (f) {
		vaccel_os_unmap(q->os, sc);
		return fault(q, f, op[1] + q->progress);
	}
	memcpy(d, s, dn);
	vaccel_os_unmap(q->os, dc);
	vaccel_os_unmap(q->os, sc);
	q->progress += dn;
	q->bytes += dn;
	return q->progress == op[2] ? STEP_DONE : STEP_MORE;
}

/* One bounded step of a FILL. */
static enum step step_fill(struct vaccel_core_queue *q)
{
	const u64 *op = q->pkt.operand;
	u64 left = op[1] - q->progress, n, dn, pat = op[2], i;
	unsigned int width = q->pkt.arg;
	void *cookie;
	u8 *d;
	u32 f;

	if (!left)
		return STEP_DONE;
	for (i = width; i < 8; i *= 2)
		pat |= pat << (8 * i);
	n = left < VACCEL_CORE_CHUNK ? left : VACCEL_CORE_CHUNK;
	f = vaccel_os_map(q->os, op[0] + q->progress, n, DRM_VACCEL_VM_WRITE,
			  (void **)&d, &dn, &cookie);
	if (f)
		return fault(q, f, op[0] + q->progress);
	/*
	 * Chunks and mappings start at multiples of 8 bytes from dst, so the
	 * pattern's phase is 0 here; the last piece may be shorter.
	 */
	for (i = 0; i + 8 <= dn; i += 8)
		memcpy(d + i, &pat, 8);
	if (i < dn)
		memcpy(d + i, &pat, dn - i);
	vaccel_os_unmap(q->os, cookie);
	q->progress += dn;
	q->bytes += dn;
	return q->progress == op[1] ? STEP_DONE : STEP_MORE;
}

/* One bounded step of a REDUCE; progress counts elements. */
static enum step step_reduce(struct vaccel_core_queue *q)
{
	const u64 *op = q->pkt.operand;
	u32 dtype = q->pkt.arg & 0xff, redop = q->pkt.arg >> 8;
	unsigned int es = vaccel_core_dtype_size(dtype);
	u64 off = q->progress * es, left = (op[3] - q->progress) * es;
	u64 n, an, bn, dn;
	void *a, *b, *d, *ac, *bc, *dc;
	u32 f;

	if (!left)
		return STEP_DONE;
	n = left < VACCEL_CORE_CHUNK ? left : VACCEL_CORE_CHUNK;
	f = vaccel_os_map(q->os, op[0] + off, n, DRM_VACCEL_VM_READ, &a, &an, &ac);
	if (f)
		return fault(q, f, op[0] + off);
	f = vaccel_os_map(q->os, op[1] + off, an, DRM_VACCEL_VM_READ, &b, &bn, &bc);
	if (f) {
		vaccel_os_unmap(q->os, ac);
		return fault(q, f, op[1] + off);
	}
	f = vaccel_os_map(q->os, op[2] + off, bn, DRM_VACCEL_VM_WRITE, &d, &dn, &dc);
	if (f) {
		vaccel_os_unmap(q->os, bc);
		vaccel_os_unmap(q->os, ac);
		return fault(q, f, op[2] + off);
	}
	/*
	 * Mappings are page-aligned and addresses element-aligned, so whole
	 * elements are available; never let a step make no progress.
	 */
	dn -= dn % es;
	if (!dn) {
		vaccel_os_unmap(q->os, dc);
		vaccel_os_unmap(q->os, bc);
		vaccel_os_unmap(q->os, ac);
		return fault(q, ALIGN, op[2] + off);
	}
	/*
	 * vaccel_reduce.c is built with FPU code allowed (CC_FLAGS_FPU), so
	 * every dtype runs in an FPU section: the compiler may vectorise the
	 * integer loops too.
	 */
	vaccel_os_fpu_begin();
	vaccel_core_reduce(d, a, b, dn / es, dtype, redop);
	vaccel_os_fpu_end();
	vaccel_os_unmap(q->os, dc);
	vaccel_os_unmap(q->os, bc);
	vaccel_os_unmap(q->os, ac);
	q->progress += dn / es;
	q->bytes += dn;
	return q->progress == op[3] ? STEP_DONE : STEP_MORE;
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
		return fault(q, f, p->operand[0]);
	if (vaccel_core_wait_done(value, target, p->operand[2], p->arg))
		return STEP_DONE;
	if (p->operand[3]) {
		now = vaccel_os_now_ns(q->os);
		if (!q->deadline)	/* saturating: ~0 waits for ever */
			q->deadline = now + p->operand[3] < now ? ~0ull :
				      now + p->operand[3];
		else if (now >= q->deadline)
			return fault(q, DRM_VACCEL_FAULT_WAIT_TIMEOUT, p->operand[0]);
	}
	q->wait_addr = p->operand[0];
	return STEP_BLOCKED;
}

static enum step step_exec(struct vaccel_core_queue *q)
{
	const struct drm_vaccel_packet *p = &q->pkt;
	u32 f;

	f = vaccel_os_exec_check(q->os, p->operand[0], p->operand[1] * PKT_SIZE);
	if (f)
		return fault(q, f, p->operand[0]);
	q->frames[q->depth].pkt = *p;
	q->frames[q->depth].next = 0;
	q->depth++;
	q->have_pkt = false;
	return STEP_NEXT;
}

static enum step step_timestamp(struct vaccel_core_queue *q)
{
	u64 now = vaccel_os_now_ns(q->os), n;
	void *d, *cookie;
	u32 f;

	f = vaccel_os_map(q->os, q->pkt.operand[0], 8, DRM_VACCEL_VM_WRITE, &d, &n,
			  &cookie);
	if (f)
		return fault(q, f, q->pkt.operand[0]);
	memcpy(d, &now, 8);	/* 8-byte aligned, so within one page */
	vaccel_os_unmap(q->os, cookie);
	return STEP_DONE;
}

static enum step step_delay(struct vaccel_core_queue *q)
{
	u64 left = q->pkt.operand[0] - q->progress;
	u64 n = left < VACCEL_CORE_DELAY_STEP_NS ? left : VACCEL_CORE_DELAY_STEP_NS;

	if (n)
		vaccel_os_delay(q->os, n);
	q->progress += n;
	return q->progress == q->pkt.operand[0] ? STEP_DONE : STEP_MORE;
}

static enum step step(struct vaccel_core_queue *q)
{
	const struct drm_vaccel_packet *p = &q->pkt;
	u64 value;
	u32 f;

	switch (p->header & DRM_VACCEL_PKT_TYPE_MASK) {
	case DRM_VACCEL_PKT_COPY:
		return step_copy(q);
	case DRM_VACCEL_PKT_FILL:
		return step_fill(q);
	case DRM_VACCEL_PKT_REDUCE:
		return step_reduce(q);
	case DRM_VACCEL_PKT_SIGNAL:
		value = p->operand[1];
		if (p->flags & DRM_VACCEL_SIGNAL_F_EPOCH)
			value += epoch(q);
		f = vaccel_os_signal(q->os, p->operand[0], p->arg, value,
				     p->header & DRM_VACCEL_PKT_IRQ);
		return f ? fault(q, f, p->operand[0]) : STEP_DONE;
	case DRM_VACCEL_PKT_WAIT:
		return step_wait(q);
	case DRM_VACCEL_PKT_EXEC:
		return step_exec(q);
	case DRM_VACCEL_PKT_TIMESTAMP:
		return step_timestamp(q);
	case DRM_VACCEL_PKT_DELAY:
		return step_delay(q);
	}
	return STEP_DONE;	/* NOP */
}

/* Apply @p's completion action; true on success. */
static bool complete_action(struct vaccel_core_queue *q,
			    const struct drm_vaccel_packet *p)
{
	u32 f;

	if (p->completion_op == DRM_VACCEL_SIGNAL_NONE)
		return true;
	f = vaccel_os_signal(q->os, p->completion_addr, p->completion_op,
			     p->completion_value, p->header & DRM_VACCEL_PKT_IRQ);
	if (f) {
		fault(q, f, p->completion_addr);
		return false;
	}
	return true;
}

/* The current packet is done: completion action, then retire it. */
static bool complete(struct vaccel_core_queue *q)
{
	if (!complete_action(q, &q->pkt))
		return false;
	vaccel_os_packet(q->os, &q->pkt, q->read_index, q->depth, true);
	q->have_pkt = false;
	q->packets++;
	if (!q->depth)
		q->read_index++;
	return true;
}

/*
 * Leave every EXEC whose packets have all completed. fr->next counts the
 * packets fetched, so an EXEC whose last packet is still in flight (a
 * blocked WAIT, a DELAY or a COPY taking several steps) must stay entered:
 * leaving early would run its completion action before that packet's, and
 * the packet's own retirement would then advance the ring a second time.
 */
static bool finish_execs(struct vaccel_core_queue *q)
{
	while (q->depth && !q->have_pkt) {
		struct vaccel_core_frame *fr = &q->frames[q->depth - 1];

		if (fr->next < fr->pkt.operand[1])
			return true;
		if (!complete_action(q, &fr->pkt))
			return false;
		vaccel_os_packet(q->os, &fr->pkt, q->read_index, q->depth - 1, true);
		q->depth--;
		q->packets++;
		if (!q->depth)
			q->read_index++;	/* the EXEC's one ring slot */
	}
	return true;
}

/**
 * vaccel_core_run() - execute a queue's packets
 * @q: the queue
 * @write_index: packets committed to the ring by the doorbell, at most
 *	@q->read_index + @q->ring_size (the caller checks)
 * @budget: most steps to take; each step is bounded (one packet, one
 *	chunk of VACCEL_CORE_CHUNK bytes, or one DELAY step)
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
		if (!finish_execs(q))
			return VACCEL_CORE_FAULT;
		if (!q->have_pkt) {
			st = fetch(q, write_index);
			if (st == STEP_NEXT)
				return VACCEL_CORE_IDLE;
			if (st == STEP_FAULT)
				return VACCEL_CORE_FAULT;
		}
		st = step(q);
		switch (st) {
		case STEP_DONE:
			if (!complete(q))
				return VACCEL_CORE_FAULT;
			break;
		case STEP_BLOCKED:
			return VACCEL_CORE_BLOCKED;
		case STEP_FAULT:
			return VACCEL_CORE_FAULT;
		case STEP_MORE:
		case STEP_NEXT:
			break;
		}
	}
	if (!finish_execs(q))
		return VACCEL_CORE_FAULT;
	return VACCEL_CORE_BUDGET;
}
