/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tracepoints: doorbell, kick, packet start and end, wait block and
 * unblock, fault. Enable under /sys/kernel/tracing/events/vaccel/ or with
 * trace-cmd/perf ("-e vaccel:*"); the trace exports to Perfetto.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vaccel

#if !defined(_VACCEL_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _VACCEL_TRACE_H

#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(vaccel_queue_event,
	TP_PROTO(u32 dev, u32 ctx, u32 queue, u64 index),
	TP_ARGS(dev, ctx, queue, index),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, ctx)
		__field(u32, queue)
		__field(u64, index)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->ctx = ctx;
		__entry->queue = queue;
		__entry->index = index;
	),
	TP_printk("dev=%u ctx=%u queue=%u index=%llu", __entry->dev,
		  __entry->ctx, __entry->queue, __entry->index)
);

/* the engine accepted a new doorbell value (index: the write index) */
DEFINE_EVENT(vaccel_queue_event, vaccel_doorbell,
	TP_PROTO(u32 dev, u32 ctx, u32 queue, u64 index),
	TP_ARGS(dev, ctx, queue, index));

/* KICK (index: the queue's read index) */
DEFINE_EVENT(vaccel_queue_event, vaccel_kick,
	TP_PROTO(u32 dev, u32 ctx, u32 queue, u64 index),
	TP_ARGS(dev, ctx, queue, index));

/* a queue blocked in, or left, a WAIT (index: the read index) */
DEFINE_EVENT(vaccel_queue_event, vaccel_wait_block,
	TP_PROTO(u32 dev, u32 ctx, u32 queue, u64 index),
	TP_ARGS(dev, ctx, queue, index));

DEFINE_EVENT(vaccel_queue_event, vaccel_wait_unblock,
	TP_PROTO(u32 dev, u32 ctx, u32 queue, u64 index),
	TP_ARGS(dev, ctx, queue, index));

DECLARE_EVENT_CLASS(vaccel_packet_event,
	TP_PROTO(u32 dev, u32 ctx, u32 queue, u64 index, u32 depth, u16 type),
	TP_ARGS(dev, ctx, queue, index, depth, type),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, ctx)
		__field(u32, queue)
		__field(u64, index)
		__field(u32, depth)
		__field(u16, type)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->ctx = ctx;
		__entry->queue = queue;
		__entry->index = index;
		__entry->depth = depth;
		__entry->type = type;
	),
	TP_printk("dev=%u ctx=%u queue=%u index=%llu depth=%u type=%u",
		  __entry->dev, __entry->ctx, __entry->queue, __entry->index,
		  __entry->depth, __entry->type)
);

/* a packet was fetched and validated / completed (index: ring index) */
DEFINE_EVENT(vaccel_packet_event, vaccel_packet_start,
	TP_PROTO(u32 dev, u32 ctx, u32 queue, u64 index, u32 depth, u16 type),
	TP_ARGS(dev, ctx, queue, index, depth, type));

DEFINE_EVENT(vaccel_packet_event, vaccel_packet_end,
	TP_PROTO(u32 dev, u32 ctx, u32 queue, u64 index, u32 depth, u16 type),
	TP_ARGS(dev, ctx, queue, index, depth, type));

TRACE_EVENT(vaccel_fault,
	TP_PROTO(u32 dev, u32 ctx, u32 queue, u32 code, u64 index, u64 addr),
	TP_ARGS(dev, ctx, queue, code, index, addr),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, ctx)
		__field(u32, queue)
		__field(u32, code)
		__field(u64, index)
		__field(u64, addr)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->ctx = ctx;
		__entry->queue = queue;
		__entry->code = code;
		__entry->index = index;
		__entry->addr = addr;
	),
	TP_printk("dev=%u ctx=%u queue=%u code=%u index=%llu addr=0x%llx",
		  __entry->dev, __entry->ctx, __entry->queue, __entry->code,
		  __entry->index, __entry->addr)
);

#endif /* _VACCEL_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE vaccel_trace
#include <trace/define_trace.h>
