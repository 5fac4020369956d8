// SPDX-License-Identifier: GPL-2.0-only
/*
 * Several processes hammer the memory uAPI at once for a bounded time:
 * random creates, binds, unbinds, host mappings, seals, exports and
 * imports between two devices, on private files and on one file shared by
 * all of them; then they exit (or are killed) without cleaning up. Each
 * call must succeed or fail with an errno the contract allows, and
 * afterwards every object must be freed and no capacity left charged.
 * The VM rig fails the run on any kernel warning.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <signal.h>
#include <sys/wait.h>

#include "vaccel_common.h"
#include "kselftest_harness.h"

#define ID_A		VACCEL_TEST_ID
#define ID_B		(VACCEL_TEST_ID + 1)
#define PAGE		VACCEL_PAGE
#define NPROC		4
#define RUN_MS		5000
#define MAX_OBJS	48
#define MAX_HMAPS	8
#define MAX_DMABUFS	4
#define SLOTS		64		/* VA slots per file */
#define SLOT_SIZE	(64 << 10)	/* >= the largest object */
#define SLOT_VA(i)	(VACCEL_VA_LO + (uint64_t)(i) * SLOT_SIZE)
#define VM_R		DRM_VACCEL_VM_READ
#define VM_W		DRM_VACCEL_VM_WRITE

struct obj {
	uint32_t handle;
	uint32_t flags;
	uint64_t size;
	uint64_t offset;
	bool sealed;	/* known to be sealed */
	bool imported;	/* may be sealed behind our back by the exporter */
};

struct slot {
	bool used;
	uint64_t size;
};

/* One file's view: its objects and its VA slots. */
struct ctx {
	int fd;
	struct obj objs[MAX_OBJS];
	unsigned int nobjs;
	struct slot slots[SLOTS];
};

struct hmap {
	char *p;
	uint64_t size;
};

static uint64_t rng_state;
static unsigned int errors;
static unsigned long ops;
/* successes, to show what a run exercised */
static unsigned long n_create, n_bind, n_mmap, n_seal, n_share;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16) % n;
}

/* Record a result outside @allowed (a 0-terminated list beyond @a). */
static void bad(int line, const char *what, int ret)
{
	errors++;
	if (errors <= 10)
		fprintf(stderr, "# child %d: line %d: %s returned %d\n",
			(int)getpid(), line, what, ret);
}

#define EXPECT_ONE_OF(ret, ...) do {					\
	int __r = (ret), __ok[] = { __VA_ARGS__ };			\
	unsigned int __i;						\
	bool __found = false;						\
	for (__i = 0; __i < sizeof(__ok) / sizeof(__ok[0]); __i++)	\
		__found |= __r == __ok[__i];				\
	if (!__found)							\
		bad(__LINE__, #ret, __r);				\
} while (0)

static void drop_obj(struct ctx *c, unsigned int i)
{
	c->objs[i] = c->objs[--c->nobjs];
}

/* 1 sealed, 0 not sealed, -1 unknown (an import the exporter may seal) */
static int seal_state(const struct obj *o)
{
	if (o->sealed)
		return 1;
	return o->imported && o->flags == DRM_VACCEL_BO_PERSISTENT ? -1 : 0;
}

static void op_create(struct ctx *c)
{
	static const uint32_t flags[] = {
		0, 0, DRM_VACCEL_BO_PERSISTENT, DRM_VACCEL_BO_SIGNAL,
	};
	struct drm_vaccel_bo_create bo = {};
	uint64_t size = (1 + rnd(16)) * PAGE - rnd(2) * rnd(PAGE);
	uint32_t f = flags[rnd(4)];
	int ret;

	if (c->nobjs == MAX_OBJS)
		return;
	ret = vaccel_bo_create(c->fd, size, f, &bo);
	EXPECT_ONE_OF(ret, 0, -ENOMEM);
	if (ret)
		return;
	if (bo.size != ((size + PAGE - 1) & ~(PAGE - 1)))
		bad(__LINE__, "rounded size", (int)bo.size);
	n_create++;
	c->objs[c->nobjs++] = (struct obj){
		.handle = bo.handle, .flags = f, .size = bo.size,
		.offset = bo.mmap_offset,
	};
}

