// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device address space: VM_BIND argument validation (access flags,
 * alignment, object bounds, wrap-around, the VA window, overlaps, the
 * per-context mapping limit), VM_UNBIND, per-context address spaces,
 * mappings keeping their object alive, and the debugfs view.
 *
 * Every test runs on a fresh device and checks that the module's
 * live-object counters are back at their starting values afterwards.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <sys/mount.h>

#include "vaccel_common.h"
#include "kselftest_harness.h"

#define ID	VACCEL_TEST_ID
#define PAGE	VACCEL_PAGE
#define R	DRM_VACCEL_VM_READ
#define W	DRM_VACCEL_VM_WRITE
#define RW	(DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE)
#define LO	VACCEL_VA_LO
#define HI	VACCEL_VA_HI
/* somewhere in the middle of the window */
#define VA	(LO + (1ULL << 30))

FIXTURE(vm) {
	int fd;
	uint32_t bo;		/* 16 pages, plain */
	struct vaccel_counts counts;
};

FIXTURE_SETUP(vm)
{
	char spec[64];

	self->fd = -1;
	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	vaccel_del_device(ID);
	vaccel_counts_read(&self->counts);
	snprintf(spec, sizeof(spec), "%u memory=64M", ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	self->fd = vaccel_open(ID);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, vaccel_bo_new(self->fd, 16 * PAGE, 0, &self->bo));
}

/* Closing the file unbinds and frees whatever a test left behind. */
FIXTURE_TEARDOWN(vm)
{
	if (self->fd >= 0)
		close(self->fd);
	vaccel_del_device(ID);
	EXPECT_COUNTS_BACK(&self->counts, 2000);
}

TEST_F(vm, params)
{
	uint64_t v = 0;

	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_VA_START, &v));
	EXPECT_EQ(LO, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_VA_SIZE, &v));
	EXPECT_EQ(HI - LO, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_MAX_MAPPINGS, &v));
	EXPECT_EQ(4096, v);
}

TEST_F(vm, bind_unbind)
{
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA, 16 * PAGE));
	EXPECT_EQ(self->counts.mappings + 1, vaccel_objects("mappings"));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, VA, 16 * PAGE));
	EXPECT_EQ(self->counts.mappings, vaccel_objects_wait("mappings", self->counts.mappings, 2000));
	/* the range can be used again */
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, R, 0, VA, 16 * PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, VA, 16 * PAGE));
}

TEST_F(vm, access_flags)
{
	static const uint32_t bad[] = {
		0, 0x4, 0x8, R | 0x4, RW | 0x8, 0x80000000u, RW | 0x80000000u,
		0xffffffffu,
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, bad[i], 0, VA, PAGE))
			TH_LOG("flags 0x%x", bad[i]);
	EXPECT_EQ(self->counts.mappings, vaccel_objects("mappings"));
	/* read, write and both are each valid alone */
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, R, 0, VA, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, W, 0, VA + PAGE, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA + 2 * PAGE, PAGE));
	EXPECT_EQ(self->counts.mappings + 3, vaccel_objects("mappings"));
}

TEST_F(vm, unaligned)
{
	static const uint64_t off[] = { 1, 0x800, PAGE - 1, PAGE + 8 };
	unsigned int i;

	for (i = 0; i < 4; i++) {
		EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA + off[i], PAGE))
			TH_LOG("va + 0x%llx", (unsigned long long)off[i]);
		EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, RW, off[i], VA, PAGE))
			TH_LOG("bo_offset 0x%llx", (unsigned long long)off[i]);
		EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA, off[i]))
			TH_LOG("size 0x%llx", (unsigned long long)off[i]);
	}
	EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA, PAGE + 1));
	EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA, 2 * PAGE - 1));
	EXPECT_EQ(self->counts.mappings, vaccel_objects("mappings"));
}

TEST_F(vm, size_zero)
{
	EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA, 0));
	EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, R, PAGE, VA, 0));
	EXPECT_EQ(self->counts.mappings, vaccel_objects("mappings"));
}

