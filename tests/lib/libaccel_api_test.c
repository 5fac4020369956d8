// SPDX-License-Identifier: GPL-2.0-only
/*
 * libaccel in the VM: the error paths of the public functions (bad
 * arguments with their exact errno, exhaustion -ENOMEM / -ENOSPC / -E2BIG,
 * a full ring, a faulted queue whose report names the packet), on a fresh
 * device (bus id LIB_ID_A, 64 MiB) opened through the library. Every test
 * ends with the module's live-object counters back where they started.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <limits.h>
#include <pthread.h>

#include "kselftest_harness.h"
#include "libaccel_test.h"

#define MEM	(64ull << 20)

FIXTURE(lib) {
	struct accel_device *dev;
	struct accel_device_props props;
	struct vaccel_counts counts;
};

FIXTURE_SETUP(lib)
{
	self->dev = NULL;
	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	ASSERT_EQ(0, lib_counted_open(LIB_ID_A, "memory=64M engines=2", &self->counts,
				      &self->dev));
	self->props.size = sizeof(self->props);
	ASSERT_EQ(0, accel_device_query(self->dev, &self->props));
}

FIXTURE_TEARDOWN(lib)
{
	if (!lib_present())
		return;
	accel_device_close(self->dev);
	lib_del_device(LIB_ID_A);
	EXPECT_LIB_COUNTS_BACK(&self->counts, 5000);
}

TEST(version_and_strings)
{
	EXPECT_EQ(ACCEL_VERSION_MAJOR, accel_version_major());
	EXPECT_EQ(ACCEL_VERSION_MINOR, accel_version_minor());
	EXPECT_NE(NULL, accel_strerror(-EIO));
	EXPECT_STREQ(accel_strerror(-EIO), accel_strerror(EIO));
	EXPECT_STRNE(accel_strerror(-EIO), accel_strerror(-ENODEV));
	EXPECT_NE(NULL, accel_strerror(-123456));
	EXPECT_NE(NULL, accel_strerror(0));
	EXPECT_STREQ("unknown error", accel_strerror(-123456));
	EXPECT_STREQ("unknown error", accel_strerror(INT_MIN));
}

/*
 * Every errno a public header documents has a text of its own, and no two
 * codes share one. The list is every -E... in the headers of lib/include/accel/:
 * tests/lib/errno-check keeps it in step with them.
 */
static const int documented_errnos[] = {
	E2BIG, EACCES, EADDRINUSE, EAGAIN, EALREADY, EBADF, EBUSY, ECANCELED, ECHILD,
	ECONNABORTED, ECONNRESET, EDEADLK, EEXIST, EINTR, EINVAL, EIO, EMFILE, ENODATA,
	ENODEV, ENOENT, ENOMEM, ENOSPC, EOPNOTSUPP, EOVERFLOW, EPERM, EPROTO, ESTALE,
	ETIMEDOUT,
};

TEST(strerror_names_every_documented_errno)
{
	size_t n = sizeof(documented_errnos) / sizeof(documented_errnos[0]), i, j;

	for (i = 0; i < n; i++) {
		const char *t = accel_strerror(-documented_errnos[i]);

		EXPECT_STRNE("unknown error", t) {
			TH_LOG("errno %d (%s) has no text", documented_errnos[i],
			       strerror(documented_errnos[i]));
		}
		for (j = 0; j < i; j++)
			EXPECT_STRNE(accel_strerror(-documented_errnos[j]), t);
	}
	EXPECT_STREQ("UNMAPPED", accel_fault_name(DRM_VACCEL_FAULT_UNMAPPED));
	EXPECT_STREQ("?", accel_fault_name(9999));
	accel_log_set_level(ACCEL_LOG_TRACE);
	EXPECT_EQ(ACCEL_LOG_TRACE, accel_log_get_level());
	accel_log_set_level(ACCEL_LOG_NONE);
	EXPECT_EQ(ACCEL_LOG_NONE, accel_log_get_level());
}

