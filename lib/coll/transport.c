// SPDX-License-Identifier: MIT
/*
 * Transport between ranks: each rank's staging buffer and counters, the
 * peers' imports of them, and the packets that move a chunk through a
 * channel (Documentation/collectives.rst, "Channels and credits").
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"

/* Raise @sig to @target through SIGNAL MAX steps below 2^62 (wrap-safe, never down). */
static int ctr_advance(struct accel_signal *sig, uint64_t target)
{
	unsigned int i;
	int ret;

	for (i = 0; i < 8; i++) {
		uint64_t v = accel_signal_read(sig), d = target - v;

		if (!d)
			return 0;
		ret = accel_signal_write(sig, DRM_VACCEL_SIGNAL_MAX,
					 d > (1ull << 62) ? v + (1ull << 62) : target);
		if (ret)
			return ret;
	}
	return accel_signal_read(sig) == target ? 0 : -EIO;
}

static int ctr_new(struct accel_comm *c, struct acc_ctr *ctr)
{
	int ret = accel_signal_create(c->dev, &ctr->sig);

	if (ret)
		return ret;
	if (acc_comm_test_base) {
		ret = ctr_advance(ctr->sig, acc_comm_test_base);
		if (ret)
			return ret;
	}
	ctr->base = accel_signal_read(ctr->sig);
	ctr->va = accel_signal_va(ctr->sig);
	return 0;
}

uint64_t acc_slot_offset(const struct acc_group *g, unsigned int src, unsigned int dst,
			 uint64_t k)
{
	uint64_t region = src < dst ? src : src - 1;

	return (region * g->slots + k % g->slots) * g->chunk;
}

const struct acc_ctr *acc_chan_ctr(const struct acc_group *g, struct acc_chan_key key,
				   unsigned int *owner)
{
	const struct accel_comm *c;

	if (key.src >= g->nranks || key.dst >= g->nranks || key.src == key.dst ||
	    key.chan >= ACC_COMM_CHANNELS)
		return NULL;
	*owner = key.dir == ACC_DIR_DATA ? key.dst : key.src;
	c = g->ranks[*owner];
	if (!c)
		return NULL;
	return key.dir == ACC_DIR_DATA ? &c->ready[key.src] : &c->credit[key.dst];
}

int acc_rank_alloc(struct accel_comm *c)
{
	struct acc_group *g = c->g;
	unsigned int n = c->nranks, p;
	int ret;

#define ALLOC(f) do { c->f = calloc(n, sizeof(*c->f)); if (!c->f) return -ENOMEM; } while (0)
	ALLOC(peer_staging);
	ALLOC(ready);
	ALLOC(credit);
	ALLOC(imp_go);
	ALLOC(imp_ready);
	ALLOC(imp_credit);
	ALLOC(sent);
	ALLOC(recvd);
	ALLOC(peer_go_base);
	ALLOC(peer_ready_base);
	ALLOC(peer_credit_base);
#undef ALLOC
	c->plan_ctr = calloc(2 * (size_t)n, sizeof(*c->plan_ctr));
	if (!c->plan_ctr)
		return -ENOMEM;
	ret = ctr_new(c, &c->go);
	if (!ret)
		ret = ctr_new(c, &c->abort);
	if (ret)
		return ret;
	if (n == 1)
		return 0;	/* one rank: no peers, no staging */
	ret = accel_buffer_create(c->dev, (uint64_t)(n - 1) * g->slots * g->chunk, 0, &c->staging);
	if (!ret)
		ret = accel_buffer_create(c->dev, 2 * g->chunk, 0, &c->scratch);
	for (p = 0; !ret && p < n; p++) {
		if (p == c->rank)
			continue;
		ret = ctr_new(c, &c->ready[p]);
		if (!ret)
			ret = ctr_new(c, &c->credit[p]);
	}
	return ret;
}

