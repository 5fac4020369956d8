/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef __VACCEL_CONFIG_H__
#define __VACCEL_CONFIG_H__

#include <linux/sysfs.h>
#include <linux/types.h>

/**
 * struct vaccel_config - model settings of one device
 * @engines: number of execution engines
 * @memory: memory capacity in bytes, a multiple of PAGE_SIZE
 * @link_bw_mbps: bandwidth of links to peer devices in MB/s, 0 unthrottled
 * @link_latency_ns: latency of links to peer devices in nanoseconds
 * @poll_budget_ns: how long an idle engine polls doorbells before sleeping
 *
 * Set once when the device is created ("key=value" words written to
 * /sys/bus/vaccel/new_device), read-only afterwards; each field is shown
 * in sysfs under the key's name.
 */
struct vaccel_config {
	u64 engines;
	u64 memory;
	u64 link_bw_mbps;
	u64 link_latency_ns;
	u64 poll_budget_ns;
};

void vaccel_config_init(struct vaccel_config *cfg);
int vaccel_config_parse(struct vaccel_config *cfg, char *words);

extern const struct attribute_group *vaccel_config_groups[];

#endif /* __VACCEL_CONFIG_H__ */
