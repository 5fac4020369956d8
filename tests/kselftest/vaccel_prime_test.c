// SPDX-License-Identifier: GPL-2.0-only
/*
 * PRIME: buffers exported as dma-bufs and imported by another device,
 * another file of the same device, and another process (SCM_RIGHTS).
 * Data written on either side is read on the other; imports can be bound;
 * a sealed object stays read-only through every import; the exporting
 * device keeps the capacity charged while anyone holds the object.
 * (Other drivers as importers and read-only sharing: vaccel_import_test.)
 *
 * Every test runs on two fresh devices, A and B, and checks that the
 * module's live-object counters are back at their starting values
 * afterwards.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/udmabuf.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "vaccel_unpriv.h"
#include "kselftest_harness.h"

#define ID_A		VACCEL_TEST_ID
#define ID_B		(VACCEL_TEST_ID + 1)
#define PAGE		VACCEL_PAGE
#define PERSISTENT	DRM_VACCEL_BO_PERSISTENT
#define SIGNAL		DRM_VACCEL_BO_SIGNAL
#define RW		(PROT_READ | PROT_WRITE)
#define VM_R		DRM_VACCEL_VM_READ
#define VM_W		DRM_VACCEL_VM_WRITE
#define VA		(VACCEL_VA_LO + (1ULL << 30))

FIXTURE(prime) {
	int a, b;	/* one file on each device */
	struct vaccel_counts counts;
};

FIXTURE_SETUP(prime)
{
	self->a = self->b = -1;
	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	vaccel_del_device(ID_A);
	vaccel_del_device(ID_B);
	vaccel_counts_read(&self->counts);
	ASSERT_EQ(0, vaccel_pair_open(ID_A, ID_B, "memory=64M", &self->a, &self->b));
}

FIXTURE_TEARDOWN(prime)
{
	vaccel_pair_close(ID_A, ID_B, self->a, self->b);
	EXPECT_COUNTS_BACK(&self->counts, 2000);
}

static int send_fd(int sock, int fd)
{
	char byte = 'F';
	struct iovec iov = { &byte, 1 };
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	memset(&u, 0, sizeof(u));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

/* The fd received over @sock, or -errno. */
static int recv_fd(int sock)
{
	char byte;
	struct iovec iov = { &byte, 1 };
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -EIO;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* mmap a handle through the offset BO_INFO gives for it in @fd. */
static void *map_handle(int fd, uint32_t handle, int prot)
{
	struct drm_vaccel_bo_info info = {};
	int ret = vaccel_bo_info(fd, handle, &info);

	if (ret) {
		errno = -ret;
		return MAP_FAILED;
	}
	return vaccel_bo_mmap(fd, info.mmap_offset, info.size, prot);
}

static void fill(void *p, size_t len, unsigned int seed)
{
	uint32_t *w = p;
	size_t i;

	for (i = 0; i < len / 4; i++)
		w[i] = seed * 2654435761u + (uint32_t)i;
}

static bool check(const void *p, size_t len, unsigned int seed)
{
	const uint32_t *w = p;
	size_t i;

	for (i = 0; i < len / 4; i++)
		if (w[i] != seed * 2654435761u + (uint32_t)i)
			return false;
	return true;
}

/* Export from A, import into B: the same bytes, written from either side. */
TEST_F(prime, two_devices_both_ways)
{
	struct drm_vaccel_bo_create bo = {};
	const size_t size = 1 << 20;
	uint32_t hb;
	char *pa, *pb;
	int dmabuf = -1;

	ASSERT_EQ(0, vaccel_bo_create(self->a, size, 0, &bo));
	pa = vaccel_bo_mmap(self->a, bo.mmap_offset, size, RW);
	ASSERT_NE(MAP_FAILED, pa);
	fill(pa, size, 1);
	ASSERT_EQ(0, vaccel_prime_export(self->a, bo.handle, &dmabuf));
	EXPECT_EQ(FD_CLOEXEC, fcntl(dmabuf, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
	pb = map_handle(self->b, hb, RW);
	ASSERT_NE(MAP_FAILED, pb);
	EXPECT_TRUE(check(pb, size, 1));

	fill(pb, size, 2);
	EXPECT_TRUE(check(pa, size, 2));
	fill(pa + PAGE, PAGE, 3);
	EXPECT_TRUE(check(pb + PAGE, PAGE, 3));

	EXPECT_EQ(0, munmap(pa, size));
	EXPECT_EQ(0, munmap(pb, size));
	close(dmabuf);
	EXPECT_EQ(0, vaccel_gem_close(self->b, hb));
	EXPECT_EQ(0, vaccel_gem_close(self->a, bo.handle));
}

TEST_F(prime, import_info)
{
	static const uint32_t flags[] = { 0, PERSISTENT, SIGNAL };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		struct drm_vaccel_bo_info info = {};
		uint32_t ha, hb;
		int dmabuf = -1;

		ASSERT_EQ(0, vaccel_bo_new(self->a, 3 * PAGE - 1, flags[i], &ha));
		ASSERT_EQ(0, vaccel_bo_info(self->a, ha, &info));
		EXPECT_EQ(0, info.status);
		ASSERT_EQ(0, vaccel_prime_export(self->a, ha, &dmabuf));
		ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
		ASSERT_EQ(0, vaccel_bo_info(self->b, hb, &info));
		EXPECT_EQ(hb, info.handle);
		EXPECT_EQ(flags[i], info.flags);
		EXPECT_EQ(3 * PAGE, info.size);
		EXPECT_EQ(DRM_VACCEL_BO_STATUS_IMPORTED, info.status);
		EXPECT_NE(0, info.mmap_offset);
		/* the exporter's handle is not an import */
		ASSERT_EQ(0, vaccel_bo_info(self->a, ha, &info));
		EXPECT_EQ(0, info.status);
		close(dmabuf);
	}
}

/* The same dma-buf imported twice into one file gives the same handle. */
TEST_F(prime, import_twice_same_handle)
{
	uint32_t ha, hb1, hb2;
	int dmabuf = -1;

	ASSERT_EQ(0, vaccel_bo_new(self->a, PAGE, 0, &ha));
	ASSERT_EQ(0, vaccel_prime_export(self->a, ha, &dmabuf));
	ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb1));
	ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb2));
	EXPECT_EQ(hb1, hb2);
	EXPECT_EQ(self->counts.bos + 2, vaccel_objects("bos"));
	close(dmabuf);
}