/* Index in rank @p's exports of its ready[@q] (credit[@q] follows). */
static unsigned int export_index(unsigned int p, unsigned int q)
{
	return 3 + 2 * (q < p ? q : q - 1);
}

void acc_export_close(struct acc_export *e)
{
	unsigned int i;

	for (i = 0; i < e->n; i++)
		if (e->fd[i] >= 0)
			close(e->fd[i]);
	e->n = 0;
}

static int export_ctr(struct acc_export *e, const struct acc_ctr *ctr, bool local)
{
	unsigned int i = e->n++;
	int ret;

	e->fd[i] = -1;
	e->base[i] = ctr->base;
	ret = acc_signal_export(ctr->sig, local, &e->fd[i], &e->off[i]);
	if (ret)
		e->fd[i] = -1;
	return ret;
}

int acc_rank_export(struct accel_comm *c, struct acc_export *e, bool local)
{
	unsigned int q;
	int ret;

	memset(e, 0, sizeof(*e));
	if (c->nranks < 2)
		return 0;	/* nothing to share */
	e->n = 1;
	e->fd[0] = -1;
	ret = acc_buffer_export(c->staging, 0, local, &e->fd[0]);
	if (ret)
		e->fd[0] = -1;
	if (!ret)
		ret = export_ctr(e, &c->go, local);
	if (!ret)
		ret = export_ctr(e, &c->abort, local);
	for (q = 0; !ret && q < c->nranks; q++) {
		if (q == c->rank)
			continue;
		ret = export_ctr(e, &c->ready[q], local);
		if (!ret)
			ret = export_ctr(e, &c->credit[q], local);
	}
	if (ret)
		acc_export_close(e);
	return ret;
}

static int import_ctr(struct accel_device *dev, const struct acc_export *e, unsigned int i,
		      struct acc_ctr *ctr)
{
	int ret = accel_signal_import(dev, e->fd[i], e->off[i], &ctr->sig);

	if (ret)
		return ret;
	ctr->base = e->base[i];
	ctr->va = accel_signal_va(ctr->sig);
	return 0;
}

int acc_rank_import(struct accel_comm *c, unsigned int p, const struct acc_export *e,
		    struct accel_comm *proxy)
{
	unsigned int i = export_index(p, c->rank), q;
	struct acc_ctr ctr;
	int ret;

	if (e->n != acc_export_count(c->nranks))
		return -EPROTO;
	ret = accel_buffer_import(c->dev, e->fd[0], 0, &c->peer_staging[p]);
	if (!ret)
		ret = import_ctr(c->dev, e, 1, &ctr);
	if (ret)
		return ret;
	c->imp_go[p] = ctr.sig;
	c->peer_go_base[p] = ctr.base;
	ret = import_ctr(c->dev, e, i, &ctr);
	if (ret)
		return ret;
	c->imp_ready[p] = ctr.sig;
	c->peer_ready_base[p] = ctr.base;
	ret = import_ctr(c->dev, e, i + 1, &ctr);
	if (ret)
		return ret;
	c->imp_credit[p] = ctr.sig;
	c->peer_credit_base[p] = ctr.base;
	if (!proxy)
		return 0;
	/* every counter of @p, for releasing its queues (acc_comm_poison()) */
	ret = import_ctr(c->dev, e, 1, &proxy->go);
	if (!ret)
		ret = import_ctr(c->dev, e, 2, &proxy->abort);
	for (q = 0; !ret && q < c->nranks; q++) {
		if (q == p)
			continue;
		ret = import_ctr(c->dev, e, export_index(p, q), &proxy->ready[q]);
		if (!ret)
			ret = import_ctr(c->dev, e, export_index(p, q) + 1, &proxy->credit[q]);
	}
	return ret;
}

