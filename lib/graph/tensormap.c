// SPDX-License-Identifier: MIT
/*
 * The TensorMap: per buffer, two interval trees, of reader and of writer
 * entries (view, task): treaps keyed by the low end of each entry's byte
 * hull, augmented with the subtree's lowest low end, highest high end and
 * phase hull. A lookup visits only the entries whose hull and phase meet
 * the argument's, O(log n + k), then decides exact overlap on the
 * canonical layouts (tensormap.h). Two O(1) paths answer without a walk
 * when the answer is known exactly: the buffer's last insert, and the
 * view index of writers (below).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "tensormap.h"

/* ---- layouts ---- */

/* the mixed-radix digits of lo, and whether the byte set is their box (tensormap.h) */
static void layout_box(struct tm_layout *l)
{
	int64_t rem = l->lo;
	uint32_t k;

	if (!l->nd) {
		/* one run: its own box, digit 0 unbounded */
		l->box0[0] = l->lo;
		l->box = 1;
		return;
	}
	for (k = 0; k + 1 < l->nd; k++)
		if (l->stride[k + 1] % l->stride[k])
			return;
	for (k = l->nd; k > 0; k--) {
		l->box0[k] = rem / l->stride[k - 1];
		rem %= l->stride[k - 1];
	}
	l->box0[0] = rem;
	if (rem + l->run > l->stride[0])
		return;
	for (k = 1; k < l->nd; k++)
		if (l->box0[k] + l->count[k - 1] > l->stride[k] / l->stride[k - 1])
			return;
	l->box = 1;
}

/*
 * 1 when accel_tensor_check(@t) would return 0, proven without its
 * divisions (every lookup makes a layout); 0 when not proven: then ask it.
 */
static inline int view_surely_ok(const struct accel_tensor *t, uint32_t esz_log2)
{
	uint64_t last = 0;
	uint32_t i;

	if (t->ndims < 1 || t->ndims > ACCEL_TENSOR_MAX_DIMS || t->offset > (1ull << 61) ||
	    t->offset & ((1ull << esz_log2) - 1))
		return 0;
	for (i = 0; i < t->ndims; i++) {
		if (!t->strides[i])
			return 0;
		if (!t->shape[i])
			continue;
		/* both bounds: the product stays below 2^61, under the check's limit */
		if (t->shape[i] - 1 >= (1ull << 32) || t->strides[i] >= (1ull << 29))
			return 0;
		last += (t->shape[i] - 1) * t->strides[i];
		if (last > (1ull << 61) >> esz_log2)
			return 0;
	}
	return 1;
}

int tm_layout_make(const struct accel_tensor *t, struct tm_layout *l)
{
	int64_t n[ACCEL_TENSOR_MAX_DIMS], s[ACCEL_TENSOR_MAX_DIMS], esz, last = 0;
	uint32_t nd = 0, i, j, k;
	int ret;

	esz = (int64_t)accel_dtype_size(t->dtype);
	/*
	 * A contiguous vector of at least one element (a slice of a buffer):
	 * what the general path below makes of it, one run and its own box,
	 * without the sort and the merge. Its bounds are those of
	 * view_surely_ok(), so it needs no accel_tensor_check().
	 */
	if (t->ndims == 1 && t->strides[0] == 1 && esz && t->shape[0] - 1 < (1ull << 32) &&
	    t->offset <= (1ull << 61) && !(t->offset & (uint64_t)(esz - 1))) {
		l->lo = (int64_t)t->offset;
		l->run = (int64_t)t->shape[0] * esz;
		l->hi = l->lo + l->run;
		l->nd = 0;
		l->interleaved = 0;
		l->empty = 0;
		l->box = 1;
		l->box0[0] = l->lo;
		l->ext[0] = l->run;
		return 0;
	}
	if (!esz || !view_surely_ok(t, (uint32_t)__builtin_ctzll((uint64_t)esz))) {
		ret = accel_tensor_check(t);
		if (ret)
			return ret;
	}
	/* the fields, not memset(): entries past nd are never read */
	l->lo = (int64_t)t->offset;
	l->nd = 0;
	l->interleaved = 0;
	l->empty = 0;
	l->box = 0;
	for (i = 0; i < t->ndims; i++) {
		if (!t->shape[i]) {
			l->empty = 1;
			l->hi = l->lo;
			l->run = 0;
			return 0;
		}
		if (t->shape[i] == 1)
			continue;
		/* insertion sort by byte stride */
		for (j = nd; j > 0 && s[j - 1] > (int64_t)t->strides[i] * esz; j--) {
			n[j] = n[j - 1];
			s[j] = s[j - 1];
		}
		n[j] = (int64_t)t->shape[i];
		s[j] = (int64_t)t->strides[i] * esz;
		last += (n[j] - 1) * s[j];
		nd++;
	}
	l->hi = l->lo + last + esz;
	l->run = esz;
	for (i = 0; i < nd && s[i] == l->run; i++)
		l->run *= n[i];
	l->ext[0] = l->run;
	for (k = 0; i < nd; i++) {
		if (k && s[i] == l->stride[k - 1] * l->count[k - 1]) {
			/* continues the previous dimension: one dimension */
			l->count[k - 1] *= n[i];
		} else {
			l->count[k] = n[i];
			l->stride[k] = s[i];
			k++;
		}
	}
	l->nd = k;
	for (k = 0; k < l->nd; k++) {
		if (l->stride[k] < l->ext[k])
			l->interleaved = 1;
		l->ext[k + 1] = l->stride[k] * (l->count[k] - 1) + l->ext[k];
	}
	layout_box(l);
	return 0;
}

static inline int64_t fdiv(int64_t a, int64_t b)
{
	int64_t q = a / b;

	if ((a % b) && a < 0)
		q--;
	return q;
}

static inline int64_t cdiv(int64_t a, int64_t b)
{
	return -fdiv(-a, b);
}

static inline int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static inline int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/*
 * A block of a layout: level k at byte b. The children of a level-k block
 * (k >= 1) are count[k - 1] level-(k - 1) blocks at b + j * stride[k - 1].
 * For a non-interleaved layout the first and the last byte of a block's
 * hull belong to it, and children are disjoint and in order.
 */

/* the children j of block (l, k, b) whose hulls meet [lo, hi): [*jlo, *jhi] */
static inline void child_range(const struct tm_layout *l, uint32_t k, int64_t b, int64_t lo,
			       int64_t hi, int64_t *jlo, int64_t *jhi)
{
	int64_t st = l->stride[k - 1], ec = l->ext[k - 1];

	*jlo = max64(0, fdiv(lo - ec - b, st) + 1);
	*jhi = min64(l->count[k - 1] - 1, cdiv(hi - b, st) - 1);
}

/*
 * The work of one decision: every call of ov(), cv() and cv_iv(), and
 * every shift ov() tries, is one step. When the budget is spent, each
 * call answers at once what is always safe (overlap: yes; inside: no),
 * and every caller passes such an answer straight up: so the decision
 * takes at most budget + 1 steps and is conservative.
 */
struct work {
	uint32_t left;		/* steps still allowed */
	uint32_t steps;		/* steps taken */
	int capped;		/* the budget ran out */
};

static inline int spend(struct work *w)
{
	w->steps++;
	if (w->left) {
		w->left--;
		return 1;
	}
	w->capped = 1;
	return 0;
}

