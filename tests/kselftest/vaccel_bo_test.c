// SPDX-License-Identifier: GPL-2.0-only
/*
 * Buffer objects: BO_CREATE (sizes, flags, device capacity, the per-file
 * handle limit), BO_INFO, host mmap, BO_SEAL, RLIMIT_MEMLOCK charging of
 * pinned objects, and the debugfs views of all of it.
 *
 * Every test runs on a fresh device with 64 MiB of memory and checks that
 * the module's live-object counters are back at their starting values
 * afterwards.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "vaccel_unpriv.h"
#include "kselftest_harness.h"

#define ID		VACCEL_TEST_ID
#define CAP		(64ULL << 20)
#define PAGE		VACCEL_PAGE
#define PERSISTENT	DRM_VACCEL_BO_PERSISTENT
#define SIGNAL		DRM_VACCEL_BO_SIGNAL
#define RW		(PROT_READ | PROT_WRITE)

FIXTURE(bo) {
	int fd;
	struct vaccel_counts counts;
};

FIXTURE_SETUP(bo)
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
}

/* Whatever a test did, every object it made must be gone afterwards. */
FIXTURE_TEARDOWN(bo)
{
	if (self->fd >= 0)
		close(self->fd);
	vaccel_del_device(ID);
	EXPECT_COUNTS_BACK(&self->counts, 2000);
}

static bool all_bytes(const void *p, int c, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != (unsigned char)c)
			return false;
	return true;
}

TEST_F(bo, params)
{
	uint64_t v = 0;

	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_MEMORY_CAPACITY, &v));
	EXPECT_EQ(CAP, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_MEMORY_USED, &v));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_MAX_BOS, &v));
	EXPECT_EQ(4096, v);
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_MAX_MAPPINGS, &v));
	EXPECT_EQ(4096, v);
	EXPECT_EQ(-EINVAL, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_MAX_QUEUES + 1, &v));
	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_UAPI_VERSION, &v));
	EXPECT_EQ(VACCEL_UAPI_VERSION, v);
}

TEST_F(bo, create_rounds_size)
{
	static const uint64_t sizes[] = { 1, 4095, 4096, 4097, 12345, 1 << 20 };
	struct drm_vaccel_bo_create bo[6] = {};
	uint64_t used = 0;
	unsigned int i, j;

	for (i = 0; i < 6; i++) {
		ASSERT_EQ(0, vaccel_bo_create(self->fd, sizes[i], 0, &bo[i]));
		EXPECT_EQ((sizes[i] + PAGE - 1) & ~(PAGE - 1), bo[i].size);
		EXPECT_NE(0, bo[i].handle);
		EXPECT_NE(0, bo[i].mmap_offset);
		EXPECT_EQ(0, bo[i].mmap_offset % PAGE);
		used += bo[i].size;
		EXPECT_EQ(used, vaccel_memory_used(self->fd));
		for (j = 0; j < i; j++) {
			EXPECT_NE(bo[j].handle, bo[i].handle);
			EXPECT_NE(bo[j].mmap_offset, bo[i].mmap_offset);
		}
	}
	EXPECT_EQ(self->counts.bos + 6, vaccel_objects("bos"));
	for (i = 0; i < 6; i++)
		EXPECT_EQ(0, vaccel_gem_close(self->fd, bo[i].handle));
	EXPECT_EQ(0, vaccel_memory_used_wait(self->fd, 0, 2000));
}

TEST_F(bo, create_size_zero)
{
	EXPECT_EQ(-EINVAL, vaccel_bo_new(self->fd, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, vaccel_bo_new(self->fd, 0, PERSISTENT, NULL));
	EXPECT_EQ(-EINVAL, vaccel_bo_new(self->fd, 0, SIGNAL, NULL));
	EXPECT_EQ(self->counts.bos, vaccel_objects("bos"));
}

TEST_F(bo, create_bad_flags)
{
	static const uint32_t bad[] = {
		0x4, 0x8, 0x100, 0x80000000u, 0x5, 0x6, 0xffffffffu,
		PERSISTENT | SIGNAL,
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_EQ(-EINVAL, vaccel_bo_new(self->fd, PAGE, bad[i], NULL))
			TH_LOG("flags 0x%x", bad[i]);
	EXPECT_EQ(0, vaccel_memory_used(self->fd));
	EXPECT_EQ(self->counts.bos, vaccel_objects("bos"));
}

TEST_F(bo, create_too_big)
{
	static const uint64_t big[] = {
		CAP + 1, CAP + PAGE, 2 * CAP, 1ULL << 63, ~0ULL,
		~0ULL - PAGE + 2,	/* rounding up would wrap */
	};
	uint32_t h;
	unsigned int i;

	for (i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		EXPECT_EQ(-E2BIG, vaccel_bo_new(self->fd, big[i], 0, NULL))
			TH_LOG("size 0x%llx", (unsigned long long)big[i]);
		EXPECT_EQ(-E2BIG, vaccel_bo_new(self->fd, big[i], PERSISTENT, NULL))
			TH_LOG("persistent, size 0x%llx", (unsigned long long)big[i]);
	}
	EXPECT_EQ(0, vaccel_memory_used(self->fd));
	/* exactly the capacity is fine, and so is what rounds up to it */
	ASSERT_EQ(0, vaccel_bo_new(self->fd, CAP, 0, &h));
	EXPECT_EQ(CAP, vaccel_memory_used(self->fd));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
	ASSERT_EQ(0, vaccel_bo_new(self->fd, CAP - 1, 0, &h));
	EXPECT_EQ(CAP, vaccel_memory_used(self->fd));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
	EXPECT_EQ(0, vaccel_memory_used_wait(self->fd, 0, 2000));
}

/* The default device has 1 GiB. */
TEST_F(bo, create_too_big_default_device)
{
	uint64_t cap = 0;
	int fd = vaccel_open(0);

	if (fd == -ENOENT)
		SKIP(return, "device 0 does not exist");
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vaccel_get_param(fd, DRM_VACCEL_PARAM_MEMORY_CAPACITY, &cap));
	EXPECT_EQ(1ULL << 30, cap);
	EXPECT_EQ(-E2BIG, vaccel_bo_new(fd, cap + 1, 0, NULL));
	EXPECT_EQ(-E2BIG, vaccel_bo_new(fd, ~0ULL, 0, NULL));
	close(fd);
}

TEST_F(bo, capacity_enomem)
{
	uint32_t a, b, c;

	ASSERT_EQ(0, vaccel_bo_new(self->fd, CAP / 2, 0, &a));
	ASSERT_EQ(0, vaccel_bo_new(self->fd, CAP / 2, 0, &b));
	EXPECT_EQ(CAP, vaccel_memory_used(self->fd));
	EXPECT_EQ(-ENOMEM, vaccel_bo_new(self->fd, PAGE, 0, NULL));
	EXPECT_EQ(-ENOMEM, vaccel_bo_new(self->fd, 1, PERSISTENT, NULL));
	EXPECT_EQ(-ENOMEM, vaccel_bo_new(self->fd, PAGE, SIGNAL, NULL));
	EXPECT_EQ(CAP, vaccel_memory_used(self->fd));
	EXPECT_EQ(self->counts.bos + 2, vaccel_objects("bos"));

	/* freeing gives the capacity back */
	EXPECT_EQ(0, vaccel_gem_close(self->fd, a));
	EXPECT_EQ(CAP / 2, vaccel_memory_used_wait(self->fd, CAP / 2, 2000));
	EXPECT_EQ(-ENOMEM, vaccel_bo_new(self->fd, CAP / 2 + 1, 0, NULL));
	ASSERT_EQ(0, vaccel_bo_new(self->fd, CAP / 2, 0, &c));
	EXPECT_EQ(CAP, vaccel_memory_used(self->fd));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, b));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, c));
	EXPECT_EQ(0, vaccel_memory_used_wait(self->fd, 0, 2000));
}

