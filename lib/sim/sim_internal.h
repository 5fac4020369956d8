/* SPDX-License-Identifier: MIT */
/*
 * The in-process device (ACCEL_BACKEND=sim): the vaccel driver reproduced
 * behind the transport (lib/transport.h), running the module's own packet
 * core (kmod/core/, compiled in by sim_core.c) on engine threads of the
 * process. This header holds its structures and the rules that protect
 * them; Documentation/sim.rst explains the model.
 *
 * Files, one concern each:
 *   sim_sync.c       futexes, the read-side lock (SRCU-like) of the
 *                    lock-free lookups, signal blocking, the clock
 *   sim_bus.c        the process's devices: settings (as new_device
 *                    parses them), ACCEL_SIM_DEVICES, removal, lifetimes
 *   sim_transport.c  acc_tp_sim: files and their fds, the ioctl dispatch,
 *                    mmap/munmap/remap, PRIME, dup
 *   sim_bo.c         buffer objects on memfds, capacity, sealing, imports
 *   sim_vm.c         the VA window, VM_BIND/VM_UNBIND, translation
 *   sim_queue.c      QUEUE_CREATE/DESTROY/QUERY, KICK, the queue pages,
 *                    per-client engine time
 *   sim_engine.c     engine threads, turns, the NEED_WAKEUP protocol
 *   sim_split.c      bulk packets split across idle engines
 *   sim_signal.c     per-word wake-ups, WAIT_SIGNALS, SIGNAL_WRITE,
 *                    SIGNAL_EVENTFD
 *   sim_os.c         the core's vaccel_os_*() layer
 *   sim_knobs.c      the debugfs knobs and files (accel_device_debug_*)
 *
 * Lock order (outer first): bus lock > device lock > file queues_lock >
 * file lock > engine lock > vm lock > seal lock > arms lock > event lock >
 * bucket lock > acct lock. The object registries' and the host-map
 * table's locks are leaves. Engine threads block every signal; a signal
 * handler never takes a bucket lock its own thread holds (sim_signal.c,
 * bucket_lock(): the wake-up is left to the interrupted thread), and none
 * takes the event lock, so that SIGNAL_WRITE and KICK, which are lock-free
 * up to the bucket walk, may run in a signal handler (accel_tg_abort()).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_SIM_INTERNAL_H
#define ACCEL_SIM_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sim_core_names.h"
#include "../../kmod/core/vaccel_core.h"
#include "../internal.h"
#include "sim.h"

/*
 * ThreadSanitizer builds: one mapping per object. TSan orders memory by
 * address; a release through one mapping of a page and an acquire through
 * another are not paired, so an engine's view and the program's view of a
 * buffer object or of a queue's pages must be one address. In such a
 * build, host mappings of an object are its engine mapping itself, and
 * the doorbell and control pages the engine's: the program's mappings
 * carry no protection of their own (read-only mappings are writable),
 * nothing else changes. Every other build maps separately, with the
 * protections of Documentation/sim.rst.
 */
#if defined(__SANITIZE_THREAD__)
#define SIM_ONE_MAPPING		1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SIM_ONE_MAPPING		1
#endif
#endif
#ifndef SIM_ONE_MAPPING
#define SIM_ONE_MAPPING		0
#endif

#define SIM_PAGE		4096ull
/* device ids 0..SIM_MAX_ID, as the bus's */
#define SIM_MAX_ID		1023u
/* the module's VA window and per-context limits (kmod/vaccel_drv.h, vaccel_queue.h) */
#define SIM_VA_START		(1ull << 32)
#define SIM_VA_END		(1ull << 48)
#define SIM_MAX_BOS		4096u
#define SIM_MAX_MAPPINGS	4096u
#define SIM_MAX_QUEUES		64u
/* mmap() offsets: queue pages below 4 GiB, buffer objects above, as the module's */
#define SIM_MMAP_QUEUE_BASE	(1ull << 30)
#define SIM_MMAP_QUEUE_END	(SIM_MMAP_QUEUE_BASE + SIM_MAX_QUEUES * 2 * SIM_PAGE)
#define SIM_MMAP_BO_BASE	(1ull << 32)
/* turns (kmod/vaccel_queue.h): steps and time of one, turns per pass by priority */
#define SIM_QUEUE_BUDGET	64u
#define SIM_QUEUE_TURNS(p)	(1u << (2 * (p)))
#define SIM_QUEUE_TURN_NS	2000000ull
/* a kicking thread's turn (sim_engine.c, sim_queue_kick()) */
#define SIM_INLINE_BUDGET	64u
#define SIM_INLINE_NS		20000ull
/* the longest an engine sleeps without a deadline of its own */
#define SIM_ENGINE_LAZY_NS	1000000000ull
/* per-word waiters (kmod/vaccel_signal.h): buckets, their bound, the poll of a full one */
#define SIM_SIGNAL_BUCKETS	1024u
#define SIM_SIGNAL_BUCKET_MAX	512u
#define SIM_SIGNAL_POLL_NS	1000000ull
/*
 * Memory another process may write (a memfd imported from it, or one of
 * this process's objects exported): its waiters also sleep on the word
 * itself as a shared futex (FUTEX_32, the low half of the little-endian
 * signal), which every update of such a word wakes, in any process. A
 * change of the high half alone does not change the futex's value: such a
 * wait looks again after this long anyway. Without futex_waitv() (Linux
 * before 5.16) the waiters look every SIM_SHARED_POLL_NS instead.
 */
