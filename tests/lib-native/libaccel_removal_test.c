// SPDX-License-Identifier: MIT
/*
 * The transport's removal handling (lib/transport.c) without a device: a
 * transport over a test backend whose ioctls fail with -ENODEV once the
 * "device" is removed. The first -ENODEV marks the transport gone and
 * replaces its mappings by zero pages; later calls fail without a
 * syscall. The library installs no signal handler (the module faults its
 * queue pages back in after a removal, so nothing raises SIGBUS).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "kselftest_harness.h"

static int removed;

static int t_open(const char *path, int ro)
{
	(void)path;
	(void)ro;
	return memfd_create("accel-test", MFD_CLOEXEC);
}

static void t_close(int fd)
{
	close(fd);
}

static int t_ioctl(int fd, unsigned long req, void *arg)
{
	(void)fd;
	(void)req;
	if (removed)
		return -ENODEV;
	((struct drm_vaccel_get_param *)arg)->value = 7;
	return 0;
}

static void *t_mmap(int fd, uint64_t off, size_t len, int prot, int *err)
{
	void *p;

	if (ftruncate(fd, (off_t)(off + len))) {
		*err = -errno;
		return NULL;
	}
	p = mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)off);
	if (p == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	return p;
}

static const struct tp_ops test_ops = {
	.name = "test",
	.open = t_open,
	.close = t_close,
	.ioctl = t_ioctl,
	.mmap = t_mmap,
	.munmap = NULL,		/* set below: the kernel backend's */
	.replace_anon = NULL,
};

static struct tp_ops ops;

static void setup_ops(void)
{
	ops = test_ops;
	ops.munmap = acc_tp_kernel.munmap;
	ops.replace_anon = acc_tp_kernel.replace_anon;
}

TEST(removal_replaces_mappings)
{
	struct acc_tp tp;
	volatile uint64_t *p;
	uint64_t param;
	void *addr;

	setup_ops();
	removed = 0;
	ASSERT_EQ(0, tp_open(&tp, &ops, "test"));
	ASSERT_EQ(0, tp_get_param(&tp, 0, &param));
	ASSERT_EQ(7, param);
	ASSERT_EQ(0, tp_mmap(&tp, 0, 4096, PROT_READ | PROT_WRITE, &addr));
	p = addr;
	*p = 42;
	ASSERT_EQ(42, *p);
	/* the "device" goes: the next call sees it */
	removed = 1;
	ASSERT_EQ(-ENODEV, tp_get_param(&tp, 0, &param));
	ASSERT_TRUE(tp_is_gone(&tp));
	/* the mapping is zero pages now, still readable and writable */
	ASSERT_EQ(0, *p);
	*p = 1;
	/* later calls fail without reaching the backend */
	removed = 0;
	ASSERT_EQ(-ENODEV, tp_get_param(&tp, 0, &param));
	ASSERT_EQ(-ENODEV, tp_mmap(&tp, 0, 4096, PROT_READ, &addr));
	tp_munmap(&tp, (void *)p, 4096);
	tp_close(&tp);
}

TEST(no_signal_handler)
{
	struct sigaction before, after;
	struct acc_tp tp;
	uint64_t param;
	void *addr;
	int sig;

	setup_ops();
	for (sig = SIGBUS; sig <= SIGSEGV; sig += SIGSEGV - SIGBUS) {
		ASSERT_EQ(0, sigaction(sig, NULL, &before));
		removed = 0;
		ASSERT_EQ(0, tp_open(&tp, &ops, "test"));
		ASSERT_EQ(0, tp_mmap(&tp, 0, 4096, PROT_READ, &addr));
		removed = 1;
		ASSERT_EQ(-ENODEV, tp_get_param(&tp, 0, &param));
		tp_munmap(&tp, addr, 4096);
		tp_close(&tp);
		ASSERT_EQ(0, sigaction(sig, NULL, &after));
		ASSERT_EQ(before.sa_handler, after.sa_handler);
	}
}

TEST_HARNESS_MAIN
