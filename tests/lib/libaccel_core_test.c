// SPDX-License-Identifier: GPL-2.0-only
/*
 * libaccel smoke test in the VM, linked statically against libaccel.a:
 * open and query, buffers, a fill/copy/signal queue with an event wait and
 * a data check, 10,000 packets through a 64-slot ring (full-ring waits),
 * events across two devices, a faulted queue's report, teardown in any
 * order, and calls after the device is removed.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <pthread.h>
#include <sched.h>

#include <accel/accel.h>

/* white-box tests of the internal buffer references and the test hooks */
#include "../../lib/internal.h"
#include "libaccel_test.h"
#include "kselftest_harness.h"

/*
 * libaccel_core_asan_test is this file built with ASan and UBSan (and the
 * library's sources): each test ends with a leak check, since the harness
 * ends its test processes with _exit(), before LeakSanitizer's own check.
 */
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define NO_LEAKS() EXPECT_EQ(0, __lsan_do_recoverable_leak_check())
#else
#define NO_LEAKS() do { } while (0)
#endif

#define ID_A	(VACCEL_TEST_ID + 10)
#define ID_B	(VACCEL_TEST_ID + 11)

/* Create bus device @id and open it through the library. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int open_new(unsigned int id, const char *spec, struct accel_device **dev)
{
	char buf[128], path[300];
	int ret;

	lib_del_device(id);
	snprintf(buf, sizeof(buf), "%u %s", id, spec ? spec : "");
	ret = lib_new_device(buf);
	if (ret)
		return ret;
	ret = lib_node_path(id, path, sizeof(path));
	if (ret)
		return ret;
	return accel_device_open_path(path, dev);
}

TEST(open_and_query)
{
	struct accel_device_info list[64];
	struct accel_device_props props = { .size = sizeof(props) };
	struct accel_device *dev, *devs[2];
	struct accel_link m[4];
	uint64_t used;
	int n;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	n = accel_device_list(list, 64, sizeof(*list));
	ASSERT_GE(n, 1);
	if (lib_on_sim()) {
		ASSERT_EQ(0, strncmp(list[0].path, "sim:", 4));
	} else {
		ASSERT_EQ(0, strncmp(list[0].path, "/dev/accel/accel", 16));
	}
	ASSERT_EQ(0, accel_device_open(0, &dev));
	ASSERT_EQ(0, accel_device_query(dev, &props));
	EXPECT_EQ(list[0].id, props.id);
	EXPECT_GE(props.uapi_version, ACCEL_MIN_UAPI_VERSION);
	EXPECT_GE(props.engines, 1);
	EXPECT_EQ(1ull << 32, props.va_start);
	EXPECT_GT(props.memory_capacity, 0);
	EXPECT_EQ(64, props.max_queues);
	EXPECT_EQ(0, accel_device_memory_used(dev, &used));
	EXPECT_EQ(-ENODEV, accel_device_open((unsigned int)n, &devs[0]));
	props.size = 4;
	EXPECT_EQ(-EINVAL, accel_device_query(dev, &props));
	devs[0] = dev;
	ASSERT_EQ(0, accel_device_open(0, &devs[1]));
	ASSERT_EQ(0, accel_device_topology(devs, 2, m, sizeof(*m)));
	EXPECT_TRUE(m[0].local);
	EXPECT_TRUE(m[1].local);	/* the same device opened twice */
	accel_device_close(devs[1]);
	accel_device_close(dev);
	NO_LEAKS();
}

TEST(fill_copy_signal_wait)
{
	struct accel_buffer *a, *b;
	struct accel_signal *sig;
	struct accel_device *dev;
	struct drm_vaccel_packet *p;
	struct accel_queue *q;
	struct accel_event ev, done;
	uint64_t *host, used0, used1, v;
	void *map;
	size_t i;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, accel_device_open(0, &dev));
	ASSERT_EQ(0, accel_device_memory_used(dev, &used0));
	ASSERT_EQ(0, accel_buffer_create(dev, 1 << 20, 0, &a));
	ASSERT_EQ(0, accel_buffer_create(dev, 1 << 20, ACCEL_BUFFER_HOST, &b));
	ASSERT_EQ(0, accel_device_memory_used(dev, &used1));
	EXPECT_GE(used1 - used0, 2 << 20);
	EXPECT_EQ(0, accel_buffer_va(a) % (1 << 20));	/* size-aligned */
	ASSERT_NE(NULL, accel_buffer_host(b));
	ASSERT_EQ(0, accel_buffer_map(b, &map));
	EXPECT_EQ(accel_buffer_host(b), map);
	ASSERT_EQ(0, accel_signal_create(dev, &sig));
	ASSERT_EQ(0, accel_queue_create(dev, NULL, &q));

	v = accel_signal_next(sig);
	ASSERT_NE(NULL, p = accel_queue_get_packet(q));
	accel_prep_fill(p, accel_buffer_va(a), 1 << 20, 0x0123456789abcdefull, 8);
	ASSERT_NE(NULL, p = accel_queue_get_packet(q));
	accel_prep_copy(p, accel_buffer_va(b), accel_buffer_va(a), 1 << 20);
	accel_prep_completion(p, accel_signal_va(sig), DRM_VACCEL_SIGNAL_MAX, v);
	accel_prep_irq(p);
	ASSERT_EQ(0, accel_queue_record(q, &done));
	ASSERT_EQ(3, accel_queue_submit(q));
	ev.signal = sig;
	ev.value = v;
	ASSERT_EQ(0, accel_event_wait(&ev, 10ll * 1000000000));
	EXPECT_TRUE(accel_event_done(&ev));
	ASSERT_EQ(0, accel_event_wait(&done, 10ll * 1000000000));
	host = map;
	for (i = 0; i < (1 << 20) / 8; i++)
		if (host[i] != 0x0123456789abcdefull)
			break;
	EXPECT_EQ((1 << 20) / 8, i);
	EXPECT_EQ(0, accel_queue_sync(q, 10ll * 1000000000));
	EXPECT_EQ(accel_queue_submitted(q), accel_queue_completed(q));
	EXPECT_EQ(0, accel_queue_status(q, NULL, 0));

	/* host writes and a timed-out wait */
	ev.value = accel_signal_next(sig);
	EXPECT_EQ(-ETIMEDOUT, accel_event_wait(&ev, 1000000));
	EXPECT_EQ(0, accel_event_signal(&ev));
	EXPECT_EQ(0, accel_event_wait(&ev, 0));
	EXPECT_EQ(ev.value, accel_signal_read(sig));

	accel_queue_destroy(q);
	accel_signal_destroy(sig);
	accel_buffer_destroy(a);
	accel_buffer_destroy(b);
	accel_device_close(dev);
	NO_LEAKS();
}

