/* SPDX-License-Identifier: MIT */
/*
 * vaccel: software-modelled compute accelerators under DRM accel.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef __UAPI_VACCEL_ACCEL_H__
#define __UAPI_VACCEL_ACCEL_H__

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * DOC: vaccel uAPI
 *
 * Every structure is made of fixed-size fields, is a multiple of 8 bytes
 * and has explicit padding. Padding and reserved fields must be zero and
 * unknown flags or parameters are rejected with -EINVAL, so that they can
 * be given a meaning later without breaking old binaries.
 *
 * All ioctls are available to every client that can open the accel node;
 * none of them needs DRM authentication. Structures may grow at their end
 * in later versions: the DRM core zero-fills what an older binary does not
 * pass, and a zero always means what it meant before.
 */

/**
 * VACCEL_UAPI_VERSION - version of this interface
 *
 * Bumped when ioctls, parameters, packet types or fields are added. Read
 * it back with &DRM_VACCEL_PARAM_UAPI_VERSION (it is also the DRM minor
 * number; the DRM major stays 1). Version 3 added SIGNAL_EVENTFD, the
 * MATMUL packet, EXEC binding tables and nested epochs, the EXEC depth,
 * body index and binding of faults, and &struct drm_vaccel_signal_write
 * flags.
 */
#define VACCEL_UAPI_VERSION		3

#define DRM_VACCEL_GET_PARAM		0x00
#define DRM_VACCEL_BO_CREATE		0x01
#define DRM_VACCEL_BO_INFO		0x02
#define DRM_VACCEL_BO_SEAL		0x03
#define DRM_VACCEL_VM_BIND		0x04
#define DRM_VACCEL_VM_UNBIND		0x05
#define DRM_VACCEL_QUEUE_CREATE		0x06
#define DRM_VACCEL_QUEUE_DESTROY	0x07
#define DRM_VACCEL_QUEUE_QUERY		0x08
#define DRM_VACCEL_KICK			0x09
#define DRM_VACCEL_WAIT_SIGNALS		0x0a
#define DRM_VACCEL_SIGNAL_WRITE		0x0b
#define DRM_VACCEL_SIGNAL_EVENTFD	0x0c

#define DRM_IOCTL_VACCEL_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VACCEL_GET_PARAM, struct drm_vaccel_get_param)
#define DRM_IOCTL_VACCEL_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VACCEL_BO_CREATE, struct drm_vaccel_bo_create)
#define DRM_IOCTL_VACCEL_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VACCEL_BO_INFO, struct drm_vaccel_bo_info)
#define DRM_IOCTL_VACCEL_BO_SEAL \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VACCEL_BO_SEAL, struct drm_vaccel_bo_seal)
#define DRM_IOCTL_VACCEL_VM_BIND \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VACCEL_VM_BIND, struct drm_vaccel_vm_bind)
#define DRM_IOCTL_VACCEL_VM_UNBIND \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VACCEL_VM_UNBIND, struct drm_vaccel_vm_unbind)
#define DRM_IOCTL_VACCEL_QUEUE_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VACCEL_QUEUE_CREATE, struct drm_vaccel_queue_create)
#define DRM_IOCTL_VACCEL_QUEUE_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VACCEL_QUEUE_DESTROY, struct drm_vaccel_queue_destroy)
#define DRM_IOCTL_VACCEL_QUEUE_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VACCEL_QUEUE_QUERY, struct drm_vaccel_queue_query)
#define DRM_IOCTL_VACCEL_KICK \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VACCEL_KICK, struct drm_vaccel_kick)
#define DRM_IOCTL_VACCEL_WAIT_SIGNALS \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VACCEL_WAIT_SIGNALS, struct drm_vaccel_wait_signals)
#define DRM_IOCTL_VACCEL_SIGNAL_WRITE \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VACCEL_SIGNAL_WRITE, struct drm_vaccel_signal_write)
#define DRM_IOCTL_VACCEL_SIGNAL_EVENTFD \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VACCEL_SIGNAL_EVENTFD, struct drm_vaccel_signal_eventfd)

/*
 * Parameters for &struct drm_vaccel_get_param.param.
 */

