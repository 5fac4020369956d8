/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_QUEUE_H
#define ACCEL_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include <drm/vaccel_accel.h>

#ifdef __cplusplus
extern "C" {
#endif

struct accel_device;
struct accel_event;

/**
 * DOC: queues
 *
 * A &struct accel_queue is a user-mode queue: a ring of packets in device
 * memory, a doorbell and a control page, run in order by one of the
 * device's engines. Submission is the liburing pattern: take slots with
 * accel_queue_get_packet(), fill them with the accel_prep_*() helpers of
 * <accel/packet.h>, then publish the whole batch with one doorbell store
 * in accel_queue_submit(). The library implements the doorbell protocol
 * (packet bodies, store-release of the write index, a full fence, then a
 * KICK only if the engine said it sleeps) so that programs do not. On the
 * in-process device the fence is the engines' (membarrier() before they
 * sleep) and a submit has none: Documentation/queues.rst.
 *
 * The library adds a *progress mark* to the ring every @progress_interval
 * packets: a SIGNAL packet that raises the queue's timeline signal with
 * the ring index. A submitter that finds the ring full spins briefly,
 * then sleeps in the kernel until the mark that frees the slots it needs:
 * it never overwrites a slot the device has not run and never busy-spins
 * unboundedly. Events recorded on a queue (accel_queue_record()) use the
 * same timeline.
 *
 * A queue is single-producer: one thread submits at a time (callers
 * serialise, or use one queue per thread). Reading its state
 * (accel_queue_completed(), accel_queue_status(), accel_queue_describe())
 * is safe from any thread.
 *
 * The fast path (accel_queue_get_packet(), accel_queue_submit() while the
 * engine is awake) makes no syscall, reads no clock and reads nothing of
 * the control page but need_wakeup (the doorbell protocol's). So a submit
 * does not notice a fault it has not been told about: packets published
 * to a stopped queue are never run, and the next accel_queue_reserve(),
 * accel_queue_sync(), accel_queue_status() or wait on the queue's events
 * returns -EIO.
 */
struct accel_queue;

/**
 * struct accel_queue_params - how to create a queue
 * @size: sizeof(struct accel_queue_params) as the program knows it (the
 *	rule of <accel/accel.h>: at least the 1.0 size; a larger structure's
 *	fields unknown to this library must be zero)
 * @ring_size: packets in the ring, a power of two from 4 to 65536;
 *	0 means 1024
 * @priority: DRM_VACCEL_QUEUE_PRIORITY_*; above NORMAL needs CAP_SYS_NICE
 * @progress_interval: packets between progress marks; 0 means a quarter
 *	of the ring
 * @flags: zero
 * @reserved: zero
 */
struct accel_queue_params {
	uint32_t size;
	uint32_t ring_size;
	uint32_t priority;
	uint32_t progress_interval;
	uint32_t flags;
	uint32_t reserved;
};

/* Size in the first stable release (1.0): the smallest a caller passes. */
#define ACCEL_QUEUE_PARAMS_SIZE_1_0	24

/**
 * accel_queue_create() - create a queue
 * @dev: the device
 * @params: NULL for the defaults
 * @out: the queue
 *
 * Return: 0; -EINVAL for bad parameters (@params->size below the 1.0
 * size included); -E2BIG for a @params->size above 4096, or a larger
 * structure with non-zero fields this library does not know; -EPERM for
 * a priority above NORMAL without CAP_SYS_NICE; -ENOSPC when the context holds its
 * maximum of queues; -ENOMEM; -ENODEV. A few syscalls.
 */
int accel_queue_create(struct accel_device *dev, const struct accel_queue_params *params,
		       struct accel_queue **out);

/**
 * accel_queue_destroy() - destroy a queue
 * @q: the queue, or NULL
 *
 * Work still in the ring is abandoned at the packet in progress.
 */
void accel_queue_destroy(struct accel_queue *q);

/** accel_queue_device() - the queue's device. No syscall. */
struct accel_device *accel_queue_device(const struct accel_queue *q);

/**
 * accel_queue_get_packet() - take the next free ring slot
 * @q: the queue
 *
 * The slot is zeroed. It belongs to the caller until accel_queue_submit()
 * publishes it with the others taken since the last submit. (Slots are
 * zeroed 64 at a time, by the call that finds none zeroed ahead: that
 * call writes 4 KiB, the others only take the slot.)
 *
 * After accel_queue_reserve(q, n, ...) returned 0, the next @n calls
 * return slots, even if the device is removed meanwhile (the ring is then
 * anonymous memory and accel_queue_submit() returns -ENODEV): code that
 * reserves first need not check for NULL.
 *
 * Return: the slot; NULL when the ring is full (see
 * accel_queue_reserve()), or in a child process after fork() (the queue is
 * the parent's). No syscall.
 */
struct drm_vaccel_packet *accel_queue_get_packet(struct accel_queue *q);

/**
 * accel_queue_reserve() - wait until @n slots are free
 * @q: the queue
 * @n: slots, at most the ring's capacity for user packets
 * @timeout_ns: relative timeout, ACCEL_FOREVER, or 0 not to wait
 *
 * Spins for the spin budget, then sleeps until the progress mark that
 * frees enough slots.
 *
 * Return: 0; -EAGAIN (@timeout_ns 0) or -ETIMEDOUT when the ring stays
 * full; -EIO if the queue faulted (a fault of another queue does not end
 * the wait); -EINVAL if @n can never fit; -ENODEV; -ECHILD in a child
 * process after fork(). May sleep.
 */
int accel_queue_reserve(struct accel_queue *q, unsigned int n, int64_t timeout_ns);

/**
 * accel_queue_submit() - publish the packets taken since the last submit
 * @q: the queue
 *
 * One doorbell store for the whole batch; a KICK syscall only if the
 * engine sleeps.
 *
 * Return: the number of packets published (0 if none were taken); -EIO if
 * the queue faulted: known before, nothing is published; found on the
 * slow path (the engine asked for a KICK), the packets went to the stopped
 * queue and never run. A fault not seen yet is reported by the next wait
 * (see above). -ENODEV; -ECHILD. No syscall on the hot path.
 */
int accel_queue_submit(struct accel_queue *q);

/**
 * accel_queue_submit_packets() - copy packets into the ring and publish
 * @q: the queue
 * @pkts: @n packets
 * @n: how many; any number (batches of what fits)
 * @timeout_ns: how long to wait for room, as accel_queue_reserve()
 *	(for each batch)
 * @submitted: if not NULL, set to the number of @pkts published, also on
 *	failure: pkts[0 .. *submitted) are on the ring, the rest is not, so
 *	a caller can go on from there
 *
 * Packets the caller took with accel_queue_get_packet() before are
 * published first (and not counted in @submitted). Each batch is
 * published whole or not at all: the room is reserved before it is
 * copied.
 *
 * Return: 0 once all are published, or as accel_queue_reserve() and
 * accel_queue_submit(). May sleep.
 */
int accel_queue_submit_packets(struct accel_queue *q, const struct drm_vaccel_packet *pkts,
			       unsigned int n, int64_t timeout_ns, unsigned int *submitted);

/**
 * accel_queue_record() - an event that is done when the queue gets here
 * @q: the queue
 * @ev: the event: the queue's timeline signal and its next value
 *
 * Takes a slot (a SIGNAL packet with IRQ); publish it with
 * accel_queue_submit().
 *
 * The event belongs to @q's fault domain: a host wait on it fails with
 * -EIO when @q faults (and only then, not on another queue's fault).
 *
 * Return: 0, -EAGAIN if the ring is full, -EIO, -ENODEV, -ECHILD. No
 * syscall.
 */
int accel_queue_record(struct accel_queue *q, struct accel_event *ev);

/**
 * accel_queue_wait_event() - make the queue wait for an event
 * @q: the queue
 * @ev: an event of any device (a signal of another device is imported
 *	into @q's device once, and cached)
 *
 * Takes a slot (a WAIT packet); publish it with accel_queue_submit().
 *
 * Return: 0, -EAGAIN if the ring is full, -EIO, -ENOMEM, -ENODEV. No
 * syscall, unless the signal's page must be imported.
 */
int accel_queue_wait_event(struct accel_queue *q, const struct accel_event *ev);

/**
 * accel_queue_sync() - wait until everything submitted has completed
 * @q: the queue
 * @timeout_ns: relative timeout, or ACCEL_FOREVER
 *
 * Return: 0, -ETIMEDOUT, -EIO if the queue faulted (only this queue's
 * fault counts), -ENODEV, -ECHILD. May sleep.
 */
int accel_queue_sync(struct accel_queue *q, int64_t timeout_ns);

/** accel_queue_submitted() - packets published so far (marks included). */
uint64_t accel_queue_submitted(const struct accel_queue *q);

/** accel_queue_completed() - packets the device completed. No syscall. */
uint64_t accel_queue_completed(const struct accel_queue *q);

/**
 * struct accel_queue_fault - why a queue stopped
 * @code: DRM_VACCEL_FAULT_*
 * @depth: EXEC nesting of the faulting packet, 0 on the ring
 * @ring_index: ring index of the faulting packet (or of its EXEC)
 * @addr: device address involved, or 0
 * @exec_index: the packet's index in the innermost EXEC body (@depth > 0)
 * @binding: 1 + the binding table entry @addr came from, or 0
 * @reserved: zero
 * @packet: a copy of the ring packet at @ring_index, as submitted
 *
 * May grow at its end: accel_queue_status() takes its size.
 */
struct accel_queue_fault {
	uint32_t code;
	uint32_t depth;
	uint64_t ring_index;
	uint64_t addr;
	uint64_t exec_index;
	uint32_t binding;
	uint32_t reserved;
	struct drm_vaccel_packet packet;
};

#define ACCEL_QUEUE_FAULT_SIZE_1_0	104

/**
 * accel_queue_status() - is the queue running
 * @q: the queue
 * @fault: if not NULL and the queue faulted, its record
 * @fault_size: sizeof(struct accel_queue_fault) as the program knows it
 *	(at least the 1.0 size, at most 4096; past the fields this library
 *	knows, @fault is zeroed); not checked when @fault is NULL
 *
 * Return: 0 if running; -EIO if faulted; -ENODEV after removal; -ECHILD in
 * a forked child; -EINVAL for an @fault_size below the 1.0 size, -E2BIG
 * above 4096 (@fault is then not written). No syscall.
 */
int accel_queue_status(const struct accel_queue *q, struct accel_queue_fault *fault,
		       size_t fault_size);

/**
 * accel_queue_describe() - a readable report of the queue
 * @q: the queue
 * @buf: filled with NUL-terminated text, truncated to @len
 * @len: bytes of @buf
 *
 * The queue (device, id, ring indices), its fault if any (fault name,
 * ring index, EXEC depth and body index, address and binding, the decoded
 * packet) and its flight recorder: the last operations the library did on
 * it (submits, marks, events, waits, kicks), oldest first.
 *
 * Return: the length the full text needs (as snprintf()). No syscall.
 */
int accel_queue_describe(const struct accel_queue *q, char *buf, size_t len);

/**
 * accel_packet_describe() - decode a packet into text
 * @pkt: the packet
 * @buf: filled with NUL-terminated text, truncated to @len
 * @len: bytes of @buf
 *
 * Return: the length the full text needs. No syscall.
 */
int accel_packet_describe(const struct drm_vaccel_packet *pkt, char *buf, size_t len);

/**
 * accel_fault_name() - name of a fault code
 * @code: DRM_VACCEL_FAULT_*
 *
 * Return: a static string ("UNMAPPED", ...; "?" for an unknown code).
 */
const char *accel_fault_name(uint32_t code);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_QUEUE_H */
