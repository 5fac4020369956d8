// SPDX-License-Identifier: MIT
/*
 * The in-process device's bus: the process's devices, created from
 * ACCEL_SIM_DEVICES at first use (default: what the module creates at
 * load, num_devices=4 with default settings) and by
 * accel_bus_new_device()/accel_bus_del_device(), with the settings,
 * ranges, defaults and messages of the module's new_device and del_device
 * (kmod/vaccel_bus.c, kmod/vaccel_config.c, Documentation/devices.rst).
 *
 * Removal is the module's hot-unplug: calls on files still open fail with
 * -ENODEV, their running queues stop with DRM_VACCEL_FAULT_REMOVED, host
 * waiters wake, armed eventfds fire and the engine threads end; the
 * device is freed when its last file and object are gone, and its id can
 * be reused at once.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_internal.h"

/* the module's default num_devices */
#define SIM_DEFAULT_DEVICES	4u

struct sim_objects sim_objects;

/* ---- settings (kmod/vaccel_config.c) ---- */

struct sim_config_key {
	const char *name;
	size_t offset;
	uint64_t def, min, max, align;
	bool suffix;
};

static const struct sim_config_key sim_keys[] = {
	{ "engines", offsetof(struct sim_config, engines), 4, 1, 64, 0, false },
	{ "memory", offsetof(struct sim_config, memory), 1ull << 30, 1ull << 20, 1ull << 40,
	  SIM_PAGE, true },
	{ "link_bw_mbps", offsetof(struct sim_config, link_bw_mbps), 0, 0, 1000000, 0, false },
	{ "link_latency_ns", offsetof(struct sim_config, link_latency_ns), 0, 0, 1000000000ull,
	  0, false },
	{ "poll_budget_ns", offsetof(struct sim_config, poll_budget_ns), 50000, 0,
	  1000000000ull, 0, false },
};

#define SIM_NUM_KEYS	(sizeof(sim_keys) / sizeof(sim_keys[0]))

static uint64_t *sim_config_field(struct sim_config *cfg, const struct sim_config_key *key)
{
	return (uint64_t *)((char *)cfg + key->offset);
}

void sim_config_init(struct sim_config *cfg)
{
	size_t i;

	for (i = 0; i < SIM_NUM_KEYS; i++)
		*sim_config_field(cfg, &sim_keys[i]) = sim_keys[i].def;
}