/* MEMORY_USED is per device: every context's objects count. */
TEST_F(bo, memory_used_all_contexts)
{
	int fd2 = vaccel_open(ID);
	uint32_t h;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, vaccel_bo_new(fd2, 1 << 20, 0, &h));
	EXPECT_EQ(1 << 20, vaccel_memory_used(self->fd));
	ASSERT_EQ(0, vaccel_bo_new(self->fd, CAP - (1 << 20), 0, NULL));
	EXPECT_EQ(-ENOMEM, vaccel_bo_new(fd2, PAGE, 0, NULL));
	/* closing the file frees what it held */
	close(fd2);
	EXPECT_EQ(CAP - (1 << 20), vaccel_memory_used_wait(self->fd, CAP - (1 << 20), 2000));
}

TEST_F(bo, gem_close_frees)
{
	uint32_t h;

	ASSERT_EQ(0, vaccel_bo_new(self->fd, 1 << 20, 0, &h));
	EXPECT_EQ(1 << 20, vaccel_memory_used(self->fd));
	EXPECT_EQ(self->counts.bos + 1, vaccel_objects("bos"));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
	EXPECT_EQ(0, vaccel_memory_used_wait(self->fd, 0, 2000));
	EXPECT_EQ(self->counts.bos, vaccel_objects_wait("bos", self->counts.bos, 2000));
	EXPECT_EQ(-EINVAL, vaccel_gem_close(self->fd, h));	/* DRM core */
	EXPECT_EQ(-ENOENT, vaccel_bo_info(self->fd, h, NULL));
}

/* A host mapping keeps the object (and its capacity) after GEM_CLOSE. */
TEST_F(bo, mmap_keeps_object)
{
	struct drm_vaccel_bo_create bo = {};
	char *p;

	ASSERT_EQ(0, vaccel_bo_create(self->fd, 1 << 20, 0, &bo));
	p = vaccel_bo_mmap(self->fd, bo.mmap_offset, bo.size, RW);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0x5a, bo.size);
	EXPECT_EQ(0, vaccel_gem_close(self->fd, bo.handle));
	EXPECT_EQ(1 << 20, vaccel_memory_used(self->fd));
	EXPECT_EQ(self->counts.bos + 1, vaccel_objects("bos"));
	EXPECT_TRUE(all_bytes(p, 0x5a, bo.size));
	EXPECT_EQ(0, munmap(p, bo.size));
	EXPECT_EQ(0, vaccel_memory_used_wait(self->fd, 0, 2000));
	EXPECT_EQ(self->counts.bos, vaccel_objects_wait("bos", self->counts.bos, 2000));
}

/* An exported dma-buf keeps the object after GEM_CLOSE. */
TEST_F(bo, export_keeps_object)
{
	uint32_t h;
	int dmabuf = -1;

	ASSERT_EQ(0, vaccel_bo_new(self->fd, 1 << 20, PERSISTENT, &h));
	ASSERT_EQ(0, vaccel_prime_export(self->fd, h, &dmabuf));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
	EXPECT_EQ(1 << 20, vaccel_memory_used(self->fd));
	EXPECT_EQ(self->counts.bos + 1, vaccel_objects("bos"));
	close(dmabuf);
	EXPECT_EQ(0, vaccel_memory_used_wait(self->fd, 0, 2000));
	EXPECT_EQ(self->counts.bos, vaccel_objects_wait("bos", self->counts.bos, 2000));
}

TEST_F(bo, zero_filled)
{
	static const uint32_t flags[] = { 0, PERSISTENT, SIGNAL };
	unsigned int i, round;

	for (round = 0; round < 2; round++) {
		for (i = 0; i < 3; i++) {
			struct drm_vaccel_bo_create bo = {};
			char *p;

			ASSERT_EQ(0, vaccel_bo_create(self->fd, 64 << 10, flags[i], &bo));
			p = vaccel_bo_mmap(self->fd, bo.mmap_offset, bo.size, RW);
			ASSERT_NE(MAP_FAILED, p);
			EXPECT_TRUE(all_bytes(p, 0, bo.size))
				TH_LOG("flags 0x%x round %u", flags[i], round);
			/* dirty it: the next round must not see this */
			memset(p, 0xa5, bo.size);
			EXPECT_EQ(0, munmap(p, bo.size));
			EXPECT_EQ(0, vaccel_gem_close(self->fd, bo.handle));
		}
	}
}

TEST_F(bo, mmap_shared)
{
	struct drm_vaccel_bo_create bo = {};
	char *p, *q;

	ASSERT_EQ(0, vaccel_bo_create(self->fd, 3 * PAGE, 0, &bo));
	p = vaccel_bo_mmap(self->fd, bo.mmap_offset, bo.size, RW);
	ASSERT_NE(MAP_FAILED, p);
	q = vaccel_bo_mmap(self->fd, bo.mmap_offset, bo.size, PROT_READ);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_NE(p, q);
	strcpy(p + PAGE + 7, "through the first mapping");
	EXPECT_STREQ("through the first mapping", q + PAGE + 7);
	EXPECT_EQ(0, munmap(p, bo.size));
	EXPECT_EQ(0, munmap(q, bo.size));
	/* the contents live in the object, not in the mapping */
	q = vaccel_bo_mmap(self->fd, bo.mmap_offset, bo.size, PROT_READ);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_STREQ("through the first mapping", q + PAGE + 7);
	EXPECT_EQ(0, munmap(q, bo.size));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, bo.handle));
}

TEST_F(bo, mmap_private_einval)
{
	struct drm_vaccel_bo_create bo = {};
	void *p;

	ASSERT_EQ(0, vaccel_bo_create(self->fd, PAGE, 0, &bo));
	p = mmap(NULL, PAGE, RW, MAP_PRIVATE, self->fd, bo.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	if (p != MAP_FAILED)
		munmap(p, PAGE);
	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, self->fd, bo.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	if (p != MAP_FAILED)
		munmap(p, PAGE);
	EXPECT_EQ(0, vaccel_gem_close(self->fd, bo.handle));
}

/* The mmap offset belongs to the file that holds the handle. */
TEST_F(bo, mmap_other_file_eacces)
{
	struct drm_vaccel_bo_create bo = {};
	int fd2 = vaccel_open(ID);
	void *p;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, vaccel_bo_create(self->fd, PAGE, 0, &bo));
	p = vaccel_bo_mmap(fd2, bo.mmap_offset, PAGE, RW);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	if (p != MAP_FAILED)
		munmap(p, PAGE);
	p = vaccel_bo_mmap(fd2, bo.mmap_offset, PAGE, PROT_READ);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	if (p != MAP_FAILED)
		munmap(p, PAGE);
	/* handles are per file too */
	EXPECT_EQ(-ENOENT, vaccel_bo_info(fd2, bo.handle, NULL));
	EXPECT_EQ(-ENOENT, vaccel_bo_seal(fd2, bo.handle));
	close(fd2);
	EXPECT_EQ(0, vaccel_gem_close(self->fd, bo.handle));
}