static void op_close(struct ctx *c)
{
	unsigned int i;

	if (!c->nobjs)
		return;
	i = rnd(c->nobjs);
	EXPECT_ONE_OF(vaccel_gem_close(c->fd, c->objs[i].handle), 0);
	drop_obj(c, i);
}

static void op_info(struct ctx *c)
{
	struct drm_vaccel_bo_info info = {};
	struct obj *o;
	int ret;

	if (!c->nobjs)
		return;
	o = &c->objs[rnd(c->nobjs)];
	ret = vaccel_bo_info(c->fd, o->handle, &info);
	EXPECT_ONE_OF(ret, 0);
	if (ret)
		return;
	if (info.size != o->size || info.flags != o->flags ||
	    !!(info.status & DRM_VACCEL_BO_STATUS_IMPORTED) != o->imported ||
	    info.mmap_offset != o->offset)
		bad(__LINE__, "BO_INFO contents", (int)info.status);
	if (seal_state(o) >= 0 &&
	    !!(info.status & DRM_VACCEL_BO_STATUS_SEALED) != o->sealed)
		bad(__LINE__, "BO_INFO sealed status", (int)info.status);
}

static void op_bind(struct ctx *c)
{
	unsigned int s = rnd(SLOTS);
	uint32_t f = 1 + rnd(3);
	uint64_t pages, first, n;
	struct obj *o;
	int ret;

	if (!c->nobjs)
		return;
	o = &c->objs[rnd(c->nobjs)];
	pages = o->size / PAGE;
	first = rnd(pages);
	n = 1 + rnd(pages - first);
	ret = vaccel_vm_bind(c->fd, o->handle, f, first * PAGE, SLOT_VA(s), n * PAGE);
	if (c->slots[s].used && seal_state(o) && (f & VM_W))
		EXPECT_ONE_OF(ret, -EBUSY, -EACCES);
	else if (c->slots[s].used)
		EXPECT_ONE_OF(ret, -EBUSY);
	else if (seal_state(o) == 1 && (f & VM_W))
		EXPECT_ONE_OF(ret, -EACCES);
	else if (seal_state(o) == -1 && (f & VM_W))
		EXPECT_ONE_OF(ret, 0, -EACCES);
	else
		EXPECT_ONE_OF(ret, 0);
	if (!ret) {
		c->slots[s].used = true;
		c->slots[s].size = n * PAGE;
		n_bind++;
	}
}

static void op_unbind(struct ctx *c)
{
	unsigned int s = rnd(SLOTS);

	if (c->slots[s].used) {
		EXPECT_ONE_OF(vaccel_vm_unbind(c->fd, SLOT_VA(s), c->slots[s].size), 0);
		c->slots[s].used = false;
	} else {
		EXPECT_ONE_OF(vaccel_vm_unbind(c->fd, SLOT_VA(s), PAGE), -ENOENT);
	}
}

static void op_mmap(struct ctx *c, struct hmap *maps, unsigned int *nmaps)
{
	bool write = rnd(2);
	struct obj *o;
	char *p;

	if (!c->nobjs)
		return;
	o = &c->objs[rnd(c->nobjs)];
	p = vaccel_bo_mmap(c->fd, o->offset, o->size,
			   write ? PROT_READ | PROT_WRITE : PROT_READ);
	if (write && seal_state(o) == 1) {
		EXPECT_ONE_OF(p == MAP_FAILED ? -errno : 0, -EACCES);
		if (p != MAP_FAILED)
			munmap(p, o->size);
		return;
	}
	if (write && seal_state(o) == -1)
		EXPECT_ONE_OF(p == MAP_FAILED ? -errno : 0, 0, -EACCES);
	else
		EXPECT_ONE_OF(p == MAP_FAILED ? -errno : 0, 0);
	if (p == MAP_FAILED)
		return;
	n_mmap++;
	if (write)
		p[rnd(o->size)] = (char)rnd(256);
	else
		(void)*(volatile char *)&p[rnd(o->size)];
	if (*nmaps < MAX_HMAPS && rnd(2)) {
		maps[(*nmaps)++] = (struct hmap){ p, o->size };
	} else {
		munmap(p, o->size);
	}
}