/* kstrtou64(str, 0, ...): decimal, 0x hex or 0 octal, a leading '+', nothing else. */
static int sim_strtou64(const char *str, uint64_t *v)
{
	char *end;

	if (*str == '+')
		str++;
	if (!isdigit((unsigned char)*str))
		return -EINVAL;
	errno = 0;
	*v = strtoull(str, &end, 0);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

static int sim_config_value(const struct sim_config_key *key, const char *str, uint64_t *value)
{
	uint64_t v, mult = 1;
	char num[64];
	size_t len = strlen(str);

	if (!len || len >= sizeof(num))
		return -EINVAL;
	if (key->suffix) {
		switch (str[len - 1]) {
		case 'K': case 'k':
			mult = 1ull << 10;
			break;
		case 'M': case 'm':
			mult = 1ull << 20;
			break;
		case 'G': case 'g':
			mult = 1ull << 30;
			break;
		case 'T': case 't':
			mult = 1ull << 40;
			break;
		}
	}
	memcpy(num, str, mult > 1 ? len - 1 : len);
	num[mult > 1 ? len - 1 : len] = '\0';
	if (sim_strtou64(num, &v))
		return -EINVAL;
	if (__builtin_mul_overflow(v, mult, value))
		return -EINVAL;
	return 0;
}

int sim_config_parse(struct sim_config *cfg, char *words)
{
	unsigned long seen = 0;
	char *word, *eq;

	while ((word = strsep(&words, " \t\n"))) {
		const struct sim_config_key *key = NULL;
		uint64_t value;
		size_t i;

		if (!*word)
			continue;
		eq = strchr(word, '=');
		if (!eq) {
			acc_err("vaccel-sim: new_device: '%s' is not key=value", word);
			return -EINVAL;
		}
		*eq = '\0';
		for (i = 0; i < SIM_NUM_KEYS && !key; i++)
			if (!strcmp(sim_keys[i].name, word))
				key = &sim_keys[i];
		if (!key) {
			acc_err("vaccel-sim: new_device: unknown key '%s'", word);
			return -EINVAL;
		}
		i = (size_t)(key - sim_keys);
		if (seen & (1ul << i)) {
			acc_err("vaccel-sim: new_device: key '%s' given twice", word);
			return -EINVAL;
		}
		seen |= 1ul << i;
		if (sim_config_value(key, eq + 1, &value)) {
			acc_err("vaccel-sim: new_device: %s: '%s' is not a number", key->name, eq + 1);
			return -EINVAL;
		}
		if (value < key->min || value > key->max) {
			acc_err("vaccel-sim: new_device: %s=%llu out of range [%llu, %llu]", key->name,
				(unsigned long long)value, (unsigned long long)key->min,
				(unsigned long long)key->max);
			return -EINVAL;
		}
		if (key->align && value % key->align) {
			acc_err("vaccel-sim: new_device: %s=%llu is not a multiple of %llu", key->name,
				(unsigned long long)value, (unsigned long long)key->align);
			return -EINVAL;
		}
		*sim_config_field(cfg, key) = value;
	}
	return 0;
}

/* ---- the bus ---- */

/*
 * bus.lock serialises device creation and removal and protects @devs (one
 * device reference each) and the initialisation state. In a child of a
 * process whose bus was set up (fork()), @parent holds the parent's
 * devices as they were at the fork (never touched: only their ids and
 * settings are read) and @inherit says the child's bus is made from them
 * at its first use instead of from ACCEL_SIM_DEVICES.
 */
static struct {
	pthread_mutex_t lock;
	bool inited;
	bool inherit;
	int init_err;
	struct sim_dev *devs[SIM_MAX_ID + 1];
	struct sim_dev *parent[SIM_MAX_ID + 1];
} bus = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void sim_dev_free(struct sim_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->cfg.engines; i++) {
		pthread_mutex_destroy(&dev->engines[i].lock);
		pthread_mutex_destroy(&dev->engines[i].acct.lock);
	}
	free(dev->engines);
	pthread_mutex_destroy(&dev->lock);
	pthread_mutex_destroy(&dev->split_lock);
	pthread_mutex_destroy(&dev->event_lock);
	free(dev);
	atomic_fetch_sub(&sim_objects.devices, 1);
}

void sim_dev_ref(struct sim_dev *dev)
{
	atomic_fetch_add_explicit(&dev->refs, 1, memory_order_relaxed);
}

void sim_dev_put(struct sim_dev *dev)
{
	if (dev && atomic_fetch_sub_explicit(&dev->refs, 1, memory_order_acq_rel) == 1)
		sim_dev_free(dev);
}

static struct sim_dev *sim_dev_new(unsigned int id, const struct sim_config *cfg)
{
	struct sim_dev *dev = calloc(1, sizeof(*dev));
	unsigned int i;

	if (!dev)
		return NULL;
	dev->engines = calloc(cfg->engines, sizeof(*dev->engines));
	if (!dev->engines) {
		free(dev);
		return NULL;
	}
	atomic_init(&dev->refs, 1);
	dev->id = id;
	dev->cfg = *cfg;
	pthread_mutex_init(&dev->lock, NULL);
	list_init(&dev->files);
	pthread_mutex_init(&dev->split_lock, NULL);
	list_init(&dev->splits);
	atomic_init(&dev->nsplits, 0);
	atomic_init(&dev->knobs.inline_kick, sim_inline_default());
	pthread_mutex_init(&dev->event_lock, NULL);
	list_init(&dev->event_waiters);
	for (i = 0; i < cfg->engines; i++) {
		struct sim_engine *e = &dev->engines[i];

		e->dev = dev;
		e->index = i;
		pthread_mutex_init(&e->lock, NULL);
		list_init(&e->queues);
		pthread_mutex_init(&e->acct.lock, NULL);
		list_init(&e->acct.busy);
	}
	atomic_fetch_add(&sim_objects.devices, 1);
	return dev;
}

