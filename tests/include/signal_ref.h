/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A signal word's update (SIGNAL packet, SIGNAL_WRITE) on a plain 64-bit
 * word, for the native models of the device: the packet core's native OS
 * layer and libaccel's fake kernel backend. SET and ADD store with
 * release; MAX raises the word in the wrap-safe order of WAIT GE, as the
 * module's vaccel_signal_apply() does. Other ops leave the word alone
 * (the callers validate them first).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef SIGNAL_REF_H
#define SIGNAL_REF_H

#include <stdbool.h>
#include <stdint.h>

#include <drm/vaccel_accel.h>

static inline void signal_ref_apply(uint64_t *w, uint32_t op, uint64_t value)
{
	uint64_t old;

	switch (op) {
	case DRM_VACCEL_SIGNAL_SET:
		__atomic_store_n(w, value, __ATOMIC_RELEASE);
		break;
	case DRM_VACCEL_SIGNAL_ADD:
		__atomic_fetch_add(w, value, __ATOMIC_RELEASE);
		break;
	case DRM_VACCEL_SIGNAL_MAX:
		old = __atomic_load_n(w, __ATOMIC_RELAXED);
		while ((int64_t)(value - old) > 0 &&
		       !__atomic_compare_exchange_n(w, &old, value, false, __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED))
			;
		break;
	}
}

#endif /* SIGNAL_REF_H */
