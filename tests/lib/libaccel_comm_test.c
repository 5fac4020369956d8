// SPDX-License-Identifier: GPL-2.0-only
/*
 * libaccel collectives: communicators of 1 to 4 devices in one process
 * (accel_comm_init_all()), on both backends. Every operation x dtype x
 * reduction x in-place/out-of-place x count on 2, 3 and 4 ranks and both
 * algorithms against a host computation; the seed regressions (002: a
 * barrier reused many times with a slowed rank, checked on the device;
 * 003: a 2-rank bidirectional exchange through credit channels); the
 * failures (a rank that never calls: -ETIMEDOUT naming it within the
 * timeout + 1 s; a different count, operation or root: -EPROTO on every
 * rank; an abort: -ECANCELED locally, -ECONNABORTED on the peers); the
 * counters started near 2^32, 2^63 and 2^64; argument errors that change
 * nothing; 1,000 create-use-destroy rounds back to the baseline.
 *
 * Every wait is bounded: the library's host waits take a timeout and every
 * device wait of a collective carries the communicator's timeout.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>

#include "kselftest_harness.h"
#include "libaccel_test.h"
#include "comm_inject.h"
#include "comm_oracle.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define NO_LEAKS() EXPECT_EQ(0, __lsan_do_recoverable_leak_check())
#else
#define NO_LEAKS() do { } while (0)
#endif

/* the library's test hook (lib/coll/coll.h): counters and sequence numbers start here */
extern uint64_t acc_comm_test_base;
extern void (*acc_comm_test_split_hook)(unsigned int rank);
/* test hooks (lib/coll/coll.h, lib/internal.h): plan heap allocations, doorbells */
extern _Atomic uint64_t acc_comm_plan_allocs;
uint64_t acc_queue_doorbells(const struct accel_queue *q);

#define NDEV		4
#define ID0		970
#define CHUNK		4096		/* small slots: "large" counts span several chunks */
#define BUFSZ		(256u << 10)
#define WAIT_NS		(20 * SEC)

static const uint64_t counts[] = { 0, 1, 7, 1031, 5003 };

FIXTURE(comm) {
	struct accel_device *dev[NDEV];
	struct accel_queue *q[NDEV];
	struct accel_buffer *sbuf[NDEV], *rbuf[NDEV];
	void *s[NDEV], *r[NDEV];
	struct vaccel_counts counts;
};

static int open_queues(struct __test_metadata *_metadata, FIXTURE_DATA(comm) *self)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 8192 };
	int i;

	for (i = 0; i < NDEV; i++) {
		accel_queue_destroy(self->q[i]);
		self->q[i] = NULL;
		if (accel_queue_create(self->dev[i], &qp, &self->q[i]))
			return -1;
	}
	(void)_metadata;
	return 0;
}

FIXTURE_SETUP(comm)
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
	}
	ASSERT_EQ(0, open_queues(_metadata, self));
}

FIXTURE_TEARDOWN(comm)
{
	int i;

	if (!lib_present())
		return;
	acc_comm_test_base = 0;
	for (i = 0; i < NDEV; i++) {
		accel_queue_destroy(self->q[i]);
		accel_buffer_destroy(self->sbuf[i]);
		accel_buffer_destroy(self->rbuf[i]);
		accel_device_close(self->dev[i]);
		lib_del_device(ID0 + i);
	}
	EXPECT_LIB_COUNTS_BACK(&self->counts, 5000);
}