static int ov(struct work *wk, const struct tm_layout *a, uint32_t ka, int64_t pa,
	      const struct tm_layout *b, uint32_t kb, int64_t pb)
{
	const struct tm_layout *tl;
	int64_t jlo, jhi, j, tp, sa, sb;

	if (!spend(wk))
		return 1;
	if (pa >= pb + b->ext[kb] || pb >= pa + a->ext[ka])
		return 0;
	if (!ka && !kb)
		return 1;
	if (!ka || (kb && a->stride[ka - 1] < b->stride[kb - 1])) {
		/* make a the interval, or the block with the coarser children */
		tl = a, a = b, b = tl;
		tp = pa, pa = pb, pb = tp;
		tp = ka, ka = kb, kb = (uint32_t)tp;
	}
	if (!kb) {
		/* b is an interval: a middle child of a inside it decides */
		child_range(a, ka, pa, pb, pb + b->ext[0], &jlo, &jhi);
		if (jhi - jlo >= 2)
			return 1;
		for (j = jlo; j <= jhi; j++)
			if (ov(wk, a, ka - 1, pa + j * a->stride[ka - 1], b, 0, pb))
				return 1;
		return 0;
	}
	sa = a->stride[ka - 1];
	sb = b->stride[kb - 1];
	if (sa % sb == 0) {
		/*
		 * Child m of a and child j of b meet iff a's first child meets
		 * b's first child shifted by t = j - p * m of b's strides, and
		 * some m in [0, count_a), j = p * m + t in [0, count_b) exists.
		 * Only the shifts that bring b's child within a's child's hull
		 * can meet: at most p + 2 of them.
		 */
		int64_t p = sa / sb, d = pb - pa, t, tlo, thi, mlo, mhi;
		int64_t ca = a->count[ka - 1], cb = b->count[kb - 1];

		tlo = fdiv(-b->ext[kb - 1] - d, sb) + 1;
		thi = cdiv(a->ext[ka - 1] - d, sb) - 1;
		tlo = max64(tlo, -p * (ca - 1));
		thi = min64(thi, cb - 1);
		for (t = tlo; t <= thi; t++) {
			mlo = max64(0, cdiv(-t, p));
			mhi = min64(ca - 1, fdiv(cb - 1 - t, p));
			if (mlo > mhi) {
				if (!spend(wk))
					return 1;
				continue;
			}
			if (ov(wk, a, ka - 1, pa, b, kb - 1, pb + t * sb))
				return 1;
		}
		return 0;
	}
	/* no common period: the children of one side that meet the other's hull */
	{
		int64_t ilo, ihi;

		child_range(a, ka, pa, pb, pb + b->ext[kb], &jlo, &jhi);
		child_range(b, kb, pb, pa, pa + a->ext[ka], &ilo, &ihi);
		if (ihi - ilo < jhi - jlo) {
			for (j = ilo; j <= ihi; j++)
				if (ov(wk, a, ka, pa, b, kb - 1, pb + j * sb))
					return 1;
		} else {
			for (j = jlo; j <= jhi; j++)
				if (ov(wk, a, ka - 1, pa + j * sa, b, kb, pb))
					return 1;
		}
		return 0;
	}
}

/* both boxes of the same strides (then neither is interleaved, nor empty) */
static inline int same_boxes(const struct tm_layout *a, const struct tm_layout *b)
{
	uint32_t k;

	if (!a->box || !b->box || a->nd != b->nd)
		return 0;
	for (k = 0; k < a->nd; k++)
		if (a->stride[k] != b->stride[k])
			return 0;
	return 1;
}

/* the digit intervals of two same_boxes() */
static inline int box_overlap(const struct tm_layout *a, const struct tm_layout *b)
{
	uint32_t k;
	int apart;

	/* no short circuit: the answer is hard to predict, the comparisons cheap */
	apart = (a->box0[0] >= b->box0[0] + b->run) | (b->box0[0] >= a->box0[0] + a->run);
	for (k = 0; k < a->nd; k++)
		apart |= (a->box0[k + 1] >= b->box0[k + 1] + b->count[k]) |
			 (b->box0[k + 1] >= a->box0[k + 1] + a->count[k]);
	return !apart;
}

static inline int box_covers(const struct tm_layout *w, const struct tm_layout *e)
{
	uint32_t k;

	if (e->box0[0] < w->box0[0] || e->box0[0] + e->run > w->box0[0] + w->run)
		return 0;
	for (k = 0; k < w->nd; k++)
		if (e->box0[k + 1] < w->box0[k + 1] ||
		    e->box0[k + 1] + e->count[k] > w->box0[k + 1] + w->count[k])
			return 0;
	return 1;
}

static int overlap(struct work *wk, const struct tm_layout *a, const struct tm_layout *b,
		   int *fallback)
{
	int r;

	if (a->empty || b->empty || a->lo >= b->hi || b->lo >= a->hi)
		return 0;
	if (same_boxes(a, b))
		return box_overlap(a, b);
	if (a->interleaved && b->interleaved) {
		*fallback |= TM_FB_HULL;
		return 1;
	}
	if (a->interleaved || b->interleaved) {
		/* the interleaved one as its hull, against the exact other */
		const struct tm_layout *x = a->interleaved ? b : a, *y = a->interleaved ? a : b;
		struct tm_layout h = { .lo = y->lo, .hi = y->hi, .run = y->hi - y->lo };

		h.ext[0] = h.run;
		r = ov(wk, x, x->nd, x->lo, &h, 0, h.lo);
		if (wk->capped)
			*fallback |= TM_FB_CAPPED;
		else if (r)
			*fallback |= TM_FB_HULL;
		return r;
	}
	r = ov(wk, a, a->nd, a->lo, b, b->nd, b->lo);
	if (wk->capped)
		*fallback |= TM_FB_CAPPED;
	return r;
}

int tm_layout_overlap_budget(const struct tm_layout *a, const struct tm_layout *b,
			     uint32_t budget, uint32_t *steps, int *fallback)
{
	struct work wk = { budget, 0, 0 };
	int r = overlap(&wk, a, b, fallback);

	if (steps)
		*steps = wk.steps;
	return r;
}

int tm_layout_overlap(const struct tm_layout *a, const struct tm_layout *b, int *fallback)
{
	struct work wk = { TM_DECISION_BUDGET, 0, 0 };

	/* the common cases first, without the work account */
	if (a->empty || b->empty || a->lo >= b->hi || b->lo >= a->hi)
		return 0;
	if (same_boxes(a, b))
		return box_overlap(a, b);
	return overlap(&wk, a, b, fallback);
}

/* is [lo, hi) inside block (w, kw, pw)? */
static int cv_iv(struct work *wk, const struct tm_layout *w, uint32_t kw, int64_t pw,
		 int64_t lo, int64_t hi)
{
	int64_t jlo, jhi, j, st;

	if (!spend(wk))
		return 0;
	if (lo < pw || hi > pw + w->ext[kw])
		return 0;
	if (!kw)
		return 1;
	st = w->stride[kw - 1];
	child_range(w, kw, pw, lo, hi, &jlo, &jhi);
	if (jlo > jhi)
		return 0;
	/* in a gap before the first child met or after the last, or between two */
	if (lo < pw + jlo * st || hi > pw + jhi * st + w->ext[kw - 1])
		return 0;
	if (jlo < jhi && w->ext[kw - 1] < st)
		return 0;
	for (j = jlo; j <= jhi; j++) {
		int64_t c = pw + j * st;

		if (!cv_iv(wk, w, kw - 1, c, max64(lo, c), min64(hi, c + w->ext[kw - 1])))
			return 0;
	}
	return 1;
}

/* is block (e, ke, pe) inside block (w, kw, pw)? */
static int cv(struct work *wk, const struct tm_layout *w, uint32_t kw, int64_t pw,
	      const struct tm_layout *e, uint32_t ke, int64_t pe)
{
	int64_t jlo, jhi, m, n, sw, se;

	if (!spend(wk))
		return 0;
	if (pe < pw || pe + e->ext[ke] > pw + w->ext[kw])
		return 0;
	if (!kw)
		return 1;
	if (!ke)
		return cv_iv(wk, w, kw, pw, pe, pe + e->ext[0]);
	sw = w->stride[kw - 1];
	child_range(w, kw, pw, pe, pe + e->ext[ke], &jlo, &jhi);
	if (jlo > jhi)
		return 0;
	if (jlo == jhi)
		return cv(wk, w, kw - 1, pw + jlo * sw, e, ke, pe);
	/*
	 * e spans several children of w: each child of e must be inside w.
	 * The answer is periodic in e's children when one stride divides the
	 * other (w's children are all alike, and e's hull is inside w's).
	 */
	se = e->stride[ke - 1];
	if (se % sw == 0)
		n = 1;
	else if (sw % se == 0)
		n = min64(sw / se, e->count[ke - 1]);
	else
		n = e->count[ke - 1];
	for (m = 0; m < n; m++)
		if (!cv(wk, w, kw, pw, e, ke - 1, pe + m * se))
			return 0;
	return 1;
}

static int covers(struct work *wk, const struct tm_layout *w, const struct tm_layout *e,
		  int *fallback)
{
	int r;

	if (e->empty)
		return 1;
	if (w->empty || e->lo < w->lo || e->hi > w->hi)
		return 0;
	if (same_boxes(w, e))
		return box_covers(w, e);
	if (w->interleaved) {
		*fallback |= TM_FB_HULL;
		return 0;
	}
	if (e->interleaved) {
		r = cv_iv(wk, w, w->nd, w->lo, e->lo, e->hi);
		if (wk->capped)
			*fallback |= TM_FB_CAPPED;
		else if (!r)
			*fallback |= TM_FB_HULL;
		return r;
	}
	r = cv(wk, w, w->nd, w->lo, e, e->nd, e->lo);
	if (wk->capped)
		*fallback |= TM_FB_CAPPED;
	return r;
}

int tm_layout_covers_budget(const struct tm_layout *w, const struct tm_layout *e,
			    uint32_t budget, uint32_t *steps, int *fallback)
{
	struct work wk = { budget, 0, 0 };
	int r = covers(&wk, w, e, fallback);

	if (steps)
		*steps = wk.steps;
	return r;
}

