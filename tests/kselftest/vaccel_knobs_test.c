// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fault injection and observability: the debugfs knobs that fail the next
 * creations and binds, fault device accesses, force a queue fault, add
 * per-packet latency and stall an engine; and the queues, engines and
 * stats files. With one engine: how queues share it (WAIT, huge copies,
 * priority).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "vaccel_common.h"
#include "vaccel_queue_util.h"
#include "kselftest_harness.h"

#define ID	VACCEL_TEST_ID

FIXTURE(knob) {
	int fd;
	char dir[128];
	struct bo ring;
	struct q q;
};

static int knob_write(const char *dir, const char *name, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return vaccel_sysfs_write(path, val);
}

static uint64_t knob_read(const char *dir, const char *name)
{
	char path[256];
	uint64_t v = ~0ull;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	vaccel_read_u64(path, &v);
	return v;
}

FIXTURE_SETUP(knob)
{
	char spec[64];

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	snprintf(self->dir, sizeof(self->dir), ACCEL_DEBUGFS "/vaccel%u", ID);
	vaccel_del_device(ID);
	snprintf(spec, sizeof(spec), "%u engines=1", ID);
	ASSERT_EQ(0, vaccel_new_device(spec));
	if (access(self->dir, F_OK))
		SKIP(return, "debugfs is not mounted");
	self->fd = vaccel_open(ID);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bo_new(self->fd, RING_N * 64, 0, &self->ring));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA,
				    PAGE));
	ASSERT_EQ(0, queue_new(self->fd, RING_VA, RING_N, (void *)self->ring.map, &self->q));
}

FIXTURE_TEARDOWN(knob)
{
	if (!vaccel_present())
		return;
	close(self->fd);
	vaccel_del_device(ID);
}

TEST_F(knob, fail_next_creations)
{
	struct bo b;
	struct q q2;

	ASSERT_EQ(0, knob_write(self->dir, "fail_bo_create", "2"));
	EXPECT_EQ(-ENOMEM, bo_new(self->fd, PAGE, 0, &b));
	EXPECT_EQ(-ENOMEM, bo_new(self->fd, PAGE, 0, &b));
	EXPECT_EQ(0, knob_read(self->dir, "fail_bo_create"));
	ASSERT_EQ(0, bo_new(self->fd, PAGE, 0, &b));

	ASSERT_EQ(0, knob_write(self->dir, "fail_vm_bind", "1"));
	EXPECT_EQ(-ENOMEM, vaccel_vm_bind(self->fd, b.handle, DRM_VACCEL_VM_READ, 0, RING_VA + PAGE,
					  PAGE));
	EXPECT_EQ(0, vaccel_vm_bind(self->fd, b.handle, DRM_VACCEL_VM_READ, 0, RING_VA + PAGE,
				    PAGE));

	ASSERT_EQ(0, knob_write(self->dir, "fail_queue_create", "1"));
	EXPECT_EQ(-ENOMEM, queue_new(self->fd, RING_VA, RING_N, (void *)self->ring.map, &q2));
	EXPECT_EQ(0, queue_new(self->fd, RING_VA, RING_N, (void *)self->ring.map, &q2));
}

TEST_F(knob, fault_next_access)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);

	ASSERT_EQ(0, knob_write(self->dir, "fault_access", "1"));
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	EXPECT_FALSE(drain(&self->q, 10000));
	EXPECT_EQ(DRM_VACCEL_FAULT_INJECTED, self->q.ctrl->fault);
	EXPECT_EQ(0, knob_read(self->dir, "fault_access"));
}

