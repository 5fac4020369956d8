// SPDX-License-Identifier: GPL-2.0-only
/*
 * libaccel in the VM: a device removed (/sys/bus/vaccel/del_device) under
 * a running program. Calls fail with -ENODEV, a host waiter sleeping on
 * the device wakes with -ENODEV, nothing crashes, and closing everything
 * afterwards frees every object (the module's live-object counters).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <pthread.h>

#include "kselftest_harness.h"
#include "libaccel_test.h"

FIXTURE(gone) {
	struct accel_device *dev;
	struct accel_buffer *buf;
	struct accel_queue *q;
	struct accel_signal *sig;
	struct vaccel_counts counts;
};

FIXTURE_SETUP(gone)
{
	struct accel_event ev;

	self->dev = NULL;
	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, lib_counted_open(LIB_ID_A, "memory=64M", &self->counts, &self->dev));
	ASSERT_EQ(0, accel_buffer_create(self->dev, 65536, ACCEL_BUFFER_HOST, &self->buf));
	ASSERT_EQ(0, accel_queue_create(self->dev, NULL, &self->q));
	ASSERT_EQ(0, accel_signal_create(self->dev, &self->sig));
	/* the device works before it goes */
	accel_prep_fill(accel_queue_get_packet(self->q), accel_buffer_va(self->buf), 65536, 3, 8);
	ASSERT_EQ(0, accel_queue_record(self->q, &ev));
	ASSERT_EQ(2, accel_queue_submit(self->q));
	ASSERT_EQ(0, accel_event_wait(&ev, 10 * SEC));
	ASSERT_EQ(3, ((uint64_t *)accel_buffer_host(self->buf))[100]);
}

FIXTURE_TEARDOWN(gone)
{
	if (!lib_present())
		return;
	/* teardown after removal: in an order that is not creation's */
	accel_buffer_destroy(self->buf);
	accel_signal_destroy(self->sig);
	accel_queue_destroy(self->q);
	accel_device_close(self->dev);
	lib_del_device(LIB_ID_A);
	EXPECT_LIB_COUNTS_BACK(&self->counts, 5000);
}

struct waiter {
	struct accel_event ev;
	int ret;
};

static void *wait_forever(void *arg)
{
	struct waiter *w = arg;

	w->ret = accel_event_wait(&w->ev, ACCEL_FOREVER);
	return NULL;
}

/*
 * A thread sleeps on an event that never comes; the device is removed:
 * the wait ends with -ENODEV, and so does every call that needs the
 * device.
 */
TEST_F_TIMEOUT(gone, waiter_and_calls, 120)
{
	struct accel_buffer *nothing = NULL;
	struct accel_queue *noq = NULL;
	struct drm_vaccel_packet *p;
	struct waiter w = { .ret = 1 };
	pthread_t t;
	uint64_t used, t0;
	int fd, ret;

	w.ev.signal = self->sig;
	w.ev.value = accel_signal_next(self->sig);
	ASSERT_EQ(0, pthread_create(&t, NULL, wait_forever, &w));
	usleep(200000);			/* past the spin: asleep in the kernel */
	EXPECT_EQ(1, w.ret);
	ASSERT_EQ(0, lib_del_device(LIB_ID_A));
	t0 = vaccel_now_ms();
	pthread_join(t, NULL);
	EXPECT_EQ(-ENODEV, w.ret);
	EXPECT_GT(10000, vaccel_now_ms() - t0);

	EXPECT_EQ(-ENODEV, accel_device_memory_used(self->dev, &used));
	EXPECT_EQ(-ENODEV, accel_buffer_create(self->dev, 4096, 0, &nothing));
	EXPECT_EQ(NULL, nothing);
	EXPECT_EQ(-ENODEV, accel_queue_create(self->dev, NULL, &noq));
	EXPECT_EQ(NULL, noq);
	EXPECT_EQ(-ENODEV, accel_signal_write(self->sig, DRM_VACCEL_SIGNAL_ADD, 1));
	EXPECT_EQ(-ENODEV, accel_event_signal(&w.ev));
	EXPECT_EQ(-ENODEV, accel_event_wait(&w.ev, SEC));
	EXPECT_EQ(-ENODEV, accel_buffer_export(self->buf, 0, &fd));
	p = accel_queue_get_packet(self->q);
	if (p)
		accel_prep_nop(p);
	ret = accel_queue_submit(self->q);
	EXPECT_EQ(-ENODEV, ret);
	EXPECT_EQ(-ENODEV, accel_queue_sync(self->q, SEC));
	EXPECT_EQ(-ENODEV, accel_queue_reserve(self->q, 1, SEC));
}

/*
 * The hot path first: the program's next call after the removal is a
 * submission (no ioctl has told the library yet).
 */
TEST_F_TIMEOUT(gone, submit_first, 120)
{
	struct drm_vaccel_packet *p;
	int ret;

	ASSERT_EQ(0, lib_del_device(LIB_ID_A));
	p = accel_queue_get_packet(self->q);
	if (p)
		accel_prep_nop(p);
	ret = accel_queue_submit(self->q);
	EXPECT_TRUE(ret == -ENODEV || ret == 1) TH_LOG("submit: %d", ret);
	EXPECT_EQ(-ENODEV, accel_queue_sync(self->q, SEC));
	EXPECT_EQ(-ENODEV, accel_queue_submit(self->q));
}

TEST_HARNESS_MAIN
