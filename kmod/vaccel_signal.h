/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef __VACCEL_SIGNAL_H__
#define __VACCEL_SIGNAL_H__

#include <linux/atomic.h>
#include <linux/types.h>
#include <linux/wait.h>

struct drm_device;
struct drm_file;

/* Engines sleep here; signal updates wake them (see vaccel_engine.c). */
extern struct wait_queue_head vaccel_engine_wq;

int vaccel_signal_generation(void);
void vaccel_signal_apply(atomic64_t *word, u32 op, u64 value);
void vaccel_signal_wake(bool host);

int vaccel_ioctl_wait_signals(struct drm_device *drm, void *data,
			      struct drm_file *file);
int vaccel_ioctl_signal_write(struct drm_device *drm, void *data,
			      struct drm_file *file);

#endif /* __VACCEL_SIGNAL_H__ */
