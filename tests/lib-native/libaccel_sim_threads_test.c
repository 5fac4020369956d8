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
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "internal.h"
#include "sim/sim.h"
#include "sim/sim_internal.h"
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
		if (!ret) {
			/* its own errno: -ENODEV when the removal comes during it */
			int n = accel_queue_submit(q);

			ret = n < 0 ? n : 0;
		}
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

/* ---- fd numbers reused under KICKs and SIGNAL_WRITEs (the fd table's lock-free reads) ---- */

struct fd_churn {
	int stable;		/* a file with a queue and a signal object */
	uint32_t queue, handle;
	atomic_int number;	/* the number the churner uses now */
	atomic_int stop;
	/*
	 * Held for reading around the calls on the churned number, for writing
	 * around the churner's close and open: a call on a number another
	 * thread closes at the same moment is a race of the program (TSan
	 * reports it in the fstat() of a number not in the fd table);
	 * libaccel_sim_test's fd_table_under_concurrent_reuse runs that one
	 * under ASan. The calls on the stable fd take no lock: they read the
	 * fd table while the churner changes it.
	 */
	pthread_rwlock_t churn;
	atomic_uint calls, bad, stable_bad;
	atomic_int last_bad;
};

/* KICK and SIGNAL_WRITE on the stable fd (0) and on the churned number (-EBADF or -ENOENT). */
static void *churn_kick_main(void *p)
{
	struct fd_churn *c = p;
	struct drm_vaccel_kick k = { .queue_id = c->queue };
	struct drm_vaccel_signal_write w = { .handle = c->handle, .op = DRM_VACCEL_SIGNAL_ADD,
					     .value = 1 };
	int r, n;

	while (!atomic_load(&c->stop)) {
		if (raw_ioctl(c->stable, DRM_IOCTL_VACCEL_KICK, &k) ||
		    raw_ioctl(c->stable, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &w))
			atomic_fetch_add(&c->stable_bad, 1);
		pthread_rwlock_rdlock(&c->churn);
		n = atomic_load(&c->number);
		r = raw_ioctl(n, DRM_IOCTL_VACCEL_KICK, &k);
		if (r != -EBADF && r != -ENOENT) {
			atomic_fetch_add(&c->bad, 1);
			atomic_store(&c->last_bad, r);
		}
		r = raw_ioctl(n, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &w);
		if (r != -EBADF && r != -ENOENT) {
			atomic_fetch_add(&c->bad, 1);
			atomic_store(&c->last_bad, r);
		}
		pthread_rwlock_unlock(&c->churn);
		atomic_fetch_add(&c->calls, 1);
	}
	return NULL;
}

/*
 * Two threads KICK and SIGNAL_WRITE on a stable fd while a third closes
 * and reopens numbers (the fd table changes under their lock-free reads),
 * and on the number the third reuses as another device's file (no queue,
 * no object: -ENOENT), a regular file or nothing (-EBADF): they never
 * reach the stable file's queue through it, and the stable fd always
 * works.
 */
