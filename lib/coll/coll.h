/* SPDX-License-Identifier: MIT */
/*
 * libaccel collectives: the private structures of communicators.
 *
 * A communicator is a &struct acc_group (the state every rank shares; in
 * one process, one object) and one &struct accel_comm per rank. See
 * Documentation/collectives.rst for the protocol.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_COLL_H
#define ACCEL_COLL_H

#include <sys/types.h>

#include "../internal.h"

#define ACC_COMM_CHANNELS	1	/* channels per ordered pair of ranks */
#define ACC_COMM_WINDOW		256	/* calls a rank may be ahead of the slowest */
#define ACC_COMM_HISTORY	64	/* operations a rank remembers (error reports) */
#define ACC_COMM_DEF_CHUNK	(1u << 20)
#define ACC_COMM_DEF_SLOTS	3
#define ACC_COMM_DEF_ONESHOT	(64ull << 10)
#define ACC_COMM_DEF_TIMEOUT_MS	10000u

/*
 * Test hook (a hidden symbol, reachable from tests linked statically with
 * libaccel.a): when not 0, accel_comm_init_all() raises every counter of
 * the new communicator to this value (through SIGNAL MAX steps, never
 * down) and starts its sequence numbers there, so that tests run the
 * protocol across 2^32, 2^63 and 2^64.
 */
extern uint64_t acc_comm_test_base;

/*
 * Test hook (hidden, like acc_comm_test_base): when set, a multi-process
 * accel_comm_split() calls it with the parent rank once every rank has
 * arrived and the child's id is known, right before the child's
 * bootstrap (xproc.c), so that a test can kill a rank while the others
 * bootstrap the child; a one-process split calls it once, with the rank
 * whose arrival completed the set, right before the children are made
 * (split.c), so that a test can abort the parent meanwhile.
 */
extern void (*acc_comm_test_split_hook)(unsigned int rank);

/*
 * A channel's counter, keyed by (source rank, destination rank,
 * direction, channel), never by peer alone (seed 003): DATA counts chunks
 * @src wrote into @dst's staging (the word is @dst's, @src raises it),
 * CREDIT counts chunks @dst has consumed (the word is @src's, @dst raises
 * it).
 */
enum acc_chan_dir { ACC_DIR_DATA, ACC_DIR_CREDIT };

struct acc_chan_key {
	unsigned int src, dst;
	enum acc_chan_dir dir;
	unsigned int chan;
};

/* One counter of a rank: its signal, the value it had at init, and peers' imports. */
struct acc_ctr {
	struct accel_signal *sig;	/* the owner's */
	uint64_t base;			/* epoch 0 */
	uint64_t va;			/* on the owner's device */
};

/* What a call is: compared across ranks before any data moves. */
struct acc_call {
	uint64_t seq;
	uint32_t op;		/* enum accel_comm_op */
	uint32_t dtype;
	uint64_t count;
	uint32_t redop;
	int32_t root;
	uint32_t in_place;
	uint32_t algo;
};

/* The mask of every rank of an @n-rank communicator. */
static inline uint64_t acc_ranks_all(unsigned int n)
{
	return n == 64 ? ~0ull : (1ull << n) - 1;
}

/* One sequence number's arrivals (group->lock). */
struct acc_arrival {
	uint64_t seq;
	uint64_t arrived;	/* bit mask of ranks */
	unsigned int first;	/* the rank whose call is @ref */
	struct acc_call ref;
	bool used;
	/*
	 * alltoallv's counts, 2 nranks x nranks (rank r: sendcounts,
	 * recvcounts): a pointer, so of init_all communicators only; a
	 * multi-process one leaves it NULL and keeps the slot's table in
	 * the shared extension (acc_alltoallv_table())
	 */
	uint64_t *vc;
};

/*
 * Slot @w cannot take a call of @seq: it holds an earlier number that not
 * every rank (@all) has called, so the caller is a window ahead of them.
 */
static inline bool acc_slot_busy(const struct acc_arrival *w, uint64_t seq, uint64_t all)
{
	return w->used && w->seq != seq && w->arrived != all;
}

