/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the vaccel kselftests: finding devices, sysfs and
 * debugfs access, reading the kernel log.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef VACCEL_COMMON_H
#define VACCEL_COMMON_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <drm/vaccel_accel.h>

#define VACCEL_BUS		"/sys/bus/vaccel"
#define VACCEL_DEBUGFS		"/sys/kernel/debug/vaccel"
#define ACCEL_DEBUGFS		"/sys/kernel/debug/accel"

/* Ids used by tests for devices they create; load-time devices are 0..N-1. */
#define VACCEL_TEST_ID		900

static inline bool vaccel_present(void)
{
	return access(VACCEL_BUS "/new_device", W_OK) == 0;
}

/* Write @str to a sysfs file; 0 or -errno of the write. */
static inline int vaccel_sysfs_write(const char *path, const char *str)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;
	int ret = 0;

	if (fd < 0)
		return -errno;
	n = write(fd, str, strlen(str));
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != strlen(str))
		ret = -EIO;
	close(fd);
	return ret;
}

/* Read a whole small file into @buf (NUL terminated); bytes or -errno. */
static inline ssize_t vaccel_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n, total = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)total < len - 1) {
		n = read(fd, buf + total, len - 1 - total);
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		total += n;
	}
	buf[total] = '\0';
	close(fd);
	return total;
}

/* Read a decimal number from a file; 0 or -errno. */
static inline int vaccel_read_u64(const char *path, uint64_t *val)
{
	char buf[64], *end;
	ssize_t n = vaccel_read_file(path, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	errno = 0;
	*val = strtoull(buf, &end, 0);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

static inline int vaccel_new_device(const char *spec)
{
	return vaccel_sysfs_write(VACCEL_BUS "/new_device", spec);
}

static inline int vaccel_del_device(unsigned int id)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%u", id);
	return vaccel_sysfs_write(VACCEL_BUS "/del_device", buf);
}

/* Path of the accel node ("/dev/accel/accelN") of bus device @id. */
static inline int vaccel_node_path(unsigned int id, char *path, size_t len)
{
	char dir[128];
	struct dirent *de;
	DIR *d;
	int ret = -ENOENT;

	snprintf(dir, sizeof(dir), VACCEL_BUS "/devices/vaccel%u/accel", id);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!strncmp(de->d_name, "accel", 5)) {
			snprintf(path, len, "/dev/accel/%s", de->d_name);
			ret = 0;
			break;
		}
	}
	closedir(d);
	return ret;
}

/* Open the accel node of bus device @id; fd or -errno. */
static inline int vaccel_open(unsigned int id)
{
	char path[300];
	int fd, ret = vaccel_node_path(id, path, sizeof(path));

	if (ret)
		return ret;
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* GET_PARAM; 0 or -errno. */
static inline int vaccel_get_param(int fd, uint32_t param, uint64_t *value)
{
	struct drm_vaccel_get_param args = { .param = param };

	if (ioctl(fd, DRM_IOCTL_VACCEL_GET_PARAM, &args))
		return -errno;
	*value = args.value;
	return 0;
}

/* Read a counter from /sys/kernel/debug/vaccel/objects; -1 if absent. */
static inline long vaccel_objects(const char *name)
{
	char buf[256], *p;
	size_t len = strlen(name);

	if (vaccel_read_file(VACCEL_DEBUGFS "/objects", buf, sizeof(buf)) < 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ' ')
			return strtol(p + len + 1, NULL, 10);
	return -1;
}

/*
 * Kernel log capture: open /dev/kmsg positioned at its end, then collect
 * what was logged since into a buffer.
 */
static inline int vaccel_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/* True if a record logged since vaccel_kmsg_open() contains @needle. */
static inline bool vaccel_kmsg_contains(int fd, const char *needle)
{
	char rec[1024];
	ssize_t n;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0) {
			if (errno == EPIPE)	/* overwritten records: go on */
				continue;
			return false;		/* EAGAIN: nothing more */
		}
		rec[n] = '\0';
		if (strstr(rec, needle))
			return true;
	}
}

#endif /* VACCEL_COMMON_H */
