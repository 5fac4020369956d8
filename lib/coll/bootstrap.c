// SPDX-License-Identifier: MIT
/*
 * Bootstrap of multi-process communicators: accel_comm_get_unique_id(),
 * the rendezvous of accel_comm_init_rank() on an abstract Unix socket
 * (rank 0 hosts it), the check of every rank's hello (magic, protocol,
 * nonce, rank, library version, every setting that changes the
 * protocol), the shared group state (a memfd rank 0 creates), the
 * exchange of every rank's staging buffer and counters as dma-buf fds
 * (SCM_RIGHTS, relayed by rank 0), and accel_comm_init_abort().
 *
 * Sockets are SOCK_SEQPACKET (one message per hello, verdict or export,
 * with its fds), non-blocking; every wait is a poll() bounded by the
 * deadline (the communicator's timeout) and woken by the abort eventfd;
 * EINTR restarts the call with the time left.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "coll.h"

#define BS_ID_MAGIC	0x41434944u	/* "ACID" */
#define BS_MAGIC	0x41434d42u	/* "ACMB" */
#define BS_PROTO	1u
#define BS_PENDING_MAX	64		/* connections that have not said hello yet */
#define BS_VERDICT_GRACE_NS	500000000ll

enum bs_type { BS_HELLO = 1, BS_VERDICT, BS_EXPORT, BS_STATUS, BS_DONE };

/* The inside of a struct accel_comm_id. */
struct bs_id {
	uint32_t magic;
	uint32_t proto;
	uint8_t nonce[32];
	char name[64];		/* abstract socket name, NUL-terminated */
};

_Static_assert(sizeof(struct bs_id) <= sizeof(struct accel_comm_id), "id too large");
_Static_assert(offsetof(struct acc_group, lock) == ACC_GROUP_LOCAL_BYTES,
	       "the shared part of a group starts after its local page");

/* A rank's hello: who it is and every setting that must agree. */
struct bs_hello {
	uint32_t magic, type;
	uint32_t proto;
	uint8_t nonce[32];
	uint32_t nranks, rank;
	int32_t pid;
	uint32_t version;	/* major << 16 | minor << 8 | patch */
	char backend[16];
	uint32_t group_bytes;	/* layout of the shared state */
	uint32_t channels, window;
	uint32_t algo, slots;
	uint64_t timeout_ns, chunk, oneshot_max, seq0;
};

static const struct {
	const char *name;
	size_t off, len;
} bs_settings[] = {
	{ "protocol version", offsetof(struct bs_hello, proto), 4 },
	{ "number of ranks", offsetof(struct bs_hello, nranks), 4 },
	{ "library version", offsetof(struct bs_hello, version), 4 },
	{ "backend", offsetof(struct bs_hello, backend), 16 },
	{ "shared state layout (bytes)", offsetof(struct bs_hello, group_bytes), 4 },
	{ "channels per pair", offsetof(struct bs_hello, channels), 4 },
	{ "call window", offsetof(struct bs_hello, window), 4 },
	{ "algorithm (params.algo, ACCEL_ALGO)", offsetof(struct bs_hello, algo), 4 },
	{ "slots (params.slots)", offsetof(struct bs_hello, slots), 4 },
	{ "timeout in ns (params.timeout_ms, ACCEL_COMM_TIMEOUT_MS)",
	  offsetof(struct bs_hello, timeout_ns), 8 },
	{ "chunk bytes (params.chunk_bytes)", offsetof(struct bs_hello, chunk), 8 },
	{ "one-shot threshold (params.oneshot_max)", offsetof(struct bs_hello, oneshot_max), 8 },
	{ "first sequence number (test hook)", offsetof(struct bs_hello, seq0), 8 },
};

/* Rank 0's answer to a hello: 0 and every rank's pid (and the shared memfd), or why not. */
struct bs_verdict {
	uint32_t magic, type;
	int32_t status;
	uint32_t nranks;
	int32_t pids[ACCEL_COMM_MAX_RANKS];
	char why[320];
};

/* One rank's exports (struct acc_export's offsets and bases; the fds ride along). */
struct bs_export {
	uint32_t magic, type;
	uint32_t from, n;
	uint64_t off[ACC_EXPORT_MAX];
	uint64_t base[ACC_EXPORT_MAX];
};

/* A rank's result of its imports (BS_STATUS), and rank 0's final word (BS_DONE). */
struct bs_status {
	uint32_t magic, type;
	int32_t status;
	uint32_t rank;
	char why[320];
};

/* An init_rank() in progress, for accel_comm_init_abort(). */
struct bs_pending {
	struct bs_pending *next;
	struct bs_id id;
	int efd;
};

static pthread_mutex_t bs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bs_pending *bs_inits;

/* What every wait of one init_rank() shares. */
struct bs_ctx {
	const struct bs_id *id;
	unsigned int rank, nranks;
	int64_t deadline;
	int efd;		/* abort eventfd */
};

/* --- ids --- */

