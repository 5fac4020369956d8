/* SPDX-License-Identifier: MIT */
/*
 * The TensorMap: which earlier tasks a tensor argument depends on.
 *
 * Internal to libaccel (the task graph uses it); pure logic, no device
 * access, no threads, not thread-safe (one per task graph).
 *
 * Which calls can fail: tm_create() and tm_reserve() (-ENOMEM),
 * tm_layout_make() (a bad view), tm_deps() (a bad view only: it never
 * allocates), tm_insert() (a bad view, or -ENOMEM) and tm_insert_layout()
 * (-ENOMEM only, and not at all for inserts covered by a tm_reserve()).
 * A call that fails changes nothing. Everything else returns void or an
 * answer and cannot fail.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef ACCEL_GRAPH_TENSORMAP_H
#define ACCEL_GRAPH_TENSORMAP_H

#include <stdint.h>

#include <accel/tensor.h>

/*
 * The byte set of a view, canonical: dimensions of shape 1 dropped, the
 * rest sorted by stride, the innermost contiguous dimensions folded into
 * one run of @run bytes, dimensions that continue each other merged. Level
 * k (0 <= k <= nd) is a block of ext[k] bytes: level 0 is the run, level
 * k + 1 is count[k] level-k blocks stride[k] bytes apart. The view is
 * "non-interleaved" when stride[k] >= ext[k] for every k, i.e. the blocks
 * of a level never interleave: then the byte set is a disjoint nested
 * union of runs, and overlap and cover are decided exactly. Otherwise
 * (@interleaved) only the byte hull [lo, hi) is used.
 *
 * The fast path: when each stride divides the next, every byte address x
 * has unique mixed-radix digits: x = d[nd] * stride[nd - 1] + ... +
 * d[1] * stride[0] + d[0], 0 <= d[0] < stride[0], 0 <= d[k] <
 * stride[k] / stride[k - 1]. When adding the element offsets to @lo never
 * carries a digit (@box), the byte set is exactly the box of addresses
 * with d[0] in [box0[0], box0[0] + run) and d[k + 1] in [box0[k + 1],
 * box0[k + 1] + count[k]). Two boxes with the same strides overlap (cover)
 * iff every digit interval does: O(nd) comparisons, no division.
 */
struct tm_layout {
	int64_t lo, hi;			/* byte hull; lo == offset */
	int64_t run;
	uint32_t nd;
	uint8_t interleaved;
	uint8_t empty;
	uint8_t box;			/* the byte set is the box at box0 (implies !interleaved) */
	int64_t box0[ACCEL_TENSOR_MAX_DIMS + 1];
	int64_t count[ACCEL_TENSOR_MAX_DIMS];
	int64_t stride[ACCEL_TENSOR_MAX_DIMS];
	int64_t ext[ACCEL_TENSOR_MAX_DIMS + 1];
};

/* 0, or -EINVAL / -EOVERFLOW as accel_tensor_check() */
int tm_layout_make(const struct accel_tensor *t, struct tm_layout *l);

/*
 * The work of one overlap or cover decision is capped: the exact
 * recursion on two layouts with unrelated strides can enumerate the
 * children of one inside the other's hull, level by level (two step-sliced
 * 2-D views of 10^5 rows of unrelated row strides: 10^7 steps, 0.1 s, and
 * more for larger views). A step is one recursive call or one shift tried;
 * a step costs about 10 ns. When a decision has used TM_DECISION_BUDGET
 * steps, it stops and gives the answer that is always safe: overlap
 * "yes", cover "no" (so a capped decision adds a dependency or keeps an
 * entry alive, never loses one). Boxes of the same strides never recurse
 * and are never capped.
 */
#define TM_DECISION_BUDGET	4096

/* *fallback flags: why an answer was not exact */
#define TM_FB_HULL	1	/* an interleaved view, decided by its byte hull */
#define TM_FB_CAPPED	2	/* the work budget ran out: the safe answer */

/*
 * Do two layouts share a byte? Exact when neither is interleaved and the
 * budget suffices; else the hull test (*fallback |= TM_FB_HULL when that
 * decided "yes"), or "yes" when the budget ran out (*fallback |=
 * TM_FB_CAPPED). Flags are only ever set: initialise *fallback to 0.
 */
int tm_layout_overlap(const struct tm_layout *a, const struct tm_layout *b, int *fallback);

/*
 * Is every byte of @e a byte of @w? Exact when neither is interleaved and
 * the budget suffices. An interleaved @w covers nothing; an interleaved @e
 * is covered when its hull is (both conservative: a "no" only keeps an
 * entry alive); *fallback |= TM_FB_HULL when an interleaved layout made the
 * answer "no". "No" when the budget ran out (*fallback |= TM_FB_CAPPED).
 */
int tm_layout_covers(const struct tm_layout *w, const struct tm_layout *e, int *fallback);