TEST_F(prime, export_unknown_handle)
{
	int dmabuf = -1;

	EXPECT_EQ(-ENOENT, vaccel_prime_export(self->a, 1234, &dmabuf));
	EXPECT_EQ(-ENOENT, vaccel_prime_export(self->a, 0, &dmabuf));
}

/* An imported object is bound like any other. */
TEST_F(prime, import_bind)
{
	uint32_t ha, hb;
	int dmabuf = -1;

	ASSERT_EQ(0, vaccel_bo_new(self->a, 4 * PAGE, 0, &ha));
	ASSERT_EQ(0, vaccel_prime_export(self->a, ha, &dmabuf));
	ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
	close(dmabuf);
	EXPECT_EQ(0, vaccel_vm_bind(self->b, hb, VM_R | VM_W, 0, VA, 4 * PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->b, hb, VM_R, 2 * PAGE, VA + 4 * PAGE, 2 * PAGE));
	EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->b, hb, VM_R, 2 * PAGE, VA + 8 * PAGE, 3 * PAGE));
	EXPECT_EQ(self->counts.mappings + 2, vaccel_objects("mappings"));
	/* the binding holds the import after its handle is closed */
	EXPECT_EQ(0, vaccel_gem_close(self->b, hb));
	EXPECT_EQ(0, vaccel_gem_close(self->a, ha));
	EXPECT_EQ(4 * PAGE, vaccel_memory_used(self->a));
	EXPECT_EQ(0, vaccel_vm_unbind(self->b, VA, 4 * PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->b, VA + 4 * PAGE, 2 * PAGE));
	EXPECT_EQ(0, vaccel_memory_used_wait(self->a, 0, 2000));
}