static int fill_random(void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = getrandom((char *)buf + got, len - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	return 0;
}

/* Test hook (hidden): the next accel_comm_get_unique_id() of this process fails with it. */
int acc_comm_test_id_error;

ACCEL_API int accel_comm_get_unique_id(struct accel_comm_id *id)
{
	struct bs_id b;
	uint8_t r[16];
	unsigned int i;
	int ret;

	if (!id)
		return -EINVAL;
	memset(&b, 0, sizeof(b));
	b.magic = BS_ID_MAGIC;
	b.proto = BS_PROTO;
	ret = acc_comm_test_id_error ? acc_comm_test_id_error : fill_random(b.nonce, sizeof(b.nonce));
	acc_comm_test_id_error = 0;
	if (!ret)
		ret = fill_random(r, sizeof(r));
	if (ret) {
		acc_err("comm_get_unique_id: getrandom: %s", strerror(-ret));
		return ret;
	}
	i = (unsigned int)snprintf(b.name, sizeof(b.name), "accel-comm-");
	for (unsigned int k = 0; k < sizeof(r); k++)
		i += (unsigned int)snprintf(b.name + i, sizeof(b.name) - i, "%02x", r[k]);
	memset(id, 0, sizeof(*id));
	memcpy(id->internal, &b, sizeof(b));
	return 0;
}

static int id_read(const struct accel_comm_id *id, struct bs_id *b)
{
	memcpy(b, id->internal, sizeof(*b));
	if (b->magic != BS_ID_MAGIC || b->proto != BS_PROTO || !memchr(b->name, 0, sizeof(b->name)) ||
	    !b->name[0])
		return -EINVAL;
	return 0;
}

static socklen_t id_addr(const struct bs_id *b, struct sockaddr_un *a)
{
	size_t len = strlen(b->name);

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	memcpy(a->sun_path + 1, b->name, len);	/* abstract: sun_path[0] is 0 */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
}

/* --- accel_comm_init_abort() --- */

static int pending_add(struct bs_pending *p)
{
	p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->efd < 0)
		return -errno;
	pthread_mutex_lock(&bs_lock);
	p->next = bs_inits;
	bs_inits = p;
	pthread_mutex_unlock(&bs_lock);
	return 0;
}

static void pending_del(struct bs_pending *p)
{
	struct bs_pending **pp;

	pthread_mutex_lock(&bs_lock);
	for (pp = &bs_inits; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	pthread_mutex_unlock(&bs_lock);
	close(p->efd);
}

ACCEL_API int accel_comm_init_abort(const struct accel_comm_id *id)
{
	struct bs_pending *p;
	struct bs_id b;
	uint64_t one = 1;
	int n = 0;

	if (!id || id_read(id, &b))
		return -EINVAL;
	pthread_mutex_lock(&bs_lock);
	for (p = bs_inits; p; p = p->next)
		if (!memcmp(&p->id, &b, sizeof(b))) {
			if (write(p->efd, &one, sizeof(one)) == (ssize_t)sizeof(one))
				n++;
		}
	pthread_mutex_unlock(&bs_lock);
	if (n)
		acc_info("comm_init_abort: %s: %d init_rank() call(s) stopped", b.name, n);
	return n ? 0 : -ENOENT;
}

/* --- bounded, EINTR-safe socket calls --- */

/* Was accel_comm_init_abort() called (the eventfd is consumed)? */
static bool aborted(const struct bs_ctx *bx)
{
	uint64_t v;

	return read(bx->efd, &v, sizeof(v)) == (ssize_t)sizeof(v);
}

/*
 * Wait for @events on @fd (or for the deadline, or an abort); 0 when
 * ready, -ETIMEDOUT, -ECANCELED.
 */
static int bs_wait(struct bs_ctx *bx, int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd pf[2] = {
			{ .fd = fd, .events = events }, { .fd = bx->efd, .events = POLLIN },
		};
		int64_t left = deadline - acc_now_ns();
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(pf, 2, (int)((left + 999999) / 1000000));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (pf[1].revents) {
			uint64_t v;

			if (read(bx->efd, &v, sizeof(v)) == (ssize_t)sizeof(v))
				return -ECANCELED;
		}
		if (pf[0].revents)
			return 0;
	}
}

static int bs_send(struct bs_ctx *bx, int fd, const void *buf, size_t len, const int *fds,
		   unsigned int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * ACC_EXPORT_MAX)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	int ret;

	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		m.msg_control = ctl.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	for (;;) {
		ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n == (ssize_t)len)
			return 0;
		if (n >= 0)
			return -EPROTO;	/* SEQPACKET: all or nothing */
		if (errno == EINTR)
			continue;
		if (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN)
			return -ECONNRESET;
		if (errno == ETOOMANYREFS) {
			/* too many fds in flight for this user: the receivers drain them */
			struct timespec ts = { 0, 1000000 };

			if (acc_now_ns() >= bx->deadline)
				return -ETIMEDOUT;
			nanosleep(&ts, NULL);
			continue;
		}
		if (errno != EAGAIN)
			return -errno;
		ret = bs_wait(bx, fd, POLLOUT, bx->deadline);
		if (ret)
			return ret;
	}
}

/*
 * Receive one message of at most @len bytes (the length, or -errno;
 * -ECONNRESET when the peer closed) with up to @maxfds fds (*@nfds; any
 * beyond are closed; none when @fds is NULL), waiting until @deadline.
 */
static ssize_t bs_recv(struct bs_ctx *bx, int fd, void *buf, size_t len, int *fds,
		       unsigned int maxfds, unsigned int *nfds, int64_t deadline)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * ACC_EXPORT_MAX)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr m;
	struct cmsghdr *cm;
	unsigned int got = 0;
	bool reset = false;
	ssize_t n;
	int ret;

	for (;;) {
		memset(&m, 0, sizeof(m));
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_control = ctl.buf;
		m.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n >= 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == ECONNRESET && !reset) {
			/*
			 * The peer closed with messages of ours unread: the
			 * reset is reported first, then what it sent before
			 * (its last word: a status, a verdict) is still queued.
			 */
			reset = true;
			continue;
		}
		if (errno == ECONNRESET || errno == ENOTCONN)
			return -ECONNRESET;
		if (errno != EAGAIN)
			return -errno;
		ret = bs_wait(bx, fd, POLLIN, deadline);
		if (ret)
			return ret;
	}
	for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		unsigned int k, cnt;
		int f;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (unsigned int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (k = 0; k < cnt; k++) {
			memcpy(&f, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
			if (fds && got < maxfds)
				fds[got++] = f;
			else
				close(f);
		}
	}
	if (nfds)
		*nfds = got;
	if (m.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) {
		while (got)
			close(fds[--got]);
		if (nfds)
			*nfds = 0;
		return -EPROTO;
	}
	if (n == 0)
		return -ECONNRESET;
	return n;
}