TEST_F_TIMEOUT(bo, max_bos, 90)
{
	uint64_t max = 0, i;
	uint32_t *h, extra;
	int fd2;

	ASSERT_EQ(0, vaccel_get_param(self->fd, DRM_VACCEL_PARAM_MAX_BOS, &max));
	ASSERT_EQ(4096, max);
	h = calloc(max, sizeof(*h));
	ASSERT_NE(NULL, h);
	for (i = 0; i < max; i++)
		ASSERT_EQ(0, vaccel_bo_new(self->fd, PAGE, 0, &h[i]))
			TH_LOG("object %llu", (unsigned long long)i);
	EXPECT_EQ(-ENOSPC, vaccel_bo_new(self->fd, PAGE, 0, NULL));
	EXPECT_EQ(-ENOSPC, vaccel_bo_new(self->fd, PAGE, PERSISTENT, NULL));
	EXPECT_EQ(max * PAGE, vaccel_memory_used(self->fd));
	EXPECT_EQ(self->counts.bos + (long)max, vaccel_objects("bos"));

	/* the limit is per file */
	fd2 = vaccel_open(ID);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(0, vaccel_bo_new(fd2, PAGE, 0, NULL));
	close(fd2);

	/* closing a handle makes room for exactly one more */
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h[max / 2]));
	EXPECT_EQ(0, vaccel_bo_new(self->fd, PAGE, SIGNAL, &extra));
	EXPECT_EQ(-ENOSPC, vaccel_bo_new(self->fd, PAGE, 0, NULL));
	free(h);
	/* teardown closes the file with all of them */
}

TEST_F(bo, info_values)
{
	static const uint32_t flags[] = { 0, PERSISTENT, SIGNAL };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		struct drm_vaccel_bo_create bo = {};
		struct drm_vaccel_bo_info info = {};

		ASSERT_EQ(0, vaccel_bo_create(self->fd, 5 * PAGE - 3, flags[i], &bo));
		memset(&info, 0xff, sizeof(info));
		ASSERT_EQ(0, vaccel_bo_info(self->fd, bo.handle, &info));
		EXPECT_EQ(bo.handle, info.handle);
		EXPECT_EQ(flags[i], info.flags);
		EXPECT_EQ(5 * PAGE, info.size);
		EXPECT_EQ(bo.mmap_offset, info.mmap_offset);
		EXPECT_EQ(0, info.status);
		EXPECT_EQ(0, info.pad);
	}
}

TEST_F(bo, info_errors)
{
	struct drm_vaccel_bo_info info = {};
	uint32_t h;

	ASSERT_EQ(0, vaccel_bo_new(self->fd, PAGE, 0, &h));
	info.handle = h;
	info.pad = 1;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VACCEL_BO_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
	info.pad = 0x80000000u;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VACCEL_BO_INFO, &info));
	EXPECT_EQ(EINVAL, errno);

	EXPECT_EQ(-ENOENT, vaccel_bo_info(self->fd, 0, NULL));
	EXPECT_EQ(-ENOENT, vaccel_bo_info(self->fd, h + 1, NULL));
	EXPECT_EQ(-ENOENT, vaccel_bo_info(self->fd, 0xdeadbeef, NULL));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
	EXPECT_EQ(-ENOENT, vaccel_bo_info(self->fd, h, NULL));
}

/* Create a persistent object holding @text at offset 100; its handle. */
static uint32_t make_persistent(struct __test_metadata *_metadata, int fd,
				uint64_t size, const char *text,
				uint64_t *offset)
{
	struct drm_vaccel_bo_create bo = {};
	char *p;

	EXPECT_EQ(0, vaccel_bo_create(fd, size, PERSISTENT, &bo));
	p = vaccel_bo_mmap(fd, bo.mmap_offset, bo.size, RW);
	EXPECT_NE(MAP_FAILED, p);
	if (p != MAP_FAILED) {
		strcpy(p + 100, text);
		munmap(p, bo.size);
	}
	if (offset)
		*offset = bo.mmap_offset;
	return bo.handle;
}

TEST_F(bo, seal_basic)
{
	struct drm_vaccel_bo_info info = {};
	uint64_t off;
	uint32_t h = make_persistent(_metadata, self->fd, 2 * PAGE, "sealed text", &off);
	char *p;

	ASSERT_EQ(0, vaccel_bo_seal(self->fd, h));
	ASSERT_EQ(0, vaccel_bo_info(self->fd, h, &info));
	EXPECT_EQ(DRM_VACCEL_BO_STATUS_SEALED, info.status);
	EXPECT_EQ(PERSISTENT, info.flags);
	/* sealing again changes nothing */
	EXPECT_EQ(0, vaccel_bo_seal(self->fd, h));
	ASSERT_EQ(0, vaccel_bo_info(self->fd, h, &info));
	EXPECT_EQ(DRM_VACCEL_BO_STATUS_SEALED, info.status);

	/* no writable host mapping any more */
	p = vaccel_bo_mmap(self->fd, off, 2 * PAGE, RW);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	if (p != MAP_FAILED)
		munmap(p, 2 * PAGE);
	p = vaccel_bo_mmap(self->fd, off, 2 * PAGE, PROT_WRITE);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	if (p != MAP_FAILED)
		munmap(p, 2 * PAGE);

	/* a read-only one shows the contents and stays read-only */
	p = vaccel_bo_mmap(self->fd, off, 2 * PAGE, PROT_READ);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_STREQ("sealed text", p + 100);
	EXPECT_EQ(-1, mprotect(p, 2 * PAGE, RW));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(-1, mprotect(p + PAGE, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	EXPECT_STREQ("sealed text", p + 100);
	EXPECT_EQ(0, munmap(p, 2 * PAGE));

	/* no writable device mapping either */
	EXPECT_EQ(-EACCES, vaccel_vm_bind(self->fd, h, DRM_VACCEL_VM_WRITE, 0,
					  VACCEL_VA_LO, PAGE));
	EXPECT_EQ(-EACCES, vaccel_vm_bind(self->fd, h, DRM_VACCEL_VM_READ |
					  DRM_VACCEL_VM_WRITE, 0, VACCEL_VA_LO, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, h, DRM_VACCEL_VM_READ, 0,
				    VACCEL_VA_LO, 2 * PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, VACCEL_VA_LO, 2 * PAGE));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
}

TEST_F(bo, seal_not_persistent)
{
	struct drm_vaccel_bo_info info = {};
	uint32_t plain, sig;

	ASSERT_EQ(0, vaccel_bo_new(self->fd, PAGE, 0, &plain));
	ASSERT_EQ(0, vaccel_bo_new(self->fd, PAGE, SIGNAL, &sig));
	EXPECT_EQ(-EINVAL, vaccel_bo_seal(self->fd, plain));
	EXPECT_EQ(-EINVAL, vaccel_bo_seal(self->fd, sig));
	ASSERT_EQ(0, vaccel_bo_info(self->fd, plain, &info));
	EXPECT_EQ(0, info.status);
	ASSERT_EQ(0, vaccel_bo_info(self->fd, sig, &info));
	EXPECT_EQ(0, info.status);
}

TEST_F(bo, seal_bad_args)
{
	struct drm_vaccel_bo_seal seal = {};
	struct drm_vaccel_bo_info info = {};
	uint32_t h;

	ASSERT_EQ(0, vaccel_bo_new(self->fd, PAGE, PERSISTENT, &h));
	seal.handle = h;
	seal.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VACCEL_BO_SEAL, &seal));
	EXPECT_EQ(EINVAL, errno);
	seal.flags = 0x80000000u;
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VACCEL_BO_SEAL, &seal));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, vaccel_bo_info(self->fd, h, &info));
	EXPECT_EQ(0, info.status);

	EXPECT_EQ(-ENOENT, vaccel_bo_seal(self->fd, 0));
	EXPECT_EQ(-ENOENT, vaccel_bo_seal(self->fd, h + 1));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
	EXPECT_EQ(-ENOENT, vaccel_bo_seal(self->fd, h));
}

