/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_TENSOR_H
#define ACCEL_TENSOR_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <accel/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: tensors
 *
 * A &struct accel_tensor is a view of a buffer: a byte offset, an element
 * type and up to ACCEL_TENSOR_MAX_DIMS dimensions, each with a shape (a
 * count of elements) and a stride in elements. Slices, step slices,
 * transposes and reshapes are views of the same buffer: the helpers below
 * only rewrite this metadata (no copy, no syscall, no allocation).
 *
 * Element (i0, ..., in-1) is at byte
 * ``offset + (i0 * strides[0] + ... + in-1 * strides[n-1]) * elem_size``.
 * Every stride must be > 0 (no broadcast, no negative step): the task
 * graph's dependency tracking (Documentation/taskgraph.rst) relies on it.
 * The offset must be a multiple of the element size (elements are
 * aligned to their size within the buffer, as the device's REDUCE and
 * MATMUL need; accel_tensor_check() refuses other offsets), so every
 * element of a view is. A dimension of shape 0 makes an empty view.
 *
 * Tensors are the arguments of task graph tasks (<accel/taskgraph.h>).
 * The helpers are ACCEL_INLINE (<accel/version.h>): inline in C programs,
 * and exported by the library under the same names.
 */

struct accel_buffer;

#define ACCEL_TENSOR_MAX_DIMS	5

/**
 * enum accel_dtype - element types
 * @ACCEL_DTYPE_U8: 1 byte
 * @ACCEL_DTYPE_I8: 1 byte
 * @ACCEL_DTYPE_U16: 2 bytes
 * @ACCEL_DTYPE_I16: 2 bytes
 * @ACCEL_DTYPE_F16: 2 bytes, IEEE half
 * @ACCEL_DTYPE_BF16: 2 bytes, bfloat16
 * @ACCEL_DTYPE_U32: 4 bytes
 * @ACCEL_DTYPE_I32: 4 bytes
 * @ACCEL_DTYPE_F32: 4 bytes
 * @ACCEL_DTYPE_U64: 8 bytes
 * @ACCEL_DTYPE_I64: 8 bytes
 * @ACCEL_DTYPE_F64: 8 bytes
 * @ACCEL_DTYPE_COUNT: the number of types
 */
enum accel_dtype {
	ACCEL_DTYPE_U8,
	ACCEL_DTYPE_I8,
	ACCEL_DTYPE_U16,
	ACCEL_DTYPE_I16,
	ACCEL_DTYPE_F16,
	ACCEL_DTYPE_BF16,
	ACCEL_DTYPE_U32,
	ACCEL_DTYPE_I32,
	ACCEL_DTYPE_F32,
	ACCEL_DTYPE_U64,
	ACCEL_DTYPE_I64,
	ACCEL_DTYPE_F64,
	ACCEL_DTYPE_COUNT,
};

/**
 * enum accel_access - how a task uses a tensor argument
 * @ACCEL_INPUT: read only
 * @ACCEL_OUTPUT: written (every element, or the task does not care what the
 *	others hold), in memory the program provides
 * @ACCEL_INOUT: read, then written
 * @ACCEL_OUTPUT_NEW: written, in memory the library allocates from the
 *	output heap
 */
enum accel_access {
	ACCEL_INPUT,
	ACCEL_OUTPUT,
	ACCEL_INOUT,
	ACCEL_OUTPUT_NEW,
};

/**
 * struct accel_tensor - a view of a buffer
 * @buf: the buffer (not owned)
 * @offset: byte offset of element (0, ..., 0) in @buf
 * @dtype: element type
 * @ndims: number of dimensions, 1 to ACCEL_TENSOR_MAX_DIMS
 * @shape: elements per dimension
 * @strides: element strides per dimension, each > 0
 * @gen: 0, except in a tensor the task graph placed in its output heap
 *	(ACCEL_OUTPUT_NEW): there the library sets it to the identity of the
 *	heap block, which tells that block apart from a later block at the
 *	same place. Programs do not set it. accel_tensor_init() sets 0; the
 *	views derived with accel_tensor_slice(), _permute(), _transpose() and
 *	_reshape() keep it, so a view of a heap tensor still names its block.
 *
 * Fields are only ever added after @gen (the last one of the first
 * stable release, 1.0).
 */
struct accel_tensor {
	struct accel_buffer *buf;
	uint64_t offset;
	enum accel_dtype dtype;
	uint32_t ndims;
	uint64_t shape[ACCEL_TENSOR_MAX_DIMS];
	uint64_t strides[ACCEL_TENSOR_MAX_DIMS];
	uint64_t gen;
};