#define SIM_SHARED_BACKSTOP_NS	10000000ull
#define SIM_SHARED_POLL_NS	100000ull
/* a host wait spins this long on its words before it sleeps */
#define SIM_WAIT_SPIN_NS	2000ll
/*
 * Bulk packets with at least this much left after their first step are
 * split (the module's VACCEL_SPLIT_MIN is 4 chunks): two chunks here, as
 * a host thread waiting for the packet helps too (sim_split_host_help()),
 * so that a 1 MiB COPY is not one engine's alone.
 */
#define SIM_SPLIT_MIN		(2ull * VACCEL_CORE_CHUNK)
/* the smallest range of a split job (sim_split.c: sim_split_chunk()) */
#define SIM_SPLIT_CHUNK_MIN	(64ull << 10)
/* the eventfd arms and buckets of the uAPI */
#define SIM_ARMS_MAX		DRM_VACCEL_EVENTFD_MAX
/* memfd names: buffer objects carry their flags in it, so another process can read them */
#define SIM_BO_NAME		"vaccel-sim-bo"
#define SIM_FILE_NAME		"vaccel-sim-file"
#define SIM_QUEUE_NAME		"vaccel-sim-queue"

/* ---- sim_sync.c ---- */

/* CLOCK_MONOTONIC in ns (the module's ktime_get_ns()). */
uint64_t sim_now(void);
/*
 * Sleep while *@word is @val, until woken, @deadline (absolute
 * CLOCK_MONOTONIC ns; 0: none) or a signal. 0, -ETIMEDOUT, -EINTR,
 * -EAGAIN (*@word was not @val). Process-private futexes.
 */
int sim_futex_wait(_Atomic uint32_t *word, uint32_t val, uint64_t deadline);
void sim_futex_wake(_Atomic uint32_t *word, int n);
/*
 * Sleep while *@priv is 0 (a private futex) and each shared 32-bit word
 * @shared[i] holds @vals[i], until woken, @deadline or a signal: 0,
 * -ETIMEDOUT, -EINTR, -EAGAIN (a value differed). Up to 127 words. Without
 * futex_waitv() the sleep on @priv alone lasts at most SIM_SHARED_POLL_NS.
 */
int sim_futex_waitv(_Atomic uint32_t *priv, const uint32_t *const *shared, const uint32_t *vals,
		    unsigned int n, uint64_t deadline);
/* Wake every waiter of the shared futex at @word (any process's mapping of it). */
void sim_futex_wake_shared(const void *word);
/* Block every signal of the calling thread; restore the mask. */
void sim_sigblock(sigset_t *old);
void sim_sigrestore(const sigset_t *old);

/*
 * The read side of the lock-free lookups (fd -> file, handle -> object,
 * queue id -> queue), an SRCU of two counters: a reader holds it for a
 * short section without sleeping and may use what it looked up only
 * inside it (or takes a reference there). A writer unpublishes a pointer,
 * then sim_srcu_synchronize() waits for every reader that may have seen
 * it, then drops the table's reference. Readers never block: they may run
 * in a signal handler.
 */
unsigned int sim_srcu_read_lock(void);
void sim_srcu_read_unlock(unsigned int idx);
void sim_srcu_synchronize(void);

/*
 * Register the fork handler (once per process, before the sim makes
 * anything): in a child, every global structure of the sim is reset
 * (sim_*_fork_child()), so the child has a sim of its own.
 */
void sim_fork_init(void);
/* The child's resets, one per file's globals; run with one thread, right after fork(). */
void sim_bus_fork_child(void);
void sim_transport_fork_child(void);
void sim_bo_fork_child(void);
void sim_signal_fork_child(void);
void sim_engines_fork_child(void);

/* ---- settings (sim_bus.c) ---- */

/*
 * struct sim_config - a device's settings, the module's (kmod/vaccel_config.h):
 * keys, defaults and ranges of new_device (Documentation/devices.rst).
 */
