/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef __VACCEL_DRV_H__
#define __VACCEL_DRV_H__

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/device.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "vaccel_compat.h"
#include "vaccel_config.h"
#include "vaccel_signal.h"
#include "vaccel_vm.h"

#define DRIVER_NAME	"vaccel"
#define DRIVER_DESC	"Software-modelled compute accelerator"

/*
 * Every context sees the same device VA window. Address 0 and the low
 * 4 GiB are left out so that a NULL or truncated pointer always faults.
 */
#define VACCEL_VA_START	BIT_ULL(32)
#define VACCEL_VA_END	BIT_ULL(48)

/* Per-context limits, reported through GET_PARAM. */
#define VACCEL_MAX_BOS		4096
#define VACCEL_MAX_MAPPINGS	4096

/**
 * struct vaccel_bus_dev - a device on the vaccel bus
 * @dev: the bus device, named "vaccel<id>"
 * @id: the id given to new_device
 * @cfg: model settings given at creation, immutable afterwards
 * @probe_err: result of the last probe, reported back by new_device
 *
 * The bus device lives from new_device (or module load) until del_device
 * (or module unload) plus whatever references are still held on it: the
 * DRM device bound to it holds one until its last file is closed.
 */
struct vaccel_bus_dev {
	struct device dev;
	u32 id;
	struct vaccel_config cfg;
	int probe_err;
};

/**
 * struct vaccel_device - a bound vaccel device
 * @drm: the DRM accel device; the structure lives as long as it does
 * @id: copy of &vaccel_bus_dev.id
 * @cfg: copy of &vaccel_bus_dev.cfg, so that nothing here needs the bus
 *	device after unplug
 * @open_files: number of open files (contexts) on this device
 * @mem_used: bytes of @cfg.memory taken by buffer objects
 * @mem_pinned: bytes of buffer objects pinned for their whole life
 * @next_ctx_id: id of the next context
 * @engines: the @cfg.engines engines (see vaccel_engine.c)
 * @next_engine: round-robin cursor for placing new queues
 * @event_wq: host waiters (WAIT_SIGNALS) of the device, woken by queue
 *	faults and the unplug; signal updates wake per signal instead
 * @split_lock: protects @splits and each job's listed state
 * @splits: bulk packets split across engines (see vaccel_split.c)
 * @stats: counters for debugfs: packets and bytes executed, queue faults,
 *	KICK calls, engine sleeps and wake-ups, device resets, split jobs,
 *	ranges other engines ran and ranges an engine ran of its own job
 *	outside its turn (split_self_helps); signal updates made through the
 *	device, the waiters their wake-ups walked in all and at most
 *	(signal_wakes, signal_walked, signal_walk_max); bytes and time the
 *	link model charged; FPU sections, their total and longest time and
 *	how many lasted over 100 us and over 1 ms
 * @knobs: fault injection, set through debugfs: fail the next N buffer
 *	creations, binds or queue creations with -ENOMEM, fault the next N
 *	device memory accesses, add latency to every packet; make mmap()
 *	of this device's imports forward to the exporter unchecked, as a
 *	kernel importer of another driver does (foreign_import_mmap); let
 *	the owner's next N turns on a split job run no range
 *	(split_owner_yield); stall the next range an engine runs outside its
 *	own turns for N ns once its destination is mapped (split_stall:
 *	split_stall_engine, then split_stall_ns, which is taken once)
 *
 * Allocated by probe, unplugged by remove (unbind or del_device), freed
 * when the last reference to @drm is dropped. Buffer objects do not hold
 * @drm: each is held by a file, a mapping or a dma-buf that does.
 */