/*
 * Sticky failures recorded in the group. DEAD: a peer process died.
 * CLAIMED: one caller is filling in the failure's fields (fail_rank and
 * the others); it reads as no failure until that caller publishes the
 * kind. acc_group_fail_claim() is the only way from NONE, so one failure
 * wins even when accel_comm_abort() records it without the lock (a
 * multi-process group whose lock a stuck process holds); the kind is
 * stored with release and loaded with acquire (seq_cst), so whoever sees
 * a kind sees its fields, with or without the lock.
 */
enum acc_fail { ACC_FAIL_NONE, ACC_FAIL_ABORT, ACC_FAIL_PROTO, ACC_FAIL_TIMEOUT, ACC_FAIL_DEAD,
		ACC_FAIL_CLAIMED };

struct acc_mp;

/* Bytes of a group that stay in the process (see struct acc_group). */
#define ACC_GROUP_LOCAL_BYTES	4096

/*
 * The group. Its first %ACC_GROUP_LOCAL_BYTES are the process's own
 * (@ranks, @live, @mp); everything from @lock on is the state the ranks
 * share. accel_comm_init_all() allocates it as one object. A
 * multi-process communicator (accel_comm_init_rank(), bootstrap.c) maps a
 * private page followed by a MAP_SHARED memfd that rank 0 created, so the
 * shared part is the same memory in every process and @lock is a
 * process-shared robust mutex. Hence: nothing from @lock on may hold a
 * pointer or anything else that only means something in one process
 * (fail_field is a copy of the field's name, not a pointer to it);
 * process-local fields go into the anonymous structure of the local part.
 */
struct acc_rec_doc;

struct acc_group {
	union {
		struct {
			struct accel_comm **ranks;	/* rank i (NULL once destroyed) */
			unsigned int live;		/* ranks not destroyed yet */
			/* multi-process: this process's bootstrap state (NULL: init_all) */
			struct acc_mp *mp;
			/*
			 * Sends and receives posted, not matched yet (p2p.c), and
			 * the split in progress (split.c); both under @lock. A
			 * multi-process group's @p2p points into the shared
			 * extension (xproc.c) and its @split stays NULL (its
			 * split uses @xsplit).
			 */
			struct acc_p2p *p2p;
			struct acc_split *split;
			/*
			 * The flight recorder's settings (recorder.c), this
			 * process's: the id in dumps (the same in every
			 * process of a multi-process communicator: made from
			 * its accel_comm_id), entries per rank (0: off), the
			 * directory failures dump to (or NULL)
			 */
			uint64_t rec_id;
			unsigned int rec_ops;
			char *rec_dir;
			/*
			 * Documents rendered under @lock, written to rec_dir
			 * by acc_group_unlock() after the lock is released (no
			 * file I/O under a lock other processes wait for)
			 */
			struct acc_rec_doc *rec_pending;
			/*
			 * multi-process only (xproc.c): this process's
			 * view of the shared extension after the group (the
			 * memfd's pages past the struct): alltoallv's count
			 * tables (one per call-window slot) and the split's
			 * rendezvous; @p2p above points into it too. Bytes
			 * mapped in all (local page, group, extension).
			 */
			uint64_t *xp_vc;
			struct acc_xsplit *xsplit;
			size_t map_bytes;
			/*
			 * init_rank's settings only: the end of its bootstrap
			 * (CLOCK_MONOTONIC ns; 0: the timeout from the call)
			 */
			int64_t boot_deadline;
		};
		char local_part[ACC_GROUP_LOCAL_BYTES];
	};
	/* --- shared from here on --- */
	pthread_mutex_t lock;
	unsigned int nranks;
	/* settings every rank agreed on */
	uint32_t algo;			/* forced, or AUTO */
	uint64_t timeout_ns;
	uint64_t chunk;
	unsigned int slots;
	uint64_t oneshot_max;
	uint64_t seq0;			/* the first sequence number */
	/* protocol state (lock) */
	uint64_t next_seq[ACCEL_COMM_MAX_RANKS];	/* per rank: the next seq it takes */
	struct acc_arrival win[ACC_COMM_WINDOW];
	atomic_int fail;		/* enum acc_fail */
	int fail_rank;			/* who aborted, or the rank whose call differed */
	struct acc_call fail_call[2];	/* PROTO: the reference and the differing call */
	int fail_ranks[2];
	char fail_field[48];		/* PROTO: the differing field (a copy: shared) */
	struct accel_comm_error fail_report;	/* TIMEOUT: the first rank's report */
	/* multi-process (bootstrap.c) */
	int32_t pids[ACCEL_COMM_MAX_RANKS];	/* every rank's process */
	_Atomic uint64_t left;		/* ranks whose process destroyed its rank */
	/*
	 * The rank holding @lock (EOWNERDEAD names it, and so does the log of
	 * a long wait for it): written by the holder, read without the lock
	 * (__atomic, relaxed: a name in a message)
	 */
	int32_t lock_owner;
	/*
	 * alltoallv's count mismatch (@lock), so that every rank's
	 * report names both ranks and both counts: rank @src sends @sent
	 * elements to @dst, which receives @recvd from it (@set: recorded)
	 */
	struct {
		uint32_t set, src, dst;
		uint64_t sent, recvd;
	} a2av_fail;
};