struct sim_config {
	uint64_t engines;
	uint64_t memory;
	uint64_t link_bw_mbps;
	uint64_t link_latency_ns;
	uint64_t poll_budget_ns;
};

/* ---- statistics and knobs (as debugfs "stats" and the fault knobs) ---- */

struct sim_stats {
	_Atomic uint64_t packets, bytes, faults, kicks, sleeps, wakeups, resets, splits,
		split_helps, split_self_helps, split_host_helps, signal_wakes, signal_walked,
		signal_walk_max,
		link_bytes, link_ns, fpu_sections, fpu_ns, fpu_max_ns, fpu_over_100us,
		fpu_over_1ms, inline_turns, inline_wakes, signal_shared_wakes;
};

/*
 * The fault knobs (kmod/vaccel_debugfs.c): how many of the next buffer
 * creations, binds and queue creations fail with -ENOMEM and device
 * accesses fault (INJECTED); latency added before each step; the split
 * knobs. Atomics: set by accel_device_debug_write(), read by everyone.
 */
struct sim_knobs {
	atomic_int fail_bo_create, fail_vm_bind, fail_queue_create, fault_access;
	_Atomic uint64_t packet_latency_ns;
	atomic_bool foreign_import_mmap;
	atomic_bool inline_kick;
	atomic_int split_owner_yield;
	_Atomic uint32_t split_stall_engine;
	_Atomic uint64_t split_stall_ns;
};

/* Consume one injected failure; true if this call must fail (vaccel_inject()). */
static inline bool sim_inject(atomic_int *knob)
{
	int v = atomic_load(knob);

	while (v > 0)
		if (atomic_compare_exchange_weak(knob, &v, v - 1))
			return true;
	return false;
}

/* Live objects of the process, the module's debugfs "objects". */
struct sim_objects {
	atomic_int bus_devices, devices, files, bos, mappings, queues;
};
extern struct sim_objects sim_objects;

/* ---- signals: per-word waiters (sim_signal.c) ---- */

enum sim_waiter_kind {
	SIM_W_HOST,	/* a WAIT_SIGNALS caller: @owner is its struct sim_hwait */
	SIM_W_QUEUE,	/* a queue blocked in WAIT: @owner is the struct sim_queue */
	SIM_W_ARM,	/* an armed eventfd: @owner is the struct sim_arm */
};

/**
 * struct sim_waiter - interest in one signal word
 * @node: on the word's bucket while armed (under the bucket lock)
 * @word: the word's address in its owner object's engine mapping (the
 *	key; the same whichever import or handle the word is reached through)
 * @bucket: index of that bucket
 * @armed: on a bucket (an arm's wake-up takes it off itself)
 * @host: woken only by updates that wake the host (SIGNAL_WRITE, packets
 *	with DRM_VACCEL_PKT_IRQ)
 * @kind: what @owner is
 * @owner: the waiting object
 *
 * Armed and disarmed by its owner's thread; @node and @armed change under
 * the bucket lock.
 */
struct sim_waiter {
	struct list node;
	const void *word;
	unsigned int bucket;
	bool armed;
	bool host;
	enum sim_waiter_kind kind;
	void *owner;
};

/**
 * struct sim_hwait - a host waiter (WAIT_SIGNALS): the futex it sleeps on
 * @futex: 0 while it may sleep; wakers store 1 and wake it
 * @dev_node: on its device's @event_waiters (under the device's event
 *	lock), so that a queue fault or the removal wakes it
 */
struct sim_hwait {
	_Atomic uint32_t futex;
	struct list dev_node;
};

/**
 * struct sim_arm - an eventfd armed on a signal condition (SIGNAL_EVENTFD)
 * @w: its waiter
 * @node: on the file's arms list (under the arms lock)
 * @efd: the sim's own duplicate of the eventfd
 * @bo: the signal object, referenced: keeps @word mapped
 * @word: the word
 * @cond: the condition (copied, validated)
 * @flags: DRM_VACCEL_EVENTFD_*
 * @id: returned for CANCEL
 * @fired: the eventfd was written; set once
 */
struct sim_arm {
	struct sim_waiter w;
	struct list node;
	int efd;
	struct sim_bo *bo;
	const uint64_t *word;
	struct drm_vaccel_signal_cond cond;
	uint32_t flags;
	uint64_t id;
	atomic_int fired;
};

/**
 * struct sim_arms - a file's armed eventfds
 * @lock: protects @list, @count and @next_id; taken with signals blocked
 *	on user threads (device events take it from engine threads)
 */
struct sim_arms {
	pthread_mutex_t lock;
	struct list list;
	unsigned int count;
	uint64_t next_id;
};

/* ---- buffer objects (sim_bo.c) ---- */

