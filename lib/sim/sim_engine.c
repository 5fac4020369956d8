// SPDX-License-Identifier: MIT
/*
 * Engines of the in-process device: one thread each, running the queues
 * assigned to it in turns (a bounded number of steps per queue per pass,
 * 1, 4 or 16 turns by priority) and helping other engines' split packets
 * when it has nothing of its own: kmod/vaccel_engine.c, with a futex in
 * place of the kernel's sleep and wake_up_process().
 *
 * The doorbell protocol, engine side (Documentation/queues.rst): an
 * engine that found no work for the device's poll budget (1) sets
 * need_wakeup in every control page of its queues, (2) calls membarrier()
 * (lib/membarrier.c) and issues a full fence, (3) reads every doorbell
 * again and (4) sleeps only if none moved and nobody woke it. The
 * submitter stores the doorbell, then reads need_wakeup, with only a
 * compiler barrier between (the barrier membarrier() forces on its thread
 * stands in for its own fence; with ACCEL_DOORBELL_FENCE=full, a full
 * fence): one of the two sees the other's store.
 * A waker (KICK, a signal a blocked queue waits on, a split job, a stall
 * change, the removal) stores @wake = 1 and then looks at @sleeping; the
 * thread stores @sleeping and then exchanges @wake with 0, both
 * sequentially consistent, and sleeps in FUTEX_WAIT only while @wake is
 * still 0: a wake-up between (3) and (4) is not lost either.
 *
 * Threads outnumbering cores (several devices, several engines each,
 * submitting threads): an engine polls only while it holds one of the
 * process's poller slots (half the online CPUs, at least one) and has not
 * been preempted while it polled (its involuntary context switches did
 * not grow: someone else wanted its CPU); otherwise it sleeps at once, as
 * the module's engine does when another task is runnable on its CPU.
 * While it polls it looks at its queues with a pause between two looks;
 * every SIM_POLL_CHECK looks it yields the CPU and compares its
 * involuntary context switches with the first such check's: no syscall
 * between a doorbell and the engine seeing it. So idle engines never take the CPU from the work, and the process
 * cannot livelock on its own engines.
 *
 * Time never passes under the engine lock: DELAY, the link model and
 * injected latency make a queue busy until a deadline; the engine runs
 * its other queues meanwhile and, with nothing else to do, sleeps until
 * the earliest deadline.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sim_internal.h"

_Thread_local struct sim_engine *sim_cur_engine;
/*
 * The engine whose queue this thread runs a turn of (sim_queue_run(),
 * always under that engine's lock: its own thread's turn or an inline
 * turn of a KICK or of another engine's thread), or NULL. A queue's TLB
 * may be used only then (struct sim_tlb).
 */
_Thread_local struct sim_engine *sim_turn_engine;

/*
 * The queues this thread's turns released (a signal satisfied their
 * WAIT) and will run a turn of: see "a kicked queue run by the kicking
 * thread" below. @depth: the list is open (a KICK's or an engine's turn).
 */
#define SIM_INLINE_MAX		32u

static _Thread_local struct {
	unsigned int depth;
	atomic_uint n;
	struct sim_queue *q[SIM_INLINE_MAX];
} inl;

static void sim_inline_drain(void);

/* ---- poller slots ---- */

static atomic_int sim_pollers, sim_pollers_max, sim_engine_threads;
static int sim_max_pollers;
static pthread_once_t sim_pollers_once = PTHREAD_ONCE_INIT;

/* In a child (fork()): none of the parent's engine threads exists there. */
void sim_engines_fork_child(void)
{
	atomic_store(&sim_pollers, 0);
	atomic_store(&sim_pollers_max, 0);
	atomic_store(&sim_engine_threads, 0);
}

static void sim_pollers_init(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	sim_max_pollers = n >= 4 ? (int)(n / 2) : 1;
}

static bool sim_poll_take(struct sim_engine *e)
{
	int n;

	if (e->polling)
		return true;
	pthread_once(&sim_pollers_once, sim_pollers_init);
	n = atomic_load(&sim_pollers);
	while (n < sim_max_pollers)
		if (atomic_compare_exchange_weak(&sim_pollers, &n, n + 1)) {
			int max = atomic_load(&sim_pollers_max);

			while (n + 1 > max && !atomic_compare_exchange_weak(&sim_pollers_max, &max, n + 1))
				;
			e->polling = true;
			return true;
		}
	return false;
}

