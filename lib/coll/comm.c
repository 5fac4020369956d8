// SPDX-License-Identifier: MIT
/*
 * Communicators: settings, accel_comm_init_all(), accel_comm_destroy() and
 * the small queries.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"

uint64_t acc_comm_test_base;

void acc_group_lock(struct acc_group *g)
{
	pthread_mutex_lock(&g->lock);
}

void acc_group_unlock(struct acc_group *g)
{
	pthread_mutex_unlock(&g->lock);
}

/* The settings: the caller's, then the environment's, then the defaults. */
static int comm_settings(struct acc_group *g, const struct accel_comm_params *params)
{
	struct accel_comm_params p;
	const char *env;
	unsigned int i;
	int ret;

	memset(&p, 0, sizeof(p));
	if (params) {
		ret = acc_copy_struct(&p, sizeof(p), params, params->size,
				      ACCEL_COMM_PARAMS_SIZE_1_2);
		if (ret) {
			acc_err("comm_init: accel_comm_params size %u: %s", params->size,
				ret == -E2BIG ? "unknown non-zero fields or above 4096" :
						"below the 1.2 size");
			return ret;
		}
	}
	for (i = 0; i < 2; i++)
		if (p.reserved[i])
			goto bad;
	if (p.reserved32 || p.flags || p.algo > ACCEL_COMM_ALGO_ONESHOT || p.slots == 1 ||
	    p.slots > 16 || p.chunk_bytes % 4096 || p.chunk_bytes > (64u << 20))
		goto bad;
	g->algo = p.algo;
	if (g->algo == ACCEL_COMM_ALGO_AUTO) {
		env = getenv("ACCEL_ALGO");
		if (env && !strcmp(env, "ring")) {
			g->algo = ACCEL_COMM_ALGO_RING;
		} else if (env && !strcmp(env, "oneshot")) {
			g->algo = ACCEL_COMM_ALGO_ONESHOT;
		} else if (env && *env && strcmp(env, "auto")) {
			acc_err("comm_init: ACCEL_ALGO=%s: not ring, oneshot or auto", env);
			return -EINVAL;
		}
	}
	g->timeout_ns = (uint64_t)(p.timeout_ms ? p.timeout_ms : ACC_COMM_DEF_TIMEOUT_MS) * 1000000;
	env = getenv("ACCEL_COMM_TIMEOUT_MS");
	if (!p.timeout_ms && env && *env) {
		char *end;
		unsigned long v = strtoul(env, &end, 10);

		if (*end || !v || v > 86400000ul) {
			acc_err("comm_init: ACCEL_COMM_TIMEOUT_MS=%s: not 1 to 86400000", env);
			return -EINVAL;
		}
		g->timeout_ns = (uint64_t)v * 1000000;
	}
	g->chunk = p.chunk_bytes ? p.chunk_bytes : ACC_COMM_DEF_CHUNK;
	g->slots = p.slots ? p.slots : ACC_COMM_DEF_SLOTS;
	g->oneshot_max = p.oneshot_max ? p.oneshot_max : ACC_COMM_DEF_ONESHOT;
	return acc_rec_settings(g, &p);
bad:
	acc_err("comm_init: accel_comm_params: algo %u, chunk_bytes %u, slots %u, flags %#x or "
		"reserved fields out of range", p.algo, p.chunk_bytes, p.slots, p.flags);
	return -EINVAL;
}

static void group_free(struct acc_group *g)
{
	pthread_mutex_destroy(&g->lock);
	acc_rec_group_fini(g);
	free(g->ranks);
	free(g);
}

static void comm_free(struct accel_comm *c)
{
	acc_comm_transport_fini(c);
	acc_rec_fini(c);
	free(c);
}

ACCEL_API int accel_comm_init_all(struct accel_comm **comms, unsigned int ndevs,
				  struct accel_device *const *devs,
				  const struct accel_comm_params *params)
{
	struct acc_group *g;
	unsigned int i, j;
	int ret;

	if (!comms || !devs || !ndevs || ndevs > ACCEL_COMM_MAX_RANKS) {
		acc_err("comm_init_all: %u devices (1 to %u, non-NULL arrays)", ndevs,
			ACCEL_COMM_MAX_RANKS);
		return -EINVAL;
	}
	for (i = 0; i < ndevs; i++) {
		if (!devs[i]) {
			acc_err("comm_init_all: device %u is NULL", i);
			return -EINVAL;
		}
		ret = acc_check_dev(devs[i], "comm_init_all");
		if (ret)
			return ret;
		for (j = 0; j < i; j++)
			if (devs[j] == devs[i]) {
				acc_err("comm_init_all: devices %u and %u are the same (%s)", j, i,
					devs[i]->path);
				return -EINVAL;
			}
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->ranks = calloc(ndevs, sizeof(*g->ranks));
	if (!g->ranks) {
		free(g);
		return -ENOMEM;
	}
	pthread_mutex_init(&g->lock, NULL);
	g->nranks = ndevs;
	ret = comm_settings(g, params);
	if (ret)
		goto fail;
	g->seq0 = acc_comm_test_base;
	for (i = 0; i < ndevs; i++)
		g->next_seq[i] = g->seq0;
	for (i = 0; i < ndevs; i++) {
		struct accel_comm *c = calloc(1, sizeof(*c));

		if (!c) {
			ret = -ENOMEM;
			goto fail;
		}
		c->g = g;
		c->rank = i;
		c->nranks = ndevs;
		c->dev = devs[i];
		g->ranks[i] = c;
		ret = acc_rec_init(c);
		if (ret)
			goto fail;
	}
	ret = acc_comm_transport_init(g);
	if (ret)
		goto fail;
	g->live = ndevs;
	for (i = 0; i < ndevs; i++)
		comms[i] = g->ranks[i];
	acc_info("comm %p: %u ranks, algorithm %s, chunk %llu bytes x %u slots, one-shot up to "
		 "%llu bytes, timeout %llu ms", (void *)g, ndevs, acc_algo_name(g->algo),
		 (unsigned long long)g->chunk, g->slots, (unsigned long long)g->oneshot_max,
		 (unsigned long long)(g->timeout_ns / 1000000));
	return 0;
fail:
	for (i = 0; i < ndevs; i++)
		if (g->ranks[i])
			comm_free(g->ranks[i]);
	group_free(g);
	return ret;
}

ACCEL_API void accel_comm_destroy(struct accel_comm *comm)
{
	struct acc_group *g;
	bool last;

	if (!comm)
		return;
	g = comm->g;
	acc_group_lock(g);
	g->ranks[comm->rank] = NULL;
	last = --g->live == 0;
	/* freed under the lock: an abort on another rank skips it or finishes first */
	comm_free(comm);
	acc_group_unlock(g);
	if (last)
		group_free(g);
}

ACCEL_API int accel_comm_count(const struct accel_comm *comm)
{
	return comm ? (int)comm->nranks : -EINVAL;
}

ACCEL_API int accel_comm_rank(const struct accel_comm *comm)
{
	return comm ? (int)comm->rank : -EINVAL;
}

ACCEL_API struct accel_device *accel_comm_device(const struct accel_comm *comm)
{
	return comm ? comm->dev : NULL;
}
