/* SPDX-License-Identifier: MIT */
/*
 * The packet core (kmod/core/) inside libaccel: its external symbols
 * renamed with an acc_sim_ prefix, so that the copy the in-process device
 * runs (lib/sim/sim_core.c) never meets another copy of the core in the
 * same program: the native tests include the core's .c files and a vaccel_os_*()
 * layer of their own (tests/lib-native/fake_kmod.h) and link the library's
 * sources too. Included before kmod/core/vaccel_core.h by every file of
 * lib/sim/ that uses the core; the symbols are hidden in the shared
 * library (-fvisibility=hidden) like everything that is not the API.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_SIM_CORE_NAMES_H
#define ACCEL_SIM_CORE_NAMES_H

/* kmod/core/vaccel_core.c */
#define vaccel_core_dtype_size		acc_sim_core_dtype_size
#define vaccel_core_wait_valid		acc_sim_core_wait_valid
#define vaccel_core_validate		acc_sim_core_validate
#define vaccel_core_wait_done		acc_sim_core_wait_done
#define vaccel_core_queue_init		acc_sim_core_queue_init
#define vaccel_core_bulk_left		acc_sim_core_bulk_left
#define vaccel_core_bulk_range		acc_sim_core_bulk_range
#define vaccel_core_bulk_done		acc_sim_core_bulk_done
#define vaccel_core_run			acc_sim_core_run
/* kmod/core/vaccel_matmul.c, vaccel_reduce.c */
#define vaccel_core_matmul		acc_sim_core_matmul
#define vaccel_core_reduce		acc_sim_core_reduce
#define vaccel_core_bf16_to_f32		acc_sim_core_bf16_to_f32
#define vaccel_core_f32_to_bf16		acc_sim_core_f32_to_bf16
#define vaccel_core_f16_to_f32		acc_sim_core_f16_to_f32
#define vaccel_core_f32_to_f16		acc_sim_core_f32_to_f16
/* the OS layer the core calls: lib/sim/sim_os.c */
#define vaccel_os_map			acc_sim_os_map
#define vaccel_os_map_part		acc_sim_os_map_part
#define vaccel_os_unmap			acc_sim_os_unmap
#define vaccel_os_signal		acc_sim_os_signal
#define vaccel_os_signal_read		acc_sim_os_signal_read
#define vaccel_os_exec_check		acc_sim_os_exec_check
#define vaccel_os_now_ns		acc_sim_os_now_ns
#define vaccel_os_charge		acc_sim_os_charge
#define vaccel_os_packet		acc_sim_os_packet
#define vaccel_os_fpu_begin		acc_sim_os_fpu_begin
#define vaccel_os_fpu_end		acc_sim_os_fpu_end

#endif /* ACCEL_SIM_CORE_NAMES_H */