/* 10,000 packets through a 64-slot ring: the submitter waits for room. */
TEST(ten_thousand_through_64)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 64 };
	struct drm_vaccel_packet batch[100];
	struct accel_signal *count;
	struct accel_device *dev;
	struct drm_vaccel_packet *p;
	struct accel_queue *q;
	struct accel_event ev;
	uint64_t base;
	int i, j, full = 0;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, accel_device_open(0, &dev));
	ASSERT_EQ(0, accel_queue_create(dev, &qp, &q));
	ASSERT_EQ(0, accel_signal_create(dev, &count));
	base = accel_signal_read(count);
	/* 5,000 one at a time, waiting for room when the ring is full */
	for (i = 0; i < 5000; i++) {
		while (!(p = accel_queue_get_packet(q))) {
			full++;
			ASSERT_LE(0, accel_queue_submit(q));
			ASSERT_EQ(0, accel_queue_reserve(q, 1, 10ll * 1000000000));
		}
		accel_prep_delay(p, 1000);
		accel_prep_completion(p, accel_signal_va(count), DRM_VACCEL_SIGNAL_ADD, 1);
		if (i % 16 == 15)
			ASSERT_LE(0, accel_queue_submit(q));
	}
	ASSERT_LE(0, accel_queue_submit(q));
	EXPECT_GT(full, 0);
	/* 5,000 more, 100 at a time through submit_packets */
	for (i = 0; i < 50; i++) {
		for (j = 0; j < 100; j++) {
			accel_prep_nop(&batch[j]);
			accel_prep_completion(&batch[j], accel_signal_va(count),
					      DRM_VACCEL_SIGNAL_ADD, 1);
		}
		ASSERT_EQ(0, accel_queue_submit_packets(q, batch, 100, 10ll * 1000000000, NULL));
	}
	ASSERT_EQ(0, accel_queue_sync(q, 30ll * 1000000000));
	EXPECT_EQ(base + 10000, accel_signal_read(count));
	EXPECT_GE(accel_queue_submitted(q), 10000);
	EXPECT_EQ(accel_queue_submitted(q), accel_queue_completed(q));
	/* the timeline says so too */
	ASSERT_EQ(0, accel_queue_record(q, &ev));
	ASSERT_LE(1, accel_queue_submit(q));	/* 2 if a progress mark was due */
	EXPECT_EQ(0, accel_event_wait(&ev, 10ll * 1000000000));
	/* reserve: bad sizes and no-wait */
	EXPECT_EQ(-EINVAL, accel_queue_reserve(q, 65, 0));
	EXPECT_EQ(0, accel_queue_reserve(q, 4, 0));
	accel_signal_destroy(count);
	accel_queue_destroy(q);
	accel_device_close(dev);
	NO_LEAKS();
}

/* A queue of device A waits for an event of device B (signal import). */
TEST(cross_device_events)
{
	struct accel_device *a, *b;
	struct accel_signal *sa, *sb;
	struct accel_queue *qa;
	struct drm_vaccel_packet *p;
	struct accel_event evb, eva, both[2];
	unsigned int first = 99;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, open_new(ID_A, NULL, &a));
	ASSERT_EQ(0, open_new(ID_B, NULL, &b));
	ASSERT_EQ(0, accel_signal_create(a, &sa));
	ASSERT_EQ(0, accel_signal_create(b, &sb));
	ASSERT_EQ(0, accel_queue_create(a, NULL, &qa));
	evb.signal = sb;
	evb.value = accel_signal_next(sb);
	eva.signal = sa;
	eva.value = accel_signal_next(sa);
	ASSERT_EQ(0, accel_queue_wait_event(qa, &evb));
	ASSERT_NE(NULL, p = accel_queue_get_packet(qa));
	accel_prep_signal(p, accel_signal_va(sa), DRM_VACCEL_SIGNAL_MAX, eva.value);
	accel_prep_irq(p);
	ASSERT_EQ(2, accel_queue_submit(qa));
	EXPECT_EQ(-ETIMEDOUT, accel_event_wait(&eva, 20000000));
	EXPECT_EQ(0, accel_event_signal(&evb));
	EXPECT_EQ(0, accel_event_wait(&eva, 10ll * 1000000000));
	/* any/all over two devices (the sleep imports b's page into a) */
	both[0] = eva;
	both[1] = evb;
	both[1].value = accel_signal_next(sb);
	EXPECT_EQ(0, accel_events_wait(both, 2, 0, 1000000000, &first));
	EXPECT_EQ(0, first);
	EXPECT_EQ(-ETIMEDOUT, accel_events_wait(both, 2, ACCEL_WAIT_ALL, 20000000, NULL));
	EXPECT_EQ(0, accel_event_signal(&both[1]));
	EXPECT_EQ(0, accel_events_wait(both, 2, ACCEL_WAIT_ALL, 1000000000, NULL));
	EXPECT_EQ(-EINVAL, accel_events_wait(both, 0, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, accel_events_wait(both, 2, 0x80, 0, NULL));
	/* close a before its objects, b with its signal still open */
	accel_device_close(a);
	accel_device_close(b);
	lib_del_device(ID_A);
	lib_del_device(ID_B);
	NO_LEAKS();
}

