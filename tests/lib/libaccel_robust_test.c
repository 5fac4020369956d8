// SPDX-License-Identifier: GPL-2.0-only
/*
 * libaccel in the VM: what a 1.0 library owes its callers when things go
 * wrong or get shared. Fault domains (a fault ends only the waits that
 * depend on the faulted queue), aborting waits (also from a signal
 * handler), fork() (a child cannot touch the parent's objects), pollable
 * events, signals shared between processes and devices,
 * accel_device_open_fd(), the VA quarantine, a failed seal that changes
 * nothing, submit_packets() saying how much it published, and concurrent
 * imports of one signal page. Some tests look inside the library
 * (lib/internal.h: the internal wait and abort calls the task graph uses).
 * Built twice: linked with libaccel.a, and with ASan/UBSan over the
 * library's sources (libaccel_robust_asan_test).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/wait.h>

#include <accel/accel.h>

#include "../../lib/internal.h"
#include "kselftest_harness.h"
#include "libaccel_test.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define NO_LEAKS() EXPECT_EQ(0, __lsan_do_recoverable_leak_check())
#else
#define NO_LEAKS() do { } while (0)
#endif

#define ID_R	970
#define ID_S	971
#define UNBOUND	(1ull << 46)	/* inside the VA window, never bound by these tests */

static uint64_t ms_since(uint64_t t0)
{
	return vaccel_now_ms() - t0;
}

/* A DELAY of @ns, then an event recorded after it; submitted. */
static int delayed_event(struct accel_queue *q, uint64_t ns, struct accel_event *ev)
{
	struct drm_vaccel_packet *p = accel_queue_get_packet(q);
	int ret;

	if (!p)
		return -EAGAIN;
	accel_prep_delay(p, ns);
	ret = accel_queue_record(q, ev);
	if (!ret)
		ret = accel_queue_submit(q);
	return ret < 0 ? ret : 0;
}

/* One FILL of @bytes at @va on @q, synced: 0 or the fault code + 1000. */
static int fill_at(struct accel_queue *q, uint64_t va, uint64_t bytes, uint8_t v)
{
	struct accel_queue_fault f;
	struct drm_vaccel_packet *p = accel_queue_get_packet(q);
	int ret;

	if (!p)
		return -EAGAIN;
	accel_prep_fill(p, va, bytes, v, 1);
	ret = accel_queue_submit(q);
	if (ret < 0)
		return ret;
	ret = accel_queue_sync(q, 10 * SEC);
	if (ret == -EIO && accel_queue_status(q, &f, sizeof(f)) == -EIO)
		return 1000 + (int)f.code;
	return ret;
}

FIXTURE(dom) {
	struct accel_device *dev;
	struct vaccel_counts counts;
};

FIXTURE_SETUP(dom)
{
	self->dev = NULL;
	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, lib_counted_open(ID_R, "memory=64M engines=2", &self->counts, &self->dev));
}

FIXTURE_TEARDOWN(dom)
{
	if (!lib_present())
		return;
	accel_device_close(self->dev);
	lib_del_device(ID_R);
	lib_del_device(ID_S);
	EXPECT_LIB_COUNTS_BACK(&self->counts, 5000);
	NO_LEAKS();
}

/* ---- fault domains ---- */

/*
 * Queue b faults. Waits that depend on queue a (its events, its sync)
 * carry on; a wait on b's event fails with -EIO; a wait on a user signal
 * only times out.
 */
TEST_F(dom, fault_stays_in_its_queue)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 64 };
	struct accel_event eva, evb, evu;
	struct accel_queue *qa, *qb;
	struct accel_signal *sig;
	struct drm_vaccel_packet *p;
	uint64_t t0;

	ASSERT_EQ(0, accel_queue_create(self->dev, &qp, &qa));
	ASSERT_EQ(0, accel_queue_create(self->dev, &qp, &qb));
	ASSERT_EQ(0, accel_signal_create(self->dev, &sig));
	evu.signal = sig;
	evu.value = accel_signal_next(sig);
	ASSERT_EQ(0, delayed_event(qa, 300000000, &eva));	/* 300 ms */
	/* b: a bad packet, then an event that never comes */
	ASSERT_NE(NULL, p = accel_queue_get_packet(qb));
	accel_prep_fill(p, UNBOUND, 4096, 0, 1);
	ASSERT_EQ(0, accel_queue_record(qb, &evb));
	ASSERT_EQ(2, accel_queue_submit(qb));
	t0 = vaccel_now_ms();
	EXPECT_EQ(-EIO, accel_event_wait(&evb, 10 * SEC));
	EXPECT_LT(ms_since(t0), 5000);
	/* the kernel's WAIT_SIGNALS fails for the whole file: the library must not */
	EXPECT_EQ(0, accel_event_wait(&eva, 10 * SEC));
	EXPECT_EQ(-ETIMEDOUT, accel_event_wait(&evu, 50000000));
	EXPECT_EQ(0, accel_queue_sync(qa, 10 * SEC));
	ASSERT_EQ(0, delayed_event(qa, 1000000, &eva));
	EXPECT_EQ(0, accel_queue_sync(qa, 10 * SEC));
	EXPECT_EQ(0, accel_event_wait(&eva, 10 * SEC));
	EXPECT_EQ(-EIO, accel_queue_sync(qb, 10 * SEC));
	/* a's own fault still ends a's waits (now in slices), promptly */
	ASSERT_EQ(0, delayed_event(qa, 100000000, &eva));
	ASSERT_NE(NULL, p = accel_queue_get_packet(qa));
	accel_prep_fill(p, UNBOUND, 4096, 0, 1);
	ASSERT_EQ(0, accel_queue_record(qa, &eva));
	ASSERT_EQ(2, accel_queue_submit(qa));
	t0 = vaccel_now_ms();
	EXPECT_EQ(-EIO, accel_event_wait(&eva, 30 * SEC));
	EXPECT_LT(ms_since(t0), 5000);
	accel_signal_destroy(sig);
	accel_queue_destroy(qa);
	accel_queue_destroy(qb);
}

