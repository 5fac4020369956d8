// SPDX-License-Identifier: GPL-2.0-only
/* Must always build: proves the probe harness itself works. */
#include <linux/module.h>
#include <drm/drm_drv.h>
