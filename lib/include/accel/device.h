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
 * DOC: backends
 *
 * A device is either a node of the vaccel kernel module (/dev/accel/accelN)
 * or a device of the in-process backend ("sim:N": the same packet core run
 * by engine threads of this process, for machines that cannot load the
 * module; Documentation/sim.rst). The environment variable ACCEL_BACKEND
 * chooses what accel_device_list(), accel_device_open(),
 * accel_bus_new_device() and accel_bus_del_device() work on: unset or
 * "module", the module; "sim", the in-process device (its devices come from
 * ACCEL_SIM_DEVICES, "ID key=value ...; ID ...", default four devices 0-3
 * with the module's default settings); anything else fails with -EINVAL.
 * accel_device_open_path("sim:N") opens in-process device N whatever the
 * variable says. accel_device_backend() tells which backend a device is on.
 */

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
 * The module (ACCEL_BACKEND unset or "module"): walks /sys/class/accel and
 * keeps the nodes whose DRM driver (drmGetVersion()) is vaccel; other accel
 * drivers are skipped. Opens each node briefly (one open and one ioctl per
 * node). The in-process device (ACCEL_BACKEND=sim): its devices, ordered by
 * id, with @path "sim:ID" and @minor the id; no syscall.
 *
 * Return: the number of vaccel devices (which may exceed @max), or
 * -errno: -ENOENT if /sys/class/accel does not exist; -EINVAL for a NULL
 * @list with @max > 0, an @elem_size below the 1.0 size, an unknown
 * ACCEL_BACKEND or an ACCEL_SIM_DEVICES the in-process bus rejects (the
 * log says why); -E2BIG for an @elem_size above 4096; -ECHILD for the
 * in-process device in a child of a process that used it. On failure
 * @list is not written.
 */
int accel_device_list(struct accel_device_info *list, unsigned int max, size_t elem_size);

/**
 * accel_device_open() - open a vaccel device by its place in the list
 * @index: index into accel_device_list()'s order
 * @out: the device
 *
 * On the backend ACCEL_BACKEND chooses (see "backends").
 *
 * Return: 0; -ENODEV if there is no such device (with the module backend
 * and no module device, the log says how to get one: modprobe vaccel, or
 * ACCEL_BACKEND=sim); -EPROTO if the module's uAPI is older than
 * ACCEL_MIN_UAPI_VERSION (the log says which versions); -EACCES if the
 * node cannot be opened (see the udev rule: group render); -EINVAL for an
 * unknown ACCEL_BACKEND; -ENOMEM. A few syscalls.
 */
int accel_device_open(unsigned int index, struct accel_device **out);

/**
 * accel_device_open_path() - open a vaccel device by node
 * @path: /dev/accel/accelN, or "sim:N" for in-process device N (whatever
 *	ACCEL_BACKEND says)
 * @out: the device
 *
 * Return: 0, or as accel_device_open(); -ENODEV for a node of another
 * driver or a file that is not a DRM node, or an in-process device that
 * was removed; -ENOENT for a node or an in-process device that does not
 * exist.
 */
int accel_device_open_path(const char *path, struct accel_device **out);

/**
 * accel_device_open_fd() - use an open vaccel file
 * @fd: a file of a vaccel node (opened by the caller, received over a
 *	socket, ...) or of an in-process device (accel_device_fd() of one);
 *	not consumed: the device works on a duplicate
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

/**
 * accel_device_backend() - the backend a device runs on
 * @dev: an open device
 *
 * Return: "module" (the vaccel kernel module) or "sim" (the in-process
 * device), a static string; NULL for a NULL @dev. No syscall. (libaccel 1.1)
 */
const char *accel_device_backend(const struct accel_device *dev);

/**
 * accel_bus_new_device() - create a device
 * @spec: "ID [key=value ...]", the syntax of /sys/bus/vaccel/new_device:
 *	ID 0 to 1023; keys engines, memory, link_bw_mbps, link_latency_ns,
 *	poll_budget_ns with the ranges and defaults of Documentation/devices.rst
 *
 * On the backend ACCEL_BACKEND chooses: the module's bus (a write to
 * /sys/bus/vaccel/new_device, which needs root) or the in-process bus
 * (whose engine threads start with the device's first queue). The new
 * device is opened like the others (accel_device_list() order, or its
 * path).
 *
 * Return: 0; -EINVAL for a malformed id or word, an unknown or repeated
 * key, or a value that is not a number, out of range or misaligned (the
 * module logs the reason in the kernel log, the in-process bus in
 * libaccel's log), or an unknown ACCEL_BACKEND; -EEXIST if the id is
 * taken; -ENOENT (module) if the module is not loaded; -EACCES (module)
 * without root; -ENOMEM. One open and one write (module); no syscall (sim).
 * (libaccel 1.1)
 */
int accel_bus_new_device(const char *spec);

/**
 * accel_bus_del_device() - remove a device: a hot-unplug
 * @id: the device id
 *
 * Files still open on it (an open &struct accel_device) fail with
 * -ENODEV from then on, their queues stop with DRM_VACCEL_FAULT_REMOVED and
 * their waits wake; close them as usual. The id can be reused at once.
 *
 * Return: 0; -ENOENT if there is no such device; -EINVAL for an id above
 * 1023 or an unknown ACCEL_BACKEND; -EACCES (module) without root. One
 * open and one write (module); the in-process device waits for its engine
 * threads to end. (libaccel 1.1)
 */
int accel_bus_del_device(unsigned int id);

/**
 * accel_device_debug_write() - set a fault knob or run a debug action
 * @dev: an open device
 * @knob: a debugfs file of the device (Documentation/devices.rst,
 *	Documentation/sim.rst): fail_bo_create, fail_vm_bind,
 *	fail_queue_create, fault_access (how many of the next calls or device
 *	accesses fail), packet_latency_ns, stall_engine ("ENGINE NS"),
 *	force_fault ("CTX QUEUE"), reset ("1"), split_owner_yield,
 *	split_stall ("ENGINE NS"), foreign_import_mmap
 * @value: what is written, with the file's syntax
 *
 * The module: writes /sys/kernel/debug/accel/vaccel<id>/@knob (root). The
 * in-process device: the same names, syntax and errors.
 *
 * Return: 0; -EINVAL for a NULL argument, a @knob that is not one file
 * name, or a value the knob rejects; -ENOENT for an unknown knob (or the
 * module without debugfs, or a removed device); -EACCES (module) without
 * root; the action's error (force_fault: -ENOENT for no such running
 * queue; stall_engine, reset: -ENODEV after removal); -ECHILD. One open and
 * one write (module); no syscall (sim). (libaccel 1.1)
 */
int accel_device_debug_write(struct accel_device *dev, const char *knob, const char *value);

/**
 * accel_device_debug_read() - read a debugfs file of a device
 * @dev: an open device; or NULL for "objects" of the backend ACCEL_BACKEND
 *	chooses (no device needs to be open)
 * @file: info, contexts, buffers, vm, queues, engines, stats, a knob's
 *	name; "objects" (the module's /sys/kernel/debug/vaccel/objects, the
 *	in-process device's process-wide counters of the same names); "fdinfo"
 *	(the usage of @dev's own file: the module's /proc/self/fdinfo of it)
 * @buf: filled with the text, NUL-terminated
 * @len: bytes @buf holds, at least 1; a longer text is cut
 *
 * The module: reads /sys/kernel/debug/accel/vaccel<id>/@file (root). The
 * in-process device: the same files in the same formats.
 *
 * Return: the bytes stored (not counting the NUL); -EINVAL for a NULL
 * argument, @len 0 or a @file that is not one file name, or a write-only
 * knob; -ENOENT for an unknown file (or no debugfs, or a removed device);
 * -EACCES (module) without root; -ECHILD. A few syscalls (module); none
 * (sim). (libaccel 1.1)
 */
int accel_device_debug_read(struct accel_device *dev, const char *file, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_DEVICE_H */
