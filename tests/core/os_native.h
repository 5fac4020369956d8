/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Native OS layer for the packet core: a fake device address space made
 * of regions of host memory, signals as plain words, a virtual clock the
 * tests advance (busy queues wait for it). Used by the unit tests and the
 * fuzzer; one instance per queue.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef OS_NATIVE_H
#define OS_NATIVE_H

#include "../../kmod/core/vaccel_core.h"

#define OS_MAX_REGIONS	16

struct os_region {
	u64 va;
	u64 size;
	u8 *mem;
	u32 access;	/* DRM_VACCEL_VM_READ / _WRITE */
	bool signal;	/* a signal buffer */
	bool sealed;	/* usable by EXEC */
};

struct os_native {
	struct os_region regions[OS_MAX_REGIONS];
	unsigned int nregions;
	u64 now;		/* virtual clock, ns */
	u64 tick;		/* added to the clock at each read (0: still) */
	u64 charge;		/* modelled time to charge at the next step */
	u64 charge_first;	/* ... and the time of its first access (0: unknown) */
	u64 maps;		/* vaccel_os_map() calls not yet unmapped */
	u64 signals;		/* vaccel_os_signal() calls */
	u64 irqs;		/* ... with irq set */
	u64 started, ended;	/* vaccel_os_packet() calls */
	u64 charged[OS_MAX_REGIONS];	/* bytes the link model would charge */
	u64 fpu_sections;	/* vaccel_os_fpu_begin() calls */
	bool in_fpu;		/* between vaccel_os_fpu_begin() and _end() */
	u64 fpu_errors;		/* unbalanced or nested FPU sections */
	/*
	 * Order of packet events: packets start and end properly nested
	 * (an EXEC ends after everything it ran), and ring packets end in
	 * ring order, each index once. Violations are counted.
	 */
	unsigned int open;	/* started, not ended: the nesting depth */
	u64 retired;		/* ring packets (depth 0) ended */
	u64 order_errors;
};

/* Forget the open packets, for a queue that starts over. */
void os_track_reset(struct os_native *os);

/* Add a region of @size bytes at @va (zero-filled); returns its memory. */
u8 *os_add(struct os_native *os, u64 va, u64 size, u32 access, bool signal,
	   bool sealed);
void os_free(struct os_native *os);
/* Host address of device address @va, or NULL. */
void *os_ptr(struct os_native *os, u64 va);

#endif
