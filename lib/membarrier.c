// SPDX-License-Identifier: MIT
/*
 * The doorbell protocol's asymmetric fence (Documentation/queues.rst,
 * *The asymmetric fence*).
 *
 * The protocol needs a StoreLoad barrier on both sides: the submitter
 * between its doorbell store and its need_wakeup load, the engine between
 * its need_wakeup store and its doorbell loads, so that one of the two
 * sees the other's store. On the submitter's side it is a locked
 * instruction that waits until the stores before it are visible: 12-25
 * ns natively when the packet's line is still on the engine's CPU, 1-2 ns
 * once the slot was zeroed ahead in this CPU's cache (lib/queue.c;
 * Documentation/libaccel-tools.rst).
 *
 * When the engines run in this process (the in-process device, the
 * tests' fake kernel), the barrier can be moved to the side that runs
 * rarely: before an engine looks at the doorbells one last time and
 * sleeps, it calls membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which
 * returns only after every other running thread of the process has
 * executed a full memory barrier (an IPI to their CPUs; a thread that is
 * not running passed one when it was switched out). The submitter then
 * needs only a compiler barrier: whichever point of its store/load pair
 * the forced barrier lands on, either its doorbell store is visible to
 * the engine's loads after membarrier() returns, or its need_wakeup load
 * comes after the barrier and sees the engine's store (the classic
 * asymmetric Dekker: Linux's membarrier(2), liburcu, folly's
 * asymmetricHeavyBarrier). The cost moves from every doorbell to every
 * engine sleep (a few us: one system call and IPIs).
 *
 * The module's engines are kernel threads: they cannot force a barrier on
 * one process's CPUs without scheduler internals or IPIs to every CPU, so
 * the module keeps the fence on both sides.
 *
 * ACCEL_DOORBELL_FENCE=full in the environment turns it off for the
 * process (every queue keeps the submitter's fence); so does a kernel
 * without the expedited private command (before 4.14, or filtered by a
 * seccomp policy).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "barrier.h"

static pthread_once_t mb_once = PTHREAD_ONCE_INIT;
static bool mb_ready;
_Atomic uint64_t acc_membarriers;

static void mb_init(void)
{
	const char *v = getenv("ACCEL_DOORBELL_FENCE");
	long cmds;

	if (v && !strcmp(v, "full"))
		return;
	cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) ||
	    !(cmds & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED))
		return;
	/* registration is the process's (its mm); acc_membarrier() registers a child again if needed */
	mb_ready = !syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
}

bool acc_membarrier_ready(void)
{
	pthread_once(&mb_once, mb_init);
	return mb_ready;
}

int acc_membarrier(void)
{
	atomic_fetch_add_explicit(&acc_membarriers, 1, memory_order_relaxed);
	if (!syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		return 0;
	/* not registered (a child of fork(), should a kernel not carry it over): once more */
	if (errno == EPERM &&
	    !syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) &&
	    !syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		return 0;
	return -errno;
}
