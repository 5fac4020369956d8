/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_VERSION_H
#define ACCEL_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The library's version. The soname is libaccel.so.0 until 1.0; within a
 * major version, symbols are only added (lib/libaccel.map has one node
 * per release) and structures only grow behind their size field.
 */
#define ACCEL_VERSION_MAJOR	0
#define ACCEL_VERSION_MINOR	1
#define ACCEL_VERSION_PATCH	0

/* True if the headers are at least version @major.@minor. */
#define ACCEL_CHECK_VERSION(major, minor)				\
	(ACCEL_VERSION_MAJOR > (major) ||				\
	 (ACCEL_VERSION_MAJOR == (major) && ACCEL_VERSION_MINOR >= (minor)))

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
