// SPDX-License-Identifier: MIT
/*
 * Readable reports: packets, fault codes, and a queue with its fault
 * record and flight recorder.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *const fault_names[] = {
	[DRM_VACCEL_FAULT_NONE] = "NONE",
	[DRM_VACCEL_FAULT_BAD_PACKET] = "BAD_PACKET",
	[DRM_VACCEL_FAULT_UNMAPPED] = "UNMAPPED",
	[DRM_VACCEL_FAULT_ACCESS] = "ACCESS",
	[DRM_VACCEL_FAULT_ALIGNMENT] = "ALIGNMENT",
	[DRM_VACCEL_FAULT_NOT_SIGNAL] = "NOT_SIGNAL",
	[DRM_VACCEL_FAULT_NOT_SEALED] = "NOT_SEALED",
	[DRM_VACCEL_FAULT_EXEC_DEPTH] = "EXEC_DEPTH",
	[DRM_VACCEL_FAULT_WAIT_TIMEOUT] = "WAIT_TIMEOUT",
	[DRM_VACCEL_FAULT_DOORBELL] = "DOORBELL",
	[DRM_VACCEL_FAULT_INJECTED] = "INJECTED",
	[DRM_VACCEL_FAULT_RESET] = "RESET",
	[DRM_VACCEL_FAULT_BINDING] = "BINDING",
	[DRM_VACCEL_FAULT_REMOVED] = "REMOVED",
};

ACCEL_API const char *accel_fault_name(uint32_t code)
{
	if (code < sizeof(fault_names) / sizeof(fault_names[0]) && fault_names[code])
		return fault_names[code];
	return "?";
}

static const char *const pkt_names[] = {
	[DRM_VACCEL_PKT_NOP] = "NOP", [DRM_VACCEL_PKT_COPY] = "COPY",
	[DRM_VACCEL_PKT_FILL] = "FILL", [DRM_VACCEL_PKT_REDUCE] = "REDUCE",
	[DRM_VACCEL_PKT_SIGNAL] = "SIGNAL", [DRM_VACCEL_PKT_WAIT] = "WAIT",
	[DRM_VACCEL_PKT_EXEC] = "EXEC", [DRM_VACCEL_PKT_TIMESTAMP] = "TIMESTAMP",
	[DRM_VACCEL_PKT_DELAY] = "DELAY", [DRM_VACCEL_PKT_MATMUL] = "MATMUL",
};

static const char *const op_names[] = { "NONE", "SET", "ADD", "MAX" };
static const char *const cond_names[] = { "GE", "EQ", "NE" };
static const char *const dtype_names[] = { "F32", "F16", "BF16", "I32", "I64", "U8" };
static const char *const redop_names[] = { "SUM", "PROD", "MIN", "MAX" };

#define NAME(tab, i) ((i) < sizeof(tab) / sizeof((tab)[0]) && (tab)[i] ? (tab)[i] : "?")

/* snprintf() that appends to @buf at *@pos and keeps counting past @len */
static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*pos < len ? buf + *pos : NULL, *pos < len ? len - *pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos += (size_t)n;
}

#define X(v) ((unsigned long long)(v))