/* What a rank remembers of one of its operations. */
struct acc_hist {
	struct acc_call call;
	struct accel_queue *q;
	uint32_t qid;
	uint64_t ring_first, ring_end;	/* ring indices [first, end) */
};

/* --- the flight recorder (recorder.c) --- */
enum acc_rec_state { ACC_REC_ISSUED, ACC_REC_RUNNING, ACC_REC_DONE, ACC_REC_FAILED };

/* One recorded operation (group->lock). */
struct acc_rec_entry {
	struct acc_call call;
	int64_t issued_ns, end_ns;	/* CLOCK_MONOTONIC; end_ns 0: not seen ended */
	struct accel_event ev;		/* the operation's event (ev.signal NULL: none) */
	struct accel_queue *q;
	uint32_t qid;
	uint32_t state;			/* enum acc_rec_state */
	int32_t error;			/* FAILED: the -errno */
	uint64_t gate;			/* ring index of its first packet */
};

/*
 * A rank's ring of its last @cap operations: entry @n % @cap is the next
 * one written. Written by the issuing thread and read by dumps under
 * group->lock (the lock the issue path takes anyway).
 */
struct acc_recorder {
	struct acc_rec_entry *e;	/* NULL: off */
	unsigned int cap;
	uint64_t n;			/* operations recorded so far */
	bool dumped;			/* written for the group's failure */
};

struct accel_comm {
	struct acc_group *g;
	/* graphs holding this rank, and ACC_COMM_DESTROYED (lib/graph/coll_task.c) */
	atomic_uint refs;
	unsigned int rank, nranks;
	struct accel_device *dev;
	/* staging: a region per source peer, @slots slots of @chunk bytes each */
	struct accel_buffer *staging;
	/* scratch: [0, chunk) a copy of this rank's input, [chunk, 2 chunk) constants */
	struct accel_buffer *scratch;
	/* peers' staging imported into this device (NULL for this rank) */
	struct accel_buffer **peer_staging;
	/* this rank's counters: go (the gate), abort, and per peer p ready[p] and credit[p] */
	struct acc_ctr go, abort;
	struct acc_ctr *ready;		/* DATA counter of channel (p -> rank) */
	struct acc_ctr *credit;		/* CREDIT counter of channel (rank -> p) */
	/* peers' counters this rank raises, imported into this device (signal, va) */
	struct accel_signal **imp_go;		/* peer p's go */
	struct accel_signal **imp_ready;	/* p's ready[rank]: DATA of (rank -> p) */
	struct accel_signal **imp_credit;	/* p's credit[rank]: CREDIT of (p -> rank) */
	/* the epoch-0 values of those peers' counters */
	uint64_t *peer_go_base, *peer_ready_base, *peer_credit_base;
	/* the sticky error found for this rank (group->lock) */
	struct accel_comm_error err;
	/* chunks through each channel so far (this rank's calls only) */
	uint64_t *sent;			/* (rank -> p) */
	uint64_t *recvd;		/* (p -> rank) */
	/* ordering across queues */
	struct accel_queue *last_q;
	uint32_t last_qid;
	struct accel_event last_ev;
	bool have_last;
	/*
	 * Calls and send/receive groups of this rank committed so far
	 * (written under group->lock, read without it by the issuing
	 * thread): a call whose plan was made before a call of a host task
	 * run while it waited for ring room committed is planned again.
	 */
	_Atomic uint64_t commits;
	/* recent operations, for error reports */
	struct acc_hist hist[ACC_COMM_HISTORY];
	uint64_t nhist;
	atomic_bool logged;
	struct acc_recorder rec;	/* flight recorder (group->lock) */
	/*
	 * the plan buffers the rank's calls reuse (acc_plan_init()):
	 * packets (@plan_cap of them) and 2 x nranks chunk counts, lent to
	 * one plan at a time (@plan_busy; a second plan alive at once, as in
	 * two threads calling for one rank, allocates its own). NULL: none
	 * (a multi-process stand-in).
	 */
	struct drm_vaccel_packet *plan_pkts;
	unsigned int plan_cap;
	uint64_t *plan_ctr;
	atomic_bool plan_busy;
};

