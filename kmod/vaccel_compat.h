/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vaccel authors
 *
 * Kernel API differences between 6.12 and newer kernels. Each
 * VACCEL_HAVE_* symbol comes from a try-compile probe run against the
 * target kernel's headers at build time (kmod/compat/probe, one file per
 * probe in kmod/compat/probes/), never from LINUX_VERSION_CODE: Debian's
 * 6.12.y already carries several later DRM APIs.
 */
#ifndef __VACCEL_COMPAT_H__
#define __VACCEL_COMPAT_H__

#include "vaccel_compat_gen.h"

#endif /* __VACCEL_COMPAT_H__ */
