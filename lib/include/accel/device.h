/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_DEVICE_H
#define ACCEL_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: devices
 *
 * A &struct accel_device is one open vaccel device: its own file (its own
 * device VA space, buffers and queues), a device-VA allocator, a signal
 * slot allocator and a table of imported buffers. It may be used from any
 * thread. Closing it destroys everything still open on it.
 *
 * fork(): a device, and everything on it, belongs to the process that
 * opened it. In a child, every call on it or its objects fails with
 * -ECHILD (pointer returns are NULL, reads 0) without reaching the device,
 * except the destroy and close calls, which free the child's memory and
 * its copies of the mappings and of the file only: no ioctl, so nothing of
 * the parent's is torn down or written. The child opens devices of its
 * own. The check is one load and compare per call.
 */
struct accel_device;

#define ACCEL_PATH_MAX	64

/**
 * struct accel_device_info - one vaccel device found by accel_device_list()
 * @path: its node, /dev/accel/accelN
 * @minor: N
 * @id: the vaccel device id (the N of /sys/bus/vaccel/devices/vaccelN)
 *
 * May grow at its end: accel_device_list() takes the element size.
 */
struct accel_device_info {
	char path[ACCEL_PATH_MAX];
	unsigned int minor;
	unsigned int id;
};

/* Sizes in the first stable release (1.0): the smallest a caller passes. */
#define ACCEL_DEVICE_INFO_SIZE_1_0	72
#define ACCEL_DEVICE_PROPS_SIZE_1_0	88
#define ACCEL_LINK_SIZE_1_0		24

/**
 * accel_device_list() - find the vaccel devices
 * @list: filled with up to @max devices, ordered by minor number; may be
 *	NULL when @max is 0
 * @max: entries @list holds
 * @elem_size: sizeof(struct accel_device_info): the size of one entry of
 *	@list as the program knows it (at least the 1.0 size, at most 4096);
 *	past the fields this library knows, each entry is zeroed. Not
 *	checked when @max is 0.
 *
 * Walks /sys/class/accel and keeps the nodes whose DRM driver
 * (drmGetVersion()) is vaccel; other accel drivers are skipped. Opens each
 * node briefly (one open and one ioctl per node).
 *
 * Return: the number of vaccel devices (which may exceed @max), or
 * -errno: -ENOENT if /sys/class/accel does not exist; -EINVAL for a NULL
 * @list with @max > 0, or an @elem_size below the 1.0 size; -E2BIG for an
 * @elem_size above 4096. On failure @list is not written.
 */
int accel_device_list(struct accel_device_info *list, unsigned int max, size_t elem_size);

/**
 * accel_device_open() - open a vaccel device by its place in the list
 * @index: index into accel_device_list()'s order
 * @out: the device
 *
 * Return: 0; -ENODEV if there is no such device; -EPROTO if the module's
 * uAPI is older than ACCEL_MIN_UAPI_VERSION (the log says which versions);
 * -EACCES if the node cannot be opened (see the udev rule: group render);
 * -ENOMEM. A few syscalls.
 */
int accel_device_open(unsigned int index, struct accel_device **out);

/**
 * accel_device_open_path() - open a vaccel device by node
 * @path: /dev/accel/accelN
 * @out: the device
 *
 * Return: 0, or as accel_device_open(); -ENODEV for a node of another
 * driver or a file that is not a DRM node.
 */
int accel_device_open_path(const char *path, struct accel_device **out);

/**
 * accel_device_open_fd() - use an open vaccel file
 * @fd: a file of a vaccel node (opened by the caller, received over a
 *	socket, ...); not consumed: the device works on a duplicate
 *	(F_DUPFD_CLOEXEC), as libdrm_amdgpu does, so the caller may close
 *	@fd at any time
 * @out: the device
 *
 * The duplicate shares the open file, so the device is the same context
 * (VA space, handles, queues) as @fd's; objects made through raw ioctls on
 * @fd are not known to the library.
 *
 * Return: 0; -EBADF; -ENODEV if @fd is not a vaccel node (another driver,
 * or not a DRM file at all); -EPROTO; -EMFILE; -ENOMEM. A few syscalls.
 */