/* --- transport.c --- */
int acc_comm_transport_init(struct acc_group *g);

/*
 * One rank's staging buffer and counters as dma-buf fds, in this order:
 * staging, go, abort, then ready[q] and credit[q] of every peer q in rank
 * order; @base: each counter's epoch-0 value. accel_comm_init_all() passes
 * them from rank to rank in the process, accel_comm_init_rank() over the
 * bootstrap sockets (SCM_RIGHTS): one import path for both.
 */
#define ACC_EXPORT_MAX	(3 + 2 * (ACCEL_COMM_MAX_RANKS - 1))
#define acc_export_count(nranks)	((nranks) < 2 ? 0u : 3 + 2 * ((nranks) - 1))
struct acc_export {
	unsigned int n;
	int fd[ACC_EXPORT_MAX];
	uint64_t off[ACC_EXPORT_MAX];
	uint64_t base[ACC_EXPORT_MAX];
};

/* @c's staging, scratch and counters (c->g's settings). */
int acc_rank_alloc(struct accel_comm *c);
/* @c's exports (none for 1 rank); nothing left open on failure. */
/* @local: imported by ranks of this process only, and closed (tp_export_local()) */
int acc_rank_export(struct accel_comm *c, struct acc_export *e, bool local);
void acc_export_close(struct acc_export *e);
/*
 * Import into @c what it writes of peer @p (from @p's exports @e); with
 * @proxy (multi-process: the stand-in of @p in this process's
 * group->ranks[p]), every counter of @p too, so that a failure found here
 * releases @p's queues (acc_comm_poison()). The fds stay the caller's.
 */
int acc_rank_import(struct accel_comm *c, unsigned int p, const struct acc_export *e,
		    struct accel_comm *proxy);
void acc_comm_transport_fini(struct accel_comm *c);
/* The counter a channel key names, and its owner's rank. */
const struct acc_ctr *acc_chan_ctr(const struct acc_group *g, struct acc_chan_key key,
				   unsigned int *owner);
/* Staging region offset of source @src's slot @k in rank @dst's staging. */
uint64_t acc_slot_offset(const struct acc_group *g, unsigned int src, unsigned int dst,
			 uint64_t k);

/* A plan: the packets of one call, built before anything is committed. */
struct acc_plan {
	struct accel_comm *c;
	struct drm_vaccel_packet *pkts;
	unsigned int n, cap;
	int err;
	uint64_t *sent, *recvd;		/* copies, committed on success */
	uint64_t timeout_ns;
	bool pooled;			/* the buffers are c->plan_* */
};

/*
 * Test hook (hidden, like acc_comm_test_base): heap allocations plans
 * made (their packets, chunk counts and growth). The issue path of a
 * rank whose plan buffers are warm makes none.
 */
extern _Atomic uint64_t acc_comm_plan_allocs;

int acc_plan_init(struct acc_plan *pl, struct accel_comm *c);
void acc_plan_fini(struct acc_plan *pl);
struct drm_vaccel_packet *acc_plan_add(struct acc_plan *pl);
void acc_plan_copy(struct acc_plan *pl, uint64_t dst, uint64_t src, uint64_t bytes);
void acc_plan_reduce(struct acc_plan *pl, uint64_t dst, uint64_t a, uint64_t b, uint64_t n,
		     unsigned int dtype, unsigned int op);
/* The abort check: faults the queue at once if the communicator failed. */
void acc_plan_check(struct acc_plan *pl);
/* Send @bytes at @src to @to (credit wait, COPY into its slot, DATA raised). */
void acc_plan_send(struct acc_plan *pl, unsigned int to, uint64_t src, uint64_t bytes);
/* Wait for the next chunk from @from; its slot's address in this rank's staging. */
uint64_t acc_plan_recv_wait(struct acc_plan *pl, unsigned int from);
/* The chunk from @from is consumed: raise its CREDIT. */
void acc_plan_recv_done(struct acc_plan *pl, unsigned int from);
/*
 * Receive from @from, reduce with @own (n elements) and send the result to
 * @to (one REDUCE into @to's slot): the ring's recv-reduce-send.
 */
