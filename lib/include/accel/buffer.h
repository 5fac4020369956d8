/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_BUFFER_H
#define ACCEL_BUFFER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct accel_device;

/**
 * DOC: buffers
 *
 * A &struct accel_buffer is device memory with a device address: the
 * library allocates the address from the device's VA window (no fixed
 * addresses in user code) and binds the buffer there with the access it
 * needs. A buffer may be used from any thread; destroying it while device
 * work still uses it is safe for the kernel (the pages stay until that
 * work is done) but the program's own business. A freed buffer's device
 * address is not handed out again at once (the last 256 freed addresses
 * are held back), so such late device work faults the queue (UNMAPPED)
 * rather than writing the next buffer.
 *
 * The library is 64-bit only: a buffer may be larger than 4 GiB and is
 * mapped whole.
 */
struct accel_buffer;

/* pinned for its whole life; can be sealed and run by EXEC */
#define ACCEL_BUFFER_PERSISTENT		(1u << 0)
/* also mapped into the host at creation (accel_buffer_host()) */
#define ACCEL_BUFFER_HOST		(1u << 1)
/* the device may only read it (bound read-only) */
#define ACCEL_BUFFER_DEVICE_READ_ONLY	(1u << 2)

/**
 * accel_buffer_create() - allocate device memory
 * @dev: the device
 * @size: bytes, rounded up to the page size
 * @flags: ACCEL_BUFFER_*
 * @out: the buffer
 *
 * Creates the buffer object, allocates a device address (aligned to the
 * size's power of two, up to 2 MiB) and binds it.
 *
 * Return: 0; -EINVAL for a zero size or unknown flags; -E2BIG above the
 * device's capacity; -ENOMEM when the capacity left, RLIMIT_MEMLOCK (for
 * persistent buffers) or host memory is short; -ENOSPC when the VA window
 * or the context's handle or mapping limit is full; -ENODEV. Two or three
 * syscalls (create, bind, and mmap with ACCEL_BUFFER_HOST).
 */
int accel_buffer_create(struct accel_device *dev, uint64_t size, uint32_t flags,
			struct accel_buffer **out);

/**
 * accel_buffer_destroy() - free a buffer
 * @buf: the buffer, or NULL
 *
 * Unmaps it from the host, unbinds it and closes its handle (an imported
 * buffer is freed when its last import is destroyed; a buffer the library
 * itself still uses, such as one a task graph refers to, when the library
 * lets go of it). A few syscalls.
 */
void accel_buffer_destroy(struct accel_buffer *buf);

/** accel_buffer_va() - the buffer's device address. No syscall. */
uint64_t accel_buffer_va(const struct accel_buffer *buf);

/** accel_buffer_size() - its size in bytes (page-rounded). No syscall. */
uint64_t accel_buffer_size(const struct accel_buffer *buf);

/** accel_buffer_device() - the device it belongs to. No syscall. */
struct accel_device *accel_buffer_device(const struct accel_buffer *buf);

/**
 * accel_buffer_map() - map the buffer into the host
 * @buf: the buffer
 * @ptr: its host address
 *
 * The first call maps it (read-write, or read-only for a sealed buffer or
 * a read-only import); later calls return the same address.
 *
 * Return: 0, -ENOMEM (RLIMIT_MEMLOCK: a host mapping pins the buffer),
 * -EACCES, -ENODEV. At most one syscall.
 */
int accel_buffer_map(struct accel_buffer *buf, void **ptr);

/**
 * accel_buffer_host() - the host mapping, if there is one
 * @buf: the buffer
 *
 * Return: the address from accel_buffer_map() or ACCEL_BUFFER_HOST, or
 * NULL. No syscall.
 */
void *accel_buffer_host(const struct accel_buffer *buf);

/**
 * accel_buffer_seal() - make a persistent buffer read-only for everyone
 * @buf: an ACCEL_BUFFER_PERSISTENT buffer, written by the host
 *
 * Makes its host mapping read-only in place (the address the program
 * holds stays valid, writes through it fault), rebinds it read-only at
 * the same device address and seals it (DRM_IOCTL_VACCEL_BO_SEAL): from
 * then on EXEC can run it, and nobody can write it. If sealing fails,
 * nothing changed: the mapping is writable again at the same address and
 * the binding is as before.
 *
 * Return: 0; -EINVAL for a buffer that is not persistent; -EBUSY while
 * another writable mapping of it exists (an export, another process).
 * A few syscalls.
 */
int accel_buffer_seal(struct accel_buffer *buf);

/* export without write access: importers get a read-only buffer */
#define ACCEL_EXPORT_READ_ONLY		(1u << 0)

/**
 * accel_buffer_export() - share a buffer as a dma-buf
 * @buf: the buffer
 * @flags: ACCEL_EXPORT_*
 * @fd: a new dma-buf file descriptor (close-on-exec), owned by the caller
 *
 * Return: 0, -EINVAL for unknown flags, -EMFILE, -ENODEV. One syscall.
 */
int accel_buffer_export(struct accel_buffer *buf, uint32_t flags, int *fd);

/**
 * accel_buffer_import() - use a dma-buf as a buffer of @dev
 * @dev: the device
 * @fd: a dma-buf (from accel_buffer_export() of any vaccel device or
 *	process, or from another driver); not consumed
 * @flags: ACCEL_BUFFER_DEVICE_READ_ONLY, or 0 (a read-only dma-buf is
 *	always bound read-only)
 * @out: the buffer
 *
 * The import is bound at its own device address like a local buffer.
 * Importing the same dma-buf twice on one device returns the same buffer
 * with a second reference (GEM handles are per file).
 *
 * Return: 0, -EBADF, -EINVAL for unknown flags, -ENOSPC, -ENODEV. A few
 * syscalls.
 */
int accel_buffer_import(struct accel_device *dev, int fd, uint32_t flags,
			struct accel_buffer **out);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_BUFFER_H */
