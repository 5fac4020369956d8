/* SPDX-License-Identifier: MIT */
/*
 * The task graph's private declarations. One concern per file:
 *
 *   taskgraph.c   create, destroy, lines (timelines) and task ids
 *   registry.c    the buffers the task graph has seen: pins, imports on
 *                 other devices, last uses, buffers the program destroyed
 *   validate.c    checking a task: views, layouts, the operation's rules,
 *                 the line it goes to (pure, no state changes)
 *   deps.c        dependency collection for one submission (per line the
 *                 latest value needed) and the WAITs it turns into
 *   outputs.c     the output heaps: OUTPUT_NEW placement, heap tensor
 *                 identity, holds of in-flight tasks, release
 *   submit.c      eager submission: validate, find dependencies, place
 *                 outputs, lower, then commit (the only stage that changes
 *                 state, and it cannot fail)
 *   host.c        host tasks and the worker; the re-entry guard
 *   maps.c        host maps
 *   wait.c        waits, sync, faults, status, abort, recovery
 *   stats.c       statistics
 *   capture.c     graph capture
 *   instantiate.c graphs to sealed packet lists
 *   launch.c      graph launches
 *   dot.c         Graphviz output
 *   lower.c       packets of each operation
 *   trace.c       Chrome/Perfetto traces
 *   tensormap.c   the dependency index (pure)
 *   heap.c        the output heap ring (pure)
 *
 * Threads: one thread at a time calls a task graph's functions (the
 * program's rule); the worker thread runs host tasks and touches only the
 * host list (host_lock), the host line's signal and the host trace records
 * (host_lock). accel_tg_abort() may come from any thread or a signal
 * handler: it touches only @aborted and the abort signal. Buffers destroyed
 * by other threads reach the task graph through the lock-free orphan stack.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_GRAPH_TG_INTERNAL_H
#define ACCEL_GRAPH_TG_INTERNAL_H

#include "../internal.h"
#include "heap.h"
#include "tensormap.h"

/*
 * Timelines ("lines"). Every place work completes in order has one: each
 * device queue of the task graph, the host (host tasks, in submission
 * order) and each host map slot. A line is a signal of a page of the task
 * graph's own, so it starts at 0; the n-th piece of work on it completes
 * when the signal reaches n (values 1, 2, ...; a graph launch may skip
 * values, see launch.c).
 *
 * A task id is (line << 48 | value): the TensorMap stores ids, and "is this
 * task complete" or "wait for this task" needs nothing but the id. Values
 * never reach 2^48 (tg_take() refuses with -EOVERFLOW), so ids neither
 * overflow nor alias.
 */
#define TG_VALUE_BITS	48
#define TG_VALUE_MAX	((1ull << TG_VALUE_BITS) - 1)
#define TG_ID_LINE(id)	((uint32_t)((id) >> TG_VALUE_BITS))
#define TG_ID_VALUE(id)	((id) & TG_VALUE_MAX)

static inline uint64_t tg_id(uint32_t line, uint64_t value)
{
	return (uint64_t)line << TG_VALUE_BITS | value;
}

#define TG_TRACE_SLOTS		4096u	/* trace records per line */
#define TG_DESC_SLOTS		256u	/* eager MATMUL descriptors per queue line */
#define TG_MAX_TASK_PACKETS	1024u	/* packets one task may lower to */
#define TG_NAME_LEN		32u
#define TG_LAST_USES		4u	/* lines remembered per buffer (registry.c) */
#define TG_FAULT_CHECK_EVERY	64u	/* submissions between two fault checks */

enum tg_line_kind { TG_LINE_QUEUE, TG_LINE_HOST, TG_LINE_MAP };

/* a heap block an eager task retains, released when the task completes */
struct tg_hold {
	uint64_t value;
	uint64_t block;
	uint32_t devi;
};

