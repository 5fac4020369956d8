// SPDX-License-Identifier: MIT
/*
 * libaccel's public API end to end over the in-process device
 * (ACCEL_BACKEND=sim), natively under ASan and UBSan: a program written
 * for the module, run unchanged. Buffers, a queue filling and copying,
 * events and their eventfds; the task graph deriving dependencies across
 * queues; a captured graph launched many times, with and without
 * bindings; two devices sharing a buffer and a signal.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <accel/accel.h>

#include "kselftest_harness.h"

#define SEC	1000000000ll

FIXTURE(api) {
	struct accel_device *dev[2];
};

FIXTURE_SETUP(api)
{
	setenv("ACCEL_BACKEND", "sim", 1);
	setenv("ACCEL_SIM_DEVICES", "0 engines=4 memory=256M; 1 engines=2 memory=256M", 1);
	ASSERT_EQ(2, accel_device_list(NULL, 0, 0));
	ASSERT_EQ(0, accel_device_open(0, &self->dev[0]));
	ASSERT_EQ(0, accel_device_open(1, &self->dev[1]));
	ASSERT_STREQ("sim", accel_device_backend(self->dev[0]));
}

FIXTURE_TEARDOWN(api)
{
	accel_device_close(self->dev[1]);
	accel_device_close(self->dev[0]);
}

/* Fill a buffer, copy it, record an event, wait for it through poll() on its eventfd. */
TEST_F(api, queue_fill_copy_and_event_fd)
{
	struct accel_buffer *a, *b;
	struct accel_queue *q;
	struct accel_event ev;
	struct pollfd pfd;
	uint64_t n = 4 << 20, i, v;
	const uint8_t *host;
	int efd;

	ASSERT_EQ(0, accel_buffer_create(self->dev[0], n, 0, &a));
	ASSERT_EQ(0, accel_buffer_create(self->dev[0], n, ACCEL_BUFFER_HOST, &b));
	ASSERT_EQ(0, accel_queue_create(self->dev[0], NULL, &q));
	accel_prep_fill(accel_queue_get_packet(q), accel_buffer_va(a), n, 0x5a5a5a5a, 4);
	accel_prep_copy(accel_queue_get_packet(q), accel_buffer_va(b), accel_buffer_va(a), n);
	ASSERT_EQ(0, accel_queue_record(q, &ev));
	ASSERT_EQ(0, accel_event_fd(&ev, &efd));
	ASSERT_LE(0, accel_queue_submit(q));
	pfd = (struct pollfd){ .fd = efd, .events = POLLIN };
	ASSERT_EQ(1, poll(&pfd, 1, 30000));
	ASSERT_EQ(sizeof(v), read(efd, &v, sizeof(v)));
	close(efd);
	EXPECT_TRUE(accel_event_done(&ev));
	ASSERT_EQ(0, accel_event_wait(&ev, 10 * SEC));
	host = accel_buffer_host(b);
	for (i = 0; i < n; i++)
		if (host[i] != 0x5a)
			break;
	EXPECT_EQ(n, i);
	ASSERT_EQ(0, accel_queue_sync(q, 10 * SEC));
	EXPECT_EQ(accel_queue_submitted(q), accel_queue_completed(q));
	accel_queue_destroy(q);
	accel_buffer_destroy(b);
	accel_buffer_destroy(a);
}

/* A queue's fault reaches its waits as -EIO with the module's record. */
TEST_F(api, fault_report)
{
	struct accel_queue_fault f = { 0 };
	struct accel_queue *q;
	struct accel_event ev;
	char text[2048];

	ASSERT_EQ(0, accel_queue_create(self->dev[0], NULL, &q));
	accel_prep_copy(accel_queue_get_packet(q), 0x100000000ull, 0x7000000000ull, 64);
	ASSERT_EQ(0, accel_queue_record(q, &ev));
	ASSERT_LE(0, accel_queue_submit(q));
	EXPECT_EQ(-EIO, accel_event_wait(&ev, 10 * SEC));
	ASSERT_EQ(-EIO, accel_queue_status(q, &f, sizeof(f)));
	EXPECT_EQ(DRM_VACCEL_FAULT_UNMAPPED, f.code);
	EXPECT_EQ(0, f.ring_index);
	EXPECT_LT(0, accel_queue_describe(q, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "UNMAPPED"));
	accel_queue_destroy(q);
}