/** accel_dtype_size() - bytes per element of @dtype, 0 for an unknown type */
ACCEL_INLINE size_t accel_dtype_size(enum accel_dtype dtype)
				     {
				     switch (dtype) {
				     case ACCEL_DTYPE_U8:
				     case ACCEL_DTYPE_I8:
				     return 1;
	case ACCEL_DTYPE_U16:
	case ACCEL_DTYPE_I16:
	case ACCEL_DTYPE_F16:
	case ACCEL_DTYPE_BF16:
		return 2;
	case ACCEL_DTYPE_U32:
	case ACCEL_DTYPE_I32:
	case ACCEL_DTYPE_F32:
		return 4;
	case ACCEL_DTYPE_U64:
	case ACCEL_DTYPE_I64:
	case ACCEL_DTYPE_F64:
		return 8;
	default:
		return 0;
	}
}

/**
 * accel_tensor_check() - validate a view
 * @t: the view
 *
 * Return: 0; -EINVAL for an unknown dtype, 0 or too many dimensions, a
 * zero stride, or an offset that is not a multiple of the element size;
 * -EOVERFLOW when the byte extent does not fit in 62 bits.
 */
ACCEL_INLINE int accel_tensor_check(const struct accel_tensor *t)
				    {
				    uint64_t esz = accel_dtype_size(t->dtype), last = 0;
	uint32_t i;

	if (!esz || t->ndims < 1 || t->ndims > ACCEL_TENSOR_MAX_DIMS || t->offset % esz)
		return -EINVAL;
	for (i = 0; i < t->ndims; i++) {
		if (!t->strides[i])
			return -EINVAL;
		if (!t->shape[i])
			continue;
		if (t->shape[i] - 1 > (UINT64_MAX >> 3) / t->strides[i])
			return -EOVERFLOW;
		last += (t->shape[i] - 1) * t->strides[i];
		if (last > (1ull << 61) / esz)
			return -EOVERFLOW;
	}
	if (t->offset > (1ull << 61))
		return -EOVERFLOW;
	return 0;
}

/**
 * accel_tensor_init() - a contiguous row-major view
 * @t: the view to fill
 * @buf: the buffer
 * @offset: byte offset
 * @dtype: element type
 * @ndims: dimensions, 1 to ACCEL_TENSOR_MAX_DIMS
 * @shape: @ndims sizes, the last one varying fastest
 *
 * Dimensions past @ndims get shape and stride 1; @gen is 0.
 *
 * Return: 0, or as accel_tensor_check(); on failure @t is unchanged.
 */
ACCEL_INLINE int accel_tensor_init(struct accel_tensor *t, struct accel_buffer *buf,
				   uint64_t offset, enum accel_dtype dtype, uint32_t ndims,
				   const uint64_t *shape)
{
	struct accel_tensor n;
	uint64_t stride = 1;
	uint32_t i;
	int ret;

	if (ndims < 1 || ndims > ACCEL_TENSOR_MAX_DIMS)
		return -EINVAL;
	memset(&n, 0, sizeof(n));
	n.buf = buf;
	n.offset = offset;
	n.dtype = dtype;
	n.ndims = ndims;
	for (i = ndims; i-- > 0;) {
		n.shape[i] = shape[i];
		n.strides[i] = stride;
		if (shape[i] && stride > (1ull << 61) / shape[i])
			return -EOVERFLOW;
		stride *= shape[i] ? shape[i] : 1;
	}
	for (i = ndims; i < ACCEL_TENSOR_MAX_DIMS; i++) {
		n.shape[i] = 1;
		n.strides[i] = 1;
	}
	ret = accel_tensor_check(&n);
	if (ret)
		return ret;
	*t = n;
	return 0;
}

/**
 * accel_tensor_slice() - a step slice along one dimension
 * @t: the view, changed in place
 * @dim: the dimension
 * @start: first index kept
 * @len: number of indices kept (0 makes an empty view)
 * @step: distance between kept indices, >= 1
 *
 * Keeps indices start, start + step, ..., start + (len - 1) * step.
 *
 * Return: 0; -EINVAL for a bad dimension or step, or a range outside the
 * dimension.
 */
ACCEL_INLINE int accel_tensor_slice(struct accel_tensor *t, uint32_t dim, uint64_t start,
				    uint64_t len, uint64_t step)
{
	uint64_t esz = accel_dtype_size(t->dtype);

	if (dim >= t->ndims || dim >= ACCEL_TENSOR_MAX_DIMS || !step || !esz)
		return -EINVAL;
	if (len && (start >= t->shape[dim] || (len - 1) > (t->shape[dim] - 1 - start) / step))
		return -EINVAL;
	if (!len && start > t->shape[dim])
		return -EINVAL;
	if (len) {
		t->offset += start * t->strides[dim] * esz;
		t->strides[dim] *= step;
	}
	t->shape[dim] = len;
	return 0;
}