void acc_plan_recv_reduce_send(struct acc_plan *pl, unsigned int from, unsigned int to,
			       uint64_t own, uint64_t n, unsigned int dtype, unsigned int op);
/* @n elements at @dst *= 1/nranks (AVG), through the scratch constants. */
void acc_plan_scale(struct acc_plan *pl, uint64_t dst, uint64_t n, unsigned int dtype);
void acc_plan_fill_scale(struct acc_plan *pl, unsigned int dtype);

/* --- algorithms (ring.c, oneshot.c) --- */
struct acc_args {
	uint32_t op;		/* enum accel_comm_op */
	uint64_t send, recv, count;
	enum accel_dtype udtype;	/* the caller's */
	unsigned int dtype;	/* DRM_VACCEL_DTYPE_* (reductions), or 0 */
	unsigned int esize;
	unsigned int redop;	/* DRM_VACCEL_REDOP_* */
	bool avg;
	int root;
	bool in_place;
	/* alltoallv's arrays (copies, nranks entries each) */
	const uint64_t *scounts, *sdispls, *rcounts, *rdispls;
	uint64_t *vspare;	/* 2 nranks^2 entries for the arrival, or NULL */
	/* a task-graph task's packets around the call's (NULL: none) */
	struct acc_coll_hook *hook;
};

void acc_ring_plan(struct acc_plan *pl, const struct acc_args *a);
void acc_oneshot_plan(struct acc_plan *pl, const struct acc_args *a);

/* --- algo.c --- */
/* 0 and the algorithm for @a, or -EINVAL (logged) */
int acc_algo_select(const struct acc_group *g, const struct acc_args *a, uint32_t *algo);
const char *acc_algo_name(uint32_t algo);
const char *acc_op_name(uint32_t op);

/* --- errors.c --- */
/* The group's sticky error for rank @rank (0 if none), as accel_comm_get_async_error(). */
int acc_comm_group_error(struct acc_group *g, unsigned int rank);
/* Release every rank's queued work after a failure (abort words, then counters). */
void acc_comm_poison(struct acc_group *g, unsigned int code);
void acc_call_describe(const struct acc_call *call, char *buf, size_t len);
/*
 * A call completed by the host (split) takes the rank's next sequence
 * number and arrives in its window slot (ops.c; g->lock held); a rank
 * that times out leaves it, freeing the number.
 */
int acc_call_arrive_host(struct accel_comm *c, struct acc_call *call, uint64_t *rec_n);
void acc_call_leave_host(struct accel_comm *c, uint64_t seq);

/* Is @q (a queue of @dev seen before) still alive? Its work is abandoned if not. */
bool acc_comm_queue_alive(struct accel_device *dev, struct accel_queue *q, uint32_t id);

/* --- alltoallv.c, p2p.c --- */
/* The call's packets (a->op ALLTOALLV) and the matching of its counts (g->lock). */
void acc_alltoallv_plan(struct acc_plan *pl, const struct acc_args *a);
const char *acc_alltoallv_match(struct acc_group *g, struct acc_arrival *w,
				const struct accel_comm *c, struct acc_args *a);
/* Enqueue a checked call: the sequence number, matching, gate (ops.c). */
int acc_coll_call(struct accel_comm *c, struct acc_args *a, struct accel_queue *q,
		  struct accel_event *ev);
/*
 * The gate of @seq opens (g->lock): fails (-EPROTO, logged) if a send or
 * receive posted before collective @seq is still unmatched.
 */
int acc_p2p_gate_check(struct acc_group *g, uint64_t seq);
/* Record a failed match (g->lock): the communicator fails -EPROTO everywhere. */
void acc_comm_fail_proto(struct acc_group *g, const struct acc_call *ref, int ref_rank,
			 const struct acc_call *call, int rank, const char *field);
