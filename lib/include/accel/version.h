/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_VERSION_H
#define ACCEL_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: version and ABI
 *
 * The library's version. 1.0 is the first release with a stable ABI: the
 * soname is libaccel.so.1 (libaccel.so.0 was 0.x, which promised nothing),
 * and a program built against one 1.x release runs on every later one.
 * Within a major version symbols are only added, in a new node of the
 * version script per release (lib/libaccel.map: LIBACCEL_1.0, then
 * LIBACCEL_1.1 ...), and structures grow only at their end: behind their
 * size field (see <accel/accel.h>), or, for &struct accel_task, behind the
 * size field that accel_task_init() sets.
 */
#define ACCEL_VERSION_MAJOR	1
#define ACCEL_VERSION_MINOR	7
#define ACCEL_VERSION_PATCH	0

/* True if the headers are at least version @major.@minor. */
#define ACCEL_CHECK_VERSION(major, minor)				\
	(ACCEL_VERSION_MAJOR > (major) ||				\
	 (ACCEL_VERSION_MAJOR == (major) && ACCEL_VERSION_MINOR >= (minor)))

/*
 * ACCEL_INLINE - how the inline helpers of the public headers are defined
 *
 * The packet builders (<accel/packet.h>), tensor views (<accel/tensor.h>)
 * and task builders (<accel/taskgraph.h>) are defined in the headers with
 * ACCEL_INLINE, "static inline" for C programs. The library compiles the
 * same definitions once more as exported functions of the same names
 * (lib/ffi.c defines ACCEL_INLINE before it includes the headers), so that
 * programs calling the library through a foreign function interface (Python
 * ctypes, ...) have every helper without a C compiler.
 */
#ifndef ACCEL_INLINE
#define ACCEL_INLINE static inline
#endif

/* The oldest vaccel module uAPI (DRM_VACCEL_PARAM_UAPI_VERSION) it can use. */
#define ACCEL_MIN_UAPI_VERSION	3

/**
 * accel_version_major() - major version of the library at run time
 *
 * Return: ACCEL_VERSION_MAJOR of the library that was linked. No syscall.
 */
int accel_version_major(void);

/**
 * accel_version_minor() - minor version of the library at run time
 *
 * Return: ACCEL_VERSION_MINOR of the library that was linked. No syscall.
 */
int accel_version_minor(void);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_VERSION_H */
