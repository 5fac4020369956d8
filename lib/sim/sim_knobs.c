// SPDX-License-Identifier: MIT
/*
 * The in-process device's debugfs: the module's per-device files and
 * fault knobs (kmod/vaccel_debugfs.c) with the same names, value syntax
 * and text formats, reached through accel_device_debug_write() and
 * accel_device_debug_read(), plus the process-wide "objects" counters and
 * the calling file's usage ("fdinfo", the keys of the module's fdinfo).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

/* ---- parsing, as the kernel's kstrto*() and kstrtobool() ---- */

/* @s without one trailing newline, into @buf. */
static int strip(const char *s, char *buf, size_t len)
{
	size_t n = strlen(s);

	if (n && s[n - 1] == '\n')
		n--;
	if (!n || n >= len)
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

static int parse_s64(const char *s, long long *v)
{
	char buf[64], *end;

	if (strip(s, buf, sizeof(buf)) || buf[0] == ' ')
		return -EINVAL;
	errno = 0;
	*v = strtoll(buf, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

static int parse_u64(const char *s, unsigned long long *v)
{
	char buf[64], *end;

	if (strip(s, buf, sizeof(buf)) || buf[0] == '-' || buf[0] == ' ')
		return -EINVAL;
	errno = 0;
	*v = strtoull(buf, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

static int parse_bool(const char *s, bool *v)
{
	switch (s[0]) {
	case 'y': case 'Y': case '1':
		*v = true;
		return 0;
	case 'n': case 'N': case '0':
		*v = false;
		return 0;
	case 'o': case 'O':
		if (s[1] == 'n' || s[1] == 'N') {
			*v = true;
			return 0;
		}
		if (s[1] == 'f' || s[1] == 'F') {
			*v = false;
			return 0;
		}
		break;
	}
	return -EINVAL;
}

/* "A B": an unsigned 32-bit and an unsigned 64-bit number (sscanf "%u %llu"). */
static int parse_pair(const char *s, unsigned int *a, unsigned long long *b)
{
	return sscanf(s, "%u %llu", a, b) == 2 ? 0 : -EINVAL;
}

static atomic_int *int_knob(struct sim_dev *dev, const char *knob)
{
	if (!strcmp(knob, "fail_bo_create"))
		return &dev->knobs.fail_bo_create;
	if (!strcmp(knob, "fail_vm_bind"))
		return &dev->knobs.fail_vm_bind;
	if (!strcmp(knob, "fail_queue_create"))
		return &dev->knobs.fail_queue_create;
	if (!strcmp(knob, "fault_access"))
		return &dev->knobs.fault_access;
	if (!strcmp(knob, "split_owner_yield"))
		return &dev->knobs.split_owner_yield;
	return NULL;
}

static const char *const read_only_files[] = {
	"info", "contexts", "buffers", "vm", "queues", "engines", "stats", "objects", "fdinfo",
	"sim",
};

static bool is_read_only(const char *file)
{
	size_t i;

	for (i = 0; i < sizeof(read_only_files) / sizeof(read_only_files[0]); i++)
		if (!strcmp(file, read_only_files[i]))
			return true;
	return false;
}

int sim_debug_write(struct sim_dev *dev, const char *knob, const char *value)
{
	unsigned long long u;
	unsigned int a;
	atomic_int *ik;
	long long s;
	bool b;
	int ret;

	if (atomic_load(&dev->removed))
		return -ENOENT;	/* the directory went with the device */
	ik = int_knob(dev, knob);
	if (ik) {
		ret = parse_s64(value, &s);
		if (!ret)
			atomic_store(ik, (int)s);
		return ret;
	}
	if (!strcmp(knob, "packet_latency_ns")) {
		ret = parse_u64(value, &u);
		if (!ret)
			atomic_store(&dev->knobs.packet_latency_ns, u);
		return ret;
	}
	if (!strcmp(knob, "foreign_import_mmap")) {
		ret = parse_bool(value, &b);
		if (!ret)
			atomic_store(&dev->knobs.foreign_import_mmap, b);
		return ret;
	}
	if (!strcmp(knob, "inline_kick")) {
		ret = parse_bool(value, &b);
		if (!ret)
			atomic_store(&dev->knobs.inline_kick, b);
		return ret;
	}
	if (!strcmp(knob, "stall_engine")) {
		if (parse_pair(value, &a, &u) || a >= dev->cfg.engines || u > 60000000000ull)
			return -EINVAL;
		return sim_engine_stall_set(&dev->engines[a], u);
	}
	if (!strcmp(knob, "force_fault")) {
		if (parse_pair(value, &a, &u) || u > UINT32_MAX)
			return -EINVAL;
		return sim_device_force_fault(dev, a, (uint32_t)u);
	}
	if (!strcmp(knob, "reset")) {
		if (parse_bool(value, &b) || !b)
			return -EINVAL;
		ret = sim_device_reset(dev);
		return ret < 0 ? ret : 0;
	}
	if (!strcmp(knob, "split_stall")) {
		if (parse_pair(value, &a, &u) || a >= dev->cfg.engines || u > 10000000000ull)
			return -EINVAL;
		atomic_store(&dev->knobs.split_stall_ns, 0);
		atomic_store(&dev->knobs.split_stall_engine, a);
		atomic_store(&dev->knobs.split_stall_ns, u);	/* the engine before the stall */
		return 0;
	}
	/* a file without a write operation */
	return is_read_only(knob) ? -EINVAL : -ENOENT;
}

/* ---- reading: the module's text formats ---- */

struct out {
	char *buf;
	size_t len, n;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(o->buf + o->n, o->n < o->len ? o->len - o->n : 0, fmt, ap);
	va_end(ap);
	if (k > 0)
		o->n += (size_t)k;
	if (o->n >= o->len)
		o->n = o->len ? o->len - 1 : 0;
}

static void show_info(struct sim_dev *dev, struct out *o)
{
	unsigned int files = 0;
	struct list *l;

	pthread_mutex_lock(&dev->lock);
	for (l = dev->files.next; l != &dev->files; l = l->next)
		files++;
	pthread_mutex_unlock(&dev->lock);
	put(o, "id %u\n", dev->id);
	put(o, "engines %llu\n", (unsigned long long)dev->cfg.engines);
	put(o, "memory %llu\n", (unsigned long long)dev->cfg.memory);
	put(o, "link_bw_mbps %llu\n", (unsigned long long)dev->cfg.link_bw_mbps);
	put(o, "link_latency_ns %llu\n", (unsigned long long)dev->cfg.link_latency_ns);
	put(o, "poll_budget_ns %llu\n", (unsigned long long)dev->cfg.poll_budget_ns);
	put(o, "va_start 0x%llx\n", SIM_VA_START);
	put(o, "va_end 0x%llx\n", SIM_VA_END);
	put(o, "open_files %u\n", files);
	put(o, "memory_used %llu\n", (unsigned long long)atomic_load(&dev->mem_used));
	put(o, "pinned %llu\n", (unsigned long long)atomic_load(&dev->mem_pinned));
}

static void show_files(struct sim_dev *dev, struct out *o, void (*show)(struct sim_file *,
									 struct out *))
{
	struct list *l;

	pthread_mutex_lock(&dev->lock);
	for (l = dev->files.next; l != &dev->files; l = l->next)
		show(container_of(l, struct sim_file, node), o);
	pthread_mutex_unlock(&dev->lock);
}

static void show_context(struct sim_file *f, struct out *o)
{
	unsigned int bos;

	pthread_mutex_lock(&f->lock);
	bos = f->num_bos;
	pthread_mutex_unlock(&f->lock);
	put(o, "ctx %u pid %d bos %u mappings %u\n", f->id, (int)f->pid, bos, sim_vm_count(&f->vm));
}

static void show_buffers(struct sim_file *f, struct out *o)
{
	unsigned int i;

	pthread_mutex_lock(&f->lock);
	for (i = 0; i < SIM_MAX_BOS; i++) {
		struct sim_bo *bo = atomic_load(&f->handles[i]);

		if (!bo)
			continue;
		put(o, "ctx %u handle %u size %llu flags 0x%x status 0x%x\n", f->id, i + 1,
		    (unsigned long long)bo->size, sim_bo_owner(bo)->flags,
		    (bo->owner ? DRM_VACCEL_BO_STATUS_IMPORTED : 0) |
		    (sim_bo_sealed(bo) ? DRM_VACCEL_BO_STATUS_SEALED : 0));
	}
	pthread_mutex_unlock(&f->lock);
}

static void show_vm(struct sim_file *f, struct out *o)
{
	o->n += sim_vm_show(&f->vm, f->id, o->buf + o->n, o->len - o->n);
	if (o->n >= o->len)
		o->n = o->len ? o->len - 1 : 0;
}

static void show_queues(struct sim_dev *dev, struct out *o)
{
	unsigned int i;

	for (i = 0; i < dev->cfg.engines; i++) {
		struct sim_engine *e = &dev->engines[i];
		struct list *l;

		pthread_mutex_lock(&e->lock);
		for (l = e->queues.next; l != &e->queues; l = l->next) {
			struct sim_queue *q = container_of(l, struct sim_queue, node);

			put(o, "engine %u ctx %u queue %u state %u read %llu write %llu fault %u "
			    "fault_index %llu fault_addr 0x%llx blocked %d priority %u busy_until %llu "
			    "depth %u split %d wait_addr 0x%llx\n",
			    i, q->file->id, q->id, __atomic_load_n(&q->ctrl->state, __ATOMIC_RELAXED),
			    (unsigned long long)q->core.read_index,
			    (unsigned long long)q->write_index, q->core.fault,
			    (unsigned long long)q->core.fault_index,
			    (unsigned long long)q->core.fault_addr, q->blocked, q->priority,
			    (unsigned long long)q->core.busy_until, q->core.depth, !!q->split,
			    (unsigned long long)(q->blocked ? q->core.wait_addr : 0));
		}
		pthread_mutex_unlock(&e->lock);
	}
}

static void show_engines(struct sim_dev *dev, struct out *o)
{
	uint64_t now = sim_now();
	unsigned int i;

	for (i = 0; i < dev->cfg.engines; i++) {
		struct sim_engine *e = &dev->engines[i];
		unsigned int n = 0;
		struct list *l;

		pthread_mutex_lock(&e->lock);
		for (l = e->queues.next; l != &e->queues; l = l->next)
			n++;
		pthread_mutex_unlock(&e->lock);
		put(o, "engine %u queues %u running %d stalled %d sleeps %llu wakeups %llu\n", i, n,
		    e->running, atomic_load(&e->stall_until) > now,
		    (unsigned long long)atomic_load(&e->sleeps),
		    (unsigned long long)atomic_load(&e->wakeups));
	}
}

static void show_stats(struct sim_dev *dev, struct out *o)
{
	const struct sim_stats *s = &dev->stats;
#define S(name) put(o, #name " %llu\n", (unsigned long long)atomic_load(&s->name))
	S(packets); S(bytes); S(faults); S(kicks); S(sleeps); S(wakeups); S(resets); S(splits);
	S(split_helps); S(split_self_helps); S(split_host_helps);
	S(signal_wakes); S(signal_walked);
	S(signal_walk_max); S(link_bytes); S(link_ns); S(fpu_sections); S(fpu_ns);
	S(fpu_max_ns); S(fpu_over_100us); S(fpu_over_1ms); S(inline_turns); S(inline_wakes);
	S(signal_shared_wakes);
#undef S
}

static void show_objects(struct out *o)
{
	put(o, "bus_devices %d\n", atomic_load(&sim_objects.bus_devices));
	put(o, "devices %d\n", atomic_load(&sim_objects.devices));
	put(o, "files %d\n", atomic_load(&sim_objects.files));
	put(o, "bos %d\n", atomic_load(&sim_objects.bos));
	put(o, "mappings %d\n", atomic_load(&sim_objects.mappings));
	put(o, "queues %d\n", atomic_load(&sim_objects.queues));
}

/* The in-process device's own file: its process-wide engine threads and poller slots. */
static void show_sim(struct out *o)
{
	int slots, now, max, threads;

	sim_pollers_read(&slots, &now, &max, &threads);
	put(o, "engine_threads %d\n", threads);
	put(o, "poller_slots %d\n", slots);
	put(o, "pollers %d\n", now);
	put(o, "pollers_max %d\n", max);
}

/* The keys of the module's fdinfo (drm-usage-stats) for file @f. */
static void show_fdinfo(struct sim_file *f, struct out *o)
{
	uint64_t total = 0;
	unsigned int i;

	pthread_mutex_lock(&f->lock);
	for (i = 0; i < SIM_MAX_BOS; i++) {
		struct sim_bo *bo = atomic_load(&f->handles[i]);

		if (bo)
			total += bo->size;
	}
	pthread_mutex_unlock(&f->lock);
	put(o, "drm-driver:\tvaccel\n");
	put(o, "drm-client-id:\t%u\n", f->id);
	put(o, "drm-total-memory:\t%llu KiB\n", (unsigned long long)(total >> 10));
	put(o, "drm-engine-compute:\t%llu ns\n", (unsigned long long)sim_acct_read(f));
	put(o, "drm-engine-capacity-compute:\t%llu\n", (unsigned long long)f->dev->cfg.engines);
}

int sim_objects_read(char *buf, size_t len)
{
	struct out o = { buf, len, 0 };

	/* the counters as a program sees them: with the devices of ACCEL_SIM_DEVICES made */
	sim_bus_init();
	buf[0] = '\0';
	show_objects(&o);
	return (int)o.n;
}

int sim_debug_read(struct sim_dev *dev, struct sim_file *f, const char *file, char *buf,
		   size_t len)
{
	struct out o = { buf, len, 0 };
	atomic_int *ik;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	if (!strcmp(file, "objects")) {
		show_objects(&o);
		return (int)o.n;
	}
	if (!strcmp(file, "sim")) {
		show_sim(&o);
		return (int)o.n;
	}
	if (atomic_load(&dev->removed))
		return -ENOENT;
	ik = int_knob(dev, file);
	if (ik)
		put(&o, "%d\n", atomic_load(ik));
	else if (!strcmp(file, "packet_latency_ns"))
		put(&o, "%llu\n", (unsigned long long)atomic_load(&dev->knobs.packet_latency_ns));
	else if (!strcmp(file, "foreign_import_mmap"))
		put(&o, "%c\n", atomic_load(&dev->knobs.foreign_import_mmap) ? 'Y' : 'N');
	else if (!strcmp(file, "inline_kick"))
		put(&o, "%c\n", atomic_load(&dev->knobs.inline_kick) ? 'Y' : 'N');
	else if (!strcmp(file, "split_stall"))
		put(&o, "%u %llu\n", atomic_load(&dev->knobs.split_stall_engine),
		    (unsigned long long)atomic_load(&dev->knobs.split_stall_ns));
	else if (!strcmp(file, "info"))
		show_info(dev, &o);
	else if (!strcmp(file, "contexts"))
		show_files(dev, &o, show_context);
	else if (!strcmp(file, "buffers"))
		show_files(dev, &o, show_buffers);
	else if (!strcmp(file, "vm"))
		show_files(dev, &o, show_vm);
	else if (!strcmp(file, "queues"))
		show_queues(dev, &o);
	else if (!strcmp(file, "engines"))
		show_engines(dev, &o);
	else if (!strcmp(file, "stats"))
		show_stats(dev, &o);
	else if (!strcmp(file, "fdinfo") && f)
		show_fdinfo(f, &o);
	else if (!strcmp(file, "stall_engine") || !strcmp(file, "force_fault") ||
		 !strcmp(file, "reset"))
		return -EINVAL;	/* write-only files */
	else
		return -ENOENT;
	return (int)o.n;
}

/* ---- the library's debug API (lib/backend.c) ---- */

int sim_fd_debug_write(int fd, const char *knob, const char *value)
{
	struct sim_file *f = sim_file_get(fd);
	int ret;

	if (!f)
		return -EBADF;
	ret = sim_debug_write(f->dev, knob, value);
	sim_file_put(f);
	return ret;
}

int sim_fd_debug_read(int fd, const char *file, char *buf, size_t len)
{
	struct sim_file *f = sim_file_get(fd);
	int ret;

	if (!f)
		return -EBADF;
	ret = sim_debug_read(f->dev, f, file, buf, len);
	sim_file_put(f);
	return ret;
}
