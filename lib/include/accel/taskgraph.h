/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_TASKGRAPH_H
#define ACCEL_TASKGRAPH_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <accel/queue.h>
#include <accel/tensor.h>

#ifdef __cplusplus
extern "C" {
#endif

struct accel_device;
struct accel_buffer;

/**
 * DOC: task graph
 *
 * A &struct accel_tg runs *tasks* on the queues of one or more devices. A
 * task is a device operation (copy, fill, reduce, matmul, a modelled
 * kernel of a given run time) or a host function, with up to
 * ACCEL_TASK_MAX_ARGS tensor arguments, each declared ACCEL_INPUT,
 * ACCEL_OUTPUT, ACCEL_INOUT or ACCEL_OUTPUT_NEW. The library finds every
 * earlier task whose region overlaps an argument (the TensorMap: read after
 * write from every overlapping writer, write after read, write after
 * write), turns each dependency on another queue into one WAIT on that
 * queue's timeline signal, gives OUTPUT_NEW tensors memory from a ring heap
 * in device memory and reclaims it exactly.
 *
 * Eager mode: accel_tg_submit() puts the task on its queue at once. Graph
 * mode: between accel_tg_capture_begin() and accel_tg_capture_end() tasks
 * are recorded instead; accel_graph_instantiate() lowers them to one
 * sealed packet list per queue, and each accel_graph_launch() costs one
 * ring slot per queue, with the graph's buffers optionally replaced by
 * others for that launch (bindings).
 *
 * Threads: one thread at a time calls the functions of a task graph
 * (submission is single-producer, like a queue). Host tasks run on the
 * thread that waits (accel_tg_sync(), accel_tg_task_wait(), accel_tg_map())
 * or on the worker accel_tg_start_worker() starts. Every wait is bounded:
 * by its own timeout or by the task graph's @timeout_ns.
 */
struct accel_tg;
/** A captured graph (the tasks and their dependencies). */
struct accel_graph;
/** An instantiated graph: sealed per-queue packet lists, launchable. */
struct accel_graph_exec;

/* accel_tg_params.flags: record device timestamps of tasks (accel_tg_trace_write()) */
#define ACCEL_TG_TRACE		(1u << 0)

/**
 * struct accel_tg_params - how to create a task graph
 * @size: sizeof(struct accel_tg_params)
 * @queues_per_device: queues on each device; 0 means one per engine
 * @ring_size: packets per queue ring; 0 means 1024
 * @flags: ACCEL_TG_*
 * @heap_size: bytes of output heap per device (a multiple of 4096); 0
 *	means 16 MiB
 * @timeout_ns: the longest any internal wait (ring room, heap space, a
 *	dependency of a host task or map) lasts before the call fails with
 *	-ETIMEDOUT; 0 means 10 s, ACCEL_FOREVER none
 */
struct accel_tg_params {
	uint32_t size;
	uint32_t queues_per_device;
	uint32_t ring_size;
	uint32_t flags;
	uint64_t heap_size;
	int64_t timeout_ns;
};

/* Size in the first stable release (1.0): the smallest a caller passes. */
#define ACCEL_TG_PARAMS_SIZE_1_0	32

/**
 * accel_tg_create() - create a task graph over devices
 * @devs: @ndevs open devices (not owned; they must outlive the task graph)
 * @ndevs: 1 to ACCEL_TG_MAX_DEVICES
 * @params: NULL for the defaults
 * @out: the task graph
 *
 * Creates the queues and their timeline signals. The heap of a device is
 * created when its first OUTPUT_NEW tensor is.
 *
 * Return: 0; -EINVAL for bad parameters; as accel_queue_create(). Some
 * syscalls.
 */
int accel_tg_create(struct accel_device *const *devs, unsigned int ndevs,
		    const struct accel_tg_params *params, struct accel_tg **out);

#define ACCEL_TG_MAX_DEVICES	8

/**
 * accel_tg_destroy() - destroy a task graph
 * @tg: the task graph, or NULL
 *
 * Waits (at most the task graph's timeout) for submitted work, destroys
 * the graphs and executables still open on it, stops the worker, then
 * frees the queues, heaps and imports.
 */
void accel_tg_destroy(struct accel_tg *tg);

/** accel_tg_num_queues() - queues of device @dev (an index of the @devs given) */
unsigned int accel_tg_num_queues(const struct accel_tg *tg, unsigned int dev);

/**
 * accel_tg_queue() - a queue of the task graph
 * @tg: the task graph
 * @dev: device index
 * @queue: queue index on it
 *
 * For accel_queue_status() and accel_queue_describe() (a faulted task
 * graph says which queue, packet and address); do not submit to it.
 *
 * Return: the queue, or NULL for a bad index. No syscall.
 */
struct accel_queue *accel_tg_queue(const struct accel_tg *tg, unsigned int dev,
				   unsigned int queue);

#define ACCEL_TASK_MAX_ARGS	8

/**
 * struct accel_arg - a tensor argument of a task
 * @t: the view. For ACCEL_OUTPUT_NEW the caller sets dtype, ndims and
 *	shape; the library fills buf, offset and (contiguous) strides.
 * @access: enum accel_access
 */
struct accel_arg {
	struct accel_tensor *t;
	uint32_t access;
};

/**
 * enum accel_task_op - what a task does
 * @ACCEL_TASK_COPY: args[0] (OUTPUT) = args[1] (INPUT); same dtype size
 *	and shape, innermost stride 1 (or shape 1) in both
 * @ACCEL_TASK_FILL: every element of args[0] (any view) = the low bytes of
 *	@fill.pattern, as many as an element has
 * @ACCEL_TASK_REDUCE: args[0] = args[1] @reduce.op args[2] elementwise;
 *	contiguous views of one dtype (f32, f16, bf16, i32, i64, u8)
 * @ACCEL_TASK_MATMUL: args[0] (f32, m x n) (+)= args[1] (m x k) x args[2]
 *	(k x n); 2-D views with innermost stride 1; A and B f32, f16 or bf16
 * @ACCEL_TASK_DELAY: a modelled kernel: the queue is busy for
 *	@delay.ns; the arguments declare what it reads and writes
 * @ACCEL_TASK_HOST: @host.fn(@host.arg) on the host once every argument
 *	is ready; devices wait for its completion like for any task
 */
enum accel_task_op {
	ACCEL_TASK_COPY,
	ACCEL_TASK_FILL,
	ACCEL_TASK_REDUCE,
	ACCEL_TASK_MATMUL,
	ACCEL_TASK_DELAY,
	ACCEL_TASK_HOST,
};

/* accel_task.device / .queue: let the library choose */
#define ACCEL_TG_AUTO		0xffffffffu

/**
 * struct accel_task - a task to submit
 * @size: sizeof(struct accel_task), set by accel_task_init(): a task of a
 *	program built against an older release keeps working, one of a newer
 *	release is accepted if the fields this library does not know are zero
 *	(else -E2BIG)
 * @op: enum accel_task_op
 * @device: index of the device (in accel_tg_create()'s @devs), or
 *	ACCEL_TG_AUTO: the device of the first argument's buffer (device 0
 *	without one)
 * @queue: queue index on that device, or ACCEL_TG_AUTO: round-robin
 * @nargs: number of @args; those after the operands the op takes only
 *	declare more accesses (dependencies)
 * @args: the arguments
 * @name: shown in errors, DOT dumps and traces (not copied during eager
 *	submission; copied by capture); may be NULL
 * @fill: ACCEL_TASK_FILL: the pattern's low bytes (the dtype's size)
 * @reduce: ACCEL_TASK_REDUCE: DRM_VACCEL_REDOP_*
 * @matmul: ACCEL_TASK_MATMUL: @accumulate 1 for C += A x B (then args[0]
 *	should be INOUT)
 * @delay: ACCEL_TASK_DELAY: run time in ns, at most 1 s
 * @host: ACCEL_TASK_HOST: the function and its argument
 */
struct accel_task {
	uint32_t size;
	uint32_t op;
	uint32_t device;
	uint32_t queue;
	uint32_t nargs;
	struct accel_arg args[ACCEL_TASK_MAX_ARGS];
	const char *name;
	union {
		struct { uint64_t pattern; } fill;
		struct { uint32_t op; } reduce;
		struct { uint32_t accumulate; } matmul;
		struct { uint64_t ns; } delay;
		struct { void (*fn)(void *arg); void *arg; } host;
	};
};

/* Size in the first stable release (1.0): the smallest a caller passes. */
#define ACCEL_TASK_SIZE_1_0		176

/*
 * Prepare a task: all fields zeroed, @size sizeof(struct accel_task), device
 * and queue ACCEL_TG_AUTO. The task builders below and every other helper
 * are ACCEL_INLINE (<accel/version.h>): inline in C programs, and exported
 * by the library under the same names.
 */
ACCEL_INLINE void accel_task_init(struct accel_task *task, uint32_t op, const char *name)
{
	memset(task, 0, sizeof(*task));
	task->size = sizeof(*task);
	task->op = op;
	task->device = ACCEL_TG_AUTO;
	task->queue = ACCEL_TG_AUTO;
	task->name = name;
}

/** accel_task_arg() - append an argument; -E2BIG past ACCEL_TASK_MAX_ARGS */
ACCEL_INLINE int accel_task_arg(struct accel_task *task, struct accel_tensor *t,
				uint32_t access)
{
	if (task->nargs >= ACCEL_TASK_MAX_ARGS)
		return -E2BIG;
	task->args[task->nargs].t = t;
	task->args[task->nargs].access = access;
	task->nargs++;
	return 0;
}

/** accel_task_prep_copy() - dst = src */
ACCEL_INLINE void accel_task_prep_copy(struct accel_task *task, struct accel_tensor *dst,
				       struct accel_tensor *src, uint32_t dst_access)
{
	accel_task_init(task, ACCEL_TASK_COPY, "copy");
	accel_task_arg(task, dst, dst_access);
	accel_task_arg(task, src, ACCEL_INPUT);
}

/** accel_task_prep_fill() - every element of dst = pattern */
ACCEL_INLINE void accel_task_prep_fill(struct accel_task *task, struct accel_tensor *dst,
				       uint32_t dst_access, uint64_t pattern)
{
	accel_task_init(task, ACCEL_TASK_FILL, "fill");
	accel_task_arg(task, dst, dst_access);
	task->fill.pattern = pattern;
}

/** accel_task_prep_reduce() - dst = a op b (op: DRM_VACCEL_REDOP_*) */
ACCEL_INLINE void accel_task_prep_reduce(struct accel_task *task, struct accel_tensor *dst,
					 uint32_t dst_access, struct accel_tensor *a,
					 struct accel_tensor *b, uint32_t op)
{
	accel_task_init(task, ACCEL_TASK_REDUCE, "reduce");
	accel_task_arg(task, dst, dst_access);
	accel_task_arg(task, a, ACCEL_INPUT);
	accel_task_arg(task, b, ACCEL_INPUT);
	task->reduce.op = op;
}

/** accel_task_prep_matmul() - c = a x b, or c += a x b with @accumulate */
ACCEL_INLINE void accel_task_prep_matmul(struct accel_task *task, struct accel_tensor *c,
					 uint32_t c_access, struct accel_tensor *a,
					 struct accel_tensor *b, int accumulate)
{
	accel_task_init(task, ACCEL_TASK_MATMUL, "matmul");
	accel_task_arg(task, c, c_access);
	accel_task_arg(task, a, ACCEL_INPUT);
	accel_task_arg(task, b, ACCEL_INPUT);
	task->matmul.accumulate = !!accumulate;
}

/** accel_task_prep_delay() - a modelled kernel of @ns; add its arguments after */
ACCEL_INLINE void accel_task_prep_delay(struct accel_task *task, uint64_t ns)
{
	accel_task_init(task, ACCEL_TASK_DELAY, "delay");
	task->delay.ns = ns;
}

/** accel_task_prep_host() - @fn(@arg) on the host; add its arguments after */
ACCEL_INLINE void accel_task_prep_host(struct accel_task *task, void (*fn)(void *), void *arg)
{
	accel_task_init(task, ACCEL_TASK_HOST, "host");
	task->host.fn = fn;
	task->host.arg = arg;
}

/**
 * accel_tg_submit() - submit (eager) or record (capturing) a task
 * @tg: the task graph
 * @task: the task (accel_task_init() or a prep helper sets its size);
 *	OUTPUT_NEW arguments' tensors are filled in
 * @id: if not NULL, the task's id (for accel_tg_task_wait()); 0 while
 *	capturing; left alone on failure
 *
 * Eager: finds the dependencies, allocates OUTPUT_NEW memory (waiting for
 * heap space at most the timeout), writes the WAITs and the task's packets
 * into its queue's ring and publishes them (waiting for ring room at most
 * the timeout). A host task is queued and run when ready.
 *
 * A submission that fails changes nothing: no dependency is registered, no
 * heap block kept, no ring slot used, the program's tensors are untouched.
 *
 * Return: 0; -EINVAL for a bad task (size, op, argument count, access,
 * view, dtype, shape mismatch, overlapping COPY operands, an accumulating
 * MATMUL whose C is not INOUT; the log names the task and argument);
 * -ENOENT for a buffer of a device the task graph does not have; -EACCES
 * for a written argument in a buffer the device may not write (sealed,
 * device-read-only, a read-only import); -ESTALE for a heap tensor that
 * was released or whose block was reclaimed;
 * -E2BIG for a task needing more packets than its ring holds (at most
 * min(1024, ring size) packets, a strided view lowers to one per row), an
 * OUTPUT_NEW tensor larger than the output heap, or a @task of a newer
 * release with fields this one does not know set; -EDEADLK when heap space
 * can never come back (the log names the block and what holds it: an open
 * map of a heap tensor keeps its block until accel_tg_unmap()), or when
 * called from one of the task graph's own host tasks; -ETIMEDOUT;
 * -ECANCELED after accel_tg_abort(); -EIO after a fault of one of its
 * queues (accel_tg_status()); -ECHILD in a forked child; -EOVERFLOW when a
 * queue's timeline values are exhausted (2^48); -ENOMEM; -ENODEV. No
 * syscall on the usual path.
 */
int accel_tg_submit(struct accel_tg *tg, struct accel_task *task, uint64_t *id);

/**
 * accel_tg_submit_batch() - submit several tasks, one doorbell per queue
 * @tg: the task graph
 * @tasks: @n tasks, submitted in order (later ones depend on earlier ones
 *	like separate submissions)
 * @n: how many
 * @ids: if not NULL, @n ids (as accel_tg_submit())
 *
 * Each task is checked and committed as by accel_tg_submit(); the queues'
 * doorbells are rung once at the end (or before any wait for room). A task
 * that fails stops the batch: the ones before it stay submitted.
 *
 * Return: the number of tasks submitted (@n when all were), or, when the
 * first one failed, its error as accel_tg_submit().
 */
int accel_tg_submit_batch(struct accel_tg *tg, struct accel_task *const *tasks, unsigned int n,
			  uint64_t *ids);

/**
 * accel_tg_release() - give up an OUTPUT_NEW tensor
 * @tg: the task graph
 * @t: the tensor as filled by accel_tg_submit() (any view of its block)
 *
 * Its heap block is reclaimed once every task that read or wrote it has
 * completed and every map of it is unmapped (or, for a graph's tensor,
 * when the graph is destroyed). Releasing a tensor that is mapped is
 * allowed: the host pointer stays valid until accel_tg_unmap().
 *
 * Return: 0; -ENOENT if @t is not a view of the task graph's output heap;
 * -EINVAL if it was already released (its block still in use) or carries
 * no generation (a view must be derived from the tensor accel_tg_submit()
 * filled: slice, permute, transpose, reshape keep the generation);
 * -ESTALE if its block was reclaimed since (the memory may belong to
 * another tensor now: nothing is freed). No syscall.
 */
int accel_tg_release(struct accel_tg *tg, const struct accel_tensor *t);

/**
 * accel_tg_task_done() - has a task completed
 * Return: 1, 0, or -EINVAL for an id never returned. No syscall.
 */
int accel_tg_task_done(struct accel_tg *tg, uint64_t id);

/**
 * accel_tg_task_wait() - wait until a task has completed
 * @tg: the task graph
 * @id: from accel_tg_submit()
 * @timeout_ns: relative, or ACCEL_FOREVER (still bounded by a fault)
 *
 * Runs ready host tasks meanwhile (unless a worker does).
 *
 * Return: 0; -ETIMEDOUT; -EIO when a queue of the task graph faulted (the
 * task graph's own queues only: a fault of another queue on the same device
 * does not end the wait); -ECANCELED after accel_tg_abort(); -EINVAL for an
 * id never handed out; -EDEADLK from a host task of the same task graph;
 * -ENODEV. May sleep.
 */
int accel_tg_task_wait(struct accel_tg *tg, uint64_t id, int64_t timeout_ns);

/**
 * accel_tg_sync() - wait until everything submitted has completed
 * @tg: the task graph
 * @timeout_ns: relative, or ACCEL_FOREVER
 *
 * Return: as accel_tg_task_wait(). May sleep.
 */
int accel_tg_sync(struct accel_tg *tg, int64_t timeout_ns);

/**
 * accel_tg_start_worker() - run host tasks on a thread of the library's
 * @tg: the task graph
 *
 * Return: 0, -EBUSY if one runs, -ENOMEM (no thread could be created). The
 * worker stops in accel_tg_destroy().
 */
int accel_tg_start_worker(struct accel_tg *tg);

/**
 * accel_tg_host_buffer() - inside a host task: the buffer bound for its launch
 * @captured: a buffer the captured graph uses
 *
 * A host task of a graph launch may read or write the graph's buffers; a
 * launch may bind others in their place (struct accel_binding). Called
 * from within the host task, this returns the buffer that stands for
 * @captured in the launch that runs it (@captured itself when it is not
 * rebound, when the task is an eager one, or outside a host task). No
 * syscall.
 */
struct accel_buffer *accel_tg_host_buffer(struct accel_buffer *captured);

#define ACCEL_MAP_READ		(1u << 0)
#define ACCEL_MAP_WRITE		(1u << 1)

/**
 * accel_tg_map() - access a tensor from the host
 * @tg: the task graph
 * @t: the tensor
 * @flags: ACCEL_MAP_READ and/or ACCEL_MAP_WRITE
 * @timeout_ns: relative, or ACCEL_FOREVER
 * @ptr: the host address of element (0, ..., 0)
 *
 * Waits for the tasks that write @t (READ), and also for those that read
 * it (WRITE): exactly the overlapping ones, nothing else. Until
 * accel_tg_unmap(), tasks submitted later that write @t (and, for WRITE,
 * read it) wait for the unmap: the host's access is ordered before them.
 * A map of a heap tensor keeps its block like a task does: released
 * meanwhile, it comes back only after the unmap.
 *
 * Return: 0; -EINVAL (flags, view); -ENOENT for a buffer of a device the
 * task graph does not have; -EACCES for ACCEL_MAP_WRITE of a sealed or
 * read-only buffer; -ESTALE for a released heap tensor; -EBUSY with
 * ACCEL_TG_MAX_MAPS maps open; -EDEADLK when it would wait for another
 * open map of the task graph (unmap that one first: only this thread
 * could); -ETIMEDOUT; -EIO; -ECANCELED; -ENOMEM (RLIMIT_MEMLOCK, the host
 * mapping pins the buffer). May sleep.
 */
int accel_tg_map(struct accel_tg *tg, const struct accel_tensor *t, uint32_t flags,
		 int64_t timeout_ns, void **ptr);

#define ACCEL_TG_MAX_MAPS	32

/**
 * accel_tg_unmap() - end a host access
 * @tg: the task graph
 * @ptr: as returned by accel_tg_map()
 *
 * Return: 0, -EINVAL for NULL, -ENOENT for a pointer that is not mapped.
 * One syscall.
 */
int accel_tg_unmap(struct accel_tg *tg, void *ptr);

/**
 * accel_tg_capture_begin() - record tasks instead of running them
 * Return: 0, -EBUSY if already capturing. No syscall.
 */
int accel_tg_capture_begin(struct accel_tg *tg);

/**
 * accel_tg_capture_end() - stop recording
 * @tg: the task graph
 * @out: the graph of the tasks submitted since accel_tg_capture_begin()
 *
 * Return: 0; -EINVAL if not capturing; -ENOMEM. No syscall.
 */
int accel_tg_capture_end(struct accel_tg *tg, struct accel_graph **out);

/**
 * accel_graph_destroy() - free a captured graph
 * @g: the graph, or NULL
 *
 * Instantiated graphs keep what they need. OUTPUT_NEW tensors of the
 * capture are freed once neither the graph nor an instantiation holds
 * them.
 */
void accel_graph_destroy(struct accel_graph *g);

/** accel_graph_num_tasks() - tasks recorded in @g */
unsigned int accel_graph_num_tasks(const struct accel_graph *g);

/**
 * accel_graph_dot() - write the graph in Graphviz DOT
 * @g: the graph
 * @f: the stream
 *
 * One node per task (name, op, queue), one per buffer region, edges from
 * each task to the tensors it writes and from each tensor to the tasks
 * that read it, and task-to-task edges labelled RAW, WAR or WAW.
 *
 * Return: 0, or -EIO if writing failed.
 */
int accel_graph_dot(const struct accel_graph *g, FILE *f);

/**
 * accel_graph_instantiate() - lower a graph to sealed packet lists
 * @g: the graph
 * @out: the executable graph
 *
 * One persistent, sealed buffer per queue holds its tasks' packets, the
 * WAITs between queues and the epoch-relative timeline SIGNALs. Every
 * buffer the graph uses gets an entry in the EXEC binding table (at most
 * DRM_VACCEL_EXEC_MAX_BINDINGS; later ones are addressed directly and
 * cannot be rebound). The executable holds a reference on each buffer
 * until it is destroyed.
 *
 * A graph with collective tasks (accel_tg_allreduce() and the others,
 * <accel/comm.h>) is not lowered: each launch submits its tasks again, in
 * capture order, with the launch's bindings (any of its buffers may be
 * rebound), so that every collective takes a new sequence number; its
 * host tasks and output heap tensors behave as in a sealed graph
 * (libaccel 1.7; before, such a graph with either was -EOPNOTSUPP).
 *
 * Return: 0; -EINVAL for an empty graph; -ENOMEM; as
 * accel_buffer_create(). Some syscalls.
 */
int accel_graph_instantiate(struct accel_graph *g, struct accel_graph_exec **out);

/**
 * accel_graph_exec_destroy() - free an executable graph
 * @ge: the executable, or NULL
 *
 * Waits (at most the task graph's timeout) for its launches to complete,
 * then drops its buffer references.
 */
void accel_graph_exec_destroy(struct accel_graph_exec *ge);

/**
 * struct accel_binding - replace a buffer for one launch
 * @from: a buffer the captured graph uses
 * @to: the buffer used instead, of the same device and at least as large
 *	as the graph's use of @from
 */
struct accel_binding {
	struct accel_buffer *from;
	struct accel_buffer *to;
};

/**
 * accel_graph_launch() - run an executable graph once
 * @ge: the executable
 * @bindings: @n replacements for this launch (NULL if @n is 0)
 * @n: 0 to DRM_VACCEL_EXEC_MAX_BINDINGS
 *
 * Per queue of the graph: the WAITs on earlier work that overlaps what the
 * graph accesses, then one EXEC (one ring slot) with this launch's epoch
 * and binding table. Later tasks depend on the launch like on any task.
 *
 * Return: 0; -EINVAL (a @from the graph does not use or cannot rebind, a
 * @to too small, of another device or an output heap, two bindings of one
 * @from, two of the graph's buffers bound to one buffer); -EACCES (a @to
 * the device may not write for a buffer the graph writes); -EBUSY while
 * capturing; -EAGAIN (a graph with collectives: one of its calls would be
 * more than 256 calls ahead of the slowest rank of its communicator;
 * nothing issued, <accel/comm.h>); -ETIMEDOUT (ring room, a binding table
 * slot); -EIO;
 * -ECANCELED; -EDEADLK from a host task of the task graph; -ENODEV. No
 * syscall on the usual path.
 */
int accel_graph_launch(struct accel_graph_exec *ge, const struct accel_binding *bindings,
		       unsigned int n);

/**
 * accel_graph_exec_wait() - wait for the last launch of @ge
 * Return: as accel_tg_task_wait(). May sleep.
 */
int accel_graph_exec_wait(struct accel_graph_exec *ge, int64_t timeout_ns);

/**
 * struct accel_tg_stats - what a task graph did
 * @size: in: sizeof(struct accel_tg_stats) as the program knows it (at
 *	least the first release's); out: unchanged
 * @tasks: tasks submitted eagerly (device and host; the tasks of graph
 *	launches are not counted here, nor in @deps, @waits or the stalls:
 *	the statistics count eager work, and launches as launches)
 * @host_tasks: host tasks run (a host task seen done is counted)
 * @captured: tasks recorded in graphs
 * @launches: graph launches
 * @deps: dependencies found, by kind (RAW, WAR, WAW)
 * @deps_same_queue: of which on the same queue (free: the queue is in order)
 * @waits: WAIT packets written (cross-queue, cross-device and host deps,
 *	after collapsing several producers of one queue to the latest)
 * @fallbacks: overlap decisions made by the conservative byte-hull test
 * @capped: of which because an exact decision would have taken too many
 *	steps (two strided views with very many blocks)
 * @tm_live: TensorMap entries alive now
 * @tm_max_live: the most there have been
 * @heap_used: output heap bytes in use now (all devices)
 * @heap_high_water: the most at any time on one device
 * @heap_allocs: OUTPUT_NEW allocations
 * @heap_reclaimed: blocks reclaimed
 * @stall_ring: submissions that waited for ring room
 * @stall_heap: allocations that waited for heap space
 * @stall_map: maps that waited for tasks
 * @buffers: buffers the task graph keeps an index of now (those the
 *	program destroyed go once their last uses completed)
 */
struct accel_tg_stats {
	uint32_t size;
	uint32_t pad;
	uint64_t tasks, host_tasks, captured, launches;
	uint64_t deps[3];
	uint64_t deps_same_queue;
	uint64_t waits;
	uint64_t fallbacks, capped;
	uint64_t tm_live, tm_max_live;
	uint64_t heap_used, heap_high_water, heap_allocs, heap_reclaimed;
	uint64_t stall_ring, stall_heap, stall_map;
	uint64_t buffers;
};

/**
 * accel_tg_get_stats() - a snapshot of the statistics
 * @tg: the task graph
 * @st: filled; the caller sets @st->size first
 *
 * Return: 0, or -EINVAL for NULL or a size below the first release's. No
 * syscall.
 */
int accel_tg_get_stats(const struct accel_tg *tg, struct accel_tg_stats *st);

/**
 * struct accel_tg_status - why a task graph stopped
 * @size: in: sizeof(struct accel_tg_status) as the program knows it (at
 *	least the first release's); out: unchanged
 * @error: 0 (running), -EIO (a queue faulted), -ECANCELED (aborted),
 *	-ENODEV (a device was removed)
 * @device: the faulted queue's device (an index of the task graph's)
 * @queue: and its queue index on that device
 * @graph_task: inside a graph launch, the index of the graph's task whose
 *	packet faulted (UINT32_MAX: not in a launch, or not known)
 * @task: the id of the task (or launch) whose packet faulted, 0 if not known
 * @task_name: its name, or that of the graph's task
 * @fault: the queue's fault record (code, ring index, packet, address, EXEC
 *	depth)
 */
struct accel_tg_status {
	uint32_t size;
	int32_t error;
	uint32_t device, queue;
	uint32_t graph_task;
	uint32_t pad;
	uint64_t task;
	char task_name[32];
	struct accel_queue_fault fault;
};

/**
 * accel_tg_status() - is the task graph running, and if not, why
 * @tg: the task graph
 * @st: filled; the caller sets @st->size first
 *
 * Reads the queues' control pages (no syscall). The first time a fault is
 * seen it is also logged with the task's name.
 *
 * Return: @st->error (0: running), or -EINVAL for NULL or a too small size.
 */
int accel_tg_status(struct accel_tg *tg, struct accel_tg_status *st);

/**
 * accel_tg_abort() - make every wait of the task graph return now
 * @tg: the task graph
 *
 * From any thread, and from a signal handler (one atomic store and one
 * SIGNAL_WRITE ioctl per device, nothing else): every host wait of the
 * task graph (task waits, sync, maps, waits for ring room or heap space,
 * the worker's) returns -ECANCELED within a few milliseconds, and every
 * later call that submits or waits fails with -ECANCELED until
 * accel_tg_recover(). Work already on the devices is not stopped (a
 * recovery does that).
 *
 * Return: 0, -EINVAL for NULL.
 */
int accel_tg_abort(struct accel_tg *tg);

/**
 * accel_tg_recover() - abandon the in-flight work and start again
 * @tg: the task graph, stopped by a fault or an abort (or not)
 *
 * Replaces every queue of the task graph by a new one (the old ones stop;
 * their work and host tasks not yet run are abandoned), counts the
 * abandoned work as done on every timeline (so nothing waits for it),
 * empties the dependency state and lets the heap take back what in-flight
 * tasks held. Buffers, heap tensors the program holds, graphs and
 * executables stay usable. The new queues are made first: a recovery that
 * fails changes nothing.
 *
 * Return: 0; -EBUSY while a map is open; as accel_queue_create(). Some
 * syscalls.
 */
int accel_tg_recover(struct accel_tg *tg);

/**
 * accel_tg_trace_write() - Chrome/Perfetto trace of executed tasks
 * @tg: a task graph created with ACCEL_TG_TRACE
 * @f: the stream (JSON, the Trace Event Format)
 *
 * One track per queue (and one for host tasks); a slice per completed
 * eager task, per graph launch on each queue and per task of a launch,
 * with device timestamps (TIMESTAMP packets around the work). A launch's
 * tasks are there while its executable exists and fewer than 64 later
 * launches of it have run (their timestamps take turns in 64 slots), and
 * if the binding table has an entry free for them. Completed records are
 * written and forgotten; work still running is left for a later call.
 * After accel_tg_sync() or accel_graph_exec_wait(), which with
 * ACCEL_TG_TRACE also wait for the trailing end stamps, the work they
 * waited for is all there.
 *
 * Return: the number of slices written; -EINVAL without ACCEL_TG_TRACE;
 * -EIO if writing failed.
 */
int accel_tg_trace_write(struct accel_tg *tg, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_TASKGRAPH_H */