/* one trace record: a task or a launch on a line */
struct tg_trace_rec {
	uint64_t value;			/* its line value; 0: slot unused */
	char name[TG_NAME_LEN];
	uint64_t id;
	int64_t host_start, host_end;	/* host tasks only */
	/* a graph launch: its executable (NULL once destroyed) and table slot */
	struct accel_graph_exec *ge;
	uint32_t ge_line, ge_slot;
};

/*
 * What went into a queue line's ring at value @value: ring indices
 * [@first, @last] (for fault reports: which task a faulted packet belongs
 * to). Indexed by value & (ring size - 1): a task takes at least one slot.
 */
struct tg_ring_rec {
	uint64_t value;
	uint64_t first, last;
	const struct accel_graph_exec *ge;	/* a launch (NULL: an eager task) */
	char name[24];
};

/* a page of timeline signals, and its imports into the other devices */
struct tg_sigpage {
	struct acc_sigpage pg;		/* pg.buf NULL: unused */
	struct accel_buffer *import[ACCEL_TG_MAX_DEVICES];
	struct acc_pin pin[ACCEL_TG_MAX_DEVICES];
};

struct tg_line {
	enum tg_line_kind kind;
	struct tg_sigpage *lp;		/* the page of @sig */
	uint32_t devi;			/* device of the queue / of the signal */
	uint32_t qi;			/* queue index on its device */
	struct accel_queue *q;		/* TG_LINE_QUEUE */
	struct accel_signal *sig;
	uint64_t next;			/* next value to hand out */
	uint64_t va_on[ACCEL_TG_MAX_DEVICES];	/* sig's address on each device, 0: unknown */
	uint32_t handle_on[ACCEL_TG_MAX_DEVICES];	/* and its page's handle there */
	/* heap holds of eager tasks, in value order (the line completes in order) */
	struct tg_hold *holds;
	size_t hhead, htail, hcap;
	/* TG_LINE_QUEUE: eager MATMUL descriptors, TG_DESC_SLOTS of 64 bytes */
	struct accel_buffer *desc;
	struct tg_ring_rec *recs;	/* TG_LINE_QUEUE: ring size records */
	/* ACCEL_TG_TRACE: device timestamps (2 per record) and the records */
	struct accel_buffer *tsbuf;
	struct tg_trace_rec *trace;
};

/* registry.c: a buffer the task graph has indexed */
struct tg_buf {
	struct accel_tg *tg;
	struct accel_buffer *buf;
	struct acc_pin pin;		/* keeps @buf alive while entries or work use it */
	struct accel_buffer *import[ACCEL_TG_MAX_DEVICES];
	struct acc_pin import_pin[ACCEL_TG_MAX_DEVICES];
	/* the last value of each line that used it; @nlast > TG_LAST_USES: many */
	uint32_t nlast;
	uint32_t last_line[TG_LAST_USES];
	uint64_t last_value[TG_LAST_USES];
	uint64_t *snapshot;		/* orphaned with many lines: every line's next - 1 */
	bool orphaned;			/* the program destroyed it */
	bool fresh;			/* registered by the submission being staged */
	bool dead;			/* freed while on the orphan stack */
	_Atomic bool queued;		/* on tg->orphans */
	struct tg_buf *onext;		/* tg->orphans */
	struct list pending;		/* tg->pending_drop */
};

struct tg_heap {
	struct gheap *h;
	struct accel_buffer *buf;
};

/* a host task waiting to run */
struct tg_host {
	struct list node;
	uint64_t value;
	void (*fn)(void *arg);
	void *arg;
	uint32_t ndeps;
	uint64_t *deps;			/* task ids */
	/* a task of a graph launch: the buffers bound for that launch */
	const struct accel_graph_exec *ge;
	struct tg_bindings *bind;
	char name[TG_NAME_LEN];
};

/* the bindings of one launch, shared by its host tasks */
struct tg_bindings {
	unsigned int refs;		/* under host_lock */
	unsigned int n;
	struct accel_binding b[];
};

