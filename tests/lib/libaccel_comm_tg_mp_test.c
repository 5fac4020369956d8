// SPDX-License-Identifier: GPL-2.0-only
/*
 * Collective tasks (accel_tg_allreduce(), accel_tg_alltoallv(),
 * accel_tg_sendrecv(), accel_tg_p2p(), accel_tg_barrier()) on a MULTI-PROCESS
 * communicator (accel_comm_get_unique_id(), accel_comm_init_rank()), on
 * both backends: 2, 3 and 4 forked processes, one rank each on its own
 * device with its own task graph. Each rank runs
 *
 *   - eager tasks: a COPY behind a DELAY writes the send tensor, then an
 *     allreduce, an alltoallv (counts and displacements every rank
 *     computes alike), a sendrecv ring shift (to rank + 1, from
 *     rank - 1) and a halo exchange as one accel_tg_p2p() group (the
 *     ring shift's tensor to both neighbours, a receive from each, the
 *     four in a mixed order; on 2 ranks both neighbours are one rank),
 *     a COPY reads each result out, a FILL overwrites the send
 *     tensor; a barrier task; the results against the host;
 *   - the same chain captured into a graph and launched 50 times (10 in
 *     the VM), odd launches with the input and output buffers bound to
 *     other buffers, new inputs each launch, every launch checked.
 *
 * A failed check ends the rank's process with a message; its peers then
 * fail on the communicator's timeout (2 s) or its death, and the parent
 * reaps every rank with a bounded wait, killing leftovers.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "kselftest_harness.h"
#include "libaccel_test.h"
#include "comm_mp_harness.h"

#define NMAX		4
#define ID0		1014
#define CHUNK		4096
#define BUFSZ		(64u << 10)
#define WAIT_NS		(20 * SEC)
#define AR_COUNT	301		/* allreduce elements */
#define Q_TASKS		0
#define Q_COLL		1

struct rank_ctx {
	unsigned int rank, n;
	struct accel_comm_id id;
	struct accel_device *dev;
	struct accel_comm *comm;
	struct accel_tg *tg;
	/* src (host inputs), send, receive, out (the results copied out); 2: rebinding */
	struct accel_buffer *src, *sbuf, *rbuf, *out, *src2, *out2;
	int logfd;
};

static struct accel_tensor view(struct accel_buffer *buf, uint64_t off, uint64_t n)
{
	struct accel_tensor v;
	uint64_t shape[1] = { n };

	accel_tensor_init(&v, buf, off * 4, ACCEL_DTYPE_I32, 1, shape);
	return v;
}

/*
 * The layout of the send tensor (and of src): [0, AR_COUNT) the
 * allreduce's input, then alltoallv's blocks, then the ring shift's
 * elements; the receive tensor (and out) likewise for the results.
 */
struct layout {
	uint64_t sc[NMAX], sd[NMAX], rc[NMAX], rd[NMAX];
	uint64_t a2av_s, a2av_sn, a2av_r, a2av_rn;	/* alltoallv's tensors: start, elements */
	uint64_t ring_s, ring_sn, ring_r, ring_rn;	/* the ring shift's */
	uint64_t halo_l, halo_ln, halo_r, halo_rn;	/* the halo's receives: from r - 1, r + 1 */
	uint64_t ns, nr;
};

/* what rank i sends rank j (every rank computes the same) */
static uint64_t a2av_count(unsigned int i, unsigned int j)
{
	return (i * 37 + j * 101 + 5) % 1200;	/* up to 1,200: several chunks; some small */
}

static uint64_t ring_count(unsigned int r)
{
	return 200 + r * 333;
}

