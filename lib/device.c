// SPDX-License-Identifier: MIT
/*
 * Devices: enumeration through /sys/class/accel, open and close, the
 * properties read at open, memory use and the link topology.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "sim/sim.h"

#define SYS_ACCEL	"/sys/class/accel"

static int cmp_info(const void *a, const void *b)
{
	const struct accel_device_info *x = a, *y = b;

	return x->minor < y->minor ? -1 : x->minor > y->minor;
}

/* The vaccel nodes, sorted by minor; *out is malloc'ed. */
static int scan(struct accel_device_info **out)
{
	struct accel_device_info *list = NULL, *l;
	unsigned int n = 0, cap = 0, minor;
	struct dirent *de;
	DIR *d = opendir(SYS_ACCEL);

	*out = NULL;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct accel_device_info info = { 0 };
		struct acc_tp tp;
		uint64_t id;
		int ret;

		if (sscanf(de->d_name, "accel%u", &minor) != 1)
			continue;
		snprintf(info.path, sizeof(info.path), "/dev/accel/accel%u", minor);
		info.minor = minor;
		ret = tp_driver_is(&acc_tp_kernel, info.path, "vaccel");
		if (ret <= 0) {
			if (ret < 0)
				acc_info("device list: %s: %s", info.path, strerror(-ret));
			continue;
		}
		if (tp_open(&tp, &acc_tp_kernel, info.path))
			continue;
		ret = tp_get_param(&tp, DRM_VACCEL_PARAM_DEVICE_ID, &id);
		tp_close(&tp);
		if (ret)
			continue;
		info.id = (unsigned int)id;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			l = realloc(list, cap * sizeof(*l));
			if (!l) {
				free(list);
				closedir(d);
				return -ENOMEM;
			}
			list = l;
		}
		list[n++] = info;
	}
	closedir(d);
	if (n)
		qsort(list, n, sizeof(*list), cmp_info);
	*out = list;
	return (int)n;
}

/* The in-process devices, sorted by id; *out is malloc'ed. */
static int sim_scan(struct accel_device_info **out)
{
	static unsigned int ids[1024];
	static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
	struct accel_device_info *list;
	int n, i;

	*out = NULL;
	pthread_mutex_lock(&ids_lock);
	n = sim_bus_ids(ids, sizeof(ids) / sizeof(ids[0]));
	list = n > 0 ? calloc((size_t)n, sizeof(*list)) : NULL;
	for (i = 0; list && i < n; i++) {
		snprintf(list[i].path, sizeof(list[i].path), "sim:%u", ids[i]);
		list[i].minor = ids[i];
		list[i].id = ids[i];
	}
	pthread_mutex_unlock(&ids_lock);
	if (n > 0 && !list)
		return -ENOMEM;
	*out = list;
	return n;
}

/* The devices of the backend ACCEL_BACKEND names. */
static int backend_scan(struct accel_device_info **out, int *backend)
{
	*out = NULL;
	*backend = acc_backend();
	if (*backend < 0)
		return *backend;
	return *backend == ACC_BACKEND_SIM ? sim_scan(out) : scan(out);
}

ACCEL_API int accel_device_list(struct accel_device_info *list, unsigned int max,
				size_t elem_size)
{
	struct accel_device_info *all;
	unsigned int i;
	int n, ret, b;

	if (max) {
		ret = list ? acc_struct_size_check(elem_size, ACCEL_DEVICE_INFO_SIZE_1_0) : -EINVAL;
		if (ret) {
			acc_err("device list: list %p of %u entries of %zu bytes: %s", (void *)list,
				max, elem_size, strerror(-ret));
			return ret;
		}
	}
	n = backend_scan(&all, &b);
	if (n < 0) {
		if (b == ACC_BACKEND_MODULE)
			acc_err("device list: cannot read %s: %s", SYS_ACCEL, strerror(-n));
		else if (b == ACC_BACKEND_SIM)
			acc_err("device list: the in-process device: %s", strerror(-n));
		return n;
	}
	for (i = 0; i < max && i < (unsigned int)n; i++)
		acc_put_struct((char *)list + i * elem_size, elem_size, &all[i], sizeof(all[i]),
			       ACCEL_DEVICE_INFO_SIZE_1_0);
	free(all);
	return n;
}