static int comm_make(FIXTURE_DATA(comm) *self, unsigned int n, uint32_t algo,
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

/* --- host values and the oracle: comm_oracle.h --- */

static bool is_float(enum accel_dtype t)
{
	return t == ACCEL_DTYPE_F32 || t == ACCEL_DTYPE_F16 || t == ACCEL_DTYPE_BF16;
}

/* --- running one operation on every rank --- */

struct run {
	enum accel_comm_op op;
	enum accel_dtype t;
	enum accel_redop redop;
	uint64_t count;
	int root;
	bool in_place;
};

/* Device addresses of rank @r's send and recv for @run (in-place as NCCL defines it). */
static void addrs(FIXTURE_DATA(comm) *self, unsigned int r, const struct run *run,
		  uint64_t *send, uint64_t *recv)
{
	uint64_t es = (uint64_t)accel_dtype_size(run->t), bytes = run->count * es;

	*send = accel_buffer_va(self->sbuf[r]);
	*recv = accel_buffer_va(self->rbuf[r]);
	if (!run->in_place)
		return;
	switch (run->op) {
	case ACCEL_COMM_OP_ALLGATHER:
		*send = *recv + r * bytes;
		break;
	case ACCEL_COMM_OP_REDUCESCATTER:
		*recv = *send + r * bytes;
		break;
	default:
		*send = *recv;
		break;
	}
}

static int issue(FIXTURE_DATA(comm) *self, struct accel_comm *c, unsigned int r,
		 const struct run *run, struct accel_event *ev)
{
	uint64_t s, d;

	addrs(self, r, run, &s, &d);
	switch (run->op) {
	case ACCEL_COMM_OP_ALLREDUCE:
		return accel_allreduce(s, d, run->count, run->t, run->redop, c, self->q[r], ev);
	case ACCEL_COMM_OP_REDUCE:
		return accel_reduce(s, d, run->count, run->t, run->redop, run->root, c, self->q[r],
				    ev);
	case ACCEL_COMM_OP_BROADCAST:
		return accel_broadcast(s, d, run->count, run->t, run->root, c, self->q[r], ev);
	case ACCEL_COMM_OP_ALLGATHER:
		return accel_allgather(s, d, run->count, run->t, c, self->q[r], ev);
	case ACCEL_COMM_OP_REDUCESCATTER:
		return accel_reducescatter(s, d, run->count, run->t, run->redop, c, self->q[r], ev);
	case ACCEL_COMM_OP_ALLTOALL:
		return accel_alltoall(s, d, run->count, run->t, c, self->q[r], ev);
	default:
		return accel_barrier(c, self->q[r], ev);
	}
}

/* The host address of device address @va in rank @r's send or recv buffer. */
static void *host_of(FIXTURE_DATA(comm) *self, unsigned int r, uint64_t va)
{
	uint64_t sb = accel_buffer_va(self->sbuf[r]);

	if (va >= sb && va < sb + BUFSZ)
		return (char *)self->s[r] + (va - sb);
	return (char *)self->r[r] + (va - accel_buffer_va(self->rbuf[r]));
}

/* Inputs of every rank, written where the operation reads them; the rest 0x5a. */
static void fill_inputs(FIXTURE_DATA(comm) *self, unsigned int n, const struct run *run)
{
	uint64_t i, per;
	unsigned int r;

	per = run->op == ACCEL_COMM_OP_REDUCESCATTER || run->op == ACCEL_COMM_OP_ALLTOALL ?
	      n * run->count : run->count;
	for (r = 0; r < n; r++) {
		uint64_t s, d;
		void *base;

		addrs(self, r, run, &s, &d);
		memset(self->r[r], 0x5a, BUFSZ);
		memset(self->s[r], 0x5a, BUFSZ);
		base = host_of(self, r, s);
		for (i = 0; i < per; i++)
			put(base, run->t, i, value(r, i, run->redop, run->t));
	}
}

/* The expected element @i of rank @r's output, and how many there are. */
static uint64_t out_count(unsigned int n, const struct run *run)
{
	switch (run->op) {
	case ACCEL_COMM_OP_ALLGATHER:
	case ACCEL_COMM_OP_ALLTOALL:
		return n * run->count;
	default:
		return run->count;
	}
}

static double expected(unsigned int n, unsigned int r, uint64_t i, const struct run *run)
{
	uint64_t c = run->count;

	switch (run->op) {
	case ACCEL_COMM_OP_ALLREDUCE:
	case ACCEL_COMM_OP_REDUCE:
		return reduced(n, i, run->redop, run->t);
	case ACCEL_COMM_OP_REDUCESCATTER:
		return reduced(n, r * c + i, run->redop, run->t);
	case ACCEL_COMM_OP_BROADCAST:
		return value((unsigned int)run->root, i, run->redop, run->t);
	case ACCEL_COMM_OP_ALLGATHER:
		return value((unsigned int)(i / c), i % c, run->redop, run->t);
	default:	/* ALLTOALL: block j of rank r is block r of rank j */
		return value((unsigned int)(i / c), r * c + i % c, run->redop, run->t);
	}
}

/* Where rank @r's output is. */
static const void *out_host(FIXTURE_DATA(comm) *self, unsigned int r, const struct run *run)
{
	uint64_t s, d;

	addrs(self, r, run, &s, &d);
	return host_of(self, r, d);
}

/*
 * Run @run on ranks 0..n-1 and check every rank's output; on a mismatch
 * the first wrong element is logged. 0 or the first failure's code (a
 * wrong result: -EBADMSG).
 */
static int run_check(struct __test_metadata *_metadata, FIXTURE_DATA(comm) *self,
		     struct accel_comm **comms, unsigned int n, const struct run *run)
{
	struct accel_event ev[NDEV];
	unsigned int r;
	uint64_t i;
	int ret;

	fill_inputs(self, n, run);
	for (r = 0; r < n; r++) {
		ret = issue(self, comms[r], r, run, &ev[r]);
		if (ret)
			return ret;
	}
	for (r = 0; r < n; r++) {
		ret = accel_comm_wait(comms[r], &ev[r], WAIT_NS);
		if (ret)
			return ret;
	}
	for (r = 0; r < n; r++) {
		const void *o = out_host(self, r, run);

		if (run->op == ACCEL_COMM_OP_REDUCE && (int)r != run->root)
			continue;
		for (i = 0; i < out_count(n, run); i++) {
			double got = get(o, run->t, i), want = expected(n, r, i, run);

			if (!close_enough(got, want, run->redop, run->t)) {
				TH_LOG("%u ranks, op %u dtype %u redop %u count %llu root %d%s: "
				       "rank %u element %llu is %g, not %g", n, run->op, run->t,
				       run->redop, (unsigned long long)run->count, run->root,
				       run->in_place ? " in place" : "", r, (unsigned long long)i,
				       got, want);
				return -EBADMSG;
			}
		}
	}
	return 0;
}

static const enum accel_dtype dtypes[] = {
	ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, ACCEL_DTYPE_I32, ACCEL_DTYPE_I64,
	ACCEL_DTYPE_U8,
};

/* Every operation x dtype x reduction x in-place x count on @n ranks with @algo. */
static void matrix(struct __test_metadata *_metadata, FIXTURE_DATA(comm) *self, unsigned int n,
		   uint32_t algo)
{
	static const enum accel_comm_op ops[] = {
		ACCEL_COMM_OP_ALLREDUCE, ACCEL_COMM_OP_REDUCE, ACCEL_COMM_OP_REDUCESCATTER,
		ACCEL_COMM_OP_BROADCAST, ACCEL_COMM_OP_ALLGATHER, ACCEL_COMM_OP_ALLTOALL,
	};
	struct accel_comm *comms[NDEV];
	unsigned int o, d, ip, k, runs = 0;
	int red;

	ASSERT_EQ(0, comm_make(self, n, algo, 0, comms));
	for (o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		bool reduction = ops[o] <= ACCEL_COMM_OP_REDUCE ||
				 ops[o] == ACCEL_COMM_OP_REDUCESCATTER;

		if (algo == ACCEL_COMM_ALGO_RING && ops[o] == ACCEL_COMM_OP_ALLTOALL)
			continue;	/* direct only: see bad_arguments */
		for (d = 0; d < sizeof(dtypes) / sizeof(dtypes[0]); d++)
			for (red = 0; red < (reduction ? ACCEL_REDOP_COUNT : 1); red++) {
				if (red == ACCEL_REDOP_AVG && !is_float(dtypes[d]))
					continue;
				for (ip = 0; ip < 2; ip++)
					for (k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
						struct run run = {
							.op = ops[o], .t = dtypes[d],
							.redop = (enum accel_redop)red,
							.count = counts[k], .in_place = ip,
							.root = (int)((k + d) % n),
						};

						ASSERT_EQ(0, run_check(_metadata, self, comms, n,
								       &run));
						runs++;
					}
			}
	}
	TH_LOG("%u ranks, algorithm %u: %u operations checked", n, algo, runs);
	comm_free(comms, n);
}

TEST_F_TIMEOUT(comm, matrix_ring_2, 600) { matrix(_metadata, self, 2, ACCEL_COMM_ALGO_RING); }
TEST_F_TIMEOUT(comm, matrix_ring_3, 600) { matrix(_metadata, self, 3, ACCEL_COMM_ALGO_RING); }
TEST_F_TIMEOUT(comm, matrix_ring_4, 600) { matrix(_metadata, self, 4, ACCEL_COMM_ALGO_RING); }
TEST_F_TIMEOUT(comm, matrix_oneshot_2, 600) { matrix(_metadata, self, 2, ACCEL_COMM_ALGO_ONESHOT); }
TEST_F_TIMEOUT(comm, matrix_oneshot_3, 600) { matrix(_metadata, self, 3, ACCEL_COMM_ALGO_ONESHOT); }
TEST_F_TIMEOUT(comm, matrix_oneshot_4, 600) { matrix(_metadata, self, 4, ACCEL_COMM_ALGO_ONESHOT); }

/*
 * With more staging slots the ring works on several chunk columns at once
 * (lib/coll/ring.c, ring_schedule(): slots 3, 5 and 16 put 2, 4 and 15
 * columns in flight): every ring operation on 2, 3 and 4 ranks, with
 * counts of up to 16 chunks per block, in and out of place, against the
 * host. A wrong order of the units deadlocks (-ETIMEDOUT) or mixes chunks.
 */
static void ring_slots(struct __test_metadata *_metadata, FIXTURE_DATA(comm) *self,
		       unsigned int slots)
{
	static const enum accel_comm_op ops[] = {
		ACCEL_COMM_OP_ALLREDUCE, ACCEL_COMM_OP_REDUCE, ACCEL_COMM_OP_REDUCESCATTER,
		ACCEL_COMM_OP_BROADCAST, ACCEL_COMM_OP_ALLGATHER,
	};
	static const enum accel_dtype ts[] = {
		ACCEL_DTYPE_F32, ACCEL_DTYPE_BF16, ACCEL_DTYPE_I32, ACCEL_DTYPE_U8,
	};
	static const enum accel_redop reds[] = { ACCEL_REDOP_SUM, ACCEL_REDOP_MAX, ACCEL_REDOP_AVG };
	static const uint64_t cnt[] = { 1, 7, 1031, 5003, 16001 };	/* 16001 x 4 x 4 <= BUFSZ */
	struct accel_comm_params p = {
		.size = sizeof(p), .algo = ACCEL_COMM_ALGO_RING, .chunk_bytes = CHUNK,
		.slots = slots,
	};
	struct accel_comm *comms[NDEV];
	unsigned int n, o, d, x, ip, k, runs = 0;

	for (n = 2; n <= NDEV; n++) {
		ASSERT_EQ(0, accel_comm_init_all(comms, n, self->dev, &p));
		for (o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
			for (d = 0; d < sizeof(ts) / sizeof(ts[0]); d++)
				for (x = 0; x < sizeof(reds) / sizeof(reds[0]); x++) {
					bool reduction = ops[o] != ACCEL_COMM_OP_BROADCAST &&
							 ops[o] != ACCEL_COMM_OP_ALLGATHER;

					if ((!reduction && x) ||
					    (reds[x] == ACCEL_REDOP_AVG && !is_float(ts[d])))
						continue;
					for (ip = 0; ip < 2; ip++)
						for (k = 0; k < sizeof(cnt) / sizeof(cnt[0]); k++) {
							struct run run = {
								.op = ops[o], .t = ts[d],
								.redop = reds[x], .count = cnt[k],
								.in_place = ip,
								.root = (int)((k + d) % n),
							};

							ASSERT_EQ(0, run_check(_metadata, self,
									       comms, n, &run));
							runs++;
						}
				}
		comm_free(comms, n);
	}
	TH_LOG("slots %u: %u operations checked on 2, 3 and 4 ranks", slots, runs);
}

TEST_F_TIMEOUT(comm, ring_pipelined_slots_3, 600) { ring_slots(_metadata, self, 3); }
TEST_F_TIMEOUT(comm, ring_pipelined_slots_5, 600) { ring_slots(_metadata, self, 5); }
TEST_F_TIMEOUT(comm, ring_pipelined_slots_16, 600) { ring_slots(_metadata, self, 16); }

/* AUTO picks by size; one rank is a local copy with no staging. */
TEST_F(comm, auto_and_one_rank)
{
	struct accel_comm *comms[NDEV];
	struct run run = { .op = ACCEL_COMM_OP_ALLREDUCE, .t = ACCEL_DTYPE_I32,
			   .redop = ACCEL_REDOP_SUM, .count = 5003 };
	struct accel_comm_params p = { .size = sizeof(p), .oneshot_max = 64 };
	uint64_t before, after;

	ASSERT_EQ(0, accel_comm_init_all(comms, 4, self->dev, &p));
	ASSERT_EQ(0, run_check(_metadata, self, comms, 4, &run));	/* ring */
	run.count = 7;
	ASSERT_EQ(0, run_check(_metadata, self, comms, 4, &run));	/* one-shot */
	comm_free(comms, 4);

	ASSERT_EQ(0, accel_device_memory_used(self->dev[0], &before));
	ASSERT_EQ(0, comm_make(self, 1, 0, 0, comms));
	ASSERT_EQ(0, accel_device_memory_used(self->dev[0], &after));
	EXPECT_GT(CHUNK, after - before);	/* no staging, no scratch */
	EXPECT_EQ(1, accel_comm_count(comms[0]));
	EXPECT_EQ(0, accel_comm_rank(comms[0]));
	EXPECT_EQ(self->dev[0], accel_comm_device(comms[0]));
	run.count = 1031;
	run.redop = ACCEL_REDOP_MAX;
	ASSERT_EQ(0, run_check(_metadata, self, comms, 1, &run));
	comm_free(comms, 1);
}

/* The library's log, kept while a test captures it (wait_log_handler()). */
static struct {
	pthread_mutex_t lock;
	char text[8192];
	size_t len;
} wait_log = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void wait_log_handler(int level, const char *msg, void *arg)
{
	size_t n = strlen(msg);

	(void)level;
	(void)arg;
	pthread_mutex_lock(&wait_log.lock);
	if (wait_log.len + n + 2 < sizeof(wait_log.text)) {
		memcpy(wait_log.text + wait_log.len, msg, n);
		wait_log.len += n;
		wait_log.text[wait_log.len++] = '\n';
		wait_log.text[wait_log.len] = 0;
	}
	pthread_mutex_unlock(&wait_log.lock);
}

/*
 * A host wait as long as the communicator's timeout that runs out before
 * the communicator fails (here: the rank's queue is held by the program's
 * own WAIT, which has no timeout, in front of the collective) says which
 * operation it waited for and where its queue is: the packet it waits in
 * and the value its word holds. A shorter wait (a poll) logs nothing.
 */
TEST_F(comm, a_wait_that_runs_out_says_where_the_queue_is)
{
	struct run run = { .op = ACCEL_COMM_OP_ALLREDUCE, .t = ACCEL_DTYPE_I32,
			   .redop = ACCEL_REDOP_SUM, .count = 7 };
	struct accel_comm *comms[1];
	struct accel_signal *hold;
	struct accel_event ev;
	char want[160];
	int level = accel_log_get_level();

	ASSERT_EQ(0, comm_make(self, 1, 0, 200, comms));
	ASSERT_EQ(0, accel_signal_create(self->dev[0], &hold));
	ASSERT_EQ(0, accel_queue_reserve(self->q[0], 1, 0));
	accel_prep_wait(accel_queue_get_packet(self->q[0]), accel_signal_va(hold),
			DRM_VACCEL_WAIT_GE, 1, 0, 0);
	ASSERT_LT(0, accel_queue_submit(self->q[0]));
	ASSERT_EQ(0, issue(self, comms[0], 0, &run, &ev));

	wait_log.len = 0;
	wait_log.text[0] = 0;
	accel_log_set_handler(wait_log_handler, NULL);
	accel_log_set_level(ACCEL_LOG_WARN);
	EXPECT_EQ(-ETIMEDOUT, accel_comm_wait(comms[0], &ev, 0));	/* a poll: silent */
	EXPECT_EQ(0, wait_log.len) TH_LOG("%s", wait_log.text);
	EXPECT_EQ(-ETIMEDOUT, accel_comm_wait(comms[0], &ev, 200 * 1000000ll));
	accel_log_set_handler(NULL, NULL);
	accel_log_set_level(level);
	TH_LOG("%s", wait_log.text);
	snprintf(want, sizeof(want), "rank 0: accel_comm_wait(): allreduce(dtype %u, count 7, "
		 "reduction %u, root -1) seq 0 (algorithm ", ACCEL_DTYPE_I32, ACCEL_REDOP_SUM);
	EXPECT_NE(NULL, strstr(wait_log.text, want));
	EXPECT_NE(NULL, strstr(wait_log.text, "not done after 2"));
	EXPECT_NE(NULL, strstr(wait_log.text, "the communicator has not failed"));
	snprintf(want, sizeof(want), "at packet 0: WAIT signal=0x%llx GE 1 (the word holds 0)",
		 (unsigned long long)accel_signal_va(hold));
	EXPECT_NE(NULL, strstr(wait_log.text, want));
	EXPECT_EQ(0, accel_comm_get_async_error(comms[0], NULL, 0));

	/* released, the collective completes */
	ASSERT_EQ(0, accel_signal_write(hold, DRM_VACCEL_SIGNAL_SET, 1));
	EXPECT_EQ(0, accel_comm_wait(comms[0], &ev, WAIT_NS));
	accel_signal_destroy(hold);
	comm_free(comms, 1);
}

/* Bad arguments: -EINVAL at the call, and the communicator goes on as if it never happened. */
TEST_F(comm, bad_arguments)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev;
	uint64_t s = accel_buffer_va(self->sbuf[0]), d = accel_buffer_va(self->rbuf[0]);
	struct run run = { .op = ACCEL_COMM_OP_ALLREDUCE, .t = ACCEL_DTYPE_F32,
			   .redop = ACCEL_REDOP_SUM, .count = 64 };
	struct accel_comm_params p = { .size = sizeof(p), .slots = 1 };

	EXPECT_EQ(-EINVAL, accel_comm_init_all(comms, 2, self->dev, &p));
	p.slots = 0;
	p.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, accel_comm_init_all(comms, 2, self->dev, &p));
	p.reserved[1] = 0;
	p.size = ACCEL_COMM_PARAMS_SIZE_1_2 - 8;
	EXPECT_EQ(-EINVAL, accel_comm_init_all(comms, 2, self->dev, &p));
	{
		struct accel_device *twice[2] = { self->dev[0], self->dev[0] };

		EXPECT_EQ(-EINVAL, accel_comm_init_all(comms, 2, twice, NULL));
	}
	ASSERT_EQ(0, comm_make(self, 2, 0, 0, comms));
	EXPECT_EQ(-EINVAL, accel_allreduce(s, d, 64, ACCEL_DTYPE_F32, ACCEL_REDOP_SUM, NULL,
					   self->q[0], &ev));
	EXPECT_EQ(-EINVAL, accel_allreduce(s, d, 64, ACCEL_DTYPE_F32, ACCEL_REDOP_SUM, comms[0],
					   self->q[1], &ev));	/* another device's queue */
	EXPECT_EQ(-EINVAL, accel_allreduce(s, d, 64, ACCEL_DTYPE_U16, ACCEL_REDOP_SUM, comms[0],
					   self->q[0], &ev));	/* no device reduction */
	EXPECT_EQ(-EINVAL, accel_allreduce(s, d, 64, ACCEL_DTYPE_I32, ACCEL_REDOP_AVG, comms[0],
					   self->q[0], &ev));
	EXPECT_EQ(-EINVAL, accel_allreduce(s, d, 64, ACCEL_DTYPE_F32, ACCEL_REDOP_COUNT, comms[0],
					   self->q[0], &ev));
	EXPECT_EQ(-EINVAL, accel_allreduce(s + 2, d, 64, ACCEL_DTYPE_F32, ACCEL_REDOP_SUM,
					   comms[0], self->q[0], &ev));	/* misaligned */
	EXPECT_EQ(-EINVAL, accel_allreduce(s, s + 4, 64, ACCEL_DTYPE_F32, ACCEL_REDOP_SUM,
					   comms[0], self->q[0], &ev));	/* overlap */
	EXPECT_EQ(-EINVAL, accel_allgather(d + 4, d, 64, ACCEL_DTYPE_F32, comms[0], self->q[0],
					   &ev));	/* overlap, not rank 0's in-place */
	EXPECT_EQ(-EINVAL, accel_reduce(s, d, 64, ACCEL_DTYPE_F32, ACCEL_REDOP_SUM, 2, comms[0],
					self->q[0], &ev));	/* root out of range */
	EXPECT_EQ(-EINVAL, accel_broadcast(s, d, 64, ACCEL_DTYPE_F32, -1, comms[0], self->q[0],
					   &ev));
	EXPECT_EQ(-EINVAL, accel_allreduce(s, d, UINT64_MAX / 2, ACCEL_DTYPE_F32, ACCEL_REDOP_SUM,
					   comms[0], self->q[0], &ev));
	EXPECT_EQ(0, accel_comm_get_async_error(comms[0], NULL, 0));
	/* nothing was taken: the next call matches rank 1's first */
	ASSERT_EQ(0, run_check(_metadata, self, comms, 2, &run));
	comm_free(comms, 2);

	/* a forced algorithm that cannot run the operation */
	ASSERT_EQ(0, comm_make(self, 2, ACCEL_COMM_ALGO_RING, 0, comms));
	EXPECT_EQ(-EINVAL, accel_alltoall(s, d, 64, ACCEL_DTYPE_F32, comms[0], self->q[0], &ev));
	ASSERT_EQ(0, run_check(_metadata, self, comms, 2, &run));
	comm_free(comms, 2);
}

