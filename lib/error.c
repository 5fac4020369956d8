// SPDX-License-Identifier: MIT
/*
 * Error strings and logging (ACCEL_DEBUG=error|warn|info|trace).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/*
 * The meaning of every errno the library returns. Fixed library-wide:
 * -ETIMEDOUT a wait expired, -EIO a device fault, -ECANCELED aborted,
 * -ENODEV unplugged (or not a vaccel device), -EAGAIN ring full / try
 * again, -ECHILD an object of the parent process used after fork().
 */
static const struct {
	int code;
	const char *text;
} errors[] = {
	{ 0, "success" },
	{ EINVAL, "invalid argument: a bad parameter, flag, size or state for this call" },
	{ ENOMEM, "out of memory: device capacity, RLIMIT_MEMLOCK (pinned memory) or host memory" },
	{ ENOSPC, "no space: the VA window, the signal slots or a per-context limit (buffers, "
		  "mappings, queues, eventfd arms) is full" },
	{ ENODEV, "no device: the device was removed, or the file is not a vaccel device" },
	{ EIO, "a device fault: a queue this call depends on faulted; see accel_queue_status() "
	       "and accel_queue_describe()" },
	{ ETIMEDOUT, "a wait expired: its timeout passed first" },
	{ EAGAIN, "try again: the ring is full and the call was asked not to wait, or a "
		  "collective call is 256 calls ahead of its communicator's slowest rank" },
	{ ECANCELED, "aborted locally: accel_tg_abort(), accel_comm_abort() or "
		     "accel_comm_init_abort() of this process" },
	{ ECHILD, "the object belongs to the parent process: it was created before fork(); in "
		  "the child only its destroy or close call works (and frees memory only)" },
	{ EPROTO, "protocol mismatch: the vaccel module's uAPI is too old for this library, or "
		  "the ranks of a communicator differ (a collective call with the same sequence "
		  "number, or a setting or version at init)" },
	{ ECONNRESET, "a peer rank died (its process ended): the communicator has failed" },
	{ ECONNABORTED, "a peer rank aborted the communicator, or left during init" },
	{ EALREADY, "already done: the communicator had failed before this abort" },
	{ EADDRINUSE, "the communicator id is in use: another communicator with this id is "
		      "initializing" },
	{ EEXIST, "exists already: a device with this id, or a rank that has joined" },
	{ ESTALE, "stale: the heap tensor was released, or its block reclaimed since" },
	{ ENODATA, "no data: the communicator's flight recorder is off" },
	{ EACCES, "permission denied: the node's group (render), a sealed or read-only buffer" },
	{ EPERM, "not permitted: a priority above NORMAL needs CAP_SYS_NICE" },
	{ E2BIG, "too big: a buffer above the device's whole memory capacity, a task needing "
		 "more packets than a ring holds, an OUTPUT_NEW tensor larger than the output "
		 "heap, or non-zero bytes past the part of a structure (one with a size field) "
		 "that this library knows" },
	{ EDEADLK, "deadlock avoided: the output heap space a task needs can never come back "
		   "(held by the program, a captured graph or a task not submitted)" },
	{ EBADF, "not a valid file descriptor (dma-buf, device file)" },
	{ EMFILE, "the process's file descriptor limit is reached" },
	{ ENFILE, "the system's file limit is reached" },
	{ ENOENT, "not found: no such device, handle, queue, heap tensor or mapping, or a buffer "
		  "of a device the task graph does not have" },
	{ EBUSY, "busy: something could still write the buffer (a writable mapping or export), "
		 "or the task graph is capturing, runs a worker or holds its maximum of maps" },
	{ EFAULT, "bad address" },
	{ ENXIO, "the queue's ring is not inside one mapping" },
	{ ERANGE, "outside the device's VA window" },
	{ EOVERFLOW, "an address range wraps" },
	{ EINTR, "interrupted by a signal handler" },
	{ EOPNOTSUPP, "not supported: by this buffer, or by the module (an older uAPI)" },
	{ ENOTTY, "not a DRM device: the file does not take this ioctl" },
};

ACCEL_API const char *accel_strerror(int err)
{
	size_t i;

	/* -INT_MIN does not exist */
	if (err == INT_MIN)
		return "unknown error";
	if (err < 0)
		err = -err;
	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == err)
			return errors[i].text;
	return "unknown error";
}

/* ---- logging ---- */

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static atomic_int log_level;
static void (*log_fn)(int level, const char *msg, void *arg);
static void *log_arg;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t spin_ns = 20000;

static const char *const level_names[] = { "none", "error", "warn", "info", "trace" };

/*
 * fork(): the child must not inherit log_lock held by another thread of
 * the parent (its first log line would hang). Registered by
 * acc_fork_init() (transport.c) with the process generation's handler.
 */
void acc_log_fork_prepare(void)
{
	pthread_mutex_lock(&log_lock);
}

void acc_log_fork_parent(void)
{
	pthread_mutex_unlock(&log_lock);
}

void acc_log_fork_child(void)
{
	pthread_mutex_unlock(&log_lock);
}

static void log_init(void)
{
	const char *env = getenv("ACCEL_DEBUG"), *spin = getenv("ACCEL_SPIN_NS");
	int i;

	acc_fork_init();

	if (env) {
		for (i = 0; i <= ACCEL_LOG_TRACE; i++)
			if (!strcasecmp(env, level_names[i]))
				atomic_store(&log_level, i);
		if (env[0] >= '0' && env[0] <= '4' && !env[1])
			atomic_store(&log_level, env[0] - '0');
	}
	if (spin && *spin) {
		char *end;
		long long v = strtoll(spin, &end, 0);

		if (!*end && v >= 0)
			spin_ns = v;
	}
}

int64_t acc_spin_ns(void)
{
	pthread_once(&log_once, log_init);
	return spin_ns;
}

ACCEL_API void accel_log_set_level(int level)
{
	pthread_once(&log_once, log_init);
	if (level < ACCEL_LOG_NONE)
		level = ACCEL_LOG_NONE;
	if (level > ACCEL_LOG_TRACE)
		level = ACCEL_LOG_TRACE;
	atomic_store(&log_level, level);
}

ACCEL_API int accel_log_get_level(void)
{
	pthread_once(&log_once, log_init);
	return atomic_load(&log_level);
}

ACCEL_API void accel_log_set_handler(void (*fn)(int level, const char *msg, void *arg), void *arg)
{
	pthread_mutex_lock(&log_lock);
	log_fn = fn;
	log_arg = arg;
	pthread_mutex_unlock(&log_lock);
}

int acc_log_enabled(int level)
{
	pthread_once(&log_once, log_init);
	return level <= atomic_load_explicit(&log_level, memory_order_relaxed) &&
	       level > ACCEL_LOG_NONE;
}

void acc_log(int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!acc_log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	if (log_fn)
		log_fn(level, msg, log_arg);
	else
		fprintf(stderr, "libaccel %s: %s\n", level_names[level], msg);
	pthread_mutex_unlock(&log_lock);
}
