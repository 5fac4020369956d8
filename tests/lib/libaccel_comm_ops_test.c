// SPDX-License-Identifier: GPL-2.0-only
/*
 * libaccel collectives, the operations of issue 16's second slice, on
 * both backends: accel_alltoallv() (random counts, zeros and primes,
 * random displacements, against a host oracle; counts that do not agree
 * pairwise: -EPROTO naming both ranks; overlaps and bad arguments that
 * change nothing; a skipped call: -ETIMEDOUT; an abort), and sends and
 * receives in groups (a ring both ways, all pairs, to itself, many pairs
 * in one group, the seed 003 pattern many times, against a host oracle;
 * a send and receive that differ, or interleave differently with a
 * collective: -EPROTO on every rank; a send or receive whose peer never
 * comes: -ETIMEDOUT naming the peer; an abort).
 *
 * The oracle works on bytes: every rank's send buffer is random, every
 * receive buffer starts as 0x5a, and the expected receive buffers are
 * computed on the host with memcpy(): a wrong byte anywhere (outside the
 * blocks too) fails. Every wait is bounded.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <pthread.h>

#include "kselftest_harness.h"
#include "libaccel_test.h"

/* test hook of lib/coll/p2p.c: the most sends and receives left unmatched */
extern unsigned int acc_p2p_test_pending;

#define NDEV		4
#define ID0		980
#define CHUNK		4096		/* small slots: larger counts span several chunks */
#define BUFSZ		(256u << 10)
#define WAIT_NS		(20 * SEC)

FIXTURE(ops) {
	struct accel_device *dev[NDEV];
	struct accel_queue *q[NDEV];
	struct accel_buffer *sbuf[NDEV], *rbuf[NDEV];
	unsigned char *s[NDEV], *r[NDEV];
	unsigned char *want[NDEV];	/* the oracle's receive buffers */
	struct vaccel_counts counts;
};

static int open_queues(FIXTURE_DATA(ops) *self)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 8192 };
	int i;

	for (i = 0; i < NDEV; i++) {
		accel_queue_destroy(self->q[i]);
		self->q[i] = NULL;
		if (accel_queue_create(self->dev[i], &qp, &self->q[i]))
			return -1;
	}
	return 0;
}

FIXTURE_SETUP(ops)
{
	int i;

	memset(self, 0, sizeof(*self));
	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	for (i = 1; i < NDEV; i++)
		lib_del_device(ID0 + i);
	ASSERT_EQ(0, lib_counted_open(ID0, "memory=64M", &self->counts, &self->dev[0]));
	for (i = 1; i < NDEV; i++)
		ASSERT_EQ(0, lib_fresh_open(ID0 + i, "memory=64M", &self->dev[i]));
	for (i = 0; i < NDEV; i++) {
		ASSERT_EQ(0, accel_buffer_create(self->dev[i], BUFSZ, ACCEL_BUFFER_HOST,
						 &self->sbuf[i]));
		ASSERT_EQ(0, accel_buffer_create(self->dev[i], BUFSZ, ACCEL_BUFFER_HOST,
						 &self->rbuf[i]));
		self->s[i] = accel_buffer_host(self->sbuf[i]);
		self->r[i] = accel_buffer_host(self->rbuf[i]);
		self->want[i] = malloc(BUFSZ);
		ASSERT_NE(NULL, self->want[i]);
	}
	ASSERT_EQ(0, open_queues(self));
}

FIXTURE_TEARDOWN(ops)
{
	int i;

	acc_p2p_test_pending = 0;
	if (!lib_present())
		return;
	for (i = 0; i < NDEV; i++) {
		accel_queue_destroy(self->q[i]);
		accel_buffer_destroy(self->sbuf[i]);
		accel_buffer_destroy(self->rbuf[i]);
		free(self->want[i]);
		accel_device_close(self->dev[i]);
		lib_del_device(ID0 + i);
	}
	EXPECT_LIB_COUNTS_BACK(&self->counts, 5000);
}

static int comm_make(FIXTURE_DATA(ops) *self, unsigned int n, uint32_t algo,
		     uint32_t timeout_ms, struct accel_comm **comms)
{
	struct accel_comm_params p = {
		.size = sizeof(p), .algo = algo, .timeout_ms = timeout_ms, .chunk_bytes = CHUNK,
	};

	return accel_comm_init_all(comms, n, self->dev, &p);
}

static void comm_free(struct accel_comm **comms, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		accel_comm_destroy(comms[i]);
}

/* xorshift64*: the seed is printed, so a failure can be replayed (ACCEL_TEST_SEED) */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void seed_rng(const char *what)
{
	const char *s = getenv("ACCEL_TEST_SEED");

	rng_state = s && *s ? strtoull(s, NULL, 0) : (uint64_t)vaccel_now_ms() * 2654435761u + 1;
	if (!rng_state)
		rng_state = 1;
	ksft_print_msg("%s: seed %#llx\n", what, (unsigned long long)rng_state);
}

/* Random send buffers, receive buffers and the oracle's at 0x5a. */
static void fill(FIXTURE_DATA(ops) *self, unsigned int n)
{
	unsigned int r;
	size_t i;

	for (r = 0; r < n; r++) {
		for (i = 0; i < BUFSZ; i += 8) {
			uint64_t v = rnd();

			memcpy(self->s[r] + i, &v, 8);
		}
		memset(self->r[r], 0x5a, BUFSZ);
		memset(self->want[r], 0x5a, BUFSZ);
	}
}

/* Every receive buffer against the oracle's; logs the first wrong byte. */
static int compare(struct __test_metadata *_metadata, FIXTURE_DATA(ops) *self, unsigned int n,
		   const char *what)
{
	unsigned int r;
	size_t i;

	for (r = 0; r < n; r++)
		if (memcmp(self->r[r], self->want[r], BUFSZ)) {
			for (i = 0; self->r[r][i] == self->want[r][i]; i++)
				;
			TH_LOG("%s: rank %u: byte %zu is %#x, not %#x", what, r, i, self->r[r][i],
			       self->want[r][i]);
			return -EBADMSG;
		}
	return 0;
}

static int wait_all(struct accel_comm **comms, struct accel_event *ev, unsigned int n)
{
	unsigned int r;
	int ret;

	for (r = 0; r < n; r++) {
		ret = accel_comm_wait(comms[r], &ev[r], WAIT_NS);
		if (ret)
			return ret;
	}
	return 0;
}

static const enum accel_dtype dtypes[] = {
	ACCEL_DTYPE_U8, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, ACCEL_DTYPE_I32, ACCEL_DTYPE_F32,
	ACCEL_DTYPE_I64,
};

/* --- alltoallv --- */

struct vplan {
	enum accel_dtype t;
	uint64_t sc[NDEV][NDEV], sd[NDEV][NDEV];	/* [rank][peer], elements */
	uint64_t rc[NDEV][NDEV], rd[NDEV][NDEV];
};

static uint64_t pick_count(void)
{
	static const uint64_t c[] = { 0, 0, 1, 2, 7, 13, 61, 509, 1031, 2053 };

	return c[rnd() % (sizeof(c) / sizeof(c[0]))];
}

/* Random counts (zeros, primes), blocks in random order with random gaps. */
static void vplan_random(struct vplan *v, unsigned int n)
{
	unsigned int i, j, k, order[NDEV];

	memset(v, 0, sizeof(*v));
	v->t = dtypes[rnd() % (sizeof(dtypes) / sizeof(dtypes[0]))];
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			v->sc[i][j] = pick_count();
			v->rc[j][i] = v->sc[i][j];
		}
	for (i = 0; i < n; i++) {
		uint64_t at;

		/* receive side: a permutation of the blocks, gaps of 0 to 3 elements */
		for (j = 0; j < n; j++)
			order[j] = j;
		for (j = n - 1; j > 0; j--) {
			unsigned int x = (unsigned int)(rnd() % (j + 1)), t = order[j];

			order[j] = order[x];
			order[x] = t;
		}
		for (at = 0, k = 0; k < n; k++) {
			at += rnd() % 4;
			v->rd[i][order[k]] = at;
			at += v->rc[i][order[k]];
		}
		/* send side: likewise, but one block in four reads another's (allowed) */
		for (at = 0, j = 0; j < n; j++) {
			if (j && rnd() % 4 == 0) {
				v->sd[i][j] = v->sd[i][rnd() % j];
				continue;
			}
			at += rnd() % 4;
			v->sd[i][j] = at;
			at += v->sc[i][j];
		}
	}
}

static void vplan_oracle(FIXTURE_DATA(ops) *self, const struct vplan *v, unsigned int n)
{
	uint64_t es = (uint64_t)accel_dtype_size(v->t);
	unsigned int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)	/* rank i's block for j -> rank j's block from i */
			memcpy(self->want[j] + v->rd[j][i] * es, self->s[i] + v->sd[i][j] * es,
			       v->sc[i][j] * es);
}