/** DRM_VACCEL_PARAM_UAPI_VERSION: &VACCEL_UAPI_VERSION of the running module */
#define DRM_VACCEL_PARAM_UAPI_VERSION		0
/** DRM_VACCEL_PARAM_DEVICE_ID: the id given at creation (the N of vaccelN) */
#define DRM_VACCEL_PARAM_DEVICE_ID		1
/** DRM_VACCEL_PARAM_NUM_ENGINES: number of execution engines */
#define DRM_VACCEL_PARAM_NUM_ENGINES		2
/** DRM_VACCEL_PARAM_MEMORY_CAPACITY: device memory capacity in bytes */
#define DRM_VACCEL_PARAM_MEMORY_CAPACITY	3
/** DRM_VACCEL_PARAM_VA_START: first byte of a context's device VA window */
#define DRM_VACCEL_PARAM_VA_START		4
/** DRM_VACCEL_PARAM_VA_SIZE: size in bytes of a context's device VA window */
#define DRM_VACCEL_PARAM_VA_SIZE		5
/** DRM_VACCEL_PARAM_CAPABILITIES: bitmask of DRM_VACCEL_CAP_* */
#define DRM_VACCEL_PARAM_CAPABILITIES		6
/** DRM_VACCEL_PARAM_LINK_BANDWIDTH: peer link bandwidth, MB/s; 0 is unthrottled */
#define DRM_VACCEL_PARAM_LINK_BANDWIDTH		7
/** DRM_VACCEL_PARAM_LINK_LATENCY: peer link latency in nanoseconds */
#define DRM_VACCEL_PARAM_LINK_LATENCY		8
/** DRM_VACCEL_PARAM_POLL_BUDGET: engine doorbell poll budget in nanoseconds */
#define DRM_VACCEL_PARAM_POLL_BUDGET		9
/** DRM_VACCEL_PARAM_MEMORY_USED: bytes of the capacity now allocated */
#define DRM_VACCEL_PARAM_MEMORY_USED		10
/** DRM_VACCEL_PARAM_MAX_BOS: buffer handles one context (file) may hold */
#define DRM_VACCEL_PARAM_MAX_BOS		11
/** DRM_VACCEL_PARAM_MAX_MAPPINGS: VM mappings one context may hold */
#define DRM_VACCEL_PARAM_MAX_MAPPINGS		12
/** DRM_VACCEL_PARAM_MAX_QUEUES: queues one context may hold */
#define DRM_VACCEL_PARAM_MAX_QUEUES		13

/*
 * Capability bits reported by &DRM_VACCEL_PARAM_CAPABILITIES. A bit is
 * defined here when the feature it names is implemented; user space must
 * ignore bits it does not know.
 */

/**
 * DRM_VACCEL_CAP_HOTPLUG: devices can be created and removed at run time
 * through /sys/bus/vaccel/new_device and del_device.
 */
#define DRM_VACCEL_CAP_HOTPLUG			0x1ULL
/**
 * DRM_VACCEL_CAP_EXEC_BINDINGS: EXEC takes a binding table and packets in
 * its buffer may address table entries (&DRM_VACCEL_BINDING_ADDR); nested
 * EXECs may take epochs relative to the running one
 * (&DRM_VACCEL_EXEC_F_EPOCH). uAPI 3.
 */
#define DRM_VACCEL_CAP_EXEC_BINDINGS		0x2ULL
/** DRM_VACCEL_CAP_MATMUL: the &DRM_VACCEL_PKT_MATMUL packet. uAPI 3. */
#define DRM_VACCEL_CAP_MATMUL			0x4ULL
/** DRM_VACCEL_CAP_SIGNAL_EVENTFD: &DRM_IOCTL_VACCEL_SIGNAL_EVENTFD. uAPI 3. */
#define DRM_VACCEL_CAP_SIGNAL_EVENTFD		0x8ULL
/**
 * DRM_VACCEL_CAP_ENGINE_SPLIT: large COPY, FILL and REDUCE packets are
 * split across idle engines of the device (ordering and completion are
 * those of one packet). uAPI 3.
 */
#define DRM_VACCEL_CAP_ENGINE_SPLIT		0x10ULL

/**
 * struct drm_vaccel_get_param - query a device property
 *
 * Errors: -EINVAL for an unknown @param or a non-zero @pad, -ENODEV once the
 * device has been removed.
 */
struct drm_vaccel_get_param {
	/** @param: in, one of DRM_VACCEL_PARAM_* */
	__u32 param;
	/** @pad: must be zero */
	__u32 pad;
	/** @value: out, the value of @param */
	__u64 value;
};

/*
 * Buffer object flags for &struct drm_vaccel_bo_create.flags.
 */

/**
 * DRM_VACCEL_BO_PERSISTENT: pages are pinned for the object's whole life and
 * charged to the creator's RLIMIT_MEMLOCK (unless it has CAP_IPC_LOCK); the
 * object can be sealed with &DRM_IOCTL_VACCEL_BO_SEAL.
 */
#define DRM_VACCEL_BO_PERSISTENT	0x1
/**
 * DRM_VACCEL_BO_SIGNAL: a signal buffer: an array of 8-byte signal words,
 * pinned, mapped into the kernel and charged like a persistent buffer.
 * Cannot be combined with &DRM_VACCEL_BO_PERSISTENT.
 */
#define DRM_VACCEL_BO_SIGNAL		0x2

/**
 * struct drm_vaccel_bo_create - create a buffer object
 *
 * The object is zero-filled. Its size is @size rounded up to the page size
 * and is charged against the device's memory capacity until the object is
 * freed (last handle closed, last mapping and dma-buf gone).
 *
 * Persistent and signal objects are charged to the caller's RLIMIT_MEMLOCK
 * (VmPin) until they are freed; the charge is back when the call that
 * frees the object returns.
 *
 * Errors: -EINVAL for a zero @size or unknown or conflicting @flags;
 * -E2BIG if the size exceeds the device's whole capacity;
 * -ENOMEM if the capacity left or RLIMIT_MEMLOCK (pinned flags) does not
 * allow it; -ENFILE when the system-wide file limit is reached (every
 * object is backed by a shmem file); -ENOSPC when the context holds
 * &DRM_VACCEL_PARAM_MAX_BOS handles (imported handles count too: PRIME
 * import fails with -ENOSPC likewise); -ENODEV after unplug.
 */
