// SPDX-License-Identifier: MIT
/*
 * The layouts of the structures tests/lib/ffi_smoke.py defines with ctypes,
 * as the C compiler lays them out, in the format of "ffi_smoke.py --layout"
 * (tests/lib/ffi-check compares the two).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <stddef.h>
#include <stdio.h>

#include <accel/accel.h>

#define S(type) printf("%s %zu\n", #type, sizeof(struct type))
#define F(type, field) printf("%s.%s %zu %zu\n", #type, #field, offsetof(struct type, field), \
			      sizeof(((struct type *)0)->field))

int main(void)
{
	S(accel_event); F(accel_event, signal); F(accel_event, value);
	S(accel_device_props); F(accel_device_props, size); F(accel_device_props, id);
	F(accel_device_props, engines); F(accel_device_props, uapi_version);
	F(accel_device_props, capabilities); F(accel_device_props, memory_capacity);
	F(accel_device_props, va_start); F(accel_device_props, va_size);
	F(accel_device_props, link_bandwidth_mbps); F(accel_device_props, link_latency_ns);
	F(accel_device_props, poll_budget_ns); F(accel_device_props, max_buffers);
	F(accel_device_props, max_mappings); F(accel_device_props, max_queues);
	F(accel_device_props, reserved);
	S(accel_tensor); F(accel_tensor, buf); F(accel_tensor, offset); F(accel_tensor, dtype);
	F(accel_tensor, ndims); F(accel_tensor, shape); F(accel_tensor, strides);
	F(accel_tensor, gen);
	S(accel_arg); F(accel_arg, t); F(accel_arg, access);
	/* the anonymous union of struct accel_task: its offset and size as .fill's */
	S(accel_task); F(accel_task, size); F(accel_task, op); F(accel_task, device);
	F(accel_task, queue); F(accel_task, nargs); F(accel_task, args); F(accel_task, name);
	printf("accel_task.fill %zu %zu\n", offsetof(struct accel_task, fill),
	       sizeof(struct accel_task) - offsetof(struct accel_task, fill));
	S(accel_tg_params); F(accel_tg_params, size); F(accel_tg_params, queues_per_device);
	F(accel_tg_params, ring_size); F(accel_tg_params, flags); F(accel_tg_params, heap_size);
	F(accel_tg_params, timeout_ns);
	S(drm_vaccel_packet); F(drm_vaccel_packet, header); F(drm_vaccel_packet, arg);
	F(drm_vaccel_packet, flags); F(drm_vaccel_packet, operand);
	F(drm_vaccel_packet, completion_addr); F(drm_vaccel_packet, completion_value);
	F(drm_vaccel_packet, completion_op); F(drm_vaccel_packet, reserved);
	return 0;
}