static void describe_packet(const struct drm_vaccel_packet *p, char *buf, size_t len, size_t *pos)
{
	unsigned int type = p->header & DRM_VACCEL_PKT_TYPE_MASK;
	const __u64 *o = p->operand;

	put(buf, len, pos, "%s", NAME(pkt_names, type));
	switch (type) {
	case DRM_VACCEL_PKT_NOP:
		break;
	case DRM_VACCEL_PKT_COPY:
		put(buf, len, pos, " dst=0x%llx src=0x%llx bytes=%llu", X(o[1]), X(o[0]), X(o[2]));
		break;
	case DRM_VACCEL_PKT_FILL:
		put(buf, len, pos, " dst=0x%llx bytes=%llu pattern=0x%llx width=%u", X(o[0]),
		    X(o[1]), X(o[2]), p->arg);
		break;
	case DRM_VACCEL_PKT_REDUCE:
		put(buf, len, pos, " dst=0x%llx a=0x%llx b=0x%llx count=%llu dtype=%s op=%s",
		    X(o[2]), X(o[0]), X(o[1]), X(o[3]), NAME(dtype_names, p->arg & 0xffu),
		    NAME(redop_names, (unsigned int)p->arg >> 8));
		break;
	case DRM_VACCEL_PKT_SIGNAL:
		put(buf, len, pos, " signal=0x%llx %s %llu", X(o[0]), NAME(op_names, p->arg),
		    X(o[1]));
		break;
	case DRM_VACCEL_PKT_WAIT:
		put(buf, len, pos, " signal=0x%llx %s %llu", X(o[0]), NAME(cond_names, p->arg),
		    X(o[1]));
		if (o[2])
			put(buf, len, pos, " mask=0x%llx", X(o[2]));
		if (o[3])
			put(buf, len, pos, " timeout=%lluns", X(o[3]));
		break;
	case DRM_VACCEL_PKT_EXEC:
		put(buf, len, pos, " body=0x%llx packets=%llu epoch=%llu", X(o[0]), X(o[1]),
		    X(o[2]));
		if (p->arg || o[3])
			put(buf, len, pos, " bindings=%u table=0x%llx", p->arg, X(o[3]));
		break;
	case DRM_VACCEL_PKT_TIMESTAMP:
		put(buf, len, pos, " dst=0x%llx", X(o[0]));
		break;
	case DRM_VACCEL_PKT_DELAY:
		put(buf, len, pos, " ns=%llu", X(o[0]));
		break;
	case DRM_VACCEL_PKT_MATMUL:
		put(buf, len, pos, " desc=0x%llx dtype=%s", X(o[0]), NAME(dtype_names, p->arg));
		break;
	default:
		put(buf, len, pos, "(type %u) arg=%u operands=0x%llx,0x%llx,0x%llx,0x%llx", type,
		    p->arg, X(o[0]), X(o[1]), X(o[2]), X(o[3]));
		break;
	}
	if (p->flags)
		put(buf, len, pos, " flags=0x%x", p->flags);
	if (p->header & DRM_VACCEL_PKT_BARRIER)
		put(buf, len, pos, " BARRIER");
	if (p->header & DRM_VACCEL_PKT_IRQ)
		put(buf, len, pos, " IRQ");
	if (p->header & (3u << DRM_VACCEL_PKT_ACQUIRE_SHIFT | 3u << DRM_VACCEL_PKT_RELEASE_SHIFT))
		put(buf, len, pos, " acquire=%u release=%u",
		    (p->header >> DRM_VACCEL_PKT_ACQUIRE_SHIFT) & 3u,
		    (p->header >> DRM_VACCEL_PKT_RELEASE_SHIFT) & 3u);
	if (p->header & DRM_VACCEL_PKT_RESERVED)
		put(buf, len, pos, " reserved-bits=0x%x", p->header & DRM_VACCEL_PKT_RESERVED);
	if (p->completion_op || p->completion_addr)
		put(buf, len, pos, " then %s 0x%llx %llu", NAME(op_names, p->completion_op),
		    X(p->completion_addr), X(p->completion_value));
	if (p->reserved)
		put(buf, len, pos, " reserved=0x%x", p->reserved);
}

ACCEL_API int accel_packet_describe(const struct drm_vaccel_packet *pkt, char *buf, size_t len)
{
	size_t pos = 0;

	if (buf && len)
		buf[0] = '\0';
	if (!pkt)
		return -EINVAL;
	describe_packet(pkt, buf, buf ? len : 0, &pos);
	return (int)pos;
}

static const char *const fr_names[] = {
	[FR_NONE] = "-", [FR_CREATE] = "create", [FR_SUBMIT] = "submit", [FR_KICK] = "kick",
	[FR_MARK] = "mark", [FR_RECORD] = "record", [FR_WAIT_EVENT] = "wait-event",
	[FR_RESERVE_SLEEP] = "reserve-sleep", [FR_SYNC] = "sync", [FR_SYNC_MARK] = "sync-mark",
	[FR_FAULT] = "fault", [FR_FULL] = "full",
};