/*
 * The same with a budget of @budget steps instead of TM_DECISION_BUDGET
 * (UINT32_MAX: practically none); *steps (if not NULL) gets the steps
 * taken, at most @budget + 1.
 */
int tm_layout_overlap_budget(const struct tm_layout *a, const struct tm_layout *b,
			     uint32_t budget, uint32_t *steps, int *fallback);
int tm_layout_covers_budget(const struct tm_layout *w, const struct tm_layout *e,
			    uint32_t budget, uint32_t *steps, int *fallback);

enum tm_dep_kind {
	TM_DEP_RAW,	/* the argument reads (or reads and writes) what the task wrote */
	TM_DEP_WAR,	/* the argument writes what the task read */
	TM_DEP_WAW,	/* the argument writes (without reading) what the task wrote */
	TM_DEP_KINDS,
};

/* called once per (entry, kind): a task with several entries may come twice */
typedef void (*tm_dep_fn)(void *arg, uint64_t task, enum tm_dep_kind kind);
/* non-zero when @task has completed: its entries can go */
typedef int (*tm_complete_fn)(void *arg, uint64_t task);

struct tm_stats {
	uint64_t lookups;		/* tm_deps() calls */
	uint64_t deps[TM_DEP_KINDS];	/* dependencies reported, by kind */
	uint64_t fallbacks;		/* conservative decisions (interleaved views: TM_FB_HULL) */
	uint64_t inserts;		/* entries registered */
	uint64_t retired;		/* entries removed by a covering write */
	uint64_t dropped;		/* entries of completed tasks removed */
	uint64_t live_entries;
	uint64_t max_live_entries;
	uint64_t buffers;		/* buffers with an index */
	uint64_t capped;		/* decisions stopped by the budget (TM_FB_CAPPED) */
	uint64_t same_view_lookups;	/* lookups answered in O(1) (tm_deps(), below) */
	uint64_t same_view_inserts;	/* writer inserts that refreshed an entry in place */
	uint64_t run_inserts;		/* inserts appended to a buffer's run (tm_insert()) */
};

struct tensormap;

/* @complete may be NULL: then entries go only by covering writes */
int tm_create(tm_complete_fn complete, void *complete_arg, struct tensormap **out);
void tm_destroy(struct tensormap *tm);

/*
 * A number that changes whenever a task completes (the task graph: the
 * sum of its lines' timeline values), called with the complete_arg.
 */
typedef uint64_t (*tm_progress_fn)(void *arg);

/**
 * tm_set_progress() - let reclaims skip scans that cannot find anything
 * @tm: the map
 * @progress: the progress count, or NULL (every reclaim scans)
 *
 * A reclaim (tm_reclaim(), or the automatic one of an insert) reads the
 * count first; when it is the one the last scan read, it scans nothing:
 * every entry complete then was dropped by that scan, and no task has
 * completed since. Entries inserted since do not change that, as the
 * task of an insert has not completed (callers insert for work they are
 * about to issue, never for finished work). Only memory waits longer if a
 * count repeats by chance: lookups check completion themselves.
 */
void tm_set_progress(struct tensormap *tm, tm_progress_fn progress);

/**
 * tm_reserve() - make room for the next inserts, before anything changes
 * @tm: the map
 * @bufs: the buffers of the inserts to come, one per insert (a buffer may
 *	repeat)
 * @n: how many
 *
 * After it returns 0, the next @n calls of tm_insert_layout() (or of
 * tm_insert() with a valid view), one for each listed buffer in any order,
 * cannot fail: the node pool, the buffers' index table and the scratch
 * space of the walks all have room. Calls of tm_deps(), tm_reclaim(),
 * tm_forget_buffer() and the group calls in between do not use that room
 * up. So a caller that must insert several entries all or nothing (the
 * arguments of a task, the summaries of a graph launch) reserves first and
 * fails before it has changed anything.
 *
 * Return: 0, or -ENOMEM (the map is unchanged, but maybe for capacity).
 */
int tm_reserve(struct tensormap *tm, const struct accel_buffer *const *bufs, unsigned int n);

/**
 * tm_group_begin() - open a group of sibling inserts
 * @tm: the map
 *
 * Until tm_group_end(), every inserted entry belongs to the group, and a
 * writer inserted in the group never retires an entry of the same group
 * (it still retires the covered entries that were inserted before the
 * group began, or in another group, and drops those of completed tasks).
 * For entries that are unordered with each other: the per-(queue, buffer)
 * summaries of one graph launch, where one queue's write summary must not
 * hide another queue's summary of the same launch from later tasks.
 * Lookups (tm_deps()) see group entries like any other: look up all the
 * siblings before inserting the first. Groups do not nest: a
 * tm_group_begin() inside a group ends it and opens a new one. Group ids
 * are 32 bits; after 2^32 - 1 groups an id repeats, and an old entry with
 * the id of the open group is then not retired by it (a conservative
 * answer: a dependency too many, never one too few). Cannot fail.
 */
