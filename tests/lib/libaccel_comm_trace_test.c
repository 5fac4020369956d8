// SPDX-License-Identifier: GPL-2.0-only
/*
 * libaccel collectives: the flight recorder, on both backends. A rank of
 * four that never issues a sequence number: the timeout writes every
 * rank's recorder to the trace directory, and the sleeping rank's lacks
 * that number; a rank that issues a different call: the mismatch writes
 * them, the differing rank's holding its failed call; an abort writes
 * them; the ring of N entries wraps (random N and random calls against
 * the test's own list of what it called); the settings and the dump's
 * argument errors.
 *
 * With ACCEL_COMM_TRACE_KEEP=DIR the failure tests write into DIR/skipped
 * and DIR/mismatch and leave the files there: tests/lib/comm-trace-check
 * runs tools/accel-comm-trace on them.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "libaccel_test.h"

#define NDEV		4
#define ID0		990
#define BUFSZ		(64u << 10)
#define WAIT_NS		(20 * SEC)

FIXTURE(trace) {
	struct accel_device *dev[NDEV];
	struct accel_queue *q[NDEV];
	struct accel_buffer *sbuf[NDEV], *rbuf[NDEV];
	struct vaccel_counts counts;
	char dir[256];
};

FIXTURE_SETUP(trace)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 4096 };
	int i;

	memset(self, 0, sizeof(*self));
	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	for (i = 1; i < NDEV; i++)
		lib_del_device(ID0 + i);
	ASSERT_EQ(0, lib_counted_open(ID0, "memory=16M", &self->counts, &self->dev[0]));
	for (i = 1; i < NDEV; i++)
		ASSERT_EQ(0, lib_fresh_open(ID0 + i, "memory=16M", &self->dev[i]));
	for (i = 0; i < NDEV; i++) {
		ASSERT_EQ(0, accel_buffer_create(self->dev[i], BUFSZ, ACCEL_BUFFER_HOST,
						 &self->sbuf[i]));
		ASSERT_EQ(0, accel_buffer_create(self->dev[i], BUFSZ, ACCEL_BUFFER_HOST,
						 &self->rbuf[i]));
		ASSERT_EQ(0, accel_queue_create(self->dev[i], &qp, &self->q[i]));
	}
}

FIXTURE_TEARDOWN(trace)
{
	int i;

	if (!lib_present())
		return;
	for (i = 0; i < NDEV; i++) {
		accel_queue_destroy(self->q[i]);
		accel_buffer_destroy(self->sbuf[i]);
		accel_buffer_destroy(self->rbuf[i]);
		accel_device_close(self->dev[i]);
		lib_del_device(ID0 + i);
	}
	EXPECT_LIB_COUNTS_BACK(&self->counts, 5000);
}

/* A fresh trace directory: DIR/name under ACCEL_COMM_TRACE_KEEP, else a temporary one. */
static int trace_dir(FIXTURE_DATA(trace) *self, const char *name)
{
	const char *keep = getenv("ACCEL_COMM_TRACE_KEEP");
	char cmd[400];

	if (keep && *keep) {
		snprintf(self->dir, sizeof(self->dir), "%s/%s", keep, name);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
		if (system(cmd))
			return -1;
		return mkdir(self->dir, 0755);
	}
	snprintf(self->dir, sizeof(self->dir), "/tmp/accel-trace-XXXXXX");
	return mkdtemp(self->dir) ? 0 : -1;
}

static void trace_dir_done(FIXTURE_DATA(trace) *self)
{
	const char *keep = getenv("ACCEL_COMM_TRACE_KEEP");
	char cmd[400];

	if (keep && *keep)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	if (system(cmd))
		fprintf(stderr, "# could not remove %s\n", self->dir);
}

