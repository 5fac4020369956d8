/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The whole-task-graph oracle (issue #14), shared by the native test over
 * the fake kernel (tests/lib-native/libaccel_tg_oracle_test.c) and the VM
 * test on the module (tests/lib/libaccel_tg_oracle_test.c).
 *
 * A seeded generator runs a random program on a task graph over two
 * devices with several queues each: eager device tasks (COPY, FILL, DELAY,
 * REDUCE, MATMUL; explicit or automatic device and queue; OUTPUT_NEW heap
 * tensors, used later and released), eager host tasks, captured graphs of
 * device and host tasks (on explicit queues), instantiated and launched
 * back to back, with and without bindings, eager work after launches,
 * host maps (READ, WRITE, both; some held open while later tasks are
 * submitted), executables and graphs destroyed, batches of eager tasks
 * (accel_tg_submit_batch()), completions asked for (accel_tg_task_done(),
 * accel_tg_task_wait(): a task reported complete must have ended by then),
 * the program's buffers destroyed (maybe while in use) and new ones
 * created in their place. Views are real strided
 * views: rows, tiles, step slices and transposes of matrices with
 * different element sizes and row lengths over the same bytes, so they
 * overlap partially and in interleaved ways. Buffers of one device are
 * used by tasks of the other (imports).
 *
 * The model is the program as a sequence of instances, in program order:
 * eager tasks and host tasks where they are submitted, a launch expanded
 * to its graph's tasks in capture order (bindings applied), maps. Each
 * instance has the exact byte set it reads and writes in each buffer. Any
 * two instances whose byte sets conflict (write/write, write/read,
 * read/write) must not overlap in time: the earlier one's work must have
 * ended before the later one's began.
 *
 * The evidence of when things ran:
 *  - device tasks: the task graph's own trace (ACCEL_TG_TRACE,
 *    accel_tg_trace_write()): a slice per eager task (named after its
 *    instance) and per task of a launch (matched to its launch by the
 *    launch's slice on the same queue, which encloses it). Only the Trace
 *    Event Format and the tasks' names are relied on: a track's queue is
 *    learnt from the tasks of known queues on it. A slice starts
 *    with a TIMESTAMP written before the task's packets and ends with one
 *    written after them, but the end TIMESTAMP of an eager task follows its
 *    completion action: another queue may already have started. So the
 *    end is taken from env->work_end() where it exists (the fake kernel
 *    records when the packet before each TIMESTAMP completed: exact);
 *    without it (the module) a task's work is only known to end after its
 *    start plus its DELAY, and that lower bound is what is compared;
 *  - host tasks: their function records its start and end with env->now()
 *    (the device's clock);
 *  - maps: the time accel_tg_map() returned and the time just before
 *    accel_tg_unmap().
 *
 * And the data: the model also keeps the expected bytes of every buffer
 * (COPY, FILL and REDUCE computed, host tasks and write maps writing
 * patterns, MATMUL results unknown). Host tasks check their inputs when
 * they run, read maps check what they see, and the end checks every
 * buffer: an ordering bug that changed data shows there too.
 *
 * A failure prints the seed and, for each of the first violations, the two
 * instances (program position, kind, queue, views with their byte ranges)
 * and their intervals; the checker counts them all.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef TG_ORACLE_H
#define TG_ORACLE_H

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <accel/accel.h>

#include "sweep.h"

#define OR_DEVS		2
#define OR_MAXQ		4
#define OR_MAX_BUFS	40
#define OR_MAX_ARGS	5
#define OR_BATCH_MAX	6
#define OR_MAX_GRAPHS	24
#define OR_MAX_EXECS	24
#define OR_MAX_GTASKS	8
#define OR_MAX_POOL	64
#define OR_MAX_REPORT	6
#define OR_BUF_SIZE	8192ull
#define OR_HEAP_SIZE	(1ull << 20)
#define OR_SEC		1000000000ll

/* What the including test provides. */
struct or_env {
	struct accel_device *devs[OR_DEVS];
	/* the clock of the device's TIMESTAMPs, for host events */
	uint64_t (*now)(void);
	/* make the devices lag behind the program (1) or run again (0) */
	void (*lag)(int on);
	/*
	 * The time the work before the end TIMESTAMP that wrote @stamp
	 * completed, before its completion was visible: 0, or -errno. NULL
	 * when not known (then only start + DELAY bounds the end).
	 */
	int (*work_end)(uint64_t stamp, uint64_t *done);
	unsigned int steps;		/* program steps */
	uint64_t delay_max_ns;		/* longest DELAY task */
	unsigned int queues;		/* queues per device, 0: random 2..3 */
};

/* ---- a small PRNG (xorshift64*) ---- */

static inline uint64_t or_rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* ---- byte sets: sorted, merged runs [lo, hi) ---- */

struct or_run {
	uint64_t lo, hi;
};

struct or_set {
	struct or_run *r;
	uint32_t n;
};

static int or_run_cmp(const void *a, const void *b)
{
	const struct or_run *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The bytes of view @t (elements enumerated): 0 or -ENOMEM. */
static inline int or_set_of(const struct accel_tensor *t, struct or_set *s)
{
	uint64_t esz = accel_dtype_size(t->dtype), n = 1, idx[ACCEL_TENSOR_MAX_DIMS] = { 0 };
	uint64_t k, off;
	uint32_t i, m = 0;

	for (i = 0; i < t->ndims; i++)
		n *= t->shape[i];
	s->n = 0;
	s->r = calloc(n ? n : 1, sizeof(*s->r));
	if (!s->r)
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		off = t->offset;
		for (i = 0; i < t->ndims; i++)
			off += idx[i] * t->strides[i] * esz;
		s->r[m++] = (struct or_run){ off, off + esz };
		for (i = t->ndims; i-- > 0;) {
			if (++idx[i] < t->shape[i])
				break;
			idx[i] = 0;
		}
	}
	qsort(s->r, m, sizeof(*s->r), or_run_cmp);
	s->n = 0;
	for (k = 0; k < m; k++) {
		if (s->n && s->r[s->n - 1].hi >= s->r[k].lo) {
			if (s->r[k].hi > s->r[s->n - 1].hi)
				s->r[s->n - 1].hi = s->r[k].hi;
		} else {
			s->r[s->n++] = s->r[k];
		}
	}
	return 0;
}

static inline bool or_sets_meet(const struct or_set *a, const struct or_set *b,
				uint64_t *at)
{
	uint32_t i = 0, j = 0;

	while (i < a->n && j < b->n) {
		if (a->r[i].hi <= b->r[j].lo) {
			i++;
		} else if (b->r[j].hi <= a->r[i].lo) {
			j++;
		} else {
			*at = a->r[i].lo > b->r[j].lo ? a->r[i].lo : b->r[j].lo;
			return true;
		}
	}
	return false;
}

static inline uint64_t or_set_lo(const struct or_set *s)
{
	return s->n ? s->r[0].lo : 0;
}

static inline uint64_t or_set_hi(const struct or_set *s)
{
	return s->n ? s->r[s->n - 1].hi : 0;
}

/* ---- the program's objects ---- */

struct or_buf {
	struct accel_buffer *b;
	unsigned int dev;
	uint64_t size;
	uint8_t *host;			/* accel_buffer_map() */
	uint8_t *val, *known;		/* the model's bytes */
	bool heap;
	bool dead;			/* destroyed by the program (or_recycle()) */
};

struct or_arg {
	int buf;			/* index in o->bufs; -1: OUTPUT_NEW not yet placed */
	struct accel_tensor t;
	uint32_t access;
};

struct or_task {
	uint32_t op;
	uint32_t dev, queue;		/* ACCEL_TG_AUTO allowed for eager tasks */
	uint32_t nargs;
	struct or_arg a[OR_MAX_ARGS];
	uint64_t u0;			/* fill pattern, redop, delay ns */
	char name[24];
};

enum or_kind { OR_EAGER, OR_LAUNCHED, OR_HOST, OR_MAP };

struct or_inst {
	enum or_kind kind;
	unsigned int id, step;
	struct or_task td;		/* buffers as this instance uses them */
	struct or_set set[OR_MAX_ARGS];
	uint8_t rw[OR_MAX_ARGS];	/* 1 read, 2 write */
	uint64_t rmask, wmask;		/* buffers read, written */
	char what[160];
	int graph, exec;		/* OR_LAUNCHED, graph host tasks */
	unsigned int launch, gtask;
	uint32_t map_flags;		/* OR_MAP */
	/* eager tasks: the id, and when the program learnt it completed */
	uint64_t tid;
	bool has_tid;
	uint64_t done_at;		/* 0: never asked, or not done when asked */
	/* evidence */
	bool have;
	uint64_t start, end;		/* end: exact, or the end TIMESTAMP */
	bool exact;
	struct or_hostarg *hostarg;	/* an eager host task's argument (owned) */
	/* host tasks: the bytes their inputs must hold */
	uint8_t *expect;
	uint8_t *expect_known;
	int data_bad;
	char data_msg[200];
};

/*
 * A host task's argument. The task runs on the worker or a waiting
 * thread while the program goes on: it gets its instance through this,
 * never through the growing instance array.
 */
struct or_hostarg {
	struct oracle *o;
	struct or_inst *eager;		/* an eager host task's instance, or NULL */
	pthread_mutex_t lock;		/* fifo, head, n, cap */
	struct or_inst **fifo;		/* graph host tasks: instances in launch order */
	unsigned int head, n, cap;
};

struct or_graph {
	struct accel_graph *g;		/* NULL once destroyed */
	unsigned int ntasks;
	struct or_task tasks[OR_MAX_GTASKS];
	struct or_hostarg *hosts[OR_MAX_GTASKS];
	uint64_t bufmask;		/* program buffers the graph uses */
};

struct or_exec {
	struct accel_graph_exec *ge;	/* NULL once destroyed */
	int graph;
	unsigned int launches, since_ckpt;
};

struct or_launch {
	int exec, graph;
	unsigned int first;		/* instance of graph task 0 */
	unsigned int no;		/* launch number of the exec */
};

/* per queue line: the launches with work on it, in program order */
struct or_line {
	unsigned int *launches;
	unsigned int n, cap, done;	/* done: matched to trace slices */
};

struct oracle {
	struct or_env env;
	uint64_t seed, rng;
	struct accel_tg *tg;
	unsigned int nq;
	bool worker;
	struct or_buf bufs[OR_MAX_BUFS];
	unsigned int nbufs;
	struct or_inst **inst;
	unsigned int ninst, icap;
	struct or_graph graphs[OR_MAX_GRAPHS];
	unsigned int ngraphs;
	struct or_exec execs[OR_MAX_EXECS];
	unsigned int nexecs;
	struct or_launch *launches;
	unsigned int nlaunches, lcap;
	struct or_line lines[OR_DEVS][OR_MAXQ];
	/* heap tensors the program holds */
	struct { int buf; struct accel_tensor t; } pool[OR_MAX_POOL];
	unsigned int npool;
	/* an open map */
	void *held_ptr;
	int held_inst;
	unsigned int held_steps;
	bool lagging;
	unsigned int step;
	unsigned int failures, violations, data_errors;
	unsigned int checked_pairs, conflicts;
	unsigned int stats_eager, stats_host, stats_launch, stats_maps, stats_graphs;
	unsigned int stats_rebound, stats_new, stats_recycled, stats_batched, stats_waits;
};

#define OR_FAIL(o, ...)							\
	do {								\
		(o)->failures++;					\
		fprintf(stderr, "# oracle seed %" PRIu64 " step %u: ", (o)->seed, (o)->step); \
		fprintf(stderr, __VA_ARGS__);				\
		fprintf(stderr, "\n");					\
	} while (0)

static inline uint64_t or_r(struct oracle *o, uint64_t n)
{
	return n ? or_rnd(&o->rng) % n : 0;
}

static inline enum accel_dtype or_dtype(unsigned int esz)
{
	switch (esz) {
	case 1:
		return ACCEL_DTYPE_U8;
	case 2:
		return ACCEL_DTYPE_U16;
	case 4:
		return ACCEL_DTYPE_U32;
	default:
		return ACCEL_DTYPE_U64;
	}
}

static inline const char *or_access_name(uint32_t a)
{
	static const char *const n[] = { "in", "out", "inout", "new" };

	return a < 4 ? n[a] : "?";
}

static inline const char *or_op_name(uint32_t op)
{
	static const char *const n[] = { "copy", "fill", "reduce", "matmul", "delay", "host" };

	return op < 6 ? n[op] : "?";
}

/* ---- buffers ---- */

static inline int or_buf_index(struct oracle *o, struct accel_buffer *b)
{
	unsigned int i;

	/* a destroyed buffer's struct may have been given to a new one */
	for (i = 0; i < o->nbufs; i++)
		if (o->bufs[i].b == b && !o->bufs[i].dead)
			return (int)i;
	return -1;
}

/* Add a buffer (the program's, or a heap the library made). */
static inline int or_buf_add(struct oracle *o, struct accel_buffer *b, unsigned int dev, bool heap)
{
	struct or_buf *ob;
	void *host;
	int ret;

	if (o->nbufs == OR_MAX_BUFS)
		return -ENOSPC;
	ret = accel_buffer_map(b, &host);
	if (ret)
		return ret;
	ob = &o->bufs[o->nbufs];
	memset(ob, 0, sizeof(*ob));
	ob->b = b;
	ob->dev = dev;
	ob->size = accel_buffer_size(b);
	ob->host = host;
	ob->heap = heap;
	ob->val = calloc(1, ob->size);
	ob->known = malloc(ob->size);
	if (!ob->val || !ob->known) {
		free(ob->val);
		free(ob->known);
		return -ENOMEM;
	}
	/* a fresh buffer (and a fresh heap) reads zero */
	memset(ob->known, 1, ob->size);
	return (int)o->nbufs++;
}

/* ---- views ---- */

/*
 * A view of @nr x @nc elements of @esz bytes in buffer @bi: a tile of a
 * row-major matrix over the buffer (random row length and start), with
 * random row and column steps; @contig_rows keeps the column step 1 (and
 * no transpose); otherwise the view may be transposed (then it is
 * @nc x @nr). False if it does not fit.
 */
static inline bool or_view(struct oracle *o, int bi, unsigned int esz, uint64_t nr, uint64_t nc,
			   bool contig_rows, struct accel_tensor *t)
{
	static const uint64_t lds[] = { 8, 12, 16, 24, 32, 48, 64, 96, 128 };
	const struct or_buf *b = &o->bufs[bi];
	uint64_t ld, rows, rs, cs, r0, c0, base, shape[2];
	unsigned int tries;

	for (tries = 0; tries < 16; tries++) {
		ld = lds[or_r(o, sizeof(lds) / sizeof(lds[0]))];
		cs = contig_rows || or_r(o, 3) ? 1 : 1 + or_r(o, 3);
		rs = or_r(o, 3) ? 1 : 1 + or_r(o, 3);
		if ((nc - 1) * cs + 1 > ld)
			continue;
		base = or_r(o, ld) * esz;
		rows = (b->size - base) / (ld * esz);
		if (!rows || (nr - 1) * rs + 1 > rows)
			continue;
		r0 = or_r(o, rows - ((nr - 1) * rs + 1) + 1);
		c0 = or_r(o, ld - ((nc - 1) * cs + 1) + 1);
		shape[0] = rows;
		shape[1] = ld;
		if (accel_tensor_init(t, b->b, base, or_dtype(esz), 2, shape) ||
		    accel_tensor_slice(t, 0, r0, nr, rs) || accel_tensor_slice(t, 1, c0, nc, cs))
			return false;
		if (!contig_rows && !or_r(o, 4))
			accel_tensor_transpose(t, 0, 1);
		return true;
	}
	return false;
}

/* A random buffer (not a heap) of device @dev, or of any device if @dev < 0. */
static inline int or_pick_buf(struct oracle *o, int dev)
{
	unsigned int tries;
	int i;

	for (tries = 0; tries < 64; tries++) {
		i = (int)or_r(o, o->nbufs);
		if (!o->bufs[i].heap && !o->bufs[i].dead &&
		    (dev < 0 || o->bufs[i].dev == (unsigned int)dev))
			return i;
	}
	for (i = 0; i < (int)o->nbufs; i++)
		if (!o->bufs[i].heap && !o->bufs[i].dead &&
		    (dev < 0 || o->bufs[i].dev == (unsigned int)dev))
			return i;
	return -1;
}

/* A random view for a declared argument or a FILL: a buffer view or a pooled heap tensor. */
static inline void or_any_view(struct oracle *o, bool pool_ok, struct or_arg *a)
{
	uint64_t nr = 1 + or_r(o, 12), nc = 1 + or_r(o, 24);
	unsigned int esz = 1u << or_r(o, 4);

	if (pool_ok && o->npool && !or_r(o, 4)) {
		unsigned int k = (unsigned int)or_r(o, o->npool);

		a->buf = o->pool[k].buf;
		a->t = o->pool[k].t;
		return;
	}
	for (;;) {
		a->buf = or_pick_buf(o, -1);
		if (or_view(o, a->buf, esz, nr, nc, false, &a->t))
			return;
		nr = 1 + nr / 2;
		nc = 1 + nc / 2;
	}
}

static inline bool or_hulls_meet(const struct or_arg *a, const struct or_arg *b)
{
	struct or_set x, y;
	bool meet;

	if (a->buf != b->buf)
		return false;
	if (or_set_of(&a->t, &x))
		return true;
	if (or_set_of(&b->t, &y)) {
		free(x.r);
		return true;
	}
	meet = or_set_lo(&x) < or_set_hi(&y) && or_set_lo(&y) < or_set_hi(&x);
	free(x.r);
	free(y.r);
	return meet;
}

/* ---- generating tasks ---- */

/*
 * A device task: @graph for a captured one (explicit device and queue,
 * no OUTPUT_NEW arguments that the graph would pin: those come too). The
 * name is filled in by the caller.
 */
static inline void or_gen_device_task(struct oracle *o, bool graph, struct or_task *td)
{
	unsigned int r = (unsigned int)or_r(o, 100), esz, i, tries;
	uint64_t nr, nc;

	memset(td, 0, sizeof(*td));
	td->dev = (uint32_t)or_r(o, OR_DEVS);
	td->queue = (uint32_t)or_r(o, o->nq);
	if (!graph && !or_r(o, 5)) {
		td->dev = ACCEL_TG_AUTO;
		td->queue = ACCEL_TG_AUTO;
	} else if (!graph && !or_r(o, 5)) {
		td->queue = ACCEL_TG_AUTO;
	}
	if (r < 32) {
		td->op = ACCEL_TASK_COPY;
		esz = 1u << or_r(o, 4);
		nr = 1 + or_r(o, 12);
		nc = 1 + or_r(o, 32);
		for (tries = 0; tries < 32; tries++) {
			td->a[1].buf = o->npool && !or_r(o, 5) ? -2 : or_pick_buf(o, -1);
			if (td->a[1].buf == -2) {
				unsigned int k = (unsigned int)or_r(o, o->npool);

				td->a[1].buf = o->pool[k].buf;
				td->a[1].t = o->pool[k].t;
				if (td->a[1].t.ndims != 2 || td->a[1].t.strides[1] != 1)
					continue;
				esz = (unsigned int)accel_dtype_size(td->a[1].t.dtype);
				nr = td->a[1].t.shape[0];
				nc = td->a[1].t.shape[1];
			} else if (!or_view(o, td->a[1].buf, esz, nr, nc, true, &td->a[1].t)) {
				continue;
			}
			td->a[1].access = ACCEL_INPUT;
			if (!or_r(o, 6) && o->npool < OR_MAX_POOL - OR_MAX_GTASKS) {
				uint64_t shape[2] = { nr, nc };

				td->a[0].buf = -1;
				memset(&td->a[0].t, 0, sizeof(td->a[0].t));
				td->a[0].t.dtype = td->a[1].t.dtype;
				td->a[0].t.ndims = 2;
				td->a[0].t.shape[0] = shape[0];
				td->a[0].t.shape[1] = shape[1];
				td->a[0].access = ACCEL_OUTPUT_NEW;
				break;
			}
			td->a[0].buf = or_pick_buf(o, -1);
			td->a[0].access = or_r(o, 4) ? ACCEL_OUTPUT : ACCEL_INOUT;
			if (or_view(o, td->a[0].buf, esz, nr, nc, true, &td->a[0].t) &&
			    !or_hulls_meet(&td->a[0], &td->a[1]))
				break;
		}
		if (tries == 32) {
			/* no copy found: a fill instead */
			td->op = ACCEL_TASK_FILL;
			or_any_view(o, false, &td->a[0]);
			td->a[0].access = ACCEL_OUTPUT;
			td->nargs = 1;
			td->u0 = or_rnd(&o->rng);
			return;
		}
		td->nargs = 2;
	} else if (r < 60) {
		td->op = ACCEL_TASK_FILL;
		or_any_view(o, true, &td->a[0]);
		td->a[0].access = or_r(o, 4) ? ACCEL_OUTPUT : ACCEL_INOUT;
		td->nargs = 1;
		td->u0 = or_rnd(&o->rng);
	} else if (r < 90) {
		td->op = ACCEL_TASK_DELAY;
		td->u0 = or_r(o, o->env.delay_max_ns + 1);
		td->nargs = 1 + (uint32_t)or_r(o, 3);
		for (i = 0; i < td->nargs; i++) {
			or_any_view(o, true, &td->a[i]);
			td->a[i].access = (uint32_t)or_r(o, 3);
		}
		return;
	} else if (r < 96) {
		unsigned int int32 = (unsigned int)or_r(o, 2);
		uint64_t n = 1 + or_r(o, 64);

		td->op = ACCEL_TASK_REDUCE;
		td->u0 = int32 ? (or_r(o, 2) ? DRM_VACCEL_REDOP_SUM : DRM_VACCEL_REDOP_MAX) :
			 or_r(o, 4);
		esz = int32 ? 4 : 1;
		for (tries = 0; tries < 32; tries++) {
			for (i = 0; i < 3; i++) {
				td->a[i].buf = or_pick_buf(o, -1);
				if (!or_view(o, td->a[i].buf, esz, 1, n, true, &td->a[i].t))
					break;
				td->a[i].t.dtype = int32 ? ACCEL_DTYPE_I32 : ACCEL_DTYPE_U8;
				td->a[i].access = i ? ACCEL_INPUT : ACCEL_OUTPUT;
			}
			if (i == 3 && !or_hulls_meet(&td->a[0], &td->a[1]) &&
			    !or_hulls_meet(&td->a[0], &td->a[2]))
				break;
		}
		if (tries == 32) {
			td->op = ACCEL_TASK_DELAY;
			td->u0 = 0;
			td->nargs = 1;
			td->a[0].access = ACCEL_INPUT;
			return;
		}
		td->nargs = 3;
	} else {
		uint64_t m = 1 + or_r(o, 6), n = 1 + or_r(o, 6), k = 1 + or_r(o, 6);

		td->op = ACCEL_TASK_MATMUL;
		for (tries = 0; tries < 32; tries++) {
			td->a[0].buf = or_pick_buf(o, -1);
			td->a[1].buf = or_pick_buf(o, -1);
			td->a[2].buf = or_pick_buf(o, -1);
			if (!or_view(o, td->a[0].buf, 4, m, n, true, &td->a[0].t) ||
			    !or_view(o, td->a[1].buf, 4, m, k, true, &td->a[1].t) ||
			    !or_view(o, td->a[2].buf, 4, k, n, true, &td->a[2].t))
				continue;
			for (i = 0; i < 3; i++)
				td->a[i].t.dtype = ACCEL_DTYPE_F32;
			td->a[0].access = ACCEL_OUTPUT;
			td->a[1].access = ACCEL_INPUT;
			td->a[2].access = ACCEL_INPUT;
			if (!or_hulls_meet(&td->a[0], &td->a[1]) &&
			    !or_hulls_meet(&td->a[0], &td->a[2]))
				break;
		}
		if (tries == 32) {
			td->op = ACCEL_TASK_DELAY;
			td->u0 = 0;
			td->nargs = 1;
			td->a[0].access = ACCEL_INPUT;
			return;
		}
		td->nargs = 3;
	}
	/* declared accesses after the operands */
	if (td->nargs < OR_MAX_ARGS && !or_r(o, 4)) {
		or_any_view(o, true, &td->a[td->nargs]);
		td->a[td->nargs].access = (uint32_t)or_r(o, 3);
		td->nargs++;
	}
}

static inline void or_gen_host_task(struct oracle *o, struct or_task *td)
{
	unsigned int i;

	memset(td, 0, sizeof(*td));
	td->op = ACCEL_TASK_HOST;
	td->dev = ACCEL_TG_AUTO;
	td->queue = ACCEL_TG_AUTO;
	td->nargs = 1 + (uint32_t)or_r(o, 3);
	for (i = 0; i < td->nargs; i++) {
		or_any_view(o, true, &td->a[i]);
		td->a[i].access = (uint32_t)or_r(o, 3);
	}
}

/* ---- instances: byte sets, the data model ---- */

static inline int or_inst_new(struct oracle *o, enum or_kind kind, const struct or_task *td,
			      struct or_inst **out)
{
	struct or_inst *in;
	unsigned int i;

	if (o->ninst == o->icap) {
		unsigned int cap = o->icap ? 2 * o->icap : 256;
		struct or_inst **n = realloc(o->inst, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		o->inst = n;
		o->icap = cap;
	}
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->kind = kind;
	in->id = o->ninst;
	in->step = o->step;
	in->graph = in->exec = -1;
	in->td = *td;
	for (i = 0; i < td->nargs; i++) {
		uint32_t a = td->a[i].access;

		if (or_set_of(&td->a[i].t, &in->set[i])) {
			free(in);
			return -ENOMEM;
		}
		in->rw[i] = (a == ACCEL_INPUT || a == ACCEL_INOUT ? 1 : 0) |
			    (a != ACCEL_INPUT ? 2 : 0);
		if (in->rw[i] & 1)
			in->rmask |= 1ull << td->a[i].buf;
		if (in->rw[i] & 2)
			in->wmask |= 1ull << td->a[i].buf;
	}
	o->inst[o->ninst++] = in;
	*out = in;
	return 0;
}

static inline uint8_t or_pattern(unsigned int inst, uint64_t byte)
{
	uint64_t x = ((uint64_t)inst << 32 | byte) * 0x9e3779b97f4a7c15ull;

	return (uint8_t)(x >> 56);
}

/* the byte offset of element @k (row-major index order) of @t */
static inline uint64_t or_elem(const struct accel_tensor *t, uint64_t k)
{
	uint64_t off = t->offset, esz = accel_dtype_size(t->dtype);
	uint32_t i;

	for (i = t->ndims; i-- > 0;) {
		off += (k % t->shape[i]) * t->strides[i] * esz;
		k /= t->shape[i];
	}
	return off;
}

static inline uint64_t or_nelem(const struct accel_tensor *t)
{
	uint64_t n = 1;
	uint32_t i;

	for (i = 0; i < t->ndims; i++)
		n *= t->shape[i];
	return n;
}

/* What a device task does to the model's bytes, in program order. */
static inline void or_model_device(struct oracle *o, const struct or_inst *in)
{
	const struct or_task *td = &in->td;
	uint64_t k, n, esz, e;
	unsigned int i;

	switch (td->op) {
	case ACCEL_TASK_COPY: {
		struct or_buf *d = &o->bufs[td->a[0].buf], *s = &o->bufs[td->a[1].buf];

		n = or_nelem(&td->a[0].t);
		esz = accel_dtype_size(td->a[0].t.dtype);
		for (k = 0; k < n; k++) {
			uint64_t so = or_elem(&td->a[1].t, k), dof = or_elem(&td->a[0].t, k);

			memcpy(d->val + dof, s->val + so, esz);
			memcpy(d->known + dof, s->known + so, esz);
		}
		break;
	}
	case ACCEL_TASK_FILL: {
		struct or_buf *d = &o->bufs[td->a[0].buf];

		n = or_nelem(&td->a[0].t);
		esz = accel_dtype_size(td->a[0].t.dtype);
		for (k = 0; k < n; k++) {
			e = or_elem(&td->a[0].t, k);
			for (i = 0; i < esz; i++) {
				d->val[e + i] = (uint8_t)(td->u0 >> (8 * i));
				d->known[e + i] = 1;
			}
		}
		break;
	}
	case ACCEL_TASK_REDUCE: {
		struct or_buf *d = &o->bufs[td->a[0].buf], *a = &o->bufs[td->a[1].buf],
			      *b = &o->bufs[td->a[2].buf];
		bool i32 = td->a[0].t.dtype == ACCEL_DTYPE_I32;

		esz = i32 ? 4 : 1;
		n = or_nelem(&td->a[0].t);
		for (k = 0; k < n; k++) {
			uint64_t da = or_elem(&td->a[0].t, k), aa = or_elem(&td->a[1].t, k),
				 ba = or_elem(&td->a[2].t, k);
			bool known = true;
			int64_t x, y, r;

			for (i = 0; i < esz; i++)
				known = known && a->known[aa + i] && b->known[ba + i];
			if (i32) {
				int32_t xi, yi, ri;

				memcpy(&xi, a->val + aa, 4);
				memcpy(&yi, b->val + ba, 4);
				x = xi;
				y = yi;
				r = td->u0 == DRM_VACCEL_REDOP_SUM ? (int64_t)(int32_t)(uint32_t)
					((uint32_t)xi + (uint32_t)yi) : (y > x ? y : x);
				ri = (int32_t)r;
				memcpy(d->val + da, &ri, 4);
			} else {
				uint8_t xu = a->val[aa], yu = b->val[ba], ru;

				switch (td->u0) {
				case DRM_VACCEL_REDOP_SUM:
					ru = (uint8_t)(xu + yu);
					break;
				case DRM_VACCEL_REDOP_PROD:
					ru = (uint8_t)(xu * yu);
					break;
				case DRM_VACCEL_REDOP_MIN:
					ru = yu < xu ? yu : xu;
					break;
				default:
					ru = yu > xu ? yu : xu;
					break;
				}
				d->val[da] = ru;
			}
			memset(d->known + da, known, esz);
		}
		break;
	}
	case ACCEL_TASK_MATMUL: {
		/* f32 sums: not modelled, the result is unknown */
		const struct or_set *s = &in->set[0];
		struct or_buf *d = &o->bufs[td->a[0].buf];

		for (k = 0; k < s->n; k++)
			memset(d->known + s->r[k].lo, 0, s->r[k].hi - s->r[k].lo);
		break;
	}
	default:
		break;	/* DELAY: declared accesses, no bytes move */
	}
}

/* A host task's or a map's writes: a pattern of its instance. */
static inline void or_model_host_writes(struct oracle *o, const struct or_inst *in)
{
	unsigned int i, k;
	uint64_t b;

	for (i = 0; i < in->td.nargs; i++) {
		struct or_buf *d = &o->bufs[in->td.a[i].buf];

		if (!(in->rw[i] & 2))
			continue;
		for (k = 0; k < in->set[i].n; k++)
			for (b = in->set[i].r[k].lo; b < in->set[i].r[k].hi; b++) {
				d->val[b] = or_pattern(in->id, b);
				d->known[b] = 1;
			}
	}
}

/* The bytes a host task's inputs must hold when it runs (snapshot of the model). */
static inline int or_snapshot_inputs(struct oracle *o, struct or_inst *in)
{
	uint64_t total = 0, b, p = 0;
	unsigned int i, k;

	for (i = 0; i < in->td.nargs; i++)
		if (in->rw[i] & 1)
			for (k = 0; k < in->set[i].n; k++)
				total += in->set[i].r[k].hi - in->set[i].r[k].lo;
	in->expect = malloc(total ? total : 1);
	in->expect_known = malloc(total ? total : 1);
	if (!in->expect || !in->expect_known)
		return -ENOMEM;
	for (i = 0; i < in->td.nargs; i++) {
		const struct or_buf *s = &o->bufs[in->td.a[i].buf];

		if (!(in->rw[i] & 1))
			continue;
		for (k = 0; k < in->set[i].n; k++)
			for (b = in->set[i].r[k].lo; b < in->set[i].r[k].hi; b++, p++) {
				in->expect[p] = s->val[b];
				in->expect_known[p] = s->known[b];
			}
	}
	return 0;
}

/* In the host task (any thread): check the inputs, write the outputs. */
static inline void or_host_do(struct oracle *o, struct or_inst *in)
{
	uint64_t b, p = 0;
	unsigned int i, k;

	for (i = 0; i < in->td.nargs; i++) {
		const struct or_buf *s = &o->bufs[in->td.a[i].buf];

		if (!(in->rw[i] & 1))
			continue;
		for (k = 0; k < in->set[i].n; k++)
			for (b = in->set[i].r[k].lo; b < in->set[i].r[k].hi; b++, p++)
				if (in->expect_known[p] && s->host[b] != in->expect[p] &&
				    !in->data_bad++)
					snprintf(in->data_msg, sizeof(in->data_msg),
						 "reads 0x%02x at byte %" PRIu64 " of buffer %d, the program had written 0x%02x there",
						 s->host[b], b, in->td.a[i].buf, in->expect[p]);
	}
	for (i = 0; i < in->td.nargs; i++) {
		struct or_buf *d = &o->bufs[in->td.a[i].buf];

		if (!(in->rw[i] & 2))
			continue;
		for (k = 0; k < in->set[i].n; k++)
			for (b = in->set[i].r[k].lo; b < in->set[i].r[k].hi; b++)
				d->host[b] = or_pattern(in->id, b);
	}
}

static void or_host_fn(void *arg)
{
	struct or_hostarg *ha = arg;
	struct oracle *o = ha->o;
	struct or_inst *in = ha->eager;

	if (!in) {
		pthread_mutex_lock(&ha->lock);
		if (ha->head < ha->n)
			in = ha->fifo[ha->head++];
		pthread_mutex_unlock(&ha->lock);
	}
	if (!in) {
		fprintf(stderr, "# oracle: a graph host task ran more often than it was launched\n");
		return;
	}
	in->start = o->env.now();
	or_host_do(o, in);
	in->end = o->env.now();
	in->exact = true;
	__atomic_store_n(&in->have, true, __ATOMIC_RELEASE);
}

/* Describe an instance's views, for a report. */
static inline void or_describe(const struct oracle *o, const struct or_inst *in, FILE *f)
{
	static const char *const kinds[] = { "eager", "launched", "host", "map" };
	unsigned int i, d;

	fprintf(f, "#   [%u] step %u, %s %s: %s\n", in->id, in->step, kinds[in->kind],
		or_op_name(in->td.op), in->what);
	for (i = 0; i < in->td.nargs; i++) {
		const struct accel_tensor *t = &in->td.a[i].t;

		fprintf(f, "#     arg %u %s buffer %d (device %u%s) offset %" PRIu64 " esz %zu shape [",
			i, in->kind == OR_MAP ? (in->map_flags == ACCEL_MAP_READ ? "read" :
			in->map_flags == ACCEL_MAP_WRITE ? "write" : "read-write") :
			or_access_name(in->td.a[i].access), in->td.a[i].buf,
			o->bufs[in->td.a[i].buf].dev, o->bufs[in->td.a[i].buf].heap ? ", heap" : "",
			t->offset, accel_dtype_size(t->dtype));
		for (d = 0; d < t->ndims; d++)
			fprintf(f, "%s%" PRIu64, d ? "," : "", t->shape[d]);
		fprintf(f, "] strides [");
		for (d = 0; d < t->ndims; d++)
			fprintf(f, "%s%" PRIu64, d ? "," : "", t->strides[d]);
		fprintf(f, "] bytes [%" PRIu64 ", %" PRIu64 ") in %u runs\n",
			or_set_lo(&in->set[i]), or_set_hi(&in->set[i]), in->set[i].n);
	}
	if (in->have)
		fprintf(f, "#     ran [%" PRIu64 ", %" PRIu64 "]%s\n", in->start, in->end,
			in->exact ? "" : " (end TIMESTAMP; work known to end after start + DELAY)");
	else
		fprintf(f, "#     no record of when it ran\n");
}

/* ---- submitting ---- */

static inline void or_fill_task(struct oracle *o, const struct or_task *td, struct accel_task *t,
				struct accel_tensor *tv, struct or_hostarg *ha)
{
	unsigned int i;

	accel_task_init(t, td->op, td->name);
	t->device = td->dev;
	t->queue = td->queue;
	for (i = 0; i < td->nargs; i++) {
		tv[i] = td->a[i].t;
		if (td->a[i].buf >= 0)
			tv[i].buf = o->bufs[td->a[i].buf].b;
		accel_task_arg(t, &tv[i], td->a[i].access);
	}
	switch (td->op) {
	case ACCEL_TASK_FILL:
		t->fill.pattern = td->u0;
		break;
	case ACCEL_TASK_REDUCE:
		t->reduce.op = (uint32_t)td->u0;
		break;
	case ACCEL_TASK_DELAY:
		t->delay.ns = td->u0;
		break;
	case ACCEL_TASK_HOST:
		t->host.fn = or_host_fn;
		t->host.arg = ha;
		break;
	default:
		break;
	}
}

/* After a submission or capture: OUTPUT_NEW arguments got heap memory. */
static inline int or_place_new(struct oracle *o, struct or_task *td, const struct accel_tensor *tv,
			       unsigned int dev)
{
	unsigned int i;
	int bi;

	for (i = 0; i < td->nargs; i++) {
		if (td->a[i].access != ACCEL_OUTPUT_NEW)
			continue;
		bi = or_buf_index(o, tv[i].buf);
		if (bi < 0) {
			bi = or_buf_add(o, tv[i].buf, dev, true);
			if (bi < 0)
				return bi;
		}
		td->a[i].buf = bi;
		td->a[i].t = tv[i];
		if (o->npool < OR_MAX_POOL) {
			o->pool[o->npool].buf = bi;
			o->pool[o->npool].t = tv[i];
			o->npool++;
		}
		o->stats_new++;
	}
	return 0;
}

/* the device an eager task runs on (for OUTPUT_NEW placement) */
static inline unsigned int or_task_dev(struct oracle *o, const struct or_task *td)
{
	unsigned int i;

	if (td->dev != ACCEL_TG_AUTO)
		return td->dev;
	for (i = 0; i < td->nargs; i++)
		if (td->a[i].access != ACCEL_OUTPUT_NEW && td->a[i].buf >= 0)
			return o->bufs[td->a[i].buf].dev;
	return 0;
}

static inline void or_lag(struct oracle *o, int on)
{
	if (o->lagging != (bool)on && o->env.lag)
		o->env.lag(on);
	o->lagging = on;
}

/* Submit task @td eagerly (a host task if its op is ACCEL_TASK_HOST). */
static inline int or_submit(struct oracle *o, struct or_task *td)
{
	bool host = td->op == ACCEL_TASK_HOST;
	struct accel_tensor tv[OR_MAX_ARGS];
	struct or_hostarg *ha = NULL;
	struct or_inst *in = NULL;
	struct accel_task t;
	uint64_t id = 0;
	int ret;

	snprintf(td->name, sizeof(td->name), "e%u", o->ninst);
	if (host) {
		/* it may run as soon as it is submitted: its instance is ready before */
		ha = calloc(1, sizeof(*ha));
		if (!ha)
			return -ENOMEM;
		ha->o = o;
		pthread_mutex_init(&ha->lock, NULL);
		ret = or_inst_new(o, OR_HOST, td, &in);
		if (ret) {
			free(ha);
			return ret;
		}
		in->hostarg = ha;
		ha->eager = in;
		ret = or_snapshot_inputs(o, in);
		if (ret)
			return ret;
		or_model_host_writes(o, in);
		o->stats_host++;
	}
	or_fill_task(o, td, &t, tv, ha);
	ret = accel_tg_submit(o->tg, &t, &id);
	if (ret) {
		OR_FAIL(o, "accel_tg_submit of %s %s: %d", or_op_name(td->op), td->name, ret);
		return ret;
	}
	if (!host) {
		ret = or_place_new(o, td, tv, or_task_dev(o, td));
		if (!ret)
			ret = or_inst_new(o, OR_EAGER, td, &in);
		if (ret)
			return ret;
		or_model_device(o, in);
		o->stats_eager++;
	}
	in->tid = id;
	in->has_tid = true;
	snprintf(in->what, sizeof(in->what), "%s on device %d queue %d", td->name,
		 td->dev == ACCEL_TG_AUTO ? -1 : (int)td->dev,
		 td->queue == ACCEL_TG_AUTO ? -1 : (int)td->queue);
	return 0;
}

static inline int or_eager(struct oracle *o, bool host)
{
	struct or_task td;

	if (host)
		or_gen_host_task(o, &td);
	else
		or_gen_device_task(o, false, &td);
	return or_submit(o, &td);
}

/*
 * 2 to 6 eager device tasks in one accel_tg_submit_batch(): to the model
 * the same as submitted one after another (a later task of the batch that
 * touches what an earlier one wrote waits for it).
 */
static inline int or_batch(struct oracle *o)
{
	struct accel_tensor tv[OR_BATCH_MAX][OR_MAX_ARGS];
	struct accel_task t[OR_BATCH_MAX], *tp[OR_BATCH_MAX];
	struct or_task td[OR_BATCH_MAX];
	uint64_t ids[OR_BATCH_MAX];
	unsigned int n = 2 + (unsigned int)or_r(o, OR_BATCH_MAX - 1), k;
	struct or_inst *in;
	int ret;

	for (k = 0; k < n; k++) {
		or_gen_device_task(o, false, &td[k]);
		snprintf(td[k].name, sizeof(td[k].name), "e%u", o->ninst + k);
		or_fill_task(o, &td[k], &t[k], tv[k], NULL);
		tp[k] = &t[k];
	}
	ret = accel_tg_submit_batch(o->tg, tp, n, ids);
	if (ret != (int)n) {
		OR_FAIL(o, "accel_tg_submit_batch of %u tasks: %d", n, ret);
		return ret < 0 ? ret : -EIO;
	}
	for (k = 0; k < n; k++) {
		ret = or_place_new(o, &td[k], tv[k], or_task_dev(o, &td[k]));
		if (!ret)
			ret = or_inst_new(o, OR_EAGER, &td[k], &in);
		if (ret)
			return ret;
		or_model_device(o, in);
		in->tid = ids[k];
		in->has_tid = true;
		snprintf(in->what, sizeof(in->what), "%s on device %d queue %d, task %u of a batch of %u",
			 td[k].name, td[k].dev == ACCEL_TG_AUTO ? -1 : (int)td[k].dev,
			 td[k].queue == ACCEL_TG_AUTO ? -1 : (int)td[k].queue, k, n);
		o->stats_eager++;
	}
	o->stats_batched++;
	return 0;
}

/*
 * Ask whether one of the recent eager tasks completed (accel_tg_task_done)
 * or, with @block, wait for it (accel_tg_task_wait): from then on its work
 * must have ended (checked against the evidence at the end).
 */
static inline int or_task_wait(struct oracle *o, bool block)
{
	unsigned int k, tries;
	struct or_inst *in = NULL;
	uint64_t now;
	int ret;

	for (tries = 0; o->ninst && tries < 8 && !in; tries++) {
		k = o->ninst - 1 - (unsigned int)or_r(o, o->ninst < 64 ? o->ninst : 64);
		if (o->inst[k]->has_tid)
			in = o->inst[k];
	}
	if (!in)
		return 0;
	if (block) {
		ret = accel_tg_task_wait(o->tg, in->tid, 30 * OR_SEC);
		if (ret) {
			OR_FAIL(o, "accel_tg_task_wait of [%u] %s: %d", in->id, in->what, ret);
			return ret;
		}
	} else {
		ret = accel_tg_task_done(o->tg, in->tid);
		if (ret < 0) {
			OR_FAIL(o, "accel_tg_task_done of [%u] %s: %d", in->id, in->what, ret);
			return ret;
		}
		if (!ret)
			return 0;
	}
	now = o->env.now();
	if (!in->done_at)
		in->done_at = now;
	o->stats_waits++;
	return 0;
}

/*
 * Capture a graph of the @n tasks @given (or, if NULL, of 2..OR_MAX_GTASKS
 * random ones) and instantiate it. The executable's index is *@exec.
 */
static inline int or_capture_tasks(struct oracle *o, unsigned int n, const struct or_task *given,
				   int *exec)
{
	struct accel_tensor tv[OR_MAX_ARGS];
	struct or_graph *g;
	struct or_exec *e;
	struct accel_task t;
	unsigned int i, k;
	int ret, gi;

	*exec = -1;
	if (o->ngraphs == OR_MAX_GRAPHS || o->nexecs == OR_MAX_EXECS)
		return 0;
	gi = (int)o->ngraphs;
	g = &o->graphs[gi];
	memset(g, 0, sizeof(*g));
	ret = accel_tg_capture_begin(o->tg);
	if (ret) {
		OR_FAIL(o, "accel_tg_capture_begin: %d", ret);
		return ret;
	}
	if (!given)
		n = 2 + (unsigned int)or_r(o, OR_MAX_GTASKS - 1);
	for (i = 0; i < n; i++) {
		struct or_task *td = &g->tasks[i];

		if (given)
			*td = given[i];
		else if (!or_r(o, 7))
			or_gen_host_task(o, td);
		else
			or_gen_device_task(o, true, td);
		if (td->op == ACCEL_TASK_HOST) {
			g->hosts[i] = calloc(1, sizeof(*g->hosts[i]));
			if (!g->hosts[i])
				return -ENOMEM;
			g->hosts[i]->o = o;
			pthread_mutex_init(&g->hosts[i]->lock, NULL);
		}
		snprintf(td->name, sizeof(td->name), "g%d.%u", gi, i);
		or_fill_task(o, td, &t, tv, g->hosts[i]);
		ret = accel_tg_submit(o->tg, &t, NULL);
		if (ret) {
			OR_FAIL(o, "capture of %s %s: %d", or_op_name(td->op), td->name, ret);
			return ret;
		}
		ret = or_place_new(o, td, tv, td->dev == ACCEL_TG_AUTO ? 0 : td->dev);
		if (ret)
			return ret;
		for (k = 0; k < td->nargs; k++)
			g->bufmask |= 1ull << td->a[k].buf;
		g->ntasks++;
	}
	ret = accel_tg_capture_end(o->tg, &g->g);
	if (ret) {
		OR_FAIL(o, "accel_tg_capture_end: %d", ret);
		return ret;
	}
	o->ngraphs++;
	o->stats_graphs++;
	e = &o->execs[o->nexecs];
	memset(e, 0, sizeof(*e));
	e->graph = gi;
	ret = accel_graph_instantiate(g->g, &e->ge);
	if (ret) {
		OR_FAIL(o, "accel_graph_instantiate of graph %d: %d", gi, ret);
		return ret;
	}
	*exec = (int)o->nexecs++;
	/* the executable keeps what it needs: drop the program's graph sometimes */
	if (!given && !or_r(o, 3)) {
		accel_graph_destroy(g->g);
		g->g = NULL;
	}
	return 0;
}

static inline int or_capture(struct oracle *o)
{
	int exec;

	return or_capture_tasks(o, 0, NULL, &exec);
}

static inline int or_line_push(struct or_line *l, unsigned int launch)
{
	if (l->n == l->cap) {
		unsigned int cap = l->cap ? 2 * l->cap : 32;
		unsigned int *n = realloc(l->launches, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		l->launches = n;
		l->cap = cap;
	}
	l->launches[l->n++] = launch;
	return 0;
}

static inline int or_fifo_push(struct or_hostarg *ha, struct or_inst *in)
{
	int ret = 0;

	pthread_mutex_lock(&ha->lock);
	if (ha->n == ha->cap) {
		unsigned int cap = ha->cap ? 2 * ha->cap : 16;
		struct or_inst **n = realloc(ha->fifo, cap * sizeof(*n));

		if (n) {
			ha->fifo = n;
			ha->cap = cap;
		} else {
			ret = -ENOMEM;
		}
	}
	if (!ret)
		ha->fifo[ha->n++] = in;
	pthread_mutex_unlock(&ha->lock);
	return ret;
}

/* Launch executable @ei, with buffers rebound if @rebind. */
static inline int or_launch_exec(struct oracle *o, int ei, bool rebind)
{
	struct accel_binding bind[4];
	int map[OR_MAX_BUFS], tries;
	uint64_t taken = 0;
	unsigned int nb = 0, i, k, first, li;
	bool used[OR_DEVS][OR_MAXQ] = { { false } };
	struct or_launch *L;
	struct or_graph *g;
	struct or_exec *e;
	int ret;

	e = &o->execs[ei];
	g = &o->graphs[e->graph];
	for (i = 0; i < o->nbufs; i++)
		map[i] = (int)i;
	/* bindings: a buffer of the graph replaced by one of the same device it does not use */
	if (rebind) {
		unsigned int want = 1 + (unsigned int)or_r(o, 2);

		for (i = 0; i < o->nbufs && nb < want; i++) {
			int to;

			if (!(g->bufmask & (1ull << i)) || o->bufs[i].heap || or_r(o, 2))
				continue;
			for (tries = 0; tries < 8; tries++) {
				to = or_pick_buf(o, (int)o->bufs[i].dev);
				/* not a buffer of the graph, not one bound already: no aliasing */
				if (to >= 0 && !((g->bufmask | taken) & (1ull << to)) &&
				    o->bufs[to].size >= o->bufs[i].size)
					break;
			}
			if (tries == 8)
				continue;
			bind[nb].from = o->bufs[i].b;
			bind[nb].to = o->bufs[to].b;
			taken |= 1ull << to;
			map[i] = to;
			nb++;
		}
	}
	/* the instances, in capture order: program order within the launch */
	first = o->ninst;
	for (i = 0; i < g->ntasks; i++) {
		struct or_task td = g->tasks[i];
		struct or_inst *in;

		for (k = 0; k < td.nargs; k++) {
			td.a[k].buf = map[td.a[k].buf];
			td.a[k].t.buf = o->bufs[td.a[k].buf].b;
		}
		ret = or_inst_new(o, td.op == ACCEL_TASK_HOST ? OR_HOST : OR_LAUNCHED, &td, &in);
		if (ret)
			return ret;
		in->graph = e->graph;
		in->exec = ei;
		in->launch = e->launches;
		in->gtask = i;
		snprintf(in->what, sizeof(in->what), "task %u (%s) of launch %u of executable %d (graph %d)%s, device %d queue %d",
			 i, td.name, e->launches, ei, e->graph, nb ? ", rebound" : "",
			 td.op == ACCEL_TASK_HOST ? -1 : (int)td.dev,
			 td.op == ACCEL_TASK_HOST ? -1 : (int)td.queue);
		if (td.op == ACCEL_TASK_HOST) {
			ret = or_snapshot_inputs(o, in);
			if (!ret)
				ret = or_fifo_push(g->hosts[i], in);
			if (ret)
				return ret;
			or_model_host_writes(o, in);
		} else {
			or_model_device(o, in);
			used[td.dev][td.queue] = true;
		}
	}
	ret = accel_graph_launch(e->ge, nb ? bind : NULL, nb);
	if (ret) {
		OR_FAIL(o, "accel_graph_launch of executable %d (%u bindings): %d", ei, nb, ret);
		return ret;
	}
	if (o->nlaunches == o->lcap) {
		unsigned int cap = o->lcap ? 2 * o->lcap : 64;
		struct or_launch *n = realloc(o->launches, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		o->launches = n;
		o->lcap = cap;
	}
	li = o->nlaunches++;
	L = &o->launches[li];
	*L = (struct or_launch){ .exec = ei, .graph = e->graph, .first = first, .no = e->launches };
	for (i = 0; i < OR_DEVS; i++)
		for (k = 0; k < o->nq; k++)
			if (used[i][k]) {
				ret = or_line_push(&o->lines[i][k], li);
				if (ret)
					return ret;
			}
	e->launches++;
	e->since_ckpt++;
	o->stats_launch++;
	o->stats_rebound += nb > 0;
	return 0;
}

/* Launch a random live executable, half the time with buffers rebound. */
static inline int or_launch(struct oracle *o)
{
	int ei = -1, tries;

	for (tries = 0; tries < 8 && ei < 0; tries++) {
		ei = o->nexecs ? (int)or_r(o, o->nexecs) : -1;
		if (ei >= 0 && !o->execs[ei].ge)
			ei = -1;
	}
	return ei < 0 ? 0 : or_launch_exec(o, ei, or_r(o, 2));
}

/* Map a view; check what a reader sees, write a pattern; maybe keep it open. */
static inline int or_map(struct oracle *o, bool hold)
{
	static const uint32_t fl[] = { ACCEL_MAP_READ, ACCEL_MAP_WRITE,
				       ACCEL_MAP_READ | ACCEL_MAP_WRITE };
	uint32_t flags = fl[or_r(o, 3)];
	struct or_buf *ob;
	struct or_task td;
	struct or_inst *in;
	uint64_t b, bad = 0;
	unsigned int k;
	void *ptr;
	int ret;

	memset(&td, 0, sizeof(td));
	td.op = ACCEL_TASK_HOST;
	td.nargs = 1;
	or_any_view(o, true, &td.a[0]);
	td.a[0].t.buf = o->bufs[td.a[0].buf].b;
	td.a[0].access = flags == ACCEL_MAP_READ ? ACCEL_INPUT :
			 flags == ACCEL_MAP_WRITE ? ACCEL_OUTPUT : ACCEL_INOUT;
	ob = &o->bufs[td.a[0].buf];
	ret = or_inst_new(o, OR_MAP, &td, &in);
	if (ret)
		return ret;
	in->map_flags = flags;
	snprintf(in->what, sizeof(in->what), "map%s", hold ? ", held open" : "");
	ret = accel_tg_map(o->tg, &td.a[0].t, flags, 30 * OR_SEC, &ptr);
	in->start = o->env.now();
	if (ret) {
		OR_FAIL(o, "accel_tg_map: %d", ret);
		return ret;
	}
	if ((uint8_t *)ptr != ob->host + td.a[0].t.offset)
		OR_FAIL(o, "accel_tg_map returned %p, not the buffer's mapping + %" PRIu64, ptr,
			td.a[0].t.offset);
	if (flags & ACCEL_MAP_READ)
		for (k = 0; k < in->set[0].n; k++)
			for (b = in->set[0].r[k].lo; b < in->set[0].r[k].hi; b++)
				if (ob->known[b] && ob->host[b] != ob->val[b] && !bad++) {
					o->data_errors++;
					OR_FAIL(o, "map [%u] reads 0x%02x at byte %" PRIu64 " of buffer %d, the program had written 0x%02x there",
						in->id, ob->host[b], b, td.a[0].buf, ob->val[b]);
				}
	if (flags & ACCEL_MAP_WRITE) {
		for (k = 0; k < in->set[0].n; k++)
			for (b = in->set[0].r[k].lo; b < in->set[0].r[k].hi; b++)
				ob->host[b] = or_pattern(in->id, b);
		or_model_host_writes(o, in);
	}
	o->stats_maps++;
	if (hold) {
		o->held_ptr = ptr;
		o->held_inst = (int)in->id;
		o->held_steps = 1 + (unsigned int)or_r(o, 4);
		return 0;
	}
	in->end = o->env.now();
	in->have = true;
	in->exact = true;
	ret = accel_tg_unmap(o->tg, ptr);
	if (ret)
		OR_FAIL(o, "accel_tg_unmap: %d", ret);
	return ret;
}

static inline int or_unmap_held(struct oracle *o)
{
	struct or_inst *in = o->inst[o->held_inst];
	int ret;

	in->end = o->env.now();
	in->have = true;
	in->exact = true;
	ret = accel_tg_unmap(o->tg, o->held_ptr);
	if (ret)
		OR_FAIL(o, "accel_tg_unmap of the held map: %d", ret);
	o->held_ptr = NULL;
	return ret;
}

static inline int or_release(struct oracle *o)
{
	unsigned int k;
	int ret;

	if (!o->npool)
		return 0;
	k = (unsigned int)or_r(o, o->npool);
	ret = accel_tg_release(o->tg, &o->pool[k].t);
	if (ret)
		OR_FAIL(o, "accel_tg_release of a heap tensor at offset %" PRIu64 ": %d",
			o->pool[k].t.offset, ret);
	o->pool[k] = o->pool[--o->npool];
	return ret;
}

/* May buffer @bi go? */
static inline bool or_may_recycle(struct oracle *o, int bi)
{
	unsigned int i, k;

	for (k = 0; k < o->ngraphs; k++)
		if (o->graphs[k].g && (o->graphs[k].bufmask & (1ull << bi)))
			return false;
	for (k = 0; k < o->nexecs; k++)
		if (o->execs[k].ge && (o->graphs[o->execs[k].graph].bufmask & (1ull << bi)))
			return false;
	if (o->held_ptr && o->inst[o->held_inst]->td.a[0].buf == bi)
		return false;
	for (i = 0; i < o->ninst; i++) {
		const struct or_inst *in = o->inst[i];

		if (in->kind == OR_HOST && ((in->rmask | in->wmask) & (1ull << bi)) &&
		    !__atomic_load_n(&in->have, __ATOMIC_ACQUIRE))
			return false;
	}
	return true;
}

/*
 * The program destroys one of its buffers, maybe while tasks that use it
 * are in flight (the task graph keeps it until they complete), and
 * creates another on the same device, which may get the same address,
 * handle or struct: a new buffer (a new index) to the model, so nothing
 * orders its uses after the old one's; the old one's uses must still be
 * ordered among themselves. Not a buffer a graph may still use, the open
 * map's, or one a host task that has not run will touch (the program's
 * own pointers).
 */
static inline int or_recycle(struct oracle *o)
{
	struct accel_buffer *b;
	unsigned int tries, dev;
	int bi = -1, ret;

	if (o->nbufs == OR_MAX_BUFS)
		return 0;
	for (tries = 0; tries < 6 && bi < 0; tries++) {
		bi = or_pick_buf(o, -1);
		if (bi >= 0 && !or_may_recycle(o, bi))
			bi = -1;
	}
	if (bi < 0)
		return 0;
	dev = o->bufs[bi].dev;
	accel_buffer_destroy(o->bufs[bi].b);
	o->bufs[bi].dead = true;
	o->bufs[bi].host = NULL;
	ret = accel_buffer_create(o->env.devs[dev], OR_BUF_SIZE, 0, &b);
	if (ret) {
		OR_FAIL(o, "accel_buffer_create after destroying buffer %d: %d", bi, ret);
		return ret;
	}
	ret = or_buf_add(o, b, dev, false);
	if (ret < 0) {
		accel_buffer_destroy(b);
		OR_FAIL(o, "or_buf_add: %d", ret);
		return ret;
	}
	o->stats_recycled++;
	return 0;
}

/* ---- the trace ---- */

struct or_ev {
	char ph[4], name[40];
	long pid, tid;
	uint64_t ts, dur;
};

struct or_jp {
	const char *s;
	size_t i, n;
	int err;
};

static inline void or_jws(struct or_jp *p)
{
	while (p->i < p->n && strchr(" \t\r\n", p->s[p->i]) && p->s[p->i])
		p->i++;
}

static inline bool or_jeat(struct or_jp *p, char c)
{
	or_jws(p);
	if (p->i < p->n && p->s[p->i] == c) {
		p->i++;
		return true;
	}
	return false;
}

/* a string into @out (escapes kept), or skipped with @out NULL */
static inline void or_jstr(struct or_jp *p, char *out, size_t len)
{
	size_t k = 0;

	or_jws(p);
	if (!or_jeat(p, '"')) {
		p->err = 1;
		return;
	}
	while (p->i < p->n && p->s[p->i] != '"') {
		if (p->s[p->i] == '\\')
			p->i++;
		if (out && k + 1 < len && p->i < p->n)
			out[k++] = p->s[p->i];
		p->i++;
	}
	if (out)
		out[k] = 0;
	if (!or_jeat(p, '"'))
		p->err = 1;
}

/* a number's text */
static inline void or_jnum(struct or_jp *p, char *out, size_t len)
{
	size_t k = 0;

	or_jws(p);
	while (p->i < p->n && strchr("0123456789+-.eE", p->s[p->i]) && p->s[p->i]) {
		if (k + 1 < len)
			out[k++] = p->s[p->i];
		p->i++;
	}
	out[k] = 0;
	if (!k)
		p->err = 1;
}

static inline void or_jskip(struct or_jp *p, int depth)
{
	char tmp[64];

	or_jws(p);
	if (depth > 16 || p->i >= p->n) {
		p->err = 1;
		return;
	}
	if (p->s[p->i] == '{' || p->s[p->i] == '[') {
		char close = p->s[p->i] == '{' ? '}' : ']';
		bool obj = close == '}';

		p->i++;
		if (or_jeat(p, close))
			return;
		do {
			if (obj) {
				or_jstr(p, NULL, 0);
				if (!or_jeat(p, ':'))
					p->err = 1;
			}
			or_jskip(p, depth + 1);
		} while (!p->err && or_jeat(p, ','));
		if (!or_jeat(p, close))
			p->err = 1;
	} else if (p->s[p->i] == '"') {
		or_jstr(p, NULL, 0);
	} else if (!strncmp(p->s + p->i, "true", 4) || !strncmp(p->s + p->i, "null", 4)) {
		p->i += 4;
	} else if (!strncmp(p->s + p->i, "false", 5)) {
		p->i += 5;
	} else {
		or_jnum(p, tmp, sizeof(tmp));
	}
}

/* "123.456" microseconds as printed with %.3f, in ns */
static inline uint64_t or_us_to_ns(const char *s)
{
	uint64_t v = 0;
	int frac = -1;

	for (; *s; s++) {
		if (*s == '.') {
			frac = 0;
			continue;
		}
		if (*s < '0' || *s > '9' || frac == 3)
			break;
		v = v * 10 + (uint64_t)(*s - '0');
		if (frac >= 0)
			frac++;
	}
	for (frac = frac < 0 ? 0 : frac; frac < 3; frac++)
		v *= 10;
	return v;
}

/* One event object of "traceEvents". */
static inline void or_jevent(struct or_jp *p, struct or_ev *ev)
{
	char key[32], num[64];

	memset(ev, 0, sizeof(*ev));
	if (!or_jeat(p, '{')) {
		p->err = 1;
		return;
	}
	if (or_jeat(p, '}'))
		return;
	do {
		or_jstr(p, key, sizeof(key));
		if (p->err || !or_jeat(p, ':')) {
			p->err = 1;
			return;
		}
		if (!strcmp(key, "ph")) {
			or_jstr(p, ev->ph, sizeof(ev->ph));
		} else if (!strcmp(key, "name")) {
			or_jstr(p, ev->name, sizeof(ev->name));
		} else if (!strcmp(key, "pid") || !strcmp(key, "tid") || !strcmp(key, "ts") ||
			   !strcmp(key, "dur")) {
			or_jnum(p, num, sizeof(num));
			if (key[0] == 'p')
				ev->pid = strtol(num, NULL, 10);
			else if (key[1] == 'i')
				ev->tid = strtol(num, NULL, 10);
			else if (key[0] == 't')
				ev->ts = or_us_to_ns(num);
			else
				ev->dur = or_us_to_ns(num);
		} else {
			or_jskip(p, 1);
		}
	} while (!p->err && or_jeat(p, ','));
	if (!or_jeat(p, '}'))
		p->err = 1;
}

/* The events of a trace document: count, or -1 if it is not one. */
static inline int or_trace_parse(const char *s, size_t n, struct or_ev **evs)
{
	struct or_jp p = { .s = s, .n = n };
	unsigned int cnt = 0, cap = 0;
	char key[32];

	*evs = NULL;
	if (!or_jeat(&p, '{'))
		return -1;
	do {
		or_jstr(&p, key, sizeof(key));
		if (p.err || !or_jeat(&p, ':'))
			goto bad;
		if (strcmp(key, "traceEvents")) {
			or_jskip(&p, 1);
			continue;
		}
		if (!or_jeat(&p, '['))
			goto bad;
		if (or_jeat(&p, ']'))
			continue;
		do {
			if (cnt == cap) {
				struct or_ev *ne;

				cap = cap ? 2 * cap : 256;
				ne = realloc(*evs, cap * sizeof(*ne));
				if (!ne)
					goto bad;
				*evs = ne;
			}
			or_jevent(&p, &(*evs)[cnt++]);
		} while (!p.err && or_jeat(&p, ','));
		if (!or_jeat(&p, ']'))
			goto bad;
	} while (!p.err && or_jeat(&p, ','));
	if (p.err || !or_jeat(&p, '}'))
		goto bad;
	or_jws(&p);
	if (p.i != p.n)
		goto bad;
	return (int)cnt;
bad:
	free(*evs);
	*evs = NULL;
	return -1;
}

struct or_slice {
	unsigned int dev, q;
	uint64_t ts, end;
	int launch;			/* graph launch slices: the launch matched */
};

static int or_slice_cmp(const void *a, const void *b)
{
	const struct or_slice *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static inline void or_evidence(struct oracle *o, struct or_inst *in, uint64_t ts, uint64_t end)
{
	in->start = ts;
	in->end = end;
	in->exact = false;
	if (o->env.work_end) {
		if (o->env.work_end(end, &in->end))
			OR_FAIL(o, "[%u] %s: no TIMESTAMP wrote its end %" PRIu64, in->id, in->what,
				end);
		else
			in->exact = true;
	}
	in->have = true;
}

/* The queue of a track, learnt from the slices of tasks on explicit queues. */
struct or_track {
	long pid, tid;
	int dev, q;			/* -1: not known */
};

static inline struct or_track *or_track_of(struct or_track *tr, unsigned int *nt, long pid,
					   long tid)
{
	unsigned int k;

	for (k = 0; k < *nt; k++)
		if (tr[k].pid == pid && tr[k].tid == tid)
			return &tr[k];
	tr[*nt] = (struct or_track){ pid, tid, -1, -1 };
	return &tr[(*nt)++];
}

/* The instance an X slice names: a device task's, or NULL (set *@graph_task). */
static inline struct or_inst *or_slice_inst(struct oracle *o, const char *name, bool *named,
					    unsigned int *g, unsigned int *t)
{
	unsigned int id;
	char c;

	*named = true;
	*g = ~0u;
	if (sscanf(name, "e%u%c", &id, &c) == 1)
		return id < o->ninst ? o->inst[id] : NULL;
	if (sscanf(name, "g%u.%u%c", g, t, &c) == 2)
		return NULL;
	*named = false;
	return NULL;
}

/*
 * Read the trace and give each device instance the interval it ran in.
 * Only the Trace Event Format and the names given to the tasks are relied
 * on: a track's queue is learnt from the tasks on explicit queues that ran
 * on it, and a slice named after no task on a queue's track is a launch's.
 */
static inline int or_trace_read(struct oracle *o)
{
	struct or_slice *launches = NULL, *tasks = NULL;
	unsigned int nt = 0, nl = 0, ntask = 0, i, k, d, q, g, t;
	struct or_track *tr = NULL, *x;
	struct or_ev *evs = NULL;
	struct or_inst *in;
	char *doc = NULL;
	size_t len = 0;
	bool named;
	FILE *f;
	int n, ret = 0;

	f = open_memstream(&doc, &len);
	if (!f)
		return -ENOMEM;
	n = accel_tg_trace_write(o->tg, f);
	fclose(f);
	if (n < 0) {
		OR_FAIL(o, "accel_tg_trace_write: %d", n);
		free(doc);
		return n;
	}
	n = or_trace_parse(doc, len, &evs);
	if (n < 0) {
		OR_FAIL(o, "accel_tg_trace_write wrote no valid JSON document (%zu bytes)", len);
		free(doc);
		return -EPROTO;
	}
	launches = calloc((size_t)n + 1, sizeof(*launches));
	tasks = calloc((size_t)n + 1, sizeof(*tasks));
	tr = calloc((size_t)n + 1, sizeof(*tr));
	if (!launches || !tasks || !tr) {
		ret = -ENOMEM;
		goto out;
	}
	/* the tracks of queues: where tasks of known queues ran */
	for (i = 0; i < (unsigned int)n; i++) {
		struct or_ev *e = &evs[i];
		int dev = -1, qu = -1;

		if (strcmp(e->ph, "X"))
			continue;
		x = or_track_of(tr, &nt, e->pid, e->tid);
		in = or_slice_inst(o, e->name, &named, &g, &t);
		if (in && in->kind == OR_EAGER && in->td.dev != ACCEL_TG_AUTO &&
		    in->td.queue != ACCEL_TG_AUTO) {
			dev = (int)in->td.dev;
			qu = (int)in->td.queue;
		} else if (g < o->ngraphs && t < o->graphs[g].ntasks &&
			   o->graphs[g].tasks[t].op != ACCEL_TASK_HOST) {
			dev = (int)o->graphs[g].tasks[t].dev;
			qu = (int)o->graphs[g].tasks[t].queue;
		}
		if (dev < 0)
			continue;
		if (x->dev >= 0 && (x->dev != dev || x->q != qu))
			OR_FAIL(o, "trace: track %ld/%ld has tasks of device %d queue %d and of device %d queue %d",
				e->pid, e->tid, x->dev, x->q, dev, qu);
		x->dev = dev;
		x->q = qu;
	}
	for (i = 0; i < (unsigned int)n; i++) {
		struct or_ev *e = &evs[i];

		if (strcmp(e->ph, "X"))
			continue;
		x = or_track_of(tr, &nt, e->pid, e->tid);
		in = or_slice_inst(o, e->name, &named, &g, &t);
		if (!named) {
			/* a launch's slice, on the track of a queue it ran on */
			if (x->dev < 0) {
				OR_FAIL(o, "trace: slice \"%s\" on track %ld/%ld, where no task ran",
					e->name, e->pid, e->tid);
				continue;
			}
			launches[nl++] = (struct or_slice){ (unsigned int)x->dev, (unsigned int)x->q,
							    e->ts, e->ts + e->dur, -1 };
		} else if (in) {
			if (in->kind == OR_HOST)
				continue;	/* host tasks record their own times */
			if (in->kind != OR_EAGER || in->have) {
				OR_FAIL(o, "trace: unexpected slice \"%s\"", e->name);
				continue;
			}
			or_evidence(o, in, e->ts, e->ts + e->dur);
		} else if (g < o->ngraphs && t < o->graphs[g].ntasks) {
			if (o->graphs[g].tasks[t].op == ACCEL_TASK_HOST)
				continue;
			tasks[ntask++] = (struct or_slice){ (unsigned int)x->dev, (unsigned int)x->q,
							    e->ts, e->ts + e->dur, (int)(g << 8 | t) };
		} else {
			OR_FAIL(o, "trace: slice \"%s\" of no task", e->name);
		}
	}
	/* launch slices of a queue, in time order = its launches in program order */
	qsort(launches, nl, sizeof(*launches), or_slice_cmp);
	for (d = 0; d < OR_DEVS; d++)
		for (q = 0; q < o->nq; q++) {
			struct or_line *l = &o->lines[d][q];
			unsigned int cnt = 0;

			for (i = 0; i < nl; i++)
				if (launches[i].dev == d && launches[i].q == q) {
					if (l->done + cnt < l->n)
						launches[i].launch = (int)l->launches[l->done + cnt];
					cnt++;
				}
			if (l->done + cnt != l->n)
				OR_FAIL(o, "trace: device %u queue %u has %u launch slices for %u launches",
					d, q, cnt, l->n - l->done);
			l->done += cnt;
		}
	for (i = 0; i < ntask; i++) {
		struct or_slice *s = &tasks[i];
		struct or_launch *L = NULL;

		g = (unsigned int)s->launch >> 8;
		t = (unsigned int)s->launch & 0xff;
		for (k = 0; k < nl; k++)
			if (launches[k].dev == s->dev && launches[k].q == s->q &&
			    launches[k].ts <= s->ts && s->end <= launches[k].end &&
			    launches[k].launch >= 0)
				L = &o->launches[launches[k].launch];
		if (!L || L->graph != (int)g) {
			OR_FAIL(o, "trace: slice g%u.%u on device %u queue %u is in no launch of its graph",
				g, t, s->dev, s->q);
			continue;
		}
		in = o->inst[L->first + t];
		if (in->kind != OR_LAUNCHED || in->have) {
			OR_FAIL(o, "trace: slice g%u.%u of launch %u: unexpected for [%u] %s", g, t,
				L->no, in->id, in->what);
			continue;
		}
		or_evidence(o, in, s->ts, s->end);
	}
out:
	free(tr);
	free(launches);
	free(tasks);
	free(evs);
	free(doc);
	return ret;
}

/* Everything done, every TIMESTAMP written, the trace read. */
static inline int or_checkpoint(struct oracle *o)
{
	int64_t deadline;
	unsigned int d, q, i;
	int ret;

	or_lag(o, 0);
	ret = accel_tg_sync(o->tg, 60 * OR_SEC);
	if (ret) {
		OR_FAIL(o, "accel_tg_sync: %d", ret);
		return ret;
	}
	/*
	 * A task is complete once its completion action ran; the TIMESTAMP
	 * after it may not have: wait for the rings to drain.
	 */
	for (d = 0; d < OR_DEVS; d++)
		for (q = 0; q < o->nq; q++) {
			struct accel_queue *aq = accel_tg_queue(o->tg, d, q);

			deadline = (int64_t)o->env.now() + 30 * OR_SEC;
			while (accel_queue_completed(aq) != accel_queue_submitted(aq)) {
				if ((int64_t)o->env.now() > deadline) {
					OR_FAIL(o, "device %u queue %u: %" PRIu64 " of %" PRIu64 " packets done after the sync",
						d, q, accel_queue_completed(aq),
						accel_queue_submitted(aq));
					return -ETIMEDOUT;
				}
				usleep(100);
			}
		}
	ret = or_trace_read(o);
	if (ret)
		return ret;
	for (i = 0; i < o->ninst; i++) {
		struct or_inst *in = o->inst[i];

		if (!__atomic_load_n(&in->have, __ATOMIC_ACQUIRE) && in->kind != OR_MAP) {
			OR_FAIL(o, "[%u] %s: %s", in->id, in->what,
				in->kind == OR_HOST ? "the host task has not run after the sync" :
				"no trace slice after the sync");
			in->have = true;	/* once */
			in->start = in->end = 0;
			in->exact = true;
		}
	}
	for (i = 0; i < o->nexecs; i++)
		o->execs[i].since_ckpt = 0;
	return 0;
}

static inline int or_exec_destroy(struct oracle *o)
{
	unsigned int i;
	int ret;

	i = (unsigned int)or_r(o, o->nexecs ? o->nexecs : 1);
	if (i >= o->nexecs || !o->execs[i].ge)
		return 0;
	/* its launches' task slices must be read while it exists */
	ret = or_checkpoint(o);
	if (ret)
		return ret;
	accel_graph_exec_destroy(o->execs[i].ge);
	o->execs[i].ge = NULL;
	return 0;
}

static inline void or_graph_destroy(struct oracle *o)
{
	unsigned int i = (unsigned int)or_r(o, o->ngraphs ? o->ngraphs : 1);

	if (i < o->ngraphs && o->graphs[i].g) {
		accel_graph_destroy(o->graphs[i].g);
		o->graphs[i].g = NULL;
	}
}

/* ---- the checks ---- */

/* Every buffer as the program left it (known bytes). */
static inline void or_check_data(struct oracle *o)
{
	struct accel_tensor t;
	unsigned int i;
	uint64_t b, shape;
	void *ptr;
	int ret;

	for (i = 0; i < o->nbufs; i++) {
		struct or_buf *ob = &o->bufs[i];
		unsigned int bad = 0;

		if (ob->dead)
			continue;
		shape = ob->size;
		accel_tensor_init(&t, ob->b, 0, ACCEL_DTYPE_U8, 1, &shape);
		if (ob->heap) {
			/*
			 * An output heap is no tensor of its own (a view of it needs
			 * a block's generation): once everything completed, read it
			 * directly.
			 */
			ret = accel_tg_sync(o->tg, 30 * OR_SEC);
			if (!ret)
				ret = accel_buffer_map(ob->b, &ptr);
		} else {
			ret = accel_tg_map(o->tg, &t, ACCEL_MAP_READ, 30 * OR_SEC, &ptr);
		}
		if (ret) {
			OR_FAIL(o, "final map of buffer %u: %d", i, ret);
			continue;
		}
		for (b = 0; b < ob->size; b++)
			if (ob->known[b] && ob->host[b] != ob->val[b] && !bad++) {
				o->data_errors++;
				OR_FAIL(o, "at the end, byte %" PRIu64 " of buffer %u (device %u%s) is 0x%02x, the program wrote 0x%02x",
					b, i, ob->dev, ob->heap ? ", heap" : "", ob->host[b], ob->val[b]);
			}
		if (!ob->heap)
			accel_tg_unmap(o->tg, ptr);
	}
	for (i = 0; i < o->ninst; i++)
		if (o->inst[i]->data_bad) {
			o->data_errors++;
			OR_FAIL(o, "host task [%u] %s %s", i, o->inst[i]->what, o->inst[i]->data_msg);
		}
}

/* The earliest the work of @in can have ended. */
static inline uint64_t or_end_bound(const struct or_inst *in)
{
	if (in->exact)
		return in->end;
	/* the module: the end TIMESTAMP follows the completion; DELAY is measured */
	return in->start + (in->td.op == ACCEL_TASK_DELAY ? in->td.u0 : 0);
}

/* Conflicting pairs in program order must not overlap in time. */
static inline void or_check_order(struct oracle *o)
{
	unsigned int i, j, x, y, reported = 0;
	uint64_t at = 0;

	for (j = 0; j < o->ninst; j++) {
		struct or_inst *b = o->inst[j];

		for (i = 0; i < j; i++) {
			struct or_inst *a = o->inst[i];
			bool conflict = false;

			if (!((a->wmask & (b->rmask | b->wmask)) | (a->rmask & b->wmask)))
				continue;
			o->checked_pairs++;
			for (x = 0; x < a->td.nargs && !conflict; x++)
				for (y = 0; y < b->td.nargs && !conflict; y++)
					if (a->td.a[x].buf == b->td.a[y].buf &&
					    ((a->rw[x] & 2) || (b->rw[y] & 2)) &&
					    or_sets_meet(&a->set[x], &b->set[y], &at))
						conflict = true;
			if (!conflict)
				continue;
			o->conflicts++;
			if (!a->have || !b->have || b->start >= or_end_bound(a))
				continue;
			o->violations++;
			if (reported++ < OR_MAX_REPORT) {
				fprintf(stderr, "# oracle seed %" PRIu64 ": [%u] and [%u] conflict at byte %" PRIu64 " of buffer %d but overlap in time (the later one started %" PRIu64 " ns before the earlier one's work %s):\n",
					o->seed, a->id, b->id, at, a->td.a[x - 1].buf,
					or_end_bound(a) - b->start, a->exact ? "ended" :
					"can have ended");
				or_describe(o, a, stderr);
				or_describe(o, b, stderr);
			}
		}
	}
	/* a task the program saw completed had ended by then */
	for (j = 0; j < o->ninst; j++) {
		struct or_inst *b = o->inst[j];

		if (!b->done_at || !b->have || or_end_bound(b) <= b->done_at)
			continue;
		o->violations++;
		if (reported++ < OR_MAX_REPORT) {
			fprintf(stderr, "# oracle seed %" PRIu64 ": [%u] was reported complete %" PRIu64 " ns before its work %s:\n",
				o->seed, b->id, or_end_bound(b) - b->done_at,
				b->exact ? "ended" : "can have ended");
			or_describe(o, b, stderr);
		}
	}
	if (o->violations)
		fprintf(stderr, "# oracle seed %" PRIu64 ": %u ordering violations in %u conflicting pairs\n",
			o->seed, o->violations, o->conflicts);
}

/* ---- a program ---- */

static inline void or_free(struct oracle *o)
{
	unsigned int i, k;

	for (i = 0; i < o->ninst; i++) {
		struct or_inst *in = o->inst[i];

		for (k = 0; k < in->td.nargs; k++)
			free(in->set[k].r);
		free(in->expect);
		free(in->expect_known);
		if (in->hostarg)
			pthread_mutex_destroy(&in->hostarg->lock);
		free(in->hostarg);
		free(in);
	}
	free(o->inst);
	for (i = 0; i < o->ngraphs; i++)
		for (k = 0; k < OR_MAX_GTASKS; k++)
			if (o->graphs[i].hosts[k]) {
				pthread_mutex_destroy(&o->graphs[i].hosts[k]->lock);
				free(o->graphs[i].hosts[k]->fifo);
				free(o->graphs[i].hosts[k]);
			}
	for (i = 0; i < OR_DEVS; i++)
		for (k = 0; k < OR_MAXQ; k++)
			free(o->lines[i][k].launches);
	free(o->launches);
	for (i = 0; i < o->nbufs; i++) {
		free(o->bufs[i].val);
		free(o->bufs[i].known);
	}
}

/*
 * A task graph over @env's devices and 3 or 4 buffers of OR_BUF_SIZE
 * bytes on each, for the program of @seed: NULL if that failed.
 */
static inline struct oracle *or_begin(const struct or_env *env, uint64_t seed)
{
	struct accel_tg_params params = { .size = sizeof(params), .flags = ACCEL_TG_TRACE,
					  .heap_size = OR_HEAP_SIZE, .timeout_ns = 20 * OR_SEC };
	struct oracle *o = calloc(1, sizeof(*o));
	unsigned int d, i, nb;
	int ret = 0;

	if (!o)
		return NULL;
	o->env = *env;
	o->seed = seed;
	o->rng = seed * 0x9e3779b97f4a7c15ull + 1;
	o->nq = env->queues ? env->queues : 2 + (unsigned int)or_r(o, 2);
	params.queues_per_device = o->nq;
	ret = accel_tg_create(o->env.devs, OR_DEVS, &params, &o->tg);
	if (ret) {
		fprintf(stderr, "# oracle: accel_tg_create: %d\n", ret);
		free(o);
		return NULL;
	}
	o->worker = or_r(o, 2);
	if (o->worker && accel_tg_start_worker(o->tg))
		OR_FAIL(o, "accel_tg_start_worker");
	for (d = 0; d < OR_DEVS && !ret; d++) {
		nb = 3 + (unsigned int)or_r(o, 2);
		for (i = 0; i < nb && !ret; i++) {
			struct accel_buffer *b;

			ret = accel_buffer_create(o->env.devs[d], OR_BUF_SIZE, 0, &b);
			if (!ret) {
				ret = or_buf_add(o, b, d, false);
				if (ret < 0)
					accel_buffer_destroy(b);
				else
					ret = 0;
			}
		}
	}
	if (ret)
		OR_FAIL(o, "buffers: %d", ret);
	return o;
}

/*
 * The end of a program: everything done and read, the data and the order
 * checked, everything freed. Returns the number of problems (0: passed).
 */
static inline int or_end(struct oracle *o)
{
	unsigned int i;
	int problems;

	if (o->held_ptr)
		or_unmap_held(o);
	or_lag(o, 0);
	if (!o->failures)
		or_checkpoint(o);
	if (!o->failures)
		or_check_data(o);
	if (!o->failures || o->data_errors)
		or_check_order(o);
	problems = (int)(o->failures + o->violations);
	fprintf(stderr, "# oracle seed %" PRIu64 ": %u steps, %u queues x %d devices, worker %s: %u instances (%u eager, %u host, %u launches of %u graphs, %u rebound, %u maps, %u heap tensors, %u buffers recycled, %u batches, %u completions seen), %u pairs share a buffer, %u conflict, %u violations, %u data errors%s\n",
		o->seed, o->step, o->nq, OR_DEVS, o->worker ? "on" : "off", o->ninst,
		o->stats_eager, o->stats_host, o->stats_launch, o->stats_graphs, o->stats_rebound,
		o->stats_maps, o->stats_new, o->stats_recycled, o->stats_batched, o->stats_waits,
		o->checked_pairs, o->conflicts, o->violations,
		o->data_errors, problems ? "  FAILED" : "");
	for (i = 0; i < o->nexecs; i++)
		accel_graph_exec_destroy(o->execs[i].ge);
	for (i = 0; i < o->ngraphs; i++)
		accel_graph_destroy(o->graphs[i].g);
	accel_tg_destroy(o->tg);
	for (i = 0; i < o->nbufs; i++)
		if (!o->bufs[i].heap && !o->bufs[i].dead)
			accel_buffer_destroy(o->bufs[i].b);
	or_free(o);
	free(o);
	return problems;
}

/*
 * Run the random program of @seed on @env's devices and check it. Returns
 * the number of problems found (0: it passed), or -errno if it could not
 * run.
 */
static inline int or_run(const struct or_env *env, uint64_t seed)
{
	struct oracle *o = or_begin(env, seed);
	unsigned int i, since = 0;
	int ret = 0;

	if (!o)
		return -ENOMEM;
	for (o->step = 0; !ret && !o->failures && o->step < o->env.steps; o->step++) {
		unsigned int r = (unsigned int)or_r(o, 100);
		bool can_block = !o->held_ptr, need_ckpt = false;

		for (i = 0; i < o->nexecs; i++)
			need_ckpt |= o->execs[i].ge && o->execs[i].since_ckpt >= 48;
		if (o->held_ptr && !--o->held_steps) {
			ret = or_unmap_held(o);
			continue;
		}
		if (can_block && (need_ckpt || since >= 40)) {
			ret = or_checkpoint(o);
			since = 0;
			continue;
		}
		since++;
		if (!o->lagging && !or_r(o, 6))
			or_lag(o, 1);
		else if (o->lagging && !or_r(o, 14))
			or_lag(o, 0);
		if (r < 36) {
			ret = or_eager(o, false);
		} else if (r < 43) {
			ret = or_eager(o, true);
		} else if (r < 49) {
			ret = or_capture(o);
		} else if (r < 72) {
			ret = or_launch(o);
		} else if (r < 80 && can_block) {
			or_lag(o, 0);
			ret = or_map(o, !or_r(o, 3));
		} else if (r < 85) {
			ret = or_release(o);
		} else if (r < 88 && can_block) {
			ret = or_exec_destroy(o);
			since = 0;
		} else if (r < 90) {
			or_graph_destroy(o);
		} else if (r < 93 && can_block) {
			ret = or_checkpoint(o);
			since = 0;
		} else if (r < 95) {
			ret = or_recycle(o);
		} else if (r < 97) {
			ret = or_batch(o);
		} else if (r < 99) {
			ret = or_task_wait(o, can_block && or_r(o, 2));
		} else {
			ret = or_eager(o, false);
		}
	}
	return or_end(o);
}

/* ---- the scenarios (defect 1: a launch's summaries retire each other) ---- */

/* a task with one argument: all of buffer @bi as bytes */
static inline void or_whole(struct oracle *o, struct or_task *td, uint32_t op, uint32_t dev,
			    uint32_t queue, int bi, uint32_t access)
{
	uint64_t shape = o->bufs[bi].size;

	memset(td, 0, sizeof(*td));
	td->op = op;
	td->dev = dev;
	td->queue = queue;
	td->nargs = 1;
	td->a[0].buf = bi;
	td->a[0].access = access;
	accel_tensor_init(&td->a[0].t, o->bufs[bi].b, 0, ACCEL_DTYPE_U8, 1, &shape);
	td->u0 = op == ACCEL_TASK_FILL ? or_rnd(&o->rng) : 0;
	/*
	 * Without the exact end of a task's work (the module), only a DELAY's
	 * work is known to last: the same accesses, declared by a DELAY.
	 */
	if (!o->env.work_end) {
		td->op = ACCEL_TASK_DELAY;
		td->u0 = o->env.delay_max_ns;
	}
}

/* COPY all of @dst = all of @src, on device 0 queue @queue */
static inline void or_whole_copy(struct oracle *o, struct or_task *td, uint32_t queue, int dst,
				 int src)
{
	or_whole(o, td, ACCEL_TASK_COPY, 0, queue, dst, ACCEL_OUTPUT);
	td->nargs = 2;
	td->a[1] = td->a[0];
	td->a[1].buf = src;
	td->a[1].t.buf = o->bufs[src].b;
	td->a[1].access = ACCEL_INPUT;
}

/*
 * Issue #14's three cases, @rounds times each with the devices held back
 * while they are submitted, on device 0's buffers 0 (buf), 1 (out) and 2:
 *  1. graph { FILL buf on queue 1; COPY out <- buf on queue 0 }, launched
 *     twice: the second launch's FILL must wait for the first one's COPY
 *     (WAR);
 *  2. the same graph launched once, then an eager FILL of buf on queue 1
 *     (WAR on the launch's reader on queue 0);
 *  3. graph { FILL buf on queue 1; FILL buf on queue 0 }, launched, then
 *     an eager COPY 2 <- buf on queue 1 (RAW on the last writer, queue 0).
 * Without env->work_end, DELAYs declaring the same accesses stand for the
 * FILLs and COPYs (their run time bounds the end of their work).
 * Returns the number of problems, as or_run().
 */
static inline int or_defect1(const struct or_env *env, uint64_t seed, unsigned int rounds)
{
	struct or_env e = *env;
	struct or_task g1[2], g3[2], td;
	struct oracle *o;
	unsigned int r;
	int x1, x3, ret = 0;

	e.queues = 2;
	o = or_begin(&e, seed);
	if (!o)
		return -ENOMEM;
	or_whole(o, &g1[0], ACCEL_TASK_FILL, 0, 1, 0, ACCEL_OUTPUT);
	or_whole_copy(o, &g1[1], 0, 1, 0);
	or_whole(o, &g3[0], ACCEL_TASK_FILL, 0, 1, 0, ACCEL_OUTPUT);
	or_whole(o, &g3[1], ACCEL_TASK_FILL, 0, 0, 0, ACCEL_OUTPUT);
	ret = or_capture_tasks(o, 2, g1, &x1);
	if (!ret)
		ret = or_capture_tasks(o, 2, g3, &x3);
	for (r = 0; !ret && !o->failures && r < rounds; r++, o->step++) {
		or_lag(o, 1);
		ret = or_launch_exec(o, x1, false);
		if (!ret)
			ret = or_launch_exec(o, x1, false);
		if (!ret)
			ret = or_checkpoint(o);
		or_lag(o, 1);
		if (!ret)
			ret = or_launch_exec(o, x1, false);
		or_whole(o, &td, ACCEL_TASK_FILL, 0, 1, 0, ACCEL_OUTPUT);
		if (!ret)
			ret = or_submit(o, &td);
		if (!ret)
			ret = or_checkpoint(o);
		or_lag(o, 1);
		if (!ret)
			ret = or_launch_exec(o, x3, false);
		or_whole_copy(o, &td, 1, 2, 0);
		if (!ret)
			ret = or_submit(o, &td);
		if (!ret)
			ret = or_checkpoint(o);
	}
	return or_end(o);
}

#endif /* TG_ORACLE_H */
