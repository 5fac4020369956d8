// SPDX-License-Identifier: GPL-2.0-only
/*
 * accel-bench OP: the collectives in nccl-tests' format, on either
 * backend. One process, one rank per device (accel_comm_init_all()); one
 * thread issues every rank's call in turn (calls never wait for peers).
 *
 *   accel-bench allreduce -b 8 -e 64M -f 2 -g 4
 *
 * Per size: #wrong from -c N checked runs (inputs of small integers, so
 * that every dtype's result is exact but AVG's), then -w warm-up and -n
 * timed iterations out of place and in place; time is the mean per
 * iteration (issue of every rank to the completion of every rank);
 * algbw = size / time; busbw = algbw x nccl-tests' factor (allreduce
 * 2(n-1)/n; allgather, reducescatter, alltoall (n-1)/n; broadcast,
 * reduce, sendrecv 1); the algorithm of each row is read back from rank
 * 0's flight recorder ("p2p" for sendrecv, which the recorder does not
 * see: each rank sends to rank + 1 and receives from rank - 1 in a group,
 * through the peers' staging). After the table: "Avg bus bandwidth", then the baselines of
 * the same run the performance targets compare with (the host's copy
 * bandwidth, the link bandwidth with -L, the hot NOP round trip).
 *
 * -p: the multi-process form. The parent makes fresh bus devices and an
 * accel_comm_id and forks one process per rank; each opens its device
 * and calls accel_comm_init_rank(); every rank runs the table on its own
 * rank, writes its times and #wrong into a shared page, and after a
 * barrier rank 0 prints the row (time: the slowest rank's; #wrong: the
 * sum).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <accel/accel.h>

#include "accel_bench_coll.h"

#define MAX_DEV		16
#define BENCH_ID0	940	/* -L: fresh bus devices BENCH_ID0 + i */

static const char *const ops[] = {
	"allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce", "sendrecv",
};

bool accel_bench_coll_is_op(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(name, ops[i]))
			return true;
	return false;
}

static const struct {
	const char *name;
	enum accel_dtype t;
} dtypes[] = {
	{ "int8", ACCEL_DTYPE_I8 }, { "uint8", ACCEL_DTYPE_U8 }, { "int32", ACCEL_DTYPE_I32 },
	{ "uint32", ACCEL_DTYPE_U32 }, { "int64", ACCEL_DTYPE_I64 }, { "uint64", ACCEL_DTYPE_U64 },
	{ "half", ACCEL_DTYPE_F16 }, { "float", ACCEL_DTYPE_F32 }, { "double", ACCEL_DTYPE_F64 },
	{ "bfloat16", ACCEL_DTYPE_BF16 },
};

static const char *const redops[] = { "sum", "prod", "min", "max", "avg" };

struct bench {
	enum accel_comm_op op;
	const char *opname;
	unsigned int n;
	enum accel_dtype t;
	const char *tname;
	unsigned int es;
	enum accel_redop redop;	/* ACCEL_REDOP_COUNT: not a reduction */
	int root;
	unsigned int iters, warmup, check;
	bool blocking;
	uint32_t algo;
	unsigned int link_mbps;
	unsigned int chunk, slots;	/* accel_comm_params; 0: the library's default */
	uint64_t minb, maxb;
	double factor;
	struct accel_device *dev[MAX_DEV];
	struct accel_queue *q[MAX_DEV];
	struct accel_buffer *sb[MAX_DEV], *rb[MAX_DEV];
	struct accel_comm *comm[MAX_DEV];
	bool created;
	/* the ranks of this process: [lo, hi) (all, or one with -p) */
	unsigned int lo, hi;
	bool procs;			/* -p: one process per rank */
	struct accel_comm_id id;	/* -p: the job's */
	struct procs_shared *sh;	/* -p: what the ranks tell rank 0 */
	/* -G: one task graph over the ranks' devices, a graph per (count, in place) */
	bool graph;
	struct accel_tg *tg;
	struct accel_graph *g[2];
	struct accel_graph_exec *ge[2];
	uint64_t gcount[2];
};

/* -p: each rank's figures of a row, and its pid, for rank 0 to print. */
struct procs_shared {
	struct {
		int32_t pid;
		uint32_t dev_id, engines;
		double t[2];
		uint64_t wrong[2];
	} r[MAX_DEV];
};

static void die(const char *what, int err)
{
	fprintf(stderr, "accel-bench: %s: %s\n", what, accel_strerror(err));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	switch (*end) {
	case 'K': case 'k': v *= 1024; break;
	case 'M': case 'm': v *= 1024 * 1024; break;
	case 'G': case 'g': v *= 1024.0 * 1024 * 1024; break;
	case 0: break;
	default: return 0;
	}
	return (uint64_t)v;
}

/* --- host values: small integers, exact in every dtype --- */

static double f16_dec(uint16_t h)
{
	int e = (h >> 10) & 0x1f;
	double m = h & 0x3ff, v = e ? ldexp(m + 1024, e - 25) : ldexp(m, -24);

	return (h & 0x8000) ? -v : v;
}

static uint16_t f16_enc(double v)	/* small integers and halves only: exact */
{
	int e;
	double m;
	uint16_t s = v < 0 ? 0x8000 : 0;

	v = fabs(v);
	if (v == 0)
		return s;
	m = frexp(v, &e);	/* v = m 2^e, m in [0.5, 1) */
	return s | (uint16_t)((e + 14) << 10) | (uint16_t)((uint32_t)lrint(m * 2048) & 0x3ff);
}