static int vplan_issue(FIXTURE_DATA(ops) *self, struct accel_comm *c, unsigned int r,
		       const struct vplan *v, struct accel_event *ev)
{
	return accel_alltoallv(accel_buffer_va(self->sbuf[r]), v->sc[r], v->sd[r],
			       accel_buffer_va(self->rbuf[r]), v->rc[r], v->rd[r], v->t, c,
			       self->q[r], ev);
}

static int vplan_run(struct __test_metadata *_metadata, FIXTURE_DATA(ops) *self,
		     struct accel_comm **comms, unsigned int n, const struct vplan *v)
{
	struct accel_event ev[NDEV];
	unsigned int r;
	int ret;

	fill(self, n);
	vplan_oracle(self, v, n);
	for (r = 0; r < n; r++) {
		ret = vplan_issue(self, comms[r], r, v, &ev[r]);
		if (ret)
			return ret;
	}
	ret = wait_all(comms, ev, n);
	return ret ? ret : compare(_metadata, self, n, "alltoallv");
}

/* Random alltoallv on 1 to 4 ranks against the oracle. */
TEST_F_TIMEOUT(ops, alltoallv_random, 600)
{
	struct accel_comm *comms[NDEV];
	struct vplan v;
	unsigned int n, it, iters = lib_on_sim() ? 60 : 15;

	seed_rng("alltoallv_random");
	for (n = 1; n <= NDEV; n++) {
		ASSERT_EQ(0, comm_make(self, n, 0, 0, comms));
		for (it = 0; it < iters; it++) {
			vplan_random(&v, n);
			ASSERT_EQ(0, vplan_run(_metadata, self, comms, n, &v))
				TH_LOG("%u ranks, round %u, dtype %u", n, it, v.t);
		}
		comm_free(comms, n);
	}
}

/* All counts 0, and one single element from one rank to another. */
TEST_F(ops, alltoallv_zero_and_one)
{
	struct accel_comm *comms[NDEV];
	struct vplan v;

	seed_rng("alltoallv_zero_and_one");
	ASSERT_EQ(0, comm_make(self, 3, 0, 0, comms));
	memset(&v, 0, sizeof(v));
	v.t = ACCEL_DTYPE_I64;
	ASSERT_EQ(0, vplan_run(_metadata, self, comms, 3, &v));
	v.sc[2][0] = v.rc[0][2] = 1;
	v.rd[0][2] = 5;
	v.sd[2][0] = 9;
	ASSERT_EQ(0, vplan_run(_metadata, self, comms, 3, &v));
	comm_free(comms, 3);
}

/*
 * Counts that do not agree pairwise: rank 2 sends 5 elements to rank 0,
 * which expects 4 from it. The later caller's call is -EPROTO, every
 * rank's operation fails with -EPROTO long before the timeout, and the
 * reports name the other rank.
 */
TEST_F(ops, alltoallv_counts_mismatch)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev[NDEV];
	struct accel_comm_error e;
	struct vplan v;
	uint64_t t0 = vaccel_now_ms();
	unsigned int r, i, j;

	ASSERT_EQ(0, comm_make(self, 3, 0, 20000, comms));
	memset(&v, 0, sizeof(v));
	v.t = ACCEL_DTYPE_I32;
	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++) {
			v.sc[i][j] = v.rc[j][i] = 4;
			v.sd[i][j] = v.rd[j][i] = 8 * j;
			v.rd[j][i] = 8 * i;
		}
	v.sc[2][0] = 5;
	for (r = 0; r < 3; r++)
		ASSERT_EQ(r == 2 ? -EPROTO : 0, vplan_issue(self, comms[r], r, &v, &ev[r]));
	for (r = 0; r < 2; r++)
		EXPECT_EQ(-EPROTO, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
	for (r = 0; r < 3; r++) {
		EXPECT_EQ(-EPROTO, accel_comm_get_async_error(comms[r], &e, sizeof(e)));
		EXPECT_EQ(ACCEL_COMM_OP_ALLTOALLV, e.op);
		EXPECT_EQ(r == 2 ? 0 : 2, e.peer);
	}
	EXPECT_GT(5000, vaccel_now_ms() - t0);
	comm_free(comms, 3);
}

/* Bad arguments: -EINVAL at the call; the sequence number is not taken. */
TEST_F(ops, alltoallv_bad_arguments)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev;
	struct vplan v, bad;
	uint64_t s = accel_buffer_va(self->sbuf[0]), d = accel_buffer_va(self->rbuf[0]);
	unsigned int i, j;

	seed_rng("alltoallv_bad_arguments");
	ASSERT_EQ(0, comm_make(self, 2, 0, 0, comms));
	memset(&v, 0, sizeof(v));
	v.t = ACCEL_DTYPE_F32;
	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++) {
			v.sc[i][j] = v.rc[j][i] = 100;
			v.sd[i][j] = 100 * j;
			v.rd[j][i] = 100 * i;
		}
	EXPECT_EQ(-EINVAL, accel_alltoallv(s, NULL, v.sd[0], d, v.rc[0], v.rd[0], v.t, comms[0],
					   self->q[0], &ev));
	EXPECT_EQ(-EINVAL, accel_alltoallv(s, v.sc[0], v.sd[0], d, v.rc[0], v.rd[0], v.t, comms[0],
					   self->q[1], &ev));	/* another device's queue */
	EXPECT_EQ(-EINVAL, accel_alltoallv(s, v.sc[0], v.sd[0], d, v.rc[0], v.rd[0],
					   ACCEL_DTYPE_COUNT, comms[0], self->q[0], &ev));
	EXPECT_EQ(-EINVAL, accel_alltoallv(s + 2, v.sc[0], v.sd[0], d, v.rc[0], v.rd[0], v.t,
					   comms[0], self->q[0], &ev));	/* misaligned */
	/* a receive range over a send range (not in place: there is none) */
	EXPECT_EQ(-EINVAL, accel_alltoallv(s, v.sc[0], v.sd[0], s + 4 * 150, v.rc[0], v.rd[0],
					   v.t, comms[0], self->q[0], &ev));
	/* two receive ranges overlap */
	bad = v;
	bad.rd[0][1] = 50;
	EXPECT_EQ(-EINVAL, accel_alltoallv(s, bad.sc[0], bad.sd[0], d, bad.rc[0], bad.rd[0], v.t,
					   comms[0], self->q[0], &ev));
	/* its own block: sends 100 to itself, receives 99 */
	bad = v;
	bad.rc[0][0] = 99;
	EXPECT_EQ(-EINVAL, accel_alltoallv(s, bad.sc[0], bad.sd[0], d, bad.rc[0], bad.rd[0], v.t,
					   comms[0], self->q[0], &ev));
	/* a range that wraps */
	bad = v;
	bad.sd[0][1] = UINT64_MAX / 8;
	EXPECT_EQ(-EINVAL, accel_alltoallv(s, bad.sc[0], bad.sd[0], d, bad.rc[0], bad.rd[0], v.t,
					   comms[0], self->q[0], &ev));
	EXPECT_EQ(0, accel_comm_get_async_error(comms[0], NULL, 0));
	ASSERT_EQ(0, vplan_run(_metadata, self, comms, 2, &v));	/* nothing was taken */
	comm_free(comms, 2);

	/* the ring cannot run it */
	ASSERT_EQ(0, comm_make(self, 2, ACCEL_COMM_ALGO_RING, 0, comms));
	EXPECT_EQ(-EINVAL, vplan_issue(self, comms[0], 0, &v, &ev));
	comm_free(comms, 2);
}

/* Rank 3 never calls: the others fail with -ETIMEDOUT within the timeout + 1 s, naming it. */
TEST_F(ops, alltoallv_skipped_call)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev[NDEV];
	struct accel_comm_error e;
	struct vplan v;
	unsigned int r;
	uint64_t t0, dt;

	seed_rng("alltoallv_skipped_call");
	ASSERT_EQ(0, comm_make(self, 4, 0, 500, comms));
	vplan_random(&v, 4);
	ASSERT_EQ(0, vplan_run(_metadata, self, comms, 4, &v));
	t0 = vaccel_now_ms();
	for (r = 0; r < 3; r++)
		ASSERT_EQ(0, vplan_issue(self, comms[r], r, &v, &ev[r]));
	for (r = 0; r < 3; r++)
		EXPECT_EQ(-ETIMEDOUT, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
	dt = vaccel_now_ms() - t0;
	EXPECT_GT(1500, dt) TH_LOG("the others failed after %llu ms", (unsigned long long)dt);
	for (r = 0; r < 4; r++) {
		EXPECT_EQ(-ETIMEDOUT, accel_comm_get_async_error(comms[r], &e, sizeof(e)));
		EXPECT_EQ(1ull << 3, e.missing);
		EXPECT_EQ(ACCEL_COMM_OP_ALLTOALLV, e.op);
		EXPECT_EQ(1, e.seq);
	}
	comm_free(comms, 4);
}

