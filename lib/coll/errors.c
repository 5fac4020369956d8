// SPDX-License-Identifier: MIT
/*
 * Failures of a communicator: abort, the release of queued work (poison),
 * the classification of a stopped queue, accel_comm_get_async_error() and
 * accel_comm_wait().
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"

#define POISON_STEP	(1ull << 61)

bool acc_comm_queue_alive(struct accel_device *dev, struct accel_queue *q, uint32_t id)
{
	struct list *l;
	bool alive = false;

	acc_dev_lock(dev);
	for (l = dev->queues.next; l != &dev->queues; l = l->next)
		if (container_of(l, struct accel_queue, node) == q && q->id == id) {
			alive = true;
			break;
		}
	acc_dev_unlock(dev);
	return alive;
}

int acc_comm_group_error(struct acc_group *g, unsigned int rank)
{
	switch (atomic_load(&g->fail)) {
	case ACC_FAIL_ABORT:
		return g->fail_rank == (int)rank ? -ECANCELED : -ECONNABORTED;
	case ACC_FAIL_PROTO:
		return -EPROTO;
	case ACC_FAIL_TIMEOUT:
		return -ETIMEDOUT;
	case ACC_FAIL_DEAD:
		return -ECONNRESET;
	}
	return 0;
}

static void ctr_poison(const struct acc_ctr *ctr)
{
	if (ctr->sig)
		accel_signal_write(ctr->sig, DRM_VACCEL_SIGNAL_MAX,
				   accel_signal_read(ctr->sig) + POISON_STEP);
}

/*
 * First every live rank's abort word (so that every check from now on
 * fails), then every counter a queue may wait on, far ahead (so that
 * every blocked WAIT passes and the queue reaches its next check). A
 * queue that passed a check before the abort word was raised saw no
 * poisoned counter before it: the counters go up only after the words.
 * SIGNAL MAX only: nothing goes down. Called with g->lock held (ranks are
 * not freed meanwhile).
 */
void acc_comm_poison(struct acc_group *g, unsigned int code)
{
	unsigned int i, p;

	for (i = 0; i < g->nranks; i++) {
		struct accel_comm *c = g->ranks[i];

		if (c)
			accel_signal_write(c->abort.sig, DRM_VACCEL_SIGNAL_MAX, c->abort.base + code);
	}
	for (i = 0; i < g->nranks; i++) {
		struct accel_comm *c = g->ranks[i];

		if (!c)
			continue;
		ctr_poison(&c->go);
		for (p = 0; p < g->nranks; p++) {
			ctr_poison(&c->ready[p]);
			ctr_poison(&c->credit[p]);
		}
	}
}

void acc_call_describe(const struct acc_call *call, char *buf, size_t len)
{
	if (call->op == ACCEL_COMM_OP_SPLIT) {	/* its color and key may differ */
		snprintf(buf, len, "comm_split()");
		return;
	}
	snprintf(buf, len, "%s(dtype %u, count %llu, reduction %u, root %d%s)",
		 acc_op_name(call->op), call->dtype, (unsigned long long)call->count, call->redop,
		 call->root, call->in_place ? ", in place" : "");
}

static const char *phase_name(uint32_t phase)
{
	static const char *const names[] = {
		"none", "gate (waiting for every rank to call)", "receive", "credit",
		"released by the communicator's failure", "queue fault",
	};

	return phase < sizeof(names) / sizeof(names[0]) ? names[phase] : "?";
}

/* Ranks that had not called @seq (g->lock held). */
static uint64_t missing_of(const struct acc_group *g, uint64_t seq)
{
	uint64_t m = 0;
	unsigned int i;

	for (i = 0; i < g->nranks; i++)
		if ((int64_t)(g->next_seq[i] - seq) <= 0)
			m |= 1ull << i;
	return m;
}

/*
 * Did one of @c's recent operations stop its queue? Fills @rep from the
 * fault (g->lock held). Returns true if so.
 */