ACCEL_API int accel_device_open(unsigned int index, struct accel_device **out)
{
	struct accel_device_info *all;
	char path[ACCEL_PATH_MAX];
	int n, b;

	if (!out)
		return -EINVAL;
	n = backend_scan(&all, &b);
	if (b < 0)
		return b;
	if (n < 0 && b == ACC_BACKEND_SIM) {
		acc_err("device open %u: the in-process device: %s", index, strerror(-n));
		return n;
	}
	if (n < 0 && n != -ENOENT) {
		acc_err("device open %u: cannot read %s: %s", index, SYS_ACCEL, strerror(-n));
		return n;
	}
	if (n < 0 || index >= (unsigned int)n) {
		free(all);
		if (b == ACC_BACKEND_SIM)
			acc_err("device open: no in-process device %u (%d in ACCEL_SIM_DEVICES or "
				"made by accel_bus_new_device())", index, n);
		else
			acc_err("device open: no vaccel device %u (%d found): load the kernel module "
				"(modprobe vaccel), or use the in-process device (ACCEL_BACKEND=sim)",
				index, n < 0 ? 0 : n);
		return -ENODEV;
	}
	memcpy(path, all[index].path, sizeof(path));
	free(all);
	return accel_device_open_path(path, out);
}

static int read_props(struct accel_device *dev)
{
	static const struct {
		uint32_t param;
		size_t off;
		int is32;
	} params[] = {
#define P(param, field) { DRM_VACCEL_PARAM_##param, offsetof(struct accel_device_props, field), \
			  sizeof(((struct accel_device_props *)0)->field) == 4 }
		P(DEVICE_ID, id), P(NUM_ENGINES, engines), P(CAPABILITIES, capabilities),
		P(MEMORY_CAPACITY, memory_capacity), P(VA_START, va_start), P(VA_SIZE, va_size),
		P(LINK_BANDWIDTH, link_bandwidth_mbps), P(LINK_LATENCY, link_latency_ns),
		P(POLL_BUDGET, poll_budget_ns), P(MAX_BOS, max_buffers),
		P(MAX_MAPPINGS, max_mappings), P(MAX_QUEUES, max_queues),
#undef P
	};
	struct accel_device_props *p = &dev->props;
	uint64_t v;
	size_t i;
	int ret;

	memset(p, 0, sizeof(*p));
	p->size = sizeof(*p);
	ret = tp_get_param(&dev->tp, DRM_VACCEL_PARAM_UAPI_VERSION, &v);
	if (ret) {
		acc_err("%s: GET_PARAM UAPI_VERSION: %s", dev->path, strerror(-ret));
		return ret;
	}
	p->uapi_version = (uint32_t)v;
	if (v < ACCEL_MIN_UAPI_VERSION) {
		acc_err("%s: the vaccel module has uAPI version %llu; libaccel %d.%d needs %d or "
			"later: update the module", dev->path, (unsigned long long)v,
			ACCEL_VERSION_MAJOR, ACCEL_VERSION_MINOR, ACCEL_MIN_UAPI_VERSION);
		return -EPROTO;
	}
	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		ret = tp_get_param(&dev->tp, params[i].param, &v);
		if (ret) {
			acc_err("%s: GET_PARAM %u: %s", dev->path, params[i].param,
				strerror(-ret));
			return ret;
		}
		if (params[i].is32)
			*(uint32_t *)((char *)p + params[i].off) = (uint32_t)v;
		else
			*(uint64_t *)((char *)p + params[i].off) = v;
	}
	return 0;
}

/* "sim:N" is the in-process device N whatever ACCEL_BACKEND says; anything else a node. */
ACCEL_API int accel_device_open_path(const char *path, struct accel_device **out)
{
	return acc_device_open_ops(sim_path_id(path) >= 0 ? &acc_tp_sim : &acc_tp_kernel, path,
				   out);
}

static int dev_setup(struct accel_device *dev, const char *path);