/* split.c: free the split state; the splits recorded in this thread's group */
void acc_split_fini(struct acc_group *g);
int acc_split_group_end(void);
/* p2p.c: this thread's group depth */
unsigned int acc_group_depth(void);
/* Free what alltoallv, sends/receives and split keep in @g (the group is going). */
void acc_comm_ops_fini(struct acc_group *g);
/* --- recorder.c --- */
/* Settings from the caller's params and the environment (init). */
int acc_rec_settings(struct acc_group *g, const struct accel_comm_params *p);
int acc_rec_init(struct accel_comm *c);
/* Test hook (hidden): the next acc_rec_init() of this process fails with -ENOMEM. */
extern bool acc_comm_test_rec_nomem;
/* Test hook (hidden): the next accel_comm_get_unique_id() of this process fails with it. */
extern int acc_comm_test_id_error;
void acc_rec_fini(struct accel_comm *c);
void acc_rec_group_fini(struct acc_group *g);
/* Record a call that took sequence number call->seq (group->lock held). */
void acc_rec_add(struct accel_comm *c, const struct acc_call *call, int64_t issued_ns,
		 struct accel_queue *q, uint64_t gate, const struct accel_event *ev, int error);
/*
 * Entry @n (c->rec.n before its acc_rec_add()) ended: done, or failed with
 * @error (a host-completed call's end, or a queued call that failed after
 * it was recorded; group->lock held). Nothing if the ring moved past it
 * or @n was never recorded.
 */
void acc_rec_end(struct accel_comm *c, uint64_t n, int error);
/* The operation of @ev completed (seen by a host wait; group->lock not held). */
void acc_rec_done(struct accel_comm *c, const struct accel_event *ev);
/*
 * A host wait for @ev ran out after @waited_ns and the communicator has
 * not failed: log the operation, how long ago it was issued, and where its
 * queue is (the packet it waits in, with its word's value now). Group
 * lock not held.
 */
void acc_rec_not_done(struct accel_comm *c, const struct accel_event *ev, int64_t waited_ns);
/*
 * The group failed: render the dump of each of this process's ranks not dumped yet (@lock
 * held); acc_group_unlock() writes them once the lock is released.
 */
void acc_rec_dump_group(struct acc_group *g, const char *reason);
/* Write and free documents acc_rec_dump_group() rendered (no lock held). */
void acc_rec_write_docs(struct acc_rec_doc *docs);
static inline bool acc_rec_on(const struct accel_comm *c)
{
	return c->rec.e != NULL;
}

/* --- comm.c --- */
/*
 * The group's lock. Multi-process: waits in slices, and logs once, after
 * the group's timeout, the rank and pid holding it (a process stopped
 * inside the library); it still waits (the holder may resume, or die:
 * then EOWNERDEAD fails the group with -ECONNRESET and the wait ends).
 * For the sections inside a call, which cannot stop half-way; a call's
 * first lock is acc_group_lock_call().
 */
void acc_group_lock(struct acc_group *g);
/*
 * The same, bounded: 0 with the lock held, -ETIMEDOUT at @deadline
 * (CLOCK_MONOTONIC ns), or -ECANCELED once @stop (if not NULL) is true
 * (looked at every 10 ms). Multi-process only: a one-process group's lock
 * is held only briefly by this process's threads, and is simply taken.
 */
int acc_group_lock_until(struct acc_group *g, int64_t deadline, const atomic_bool *stop);
/*
 * The lock at the start of rank @rank's call (@what names it in the log),
 * before anything is changed: 0 with the lock held; else, without it, the
 * group's error once the group fails meanwhile (an abort without the
 * lock), or -ETIMEDOUT once the group's timeout passed (logged, naming
 * the holder). Multi-process only; a one-process group's is simply taken.
 */
int acc_group_lock_call(struct acc_group *g, unsigned int rank, const char *what);
/* The holder of a multi-process group's lock, for a log line: "rank 1 (pid 4711)". */
const char *acc_group_lock_holder(struct acc_group *g, char *buf, size_t len);
/* The group's error for rank @c (0 if none), through acc_group_lock_call(). */
int acc_comm_check_error(struct accel_comm *c, const char *what);
void acc_group_unlock(struct acc_group *g);
/* Move the group's failure from NONE to CLAIMED: true for the one caller that did. */
static inline bool acc_group_fail_claim(struct acc_group *g)
{
	int none = ACC_FAIL_NONE;

	return atomic_compare_exchange_strong(&g->fail, &none, ACC_FAIL_CLAIMED);
}