/*
 * Back-to-back transfers over the link model run at the link's rate: 60
 * COPYs of 64 KiB into a peer's memory at 250 MB/s are 15.7 ms of link
 * time, and a queue that goes straight from one to the next is busy for
 * that, not for that plus the time each COPY took and the engine's late
 * wake-up after each busy period. The wake-ups' lateness is measured in
 * the same run: 60 DELAYs of one COPY's link time each (a DELAY starts
 * when its step runs, so a chain of them adds every late wake-up, as the
 * COPYs did before: about 100 us each on the in-process device, 235 us in
 * the TCG VM). The COPYs must save at least half of what they can: the
 * lateness up to one COPY's link time per COPY, plus 2 ms for the
 * submission (scaled by KSFT_TIMEOUT_SCALE on the debug kernel). The
 * rounds alternate, best of 5 each, so that the load of the moment falls
 * on both; and the floor says nothing got cheaper than the link.
 */
static uint64_t timed_chain(struct accel_queue *q, bool copies, uint64_t dst, uint64_t src,
			    unsigned int n, uint64_t sz, uint64_t delay_ns)
{
	uint64_t t0 = now_ns();
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct drm_vaccel_packet *p = accel_queue_get_packet(q);

		if (!p)
			return 0;
		if (copies)
			accel_prep_copy(p, dst, src, sz);
		else
			accel_prep_delay(p, delay_ns);
	}
	if (accel_queue_submit(q) < (int)n || accel_queue_sync(q, 10ll * 1000000000))
		return 0;
	return now_ns() - t0;
}

TEST(peer_copies_run_at_the_link_rate)
{
	enum { N = 60, SZ = 64 << 10 };
	uint64_t step_ns = (uint64_t)SZ * 1000 / 250, link_ns = N * step_ns;
	uint64_t t, best = UINT64_MAX, dbest = UINT64_MAX, scale, late, save;
	struct accel_buffer *src, *dst, *imp;
	struct accel_device *a, *b;
	struct accel_queue *q;
	unsigned int round;
	int fd;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, open_new(ID_A, "memory=64M link_bw_mbps=250", &a));
	ASSERT_EQ(0, open_new(ID_B, "memory=64M", &b));
	ASSERT_EQ(0, accel_buffer_create(a, SZ, ACCEL_BUFFER_HOST, &src));
	ASSERT_EQ(0, accel_buffer_create(b, SZ, ACCEL_BUFFER_HOST, &dst));
	ASSERT_EQ(0, accel_buffer_export(dst, 0, &fd));
	ASSERT_EQ(0, accel_buffer_import(a, fd, 0, &imp));
	close(fd);
	ASSERT_EQ(0, accel_queue_create(a, NULL, &q));
	memset(accel_buffer_host(src), 0x6b, SZ);
	for (round = 0; round < 5; round++) {
		t = timed_chain(q, false, 0, 0, N, 0, step_ns);
		ASSERT_NE(0, t);
		dbest = t < dbest ? t : dbest;
		t = timed_chain(q, true, accel_buffer_va(imp), accel_buffer_va(src), N, SZ, 0);
		ASSERT_NE(0, t);
		TH_LOG("round %u: %u x %u KiB to the peer %.2f ms, %u DELAYs %.2f ms; link time "
		       "%.2f ms", round, N, SZ >> 10, t / 1e6, N, dbest / 1e6, link_ns / 1e6);
		EXPECT_LE(link_ns, t);
		best = t < best ? t : best;
	}
	/* the wake-ups' lateness per step, and what the COPYs can save of it */
	late = dbest > link_ns ? (dbest - link_ns) / N : 0;
	save = N * (late < step_ns ? late : step_ns);
	scale = getenv("KSFT_TIMEOUT_SCALE") ? strtoull(getenv("KSFT_TIMEOUT_SCALE"), NULL, 0) : 1;
	TH_LOG("late %llu us per step: the COPYs' excess %.2f ms, at most %.2f ms",
	       (unsigned long long)late / 1000, (best - link_ns) / 1e6,
	       (N * late - save / 2 + 2000000 * (scale ? scale : 1)) / 1e6);
	EXPECT_GE(N * late - save / 2 + 2000000 * (scale ? scale : 1), best - link_ns);
	EXPECT_EQ(0x6b, ((unsigned char *)accel_buffer_host(dst))[SZ - 1]);
	accel_queue_destroy(q);
	accel_buffer_destroy(imp);
	accel_buffer_destroy(src);
	accel_buffer_destroy(dst);
	accel_device_close(a);
	accel_device_close(b);
	lib_del_device(ID_A);
	lib_del_device(ID_B);
	NO_LEAKS();
}