/* An event of another device's queue: its fault ends the wait, wherever it sleeps. */
TEST_F(dom, fault_of_another_device_queue)
{
	struct accel_event evs[2];
	struct accel_device *other;
	struct accel_signal *sig;
	struct drm_vaccel_packet *p;
	struct accel_queue *qo;
	uint64_t t0;

	ASSERT_EQ(0, lib_fresh_open(ID_S, "", &other));
	ASSERT_EQ(0, accel_signal_create(self->dev, &sig));
	ASSERT_EQ(0, accel_queue_create(other, NULL, &qo));
	evs[0].signal = sig;
	evs[0].value = accel_signal_next(sig);
	ASSERT_NE(NULL, p = accel_queue_get_packet(qo));
	accel_prep_delay(p, 200000000);
	ASSERT_NE(NULL, p = accel_queue_get_packet(qo));
	accel_prep_fill(p, UNBOUND, 4096, 0, 1);
	ASSERT_EQ(0, accel_queue_record(qo, &evs[1]));
	ASSERT_EQ(3, accel_queue_submit(qo));
	t0 = vaccel_now_ms();
	EXPECT_EQ(-EIO, accel_events_wait(evs, 2, 0, 20 * SEC, NULL));
	EXPECT_LT(ms_since(t0), 5000);
	accel_signal_destroy(sig);
	accel_device_close(other);
}

/* ---- aborting waits (the internal calls of accel_tg_abort()) ---- */

struct waiter {
	struct accel_queue *q;
	struct accel_event ev;
	struct acc_abort abort;
	int what;		/* 0 events, 1 reserve, 2 sync */
	int ret;
	uint64_t done_ms;
	pthread_t t;
};

static void *wait_main(void *arg)
{
	struct waiter *w = arg;
	int64_t deadline = acc_now_ns() + 30 * SEC;

	if (w->what == 0)
		w->ret = acc_wait_events(&w->ev, 1, false, deadline, NULL, 0, &w->abort, NULL);
	else if (w->what == 1)
		w->ret = acc_queue_reserve(w->q, 4, deadline, &w->abort);
	else
		w->ret = acc_queue_sync(w->q, deadline, &w->abort);
	w->done_ms = vaccel_now_ms();
	return NULL;
}

/* A queue whose ring is full behind a WAIT on @gate. */
static int fill_gated(struct accel_queue *q, struct accel_event *gate)
{
	struct drm_vaccel_packet *p;
	int ret = accel_queue_wait_event(q, gate);

	while (!ret && (p = accel_queue_get_packet(q)))
		accel_prep_nop(p);
	if (!ret)
		ret = accel_queue_submit(q);
	return ret < 0 ? ret : 0;
}

TEST_F(dom, abort_ends_sleeping_waits)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 16 };
	struct accel_signal *abort_sig, *never;
	struct accel_queue *q;
	struct accel_event gate;
	struct waiter w[3];
	uint64_t t_abort;
	int i;

	ASSERT_EQ(0, accel_signal_create(self->dev, &abort_sig));
	ASSERT_EQ(0, accel_signal_create(self->dev, &never));
	ASSERT_EQ(0, accel_queue_create(self->dev, &qp, &q));
	gate.signal = never;
	gate.value = accel_signal_next(never);
	ASSERT_EQ(0, fill_gated(q, &gate));
	for (i = 0; i < 3; i++) {
		w[i] = (struct waiter){ .q = q, .what = i, .ret = 1 };
		w[i].ev = gate;
		w[i].abort.sig = abort_sig;
		w[i].abort.value = accel_signal_read(abort_sig) + 1;
	}
	/* reserve and sync are the queue's producer's: one thread does both */
	ASSERT_EQ(0, pthread_create(&w[0].t, NULL, wait_main, &w[0]));
	ASSERT_EQ(0, pthread_create(&w[1].t, NULL, wait_main, &w[1]));
	vaccel_msleep(300);	/* both asleep in WAIT_SIGNALS */
	EXPECT_EQ(1, w[0].ret);
	EXPECT_EQ(1, w[1].ret);
	t_abort = vaccel_now_ms();
	ASSERT_EQ(0, acc_signal_write_raw(abort_sig, DRM_VACCEL_SIGNAL_MAX, w[0].abort.value));
	pthread_join(w[0].t, NULL);
	pthread_join(w[1].t, NULL);
	EXPECT_EQ(-ECANCELED, w[0].ret);
	EXPECT_EQ(-ECANCELED, w[1].ret);
	EXPECT_LT(w[0].done_ms - t_abort, 1000);
	EXPECT_LT(w[1].done_ms - t_abort, 1000);
	/* sync, with the next abort value */
	w[2].abort.value = accel_signal_read(abort_sig) + 1;
	ASSERT_EQ(0, pthread_create(&w[2].t, NULL, wait_main, &w[2]));
	vaccel_msleep(300);
	EXPECT_EQ(1, w[2].ret);
	t_abort = vaccel_now_ms();
	ASSERT_EQ(0, acc_signal_write_raw(abort_sig, DRM_VACCEL_SIGNAL_MAX, w[2].abort.value));
	pthread_join(w[2].t, NULL);
	EXPECT_EQ(-ECANCELED, w[2].ret);
	EXPECT_LT(w[2].done_ms - t_abort, 1000);
	/* an abort already reached: no sleep at all */
	EXPECT_EQ(-ECANCELED, acc_queue_sync(q, acc_now_ns() + 30 * SEC, &w[2].abort));
	ASSERT_EQ(0, accel_event_signal(&gate));
	EXPECT_EQ(0, accel_queue_sync(q, 10 * SEC));
	accel_queue_destroy(q);
	accel_signal_destroy(never);
	accel_signal_destroy(abort_sig);
}

