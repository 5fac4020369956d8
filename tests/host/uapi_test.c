// SPDX-License-Identifier: GPL-2.0-only
/*
 * The uAPI header is self-contained, builds as user-space C, and its
 * structures have the sizes and offsets the ABI promises: no implicit
 * padding anywhere, sizes a multiple of 8.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <assert.h>
#include <stddef.h>

#include <drm/vaccel_accel.h>

#include "kselftest_harness.h"

#define ABI_SIZE(type, size)						\
	static_assert(sizeof(struct type) == (size), #type " size");	\
	static_assert(sizeof(struct type) % 8 == 0, #type " alignment")
#define ABI_OFF(type, field, off)					\
	static_assert(offsetof(struct type, field) == (off), #type "." #field)

ABI_SIZE(drm_vaccel_get_param, 16);
ABI_OFF(drm_vaccel_get_param, param, 0);
ABI_OFF(drm_vaccel_get_param, pad, 4);
ABI_OFF(drm_vaccel_get_param, value, 8);

ABI_SIZE(drm_vaccel_bo_create, 24);
ABI_OFF(drm_vaccel_bo_create, size, 0);
ABI_OFF(drm_vaccel_bo_create, flags, 8);
ABI_OFF(drm_vaccel_bo_create, handle, 12);
ABI_OFF(drm_vaccel_bo_create, mmap_offset, 16);

ABI_SIZE(drm_vaccel_bo_info, 32);
ABI_OFF(drm_vaccel_bo_info, handle, 0);
ABI_OFF(drm_vaccel_bo_info, flags, 4);
ABI_OFF(drm_vaccel_bo_info, size, 8);
ABI_OFF(drm_vaccel_bo_info, mmap_offset, 16);
ABI_OFF(drm_vaccel_bo_info, status, 24);
ABI_OFF(drm_vaccel_bo_info, pad, 28);

ABI_SIZE(drm_vaccel_bo_seal, 8);
ABI_OFF(drm_vaccel_bo_seal, handle, 0);
ABI_OFF(drm_vaccel_bo_seal, flags, 4);

ABI_SIZE(drm_vaccel_vm_bind, 32);
ABI_OFF(drm_vaccel_vm_bind, handle, 0);
ABI_OFF(drm_vaccel_vm_bind, flags, 4);
ABI_OFF(drm_vaccel_vm_bind, bo_offset, 8);
ABI_OFF(drm_vaccel_vm_bind, va, 16);
ABI_OFF(drm_vaccel_vm_bind, size, 24);

ABI_SIZE(drm_vaccel_vm_unbind, 24);
ABI_OFF(drm_vaccel_vm_unbind, va, 0);
ABI_OFF(drm_vaccel_vm_unbind, size, 8);
ABI_OFF(drm_vaccel_vm_unbind, flags, 16);
ABI_OFF(drm_vaccel_vm_unbind, pad, 20);

ABI_SIZE(drm_vaccel_queue_create, 40);
ABI_OFF(drm_vaccel_queue_create, ring_va, 0);
ABI_OFF(drm_vaccel_queue_create, ring_size, 8);
ABI_OFF(drm_vaccel_queue_create, priority, 12);
ABI_OFF(drm_vaccel_queue_create, flags, 16);
ABI_OFF(drm_vaccel_queue_create, queue_id, 20);
ABI_OFF(drm_vaccel_queue_create, doorbell_offset, 24);
ABI_OFF(drm_vaccel_queue_create, control_offset, 32);
ABI_SIZE(drm_vaccel_queue_destroy, 8);
ABI_SIZE(drm_vaccel_kick, 8);
ABI_SIZE(drm_vaccel_queue_query, 64);
ABI_OFF(drm_vaccel_queue_query, state, 4);
ABI_OFF(drm_vaccel_queue_query, read_index, 8);
ABI_OFF(drm_vaccel_queue_query, write_index, 16);
ABI_OFF(drm_vaccel_queue_query, fault, 24);
ABI_OFF(drm_vaccel_queue_query, pad, 28);
ABI_OFF(drm_vaccel_queue_query, fault_index, 32);
ABI_OFF(drm_vaccel_queue_query, fault_addr, 40);
ABI_OFF(drm_vaccel_queue_query, fault_depth, 48);
ABI_OFF(drm_vaccel_queue_query, fault_binding, 52);
ABI_OFF(drm_vaccel_queue_query, fault_exec_index, 56);
ABI_SIZE(drm_vaccel_queue_control, 56);
ABI_OFF(drm_vaccel_queue_control, read_index, 0);
ABI_OFF(drm_vaccel_queue_control, state, 8);
ABI_OFF(drm_vaccel_queue_control, fault, 12);
ABI_OFF(drm_vaccel_queue_control, fault_index, 16);
ABI_OFF(drm_vaccel_queue_control, fault_addr, 24);
ABI_OFF(drm_vaccel_queue_control, need_wakeup, 32);
ABI_OFF(drm_vaccel_queue_control, pad, 36);
ABI_OFF(drm_vaccel_queue_control, fault_depth, 40);
ABI_OFF(drm_vaccel_queue_control, fault_binding, 44);
ABI_OFF(drm_vaccel_queue_control, fault_exec_index, 48);
ABI_SIZE(drm_vaccel_packet, 64);
ABI_OFF(drm_vaccel_packet, header, 0);
ABI_OFF(drm_vaccel_packet, arg, 2);
ABI_OFF(drm_vaccel_packet, flags, 4);
ABI_OFF(drm_vaccel_packet, operand, 8);
ABI_OFF(drm_vaccel_packet, completion_addr, 40);
ABI_OFF(drm_vaccel_packet, completion_value, 48);
ABI_OFF(drm_vaccel_packet, completion_op, 56);
ABI_OFF(drm_vaccel_packet, reserved, 60);
ABI_SIZE(drm_vaccel_signal_cond, 32);
ABI_OFF(drm_vaccel_signal_cond, cond, 4);
ABI_OFF(drm_vaccel_signal_cond, offset, 8);
ABI_OFF(drm_vaccel_signal_cond, value, 16);
ABI_OFF(drm_vaccel_signal_cond, mask, 24);
ABI_SIZE(drm_vaccel_wait_signals, 32);
ABI_OFF(drm_vaccel_wait_signals, count, 8);
ABI_OFF(drm_vaccel_wait_signals, flags, 12);
ABI_OFF(drm_vaccel_wait_signals, timeout_ns, 16);
ABI_OFF(drm_vaccel_wait_signals, first, 24);
ABI_OFF(drm_vaccel_wait_signals, pad, 28);
ABI_SIZE(drm_vaccel_signal_write, 32);
ABI_OFF(drm_vaccel_signal_write, op, 4);
ABI_OFF(drm_vaccel_signal_write, offset, 8);
ABI_OFF(drm_vaccel_signal_write, value, 16);
ABI_OFF(drm_vaccel_signal_write, flags, 24);
ABI_OFF(drm_vaccel_signal_write, pad, 28);
ABI_SIZE(drm_vaccel_signal_eventfd, 48);
ABI_OFF(drm_vaccel_signal_eventfd, cond, 0);
ABI_OFF(drm_vaccel_signal_eventfd, fd, 32);
ABI_OFF(drm_vaccel_signal_eventfd, flags, 36);
ABI_OFF(drm_vaccel_signal_eventfd, id, 40);
ABI_SIZE(drm_vaccel_matmul, 64);
ABI_OFF(drm_vaccel_matmul, a, 0);
ABI_OFF(drm_vaccel_matmul, b, 8);
ABI_OFF(drm_vaccel_matmul, c, 16);
ABI_OFF(drm_vaccel_matmul, m, 24);
ABI_OFF(drm_vaccel_matmul, n, 28);
ABI_OFF(drm_vaccel_matmul, k, 32);
ABI_OFF(drm_vaccel_matmul, lda, 36);
ABI_OFF(drm_vaccel_matmul, ldb, 40);
ABI_OFF(drm_vaccel_matmul, ldc, 44);
ABI_OFF(drm_vaccel_matmul, reserved, 48);

/* Ioctl numbers are part of the ABI too. */
static_assert(DRM_VACCEL_GET_PARAM == 0x00, "GET_PARAM nr");
static_assert(DRM_VACCEL_BO_CREATE == 0x01, "BO_CREATE nr");
static_assert(DRM_VACCEL_BO_INFO == 0x02, "BO_INFO nr");
static_assert(DRM_VACCEL_BO_SEAL == 0x03, "BO_SEAL nr");
static_assert(DRM_VACCEL_VM_BIND == 0x04, "VM_BIND nr");
static_assert(DRM_VACCEL_VM_UNBIND == 0x05, "VM_UNBIND nr");

