// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every sysfs and debugfs file of the module reads back (under a time
 * limit), shows what GET_PARAM shows, and refuses what it must refuse.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <signal.h>

#include "vaccel_common.h"
#include "kselftest_harness.h"

static void on_alarm(int sig)
{
	(void)sig;
	fprintf(stderr, "reading a file took more than 5 s\n");
	_exit(1);
}

/* Read every readable regular file under @dir, @depth levels deep. */
static int read_tree(struct __test_metadata *_metadata, const char *dir,
		     int depth)
{
	struct dirent *de;
	int files = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[600], buf[8192];
		struct stat st;

		/*
		 * power/ belongs to the PM core (autosuspend_delay_ms reads
		 * -EIO on devices without autosuspend), not to vaccel.
		 */
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "power"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode) && depth > 0) {
			files += read_tree(_metadata, path, depth - 1);
		} else if (S_ISREG(st.st_mode) && (st.st_mode & 0444)) {
			alarm(5);
			EXPECT_LE(0, vaccel_read_file(path, buf, sizeof(buf)))
				TH_LOG("reading %s", path);
			alarm(0);
			files++;
		}
	}
	closedir(d);
	return files;
}

FIXTURE(fs) {
	int unused;
};

FIXTURE_SETUP(fs)
{
	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	signal(SIGALRM, on_alarm);
}

FIXTURE_TEARDOWN(fs)
{
}

TEST_F(fs, read_all_sysfs)
{
	/* settings, uevent, accel/accelN/{dev,uevent} */
	EXPECT_LE(6, read_tree(_metadata, VACCEL_BUS "/devices/vaccel0/", 2));
	read_tree(_metadata, VACCEL_BUS "/drivers/vaccel", 0);
	read_tree(_metadata, "/sys/module/vaccel", 1);
}

TEST_F(fs, read_all_debugfs)
{
	if (access("/sys/kernel/debug/accel", F_OK))
		SKIP(return, "debugfs is not mounted");
	EXPECT_EQ(1, read_tree(_metadata, VACCEL_DEBUGFS, 0));
	EXPECT_LE(1, read_tree(_metadata, ACCEL_DEBUGFS "/vaccel0", 1));
}

/* debugfs info agrees with sysfs for every setting. */
TEST_F(fs, debugfs_info_matches_sysfs)
{
	static const char *keys[] = {
		"engines", "memory", "link_bw_mbps", "link_latency_ns",
		"poll_budget_ns",
	};
	char info[4096], spec[160], path[128], *p;
	unsigned int i;
	uint64_t v;

	if (access("/sys/kernel/debug/accel", F_OK))
		SKIP(return, "debugfs is not mounted");
	vaccel_del_device(VACCEL_TEST_ID);
	snprintf(spec, sizeof(spec),
		 "%u engines=3 memory=32M link_bw_mbps=7 link_latency_ns=9 poll_budget_ns=11",
		 VACCEL_TEST_ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	snprintf(path, sizeof(path), ACCEL_DEBUGFS "/vaccel%u/info", VACCEL_TEST_ID);
	ASSERT_LT(0, vaccel_read_file(path, info, sizeof(info)));
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char line[64];

		snprintf(path, sizeof(path), VACCEL_BUS "/devices/vaccel%u/%s",
			 VACCEL_TEST_ID, keys[i]);
		ASSERT_EQ(0, vaccel_read_u64(path, &v));
		snprintf(line, sizeof(line), "%s %llu\n", keys[i],
			 (unsigned long long)v);
		p = strstr(info, line);
		EXPECT_NE(NULL, p) TH_LOG("'%s' missing from info:\n%s", line, info);
	}
	EXPECT_NE(NULL, strstr(info, "open_files 0\n"));
	EXPECT_EQ(0, vaccel_del_device(VACCEL_TEST_ID));
	/* the directory goes away with the device */
	snprintf(path, sizeof(path), ACCEL_DEBUGFS "/vaccel%u", VACCEL_TEST_ID);
	EXPECT_NE(0, access(path, F_OK));
}

TEST_F(fs, settings_are_read_only)
{
	int fd = open(VACCEL_BUS "/devices/vaccel0/engines", O_WRONLY);

	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EACCES, errno);
	if (fd >= 0)
		close(fd);
}

TEST_F(fs, bus_files_are_write_only)
{
	int fd = open(VACCEL_BUS "/new_device", O_RDONLY);

	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EACCES, errno);
	if (fd >= 0)
		close(fd);
	fd = open(VACCEL_BUS "/del_device", O_RDONLY);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EACCES, errno);
	if (fd >= 0)
		close(fd);
}

TEST_HARNESS_MAIN
