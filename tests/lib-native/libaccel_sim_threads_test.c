// SPDX-License-Identifier: MIT
/*
 * The in-process device under concurrency, built with ThreadSanitizer
 * over the whole stack (library, transport, engine threads): more threads
 * than cores must not livelock (the PTO runtime's simulator hung exactly
 * there), idle engines must not spin, an unbind racing with the engines
 * must not free memory in use, host waiters and signal writers must not
 * lose wake-ups, queues may come and go under KICKs, and a device may be
 * removed under submitting threads. Every test is bounded by the
 * harness's timeout, which fails it instead of hanging.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "internal.h"
#include "sim/sim.h"
#include "kselftest_harness.h"
#include "sim_raw.h"

#define RW	(DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE)

static uint64_t cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * RAW_SEC +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

/* ---- 4 devices x 4 engines + 4 submitting threads, on 2 cores ---- */

#define SUBMITTERS	4
#define ROUNDS		300

struct submitter {
	struct accel_device *devs[4];
	unsigned int index;
	int ret;
	unsigned int done;
};

/*
 * Each round: a FILL on the thread's own device, a COPY of it to the next
 * device's buffer (an import: the link between devices), an event on each,
 * a wait for both; every 16 rounds the bytes are checked.
 */
static void *submit_main(void *p)
{
	struct submitter *s = p;
	struct accel_device *mine = s->devs[s->index], *next = s->devs[(s->index + 1) % 4];
	struct accel_buffer *a = NULL, *b = NULL, *b_on_mine = NULL;
	struct accel_queue *qa = NULL, *qb = NULL;
	struct accel_event ev[2];
	unsigned int r, i;
	int fd = -1, ret;

	ret = accel_buffer_create(mine, 65536, ACCEL_BUFFER_HOST, &a);
	if (!ret)
		ret = accel_buffer_create(next, 65536, ACCEL_BUFFER_HOST, &b);
	if (!ret)
		ret = accel_buffer_export(b, 0, &fd);
	if (!ret)
		ret = accel_buffer_import(mine, fd, 0, &b_on_mine);
	if (fd >= 0)
		close(fd);
	if (!ret)
		ret = accel_queue_create(mine, NULL, &qa);
	if (!ret)
		ret = accel_queue_create(next, NULL, &qb);
	for (r = 0; !ret && r < ROUNDS; r++) {
		uint8_t v = (uint8_t)(r * 13 + s->index);

		accel_prep_fill(accel_queue_get_packet(qa), accel_buffer_va(a), 65536, v, 1);
		accel_prep_copy(accel_queue_get_packet(qa), accel_buffer_va(b_on_mine),
				accel_buffer_va(a), 65536);
		ret = accel_queue_record(qa, &ev[0]);
		if (!ret) {
			accel_prep_nop(accel_queue_get_packet(qb));
			ret = accel_queue_record(qb, &ev[1]);
		}
		if (!ret && accel_queue_submit(qa) < 0)
			ret = -EIO;
		if (!ret && accel_queue_submit(qb) < 0)
			ret = -EIO;
		if (!ret)
			ret = accel_events_wait(ev, 2, ACCEL_WAIT_ALL, 30 * (int64_t)RAW_SEC, NULL);
		if (!ret && !(r % 16)) {
			const uint8_t *host = accel_buffer_host(b);

			for (i = 0; i < 65536; i += 997)
				if (host[i] != v)
					ret = -EBADMSG;
		}
		if (!ret)
			s->done++;
	}
	accel_queue_destroy(qa);
	accel_queue_destroy(qb);
	accel_buffer_destroy(b_on_mine);
	accel_buffer_destroy(b);
	accel_buffer_destroy(a);
	s->ret = ret;
	return NULL;
}

FIXTURE(crowd) {
	struct accel_device *devs[4];
};

FIXTURE_SETUP(crowd)
{
	unsigned int i;

	/*
	 * A poll budget of a whole second: left alone, every idle engine would
	 * spin that long after each piece of work, 16 of them on this
	 * machine's cores, starving the submitters.
	 */
	ASSERT_EQ(0, sim_setup("0 poll_budget_ns=1000000000; 1 poll_budget_ns=1000000000; "
			       "2 poll_budget_ns=1000000000; 3 poll_budget_ns=1000000000"));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, accel_device_open(i, &self->devs[i]));
}

