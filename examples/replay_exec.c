// SPDX-License-Identifier: MIT
/*
 * replay_exec: record work once into a sealed persistent buffer and replay
 * it 1,000 times with EXEC, with eager packets interleaved on the same
 * queue.
 *
 * The persistent buffer (the "graph") holds BODY_ADDS REDUCE packets, each
 * adding 1 to every element of an i64 accumulator, and a SIGNAL that raises
 * a counter to the launch's epoch. Between launches, eager packets on the
 * same queue copy the accumulator's first element into a snapshot array
 * and stamp the launch number into a tag array.
 *
 * What it shows (seed 004, the NCCL work-FIFO hang): a replay occupies
 * exactly one ring slot, however many packets its body has. The ring here
 * has RING slots and the body is longer than the ring, so if the body's
 * packets were counted against the ring, one launch could never fit and
 * the submitter would wait forever. Replays and eager packets share one
 * submission order, so snapshot k must see exactly k + 1 launches.
 *
 * Exits 0 only if: the accumulator holds LAUNCHES * BODY_ADDS, every
 * snapshot and tag is right, and the counter reached its last epoch.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <accel/accel.h>

#define LAUNCHES	1000
#define BODY_ADDS	20		/* REDUCE packets per launch */
#define ELEMS		8		/* i64 elements of the accumulator */
#define RING		16		/* ring slots: fewer than the body's packets */

static int fail(const char *what, int err)
{
	fprintf(stderr, "replay_exec: %s: %s\n", what, accel_strerror(err));
	return 1;
}

