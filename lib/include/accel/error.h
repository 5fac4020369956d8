/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_ERROR_H
#define ACCEL_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: errors
 *
 * Every call returns 0 (or a count) or a negative errno. These meanings
 * are fixed for the whole library:
 *
 * - -ETIMEDOUT: a wait expired (its timeout or deadline passed first);
 * - -EIO: a device fault: a queue the call depends on faulted (its record
 *   says why: accel_queue_status(), accel_queue_describe());
 * - -ECANCELED: aborted locally (accel_tg_abort(), accel_comm_abort(),
 *   accel_comm_init_abort());
 * - -ENODEV: the device was unplugged (or a file is not a vaccel node);
 * - -EAGAIN: try again: the ring is full (a call asked not to wait), or a
 *   collective call is 256 calls ahead of its communicator's slowest rank;
 *   nothing changed;
 * - -ECONNRESET: a peer rank of a communicator died;
 * - -ECONNABORTED: a peer rank aborted the communicator (or left init);
 * - -EPROTO: a mismatch: the module's uAPI is too old, or the ranks of a
 *   communicator called different collectives or differ in a setting;
 * - -ECHILD: the object belongs to the parent process (it was created
 *   before fork(); in the child only destroy and close work);
 * - -E2BIG: too big: a buffer above the device's capacity, a task needing
 *   more packets than a ring holds, an OUTPUT_NEW tensor larger than the
 *   output heap, or unknown non-zero bytes past the known size of a
 *   structure with a size field.
 *
 * Others keep their usual sense (-EINVAL, -ENOMEM, -ENOSPC, ...): each
 * function's comment lists its errors, and accel_strerror() names them.
 */

/**
 * accel_strerror() - describe an error code of this library
 * @err: a negative errno returned by a libaccel function (a positive value
 *	is taken as its negation; any int is accepted)
 *
 * The text says what the code means for libaccel (for example -EIO: "a
 * device fault: a queue this call depends on faulted; see
 * accel_queue_status() and accel_queue_describe()").
 *
 * Return: a static string; never NULL ("unknown error" for a code the
 * library does not return). No syscall. Async-signal-safe.
 */
const char *accel_strerror(int err);

/* Log levels, from ACCEL_DEBUG=error|warn|info|trace (default: nothing). */
enum accel_log_level {
	ACCEL_LOG_NONE = 0,
	ACCEL_LOG_ERROR = 1,
	ACCEL_LOG_WARN = 2,
	ACCEL_LOG_INFO = 3,
	ACCEL_LOG_TRACE = 4,
};

/**
 * accel_log_set_level() - change the log level
 * @level: an &enum accel_log_level; overrides ACCEL_DEBUG
 *
 * Messages at @level or more severe go to the handler (stderr by default).
 */
void accel_log_set_level(int level);

/**
 * accel_log_get_level() - the log level in force
 *
 * Return: the level set by accel_log_set_level() or read from ACCEL_DEBUG
 * (once, at the first use of the library).
 */
int accel_log_get_level(void);

/**
 * accel_log_set_handler() - send log messages elsewhere
 * @fn: called with the level and one formatted line (no trailing newline),
 *	from the thread that logs; NULL restores the stderr handler
 * @arg: passed back to @fn
 */
void accel_log_set_handler(void (*fn)(int level, const char *msg, void *arg), void *arg);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_ERROR_H */
