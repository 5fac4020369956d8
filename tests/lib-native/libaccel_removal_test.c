// SPDX-License-Identifier: MIT
/*
 * The transport's removal handling (lib/transport.c) without a device: a
 * transport over a test backend whose ioctls fail with -ENODEV, and a
 * mapping of a truncated memfd, which raises SIGBUS like a zapped device
 * mapping. A guarded access reports -ENODEV and the mapping is replaced by
 * zero pages; a SIGBUS outside a guard still reaches the handler that was
 * installed before the library's.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <setjmp.h>
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

/* A guarded load, as the library does on device mappings. */
static int guarded_load(struct acc_tp *tp, const volatile uint64_t *p, uint64_t *v)
{
	struct acc_guard g;

	if (sigsetjmp(g.env, 0))
		return tp_guard_fault(tp);
	tp_guard_push(&g);
	*v = *p;
	tp_guard_pop(&g);
	return 0;
}

TEST(guarded_access_after_removal)
{
	struct acc_tp tp;
	uint64_t v, param;
	volatile uint64_t *p;
	void *addr;

	setup_ops();
	removed = 0;
	ASSERT_EQ(0, tp_open(&tp, &ops, "test"));
	ASSERT_EQ(0, tp_get_param(&tp, 0, &param));
	ASSERT_EQ(7, param);
	ASSERT_EQ(0, tp_mmap(&tp, 0, 4096, PROT_READ | PROT_WRITE, &addr));
	p = addr;
	*p = 42;
	ASSERT_EQ(0, guarded_load(&tp, p, &v));
	ASSERT_EQ(42, v);
	/* the "device" goes: its mapping faults, its calls fail */
	removed = 1;
	ASSERT_EQ(0, ftruncate(tp.fd, 0));
	ASSERT_EQ(-ENODEV, guarded_load(&tp, p, &v));
	ASSERT_TRUE(tp_is_gone(&tp));
	/* the mapping is zero pages now: unguarded accesses are safe */
	ASSERT_EQ(0, *p);
	*p = 1;
	ASSERT_EQ(-ENODEV, tp_get_param(&tp, 0, &param));
	ASSERT_EQ(-ENODEV, tp_mmap(&tp, 0, 4096, PROT_READ, &addr));
	/* a guard after another: the jump buffer stack unwound */
	ASSERT_EQ(NULL, acc_guard_top);
	tp_munmap(&tp, (void *)p, 4096);
	tp_close(&tp);
}

TEST(still_present_is_efault)
{
	struct acc_tp tp;
	volatile uint64_t *p;
	uint64_t v;
	void *addr;

	setup_ops();
	removed = 0;
	ASSERT_EQ(0, tp_open(&tp, &ops, "test"));
	ASSERT_EQ(0, tp_mmap(&tp, 0, 4096, PROT_READ, &addr));
	p = addr;
	ASSERT_EQ(0, ftruncate(tp.fd, 0));
	/* the device answers: the fault is reported, not taken for a removal */
	ASSERT_EQ(-EFAULT, guarded_load(&tp, p, &v));
	ASSERT_FALSE(tp_is_gone(&tp));
	tp_close(&tp);
}

static sigjmp_buf mine;
static volatile int my_handler_ran;

static void my_sigbus(int sig)
{
	(void)sig;
	my_handler_ran = 1;
	siglongjmp(mine, 1);
}

TEST(foreign_sigbus_reaches_previous_handler)
{
	struct sigaction sa = { .sa_handler = my_sigbus, .sa_flags = SA_NODEFER };
	volatile uint64_t *p;
	struct acc_tp tp;
	void *addr;
	int fd;

	/* the program's handler first, then the library's (at the first open) */
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGBUS, &sa, NULL));
	setup_ops();
	removed = 0;
	ASSERT_EQ(0, tp_open(&tp, &ops, "test"));
	fd = memfd_create("foreign", MFD_CLOEXEC);
	ASSERT_EQ(0, ftruncate(fd, 4096));
	addr = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, addr);
	ASSERT_EQ(0, ftruncate(fd, 0));
	p = addr;
	if (!sigsetjmp(mine, 1))
		(void)*p;	/* not in a guard: the program's handler runs */
	ASSERT_TRUE(my_handler_ran);
	ASSERT_FALSE(tp_is_gone(&tp));
	munmap(addr, 4096);
	close(fd);
	tp_close(&tp);
}

TEST_HARNESS_MAIN