struct aborter {
	struct accel_comm *comm;
	int ret;
};

static void *abort_later(void *arg)
{
	struct aborter *a = arg;

	vaccel_msleep(100);
	a->ret = accel_comm_abort(a->comm);
	return NULL;
}

/* Rank 1 aborts from another thread while ranks 0 and 2 wait in an alltoallv rank 3 skips. */
TEST_F(ops, alltoallv_abort)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev[NDEV];
	struct accel_comm_error e;
	struct aborter ab = { .ret = 1 };
	struct vplan v;
	pthread_t th;
	unsigned int r;
	uint64_t t0;

	seed_rng("alltoallv_abort");
	ASSERT_EQ(0, comm_make(self, 4, 0, 30000, comms));
	vplan_random(&v, 4);
	for (r = 0; r < 3; r++)
		ASSERT_EQ(0, vplan_issue(self, comms[r], r, &v, &ev[r]));
	ab.comm = comms[1];
	t0 = vaccel_now_ms();
	ASSERT_EQ(0, pthread_create(&th, NULL, abort_later, &ab));
	EXPECT_EQ(-ECONNABORTED, accel_comm_wait(comms[0], &ev[0], WAIT_NS));
	pthread_join(th, NULL);
	EXPECT_EQ(0, ab.ret);
	EXPECT_EQ(-ECANCELED, accel_comm_wait(comms[1], &ev[1], WAIT_NS));
	EXPECT_EQ(-ECONNABORTED, accel_comm_wait(comms[2], &ev[2], WAIT_NS));
	EXPECT_GT(5000, vaccel_now_ms() - t0);
	EXPECT_EQ(-ECONNABORTED, accel_comm_get_async_error(comms[2], &e, sizeof(e)));
	EXPECT_EQ(1, e.peer);
	EXPECT_EQ(-ECONNABORTED, vplan_issue(self, comms[3], 3, &v, &ev[3]));
	comm_free(comms, 4);
}

/* --- send and receive --- */

/*
 * Iterations of the long tests: @dflt natively on the in-process device, a
 * tenth in the VM, a hundredth on the debug kernel; ACCEL_COMM_TEST_ITERS
 * overrides (as libaccel_comm_test). The count is printed.
 */
static unsigned int iterations(unsigned int dflt)
{
	const char *s = getenv("ACCEL_COMM_TEST_ITERS");
	const char *scale = getenv("KSFT_TIMEOUT_SCALE");
	unsigned int n = dflt;

	if (s && atoi(s) > 0)
		n = (unsigned int)atoi(s);
	else if (!lib_on_sim())
		n = scale && atoi(scale) > 1 ? dflt / 100 : dflt / 10;
	if (!n)
		n = 1;
	ksft_print_msg("%u iterations\n", n);
	return n;
}

struct msg {
	unsigned int src, dst;
	uint64_t soff, roff, count;	/* offsets in bytes */
	enum accel_dtype t;
};

#define MAXMSG	256

struct msgs {
	struct msg m[MAXMSG];
	unsigned int n;
	uint64_t rend[NDEV];	/* receive space used per rank */
};

/* Add a message of @count elements (fewer if the receiver's buffer is full). */
static void msg_add(struct msgs *ms, unsigned int src, unsigned int dst, uint64_t count,
		    enum accel_dtype t)
{
	uint64_t es = (uint64_t)accel_dtype_size(t), roff, soff;

	roff = (ms->rend[dst] + es - 1) / es * es + es * (rnd() % 3);
	if (roff + count * es > BUFSZ)
		count = 0;
	soff = (rnd() % ((BUFSZ - count * es) / es + 1)) * es;
	ms->m[ms->n++] = (struct msg){ .src = src, .dst = dst, .soff = soff, .roff = roff,
				       .count = count, .t = t };
	ms->rend[dst] = roff + count * es;
}

static void msgs_oracle(FIXTURE_DATA(ops) *self, const struct msgs *ms)
{
	unsigned int i;

	for (i = 0; i < ms->n; i++) {
		const struct msg *m = &ms->m[i];

		memcpy(self->want[m->dst] + m->roff, self->s[m->src] + m->soff,
		       m->count * (uint64_t)accel_dtype_size(m->t));
	}
}

/*
 * Issue every rank's sends and receives (each rank in turn, its calls in
 * the list's order, so every pair's order is the same on both ends); in
 * one group, or each call a group of its own; rank r on device @map[r]
 * (NULL: r). 0, or the first call's error.
 */
static int msgs_issue_on(FIXTURE_DATA(ops) *self, struct accel_comm **comms, unsigned int n,
			 const unsigned int *map, const struct msgs *ms, bool group,
			 struct accel_event *ev, bool *has)
{
	unsigned int r, i;
	int ret = 0, ret2;

	memset(has, 0, n * sizeof(*has));
	if (group)
		ret = accel_group_start();
	for (r = 0; r < n && !ret; r++)
		for (i = 0; i < ms->n && !ret; i++) {
			const struct msg *m = &ms->m[i];

			unsigned int d = map ? map[r] : r;

			if (m->src == r) {
				ret = accel_send(accel_buffer_va(self->sbuf[d]) + m->soff, m->count,
						 m->t, (int)m->dst, comms[r], self->q[d], &ev[r]);
				has[r] = true;
			}
			if (!ret && m->dst == r) {
				ret = accel_recv(accel_buffer_va(self->rbuf[d]) + m->roff, m->count,
						 m->t, (int)m->src, comms[r], self->q[d], &ev[r]);
				has[r] = true;
			}
		}
	if (group) {
		ret2 = accel_group_end();
		ret = ret ? ret : ret2;
	}
	return ret;
}

static int msgs_issue(FIXTURE_DATA(ops) *self, struct accel_comm **comms, unsigned int n,
		      const struct msgs *ms, bool group, struct accel_event *ev, bool *has)
{
	return msgs_issue_on(self, comms, n, NULL, ms, group, ev, has);
}

static int msgs_run(struct __test_metadata *_metadata, FIXTURE_DATA(ops) *self,
		    struct accel_comm **comms, unsigned int n, const struct msgs *ms, bool group)
{
	struct accel_event ev[NDEV];
	bool has[NDEV];
	unsigned int r;
	int ret;

	fill(self, n);
	msgs_oracle(self, ms);
	ret = msgs_issue(self, comms, n, ms, group, ev, has);
	for (r = 0; r < n && !ret; r++)
		if (has[r])
			ret = accel_comm_wait(comms[r], &ev[r], WAIT_NS);
	return ret ? ret : compare(_metadata, self, n, "send/recv");
}

static enum accel_dtype pick_dtype(void)
{
	return dtypes[rnd() % (sizeof(dtypes) / sizeof(dtypes[0]))];
}

/* A ring both ways in one group, 2 to 4 ranks, random sizes (up to more chunks than slots). */
TEST_F_TIMEOUT(ops, p2p_ring_both_directions, 600)
{
	struct accel_comm *comms[NDEV];
	struct msgs ms;
	unsigned int n, r, it, iters = lib_on_sim() ? 40 : 10;

	seed_rng("p2p_ring_both_directions");
	for (n = 2; n <= NDEV; n++) {
		ASSERT_EQ(0, comm_make(self, n, 0, 0, comms));
		for (it = 0; it < iters; it++) {
			memset(&ms, 0, sizeof(ms));
			for (r = 0; r < n; r++) {
				enum accel_dtype t = pick_dtype();

				msg_add(&ms, r, (r + 1) % n, pick_count(), t);
				msg_add(&ms, r, (r + n - 1) % n, pick_count(), t);
			}
			ASSERT_EQ(0, msgs_run(_metadata, self, comms, n, &ms, true))
				TH_LOG("%u ranks, round %u", n, it);
		}
		comm_free(comms, n);
	}
}

/* Every ordered pair, itself included, in one group. */
TEST_F_TIMEOUT(ops, p2p_all_pairs, 600)
{
	struct accel_comm *comms[NDEV];
	struct msgs ms;
	unsigned int i, j, it, iters = lib_on_sim() ? 20 : 5;

	seed_rng("p2p_all_pairs");
	ASSERT_EQ(0, comm_make(self, 4, 0, 0, comms));
	for (it = 0; it < iters; it++) {
		memset(&ms, 0, sizeof(ms));
		for (i = 0; i < 4; i++)
			for (j = 0; j < 4; j++)
				msg_add(&ms, i, j, pick_count(), pick_dtype());
		ASSERT_EQ(0, msgs_run(_metadata, self, comms, 4, &ms, true)) TH_LOG("round %u", it);
	}
	comm_free(comms, 4);
}