const char *acc_fr_name(uint32_t op)
{
	return NAME(fr_names, op);
}

static const char *const fr_args[][2] = {
	[FR_CREATE] = { "queue", "ring" }, [FR_SUBMIT] = { "packets", "write" },
	[FR_KICK] = { "write", "" }, [FR_MARK] = { "index", "value" },
	[FR_RECORD] = { "index", "value" }, [FR_WAIT_EVENT] = { "signal", "value" },
	[FR_RESERVE_SLEEP] = { "need-read", "mark" }, [FR_SYNC] = { "need-read", "mark" },
	[FR_SYNC_MARK] = { "index", "value" }, [FR_FAULT] = { "code", "index" },
	[FR_FULL] = { "need-read", "read" },
};

/*
 * The value of the signal word at device address @va if it is one of the
 * device's signals (its own or imported), for a WAIT that has not passed.
 */
static bool signal_word_now(struct accel_device *dev, uint64_t va, uint64_t *v)
{
	struct list *l;
	bool found = false;

	acc_dev_lock(dev);
	for (l = dev->signals.next; l != &dev->signals; l = l->next) {
		const struct accel_signal *s = container_of(l, struct accel_signal, node);

		if (s->va == va && s->word) {
			*v = acc_load_acquire_u64(s->word);
			found = true;
			break;
		}
	}
	acc_dev_unlock(dev);
	return found;
}

/*
 * Where a running queue is: the packet at its read index, the one the
 * device works on or waits in (a WAIT with the value its word holds now).
 * Nothing if it completed all it published. Appends to @buf at *@pos.
 *
 * It reads the ring, which the queue's producer writes: only published
 * packets (below the doorbell, stored with release after them), and a
 * copy made while the read index moved is dropped (its slot may have been
 * taken again). From another thread than the producer's this is a race
 * in the C11 sense, detected and dropped here; accel_queue_describe(),
 * callable from any thread, does not read the ring.
 */
static void describe_where(const struct accel_queue *q, char *buf, size_t len, size_t *pos)
{
	uint64_t ri = accel_queue_completed(q), db, v;
	struct drm_vaccel_packet p;

	if (!q->ring || !q->doorbell)
		return;
	db = acc_load_acquire_u64(q->doorbell);
	if (ri >= db)
		return;
	memcpy(&p, (const void *)&q->ring[ri & q->mask], sizeof(p));
	atomic_thread_fence(memory_order_acquire);
	if (accel_queue_completed(q) != ri)
		return;	/* moved on: the copy may be of a reused slot */
	put(buf, len, pos, "  at packet %llu: ", X(ri));
	describe_packet(&p, buf, len, pos);
	if ((p.header & DRM_VACCEL_PKT_TYPE_MASK) == DRM_VACCEL_PKT_WAIT &&
	    signal_word_now(q->dev, p.operand[0], &v))
		put(buf, len, pos, " (the word holds %llu)", X(v));
	put(buf, len, pos, "\n");
}

int acc_queue_where(const struct accel_queue *q, char *buf, size_t len)
{
	size_t pos = 0;

	if (buf && len)
		buf[0] = '\0';
	if (!buf)
		len = 0;
	put(buf, len, &pos, "queue %u: completed %llu of %llu\n", q->id,
	    X(accel_queue_completed(q)), X(acc_load_relaxed_u64(&q->pi)));
	describe_where(q, buf, len, &pos);
	/* no newline at the end: a log line adds its own */
	if (pos < len)
		buf[pos - 1] = '\0';
	return (int)pos - 1;
}

