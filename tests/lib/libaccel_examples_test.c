// SPDX-License-Identifier: GPL-2.0-only
/*
 * libaccel in the VM: the examples (examples/, built into
 * build/examples/) run and pass. Each example checks its own result and
 * exits 0 only if the check passed; this test runs the binaries and
 * requires exit 0 and their "verified" line. tests/run-all copies
 * build/examples/ into the VM next to this test (/opt/vaccel/bin); a
 * missing example is a failure, not a skip.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <libgen.h>

#include "kselftest_harness.h"
#include "libaccel_test.h"

/* Path of example @name: beside this binary, or in ../examples/ (build tree). */
static int example_path(const char *name, char *path, size_t len)
{
	char self[512], dir[512];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return -errno;
	self[n] = '\0';
	snprintf(dir, sizeof(dir), "%s", dirname(self));
	snprintf(path, len, "%s/%s", dir, name);
	if (access(path, X_OK) == 0)
		return 0;
	snprintf(path, len, "%s/../examples/%s", dir, name);
	return access(path, X_OK) == 0 ? 0 : -ENOENT;
}

/* Run an example with up to two arguments; its exit status, output in @out. */
static int run_example(const char *name, const char *a1, const char *a2, char *out, size_t len)
{
	char path[600];
	size_t total = 0;
	int pfd[2], status;
	ssize_t n;
	pid_t pid;

	out[0] = '\0';
	if (example_path(name, path, sizeof(path))) {
		snprintf(out, len, "%s: not found beside the test or in ../examples", name);
		return -1;
	}
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		execl(path, name, a1, a2, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while (total < len - 1 && (n = read(pfd[0], out + total, len - 1 - total)) > 0)
		total += n;
	out[total] = '\0';
	close(pfd[0]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

FIXTURE(ex) {
	char out[16384];
	struct vaccel_counts counts;
};

FIXTURE_SETUP(ex)
{
	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	lib_counts_read(&self->counts);
}

FIXTURE_TEARDOWN(ex)
{
	if (!lib_present())
		return;
	lib_del_device(LIB_ID_A);
	lib_del_device(LIB_ID_B);
	EXPECT_LIB_COUNTS_BACK(&self->counts, 5000);
}

TEST_F_TIMEOUT(ex, fill_copy_wait, 120)
{
	ASSERT_EQ(0, run_example("fill_copy_wait", NULL, NULL, self->out, sizeof(self->out)))
		TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "verified")) TH_LOG("%s", self->out);
}

TEST_F_TIMEOUT(ex, two_devices, 120)
{
	ASSERT_EQ(0, run_example("two_devices", NULL, NULL, self->out, sizeof(self->out)))
		TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "verified")) TH_LOG("%s", self->out);
}

/* Two fresh devices whose links are throttled: the copy crosses a slow link. */
TEST_F_TIMEOUT(ex, two_devices_throttled_link, 300)
{
	const char *link = "memory=64M link_bw_mbps=400 link_latency_ns=20000";
	char spec[128], ia[16], ib[16];
	int ret;

	snprintf(spec, sizeof(spec), "%u %s", LIB_ID_A, link);
	ASSERT_EQ(0, lib_fresh_device(LIB_ID_A, spec));
	snprintf(spec, sizeof(spec), "%u %s", LIB_ID_B, link);
	ASSERT_EQ(0, lib_fresh_device(LIB_ID_B, spec));
	snprintf(ia, sizeof(ia), "%d", lib_index_of(LIB_ID_A));
	snprintf(ib, sizeof(ib), "%d", lib_index_of(LIB_ID_B));
	if (lib_on_sim()) {
		/* the example is another process: in-process devices of its own, the same settings */
		char env[300];

		snprintf(env, sizeof(env), "%u %s; %u %s", LIB_ID_A, link, LIB_ID_B, link);
		ASSERT_EQ(0, setenv("ACCEL_SIM_DEVICES", env, 1));
		snprintf(ia, sizeof(ia), "0");
		snprintf(ib, sizeof(ib), "1");
	}
	ret = run_example("two_devices", ia, ib, self->out, sizeof(self->out));
	unsetenv("ACCEL_SIM_DEVICES");
	ASSERT_EQ(0, ret) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "400 MB/s")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "verified")) TH_LOG("%s", self->out);
}

/* The exit status means something: no second device, no success. */
TEST_F_TIMEOUT(ex, two_devices_fails_without_a_device, 120)
{
	EXPECT_NE(0, run_example("two_devices", "0", "9999", self->out, sizeof(self->out)))
		TH_LOG("%s", self->out);
	EXPECT_EQ(NULL, strstr(self->out, "verified"));
}

TEST_F_TIMEOUT(ex, replay_exec, 600)
{
	ASSERT_EQ(0, run_example("replay_exec", NULL, NULL, self->out, sizeof(self->out)))
		TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "verified")) TH_LOG("%s", self->out);
}

/* Eager and replayed with new matrices bound: every result against the host. */
TEST_F_TIMEOUT(ex, tiled_matmul, 600)
{
	ASSERT_EQ(0, run_example("tiled_matmul", NULL, NULL, self->out, sizeof(self->out)))
		TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "eager and 4 graph launches verified"))
		TH_LOG("%s", self->out);
	EXPECT_EQ(NULL, strstr(self->out, "wrong")) TH_LOG("%s", self->out);
}

TEST_HARNESS_MAIN