/**
 * struct sim_bo - a buffer object: an owner, or an import of one
 * @refs: handles, device mappings, host mappings, eventfd arms, imports
 *	(of an owner) and calls in flight; the object goes with the last
 * @owner: NULL for an owner; for an import, the owner (referenced)
 * @dev: a local owner's device (referenced), charged @size of its
 *	capacity until the object goes; NULL otherwise
 * @fd: an owner's memfd (the "dma-buf"): O_RDWR for a local owner, as
 *	given for a foreign one; -1 for an import
 * @fd_writable: an owner's @fd is writable
 * @kmap: the engine's mapping of the whole owner (read-write; read-only
 *	once sealed or for a read-only foreign owner); an import's is its
 *	owner's
 * @size: bytes, a multiple of the page size
 * @flags: DRM_VACCEL_BO_* the owner was created with (a foreign owner's
 *	come from its memfd's name); an import's are its owner's
 * @foreign: an owner made of another process's memfd (imported over a
 *	socket): its words change without this process knowing
 * @exported: an owner whose memfd was exported: another process may map
 *	it (set once, never cleared)
 * @read_only: an import of a read-only dma-buf: nothing writes through it
 * @mmap_offset: the mmap() offset of the object, unique in the process
 * @st_dev: an owner's memfd's device and inode: the registry key
 * @st_ino: see @st_dev
 * @reg_node: an owner's entry in the registry of owners by inode
 * @off_next: the chain of the registry of objects by @mmap_offset
 * @seal_lock: an owner's: protects @writable_mmaps, @writable_binds and
 *	the change of @sealed
 * @sealed: nothing may write the owner any more; never cleared (read
 *	without the lock)
 * @writable_mmaps: host mappings of the owner (or of its imports) that
 *	are writable, made through a device file
 * @writable_binds: device mappings with DRM_VACCEL_VM_WRITE, on any
 *	device of the process
 *
 * Everything but @refs, @sealed and the counters under @seal_lock is set
 * before the object is published and never changes.
 */
struct sim_bo {
	atomic_long refs;
	struct sim_bo *owner;
	struct sim_dev *dev;
	int fd;
	bool fd_writable;
	uint8_t *kmap;
	uint64_t size;
	uint32_t flags;
	bool foreign;
	atomic_bool exported;
	bool read_only;
	uint64_t mmap_offset;
	dev_t st_dev;
	ino_t st_ino;
	struct list reg_node;
	struct sim_bo *off_next;
	pthread_mutex_t seal_lock;
	atomic_bool sealed;
	unsigned int writable_mmaps;
	unsigned int writable_binds;
};

/* The owner of @bo (itself for an owner). */
static inline struct sim_bo *sim_bo_owner(struct sim_bo *bo)
{
	return bo->owner ? bo->owner : bo;
}

/* Another process may write @bo's memory: its signals wake through shared futexes too. */
static inline bool sim_bo_shared(struct sim_bo *bo)
{
	struct sim_bo *o = sim_bo_owner(bo);

	return o->foreign || atomic_load_explicit(&o->exported, memory_order_relaxed);
}

/* ---- the VA space (sim_vm.c) ---- */

/**
 * struct sim_map - one VM_BIND mapping
 * @refs: one for being bound, one per translation in use and per TLB entry
 * @va: device address of its first byte
 * @size: bytes
 * @bo_offset: offset of @va in @bo
 * @access: DRM_VACCEL_VM_READ and/or _WRITE
 * @bo: the mapped object, referenced
 * @ptr: the engine's address of @va (the owner's @kmap + @bo_offset)
 * @remote: the memory is another device's (or process's): the link model
 *	charges accesses
 *
 * Immutable once bound. Unbinding removes it from the VM and drops the
 * bound reference: @bo (so the memory @ptr points into) goes with the last.
 */
struct sim_map {
	atomic_long refs;
	uint64_t va;
	uint64_t size;
	uint64_t bo_offset;
	uint32_t access;
	struct sim_bo *bo;
	uint8_t *ptr;
	bool remote;
};

/**
 * struct sim_vm - the device VA space of one file (context)
 * @lock: protects @maps and @n; held for lookups, binds and unbinds only
 * @maps: the mappings, sorted by @va, referenced
 * @n: entries of @maps
 * @cap: its allocated size
 * @gen: bumped under @lock when a mapping is removed, so that TLBs know
 *	their entries may be stale
 */
struct sim_vm {
	pthread_mutex_t lock;
	struct sim_map **maps;
	unsigned int n, cap;
	_Atomic uint64_t gen;
};

#define SIM_TLB_SIZE	8

/**
 * struct sim_tlb - the mappings one queue's engine used last, referenced
 *
 * Touched only in turns of the queue (under the engine lock: its engine
 * thread's, or inline turns in another thread, sim_turn_engine);
 * VM_UNBIND drops stale entries under that lock (sim_queues_tlb_flush()).
 */