/* --- hellos --- */

static void hello_fill(struct bs_hello *h, const struct bs_id *id, unsigned int nranks,
		       unsigned int rank, const struct acc_group *set, struct accel_device *dev)
{
	const char *be = accel_device_backend(dev);

	memset(h, 0, sizeof(*h));
	h->magic = BS_MAGIC;
	h->type = BS_HELLO;
	h->proto = BS_PROTO;
	memcpy(h->nonce, id->nonce, sizeof(h->nonce));
	h->nranks = nranks;
	h->rank = rank;
	h->pid = (int32_t)getpid();
	h->version = ACCEL_VERSION_MAJOR << 16 | ACCEL_VERSION_MINOR << 8 | ACCEL_VERSION_PATCH;
	snprintf(h->backend, sizeof(h->backend), "%s", be ? be : "?");
	/* the struct and the extension of xproc.c: the whole memfd layout */
	h->group_bytes = (uint32_t)(sizeof(struct acc_group) + acc_xp_bytes(nranks));
	h->channels = ACC_COMM_CHANNELS;
	h->window = ACC_COMM_WINDOW;
	h->algo = set->algo;
	h->slots = set->slots;
	h->timeout_ns = set->timeout_ns;
	h->chunk = set->chunk;
	h->oneshot_max = set->oneshot_max;
	h->seq0 = set->seq0;
}

static void setting_value(const struct bs_hello *h, unsigned int i, char *buf, size_t len)
{
	const char *p = (const char *)h + bs_settings[i].off;
	uint64_t v64;
	uint32_t v32;

	if (bs_settings[i].len == 16) {
		snprintf(buf, len, "\"%.16s\"", p);
	} else if (bs_settings[i].len == 8) {
		memcpy(&v64, p, 8);
		snprintf(buf, len, "%llu", (unsigned long long)v64);
	} else {
		memcpy(&v32, p, 4);
		if (bs_settings[i].off == offsetof(struct bs_hello, version))
			snprintf(buf, len, "%u.%u.%u", v32 >> 16, (v32 >> 8) & 0xff, v32 & 0xff);
		else
			snprintf(buf, len, "%u", v32);
	}
}

/* The first setting in which @h differs from rank 0's @mine, described in @why; false if none. */
static bool hello_differs(const struct bs_hello *mine, const struct bs_hello *h, char *why,
			  size_t len)
{
	char a[48], b[48];
	unsigned int i;

	for (i = 0; i < sizeof(bs_settings) / sizeof(bs_settings[0]); i++) {
		if (!memcmp((const char *)mine + bs_settings[i].off,
			    (const char *)h + bs_settings[i].off, bs_settings[i].len))
			continue;
		setting_value(mine, i, a, sizeof(a));
		setting_value(h, i, b, sizeof(b));
		snprintf(why, len, "the %s differs: rank 0 (pid %d) has %s, rank %u (pid %d) has %s",
			 bs_settings[i].name, (int)mine->pid, a, h->rank, (int)h->pid, b);
		return true;
	}
	return false;
}

static void ranks_list(const int *conn, unsigned int nranks, char *buf, size_t len)
{
	size_t at = 0;
	unsigned int r;

	buf[0] = 0;
	for (r = 1; r < nranks && at < len; r++)
		if (conn[r] < 0)
			at += (size_t)snprintf(buf + at, len - at, "%s%u", at ? "," : "", r);
}

static void verdict_send(struct bs_ctx *bx, int fd, int status, const char *why,
			 const int32_t *pids, int memfd)
{
	struct bs_verdict v;

	memset(&v, 0, sizeof(v));
	v.magic = BS_MAGIC;
	v.type = BS_VERDICT;
	v.status = status;
	v.nranks = bx->nranks;
	if (pids)
		memcpy(v.pids, pids, sizeof(v.pids));
	snprintf(v.why, sizeof(v.why), "%s", why ? why : "");
	/* best effort for failures: the rank learns it, or times out itself */
	bs_send(bx, fd, &v, sizeof(v), memfd >= 0 ? &memfd : NULL, memfd >= 0 ? 1 : 0);
}

/*
 * Rank 0: listen on the id's name until every rank said a good hello;
 * conn[r] and pids[r] of each. Returns 0, or -errno with every joined
 * rank told why (and their connections closed).
 */
