// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tracepoints: with events/vaccel enabled, running packets, a KICK, a WAIT
 * and a fault records every vaccel event with the right fields.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "vaccel_common.h"
#include "vaccel_queue_util.h"
#include "kselftest_harness.h"

#define TRACEFS	"/sys/kernel/tracing"

static char trace[1 << 20];

TEST(events)
{
	static const char *events[] = {
		"vaccel_doorbell:", "vaccel_kick:", "vaccel_packet_start:",
		"vaccel_packet_end:", "vaccel_wait_block:", "vaccel_wait_unblock:",
		"vaccel_fault:",
	};
	struct drm_vaccel_signal_write w = { .op = DRM_VACCEL_SIGNAL_SET, .value = 1 };
	struct drm_vaccel_packet p;
	struct drm_vaccel_kick k;
	struct bo ring, sig;
	unsigned int i;
	struct q q;
	int fd;

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	if (access(TRACEFS "/events/vaccel/enable", W_OK))
		SKIP(return, "tracefs is not mounted");
	ASSERT_EQ(0, vaccel_sysfs_write(TRACEFS "/tracing_on", "0"));
	fd = open(TRACEFS "/trace", O_WRONLY | O_TRUNC);	/* clears the buffer */
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, vaccel_sysfs_write(TRACEFS "/events/vaccel/enable", "1"));
	ASSERT_EQ(0, vaccel_sysfs_write(TRACEFS "/tracing_on", "1"));

	fd = vaccel_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bo_new(fd, RING_N * 64, 0, &ring));
	ASSERT_EQ(0, bo_new(fd, PAGE, DRM_VACCEL_BO_SIGNAL, &sig));
	ASSERT_EQ(0, vaccel_vm_bind(fd, ring.handle, DRM_VACCEL_VM_READ, 0, RING_VA, PAGE));
	ASSERT_EQ(0, vaccel_vm_bind(fd, sig.handle, VM_RW, 0, SIG_VA, PAGE));
	ASSERT_EQ(0, queue_new(fd, RING_VA, RING_N, (void *)ring.map, &q));
	p = pkt(DRM_VACCEL_PKT_WAIT, SIG_VA, 1, 0, 0);
	ASSERT_EQ(0, submit(fd, &q, &p, NULL));
	ASSERT_TRUE(wait_blocked(0, q.id, 30000));
	w.handle = sig.handle;
	ASSERT_EQ(0, ioctl(fd, DRM_IOCTL_VACCEL_SIGNAL_WRITE, &w));
	ASSERT_TRUE(drain(&q, 10000));
	k = (struct drm_vaccel_kick){ .queue_id = q.id };
	ASSERT_EQ(0, ioctl(fd, DRM_IOCTL_VACCEL_KICK, &k));
	p = pkt(DRM_VACCEL_PKT_NOP, 1, 0, 0, 0);	/* invalid */
	ASSERT_EQ(0, submit(fd, &q, &p, NULL));
	EXPECT_FALSE(drain(&q, 10000));

	ASSERT_EQ(0, vaccel_sysfs_write(TRACEFS "/tracing_on", "0"));
	ASSERT_LT(0, vaccel_read_file(TRACEFS "/trace", trace, sizeof(trace)));
	vaccel_sysfs_write(TRACEFS "/events/vaccel/enable", "0");
	vaccel_sysfs_write(TRACEFS "/tracing_on", "1");
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		EXPECT_NE(NULL, strstr(trace, events[i])) TH_LOG("no %s in the trace", events[i]);
	EXPECT_NE(NULL, strstr(trace, "vaccel_packet_start: dev=0"));
	EXPECT_NE(NULL, strstr(trace, "type=5"));		/* the WAIT */
	EXPECT_NE(NULL, strstr(trace, "code=1 index=1"));	/* BAD_PACKET at 1 */
	close(fd);
}

TEST_HARNESS_MAIN
