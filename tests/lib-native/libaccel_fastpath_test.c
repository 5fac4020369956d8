// SPDX-License-Identifier: MIT
/*
 * The raw queue path's promises, natively over the fake kernel backend
 * (fake_kmod.h): with room in the ring and the engine awake, taking a slot,
 * submitting and copying packets in with accel_queue_submit_packets() read
 * no clock and make no backend call (the stand-in for a syscall); the
 * flight recorder still records the submits (untimed), and slow-path
 * entries carry a time. The library is linked with
 * -Wl,--wrap=clock_gettime, so every clock read of the library is counted.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fake_kmod.h"
#include "kselftest_harness.h"

/* fake_kmod.h hides its bookkeeping from ThreadSanitizer; not built with it here. */
void AnnotateIgnoreSyncBegin(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreSyncEnd(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreReadsBegin(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreReadsEnd(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreWritesBegin(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreWritesEnd(const char *file, int line) { (void)file; (void)line; }
void AnnotateNewMemory(const char *file, int line, const volatile void *mem, size_t size)
{
	(void)file;
	(void)line;
	(void)mem;
	(void)size;
}

int __real_clock_gettime(clockid_t clk, struct timespec *ts);
int __wrap_clock_gettime(clockid_t clk, struct timespec *ts);

static unsigned long clock_reads, backend_calls;

int __wrap_clock_gettime(clockid_t clk, struct timespec *ts)
{
	clock_reads++;
	return __real_clock_gettime(clk, ts);
}

static int count_ioctl(int fd, unsigned long req, void *arg)
{
	backend_calls++;
	return f_ioctl(fd, req, arg);
}

static void *count_mmap(int fd, uint64_t offset, size_t len, int prot, int *err)
{
	backend_calls++;
	return f_mmap(fd, offset, len, prot, err);
}

TEST(no_clock_no_syscall_on_the_fast_path)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 4096 };
	struct drm_vaccel_packet pkts[64], *p;
	struct tp_ops ops = fake_ops;
	struct accel_device *dev;
	struct accel_queue *q;
	char text[4096];
	unsigned int i, n;

	ops.ioctl = ops.ioctl_once = count_ioctl;
	ops.mmap = count_mmap;
	fake_complete_all = true;
	ASSERT_EQ(0, acc_device_open_ops(&ops, "fake", &dev));
	ASSERT_EQ(0, accel_queue_create(dev, &qp, &q));
	for (i = 0; i < 64; i++)
		accel_prep_nop(&pkts[i]);
	/* the engine awake: a step clears need_wakeup (a new queue starts asleep) */
	fake_engine_step(1);
	clock_reads = backend_calls = 0;
	/* one packet per doorbell, then 64 per doorbell (progress marks included) */
	for (i = 0; i < 1000; i++) {
		ASSERT_NE(NULL, p = accel_queue_get_packet(q));
		accel_prep_nop(p);
		ASSERT_EQ(1, accel_queue_submit(q));
	}
	for (i = 0; i < 1000; i++) {
		ASSERT_NE(NULL, p = accel_queue_get_packet(q));
		accel_prep_nop(p);
		if (i % 64 == 63)
			ASSERT_LE(64, accel_queue_submit(q));
	}
	ASSERT_LE(40, accel_queue_submit(q));
	/* copied in: with room known, no clock even with a timeout */
	for (i = 0; i < 15; i++) {
		ASSERT_EQ(0, accel_queue_submit_packets(q, pkts, 64, 1000000000, &n));
		ASSERT_EQ(64, n);
	}
	EXPECT_EQ(0, clock_reads);
	EXPECT_EQ(0, backend_calls);
	/* the engine runs it all; a sync is the slow path: it reads the clock */
	while (fake_engine_step(4096))
		;
	ASSERT_EQ(0, accel_queue_sync(q, 1000000000));
	EXPECT_LT(0, clock_reads);
	/* the recorder has the submits (merged, untimed) and the timed sync */
	ASSERT_LT(0, accel_queue_describe(q, text, sizeof(text)));
	TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "- submit        packets="));
	EXPECT_NE(NULL, strstr(text, " sync "));
	/* the marks of get_packet and of submit_packets (ring indices 1024, 2049) */
	EXPECT_NE(NULL, strstr(text, "- mark          index=1024 "));
	EXPECT_NE(NULL, strstr(text, "- mark          index=2049 "));
	accel_queue_destroy(q);
	accel_device_close(dev);
}

/*
 * Check @text of accel_queue_describe(): its submit lines cover the write
 * indices in contiguous runs, each once, up to what the header says was
 * submitted; and each sync's write index (need-read) is where the lines
 * before it left off, so a run is recorded before the next entry, not
 * later. Return the number of submit lines, or -1.
 */
static int check_submit_runs(const char *text)
{
	unsigned long long total, n, w, prev = 0, last_w = 0;
	const char *s = strstr(text, "submitted "), *a;
	bool have_w = false;
	char op[32];
	int lines = 0;

	if (!s || sscanf(s, "submitted %llu", &total) != 1)
		return -1;
	/* the operations' lines: "<ms or -> <operation> <name>=<value> ..." */
	for (s = strchr(text, '\n'); s; s = strchr(s + 1, '\n')) {
		if (sscanf(s + 1, "%*s %31s", op) != 1)
			continue;
		if (!strcmp(op, "sync")) {
			a = strstr(s, "need-read=");
			if (!a || sscanf(a, "need-read=%llu", &w) != 1 || (have_w && w != last_w))
				return -1;
		} else if (!strcmp(op, "submit")) {
			a = strstr(s, "packets=");
			if (!a || sscanf(a, "packets=%llu write=%llu", &n, &w) != 2 || !n)
				return -1;
			/* each run follows the one before it; the oldest may be cut off */
			if (lines ? n != w - prev || w <= prev : n > w)
				return -1;
			prev = w;
			lines++;
		} else {
			continue;
		}
		last_w = w;
		have_w = true;
	}
	return total && prev != total ? -1 : lines;
}

/*
 * The recorder writes no entry per submit: a run of submits becomes one
 * entry before the next entry of another kind, and describe shows the
 * run not recorded yet. Random steps; after each, every packet submitted
 * is in exactly one run, and the last run ends at the write index.
 */
TEST(recorder_runs_cover_every_submit_once)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 256 };
	struct drm_vaccel_packet pkts[64], *p;
	struct accel_device *dev;
	struct accel_queue *q;
	unsigned int step, i, k, n, seed = 1;
	char text[8192];
	int lines, seen_pending = 0;

	fake_complete_all = true;
	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake", &dev));
	ASSERT_EQ(0, accel_queue_create(dev, &qp, &q));
	for (i = 0; i < 64; i++)
		accel_prep_nop(&pkts[i]);
	fake_engine_step(1);
	ASSERT_LT(0, accel_queue_describe(q, text, sizeof(text)));
	ASSERT_EQ(0, check_submit_runs(text));
	for (step = 0; step < 500; step++) {
		k = 1 + rand_r(&seed) % 40;
		switch (rand_r(&seed) % 4) {
		case 0:		/* one packet per doorbell */
			for (i = 0; i < k; i++) {
				ASSERT_NE(NULL, p = accel_queue_get_packet(q));
				accel_prep_nop(p);
				ASSERT_LE(1, accel_queue_submit(q));	/* 2 with a mark */
			}
			break;
		case 1:		/* k per doorbell (progress marks among them) */
			for (i = 0; i < k; i++) {
				ASSERT_NE(NULL, p = accel_queue_get_packet(q));
				accel_prep_nop(p);
			}
			ASSERT_LE(k, accel_queue_submit(q));
			break;
		case 2:
			ASSERT_EQ(0, accel_queue_submit_packets(q, pkts, k, 1000000000, &n));
			ASSERT_EQ(k, n);
			break;
		default:	/* a slow-path entry: records the run before it */
			while (fake_engine_step(4096))
				;
			ASSERT_EQ(0, accel_queue_sync(q, 1000000000));
			break;
		}
		while (fake_engine_step(4096))
			;
		ASSERT_LT(0, accel_queue_describe(q, text, sizeof(text)));
		lines = check_submit_runs(text);
		if (lines < 0)
			TH_LOG("step %u:\n%s", step, text);
		ASSERT_LE(0, lines);
		/* a run not recorded yet (after plain submits) is the last line */
		text[strlen(text) - 1] = '\0';		/* the final newline */
		seen_pending += strstr(strrchr(text, '\n'), " submit ") != NULL;
	}
	ASSERT_LT(0, seen_pending);
	accel_queue_destroy(q);
	accel_device_close(dev);
}