static int host_rendezvous(struct bs_ctx *bx, const struct bs_hello *mine, int *conn,
			   int32_t *pids)
{
	struct pollfd pf[2 + BS_PENDING_MAX + ACCEL_COMM_MAX_RANKS];
	int pend[BS_PENDING_MAX], lfd, ret = 0;
	unsigned int npend = 0, joined = 1, i, r, npf;
	char why[320] = "", miss[ACCEL_COMM_MAX_RANKS * 3 + 1];
	bool mismatch = false;
	struct sockaddr_un a;
	socklen_t alen = id_addr(bx->id, &a);

	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		ret = -errno;
		acc_err("comm_init_rank: rank 0 (pid %d), @%s: socket: %s", (int)getpid(),
			bx->id->name, strerror(-ret));
		return ret;
	}
	if (bind(lfd, (struct sockaddr *)&a, alen) || listen(lfd, 128)) {
		ret = -errno;
		close(lfd);
		if (ret == -EADDRINUSE)
			acc_err("comm_init_rank: rank 0 (pid %d): the id's name @%s is in use: "
				"another communicator with this id is initializing (an id serves "
				"one communicator at a time)", (int)getpid(), bx->id->name);
		else
			acc_err("comm_init_rank: rank 0: bind/listen @%s: %s", bx->id->name,
				strerror(-ret));
		return ret;
	}
	while (joined < bx->nranks) {
		int64_t left = bx->deadline - acc_now_ns();
		int n;

		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		npf = 0;
		pf[npf++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		pf[npf++] = (struct pollfd){ .fd = bx->efd, .events = POLLIN };
		for (i = 0; i < npend; i++)
			pf[npf++] = (struct pollfd){ .fd = pend[i], .events = POLLIN };
		for (r = 1; r < bx->nranks; r++)
			pf[npf++] = (struct pollfd){ .fd = conn[r], .events = POLLIN };
		n = poll(pf, npf, (int)((left + 999999) / 1000000));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (pf[1].revents && aborted(bx)) {
			ret = -ECANCELED;
			snprintf(why, sizeof(why), "rank 0 (pid %d) was stopped by "
				 "accel_comm_init_abort()", (int)getpid());
			break;
		}
		/* a joined rank that hangs up or talks out of turn has left */
		for (r = 1, i = 2 + npend; r < bx->nranks; r++) {
			if (conn[r] < 0)
				continue;
			if (pf[i++].revents) {
				ret = -ECONNABORTED;
				snprintf(why, sizeof(why), "rank %u (pid %d) left during the "
					 "rendezvous", r, (int)pids[r]);
				close(conn[r]);
				conn[r] = -1;
				break;
			}
		}
		if (ret)
			break;
		/* hellos, from the newest pending connection down (removal keeps indices) */
		for (i = npend; i-- > 0;) {
			struct bs_hello h;
			ssize_t len;
			int fd = pend[i];

			if (!pf[2 + i].revents)
				continue;
			len = bs_recv(bx, fd, &h, sizeof(h), NULL, 0, NULL, 0);
			if (len == -ETIMEDOUT)
				continue;	/* nothing yet after all */
			memmove(&pend[i], &pend[i + 1], (npend - i - 1) * sizeof(pend[0]));
			npend--;	/* oldest first stays true */
			if (len < 0) {
				acc_warn("comm_init_rank: rank 0: @%s: a connection closed "
					 "before its hello (%s); still waiting for the ranks",
					 bx->id->name, strerror((int)-len));
				close(fd);
				continue;
			}
			if (len != (ssize_t)sizeof(h) || h.magic != BS_MAGIC || h.type != BS_HELLO) {
				acc_warn("comm_init_rank: rank 0: @%s: a foreign connection (%zd "
					 "bytes, magic %#x) dropped; still waiting for the ranks",
					 bx->id->name, len, len >= 4 ? h.magic : 0);
				close(fd);
				continue;
			}
			if (memcmp(h.nonce, bx->id->nonce, sizeof(h.nonce))) {
				acc_warn("comm_init_rank: rank 0: @%s: a hello with a wrong nonce "
					 "(rank %u, pid %d) dropped: not this job's id",
					 bx->id->name, h.rank, (int)h.pid);
				close(fd);
				continue;
			}
			if (h.rank == 0 || h.rank >= bx->nranks) {
				char w[160];

				snprintf(w, sizeof(w), "rank %u (pid %d) is not a rank 1 to %u of this "
					 "communicator", h.rank, (int)h.pid, bx->nranks - 1);
				acc_err("comm_init_rank: rank 0: %s", w);
				verdict_send(bx, fd, h.rank ? -EPROTO : -EEXIST, w, NULL, -1);
				close(fd);
				continue;
			}
			if (conn[h.rank] >= 0) {
				char w[160];

				snprintf(w, sizeof(w), "rank %u joined twice: pid %d first, then pid "
					 "%d (rejected)", h.rank, (int)pids[h.rank], (int)h.pid);
				acc_err("comm_init_rank: rank 0: %s", w);
				verdict_send(bx, fd, -EEXIST, w, NULL, -1);
				close(fd);
				continue;
			}
			conn[h.rank] = fd;
			pids[h.rank] = h.pid;
			joined++;
			if (!mismatch && hello_differs(mine, &h, why, sizeof(why)))
				mismatch = true;
		}
		if (pf[0].revents) {
			for (;;) {
				int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

				if (fd < 0) {
					if (errno == EINTR)
						continue;
					if (errno == EAGAIN || errno == EWOULDBLOCK ||
					    errno == ECONNABORTED)
						break;
					/*
					 * out of fds or memory: the connection stays
					 * queued and the socket readable, so waiting on
					 * would spin to the deadline and then blame
					 * the ranks
					 */
					ret = -errno;
					snprintf(why, sizeof(why), "rank 0 (pid %d) cannot accept "
						 "a rank's connection", (int)getpid());
					break;
				}
				if (npend == BS_PENDING_MAX) {
					/* the oldest silent one goes: silence cannot crowd out ranks */
					acc_warn("comm_init_rank: rank 0: @%s: %u connections have "
						 "not said hello: the oldest dropped", bx->id->name,
						 npend);
					close(pend[0]);
					memmove(pend, pend + 1, (npend - 1) * sizeof(pend[0]));
					npend--;
				}
				pend[npend++] = fd;
			}
			if (ret)
				break;
		}
	}
	close(lfd);	/* the name is free again */
	while (npend)
		close(pend[--npend]);
	if (!ret && mismatch)
		ret = -EPROTO;
	if (ret == -ETIMEDOUT) {
		ranks_list(conn, bx->nranks, miss, sizeof(miss));
		snprintf(why, sizeof(why), "rank(s) %s did not join in time", miss);
	}
	if (ret) {
		acc_err("comm_init_rank: rank 0 (pid %d), @%s: %s: %s", (int)getpid(),
			bx->id->name, why, strerror(-ret));
		for (r = 1; r < bx->nranks; r++) {
			if (conn[r] < 0)
				continue;
			verdict_send(bx, conn[r], ret == -ECANCELED ? -ECONNABORTED : ret, why, NULL,
				     -1);
			close(conn[r]);
			conn[r] = -1;
		}
	}
	return ret;
}

