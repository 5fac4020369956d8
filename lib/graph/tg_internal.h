/* SPDX-License-Identifier: MIT */
/*
 * The task graph's private declarations (taskgraph.c, lower.c, graph.c,
 * trace.c).
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
 * order) and each host map slot. A line is a signal that only grows; work
 * on the line n values after its base completes when the signal reaches
 * base + n.
 *
 * A task id is (line << 48 | n): the TensorMap stores ids, and "is this
 * task complete" or "wait for this task" needs nothing but the id.
 */
#define TG_REL_BITS	48
#define TG_REL_MASK	((1ull << TG_REL_BITS) - 1)
#define TG_ID(line, rel)	((uint64_t)(line) << TG_REL_BITS | (rel))
#define TG_ID_LINE(id)		((uint32_t)((id) >> TG_REL_BITS))
#define TG_ID_REL(id)		((id) & TG_REL_MASK)

#define TG_TRACE_SLOTS		4096u	/* trace records per line */
#define TG_DESC_SLOTS		256u	/* eager MATMUL descriptors per queue line */
#define TG_MAX_TASK_PACKETS	1024u	/* packets one task may lower to */
#define TG_NAME_LEN		32u

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

struct tg_line {
	enum tg_line_kind kind;
	uint32_t devi;			/* device of the queue / of the signal */
	uint32_t qi;			/* queue index on its device */
	struct accel_queue *q;		/* TG_LINE_QUEUE */
	struct accel_signal *sig;
	uint64_t base;			/* value of relative 0 */
	uint64_t next;			/* next absolute value to hand out */
	uint64_t va_on[ACCEL_TG_MAX_DEVICES];	/* sig's address on each device, 0: unknown */
	/* heap holds of eager tasks, in value order (the line completes in order) */
	struct tg_hold *holds;
	size_t hhead, htail, hcap;
	/* TG_LINE_QUEUE: eager MATMUL descriptors, TG_DESC_SLOTS of 64 bytes */
	struct accel_buffer *desc;
	/* ACCEL_TG_TRACE: device timestamps (2 per record) and the records */
	struct accel_buffer *tsbuf;
	struct tg_trace_rec *trace;
};

/* a buffer the task graph has indexed: holds a reference, caches imports */
struct tg_buf {
	struct accel_buffer *buf;	/* NULL: empty slot */
	struct accel_buffer *import[ACCEL_TG_MAX_DEVICES];
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
	char name[TG_NAME_LEN];
};

struct tg_map {
	void *ptr;			/* NULL: slot free */
	uint64_t value;
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
	struct tensormap *tm;
	struct tg_heap heaps[ACCEL_TG_MAX_DEVICES];
	struct tg_buf *bufs;
	uint32_t bcap, nbufs;
	uint64_t submits_since_sweep;
	/* dependency collection: per line the latest value needed */
	uint64_t *need;
	uint32_t *touched, ntouched;
	uint64_t cur_id;
	uint32_t cur_line;
	/* host tasks: list and worker, under host_lock */
	pthread_mutex_t host_lock;
	pthread_cond_t host_cond;
	struct list host_pending;
	pthread_t worker;
	bool worker_running, worker_stop;
	struct tg_map maps[ACCEL_TG_MAX_MAPS];
	struct accel_graph *capture;
	struct list graphs, execs;
	struct accel_tg_stats st;
	_Atomic uint64_t host_tasks_run;
};

/* A recorded task (graph mode): everything by value. */
struct tg_gtask {
	uint32_t op;
	uint32_t line;
	uint32_t nargs;
	uint32_t point;			/* index of its timeline point on its line */
	struct accel_tensor t[ACCEL_TASK_MAX_ARGS];
	uint32_t access[ACCEL_TASK_MAX_ARGS];
	uint64_t u0;			/* pattern, redop, accumulate, ns */
	void (*fn)(void *arg);		/* host tasks */
	void *arg;
	char name[TG_NAME_LEN];
	uint32_t ndeps, depcap;
	struct tg_gdep *deps;
};

struct tg_gdep {
	uint32_t task;			/* index in the graph */
	uint32_t kind;			/* TM_DEP_* */
};

struct accel_graph {
	struct accel_tg *tg;
	struct list node;		/* tg->graphs */
	unsigned int refs;		/* the program's + one per exec */
	bool destroyed;
	struct tg_gtask *tasks;
	uint32_t ntasks, tcap;
	struct tensormap *tm;		/* capture-local dependencies */
	/* distinct buffers, a reference each, and the end of the graph's use */
	struct tg_gbuf { struct accel_buffer *buf; uint64_t hi; } *bufs;
	uint32_t nbufs, bufcap;
	struct { uint32_t devi; uint64_t block; } *pins;
	uint32_t npins, pincap;
};

