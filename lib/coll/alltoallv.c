// SPDX-License-Identifier: MIT
/*
 * accel_alltoallv(): MPI_Alltoallv's shape on the direct (one-shot)
 * transport. The argument checks (every range, the overlaps), the
 * pairwise matching of the counts across ranks (what rank i sends to j
 * is what j receives from i), done where the calls are matched, and the
 * packets: chunk rounds over the ordered pairs, all sends of a round
 * before its receives (Documentation/collectives.rst, "Alltoallv").
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"

static bool overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

/*
 * The counts table of arrival @w (g->lock): of a multi-process group, the
 * window slot's table in the shared extension (xproc.c), so that every
 * process reads the counts the others wrote; else the arrival's own,
 * allocated at its first alltoallv (NULL until then).
 */
uint64_t *acc_alltoallv_table(struct acc_group *g, struct acc_arrival *w)
{
	if (g->mp)
		return g->xp_vc + (uint64_t)(w - g->win) * 2 * g->nranks * g->nranks;
	return w->vc;
}

/* Rank @r's counts in the table @vc: sendcounts (@recv false) or recvcounts. */
static uint64_t *row(uint64_t *vc, unsigned int n, unsigned int r, bool recv)
{
	return vc + ((uint64_t)r * 2 + recv) * n;
}

const char *acc_alltoallv_match(struct acc_group *g, struct acc_arrival *w,
				const struct accel_comm *c, struct acc_args *a)
{
	unsigned int n = c->nranks, r = c->rank, j;
	uint64_t *vc;

	if (!g->mp && !w->vc) {
		w->vc = a->vspare;	/* the arrival keeps it; freed with the group */
		a->vspare = NULL;
	}
	vc = acc_alltoallv_table(g, w);
	for (j = 0; j < n; j++) {
		uint64_t sj, rj;

		if (j == r || !(w->arrived & (1ull << j)))
			continue;
		sj = row(vc, n, j, false)[r];	/* j sends to r */
		rj = row(vc, n, j, true)[r];	/* j receives from r */
		if (a->scounts[j] != rj || a->rcounts[j] != sj) {
			bool out = a->scounts[j] != rj;

			/* for every rank's report (errors.c), in the shared state */
			g->a2av_fail.set = 1;
			g->a2av_fail.src = out ? r : j;
			g->a2av_fail.dst = out ? j : r;
			g->a2av_fail.sent = out ? a->scounts[j] : sj;
			g->a2av_fail.recvd = out ? rj : a->rcounts[j];

			acc_err("comm %p: alltoallv seq %llu: rank %u %s %llu elements %s rank %u, "
				"which %s %llu %s rank %u; the operation fails on every rank "
				"(-EPROTO)", (void *)g, (unsigned long long)w->seq, r,
				out ? "sends" : "receives",
				(unsigned long long)(out ? a->scounts[j] : a->rcounts[j]),
				out ? "to" : "from", j, out ? "receives" : "sends",
				(unsigned long long)(out ? rj : sj), out ? "from" : "to", r);
			return "alltoallv counts";
		}
	}
	memcpy(row(vc, n, r, false), a->scounts, n * sizeof(uint64_t));
	memcpy(row(vc, n, r, true), a->rcounts, n * sizeof(uint64_t));
	return NULL;
}

/*
 * Chunk rounds: in round k, this rank sends chunk k of its block for
 * each peer that has one (to r + 1, r + 2, ...), then receives chunk k
 * of each peer's block for it (from r - 1, r - 2, ...). A block of 0
 * elements uses no chunk on its channel, on both ends (the counts
 * match). The own block is a local copy.
 */
void acc_alltoallv_plan(struct acc_plan *pl, const struct acc_args *a)
{
	struct accel_comm *c = pl->c;
	unsigned int n = c->nranks, r = c->rank, i, p;
	uint64_t es = a->esize, e = c->g->chunk / es, k, more = 1;

	acc_plan_copy(pl, a->recv + a->rdispls[r] * es, a->send + a->sdispls[r] * es,
		      a->scounts[r] * es);
	for (k = 0; more; k++) {
		more = 0;
		for (i = 1; i < n; i++) {
			uint64_t at = k * e, l;

			p = (r + i) % n;
			if (a->scounts[p] <= at)
				continue;
			l = a->scounts[p] - at < e ? a->scounts[p] - at : e;
			acc_plan_send(pl, p, a->send + (a->sdispls[p] + at) * es, l * es);
			more |= a->scounts[p] > at + l;
		}
		for (i = 1; i < n; i++) {
			uint64_t at = k * e, l;

			p = (r + n - i) % n;
			if (a->rcounts[p] <= at)
				continue;
			l = a->rcounts[p] - at < e ? a->rcounts[p] - at : e;
			acc_plan_copy(pl, a->recv + (a->rdispls[p] + at) * es,
				      acc_plan_recv_wait(pl, p), l * es);
			acc_plan_recv_done(pl, p);
			more |= a->rcounts[p] > at + l;
		}
	}
}

