/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers of the libaccel tests (tests/lib/, one binary per *_test.c), which
 * run on both backends from one source: in the VM against the module, and
 * natively against the in-process device (ACCEL_BACKEND=sim, see
 * Documentation/testing.rst, "Backends"). Fresh devices are made through the
 * library's bus calls (accel_bus_new_device(): the module's
 * /sys/bus/vaccel or the in-process bus), fault knobs and object counters
 * read through accel_device_debug_*() (debugfs, or the in-process device's
 * own files). A test that needs the module itself (a raw ioctl on the
 * node's fd, the kernel log) says so with LIB_MODULE_ONLY().
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef LIBACCEL_TEST_H
#define LIBACCEL_TEST_H

#include <accel/accel.h>

#include "../kselftest/vaccel_common.h"

/* The tests run on the in-process device (ACCEL_BACKEND=sim). */
static inline bool lib_on_sim(void)
{
	const char *b = getenv("ACCEL_BACKEND");

	return b && !strcmp(b, "sim");
}

/* A device can be made: the in-process bus always, the module when loaded (and root). */
static inline bool lib_present(void)
{
	return lib_on_sim() || vaccel_present();
}

/*
 * Skip the rest of a test (from a fixture's setup or a test's body) on the
 * in-process device, with the reason: the conformance list of
 * Documentation/testing.rst names every use.
 */
#define LIB_MODULE_ONLY(why) do {						\
	if (lib_on_sim())							\
		SKIP(return, "module only: %s", why);				\
} while (0)

/* The other way round: a test that needs the in-process device (listed too). */
#define LIB_SIM_ONLY(why) do {							\
	if (!lib_on_sim())							\
		SKIP(return, "in-process device only: %s", why);		\
} while (0)

/*
 * Counter @key of @dev's "stats" file (the module's debugfs or the
 * in-process device's), or -1 without one.
 */
static inline long long lib_dev_stat(struct accel_device *dev, const char *key)
{
	char buf[4096];

	if (accel_device_debug_read(dev, "stats", buf, sizeof(buf)) < 0)
		return -1;
	return vaccel_kv(buf, key);
}

static inline int lib_new_device(const char *spec)
{
	return accel_bus_new_device(spec);
}

static inline int lib_del_device(unsigned int id)
{
	return accel_bus_del_device(id);
}

/* The path accel_device_open_path() takes for device @id of the backend. */
static inline int lib_node_path(unsigned int id, char *path, size_t len)
{
	if (lib_on_sim()) {
		snprintf(path, len, "sim:%u", id);
		return 0;
	}
	return vaccel_node_path(id, path, len);
}

/*
 * A raw fd of a new file of bus device @id, as a program holds one: the
 * node opened (module), or a dup() of the fd of a new library device
 * (in-process device: there the library's device is what holds the file,
 * *@holder, to close after the test; NULL on the module). -errno.
 */
static inline int lib_raw_open(unsigned int id, struct accel_device **holder)
{
	char path[64];
	int fd, ret;

	*holder = NULL;
	if (!lib_on_sim())
		return vaccel_open(id);
	snprintf(path, sizeof(path), "sim:%u", id);
	ret = accel_device_open_path(path, holder);
	if (ret)
		return ret;
	fd = dup(accel_device_fd(*holder));
	return fd < 0 ? -errno : fd;
}

/*
 * The drm-client-id of @dev's file (its context, the same through every
 * dup() of its fd): /proc/self/fdinfo on the module, the sim's "fdinfo";
 * -1 if it cannot be read.
 */
static inline long long lib_client_id(struct accel_device *dev)
{
	char buf[1024], *p;

	if (accel_device_debug_read(dev, "fdinfo", buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "drm-client-id:");
	return p ? strtoll(p + strlen("drm-client-id:"), NULL, 10) : -1;
}

/* Delete any device @id, then create it from @spec ("ID key=value ..."). */
static inline int lib_fresh_device(unsigned int id, const char *spec)
{
	lib_del_device(id);
	return lib_new_device(spec);
}

/*
 * A counter of the backend's objects ("bos", "mappings", "files",
 * "devices": the module's /sys/kernel/debug/vaccel/objects, or the
 * in-process device's process-wide counters); -1 if it cannot be read.
 */
static inline long lib_objects(const char *name)
{
	char buf[512];

	if (accel_device_debug_read(NULL, "objects", buf, sizeof(buf)) < 0)
		return -1;
	return (long)vaccel_kv(buf, name);
}

/* lib_objects(@name) once it is @want, or after @ms; its last value. */
static inline long lib_objects_wait(const char *name, long want, unsigned int ms)
{
	uint64_t end = vaccel_now_ms() + ms;
	long v;

	for (;;) {
		v = lib_objects(name);
		if (v == want || vaccel_now_ms() >= end)
			return v;
		vaccel_msleep(10);
	}
}

static inline void lib_counts_read(struct vaccel_counts *c)
{
	c->bos = lib_objects("bos");
	c->mappings = lib_objects("mappings");
	c->files = lib_objects("files");
	c->devices = lib_objects("devices");
}

/* In a test or teardown: each of the backend's counters is back to @c within @ms. */
#define EXPECT_LIB_COUNTS_BACK(c, ms) do {					\
	EXPECT_LE(0, (c)->bos) TH_LOG("the backend's object counters cannot be read"); \
	EXPECT_EQ((c)->bos, lib_objects_wait("bos", (c)->bos, ms));		\
	EXPECT_EQ((c)->mappings, lib_objects_wait("mappings", (c)->mappings, ms)); \
	EXPECT_EQ((c)->files, lib_objects_wait("files", (c)->files, ms));	\
	EXPECT_EQ((c)->devices, lib_objects_wait("devices", (c)->devices, ms)); \
} while (0)

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
	ret = lib_fresh_device(id, spec);
	if (ret)
		return ret;
	idx = lib_index_of(id);
	if (idx < 0)
		return idx;
	return accel_device_open((unsigned int)idx, dev);
}

/*
 * A fixture's device: bus device @id deleted, the backend's object counts
 * read into @counts (the teardown expects them back), then @id created
 * fresh with @settings and opened through the library.
 */
static inline int lib_counted_open(unsigned int id, const char *settings,
				   struct vaccel_counts *counts, struct accel_device **dev)
{
	lib_del_device(id);
	lib_counts_read(counts);
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