struct tg_map {
	void *ptr;			/* NULL: slot free */
	uint64_t value;
	struct accel_buffer *buf;
	uint64_t lo, hi;		/* the mapped view's byte hull */
	/*
	 * While open: per line, the first value that waits (directly or
	 * through other work) for this map's unmap, 0: none. Waiting on the
	 * host for such a value would wait for this thread (maps.c).
	 */
	uint64_t *from;
};

/* deps.c: the dependencies of one submission, per line the latest value */
struct tg_deps {
	uint64_t *need;			/* per line, 0: none */
	uint32_t *touched, ntouched;
	uint32_t line;			/* the submission's own line */
	uint64_t id;			/* the submission's id */
	uint32_t nwaits;		/* after tg_deps_resolve(): WAITs to write */
	uint64_t found[TM_DEP_KINDS], same_line;	/* statistics, committed later */
};

struct accel_tg {
	struct accel_device *devs[ACCEL_TG_MAX_DEVICES];
	unsigned int ndevs;
	struct accel_tg_params p;
	int64_t timeout_ns;
	uint32_t qbase[ACCEL_TG_MAX_DEVICES], qcount[ACCEL_TG_MAX_DEVICES];
	uint32_t rr[ACCEL_TG_MAX_DEVICES];
	uint32_t nq;			/* queue lines: 0 .. nq - 1 */
	uint32_t host_line;		/* nq */
	uint32_t map_line;		/* nq + 1 .. nq + ACCEL_TG_MAX_MAPS */
	uint32_t nlines;
	struct tg_line *lines;
	struct accel_queue **qarr;	/* the queues of lines 0 .. nq - 1 (a fault domain) */
	/* the lines' signals: pages of the task graph's own (fresh, 0) */
	struct tg_sigpage lpages[ACCEL_TG_MAX_DEVICES][2];
	/* raised by accel_tg_abort(), one per device (host waits sleep on them) */
	struct accel_signal *abort_sig[ACCEL_TG_MAX_DEVICES];
	_Atomic uint64_t abort_level;	/* abort_sig value that means "aborted" */
	atomic_bool aborted;
	struct tensormap *tm;
	struct tg_heap heaps[ACCEL_TG_MAX_DEVICES];
	/* registry.c: buffer pointer -> struct tg_buf *, open addressing */
	struct tg_buf **bufs;
	uint32_t bcap, nbufs;
	struct tg_buf *last_buf;	/* the entry tg_buf_get() found last */
	struct tg_buf **staged;		/* registered by the call being staged */
	uint32_t nstaged, stagedcap;
	struct tg_buf *_Atomic orphans;	/* pushed by accel_buffer_destroy() */
	struct list pending_drop;	/* orphaned, uses not yet complete */
	struct tg_deps deps;
	struct drm_vaccel_packet *pk;	/* lowering scratch, TG_MAX_TASK_PACKETS */
	uint32_t submits;		/* for the periodic fault check */
	/* the fault that stopped the task graph: 0 or -EIO / -ENODEV */
	int fault;
	uint32_t fault_line;
	/* host tasks: list and worker, under host_lock */
	pthread_mutex_t host_lock;
	pthread_cond_t host_cond;
	struct list host_pending;
	pthread_t worker;
	bool worker_running, worker_stop;
	/*
	 * A recovery holds the worker out of the queues it replaces: it sets
	 * worker_pause and waits for worker_paused, which the worker sets
	 * between two host tasks (host_lock, host_cond).
	 */
	bool worker_pause, worker_paused;
	struct tg_map maps[ACCEL_TG_MAX_MAPS];
	uint32_t open_maps;		/* bit s: maps[s] is open */
	uint32_t map_holding;		/* bit s: map line s has heap holds not retired */
	struct accel_graph *capture;
	struct list graphs, execs;
	/*
	 * While a graph with collectives is launched (its tasks submitted one
	 * by one, tg_coll_launch()): that launch and its bindings (NULL: none,
	 * or no launch), which its host tasks take a reference on, so that
	 * accel_tg_host_buffer() names the launch's buffers.
	 */
	const struct accel_graph_exec *launch_ge;
	struct tg_bindings *launch_bind;
	struct accel_tg_stats st;
	_Atomic uint64_t host_tasks_run;
};