static void layout_of(unsigned int n, unsigned int r, struct layout *l)
{
	uint64_t so = 0, ro = 0;
	unsigned int p;

	memset(l, 0, sizeof(*l));
	l->a2av_s = AR_COUNT;
	l->a2av_r = AR_COUNT;
	for (p = 0; p < n; p++) {
		l->sc[p] = a2av_count(r, p);
		l->sd[p] = so;
		so += l->sc[p] + 3;	/* gaps */
		l->rc[p] = a2av_count(p, r);
		l->rd[p] = ro;
		ro += l->rc[p] + 2;
	}
	l->a2av_sn = so;
	l->a2av_rn = ro;
	l->ring_s = l->a2av_s + so;
	l->ring_sn = ring_count(r);
	l->ring_r = l->a2av_r + ro;
	l->ring_rn = ring_count((r + n - 1) % n);
	l->halo_l = l->ring_r + l->ring_rn;
	l->halo_ln = ring_count((r + n - 1) % n);
	l->halo_r = l->halo_l + l->halo_ln;
	l->halo_rn = ring_count((r + 1) % n);
	l->ns = l->ring_s + l->ring_sn;
	l->nr = l->halo_r + l->halo_rn;
}

/* element @i of rank @r's send tensor in round @salt */
static int32_t sval(unsigned int r, uint64_t i, unsigned int salt)
{
	return (int32_t)(salt * 7919u + r * 100003u + (uint32_t)i);
}

static void fill(struct rank_ctx *x, struct accel_buffer *src, unsigned int salt)
{
	struct layout l;
	int32_t *s = accel_buffer_host(src);
	uint64_t i;

	layout_of(x->n, x->rank, &l);
	for (i = 0; i < l.ns; i++)
		s[i] = sval(x->rank, i, salt);
}

/* the results in @out against the host; 0 or the first wrong element + 1 (logged) */
static long long check(struct rank_ctx *x, struct accel_buffer *out, unsigned int salt)
{
	const int32_t *o = accel_buffer_host(out);
	struct layout l, lp;
	unsigned int p, n = x->n, r = x->rank, from = (r + n - 1) % n;
	uint64_t i;

	layout_of(n, r, &l);
	for (i = 0; i < AR_COUNT; i++) {
		int32_t want = 0;

		for (p = 0; p < n; p++)
			want = (int32_t)((uint32_t)want + (uint32_t)sval(p, i, salt));
		if (o[i] != want)
			goto bad;
	}
	for (p = 0; p < n; p++) {
		layout_of(n, p, &lp);
		for (i = 0; i < l.rc[p]; i++)
			if (o[l.a2av_r + l.rd[p] + i] != sval(p, lp.a2av_s + lp.sd[r] + i, salt)) {
				i = l.a2av_r + l.rd[p] + i;
				goto bad;
			}
	}
	layout_of(n, from, &lp);
	for (i = 0; i < l.ring_rn; i++)
		if (o[l.ring_r + i] != sval(from, lp.ring_s + i, salt)) {
			i += l.ring_r;
			goto bad;
		}
	for (i = 0; i < l.halo_ln; i++)
		if (o[l.halo_l + i] != sval(from, lp.ring_s + i, salt)) {
			i += l.halo_l;
			goto bad;
		}
	layout_of(n, (r + 1) % n, &lp);
	for (i = 0; i < l.halo_rn; i++)
		if (o[l.halo_r + i] != sval((r + 1) % n, lp.ring_s + i, salt)) {
			i += l.halo_r;
			goto bad;
		}
	return 0;
bad:
	fprintf(stderr, "rank %u of %u, round %u: element %llu is %#x\n", r, n, salt,
		(unsigned long long)i, o[i]);
	return (long long)i + 1;
}

static int task_on(struct accel_tg *tg, struct accel_task *tk)
{
	tk->device = 0;
	tk->queue = Q_TASKS;
	return accel_tg_submit(tg, tk, NULL);
}

