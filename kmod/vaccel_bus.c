// SPDX-License-Identifier: GPL-2.0-only
/*
 * The vaccel bus: devices are created and destroyed by writing to
 * /sys/bus/vaccel/new_device ("ID [key=value ...]") and del_device ("ID"),
 * and bound to the vaccel driver like any other device, so that a sysfs
 * unbind or a del_device exercises the same hot-unplug path as a real
 * device going away.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/kstrtox.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include "vaccel_drv.h"

/* Device ids are 0..VACCEL_MAX_ID; the accel minor is allocated apart. */
#define VACCEL_MAX_ID	1023

/*
 * vaccel_bus_lock serialises new_device, del_device and module load and
 * unload. It protects vaccel_bus_devs (id -> struct vaccel_bus_dev, one
 * reference held by the map) and vaccel_bus_enabled, which is false
 * before the module finished loading and once it starts unloading, so
 * that no device can be added behind the back of vaccel_bus_exit().
 */
static DEFINE_MUTEX(vaccel_bus_lock);
static DEFINE_XARRAY(vaccel_bus_devs);
static bool vaccel_bus_enabled;

atomic_t vaccel_live_bus_devs = ATOMIC_INIT(0);

static int vaccel_bus_probe(struct device *dev)
{
	struct vaccel_bus_dev *bdev = to_vaccel_bus_dev(dev);

	bdev->probe_err = vaccel_device_probe(bdev);
	return bdev->probe_err;
}

static void vaccel_bus_remove(struct device *dev)
{
	vaccel_device_remove(to_vaccel_bus_dev(dev));
}

static const struct bus_type vaccel_bus;

static struct device_driver vaccel_driver = {
	.name = DRIVER_NAME,
	.bus = &vaccel_bus,
	.owner = THIS_MODULE,
};

static void vaccel_bus_dev_release(struct device *dev)
{
	kfree(to_vaccel_bus_dev(dev));
	atomic_dec(&vaccel_live_bus_devs);
}

/* Called with vaccel_bus_lock held. @words are the settings, or NULL. */
static int vaccel_bus_dev_add(u32 id, char *words)
{
	struct vaccel_bus_dev *bdev;
	int ret;

	lockdep_assert_held(&vaccel_bus_lock);

	bdev = kzalloc(sizeof(*bdev), GFP_KERNEL);
	if (!bdev)
		return -ENOMEM;
	atomic_inc(&vaccel_live_bus_devs);
	bdev->id = id;
	bdev->dev.bus = &vaccel_bus;
	bdev->dev.release = vaccel_bus_dev_release;
	device_initialize(&bdev->dev);

	vaccel_config_init(&bdev->cfg);
	if (words) {
		ret = vaccel_config_parse(&bdev->cfg, words);
		if (ret)
			goto err_put;
	}

	ret = dev_set_name(&bdev->dev, "vaccel%u", id);
	if (ret)
		goto err_put;

	ret = xa_insert(&vaccel_bus_devs, id, bdev, GFP_KERNEL);
	if (ret) {
		if (ret == -EBUSY) {
			pr_warn("new_device: device %u already exists\n", id);
			ret = -EEXIST;
		}
		goto err_put;
	}

	ret = device_add(&bdev->dev);
	if (ret)
		goto err_erase;

	/*
	 * Probing is synchronous: a failed probe leaves its error here. (With
	 * drivers_autoprobe off the device is simply left unbound.)
	 */
	ret = bdev->probe_err;
	if (ret) {
		pr_warn("new_device: device %u failed to probe: %d\n", id, ret);
		device_del(&bdev->dev);
		goto err_erase;
	}
	return 0;

err_erase:
	xa_erase(&vaccel_bus_devs, id);
err_put:
	put_device(&bdev->dev);
	return ret;
}

/* Called with vaccel_bus_lock held. */
static void vaccel_bus_dev_del(struct vaccel_bus_dev *bdev)
{
	lockdep_assert_held(&vaccel_bus_lock);

	xa_erase(&vaccel_bus_devs, bdev->id);
	device_unregister(&bdev->dev);
}