/* Another file of the same device can import it as well. */
TEST_F(prime, same_device_other_file)
{
	struct drm_vaccel_bo_create bo = {};
	struct drm_vaccel_bo_info info = {};
	uint32_t h2;
	char *p1, *p2;
	int dmabuf = -1, a2 = vaccel_open(ID_A);

	ASSERT_LE(0, a2);
	ASSERT_EQ(0, vaccel_bo_create(self->a, 2 * PAGE, PERSISTENT, &bo));
	p1 = vaccel_bo_mmap(self->a, bo.mmap_offset, bo.size, RW);
	ASSERT_NE(MAP_FAILED, p1);
	strcpy(p1 + 10, "to the other file");
	ASSERT_EQ(0, vaccel_prime_export(self->a, bo.handle, &dmabuf));
	ASSERT_EQ(0, vaccel_prime_import(a2, dmabuf, &h2));
	close(dmabuf);
	ASSERT_EQ(0, vaccel_bo_info(a2, h2, &info));
	EXPECT_EQ(PERSISTENT, info.flags);
	EXPECT_EQ(2 * PAGE, info.size);
	TH_LOG("same-device import status 0x%x", info.status);
	p2 = vaccel_bo_mmap(a2, info.mmap_offset, info.size, RW);
	ASSERT_NE(MAP_FAILED, p2);
	EXPECT_STREQ("to the other file", p2 + 10);
	strcpy(p2 + PAGE, "and back");
	EXPECT_STREQ("and back", p1 + PAGE);
	EXPECT_EQ(0, vaccel_vm_bind(a2, h2, VM_R | VM_W, 0, VA, 2 * PAGE));
	/* charged once */
	EXPECT_EQ(2 * PAGE, vaccel_memory_used(a2));
	EXPECT_EQ(0, munmap(p1, 2 * PAGE));
	EXPECT_EQ(0, munmap(p2, 2 * PAGE));
	close(a2);
	EXPECT_EQ(0, vaccel_gem_close(self->a, bo.handle));
	EXPECT_EQ(0, vaccel_memory_used_wait(self->a, 0, 2000));
}

/* Create a persistent object on @fd holding @text at 100; its handle. */
static uint32_t make_persistent(struct __test_metadata *_metadata, int fd,
				uint64_t size, const char *text)
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
	return bo.handle;
}