/* A faulted queue: the report names the fault, the packet and the address. */
TEST(faulted_queue_report)
{
	struct accel_queue_fault f;
	struct accel_buffer *buf;
	struct accel_device *dev;
	struct drm_vaccel_packet *p;
	struct accel_queue *q;
	char text[4096], want[64];
	uint64_t bad;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, accel_device_open(0, &dev));
	ASSERT_EQ(0, accel_buffer_create(dev, 4096, 0, &buf));
	ASSERT_EQ(0, accel_queue_create(dev, NULL, &q));
	bad = accel_buffer_va(buf) + (1ull << 30);	/* nothing is bound there */
	ASSERT_NE(NULL, p = accel_queue_get_packet(q));
	accel_prep_nop(p);
	ASSERT_NE(NULL, p = accel_queue_get_packet(q));
	accel_prep_copy(p, bad, accel_buffer_va(buf), 4096);
	ASSERT_EQ(2, accel_queue_submit(q));
	EXPECT_EQ(-EIO, accel_queue_sync(q, 10ll * 1000000000));
	ASSERT_EQ(-EIO, accel_queue_status(q, &f, sizeof(f)));
	EXPECT_EQ(DRM_VACCEL_FAULT_UNMAPPED, f.code);
	EXPECT_EQ(1, f.ring_index);
	EXPECT_EQ(bad, f.addr);
	EXPECT_EQ(DRM_VACCEL_PKT_COPY, f.packet.header & DRM_VACCEL_PKT_TYPE_MASK);
	EXPECT_EQ(-EIO, accel_queue_submit(q));
	ASSERT_GT(accel_queue_describe(q, text, sizeof(text)), 0);
	TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "UNMAPPED"));
	EXPECT_NE(NULL, strstr(text, "ring index 1"));
	snprintf(want, sizeof(want), "COPY dst=0x%llx", (unsigned long long)bad);
	EXPECT_NE(NULL, strstr(text, want));
	snprintf(want, sizeof(want), "address 0x%llx", (unsigned long long)bad);
	EXPECT_NE(NULL, strstr(text, want));
	EXPECT_NE(NULL, strstr(text, "submit"));
	accel_device_close(dev);	/* the queue and buffer go with it */
	NO_LEAKS();
}

/* Buffers: seal, export/import dedup, read-only export. */
TEST(buffer_sharing)
{
	struct accel_buffer *pb, *imp, *imp2, *ro;
	struct accel_device *dev, *other;
	void *map, *host;
	int fd, rofd;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, accel_device_open(0, &dev));
	ASSERT_EQ(0, open_new(ID_A, NULL, &other));
	ASSERT_EQ(0, accel_buffer_create(dev, 8192, ACCEL_BUFFER_PERSISTENT | ACCEL_BUFFER_HOST,
					 &pb));
	memset(accel_buffer_host(pb), 0x5a, 8192);
	ASSERT_EQ(0, accel_buffer_export(pb, 0, &fd));
	ASSERT_EQ(0, accel_buffer_import(other, fd, 0, &imp));
	ASSERT_EQ(0, accel_buffer_import(other, fd, 0, &imp2));
	EXPECT_EQ(imp, imp2);		/* deduplicated */
	EXPECT_EQ(8192, accel_buffer_size(imp));
	ASSERT_EQ(0, accel_buffer_map(imp, &map));
	EXPECT_EQ(0x5a, ((unsigned char *)map)[4095]);
	accel_buffer_destroy(imp2);
	accel_buffer_destroy(imp);
	close(fd);
	host = accel_buffer_host(pb);
	ASSERT_EQ(0, accel_buffer_seal(pb));
	EXPECT_EQ(host, accel_buffer_host(pb));	/* read-only in place */
	ASSERT_EQ(0, accel_buffer_map(pb, &map));
	EXPECT_EQ(host, map);
	EXPECT_EQ(0x5a, ((unsigned char *)map)[0]);
	ASSERT_EQ(0, accel_buffer_export(pb, ACCEL_EXPORT_READ_ONLY, &rofd));
	ASSERT_EQ(0, accel_buffer_import(other, rofd, 0, &ro));
	close(rofd);
	EXPECT_EQ(-EINVAL, accel_buffer_seal(ro));
	EXPECT_EQ(-EINVAL, accel_buffer_create(dev, 0, 0, &imp));
	EXPECT_EQ(-EINVAL, accel_buffer_create(dev, 4096, 0x100, &imp));
	EXPECT_EQ(-EBADF, accel_buffer_import(dev, -1, 0, &imp));
	accel_device_close(other);
	accel_device_close(dev);
	lib_del_device(ID_A);
	NO_LEAKS();
}