TEST_F(bo, seal_busy_writable_mmap)
{
	struct drm_vaccel_bo_info info = {};
	uint64_t off;
	uint32_t h = make_persistent(_metadata, self->fd, 2 * PAGE, "x", &off);
	char *w, *r;

	w = vaccel_bo_mmap(self->fd, off, 2 * PAGE, RW);
	ASSERT_NE(MAP_FAILED, w);
	r = vaccel_bo_mmap(self->fd, off, 2 * PAGE, PROT_READ);
	ASSERT_NE(MAP_FAILED, r);
	EXPECT_EQ(-EBUSY, vaccel_bo_seal(self->fd, h));
	ASSERT_EQ(0, vaccel_bo_info(self->fd, h, &info));
	EXPECT_EQ(0, info.status);
	/* the writable mapping still works after the refused seal */
	strcpy(w + 200, "still writable");
	EXPECT_STREQ("still writable", r + 200);

	EXPECT_EQ(0, munmap(w, 2 * PAGE));
	/* a read-only mapping does not stop it */
	EXPECT_EQ(0, vaccel_bo_seal(self->fd, h));
	EXPECT_STREQ("still writable", r + 200);
	EXPECT_EQ(0, munmap(r, 2 * PAGE));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
}

/* Unmapping part of a writable mapping leaves a writable mapping. */
TEST_F(bo, seal_busy_partial_munmap)
{
	uint64_t off;
	uint32_t h = make_persistent(_metadata, self->fd, 3 * PAGE, "x", &off);
	char *w;

	w = vaccel_bo_mmap(self->fd, off, 3 * PAGE, RW);
	ASSERT_NE(MAP_FAILED, w);
	/* split the VMA in three, then drop the middle */
	EXPECT_EQ(0, munmap(w + PAGE, PAGE));
	EXPECT_EQ(-EBUSY, vaccel_bo_seal(self->fd, h));
	EXPECT_EQ(0, munmap(w, PAGE));
	EXPECT_EQ(-EBUSY, vaccel_bo_seal(self->fd, h));
	EXPECT_EQ(0, munmap(w + 2 * PAGE, PAGE));
	EXPECT_EQ(0, vaccel_bo_seal(self->fd, h));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
}

/* A writable mapping inherited by a child process counts too. */
TEST_F(bo, seal_busy_inherited_mapping)
{
	int to_child[2], to_parent[2];
	uint64_t off;
	uint32_t h = make_persistent(_metadata, self->fd, PAGE, "inherited", &off);
	char *w, c = 0;
	pid_t pid;

	w = vaccel_bo_mmap(self->fd, off, PAGE, RW);
	ASSERT_NE(MAP_FAILED, w);
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		/* faults (and exits) if the mapping was not inherited */
		c = w[100];
		CHILD_ASSERT(write(to_parent[1], &c, 1) == 1);
		CHILD_ASSERT(read(to_child[0], &c, 1) == 1);
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	if (read(to_parent[0], &c, 1) == 1) {
		EXPECT_EQ('i', c);
		EXPECT_EQ(0, munmap(w, PAGE));
		/* only the child's copy of the writable mapping is left */
		EXPECT_EQ(-EBUSY, vaccel_bo_seal(self->fd, h));
		ASSERT_EQ(1, write(to_child[1], &c, 1));
		EXPECT_EQ(0, vaccel_wait_child(pid));
	} else {
		/* VM_DONTCOPY: the child had no mapping and died reading it */
		TH_LOG("the mapping was not inherited");
		EXPECT_EQ(128 + SIGSEGV, vaccel_wait_child(pid));
		EXPECT_EQ(0, munmap(w, PAGE));
	}
	EXPECT_EQ(0, vaccel_bo_seal(self->fd, h));
	close(to_child[1]);
	close(to_parent[0]);
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
}

TEST_F(bo, seal_busy_write_bind)
{
	uint32_t h;
	const uint64_t va = VACCEL_VA_LO + (1 << 20);

	ASSERT_EQ(0, vaccel_bo_new(self->fd, 4 * PAGE, PERSISTENT, &h));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, h, DRM_VACCEL_VM_READ, 0, va, PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, h, DRM_VACCEL_VM_WRITE, PAGE,
				    va + PAGE, PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, h, DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE,
				    0, va + 16 * PAGE, 4 * PAGE));
	EXPECT_EQ(-EBUSY, vaccel_bo_seal(self->fd, h));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, va + PAGE, PAGE));
	EXPECT_EQ(-EBUSY, vaccel_bo_seal(self->fd, h));
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, va + 16 * PAGE, 4 * PAGE));
	/* the read-only binding does not stop it */
	EXPECT_EQ(0, vaccel_bo_seal(self->fd, h));
	EXPECT_EQ(-EACCES, vaccel_vm_bind(self->fd, h, DRM_VACCEL_VM_WRITE, 0,
					  va + PAGE, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, h, DRM_VACCEL_VM_READ, 0,
				    va + PAGE, 4 * PAGE));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
	/* teardown closes the file with the bindings */
}

/*
 * A writable mapping made read-only with mprotect() could be made
 * writable again: either it still stops the seal, or (if the seal
 * succeeds) it can no longer be made writable.
 */
TEST_F(bo, seal_after_mprotect_readonly)
{
	uint64_t off;
	uint32_t h = make_persistent(_metadata, self->fd, PAGE, "protected", &off);
	char *w;
	int ret;

	w = vaccel_bo_mmap(self->fd, off, PAGE, RW);
	ASSERT_NE(MAP_FAILED, w);
	ASSERT_EQ(0, mprotect(w, PAGE, PROT_READ));
	ret = vaccel_bo_seal(self->fd, h);
	if (ret == 0) {
		EXPECT_EQ(-1, mprotect(w, PAGE, RW)) {
			strcpy(w + 100, "SEAL BROKEN");
		}
	} else {
		EXPECT_EQ(-EBUSY, ret);
	}
	EXPECT_EQ(0, munmap(w, PAGE));
	EXPECT_EQ(0, vaccel_bo_seal(self->fd, h));
	w = vaccel_bo_mmap(self->fd, off, PAGE, PROT_READ);
	ASSERT_NE(MAP_FAILED, w);
	EXPECT_STREQ("protected", w + 100);
	EXPECT_EQ(0, munmap(w, PAGE));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
}

