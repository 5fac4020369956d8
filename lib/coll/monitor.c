// SPDX-License-Identifier: MIT
/*
 * Peer death of multi-process communicators: one thread per communicator
 * in each process watches the bootstrap connections it kept and a pidfd
 * of every peer's process. A peer that goes away without having
 * destroyed its rank (its bit in group->left) fails the communicator with
 * -ECONNRESET on every rank: the shared failure is recorded once, and
 * acc_comm_poison() releases every rank's queued work through the
 * counters this process imported (the path accel_comm_abort() takes).
 *
 * The thread only polls (a 1 s tick re-reads nothing but keeps it
 * honest); destroy wakes it through an eventfd and joins it: it never
 * waits for a peer, not even for one stopped while it holds the group's
 * lock (the monitor's wait for that lock gives up when destroy asks).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "coll.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

const char *acc_mp_peer_pid(const struct acc_group *g, int peer, char *buf, size_t len)
{
	buf[0] = 0;
	if (g->mp && peer >= 0 && (unsigned int)peer < g->nranks)
		snprintf(buf, len, " (pid %d)", (int)g->pids[peer]);
	return buf;
}

void acc_mp_peer_died(struct acc_group *g, unsigned int p, const char *how)
{
	bool first = false;

	/*
	 * Destroy stops the monitor, which then gives up the wait: a
	 * process stopped while it holds the lock must not hold up this
	 * process's destroy (the death no longer matters to it).
	 */
	if (acc_group_lock_until(g, INT64_MAX, &g->mp->stopping))
		return;
	if (acc_group_fail_claim(g)) {
		g->fail_rank = (int)p;
		acc_group_fail_publish(g, ACC_FAIL_DEAD);
		acc_comm_poison(g, 4);
		first = true;
	}
	acc_group_unlock(g);
	acc_err("comm %p rank %u (pid %d): rank %u (pid %d) died (%s)%s", (void *)g, g->mp->rank,
		(int)getpid(), p, (int)g->pids[p], how,
		first ? ": the communicator fails on every rank with -ECONNRESET" : "");
}

static bool has_left(struct acc_group *g, unsigned int p)
{
	return atomic_load(&g->left) & (1ull << p);
}

static void *monitor_main(void *arg)
{
	struct acc_group *g = arg;
	struct acc_mp *mp = g->mp;
	struct pollfd pf[1 + 2 * ACCEL_COMM_MAX_RANKS];
	unsigned int who[1 + 2 * ACCEL_COMM_MAX_RANKS], n, i, p;
	bool conn_on[ACCEL_COMM_MAX_RANKS], pid_on[ACCEL_COMM_MAX_RANKS];
	bool seen[ACCEL_COMM_MAX_RANKS] = { false };	/* deaths this process logged */

	for (p = 0; p < mp->nranks; p++) {
		conn_on[p] = mp->conn[p] >= 0;
		pid_on[p] = mp->pidfd[p] >= 0;
	}
	for (;;) {
		int r;

		n = 0;
		pf[n++] = (struct pollfd){ .fd = mp->wake, .events = POLLIN };
		for (p = 0; p < mp->nranks; p++) {
			if (conn_on[p]) {
				who[n] = p;
				pf[n++] = (struct pollfd){ .fd = mp->conn[p], .events = POLLIN };
			}
			if (pid_on[p]) {
				who[n] = p | 0x80000000u;
				pf[n++] = (struct pollfd){ .fd = mp->pidfd[p], .events = POLLIN };
			}
		}
		r = poll(pf, n, 1000);
		if (r < 0 && errno != EINTR) {
			acc_err("comm %p rank %u: the monitor's poll: %s", (void *)g, mp->rank,
				strerror(errno));
			usleep(100000);
			continue;
		}
		if (r <= 0)
			continue;
		if (pf[0].revents)
			return NULL;
		for (i = 1; i < n; i++) {
			bool pidfd = who[i] & 0x80000000u;
			char buf[64];
			ssize_t len;

			if (!pf[i].revents)
				continue;
			p = who[i] & 0x7fffffffu;
			if (!pidfd) {
				len = recv(mp->conn[p], buf, sizeof(buf), MSG_DONTWAIT);
				if (len > 0 || (len < 0 && (errno == EAGAIN || errno == EINTR)))
					continue;	/* nothing is sent after init: ignored */
				conn_on[p] = false;
			} else {
				pid_on[p] = false;
			}
			if (has_left(g, p)) {
				/* destroyed its rank first: a normal end, not a death */
				conn_on[p] = pid_on[p] = false;
				continue;
			}
			if (seen[p])
				continue;	/* seen through the other fd already */
			seen[p] = true;
			acc_mp_peer_died(g, p, pidfd ? "its process exited (pidfd)" :
					 "its bootstrap connection closed");
		}
	}
}

int acc_mp_monitor_start(struct acc_group *g)
{
	struct acc_mp *mp = g->mp;
	sigset_t all, old;
	unsigned int p;
	int ret;

	if (mp->nranks == 1)
		return 0;
	for (p = 0; p < mp->nranks; p++) {
		if (p == mp->rank || g->pids[p] <= 0 || g->pids[p] == (int32_t)getpid())
			continue;
		mp->pidfd[p] = (int)syscall(SYS_pidfd_open, (pid_t)g->pids[p], 0);
		if (mp->pidfd[p] < 0 && errno == ESRCH) {
			acc_mp_peer_died(g, p, "gone before init returned");
			mp->pidfd[p] = -1;
		}
	}
	mp->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (mp->wake < 0)
		return -errno;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&mp->monitor, NULL, monitor_main, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return ret;
	mp->have_monitor = true;
	return 0;
}

void acc_mp_monitor_stop(struct acc_group *g)
{
	struct acc_mp *mp = g->mp;
	uint64_t one = 1;
	unsigned int p;

	if (mp->have_monitor) {
		atomic_store(&mp->stopping, true);
		while (write(mp->wake, &one, sizeof(one)) < 0 && errno == EINTR)
			;
		pthread_join(mp->monitor, NULL);
		mp->have_monitor = false;
	}
	if (mp->wake >= 0)
		close(mp->wake);
	mp->wake = -1;
	for (p = 0; p < ACCEL_COMM_MAX_RANKS; p++) {
		if (mp->pidfd[p] >= 0)
			close(mp->pidfd[p]);
		if (mp->conn[p] >= 0)
			close(mp->conn[p]);
		mp->pidfd[p] = mp->conn[p] = -1;
	}
}