TEST_F_TIMEOUT(bare, fd_numbers_reused_under_hot_ioctls, 300)
{
	struct fd_churn c = { 0 };
	struct raw_queue q;
	pthread_t t[2];
	unsigned int i;
	int fd, other;

	ASSERT_EQ(0, sim_setup("0 engines=1;1"));
	ASSERT_EQ(0, pthread_rwlock_init(&c.churn, NULL));
	c.stable = raw_open(0);
	ASSERT_LE(0, c.stable);
	ASSERT_EQ(0, raw_queue_create(c.stable, RAW_VA, 64, 0, &q));
	ASSERT_NE(NULL, raw_buffer(c.stable, 4096, DRM_VACCEL_BO_SIGNAL, RAW_VA + (4 << 20),
				   &c.handle));
	c.queue = q.id;
	fd = raw_open(1);
	ASSERT_LE(0, fd);
	atomic_store(&c.number, fd);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, churn_kick_main, &c));
	for (i = 0; i < 400; i++) {
		int n = atomic_load(&c.number);

		pthread_rwlock_wrlock(&c.churn);
		raw_close(n);
		if (i % 2) {
			other = memfd_create("not-a-device", MFD_CLOEXEC);
			if (other >= 0 && other != n) {
				dup2(other, n);
				close(other);
			}
			pthread_rwlock_unlock(&c.churn);
			usleep(100);
			pthread_rwlock_wrlock(&c.churn);
			close(n);
		}
		fd = raw_open(1);
		atomic_store(&c.number, fd);
		pthread_rwlock_unlock(&c.churn);
		ASSERT_LE(0, fd);
		usleep(100);
	}
	atomic_store(&c.stop, 1);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	TH_LOG("%u rounds of calls; %u unexpected (last %d)", atomic_load(&c.calls),
	       atomic_load(&c.bad), atomic_load(&c.last_bad));
	EXPECT_EQ(0, atomic_load(&c.bad));
	EXPECT_EQ(0, atomic_load(&c.stable_bad));
	EXPECT_LT(0, atomic_load(&c.calls));
	raw_close(atomic_load(&c.number));
	raw_close(c.stable);
	pthread_rwlock_destroy(&c.churn);
}

/* ---- SIGNAL_WRITE in a signal handler that interrupts a bucket section ---- */

struct handler_ring {
	int fd;
	uint32_t handle;
	pthread_t busy;
	atomic_int stop;
	atomic_uint woken;	/* rounds the waiter saw */
	int busy_ret, wait_ret;
	unsigned int busy_waits;
	atomic_uint handled;	/* handler runs */
	uint64_t *words;
};

static struct handler_ring *ring_of_handler;

/* SIGUSR1 on the busy thread: one more on the word at 0, from inside whatever it was doing. */
static void on_usr1_write(int sig)
{
	struct drm_vaccel_signal_write w = { .handle = ring_of_handler->handle,
					     .op = DRM_VACCEL_SIGNAL_ADD, .value = 1 };
	int saved = errno;

	(void)sig;
	raw_ioctl(ring_of_handler->fd, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &w);
	atomic_fetch_add(&ring_of_handler->handled, 1);
	errno = saved;
}

/*
 * In and out of the bucket sections of the handler's own word all the
 * time: waits on the word at 0 (as many conditions as a wait takes, each a
 * section to arm and one to disarm) for a value it never reaches, that
 * time out at once (the handler, taking that bucket's lock, would
 * deadlock).
 */
static void *ring_busy_main(void *p)
{
	struct handler_ring *h = p;
	struct drm_vaccel_signal_cond c[DRM_VACCEL_WAIT_MAX_ITEMS];
	struct drm_vaccel_wait_signals w = { .conds = (uintptr_t)c,
					     .count = DRM_VACCEL_WAIT_MAX_ITEMS };
	unsigned int i;
	int r;

	for (i = 0; i < DRM_VACCEL_WAIT_MAX_ITEMS; i++)
		c[i] = (struct drm_vaccel_signal_cond){ .handle = h->handle, .offset = 0,
							.cond = DRM_VACCEL_WAIT_GE,
							.value = 1ull << 62 };

	while (!atomic_load(&h->stop)) {
		w.timeout_ns = (int64_t)raw_now();
		r = raw_ioctl(h->fd, DRM_IOCTL_VACCEL_WAIT_SIGNALS, &w);
		if (r != -ETIME && !h->busy_ret)
			h->busy_ret = r;
		h->busy_waits++;
	}
	return NULL;
}

/* Sleeps on the word at 0 for each round: a lost (deferred, never drained) wake-up times out. */
static void *ring_wait_main(void *p)
{
	struct handler_ring *h = p;
	struct drm_vaccel_signal_cond c = { .handle = h->handle, .offset = 0,
					    .cond = DRM_VACCEL_WAIT_GE };
	struct drm_vaccel_wait_signals w = { .conds = (uintptr_t)&c, .count = 1 };
	unsigned int r;

	for (r = 1; !atomic_load(&h->stop); r++) {
		c.value = r;
		w.timeout_ns = (int64_t)(raw_now() + 20 * RAW_SEC);
		h->wait_ret = raw_ioctl(h->fd, DRM_IOCTL_VACCEL_WAIT_SIGNALS, &w);
		if (h->wait_ret)
			break;
		atomic_store(&h->woken, r);
	}
	return NULL;
}