FIXTURE_TEARDOWN(crowd)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		accel_device_close(self->devs[i]);
}

/* 16 engine threads and 4 submitters on this machine's cores: all work completes. */
TEST_F_TIMEOUT(crowd, more_threads_than_cores_completes, 300)
{
	struct submitter s[SUBMITTERS];
	pthread_t t[SUBMITTERS];
	uint64_t t0, idle_cpu;
	unsigned int i;

	t0 = raw_now();
	for (i = 0; i < SUBMITTERS; i++) {
		s[i] = (struct submitter){ .index = i };
		memcpy(s[i].devs, self->devs, sizeof(s[i].devs));
		ASSERT_EQ(0, pthread_create(&t[i], NULL, submit_main, &s[i]));
	}
	for (i = 0; i < SUBMITTERS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, s[i].ret);
		EXPECT_EQ(ROUNDS, s[i].done);
	}
	TH_LOG("%u rounds x %u threads over 4 devices x 4 engines in %.2f s (%ld CPUs)",
	       ROUNDS, SUBMITTERS, (raw_now() - t0) / 1e9, sysconf(_SC_NPROCESSORS_ONLN));
	/* the 16 engines ran, and never more of them polled than the slots allow */
	{
		char buf[512];
		long long slots, max;

		ASSERT_LT(0, accel_device_debug_read(self->devs[0], "sim", buf, sizeof(buf)));
		slots = raw_kv(buf, "poller_slots");
		max = raw_kv(buf, "pollers_max");
		TH_LOG("engine threads %lld, poller slots %lld, at most %lld polled at once",
		       raw_kv(buf, "engine_threads"), slots, max);
		EXPECT_EQ(16, raw_kv(buf, "engine_threads"));
		EXPECT_LE(1, max);
		EXPECT_LE(max, slots);
		EXPECT_LE(slots, sysconf(_SC_NPROCESSORS_ONLN) > 2 ? sysconf(_SC_NPROCESSORS_ONLN) / 2
								    : 1);
	}
	/*
	 * and then quiet: once the poll budget has passed, 16 idle engines
	 * cost (almost) no CPU
	 */
	usleep(1200000);
	idle_cpu = cpu_ns();
	usleep(300000);
	idle_cpu = cpu_ns() - idle_cpu;
	TH_LOG("CPU while idle: %.1f ms in 300 ms", idle_cpu / 1e6);
	EXPECT_GT(30000000ull, idle_cpu);
}

/* The tests below need no setup: a fixture only for the harness's timeout. */
FIXTURE(bare) {
	int unused;
};

FIXTURE_SETUP(bare)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(bare)
{
}

/* ---- VM_UNBIND racing with the engines ---- */

struct unbinder {
	int fd;
	uint32_t handle;
	volatile int stop;
	unsigned int rounds;
};

static void *unbind_main(void *p)
{
	struct unbinder *u = p;

	while (!__atomic_load_n(&u->stop, __ATOMIC_ACQUIRE)) {
		if (!raw_unbind(u->fd, RAW_VA + (16 << 20), 4 << 20)) {
			usleep(50);
			raw_bind(u->fd, u->handle, DRM_VACCEL_VM_READ, RAW_VA + (16 << 20), 4 << 20, 0);
		}
		u->rounds++;
		/* now and then long enough for a whole copy */
		usleep(u->rounds % 4 ? 200 : 20000);
	}
	return NULL;
}

/*
 * COPYs of a 4 MiB source (split across the engines) while another thread
 * unbinds and rebinds it: each copy completes or faults UNMAPPED, and no
 * engine touches memory that was freed (TSan/ASan builds would say).
 */
