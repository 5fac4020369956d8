// SPDX-License-Identifier: GPL-2.0-only
/*
 * Large COPY, FILL and REDUCE packets split across idle engines: the
 * results are those of one engine, the packet completes once and in queue
 * order (the packets after it see all of it), a fault names the first
 * failing byte, and a queue destroyed or a file closed while other engines
 * run its ranges frees everything. An engine never runs its own job's
 * ranges outside its turn, sleeps while a helper finishes a range, and a
 * range a helper holds stays mapped when it is unbound.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <pthread.h>

#include "vaccel_common.h"
#include "vaccel_queue_util.h"
#include "kselftest_harness.h"

#define ID	VACCEL_TEST_ID
#define BIG	(32ull << 20)
#define BIG_VA	(1ull << 36)	/* three BIG buffers from here */

FIXTURE(split) {
	int fd;
	struct bo ring, sig, big;
	struct q q;
};

FIXTURE_SETUP(split)
{
	char spec[64];

	self->fd = -1;
	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	snprintf(spec, sizeof(spec), "%u engines=4", ID);
	ASSERT_EQ(0, vaccel_fresh_device(ID, spec));
	self->fd = vaccel_open(ID);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bo_new(self->fd, RING_N * 64, 0, &self->ring));
	ASSERT_EQ(0, bo_new(self->fd, PAGE, DRM_VACCEL_BO_SIGNAL, &self->sig));
	ASSERT_EQ(0, bo_new(self->fd, 3 * BIG, 0, &self->big));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA,
				    PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->sig.handle, VM_RW, 0, SIG_VA, PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->big.handle, VM_RW, 0, BIG_VA, 3 * BIG));
	ASSERT_EQ(0, queue_new(self->fd, RING_VA, RING_N, (void *)self->ring.map, &self->q));
}

FIXTURE_TEARDOWN(split)
{
	if (!vaccel_present())
		return;
	if (self->fd >= 0)
		close(self->fd);
	vaccel_del_device(ID);
}

static long long dev_stat(const char *key)
{
	char buf[1024];

	if (vaccel_dev_debugfs(ID, "stats", buf, sizeof(buf)) < 0)
		return -1;
	return vaccel_kv(buf, key);
}

static void fill_pattern(uint8_t *p, uint64_t n, uint32_t seed)
{
	uint32_t *w = (uint32_t *)p;
	uint64_t i;

	for (i = 0; i < n / 4; i++) {
		seed = seed * 1103515245 + 12345;
		w[i] = seed;
	}
}

/*
 * A 32 MiB COPY, then a COPY of its destination, then a SIGNAL: other
 * engines ran ranges (split_helps moved), every byte arrived, and the
 * second copy saw all of the first (the split packet completed before
 * the next packet started).
 */
TEST_F(split, copy_is_split_in_order)
{
	volatile uint64_t *s = (volatile uint64_t *)self->sig.map;
	struct drm_vaccel_packet p;
	long long splits = dev_stat("splits"), helps = dev_stat("split_helps");

	fill_pattern(self->big.map, BIG, 1);
	p = completing(pkt(DRM_VACCEL_PKT_COPY, BIG_VA, BIG_VA + BIG, BIG, 0), SIG_VA,
		       DRM_VACCEL_SIGNAL_SET, 1);
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	p = pkt(DRM_VACCEL_PKT_COPY, BIG_VA + BIG, BIG_VA + 2 * BIG, BIG, 0);
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	p = pkt(DRM_VACCEL_PKT_SIGNAL, SIG_VA + 8, 2, 0, 0);
	p.arg = DRM_VACCEL_SIGNAL_SET;
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	ASSERT_TRUE(drain(&self->q, 60000));
	EXPECT_EQ(1, s[0]);
	EXPECT_EQ(2, s[1]);
	EXPECT_EQ(0, memcmp(self->big.map, self->big.map + BIG, BIG));
	EXPECT_EQ(0, memcmp(self->big.map, self->big.map + 2 * BIG, BIG));
	EXPECT_LE(splits + 2, dev_stat("splits"));
	TH_LOG("ranges run by other engines: %lld", dev_stat("split_helps") - helps);
	EXPECT_LT(helps, dev_stat("split_helps"));
}