TEST_F(knob, force_fault)
{
	char buf[4096], line[64];
	unsigned int ctx = ~0u, q, e;

	ASSERT_LT(0, vaccel_read_file(ACCEL_DEBUGFS "/vaccel900/queues", buf, sizeof(buf)));
	ASSERT_EQ(3, sscanf(buf, "engine %u ctx %u queue %u", &e, &ctx, &q));
	EXPECT_EQ(self->q.id, q);
	EXPECT_EQ(-EINVAL, knob_write(self->dir, "force_fault", "x"));
	EXPECT_EQ(-ENOENT, knob_write(self->dir, "force_fault", "99999 0"));
	EXPECT_EQ(-EINVAL, knob_write(self->dir, "force_fault", "0 4294967296"));
	snprintf(line, sizeof(line), "%u %u", ctx, q);
	ASSERT_EQ(0, knob_write(self->dir, "force_fault", line));
	EXPECT_EQ(DRM_VACCEL_QUEUE_ERROR, self->q.ctrl->state);
	EXPECT_EQ(DRM_VACCEL_FAULT_INJECTED, self->q.ctrl->fault);
	/* only running queues can be stopped */
	EXPECT_EQ(-ENOENT, knob_write(self->dir, "force_fault", line));
	ASSERT_LT(0, vaccel_read_file(ACCEL_DEBUGFS "/vaccel900/queues", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "state 1 "));
	EXPECT_NE(NULL, strstr(buf, "fault 10 "));
}

TEST_F(knob, packet_latency)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	uint64_t t0;
	int i;

	ASSERT_EQ(0, knob_write(self->dir, "packet_latency_ns", "20000000"));
	t0 = now_ns();
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	ASSERT_TRUE(drain(&self->q, 10000));
	EXPECT_LE(t0 + 100000000ull, now_ns());
	ASSERT_EQ(0, knob_write(self->dir, "packet_latency_ns", "0"));
}

TEST_F(knob, stall_engine)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	char buf[512];

	EXPECT_EQ(-EINVAL, knob_write(self->dir, "stall_engine", "1 1000"));	/* 1 engine */
	EXPECT_EQ(-EINVAL, knob_write(self->dir, "stall_engine", "0"));
	EXPECT_EQ(-EINVAL, knob_write(self->dir, "stall_engine", "0 60000000001"));
	ASSERT_EQ(0, knob_write(self->dir, "stall_engine", "0 400000000"));
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	/* a short stall ends by itself */
	EXPECT_TRUE(drain(&self->q, 10000));
	ASSERT_EQ(0, knob_write(self->dir, "stall_engine", "0 30000000000"));
	ASSERT_LT(0, vaccel_read_file(ACCEL_DEBUGFS "/vaccel900/engines", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "engine 0 queues 1 running 1 stalled 1"));
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	usleep(150000);
	EXPECT_EQ(1, self->q.ctrl->read_index);
	ASSERT_EQ(0, knob_write(self->dir, "stall_engine", "0 0"));
	EXPECT_TRUE(drain(&self->q, 10000));

	/* "0" ends a long stall at once */
	ASSERT_EQ(0, knob_write(self->dir, "stall_engine", "0 50000000000"));
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	usleep(100000);
	EXPECT_EQ(2, self->q.ctrl->read_index);
	ASSERT_EQ(0, knob_write(self->dir, "stall_engine", "0 0"));
	EXPECT_TRUE(drain(&self->q, 10000));
	ASSERT_LT(0, vaccel_read_file(ACCEL_DEBUGFS "/vaccel900/engines", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "stalled 0"));
}

TEST_F(knob, stats)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	unsigned long long packets = 0, kicks = 0;
	char buf[512], path[256];
	int i;

	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	ASSERT_TRUE(drain(&self->q, 10000));

	snprintf(path, sizeof(path), "%s/stats", self->dir);
	ASSERT_LT(0, vaccel_read_file(path, buf, sizeof(buf)));
	ASSERT_EQ(1, sscanf(buf, "packets %llu", &packets));
	EXPECT_LE(10, packets);
	ASSERT_NE(NULL, strstr(buf, "kicks "));
	sscanf(strstr(buf, "kicks "), "kicks %llu", &kicks);
	EXPECT_LE(1, kicks);	/* the new queue's first submission kicks */
	EXPECT_NE(NULL, strstr(buf, "bytes "));
	EXPECT_NE(NULL, strstr(buf, "faults 0\n"));
	EXPECT_NE(NULL, strstr(buf, "sleeps "));
	EXPECT_NE(NULL, strstr(buf, "wakeups "));
}