/* Ranks 1 and up: connect (rank 0 may not listen yet), say hello, hear the verdict. */
static int peer_rendezvous(struct bs_ctx *bx, const struct bs_hello *mine, int *conn0,
			   struct bs_verdict *v, int *memfd)
{
	struct sockaddr_un a;
	socklen_t alen = id_addr(bx->id, &a);
	unsigned int nfds = 0;
	bool connected = false;
	ssize_t len;
	int fd = -1, ret;

	*memfd = -1;
	while (!connected) {
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			ret = -errno;
			acc_err("comm_init_rank: rank %u (pid %d), @%s: socket: %s", bx->rank,
				(int)getpid(), bx->id->name, strerror(-ret));
			return ret;
		}
		do
			ret = connect(fd, (struct sockaddr *)&a, alen) ? -errno : 0;
		while (ret == -EINTR);
		if (!ret) {
			connected = true;
			break;
		}
		close(fd);
		fd = -1;
		if (ret != -ECONNREFUSED && ret != -ENOENT && ret != -EAGAIN) {
			acc_err("comm_init_rank: rank %u (pid %d), @%s: connect to rank 0: %s",
				bx->rank, (int)getpid(), bx->id->name, strerror(-ret));
			return ret;
		}
		/* rank 0 is not listening yet: retry every 10 ms until the deadline */
		ret = bs_wait(bx, bx->efd, POLLIN, acc_now_ns() + 10000000 < bx->deadline ?
				acc_now_ns() + 10000000 : bx->deadline);
		if (ret == 0 && aborted(bx))
			ret = -ECANCELED;
		if (ret == -ETIMEDOUT && acc_now_ns() < bx->deadline)
			continue;
		if (ret == -ETIMEDOUT) {
			acc_err("comm_init_rank: rank %u (pid %d), @%s: rank 0 (the rendezvous "
				"host) did not join in time (-ETIMEDOUT)", bx->rank, (int)getpid(),
				bx->id->name);
			return -ETIMEDOUT;
		}
		if (ret == -ECANCELED) {
			acc_err("comm_init_rank: rank %u (pid %d), @%s: stopped by "
				"accel_comm_init_abort() while rank 0 was not listening yet",
				bx->rank, (int)getpid(), bx->id->name);
			return ret;
		}
		if (ret) {
			acc_err("comm_init_rank: rank %u (pid %d), @%s: waiting to connect: %s",
				bx->rank, (int)getpid(), bx->id->name, strerror(-ret));
			return ret;
		}
	}
	ret = bs_send(bx, fd, mine, sizeof(*mine), NULL, 0);
	if (ret == -ECONNRESET)
		ret = -ECONNABORTED;	/* rank 0 closed it: as below */
	if (!ret) {
		/* rank 0 names the missing ranks at its deadline: give it a moment past ours */
		len = bs_recv(bx, fd, v, sizeof(*v), memfd, 1, &nfds,
			      bx->deadline + BS_VERDICT_GRACE_NS);
		if (len == (ssize_t)sizeof(*v) && v->magic == BS_MAGIC && v->type == BS_VERDICT)
			ret = 0;
		else if (len == -ETIMEDOUT || len == -ECANCELED)
			ret = (int)len;
		else if (len < 0 && len != -ECONNRESET)
			ret = (int)len;
		else
			ret = -ECONNABORTED;
	}
	if (!nfds)
		*memfd = -1;
	if (ret == -ETIMEDOUT)
		acc_err("comm_init_rank: rank %u (pid %d), @%s: rank 0 did not answer in time: "
			"other ranks did not join (-ETIMEDOUT)", bx->rank, (int)getpid(),
			bx->id->name);
	else if (ret == -ECONNABORTED)
		acc_err("comm_init_rank: rank %u (pid %d), @%s: rank 0 closed the rendezvous "
			"(it died or was stopped): -ECONNABORTED", bx->rank, (int)getpid(),
			bx->id->name);
	else if (ret)
		acc_err("comm_init_rank: rank %u (pid %d), @%s: %s rank 0: %s", bx->rank,
			(int)getpid(), bx->id->name, ret == -ECANCELED ?
			"stopped by accel_comm_init_abort() while waiting for" :
			"the hello to or the verdict of", strerror(-ret));
	if (!ret && v->status) {
		ret = v->status;
		acc_err("comm_init_rank: rank %u (pid %d), @%s: rank 0 says: %s: %s", bx->rank,
			(int)getpid(), bx->id->name, v->why, strerror(-ret));
	}
	if (ret) {
		if (*memfd >= 0)
			close(*memfd);
		*memfd = -1;
		if (fd >= 0)
			close(fd);
		return ret;
	}
	*conn0 = fd;
	return 0;
}

/* --- the shared group --- */

static size_t group_shared_bytes(void)
{
	size_t len = sizeof(struct acc_group) - ACC_GROUP_LOCAL_BYTES;

	return (len + ACC_PAGE - 1) & ~(size_t)(ACC_PAGE - 1);
}

/* The memfd: the group's shared part, then the extension of xproc.c. */
static size_t shared_bytes(unsigned int nranks)
{
	return group_shared_bytes() + acc_xp_bytes(nranks);
}

/* A private page, then @memfd's shared state right after it: the group. */
static struct acc_group *group_map(int memfd, unsigned int nranks)
{
	size_t len = ACC_GROUP_LOCAL_BYTES + shared_bytes(nranks);
	struct acc_group *g;
	struct stat st;
	char *base;

