// SPDX-License-Identifier: MIT
/*
 * The collective operations: argument checks, the sequence number and the
 * call matching across ranks, and the submission of a call's packets
 * (check, then compute, then commit: a call that fails at the call
 * changes nothing).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <string.h>

#include "coll.h"

static bool overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

/*
 * Check @a (filled by the wrapper: op, send, recv, count, root) for rank
 * @c with @dtype and @redop (ACCEL_REDOP_COUNT: not a reduction), and
 * complete it (device dtype, element size, in-place).
 */
static int check_args(struct accel_comm *c, struct accel_queue *q, struct accel_event *ev,
		      struct acc_args *a, enum accel_dtype dtype, enum accel_redop redop)
{
	const char *fn = acc_op_name(a->op);
	uint64_t n = c ? c->nranks : 1, sbytes, rbytes;
	bool reduction = a->op == ACCEL_COMM_OP_ALLREDUCE || a->op == ACCEL_COMM_OP_REDUCE ||
			 a->op == ACCEL_COMM_OP_REDUCESCATTER;
	int ret, es;

	if (!c || !q || !ev) {
		acc_err("%s: NULL communicator, queue or event", fn);
		return -EINVAL;
	}
	ret = acc_check_dev(c->dev, fn);
	if (ret)
		return ret;
	if (accel_queue_device(q) != c->dev) {
		acc_err("%s: rank %u: the queue is of another device than the rank's (%s)", fn,
			c->rank, c->dev->path);
		return -EINVAL;
	}
	if (a->op == ACCEL_COMM_OP_BARRIER) {
		a->esize = 1;
		a->root = -1;
		return 0;
	}
	if ((unsigned int)dtype >= ACCEL_DTYPE_COUNT) {
		acc_err("%s: rank %u: dtype %u unknown", fn, c->rank, (unsigned int)dtype);
		return -EINVAL;
	}
	es = accel_dtype_size(dtype);
	a->esize = (unsigned int)es;
	a->udtype = dtype;
	if (reduction) {
		int d = acc_reduce_dtype(dtype);

		if (d < 0) {
			acc_err("%s: rank %u: dtype %u cannot be reduced by the device (F32, F16, "
				"BF16, I32, I64, U8 can)", fn, c->rank, (unsigned int)dtype);
			return -EINVAL;
		}
		if ((unsigned int)redop >= ACCEL_REDOP_COUNT) {
			acc_err("%s: rank %u: reduction %u unknown", fn, c->rank, (unsigned int)redop);
			return -EINVAL;
		}
		if (redop == ACCEL_REDOP_AVG && d != DRM_VACCEL_DTYPE_F32 &&
		    d != DRM_VACCEL_DTYPE_F16 && d != DRM_VACCEL_DTYPE_BF16) {
			acc_err("%s: rank %u: AVG of an integer dtype (%u): the device has no "
				"division; use SUM and divide", fn, c->rank, (unsigned int)dtype);
			return -EINVAL;
		}
		a->dtype = (unsigned int)d;
		a->avg = redop == ACCEL_REDOP_AVG;
		a->redop = a->avg ? DRM_VACCEL_REDOP_SUM : (unsigned int)redop;
	}
	if (a->op == ACCEL_COMM_OP_REDUCE || a->op == ACCEL_COMM_OP_BROADCAST) {
		if (a->root < 0 || (uint64_t)a->root >= n) {
			acc_err("%s: rank %u: root %d out of range (%llu ranks)", fn, c->rank,
				a->root, (unsigned long long)n);
			return -EINVAL;
		}
	} else {
		a->root = -1;
	}
	if (a->count > (UINT64_MAX >> 16) / n / (uint64_t)es) {
		acc_err("%s: rank %u: count %llu too large", fn, c->rank,
			(unsigned long long)a->count);
		return -EINVAL;
	}
	sbytes = rbytes = a->count * (uint64_t)es;
	switch (a->op) {
	case ACCEL_COMM_OP_ALLREDUCE:
	case ACCEL_COMM_OP_BROADCAST:
	case ACCEL_COMM_OP_REDUCE:
		a->in_place = a->send == a->recv;
		if (a->op == ACCEL_COMM_OP_BROADCAST && (int)c->rank != a->root)
			sbytes = 0;	/* not read */
		if (a->op == ACCEL_COMM_OP_REDUCE && (int)c->rank != a->root)
			rbytes = 0;	/* not written */
		break;
	case ACCEL_COMM_OP_ALLGATHER:
		rbytes *= n;
		a->in_place = a->send == a->recv + c->rank * sbytes;
		break;
	case ACCEL_COMM_OP_REDUCESCATTER:
		sbytes *= n;
		a->in_place = a->recv == a->send + c->rank * rbytes;
		break;
	default:	/* ALLTOALL */
		sbytes *= n;
		rbytes *= n;
		a->in_place = a->send == a->recv;
		break;
	}
	if ((sbytes && (a->send % es || a->send + sbytes < a->send)) ||
	    (rbytes && (a->recv % es || a->recv + rbytes < a->recv))) {
		acc_err("%s: rank %u: send %#llx (%llu bytes) or recv %#llx (%llu bytes) not "
			"aligned to the element size %d or wrapping", fn, c->rank,
			(unsigned long long)a->send, (unsigned long long)sbytes,
			(unsigned long long)a->recv, (unsigned long long)rbytes, es);
		return -EINVAL;
	}
	if (!a->in_place && overlap(a->send, sbytes, a->recv, rbytes)) {
		acc_err("%s: rank %u: send %#llx (%llu bytes) and recv %#llx (%llu bytes) overlap, "
			"and not in place", fn, c->rank, (unsigned long long)a->send,
			(unsigned long long)sbytes, (unsigned long long)a->recv,
			(unsigned long long)rbytes);
		return -EINVAL;
	}
	return 0;
}

