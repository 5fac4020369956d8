// SPDX-License-Identifier: MIT
/*
 * Backends: the choice between the kernel module and the in-process
 * device (ACCEL_BACKEND), the bus calls (new_device, del_device) and the
 * debug calls (debugfs knobs and files) on whichever backend a device or
 * the environment names, so that one program drives both.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "sim/sim.h"

#define SYS_BUS_VACCEL		"/sys/bus/vaccel"
#define DEBUGFS_ACCEL		"/sys/kernel/debug/accel"
#define DEBUGFS_VACCEL		"/sys/kernel/debug/vaccel"

int acc_backend(void)
{
	const char *env = getenv("ACCEL_BACKEND");

	if (!env || !*env || !strcmp(env, "module"))
		return ACC_BACKEND_MODULE;
	if (!strcmp(env, "sim"))
		return ACC_BACKEND_SIM;
	acc_err("ACCEL_BACKEND=%s: unknown backend: \"module\" (the vaccel kernel module, the "
		"default) or \"sim\" (the in-process device)", env);
	return -EINVAL;
}

ACCEL_API const char *accel_device_backend(const struct accel_device *dev)
{
	if (!dev)
		return NULL;
	return dev->tp.ops == &acc_tp_sim ? "sim" : "module";
}

/* Write @text to the sysfs or debugfs file @path: 0 or the file's -errno. */
static int write_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	close(fd);
	return ret;
}

/* Read the file @path into @buf (NUL-terminated): bytes, or -errno. */
static int read_file(const char *path, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (n < len - 1) {
		r = read(fd, buf + n, len - 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			close(fd);
			return ret;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	close(fd);
	return (int)n;
}

ACCEL_API int accel_bus_new_device(const char *spec)
{
	int b = acc_backend(), ret;

	if (b < 0)
		return b;
	if (!spec)
		return -EINVAL;
	if (b == ACC_BACKEND_SIM)
		ret = sim_bus_new_device(spec);
	else
		ret = write_file(SYS_BUS_VACCEL "/new_device", spec);
	if (ret)
		acc_err("bus_new_device \"%s\" (%s): %s", spec, b == ACC_BACKEND_SIM ? "sim" :
			SYS_BUS_VACCEL "/new_device", strerror(-ret));
	return ret;
}

ACCEL_API int accel_bus_del_device(unsigned int id)
{
	int b = acc_backend(), ret;
	char text[16];

	if (b < 0)
		return b;
	if (b == ACC_BACKEND_SIM) {
		ret = sim_bus_del_device(id);
	} else {
		snprintf(text, sizeof(text), "%u", id);
		ret = write_file(SYS_BUS_VACCEL "/del_device", text);
	}
	if (ret)
		acc_err("bus_del_device %u (%s): %s", id, b == ACC_BACKEND_SIM ? "sim" :
			SYS_BUS_VACCEL "/del_device", strerror(-ret));
	return ret;
}

/* A debugfs file name: one path component. */
static bool debug_name_ok(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

ACCEL_API int accel_device_debug_write(struct accel_device *dev, const char *knob,
				       const char *value)
{
	char path[128];
	int ret;

	if (!dev || !debug_name_ok(knob) || !value)
		return -EINVAL;
	if (tp_forked(&dev->tp))
		return -ECHILD;
	if (dev->tp.ops == &acc_tp_sim) {
		ret = sim_fd_debug_write(dev->tp.fd, knob, value);
	} else {
		snprintf(path, sizeof(path), DEBUGFS_ACCEL "/vaccel%u/%s", dev->props.id, knob);
		ret = write_file(path, value);
	}
	if (ret)
		acc_err("%s: debug write %s \"%s\": %s", dev->path, knob, value, strerror(-ret));
	return ret;
}

ACCEL_API int accel_device_debug_read(struct accel_device *dev, const char *file, char *buf,
				      size_t len)
{
	char path[128];
	int ret;

	if (!debug_name_ok(file) || !buf || !len || len > INT32_MAX)
		return -EINVAL;
	if (!dev) {
		/* the counters of the backend ACCEL_BACKEND chooses: no device needed */
		if (strcmp(file, "objects"))
			return -EINVAL;
		ret = acc_backend();
		if (ret < 0)
			return ret;
		if (ret == ACC_BACKEND_SIM)
			return sim_objects_read(buf, len);
		ret = read_file(DEBUGFS_VACCEL "/objects", buf, len);
		if (ret < 0)
			acc_err("debug read %s: %s", DEBUGFS_VACCEL "/objects", strerror(-ret));
		return ret;
	}
	if (tp_forked(&dev->tp))
		return -ECHILD;
	if (dev->tp.ops == &acc_tp_sim)
		return sim_fd_debug_read(dev->tp.fd, file, buf, len);
	if (!strcmp(file, "objects"))
		snprintf(path, sizeof(path), DEBUGFS_VACCEL "/objects");
	else if (!strcmp(file, "fdinfo"))
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", dev->tp.fd);
	else
		snprintf(path, sizeof(path), DEBUGFS_ACCEL "/vaccel%u/%s", dev->props.id, file);
	ret = read_file(path, buf, len);
	if (ret < 0)
		acc_err("%s: debug read %s: %s", dev->path, path, strerror(-ret));
	return ret;
}