/*
 * Slots come zeroed although the fast path no longer zeroes them (the
 * slow path zeroes ACC_ZERO_AHEAD of them at once, lib/queue.c), and the
 * zeroing never reaches a packet not yet run: lap after lap of a small
 * ring, packets copied in by accel_queue_submit_packets() and slots taken
 * and filled by the program mixed at random, the engine stepped after
 * each round (so the ring is often nearly full when a chunk is zeroed),
 * every slot accel_queue_get_packet() returns is all zero bytes, and
 * every packet ran: each adds 1 to a signal, which ends at their number.
 */
TEST(taken_slots_are_zero_lap_after_lap)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 128 };
	struct drm_vaccel_packet pkts[64], *p;
	static const struct drm_vaccel_packet zero;
	struct accel_device *dev;
	struct accel_signal *sig;
	struct accel_queue *q;
	unsigned int step, i, k, n, seed = 11, taken = 0;
	uint64_t added = 0;

	fake_complete_all = true;
	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake", &dev));
	ASSERT_EQ(0, accel_queue_create(dev, &qp, &q));
	ASSERT_EQ(0, accel_signal_create(dev, &sig));
	for (i = 0; i < 64; i++)
		accel_prep_signal(&pkts[i], accel_signal_va(sig), DRM_VACCEL_SIGNAL_ADD, 1);
	fake_engine_step(1);
	for (step = 0; step < 3000; step++) {
		k = 1 + rand_r(&seed) % 40;
		switch (rand_r(&seed) % 3) {
		case 0:		/* non-zero packets copied into the ring */
			ASSERT_EQ(0, accel_queue_submit_packets(q, pkts, k, 1000000000, &n));
			added += n;
			break;
		default:	/* taken slots: zero, then the program writes them */
			for (i = 0; i < k; i++) {
				p = accel_queue_get_packet(q);
				if (!p)
					break;
				ASSERT_EQ(0, memcmp(p, &zero, sizeof(*p)));
				taken++;
				accel_prep_signal(p, accel_signal_va(sig), DRM_VACCEL_SIGNAL_ADD, 1);
				added++;
			}
			ASSERT_LE(0, accel_queue_submit(q));
			break;
		}
		while (fake_engine_step(rand_r(&seed) % 2 ? 4096 : 1 + rand_r(&seed) % 64))
			if (rand_r(&seed) % 2)
				break;	/* leave some packets for the next round */
		if (rand_r(&seed) % 4 == 0) {
			while (fake_engine_step(4096))
				;
			ASSERT_EQ(0, accel_queue_sync(q, 1000000000));
		}
	}
	while (fake_engine_step(4096))
		;
	ASSERT_EQ(0, accel_queue_sync(q, 1000000000));
	TH_LOG("%u slots taken, %llu packets in all (%llu laps of the ring)", taken,
	       (unsigned long long)accel_queue_submitted(q),
	       (unsigned long long)(accel_queue_submitted(q) / 128));
	EXPECT_LT(10000, taken);
	EXPECT_EQ(added, accel_signal_read(sig));
	accel_signal_destroy(sig);
	accel_queue_destroy(q);
	accel_device_close(dev);
}

