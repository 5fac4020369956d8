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
 * none of them needs DRM authentication.
 */

/**
 * VACCEL_UAPI_VERSION - version of this interface
 *
 * Bumped when ioctls or parameters are added. Read it back with
 * &DRM_VACCEL_PARAM_UAPI_VERSION.
 */
#define VACCEL_UAPI_VERSION		1

#define DRM_VACCEL_GET_PARAM		0x00

#define DRM_IOCTL_VACCEL_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VACCEL_GET_PARAM, struct drm_vaccel_get_param)

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

#if defined(__cplusplus)
}
#endif

#endif /* __UAPI_VACCEL_ACCEL_H__ */