static void put(const struct bench *b, void *base, uint64_t i, double v)
{
	switch (b->t) {
	case ACCEL_DTYPE_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
	case ACCEL_DTYPE_I8: ((int8_t *)base)[i] = (int8_t)v; break;
	case ACCEL_DTYPE_U16: ((uint16_t *)base)[i] = (uint16_t)v; break;
	case ACCEL_DTYPE_I16: ((int16_t *)base)[i] = (int16_t)v; break;
	case ACCEL_DTYPE_F16: ((uint16_t *)base)[i] = f16_enc(v); break;
	case ACCEL_DTYPE_BF16: {
		float f = (float)v;
		uint32_t u;

		memcpy(&u, &f, 4);
		((uint16_t *)base)[i] = (uint16_t)(u >> 16);
		break;
	}
	case ACCEL_DTYPE_U32: ((uint32_t *)base)[i] = (uint32_t)v; break;
	case ACCEL_DTYPE_I32: ((int32_t *)base)[i] = (int32_t)v; break;
	case ACCEL_DTYPE_F32: ((float *)base)[i] = (float)v; break;
	case ACCEL_DTYPE_U64: ((uint64_t *)base)[i] = (uint64_t)v; break;
	case ACCEL_DTYPE_I64: ((int64_t *)base)[i] = (int64_t)v; break;
	default: ((double *)base)[i] = v; break;
	}
}

static double get(const struct bench *b, const void *base, uint64_t i)
{
	switch (b->t) {
	case ACCEL_DTYPE_U8: return ((const uint8_t *)base)[i];
	case ACCEL_DTYPE_I8: return ((const int8_t *)base)[i];
	case ACCEL_DTYPE_U16: return ((const uint16_t *)base)[i];
	case ACCEL_DTYPE_I16: return ((const int16_t *)base)[i];
	case ACCEL_DTYPE_F16: return f16_dec(((const uint16_t *)base)[i]);
	case ACCEL_DTYPE_BF16: {
		uint32_t u = (uint32_t)((const uint16_t *)base)[i] << 16;
		float f;

		memcpy(&f, &u, 4);
		return f;
	}
	case ACCEL_DTYPE_U32: return ((const uint32_t *)base)[i];
	case ACCEL_DTYPE_I32: return ((const int32_t *)base)[i];
	case ACCEL_DTYPE_F32: return ((const float *)base)[i];
	case ACCEL_DTYPE_U64: return (double)((const uint64_t *)base)[i];
	case ACCEL_DTYPE_I64: return (double)((const int64_t *)base)[i];
	default: return ((const double *)base)[i];
	}
}

/* Rank @r's input element @i (of its whole send buffer); @run varies it per check. */
static double val(const struct bench *b, unsigned int r, uint64_t i, unsigned int run)
{
	if (b->redop == ACCEL_REDOP_PROD)
		return (double)((r + i + run) % 2 + 1);
	return (double)((r * 7 + i * 3 + run) % 5 + 1);
}

static double reduce_of(const struct bench *b, uint64_t i, unsigned int run)
{
	double acc = val(b, 0, i, run), v;
	unsigned int r;

	for (r = 1; r < b->n; r++) {
		v = val(b, r, i, run);
		switch (b->redop) {
		case ACCEL_REDOP_PROD: acc *= v; break;
		case ACCEL_REDOP_MIN: acc = v < acc ? v : acc; break;
		case ACCEL_REDOP_MAX: acc = v > acc ? v : acc; break;
		default: acc += v; break;
		}
	}
	return b->redop == ACCEL_REDOP_AVG ? acc / b->n : acc;
}

/* The per-rank element counts of a row of @bytes (nccl-tests' size). */
static void counts_of(const struct bench *b, uint64_t bytes, uint64_t *count, uint64_t *sendn,
		      uint64_t *recvn)
{
	uint64_t el = bytes / b->es;

	switch (b->op) {
	case ACCEL_COMM_OP_ALLGATHER:
		*count = el / b->n;
		*sendn = *count;
		*recvn = *count * b->n;
		break;
	case ACCEL_COMM_OP_REDUCESCATTER:
		*count = el / b->n;
		*sendn = *count * b->n;
		*recvn = *count;
		break;
	case ACCEL_COMM_OP_ALLTOALL:
		*count = el / b->n;
		*sendn = *recvn = *count * b->n;
		break;
	default:
		*count = *sendn = *recvn = el;
		break;
	}
}

static double busbw_factor(const struct bench *b)
{
	double n = b->n;

	switch (b->op) {
	case ACCEL_COMM_OP_ALLREDUCE:
		return 2 * (n - 1) / n;
	case ACCEL_COMM_OP_ALLGATHER:
	case ACCEL_COMM_OP_REDUCESCATTER:
	case ACCEL_COMM_OP_ALLTOALL:
		return (n - 1) / n;
	default:
		return 1;
	}
}

/* The send and recv addresses of rank @r (in place: inside recv as NCCL says). */
static void addrs(const struct bench *b, unsigned int r, uint64_t count, bool inplace,
		  uint64_t *s, uint64_t *d)
{
	*d = accel_buffer_va(b->rb[r]);
	*s = accel_buffer_va(b->sb[r]);
	if (!inplace)
		return;
	if (b->op == ACCEL_COMM_OP_ALLGATHER)
		*s = *d + r * count * b->es;
	else if (b->op == ACCEL_COMM_OP_REDUCESCATTER)
		*d = (*s = *d) + r * count * b->es;
	else
		*s = *d;
}

/*
 * nccl-tests' sendrecv: rank r sends its buffer to r + 1 and receives
 * from r - 1, in one group (the rank's event covers both). Each rank's
 * group is issued on its own queue, so issuing the ranks in turn from one
 * thread never waits for a peer.
 */
static int sendrecv(struct bench *b, unsigned int r, uint64_t s, uint64_t d, uint64_t count,
		    struct accel_event *ev)
{
	int ret = accel_group_start(), r2;

	if (ret)
		return ret;
	ret = accel_send(s, count, b->t, (int)((r + 1) % b->n), b->comm[r], b->q[r], ev);
	if (!ret)
		ret = accel_recv(d, count, b->t, (int)((r + b->n - 1) % b->n), b->comm[r], b->q[r],
				 ev);
	r2 = accel_group_end();
	return ret ? ret : r2;
}

static int issue(struct bench *b, unsigned int r, uint64_t count, bool inplace,
		 struct accel_event *ev)
{
	uint64_t s, d;

