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
#include "vaccel_queue_util.h"
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

/* Nothing of the memory uAPI is left: no objects, mappings or files. */
static void expect_no_objects(struct __test_metadata *_metadata)
{
	EXPECT_EQ(0, vaccel_objects_wait("bos", 0, 2000));
	EXPECT_EQ(0, vaccel_objects_wait("mappings", 0, 2000));
	EXPECT_EQ(0, vaccel_objects_wait("files", 0, 2000));
}

/* Unload; retried for up to 2 s in case a deferred free still holds it. */
static int unload_settled(struct __test_metadata *_metadata)
{
	uint64_t end = vaccel_now_ms() + 2000;
	int ret, tries = 0;

	for (;;) {
		ret = unload();
		tries++;
		if (ret != -EWOULDBLOCK || vaccel_now_ms() >= end)
			break;
		vaccel_msleep(20);
	}
	if (tries > 1)
		TH_LOG("unload needed %d tries", tries);
	return ret;
}

/*
 * A file closed with everything still in it: hundreds of objects of every
 * kind, bound, once mapped, once exported. Closing it frees all of it and
 * the module can go.
 */
TEST_F(module, leak_then_unload)
{
	static const uint32_t flags[] = {
		0, DRM_VACCEL_BO_PERSISTENT, DRM_VACCEL_BO_SIGNAL,
	};
	struct drm_vaccel_bo_create bo = {};
	uint64_t used = 1;
	int fd, i, dmabuf = -1, bound = 0;
	long bos, maps;

	fd = vaccel_open(0);
	ASSERT_LE(0, fd);
	bos = vaccel_objects("bos");
	maps = vaccel_objects("mappings");
	for (i = 0; i < 500; i++) {
		uint64_t size = (1 + i % 7) * VACCEL_PAGE - (i % 3);
		bool seal = i % 30 == 1;	/* persistent ones */

		ASSERT_EQ(0, vaccel_bo_create(fd, size, flags[i % 3], &bo))
			TH_LOG("object %d", i);
		if (seal)
			ASSERT_EQ(0, vaccel_bo_seal(fd, bo.handle));
		if (i % 5 != 4) {
			uint32_t access = DRM_VACCEL_VM_READ;

			if ((i & 1) && !seal)
				access |= DRM_VACCEL_VM_WRITE;
			ASSERT_EQ(0, vaccel_vm_bind(fd, bo.handle, access, 0,
						    VACCEL_VA_LO + (uint64_t)i * (1 << 20),
						    VACCEL_PAGE));
			bound++;
		}
		if (i % 100 == 0) {
			char *p = vaccel_bo_mmap(fd, bo.mmap_offset, bo.size,
						 PROT_READ | PROT_WRITE);

			ASSERT_NE(MAP_FAILED, p);
			memset(p, 0xee, bo.size);
			/* a live mmap would hold the file, and the module */
			EXPECT_EQ(0, munmap(p, bo.size));
		}
		if (i == 250) {
			ASSERT_EQ(0, vaccel_prime_export(fd, bo.handle, &dmabuf));
			close(dmabuf);
		}
	}
	EXPECT_EQ(bos + 500, vaccel_objects("bos"));
	EXPECT_EQ(maps + bound, vaccel_objects("mappings"));
	EXPECT_EQ(-EWOULDBLOCK, unload());
	close(fd);

	expect_no_objects(_metadata);
	fd = vaccel_open(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, vaccel_get_param(fd, DRM_VACCEL_PARAM_MEMORY_USED, &used));
	EXPECT_EQ(0, used);
	close(fd);
	expect_idle(_metadata, self->num_devices);
	ASSERT_EQ(0, unload_settled(_metadata));
	EXPECT_FALSE(loaded());
	/* teardown loads it back */
}

/* A dma-buf outlives its file and holds the module until it is closed. */
/*
 * Queues with work in flight on a run-time device: del_device, then the
 * process exits; afterwards no queue, file or object is left and the
 * module unloads.
 */
TEST_F(module, busy_queues_then_unload)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_DELAY, 100000000, 0, 0, 0);
	char spec[32];
	int status;
	pid_t pid;

	snprintf(spec, sizeof(spec), "%u engines=2", VACCEL_TEST_ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = vaccel_open(VACCEL_TEST_ID), i;
		struct bo ring;
		struct q q;

		if (fd < 0 || bo_new(fd, 4 * RING_N * 64, 0, &ring) ||
		    vaccel_vm_bind(fd, ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA, ring.size))
			_exit(1);
		for (i = 0; i < 4; i++) {
			if (queue_new(fd, RING_VA + i * RING_N * 64, RING_N,
				      (struct drm_vaccel_packet *)ring.map + i * RING_N, &q) ||
			    submit(fd, &q, &p, NULL) || submit(fd, &q, &p, NULL))
				_exit(2);
		}
		usleep(30000);
		if (vaccel_del_device(VACCEL_TEST_ID))
			_exit(3);
		_exit(0);	/* with everything still open and mapped */
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, vaccel_objects("queues"));
	expect_idle(_metadata, self->num_devices);
	EXPECT_EQ(0, vaccel_objects("bos"));
	ASSERT_EQ(0, unload());
}

TEST_F(module, unload_refused_while_dmabuf_open)
{
	uint32_t h;
	int fd, dmabuf = -1;

	fd = vaccel_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vaccel_bo_new(fd, 1 << 20, DRM_VACCEL_BO_PERSISTENT, &h));
	ASSERT_EQ(0, vaccel_prime_export(fd, h, &dmabuf));
	close(fd);
	EXPECT_EQ(0, vaccel_objects("files"));
	EXPECT_EQ(1, vaccel_objects("bos"));
	EXPECT_EQ(-EWOULDBLOCK, unload());
	EXPECT_TRUE(loaded());
	close(dmabuf);
	expect_no_objects(_metadata);
	ASSERT_EQ(0, unload_settled(_metadata));
}

/* A host mapping outlives its file and holds the module until munmap. */
TEST_F(module, unload_refused_while_mapped)
{
	struct drm_vaccel_bo_create bo = {};
	char *p;
	int fd;

	fd = vaccel_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vaccel_bo_create(fd, 2 * VACCEL_PAGE, 0, &bo));
	p = vaccel_bo_mmap(fd, bo.mmap_offset, bo.size, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, p);
	close(fd);
	strcpy(p, "still here");
	EXPECT_EQ(-EWOULDBLOCK, unload());
	EXPECT_STREQ("still here", p);
	EXPECT_EQ(0, munmap(p, bo.size));
	expect_no_objects(_metadata);
	ASSERT_EQ(0, unload_settled(_metadata));
}

TEST_HARNESS_MAIN