/* Find a DRM node of another driver (vgem, preloaded by run-all): vaccel has none in /dev/dri. */
static bool other_drm_node(char *path, size_t len)
{
	unsigned int i;

	for (i = 0; i < 16; i++) {
		snprintf(path, len, "/dev/dri/card%u", i);
		if (access(path, R_OK | W_OK) == 0)
			return true;
	}
	return false;
}

TEST_F(lib, device_errors)
{
	struct accel_device_info one;
	struct accel_device *d = (void *)1;
	struct accel_device_props small = { .size = 0 };
	struct accel_device *devs[2] = { self->dev, NULL };
	struct accel_link m[4];
	struct accel_buffer *buf;
	uint64_t used0, used1;
	char path[64];
	int n;

	n = accel_device_list(NULL, 0, 0);
	ASSERT_LE(1, n);
	/* a short list still reports the full count */
	EXPECT_EQ(n, accel_device_list(&one, 1, sizeof(one)));
	if (lib_on_sim()) {
		EXPECT_EQ(0, strncmp(one.path, "sim:", 4));
	} else {
		EXPECT_EQ(0, strncmp(one.path, "/dev/accel/accel", 16));
	}
	EXPECT_LE(0, lib_index_of(LIB_ID_A));

	EXPECT_EQ(-ENODEV, accel_device_open(100000, &d));
	EXPECT_EQ(-ENODEV, accel_device_open((unsigned int)n, &d));
	if (other_drm_node(path, sizeof(path))) {
		EXPECT_EQ(-ENODEV, accel_device_open_path(path, &d)) TH_LOG("%s", path);
	} else {
		TH_LOG("no DRM node of another driver: not tried");
	}

	EXPECT_EQ(-EINVAL, accel_device_query(self->dev, &small));
	EXPECT_EQ(LIB_ID_A, self->props.id);
	EXPECT_EQ(2, self->props.engines);
	EXPECT_EQ(MEM, self->props.memory_capacity);
	EXPECT_LE(ACCEL_MIN_UAPI_VERSION, self->props.uapi_version);
	EXPECT_EQ(1ull << 32, self->props.va_start);
	EXPECT_LT(0, self->props.max_queues);
	EXPECT_LE(0, accel_device_fd(self->dev));

	EXPECT_EQ(-EINVAL, accel_device_topology(devs, 2, m, sizeof(*m)));
	ASSERT_EQ(0, accel_device_topology(devs, 1, m, sizeof(*m)));
	EXPECT_TRUE(m[0].local);

	ASSERT_EQ(0, accel_device_memory_used(self->dev, &used0));
	ASSERT_EQ(0, accel_buffer_create(self->dev, 1 << 20, 0, &buf));
	ASSERT_EQ(0, accel_device_memory_used(self->dev, &used1));
	EXPECT_LE(used0 + (1 << 20), used1);
	accel_buffer_destroy(buf);
	accel_device_close(NULL);
}