/* Calls that differ between ranks: -EPROTO on every rank, nothing waits for the timeout. */
static void mismatch(struct __test_metadata *_metadata, FIXTURE_DATA(comm) *self, int kind)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev[NDEV];
	struct accel_comm_error e;
	uint64_t t0 = vaccel_now_ms();
	unsigned int r;

	ASSERT_EQ(0, open_queues(_metadata, self));
	ASSERT_EQ(0, comm_make(self, 3, 0, 20000, comms));
	for (r = 0; r < 3; r++) {
		uint64_t s = accel_buffer_va(self->sbuf[r]), d = accel_buffer_va(self->rbuf[r]);
		int want = r == 2 ? -EPROTO : 0, ret;

		if (kind == 0)		/* count + 1 */
			ret = accel_allreduce(s, d, r == 2 ? 65 : 64, ACCEL_DTYPE_F32,
					      ACCEL_REDOP_SUM, comms[r], self->q[r], &ev[r]);
		else if (kind == 1 && r == 2)	/* reduce against allreduce */
			ret = accel_reduce(s, d, 64, ACCEL_DTYPE_F32, ACCEL_REDOP_SUM, 0, comms[r],
					   self->q[r], &ev[r]);
		else if (kind == 1)
			ret = accel_allreduce(s, d, 64, ACCEL_DTYPE_F32, ACCEL_REDOP_SUM, comms[r],
					      self->q[r], &ev[r]);
		else			/* another root */
			ret = accel_broadcast(s, d, 64, ACCEL_DTYPE_F32, r == 2 ? 1 : 0, comms[r],
					      self->q[r], &ev[r]);
		ASSERT_EQ(want, ret);
	}
	for (r = 0; r < 2; r++)
		EXPECT_EQ(-EPROTO, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
	for (r = 0; r < 3; r++) {
		EXPECT_EQ(-EPROTO, accel_comm_get_async_error(comms[r], &e, sizeof(e)));
		EXPECT_EQ(-EPROTO, e.error);
		EXPECT_EQ(r == 2 ? 0 : 2, e.peer);
	}
	EXPECT_GT(5000, vaccel_now_ms() - t0);	/* not the 20 s timeout */
	/* sticky: later calls fail at once */
	EXPECT_EQ(-EPROTO, accel_barrier(comms[0], self->q[0], &ev[0]));
	comm_free(comms, 3);
}

