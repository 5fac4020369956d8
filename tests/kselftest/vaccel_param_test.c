// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device nodes, DRM identity and GET_PARAM of the load-time devices.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <sys/sysmacros.h>
#include <sys/wait.h>


#include "vaccel_common.h"
#include "kselftest_harness.h"

FIXTURE(dev) {
	int fd;
	unsigned int id;
};

FIXTURE_SETUP(dev)
{
	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	self->id = 0;
	self->fd = vaccel_open(self->id);
	if (self->fd == -ENOENT)
		SKIP(return, "vaccel device 0 does not exist");
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* The module parameter's devices exist and each has an accel node. */
TEST(load_time_devices)
{
	uint64_t n;
	unsigned int i;

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, vaccel_read_u64("/sys/module/vaccel/parameters/num_devices", &n));
	for (i = 0; i < n; i++) {
		char path[300];
		struct stat st;

		ASSERT_EQ(0, vaccel_node_path(i, path, sizeof(path)));
		ASSERT_EQ(0, stat(path, &st));
		EXPECT_TRUE(S_ISCHR(st.st_mode));
		EXPECT_EQ(261, major(st.st_rdev));	/* ACCEL_MAJOR */
	}
}

TEST_F(dev, drm_version)
{
	char name[32] = {}, desc[128] = {}, date[32] = {};
	struct drm_version v = {
		.name = name, .name_len = sizeof(name) - 1,
		.desc = desc, .desc_len = sizeof(desc) - 1,
		.date = date, .date_len = sizeof(date) - 1,
	};

	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VERSION, &v));
	EXPECT_STREQ("vaccel", name);
	/* the major is fixed; the minor is the uAPI version (uAPI 2 had it in the major) */
	EXPECT_EQ(1, v.version_major);
	EXPECT_EQ(VACCEL_UAPI_VERSION, v.version_minor);
}

static uint64_t sysfs_setting(struct __test_metadata *_metadata,
			      unsigned int id, const char *key)
{
	char path[128];
	uint64_t v = 0;

	snprintf(path, sizeof(path), VACCEL_BUS "/devices/vaccel%u/%s", id, key);
	EXPECT_EQ(0, vaccel_read_u64(path, &v));
	return v;
}

TEST_F(dev, every_param)
{
	uint64_t v = 0;

	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_UAPI_VERSION, &v));
	EXPECT_EQ(VACCEL_UAPI_VERSION, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_DEVICE_ID, &v));
	EXPECT_EQ(self->id, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_NUM_ENGINES, &v));
	EXPECT_EQ(sysfs_setting(_metadata, self->id, "engines"), v);
	EXPECT_EQ(4, v);	/* default */
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_MEMORY_CAPACITY, &v));
	EXPECT_EQ(sysfs_setting(_metadata, self->id, "memory"), v);
	EXPECT_EQ(1ULL << 30, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_VA_START, &v));
	EXPECT_EQ(1ULL << 32, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_VA_SIZE, &v));
	EXPECT_EQ((1ULL << 48) - (1ULL << 32), v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_CAPABILITIES, &v));
	EXPECT_EQ(DRM_VACCEL_CAP_HOTPLUG | DRM_VACCEL_CAP_EXEC_BINDINGS | DRM_VACCEL_CAP_MATMUL |
		  DRM_VACCEL_CAP_SIGNAL_EVENTFD | DRM_VACCEL_CAP_ENGINE_SPLIT, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_LINK_BANDWIDTH, &v));
	EXPECT_EQ(sysfs_setting(_metadata, self->id, "link_bw_mbps"), v);
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_LINK_LATENCY, &v));
	EXPECT_EQ(sysfs_setting(_metadata, self->id, "link_latency_ns"), v);
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_POLL_BUDGET, &v));
	EXPECT_EQ(sysfs_setting(_metadata, self->id, "poll_budget_ns"), v);
	EXPECT_EQ(50000, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_MEMORY_USED, &v));
	EXPECT_EQ(0, v);	/* nothing allocated on device 0 yet */
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_MAX_BOS, &v));
	EXPECT_EQ(4096, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_MAX_MAPPINGS, &v));
	EXPECT_EQ(4096, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_MAX_QUEUES, &v));
	EXPECT_EQ(64, v);
}

TEST_F(dev, unknown_param)
{
	uint64_t v = 0;

	EXPECT_EQ(-EINVAL, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_MAX_QUEUES + 1, &v));
	EXPECT_EQ(-EINVAL, vaccel_get_param(self->fd, 0xffffffffu, &v));
}

TEST_F(dev, nonzero_pad)
{
	struct drm_vaccel_get_param args = {
		.param = DRM_VACCEL_PARAM_UAPI_VERSION,
		.pad = 1,
	};

	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VACCEL_GET_PARAM, &args));
	EXPECT_EQ(EINVAL, errno);
	args.pad = 0x80000000u;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VACCEL_GET_PARAM, &args));
	EXPECT_EQ(EINVAL, errno);
}

/* A driver ioctl number past the table is rejected by the DRM core. */
TEST_F(dev, unknown_ioctl)
{
	struct drm_vaccel_get_param args = {};

	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOWR(DRM_COMMAND_BASE + 0x3f,
					       struct drm_vaccel_get_param), &args));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * No driver ioctl needs DRM authentication (on accel nodes only
 * CAP_SYS_ADMIN openers are authenticated): an unprivileged opener can
 * use them.
 */
TEST_F(dev, unprivileged_get_param)
{
	char path[300];
	struct stat st;
	int status;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root to drop privileges");
	ASSERT_EQ(0, vaccel_node_path(self->id, path, sizeof(path)));
	ASSERT_EQ(0, stat(path, &st));
	ASSERT_EQ(0, chmod(path, 0666));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint64_t v = 0;
		int fd;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		fd = open(path, O_RDWR);
		if (fd < 0)
			_exit(11);
		if (vaccel_get_param(fd, DRM_VACCEL_PARAM_UAPI_VERSION, &v))
			_exit(12);
		_exit(v == VACCEL_UAPI_VERSION ? 0 : 13);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	chmod(path, st.st_mode & 07777);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