/* FILL and REDUCE split the same way, with their own units. */
TEST_F(split, fill_and_reduce)
{
	float *a = (float *)self->big.map, *b = a + BIG / 4, *d = b + BIG / 4;
	struct drm_vaccel_packet p;
	uint64_t i, n = BIG / 4;
	long long splits = dev_stat("splits");

	p = pkt(DRM_VACCEL_PKT_FILL, BIG_VA + BIG, BIG, 0x40000000, 0);	/* 2.0f */
	p.arg = 4;
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	for (i = 0; i < n; i++)
		a[i] = (float)(i % 1000);
	ASSERT_TRUE(drain(&self->q, 60000));
	EXPECT_EQ(splits + 1, dev_stat("splits"));
	p = pkt(DRM_VACCEL_PKT_REDUCE, BIG_VA, BIG_VA + BIG, BIG_VA + 2 * BIG, n);
	p.arg = DRM_VACCEL_DTYPE_F32 | DRM_VACCEL_REDOP_PROD << 8;
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	ASSERT_TRUE(drain(&self->q, 60000));
	EXPECT_EQ(splits + 2, dev_stat("splits"));
	for (i = 0; i < n; i++)
		ASSERT_EQ((float)(i % 1000) * 2.0f, d[i]) TH_LOG("element %llu",
								 (unsigned long long)i);
	EXPECT_LE(splits + 2, dev_stat("splits"));
}

/*
 * The source's mapping ends 20 MiB in: the queue faults UNMAPPED at that
 * exact address, the first failing byte, whichever engine found it.
 */
TEST_F(split, fault_names_the_first_failing_byte)
{
	struct drm_vaccel_packet p;

	ASSERT_EQ(0, vaccel_vm_unbind(self->fd, BIG_VA, 3 * BIG));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->big.handle, VM_RW, 0, BIG_VA, 20ull << 20));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->big.handle, VM_RW, BIG, BIG_VA + BIG, BIG));
	p = pkt(DRM_VACCEL_PKT_COPY, BIG_VA, BIG_VA + BIG, BIG, 0);
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	EXPECT_FALSE(drain(&self->q, 60000));
	EXPECT_EQ(DRM_VACCEL_FAULT_UNMAPPED, self->q.ctrl->fault);
	EXPECT_EQ(BIG_VA + (20ull << 20), self->q.ctrl->fault_addr);
	EXPECT_EQ(0, self->q.ctrl->fault_index);
}

/* One engine: nothing to split with. */
TEST_F(split, single_engine_does_not_split)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_COPY, BIG_VA, BIG_VA + BIG, BIG, 0);
	char spec[64];

	close(self->fd);
	snprintf(spec, sizeof(spec), "%u engines=1", ID);
	ASSERT_EQ(0, vaccel_fresh_device(ID, spec));
	self->fd = vaccel_open(ID);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bo_new(self->fd, RING_N * 64, 0, &self->ring));
	ASSERT_EQ(0, bo_new(self->fd, 2 * BIG, 0, &self->big));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA,
				    PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->big.handle, VM_RW, 0, BIG_VA, 2 * BIG));
	ASSERT_EQ(0, queue_new(self->fd, RING_VA, RING_N, (void *)self->ring.map, &self->q));
	fill_pattern(self->big.map, BIG, 3);
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	ASSERT_TRUE(drain(&self->q, 60000));
	EXPECT_EQ(0, memcmp(self->big.map, self->big.map + BIG, BIG));
	EXPECT_EQ(0, dev_stat("splits"));
}

/*
 * Destroying a queue, or ending the process that holds its file, while
 * other engines run its ranges waits for them and frees everything.
 */
