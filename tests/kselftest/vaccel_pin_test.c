// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pinned memory is charged to RLIMIT_MEMLOCK, as an unprivileged user of
 * the render group: every path that pins pages (creating persistent and
 * signal objects, VM_BIND, host mmap, another driver's dma-buf attachment
 * (vgem, vivid with vb2-dma-contig)) succeeds within the limit and fails
 * with -ENOMEM past it; another driver's vmap (vivid with vb2-vmalloc) is
 * only offered where it pins nothing uncharged; VmPin shows the charge, VmLck is untouched, and VmPin,
 * /proc/meminfo's Unevictable and Shmem are back at their baselines once
 * the memory is let go. A bind pins only the bound range: a 512 MiB
 * object with a 4 KiB bind pins 4 KiB (the old code vmapped, and so
 * allocated and pinned, all 512 MiB without charging anything; none of
 * the charges below existed, so every "past the limit" case succeeded).
 * Freeing gives the charge back at once: 10,000 rounds of free-then-create
 * at the limit never fail (the old code uncharged from a workqueue and
 * failed a few times in a thousand).
 *
 * Every test runs on a fresh 1 GiB device and checks that the module's
 * live-object counters are back at their starting values afterwards.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <linux/udmabuf.h>
#include <sys/mman.h>

#include "vaccel_unpriv.h"
#include "vaccel_vivid.h"
#include "kselftest_harness.h"

#define ID		VACCEL_TEST_ID
#define ID2		(VACCEL_TEST_ID + 1)
#define PAGE		VACCEL_PAGE
#define KiB		1024ULL
#define MiB		(1024ULL * 1024)
#define PERSISTENT	DRM_VACCEL_BO_PERSISTENT
#define SIGNAL		DRM_VACCEL_BO_SIGNAL
#define RW		(PROT_READ | PROT_WRITE)
#define VM_R		DRM_VACCEL_VM_READ
#define VM_W		DRM_VACCEL_VM_WRITE
#define VA		(VACCEL_VA_LO + (1ULL << 30))

/* Unevictable and Shmem back within 2 MiB of where the test started. */
#define EXPECT_NEAR_MEMINFO(self) do {					\
	long long __u = vaccel_meminfo_near("Unevictable", (self)->unevictable, \
					    2 * MiB, 3000);		\
	long long __s = vaccel_meminfo_near("Shmem", (self)->shmem,	\
					    2 * MiB, 3000);		\
	EXPECT_GE(2 * MiB, llabs(__u - (self)->unevictable))		\
		TH_LOG("Unevictable %lld -> %lld", (self)->unevictable, __u); \
	EXPECT_GE(2 * MiB, llabs(__s - (self)->shmem))			\
		TH_LOG("Shmem %lld -> %lld", (self)->shmem, __s);	\
} while (0)

FIXTURE(pin) {
	int fd;
	struct vaccel_user user;
	struct vaccel_node node;
	bool have_node;
	struct vaccel_counts counts;
	long long unevictable, shmem;
};

FIXTURE_SETUP(pin)
{
	self->fd = -1;
	self->have_node = false;
	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	if (geteuid() != 0)
		SKIP(return, "needs root to set up an unprivileged user");
	if (vaccel_user_get(&self->user))
		SKIP(return, "no user '" VACCEL_TEST_USER "' in group '" VACCEL_RENDER_GROUP "'");
	vaccel_del_device(ID);
	vaccel_counts_read(&self->counts);
	self->unevictable = vaccel_meminfo("Unevictable");
	self->shmem = vaccel_meminfo("Shmem");
	ASSERT_EQ(0, vaccel_new_device("900 memory=1G"));
	ASSERT_EQ(0, vaccel_node_render(ID, &self->user, &self->node));
	self->have_node = true;
	self->fd = vaccel_open(ID);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(pin)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->have_node)
		vaccel_node_restore(&self->node);
	vaccel_del_device(ID);
	EXPECT_COUNTS_BACK(&self->counts, 2000);
	/* nothing stays pinned or allocated */
	if (self->unevictable >= 0)
		EXPECT_NEAR_MEMINFO(self);
}