TEST_F_TIMEOUT(bare, unbind_under_running_copies, 300)
{
	struct unbinder u = { 0 };
	struct drm_vaccel_packet p;
	struct raw_queue q;
	unsigned int ok = 0, faulted = 0, i;
	uint32_t hd;
	pthread_t t;
	uint64_t off;
	int fd;

	ASSERT_EQ(0, sim_setup("0 engines=4"));
	fd = raw_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, raw_bo(fd, 4 << 20, 0, &u.handle, &off));
	ASSERT_EQ(0, raw_bind(fd, u.handle, DRM_VACCEL_VM_READ, RAW_VA + (16 << 20), 4 << 20, 0));
	ASSERT_NE(NULL, raw_buffer(fd, 4 << 20, 0, RAW_VA + (32 << 20), &hd));
	/* the object itself goes as soon as its last mapping does */
	ASSERT_EQ(0, raw_close_bo(fd, u.handle));
	ASSERT_EQ(0, raw_bo(fd, 4 << 20, 0, &u.handle, &off));
	u.fd = fd;
	ASSERT_EQ(0, pthread_create(&t, NULL, unbind_main, &u));
	for (i = 0; i < 40; i++) {
		ASSERT_EQ(0, raw_queue_create(fd, RAW_VA + ((64ull + i) << 20), 64, 0, &q));
		accel_prep_copy(&p, RAW_VA + (32 << 20), RAW_VA + (16 << 20), 4 << 20);
		ASSERT_EQ(0, raw_submit(&q, &p));
		if (raw_drain(&q, 20 * RAW_SEC) == -EIO) {
			EXPECT_EQ(DRM_VACCEL_FAULT_UNMAPPED, q.ctrl->fault);
			faulted++;
		} else {
			ok++;
		}
		{
			struct drm_vaccel_queue_destroy d = { .queue_id = q.id };

			ASSERT_EQ(0, raw_ioctl(fd, DRM_IOCTL_VACCEL_QUEUE_DESTROY, &d));
		}
		raw_munmap(q.ring, 4096);
		raw_munmap(q.doorbell, 4096);
		raw_munmap((void *)q.ctrl, 4096);
		raw_unbind(fd, q.ring_va, 4096);
		raw_close_bo(fd, q.ring_handle);
	}
	__atomic_store_n(&u.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	TH_LOG("%u copies completed, %u faulted, %u unbinds", ok, faulted, u.rounds);
	EXPECT_EQ(40, ok + faulted);
	raw_close(fd);
}

/* ---- host waiters and signal writers ---- */

#define WAITERS	6
#define TARGET	300

struct sigwaiter {
	int fd;
	uint32_t handle;
	unsigned int index;
	int ret;
	unsigned int waits;
};

/* Wait for every value of the signal in turn (a lost wake-up would hang until the deadline). */
static void *sigwait_main(void *p)
{
	struct sigwaiter *w = p;
	struct drm_vaccel_signal_cond c = { .handle = w->handle, .cond = DRM_VACCEL_WAIT_GE,
					    .offset = 64 * (w->index % 2) };
	struct drm_vaccel_wait_signals ws = { .conds = (uintptr_t)&c, .count = 1 };
	uint64_t v;

	for (v = 1; v <= TARGET && !w->ret; v++) {
		c.value = v;
		ws.timeout_ns = (int64_t)(raw_now() + 30 * RAW_SEC);
		w->ret = raw_ioctl(w->fd, DRM_IOCTL_VACCEL_WAIT_SIGNALS, &ws);
		w->waits++;
	}
	return NULL;
}

/* Signal 0 raised by SIGNAL_WRITE, signal 1 by a queue's packets with IRQ. */
TEST_F_TIMEOUT(bare, no_lost_wakeups, 300)
{
	struct drm_vaccel_signal_write sw = { .op = DRM_VACCEL_SIGNAL_ADD, .value = 1 };
	struct sigwaiter w[WAITERS];
	struct drm_vaccel_packet p;
	pthread_t t[WAITERS];
	struct raw_queue q;
	uint32_t hs;
	unsigned int i, v;
	int fd;

	ASSERT_EQ(0, sim_setup("0 engines=2"));
	fd = raw_open(0);
	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, raw_buffer(fd, 4096, DRM_VACCEL_BO_SIGNAL, RAW_VA, &hs));
	ASSERT_EQ(0, raw_queue_create(fd, RAW_VA + (1 << 20), 1024, 0, &q));
	for (i = 0; i < WAITERS; i++) {
		w[i] = (struct sigwaiter){ .fd = fd, .handle = hs, .index = i };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, sigwait_main, &w[i]));
	}
	sw.handle = hs;
	for (v = 0; v < TARGET; v++) {
		ASSERT_EQ(0, raw_ioctl(fd, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &sw));
		accel_prep_signal(&p, RAW_VA + 64, DRM_VACCEL_SIGNAL_ADD, 1);
		accel_prep_irq(&p);
		ASSERT_EQ(0, raw_submit(&q, &p));
		if (!(v % 64))
			usleep(200);
	}
	for (i = 0; i < WAITERS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, w[i].ret);
		EXPECT_EQ(TARGET, w[i].waits);
	}
	raw_close(fd);
}

