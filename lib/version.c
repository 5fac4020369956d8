// SPDX-License-Identifier: MIT
/*
 * The library's version at run time.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "internal.h"

ACCEL_API int accel_version_major(void)
{
	return ACCEL_VERSION_MAJOR;
}

ACCEL_API int accel_version_minor(void)
{
	return ACCEL_VERSION_MINOR;
}