/* The id at the start of @*words ("'%s' is not a device id" otherwise). */
static int sim_parse_id(char **words, unsigned int *id)
{
	uint64_t v;
	char *tok;

	while (**words == ' ' || **words == '\t' || **words == '\n')
		(*words)++;
	tok = strsep(words, " \t\n");
	if (!tok || !*tok || sim_strtou64(tok, &v) || strspn(tok, "+0123456789") != strlen(tok) ||
	    v > SIM_MAX_ID) {
		acc_err("vaccel-sim: '%s' is not a device id (0..%u)", tok ? tok : "", SIM_MAX_ID);
		return -EINVAL;
	}
	*id = (unsigned int)v;
	return 0;
}

/* Create device "ID key=value ..." from @spec (modified). Bus lock held. */
static int sim_bus_add(char *spec)
{
	struct sim_config cfg;
	struct sim_dev *dev;
	unsigned int id;
	int ret;

	ret = sim_parse_id(&spec, &id);
	if (ret)
		return ret;
	sim_config_init(&cfg);
	if (spec) {
		ret = sim_config_parse(&cfg, spec);
		if (ret)
			return ret;
	}
	if (bus.devs[id]) {
		acc_err("vaccel-sim: new_device: device %u already exists", id);
		return -EEXIST;
	}
	dev = sim_dev_new(id, &cfg);
	if (!dev)
		return -ENOMEM;
	bus.devs[id] = dev;
	atomic_fetch_add(&sim_objects.bus_devices, 1);
	acc_info("vaccel-sim: device %u: %llu engines, memory %llu, link %llu MB/s %llu ns, "
		 "poll budget %llu ns", id, (unsigned long long)cfg.engines,
		 (unsigned long long)cfg.memory, (unsigned long long)cfg.link_bw_mbps,
		 (unsigned long long)cfg.link_latency_ns, (unsigned long long)cfg.poll_budget_ns);
	return 0;
}

/* ACCEL_SIM_DEVICES: specs separated by ';'. Bus lock held. */
static int sim_bus_from_env(void)
{
	const char *env = getenv("ACCEL_SIM_DEVICES");
	char *copy, *rest, *spec, buf[32];
	unsigned int i;
	int ret = 0;

	if (!env) {
		for (i = 0; i < SIM_DEFAULT_DEVICES && !ret; i++) {
			snprintf(buf, sizeof(buf), "%u", i);
			ret = sim_bus_add(buf);
		}
		return ret;
	}
	copy = strdup(env);
	if (!copy)
		return -ENOMEM;
	rest = copy;
	while (!ret && (spec = strsep(&rest, ";"))) {
		if (!spec[strspn(spec, " \t\n")])
			continue;
		ret = sim_bus_add(spec);
	}
	free(copy);
	if (ret) {
		acc_err("vaccel-sim: ACCEL_SIM_DEVICES=\"%s\": %s: no sim device is created", env,
			strerror(-ret));
		for (i = 0; i <= SIM_MAX_ID; i++)
			if (bus.devs[i]) {
				sim_dev_put(bus.devs[i]);
				bus.devs[i] = NULL;
				atomic_fetch_sub(&sim_objects.bus_devices, 1);
			}
	}
	return ret;
}

/*
 * A child's bus: a fresh device for each device of the parent's bus at the
 * fork, with its id and settings (the module's bus is the system's, so a
 * child sees the same devices). Bus lock held.
 */
static int sim_bus_from_parent(void)
{
	unsigned int i;

	for (i = 0; i <= SIM_MAX_ID; i++) {
		if (!bus.parent[i])
			continue;
		bus.devs[i] = sim_dev_new(i, &bus.parent[i]->cfg);
		if (!bus.devs[i])
			return -ENOMEM;
		atomic_fetch_add(&sim_objects.bus_devices, 1);
	}
	return 0;
}

void sim_bus_fork_child(void)
{
	pthread_mutex_init(&bus.lock, NULL);
	atomic_store(&sim_objects.bus_devices, 0);
	atomic_store(&sim_objects.devices, 0);
	atomic_store(&sim_objects.files, 0);
	atomic_store(&sim_objects.bos, 0);
	atomic_store(&sim_objects.mappings, 0);
	atomic_store(&sim_objects.queues, 0);
	/* not set up (or it failed, which the child inherits): as it was */
	if (!bus.inited || bus.init_err)
		return;
	memcpy(bus.parent, bus.devs, sizeof(bus.parent));
	memset(bus.devs, 0, sizeof(bus.devs));
	bus.inited = false;
	bus.inherit = true;
}