/* The abort written from a signal handler, in the very thread that sleeps. */
static struct acc_abort handler_abort;

static void on_usr1(int sig)
{
	(void)sig;
	acc_signal_write_raw(handler_abort.sig, DRM_VACCEL_SIGNAL_MAX, handler_abort.value);
}

TEST_F(dom, abort_from_a_signal_handler)
{
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	struct accel_signal *abort_sig, *never;
	struct waiter w = { .what = 0, .ret = 1 };
	uint64_t t_abort;

	ASSERT_EQ(0, accel_signal_create(self->dev, &abort_sig));
	ASSERT_EQ(0, accel_signal_create(self->dev, &never));
	w.ev.signal = never;
	w.ev.value = accel_signal_next(never);
	w.abort.sig = abort_sig;
	w.abort.value = accel_signal_read(abort_sig) + 1;
	handler_abort = w.abort;
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, &old));	/* no SA_RESTART: the ioctl gets EINTR */
	ASSERT_EQ(0, pthread_create(&w.t, NULL, wait_main, &w));
	vaccel_msleep(300);
	EXPECT_EQ(1, w.ret);
	t_abort = vaccel_now_ms();
	pthread_kill(w.t, SIGUSR1);
	pthread_join(w.t, NULL);
	EXPECT_EQ(-ECANCELED, w.ret);
	EXPECT_LT(w.done_ms - t_abort, 1000);
	sigaction(SIGUSR1, &old, NULL);
	accel_signal_destroy(never);
	accel_signal_destroy(abort_sig);
}

/* ---- fork ---- */

static bool malloc_unsafe_after_fork(void);

/*
 * A child gets -ECHILD from every call on the parent's objects, and its
 * destroy/close calls free memory only: afterwards the parent's queue,
 * buffer, signal and kernel objects are all still there and working.
 */
TEST_F(dom, fork_child_cannot_touch_the_parent)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 64 };
	struct accel_buffer *buf, *b2;
	struct accel_signal *sig, *s2;
	struct accel_queue *q, *q2;
	struct accel_device *d2;
	struct accel_event ev;
	char path[300];
	long bos0, maps0;
	uint64_t used;
	void *map;
	pid_t pid;
	int fd;

	ASSERT_EQ(0, accel_buffer_create(self->dev, 65536, ACCEL_BUFFER_HOST, &buf));
	ASSERT_EQ(0, accel_signal_create(self->dev, &sig));
	ASSERT_EQ(0, accel_queue_create(self->dev, &qp, &q));
	ASSERT_EQ(0, fill_at(q, accel_buffer_va(buf), 65536, 0x21));
	ASSERT_EQ(0, lib_node_path(ID_R, path, sizeof(path)));
	bos0 = lib_objects("bos");
	ASSERT_LE(0, bos0) TH_LOG("the backend's object counters cannot be read");
	maps0 = lib_objects("mappings");
	ev.signal = sig;
	ev.value = accel_signal_next(sig);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_ASSERT(acc_dev_forked(self->dev));
		CHILD_EQ(-ECHILD, accel_buffer_create(self->dev, 4096, 0, &b2));
		CHILD_EQ(-ECHILD, accel_signal_create(self->dev, &s2));
		CHILD_EQ(-ECHILD, accel_queue_create(self->dev, NULL, &q2));
		CHILD_EQ(-ECHILD, accel_device_memory_used(self->dev, &used));
		CHILD_EQ(-ECHILD, accel_buffer_map(buf, &map));
		CHILD_EQ(-ECHILD, accel_buffer_export(buf, 0, &fd));
		CHILD_EQ(-ECHILD, accel_signal_write(sig, DRM_VACCEL_SIGNAL_MAX, ev.value));
		CHILD_EQ(-ECHILD, accel_event_signal(&ev));
		CHILD_EQ(-ECHILD, accel_event_wait(&ev, 1000000));
		CHILD_EQ(-ECHILD, accel_event_fd(&ev, &fd));
		CHILD_EQ(0, accel_event_done(&ev));
		CHILD_ASSERT(accel_queue_get_packet(q) == NULL);
		CHILD_EQ(-ECHILD, accel_queue_submit(q));
		CHILD_EQ(-ECHILD, accel_queue_reserve(q, 1, 0));
		CHILD_EQ(-ECHILD, accel_queue_sync(q, 1000000));
		CHILD_EQ(-ECHILD, accel_queue_record(q, &ev));
		CHILD_EQ(-ECHILD, accel_queue_wait_event(q, &ev));
		CHILD_EQ(-ECHILD, accel_queue_status(q, NULL, 0));
		/*
		 * a device of its own works as usual; not under an ASan
		 * runtime that leaves its allocator locked across fork():
		 * the parent's sim engine threads may hold those locks, and
		 * the child's engines then block in malloc (it timed out
		 * once, -ETIMEDOUT; see malloc_unsafe_after_fork()). It runs
		 * in the VM and under ThreadSanitizer.
		 */
		if (!malloc_unsafe_after_fork()) {
			CHILD_EQ(0, accel_device_open_path(path, &d2));
			CHILD_EQ(0, accel_queue_create(d2, &qp, &q2));
			CHILD_EQ(0, accel_buffer_create(d2, 4096, ACCEL_BUFFER_HOST, &b2));
			CHILD_EQ(0, fill_at(q2, accel_buffer_va(b2), 4096, 0x7e));
			CHILD_EQ(0x7e, ((unsigned char *)accel_buffer_host(b2))[4095]);
			accel_device_close(d2);
		}
		/* memory only: no ioctl reaches the parent's file */
		accel_buffer_destroy(buf);
		accel_signal_destroy(sig);
		accel_queue_destroy(q);
		accel_device_close(self->dev);
		_exit(0);
	}
	ASSERT_EQ(0, vaccel_wait_child(pid));
	/* the parent's objects are intact */
	EXPECT_EQ(bos0, lib_objects("bos"));
	EXPECT_EQ(maps0, lib_objects("mappings"));
	EXPECT_FALSE(acc_dev_forked(self->dev));
	EXPECT_EQ(0x21, ((unsigned char *)accel_buffer_host(buf))[65535]);
	EXPECT_EQ(0, fill_at(q, accel_buffer_va(buf), 65536, 0x22));
	EXPECT_EQ(0x22, ((unsigned char *)accel_buffer_host(buf))[0]);
	EXPECT_EQ(0, accel_event_signal(&ev));
	EXPECT_EQ(0, accel_event_wait(&ev, 10 * SEC));
	EXPECT_EQ(0, accel_device_memory_used(self->dev, &used));
	accel_queue_destroy(q);
	accel_signal_destroy(sig);
	accel_buffer_destroy(buf);
}

