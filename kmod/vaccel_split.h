/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef __VACCEL_SPLIT_H__
#define __VACCEL_SPLIT_H__

#include <linux/types.h>

#include "core/vaccel_core.h"

struct vaccel_device;
struct vaccel_engine;
struct vaccel_queue;

/* Bulk packets with at least this many bytes left are split. */
#define VACCEL_SPLIT_MIN	(4 * VACCEL_CORE_CHUNK)

bool vaccel_split_start(struct vaccel_queue *q);
bool vaccel_split_run(struct vaccel_queue *q, u64 deadline);
bool vaccel_split_help(struct vaccel_engine *e, u64 deadline);
bool vaccel_split_waiting(struct vaccel_queue *q);
bool vaccel_split_pending(struct vaccel_device *vdev, struct vaccel_engine *e);
void vaccel_split_stop(struct vaccel_queue *q);
void vaccel_split_cancel(struct vaccel_queue *q);

#endif /* __VACCEL_SPLIT_H__ */