TEST_F(vm, past_object_end)
{
	EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA, 17 * PAGE));
	EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, RW, PAGE, VA, 16 * PAGE));
	EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, RW, 16 * PAGE, VA, PAGE));
	EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, RW, 15 * PAGE, VA, 2 * PAGE));
	EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, RW, 1ULL << 40, VA, PAGE));
	EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA, 1ULL << 40));
	EXPECT_EQ(self->counts.mappings, vaccel_objects("mappings"));
	/* up to the last byte is fine */
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 15 * PAGE, VA, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA + PAGE, 16 * PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 4 * PAGE, VA + 17 * PAGE, 12 * PAGE));
}

TEST_F(vm, wraps)
{
	/* va + size wraps */
	EXPECT_EQ(-EOVERFLOW, vaccel_vm_bind(self->fd, self->bo, RW, 0, 0xfffffffffffff000ULL,
					     0x2000));
	EXPECT_EQ(-EOVERFLOW, vaccel_vm_bind(self->fd, self->bo, R, 0, 0xffffffffffffe000ULL,
					     0x10000));
	/* bo_offset + size wraps */
	EXPECT_EQ(-EOVERFLOW, vaccel_vm_bind(self->fd, self->bo, RW, 0xfffffffffffff000ULL, VA,
					     0x2000));
	EXPECT_EQ(-EOVERFLOW, vaccel_vm_bind(self->fd, self->bo, RW, 0xffffffffffff0000ULL, VA,
					     0x11000));
	EXPECT_EQ(self->counts.mappings, vaccel_objects("mappings"));
}

TEST_F(vm, outside_window)
{
	EXPECT_EQ(-ERANGE, vaccel_vm_bind(self->fd, self->bo, RW, 0, 0, PAGE));
	EXPECT_EQ(-ERANGE, vaccel_vm_bind(self->fd, self->bo, RW, 0, PAGE, PAGE));
	EXPECT_EQ(-ERANGE, vaccel_vm_bind(self->fd, self->bo, RW, 0, LO - PAGE, PAGE));
	/* straddling either end */
	EXPECT_EQ(-ERANGE, vaccel_vm_bind(self->fd, self->bo, RW, 0, LO - PAGE, 2 * PAGE));
	EXPECT_EQ(-ERANGE, vaccel_vm_bind(self->fd, self->bo, RW, 0, HI - PAGE, 2 * PAGE));
	EXPECT_EQ(-ERANGE, vaccel_vm_bind(self->fd, self->bo, RW, 0, HI, PAGE));
	EXPECT_EQ(-ERANGE, vaccel_vm_bind(self->fd, self->bo, RW, 0, 1ULL << 63, PAGE));
	EXPECT_EQ(-ERANGE, vaccel_vm_bind(self->fd, self->bo, RW, 0, 0xffffffffffff0000ULL, PAGE));
	EXPECT_EQ(self->counts.mappings, vaccel_objects("mappings"));
	/* the first and the last page of the window */
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, LO, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, HI - PAGE, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, HI - 16 * PAGE, 15 * PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, LO, PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, HI - PAGE, PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, HI - 16 * PAGE, 15 * PAGE));
}