int tm_layout_covers(const struct tm_layout *w, const struct tm_layout *e, int *fallback)
{
	struct work wk = { TM_DECISION_BUDGET, 0, 0 };

	/* the common cases first, without the work account */
	if (e->empty)
		return 1;
	if (w->empty || e->lo < w->lo || e->hi > w->hi)
		return 0;
	if (same_boxes(w, e))
		return box_covers(w, e);
	return covers(&wk, w, e, fallback);
}

/* ---- the index ---- */

/*
 * The phase pruning: a buffer has a class, the strides of its first box
 * entry with nd >= 1 (tensormap.h), period P = its last stride. An
 * entry's phase is an interval [plo, phi) inside [0, P) that holds x mod P
 * for each of its bytes x: for a box of the class, lo mod P plus the
 * extent of one top-level block (its digits below the top never carry);
 * for a view whose hull fits in one period without wrapping, its hull mod
 * P; otherwise (no class, or neither) everything. Two views whose phases
 * are disjoint share no byte. Each node also holds the phase hull of its
 * subtree: the lookup skips a subtree whose phases miss the argument's,
 * which cuts the candidates of a row of 2-D tiles (their byte hulls all
 * meet) down to the tiles in the argument's columns.
 */
#define PH_ALL_LO	INT64_MIN
#define PH_ALL_HI	INT64_MAX

#define NIL		(-1)
#define NONE		UINT32_MAX

/*
 * Entry i is in three arrays: nodes[i], what the walks read (the low end
 * of its hull, its phase, the subtree's bounds, tree links: one 64-byte
 * line), ents[i] (high end, task, kind, buffer, group, treap priority)
 * and lays[i] (its layout, for the exact tests).
 */
struct tm_node {
	int64_t lo;			/* the key (with the index) */
	int64_t sub_lo, max_hi;		/* the subtree's lowest low end, highest high end */
	int64_t plo, phi;		/* phase of this entry */
	int64_t sub_plo, sub_phi;	/* phase hull of the subtree */
	int32_t left, right;		/* left: next free when unused */
};

struct tm_ent {
	int64_t hi;
	uint64_t task;
	uint32_t prio;
	uint32_t rec;			/* its buffer's record */
	uint32_t grp;			/* tm_group_begin() group it was inserted in, 0: none */
	uint32_t vh;			/* view_hash() */
	uint8_t write;
	uint8_t used;
	uint8_t indexed;		/* in the view index */
	uint8_t excl_w;			/* no other live writer overlaps it (view index) */
	uint8_t in_run;			/* in one of its buffer's runs (below), not in a tree */
	uint8_t run;			/* in_run: which */
	uint32_t rpos;			/* in_run: its position there */
};

/*
 * The view index: writer entries by (buffer, layout), open addressing with
 * linear probing, 2 * ncap slots. One entry per key: a newer writer of the
 * same view takes the slot (the older one then overlaps it and is no
 * longer excl_w, so it would not be used anyway). An entry's excl_w is set
 * by its insert's cover walk (no remaining writer overlaps it) and cleared
 * by the cover walk of any later writer whose hull and phase meet it: so
 * while it is set, no other live writer overlaps the entry, and a lookup
 * for INPUT of exactly its view depends on it alone.
 */
struct tm_vslot {
	uint32_t h;
	int32_t ent;			/* NIL: empty */
};

/*
 * A run: entries of one kind (readers or writers) of a buffer whose hulls
 * are disjoint and in increasing order, in an array, where a tree would
 * cost a treap insert. A view inserted above the hull of the run's last
 * entry is appended (O(1)): slices of a buffer used in order, the way a
 * stream or a pipeline of micro-batches walks it. A lookup finds the
 * first element whose high end is above its low end by binary search
 * (lo and hi are both increasing), O(1) when it lies above the run, and
 * scans while elements start below its high end. A removed entry leaves
 * a tombstone (@ent NIL, its bounds kept so the order holds); tombstones
 * at either end are trimmed at once, and the array is compacted in place
 * when more than half of it is tombstones. Growth is the only allocation,
 * and an insert that cannot grow the run goes into the tree instead, so
 * a run never makes an insert fail.
 */
struct tm_run_el {
	int64_t lo, hi;
	int32_t ent;			/* NIL: a tombstone */
};

/*
 * Runs per kind and buffer: two, so that a buffer used as a ring (the
 * views start again at its beginning while the last lap's are in flight)
 * keeps one run per lap.
 */
#define TM_RUNS		2

struct tm_run {
	struct tm_run_el *el;
	uint32_t head, n, cap;		/* live elements and tombstones in [head, n) */
	uint32_t dead;			/* tombstones in [head, n) */
};

/*
 * A buffer's record: two trees and two runs (readers, writers; a lookup
 * for INPUT looks only at the writers), the class, and the same-view
 * state: @last is
 * the entry of the last insert into the buffer (NIL when there was none,
 * or it is gone), and @last_excl says that no other live entry of the
 * buffer overlaps its view, by the map's own overlap decision. Inserts are
 * the only way an entry appears, and each sets both; removals only take
 * overlaps away: so @last_excl stays true until the next insert.
 */
struct tm_buf {
	const struct accel_buffer *buf;	/* NULL: a free record */
	int32_t root[2];		/* [0] readers, [1] writers */
	struct tm_run run[2][TM_RUNS];	/* the same: [kind][run] */
	/*
	 * Per kind: live entries, and bounds that hold every live entry's
	 * hull (taken in by each insert, reset when the kind empties): a
	 * view outside them meets no entry of that kind, found in O(1).
	 */
	uint32_t klive[2];
	int64_t klo[2], khi[2];
	uint32_t live;
	uint32_t cnd;			/* class: 0 none, else nd and strides */
	int32_t last;
	uint8_t last_excl;
	uint32_t next_free;		/* free records: the next one, NONE: end */
	int64_t cstride[ACCEL_TENSOR_MAX_DIMS];
};

/* the open-addressing table: buffer pointer -> record */
struct tm_slot {
	const struct accel_buffer *buf;	/* NULL: empty */
	uint32_t rec;
};

/*
 * Room: nodes, ents and lays have ncap entries (live_entries of them used,
 * the rest on the free list), scratch has ncap too, so that marking
 * entries during one walk (each at most once) never allocates, and the
 * view index 2 * ncap slots (at most half full); recs has
 * rcap records (nbufs used, the rest on the free list) and slots scap
 * slots (a power of two, at most half full). Only node_room() and
 * buf_room() allocate, and both are called before a call changes
 * anything.
 */
struct tensormap {
	struct tm_node *nodes;
	struct tm_ent *ents;
	struct tm_layout *lays;
	int32_t *scratch;
	uint32_t ncap, nfree_head, sn;
	struct tm_vslot *vslots;	/* the view index, 2 * ncap slots */
	struct tm_buf *recs;
	uint32_t rcap, rfree;
	uint32_t last_rec;		/* buf_find()'s last answer (a hint: checked before use) */
	struct tm_slot *slots;
	uint32_t scap, nbufs;
	uint32_t grp;			/* the open group (tm_group_begin()), 0: none */
	uint32_t grp_last;		/* the last group id handed out */
	uint32_t budget;		/* steps per overlap or cover decision */
	unsigned int flags;		/* tm_set_flags() */
	tm_complete_fn complete;
	void *carg;
	tm_progress_fn progress;	/* tm_set_progress(), or NULL */
	uint64_t swept;			/* the progress count the last scan read */
	bool swept_valid;		/* a scan read one */
	uint32_t rng;
	uint64_t sweep_at;
	uint64_t scanned;		/* entries examined by sweeps and forgets (tests) */
	struct tm_stats st;
};

int tm_create(tm_complete_fn complete, void *complete_arg, struct tensormap **out)
{
	struct tensormap *tm = calloc(1, sizeof(*tm));

	if (!tm)
		return -ENOMEM;
	tm->complete = complete;
	tm->carg = complete_arg;
	tm->rng = 0x9e3779b9u;
	tm->nfree_head = NONE;
	tm->rfree = NONE;
	tm->last_rec = NONE;
	tm->sweep_at = 256;
	tm->budget = TM_DECISION_BUDGET;
	tm->scap = 16;
	tm->slots = calloc(tm->scap, sizeof(*tm->slots));
	if (!tm->slots) {
		free(tm);
		return -ENOMEM;
	}
	*out = tm;
	return 0;
}

