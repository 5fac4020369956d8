// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the packet core: the input becomes a ring of
 * packets and a sealed EXEC buffer in a small device address space with
 * read-write, read-only, write-only and signal regions. The core runs with
 * bounded budgets; blocked WAITs and busy queues (DELAY) are released by
 * advancing the signals and the clock. Sanitizers catch memory errors and UB; the asserts check the
 * executor's invariants: no mapping left, the read index within the
 * doorbell, EXECs bounded, and packets that start and end properly nested
 * and in ring order.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "os_native.h"

#include "core_fuzz.h"

#define CHECK(c)							\
	do {								\
		if (!(c)) {						\
			fprintf(stderr, "invariant failed: %s\n", #c);	\
			abort();					\
		}							\
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct os_native os = { 0 };
	struct vaccel_core_queue q;
	u8 *ring, *exec;
	u64 *sig;
	size_t n;
	int round;

	ring = os_add(&os, RING_VA, RING_N * 64, DRM_VACCEL_VM_READ, false, false);
	exec = os_add(&os, EXEC_VA, 4096, DRM_VACCEL_VM_READ, false, true);
	os_add(&os, DATA_VA, 2 * 65536, DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE,
	       false, false);
	os_add(&os, RO_VA, 4096, DRM_VACCEL_VM_READ, false, false);
	os_add(&os, WO_VA, 4096, DRM_VACCEL_VM_WRITE, false, false);
	sig = (u64 *)os_add(&os, SIG_VA, 4096,
			    DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE, true, false);

	n = size < RING_N * 64 ? size : RING_N * 64;
	memcpy(ring, data, n);
	if (size > n)
		memcpy(exec, data + n, size - n < 4096 ? size - n : 4096);

	vaccel_core_queue_init(&q, &os, RING_VA, RING_N);
	for (round = 0; round < 24; round++) {
		enum vaccel_core_status st = vaccel_core_run(&q, RING_N, 64);
		unsigned int i;

		CHECK(os.maps == 0);
		CHECK(os.order_errors == 0);
		CHECK(os.fpu_errors == 0 && !os.in_fpu);
		CHECK(os.open == q.depth + q.have_pkt || q.fault);
		CHECK(!q.done || q.busy_until);
		CHECK((st == VACCEL_CORE_BUSY) == (q.busy_until != 0));
		CHECK(q.read_index <= RING_N);
		CHECK(q.depth <= VACCEL_CORE_MAX_DEPTH);
		CHECK((st == VACCEL_CORE_FAULT) == (q.fault != DRM_VACCEL_FAULT_NONE));
		if (st == VACCEL_CORE_IDLE) {
			CHECK(q.read_index == RING_N && !q.depth && !q.have_pkt);
			break;
		}
		if (st == VACCEL_CORE_FAULT)
			break;
		/* let blocked waits and timeouts make progress */
		for (i = 0; i < 512; i++)
			sig[i] += 1ull << (round % 16 * 4);
		os.now += 100000000;
	}
	os_free(&os);
	return 0;
}
