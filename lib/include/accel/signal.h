/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_SIGNAL_H
#define ACCEL_SIGNAL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct accel_device;

/**
 * DOC: signals and events
 *
 * A &struct accel_signal is one 64-bit signal word, alone in its cache
 * line, in a signal page of its device; pages are added on demand and
 * slots are reused. Signal values only grow: a reused slot keeps counting
 * from its current value, and nothing ever resets one. An event is a
 * (signal, value) pair, done once the signal is at or after the value in
 * the wrap-safe order of WAIT GE. Host waits spin for a short budget
 * (ACCEL_SPIN_NS, default 20 us), then sleep in the kernel
 * (DRM_IOCTL_VACCEL_WAIT_SIGNALS). Signals and events may be used from any
 * thread.
 *
 * Fault domains: an event recorded on a queue (accel_queue_record())
 * belongs to that queue; a host wait on it fails with -EIO when that queue
 * faults, and a fault of any other queue (of the same device or not) does
 * not end it. An event of a signal no queue records on (accel_signal_create(),
 * accel_signal_import()) fails on no queue's fault: its wait ends when it
 * is done, times out, or the device goes.
 *
 * Async-signal-safe: accel_signal_read() and accel_event_done() (one
 * atomic load each).
 */
struct accel_signal;

/**
 * struct accel_event - done when @signal reaches @value
 * @signal: the signal
 * @value: the value
 */
struct accel_event {
	struct accel_signal *signal;
	uint64_t value;
};

/* Waits: no timeout (a fault or removal still ends them). */
#define ACCEL_FOREVER	(-1LL)

/**
 * accel_signal_create() - allocate a signal
 * @dev: the device whose memory holds it
 * @out: the signal
 *
 * Return: 0, -ENOMEM, -ENOSPC, -ENODEV. No syscall unless a new signal page
 * is needed.
 */
int accel_signal_create(struct accel_device *dev, struct accel_signal **out);

/**
 * accel_signal_destroy() - give a signal back
 * @sig: the signal, or NULL
 *
 * Its slot keeps its value; the next owner counts on from there.
 */
void accel_signal_destroy(struct accel_signal *sig);

/** accel_signal_va() - the signal's device address (on its device). */
uint64_t accel_signal_va(const struct accel_signal *sig);

/** accel_signal_device() - the device whose memory holds it. */
struct accel_device *accel_signal_device(const struct accel_signal *sig);

/**
 * accel_signal_read() - the signal's value now
 * @sig: the signal
 *
 * Return: the value (an acquire load: whatever the updater wrote before is
 * visible). No syscall.
 */
uint64_t accel_signal_read(const struct accel_signal *sig);

/**
 * accel_signal_write() - update a signal from the host
 * @sig: the signal
 * @op: DRM_VACCEL_SIGNAL_SET, _ADD or _MAX
 * @value: the operand
 *
 * Wakes the device queues and host waiters waiting on it.
 *
 * Return: 0, -EINVAL, -ENODEV. One syscall.
 */
int accel_signal_write(struct accel_signal *sig, uint32_t op, uint64_t value);

/**
 * accel_signal_next() - take the next value of a signal's timeline
 * @sig: the signal
 *
 * For producers that number their completions: returns one more than the
 * last value returned (starting from the signal's value when it was
 * created), atomically.
 *
 * Return: the value. No syscall.
 */
uint64_t accel_signal_next(struct accel_signal *sig);

/**
 * accel_event_done() - is an event done
 * @ev: the event
 *
 * Return: 1 if done, 0 if not. No syscall.
 */
int accel_event_done(const struct accel_event *ev);

/**
 * accel_event_signal() - complete an event from the host
 * @ev: the event: its signal is raised to its value (SIGNAL_WRITE MAX)
 *
 * Return: 0, -ENODEV. One syscall.
 */
int accel_event_signal(const struct accel_event *ev);

/**
 * accel_event_wait() - wait on the host for an event
 * @ev: the event
 * @timeout_ns: relative timeout, or ACCEL_FOREVER
 *
 * Spins for the spin budget, then sleeps in the kernel.
 *
 * Return: 0 when done; -ETIMEDOUT; -EIO if the queue that records the
 * event faulted first (see the fault domains above); -ENODEV; -ECHILD
 * (a signal of the parent process, after fork()); -EINTR is not returned
 * (interrupted sleeps restart). May sleep.
 */