TEST_F(vm, overlap)
{
	/* an existing mapping over pages [4, 8) of the range at VA */
	const uint64_t a = VA + 4 * PAGE;

	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->bo, R, 0, a, 4 * PAGE));

	/* identical, containing, contained, and partial on either side */
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, R, 0, a, 4 * PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, RW, 0, a, 4 * PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, R, 0, a - PAGE, 6 * PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, R, 0, a - 4 * PAGE, 16 * PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, R, 0, a + PAGE, PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, R, 0, a + PAGE, 2 * PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, R, 0, a, PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, R, 0, a + 3 * PAGE, PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, R, 0, a - PAGE, 2 * PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, R, 0, a - 3 * PAGE, 4 * PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, R, 0, a + 3 * PAGE, 2 * PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, R, 0, a + 2 * PAGE, 8 * PAGE));
	EXPECT_EQ(self->counts.mappings + 1, vaccel_objects("mappings"));

	/* adjacent on both sides is fine, and then the gaps are closed */
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, R, 0, a - PAGE, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, R, 0, a + 4 * PAGE, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, R, 0, a - 4 * PAGE, 3 * PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, R, 0, a - 5 * PAGE, 2 * PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, R, 0, a - 5 * PAGE, PAGE));
	EXPECT_EQ(self->counts.mappings + 5, vaccel_objects("mappings"));

	/* after unbinding, the range is free again */
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, a, 4 * PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, R, 0, a + PAGE, 2 * PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, R, 0, a, 4 * PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, R, 0, a, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, R, 0, a + 3 * PAGE, PAGE));
}

TEST_F(vm, unknown_handle)
{
	uint32_t h;
	int fd2;

	EXPECT_EQ(-ENOENT, vaccel_vm_bind(self->fd, 0, RW, 0, VA, PAGE));
	EXPECT_EQ(-ENOENT, vaccel_vm_bind(self->fd, self->bo + 1000, RW, 0, VA, PAGE));
	EXPECT_EQ(-ENOENT, vaccel_vm_bind(self->fd, 0xffffffffu, RW, 0, VA, PAGE));
	ASSERT_EQ(0, vaccel_bo_new(self->fd, PAGE, 0, &h));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
	EXPECT_EQ(-ENOENT, vaccel_vm_bind(self->fd, h, RW, 0, VA, PAGE));
	/* handles belong to their file */
	fd2 = vaccel_open(ID);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-ENOENT, vaccel_vm_bind(fd2, self->bo, RW, 0, VA, PAGE));
	close(fd2);
	EXPECT_EQ(self->counts.mappings, vaccel_objects("mappings"));
}

TEST_F_TIMEOUT(vm, max_mappings, 90)
{
	uint64_t max = 0, i;

	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_MAX_MAPPINGS, &max));
	ASSERT_EQ(4096, max);
	for (i = 0; i < max; i++)
		ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->bo, i & 1 ? R : RW, (i % 16) * PAGE,
					    LO + i * PAGE, PAGE))
			TH_LOG("mapping %llu", (unsigned long long)i);
	EXPECT_EQ(self->counts.mappings + (long)max, vaccel_objects("mappings"));
	EXPECT_EQ(-ENOSPC, vaccel_vm_bind(self->fd, self->bo, RW, 0, LO + max * PAGE, PAGE));
	EXPECT_EQ(-ENOSPC, vaccel_vm_bind(self->fd, self->bo, R, 0, HI - PAGE, PAGE));

	/* per context */
	{
		int fd2 = vaccel_open(ID);
		uint32_t h;

		ASSERT_LE(0, fd2);
		ASSERT_EQ(0, vaccel_bo_new(fd2, PAGE, 0, &h));
		EXPECT_EQ(0, vaccel_vm_bind(fd2, h, RW, 0, LO, PAGE));
		close(fd2);
	}

	/* one unbound makes room for exactly one */
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, LO + 100 * PAGE, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, HI - PAGE, PAGE));
	EXPECT_EQ(-ENOSPC, vaccel_vm_bind(self->fd, self->bo, RW, 0, LO + 100 * PAGE, PAGE));
	/* teardown closes the file with all of them bound */
}

