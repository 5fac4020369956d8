// SPDX-License-Identifier: GPL-2.0-only
/*
 * libaccel in the VM: signals and events. Signal values only grow (also
 * across slot reuse); host waits for any or all of several events, with
 * timeouts that neither end early nor hang; events across two devices, in
 * both directions (a host-signalled event releasing another device's
 * queue, and one device's queue waiting for the other's).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "kselftest_harness.h"
#include "libaccel_test.h"

FIXTURE(two) {
	struct accel_device *a, *b;
	struct vaccel_counts counts;
};

FIXTURE_SETUP(two)
{
	self->a = self->b = NULL;
	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	lib_del_device(LIB_ID_B);
	ASSERT_EQ(0, lib_counted_open(LIB_ID_A, "memory=64M", &self->counts, &self->a));
	ASSERT_EQ(0, lib_fresh_open(LIB_ID_B, "memory=64M link_bw_mbps=2000 link_latency_ns=10000",
				    &self->b));
}

FIXTURE_TEARDOWN(two)
{
	if (!lib_present())
		return;
	accel_device_close(self->a);
	accel_device_close(self->b);
	lib_del_device(LIB_ID_A);
	lib_del_device(LIB_ID_B);
	EXPECT_LIB_COUNTS_BACK(&self->counts, 5000);
}

/* Values only grow: writes, next(), and slots reused by new signals. */
TEST_F(two, signals_only_grow)
{
	enum { N = 80 };	/* more than one signal page of 64 slots */
	struct accel_signal *s[N];
	uint64_t va[N], val[N], v, n1, n2;
	unsigned int i, j, matched = 0;

	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, accel_signal_create(self->a, &s[i]));
		va[i] = accel_signal_va(s[i]);
		for (j = 0; j < i; j++)
			ASSERT_NE(va[j], va[i]);	/* one slot each */
	}
	v = accel_signal_read(s[0]);
	ASSERT_EQ(0, accel_signal_write(s[0], DRM_VACCEL_SIGNAL_ADD, 5));
	EXPECT_EQ(v + 5, accel_signal_read(s[0]));
	ASSERT_EQ(0, accel_signal_write(s[0], DRM_VACCEL_SIGNAL_MAX, v + 1));
	EXPECT_EQ(v + 5, accel_signal_read(s[0]));
	/* the timeline counts from the value the signal had when created */
	n1 = accel_signal_next(s[0]);
	n2 = accel_signal_next(s[0]);
	EXPECT_EQ(v + 1, n1);
	EXPECT_EQ(n1 + 1, n2);

	/* raise every one a different amount, with the device for half */
	for (i = 1; i < N; i++) {
		if (i % 2) {
			ASSERT_EQ(0, accel_signal_write(s[i], DRM_VACCEL_SIGNAL_ADD, 3 + i));
		} else {
			struct accel_queue *q;
			struct drm_vaccel_packet *p;

			ASSERT_EQ(0, accel_queue_create(self->a, NULL, &q));
			p = accel_queue_get_packet(q);
			accel_prep_signal(p, va[i], DRM_VACCEL_SIGNAL_ADD, 3 + i);
			ASSERT_EQ(1, accel_queue_submit(q));
			ASSERT_EQ(0, accel_queue_sync(q, 10 * SEC));
			accel_queue_destroy(q);
		}
	}
	for (i = 0; i < N; i++) {
		val[i] = accel_signal_read(s[i]);
		accel_signal_destroy(s[i]);
	}
	/* new owners of the slots count on from where the last stopped */
	for (i = 0; i < N; i++) {
		uint64_t nva;

		ASSERT_EQ(0, accel_signal_create(self->a, &s[i]));
		nva = accel_signal_va(s[i]);
		for (j = 0; j < N; j++) {
			if (va[j] != nva)
				continue;
			matched++;
			EXPECT_LE(val[j], accel_signal_read(s[i]));
			EXPECT_LT(val[j], accel_signal_next(s[i]));
		}
	}
	EXPECT_EQ(N, matched);		/* the freed slots were reused */
	for (i = 0; i < N; i++)
		accel_signal_destroy(s[i]);
}