/*
 * One engine, two queues: a queue blocked in WAIT does not block the
 * engine, and a huge COPY on one queue does not starve the other (it runs
 * in bounded chunks and the engine takes turns).
 */
TEST_F(knob, one_engine_two_queues)
{
	const uint64_t big = 32ull << 20, big_va = RING_VA + (1ull << 30);
	struct drm_vaccel_packet p;
	struct bo sig, src, dst;
	struct q q2;
	int i;

	ASSERT_EQ(0, bo_new(self->fd, PAGE, DRM_VACCEL_BO_SIGNAL, &sig));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, sig.handle, VM_RW, 0, SIG_VA, PAGE));
	ASSERT_EQ(0, queue_new(self->fd, RING_VA + RING_N * 32, RING_N / 2,
			       (struct drm_vaccel_packet *)self->ring.map + RING_N / 2, &q2));
	self->q.ring = (struct drm_vaccel_packet *)self->ring.map;

	/* q blocks in WAIT; q2 on the same engine keeps completing */
	p = pkt(DRM_VACCEL_PKT_WAIT, SIG_VA, 1, 0, 0);
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	for (i = 0; i < 20; i++) {
		p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
		ASSERT_EQ(0, submit(self->fd, &q2, &p, NULL));
	}
	ASSERT_TRUE(drain(&q2, 10000));
	EXPECT_EQ(0, self->q.ctrl->read_index);
	((volatile uint64_t *)sig.map)[0] = 1;
	{
		struct drm_vaccel_kick k = { .queue_id = self->q.id };

		ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VACCEL_KICK, &k));
	}
	ASSERT_TRUE(drain(&self->q, 10000));

	/* four 32 MiB copies on q; q2's NOPs finish long before them */
	ASSERT_EQ(0, bo_new(self->fd, big, 0, &src));
	ASSERT_EQ(0, bo_new(self->fd, big, 0, &dst));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, src.handle, DRM_VACCEL_VM_READ, 0, big_va, big));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, dst.handle, DRM_VACCEL_VM_WRITE, 0,
				    big_va + big, big));
	for (i = 0; i < 4; i++) {
		p = pkt(DRM_VACCEL_PKT_COPY, big_va, big_va + big, big, 0);
		ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	}
	p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	ASSERT_EQ(0, submit(self->fd, &q2, &p, NULL));
	ASSERT_TRUE(drain(&q2, 10000));
	EXPECT_GT(self->q.wi, self->q.ctrl->read_index);	/* copies still running */
	ASSERT_TRUE(drain(&self->q, 60000));
}

/*
 * Priority weights an engine's turns: with a NORMAL and a HIGH queue both
 * full of work on one engine, HIGH runs 16x the steps per pass. Each queue
 * gets 32 replays of 1024 NOPs; when HIGH has finished its 32, NORMAL has
 * finished 2 (32 x 64 steps; an even split would be about 31), and it
 * still finishes all of them afterwards: weighted, not starved.
 */