	if (sysconf(_SC_PAGESIZE) != ACC_GROUP_LOCAL_BYTES)
		return NULL;
	/* a memfd shorter than the layout would fault on first use */
	if (fstat(memfd, &st) || (uint64_t)st.st_size < shared_bytes(nranks))
		return NULL;
	base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	if (mmap(base, ACC_GROUP_LOCAL_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ||
	    mmap(base + ACC_GROUP_LOCAL_BYTES, shared_bytes(nranks), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, memfd, 0) == MAP_FAILED) {
		munmap(base, len);
		return NULL;
	}
	g = (struct acc_group *)base;
	g->map_bytes = len;	/* local: never read from the shared part */
	acc_xp_attach(g, base + ACC_GROUP_LOCAL_BYTES + group_shared_bytes());
	return g;
}

void acc_mp_group_unmap(struct acc_group *g)
{
	munmap(g, g->map_bytes);
}

/* Rank 0: the memfd of the shared state, initialized from @set. */
static int group_create(const struct acc_group *set, unsigned int nranks, const int32_t *pids,
			int *memfd)
{
	pthread_mutexattr_t ma;
	struct acc_group *g;
	unsigned int i;
	int fd, ret;

	fd = memfd_create("accel-comm", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)shared_bytes(nranks))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	g = group_map(fd, nranks);
	if (!g) {
		close(fd);
		return -ENOMEM;
	}
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	ret = -pthread_mutex_init(&g->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	g->nranks = nranks;
	g->algo = set->algo;
	g->timeout_ns = set->timeout_ns;
	g->chunk = set->chunk;
	g->slots = set->slots;
	g->oneshot_max = set->oneshot_max;
	g->seq0 = set->seq0;
	for (i = 0; i < nranks; i++) {
		g->next_seq[i] = g->seq0;
		g->pids[i] = pids[i];
	}
	g->lock_owner = -1;
	acc_mp_group_unmap(g);
	if (ret) {
		close(fd);
		return ret;
	}
	*memfd = fd;
	return 0;
}

/* --- the exchange --- */

static int export_send(struct bs_ctx *bx, int fd, unsigned int from, const struct acc_export *e)
{
	struct bs_export m;

	memset(&m, 0, sizeof(m));
	m.magic = BS_MAGIC;
	m.type = BS_EXPORT;
	m.from = from;
	m.n = e->n;
	memcpy(m.off, e->off, sizeof(m.off));
	memcpy(m.base, e->base, sizeof(m.base));
	return bs_send(bx, fd, &m, sizeof(m), e->fd, e->n);
}

/*
 * The next message on @fd: BS_EXPORT (into @e, fds owned by @e, *@from its
 * rank) or a BS_STATUS / BS_DONE (into @s). Returns the type or -errno.
 */
static int msg_recv(struct bs_ctx *bx, int fd, struct acc_export *e, unsigned int *from,
		    struct bs_status *s)
{
	union {
		struct bs_export x;
		struct bs_status s;
	} m;
	unsigned int nfds = 0, want = acc_export_count(bx->nranks);
	ssize_t len;

