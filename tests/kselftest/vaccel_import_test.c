// SPDX-License-Identifier: GPL-2.0-only
/*
 * Other drivers as importers of vaccel dma-bufs, and read-only sharing.
 *
 * Sealing holds against every importer: vgem (attaches and maps
 * DMA_BIDIRECTIONAL on import) and vivid's capture queue (vmaps the
 * buffer, or with vb2-dma-contig attaches, maps DMA_FROM_DEVICE and
 * vmaps it) really write or could write the object, so while one holds it
 * BO_SEAL fails with -EBUSY, and once sealed they cannot take it for
 * writing and its bytes never change. On the code before vaccel had its
 * own dma-buf operations, the seals below succeeded with the importers
 * attached, vgem imported sealed objects and vivid kept writing into them.
 *
 * A dma-buf exported without DRM_RDWR is read-only for whoever imports
 * it: write binds and writable mappings fail with -EACCES, read-only
 * mappings work (also through the read-only dma-buf fd itself, which the
 * old code refused with -EINVAL because it wanted VM_SHARED), other
 * drivers cannot map it for writing, and the read-only export is
 * read-only even after a writable one was made (the old code returned
 * the cached writable dma-buf).
 *
 * Every test runs on two fresh devices and checks that the module's
 * live-object counters are back at their starting values afterwards.
 * Tests needing vgem or vivid skip if the module is not loaded (the VM rig
 * preloads both).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <sys/mman.h>

#include "vaccel_unpriv.h"
#include "vaccel_vivid.h"
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

FIXTURE(import) {
	int a, b;
	struct vaccel_counts counts;
};

FIXTURE_SETUP(import)
{
	self->a = self->b = -1;
	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	vaccel_del_device(ID_A);
	vaccel_del_device(ID_B);
	vaccel_counts_read(&self->counts);
	ASSERT_EQ(0, vaccel_pair_open(ID_A, ID_B, "memory=64M", &self->a, &self->b));
}

FIXTURE_TEARDOWN(import)
{
	vaccel_pair_close(ID_A, ID_B, self->a, self->b);
	EXPECT_COUNTS_BACK(&self->counts, 2000);
}

/* A persistent object filled with @byte, and a writable dma-buf of it. */
static uint32_t make_filled(struct __test_metadata *_metadata, int fd,
			    uint64_t size, uint32_t flags, int byte, int *dmabuf)
{
	struct drm_vaccel_bo_create bo = {};
	char *p;

	EXPECT_EQ(0, vaccel_bo_create(fd, size, flags, &bo));
	p = vaccel_bo_mmap(fd, bo.mmap_offset, bo.size, RW);
	EXPECT_NE(MAP_FAILED, p);
	if (p != MAP_FAILED) {
		memset(p, byte, bo.size);
		munmap(p, bo.size);
	}
	if (dmabuf)
		EXPECT_EQ(0, vaccel_prime_export(fd, bo.handle, dmabuf));
	return bo.handle;
}