TEST(ioctl_encoding)
{
	EXPECT_EQ(DRM_IOWR(0x40, struct drm_vaccel_get_param),
		  DRM_IOCTL_VACCEL_GET_PARAM);
	EXPECT_EQ(16, _IOC_SIZE(DRM_IOCTL_VACCEL_GET_PARAM));
	EXPECT_EQ('d', _IOC_TYPE(DRM_IOCTL_VACCEL_GET_PARAM));

	/* out-parameters: read-write; in-only: write */
	EXPECT_EQ(DRM_IOWR(0x41, struct drm_vaccel_bo_create), DRM_IOCTL_VACCEL_BO_CREATE);
	EXPECT_EQ(DRM_IOWR(0x42, struct drm_vaccel_bo_info), DRM_IOCTL_VACCEL_BO_INFO);
	EXPECT_EQ(DRM_IOW(0x43, struct drm_vaccel_bo_seal), DRM_IOCTL_VACCEL_BO_SEAL);
	EXPECT_EQ(DRM_IOW(0x44, struct drm_vaccel_vm_bind), DRM_IOCTL_VACCEL_VM_BIND);
	EXPECT_EQ(DRM_IOW(0x45, struct drm_vaccel_vm_unbind), DRM_IOCTL_VACCEL_VM_UNBIND);
	EXPECT_EQ(24, _IOC_SIZE(DRM_IOCTL_VACCEL_BO_CREATE));
	EXPECT_EQ(32, _IOC_SIZE(DRM_IOCTL_VACCEL_BO_INFO));
	EXPECT_EQ(8, _IOC_SIZE(DRM_IOCTL_VACCEL_BO_SEAL));
	EXPECT_EQ(32, _IOC_SIZE(DRM_IOCTL_VACCEL_VM_BIND));
	EXPECT_EQ(24, _IOC_SIZE(DRM_IOCTL_VACCEL_VM_UNBIND));
	EXPECT_EQ(DRM_IOWR(0x46, struct drm_vaccel_queue_create), DRM_IOCTL_VACCEL_QUEUE_CREATE);
	EXPECT_EQ(DRM_IOW(0x47, struct drm_vaccel_queue_destroy), DRM_IOCTL_VACCEL_QUEUE_DESTROY);
	EXPECT_EQ(DRM_IOWR(0x48, struct drm_vaccel_queue_query), DRM_IOCTL_VACCEL_QUEUE_QUERY);
	EXPECT_EQ(DRM_IOW(0x49, struct drm_vaccel_kick), DRM_IOCTL_VACCEL_KICK);
	EXPECT_EQ(_IOC_READ | _IOC_WRITE, _IOC_DIR(DRM_IOCTL_VACCEL_BO_CREATE));
	EXPECT_EQ(_IOC_READ | _IOC_WRITE, _IOC_DIR(DRM_IOCTL_VACCEL_BO_INFO));
	EXPECT_EQ(_IOC_WRITE, _IOC_DIR(DRM_IOCTL_VACCEL_BO_SEAL));
	EXPECT_EQ(_IOC_WRITE, _IOC_DIR(DRM_IOCTL_VACCEL_VM_BIND));
	EXPECT_EQ(_IOC_WRITE, _IOC_DIR(DRM_IOCTL_VACCEL_VM_UNBIND));
}