	addrs(b, r, count, inplace, &s, &d);
	switch (b->op) {
	case ACCEL_COMM_OP_ALLREDUCE:
		return accel_allreduce(s, d, count, b->t, b->redop, b->comm[r], b->q[r], ev);
	case ACCEL_COMM_OP_REDUCE:
		return accel_reduce(s, d, count, b->t, b->redop, b->root, b->comm[r], b->q[r], ev);
	case ACCEL_COMM_OP_BROADCAST:
		return accel_broadcast(s, d, count, b->t, b->root, b->comm[r], b->q[r], ev);
	case ACCEL_COMM_OP_ALLGATHER:
		return accel_allgather(s, d, count, b->t, b->comm[r], b->q[r], ev);
	case ACCEL_COMM_OP_REDUCESCATTER:
		return accel_reducescatter(s, d, count, b->t, b->redop, b->comm[r], b->q[r], ev);
	case ACCEL_COMM_OP_SEND:	/* sendrecv: a group of its own per rank */
		return sendrecv(b, r, s, d, count, ev);
	default:
		return accel_alltoall(s, d, count, b->t, b->comm[r], b->q[r], ev);
	}
}

/*
 * issue(), and once more after the rank's queue has drained if it
 * returned -EAGAIN: the ring had no room for the whole operation, or the
 * rank was ACC_COMM_WINDOW calls ahead of a peer. Nothing changed then
 * (comm.h), so iterations beyond what a ring holds (-n 3000) wait for
 * earlier ones instead of failing. Every rank before @r in this process
 * issued the same call already and every rank after it the previous one,
 * so the drain waits for nothing this thread still has to do.
 */
static int issue_room(struct bench *b, unsigned int r, uint64_t count, bool inplace,
		      struct accel_event *ev)
{
	int ret = issue(b, r, count, inplace, ev);

	if (ret != -EAGAIN)
		return ret;
	ret = accel_queue_sync(b->q[r], 60000000000ll);
	return ret ? ret : issue(b, r, count, inplace, ev);
}

/* -G: the collective of rank @r as a task of b->tg (tensors over the same addresses) */
static int issue_task(struct bench *b, unsigned int r, uint64_t count, bool inplace)
{
	struct accel_tensor sv, rv;
	uint64_t s, d, sendn, recvn, c, shape[1];
	bool nx = b->op == ACCEL_COMM_OP_ALLGATHER || b->op == ACCEL_COMM_OP_REDUCESCATTER ||
		  b->op == ACCEL_COMM_OP_ALLTOALL;

	counts_of(b, count * b->es * (nx ? b->n : 1), &c, &sendn, &recvn);
	addrs(b, r, count, inplace, &s, &d);
	shape[0] = sendn;
	accel_tensor_init(&sv, s >= accel_buffer_va(b->rb[r]) &&
			  s < accel_buffer_va(b->rb[r]) + accel_buffer_size(b->rb[r]) ? b->rb[r] :
			  b->sb[r], 0, b->t, 1, shape);
	sv.offset = s - accel_buffer_va(sv.buf);
	shape[0] = recvn;
	accel_tensor_init(&rv, b->rb[r], d - accel_buffer_va(b->rb[r]), b->t, 1, shape);
	switch (b->op) {
	case ACCEL_COMM_OP_ALLREDUCE:
		return accel_tg_allreduce(b->tg, &sv, &rv, b->redop, b->comm[r], NULL);
	case ACCEL_COMM_OP_REDUCE:
		return accel_tg_reduce(b->tg, &sv, &rv, b->redop, b->root, b->comm[r], NULL);
	case ACCEL_COMM_OP_BROADCAST:
		return accel_tg_broadcast(b->tg, &sv, &rv, b->root, b->comm[r], NULL);
	case ACCEL_COMM_OP_ALLGATHER:
		return accel_tg_allgather(b->tg, &sv, &rv, b->comm[r], NULL);
	case ACCEL_COMM_OP_REDUCESCATTER:
		return accel_tg_reducescatter(b->tg, &sv, &rv, b->redop, b->comm[r], NULL);
	case ACCEL_COMM_OP_SEND:	/* sendrecv: one task of the rank's pair (in place too) */
		return accel_tg_sendrecv(b->tg, &sv, (int)((r + 1) % b->n), &rv,
					 (int)((r + b->n - 1) % b->n), b->comm[r], NULL);
	default:
		return accel_tg_alltoall(b->tg, &sv, &rv, b->comm[r], NULL);
	}
}

/* -G: the graph of one iteration at @count, captured once per size and placement */
static struct accel_graph_exec *graph_of(struct bench *b, uint64_t count, bool inplace)
{
	unsigned int r;
	int ret;

	if (b->ge[inplace] && b->gcount[inplace] == count)
		return b->ge[inplace];
	accel_graph_exec_destroy(b->ge[inplace]);
	accel_graph_destroy(b->g[inplace]);
	b->ge[inplace] = NULL;
	b->g[inplace] = NULL;
	ret = accel_tg_capture_begin(b->tg);
	for (r = 0; !ret && r < b->n; r++)
		ret = issue_task(b, r, count, inplace);
	if (accel_tg_capture_end(b->tg, &b->g[inplace]) && !ret)
		ret = -EINVAL;
	if (!ret)
		ret = accel_graph_instantiate(b->g[inplace], &b->ge[inplace]);
	if (ret)
		die("-G: capture", ret);
	b->gcount[inplace] = count;
	return b->ge[inplace];
}

static void wait_all(struct bench *b, struct accel_event *ev)
{
	unsigned int r;
	int ret;

	if (b->graph) {
		ret = accel_tg_sync(b->tg, 60000000000ll);
		if (ret)
			die(b->opname, ret);
		return;
	}
	for (r = b->lo; r < b->hi; r++) {
		ret = accel_comm_wait(b->comm[r], &ev[r], 60000000000ll);
		if (ret)
			die(b->opname, ret);
	}
}

/* One iteration on every rank; waited for if @wait. */
static void iteration(struct bench *b, uint64_t count, bool inplace, struct accel_event *ev,
		      bool wait)
{
	unsigned int r;
	int ret;

	if (b->graph) {	/* one launch of the captured iteration */
		ret = accel_graph_launch(graph_of(b, count, inplace), NULL, 0);
		if (ret)
			die(b->opname, ret);
	}
	for (r = b->lo; !b->graph && r < b->hi; r++) {
		ret = issue_room(b, r, count, inplace, &ev[r]);
		if (ret)
			die(b->opname, ret);
	}
	if (wait)
		wait_all(b, ev);
}

