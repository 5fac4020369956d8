// SPDX-License-Identifier: MIT
/*
 * fill_copy_wait: the smallest complete libaccel program.
 *
 *   1. open the first vaccel device;
 *   2. allocate two buffers of device memory, mapped into this process;
 *   3. on one queue: FILL the source with a pattern, COPY it to the
 *      destination, then raise a signal (the completion of all of it);
 *   4. wait on the host for that signal;
 *   5. check every byte of the destination from the host.
 *
 * Exits 0 only if the destination holds the pattern.
 *
 * Build (installed library): cc fill_copy_wait.c $(pkg-config --cflags --libs libaccel)
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <accel/accel.h>

#define SIZE	(1u << 20)			/* 1 MiB */
#define PATTERN	0x0123456789abcdefull		/* 8-byte fill pattern */

/* Print what failed and the library's explanation of the error code. */
static int fail(const char *what, int err)
{
	fprintf(stderr, "fill_copy_wait: %s: %s\n", what, accel_strerror(err));
	return 1;
}

int main(void)
{
	struct accel_device *dev = NULL;
	struct accel_buffer *src = NULL, *dst = NULL;
	struct accel_queue *q = NULL;
	struct accel_signal *sig = NULL;
	struct drm_vaccel_packet *p;
	struct accel_event done;
	uint64_t *out;
	size_t i, bad = 0;
	int ret, status = 1;

	/* Device 0 in /sys/class/accel order: its own file and VA space. */
	ret = accel_device_open(0, &dev);
	if (ret)
		return fail("open device 0", ret);

	/*
	 * Buffers: the library picks their device addresses and binds them.
	 * ACCEL_BUFFER_HOST also maps them into this process, so that the
	 * host can read the result without another call.
	 */
	ret = accel_buffer_create(dev, SIZE, ACCEL_BUFFER_HOST, &src);
	if (!ret)
		ret = accel_buffer_create(dev, SIZE, ACCEL_BUFFER_HOST, &dst);
	if (ret) {
		fail("allocate buffers", ret);
		goto out;
	}

	/* A queue with the default ring (1024 packets), and a signal. */
	ret = accel_queue_create(dev, NULL, &q);
	if (!ret)
		ret = accel_signal_create(dev, &sig);
	if (ret) {
		fail("create queue and signal", ret);
		goto out;
	}

	/*
	 * The event we will wait for: the signal's next value. Signals only
	 * grow; accel_signal_next() hands out values above the current one.
	 */
	done.signal = sig;
	done.value = accel_signal_next(sig);

	/*
	 * Three packets, taken from the ring and filled in place. The queue
	 * runs them in order, so the COPY sees the FILL's data and the
	 * SIGNAL comes after both. Nothing reaches the device yet.
	 */
	p = accel_queue_get_packet(q);
	accel_prep_fill(p, accel_buffer_va(src), SIZE, PATTERN, 8);
	p = accel_queue_get_packet(q);
	accel_prep_copy(p, accel_buffer_va(dst), accel_buffer_va(src), SIZE);
	p = accel_queue_get_packet(q);
	accel_prep_signal(p, accel_signal_va(sig), DRM_VACCEL_SIGNAL_MAX, done.value);
	accel_prep_irq(p);		/* wake host waiters when it lands */

	/* One doorbell store publishes all three (a KICK only if needed). */
	ret = accel_queue_submit(q);
	if (ret < 0) {
		fail("submit", ret);
		goto out;
	}

	/* Spin briefly, then sleep in the kernel until the signal arrives. */
	ret = accel_event_wait(&done, 5000000000ll);	/* 5 s */
	if (ret) {
		char report[4096];

		/* -EIO: the queue faulted; its report names the packet */
		accel_queue_describe(q, report, sizeof(report));
		fprintf(stderr, "%s\n", report);
		fail("wait", ret);
		goto out;
	}

	/* Verify from the host: every 8-byte word holds the pattern. */
	out = accel_buffer_host(dst);
	for (i = 0; i < SIZE / sizeof(*out); i++)
		bad += out[i] != PATTERN;
	if (bad) {
		fprintf(stderr, "fill_copy_wait: %zu of %zu words wrong (first: %#" PRIx64 ")\n",
			bad, (size_t)(SIZE / sizeof(*out)), out[0]);
		goto out;
	}
	printf("fill_copy_wait: filled, copied and verified %u bytes; signal at %" PRIu64 "\n",
	       SIZE, accel_signal_read(sig));
	status = 0;
out:
	/* Every object has a destroy call; closing the device would also do. */
	accel_signal_destroy(sig);
	accel_queue_destroy(q);
	accel_buffer_destroy(dst);
	accel_buffer_destroy(src);
	accel_device_close(dev);
	return status;
}
