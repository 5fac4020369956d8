/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The few definitions the packet core needs, from the kernel or from libc.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef __VACCEL_CORE_TYPES_H__
#define __VACCEL_CORE_TYPES_H__

#ifdef __KERNEL__
#include <linux/compiler.h>
#include <linux/string.h>
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* the kernel's types, as <drm/vaccel_accel.h> uses them */
#include <linux/types.h>
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif
#endif

#include <drm/vaccel_accel.h>

#endif /* __VACCEL_CORE_TYPES_H__ */