/* A thread of the parent busy on its device while the main thread forks. */
struct busy_arg {
	struct accel_device *dev;
	struct accel_queue *q;
	struct accel_signal *sig;
	atomic_bool stop;
	long rounds, errors;
};

static void *busy_main(void *arg)
{
	struct busy_arg *a = arg;
	struct accel_buffer *b;

	while (!atomic_load(&a->stop)) {
		if (accel_buffer_create(a->dev, 8192, ACCEL_BUFFER_HOST, &b)) {
			a->errors++;
			continue;
		}
		if (fill_at(a->q, accel_buffer_va(b), 8192, 0x5a) ||
		    accel_signal_write(a->sig, DRM_VACCEL_SIGNAL_ADD, 1))
			a->errors++;
		accel_buffer_destroy(b);
		a->rounds++;
	}
	return NULL;
}

/*
 * An AddressSanitizer runtime without a fork() interceptor (GCC 12's
 * libasan, clang 14's) does not take its allocator's locks around fork():
 * a child whose parent had another thread inside malloc() or free() at the
 * fork hangs in its own first allocation of that size class, inside ASan
 * (seen here: the child's engine threads stuck in ASan's thread start,
 * 1 run in 12 under load). Newer runtimes intercept fork() and take
 * them. Without a sanitizer, glibc's malloc takes its locks around fork().
 */
static bool malloc_unsafe_after_fork(void)
{
	bool asan = false;

#ifdef __SANITIZE_ADDRESS__
	asan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	asan = true;
#endif
#endif
	return asan && !dlsym(RTLD_DEFAULT, "__interceptor_fork") &&
	       !dlsym(RTLD_DEFAULT, "___interceptor_fork");
}

/*
 * fork() while another thread of the parent is inside the device's calls
 * (holding whatever locks they take): each child opens a device of its
 * own and uses it, without hanging on a lock the parent's thread held.
 * Run without a sanitizer (the VM's libaccel_robust_test) and under
 * ThreadSanitizer (tests/run-all), whose fork() interceptor keeps its
 * runtime usable in the child; skipped under an ASan runtime that cannot.
 */
TEST_F(dom, fork_while_another_thread_works)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 64 };
	struct busy_arg a = { .dev = self->dev };
	char path[300];
	pthread_t t;
	int i;

	if (malloc_unsafe_after_fork())
		SKIP(return, "this AddressSanitizer runtime does not lock its allocator around fork(); run under ThreadSanitizer and without a sanitizer");
	ASSERT_EQ(0, lib_node_path(ID_R, path, sizeof(path)));
	ASSERT_EQ(0, accel_queue_create(self->dev, &qp, &a.q));
	ASSERT_EQ(0, accel_signal_create(self->dev, &a.sig));
	ASSERT_EQ(0, pthread_create(&t, NULL, busy_main, &a));
	for (i = 0; i < 12; i++) {
		pid_t pid;

		vaccel_msleep(5);
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			struct accel_device *d;
			struct accel_buffer *b;
			struct accel_queue *q;

			alarm(20);	/* a lock copied held would hang here */
			CHILD_EQ(0, accel_device_open_path(path, &d));
			CHILD_EQ(0, accel_queue_create(d, &qp, &q));
			CHILD_EQ(0, accel_buffer_create(d, 8192, ACCEL_BUFFER_HOST, &b));
			CHILD_EQ(0, fill_at(q, accel_buffer_va(b), 8192, 0x11 + i));
			CHILD_EQ(0x11 + i, ((unsigned char *)accel_buffer_host(b))[8191]);
			accel_device_close(d);
			_exit(0);
		}
		EXPECT_EQ(0, vaccel_wait_child(pid)) TH_LOG("child %d", i);
	}
	atomic_store(&a.stop, true);
	pthread_join(t, NULL);
	EXPECT_EQ(0, a.errors);
	EXPECT_LT(0, a.rounds);
	accel_signal_destroy(a.sig);
	accel_queue_destroy(a.q);
}

