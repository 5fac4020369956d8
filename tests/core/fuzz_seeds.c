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
	/*
	 * uAPI 3: EXECs with binding tables (in the sealed region, after the
	 * body) whose packets address table entries, nested EXECs with
	 * relative epochs, masked WAITs.
	 */
	for (i = 0; i < RING_N; i++) {
		in[i] = p(DRM_VACCEL_PKT_EXEC, 4, EXEC_VA, 4, i, EXEC_VA + 2048 + 32 * (i % 4));
		in[i].flags = i % 2 ? DRM_VACCEL_EXEC_F_EPOCH : 0;
	}
	in[RING_N] = p(DRM_VACCEL_PKT_COPY, 0, DRM_VACCEL_BINDING_ADDR(0, 0),
		       DRM_VACCEL_BINDING_ADDR(1, 64), 256, 0);
	in[RING_N + 1] = p(DRM_VACCEL_PKT_SIGNAL, DRM_VACCEL_SIGNAL_ADD,
			   DRM_VACCEL_BINDING_ADDR(2, 8), 1, 0, 0);
	in[RING_N + 1].flags = DRM_VACCEL_SIGNAL_F_EPOCH;
	in[RING_N + 2] = p(DRM_VACCEL_PKT_WAIT, DRM_VACCEL_WAIT_GE,
			   DRM_VACCEL_BINDING_ADDR(2, 8), 1, 0xff, 0);
	in[RING_N + 3] = p(DRM_VACCEL_PKT_EXEC, 0, EXEC_VA + 64 * 6, 1, 1, 0);
	in[RING_N + 3].flags = DRM_VACCEL_EXEC_F_EPOCH;
	in[RING_N + 3].completion_addr = DRM_VACCEL_BINDING_ADDR(3, 0);
	in[RING_N + 3].completion_op = DRM_VACCEL_SIGNAL_MAX;
	in[RING_N + 3].completion_value = 7;
	in[RING_N + 6] = p(DRM_VACCEL_PKT_FILL, 8, DRM_VACCEL_BINDING_ADDR(1, 0), 64, 3, 0);
	{	/* 4 tables of 4 entries at EXEC_VA + 2048 */
		__u64 t[16];

		for (i = 0; i < 4; i++) {
			t[4 * i] = DATA_VA + 1024 * i;
			t[4 * i + 1] = DATA_VA + 65536;
			t[4 * i + 2] = SIG_VA;
			t[4 * i + 3] = SIG_VA + 64;
		}
		memcpy(&in[RING_N + 32], t, sizeof(t));
	}
	emit(dir, s++);
	/* MATMUL descriptors in the sealed region, on the ring and in an EXEC */
	for (i = 0; i < RING_N; i++) {
		in[i] = i % 2 ? p(DRM_VACCEL_PKT_MATMUL, i % 3, EXEC_VA + 3072 + 64 * (i % 4), 0, 0, 0) :
				p(DRM_VACCEL_PKT_EXEC, 3, EXEC_VA, 1, 0, EXEC_VA + 2048);
		in[i].flags = i % 4 == 1 ? DRM_VACCEL_MATMUL_F_ACCUMULATE : 0;
	}
	in[RING_N] = p(DRM_VACCEL_PKT_MATMUL, 0, EXEC_VA + 3072 + 64 * 4, 0, 0, 0);
	{
		static const __u64 table[3] = { DATA_VA, DATA_VA + 16384, DATA_VA + 32768 };
		struct drm_vaccel_matmul d[5] = { 0 };

		memcpy(&in[RING_N + 32], table, sizeof(table));
		for (i = 0; i < 5; i++) {
			d[i].a = i < 4 ? DATA_VA + 4096 * i : DRM_VACCEL_BINDING_ADDR(0, 0);
			d[i].b = i < 4 ? DATA_VA + 32768 : DRM_VACCEL_BINDING_ADDR(1, 0);
			d[i].c = i < 4 ? DATA_VA + 65536 + 8192 * i : DRM_VACCEL_BINDING_ADDR(2, 0);
			d[i].m = 1 + 5 * i;
			d[i].n = 16 - 3 * i;
			d[i].k = 7 + i;
			d[i].lda = d[i].k + i;
			d[i].ldb = d[i].n;
			d[i].ldc = d[i].n + 1;
		}
		memcpy(&in[RING_N + 48], d, sizeof(d));
	}
	emit(dir, s++);
	printf("fuzz_seeds: wrote %d seeds to %s\n", s, dir);
	return 0;
}
