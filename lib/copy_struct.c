// SPDX-License-Identifier: MIT
/*
 * Structures that grow: the sizes a caller's structures may have (the
 * rule of <accel/accel.h>), copying a caller's input structure in and an
 * output structure out.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

int acc_struct_size_check(size_t size, size_t min_size)
{
	if (size < min_size)
		return -EINVAL;
	if (size > ACC_STRUCT_MAX)
		return -E2BIG;
	return 0;
}

int acc_copy_struct(void *dst, size_t dst_size, const void *src, size_t src_size,
		    size_t min_size)
{
	const unsigned char *tail = (const unsigned char *)src + dst_size;
	size_t i;
	int ret = acc_struct_size_check(src_size, min_size);

	if (ret)
		return ret;
	/* a newer caller's fields this library does not know must be zero */
	for (i = 0; dst_size + i < src_size; i++)
		if (tail[i])
			return -E2BIG;
	if (src_size < dst_size) {
		memcpy(dst, src, src_size);
		memset((char *)dst + src_size, 0, dst_size - src_size);
	} else {
		memcpy(dst, src, dst_size);
	}
	return 0;
}

int acc_put_struct(void *dst, size_t dst_size, const void *src, size_t src_size,
		   size_t min_size)
{
	int ret = acc_struct_size_check(dst_size, min_size);

	if (ret)
		return ret;
	if (dst_size <= src_size) {
		memcpy(dst, src, dst_size);
	} else {
		memcpy(dst, src, src_size);
		memset((char *)dst + src_size, 0, dst_size - src_size);
	}
	return 0;
}