/* Fill the inputs, run once, count the wrong elements of every rank's output. */
static uint64_t check_once(struct bench *b, uint64_t count, bool inplace, unsigned int run)
{
	uint64_t sendn, recvn, c, i, wrong = 0, s, d;
	struct accel_event ev[MAX_DEV];
	bool flt = b->t == ACCEL_DTYPE_F16 || b->t == ACCEL_DTYPE_BF16 ||
		   b->t == ACCEL_DTYPE_F32 || b->t == ACCEL_DTYPE_F64;
	unsigned int r, n = b->n;

	counts_of(b, count * b->es * (b->op == ACCEL_COMM_OP_ALLGATHER ||
				      b->op == ACCEL_COMM_OP_REDUCESCATTER ||
				      b->op == ACCEL_COMM_OP_ALLTOALL ? n : 1), &c, &sendn, &recvn);
	for (r = b->lo; r < b->hi; r++) {
		uint8_t *sh = accel_buffer_host(b->sb[r]), *rh = accel_buffer_host(b->rb[r]);
		uint8_t *in;

		addrs(b, r, count, inplace, &s, &d);
		in = inplace ? rh + (s - accel_buffer_va(b->rb[r])) : sh;
		memset(rh, 0, recvn * b->es > sendn * b->es ? recvn * b->es : sendn * b->es);
		for (i = 0; i < sendn; i++)
			put(b, in, i, val(b, r, i, run));
	}
	iteration(b, count, inplace, ev, true);
	for (r = b->lo; r < b->hi; r++) {
		const uint8_t *out = accel_buffer_host(b->rb[r]);

		addrs(b, r, count, inplace, &s, &d);
		out += d - accel_buffer_va(b->rb[r]);
		if (b->op == ACCEL_COMM_OP_REDUCE && (int)r != b->root)
			continue;
		for (i = 0; i < recvn; i++) {
			double want, got = get(b, out, i);

			switch (b->op) {
			case ACCEL_COMM_OP_ALLREDUCE:
			case ACCEL_COMM_OP_REDUCE:
				want = reduce_of(b, i, run);
				break;
			case ACCEL_COMM_OP_BROADCAST:
				want = val(b, (unsigned int)b->root, i, run);
				break;
			case ACCEL_COMM_OP_ALLGATHER:
				want = val(b, (unsigned int)(i / count), i % count, run);
				break;
			case ACCEL_COMM_OP_REDUCESCATTER:
				want = reduce_of(b, r * count + i, run);
				break;
			case ACCEL_COMM_OP_SEND:	/* sendrecv: rank r - 1's buffer */
				want = val(b, (r + n - 1) % n, i, run);
				break;
			default:	/* alltoall: block j of rank j's send */
				want = val(b, (unsigned int)(i / count), r * count + i % count, run);
				break;
			}
			if (flt ? fabs(got - want) > 1e-2 * fmax(1, fabs(want)) : got != want)
				wrong++;
		}
	}
	return wrong;
}

/* The algorithm rank 0's last operation ran, from its flight recorder. */
static void last_algo(struct bench *b, char *out, size_t len)
{
	int fd = memfd_create("trace", MFD_CLOEXEC);
	char *doc = NULL, *p, *q;
	off_t size;

	snprintf(out, len, "?");
	if (fd < 0)
		return;
	if (!accel_comm_dump(b->comm[b->lo], fd) && (size = lseek(fd, 0, SEEK_END)) > 0) {
		doc = calloc(1, (size_t)size + 1);
		if (doc && pread(fd, doc, (size_t)size, 0) == size) {
			for (p = doc, q = NULL; (p = strstr(p, "\"algo\": \"")); p++)
				q = p;
			if (q)
				sscanf(q, "\"algo\": \"%15[a-z]\"", out);
		}
	}
	free(doc);
	close(fd);
}

/* Mean ns per iteration of @iters after @warmup. */
static double timed(struct bench *b, uint64_t count, bool inplace)
{
	struct accel_event ev[MAX_DEV];
	unsigned int i;
	uint64_t t0;

	for (i = 0; i < b->warmup; i++)
		iteration(b, count, inplace, ev, b->blocking);
	if (b->warmup && !b->blocking)
		wait_all(b, ev);
	t0 = now_ns();
	for (i = 0; i < b->iters; i++)
		iteration(b, count, inplace, ev, b->blocking);
	if (!b->blocking)
		wait_all(b, ev);
	return (double)(now_ns() - t0) / b->iters;
}

/*
 * The hot NOP round trip on rank 0's queue (median of @n): the latency
 * baseline. The engine's own (on the in-process device, not the kicking
 * thread's turn: bench_inline_kick()).
 */