TEST_F(split, teardown_during_split)
{
	long queues = vaccel_objects("queues"), files = vaccel_objects("files");
	long bos = vaccel_objects("bos");
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_COPY, BIG_VA, BIG_VA + BIG, BIG, 0);
		struct drm_vaccel_queue_destroy d;
		struct bo ring, big;
		int fd = vaccel_open(ID), i;
		struct q q;

		CHILD_ASSERT(fd >= 0);
		CHILD_ASSERT(!bo_new(fd, RING_N * 64, 0, &ring) && !bo_new(fd, 2 * BIG, 0, &big));
		CHILD_ASSERT(!vaccel_vm_bind(fd, ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA, PAGE));
		CHILD_ASSERT(!vaccel_vm_bind(fd, big.handle, VM_RW, 0, BIG_VA, 2 * BIG));
		CHILD_ASSERT(!queue_new(fd, RING_VA, RING_N, (void *)ring.map, &q));
		for (i = 0; i < 4; i++)
			CHILD_ASSERT(!submit(fd, &q, &p, NULL));
		usleep(5000);
		d.queue_id = q.id;
		d.pad = 0;
		CHILD_ASSERT(!ioctl(fd, DRM_IOCTL_VACCEL_QUEUE_DESTROY, &d));
		CHILD_ASSERT(!queue_new(fd, RING_VA, RING_N, (void *)ring.map, &q));
		for (i = 0; i < 4; i++)
			CHILD_ASSERT(!submit(fd, &q, &p, NULL));
		usleep(5000);
		_exit(0);	/* with copies in flight */
	}
	ASSERT_EQ(0, vaccel_wait_child(pid));
	EXPECT_EQ(queues, vaccel_objects_wait("queues", queues, 10000));
	EXPECT_EQ(files, vaccel_objects_wait("files", files, 10000));
	EXPECT_EQ(bos, vaccel_objects_wait("bos", bos, 10000));
}

/*
 * Two engines, and a context with a ring, a signal page and two 8 MiB
 * objects bound at BIG_VA (source) and BIG_VA + BIG (destination), the
 * source filled. Sets *@engine to the engine running the queue.
 */
struct pair2 {
	int fd;
	struct bo ring, sig, src, dst;
	struct q q;
	unsigned int engine;
};

#define SMALL	(8ull << 20)

static int pair2_new(struct pair2 *c)
{
	char spec[64], buf[4096];
	unsigned int ctx, id;
	int ret;

	snprintf(spec, sizeof(spec), "%u engines=2", ID);
	ret = vaccel_fresh_device(ID, spec);
	if (ret)
		return ret;
	c->fd = vaccel_open(ID);
	if (c->fd < 0)
		return c->fd;
	ret = bo_new(c->fd, RING_N * 64, 0, &c->ring);
	ret = ret ?: bo_new(c->fd, PAGE, DRM_VACCEL_BO_SIGNAL, &c->sig);
	ret = ret ?: bo_new(c->fd, SMALL, 0, &c->src);
	ret = ret ?: bo_new(c->fd, SMALL, 0, &c->dst);
	ret = ret ?: vaccel_vm_bind(c->fd, c->ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA, PAGE);
	ret = ret ?: vaccel_vm_bind(c->fd, c->sig.handle, VM_RW, 0, SIG_VA, PAGE);
	ret = ret ?: vaccel_vm_bind(c->fd, c->src.handle, VM_RW, 0, BIG_VA, SMALL);
	ret = ret ?: vaccel_vm_bind(c->fd, c->dst.handle, VM_RW, 0, BIG_VA + BIG, SMALL);
	ret = ret ?: queue_new(c->fd, RING_VA, RING_N, (void *)c->ring.map, &c->q);
	if (ret)
		return ret;
	fill_pattern(c->src.map, SMALL, 7);
	if (vaccel_dev_debugfs(ID, "queues", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "engine %u ctx %u queue %u", &c->engine, &ctx, &id) != 3)
		return -EIO;
	return 0;
}

/* Unmap everything (mappings hold the file), close, delete the device. */
static void pair2_free(struct pair2 *c)
{
	munmap(c->ring.map, c->ring.size);
	munmap(c->sig.map, c->sig.size);
	munmap(c->src.map, c->src.size);
	munmap(c->dst.map, c->dst.size);
	munmap((void *)c->q.doorbell, PAGE);
	munmap((void *)c->q.ctrl, PAGE);
	close(c->fd);
	vaccel_del_device(ID);
}

