// SPDX-License-Identifier: GPL-2.0-only
/*
 * Module lifetime: unload is refused while anything holds the module,
 * succeeds afterwards with every object freed, and the num_devices
 * parameter is validated. Needs the module file in $VACCEL_KO to load it
 * back; skipped without it.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <sys/syscall.h>

#include "vaccel_common.h"
#include "kselftest_harness.h"

static int unload(void)
{
	return syscall(SYS_delete_module, "vaccel", O_NONBLOCK) ? -errno : 0;
}

static int load(const char *params)
{
	const char *ko = getenv("VACCEL_KO");
	int fd, ret;

	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

static bool loaded(void)
{
	return access("/sys/module/vaccel", F_OK) == 0;
}

FIXTURE(module) {
	uint64_t num_devices;
};

FIXTURE_SETUP(module)
{
	if (!getenv("VACCEL_KO"))
		SKIP(return, "set VACCEL_KO to the module file to run these");
	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, vaccel_read_u64("/sys/module/vaccel/parameters/num_devices",
				     &self->num_devices));
}

/* Leave the module loaded with its default devices, whatever happened. */
FIXTURE_TEARDOWN(module)
{
	if (getenv("VACCEL_KO") && !loaded())
		EXPECT_EQ(0, load(""));
}

/* After closing everything only the load-time devices remain. */
static void expect_idle(struct __test_metadata *_metadata, uint64_t n)
{
	EXPECT_EQ((long)n, vaccel_objects("bus_devices"));
	EXPECT_EQ((long)n, vaccel_objects("devices"));
	EXPECT_EQ(0, vaccel_objects("files"));
}

TEST_F(module, unload_refused_while_open)
{
	int fd = vaccel_open(0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EWOULDBLOCK, unload());
	EXPECT_TRUE(loaded());
	close(fd);
	expect_idle(_metadata, self->num_devices);
	ASSERT_EQ(0, unload());
	EXPECT_FALSE(loaded());
	EXPECT_NE(0, access(VACCEL_BUS, F_OK));
	EXPECT_NE(0, access(VACCEL_DEBUGFS, F_OK));

	ASSERT_EQ(0, load(""));
	EXPECT_EQ(0, access("/sys/bus/vaccel/devices/vaccel0", F_OK));
	fd = vaccel_open(0);
	ASSERT_LE(0, fd);
	close(fd);
	expect_idle(_metadata, 4);
}

/* A file of a deleted device still holds the module. */
TEST_F(module, unload_refused_after_del_device)
{
	char spec[32];
	int fd;

	snprintf(spec, sizeof(spec), "%u", VACCEL_TEST_ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	fd = vaccel_open(VACCEL_TEST_ID);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vaccel_del_device(VACCEL_TEST_ID));
	EXPECT_EQ(-EWOULDBLOCK, unload());
	close(fd);
	expect_idle(_metadata, self->num_devices);
	ASSERT_EQ(0, unload());
}

/* Unload removes run-time devices too. */
TEST_F(module, unload_with_runtime_devices)
{
	char spec[64];
	int fd;

	snprintf(spec, sizeof(spec), "%u engines=9", VACCEL_TEST_ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	fd = vaccel_open(VACCEL_TEST_ID);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load(""));
	EXPECT_EQ(-ENOENT, vaccel_open(VACCEL_TEST_ID));
}

TEST_F(module, num_devices_param)
{
	ASSERT_EQ(0, unload());
	EXPECT_EQ(-EINVAL, load("num_devices=65"));
	EXPECT_FALSE(loaded());

	ASSERT_EQ(0, load("num_devices=0"));
	EXPECT_EQ(-ENOENT, vaccel_open(0));
	expect_idle(_metadata, 0);
	ASSERT_EQ(0, vaccel_new_device("0"));
	EXPECT_EQ(0, vaccel_objects("files"));
	ASSERT_EQ(0, unload());

	ASSERT_EQ(0, load("num_devices=2"));
	expect_idle(_metadata, 2);
	EXPECT_EQ(-ENOENT, vaccel_open(2));
	ASSERT_EQ(0, unload());
	/* teardown loads the defaults back */
}

TEST_HARNESS_MAIN