struct sim_tlb {
	struct sim_map *map[SIM_TLB_SIZE];
	uint64_t gen[SIM_TLB_SIZE];
	unsigned int next;
};

/* ---- engines and queues (sim_engine.c, sim_queue.c) ---- */

/**
 * struct sim_acct - an engine's time as credited to files (per-client
 * statistics, the module's struct vaccel_engine_acct)
 * @lock: protects the fields, each queue's @acct_* and the engine's entry
 *	of each file's @engine_ns; a leaf
 */
struct sim_acct {
	pthread_mutex_t lock;
	uint64_t cursor;
	struct sim_file *cur;
	uint64_t cur_from;
	bool cur_seen;
	struct list busy;
};

/**
 * struct sim_engine - one engine: a thread of the process
 * @dev: its device
 * @thread: the thread, valid while @running
 * @running: the thread was started and not joined
 * @index: engine number on the device
 * @lock: protects @queues; held by the thread during each turn (never
 *	while it sleeps), so removing a queue waits for at most one turn
 * @queues: the struct sim_queue it runs (@node)
 * @wake: the futex the thread sleeps on; wakers store 1 before they look
 *	at @sleeping (see sim_engine.c)
 * @sleeping: the thread is (about to be) asleep
 * @stall_until: an injected stall ends then (sim_now()); 0: none
 * @stop: the thread must exit
 * @helping: the thread runs ranges of another engine's split job (only
 *	the thread touches it)
 * @polling: the thread holds one of the process's poller slots
 * @sleeps: times it went to sleep
 * @wakeups: times it woke from a sleep
 * @acct: its time as credited to files
 */
struct sim_engine {
	struct sim_dev *dev;
	pthread_t thread;
	bool running;
	unsigned int index;
	pthread_mutex_t lock;
	struct list queues;
	_Atomic uint32_t wake;
	atomic_bool sleeping;
	_Atomic uint64_t stall_until;
	atomic_bool stop;
	atomic_bool helping;
	bool polling;
	_Atomic uint64_t sleep_until;
	_Atomic uint64_t sleeps, wakeups;
	struct sim_acct acct;
};

struct sim_split;

/**
 * struct sim_queue - a user-mode queue (the module's struct vaccel_queue)
 * @file: its file
 * @engine: the engine that runs it
 * @id: its id in the file
 * @node: on @engine's queues (under the engine lock)
 * @core: the executor's state: only @engine's thread touches it, in turns
 * @fd: memfd of its two pages: the doorbell (page 0) and control (page 1)
 * @pages: the engine's mapping of both (read-write)
 * @doorbell: the write index user space stores
 * @ctrl: the control page
 * @write_index: the highest doorbell value accepted (engine thread)
 * @priority: DRM_VACCEL_QUEUE_PRIORITY_*
 * @blocked: the last turn stopped at an unsatisfied WAIT (engine thread)
 * @wait: its waiter on the word a blocked WAIT reads (engine thread)
 * @wait_word: the word the last WAIT step read
 * @wait_shared: that word may be written by another process: the engine
 *	also sleeps on it as a shared futex (SIM_SHARED_BACKSTOP_NS)
 * @wait_val: the low 32 bits of the value that WAIT step read
 * @wait_poll: blocked but @wait could not be armed (bucket full): polled
 * @charge_ns: modelled link time charged since the core collected it
 *	(atomic: split ranges run on other engines)
 * @link_from: sim_now() at the first access charged to @charge_ns, 0: none;
 *	the transfer's time runs from there (atomic, as @charge_ns)
 * @turns_left: turns left in the current pass (engine lock)
 * @latency_paid: the injected latency of the next step was charged
 * @acct_from: start of the modelled time attributed to the queue (acct lock)
 * @acct_to: its end
 * @acct_node: on the engine's acct busy list while attributed
 * @split: the split job of the current bulk packet, or NULL
 * @dead: off its engine, being destroyed: no turn runs it (engine lock)
 * @tlb: the engine thread's translation cache for this queue
 *
 * Published in its file's @queues (read lock-free under the SRCU) after it
 * is on its engine's list; freed after it is off both and a grace period.
 */
struct sim_queue {
	struct sim_file *file;
	struct sim_engine *engine;
	uint32_t id;
	struct list node;
	struct vaccel_core_queue core;
	int fd;
	uint8_t *pages;
	uint64_t *doorbell;
	struct drm_vaccel_queue_control *ctrl;
	uint64_t write_index;
	uint32_t priority;
	bool blocked;
	struct sim_waiter wait;
	const void *wait_word;
	bool wait_shared;
	uint32_t wait_val;
	bool wait_poll;
	_Atomic uint64_t charge_ns;
	_Atomic uint64_t link_from;
	unsigned int turns_left;
	bool latency_paid;
	uint64_t acct_from, acct_to;
	struct list acct_node;
	struct sim_split *split;
	bool dead;
	struct sim_tlb tlb;
};