int accel_device_open_fd(int fd, struct accel_device **out);

/**
 * accel_device_close() - close a device
 * @dev: the device, or NULL
 *
 * Destroys the queues, signals and buffers still open on it, in that
 * order, then closes its file. In a child after fork(): frees memory only
 * (see above).
 */
void accel_device_close(struct accel_device *dev);

/**
 * accel_device_fd() - the device's file descriptor
 * @dev: the device
 *
 * For raw uAPI calls next to the library's; it stays owned by @dev.
 *
 * Return: the fd.
 */
int accel_device_fd(const struct accel_device *dev);

/**
 * struct accel_device_props - what a device is
 * @size: in, sizeof(struct accel_device_props) as the program knows it:
 *	the library writes the fields it knows up to @size and zeroes the
 *	rest (so that the structure can grow); @size itself is not written
 * @id: vaccel device id
 * @engines: execution engines
 * @uapi_version: the module's DRM_VACCEL_PARAM_UAPI_VERSION
 * @capabilities: DRM_VACCEL_CAP_* bits
 * @memory_capacity: bytes of device memory
 * @va_start: first device address a context may use
 * @va_size: bytes of the device VA window
 * @link_bandwidth_mbps: bandwidth of its links to other devices, MB/s;
 *	0 is unthrottled
 * @link_latency_ns: latency of those links
 * @poll_budget_ns: how long an idle engine polls before it sleeps
 * @max_buffers: buffer handles a context may hold
 * @max_mappings: device mappings a context may hold
 * @max_queues: queues a context may hold
 * @reserved: zero
 */
struct accel_device_props {
	uint32_t size;
	uint32_t id;
	uint32_t engines;
	uint32_t uapi_version;
	uint64_t capabilities;
	uint64_t memory_capacity;
	uint64_t va_start;
	uint64_t va_size;
	uint64_t link_bandwidth_mbps;
	uint64_t link_latency_ns;
	uint64_t poll_budget_ns;
	uint32_t max_buffers;
	uint32_t max_mappings;
	uint32_t max_queues;
	uint32_t reserved;
};

/**
 * accel_device_query() - the device's properties
 * @dev: the device
 * @props: filled up to @props->size
 *
 * Return: 0; -EINVAL if @props->size is smaller than the first version
 * of the structure (1.0); -E2BIG if it is above 4096. On failure @props
 * is not written. No syscall (read at open).
 */
int accel_device_query(const struct accel_device *dev, struct accel_device_props *props);

/**
 * accel_device_memory_used() - device memory allocated now, all contexts
 * @dev: the device
 * @bytes: the answer
 *
 * Return: 0, -ENODEV after removal. One syscall.
 */
int accel_device_memory_used(struct accel_device *dev, uint64_t *bytes);

/**
 * struct accel_link - how one device reaches another's memory
 * @bandwidth_mbps: MB/s, 0 for unthrottled
 * @latency_ns: per access
 * @local: the same device: no link involved
 *
 * May grow at its end: accel_device_topology() takes the element size.
 */
struct accel_link {
	uint64_t bandwidth_mbps;
	uint64_t latency_ns;
	bool local;
};

/**
 * accel_device_topology() - the link matrix of some open devices
 * @devs: @n open devices
 * @n: how many
 * @matrix: @n * @n entries; entry [i * n + j] is what device i pays to
 *	access memory of device j (the accessing device's link settings)
 * @elem_size: sizeof(struct accel_link): the size of one entry of @matrix
 *	as the program knows it (at least the 1.0 size, at most 4096); past
 *	the fields this library knows, each entry is zeroed. Not checked
 *	when @n is 0.
 *
 * Return: 0; -EINVAL for a NULL device or @matrix, or an @elem_size below
 * the 1.0 size; -E2BIG for an @elem_size above 4096. On failure @matrix is
 * not written. No syscall.
 */
int accel_device_topology(struct accel_device *const *devs, unsigned int n,
			  struct accel_link *matrix, size_t elem_size);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_DEVICE_H */