int acc_comm_transport_init(struct acc_group *g)
{
	struct accel_comm *c;
	struct acc_export e;
	unsigned int i, p;
	int ret;

	for (i = 0; i < g->nranks; i++) {
		c = g->ranks[i];
		ret = acc_rank_alloc(c);
		if (ret) {
			acc_err("comm_init_all: comm %p rank %u (%s): its staging and signals "
				"(%llu bytes x %u slots per peer, pinned: device memory or "
				"RLIMIT_MEMLOCK; params.chunk_bytes and .slots make it smaller): %s",
				(void *)g, i, c->dev->path, (unsigned long long)g->chunk, g->slots,
				strerror(-ret));
			return ret;
		}
	}
	/*
	 * One path with accel_comm_init_rank(): rank p's exports, imported by
	 * every peer; here in this process only, and closed below.
	 */
	for (p = 0; p < g->nranks && g->nranks > 1; p++) {
		c = g->ranks[p];
		ret = acc_rank_export(c, &e, true);
		if (ret) {
			acc_err("comm_init_all: comm %p rank %u (%s): cannot export its staging and "
				"signals: %s", (void *)g, p, c->dev->path, strerror(-ret));
			return ret;
		}
		for (i = 0; !ret && i < g->nranks; i++) {
			if (i == p)
				continue;
			ret = acc_rank_import(g->ranks[i], p, &e, NULL);
			if (ret)
				acc_err("comm_init_all: comm %p rank %u (%s): cannot import rank %u's "
					"staging and signals (%s): %s", (void *)g, i,
					g->ranks[i]->dev->path, p, c->dev->path, strerror(-ret));
		}
		acc_export_close(&e);
		if (ret)
			return ret;
	}
	return 0;
}

void acc_comm_transport_fini(struct accel_comm *c)
{
	unsigned int p;

	for (p = 0; p < c->nranks; p++) {
		if (c->peer_staging)
			accel_buffer_destroy(c->peer_staging[p]);
		if (c->imp_go)
			accel_signal_destroy(c->imp_go[p]);
		if (c->imp_ready)
			accel_signal_destroy(c->imp_ready[p]);
		if (c->imp_credit)
			accel_signal_destroy(c->imp_credit[p]);
		if (c->ready)
			accel_signal_destroy(c->ready[p].sig);
		if (c->credit)
			accel_signal_destroy(c->credit[p].sig);
	}
	accel_signal_destroy(c->go.sig);
	accel_signal_destroy(c->abort.sig);
	accel_buffer_destroy(c->staging);
	accel_buffer_destroy(c->scratch);
	free(c->peer_staging);
	free(c->ready);
	free(c->credit);
	free(c->imp_go);
	free(c->imp_ready);
	free(c->imp_credit);
	free(c->sent);
	free(c->recvd);
	free(c->peer_go_base);
	free(c->peer_ready_base);
	free(c->peer_credit_base);
	free(c->plan_ctr);
	free(c->plan_pkts);
}

/* --- plans --- */

_Atomic uint64_t acc_comm_plan_allocs;

/* The largest packet array a rank keeps between calls (bigger plans free theirs). */
#define PLAN_KEEP_PKTS	4096u

int acc_plan_init(struct acc_plan *pl, struct accel_comm *c)
{
	size_t sz = c->nranks * sizeof(uint64_t);

	memset(pl, 0, sizeof(*pl));
	pl->c = c;
	pl->timeout_ns = c->g->timeout_ns;
	/* the rank's own buffers, unless another plan of the rank holds them */
	if (c->plan_ctr && !atomic_exchange_explicit(&c->plan_busy, true, memory_order_acquire)) {
		pl->pooled = true;
		pl->pkts = c->plan_pkts;
		pl->cap = c->plan_cap;
		pl->sent = c->plan_ctr;
		pl->recvd = c->plan_ctr + c->nranks;
	} else {
		atomic_fetch_add_explicit(&acc_comm_plan_allocs, 1, memory_order_relaxed);
		pl->sent = malloc(sz);
		pl->recvd = malloc(sz);
		if (!pl->sent || !pl->recvd) {
			acc_plan_fini(pl);
			return -ENOMEM;
		}
	}
	memcpy(pl->sent, c->sent, sz);
	memcpy(pl->recvd, c->recvd, sz);
	return 0;
}

