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
 * accel_strerror() - describe an error code of this library
 * @err: a negative errno returned by a libaccel function (a positive value
 *	is taken as its negation)
 *
 * The text says what the code means for libaccel (for example -EIO: "a
 * queue faulted: see accel_queue_status() and accel_queue_describe()").
 *
 * Return: a static string; never NULL. No syscall.
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