static bool find_fault(struct accel_comm *c, struct accel_comm_error *rep)
{
	struct acc_group *g = c->g;
	uint64_t i = c->nhist > ACC_COMM_HISTORY ? c->nhist - ACC_COMM_HISTORY : 0;
	unsigned int p;

	for (; i < c->nhist; i++) {
		const struct acc_hist *h = &c->hist[i % ACC_COMM_HISTORY];
		struct accel_queue_fault f;

		if (!acc_comm_queue_alive(c->dev, h->q, h->qid) ||
		    accel_queue_status(h->q, &f, sizeof(f)) != -EIO ||
		    (int64_t)(f.ring_index - h->ring_first) < 0 ||
		    (int64_t)(f.ring_index - h->ring_end) >= 0)
			continue;
		memset(rep, 0, sizeof(*rep));
		rep->op = h->call.op;
		rep->seq = h->call.seq;
		rep->rank = (int32_t)c->rank;
		rep->peer = -1;
		rep->algo = h->call.algo;
		rep->error = -EIO;
		rep->phase = ACCEL_COMM_PHASE_FAULT;
		if (f.code != DRM_VACCEL_FAULT_WAIT_TIMEOUT)
			return true;
		if (f.addr == c->abort.va) {
			rep->phase = ACCEL_COMM_PHASE_ABORTED;
			rep->error = acc_comm_group_error(g, c->rank);
			if (!rep->error)
				rep->error = -EIO;
			return true;
		}
		if (f.addr == c->go.va) {
			rep->phase = ACCEL_COMM_PHASE_GATE;
		} else {
			for (p = 0; p < c->nranks; p++) {
				if (p == c->rank)
					continue;
				if (f.addr == c->ready[p].va)
					rep->phase = ACCEL_COMM_PHASE_RECV;
				else if (f.addr == c->credit[p].va)
					rep->phase = ACCEL_COMM_PHASE_CREDIT;
				else
					continue;
				rep->peer = (int32_t)p;
				break;
			}
		}
		if (rep->phase != ACCEL_COMM_PHASE_FAULT) {
			rep->error = -ETIMEDOUT;
			rep->missing = missing_of(g, rep->seq);
			/* a send or receive waits for its peer alone */
			if (h->call.op == ACCEL_COMM_OP_SEND || h->call.op == ACCEL_COMM_OP_RECV)
				rep->missing = rep->peer >= 0 ? 1ull << rep->peer : 0;
		}
		return true;
	}
	return false;
}

static void log_report(struct accel_comm *c, const struct accel_comm_error *rep)
{
	const struct acc_hist *h = NULL;
	/* each missing rank with its pid (multi-process), "2 (pid 7),3 (pid 9)" */
	char miss[ACCEL_COMM_MAX_RANKS * 24] = "", call[160] = "?", ppid[32];
	uint64_t i = c->nhist > ACC_COMM_HISTORY ? c->nhist - ACC_COMM_HISTORY : 0;

	for (; i < c->nhist; i++)
		if (c->hist[i % ACC_COMM_HISTORY].call.seq == rep->seq)
			h = &c->hist[i % ACC_COMM_HISTORY];
	if (h)
		acc_call_describe(&h->call, call, sizeof(call));
	acc_ranks_pids(c->g, rep->missing, miss, sizeof(miss));
	acc_err("comm %p rank %u/%u: %s seq %llu, algorithm %s, failed: %s in phase %s, peer %d%s; "
		"ranks that had not called it: %s (this rank: pid %d)", (void *)c->g, c->rank,
		c->nranks, call, (unsigned long long)rep->seq, acc_algo_name(rep->algo),
		strerror(-rep->error), phase_name(rep->phase), rep->peer,
		acc_mp_peer_pid(c->g, rep->peer, ppid, sizeof(ppid)), miss, (int)getpid());
}

/* The recorder's reason for a failure of the group. */
static const char *fail_reason(enum acc_fail f)
{
	switch (f) {
	case ACC_FAIL_ABORT:
		return "abort";
	case ACC_FAIL_PROTO:
		return "mismatch";
	case ACC_FAIL_TIMEOUT:
		return "timeout";
	case ACC_FAIL_DEAD:
		return "peer died";
	default:
		return "error";
	}
}

/* Who failed the group (@f) for rank @c's report: the aborting or dead rank, the other caller. */
static void report_peer(const struct accel_comm *c, enum acc_fail f, struct accel_comm_error *rep)
{
	const struct acc_group *g = c->g;

	if (f == ACC_FAIL_ABORT || f == ACC_FAIL_DEAD)
		rep->peer = g->fail_rank;
	if (f == ACC_FAIL_PROTO) {
		rep->peer = g->fail_ranks[1] == (int)c->rank ? g->fail_ranks[0] : g->fail_ranks[1];
		rep->seq = g->fail_call[0].seq;
		rep->op = g->fail_call[0].op;
	}
}