/* The claimer's fields are written: publish the failure's kind. */
static inline void acc_group_fail_publish(struct acc_group *g, enum acc_fail kind)
{
	atomic_store_explicit(&g->fail, (int)kind, memory_order_release);
}
/* The settings of @params (then the environment, then the defaults) into @g. */
int acc_comm_settings(struct acc_group *g, const struct accel_comm_params *params);

/* --- multi-process communicators (bootstrap.c, monitor.c) --- */

/*
 * What one process keeps of a multi-process communicator (group->mp):
 * the bootstrap connections (rank 0: one per peer; others: conn[0] to
 * rank 0), a pidfd of every peer's process (-1 where pidfd_open() is not
 * available: then rank 0's sockets still see every death and rank 0
 * fails the group for all), and the monitor thread that watches them.
 * Written by init_rank() and destroy only; the monitor reads it.
 */
struct acc_mp {
	unsigned int rank, nranks;
	pid_t pid;			/* the process that made it (fork: not a child) */
	int conn[ACCEL_COMM_MAX_RANKS];
	int pidfd[ACCEL_COMM_MAX_RANKS];
	int wake;			/* eventfd: destroy stops the monitor */
	atomic_bool stopping;		/* destroy: the monitor gives up the group's lock */
	pthread_t monitor;
	bool have_monitor;
};

/*
 * The rendezvous, the shared group and the exchange of accel_comm_init_rank():
 * *@out is the mapped group with this process's rank and its peers'
 * stand-ins in ->ranks (@set: this rank's settings).
 */
int acc_mp_bootstrap(struct acc_group **out, const struct acc_group *set,
		     const struct accel_comm_id *id, unsigned int nranks, unsigned int rank,
		     struct accel_device *dev);
void acc_mp_group_unmap(struct acc_group *g);
/*
 * accel_comm_init_rank() with its bootstrap ending at @deadline
 * (CLOCK_MONOTONIC ns; 0: the communicator's timeout from now); a split
 * gives its own, so that the whole split takes one timeout.
 */
int acc_comm_init_rank_until(struct accel_comm **comm, unsigned int nranks,
			     const struct accel_comm_id *id, unsigned int rank,
			     struct accel_device *dev, const struct accel_comm_params *params,
			     int64_t deadline);
/* Free every entry of group->ranks (this rank and the stand-ins) and the array. */
void acc_mp_ranks_free(struct acc_group *g);
/* Start the monitor of @g (pidfds, the wake eventfd, the thread). */
int acc_mp_monitor_start(struct acc_group *g);
/* Stop and join it (never waits for a peer). */
void acc_mp_monitor_stop(struct acc_group *g);
/* " (pid N)" of rank @peer of a multi-process group, in @buf; "" otherwise. */
const char *acc_mp_peer_pid(const struct acc_group *g, int peer, char *buf, size_t len);
/* Peer @p died (@how: what showed it): fail the group with -ECONNRESET, once. */
void acc_mp_peer_died(struct acc_group *g, unsigned int p, const char *how);

/*
 * --- alltoallv, send/recv and split across processes (xproc.c) ---
 *
 * A multi-process group's memfd holds, after the shared part of struct
 * acc_group, an extension whose size depends on the rank count only: the
 * table of unmatched sends and receives (struct acc_p2p), the split's
 * rendezvous (struct acc_xsplit) and alltoallv's count tables
 * (%ACC_COMM_WINDOW x 2 nranks^2 counts). No pointers in it; each process
 * finds it from its own mapping (acc_xp_attach()).
 */
struct acc_xsplit;
/* Bytes of the extension for @nranks ranks (page multiple). */
size_t acc_xp_bytes(unsigned int nranks);
/* Point @g's local fields (p2p, xsplit, xp_vc) into the extension mapped at @base. */
void acc_xp_attach(struct acc_group *g, void *base);
size_t acc_p2p_state_bytes(void);	/* p2p.c */
/* The counts table of arrival @w: 2 nranks^2 counts (alltoallv.c) */
uint64_t *acc_alltoallv_table(struct acc_group *g, struct acc_arrival *w);
/* accel_comm_split() of a multi-process rank (xproc.c). */
int acc_xsplit(struct accel_comm *c, int color, int key, struct accel_comm **newcomm);
/* " (pid N)" after each rank of @mask in @buf ("2 (pid 7),3 (pid 9)"); "none" if empty. */
const char *acc_ranks_pids(const struct acc_group *g, uint64_t mask, char *buf, size_t len);
/* --- collectives as task-graph tasks (lib/graph/coll_task.c) --- */