/* A writable mapping moved with mremap() is still one writable mapping. */
TEST_F(bo, seal_busy_after_mremap)
{
	uint64_t off;
	uint32_t h = make_persistent(_metadata, self->fd, 2 * PAGE, "moved", &off);
	char *w, *hole, *m;

	w = vaccel_bo_mmap(self->fd, off, 2 * PAGE, RW);
	ASSERT_NE(MAP_FAILED, w);
	/* reserve a destination, then move the mapping there */
	hole = mmap(NULL, 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	m = mremap(w, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, hole);
	ASSERT_EQ(hole, m);
	EXPECT_STREQ("moved", m + 100);
	EXPECT_EQ(-EBUSY, vaccel_bo_seal(self->fd, h));
	/* shrinking it unmaps the tail only */
	m = mremap(m, 2 * PAGE, PAGE, 0);
	ASSERT_EQ(hole, m);
	EXPECT_EQ(-EBUSY, vaccel_bo_seal(self->fd, h));
	EXPECT_EQ(0, munmap(m, PAGE));
	EXPECT_EQ(0, vaccel_bo_seal(self->fd, h));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
}

struct racer {
	int fd;
	uint32_t handle;
	uint64_t offset;
	volatile bool stop;
	volatile unsigned long made;
	unsigned long refused, violations;
};

/* Keep making writable host mappings; none may coexist with the seal. */
static void *mmap_racer(void *arg)
{
	struct racer *r = arg;

	while (!r->stop) {
		struct drm_vaccel_bo_info info = {};
		char *p = vaccel_bo_mmap(r->fd, r->offset, PAGE, RW);

		if (p == MAP_FAILED) {
			if (errno != EACCES)
				r->violations++;
			r->refused++;
			continue;
		}
		r->made++;
		if (vaccel_bo_info(r->fd, r->handle, &info) ||
		    (info.status & DRM_VACCEL_BO_STATUS_SEALED))
			r->violations++;
		p[8]++;
		munmap(p, PAGE);
	}
	return NULL;
}

/* Keep making writable device mappings; likewise. */
static void *bind_racer(void *arg)
{
	struct racer *r = arg;
	const uint64_t va = VACCEL_VA_LO + (1 << 20);

	while (!r->stop) {
		struct drm_vaccel_bo_info info = {};
		int ret = vaccel_vm_bind(r->fd, r->handle, DRM_VACCEL_VM_WRITE,
					 0, va, PAGE);

		if (ret) {
			if (ret != -EACCES)
				r->violations++;
			r->refused++;
			continue;
		}
		r->made++;
		if (vaccel_bo_info(r->fd, r->handle, &info) ||
		    (info.status & DRM_VACCEL_BO_STATUS_SEALED))
			r->violations++;
		if (vaccel_vm_unbind(r->fd, va, PAGE))
			r->violations++;
	}
	return NULL;
}

static void start_racers(struct __test_metadata *_metadata, struct racer *rm,
			 struct racer *rb, pthread_t *tm, pthread_t *tb)
{
	rm->stop = rb->stop = false;
	ASSERT_EQ(0, pthread_create(tm, NULL, mmap_racer, rm));
	ASSERT_EQ(0, pthread_create(tb, NULL, bind_racer, rb));
}

static void stop_racers(struct racer *rm, struct racer *rb, pthread_t tm,
			pthread_t tb)
{
	rm->stop = rb->stop = true;
	pthread_join(tm, NULL);
	pthread_join(tb, NULL);
}

/*
 * Seal racing with threads that keep mapping the object writable, on the
 * host and on the device: a writable mapping never coexists with the
 * sealed bit, and once sealed every attempt is refused and the contents
 * stay as they were.
 */
TEST_F_TIMEOUT(bo, seal_races_writers, 60)
{
	struct racer rm = {}, rb = {};
	pthread_t tm, tb;
	uint64_t off, end;
	uint32_t h = make_persistent(_metadata, self->fd, PAGE, "race", &off);
	unsigned long tries = 0, made;
	char before[PAGE], *p;
	int ret = -EBUSY;

	rm.fd = rb.fd = self->fd;
	rm.handle = rb.handle = h;
	rm.offset = rb.offset = off;
	start_racers(_metadata, &rm, &rb, &tm, &tb);
	/* let both get going first */
	end = vaccel_now_ms() + 2000;
	while ((rm.made < 10 || rb.made < 10) && vaccel_now_ms() < end)
		sched_yield();
	end = vaccel_now_ms() + 3000;
	while (ret == -EBUSY && vaccel_now_ms() < end) {
		tries++;
		ret = vaccel_bo_seal(self->fd, h);
	}
	if (ret == -EBUSY) {
		/* a slow machine: never found a gap; seal with the writers paused */
		TH_LOG("no gap for the seal in %lu tries", tries);
		stop_racers(&rm, &rb, tm, tb);
		ret = vaccel_bo_seal(self->fd, h);
		start_racers(_metadata, &rm, &rb, &tm, &tb);
	}
	EXPECT_EQ(0, ret);

	/* the writers go on, and must all be refused now */
	p = vaccel_bo_mmap(self->fd, off, PAGE, PROT_READ);
	ASSERT_NE(MAP_FAILED, p);
	memcpy(before, p, PAGE);
	made = rm.made + rb.made;
	vaccel_msleep(300);
	stop_racers(&rm, &rb, tm, tb);
	EXPECT_EQ(made, rm.made + rb.made);
	EXPECT_EQ(0, memcmp(before, p, PAGE));
	TH_LOG("%lu seal tries; mmaps %lu made %lu refused; binds %lu made %lu refused",
	       tries, rm.made, rm.refused, rb.made, rb.refused);
	EXPECT_EQ(0, rm.violations);
	EXPECT_EQ(0, rb.violations);
	EXPECT_STREQ("race", p + 100);
	EXPECT_EQ(0, munmap(p, PAGE));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
}

/*
 * A read-only mapping of any vaccel object can never be made writable, so
 * that seal can trust its count of writable mappings.
 */
TEST_F(bo, readonly_mapping_stays_readonly)
{
	static const uint32_t flags[] = { 0, PERSISTENT, SIGNAL };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		struct drm_vaccel_bo_create bo = {};
		char *p;

		ASSERT_EQ(0, vaccel_bo_create(self->fd, 2 * PAGE, flags[i], &bo));
		p = vaccel_bo_mmap(self->fd, bo.mmap_offset, bo.size, PROT_READ);
		ASSERT_NE(MAP_FAILED, p);
		EXPECT_EQ(-1, mprotect(p, bo.size, RW)) TH_LOG("flags 0x%x", flags[i]);
		EXPECT_EQ(EACCES, errno);
		EXPECT_EQ(-1, mprotect(p + PAGE, PAGE, PROT_WRITE));
		EXPECT_EQ(EACCES, errno);
		EXPECT_EQ(0, munmap(p, bo.size));
		EXPECT_EQ(0, vaccel_gem_close(self->fd, bo.handle));
	}
}