void tm_destroy(struct tensormap *tm)
{
	uint32_t i, k;

	if (!tm)
		return;
	for (i = 0; i < tm->rcap; i++)
		for (k = 0; k < 2 * TM_RUNS; k++)
			free(tm->recs[i].run[k / TM_RUNS][k % TM_RUNS].el);
	free(tm->nodes);
	free(tm->ents);
	free(tm->lays);
	free(tm->scratch);
	free(tm->vslots);
	free(tm->recs);
	free(tm->slots);
	free(tm);
}

void tm_get_stats(const struct tensormap *tm, struct tm_stats *st)
{
	*st = tm->st;
	st->buffers = tm->nbufs;
}

void tm_set_decision_budget(struct tensormap *tm, uint32_t budget)
{
	tm->budget = budget;
}

void tm_set_flags(struct tensormap *tm, unsigned int flags)
{
	tm->flags = flags;
}

static inline uint32_t hash_ptr(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x;
}

/* the slot of @buf, or of the empty slot where it would go */
static inline uint32_t buf_slot(const struct tensormap *tm, const struct accel_buffer *buf)
{
	uint32_t i = hash_ptr(buf) & (tm->scap - 1);

	while (tm->slots[i].buf && tm->slots[i].buf != buf)
		i = (i + 1) & (tm->scap - 1);
	return i;
}

static inline struct tm_buf *buf_find(struct tensormap *tm, const struct accel_buffer *buf)
{
	const struct tm_slot *s;

	/* most calls name the buffer the call before named */
	if (buf && tm->last_rec < tm->rcap && tm->recs[tm->last_rec].buf == buf)
		return &tm->recs[tm->last_rec];
	s = &tm->slots[buf_slot(tm, buf)];
	if (!s->buf)
		return NULL;
	tm->last_rec = s->rec;
	return &tm->recs[s->rec];
}

static int slots_grow(struct tensormap *tm)
{
	struct tm_slot *old = tm->slots;
	uint32_t ocap = tm->scap, i;

	if (ocap > UINT32_MAX / 4)
		return -ENOMEM;
	tm->slots = calloc((size_t)ocap * 2, sizeof(*tm->slots));
	if (!tm->slots) {
		tm->slots = old;
		return -ENOMEM;
	}
	tm->scap = ocap * 2;
	for (i = 0; i < ocap; i++)
		if (old[i].buf)
			tm->slots[buf_slot(tm, old[i].buf)] = old[i];
	free(old);
	return 0;
}

/* room for @extra more buffers: records and slots (at most half full) */
static int buf_room_grow(struct tensormap *tm, uint64_t extra)
{
	uint64_t want = tm->nbufs + extra;
	uint32_t rcap = tm->rcap ? tm->rcap : 16, i;
	struct tm_buf *r;

	while (want * 2 > tm->scap)
		if (slots_grow(tm))
			return -ENOMEM;
	if (want <= tm->rcap)
		return 0;
	while (rcap < want) {
		if (rcap > UINT32_MAX / 4)
			return -ENOMEM;
		rcap *= 2;
	}
	r = realloc(tm->recs, (size_t)rcap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	tm->recs = r;
	for (i = rcap; i-- > tm->rcap;) {
		r[i].buf = NULL;
		memset(r[i].run, 0, sizeof(r[i].run));
		r[i].next_free = tm->rfree;
		tm->rfree = i;
	}
	tm->rcap = rcap;
	return 0;
}

/* buf_room_grow(), its test inline: the usual call finds room */
static inline int buf_room(struct tensormap *tm, uint64_t extra)
{
	uint64_t want = tm->nbufs + extra;

	if (want * 2 <= tm->scap && want <= tm->rcap)
		return 0;
	return buf_room_grow(tm, extra);
}

/* a new buffer's record: buf_room() made room for it */
static struct tm_buf *buf_add(struct tensormap *tm, const struct accel_buffer *buf)
{
	uint32_t ri = tm->rfree, k;
	struct tm_buf *b = &tm->recs[ri];

	tm->rfree = b->next_free;
	b->buf = buf;
	b->root[0] = NIL;
	b->root[1] = NIL;
	for (k = 0; k < 2 * TM_RUNS; k++) {
		struct tm_run *r = &b->run[k / TM_RUNS][k % TM_RUNS];

		r->head = r->n = r->dead = 0;
	}
	for (k = 0; k < 2; k++) {
		b->klive[k] = 0;
		b->klo[k] = INT64_MAX;
		b->khi[k] = INT64_MIN;
	}
	b->live = 0;
	b->cnd = 0;
	b->last = NIL;
	b->last_excl = 0;
	tm->slots[buf_slot(tm, buf)] = (struct tm_slot){ buf, ri };
	tm->nbufs++;
	return b;
}

static inline void upd(struct tensormap *tm, int32_t i)
{
	struct tm_node *N = tm->nodes;
	int64_t m = tm->ents[i].hi, pl = N[i].plo, ph = N[i].phi;
	int32_t c;

	c = N[i].left;
	N[i].sub_lo = c != NIL ? N[c].sub_lo : N[i].lo;
	if (c != NIL) {
		m = max64(m, N[c].max_hi);
		pl = min64(pl, N[c].sub_plo);
		ph = max64(ph, N[c].sub_phi);
	}
	c = N[i].right;
	if (c != NIL) {
		m = max64(m, N[c].max_hi);
		pl = min64(pl, N[c].sub_plo);
		ph = max64(ph, N[c].sub_phi);
	}
	N[i].max_hi = m;
	N[i].sub_plo = pl;
	N[i].sub_phi = ph;
}

/* the phase of @l in the class of @b (above) */
static void phase(const struct tm_buf *b, const struct tm_layout *l, int64_t *plo, int64_t *phi)
{
	int64_t p;
	uint32_t k;

	*plo = PH_ALL_LO;
	*phi = PH_ALL_HI;
	if (!b->cnd)
		return;
	p = b->cstride[b->cnd - 1];
	if (l->box && l->nd == b->cnd) {
		for (k = 0; k < l->nd && l->stride[k] == b->cstride[k]; k++)
			;
		if (k == l->nd) {
			*plo = l->lo - l->box0[l->nd] * p;
			*phi = *plo + l->ext[l->nd - 1];
			return;
		}
	}
	if (l->hi - l->lo <= p && l->lo % p + (l->hi - l->lo) <= p) {
		*plo = l->lo % p;
		*phi = *plo + (l->hi - l->lo);
	}
}

/*
 * *@d = *@s, only what is read (tm_layout_make(): nothing past nd): an
 * entry's layout is written at every insert, and the whole structure is
 * four cache lines where a one-run view uses its first and a bit of
 * another.
 */
static inline void layout_copy(struct tm_layout *d, const struct tm_layout *s)
{
	uint32_t k;

	d->lo = s->lo;
	d->hi = s->hi;
	d->run = s->run;
	d->nd = s->nd;
	d->interleaved = s->interleaved;
	d->empty = s->empty;
	d->box = s->box;
	d->box0[0] = s->box0[0];
	d->ext[0] = s->ext[0];
	for (k = 0; k < s->nd; k++) {
		d->count[k] = s->count[k];
		d->stride[k] = s->stride[k];
		d->box0[k + 1] = s->box0[k + 1];
		d->ext[k + 1] = s->ext[k + 1];
	}
}

/* the first box with nd >= 1 gives an empty buffer its class */
static void class_set(struct tm_buf *b, const struct tm_layout *l)
{
	uint32_t k;

	if (b->cnd || !l->box || !l->nd)
		return;
	b->cnd = l->nd;
	for (k = 0; k < l->nd; k++)
		b->cstride[k] = l->stride[k];
}

/* the same byte set, described the same way (then every decision between them is "yes") */
static inline int layout_same(const struct tm_layout *a, const struct tm_layout *b)
{
	uint32_t k;

	if (a->lo != b->lo || a->hi != b->hi || a->run != b->run || a->nd != b->nd)
		return 0;
	for (k = 0; k < a->nd; k++)
		if (a->count[k] != b->count[k] || a->stride[k] != b->stride[k])
			return 0;
	return 1;
}

/* ---- the view index ---- */

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static inline uint32_t view_hash(uint32_t rec, const struct tm_layout *l)
{
	uint64_t x = mix64(((uint64_t)rec << 32 | l->nd) ^ (uint64_t)l->lo);
	uint32_t k;

	x = mix64(x ^ (uint64_t)l->hi ^ (uint64_t)l->run << 17);
	for (k = 0; k < l->nd; k++)
		x = mix64(x ^ (uint64_t)l->count[k] ^ (uint64_t)l->stride[k] << 23);
	return (uint32_t)x;
}

/* the indexed writer of buffer @rec with layout @q (hash @h), or NIL */
static int32_t vindex_find(const struct tensormap *tm, uint32_t rec, uint32_t h,
			   const struct tm_layout *q)
{
	uint32_t mask = 2 * tm->ncap - 1, i = h & mask;
	int32_t x;

	for (; (x = tm->vslots[i].ent) != NIL; i = (i + 1) & mask)
		if (tm->vslots[i].h == h && tm->ents[x].rec == rec &&
		    layout_same(q, &tm->lays[x]))
			return x;
	return NIL;
}

/* put writer @x (ents[x].vh set) into the index, in place of its key's entry */
static void vindex_add(struct tensormap *tm, int32_t x)
{
	uint32_t mask = 2 * tm->ncap - 1, h = tm->ents[x].vh, i = h & mask;
	int32_t y;

	for (; (y = tm->vslots[i].ent) != NIL; i = (i + 1) & mask)
		if (tm->vslots[i].h == h && tm->ents[y].rec == tm->ents[x].rec &&
		    layout_same(&tm->lays[x], &tm->lays[y])) {
			tm->ents[y].indexed = 0;
			break;
		}
	tm->vslots[i].h = h;
	tm->vslots[i].ent = x;
	tm->ents[x].indexed = 1;
}

static void vindex_del(struct tensormap *tm, int32_t x)
{
	uint32_t mask = 2 * tm->ncap - 1, i = tm->ents[x].vh & mask, j, k;

	if (!tm->ents[x].indexed)
		return;
	tm->ents[x].indexed = 0;
	while (tm->vslots[i].ent != x)
		i = (i + 1) & mask;
	/* backward-shift deletion keeps linear probing chains whole */
	tm->vslots[i].ent = NIL;
	for (j = (i + 1) & mask; tm->vslots[j].ent != NIL; j = (j + 1) & mask) {
		k = tm->vslots[j].h & mask;
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			tm->vslots[i] = tm->vslots[j];
			tm->vslots[j].ent = NIL;
			i = j;
		}
	}
}

