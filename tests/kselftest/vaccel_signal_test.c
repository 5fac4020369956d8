// SPDX-License-Identifier: GPL-2.0-only
/*
 * Signals: WAIT_SIGNALS (ANY, ALL, timeouts, faults, interruption and
 * restart) and SIGNAL_WRITE, and the wake-ups between host and device:
 * host writes release device WAITs, device SIGNALs with IRQ release host
 * waiters, across queues and across devices.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <pthread.h>
#include <signal.h>

#include "vaccel_common.h"
#include "vaccel_queue_util.h"
#include "kselftest_harness.h"

FIXTURE(sig) {
	int fd;
	struct bo ring, data, sig;
};

FIXTURE_SETUP(sig)
{
	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	self->fd = vaccel_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, bo_new(self->fd, 4 * RING_N * 64, 0, &self->ring));
	ASSERT_EQ(0, bo_new(self->fd, PAGE, 0, &self->data));
	ASSERT_EQ(0, bo_new(self->fd, PAGE, DRM_VACCEL_BO_SIGNAL, &self->sig));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA,
				    self->ring.size));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, self->sig.handle, VM_RW, 0, SIG_VA, PAGE));
}

FIXTURE_TEARDOWN(sig)
{
	if (vaccel_present())
		close(self->fd);
}

TEST_F(sig, validation)
{
	struct drm_vaccel_signal_cond c[65];
	struct drm_vaccel_wait_signals w;
	int i;

	for (i = 0; i < 65; i++)
		c[i] = cond(self->sig.handle, 0, 0, DRM_VACCEL_WAIT_GE);
	EXPECT_EQ(-EINVAL, sig_wait(self->fd, c, 0, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, sig_wait(self->fd, c, 65, 0, 0, NULL));
	EXPECT_EQ(0, sig_wait(self->fd, c, 64, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, sig_wait(self->fd, c, 1, 0x4, 0, NULL));
	w = (struct drm_vaccel_wait_signals){ .conds = (uintptr_t)c, .count = 1, .pad = 1 };
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VACCEL_WAIT_SIGNALS, &w));
	EXPECT_EQ(EINVAL, errno);
	w = (struct drm_vaccel_wait_signals){ .conds = 16, .count = 1 };
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VACCEL_WAIT_SIGNALS, &w));
	EXPECT_EQ(EFAULT, errno);
	c[0].cond = 3;
	EXPECT_EQ(-EINVAL, sig_wait(self->fd, c, 1, 0, 0, NULL));
	c[0] = cond(self->sig.handle, 4, 0, 0);
	EXPECT_EQ(-EINVAL, sig_wait(self->fd, c, 1, 0, 0, NULL));
	c[0] = cond(self->sig.handle, PAGE, 0, 0);
	EXPECT_EQ(-EINVAL, sig_wait(self->fd, c, 1, 0, 0, NULL));
	c[0] = cond(self->data.handle, 0, 0, 0);		/* not a signal object */
	EXPECT_EQ(-EINVAL, sig_wait(self->fd, c, 1, 0, 0, NULL));
	c[0] = cond(9999, 0, 0, 0);
	EXPECT_EQ(-ENOENT, sig_wait(self->fd, c, 1, 0, 0, NULL));

	EXPECT_EQ(-EINVAL, sig_write(self->fd, self->sig.handle, 0, 0, 1));
	EXPECT_EQ(-EINVAL, sig_write(self->fd, self->sig.handle, 0, 4, 1));
	EXPECT_EQ(-EINVAL, sig_write(self->fd, self->sig.handle, 12, 1, 1));
	EXPECT_EQ(-EINVAL, sig_write(self->fd, self->sig.handle, PAGE, 1, 1));
	EXPECT_EQ(-EINVAL, sig_write(self->fd, self->data.handle, 0, 1, 1));
	EXPECT_EQ(-ENOENT, sig_write(self->fd, 9999, 0, 1, 1));
}

