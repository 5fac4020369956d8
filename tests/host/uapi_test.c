// SPDX-License-Identifier: GPL-2.0-only
/*
 * The uAPI header is self-contained, builds as user-space C, and its
 * structures have the sizes and offsets the ABI promises: no implicit
 * padding anywhere, sizes a multiple of 8.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <assert.h>
#include <stddef.h>

#include <drm/vaccel_accel.h>

#include "kselftest_harness.h"

#define ABI_SIZE(type, size)						\
	static_assert(sizeof(struct type) == (size), #type " size");	\
	static_assert(sizeof(struct type) % 8 == 0, #type " alignment")
#define ABI_OFF(type, field, off)					\
	static_assert(offsetof(struct type, field) == (off), #type "." #field)

ABI_SIZE(drm_vaccel_get_param, 16);
ABI_OFF(drm_vaccel_get_param, param, 0);
ABI_OFF(drm_vaccel_get_param, pad, 4);
ABI_OFF(drm_vaccel_get_param, value, 8);

/* Ioctl numbers are part of the ABI too. */
static_assert(DRM_VACCEL_GET_PARAM == 0x00, "GET_PARAM nr");

TEST(ioctl_encoding)
{
	EXPECT_EQ(DRM_IOWR(0x40, struct drm_vaccel_get_param),
		  DRM_IOCTL_VACCEL_GET_PARAM);
	EXPECT_EQ(16, _IOC_SIZE(DRM_IOCTL_VACCEL_GET_PARAM));
	EXPECT_EQ('d', _IOC_TYPE(DRM_IOCTL_VACCEL_GET_PARAM));
}

TEST(param_numbers)
{
	EXPECT_EQ(0, DRM_VACCEL_PARAM_UAPI_VERSION);
	EXPECT_EQ(1, DRM_VACCEL_PARAM_DEVICE_ID);
	EXPECT_EQ(2, DRM_VACCEL_PARAM_NUM_ENGINES);
	EXPECT_EQ(3, DRM_VACCEL_PARAM_MEMORY_CAPACITY);
	EXPECT_EQ(4, DRM_VACCEL_PARAM_VA_START);
	EXPECT_EQ(5, DRM_VACCEL_PARAM_VA_SIZE);
	EXPECT_EQ(6, DRM_VACCEL_PARAM_CAPABILITIES);
	EXPECT_EQ(7, DRM_VACCEL_PARAM_LINK_BANDWIDTH);
	EXPECT_EQ(8, DRM_VACCEL_PARAM_LINK_LATENCY);
	EXPECT_EQ(9, DRM_VACCEL_PARAM_POLL_BUDGET);
	EXPECT_EQ(1ULL, DRM_VACCEL_CAP_HOTPLUG);
}

TEST_HARNESS_MAIN
