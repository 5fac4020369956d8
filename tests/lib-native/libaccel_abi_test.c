// SPDX-License-Identifier: MIT
/*
 * libaccel's stable-ABI rules, natively under ASan and UBSan: the whole
 * library over the fake kernel of fake_kmod.h.
 *
 * - acc_copy_struct() and acc_put_struct() against an oracle, over random
 *   sizes and contents (the rule of <accel/accel.h>: below the 1.0 size
 *   -EINVAL, above 4096 -E2BIG, a larger input's unknown tail must be zero,
 *   an output's tail is zeroed, a failure writes nothing);
 * - the calls that take a structure size or an element size:
 *   accel_queue_create(), accel_device_query(), accel_device_topology(),
 *   accel_queue_status() and accel_device_list()'s checks;
 * - the tensor rules: an offset is a multiple of the element size; @gen is
 *   0 after accel_tensor_init() and kept by every derived view; a failed
 *   init or reshape leaves the view alone; a view with more than
 *   ACCEL_TENSOR_MAX_DIMS dimensions is refused, not overrun;
 * - accel_task_init() and the task builders set @size.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <stdlib.h>
#include <string.h>

/* fake_kmod.h's TSan annotations: no TSan here */
void AnnotateIgnoreSyncBegin(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreSyncEnd(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreReadsBegin(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreReadsEnd(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreWritesBegin(const char *file, int line) { (void)file; (void)line; }
void AnnotateIgnoreWritesEnd(const char *file, int line) { (void)file; (void)line; }
void AnnotateNewMemory(const char *file, int line, const volatile void *mem, size_t size)
{
	(void)file; (void)line; (void)mem; (void)size;
}

#include "fake_kmod.h"
#include "kselftest_harness.h"
#include "prng.h"

#define SEED		0x5eed0ab1ull
#define ROUNDS		200000
#define BIG		(ACC_STRUCT_MAX + 64)

/* ---- the copy helpers against an oracle ---- */

/* what acc_copy_struct() must do: returns the errno and fills @want */
static int oracle_copy(unsigned char *want, size_t dst_size, const unsigned char *src,
		       size_t src_size, size_t min_size)
{
	size_t i;

	if (src_size < min_size)
		return -EINVAL;
	if (src_size > ACC_STRUCT_MAX)
		return -E2BIG;
	for (i = dst_size; i < src_size; i++)
		if (src[i])
			return -E2BIG;
	for (i = 0; i < dst_size; i++)
		want[i] = i < src_size ? src[i] : 0;
	return 0;
}

static int oracle_put(unsigned char *want, size_t dst_size, const unsigned char *src,
		      size_t src_size, size_t min_size)
{
	size_t i;

	if (dst_size < min_size)
		return -EINVAL;
	if (dst_size > ACC_STRUCT_MAX)
		return -E2BIG;
	for (i = 0; i < dst_size; i++)
		want[i] = i < src_size ? src[i] : 0;
	return 0;
}

/* a size around the interesting edges */
static size_t pick_size(size_t around)
{
	switch (rn(6)) {
	case 0: return rn(around + 1);
	case 1: return around;
	case 2: return around + rn(8);
	case 3: return ACC_STRUCT_MAX - rn(3);
	case 4: return ACC_STRUCT_MAX + 1 + rn(3);
	default: return rn(BIG);
	}
}

static void fill_src(unsigned char *src, size_t n, size_t known)
{
	size_t i;

	for (i = 0; i < n; i++)
		src[i] = (unsigned char)rnd();
	/* mostly a zero tail past the known part, sometimes one stray byte */
	if (n > known && rn(4)) {
		memset(src + known, 0, n - known);
		if (!rn(3))
			src[known + rn(n - known)] = (unsigned char)(1 + rn(255));
	}
}

TEST(copy_struct_oracle)
{
	static unsigned char src[BIG], dst[BIG], want[BIG], before[BIG];
	unsigned int i, ok = 0, e2big = 0, einval = 0;

	rng_state = SEED;
	for (i = 0; i < ROUNDS; i++) {
		size_t dst_size = 1 + rn(96), min_size = rn(dst_size + 1);
		size_t src_size = pick_size(dst_size);
		int ret, exp;

		fill_src(src, src_size, dst_size);
		for (size_t j = 0; j < sizeof(dst); j++)
			dst[j] = before[j] = (unsigned char)rnd();
		memcpy(want, before, sizeof(want));
		exp = oracle_copy(want, dst_size, src, src_size, min_size);
		ret = acc_copy_struct(dst, dst_size, src, src_size, min_size);
		ASSERT_EQ(exp, ret) TH_LOG("round %u: dst %zu src %zu min %zu", i, dst_size,
					   src_size, min_size);
		/* on failure nothing, on success exactly dst_size bytes */
		ASSERT_EQ(0, memcmp(want, dst, sizeof(dst))) TH_LOG("round %u", i);
		ok += !ret;
		e2big += ret == -E2BIG;
		einval += ret == -EINVAL;
	}
	/* every outcome was drawn often */
	EXPECT_LT(ROUNDS / 10, ok);
	EXPECT_LT(ROUNDS / 20, e2big);
	EXPECT_LT(ROUNDS / 50, einval);
}

TEST(put_struct_oracle)
{
	static unsigned char src[BIG], dst[BIG], want[BIG];
	unsigned int i, ok = 0;

	rng_state = SEED + 1;
	for (i = 0; i < ROUNDS; i++) {
		size_t src_size = 1 + rn(96), min_size = rn(src_size + 1);
		size_t dst_size = pick_size(src_size);
		int ret, exp;

		for (size_t j = 0; j < sizeof(dst); j++)
			want[j] = dst[j] = (unsigned char)rnd();
		for (size_t j = 0; j < src_size; j++)
			src[j] = (unsigned char)rnd();
		exp = oracle_put(want, dst_size, src, src_size, min_size);
		ret = acc_put_struct(dst, dst_size, src, src_size, min_size);
		ASSERT_EQ(exp, ret) TH_LOG("round %u: dst %zu src %zu min %zu", i, dst_size,
					   src_size, min_size);
		ASSERT_EQ(0, memcmp(want, dst, sizeof(dst))) TH_LOG("round %u", i);
		ok += !ret;
	}
	EXPECT_LT(ROUNDS / 10, ok);
}

/* The 1.0 sizes: every 1.0 field fits in them, the structures never shrink. */
#define FITS(type, last, size_1_0)							\
	do {										\
		EXPECT_LE(offsetof(type, last) + sizeof(((type *)0)->last), size_1_0);	\
		EXPECT_LE(size_1_0, sizeof(type));					\
	} while (0)

TEST(sizes_1_0)
{
	FITS(struct accel_device_info, id, ACCEL_DEVICE_INFO_SIZE_1_0);
	FITS(struct accel_device_props, reserved, ACCEL_DEVICE_PROPS_SIZE_1_0);
	FITS(struct accel_link, local, ACCEL_LINK_SIZE_1_0);
	FITS(struct accel_queue_params, reserved, ACCEL_QUEUE_PARAMS_SIZE_1_0);
	FITS(struct accel_queue_fault, packet, ACCEL_QUEUE_FAULT_SIZE_1_0);
	FITS(struct accel_tg_params, timeout_ns, ACCEL_TG_PARAMS_SIZE_1_0);
	FITS(struct accel_task, host, ACCEL_TASK_SIZE_1_0);
	/* the decisions of 1.0: the task's size first, the tensor's gen last */
	EXPECT_EQ(0, offsetof(struct accel_task, size));
	EXPECT_EQ(sizeof(struct accel_tensor) - 8, offsetof(struct accel_tensor, gen));
}

/*
 * struct accel_p2p_op (1.7) is passed as an array, so it has no size
 * field: its layout is fixed and it grows only into @flags bits and
 * @reserved, which accel_tg_p2p() requires to be zero today.
 */
TEST(p2p_op_layout_is_fixed)
{
	EXPECT_EQ(32, sizeof(struct accel_p2p_op));
	EXPECT_EQ(0, offsetof(struct accel_p2p_op, tensor));
	EXPECT_EQ(8, offsetof(struct accel_p2p_op, peer));
	EXPECT_EQ(12, offsetof(struct accel_p2p_op, flags));
	EXPECT_EQ(16, offsetof(struct accel_p2p_op, reserved));
}

/* ---- the calls, over the fake kernel ---- */

FIXTURE(dev) {
	struct accel_device *dev;
};

FIXTURE_SETUP(dev)
{
	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake", &self->dev));
}

FIXTURE_TEARDOWN(dev)
{
	accel_device_close(self->dev);
}

/* accel_queue_params of @size bytes: the 1.0 fields, then @tail */
static int create_with(struct accel_device *dev, size_t size, unsigned char tail,
		       struct accel_queue **q)
{
	static unsigned char raw[ACC_STRUCT_MAX + 8] __attribute__((aligned(8)));
	struct accel_queue_params p = { .size = (uint32_t)size, .ring_size = 64 };

	memset(raw, 0, sizeof(raw));
	memcpy(raw, &p, sizeof(p));
	if (size > sizeof(p))
		raw[size - 1] = tail;
	*q = NULL;
	return accel_queue_create(dev, (const struct accel_queue_params *)raw, q);
}

TEST_F(dev, queue_params_size)
{
	struct accel_queue *q;
	size_t s;

	for (s = 0; s < ACCEL_QUEUE_PARAMS_SIZE_1_0; s += 4) {
		EXPECT_EQ(-EINVAL, create_with(self->dev, s, 0, &q)) TH_LOG("size %zu", s);
		EXPECT_EQ(NULL, q);
	}
	/* 1.0's size, and larger ones with zeros past it */
	for (s = ACCEL_QUEUE_PARAMS_SIZE_1_0; s <= ACC_STRUCT_MAX; s = s * 2 + 8) {
		ASSERT_EQ(0, create_with(self->dev, s, 0, &q)) TH_LOG("size %zu", s);
		accel_queue_destroy(q);
	}
	ASSERT_EQ(0, create_with(self->dev, ACC_STRUCT_MAX, 0, &q));
	accel_queue_destroy(q);
	/* a field this library does not know, set */
	EXPECT_EQ(-E2BIG, create_with(self->dev, sizeof(struct accel_queue_params) + 8, 1, &q));
	EXPECT_EQ(-E2BIG, create_with(self->dev, ACC_STRUCT_MAX, 0x80, &q));
	EXPECT_EQ(-E2BIG, create_with(self->dev, ACC_STRUCT_MAX + 1, 0, &q));
	EXPECT_EQ(NULL, q);
	/* the known fields are still checked */
	{
		struct accel_queue_params p = { .size = sizeof(p), .flags = 1 };

		EXPECT_EQ(-EINVAL, accel_queue_create(self->dev, &p, &q));
		p.flags = 0;
		p.reserved = 1;
		EXPECT_EQ(-EINVAL, accel_queue_create(self->dev, &p, &q));
	}
}

TEST_F(dev, device_query_size)
{
	struct accel_device_props ref = { .size = sizeof(ref) };
	unsigned char raw[ACC_STRUCT_MAX + 8], copy[sizeof(raw)];
	struct accel_device_props *p = (void *)raw;
	uint32_t sizes[] = { sizeof(ref) + 1, sizeof(ref) + 40, ACC_STRUCT_MAX }, i;
	size_t j;

	ASSERT_EQ(0, accel_device_query(self->dev, &ref));
	EXPECT_EQ(sizeof(ref), ref.size);
	EXPECT_NE(0, ref.va_size);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(raw, 0xa5, sizeof(raw));
		p->size = sizes[i];
		ASSERT_EQ(0, accel_device_query(self->dev, p));
		EXPECT_EQ(sizes[i], p->size);
		EXPECT_EQ(0, memcmp((char *)p + 4, (char *)&ref + 4, sizeof(ref) - 4));
		for (j = sizeof(ref); j < sizes[i]; j++)
			ASSERT_EQ(0, raw[j]) TH_LOG("size %u: byte %zu", sizes[i], j);
		EXPECT_EQ(0xa5, raw[sizes[i]]);		/* not past its size */
	}
	/* too small, too large: nothing written */
	memset(raw, 0xa5, sizeof(raw));
	p->size = ACCEL_DEVICE_PROPS_SIZE_1_0 - 1;
	memcpy(copy, raw, sizeof(raw));
	EXPECT_EQ(-EINVAL, accel_device_query(self->dev, p));
	EXPECT_EQ(0, memcmp(copy, raw, sizeof(raw)));
	p->size = ACC_STRUCT_MAX + 1;
	memcpy(copy, raw, sizeof(raw));
	EXPECT_EQ(-E2BIG, accel_device_query(self->dev, p));
	EXPECT_EQ(0, memcmp(copy, raw, sizeof(raw)));
}

TEST_F(dev, topology_elem_size)
{
	struct accel_device *devs[2] = { self->dev, self->dev };
	struct accel_link ref[4];
	unsigned char raw[4 * 64 + 8], copy[sizeof(raw)];
	size_t sizes[] = { sizeof(struct accel_link), sizeof(struct accel_link) + 8, 64 }, i, e;

	ASSERT_EQ(0, accel_device_topology(devs, 2, ref, sizeof(ref[0])));
	EXPECT_TRUE(ref[1].local);		/* the same device twice */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(raw, 0xa5, sizeof(raw));
		ASSERT_EQ(0, accel_device_topology(devs, 2, (struct accel_link *)raw, sizes[i]));
		for (e = 0; e < 4; e++) {
			struct accel_link l;

			memcpy(&l, raw + e * sizes[i], sizeof(l));
			EXPECT_EQ(ref[e].local, l.local);
			EXPECT_EQ(ref[e].bandwidth_mbps, l.bandwidth_mbps);
			EXPECT_EQ(ref[e].latency_ns, l.latency_ns);
			for (size_t j = sizeof(l); j < sizes[i]; j++)
				ASSERT_EQ(0, raw[e * sizes[i] + j]);
		}
		EXPECT_EQ(0xa5, raw[4 * sizes[i]]);
	}
	memset(raw, 0xa5, sizeof(raw));
	memcpy(copy, raw, sizeof(raw));
	EXPECT_EQ(-EINVAL, accel_device_topology(devs, 2, (void *)raw, ACCEL_LINK_SIZE_1_0 - 1));
	EXPECT_EQ(-E2BIG, accel_device_topology(devs, 2, (void *)raw, ACC_STRUCT_MAX + 1));
	EXPECT_EQ(-EINVAL, accel_device_topology(devs, 2, NULL, sizeof(ref[0])));
	EXPECT_EQ(0, memcmp(copy, raw, sizeof(raw)));
	/* no entries: the size is not looked at */
	EXPECT_EQ(0, accel_device_topology(devs, 0, NULL, 0));
}

/* The checks accel_device_list() makes before it looks for devices. */
TEST(device_list_elem_size)
{
	struct accel_device_info one[2];

	memset(one, 0xa5, sizeof(one));
	EXPECT_EQ(-EINVAL, accel_device_list(one, 1, ACCEL_DEVICE_INFO_SIZE_1_0 - 1));
	EXPECT_EQ(-EINVAL, accel_device_list(one, 1, 0));
	EXPECT_EQ(-EINVAL, accel_device_list(NULL, 1, sizeof(one[0])));
	EXPECT_EQ(-E2BIG, accel_device_list(one, 1, ACC_STRUCT_MAX + 1));
	EXPECT_EQ(0xa5a5a5a5u, one[0].minor);
	/* max 0: no list and no size needed (a count, or -ENOENT here) */
	EXPECT_NE(-EINVAL, accel_device_list(NULL, 0, 0));
}

TEST_F(dev, status_fault_size)
{
	struct accel_queue_params params = { .size = sizeof(params), .ring_size = 64 };
	struct accel_queue_fault ref;
	unsigned char raw[sizeof(ref) + 64], copy[sizeof(raw)];
	struct drm_vaccel_packet *pkt;
	struct accel_queue *q;
	unsigned int i;

	ASSERT_EQ(0, accel_queue_create(self->dev, &params, &q));
	/* running: a bad size is still refused */
	EXPECT_EQ(0, accel_queue_status(q, NULL, 0));
	EXPECT_EQ(0, accel_queue_status(q, &ref, sizeof(ref)));
	EXPECT_EQ(-EINVAL, accel_queue_status(q, &ref, ACCEL_QUEUE_FAULT_SIZE_1_0 - 1));
	EXPECT_EQ(-E2BIG, accel_queue_status(q, &ref, ACC_STRUCT_MAX + 1));

	/* a COPY of unmapped addresses: the fake kernel's packet core faults it */
	pkt = accel_queue_get_packet(q);
	ASSERT_NE(NULL, pkt);
	accel_prep_copy(pkt, 0x100000000ull, 0x100001000ull, 64);
	ASSERT_EQ(1, accel_queue_submit(q));
	for (i = 0; i < 1000 && !accel_queue_status(q, NULL, 0); i++)
		fake_engine_step(64);
	ASSERT_EQ(-EIO, accel_queue_status(q, &ref, sizeof(ref)));
	EXPECT_EQ(DRM_VACCEL_FAULT_UNMAPPED, ref.code);
	EXPECT_EQ(DRM_VACCEL_PKT_COPY, ref.packet.header & 0xff);

	memset(raw, 0xa5, sizeof(raw));
	ASSERT_EQ(-EIO, accel_queue_status(q, (void *)raw, sizeof(raw) - 8));
	EXPECT_EQ(0, memcmp(raw, &ref, sizeof(ref)));
	for (i = sizeof(ref); i < sizeof(raw) - 8; i++)
		ASSERT_EQ(0, raw[i]);
	EXPECT_EQ(0xa5, raw[sizeof(raw) - 8]);

	memset(raw, 0xa5, sizeof(raw));
	memcpy(copy, raw, sizeof(raw));
	EXPECT_EQ(-EINVAL, accel_queue_status(q, (void *)raw, ACCEL_QUEUE_FAULT_SIZE_1_0 - 8));
	EXPECT_EQ(0, memcmp(copy, raw, sizeof(raw)));
	accel_queue_destroy(q);
}

/* ---- tensors and tasks ---- */

static const enum accel_dtype dtypes[] = {
	ACCEL_DTYPE_U8, ACCEL_DTYPE_I8, ACCEL_DTYPE_U16, ACCEL_DTYPE_I16, ACCEL_DTYPE_F16,
	ACCEL_DTYPE_BF16, ACCEL_DTYPE_U32, ACCEL_DTYPE_I32, ACCEL_DTYPE_F32, ACCEL_DTYPE_U64,
	ACCEL_DTYPE_I64, ACCEL_DTYPE_F64,
};

TEST(tensor_offset_alignment)
{
	unsigned int i, refused = 0;

	rng_state = SEED + 2;
	for (i = 0; i < 20000; i++) {
		enum accel_dtype dt = dtypes[rn(12)];
		uint64_t esz = accel_dtype_size(dt), off = rn(1 << 20), shape[2] = { 1 + rn(8),
										   1 + rn(8) };
		struct accel_tensor t;
		int want = off % esz ? -EINVAL : 0;

		ASSERT_EQ(want, accel_tensor_init(&t, NULL, off, dt, 2, shape))
			TH_LOG("dtype %d offset %llu", dt, (unsigned long long)off);
		refused += !!want;
		/* a view built by hand is checked the same way */
		t = (struct accel_tensor){ .dtype = dt, .ndims = 1, .offset = off,
					   .shape = { 4 }, .strides = { 1 } };
		ASSERT_EQ(want, accel_tensor_check(&t));
	}
	EXPECT_LT(1000, refused);
}

TEST(tensor_gen)
{
	uint64_t shape[3] = { 4, 6, 8 }, flat[1] = { 192 }, bad[2] = { 5, 5 };
	uint32_t perm[3] = { 2, 0, 1 };
	struct accel_tensor t, before;

	memset(&t, 0xa5, sizeof(t));
	ASSERT_EQ(0, accel_tensor_init(&t, NULL, 64, ACCEL_DTYPE_F32, 3, shape));
	EXPECT_EQ(0, t.gen);

	t.gen = 0x1234567890abcdefull;		/* as the library sets it */
	ASSERT_EQ(0, accel_tensor_reshape(&t, 1, flat));
	EXPECT_EQ(0x1234567890abcdefull, t.gen);
	EXPECT_EQ(1, t.ndims);
	EXPECT_EQ(64, t.offset);
	ASSERT_EQ(0, accel_tensor_reshape(&t, 3, shape));
	EXPECT_EQ(0x1234567890abcdefull, t.gen);
	ASSERT_EQ(0, accel_tensor_slice(&t, 1, 1, 2, 2));
	EXPECT_EQ(0x1234567890abcdefull, t.gen);
	ASSERT_EQ(0, accel_tensor_permute(&t, perm));
	EXPECT_EQ(0x1234567890abcdefull, t.gen);
	ASSERT_EQ(0, accel_tensor_transpose(&t, 0, 2));
	EXPECT_EQ(0x1234567890abcdefull, t.gen);

	/* failures change nothing */
	before = t;
	EXPECT_EQ(-EINVAL, accel_tensor_reshape(&t, 2, bad));	/* not contiguous */
	EXPECT_EQ(0, memcmp(&before, &t, sizeof(t)));
	ASSERT_EQ(0, accel_tensor_init(&t, NULL, 0, ACCEL_DTYPE_U8, 1, flat));
	t.gen = 7;
	before = t;
	EXPECT_EQ(-EINVAL, accel_tensor_reshape(&t, 2, bad));	/* 25 != 192 elements */
	EXPECT_EQ(-EINVAL, accel_tensor_init(&t, NULL, 3, ACCEL_DTYPE_F32, 1, flat));
	EXPECT_EQ(-EINVAL, accel_tensor_init(&t, NULL, 0, ACCEL_DTYPE_F32, 0, flat));
	{
		uint64_t huge[2] = { 1ull << 40, 1ull << 30 };

		EXPECT_EQ(-EOVERFLOW, accel_tensor_init(&t, NULL, 0, ACCEL_DTYPE_F32, 2, huge));
	}
	EXPECT_EQ(0, memcmp(&before, &t, sizeof(t)));
}

/* A malformed view (ndims past the arrays) is refused, never overrun (ASan). */
TEST(tensor_bad_ndims)
{
	uint32_t perm[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, nd[] = { 6, 7, 64, UINT32_MAX }, i;
	uint64_t shape[1] = { 1 };

	for (i = 0; i < sizeof(nd) / sizeof(nd[0]); i++) {
		struct accel_tensor t = { .dtype = ACCEL_DTYPE_U8, .ndims = nd[i] }, before;

		memset(t.shape, 0, sizeof(t.shape));
		before = t;
		EXPECT_EQ(-EINVAL, accel_tensor_check(&t));
		EXPECT_EQ(-EINVAL, accel_tensor_slice(&t, 5, 0, 1, 1));
		EXPECT_EQ(-EINVAL, accel_tensor_permute(&t, perm));
		EXPECT_EQ(-EINVAL, accel_tensor_transpose(&t, 5, 0));
		EXPECT_EQ(0, accel_tensor_is_contiguous(&t));
		EXPECT_EQ(-EINVAL, accel_tensor_reshape(&t, 1, shape));
		EXPECT_EQ(0, memcmp(&before, &t, sizeof(t)));
	}
}

static void host_fn(void *arg)
{
	(void)arg;
}

TEST(task_size)
{
	struct accel_tensor a = { 0 }, b = { 0 }, c = { 0 };
	struct accel_task t;

	memset(&t, 0xa5, sizeof(t));
	accel_task_init(&t, ACCEL_TASK_COPY, "x");
	EXPECT_EQ(sizeof(t), t.size);
	EXPECT_EQ(ACCEL_TG_AUTO, t.device);
	EXPECT_EQ(0, t.nargs);
#define BUILT(call)						\
	do {							\
		memset(&t, 0xa5, sizeof(t));			\
		call;						\
		EXPECT_EQ(sizeof(t), t.size) TH_LOG(#call);	\
	} while (0)
	BUILT(accel_task_prep_copy(&t, &a, &b, ACCEL_OUTPUT));
	BUILT(accel_task_prep_fill(&t, &a, ACCEL_OUTPUT, 1));
	BUILT(accel_task_prep_reduce(&t, &a, ACCEL_OUTPUT, &b, &c, 0));
	BUILT(accel_task_prep_matmul(&t, &a, ACCEL_OUTPUT, &b, &c, 1));
	BUILT(accel_task_prep_delay(&t, 10));
	BUILT(accel_task_prep_host(&t, host_fn, NULL));
#undef BUILT
}

TEST_HARNESS_MAIN