int acc_device_open_ops(const struct tp_ops *ops, const char *path, struct accel_device **out)
{
	struct accel_device *dev;
	int ret;

	if (!path || !out || strlen(path) >= ACCEL_PATH_MAX)
		return -EINVAL;
	ret = tp_driver_is(ops, path, "vaccel");
	if (ret <= 0) {
		if (!ret) {
			acc_err("%s: not a vaccel device", path);
			return -ENODEV;
		}
		acc_err("%s: cannot open: %s%s", path, strerror(-ret),
			ret == -EACCES ? " (the node belongs to group render)" : "");
		return ret;
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	snprintf(dev->path, sizeof(dev->path), "%s", path);
	ret = tp_open(&dev->tp, ops, path);
	if (ret) {
		acc_err("%s: cannot open: %s", path, strerror(-ret));
		free(dev);
		return ret;
	}
	ret = dev_setup(dev, path);
	if (!ret)
		*out = dev;
	return ret;
}

ACCEL_API int accel_device_open_fd(int fd, struct accel_device **out)
{
	char link[32], path[ACCEL_PATH_MAX];
	const struct tp_ops *ops;
	struct accel_device *dev;
	ssize_t n;
	int ret;

	if (!out)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	ops = sim_fd_is_file(fd) ? &acc_tp_sim : &acc_tp_kernel;
	ret = tp_fd_driver_is(ops, fd, "vaccel");
	if (ret <= 0) {
		acc_err("device_open_fd: fd %d: %s", fd, ret ? strerror(-ret) :
			"not a vaccel device");
		return ret ? ret : -ENODEV;
	}
	/* the node, for messages */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = ops == &acc_tp_sim ? 0 : readlink(link, path, sizeof(path) - 1);
	if (n > 0)
		path[n] = '\0';
	else
		snprintf(path, sizeof(path), "%sfd %d", ops == &acc_tp_sim ? "sim " : "", fd);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	snprintf(dev->path, sizeof(dev->path), "%s", path);
	ret = tp_open_fd(&dev->tp, ops, fd);
	if (ret) {
		acc_err("device_open_fd: fd %d: cannot duplicate it: %s", fd, strerror(-ret));
		free(dev);
		return ret;
	}
	ret = dev_setup(dev, path);
	if (!ret)
		*out = dev;
	return ret;
}

/* Properties, allocators, lists of a device whose transport is open; frees it on failure. */
static int dev_setup(struct accel_device *dev, const char *path)
{
	unsigned int max_order;
	int ret;

	pthread_mutex_init(&dev->lock, NULL);
	list_init(&dev->buffers);
	list_init(&dev->internal);
	list_init(&dev->signals);
	list_init(&dev->queues);
	list_init(&dev->sigimports);
	list_init(&dev->imported_pages);
	ret = read_props(dev);
	if (ret)
		goto err;
	for (max_order = 12; max_order < 47 && (1ull << (max_order + 1)) <= dev->props.va_size;)
		max_order++;
	ret = va_init(&dev->va, dev->props.va_start, dev->props.va_size, 12, max_order);
	if (ret) {
		acc_err("%s: VA window [0x%llx, +0x%llx): %s", path,
			(unsigned long long)dev->props.va_start,
			(unsigned long long)dev->props.va_size, strerror(-ret));
		goto err;
	}
	ret = slots_init(&dev->slots, ACC_SLOTS_PER_PAGE);
	if (ret)
		goto err_va;
	acc_info("%s: opened vaccel device %u (uAPI %u, %u engines, %llu MiB)", path,
		 dev->props.id, dev->props.uapi_version, dev->props.engines,
		 (unsigned long long)(dev->props.memory_capacity >> 20));
	return 0;
err_va:
	va_fini(&dev->va);
err:
	pthread_mutex_destroy(&dev->lock);
	tp_close(&dev->tp);
	free(dev);
	return ret;
}

/*
 * In a child of the opener (fork) this frees memory only: every ioctl of
 * the teardown fails with -ECHILD in the transport without reaching the
 * device, the munmaps and the close are the child's own copies, and
 * dev->lock is not taken (acc_dev_lock()).
 */
ACCEL_API void accel_device_close(struct accel_device *dev)
{
	bool forked;
	unsigned int i;

	if (!dev)
		return;
	forked = acc_dev_forked(dev);
	/* the queues first: nothing runs on what is unbound next */
	while (!list_empty(&dev->queues))
		accel_queue_destroy(container_of(dev->queues.next, struct accel_queue, node));
	while (!list_empty(&dev->signals))
		accel_signal_destroy(container_of(dev->signals.next, struct accel_signal, node));
	acc_device_remove_sigimports(dev);
	/*
	 * Every buffer goes, whatever references and pins it still has: the
	 * program's and imported ones, then the signal pages and anything
	 * else of the library's own.
	 */
	acc_dev_lock(dev);
	while (!list_empty(&dev->buffers))
		acc_buffer_release_all_locked(container_of(dev->buffers.next, struct accel_buffer,
							   node));
	while (!list_empty(&dev->internal))
		acc_buffer_release_all_locked(container_of(dev->internal.next, struct accel_buffer,
							   node));
	acc_dev_unlock(dev);
	for (i = 0; i < dev->npages; i++)
		free(dev->pages[i]);
	free(dev->pages);
	slots_fini(&dev->slots);
	va_fini(&dev->va);
	tp_close(&dev->tp);
	if (!forked)
		pthread_mutex_destroy(&dev->lock);
	acc_info("%s: closed%s", dev->path, forked ? " (memory only: opened by the parent)" : "");
	free(dev);
}

int acc_check_dev(const struct accel_device *dev, const char *fn)
{
	int ret;

	if (!dev)
		return -EINVAL;
	ret = tp_check(&dev->tp);
	if (ret == -ECHILD)
		acc_err("%s: %s: the device belongs to the parent process (opened before fork())",
			fn, dev->path);
	else if (ret == -ENODEV)
		acc_err("%s: %s: the device was removed", fn, dev->path);
	return ret;
}

ACCEL_API int accel_device_fd(const struct accel_device *dev)
{
	return dev ? dev->tp.fd : -EINVAL;
}

ACCEL_API int accel_device_query(const struct accel_device *dev, struct accel_device_props *props)
{
	uint32_t size;
	int ret;

	if (!dev || !props)
		return -EINVAL;
	size = props->size;
	ret = acc_put_struct(props, size, &dev->props, sizeof(dev->props),
			     ACCEL_DEVICE_PROPS_SIZE_1_0);
	if (ret) {
		acc_err("%s: device query: props size %u: %s", dev->path, size, strerror(-ret));
		return ret;
	}
	props->size = size;
	return 0;
}

ACCEL_API int accel_device_memory_used(struct accel_device *dev, uint64_t *bytes)
{
	int ret = acc_check_dev(dev, "memory_used");

	if (ret)
		return ret;
	if (!bytes)
		return -EINVAL;
	ret = tp_get_param(&dev->tp, DRM_VACCEL_PARAM_MEMORY_USED, bytes);
	if (ret)
		acc_err("%s: GET_PARAM MEMORY_USED: %s", dev->path, strerror(-ret));
	return ret;
}

ACCEL_API int accel_device_topology(struct accel_device *const *devs, unsigned int n,
				    struct accel_link *matrix, size_t elem_size)
{
	unsigned int i, j;
	int ret;

	if (!devs || (n && !matrix))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!devs[i])
			return -EINVAL;
	if (n) {
		ret = acc_struct_size_check(elem_size, ACCEL_LINK_SIZE_1_0);
		if (ret) {
			acc_err("topology: matrix entries of %zu bytes: %s", elem_size,
				strerror(-ret));
			return ret;
		}
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			struct accel_link l = { .local = true };

			if (devs[i]->props.id != devs[j]->props.id) {
				l.bandwidth_mbps = devs[i]->props.link_bandwidth_mbps;
				l.latency_ns = devs[i]->props.link_latency_ns;
				l.local = false;
			}
			acc_put_struct((char *)matrix + ((size_t)i * n + j) * elem_size, elem_size,
				       &l, sizeof(l), ACCEL_LINK_SIZE_1_0);
		}
	return 0;
}