/* del_device under a running program: -ENODEV, nothing crashes. */
TEST(removed_device)
{
	struct accel_buffer *buf;
	struct accel_signal *sig;
	struct accel_device *dev;
	struct drm_vaccel_packet *p;
	struct accel_queue *q;
	struct accel_event ev;
	uint64_t used;
	char text[2048];
	void *map;
	int i;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, open_new(ID_A, NULL, &dev));
	ASSERT_EQ(0, accel_buffer_create(dev, 4096, ACCEL_BUFFER_HOST, &buf));
	ASSERT_EQ(0, accel_signal_create(dev, &sig));
	ASSERT_EQ(0, accel_queue_create(dev, NULL, &q));
	ASSERT_NE(NULL, p = accel_queue_get_packet(q));
	accel_prep_nop(p);
	ASSERT_EQ(1, accel_queue_submit(q));
	ASSERT_EQ(0, accel_queue_sync(q, 10ll * 1000000000));
	ASSERT_EQ(0, accel_queue_reserve(q, 8, 0));
	ASSERT_EQ(0, lib_del_device(ID_A));
	/*
	 * memory-only calls first: a submit's fast path does not look at the
	 * queue's state, so the first one publishes into the removed device
	 * (lost, no SIGBUS); the next wait says -ENODEV
	 */
	ASSERT_NE(NULL, p = accel_queue_get_packet(q));
	accel_prep_nop(p);
	EXPECT_EQ(1, accel_queue_submit(q));
	EXPECT_EQ(-ENODEV, accel_queue_sync(q, 1000000));
	/* the slots reserved before the removal are still handed out */
	for (i = 0; i < 7; i++) {
		ASSERT_NE(NULL, p = accel_queue_get_packet(q));
		accel_prep_nop(p);
	}
	EXPECT_EQ(-ENODEV, accel_queue_submit(q));
	EXPECT_EQ(-ENODEV, accel_queue_status(q, NULL, 0));
	accel_queue_completed(q);
	accel_signal_read(sig);
	ev.signal = sig;
	ev.value = accel_signal_next(sig);
	EXPECT_EQ(-ENODEV, accel_event_wait(&ev, 1000000));
	EXPECT_EQ(-ENODEV, accel_event_signal(&ev));
	EXPECT_EQ(-ENODEV, accel_queue_sync(q, 1000000));
	EXPECT_EQ(-ENODEV, accel_queue_reserve(q, 1, 0));
	EXPECT_EQ(-ENODEV, accel_device_memory_used(dev, &used));
	EXPECT_EQ(-ENODEV, accel_buffer_create(dev, 4096, 0, &buf));
	EXPECT_EQ(-ENODEV, accel_signal_create(dev, &sig));
	EXPECT_EQ(-ENODEV, accel_queue_create(dev, NULL, &q));
	EXPECT_EQ(-ENODEV, accel_buffer_map(buf, &map));
	/* the program's own pointer reads zeros instead of faulting */
	EXPECT_EQ(0, ((volatile char *)accel_buffer_host(buf))[0]);
	ASSERT_GT(accel_queue_describe(q, text, sizeof(text)), 0);
	EXPECT_NE(NULL, strstr(text, "removed"));
	accel_buffer_destroy(buf);
	accel_device_close(dev);
	NO_LEAKS();
}

/* Closing a device with everything still open gives everything back. */
TEST(close_frees_everything)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 64 };
	struct accel_device *dev, *other, *mon;
	struct accel_buffer *b, *imp;
	struct accel_signal *s[100];
	struct accel_queue *q[3];
	struct accel_event ev;
	uint64_t used0, used1, used2;
	long bos0, maps0;
	char path[300];
	int i, fd;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, open_new(ID_B, NULL, &other));
	ASSERT_EQ(0, open_new(ID_A, NULL, &dev));
	/* a second file of device A, to watch its memory while dev comes and goes */
	ASSERT_EQ(0, lib_node_path(ID_A, path, sizeof(path)));
	ASSERT_EQ(0, accel_device_open_path(path, &mon));
	ASSERT_EQ(0, accel_device_memory_used(mon, &used0));
	bos0 = lib_objects("bos");
	ASSERT_LE(0, bos0) TH_LOG("the backend's object counters cannot be read");
	maps0 = lib_objects("mappings");
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, accel_queue_create(dev, &qp, &q[i]));
	for (i = 0; i < 100; i++)	/* two signal pages */
		ASSERT_EQ(0, accel_signal_create(dev, &s[i]));
	ASSERT_EQ(0, accel_buffer_create(dev, 1 << 20, ACCEL_BUFFER_PERSISTENT, &b));
	ASSERT_EQ(0, accel_buffer_export(b, 0, &fd));
	ASSERT_EQ(0, accel_buffer_import(other, fd, 0, &imp));
	close(fd);
	ev.signal = s[99];
	ev.value = accel_signal_next(s[99]);
	ASSERT_EQ(0, accel_queue_wait_event(q[0], &ev));	/* stays blocked */
	ASSERT_EQ(1, accel_queue_submit(q[0]));
	ev.signal = s[0];
	ev.value = accel_signal_next(s[0]);
	ASSERT_EQ(0, accel_queue_create(other, &qp, &q[2]));
	ASSERT_EQ(0, accel_queue_wait_event(q[2], &ev));	/* imports s[0]'s page */
	ASSERT_EQ(1, accel_queue_submit(q[2]));
	ASSERT_EQ(0, accel_event_signal(&ev));
	ASSERT_EQ(0, accel_queue_sync(q[2], 10ll * 1000000000));
	ASSERT_EQ(0, accel_device_memory_used(mon, &used1));
	EXPECT_GT(used1, used0);
	EXPECT_GT(lib_objects("bos"), bos0);
	accel_device_close(dev);	/* with a queue blocked in WAIT, signals, buffers */
	accel_buffer_destroy(imp);	/* the import held dev's buffer until here */
	accel_queue_destroy(q[2]);
	accel_device_close(other);	/* with the imported signal page */
	ASSERT_EQ(0, accel_device_memory_used(mon, &used2));
	EXPECT_EQ(used0, used2);
	EXPECT_EQ(bos0, lib_objects("bos"));
	EXPECT_EQ(maps0, lib_objects("mappings"));
	accel_device_close(mon);
	lib_del_device(ID_A);
	lib_del_device(ID_B);
	NO_LEAKS();
}