TEST_F(sig, write_ops_and_conditions)
{
	volatile uint64_t *s = (volatile uint64_t *)self->sig.map;
	struct drm_vaccel_signal_cond c[3];
	uint32_t first = 99;

	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 8, DRM_VACCEL_SIGNAL_SET, 10));
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 8, DRM_VACCEL_SIGNAL_ADD, 5));
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 8, DRM_VACCEL_SIGNAL_MAX, 12));
	EXPECT_EQ(15, s[1]);
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 8, DRM_VACCEL_SIGNAL_MAX, 20));
	EXPECT_EQ(20, s[1]);
	/* MAX orders like WAIT GE, across the wrap too */
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 8, DRM_VACCEL_SIGNAL_SET, ~0ull - 1));
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 8, DRM_VACCEL_SIGNAL_MAX, 3));
	EXPECT_EQ(3, s[1]);
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 8, DRM_VACCEL_SIGNAL_MAX, ~0ull));
	EXPECT_EQ(3, s[1]);
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 8, DRM_VACCEL_SIGNAL_SET, 20));

	c[0] = cond(self->sig.handle, 0, 1, DRM_VACCEL_WAIT_GE);	/* 0 >= 1: no */
	c[1] = cond(self->sig.handle, 8, 20, DRM_VACCEL_WAIT_EQ);	/* yes */
	c[2] = cond(self->sig.handle, 16, 0, DRM_VACCEL_WAIT_NE);	/* no */
	EXPECT_EQ(0, sig_wait(self->fd, c, 3, 0, 0, &first));
	EXPECT_EQ(1, first);
	EXPECT_EQ(-ETIME, sig_wait(self->fd, c, 3, DRM_VACCEL_WAIT_ALL, 0, NULL));
	c[0].value = 0;
	c[2].cond = DRM_VACCEL_WAIT_EQ;
	EXPECT_EQ(0, sig_wait(self->fd, c, 3, DRM_VACCEL_WAIT_ALL, 0, &first));
	EXPECT_EQ(0, first);
	/* masks, and >= across wrap-around */
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 24, DRM_VACCEL_SIGNAL_SET, 0xff01));
	c[0] = cond(self->sig.handle, 24, 0x01, DRM_VACCEL_WAIT_EQ);
	c[0].mask = 0xff;
	EXPECT_EQ(0, sig_wait(self->fd, c, 1, 0, 0, NULL));
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 32, DRM_VACCEL_SIGNAL_SET, 3));
	c[0] = cond(self->sig.handle, 32, ~0ull - 2, DRM_VACCEL_WAIT_GE);
	EXPECT_EQ(0, sig_wait(self->fd, c, 1, 0, 0, NULL));
}

TEST_F(sig, timeout_is_absolute)
{
	struct drm_vaccel_signal_cond c = cond(self->sig.handle, 0, 1, DRM_VACCEL_WAIT_GE);
	uint64_t t0 = now_ns();

	EXPECT_EQ(-ETIME, sig_wait(self->fd, &c, 1, 0, -1000, NULL));	/* in the past */
	EXPECT_EQ(-ETIME, sig_wait(self->fd, &c, 1, 0, 200, NULL));
	EXPECT_LE(t0 + 200000000ull, now_ns());
}

struct writer {
	int fd;
	uint32_t handle;
	uint64_t delay_us;
};

static void *write_later(void *arg)
{
	struct writer *w = arg;

	usleep(w->delay_us);
	sig_write(w->fd, w->handle, 0, DRM_VACCEL_SIGNAL_ADD, 1);
	return NULL;
}

/* A host writer wakes a sleeping host waiter. */
TEST_F(sig, host_write_wakes_host_waiter)
{
	struct drm_vaccel_signal_cond c = cond(self->sig.handle, 0, 1, DRM_VACCEL_WAIT_GE);
	struct writer w = { self->fd, self->sig.handle, 100000 };
	uint64_t t0 = now_ns();
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, write_later, &w));
	EXPECT_EQ(0, sig_wait(self->fd, &c, 1, 0, 10000, NULL));
	EXPECT_GT(t0 + 5000000000ull, now_ns());
	pthread_join(t, NULL);
}

static void on_usr1(int sig)
{
	(void)sig;
}

/*
 * Interrupted waits: with SA_RESTART the ioctl restarts by itself (the
 * timeout is absolute) and returns when the signal arrives; without it,
 * -EINTR.
 */