/* The whole file at @path, NUL-terminated (malloc'ed), or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = cap * 2 + 8192);

			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, 4096, f);
		len += n;
	} while (n);
	fclose(f);
	buf[len] = 0;
	return buf;
}

/* The file of @rank in the trace directory (the only accel-comm-*-rank<r>.json). */
static char *rank_file(FIXTURE_DATA(trace) *self, unsigned int rank)
{
	char suffix[32], path[600];
	struct dirent *de;
	char *doc = NULL;
	int found = 0;
	DIR *d = opendir(self->dir);

	if (!d)
		return NULL;
	snprintf(suffix, sizeof(suffix), "-rank%u.json", rank);
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name), sl = strlen(suffix);

		if (strncmp(de->d_name, "accel-comm-", 11) || l < sl ||
		    strcmp(de->d_name + l - sl, suffix))
			continue;
		snprintf(path, sizeof(path), "%s/%s", self->dir, de->d_name);
		free(doc);
		doc = slurp(path);
		found++;
	}
	closedir(d);
	if (found != 1) {
		free(doc);
		return NULL;
	}
	return doc;
}

/* A rank's recorder through accel_comm_dump() into a memfd. */
static char *dump_of(struct accel_comm *c, int *ret)
{
	int fd = memfd_create("trace", MFD_CLOEXEC);
	char path[64];
	char *doc;

	*ret = fd < 0 ? -errno : accel_comm_dump(c, fd);
	if (*ret) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	doc = slurp(path);
	close(fd);
	return doc;
}

/*
 * The operations of a document, in order: seq, op name, count and state
 * of each (at most @max). Returns how many, or -1 if the document is not
 * of the expected shape.
 */
struct op_rec {
	unsigned long long seq, count;
	char op[32], state[16], error[32];
};

static int parse_ops(const char *doc, struct op_rec *ops, int max)
{
	const char *p = strstr(doc, "\"ops\": [");
	int n = 0;

	if (!p || !strstr(doc, "\"format\": \"accel-comm-trace\"") ||
	    !strstr(doc, "\"version\": 1,"))
		return -1;
	while ((p = strstr(p, "{\"seq\": "))) {
		struct op_rec o = { 0 };

		if (sscanf(p, "{\"seq\": %llu, \"op\": \"%31[a-z]\"", &o.seq, o.op) != 2)
			return -1;
		if (!strstr(p, "\"count\": ") ||
		    sscanf(strstr(p, "\"count\": "), "\"count\": %llu", &o.count) != 1)
			return -1;
		if (!strstr(p, "\"state\": \"") ||
		    sscanf(strstr(p, "\"state\": \""), "\"state\": \"%15[a-z]\"", o.state) != 1)
			return -1;
		if (sscanf(strstr(p, "\"error\": \""), "\"error\": \"%31[A-Z]\"", o.error) != 1)
			o.error[0] = 0;
		if (n >= max)
			return -1;
		ops[n++] = o;
		p++;
	}
	return n;
}

/* The number after "@key": in @doc, or -1. */
static long long field_of(const char *doc, const char *key)
{
	char k[64];
	const char *p;
	long long v;

	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = strstr(doc, k);
	if (!p || sscanf(p + strlen(k), "%lld", &v) != 1)
		return -1;
	return v;
}

static int make_comm(FIXTURE_DATA(trace) *self, unsigned int n, uint32_t timeout_ms,
		     uint32_t ops, const char *dir, struct accel_comm **comms)
{
	struct accel_comm_params p = {
		.size = sizeof(p), .algo = ACCEL_COMM_ALGO_ONESHOT, .timeout_ms = timeout_ms,
		.recorder_ops = ops, .trace_dir = dir,
	};

	return accel_comm_init_all(comms, n, self->dev, &p);
}

static void free_comm(struct accel_comm **comms, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		accel_comm_destroy(comms[i]);
}

static int allreduce(FIXTURE_DATA(trace) *self, struct accel_comm *c, unsigned int r,
		     uint64_t count, struct accel_event *ev)
{
	return accel_allreduce(accel_buffer_va(self->sbuf[r]), accel_buffer_va(self->rbuf[r]),
			       count, ACCEL_DTYPE_F32, ACCEL_REDOP_SUM, c, self->q[r], ev);
}

#define K	3	/* the sequence number of the faulty call */

