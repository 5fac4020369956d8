// SPDX-License-Identifier: MIT
/*
 * The TensorMap: per buffer, an interval tree (a treap keyed by the low
 * end of each entry's byte hull, augmented with the subtree's highest
 * high end) of entries (view, task, reader or writer). A lookup visits
 * only the entries whose hull meets the argument's hull, O(log n + k),
 * then decides exact overlap on the canonical layouts (tensormap.h).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

	if (t->ndims < 1 || t->ndims > ACCEL_TENSOR_MAX_DIMS || t->offset > (1ull << 61))
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
	if (!esz || !view_surely_ok(t, (uint32_t)__builtin_ctzll((uint64_t)esz))) {
		ret = accel_tensor_check(t);
		if (ret)
			return ret;
	}
	memset(l, 0, sizeof(*l));
	l->lo = (int64_t)t->offset;
	for (i = 0; i < t->ndims; i++) {
		if (!t->shape[i]) {
			l->empty = 1;
			l->hi = l->lo;
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
	return tm_layout_overlap_budget(a, b, TM_DECISION_BUDGET, NULL, fallback);
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
	return tm_layout_covers_budget(w, e, TM_DECISION_BUDGET, NULL, fallback);
}

/* ---- the index ---- */

/*
 * The phase pruning: a buffer's tree has a class, the strides of its first
 * box entry with nd >= 1 (tensormap.h), period P = its last stride. An
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

struct tm_node {
	int64_t lo, hi, max_hi;
	int64_t plo, phi;		/* phase of this entry */
	int64_t sub_plo, sub_phi;	/* phase hull of the subtree */
	int32_t left, right;		/* left: next free when unused */
	uint32_t prio;
	uint8_t write;
	uint8_t used;
	uint32_t bufidx;
	uint32_t grp;			/* tm_group_begin() group it was inserted in, 0: none */
	uint64_t task;
	struct tm_layout lay;
};

struct tm_buf {
	const struct accel_buffer *buf;	/* NULL: empty slot */
	int32_t root;
	uint32_t live;
	uint32_t cnd;			/* class: 0 none, else nd and strides */
	int64_t cstride[ACCEL_TENSOR_MAX_DIMS];
};

/*
 * Room: nodes[ncap] (live_entries of them used, the rest on the free
 * list), and scratch[scap] with scap >= ncap at all times, so that
 * marking nodes during one walk (each at most once) never allocates:
 * only node_room() and buf_room() allocate, and both are called before
 * a call changes anything.
 */
struct tensormap {
	struct tm_node *nodes;
	uint32_t ncap, nfree_head;
	struct tm_buf *bufs;
	uint32_t bcap, nbufs;		/* bcap: power of two */
	int32_t *scratch;
	uint32_t scap, sn;
	uint32_t grp;			/* the open group (tm_group_begin()), 0: none */
	uint32_t grp_last;		/* the last group id handed out */
	uint32_t budget;		/* steps per overlap or cover decision */
	tm_complete_fn complete;
	void *carg;
	uint32_t rng;
	uint64_t sweep_at;
	struct tm_stats st;
};

#define NIL	(-1)

int tm_create(tm_complete_fn complete, void *complete_arg, struct tensormap **out)
{
	struct tensormap *tm = calloc(1, sizeof(*tm));

	if (!tm)
		return -ENOMEM;
	tm->complete = complete;
	tm->carg = complete_arg;
	tm->rng = 0x9e3779b9u;
	tm->nfree_head = UINT32_MAX;
	tm->sweep_at = 256;
	tm->bcap = 16;
	tm->budget = TM_DECISION_BUDGET;
	tm->bufs = calloc(tm->bcap, sizeof(*tm->bufs));
	if (!tm->bufs) {
		free(tm);
		return -ENOMEM;
	}
	*out = tm;
	return 0;
}

void tm_destroy(struct tensormap *tm)
{
	if (!tm)
		return;
	free(tm->nodes);
	free(tm->bufs);
	free(tm->scratch);
	free(tm);
}