/* A sealed persistent body replayed by EXEC, eager packets in between. */
TEST(sealed_exec_replay)
{
	struct drm_vaccel_packet *p, *body;
	struct accel_signal *sig;
	struct accel_buffer *pb;
	struct accel_device *dev;
	struct accel_queue *q;
	uint64_t base;
	int i;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, accel_device_open(0, &dev));
	ASSERT_EQ(0, accel_signal_create(dev, &sig));
	base = accel_signal_read(sig);
	ASSERT_EQ(0, accel_buffer_create(dev, 4096, ACCEL_BUFFER_PERSISTENT | ACCEL_BUFFER_HOST,
					 &pb));
	body = accel_buffer_host(pb);
	accel_prep_signal(&body[0], accel_signal_va(sig), DRM_VACCEL_SIGNAL_ADD, 1);
	accel_prep_signal(&body[1], accel_signal_va(sig), DRM_VACCEL_SIGNAL_ADD, 2);
	ASSERT_EQ(0, accel_queue_create(dev, NULL, &q));
	/* not sealed yet: EXEC faults */
	ASSERT_NE(NULL, p = accel_queue_get_packet(q));
	accel_prep_exec(p, accel_buffer_va(pb), 2, 0);
	ASSERT_EQ(1, accel_queue_submit(q));
	EXPECT_EQ(-EIO, accel_queue_sync(q, 10ll * 1000000000));
	accel_queue_destroy(q);
	ASSERT_EQ(0, accel_buffer_seal(pb));
	ASSERT_EQ(0, accel_queue_create(dev, NULL, &q));
	for (i = 0; i < 1000; i++) {
		while (!(p = accel_queue_get_packet(q))) {
			ASSERT_LE(0, accel_queue_submit(q));
			ASSERT_EQ(0, accel_queue_reserve(q, 2, 10ll * 1000000000));
		}
		accel_prep_exec(p, accel_buffer_va(pb), 2, 0);
		while (!(p = accel_queue_get_packet(q))) {
			ASSERT_LE(0, accel_queue_submit(q));
			ASSERT_EQ(0, accel_queue_reserve(q, 1, 10ll * 1000000000));
		}
		accel_prep_signal(p, accel_signal_va(sig), DRM_VACCEL_SIGNAL_ADD, 4);
		if (i % 32 == 31)
			ASSERT_LE(0, accel_queue_submit(q));
	}
	ASSERT_LE(0, accel_queue_submit(q));
	ASSERT_EQ(0, accel_queue_sync(q, 30ll * 1000000000));
	EXPECT_EQ(base + 7000, accel_signal_read(sig));
	accel_device_close(dev);
	NO_LEAKS();
}

/* Threads sharing a device, a queue each (single-producer queues). */
struct worker {
	struct accel_device *dev;
	int ok;
	pthread_t t;
};

static void *work(void *arg)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 64 };
	struct worker *w = arg;
	struct accel_signal *sig[20];
	struct accel_buffer *buf[8];
	struct drm_vaccel_packet *p;
	struct accel_queue *q;
	uint64_t base;
	int i;

	if (accel_queue_create(w->dev, &qp, &q))
		return NULL;
	for (i = 0; i < 20; i++)
		if (accel_signal_create(w->dev, &sig[i]))
			return NULL;
	for (i = 0; i < 8; i++)
		if (accel_buffer_create(w->dev, 4096 << i, 0, &buf[i]))
			return NULL;
	base = accel_signal_read(sig[7]);
	for (i = 0; i < 2000; i++) {
		while (!(p = accel_queue_get_packet(q)))
			if (accel_queue_submit(q) < 0 ||
			    accel_queue_reserve(q, 1, 10ll * 1000000000))
				return NULL;
		accel_prep_fill(p, accel_buffer_va(buf[i % 8]), 4096, i, 8);
		accel_prep_completion(p, accel_signal_va(sig[7]), DRM_VACCEL_SIGNAL_ADD, 1);
		if (i % 8 == 7 && accel_queue_submit(q) < 0)
			return NULL;
	}
	if (accel_queue_submit(q) < 0 || accel_queue_sync(q, 30ll * 1000000000))
		return NULL;
	w->ok = accel_signal_read(sig[7]) == base + 2000;
	for (i = 0; i < 20; i += 2)	/* the rest goes with the device */
		accel_signal_destroy(sig[i]);
	for (i = 0; i < 8; i += 2)
		accel_buffer_destroy(buf[i]);
	return NULL;
}

TEST(threads_share_a_device)
{
	struct worker w[4];
	struct accel_device *dev;
	int i;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, accel_device_open(0, &dev));
	for (i = 0; i < 4; i++) {
		w[i].dev = dev;
		w[i].ok = 0;
		ASSERT_EQ(0, pthread_create(&w[i].t, NULL, work, &w[i]));
	}
	for (i = 0; i < 4; i++) {
		pthread_join(w[i].t, NULL);
		EXPECT_TRUE(w[i].ok);
	}
	accel_device_close(dev);
	NO_LEAKS();
}