/* Nothing writable may be made of a sealed object on the importer. */
static void expect_readonly_import(struct __test_metadata *_metadata, int fd,
				   uint32_t h, const char *text)
{
	char *p;

	EXPECT_EQ(-EACCES, vaccel_vm_bind(fd, h, VM_W, 0, VA, PAGE));
	EXPECT_EQ(-EACCES, vaccel_vm_bind(fd, h, VM_R | VM_W, 0, VA, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(fd, h, VM_R, 0, VA, PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(fd, VA, PAGE));
	p = map_handle(fd, h, RW);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	if (p != MAP_FAILED)
		munmap(p, PAGE);
	p = map_handle(fd, h, PROT_READ);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_STREQ(text, p + 100);
	EXPECT_EQ(-1, mprotect(p, PAGE, RW));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(0, munmap(p, PAGE));
	/* an import is not the exporter's persistent object: no seal */
	EXPECT_EQ(-EINVAL, vaccel_bo_seal(fd, h));
}

TEST_F(prime, sealed_before_export)
{
	struct drm_vaccel_bo_info info = {};
	uint32_t ha = make_persistent(_metadata, self->a, PAGE, "sealed"), hb;
	int dmabuf = -1;

	ASSERT_EQ(0, vaccel_bo_seal(self->a, ha));
	ASSERT_EQ(0, vaccel_prime_export(self->a, ha, &dmabuf));
	ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
	close(dmabuf);
	ASSERT_EQ(0, vaccel_bo_info(self->b, hb, &info));
	EXPECT_EQ(PERSISTENT, info.flags);
	EXPECT_EQ(DRM_VACCEL_BO_STATUS_IMPORTED | DRM_VACCEL_BO_STATUS_SEALED, info.status);
	expect_readonly_import(_metadata, self->b, hb, "sealed");
}

TEST_F(prime, sealed_after_import)
{
	struct drm_vaccel_bo_info info = {};
	uint32_t ha = make_persistent(_metadata, self->a, PAGE, "later"), hb;
	int dmabuf = -1;

	ASSERT_EQ(0, vaccel_prime_export(self->a, ha, &dmabuf));
	ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
	close(dmabuf);
	/* not sealed yet: writable on the importer, and no seal there */
	EXPECT_EQ(-EINVAL, vaccel_bo_seal(self->b, hb));
	EXPECT_EQ(0, vaccel_vm_bind(self->b, hb, VM_W, 0, VA, PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(self->b, VA, PAGE));

	ASSERT_EQ(0, vaccel_bo_seal(self->a, ha));
	ASSERT_EQ(0, vaccel_bo_info(self->b, hb, &info));
	EXPECT_EQ(DRM_VACCEL_BO_STATUS_IMPORTED | DRM_VACCEL_BO_STATUS_SEALED, info.status);
	expect_readonly_import(_metadata, self->b, hb, "later");
}

/* A writable mapping on the importer's side stops the seal. */
TEST_F(prime, seal_busy_importer_mmap)
{
	uint32_t ha = make_persistent(_metadata, self->a, PAGE, "x"), hb;
	int dmabuf = -1;
	char *p;

	ASSERT_EQ(0, vaccel_prime_export(self->a, ha, &dmabuf));
	ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
	close(dmabuf);
	p = map_handle(self->b, hb, RW);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-EBUSY, vaccel_bo_seal(self->a, ha));
	strcpy(p + 100, "still writable");
	EXPECT_EQ(0, munmap(p, PAGE));
	EXPECT_EQ(0, vaccel_bo_seal(self->a, ha));
	expect_readonly_import(_metadata, self->b, hb, "still writable");
}

/* A writable device mapping on the importer stops the seal. */
TEST_F(prime, seal_busy_importer_bind)
{
	uint32_t ha = make_persistent(_metadata, self->a, PAGE, "x"), hb;
	int dmabuf = -1;

	ASSERT_EQ(0, vaccel_prime_export(self->a, ha, &dmabuf));
	ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
	close(dmabuf);
	ASSERT_EQ(0, vaccel_vm_bind(self->b, hb, VM_W, 0, VA + PAGE, PAGE));
	EXPECT_EQ(-EBUSY, vaccel_bo_seal(self->a, ha));
	EXPECT_EQ(0, vaccel_vm_unbind(self->b, VA + PAGE, PAGE));
	EXPECT_EQ(0, vaccel_bo_seal(self->a, ha));
	expect_readonly_import(_metadata, self->b, hb, "x");
}

/*
 * The dma-buf fd can itself be mmap()ed (when the exporter allows it):
 * that is a host mapping like any other, for seal and after it.
 */
TEST_F(prime, dmabuf_mmap_and_seal)
{
	uint32_t ha = make_persistent(_metadata, self->a, PAGE, "via dma-buf");
	int dmabuf = -1;
	char *p;

	ASSERT_EQ(0, vaccel_prime_export(self->a, ha, &dmabuf));
	p = mmap(NULL, PAGE, RW, MAP_SHARED, dmabuf, 0);
	if (p == MAP_FAILED) {
		TH_LOG("dma-buf mmap not supported (errno %d)", errno);
	} else {
		EXPECT_STREQ("via dma-buf", p + 100);
		EXPECT_EQ(-EBUSY, vaccel_bo_seal(self->a, ha));
		EXPECT_EQ(0, munmap(p, PAGE));
	}
	EXPECT_EQ(0, vaccel_bo_seal(self->a, ha));
	p = mmap(NULL, PAGE, RW, MAP_SHARED, dmabuf, 0);
	EXPECT_EQ(MAP_FAILED, p);
	if (p != MAP_FAILED) {
		strcpy(p + 100, "SEAL BROKEN");
		munmap(p, PAGE);
	}
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, dmabuf, 0);
	if (p != MAP_FAILED) {
		EXPECT_STREQ("via dma-buf", p + 100);
		EXPECT_EQ(-1, mprotect(p, PAGE, RW));
		EXPECT_EQ(EACCES, errno);
		EXPECT_EQ(0, munmap(p, PAGE));
	}
	close(dmabuf);
}

/*
 * The exporting device stays charged while the importer holds the
 * object; the importing device is never charged for it.
 */
TEST_F(prime, memory_accounting)
{
	uint32_t ha, hb;
	int dmabuf = -1;

	ASSERT_EQ(0, vaccel_bo_new(self->a, 1 << 20, 0, &ha));
	EXPECT_EQ(1 << 20, vaccel_memory_used(self->a));
	ASSERT_EQ(0, vaccel_prime_export(self->a, ha, &dmabuf));
	ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
	EXPECT_EQ(1 << 20, vaccel_memory_used(self->a));
	EXPECT_EQ(0, vaccel_memory_used(self->b));
	EXPECT_EQ(self->counts.bos + 2, vaccel_objects("bos"));
	close(dmabuf);
	EXPECT_EQ(0, vaccel_gem_close(self->a, ha));
	EXPECT_EQ(1 << 20, vaccel_memory_used(self->a));
	EXPECT_EQ(0, vaccel_memory_used(self->b));
	EXPECT_EQ(self->counts.bos + 2, vaccel_objects("bos"));
	/* B's full capacity is still there */
	EXPECT_EQ(0, vaccel_bo_new(self->b, 64 << 20, 0, NULL));
	EXPECT_EQ(0, vaccel_gem_close(self->b, hb));
	EXPECT_EQ(0, vaccel_memory_used_wait(self->a, 0, 2000));
	EXPECT_EQ(64 << 20, vaccel_memory_used(self->b));
}

/* The exporter's file goes away first; the importer keeps the data. */
TEST_F(prime, exporter_closed_first)
{
	struct drm_vaccel_bo_create bo = {};
	uint32_t hb;
	char *p;
	int dmabuf = -1, a2;

	ASSERT_EQ(0, vaccel_bo_create(self->a, 2 * PAGE, PERSISTENT, &bo));
	p = vaccel_bo_mmap(self->a, bo.mmap_offset, bo.size, RW);
	ASSERT_NE(MAP_FAILED, p);
	fill(p, bo.size, 7);
	EXPECT_EQ(0, munmap(p, bo.size));
	ASSERT_EQ(0, vaccel_prime_export(self->a, bo.handle, &dmabuf));
	ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
	close(dmabuf);
	close(self->a);
	self->a = -1;

	p = map_handle(self->b, hb, RW);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(check(p, 2 * PAGE, 7));
	fill(p, 2 * PAGE, 8);
	EXPECT_TRUE(check(p, 2 * PAGE, 8));
	EXPECT_EQ(0, vaccel_vm_bind(self->b, hb, VM_R | VM_W, 0, VA, 2 * PAGE));
	a2 = vaccel_open(ID_A);
	ASSERT_LE(0, a2);
	EXPECT_EQ(2 * PAGE, vaccel_memory_used(a2));
	EXPECT_EQ(0, munmap(p, 2 * PAGE));
	EXPECT_EQ(0, vaccel_gem_close(self->b, hb));
	EXPECT_EQ(2 * PAGE, vaccel_memory_used(a2));	/* still bound on B */
	EXPECT_EQ(0, vaccel_vm_unbind(self->b, VA, 2 * PAGE));
	EXPECT_EQ(0, vaccel_memory_used_wait(a2, 0, 2000));
	close(a2);
}

/*
 * Between processes: the dma-buf goes to a child over a socket; the child
 * imports it into its own files (same device and the other one), and
 * data flows both ways.
 */
TEST_F(prime, between_processes)
{
	struct drm_vaccel_bo_create bo = {};
	int sv[2], dmabuf = -1;
	char *p, c = 0;
	pid_t pid;

	ASSERT_EQ(0, vaccel_bo_create(self->a, 4 * PAGE, 0, &bo));
	p = vaccel_bo_mmap(self->a, bo.mmap_offset, bo.size, RW);
	ASSERT_NE(MAP_FAILED, p);
	strcpy(p, "from the parent");
	ASSERT_EQ(0, vaccel_prime_export(self->a, bo.handle, &dmabuf));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint32_t ha, hb;
		char *qa, *qb;
		int fd, fa, fb;

		close(sv[0]);
		/* only what comes over the socket */
		close(dmabuf);
		close(self->a);
		close(self->b);
		fd = recv_fd(sv[1]);
		CHILD_ASSERT(fd >= 0);
		fa = vaccel_open(ID_A);
		fb = vaccel_open(ID_B);
		CHILD_ASSERT(fa >= 0 && fb >= 0);
		CHILD_EQ(0, vaccel_prime_import(fa, fd, &ha));
		CHILD_EQ(0, vaccel_prime_import(fb, fd, &hb));
		close(fd);
		qa = map_handle(fa, ha, RW);
		qb = map_handle(fb, hb, RW);
		CHILD_ASSERT(qa != MAP_FAILED && qb != MAP_FAILED);
		CHILD_ASSERT(!strcmp(qa, "from the parent"));
		CHILD_ASSERT(!strcmp(qb, "from the parent"));
		strcpy(qa + PAGE, "from the child, A");
		strcpy(qb + 2 * PAGE, "from the child, B");
		CHILD_ASSERT(!strcmp(qa + 2 * PAGE, "from the child, B"));
		CHILD_EQ(0, vaccel_vm_bind(fb, hb, VM_R | VM_W, 0, VA, 4 * PAGE));
		CHILD_EQ(0, vaccel_memory_used(fb));
		CHILD_ASSERT(write(sv[1], "d", 1) == 1);
		CHILD_ASSERT(read(sv[1], &c, 1) == 1);
		CHILD_ASSERT(!strcmp(qb + 3 * PAGE, "parent again"));
		/* exit with everything still open, mapped and bound */
		_exit(0);
	}
	close(sv[1]);
	ASSERT_EQ(0, send_fd(sv[0], dmabuf));
	close(dmabuf);
	ASSERT_EQ(1, read(sv[0], &c, 1));
	EXPECT_STREQ("from the child, A", p + PAGE);
	EXPECT_STREQ("from the child, B", p + 2 * PAGE);
	strcpy(p + 3 * PAGE, "parent again");
	ASSERT_EQ(1, write(sv[0], "q", 1));
	EXPECT_EQ(0, vaccel_wait_child(pid));
	close(sv[0]);
	EXPECT_EQ(0, munmap(p, 4 * PAGE));
	EXPECT_EQ(0, vaccel_gem_close(self->a, bo.handle));
	EXPECT_EQ(0, vaccel_memory_used_wait(self->a, 0, 2000));
}