void tm_get_stats(const struct tensormap *tm, struct tm_stats *st)
{
	*st = tm->st;
	st->buffers = tm->nbufs;
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
static uint32_t buf_slot(const struct tensormap *tm, const struct accel_buffer *buf)
{
	uint32_t i = hash_ptr(buf) & (tm->bcap - 1);

	while (tm->bufs[i].buf && tm->bufs[i].buf != buf)
		i = (i + 1) & (tm->bcap - 1);
	return i;
}

static struct tm_buf *buf_find(const struct tensormap *tm, const struct accel_buffer *buf)
{
	struct tm_buf *b = &tm->bufs[buf_slot(tm, buf)];

	return b->buf ? b : NULL;
}

static int buf_grow(struct tensormap *tm)
{
	struct tm_buf *old = tm->bufs, *nb;
	uint32_t ocap = tm->bcap, i, n;

	if (ocap > UINT32_MAX / 4)
		return -ENOMEM;
	nb = calloc(ocap * 2, sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	tm->bufs = nb;
	tm->bcap = ocap * 2;
	for (i = 0; i < ocap; i++)
		if (old[i].buf)
			nb[buf_slot(tm, old[i].buf)] = old[i];
	/* entries remember their buffer's slot */
	for (n = 0; n < tm->ncap; n++)
		if (tm->nodes[n].used)
			tm->nodes[n].bufidx = buf_slot(tm, old[tm->nodes[n].bufidx].buf);
	free(old);
	return 0;
}

/* room for @extra more buffers in the table (at most half full) */
static int buf_room(struct tensormap *tm, uint64_t extra)
{
	while ((tm->nbufs + extra) * 2 > tm->bcap)
		if (buf_grow(tm))
			return -ENOMEM;
	return 0;
}

/* a new buffer's index: buf_room() made room for it */
static struct tm_buf *buf_add(struct tensormap *tm, const struct accel_buffer *buf)
{
	uint32_t i = buf_slot(tm, buf);

	tm->bufs[i].buf = buf;
	tm->bufs[i].root = NIL;
	tm->bufs[i].live = 0;
	tm->bufs[i].cnd = 0;
	tm->nbufs++;
	return &tm->bufs[i];
}

static inline void upd(struct tm_node *N, int32_t i)
{
	int64_t m = N[i].hi, pl = N[i].plo, ph = N[i].phi;
	int32_t c;

	c = N[i].left;
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

/* the first box with nd >= 1 gives an empty tree its class */
static void class_set(struct tm_buf *b, const struct tm_layout *l)
{
	uint32_t k;

	if (b->cnd || !l->box || !l->nd)
		return;
	b->cnd = l->nd;
	for (k = 0; k < l->nd; k++)
		b->cstride[k] = l->stride[k];
}

/* key order: (lo, index) */
static inline int key_less(const struct tm_node *N, int32_t a, int32_t b)
{
	return N[a].lo < N[b].lo || (N[a].lo == N[b].lo && a < b);
}

static int32_t t_insert(struct tm_node *N, int32_t r, int32_t x)
{
	int less;
	int32_t *down, *across, c;

	if (r == NIL)
		return x;
	/* x goes down one side; its new root c rotates up if its priority is higher */
	less = key_less(N, x, r);
	down = less ? &N[r].left : &N[r].right;
	*down = t_insert(N, *down, x);
	c = *down;
	if (N[c].prio > N[r].prio) {
		across = less ? &N[c].right : &N[c].left;
		*down = *across;
		*across = r;
		upd(N, r);
		r = c;
	}
	upd(N, r);
	return r;
}

static int32_t t_merge(struct tm_node *N, int32_t a, int32_t b)
{
	if (a == NIL)
		return b;
	if (b == NIL)
		return a;
	if (N[a].prio > N[b].prio) {
		N[a].right = t_merge(N, N[a].right, b);
		upd(N, a);
		return a;
	}
	N[b].left = t_merge(N, a, N[b].left);
	upd(N, b);
	return b;
}

static int32_t t_remove(struct tm_node *N, int32_t r, int32_t x)
{
	if (r == x)
		return t_merge(N, N[r].left, N[r].right);
	if (key_less(N, x, r))
		N[r].left = t_remove(N, N[r].left, x);
	else
		N[r].right = t_remove(N, N[r].right, x);
	upd(N, r);
	return r;
}

/* room for @extra more nodes (and the scratch to mark all of them) */
static int node_room(struct tensormap *tm, uint64_t extra)
{
	uint64_t want = tm->st.live_entries + extra;
	uint32_t ncap = tm->ncap ? tm->ncap : 64, i;
	struct tm_node *n;
	int32_t *s;

	if (want <= tm->ncap)
		return 0;
	while (ncap < want) {
		if (ncap > INT32_MAX / 4)
			return -ENOMEM;
		ncap *= 2;
	}
	n = realloc(tm->nodes, ncap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	tm->nodes = n;		/* bigger, but ncap is not until the scratch is */
	s = realloc(tm->scratch, ncap * sizeof(*s));
	if (!s)
		return -ENOMEM;
	tm->scratch = s;
	tm->scap = ncap;
	for (i = ncap; i-- > tm->ncap;) {
		n[i].used = 0;
		n[i].left = (int32_t)tm->nfree_head;
		tm->nfree_head = i;
	}
	tm->ncap = ncap;
	return 0;
}

/* a free node: node_room() made room for it */
static int32_t node_alloc(struct tensormap *tm)
{
	uint32_t i = tm->nfree_head;

	tm->nfree_head = (uint32_t)tm->nodes[i].left;
	return (int32_t)i;
}

static void node_remove(struct tensormap *tm, int32_t i)
{
	struct tm_node *N = tm->nodes;
	struct tm_buf *b = &tm->bufs[N[i].bufidx];

	b->root = t_remove(N, b->root, i);
	if (!--b->live)
		b->cnd = 0;	/* the next entry chooses the class */
	N[i].used = 0;
	N[i].left = (int32_t)tm->nfree_head;
	tm->nfree_head = (uint32_t)i;
	tm->st.live_entries--;
}

/* scap >= ncap, and a walk marks a node at most once: always room */
static inline void scratch_push(struct tensormap *tm, int32_t i)
{
	tm->scratch[tm->sn++] = i;
}

static inline int is_complete(const struct tensormap *tm, uint64_t task)
{
	return tm->complete && tm->complete(tm->carg, task);
}

/* removal of the nodes in scratch (marked for removal during a walk) */
static void scratch_flush(struct tensormap *tm, uint64_t *counter)
{
	uint32_t i;

	for (i = 0; i < tm->sn; i++)
		node_remove(tm, tm->scratch[i]);
	*counter += tm->sn;
	tm->sn = 0;
}

struct walk {
	struct tensormap *tm;
	const struct tm_layout *q;
	enum accel_access acc;
	uint64_t task;
	tm_dep_fn fn;
	void *arg;
	int n;
	int64_t plo, phi;	/* the argument's phase */
};

/* one decision of the map, within its budget, counted */
static int decide_overlap(struct tensormap *tm, const struct tm_layout *a,
			  const struct tm_layout *b, int *fb)
{
	struct work wk = { tm->budget, 0, 0 };
	int r = overlap(&wk, a, b, fb);

	tm->st.fallbacks += !!(*fb & TM_FB_HULL);
	tm->st.capped += !!(*fb & TM_FB_CAPPED);
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

/* entries of completed tasks found on the way are marked for removal */
static void deps_visit(struct walk *w, int32_t i)
{
	struct tensormap *tm = w->tm;
	struct tm_node *N = tm->nodes;
	enum tm_dep_kind kind;
	int fb = 0;

	while (i != NIL) {
		if (N[i].max_hi <= w->q->lo || N[i].sub_phi <= w->plo || N[i].sub_plo >= w->phi)
			return;
		deps_visit(w, N[i].left);
		if (N[i].lo >= w->q->hi)
			return;
		if (N[i].hi > w->q->lo && N[i].phi > w->plo && N[i].plo < w->phi &&
		    N[i].task != w->task) {
			if (is_complete(tm, N[i].task)) {
				scratch_push(tm, i);
			} else if (N[i].write || w->acc != ACCEL_INPUT) {
				if (!N[i].write)
					kind = TM_DEP_WAR;
				else if (w->acc == ACCEL_INPUT || w->acc == ACCEL_INOUT)
					kind = TM_DEP_RAW;
				else
					kind = TM_DEP_WAW;
				fb = 0;
				/* hulls meet, neither is empty: boxes need only their digits */
				if (same_boxes(w->q, &N[i].lay) ? box_overlap(w->q, &N[i].lay) :
				    decide_overlap(tm, w->q, &N[i].lay, &fb)) {
					tm->st.deps[kind]++;
					w->n++;
					w->fn(w->arg, N[i].task, kind);
				}
			}
		}
		i = N[i].right;
	}
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

int tm_deps_layout(struct tensormap *tm, const struct accel_buffer *buf,
		   const struct tm_layout *q, enum accel_access acc, uint64_t task, tm_dep_fn fn,
		   void *arg)
{
	struct walk w;
	struct tm_buf *b;

	tm->st.lookups++;
	if (q->empty)
		return 0;
	b = buf_find(tm, buf);
	if (!b)
		return 0;
	w.tm = tm;
	w.q = q;
	w.acc = acc;
	w.task = task;
	w.fn = fn;
	w.arg = arg;
	w.n = 0;
	phase(b, q, &w.plo, &w.phi);
	deps_visit(&w, b->root);
	scratch_flush(tm, &tm->st.dropped);
	return w.n;
}

/* writer w: mark completed entries and the entries it covers */
static void cover_visit(struct tensormap *tm, const struct tm_layout *q, int64_t plo,
			int64_t phi, int32_t i)
{
	struct tm_node *N = tm->nodes;

	while (i != NIL) {
		/* what q covers, it overlaps: the phases meet */
		if (N[i].max_hi <= q->lo || N[i].sub_phi <= plo || N[i].sub_plo >= phi)
			return;
		cover_visit(tm, q, plo, phi, N[i].left);
		if (N[i].lo >= q->hi)
			return;
		if (N[i].hi > q->lo) {
			if (is_complete(tm, N[i].task)) {
				scratch_push(tm, i);
				tm->st.dropped++;
			} else if (tm->grp && N[i].grp == tm->grp) {
				/* a sibling of the open group: never retired by it */
			} else if (decide_covers(tm, q, &N[i].lay)) {
				scratch_push(tm, i);
				tm->st.retired++;
			}
		}
		i = N[i].right;
	}
}

static void sweep(struct tensormap *tm)
{
	uint64_t none = 0;
	uint32_t i;

	if (!tm->complete)
		return;
	for (i = 0; i < tm->ncap; i++)
		if (tm->nodes[i].used && is_complete(tm, tm->nodes[i].task))
			scratch_push(tm, (int32_t)i);
	tm->st.dropped += tm->sn;
	scratch_flush(tm, &none);
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

int tm_insert_layout(struct tensormap *tm, const struct accel_buffer *buf,
		     const struct tm_layout *lq, enum accel_access acc, uint64_t task)
{
	const struct tm_layout q = *lq;
	struct tm_buf *b;
	struct tm_node *n;
	uint64_t none = 0;
	int64_t plo, phi;
	int32_t i;

	if (q.empty)
		return 0;
	/* check: room for the buffer's index and the node, before any change */
	b = buf_find(tm, buf);
	if ((!b && buf_room(tm, 1)) || node_room(tm, 1))
		return -ENOMEM;
	/* commit: nothing below fails */
	if (!b)
		b = buf_add(tm, buf);
	if (acc != ACCEL_INPUT) {
		phase(b, &q, &plo, &phi);
		cover_visit(tm, &q, plo, phi, b->root);
		scratch_flush(tm, &none);	/* counted in cover_visit */
	}
	/* after the removals: an emptied tree has lost its class */
	class_set(b, &q);
	phase(b, &q, &plo, &phi);
	i = node_alloc(tm);
	n = &tm->nodes[i];
	n->lo = q.lo;
	n->hi = q.hi;
	n->max_hi = q.hi;
	n->plo = plo;
	n->phi = phi;
	n->sub_plo = plo;
	n->sub_phi = phi;
	n->left = NIL;
	n->right = NIL;
	tm->rng ^= tm->rng << 13;
	tm->rng ^= tm->rng >> 17;
	tm->rng ^= tm->rng << 5;
	n->prio = tm->rng;
	n->write = acc != ACCEL_INPUT;
	n->used = 1;
	n->bufidx = (uint32_t)(b - tm->bufs);
	n->grp = tm->grp;
	n->task = task;
	n->lay = q;
	b->root = t_insert(tm->nodes, b->root, i);
	b->live++;
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

void tm_set_decision_budget(struct tensormap *tm, uint32_t budget)
{
	tm->budget = budget;
}

void tm_forget_buffer(struct tensormap *tm, const struct accel_buffer *buf)
{
	struct tm_buf *b = buf_find(tm, buf);
	uint32_t i, j, k, slot;

	if (!b)
		return;
	slot = (uint32_t)(b - tm->bufs);
	for (i = 0; i < tm->ncap; i++) {
		if (tm->nodes[i].used && tm->nodes[i].bufidx == slot) {
			tm->nodes[i].used = 0;
			tm->nodes[i].left = (int32_t)tm->nfree_head;
			tm->nfree_head = i;
			tm->st.live_entries--;
		}
	}
	/* backward-shift deletion keeps linear probing chains whole */
	i = slot;
	tm->bufs[i].buf = NULL;
	tm->nbufs--;
	for (j = (i + 1) & (tm->bcap - 1); tm->bufs[j].buf; j = (j + 1) & (tm->bcap - 1)) {
		k = hash_ptr(tm->bufs[j].buf) & (tm->bcap - 1);
		/* can slot j's entry move to the hole at i? (k cyclically outside (i, j]) */
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			uint32_t n;

			tm->bufs[i] = tm->bufs[j];
			tm->bufs[j].buf = NULL;
			for (n = 0; n < tm->ncap; n++)
				if (tm->nodes[n].used && tm->nodes[n].bufidx == j)
					tm->nodes[n].bufidx = i;
			i = j;
		}
	}
}