/* The field in which two calls of one sequence number differ, or NULL. */
static const char *call_differs(const struct acc_call *x, const struct acc_call *y)
{
	if (x->op != y->op)
		return "operation";
	if (x->dtype != y->dtype)
		return "dtype";
	if (x->count != y->count && x->op != ACCEL_COMM_OP_ALLTOALLV)
		return "count";	/* alltoallv: its counts are compared pairwise */
	if (x->redop != y->redop)
		return "reduction";
	if (x->root != y->root)
		return "root";
	return NULL;	/* in-place may differ between ranks, as in NCCL */
}

/* A 1-rank communicator: the operation is a local copy. */
static void plan_local(struct acc_plan *pl, const struct acc_args *a)
{
	uint64_t bytes = a->count * a->esize;

	if (a->op != ACCEL_COMM_OP_BARRIER)
		acc_plan_copy(pl, a->recv, a->send, bytes);
}

void acc_comm_fail_proto(struct acc_group *g, const struct acc_call *ref, int ref_rank,
			 const struct acc_call *call, int rank, const char *field)
{
	if (!acc_group_fail_claim(g))
		return;	/* failed first (an abort without the lock): that failure stands */
	g->fail_rank = ref_rank;
	g->fail_call[0] = *ref;
	g->fail_call[1] = *call;
	g->fail_ranks[0] = ref_rank;
	g->fail_ranks[1] = rank;
	snprintf(g->fail_field, sizeof(g->fail_field), "%s", field);
	acc_group_fail_publish(g, ACC_FAIL_PROTO);
	acc_comm_poison(g, 2);
}

/*
 * Rank @c's @call differs from the @field of @w's reference call (g->lock
 * held): the communicator fails, the log names both calls, the recorder
 * keeps the refused call and every rank's recorder is dumped. -EPROTO.
 */
static int call_mismatch(struct accel_comm *c, const struct acc_arrival *w,
			 const struct acc_call *call, const char *field, int64_t t_issue)
{
	struct acc_group *g = c->g;
	char x[160], y[160];

	acc_comm_fail_proto(g, &w->ref, (int)w->first, call, (int)c->rank, field);
	acc_call_describe(&w->ref, x, sizeof(x));
	acc_call_describe(call, y, sizeof(y));
	acc_err("comm %p: seq %llu: rank %u called %s, rank %u called %s: the %s "
		"differs; the operation fails on every rank (-EPROTO)", (void *)g,
		(unsigned long long)call->seq, w->first, x, c->rank, y, field);
	acc_rec_add(c, call, t_issue, NULL, 0, NULL, -EPROTO);
	acc_rec_dump_group(g, "mismatch");
	return -EPROTO;
}