void sim_pollers_read(int *slots, int *now, int *max, int *threads)
{
	pthread_once(&sim_pollers_once, sim_pollers_init);
	*slots = sim_max_pollers;
	*now = atomic_load(&sim_pollers);
	*max = atomic_load(&sim_pollers_max);
	*threads = atomic_load(&sim_engine_threads);
}

static void sim_poll_release(struct sim_engine *e)
{
	if (e->polling) {
		atomic_fetch_sub(&sim_pollers, 1);
		e->polling = false;
	}
}

/*
 * Looks at the queues between two preemption checks (and yields) of a
 * polling engine: two syscalls, each a microsecond or more where
 * syscalls are expensive, so not between every two looks (issue 15: a
 * getrusage() at the start of each poll and a sched_yield() after every
 * look put two of them between a doorbell and the engine noticing it).
 */
#define SIM_POLL_CHECK	64u

static inline void sim_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/* The calling thread's involuntary context switches. */
static long sim_preemptions(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nivcsw;
}

/* ---- wake-ups ---- */

void sim_engine_wake(struct sim_engine *e)
{
	/* @wake before @sleeping, both sequentially consistent: see the top */
	atomic_store(&e->wake, 1);
	if (atomic_load(&e->sleeping))
		sim_futex_wake(&e->wake, 1);
}

/*
 * Publish a queue's fault and stop it (its engine's thread, or its engine
 * lock held): the record first, then the state with release.
 */
void sim_queue_fault(struct sim_queue *q)
{
	struct drm_vaccel_queue_control *c = q->ctrl;
	struct vaccel_core_queue *core = &q->core;

	__atomic_store_n(&c->fault, core->fault, __ATOMIC_RELAXED);
	__atomic_store_n(&c->fault_index, core->fault_index, __ATOMIC_RELAXED);
	__atomic_store_n(&c->fault_addr, core->fault_addr, __ATOMIC_RELAXED);
	__atomic_store_n(&c->fault_depth, core->fault_depth, __ATOMIC_RELAXED);
	__atomic_store_n(&c->fault_binding, core->fault_binding, __ATOMIC_RELAXED);
	__atomic_store_n(&c->fault_exec_index, core->fault_exec_index, __ATOMIC_RELAXED);
	__atomic_store_n(&c->state, DRM_VACCEL_QUEUE_ERROR, __ATOMIC_RELEASE);
	sim_split_stop(q);
	atomic_fetch_add(&q->file->dev->stats.faults, 1);
	sim_signal_device_event(q->file->dev, q->file, true);
	acc_info("vaccel-sim %u: ctx %u queue %u faulted: fault %u at ring index %llu, address 0x%llx",
		 q->file->dev->id, q->file->id, q->id, core->fault,
		 (unsigned long long)core->fault_index, (unsigned long long)core->fault_addr);
}

/* Stop @q with @code for a reason outside its packets (doorbell, injection, reset, removal). */
void sim_queue_stop(struct sim_queue *q, uint32_t code)
{
	struct vaccel_core_queue *core = &q->core;

	core->fault = code;
	core->fault_index = core->read_index;
	core->fault_addr = 0;
	core->fault_depth = core->depth;
	core->fault_exec_index = core->depth ? core->frames[core->depth - 1].next - 1 : 0;
	core->fault_binding = 0;
	sim_queue_fault(q);
}

/* The doorbell's new value, or false if the queue faulted on it. */
static bool sim_queue_doorbell(struct sim_queue *q)
{
	/* pairs with the submitter's store-release: the packets before the index */
	uint64_t db = __atomic_load_n(q->doorbell, __ATOMIC_ACQUIRE);

	/* backward and repeated values are ignored */
	if (db <= q->write_index)
		return true;
	if (db - q->core.read_index > q->core.ring_size) {
		sim_queue_stop(q, DRM_VACCEL_FAULT_DOORBELL);
		return false;
	}
	__atomic_store_n(&q->write_index, db, __ATOMIC_RELAXED);
	return true;
}