/* ---- devices and files ---- */

/**
 * struct sim_dev - a device of the process (the module's vaccel_device)
 * @refs: the bus's (until removal), each file's, each local buffer
 *	object's; freed with the last
 * @id: the id given at creation
 * @cfg: settings, immutable
 * @removed: removed from the bus: every call fails with -ENODEV
 * @inflight: calls between sim_dev_enter() and sim_dev_exit(): the
 *	removal waits for them (drm_dev_enter()/drm_dev_unplug())
 * @mem_used: bytes of @cfg.memory taken by buffer objects
 * @mem_pinned: bytes of persistent and signal objects
 * @next_ctx_id: ids of files
 * @next_engine: round-robin placement of queues
 * @lock: protects @files and the start of the engines
 * @files: the open files (struct sim_file.node)
 * @engines_started: the engine threads run (they start with the first
 *	queue, under @lock, and end with the removal)
 * @engines: @cfg.engines engines
 * @split_lock: protects @splits and each job's @listed
 * @splits: bulk packets split across engines
 * @nsplits: jobs on @splits (changed under @split_lock, read without it:
 *	a host thread's look for ranges to help with costs no lock when
 *	there are none)
 * @event_lock: protects @event_waiters; taken with signals blocked
 * @event_waiters: host waiters to wake on a queue fault and on removal
 * @stats: debugfs "stats"
 * @knobs: the fault knobs
 */
struct sim_dev {
	atomic_long refs;
	unsigned int id;
	struct sim_config cfg;
	atomic_bool removed;
	atomic_long inflight;
	_Atomic uint64_t mem_used;
	_Atomic uint64_t mem_pinned;
	atomic_uint next_ctx_id;
	atomic_uint next_engine;
	pthread_mutex_t lock;
	struct list files;
	bool engines_started;
	struct sim_engine *engines;
	pthread_mutex_t split_lock;
	struct list splits;
	atomic_uint nsplits;
	pthread_mutex_t event_lock;
	struct list event_waiters;
	struct sim_stats stats;
	struct sim_knobs knobs;
};

/**
 * struct sim_file - an open device file: one context
 * @refs: the file table's (while @nfds > 0), one per call in flight that
 *	took one; the file closes with the last (its queues, mappings,
 *	handles and arms go, as in the module's postclose)
 * @fd: the sim's own descriptor of the file's memfd: keeps its inode, the
 *	file's identity, alive (and unique) as long as the structure
 * @st_dev: the identity: the memfd's device and inode (fstat()), which
 * @st_ino: every dup() of an fd of the file shares; the file table is
 *	keyed by it, never by fd number
 * @id_next: next in the file table's bucket (sim_transport.c)
 * @nfds: descriptors the sim handed out for it (open, dup) and not yet
 *	closed through it (the fd table's lock); the file leaves the file
 *	table when it reaches 0
 * @dev: the device, referenced
 * @id: the context id
 * @read_only: opened read-only: no writable mapping
 * @pid: the opener, for "contexts"
 * @node: on @dev's files (device lock)
 * @lock: serialises changes of @handles, @num_bos and @queues
 * @handles: GEM handle h is @handles[h - 1]: an object reference while
 *	set; read lock-free under the SRCU, cleared then released after a
 *	grace period
 * @num_bos: handles held
 * @vm: the VA space
 * @queues: queue id i is @queues[i], read like @handles
 * @queues_lock: held while freeing queues and while flushing their TLBs
 * @arms: armed eventfds
 * @engine_ns: engine time credited per engine (each engine's acct lock)
 */
struct sim_file {
	atomic_long refs;
	int fd;
	dev_t st_dev;
	ino_t st_ino;
	_Atomic(struct sim_file *) id_next;
	unsigned int nfds;
	struct sim_dev *dev;
	unsigned int id;
	bool read_only;
	pid_t pid;
	struct list node;
	pthread_mutex_t lock;
	_Atomic(struct sim_bo *) handles[SIM_MAX_BOS];
	unsigned int num_bos;
	struct sim_vm vm;
	_Atomic(struct sim_queue *) queues[SIM_MAX_QUEUES];
	pthread_mutex_t queues_lock;
	struct sim_arms arms;
	uint64_t *engine_ns;
};

/* ---- sim_bus.c ---- */

