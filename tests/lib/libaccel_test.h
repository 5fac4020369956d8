/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers of the libaccel VM tests (tests/lib/, one binary per *_test.c): fresh devices
 * made through /sys/bus/vaccel and opened through the library.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef LIBACCEL_TEST_H
#define LIBACCEL_TEST_H

#include <accel/accel.h>

#include "../kselftest/vaccel_common.h"

/* Bus ids of the devices these tests create (vaccel_common.h uses 900). */
#define LIB_ID_A	960
#define LIB_ID_B	961

#define SEC		1000000000ll

/* Index in accel_device_list() of bus device @id; -ENODEV if absent. */
static inline int lib_index_of(unsigned int id)
{
	struct accel_device_info list[128];
	int n = accel_device_list(list, 128, sizeof(*list)), i;

	if (n < 0)
		return n;
	for (i = 0; i < n && i < 128; i++)
		if (list[i].id == id)
			return i;
	return -ENODEV;
}

/*
 * Create bus device @id with @settings ("memory=64M", or "") after
 * deleting any device of that id, and open it through the library.
 */
static inline int lib_fresh_open(unsigned int id, const char *settings, struct accel_device **dev)
{
	char spec[160];
	int ret, idx;

	*dev = NULL;
	snprintf(spec, sizeof(spec), "%u %s", id, settings);
	ret = vaccel_fresh_device(id, spec);
	if (ret)
		return ret;
	idx = lib_index_of(id);
	if (idx < 0)
		return idx;
	return accel_device_open((unsigned int)idx, dev);
}

/*
 * A fixture's device: bus device @id deleted, the kernel's object counts
 * read into @counts (the teardown expects them back), then @id created
 * fresh with @settings and opened through the library.
 */
static inline int lib_counted_open(unsigned int id, const char *settings,
				   struct vaccel_counts *counts, struct accel_device **dev)
{
	vaccel_del_device(id);
	vaccel_counts_read(counts);
	return lib_fresh_open(id, settings, dev);
}

/* Wait until @ev is done or @ms passed, without the library's wait. */
static inline bool lib_poll_done(const struct accel_event *ev, unsigned int ms)
{
	uint64_t end = vaccel_now_ms() + ms;

	while (!accel_event_done(ev)) {
		if (vaccel_now_ms() > end)
			return false;
		usleep(200);
	}
	return true;
}

#endif /* LIBACCEL_TEST_H */