static void op_munmap(struct hmap *maps, unsigned int *nmaps)
{
	unsigned int i;

	if (!*nmaps)
		return;
	i = rnd(*nmaps);
	munmap(maps[i].p, maps[i].size);
	maps[i] = maps[--(*nmaps)];
}

static void op_seal(struct ctx *c)
{
	struct obj *o;
	int ret;

	if (!c->nobjs)
		return;
	o = &c->objs[rnd(c->nobjs)];
	ret = vaccel_bo_seal(c->fd, o->handle);
	if (o->flags != DRM_VACCEL_BO_PERSISTENT || o->imported)
		EXPECT_ONE_OF(ret, -EINVAL);
	else if (o->sealed)
		EXPECT_ONE_OF(ret, 0);
	else
		EXPECT_ONE_OF(ret, 0, -EBUSY);
	if (!ret) {
		o->sealed = true;
		n_seal++;
	}
}

/*
 * Export one of @c's own objects (never re-export an import: that would
 * bring an object back to its own device) and import it into @imp.
 */
static void op_share(struct ctx *c, struct ctx *imp, int *dmabufs,
		     unsigned int *ndmabufs)
{
	struct drm_vaccel_bo_info info = {};
	struct obj *o;
	uint32_t h;
	int d, ret, i;

	if (!c->nobjs || imp->nobjs == MAX_OBJS)
		return;
	o = &c->objs[rnd(c->nobjs)];
	if (o->imported)
		return;
	ret = vaccel_prime_export(c->fd, o->handle, &d);
	EXPECT_ONE_OF(ret, 0);
	if (ret)
		return;
	ret = vaccel_prime_import(imp->fd, d, &h);
	EXPECT_ONE_OF(ret, 0);
	if (!ret) {
		n_share++;
		EXPECT_ONE_OF(ret = vaccel_bo_info(imp->fd, h, &info), 0);
		if (ret)
			info.mmap_offset = 0;
		/* the same object may already be imported: same handle */
		for (i = 0; i < (int)imp->nobjs; i++)
			if (imp->objs[i].handle == h)
				break;
		if (i == (int)imp->nobjs)
			imp->objs[imp->nobjs++] = (struct obj){
				.handle = h, .flags = o->flags, .size = o->size,
				.offset = info.mmap_offset, .sealed = o->sealed,
				.imported = true,
			};
	}
	if (*ndmabufs < MAX_DMABUFS && rnd(2))
		dmabufs[(*ndmabufs)++] = d;
	else
		close(d);
}

/* The file all processes share: anything may race with anything. */
static void op_shared(int fd)
{
	uint32_t h = 1 + rnd(64);
	unsigned int s = rnd(SLOTS);

	switch (rnd(5)) {
	case 0:
		EXPECT_ONE_OF(vaccel_bo_new(fd, (1 + rnd(4)) * PAGE, rnd(2), NULL),
			      0, -ENOMEM, -ENOSPC);
		break;
	case 1:
		EXPECT_ONE_OF(vaccel_gem_close(fd, h), 0, -EINVAL);
		break;
	case 2:
		EXPECT_ONE_OF(vaccel_vm_bind(fd, h, VM_R | VM_W, 0, SLOT_VA(s), PAGE), 0, -ENOENT,
					     -EBUSY, -EACCES, -ENOSPC);
		break;
	case 3:
		EXPECT_ONE_OF(vaccel_vm_unbind(fd, SLOT_VA(s), PAGE),
			      0, -ENOENT, -EINVAL);
		break;
	default:
		EXPECT_ONE_OF(vaccel_bo_seal(fd, h), 0, -ENOENT, -EINVAL, -EBUSY);
		break;
	}
}

