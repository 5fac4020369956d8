// SPDX-License-Identifier: MIT
/*
 * The inline helpers as exported functions (lib/ffi.c): natively, the
 * built libaccel.so.1 is opened with dlopen(), as an FFI user would, and
 * each helper of <accel/packet.h>, <accel/tensor.h> and
 * <accel/taskgraph.h> is looked up by name (dlsym) and called on random
 * arguments next to the inline definition this file compiles from the
 * same header: results and every byte written must be the same.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <accel/accel.h>

#include "kselftest_harness.h"
#include "prng.h"

#ifndef LIBACCEL_SO_PATH
#error "build with -DLIBACCEL_SO_PATH=\"build/lib/libaccel.so.1\""
#endif

#define ROUNDS	20000

static void *lib(void)
{
	static void *h;

	if (!h) {
		h = dlopen(LIBACCEL_SO_PATH, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			fprintf(stderr, "# dlopen: %s\n", dlerror());
	}
	return h;
}

/* the exported function of the same name, with the inline's type */
#define EXPORTED(name) ((__typeof__(name) *)sym(#name))

static void *sym(const char *name)
{
	void *h = lib(), *p = h ? dlsym(h, name) : NULL;

	if (!p)
		fprintf(stderr, "# %s is not exported by %s\n", name, LIBACCEL_SO_PATH);
	return p;
}

static uint64_t r64(void)
{
	/* small values, edges and anything */
	switch (rn(4)) {
	case 0: return rn(16);
	case 1: return UINT64_MAX - rn(4);
	case 2: return 1ull << rn(64);
	default: return rnd();
	}
}

TEST(every_helper_exported)
{
	static const char *const names[] = {
		"accel_prep_packet", "accel_prep_nop", "accel_prep_copy", "accel_prep_fill",
		"accel_prep_reduce", "accel_prep_signal", "accel_prep_wait", "accel_prep_exec",
		"accel_prep_exec_bindings", "accel_prep_timestamp", "accel_prep_delay",
		"accel_prep_matmul", "accel_prep_completion", "accel_prep_irq",
		"accel_dtype_size", "accel_tensor_check", "accel_tensor_init",
		"accel_tensor_slice", "accel_tensor_permute", "accel_tensor_transpose",
		"accel_tensor_is_contiguous", "accel_tensor_reshape", "accel_task_init",
		"accel_task_arg", "accel_task_prep_copy", "accel_task_prep_fill",
		"accel_task_prep_reduce", "accel_task_prep_matmul", "accel_task_prep_delay",
		"accel_task_prep_host",
	};
	unsigned int i;

	ASSERT_NE(NULL, lib());
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *name = names[i];

		EXPECT_TRUE(sym(name) != NULL) TH_LOG("%s", name);
	}
}