/* The first arrival at @seq takes its window slot @w with its @call. */
static void slot_claim(struct acc_arrival *w, uint64_t seq, unsigned int rank,
		       const struct acc_call *call)
{
	w->used = true;
	w->seq = seq;
	w->arrived = 0;
	w->first = rank;
	w->ref = *call;
}

/*
 * A call the host completes (accel_comm_split()) takes rank @c's next
 * sequence number and arrives in its window slot as the queued calls do
 * (g->lock held): a rank that calls anything else at that number fails
 * every rank with -EPROTO, and so does a send or receive left unmatched
 * before it. 0, the number in @call->seq and the recorder's entry (issued,
 * for acc_rec_end()) in *@rec_n; or -errno (nothing taken; -EPROTO has
 * failed the communicator).
 */
int acc_call_arrive_host(struct accel_comm *c, struct acc_call *call, uint64_t *rec_n)
{
	struct acc_group *g = c->g;
	uint64_t all = acc_ranks_all(c->nranks), seq, bit;
	struct acc_arrival *w;
	const char *field;
	int ret;

	seq = g->next_seq[c->rank];
	bit = 1ull << c->rank;
	call->seq = seq;
	w = &g->win[seq % ACC_COMM_WINDOW];
	if (acc_slot_busy(w, seq, all)) {
		acc_err("%s: rank %u: seq %llu is %u calls ahead of rank(s) that have not called "
			"seq %llu", acc_op_name(call->op), c->rank, (unsigned long long)seq,
			ACC_COMM_WINDOW, (unsigned long long)w->seq);
		return -EAGAIN;
	}
	if (w->used && w->seq == seq) {
		field = call_differs(&w->ref, call);
		if (field)
			return call_mismatch(c, w, call, field, acc_now_ns());
	}
	if ((w->used && w->seq == seq ? w->arrived | bit : bit) == all && g->p2p) {
		ret = acc_p2p_gate_check(g, seq);	/* a send or receive left behind */
		if (ret)
			return ret;
	}
	if (!w->used || w->seq != seq)
		slot_claim(w, seq, c->rank, call);
	w->arrived |= bit;
	g->next_seq[c->rank] = seq + 1;
	*rec_n = c->rec.n;
	acc_rec_add(c, call, acc_now_ns(), NULL, 0, NULL, 0);
	return 0;
}

/*
 * Rank @c leaves the host call of @seq it arrived at and that not every
 * rank arrived at (it timed out): its number is free again, so the next
 * call takes it (g->lock held).
 */
void acc_call_leave_host(struct accel_comm *c, uint64_t seq)
{
	struct acc_group *g = c->g;
	struct acc_arrival *w = &g->win[seq % ACC_COMM_WINDOW];

	if (g->next_seq[c->rank] != seq + 1 || !w->used || w->seq != seq)
		return;
	w->arrived &= ~(1ull << c->rank);
	if (!w->arrived)
		w->used = false;
	g->next_seq[c->rank] = seq;
}

/* Enqueue the call; the caller has checked the arguments. */
int acc_coll_call(struct accel_comm *c, struct acc_args *a, struct accel_queue *q,
		  struct accel_event *ev)
{
	struct acc_group *g = c->g;
	struct acc_arrival *w;
	struct acc_plan pl;
	struct acc_call call;
	uint64_t all = acc_ranks_all(c->nranks), seq, first, epoch;
	uint32_t algo = ACCEL_COMM_ALGO_ONESHOT, qid = 0;
	uint64_t rec_n;
	unsigned int need, i, p;
	bool xq, last;
	const char *field;
	int64_t t_issue = acc_rec_on(c) ? acc_now_ns() : 0;
	unsigned int replans = 0;
	uint64_t gen;
	int ret;