int accel_event_wait(const struct accel_event *ev, int64_t timeout_ns);

/* accel_events_wait(): wait for every event, not just one */
#define ACCEL_WAIT_ALL		(1u << 0)

/**
 * accel_events_wait() - wait for one or all of several events
 * @evs: @n events, on any devices
 * @n: 1 to 64
 * @flags: ACCEL_WAIT_ALL, or 0 for any
 * @timeout_ns: relative timeout, or ACCEL_FOREVER
 * @first: if not NULL, the lowest index done (any) or 0 (all)
 *
 * Return: as accel_event_wait() (-EIO when the queue of one of the
 * events faulted); -EINVAL for a bad @n or flags. May sleep.
 */
int accel_events_wait(const struct accel_event *evs, unsigned int n, uint32_t flags,
		      int64_t timeout_ns, unsigned int *first);

/**
 * accel_event_fd() - a file descriptor that becomes readable when an event is done
 * @ev: the event
 * @fd: a new eventfd (close-on-exec, non-blocking), owned by the caller
 *
 * For poll(), epoll and io_uring loops: the device adds 1 to the eventfd
 * when @ev is done (at once if it is done already), and also, so that
 * nothing waits for ever, when the device is removed and when the queue
 * recording @ev faults. One-shot: after it fired, accel_event_wait(@ev, 0)
 * says why (0 done, -EIO its queue faulted, -ENODEV removed), and a new
 * accel_event_fd() arms again.
 *
 * It may also fire when another queue of the same device faults (the
 * kernel reports faults per device file): then accel_event_wait(@ev, 0)
 * returns -ETIMEDOUT, and the next accel_event_fd() of the event ignores
 * faults (it fires when the event is done or the device goes, not when its
 * queue faults later: use a timeout in the loop). For an event of a signal
 * no queue records on, faults never fire it.
 *
 * Return: 0; -EOPNOTSUPP if the module has no SIGNAL_EVENTFD (uAPI 2);
 * -ENOSPC when the device file holds its 256 unfired arms; -EMFILE;
 * -EINVAL; -ENODEV; -ECHILD. Two syscalls (eventfd, SIGNAL_EVENTFD).
 */
int accel_event_fd(const struct accel_event *ev, int *fd);

/**
 * accel_signal_export() - share a signal with another process or device
 * @sig: the signal
 * @fd: a new dma-buf file descriptor of the signal's page (close-on-exec),
 *	owned by the caller; pass it over a Unix socket (SCM_RIGHTS) or to a
 *	child
 * @offset: the signal's offset in that page, for accel_signal_import()
 *
 * The whole page (the signals next to @sig too) becomes readable and
 * writable by whoever holds the fd.
 *
 * Return: 0, -EINVAL, -EMFILE, -ENODEV, -ECHILD. One syscall.
 */
int accel_signal_export(const struct accel_signal *sig, int *fd, uint64_t *offset);

/**
 * accel_signal_import() - a signal shared by another process or device
 * @dev: the device that uses it (its queues wait on it, its host waits
 *	sleep on it)
 * @fd: a dma-buf from accel_signal_export(); not consumed
 * @offset: from accel_signal_export()
 * @out: the signal: the same 64-bit word as the exporter's, so a write or
 *	a device update on either side is seen by both, and waiters on both
 *	sides are woken
 *
 * accel_signal_next() counts on from the value at import.
 * accel_signal_destroy() drops this process's view (the page goes with
 * the last view of it); the word belongs to the exporter.
 *
 * Return: 0; -EBADF; -EINVAL if @fd is not a signal page or @offset is
 * not an 8-byte aligned offset inside it; -ENOSPC; -ENOMEM; -ENODEV;
 * -ECHILD. A few syscalls (import, BO_INFO, VM_BIND, mmap; one when the
 * page is imported already).
 */
int accel_signal_import(struct accel_device *dev, int fd, uint64_t offset,
			struct accel_signal **out);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_SIGNAL_H */