/* CPU time (utime + stime, clock ticks) of engine thread vaccel<ID>/<e>. */
static long long engine_cpu_ticks(unsigned int e)
{
	char want[32], path[300], buf[1024], *p;
	unsigned long long ut, st;
	struct dirent *d;
	long long ret = -1;
	DIR *dir;

	snprintf(want, sizeof(want), "vaccel%u/%u\n", ID, e);
	dir = opendir("/proc");
	if (!dir)
		return -1;
	while (ret < 0 && (d = readdir(dir))) {
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		if (vaccel_read_file(path, buf, sizeof(buf)) <= 0 || strcmp(buf, want))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		if (vaccel_read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		p = strrchr(buf, ')');	/* fields 14 and 15 follow "(comm) S" */
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
				&ut, &st) == 2)
			ret = ut + st;
	}
	closedir(dir);
	return ret;
}

/* Arm debugfs split_stall: engine @e's next range outside its turns. */
static int split_stall(unsigned int e, unsigned long long ns)
{
	char line[64];

	snprintf(line, sizeof(line), "%u %llu", e, ns);
	return vaccel_dev_debugfs_write(ID, "split_stall", line);
}

/* The stall still armed in debugfs split_stall (0 once taken), or -1. */
static long long split_stall_left(void)
{
	unsigned long long ns;
	char line[64];
	unsigned int e;

	if (vaccel_dev_debugfs(ID, "split_stall", line, sizeof(line)) <= 0 ||
	    sscanf(line, "%u %llu", &e, &ns) != 2)
		return -1;
	return ns;
}

/*
 * Hold the owner (its turns run no range: split_owner_yield) until a
 * helper took the armed split_stall, i.e. is stopped inside a range,
 * then let it go. True if a helper did within 5 s.
 */
static bool owner_held_until_helper_stalls(void)
{
	uint64_t end = now_ns() + 5000000000ull;
	bool taken;

	do {
		taken = !split_stall_left();
		if (!taken)
			usleep(1000);
	} while (!taken && now_ns() < end);
	vaccel_dev_debugfs_write(ID, "split_owner_yield", "0");
	return taken;
}

struct unbind_later {
	int fd;
	uint64_t va, size;
	unsigned int ms;
	int ret;
};

static void *unbind_later(void *arg)
{
	struct unbind_later *u = arg;

	vaccel_msleep(u->ms);
	u->ret = vaccel_vm_unbind(u->fd, u->va, u->size);
	return NULL;
}

/*
 * An engine never runs ranges of its own queue's job outside its turn:
 * there it would translate through the queue's cache without the engine
 * lock, and an unbind meanwhile would free the mapping it writes through.
 * The other engine is stalled, so only the owner can run ranges; its
 * turns on the job are made to run none for a while (split_owner_yield,
 * as turns preempted past their end), so it has nothing else to do; a
 * range run outside the owner's turn would stop for 300 ms once its
 * destination is mapped (split_stall), and the destination is unbound
 * 100 ms after the submission. The copy completes with every byte from
 * the owner's turns alone: no self-help, the stall never taken. (The old
 * owner helped itself, and wrote into the unmapped destination: an oops.)
 */
TEST(owner_never_helps_its_own_job)
{
	struct unbind_later u = { .va = BIG_VA + BIG, .size = SMALL, .ms = 100 };
	struct drm_vaccel_packet p;
	struct pair2 c;
	pthread_t t;
	char line[64];

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, pair2_new(&c));
	snprintf(line, sizeof(line), "%u 3000000000", 1 - c.engine);
	ASSERT_EQ(0, vaccel_dev_debugfs_write(ID, "stall_engine", line));
	ASSERT_EQ(0, vaccel_dev_debugfs_write(ID, "split_owner_yield", "64"));
	ASSERT_EQ(0, split_stall(c.engine, 300000000));
	u.fd = c.fd;
	p = pkt(DRM_VACCEL_PKT_COPY, BIG_VA, BIG_VA + BIG, SMALL, 0);
	ASSERT_EQ(0, submit(c.fd, &c.q, &p, NULL));
	ASSERT_EQ(0, pthread_create(&t, NULL, unbind_later, &u));
	EXPECT_TRUE(drain(&c.q, 10000)) TH_LOG("state %u fault %u", c.q.ctrl->state,
					       c.q.ctrl->fault);
	pthread_join(t, NULL);
	EXPECT_EQ(0, u.ret);
	EXPECT_EQ(0, memcmp(c.src.map, c.dst.map, SMALL));
	EXPECT_EQ(1, vaccel_dev_stat(ID, "stats", "splits"));
	EXPECT_EQ(0, vaccel_dev_stat(ID, "stats", "split_self_helps"));
	EXPECT_EQ(0, vaccel_dev_stat(ID, "stats", "split_helps"));
	EXPECT_EQ(300000000, split_stall_left());
	snprintf(line, sizeof(line), "%u 0", 1 - c.engine);
	EXPECT_EQ(0, vaccel_dev_debugfs_write(ID, "stall_engine", line));
	pair2_free(&c);
}