	if (c->nranks > 1) {
		ret = acc_algo_select(g, a, &algo);
		if (ret)
			return ret;
	}
again:
	gen = atomic_load_explicit(&c->commits, memory_order_relaxed);
	ret = acc_plan_init(&pl, c);
	if (ret)
		return ret;
	if (a->op == ACCEL_COMM_OP_ALLTOALLV)
		acc_alltoallv_plan(&pl, a);
	else if (c->nranks == 1)
		plan_local(&pl, a);
	else if (algo == ACCEL_COMM_ALGO_RING)
		acc_ring_plan(&pl, a);
	else
		acc_oneshot_plan(&pl, a);
	ret = pl.err;
	if (ret)
		goto out;
	memset(&call, 0, sizeof(call));
	call.op = a->op;
	call.dtype = a->udtype;
	call.count = a->count;
	call.redop = a->avg ? ACCEL_REDOP_AVG : a->redop;
	call.root = a->root;
	call.in_place = a->in_place;
	call.algo = algo;
	/* the previous operation, if on another live queue: this one waits for it */
	xq = c->have_last && c->last_q != q &&
	     acc_comm_queue_alive(c->dev, c->last_q, c->last_qid);
	need = pl.n + 2 + (c->nranks > 2 ? c->nranks - 1 : 1) + 1 + xq;
	if (a->hook) {	/* a task graph's WAITs and completion around the call */
		need += a->hook->npre + a->hook->npost;
		ret = a->hook->room(a->hook, q, need);
		if (ret)
			goto out;
	}
	ret = acc_group_lock_call(g, c->rank, acc_op_name(a->op));
	if (ret)
		goto out;
	if (atomic_load_explicit(&c->commits, memory_order_relaxed) != gen) {
		/*
		 * a host task the room wait ran issued on this rank: the
		 * plan's channel counts are stale
		 */
		acc_group_unlock(g);
		acc_plan_fini(&pl);
		if (++replans < 8)
			goto again;
		acc_err("%s: rank %u: other calls of this rank kept committing while it waited "
			"for ring room (%u plans)", acc_op_name(a->op), c->rank, replans);
		return -EAGAIN;
	}
	ret = acc_comm_group_error(g, c->rank);
	if (ret)
		goto unlock;
	seq = g->next_seq[c->rank];
	call.seq = seq;
	w = &g->win[seq % ACC_COMM_WINDOW];
	if (acc_slot_busy(w, seq, all)) {
		acc_err("%s: rank %u: seq %llu is %u calls ahead of rank(s) that have not called "
			"seq %llu", acc_op_name(a->op), c->rank, (unsigned long long)seq,
			ACC_COMM_WINDOW, (unsigned long long)w->seq);
		ret = -EAGAIN;
		goto unlock;
	}
	ret = accel_queue_reserve(q, need, 0);
	if (ret == -EINVAL) {
		acc_err("%s: rank %u: %u packets cannot fit the queue's ring: use a larger ring "
			"or chunk", acc_op_name(a->op), c->rank, need);
		ret = -E2BIG;
	}
	/*
	 * a queue that faulted takes no number: its state now, not at the
	 * event below (the fault may not have been seen by any call yet)
	 */
	if (!ret)
		ret = acc_queue_check(q);
	if (ret)
		goto unlock;
	if (!w->used || w->seq != seq) {
		slot_claim(w, seq, c->rank, &call);
		if (a->op == ACCEL_COMM_OP_ALLTOALLV)
			acc_alltoallv_match(g, w, c, a);	/* records this rank's counts */
	} else {
		field = call_differs(&w->ref, &call);
		if (!field && a->op == ACCEL_COMM_OP_ALLTOALLV) {
			field = acc_alltoallv_match(g, w, c, a);
			if (field) {	/* logged with both ranks and counts */
				acc_comm_fail_proto(g, &w->ref, (int)w->first, &call,
						    (int)c->rank, field);
				ret = -EPROTO;
				goto unlock;
			}
		}
		if (field) {
			ret = call_mismatch(c, w, &call, field, t_issue);
			goto unlock;
		}
	}
	last = (w->arrived | 1ull << c->rank) == all;
	if (last && g->p2p) {
		ret = acc_p2p_gate_check(g, seq);	/* a send or receive left behind */
		if (ret)
			goto unlock;
	}
	w->arrived |= 1ull << c->rank;
	g->next_seq[c->rank] = seq + 1;
	atomic_fetch_add_explicit(&c->commits, 1, memory_order_relaxed);

