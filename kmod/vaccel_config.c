// SPDX-License-Identifier: GPL-2.0-only
/*
 * Model settings of a vaccel device: defaults, parsing of the
 * "key=value" words given to new_device, and their read-only sysfs view.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/time64.h>

#include "vaccel_drv.h"

/**
 * struct vaccel_config_key - one setting: its name, place, default and range
 * @name: the key in new_device and the sysfs attribute name
 * @offset: offset of the u64 field in &struct vaccel_config
 * @def: default value
 * @min: smallest accepted value
 * @max: largest accepted value
 * @align: the value must be a multiple of this (0: any value)
 * @suffix: accept a K/M/G/T binary size suffix
 */
struct vaccel_config_key {
	const char *name;
	size_t offset;
	u64 def;
	u64 min;
	u64 max;
	u64 align;
	bool suffix;
};

enum vaccel_config_key_id {
	VACCEL_KEY_ENGINES,
	VACCEL_KEY_MEMORY,
	VACCEL_KEY_LINK_BW,
	VACCEL_KEY_LINK_LATENCY,
	VACCEL_KEY_POLL_BUDGET,
	VACCEL_NUM_KEYS
};

static const struct vaccel_config_key vaccel_config_keys[VACCEL_NUM_KEYS] = {
	[VACCEL_KEY_ENGINES] = {
		.name = "engines",
		.offset = offsetof(struct vaccel_config, engines),
		.def = 4, .min = 1, .max = 64,
	},
	[VACCEL_KEY_MEMORY] = {
		.name = "memory",
		.offset = offsetof(struct vaccel_config, memory),
		.def = SZ_1G, .min = SZ_1M, .max = SZ_1T,
		.align = PAGE_SIZE, .suffix = true,
	},
	[VACCEL_KEY_LINK_BW] = {
		.name = "link_bw_mbps",
		.offset = offsetof(struct vaccel_config, link_bw_mbps),
		.def = 0, .min = 0, .max = 1000000,
	},
	[VACCEL_KEY_LINK_LATENCY] = {
		.name = "link_latency_ns",
		.offset = offsetof(struct vaccel_config, link_latency_ns),
		.def = 0, .min = 0, .max = NSEC_PER_SEC,
	},
	[VACCEL_KEY_POLL_BUDGET] = {
		.name = "poll_budget_ns",
		.offset = offsetof(struct vaccel_config, poll_budget_ns),
		.def = 50 * NSEC_PER_USEC, .min = 0, .max = NSEC_PER_SEC,
	},
};

static u64 *vaccel_config_field(struct vaccel_config *cfg,
				const struct vaccel_config_key *key)
{
	return (u64 *)((u8 *)cfg + key->offset);
}

/**
 * vaccel_config_init() - fill a configuration with the defaults
 * @cfg: configuration to fill
 */
void vaccel_config_init(struct vaccel_config *cfg)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vaccel_config_keys); i++)
		*vaccel_config_field(cfg, &vaccel_config_keys[i]) =
			vaccel_config_keys[i].def;
}

static const struct vaccel_config_key *vaccel_config_lookup(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vaccel_config_keys); i++)
		if (!strcmp(vaccel_config_keys[i].name, name))
			return &vaccel_config_keys[i];
	return NULL;
}

static int vaccel_config_value(const struct vaccel_config_key *key,
			       const char *str, u64 *value)
{
	u64 v, mult = 1;
	char *num;
	size_t len = strlen(str);
	int ret;

	if (!len)
		return -EINVAL;
	if (key->suffix) {
		switch (str[len - 1]) {
		case 'K': case 'k':
			mult = SZ_1K;
			break;
		case 'M': case 'm':
			mult = SZ_1M;
			break;
		case 'G': case 'g':
			mult = SZ_1G;
			break;
		case 'T': case 't':
			mult = SZ_1T;
			break;
		}
	}
	num = kstrndup(str, mult > 1 ? len - 1 : len, GFP_KERNEL);
	if (!num)
		return -ENOMEM;
	ret = kstrtou64(num, 0, &v);
	kfree(num);
	if (ret)
		return -EINVAL;
	if (check_mul_overflow(v, mult, value))
		return -EINVAL;
	return 0;
}