TEST_F(comm, mismatch_count) { mismatch(_metadata, self, 0); }
TEST_F(comm, mismatch_op) { mismatch(_metadata, self, 1); }
TEST_F(comm, mismatch_root) { mismatch(_metadata, self, 2); }

/* Rank 3 never calls: the others fail with -ETIMEDOUT within the timeout + 1 s, naming it. */
static void skipped(struct __test_metadata *_metadata, FIXTURE_DATA(comm) *self, uint32_t algo)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev[NDEV];
	struct accel_comm_error e;
	struct run run = { .op = ACCEL_COMM_OP_ALLREDUCE, .t = ACCEL_DTYPE_F32,
			   .redop = ACCEL_REDOP_SUM, .count = 5003 };
	unsigned int r;
	uint64_t t0, dt;

	ASSERT_EQ(0, comm_make(self, 4, algo, 500, comms));
	/* one operation everyone calls, then one rank 3 skips */
	ASSERT_EQ(0, run_check(_metadata, self, comms, 4, &run));
	t0 = vaccel_now_ms();
	for (r = 0; r < 3; r++)
		ASSERT_EQ(0, issue(self, comms[r], r, &run, &ev[r]));
	for (r = 0; r < 3; r++)
		EXPECT_EQ(-ETIMEDOUT, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
	dt = vaccel_now_ms() - t0;
	EXPECT_GT(1500, dt) TH_LOG("the others failed after %llu ms", (unsigned long long)dt);
	for (r = 0; r < 4; r++) {
		EXPECT_EQ(-ETIMEDOUT, accel_comm_get_async_error(comms[r], &e, sizeof(e)));
		EXPECT_EQ(1ull << 3, e.missing);
		EXPECT_EQ(ACCEL_COMM_OP_ALLREDUCE, e.op);
		EXPECT_EQ(1, e.seq);
	}
	EXPECT_EQ(-ETIMEDOUT, accel_barrier(comms[3], self->q[3], &ev[3]));
	comm_free(comms, 4);
}

TEST_F(comm, skipped_call_ring) { skipped(_metadata, self, ACCEL_COMM_ALGO_RING); }
TEST_F(comm, skipped_call_oneshot) { skipped(_metadata, self, ACCEL_COMM_ALGO_ONESHOT); }

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