bool sim_queue_idle(struct sim_queue *q)
{
	return q->write_index == q->core.read_index && !q->core.depth && !q->core.have_pkt;
}

/*
 * Keep the queue's waiter on the word its WAIT reads while it is blocked.
 * True when it was (re)armed: the caller looks at the word once more, as
 * an update between the WAIT's read and the arming woke nobody.
 */
static bool sim_queue_arm(struct sim_queue *q, bool blocked)
{
	const void *word = blocked ? q->wait_word : NULL;

	if (!blocked)
		q->wait_poll = false;
	if (q->wait.word == word)
		return false;
	sim_waiter_disarm(&q->wait);
	q->wait_poll = false;
	if (!word)
		return false;
	if (sim_waiter_arm(&q->wait, word)) {
		q->wait_poll = true;
		return false;
	}
	/* on the bucket before the word is read again: see sim_signal.c */
	atomic_thread_fence(memory_order_seq_cst);
	return true;
}

/* Injected per-step latency (knob packet_latency_ns): busy time before each step. */
static bool sim_queue_latency(struct sim_queue *q, uint64_t now)
{
	uint64_t latency = atomic_load_explicit(&q->file->dev->knobs.packet_latency_ns,
						memory_order_relaxed);

	if (!latency || q->latency_paid || q->core.busy_until > now)
		return false;
	q->core.busy_until = now + latency;
	q->latency_paid = true;
	return true;
}