TEST_F(lib, buffer_errors)
{
	struct accel_buffer *a, *b, *c, *imp, *imp2, *nothing = NULL;
	void *p1, *p2;
	int fd;

	EXPECT_EQ(-EINVAL, accel_buffer_create(self->dev, 0, 0, &nothing));
	EXPECT_EQ(-EINVAL, accel_buffer_create(self->dev, 4096, 1u << 31, &nothing));
	EXPECT_EQ(-E2BIG, accel_buffer_create(self->dev, 2 * MEM, 0, &nothing));
	EXPECT_EQ(NULL, nothing);

	/* capacity: 48 MiB fit, 32 more do not */
	ASSERT_EQ(0, accel_buffer_create(self->dev, 48ull << 20, 0, &a));
	EXPECT_EQ(-ENOMEM, accel_buffer_create(self->dev, 32ull << 20, 0, &nothing));
	EXPECT_EQ(48ull << 20, accel_buffer_size(a));
	EXPECT_EQ(0, accel_buffer_va(a) % (2 << 20));
	EXPECT_EQ(self->dev, accel_buffer_device(a));
	accel_buffer_destroy(a);
	ASSERT_EQ(0, accel_buffer_create(self->dev, 32ull << 20, 0, &a));
	accel_buffer_destroy(a);

	/* sizes round up to pages, addresses align to the size (to 2 MiB) */
	ASSERT_EQ(0, accel_buffer_create(self->dev, 100, 0, &a));
	EXPECT_EQ(4096, accel_buffer_size(a));
	ASSERT_EQ(0, accel_buffer_create(self->dev, 64 << 10, 0, &b));
	EXPECT_EQ(0, accel_buffer_va(b) % (64 << 10));
	EXPECT_NE(accel_buffer_va(a), accel_buffer_va(b));

	/* mapping: none until asked, then always the same address */
	EXPECT_EQ(NULL, accel_buffer_host(a));
	ASSERT_EQ(0, accel_buffer_map(a, &p1));
	ASSERT_EQ(0, accel_buffer_map(a, &p2));
	EXPECT_EQ(p1, p2);
	EXPECT_EQ(p1, accel_buffer_host(a));
	memset(p1, 0x11, 4096);

	/* only persistent buffers can be sealed */
	EXPECT_EQ(-EINVAL, accel_buffer_seal(a));

	/* export / import */
	EXPECT_EQ(-EINVAL, accel_buffer_export(a, 0x80, &fd));
	EXPECT_EQ(-EBADF, accel_buffer_import(self->dev, -1, 0, &nothing));
	ASSERT_EQ(0, accel_buffer_export(a, 0, &fd));
	EXPECT_EQ(-EINVAL, accel_buffer_import(self->dev, fd, 0x80, &nothing));
	ASSERT_EQ(0, accel_buffer_import(self->dev, fd, 0, &imp));
	ASSERT_EQ(0, accel_buffer_import(self->dev, fd, 0, &imp2));
	EXPECT_EQ(imp, imp2);		/* one GEM handle per file: one buffer */
	EXPECT_EQ(4096, accel_buffer_size(imp));
	close(fd);
	/* the import sees the exporter's bytes */
	ASSERT_EQ(0, accel_buffer_map(imp, &p2));
	EXPECT_EQ(0x11, ((unsigned char *)p2)[100]);
	accel_buffer_destroy(imp2);
	accel_buffer_destroy(imp);

	/* a persistent buffer seals, and maps read-only afterwards */
	ASSERT_EQ(0, accel_buffer_create(self->dev, 4096, ACCEL_BUFFER_PERSISTENT |
					 ACCEL_BUFFER_HOST, &c));
	EXPECT_NE(NULL, accel_buffer_host(c));
	ASSERT_EQ(0, accel_buffer_seal(c));
	ASSERT_EQ(0, accel_buffer_map(c, &p1));
	EXPECT_EQ(0, ((unsigned char *)p1)[0]);

	accel_buffer_destroy(NULL);
	accel_buffer_destroy(c);
	accel_buffer_destroy(b);
	accel_buffer_destroy(a);
}

/* The context's handle limit: -ENOSPC, and everything comes back. */
TEST_F_TIMEOUT(lib, buffer_handle_limit, 600)
{
	unsigned int max = self->props.max_buffers, n = 0, i;
	struct accel_buffer **bufs = calloc(max + 1, sizeof(*bufs));
	struct accel_signal *sig = NULL;
	uint64_t used0, used;
	int ret = 0;

	ASSERT_NE(NULL, bufs);
	ASSERT_EQ(0, accel_device_memory_used(self->dev, &used0));
	while (n <= max) {
		ret = accel_buffer_create(self->dev, 4096, 0, &bufs[n]);
		if (ret)
			break;
		n++;
	}
	EXPECT_EQ(-ENOSPC, ret);
	EXPECT_LE(max - 8, n) TH_LOG("%u of %u handles", n, max);
	EXPECT_GE(max, n);
	/* a signal needs a new signal page: no handle left for it */
	EXPECT_EQ(-ENOSPC, accel_signal_create(self->dev, &sig));
	for (i = 0; i < n; i++)
		accel_buffer_destroy(bufs[i]);
	free(bufs);
	/* everything is usable again */
	ASSERT_EQ(0, accel_signal_create(self->dev, &sig));
	accel_signal_destroy(sig);
	ASSERT_EQ(0, accel_device_memory_used(self->dev, &used));
	EXPECT_GE(used0 + 4096, used);
}