/* Rank 1 aborts from another thread while the others wait: -ECANCELED there, -ECONNABORTED here. */
static void aborted(struct __test_metadata *_metadata, FIXTURE_DATA(comm) *self, uint32_t algo)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev[NDEV];
	struct accel_comm_error e;
	struct run run = { .op = ACCEL_COMM_OP_ALLREDUCE, .t = ACCEL_DTYPE_I64,
			   .redop = ACCEL_REDOP_SUM, .count = 5003 };
	struct aborter ab;
	pthread_t th;
	unsigned int r;
	uint64_t t0;

	ASSERT_EQ(0, comm_make(self, 4, algo, 30000, comms));
	ASSERT_EQ(0, run_check(_metadata, self, comms, 4, &run));
	for (r = 0; r < 3; r++)		/* rank 3 has not called: everyone is stuck */
		ASSERT_EQ(0, issue(self, comms[r], r, &run, &ev[r]));
	ab.comm = comms[1];
	ab.ret = 1;
	t0 = vaccel_now_ms();
	ASSERT_EQ(0, pthread_create(&th, NULL, abort_later, &ab));
	EXPECT_EQ(-ECONNABORTED, accel_comm_wait(comms[0], &ev[0], WAIT_NS));
	pthread_join(th, NULL);
	EXPECT_EQ(0, ab.ret);
	EXPECT_EQ(-ECANCELED, accel_comm_wait(comms[1], &ev[1], WAIT_NS));
	EXPECT_EQ(-ECONNABORTED, accel_comm_wait(comms[2], &ev[2], WAIT_NS));
	EXPECT_GT(5000, vaccel_now_ms() - t0);		/* not the 30 s timeout */
	EXPECT_EQ(-ECONNABORTED, accel_comm_get_async_error(comms[2], &e, sizeof(e)));
	EXPECT_EQ(1, e.peer);
	EXPECT_EQ(-ECANCELED, accel_comm_get_async_error(comms[1], &e, sizeof(e)));
	EXPECT_EQ(-ECONNABORTED, issue(self, comms[3], 3, &run, &ev[3]));
	EXPECT_EQ(-EALREADY, accel_comm_abort(comms[0]));
	comm_free(comms, 4);
}

/*
 * A call on a queue that faulted for its own reasons fails at the call
 * with -EIO and takes no sequence number: with a new queue, the next
 * call of that rank still matches its peers' (it would be one ahead and
 * fail -EPROTO, or time out, had the failed call taken one).
 */
TEST_F(comm, faulted_queue_fails_the_call_only)
{
	struct accel_comm *comms[NDEV];
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 8192 };
	struct run run = { .op = ACCEL_COMM_OP_ALLREDUCE, .t = ACCEL_DTYPE_I32,
			   .redop = ACCEL_REDOP_SUM, .count = 1031 };
	struct accel_event ev;
	struct accel_comm_error e;

	ASSERT_EQ(0, comm_make(self, 3, 0, 10000, comms));
	/* fault rank 0's queue: a COPY from an address nothing maps */
	accel_prep_copy(accel_queue_get_packet(self->q[0]), 0x10, accel_buffer_va(self->rbuf[0]), 8);
	ASSERT_LE(0, accel_queue_submit(self->q[0]));
	EXPECT_EQ(-EIO, accel_queue_sync(self->q[0], WAIT_NS));
	EXPECT_EQ(-EIO, issue(self, comms[0], 0, &run, &ev));
	EXPECT_EQ(0, accel_comm_get_async_error(comms[0], &e, sizeof(e)));
	accel_queue_destroy(self->q[0]);
	self->q[0] = NULL;
	ASSERT_EQ(0, accel_queue_create(self->dev[0], &qp, &self->q[0]));
	EXPECT_EQ(0, run_check(_metadata, self, comms, 3, &run));
	comm_free(comms, 3);
}

TEST_F(comm, abort_ring) { aborted(_metadata, self, ACCEL_COMM_ALGO_RING); }
TEST_F(comm, abort_oneshot) { aborted(_metadata, self, ACCEL_COMM_ALGO_ONESHOT); }

/*
 * Iterations of the long seed regressions: @dflt natively on the
 * in-process device; a tenth in the VM (TCG runs the module's engines
 * about ten times slower), a hundredth on the debug kernel (its time
 * limits are scaled: KSFT_TIMEOUT_SCALE); ACCEL_COMM_TEST_ITERS overrides.
 * The count is printed, so a log says what ran.
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
	ksft_print_msg("%u iterations\n", n);
	return n;
}

/*
 * Seed 002: a barrier reused many times. Each rank's queue raises its own
 * "arrived" signal to i before barrier i, rank 1 after a DELAY; right after
 * the barrier, each queue checks every rank's "arrived" >= i with a device
 * WAIT of 1 ns timeout, which faults the queue if any rank is not there:
 * a rank passing early cannot go unnoticed.
 */
static void barrier_reuse(struct __test_metadata *_metadata, FIXTURE_DATA(comm) *self,
			  unsigned int n, uint32_t algo, unsigned int iters)
{
	struct accel_comm *comms[NDEV];
	struct accel_signal *arrived[NDEV], *imp[NDEV][NDEV];
	struct accel_event ev[NDEV];
	unsigned int it, r, p, batch = 64;
	uint64_t base[NDEV];

	ASSERT_EQ(0, comm_make(self, n, algo, 10000, comms));
	for (r = 0; r < n; r++) {
		ASSERT_EQ(0, accel_signal_create(self->dev[r], &arrived[r]));
		base[r] = accel_signal_read(arrived[r]);
	}
	for (r = 0; r < n; r++)
		for (p = 0; p < n; p++) {
			int fd;
			uint64_t off;

			ASSERT_EQ(0, accel_signal_export(arrived[p], &fd, &off));
			ASSERT_EQ(0, accel_signal_import(self->dev[r], fd, off, &imp[r][p]));
			close(fd);
		}
	for (it = 1; it <= iters; it++) {
		for (r = 0; r < n; r++) {
			struct drm_vaccel_packet *pk;

			ASSERT_EQ(0, accel_queue_reserve(self->q[r], 2 + n, 10 * SEC));
			if (r == 1)
				accel_prep_delay(accel_queue_get_packet(self->q[r]), 2000);
			pk = accel_queue_get_packet(self->q[r]);
			accel_prep_signal(pk, accel_signal_va(imp[r][r]), DRM_VACCEL_SIGNAL_MAX,
					  base[r] + it);
			ASSERT_EQ(0, accel_barrier(comms[r], self->q[r], &ev[r]));
			for (p = 0; p < n; p++)
				accel_prep_wait(accel_queue_get_packet(self->q[r]),
						accel_signal_va(imp[r][p]), DRM_VACCEL_WAIT_GE,
						base[p] + it, 0, 1);
			ASSERT_LE(0, accel_queue_submit(self->q[r]));
		}
		if (it % batch && it != iters)
			continue;
		for (r = 0; r < n; r++) {
			struct accel_event done;

			ASSERT_EQ(0, accel_queue_record(self->q[r], &done));
			ASSERT_LE(0, accel_queue_submit(self->q[r]));
			ASSERT_EQ(0, accel_comm_wait(comms[r], &done, WAIT_NS))
				TH_LOG("barrier %u, rank %u", it, r);
		}
	}
	for (r = 0; r < n; r++)
		EXPECT_EQ(base[r] + iters, accel_signal_read(arrived[r]));
	for (r = 0; r < n; r++) {
		for (p = 0; p < n; p++)
			accel_signal_destroy(imp[r][p]);
		accel_signal_destroy(arrived[r]);
	}
	comm_free(comms, n);
}

TEST_F_TIMEOUT(comm, seed002_barrier_reused_oneshot, 900)
{
	barrier_reuse(_metadata, self, 4, ACCEL_COMM_ALGO_ONESHOT, iterations(100000));
}

