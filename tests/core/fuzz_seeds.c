// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes seed inputs for core_fuzz into a directory: valid packet streams
 * of every type with addresses inside the fuzz target's regions, so that
 * mutations start from packets that execute rather than fault at once.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <drm/vaccel_accel.h>

#include "core_fuzz.h"

static struct drm_vaccel_packet in[RING_N + 64];

static struct drm_vaccel_packet p(unsigned int type, unsigned int arg,
				  __u64 a, __u64 b, __u64 c, __u64 d)
{
	struct drm_vaccel_packet k = { .header = type, .arg = arg };

	k.operand[0] = a;
	k.operand[1] = b;
	k.operand[2] = c;
	k.operand[3] = d;
	return k;
}

static void emit(const char *dir, int n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%02d", dir, n);
	f = fopen(path, "wb");
	if (!f || fwrite(in, sizeof(in), 1, f) != 1) {
		perror(path);
		exit(1);
	}
	fclose(f);
	memset(in, 0, sizeof(in));
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	int i, s = 0;

	for (i = 0; i < RING_N; i++)
		in[i] = p(DRM_VACCEL_PKT_COPY, 0, DATA_VA + 64 * i, DATA_VA + 65536 + 8 * i,
			  64 + i, 0);
	emit(dir, s++);
	for (i = 0; i < RING_N; i++)
		in[i] = p(DRM_VACCEL_PKT_FILL, 1 << (i % 4), DATA_VA + 8 * i, 8 * i,
			  i % 4 == 3 ? 0x1122334455667788ull : 0x11, 0);
	emit(dir, s++);
	for (i = 0; i < RING_N; i++)
		in[i] = p(DRM_VACCEL_PKT_REDUCE, (i % 6) | (i % 4) << 8, DATA_VA,
			  DATA_VA + 4096, DATA_VA + 8192, 100 + i);
	emit(dir, s++);
	for (i = 0; i < RING_N; i++) {
		in[i] = p(i % 2 ? DRM_VACCEL_PKT_WAIT : DRM_VACCEL_PKT_SIGNAL,
			  i % 2 ? i % 3 : 1 + i % 3, SIG_VA + 8 * i, i, 0, i % 4 ? 0 : 1000);
		in[i].completion_addr = SIG_VA + 8 * (15 - i);
		in[i].completion_op = DRM_VACCEL_SIGNAL_ADD;
		in[i].completion_value = 1;
		if (i % 5 == 0)
			in[i].header |= DRM_VACCEL_PKT_IRQ;
	}
	emit(dir, s++);
	for (i = 0; i < RING_N; i++)
		in[i] = p(DRM_VACCEL_PKT_EXEC, 0, EXEC_VA + 64 * (i % 8), 1 + i % 4, i, 0);
	for (i = 0; i < 64; i++)
		in[RING_N + i] = i % 7 == 6 ?
			p(DRM_VACCEL_PKT_EXEC, 0, EXEC_VA + 64 * (i + 1), 2, 5, 0) :
			p(i % 2 ? DRM_VACCEL_PKT_TIMESTAMP : DRM_VACCEL_PKT_DELAY, 0,
			  i % 2 ? DATA_VA + 8 * i : 1000ull * i, 0, 0, 0);
	emit(dir, s++);
	for (i = 0; i < RING_N; i++) {
		in[i] = p(DRM_VACCEL_PKT_COPY, 0, RO_VA + 16 * i, WO_VA + 32 * i, 16, 0);
		in[i].completion_addr = SIG_VA;
		in[i].completion_op = 1 + i % 3;
		in[i].completion_value = i;
	}
	emit(dir, s++);
	/*
	 * EXECs whose last packet takes several steps: a long DELAY, a WAIT
	 * that blocks until the harness advances the signals, a COPY of
	 * several chunks. Their completion actions must wait for it.
	 */
	for (i = 0; i < RING_N; i++) {
		in[i] = p(DRM_VACCEL_PKT_EXEC, 0, EXEC_VA + 128 * (i % 3), 2, i, 0);
		in[i].completion_addr = SIG_VA + 8 * (i % 3);
		in[i].completion_op = DRM_VACCEL_SIGNAL_ADD;
		in[i].completion_value = 1;
	}
	in[RING_N] = p(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0, 0);
	in[RING_N + 1] = p(DRM_VACCEL_PKT_DELAY, 0, 25000000, 0, 0, 0);
	in[RING_N + 2] = p(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0, 0);
	in[RING_N + 3] = p(DRM_VACCEL_PKT_WAIT, DRM_VACCEL_WAIT_GE, SIG_VA + 64, 2, 0, 0);
	in[RING_N + 4] = p(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0, 0);
	in[RING_N + 5] = p(DRM_VACCEL_PKT_COPY, 0, DATA_VA, DATA_VA + 65536, 65536, 0);
	emit(dir, s++);
	printf("fuzz_seeds: wrote %d seeds to %s\n", s, dir);
	return 0;
}