	memset(e, 0, sizeof(*e));
	len = bs_recv(bx, fd, &m, sizeof(m), e->fd, ACC_EXPORT_MAX, &nfds, bx->deadline);
	e->n = nfds;
	if (len < 0)
		return (int)len;
	if (len == (ssize_t)sizeof(m.s) && m.s.magic == BS_MAGIC &&
	    (m.s.type == BS_STATUS || m.s.type == BS_DONE)) {
		acc_export_close(e);
		*s = m.s;
		s->why[sizeof(s->why) - 1] = 0;
		return (int)m.s.type;
	}
	if (len != (ssize_t)sizeof(m.x) || m.x.magic != BS_MAGIC || m.x.type != BS_EXPORT ||
	    m.x.n != want || nfds != want || m.x.from >= bx->nranks || m.x.from == bx->rank) {
		acc_export_close(e);
		return -EPROTO;
	}
	memcpy(e->off, m.x.off, sizeof(e->off));
	memcpy(e->base, m.x.base, sizeof(e->base));
	*from = m.x.from;
	return BS_EXPORT;
}

static int status_send(struct bs_ctx *bx, int fd, uint32_t type, int status, const char *why)
{
	struct bs_status s;

	memset(&s, 0, sizeof(s));
	s.magic = BS_MAGIC;
	s.type = type;
	s.status = status;
	s.rank = bx->rank;
	snprintf(s.why, sizeof(s.why), "%s", why);
	return bs_send(bx, fd, &s, sizeof(s), NULL, 0);
}

/*
 * Ranks 1 and up, after a failure of their own or a send refused by a
 * closed connection: what rank 0 says last (BS_DONE), the exports before
 * it dropped. Its status (its reason in @why), or 0 if it said none
 * before it closed, or the deadline. Read to the end, so that rank 0
 * reads this rank's report before the connection closes (a socket closed
 * with messages unread makes the peer's next read fail with a reset).
 */
static int last_word(struct bs_ctx *bx, int conn0, char *why, size_t wlen)
{
	struct acc_export e;
	struct bs_status s;
	unsigned int from;
	int type;

	for (;;) {
		type = msg_recv(bx, conn0, &e, &from, &s);
		if (type == BS_EXPORT) {
			acc_export_close(&e);
			continue;
		}
		if (type != BS_DONE || !s.status)
			return 0;
		snprintf(why, wlen, "%s", s.why);
		return s.status;
	}
}

/* This process's rank and the stand-ins of its peers, on the mapped group @g. */
static int ranks_make(struct acc_group *g, unsigned int rank, struct accel_device *dev)
{
	unsigned int n = g->nranks, p;

	g->ranks = calloc(n, sizeof(*g->ranks));
	if (!g->ranks)
		return -ENOMEM;
	for (p = 0; p < n; p++) {
		struct accel_comm *c = calloc(1, sizeof(*c));

		if (!c)
			return -ENOMEM;
		c->g = g;
		c->rank = p;
		c->nranks = n;
		c->dev = dev;
		g->ranks[p] = c;
		if (p == rank)
			continue;
		c->ready = calloc(n, sizeof(*c->ready));
		c->credit = calloc(n, sizeof(*c->credit));
		if (!c->ready || !c->credit)
			return -ENOMEM;
	}
	g->live = 1;
	return acc_rank_alloc(g->ranks[rank]);
}

/* Ranks 1 and up: send the exports, import every peer's, report, hear rank 0's last word. */
static int exchange_peer(struct bs_ctx *bx, struct acc_group *g, int conn0, char *why,
			 size_t wlen)
{
	struct accel_comm *c = g->ranks[bx->rank];
	struct acc_export e;
	struct bs_status s;
	unsigned int k, from;
	int ret, type, sent;

	ret = acc_rank_export(c, &e, false);
	if (ret) {
		snprintf(why, wlen, "rank %u could not export its staging and signals", bx->rank);
		status_send(bx, conn0, BS_STATUS, ret, why);
		return ret;
	}
	ret = export_send(bx, conn0, bx->rank, &e);
	acc_export_close(&e);
	if (ret == -ECONNRESET) {
		/* rank 0 failed and closed: why, if it said so */
		type = last_word(bx, conn0, why, wlen);
		if (type)
			return type;
	}
	if (ret) {
		snprintf(why, wlen, "rank %u could not send its exports to rank 0", bx->rank);
		return ret;
	}
	for (k = 0; k < bx->nranks - 1; k++) {
		type = msg_recv(bx, conn0, &e, &from, &s);
		if (type == BS_DONE) {
			snprintf(why, wlen, "%s", s.why);
			return s.status ? s.status : -EPROTO;
		}
		if (type != BS_EXPORT) {
			snprintf(why, wlen, "rank %u got no exports from rank 0", bx->rank);
			return type < 0 ? (type == -ECONNRESET ? -ECONNABORTED : type) : -EPROTO;
		}
		if (!ret && c->peer_staging[from])
			ret = -EPROTO;	/* a second copy of one rank */
		else if (!ret)
			ret = acc_rank_import(c, from, &e, g->ranks[from]);
		if (ret && !why[0])
			snprintf(why, wlen, "rank %u could not import rank %u's staging and "
				 "signals", bx->rank, from);
		acc_export_close(&e);
	}
	sent = status_send(bx, conn0, BS_STATUS, ret, ret ? why : "");
	if (sent && sent != -ECONNRESET)
		return ret ? ret : sent;
	/* rank 0's last word, still queued if it failed and closed before this report */
	type = msg_recv(bx, conn0, &e, &from, &s);
	if (type == BS_DONE) {
		if (s.status && !ret)
			snprintf(why, wlen, "%s", s.why);
		return ret ? ret : s.status ? s.status : sent;
	}
	if (!ret)
		snprintf(why, wlen, "rank 0 did not confirm the exchange");
	return ret ? ret : type < 0 ? (type == -ECONNRESET ? -ECONNABORTED : type) : -EPROTO;
}

/*
 * Rank 0: send its exports to every rank, then take each rank's in turn,
 * relay it to every other rank and import it here: one set of fds at a
 * time, so rank 0 holds O(nranks) fds, not every rank's at once. Then
 * gather every rank's result and send the verdict.
 */
static int exchange_host(struct bs_ctx *bx, struct acc_group *g, const int *conn, char *why,
			 size_t wlen)
{
	struct accel_comm *c = g->ranks[0];
	unsigned int n = bx->nranks, r, p, from;
	struct acc_export e;
	struct bs_status s;
	int ret, type;

	ret = acc_rank_export(c, &e, false);
	if (ret)
		snprintf(why, wlen, "rank 0 could not export its staging and signals");
	for (r = 1; !ret && r < n; r++) {
		ret = export_send(bx, conn[r], 0, &e);
		if (ret)
			snprintf(why, wlen, "rank 0 could not send its exports to rank %u (pid %d)",
				 r, (int)g->pids[r]);
	}
	acc_export_close(&e);
	for (r = 1; !ret && r < n; r++) {
		type = msg_recv(bx, conn[r], &e, &from, &s);
		if (type != BS_EXPORT || from != r) {
			acc_export_close(&e);
			if (type == BS_STATUS && s.status) {
				snprintf(why, wlen, "%s", s.why);
				ret = s.status;
			} else {
				snprintf(why, wlen, "rank 0 got no exports from rank %u (pid %d)", r,
					 (int)g->pids[r]);
				ret = type < 0 ? (type == -ECONNRESET ? -ECONNABORTED : type) :
				      -EPROTO;
			}
			break;
		}
		for (p = 1; !ret && p < n; p++) {
			if (p == r)
				continue;
			ret = export_send(bx, conn[p], r, &e);
			if (ret)
				snprintf(why, wlen, "rank 0 could not send rank %u's exports to "
					 "rank %u (pid %d)", r, p, (int)g->pids[p]);
		}
		if (!ret) {
			ret = acc_rank_import(c, r, &e, g->ranks[r]);
			if (ret)
				snprintf(why, wlen, "rank 0 could not import rank %u's staging and "
					 "signals", r);
		}
		acc_export_close(&e);
	}
	for (r = 1; !ret && r < n; r++) {
		type = msg_recv(bx, conn[r], &e, &from, &s);
		if (type == BS_STATUS && !s.status)
			continue;
		acc_export_close(&e);
		if (type == BS_STATUS) {
			snprintf(why, wlen, "%s", s.why);
			ret = s.status;
		} else {
			snprintf(why, wlen, "rank %u (pid %d) did not report its imports", r,
				 (int)g->pids[r]);
			ret = type < 0 ? (type == -ECONNRESET ? -ECONNABORTED : type) : -EPROTO;
		}
	}
	for (r = 1; r < n; r++)
		status_send(bx, conn[r], BS_DONE, ret, ret ? why : "");
	return ret;
}

int acc_mp_bootstrap(struct acc_group **out, const struct acc_group *set,
		     const struct accel_comm_id *id, unsigned int nranks, unsigned int rank,
		     struct accel_device *dev)
{
	struct bs_pending pend;
	struct bs_verdict v;
	struct bs_hello mine;
	struct bs_ctx bx;
	struct acc_group *g = NULL;
	struct acc_mp *mp;
	int32_t pids[ACCEL_COMM_MAX_RANKS] = { 0 };
	char why[320] = "";
	int memfd = -1, ret;
	unsigned int r;