TEST_F_TIMEOUT(comm, seed002_barrier_reused_ring, 900)
{
	barrier_reuse(_metadata, self, 3, ACCEL_COMM_ALGO_RING, iterations(100000));
}

/*
 * Seed 002 at the issue's count: one barrier reused 10^6 times by two
 * ranks, rank 1 slowed by a DELAY before each and rank 0 fast. 10^6
 * natively on the in-process device (about 3 minutes on the loaded 2-CPU
 * build machine); in the VM a tenth (10^6 took 6.5 minutes there while
 * the host built), on the debug kernel a hundredth.
 */
TEST_F_TIMEOUT(comm, seed002_barrier_reused_a_million_times, 1800)
{
	barrier_reuse(_metadata, self, 2, ACCEL_COMM_ALGO_ONESHOT, iterations(1000000));
}

/*
 * Seed 003: two ranks exchange in both directions at once through credit
 * channels (alltoall of 3 chunks per direction with 2 slots: every send
 * past the second waits for the peer's credit), many times; the data is
 * checked every 1000 iterations and at the end.
 */
TEST_F_TIMEOUT(comm, seed003_bidirectional_exchange, 900)
{
	struct accel_comm *comms[NDEV];
	struct run run = { .op = ACCEL_COMM_OP_ALLTOALL, .t = ACCEL_DTYPE_I32,
			   .count = 3 * CHUNK / 4 };
	struct accel_event ev[2];
	unsigned int it, r, iters = iterations(100000);
	bool pending = false;

	ASSERT_EQ(0, comm_make(self, 2, ACCEL_COMM_ALGO_ONESHOT, 10000, comms));
	for (it = 0; it < iters; it++) {
		if (it % 1000 == 0 || it + 1 == iters) {
			/*
			 * run_check() rewrites the buffers from the host: the
			 * exchanges still queued must be done first (found by
			 * ThreadSanitizer: the host's memset raced with an
			 * engine's COPY of the previous exchange)
			 */
			for (r = 0; r < 2 && pending; r++)
				ASSERT_EQ(0, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
			pending = false;
			ASSERT_EQ(0, run_check(_metadata, self, comms, 2, &run));
			continue;
		}
		for (r = 0; r < 2; r++)
			ASSERT_EQ(0, issue(self, comms[r], r, &run, &ev[r]));
		pending = true;
		if (it % 100 == 0) {
			for (r = 0; r < 2; r++)
				ASSERT_EQ(0, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
			pending = false;
		}
	}
	comm_free(comms, 2);
}

/*
 * Counters and sequence numbers started just below 2^32, 2^63 and 2^64;
 * a split in the middle takes a number too (the sequence wraps under it
 * from 2^64 - 5).
 */
TEST_F_TIMEOUT(comm, counters_across_wraps, 300)
{
	static const uint64_t bases[] = { (1ull << 32) - 5, (1ull << 63) - 5, 0 - 5ull };
	struct accel_comm *comms[NDEV];
	unsigned int b, i;

	for (b = 0; b < 3; b++) {
		acc_comm_test_base = bases[b];
		ASSERT_EQ(0, open_queues(_metadata, self));
		ASSERT_EQ(0, comm_make(self, 4, ACCEL_COMM_ALGO_RING, 0, comms));
		acc_comm_test_base = 0;
		for (i = 0; i < 12; i++) {
			struct run run = { .op = i % 2 ? ACCEL_COMM_OP_ALLREDUCE :
						 ACCEL_COMM_OP_ALLGATHER,
					   .t = ACCEL_DTYPE_I32, .redop = ACCEL_REDOP_SUM,
					   .count = 1031 + i };

			ASSERT_EQ(0, run_check(_metadata, self, comms, 4, &run))
				TH_LOG("base %#llx, operation %u", (unsigned long long)bases[b], i);
			if (i == 4) {
				struct accel_comm *kids[NDEV];
				unsigned int r;

				ASSERT_EQ(0, accel_group_start());
				for (r = 0; r < 4; r++)
					ASSERT_EQ(0, accel_comm_split(comms[r], 0, 0, &kids[r]));
				ASSERT_EQ(0, accel_group_end());
				comm_free(kids, 4);
			}
		}
		comm_free(comms, 4);
	}
}

/*
 * Two splits of one parent in one group from one thread, as every rank
 * calling accel_comm_split() twice in a row: each call gets its own
 * split's child (the second split must not hand its children to the first
 * calls, nor leak the first split's children), and nothing leaks.
 */
TEST_F_TIMEOUT(comm, split_twice_in_one_group, 120)
{
	struct accel_comm *comms[NDEV], *a[NDEV], *b[NDEV];
	uint64_t mem0[NDEV], mem;
	unsigned int r;

	ASSERT_EQ(0, comm_make(self, 4, 0, 2000, comms));
	for (r = 0; r < 4; r++)
		ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem0[r]));
	ASSERT_EQ(0, accel_group_start());
	for (r = 0; r < 4; r++)
		ASSERT_EQ(0, accel_comm_split(comms[r], (int)(r % 2), 0, &a[r]));
	for (r = 0; r < 4; r++)
		ASSERT_EQ(0, accel_comm_split(comms[r], 0, -(int)r, &b[r]));
	EXPECT_EQ(0, accel_group_end());
	for (r = 0; r < 4; r++) {
		EXPECT_EQ(2, accel_comm_count(a[r])) TH_LOG("rank %u's first split", r);
		EXPECT_EQ((int)(r / 2), accel_comm_rank(a[r])) TH_LOG("rank %u's first split", r);
		EXPECT_EQ(4, accel_comm_count(b[r])) TH_LOG("rank %u's second split", r);
		EXPECT_EQ((int)(3 - r), accel_comm_rank(b[r])) TH_LOG("rank %u's second split", r);
		EXPECT_EQ(self->dev[r], accel_comm_device(b[r]));
	}
	comm_free(b, 4);
	comm_free(a, 4);
	for (r = 0; r < 4; r++) {
		ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem));
		EXPECT_EQ(mem0[r], mem) TH_LOG("device %u", r);
	}
	comm_free(comms, 4);
}

/*
 * A split in a group from one thread that a rank never calls: every call
 * of the group fails -ETIMEDOUT within the parent's timeout (the calls
 * wait at once, not one timeout after another), nothing is made, and a
 * split then works.
 */
TEST_F_TIMEOUT(comm, split_in_a_group_times_out_once, 120)
{
	struct accel_comm *comms[NDEV], *kids[NDEV];
	int level = accel_log_get_level();
	unsigned int r;
	uint64_t t0, dt;

	ASSERT_EQ(0, comm_make(self, 4, 0, 1000, comms));
	wait_log.len = 0;
	wait_log.text[0] = 0;
	accel_log_set_handler(wait_log_handler, NULL);
	accel_log_set_level(ACCEL_LOG_WARN);
	t0 = vaccel_now_ms();
	ASSERT_EQ(0, accel_group_start());
	for (r = 0; r < 3; r++)		/* rank 3 never calls */
		ASSERT_EQ(0, accel_comm_split(comms[r], 0, 0, &kids[r]));
	EXPECT_EQ(-ETIMEDOUT, accel_group_end());
	dt = vaccel_now_ms() - t0;
	accel_log_set_handler(NULL, NULL);
	accel_log_set_level(level);
	EXPECT_GT(2000, dt) TH_LOG("after %llu ms, the timeout is 1000 ms",
				   (unsigned long long)dt);
	for (r = 0; r < 3; r++) {
		char want[96];

		EXPECT_EQ(NULL, kids[r]);
		/* each names rank 3 alone, also after the ranks before it left */
		snprintf(want, sizeof(want), "rank %u: seq 0: timed out; ranks that had not "
			 "called it: 0x8", r);
		EXPECT_NE(NULL, strstr(wait_log.text, want)) TH_LOG("no \"%s\" in:\n%s", want,
								   wait_log.text);
	}
	ASSERT_EQ(0, accel_group_start());
	for (r = 0; r < 4; r++)
		ASSERT_EQ(0, accel_comm_split(comms[r], 0, 0, &kids[r]));
	EXPECT_EQ(0, accel_group_end());
	for (r = 0; r < 4; r++)
		EXPECT_EQ((int)r, accel_comm_rank(kids[r]));
	comm_free(kids, 4);
	comm_free(comms, 4);
}