/* ---- internal buffer references (pins) and the destroy/import race ---- */

/* Run one FILL of @bytes at @va on @q; 0, or the fault code (+ 1000). */
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
	ret = accel_queue_sync(q, 10 * 1000000000ll);
	if (ret == -EIO && accel_queue_status(q, &f, sizeof(f)) == -EIO)
		return 1000 + (int)f.code;
	return ret;
}

struct pin_count {
	struct acc_pin pin;
	int orphaned;
};

static void count_orphaned(struct acc_pin *pin)
{
	container_of(pin, struct pin_count, pin)->orphaned++;
}

/*
 * A pin keeps a buffer (object, binding, mapping) after the program's last
 * destroy; the orphaned callback runs once per orphaning; an import gives
 * the program a reference again; the last unpin frees it.
 */
TEST(pins_keep_buffers)
{
	struct pin_count pa = { .pin.orphaned = count_orphaned }, pb = { .pin.orphaned = count_orphaned };
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 64 };
	struct accel_buffer *b, *imp, *other_buf, *pinned;
	struct accel_device *dev, *other;
	struct accel_queue *q;
	uint64_t va, used0, used1;
	long bos0;
	char *host;
	int fd, fd2;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, open_new(ID_A, NULL, &dev));
	ASSERT_EQ(0, open_new(ID_B, NULL, &other));
	bos0 = lib_objects("bos");
	ASSERT_LE(0, bos0) TH_LOG("the backend's object counters cannot be read");
	ASSERT_EQ(0, accel_queue_create(dev, &qp, &q));
	ASSERT_EQ(0, accel_device_memory_used(dev, &used0));
	ASSERT_EQ(0, accel_buffer_create(dev, 65536, ACCEL_BUFFER_HOST, &b));
	host = accel_buffer_host(b);
	va = accel_buffer_va(b);
	acc_buffer_pin(b, &pa.pin);
	EXPECT_FALSE(acc_buffer_orphaned(b));
	accel_buffer_destroy(b);
	EXPECT_EQ(1, pa.orphaned);
	EXPECT_TRUE(acc_buffer_orphaned(b));
	/* still bound and mapped: the device writes it, the host reads it */
	EXPECT_EQ(0, fill_at(q, va, 65536, 0x5c));
	EXPECT_EQ(0x5c, host[65535]);
	/* an import of its export gives the program a reference again */
	ASSERT_EQ(0, accel_buffer_export(b, 0, &fd));
	ASSERT_EQ(0, accel_buffer_import(dev, fd, 0, &imp));
	EXPECT_EQ(b, imp);
	EXPECT_FALSE(acc_buffer_orphaned(b));
	acc_buffer_unpin(b, &pa.pin);	/* the program holds it: stays */
	EXPECT_EQ(0, fill_at(q, va, 4096, 0x5d));
	EXPECT_EQ(0x5d, host[0]);
	acc_buffer_pin(b, &pa.pin);
	acc_buffer_pin(b, &pb.pin);
	accel_buffer_destroy(imp);
	EXPECT_EQ(2, pa.orphaned);	/* once per orphaning */
	EXPECT_EQ(1, pb.orphaned);
	acc_buffer_unpin(b, &pa.pin);
	EXPECT_EQ(0, fill_at(q, va, 4096, 0x5e));
	acc_buffer_unpin(b, &pb.pin);	/* the last holder: freed, unbound */
	EXPECT_EQ(1000 + DRM_VACCEL_FAULT_UNMAPPED, fill_at(q, va, 4096, 0x5f));
	close(fd);	/* the dma-buf held the object too */
	ASSERT_EQ(0, accel_device_memory_used(dev, &used1));
	EXPECT_EQ(used0, used1);
	accel_queue_destroy(q);

	/* a pinned import: no reference of the program until it imports too */
	ASSERT_EQ(0, accel_buffer_create(other, 8192, 0, &other_buf));
	ASSERT_EQ(0, accel_buffer_export(other_buf, 0, &fd2));
	EXPECT_EQ(-EINVAL, acc_buffer_import_pinned(dev, fd2, NULL, &pinned));
	EXPECT_EQ(-EBADF, acc_buffer_import_pinned(dev, -1, &pa.pin, &pinned));
	ASSERT_EQ(0, acc_buffer_import_pinned(dev, fd2, &pa.pin, &pinned));
	EXPECT_TRUE(acc_buffer_orphaned(pinned));
	ASSERT_EQ(0, accel_buffer_import(dev, fd2, 0, &imp));
	EXPECT_EQ(pinned, imp);
	EXPECT_FALSE(acc_buffer_orphaned(pinned));
	acc_buffer_unpin(pinned, &pa.pin);
	accel_buffer_destroy(imp);	/* the last holder */
	/* the device closes with a pinned buffer and a pinned import left */
	ASSERT_EQ(0, accel_buffer_create(dev, 4096, 0, &b));
	acc_buffer_pin(b, &pb.pin);
	ASSERT_EQ(0, acc_buffer_import_pinned(dev, fd2, &pa.pin, &pinned));
	close(fd2);
	accel_device_close(dev);
	accel_device_close(other);
	EXPECT_EQ(bos0, lib_objects_wait("bos", bos0, 5000));
	lib_del_device(ID_A);
	lib_del_device(ID_B);
	NO_LEAKS();
}

