// SPDX-License-Identifier: MIT
/*
 * two_devices: move data from one device to another over the modelled
 * link, and order work across the two devices with an event.
 *
 *   device A                              device B
 *   --------                              --------
 *   FILL a_src                            WAIT for A's event
 *   COPY a_src -> b_dst (B's memory,      COPY b_dst -> b_out (local)
 *        imported into A: over the link)  record an event
 *   record an event  ------------------>
 *
 * The host waits only for B's event, then checks b_out: if the
 * cross-device wait did not hold B back, B would copy before A's data
 * arrived and the check would fail.
 *
 * Usage: two_devices [INDEX_A INDEX_B]   (default 0 1: accel_device_list()
 * order). Exits 0 only if b_out holds A's pattern.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <accel/accel.h>

#define SIZE	(4u << 20)			/* 4 MiB */
#define PATTERN	0x5aa5c33c0ff0e11eull

static int fail(const char *what, int err)
{
	fprintf(stderr, "two_devices: %s: %s\n", what, accel_strerror(err));
	return 1;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned int ia = argc > 2 ? (unsigned int)atoi(argv[1]) : 0;
	unsigned int ib = argc > 2 ? (unsigned int)atoi(argv[2]) : 1;
	struct accel_device *dev[2] = { NULL, NULL };
	struct accel_buffer *a_src = NULL, *b_dst = NULL, *b_dst_on_a = NULL, *b_out = NULL;
	struct accel_queue *qa = NULL, *qb = NULL;
	struct accel_event a_done, b_done;
	struct accel_link link[4];
	struct drm_vaccel_packet *p;
	size_t i, bad = 0;
	uint64_t *out;
	double t0;
	int ret, fd = -1, status = 1;

	/* Two devices: two files, two VA spaces, two sets of engines. */
	ret = accel_device_open(ia, &dev[0]);
	if (!ret)
		ret = accel_device_open(ib, &dev[1]);
	if (ret) {
		fail("open two devices (the VM has 4 by default)", ret);
		goto out;
	}

	/* What A pays to reach B's memory: B's entry in A's row. */
	accel_device_topology(dev, 2, link, sizeof(*link));
	if (link[1].bandwidth_mbps)
		printf("two_devices: A -> B link: %" PRIu64 " MB/s, %" PRIu64 " ns\n",
		       link[1].bandwidth_mbps, link[1].latency_ns);
	else
		printf("two_devices: A -> B link: unthrottled, %" PRIu64 " ns\n",
		       link[1].latency_ns);

	/*
	 * a_src lives on A. b_dst and b_out live on B. A reaches b_dst by
	 * importing it: B exports a dma-buf, A imports that fd and gets a
	 * buffer with its own address in A's VA space.
	 */
	ret = accel_buffer_create(dev[0], SIZE, 0, &a_src);
	if (!ret)
		ret = accel_buffer_create(dev[1], SIZE, 0, &b_dst);
	if (!ret)
		ret = accel_buffer_create(dev[1], SIZE, ACCEL_BUFFER_HOST, &b_out);
	if (!ret)
		ret = accel_buffer_export(b_dst, 0, &fd);
	if (!ret)
		ret = accel_buffer_import(dev[0], fd, 0, &b_dst_on_a);
	if (fd >= 0)
		close(fd);	/* the import holds its own reference */
	if (ret) {
		fail("buffers", ret);
		goto out;
	}

	ret = accel_queue_create(dev[0], NULL, &qa);
	if (!ret)
		ret = accel_queue_create(dev[1], NULL, &qb);
	if (ret) {
		fail("queues", ret);
		goto out;
	}

	/*
	 * B first: its queue blocks on A's event before anything of A's is
	 * submitted. accel_queue_record() on A fills in a_done (A's queue
	 * timeline and the value it will reach), so prepare A's packets
	 * first, then B's, and ring B's doorbell before A's.
	 */
	t0 = now_s();
	p = accel_queue_get_packet(qa);
	accel_prep_fill(p, accel_buffer_va(a_src), SIZE, PATTERN, 8);
	p = accel_queue_get_packet(qa);
	accel_prep_copy(p, accel_buffer_va(b_dst_on_a), accel_buffer_va(a_src), SIZE);
	ret = accel_queue_record(qa, &a_done);
	if (ret) {
		fail("record on A", ret);
		goto out;
	}

	/* A WAIT packet on B for a signal of A: its page is shared with B. */
	ret = accel_queue_wait_event(qb, &a_done);
	if (ret) {
		fail("wait on B for A", ret);
		goto out;
	}
	p = accel_queue_get_packet(qb);
	accel_prep_copy(p, accel_buffer_va(b_out), accel_buffer_va(b_dst), SIZE);
	ret = accel_queue_record(qb, &b_done);
	if (!ret)
		ret = accel_queue_submit(qb);
	if (ret < 0) {
		fail("submit on B", ret);
		goto out;
	}
	ret = accel_queue_submit(qa);
	if (ret < 0) {
		fail("submit on A", ret);
		goto out;
	}

	/* The host waits for B's event alone: B's wait orders the rest. */
	ret = accel_event_wait(&b_done, 30000000000ll);
	if (ret) {
		char report[4096];

		accel_queue_describe(qa, report, sizeof(report));
		fprintf(stderr, "%s\n", report);
		accel_queue_describe(qb, report, sizeof(report));
		fprintf(stderr, "%s\n", report);
		fail("wait for B", ret);
		goto out;
	}
	printf("two_devices: A filled %u bytes, copied them into B over the link, B copied "
	       "them locally after A's event: %.1f ms\n", SIZE, (now_s() - t0) * 1e3);

	out = accel_buffer_host(b_out);
	for (i = 0; i < SIZE / sizeof(*out); i++)
		bad += out[i] != PATTERN;
	if (bad) {
		fprintf(stderr, "two_devices: %zu words wrong\n", bad);
		goto out;
	}
	printf("two_devices: verified\n");
	status = 0;
out:
	/* Any order works; closing a device destroys what is left on it. */
	accel_queue_destroy(qa);
	accel_queue_destroy(qb);
	accel_buffer_destroy(b_dst_on_a);
	accel_buffer_destroy(a_src);
	accel_buffer_destroy(b_dst);
	accel_buffer_destroy(b_out);
	accel_device_close(dev[0]);
	accel_device_close(dev[1]);
	return status;
}