void acc_plan_fini(struct acc_plan *pl)
{
	struct accel_comm *c = pl->c;

	if (pl->pooled) {
		/* give the buffers back (a grown packet array too, up to a bound) */
		if (pl->cap > PLAN_KEEP_PKTS) {
			free(pl->pkts);
			pl->pkts = NULL;
			pl->cap = 0;
		}
		c->plan_pkts = pl->pkts;
		c->plan_cap = pl->cap;
		pl->pooled = false;
		atomic_store_explicit(&c->plan_busy, false, memory_order_release);
	} else {
		free(pl->pkts);
		free(pl->sent);
		free(pl->recvd);
	}
	pl->pkts = NULL;
	pl->sent = pl->recvd = NULL;
	pl->n = pl->cap = 0;
}

/* A zeroed packet at the end of the plan; a scratch one (and pl->err) when out of memory. */
struct drm_vaccel_packet *acc_plan_add(struct acc_plan *pl)
{
	static _Thread_local struct drm_vaccel_packet sink;

	if (pl->n == pl->cap) {
		unsigned int cap = pl->cap ? 2 * pl->cap : 64;
		struct drm_vaccel_packet *p = cap > (1u << 24) ? NULL :
					      realloc(pl->pkts, cap * sizeof(*p));

		atomic_fetch_add_explicit(&acc_comm_plan_allocs, 1, memory_order_relaxed);
		if (!p) {
			pl->err = -ENOMEM;
			return &sink;
		}
		pl->pkts = p;
		pl->cap = cap;
	}
	memset(&pl->pkts[pl->n], 0, sizeof(pl->pkts[0]));
	return &pl->pkts[pl->n++];
}

void acc_plan_copy(struct acc_plan *pl, uint64_t dst, uint64_t src, uint64_t bytes)
{
	if (bytes && dst != src)
		accel_prep_copy(acc_plan_add(pl), dst, src, bytes);
}

void acc_plan_reduce(struct acc_plan *pl, uint64_t dst, uint64_t a, uint64_t b, uint64_t n,
		     unsigned int dtype, unsigned int op)
{
	if (n)
		accel_prep_reduce(acc_plan_add(pl), dst, a, b, n, dtype, op);
}

static void plan_wait(struct acc_plan *pl, uint64_t va, uint64_t value)
{
	accel_prep_wait(acc_plan_add(pl), va, DRM_VACCEL_WAIT_GE, value, 0, pl->timeout_ns);
}

/*
 * The abort word is at its epoch-0 value unless the communicator failed:
 * a WAIT EQ with a 1 ns timeout passes at once, or faults the queue
 * (WAIT_TIMEOUT at the abort word's address) right after.
 */
void acc_plan_check(struct acc_plan *pl)
{
	accel_prep_wait(acc_plan_add(pl), pl->c->abort.va, DRM_VACCEL_WAIT_EQ, pl->c->abort.base,
			0, 1);
}

/* Before chunk @k goes into @to's slot k % slots: @to consumed chunk k - slots. */
static void plan_credit_wait(struct acc_plan *pl, unsigned int to, uint64_t k)
{
	struct accel_comm *c = pl->c;

	if (k >= c->g->slots)
		plan_wait(pl, c->credit[to].va, c->credit[to].base + (k - c->g->slots + 1));
}

