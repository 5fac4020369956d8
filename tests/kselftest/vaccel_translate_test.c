// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device address translation, through the debugfs vm_read file, which
 * reads memory with vaccel_vm_translate() exactly as the device model
 * does: bound ranges read back what the host wrote, with the mapping's
 * offset applied; unmapped, partly mapped and write-only ranges fault.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <sys/mman.h>

#include "vaccel_common.h"
#include "kselftest_harness.h"

#define VA	(1ULL << 32)

FIXTURE(xlate) {
	int fd;
	uint32_t ctx;
	uint32_t handle;
	uint8_t *map;
	char vm_read[128];
};

/* Our newest context on device 0 (ids grow): parse the contexts file. */
static int last_ctx(uint32_t *ctx)
{
	char buf[8192], *line;
	int found = -ENOENT;

	if (vaccel_read_file(ACCEL_DEBUGFS "/vaccel0/contexts", buf, sizeof(buf)) < 0)
		return -errno;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned int id, pid;

		if (sscanf(line, "ctx %u pid %u", &id, &pid) == 2 &&
		    (pid_t)pid == getpid() && (found || id > *ctx)) {
			*ctx = id;
			found = 0;
		}
	}
	return found;
}

FIXTURE_SETUP(xlate)
{
	struct drm_vaccel_bo_create c = { .size = 4 * 4096 };
	int i;

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	snprintf(self->vm_read, sizeof(self->vm_read), ACCEL_DEBUGFS "/vaccel0/vm_read");
	if (access(self->vm_read, W_OK))
		SKIP(return, "debugfs is not mounted");
	self->fd = vaccel_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, last_ctx(&self->ctx));
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VACCEL_BO_CREATE, &c));
	self->handle = c.handle;
	self->map = mmap(NULL, c.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->fd, c.mmap_offset);
	ASSERT_NE(MAP_FAILED, self->map);
	for (i = 0; i < 4 * 4096; i++)
		self->map[i] = (uint8_t)(i * 7 + i / 4096);
}

FIXTURE_TEARDOWN(xlate)
{
	if (self->fd >= 0) {
		munmap(self->map, 4 * 4096);
		close(self->fd);
	}
}

/* Device read of @len bytes at @va: hex string, or "error N". */
static void dev_read(struct __test_metadata *_metadata, const char *path,
		     uint32_t ctx, uint64_t va, unsigned int len, char *out,
		     size_t outlen)
{
	char req[96];
	ssize_t n;
	int fd = open(path, O_RDWR);

	ASSERT_LE(0, fd);
	snprintf(req, sizeof(req), "%u %llx %u", ctx, (unsigned long long)va, len);
	ASSERT_EQ((ssize_t)strlen(req), write(fd, req, strlen(req)));
	n = read(fd, out, outlen - 1);
	ASSERT_LT(0, n);
	out[n] = '\0';
	close(fd);
}

static void hex(const uint8_t *p, unsigned int len, char *out)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * len] = '\n';
	out[2 * len + 1] = '\0';
}

TEST_F(xlate, reads_what_host_wrote)
{
	char got[8300], want[8300];

	/* object pages 1..2 at VA + 1 page */
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->handle, DRM_VACCEL_VM_READ, 4096,
			  VA + 4096, 2 * 4096));
	dev_read(_metadata, self->vm_read, self->ctx, VA + 4096, 16, got, sizeof(got));
	hex(self->map + 4096, 16, want);
	EXPECT_STREQ(want, got);
	/* a range ending exactly at the mapping's end */
	dev_read(_metadata, self->vm_read, self->ctx, VA + 3 * 4096 - 100, 100, got,
		 sizeof(got));
	hex(self->map + 3 * 4096 - 100, 100, want);
	EXPECT_STREQ(want, got);
	/* a host write is seen by the device at once */
	self->map[4096 + 5] ^= 0xff;
	dev_read(_metadata, self->vm_read, self->ctx, VA + 4096, 16, got, sizeof(got));
	hex(self->map + 4096, 16, want);
	EXPECT_STREQ(want, got);
}

TEST_F(xlate, faults)
{
	char got[256];

	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->handle, DRM_VACCEL_VM_READ, 0, VA, 4096));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->handle, DRM_VACCEL_VM_WRITE, 0, VA + 8192, 4096));
	/* unmapped */
	dev_read(_metadata, self->vm_read, self->ctx, VA + 4096, 8, got, sizeof(got));
	EXPECT_STREQ("error -14\n", got);
	/* crosses the end of a mapping into a hole */
	dev_read(_metadata, self->vm_read, self->ctx, VA + 4096 - 4, 8, got, sizeof(got));
	EXPECT_STREQ("error -14\n", got);
	/* below the window */
	dev_read(_metadata, self->vm_read, self->ctx, 0, 8, got, sizeof(got));
	EXPECT_STREQ("error -14\n", got);
	/* wrapping the address space */
	dev_read(_metadata, self->vm_read, self->ctx, 0xfffffffffffffffcULL, 8, got,
		 sizeof(got));
	EXPECT_STREQ("error -14\n", got);
	/* write-only mapping: a device read is refused */
	dev_read(_metadata, self->vm_read, self->ctx, VA + 8192, 8, got, sizeof(got));
	EXPECT_STREQ("error -13\n", got);
}

TEST_F(xlate, unbound_range_faults)
{
	struct drm_vaccel_vm_unbind u = { .va = VA, .size = 4096 };
	char got[256];

	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->handle, DRM_VACCEL_VM_READ, 0, VA, 4096));
	dev_read(_metadata, self->vm_read, self->ctx, VA, 4, got, sizeof(got));
	EXPECT_STRNE("error -14\n", got);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VACCEL_VM_UNBIND, &u));
	dev_read(_metadata, self->vm_read, self->ctx, VA, 4, got, sizeof(got));
	EXPECT_STREQ("error -14\n", got);
}

/* One context cannot see another's mappings. */
TEST_F(xlate, per_context)
{
	uint32_t other_ctx;
	char got[256];
	int fd2 = vaccel_open(0);

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, last_ctx(&other_ctx));
	ASSERT_NE(self->ctx, other_ctx);
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->handle, DRM_VACCEL_VM_READ, 0, VA, 4096));
	dev_read(_metadata, self->vm_read, other_ctx, VA, 4, got, sizeof(got));
	EXPECT_STREQ("error -14\n", got);
	close(fd2);
}

/* Malformed requests are refused; an unknown context reads as ESRCH. */
TEST_F(xlate, bad_requests)
{
	char got[256];

	EXPECT_EQ(-EINVAL, vaccel_sysfs_write(self->vm_read, "1 100000000 0"));
	EXPECT_EQ(-EINVAL, vaccel_sysfs_write(self->vm_read, "1 100000000 4097"));
	EXPECT_EQ(-EINVAL, vaccel_sysfs_write(self->vm_read, "1 100000000"));
	EXPECT_EQ(-EINVAL, vaccel_sysfs_write(self->vm_read, "x y z"));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->handle, DRM_VACCEL_VM_READ, 0, VA, 4096));
	dev_read(_metadata, self->vm_read, 0xfffffff0u, VA, 8, got, sizeof(got));
	EXPECT_STREQ("error -3\n", got);
}

TEST_HARNESS_MAIN