/* A rank sends to itself: 1 rank, and 3 ranks with other pairs in the same group. */
TEST_F(ops, p2p_self)
{
	struct accel_comm *comms[NDEV];
	struct msgs ms;

	seed_rng("p2p_self");
	ASSERT_EQ(0, comm_make(self, 1, 0, 0, comms));
	memset(&ms, 0, sizeof(ms));
	msg_add(&ms, 0, 0, 2053, ACCEL_DTYPE_I64);
	msg_add(&ms, 0, 0, 0, ACCEL_DTYPE_I64);
	msg_add(&ms, 0, 0, 7, ACCEL_DTYPE_U8);
	ASSERT_EQ(0, msgs_run(_metadata, self, comms, 1, &ms, true));
	ASSERT_EQ(0, msgs_run(_metadata, self, comms, 1, &ms, true));
	comm_free(comms, 1);

	ASSERT_EQ(0, comm_make(self, 3, 0, 0, comms));
	memset(&ms, 0, sizeof(ms));
	msg_add(&ms, 1, 1, 1031, ACCEL_DTYPE_F32);
	msg_add(&ms, 0, 1, 509, ACCEL_DTYPE_F32);
	msg_add(&ms, 2, 2, 13, ACCEL_DTYPE_F16);
	msg_add(&ms, 1, 0, 61, ACCEL_DTYPE_F16);
	ASSERT_EQ(0, msgs_run(_metadata, self, comms, 3, &ms, true));
	comm_free(comms, 3);
}

/* Many pairs (and several messages per pair) in one group. */
TEST_F_TIMEOUT(ops, p2p_many_pairs_one_group, 600)
{
	struct accel_comm *comms[NDEV];
	struct msgs ms;
	unsigned int i, it, iters = lib_on_sim() ? 10 : 3;

	seed_rng("p2p_many_pairs_one_group");
	ASSERT_EQ(0, comm_make(self, 4, 0, 0, comms));
	for (it = 0; it < iters; it++) {
		memset(&ms, 0, sizeof(ms));
		for (i = 0; i < 200; i++)
			msg_add(&ms, (unsigned int)(rnd() % 4), (unsigned int)(rnd() % 4),
				pick_count() / 4, pick_dtype());
		ASSERT_EQ(0, msgs_run(_metadata, self, comms, 4, &ms, true)) TH_LOG("round %u", it);
	}
	comm_free(comms, 4);
}

/*
 * Without a group, one thread: a send and its receive, each a group of its
 * own, in both directions, interleaved with alltoallv on the same ranks.
 */
TEST_F(ops, p2p_without_group_and_collectives)
{
	struct accel_comm *comms[NDEV];
	struct msgs ms;
	struct vplan v;
	unsigned int it;

	seed_rng("p2p_without_group_and_collectives");
	ASSERT_EQ(0, comm_make(self, 3, 0, 0, comms));
	for (it = 0; it < 10; it++) {
		memset(&ms, 0, sizeof(ms));
		msg_add(&ms, 0, 1, pick_count(), ACCEL_DTYPE_I32);
		msg_add(&ms, 2, 0, pick_count(), ACCEL_DTYPE_I32);
		msg_add(&ms, 1, 2, pick_count(), ACCEL_DTYPE_I32);
		ASSERT_EQ(0, msgs_run(_metadata, self, comms, 3, &ms, false))
			TH_LOG("round %u", it);
		vplan_random(&v, 3);
		ASSERT_EQ(0, vplan_run(_metadata, self, comms, 3, &v)) TH_LOG("round %u", it);
	}
	comm_free(comms, 3);
}

/*
 * Seed 003's pattern with sends and receives: two ranks exchange 3 chunks
 * each way through 2 slots in one group, many times (queued back to back,
 * waited every 100), the data checked every 1000.
 */
TEST_F_TIMEOUT(ops, p2p_bidirectional_exchange, 900)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev[2];
	struct msgs ms;
	unsigned int it, r, iters = iterations(10000);
	bool has[2], pending = false;

	seed_rng("p2p_bidirectional_exchange");
	ASSERT_EQ(0, comm_make(self, 2, 0, 10000, comms));
	memset(&ms, 0, sizeof(ms));
	msg_add(&ms, 0, 1, 3 * CHUNK / 4, ACCEL_DTYPE_I32);
	msg_add(&ms, 1, 0, 3 * CHUNK / 4, ACCEL_DTYPE_I32);
	for (it = 0; it < iters; it++) {
		if (it % 1000 == 0 || it + 1 == iters) {
			for (r = 0; r < 2 && pending; r++)
				ASSERT_EQ(0, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
			pending = false;
			ASSERT_EQ(0, msgs_run(_metadata, self, comms, 2, &ms, true))
				TH_LOG("iteration %u", it);
			continue;
		}
		ASSERT_EQ(0, msgs_issue(self, comms, 2, &ms, true, ev, has))
			TH_LOG("iteration %u", it);
		pending = true;
		if (it % 100 == 0) {
			for (r = 0; r < 2; r++)
				ASSERT_EQ(0, accel_comm_wait(comms[r], &ev[r], WAIT_NS))
					TH_LOG("iteration %u", it);
			pending = false;
		}
	}
	comm_free(comms, 2);
}

/*
 * The limit on sends and receives that wait for their match, against a
 * model, in random programs: rank 0 sends to ranks 1 and 2, which only
 * receive (so no order of the calls can deadlock the queues), in groups
 * of 1 to 4 calls of any of the ranks from one thread, or single calls,
 * with the limit lowered to LIM. The model keeps, per stream, how many
 * calls of which direction wait, and admits a group as the library must:
 * rank by rank in the group's order of first appearance, its calls that
 * would be posted (not match a waiting call) summed over the group's
 * ranks so far, with those already waiting, at most LIM; else -EAGAIN and
 * nothing changes. Calls that only match are always admitted, however
 * full the table (a rank that is behind catches up). Every message's
 * count is fixed by its stream and position, so matched calls agree; the
 * receive buffers are checked byte for byte at the end, after the calls
 * that match everything still waiting.
 */
#define LIM		6
#define MSG		64	/* bytes per message slot: up to 16 u32 */

struct p2p_model {
	int w[3];			/* stream 0->s: > 0 sends wait, < 0 receives */
	unsigned int ns[3], nr[3];	/* calls admitted per stream and direction */
};

static uint32_t model_count(unsigned int s, unsigned int k)
{
	return (uint32_t)((s * 7919u + k * 104729u) % 17);	/* 0 to 16 elements */
}

/* calls of the group: stream (1, 2) and direction; rank is 0 for a send, s for a receive */
struct p2p_mcall {
	unsigned int s;
	bool send;
};

static unsigned int mcall_rank(const struct p2p_mcall *c)
{
	return c->send ? 0 : c->s;
}

/* Whether the library must admit the group @gc[0, @n). */
static bool model_admits(const struct p2p_model *m, const struct p2p_mcall *gc, unsigned int n)
{
	unsigned int order[3], nord = 0, waiting = 0, sum = 0, i, j, s;

	for (s = 1; s <= 2; s++)
		waiting += (unsigned int)abs(m->w[s]);
	for (i = 0; i < n; i++) {
		for (j = 0; j < nord && order[j] != mcall_rank(&gc[i]); j++)
			;
		if (j == nord)
			order[nord++] = mcall_rank(&gc[i]);
	}
	for (j = 0; j < nord; j++) {
		int opp[3] = { 0, 0, 0 };

		for (s = 1; s <= 2; s++)	/* against the table before the group */
			opp[s] = order[j] == 0 ? (m->w[s] < 0 ? -m->w[s] : 0)
					       : (m->w[s] > 0 ? m->w[s] : 0);
		for (i = 0; i < n; i++) {
			if (mcall_rank(&gc[i]) != order[j])
				continue;
			if (opp[gc[i].s])
				opp[gc[i].s]--;
			else
				sum++;
		}
		if (waiting + sum > LIM)
			return false;
	}
	return true;
}

static int model_issue(FIXTURE_DATA(ops) *self, struct accel_comm **comms,
		       struct p2p_model *m, const struct p2p_mcall *gc, unsigned int n,
		       bool group, struct accel_event *last)
{
	struct accel_event ev[4];
	unsigned int ns[3], nr[3], i;
	int ret = 0, r2;

	memcpy(ns, m->ns, sizeof(ns));
	memcpy(nr, m->nr, sizeof(nr));
	if (group)
		accel_group_start();
	for (i = 0; i < n && !ret; i++) {
		unsigned int s = gc[i].s, k = gc[i].send ? ns[s]++ : nr[s]++;
		uint32_t count = model_count(s, k);

		if (gc[i].send)
			ret = accel_send(accel_buffer_va(self->sbuf[0]) + (s - 1) * (BUFSZ / 2) +
					 k * MSG, count, ACCEL_DTYPE_U32, (int)s, comms[0],
					 self->q[0], &ev[i]);
		else
			ret = accel_recv(accel_buffer_va(self->rbuf[s]) + k * MSG, count,
					 ACCEL_DTYPE_U32, 0, comms[s], self->q[s], &ev[i]);
	}
	if (group) {
		r2 = accel_group_end();
		ret = ret ? ret : r2;
	}
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		unsigned int s = gc[i].s;

		last[mcall_rank(&gc[i])] = ev[i];
		if (gc[i].send) {
			m->ns[s]++;
			m->w[s]++;
		} else {
			m->nr[s]++;
			m->w[s]--;
		}
	}
	return 0;
}