/* per (buffer, line) of an executable: the hull of what the line's tasks touch */
struct tg_summary {
	uint32_t line;
	uint32_t buf;			/* index in graph->bufs */
	uint64_t lo, hi;
	bool write, read;
};

struct tg_exec_line {
	uint32_t line;
	uint32_t npoints;
	uint64_t npk;
	struct accel_buffer *body;
	uint64_t last_value;		/* absolute value of the last launch's end, 0: none */
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
	/*
	 * ACCEL_TG_TRACE: binding entry @trace_bind (-1: none, the table is
	 * full) points each launch at its slot of @tstamps, where the lists
	 * store a TIMESTAMP before and after each task: TG_TABLES slots of
	 * ntasks x 2 u64 per device.
	 */
	int32_t trace_bind;
	struct accel_buffer *tstamps[ACCEL_TG_MAX_DEVICES];
};

/* taskgraph.c */
bool tg_id_done(struct accel_tg *tg, uint64_t id);
uint64_t tg_value(const struct accel_tg *tg, uint64_t id);
int tg_wait_id(struct accel_tg *tg, uint64_t id, int64_t deadline, const char *what);
int tg_line_va(struct accel_tg *tg, uint32_t line, uint32_t devi, uint64_t *va);
int tg_buf_va(struct accel_tg *tg, struct accel_buffer *buf, uint32_t devi, uint64_t *va);
int tg_buf_index(struct accel_tg *tg, struct accel_buffer *buf);
void tg_buffer_get(struct accel_buffer *buf);
int tg_devi_of(const struct accel_tg *tg, const struct accel_device *dev);
/* @lay: if not NULL, the layouts of the arguments not OUTPUT_NEW */
int tg_check_task(struct accel_tg *tg, const struct accel_task *task, uint32_t *line,
		  struct tm_layout *lay);
int tg_alloc_outputs(struct accel_tg *tg, struct accel_task *task, uint32_t devi);
void tg_deps_begin(struct accel_tg *tg, uint32_t line, uint64_t id);
int tg_deps_arg(struct accel_tg *tg, struct tensormap *tm, const struct accel_tensor *t,
		uint32_t access);
int tg_reserve(struct accel_tg *tg, struct tg_line *l, unsigned int n);
/* the WAITs collected since tg_deps_begin(): count and resolve, then write */
int tg_prepare_waits(struct accel_tg *tg, struct tg_line *l);
void tg_emit_waits(struct accel_tg *tg, struct tg_line *l);
int tg_heap_block(struct accel_tg *tg, const struct accel_tensor *t, uint32_t *devi,
		  uint64_t *block);
/* the device whose output heap @buf is, or -1 */
int tg_heap_of(const struct accel_tg *tg, const struct accel_buffer *buf);
/*
 * Room for @need elements of @size bytes in @arr, whose capacity *@cap
 * doubles from @min: the (maybe moved) array, or NULL (then @arr is
 * unchanged and still owned by the caller).
 */
void *tg_grow(void *arr, uint32_t *cap, uint32_t need, size_t size, uint32_t min);
void tg_retire_holds(struct accel_tg *tg);
void tg_run_host_tasks(struct accel_tg *tg, bool block);

/*
 * lower.c: a task's packets. @addr turns (buffer, byte offset) into a
 * device address for the packets; @desc places a MATMUL descriptor in
 * device memory and returns its address.
 */
struct tg_lower {
	struct accel_tg *tg;
	uint32_t devi;
	int (*addr)(struct tg_lower *lw, struct accel_buffer *buf, uint64_t off, uint64_t *va);
	int (*desc)(struct tg_lower *lw, const struct drm_vaccel_matmul *m, uint64_t *va);
	void *priv;
};

int tg_lower_task(struct tg_lower *lw, uint32_t op, struct accel_tensor *const *t, uint64_t u0,
		  struct drm_vaccel_packet *out, unsigned int max, const char *name);
int tg_validate_op(uint32_t op, uint32_t nargs, const struct accel_tensor *const *t,
		   const uint32_t *access, uint64_t u0, const char *name);

/* graph.c */
int tg_capture_task(struct accel_tg *tg, struct accel_task *task, uint32_t line);
void tg_graph_put(struct accel_graph *g);

/* trace.c */
int tg_trace_init(struct accel_tg *tg, struct tg_line *l);
void tg_trace_fini(struct tg_line *l);
/* the TIMESTAMP packet of record @value, @end 0 (start) or 1 (end) */
void tg_trace_stamp(const struct tg_line *l, uint64_t value, int end,
		    struct drm_vaccel_packet *p);
void tg_trace_note(struct tg_line *l, uint64_t value, uint64_t id, const char *name);
/* an executable goes: its launches' records keep only the launch slice */
void tg_trace_forget_exec(struct accel_tg *tg, const struct accel_graph_exec *ge);

#endif /* ACCEL_GRAPH_TG_INTERNAL_H */