TEST_F(vm, unbind_errors)
{
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA, 4 * PAGE));
	/* nothing starts there */
	EXPECT_EQ(-ENOENT, vaccel_vm_unbind(self->fd, VA + PAGE, 3 * PAGE));
	EXPECT_EQ(-ENOENT, vaccel_vm_unbind(self->fd, VA + PAGE, PAGE));
	EXPECT_EQ(-ENOENT, vaccel_vm_unbind(self->fd, VA - PAGE, 5 * PAGE));
	EXPECT_EQ(-ENOENT, vaccel_vm_unbind(self->fd, LO, PAGE));
	EXPECT_EQ(-ENOENT, vaccel_vm_unbind(self->fd, 0, PAGE));
	EXPECT_EQ(-ENOENT, vaccel_vm_unbind(self->fd, 0xfffffffffffff000ULL, PAGE));
	EXPECT_EQ(-ENOENT, vaccel_vm_unbind(self->fd, ~0ULL, 4 * PAGE));
	EXPECT_EQ(-ENOENT, vaccel_vm_unbind(self->fd, VA + 1, 4 * PAGE));
	/* the size must be the mapping's */
	EXPECT_EQ(-EINVAL, vaccel_vm_unbind(self->fd, VA, 3 * PAGE));
	EXPECT_EQ(-EINVAL, vaccel_vm_unbind(self->fd, VA, PAGE));
	EXPECT_EQ(-EINVAL, vaccel_vm_unbind(self->fd, VA, 5 * PAGE));
	EXPECT_EQ(-EINVAL, vaccel_vm_unbind(self->fd, VA, 0));
	EXPECT_EQ(-EINVAL, vaccel_vm_unbind(self->fd, VA, ~0ULL));
	/* flags and pad must be zero */
	{
		struct drm_vaccel_vm_unbind u = { .va = VA, .size = 4 * PAGE, .flags = 1 };

		EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VACCEL_VM_UNBIND, &u));
		EXPECT_EQ(EINVAL, errno);
		u.flags = 0;
		u.pad = 0x80000000u;
		EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VACCEL_VM_UNBIND, &u));
		EXPECT_EQ(EINVAL, errno);
	}
	EXPECT_EQ(self->counts.mappings + 1, vaccel_objects("mappings"));
	/* the failures left it in place */
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA, PAGE));

	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, VA, 4 * PAGE));
	EXPECT_EQ(-ENOENT, vaccel_vm_unbind(self->fd, VA, 4 * PAGE));
	EXPECT_EQ(self->counts.mappings, vaccel_objects_wait("mappings", self->counts.mappings, 2000));
}

/*
 * Nothing can start at the end of the window. (The drm_mm head node sits
 * there, with size -(window size): a lookup that returns it as a mapping
 * lets VM_UNBIND remove the head node and corrupt the allocator. The
 * second call is only made once the first shows the lookup is safe, as
 * on a broken kernel it oopses.)
 */
TEST_F(vm, unbind_at_window_end)
{
	int ret;

	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, HI - PAGE, PAGE));
	ret = vaccel_vm_unbind(self->fd, HI, PAGE);
	EXPECT_EQ(-ENOENT, ret);
	if (ret == -ENOENT)
		EXPECT_EQ(-ENOENT, vaccel_vm_unbind(self->fd, HI, -(HI - LO)));
	EXPECT_EQ(-ENOENT, vaccel_vm_unbind(self->fd, HI + PAGE, PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, HI - PAGE, PAGE));
	ret = vaccel_vm_unbind(self->fd, HI, PAGE);
	EXPECT_EQ(-ENOENT, ret);
	if (ret == -ENOENT)
		EXPECT_EQ(-ENOENT, vaccel_vm_unbind(self->fd, HI, -(HI - LO)));
}

/* Two adjacent mappings: unbinding one exactly leaves the other. */
TEST_F(vm, unbind_adjacent)
{
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA, 2 * PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA + 2 * PAGE, 2 * PAGE));
	/* one unbind cannot cover both */
	EXPECT_EQ(-EINVAL, vaccel_vm_unbind(self->fd, VA, 4 * PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, VA + 2 * PAGE, 2 * PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA + PAGE, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA + 2 * PAGE, PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, VA, 2 * PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, VA + 2 * PAGE, PAGE));
}