/*
 * The report of the group's recorded failure @f for rank @c: who failed
 * it, and, for a mismatch or a timeout, the calls or the first rank's
 * report. Sound without the lock too: a failure's fields are written
 * before its kind is published (acc_group_fail_publish()).
 */
static void group_report(struct accel_comm *c, enum acc_fail f, struct accel_comm_error *rep)
{
	struct acc_group *g = c->g;

	memset(rep, 0, sizeof(*rep));
	if (f == ACC_FAIL_TIMEOUT) {
		*rep = g->fail_report;
	} else {
		rep->error = acc_comm_group_error(g, c->rank);
		rep->peer = -1;
		rep->phase = ACCEL_COMM_PHASE_ABORTED;
	}
	rep->rank = (int32_t)c->rank;
	report_peer(c, f, rep);
}

/* The peer's process, of a multi-process communicator (1.4). */
static void report_pid(const struct acc_group *g, struct accel_comm_error *rep)
{
	rep->peer_pid = g->mp && rep->peer >= 0 && (unsigned int)rep->peer < g->nranks ?
			g->pids[rep->peer] : 0;
}

/*
 * accel_comm_get_async_error() and accel_comm_abort() wait at most this
 * long for a multi-process group's lock, then do without it. Peers hold
 * it for microseconds; a holder that keeps it for a second was stopped
 * (a signal, a debugger), not preempted, even in a loaded emulator: a
 * shorter bound would skip the queue faults and the recorder's dump
 * under load for nothing.
 */
#define STUCK_LOCK_NS	1000000000

ACCEL_API int accel_comm_get_async_error(struct accel_comm *comm, struct accel_comm_error *err,
					 size_t err_size)
{
	struct accel_comm_error rep;
	struct acc_group *g;
	enum acc_fail f;
	int ret;

	if (!comm)
		return -EINVAL;
	if (err) {
		ret = acc_struct_size_check(err_size, ACCEL_COMM_ERROR_SIZE_1_2);
		if (ret)
			return ret;
	}
	g = comm->g;
	if (acc_group_lock_until(g, acc_now_ns() + STUCK_LOCK_NS, NULL)) {
		/*
		 * Another process holds the lock (stopped in it?): the group's
		 * failure as recorded, without this rank's queue faults (a
		 * call with the lock finds those), and nothing cached
		 */
		f = (enum acc_fail)atomic_load(&g->fail);
		memset(&rep, 0, sizeof(rep));
		if (f != ACC_FAIL_NONE && f != ACC_FAIL_CLAIMED) {
			group_report(comm, f, &rep);
			report_pid(g, &rep);
		}
		goto out;
	}
	if (!comm->err.error) {
		memset(&rep, 0, sizeof(rep));
		f = (enum acc_fail)atomic_load(&g->fail);
		if (find_fault(comm, &rep)) {
			if (rep.error == -ETIMEDOUT && acc_group_fail_claim(g)) {
				/* the first timeout fails the communicator everywhere, at once */
				g->fail_rank = (int)comm->rank;
				g->fail_report = rep;
				acc_group_fail_publish(g, ACC_FAIL_TIMEOUT);
				f = ACC_FAIL_TIMEOUT;
				acc_comm_poison(g, 3);
				acc_rec_dump_group(g, "timeout");
			} else if (rep.phase == ACCEL_COMM_PHASE_ABORTED && f == ACC_FAIL_TIMEOUT) {
				uint32_t algo = rep.algo;

				rep = g->fail_report;	/* another rank's timeout released it */
				rep.rank = (int32_t)comm->rank;
				rep.algo = algo;
			}
		} else if (f != ACC_FAIL_NONE && f != ACC_FAIL_CLAIMED) {
			group_report(comm, f, &rep);
		}
		if (rep.error) {
			report_peer(comm, f, &rep);	/* a queue fault's report too */
			report_pid(g, &rep);
			comm->err = rep;
			log_report(comm, &rep);
			if (f == ACC_FAIL_PROTO) {
				/* every rank, in every process: both calls and the field */
				char x[160], y[160];

				acc_call_describe(&g->fail_call[0], x, sizeof(x));
				acc_call_describe(&g->fail_call[1], y, sizeof(y));
				acc_err("comm %p rank %u/%u: seq %llu: rank %d called %s, rank %d "
					"called %s: the %s differs", (void *)g, comm->rank,
					comm->nranks, (unsigned long long)g->fail_call[0].seq,
					g->fail_ranks[0], x, g->fail_ranks[1], y, g->fail_field);
			}
			if (f == ACC_FAIL_PROTO && g->a2av_fail.set)
				acc_err("comm %p rank %u: alltoallv seq %llu: rank %u sends %llu "
					"elements to rank %u, which receives %llu from rank %u",
					(void *)g, comm->rank, (unsigned long long)rep.seq,
					g->a2av_fail.src, (unsigned long long)g->a2av_fail.sent,
					g->a2av_fail.dst, (unsigned long long)g->a2av_fail.recvd,
					g->a2av_fail.src);
			/*
			 * This process's ranks not written yet: the failure was
			 * found in another process (a multi-process communicator)
			 * or by the monitor (a peer died)
			 */
			acc_rec_dump_group(g, fail_reason(f));
		}
	}
	rep = comm->err;
	acc_group_unlock(g);
out:
	if (err)
		acc_put_struct(err, err_size, &rep, sizeof(rep), ACCEL_COMM_ERROR_SIZE_1_2);
	return rep.error;
}