/* Run @call_inline on packet a and @call_exported on packet b, both filled alike. */
#define SAME_PACKET(fn, ...)								\
	do {										\
		__typeof__(fn) *x = EXPORTED(fn);					\
		struct drm_vaccel_packet a, b;						\
		ASSERT_NE(NULL, x);							\
		for (size_t k = 0; k < sizeof(a); k++)					\
			((unsigned char *)&a)[k] = (unsigned char)rnd();		\
		b = a;									\
		fn(&a, ##__VA_ARGS__);							\
		x(&b, ##__VA_ARGS__);							\
		ASSERT_EQ(0, memcmp(&a, &b, sizeof(a))) TH_LOG(#fn " round %u", i);	\
	} while (0)

TEST(packet_builders)
{
	unsigned int i;

	rng_state = 0xf1f0f1f0ull;
	for (i = 0; i < ROUNDS; i++) {
		uint64_t v0 = r64(), v1 = r64(), v2 = r64(), v3 = r64(), v4 = r64();
		unsigned int u0 = (unsigned int)r64(), u1 = (unsigned int)r64();

		SAME_PACKET(accel_prep_packet, (uint16_t)u0);
		SAME_PACKET(accel_prep_nop);
		SAME_PACKET(accel_prep_copy, v0, v1, v2);
		SAME_PACKET(accel_prep_fill, v0, v1, v2, u0);
		SAME_PACKET(accel_prep_reduce, v0, v1, v2, v3, u0, u1);
		SAME_PACKET(accel_prep_signal, v0, u0, v1);
		SAME_PACKET(accel_prep_wait, v0, u0, v1, v2, v3);
		SAME_PACKET(accel_prep_exec, v0, v1, v2);
		SAME_PACKET(accel_prep_exec_bindings, v4, u1);
		SAME_PACKET(accel_prep_timestamp, v0);
		SAME_PACKET(accel_prep_delay, v0);
		SAME_PACKET(accel_prep_matmul, v0, u0, (uint32_t)u1);
		SAME_PACKET(accel_prep_completion, v0, u0, v1);
		SAME_PACKET(accel_prep_irq);
	}
}

static void random_tensor(struct accel_tensor *t)
{
	unsigned int d;

	memset(t, 0, sizeof(*t));
	t->buf = (struct accel_buffer *)(uintptr_t)(rnd() & ~7ull);
	t->offset = rn(3) ? rn(1 << 16) : r64();
	t->dtype = (enum accel_dtype)(rn(8) ? rn(ACCEL_DTYPE_COUNT) : rn(40));
	t->ndims = (uint32_t)(rn(8) ? 1 + rn(ACCEL_TENSOR_MAX_DIMS) : rn(10));
	for (d = 0; d < ACCEL_TENSOR_MAX_DIMS; d++) {
		t->shape[d] = rn(6) ? rn(9) : r64();
		t->strides[d] = rn(6) ? 1 + rn(64) : r64();
	}
	if (rn(2) && t->ndims >= 1 && t->ndims <= ACCEL_TENSOR_MAX_DIMS) {
		/* often a contiguous one, so that reshape has work */
		uint64_t s = 1;

		for (d = t->ndims; d-- > 0;) {
			t->strides[d] = s;
			s *= t->shape[d] ? t->shape[d] : 1;
		}
	}
	t->gen = rnd();
}

/*
 * @fn on a copy of t (inline) and on another (exported): same result, same
 * bytes. The arguments are evaluated twice: plain variables only.
 */
#define SAME_TENSOR(fn, ...)								\
	do {										\
		__typeof__(fn) *x = EXPORTED(fn);					\
		struct accel_tensor a = t, b = t;					\
		int ra, rb;								\
		ASSERT_NE(NULL, x);							\
		ra = (int)fn(&a, ##__VA_ARGS__);					\
		rb = (int)x(&b, ##__VA_ARGS__);						\
		ASSERT_EQ(ra, rb) TH_LOG(#fn " round %u", i);				\
		ASSERT_EQ(0, memcmp(&a, &b, sizeof(a))) TH_LOG(#fn " round %u", i);	\
	} while (0)

TEST(tensor_helpers)
{
	__typeof__(accel_dtype_size) *dsize = EXPORTED(accel_dtype_size);
	unsigned int i, oks = 0;
	int dt;

	ASSERT_NE(NULL, dsize);
	for (dt = -3; dt < 64; dt++)
		ASSERT_EQ(accel_dtype_size((enum accel_dtype)dt), dsize((enum accel_dtype)dt));
	rng_state = 0x7e5e0123ull;
	for (i = 0; i < ROUNDS; i++) {
		struct accel_tensor t;
		uint64_t shape[ACCEL_TENSOR_MAX_DIMS];
		uint32_t perm[ACCEL_TENSOR_MAX_DIMS] = { 0, 1, 2, 3, 4 }, d, nd, tmp, j, d0, d1;
		uint64_t start, len, step;

		random_tensor(&t);
		for (d = 0; d < ACCEL_TENSOR_MAX_DIMS; d++)
			shape[d] = rn(5) ? 1 + rn(12) : r64();
		for (d = ACCEL_TENSOR_MAX_DIMS; d-- > 1;) {
			j = (uint32_t)rn(d + 1);
			tmp = perm[d];
			perm[d] = perm[j];
			perm[j] = tmp;
		}
		if (!rn(4))
			perm[rn(ACCEL_TENSOR_MAX_DIMS)] = (uint32_t)rn(8);
		nd = (uint32_t)rn(ACCEL_TENSOR_MAX_DIMS + 2);
		d0 = (uint32_t)rn(7);
		d1 = (uint32_t)rn(7);
		start = rn(10);
		len = rn(10);
		step = rn(4);

		SAME_TENSOR(accel_tensor_check);
		SAME_TENSOR(accel_tensor_is_contiguous);
		SAME_TENSOR(accel_tensor_init, t.buf, t.offset, t.dtype, nd, shape);
		SAME_TENSOR(accel_tensor_slice, d0, start, len, step);
		SAME_TENSOR(accel_tensor_permute, perm);
		SAME_TENSOR(accel_tensor_transpose, d0, d1);
		SAME_TENSOR(accel_tensor_reshape, nd, shape);
		oks += !accel_tensor_check(&t);
	}
	EXPECT_LT(ROUNDS / 20, oks);	/* valid views were drawn too */
}

static void host_fn(void *arg)
{
	(void)arg;
}

/*
 * As SAME_TENSOR, plain variables as arguments. A builder's default name
 * ("copy", ...) is a string of the library in one and of this program in
 * the other: equal text counts as the same.
 */
#define SAME_TASK(fn, ...)								\
	do {										\
		__typeof__(fn) *x = EXPORTED(fn);					\
		struct accel_task a, b;							\
		ASSERT_NE(NULL, x);							\
		for (size_t k = 0; k < sizeof(a); k++)					\
			((unsigned char *)&a)[k] = (unsigned char)rnd();		\
		b = a;									\
		fn(&a, ##__VA_ARGS__);							\
		x(&b, ##__VA_ARGS__);							\
		if (a.name && b.name && a.name != b.name && !strcmp(a.name, b.name))	\
			b.name = a.name;						\
		ASSERT_EQ(0, memcmp(&a, &b, sizeof(a))) TH_LOG(#fn " round %u", i);	\
	} while (0)

TEST(task_builders)
{
	__typeof__(accel_task_arg) *xarg = EXPORTED(accel_task_arg);
	struct accel_tensor t1, t2, t3;
	unsigned int i;

	ASSERT_NE(NULL, xarg);
	rng_state = 0x7a5c0001ull;
	for (i = 0; i < ROUNDS / 4; i++) {
		uint32_t acc = (uint32_t)rn(5), op = (uint32_t)rn(8), redop = (uint32_t)r64();
		const char *name = rn(2) ? "name" : NULL;
		uint64_t v = r64();
		int accumulate = (int)rn(3);
		struct accel_task a, b;
		unsigned int n;

		SAME_TASK(accel_task_init, op, name);
		SAME_TASK(accel_task_prep_copy, &t1, &t2, acc);
		SAME_TASK(accel_task_prep_fill, &t1, acc, v);
		SAME_TASK(accel_task_prep_reduce, &t1, acc, &t2, &t3, redop);
		SAME_TASK(accel_task_prep_matmul, &t1, acc, &t2, &t3, accumulate);
		SAME_TASK(accel_task_prep_delay, v);
		SAME_TASK(accel_task_prep_host, host_fn, &t3);
		/* arguments up to and past ACCEL_TASK_MAX_ARGS */
		accel_task_init(&a, ACCEL_TASK_DELAY, "d");
		b = a;
		for (n = 0; n < ACCEL_TASK_MAX_ARGS + 2; n++) {
			ASSERT_EQ(accel_task_arg(&a, &t1, acc), xarg(&b, &t1, acc));
			ASSERT_EQ(0, memcmp(&a, &b, sizeof(a)));
		}
	}
}

TEST_HARNESS_MAIN
