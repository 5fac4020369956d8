// SPDX-License-Identifier: MIT
/*
 * accel_strerror(), accel_fault_name() and accel_packet_describe() for
 * every code and packet type, and the log levels (accel_log_set_level(),
 * ACCEL_DEBUG, handlers).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <accel/accel.h>
#include "internal.h"
#include "kselftest_harness.h"

TEST(strerror_every_code)
{
	static const int codes[] = {
		EINVAL, ENOMEM, ENOSPC, ENODEV, EIO, ETIMEDOUT, EAGAIN, ECANCELED, EPROTO,
		EACCES, EPERM, E2BIG, EBADF, EMFILE, ENFILE, ENOENT, EBUSY, EFAULT, ENXIO,
		ERANGE, EOVERFLOW, EINTR, EOPNOTSUPP, ECHILD, EDEADLK, ENOTTY,
	};
	unsigned int i, j;

	EXPECT_STREQ("success", accel_strerror(0));
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *s = accel_strerror(-codes[i]);

		ASSERT_NE(NULL, s);
		EXPECT_STRNE("unknown error", s);
		EXPECT_EQ(s, accel_strerror(codes[i]));	/* positive: the same */
		for (j = 0; j < i; j++)
			EXPECT_STRNE(s, accel_strerror(-codes[j]));
	}
	EXPECT_NE(NULL, strstr(accel_strerror(-EIO), "accel_queue_describe"));
	EXPECT_NE(NULL, strstr(accel_strerror(-ENODEV), "removed"));
	EXPECT_STREQ("unknown error", accel_strerror(-EHWPOISON));
	EXPECT_STREQ("unknown error", accel_strerror(-100000));
	/* any int: -INT_MIN does not exist (UBSan stops the test if it is computed) */
	EXPECT_STREQ("unknown error", accel_strerror(INT_MIN));
	EXPECT_STREQ("unknown error", accel_strerror(INT_MAX));
	/* -E2BIG names its four causes */
	EXPECT_NE(NULL, strstr(accel_strerror(-E2BIG), "capacity"));
	EXPECT_NE(NULL, strstr(accel_strerror(-E2BIG), "ring"));
	EXPECT_NE(NULL, strstr(accel_strerror(-E2BIG), "output heap"));
	EXPECT_NE(NULL, strstr(accel_strerror(-E2BIG), "size field"));
	EXPECT_NE(NULL, strstr(accel_strerror(-ECHILD), "fork()"));
	EXPECT_NE(NULL, strstr(accel_strerror(-EDEADLK), "heap"));
}

TEST(fault_names)
{
	static const char *const names[] = {
		"NONE", "BAD_PACKET", "UNMAPPED", "ACCESS", "ALIGNMENT", "NOT_SIGNAL",
		"NOT_SEALED", "EXEC_DEPTH", "WAIT_TIMEOUT", "DOORBELL", "INJECTED", "RESET",
		"BINDING", "REMOVED",
	};
	unsigned int i;

	ASSERT_EQ(DRM_VACCEL_FAULT_REMOVED + 1, sizeof(names) / sizeof(names[0]));
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		EXPECT_STREQ(names[i], accel_fault_name(i));
	EXPECT_STREQ("UNMAPPED", accel_fault_name(DRM_VACCEL_FAULT_UNMAPPED));
	EXPECT_STREQ("?", accel_fault_name(DRM_VACCEL_FAULT_REMOVED + 1));
	EXPECT_STREQ("?", accel_fault_name(0xffffffffu));
}

static void describe(struct drm_vaccel_packet *p, char *buf, size_t len, int *n)
{
	*n = accel_packet_describe(p, buf, len);
}