/**
 * accel_tensor_permute() - reorder the dimensions
 * @t: the view, changed in place
 * @perm: t->ndims indices: new dimension i is old dimension perm[i]
 *
 * Return: 0, or -EINVAL if @perm is not a permutation (or @t has more than
 * ACCEL_TENSOR_MAX_DIMS dimensions).
 */
ACCEL_INLINE int accel_tensor_permute(struct accel_tensor *t, const uint32_t *perm)
				      {
				      uint64_t shape[ACCEL_TENSOR_MAX_DIMS], strides[ACCEL_TENSOR_MAX_DIMS];
	uint32_t seen = 0, i;

	if (t->ndims > ACCEL_TENSOR_MAX_DIMS)
		return -EINVAL;
	for (i = 0; i < t->ndims; i++) {
		if (perm[i] >= t->ndims || (seen & (1u << perm[i])))
			return -EINVAL;
		seen |= 1u << perm[i];
		shape[i] = t->shape[perm[i]];
		strides[i] = t->strides[perm[i]];
	}
	for (i = 0; i < t->ndims; i++) {
		t->shape[i] = shape[i];
		t->strides[i] = strides[i];
	}
	return 0;
}

/**
 * accel_tensor_transpose() - swap two dimensions
 * @t: the view, changed in place
 * @d0: one dimension
 * @d1: the other
 *
 * Return: 0, or -EINVAL for a bad dimension.
 */
ACCEL_INLINE int accel_tensor_transpose(struct accel_tensor *t, uint32_t d0, uint32_t d1)
					{
					uint64_t x;

	if (d0 >= t->ndims || d1 >= t->ndims || d0 >= ACCEL_TENSOR_MAX_DIMS ||
	    d1 >= ACCEL_TENSOR_MAX_DIMS)
		return -EINVAL;
	x = t->shape[d0];
	t->shape[d0] = t->shape[d1];
	t->shape[d1] = x;
	x = t->strides[d0];
	t->strides[d0] = t->strides[d1];
	t->strides[d1] = x;
	return 0;
}

/**
 * accel_tensor_is_contiguous() - is the view row-major and gap-free?
 * @t: the view
 *
 * Return: 1 when the last dimension has stride 1 and every other stride
 * is the product of the shapes after it (dimensions of shape 1 are
 * ignored), else 0 (also for more than ACCEL_TENSOR_MAX_DIMS dimensions).
 */
ACCEL_INLINE int accel_tensor_is_contiguous(const struct accel_tensor *t)
					    {
					    uint64_t expect = 1;
	uint32_t i;

	if (t->ndims > ACCEL_TENSOR_MAX_DIMS)
		return 0;
	for (i = t->ndims; i-- > 0;) {
		if (t->shape[i] == 1)
			continue;
		if (t->strides[i] != expect)
			return 0;
		expect *= t->shape[i];
	}
	return 1;
}

/**
 * accel_tensor_reshape() - a new shape over a contiguous view
 * @t: the view, contiguous (accel_tensor_is_contiguous()), changed in place
 * @ndims: new number of dimensions
 * @shape: the new sizes, with the same product as the old ones
 *
 * The view keeps its buffer, offset, dtype and @gen.
 *
 * Return: 0; -EINVAL if @t is not contiguous, @ndims is out of range or the
 * element count differs; as accel_tensor_init(). On failure @t is
 * unchanged.
 */
ACCEL_INLINE int accel_tensor_reshape(struct accel_tensor *t, uint32_t ndims,
				      const uint64_t *shape)
{
	struct accel_tensor n;
	uint64_t n0 = 1, n1 = 1;
	uint32_t i;
	int ret;

	if (ndims < 1 || ndims > ACCEL_TENSOR_MAX_DIMS || !accel_tensor_is_contiguous(t))
		return -EINVAL;
	for (i = 0; i < t->ndims; i++)
		n0 *= t->shape[i];
	for (i = 0; i < ndims; i++) {
		if (shape[i] && n1 > UINT64_MAX / shape[i])
			return -EINVAL;
		n1 *= shape[i];
	}
	if (n0 != n1)
		return -EINVAL;
	ret = accel_tensor_init(&n, t->buf, t->offset, t->dtype, ndims, shape);
	if (ret)
		return ret;
	n.gen = t->gen;
	*t = n;
	return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_TENSOR_H */