TEST_F_TIMEOUT(lib, queue_limit, 300)
{
	struct accel_queue_params p = { .size = sizeof(p), .ring_size = 4 };
	unsigned int max = self->props.max_queues, n = 0, i;
	struct accel_queue *qs[128];
	int ret = 0;

	ASSERT_GE(128, max);
	while (n < 128) {
		ret = accel_queue_create(self->dev, &p, &qs[n]);
		if (ret)
			break;
		n++;
	}
	EXPECT_EQ(-ENOSPC, ret);
	EXPECT_EQ(max, n);
	for (i = 0; i < n; i++)
		accel_queue_destroy(qs[i]);
	ASSERT_EQ(0, accel_queue_create(self->dev, &p, &qs[0]));
	accel_queue_destroy(qs[0]);
}

TEST_F(lib, queue_params)
{
	struct accel_queue_params p = { .size = sizeof(p) };
	struct accel_queue *q = NULL;

	p.ring_size = 3;
	EXPECT_EQ(-EINVAL, accel_queue_create(self->dev, &p, &q));
	p.ring_size = 2;
	EXPECT_EQ(-EINVAL, accel_queue_create(self->dev, &p, &q));
	p.ring_size = 131072;
	EXPECT_EQ(-EINVAL, accel_queue_create(self->dev, &p, &q));
	p.ring_size = 16;
	p.flags = 1;
	EXPECT_EQ(-EINVAL, accel_queue_create(self->dev, &p, &q));
	p.flags = 0;
	p.reserved = 1;
	EXPECT_EQ(-EINVAL, accel_queue_create(self->dev, &p, &q));
	p.reserved = 0;
	p.priority = 7;
	EXPECT_EQ(-EINVAL, accel_queue_create(self->dev, &p, &q));
	p.priority = 0;
	p.size = 0;
	EXPECT_EQ(-EINVAL, accel_queue_create(self->dev, &p, &q));
	EXPECT_EQ(NULL, q);
	p.size = sizeof(p);
	ASSERT_EQ(0, accel_queue_create(self->dev, &p, &q));
	EXPECT_EQ(self->dev, accel_queue_device(q));
	EXPECT_EQ(0, accel_queue_status(q, NULL, 0));
	accel_queue_destroy(q);
	accel_queue_destroy(NULL);
	ASSERT_EQ(0, accel_queue_create(self->dev, NULL, &q));
	accel_queue_destroy(q);
}

/*
 * A queue blocked on a WAIT, its ring filled: every way of asking for a
 * slot reports the full ring, none overwrites, and all of it runs once
 * the signal comes.
 */
TEST_F(lib, ring_full)
{
	struct accel_queue_params p = { .size = sizeof(p), .ring_size = 16 };
	struct drm_vaccel_packet nops[100], *slot;
	struct accel_signal *sig;
	struct accel_event gate, ev;
	struct accel_queue *q;
	unsigned int taken = 0, done;
	uint64_t t0;

	memset(nops, 0, sizeof(nops));	/* NOPs */
	ASSERT_EQ(0, accel_queue_create(self->dev, &p, &q));
	ASSERT_EQ(0, accel_signal_create(self->dev, &sig));
	gate.signal = sig;
	gate.value = accel_signal_next(sig);
	EXPECT_EQ(0, accel_event_done(&gate));
	ASSERT_EQ(0, accel_queue_wait_event(q, &gate));
	ASSERT_EQ(1, accel_queue_submit(q));

	while ((slot = accel_queue_get_packet(q)) && taken < 32) {
		accel_prep_nop(slot);
		taken++;
	}
	EXPECT_EQ(NULL, slot);
	EXPECT_LT(0, taken);
	EXPECT_GT(16, taken);
	/* the count includes the library's progress marks */
	EXPECT_LE((int)taken, accel_queue_submit(q));

	EXPECT_EQ(-EAGAIN, accel_queue_reserve(q, 1, 0));
	t0 = vaccel_now_ms();
	EXPECT_EQ(-ETIMEDOUT, accel_queue_reserve(q, 1, 50000000));
	EXPECT_LE(50, vaccel_now_ms() - t0);
	EXPECT_EQ(-EINVAL, accel_queue_reserve(q, 17, 0));
	EXPECT_EQ(-EAGAIN, accel_queue_record(q, &ev));
	EXPECT_EQ(-EAGAIN, accel_queue_wait_event(q, &gate));
	done = 77;
	EXPECT_EQ(-EAGAIN, accel_queue_submit_packets(q, nops, 40, 0, &done));
	EXPECT_EQ(0, done);	/* nothing of it published */
	t0 = vaccel_now_ms();
	EXPECT_EQ(-ETIMEDOUT, accel_queue_sync(q, 50000000));
	EXPECT_LE(50, vaccel_now_ms() - t0);
	EXPECT_GT(accel_queue_submitted(q), accel_queue_completed(q));

	/* open the gate: all of it runs, then more than a ring's worth */
	ASSERT_EQ(0, accel_event_signal(&gate));
	ASSERT_EQ(0, accel_queue_sync(q, 10 * SEC));
	ASSERT_EQ(0, accel_queue_submit_packets(q, nops, 100, 10 * SEC, &done));
	EXPECT_EQ(100, done);
	ASSERT_EQ(0, accel_queue_sync(q, 10 * SEC));
	EXPECT_EQ(accel_queue_submitted(q), accel_queue_completed(q));
	EXPECT_LE(1 + taken + 100, accel_queue_submitted(q));
	EXPECT_EQ(0, accel_queue_status(q, NULL, 0));
	accel_signal_destroy(sig);
	accel_queue_destroy(q);
}