TEST(describe_every_type)
{
	struct drm_vaccel_packet p;
	char buf[512];
	int n;

	accel_prep_nop(&p);
	describe(&p, buf, sizeof(buf), &n);
	EXPECT_STREQ("NOP", buf);
	EXPECT_EQ(3, n);

	accel_prep_copy(&p, 0x1000, 0x2000, 4096);
	describe(&p, buf, sizeof(buf), &n);
	EXPECT_STREQ("COPY dst=0x1000 src=0x2000 bytes=4096", buf);

	accel_prep_fill(&p, 0x3000, 64, 0xab, 1);
	describe(&p, buf, sizeof(buf), &n);
	EXPECT_STREQ("FILL dst=0x3000 bytes=64 pattern=0xab width=1", buf);

	accel_prep_reduce(&p, 0xc000, 0xa000, 0xb000, 8, DRM_VACCEL_DTYPE_I32,
			  DRM_VACCEL_REDOP_SUM);
	describe(&p, buf, sizeof(buf), &n);
	EXPECT_STREQ("REDUCE dst=0xc000 a=0xa000 b=0xb000 count=8 dtype=I32 op=SUM", buf);

	accel_prep_signal(&p, 0x5040, DRM_VACCEL_SIGNAL_MAX, 7);
	accel_prep_irq(&p);
	describe(&p, buf, sizeof(buf), &n);
	EXPECT_STREQ("SIGNAL signal=0x5040 MAX 7 IRQ", buf);

	accel_prep_wait(&p, 0x5040, DRM_VACCEL_WAIT_GE, 7, 0, 1000);
	describe(&p, buf, sizeof(buf), &n);
	EXPECT_STREQ("WAIT signal=0x5040 GE 7 timeout=1000ns", buf);

	accel_prep_exec(&p, 0x70000, 12, 5);
	accel_prep_exec_bindings(&p, 0x80000, 2);
	describe(&p, buf, sizeof(buf), &n);
	EXPECT_STREQ("EXEC body=0x70000 packets=12 epoch=5 bindings=2 table=0x80000", buf);

	accel_prep_timestamp(&p, 0x9008);
	describe(&p, buf, sizeof(buf), &n);
	EXPECT_STREQ("TIMESTAMP dst=0x9008", buf);

	accel_prep_delay(&p, 1000);
	describe(&p, buf, sizeof(buf), &n);
	EXPECT_STREQ("DELAY ns=1000", buf);

	accel_prep_matmul(&p, 0xd000, DRM_VACCEL_DTYPE_F16, DRM_VACCEL_MATMUL_F_ACCUMULATE);
	describe(&p, buf, sizeof(buf), &n);
	EXPECT_STREQ("MATMUL desc=0xd000 dtype=F16 flags=0x1", buf);

	accel_prep_copy(&p, 0x1000, 0x2000, 8);
	accel_prep_completion(&p, 0x5000, DRM_VACCEL_SIGNAL_ADD, 1);
	describe(&p, buf, sizeof(buf), &n);
	EXPECT_STREQ("COPY dst=0x1000 src=0x2000 bytes=8 then ADD 0x5000 1", buf);

	accel_prep_packet(&p, 0x3f);
	p.operand[0] = 1;
	describe(&p, buf, sizeof(buf), &n);
	EXPECT_STREQ("?(type 63) arg=0 operands=0x1,0x0,0x0,0x0", buf);
}

TEST(describe_truncates_like_snprintf)
{
	struct drm_vaccel_packet p;
	char buf[8];
	int full;

	accel_prep_copy(&p, 0x1000, 0x2000, 4096);
	full = accel_packet_describe(&p, NULL, 0);
	EXPECT_EQ((int)strlen("COPY dst=0x1000 src=0x2000 bytes=4096"), full);
	memset(buf, 'x', sizeof(buf));
	EXPECT_EQ(full, accel_packet_describe(&p, buf, sizeof(buf)));
	EXPECT_STREQ("COPY ds", buf);
	EXPECT_EQ(-EINVAL, accel_packet_describe(NULL, buf, sizeof(buf)));
}

static char logged[8][600];
static int nlogged, levels[8];