/* Each open file is its own context with its own address space. */
TEST_F(vm, per_context)
{
	uint32_t h2;
	int fd2 = vaccel_open(ID);

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, vaccel_bo_new(fd2, 4 * PAGE, 0, &h2));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA, 4 * PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(fd2, h2, RW, 0, VA, 4 * PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(fd2, h2, R, 0, VA + PAGE, PAGE));
	EXPECT_EQ(self->counts.mappings + 2, vaccel_objects("mappings"));
	/* one context cannot unbind the other's mapping */
	EXPECT_EQ(0, vaccel_vm_unbind(fd2, VA, 4 * PAGE));
	EXPECT_EQ(-ENOENT, vaccel_vm_unbind(fd2, VA, 4 * PAGE));
	EXPECT_EQ(-EBUSY, vaccel_vm_bind(self->fd, self->bo, R, 0, VA, PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, VA, 4 * PAGE));
	/* closing a file drops its mappings */
	EXPECT_EQ(0, vaccel_vm_bind(fd2, h2, RW, 0, VA, 4 * PAGE));
	close(fd2);
	EXPECT_EQ(self->counts.mappings, vaccel_objects_wait("mappings", self->counts.mappings, 2000));
}

/* One object at several addresses, whole and in parts. */
TEST_F(vm, same_object_many_vas)
{
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA, 16 * PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, R, 0, VA + (1 << 20), 16 * PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, W, 8 * PAGE, LO, 8 * PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, self->bo, R, 3 * PAGE, HI - PAGE, PAGE));
	EXPECT_EQ(self->counts.mappings + 4, vaccel_objects("mappings"));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, VA, 16 * PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, LO, 8 * PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, HI - PAGE, PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, VA + (1 << 20), 16 * PAGE));
	EXPECT_EQ(self->counts.mappings, vaccel_objects_wait("mappings", self->counts.mappings, 2000));
}

/* A mapping holds its object: GEM_CLOSE does not free it, VM_UNBIND does. */
TEST_F(vm, mapping_keeps_object)
{
	uint64_t used = vaccel_memory_used(self->fd);
	uint32_t h;

	ASSERT_EQ(0, vaccel_bo_new(self->fd, 1 << 20, 0, &h));
	EXPECT_EQ(used + (1 << 20), vaccel_memory_used(self->fd));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, h, RW, 0, VA, 1 << 20));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, h, R, 0, LO, PAGE));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
	EXPECT_EQ(-ENOENT, vaccel_bo_info(self->fd, h, NULL));
	EXPECT_EQ(-ENOENT, vaccel_vm_bind(self->fd, h, RW, 0, VA + (1 << 20), PAGE));
	EXPECT_EQ(used + (1 << 20), vaccel_memory_used(self->fd));
	EXPECT_EQ(self->counts.bos + 2, vaccel_objects("bos"));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, VA, 1 << 20));
	EXPECT_EQ(used + (1 << 20), vaccel_memory_used(self->fd));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, LO, PAGE));
	EXPECT_EQ(used, vaccel_memory_used_wait(self->fd, used, 2000));
	EXPECT_EQ(self->counts.bos + 1, vaccel_objects_wait("bos", self->counts.bos + 1, 2000));
}

/* The line of the mapping at @va in the "vm" file; false if none. */
static bool vm_line(const char *text, uint64_t va, unsigned int *ctx,
		    uint64_t *size, uint64_t *bo_offset, char *acc)
{
	const char *p;

	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned long long v, s, o;
		unsigned int c;
		char a[4];

		if (sscanf(p, "ctx %u va 0x%llx size 0x%llx bo_offset 0x%llx access %3s",
			   &c, &v, &s, &o, a) != 5)
			continue;
		if (v != va)
			continue;
		*ctx = c;
		*size = s;
		*bo_offset = o;
		strcpy(acc, a);
		return true;
	}
	return false;
}

