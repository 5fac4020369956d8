// SPDX-License-Identifier: GPL-2.0-only
/*
 * The vaccel bus: new_device and del_device with good and bad input,
 * per-device settings, and hot-unplug (del_device and driver unbind)
 * with files still open.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "vaccel_common.h"
#include "kselftest_harness.h"

#define ID	VACCEL_TEST_ID

static void del_quietly(unsigned int id)
{
	vaccel_del_device(id);
}

FIXTURE(bus) {
	int kmsg;
	long bus_devs, devices, files;
};

FIXTURE_SETUP(bus)
{
	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	del_quietly(ID);
	del_quietly(ID + 1);
	self->kmsg = vaccel_kmsg_open();
	self->bus_devs = vaccel_objects("bus_devices");
	self->devices = vaccel_objects("devices");
	self->files = vaccel_objects("files");
}

/* Whatever a test did, every object it made must be gone afterwards. */
FIXTURE_TEARDOWN(bus)
{
	if (!vaccel_present())
		return;
	del_quietly(ID);
	del_quietly(ID + 1);
	EXPECT_EQ(self->bus_devs, vaccel_objects("bus_devices"));
	EXPECT_EQ(self->devices, vaccel_objects("devices"));
	EXPECT_EQ(self->files, vaccel_objects("files"));
	if (self->kmsg >= 0)
		close(self->kmsg);
}

static uint64_t setting(struct __test_metadata *_metadata, unsigned int id,
			const char *key)
{
	char path[128];
	uint64_t v = 0;

	snprintf(path, sizeof(path), VACCEL_BUS "/devices/vaccel%u/%s", id, key);
	EXPECT_EQ(0, vaccel_read_u64(path, &v));
	return v;
}

TEST_F(bus, create_defaults)
{
	char spec[32];
	uint64_t v = 0;
	int fd;

	snprintf(spec, sizeof(spec), "%u", ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	EXPECT_EQ(self->bus_devs + 1, vaccel_objects("bus_devices"));
	EXPECT_EQ(self->devices + 1, vaccel_objects("devices"));
	EXPECT_EQ(4, setting(_metadata, ID, "engines"));
	EXPECT_EQ(1ULL << 30, setting(_metadata, ID, "memory"));
	fd = vaccel_open(ID);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vaccel_get_param(fd, DRM_VACCEL_PARAM_DEVICE_ID, &v));
	EXPECT_EQ(ID, v);
	close(fd);
	ASSERT_EQ(0, vaccel_del_device(ID));
	EXPECT_EQ(-ENOENT, vaccel_open(ID));
}

TEST_F(bus, create_with_settings)
{
	char spec[160];
	uint64_t v = 0;
	int fd;

	snprintf(spec, sizeof(spec),
		 "%u engines=7 memory=64M link_bw_mbps=25000 link_latency_ns=1500 poll_budget_ns=0\n",
		 ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	EXPECT_EQ(7, setting(_metadata, ID, "engines"));
	EXPECT_EQ(64ULL << 20, setting(_metadata, ID, "memory"));
	EXPECT_EQ(25000, setting(_metadata, ID, "link_bw_mbps"));
	EXPECT_EQ(1500, setting(_metadata, ID, "link_latency_ns"));
	EXPECT_EQ(0, setting(_metadata, ID, "poll_budget_ns"));

	fd = vaccel_open(ID);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vaccel_get_param(fd, DRM_VACCEL_PARAM_NUM_ENGINES, &v));
	EXPECT_EQ(7, v);
	ASSERT_EQ(0, vaccel_get_param(fd, DRM_VACCEL_PARAM_MEMORY_CAPACITY, &v));
	EXPECT_EQ(64ULL << 20, v);
	ASSERT_EQ(0, vaccel_get_param(fd, DRM_VACCEL_PARAM_LINK_BANDWIDTH, &v));
	EXPECT_EQ(25000, v);
	ASSERT_EQ(0, vaccel_get_param(fd, DRM_VACCEL_PARAM_LINK_LATENCY, &v));
	EXPECT_EQ(1500, v);
	ASSERT_EQ(0, vaccel_get_param(fd, DRM_VACCEL_PARAM_POLL_BUDGET, &v));
	EXPECT_EQ(0, v);
	close(fd);
}

