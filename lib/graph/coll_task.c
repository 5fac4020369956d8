// SPDX-License-Identifier: MIT
/*
 * Collectives as task-graph tasks (accel_tg_allreduce() and the others),
 * in eager mode, in graph capture and in graph launches.
 *
 * Eager: the task's tensors go through the stages of an eager task
 * (submit.c): register, find the dependencies in the TensorMap, prepare
 * (TensorMap and hold room, the WAITs' signal imports), and only then the
 * collective's own call (ops.c), which takes the sequence number and
 * writes, through struct acc_coll_hook, the task's WAITs before its gate
 * and the SIGNAL of the queue line's timeline after its last packet. A
 * call that fails before the sequence number is taken changes nothing;
 * once it is taken the task is committed like any task.
 *
 * Capture: the call is checked (arguments, the communicator's error) and
 * recorded as a node (tg_gtask.op TG_TASK_COLL, .arg the communicator,
 * .u0 the operation); the graph takes a reference on the communicator.
 *
 * Launch: a graph with collectives is not lowered to sealed packet lists
 * (the collective's packets depend on its sequence number and the
 * channels' counters at the call); each launch submits its tasks again,
 * in capture order, through the eager paths, with the launch's buffers.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tg_internal.h"
#include "../coll/coll.h"

/*
 * A group of sends and receives (accel_tg_p2p(), and accel_tg_send(),
 * accel_tg_recv(), accel_tg_sendrecv() over it): its own operation code,
 * past enum accel_comm_op (fits u0's 8 bits)
 */
#define TG_OP_P2P	0xf0u

/* a collective task: what the public entry points say */
struct tg_coll {
	uint32_t op;			/* enum accel_comm_op, or TG_OP_P2P */
	uint32_t redop;			/* enum accel_redop (ACCEL_REDOP_COUNT: none) */
	int32_t root;
	struct accel_comm *comm;
	const struct accel_tensor *send, *recv;	/* NULL: none */
	/* ALLTOALLV: sendcounts, sdispls, recvcounts, rdispls (nranks each): a copy */
	const uint64_t *v;
	/* P2P: the operations (checked by p2p_prepare()), in the task's argument order */
	const struct accel_p2p_op *ops;
	unsigned int nops;
	const char *name;		/* P2P: send, recv, sendrecv or p2p */
};

/*
 * What a graph node of a P2P group keeps (tg_gtask.arg): the communicator
 * and each operation's peer and flags; the tensors are the node's
 * arguments, in the same order.
 */
struct tg_pnode {
	struct accel_comm *comm;
	uint32_t n;
	struct {
		int32_t peer;
		uint32_t flags;
	} op[];
};

/*
 * What a graph node of alltoallv keeps (tg_gtask.arg; the other
 * collectives' arg is the communicator itself): the communicator, the
 * whole receive and send tensors as captured (the node's arguments are
 * their blocks, a2av_blocks()) and the copy of the four arrays made at
 * the call.
 */
struct tg_vnode {
	struct accel_comm *comm;
	struct accel_tensor recv, send;
	uint64_t v[];
};

/* tg_gtask.u0 of a collective: op, redop, root, which tensors (recv at 0, send after) */
#define U0_RECV		(1ull << 16)
#define U0_SEND		(1ull << 17)

static uint64_t coll_pack(const struct tg_coll *tc, bool has_recv, bool has_send)
{
	return (uint64_t)tc->op | (uint64_t)(tc->redop & 0xff) << 8 |
	       (has_recv ? U0_RECV : 0) | (has_send ? U0_SEND : 0) |
	       (uint64_t)(uint32_t)tc->root << 32;
}

static void coll_unpack(uint64_t u0, struct tg_coll *tc)
{
	tc->op = (uint32_t)(u0 & 0xff);
	tc->redop = (uint32_t)(u0 >> 8 & 0xff);
	tc->root = (int32_t)(uint32_t)(u0 >> 32);
}

static const char *coll_name(const struct tg_coll *tc)
{
	if (tc->op == TG_OP_P2P)
		return tc->name;
	return acc_op_name(tc->op);
}

/* the communicator of graph node @t (TG_TASK_COLL) */
static struct accel_comm *node_comm(const struct tg_gtask *t)
{
	if ((t->u0 & 0xff) == ACCEL_COMM_OP_ALLTOALLV)
		return ((const struct tg_vnode *)t->arg)->comm;
	if ((t->u0 & 0xff) == TG_OP_P2P)
		return ((const struct tg_pnode *)t->arg)->comm;
	return t->arg;
}

/*
 * alltoallv: every block inside its tensor (@nelems elements), checked
 * against the copy @counts/@displs; -EINVAL names the rank index and the value
 */