TEST_F_TIMEOUT(ops, p2p_unmatched_limit_random_against_a_model, 300)
{
	struct accel_comm *comms[NDEV];
	struct accel_event last[3];
	bool has[3] = { false, false, false };
	struct p2p_model m;
	struct p2p_mcall gc[4];
	unsigned int it, n, i, s, k, admitted = 0, refused = 0, iters = lib_on_sim() ? 150 : 60;

	seed_rng("p2p_unmatched_limit_random_against_a_model");
	fill(self, 3);
	acc_p2p_test_pending = LIM;
	ASSERT_EQ(0, comm_make(self, 3, 0, 30000, comms));
	memset(&m, 0, sizeof(m));
	for (it = 0; it < iters; it++) {
		bool group = rnd() % 4 != 0, want;
		int ret;

		n = group ? 1 + (unsigned int)(rnd() % 4) : 1;
		for (i = 0; i < n; i++) {
			gc[i].s = 1 + (unsigned int)(rnd() % 2);
			gc[i].send = rnd() % 2;
		}
		want = model_admits(&m, gc, n);
		ret = model_issue(self, comms, &m, gc, n, group, last);
		ASSERT_EQ(want ? 0 : -EAGAIN, ret)
			TH_LOG("step %u: %u calls (%s), waiting %d/%d", it, n,
			       group ? "group" : "alone", m.w[1], m.w[2]);
		if (!ret) {
			admitted++;
			for (i = 0; i < n; i++)
				has[mcall_rank(&gc[i])] = true;
		} else {
			refused++;
		}
	}
	/* what still waits: its matches, one call each; each is admitted */
	for (s = 1; s <= 2; s++) {
		while (m.w[s]) {
			gc[0].s = s;
			gc[0].send = m.w[s] < 0;
			ASSERT_EQ(0, model_issue(self, comms, &m, gc, 1, false, last));
			has[mcall_rank(&gc[0])] = true;
		}
	}
	for (i = 0; i < 3; i++)
		if (has[i])
			ASSERT_EQ(0, accel_comm_wait(comms[i], &last[i], WAIT_NS)) TH_LOG("rank %u", i);
	for (s = 1; s <= 2; s++) {
		ASSERT_EQ(m.ns[s], m.nr[s]);
		for (k = 0; k < m.nr[s]; k++)
			memcpy(self->want[s] + k * MSG,
			       self->s[0] + (s - 1) * (BUFSZ / 2) + k * MSG, model_count(s, k) * 4);
	}
	ASSERT_EQ(0, compare(_metadata, self, 3, "sends and receives"));
	ksft_print_msg("%u groups admitted, %u refused (-EAGAIN)\n", admitted, refused);
	EXPECT_LT(0, refused);
	comm_free(comms, 3);
	acc_p2p_test_pending = 0;
}

/* Every rank's report of a failure: @code, and @peer for the ranks listed. */
static void expect_all(struct __test_metadata *_metadata, struct accel_comm **comms,
		       unsigned int n, int code)
{
	struct accel_comm_error e;
	unsigned int r;

	for (r = 0; r < n; r++) {
		EXPECT_EQ(code, accel_comm_get_async_error(comms[r], &e, sizeof(e)));
		EXPECT_EQ(code, e.error);
	}
}

/*
 * A send and a receive that differ (kind 0: count, 1: dtype): the later
 * call fails -EPROTO, and the other rank's operation fails -EPROTO too,
 * long before the timeout; the reports name the other rank.
 */
static void p2p_mismatch(struct __test_metadata *_metadata, FIXTURE_DATA(ops) *self, int kind)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev[NDEV];
	struct accel_comm_error e;
	uint64_t t0 = vaccel_now_ms();

	ASSERT_EQ(0, comm_make(self, 3, 0, 20000, comms));
	ASSERT_EQ(0, accel_send(accel_buffer_va(self->sbuf[0]), 64, ACCEL_DTYPE_F32, 1, comms[0],
				self->q[0], &ev[0]));
	ASSERT_EQ(-EPROTO, accel_recv(accel_buffer_va(self->rbuf[1]), kind ? 64 : 65,
				      kind ? ACCEL_DTYPE_I32 : ACCEL_DTYPE_F32, 0, comms[1],
				      self->q[1], &ev[1]));
	EXPECT_EQ(-EPROTO, accel_comm_wait(comms[0], &ev[0], WAIT_NS));
	expect_all(_metadata, comms, 3, -EPROTO);
	EXPECT_EQ(-EPROTO, accel_comm_get_async_error(comms[0], &e, sizeof(e)));
	EXPECT_EQ(1, e.peer);
	EXPECT_EQ(-EPROTO, accel_comm_get_async_error(comms[1], &e, sizeof(e)));
	EXPECT_EQ(0, e.peer);
	EXPECT_GT(5000, vaccel_now_ms() - t0);
	EXPECT_EQ(-EPROTO, accel_send(accel_buffer_va(self->sbuf[2]), 1, ACCEL_DTYPE_F32, 0,
				      comms[2], self->q[2], &ev[2]));	/* sticky */
	comm_free(comms, 3);
}

TEST_F(ops, p2p_mismatch_count) { p2p_mismatch(_metadata, self, 0); }
TEST_F(ops, p2p_mismatch_dtype) { p2p_mismatch(_metadata, self, 1); }

/*
 * A send and its receive on different sides of a collective: rank 0
 * sends, then calls the barrier; rank 1 calls the barrier, then receives.
 * The barrier's gate finds the send unmatched (-EPROTO at the last
 * barrier call) before any data of the barrier moves; every rank fails
 * -EPROTO. Then the other order: rank 1 is past the barrier when rank 0
 * sends: -EPROTO at the send.
 */
TEST_F(ops, p2p_mismatch_across_collective)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev[NDEV], bev[NDEV];
	uint64_t t0 = vaccel_now_ms();

	ASSERT_EQ(0, comm_make(self, 2, 0, 20000, comms));
	ASSERT_EQ(0, accel_send(accel_buffer_va(self->sbuf[0]), 64, ACCEL_DTYPE_F32, 1, comms[0],
				self->q[0], &ev[0]));
	ASSERT_EQ(0, accel_barrier(comms[0], self->q[0], &bev[0]));
	ASSERT_EQ(-EPROTO, accel_barrier(comms[1], self->q[1], &bev[1]));
	EXPECT_EQ(-EPROTO, accel_recv(accel_buffer_va(self->rbuf[1]), 64, ACCEL_DTYPE_F32, 0,
				      comms[1], self->q[1], &ev[1]));
	EXPECT_EQ(-EPROTO, accel_comm_wait(comms[0], &bev[0], WAIT_NS));
	expect_all(_metadata, comms, 2, -EPROTO);
	EXPECT_GT(5000, vaccel_now_ms() - t0);
	comm_free(comms, 2);

	ASSERT_EQ(0, open_queues(self));
	ASSERT_EQ(0, comm_make(self, 2, 0, 20000, comms));
	ASSERT_EQ(0, accel_barrier(comms[1], self->q[1], &bev[1]));
	EXPECT_EQ(-EPROTO, accel_send(accel_buffer_va(self->sbuf[0]), 64, ACCEL_DTYPE_F32, 1,
				      comms[0], self->q[0], &ev[0]));
	EXPECT_EQ(-EPROTO, accel_comm_wait(comms[1], &bev[1], WAIT_NS));
	expect_all(_metadata, comms, 2, -EPROTO);
	comm_free(comms, 2);
}

/*
 * A send whose receive never comes, and a receive whose send never comes:
 * -ETIMEDOUT within the timeout + 1 s, the report naming the peer (the
 * receiver: waiting for its credit; the sender: waiting for its data).
 */