/*
 * The owner of a split job sleeps while a helper finishes a range: the
 * helper holds its range for 1 s (split_stall) and the owner, its own
 * ranges done, must not spin meanwhile (the old owner polled its job for
 * the whole second). Its thread's CPU time over the copy stays below a
 * third of the stall, and the copy is whole. The owner runs no range until
 * a helper is inside one (split_owner_yield), so a helper surely is.
 */
TEST(owner_sleeps_while_a_helper_finishes)
{
	struct drm_vaccel_signal_cond k;
	struct drm_vaccel_packet p;
	long long cpu0, cpu1, helps;
	uint64_t t0, t1;
	struct pair2 c;
	long hz = sysconf(_SC_CLK_TCK);

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, pair2_new(&c));
	ASSERT_EQ(0, split_stall(1 - c.engine, 1000000000));
	ASSERT_EQ(0, vaccel_dev_debugfs_write(ID, "split_owner_yield", "1000000000"));
	cpu0 = engine_cpu_ticks(c.engine);
	ASSERT_LE(0, cpu0);
	t0 = now_ns();
	p = completing(pkt(DRM_VACCEL_PKT_COPY, BIG_VA, BIG_VA + BIG, SMALL, 0), SIG_VA,
		       DRM_VACCEL_SIGNAL_SET, 1);
	p.header |= DRM_VACCEL_PKT_IRQ;
	ASSERT_EQ(0, submit(c.fd, &c.q, &p, NULL));
	ASSERT_TRUE(owner_held_until_helper_stalls());
	k = cond(c.sig.handle, 0, 1, DRM_VACCEL_WAIT_GE);
	ASSERT_EQ(0, sig_wait(c.fd, &k, 1, 0, 20000, NULL));
	t1 = now_ns();
	cpu1 = engine_cpu_ticks(c.engine);
	helps = vaccel_dev_stat(ID, "stats", "split_helps");
	/* a helper ran a range and took the stall */
	ASSERT_EQ(0, split_stall_left()) TH_LOG("no helper took the stall");
	ASSERT_LE(1, helps);
	EXPECT_LE(1000000000ull, t1 - t0);
	TH_LOG("owner engine %u: %lld ms of CPU over %llu ms", c.engine,
	       (cpu1 - cpu0) * 1000 / hz, (unsigned long long)(t1 - t0) / 1000000);
	EXPECT_LT((cpu1 - cpu0) * 1000 / hz, 333);
	EXPECT_EQ(0, memcmp(c.src.map, c.dst.map, SMALL));
	pair2_free(&c);
}

/*
 * A helper holding a range keeps its mappings: the destination unbound
 * 100 ms after a helper stopped inside its range (split_stall, the
 * owner held until then) stays mapped for it, so it writes into pages
 * still pinned (KASAN on the debug kernel would see anything else), and
 * the queue completes or faults on the unbound range afterwards; nothing
 * leaks.
 */