/* A recorded task (graph mode): everything by value. */
struct tg_gtask {
	uint32_t op;
	uint32_t line;
	uint32_t nargs;
	uint32_t point;			/* index of its timeline point on its line */
	/*
	 * The arguments: in t and access, or, for a send/receive task of more
	 * than ACCEL_TASK_MAX_ARGS operations, in the allocations xt and xacc
	 * (freed with the graph). Read them through tg_gt_ct() and tg_gt_cacc().
	 */
	struct accel_tensor t[ACCEL_TASK_MAX_ARGS];
	uint32_t access[ACCEL_TASK_MAX_ARGS];
	struct accel_tensor *xt;
	uint32_t *xacc;
	uint64_t u0;			/* pattern, redop, accumulate, ns */
	void (*fn)(void *arg);		/* host tasks */
	void *arg;
	char name[TG_NAME_LEN];
	uint32_t ndeps;
	struct tg_gdep *deps;
};

/* graph task @t's argument tensors and accesses (tg_gtask) */
static inline const struct accel_tensor *tg_gt_ct(const struct tg_gtask *t)
{
	return t->xt ? t->xt : t->t;
}

static inline const uint32_t *tg_gt_cacc(const struct tg_gtask *t)
{
	return t->xacc ? t->xacc : t->access;
}

struct tg_gdep {
	uint32_t task;			/* index in the graph */
	uint32_t kind;			/* TM_DEP_* */
};

/*
 * A buffer a graph uses: a pin, the end of the graph's use, and its imports
 * into other devices whose packet lists address it directly (not through a
 * binding): they live as long as the graph, whatever the program destroys.
 */
struct tg_gbuf {
	struct accel_buffer *buf;
	struct acc_pin pin;
	uint64_t hi;
	struct accel_buffer *import[ACCEL_TG_MAX_DEVICES];
	struct acc_pin import_pin[ACCEL_TG_MAX_DEVICES];
};

struct accel_graph {
	struct accel_tg *tg;
	struct list node;		/* tg->graphs */
	unsigned int refs;		/* the program's + one per exec */
	bool destroyed;
	struct tg_gtask *tasks;
	uint32_t ntasks, tcap;
	struct tensormap *tm;		/* capture-local dependencies */
	struct tg_gbuf **bufs;		/* stable: each holds a pin */
	uint32_t nbufs, bufcap;
	struct { uint32_t devi; uint64_t block; } *pins;
	uint32_t npins, pincap;
	/* capture.c: the dependencies of the task being captured */
	struct tg_gdep *scratch;
	uint32_t nscratch, scratchcap;
	int scratch_err;
};

/* per (buffer, line) of an executable: the hull of what the line's tasks touch */
struct tg_summary {
	uint32_t line;
	uint32_t exec_line;		/* index in ge->lines */
	uint32_t buf;			/* index in graph->bufs */
	uint64_t lo, hi;
	bool write, read;
	uint32_t access;		/* ACCEL_INPUT, _OUTPUT or _INOUT */
	struct tm_layout lay;		/* [lo, hi) as bytes */
};

/* a WAIT a launch writes before a line's EXEC: found in its first pass */
struct tg_lwait {
	uint32_t line;
	uint64_t value;
};

struct tg_exec_line {
	uint32_t line;
	uint32_t npoints;
	uint64_t npk;
	struct accel_buffer *body;
	uint32_t *task_of;		/* per body packet: the graph task, or UINT32_MAX */
	uint64_t last_value;		/* value of the last launch's end, 0: none */
	/* launch.c scratch: the WAITs of the launch being staged */
	struct tg_lwait *waits;
	uint32_t nwaits;
	uint64_t found[TM_DEP_KINDS], same_line;
};

#define TG_TABLES		64u	/* binding tables per device, reused in turn */