TEST_F(bus, size_suffixes_and_bounds)
{
	static const struct { const char *spec; uint64_t memory; } ok[] = {
		{ "memory=1M", 1ULL << 20 },
		{ "memory=2g", 2ULL << 30 },
		{ "memory=1T", 1ULL << 40 },
		{ "memory=8192k", 8ULL << 20 },
		{ "memory=0x200000", 2ULL << 20 },
		{ "engines=1", 1ULL << 30 },
		{ "engines=64", 1ULL << 30 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char spec[96];

		snprintf(spec, sizeof(spec), "%u %s", ID, ok[i].spec);
		ASSERT_EQ(0, vaccel_new_device(spec)) TH_LOG("%s", spec);
		EXPECT_EQ(ok[i].memory, setting(_metadata, ID, "memory"));
		ASSERT_EQ(0, vaccel_del_device(ID));
	}
}

/* Each bad string: -EINVAL, no device left behind, and a log line why. */
TEST_F(bus, bad_new_device)
{
	static const struct { const char *spec; const char *why; } bad[] = {
		{ "\n", "is not a device id" },
		{ "abc", "is not a device id" },
		{ "-1", "is not a device id" },
		{ "1024", "is not a device id" },
		{ "4294967296", "is not a device id" },
		{ "900x", "is not a device id" },
		{ "900 engines", "is not key=value" },
		{ "900 colour=blue", "unknown key 'colour'" },
		{ "900 =4", "unknown key ''" },
		{ "900 engines=4 engines=5", "key 'engines' given twice" },
		{ "900 engines=", "'' is not a number" },
		{ "900 engines=four", "'four' is not a number" },
		{ "900 engines=0", "engines=0 out of range" },
		{ "900 engines=65", "engines=65 out of range" },
		{ "900 engines=4K", "'4K' is not a number" },
		{ "900 memory=1023K", "out of range" },
		{ "900 memory=2T", "out of range" },
		{ "900 memory=1048577", "is not a multiple of" },
		{ "900 memory=1049600", "is not a multiple of" },
		{ "900 memory=99999999999999999999", "is not a number" },
		{ "900 memory=16777216T", "is not a number" },
		{ "900 link_bw_mbps=1000001", "out of range" },
		{ "900 link_latency_ns=1000000001", "out of range" },
		{ "900 poll_budget_ns=-5", "is not a number" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, vaccel_new_device(bad[i].spec))
			TH_LOG("'%s' was accepted", bad[i].spec);
		EXPECT_EQ(-ENOENT, vaccel_open(ID)) TH_LOG("%s", bad[i].spec);
		if (self->kmsg >= 0)
			EXPECT_TRUE(vaccel_kmsg_contains(self->kmsg, bad[i].why))
				TH_LOG("no log line '%s' for '%s'", bad[i].why, bad[i].spec);
	}
}

TEST_F(bus, duplicate_id)
{
	char spec[32];

	snprintf(spec, sizeof(spec), "%u", ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	EXPECT_EQ(-EEXIST, vaccel_new_device(spec));
	EXPECT_EQ(-EEXIST, vaccel_new_device("0"));	/* load-time device */
	ASSERT_EQ(0, vaccel_del_device(ID));
	/* The id is free again. */
	ASSERT_EQ(0, vaccel_new_device(spec));
	ASSERT_EQ(0, vaccel_del_device(ID));
}

TEST_F(bus, bad_del_device)
{
	EXPECT_EQ(-ENOENT, vaccel_del_device(ID));
	EXPECT_EQ(-ENOENT, vaccel_del_device(1023));
	EXPECT_EQ(-EINVAL, vaccel_sysfs_write(VACCEL_BUS "/del_device", "1024"));
	EXPECT_EQ(-EINVAL, vaccel_sysfs_write(VACCEL_BUS "/del_device", "x"));
	/* (an empty write never reaches the driver: kernfs drops it) */
	EXPECT_EQ(-EINVAL, vaccel_sysfs_write(VACCEL_BUS "/del_device", "\n"));
	EXPECT_EQ(-EINVAL, vaccel_sysfs_write(VACCEL_BUS "/del_device", "0 1"));
	EXPECT_EQ(-EINVAL, vaccel_sysfs_write(VACCEL_BUS "/del_device", "0 engines=2"));
}

/* Two devices at once get distinct nodes and report their own ids. */
TEST_F(bus, two_devices)
{
	char spec[64], p0[300], p1[300];

	snprintf(spec, sizeof(spec), "%u engines=2", ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	snprintf(spec, sizeof(spec), "%u engines=3", ID + 1);
	ASSERT_EQ(0, vaccel_new_device(spec));
	ASSERT_EQ(0, vaccel_node_path(ID, p0, sizeof(p0)));
	ASSERT_EQ(0, vaccel_node_path(ID + 1, p1, sizeof(p1)));
	EXPECT_STRNE(p0, p1);
	EXPECT_EQ(2, setting(_metadata, ID, "engines"));
	EXPECT_EQ(3, setting(_metadata, ID + 1, "engines"));
}

/*
 * del_device while a file is open: ioctls on it fail with -ENODEV, the
 * node is gone, and closing the file frees the device.
 */
TEST_F(bus, del_device_with_open_file)
{
	char spec[32];
	uint64_t v = 0;
	int fd, fd2;

	snprintf(spec, sizeof(spec), "%u", ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	fd = vaccel_open(ID);
	ASSERT_LE(0, fd);
	fd2 = vaccel_open(ID);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(self->files + 2, vaccel_objects("files"));

	ASSERT_EQ(0, vaccel_del_device(ID));
	EXPECT_EQ(-ENODEV, vaccel_get_param(fd, DRM_VACCEL_PARAM_DEVICE_ID, &v));
	EXPECT_EQ(-ENODEV, vaccel_get_param(fd2, DRM_VACCEL_PARAM_DEVICE_ID, &v));
	EXPECT_EQ(-ENOENT, vaccel_open(ID));
	/* The DRM device lives on until its last file is closed. */
	EXPECT_EQ(self->devices + 1, vaccel_objects("devices"));
	close(fd);
	EXPECT_EQ(self->devices + 1, vaccel_objects("devices"));
	close(fd2);
	EXPECT_EQ(self->devices, vaccel_objects("devices"));
	EXPECT_EQ(self->bus_devs, vaccel_objects("bus_devices"));
	EXPECT_EQ(self->files, vaccel_objects("files"));
}

/* The same id can be created again while the old device's file is open. */
TEST_F(bus, recreate_while_old_file_open)
{
	char spec[32];
	uint64_t v = 0;
	int old, fd;

	snprintf(spec, sizeof(spec), "%u engines=2", ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	old = vaccel_open(ID);
	ASSERT_LE(0, old);
	ASSERT_EQ(0, vaccel_del_device(ID));
	snprintf(spec, sizeof(spec), "%u engines=5", ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	fd = vaccel_open(ID);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vaccel_get_param(fd, DRM_VACCEL_PARAM_NUM_ENGINES, &v));
	EXPECT_EQ(5, v);
	EXPECT_EQ(-ENODEV, vaccel_get_param(old, DRM_VACCEL_PARAM_NUM_ENGINES, &v));
	close(old);
	close(fd);
}

/* Unbinding the driver is a hot-unplug too; binding again brings it back. */
TEST_F(bus, unbind_and_rebind)
{
	char spec[32], name[32];
	uint64_t v = 0;
	int fd;

	snprintf(spec, sizeof(spec), "%u engines=3", ID);
	snprintf(name, sizeof(name), "vaccel%u", ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	fd = vaccel_open(ID);
	ASSERT_LE(0, fd);

	ASSERT_EQ(0, vaccel_sysfs_write(VACCEL_BUS "/drivers/vaccel/unbind", name));
	EXPECT_EQ(-ENODEV, vaccel_get_param(fd, DRM_VACCEL_PARAM_NUM_ENGINES, &v));
	EXPECT_EQ(-ENOENT, vaccel_open(ID));
	EXPECT_EQ(self->bus_devs + 1, vaccel_objects("bus_devices"));
	EXPECT_EQ(self->devices + 1, vaccel_objects("devices"));
	close(fd);
	EXPECT_EQ(self->devices, vaccel_objects("devices"));

	ASSERT_EQ(0, vaccel_sysfs_write(VACCEL_BUS "/drivers/vaccel/bind", name));
	fd = vaccel_open(ID);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vaccel_get_param(fd, DRM_VACCEL_PARAM_NUM_ENGINES, &v));
	EXPECT_EQ(3, v);	/* the settings belong to the bus device */
	close(fd);

	/* del_device of an unbound device works too. */
	ASSERT_EQ(0, vaccel_sysfs_write(VACCEL_BUS "/drivers/vaccel/unbind", name));
	ASSERT_EQ(0, vaccel_del_device(ID));
}

/* Many create/open/delete rounds leave nothing behind. */
TEST_F(bus, churn)
{
	char spec[32];
	int i, fd;

	snprintf(spec, sizeof(spec), "%u", ID);
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, vaccel_new_device(spec));
		fd = vaccel_open(ID);
		ASSERT_LE(0, fd);
		if (i & 1)
			close(fd);
		ASSERT_EQ(0, vaccel_del_device(ID));
		if (!(i & 1))
			close(fd);
	}
}

TEST_HARNESS_MAIN