/*
 * The exporting process exits first, leaving a pinned (memlock-charged)
 * object to an importer in another process.
 */
TEST_F(prime, exporter_process_exits)
{
	int sv[2], dmabuf;
	uint32_t hb;
	char *p;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct drm_vaccel_bo_create bo = {};
		char *q;
		int fd, d;

		close(sv[0]);
		fd = vaccel_open(ID_A);
		CHILD_ASSERT(fd >= 0);
		CHILD_EQ(0, vaccel_bo_create(fd, 8 * PAGE, PERSISTENT, &bo));
		q = vaccel_bo_mmap(fd, bo.mmap_offset, bo.size, RW);
		CHILD_ASSERT(q != MAP_FAILED);
		fill(q, bo.size, 9);
		CHILD_EQ(0, vaccel_prime_export(fd, bo.handle, &d));
		CHILD_EQ(0, send_fd(sv[1], d));
		_exit(0);
	}
	close(sv[1]);
	dmabuf = recv_fd(sv[0]);
	ASSERT_LE(0, dmabuf);
	EXPECT_EQ(0, vaccel_wait_child(pid));
	close(sv[0]);
	ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
	close(dmabuf);
	p = map_handle(self->b, hb, PROT_READ);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_TRUE(check(p, 8 * PAGE, 9));
	EXPECT_EQ(8 * PAGE, vaccel_memory_used(self->a));
	EXPECT_EQ(0, munmap(p, 8 * PAGE));
	EXPECT_EQ(0, vaccel_gem_close(self->b, hb));
	EXPECT_EQ(0, vaccel_memory_used_wait(self->a, 0, 2000));
}