/* ---- pollable events ---- */

static int readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms);
}

TEST_F(dom, event_fd_poll_and_epoll)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 64 };
	struct epoll_event e = { .events = EPOLLIN }, got;
	struct accel_queue *q, *qbad, *q2;
	struct accel_event ev, done, user, bad, later;
	struct accel_signal *sig;
	struct drm_vaccel_packet *p;
	uint64_t one;
	int fd, ep;

	ASSERT_EQ(0, accel_queue_create(self->dev, &qp, &q));
	ASSERT_EQ(0, accel_signal_create(self->dev, &sig));
	/* done already: readable at once */
	done.signal = sig;
	done.value = accel_signal_read(sig);
	ASSERT_EQ(0, accel_event_fd(&done, &fd));
	EXPECT_EQ(1, readable(fd, 0));
	close(fd);
	/* a queue's event: not before the device gets there; epoll */
	ASSERT_EQ(0, delayed_event(q, 400000000, &ev));
	ASSERT_EQ(0, accel_event_fd(&ev, &fd));
	EXPECT_EQ(0, readable(fd, 0));
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	EXPECT_EQ(1, epoll_wait(ep, &got, 1, 10000));
	EXPECT_EQ(8, read(fd, &one, 8));
	EXPECT_EQ(1, one);
	EXPECT_EQ(0, accel_event_wait(&ev, 0));
	close(ep);
	close(fd);
	/* a user signal raised by the host */
	user.signal = sig;
	user.value = accel_signal_next(sig);
	ASSERT_EQ(0, accel_event_fd(&user, &fd));
	EXPECT_EQ(0, readable(fd, 20));
	ASSERT_EQ(0, accel_event_signal(&user));
	EXPECT_EQ(1, readable(fd, 10000));
	close(fd);
	/* the event's queue faults: it fires, and the wait says why */
	ASSERT_EQ(0, accel_queue_create(self->dev, &qp, &qbad));
	ASSERT_NE(NULL, p = accel_queue_get_packet(qbad));
	accel_prep_delay(p, 100000000);
	ASSERT_NE(NULL, p = accel_queue_get_packet(qbad));
	accel_prep_fill(p, UNBOUND, 4096, 0, 1);
	ASSERT_EQ(0, accel_queue_record(qbad, &bad));
	ASSERT_EQ(0, accel_event_fd(&bad, &fd));
	ASSERT_EQ(3, accel_queue_submit(qbad));
	EXPECT_EQ(1, readable(fd, 10000));
	EXPECT_EQ(-EIO, accel_event_wait(&bad, 0));
	close(fd);
	/* after that fault, another queue's event fires when it is done, not before */
	ASSERT_EQ(0, accel_queue_create(self->dev, &qp, &q2));
	ASSERT_EQ(0, delayed_event(q2, 300000000, &later));
	ASSERT_EQ(0, accel_event_fd(&later, &fd));
	EXPECT_EQ(0, readable(fd, 50));
	EXPECT_EQ(1, readable(fd, 10000));
	EXPECT_EQ(0, accel_event_wait(&later, 0));
	close(fd);
	EXPECT_EQ(-EINVAL, accel_event_fd(NULL, &fd));
	EXPECT_EQ(-EINVAL, accel_event_fd(&later, NULL));
	accel_queue_destroy(q2);
	accel_queue_destroy(qbad);
	accel_queue_destroy(q);
	accel_signal_destroy(sig);
}

/* ---- signals shared between processes and devices ---- */

TEST_F(dom, signal_shared_with_a_child_process)
{
	struct accel_signal *sig, *bad;
	struct accel_buffer *plain;
	struct accel_event ev;
	uint64_t off, base;
	char path[300];
	pid_t pid;
	int fd, pfd;

	ASSERT_EQ(0, accel_signal_create(self->dev, &sig));
	ASSERT_EQ(0, accel_signal_export(sig, &fd, &off));
	ASSERT_EQ(0, lib_node_path(ID_R, path, sizeof(path)));
	base = accel_signal_read(sig);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 64 };
		struct accel_device *d;
		struct accel_signal *cs;
		struct accel_buffer *b;
		struct accel_queue *q;
		struct drm_vaccel_packet *p;
		struct accel_event cev;

		/* its own file of the same device: another context */
		CHILD_EQ(0, accel_device_open_path(path, &d));
		CHILD_EQ(0, accel_signal_import(d, fd, off, &cs));
		CHILD_EQ(base, accel_signal_read(cs));
		/* the parent raises base + 1: seen by a host wait here */
		cev.signal = cs;
		cev.value = base + 1;
		CHILD_EQ(0, accel_event_wait(&cev, 20 * SEC));
		/* a queue here waits for base + 2, then fills a buffer and answers base + 3 */
		CHILD_EQ(0, accel_queue_create(d, &qp, &q));
		CHILD_EQ(0, accel_buffer_create(d, 4096, ACCEL_BUFFER_HOST, &b));
		cev.value = base + 2;
		CHILD_EQ(0, accel_queue_wait_event(q, &cev));
		p = accel_queue_get_packet(q);
		CHILD_ASSERT(p);
		accel_prep_fill(p, accel_buffer_va(b), 4096, 0x3c, 1);
		accel_prep_completion(p, accel_signal_va(cs), DRM_VACCEL_SIGNAL_MAX, base + 3);
		accel_prep_irq(p);
		CHILD_EQ(2, accel_queue_submit(q));
		CHILD_EQ(0, accel_queue_sync(q, 20 * SEC));
		CHILD_EQ(0x3c, ((unsigned char *)accel_buffer_host(b))[100]);
		accel_signal_destroy(cs);
		accel_device_close(d);
		_exit(0);
	}
	close(fd);
	ev.signal = sig;
	vaccel_msleep(100);
	ev.value = base + 1;
	EXPECT_EQ(0, accel_event_signal(&ev));
	ev.value = base + 2;
	EXPECT_EQ(0, accel_event_signal(&ev));
	ev.value = base + 3;
	EXPECT_EQ(0, accel_event_wait(&ev, 20 * SEC));	/* the child's device wrote it */
	EXPECT_EQ(0, vaccel_wait_child(pid));
	/* errors: not a signal page, a bad offset, a bad fd */
	ASSERT_EQ(0, accel_buffer_create(self->dev, 4096, 0, &plain));
	ASSERT_EQ(0, accel_buffer_export(plain, 0, &pfd));
	EXPECT_EQ(-EINVAL, accel_signal_import(self->dev, pfd, 0, &bad));
	close(pfd);
	ASSERT_EQ(0, accel_signal_export(sig, &fd, &off));
	EXPECT_EQ(-EINVAL, accel_signal_import(self->dev, fd, off + 4, &bad));
	EXPECT_EQ(-EINVAL, accel_signal_import(self->dev, fd, 4096, &bad));
	close(fd);
	EXPECT_EQ(-EBADF, accel_signal_import(self->dev, -1, 0, &bad));
	EXPECT_EQ(-EINVAL, accel_signal_export(sig, NULL, &off));
	accel_buffer_destroy(plain);
	accel_signal_destroy(sig);
}