/*
 * The parent aborted while a split's children are made (the hidden hook
 * runs right before they are made, in the thread that makes them): no
 * rank gets a child, rank 0 (which aborted) says -ECANCELED and the
 * others -ECONNABORTED, as across processes, and the children's device
 * memory is given back. They used to be handed out with 0, their parent
 * aborted.
 */
static struct accel_comm *abort_in_split;

static void split_hook_abort(unsigned int rank)
{
	(void)rank;
	accel_comm_abort(abort_in_split);
}

TEST_F_TIMEOUT(comm, split_aborted_while_the_children_are_made, 60)
{
	struct accel_comm *comms[NDEV], *kids[NDEV];
	uint64_t mem0[NDEV], mem;
	unsigned int r;

	ASSERT_EQ(0, comm_make(self, 4, 0, 5000, comms));
	for (r = 0; r < 4; r++)
		ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem0[r]));
	abort_in_split = comms[0];
	acc_comm_test_split_hook = split_hook_abort;
	ASSERT_EQ(0, accel_group_start());
	for (r = 0; r < 4; r++)
		ASSERT_EQ(0, accel_comm_split(comms[r], 0, (int)r, &kids[r]));
	EXPECT_EQ(-ECANCELED, accel_group_end());
	acc_comm_test_split_hook = NULL;
	for (r = 0; r < 4; r++) {
		EXPECT_EQ(NULL, kids[r]) TH_LOG("rank %u", r);
		ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem));
		EXPECT_EQ(mem0[r], mem) TH_LOG("device %u", r);
	}
	comm_free(comms, 4);
}

/*
 * A split whose children cannot be made (rank 3's device refuses a
 * buffer): every rank fails with the error, each says so naming the
 * parent, its rank and the split, nothing is made, and a split then works.
 */
TEST_F_TIMEOUT(comm, split_that_cannot_make_children_fails_every_rank, 120)
{
	struct accel_comm *comms[NDEV], *kids[NDEV];
	int level = accel_log_get_level();
	uint64_t mem0[NDEV], mem;
	char want[96];
	unsigned int r;

	ASSERT_EQ(0, comm_make(self, 4, 0, 2000, comms));
	for (r = 0; r < 4; r++)
		ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem0[r]));
	ASSERT_EQ(0, accel_device_debug_write(self->dev[3], "fail_bo_create", "1"));
	wait_log.len = 0;
	wait_log.text[0] = 0;
	accel_log_set_handler(wait_log_handler, NULL);
	accel_log_set_level(ACCEL_LOG_WARN);
	ASSERT_EQ(0, accel_group_start());
	for (r = 0; r < 4; r++)
		ASSERT_EQ(0, accel_comm_split(comms[r], (int)(r / 2), 0, &kids[r]));
	EXPECT_EQ(-ENOMEM, accel_group_end());
	accel_log_set_handler(NULL, NULL);
	accel_log_set_level(level);
	TH_LOG("%s", wait_log.text);
	for (r = 0; r < 4; r++) {
		EXPECT_EQ(NULL, kids[r]);
		snprintf(want, sizeof(want), "rank %u: seq 0: the new communicators could not be "
			 "made", r);
		EXPECT_NE(NULL, strstr(wait_log.text, want)) TH_LOG("no \"%s\"", want);
		ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem));
		EXPECT_EQ(mem0[r], mem) TH_LOG("device %u", r);
	}
	ASSERT_EQ(0, accel_group_start());
	for (r = 0; r < 4; r++)
		ASSERT_EQ(0, accel_comm_split(comms[r], (int)(r / 2), 0, &kids[r]));
	EXPECT_EQ(0, accel_group_end());
	for (r = 0; r < 4; r++)
		EXPECT_EQ(2, accel_comm_count(kids[r]));
	comm_free(kids, 4);
	comm_free(comms, 4);
}

/* entries of a /proc/self directory (threads, open files), or -1 */
static int proc_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int threads_now(void)
{
	return proc_entries("/proc/self/task");
}

/* open files, not counting the directory stream that counts them */
static int fds_now(void)
{
	return proc_entries("/proc/self/fd") - 1;
}

/*
 * 1,000 rounds of create, use, destroy (natively on the in-process device;
 * 100 in the VM, 10 on the debug kernel: iterations()): device memory,
 * objects, open files and threads back to baseline.
 */
TEST_F_TIMEOUT(comm, create_use_destroy_1000, 900)
{
	struct accel_comm *comms[NDEV];
	struct run run = { .op = ACCEL_COMM_OP_ALLREDUCE, .t = ACCEL_DTYPE_I32,
			   .redop = ACCEL_REDOP_SUM, .count = 1031 };
	uint64_t mem0[NDEV], mem;
	long bos0, maps0;
	int thr0 = threads_now(), fd0;
	unsigned int i, r, rounds = iterations(1000);

	/* one round first: the library's own lazily made objects (signal pages) */
	ASSERT_EQ(0, comm_make(self, 3, 0, 0, comms));
	ASSERT_EQ(0, run_check(_metadata, self, comms, 3, &run));
	comm_free(comms, 3);
	for (r = 0; r < NDEV; r++)
		ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem0[r]));
	bos0 = lib_objects("bos");
	maps0 = lib_objects("mappings");
	fd0 = fds_now();
	for (i = 0; i < rounds; i++) {
		unsigned int n = 2 + i % 3;

		ASSERT_EQ(0, comm_make(self, n, i % 2 ? ACCEL_COMM_ALGO_RING : 0, 0, comms));
		ASSERT_EQ(0, run_check(_metadata, self, comms, n, &run));
		comm_free(comms, n);
	}
	for (r = 0; r < NDEV; r++) {
		ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem));
		EXPECT_EQ(mem0[r], mem);
	}
	EXPECT_EQ(bos0, lib_objects_wait("bos", bos0, 5000));
	EXPECT_EQ(maps0, lib_objects_wait("mappings", maps0, 5000));
	EXPECT_EQ(fd0, fds_now());
	EXPECT_EQ(thr0, threads_now());
}

/* --- the issue path's doorbells, kicks and heap allocations --- */

/*
 * An 8-byte allreduce (one-shot, @n ranks) and a barrier, each rank's
 * call then its wait: every rank call rings its queue's doorbell exactly
 * once (the wait rings none), KICKs at most once, and, once the rank's
 * plan buffers are warm, makes no heap allocation for its plan. Results
 * are checked on every iteration.
 */