/* Any / all, from the host, with timeouts. */
TEST_F(two, wait_any_all_timeouts)
{
	struct accel_signal *s1, *s2;
	struct accel_event ev[2];
	unsigned int first = 99;
	uint64_t t0;

	ASSERT_EQ(0, accel_signal_create(self->a, &s1));
	ASSERT_EQ(0, accel_signal_create(self->b, &s2));	/* another device */
	ev[0].signal = s1;
	ev[0].value = accel_signal_next(s1);
	ev[1].signal = s2;
	ev[1].value = accel_signal_next(s2);

	EXPECT_EQ(-ETIMEDOUT, accel_event_wait(&ev[0], 0));
	t0 = vaccel_now_ms();
	EXPECT_EQ(-ETIMEDOUT, accel_events_wait(ev, 2, 0, 100000000, &first));
	EXPECT_LE(100, vaccel_now_ms() - t0);
	EXPECT_GT(5000, vaccel_now_ms() - t0);

	ASSERT_EQ(0, accel_event_signal(&ev[1]));
	EXPECT_EQ(1, accel_event_done(&ev[1]));
	EXPECT_EQ(0, accel_events_wait(ev, 2, 0, SEC, &first));
	EXPECT_EQ(1, first);
	t0 = vaccel_now_ms();
	EXPECT_EQ(-ETIMEDOUT, accel_events_wait(ev, 2, ACCEL_WAIT_ALL, 100000000, &first));
	EXPECT_LE(100, vaccel_now_ms() - t0);

	ASSERT_EQ(0, accel_event_signal(&ev[0]));
	EXPECT_EQ(0, accel_events_wait(ev, 2, ACCEL_WAIT_ALL, SEC, &first));
	EXPECT_EQ(0, accel_events_wait(ev, 2, 0, 0, &first));
	EXPECT_EQ(0, first);
	EXPECT_EQ(0, accel_event_wait(&ev[0], 0));

	accel_signal_destroy(s1);
	accel_signal_destroy(s2);
}

/*
 * The device completes an event while the host sleeps: the waiter wakes
 * (the DELAY is far past the spin budget), not before the device is done.
 */
TEST_F(two, wait_sleeps_until_device)
{
	struct accel_event done, never;
	struct accel_signal *s;
	struct accel_queue *q;
	struct drm_vaccel_packet *p;
	unsigned int first = 99;
	uint64_t t0;

	ASSERT_EQ(0, accel_queue_create(self->a, NULL, &q));
	ASSERT_EQ(0, accel_signal_create(self->b, &s));
	never.signal = s;
	never.value = accel_signal_next(s);
	p = accel_queue_get_packet(q);
	accel_prep_delay(p, 200000000);		/* 200 ms */
	ASSERT_EQ(0, accel_queue_record(q, &done));
	t0 = vaccel_now_ms();
	ASSERT_EQ(2, accel_queue_submit(q));
	{
		struct accel_event both[2] = { never, done };

		EXPECT_EQ(0, accel_events_wait(both, 2, 0, 10 * SEC, &first));
	}
	EXPECT_LE(190, vaccel_now_ms() - t0);
	EXPECT_EQ(1, first);
	EXPECT_EQ(1, accel_event_done(&done));
	EXPECT_EQ(0, accel_event_done(&never));
	accel_signal_destroy(s);
	accel_queue_destroy(q);
}

/* the library's warnings, captured (the waiting thread logs them) */
static char noirq_log[4096];
static unsigned int noirq_lines;

static void noirq_log_fn(int level, const char *msg, void *arg)
{
	size_t len = strlen(noirq_log);

	(void)arg;
	fprintf(stderr, "# log: %s\n", msg);
	if (level > ACCEL_LOG_WARN || !strstr(msg, "no IRQ bit"))
		return;
	noirq_lines++;
	snprintf(noirq_log + len, sizeof(noirq_log) - len, "%s\n", msg);
}

