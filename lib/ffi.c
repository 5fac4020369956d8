// SPDX-License-Identifier: MIT
/*
 * The inline helpers of the public headers as exported functions.
 *
 * Every inline function of <accel/packet.h>, <accel/tensor.h> and
 * <accel/taskgraph.h> is defined there with ACCEL_INLINE, "static inline"
 * by default. Here ACCEL_INLINE is an exported (default-visibility)
 * definition, so the same source becomes a function of the same name in
 * libaccel.so: programs calling the library through a foreign function
 * interface (Python ctypes, ...), which cannot compile inline functions,
 * get every helper from the library, as liburing-ffi does for liburing's,
 * but in the one library. C programs keep the inline versions (and their
 * own copies); nothing here is called by the library itself.
 *
 * lib/libaccel.map lists them like every other symbol, and the symbols
 * check (tests/lib/symbols-check) requires every function the public
 * headers declare or define to be exported.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#define ACCEL_INLINE __attribute__((visibility("default")))

#include <accel/accel.h>