/*
 * The asymmetric fence (lib/membarrier.c): a queue of a backend whose
 * engines call membarrier() before they sleep skips the submitter's
 * fence; the module's (no asym_doorbell) and a queue made under the test
 * hook keep it. The fake's engine thread calls membarrier() on its way to
 * every sleep. Then submitters race the engine going to sleep: every
 * doorbell must be seen, without a KICK the submitter did not send (a
 * lost doorbell leaves the fake's engine asleep until the next one).
 */
TEST(light_fence_only_where_the_engine_fences_for_the_submitter)
{
	struct fake_engine_params ep = { .seed = 7, .poll_ns = 0, .max_burst = 4 };
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 256 };
	struct tp_ops ops = fake_ops;
	struct accel_device *dev, *dev_mod;
	struct accel_queue *q, *q_full, *q_mod;
	uint64_t sleeps0, mb0, late = 0, worst = 0;
	unsigned int i, seed = 3;
	struct drm_vaccel_packet *p;

	if (!acc_membarrier_ready())
		SKIP(return, "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is not available here");
	fake_complete_all = true;
	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake", &dev));
	ASSERT_EQ(0, accel_queue_create(dev, &qp, &q));
	EXPECT_TRUE(acc_queue_light_fence(q));
	ASSERT_EQ(0, accel_queue_create(dev, &qp, &q_full));
	acc_test_queue_full_fence(q_full, true);
	EXPECT_FALSE(acc_queue_light_fence(q_full));
	ops.asym_doorbell = NULL;	/* as the module's transport */
	ASSERT_EQ(0, acc_device_open_ops(&ops, "fake1", &dev_mod));
	ASSERT_EQ(0, accel_queue_create(dev_mod, &qp, &q_mod));
	EXPECT_FALSE(acc_queue_light_fence(q_mod));
	acc_test_queue_full_fence(q_mod, false);	/* not where the backend does not offer it */
	EXPECT_FALSE(acc_queue_light_fence(q_mod));
	accel_queue_destroy(q_mod);
	accel_device_close(dev_mod);

	ASSERT_EQ(0, fake_engine_start(&ep));
	sleeps0 = __atomic_load_n(&fake_sleeps, __ATOMIC_RELAXED);
	mb0 = atomic_load(&acc_membarriers);
	for (i = 0; i < 20000; i++) {
		struct accel_queue *qq = i & 1 ? q_full : q;
		uint64_t want, t0;
		unsigned int spin = rand_r(&seed) % 4000;

		/* land the doorbell anywhere around the engine's way to sleep */
		while (spin--)
			__asm__ __volatile__("" ::: "memory");
		ASSERT_NE(NULL, p = accel_queue_get_packet(qq));
		accel_prep_nop(p);
		ASSERT_LE(1, accel_queue_submit(qq));
		want = accel_queue_submitted(qq);
		t0 = fake_clock();
		/* no wait call: it could kick; the read index alone must move */
		while (accel_queue_completed(qq) < want && fake_clock() - t0 < 2000000000ull)
			sched_yield();
		if (accel_queue_completed(qq) < want)
			late++;
		if (fake_clock() - t0 > worst)
			worst = fake_clock() - t0;
	}
	TH_LOG("%llu engine sleeps, %llu membarriers, slowest pick-up %llu us",
	       (unsigned long long)(__atomic_load_n(&fake_sleeps, __ATOMIC_RELAXED) - sleeps0),
	       (unsigned long long)(atomic_load(&acc_membarriers) - mb0),
	       (unsigned long long)(worst / 1000));
	EXPECT_EQ(0, late);
	EXPECT_LT(0, __atomic_load_n(&fake_sleeps, __ATOMIC_RELAXED) - sleeps0);
	EXPECT_LE(__atomic_load_n(&fake_sleeps, __ATOMIC_RELAXED) - sleeps0,
		  atomic_load(&acc_membarriers) - mb0);
	fake_engine_stop();
	accel_queue_destroy(q_full);
	accel_queue_destroy(q);
	accel_device_close(dev);
}

TEST_HARNESS_MAIN
