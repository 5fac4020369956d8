/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Half-precision conversions of the REDUCE packet. Only files built with
 * floating point enabled may include this (in the kernel: vaccel_reduce.c).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef __VACCEL_REDUCE_H__
#define __VACCEL_REDUCE_H__

#include "vaccel_core_types.h"

u16 vaccel_core_f32_to_f16(float f);
float vaccel_core_f16_to_f32(u16 h);
u16 vaccel_core_f32_to_bf16(float f);
float vaccel_core_bf16_to_f32(u16 h);

#endif /* __VACCEL_REDUCE_H__ */