static void vec(struct accel_tensor *t, struct accel_buffer *buf, uint64_t n)
{
	uint64_t shape[1] = { n };

	accel_tensor_init(t, buf, 0, ACCEL_DTYPE_I64, 1, shape);
}

/*
 * The task graph on several queues: z = x + y after both fills, w = z + z
 * after z, x refilled only after z read it (WAR), all found by the library.
 */
TEST_F(api, task_graph_dependencies)
{
	struct accel_buffer *bx, *by, *bz, *bw;
	struct accel_tensor x, y, z, w;
	struct accel_task t;
	struct accel_tg *tg;
	const int64_t *hz, *hw, *hx;
	unsigned int i, n = 1 << 16, round;

	ASSERT_EQ(0, accel_buffer_create(self->dev[0], n * 8ull, ACCEL_BUFFER_HOST, &bx));
	ASSERT_EQ(0, accel_buffer_create(self->dev[0], n * 8ull, 0, &by));
	ASSERT_EQ(0, accel_buffer_create(self->dev[0], n * 8ull, ACCEL_BUFFER_HOST, &bz));
	ASSERT_EQ(0, accel_buffer_create(self->dev[0], n * 8ull, ACCEL_BUFFER_HOST, &bw));
	vec(&x, bx, n);
	vec(&y, by, n);
	vec(&z, bz, n);
	vec(&w, bw, n);
	ASSERT_EQ(0, accel_tg_create(&self->dev[0], 1, NULL, &tg));
	EXPECT_LE(2, accel_tg_num_queues(tg, 0));
	for (round = 1; round <= 20; round++) {
		accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, round);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		accel_task_prep_fill(&t, &y, ACCEL_OUTPUT, 1000);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		accel_task_prep_reduce(&t, &z, ACCEL_OUTPUT, &x, &y, DRM_VACCEL_REDOP_SUM);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		accel_task_prep_reduce(&t, &w, ACCEL_OUTPUT, &z, &z, DRM_VACCEL_REDOP_SUM);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		/* overwrites x: after the reduce that read it */
		accel_task_prep_fill(&t, &x, ACCEL_OUTPUT, 7);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		ASSERT_EQ(0, accel_tg_sync(tg, 30 * SEC));
		hx = accel_buffer_host(bx);
		hz = accel_buffer_host(bz);
		hw = accel_buffer_host(bw);
		for (i = 0; i < n; i += 97) {
			ASSERT_EQ(1000 + (int64_t)round, hz[i]);
			ASSERT_EQ(2 * (1000 + (int64_t)round), hw[i]);
			ASSERT_EQ(7, hx[i]);
		}
	}
	accel_tg_destroy(tg);
	accel_buffer_destroy(bw);
	accel_buffer_destroy(bz);
	accel_buffer_destroy(by);
	accel_buffer_destroy(bx);
}