/* a DELAY, then a SIGNAL ADD 1 of @s, with or without the IRQ bit */
static int delayed_signal(struct accel_queue *q, struct accel_signal *s, int irq)
{
	struct drm_vaccel_packet *p;

	p = accel_queue_get_packet(q);
	accel_prep_delay(p, 250000000);		/* 250 ms: the waiter sleeps */
	p = accel_queue_get_packet(q);
	accel_prep_signal(p, accel_signal_va(s), DRM_VACCEL_SIGNAL_ADD, 1);
	if (irq)
		accel_prep_irq(p);
	return accel_queue_submit(q);
}

/*
 * A packet without the IRQ bit wakes no host waiter (the uAPI's rule, on
 * both backends). A host wait for the value it sets used to sleep to its
 * deadline (and then fail -ETIMEDOUT); now the wait's 100 ms backstop
 * finds it, and the first such find on a device says why in a warning
 * that names the device and the signal. The second one is quiet; with
 * the IRQ bit nothing is logged.
 */
TEST_F(two, wait_finds_a_signal_set_without_irq)
{
	struct accel_signal *s;
	struct accel_queue *q;
	struct accel_event ev;
	int round, level = accel_log_get_level();
	char want[64];
	uint64_t t0, dt;

	ASSERT_EQ(0, accel_queue_create(self->a, NULL, &q));
	ASSERT_EQ(0, accel_signal_create(self->a, &s));
	noirq_log[0] = 0;
	noirq_lines = 0;
	accel_log_set_level(ACCEL_LOG_WARN);
	accel_log_set_handler(noirq_log_fn, NULL);
	for (round = 0; round < 3; round++) {
		ev.signal = s;
		ev.value = accel_signal_read(s) + 1;
		ASSERT_EQ(2, delayed_signal(q, s, round == 2));
		t0 = vaccel_now_ms();
		EXPECT_EQ(0, accel_events_wait(&ev, 1, 0, 10 * SEC, NULL));
		dt = vaccel_now_ms() - t0;
		EXPECT_LE(240, dt);
		EXPECT_GT(3000, dt) TH_LOG("round %d: the wait took %llu ms", round,
					   (unsigned long long)dt);
		EXPECT_EQ(0, accel_queue_sync(q, 10 * SEC));
	}
	accel_log_set_handler(NULL, NULL);
	accel_log_set_level(level);
	EXPECT_EQ(1, noirq_lines) TH_LOG("%s", noirq_log);
	snprintf(want, sizeof(want), "signal 0x%llx", (unsigned long long)accel_signal_va(s));
	EXPECT_NE(NULL, strstr(noirq_log, want));
	accel_signal_destroy(s);
	accel_queue_destroy(q);
}

/*
 * Across devices: B's queue waits for an event of A's signal; nothing on
 * B runs until the host completes it. Then the other way round, device
 * to device: A's queue records an event after a DELAY and B's queue
 * waits for it, copying A's data over the link only afterwards.
 */