struct accel_graph_exec {
	struct accel_tg *tg;
	struct accel_graph *g;
	struct list node;		/* tg->execs */
	struct tg_exec_line *lines;
	uint32_t nlines;
	struct tg_summary *sums;
	uint32_t nsums, sumcap;
	uint32_t nbound;		/* bound graph buffers */
	int32_t *bind;			/* per graph buffer: binding slot or -1 */
	struct accel_buffer *tables[ACCEL_TG_MAX_DEVICES];	/* TG_TABLES x 16 addresses */
	uint64_t *table_last;		/* per table: per exec line, the value it waits for */
	uint64_t launches;
	uint32_t nhost;			/* host tasks of the graph */
	bool zombie;			/* destroyed by the program while it may still run */
	/*
	 * ACCEL_TG_TRACE: binding entry @trace_bind (-1: none, the table is
	 * full) points each launch at its slot of @tstamps, where the lists
	 * store a TIMESTAMP before and after each task: TG_TABLES slots of
	 * ntasks x 2 u64 per device.
	 */
	int32_t trace_bind;
	struct accel_buffer *tstamps[ACCEL_TG_MAX_DEVICES];
	/* a graph with collectives, launched by replaying its tasks (coll_task.c) */
	bool replay;
};

static inline uint64_t tg_nelems(const struct accel_tensor *t)
{
	uint64_t n = 1;
	uint32_t i;

	for (i = 0; i < t->ndims; i++)
		n *= t->shape[i];
	return n;
}

/* rows of contiguous bytes: innermost stride 1 (or shape 1), or contiguous */
static inline bool tg_rows_ok(const struct accel_tensor *t)
{
	return t->strides[t->ndims - 1] == 1 || t->shape[t->ndims - 1] == 1 ||
	       accel_tensor_is_contiguous(t);
}

static inline bool tg_reads(uint32_t a)
{
	return a == ACCEL_INPUT || a == ACCEL_INOUT;
}

static inline bool tg_writes(uint32_t a)
{
	return a != ACCEL_INPUT;
}

/* --- taskgraph.c --- */
/*
 * The common checks of every public entry point: @tg not NULL, not called
 * from one of its own host tasks (-EDEADLK), not in a forked child, not
 * aborted (-ECANCELED).
 */
#define TG_E_ABORT	0x1	/* also fail with -ECANCELED once aborted */
#define TG_E_FAULT	0x2	/* also fail with the fault that stopped it */
int tg_enter(struct accel_tg *tg, unsigned int flags, const char *fn);
int tg_devi_of(const struct accel_tg *tg, const struct accel_device *dev);
/* the TensorMap's "is this task complete" */
int tg_tm_done(void *arg, uint64_t id);
/* tm_set_progress()'s count: the sum of the lines' timeline values */
uint64_t tg_tm_progress(void *arg);
/* @l's signal address (and page handle) on device @devi, importing it once */
int tg_line_va(struct accel_tg *tg, uint32_t line, uint32_t devi, uint64_t *va);
int tg_line_handle(struct accel_tg *tg, uint32_t line, uint32_t devi, uint32_t *handle);
/* may @n more values be handed out on @l? 0 or -EOVERFLOW */
int tg_line_room(const struct tg_line *l, uint64_t n, const char *what);
/*
 * Room for @need elements of @size bytes in @arr, whose capacity *@cap
 * doubles from @min: the (maybe moved) array, or NULL (then @arr is
 * unchanged and still owned by the caller).
 */
void *tg_grow(void *arr, uint32_t *cap, uint32_t need, size_t size, uint32_t min);