TEST_F(ops, p2p_timeout_names_the_peer)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev;
	struct accel_comm_error e;
	uint64_t t0, dt;

	ASSERT_EQ(0, comm_make(self, 3, 0, 500, comms));
	t0 = vaccel_now_ms();
	ASSERT_EQ(0, accel_send(accel_buffer_va(self->sbuf[0]), 10, ACCEL_DTYPE_F32, 2, comms[0],
				self->q[0], &ev));
	EXPECT_EQ(-ETIMEDOUT, accel_comm_wait(comms[0], &ev, WAIT_NS));
	dt = vaccel_now_ms() - t0;
	EXPECT_GT(1500, dt) TH_LOG("failed after %llu ms", (unsigned long long)dt);
	EXPECT_EQ(-ETIMEDOUT, accel_comm_get_async_error(comms[0], &e, sizeof(e)));
	EXPECT_EQ(2, e.peer);
	EXPECT_EQ(1ull << 2, e.missing);
	EXPECT_EQ(ACCEL_COMM_OP_SEND, e.op);
	EXPECT_EQ(ACCEL_COMM_PHASE_CREDIT, e.phase);
	comm_free(comms, 3);

	ASSERT_EQ(0, open_queues(self));
	ASSERT_EQ(0, comm_make(self, 3, 0, 500, comms));
	t0 = vaccel_now_ms();
	ASSERT_EQ(0, accel_recv(accel_buffer_va(self->rbuf[2]), 10, ACCEL_DTYPE_F32, 1, comms[2],
				self->q[2], &ev));
	EXPECT_EQ(-ETIMEDOUT, accel_comm_wait(comms[2], &ev, WAIT_NS));
	dt = vaccel_now_ms() - t0;
	EXPECT_GT(1500, dt) TH_LOG("failed after %llu ms", (unsigned long long)dt);
	EXPECT_EQ(-ETIMEDOUT, accel_comm_get_async_error(comms[2], &e, sizeof(e)));
	EXPECT_EQ(1, e.peer);
	EXPECT_EQ(1ull << 1, e.missing);
	EXPECT_EQ(ACCEL_COMM_OP_RECV, e.op);
	EXPECT_EQ(ACCEL_COMM_PHASE_RECV, e.phase);
	comm_free(comms, 3);
}

/* Rank 1 aborts while rank 0 waits for a receive. */
TEST_F(ops, p2p_abort)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev;
	struct accel_comm_error e;
	struct aborter ab = { .ret = 1 };
	pthread_t th;
	uint64_t t0 = vaccel_now_ms();

	ASSERT_EQ(0, comm_make(self, 2, 0, 30000, comms));
	ASSERT_EQ(0, accel_recv(accel_buffer_va(self->rbuf[0]), 5000, ACCEL_DTYPE_F32, 1,
				comms[0], self->q[0], &ev));
	ab.comm = comms[1];
	ASSERT_EQ(0, pthread_create(&th, NULL, abort_later, &ab));
	EXPECT_EQ(-ECONNABORTED, accel_comm_wait(comms[0], &ev, WAIT_NS));
	pthread_join(th, NULL);
	EXPECT_EQ(0, ab.ret);
	EXPECT_GT(5000, vaccel_now_ms() - t0);
	EXPECT_EQ(-ECONNABORTED, accel_comm_get_async_error(comms[0], &e, sizeof(e)));
	EXPECT_EQ(1, e.peer);
	EXPECT_EQ(-ECANCELED, accel_send(accel_buffer_va(self->sbuf[1]), 5000, ACCEL_DTYPE_F32, 0,
					 comms[1], self->q[1], &ev));
	comm_free(comms, 2);
}

/* Bad arguments: -EINVAL at the call (or at the group's end), nothing issued or matched. */
TEST_F(ops, p2p_bad_arguments)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev;
	struct msgs ms;
	uint64_t s = accel_buffer_va(self->sbuf[0]), d = accel_buffer_va(self->rbuf[0]);

	seed_rng("p2p_bad_arguments");
	ASSERT_EQ(0, comm_make(self, 2, 0, 0, comms));
	EXPECT_EQ(-EINVAL, accel_group_end());		/* none started */
	EXPECT_EQ(-EINVAL, accel_send(s, 4, ACCEL_DTYPE_F32, 2, comms[0], self->q[0], &ev));
	EXPECT_EQ(-EINVAL, accel_send(s, 4, ACCEL_DTYPE_F32, -1, comms[0], self->q[0], &ev));
	EXPECT_EQ(-EINVAL, accel_send(s, 4, ACCEL_DTYPE_F32, 1, NULL, self->q[0], &ev));
	EXPECT_EQ(-EINVAL, accel_send(s, 4, ACCEL_DTYPE_F32, 1, comms[0], self->q[0], NULL));
	EXPECT_EQ(-EINVAL, accel_recv(d + 1, 4, ACCEL_DTYPE_F32, 1, comms[0], self->q[0], &ev));
	EXPECT_EQ(-EINVAL, accel_recv(d, 4, ACCEL_DTYPE_COUNT, 1, comms[0], self->q[0], &ev));
	EXPECT_EQ(-EINVAL, accel_recv(d, 4, ACCEL_DTYPE_F32, 1, comms[0], self->q[1], &ev));
	EXPECT_EQ(-EINVAL, accel_recv(d, UINT64_MAX / 2, ACCEL_DTYPE_F32, 1, comms[0], self->q[0],
				      &ev));
	/* in a group: another queue for the same rank */
	{
		struct accel_queue_params qp = { .size = sizeof(qp) };
		struct accel_queue *q2;

		ASSERT_EQ(0, accel_queue_create(self->dev[0], &qp, &q2));
		ASSERT_EQ(0, accel_group_start());
		EXPECT_EQ(0, accel_send(s, 4, ACCEL_DTYPE_F32, 0, comms[0], self->q[0], &ev));
		EXPECT_EQ(-EINVAL, accel_recv(d, 4, ACCEL_DTYPE_F32, 0, comms[0], q2, &ev));
		/* a send to itself without its receive: -EINVAL at the end, nothing issued */
		EXPECT_EQ(-EINVAL, accel_group_end());
		accel_queue_destroy(q2);
	}
	/* nested groups: only the outermost end issues */
	ASSERT_EQ(0, accel_group_start());
	ASSERT_EQ(0, accel_group_start());
	EXPECT_EQ(0, accel_send(s, 4, ACCEL_DTYPE_F32, 0, comms[0], self->q[0], &ev));
	EXPECT_EQ(0, accel_recv(d, 5, ACCEL_DTYPE_F32, 0, comms[0], self->q[0], &ev));
	EXPECT_EQ(0, accel_group_end());
	EXPECT_EQ(-EINVAL, accel_group_end());		/* count differs, to itself */
	EXPECT_EQ(0, accel_comm_get_async_error(comms[0], NULL, 0));
	/* nothing was matched or issued: an exchange works */
	memset(&ms, 0, sizeof(ms));
	msg_add(&ms, 0, 1, 1031, ACCEL_DTYPE_F32);
	msg_add(&ms, 1, 0, 7, ACCEL_DTYPE_U8);
	ASSERT_EQ(0, msgs_run(_metadata, self, comms, 2, &ms, true));
	comm_free(comms, 2);
}

/*
 * Overlaps in an eager group: a receive overlapping another operation of
 * its rank is -EINVAL at the end, nothing issued or matched; sends may
 * overlap each other; one send and one receive of the same bytes and dtype
 * is NCCL's in-place sendrecv and exchanges the buffers.
 */
TEST_F(ops, p2p_group_overlaps)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev[2];
	uint64_t s = accel_buffer_va(self->sbuf[0]), d = accel_buffer_va(self->rbuf[0]);
	unsigned int r;

	seed_rng("p2p_group_overlaps");
	ASSERT_EQ(0, comm_make(self, 2, 0, 0, comms));
	/* two receives sharing 8 bytes */
	ASSERT_EQ(0, accel_group_start());
	EXPECT_EQ(0, accel_recv(d, 4, ACCEL_DTYPE_F32, 1, comms[0], self->q[0], &ev[0]));
	EXPECT_EQ(0, accel_recv(d + 8, 4, ACCEL_DTYPE_F32, 1, comms[0], self->q[0], &ev[0]));
	EXPECT_EQ(-EINVAL, accel_group_end());
	/* a receive over part of a send (to itself and another peer) */
	ASSERT_EQ(0, accel_group_start());
	EXPECT_EQ(0, accel_send(d, 16, ACCEL_DTYPE_U8, 1, comms[0], self->q[0], &ev[0]));
	EXPECT_EQ(0, accel_recv(d + 15, 1, ACCEL_DTYPE_U8, 1, comms[0], self->q[0], &ev[0]));
	EXPECT_EQ(-EINVAL, accel_group_end());
	/* the receive sorts first: checked against the send after it */
	ASSERT_EQ(0, accel_group_start());
	EXPECT_EQ(0, accel_recv(d, 16, ACCEL_DTYPE_U8, 1, comms[0], self->q[0], &ev[0]));
	EXPECT_EQ(0, accel_send(d + 15, 1, ACCEL_DTYPE_U8, 1, comms[0], self->q[0], &ev[0]));
	EXPECT_EQ(-EINVAL, accel_group_end());
	/* in place, but a third operation in the rank's part */
	ASSERT_EQ(0, accel_group_start());
	EXPECT_EQ(0, accel_send(d, 4, ACCEL_DTYPE_F32, 1, comms[0], self->q[0], &ev[0]));
	EXPECT_EQ(0, accel_recv(d, 4, ACCEL_DTYPE_F32, 1, comms[0], self->q[0], &ev[0]));
	EXPECT_EQ(0, accel_send(s, 4, ACCEL_DTYPE_F32, 1, comms[0], self->q[0], &ev[0]));
	EXPECT_EQ(-EINVAL, accel_group_end());
	/* the same bytes with another dtype */
	ASSERT_EQ(0, accel_group_start());
	EXPECT_EQ(0, accel_send(d, 4, ACCEL_DTYPE_F32, 1, comms[0], self->q[0], &ev[0]));
	EXPECT_EQ(0, accel_recv(d, 16, ACCEL_DTYPE_U8, 1, comms[0], self->q[0], &ev[0]));
	EXPECT_EQ(-EINVAL, accel_group_end());
	/* a bad rank's part stops the group: the other rank's is not issued either */
	ASSERT_EQ(0, accel_group_start());
	EXPECT_EQ(0, accel_send(s, 4, ACCEL_DTYPE_F32, 0, comms[1], self->q[1], &ev[1]));
	EXPECT_EQ(0, accel_recv(d, 4, ACCEL_DTYPE_F32, 1, comms[0], self->q[0], &ev[0]));
	EXPECT_EQ(0, accel_recv(d + 12, 4, ACCEL_DTYPE_F32, 1, comms[0], self->q[0], &ev[0]));
	EXPECT_EQ(-EINVAL, accel_group_end());
	EXPECT_EQ(0, accel_comm_get_async_error(comms[0], NULL, 0));
	EXPECT_EQ(0, accel_comm_get_async_error(comms[1], NULL, 0));

	/* nothing was matched or issued: in place on both ranks exchanges the buffers */
	fill(self, 2);
	for (r = 0; r < 2; r++) {
		memcpy(self->r[r], self->s[r], 4000);
		memcpy(self->want[1 - r], self->s[r], 4000);
	}
	ASSERT_EQ(0, accel_group_start());
	for (r = 0; r < 2; r++) {
		uint64_t b = accel_buffer_va(self->rbuf[r]);

		EXPECT_EQ(0, accel_send(b, 1000, ACCEL_DTYPE_I32, 1 - (int)r, comms[r],
					self->q[r], &ev[r]));
		EXPECT_EQ(0, accel_recv(b, 1000, ACCEL_DTYPE_I32, 1 - (int)r, comms[r],
					self->q[r], &ev[r]));
	}
	ASSERT_EQ(0, accel_group_end());
	for (r = 0; r < 2; r++)
		ASSERT_EQ(0, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
	EXPECT_EQ(0, compare(_metadata, self, 2, "in-place sendrecv"));
	comm_free(comms, 2);
}