/*
 * Defect 3: accel_buffer_destroy() of the last reference racing with an
 * accel_buffer_import() of the same dma-buf. A test hook stops the
 * destroying thread right after it took its last reference for 300 ms and
 * lets the importer go meanwhile: the importer must get a buffer that is
 * alive and whose handle and binding work, not the dying one.
 */
static struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	const void *target;
	int stage;
} race = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0 };

static void race_hook(int where, const void *obj)
{
	struct timespec until;

	if (where != ACC_HOOK_BUFFER_LAST_REF || obj != race.target)
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 300000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&race.m);
	race.stage = 1;
	pthread_cond_broadcast(&race.c);
	while (race.stage < 2 && !pthread_cond_timedwait(&race.c, &race.m, &until))
		;
	pthread_mutex_unlock(&race.m);
}

struct importer {
	struct accel_device *dev;
	struct accel_buffer *buf;
	int fd, ret;
};

static void *race_import(void *arg)
{
	struct importer *im = arg;

	pthread_mutex_lock(&race.m);
	while (race.stage < 1)
		pthread_cond_wait(&race.c, &race.m);
	pthread_mutex_unlock(&race.m);
	im->ret = accel_buffer_import(im->dev, im->fd, 0, &im->buf);
	pthread_mutex_lock(&race.m);
	race.stage = 2;
	pthread_cond_broadcast(&race.c);
	pthread_mutex_unlock(&race.m);
	return NULL;
}

TEST(destroy_races_import)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 64 };
	struct importer im = { 0 };
	struct accel_device *dev;
	struct accel_buffer *b;
	struct accel_queue *q;
	pthread_t t;
	void *map;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, open_new(ID_A, NULL, &dev));
	ASSERT_EQ(0, accel_queue_create(dev, &qp, &q));
	ASSERT_EQ(0, accel_buffer_create(dev, 8192, ACCEL_BUFFER_HOST, &b));
	memset(accel_buffer_host(b), 0x33, 8192);
	ASSERT_EQ(0, accel_buffer_export(b, 0, &im.fd));
	im.dev = dev;
	race.target = b;
	race.stage = 0;
	acc_test_hook = race_hook;
	ASSERT_EQ(0, pthread_create(&t, NULL, race_import, &im));
	accel_buffer_destroy(b);	/* the last reference */
	pthread_join(t, NULL);
	acc_test_hook = NULL;
	ASSERT_EQ(0, im.ret);
	/* the import is alive: its handle maps, its address is bound */
	ASSERT_EQ(0, accel_buffer_map(im.buf, &map));
	EXPECT_EQ(0x33, ((unsigned char *)map)[8191]);
	EXPECT_EQ(0, fill_at(q, accel_buffer_va(im.buf), 8192, 0x44));
	EXPECT_EQ(0x44, ((unsigned char *)map)[100]);
	accel_buffer_destroy(im.buf);
	close(im.fd);
	accel_device_close(dev);
	lib_del_device(ID_A);
	NO_LEAKS();
}

/*
 * The same race as a stress test: threads importing and destroying one
 * dma-buf, each last reference sleeping 200 us at the hook (so that the
 * other threads run where the race window was).
 */
static void yield_hook(int where, const void *obj)
{
	(void)obj;
	if (where == ACC_HOOK_BUFFER_LAST_REF)
		usleep(200);
}

struct churn {
	struct accel_device *dev;
	int fd, rounds, bad;
	pthread_t t;
};

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	struct accel_buffer *b;
	void *map;
	int i;

	for (i = 0; i < c->rounds; i++) {
		if (accel_buffer_import(c->dev, c->fd, 0, &b)) {
			c->bad++;
			continue;
		}
		/* a dying buffer's handle would be closed: BO_INFO/mmap fail */
		if (accel_buffer_map(b, &map) || ((volatile unsigned char *)map)[4095] != 0x77)
			c->bad++;
		accel_buffer_destroy(b);
	}
	return NULL;
}

TEST(destroy_import_churn)
{
	struct churn c[4];
	struct accel_device *dev;
	struct accel_buffer *b;
	uint64_t used0, used1;
	int fd, i;

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, open_new(ID_A, NULL, &dev));
	ASSERT_EQ(0, accel_device_memory_used(dev, &used0));
	ASSERT_EQ(0, accel_buffer_create(dev, 4096, ACCEL_BUFFER_HOST, &b));
	memset(accel_buffer_host(b), 0x77, 4096);
	ASSERT_EQ(0, accel_buffer_export(b, 0, &fd));
	accel_buffer_destroy(b);	/* only the dma-buf holds the object now */
	acc_test_hook = yield_hook;
	for (i = 0; i < 4; i++) {
		c[i] = (struct churn){ .dev = dev, .fd = fd, .rounds = 2000 };
		ASSERT_EQ(0, pthread_create(&c[i].t, NULL, churn_main, &c[i]));
	}
	for (i = 0; i < 4; i++) {
		pthread_join(c[i].t, NULL);
		EXPECT_EQ(0, c[i].bad);
	}
	acc_test_hook = NULL;
	close(fd);
	ASSERT_EQ(0, accel_device_memory_used(dev, &used1));
	EXPECT_EQ(used0, used1);
	accel_device_close(dev);
	lib_del_device(ID_A);
	NO_LEAKS();
}

TEST_HARNESS_MAIN
