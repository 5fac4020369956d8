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
 * - Structures grow only at their end, so that a program built against an
 *   earlier release runs on a later one (the stable ABI of 1.x:
 *   <accel/version.h>). Structures passed in carry their size
 *   (``.size = sizeof(...)``): a size below the structure's size in the
 *   first release (1.0) is -EINVAL; a size larger than the library knows
 *   (a newer program) is accepted when every byte past the fields it
 *   knows is zero, else -E2BIG (Linux's copy_struct_from_user() rule);
 *   sizes above 4096 are -E2BIG. Structures and arrays the library fills
 *   come with their size or element size, checked the same way; the
 *   library writes the fields it knows and zeroes the rest. Reserved
 *   fields must be zero. &struct accel_task carries its size like an
 *   input structure (accel_task_init() sets it).
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
#include <accel/comm.h>

#endif /* ACCEL_ACCEL_H */