/* Not even ptrace-style forced writes get through a sealed object. */
TEST_F(bo, seal_proc_mem_write_refused)
{
	uint64_t off;
	uint32_t h = make_persistent(_metadata, self->fd, PAGE, "original", &off);
	char *p;
	int mem;

	ASSERT_EQ(0, vaccel_bo_seal(self->fd, h));
	p = vaccel_bo_mmap(self->fd, off, PAGE, PROT_READ);
	ASSERT_NE(MAP_FAILED, p);
	mem = open("/proc/self/mem", O_RDWR);
	ASSERT_LE(0, mem);
	EXPECT_EQ(-1, pwrite(mem, "CHANGED", 7, (off_t)(uintptr_t)(p + 100)));
	close(mem);
	EXPECT_STREQ("original", p + 100);
	EXPECT_EQ(0, munmap(p, PAGE));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
}

static struct vaccel_user test_user;
static struct vaccel_node test_node;

/* The node as the udev rule leaves it; false (and SKIP) without the user. */
static bool node_for_render(struct __test_metadata *_metadata)
{
	if (geteuid() != 0 || vaccel_user_get(&test_user))
		return false;
	EXPECT_EQ(0, vaccel_node_render(ID, &test_user, &test_node));
	return true;
}

/*
 * Persistent and signal objects are charged to RLIMIT_MEMLOCK of an
 * unprivileged creator, exactly their size, until they are freed; plain
 * objects are not. The charge shows as VmPin (not VmLck, which is mlock()'s)
 * and is given back by the time GEM_CLOSE or close() returns.
 */
static void memlock_child(void)
{
	uint32_t p[4], s, extra;
	long long base, lck;
	uint64_t used;
	int fd, i;

	CHILD_EQ(0, vaccel_user_enter(&test_user, 64 << 10));
	fd = open(test_node.path, O_RDWR | O_CLOEXEC);
	CHILD_ASSERT(fd >= 0);
	base = vaccel_vmpin();
	lck = vaccel_vmlck_now();
	CHILD_ASSERT(base >= 0 && lck >= 0);

	/* plain objects are not pinned or charged */
	CHILD_EQ(0, vaccel_bo_new(fd, 1 << 20, 0, NULL));
	CHILD_EQ(base, vaccel_vmpin());

	for (i = 0; i < 3; i++) {
		CHILD_EQ(0, vaccel_bo_new(fd, 16 << 10, PERSISTENT, &p[i]));
		CHILD_EQ(base + (i + 1) * (16 << 10), vaccel_vmpin());
	}
	CHILD_EQ(0, vaccel_bo_new(fd, (16 << 10) - 100, SIGNAL, &s));
	CHILD_EQ(base + (64 << 10), vaccel_vmpin());

	/* the limit is reached */
	used = vaccel_memory_used(fd);
	CHILD_EQ(-ENOMEM, vaccel_bo_new(fd, PAGE, PERSISTENT, NULL));
	CHILD_EQ(-ENOMEM, vaccel_bo_new(fd, 1, SIGNAL, NULL));
	CHILD_EQ(base + (64 << 10), vaccel_vmpin());
	CHILD_EQ(used, vaccel_memory_used(fd));
	CHILD_EQ(0, vaccel_bo_new(fd, PAGE, 0, NULL));

	/* freeing uncharges, at once */
	CHILD_EQ(0, vaccel_gem_close(fd, p[1]));
	CHILD_EQ(base + (48 << 10), vaccel_vmpin());
	CHILD_EQ(0, vaccel_bo_new(fd, 16 << 10, PERSISTENT, &p[3]));
	CHILD_EQ(-ENOMEM, vaccel_bo_new(fd, PAGE, PERSISTENT, NULL));
	CHILD_EQ(0, vaccel_gem_close(fd, s));
	CHILD_EQ(base + (48 << 10), vaccel_vmpin());
	CHILD_EQ(0, vaccel_bo_new(fd, 8 << 10, SIGNAL, &extra));
	CHILD_EQ(base + (56 << 10), vaccel_vmpin());
	CHILD_EQ(lck, vaccel_vmlck_now());

	/* and so does closing the file with the objects still in it */
	close(fd);
	CHILD_EQ(base, vaccel_vmpin());
	_exit(0);
}

TEST_F(bo, memlock_charged)
{
	pid_t pid;

	if (!node_for_render(_metadata))
		SKIP(return, "needs root and the rig's render-group user");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		memlock_child();
	EXPECT_EQ(0, vaccel_wait_child(pid));
	vaccel_node_restore(&test_node);
	EXPECT_EQ(0, vaccel_memory_used_wait(self->fd, 0, 2000));
}

/*
 * The charge belongs to the creating process even when another process
 * drops the last reference: the creator's VmPin goes back down when the
 * other process exits.
 */
static void memlock_holder_child(void)
{
	int fd, d = -1, go[2], ready[2];
	long long base;
	uint32_t h;
	pid_t g;
	char c;

	CHILD_EQ(0, vaccel_user_enter(&test_user, 64 << 10));
	fd = open(test_node.path, O_RDWR | O_CLOEXEC);
	CHILD_ASSERT(fd >= 0);
	base = vaccel_vmpin();
	CHILD_EQ(0, vaccel_bo_new(fd, 32 << 10, PERSISTENT, &h));
	CHILD_EQ(base + (32 << 10), vaccel_vmpin());
	CHILD_EQ(0, vaccel_prime_export(fd, h, &d));
	CHILD_EQ(0, vaccel_gem_close(fd, h));
	CHILD_EQ(base + (32 << 10), vaccel_vmpin());
	CHILD_ASSERT(pipe(go) == 0 && pipe(ready) == 0);
	g = fork();
	CHILD_ASSERT(g >= 0);
	if (g == 0) {
		uint32_t hg;
		int fg = open(test_node.path, O_RDWR | O_CLOEXEC);

		/* import into an own file, then hold only that */
		CHILD_ASSERT(fg >= 0);
		CHILD_EQ(0, vaccel_prime_import(fg, d, &hg));
		close(d);
		close(fd);
		CHILD_ASSERT(write(ready[1], "r", 1) == 1);
		CHILD_ASSERT(read(go[0], &c, 1) == 1);
		_exit(0);
	}
	CHILD_ASSERT(read(ready[0], &c, 1) == 1);
	close(d);
	close(fd);
	CHILD_EQ(base + (32 << 10), vaccel_vmpin());
	CHILD_ASSERT(write(go[1], "g", 1) == 1);
	CHILD_EQ(0, vaccel_wait_child(g));
	CHILD_EQ(base, vaccel_vmpin());
	/* and the limit has room for it again */
	fd = open(test_node.path, O_RDWR | O_CLOEXEC);
	CHILD_ASSERT(fd >= 0);
	CHILD_EQ(0, vaccel_bo_new(fd, 64 << 10, PERSISTENT, NULL));
	close(fd);
	_exit(0);
}

TEST_F(bo, memlock_uncharged_by_last_holder)
{
	pid_t pid;

	if (!node_for_render(_metadata))
		SKIP(return, "needs root and the rig's render-group user");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		memlock_holder_child();
	EXPECT_EQ(0, vaccel_wait_child(pid));
	vaccel_node_restore(&test_node);
	EXPECT_EQ(0, vaccel_memory_used_wait(self->fd, 0, 2000));
}

/*
 * A user outside the render group cannot open the node the rule makes;
 * one in it (through /etc/group, as a login would give) can.
 */