struct vaccel_device {
	struct drm_device drm;
	u32 id;
	struct vaccel_config cfg;
	atomic_t open_files;
	atomic64_t mem_used;
	atomic64_t mem_pinned;
	atomic_t next_ctx_id;
	struct vaccel_engine *engines;
	atomic_t next_engine;
	struct wait_queue_head event_wq;
	spinlock_t split_lock;	/* see above */
	struct list_head splits;
	struct {
		atomic64_t packets;
		atomic64_t bytes;
		atomic64_t faults;
		atomic64_t kicks;
		atomic64_t sleeps;
		atomic64_t wakeups;
		atomic64_t resets;
		atomic64_t splits;
		atomic64_t split_helps;
		atomic64_t split_self_helps;
		atomic64_t signal_wakes;
		atomic64_t signal_walked;
		atomic64_t signal_walk_max;
		atomic64_t link_bytes;
		atomic64_t link_ns;
		atomic64_t fpu_sections;
		atomic64_t fpu_ns;
		atomic64_t fpu_max_ns;
		atomic64_t fpu_over_100us;
		atomic64_t fpu_over_1ms;
	} stats;
	struct {
		atomic_t fail_bo_create;
		atomic_t fail_vm_bind;
		atomic_t fail_queue_create;
		atomic_t fault_access;
		u64 packet_latency_ns;
		bool foreign_import_mmap;
		atomic_t split_owner_yield;
		u32 split_stall_engine;
		u64 split_stall_ns;
	} knobs;
};

/**
 * VACCEL_IOCTL_DBG() - test an ioctl argument check, logging it if it fails
 * @drm: the &struct drm_device
 * @cond: the condition that rejects the argument
 *
 * Every rejected input says why under ``drm.debug=0x2`` (DRM_UT_DRIVER),
 * as xe's XE_IOCTL_DBG does, so an -EINVAL can be explained.
 *
 * Return: @cond.
 */
#define VACCEL_IOCTL_DBG(drm, cond) \
	((cond) && (drm_dbg(drm, "ioctl argument check failed at %s:%d: %s\n", \
			    __FILE__, __LINE__, #cond), 1))

/* Consume one injected failure from @knob; true if this call must fail. */
static inline bool vaccel_inject(atomic_t *knob)
{
	return atomic_read(knob) > 0 && atomic_dec_if_positive(knob) >= 0;
}

/**
 * struct vaccel_file - per open file state, one context per file
 * @vdev: the device this file was opened on
 * @pid: thread group of the opener, for debugfs
 * @id: context id, unique on the device, for debugfs
 * @num_bos: GEM handles held, at most VACCEL_MAX_BOS
 * @vm: the context's device VA space
 * @queues: the context's queues by id (allocating xarray, own lock)
 * @queues_lock: held while freeing queues and while walking them with
 *	sleeping locks (the VM's cache flush); engine locks nest inside
 * @arms: eventfds armed on signals (SIGNAL_EVENTFD)
 * @engine_ns: for each engine of the device, the engine time credited to
 *	the context so far (see &struct vaccel_engine_acct, whose lock
 *	protects the engine's entry), for fdinfo's drm-engine-compute
 */
struct vaccel_file {
	struct vaccel_device *vdev;
	struct pid *pid;
	u32 id;
	atomic_t num_bos;
	struct vaccel_vm vm;
	struct xarray queues;
	struct mutex queues_lock;	/* see above */
	struct vaccel_signal_arms arms;
	u64 *engine_ns;
};

static inline struct vaccel_device *to_vaccel_device(struct drm_device *drm)
{
	return container_of(drm, struct vaccel_device, drm);
}

static inline struct vaccel_bus_dev *to_vaccel_bus_dev(struct device *dev)
{
	return container_of(dev, struct vaccel_bus_dev, dev);
}

/* vaccel_drv.c: binding a bus device to a DRM accel device */
int vaccel_device_probe(struct vaccel_bus_dev *bdev);
void vaccel_device_remove(struct vaccel_bus_dev *bdev);

/* vaccel_bus.c: the vaccel bus, new_device and del_device */
int vaccel_bus_init(unsigned int num_devices);
void vaccel_bus_exit(void);

/* vaccel_debugfs.c */
void vaccel_debugfs_module_init(void);
void vaccel_debugfs_module_exit(void);
void vaccel_debugfs_device_init(struct vaccel_device *vdev);

/*
 * Live object counters, shown in /sys/kernel/debug/vaccel/objects so that
 * tests can prove teardown released everything.
 */
extern atomic_t vaccel_live_bus_devs;
extern atomic_t vaccel_live_devices;
extern atomic_t vaccel_live_files;
extern atomic_t vaccel_live_bos;
extern atomic_t vaccel_live_maps;
extern atomic_t vaccel_live_queues;

#endif /* __VACCEL_DRV_H__ */