/* In the child: become the test user with @memlock, open the device. */
static int child_open(const struct vaccel_user *u, unsigned long long memlock,
		      const char *path)
{
	int fd;

	CHILD_EQ(0, vaccel_user_enter(u, memlock));
	fd = open(path, O_RDWR | O_CLOEXEC);
	CHILD_ASSERT(fd >= 0);
	return fd;
}

static long long pin_base;

#define CHILD_PIN(delta) CHILD_EQ(pin_base + (long long)(delta), vaccel_vmpin())

/*
 * The 512 MiB object with a 4 KiB bind pins 4 KiB; binds of plain
 * objects are charged to the binder up to the limit.
 */
static void bind_child(const struct vaccel_user *u, const char *path)
{
	long long unev, shmem, lck;
	uint32_t h;
	int fd;

	fd = child_open(u, 1 * MiB, path);
	pin_base = vaccel_vmpin();
	lck = vaccel_vmlck_now();
	unev = vaccel_meminfo("Unevictable");
	shmem = vaccel_meminfo("Shmem");
	CHILD_ASSERT(pin_base >= 0 && unev >= 0 && shmem >= 0);

	CHILD_EQ(0, vaccel_bo_new(fd, 512 * MiB, 0, &h));
	CHILD_EQ(0, vaccel_vm_bind(fd, h, VM_R | VM_W, 0, VA, PAGE));
	CHILD_PIN(PAGE);
	CHILD_ASSERT(vaccel_meminfo("Unevictable") - unev < 1 * (long long)MiB);
	CHILD_ASSERT(vaccel_meminfo("Shmem") - shmem < 1 * (long long)MiB);

	/* up to the limit, anywhere in the object */
	CHILD_EQ(0, vaccel_vm_bind(fd, h, VM_R, 256 * MiB, VA + MiB, MiB - PAGE));
	CHILD_PIN(MiB);
	CHILD_EQ(-ENOMEM, vaccel_vm_bind(fd, h, VM_R, 0, VA + 4 * MiB, PAGE));
	CHILD_EQ(-ENOMEM, vaccel_vm_bind(fd, h, VM_R, 0, VA + 8 * MiB, 2 * MiB));
	CHILD_PIN(MiB);
	/* unbinding gives the charge back at once */
	CHILD_EQ(0, vaccel_vm_unbind(fd, VA, PAGE));
	CHILD_PIN(MiB - PAGE);
	CHILD_EQ(0, vaccel_vm_bind(fd, h, VM_W, 511 * MiB, VA + 4 * MiB, PAGE));
	CHILD_PIN(MiB);
	CHILD_EQ(lck, vaccel_vmlck_now());

	close(fd);
	CHILD_PIN(0);
	_exit(0);
}

TEST_F_TIMEOUT(pin, bind_pins_only_the_range, 120)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0)
		bind_child(&self->user, self->node.path);
	EXPECT_EQ(0, vaccel_wait_child(pid));
}

/*
 * Persistent and signal objects are charged at creation; binding and
 * mapping them costs nothing more.
 */
static void persistent_child(const struct vaccel_user *u, const char *path)
{
	long long unev;
	uint32_t p, s, q;
	void *m;
	int fd;

	fd = child_open(u, 1 * MiB, path);
	pin_base = vaccel_vmpin();
	unev = vaccel_meminfo("Unevictable");

	CHILD_EQ(0, vaccel_bo_new(fd, 512 * KiB, PERSISTENT, &p));
	CHILD_PIN(512 * KiB);
	CHILD_EQ(0, vaccel_bo_new(fd, 256 * KiB - 100, SIGNAL, &s));
	CHILD_PIN(768 * KiB);
	/* the pages really are pinned (the shmem helper marks them unevictable) */
	CHILD_ASSERT(vaccel_meminfo("Unevictable") - unev >= 512 * (long long)KiB);
	CHILD_EQ(-ENOMEM, vaccel_bo_new(fd, 512 * KiB, PERSISTENT, NULL));
	CHILD_EQ(-ENOMEM, vaccel_bo_new(fd, 512 * KiB, SIGNAL, NULL));

	CHILD_EQ(0, vaccel_vm_bind(fd, p, VM_R | VM_W, 0, VA, 512 * KiB));
	CHILD_EQ(0, vaccel_vm_bind(fd, p, VM_R, 0, VA + MiB, 512 * KiB));
	CHILD_EQ(0, vaccel_vm_bind(fd, s, VM_R | VM_W, 0, VA + 2 * MiB, 256 * KiB));
	{
		struct drm_vaccel_bo_info info = {};

		CHILD_EQ(0, vaccel_bo_info(fd, p, &info));
		m = vaccel_bo_mmap(fd, info.mmap_offset, info.size, RW);
		CHILD_ASSERT(m != MAP_FAILED);
	}
	CHILD_PIN(768 * KiB);
	CHILD_EQ(0, vaccel_bo_new(fd, 256 * KiB, PERSISTENT, &q));
	CHILD_PIN(MiB);
	CHILD_EQ(-ENOMEM, vaccel_bo_new(fd, PAGE, PERSISTENT, NULL));

	/* closing the handle does not free a mapped object */
	CHILD_EQ(0, vaccel_gem_close(fd, p));
	CHILD_PIN(MiB);
	CHILD_EQ(0, munmap(m, 512 * KiB));
	CHILD_PIN(MiB);			/* still bound */
	CHILD_EQ(0, vaccel_vm_unbind(fd, VA, 512 * KiB));
	CHILD_EQ(0, vaccel_vm_unbind(fd, VA + MiB, 512 * KiB));
	CHILD_PIN(512 * KiB);
	close(fd);
	CHILD_PIN(0);
	_exit(0);
}