/* The ranges of one side: @counts[p] elements at @base + @displs[p] elements; -EINVAL if bad. */
static int check_ranges(const struct accel_comm *c, const char *side, uint64_t base,
			const uint64_t *counts, const uint64_t *displs, uint64_t es)
{
	uint64_t lim = (UINT64_MAX >> 16) / es;
	unsigned int p;

	for (p = 0; p < c->nranks; p++) {
		if (counts[p] > lim || displs[p] > lim ||
		    base + (displs[p] + counts[p]) * es < base) {
			acc_err("alltoallv: rank %u: %s block of rank %u: %llu elements at "
				"displacement %llu: too large or wrapping", c->rank, side, p,
				(unsigned long long)counts[p], (unsigned long long)displs[p]);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_overlaps(const struct accel_comm *c, const struct acc_args *a)
{
	unsigned int n = c->nranks, p, q;
	uint64_t es = a->esize;

	for (p = 0; p < n; p++) {
		uint64_t ra = a->recv + a->rdispls[p] * es, rl = a->rcounts[p] * es;

		for (q = 0; q < n; q++) {
			uint64_t sa = a->send + a->sdispls[q] * es, sl = a->scounts[q] * es;
			uint64_t ob = a->recv + a->rdispls[q] * es, ol = a->rcounts[q] * es;

			if (overlap(ra, rl, sa, sl)) {
				acc_err("alltoallv: rank %u: recv block of rank %u [%#llx, %#llx) "
					"overlaps send block of rank %u [%#llx, %#llx)", c->rank, p,
					(unsigned long long)ra, (unsigned long long)(ra + rl), q,
					(unsigned long long)sa, (unsigned long long)(sa + sl));
				return -EINVAL;
			}
			if (q > p && overlap(ra, rl, ob, ol)) {
				acc_err("alltoallv: rank %u: recv blocks of ranks %u "
					"[%#llx, %#llx) and %u [%#llx, %#llx) overlap", c->rank, p,
					(unsigned long long)ra, (unsigned long long)(ra + rl), q,
					(unsigned long long)ob, (unsigned long long)(ob + ol));
				return -EINVAL;
			}
		}
	}
	return 0;
}

int acc_alltoallv_issue(uint64_t send, const uint64_t *sendcounts, const uint64_t *sdispls,
			uint64_t recv, const uint64_t *recvcounts, const uint64_t *rdispls,
			enum accel_dtype dtype, struct accel_comm *comm, struct accel_queue *queue,
			struct acc_coll_hook *hook, bool check_only, struct accel_event *ev)
{
	struct acc_args a = { .op = ACCEL_COMM_OP_ALLTOALLV, .send = send, .recv = recv,
			      .root = -1, .hook = hook };
	unsigned int n, p;
	uint64_t *copy, total = 0;
	int ret, es;

	if (!comm || !queue || !ev || !sendcounts || !sdispls || !recvcounts || !rdispls) {
		acc_err("alltoallv: NULL communicator, queue, event or count/displacement array");
		return -EINVAL;
	}
	ret = acc_check_dev(comm->dev, "alltoallv");
	if (ret)
		return ret;
	if (accel_queue_device(queue) != comm->dev) {
		acc_err("alltoallv: rank %u: the queue is of another device than the rank's (%s)",
			comm->rank, comm->dev->path);
		return -EINVAL;
	}
	if ((unsigned int)dtype >= ACCEL_DTYPE_COUNT) {
		acc_err("alltoallv: rank %u: dtype %u unknown", comm->rank, (unsigned int)dtype);
		return -EINVAL;
	}
	es = accel_dtype_size(dtype);
	n = comm->nranks;
	/* the arrays are the caller's: copied once, checked and used from the copy */
	copy = malloc(4 * n * sizeof(uint64_t));
	/* multi-process: the table is in the shared extension (acc_alltoallv_table()) */
	a.vspare = comm->g->mp ? NULL : calloc(2 * (size_t)n * n, sizeof(uint64_t));
	if (!copy || (!comm->g->mp && !a.vspare)) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(copy, sendcounts, n * sizeof(uint64_t));
	memcpy(copy + n, sdispls, n * sizeof(uint64_t));
	memcpy(copy + 2 * n, recvcounts, n * sizeof(uint64_t));
	memcpy(copy + 3 * n, rdispls, n * sizeof(uint64_t));
	a.scounts = copy;
	a.sdispls = copy + n;
	a.rcounts = copy + 2 * n;
	a.rdispls = copy + 3 * n;
	a.udtype = dtype;
	a.esize = (unsigned int)es;
	ret = -EINVAL;
	if (send % es || recv % es) {
		acc_err("alltoallv: rank %u: send %#llx or recv %#llx not aligned to the element "
			"size %d", comm->rank, (unsigned long long)send, (unsigned long long)recv,
			es);
		goto out;
	}
	if (check_ranges(comm, "send", send, a.scounts, a.sdispls, es) ||
	    check_ranges(comm, "recv", recv, a.rcounts, a.rdispls, es))
		goto out;
	if (a.scounts[comm->rank] != a.rcounts[comm->rank]) {
		acc_err("alltoallv: rank %u sends %llu elements to itself and receives %llu",
			comm->rank, (unsigned long long)a.scounts[comm->rank],
			(unsigned long long)a.rcounts[comm->rank]);
		goto out;
	}
	for (p = 0; p < n; p++) {
		if (total + a.scounts[p] < total || total + a.scounts[p] > UINT64_MAX >> 16) {
			acc_err("alltoallv: rank %u: the send counts' sum is too large",
				comm->rank);
			goto out;
		}
		total += a.scounts[p];
	}
	if (check_overlaps(comm, &a))
		goto out;
	a.count = total;	/* described in reports; not compared (the counts are) */
	if (check_only) {	/* a task graph's capture */
		ret = acc_comm_check_error(comm, "alltoallv");
		goto out;
	}
	ret = acc_coll_call(comm, &a, queue, ev);
out:
	free(copy);
	free(a.vspare);
	return ret;
}

ACCEL_API int accel_alltoallv(uint64_t send, const uint64_t *sendcounts, const uint64_t *sdispls,
			      uint64_t recv, const uint64_t *recvcounts, const uint64_t *rdispls,
			      enum accel_dtype dtype, struct accel_comm *comm,
			      struct accel_queue *queue, struct accel_event *ev)
{
	return acc_alltoallv_issue(send, sendcounts, sdispls, recv, recvcounts, rdispls, dtype,
				   comm, queue, NULL, false, ev);
}