struct drm_vaccel_bo_create {
	/** @size: in, bytes; out, the rounded-up size */
	__u64 size;
	/** @flags: in, DRM_VACCEL_BO_* */
	__u32 flags;
	/** @handle: out, GEM handle */
	__u32 handle;
	/** @mmap_offset: out, offset to mmap() the object through this file */
	__u64 mmap_offset;
};

/* Status bits of &struct drm_vaccel_bo_info.status. */

/** DRM_VACCEL_BO_STATUS_SEALED: the object is sealed (read-only for everyone) */
#define DRM_VACCEL_BO_STATUS_SEALED	0x1
/** DRM_VACCEL_BO_STATUS_IMPORTED: the handle refers to an imported dma-buf */
#define DRM_VACCEL_BO_STATUS_IMPORTED	0x2

/**
 * struct drm_vaccel_bo_info - describe a buffer object
 *
 * For an imported object, @flags are the exporter's flags when the exporter
 * is a vaccel device and 0 otherwise.
 *
 * Errors: -ENOENT for an unknown handle, -EINVAL for a non-zero @pad.
 */
struct drm_vaccel_bo_info {
	/** @handle: in */
	__u32 handle;
	/** @flags: out, the DRM_VACCEL_BO_* flags it was created with */
	__u32 flags;
	/** @size: out, bytes */
	__u64 size;
	/** @mmap_offset: out */
	__u64 mmap_offset;
	/** @status: out, DRM_VACCEL_BO_STATUS_* */
	__u32 status;
	/** @pad: must be zero */
	__u32 pad;
};

/**
 * struct drm_vaccel_bo_seal - seal a persistent buffer object
 *
 * After sealing, nobody can write the object: writable mmap() fails with
 * -EACCES and a write-enabled VM_BIND fails with -EACCES, on every device
 * and in every process it is shared with; other drivers importing its
 * dma-buf cannot map it for writing (-EACCES) or get a kernel mapping of
 * it. Sealing is permanent; sealing a sealed object succeeds and changes
 * nothing.
 *
 * Errors: -ENOENT for an unknown handle; -EINVAL for non-zero @flags or an
 * object that is not &DRM_VACCEL_BO_PERSISTENT (imported objects included);
 * -EBUSY while something could write the object: a writable host mapping,
 * a writable device mapping, another driver's attachment to a writable
 * dma-buf of it, or another driver's kernel mapping of it; -ENODEV after
 * unplug.
 */
struct drm_vaccel_bo_seal {
	/** @handle: in */
	__u32 handle;
	/** @flags: must be zero */
	__u32 flags;
};

/* Access flags for &struct drm_vaccel_vm_bind.flags. */

/** DRM_VACCEL_VM_READ: the device may read the range */
#define DRM_VACCEL_VM_READ		0x1
/** DRM_VACCEL_VM_WRITE: the device may write the range */
#define DRM_VACCEL_VM_WRITE		0x2

/**
 * struct drm_vaccel_vm_bind - map part of a buffer into the context's VA space
 *
 * Maps bytes [@bo_offset, @bo_offset + @size) of the object at device
 * address @va of this file's context. Those pages (and only those) stay
 * pinned while mapped, charged to the caller's RLIMIT_MEMLOCK (VmPin)
 * unless the object is persistent or signal (charged at creation) or
 * another driver's dma-buf (pinned by its exporter).
 *
 * Errors: -ENOENT for an unknown handle; -EINVAL for unknown or no access
 * @flags, @va, @bo_offset or @size not page-aligned, a zero @size, or a
 * range past the end of the object; -EOVERFLOW if @va + @size or
 * @bo_offset + @size wraps; -ERANGE if the range is not inside the VA
 * window (&DRM_VACCEL_PARAM_VA_START, &DRM_VACCEL_PARAM_VA_SIZE); -EBUSY if
 * it overlaps a mapping; -EACCES for write access to a sealed object or to
 * an import of a read-only dma-buf; -ENOMEM when RLIMIT_MEMLOCK does not
 * allow the pages (or out of memory); -ENOSPC when the context holds
 * &DRM_VACCEL_PARAM_MAX_MAPPINGS mappings; -ENODEV after unplug.
 */
struct drm_vaccel_vm_bind {
	/** @handle: in, the object to map */
	__u32 handle;
	/** @flags: in, DRM_VACCEL_VM_READ and/or DRM_VACCEL_VM_WRITE */
	__u32 flags;
	/** @bo_offset: in, first byte of the object to map */
	__u64 bo_offset;
	/** @va: in, device address of the mapping */
	__u64 va;
	/** @size: in, bytes */
	__u64 size;
};

/**
 * struct drm_vaccel_vm_unbind - remove a mapping
 *
 * @va and @size must name exactly one mapping made by VM_BIND. The range is
 * unmapped at once; device work already using it keeps the pages until it
 * finishes.
 *
 * Errors: -EINVAL for non-zero @flags or @pad; -ENOENT if no mapping
 * starts at @va; -EINVAL if @size differs from that mapping's size.
 */