TEST_F(pin, persistent_charged_once)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0)
		persistent_child(&self->user, self->node.path);
	EXPECT_EQ(0, vaccel_wait_child(pid));
}

/*
 * A host mapping pins the whole object (the shmem helper's page array):
 * a plain object is charged its size once while any mapping exists.
 */
static void mmap_child(const struct vaccel_user *u, const char *path)
{
	struct drm_vaccel_bo_create a = {}, b = {};
	long long unev;
	char *m1, *m2, *m3;
	pid_t g;
	int fd;

	fd = child_open(u, 1 * MiB, path);
	pin_base = vaccel_vmpin();
	unev = vaccel_meminfo("Unevictable");
	CHILD_EQ(0, vaccel_bo_create(fd, 512 * KiB, 0, &a));
	CHILD_EQ(0, vaccel_bo_create(fd, 2 * MiB, 0, &b));
	CHILD_PIN(0);

	m1 = vaccel_bo_mmap(fd, a.mmap_offset, a.size, RW);
	CHILD_ASSERT(m1 != MAP_FAILED);
	CHILD_PIN(512 * KiB);
	/* (new pages reach the LRU lists in per-CPU batches) */
	CHILD_ASSERT(vaccel_meminfo("Unevictable") - unev >= 256 * (long long)KiB);
	m2 = vaccel_bo_mmap(fd, a.mmap_offset, a.size, PROT_READ);
	CHILD_ASSERT(m2 != MAP_FAILED);
	CHILD_PIN(512 * KiB);		/* the same pages: charged once */
	/* split in two VMAs, and copied into a child: still once */
	CHILD_EQ(0, munmap(m1 + PAGE, PAGE));
	g = fork();
	CHILD_ASSERT(g >= 0);
	if (g == 0)
		_exit(m1[0] == 0 ? 0 : 1);
	CHILD_EQ(0, vaccel_wait_child(g));
	CHILD_PIN(512 * KiB);

	/* past the limit */
	m3 = vaccel_bo_mmap(fd, b.mmap_offset, b.size, PROT_READ);
	CHILD_ASSERT(m3 == MAP_FAILED);
	CHILD_EQ(ENOMEM, errno);
	CHILD_PIN(512 * KiB);

	CHILD_EQ(0, munmap(m1, a.size));
	CHILD_PIN(512 * KiB);		/* m2 still maps it */
	CHILD_EQ(0, munmap(m2, a.size));
	CHILD_PIN(0);
	CHILD_EQ(0, vaccel_vm_bind(fd, a.handle, VM_R, 0, VA, 512 * KiB));
	CHILD_PIN(512 * KiB);
	/* a mapping and a bind of the same pages are two charges */
	m1 = vaccel_bo_mmap(fd, a.mmap_offset, a.size, PROT_READ);
	CHILD_ASSERT(m1 != MAP_FAILED);
	CHILD_PIN(MiB);
	CHILD_EQ(0, vaccel_vm_unbind(fd, VA, 512 * KiB));
	CHILD_PIN(512 * KiB);
	close(fd);		/* the mapping holds the file and its charge */
	CHILD_PIN(512 * KiB);
	CHILD_EQ(0, munmap(m1, a.size));
	CHILD_PIN(0);
	_exit(0);
}