/* Rank 3 of 4 sleeps at seq K: the timeout writes 4 files; rank 3's lacks seq K. */
TEST_F(trace, skipped_rank_dumps)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev[NDEV];
	struct op_rec ops[16];
	unsigned int r, i;
	char *doc;
	int n, ret;

	ASSERT_EQ(0, trace_dir(self, "skipped"));
	ASSERT_EQ(0, make_comm(self, 4, 300, 0, self->dir, comms));
	for (i = 0; i < K; i++) {
		for (r = 0; r < 4; r++)
			ASSERT_EQ(0, allreduce(self, comms[r], r, 100 + i, &ev[r]));
		for (r = 0; r < 4; r++)
			ASSERT_EQ(0, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
	}
	for (r = 0; r < 3; r++)
		ASSERT_EQ(0, allreduce(self, comms[r], r, 100 + K, &ev[r]));
	for (r = 0; r < 3; r++)
		EXPECT_EQ(-ETIMEDOUT, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
	for (r = 0; r < 4; r++) {
		doc = rank_file(self, r);
		ASSERT_NE(NULL, doc) TH_LOG("no single dump of rank %u in %s", r, self->dir);
		n = parse_ops(doc, ops, 16);
		EXPECT_EQ(r == 3 ? K : K + 1, n);
		EXPECT_NE(NULL, strstr(doc, "\"reason\": \"timeout\""));
		EXPECT_EQ(4, field_of(doc, "nranks"));
		EXPECT_EQ((long long)r, field_of(doc, "rank"));
		EXPECT_EQ(r == 3 ? K : K + 1, field_of(doc, "next_seq"));
		for (i = 0; (int)i < n && i < 16; i++) {
			EXPECT_EQ(i, ops[i].seq);
			EXPECT_STREQ("allreduce", ops[i].op);
			EXPECT_EQ(100 + i, ops[i].count);
			if (i < K)
				EXPECT_STREQ("done", ops[i].state);
		}
		free(doc);
	}
	/* on request, later: rank 0's seq K has failed with ETIMEDOUT */
	doc = dump_of(comms[0], &ret);
	ASSERT_EQ(0, ret);
	n = parse_ops(doc, ops, 16);
	ASSERT_EQ(K + 1, n);
	EXPECT_STREQ("failed", ops[K].state);
	EXPECT_STREQ("ETIMEDOUT", ops[K].error);
	EXPECT_NE(NULL, strstr(doc, "\"reason\": \"request\""));
	free(doc);
	free_comm(comms, 4);
	trace_dir_done(self);
}

/* Rank 3 calls allreduce with count + 1 at seq K: the mismatch writes the files. */
TEST_F(trace, different_call_dumps)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev[NDEV];
	struct op_rec ops[16];
	unsigned int r, i;
	char *doc;
	int n;

	ASSERT_EQ(0, trace_dir(self, "mismatch"));
	ASSERT_EQ(0, make_comm(self, 4, 20000, 0, self->dir, comms));
	for (i = 0; i < K; i++) {
		for (r = 0; r < 4; r++)
			ASSERT_EQ(0, allreduce(self, comms[r], r, 64, &ev[r]));
		for (r = 0; r < 4; r++)
			ASSERT_EQ(0, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
	}
	for (r = 0; r < 4; r++)
		ASSERT_EQ(r == 3 ? -EPROTO : 0, allreduce(self, comms[r], r, r == 3 ? 65 : 64,
							  &ev[r]));
	for (r = 0; r < 3; r++)
		EXPECT_EQ(-EPROTO, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
	for (r = 0; r < 4; r++) {
		doc = rank_file(self, r);
		ASSERT_NE(NULL, doc) TH_LOG("no single dump of rank %u in %s", r, self->dir);
		n = parse_ops(doc, ops, 16);
		ASSERT_EQ(K + 1, n);
		EXPECT_NE(NULL, strstr(doc, "\"reason\": \"mismatch\""));
		EXPECT_EQ(K, ops[K].seq);
		EXPECT_EQ(r == 3 ? 65 : 64, ops[K].count);
		if (r == 3) {
			EXPECT_STREQ("failed", ops[K].state);
			EXPECT_STREQ("EPROTO", ops[K].error);
		}
		/* a refused call takes no sequence number */
		EXPECT_EQ(r == 3 ? K : K + 1, field_of(doc, "next_seq"));
		free(doc);
	}
	free_comm(comms, 4);
	trace_dir_done(self);
}

/* An abort writes every rank's recorder, once. */
TEST_F(trace, abort_dumps)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev[NDEV];
	unsigned int r;
	char *doc;

	ASSERT_EQ(0, trace_dir(self, "abort"));
	ASSERT_EQ(0, make_comm(self, 2, 20000, 0, self->dir, comms));
	ASSERT_EQ(0, allreduce(self, comms[0], 0, 8, &ev[0]));
	ASSERT_EQ(0, accel_comm_abort(comms[1]));
	EXPECT_EQ(-ECONNABORTED, accel_comm_wait(comms[0], &ev[0], WAIT_NS));
	for (r = 0; r < 2; r++) {
		doc = rank_file(self, r);
		ASSERT_NE(NULL, doc);
		EXPECT_NE(NULL, strstr(doc, "\"reason\": \"abort\""));
		EXPECT_EQ(r == 0 ? 1 : 0, field_of(doc, "recorded"));
		free(doc);
	}
	free_comm(comms, 2);
	trace_dir_done(self);
}

/*
 * The ring wraps: random capacities and random sequences of calls; the
 * dump holds exactly the last min(N, calls) of them, oldest first, and
 * says how many were recorded and dropped.
 */
TEST_F(trace, ring_wraps)
{
	static const char *const names[] = { "allreduce", "broadcast", "barrier" };
	struct accel_comm *comms[2];
	struct accel_event ev[2];
	struct op_rec got[64];
	unsigned int seed = (unsigned int)vaccel_now_ms(), round;
	char *doc;
	int ret, n;

	TH_LOG("seed %u", seed);
	srand(seed);
	for (round = 0; round < 12; round++) {
		unsigned int cap = 1 + (unsigned int)rand() % 16;
		unsigned int calls = (unsigned int)rand() % (3 * cap + 1), i, r, k;
		unsigned int kind[64];
		uint64_t cnt[64];

		ASSERT_EQ(0, make_comm(self, 2, 20000, cap, NULL, comms));
		for (i = 0; i < calls; i++) {
			kind[i] = (unsigned int)rand() % 3;
			cnt[i] = kind[i] == 2 ? 0 : 1 + (unsigned int)rand() % 1000;
			for (r = 0; r < 2; r++) {
				uint64_t s = accel_buffer_va(self->sbuf[r]);
				uint64_t d = accel_buffer_va(self->rbuf[r]);

				if (kind[i] == 0)
					ret = accel_allreduce(s, d, cnt[i], ACCEL_DTYPE_I32,
							      ACCEL_REDOP_MAX, comms[r], self->q[r],
							      &ev[r]);
				else if (kind[i] == 1)
					ret = accel_broadcast(s, d, cnt[i], ACCEL_DTYPE_U8, 1, comms[r],
							      self->q[r], &ev[r]);
				else
					ret = accel_barrier(comms[r], self->q[r], &ev[r]);
				ASSERT_EQ(0, ret);
			}
			for (r = 0; r < 2; r++)
				ASSERT_EQ(0, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
		}
		for (r = 0; r < 2; r++) {
			unsigned int keep = calls < cap ? calls : cap;

			doc = dump_of(comms[r], &ret);
			ASSERT_EQ(0, ret);
			n = parse_ops(doc, got, 64);
			ASSERT_EQ((int)keep, n) TH_LOG("capacity %u, %u calls", cap, calls);
			EXPECT_EQ(cap, field_of(doc, "capacity"));
			EXPECT_EQ(calls, field_of(doc, "recorded"));
			EXPECT_EQ(calls - keep, field_of(doc, "dropped"));
			for (k = 0; k < keep; k++) {
				i = calls - keep + k;
				EXPECT_EQ(i, got[k].seq);
				EXPECT_STREQ(names[kind[i]], got[k].op);
				EXPECT_EQ(cnt[i], got[k].count);
				EXPECT_STREQ("done", got[k].state);
			}
			free(doc);
		}
		free_comm(comms, 2);
	}
}

/*
 * A split is a call of the parent's sequence (libaccel 1.7): between two
 * allreduces it takes seq 1, and the recorder shows it done. A split
 * that times out (rank 1 never calls it) leaves the sequence: its number
 * is taken by the next call, which works on both ranks; the recorder
 * shows the split failed with ETIMEDOUT at that number, then the call.
 */
TEST_F(trace, split_is_a_call_of_the_sequence)
{
	static const char *const want_op[] = { "allreduce", "split", "allreduce", "split",
					       "allreduce" };
	static const unsigned long long want_seq[] = { 0, 1, 2, 3, 3 };
	struct accel_comm *comms[2], *kids[2];
	struct accel_event ev[2];
	struct op_rec ops[8];
	unsigned int r, i;
	char *doc;
	int n, ret;

	ASSERT_EQ(0, make_comm(self, 2, 300, 0, NULL, comms));
	for (r = 0; r < 2; r++)
		ASSERT_EQ(0, allreduce(self, comms[r], r, 10, &ev[r]));
	for (r = 0; r < 2; r++)
		ASSERT_EQ(0, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
	ASSERT_EQ(0, accel_group_start());
	for (r = 0; r < 2; r++)
		ASSERT_EQ(0, accel_comm_split(comms[r], 0, 0, &kids[r]));
	ASSERT_EQ(0, accel_group_end());
	for (r = 0; r < 2; r++)
		ASSERT_EQ(0, allreduce(self, comms[r], r, 20, &ev[r]));
	for (r = 0; r < 2; r++)
		ASSERT_EQ(0, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
	free_comm(kids, 2);

	kids[0] = (struct accel_comm *)1;
	EXPECT_EQ(-ETIMEDOUT, accel_comm_split(comms[0], 0, 0, &kids[0]));
	EXPECT_EQ(NULL, kids[0]);
	EXPECT_EQ(0, accel_comm_get_async_error(comms[0], NULL, 0));	/* not sticky */
	for (r = 0; r < 2; r++)
		ASSERT_EQ(0, allreduce(self, comms[r], r, 30, &ev[r]));
	for (r = 0; r < 2; r++)
		EXPECT_EQ(0, accel_comm_wait(comms[r], &ev[r], WAIT_NS));

	for (r = 0; r < 2; r++) {
		unsigned int k = 0;

		doc = dump_of(comms[r], &ret);
		ASSERT_EQ(0, ret);
		n = parse_ops(doc, ops, 8);
		ASSERT_EQ(r == 0 ? 5 : 4, n) TH_LOG("rank %u", r);
		for (i = 0; i < 5; i++) {
			if (r == 1 && i == 3)
				continue;	/* rank 1 did not call the second split */
			EXPECT_EQ(want_seq[i], ops[k].seq) TH_LOG("rank %u, call %u", r, i);
			EXPECT_STREQ(want_op[i], ops[k].op);
			EXPECT_STREQ(i == 3 ? "failed" : "done", ops[k].state);
			if (i == 3)
				EXPECT_STREQ("ETIMEDOUT", ops[k].error);
			k++;
		}
		EXPECT_EQ(4, field_of(doc, "next_seq"));
		free(doc);
	}
	free_comm(comms, 2);
}

/* The recorder's settings and accel_comm_dump()'s argument errors. */
TEST_F(trace, settings_and_errors)
{
	struct accel_comm *comms[2];
	int ret;
	char *doc;

	EXPECT_EQ(-EINVAL, make_comm(self, 2, 0, ACCEL_COMM_RECORDER_MAX + 1, NULL, comms));
	ASSERT_EQ(0, make_comm(self, 2, 0, ACCEL_COMM_RECORDER_OFF, NULL, comms));
	EXPECT_EQ(NULL, dump_of(comms[0], &ret));
	EXPECT_EQ(-ENODATA, ret);
	free_comm(comms, 2);
	ASSERT_EQ(0, setenv("ACCEL_COMM_RECORDER_OPS", "0", 1));
	ASSERT_EQ(0, make_comm(self, 2, 0, 0, NULL, comms));
	EXPECT_EQ(NULL, dump_of(comms[0], &ret));
	EXPECT_EQ(-ENODATA, ret);
	free_comm(comms, 2);
	ASSERT_EQ(0, setenv("ACCEL_COMM_RECORDER_OPS", "65537", 1));
	EXPECT_EQ(-EINVAL, make_comm(self, 2, 0, 0, NULL, comms));
	ASSERT_EQ(0, unsetenv("ACCEL_COMM_RECORDER_OPS"));
	ASSERT_EQ(0, make_comm(self, 2, 0, 0, NULL, comms));
	EXPECT_EQ(-EINVAL, accel_comm_dump(NULL, 1));
	EXPECT_EQ(-EINVAL, accel_comm_dump(comms[0], -1));
	EXPECT_EQ(-EBADF, accel_comm_dump(comms[0], 1000000));
	doc = dump_of(comms[1], &ret);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(256, field_of(doc, "capacity"));
	EXPECT_EQ(0, field_of(doc, "recorded"));
	EXPECT_EQ(1, field_of(doc, "rank"));
	free(doc);
	free_comm(comms, 2);
}

struct dumper {
	struct accel_comm *comm;
	atomic_bool stop;
	atomic_uint dumps;
	int ret;
};

/* Dump rank @comm to /dev/null until told to stop, then abort the communicator. */
static void *dump_loop(void *arg)
{
	struct dumper *d = arg;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	while (!atomic_load(&d->stop) && !d->ret) {
		d->ret = accel_comm_dump(d->comm, fd);
		atomic_fetch_add(&d->dumps, 1);
		usleep(100);	/* a dump takes the group's lock: leave the issuers room */
	}
	close(fd);
	if (!d->ret)
		d->ret = accel_comm_abort(d->comm);
	return NULL;
}

/*
 * Dumps from another thread while the ranks issue and complete calls,
 * then an abort from that thread while a call waits: every dump
 * succeeds, the abort writes both files (ThreadSanitizer's list in
 * tests/run-all runs this one).
 */
TEST_F(trace, dumps_while_issuing_and_abort_from_a_thread)
{
	struct accel_comm *comms[2];
	struct accel_event ev[2];
	struct dumper d = { 0 };
	pthread_t t;
	/* the module's engines run about ten times slower under TCG in the VM */
	unsigned int i, r, n = lib_on_sim() ? 200 : 20;
	char *doc;

	ASSERT_EQ(0, trace_dir(self, "thread"));
	ASSERT_EQ(0, make_comm(self, 2, 20000, 16, self->dir, comms));
	d.comm = comms[1];
	ASSERT_EQ(0, pthread_create(&t, NULL, dump_loop, &d));
	/*
	 * The dumper runs before the rounds start (bounded): in the VM the
	 * 20 rounds could end before the new thread is first scheduled.
	 */
	for (i = 0; i < 10000 && !atomic_load(&d.dumps) && !d.ret; i++)
		usleep(1000);
	EXPECT_LT(0, atomic_load(&d.dumps)) TH_LOG("the dumping thread did not dump in 10 s");
	ksft_print_msg("%u rounds\n", n);
	for (i = 0; i < n; i++) {
		for (r = 0; r < 2; r++)
			ASSERT_EQ(0, allreduce(self, comms[r], r, 1 + i, &ev[r]));
		for (r = 0; r < 2; r++)
			ASSERT_EQ(0, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
	}
	/* rank 0 alone: waits at the gate until the abort releases it */
	ASSERT_EQ(0, allreduce(self, comms[0], 0, 8, &ev[0]));
	atomic_store(&d.stop, true);
	EXPECT_EQ(-ECONNABORTED, accel_comm_wait(comms[0], &ev[0], WAIT_NS));
	pthread_join(t, NULL);
	EXPECT_EQ(0, d.ret);
	EXPECT_LT(0, atomic_load(&d.dumps));
	for (r = 0; r < 2; r++) {
		doc = rank_file(self, r);
		ASSERT_NE(NULL, doc);
		EXPECT_NE(NULL, strstr(doc, "\"reason\": \"abort\""));
		EXPECT_EQ(r == 0 ? n + 1 : n, field_of(doc, "recorded"));
		free(doc);
	}
	free_comm(comms, 2);
	trace_dir_done(self);
}

struct blocked_abort {
	struct accel_comm *comm;
	atomic_bool started, done;
	atomic_int tid;
	int ret;
	struct accel_comm_error err;
};

static void *abort_thread(void *arg)
{
	struct blocked_abort *b = arg;

	atomic_store(&b->tid, (int)syscall(SYS_gettid));
	atomic_store(&b->started, true);
	b->ret = accel_comm_abort(b->comm);
	atomic_store(&b->done, true);
	return NULL;
}

/*
 * Is thread @tid of this process in the system call @nr now
 * (/proc/self/task/TID/syscall)? -1 if that file cannot be read.
 */
static int in_syscall(int tid, long nr)
{
	char path[64], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 10) == nr && buf[0] != '-';
}

static void *async_error_thread(void *arg)
{
	struct blocked_abort *b = arg;

	b->ret = accel_comm_get_async_error(b->comm, &b->err, sizeof(b->err));
	atomic_store(&b->done, true);
	return NULL;
}

/*
 * The dump's file I/O happens after the group's lock is released (other
 * ranks, and other processes of a multi-process communicator, take it on
 * every call): the temporary file of each rank's dump is a FIFO here, so
 * writing it blocks until the test reads it. While the aborting thread
 * is blocked there, another thread's accel_comm_get_async_error() (which
 * takes the lock) must return; with the write under the lock it would
 * wait for the FIFO's reader, and the test would see it still blocked
 * after 5 s.
 */
TEST_F(trace, dump_writes_outside_the_lock)
{
	struct blocked_abort ab = { 0 }, ae = { 0 };
	struct accel_comm *comms[2];
	char fifo[2][600], id[17] = { 0 }, buf[4096];
	const char *p;
	pthread_t ta, te;
	unsigned int r, i;
	char *doc;
	int ret, fd;
	ssize_t n;

	ASSERT_EQ(0, trace_dir(self, "fifo"));
	ASSERT_EQ(0, make_comm(self, 2, 20000, 16, self->dir, comms));
	/* the dump's file names: the id is in every document */
	doc = dump_of(comms[0], &ret);
	ASSERT_NE(NULL, doc);
	p = strstr(doc, "\"comm\": {\"id\": \"");
	ASSERT_NE(NULL, p);
	memcpy(id, p + strlen("\"comm\": {\"id\": \""), 16);
	free(doc);
	for (r = 0; r < 2; r++) {
		snprintf(fifo[r], sizeof(fifo[r]), "%s/accel-comm-%s-rank%u.json.%d.tmp", self->dir,
			 id, r, (int)getpid());
		ASSERT_EQ(0, mkfifo(fifo[r], 0600));
	}
	ab.comm = comms[1];
	ASSERT_EQ(0, pthread_create(&ta, NULL, abort_thread, &ab));
	while (!atomic_load(&ab.started))
		usleep(1000);
	/* until the abort is blocked opening rank 0's FIFO (10 s at most) */
	for (i = 0; i < 10000; i++) {
		int st = in_syscall(atomic_load(&ab.tid), SYS_openat);

		if (st < 0) {	/* no /proc/.../syscall: a sleep has to do */
			usleep(100000);
			break;
		}
		if (st)
			break;
		usleep(1000);
	}
	EXPECT_FALSE(atomic_load(&ab.done));
	ae.comm = comms[0];
	ASSERT_EQ(0, pthread_create(&te, NULL, async_error_thread, &ae));
	for (i = 0; i < 500 && !atomic_load(&ae.done); i++)
		usleep(10000);
	EXPECT_TRUE(atomic_load(&ae.done));
	/* release the abort: read both documents (in the order it writes them) */
	for (r = 0; r < 2; r++) {
		fd = open(fifo[r], O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fd);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		close(fd);
	}
	pthread_join(ta, NULL);
	pthread_join(te, NULL);
	EXPECT_EQ(0, ab.ret);
	EXPECT_EQ(-ECONNABORTED, ae.ret);	/* rank 1 aborted: a peer, for rank 0 */
	EXPECT_EQ(-ECONNABORTED, ae.err.error);
	free_comm(comms, 2);
	trace_dir_done(self);
}

TEST_HARNESS_MAIN