/* An imported handle counts against the importing file's handle limit. */
TEST_F_TIMEOUT(prime, max_bos_counts_imports, 90)
{
	uint64_t max = 0, i;
	uint32_t ha, hb, last = 0;
	int dmabuf = -1;

	ASSERT_EQ(0, vaccel_get_param(self->b, DRM_VACCEL_PARAM_MAX_BOS, &max));
	ASSERT_EQ(0, vaccel_bo_new(self->a, PAGE, 0, &ha));
	ASSERT_EQ(0, vaccel_prime_export(self->a, ha, &dmabuf));
	for (i = 0; i < max - 1; i++)
		ASSERT_EQ(0, vaccel_bo_new(self->b, PAGE, 0, &last));
	ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
	EXPECT_EQ(-ENOSPC, vaccel_bo_new(self->b, PAGE, 0, NULL));
	EXPECT_EQ(0, vaccel_gem_close(self->b, hb));
	EXPECT_EQ(0, vaccel_bo_new(self->b, PAGE, 0, NULL));
	/* full: the import itself is refused */
	EXPECT_EQ(-ENOSPC, vaccel_prime_import(self->b, dmabuf, &hb));
	EXPECT_EQ(0, vaccel_gem_close(self->b, last));
	EXPECT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
	close(dmabuf);
}