/* Copy the object's bytes out through a read-only mapping. */
static void snapshot(struct __test_metadata *_metadata, int fd, uint32_t h,
		     void *buf, size_t len)
{
	struct drm_vaccel_bo_info info = {};
	void *p;

	ASSERT_EQ(0, vaccel_bo_info(fd, h, &info));
	p = vaccel_bo_mmap(fd, info.mmap_offset, len, PROT_READ);
	ASSERT_NE(MAP_FAILED, p);
	memcpy(buf, p, len);
	munmap(p, len);
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

static int open_vgem(struct __test_metadata *_metadata)
{
	char path[64];
	int fd;

	if (vaccel_vgem_path(path, sizeof(path)))
		return -ENOENT;
	fd = open(path, O_RDWR | O_CLOEXEC);
	EXPECT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	return fd;
}

/*
 * vgem attaches to the dma-buf and maps it for writing when it imports
 * it: the seal waits for vgem to let go, and a sealed object cannot be
 * imported by vgem any more (its map_dma_buf fails with -EACCES).
 */
TEST_F(import, vgem_attachment_blocks_seal)
{
	struct drm_vaccel_bo_info info = {};
	uint32_t h, vh;
	int vfd, dmabuf = -1;

	vfd = open_vgem(_metadata);
	if (vfd == -ENOENT)
		SKIP(return, "vgem is not loaded");
	ASSERT_LE(0, vfd);
	h = make_filled(_metadata, self->a, 4 * PAGE, PERSISTENT, 0x5a, &dmabuf);
	ASSERT_LE(0, dmabuf);

	ASSERT_EQ(0, vaccel_vgem_import(vfd, dmabuf, &vh));
	EXPECT_EQ(-EBUSY, vaccel_bo_seal(self->a, h));
	ASSERT_EQ(0, vaccel_bo_info(self->a, h, &info));
	EXPECT_EQ(0, info.status);
	/* the attachment is dropped with vgem's last handle */
	EXPECT_EQ(0, vaccel_gem_close(vfd, vh));
	EXPECT_EQ(0, vaccel_bo_seal(self->a, h));

	/* vgem maps DMA_BIDIRECTIONAL: refused for a sealed object */
	EXPECT_EQ(-EACCES, vaccel_vgem_import(vfd, dmabuf, &vh));
	/* vaccel devices still import it, read-only */
	{
		uint32_t hb;

		ASSERT_EQ(0, vaccel_prime_import(self->b, dmabuf, &hb));
		EXPECT_EQ(-EACCES, vaccel_vm_bind(self->b, hb, VM_W, 0, VA, PAGE));
		EXPECT_EQ(0, vaccel_vm_bind(self->b, hb, VM_R, 0, VA, PAGE));
	}
	close(dmabuf);
	close(vfd);
}

/* Two vgem files importing, one after the other let go: EBUSY until both. */
TEST_F(import, vgem_two_attachments)
{
	uint32_t h, vh1, vh2;
	int v1, v2, dmabuf = -1;

	v1 = open_vgem(_metadata);
	if (v1 == -ENOENT)
		SKIP(return, "vgem is not loaded");
	ASSERT_LE(0, v1);
	v2 = open_vgem(_metadata);
	ASSERT_LE(0, v2);
	h = make_filled(_metadata, self->a, PAGE, PERSISTENT, 1, &dmabuf);
	ASSERT_EQ(0, vaccel_vgem_import(v1, dmabuf, &vh1));
	ASSERT_EQ(0, vaccel_vgem_import(v2, dmabuf, &vh2));
	EXPECT_EQ(-EBUSY, vaccel_bo_seal(self->a, h));
	close(v1);
	EXPECT_EQ(-EBUSY, vaccel_bo_seal(self->a, h));
	close(v2);
	EXPECT_EQ(0, vaccel_bo_seal(self->a, h));
	close(dmabuf);
}

/*
 * vivid (vb2-vmalloc) writes frames into the queued persistent object;
 * while it holds the vmap the seal fails; once sealed the buffer cannot
 * be queued again and the bytes never change.
 */
static void vivid_seal_flow(struct __test_metadata *_metadata, int a)
{
	char path[64], before[PAGE], after[PAGE];
	int vfd, dmabuf = -1;
	uint32_t h;

	ASSERT_EQ(0, vaccel_vivid_path(path, sizeof(path)));
	vfd = vaccel_vivid_open(path);
	ASSERT_LE(0, vfd) TH_LOG("vivid: no 16x16 capture format (%d)", vfd);
	h = make_filled(_metadata, a, PAGE, PERSISTENT, 0xaa, &dmabuf);
	ASSERT_LE(0, dmabuf);

	/* before sealing: vivid really writes into the object */
	ASSERT_EQ(0, vaccel_vivid_reqbufs(vfd, 1));
	ASSERT_EQ(0, vaccel_vivid_qbuf(vfd, dmabuf));
	EXPECT_EQ(-EBUSY, vaccel_bo_seal(a, h));
	ASSERT_EQ(0, vaccel_vivid_stream(vfd, true));
	ASSERT_EQ(0, vaccel_vivid_dqbuf(vfd, 10000));
	EXPECT_EQ(0, vaccel_vivid_stream(vfd, false));
	snapshot(_metadata, a, h, before, PAGE);
	EXPECT_FALSE(all_bytes(before, 0xaa, 512)) TH_LOG("vivid wrote nothing");

	/* vb2 keeps the buffer mapped until the buffers are freed */
	EXPECT_EQ(-EBUSY, vaccel_bo_seal(a, h));
	ASSERT_EQ(0, vaccel_vivid_reqbufs(vfd, 0));
	ASSERT_EQ(0, vaccel_bo_seal(a, h));

	/* sealed: queuing it again fails, streaming writes nothing */
	ASSERT_EQ(0, vaccel_vivid_reqbufs(vfd, 1));
	EXPECT_NE(0, vaccel_vivid_qbuf(vfd, dmabuf));
	vaccel_vivid_stream(vfd, true);
	vaccel_msleep(500);
	vaccel_vivid_stream(vfd, false);
	snapshot(_metadata, a, h, after, PAGE);
	EXPECT_EQ(0, memcmp(before, after, PAGE));
	EXPECT_EQ(0, vaccel_vivid_reqbufs(vfd, 0));
	close(vfd);
	close(dmabuf);
}

TEST_F_TIMEOUT(import, vivid_vmalloc_seal, 120)
{
	char path[64];

	if (vaccel_vivid_path(path, sizeof(path)))
		SKIP(return, "vivid is not loaded");
	vivid_seal_flow(_metadata, self->a);
}

/* The same with vb2-dma-contig, which attaches and maps the dma-buf. */
TEST_F_TIMEOUT(import, vivid_dma_contig_seal, 120)
{
	char path[64], ko[256];
	int ret;

	if (vaccel_vivid_path(path, sizeof(path)) || vaccel_vivid_ko(ko, sizeof(ko)))
		SKIP(return, "vivid is not loaded");
	ret = vaccel_vivid_reload("allocators=1");
	ASSERT_EQ(0, ret);
	vivid_seal_flow(_metadata, self->a);
	EXPECT_EQ(0, vaccel_vivid_reload(""));
}

/* A read-only dma-buf cannot be queued for capture either. */
TEST_F_TIMEOUT(import, vivid_read_only_dmabuf, 60)
{
	char path[64], after[PAGE];
	int vfd, ro = -1;
	uint32_t h;

	if (vaccel_vivid_path(path, sizeof(path)))
		SKIP(return, "vivid is not loaded");
	vfd = vaccel_vivid_open(path);
	ASSERT_LE(0, vfd);
	h = make_filled(_metadata, self->a, PAGE, 0, 0x33, NULL);
	ASSERT_EQ(0, vaccel_prime_export_ro(self->a, h, &ro));
	ASSERT_EQ(0, vaccel_vivid_reqbufs(vfd, 1));
	EXPECT_NE(0, vaccel_vivid_qbuf(vfd, ro));
	EXPECT_EQ(0, vaccel_vivid_reqbufs(vfd, 0));
	snapshot(_metadata, self->a, h, after, PAGE);
	EXPECT_TRUE(all_bytes(after, 0x33, PAGE));
	close(vfd);
	close(ro);
}

/* vgem maps for writing: a read-only dma-buf is refused (-EACCES). */
TEST_F(import, vgem_read_only_dmabuf)
{
	uint32_t h, vh;
	int vfd, ro = -1, rw = -1;

	vfd = open_vgem(_metadata);
	if (vfd == -ENOENT)
		SKIP(return, "vgem is not loaded");
	ASSERT_LE(0, vfd);
	h = make_filled(_metadata, self->a, PAGE, 0, 0, NULL);
	ASSERT_EQ(0, vaccel_prime_export_ro(self->a, h, &ro));
	EXPECT_EQ(-EACCES, vaccel_vgem_import(vfd, ro, &vh));
	/* the writable dma-buf of the same object is fine */
	ASSERT_EQ(0, vaccel_prime_export(self->a, h, &rw));
	EXPECT_EQ(0, vaccel_vgem_import(vfd, rw, &vh));
	close(ro);
	close(rw);
	close(vfd);
}

static int file_mode(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : (fl & O_ACCMODE);
}

/*
 * A read-only export is read-only whatever was exported before, and a
 * writable export is still writable after a read-only one.
 */
TEST_F(import, read_only_export_mode)
{
	uint32_t h = make_filled(_metadata, self->a, PAGE, 0, 0, NULL);
	int rw1 = -1, ro1 = -1, ro2 = -1, rw2 = -1;

	ASSERT_EQ(0, vaccel_prime_export_ro(self->a, h, &ro1));
	EXPECT_EQ(O_RDONLY, file_mode(ro1));
	EXPECT_EQ(FD_CLOEXEC, fcntl(ro1, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(0, vaccel_prime_export(self->a, h, &rw1));
	EXPECT_EQ(O_RDWR, file_mode(rw1));
	ASSERT_EQ(0, vaccel_prime_export_ro(self->a, h, &ro2));
	EXPECT_EQ(O_RDONLY, file_mode(ro2));
	ASSERT_EQ(0, vaccel_prime_export(self->a, h, &rw2));
	EXPECT_EQ(O_RDWR, file_mode(rw2));
	close(rw1);
	close(ro1);
	close(ro2);
	close(rw2);
	EXPECT_EQ(-ENOENT, vaccel_prime_export_ro(self->a, h + 100, &ro1));
}

/* What an importer of a read-only dma-buf may do with it. */
static void expect_read_only(struct __test_metadata *_metadata, int fd,
			     uint32_t h, const char *text)
{
	struct drm_vaccel_bo_info info = {};
	char *p;

	EXPECT_EQ(-EACCES, vaccel_vm_bind(fd, h, VM_W, 0, VA, PAGE));
	EXPECT_EQ(-EACCES, vaccel_vm_bind(fd, h, VM_R | VM_W, 0, VA, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(fd, h, VM_R, 0, VA, PAGE));
	EXPECT_EQ(0, vaccel_vm_unbind(fd, VA, PAGE));
	ASSERT_EQ(0, vaccel_bo_info(fd, h, &info));
	EXPECT_EQ(DRM_VACCEL_BO_STATUS_IMPORTED, info.status);
	p = vaccel_bo_mmap(fd, info.mmap_offset, PAGE, RW);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	if (p != MAP_FAILED)
		munmap(p, PAGE);
	p = vaccel_bo_mmap(fd, info.mmap_offset, PAGE, PROT_WRITE);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	p = vaccel_bo_mmap(fd, info.mmap_offset, PAGE, PROT_READ);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_STREQ(text, p + 64);
	EXPECT_EQ(-1, mprotect(p, PAGE, RW));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(0, munmap(p, PAGE));
}

static uint32_t make_text(struct __test_metadata *_metadata, int fd,
			  uint32_t flags, const char *text)
{
	struct drm_vaccel_bo_create bo = {};
	char *p;

	EXPECT_EQ(0, vaccel_bo_create(fd, 2 * PAGE, flags, &bo));
	p = vaccel_bo_mmap(fd, bo.mmap_offset, bo.size, RW);
	EXPECT_NE(MAP_FAILED, p);
	if (p != MAP_FAILED) {
		strcpy(p + 64, text);
		munmap(p, bo.size);
	}
	return bo.handle;
}

/* Signal pages shared read-only with another device. */
TEST_F(import, read_only_other_device)
{
	uint32_t h = make_text(_metadata, self->a, SIGNAL, "signals"), hb;
	int ro = -1;

	ASSERT_EQ(0, vaccel_prime_export_ro(self->a, h, &ro));
	ASSERT_EQ(0, vaccel_prime_import(self->b, ro, &hb));
	close(ro);
	expect_read_only(_metadata, self->b, hb, "signals");
	/* the exporter's own handle stays writable */
	EXPECT_EQ(0, vaccel_vm_bind(self->a, h, VM_R | VM_W, 0, VA, PAGE));
}

/* ... and with another file (rank) of the same device. */
TEST_F(import, read_only_same_device)
{
	uint32_t h = make_text(_metadata, self->a, SIGNAL, "same device"), h2;
	int ro = -1, a2 = vaccel_open(ID_A);

	ASSERT_LE(0, a2);
	ASSERT_EQ(0, vaccel_prime_export_ro(self->a, h, &ro));
	ASSERT_EQ(0, vaccel_prime_import(a2, ro, &h2));
	expect_read_only(_metadata, a2, h2, "same device");
	/* the exporting file importing its own read-only dma-buf, too */
	ASSERT_EQ(0, vaccel_prime_import(self->a, ro, &h2));
	EXPECT_NE(h, h2);
	expect_read_only(_metadata, self->a, h2, "same device");
	close(ro);
	close(a2);
}

/* A writable export made first does not make the read-only one writable. */
TEST_F(import, read_only_after_writable_export)
{
	uint32_t h = make_text(_metadata, self->a, 0, "first rw"), hb, hb2;
	int rw = -1, ro = -1;

	ASSERT_EQ(0, vaccel_prime_export(self->a, h, &rw));
	ASSERT_EQ(0, vaccel_prime_import(self->b, rw, &hb));
	EXPECT_EQ(0, vaccel_vm_bind(self->b, hb, VM_W, 0, VA + 16 * PAGE, PAGE));
	ASSERT_EQ(0, vaccel_prime_export_ro(self->a, h, &ro));
	ASSERT_EQ(0, vaccel_prime_import(self->b, ro, &hb2));
	EXPECT_NE(hb, hb2);
	expect_read_only(_metadata, self->b, hb2, "first rw");
	close(rw);
	close(ro);
}

/* Re-exporting a read-only import cannot make it writable. */
TEST_F(import, read_only_reexport)
{
	uint32_t h = make_text(_metadata, self->a, 0, "again"), hb, hc;
	int ro = -1, re = -1, c = vaccel_open(ID_A);

	ASSERT_LE(0, c);
	ASSERT_EQ(0, vaccel_prime_export_ro(self->a, h, &ro));
	ASSERT_EQ(0, vaccel_prime_import(self->b, ro, &hb));
	ASSERT_EQ(0, vaccel_prime_export(self->b, hb, &re));	/* asks for RDWR */
	EXPECT_EQ(O_RDONLY, file_mode(re));
	ASSERT_EQ(0, vaccel_prime_import(c, re, &hc));
	expect_read_only(_metadata, c, hc, "again");
	close(re);
	/* a read-only export of the import: read-only as well */
	ASSERT_EQ(0, vaccel_prime_export_ro(self->b, hb, &re));
	EXPECT_EQ(O_RDONLY, file_mode(re));
	close(re);
	close(ro);
	close(c);
}

/*
 * The read-only dma-buf fd itself can be mapped read-only (MAP_SHARED
 * without VM_SHARED: the old VM_SHARED check refused it with -EINVAL),
 * never writable.
 */
TEST_F(import, read_only_dmabuf_mmap)
{
	uint32_t h = make_text(_metadata, self->a, PERSISTENT, "dma-buf fd");
	int ro = -1;
	char *p;

	ASSERT_EQ(0, vaccel_prime_export_ro(self->a, h, &ro));
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, ro, 0);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("errno %d", errno);
	EXPECT_STREQ("dma-buf fd", p + 64);
	EXPECT_EQ(-1, mprotect(p, PAGE, RW));
	EXPECT_EQ(EACCES, errno);
	/* a read-only mapping does not stop the seal */
	EXPECT_EQ(0, vaccel_bo_seal(self->a, h));
	EXPECT_STREQ("dma-buf fd", p + 64);
	EXPECT_EQ(0, munmap(p, PAGE));
	p = mmap(NULL, PAGE, RW, MAP_SHARED, ro, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, ro, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	close(ro);
}

/*
 * A kernel importer that forwards mmap() to the exporter
 * (drm_gem_shmem_mmap() of another driver's import calls dma_buf_mmap()
 * with its own VMA, which may be writable) gets no writable mapping of a
 * read-only dma-buf: the exporter's dma-buf mmap checks the dma-buf's
 * mode, -EACCES for a writable mapping, and a read-only mapping can never
 * become writable. Device B's foreign_import_mmap knob makes its imports
 * forward like that, without vaccel's own importer checks; through a
 * writable dma-buf the same forwarded mapping is writable.
 */
TEST_F(import, read_only_dmabuf_forwarded_mmap)
{
	uint32_t h = make_text(_metadata, self->a, 0, "forwarded"), hro, hrw;
	struct drm_vaccel_bo_info info = {};
	int ro = -1, rw = -1;
	char *p;

	ASSERT_EQ(0, vaccel_dev_debugfs_write(ID_B, "foreign_import_mmap", "1"));
	ASSERT_EQ(0, vaccel_prime_export_ro(self->a, h, &ro));
	ASSERT_EQ(0, vaccel_prime_import(self->b, ro, &hro));
	ASSERT_EQ(0, vaccel_bo_info(self->b, hro, &info));
	p = vaccel_bo_mmap(self->b, info.mmap_offset, PAGE, RW);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);
	if (p != MAP_FAILED) {
		strcpy(p + 64, "written");
		munmap(p, PAGE);
	}
	p = vaccel_bo_mmap(self->b, info.mmap_offset, PAGE, PROT_READ);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("errno %d", errno);
	EXPECT_STREQ("forwarded", p + 64);
	EXPECT_EQ(-1, mprotect(p, PAGE, RW));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(0, munmap(p, PAGE));

	ASSERT_EQ(0, vaccel_prime_export(self->a, h, &rw));
	ASSERT_EQ(0, vaccel_prime_import(self->b, rw, &hrw));
	ASSERT_EQ(0, vaccel_bo_info(self->b, hrw, &info));
	p = vaccel_bo_mmap(self->b, info.mmap_offset, PAGE, RW);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("errno %d", errno);
	strcpy(p + 64, "through rw");
	EXPECT_EQ(0, munmap(p, PAGE));
	ASSERT_EQ(0, vaccel_dev_debugfs_write(ID_B, "foreign_import_mmap", "0"));
	close(rw);
	close(ro);
}

/*
 * Another driver's read-only dma-buf (a dma-heap buffer allocated with an
 * O_RDONLY fd) is honoured like ours; its read-only re-export is the
 * dma-buf itself.
 */
TEST_F(import, read_only_foreign_dmabuf)
{
	struct dma_heap_allocation_data alloc = {
		.len = 4 * PAGE, .fd_flags = O_RDONLY | O_CLOEXEC,
	};
	struct stat st1, st2;
	uint32_t h;
	int heap, re = -1;

	heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (heap < 0)
		SKIP(return, "no /dev/dma_heap/system");
	ASSERT_EQ(0, ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &alloc));
	close(heap);
	EXPECT_EQ(O_RDONLY, file_mode(alloc.fd));
	ASSERT_EQ(0, vaccel_prime_import(self->a, alloc.fd, &h));
	EXPECT_EQ(-EACCES, vaccel_vm_bind(self->a, h, VM_W, 0, VA, PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->a, h, VM_R, 0, VA, 4 * PAGE));
	ASSERT_EQ(0, vaccel_prime_export_ro(self->a, h, &re));
	ASSERT_EQ(0, fstat(re, &st1));
	ASSERT_EQ(0, fstat(alloc.fd, &st2));
	EXPECT_EQ(st2.st_ino, st1.st_ino);
	close(re);
	close(alloc.fd);
}

/*
 * A writable import of another driver's dma-buf cannot be exported
 * read-only: vaccel cannot make another exporter's buffer read-only.
 */
TEST_F(import, read_only_export_of_foreign_import)
{
	struct udmabuf_create create = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = PAGE };
	int udev, memfd, dmabuf, re = -1;
	uint32_t h;

	udev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (udev < 0)
		SKIP(return, "no /dev/udmabuf");
	memfd = memfd_create("vaccel", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, PAGE));
	ASSERT_EQ(0, fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK));
	create.memfd = memfd;
	dmabuf = ioctl(udev, UDMABUF_CREATE, &create);
	ASSERT_LE(0, dmabuf);
	close(udev);
	ASSERT_EQ(0, vaccel_prime_import(self->a, dmabuf, &h));
	EXPECT_EQ(-EOPNOTSUPP, vaccel_prime_export_ro(self->a, h, &re));
	/* writable re-export is the dma-buf itself */
	EXPECT_EQ(0, vaccel_prime_export(self->a, h, &re));
	close(re);
	close(dmabuf);
	close(memfd);
}

TEST_HARNESS_MAIN
