// SPDX-License-Identifier: MIT
/*
 * The module's packet core (kmod/core/, GPL-2.0-only OR MIT), compiled
 * into libaccel for the in-process device: the very same decoder,
 * validator and executor the kernel runs, with the OS layer of
 * lib/sim/sim_os.c under it. Its symbols carry the acc_sim_ prefix
 * (sim_core_names.h).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "sim_core_names.h"

#include "../../kmod/core/vaccel_core.c"
#include "../../kmod/core/vaccel_reduce.c"
#include "../../kmod/core/vaccel_matmul.c"