TEST_F(vm, debugfs_vm)
{
	char text[8192], acc[4] = "";
	uint64_t size = 0, off = 0;
	unsigned int ctx = 0, ctx2 = 0;
	int fd2;
	uint32_t h2;

	if (access(ACCEL_DEBUGFS, F_OK))
		SKIP(return, "debugfs is not mounted");
	ASSERT_LE(0, vaccel_dev_debugfs(ID, "vm", text, sizeof(text)));
	EXPECT_EQ(NULL, strstr(text, "va ")) TH_LOG("vm:\n%s", text);

	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->bo, R, 2 * PAGE, VA, 3 * PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->bo, W, 0, LO, PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 15 * PAGE, HI - PAGE, PAGE));
	fd2 = vaccel_open(ID);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, vaccel_bo_new(fd2, 2 * PAGE, 0, &h2));
	ASSERT_EQ(0, vaccel_vm_bind(fd2, h2, R, 0, VA + (1 << 20), 2 * PAGE));

	ASSERT_LE(0, vaccel_dev_debugfs(ID, "vm", text, sizeof(text)));
	ASSERT_TRUE(vm_line(text, VA, &ctx, &size, &off, acc)) TH_LOG("vm:\n%s", text);
	EXPECT_EQ(3 * PAGE, size);
	EXPECT_EQ(2 * PAGE, off);
	EXPECT_STREQ("r", acc);
	ASSERT_TRUE(vm_line(text, LO, &ctx2, &size, &off, acc));
	EXPECT_EQ(ctx, ctx2);
	EXPECT_EQ(PAGE, size);
	EXPECT_EQ(0, off);
	EXPECT_STREQ("w", acc);
	ASSERT_TRUE(vm_line(text, HI - PAGE, &ctx2, &size, &off, acc));
	EXPECT_EQ(ctx, ctx2);
	EXPECT_EQ(PAGE, size);
	EXPECT_EQ(15 * PAGE, off);
	EXPECT_STREQ("rw", acc);
	ASSERT_TRUE(vm_line(text, VA + (1 << 20), &ctx2, &size, &off, acc));
	EXPECT_NE(ctx, ctx2);
	EXPECT_EQ(2 * PAGE, size);
	EXPECT_STREQ("r", acc);

	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, LO, PAGE));
	close(fd2);
	ASSERT_LE(0, vaccel_dev_debugfs(ID, "vm", text, sizeof(text)));
	EXPECT_FALSE(vm_line(text, LO, &ctx2, &size, &off, acc));
	EXPECT_FALSE(vm_line(text, VA + (1 << 20), &ctx2, &size, &off, acc));
	EXPECT_TRUE(vm_line(text, VA, &ctx2, &size, &off, acc));
}

/*
 * Every rejected argument says why in the kernel log at drm debug level
 * DRM_UT_DRIVER (VACCEL_IOCTL_DBG()): the file and line of the check.
 * The old VM_BIND and VM_UNBIND rejected silently.
 */
TEST_F(vm, rejections_logged)
{
	static const char dbg[] = "/sys/module/drm/parameters/debug";
	char old[32];
	int kmsg;

	if (vaccel_read_file(dbg, old, sizeof(old)) <= 0)
		SKIP(return, "no drm debug parameter");
	kmsg = vaccel_kmsg_open();
	ASSERT_LE(0, kmsg);
	ASSERT_EQ(0, vaccel_sysfs_write(dbg, "0x2"));
	EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, 0, 0, VA, PAGE));
	EXPECT_EQ(-ERANGE, vaccel_vm_bind(self->fd, self->bo, RW, 0, PAGE, PAGE));
	EXPECT_EQ(-ENOENT, vaccel_vm_unbind(self->fd, VA, PAGE));
	vaccel_sysfs_write(dbg, old);
	EXPECT_TRUE(vaccel_kmsg_contains(kmsg, "ioctl argument check failed at"));
	close(kmsg);
	kmsg = vaccel_kmsg_open();
	EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->fd, self->bo, 0, 0, VA, PAGE));
	/* quiet again with the debug level off */
	EXPECT_FALSE(vaccel_kmsg_contains(kmsg, "ioctl argument check failed at"));
	close(kmsg);
}

