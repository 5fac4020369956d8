// SPDX-License-Identifier: GPL-2.0-only
/*
 * The udev rule installed with the module (udev/60-vaccel.rules), run by
 * the real udev: the VM rig copies the host's udevadm and the rule into
 * the initramfs (as /usr/bin/udevadm and /usr/lib/udev/rules.d/), and each
 * test starts udevadm as systemd-udevd. A device created while it runs
 * gets a node owned by root:render with mode 0660, as do existing ones
 * when triggered; then a member of the render group can use the device
 * and a user outside it cannot. The other vaccel tests apply the same
 * ownership themselves (vaccel_node_render()); this test is what ties
 * that to the rule.
 *
 * Skips (exit code 4) when udevadm or the rule is not in the VM.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <signal.h>

#include "vaccel_unpriv.h"
#include "kselftest_harness.h"

#define ID		VACCEL_TEST_ID
#define UDEVADM		"/usr/bin/udevadm"
#define RULE		"/usr/lib/udev/rules.d/60-vaccel.rules"
#define CONTROL		"/run/udev/control"

FIXTURE(udev) {
	pid_t udevd;
	struct vaccel_user user;
	struct vaccel_counts counts;
};

/* Run udevadm with @args (NULL-terminated); its exit status or -1. */
static int udevadm(const char *const *args)
{
	const char *argv[16] = { "udevadm" };
	pid_t pid;
	int i;

	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execv(UDEVADM, (char *const *)argv);
		_exit(127);
	}
	return vaccel_wait_child(pid);
}

FIXTURE_SETUP(udev)
{
	static const char *const ping[] = { "control", "--ping", "--timeout=60", NULL };
	uint64_t end;

	self->udevd = -1;
	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	if (geteuid() != 0)
		SKIP(return, "needs root to run udevd");
	if (access(UDEVADM, X_OK) || access(RULE, R_OK))
		SKIP(return, "no " UDEVADM " or " RULE " in this system");
	if (vaccel_user_get(&self->user))
		SKIP(return, "no user '" VACCEL_TEST_USER "' in group '" VACCEL_RENDER_GROUP "'");
	ASSERT_NE(0, access(CONTROL, F_OK)) TH_LOG("a udevd is running already");
	vaccel_del_device(ID);
	vaccel_counts_read(&self->counts);

	self->udevd = fork();
	ASSERT_LE(0, self->udevd);
	if (self->udevd == 0) {
		int null = open("/dev/null", O_WRONLY);

		/* its notices would break the KTAP output */
		dup2(null, 1);
		dup2(null, 2);
		/* udevadm is systemd-udevd when called by that name */
		execl(UDEVADM, "systemd-udevd", (char *)NULL);
		_exit(127);
	}
	end = vaccel_now_ms() + 20000;
	while (access(CONTROL, F_OK) && vaccel_now_ms() < end)
		vaccel_msleep(20);
	ASSERT_EQ(0, access(CONTROL, F_OK)) TH_LOG("udevd did not start");
	/* answered from its main loop: the uevent socket is open too */
	ASSERT_EQ(0, udevadm(ping)) TH_LOG("udevd does not answer");
}

FIXTURE_TEARDOWN(udev)
{
	if (self->udevd > 0) {
		kill(self->udevd, SIGTERM);
		EXPECT_EQ(0, vaccel_wait_child(self->udevd));
		unlink(CONTROL);
	}
	vaccel_del_device(ID);
	EXPECT_COUNTS_BACK(&self->counts, 2000);
}

static int settle(void)
{
	static const char *const args[] = { "settle", "--timeout=60", NULL };

	return udevadm(args);
}

/*
 * Wait until udevd has handled the node's event: "udevadm settle" alone
 * can return before udevd has even read an event the kernel has just sent.
 */
static void wait_render_node(const char *path, gid_t render)
{
	uint64_t end = vaccel_now_ms() + 60000;
	struct stat st;

	while (vaccel_now_ms() < end) {
		settle();
		if (!stat(path, &st) && st.st_gid == render &&
		    (st.st_mode & 07777) == 0660)
			return;
		vaccel_msleep(50);
	}
}

static void expect_render_node(struct __test_metadata *_metadata,
			       const char *path, gid_t render)
{
	struct stat st;

	wait_render_node(path, render);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0, st.st_uid);
	EXPECT_EQ(render, st.st_gid);
	EXPECT_EQ(0660, st.st_mode & 07777);
	EXPECT_TRUE(S_ISCHR(st.st_mode));
}

/* A device created while udevd runs gets the rule's node. */
TEST_F_TIMEOUT(udev, new_device_node, 120)
{
	char path[300];
	struct stat st;
	pid_t pid;

	ASSERT_EQ(0, vaccel_new_device("900 memory=64M"));
	ASSERT_EQ(0, vaccel_node_path(ID, path, sizeof(path)));
	expect_render_node(_metadata, path, self->user.render);

	/* a member of render uses it; without the group it is refused */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		CHILD_ASSERT(setgroups(0, NULL) == 0);
		CHILD_ASSERT(setresgid(self->user.gid, self->user.gid, self->user.gid) == 0);
		CHILD_ASSERT(setresuid(self->user.uid, self->user.uid, 0) == 0);
		CHILD_ASSERT(open(path, O_RDWR | O_CLOEXEC) < 0 && errno == EACCES);
		CHILD_ASSERT(setresuid(0, 0, 0) == 0);
		CHILD_EQ(0, vaccel_user_enter(&self->user, 1 << 20));
		fd = open(path, O_RDWR | O_CLOEXEC);
		CHILD_ASSERT(fd >= 0);
		CHILD_EQ(0, vaccel_bo_new(fd, 1 << 20, DRM_VACCEL_BO_PERSISTENT, NULL));
		close(fd);
		_exit(0);
	}
	EXPECT_EQ(0, vaccel_wait_child(pid));

	/* removal takes the node away (devtmpfs does) */
	ASSERT_EQ(0, vaccel_del_device(ID));
	EXPECT_NE(0, stat(path, &st));
}

/*
 * The nodes of the devices made at module load (before udevd ran) get
 * the rule when triggered, as at boot ("udevadm trigger").
 */
TEST_F_TIMEOUT(udev, trigger_existing, 120)
{
	static const char *const args[] = {
		"trigger", "--action=add", "--subsystem-match=accel", NULL,
	};
	struct vaccel_node n;
	char path[300];
	struct stat st;

	if (vaccel_node_path(0, path, sizeof(path)))
		SKIP(return, "no load-time device 0");
	/* remember how it was, to leave the system as found */
	ASSERT_EQ(0, stat(path, &st));
	snprintf(n.path, sizeof(n.path), "%s", path);
	n.uid = st.st_uid;
	n.gid = st.st_gid;
	n.mode = st.st_mode & 07777;
	ASSERT_EQ(0, chown(path, 0, 0));
	ASSERT_EQ(0, chmod(path, 0600));

	ASSERT_EQ(0, udevadm(args));
	expect_render_node(_metadata, path, self->user.render);
	vaccel_node_restore(&n);
}

TEST_HARNESS_MAIN