struct drm_vaccel_vm_unbind {
	/** @va: in */
	__u64 va;
	/** @size: in */
	__u64 size;
	/** @flags: must be zero */
	__u32 flags;
	/** @pad: must be zero */
	__u32 pad;
};

/*
 * Command packets. A queue's ring is an array of 64-byte packets in device
 * memory; the device copies each packet before it looks at it, and any
 * invalid packet puts the queue into the error state (see
 * DRM_VACCEL_FAULT_*). Unused operands, flags and reserved bits must be 0.
 */

#define DRM_VACCEL_PKT_NOP		0
/*
 * COPY: operand[0] src, [1] dst, [2] bytes; ranges must not overlap
 */
#define DRM_VACCEL_PKT_COPY		1
/*
 * FILL: operand[0] dst, [1] bytes, [2] 64-bit pattern; arg: pattern width
 * in bytes (1, 2, 4 or 8), bytes and dst a multiple of it
 */
#define DRM_VACCEL_PKT_FILL		2
/*
 * REDUCE: dst[i] = src0[i] op src1[i]; operand[0] src0, [1] src1, [2] dst,
 * [3] element count; arg: DRM_VACCEL_DTYPE_* | DRM_VACCEL_REDOP_* << 8
 */
#define DRM_VACCEL_PKT_REDUCE		3
/*
 * SIGNAL: operand[0] signal address, [1] value; arg: DRM_VACCEL_SIGNAL_*;
 * flags: DRM_VACCEL_SIGNAL_F_EPOCH adds the running EXEC's epoch to value
 */
#define DRM_VACCEL_PKT_SIGNAL		4
/*
 * WAIT: block the queue until (signal & mask) cond value; operand[0]
 * signal address, [1] value, [2] mask (0: all bits), [3] timeout in ns
 * from when the wait starts (0: none); arg: DRM_VACCEL_WAIT_*; flags:
 * DRM_VACCEL_WAIT_F_EPOCH adds the running EXEC's epoch to the value.
 * With a mask, GE compares in the mask's width (see DRM_VACCEL_WAIT_GE).
 */
#define DRM_VACCEL_PKT_WAIT		5
/*
 * EXEC: run operand[1] packets of a sealed buffer at operand[0] with epoch
 * operand[2]; takes one ring slot however many packets it runs.
 * uAPI 3: operand[3] is the device address of a binding table of arg
 * 8-byte addresses (arg 0: no table, operand[3] must be 0; at most
 * DRM_VACCEL_EXEC_MAX_BINDINGS), copied once when the EXEC starts; packets
 * of the buffer address entry i as DRM_VACCEL_BINDING_ADDR(i, offset). An
 * EXEC without a table runs its body with the enclosing EXEC's table.
 * flags: DRM_VACCEL_EXEC_F_EPOCH makes operand[2] relative to the running
 * EXEC's epoch (nested EXECs only).
 */
#define DRM_VACCEL_PKT_EXEC		6
/*
 * TIMESTAMP: store CLOCK_MONOTONIC ns at operand[0] (8-byte aligned)
 */
#define DRM_VACCEL_PKT_TIMESTAMP	7
/*
 * DELAY: the queue stays busy for operand[0] ns (at most 1 s), measured
 * on the clock from when the packet starts; the engine runs its other
 * queues meanwhile (a modelled kernel running on the queue's engine slot)
 */
#define DRM_VACCEL_PKT_DELAY		8
/*
 * MATMUL (uAPI 3): C = A x B, or C += A x B with
 * DRM_VACCEL_MATMUL_F_ACCUMULATE; operand[0] is the device address of a
 * &struct drm_vaccel_matmul (64-byte aligned); arg: input dtype
 * DRM_VACCEL_DTYPE_F32, _F16 or _BF16; C is always f32 and products are
 * accumulated in f32. Runs in bounded steps of rows of C.
 */
#define DRM_VACCEL_PKT_MATMUL		9

/* Flags of the EXEC packet (uAPI 3) */
#define DRM_VACCEL_EXEC_F_EPOCH		0x1
/* Most entries of an EXEC binding table */
#define DRM_VACCEL_EXEC_MAX_BINDINGS	16

/*
 * Binding addresses (uAPI 3). Inside an EXEC body, any device address a
 * packet takes (operands that are addresses, the completion address, and
 * the addresses of a MATMUL descriptor) may instead name entry @i of the
 * running EXEC's binding table plus a byte offset below 2^48: the device
 * uses table[i] + offset and then checks the result like any address. A
 * binding address outside an EXEC body, an index past the table, or a sum
 * that wraps faults the queue with DRM_VACCEL_FAULT_BINDING. Device
 * addresses are below 2^48, so bit 63 never appears in a plain address.
 */
#define DRM_VACCEL_BINDING_FLAG		0x8000000000000000ULL
#define DRM_VACCEL_BINDING_ADDR(i, offset) \
	(DRM_VACCEL_BINDING_FLAG | ((__u64)(i) & 0xff) << 48 | \
	 ((__u64)(offset) & 0xffffffffffffULL))