/* A graph captured once (acc = acc + one), launched 200 times, then on other buffers. */
TEST_F(api, captured_graph_launched_many_times)
{
	struct accel_buffer *acc, *one, *acc2;
	struct accel_tensor a, o;
	struct accel_graph_exec *ge;
	struct accel_binding bind;
	struct accel_graph *g;
	struct accel_task t;
	struct accel_tg *tg;
	const int64_t *h;
	unsigned int i, n = 4096, l;

	ASSERT_EQ(0, accel_buffer_create(self->dev[0], n * 8ull, ACCEL_BUFFER_HOST, &acc));
	ASSERT_EQ(0, accel_buffer_create(self->dev[0], n * 8ull, ACCEL_BUFFER_HOST, &acc2));
	ASSERT_EQ(0, accel_buffer_create(self->dev[0], n * 8ull, 0, &one));
	vec(&a, acc, n);
	vec(&o, one, n);
	ASSERT_EQ(0, accel_tg_create(&self->dev[0], 1, NULL, &tg));
	accel_task_prep_fill(&t, &a, ACCEL_OUTPUT, 0);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	accel_task_prep_fill(&t, &o, ACCEL_OUTPUT, 1);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	vec(&a, acc2, n);
	accel_task_prep_fill(&t, &a, ACCEL_OUTPUT, 1000);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	vec(&a, acc, n);
	ASSERT_EQ(0, accel_tg_capture_begin(tg));
	accel_task_prep_reduce(&t, &a, ACCEL_INOUT, &a, &o, DRM_VACCEL_REDOP_SUM);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_capture_end(tg, &g));
	ASSERT_EQ(0, accel_graph_instantiate(g, &ge));
	for (l = 0; l < 200; l++)
		ASSERT_EQ(0, accel_graph_launch(ge, NULL, 0));
	bind = (struct accel_binding){ .from = acc, .to = acc2 };
	for (l = 0; l < 50; l++)
		ASSERT_EQ(0, accel_graph_launch(ge, &bind, 1));
	ASSERT_EQ(0, accel_tg_sync(tg, 60 * SEC));
	h = accel_buffer_host(acc);
	for (i = 0; i < n; i++)
		ASSERT_EQ(200, h[i]);
	h = accel_buffer_host(acc2);
	for (i = 0; i < n; i++)
		ASSERT_EQ(1050, h[i]);
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);
	accel_tg_destroy(tg);
	accel_buffer_destroy(one);
	accel_buffer_destroy(acc2);
	accel_buffer_destroy(acc);
}

/* Two devices: one's buffer and signal imported into the other. */
TEST_F(api, two_devices_share_a_buffer_and_a_signal)
{
	struct accel_buffer *src, *dst, *imp;
	struct accel_signal *sig, *sig_on_1;
	struct accel_queue *q0, *q1;
	struct accel_event ev;
	uint64_t off, n = 1 << 20, i;
	const uint8_t *h;
	int fd;

	ASSERT_EQ(0, accel_buffer_create(self->dev[0], n, 0, &src));
	ASSERT_EQ(0, accel_buffer_create(self->dev[1], n, ACCEL_BUFFER_HOST, &dst));
	ASSERT_EQ(0, accel_buffer_export(src, 0, &fd));
	ASSERT_EQ(0, accel_buffer_import(self->dev[1], fd, 0, &imp));
	close(fd);
	ASSERT_EQ(0, accel_signal_create(self->dev[0], &sig));
	ASSERT_EQ(0, accel_signal_export(sig, &fd, &off));
	ASSERT_EQ(0, accel_signal_import(self->dev[1], fd, off, &sig_on_1));
	close(fd);
	ASSERT_EQ(0, accel_queue_create(self->dev[0], NULL, &q0));
	ASSERT_EQ(0, accel_queue_create(self->dev[1], NULL, &q1));
	/* device 1 waits for device 0's signal, then copies what device 0 filled */
	accel_prep_wait(accel_queue_get_packet(q1), accel_signal_va(sig_on_1), DRM_VACCEL_WAIT_GE,
			accel_signal_read(sig) + 1, 0, 0);
	accel_prep_copy(accel_queue_get_packet(q1), accel_buffer_va(dst), accel_buffer_va(imp), n);
	ASSERT_EQ(0, accel_queue_record(q1, &ev));
	ASSERT_LE(0, accel_queue_submit(q1));
	usleep(20000);
	EXPECT_FALSE(accel_event_done(&ev));
	accel_prep_fill(accel_queue_get_packet(q0), accel_buffer_va(src), n, 0xc3, 1);
	accel_prep_signal(accel_queue_get_packet(q0), accel_signal_va(sig), DRM_VACCEL_SIGNAL_ADD, 1);
	ASSERT_LE(0, accel_queue_submit(q0));
	ASSERT_EQ(0, accel_event_wait(&ev, 30 * SEC));
	h = accel_buffer_host(dst);
	for (i = 0; i < n && h[i] == 0xc3; i++)
		;
	EXPECT_EQ(n, i);
	accel_queue_destroy(q1);
	accel_queue_destroy(q0);
	accel_signal_destroy(sig_on_1);
	accel_signal_destroy(sig);
	accel_buffer_destroy(imp);
	accel_buffer_destroy(dst);
	accel_buffer_destroy(src);
}