/* --- registry.c --- */
/* the entry of @buf, registering it (marked fresh) if new: NULL on -ENOMEM */
struct tg_buf *tg_buf_get(struct accel_tg *tg, struct accel_buffer *buf, int *err);
struct tg_buf *tg_buf_find(const struct accel_tg *tg, const struct accel_buffer *buf);
/* a staged submission failed: forget the entries it registered */
void tg_buf_unstage(struct accel_tg *tg);
/* it committed: its entries stay */
void tg_buf_commit_staged(struct accel_tg *tg);
/* @buf's address on device @devi (importing it there once) */
int tg_buf_va(struct accel_tg *tg, struct tg_buf *b, uint32_t devi, uint64_t *va);
/* line @line uses @b up to @value */
void tg_buf_used(struct tg_buf *b, uint32_t line, uint64_t value);
/* drop the buffers the program destroyed whose last uses completed */
void tg_bufs_collect(struct accel_tg *tg);
void tg_bufs_fini(struct accel_tg *tg);

/* --- validate.c --- */
/* one argument of a task being submitted */
struct tg_arg {
	struct accel_tensor *t;		/* the program's (OUTPUT_NEW: filled at commit) */
	struct accel_tensor v;		/* the view used (OUTPUT_NEW: as placed) */
	struct tm_layout lay;
	uint32_t access;
	struct tg_buf *b;
	int32_t heap;			/* heap tensor: its device, else -1 */
	uint64_t block;
	bool placed;			/* OUTPUT_NEW block allocated by this call */
};

struct tg_task {
	struct accel_task tk;		/* the program's task, size-normalized */
	uint64_t u0;			/* fill pattern, redop, accumulate, ns */
	uint32_t line;
	uint32_t nargs;
	uint32_t nheap;			/* heap tensor arguments (placed ones included) */
	uint32_t nnew;			/* OUTPUT_NEW arguments */
	/*
	 * The arguments: a_in, or, for a send/receive task of more than
	 * ACCEL_TASK_MAX_ARGS operations, an allocation its entry point frees
	 * (coll_task.c). Set by tg_task_copy() and the collectives' entry.
	 */
	struct tg_arg *a;
	struct tg_arg a_in[ACCEL_TASK_MAX_ARGS];
};

const char *tg_name(const struct accel_task *task);
/*
 * Copy the program's task (any size from the first release on) into
 * @tt->tk: 0, -EINVAL (size below the first release), -E2BIG (unknown
 * non-zero bytes past what this library knows).
 */
int tg_task_copy(struct tg_task *tt, const struct accel_task *task);
/*
 * Check a task and make each argument's layout (once); picks its line
 * (without advancing the round-robin). OUTPUT_NEW views are checked for
 * dtype and shape only. No state changes.
 */
int tg_validate(struct accel_tg *tg, struct tg_task *tt, const struct accel_task *task);
/* the round-robin choice of tg_validate() is taken */
void tg_commit_line(struct accel_tg *tg, const struct tg_task *tt);
int tg_check_view(const char *name, uint32_t i, const struct accel_tensor *t,
		  struct tm_layout *lay);
int tg_validate_op(uint32_t op, uint32_t nargs, const struct accel_tensor *const *t,
		   const struct tm_layout *const *lay, const uint32_t *access, uint64_t u0,
		   const char *name);

/* --- deps.c --- */
void tg_deps_begin(struct accel_tg *tg, uint32_t line, uint64_t id);
/* report of the TensorMap (tm_dep_fn) */
void tg_dep_cb(void *arg, uint64_t task, enum tm_dep_kind kind);
/*
 * Drop what completed; import the signals of the rest on device @devi
 * (cached). Sets deps.nwaits. 0 or -errno; nothing is written.
 */
int tg_deps_resolve(struct accel_tg *tg, uint32_t devi);
/* write deps.nwaits WAITs into reserved ring slots of queue line @l */
void tg_deps_emit(struct accel_tg *tg, struct tg_line *l);
/* commit the statistics of what was found */
void tg_deps_count(struct accel_tg *tg);
/*
 * The open map whose unmap value @value of @line waits for, or -1: a host
 * wait for it would wait for this thread. O(open maps).
 */
int tg_map_blocking(const struct accel_tg *tg, uint32_t line, uint64_t value);
/*
 * Work committed on @line from value @first with the dependencies of
 * tg->deps: it waits for every open map one of them waits for.
 */