TEST_F(sig, interrupted_and_restarted)
{
	struct drm_vaccel_signal_cond c = cond(self->sig.handle, 0, 1, DRM_VACCEL_WAIT_GE);
	struct writer w = { self->fd, self->sig.handle, 300000 };
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	pthread_t t, me = pthread_self();
	int i;

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, pthread_create(&t, NULL, write_later, &w));
	for (i = 0; i < 5; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			usleep(20000 * (i + 1));
			kill(getppid(), SIGUSR1);
			_exit(0);
		}
	}
	EXPECT_EQ(0, sig_wait(self->fd, &c, 1, 0, 10000, NULL));
	pthread_join(t, NULL);
	while (waitpid(-1, NULL, 0) > 0)
		;

	sa.sa_flags = 0;
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	c.value = 100;
	if (fork() == 0) {
		usleep(50000);
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	EXPECT_EQ(-EINTR, sig_wait(self->fd, &c, 1, 0, 10000, NULL));
	wait(NULL);
	(void)me;
}

/* A device SIGNAL with IRQ wakes a host waiter; a host write releases a device WAIT. */
TEST_F(sig, host_and_device)
{
	struct drm_vaccel_signal_cond c = cond(self->sig.handle, 8, 1, DRM_VACCEL_WAIT_GE);
	struct drm_vaccel_packet p;
	struct q q;

	ASSERT_EQ(0, queue_new(self->fd, RING_VA, RING_N, (void *)self->ring.map, &q));
	/* device: wait for signal[0] >= 1, then signal[1] = 1 with IRQ */
	p = pkt(DRM_VACCEL_PKT_WAIT, SIG_VA, 1, 0, 0);
	ASSERT_EQ(0, submit(self->fd, &q, &p, NULL));
	p = pkt(DRM_VACCEL_PKT_SIGNAL | DRM_VACCEL_PKT_IRQ, SIG_VA + 8, 1, 0, 0);
	p.arg = DRM_VACCEL_SIGNAL_SET;
	ASSERT_EQ(0, submit(self->fd, &q, &p, NULL));
	usleep(100000);
	EXPECT_EQ(0, q.ctrl->read_index);	/* blocked in the WAIT */
	EXPECT_EQ(-ETIME, sig_wait(self->fd, &c, 1, 0, 50, NULL));
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 0, DRM_VACCEL_SIGNAL_SET, 1));
	EXPECT_EQ(0, sig_wait(self->fd, &c, 1, 0, 10000, NULL));
	EXPECT_TRUE(drain(&q, 10000));
}

/* A chain across queues: each queue waits for the previous one's signal. */
TEST_F(sig, cross_queue_chain)
{
	struct drm_vaccel_signal_cond c = cond(self->sig.handle, 8 * 4, 1, DRM_VACCEL_WAIT_GE);
	struct drm_vaccel_packet p;
	struct q q[4];
	int i;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, queue_new(self->fd, RING_VA + i * RING_N * 64, RING_N,
				       (struct drm_vaccel_packet *)self->ring.map + i * RING_N,
				       &q[i]));
	/* submit in reverse order so that every queue really has to wait */
	for (i = 3; i >= 0; i--) {
		p = pkt(DRM_VACCEL_PKT_WAIT, SIG_VA + 8 * i, 1, 0, 0);
		ASSERT_EQ(0, submit(self->fd, &q[i], &p, NULL));
		p = pkt(DRM_VACCEL_PKT_SIGNAL, SIG_VA + 8 * (i + 1), 1, 0, 0);
		p.arg = DRM_VACCEL_SIGNAL_ADD;
		if (i == 3)
			p.header |= DRM_VACCEL_PKT_IRQ;
		ASSERT_EQ(0, submit(self->fd, &q[i], &p, NULL));
	}
	ASSERT_EQ(0, sig_write(self->fd, self->sig.handle, 0, DRM_VACCEL_SIGNAL_SET, 1));
	EXPECT_EQ(0, sig_wait(self->fd, &c, 1, 0, 10000, NULL));
	for (i = 0; i < 4; i++)
		EXPECT_TRUE(drain(&q[i], 10000));
}