/* After the device is unplugged, VM_BIND and VM_UNBIND fail with -ENODEV. */
TEST_F(vm, unplugged)
{
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA, PAGE));
	ASSERT_EQ(0, vaccel_del_device(ID));
	EXPECT_EQ(-ENODEV, vaccel_vm_bind(self->fd, self->bo, RW, 0, VA + PAGE, PAGE));
	EXPECT_EQ(-ENODEV, vaccel_vm_unbind(self->fd, VA, PAGE));
	EXPECT_EQ(-ENODEV, vaccel_bo_seal(self->fd, self->bo));
	/* teardown closes the file: the mapping goes then */
}

/* "<key> <n>" of a memory.stat text; -1 if absent. */
static long long stat_value(const char *text, const char *key)
{
	return vaccel_kv(text, key);
}

/*
 * The memory user space makes the kernel allocate is charged to its
 * memory cgroup (GFP_KERNEL_ACCOUNT): 2,000 binds of one page grow the
 * cgroup's unreclaimable slab by at least their mapping structures. (The
 * old code allocated those with GFP_KERNEL, charged to nobody.)
 */
TEST_F_TIMEOUT(vm, bind_memory_accounted, 120)
{
	static const char root[] = "/sys/fs/cgroup";
	char grp[128], procs[160], stat[160], buf[8192];
	int fds[2];
	pid_t pid;
	char c;

	if (geteuid() != 0)
		SKIP(return, "needs root for a memory cgroup");
	snprintf(procs, sizeof(procs), "%s/cgroup.controllers", root);
	if (access(procs, F_OK) &&
	    mount("cgroup2", root, "cgroup2", 0, NULL))
		SKIP(return, "no cgroup2 (%s)", strerror(errno));
	snprintf(procs, sizeof(procs), "%s/cgroup.subtree_control", root);
	if (vaccel_sysfs_write(procs, "+memory"))
		SKIP(return, "no memory controller");
	snprintf(grp, sizeof(grp), "%s/vaccel-vm-test", root);
	rmdir(grp);
	ASSERT_EQ(0, mkdir(grp, 0755));
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", grp);
	snprintf(stat, sizeof(stat), "%s/memory.stat", grp);
	ASSERT_EQ(0, pipe(fds));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		long long before, after;
		char me[32];
		int i;

		snprintf(me, sizeof(me), "%d", (int)getpid());
		CHILD_EQ(0, vaccel_sysfs_write(procs, me));
		CHILD_ASSERT(vaccel_read_file(stat, buf, sizeof(buf)) > 0);
		before = stat_value(buf, "slab_unreclaimable");
		for (i = 0; i < 2000; i++)
			CHILD_EQ(0, vaccel_vm_bind(self->fd, self->bo, R, (i % 16) * PAGE,
						   VA + i * PAGE, PAGE));
		CHILD_ASSERT(vaccel_read_file(stat, buf, sizeof(buf)) > 0);
		after = stat_value(buf, "slab_unreclaimable");
		fprintf(stderr, "# slab_unreclaimable %lld -> %lld\n", before, after);
		CHILD_ASSERT(before >= 0 && after - before >= 2000 * 128);
		CHILD_ASSERT(write(fds[1], "d", 1) == 1);
		_exit(0);
	}
	EXPECT_EQ(1, read(fds[0], &c, 1));
	EXPECT_EQ(0, vaccel_wait_child(pid));
	close(fds[0]);
	close(fds[1]);
	EXPECT_EQ(2000 + self->counts.mappings, vaccel_objects("mappings"));
	close(self->fd);	/* unbinds all */
	self->fd = -1;
	EXPECT_EQ(self->counts.mappings,
		  vaccel_objects_wait("mappings", self->counts.mappings, 5000));
	EXPECT_EQ(0, rmdir(grp));
}

TEST_HARNESS_MAIN