#define DRM_VACCEL_BINDING_INDEX(addr)	((__u32)((addr) >> 48) & 0xff)
#define DRM_VACCEL_BINDING_OFFSET(addr)	((addr) & 0xffffffffffffULL)

/* Flags of the MATMUL packet (uAPI 3) */
#define DRM_VACCEL_MATMUL_F_ACCUMULATE	0x1
/* Largest m, n and k of a MATMUL */
#define DRM_VACCEL_MATMUL_MAX_DIM	4096

/**
 * struct drm_vaccel_matmul - operands of a MATMUL packet, in device memory
 *
 * Row-major: element (r, c) of A is at @a + (r * @lda + c) * size of the
 * input dtype; B likewise with @ldb; C is f32 with @ldc. A is @m x @k, B is
 * @k x @n, C is @m x @n. Each matrix (from its first to its last element)
 * must lie in one mapping; C must not overlap A or B. Read once when the
 * packet starts (copy, then validate).
 */
struct drm_vaccel_matmul {
	/** @a: device address of A (or a binding address) */
	__u64 a;
	/** @b: device address of B (or a binding address) */
	__u64 b;
	/** @c: device address of C (or a binding address) */
	__u64 c;
	/** @m: rows of A and C, 1 to DRM_VACCEL_MATMUL_MAX_DIM */
	__u32 m;
	/** @n: columns of B and C, 1 to DRM_VACCEL_MATMUL_MAX_DIM */
	__u32 n;
	/** @k: columns of A, rows of B, 1 to DRM_VACCEL_MATMUL_MAX_DIM */
	__u32 k;
	/** @lda: elements between rows of A, at least @k */
	__u32 lda;
	/** @ldb: elements between rows of B, at least @n */
	__u32 ldb;
	/** @ldc: elements between rows of C, at least @n */
	__u32 ldc;
	/** @reserved: must be zero */
	__u64 reserved[2];
};

/*
 * Header bits, &struct drm_vaccel_packet.header
 */
#define DRM_VACCEL_PKT_TYPE_MASK	0x00ff
/*
 * BARRIER: the packet starts after every earlier packet of the queue
 * completed. vaccel never overlaps the packets of one queue (a packet
 * split across engines completes before the next one starts), so this
 * always holds; the bit is accepted for runtimes written for hardware
 * that overlaps, and changes nothing here.
 */
#define DRM_VACCEL_PKT_BARRIER		0x0100
/*
 * wake host waiters of the completion signal
 */
#define DRM_VACCEL_PKT_IRQ		0x0200
/*
 * Memory scopes, DRM_VACCEL_SCOPE_*. vaccel always acts with SYSTEM scope
 * on both sides: a packet sees everything made visible before it started
 * (acquire), and its effects are visible to the host and to every device
 * before its completion action and its read index (release). A weaker
 * scope is accepted (it is a promise the program makes, which can only
 * allow less); the value 3 is rejected.
 */
#define DRM_VACCEL_PKT_ACQUIRE_SHIFT	10
#define DRM_VACCEL_PKT_RELEASE_SHIFT	12
#define DRM_VACCEL_PKT_RESERVED		0xc000

#define DRM_VACCEL_SCOPE_NONE		0
#define DRM_VACCEL_SCOPE_DEVICE		1
#define DRM_VACCEL_SCOPE_SYSTEM		2

/*
 * Signal operations: SIGNAL packets, completion actions, SIGNAL_WRITE
 */
#define DRM_VACCEL_SIGNAL_NONE		0	/* completion actions only */
#define DRM_VACCEL_SIGNAL_SET		1
#define DRM_VACCEL_SIGNAL_ADD		2
#define DRM_VACCEL_SIGNAL_MAX		3	/* if (s64)(value - signal) > 0 */
#define DRM_VACCEL_SIGNAL_F_EPOCH	0x1

/*
 * WAIT conditions; GE is wrap-safe: (s64)(signal - value) >= 0. With a
 * mask, both sides are masked and GE compares in the mask's width: the
 * mask must be one contiguous run of bits (else the packet is BAD_PACKET
 * and WAIT_SIGNALS fails with -EINVAL), and GE holds when the difference,
 * taken in that many bits, has its top bit clear.
 */
#define DRM_VACCEL_WAIT_GE		0
#define DRM_VACCEL_WAIT_EQ		1
#define DRM_VACCEL_WAIT_NE		2
#define DRM_VACCEL_WAIT_F_EPOCH		0x1

/*
 * REDUCE element types and operations
 */
#define DRM_VACCEL_DTYPE_F32		0
#define DRM_VACCEL_DTYPE_F16		1
#define DRM_VACCEL_DTYPE_BF16		2
#define DRM_VACCEL_DTYPE_I32		3
#define DRM_VACCEL_DTYPE_I64		4
#define DRM_VACCEL_DTYPE_U8		5
#define DRM_VACCEL_REDOP_SUM		0
#define DRM_VACCEL_REDOP_PROD		1
#define DRM_VACCEL_REDOP_MIN		2
#define DRM_VACCEL_REDOP_MAX		3

/**
 * struct drm_vaccel_packet - one device command, 64 bytes, little-endian
 *
 * The completion action, if @completion_op is not DRM_VACCEL_SIGNAL_NONE,
 * applies @completion_op with @completion_value to the signal at
 * @completion_addr after the packet's effects are visible.
 */