static void issue_counts(struct __test_metadata *_metadata, FIXTURE_DATA(comm) *self,
			 unsigned int n)
{
	struct accel_comm *comms[NDEV];
	struct accel_event ev[NDEV];
	unsigned int it, r, iters = 200;
	uint64_t db0[NDEV], allocs0 = 0;
	long long k0 = 0, k1 = 0, k, sw0 = 0, sw1 = 0, it0 = 0, it1 = 0;

	ASSERT_EQ(0, comm_make(self, n, ACCEL_COMM_ALGO_ONESHOT, 10000, comms));
	for (it = 0; it < iters + 2; it++) {
		bool barrier = it % 2;

		if (it == 2) {	/* warm: each rank made one plan of each kind */
			allocs0 = atomic_load(&acc_comm_plan_allocs);
			for (r = 0; r < n; r++) {
				k = lib_dev_stat(self->dev[r], "kicks");
				ASSERT_LE(0, k);
				k0 += k;
				if (lib_on_sim()) {
					sw0 += lib_dev_stat(self->dev[r], "signal_shared_wakes");
					it0 += lib_dev_stat(self->dev[r], "inline_turns");
				}
			}
		}
		for (r = 0; r < n; r++) {
			float *s = self->s[r];

			s[0] = (float)(r + it);
			s[1] = 1.0f;
			db0[r] = acc_queue_doorbells(self->q[r]);
			if (barrier) {
				ASSERT_EQ(0, accel_barrier(comms[r], self->q[r], &ev[r]));
			} else {
				ASSERT_EQ(0, accel_allreduce(accel_buffer_va(self->sbuf[r]),
							     accel_buffer_va(self->rbuf[r]), 2,
							     ACCEL_DTYPE_F32, ACCEL_REDOP_SUM,
							     comms[r], self->q[r], &ev[r]));
			}
			ASSERT_EQ(1, acc_queue_doorbells(self->q[r]) - db0[r])
				TH_LOG("iteration %u, rank %u: doorbells of one call", it, r);
		}
		for (r = 0; r < n; r++) {
			ASSERT_EQ(0, accel_comm_wait(comms[r], &ev[r], WAIT_NS));
			ASSERT_EQ(1, acc_queue_doorbells(self->q[r]) - db0[r])
				TH_LOG("iteration %u, rank %u: doorbells of one call and its wait",
				       it, r);
		}
		for (r = 0; r < n && !barrier; r++) {
			const float *d = self->r[r];
			float want = (float)(n * it) + (float)(n * (n - 1) / 2);

			ASSERT_EQ(want, d[0]) TH_LOG("iteration %u, rank %u", it, r);
			ASSERT_EQ((float)n, d[1]) TH_LOG("iteration %u, rank %u", it, r);
		}
	}
	EXPECT_EQ(allocs0, atomic_load(&acc_comm_plan_allocs))
		TH_LOG("heap allocations of plans in %u warm calls per rank", iters);
	for (r = 0; r < n; r++) {
		k1 += lib_dev_stat(self->dev[r], "kicks");
		if (lib_on_sim()) {
			sw1 += lib_dev_stat(self->dev[r], "signal_shared_wakes");
			it1 += lib_dev_stat(self->dev[r], "inline_turns");
		}
	}
	/*
	 * In-process device: the ranks' signal pages never left the process,
	 * so no counter update needed a shared FUTEX_WAKE (31 per iteration
	 * while accel_comm_init_all() exported them as for another process).
	 */
	if (lib_on_sim()) {
		EXPECT_EQ(sw0, sw1) TH_LOG("shared futex wake-ups in %u warm calls per rank",
					   iters);
		TH_LOG("%u ranks: %lld turns run by the kicking thread", n, it1 - it0);
	}
	/* a KICK only when the engine sleeps (need_wakeup): at most one per call */
	EXPECT_GE((long long)iters * n, k1 - k0);
	TH_LOG("%u ranks: %lld KICKs in %u calls per rank (%.2f per call)", n, k1 - k0, iters,
	       (double)(k1 - k0) / (iters * n));
	comm_free(comms, n);
}

TEST_F(comm, issue_one_doorbell_per_rank_2) { issue_counts(_metadata, self, 2); }
TEST_F(comm, issue_one_doorbell_per_rank_4) { issue_counts(_metadata, self, 4); }

/* --- a failure at every step of accel_comm_init_all() --- */

/* inj, inj_arm(), inj_log(): comm_inject.h */

/*
 * For each device j and k = 1, 2, ...: the first buffer creation or
 * binding on device j after step k of accel_comm_init_all() fails. Each
 * init fails with -ENOMEM, its log naming rank j and its device, every
 * device buffer, mapping, fd, thread and heap block back at the
 * baseline, and the next init works; until k is past the last step.
 * Then the communicators work.
 */
TEST_F_TIMEOUT(comm, init_all_fails_cleanly_at_every_step, 600)
{
	struct accel_comm *comms[NDEV];
	struct run run = { .op = ACCEL_COMM_OP_ALLREDUCE, .t = ACCEL_DTYPE_I32,
			   .redop = ACCEL_REDOP_SUM, .count = 1031 };
	int level = accel_log_get_level(), thr0, fd0, ret, idx;
	struct accel_device_info list[128];
	unsigned int n, j, k, r, failed = 0;
	uint64_t mem0[NDEV], mem;
	char who[NDEV][96];
	long bos0, maps0;

	LIB_SIM_ONLY("the fault knobs fail_bo_create and fail_vm_bind");
	ASSERT_LT(0, accel_device_list(list, 128, sizeof(list[0])));
	for (r = 0; r < NDEV; r++) {
		idx = lib_index_of(ID0 + r);
		ASSERT_LE(0, idx);
		snprintf(who[r], sizeof(who[r]), "rank %u (%s)", r, list[idx].path);
	}
	for (n = 2; n <= NDEV; n++) {
		/*
		 * the library's lazily made objects (signal pages) first; no
		 * operation yet: a queue's wait on a peer's counter keeps the
		 * peer's signal page imported (lib/signal.c), and the imports
		 * of init would find it there instead of binding it
		 */
		ASSERT_EQ(0, comm_make(self, n, 0, 0, comms));
		comm_free(comms, n);
		for (r = 0; r < NDEV; r++)
			ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem0[r]));
		bos0 = lib_objects("bos");
		maps0 = lib_objects("mappings");
		fd0 = fds_now();
		thr0 = threads_now();
		for (j = 0; j < n; j++) {
			inj.dev = self->dev[j];
			for (k = 1;; k++) {
				inj.steps = 0;
				inj.arm_at = k;
				inj.armed = false;
				inj.comm_err[0] = 0;
				accel_log_set_handler(inj_log, NULL);
				accel_log_set_level(ACCEL_LOG_TRACE);
				ret = comm_make(self, n, 0, 0, comms);
				accel_log_set_level(level);
				accel_log_set_handler(NULL, NULL);
				inj_arm("0");
				if (!ret) {
					comm_free(comms, n);
					if (!inj.armed)
						break;	/* past the last step */
					continue;
				}
				failed++;
				EXPECT_EQ(-ENOMEM, ret) TH_LOG("%u ranks, device %u, step %u", n, j, k);
				EXPECT_NE(NULL, strstr(inj.comm_err, who[j]))
					TH_LOG("%u ranks, device %u, step %u: the log says \"%s\", not "
					       "which rank failed (%s)", n, j, k, inj.comm_err, who[j]);
				for (r = 0; r < NDEV; r++) {
					ASSERT_EQ(0, accel_device_memory_used(self->dev[r], &mem));
					EXPECT_EQ(mem0[r], mem) TH_LOG("%u ranks, device %u, step %u: "
								       "device %u", n, j, k, r);
				}
				EXPECT_EQ(bos0, lib_objects("bos"));
				EXPECT_EQ(maps0, lib_objects("mappings"));
				EXPECT_EQ(fd0, fds_now());
				EXPECT_EQ(thr0, threads_now());
				/* and nothing left behind stops the next one */
				ASSERT_EQ(0, comm_make(self, n, 0, 0, comms));
				comm_free(comms, n);
				if (!__test_passed(_metadata))
					return;
			}
		}
	}
	ksft_print_msg("%u failed inits\n", failed);
	for (n = 2; n <= NDEV; n++) {
		ASSERT_EQ(0, comm_make(self, n, 0, 0, comms));
		EXPECT_EQ(0, run_check(_metadata, self, comms, n, &run));
		comm_free(comms, n);
	}
	NO_LEAKS();
}

TEST_HARNESS_MAIN
