/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_COMM_H
#define ACCEL_COMM_H

#include <stddef.h>
#include <stdint.h>

#include <drm/vaccel_accel.h>

#include <accel/tensor.h>

#ifdef __cplusplus
extern "C" {
#endif

struct accel_device;
struct accel_queue;
struct accel_event;

/**
 * DOC: collectives
 *
 * A &struct accel_comm is one rank of a communicator: a group of ranks,
 * each on its own device, that run collective operations together
 * (NCCL's shape). accel_comm_init_all() makes a communicator of several
 * devices in one process, one rank per device.
 *
 * Operations take NCCL's argument order, ``(send, recv, count, dtype,
 * [op], [root], comm, queue, event)``: @send and @recv are device
 * addresses in the rank's device, the call appends the operation's
 * packets to @queue (a queue of the rank's device) and returns an event
 * that is done when the rank's part is. A call never waits for its
 * peers: one thread may issue rank 0, 1, ..., N-1 of a communicator in
 * turn, with no group call. The operations of one rank run in the order
 * they were called, on whichever queues (a call on another queue than
 * the rank's previous one first makes that queue wait for the previous
 * operation).
 *
 * Every call takes the communicator's next 64-bit sequence number and
 * publishes what it is (operation, dtype, count, reduction, root,
 * in-place); no data moves until every rank has called that sequence
 * number with the same description. A mismatch fails the operation on
 * every rank with -EPROTO. Every device wait carries the communicator's
 * timeout, so no rank waits for ever on a peer; so does a call's wait for
 * a multi-process communicator's shared lock (-ETIMEDOUT at the call,
 * naming the process that holds it: one stopped inside the library).
 *
 * Errors at the call are -errno and change nothing (the sequence number
 * is not taken). Errors of the work itself (a timeout, an abort, a
 * mismatch found by a later rank) fail the event: accel_comm_wait()
 * returns their code, accel_comm_get_async_error() describes them. They
 * are sticky: the communicator is then good only for destroy, and the
 * queue that ran the failed operation is stopped (it faulted, -EIO):
 * destroy it too.
 *
 * Thread safety: a rank is used by one thread at a time (as a queue);
 * different ranks of a communicator may be used from different threads.
 * accel_comm_abort() and accel_comm_get_async_error() may be called from
 * any thread at any time.
 */
struct accel_comm;

/**
 * enum accel_redop - reductions
 * @ACCEL_REDOP_SUM: a + b
 * @ACCEL_REDOP_PROD: a * b
 * @ACCEL_REDOP_MIN: the smaller
 * @ACCEL_REDOP_MAX: the larger
 * @ACCEL_REDOP_AVG: the sum divided by the number of ranks (floating
 *	point types only: the sum is multiplied by 1/nranks rounded to the
 *	dtype; integer types are -EINVAL)
 * @ACCEL_REDOP_COUNT: the number of reductions
 *
 * SUM to MAX are the device's DRM_VACCEL_REDOP_* values.
 */
enum accel_redop {
	ACCEL_REDOP_SUM = DRM_VACCEL_REDOP_SUM,
	ACCEL_REDOP_PROD = DRM_VACCEL_REDOP_PROD,
	ACCEL_REDOP_MIN = DRM_VACCEL_REDOP_MIN,
	ACCEL_REDOP_MAX = DRM_VACCEL_REDOP_MAX,
	ACCEL_REDOP_AVG,
	ACCEL_REDOP_COUNT,
};

/**
 * enum accel_comm_algo - how an operation moves data
 * @ACCEL_COMM_ALGO_AUTO: chosen per call from the operation, dtype, count,
 *	number of ranks and the communicator's settings (the same choice on
 *	every rank)
 * @ACCEL_COMM_ALGO_RING: a pipelined ring (reduce-scatter then allgather
 *	for allreduce; a chain for broadcast and reduce)
 * @ACCEL_COMM_ALGO_ONESHOT: direct: each rank writes its data into every
 *	peer that needs it, and reduces locally in rank order
 */
enum accel_comm_algo {
	ACCEL_COMM_ALGO_AUTO,
	ACCEL_COMM_ALGO_RING,
	ACCEL_COMM_ALGO_ONESHOT,
};

/**
 * enum accel_comm_op - the collective operations (for error reports)
 * @ACCEL_COMM_OP_NONE: no operation
 * @ACCEL_COMM_OP_ALLREDUCE: accel_allreduce()
 * @ACCEL_COMM_OP_REDUCE: accel_reduce()
 * @ACCEL_COMM_OP_BROADCAST: accel_broadcast()
 * @ACCEL_COMM_OP_ALLGATHER: accel_allgather()
 * @ACCEL_COMM_OP_REDUCESCATTER: accel_reducescatter()
 * @ACCEL_COMM_OP_ALLTOALL: accel_alltoall()
 * @ACCEL_COMM_OP_BARRIER: accel_barrier()
 * @ACCEL_COMM_OP_ALLTOALLV: accel_alltoallv()
 * @ACCEL_COMM_OP_SEND: accel_send()
 * @ACCEL_COMM_OP_RECV: accel_recv()
 * @ACCEL_COMM_OP_SPLIT: accel_comm_split() (libaccel 1.7: it takes a
 *	sequence number of the communicator it splits, as every call does)
 */
enum accel_comm_op {
	ACCEL_COMM_OP_NONE,
	ACCEL_COMM_OP_ALLREDUCE,
	ACCEL_COMM_OP_REDUCE,
	ACCEL_COMM_OP_BROADCAST,
	ACCEL_COMM_OP_ALLGATHER,
	ACCEL_COMM_OP_REDUCESCATTER,
	ACCEL_COMM_OP_ALLTOALL,
	ACCEL_COMM_OP_BARRIER,
	/* libaccel 1.3 */
	ACCEL_COMM_OP_ALLTOALLV,
	ACCEL_COMM_OP_SEND,
	ACCEL_COMM_OP_RECV,
	/* libaccel 1.7 */
	ACCEL_COMM_OP_SPLIT,
};

/**
 * struct accel_comm_params - settings of a communicator
 * @size: sizeof(struct accel_comm_params) as the program knows it (the
 *	rule of <accel/accel.h>: at least %ACCEL_COMM_PARAMS_SIZE_1_2; a
 *	larger structure's fields unknown to this library must be zero)
 * @algo: &enum accel_comm_algo; AUTO takes the environment's ACCEL_ALGO
 *	("ring" or "oneshot") if set, else chooses per call
 * @timeout_ms: how long any device wait of an operation may last before
 *	it fails the operation with -ETIMEDOUT; 0: the environment's
 *	ACCEL_COMM_TIMEOUT_MS, else 10000
 * @chunk_bytes: bytes of one staging slot (the pipelining unit), a
 *	multiple of 4096 from 4096 to 64 MiB; 0: 1 MiB (512 KiB before 1.6)
 * @slots: staging slots per channel, 2 to 16; 0: 3 (2 before 1.6); the
 *	ring works on slots - 1 chunks of each block at once
 * @flags: zero
 * @oneshot_max: AUTO picks the one-shot algorithm for operations of at
 *	most this many bytes per rank (count times the element size), else
 *	the ring; 0: 64 KiB
 * @recorder_ops: (1.3) operations the flight recorder keeps per rank, 1
 *	to 65536; 0: the environment's ACCEL_COMM_RECORDER_OPS if set (0
 *	there turns the recorder off), else 256; %ACCEL_COMM_RECORDER_OFF:
 *	no recorder. No memory for it fails the init (-ENOMEM, every rank)
 * @reserved32: zero
 * @trace_dir: (1.3) the directory the flight recorder is written to when
 *	the communicator fails (timeout, abort, mismatch); NULL: the
 *	environment's ACCEL_COMM_TRACE_DIR, else none (the failure log says
 *	the recorder was not written). Copied at init.
 * @trace_dir_u64: the same 8 bytes as @trace_dir, whatever the pointer size
 * @reserved: zero
 *
 * The 1.3 fields took the place of 1.2's reserved words: a 1.2 library
 * rejects them when not zero.
 */
struct accel_comm_params {
	uint32_t size;
	uint32_t algo;
	uint32_t timeout_ms;
	uint32_t chunk_bytes;
	uint32_t slots;
	uint32_t flags;
	uint64_t oneshot_max;
	uint32_t recorder_ops;
	uint32_t reserved32;
	union {
		const char *trace_dir;
		uint64_t trace_dir_u64;
	};
	uint64_t reserved[2];
};

/* accel_comm_params.recorder_ops: no flight recorder */
#define ACCEL_COMM_RECORDER_OFF		0xffffffffu
/* The most operations the flight recorder keeps per rank */
#define ACCEL_COMM_RECORDER_MAX		65536u

/* Size in the release that added it (1.2): the smallest a caller passes. */
#define ACCEL_COMM_PARAMS_SIZE_1_2	64

/* Ranks a communicator may have (accel_comm_error.missing is a bit mask). */
#define ACCEL_COMM_MAX_RANKS		64

/**
 * accel_comm_init_all() - a communicator of several devices in one process
 * @comms: filled with @ndevs ranks; comms[i] is rank i, on devs[i]
 * @ndevs: ranks, 1 to %ACCEL_COMM_MAX_RANKS
 * @devs: @ndevs different devices
 * @params: NULL for the defaults
 *
 * Each rank allocates its staging buffer (a region of @params->slots
 * slots for each peer) and its signals, and imports every peer's that it
 * writes into (dma-buf export and import). A 1-rank communicator
 * allocates no staging. On failure nothing is left allocated.
 *
 * Return: 0; -EINVAL for bad arguments (NULL, a repeated device, @params
 * out of range); -E2BIG as the size rule says; -ENOMEM, -ENOSPC when a
 * device's memory or limits are short; -ENODEV. Many syscalls.
 */
int accel_comm_init_all(struct accel_comm **comms, unsigned int ndevs,
			struct accel_device *const *devs, const struct accel_comm_params *params);

/**
 * accel_comm_destroy() - release a rank
 * @comm: the rank, or NULL
 *
 * Frees the rank's staging, signals and imports. Destroy every rank of a
 * communicator (in any order, from any thread, once each); the shared
 * state goes with the last. Work still queued that uses the rank is the
 * program's business: wait for (or abort) it first. Never blocks on a
 * peer. A few syscalls.
 */
void accel_comm_destroy(struct accel_comm *comm);

/**
 * accel_comm_abort() - stop a communicator on every rank
 * @comm: any rank
 *
 * Marks the communicator aborted by this rank and releases every rank's
 * queued operations, which then fail: the events of this rank's
 * operations with -ECANCELED, the peers' with -ECONNABORTED (naming this
 * rank), in bounded time, without waiting for any timeout. Later calls
 * fail at once the same way. Safe from any thread; never waits for a
 * peer or a queue (multi-process: the abort itself takes no lock; it
 * then waits at most 1 s for the shared state's lock to write the flight
 * recorder's dump, which it skips, logging which process holds the lock,
 * if a process stopped inside the library keeps it).
 *
 * Return: 0; -EALREADY if the communicator had failed already (nothing
 * changed); -EINVAL for NULL. A few syscalls.
 */
int accel_comm_abort(struct accel_comm *comm);

/**
 * enum accel_comm_phase - where an operation stood when it failed
 * @ACCEL_COMM_PHASE_NONE: unknown, or at the call
 * @ACCEL_COMM_PHASE_GATE: waiting for every rank to call it
 * @ACCEL_COMM_PHASE_RECV: waiting for data from @peer
 * @ACCEL_COMM_PHASE_CREDIT: waiting for @peer to free a staging slot
 * @ACCEL_COMM_PHASE_ABORTED: released by an abort or a mismatch
 * @ACCEL_COMM_PHASE_FAULT: the queue faulted on something else (a bad
 *	address, another fault): @error is -EIO
 */
enum accel_comm_phase {
	ACCEL_COMM_PHASE_NONE,
	ACCEL_COMM_PHASE_GATE,
	ACCEL_COMM_PHASE_RECV,
	ACCEL_COMM_PHASE_CREDIT,
	ACCEL_COMM_PHASE_ABORTED,
	ACCEL_COMM_PHASE_FAULT,
};

/**
 * struct accel_comm_error - why a communicator failed
 * @error: 0, or -ETIMEDOUT, -ECANCELED (this rank aborted),
 *	-ECONNABORTED (@peer aborted), -EPROTO (the ranks called different
 *	operations), -EIO (a queue fault of another kind), -ECONNRESET (the
 *	process of rank @peer died: multi-process communicators)
 * @op: &enum accel_comm_op of the failed operation
 * @seq: its sequence number
 * @rank: the rank this report is for
 * @peer: the rank that aborted, died, that called a different operation,
 *	or whose data or slot did not come; -1 if none
 * @phase: &enum accel_comm_phase
 * @algo: &enum accel_comm_algo the operation used
 * @missing: -ETIMEDOUT: bit i set if rank i had not called @seq when the
 *	report was made
 * @reserved: zero
 * @peer_pid: (1.4) the process of rank @peer on a multi-process
 *	communicator (accel_comm_init_rank()); 0 if none or one process
 * @reserved2: (1.4) zero
 *
 * May grow at its end: accel_comm_get_async_error() takes its size (a
 * program built against 1.2 or 1.3 passes %ACCEL_COMM_ERROR_SIZE_1_2 and
 * gets the fields up to @reserved).
 */
struct accel_comm_error {
	int32_t error;
	uint32_t op;
	uint64_t seq;
	int32_t rank;
	int32_t peer;
	uint32_t phase;
	uint32_t algo;
	uint64_t missing;
	uint64_t reserved[2];
	/* libaccel 1.4 */
	int32_t peer_pid;
	uint32_t reserved2;
};

#define ACCEL_COMM_ERROR_SIZE_1_2	56
#define ACCEL_COMM_ERROR_SIZE_1_4	64

/**
 * accel_comm_get_async_error() - has the communicator failed, and why
 * @comm: a rank
 * @err: if not NULL, the report (zeroed when there is no error)
 * @err_size: sizeof(struct accel_comm_error) as the program knows it; not
 *	checked when @err is NULL
 *
 * Non-blocking and thread-safe. Looks at the communicator's shared state
 * and at the queues of this rank's recent operations (a queue stopped by
 * a timed-out wait of an operation is a -ETIMEDOUT of that operation).
 * Multi-process: waits at most 1 s for the shared state's lock; if a
 * process stopped inside the library holds it longer, answers from the
 * failure already recorded there (0 if none), without the queues.
 * The first error found is logged once per rank, naming the
 * communicator, rank, operation, sequence number, dtype, count, root or
 * peer, algorithm, phase and the ranks that had not called.
 *
 * Return: 0 if no error; the error's code; -EINVAL for NULL @comm or an
 * @err_size below %ACCEL_COMM_ERROR_SIZE_1_2, -E2BIG above 4096. No
 * syscall.
 */
int accel_comm_get_async_error(struct accel_comm *comm, struct accel_comm_error *err,
			       size_t err_size);

/**
 * accel_comm_wait() - wait on the host for an operation's event
 * @comm: the rank that issued it
 * @ev: the event the operation returned
 * @timeout_ns: relative timeout, or ACCEL_FOREVER
 *
 * The communicator's timeout counts per device wait, so a host wait of the
 * same length may run out first: a @timeout_ns at least the
 * communicator's that runs out while the communicator has no error logs a
 * warning naming the operation and the packet its queue is at (a WAIT
 * with its word's value now).
 *
 * Return: 0 when done; the communicator's error (see
 * accel_comm_get_async_error()) if it failed; -ETIMEDOUT if @timeout_ns
 * passed first and the communicator has no error. May sleep.
 */
int accel_comm_wait(struct accel_comm *comm, const struct accel_event *ev, int64_t timeout_ns);

/** accel_comm_count() - the number of ranks; -EINVAL for NULL. No syscall. */
int accel_comm_count(const struct accel_comm *comm);

/** accel_comm_rank() - this rank's index; -EINVAL for NULL. No syscall. */
int accel_comm_rank(const struct accel_comm *comm);

/** accel_comm_device() - this rank's device, or NULL. No syscall. */
struct accel_device *accel_comm_device(const struct accel_comm *comm);

/*
 * The operations. Each returns 0 once the work is on @queue (published)
 * and @ev (not NULL) is the event of its completion on this rank; or:
 * -EINVAL for a bad argument (NULL, a queue of another device, a dtype
 * the device cannot reduce (F32, F16, BF16, I32, I64 and U8 can) or,
 * for operations that only move data, one of another size than 1, 2, 4
 * or 8 bytes, an address not aligned to the element size or whose range
 * wraps, an overlap of @send and @recv other than the in-place one of
 * the operation, AVG of an integer type, a root out of range, a forced
 * algorithm that cannot run the operation; each logged with the reason);
 * -EAGAIN when the queue's ring has no room for the whole operation now,
 * or the rank is 256 calls ahead of the slowest one (nothing changed:
 * wait for earlier work and call again); -E2BIG when the operation needs
 * more packets than the ring holds (use a larger ring or chunk); -EPROTO
 * when this call differs from what another rank called with the same
 * sequence number (every rank's operation fails); the communicator's
 * error if it failed before (-ETIMEDOUT, -ECANCELED, -ECONNABORTED,
 * -EPROTO); -EIO if @queue faulted; -ENODEV. No syscall on the hot path.
 *
 * In-place, as NCCL defines it: allreduce, reduce and broadcast with
 * @send == @recv; allgather with @send == @recv + rank * count * size;
 * reducescatter with @recv == @send + rank * recvcount * size; alltoall
 * with @send == @recv. A count of 0 completes and moves nothing.
 */

/**
 * accel_allreduce() - every rank gets the reduction of all ranks' @send
 * @send: @count elements
 * @recv: @count elements
 * @count: elements per rank
 * @dtype: element type
 * @op: &enum accel_redop
 * @comm: the rank
 * @queue: a queue of the rank's device
 * @ev: the event
 */
int accel_allreduce(uint64_t send, uint64_t recv, uint64_t count, enum accel_dtype dtype,
		    enum accel_redop op, struct accel_comm *comm, struct accel_queue *queue,
		    struct accel_event *ev);

/**
 * accel_reduce() - rank @root gets the reduction of all ranks' @send
 * @send: @count elements
 * @recv: @count elements, written on @root only (ignored elsewhere)
 * @count: elements per rank
 * @dtype: element type
 * @op: &enum accel_redop
 * @root: the receiving rank
 * @comm: the rank
 * @queue: a queue of the rank's device
 * @ev: the event
 */
int accel_reduce(uint64_t send, uint64_t recv, uint64_t count, enum accel_dtype dtype,
		 enum accel_redop op, int root, struct accel_comm *comm, struct accel_queue *queue,
		 struct accel_event *ev);

/**
 * accel_broadcast() - every rank gets @root's @send
 * @send: @count elements, read on @root only
 * @recv: @count elements
 * @count: elements
 * @dtype: element type
 * @root: the sending rank
 * @comm: the rank
 * @queue: a queue of the rank's device
 * @ev: the event
 */
int accel_broadcast(uint64_t send, uint64_t recv, uint64_t count, enum accel_dtype dtype,
		    int root, struct accel_comm *comm, struct accel_queue *queue,
		    struct accel_event *ev);

/**
 * accel_allgather() - every rank gets every rank's @send, in rank order
 * @send: @count elements
 * @recv: nranks * @count elements; rank i's at @recv + i * @count * size
 * @count: elements per rank
 * @dtype: element type
 * @comm: the rank
 * @queue: a queue of the rank's device
 * @ev: the event
 */
int accel_allgather(uint64_t send, uint64_t recv, uint64_t count, enum accel_dtype dtype,
		    struct accel_comm *comm, struct accel_queue *queue, struct accel_event *ev);

/**
 * accel_reducescatter() - rank i gets block i of the reduction
 * @send: nranks * @count elements
 * @recv: @count elements: the reduction of every rank's block rank
 * @count: elements per rank (per block)
 * @dtype: element type
 * @op: &enum accel_redop
 * @comm: the rank
 * @queue: a queue of the rank's device
 * @ev: the event
 */
int accel_reducescatter(uint64_t send, uint64_t recv, uint64_t count, enum accel_dtype dtype,
			enum accel_redop op, struct accel_comm *comm, struct accel_queue *queue,
			struct accel_event *ev);

/**
 * accel_alltoall() - block j of rank i's @send goes to block i of rank j's @recv
 * @send: nranks * @count elements
 * @recv: nranks * @count elements
 * @count: elements per block
 * @dtype: element type
 * @comm: the rank
 * @queue: a queue of the rank's device
 * @ev: the event
 */
int accel_alltoall(uint64_t send, uint64_t recv, uint64_t count, enum accel_dtype dtype,
		   struct accel_comm *comm, struct accel_queue *queue, struct accel_event *ev);

/**
 * accel_barrier() - done on each rank once every rank has reached it
 * @comm: the rank
 * @queue: a queue of the rank's device
 * @ev: the event
 *
 * The queue's later work starts only after every rank's queue has run
 * everything before its barrier.
 */
int accel_barrier(struct accel_comm *comm, struct accel_queue *queue, struct accel_event *ev);

/* --- multi-process communicators (LIBACCEL_1.3) --- */

/**
 * DOC: multi-process communicators
 *
 * One rank per process, NCCL's shape: one process calls
 * accel_comm_get_unique_id() and hands the id to every process of the job
 * by any means (a file, a pipe, fork(), MPI); each process then calls
 * accel_comm_init_rank() with its own rank and device. Rank 0's call hosts
 * the rendezvous: it listens on the abstract Unix socket the id names
 * until every other rank has said hello (with the id's nonce), checks
 * that every rank agrees on the library version and every setting that
 * changes the protocol, and relays each rank's staging buffer and
 * counters (dma-buf fds over SCM_RIGHTS) to every peer, which imports
 * them into its own device. The communicator then runs every operation
 * of this header, unchanged. See Documentation/collectives.rst,
 * "Communicators and bootstrap".
 *
 * After init each process keeps its bootstrap connection(s) and a pidfd
 * of every peer, watched by one thread per communicator: a peer process
 * that dies (without accel_comm_destroy()) fails the communicator on
 * every surviving rank with -ECONNRESET, releasing their queued work, and
 * the log names the rank and its pid; accel_comm_abort() in one process
 * fails the others with -ECONNABORTED naming it.
 */

/* Bytes of a &struct accel_comm_id. */
#define ACCEL_COMM_ID_BYTES	128

/**
 * struct accel_comm_id - where and how the ranks of a job meet
 * @internal: opaque (an abstract socket name and a random nonce)
 *
 * Plain bytes: copy it, write it to a file or a pipe. One id names one
 * communicator's rendezvous; an id may be reused for another
 * communicator once the previous init_rank() calls with it returned.
 */
struct accel_comm_id {
	unsigned char internal[ACCEL_COMM_ID_BYTES];
};

/**
 * accel_comm_get_unique_id() - a new id for accel_comm_init_rank()
 * @id: filled with a random abstract socket name and a random 256-bit
 *	nonce (getrandom())
 *
 * Opens nothing: the caller need not be rank 0 (rank 0's
 * accel_comm_init_rank() listens on the name).
 *
 * Return: 0; -EINVAL for NULL; getrandom()'s error. One syscall.
 */
int accel_comm_get_unique_id(struct accel_comm_id *id);

/**
 * accel_comm_init_rank() - this process's rank of a multi-process communicator
 * @comm: the new rank, on success
 * @nranks: ranks of the communicator, 1 to %ACCEL_COMM_MAX_RANKS (the same in every process)
 * @id: from accel_comm_get_unique_id(), the same in every process
 * @rank: this process's rank, below @nranks, each once
 * @dev: this rank's device (opened in this process)
 * @params: NULL for the defaults; as accel_comm_init_all()
 *
 * Blocks until every rank has joined, at most the communicator's timeout
 * (@params->timeout_ms, else ACCEL_COMM_TIMEOUT_MS, else 10 s; other
 * ranks get up to 0.5 s more to hear rank 0's verdict). Rank 0 binds the
 * id's name and keeps waiting through foreign connections, hellos of
 * another size or magic and wrong nonces (each dropped and logged); the
 * other ranks retry connecting until rank 0 listens. Every rank returns
 * the same error when init fails after the rendezvous. Restarted after
 * signals (EINTR); accel_comm_init_abort() stops it from another thread.
 *
 * Return: 0; -EINVAL for bad arguments; -EADDRINUSE on rank 0 if the
 * id's name is already bound (another communicator with this id is
 * initializing: every id is for one communicator at a time); -EEXIST if
 * another process has joined as @rank already; -ETIMEDOUT when ranks did
 * not join in time (logged with the missing ranks); -EPROTO when the
 * ranks differ in the library version, the number of ranks, the backend
 * or a setting (algorithm, chunk bytes, slots, one-shot threshold,
 * timeout), logged on every rank with the setting, both values and both
 * ranks; -ECONNABORTED when a rank left or was stopped during init
 * (names it); -ECANCELED if accel_comm_init_abort() stopped this call;
 * the device's errors (-ENOMEM, -ENOSPC, -ENODEV). Nothing is left
 * allocated on failure. Many syscalls.
 */
int accel_comm_init_rank(struct accel_comm **comm, unsigned int nranks,
			 const struct accel_comm_id *id, unsigned int rank,
			 struct accel_device *dev, const struct accel_comm_params *params);

/**
 * accel_comm_init_abort() - stop this process's accel_comm_init_rank() calls with an id
 * @id: the id they were called with
 *
 * accel_comm_abort() needs a communicator, which init_rank() has not
 * returned yet: this is the abort of an init in progress (ncclCommAbort()
 * of a nonblocking init). Safe from any thread (not from a signal
 * handler). The stopped calls return -ECANCELED; their peers' calls fail
 * with -ECONNABORTED (or -ETIMEDOUT if they had not reached rank 0 yet).
 *
 * Return: 0 if at least one call was stopped; -ENOENT if none was in
 * progress; -EINVAL for NULL. A few syscalls.
 */
int accel_comm_init_abort(const struct accel_comm_id *id);
/* --- libaccel 1.3: alltoallv, send/recv and groups, split --- */

/**
 * accel_alltoallv() - rank i's @sendcounts[j] elements at @sdispls[j] go to rank j's @rdispls[i]
 * @send: the send buffer (device address)
 * @sendcounts: nranks entries: elements this rank sends to each rank
 * @sdispls: nranks entries: where (elements from @send) each rank's block starts
 * @recv: the receive buffer (device address)
 * @recvcounts: nranks entries: elements this rank receives from each rank
 * @rdispls: nranks entries: where (elements from @recv) each rank's block goes
 * @dtype: element type (any: the data is only moved)
 * @comm: the rank
 * @queue: a queue of the rank's device
 * @ev: the event
 *
 * MPI_Alltoallv's shape (NCCL has none). The four arrays are read at the
 * call only. What rank i sends to rank j must be what rank j receives
 * from rank i: the counts are compared across ranks where the calls are
 * matched, and a difference fails the operation on every rank with
 * -EPROTO, the log naming both ranks and both counts (this rank's own
 * block, @sendcounts[rank] against @recvcounts[rank], is checked at the
 * call: -EINVAL). No range of @recv may overlap another range of @recv
 * or any range of @send (no in-place form): -EINVAL naming both ranges.
 * Zero counts move nothing. Always the direct algorithm (a forced ring
 * is -EINVAL). Otherwise as the other operations, on one-process and
 * multi-process communicators alike (libaccel 1.4: multi-process ones
 * returned -EOPNOTSUPP before).
 */
int accel_alltoallv(uint64_t send, const uint64_t *sendcounts, const uint64_t *sdispls,
		    uint64_t recv, const uint64_t *recvcounts, const uint64_t *rdispls,
		    enum accel_dtype dtype, struct accel_comm *comm, struct accel_queue *queue,
		    struct accel_event *ev);

/**
 * accel_group_start() - start (or nest) a group of sends and receives
 *
 * Thread-local, as ncclGroupStart(): until the matching outermost
 * accel_group_end() of this thread, accel_send() and accel_recv() only
 * check their arguments and record the operation. Collectives called
 * inside a group are issued at once (they need no group; see
 * Documentation/collectives.rst, "Send and receive").
 *
 * Return: 0; -EINVAL when nested 2^20 deep. No syscall.
 */
int accel_group_start(void);

/**
 * accel_group_end() - end a group; the outermost one issues its sends and receives
 *
 * For every rank with operations in the group, in the order the ranks
 * first appear: matches each send and receive with the peer's (the k-th
 * send from rank i to rank j with the k-th receive of j from i; dtype,
 * count and the collective sequence number they follow must agree),
 * then appends the rank's part to its queue, interleaved chunk by chunk
 * so that no pairing of the group's sends and receives can deadlock.
 * Every event given to the group's calls of one rank is the completion
 * of that rank's whole part of the group.
 *
 * Return: 0; -EINVAL without a group started, or when a receive shares
 * bytes with another send or receive of its rank in the group (except one
 * send and one receive of the same bytes and dtype: in place), or a
 * rank's sends to itself do not match its receives from itself (nothing
 * issued, for any rank); -EAGAIN or -E2BIG as the
 * collectives (nothing issued, for any rank); -ENOMEM; -EPROTO when a
 * send and its receive differ (the communicator fails on every rank);
 * the communicator's error. On an error the group is over (nothing of it
 * is kept).
 */
int accel_group_end(void);

/**
 * accel_send() - send @count elements at @send to rank @peer
 * @send: device address in the rank's device
 * @count: elements (0: a message with no data, still matched)
 * @dtype: element type
 * @peer: the receiving rank (this rank: a copy to its own accel_recv() of
 *	the same group)
 * @comm: the rank
 * @queue: a queue of the rank's device; one queue per rank within a group
 * @ev: the event: the rank's part of the group is done (for a send:
 *	the peer has received the data)
 *
 * Outside a group a send is a group of its own. A send completes when the
 * peer has consumed it, so a send and its receive issued as separate
 * groups on two ranks that also wait for each other may deadlock, and
 * then fail with -ETIMEDOUT naming the peer (NCCL needs a group there
 * too).
 *
 * Return: 0; -EINVAL for a bad argument (logged); as accel_group_end()
 * outside a group. Multi-process communicators have it too (libaccel
 * 1.4; -EOPNOTSUPP before).
 */
int accel_send(uint64_t send, uint64_t count, enum accel_dtype dtype, int peer,
	       struct accel_comm *comm, struct accel_queue *queue, struct accel_event *ev);

/**
 * accel_recv() - receive @count elements from rank @peer into @recv
 * @recv: device address in the rank's device
 * @count: elements; must be the send's count
 * @dtype: element type; must be the send's
 * @peer: the sending rank
 * @comm: the rank
 * @queue: a queue of the rank's device; one queue per rank within a group
 * @ev: the event (as accel_send())
 *
 * Return: as accel_send().
 */
int accel_recv(uint64_t recv, uint64_t count, enum accel_dtype dtype, int peer,
	       struct accel_comm *comm, struct accel_queue *queue, struct accel_event *ev);

/* accel_comm_split()'s color of a rank that joins no new communicator (NCCL_SPLIT_NOCOLOR) */
#define ACCEL_COMM_SPLIT_NOCOLOR	(-1)

/**
 * accel_comm_split() - new communicators of the ranks of each color
 * @comm: a rank of the parent
 * @color: this rank's color (0 or more), or %ACCEL_COMM_SPLIT_NOCOLOR
 * @key: orders the new ranks: by (key, parent rank)
 * @newcomm: this rank's new communicator; NULL for NOCOLOR
 *
 * Collective over the parent: every rank of @comm calls it once. Outside
 * a group the call returns once every rank has called (a thread per
 * rank), or after the parent's timeout (-ETIMEDOUT) or its failure;
 * inside a group (accel_group_start()) it only arrives and the outermost
 * accel_group_end() completes it, so one thread can split every rank of
 * an accel_comm_init_all() communicator. The new communicators use the
 * parent's devices and settings (algorithm, timeout, chunk, slots,
 * one-shot threshold) and have staging and counters of their own, so
 * parent and children work at the same time (Documentation/
 * collectives.rst, "Split"). Destroy them in any order with the parent.
 * On a multi-process communicator (libaccel 1.4; -EOPNOTSUPP before)
 * each process calls it for its rank; the ranks meet in the parent's
 * shared state and each new communicator is bootstrapped like
 * accel_comm_init_rank() (a rendezvous of its own). Like every call, a
 * split takes the parent's next sequence number (libaccel 1.7; before,
 * none): a rank that calls another operation at that number instead
 * fails every rank with -EPROTO; a rank that times out frees its number
 * for its next call. It queues no device work.
 *
 * Return: 0; -EINVAL for NULL, a color below -1, or a rank calling twice
 * before every rank called once; -ETIMEDOUT; -EPROTO (another rank
 * called another operation at this split's number, or a send or receive
 * before it is unmatched: the parent fails); the parent's error; what
 * accel_comm_init_all() or accel_comm_init_rank() returns (then no rank
 * gets a new communicator).
 */
int accel_comm_split(struct accel_comm *comm, int color, int key, struct accel_comm **newcomm);

/* --- the flight recorder (1.3) --- */

/**
 * DOC: flight recorder
 * Each rank remembers its last accel_comm_params.recorder_ops operations
 * (256 by default): sequence number, operation, dtype, count, reduction,
 * root, in-place, algorithm, the host times (CLOCK_MONOTONIC, ns) it was
 * issued and seen completed, and its state (issued, running, done,
 * failed with an errno). Recording costs the issue path one clock read
 * and a copy into a ring, under the lock the call takes anyway.
 * When the communicator fails (a timeout, an abort, a mismatch), every
 * rank of it in this process writes its recorder as JSON to
 * ``<trace_dir>/accel-comm-<id>-rank<rank>.json`` (format
 * "accel-comm-trace", version 1; Documentation/collectives.rst describes
 * it), once. ``accel-comm-trace`` merges the files of all ranks and names
 * the first sequence number where they diverge and the rank at fault.
 */

/**
 * accel_comm_dump() - write a rank's flight recorder as JSON
 * @comm: the rank
 * @fd: a file descriptor open for writing (not closed)
 *
 * Writes one JSON document (format "accel-comm-trace", version 1):
 * the communicator's id, this rank, the number of ranks, the pid, the
 * host name, the time base, the communicator's error if any, and the
 * recorded operations oldest first. Safe from any thread at any time.
 * Return: 0; -EINVAL for NULL @comm or a negative @fd; -ENODATA if the
 * rank has no recorder (%ACCEL_COMM_RECORDER_OFF); -ENOMEM; the errno
 * of a failed write (the document may then be partly written). A few
 * syscalls.
 */
int accel_comm_dump(struct accel_comm *comm, int fd);

/* --- libaccel 1.4: collectives as task-graph tasks --- */

struct accel_tg;

/**
 * DOC: collective tasks
 *
 * accel_tg_allreduce() and its siblings make a collective a task of a
 * task graph (<accel/taskgraph.h>): the operation's buffers are tensors
 * (contiguous views of buffers of the rank's device; count and dtype come
 * from them), the send tensor is an ACCEL_INPUT and the receive tensor an
 * ACCEL_OUTPUT (ACCEL_INOUT when the two overlap, in place) in the task
 * graph's TensorMap, so its dependencies on the task graph's other tasks
 * are derived as for any task. The packets go on the last queue of the
 * rank's device in the task graph, after the WAITs the dependencies need,
 * and the task's completion is a value of that queue's timeline: later
 * tasks, accel_tg_task_wait(), accel_tg_sync() and accel_tg_map() see it
 * like any device task.
 *
 * The task graph may span the devices of every rank (accel_comm_init_all()
 * and one thread issuing every rank, in turn), or each rank may have its
 * own (a thread or a process per rank); each call issues one rank.
 *
 * While the task graph captures (accel_tg_capture_begin()), the call
 * checks its arguments and the communicator (a failure returns here and
 * leaves the capture and the communicator as they were) and records the
 * collective as a node of the graph, which then holds a reference on the
 * communicator: accel_comm_destroy() of a rank a graph holds is completed
 * when the last such graph is destroyed. A graph with collectives is
 * launched by issuing its tasks again in capture order, each with the
 * buffers bound for the launch (struct accel_binding): every collective
 * of a launch takes a new sequence number, is matched across ranks
 * (-EPROTO), recorded by the flight recorder and bounded by the
 * communicator's timeout like an eager call. Its host tasks find the
 * launch's buffers with accel_tg_host_buffer(), its output heap tensors
 * keep the blocks the capture placed them in (libaccel 1.7; -EOPNOTSUPP
 * at instantiation before). A launch checks before it issues anything
 * that no communicator failed and that each collective has room in its
 * call window (at most 256 calls ahead of the slowest rank, counting the
 * launch's own calls of the other ranks; -EAGAIN, nothing issued; libaccel
 * 1.7); a launch that fails after its first task was issued (ring room,
 * a peer's failure, memory) leaves the tasks before it issued (the log
 * names the task).
 *
 * Return (every function): 0 and the task's id in @id (if not NULL; 0
 * while capturing); -EINVAL for NULL @tg or @comm, a missing or
 * non-contiguous tensor, a tensor of another device than the rank's,
 * tensors whose dtypes or element counts do not fit the operation, and
 * everything accel_allreduce() and the others refuse; -ENOENT when the
 * task graph does not have the rank's device; -EACCES for a receive
 * tensor the device may not write; -E2BIG when the task's packets and
 * WAITs do not fit its queue's ring; the task graph's errors
 * (-ECANCELED, -EIO, -ETIMEDOUT waiting for ring room) and the
 * communicator's (-ETIMEDOUT, -ECANCELED, -ECONNABORTED, -ECONNRESET,
 * -EPROTO, and -EAGAIN 256 calls ahead of the slowest rank). Once the
 * sequence number is taken the task is issued: an error after that
 * (the queue found dead while publishing) is returned with the task
 * committed and @id set.
 */

/**
 * accel_tg_allreduce() - accel_allreduce() as a task of @tg
 * @tg: the task graph (has the rank's device)
 * @send: count elements
 * @recv: count elements of the same dtype
 * @op: &enum accel_redop
 * @comm: the rank
 * @id: the task's id, or NULL
 */
int accel_tg_allreduce(struct accel_tg *tg, const struct accel_tensor *send,
		       const struct accel_tensor *recv, enum accel_redop op,
		       struct accel_comm *comm, uint64_t *id);

/**
 * accel_tg_reduce() - accel_reduce() as a task of @tg
 * @tg: the task graph
 * @send: count elements
 * @recv: count elements on @root; ignored (may be NULL) on other ranks
 * @op: &enum accel_redop
 * @root: the receiving rank
 * @comm: the rank
 * @id: the task's id, or NULL
 */
int accel_tg_reduce(struct accel_tg *tg, const struct accel_tensor *send,
		    const struct accel_tensor *recv, enum accel_redop op, int root,
		    struct accel_comm *comm, uint64_t *id);

/**
 * accel_tg_broadcast() - accel_broadcast() as a task of @tg
 * @tg: the task graph
 * @send: count elements on @root; ignored (may be NULL) on other ranks
 * @recv: count elements
 * @root: the sending rank
 * @comm: the rank
 * @id: the task's id, or NULL
 */
int accel_tg_broadcast(struct accel_tg *tg, const struct accel_tensor *send,
		       const struct accel_tensor *recv, int root, struct accel_comm *comm,
		       uint64_t *id);

/**
 * accel_tg_allgather() - accel_allgather() as a task of @tg
 * @tg: the task graph
 * @send: count elements
 * @recv: nranks * count elements
 * @comm: the rank
 * @id: the task's id, or NULL
 */
int accel_tg_allgather(struct accel_tg *tg, const struct accel_tensor *send,
		       const struct accel_tensor *recv, struct accel_comm *comm, uint64_t *id);

/**
 * accel_tg_reducescatter() - accel_reducescatter() as a task of @tg
 * @tg: the task graph
 * @send: nranks * count elements
 * @recv: count elements
 * @op: &enum accel_redop
 * @comm: the rank
 * @id: the task's id, or NULL
 */
int accel_tg_reducescatter(struct accel_tg *tg, const struct accel_tensor *send,
			   const struct accel_tensor *recv, enum accel_redop op,
			   struct accel_comm *comm, uint64_t *id);

/**
 * accel_tg_alltoall() - accel_alltoall() as a task of @tg
 * @tg: the task graph
 * @send: nranks * count elements
 * @recv: as many elements as @send
 * @comm: the rank
 * @id: the task's id, or NULL
 */
int accel_tg_alltoall(struct accel_tg *tg, const struct accel_tensor *send,
		      const struct accel_tensor *recv, struct accel_comm *comm, uint64_t *id);

/**
 * accel_tg_barrier() - accel_barrier() as a task of @tg (no tensors: it
 * orders nothing in the TensorMap, only its queue)
 * @tg: the task graph
 * @comm: the rank
 * @id: the task's id, or NULL
 */
int accel_tg_barrier(struct accel_tg *tg, struct accel_comm *comm, uint64_t *id);

/* --- libaccel 1.5: alltoallv, sends and receives as task-graph tasks --- */

/**
 * accel_tg_alltoallv() - accel_alltoallv() as a task of @tg
 * @tg: the task graph
 * @send: the send tensor (its dtype is the operation's)
 * @sendcounts: nranks entries: elements this rank sends to each rank
 * @sdispls: nranks entries: where (elements from the start of @send) each
 *	rank's block starts
 * @recv: the receive tensor, of @send's dtype
 * @recvcounts: nranks entries: elements this rank receives from each rank
 * @rdispls: nranks entries: where (elements from the start of @recv) each
 *	rank's block goes
 * @comm: the rank
 * @id: the task's id, or NULL
 *
 * The four arrays are copied at the call (also while capturing: the
 * graph keeps its copy), so the program may free or change them once it
 * returns. Every block must lie inside its tensor: a count or
 * displacement past the tensor's elements is -EINVAL (the log names the
 * array, the rank index and the value); everything accel_alltoallv()
 * refuses (overlapping blocks, a count to itself that differs from the
 * count from itself) is -EINVAL too. In the TensorMap each send block
 * is an ACCEL_INPUT and each receive block an ACCEL_OUTPUT; the bytes
 * between the blocks are not the task's. A buffer bound in place of @send's or @recv's at a launch
 * must still hold the whole tensor (-EINVAL). Counts that do not match
 * across ranks fail the operation on every rank with -EPROTO, as
 * accel_alltoallv().
 */
int accel_tg_alltoallv(struct accel_tg *tg, const struct accel_tensor *send,
		       const uint64_t *sendcounts, const uint64_t *sdispls,
		       const struct accel_tensor *recv, const uint64_t *recvcounts,
		       const uint64_t *rdispls, struct accel_comm *comm, uint64_t *id);

/**
 * accel_tg_sendrecv() - send @send to @sendpeer and receive @recv from
 * @recvpeer, as ONE task of @tg (one group of NCCL's group semantics)
 * @tg: the task graph
 * @send: the elements to send (count and dtype from the tensor)
 * @sendpeer: the receiving rank
 * @recv: where the elements from @recvpeer go (its element count and
 *	dtype must be the peer's send's)
 * @recvpeer: the sending rank
 * @comm: the rank
 * @id: the task's id, or NULL
 *
 * The send and the receive are issued as one group (accel_group_start(),
 * accel_send(), accel_recv(), accel_group_end()): chunk rounds that
 * interleave them, so that any pairing of such tasks across ranks (a
 * bidirectional exchange, a ring shift, any permutation) cannot
 * deadlock. Two separate tasks, accel_tg_send() then accel_tg_recv(), on
 * each of two ranks that exchange do deadlock (each send waits until its
 * peer consumed it; the peer's receive is queued behind its own send)
 * and fail with the communicator's -ETIMEDOUT: use this call.
 * accel_group_start() does not apply to task-graph tasks (each call is
 * issued as a task at once); a task inside an open group leaves that
 * group as it was. A rank sends to itself only with @sendpeer and
 * @recvpeer both itself (a copy; the element counts must be equal). The
 * send tensor is an ACCEL_INPUT and the receive tensor an ACCEL_OUTPUT
 * in the TensorMap; the two may not overlap (-EINVAL) except in place,
 * as NCCL's in-place sendrecv: the very same bytes and dtype (the
 * receive tensor is then an ACCEL_INOUT: each chunk is sent before the
 * received one overwrites it). Sends and
 * receives take no sequence number (ranks not involved do not call);
 * they are matched with the peer's in order, before the next collective
 * (-EPROTO on a dtype or count mismatch, or when one is left unmatched),
 * and each replay of a captured one matches anew.
 * Return: as accel_tg_allreduce(); -EINVAL also for a peer out of range
 * or negative.
 */
int accel_tg_sendrecv(struct accel_tg *tg, const struct accel_tensor *send, int sendpeer,
		      const struct accel_tensor *recv, int recvpeer, struct accel_comm *comm,
		      uint64_t *id);

/**
 * accel_tg_send() - accel_send() as a task of @tg (a group of one send)
 * @tg: the task graph
 * @send: the elements to send
 * @peer: the receiving rank (not this rank: use accel_tg_sendrecv())
 * @comm: the rank
 * @id: the task's id, or NULL
 *
 * The task completes when the peer has consumed the last chunk. See
 * accel_tg_sendrecv() for exchanges between two ranks.
 */
int accel_tg_send(struct accel_tg *tg, const struct accel_tensor *send, int peer,
		  struct accel_comm *comm, uint64_t *id);

/**
 * accel_tg_recv() - accel_recv() as a task of @tg (a group of one receive)
 * @tg: the task graph
 * @recv: where the elements go
 * @peer: the sending rank (not this rank: use accel_tg_sendrecv())
 * @comm: the rank
 * @id: the task's id, or NULL
 */
int accel_tg_recv(struct accel_tg *tg, const struct accel_tensor *recv, int peer,
		  struct accel_comm *comm, uint64_t *id);

/* accel_p2p_op.flags: the operation is a receive (else a send) */
#define ACCEL_P2P_RECV		(1u << 0)

/**
 * struct accel_p2p_op - one send or receive of accel_tg_p2p()
 * @tensor: the elements to send, or where the received elements go
 *	(count and dtype from the tensor; contiguous)
 * @peer: the receiving rank of a send, the sending rank of a receive
 * @flags: %ACCEL_P2P_RECV for a receive, 0 for a send; other bits are
 *	-EINVAL
 * @reserved: must be zero (-EINVAL)
 *
 * A fixed layout: later releases give meaning to @flags bits and
 * @reserved, never change the size.
 */
struct accel_p2p_op {
	const struct accel_tensor *tensor;
	int32_t peer;
	uint32_t flags;
	uint64_t reserved[2];
};

/*
 * The most sends and receives one accel_tg_p2p() task holds (libaccel
 * 1.7): a send to and a receive from every rank of the largest
 * communicator, twice over. A task of any other kind has at most
 * %ACCEL_TASK_MAX_ARGS tensors.
 */
#define ACCEL_TG_P2P_MAX_OPS		(4 * ACCEL_COMM_MAX_RANKS)

/**
 * accel_tg_p2p() - a group of sends and receives as ONE task of @tg
 * @tg: the task graph
 * @ops: the sends and receives, in any order
 * @n: how many, 1 to %ACCEL_TG_P2P_MAX_OPS
 * @comm: the rank
 * @id: the task's id, or NULL
 *
 * accel_tg_sendrecv() for any number of peers (a halo exchange with two
 * neighbours, a send to several ranks): the operations are issued as one
 * group (accel_group_start(), the sends and receives, accel_group_end()),
 * so no pairing of such tasks across ranks can deadlock. The k-th send
 * from rank i to rank j matches the k-th receive of rank j from rank i
 * (-EPROTO on a dtype or count mismatch, as accel_send()). A rank sends
 * to itself only with as many receives from itself in the same task
 * (matched in order; the element counts must be equal). Each send
 * tensor is an ACCEL_INPUT and each receive tensor an ACCEL_OUTPUT in
 * the TensorMap; a receive tensor may not overlap any other tensor of the
 * task (-EINVAL names both) except in a task of one send and one receive
 * of the same bytes (in place, as accel_tg_sendrecv()); sends may overlap
 * each other. The
 * array is copied at the call: in a captured graph, each launch issues
 * the same operations on the buffers bound for it. A failed call changes
 * nothing.
 *
 * Return: as accel_tg_allreduce(); -EINVAL also for NULL @ops, @n 0 or
 * above %ACCEL_TG_P2P_MAX_OPS, a NULL tensor, a peer out of range, unknown
 * @flags bits or non-zero @reserved (each logged with the operation's
 * index).
 */
int accel_tg_p2p(struct accel_tg *tg, const struct accel_p2p_op *ops, unsigned int n,
		 struct accel_comm *comm, uint64_t *id);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_COMM_H */