struct drm_vaccel_packet {
	/** @header: DRM_VACCEL_PKT_* type and header bits */
	__u16 header;
	/** @arg: type-specific small argument */
	__u16 arg;
	/** @flags: type-specific flags */
	__u32 flags;
	/** @operand: type-specific operands */
	__u64 operand[4];
	/** @completion_addr: signal address for the completion action */
	__u64 completion_addr;
	/** @completion_value: value for the completion action */
	__u64 completion_value;
	/** @completion_op: DRM_VACCEL_SIGNAL_*, NONE for no action */
	__u32 completion_op;
	/** @reserved: must be zero */
	__u32 reserved;
};

/*
 * Queue fault codes: why a queue stopped in the error state. The failing
 * packet's index and the faulting device address are recorded with it.
 */
#define DRM_VACCEL_FAULT_NONE		0
#define DRM_VACCEL_FAULT_BAD_PACKET	1	/* unknown type, reserved bits, bad operands */
#define DRM_VACCEL_FAULT_UNMAPPED	2	/* address not mapped */
#define DRM_VACCEL_FAULT_ACCESS		3	/* mapping lacks read or write access */
#define DRM_VACCEL_FAULT_ALIGNMENT	4	/* misaligned signal, element or pattern */
#define DRM_VACCEL_FAULT_NOT_SIGNAL	5	/* signal address not in a signal buffer */
#define DRM_VACCEL_FAULT_NOT_SEALED	6	/* EXEC of a buffer that is not sealed */
#define DRM_VACCEL_FAULT_EXEC_DEPTH	7	/* EXEC nested too deep */
#define DRM_VACCEL_FAULT_WAIT_TIMEOUT	8	/* WAIT timed out */
#define DRM_VACCEL_FAULT_DOORBELL	9	/* doorbell more than a ring ahead */
#define DRM_VACCEL_FAULT_INJECTED	10	/* fault injection */
#define DRM_VACCEL_FAULT_RESET		11	/* device reset (debugfs "reset") */
#define DRM_VACCEL_FAULT_BINDING	12	/* bad binding address (uAPI 3) */
#define DRM_VACCEL_FAULT_REMOVED	13	/* the device was removed (uAPI 3) */

/*
 * Queues. A queue runs the packets of its ring in order on one of the
 * device's engines. User space submits without a system call:
 *
 *   1. write the packet into ring[index % ring_size];
 *   2. store-release the new write index (index + 1) into the doorbell page;
 *   3. full memory barrier;
 *   4. if the control page's need_wakeup is set, call DRM_IOCTL_VACCEL_KICK.
 *
 * The engine polls doorbells for the device's poll budget; before it
 * sleeps it sets need_wakeup, issues a full barrier and checks every
 * doorbell again, so either it sees the new index or the submitter sees
 * need_wakeup: no submission is ever left waiting.
 */

/* Ring sizes, in packets (powers of two). */
#define DRM_VACCEL_RING_MIN		2
#define DRM_VACCEL_RING_MAX		65536

/* Queue priorities, &struct drm_vaccel_queue_create.priority */
#define DRM_VACCEL_QUEUE_PRIORITY_NORMAL	0
#define DRM_VACCEL_QUEUE_PRIORITY_MEDIUM	1
#define DRM_VACCEL_QUEUE_PRIORITY_HIGH		2

/* Queue states, &struct drm_vaccel_queue_control.state */
#define DRM_VACCEL_QUEUE_RUNNING	0
#define DRM_VACCEL_QUEUE_ERROR		1

/**
 * struct drm_vaccel_queue_create - create a queue
 *
 * The ring is @ring_size packets at device address @ring_va, which must lie
 * in one readable mapping of this context for the queue's whole life. Map the
 * doorbell page (read-write) at @doorbell_offset and the control page
 * (read-only) at @control_offset of this file, one page each.
 *
 * The offsets are below 2^32, so 32-bit processes can map the pages.
 *
 * Errors: -EINVAL for non-zero @flags or @pad, a @ring_size that is not a
 * power of two in [DRM_VACCEL_RING_MIN, DRM_VACCEL_RING_MAX], a @priority
 * above DRM_VACCEL_QUEUE_PRIORITY_HIGH or a misaligned @ring_va; -EPERM for
 * a priority above NORMAL without CAP_SYS_NICE; -ENXIO if the ring is not
 * inside one mapping (uAPI 2 returned -EFAULT); -EACCES if that mapping is
 * not readable; -ENOSPC when the context holds DRM_VACCEL_PARAM_MAX_QUEUES.
 */
struct drm_vaccel_queue_create {
	/** @ring_va: in, device address of the ring, 64-byte aligned */
	__u64 ring_va;
	/** @ring_size: in, packets in the ring */
	__u32 ring_size;
	/**
	 * @priority: in, DRM_VACCEL_QUEUE_PRIORITY_*. Queues sharing an
	 * engine take turns of up to 64 steps (packets or bounded chunks of
	 * one) and 2 ms; a pass over the engine's queues gives a queue 1 turn
	 * at NORMAL, 4 at MEDIUM and 16 at HIGH. No queue starves: every pass
	 * gives each at least one turn. MEDIUM and HIGH need CAP_SYS_NICE.
	 */
	__u32 priority;
	/** @flags: must be zero */
	__u32 flags;
	/** @queue_id: out */
	__u32 queue_id;
	/** @doorbell_offset: out, mmap() offset of the doorbell page */
	__u64 doorbell_offset;
	/** @control_offset: out, mmap() offset of the control page */
	__u64 control_offset;
};