	memset(&pend, 0, sizeof(pend));
	if (id_read(id, &pend.id)) {
		acc_err("comm_init_rank: the id is not from accel_comm_get_unique_id()");
		return -EINVAL;
	}
	mp = calloc(1, sizeof(*mp));
	if (!mp)
		return -ENOMEM;
	for (r = 0; r < ACCEL_COMM_MAX_RANKS; r++)
		mp->conn[r] = mp->pidfd[r] = -1;
	mp->wake = -1;
	mp->rank = rank;
	mp->nranks = nranks;
	mp->pid = getpid();
	ret = pending_add(&pend);
	if (ret) {
		free(mp);
		return ret;
	}
	bx.id = &pend.id;
	bx.rank = rank;
	bx.nranks = nranks;
	bx.deadline = set->boot_deadline ? set->boot_deadline :
					   acc_now_ns() + (int64_t)set->timeout_ns;
	bx.efd = pend.efd;
	hello_fill(&mine, &pend.id, nranks, rank, set, dev);
	pids[rank] = mine.pid;
	if (rank == 0) {
		ret = host_rendezvous(&bx, &mine, mp->conn, pids);
		if (!ret) {
			ret = group_create(set, nranks, pids, &memfd);
			if (ret) {
				snprintf(why, sizeof(why), "rank 0 could not create the shared state");
				acc_err("comm_init_rank: rank 0 (pid %d), @%s: %s: %s", (int)getpid(),
					pend.id.name, why, strerror(-ret));
			}
		}
		for (r = 1; r < nranks; r++)
			if (mp->conn[r] >= 0)
				verdict_send(&bx, mp->conn[r], ret, why, pids, ret ? -1 : memfd);
	} else {
		ret = peer_rendezvous(&bx, &mine, &mp->conn[0], &v, &memfd);
		if (!ret)
			memcpy(pids, v.pids, sizeof(pids));
	}
	if (ret)
		goto fail;
	g = group_map(memfd, nranks);
	close(memfd);
	memfd = -1;
	if (!g) {
		ret = -ENOMEM;
		snprintf(why, sizeof(why), "rank %u could not map the shared state", rank);
		goto fail_exchange;
	}
	g->mp = mp;
	ret = ranks_make(g, rank, dev);
	if (ret) {
		snprintf(why, sizeof(why), "rank %u could not allocate its staging and signals "
			 "(%llu bytes x %u slots per peer, pinned: device memory or "
			 "RLIMIT_MEMLOCK; params.chunk_bytes and .slots make it smaller)", rank,
			 (unsigned long long)g->chunk, g->slots);
		goto fail_exchange;
	}
	/* the recorder too, before any rank's init can succeed: it fails them all, as init_all */
	g->rec_ops = set->rec_ops;
	ret = acc_rec_init(g->ranks[rank]);
	if (ret) {
		snprintf(why, sizeof(why), "rank %u could not allocate its flight recorder (%u "
			 "entries: accel_comm_params.recorder_ops or ACCEL_COMM_RECORDER_OPS make it "
			 "smaller, or turn it off)", rank, g->rec_ops);
		goto fail_exchange;
	}
	if (nranks > 1)
		ret = rank ? exchange_peer(&bx, g, mp->conn[0], why, sizeof(why)) :
			     exchange_host(&bx, g, mp->conn, why, sizeof(why));
	if (ret)
		goto fail_log;
	pending_del(&pend);
	*out = g;
	return 0;

fail_exchange:
	/* tell rank 0 (or, on rank 0, everyone) so that no rank waits for this one */
	if (rank) {
		/* and hear its last word: the report is read before the connection closes */
		if (!status_send(&bx, mp->conn[0], BS_STATUS, ret, why)) {
			char w[sizeof(why)];

			last_word(&bx, mp->conn[0], w, sizeof(w));
		}
	} else {
		for (r = 1; r < nranks; r++)
			if (mp->conn[r] >= 0)
				status_send(&bx, mp->conn[r], BS_DONE, ret, why);
	}
fail_log:
	acc_err("comm_init_rank: rank %u (pid %d), @%s: %s: %s", rank, (int)getpid(),
		pend.id.name, why[0] ? why : "the exchange failed", strerror(-ret));
fail:
	if (memfd >= 0)
		close(memfd);
	if (g) {
		acc_mp_ranks_free(g);
		acc_mp_group_unmap(g);
	}
	for (r = 0; r < ACCEL_COMM_MAX_RANKS; r++)
		if (mp->conn[r] >= 0)
			close(mp->conn[r]);
	free(mp);
	pending_del(&pend);
	return ret;
}