/*
 * What a task graph puts around a collective's packets on its queue. The
 * call adds @npre + @npost to the ring slots it reserves; @room (before
 * the group's lock is taken, may wait) makes sure the ring has that many
 * free; @pre writes @npre packets before the gate (the task's WAITs) and
 * @post @npost after the call's last packet (the task's completion), both
 * at commit, once the sequence number is taken (they cannot fail).
 */
struct acc_coll_hook {
	unsigned int npre, npost;
	int (*room)(struct acc_coll_hook *h, struct accel_queue *q, unsigned int n);
	void (*pre)(struct acc_coll_hook *h, struct accel_queue *q);
	void (*post)(struct acc_coll_hook *h, struct accel_queue *q);
	bool committed;		/* set by the call once @pre ran */
};

/* Check a call as the public entry points do (nothing changes); also the group's error. */
int acc_coll_check(struct accel_comm *c, struct acc_args *a, enum accel_dtype dtype,
		   enum accel_redop op, struct accel_queue *q);
/* Check and enqueue, as the public entry points (a->hook may be set). */
int acc_coll_issue(struct accel_comm *c, struct acc_args *a, enum accel_dtype dtype,
		   enum accel_redop op, struct accel_queue *q, struct accel_event *ev);
/* One call of a task graph's send/receive task (p2p.c). */
struct acc_p2p_desc {
	bool send;
	uint64_t buf, count;
	enum accel_dtype dtype;
	int peer;
};

/*
 * Rank @c's @n sends and receives as one group (NCCL's group semantics),
 * issued at once with @hook's packets around them, or checked only.
 */
int acc_p2p_task(struct accel_comm *c, const struct acc_p2p_desc *d, unsigned int n,
		 struct accel_queue *q, struct acc_coll_hook *hook, bool check_only,
		 struct accel_event *ev);

/*
 * Test hook (hidden, like acc_comm_test_base): when not 0 and below the
 * limit, the most sends and receives a communicator keeps unmatched.
 */
extern unsigned int acc_p2p_test_pending;

/*
 * What the unmatched posts of group @g would become: a launch checks its
 * send/receive tasks in order before it issues any (lib/graph/coll_task.c)
 * as acc_p2p_task() checks and matches them when issued. begin copies the
 * table under the group's lock (0 or -ENOMEM); fits says whether rank
 * @rank's @n calls (@peer[i], @send[i]) fit, as acc_p2p_task() counts
 * them: the ones that match no waiting post (@posts), with how many wait
 * and the limit; post matches or adds one call of @rank with @peer. Other ranks' calls meanwhile can
 * only match this launch's posts, except posts between two other ranks.
 */
struct acc_p2p_sim;
int acc_p2p_sim_begin(struct acc_group *g, struct acc_p2p_sim **out);
bool acc_p2p_sim_fits(const struct acc_p2p_sim *sim, unsigned int rank, const unsigned int *peer,
		      const bool *send, unsigned int n, unsigned int *posts, unsigned int *waiting,
		      unsigned int *max);
void acc_p2p_sim_post(struct acc_p2p_sim *sim, unsigned int rank, unsigned int peer, bool send);
void acc_p2p_sim_end(struct acc_p2p_sim *sim);
/*
 * accel_alltoallv() with @hook (a task graph's packets around the call's),
 * or checked only (@check_only: the argument checks and the
 * communicator's error).
 */
int acc_alltoallv_issue(uint64_t send, const uint64_t *sendcounts, const uint64_t *sdispls,
			uint64_t recv, const uint64_t *recvcounts, const uint64_t *rdispls,
			enum accel_dtype dtype, struct accel_comm *comm, struct accel_queue *queue,
			struct acc_coll_hook *hook, bool check_only, struct accel_event *ev);
/* The program's destroy of @c is deferred while graphs hold it (bit 31 of refs). */
#define ACC_COMM_DESTROYED	0x80000000u
void acc_comm_get(struct accel_comm *c);
void acc_comm_put(struct accel_comm *c);
/* The destroy proper (comm.c), once the program and every graph let go. */
void acc_comm_destroy_now(struct accel_comm *c);

#endif /* ACCEL_COLL_H */