TEST(param_numbers)
{
	EXPECT_EQ(0, DRM_VACCEL_PARAM_UAPI_VERSION);
	EXPECT_EQ(1, DRM_VACCEL_PARAM_DEVICE_ID);
	EXPECT_EQ(2, DRM_VACCEL_PARAM_NUM_ENGINES);
	EXPECT_EQ(3, DRM_VACCEL_PARAM_MEMORY_CAPACITY);
	EXPECT_EQ(4, DRM_VACCEL_PARAM_VA_START);
	EXPECT_EQ(5, DRM_VACCEL_PARAM_VA_SIZE);
	EXPECT_EQ(6, DRM_VACCEL_PARAM_CAPABILITIES);
	EXPECT_EQ(7, DRM_VACCEL_PARAM_LINK_BANDWIDTH);
	EXPECT_EQ(8, DRM_VACCEL_PARAM_LINK_LATENCY);
	EXPECT_EQ(9, DRM_VACCEL_PARAM_POLL_BUDGET);
	EXPECT_EQ(10, DRM_VACCEL_PARAM_MEMORY_USED);
	EXPECT_EQ(11, DRM_VACCEL_PARAM_MAX_BOS);
	EXPECT_EQ(12, DRM_VACCEL_PARAM_MAX_MAPPINGS);
	EXPECT_EQ(13, DRM_VACCEL_PARAM_MAX_QUEUES);
	EXPECT_EQ(1ULL, DRM_VACCEL_CAP_HOTPLUG);
	EXPECT_EQ(0x2ULL, DRM_VACCEL_CAP_EXEC_BINDINGS);
	EXPECT_EQ(0x4ULL, DRM_VACCEL_CAP_MATMUL);
	EXPECT_EQ(0x8ULL, DRM_VACCEL_CAP_SIGNAL_EVENTFD);
	EXPECT_EQ(0x10ULL, DRM_VACCEL_CAP_ENGINE_SPLIT);
	EXPECT_EQ(3, VACCEL_UAPI_VERSION);
}