/* --- split --- */

/* A ring both ways and every pair on child @kids (@m ranks, rank j on device map[j]). */
static int child_check(struct __test_metadata *_metadata, FIXTURE_DATA(ops) *self,
		       struct accel_comm **kids, unsigned int m, const unsigned int *map)
{
	struct accel_event ev[NDEV];
	struct msgs ms, dev;
	bool has[NDEV];
	unsigned int i, j;
	int ret;

	memset(&ms, 0, sizeof(ms));
	for (i = 0; i < m; i++)
		for (j = 0; j < m; j++)
			msg_add(&ms, i, j, pick_count(), pick_dtype());
	/* the oracle in device space */
	dev = ms;
	for (i = 0; i < ms.n; i++) {
		dev.m[i].src = map[ms.m[i].src];
		dev.m[i].dst = map[ms.m[i].dst];
	}
	fill(self, NDEV);
	msgs_oracle(self, &dev);
	ret = msgs_issue_on(self, kids, m, map, &ms, true, ev, has);
	for (i = 0; i < m && !ret; i++)
		if (has[i])
			ret = accel_comm_wait(kids[i], &ev[i], WAIT_NS);
	for (i = 0; i < m && !ret; i++)	/* and a barrier */
		ret = accel_barrier(kids[i], self->q[map[i]], &ev[i]);
	for (i = 0; i < m && !ret; i++)
		ret = accel_comm_wait(kids[i], &ev[i], WAIT_NS);
	return ret ? ret : compare(_metadata, self, NDEV, "split child");
}

/* The members of color @c by (key, parent rank): their parent ranks in @map; how many. */
static unsigned int members(const int *color, const int *key, int c, unsigned int *map)
{
	unsigned int m = 0, r, k;

	for (r = 0; r < 4; r++) {
		if (color[r] != c)
			continue;
		for (k = m++; k > 0 && key[map[k - 1]] > key[r]; k--)
			map[k] = map[k - 1];
		map[k] = r;
	}
	return m;
}

static const unsigned int ident[NDEV] = { 0, 1, 2, 3 };

/*
 * Split 4 ranks by @color[r] and @key[r] from one thread in a group: every
 * child's ranks (ordered by (key, parent rank)) and devices, operations on
 * each child and on the parent beside them against the oracle; the
 * resources: the split takes exactly what new communicators of the same
 * devices take (nothing of the parent is imported again), and destroying
 * parent and children, the parent first if @parent_first, gets device
 * memory and objects back to the baseline.
 */
static void split_case(struct __test_metadata *_metadata, FIXTURE_DATA(ops) *self,
		       const int *color, const int *key, bool parent_first)
{
	struct accel_comm *comms[NDEV], *kids[NDEV], *member[NDEV];
	unsigned int r, j, m, map[NDEV];
	uint64_t memA[NDEV], mem0[NDEV], mem1[NDEV], dsplit[NDEV], mem;
	long bosA, bos0, bos1;
	int c;

	seed_rng("split");
	for (r = 0; r < NDEV; r++)
		ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &memA[r]));
	bosA = lib_objects("bos");
	ASSERT_EQ(0, comm_make(self, 4, 0, 0, comms));
	for (r = 0; r < NDEV; r++)
		ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem0[r]));
	bos0 = lib_objects("bos");
	ASSERT_EQ(0, accel_group_start());
	for (r = 0; r < 4; r++)
		ASSERT_EQ(0, accel_comm_split(comms[r], color[r], key[r], &kids[r]));
	ASSERT_EQ(0, accel_group_end());
	for (r = 0; r < NDEV; r++) {
		ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem1[r]));
		dsplit[r] = mem1[r] - mem0[r];
	}
	bos1 = lib_objects("bos");
	for (r = 0; r < 4; r++)
		if (color[r] == ACCEL_COMM_SPLIT_NOCOLOR)
			EXPECT_EQ(NULL, kids[r]);
	for (c = 0; c < 4; c++) {
		m = members(color, key, c, map);
		for (j = 0; j < m; j++) {
			member[j] = kids[map[j]];
			ASSERT_NE(NULL, member[j]);
			EXPECT_EQ((int)m, accel_comm_count(member[j]));
			EXPECT_EQ((int)j, accel_comm_rank(member[j]));
			EXPECT_EQ(self->dev[map[j]], accel_comm_device(member[j]));
		}
		if (m)
			ASSERT_EQ(0, child_check(_metadata, self, member, m, map))
				TH_LOG("color %d", c);
	}
	ASSERT_EQ(0, child_check(_metadata, self, comms, 4, ident));	/* the parent too */
	if (parent_first) {
		comm_free(comms, 4);
		for (c = 0; c < 4; c++) {	/* the children go on without it */
			m = members(color, key, c, map);
			for (j = 0; j < m; j++)
				member[j] = kids[map[j]];
			if (m)
				ASSERT_EQ(0, child_check(_metadata, self, member, m, map));
		}
		comm_free(kids, 4);
	} else {
		comm_free(kids, 4);
		ASSERT_EQ(0, child_check(_metadata, self, comms, 4, ident));
		comm_free(comms, 4);
	}
	for (r = 0; r < NDEV; r++) {
		ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem));
		EXPECT_EQ(memA[r], mem) TH_LOG("device %u", r);
	}
	EXPECT_EQ(bosA, lib_objects_wait("bos", bosA, 5000));

	/*
	 * New communicators of each color's devices, all at once, beside a
	 * parent like the first: they take what the split took. Without the
	 * parent they take more objects: the split's signals land on signal
	 * pages the parent's ranks already have imported into their peers, and
	 * the library imports a page once per device (printed, not asserted).
	 */
	{
		struct accel_comm_params p = { .size = sizeof(p), .chunk_bytes = CHUNK };
		struct accel_comm *fresh[NDEV] = { NULL };
		struct accel_device *devs[NDEV];
		unsigned int nf = 0, pass;
		long b0, b1[2];

		for (pass = 0; pass < 2; pass++) {
			if (pass == 1)
				ASSERT_EQ(0, comm_make(self, 4, 0, 0, comms));
			for (r = 0; r < NDEV; r++)
				ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem0[r]));
			b0 = lib_objects("bos");
			for (nf = 0, c = 0; c < 4; c++) {
				m = members(color, key, c, map);
				for (j = 0; j < m; j++)
					devs[j] = self->dev[map[j]];
				if (m)
					ASSERT_EQ(0, accel_comm_init_all(fresh + nf, m, devs, &p));
				nf += m;
			}
			b1[pass] = lib_objects("bos") - b0;
			for (r = 0; r < NDEV; r++) {
				ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem));
				EXPECT_EQ(dsplit[r], mem - mem0[r]) TH_LOG("device %u", r);
			}
			comm_free(fresh, nf);
			if (pass == 1)
				comm_free(comms, 4);
		}
		ksft_print_msg("split: %ld new objects; the same communicators beside a parent: "
			       "%ld, without one: %ld\n", bos1 - bos0, b1[1], b1[0]);
		EXPECT_EQ(bos1 - bos0, b1[1]);
		EXPECT_EQ(bosA, lib_objects_wait("bos", bosA, 5000));
	}
}

