/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers for tests that run as an unprivileged user: the test user of
 * the VM rig (/etc/passwd "vaccel", a member of group "render"), device
 * nodes given the access the udev rule gives them, the RLIMIT_MEMLOCK
 * accounting counters (VmPin, VmLck, /proc/meminfo), read-only PRIME
 * export, and the other drivers (vgem, vivid) used as foreign importers.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef VACCEL_UNPRIV_H
#define VACCEL_UNPRIV_H

#include <grp.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "vaccel_common.h"

/* The unprivileged test user and the group the udev rule names. */
#define VACCEL_TEST_USER	"vaccel"
#define VACCEL_RENDER_GROUP	"render"

struct vaccel_user {
	uid_t uid;
	gid_t gid;
	gid_t render;
};

/* Look the test user and the render group up; 0 or -ENOENT. */
static inline int vaccel_user_get(struct vaccel_user *u)
{
	struct passwd *pw = getpwnam(VACCEL_TEST_USER);
	struct group *gr = getgrnam(VACCEL_RENDER_GROUP);

	if (!pw || !gr || !pw->pw_uid)
		return -ENOENT;
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	u->render = gr->gr_gid;
	return 0;
}

/*
 * In a forked child: become the test user with exactly the groups
 * /etc/group gives it (render among them), after setting RLIMIT_MEMLOCK
 * to @memlock bytes (both limits; ~0 leaves it alone). 0 or -errno.
 */
static inline int vaccel_user_enter(const struct vaccel_user *u,
				    unsigned long long memlock)
{
	if (memlock != ~0ULL) {
		struct rlimit rl = { memlock, memlock };

		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			return -errno;
	}
	if (initgroups(VACCEL_TEST_USER, u->gid))
		return -errno;
	if (setresgid(u->gid, u->gid, u->gid))
		return -errno;
	if (setresuid(u->uid, u->uid, u->uid))
		return -errno;
	return 0;
}

/*
 * A device node as udev/60-vaccel.rules leaves it (root:render, 0660), and
 * how it was before, to put back with vaccel_node_restore().
 * vaccel_udev_test checks that the rule itself does exactly this.
 */
struct vaccel_node {
	char path[300];
	uid_t uid;
	gid_t gid;
	mode_t mode;
};

static inline int vaccel_node_render(unsigned int id, const struct vaccel_user *u,
				     struct vaccel_node *n)
{
	struct stat st;
	int ret = vaccel_node_path(id, n->path, sizeof(n->path));

	if (ret)
		return ret;
	if (stat(n->path, &st))
		return -errno;
	n->uid = st.st_uid;
	n->gid = st.st_gid;
	n->mode = st.st_mode & 07777;
	if (chown(n->path, 0, u->render) || chmod(n->path, 0660))
		return -errno;
	return 0;
}

static inline void vaccel_node_restore(const struct vaccel_node *n)
{
	if (chown(n->path, n->uid, n->gid) == 0)
		chmod(n->path, n->mode);
}

/* A file of another driver made usable by the test user (0666); restorable. */
static inline int vaccel_path_open_to_all(const char *path, struct vaccel_node *n)
{
	struct stat st;

	snprintf(n->path, sizeof(n->path), "%s", path);
	if (stat(path, &st))
		return -errno;
	n->uid = st.st_uid;
	n->gid = st.st_gid;
	n->mode = st.st_mode & 07777;
	return chmod(path, 0666) ? -errno : 0;
}

/* "<key>: <n> kB" of a /proc file, in bytes; -1 if absent. */
static inline long long vaccel_proc_kb(const char *file, const char *key)
{
	char buf[8192], want[64], *p;
	size_t len;

	if (vaccel_read_file(file, buf, sizeof(buf)) < 0)
		return -1;
	len = (size_t)snprintf(want, sizeof(want), "%s:", key);
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, want, len))
			return strtoll(p + len, NULL, 10) * 1024;
	return -1;
}

static inline long long vaccel_vmpin(void)
{
	return vaccel_proc_kb("/proc/self/status", "VmPin");
}

static inline long long vaccel_vmlck_now(void)
{
	return vaccel_proc_kb("/proc/self/status", "VmLck");
}

static inline long long vaccel_meminfo(const char *key)
{
	return vaccel_proc_kb("/proc/meminfo", key);
}

/*
 * Poll /proc/meminfo @key until it is within @slack bytes of @want (the
 * LRU lists are updated in per-CPU batches) or @ms passed; last value.
 */
static inline long long vaccel_meminfo_near(const char *key, long long want,
					    long long slack, unsigned int ms)
{
	uint64_t end = vaccel_now_ms() + ms;
	long long v;

	for (;;) {
		v = vaccel_meminfo(key);
		if ((v >= want - slack && v <= want + slack) || vaccel_now_ms() >= end)
			return v;
		vaccel_msleep(20);
	}
}

/* PRIME export without DRM_RDWR: a read-only dma-buf. */
static inline int vaccel_prime_export_ro(int fd, uint32_t handle, int *dmabuf)
{
	struct drm_prime_handle args = {
		.handle = handle, .flags = DRM_CLOEXEC, .fd = -1,
	};

	*dmabuf = -1;
	if (ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &args))
		return -errno;
	*dmabuf = args.fd;
	return 0;
}

/*
 * vgem, the virtual GEM driver: a foreign importer that attaches to a
 * dma-buf and maps it DMA_BIDIRECTIONAL when it is imported. Path of its
 * render node, or -ENOENT when vgem is not loaded.
 */
static inline int vaccel_vgem_path(char *path, size_t len)
{
	struct dirent *de;
	DIR *d = opendir("/sys/bus/platform/devices/vgem/drm");
	int ret = -ENOENT;

	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		if (!strncmp(de->d_name, "renderD", 7)) {
			snprintf(path, len, "/dev/dri/%.32s", de->d_name);
			ret = 0;
			break;
		}
	}
	closedir(d);
	return ret;
}

/* Import @dmabuf into the vgem file @vfd (attach + map); 0 or -errno. */
static inline int vaccel_vgem_import(int vfd, int dmabuf, uint32_t *handle)
{
	struct drm_prime_handle args = { .fd = dmabuf };

	*handle = 0;
	if (ioctl(vfd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &args))
		return -errno;
	*handle = args.handle;
	return 0;
}

#endif /* VACCEL_UNPRIV_H */