static void capture(int level, const char *msg, void *arg)
{
	*(int *)arg += 1;
	if (nlogged < 8) {
		levels[nlogged] = level;
		snprintf(logged[nlogged++], sizeof(logged[0]), "%s", msg);
	}
}

TEST(log_levels)
{
	int calls = 0;

	unsetenv("ACCEL_DEBUG");
	EXPECT_EQ(ACCEL_LOG_NONE, accel_log_get_level());	/* default: nothing */
	accel_log_set_handler(capture, &calls);
	acc_err("not shown %d", 1);
	EXPECT_EQ(0, calls);
	accel_log_set_level(ACCEL_LOG_WARN);
	EXPECT_EQ(ACCEL_LOG_WARN, accel_log_get_level());
	acc_err("an error on queue %u", 3);
	acc_warn("a warning");
	acc_info("info, not shown");
	acc_trace("trace, not shown");
	EXPECT_EQ(2, calls);
	EXPECT_STREQ("an error on queue 3", logged[0]);
	EXPECT_EQ(ACCEL_LOG_ERROR, levels[0]);
	EXPECT_EQ(ACCEL_LOG_WARN, levels[1]);
	accel_log_set_level(ACCEL_LOG_TRACE);
	acc_info("info");
	acc_trace("trace");
	EXPECT_EQ(4, calls);
	EXPECT_EQ(ACCEL_LOG_TRACE, levels[3]);
	EXPECT_EQ(NULL, strchr(logged[3], '\n'));
	accel_log_set_level(99);
	EXPECT_EQ(ACCEL_LOG_TRACE, accel_log_get_level());
	accel_log_set_level(-5);
	EXPECT_EQ(ACCEL_LOG_NONE, accel_log_get_level());
	acc_err("none");
	EXPECT_EQ(4, calls);
	accel_log_set_handler(NULL, NULL);
}

/* The harness forks each variant: the library reads ACCEL_DEBUG afresh. */
FIXTURE(accel_debug) {};
FIXTURE_SETUP(accel_debug) {}
FIXTURE_TEARDOWN(accel_debug) {}

FIXTURE_VARIANT(accel_debug) {
	const char *value;
	int level;
};

FIXTURE_VARIANT_ADD(accel_debug, info) { .value = "info", .level = ACCEL_LOG_INFO };
FIXTURE_VARIANT_ADD(accel_debug, trace_upper_case) { .value = "TRACE", .level = ACCEL_LOG_TRACE };
FIXTURE_VARIANT_ADD(accel_debug, number) { .value = "1", .level = ACCEL_LOG_ERROR };
FIXTURE_VARIANT_ADD(accel_debug, garbage) { .value = "loud", .level = ACCEL_LOG_NONE };

TEST_F(accel_debug, level)
{
	setenv("ACCEL_DEBUG", variant->value, 1);
	EXPECT_EQ(variant->level, accel_log_get_level());
}

TEST(spin_budget)
{
	setenv("ACCEL_SPIN_NS", "12345", 1);
	EXPECT_EQ(12345, acc_spin_ns());
}

TEST(spin_budget_default)
{
	unsetenv("ACCEL_SPIN_NS");
	EXPECT_EQ(20000, acc_spin_ns());
}

TEST(version)
{
	EXPECT_EQ(ACCEL_VERSION_MAJOR, accel_version_major());
	EXPECT_EQ(ACCEL_VERSION_MINOR, accel_version_minor());
	EXPECT_TRUE(ACCEL_CHECK_VERSION(0, 1));
	EXPECT_TRUE(ACCEL_CHECK_VERSION(1, 0));
	EXPECT_TRUE(ACCEL_CHECK_VERSION(1, ACCEL_VERSION_MINOR));
	EXPECT_FALSE(ACCEL_CHECK_VERSION(1, ACCEL_VERSION_MINOR + 1));
	EXPECT_FALSE(ACCEL_CHECK_VERSION(2, 0));
}

TEST_HARNESS_MAIN