static double nop_roundtrip(struct bench *b, unsigned int n)
{
	double *v = calloc(n, sizeof(*v)), med;
	unsigned int i, j;
	char was = bench_inline_kick(b->dev[b->lo], false);

	if (!v)
		die("calloc", -ENOMEM);
	for (i = 0; i < n + 100; i++) {
		struct drm_vaccel_packet *p = accel_queue_get_packet(b->q[b->lo]);
		uint64_t t0 = now_ns(), target;

		if (!p)
			die("get_packet", -EAGAIN);
		accel_prep_nop(p);
		if (accel_queue_submit(b->q[b->lo]) < 0)
			die("submit", -EIO);
		target = accel_queue_submitted(b->q[b->lo]);
		while (accel_queue_completed(b->q[b->lo]) < target)
			;
		if (i >= 100)
			v[i - 100] = (double)(now_ns() - t0);
	}
	for (i = 1; i < n; i++)	/* insertion sort: n is small */
		for (j = i; j && v[j - 1] > v[j]; j--) {
			double x = v[j];

			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	med = v[n / 2];
	free(v);
	bench_inline_restore(b->dev[b->lo], was);
	return med;
}

/* The host's copy bandwidth, bytes/ns: the best of memcpy() on 1 and on 2 threads. */
struct half_copy {
	uint8_t *d;
	const uint8_t *s;
	size_t len;
};

static void *copy_half(void *arg)
{
	struct half_copy *h = arg;

	memcpy(h->d, h->s, h->len);
	return NULL;
}

static double host_copy_gbs(uint64_t bytes, double *one, double *two)
{
	uint8_t *s = malloc(bytes), *d = malloc(bytes);
	double best1 = 0, best2 = 0;
	unsigned int k;

	if (!s || !d)
		die("malloc", -ENOMEM);
	memset(s, 1, bytes);
	memset(d, 2, bytes);
	for (k = 0; k < 5; k++) {
		struct half_copy h = { d + bytes / 2, s + bytes / 2, bytes - bytes / 2 };
		pthread_t t;
		uint64_t t0 = now_ns();

		memcpy(d, s, bytes);
		best1 = fmax(best1, (double)bytes / (double)(now_ns() - t0));
		t0 = now_ns();
		if (pthread_create(&t, NULL, copy_half, &h))
			die("pthread_create", -EAGAIN);
		memcpy(d, s, bytes / 2);
		pthread_join(t, NULL);
		best2 = fmax(best2, (double)bytes / (double)(now_ns() - t0));
	}
	free(s);
	free(d);
	*one = best1;
	*two = best2;
	return fmax(best1, best2);
}

/*
 * The flight recorder's cost on the issue path: host ns per 8-byte f32
 * allreduce call (issue only, every rank in turn), on this communicator
 * (recorder on, the default) and on a second one of the same devices
 * with the recorder off, in alternating blocks; medians of the blocks.
 */
static void recorder_cost(struct bench *b, double *on, double *off)
{
	struct accel_comm_params cp = { .size = sizeof(cp), .algo = ACCEL_COMM_ALGO_ONESHOT,
					.recorder_ops = ACCEL_COMM_RECORDER_OFF };
	struct accel_comm *save[MAX_DEV], *nrec[MAX_DEV];
	struct accel_event ev[MAX_DEV];
	double blk[2][21], x;
	unsigned int k, i, j, r, m;
	bool graph;
	int ret;

	ret = accel_comm_init_all(nrec, b->n, b->dev, &cp);
	if (ret)
		die("accel_comm_init_all (recorder off)", ret);
	memcpy(save, b->comm, sizeof(save));
	graph = b->graph;	/* eager calls here, waited for by their events */
	b->graph = false;
	for (k = 0; k < 21; k++) {
		for (m = 0; m < 2; m++) {
			uint64_t t = 0, t0;

			if (m)
				memcpy(b->comm, nrec, sizeof(nrec));
			for (i = 0; i < 50; i++) {
				t0 = now_ns();
				for (r = 0; r < b->n; r++) {
					ret = accel_allreduce(accel_buffer_va(b->sb[r]),
							      accel_buffer_va(b->rb[r]), 2,
							      ACCEL_DTYPE_F32, ACCEL_REDOP_SUM,
							      b->comm[r], b->q[r], &ev[r]);
					if (ret)
						die("allreduce", ret);
				}
				t += now_ns() - t0;
				wait_all(b, ev);
			}
			blk[m][k] = (double)t / (50.0 * b->n);
			memcpy(b->comm, save, sizeof(save));
		}
	}
	for (m = 0; m < 2; m++)
		for (i = 1; i < 21; i++)
			for (j = i; j && blk[m][j - 1] > blk[m][j]; j--) {
				x = blk[m][j];
				blk[m][j] = blk[m][j - 1];
				blk[m][j - 1] = x;
			}
	b->graph = graph;
	*on = blk[0][10];
	*off = blk[1][10];
	for (r = 0; r < b->n; r++)
		accel_comm_destroy(nrec[r]);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: accel-bench allreduce|allgather|reducescatter|alltoall|broadcast|reduce|sendrecv\n"
		"       [-b MINBYTES] [-e MAXBYTES] [-f FACTOR] [-g NDEV] [-d TYPE] [-o OP] [-r ROOT]\n"
		"       [-n ITERS] [-w WARMUP] [-c CHECKS] [-z] [-G] [-a ring|oneshot|auto] [-L LINK_MBPS]\n"
		"       [-C CHUNK_BYTES] [-S SLOTS] [-p]\n"
		"sizes take K, M, G; TYPE: int8 uint8 int32 uint32 int64 uint64 half float double\n"
		"bfloat16; OP: sum prod min max avg; -z waits after each call; sendrecv: rank r\n"
		"sends to r + 1 and receives from r - 1 (busbw = algbw); -G captures each size's\n"
		"operation once (a task graph) and launches the graph per iteration (not with\n"
		"sendrecv or -p); -L creates fresh devices with link_bw_mbps=LINK_MBPS;\n"
		"-C, -S: the communicators' chunk_bytes and slots (accel_comm_params);\n"
		"-p: one process per rank (fresh devices, accel_comm_init_rank()), rank 0 prints.\n"
		"Defaults: -b 8 -e 64M -f 2 -g 4 -d float -o sum -r 0 -n 20 -w 5 -c 1 -a auto.\n");
	exit(2);
}