static void child(unsigned int idx, int shared, uint64_t until)
{
	static struct ctx a, b;
	struct hmap maps[MAX_HMAPS];
	unsigned int nmaps = 0, ndmabufs = 0;
	int dmabufs[MAX_DMABUFS];

	rng_state = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL + vaccel_now_ms();
	fprintf(stderr, "# child %u: pid %d seed 0x%llx\n", idx, (int)getpid(),
		(unsigned long long)rng_state);
	a.fd = vaccel_open(ID_A);
	b.fd = vaccel_open(ID_B);
	CHILD_ASSERT(a.fd >= 0 && b.fd >= 0);

	while (vaccel_now_ms() < until && errors < 20) {
		struct ctx *c = rnd(4) ? &a : &b;
		struct ctx *other = c == &a ? &b : &a;

		ops++;
		switch (rnd(16)) {
		case 0: case 1: case 2:
			op_create(c);
			break;
		case 3: case 4:
			op_close(c);
			break;
		case 5: case 6: case 7:
			op_bind(c);
			break;
		case 8: case 9:
			op_unbind(c);
			break;
		case 10:
			op_mmap(c, maps, &nmaps);
			break;
		case 11:
			op_munmap(maps, &nmaps);
			break;
		case 12:
			op_seal(c);
			break;
		case 13:
			op_share(c, other, dmabufs, &ndmabufs);
			break;
		case 14:
			op_info(c);
			break;
		default:
			op_shared(shared);
			break;
		}
	}
	fprintf(stderr, "# child %u: %lu operations (%lu creates, %lu binds, %lu mmaps, %lu seals, %lu imports), %u unexpected results\n",
		idx, ops, n_create, n_bind, n_mmap, n_seal, n_share, errors);
	/* no cleanup: files, mappings, bindings and dma-bufs are left open */
	_exit(errors ? 1 : 0);
}

FIXTURE(stress) {
	struct vaccel_counts counts;
};

FIXTURE_SETUP(stress)
{
	char spec[64];

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	vaccel_del_device(ID_A);
	vaccel_del_device(ID_B);
	vaccel_counts_read(&self->counts);
	snprintf(spec, sizeof(spec), "%u memory=16M", ID_A);
	ASSERT_EQ(0, vaccel_new_device(spec));
	snprintf(spec, sizeof(spec), "%u memory=16M", ID_B);
	ASSERT_EQ(0, vaccel_new_device(spec));
}

FIXTURE_TEARDOWN(stress)
{
	vaccel_del_device(ID_A);
	vaccel_del_device(ID_B);
	EXPECT_COUNTS_BACK(&self->counts, 5000);
}

TEST_F_TIMEOUT(stress, processes, 90)
{
	uint64_t until = vaccel_now_ms() + RUN_MS;
	pid_t pids[NPROC];
	unsigned int i;
	int shared, fd;

	shared = vaccel_open(ID_A);
	ASSERT_LE(0, shared);
	for (i = 0; i < NPROC; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0)
			/* the last one runs until it is killed */
			child(i, shared, i == NPROC - 1 ? until + 60000 : until);
	}
	vaccel_msleep(RUN_MS);
	kill(pids[NPROC - 1], SIGKILL);
	for (i = 0; i < NPROC; i++) {
		int status = 0;

		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		if (i == NPROC - 1) {
			EXPECT_TRUE((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ||
				    (WIFEXITED(status) && WEXITSTATUS(status) == 0))
				TH_LOG("child %u status 0x%x", i, status);
		} else {
			EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
				TH_LOG("child %u status 0x%x", i, status);
		}
	}
	close(shared);

	/* everything the children left behind is freed */
	EXPECT_EQ(self->counts.bos, vaccel_objects_wait("bos", self->counts.bos, 5000));
	EXPECT_EQ(self->counts.mappings, vaccel_objects_wait("mappings", self->counts.mappings, 5000));
	EXPECT_EQ(self->counts.files, vaccel_objects_wait("files", self->counts.files, 5000));
	fd = vaccel_open(ID_A);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, vaccel_memory_used_wait(fd, 0, 5000));
	close(fd);
	fd = vaccel_open(ID_B);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, vaccel_memory_used_wait(fd, 0, 5000));
	close(fd);
}

TEST_HARNESS_MAIN