/* ---- queues coming and going under KICKs ---- */

struct kicker {
	int fd;
	volatile int stop;
	unsigned int kicks;
};

static void *kick_main(void *p)
{
	struct kicker *k = p;
	struct drm_vaccel_kick kk = { 0 };

	while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE)) {
		kk.queue_id = k->kicks % 4;
		raw_ioctl(k->fd, DRM_IOCTL_VACCEL_KICK, &kk);
		k->kicks++;
	}
	return NULL;
}

TEST_F_TIMEOUT(bare, queues_come_and_go_under_kicks, 300)
{
	struct kicker k = { 0 };
	struct drm_vaccel_packet p;
	struct raw_queue q;
	unsigned int i;
	pthread_t t;
	int fd;

	ASSERT_EQ(0, sim_setup("0 engines=2 poll_budget_ns=0"));
	fd = raw_open(0);
	ASSERT_LE(0, fd);
	k.fd = fd;
	ASSERT_EQ(0, pthread_create(&t, NULL, kick_main, &k));
	for (i = 0; i < 100; i++) {
		struct drm_vaccel_queue_destroy d;

		ASSERT_EQ(0, raw_queue_create(fd, RAW_VA + ((uint64_t)i << 20), 64, 0, &q));
		accel_prep_fill(&p, q.ring_va + 64 * 32, 64, i, 1);
		ASSERT_EQ(0, raw_submit(&q, &p));
		ASSERT_EQ(0, raw_drain(&q, 20 * RAW_SEC));
		d = (struct drm_vaccel_queue_destroy){ .queue_id = q.id };
		ASSERT_EQ(0, raw_ioctl(fd, DRM_IOCTL_VACCEL_QUEUE_DESTROY, &d));
		raw_munmap(q.doorbell, 4096);
		raw_munmap((void *)q.ctrl, 4096);
	}
	__atomic_store_n(&k.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	TH_LOG("%u kicks meanwhile", k.kicks);
	raw_close(fd);
}

/* ---- removal under submitting threads ---- */

struct busy_submitter {
	struct accel_device *dev;
	int ret;
	unsigned int rounds;
};

static void *busy_main(void *p)
{
	struct busy_submitter *b = p;
	struct accel_buffer *buf;
	struct accel_queue *q;
	struct accel_event ev;
	int ret;

	ret = accel_buffer_create(b->dev, 1 << 20, 0, &buf);
	if (!ret)
		ret = accel_queue_create(b->dev, NULL, &q);
	while (!ret) {
		accel_prep_fill(accel_queue_get_packet(q), accel_buffer_va(buf), 1 << 20, 1, 1);
		ret = accel_queue_record(q, &ev);
		if (!ret && accel_queue_submit(q) < 0)
			ret = -EIO;
		if (!ret)
			ret = accel_event_wait(&ev, 30 * (int64_t)RAW_SEC);
		b->rounds++;
	}
	b->ret = ret;
	return NULL;
}

TEST_F_TIMEOUT(bare, removal_under_submitters, 300)
{
	struct busy_submitter b[3];
	struct accel_device *dev;
	pthread_t t[3];
	unsigned int i;

	ASSERT_EQ(0, sim_setup("0 engines=2"));
	ASSERT_EQ(0, accel_device_open(0, &dev));
	for (i = 0; i < 3; i++) {
		b[i] = (struct busy_submitter){ .dev = dev };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, busy_main, &b[i]));
	}
	usleep(200000);
	ASSERT_EQ(0, accel_bus_del_device(0));
	for (i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(-ENODEV, b[i].ret);
		EXPECT_LT(0, b[i].rounds);
	}
	accel_device_close(dev);
	/* everything is gone: the device (its last file closed), objects, threads */
	{
		int fd;

		ASSERT_EQ(0, accel_bus_new_device("0"));
		fd = raw_open(0);
		EXPECT_EQ(1, raw_stat(fd, "objects", "devices"));
		EXPECT_EQ(0, raw_stat(fd, "objects", "bos"));
		EXPECT_EQ(0, raw_stat(fd, "objects", "queues"));
		EXPECT_EQ(0, raw_stat(fd, "objects", "mappings"));
		raw_close(fd);
	}
}

TEST_HARNESS_MAIN