/* A faulted queue: -EIO everywhere, and a record that names the packet. */
TEST_F(lib, fault_report)
{
	uint64_t bad = self->props.va_start + (1ull << 40);
	struct accel_buffer *dst;
	struct drm_vaccel_packet *p, copy;
	struct accel_queue_fault f;
	struct accel_queue *q, *q2;
	struct accel_event ev;
	char text[16384];
	uint64_t t0;
	int len;

	ASSERT_EQ(0, accel_queue_create(self->dev, NULL, &q));
	ASSERT_EQ(0, accel_buffer_create(self->dev, 4096, 0, &dst));
	accel_prep_nop(accel_queue_get_packet(q));
	accel_prep_nop(accel_queue_get_packet(q));
	p = accel_queue_get_packet(q);		/* ring index 2 */
	accel_prep_copy(p, accel_buffer_va(dst), bad, 64);
	copy = *p;
	ASSERT_EQ(3, accel_queue_submit(q));
	EXPECT_EQ(-EIO, accel_queue_sync(q, 10 * SEC));
	memset(&f, 0xff, sizeof(f));
	EXPECT_EQ(-EIO, accel_queue_status(q, &f, sizeof(f)));
	EXPECT_EQ(DRM_VACCEL_FAULT_UNMAPPED, f.code);
	EXPECT_EQ(2, f.ring_index);
	EXPECT_EQ(0, f.depth);
	EXPECT_LE(bad, f.addr);
	EXPECT_GT(bad + 64, f.addr);
	EXPECT_EQ(0, memcmp(&copy, &f.packet, sizeof(copy)));

	len = accel_queue_describe(q, text, sizeof(text));
	EXPECT_LT(0, len);
	EXPECT_EQ((size_t)len, strlen(text));
	EXPECT_NE(NULL, strstr(text, "UNMAPPED")) TH_LOG("%s", text);
	EXPECT_NE(NULL, strstr(text, "COPY")) TH_LOG("%s", text);
	EXPECT_EQ(len, accel_queue_describe(q, NULL, 0));
	len = accel_packet_describe(&copy, text, sizeof(text));
	EXPECT_NE(NULL, strstr(text, "COPY")) TH_LOG("%s", text);
	EXPECT_EQ(len, accel_packet_describe(&copy, NULL, 0));

	/* after the fault: no more submissions */
	EXPECT_EQ(-EIO, accel_queue_record(q, &ev));
	EXPECT_EQ(-EIO, accel_queue_submit(q));
	EXPECT_EQ(-EIO, accel_queue_reserve(q, 1, SEC));

	/* another queue of the device still runs */
	ASSERT_EQ(0, accel_queue_create(self->dev, NULL, &q2));
	accel_prep_fill(accel_queue_get_packet(q2), accel_buffer_va(dst), 4096, 7, 8);
	ASSERT_EQ(1, accel_queue_submit(q2));
	/* polled: host waits of this context may report the other's fault */
	t0 = vaccel_now_ms();
	while (accel_queue_completed(q2) < accel_queue_submitted(q2) &&
	       vaccel_now_ms() - t0 < 10000)
		usleep(1000);
	EXPECT_EQ(accel_queue_submitted(q2), accel_queue_completed(q2));
	EXPECT_EQ(0, accel_queue_status(q2, NULL, 0));

	accel_queue_destroy(q2);
	accel_queue_destroy(q);
	accel_buffer_destroy(dst);
}