TEST_F(bo, render_group_access)
{
	pid_t pid;

	if (!node_for_render(_metadata))
		SKIP(return, "needs root and the rig's render-group user");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		CHILD_ASSERT(setgroups(0, NULL) == 0);
		CHILD_ASSERT(setresgid(test_user.gid, test_user.gid, test_user.gid) == 0);
		CHILD_ASSERT(setresuid(test_user.uid, test_user.uid, 0) == 0);
		fd = open(test_node.path, O_RDWR | O_CLOEXEC);
		CHILD_ASSERT(fd < 0 && errno == EACCES);
		CHILD_ASSERT(setresuid(0, 0, 0) == 0);
		CHILD_EQ(0, vaccel_user_enter(&test_user, ~0ULL));
		fd = open(test_node.path, O_RDWR | O_CLOEXEC);
		CHILD_ASSERT(fd >= 0);
		CHILD_EQ(0, vaccel_bo_new(fd, PAGE, PERSISTENT, NULL));
		_exit(0);
	}
	EXPECT_EQ(0, vaccel_wait_child(pid));
	vaccel_node_restore(&test_node);
}

/*
 * Only objects that really exist are counted: when the shmem helper fails
 * after allocating our structure (here: the system-wide file limit, which
 * only binds unprivileged tasks, refuses the object's shmem file), the
 * object is freed without our free callback. The old code counted it in
 * vaccel_gem_create_object() and the "bos" counter leaked one.
 */
TEST_F(bo, failed_create_not_counted)
{
	char old[64];
	pid_t pid;
	int fd, go[2], done[2];
	char c;

	if (!node_for_render(_metadata))
		SKIP(return, "needs root and the rig's render-group user");
	ASSERT_LT(0, vaccel_read_file("/proc/sys/fs/file-max", old, sizeof(old)));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_EQ(0, vaccel_user_enter(&test_user, ~0ULL));
		fd = open(test_node.path, O_RDWR | O_CLOEXEC);
		CHILD_ASSERT(fd >= 0);
		CHILD_ASSERT(write(done[1], "o", 1) == 1);
		CHILD_ASSERT(read(go[0], &c, 1) == 1);
		CHILD_EQ(-ENFILE, vaccel_bo_new(fd, PAGE, 0, NULL));
		CHILD_EQ(-ENFILE, vaccel_bo_new(fd, PAGE, PERSISTENT, NULL));
		CHILD_EQ(0, vaccel_memory_used(fd));
		CHILD_ASSERT(write(done[1], "d", 1) == 1);
		_exit(0);
	}
	ASSERT_EQ(1, read(done[0], &c, 1));
	ASSERT_EQ(0, vaccel_sysfs_write("/proc/sys/fs/file-max", "1"));
	ASSERT_EQ(1, write(go[1], "g", 1));
	EXPECT_EQ(1, read(done[0], &c, 1));
	EXPECT_EQ(0, vaccel_sysfs_write("/proc/sys/fs/file-max", old));
	EXPECT_EQ(0, vaccel_wait_child(pid));
	vaccel_node_restore(&test_node);
	EXPECT_EQ(self->counts.bos, vaccel_objects("bos"));
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

/*
 * Through a file opened O_RDONLY, MAP_SHARED with PROT_READ is a mapping
 * with VM_MAYSHARE but not VM_SHARED; it works (the old code wanted
 * VM_SHARED and refused it with -EINVAL) and can never become writable.
 */
TEST_F(bo, mmap_read_only_file)
{
	struct drm_vaccel_bo_create bo = {};
	char path[300], *p;
	int ro;

	ASSERT_EQ(0, vaccel_node_path(ID, path, sizeof(path)));
	ro = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ro);
	ASSERT_EQ(0, vaccel_bo_create(ro, 2 * PAGE, PERSISTENT, &bo));
	p = vaccel_bo_mmap(ro, bo.mmap_offset, bo.size, PROT_READ);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("errno %d", errno);
	EXPECT_TRUE(all_bytes(p, 0, bo.size));
	EXPECT_EQ(-1, mprotect(p, bo.size, RW));
	EXPECT_EQ(EACCES, errno);
	/* not a writable mapping: sealing is allowed */
	EXPECT_EQ(0, vaccel_bo_seal(ro, bo.handle));
	EXPECT_EQ(0, munmap(p, bo.size));
	p = vaccel_bo_mmap(ro, bo.mmap_offset, bo.size, RW);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, ro, bo.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	close(ro);
}

/* With CAP_IPC_LOCK the limit does not apply. */
TEST_F(bo, memlock_cap_ipc_lock)
{
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root for CAP_IPC_LOCK");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { 64 << 10, 64 << 10 };
		uint32_t h;

		CHILD_ASSERT(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
		CHILD_EQ(0, vaccel_bo_new(self->fd, 256 << 10, PERSISTENT, &h));
		CHILD_EQ(0, vaccel_bo_new(self->fd, 256 << 10, SIGNAL, NULL));
		CHILD_EQ(0, vaccel_gem_close(self->fd, h));
		_exit(0);
	}
	EXPECT_EQ(0, vaccel_wait_child(pid));
	/* the child's signal object is still in the (shared) file */
	EXPECT_EQ(256 << 10, vaccel_memory_used(self->fd));
}

/* Find the context id of the line "ctx <id> pid <pid> ..." ; -1 if none. */
static long ctx_of_pid(const char *contexts, int pid, unsigned int skip,
		       unsigned int *bos, unsigned int *mappings)
{
	const char *p;

	for (p = contexts; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned int id, b, m;
		int lpid;

		if (sscanf(p, "ctx %u pid %d bos %u mappings %u", &id, &lpid, &b, &m) != 4)
			continue;
		if (lpid != pid)
			continue;
		if (skip--)
			continue;
		if (bos)
			*bos = b;
		if (mappings)
			*mappings = m;
		return id;
	}
	return -1;
}

/* The line of context @ctx in the "contexts" file; false if none. */
static bool ctx_by_id(const char *contexts, long ctx, int *pid,
		      unsigned int *bos, unsigned int *mappings)
{
	const char *p;

	for (p = contexts; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned int id, b, m;
		int lpid;

		if (sscanf(p, "ctx %u pid %d bos %u mappings %u", &id, &lpid, &b, &m) != 4)
			continue;
		if (id != ctx)
			continue;
		*pid = lpid;
		*bos = b;
		*mappings = m;
		return true;
	}
	return false;
}

/* The "buffers" line of @handle in context @ctx; false if there is none. */
static bool buffer_line(const char *buffers, long ctx, uint32_t handle,
			uint64_t *size, unsigned int *flags, unsigned int *status)
{
	const char *p;

	for (p = buffers; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned long long sz;
		unsigned int c, h, f, s;

		if (sscanf(p, "ctx %u handle %u size %llu flags 0x%x status 0x%x",
			   &c, &h, &sz, &f, &s) != 5)
			continue;
		if (c != ctx || h != handle)
			continue;
		*size = sz;
		*flags = f;
		*status = s;
		return true;
	}
	return false;
}