static void setup(struct bench *b)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 16384 };
	struct accel_comm_params cp = { .size = sizeof(cp), .algo = b->algo,
					.chunk_bytes = b->chunk, .slots = b->slots };
	uint64_t bytes = b->maxb + 4096;
	unsigned int i;
	char spec[96];
	int ret;

	for (i = 0; i < b->n; i++) {
		if (b->link_mbps) {
			accel_bus_del_device(BENCH_ID0 + i);
			snprintf(spec, sizeof(spec), "%u link_bw_mbps=%u memory=%lluM", BENCH_ID0 + i,
				 b->link_mbps, (unsigned long long)(4 * bytes >> 20) + 64);
			ret = accel_bus_new_device(spec);
			if (ret)
				die(spec, ret);
			snprintf(spec, sizeof(spec), "%s%u",
				 getenv("ACCEL_BACKEND") && !strcmp(getenv("ACCEL_BACKEND"), "sim") ?
				 "sim:" : "", BENCH_ID0 + i);
			b->created = true;
			ret = -ENODEV;
			{
				struct accel_device_info list[64];
				int k, m = accel_device_list(list, 64, sizeof(list[0]));

				for (k = 0; k < m; k++)
					if (list[k].id == BENCH_ID0 + i)
						ret = accel_device_open((unsigned int)k, &b->dev[i]);
			}
		} else {
			ret = accel_device_open(i, &b->dev[i]);
			if (ret == -ENODEV) {
				fprintf(stderr, "accel-bench: -g %u: there is no device %u (ACCEL_SIM_DEVICES "
					"or the module's devices; -L creates them)\n", b->n, i);
				exit(1);
			}
		}
		if (ret)
			die("open", ret);
		ret = accel_queue_create(b->dev[i], &qp, &b->q[i]);
		if (!ret)
			ret = accel_buffer_create(b->dev[i], bytes, ACCEL_BUFFER_HOST, &b->sb[i]);
		if (!ret)
			ret = accel_buffer_create(b->dev[i], bytes, ACCEL_BUFFER_HOST, &b->rb[i]);
		if (ret)
			die("set-up", ret);
		memset(accel_buffer_host(b->sb[i]), 0, bytes);	/* no first-touch in the timing */
		memset(accel_buffer_host(b->rb[i]), 0, bytes);
	}
	ret = accel_comm_init_all(b->comm, b->n, b->dev, &cp);
	if (ret)
		die("accel_comm_init_all", ret);
	if (b->graph) {
		struct accel_tg_params tp = { .size = sizeof(tp), .queues_per_device = 1,
					      .ring_size = 16384, .timeout_ns = 60000000000ll };

		ret = accel_tg_create(b->dev, b->n, &tp, &b->tg);
		if (ret)
			die("-G: accel_tg_create", ret);
	}
}

static void teardown(struct bench *b)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		accel_graph_exec_destroy(b->ge[i]);
		accel_graph_destroy(b->g[i]);
	}
	accel_tg_destroy(b->tg);
	for (i = b->lo; i < b->hi; i++)
		accel_comm_destroy(b->comm[i]);
	for (i = b->lo; i < b->hi; i++) {
		accel_queue_destroy(b->q[i]);
		accel_buffer_destroy(b->sb[i]);
		accel_buffer_destroy(b->rb[i]);
		accel_device_close(b->dev[i]);
		if (b->created && !b->procs)	/* -p: the parent made them and deletes them */
			accel_bus_del_device(BENCH_ID0 + i);
	}
}

/* -p: every rank has written its part of the shared page (a barrier on the communicator). */
static void rank_sync(struct bench *b)
{
	struct accel_event ev;
	int ret = accel_barrier(b->comm[b->lo], b->q[b->lo], &ev);

	if (!ret)
		ret = accel_comm_wait(b->comm[b->lo], &ev, 60000000000ll);
	if (ret)
		die("barrier", ret);
}