TEST_F(pin, mmap_charged_once)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0)
		mmap_child(&self->user, self->node.path);
	EXPECT_EQ(0, vaccel_wait_child(pid));
}

/*
 * vgem attaches to the dma-buf on import: the shmem helper pins the whole
 * object, charged to the importer.
 */
static void vgem_child(const struct vaccel_user *u, const char *path,
		       const char *vgem)
{
	uint32_t a, b, va, vb;
	int fd, vfd, da = -1, db = -1;

	fd = child_open(u, 1 * MiB, path);
	vfd = open(vgem, O_RDWR | O_CLOEXEC);
	CHILD_ASSERT(vfd >= 0);
	pin_base = vaccel_vmpin();
	CHILD_EQ(0, vaccel_bo_new(fd, 512 * KiB, 0, &a));
	CHILD_EQ(0, vaccel_bo_new(fd, 2 * MiB, 0, &b));
	CHILD_EQ(0, vaccel_prime_export(fd, a, &da));
	CHILD_EQ(0, vaccel_prime_export(fd, b, &db));
	CHILD_PIN(0);
	CHILD_EQ(0, vaccel_vgem_import(vfd, da, &va));
	CHILD_PIN(512 * KiB);
	CHILD_EQ(-ENOMEM, vaccel_vgem_import(vfd, db, &vb));
	CHILD_PIN(512 * KiB);
	CHILD_EQ(0, vaccel_gem_close(vfd, va));
	CHILD_PIN(0);
	/* the limit has room again */
	CHILD_EQ(0, vaccel_vm_bind(fd, a, VM_R, 0, VA, 512 * KiB));
	CHILD_PIN(512 * KiB);
	CHILD_EQ(0, vaccel_vm_unbind(fd, VA, 512 * KiB));
	close(vfd);
	close(da);
	close(db);
	close(fd);
	CHILD_PIN(0);
	_exit(0);
}

TEST_F(pin, vgem_attach_charged)
{
	struct vaccel_node vn;
	char vgem[64];
	pid_t pid;

	if (vaccel_vgem_path(vgem, sizeof(vgem)))
		SKIP(return, "vgem is not loaded");
	ASSERT_EQ(0, vaccel_path_open_to_all(vgem, &vn));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		vgem_child(&self->user, self->node.path, vgem);
	EXPECT_EQ(0, vaccel_wait_child(pid));
	vaccel_node_restore(&vn);
}

/*
 * vivid with vb2-vmalloc vmaps a queued dma-buf. A vmap cannot be refused
 * once the dma-buf core asks for it (it warns), so vaccel offers it only
 * where it pins nothing uncharged: a persistent object (charged at
 * creation) is queued at no further cost, a plain one is refused by the
 * dma-buf core (vb2 reports -EFAULT) without pinning anything.
 */
static void vivid_child(const struct vaccel_user *u, const char *path,
			const char *vivid)
{
	uint32_t a, p;
	int fd, vfd, da = -1, dp = -1;

	fd = child_open(u, 1 * MiB, path);
	vfd = vaccel_vivid_open(vivid);
	CHILD_ASSERT(vfd >= 0);
	pin_base = vaccel_vmpin();
	CHILD_EQ(0, vaccel_bo_new(fd, 512 * KiB, 0, &a));
	CHILD_EQ(0, vaccel_prime_export(fd, a, &da));
	CHILD_EQ(0, vaccel_vivid_reqbufs(vfd, 1));
	CHILD_EQ(-EFAULT, vaccel_vivid_qbuf(vfd, da));
	CHILD_PIN(0);
	CHILD_EQ(0, vaccel_vivid_reqbufs(vfd, 0));

	CHILD_EQ(0, vaccel_bo_new(fd, 768 * KiB, PERSISTENT, &p));
	CHILD_PIN(768 * KiB);
	CHILD_EQ(-ENOMEM, vaccel_bo_new(fd, 512 * KiB, PERSISTENT, NULL));
	CHILD_EQ(0, vaccel_prime_export(fd, p, &dp));
	CHILD_EQ(0, vaccel_vivid_reqbufs(vfd, 1));
	CHILD_EQ(0, vaccel_vivid_qbuf(vfd, dp));
	CHILD_PIN(768 * KiB);
	CHILD_EQ(0, vaccel_vivid_stream(vfd, true));
	CHILD_EQ(0, vaccel_vivid_dqbuf(vfd, 10000));
	CHILD_EQ(0, vaccel_vivid_stream(vfd, false));
	CHILD_EQ(0, vaccel_vivid_reqbufs(vfd, 0));
	close(vfd);
	close(da);
	close(dp);
	close(fd);
	CHILD_PIN(0);
	_exit(0);
}

