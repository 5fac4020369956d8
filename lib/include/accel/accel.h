/* SPDX-License-Identifier: MIT */
/*
 * libaccel: the user library of vaccel devices.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_ACCEL_H
#define ACCEL_ACCEL_H

/**
 * DOC: libaccel
 *
 * One include for the whole library. Conventions, for every function:
 *
 * - It returns 0 (or a count >= 0) on success and a negative errno on
 *   failure; it never reports through errno alone. accel_strerror() names
 *   a code.
 * - Constructors are ``int accel_x_create(..., struct accel_x **out)``; the
 *   matching ``accel_x_destroy()`` accepts NULL and returns nothing.
 *   Objects are opaque; a device outlives nothing it owns: destroying a
 *   device first destroys what is still open on it.
 * - Structures passed in carry their size (``.size = sizeof(...)``) or have
 *   reserved fields that must be zero, so that they can grow.
 * - Each function says what it costs: "no syscall" (memory operations
 *   only), "one syscall", "may sleep".
 * - No hidden threads: everything happens on the caller's thread (a task
 *   graph's host-task worker exists only if accel_tg_start_worker() asks).
 * - Thread safety is stated per object: a device and its buffers may be
 *   used from any thread; a queue is single-producer (one submitting
 *   thread at a time).
 *
 * Fixed error meanings (see <accel/error.h>): -ETIMEDOUT a wait expired,
 * -EIO a device fault (a queue's record says why), -ECANCELED a wait was
 * aborted, -ENODEV the device was unplugged, -EAGAIN a ring is full (try
 * again), -ECHILD an object of the parent process used after fork().
 *
 * The library is 64-bit only.
 */

#include <accel/version.h>
#include <accel/error.h>
#include <accel/device.h>
#include <accel/buffer.h>
#include <accel/signal.h>
#include <accel/queue.h>
#include <accel/packet.h>
#include <accel/tensor.h>
#include <accel/taskgraph.h>

#endif /* ACCEL_ACCEL_H */