/* The table and the baselines; with -p every rank runs it and rank 0 prints. */
static int run_table(struct bench *b)
{
	double sum_bus = 0, rec_on, rec_off, one, two, host, nop = 0;
	double first_t[2] = { 0, 0 }, last_b[2] = { 0, 0 };
	unsigned int rows = 0, i, run, n_nop = 2000;
	uint64_t bytes, wrong_total = 0;
	bool reduction = b->redop != ACCEL_REDOP_COUNT, pr = b->lo == 0;
	char algo[16];

	if (pr) {
		printf("# accel-bench %s: nranks %u (%s, %s backend) minBytes %llu maxBytes %llu step: %g(factor) warmup iters: %u iters: %u validation: %u blocking: %d graph: %d link_bw_mbps: %u chunk: %u slots: %u\n",
		       b->opname, b->n, b->procs ? "one process per rank" :
		       "one process, one rank per device", accel_device_backend(b->dev[b->lo]),
		       (unsigned long long)b->minb, (unsigned long long)b->maxb, b->factor,
		       b->warmup, b->iters, b->check, b->blocking, b->graph, b->link_mbps,
		       b->chunk, b->slots);
		printf("#\n# Using devices\n");
	}
	for (i = 0; pr && i < b->n; i++) {
		struct accel_device_props props = { .size = sizeof(props) };

		if (b->procs) {	/* each rank wrote its own before the init */
			printf("#  Rank %2u Pid %6d on device %2u (id %u, %u engines, link %u MB/s)\n",
			       i, (int)b->sh->r[i].pid, i, b->sh->r[i].dev_id, b->sh->r[i].engines,
			       b->link_mbps);
			continue;
		}
		accel_device_query(b->dev[i], &props);
		printf("#  Rank %2u Pid %6d on device %2u (id %u, %u engines, link %u MB/s)\n", i,
		       (int)getpid(), i, props.id, props.engines, b->link_mbps);
	}
	if (pr) {
		printf("#\n");
		printf("#                                                  out-of-place                       in-place\n");
		printf("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong  algorithm\n");
		printf("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n");
	}
	for (bytes = b->minb; bytes <= b->maxb; bytes = (uint64_t)((double)bytes * b->factor + 0.5)) {
		uint64_t count, sendn, recvn, wrong[2] = { 0, 0 };
		double t[2], alg[2], bus[2];
		int ip;

		counts_of(b, bytes, &count, &sendn, &recvn);
		if (!count && bytes)
			continue;	/* below one element per rank */
		for (ip = 0; ip < 2; ip++) {
			for (run = 0; run < b->check; run++)
				wrong[ip] += check_once(b, count, ip, run);
			t[ip] = timed(b, count, ip);
		}
		if (b->procs) {
			/* -p: the slowest rank's time and every rank's #wrong, at rank 0 */
			memcpy(b->sh->r[b->lo].t, t, sizeof(t));
			memcpy(b->sh->r[b->lo].wrong, wrong, sizeof(wrong));
			rank_sync(b);
			for (i = 0; pr && i < b->n; i++)
				for (ip = 0; ip < 2; ip++) {
					if (i != b->lo)
						wrong[ip] += b->sh->r[i].wrong[ip];
					t[ip] = fmax(t[ip], b->sh->r[i].t[ip]);
				}
		}
		for (ip = 0; ip < 2; ip++) {
			alg[ip] = (double)bytes / t[ip];
			bus[ip] = alg[ip] * busbw_factor(b);
		}
		if (b->op == ACCEL_COMM_OP_SEND)	/* not in the recorder: the direct path */
			snprintf(algo, sizeof(algo), "p2p");
		else
			last_algo(b, algo, sizeof(algo));
		if (pr)
			printf("%12llu  %12llu  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %5llu  %7.2f  %6.2f  %6.2f  %5llu  %s\n",
			       (unsigned long long)bytes, (unsigned long long)(bytes / b->es), b->tname,
			       reduction ? redops[b->redop] : "none", b->root, t[0] / 1e3, alg[0],
			       bus[0], (unsigned long long)(b->check ? wrong[0] : 0), t[1] / 1e3,
			       alg[1], bus[1], (unsigned long long)(b->check ? wrong[1] : 0), algo);
		fflush(stdout);
		wrong_total += wrong[0] + wrong[1];
		sum_bus += bus[0] + bus[1];
		if (!rows)
			memcpy(first_t, t, sizeof(t));
		memcpy(last_b, bus, sizeof(bus));
		rows++;
	}
	if (!pr)	/* -p: rank 0 counted this rank's #wrong, and prints */
		return wrong_total ? 1 : 0;
	printf("# Out of bounds values : %llu %s\n", (unsigned long long)wrong_total,
	       wrong_total ? "FAILED" : "OK");
	printf("# Avg bus bandwidth    : %g\n", rows ? sum_bus / (2 * rows) : 0);
	printf("#\n");
	/* the baselines of this run, for the performance targets (collectives.rst) */
	nop = nop_roundtrip(b, n_nop);
	host = host_copy_gbs(b->maxb > (16ull << 20) ? b->maxb : (16ull << 20), &one, &two);
	printf("# baseline: hot NOP round trip on rank 0's queue (median of %u): %.2f us; first row (%llu B): out of place %.2f us = %.2fx, in place %.2f us = %.2fx (target for 8-byte allreduce <= 4x)\n",
	       n_nop, nop / 1e3, (unsigned long long)b->minb, first_t[0] / 1e3, first_t[0] / nop,
	       first_t[1] / 1e3, first_t[1] / nop);
	printf("# baseline: host copy bandwidth, best of memcpy %.2f GB/s and 2 threads %.2f GB/s: %.2f GB/s; last row: busbw x nranks out of place %.2f GB/s = %.2fx, in place %.2f GB/s = %.2fx (target for allreduce 64 MiB unthrottled >= 0.8x)\n",
	       one, two, host, last_b[0] * b->n, last_b[0] * b->n / host, last_b[1] * b->n,
	       last_b[1] * b->n / host);
	if (b->procs) {
		printf("# flight recorder: the issue cost is measured in the one-process form (without -p)\n");
	} else {
		recorder_cost(b, &rec_on, &rec_off);
		printf("# flight recorder: host cost of issuing one rank's 8-byte allreduce (median of 21 blocks of 50 x %u ranks): recorder on %.0f ns, off %.0f ns (+%.0f ns)\n",
		       b->n, rec_on, rec_off, rec_on - rec_off);
	}
	if (b->link_mbps)
		printf("# baseline: link bandwidth %.3f GB/s (link_bw_mbps %u); last row: busbw out of place %.3f GB/s = %.2fx, in place %.3f GB/s = %.2fx (target >= 0.9x)\n",
		       b->link_mbps / 1e3, b->link_mbps, last_b[0], last_b[0] / (b->link_mbps / 1e3),
		       last_b[1], last_b[1] / (b->link_mbps / 1e3));
	return wrong_total ? 1 : 0;
}

/* -p: open bus device @id (made by the parent) in this process. */
static int open_id(unsigned int id, struct accel_device **dev)
{
	struct accel_device_info list[64];
	int k, m = accel_device_list(list, 64, sizeof(list[0]));

	for (k = 0; k < m; k++)
		if (list[k].id == id)
			return accel_device_open((unsigned int)k, dev);
	return -ENODEV;
}

/* -p: rank @r's process: its device, queue, buffers, accel_comm_init_rank(), the table. */
static int rank_main(struct bench *b, unsigned int r)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = 16384 };
	struct accel_comm_params cp = { .size = sizeof(cp), .algo = b->algo,
					.chunk_bytes = b->chunk, .slots = b->slots };
	struct accel_device_props props = { .size = sizeof(props) };
	uint64_t bytes = b->maxb + 4096;
	int ret;

	b->lo = r;
	b->hi = r + 1;
	ret = open_id(BENCH_ID0 + r, &b->dev[r]);
	if (!ret)
		ret = accel_queue_create(b->dev[r], &qp, &b->q[r]);
	if (!ret)
		ret = accel_buffer_create(b->dev[r], bytes, ACCEL_BUFFER_HOST, &b->sb[r]);
	if (!ret)
		ret = accel_buffer_create(b->dev[r], bytes, ACCEL_BUFFER_HOST, &b->rb[r]);
	if (ret) {
		fprintf(stderr, "accel-bench -p: rank %u: set-up: %s\n", r, accel_strerror(ret));
		return 1;
	}
	memset(accel_buffer_host(b->sb[r]), 0, bytes);
	memset(accel_buffer_host(b->rb[r]), 0, bytes);
	accel_device_query(b->dev[r], &props);
	b->sh->r[r].pid = (int32_t)getpid();
	b->sh->r[r].dev_id = props.id;
	b->sh->r[r].engines = props.engines;
	ret = accel_comm_init_rank(&b->comm[r], b->n, &b->id, r, b->dev[r], &cp);
	if (ret) {
		fprintf(stderr, "accel-bench -p: rank %u: accel_comm_init_rank: %s\n", r,
			accel_strerror(ret));
		return 1;
	}
	ret = run_table(b);
	teardown(b);
	return ret;
}

