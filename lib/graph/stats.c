// SPDX-License-Identifier: MIT
/*
 * Statistics of a task graph: counters kept by the stages that commit
 * (eager work only: a graph launch counts as one launch, not as its tasks),
 * plus what the TensorMap and the heaps say now.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <string.h>

#include "tg_internal.h"

/* struct accel_tg_stats as of the first release (libaccel 1.0) */
#define STATS_SIZE_1_0	sizeof(struct accel_tg_stats)

ACCEL_API int accel_tg_get_stats(const struct accel_tg *tg, struct accel_tg_stats *st)
{
	struct accel_tg_stats s;
	struct tm_stats ts;
	struct gheap_stats hs;
	unsigned int d;
	uint32_t size;
	int ret;

	if (!tg || !st)
		return -EINVAL;
	size = st->size;
	ret = acc_struct_size_check(size, STATS_SIZE_1_0);
	if (ret)
		return ret;
	s = tg->st;
	s.size = (uint32_t)sizeof(s);
	s.host_tasks = atomic_load(&((struct accel_tg *)tg)->host_tasks_run);
	tm_get_stats(tg->tm, &ts);
	s.fallbacks = ts.fallbacks;
	s.capped = ts.capped;
	s.tm_live = ts.live_entries;
	s.tm_max_live = ts.max_live_entries;
	s.heap_used = 0;
	s.heap_high_water = 0;
	s.heap_reclaimed = 0;
	for (d = 0; d < tg->ndevs; d++) {
		if (!tg->heaps[d].h)
			continue;
		gheap_get_stats(tg->heaps[d].h, &hs);
		s.heap_used += hs.used;
		if (hs.high_water > s.heap_high_water)
			s.heap_high_water = hs.high_water;
		s.heap_reclaimed += hs.reclaimed;
	}
	s.buffers = tg->nbufs;
	acc_put_struct(st, size, &s, sizeof(s), STATS_SIZE_1_0);
	st->size = size;
	return 0;
}