TEST_F_TIMEOUT(pin, vivid_vmap_charged, 60)
{
	struct vaccel_node vn;
	char vivid[64];
	pid_t pid;

	if (vaccel_vivid_path(vivid, sizeof(vivid)))
		SKIP(return, "vivid is not loaded");
	ASSERT_EQ(0, vaccel_path_open_to_all(vivid, &vn));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		vivid_child(&self->user, self->node.path, vivid);
	EXPECT_EQ(0, vaccel_wait_child(pid));
	vaccel_node_restore(&vn);
}

/*
 * vivid with vb2-dma-contig attaches (pinning the whole object, charged
 * to the process queuing the buffer), then vmaps the attached object to
 * write frames into it. (Past the limit the attachment fails with -ENOMEM
 * like vgem's above; not tested through vb2, whose 6.12 error path leaks
 * the dma-buf reference when an attachment fails.)
 */
static void vivid_contig_child(const struct vaccel_user *u, const char *path,
			       const char *vivid)
{
	struct drm_vaccel_bo_create a = {};
	int fd, vfd, da = -1;
	unsigned char *m;
	unsigned int i;
	bool changed = false;

	fd = child_open(u, 8 * KiB, path);
	vfd = vaccel_vivid_open(vivid);
	CHILD_ASSERT(vfd >= 0);
	pin_base = vaccel_vmpin();
	CHILD_EQ(0, vaccel_bo_create(fd, PAGE, 0, &a));	/* contiguous */
	m = vaccel_bo_mmap(fd, a.mmap_offset, PAGE, RW);
	CHILD_ASSERT(m != MAP_FAILED);
	memset(m, 0x55, PAGE);
	CHILD_EQ(0, munmap(m, PAGE));
	CHILD_PIN(0);
	CHILD_EQ(0, vaccel_prime_export(fd, a.handle, &da));
	CHILD_EQ(0, vaccel_vivid_reqbufs(vfd, 1));
	CHILD_EQ(0, vaccel_vivid_qbuf(vfd, da));
	CHILD_PIN(PAGE);
	CHILD_EQ(0, vaccel_vivid_stream(vfd, true));
	CHILD_EQ(0, vaccel_vivid_dqbuf(vfd, 10000));
	CHILD_EQ(0, vaccel_vivid_stream(vfd, false));
	m = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, da, 0);
	CHILD_ASSERT(m != MAP_FAILED);
	for (i = 0; i < 512; i++)
		changed |= m[i] != 0x55;
	CHILD_ASSERT(changed);		/* a frame arrived */
	CHILD_PIN(PAGE);		/* the mapping uses the same pin */
	munmap(m, PAGE);
	CHILD_EQ(0, vaccel_vivid_reqbufs(vfd, 0));
	CHILD_PIN(0);
	close(vfd);
	close(da);
	close(fd);
	_exit(0);
}

TEST_F_TIMEOUT(pin, vivid_dma_contig_charged, 120)
{
	struct vaccel_node vn;
	char vivid[64], ko[256];
	pid_t pid;

	if (vaccel_vivid_path(vivid, sizeof(vivid)) || vaccel_vivid_ko(ko, sizeof(ko)))
		SKIP(return, "vivid is not loaded");
	ASSERT_EQ(0, vaccel_vivid_reload("allocators=1"));
	ASSERT_EQ(0, vaccel_vivid_path(vivid, sizeof(vivid)));
	ASSERT_EQ(0, vaccel_path_open_to_all(vivid, &vn));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		vivid_contig_child(&self->user, self->node.path, vivid);
	EXPECT_EQ(0, vaccel_wait_child(pid));
	vaccel_node_restore(&vn);
	EXPECT_EQ(0, vaccel_vivid_reload(""));
}