/**
 * struct drm_vaccel_queue_destroy - stop and destroy a queue
 *
 * Waits for the packet being executed to finish its current step. The
 * doorbell and control pages stay valid in existing mappings.
 *
 * Errors: -EINVAL for non-zero @pad; -ENOENT for an unknown queue.
 */
struct drm_vaccel_queue_destroy {
	/** @queue_id: in */
	__u32 queue_id;
	/** @pad: must be zero */
	__u32 pad;
};

/**
 * struct drm_vaccel_queue_control - the control page, read-only to users
 */
struct drm_vaccel_queue_control {
	/** @read_index: ring packets completed */
	__u64 read_index;
	/** @state: DRM_VACCEL_QUEUE_RUNNING or _ERROR */
	__u32 state;
	/** @fault: DRM_VACCEL_FAULT_* once in the error state */
	__u32 fault;
	/** @fault_index: ring index of the faulting packet */
	__u64 fault_index;
	/** @fault_addr: device address involved in the fault */
	__u64 fault_addr;
	/** @need_wakeup: the engine sleeps: submitters must KICK */
	__u32 need_wakeup;
	/** @pad: zero */
	__u32 pad;
	/**
	 * @fault_depth: EXEC nesting of the faulting packet: 0 for a ring
	 * packet, 1 inside the body of a ring EXEC, ... (uAPI 3)
	 */
	__u32 fault_depth;
	/**
	 * @fault_binding: 1 + the binding table index the faulting address
	 * was resolved through, 0 if none (uAPI 3)
	 */
	__u32 fault_binding;
	/**
	 * @fault_exec_index: index of the faulting packet in the innermost
	 * EXEC body, if @fault_depth > 0 (uAPI 3)
	 */
	__u64 fault_exec_index;
};

/**
 * struct drm_vaccel_queue_query - read a queue's state
 *
 * The fault fields are the control page's fault record, reported only
 * when @state is DRM_VACCEL_QUEUE_ERROR; while @state is RUNNING they are
 * zero, also while a fault is being recorded (the state publishes the
 * record, as on the control page).
 *
 * Errors: -EINVAL for non-zero @pad; -ENOENT for an unknown queue.
 */
struct drm_vaccel_queue_query {
	/** @queue_id: in */
	__u32 queue_id;
	/** @state: out, DRM_VACCEL_QUEUE_* */
	__u32 state;
	/** @read_index: out, ring packets completed */
	__u64 read_index;
	/** @write_index: out, the last doorbell value the device accepted */
	__u64 write_index;
	/** @fault: out, DRM_VACCEL_FAULT_* */
	__u32 fault;
	/** @pad: must be zero */
	__u32 pad;
	/** @fault_index: out */
	__u64 fault_index;
	/** @fault_addr: out */
	__u64 fault_addr;
	/** @fault_depth: out, see &drm_vaccel_queue_control.fault_depth (uAPI 3) */
	__u32 fault_depth;
	/** @fault_binding: out, see &drm_vaccel_queue_control (uAPI 3) */
	__u32 fault_binding;
	/** @fault_exec_index: out, see &drm_vaccel_queue_control (uAPI 3) */
	__u64 fault_exec_index;
};

/**
 * struct drm_vaccel_kick - wake the engine of a queue
 *
 * Errors: -EINVAL for non-zero @pad; -ENOENT for an unknown queue.
 */
struct drm_vaccel_kick {
	/** @queue_id: in */
	__u32 queue_id;
	/** @pad: must be zero */
	__u32 pad;
};

/*
 * Host access to signals. A signal is an 8-byte word at an 8-byte aligned
 * offset of a DRM_VACCEL_BO_SIGNAL object (local or imported from another
 * vaccel device). Values are sequence numbers: there is no reset.
 */

/* Most conditions one WAIT_SIGNALS call takes. */
#define DRM_VACCEL_WAIT_MAX_ITEMS	64

/* Flags of &struct drm_vaccel_wait_signals */
/* wait until every condition holds, not just one */
#define DRM_VACCEL_WAIT_ALL		0x1
/* do not fail with -EIO when a queue of this context is in error */
#define DRM_VACCEL_WAIT_IGNORE_FAULTS	0x2

/**
 * struct drm_vaccel_signal_cond - one condition of WAIT_SIGNALS
 */
struct drm_vaccel_signal_cond {
	/** @handle: a signal object */
	__u32 handle;
	/** @cond: DRM_VACCEL_WAIT_GE, _EQ or _NE */
	__u32 cond;
	/** @offset: byte offset of the signal in the object, 8-byte aligned */
	__u64 offset;
	/** @value: the value compared with */
	__u64 value;
	/** @mask: bits compared; 0 means all */
	__u64 mask;
};