static void sim_queue_account(struct sim_queue *q, uint64_t packets, uint64_t bytes)
{
	struct sim_dev *dev = q->file->dev;

	if (q->core.packets != packets)
		atomic_fetch_add_explicit(&dev->stats.packets, q->core.packets - packets,
					  memory_order_relaxed);
	if (q->core.bytes != bytes)
		atomic_fetch_add_explicit(&dev->stats.bytes, q->core.bytes - bytes,
					  memory_order_relaxed);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * One turn of @q (engine lock held): up to SIM_QUEUE_BUDGET steps or
 * SIM_QUEUE_TURN_NS; in a kicking thread (@inl: sim_queue_kick()) up to
 * SIM_INLINE_BUDGET steps or SIM_INLINE_NS, without splitting a bulk
 * packet and leaving need_wakeup alone (the engine still sleeps).
 */
static bool sim_queue_turn(struct sim_queue *q, uint64_t *next, bool inl)
{
	struct vaccel_core_queue *core = &q->core;
	uint64_t packets = core->packets, bytes = core->bytes, busy = core->busy_until;
	unsigned int budget = inl ? SIM_INLINE_BUDGET : SIM_QUEUE_BUDGET;
	enum vaccel_core_status st = VACCEL_CORE_IDLE;
	uint64_t start, now, turn_end, end;
	bool progress = false, blocked;

	/* a new queue starts with need_wakeup set; its engine is awake now */
	if (!inl && __builtin_expect(__atomic_load_n(&q->ctrl->need_wakeup, __ATOMIC_RELAXED), 0))
		__atomic_store_n(&q->ctrl->need_wakeup, 0, __ATOMIC_RELAXED);
	if (!sim_queue_doorbell(q))
		return true;
	if (sim_queue_idle(q))
		return false;

	start = sim_now();
	now = start;
	turn_end = start + (inl ? SIM_INLINE_NS : SIM_QUEUE_TURN_NS);
	sim_acct_begin(q->engine, q->file, start);
	if (q->split) {
		progress = sim_split_run(q, turn_end);
		if (q->split)
			goto out;
		now = sim_now();
	}
	while (budget) {
		if (sim_queue_latency(q, now)) {
			st = VACCEL_CORE_BUSY;
			break;
		}
		st = acc_sim_core_run(core, q->write_index, 1);
		if (st == VACCEL_CORE_BUSY)
			break;
		q->latency_paid = false;
		now = sim_now();
		if (st == VACCEL_CORE_BLOCKED && sim_queue_arm(q, true))
			continue;	/* read the word again, armed */
		if (st != VACCEL_CORE_BUDGET)
			break;
		budget--;
		progress = true;
		if (!inl && sim_split_start(q)) {
			sim_split_run(q, turn_end);
			break;
		}
		if (now >= turn_end)
			break;
	}
out:
	/* the packets' effects are visible before their completion is */
	__atomic_store_n(&q->ctrl->read_index, core->read_index, __ATOMIC_RELEASE);
	blocked = st == VACCEL_CORE_BLOCKED;
	sim_queue_arm(q, blocked);
	q->blocked = blocked;
	if (st == VACCEL_CORE_FAULT)
		sim_queue_fault(q);
	if (blocked && core->deadline)
		*next = min_u64(*next, core->deadline);
	if (blocked && q->wait_poll)
		*next = min_u64(*next, now + SIM_SIGNAL_POLL_NS);
	if (blocked && q->wait_shared)
		*next = min_u64(*next, now + SIM_SHARED_BACKSTOP_NS);
	if (core->busy_until)
		*next = min_u64(*next, core->busy_until);
	progress |= core->packets != packets || core->bytes != bytes || st == VACCEL_CORE_FAULT;
	sim_queue_account(q, packets, bytes);
	/*
	 * a turn that started a busy period (a DELAY) ran a step: credited,
	 * or the step's time from its start to @end would be missing from
	 * the modelled time (a 50 ms DELAY credited 49.990 ms in the VM)
	 */
	end = sim_acct_end(q->engine, progress || core->busy_until != busy);
	if (core->busy_until != busy && core->busy_until > now)
		sim_acct_model(q, core->busy_until, end);
	return progress;
}

/* sim_queue_turn() of a running queue, with sim_turn_engine set meanwhile (its TLB usable). */
static bool sim_queue_run(struct sim_queue *q, uint64_t *next, bool inl)
{
	bool progress;

	if (__atomic_load_n(&q->ctrl->state, __ATOMIC_RELAXED) != DRM_VACCEL_QUEUE_RUNNING)
		return false;
	sim_turn_engine = q->engine;
	progress = sim_queue_turn(q, next, inl);
	sim_turn_engine = NULL;
	return progress;
}

/*
 * One pass over the engine's queues: 1, 4 or 16 turns each by priority,
 * the lock taken per turn; a queue that used its turns (or had nothing to
 * do) moves to the tail.
 */
static bool sim_engine_pass(struct sim_engine *e, uint64_t *next)
{
	struct sim_queue *q;
	bool progress = false, ran;
	unsigned int idx;
	size_t i, n = 0;
	struct list *l;

	pthread_mutex_lock(&e->lock);
	for (l = e->queues.next; l != &e->queues; l = l->next)
		n += SIM_QUEUE_TURNS(container_of(l, struct sim_queue, node)->priority);
	pthread_mutex_unlock(&e->lock);
	for (i = 0; i < n && !atomic_load_explicit(&e->stop, memory_order_relaxed); i++) {
		/* the queues of the turn's list live until the drain (above) */
		idx = sim_srcu_read_lock();
		inl.depth++;
		pthread_mutex_lock(&e->lock);
		q = list_empty(&e->queues) ? NULL : container_of(e->queues.next, struct sim_queue,
								 node);
		if (q) {
			if (!q->turns_left)
				q->turns_left = SIM_QUEUE_TURNS(q->priority);
			ran = sim_queue_run(q, next, false);
			progress |= ran;
			if (!ran || !--q->turns_left) {
				q->turns_left = 0;
				list_del(&q->node);
				list_add_tail(&e->queues, &q->node);
			}
		}
		pthread_mutex_unlock(&e->lock);
		/* the other engines' queues this turn's signals released */
		sim_inline_drain();
		inl.depth--;
		sim_srcu_read_unlock(idx);
		if (!q)
			break;
	}
	return progress;
}

/* ---- a kicked queue run by the kicking thread ---- */

/*
 * KICK of a sleeping engine (the sim's only KICK caller is
 * accel_queue_submit(), never a signal handler): instead of a FUTEX_WAKE
 * and a context switch to the engine's thread, the kicking thread runs a
 * short turn of the queue itself (SIM_INLINE_BUDGET steps or
 * SIM_INLINE_NS, no split of a bulk packet), under the engine's lock as
 * the engine would, and so it does for the queues whose WAITs the turn's
 * signals satisfied (this thread's list, SIM_INLINE_MAX turns in all).
 * An engine thread does the same after each turn of its own (its list is
 * open during the turn only): a queue of another, sleeping, engine that
 * the turn's signals released gets its turn on this thread instead of a
 * futex wake-up of its engine.
 * The engine is woken for real only if work is left for it: packets it
 * can run now, a split, a stall, a deadline earlier than the one it
 * sleeps to (@sleep_until: an engine sleeps at most SIM_ENGINE_LAZY_NS,
 * so a collective's WAIT timeouts need no wake-up; a word of another
 * process does, for the engine to sleep on it), or an engine that is not
 * asleep. A hand-off between the queues of several devices (the ranks of
 * a collective) then costs a function call, not a futex wake-up and a
 * reschedule, which are most of a small collective's time when engine
 * threads outnumber the CPUs. The device knob inline_kick (default Y,
 * ACCEL_SIM_INLINE=0 makes it N) turns it off: the engines then do all
 * the work, as the module's.
 *
 * Lifetimes: a queue goes on the list during a bucket walk, while its
 * waiter is on the bucket. Destroying a queue takes it off its engine
 * (marked dead, under the engine lock: no turn runs it after that) and
 * its waiter off the bucket, then waits for an SRCU grace period before
 * it frees the memory (sim_queue_unlink(), sim_queue_free()). Every turn
 * that can fill a list runs inside an SRCU read section together with
 * the list's turns: KICK's (sim_ioctl_fast()), and an engine thread's
 * turn and its drain (sim_engine_pass()). So a queue on a list is
 * either not yet unlinked (it runs) or dead (skipped), never freed. The
 * list is the thread's; a signal handler interrupting a user thread adds
 * to it with an atomic count, reset by compare-and-swap (engine threads
 * block every signal).
 */
bool sim_inline_default(void)
{
	const char *v = getenv("ACCEL_SIM_INLINE");

	return !(v && !strcmp(v, "0"));
}

static bool sim_engine_pending(struct sim_engine *e, uint64_t now);

void sim_queue_wake(struct sim_queue *q)
{
	unsigned int i;

	if (inl.depth) {
		i = atomic_fetch_add_explicit(&inl.n, 1, memory_order_relaxed);
		if (i < SIM_INLINE_MAX) {
			inl.q[i] = q;
			atomic_signal_fence(memory_order_seq_cst);
			return;
		}
	}
	sim_engine_wake(q->engine);
}

/* One turn of @q in this thread; its engine woken if that leaves it work. */
static void sim_inline_turn(struct sim_queue *q)
{
	struct sim_engine *e = q->engine;
	struct sim_dev *dev = e->dev;
	uint64_t next = UINT64_MAX, su;
	bool wake;

	if (atomic_load(&e->stall_until) || atomic_load(&e->stop) ||
	    pthread_mutex_trylock(&e->lock)) {
		sim_engine_wake(e);
		return;
	}
	if (q->dead || q->split) {
		pthread_mutex_unlock(&e->lock);
		if (!q->dead)
			sim_engine_wake(e);
		return;
	}
	atomic_fetch_add_explicit(&dev->stats.inline_turns, 1, memory_order_relaxed);
	sim_queue_run(q, &next, true);
	wake = q->split || sim_engine_pending(e, sim_now());
	pthread_mutex_unlock(&e->lock);
	su = atomic_load(&e->sleep_until);
	if (wake || !su || next < su) {
		atomic_fetch_add_explicit(&dev->stats.inline_wakes, 1, memory_order_relaxed);
		sim_engine_wake(e);
	}
}

/*
 * The turns of the queues on this thread's list (woken by signals of the
 * turns before), then the list's reset. On an engine thread after each of
 * its own turns (sim_engine_pass(), the list open for that turn): a
 * sleeping engine's queue released by this engine's signal is run here;
 * one of its own engine is only woken (it is that engine's next turn).
 */
static void sim_inline_run_list(unsigned int turns)
{
	unsigned int done = 0, n, want;
	struct sim_queue *q;

	for (;;) {
		n = atomic_load_explicit(&inl.n, memory_order_relaxed);
		if (done >= n || done >= SIM_INLINE_MAX) {
			/* a handler's addition between the load and here: go on */
			want = n;
			atomic_signal_fence(memory_order_seq_cst);
			if (atomic_compare_exchange_strong(&inl.n, &want, 0))
				break;
			continue;
		}
		atomic_signal_fence(memory_order_seq_cst);
		q = inl.q[done++];
		if (turns++ < SIM_INLINE_MAX && q->engine != sim_cur_engine &&
		    atomic_load_explicit(&q->file->dev->knobs.inline_kick, memory_order_relaxed))
			sim_inline_turn(q);
		else
			sim_engine_wake(q->engine);
	}
	/* the queues beyond the list's room were woken by sim_queue_wake() itself */
}

static void sim_inline_drain(void)
{
	if (atomic_load_explicit(&inl.n, memory_order_relaxed))
		sim_inline_run_list(0);
}

void sim_queue_kick(struct sim_queue *q)
{
	if (sim_cur_engine || inl.depth || sim_signal_in_section() ||
	    !atomic_load_explicit(&q->file->dev->knobs.inline_kick, memory_order_relaxed) ||
	    !atomic_load(&q->engine->sleeping)) {
		sim_engine_wake(q->engine);
		return;
	}
	inl.depth++;
	atomic_store_explicit(&inl.n, 0, memory_order_relaxed);
	sim_inline_turn(q);
	sim_inline_run_list(1);
	inl.depth--;
}

/*
 * The words other processes may write that blocked queues of @e wait on,
 * with the values their WAITs read: the engine sleeps on them too.
 * Engine lock held.
 */
static unsigned int sim_engine_shared_waits(struct sim_engine *e, const uint32_t **words,
					    uint32_t *vals, unsigned int max)
{
	unsigned int n = 0;
	struct list *l;

	for (l = e->queues.next; l != &e->queues && n < max; l = l->next) {
		struct sim_queue *q = container_of(l, struct sim_queue, node);

		if (q->blocked && q->wait_shared && q->wait_word) {
			words[n] = q->wait_word;
			vals[n++] = q->wait_val;
		}
	}
	return n;
}

/* Work the engine must not sleep through? Engine lock held. */
static bool sim_engine_pending(struct sim_engine *e, uint64_t now)
{
	struct list *l;

	for (l = e->queues.next; l != &e->queues; l = l->next) {
		struct sim_queue *q = container_of(l, struct sim_queue, node);

		if (__atomic_load_n(&q->ctrl->state, __ATOMIC_RELAXED) != DRM_VACCEL_QUEUE_RUNNING)
			continue;
		/* after the full fence in sim_engine_sleep() */
		if (__atomic_load_n(q->doorbell, __ATOMIC_ACQUIRE) > q->write_index)
			return true;
		if (q->blocked || sim_queue_idle(q) || sim_split_waiting(q))
			continue;
		if (!q->core.busy_until || q->core.busy_until <= now)
			return true;
	}
	return false;
}

static void sim_engine_set_need_wakeup(struct sim_engine *e, uint32_t v)
{
	struct list *l;

	for (l = e->queues.next; l != &e->queues; l = l->next)
		__atomic_store_n(&container_of(l, struct sim_queue, node)->ctrl->need_wakeup, v,
				 __ATOMIC_RELAXED);
}

static atomic_bool sim_membarrier_failed;

/* Sleep until woken or @deadline (UINT64_MAX: none). */
static void sim_engine_sleep(struct sim_engine *e, uint64_t deadline)
{
	const uint32_t *words[64];
	uint32_t vals[64];
	unsigned int nw;
	uint64_t now;
	bool pending;

	sim_poll_release(e);
	/* a deadline a kicking thread's turn sets before it needs no wake-up (above) */
	now = sim_now();
	if (deadline > now + SIM_ENGINE_LAZY_NS)
		deadline = now + SIM_ENGINE_LAZY_NS;
	atomic_store(&e->sleep_until, deadline);
	pthread_mutex_lock(&e->lock);
	sim_engine_set_need_wakeup(e, 1);
	pthread_mutex_unlock(&e->lock);
	/*
	 * need_wakeup before the doorbells: this thread's full fence, and the
	 * submitters' StoreLoad, which queues with the light fence leave to
	 * membarrier() (lib/membarrier.c). If it fails (it cannot once
	 * registered), the engine sleeps at most a millisecond: a doorbell
	 * it misses is late, never lost.
	 */
	if (acc_membarrier_ready() && acc_membarrier()) {
		if (!atomic_exchange(&sim_membarrier_failed, true))
			acc_err("sim: membarrier() failed; engines sleep at most 1 ms");
		if (deadline > sim_now() + 1000000) {
			deadline = sim_now() + 1000000;
			atomic_store(&e->sleep_until, deadline);
		}
	}
	atomic_thread_fence(memory_order_seq_cst);
	pthread_mutex_lock(&e->lock);
	pending = sim_engine_pending(e, sim_now());
	nw = sim_engine_shared_waits(e, words, vals, 64);
	pthread_mutex_unlock(&e->lock);
	pending = pending || sim_split_pending(e->dev, e);

	atomic_store(&e->sleeping, true);
	if (!pending && !atomic_exchange(&e->wake, 0) && !atomic_load(&e->stop) &&
	    deadline > sim_now()) {
		atomic_fetch_add_explicit(&e->sleeps, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->dev->stats.sleeps, 1, memory_order_relaxed);
		if (nw)
			sim_futex_waitv(&e->wake, words, vals, nw, deadline == UINT64_MAX ? 0 :
								     deadline);
		else
			sim_futex_wait(&e->wake, 0, deadline == UINT64_MAX ? 0 : deadline);
		atomic_fetch_add_explicit(&e->wakeups, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&e->dev->stats.wakeups, 1, memory_order_relaxed);
	}
	atomic_store(&e->sleeping, false);
	atomic_store(&e->sleep_until, 0);

	pthread_mutex_lock(&e->lock);
	sim_engine_set_need_wakeup(e, 0);
	pthread_mutex_unlock(&e->lock);
}

/* An injected stall: the engine does nothing until it ends (or stops). */
static void sim_engine_stall(struct sim_engine *e)
{
	uint64_t until = atomic_load(&e->stall_until), now = sim_now();

	while (now < until && !atomic_load(&e->stop)) {
		atomic_store(&e->sleeping, true);
		if (!atomic_exchange(&e->wake, 0) && atomic_load(&e->stall_until) == until)
			sim_futex_wait(&e->wake, 0, until);
		atomic_store(&e->sleeping, false);
		now = sim_now();
		until = atomic_load(&e->stall_until);
	}
}

int sim_engine_stall_set(struct sim_engine *e, uint64_t ns)
{
	if (atomic_load(&e->dev->removed))
		return -ENODEV;
	atomic_store(&e->stall_until, ns ? sim_now() + ns : 0);
	sim_engine_wake(e);
	return 0;
}

static void *sim_engine_main(void *arg)
{
	struct sim_engine *e = arg;
	uint64_t idle_since = sim_now(), next, now;
	unsigned int polls = 0;
	long preempted = 0;
	bool progress;
	char name[16];

	sim_cur_engine = e;
	atomic_fetch_add(&sim_engine_threads, 1);
	snprintf(name, sizeof(name), "vaccel%u/%u", e->dev->id % 1000, e->index % 100);
	pthread_setname_np(pthread_self(), name);
	while (!atomic_load_explicit(&e->stop, memory_order_acquire)) {
		sim_engine_stall(e);
		/*
		 * wake-ups from now on count for the next sleep: an exchange,
		 * a full fence before the pass's loads (acquire ones among
		 * them, which a sequentially consistent store alone does not
		 * order), as in the module
		 */
		(void)atomic_exchange(&e->wake, 0);
		next = UINT64_MAX;
		progress = sim_engine_pass(e, &next);
		if (!progress)
			progress = sim_split_help(e, sim_now() + SIM_QUEUE_TURN_NS);
		now = sim_now();
		if (progress) {
			idle_since = now;
			sim_poll_release(e);
			polls = 0;
			continue;
		}
		/* polling starts: only in a slot */
		if (!polls && !sim_poll_take(e)) {
			sim_engine_sleep(e, next);
			continue;
		}
		if (now - idle_since >= e->dev->cfg.poll_budget_ns) {
			/*
			 * The poll budget is not restarted: a wake-up that brings
			 * no work sends the engine straight back to sleep.
			 */
			sim_engine_sleep(e, next);
			polls = 0;
			continue;
		}
		if (++polls % SIM_POLL_CHECK) {
			/* the hot path: no syscall between two looks */
			sim_cpu_relax();
			continue;
		}
		/* every SIM_POLL_CHECK looks: preempted since the first check? then yield */
		if (polls == SIM_POLL_CHECK) {
			preempted = sim_preemptions();
		} else if (sim_preemptions() != preempted) {
			sim_engine_sleep(e, next);
			polls = 0;
			continue;
		}
		sched_yield();
	}
	sim_poll_release(e);
	atomic_fetch_sub(&sim_engine_threads, 1);
	return NULL;
}

int sim_engines_start(struct sim_dev *dev)
{
	sigset_t old;
	unsigned int i;
	int ret = 0;

	/* engine threads block every signal: they take bucket locks freely */
	sim_sigblock(&old);
	for (i = 0; i < dev->cfg.engines; i++) {
		struct sim_engine *e = &dev->engines[i];

		atomic_store(&e->stop, false);
		ret = -pthread_create(&e->thread, NULL, sim_engine_main, e);
		if (ret)
			break;
		e->running = true;
	}
	sim_sigrestore(&old);
	if (ret) {
		acc_err("vaccel-sim %u: cannot start engine %u: %s", dev->id, i, strerror(-ret));
		sim_engines_stop(dev);
	}
	return ret;
}

void sim_engines_stop(struct sim_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->cfg.engines; i++) {
		struct sim_engine *e = &dev->engines[i];

		if (!e->running)
			continue;
		atomic_store_explicit(&e->stop, true, memory_order_release);
		sim_engine_wake(e);
		sim_futex_wake(&e->wake, 1);
		pthread_join(e->thread, NULL);
		e->running = false;
	}
}