static int vcheck(const struct accel_comm *c, const char *side, const uint64_t *counts,
		  const uint64_t *displs, uint64_t nelems)
{
	unsigned int p;

	for (p = 0; p < c->nranks; p++) {
		if (displs[p] > nelems || counts[p] > nelems - displs[p]) {
			acc_err("accel_tg_alltoallv: rank %u: %scounts[%u] = %llu at %sdispls[%u] = %llu: past the %s tensor's %llu elements",
				c->rank, side[0] == 's' ? "send" : "recv", p,
				(unsigned long long)counts[p], side[0] == 's' ? "s" : "r", p,
				(unsigned long long)displs[p], side, (unsigned long long)nelems);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Check tensor @t, argument @what of @fn on rank @c (a receive when
 * @writes), and append it to @tt's arguments. No state changes.
 */
static int coll_arg(struct accel_tg *tg, struct tg_task *tt, const struct accel_tensor *t,
		    bool writes, const char *fn, const char *what, const struct accel_comm *c)
{
	struct tg_arg *ar = &tt->a[tt->nargs];
	int ret;

	ar->t = (struct accel_tensor *)t;
	ar->v = *t;
	ar->heap = -1;
	ar->access = writes ? ACCEL_OUTPUT : ACCEL_INPUT;
	ret = tg_check_view(fn, tt->nargs, &ar->v, &ar->lay);
	if (ret)
		return ret;
	if (!accel_tensor_is_contiguous(t)) {
		acc_err("accel_tg_%s: rank %u: the %s tensor is not contiguous", fn, c->rank, what);
		return -EINVAL;
	}
	if (t->buf->dev != c->dev) {
		acc_err("accel_tg_%s: rank %u: the %s tensor is in buffer 0x%llx of %s, not of the rank's device %s",
			fn, c->rank, what, (unsigned long long)t->buf->va, t->buf->dev->path,
			c->dev->path);
		return -EINVAL;
	}
	if (writes && !(t->buf->vm_flags & DRM_VACCEL_VM_WRITE)) {
		acc_err("accel_tg_%s: rank %u: the %s tensor's buffer 0x%llx is %s", fn, c->rank,
			what, (unsigned long long)t->buf->va, t->buf->sealed ? "sealed" : "read-only");
		return -EACCES;
	}
	ar->heap = tg_heap_of(tg, t->buf);
	if (ar->heap >= 0) {
		ret = tg_heap_check(tg, ar, fn, tt->nargs);
		if (ret)
			return ret;
		tt->nheap++;
	}
	tt->nargs++;
	return 0;
}

/* The line of rank @c's collective tasks (the last queue of its device) into @tt. */
static void coll_line(struct accel_tg *tg, struct tg_task *tt, int d, const char *fn,
		      struct accel_comm *c)
{
	tt->tk.size = sizeof(tt->tk);
	tt->tk.op = TG_TASK_COLL;
	tt->tk.device = (uint32_t)d;
	tt->tk.queue = tg->qcount[d] - 1;
	tt->tk.nargs = tt->nargs;
	tt->tk.name = fn;
	tt->tk.host.arg = c;
	tt->line = tg->qbase[d] + tg->qcount[d] - 1;
}

/* Do views @x and @y of the task's arguments share a byte? */
static bool args_overlap(const struct tg_arg *x, const struct tg_arg *y)
{
	return x->v.buf == y->v.buf && !x->lay.empty && !y->lay.empty &&
	       x->lay.lo < y->lay.hi && y->lay.lo < x->lay.hi;
}

/*
 * What every collective task checks first: the communicator, its device
 * in @tg. Clears @tt and @a and sets @a's op and root. The device's index
 * in @tg, or a negative errno. No state changes.
 */
static int coll_begin(struct accel_tg *tg, const struct tg_coll *tc, struct tg_task *tt,
		      struct acc_args *a, const char *fn)
{
	const struct accel_comm *c = tc->comm;
	int d;

	if (!c) {
		acc_err("accel_tg_%s: NULL communicator", fn);
		return -EINVAL;
	}
	d = tg_devi_of(tg, c->dev);
	if (d < 0) {
		acc_err("accel_tg_%s: rank %u's device %s is not a device of the task graph", fn,
			c->rank, c->dev->path);
		return -ENOENT;
	}
	memset(tt, 0, sizeof(*tt));
	tt->a = tt->a_in;
	memset(a, 0, sizeof(*a));
	a->op = tc->op;
	a->root = tc->root;
	return d;
}

/*
 * A group of sends and receives: check @tc->ops (peers, flags, reserved,
 * tensors, overlaps, the sends to itself against the receives from
 * itself) and fill @tt with one argument per operation, in their order.
 * No state changes.
 */
static int p2p_prepare(struct accel_tg *tg, const struct tg_coll *tc, struct tg_task *tt,
		       struct acc_args *a)
{
	const char *fn = tc->name;
	struct accel_comm *c = tc->comm;
	unsigned int i, j, ns = 0, nr = 0, p;
	int d, ret;

	d = coll_begin(tg, tc, tt, a, fn);
	if (d < 0)
		return d;
	if (!tc->ops || !tc->nops || tc->nops > ACCEL_TG_P2P_MAX_OPS) {
		acc_err("accel_tg_%s: rank %u: %u operations at %p (1 to %u)", fn, c->rank,
			tc->nops, (const void *)tc->ops, ACCEL_TG_P2P_MAX_OPS);
		return -EINVAL;
	}
	if (tc->nops > ACCEL_TASK_MAX_ARGS) {	/* freed by coll_task() */
		tt->a = calloc(tc->nops, sizeof(*tt->a));
		if (!tt->a) {
			tt->a = tt->a_in;
			acc_err("accel_tg_%s: rank %u: the arguments of its %u operations: %s", fn,
				c->rank, tc->nops, strerror(ENOMEM));
			return -ENOMEM;
		}
	}
	for (i = 0; i < tc->nops; i++) {
		const struct accel_p2p_op *o = &tc->ops[i];
		bool recv = o->flags & ACCEL_P2P_RECV;
		char what[32];

		if (o->flags & ~ACCEL_P2P_RECV || o->reserved[0] || o->reserved[1]) {
			acc_err("accel_tg_%s: rank %u: operation %u: unknown flags 0x%x or non-zero reserved fields",
				fn, c->rank, i, o->flags & ~ACCEL_P2P_RECV);
			return -EINVAL;
		}
		if (o->peer < 0 || o->peer >= (int)c->nranks || !o->tensor) {
			acc_err("accel_tg_%s: rank %u: operation %u: %s peer %d (%u ranks)%s", fn,
				c->rank, i, recv ? "receive from" : "send to", o->peer, c->nranks,
				o->tensor ? "" : ", NULL tensor");
			return -EINVAL;
		}
		snprintf(what, sizeof(what), "%s %u", recv ? "receive" : "send", i);
		ret = coll_arg(tg, tt, o->tensor, recv, fn, what, c);
		if (ret)
			return ret;
		if (o->peer == (int)c->rank) {
			nr += recv;
			ns += !recv;
		}
	}
	/* the p-th send to itself is the p-th receive from itself (p2p.c) */
	for (i = 0, j = 0, p = 0;; i++, j++, p++) {
		while (i < tc->nops && (tc->ops[i].peer != (int)c->rank ||
					(tc->ops[i].flags & ACCEL_P2P_RECV)))
			i++;
		while (j < tc->nops && (tc->ops[j].peer != (int)c->rank ||
					!(tc->ops[j].flags & ACCEL_P2P_RECV)))
			j++;
		if (i == tc->nops && j == tc->nops)
			break;
		if (i == tc->nops || j == tc->nops ||
		    tg_nelems(tc->ops[i].tensor) != tg_nelems(tc->ops[j].tensor)) {
			acc_err("accel_tg_%s: rank %u: %u sends to itself and %u receives from itself; each needs its partner in the same task with as many elements (pair %u)",
				fn, c->rank, ns, nr, p);
			return -EINVAL;
		}
	}
	/*
	 * A receive shares no byte with any other tensor of the task, except
	 * NCCL's in-place sendrecv: one send and one receive of the very same
	 * bytes. The group's rounds then read chunk t of the send before they
	 * write chunk t of the receive (p2p.c: each is alone in its peer's
	 * stream). With more operations a receive could write bytes a later
	 * round still sends, so they may not overlap at all. The in-place
	 * receive is INOUT in the TensorMap.
	 */
	for (i = 0; i < tt->nargs; i++)
		for (j = i + 1; j < tt->nargs; j++) {
			struct tg_arg *x = &tt->a[i], *y = &tt->a[j];

			if ((!tg_writes(x->access) && !tg_writes(y->access)) ||
			    !args_overlap(x, y))
				continue;
			if (tt->nargs == 2 && tg_writes(x->access) != tg_writes(y->access) &&
			    x->lay.lo == y->lay.lo && x->lay.hi == y->lay.hi &&
			    x->v.dtype == y->v.dtype) {
				(tg_writes(x->access) ? x : y)->access = ACCEL_INOUT;
				continue;
			}
			acc_err("accel_tg_%s: rank %u: the tensors of operations %u and %u overlap in buffer 0x%llx (a receive overlaps no other tensor; in place, one send and one receive of the same bytes, is the exception)",
				fn, c->rank, i, j, (unsigned long long)x->v.buf->va);
			return -EINVAL;
		}
	coll_line(tg, tt, d, fn, c);
	tt->u0 = TG_OP_P2P;
	return 0;
}

/*
 * alltoallv: the task's arguments become its blocks, so that the
 * TensorMap holds the bytes the operation touches and not the gaps
 * between them: arguments 0..n-1 are the receive blocks by source rank
 * (ACCEL_OUTPUT), n..2n-1 the send blocks by destination rank
 * (ACCEL_INPUT; no receive block overlaps a send block, the call checks
 * that: acc_alltoallv_issue());
 * empty blocks too, so that arguments 0 and n always name the two
 * buffers (a launch rebinds the whole tensors through them). Called with
 * the whole tensors, checked (vcheck(): every block inside its tensor),
 * as arguments 0 (receive) and 1 (send). 0 or -ENOMEM; no state changes.
 */
static int a2av_blocks(struct tg_task *tt, const uint64_t *v, unsigned int n)
{
	const struct tg_arg whole[2] = { tt->a[0], tt->a[1] };
	struct tg_arg *b = tt->a_in;
	unsigned int side, p;
	size_t es = accel_dtype_size(whole[0].v.dtype);

	if (2 * n > ACCEL_TASK_MAX_ARGS) {	/* freed by coll_task() */
		b = calloc(2 * n, sizeof(*b));
		if (!b)
			return -ENOMEM;
	}
	tt->nheap = 0;
	for (side = 0; side < 2; side++) {
		const uint64_t *counts = v + (side ? 0 : 2 * n), *displs = v + (side ? n : 3 * n);

		for (p = 0; p < n; p++) {
			struct tg_arg *ar = &b[side * n + p];
			struct accel_tensor *t = &ar->v;

			*ar = whole[side];
			t->offset += displs[p] * es;
			t->ndims = 1;
			t->shape[0] = counts[p];
			t->strides[0] = 1;
			/* inside a checked tensor: cannot fail */
			(void)tm_layout_make(t, &ar->lay);
			tt->nheap += ar->heap >= 0;
		}
	}
	tt->a = b;
	tt->nargs = 2 * n;
	return 0;
}

/*
 * Check the tensors of @tc for @tg and fill @tt (arguments, layouts, the
 * line: the last queue of the rank's device), @a (addresses, count) and
 * @dtype. No state changes.
 */
static int coll_prepare(struct accel_tg *tg, const struct tg_coll *tc, struct tg_task *tt,
			struct acc_args *a, enum accel_dtype *dtype)
{
	const char *fn = coll_name(tc);
	struct accel_comm *c = tc->comm;
	const struct accel_tensor *ts[2];
	uint64_t ns = 0, nr = 0, n;
	bool root, in_place = false, optional[2] = { false, false }, has[2] = { false, false };
	uint32_t k, nt = 0;
	int d, ret;

	d = coll_begin(tg, tc, tt, a, fn);
	if (d < 0)
		return d;
	n = c->nranks;
	root = (int)c->rank == tc->root;
	*dtype = ACCEL_DTYPE_U8;
	/* which tensors the operation reads and writes on this rank (recv, then send) */
	switch (tc->op) {
	case ACCEL_COMM_OP_BARRIER:
		break;
	case ACCEL_COMM_OP_REDUCE:	/* recv: the root's only */
		ts[nt++] = root ? tc->recv : NULL;
		ts[nt++] = tc->send;
		optional[0] = !root;
		break;
	case ACCEL_COMM_OP_BROADCAST:	/* send: the root's only */
		ts[nt++] = tc->recv;
		ts[nt++] = root ? tc->send : NULL;
		optional[1] = !root;
		break;
	default:
		ts[nt++] = tc->recv;
		ts[nt++] = tc->send;
		break;
	}
	for (k = 0; k < nt; k++) {
		const struct accel_tensor *t = ts[k];

		if (!t) {
			if (optional[k])
				continue;
			acc_err("accel_tg_%s: rank %u: no %s tensor", fn, c->rank,
				k ? "send" : "receive");
			return -EINVAL;
		}
		has[k] = true;
		if (tt->nargs && t->dtype != tt->a[0].v.dtype) {
			acc_err("accel_tg_%s: rank %u: send dtype %u, receive dtype %u", fn, c->rank,
				(unsigned int)t->dtype, (unsigned int)tt->a[0].v.dtype);
			return -EINVAL;
		}
		ret = coll_arg(tg, tt, t, !k, fn, k ? "send" : "receive", c);
		if (ret)
			return ret;
		if (k) {
			a->send = t->buf->va + t->offset;
			ns = tg_nelems(t);
		} else {
			a->recv = t->buf->va + t->offset;
			nr = tg_nelems(t);
		}
		*dtype = t->dtype;
	}
	/* counts from the tensors */
	switch (tc->op) {
	case ACCEL_COMM_OP_BARRIER:
		ret = 0;
		break;
	case ACCEL_COMM_OP_ALLREDUCE:
		ret = ns != nr;
		a->count = nr;
		break;
	case ACCEL_COMM_OP_REDUCE:
		ret = root && ns != nr;
		a->count = ns;
		if (!root)
			a->recv = a->send;	/* not written: any address passes */
		break;
	case ACCEL_COMM_OP_BROADCAST:
		ret = root && ns != nr;
		a->count = nr;
		if (!root)
			a->send = a->recv;	/* not read */
		break;
	case ACCEL_COMM_OP_ALLGATHER:
		ret = nr != ns * n;
		a->count = ns;
		break;
	case ACCEL_COMM_OP_REDUCESCATTER:
		ret = ns != nr * n;
		a->count = nr;
		break;
	case ACCEL_COMM_OP_ALLTOALLV:	/* every block in its tensor */
		ret = vcheck(c, "send", tc->v, tc->v + n, ns) ||
		      vcheck(c, "receive", tc->v + 2 * n, tc->v + 3 * n, nr);
		if (ret)
			return -EINVAL;
		break;
	default:	/* ALLTOALL */
		ret = ns != nr || ns % n;
		a->count = ns / n;
		break;
	}
	if (ret) {
		acc_err("accel_tg_%s: rank %u: send %llu and receive %llu elements do not fit the operation on %llu ranks",
			fn, c->rank, (unsigned long long)ns, (unsigned long long)nr,
			(unsigned long long)n);
		return -EINVAL;
	}
	if (tc->op == ACCEL_COMM_OP_ALLTOALLV) {
		ret = a2av_blocks(tt, tc->v, c->nranks);
		if (ret) {
			acc_err("accel_tg_%s: rank %u: its %u blocks: %s", fn, c->rank,
				2 * c->nranks, strerror(-ret));
			return ret;
		}
	} else {
		/* in place (or an overlap check_args() refuses): the receive tensor is INOUT */
		in_place = tt->nargs == 2 && args_overlap(&tt->a[0], &tt->a[1]);
		if (in_place)
			tt->a[0].access = ACCEL_INOUT;
	}
	coll_line(tg, tt, d, fn, c);
	tt->u0 = coll_pack(tc, has[0], has[1]);
	return 0;
}

/* the task graph's packets around the collective's (ops.c calls these) */
struct coll_hook {
	struct acc_coll_hook h;
	struct accel_tg *tg;
	struct tg_line *l;
	uint64_t value, sva, first;
	bool trace;
};

static int hook_room(struct acc_coll_hook *h, struct accel_queue *q, unsigned int n)
{
	struct coll_hook *ch = (struct coll_hook *)h;
	int ret;

	(void)q;
	ret = tg_reserve(ch->tg, ch->l, n);
	if (ret == -EINVAL)
		ret = -E2BIG;	/* logged by the queue: can never fit its ring */
	return ret;
}

static void hook_pre(struct acc_coll_hook *h, struct accel_queue *q)
{
	struct coll_hook *ch = (struct coll_hook *)h;

	ch->first = q->pi;
	tg_deps_emit(ch->tg, ch->l);
	if (ch->trace)
		tg_trace_stamp(ch->l, ch->value, 0, accel_queue_get_packet(q));
}

static void hook_post(struct acc_coll_hook *h, struct accel_queue *q)
{
	struct coll_hook *ch = (struct coll_hook *)h;
	struct drm_vaccel_packet *p = accel_queue_get_packet(q);

	accel_prep_signal(p, ch->sva, DRM_VACCEL_SIGNAL_MAX, ch->value);
	accel_prep_irq(p);
	if (ch->trace)
		tg_trace_stamp(ch->l, ch->value, 1, accel_queue_get_packet(q));
}

/*
 * The communicator's call of @tc with @a (a->hook set, or @check_only: the
 * checks alone, for capture)
 */
static int coll_call(const struct tg_coll *tc, struct acc_args *a, enum accel_dtype dtype,
		     struct accel_queue *q, bool check_only, struct accel_event *ev)
{
	struct accel_comm *c = tc->comm;
	unsigned int n = c->nranks;

	if (tc->op == ACCEL_COMM_OP_ALLTOALLV)
		return acc_alltoallv_issue(a->send, tc->v, tc->v + n, a->recv, tc->v + 2 * n,
					   tc->v + 3 * n, dtype, c, q, a->hook, check_only, ev);
	if (tc->op == TG_OP_P2P) {
		struct acc_p2p_desc d_in[ACCEL_TASK_MAX_ARGS] = { 0 }, *d = d_in;
		unsigned int k;
		int ret;

		if (tc->nops > ACCEL_TASK_MAX_ARGS) {
			d = malloc(tc->nops * sizeof(*d));
			if (!d) {
				acc_err("accel_tg_%s: rank %u: its %u operations: %s", tc->name,
					c->rank, tc->nops, strerror(ENOMEM));
				return -ENOMEM;
			}
		}
		for (k = 0; k < tc->nops; k++) {
			const struct accel_tensor *t = tc->ops[k].tensor;

			d[k] = (struct acc_p2p_desc){
				.send = !(tc->ops[k].flags & ACCEL_P2P_RECV),
				.buf = t->buf->va + t->offset, .count = tg_nelems(t),
				.dtype = t->dtype, .peer = (unsigned int)tc->ops[k].peer,
			};
		}
		ret = acc_p2p_task(c, d, tc->nops, q, a->hook, check_only, ev);
		if (d != d_in)
			free(d);
		return ret;
	}
	if (check_only)
		return acc_coll_check(c, a, dtype, (enum accel_redop)tc->redop, q);
	return acc_coll_issue(c, a, dtype, (enum accel_redop)tc->redop, q, ev);
}

/* an eager collective task (checked by coll_prepare()) */
static int coll_submit(struct accel_tg *tg, struct tg_task *tt, struct acc_args *a,
		       enum accel_dtype dtype, const struct tg_coll *tc, uint64_t *id_out)
{
	struct tg_line *l = &tg->lines[tt->line];
	struct coll_hook ch = { .tg = tg, .l = l, .trace = tg->p.flags & ACCEL_TG_TRACE };
	const struct accel_buffer *bufs_in[ACCEL_TASK_MAX_ARGS], **bufs = bufs_in;
	struct accel_event ev;
	uint64_t value, id;
	uint32_t i;
	int ret;

	if (atomic_load_explicit(&tg->orphans, memory_order_relaxed) ||
	    !list_empty(&tg->pending_drop))
		tg_bufs_collect(tg);
	ret = tg_line_room(l, 1, tt->tk.name);
	if (ret)
		return ret;
	if (tt->nargs > ACCEL_TASK_MAX_ARGS) {
		bufs = malloc(tt->nargs * sizeof(*bufs));
		if (!bufs) {
			acc_err("accel_tg_%s: rank %u: its %u arguments: %s", tt->tk.name,
				tc->comm->rank, tt->nargs, strerror(ENOMEM));
			return -ENOMEM;
		}
	}
	/* register */
	for (i = 0; i < tt->nargs; i++) {
		tt->a[i].b = tg_buf_get(tg, tt->a[i].v.buf, &ret);
		if (!tt->a[i].b)
			goto unstage;
	}
	value = l->next;
	id = tg_id(tt->line, value);
	/* find */
	tg_deps_begin(tg, tt->line, id);
	for (i = 0; i < tt->nargs; i++) {
		struct tg_arg *ar = &tt->a[i];

		ret = tm_deps_layout(tg->tm, ar->v.buf, &ar->lay, (enum accel_access)ar->access, id,
				     tg_dep_cb, tg);
		if (ret < 0)
			goto unstage;
		bufs[i] = ar->v.buf;
	}
	/* prepare */
	ret = tg_holds_room(l, tt->nheap);
	if (!ret)
		ret = tm_reserve(tg->tm, bufs, tt->nargs);
	if (!ret)
		ret = tg_deps_resolve(tg, l->devi);
	if (!ret)
		ret = tg_line_va(tg, tt->line, l->devi, &ch.sva);
	if (ret)
		goto unstage;
	ch.value = value;
	ch.h.npre = tg->deps.nwaits + ch.trace;
	ch.h.npost = 1 + ch.trace;
	ch.h.room = hook_room;
	ch.h.pre = hook_pre;
	ch.h.post = hook_post;
	a->hook = &ch.h;
	ret = coll_call(tc, a, dtype, l->q, false, &ev);
	a->hook = NULL;
	if (!ch.h.committed)
		goto unstage;
	/* committed: the packets are in the ring (and published, unless ret says not) */
	tg_buf_commit_staged(tg);
	if (ch.trace)
		tg_trace_note(l, value, id, tt->tk.name);
	tg_ring_rec_set(l, value, ch.first, tt->tk.name);
	tg_task_commit(tg, l, tt, id, value);
	if (id_out)
		*id_out = id;
	if (ret == -EIO || ret == -ENODEV) {
		/* queued, its queue dead: stop here until recovery, as submit.c */
		if (!tg->fault) {
			tg->fault = ret;
			tg->fault_line = tt->line;
		}
	}
	goto out;
unstage:
	tg_buf_unstage(tg);
out:
	if (bufs != bufs_in)
		free(bufs);
	return ret;
}

/*
 * An alltoallv node's arguments are its blocks, but a launch issues the
 * whole tensors again: a buffer bound in their place must hold them
 * whole (the launch's binding check reads the graph's end of use).
 */
static void whole_hi(struct accel_graph *g, const struct tg_vnode *vn)
{
	const struct accel_tensor *w[2] = { &vn->recv, &vn->send };
	struct tm_layout lay;
	unsigned int k;

	for (k = 0; k < 2; k++) {
		struct tg_gbuf *gb = g->bufs[tg_graph_buf_index(g, w[k]->buf)];

		/* checked when the task was made; the buffer is the graph's (block 0 or n) */
		if (!tm_layout_make(w[k], &lay) && !lay.empty && (uint64_t)lay.hi > gb->hi)
			gb->hi = (uint64_t)lay.hi;
	}
}

/* capture: check, then record (the graph holds the communicator) */
static int coll_capture(struct accel_tg *tg, struct tg_task *tt, struct acc_args *a,
			enum accel_dtype dtype, const struct tg_coll *tc)
{
	struct tg_line *l = &tg->lines[tt->line];
	struct tg_vnode *vn = NULL;
	struct tg_pnode *pn = NULL;
	struct accel_event ev;
	size_t vb = 4 * (size_t)tc->comm->nranks * sizeof(uint64_t);
	unsigned int k;
	int ret;

	ret = coll_call(tc, a, dtype, l->q, true, &ev);
	if (ret) {
		acc_err("accel_tg_%s: capture: rank %u: %s", tt->tk.name, tc->comm->rank,
			strerror(-ret));
		return ret;
	}
	if (tc->op == ACCEL_COMM_OP_ALLTOALLV) {	/* the node keeps its copy of the arrays */
		vn = malloc(sizeof(*vn) + vb);
		if (!vn) {
			acc_err("accel_tg_%s: capture: rank %u: the node's arrays: %s", tt->tk.name,
				tc->comm->rank, strerror(ENOMEM));
			return -ENOMEM;
		}
		vn->comm = tc->comm;
		vn->recv = *tc->recv;
		vn->send = *tc->send;
		memcpy(vn->v, tc->v, vb);
		tt->tk.host.arg = vn;
	}
	if (tc->op == TG_OP_P2P) {	/* the node keeps each operation's peer and flags */
		pn = calloc(1, sizeof(*pn) + tc->nops * sizeof(pn->op[0]));
		if (!pn) {
			acc_err("accel_tg_%s: capture: rank %u: the node's %u operations: %s",
				tt->tk.name, tc->comm->rank, tc->nops, strerror(ENOMEM));
			return -ENOMEM;
		}
		pn->comm = tc->comm;
		pn->n = tc->nops;
		for (k = 0; k < tc->nops; k++) {
			pn->op[k].peer = tc->ops[k].peer;
			pn->op[k].flags = tc->ops[k].flags;
		}
		tt->tk.host.arg = pn;
	}
	ret = tg_capture_task(tg, tt);
	if (!ret) {
		acc_comm_get(tc->comm);
		if (vn)
			whole_hi(tg->capture, vn);
	} else {
		free(vn);
		free(pn);
	}
	return ret;
}

static int coll_task(struct accel_tg *tg, const struct tg_coll *tc, uint64_t *id)
{
	enum accel_dtype dtype;
	struct acc_args a;
	struct tg_task tt;
	char fn[48];
	int ret;

	snprintf(fn, sizeof(fn), "accel_tg_%s", coll_name(tc));
	ret = tg_enter(tg, TG_E_ABORT | TG_E_FAULT, fn);
	if (ret)
		return ret;
	dtype = ACCEL_DTYPE_U8;
	tt.a = tt.a_in;
	if (tc->op == TG_OP_P2P)
		ret = p2p_prepare(tg, tc, &tt, &a);
	else
		ret = coll_prepare(tg, tc, &tt, &a, &dtype);
	if (ret)
		goto out;
	if (tg->capture) {
		ret = coll_capture(tg, &tt, &a, dtype, tc);
		if (!ret && id)
			*id = 0;
		goto out;
	}
	ret = coll_submit(tg, &tt, &a, dtype, tc, id);
out:
	if (tt.a != tt.a_in)
		free(tt.a);
	return ret;
}

ACCEL_API int accel_tg_allreduce(struct accel_tg *tg, const struct accel_tensor *send,
				 const struct accel_tensor *recv, enum accel_redop op,
				 struct accel_comm *comm, uint64_t *id)
{
	struct tg_coll tc = { .op = ACCEL_COMM_OP_ALLREDUCE, .redop = op, .root = -1,
			      .comm = comm, .send = send, .recv = recv };

	return coll_task(tg, &tc, id);
}

ACCEL_API int accel_tg_reduce(struct accel_tg *tg, const struct accel_tensor *send,
			      const struct accel_tensor *recv, enum accel_redop op, int root,
			      struct accel_comm *comm, uint64_t *id)
{
	struct tg_coll tc = { .op = ACCEL_COMM_OP_REDUCE, .redop = op, .root = root,
			      .comm = comm, .send = send, .recv = recv };

	return coll_task(tg, &tc, id);
}

ACCEL_API int accel_tg_broadcast(struct accel_tg *tg, const struct accel_tensor *send,
				 const struct accel_tensor *recv, int root, struct accel_comm *comm,
				 uint64_t *id)
{
	struct tg_coll tc = { .op = ACCEL_COMM_OP_BROADCAST, .redop = ACCEL_REDOP_COUNT,
			      .root = root, .comm = comm, .send = send, .recv = recv };

	return coll_task(tg, &tc, id);
}

ACCEL_API int accel_tg_allgather(struct accel_tg *tg, const struct accel_tensor *send,
				 const struct accel_tensor *recv, struct accel_comm *comm,
				 uint64_t *id)
{
	struct tg_coll tc = { .op = ACCEL_COMM_OP_ALLGATHER, .redop = ACCEL_REDOP_COUNT,
			      .root = -1, .comm = comm, .send = send, .recv = recv };

	return coll_task(tg, &tc, id);
}

ACCEL_API int accel_tg_reducescatter(struct accel_tg *tg, const struct accel_tensor *send,
				     const struct accel_tensor *recv, enum accel_redop op,
				     struct accel_comm *comm, uint64_t *id)
{
	struct tg_coll tc = { .op = ACCEL_COMM_OP_REDUCESCATTER, .redop = op, .root = -1,
			      .comm = comm, .send = send, .recv = recv };

	return coll_task(tg, &tc, id);
}

ACCEL_API int accel_tg_alltoall(struct accel_tg *tg, const struct accel_tensor *send,
				const struct accel_tensor *recv, struct accel_comm *comm,
				uint64_t *id)
{
	struct tg_coll tc = { .op = ACCEL_COMM_OP_ALLTOALL, .redop = ACCEL_REDOP_COUNT,
			      .root = -1, .comm = comm, .send = send, .recv = recv };

	return coll_task(tg, &tc, id);
}

ACCEL_API int accel_tg_barrier(struct accel_tg *tg, struct accel_comm *comm, uint64_t *id)
{
	struct tg_coll tc = { .op = ACCEL_COMM_OP_BARRIER, .redop = ACCEL_REDOP_COUNT,
			      .root = -1, .comm = comm };

	return coll_task(tg, &tc, id);
}

/* --- libaccel 1.5: alltoallv, sends and receives --- */

ACCEL_API int accel_tg_alltoallv(struct accel_tg *tg, const struct accel_tensor *send,
				 const uint64_t *sendcounts, const uint64_t *sdispls,
				 const struct accel_tensor *recv, const uint64_t *recvcounts,
				 const uint64_t *rdispls, struct accel_comm *comm, uint64_t *id)
{
	struct tg_coll tc = { .op = ACCEL_COMM_OP_ALLTOALLV, .redop = ACCEL_REDOP_COUNT,
			      .root = -1, .comm = comm, .send = send, .recv = recv };
	uint64_t *v;
	size_t nb;
	int ret;

	if (!comm || !sendcounts || !sdispls || !recvcounts || !rdispls) {
		acc_err("accel_tg_alltoallv: NULL communicator or count/displacement array");
		return -EINVAL;
	}
	/* the program's arrays, copied once: checked and used from the copy */
	nb = (size_t)comm->nranks * sizeof(uint64_t);
	v = malloc(4 * nb);
	if (!v) {
		acc_err("accel_tg_alltoallv: rank %u: a copy of its arrays: %s", comm->rank,
			strerror(ENOMEM));
		return -ENOMEM;
	}
	memcpy(v, sendcounts, nb);
	memcpy((char *)v + nb, sdispls, nb);
	memcpy((char *)v + 2 * nb, recvcounts, nb);
	memcpy((char *)v + 3 * nb, rdispls, nb);
	tc.v = v;
	ret = coll_task(tg, &tc, id);
	free(v);
	return ret;
}

/* The name of a P2P group in messages and traces, by its shape. */
static const char *p2p_name(const struct accel_p2p_op *ops, unsigned int n)
{
	if (!ops || n > 2 || !n)
		return "p2p";
	if (n == 1)
		return ops[0].flags & ACCEL_P2P_RECV ? "recv" : "send";
	return (ops[0].flags ^ ops[1].flags) & ACCEL_P2P_RECV ? "sendrecv" : "p2p";
}

static int p2p_task(struct accel_tg *tg, const struct accel_p2p_op *ops, unsigned int n,
		    struct accel_comm *comm, uint64_t *id)
{
	struct tg_coll tc = { .op = TG_OP_P2P, .redop = ACCEL_REDOP_COUNT, .root = -1,
			      .comm = comm, .ops = ops, .nops = n, .name = p2p_name(ops, n) };

	return coll_task(tg, &tc, id);
}

ACCEL_API int accel_tg_sendrecv(struct accel_tg *tg, const struct accel_tensor *send,
				int sendpeer, const struct accel_tensor *recv, int recvpeer,
				struct accel_comm *comm, uint64_t *id)
{
	struct accel_p2p_op ops[2] = {
		{ .tensor = send, .peer = sendpeer },
		{ .tensor = recv, .peer = recvpeer, .flags = ACCEL_P2P_RECV },
	};

	return p2p_task(tg, ops, 2, comm, id);
}

ACCEL_API int accel_tg_send(struct accel_tg *tg, const struct accel_tensor *send, int peer,
			    struct accel_comm *comm, uint64_t *id)
{
	struct accel_p2p_op op = { .tensor = send, .peer = peer };

	return p2p_task(tg, &op, 1, comm, id);
}

ACCEL_API int accel_tg_recv(struct accel_tg *tg, const struct accel_tensor *recv, int peer,
			    struct accel_comm *comm, uint64_t *id)
{
	struct accel_p2p_op op = { .tensor = recv, .peer = peer, .flags = ACCEL_P2P_RECV };

	return p2p_task(tg, &op, 1, comm, id);
}

/* --- libaccel 1.7: any group of sends and receives --- */

ACCEL_API int accel_tg_p2p(struct accel_tg *tg, const struct accel_p2p_op *ops, unsigned int n,
			   struct accel_comm *comm, uint64_t *id)
{
	struct accel_p2p_op copy_in[ACCEL_TASK_MAX_ARGS], *copy = copy_in;
	int ret;

	/* the program's array, copied once: checked and used from the copy */
	if (ops && n && n <= ACCEL_TG_P2P_MAX_OPS) {
		if (n > ACCEL_TASK_MAX_ARGS) {
			copy = malloc(n * sizeof(*ops));
			if (!copy) {
				acc_err("accel_tg_%s: a copy of its %u operations: %s",
					p2p_name(ops, n), n, strerror(ENOMEM));
				return -ENOMEM;
			}
		}
		memcpy(copy, ops, n * sizeof(*ops));
		ops = copy;
	}
	ret = p2p_task(tg, ops, n, comm, id);
	if (copy != copy_in)
		free(copy);
	return ret;
}

/* --- the communicator's references (accel_comm_destroy() in comm.c) --- */

void acc_comm_get(struct accel_comm *c)
{
	atomic_fetch_add(&c->refs, 1);
}

void acc_comm_put(struct accel_comm *c)
{
	if (atomic_fetch_sub(&c->refs, 1) == (ACC_COMM_DESTROYED | 1))
		acc_comm_destroy_now(c);
}

/* --- graphs --- */

bool tg_graph_has_coll(const struct accel_graph *g)
{
	uint32_t i;

	for (i = 0; i < g->ntasks; i++)
		if (g->tasks[i].op == TG_TASK_COLL)
			return true;
	return false;
}

void tg_coll_graph_free(struct accel_graph *g)
{
	uint32_t i;

	for (i = 0; i < g->ntasks; i++) {
		struct tg_gtask *t = &g->tasks[i];

		if (t->op != TG_TASK_COLL)
			continue;
		acc_comm_put(node_comm(t));
		if ((t->u0 & 0xff) == ACCEL_COMM_OP_ALLTOALLV || (t->u0 & 0xff) == TG_OP_P2P)
			free(t->arg);
	}
}

int tg_coll_instantiate(struct accel_graph *g, struct accel_graph_exec **out)
{
	struct accel_tg *tg = g->tg;
	struct accel_graph_exec *ge;
	uint32_t *npoints, i, nl = 0;
	int ret = -ENOMEM;

	ge = calloc(1, sizeof(*ge));
	npoints = calloc(tg->nlines, sizeof(*npoints));
	if (!ge || !npoints)
		goto fail;
	list_init(&ge->node);
	ge->tg = tg;
	ge->replay = true;
	ge->trace_bind = -1;
	for (i = 0; i < g->ntasks; i++)
		if (!npoints[g->tasks[i].line]++)
			nl++;
	ge->lines = calloc(nl, sizeof(*ge->lines));
	ge->bind = calloc(g->nbufs ? g->nbufs : 1, sizeof(*ge->bind));
	if (!ge->lines || !ge->bind)
		goto fail;
	for (i = 0; i < tg->nlines; i++) {
		if (!npoints[i])
			continue;
		ge->lines[ge->nlines].line = i;
		ge->lines[ge->nlines++].npoints = npoints[i];
	}
	/* every buffer may be rebound (a launch submits its tasks anew) */
	for (i = 0; i < g->nbufs; i++)
		ge->bind[i] = (int32_t)i;
	ge->nbound = g->nbufs;
	ge->g = g;
	g->refs++;
	list_add_tail(&tg->execs, &ge->node);
	free(npoints);
	*out = ge;
	return 0;
fail:
	if (ge) {
		free(ge->lines);
		free(ge->bind);
	}
	free(ge);
	free(npoints);
	acc_err("accel_graph_instantiate: %s", strerror(-ret));
	return ret;
}

/* the view @t of the graph, in the buffer bound for this launch */
static void rebind(const struct accel_graph *g, struct accel_buffer **act,
		   const struct accel_tensor *t, struct accel_tensor *out)
{
	*out = *t;
	out->buf = act[tg_graph_buf_index(g, t->buf)];
}

/*
 * The launch's bindings for its host tasks (one reference: the launch's),
 * or NULL when it has none or binds nothing; *@nomem: no memory for them.
 */
static struct tg_bindings *launch_bindings(const struct accel_graph *g,
					   const struct accel_binding *bindings, unsigned int n,
					   bool *nomem)
{
	struct tg_bindings *b;
	uint32_t i;

	*nomem = false;
	for (i = 0; i < g->ntasks && g->tasks[i].op != ACCEL_TASK_HOST; i++)
		;
	if (i == g->ntasks || !n)
		return NULL;
	b = malloc(sizeof(*b) + n * sizeof(b->b[0]));
	if (!b) {
		*nomem = true;
		return NULL;
	}
	b->refs = 1;
	b->n = n;
	memcpy(b->b, bindings, n * sizeof(b->b[0]));
	return b;
}

static int coll_launch_tasks(struct accel_graph_exec *ge, struct accel_buffer **act);

int tg_coll_launch(struct accel_graph_exec *ge, struct accel_buffer **act,
		   const struct accel_binding *bindings, unsigned int n)
{
	struct accel_tg *tg = ge->tg;
	struct tg_bindings *b;
	bool nomem;
	int ret;

	b = launch_bindings(ge->g, bindings, n, &nomem);
	if (nomem) {
		acc_err("accel_graph_launch: the bindings of its host tasks: %s",
			strerror(ENOMEM));
		return -ENOMEM;
	}
	tg->launch_ge = ge;
	tg->launch_bind = b;
	ret = coll_launch_tasks(ge, act);
	tg->launch_ge = NULL;
	tg->launch_bind = NULL;
	tg_bindings_put(tg, b);
	return ret;
}

static bool seq_task(const struct tg_gtask *t)
{
	return t->op == TG_TASK_COLL && (t->u0 & 0xff) != TG_OP_P2P;
}

/*
 * Whether every collective of the launch finds room in its
 * communicator's call window (ops.c: a call may be at most
 * %ACC_COMM_WINDOW calls ahead of the slowest rank): the launch's calls
 * of group @grp, in capture order, against a copy of its window and
 * counters, taken under its lock, with the arrivals of the launch's own
 * earlier calls (one thread may drive several ranks). Other ranks' calls
 * can only complete slots, never take one this launch needs (a slot is
 * taken by a call of its number, or once complete), so what passes here
 * passes when issued. 0, or -EAGAIN (logged, nothing issued).
 */
static int window_check_group(const struct accel_graph *g, struct acc_group *grp)
{
	struct acc_arrival w[ACC_COMM_WINDOW];	/* only used, seq and arrived matter */
	uint64_t next[ACCEL_COMM_MAX_RANKS], all = acc_ranks_all(grp->nranks);
	uint32_t i, k;

	acc_group_lock(grp);
	for (k = 0; k < ACC_COMM_WINDOW; k++) {
		w[k].used = grp->win[k].used;
		w[k].seq = grp->win[k].seq;
		w[k].arrived = grp->win[k].arrived;
	}
	memcpy(next, grp->next_seq, grp->nranks * sizeof(next[0]));
	acc_group_unlock(grp);
	for (i = 0; i < g->ntasks; i++) {
		const struct tg_gtask *t = &g->tasks[i];
		const struct accel_comm *c;
		uint64_t seq;

		if (!seq_task(t) || node_comm(t)->g != grp)
			continue;
		c = node_comm(t);
		seq = next[c->rank]++;
		k = (uint32_t)(seq % ACC_COMM_WINDOW);
		if (acc_slot_busy(&w[k], seq, all)) {
			acc_err("accel_graph_launch: task %u (%s): rank %u's call seq %llu would be "
				"%u calls ahead of rank(s) that have not called seq %llu; nothing is "
				"issued (-EAGAIN: launch again once the other ranks caught up)",
				i, t->name, c->rank, (unsigned long long)seq, ACC_COMM_WINDOW,
				(unsigned long long)w[k].seq);
			return -EAGAIN;
		}
		if (!w[k].used || w[k].seq != seq) {
			w[k].used = true;
			w[k].seq = seq;
			w[k].arrived = 0;
		}
		w[k].arrived |= 1ull << c->rank;
	}
	return 0;
}

/*
 * @check(@g, group) for each communicator of the tasks @is() selects,
 * once each (at its first such task), in capture order: 0 or its error.
 */
static int per_group(const struct accel_graph *g, bool (*is)(const struct tg_gtask *),
		     int (*check)(const struct accel_graph *, struct acc_group *))
{
	uint32_t i, j;
	int ret;

	for (i = 0; i < g->ntasks; i++) {
		struct acc_group *grp;

		if (!is(&g->tasks[i]))
			continue;
		grp = node_comm(&g->tasks[i])->g;
		for (j = 0; j < i; j++)
			if (is(&g->tasks[j]) && node_comm(&g->tasks[j])->g == grp)
				break;
		if (j < i)
			continue;
		ret = check(g, grp);
		if (ret)
			return ret;
	}
	return 0;
}

static bool p2p_gtask(const struct tg_gtask *t)
{
	return t->op == TG_TASK_COLL && (t->u0 & 0xff) == TG_OP_P2P;
}

/*
 * Whether every send/receive task of the launch finds room among its
 * communicator's unmatched posts (p2p.c: at most a fixed number wait for
 * their match, and a task whose calls do not fit fails with -EAGAIN): the
 * launch's tasks of group @grp, in capture order, against a copy of the
 * table, matched as they would be when issued. Another rank's calls can
 * only match this launch's posts (a stream holds posts of one direction),
 * so what passes here passes when issued, unless calls between two other
 * ranks of a multi-process communicator fill the table meanwhile. 0,
 * -EAGAIN or -ENOMEM (logged, nothing issued).
 */
static int p2p_check_group(const struct accel_graph *g, struct acc_group *grp)
{
	unsigned int peer[ACCEL_TG_P2P_MAX_OPS];
	bool send[ACCEL_TG_P2P_MAX_OPS];
	struct acc_p2p_sim *sim;
	uint32_t i, k;
	int ret = acc_p2p_sim_begin(grp, &sim);

	if (ret) {
		acc_err("accel_graph_launch: the check of its send/receive tasks: %s",
			strerror(-ret));
		return ret;
	}
	for (i = 0; i < g->ntasks && !ret; i++) {
		const struct tg_gtask *t = &g->tasks[i];
		const struct tg_pnode *pn = t->arg;
		unsigned int posts, waiting, max, rank;

		if (!p2p_gtask(t) || pn->comm->g != grp)
			continue;
		rank = pn->comm->rank;
		for (k = 0; k < pn->n; k++) {
			peer[k] = (unsigned int)pn->op[k].peer;
			send[k] = !(pn->op[k].flags & ACCEL_P2P_RECV);
		}
		if (!acc_p2p_sim_fits(sim, rank, peer, send, pn->n, &posts, &waiting, &max)) {
			acc_err("accel_graph_launch: task %u (%s): rank %u's %u sends and receives "
				"would add %u to the %u of the communicator's waiting for their match "
				"(at most %u wait); nothing is issued (-EAGAIN: launch again once the peers "
				"caught up)", i, t->name, rank, pn->n, posts, waiting, max);
			ret = -EAGAIN;
			break;
		}
		for (k = 0; k < pn->n; k++)
			acc_p2p_sim_post(sim, rank, peer[k], send[k]);
	}
	acc_p2p_sim_end(sim);
	return ret;
}

static int coll_launch_tasks(struct accel_graph_exec *ge, struct accel_buffer **act)
{
	struct accel_graph *g = ge->g;
	struct accel_tg *tg = ge->tg;
	struct accel_tensor tv_in[ACCEL_TASK_MAX_ARGS], *tv = tv_in;
	struct accel_p2p_op ops_in[ACCEL_TASK_MAX_ARGS], *ops = ops_in;
	struct accel_tensor whole[2];
	uint32_t i, k, most = 0;
	int ret;

	/* what can be checked before anything is issued */
	for (i = 0; i < g->ntasks; i++) {
		const struct tg_gtask *t = &g->tasks[i];

		if (t->nargs > most)
			most = t->nargs;

		if (t->op == TG_TASK_COLL) {
			struct accel_comm *c = node_comm(t);

			ret = acc_comm_check_error(c, "accel_graph_launch");
			if (ret) {
				acc_err("accel_graph_launch: task %u (%s): rank %u of the communicator failed before: %s",
					i, t->name, c->rank, strerror(-ret));
				goto out;
			}
		}
		for (k = 0; k < t->nargs; k++) {
			const struct accel_buffer *to = act[tg_graph_buf_index(g, tg_gt_ct(t)[k].buf)];

			if (tg_writes(tg_gt_cacc(t)[k]) && !(to->vm_flags & DRM_VACCEL_VM_WRITE)) {
				acc_err("accel_graph_launch: buffer 0x%llx, bound for one task %u (%s) writes, is %s",
					(unsigned long long)to->va, i, t->name,
					to->sealed ? "sealed" : "read-only");
				ret = -EACCES;
				goto out;
			}
		}
	}
	if (most > ACCEL_TASK_MAX_ARGS) {	/* a send/receive task of more operations */
		tv = malloc(most * sizeof(*tv));
		ops = malloc(most * sizeof(*ops));
		if (!tv || !ops) {
			acc_err("accel_graph_launch: the arguments of its tasks (%u at most): %s",
				most, strerror(ENOMEM));
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = per_group(g, seq_task, window_check_group);
	if (!ret)
		ret = per_group(g, p2p_gtask, p2p_check_group);
	if (ret)
		goto out;
	for (i = 0; i < g->ntasks; i++) {
		const struct tg_gtask *t = &g->tasks[i];
		struct tg_line *l = &tg->lines[t->line];
		uint64_t id = 0;

		for (k = 0; k < t->nargs; k++)
			rebind(g, act, &tg_gt_ct(t)[k], &tv[k]);
		if (p2p_gtask(t)) {
			const struct tg_pnode *pn = t->arg;

			memset(ops, 0, pn->n * sizeof(*ops));
			for (k = 0; k < pn->n; k++) {
				ops[k].tensor = &tv[k];
				ops[k].peer = pn->op[k].peer;
				ops[k].flags = pn->op[k].flags;
			}
			ret = p2p_task(tg, ops, pn->n, pn->comm, &id);
		} else if (t->op == TG_TASK_COLL) {
			struct tg_coll tc = { .comm = node_comm(t) };

			coll_unpack(t->u0, &tc);
			if (tc.op == ACCEL_COMM_OP_ALLTOALLV) {
				/* the whole tensors, in the buffers of blocks 0 and n (rebound) */
				const struct tg_vnode *vn = t->arg;

				tc.v = vn->v;
				whole[0] = vn->recv;
				whole[0].buf = tv[0].buf;
				whole[1] = vn->send;
				whole[1].buf = tv[t->nargs / 2].buf;
				tc.recv = &whole[0];
				tc.send = &whole[1];
			} else {
				k = 0;
				if (t->u0 & U0_RECV)
					tc.recv = &tv[k++];
				if (t->u0 & U0_SEND)
					tc.send = &tv[k++];
			}
			ret = coll_task(tg, &tc, &id);
		} else {
			struct accel_task tk;

			accel_task_init(&tk, t->op, t->name);
			tk.device = l->devi;
			tk.queue = l->qi;
			/*
			 * An OUTPUT_NEW tensor keeps the block the capture
			 * placed it in (the graph pins it), as in a sealed
			 * graph: each launch writes it again.
			 */
			for (k = 0; k < t->nargs; k++)
				accel_task_arg(&tk, &tv[k], tg_gt_cacc(t)[k] == ACCEL_OUTPUT_NEW ?
							    ACCEL_OUTPUT : tg_gt_cacc(t)[k]);
			switch (t->op) {
			case ACCEL_TASK_FILL:
				tk.fill.pattern = t->u0;
				break;
			case ACCEL_TASK_REDUCE:
				tk.reduce.op = (uint32_t)t->u0;
				break;
			case ACCEL_TASK_MATMUL:
				tk.matmul.accumulate = (uint32_t)t->u0;
				break;
			case ACCEL_TASK_DELAY:
				tk.delay.ns = t->u0;
				break;
			case ACCEL_TASK_HOST:	/* its line: the host line, whatever these say */
				tk.host.fn = t->fn;
				tk.host.arg = t->arg;
				break;
			default:
				break;
			}
			ret = accel_tg_submit(tg, &tk, &id);
		}
		if (id) {
			for (k = 0; k < ge->nlines; k++)
				if (ge->lines[k].line == t->line)
					ge->lines[k].last_value = TG_ID_VALUE(id);
		}
		if (ret) {
			if (i)
				acc_err("accel_graph_launch: task %u (%s) of %u: %s; the %u before it are issued",
					i, t->name, g->ntasks, strerror(-ret), i);
			if (id || i) {
				ge->launches++;
				tg->st.launches++;
			}
			goto out;
		}
	}
	ge->launches++;
	tg->st.launches++;
out:
	if (tv != tv_in)
		free(tv);
	if (ops != ops_in)
		free(ops);
	return ret;
}
