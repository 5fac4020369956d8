/* SPDX-License-Identifier: MIT */
/*
 * The in-process device as the rest of libaccel sees it: the transport
 * backend and the few calls the device list, the bus API and the debug
 * API need (lib/device.c, lib/backend.c). Everything else of lib/sim/ is
 * private to it (sim_internal.h).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_SIM_H
#define ACCEL_SIM_H

#include <stdbool.h>
#include <stddef.h>

#include "../transport.h"

/* The backend: files "sim:N" of the process's device N. */
extern const struct tp_ops acc_tp_sim;

/* "sim:N": the device id N (0..1023), or -1 for any other path. */
int sim_path_id(const char *path);
/*
 * The ids of the process's devices, sorted, into @ids (at most @max):
 * how many there are, or -errno (-EINVAL: ACCEL_SIM_DEVICES is wrong).
 * A child (fork()) has a bus of its own: the parent's devices' ids and
 * settings, none of their files or objects.
 */
int sim_bus_ids(unsigned int *ids, unsigned int max);
/* new_device and del_device of the in-process bus: 0 or -errno as the module's. */
int sim_bus_new_device(const char *spec);
int sim_bus_del_device(unsigned int id);
/* @fd is a file of the in-process device (or a parent's: its calls fail with -ECHILD). */
bool sim_fd_is_file(int fd);
/* The debugfs files and knobs of @fd's device (sim_knobs.c): 0 / bytes, or -errno. */
int sim_fd_debug_write(int fd, const char *knob, const char *value);
int sim_fd_debug_read(int fd, const char *file, char *buf, size_t len);
/* The process-wide "objects" counters (as sim_fd_debug_read() gives them): bytes. */
int sim_objects_read(char *buf, size_t len);

#endif /* ACCEL_SIM_H */