/*
 * -p: fresh bus devices BENCH_ID0 + i (with -L's link), one forked
 * process per rank meeting through accel_comm_get_unique_id() and
 * accel_comm_init_rank(); rank 0 prints. Exit status: the worst rank's.
 */
static int run_procs(struct bench *b)
{
	uint64_t mem = (4 * (b->maxb + 4096) >> 20) + 64;
	pid_t pids[MAX_DEV];
	unsigned int i;
	int ret, st, worst = 0;
	char spec[96];

	b->sh = mmap(NULL, sizeof(*b->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	if (b->sh == MAP_FAILED)
		die("mmap", -errno);
	for (i = 0; i < b->n; i++) {
		accel_bus_del_device(BENCH_ID0 + i);
		if (b->link_mbps)
			snprintf(spec, sizeof(spec), "%u link_bw_mbps=%u memory=%lluM", BENCH_ID0 + i,
				 b->link_mbps, (unsigned long long)mem);
		else
			snprintf(spec, sizeof(spec), "%u memory=%lluM", BENCH_ID0 + i,
				 (unsigned long long)mem);
		ret = accel_bus_new_device(spec);
		if (ret)
			die(spec, ret);
	}
	b->created = true;
	ret = accel_comm_get_unique_id(&b->id);
	if (ret)
		die("accel_comm_get_unique_id", ret);
	fflush(stdout);
	for (i = 0; i < b->n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			fprintf(stderr, "accel-bench -p: fork: %s\n", strerror(errno));
			worst = 1;
			break;
		}
		if (!pids[i]) {
			ret = rank_main(b, i);
			fflush(stdout);
			_exit(ret);
		}
	}
	/* the ranks' calls are bounded (the communicator's timeout), so are these waits */
	while (i-- > 0) {
		if (waitpid(pids[i], &st, 0) != pids[i]) {
			worst = 1;
			continue;
		}
		ret = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (ret)
			fprintf(stderr, "accel-bench -p: rank %u (pid %d) ended with %d\n", i,
				(int)pids[i], ret);
		worst = ret > worst ? ret : worst;
	}
	for (i = 0; i < b->n; i++)
		accel_bus_del_device(BENCH_ID0 + i);
	munmap(b->sh, sizeof(*b->sh));
	return worst;
}


int accel_bench_coll(int argc, char **argv)
{
	struct bench b = {
		.opname = argv[0], .n = 4, .t = ACCEL_DTYPE_F32, .tname = "float",
		.redop = ACCEL_REDOP_SUM, .iters = 20, .warmup = 5, .check = 1, .minb = 8,
		.maxb = 64ull << 20, .factor = 2,
	};
	bool reduction;
	int opt, ret;
	size_t k;

	b.op = !strcmp(argv[0], "sendrecv") ? ACCEL_COMM_OP_SEND :
	       !strcmp(argv[0], "allreduce") ? ACCEL_COMM_OP_ALLREDUCE :
	       !strcmp(argv[0], "allgather") ? ACCEL_COMM_OP_ALLGATHER :
	       !strcmp(argv[0], "reducescatter") ? ACCEL_COMM_OP_REDUCESCATTER :
	       !strcmp(argv[0], "alltoall") ? ACCEL_COMM_OP_ALLTOALL :
	       !strcmp(argv[0], "broadcast") ? ACCEL_COMM_OP_BROADCAST : ACCEL_COMM_OP_REDUCE;
	optind = 1;
	while ((opt = getopt(argc, argv, "b:e:f:g:d:o:r:n:w:c:zGa:L:C:S:ph")) != -1) {
		switch (opt) {
		case 'b': b.minb = parse_size(optarg); break;
		case 'e': b.maxb = parse_size(optarg); break;
		case 'f': b.factor = strtod(optarg, NULL); break;
		case 'g': b.n = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'r': b.root = atoi(optarg); break;
		case 'n': b.iters = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'w': b.warmup = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'c': b.check = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'z': b.blocking = true; break;
		case 'p': b.procs = true; break;
		case 'L': b.link_mbps = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'C': b.chunk = (unsigned int)parse_size(optarg); break;
		case 'S': b.slots = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'G': b.graph = true; break;
		case 'a':
			if (!strcmp(optarg, "ring"))
				b.algo = ACCEL_COMM_ALGO_RING;
			else if (!strcmp(optarg, "oneshot"))
				b.algo = ACCEL_COMM_ALGO_ONESHOT;
			else if (strcmp(optarg, "auto"))
				usage();
			break;
		case 'd':
			for (k = 0; k < sizeof(dtypes) / sizeof(dtypes[0]); k++)
				if (!strcmp(optarg, dtypes[k].name))
					break;
			if (k == sizeof(dtypes) / sizeof(dtypes[0]))
				usage();
			b.t = dtypes[k].t;
			b.tname = dtypes[k].name;
			break;
		case 'o':
			for (k = 0; k < 5; k++)
				if (!strcmp(optarg, redops[k]))
					break;
			if (k == 5)
				usage();
			b.redop = (enum accel_redop)k;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !b.minb || b.maxb < b.minb || b.factor <= 1 || b.n < 1 ||
	    b.n > MAX_DEV || !b.iters || b.root < 0 || (unsigned int)b.root >= b.n)
		usage();
	reduction = b.op == ACCEL_COMM_OP_ALLREDUCE || b.op == ACCEL_COMM_OP_REDUCE ||
		    b.op == ACCEL_COMM_OP_REDUCESCATTER;
	if (!reduction)
		b.redop = ACCEL_REDOP_COUNT;
	if (b.op != ACCEL_COMM_OP_REDUCE && b.op != ACCEL_COMM_OP_BROADCAST)
		b.root = -1;
	b.es = (unsigned int)accel_dtype_size(b.t);
	if (b.graph && b.procs) {
		fprintf(stderr, "accel-bench %s -G: not with -p (a task graph is one process's)\n",
			argv[0]);
		return 2;
	}
	if (b.procs)
		return run_procs(&b);
	b.lo = 0;
	b.hi = b.n;
	setup(&b);
	ret = run_table(&b);
	teardown(&b);
	return ret;
}