/* debugfs "buffers" shows imports with the exporter's flags. */
TEST_F(prime, debugfs_buffers_import)
{
	char text[8192], want[128];
	uint32_t ha = make_persistent(_metadata, self->a, 2 * PAGE, "x"), hb;
	int dmabuf = -1;

	if (access(ACCEL_DEBUGFS, F_OK))
		SKIP(return, "debugfs is not mounted");
	ASSERT_EQ(0, vaccel_bo_seal(self->a, ha));
	ASSERT_EQ(0, vaccel_prime_export(self->a, ha, &dmabuf));
	ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
	close(dmabuf);
	ASSERT_LE(0, vaccel_dev_debugfs(ID_B, "buffers", text, sizeof(text)));
	snprintf(want, sizeof(want), " handle %u size %llu flags 0x1 status 0x3\n",
		 hb, 2 * PAGE);
	EXPECT_NE(NULL, strstr(text, want)) TH_LOG("want '%s' in:\n%s", want, text);
	ASSERT_LE(0, vaccel_dev_debugfs(ID_A, "buffers", text, sizeof(text)));
	snprintf(want, sizeof(want), " handle %u size %llu flags 0x1 status 0x1\n",
		 ha, 2 * PAGE);
	EXPECT_NE(NULL, strstr(text, want)) TH_LOG("want '%s' in:\n%s", want, text);
}

/*
 * Sharing needs no privilege: a user of the render group exports from one
 * device and imports into the other, with the nodes as the udev rule
 * leaves them.
 */
TEST_F(prime, unprivileged_share)
{
	struct vaccel_node na, nb;
	struct vaccel_user u;
	pid_t pid;

	if (geteuid() != 0 || vaccel_user_get(&u))
		SKIP(return, "needs root and the rig's render-group user");
	ASSERT_EQ(0, vaccel_node_render(ID_A, &u, &na));
	ASSERT_EQ(0, vaccel_node_render(ID_B, &u, &nb));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct drm_vaccel_bo_create bo = {};
		uint32_t hb;
		char *p, *q;
		int fa, fb, d = -1;

		CHILD_EQ(0, vaccel_user_enter(&u, ~0ULL));
		fa = open(na.path, O_RDWR | O_CLOEXEC);
		fb = open(nb.path, O_RDWR | O_CLOEXEC);
		CHILD_ASSERT(fa >= 0 && fb >= 0);
		CHILD_EQ(0, vaccel_bo_create(fa, PAGE, 0, &bo));
		p = vaccel_bo_mmap(fa, bo.mmap_offset, PAGE, RW);
		CHILD_ASSERT(p != MAP_FAILED);
		strcpy(p, "unprivileged");
		CHILD_EQ(0, vaccel_prime_export(fa, bo.handle, &d));
		CHILD_EQ(0, vaccel_prime_import(fb, d, &hb));
		q = map_handle(fb, hb, RW);
		CHILD_ASSERT(q != MAP_FAILED);
		CHILD_ASSERT(!strcmp(q, "unprivileged"));
		_exit(0);
	}
	EXPECT_EQ(0, vaccel_wait_child(pid));
	vaccel_node_restore(&na);
	vaccel_node_restore(&nb);
}

/*
 * A dma-buf from another driver (udmabuf over a memfd): imported with
 * flags 0, not charged to the device, bound and mapped like any other,
 * and not sealable. (Binding it pins nothing: its exporter pinned it;
 * vaccel_pin_test checks that such binds are not charged.)
 */