TEST_F_TIMEOUT(ops, split_2x2, 300)
{
	static const int color[] = { 0, 0, 1, 1 }, key[] = { 0, 0, 0, 0 };

	split_case(_metadata, self, color, key, false);
	split_case(_metadata, self, color, key, true);
}

TEST_F_TIMEOUT(ops, split_odd_even_reversed, 300)
{
	static const int color[] = { 0, 1, 0, 1 }, key[] = { 5, 5, -2, 1 };

	split_case(_metadata, self, color, key, true);
	split_case(_metadata, self, color, key, false);
}

TEST_F_TIMEOUT(ops, split_nocolor, 300)
{
	static const int color[] = { 3, ACCEL_COMM_SPLIT_NOCOLOR, 3, 3 }, key[] = { 2, 0, 1, 0 };

	split_case(_metadata, self, color, key, false);
}

struct splitter {
	struct accel_comm *comm, *out;
	int color, key, ret;
};

static void *split_thread(void *arg)
{
	struct splitter *s = arg;

	s->ret = accel_comm_split(s->comm, s->color, s->key, &s->out);
	return NULL;
}

/*
 * Outside a group: a thread per rank, each call returns once every rank
 * called. A rank that never calls: the others fail -ETIMEDOUT after the
 * parent's timeout, nothing is made, and the parent goes on (a split then
 * works). An abort ends a waiting split at once.
 */
TEST_F_TIMEOUT(ops, split_threads_timeout_abort, 300)
{
	struct accel_comm *comms[NDEV];
	struct splitter sp[NDEV];
	pthread_t th[NDEV];
	struct aborter ab = { .ret = 1 };
	pthread_t ath;
	unsigned int r;
	uint64_t t0, dt;

	seed_rng("split_threads_timeout_abort");
	ASSERT_EQ(0, comm_make(self, 4, 0, 300, comms));
	for (r = 0; r < 4; r++) {
		sp[r] = (struct splitter){ .comm = comms[r], .color = (int)(r % 2), .key = 0,
					   .ret = 1 };
		ASSERT_EQ(0, pthread_create(&th[r], NULL, split_thread, &sp[r]));
	}
	for (r = 0; r < 4; r++)
		pthread_join(th[r], NULL);
	for (r = 0; r < 4; r++) {
		EXPECT_EQ(0, sp[r].ret);
		EXPECT_EQ(2, accel_comm_count(sp[r].out));
		EXPECT_EQ((int)(r / 2), accel_comm_rank(sp[r].out));
	}
	for (r = 0; r < 4; r++)
		accel_comm_destroy(sp[r].out);

	/* rank 3 never calls */
	t0 = vaccel_now_ms();
	for (r = 0; r < 3; r++) {
		sp[r] = (struct splitter){ .comm = comms[r], .color = 0, .ret = 1 };
		ASSERT_EQ(0, pthread_create(&th[r], NULL, split_thread, &sp[r]));
	}
	for (r = 0; r < 3; r++)
		pthread_join(th[r], NULL);
	dt = vaccel_now_ms() - t0;
	for (r = 0; r < 3; r++) {
		EXPECT_EQ(-ETIMEDOUT, sp[r].ret);
		EXPECT_EQ(NULL, sp[r].out);
	}
	EXPECT_GT(1300, dt) TH_LOG("after %llu ms", (unsigned long long)dt);
	EXPECT_EQ(0, accel_comm_get_async_error(comms[0], NULL, 0));	/* not sticky */
	{
		struct accel_comm *kids[NDEV];

		ASSERT_EQ(0, accel_group_start());
		for (r = 0; r < 4; r++)
			ASSERT_EQ(0, accel_comm_split(comms[r], 0, 0, &kids[r]));
		ASSERT_EQ(0, accel_group_end());
		ASSERT_EQ(0, child_check(_metadata, self, kids, 4, ident));
		comm_free(kids, 4);
	}
	comm_free(comms, 4);

	/* an abort while ranks 0 and 1 wait */
	ASSERT_EQ(0, comm_make(self, 4, 0, 30000, comms));
	t0 = vaccel_now_ms();
	for (r = 0; r < 2; r++) {
		sp[r] = (struct splitter){ .comm = comms[r], .color = 0, .ret = 1 };
		ASSERT_EQ(0, pthread_create(&th[r], NULL, split_thread, &sp[r]));
	}
	ab.comm = comms[2];
	ASSERT_EQ(0, pthread_create(&ath, NULL, abort_later, &ab));
	pthread_join(ath, NULL);
	for (r = 0; r < 2; r++)
		pthread_join(th[r], NULL);
	EXPECT_EQ(0, ab.ret);
	for (r = 0; r < 2; r++)
		EXPECT_EQ(-ECONNABORTED, sp[r].ret);
	EXPECT_GT(5000, vaccel_now_ms() - t0);
	comm_free(comms, 4);
}

/*
 * A split takes a number of the parent's sequence, as every call does: a
 * rank that calls another operation at that number fails both ranks with
 * -EPROTO, long before the timeout (10 s here), whichever comes first:
 * an allreduce already issued when rank 0 splits (the split fails at
 * once), or a barrier called while rank 0 waits in the split (the split
 * ends with the communicator's failure).
 */
TEST_F_TIMEOUT(ops, split_against_another_call_fails_every_rank, 120)
{
	struct accel_comm *comms[NDEV], *kid;
	struct accel_event ev[NDEV];
	struct splitter sp;
	pthread_t th;
	uint64_t t0;
	int ret;

	/* the allreduce first */
	ASSERT_EQ(0, comm_make(self, 2, 0, 10000, comms));
	t0 = vaccel_now_ms();
	ASSERT_EQ(0, accel_allreduce(accel_buffer_va(self->sbuf[1]),
				     accel_buffer_va(self->rbuf[1]), 100, ACCEL_DTYPE_F32,
				     ACCEL_REDOP_SUM, comms[1], self->q[1], &ev[1]));
	kid = (struct accel_comm *)1;
	EXPECT_EQ(-EPROTO, accel_comm_split(comms[0], 0, 0, &kid));
	EXPECT_EQ(NULL, kid);
	EXPECT_EQ(-EPROTO, accel_comm_wait(comms[1], &ev[1], WAIT_NS));
	EXPECT_GT(2000, vaccel_now_ms() - t0);
	expect_all(_metadata, comms, 2, -EPROTO);
	comm_free(comms, 2);
	ASSERT_EQ(0, open_queues(self));	/* the failure may have stopped rank 1's */

	/* the split first: rank 0 waits in it when rank 1 calls a barrier */
	ASSERT_EQ(0, comm_make(self, 2, 0, 10000, comms));
	t0 = vaccel_now_ms();
	sp = (struct splitter){ .comm = comms[0], .ret = 1 };
	ASSERT_EQ(0, pthread_create(&th, NULL, split_thread, &sp));
	usleep(100000);
	ret = accel_barrier(comms[1], self->q[1], &ev[1]);
	if (!ret)	/* rank 0 had not arrived yet: its split finds the barrier */
		ret = accel_comm_wait(comms[1], &ev[1], WAIT_NS);
	EXPECT_EQ(-EPROTO, ret);
	pthread_join(th, NULL);
	EXPECT_EQ(-EPROTO, sp.ret);
	EXPECT_EQ(NULL, sp.out);
	EXPECT_GT(2000, vaccel_now_ms() - t0);
	expect_all(_metadata, comms, 2, -EPROTO);
	comm_free(comms, 2);
}

TEST_F(ops, split_bad_arguments)
{
	struct accel_comm *comms[NDEV], *kid;

	ASSERT_EQ(0, comm_make(self, 2, 0, 300, comms));
	EXPECT_EQ(-EINVAL, accel_comm_split(NULL, 0, 0, &kid));
	EXPECT_EQ(-EINVAL, accel_comm_split(comms[0], 0, 0, NULL));
	EXPECT_EQ(-EINVAL, accel_comm_split(comms[0], -2, 0, &kid));
	/* twice in one group before the other rank: -EINVAL at the end for the second */
	ASSERT_EQ(0, accel_group_start());
	EXPECT_EQ(0, accel_comm_split(comms[0], 0, 0, &kid));
	EXPECT_EQ(0, accel_comm_split(comms[0], 0, 0, &kid));
	EXPECT_EQ(-EINVAL, accel_group_end());	/* the first arrival then times out alone */
	EXPECT_EQ(NULL, kid);
	comm_free(comms, 2);
}

TEST_HARNESS_MAIN