/* The chain of tasks (eager or captured); @eager adds the DELAY and the FILL after. */
static int chain(struct rank_ctx *x, bool eager)
{
	struct layout l;
	struct accel_tensor srcv, sv, rv, outv, a, b, c, d, hl, hr;
	struct accel_p2p_op halo[4];
	struct accel_task tk;
	unsigned int n = x->n, r = x->rank;
	int ret;

	layout_of(n, r, &l);
	accel_task_prep_delay(&tk, 2000000);
	ret = task_on(x->tg, &tk);
	if (ret)
		return ret;
	srcv = view(x->src, 0, l.ns);
	sv = view(x->sbuf, 0, l.ns);
	accel_task_prep_copy(&tk, &sv, &srcv, ACCEL_OUTPUT);
	ret = task_on(x->tg, &tk);
	if (ret)
		return ret;
	a = view(x->sbuf, 0, AR_COUNT);
	b = view(x->rbuf, 0, AR_COUNT);
	ret = accel_tg_allreduce(x->tg, &a, &b, ACCEL_REDOP_SUM, x->comm, NULL);
	if (ret)
		return ret;
	a = view(x->sbuf, l.a2av_s, l.a2av_sn);
	b = view(x->rbuf, l.a2av_r, l.a2av_rn);
	ret = accel_tg_alltoallv(x->tg, &a, l.sc, l.sd, &b, l.rc, l.rd, x->comm, NULL);
	if (ret)
		return ret;
	c = view(x->sbuf, l.ring_s, l.ring_sn);
	d = view(x->rbuf, l.ring_r, l.ring_rn);
	ret = accel_tg_sendrecv(x->tg, &c, (int)((r + 1) % n), &d, (int)((r + n - 1) % n),
				x->comm, NULL);
	if (ret)
		return ret;
	hl = view(x->rbuf, l.halo_l, l.halo_ln);
	hr = view(x->rbuf, l.halo_r, l.halo_rn);
	memset(halo, 0, sizeof(halo));
	halo[0] = (struct accel_p2p_op){ .tensor = &hr, .peer = (int)((r + 1) % n),
					 .flags = ACCEL_P2P_RECV };
	halo[1] = (struct accel_p2p_op){ .tensor = &c, .peer = (int)((r + n - 1) % n) };
	halo[2] = (struct accel_p2p_op){ .tensor = &hl, .peer = (int)((r + n - 1) % n),
					 .flags = ACCEL_P2P_RECV };
	halo[3] = (struct accel_p2p_op){ .tensor = &c, .peer = (int)((r + 1) % n) };
	ret = accel_tg_p2p(x->tg, halo, 4, x->comm, NULL);
	if (ret)
		return ret;
	ret = accel_tg_barrier(x->tg, x->comm, NULL);
	if (ret)
		return ret;
	rv = view(x->rbuf, 0, l.nr);
	outv = view(x->out, 0, l.nr);
	accel_task_prep_copy(&tk, &outv, &rv, ACCEL_OUTPUT);
	ret = task_on(x->tg, &tk);
	if (ret || !eager)
		return ret;
	accel_task_prep_fill(&tk, &sv, ACCEL_OUTPUT, 0x7f);
	return task_on(x->tg, &tk);
}

static unsigned int launches(void)
{
	const char *s = getenv("ACCEL_COMM_TEST_ITERS");

	if (s && atoi(s) > 0)
		return (unsigned int)atoi(s);
	return lib_on_sim() ? 50 : 10;
}