void tm_group_begin(struct tensormap *tm);

/* close the open group (nothing if none is open); cannot fail */
void tm_group_end(struct tensormap *tm);

/*
 * The step budget of each overlap or cover decision the map makes
 * (default TM_DECISION_BUDGET; tests use small ones to exercise the
 * capped answers). Cannot fail.
 */
void tm_set_decision_budget(struct tensormap *tm, uint32_t budget);

/* tm_set_flags(): turn the same-view paths off (tests, benchmark baselines) */
#define TM_NO_SAME_VIEW		1u
/* tm_set_flags(): every entry into the trees, none into a run (tests, baselines) */
#define TM_NO_RUN		2u

/* set the flags above (default 0); cannot fail */
void tm_set_flags(struct tensormap *tm, unsigned int flags);

/*
 * Report (through @fn) every earlier task that the argument @t, accessed
 * as @acc by @task, depends on: INPUT gets RAW on every overlapping live
 * writer; OUTPUT and OUTPUT_NEW get WAW on every overlapping writer and
 * WAR on every overlapping reader; INOUT gets RAW on writers and WAR on
 * readers. Entries of @task itself are ignored (aliased arguments of one
 * task), entries of completed tasks are dropped on the way. Does not
 * register the argument: call tm_deps() for all arguments of a task,
 * then tm_insert() for all of them.
 *
 * No semantic side effect: the only change it makes is dropping entries
 * of completed tasks it passes (idempotent cleanup, which any later call
 * would also do; it changes no answer). It never allocates, so it fails
 * only for a bad view.
 *
 * Cost: O(log n + k) (an interval-tree walk and a binary search of the
 * buffer's runs: tm_insert()), O(1) when the argument lies outside the
 * hulls of the buffer's live entries of a kind or outside a run, and O(1)
 * in two cases where the answer is known exactly without the walk
 * (same_view_lookups): the view is exactly that of the buffer's last
 * insert, and no other live entry overlaps it; or the argument is INPUT
 * and its view is exactly that of a writer entry in a tree (writers in
 * runs are found by the binary search) that no other live writer
 * overlaps (a task reading what one earlier task wrote). Either way the
 * answer is the one the walk would give (the TM_NO_SAME_VIEW twin test
 * checks that).
 *
 * Return: the number of reports, or -EINVAL / -EOVERFLOW for a bad view.
 */
int tm_deps(struct tensormap *tm, const struct accel_tensor *t, enum accel_access acc,
	    uint64_t task, tm_dep_fn fn, void *arg);

/*
 * Register the argument: a reader entry for INPUT, a writer entry
 * otherwise. A writer retires every entry whose bytes it covers (but its
 * siblings of an open group: tm_group_begin()).
 *
 * Entries of a buffer go into one interval tree per kind (readers,
 * writers), or, when the view's byte hull lies above every entry of the
 * buffer's run of that kind, at the end of that run (an array of entries
 * with disjoint hulls in increasing order; run_inserts): slices of a
 * buffer used in order, as a stream or a pipeline walks it, never touch
 * a tree.
 *
 * Cost: a reader O(log n), O(1) appended to a run; a writer O(log n + k)
 * (the covered and the overlapping entries: its cover walk looks at the
 * trees and the runs as a lookup does), and O(1) when its view is exactly
 * that of the
 * buffer's last insert, a writer entry that no other live entry overlaps
 * (the same tensor written every iteration): that entry is refreshed in
 * place (same_view_inserts), with the result the walk would give.
 *
 * Return: 0, -ENOMEM (not after a tm_reserve() that counted this insert),
 * or -EINVAL / -EOVERFLOW for a bad view. On failure the map is unchanged.
 */
int tm_insert(struct tensormap *tm, const struct accel_tensor *t, enum accel_access acc,
	      uint64_t task);

/* the same, with the view's layout already made (tm_layout_make()) */
int tm_deps_layout(struct tensormap *tm, const struct accel_buffer *buf,
		   const struct tm_layout *q, enum accel_access acc, uint64_t task, tm_dep_fn fn,
		   void *arg);
int tm_insert_layout(struct tensormap *tm, const struct accel_buffer *buf,
		     const struct tm_layout *q, enum accel_access acc, uint64_t task);

/* drop the entries of every completed task now (also done automatically) */
void tm_reclaim(struct tensormap *tm);

/* drop the index of a buffer (being destroyed) */
void tm_forget_buffer(struct tensormap *tm, const struct accel_buffer *buf);

void tm_get_stats(const struct tensormap *tm, struct tm_stats *st);

#endif /* ACCEL_GRAPH_TENSORMAP_H */