int main(void)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = RING };
	struct accel_buffer *body = NULL, *acc = NULL, *ones = NULL, *snap = NULL, *tag = NULL;
	struct drm_vaccel_packet *p, *rec;
	struct accel_device *dev = NULL;
	struct accel_signal *counter = NULL;
	struct accel_queue *q = NULL;
	struct accel_event last;
	uint64_t base, *s, *t;
	int64_t *a;
	unsigned int i, k, bad = 0;
	int ret, status = 1;

	ret = accel_device_open(0, &dev);
	if (ret)
		return fail("open device 0", ret);

	/*
	 * Data: the accumulator and the constant 1s (device only), the
	 * snapshot and tag arrays (mapped, for the final check).
	 */
	ret = accel_buffer_create(dev, ELEMS * 8, ACCEL_BUFFER_HOST, &acc);
	if (!ret)
		ret = accel_buffer_create(dev, ELEMS * 8, 0, &ones);
	if (!ret)
		ret = accel_buffer_create(dev, LAUNCHES * 8, ACCEL_BUFFER_HOST, &snap);
	if (!ret)
		ret = accel_buffer_create(dev, LAUNCHES * 8, ACCEL_BUFFER_HOST, &tag);
	if (!ret)
		ret = accel_signal_create(dev, &counter);
	if (ret) {
		fail("buffers", ret);
		goto out;
	}
	/* The counter keeps the value of its slot's last owner: count from it. */
	base = accel_signal_read(counter);

	/*
	 * Record the body: write its packets through the host mapping of a
	 * persistent buffer, then seal it. After accel_buffer_seal() neither
	 * the host nor the device can change it; EXEC runs only sealed
	 * buffers.
	 */
	ret = accel_buffer_create(dev, (BODY_ADDS + 1) * sizeof(*rec),
				  ACCEL_BUFFER_PERSISTENT | ACCEL_BUFFER_HOST, &body);
	if (ret) {
		fail("persistent buffer", ret);
		goto out;
	}
	rec = accel_buffer_host(body);
	for (i = 0; i < BODY_ADDS; i++)		/* acc = acc + 1, in place */
		accel_prep_reduce(&rec[i], accel_buffer_va(acc), accel_buffer_va(acc),
				  accel_buffer_va(ones), ELEMS, DRM_VACCEL_DTYPE_I64,
				  DRM_VACCEL_REDOP_SUM);
	/* counter = max(counter, 0 + this launch's epoch) */
	accel_prep_signal(&rec[BODY_ADDS], accel_signal_va(counter), DRM_VACCEL_SIGNAL_MAX, 0);
	rec[BODY_ADDS].flags = DRM_VACCEL_SIGNAL_F_EPOCH;
	/*
	 * and wake host waiters of the counter: without it, a host wait that
	 * went to sleep (the work outlasted its spin) sleeps to its deadline
	 */
	accel_prep_irq(&rec[BODY_ADDS]);
	ret = accel_buffer_seal(body);
	if (ret) {
		fail("seal", ret);
		goto out;
	}

	/* A queue with a 16-slot ring. */
	ret = accel_queue_create(dev, &qp, &q);
	if (ret) {
		fail("queue", ret);
		goto out;
	}

	/* Eager set-up on the same queue: acc = 0, ones = 1. */
	p = accel_queue_get_packet(q);
	accel_prep_fill(p, accel_buffer_va(acc), ELEMS * 8, 0, 8);
	p = accel_queue_get_packet(q);
	accel_prep_fill(p, accel_buffer_va(ones), ELEMS * 8, 1, 8);

	/*
	 * The loop: one EXEC slot and two eager slots per launch. When the
	 * ring is full, accel_queue_reserve() spins briefly, then sleeps
	 * until the device has freed enough slots.
	 */
	for (k = 0; k < LAUNCHES; k++) {
		ret = accel_queue_reserve(q, 3, 10000000000ll);
		if (ret) {
			fail("reserve", ret);
			goto report;
		}
		p = accel_queue_get_packet(q);	/* launch k, epoch base + k + 1 */
		accel_prep_exec(p, accel_buffer_va(body), BODY_ADDS + 1, base + k + 1);
		p = accel_queue_get_packet(q);	/* snapshot acc[0] after it */
		accel_prep_copy(p, accel_buffer_va(snap) + 8ull * k, accel_buffer_va(acc), 8);
		p = accel_queue_get_packet(q);	/* tag the launch */
		accel_prep_fill(p, accel_buffer_va(tag) + 8ull * k, 8, k, 8);
		/* one doorbell per launch; batching more is fine too */
		ret = accel_queue_submit(q);
		if (ret < 0) {
			fail("submit", ret);
			goto report;
		}
	}

	/* The last launch raises the counter to base + LAUNCHES. */
	last.signal = counter;
	last.value = base + LAUNCHES;
	ret = accel_event_wait(&last, 60000000000ll);
	if (!ret)
		ret = accel_queue_sync(q, 60000000000ll);	/* and the eager tail */
	if (ret) {
		fail("wait", ret);
		goto report;
	}

	a = accel_buffer_host(acc);
	s = accel_buffer_host(snap);
	t = accel_buffer_host(tag);
	for (i = 0; i < ELEMS; i++)
		bad += a[i] != (int64_t)LAUNCHES * BODY_ADDS;
	for (k = 0; k < LAUNCHES; k++)
		bad += s[k] != (uint64_t)(k + 1) * BODY_ADDS || t[k] != k;
	if (bad || accel_signal_read(counter) != base + LAUNCHES) {
		fprintf(stderr, "replay_exec: %u wrong values; acc[0] %" PRId64
			", counter %" PRIu64 " (want %" PRIu64 ")\n", bad, a[0],
			accel_signal_read(counter), base + LAUNCHES);
		goto out;
	}
	printf("replay_exec: %u launches of a %u-packet sealed body through a %u-slot ring, "
	       "interleaved with %u eager packets: verified (%" PRIu64 " ring packets)\n",
	       LAUNCHES, BODY_ADDS + 1, RING, 2 * LAUNCHES + 2, accel_queue_submitted(q));
	status = 0;
	goto out;
report:
	if (q) {
		char text[8192];

		accel_queue_describe(q, text, sizeof(text));
		fprintf(stderr, "%s\n", text);
	}
out:
	accel_queue_destroy(q);
	accel_signal_destroy(counter);
	accel_buffer_destroy(body);
	accel_buffer_destroy(tag);
	accel_buffer_destroy(snap);
	accel_buffer_destroy(ones);
	accel_buffer_destroy(acc);
	accel_device_close(dev);
	return status;
}