#define HANDLER_ROUNDS		1000
#define HANDLER_ROUNDS_MAX	50000
#define HANDLER_DEFERRED	20

/*
 * SIGNAL_WRITE is async-signal-safe (Documentation/libaccel.rst,
 * accel_tg_abort()): a handler's write that interrupts its thread inside
 * a bucket section leaves the wake-up to that thread, which does it as it
 * leaves the section. Without that, the handler would take the bucket
 * lock its own thread holds (a deadlock: the waiter never wakes), or the
 * thread would have to block signals around every section (two system
 * calls each). Each round, one signal, and the waiter must wake within
 * 10 s; at least HANDLER_ROUNDS rounds, and more until HANDLER_DEFERRED
 * writes were deferred (a handler lands in a section by chance).
 */
TEST_F_TIMEOUT(bare, signal_write_in_handler_during_bucket_sections, 300)
{
	struct sigaction sa = { .sa_handler = on_usr1_write }, old;
	struct handler_ring h = { 0 };
	unsigned long deferred0;
	pthread_t waiter;
	unsigned int r;
	uint64_t end;

	ASSERT_EQ(0, sim_setup("0 engines=1"));
	h.fd = raw_open(0);
	ASSERT_LE(0, h.fd);
	h.words = raw_buffer(h.fd, 4096, DRM_VACCEL_BO_SIGNAL, RAW_VA, &h.handle);
	ASSERT_NE(NULL, h.words);
	ring_of_handler = &h;
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, &old));
	deferred0 = atomic_load(&sim_signal_deferred);
	ASSERT_EQ(0, pthread_create(&h.busy, NULL, ring_busy_main, &h));
	ASSERT_EQ(0, pthread_create(&waiter, NULL, ring_wait_main, &h));
	for (r = 1; r <= HANDLER_ROUNDS_MAX; r++) {
		if (r > HANDLER_ROUNDS &&
		    atomic_load(&sim_signal_deferred) - deferred0 >= HANDLER_DEFERRED)
			break;
		ASSERT_EQ(0, pthread_kill(h.busy, SIGUSR1));
		end = raw_now() + 10 * RAW_SEC;
		while (atomic_load(&h.woken) < r && raw_now() < end)
			usleep(20);
		ASSERT_LE(r, atomic_load(&h.woken)) {
			TH_LOG("round %u: the waiter was not woken (its wait: %d; %u handler runs, "
			       "word %llu, %lu deferred)", r, h.wait_ret, atomic_load(&h.handled),
			       (unsigned long long)__atomic_load_n(&h.words[0], __ATOMIC_ACQUIRE),
			       atomic_load(&sim_signal_deferred) - deferred0);
		}
	}
	atomic_store(&h.stop, 1);
	pthread_join(h.busy, NULL);
	/* the waiter's last wait: released by one more write */
	{
		struct drm_vaccel_signal_write w = { .handle = h.handle,
						     .op = DRM_VACCEL_SIGNAL_ADD, .value = 1 };

		ASSERT_EQ(0, raw_ioctl(h.fd, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &w));
	}
	pthread_join(waiter, NULL);
	sigaction(SIGUSR1, &old, NULL);
	TH_LOG("%u rounds, %u busy waits, %lu wake-ups deferred to the interrupted thread",
	       r - 1, h.busy_waits, atomic_load(&sim_signal_deferred) - deferred0);
	EXPECT_EQ(0, h.busy_ret);
	EXPECT_EQ(0, h.wait_ret);
	EXPECT_LE(HANDLER_DEFERRED, atomic_load(&sim_signal_deferred) - deferred0);
	raw_close(h.fd);
}

TEST_HARNESS_MAIN