	/*
	 * commit: the packets, the event, the history and the recorder's
	 * entry still under the lock (one lock round trip per call);
	 * the doorbell after it. Nothing below waits: the room is reserved.
	 */
	first = q->pi;
	epoch = seq - g->seq0 + 1;
	if (a->hook) {
		a->hook->pre(a->hook, q);
		a->hook->committed = true;
	}
	if (xq)
		accel_prep_wait(accel_queue_get_packet(q), accel_signal_va(c->last_ev.signal),
				DRM_VACCEL_WAIT_GE, c->last_ev.value, 0, g->timeout_ns);
	if (last) {
		for (p = 0; p < c->nranks; p++)
			if (p != c->rank)
				accel_prep_signal(accel_queue_get_packet(q),
						  accel_signal_va(c->imp_go[p]),
						  DRM_VACCEL_SIGNAL_MAX, c->peer_go_base[p] + epoch);
	} else {
		accel_prep_wait(accel_queue_get_packet(q), c->go.va, DRM_VACCEL_WAIT_GE,
				c->go.base + epoch, 0, g->timeout_ns);
	}
	accel_prep_wait(accel_queue_get_packet(q), c->abort.va, DRM_VACCEL_WAIT_EQ, c->abort.base,
			0, 1);
	for (i = 0; i < pl.n; i++)
		*accel_queue_get_packet(q) = pl.pkts[i];
	accel_prep_wait(accel_queue_get_packet(q), c->abort.va, DRM_VACCEL_WAIT_EQ, c->abort.base,
			0, 1);
	if (a->hook)
		a->hook->post(a->hook, q);
	ret = accel_queue_record(q, ev);
	if (ret)	/* the queue faulted since the check above: the number is taken */
		acc_err("%s: rank %u: its queue stopped as seq %llu was issued (%s): the other "
			"ranks wait for this rank's part until their timeout", acc_op_name(a->op),
			c->rank, (unsigned long long)seq, strerror(-ret));
	memcpy(c->sent, pl.sent, c->nranks * sizeof(uint64_t));
	memcpy(c->recvd, pl.recvd, c->nranks * sizeof(uint64_t));
	qid = q->id;
	c->hist[c->nhist % ACC_COMM_HISTORY] = (struct acc_hist){
		.call = call, .q = q, .qid = qid, .ring_first = first, .ring_end = q->pi,
	};
	c->nhist++;
	rec_n = c->rec.n;
	acc_rec_add(c, &call, t_issue, q, first + xq, ev, ret);
	acc_group_unlock(g);
	if (!ret) {
		ret = accel_queue_submit(q);
		ret = ret < 0 ? ret : 0;
		if (ret) {
			/* the recorder's entry says so (the rare path: the lock again) */
			acc_group_lock(g);
			acc_rec_end(c, rec_n, ret);
			acc_group_unlock(g);
		}
	}
	if (!ret) {
		c->last_q = q;
		c->last_qid = qid;
		c->last_ev = *ev;
		c->have_last = true;
	}
	acc_trace("comm %p rank %u: %s seq %llu count %llu algorithm %s: %u packets%s",
		  (void *)g, c->rank, acc_op_name(a->op), (unsigned long long)seq,
		  (unsigned long long)a->count, acc_algo_name(algo), pl.n,
		  last ? " (last to arrive)" : "");
	goto out;
unlock:
	acc_group_unlock(g);
out:
	acc_plan_fini(&pl);
	return ret;
}

/* Every operation's entry: check the arguments (nothing changed if bad), then enqueue. */
static int coll_issue(struct accel_comm *c, struct acc_args *a, enum accel_dtype dtype,
		      enum accel_redop op, struct accel_queue *q, struct accel_event *ev)
{
	int ret = check_args(c, q, ev, a, dtype, op);

