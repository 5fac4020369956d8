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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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

/*
 * Memory uAPI: buffer objects, VM_BIND, PRIME. Every wrapper returns 0 or
 * -errno, so that tests can compare the exact error.
 */
#define VACCEL_PAGE		4096ULL
#define VACCEL_VA_LO		(1ULL << 32)	/* first byte of the VA window */
#define VACCEL_VA_HI		(1ULL << 48)	/* end of the VA window */

static inline int vaccel_bo_create(int fd, uint64_t size, uint32_t flags,
				   struct drm_vaccel_bo_create *out)
{
	struct drm_vaccel_bo_create args = { .size = size, .flags = flags };

	if (ioctl(fd, DRM_IOCTL_VACCEL_BO_CREATE, &args))
		return -errno;
	if (out)
		*out = args;
	return 0;
}

/* BO_CREATE returning only the handle. */
static inline int vaccel_bo_new(int fd, uint64_t size, uint32_t flags,
				uint32_t *handle)
{
	struct drm_vaccel_bo_create args = {};
	int ret = vaccel_bo_create(fd, size, flags, &args);

	if (handle)
		*handle = ret ? 0 : args.handle;
	return ret;
}

static inline int vaccel_bo_info(int fd, uint32_t handle,
				 struct drm_vaccel_bo_info *info)
{
	struct drm_vaccel_bo_info args = { .handle = handle };

	if (ioctl(fd, DRM_IOCTL_VACCEL_BO_INFO, &args))
		return -errno;
	if (info)
		*info = args;
	return 0;
}

static inline int vaccel_bo_seal(int fd, uint32_t handle)
{
	struct drm_vaccel_bo_seal args = { .handle = handle };

	return ioctl(fd, DRM_IOCTL_VACCEL_BO_SEAL, &args) ? -errno : 0;
}

static inline int vaccel_gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close args = { .handle = handle };

	return ioctl(fd, DRM_IOCTL_GEM_CLOSE, &args) ? -errno : 0;
}

static inline int vaccel_vm_bind(int fd, uint32_t handle, uint32_t flags,
				 uint64_t bo_offset, uint64_t va, uint64_t size)
{
	struct drm_vaccel_vm_bind args = {
		.handle = handle, .flags = flags, .bo_offset = bo_offset,
		.va = va, .size = size,
	};

	return ioctl(fd, DRM_IOCTL_VACCEL_VM_BIND, &args) ? -errno : 0;
}

static inline int vaccel_vm_unbind(int fd, uint64_t va, uint64_t size)
{
	struct drm_vaccel_vm_unbind args = { .va = va, .size = size };

	return ioctl(fd, DRM_IOCTL_VACCEL_VM_UNBIND, &args) ? -errno : 0;
}

/* PRIME export (DRM_CLOEXEC | DRM_RDWR); the dma-buf fd in *@dmabuf. */
static inline int vaccel_prime_export(int fd, uint32_t handle, int *dmabuf)
{
	struct drm_prime_handle args = {
		.handle = handle, .flags = DRM_CLOEXEC | DRM_RDWR, .fd = -1,
	};

	*dmabuf = -1;
	if (ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &args))
		return -errno;
	*dmabuf = args.fd;
	return 0;
}

static inline int vaccel_prime_import(int fd, int dmabuf, uint32_t *handle)
{
	struct drm_prime_handle args = { .fd = dmabuf };

	*handle = 0;
	if (ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &args))
		return -errno;
	*handle = args.handle;
	return 0;
}

/* mmap(MAP_SHARED) of a buffer; MAP_FAILED with errno set on failure. */
static inline void *vaccel_bo_mmap(int fd, uint64_t offset, uint64_t size,
				   int prot)
{
	return mmap(NULL, size, prot, MAP_SHARED, fd, (off_t)offset);
}

/* GET_PARAM MEMORY_USED; ~0 if it fails. */
static inline uint64_t vaccel_memory_used(int fd)
{
	uint64_t v = 0;

	return vaccel_get_param(fd, DRM_VACCEL_PARAM_MEMORY_USED, &v) ? ~0ULL : v;
}

static inline void vaccel_msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static inline uint64_t vaccel_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Poll an objects counter until it equals @want or @ms milliseconds have
 * passed (frees may be deferred to a workqueue); the last value read.
 */
static inline long vaccel_objects_wait(const char *name, long want,
				       unsigned int ms)
{
	uint64_t end = vaccel_now_ms() + ms;
	long v;

	for (;;) {
		v = vaccel_objects(name);
		if (v == want || vaccel_now_ms() >= end)
			return v;
		vaccel_msleep(10);
	}
}

/* Poll MEMORY_USED of @fd until it is @want, like vaccel_objects_wait(). */
static inline uint64_t vaccel_memory_used_wait(int fd, uint64_t want,
					       unsigned int ms)
{
	uint64_t end = vaccel_now_ms() + ms;
	uint64_t v;

	for (;;) {
		v = vaccel_memory_used(fd);
		if (v == want || vaccel_now_ms() >= end)
			return v;
		vaccel_msleep(10);
	}
}