/* A fault inside a sealed EXEC body: depth, body index, and the EXEC packet. */
TEST_F(lib, fault_in_exec)
{
	struct accel_buffer *body, *dst;
	struct drm_vaccel_packet *rec, *p, exec;
	struct accel_queue_fault f;
	struct accel_queue *q;
	char text[16384];

	ASSERT_EQ(0, accel_queue_create(self->dev, NULL, &q));
	ASSERT_EQ(0, accel_buffer_create(self->dev, 4096, 0, &dst));
	ASSERT_EQ(0, accel_buffer_create(self->dev, 4096, ACCEL_BUFFER_PERSISTENT |
					 ACCEL_BUFFER_HOST, &body));
	rec = accel_buffer_host(body);
	accel_prep_fill(&rec[0], accel_buffer_va(dst), 4096, 1, 8);
	accel_prep_fill(&rec[1], accel_buffer_va(dst) + 4096, 4096, 1, 8);	/* past it */
	ASSERT_EQ(0, accel_buffer_seal(body));
	accel_prep_nop(accel_queue_get_packet(q));
	p = accel_queue_get_packet(q);
	accel_prep_exec(p, accel_buffer_va(body), 2, 1);
	exec = *p;
	ASSERT_EQ(2, accel_queue_submit(q));
	EXPECT_EQ(-EIO, accel_queue_sync(q, 10 * SEC));
	ASSERT_EQ(-EIO, accel_queue_status(q, &f, sizeof(f)));
	EXPECT_EQ(1, f.ring_index);
	EXPECT_EQ(1, f.depth);
	EXPECT_EQ(1, f.exec_index);
	EXPECT_EQ(0, memcmp(&exec, &f.packet, sizeof(exec)));
	accel_queue_describe(q, text, sizeof(text));
	EXPECT_NE(NULL, strstr(text, "EXEC")) TH_LOG("%s", text);
	accel_queue_destroy(q);
	accel_buffer_destroy(body);
	accel_buffer_destroy(dst);
}

TEST_F(lib, signal_errors)
{
	struct accel_signal *s;
	struct accel_event ev[65];
	unsigned int first = 99, i;

	ASSERT_EQ(0, accel_signal_create(self->dev, &s));
	EXPECT_EQ(self->dev, accel_signal_device(s));
	EXPECT_LE(self->props.va_start, accel_signal_va(s));
	EXPECT_EQ(0, accel_signal_va(s) % 64);
	EXPECT_EQ(-EINVAL, accel_signal_write(s, 99, 1));
	for (i = 0; i < 65; i++) {
		ev[i].signal = s;
		ev[i].value = accel_signal_read(s);	/* done */
	}
	EXPECT_EQ(-EINVAL, accel_events_wait(ev, 0, 0, 0, &first));
	EXPECT_EQ(-EINVAL, accel_events_wait(ev, 65, 0, 0, &first));
	EXPECT_EQ(-EINVAL, accel_events_wait(ev, 2, 0x80, 0, &first));
	EXPECT_EQ(0, accel_events_wait(ev, 64, ACCEL_WAIT_ALL, 0, &first));
	EXPECT_EQ(0, accel_events_wait(ev, 64, 0, 0, &first));
	EXPECT_EQ(0, first);
	accel_signal_destroy(s);
	accel_signal_destroy(NULL);
}

TEST_HARNESS_MAIN