TEST(flag_values)
{
	EXPECT_EQ(0x1, DRM_VACCEL_BO_PERSISTENT);
	EXPECT_EQ(0x2, DRM_VACCEL_BO_SIGNAL);
	EXPECT_EQ(0x1, DRM_VACCEL_BO_STATUS_SEALED);
	EXPECT_EQ(0x2, DRM_VACCEL_BO_STATUS_IMPORTED);
	EXPECT_EQ(0x1, DRM_VACCEL_VM_READ);
	EXPECT_EQ(0x2, DRM_VACCEL_VM_WRITE);
}

/* Packet, signal, wait, fault and queue numbers are ABI too. */
TEST(packet_values)
{
	EXPECT_EQ(0x0a, DRM_VACCEL_WAIT_SIGNALS);
	EXPECT_EQ(0x0b, DRM_VACCEL_SIGNAL_WRITE);
	EXPECT_EQ(0x0c, DRM_VACCEL_SIGNAL_EVENTFD);
	EXPECT_EQ(DRM_IOWR(0x4c, struct drm_vaccel_signal_eventfd),
		  DRM_IOCTL_VACCEL_SIGNAL_EVENTFD);
	EXPECT_EQ(32, _IOC_SIZE(DRM_IOCTL_VACCEL_SIGNAL_WRITE));
	EXPECT_EQ(9, DRM_VACCEL_PKT_MATMUL);
	EXPECT_EQ(0x1, DRM_VACCEL_EXEC_F_EPOCH);
	EXPECT_EQ(16, DRM_VACCEL_EXEC_MAX_BINDINGS);
	EXPECT_EQ(0x1, DRM_VACCEL_MATMUL_F_ACCUMULATE);
	EXPECT_EQ(4096, DRM_VACCEL_MATMUL_MAX_DIM);
	EXPECT_EQ(0x8003000000001000ULL, DRM_VACCEL_BINDING_ADDR(3, 0x1000));
	EXPECT_EQ(3, DRM_VACCEL_BINDING_INDEX(DRM_VACCEL_BINDING_ADDR(3, 0x1000)));
	EXPECT_EQ(0x1000ULL, DRM_VACCEL_BINDING_OFFSET(DRM_VACCEL_BINDING_ADDR(3, 0x1000)));
	EXPECT_EQ(1ULL << 63, DRM_VACCEL_BINDING_FLAG);
	EXPECT_EQ(0x1, DRM_VACCEL_EVENTFD_CANCEL);
	EXPECT_EQ(0x2, DRM_VACCEL_EVENTFD_IGNORE_FAULTS);
	EXPECT_EQ(256, DRM_VACCEL_EVENTFD_MAX);
	EXPECT_EQ(0, DRM_VACCEL_PKT_NOP);
	EXPECT_EQ(1, DRM_VACCEL_PKT_COPY);
	EXPECT_EQ(2, DRM_VACCEL_PKT_FILL);
	EXPECT_EQ(3, DRM_VACCEL_PKT_REDUCE);
	EXPECT_EQ(4, DRM_VACCEL_PKT_SIGNAL);
	EXPECT_EQ(5, DRM_VACCEL_PKT_WAIT);
	EXPECT_EQ(6, DRM_VACCEL_PKT_EXEC);
	EXPECT_EQ(7, DRM_VACCEL_PKT_TIMESTAMP);
	EXPECT_EQ(8, DRM_VACCEL_PKT_DELAY);
	EXPECT_EQ(0x00ff, DRM_VACCEL_PKT_TYPE_MASK);
	EXPECT_EQ(0x0100, DRM_VACCEL_PKT_BARRIER);
	EXPECT_EQ(0x0200, DRM_VACCEL_PKT_IRQ);
	EXPECT_EQ(10, DRM_VACCEL_PKT_ACQUIRE_SHIFT);
	EXPECT_EQ(12, DRM_VACCEL_PKT_RELEASE_SHIFT);
	EXPECT_EQ(0xc000, DRM_VACCEL_PKT_RESERVED);
	EXPECT_EQ(0, DRM_VACCEL_SCOPE_NONE);
	EXPECT_EQ(1, DRM_VACCEL_SCOPE_DEVICE);
	EXPECT_EQ(2, DRM_VACCEL_SCOPE_SYSTEM);
	EXPECT_EQ(0, DRM_VACCEL_SIGNAL_NONE);
	EXPECT_EQ(1, DRM_VACCEL_SIGNAL_SET);
	EXPECT_EQ(2, DRM_VACCEL_SIGNAL_ADD);
	EXPECT_EQ(3, DRM_VACCEL_SIGNAL_MAX);
	EXPECT_EQ(0x1, DRM_VACCEL_SIGNAL_F_EPOCH);
	EXPECT_EQ(0, DRM_VACCEL_WAIT_GE);
	EXPECT_EQ(1, DRM_VACCEL_WAIT_EQ);
	EXPECT_EQ(2, DRM_VACCEL_WAIT_NE);
	EXPECT_EQ(0x1, DRM_VACCEL_WAIT_F_EPOCH);
	EXPECT_EQ(0, DRM_VACCEL_DTYPE_F32);
	EXPECT_EQ(1, DRM_VACCEL_DTYPE_F16);
	EXPECT_EQ(2, DRM_VACCEL_DTYPE_BF16);
	EXPECT_EQ(3, DRM_VACCEL_DTYPE_I32);
	EXPECT_EQ(4, DRM_VACCEL_DTYPE_I64);
	EXPECT_EQ(5, DRM_VACCEL_DTYPE_U8);
	EXPECT_EQ(0, DRM_VACCEL_REDOP_SUM);
	EXPECT_EQ(1, DRM_VACCEL_REDOP_PROD);
	EXPECT_EQ(2, DRM_VACCEL_REDOP_MIN);
	EXPECT_EQ(3, DRM_VACCEL_REDOP_MAX);
	EXPECT_EQ(0, DRM_VACCEL_FAULT_NONE);
	EXPECT_EQ(1, DRM_VACCEL_FAULT_BAD_PACKET);
	EXPECT_EQ(2, DRM_VACCEL_FAULT_UNMAPPED);
	EXPECT_EQ(3, DRM_VACCEL_FAULT_ACCESS);
	EXPECT_EQ(4, DRM_VACCEL_FAULT_ALIGNMENT);
	EXPECT_EQ(5, DRM_VACCEL_FAULT_NOT_SIGNAL);
	EXPECT_EQ(6, DRM_VACCEL_FAULT_NOT_SEALED);
	EXPECT_EQ(7, DRM_VACCEL_FAULT_EXEC_DEPTH);
	EXPECT_EQ(8, DRM_VACCEL_FAULT_WAIT_TIMEOUT);
	EXPECT_EQ(9, DRM_VACCEL_FAULT_DOORBELL);
	EXPECT_EQ(10, DRM_VACCEL_FAULT_INJECTED);
	EXPECT_EQ(11, DRM_VACCEL_FAULT_RESET);
	EXPECT_EQ(12, DRM_VACCEL_FAULT_BINDING);
	EXPECT_EQ(13, DRM_VACCEL_FAULT_REMOVED);
	EXPECT_EQ(2, DRM_VACCEL_RING_MIN);
	EXPECT_EQ(65536, DRM_VACCEL_RING_MAX);
	EXPECT_EQ(0, DRM_VACCEL_QUEUE_PRIORITY_NORMAL);
	EXPECT_EQ(1, DRM_VACCEL_QUEUE_PRIORITY_MEDIUM);
	EXPECT_EQ(2, DRM_VACCEL_QUEUE_PRIORITY_HIGH);
	EXPECT_EQ(0, DRM_VACCEL_QUEUE_RUNNING);
	EXPECT_EQ(1, DRM_VACCEL_QUEUE_ERROR);
	EXPECT_EQ(64, DRM_VACCEL_WAIT_MAX_ITEMS);
	EXPECT_EQ(0x1, DRM_VACCEL_WAIT_ALL);
	EXPECT_EQ(0x2, DRM_VACCEL_WAIT_IGNORE_FAULTS);
}

TEST_HARNESS_MAIN
