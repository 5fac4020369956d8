// SPDX-License-Identifier: GPL-2.0-only
/* struct drm_driver still has a .date member (removed in 6.14). */
#include <drm/drm_drv.h>

static const struct drm_driver probe __maybe_unused = { .date = "0" };