/* Imported on another device of this process: a queue there waits on it. */
TEST_F(dom, signal_imported_by_another_device)
{
	struct accel_signal *sig, *imp, *imp2;
	struct accel_device *other;
	struct accel_queue *q;
	struct accel_event ev, iev;
	uint64_t off;
	int fd;

	ASSERT_EQ(0, lib_fresh_open(ID_S, "", &other));
	ASSERT_EQ(0, accel_signal_create(self->dev, &sig));
	ASSERT_EQ(0, accel_signal_export(sig, &fd, &off));
	ASSERT_EQ(0, accel_signal_import(other, fd, off, &imp));
	ASSERT_EQ(0, accel_signal_import(other, fd, off, &imp2));	/* one page, two views */
	close(fd);
	EXPECT_EQ(accel_signal_va(imp), accel_signal_va(imp2));
	ASSERT_EQ(0, accel_queue_create(other, NULL, &q));
	iev.signal = imp;
	iev.value = accel_signal_read(sig) + 1;
	ASSERT_EQ(0, accel_queue_wait_event(q, &iev));
	ASSERT_EQ(0, accel_queue_record(q, &ev));
	ASSERT_EQ(2, accel_queue_submit(q));
	EXPECT_EQ(-ETIMEDOUT, accel_event_wait(&ev, 50000000));
	accel_signal_destroy(imp2);
	ev.signal = sig;
	ev.value = iev.value;
	ASSERT_EQ(0, accel_event_signal(&ev));
	EXPECT_EQ(0, accel_queue_sync(q, 10 * SEC));
	EXPECT_EQ(iev.value, accel_signal_read(imp));
	accel_signal_destroy(sig);
	accel_device_close(other);	/* with the imported signal still open */
}

/* ---- accel_device_open_fd(), open_path() of other files ---- */

TEST(open_fd_and_other_files)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 64 };
	struct accel_device *dev, *d2, *holder;
	struct accel_buffer *b;
	struct accel_queue *q;
	int raw, nul, p[2];

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, lib_fresh_device(ID_S, "971"));
	raw = lib_raw_open(ID_S, &holder);
	ASSERT_LE(0, raw);
	ASSERT_EQ(0, accel_device_open_fd(raw, &dev));
	close(raw);	/* the device has its own duplicate */
	accel_device_close(holder);	/* (sim) and it holds the file too */
	ASSERT_EQ(0, accel_queue_create(dev, &qp, &q));
	ASSERT_EQ(0, accel_buffer_create(dev, 8192, ACCEL_BUFFER_HOST, &b));
	EXPECT_EQ(0, fill_at(q, accel_buffer_va(b), 8192, 0x55));
	EXPECT_EQ(0x55, ((unsigned char *)accel_buffer_host(b))[8191]);
	accel_device_close(dev);
	/* not vaccel nodes */
	nul = open("/dev/null", O_RDWR);
	ASSERT_LE(0, nul);
	EXPECT_EQ(-ENODEV, accel_device_open_fd(nul, &d2));
	close(nul);
	ASSERT_EQ(0, pipe(p));
	EXPECT_EQ(-ENODEV, accel_device_open_fd(p[0], &d2));
	close(p[0]);
	close(p[1]);
	EXPECT_EQ(-EBADF, accel_device_open_fd(-1, &d2));
	EXPECT_EQ(-EINVAL, accel_device_open_fd(0, NULL));
	EXPECT_EQ(-ENODEV, accel_device_open_path("/dev/null", &d2));
	lib_del_device(ID_S);
	NO_LEAKS();
}

/*
 * A dup() of a device's fd is the same file (context), whatever number it
 * has; an fd number names what it names now: after dup2() over it, or
 * after it was closed and reused, never the file it used to name.
 */