TEST_F(two, events_across_devices)
{
	struct accel_buffer *bdst, *asrc, *bimp, *bout;
	struct accel_queue *qa, *qb;
	struct accel_signal *sa;
	struct accel_event gate, eb, ea2, eb2;
	struct drm_vaccel_packet *p;
	uint64_t *out;
	unsigned int i, bad = 0;
	int fd;

	ASSERT_EQ(0, accel_queue_create(self->a, NULL, &qa));
	ASSERT_EQ(0, accel_queue_create(self->b, NULL, &qb));
	ASSERT_EQ(0, accel_signal_create(self->a, &sa));
	ASSERT_EQ(0, accel_buffer_create(self->b, 65536, ACCEL_BUFFER_HOST, &bdst));

	gate.signal = sa;
	gate.value = accel_signal_next(sa);
	ASSERT_EQ(0, accel_queue_wait_event(qb, &gate));
	p = accel_queue_get_packet(qb);
	accel_prep_fill(p, accel_buffer_va(bdst), 65536, 0x77, 8);
	ASSERT_EQ(0, accel_queue_record(qb, &eb));
	ASSERT_EQ(3, accel_queue_submit(qb));
	EXPECT_EQ(-ETIMEDOUT, accel_event_wait(&eb, 200000000));
	EXPECT_EQ(0, ((uint64_t *)accel_buffer_host(bdst))[0]);
	ASSERT_EQ(0, accel_event_signal(&gate));	/* SIGNAL_WRITE on A */
	ASSERT_EQ(0, accel_event_wait(&eb, 10 * SEC));
	EXPECT_EQ(0x77, ((uint64_t *)accel_buffer_host(bdst))[8191]);

	/* device to device, with data over the link: A -> B's memory */
	ASSERT_EQ(0, accel_buffer_create(self->a, 65536, 0, &asrc));
	ASSERT_EQ(0, accel_buffer_create(self->b, 65536, ACCEL_BUFFER_HOST, &bout));
	ASSERT_EQ(0, accel_buffer_export(bdst, 0, &fd));
	ASSERT_EQ(0, accel_buffer_import(self->a, fd, 0, &bimp));
	close(fd);
	/* B: wait for A, then copy what A wrote into bdst to bout */
	ASSERT_EQ(0, accel_queue_submit(qa));	/* nothing yet: 0 packets */
	p = accel_queue_get_packet(qa);
	accel_prep_delay(p, 100000000);
	p = accel_queue_get_packet(qa);
	accel_prep_fill(p, accel_buffer_va(asrc), 65536, 0x1234, 8);
	p = accel_queue_get_packet(qa);
	accel_prep_copy(p, accel_buffer_va(bimp), accel_buffer_va(asrc), 65536);
	ASSERT_EQ(0, accel_queue_record(qa, &ea2));
	ASSERT_EQ(0, accel_queue_wait_event(qb, &ea2));
	p = accel_queue_get_packet(qb);
	accel_prep_copy(p, accel_buffer_va(bout), accel_buffer_va(bdst), 65536);
	ASSERT_EQ(0, accel_queue_record(qb, &eb2));
	ASSERT_EQ(3, accel_queue_submit(qb));	/* B first: it must wait */
	ASSERT_EQ(4, accel_queue_submit(qa));
	{
		struct accel_event both[2] = { ea2, eb2 };

		ASSERT_EQ(0, accel_events_wait(both, 2, ACCEL_WAIT_ALL, 30 * SEC, NULL));
	}
	out = accel_buffer_host(bout);
	for (i = 0; i < 65536 / 8; i++)
		bad += out[i] != 0x1234;
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, accel_queue_status(qa, NULL, 0));
	EXPECT_EQ(0, accel_queue_status(qb, NULL, 0));

	accel_buffer_destroy(bimp);
	accel_buffer_destroy(bout);
	accel_buffer_destroy(asrc);
	accel_buffer_destroy(bdst);
	accel_signal_destroy(sa);
	accel_queue_destroy(qa);
	accel_queue_destroy(qb);
}

/* Teardown in any order: the device first, with everything still open. */
TEST_F(two, close_device_first)
{
	struct accel_buffer *buf;
	struct accel_queue *q;
	struct accel_signal *s;
	struct accel_event ev;
	void *map;

	ASSERT_EQ(0, accel_buffer_create(self->a, 1 << 20, ACCEL_BUFFER_HOST, &buf));
	ASSERT_EQ(0, accel_buffer_map(buf, &map));
	ASSERT_EQ(0, accel_queue_create(self->a, NULL, &q));
	ASSERT_EQ(0, accel_signal_create(self->a, &s));
	accel_prep_fill(accel_queue_get_packet(q), accel_buffer_va(buf), 1 << 20, 1, 8);
	ASSERT_EQ(0, accel_queue_record(q, &ev));
	ASSERT_EQ(2, accel_queue_submit(q));
	ASSERT_EQ(0, accel_event_wait(&ev, 10 * SEC));
	accel_device_close(self->a);	/* destroys q, s and buf too */
	self->a = NULL;
}

TEST_HARNESS_MAIN