void tg_deps_mark_blocked(struct accel_tg *tg, uint32_t line, uint64_t first);

/* --- outputs.c --- */
int tg_heap_get(struct accel_tg *tg, uint32_t devi, struct tg_heap **out);
/* the device whose output heap @buf is, or -1 */
int tg_heap_of(const struct accel_tg *tg, const struct accel_buffer *buf);
/*
 * Check a heap tensor argument (not OUTPUT_NEW): its block is live, its
 * generation matches (-ESTALE) and the program still holds it (-EINVAL).
 */
int tg_heap_check(struct accel_tg *tg, struct tg_arg *a, const char *name, uint32_t i);
/* place every OUTPUT_NEW argument (may wait for heap space); undone by tg_outputs_undo() */
int tg_outputs_place(struct accel_tg *tg, struct tg_task *tt, uint32_t devi);
void tg_outputs_undo(struct accel_tg *tg, struct tg_task *tt);
/* write the placed views into the program's tensors */
void tg_outputs_commit(struct tg_task *tt);
/* room for @n more holds on @l, so that tg_hold[s]_commit() cannot fail */
int tg_holds_room(struct tg_line *l, size_t n);
/* one hold of heap argument @a (held by the program or a graph) on @l */
void tg_hold_commit(struct accel_tg *tg, struct tg_line *l, uint64_t value,
		    const struct tg_arg *a);
void tg_holds_commit(struct accel_tg *tg, struct tg_line *l, const struct tg_task *tt,
		     uint64_t value);
void tg_retire_holds(struct accel_tg *tg);
/* drop every hold (recovery: the tasks were abandoned) */
void tg_holds_abandon(struct accel_tg *tg);
void tg_heaps_fini(struct accel_tg *tg);

/* --- submit.c --- */
/* lowering into tg->pk: packets, or -errno */
int tg_lower_eager(struct accel_tg *tg, struct tg_task *tt, struct tg_line *l, uint64_t value);

/* --- host.c --- */
/* does this thread run a host task of @tg (maybe under others)? */
bool tg_in_host_task(const struct accel_tg *tg);
void tg_run_host_tasks(struct accel_tg *tg, bool block);
void tg_host_free(struct tg_host *h);
void tg_host_queue(struct accel_tg *tg, struct list *batch);
void tg_bindings_put(struct accel_tg *tg, struct tg_bindings *b);
void tg_host_abandon(struct accel_tg *tg);
void tg_worker_stop(struct accel_tg *tg);
/*
 * Hold the worker (if one runs) between two host tasks, out of every wait
 * on the queues, until tg_worker_resume(); the caller holds no lock.
 */
void tg_worker_pause(struct accel_tg *tg);
void tg_worker_resume(struct accel_tg *tg);

/* --- wait.c --- */
/* @id has completed (its line's timeline reached it); inline: the TensorMap asks often */
static inline bool tg_id_done(struct accel_tg *tg, uint64_t id)
{
	int err;

	/* a dead or forked device reads 0: nothing is done (then waits find the fault) */
	return acc_ge(acc_signal_load(tg->lines[TG_ID_LINE(id)].sig, &err), TG_ID_VALUE(id));
}
/*
 * Wait until @id has completed, running ready host tasks meanwhile (unless
 * the worker does): 0, -ETIMEDOUT, -ECANCELED (aborted), -EIO (a queue of
 * the task graph faulted), -ENODEV. @what names it in the timeout message.
 */
int tg_wait_id(struct accel_tg *tg, uint64_t id, int64_t deadline, const char *what);
/*
 * Sleep until @id completes, the deadline passes or the task graph is
 * aborted (no fault check, no host tasks run): 0, -ETIMEDOUT, -ECANCELED,
 * -ENODEV. Any thread.
 */