int sim_device_force_fault(struct sim_dev *dev, uint32_t ctx, uint32_t id)
{
	unsigned int i;
	int ret = -ENOENT;

	for (i = 0; i < dev->cfg.engines && ret; i++) {
		struct sim_engine *e = &dev->engines[i];
		struct list *l;

		pthread_mutex_lock(&e->lock);
		for (l = e->queues.next; l != &e->queues; l = l->next) {
			struct sim_queue *q = container_of(l, struct sim_queue, node);

			if (q->file->id != ctx || q->id != id ||
			    __atomic_load_n(&q->ctrl->state, __ATOMIC_RELAXED) !=
			    DRM_VACCEL_QUEUE_RUNNING)
				continue;
			sim_queue_stop(q, DRM_VACCEL_FAULT_INJECTED);
			ret = 0;
			break;
		}
		pthread_mutex_unlock(&e->lock);
	}
	return ret;
}

static int sim_device_stop_queues(struct sim_dev *dev, uint32_t code)
{
	unsigned int i;
	int n = 0;

	for (i = 0; i < dev->cfg.engines; i++) {
		struct sim_engine *e = &dev->engines[i];
		struct list *l;

		pthread_mutex_lock(&e->lock);
		for (l = e->queues.next; l != &e->queues; l = l->next) {
			struct sim_queue *q = container_of(l, struct sim_queue, node);

			if (__atomic_load_n(&q->ctrl->state, __ATOMIC_RELAXED) !=
			    DRM_VACCEL_QUEUE_RUNNING)
				continue;
			sim_queue_stop(q, code);
			n++;
		}
		pthread_mutex_unlock(&e->lock);
	}
	return n;
}

int sim_device_reset(struct sim_dev *dev)
{
	unsigned int i;
	int n;

	if (!sim_dev_enter(dev))
		return -ENODEV;
	n = sim_device_stop_queues(dev, DRM_VACCEL_FAULT_RESET);
	for (i = 0; i < dev->cfg.engines; i++)
		sim_engine_stall_set(&dev->engines[i], 0);	/* and wakes the thread */
	atomic_fetch_add(&dev->stats.resets, 1);
	sim_dev_exit(dev);
	return n;
}

void sim_device_lost(struct sim_dev *dev)
{
	sim_device_stop_queues(dev, DRM_VACCEL_FAULT_REMOVED);
}