ACCEL_API int accel_queue_describe(const struct accel_queue *q, char *buf, size_t len)
{
	struct acc_fr_rec fr[ACC_FR_SIZE + 1];
	uint64_t fr_wi, wi;
	int64_t t0 = 0;
	struct accel_queue_fault f;
	unsigned int i, n, next;
	size_t pos = 0;
	int st;

	if (buf && len)
		buf[0] = '\0';
	if (!q)
		return -EINVAL;
	if (!buf)
		len = 0;
	st = accel_queue_status(q, &f, sizeof(f));
	put(buf, len, &pos, "queue %u on %s (device %u): ring 0x%llx of %u, submitted %llu, "
	    "taken %llu, completed %llu, marks every %u on signal 0x%llx, %s\n", q->id,
	    q->dev->path, q->dev->props.id, X(q->ring_buf ? q->ring_buf->va : 0), q->size,
	    X(acc_load_relaxed_u64(&q->wi)), X(acc_load_relaxed_u64(&q->pi)),
	    X(accel_queue_completed(q)), q->interval,
	    X(q->timeline ? q->timeline->va : 0),
	    st == -EIO ? "FAULTED" : st == -ENODEV ? "device removed" :
	    st == -ECHILD ? "opened by the parent process" : "running");
	if (st == -EIO) {
		put(buf, len, &pos, "  fault %s (%u) at ring index %llu", accel_fault_name(f.code),
		    f.code, X(f.ring_index));
		if (f.depth)
			put(buf, len, &pos, ", EXEC depth %u body index %llu", f.depth,
			    X(f.exec_index));
		put(buf, len, &pos, ", address 0x%llx", X(f.addr));
		if (f.binding)
			put(buf, len, &pos, " (binding %u)", f.binding - 1);
		put(buf, len, &pos, "\n  packet %llu: ", X(f.ring_index));
		describe_packet(&f.packet, buf, len, &pos);
		put(buf, len, &pos, "\n");
	}
	/* the producer may be adding entries: take the complete ones */
	/* acquire: pairs with fr_flush_submits()' release: its entry is in fr_next */
	fr_wi = atomic_load_explicit(&q->fr_wi, memory_order_acquire);
	/* acquire: pairs with acc_fr_add()'s release of fr_next */
	next = atomic_load_explicit(&q->fr_next, memory_order_acquire);
	for (i = next - (next < ACC_FR_SIZE ? next : ACC_FR_SIZE), n = 0; i != next; i++)
		if (acc_fr_read(q, i, &fr[n])) {
			if (!t0)
				t0 = fr[n].t;
			n++;
		}
	/*
	 * The submits since the last entry, not recorded yet (see
	 * fr_flush_submits()); not shown if they were recorded meanwhile
	 * (fr_wi moved), so a run is never shown twice.
	 */
	wi = acc_load_relaxed_u64(&q->wi);
	if (wi > fr_wi && atomic_load_explicit(&q->fr_wi, memory_order_relaxed) == fr_wi)
		fr[n++] = (struct acc_fr_rec){ .op = FR_SUBMIT, .a = wi - fr_wi, .b = wi };
	put(buf, len, &pos, "  last %u operations (oldest first, ms since the first timed one; "
	    "fast-path ones are not timed):\n", n);
	for (i = 0; i < n; i++) {
		const struct acc_fr_rec *e = &fr[i];

		bool known = e->op < sizeof(fr_args) / sizeof(fr_args[0]) && fr_args[e->op][0];

		if (e->t)
			put(buf, len, &pos, "    %9.3f %-13s", (double)(e->t - t0) / 1e6,
			    acc_fr_name(e->op));
		else
			put(buf, len, &pos, "    %9s %-13s", "-", acc_fr_name(e->op));
		if (known)
			put(buf, len, &pos, e->op == FR_WAIT_EVENT ? " %s=0x%llx" : " %s=%llu",
			    fr_args[e->op][0], X(e->a));
		if (known && fr_args[e->op][1][0])
			put(buf, len, &pos, " %s=%llu", fr_args[e->op][1], X(e->b));
		put(buf, len, &pos, "\n");
	}
	return (int)pos;
}