TEST(a_dup_is_the_same_file)
{
	struct accel_device *a, *b, *a2, *b2, *x;
	struct vaccel_counts counts;
	long long ca, cb;
	char path[300];
	int raw, nul, num;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	lib_del_device(ID_S);
	lib_counts_read(&counts);
	ASSERT_EQ(0, lib_fresh_open(ID_S, "", &a));
	ASSERT_EQ(0, lib_node_path(ID_S, path, sizeof(path)));
	ASSERT_EQ(0, accel_device_open_path(path, &b));	/* another file of the device */
	ca = lib_client_id(a);
	cb = lib_client_id(b);
	ASSERT_LE(0, ca) TH_LOG("fdinfo cannot be read");
	ASSERT_NE(ca, cb);
	/* the program's own dup() of the library's fd */
	raw = dup(accel_device_fd(a));
	ASSERT_LE(0, raw);
	ASSERT_EQ(0, accel_device_open_fd(raw, &a2));
	EXPECT_EQ(ca, lib_client_id(a2));
	/* dup2() over it: the number names b's file now */
	ASSERT_EQ(raw, dup2(accel_device_fd(b), raw));
	ASSERT_EQ(0, accel_device_open_fd(raw, &b2));
	EXPECT_EQ(cb, lib_client_id(b2));
	EXPECT_EQ(ca, lib_client_id(a2));
	/* closed and reused for another file: not a device */
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, nul);
	ASSERT_EQ(raw, dup2(nul, raw));
	EXPECT_EQ(-ENODEV, accel_device_open_fd(raw, &x));
	close(raw);
	/*
	 * The library's own fd of a2 replaced behind its back: that number is
	 * no device either, and a (the same file) carries on; closing a2
	 * afterwards closes that number only.
	 */
	num = accel_device_fd(a2);
	ASSERT_EQ(num, dup2(nul, num));
	EXPECT_EQ(-ENODEV, accel_device_open_fd(num, &x));
	EXPECT_EQ(ca, lib_client_id(a));
	accel_device_close(a2);
	EXPECT_EQ(-1, fcntl(num, F_GETFD));
	EXPECT_EQ(ca, lib_client_id(a));
	close(nul);
	/*
	 * The library's last descriptors of b closed: the module keeps the file
	 * while any fd names it; the in-process device closes it with the
	 * library's last one, and the program's dup() names no device then
	 * (Documentation/sim.rst, Differences).
	 */
	raw = dup(accel_device_fd(b));
	ASSERT_LE(0, raw);
	accel_device_close(b2);
	EXPECT_EQ(cb, lib_client_id(b));
	accel_device_close(b);
	if (lib_on_sim()) {
		EXPECT_EQ(-ENODEV, accel_device_open_fd(raw, &x));
	} else {
		ASSERT_EQ(0, accel_device_open_fd(raw, &x));
		EXPECT_EQ(cb, lib_client_id(x));
		accel_device_close(x);
	}
	close(raw);
	accel_device_close(a);
	lib_del_device(ID_S);
	EXPECT_LIB_COUNTS_BACK(&counts, 5000);
	NO_LEAKS();
}

/* ---- the VA quarantine ---- */

TEST_F(dom, freed_address_is_not_reused_at_once)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 64 };
	struct accel_buffer *a, *b;
	struct accel_queue *q;
	uint64_t va_a;

	ASSERT_EQ(0, accel_queue_create(self->dev, &qp, &q));
	ASSERT_EQ(0, accel_buffer_create(self->dev, 1 << 20, 0, &a));
	va_a = accel_buffer_va(a);
	accel_buffer_destroy(a);
	ASSERT_EQ(0, accel_buffer_create(self->dev, 1 << 20, ACCEL_BUFFER_HOST, &b));
	EXPECT_NE(va_a, accel_buffer_va(b));
	/* late work on the freed address faults instead of writing b */
	EXPECT_EQ(1000 + DRM_VACCEL_FAULT_UNMAPPED, fill_at(q, va_a, 4096, 0x66));
	EXPECT_EQ(0, ((unsigned char *)accel_buffer_host(b))[0]);
	accel_buffer_destroy(b);
	accel_queue_destroy(q);
}

/* ---- a failed seal changes nothing ---- */

/* Character @i of the permissions ("rw-s") of the mapping holding @addr, or 0. */
static char map_perm(const void *addr, int i)
{
	unsigned long lo, hi, a = (unsigned long)addr;
	char line[512], perm[8];
	FILE *f = fopen("/proc/self/maps", "r");
	char ret = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) == 3 && a >= lo && a < hi) {
			ret = perm[i];
			break;
		}
	fclose(f);
	return ret;
}

TEST_F(dom, failed_seal_changes_nothing)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 64 };
	struct accel_buffer *pb, *imp;
	struct accel_device *other;
	struct accel_queue *q;
	volatile unsigned char *host;
	void *map;
	int fd;

	ASSERT_EQ(0, lib_fresh_open(ID_S, "", &other));
	ASSERT_EQ(0, accel_queue_create(self->dev, &qp, &q));
	ASSERT_EQ(0, accel_buffer_create(self->dev, 8192,
					 ACCEL_BUFFER_PERSISTENT | ACCEL_BUFFER_HOST, &pb));
	host = accel_buffer_host(pb);
	host[0] = 1;
	/* another device binds it writable: BO_SEAL must fail with -EBUSY */
	ASSERT_EQ(0, accel_buffer_export(pb, 0, &fd));
	ASSERT_EQ(0, accel_buffer_import(other, fd, 0, &imp));
	close(fd);
	EXPECT_EQ(-EBUSY, accel_buffer_seal(pb));
	/* the mapping is where it was, and writable; the device writes it too */
	EXPECT_EQ(host, accel_buffer_host(pb));
	host[1] = 2;
	EXPECT_EQ(2, host[1]);
	EXPECT_EQ(0, fill_at(q, accel_buffer_va(pb), 4096, 0x77));
	EXPECT_EQ(0x77, host[1]);
	EXPECT_EQ('w', map_perm((const void *)host, 1));
	ASSERT_EQ(0, accel_buffer_map(pb, &map));
	EXPECT_EQ(host, map);
	/* without the importer it seals, read-only in place */
	accel_buffer_destroy(imp);
	ASSERT_EQ(0, accel_buffer_seal(pb));
	EXPECT_EQ(host, accel_buffer_host(pb));
	EXPECT_EQ(0x77, host[0]);
	EXPECT_EQ(1000 + DRM_VACCEL_FAULT_ACCESS, fill_at(q, accel_buffer_va(pb), 4096, 0));
	EXPECT_EQ('-', map_perm((const void *)host, 1));	/* read-only now */
	accel_buffer_destroy(pb);
	accel_queue_destroy(q);
	accel_device_close(other);
}