/* VmLck of this process in bytes (from /proc/self/status); -1 if absent. */
static inline long long vaccel_vmlck(void)
{
	char buf[4096], *p;

	if (vaccel_read_file("/proc/self/status", buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "\nVmLck:");
	if (!p)
		return -1;
	return strtoll(p + 7, NULL, 10) * 1024;
}

/* Read /sys/kernel/debug/accel/vaccel<id>/<file>; bytes or -errno. */
static inline ssize_t vaccel_dev_debugfs(unsigned int id, const char *file,
					 char *buf, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), ACCEL_DEBUGFS "/vaccel%u/%s", id, file);
	return vaccel_read_file(path, buf, len);
}

/* Write @str to /sys/kernel/debug/accel/vaccel<id>/<file>; 0 or -errno. */
static inline int vaccel_dev_debugfs_write(unsigned int id, const char *file,
					   const char *str)
{
	char path[128];

	snprintf(path, sizeof(path), ACCEL_DEBUGFS "/vaccel%u/%s", id, file);
	return vaccel_sysfs_write(path, str);
}

/*
 * Value of the line "<key> <number>" in a debugfs text; -1 when there is
 * no such line.
 */
static inline long long vaccel_kv(const char *text, const char *key)
{
	size_t len = strlen(key);
	const char *p;

	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, len) && p[len] == ' ')
			return strtoll(p + len + 1, NULL, 0);
	return -1;
}

/* Value of "<key> <number>" in debugfs file @file of device @id, or -1. */
static inline long long vaccel_dev_stat(unsigned int id, const char *file,
					const char *key)
{
	char buf[8192];

	if (vaccel_dev_debugfs(id, file, buf, sizeof(buf)) < 0)
		return -1;
	return vaccel_kv(buf, key);
}

/* Delete device @id if it exists, then create it from @spec ("ID k=v..."). */
static inline int vaccel_fresh_device(unsigned int id, const char *spec)
{
	vaccel_del_device(id);
	return vaccel_new_device(spec);
}

/*
 * Checks for forked children of a test, which must not use the harness's
 * ASSERT/EXPECT (an ASSERT would run the fixture teardown in the child):
 * print what failed and exit 1.
 */
#define CHILD_ASSERT(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "# child %d: %s:%d: %s (errno %d)\n",	\
			(int)getpid(), __FILE__, __LINE__, #cond, errno); \
		_exit(1);						\
	}								\
} while (0)
#define CHILD_EQ(expected, seen) do {					\
	long long __e = (long long)(expected), __s = (long long)(seen); \
	if (__e != __s) {						\
		fprintf(stderr, "# child %d: %s:%d: %s == %s: expected %lld, got %lld\n", \
			(int)getpid(), __FILE__, __LINE__, #expected, #seen, \
			__e, __s);					\
		_exit(1);						\
	}								\
} while (0)

/*
 * Live-object counters a fixture records first and expects back at the
 * end: whatever a test did, everything it made must be freed.
 */
struct vaccel_counts {
	long bos, mappings, files, devices;
};

static inline void vaccel_counts_read(struct vaccel_counts *c)
{
	c->bos = vaccel_objects("bos");
	c->mappings = vaccel_objects("mappings");
	c->files = vaccel_objects("files");
	c->devices = vaccel_objects("devices");
}

/* In a test or teardown: each counter is back to @c within @ms. */
#define EXPECT_COUNTS_BACK(c, ms) do {						\
	EXPECT_EQ((c)->bos, vaccel_objects_wait("bos", (c)->bos, ms));		\
	EXPECT_EQ((c)->mappings, vaccel_objects_wait("mappings", (c)->mappings, ms)); \
	EXPECT_EQ((c)->files, vaccel_objects_wait("files", (c)->files, ms));	\
	EXPECT_EQ((c)->devices, vaccel_objects_wait("devices", (c)->devices, ms)); \
} while (0)

/*
 * Fresh devices @ida and @idb, each created with @settings ("memory=64M"),
 * and one file open on each in *@a and *@b. Returns 0 or -errno.
 */
static inline int vaccel_pair_open(unsigned int ida, unsigned int idb, const char *settings,
				   int *a, int *b)
{
	char spec[128];
	int ret;

	*a = *b = -1;
	snprintf(spec, sizeof(spec), "%u %s", ida, settings);
	ret = vaccel_fresh_device(ida, spec);
	if (ret)
		return ret;
	snprintf(spec, sizeof(spec), "%u %s", idb, settings);
	ret = vaccel_fresh_device(idb, spec);
	if (ret)
		return ret;
	*a = vaccel_open(ida);
	if (*a < 0)
		return *a;
	*b = vaccel_open(idb);
	return *b < 0 ? *b : 0;
}

/* Close what vaccel_pair_open() opened and delete both devices. */
static inline void vaccel_pair_close(unsigned int ida, unsigned int idb, int a, int b)
{
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	vaccel_del_device(ida);
	vaccel_del_device(idb);
}

/* Wait for a forked child: its exit status, 128 + signal, or -1. */
static inline int vaccel_wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

#endif /* VACCEL_COMMON_H */