void acc_plan_send(struct acc_plan *pl, unsigned int to, uint64_t src, uint64_t bytes)
{
	struct accel_comm *c = pl->c;
	uint64_t k = pl->sent[to]++;
	struct drm_vaccel_packet *p;

	plan_credit_wait(pl, to, k);
	p = acc_plan_add(pl);
	if (bytes)
		accel_prep_copy(p, accel_buffer_va(c->peer_staging[to]) +
				acc_slot_offset(c->g, c->rank, to, k), src, bytes);
	else
		accel_prep_nop(p);
	accel_prep_completion(p, accel_signal_va(c->imp_ready[to]), DRM_VACCEL_SIGNAL_MAX,
			      c->peer_ready_base[to] + k + 1);
}

uint64_t acc_plan_recv_wait(struct acc_plan *pl, unsigned int from)
{
	struct accel_comm *c = pl->c;
	uint64_t k = pl->recvd[from];

	plan_wait(pl, c->ready[from].va, c->ready[from].base + k + 1);
	return c->staging ? accel_buffer_va(c->staging) + acc_slot_offset(c->g, from, c->rank, k)
			  : 0;
}

void acc_plan_recv_done(struct acc_plan *pl, unsigned int from)
{
	struct accel_comm *c = pl->c;
	uint64_t k = pl->recvd[from]++;

	accel_prep_signal(acc_plan_add(pl), accel_signal_va(c->imp_credit[from]),
			  DRM_VACCEL_SIGNAL_MAX, c->peer_credit_base[from] + k + 1);
}

void acc_plan_recv_reduce_send(struct acc_plan *pl, unsigned int from, unsigned int to,
			       uint64_t own, uint64_t n, unsigned int dtype, unsigned int op)
{
	struct accel_comm *c = pl->c;
	uint64_t k = pl->sent[to]++, slot;
	struct drm_vaccel_packet *p;

	plan_credit_wait(pl, to, k);
	slot = acc_plan_recv_wait(pl, from);
	p = acc_plan_add(pl);
	accel_prep_reduce(p, accel_buffer_va(c->peer_staging[to]) +
			  acc_slot_offset(c->g, c->rank, to, k), own, slot, n, dtype, op);
	accel_prep_completion(p, accel_signal_va(c->imp_ready[to]), DRM_VACCEL_SIGNAL_MAX,
			      c->peer_ready_base[to] + k + 1);
	acc_plan_recv_done(pl, from);
}

/* bfloat16 and IEEE half bits of @f, rounded to nearest even (f is 1/n: finite, normal). */
static uint16_t f32_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

/* 1/n for n <= 64 ranks is a normal half: no subnormal or overflow case. */
static uint16_t f32_to_f16(float f)
{
	uint32_t u, mant, h, rest;
	int exp;

	memcpy(&u, &f, 4);
	exp = (int)((u >> 23) & 0xff) - 127 + 15;
	mant = u & 0x7fffff;
	h = (uint32_t)exp << 10 | mant >> 13;
	rest = mant & 0x1fff;
	if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
		h++;
	return (uint16_t)h;
}

void acc_plan_fill_scale(struct acc_plan *pl, unsigned int dtype)
{
	struct accel_comm *c = pl->c;
	float inv = 1.0f / (float)c->nranks;
	uint64_t pattern;
	unsigned int width;

	switch (dtype) {
	case DRM_VACCEL_DTYPE_F32:
		memcpy(&pattern, &inv, 4);
		pattern &= 0xffffffffull;
		width = 4;
		break;
	case DRM_VACCEL_DTYPE_F16:
		pattern = f32_to_f16(inv);
		width = 2;
		break;
	default:
		pattern = f32_to_bf16(inv);
		width = 2;
		break;
	}
	accel_prep_fill(acc_plan_add(pl), accel_buffer_va(c->scratch) + c->g->chunk, c->g->chunk,
			pattern, width);
}

void acc_plan_scale(struct acc_plan *pl, uint64_t dst, uint64_t n, unsigned int dtype)
{
	acc_plan_reduce(pl, dst, dst, accel_buffer_va(pl->c->scratch) + pl->c->g->chunk, n, dtype,
			DRM_VACCEL_REDOP_PROD);
}