int sim_bus_init(void)
{
	int ret;

	sim_fork_init();
	pthread_mutex_lock(&bus.lock);
	if (!bus.inited) {
		bus.init_err = bus.inherit ? sim_bus_from_parent() : sim_bus_from_env();
		bus.inherit = false;
		bus.inited = true;
	}
	ret = bus.init_err;
	pthread_mutex_unlock(&bus.lock);
	return ret;
}

struct sim_dev *sim_dev_get(unsigned int id)
{
	struct sim_dev *dev = NULL;

	if (id > SIM_MAX_ID || sim_bus_init())
		return NULL;
	pthread_mutex_lock(&bus.lock);
	dev = bus.devs[id];
	if (dev)
		sim_dev_ref(dev);
	pthread_mutex_unlock(&bus.lock);
	return dev;
}

int sim_bus_ids(unsigned int *ids, unsigned int max)
{
	unsigned int i, n = 0;
	int ret = sim_bus_init();

	if (ret)
		return ret;
	pthread_mutex_lock(&bus.lock);
	for (i = 0; i <= SIM_MAX_ID; i++)
		if (bus.devs[i]) {
			if (n < max)
				ids[n] = i;
			n++;
		}
	pthread_mutex_unlock(&bus.lock);
	return (int)n;
}

int sim_bus_new_device(const char *spec)
{
	char *copy;
	int ret = sim_bus_init();

	if (ret)
		return ret;
	copy = strdup(spec);
	if (!copy)
		return -ENOMEM;
	pthread_mutex_lock(&bus.lock);
	ret = sim_bus_add(copy);
	pthread_mutex_unlock(&bus.lock);
	free(copy);
	return ret;
}

/*
 * The hot-unplug (vaccel_device_remove()): no new call enters, the calls
 * that entered finish, running queues stop with REMOVED, waiters wake,
 * the engines end. Open files keep the structure.
 */
static void sim_dev_remove(struct sim_dev *dev)
{
	unsigned int spins = 0;

	atomic_store(&dev->removed, true);
	/* drm_dev_unplug(): wait for the calls that entered before */
	while (atomic_load(&dev->inflight))
		if (++spins < 128)
			sched_yield();
		else
			nanosleep(&(struct timespec){ 0, 50000 }, NULL);
	sim_device_lost(dev);
	sim_signal_device_event(dev, NULL, false);
	sim_engines_stop(dev);
}

int sim_bus_del_device(unsigned int id)
{
	struct sim_dev *dev;
	int ret = sim_bus_init();

	if (ret)
		return ret;
	if (id > SIM_MAX_ID) {
		acc_err("vaccel-sim: '%u' is not a device id (0..%u)", id, SIM_MAX_ID);
		return -EINVAL;
	}
	pthread_mutex_lock(&bus.lock);
	dev = bus.devs[id];
	if (dev) {
		bus.devs[id] = NULL;
		atomic_fetch_sub(&sim_objects.bus_devices, 1);
	}
	pthread_mutex_unlock(&bus.lock);
	if (!dev)
		return -ENOENT;
	sim_dev_remove(dev);
	acc_info("vaccel-sim: device %u removed", id);
	sim_dev_put(dev);
	return 0;
}

int sim_dev_start_engines(struct sim_dev *dev)
{
	int ret = 0;

	pthread_mutex_lock(&dev->lock);
	if (atomic_load(&dev->removed))
		ret = -ENODEV;
	else if (!dev->engines_started) {
		ret = sim_engines_start(dev);
		dev->engines_started = !ret;
	}
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

bool sim_dev_enter(struct sim_dev *dev)
{
	atomic_fetch_add(&dev->inflight, 1);
	if (atomic_load(&dev->removed)) {
		atomic_fetch_sub(&dev->inflight, 1);
		return false;
	}
	return true;
}

void sim_dev_exit(struct sim_dev *dev)
{
	atomic_fetch_sub_explicit(&dev->inflight, 1, memory_order_release);
}