void sim_config_init(struct sim_config *cfg);
/* Apply "key=value" words (modified in place): 0 or -EINVAL (logged as new_device does). */
int sim_config_parse(struct sim_config *cfg, char *words);
/* The bus: devices from ACCEL_SIM_DEVICES at first use; 0 or the sticky -errno. */
int sim_bus_init(void);
/* The device with @id, referenced, or NULL. */
struct sim_dev *sim_dev_get(unsigned int id);
void sim_dev_ref(struct sim_dev *dev);
void sim_dev_put(struct sim_dev *dev);
/* Start the engine threads of @dev if they do not run yet (device lock taken). */
int sim_dev_start_engines(struct sim_dev *dev);
/* A call that creates something entered: false (-ENODEV) once the device is removed. */
bool sim_dev_enter(struct sim_dev *dev);
void sim_dev_exit(struct sim_dev *dev);

/* ---- sim_transport.c ---- */

/* The file of @fd, referenced (sim_file_put()), or NULL. */
struct sim_file *sim_file_get(int fd);
void sim_file_put(struct sim_file *f);
/*
 * Under the SRCU read lock: the file @fd names (by the identity of what
 * it names, so a dup() of a file's fd finds it and an fd number reused
 * for something else does not), unreferenced, or NULL.
 */
struct sim_file *sim_file_lookup(int fd);
/* @f's object of GEM handle @h, under the SRCU read lock, or NULL. */
struct sim_bo *sim_handle_lookup(struct sim_file *f, uint32_t h);
/* A new handle of @f for @bo (a reference taken): 0 or -ENOSPC. File lock held. */
int sim_handle_add(struct sim_file *f, struct sim_bo *bo, uint32_t *handle);
/* The file's object of handle @h, referenced (sim_bo_put()), or NULL. */
struct sim_bo *sim_handle_get(struct sim_file *f, uint32_t h);

/* ---- sim_bo.c ---- */

int sim_bo_create(struct sim_file *f, struct drm_vaccel_bo_create *c);
int sim_bo_info(struct sim_file *f, struct drm_vaccel_bo_info *i);
int sim_bo_seal(struct sim_file *f, struct drm_vaccel_bo_seal *s);
int sim_gem_close(struct sim_file *f, struct drm_gem_close *c);
void sim_bo_ref(struct sim_bo *bo);
void sim_bo_put(struct sim_bo *bo);
/* Register a writable device mapping (-EACCES if sealed or read-only); drop it. */
int sim_bo_get_write(struct sim_bo *bo);
void sim_bo_put_write(struct sim_bo *bo);
/* The owner is sealed (a foreign one: as its memfd's seals say now). */
bool sim_bo_sealed(struct sim_bo *bo);
int sim_prime_export(struct sim_file *f, uint32_t handle, int writable, int *dmabuf, bool local);
int sim_prime_import(struct sim_file *f, int dmabuf, uint32_t *handle);
/* Host mappings of an object of @f at @offset (sim_transport.c keeps the list). */
int sim_bo_mmap(struct sim_file *f, uint64_t offset, size_t len, int prot, void **addr,
		struct sim_bo **bop);
/* Remap @addr (a mapping of @bo) with @prot in one step; the writable count follows. */
int sim_bo_remap(struct sim_bo *bo, void *addr, size_t len, int prot, bool was_writable);
void sim_bo_unmapped(struct sim_bo *bo, bool writable);

/* ---- sim_vm.c ---- */

void sim_vm_init(struct sim_vm *vm);
void sim_vm_fini(struct sim_vm *vm);
int sim_vm_bind(struct sim_file *f, struct drm_vaccel_vm_bind *b);
int sim_vm_unbind(struct sim_file *f, struct drm_vaccel_vm_unbind *u);
/*
 * [@va, @va + @len) with @access: the engine address, the mapping
 * (referenced: sim_map_put()) in *@mapp, and in *@avail (if not NULL) how
 * many bytes from @va lie in it. NULL with *@err -EFAULT (unmapped) or
 * -EACCES (access).
 */
void *sim_vm_translate(struct sim_vm *vm, uint64_t va, uint64_t len, uint32_t access,
		       struct sim_map **mapp, uint64_t *avail, int *err);
void *sim_vm_translate_tlb(struct sim_vm *vm, struct sim_tlb *tlb, uint64_t va, uint64_t len,
			   uint32_t access, struct sim_map **mapp, uint64_t *avail, bool *held,
			   int *err);
void sim_vm_tlb_flush(struct sim_vm *vm, struct sim_tlb *tlb, bool all);
void sim_map_put(struct sim_map *map);
unsigned int sim_vm_count(struct sim_vm *vm);

/* ---- sim_queue.c ---- */