ACCEL_API int accel_comm_abort(struct accel_comm *comm)
{
	struct acc_group *g;
	char who[48];

	if (!comm)
		return -EINVAL;
	g = comm->g;
	if (!g->mp) {
		/* one process: destroy frees other ranks under the lock, poison reads them */
		acc_group_lock(g);
		if (!acc_group_fail_claim(g)) {
			acc_group_unlock(g);
			return -EALREADY;
		}
		g->fail_rank = (int)comm->rank;
		acc_group_fail_publish(g, ACC_FAIL_ABORT);
		acc_comm_poison(g, 1);
		acc_rec_dump_group(g, "abort");
		acc_group_unlock(g);
		acc_info("comm %p: aborted by rank %u", (void *)g, comm->rank);
		return 0;
	}
	/*
	 * Multi-process: at once, without the lock (a process stopped while
	 * it holds it must not delay the abort, and a call of this process
	 * waiting for the lock sees the failure and returns): the failure is
	 * claimed by compare-and-swap, and ->ranks is this process's and
	 * stays while the program does not destroy the rank it aborts, so
	 * the release of every queued WAIT needs no lock either. Only the
	 * recorder's dump takes it, bounded.
	 */
	if (!acc_group_fail_claim(g))
		return -EALREADY;
	g->fail_rank = (int)comm->rank;
	acc_group_fail_publish(g, ACC_FAIL_ABORT);
	acc_comm_poison(g, 1);
	if (acc_group_lock_until(g, acc_now_ns() + STUCK_LOCK_NS, NULL)) {
		acc_err("comm %p: aborted by rank %u; the communicator's lock has been held by "
			"%s for more than %u ms: no recorder dump", (void *)g, comm->rank,
			acc_group_lock_holder(g, who, sizeof(who)),
			(unsigned int)(STUCK_LOCK_NS / 1000000));
		return 0;
	}
	acc_rec_dump_group(g, "abort");
	acc_group_unlock(g);
	acc_info("comm %p: aborted by rank %u", (void *)g, comm->rank);
	return 0;
}

ACCEL_API int accel_comm_wait(struct accel_comm *comm, const struct accel_event *ev,
			      int64_t timeout_ns)
{
	struct acc_abort ab;
	int64_t t0;
	int ret, e;

	if (!comm || !ev)
		return -EINVAL;
	ab.sig = comm->abort.sig;
	ab.value = comm->abort.base + 1;
	t0 = acc_now_ns();
	ret = acc_wait_events(ev, 1, false, acc_deadline(timeout_ns), NULL, 0, &ab, NULL);
	if (!ret || accel_event_done(ev)) {
		acc_rec_done(comm, ev);
		return 0;	/* done before any failure could stop it */
	}
	e = accel_comm_get_async_error(comm, NULL, 0);
	/* a wait as long as the communicator's own timeout: say where it is */
	if (ret == -ETIMEDOUT && !e && timeout_ns >= 0 &&
	    (uint64_t)timeout_ns >= comm->g->timeout_ns)
		acc_rec_not_done(comm, ev, acc_now_ns() - t0);
	if (ret == -EIO || ret == -ECANCELED || ret == -ETIMEDOUT)
		return e ? e : ret;
	return ret;
}