TEST_F_TIMEOUT(knob, priority_weights_engine_turns, 120)
{
	enum { BODY = 1024, LAUNCHES = 32 };
	struct drm_vaccel_bo_seal seal = {};
	struct drm_vaccel_packet p;
	volatile uint64_t *s;
	struct bo ring2, sig, exec;
	char buf[1024];
	struct q hi;
	int i;

	ASSERT_EQ(0, bo_new(self->fd, RING_N * 64, 0, &ring2));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, ring2.handle, DRM_VACCEL_VM_READ, 0, RING_VA + PAGE,
				    PAGE));
	ASSERT_EQ(0, queue_new_prio(self->fd, RING_VA + PAGE, RING_N, (void *)ring2.map,
				    DRM_VACCEL_QUEUE_PRIORITY_HIGH, &hi));
	ASSERT_LT(0, vaccel_read_file(ACCEL_DEBUGFS "/vaccel900/queues", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "priority 0 "));
	EXPECT_NE(NULL, strstr(buf, "priority 2 "));
	ASSERT_EQ(0, bo_new(self->fd, PAGE, DRM_VACCEL_BO_SIGNAL, &sig));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, sig.handle, VM_RW, 0, SIG_VA, PAGE));
	s = (volatile uint64_t *)sig.map;
	ASSERT_EQ(0, bo_new(self->fd, BODY * 64, DRM_VACCEL_BO_PERSISTENT, &exec));
	memset(exec.map, 0, BODY * 64);		/* NOPs */
	ASSERT_EQ(0, munmap(exec.map, exec.size));
	seal.handle = exec.handle;
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VACCEL_BO_SEAL, &seal));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, exec.handle, DRM_VACCEL_VM_READ, 0, EXEC_VA,
				    BODY * 64));

	/* both queues are full before the engine runs either */
	ASSERT_EQ(0, knob_write(self->dir, "stall_engine", "0 30000000000"));
	for (i = 0; i < LAUNCHES; i++) {
		p = pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA, BODY, 0, 0);
		p.completion_addr = SIG_VA;
		p.completion_op = DRM_VACCEL_SIGNAL_ADD;
		p.completion_value = 1;
		ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
		p.completion_addr = SIG_VA + 64;
		ASSERT_EQ(0, submit(self->fd, &hi, &p, NULL));
	}
	/* HIGH's last packet snapshots NORMAL's count, on the engine itself */
	p = pkt(DRM_VACCEL_PKT_COPY, SIG_VA, SIG_VA + 128, 8, 0);
	ASSERT_EQ(0, submit(self->fd, &hi, &p, NULL));
	EXPECT_EQ(0, self->q.ctrl->read_index);	/* still stalled */
	ASSERT_EQ(0, knob_write(self->dir, "stall_engine", "0 0"));
	ASSERT_TRUE(drain(&hi, 60000));
	ASSERT_EQ(LAUNCHES, s[8]);
	TH_LOG("HIGH done: NORMAL had completed %llu of %d", (unsigned long long)s[16],
	       LAUNCHES);
	EXPECT_GE(3, s[16]);
	ASSERT_TRUE(drain(&self->q, 60000));
	EXPECT_EQ(LAUNCHES, s[0]);
	EXPECT_EQ(DRM_VACCEL_QUEUE_RUNNING, hi.ctrl->state);
}

/*
 * "reset": every running queue stops with RESET where it was (a blocked
 * WAIT, a stalled engine's untouched work), the stall ends, a host waiter
 * in WAIT_SIGNALS gets -EIO, and a queue created afterwards runs.
 */
