/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The multi-process harness of the communicator tests
 * (libaccel_comm_mp_test.c, libaccel_comm_tg_mp_test.c): each rank is a
 * forked process whose stderr (the library's log) goes to a memfd it can
 * read back; a failed check in a rank prints where, echoes that log to
 * the test's stderr and ends the process, so its peers see it go; the
 * parent reaps every rank with a bounded wait and kills the leftovers.
 *
 * The checks need a variable x in scope with the fields rank and logfd.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef COMM_MP_HARNESS_H
#define COMM_MP_HARNESS_H

#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libaccel_test.h"

static int rank_stderr = -1;	/* the test's stderr, kept by each rank */

static inline int64_t mp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

/* In a new rank process: its stderr into a memfd (*@logfd, or -1), the test's kept. */
static inline void mp_rank_log_begin(int *logfd)
{
	rank_stderr = dup(2);
	*logfd = memfd_create("rank-log", 0);
	if (*logfd >= 0)
		dup2(*logfd, 2);	/* read back by the checks, echoed on failure */
	accel_log_set_level(ACCEL_LOG_WARN);
}

/* A failed check in a rank: its log goes to the test's stderr, and the process ends. */
static inline void mp_rank_fail(int logfd, int code)
{
	char buf[4096];
	off_t off = 0;
	ssize_t n;

	if (logfd >= 0 && rank_stderr >= 0)
		while ((n = pread(logfd, buf, sizeof(buf), off)) > 0) {
			if (write(rank_stderr, buf, (size_t)n) != n)
				break;
			off += n;
		}
	_exit(code);
}

/* In a rank: fail the process with a message (its peers then see it go). */
#define RCHECK(cond) do {							\
	if (!(cond)) {								\
		fprintf(stderr, "rank %u (pid %d): %s:%d: check failed: %s\n",	\
			x->rank, (int)getpid(), __FILE__, __LINE__, #cond);	\
		mp_rank_fail(x->logfd, 20);					\
	}									\
} while (0)

#define RCHECK_EQ(want, got) do {						\
	long long _w = (long long)(want), _g = (long long)(got);		\
	if (_w != _g) {								\
		fprintf(stderr, "rank %u (pid %d): %s:%d: %s is %lld, not %lld\n", \
			x->rank, (int)getpid(), __FILE__, __LINE__, #got, _g, _w); \
		mp_rank_fail(x->logfd, 21);					\
	}									\
} while (0)

/*
 * In a rank: fail unless less than @limit ns passed since @t0, saying how
 * long it took (a time bound that fails in a slow VM should say by how
 * much). With ACCEL_TEST_TIMES set, every bound prints its figure to the
 * test's stderr, passed or not: the margins, measured.
 */
#define RCHECK_WITHIN(t0, limit) do {						\
	long long _dt = (long long)(mp_now_ns() - (t0)), _l = (long long)(limit); \
	if (_dt >= _l || getenv("ACCEL_TEST_TIMES"))				\
		dprintf(_dt >= _l ? 2 : rank_stderr,				\
			"rank %u (pid %d): %s:%d: took %lld ms, limit %lld ms\n", \
			x->rank, (int)getpid(), __FILE__, __LINE__,		\
			_dt / 1000000, _l / 1000000);				\
	if (_dt >= _l)								\
		mp_rank_fail(x->logfd, 22);					\
} while (0)

/*
 * Wait at most @ms for every process of @pids (0: none); kill the ones
 * left; their statuses in @st (exit code, or 128 + signal, or -1 if
 * killed here).
 */
static inline void mp_reap(const pid_t *pids, unsigned int n, int64_t ms, int *st)
{
	int64_t end = mp_now_ns() + ms * 1000000;
	unsigned int left = 0, i;
	int s;

	for (i = 0; i < n; i++) {
		st[i] = -1;
		left += pids[i] != 0;
	}
	while (left && mp_now_ns() < end) {
		for (i = 0; i < n; i++) {
			if (st[i] != -1 || !pids[i])
				continue;
			if (waitpid(pids[i], &s, WNOHANG) == pids[i]) {
				st[i] = WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
				left--;
			}
		}
		usleep(2000);
	}
	for (i = 0; i < n; i++) {
		if (st[i] != -1 || !pids[i])
			continue;
		kill(pids[i], SIGKILL);
		waitpid(pids[i], &s, 0);
		st[i] = -1;
	}
}

#endif /* COMM_MP_HARNESS_H */