static void rank_main(struct rank_ctx *x)
{
	struct accel_comm_params cp = { .size = sizeof(cp), .chunk_bytes = CHUNK,
					.timeout_ms = 2000 };
	struct accel_tg_params tp = { .size = sizeof(tp), .queues_per_device = 2,
				      .ring_size = 4096, .timeout_ns = 10 * SEC };
	struct accel_binding bind[2];
	struct accel_graph_exec *ge;
	struct accel_graph *g;
	unsigned int it, nl = launches();

	RCHECK_EQ(0, accel_comm_init_rank(&x->comm, x->n, &x->id, x->rank, x->dev, &cp));
	RCHECK_EQ(0, accel_tg_create(&x->dev, 1, &tp, &x->tg));
	/* eager, twice */
	for (it = 0; it < 2; it++) {
		fill(x, x->src, it);
		memset(accel_buffer_host(x->out), 0x33, BUFSZ);
		RCHECK_EQ(0, chain(x, true));
		RCHECK_EQ(0, accel_tg_sync(x->tg, WAIT_NS));
		RCHECK_EQ(0, check(x, x->out, it));
	}
	/* captured, launched with rebinding */
	RCHECK_EQ(0, accel_tg_capture_begin(x->tg));
	RCHECK_EQ(0, chain(x, false));
	RCHECK_EQ(0, accel_tg_capture_end(x->tg, &g));
	RCHECK_EQ(0, accel_graph_instantiate(g, &ge));
	for (it = 0; it < nl; it++) {
		bool alt = it % 2;

		fill(x, alt ? x->src2 : x->src, 10 + it);
		memset(accel_buffer_host(alt ? x->out2 : x->out), 0x33, BUFSZ);
		bind[0] = (struct accel_binding){ x->src, x->src2 };
		bind[1] = (struct accel_binding){ x->out, x->out2 };
		RCHECK_EQ(0, accel_graph_launch(ge, alt ? bind : NULL, alt ? 2 : 0));
		RCHECK_EQ(0, accel_graph_exec_wait(ge, WAIT_NS));
		RCHECK_EQ(0, check(x, alt ? x->out2 : x->out, 10 + it));
	}
	RCHECK_EQ(0, accel_comm_get_async_error(x->comm, NULL, 0));
	accel_graph_exec_destroy(ge);
	accel_graph_destroy(g);
	/* the communicator first: the task graph's graphs are gone, it goes now */
	accel_comm_destroy(x->comm);
	accel_tg_destroy(x->tg);
}

static pid_t spawn(const struct rank_ctx *tmpl, unsigned int rank)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	{
		struct rank_ctx ctx = *tmpl, *x = &ctx;
		struct accel_buffer **b[] = { &x->src, &x->sbuf, &x->rbuf, &x->out, &x->src2,
					      &x->out2 };
		char path[300];
		unsigned int i;

		x->rank = rank;
		mp_rank_log_begin(&x->logfd);
		RCHECK_EQ(0, lib_node_path(ID0 + rank, path, sizeof(path)));
		RCHECK_EQ(0, accel_device_open_path(path, &x->dev));
		for (i = 0; i < sizeof(b) / sizeof(b[0]); i++)
			RCHECK_EQ(0, accel_buffer_create(x->dev, BUFSZ, ACCEL_BUFFER_HOST, b[i]));
		rank_main(x);
		for (i = 0; i < sizeof(b) / sizeof(b[0]); i++)
			accel_buffer_destroy(*b[i]);
		accel_device_close(x->dev);
		_exit(0);
	}
}

static void run(struct __test_metadata *_metadata, unsigned int n)
{
	struct rank_ctx t;
	pid_t pids[NMAX];
	int st[NMAX];
	unsigned int i;
	char spec[64];
	const char *scale = getenv("KSFT_TIMEOUT_SCALE");

	if (!lib_present())
		SKIP(return, "vaccel is not loaded");
	for (i = 0; i < NMAX; i++)
		lib_del_device(ID0 + i);
	for (i = 0; i < n; i++) {
		snprintf(spec, sizeof(spec), "%u memory=64M", ID0 + i);
		ASSERT_EQ(0, lib_new_device(spec));
	}
	memset(&t, 0, sizeof(t));
	t.n = n;
	ASSERT_EQ(0, accel_comm_get_unique_id(&t.id));
	for (i = 0; i < n; i++)
		pids[i] = spawn(&t, i);
	/* bounded: every rank within 240 s (scaled), then the leftovers are killed */
	mp_reap(pids, n, 240000 * (scale && atoi(scale) > 1 ? atoi(scale) : 1), st);
	for (i = 0; i < n; i++) {
		if (st[i])
			TH_LOG("rank %u of %u ended with %d", i, n, st[i]);
		EXPECT_EQ(0, st[i]);
	}
	ksft_print_msg("%u processes: eager twice, %u launches each\n", n, launches());
	for (i = 0; i < NMAX; i++)
		lib_del_device(ID0 + i);
}

TEST(tasks_2_processes) { run(_metadata, 2); }
TEST(tasks_3_processes) { run(_metadata, 3); }
TEST(tasks_4_processes) { run(_metadata, 4); }

TEST_HARNESS_MAIN