TEST_F(prime, foreign_import)
{
	struct drm_vaccel_bo_info info = {};
	struct udmabuf_create create = {
		.flags = UDMABUF_FLAGS_CLOEXEC, .size = 4 * PAGE,
	};
	int memfd, udev, dmabuf;
	char *m, *p;
	uint32_t h;

	udev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (udev < 0)
		SKIP(return, "no /dev/udmabuf");
	memfd = memfd_create("vaccel", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, 4 * PAGE));
	ASSERT_EQ(0, fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK));
	create.memfd = memfd;
	dmabuf = ioctl(udev, UDMABUF_CREATE, &create);
	ASSERT_LE(0, dmabuf);
	close(udev);
	m = mmap(NULL, 4 * PAGE, RW, MAP_SHARED, memfd, 0);
	ASSERT_NE(MAP_FAILED, m);
	strcpy(m + PAGE, "from a memfd");

	ASSERT_EQ(0, vaccel_prime_import(self->a, dmabuf, &h));
	close(dmabuf);
	ASSERT_EQ(0, vaccel_bo_info(self->a, h, &info));
	EXPECT_EQ(0, info.flags);
	EXPECT_EQ(4 * PAGE, info.size);
	EXPECT_EQ(DRM_VACCEL_BO_STATUS_IMPORTED, info.status);
	EXPECT_EQ(0, vaccel_memory_used(self->a));
	EXPECT_EQ(self->counts.bos + 1, vaccel_objects("bos"));
	EXPECT_EQ(-EINVAL, vaccel_bo_seal(self->a, h));
	EXPECT_EQ(0, vaccel_vm_bind(self->a, h, VM_R | VM_W, 0, VA, 4 * PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->a, h, VM_R, PAGE, VA + 4 * PAGE, PAGE));
	EXPECT_EQ(-EINVAL, vaccel_vm_bind(self->a, h, VM_R, PAGE, VA + 8 * PAGE, 4 * PAGE));
	p = vaccel_bo_mmap(self->a, info.mmap_offset, info.size, PROT_READ);
	if (p == MAP_FAILED) {
		TH_LOG("mmap of a udmabuf import: errno %d", errno);
	} else {
		EXPECT_STREQ("from a memfd", p + PAGE);
		EXPECT_EQ(0, munmap(p, 4 * PAGE));
	}
	EXPECT_EQ(0, vaccel_vm_unbind(self->a, VA, 4 * PAGE));
	EXPECT_EQ(0, vaccel_gem_close(self->a, h));
	EXPECT_EQ(self->counts.bos + 1, vaccel_objects("bos"));	/* still bound */
	EXPECT_EQ(0, vaccel_vm_unbind(self->a, VA + 4 * PAGE, PAGE));
	EXPECT_EQ(self->counts.bos, vaccel_objects_wait("bos", self->counts.bos, 2000));
	EXPECT_EQ(0, munmap(m, 4 * PAGE));
	close(memfd);
}

/*
 * The exporting device is deleted while its object is imported, bound
 * and mapped elsewhere: the importer keeps working, and everything is
 * freed once the last user lets go.
 */
TEST_F(prime, exporter_device_deleted)
{
	struct drm_vaccel_bo_create bo = {};
	uint32_t hb;
	char *pa, *pb;
	int dmabuf = -1;

	ASSERT_EQ(0, vaccel_bo_create(self->a, 2 * PAGE, PERSISTENT, &bo));
	pa = vaccel_bo_mmap(self->a, bo.mmap_offset, bo.size, RW);
	ASSERT_NE(MAP_FAILED, pa);
	strcpy(pa, "before unplug");
	ASSERT_EQ(0, vaccel_vm_bind(self->a, bo.handle, VM_R | VM_W, 0, VA, 2 * PAGE));
	ASSERT_EQ(0, vaccel_prime_export(self->a, bo.handle, &dmabuf));
	ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
	ASSERT_EQ(0, vaccel_vm_bind(self->b, hb, VM_R | VM_W, 0, VA, 2 * PAGE));
	pb = map_handle(self->b, hb, RW);
	ASSERT_NE(MAP_FAILED, pb);

	ASSERT_EQ(0, vaccel_del_device(ID_A));
	/* the exporter's file is dead */
	EXPECT_EQ(-ENODEV, vaccel_bo_new(self->a, PAGE, 0, NULL));
	EXPECT_EQ(-ENODEV, vaccel_vm_unbind(self->a, VA, 2 * PAGE));
	/* the importer is not */
	EXPECT_STREQ("before unplug", pb);
	strcpy(pb + PAGE, "after unplug");
	EXPECT_STREQ("after unplug", pb + PAGE);
	EXPECT_EQ(0, vaccel_vm_unbind(self->b, VA, 2 * PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->b, hb, VM_R, 0, VA, PAGE));

	EXPECT_EQ(0, munmap(pa, 2 * PAGE));
	close(self->a);
	self->a = -1;
	close(dmabuf);
	EXPECT_EQ(0, munmap(pb, 2 * PAGE));
	/* teardown closes B and checks that everything is gone */
}

TEST_HARNESS_MAIN