	return ret ? ret : acc_coll_call(c, a, q, ev);
}

/* the checks of coll_issue() alone, and the communicator's error */
int acc_coll_check(struct accel_comm *c, struct acc_args *a, enum accel_dtype dtype,
		   enum accel_redop op, struct accel_queue *q)
{
	struct accel_event ev;
	int ret = check_args(c, q, &ev, a, dtype, op);

	if (ret)
		return ret;
	return acc_comm_check_error(c, acc_op_name(a->op));
}

int acc_coll_issue(struct accel_comm *c, struct acc_args *a, enum accel_dtype dtype,
		   enum accel_redop op, struct accel_queue *q, struct accel_event *ev)
{
	return coll_issue(c, a, dtype, op, q, ev);
}

ACCEL_API int accel_allreduce(uint64_t send, uint64_t recv, uint64_t count, enum accel_dtype dtype,
			      enum accel_redop op, struct accel_comm *comm,
			      struct accel_queue *queue, struct accel_event *ev)
{
	struct acc_args a = { .op = ACCEL_COMM_OP_ALLREDUCE, .send = send, .recv = recv,
			      .count = count };

	return coll_issue(comm, &a, dtype, op, queue, ev);
}

ACCEL_API int accel_reduce(uint64_t send, uint64_t recv, uint64_t count, enum accel_dtype dtype,
			   enum accel_redop op, int root, struct accel_comm *comm,
			   struct accel_queue *queue, struct accel_event *ev)
{
	struct acc_args a = { .op = ACCEL_COMM_OP_REDUCE, .send = send, .recv = recv,
			      .count = count, .root = root };

	return coll_issue(comm, &a, dtype, op, queue, ev);
}

ACCEL_API int accel_broadcast(uint64_t send, uint64_t recv, uint64_t count, enum accel_dtype dtype,
			      int root, struct accel_comm *comm, struct accel_queue *queue,
			      struct accel_event *ev)
{
	struct acc_args a = { .op = ACCEL_COMM_OP_BROADCAST, .send = send, .recv = recv,
			      .count = count, .root = root };

	return coll_issue(comm, &a, dtype, ACCEL_REDOP_COUNT, queue, ev);
}

ACCEL_API int accel_allgather(uint64_t send, uint64_t recv, uint64_t count, enum accel_dtype dtype,
			      struct accel_comm *comm, struct accel_queue *queue,
			      struct accel_event *ev)
{
	struct acc_args a = { .op = ACCEL_COMM_OP_ALLGATHER, .send = send, .recv = recv,
			      .count = count };

	return coll_issue(comm, &a, dtype, ACCEL_REDOP_COUNT, queue, ev);
}

ACCEL_API int accel_reducescatter(uint64_t send, uint64_t recv, uint64_t count,
				  enum accel_dtype dtype, enum accel_redop op,
				  struct accel_comm *comm, struct accel_queue *queue,
				  struct accel_event *ev)
{
	struct acc_args a = { .op = ACCEL_COMM_OP_REDUCESCATTER, .send = send, .recv = recv,
			      .count = count };

	return coll_issue(comm, &a, dtype, op, queue, ev);
}

ACCEL_API int accel_alltoall(uint64_t send, uint64_t recv, uint64_t count, enum accel_dtype dtype,
			     struct accel_comm *comm, struct accel_queue *queue,
			     struct accel_event *ev)
{
	struct acc_args a = { .op = ACCEL_COMM_OP_ALLTOALL, .send = send, .recv = recv,
			      .count = count };

	return coll_issue(comm, &a, dtype, ACCEL_REDOP_COUNT, queue, ev);
}

ACCEL_API int accel_barrier(struct accel_comm *comm, struct accel_queue *queue,
			    struct accel_event *ev)
{
	struct acc_args a = { .op = ACCEL_COMM_OP_BARRIER };

	return coll_issue(comm, &a, ACCEL_DTYPE_U8, ACCEL_REDOP_COUNT, queue, ev);
}