/* ---- submit_packets() says how much it published ---- */

TEST_F(dom, submit_packets_reports_what_it_published)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 16 };
	struct drm_vaccel_packet pk[40];
	struct accel_signal *gate_sig, *count;
	struct accel_event gate;
	struct accel_queue *q;
	unsigned int done = 99, i;
	uint64_t base;

	ASSERT_EQ(0, accel_queue_create(self->dev, &qp, &q));
	ASSERT_EQ(0, accel_signal_create(self->dev, &gate_sig));
	ASSERT_EQ(0, accel_signal_create(self->dev, &count));
	base = accel_signal_read(count);
	gate.signal = gate_sig;
	gate.value = accel_signal_next(gate_sig);
	ASSERT_EQ(0, accel_queue_wait_event(q, &gate));
	ASSERT_EQ(1, accel_queue_submit(q));
	for (i = 0; i < 40; i++) {
		memset(&pk[i], 0, sizeof(pk[i]));
		accel_prep_completion(&pk[i], accel_signal_va(count), DRM_VACCEL_SIGNAL_ADD, 1);
	}
	/* the ring fills behind the gate: some batches go in, then the wait times out */
	EXPECT_EQ(-ETIMEDOUT, accel_queue_submit_packets(q, pk, 40, 50000000, &done));
	EXPECT_LT(0, done);
	EXPECT_GT(40, done);
	ASSERT_EQ(0, accel_event_signal(&gate));
	ASSERT_EQ(0, accel_queue_sync(q, 10 * SEC));
	/* exactly the packets it said it published ran */
	EXPECT_EQ(base + done, accel_signal_read(count));
	/* the rest, from where it stopped */
	EXPECT_EQ(0, accel_queue_submit_packets(q, pk + done, 40 - done, 10 * SEC, &i));
	EXPECT_EQ(40 - done, i);
	ASSERT_EQ(0, accel_queue_sync(q, 10 * SEC));
	EXPECT_EQ(base + 40, accel_signal_read(count));
	accel_signal_destroy(count);
	accel_signal_destroy(gate_sig);
	accel_queue_destroy(q);
}

/* ---- two threads importing one signal page at once ---- */

static struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	int arrived;
} meet = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 };

/* Both threads missed the cache before either imports (or 2 s passed). */
static void meet_hook(int where, const void *obj)
{
	struct timespec until;

	(void)obj;
	if (where != ACC_HOOK_SIGIMPORT_MISS)
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	pthread_mutex_lock(&meet.m);
	meet.arrived++;
	pthread_cond_broadcast(&meet.c);
	while (meet.arrived < 2 && !pthread_cond_timedwait(&meet.c, &meet.m, &until))
		;
	pthread_mutex_unlock(&meet.m);
}

struct qwaiter {
	struct accel_queue *q;
	struct accel_event ev;
	int ret;
	pthread_t t;
};

static void *queue_wait_main(void *arg)
{
	struct qwaiter *w = arg;

	w->ret = accel_queue_wait_event(w->q, &w->ev);
	return NULL;
}

TEST_F(dom, concurrent_signal_page_imports)
{
	struct accel_device *other;
	struct accel_signal *sig;
	struct qwaiter w[2];
	struct list *l;
	int i, n = 0;

	ASSERT_EQ(0, lib_fresh_open(ID_S, "", &other));
	ASSERT_EQ(0, accel_signal_create(other, &sig));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, accel_queue_create(self->dev, NULL, &w[i].q));
		w[i].ev.signal = sig;
		w[i].ev.value = accel_signal_read(sig) + 1;
	}
	meet.arrived = 0;
	acc_test_hook = meet_hook;
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&w[i].t, NULL, queue_wait_main, &w[i]));
	for (i = 0; i < 2; i++) {
		pthread_join(w[i].t, NULL);
		EXPECT_EQ(0, w[i].ret);
	}
	acc_test_hook = NULL;
	EXPECT_EQ(2, meet.arrived);
	/* one import of the page, whoever got there first */
	for (l = self->dev->sigimports.next; l != &self->dev->sigimports; l = l->next)
		n++;
	EXPECT_EQ(1, n);
	for (i = 0; i < 2; i++)
		EXPECT_EQ(1, accel_queue_submit(w[i].q));
	EXPECT_EQ(0, accel_event_signal(&w[0].ev));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, accel_queue_sync(w[i].q, 10 * SEC));
		accel_queue_destroy(w[i].q);
	}
	accel_signal_destroy(sig);
	accel_device_close(other);
}

TEST_HARNESS_MAIN