/* ---- two processes: a buffer and signals over a Unix socket ---- */

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * SEC + t.tv_nsec;
}

/* What the parent tells the child, with the buffer's and the signal's memfds. */
struct peer_msg {
	uint64_t size, sig_offset, base;
	uint8_t pattern;
};

/* Send @msg with @nfds descriptors (SCM_RIGHTS); 0 or -errno. */
static int send_fds(int sock, const void *msg, size_t len, const int *fds, unsigned int nfds)
{
	char ctl[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = { (void *)msg, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (nfds) {
		memset(ctl, 0, sizeof(ctl));
		mh.msg_control = ctl;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	return sendmsg(sock, &mh, 0) == (ssize_t)len ? 0 : -errno;
}

/* Receive a message of @len bytes and up to @nfds descriptors; how many came, or -errno. */
static int recv_fds(int sock, void *msg, size_t len, int *fds, unsigned int nfds)
{
	char ctl[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = { msg, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			     .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	unsigned int n = 0;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != (ssize_t)len)
		return -EPROTO;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			n = (unsigned int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			if (n > nfds)
				n = nfds;
			memcpy(fds, CMSG_DATA(c), n * sizeof(int));
		}
	return (int)n;
}

/*
 * The child, a fresh program (exec'ed) with its own in-process device:
 * imports the parent's buffer and signal, makes its queue wait for the
 * signal, copy the buffer and raise the signal; then shares a signal of
 * its own and sleeps until the parent raises that one. Exit 0 on success,
 * else the step that failed.
 */
static int peer_child(int sock)
{
	struct accel_buffer *a = NULL, *b = NULL;
	struct accel_signal *s = NULL, *t = NULL;
	struct accel_device *dev = NULL;
	struct accel_queue *q = NULL;
	struct drm_vaccel_packet *pkt;
	struct accel_event ev;
	struct peer_msg m;
	int fds[2], tfd, ret;
	uint64_t off, i;
	const uint8_t *h;

	if (recv_fds(sock, &m, sizeof(m), fds, 2) != 2)
		return 10;
	if (accel_device_open(0, &dev))
		return 11;
	if (accel_buffer_import(dev, fds[0], 0, &a) || accel_signal_import(dev, fds[1],
									  m.sig_offset, &s))
		return 12;
	close(fds[0]);
	close(fds[1]);
	if (accel_buffer_create(dev, m.size, ACCEL_BUFFER_HOST, &b) ||
	    accel_queue_create(dev, NULL, &q))
		return 13;
	/* the device waits for the parent's store into its own memory */
	accel_prep_wait(accel_queue_get_packet(q), accel_signal_va(s), DRM_VACCEL_WAIT_GE,
			m.base + 1, 0, 0);
	accel_prep_copy(accel_queue_get_packet(q), accel_buffer_va(b), accel_buffer_va(a), m.size);
	pkt = accel_queue_get_packet(q);
	accel_prep_signal(pkt, accel_signal_va(s), DRM_VACCEL_SIGNAL_ADD, 1);
	accel_prep_irq(pkt);	/* host waiters of the signal: the parent's */
	if (accel_queue_record(q, &ev) || accel_queue_submit(q) < 0)
		return 14;
	/* the parent may go on */
	if (send_fds(sock, &m, sizeof(m), NULL, 0))
		return 15;
	ret = accel_event_wait(&ev, 30 * SEC);
	if (ret)
		return 16;
	h = accel_buffer_host(b);
	for (i = 0; i < m.size; i++)
		if (h[i] != m.pattern)
			return 17;
	/* a signal of the child's that the parent writes; a host wait here */
	if (accel_signal_create(dev, &t) || accel_signal_export(t, &tfd, &off))
		return 18;
	m.sig_offset = off;
	m.base = accel_signal_read(t);
	if (send_fds(sock, &m, sizeof(m), &tfd, 1))
		return 19;
	close(tfd);
	ev = (struct accel_event){ .signal = t, .value = m.base + 1 };
	if (accel_event_wait(&ev, 30 * SEC))
		return 20;
	accel_device_close(dev);
	return 0;
}

__attribute__((constructor)) static void peer_child_main(void)
{
	const char *sock = getenv("SIM_API_TEST_PEER");

	if (sock)
		_exit(peer_child(atoi(sock)));
}

/*
 * Export in one process, import in a forked and exec'ed one (its own
 * in-process device): the child's device waits for a signal the parent
 * writes, copies the parent's buffer and raises the signal, which the
 * parent's host wait sees; then the parent raises a signal of the child's,
 * which the child's host wait sees.
 */
TEST_F(api, another_process_shares_buffers_and_signals)
{
	struct accel_signal *s, *t;
	struct accel_buffer *a;
	struct accel_event ev;
	struct peer_msg m = { .size = 1 << 20, .pattern = 0x6b };
	int sv[2], fds[2], tfd, status;
	char env[32];
	int64_t t0;
	pid_t pid;

	ASSERT_EQ(0, accel_buffer_create(self->dev[0], m.size, ACCEL_BUFFER_HOST, &a));
	memset(accel_buffer_host(a), m.pattern, m.size);
	ASSERT_EQ(0, accel_signal_create(self->dev[0], &s));
	m.base = accel_signal_read(s);
	ASSERT_EQ(0, accel_buffer_export(a, 0, &fds[0]));
	ASSERT_EQ(0, accel_signal_export(s, &fds[1], &m.sig_offset));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* a new program image: a process of its own, not a copy of this one */
		fcntl(sv[1], F_SETFD, 0);
		snprintf(env, sizeof(env), "%d", sv[1]);
		setenv("SIM_API_TEST_PEER", env, 1);
		setenv("ACCEL_SIM_DEVICES", "0 engines=2", 1);
		execl("/proc/self/exe", "libaccel_sim_api_test", (char *)NULL);
		_exit(99);
	}
	close(sv[1]);
	ASSERT_EQ(0, send_fds(sv[0], &m, sizeof(m), fds, 2));
	close(fds[0]);
	close(fds[1]);
	/* the child's queue is set up and waiting */
	ASSERT_EQ(0, recv_fds(sv[0], &m, sizeof(m), NULL, 0));
	t0 = now_ns();
	ASSERT_EQ(0, accel_signal_write(s, DRM_VACCEL_SIGNAL_ADD, 1));
	/* the child's device raises our signal after its copy */
	ev = (struct accel_event){ .signal = s, .value = m.base + 2 };
	EXPECT_EQ(0, accel_event_wait(&ev, 30 * SEC));
	TH_LOG("our write, the child's WAIT, its copy of 1 MiB (first touch of its pages "
	       "included) and its signal, back here: %.3f ms", (now_ns() - t0) / 1e6);
	/* a signal of the child's, raised here, seen there */
	ASSERT_EQ(1, recv_fds(sv[0], &m, sizeof(m), &tfd, 1));
	ASSERT_EQ(0, accel_signal_import(self->dev[0], tfd, m.sig_offset, &t));
	close(tfd);
	EXPECT_EQ(m.base, accel_signal_read(t));
	ASSERT_EQ(0, accel_signal_write(t, DRM_VACCEL_SIGNAL_ADD, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(sv[0]);
	accel_signal_destroy(t);
	accel_signal_destroy(s);
	accel_buffer_destroy(a);
}

TEST_HARNESS_MAIN