static int vaccel_parse_id(char **words, u32 *id)
{
	char *tok;

	*words = skip_spaces(*words);
	tok = strsep(words, " \t\n");
	if (!tok || !*tok || kstrtou32(tok, 10, id) || *id > VACCEL_MAX_ID) {
		pr_warn("'%s' is not a device id (0..%u)\n",
			tok ?: "", VACCEL_MAX_ID);
		return -EINVAL;
	}
	return 0;
}

static ssize_t new_device_store(const struct bus_type *bus, const char *buf,
				size_t count)
{
	char *str, *words;
	u32 id;
	int ret;

	str = kstrndup(buf, count, GFP_KERNEL);
	if (!str)
		return -ENOMEM;
	words = str;
	ret = vaccel_parse_id(&words, &id);
	if (!ret) {
		mutex_lock(&vaccel_bus_lock);
		ret = vaccel_bus_enabled ? vaccel_bus_dev_add(id, words) : -ENODEV;
		mutex_unlock(&vaccel_bus_lock);
	}
	kfree(str);
	return ret ?: count;
}
static BUS_ATTR_WO(new_device);

static ssize_t del_device_store(const struct bus_type *bus, const char *buf,
				size_t count)
{
	struct vaccel_bus_dev *bdev;
	char *str, *words;
	u32 id;
	int ret;

	str = kstrndup(buf, count, GFP_KERNEL);
	if (!str)
		return -ENOMEM;
	words = str;
	ret = vaccel_parse_id(&words, &id);
	if (!ret && *skip_spaces(words ?: "")) {
		pr_warn("del_device: trailing characters after the id\n");
		ret = -EINVAL;
	}
	kfree(str);
	if (ret)
		return ret;

	mutex_lock(&vaccel_bus_lock);
	bdev = vaccel_bus_enabled ? xa_load(&vaccel_bus_devs, id) : NULL;
	if (bdev)
		vaccel_bus_dev_del(bdev);
	else
		ret = vaccel_bus_enabled ? -ENOENT : -ENODEV;
	mutex_unlock(&vaccel_bus_lock);
	return ret ?: count;
}
static BUS_ATTR_WO(del_device);

static struct attribute *vaccel_bus_attrs[] = {
	&bus_attr_new_device.attr,
	&bus_attr_del_device.attr,
	NULL,
};
ATTRIBUTE_GROUPS(vaccel_bus);

static const struct bus_type vaccel_bus = {
	.name = DRIVER_NAME,
	.bus_groups = vaccel_bus_groups,
	.dev_groups = vaccel_config_groups,
	.probe = vaccel_bus_probe,
	.remove = vaccel_bus_remove,
};

static void vaccel_bus_del_all(void)
{
	struct vaccel_bus_dev *bdev;
	unsigned long id;

	xa_for_each(&vaccel_bus_devs, id, bdev)
		vaccel_bus_dev_del(bdev);
}

/**
 * vaccel_bus_init() - register the bus and the driver, create devices
 * @num_devices: number of devices to create, with ids 0..@num_devices-1
 *
 * Return: 0 or a negative errno; on error nothing is left registered.
 */
int vaccel_bus_init(unsigned int num_devices)
{
	unsigned int i;
	int ret;

	ret = bus_register(&vaccel_bus);
	if (ret)
		return ret;
	ret = driver_register(&vaccel_driver);
	if (ret)
		goto err_bus;

	mutex_lock(&vaccel_bus_lock);
	for (i = 0; i < num_devices; i++) {
		ret = vaccel_bus_dev_add(i, NULL);
		if (ret) {
			vaccel_bus_del_all();
			mutex_unlock(&vaccel_bus_lock);
			goto err_driver;
		}
	}
	vaccel_bus_enabled = true;
	mutex_unlock(&vaccel_bus_lock);
	return 0;

err_driver:
	driver_unregister(&vaccel_driver);
err_bus:
	bus_unregister(&vaccel_bus);
	return ret;
}

/**
 * vaccel_bus_exit() - destroy every device, unregister driver and bus
 */
void vaccel_bus_exit(void)
{
	mutex_lock(&vaccel_bus_lock);
	vaccel_bus_enabled = false;
	vaccel_bus_del_all();
	mutex_unlock(&vaccel_bus_lock);

	driver_unregister(&vaccel_driver);
	bus_unregister(&vaccel_bus);
}