TEST_F(bo, debugfs_info)
{
	char info[4096];
	uint32_t a, b, c;

	if (access(ACCEL_DEBUGFS, F_OK))
		SKIP(return, "debugfs is not mounted");
	ASSERT_LT(0, vaccel_dev_debugfs(ID, "info", info, sizeof(info)));
	EXPECT_EQ(0, vaccel_kv(info, "memory_used"));
	EXPECT_EQ(0, vaccel_kv(info, "pinned"));

	ASSERT_EQ(0, vaccel_bo_new(self->fd, 1 << 20, 0, &a));
	ASSERT_EQ(0, vaccel_bo_new(self->fd, 64 << 10, PERSISTENT, &b));
	ASSERT_EQ(0, vaccel_bo_new(self->fd, PAGE, SIGNAL, &c));
	ASSERT_LT(0, vaccel_dev_debugfs(ID, "info", info, sizeof(info)));
	EXPECT_EQ((1 << 20) + (68 << 10), vaccel_kv(info, "memory_used"));
	EXPECT_EQ((long long)vaccel_memory_used(self->fd), vaccel_kv(info, "memory_used"));
	EXPECT_EQ(68 << 10, vaccel_kv(info, "pinned"));

	EXPECT_EQ(0, vaccel_gem_close(self->fd, b));
	EXPECT_EQ((1 << 20) + PAGE, vaccel_memory_used_wait(self->fd, (1 << 20) + PAGE, 2000));
	ASSERT_LT(0, vaccel_dev_debugfs(ID, "info", info, sizeof(info)));
	EXPECT_EQ((1 << 20) + PAGE, vaccel_kv(info, "memory_used"));
	EXPECT_EQ(PAGE, vaccel_kv(info, "pinned"));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, a));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, c));
	EXPECT_EQ(0, vaccel_memory_used_wait(self->fd, 0, 2000));
	ASSERT_LT(0, vaccel_dev_debugfs(ID, "info", info, sizeof(info)));
	EXPECT_EQ(0, vaccel_kv(info, "memory_used"));
	EXPECT_EQ(0, vaccel_kv(info, "pinned"));
}

TEST_F(bo, debugfs_contexts)
{
	char text[4096];
	unsigned int bos = 99, maps = 99;
	long ctx1, ctx2;
	int pid = 0, fd2;
	uint32_t h;

	if (access(ACCEL_DEBUGFS, F_OK))
		SKIP(return, "debugfs is not mounted");
	ASSERT_LE(0, vaccel_dev_debugfs(ID, "contexts", text, sizeof(text)));
	ctx1 = ctx_of_pid(text, getpid(), 0, &bos, &maps);
	ASSERT_LE(0, ctx1) TH_LOG("contexts:\n%s", text);
	EXPECT_EQ(0, bos);
	EXPECT_EQ(0, maps);
	EXPECT_EQ(-1, ctx_of_pid(text, getpid(), 1, NULL, NULL));

	ASSERT_EQ(0, vaccel_bo_new(self->fd, PAGE, 0, &h));
	ASSERT_EQ(0, vaccel_bo_new(self->fd, PAGE, 0, NULL));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, h, DRM_VACCEL_VM_READ, 0, VACCEL_VA_LO, PAGE));
	fd2 = vaccel_open(ID);
	ASSERT_LE(0, fd2);
	ASSERT_LE(0, vaccel_dev_debugfs(ID, "contexts", text, sizeof(text)));
	ASSERT_TRUE(ctx_by_id(text, ctx1, &pid, &bos, &maps)) TH_LOG("contexts:\n%s", text);
	EXPECT_EQ(getpid(), pid);
	EXPECT_EQ(2, bos);
	EXPECT_EQ(1, maps);
	ctx2 = ctx_of_pid(text, getpid(), 0, NULL, NULL);
	if (ctx2 == ctx1)
		ctx2 = ctx_of_pid(text, getpid(), 1, NULL, NULL);
	ASSERT_LE(0, ctx2) TH_LOG("contexts:\n%s", text);
	EXPECT_NE(ctx1, ctx2);
	ASSERT_TRUE(ctx_by_id(text, ctx2, &pid, &bos, &maps));
	EXPECT_EQ(0, bos);
	EXPECT_EQ(0, maps);
	EXPECT_EQ(-1, ctx_of_pid(text, getpid(), 2, NULL, NULL));

	close(fd2);
	EXPECT_EQ(0, vaccel_vm_unbind(self->fd, VACCEL_VA_LO, PAGE));
	EXPECT_EQ(0, vaccel_gem_close(self->fd, h));
	ASSERT_LE(0, vaccel_dev_debugfs(ID, "contexts", text, sizeof(text)));
	ASSERT_TRUE(ctx_by_id(text, ctx1, &pid, &bos, &maps));
	EXPECT_EQ(1, bos);
	EXPECT_EQ(0, maps);
	EXPECT_FALSE(ctx_by_id(text, ctx2, &pid, &bos, &maps));

	close(self->fd);
	self->fd = -1;
	ASSERT_LE(0, vaccel_dev_debugfs(ID, "contexts", text, sizeof(text)));
	EXPECT_FALSE(ctx_by_id(text, ctx1, &pid, &bos, &maps));
}

TEST_F(bo, debugfs_buffers)
{
	char ctxs[4096], text[8192];
	unsigned int flags = 99, status = 99;
	uint64_t size = 0;
	uint32_t a, b, c;
	long ctx;

	if (access(ACCEL_DEBUGFS, F_OK))
		SKIP(return, "debugfs is not mounted");
	ASSERT_LE(0, vaccel_dev_debugfs(ID, "contexts", ctxs, sizeof(ctxs)));
	ctx = ctx_of_pid(ctxs, getpid(), 0, NULL, NULL);
	ASSERT_LE(0, ctx);
	ASSERT_LE(0, vaccel_dev_debugfs(ID, "buffers", text, sizeof(text)));
	EXPECT_EQ(NULL, strstr(text, "handle"));

	a = make_persistent(_metadata, self->fd, 2 * PAGE, "x", NULL);
	ASSERT_EQ(0, vaccel_bo_seal(self->fd, a));
	ASSERT_EQ(0, vaccel_bo_new(self->fd, 5, SIGNAL, &b));
	ASSERT_EQ(0, vaccel_bo_new(self->fd, 3 * PAGE, 0, &c));
	ASSERT_LE(0, vaccel_dev_debugfs(ID, "buffers", text, sizeof(text)));

	ASSERT_TRUE(buffer_line(text, ctx, a, &size, &flags, &status)) TH_LOG("buffers:\n%s", text);
	EXPECT_EQ(2 * PAGE, size);
	EXPECT_EQ(PERSISTENT, flags);
	EXPECT_EQ(DRM_VACCEL_BO_STATUS_SEALED, status);
	ASSERT_TRUE(buffer_line(text, ctx, b, &size, &flags, &status));
	EXPECT_EQ(PAGE, size);
	EXPECT_EQ(SIGNAL, flags);
	EXPECT_EQ(0, status);
	ASSERT_TRUE(buffer_line(text, ctx, c, &size, &flags, &status));
	EXPECT_EQ(3 * PAGE, size);
	EXPECT_EQ(0, flags);
	EXPECT_EQ(0, status);

	EXPECT_EQ(0, vaccel_gem_close(self->fd, a));
	ASSERT_LE(0, vaccel_dev_debugfs(ID, "buffers", text, sizeof(text)));
	EXPECT_FALSE(buffer_line(text, ctx, a, &size, &flags, &status));
	EXPECT_TRUE(buffer_line(text, ctx, b, &size, &flags, &status));
}

TEST_HARNESS_MAIN