/* A faulted queue fails the context's waits with -EIO, unless ignored. */
TEST_F(sig, fault_fails_waits)
{
	struct drm_vaccel_signal_cond c = cond(self->sig.handle, 0, 1, DRM_VACCEL_WAIT_GE);
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_NOP, 1, 0, 0, 0);	/* invalid */
	struct q q;

	ASSERT_EQ(0, queue_new(self->fd, RING_VA, RING_N, (void *)self->ring.map, &q));
	EXPECT_EQ(-ETIME, sig_wait(self->fd, &c, 1, 0, 10, NULL));
	ASSERT_EQ(0, submit(self->fd, &q, &p, NULL));
	EXPECT_EQ(-EIO, sig_wait(self->fd, &c, 1, 0, 10000, NULL));
	EXPECT_EQ(DRM_VACCEL_QUEUE_ERROR, q.ctrl->state);
	EXPECT_EQ(-ETIME, sig_wait(self->fd, &c, 1, DRM_VACCEL_WAIT_IGNORE_FAULTS, 10, NULL));
}

/*
 * Cross-device: a SIGNAL packet on device 0 into a signal page imported
 * from device 1 wakes a waiter of device 1.
 */
TEST_F(sig, cross_device)
{
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_prime_handle imp = { 0 };
	struct drm_vaccel_signal_cond c;
	struct drm_vaccel_packet p;
	struct bo s1;
	struct q q;
	int fd1 = vaccel_open(1);

	if (fd1 == -ENOENT)
		SKIP(return, "needs device 1");
	ASSERT_LE(0, fd1);
	ASSERT_EQ(0, bo_new(fd1, PAGE, DRM_VACCEL_BO_SIGNAL, &s1));
	exp.handle = s1.handle;
	ASSERT_EQ(0, ioctl(fd1, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
	imp.fd = exp.fd;
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp));
	ASSERT_EQ(0, vaccel_vm_bind(self->fd, imp.handle, VM_RW, 0, SIG_VA + PAGE, PAGE));
	ASSERT_EQ(0, queue_new(self->fd, RING_VA, RING_N, (void *)self->ring.map, &q));
	p = pkt(DRM_VACCEL_PKT_DELAY, 50000000, 0, 0, 0);
	ASSERT_EQ(0, submit(self->fd, &q, &p, NULL));
	p = pkt(DRM_VACCEL_PKT_SIGNAL | DRM_VACCEL_PKT_IRQ, SIG_VA + PAGE + 16, 7, 0, 0);
	p.arg = DRM_VACCEL_SIGNAL_SET;
	ASSERT_EQ(0, submit(self->fd, &q, &p, NULL));
	c = cond(s1.handle, 16, 7, DRM_VACCEL_WAIT_EQ);
	EXPECT_EQ(0, sig_wait(fd1, &c, 1, 0, 10000, NULL));
	EXPECT_EQ(7, ((volatile uint64_t *)s1.map)[2]);
	close(exp.fd);
	close(fd1);
}

static void *del_later(void *arg)
{
	usleep(200000);
	vaccel_del_device(*(unsigned int *)arg);
	return NULL;
}

/* Deleting the device ends a wait that nothing else would end. */
TEST(del_device_ends_wait)
{
	unsigned int id = VACCEL_TEST_ID;
	struct drm_vaccel_signal_cond c;
	struct drm_vaccel_wait_signals w = { .count = 1, .timeout_ns = INT64_MAX };
	char spec[32];
	struct bo s;
	pthread_t t;
	int fd;

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	vaccel_del_device(id);
	snprintf(spec, sizeof(spec), "%u", id);
	ASSERT_EQ(0, vaccel_new_device(spec));
	fd = vaccel_open(id);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bo_new(fd, PAGE, DRM_VACCEL_BO_SIGNAL, &s));
	c = cond(s.handle, 0, 1, DRM_VACCEL_WAIT_GE);
	w.conds = (uintptr_t)&c;
	ASSERT_EQ(0, pthread_create(&t, NULL, del_later, &id));
	EXPECT_EQ(-1, ioctl(fd, DRM_IOCTL_VACCEL_WAIT_SIGNALS, &w));
	EXPECT_EQ(ENODEV, errno);
	pthread_join(t, NULL);
	close(fd);
}

TEST_HARNESS_MAIN