/*
 * Free, then create at the limit, 10,000 times: the charge of the freed
 * object must be back before GEM_CLOSE returns.
 */
static void free_create_child(const struct vaccel_user *u, const char *path)
{
	unsigned int i, failed = 0, first = 0;
	uint32_t h;
	int fd, ret;

	fd = child_open(u, 64 * KiB, path);
	pin_base = vaccel_vmpin();
	CHILD_EQ(0, vaccel_bo_new(fd, 64 * KiB, PERSISTENT, &h));
	for (i = 0; i < 10000; i++) {
		CHILD_EQ(0, vaccel_gem_close(fd, h));
		ret = vaccel_bo_new(fd, 64 * KiB, i & 1 ? SIGNAL : PERSISTENT, &h);
		if (ret) {
			if (!failed++)
				first = i;
			/* wait for the old code's deferred uncharge, go on */
			while (vaccel_bo_new(fd, 64 * KiB, PERSISTENT, &h))
				vaccel_msleep(1);
		}
	}
	if (failed)
		fprintf(stderr, "# %u of 10000 creations failed, the first in round %u\n",
			failed, first);
	CHILD_EQ(0, failed);
	CHILD_PIN(64 * KiB);
	close(fd);
	CHILD_PIN(0);
	_exit(0);
}

TEST_F_TIMEOUT(pin, free_then_create_at_limit, 300)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0)
		free_create_child(&self->user, self->node.path);
	EXPECT_EQ(0, vaccel_wait_child(pid));
}

/*
 * Another driver's dma-buf (udmabuf) is pinned by its exporter for the
 * dma-buf's life; vaccel pins nothing more to bind it, so a bind of it is
 * not charged.
 */
static void foreign_child(const struct vaccel_user *u, const char *path,
			  int dmabuf)
{
	uint32_t h;
	int fd;

	fd = child_open(u, 64 * KiB, path);
	pin_base = vaccel_vmpin();
	CHILD_EQ(0, vaccel_prime_import(fd, dmabuf, &h));
	CHILD_EQ(0, vaccel_vm_bind(fd, h, VM_R | VM_W, 0, VA, 4 * MiB));
	CHILD_EQ(0, vaccel_vm_bind(fd, h, VM_R, 0, VA + 4 * MiB, 4 * MiB));
	CHILD_PIN(0);
	/* the limit is untouched: a vaccel bind still has the whole of it */
	CHILD_EQ(0, vaccel_bo_new(fd, 64 * KiB, PERSISTENT, NULL));
	CHILD_PIN(64 * KiB);
	close(fd);
	CHILD_PIN(0);
	_exit(0);
}

TEST_F(pin, foreign_dmabuf_bind_not_charged)
{
	struct udmabuf_create create = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = 4 * MiB };
	int udev, memfd, dmabuf;
	pid_t pid;

	udev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (udev < 0)
		SKIP(return, "no /dev/udmabuf");
	memfd = memfd_create("vaccel", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, ftruncate(memfd, 4 * MiB));
	ASSERT_EQ(0, fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK));
	create.memfd = memfd;
	dmabuf = ioctl(udev, UDMABUF_CREATE, &create);
	ASSERT_LE(0, dmabuf);
	close(udev);
	close(memfd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		foreign_child(&self->user, self->node.path, dmabuf);
	EXPECT_EQ(0, vaccel_wait_child(pid));
	close(dmabuf);
}

/*
 * An import of another vaccel device's object pins nothing by itself (the
 * old import attached and mapped the exporter's dma-buf, pinning all of
 * it, uncharged); its binds pin and charge what they bind.
 */