/* ---- treaps: key (lo, index), priority ents[].prio ---- */

static inline int key_less(const struct tm_node *N, int32_t a, int32_t b)
{
	return N[a].lo < N[b].lo || (N[a].lo == N[b].lo && a < b);
}

/* the path from a root down: deeper trees (rare in a treap) use recursion */
#define TM_PATH		64

static int32_t t_insert_rec(struct tensormap *tm, int32_t r, int32_t x)
{
	struct tm_node *N = tm->nodes;
	int32_t *down, *across, c;
	int less;

	if (r == NIL)
		return x;
	/* x goes down one side; its new root c rotates up if its priority is higher */
	less = key_less(N, x, r);
	down = less ? &N[r].left : &N[r].right;
	*down = t_insert_rec(tm, *down, x);
	c = *down;
	if (tm->ents[c].prio > tm->ents[r].prio) {
		across = less ? &N[c].right : &N[c].left;
		*down = *across;
		*across = r;
		upd(tm, r);
		r = c;
	}
	upd(tm, r);
	return r;
}

/*
 * Insert leaf @x (its own bounds set) into the tree at @r; the new root.
 * Down the search path, each subtree's bounds just take in x's; then x
 * rotates up while its priority is higher (expected O(1) rotations), and
 * only the rotated nodes are recomputed.
 */
static int32_t t_insert(struct tensormap *tm, int32_t r, int32_t x)
{
	struct tm_node *N = tm->nodes;
	/* x's bounds in registers: the stores below may alias N[x] for the compiler */
	const int64_t xlo = N[x].lo, xhi = N[x].max_hi, xplo = N[x].plo, xphi = N[x].phi;
	int32_t path[TM_PATH], c = r, p, g;
	uint32_t d = 0;

	while (c != NIL) {
		struct tm_node *n = &N[c];

		if (d == TM_PATH)
			return t_insert_rec(tm, r, x);	/* the bounds taken in stay right */
		n->max_hi = max64(n->max_hi, xhi);
		n->sub_lo = min64(n->sub_lo, xlo);
		n->sub_plo = min64(n->sub_plo, xplo);
		n->sub_phi = max64(n->sub_phi, xphi);
		path[d++] = c;
		c = xlo < n->lo || (xlo == n->lo && x < c) ? n->left : n->right;
	}
	if (!d)
		return x;
	p = path[d - 1];
	if (key_less(N, x, p))
		N[p].left = x;
	else
		N[p].right = x;
	while (d && tm->ents[x].prio > tm->ents[path[d - 1]].prio) {
		p = path[--d];
		if (N[p].left == x) {
			N[p].left = N[x].right;
			N[x].right = p;
		} else {
			N[p].right = N[x].left;
			N[x].left = p;
		}
		upd(tm, p);
		upd(tm, x);
		if (!d)
			return x;
		g = path[d - 1];
		if (N[g].left == p)
			N[g].left = x;
		else
			N[g].right = x;
	}
	return r;
}

static int32_t t_merge(struct tensormap *tm, int32_t a, int32_t b)
{
	struct tm_node *N = tm->nodes;

	if (a == NIL)
		return b;
	if (b == NIL)
		return a;
	if (tm->ents[a].prio > tm->ents[b].prio) {
		N[a].right = t_merge(tm, N[a].right, b);
		upd(tm, a);
		return a;
	}
	N[b].left = t_merge(tm, a, N[b].left);
	upd(tm, b);
	return b;
}

static int32_t t_remove_rec(struct tensormap *tm, int32_t r, int32_t x)
{
	struct tm_node *N = tm->nodes;

	if (r == x)
		return t_merge(tm, N[r].left, N[r].right);
	if (key_less(N, x, r))
		N[r].left = t_remove_rec(tm, N[r].left, x);
	else
		N[r].right = t_remove_rec(tm, N[r].right, x);
	upd(tm, r);
	return r;
}

/*
 * Remove @x from the tree at @r; the new root. Its children merge in its
 * place, then the ancestors are recomputed upwards until one's bounds do
 * not change (then none above does).
 */
static int32_t t_remove(struct tensormap *tm, int32_t r, int32_t x)
{
	struct tm_node *N = tm->nodes;
	int32_t path[TM_PATH], c = r, m, p;
	uint32_t d = 0;

	while (c != x) {
		if (d == TM_PATH)
			return t_remove_rec(tm, r, x);
		path[d++] = c;
		c = key_less(N, x, c) ? N[c].left : N[c].right;
	}
	m = t_merge(tm, N[x].left, N[x].right);
	if (!d)
		return m;
	p = path[d - 1];
	if (N[p].left == x)
		N[p].left = m;
	else
		N[p].right = m;
	while (d) {
		struct tm_node old = N[path[--d]];

		upd(tm, path[d]);
		if (old.max_hi == N[path[d]].max_hi && old.sub_lo == N[path[d]].sub_lo &&
		    old.sub_plo == N[path[d]].sub_plo && old.sub_phi == N[path[d]].sub_phi)
			break;
	}
	return r;
}

/* ---- entries ---- */