int sim_queue_create(struct sim_file *f, struct drm_vaccel_queue_create *c);
int sim_queue_destroy(struct sim_file *f, struct drm_vaccel_queue_destroy *d);
int sim_queue_query(struct sim_file *f, struct drm_vaccel_queue_query *q);
int sim_kick(struct sim_file *f, struct drm_vaccel_kick *k);
void sim_queues_fini(struct sim_file *f);
void sim_queues_tlb_flush(struct sim_file *f);
/* A file's queue page mapping (doorbell or control) at @offset. */
int sim_queue_mmap(struct sim_file *f, uint64_t offset, size_t len, int prot, void **addr);
/* A queue of the file is not running. */
bool sim_file_faulted(struct sim_file *f);
/* Engine time credited to @f, now (fdinfo's drm-engine-compute). */
uint64_t sim_acct_read(struct sim_file *f);
void sim_acct_begin(struct sim_engine *e, struct sim_file *f, uint64_t now);
uint64_t sim_acct_end(struct sim_engine *e, bool ran);
void sim_acct_model(struct sim_queue *q, uint64_t until, uint64_t end);
void sim_acct_queue_fini(struct sim_queue *q);

/* ---- sim_engine.c ---- */

/* The engine whose thread this is, NULL on other threads. */
extern _Thread_local struct sim_engine *sim_cur_engine;
extern _Thread_local struct sim_engine *sim_turn_engine;

/* The process's poller slots, pollers now and at most so far, engine threads running. */
void sim_pollers_read(int *slots, int *now, int *max, int *threads);
int sim_engines_start(struct sim_dev *dev);
void sim_engines_stop(struct sim_dev *dev);
void sim_engine_wake(struct sim_engine *e);
void sim_queue_kick(struct sim_queue *q);
void sim_queue_wake(struct sim_queue *q);
bool sim_signal_in_section(void);
bool sim_inline_default(void);
void sim_queue_fault(struct sim_queue *q);
void sim_queue_stop(struct sim_queue *q, uint32_t code);
int sim_engine_stall_set(struct sim_engine *e, uint64_t ns);
int sim_device_force_fault(struct sim_dev *dev, uint32_t ctx, uint32_t id);
int sim_device_reset(struct sim_dev *dev);
void sim_device_lost(struct sim_dev *dev);
bool sim_queue_idle(struct sim_queue *q);

/* ---- sim_split.c ---- */

bool sim_split_start(struct sim_queue *q);
bool sim_split_run(struct sim_queue *q, uint64_t deadline);
bool sim_split_help(struct sim_engine *e, uint64_t deadline);
int sim_split_host_help(struct sim_dev *dev, uint64_t deadline);
bool sim_split_any(void);
void sim_split_fork_child(void);
bool sim_split_waiting(struct sim_queue *q);
bool sim_split_pending(struct sim_dev *dev, struct sim_engine *e);
void sim_split_stop(struct sim_queue *q);
void sim_split_cancel(struct sim_queue *q);

/* ---- sim_signal.c ---- */

void sim_signal_apply(uint64_t *word, uint32_t op, uint64_t value);
/*
 * @word (an owner's engine address) changed: wake its waiters (@host: also
 * host ones; @shared: also other processes', through the shared futex).
 */
void sim_signal_wake(struct sim_dev *dev, const void *word, bool host, bool shared);
/* Arm @w on @word: 0 or -ENOSPC (bucket full, left unarmed). Signals blocked or engine thread. */
int sim_waiter_arm(struct sim_waiter *w, const void *word);
void sim_waiter_disarm(struct sim_waiter *w);
/* A queue of @file faulted (@file set) or the device is gone (NULL): wake host waiters, fire arms. */
void sim_signal_device_event(struct sim_dev *dev, struct sim_file *file, bool fault);
void sim_arms_init(struct sim_arms *arms);
void sim_arms_fini(struct sim_arms *arms);
int sim_wait_signals(struct sim_file *f, struct drm_vaccel_wait_signals *w, bool restart);
int sim_signal_write(struct sim_file *f, struct drm_vaccel_signal_write *w);
int sim_signal_eventfd(struct sim_file *f, struct drm_vaccel_signal_eventfd *a);

/* ---- sim_knobs.c ---- */

/* debugfs "vm": the mappings of @vm, one line each (sim_vm.c) */
size_t sim_vm_show(struct sim_vm *vm, unsigned int ctx, char *buf, size_t len);

int sim_debug_write(struct sim_dev *dev, const char *knob, const char *value);
int sim_debug_read(struct sim_dev *dev, struct sim_file *f, const char *file, char *buf,
		   size_t len);

/*
 * Wake-ups a SIGNAL_WRITE in a signal handler left to the thread it
 * interrupted inside a bucket section (sim_signal.c, bucket_defer()): a
 * counter for the tests, process-wide.
 */
extern atomic_ulong sim_signal_deferred;
/* The signal buckets, ready: at every open, before the file can be used (sim_signal.c). */
void sim_signal_init(void);

#endif /* ACCEL_SIM_INTERNAL_H */