int tg_sleep(struct accel_tg *tg, uint64_t id, int64_t deadline);
/* With ACCEL_TG_TRACE, wait until queue line @line's ring is drained (its end stamps written). */
int tg_trace_drain(struct accel_tg *tg, uint32_t line, int64_t deadline);
/* publish every queue's packets not yet published (a batch about to wait) */
void tg_flush(struct accel_tg *tg);
/* wait for @n free slots on a queue line, at most the timeout */
int tg_reserve(struct accel_tg *tg, struct tg_line *l, unsigned int n);
/* look at every queue of the task graph: 0, or the fault (logged once) */
int tg_check_faults(struct accel_tg *tg);

/* --- lower.c --- */
/*
 * A task's packets. @addr turns (buffer, byte offset) into a device
 * address for the packets; @desc places a MATMUL descriptor in device
 * memory and returns its address.
 */
struct tg_lower {
	struct accel_tg *tg;
	uint32_t devi;
	int (*addr)(struct tg_lower *lw, const struct tg_arg *a, uint64_t off, uint64_t *va);
	int (*desc)(struct tg_lower *lw, const struct drm_vaccel_matmul *m, uint64_t *va);
	void *priv;
};

/* @a: the task's arguments (views and registry entries) */
int tg_lower_task(struct tg_lower *lw, uint32_t op, const struct tg_arg *a, uint64_t u0,
		  struct drm_vaccel_packet *out, unsigned int max, const char *name);

/* --- capture.c --- */
int tg_capture_task(struct accel_tg *tg, struct tg_task *tt);
const char *tg_op_name(uint32_t op);
void tg_graph_put(struct accel_graph *g);
/* index of @buf in g->bufs, g->nbufs if the graph does not use it */
uint32_t tg_graph_buf_index(const struct accel_graph *g, const struct accel_buffer *buf);

/* --- instantiate.c --- */
/* free an executable without waiting (task graph teardown) */
void tg_exec_free(struct accel_graph_exec *ge);

/* --- trace.c --- */
int tg_trace_init(struct accel_tg *tg, struct tg_line *l);
void tg_trace_fini(struct tg_line *l);
/* the TIMESTAMP packet of record @value, @end 0 (start) or 1 (end) */
void tg_trace_stamp(const struct tg_line *l, uint64_t value, int end,
		    struct drm_vaccel_packet *p);
void tg_trace_note(struct tg_line *l, uint64_t value, uint64_t id, const char *name);
/* an executable goes: its launches' records keep only the launch slice */
void tg_trace_forget_exec(struct accel_tg *tg, const struct accel_graph_exec *ge);

/* --- submit.c: the commit stage, shared with coll_task.c (nothing in it fails) --- */
/* The ring record of the task at @value: slots [@first, the queue's pi) and its name. */
void tg_ring_rec_set(struct tg_line *l, uint64_t value, uint64_t first, const char *name);
/*
 * A task whose packets are in the ring: its views into the TensorMap (one
 * group), its heap holds and placed outputs, the statistics, the line's
 * next value.
 */
void tg_task_commit(struct accel_tg *tg, struct tg_line *l, struct tg_task *tt, uint64_t id,
		    uint64_t value);

/* --- coll_task.c: collectives as tasks --- */
/* tg_gtask.op of a collective: @arg its communicator, @u0 tg_coll_pack() */
#define TG_TASK_COLL		0x100u
bool tg_graph_has_coll(const struct accel_graph *g);
/* does graph @g hold heap block @block of device @devi (captured OUTPUT_NEW) */
bool tg_graph_pins(const struct accel_graph *g, uint32_t devi, uint64_t block);
/* accel_graph_instantiate() of a graph with collectives */
int tg_coll_instantiate(struct accel_graph *g, struct accel_graph_exec **out);
/*
 * accel_graph_launch() of such a graph: @act the buffers bound for it
 * (checked), @bindings and @n as the program passed them
 */
int tg_coll_launch(struct accel_graph_exec *ge, struct accel_buffer **act,
		   const struct accel_binding *bindings, unsigned int n);
/* a graph goes: its collective tasks' communicator references too */
void tg_coll_graph_free(struct accel_graph *g);

#endif /* ACCEL_GRAPH_TG_INTERNAL_H */