/* room for @extra more entries (and the scratch to mark all of them) */
static int node_room_grow(struct tensormap *tm, uint64_t extra)
{
	uint64_t want = tm->st.live_entries + extra;
	uint32_t ncap = tm->ncap ? tm->ncap : 64, ocap, i;
	struct tm_vslot *v, *old;
	struct tm_layout *l;
	struct tm_node *n;
	struct tm_ent *e;
	int32_t *s;

	if (want <= tm->ncap)
		return 0;
	while (ncap < want) {
		if (ncap > INT32_MAX / 4)
			return -ENOMEM;
		ncap *= 2;
	}
	/* each array that grew is kept; ncap grows when all have */
	n = realloc(tm->nodes, (size_t)ncap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	tm->nodes = n;
	e = realloc(tm->ents, (size_t)ncap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	tm->ents = e;
	l = realloc(tm->lays, (size_t)ncap * sizeof(*l));
	if (!l)
		return -ENOMEM;
	tm->lays = l;
	s = realloc(tm->scratch, (size_t)ncap * sizeof(*s));
	if (!s)
		return -ENOMEM;
	tm->scratch = s;
	v = malloc((size_t)ncap * 2 * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < ncap * 2; i++)
		v[i].ent = NIL;
	/* the indexed entries into the new table */
	old = tm->vslots;
	tm->vslots = v;
	ocap = tm->ncap;
	tm->ncap = ncap;
	for (i = 0; i < ocap * 2; i++)
		if (old[i].ent != NIL)
			vindex_add(tm, old[i].ent);
	free(old);
	for (i = ncap; i-- > ocap;) {
		e[i].used = 0;
		n[i].left = (int32_t)tm->nfree_head;
		tm->nfree_head = i;
	}
	return 0;
}

/* node_room_grow(), its test inline: the usual call finds room */
static inline int node_room(struct tensormap *tm, uint64_t extra)
{
	if (tm->st.live_entries + extra <= tm->ncap)
		return 0;
	return node_room_grow(tm, extra);
}

/* a free entry: node_room() made room for it */
static inline int32_t node_alloc(struct tensormap *tm)
{
	uint32_t i = tm->nfree_head;

	tm->nfree_head = (uint32_t)tm->nodes[i].left;
	return (int32_t)i;
}

static inline void node_free(struct tensormap *tm, int32_t i)
{
	vindex_del(tm, i);
	tm->ents[i].used = 0;
	tm->nodes[i].left = (int32_t)tm->nfree_head;
	tm->nfree_head = (uint32_t)i;
	tm->st.live_entries--;
}

/* ---- runs (struct tm_run) ---- */

/* pack the live elements of @r to its front (no allocation) */
static void run_compact(struct tensormap *tm, struct tm_run *r)
{
	uint32_t i, k = 0;

	for (i = r->head; i < r->n; i++) {
		if (r->el[i].ent == NIL)
			continue;
		r->el[k] = r->el[i];
		tm->ents[r->el[k].ent].rpos = k;
		k++;
	}
	r->head = 0;
	r->n = k;
	r->dead = 0;
}

/* entry @i's element becomes a tombstone; trim the ends, compact when half dead */
static void run_del(struct tensormap *tm, struct tm_run *r, int32_t i)
{
	r->el[tm->ents[i].rpos].ent = NIL;
	r->dead++;
	while (r->head < r->n && r->el[r->head].ent == NIL) {
		r->head++;
		r->dead--;
	}
	while (r->n > r->head && r->el[r->n - 1].ent == NIL) {
		r->n--;
		r->dead--;
	}
	if (r->head == r->n)
		r->head = r->n = 0;
	else if (r->dead > 16 && r->dead * 2 > r->n - r->head)
		run_compact(tm, r);
}

/*
 * Room for one more element at the end of @r: there is, or compaction
 * makes it, or growing does (an allocation that may fail: 0, and the
 * entry goes into the tree).
 */
static int run_room(struct tensormap *tm, struct tm_run *r)
{
	struct tm_run_el *el;
	uint32_t cap;

	if (r->n < r->cap)
		return 1;
	if (r->head || r->dead) {
		run_compact(tm, r);
		return 1;
	}
	if (r->cap > UINT32_MAX / 4)
		return 0;
	cap = r->cap ? r->cap * 2 : 64;
	el = realloc(r->el, (size_t)cap * sizeof(*el));
	if (!el)
		return 0;
	r->el = el;
	r->cap = cap;
	return 1;
}

/*
 * The run of @runs a view whose hull starts at @lo goes to the end of:
 * of the runs whose last element ends at or below @lo, the one that ends
 * highest (an empty run only when no other fits), if it has room. -1:
 * none (into the tree).
 */
static int run_pick(struct tensormap *tm, struct tm_run *runs, int64_t lo)
{
	int64_t best_hi = INT64_MIN;
	int best = -1, empty = -1;
	uint32_t k;

	if (tm->flags & TM_NO_RUN)
		return -1;
	for (k = 0; k < TM_RUNS; k++) {
		struct tm_run *r = &runs[k];

		if (r->n == r->head) {
			if (empty < 0)
				empty = (int)k;
		} else if (r->el[r->n - 1].hi <= lo && r->el[r->n - 1].hi > best_hi) {
			best_hi = r->el[r->n - 1].hi;
			best = (int)k;
		}
	}
	if (best < 0)
		best = empty;
	if (best >= 0 && !run_room(tm, &runs[best]))
		best = -1;
	return best;
}

static void node_remove(struct tensormap *tm, int32_t i)
{
	struct tm_ent *e = &tm->ents[i];
	struct tm_buf *b = &tm->recs[e->rec];

	if (e->in_run)
		run_del(tm, &b->run[e->write][e->run], i);
	else
		b->root[e->write] = t_remove(tm, b->root[e->write], i);
	if (!--b->klive[e->write]) {
		b->klo[e->write] = INT64_MAX;
		b->khi[e->write] = INT64_MIN;
	}
	if (b->last == i)
		b->last = NIL;
	if (!--b->live)
		b->cnd = 0;	/* the next entry chooses the class */
	node_free(tm, i);
}

/* scratch has ncap entries, and a walk marks an entry at most once: always room */
static inline void scratch_push(struct tensormap *tm, int32_t i)
{
	tm->scratch[tm->sn++] = i;
}

static inline int is_complete(const struct tensormap *tm, uint64_t task)
{
	return tm->complete && tm->complete(tm->carg, task);
}

/* removal of the entries in scratch (marked for removal during a walk) */
static void scratch_flush(struct tensormap *tm)
{
	uint32_t i;

	for (i = 0; i < tm->sn; i++)
		node_remove(tm, tm->scratch[i]);
	tm->sn = 0;
}

/* one decision of the map, within its budget, counted */
static int decide_overlap(struct tensormap *tm, const struct tm_layout *a,
			  const struct tm_layout *b)
{
	struct work wk = { tm->budget, 0, 0 };
	int fb = 0, r = overlap(&wk, a, b, &fb);

	tm->st.fallbacks += !!(fb & TM_FB_HULL);
	tm->st.capped += !!(fb & TM_FB_CAPPED);
	return r;
}

static int decide_covers(struct tensormap *tm, const struct tm_layout *w,
			 const struct tm_layout *e)
{
	struct work wk = { tm->budget, 0, 0 };
	int fb = 0, r = covers(&wk, w, e, &fb);

	tm->st.fallbacks += !!(fb & TM_FB_HULL);
	tm->st.capped += !!(fb & TM_FB_CAPPED);
	return r;
}

/* ---- lookups ---- */

struct walk {
	struct tensormap *tm;
	const struct tm_layout *q;
	int64_t lo, hi;		/* the argument's hull */
	int64_t plo, phi;	/* the argument's phase */
	enum accel_access acc;
	uint64_t task;
	tm_dep_fn fn;
	void *arg;
	int n;
	int cover;		/* a writer's insert (cover_hit()), not a lookup (deps_hit()) */
	int excl;		/* cover walks: no entry that stays overlaps it (yet) */
	int excl_w;		/* cover walks: no writer that stays overlaps it (yet) */
};

/* entry @i, whose hull and phase meet the argument's: a dependency? */
static void deps_hit(struct walk *w, int32_t i)
{
	struct tensormap *tm = w->tm;
	const struct tm_ent *e = &tm->ents[i];
	const struct tm_layout *l = &tm->lays[i];
	enum tm_dep_kind kind;

	if (e->task == w->task)
		return;
	if (is_complete(tm, e->task)) {
		/* marked, removed after the walk */
		scratch_push(tm, i);
		return;
	}
	if (!e->write && w->acc == ACCEL_INPUT)
		return;
	/* hulls meet, neither is empty: boxes need only their digits */
	if (!(same_boxes(w->q, l) ? box_overlap(w->q, l) : decide_overlap(tm, w->q, l)))
		return;
	if (!e->write)
		kind = TM_DEP_WAR;
	else if (w->acc == ACCEL_INPUT || w->acc == ACCEL_INOUT)
		kind = TM_DEP_RAW;
	else
		kind = TM_DEP_WAW;
	tm->st.deps[kind]++;
	w->n++;
	w->fn(w->arg, e->task, kind);
}

/*
 * Writer insert, entry @i (hull and phase meet the writer's): mark it if
 * its task completed or the writer covers it (but a sibling of the open
 * group); note whether an entry that stays overlaps the writer.
 */
static void cover_hit(struct walk *w, int32_t i)
{
	struct tensormap *tm = w->tm;
	struct tm_ent *e = &tm->ents[i];

	if (is_complete(tm, e->task)) {
		scratch_push(tm, i);
		tm->st.dropped++;
	} else if (!(tm->grp && e->grp == tm->grp) && decide_covers(tm, w->q, &tm->lays[i])) {
		scratch_push(tm, i);
		tm->st.retired++;
	} else {
		/* a sibling of the open group, or partly overwritten: it stays */
		e->excl_w = 0;
		if ((w->excl || (w->excl_w && e->write)) && decide_overlap(tm, w->q, &tm->lays[i])) {
			w->excl = 0;
			if (e->write)
				w->excl_w = 0;
		}
	}
}

/*
 * In key order, the entries whose hull and phase meet the argument's. A
 * subtree goes when its highest high end is at or below the argument's
 * low end or its phase hull misses; the walk ends at the first entry
 * that starts at or above the argument's high end. Iterative: the left
 * spine on a stack of TM_STACK entries (the recursion for a deeper
 * subtree, a treap is rarely that deep).
 */
#define TM_STACK	48

/* nothing in the subtree of @n meets the argument's hull and phase */
static inline int pruned(const struct walk *w, const struct tm_node *n)
{
	return (n->max_hi <= w->lo) | (n->sub_lo >= w->hi) | (n->sub_phi <= w->plo) |
	       (n->sub_plo >= w->phi);
}

/* the entry itself meets them (its low end is below the argument's high end) */
static inline int meets(const struct tensormap *tm, const struct walk *w, int32_t i)
{
	const struct tm_node *n = &tm->nodes[i];

	return (n->phi > w->plo) & (n->plo < w->phi) && tm->ents[i].hi > w->lo;
}

static int walk_tree(struct walk *w, int32_t i)
{
	const struct tm_node *N = w->tm->nodes;
	int32_t stack[TM_STACK];
	uint32_t sp = 0;

	for (;;) {
		while (i != NIL && !pruned(w, &N[i])) {
			if (sp == TM_STACK) {
				if (walk_tree(w, i))
					return 1;
				break;
			}
			stack[sp++] = i;
			i = N[i].left;
		}
		if (!sp)
			return 0;
		i = stack[--sp];
		if (N[i].lo >= w->hi)
			return 1;
		if (meets(w->tm, w, i)) {
			if (w->cover)
				cover_hit(w, i);
			else
				deps_hit(w, i);
		}
		i = N[i].right;
	}
}

/*
 * The same for a run: the first element whose high end is above the
 * argument's low end (binary search: the hulls are disjoint and in
 * order), then each element that starts below the argument's high end.
 * An element whose entry is removed during the walk (a hit marks it for
 * removal after the walk) stays in place until then.
 */
static void walk_run(struct walk *w, const struct tm_run *r)
{
	uint32_t a = r->head, z = r->n, m;
	int32_t i;

	if (a == z || r->el[z - 1].hi <= w->lo || r->el[a].lo >= w->hi)
		return;
	while (a < z) {
		m = a + (z - a) / 2;
		if (r->el[m].hi <= w->lo)
			a = m + 1;
		else
			z = m;
	}
	for (; a < r->n && r->el[a].lo < w->hi; a++) {
		i = r->el[a].ent;
		if (i == NIL || !meets(w->tm, w, i))
			continue;
		if (w->cover)
			cover_hit(w, i);
		else
			deps_hit(w, i);
	}
}

/*
 * The live entry of @runs whose view is exactly @q, or NIL: the element
 * starting at @q's low end (binary search; hulls in a run are disjoint, so
 * there is at most one per run), if its entry has @q's layout. The view
 * index's lookup for the writers that are in runs (they are not indexed).
 */
static int32_t runs_find_view(const struct tensormap *tm, const struct tm_run *runs,
			      const struct tm_layout *q)
{
	uint32_t k, a, z, m;
	int32_t i;

	for (k = 0; k < TM_RUNS; k++) {
		const struct tm_run *r = &runs[k];

		a = r->head;
		z = r->n;
		if (a == z || q->lo < r->el[a].lo || q->lo > r->el[z - 1].lo)
			continue;
		while (a < z) {
			m = a + (z - a) / 2;
			if (r->el[m].lo < q->lo)
				a = m + 1;
			else
				z = m;
		}
		if (a == r->n || r->el[a].lo != q->lo)
			continue;
		i = r->el[a].ent;
		if (i != NIL && r->el[a].hi == q->hi && layout_same(q, &tm->lays[i]))
			return i;
	}
	return NIL;
}

/* may a live entry of kind @k (1: writers) of @b meet the hull of @q? */
static inline int kind_meets(const struct tm_buf *b, int k, const struct tm_layout *q)
{
	return q->lo < b->khi[k] && b->klo[k] < q->hi;
}

static inline void walk_runs(struct walk *w, const struct tm_run *runs)
{
	uint32_t k;

	for (k = 0; k < TM_RUNS; k++)
		walk_run(w, &runs[k]);
}

int tm_deps(struct tensormap *tm, const struct accel_tensor *t, enum accel_access acc,
	    uint64_t task, tm_dep_fn fn, void *arg)
{
	struct tm_layout q;
	int ret;

	ret = tm_layout_make(t, &q);
	if (ret)
		return ret;
	return tm_deps_layout(tm, t->buf, &q, acc, task, fn, arg);
}

/*
 * Entry @i has the argument's view, and no other entry the lookup would
 * consider overlaps it (the last insert, @last_excl; or an INPUT lookup
 * and an excl_w writer): it is all the walk would find (its overlap
 * decision with an identical layout is "yes").
 */
static int deps_same_view(struct tensormap *tm, int32_t i, enum accel_access acc,
			  uint64_t task, tm_dep_fn fn, void *arg)
{
	const struct tm_ent *e = &tm->ents[i];
	enum tm_dep_kind kind;

	tm->st.same_view_lookups++;
	if (e->task == task)
		return 0;
	if (is_complete(tm, e->task)) {
		node_remove(tm, i);
		tm->st.dropped++;
		return 0;
	}
	if (!e->write) {
		if (acc == ACCEL_INPUT)
			return 0;
		kind = TM_DEP_WAR;
	} else if (acc == ACCEL_INPUT || acc == ACCEL_INOUT) {
		kind = TM_DEP_RAW;
	} else {
		kind = TM_DEP_WAW;
	}
	tm->st.deps[kind]++;
	fn(arg, e->task, kind);
	return 1;
}

int tm_deps_layout(struct tensormap *tm, const struct accel_buffer *buf,
		   const struct tm_layout *q, enum accel_access acc, uint64_t task, tm_dep_fn fn,
		   void *arg)
{
	struct walk w;
	struct tm_buf *b;
	int32_t i;

	tm->st.lookups++;
	if (q->empty)
		return 0;
	b = buf_find(tm, buf);
	if (!b)
		return 0;
	/* nothing the walks or the same-view paths could find */
	if (!kind_meets(b, 1, q) && (acc == ACCEL_INPUT || !kind_meets(b, 0, q)))
		return 0;
	if (!(tm->flags & TM_NO_SAME_VIEW)) {
		if (b->last != NIL && b->last_excl && layout_same(q, &tm->lays[b->last]))
			return deps_same_view(tm, b->last, acc, task, fn, arg);
		if (acc == ACCEL_INPUT) {
			uint32_t rec = (uint32_t)(b - tm->recs);

			/* the writer of exactly this view: in a run, else in the index */
			i = runs_find_view(tm, b->run[1], q);
			if (i == NIL)
				i = vindex_find(tm, rec, view_hash(rec, q), q);
			if (i != NIL && tm->ents[i].excl_w)
				return deps_same_view(tm, i, acc, task, fn, arg);
		}
	}
	w.tm = tm;
	w.q = q;
	w.lo = q->lo;
	w.hi = q->hi;
	w.acc = acc;
	w.task = task;
	w.fn = fn;
	w.arg = arg;
	w.n = 0;
	w.cover = 0;
	phase(b, q, &w.plo, &w.phi);
	if (kind_meets(b, 1, q)) {
		walk_tree(&w, b->root[1]);
		walk_runs(&w, b->run[1]);
	}
	if (acc != ACCEL_INPUT && kind_meets(b, 0, q)) {
		walk_tree(&w, b->root[0]);
		walk_runs(&w, b->run[0]);
	}
	tm->st.dropped += tm->sn;
	scratch_flush(tm);
	return w.n;
}

/* ---- inserts ---- */

void tm_set_progress(struct tensormap *tm, tm_progress_fn progress)
{
	tm->progress = progress;
	tm->swept_valid = false;
}

static void sweep(struct tensormap *tm)
{
	uint64_t p = 0;
	uint32_t i;

	if (!tm->complete)
		return;
	if (tm->progress) {
		/* before the scan: a completion during it changes the next count */
		p = tm->progress(tm->carg);
		if (tm->swept_valid && p == tm->swept)
			return;
	}
	tm->scanned += tm->ncap;
	for (i = 0; i < tm->ncap; i++)
		if (tm->ents[i].used && is_complete(tm, tm->ents[i].task))
			scratch_push(tm, (int32_t)i);
	tm->st.dropped += tm->sn;
	scratch_flush(tm);
	tm->swept = p;
	tm->swept_valid = tm->progress != NULL;
}

void tm_reclaim(struct tensormap *tm)
{
	sweep(tm);
	tm->sweep_at = tm->st.live_entries * 2 > 256 ? tm->st.live_entries * 2 : 256;
}

int tm_insert(struct tensormap *tm, const struct accel_tensor *t, enum accel_access acc,
	      uint64_t task)
{
	struct tm_layout q;
	int ret;

	ret = tm_layout_make(t, &q);
	if (ret)
		return ret;
	return tm_insert_layout(tm, t->buf, &q, acc, task);
}

/*
 * A writer of exactly the view of the buffer's last insert, a writer
 * entry that no other entry overlaps: the walk would retire (or drop) that
 * entry and nothing else, then insert one with the same hull and phase.
 * Refresh it in place instead. Not for a sibling of the open group (it
 * would not be retired), nor when the cover decision is not "yes" (an
 * interleaved view covers nothing).
 */
static int insert_same_view(struct tensormap *tm, struct tm_buf *b, const struct tm_layout *q,
			    uint64_t task)
{
	struct work wk = { tm->budget, 0, 0 };
	int32_t i = b->last;
	struct tm_ent *e;
	int fb = 0, done;

	if ((tm->flags & TM_NO_SAME_VIEW) || i == NIL || !b->last_excl)
		return 0;
	e = &tm->ents[i];
	if (!e->write || (tm->grp && e->grp == tm->grp) || !layout_same(q, &tm->lays[i]))
		return 0;
	/*
	 * The walk's cover decision, not counted unless this path is taken:
	 * when it is not "yes", the walk makes (and counts) it again.
	 */
	done = is_complete(tm, e->task);
	if (!done && !covers(&wk, q, &tm->lays[i], &fb))
		return 0;
	/* commit */
	if (done) {
		tm->st.dropped++;
	} else {
		tm->st.retired++;
		tm->st.fallbacks += !!(fb & TM_FB_HULL);
		tm->st.capped += !!(fb & TM_FB_CAPPED);
	}
	e->task = task;
	e->grp = tm->grp;
	e->excl_w = 1;		/* no other entry overlaps it */
	tm->st.inserts++;
	tm->st.same_view_inserts++;
	return 1;
}

int tm_insert_layout(struct tensormap *tm, const struct accel_buffer *buf,
		     const struct tm_layout *q, enum accel_access acc, uint64_t task)
{
	struct tm_run *r;
	struct tm_buf *b;
	struct tm_node *n;
	int k;
	struct tm_ent *e;
	struct walk w;
	int32_t i;
	int wr = acc != ACCEL_INPUT;

	if (q->empty)
		return 0;
	b = buf_find(tm, buf);
	/* a refresh needs no room (and changes nothing when it does not apply) */
	if (b && wr && insert_same_view(tm, b, q, task))
		return 0;
	/* check: room for the buffer's record and the entry, before any change */
	if ((!b && buf_room(tm, 1)) || node_room(tm, 1))
		return -ENOMEM;
	/* commit: nothing below fails */
	if (!b)
		b = buf_add(tm, buf);
	w.excl = 1;
	w.excl_w = 1;
	if (wr) {
		w.tm = tm;
		w.q = q;
		w.lo = q->lo;
		w.hi = q->hi;
		w.cover = 1;
		phase(b, q, &w.plo, &w.phi);
		for (k = 1; k >= 0; k--) {
			if (!kind_meets(b, k, q))
				continue;
			walk_tree(&w, b->root[k]);
			walk_runs(&w, b->run[k]);
		}
		scratch_flush(tm);	/* counted in cover_visit */
	} else if (b->live) {
		w.excl = 0;	/* not looked for: a reader walks nothing */
	}
	/* after the removals: an emptied buffer has lost its class */
	class_set(b, q);
	i = node_alloc(tm);
	n = &tm->nodes[i];
	e = &tm->ents[i];
	n->lo = q->lo;
	n->sub_lo = q->lo;
	n->max_hi = q->hi;
	e->hi = q->hi;
	phase(b, q, &n->plo, &n->phi);
	n->sub_plo = n->plo;
	n->sub_phi = n->phi;
	n->left = NIL;
	n->right = NIL;
	e->write = (uint8_t)wr;
	e->used = 1;
	e->rec = (uint32_t)(b - tm->recs);
	e->grp = tm->grp;
	e->task = task;
	e->indexed = 0;
	e->excl_w = (uint8_t)w.excl_w;
	layout_copy(&tm->lays[i], q);
	k = run_pick(tm, b->run[wr], q->lo);
	/*
	 * The view index for writers in the trees only: a lookup finds a
	 * run's writer by a binary search, about as fast as the index, and
	 * an entry left out of the index only loses that shortcut (a later
	 * writer's cover walk clears excl_w of what it overlaps, indexed or
	 * not).
	 */
	if (wr && k < 0) {
		e->vh = view_hash(e->rec, q);
		vindex_add(tm, i);
	}
	if (k >= 0) {
		r = &b->run[wr][k];
		e->in_run = 1;
		e->run = (uint8_t)k;
		e->rpos = r->n;
		r->el[r->n++] = (struct tm_run_el){ .lo = q->lo, .hi = q->hi, .ent = i };
		tm->st.run_inserts++;
	} else {
		e->in_run = 0;
		tm->rng ^= tm->rng << 13;
		tm->rng ^= tm->rng >> 17;
		tm->rng ^= tm->rng << 5;
		e->prio = tm->rng;
		b->root[wr] = t_insert(tm, b->root[wr], i);
	}
	b->live++;
	b->klive[wr]++;
	if (q->lo < b->klo[wr])
		b->klo[wr] = q->lo;
	if (q->hi > b->khi[wr])
		b->khi[wr] = q->hi;
	b->last = i;
	b->last_excl = (uint8_t)w.excl;
	tm->st.inserts++;
	if (++tm->st.live_entries > tm->st.max_live_entries)
		tm->st.max_live_entries = tm->st.live_entries;
	if (tm->st.live_entries >= tm->sweep_at)
		tm_reclaim(tm);
	return 0;
}

int tm_reserve(struct tensormap *tm, const struct accel_buffer *const *bufs, unsigned int n)
{
	uint64_t fresh = 0;
	unsigned int i;

	/* room for every listed buffer as a new one: no need to look them up */
	if (((uint64_t)tm->nbufs + n) * 2 <= tm->scap && (uint64_t)tm->nbufs + n <= tm->rcap &&
	    tm->st.live_entries + n <= tm->ncap)
		return 0;
	/* a buffer listed twice counts twice: more room than needed, never less */
	for (i = 0; i < n; i++)
		fresh += !buf_find(tm, bufs[i]);
	if (buf_room(tm, fresh) || node_room(tm, n))
		return -ENOMEM;
	return 0;
}

void tm_group_begin(struct tensormap *tm)
{
	/* 0 is "no group"; after 2^32 - 1 groups ids repeat (see tensormap.h) */
	if (!++tm->grp_last)
		tm->grp_last = 1;
	tm->grp = tm->grp_last;
}

void tm_group_end(struct tensormap *tm)
{
	tm->grp = 0;
}

/* free every entry of a tree: O(its entries), scratch as the stack */
static void tree_free(struct tensormap *tm, int32_t root)
{
	uint32_t sp = 0;
	int32_t i;

	if (root == NIL)
		return;
	tm->scratch[sp++] = root;
	while (sp) {
		i = tm->scratch[--sp];
		tm->scanned++;
		if (tm->nodes[i].left != NIL)
			tm->scratch[sp++] = tm->nodes[i].left;
		if (tm->nodes[i].right != NIL)
			tm->scratch[sp++] = tm->nodes[i].right;
		node_free(tm, i);
	}
}

/* free every entry of a run, and its array */
static void run_free(struct tensormap *tm, struct tm_run *r)
{
	uint32_t i;

	for (i = r->head; i < r->n; i++) {
		tm->scanned++;
		if (r->el[i].ent != NIL)
			node_free(tm, r->el[i].ent);
	}
	free(r->el);
	memset(r, 0, sizeof(*r));
}

void tm_forget_buffer(struct tensormap *tm, const struct accel_buffer *buf)
{
	uint32_t i = buf_slot(tm, buf), j, k, ri;
	struct tm_buf *b;

	if (!tm->slots[i].buf)
		return;
	ri = tm->slots[i].rec;
	b = &tm->recs[ri];
	tree_free(tm, b->root[0]);
	tree_free(tm, b->root[1]);
	for (k = 0; k < 2 * TM_RUNS; k++)
		run_free(tm, &b->run[k / TM_RUNS][k % TM_RUNS]);
	b->buf = NULL;
	b->next_free = tm->rfree;
	tm->rfree = ri;
	tm->nbufs--;
	/* backward-shift deletion keeps linear probing chains whole */
	tm->slots[i].buf = NULL;
	for (j = (i + 1) & (tm->scap - 1); tm->slots[j].buf; j = (j + 1) & (tm->scap - 1)) {
		k = hash_ptr(tm->slots[j].buf) & (tm->scap - 1);
		/* can slot j's entry move to the hole at i? (k cyclically outside (i, j]) */
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			tm->slots[i] = tm->slots[j];
			tm->slots[j].buf = NULL;
			i = j;
		}
	}
}