/**
 * struct drm_vaccel_wait_signals - sleep until signals reach values
 *
 * Returns 0 as soon as one condition holds (all of them with
 * DRM_VACCEL_WAIT_ALL), setting @first to the lowest index that holds.
 * The timeout is absolute, so an interrupted call restarts with the same
 * arguments transparently (or fails with -EINTR for handlers without
 * SA_RESTART).
 *
 * Waiters are woken by SIGNAL_WRITE and by device signal updates of
 * packets with DRM_VACCEL_PKT_IRQ; a plain store through a host mapping
 * wakes nobody.
 *
 * Errors: -EINVAL for a @count of 0 or above DRM_VACCEL_WAIT_MAX_ITEMS,
 * unknown @flags, non-zero @pad, a condition with an unknown @cond or with
 * GE and a mask that is not one run of bits, a
 * misaligned or out-of-range offset, or an object that is not a signal
 * object; -EFAULT for an unreadable @conds; -ENOENT for an unknown handle;
 * -ETIME when @timeout_ns passes first; -EIO when a queue of this context
 * is (or gets) in the error state, unless DRM_VACCEL_WAIT_IGNORE_FAULTS;
 * -ENODEV when the device is removed, also during the wait.
 */
struct drm_vaccel_wait_signals {
	/** @conds: in, pointer to @count &struct drm_vaccel_signal_cond */
	__u64 conds;
	/** @count: in */
	__u32 count;
	/** @flags: in, DRM_VACCEL_WAIT_ALL, DRM_VACCEL_WAIT_IGNORE_FAULTS */
	__u32 flags;
	/** @timeout_ns: in, absolute CLOCK_MONOTONIC deadline in ns */
	__s64 timeout_ns;
	/** @first: out, index of the first condition that holds */
	__u32 first;
	/** @pad: must be zero */
	__u32 pad;
};

/**
 * struct drm_vaccel_signal_write - update a signal from the host
 *
 * Applies @op atomically and wakes the device queues and host waiters
 * waiting on that signal.
 *
 * Errors: -EINVAL for an @op other than SET, ADD or MAX, non-zero @flags
 * or @pad, a misaligned or out-of-range @offset, or an object that is not
 * a signal object; -ENOENT for an unknown handle; -EACCES for a signal
 * object imported read-only.
 */
struct drm_vaccel_signal_write {
	/** @handle: a signal object */
	__u32 handle;
	/** @op: DRM_VACCEL_SIGNAL_SET, _ADD or _MAX */
	__u32 op;
	/** @offset: byte offset of the signal, 8-byte aligned */
	__u64 offset;
	/** @value: operand */
	__u64 value;
	/** @flags: must be zero (uAPI 3; absent, hence zero, before) */
	__u32 flags;
	/** @pad: must be zero */
	__u32 pad;
};

/* Flags of &struct drm_vaccel_signal_eventfd */
/* cancel the arm @id instead of arming */
#define DRM_VACCEL_EVENTFD_CANCEL		0x1
/* do not fire when a queue of the context faults */
#define DRM_VACCEL_EVENTFD_IGNORE_FAULTS	0x2

/* Arms one context may hold at a time */
#define DRM_VACCEL_EVENTFD_MAX			256

/**
 * struct drm_vaccel_signal_eventfd - make an eventfd readable when a
 * signal condition holds (uAPI 3)
 *
 * Arms a one-shot wait on @cond: when it holds (at once if it holds
 * already), the device adds 1 to the eventfd @fd and forgets the arm, so
 * event loops and progress threads can wait for device work with poll,
 * epoll or io_uring. The arm is woken like WAIT_SIGNALS (SIGNAL_WRITE and
 * packets with DRM_VACCEL_PKT_IRQ). It also fires, so that nothing waits
 * for ever, when a queue of this context faults (unless
 * DRM_VACCEL_EVENTFD_IGNORE_FAULTS) and when the device is removed: after
 * a wake-up, check the condition (WAIT_SIGNALS with a past deadline tells
 * the reason). Arms end with the file. With DRM_VACCEL_EVENTFD_CANCEL,
 * only @id and @flags are read, and the arm @id is removed unfired.
 *
 * Errors: as WAIT_SIGNALS for @cond; -EBADF or -EINVAL if @fd is not an
 * eventfd; -EINVAL for unknown @flags; -ENOSPC when the
 * context holds DRM_VACCEL_EVENTFD_MAX arms, or when the signal's bucket
 * holds 512 waiters (Documentation/queues.rst); -ENOENT (CANCEL) if @id
 * fired or never existed.
 */
struct drm_vaccel_signal_eventfd {
	/** @cond: in, the condition, as for WAIT_SIGNALS */
	struct drm_vaccel_signal_cond cond;
	/** @fd: in, an eventfd */
	__s32 fd;
	/** @flags: in, DRM_VACCEL_EVENTFD_* */
	__u32 flags;
	/** @id: out, the arm's id; in, with DRM_VACCEL_EVENTFD_CANCEL */
	__u64 id;
};

#if defined(__cplusplus)
}
#endif

#endif /* __UAPI_VACCEL_ACCEL_H__ */