/**
 * vaccel_config_parse() - apply "key=value" words to a configuration
 * @cfg: configuration, already holding the defaults
 * @words: space separated words; modified in place
 *
 * Each key may appear once. Every rejected word is logged with the reason.
 *
 * Return: 0, -EINVAL for a malformed word, an unknown or repeated key, or
 * a value that is not a number, out of range or misaligned; -ENOMEM.
 */
int vaccel_config_parse(struct vaccel_config *cfg, char *words)
{
	unsigned long seen = 0;
	char *word, *eq;
	int ret;

	BUILD_BUG_ON(VACCEL_NUM_KEYS > BITS_PER_LONG);

	while ((word = strsep(&words, " \t\n"))) {
		const struct vaccel_config_key *key;
		unsigned int idx;
		u64 value;

		if (!*word)
			continue;
		eq = strchr(word, '=');
		if (!eq) {
			pr_warn("new_device: '%s' is not key=value\n", word);
			return -EINVAL;
		}
		*eq = '\0';
		key = vaccel_config_lookup(word);
		if (!key) {
			pr_warn("new_device: unknown key '%s'\n", word);
			return -EINVAL;
		}
		idx = key - vaccel_config_keys;
		if (seen & BIT(idx)) {
			pr_warn("new_device: key '%s' given twice\n", word);
			return -EINVAL;
		}
		seen |= BIT(idx);
		ret = vaccel_config_value(key, eq + 1, &value);
		if (ret == -ENOMEM)
			return ret;
		if (ret) {
			pr_warn("new_device: %s: '%s' is not a number\n",
				key->name, eq + 1);
			return ret;
		}
		if (value < key->min || value > key->max) {
			pr_warn("new_device: %s=%llu out of range [%llu, %llu]\n",
				key->name, value, key->min, key->max);
			return -EINVAL;
		}
		if (key->align && value % key->align) {
			pr_warn("new_device: %s=%llu is not a multiple of %llu\n",
				key->name, value, key->align);
			return -EINVAL;
		}
		*vaccel_config_field(cfg, key) = value;
	}
	return 0;
}

static ssize_t vaccel_config_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	struct dev_ext_attribute *ea =
		container_of(attr, struct dev_ext_attribute, attr);
	struct vaccel_bus_dev *bdev = to_vaccel_bus_dev(dev);

	return sysfs_emit(buf, "%llu\n", *vaccel_config_field(&bdev->cfg, ea->var));
}

/* The sysfs file of a setting is named after its key. */
#define VACCEL_CONFIG_ATTR(_name, _id)					\
	struct dev_ext_attribute vaccel_attr_##_name = {		\
		.attr = __ATTR(_name, 0444, vaccel_config_show, NULL),	\
		.var = (void *)&vaccel_config_keys[_id],		\
	}

static VACCEL_CONFIG_ATTR(engines, VACCEL_KEY_ENGINES);
static VACCEL_CONFIG_ATTR(memory, VACCEL_KEY_MEMORY);
static VACCEL_CONFIG_ATTR(link_bw_mbps, VACCEL_KEY_LINK_BW);
static VACCEL_CONFIG_ATTR(link_latency_ns, VACCEL_KEY_LINK_LATENCY);
static VACCEL_CONFIG_ATTR(poll_budget_ns, VACCEL_KEY_POLL_BUDGET);

static struct attribute *vaccel_config_attrs[] = {
	&vaccel_attr_engines.attr.attr,
	&vaccel_attr_memory.attr.attr,
	&vaccel_attr_link_bw_mbps.attr.attr,
	&vaccel_attr_link_latency_ns.attr.attr,
	&vaccel_attr_poll_budget_ns.attr.attr,
	NULL,
};

static const struct attribute_group vaccel_config_group = {
	.attrs = vaccel_config_attrs,
};

/* The bus device's attributes: one read-only file per setting. */
const struct attribute_group *vaccel_config_groups[] = {
	&vaccel_config_group,
	NULL,
};