TEST_F(knob, reset)
{
	struct drm_vaccel_signal_cond c = { .value = 1, .cond = DRM_VACCEL_WAIT_GE };
	struct drm_vaccel_wait_signals w = { .conds = (uintptr_t)&c, .count = 1 };
	struct drm_vaccel_packet p;
	char buf[1024], path[256];
	struct bo sig, ring3;
	struct q q2, q3;
	pid_t child;

	EXPECT_EQ(-EINVAL, knob_write(self->dir, "reset", "x"));
	EXPECT_EQ(-EINVAL, knob_write(self->dir, "reset", "0"));
	ASSERT_EQ(0, bo_new(self->fd, PAGE, DRM_VACCEL_BO_SIGNAL, &sig));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, sig.handle, VM_RW, 0, SIG_VA, PAGE));
	ASSERT_EQ(0, queue_new(self->fd, RING_VA + RING_N * 32, RING_N / 2,
			       (struct drm_vaccel_packet *)self->ring.map + RING_N / 2, &q2));

	/* q blocks in a WAIT, then the engine stalls with a NOP queued on q2 */
	p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	p = pkt(DRM_VACCEL_PKT_WAIT, SIG_VA, 1, 0, 0);
	ASSERT_EQ(0, submit(self->fd, &self->q, &p, NULL));
	ASSERT_TRUE(wait_blocked(ID, self->q.id, 30000));
	ASSERT_EQ(1, self->q.ctrl->read_index);
	ASSERT_EQ(0, knob_write(self->dir, "stall_engine", "0 30000000000"));
	p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	ASSERT_EQ(0, submit(self->fd, &q2, &p, NULL));

	/* a host waiter on the same context */
	c.handle = sig.handle;
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		w.timeout_ns = now_ns() + 20000000000ull;
		_exit(ioctl(self->fd, DRM_IOCTL_VACCEL_WAIT_SIGNALS, &w) == -1 &&
		      errno == EIO ? 0 : 1);
	}
	usleep(100000);
	ASSERT_EQ(0, knob_write(self->dir, "reset", "1"));
	EXPECT_EQ(0, vaccel_wait_child(child));

	EXPECT_EQ(DRM_VACCEL_QUEUE_ERROR, self->q.ctrl->state);
	EXPECT_EQ(DRM_VACCEL_FAULT_RESET, self->q.ctrl->fault);
	EXPECT_EQ(1, self->q.ctrl->fault_index);	/* the WAIT */
	EXPECT_EQ(DRM_VACCEL_QUEUE_ERROR, q2.ctrl->state);
	EXPECT_EQ(DRM_VACCEL_FAULT_RESET, q2.ctrl->fault);
	EXPECT_EQ(0, q2.ctrl->fault_index);		/* never ran */
	EXPECT_EQ(0, q2.ctrl->read_index);
	ASSERT_LT(0, vaccel_read_file(ACCEL_DEBUGFS "/vaccel900/engines", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "stalled 0"));
	snprintf(path, sizeof(path), "%s/stats", self->dir);
	ASSERT_LT(0, vaccel_read_file(path, buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "resets 1\n"));
	EXPECT_NE(NULL, strstr(buf, "faults 2\n"));

	/* a stopped queue stays stopped; a new one runs */
	ASSERT_EQ(0, bo_new(self->fd, RING_N * 64, 0, &ring3));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, ring3.handle, DRM_VACCEL_VM_READ, 0, RING_VA + PAGE,
				    PAGE));
	ASSERT_EQ(0, queue_new(self->fd, RING_VA + PAGE, RING_N, (void *)ring3.map, &q3));
	p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	ASSERT_EQ(0, submit(self->fd, &q3, &p, NULL));
	EXPECT_TRUE(drain(&q3, 10000));
	/* idle queues stop too, at their next packet */
	ASSERT_EQ(0, knob_write(self->dir, "reset", "1"));
	EXPECT_EQ(DRM_VACCEL_QUEUE_ERROR, q3.ctrl->state);
	EXPECT_EQ(DRM_VACCEL_FAULT_RESET, q3.ctrl->fault);
	EXPECT_EQ(1, q3.ctrl->fault_index);	/* after the NOP */
}

/*
 * Real work for the one engine: @n EXECs of a sealed body of 1024 FILLs of
 * 256 KiB each (256 MiB written per EXEC). DELAY would not do: it makes
 * its queue busy, not the engine, which then sleeps until it ends.
 */
static void busy_engine(struct __test_metadata *_metadata, int fd, struct q *q,
			unsigned int n)
{
	enum { BODY = 1024 };
	struct drm_vaccel_bo_seal seal = {};
	struct drm_vaccel_packet *body, p;
	struct bo exec, data;
	unsigned int i;

	ASSERT_EQ(0, bo_new(fd, DATA_SIZE, 0, &data));
	ASSERT_EQ(0, vaccel_vm_bind(fd, data.handle, VM_RW, 0, DATA_VA, DATA_SIZE));
	ASSERT_EQ(0, bo_new(fd, BODY * 64, DRM_VACCEL_BO_PERSISTENT, &exec));
	body = (struct drm_vaccel_packet *)exec.map;
	for (i = 0; i < BODY; i++) {
		body[i] = pkt(DRM_VACCEL_PKT_FILL, DATA_VA, DATA_SIZE, i & 0xff, 0);
		body[i].arg = 1;
	}
	ASSERT_EQ(0, munmap(exec.map, exec.size));
	seal.handle = exec.handle;
	ASSERT_EQ(0, ioctl(fd, DRM_IOCTL_VACCEL_BO_SEAL, &seal));
	ASSERT_EQ(0, vaccel_vm_bind(fd, exec.handle, DRM_VACCEL_VM_READ, 0, EXEC_VA,
				    BODY * 64));
	p = pkt(DRM_VACCEL_PKT_EXEC, EXEC_VA, BODY, 0, 0);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, submit(fd, q, &p, NULL));
}