TEST(unbind_under_a_helpers_range)
{
	struct unbind_later u = { .va = BIG_VA + BIG, .size = SMALL, .ms = 100 };
	long maps = vaccel_objects("mappings");
	struct drm_vaccel_packet p;
	struct pair2 c;
	pthread_t t;

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, pair2_new(&c));
	ASSERT_EQ(0, split_stall(1 - c.engine, 300000000));
	ASSERT_EQ(0, vaccel_dev_debugfs_write(ID, "split_owner_yield", "1000000000"));
	u.fd = c.fd;
	p = pkt(DRM_VACCEL_PKT_COPY, BIG_VA, BIG_VA + BIG, SMALL, 0);
	ASSERT_EQ(0, submit(c.fd, &c.q, &p, NULL));
	ASSERT_TRUE(owner_held_until_helper_stalls());
	ASSERT_EQ(0, pthread_create(&t, NULL, unbind_later, &u));
	pthread_join(t, NULL);
	EXPECT_EQ(0, u.ret);
	if (!drain(&c.q, 10000)) {
		EXPECT_EQ(DRM_VACCEL_QUEUE_ERROR, c.q.ctrl->state);
		EXPECT_EQ(DRM_VACCEL_FAULT_UNMAPPED, c.q.ctrl->fault);
	}
	EXPECT_EQ(0, split_stall_left()) TH_LOG("no helper took the stall");
	EXPECT_EQ(0, vaccel_dev_stat(ID, "stats", "split_self_helps"));
	pair2_free(&c);
	EXPECT_EQ(maps, vaccel_objects_wait("mappings", maps, 10000));
}

/*
 * The ranges other engines run of a client's split packet are the
 * client's engine time too (fdinfo drm-engine-compute): a helper holding
 * its range for 500 ms (split_stall) is credited to the client, and the
 * copy is credited no more than its elapsed time on two engines. The
 * owner runs no range until a helper is inside one. (Helpers were never
 * credited: the client saw its own engine's turns only.)
 */
TEST(fdinfo_credits_split_helpers)
{
	struct drm_vaccel_signal_cond k;
	struct drm_vaccel_packet p;
	long long before, after;
	uint64_t t0, t1;
	struct pair2 c;

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, pair2_new(&c));
	ASSERT_EQ(0, split_stall(1 - c.engine, 500000000));
	ASSERT_EQ(0, vaccel_dev_debugfs_write(ID, "split_owner_yield", "1000000000"));
	before = engine_ns(c.fd);
	t0 = now_ns();
	p = completing(pkt(DRM_VACCEL_PKT_COPY, BIG_VA, BIG_VA + BIG, SMALL, 0), SIG_VA,
		       DRM_VACCEL_SIGNAL_SET, 1);
	p.header |= DRM_VACCEL_PKT_IRQ;
	ASSERT_EQ(0, submit(c.fd, &c.q, &p, NULL));
	ASSERT_TRUE(owner_held_until_helper_stalls());
	k = cond(c.sig.handle, 0, 1, DRM_VACCEL_WAIT_GE);
	ASSERT_EQ(0, sig_wait(c.fd, &k, 1, 0, 20000, NULL));
	after = engine_ns(c.fd);
	t1 = now_ns();
	TH_LOG("%lld ms credited over %llu ms", (after - before) / 1000000,
	       (unsigned long long)(t1 - t0) / 1000000);
	EXPECT_LE(450000000, after - before);
	EXPECT_LE(after - before, 2 * (long long)(t1 - t0));
	pair2_free(&c);
}

/* debugfs split_stall takes "ENGINE NS": bad input is -EINVAL. */
TEST(split_stall_knob_input)
{
	char spec[64];

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	snprintf(spec, sizeof(spec), "%u engines=2", ID);
	ASSERT_EQ(0, vaccel_fresh_device(ID, spec));
	EXPECT_EQ(-EINVAL, vaccel_dev_debugfs_write(ID, "split_stall", "x"));
	EXPECT_EQ(-EINVAL, vaccel_dev_debugfs_write(ID, "split_stall", "1"));
	EXPECT_EQ(-EINVAL, vaccel_dev_debugfs_write(ID, "split_stall", "2 1000"));
	EXPECT_EQ(-EINVAL, vaccel_dev_debugfs_write(ID, "split_stall", "0 10000000001"));
	EXPECT_EQ(0, split_stall(1, 10000000000ull));
	EXPECT_EQ(10000000000ll, split_stall_left());
	EXPECT_EQ(0, split_stall(1, 0));
	EXPECT_EQ(0, split_stall_left());
	vaccel_del_device(ID);
}

TEST_HARNESS_MAIN