static void import_child(const struct vaccel_user *u, const char *path,
			 const char *path2)
{
	long long unev, shmem;
	uint32_t h, hb;
	int fd, fd2, d = -1;

	fd = child_open(u, 1 * MiB, path);
	fd2 = open(path2, O_RDWR | O_CLOEXEC);
	CHILD_ASSERT(fd2 >= 0);
	pin_base = vaccel_vmpin();
	unev = vaccel_meminfo("Unevictable");
	shmem = vaccel_meminfo("Shmem");
	CHILD_EQ(0, vaccel_bo_new(fd, 256 * MiB, 0, &h));
	CHILD_EQ(0, vaccel_prime_export(fd, h, &d));
	CHILD_EQ(0, vaccel_prime_import(fd2, d, &hb));
	CHILD_PIN(0);
	CHILD_ASSERT(vaccel_meminfo("Unevictable") - unev < 1 * (long long)MiB);
	CHILD_ASSERT(vaccel_meminfo("Shmem") - shmem < 1 * (long long)MiB);
	CHILD_EQ(0, vaccel_vm_bind(fd2, hb, VM_R | VM_W, 128 * MiB, VA, MiB));
	CHILD_PIN(MiB);
	CHILD_EQ(-ENOMEM, vaccel_vm_bind(fd2, hb, VM_R, 0, VA + 2 * MiB, PAGE));
	CHILD_EQ(-ENOMEM, vaccel_vm_bind(fd, h, VM_R, 0, VA + 2 * MiB, PAGE));
	close(fd2);
	CHILD_PIN(0);
	close(d);
	close(fd);
	_exit(0);
}

TEST_F_TIMEOUT(pin, vaccel_import_pins_nothing, 120)
{
	struct vaccel_node n2;
	pid_t pid;

	vaccel_del_device(ID2);
	ASSERT_EQ(0, vaccel_new_device("901 memory=1G"));
	ASSERT_EQ(0, vaccel_node_render(ID2, &self->user, &n2));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		import_child(&self->user, self->node.path, n2.path);
	EXPECT_EQ(0, vaccel_wait_child(pid));
	vaccel_node_restore(&n2);
	EXPECT_EQ(0, vaccel_del_device(ID2));
}

/*
 * Whatever a process leaves pinned when it exits is uncharged: the next
 * process of the same user has the whole limit again.
 */
static void leave_pinned_child(const struct vaccel_user *u, const char *path)
{
	struct drm_vaccel_bo_create b = {};
	uint32_t h;
	int fd;

	fd = child_open(u, 1 * MiB, path);
	CHILD_EQ(0, vaccel_bo_new(fd, 256 * KiB, PERSISTENT, NULL));
	CHILD_EQ(0, vaccel_bo_new(fd, 256 * KiB, 0, &h));
	CHILD_EQ(0, vaccel_vm_bind(fd, h, VM_R, 0, VA, 256 * KiB));
	CHILD_EQ(0, vaccel_bo_create(fd, 512 * KiB, 0, &b));
	CHILD_ASSERT(vaccel_bo_mmap(fd, b.mmap_offset, b.size, RW) != MAP_FAILED);
	CHILD_EQ(-ENOMEM, vaccel_bo_new(fd, PAGE, SIGNAL, NULL));
	_exit(0);	/* with everything open, bound and mapped */
}

static void whole_limit_child(const struct vaccel_user *u, const char *path)
{
	int fd = child_open(u, 1 * MiB, path);

	CHILD_EQ(0, vaccel_bo_new(fd, MiB, PERSISTENT, NULL));
	_exit(0);
}

TEST_F(pin, exit_uncharges)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0)
		leave_pinned_child(&self->user, self->node.path);
	EXPECT_EQ(0, vaccel_wait_child(pid));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		whole_limit_child(&self->user, self->node.path);
	EXPECT_EQ(0, vaccel_wait_child(pid));
}

/* With CAP_IPC_LOCK nothing is limited, but VmPin still shows the pins. */
TEST_F(pin, cap_ipc_lock_not_limited)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { 64 * KiB, 64 * KiB };
		uint32_t h;

		CHILD_ASSERT(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
		pin_base = vaccel_vmpin();
		CHILD_EQ(0, vaccel_bo_new(self->fd, MiB, PERSISTENT, NULL));
		CHILD_PIN(MiB);
		CHILD_EQ(0, vaccel_bo_new(self->fd, MiB, 0, &h));
		CHILD_EQ(0, vaccel_vm_bind(self->fd, h, VM_R, 0, VA, MiB));
		CHILD_PIN(2 * MiB);
		CHILD_EQ(0, vaccel_vm_unbind(self->fd, VA, MiB));
		CHILD_PIN(MiB);
		_exit(0);
	}
	EXPECT_EQ(0, vaccel_wait_child(pid));
}

TEST_HARNESS_MAIN
