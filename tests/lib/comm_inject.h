/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A failure at every step of a communicator's init, for the comm tests
 * of one process and of several: the library's trace lines count the
 * steps (each counter, buffer and signal import logs one); at step
 * @arm_at, the next buffer creation and VM binding of device @dev fail
 * (the in-process device's knobs). Install inj_log() with
 * accel_log_set_handler() at trace level; it keeps the last error of
 * comm_init_all and prints warnings and errors to stderr.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef COMM_INJECT_H
#define COMM_INJECT_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <accel/accel.h>

static struct {
	struct accel_device *dev;
	unsigned int steps, arm_at;
	bool armed;
	char comm_err[512];	/* the last error of comm_init_all */
} inj;

static inline void inj_arm(const char *value)
{
	accel_device_debug_write(inj.dev, "fail_bo_create", value);
	accel_device_debug_write(inj.dev, "fail_vm_bind", value);
}

static inline void inj_log(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level == ACCEL_LOG_TRACE) {
		if (++inj.steps == inj.arm_at && !inj.armed) {
			inj.armed = true;
			inj_arm("1");
		}
		return;
	}
	if (level == ACCEL_LOG_ERROR && !strncmp(msg, "comm_init_all", 13))
		snprintf(inj.comm_err, sizeof(inj.comm_err), "%s", msg);
	if (level <= ACCEL_LOG_WARN)
		fprintf(stderr, "libaccel: %s\n", msg);
}

#endif