/*
 * A busy engine never sleeps, so it must clear need_wakeup of a queue
 * created meanwhile on its first turn: else every submission to that
 * queue would KICK for nothing.
 */
TEST_F(knob, new_queue_on_busy_engine_needs_no_kick)
{
	struct drm_vaccel_packet p;
	struct bo ring2;
	struct q q2;
	bool kicked = false;
	uint64_t end;

	busy_engine(_metadata, self->fd, &self->q, 40);
	usleep(50000);
	ASSERT_GT(40, self->q.ctrl->read_index);
	ASSERT_EQ(0, bo_new(self->fd, RING_N * 64, 0, &ring2));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, ring2.handle, DRM_VACCEL_VM_READ, 0, RING_VA + PAGE,
				    PAGE));
	ASSERT_EQ(0, queue_new(self->fd, RING_VA + PAGE, RING_N, (void *)ring2.map, &q2));
	end = now_ns() + 1000000000ull;
	while (q2.ctrl->need_wakeup && now_ns() < end)
		usleep(1000);
	EXPECT_EQ(0, q2.ctrl->need_wakeup);
	p = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	ASSERT_EQ(0, submit(self->fd, &q2, &p, &kicked));
	EXPECT_FALSE(kicked);
	EXPECT_TRUE(drain(&q2, 10000));
	EXPECT_GT(40, self->q.ctrl->read_index);	/* the engine was busy throughout */
}

/*
 * The engine's lock is taken per turn and a turn is bounded in time, so
 * busy queues cannot hold up QUEUE_CREATE, QUEUE_DESTROY or close() of
 * another context: 8 HIGH queues full of 1 s DELAYs (about 80 s per pass
 * if the lock were held for a whole pass of 1024 steps each) and yet a
 * create and destroy on another file take well under a second. (The
 * busy queues go when the test process exits, each after its turn.)
 */
TEST_F_TIMEOUT(knob, busy_queues_do_not_hold_up_others, 120)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_DELAY, 1000000000, 0, 0, 0);
	uint64_t worst, close_ns = 0;
	struct bo rings;
	struct q q[8];
	int i, j;

	ASSERT_EQ(0, bo_new(self->fd, 8 * PAGE, 0, &rings));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, rings.handle, DRM_VACCEL_VM_READ, 0,
				    RING_VA + PAGE, 8 * PAGE));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, queue_new_prio(self->fd, RING_VA + (i + 1) * PAGE, RING_N,
					    (void *)(rings.map + i * PAGE),
					    DRM_VACCEL_QUEUE_PRIORITY_HIGH, &q[i]));
		for (j = 0; j < 8; j++)
			ASSERT_EQ(0, submit(self->fd, &q[i], &p, NULL));
	}
	usleep(100000);

	worst = control_plane_worst(ID, 5, &close_ns);
	TH_LOG("create + destroy beside 8 busy HIGH queues: worst %llu us, close %llu us",
	       (unsigned long long)(worst / 1000), (unsigned long long)(close_ns / 1000));
	EXPECT_NE(0, worst);
	EXPECT_GT(1000000000ull, worst);
	EXPECT_GT(1000000000ull, close_ns);
	for (i = 0; i < 8; i++)
		EXPECT_EQ(DRM_VACCEL_QUEUE_RUNNING, q[i].ctrl->state);
}

TEST_HARNESS_MAIN
