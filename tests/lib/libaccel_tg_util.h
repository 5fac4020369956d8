/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers of the task graph VM tests (libaccel_taskgraph_test.c,
 * libaccel_seeds_test.c): views, buffers mapped for checking, a clock,
 * and a small JSON reader for the trace output.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#ifndef LIBACCEL_TG_UTIL_H
#define LIBACCEL_TG_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include "libaccel_test.h"

#define MS		1000000ll

/*
 * TG_OLD_LIB: the regression tests of the task graph's 1.0 defects
 * (libaccel_tg_state_test.c, libaccel_tg_faults_test.c) are also built,
 * by hand, against the library before its rewrite (commit 3474e6c), to
 * show that they fail there: that library's accel_tg_get_stats() returns
 * nothing and its statistics have no size. Tests that need calls it does
 * not have are left out of such a build (#ifndef TG_OLD_LIB).
 */
#ifdef TG_OLD_LIB
static inline void tg_stats(const struct accel_tg *tg, struct accel_tg_stats *st)
{
	memset(st, 0, sizeof(*st));
	accel_tg_get_stats(tg, st);
}
#else
/* accel_tg_get_stats() with the size set */
static inline void tg_stats(const struct accel_tg *tg, struct accel_tg_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	if (accel_tg_get_stats(tg, st))
		abort();
}
#endif

/*
 * At the top of a test of a library bug that is not fixed yet: the test
 * is skipped (naming the bug) unless TG_KNOWN_BUGS=1 is set, so that the
 * suite passes while the bug is open and the test shows it on demand.
 * Remove the line with the fix.
 */
#define TG_KNOWN_BUG(what) do {							\
	if (!getenv("TG_KNOWN_BUGS"))						\
		SKIP(return, "known library bug, not fixed yet: %s (TG_KNOWN_BUGS=1 runs the test)", \
		     what);							\
} while (0)

/* A task graph over @dev: @queues queues (0: one per engine), ring, heap, timeout (0: defaults). */
static inline int tg_create1(struct accel_device *dev, uint32_t queues, uint32_t ring,
			     uint64_t heap, int64_t timeout_ns, struct accel_tg **tg)
{
	struct accel_tg_params p = {
		.size = sizeof(p),
		.queues_per_device = queues,
		.ring_size = ring,
		.heap_size = heap,
		.timeout_ns = timeout_ns,
	};

	return accel_tg_create(&dev, 1, &p, tg);
}

/* @n u32 of @p all equal to @v: the index of the first that is not, or -1 */
static inline long tg_first_not(const uint32_t *p, size_t n, uint32_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return (long)i;
	return -1;
}

static inline void tg_set_u32(uint32_t *p, size_t n, uint32_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = v;
}

/*
 * The library's log, captured (accel_log_set_handler()): every line at
 * ACCEL_LOG_INFO or more severe, also echoed to stderr as a comment.
 */
struct tg_logcap {
	pthread_mutex_t lock;
	char text[32768];
	size_t len;
	unsigned int lines;
};

static struct tg_logcap tg_logcap __attribute__((unused)) = { .lock = PTHREAD_MUTEX_INITIALIZER };
static int tg_log_level_saved __attribute__((unused)) = -1;

static inline void tg_log_fn(int level, const char *msg, void *arg)
{
	struct tg_logcap *c = arg;
	size_t n = strlen(msg);

	(void)level;
	fprintf(stderr, "# log: %s\n", msg);
	pthread_mutex_lock(&c->lock);
	if (c->len + n + 2 < sizeof(c->text)) {
		memcpy(c->text + c->len, msg, n);
		c->len += n;
		c->text[c->len++] = '\n';
		c->text[c->len] = 0;
	}
	c->lines++;
	pthread_mutex_unlock(&c->lock);
}

static inline void tg_log_start(void)
{
	pthread_mutex_lock(&tg_logcap.lock);
	tg_logcap.len = 0;
	tg_logcap.lines = 0;
	tg_logcap.text[0] = 0;
	pthread_mutex_unlock(&tg_logcap.lock);
	if (tg_log_level_saved < 0)
		tg_log_level_saved = accel_log_get_level();
	accel_log_set_level(ACCEL_LOG_INFO);
	accel_log_set_handler(tg_log_fn, &tg_logcap);
}

static inline void tg_log_stop(void)
{
	accel_log_set_handler(NULL, NULL);
	if (tg_log_level_saved >= 0)
		accel_log_set_level(tg_log_level_saved);
	tg_log_level_saved = -1;
}

/* captured lines containing every one of the @n strings in @needles */
static inline unsigned int tg_log_count(const char *const *needles, unsigned int n)
{
	unsigned int count = 0, k;
	char *line, *end;

	pthread_mutex_lock(&tg_logcap.lock);
	for (line = tg_logcap.text; *line; line = end + 1) {
		end = strchr(line, '\n');
		if (!end)
			break;
		*end = 0;
		for (k = 0; k < n && strstr(line, needles[k]); k++)
			;
		*end = '\n';
		if (k == n)
			count++;
	}
	pthread_mutex_unlock(&tg_logcap.lock);
	return count;
}

static inline unsigned int tg_log_has(const char *a, const char *b)
{
	const char *nd[2] = { a, b };

	return tg_log_count(nd, b ? 2 : 1);
}

/* A contiguous 1-D view of @n elements at byte @off. */
static inline struct accel_tensor tv1(struct accel_buffer *b, uint64_t off,
				      enum accel_dtype dt, uint64_t n)
{
	struct accel_tensor t;
	uint64_t shape[1] = { n };

	memset(&t, 0, sizeof(t));
	accel_tensor_init(&t, b, off, dt, 1, shape);
	return t;
}

/* A contiguous row-major 2-D view of @rows x @cols elements at byte @off. */
static inline struct accel_tensor tv2(struct accel_buffer *b, uint64_t off,
				      enum accel_dtype dt, uint64_t rows, uint64_t cols)
{
	struct accel_tensor t;
	uint64_t shape[2] = { rows, cols };

	memset(&t, 0, sizeof(t));
	accel_tensor_init(&t, b, off, dt, 2, shape);
	return t;
}

/* Sub-block [r0, r0 + nr) x [c0, c0 + nc) of a contiguous 2-D view. */
static inline struct accel_tensor tsub(struct accel_tensor t, uint64_t r0, uint64_t nr,
				       uint64_t c0, uint64_t nc)
{
	accel_tensor_slice(&t, 0, r0, nr, 1);
	accel_tensor_slice(&t, 1, c0, nc, 1);
	return t;
}

/* A buffer of @size bytes, zeroed and mapped at *@host. */
static inline int tg_buf(struct accel_device *dev, uint64_t size, struct accel_buffer **b,
			 void **host)
{
	int ret = accel_buffer_create(dev, size, 0, b);

	if (ret)
		return ret;
	ret = accel_buffer_map(*b, host);
	if (ret) {
		accel_buffer_destroy(*b);
		*b = NULL;
		return ret;
	}
	memset(*host, 0, size);
	return 0;
}

/* A host-mapped buffer of @size bytes (a multiple of 4) filled with the u32 @v. */
static inline int tg_mkbuf(struct accel_device *dev, uint64_t size, uint32_t v,
			   struct accel_buffer **b, uint32_t **h)
{
	void *p;
	int ret = tg_buf(dev, size, b, &p);

	if (ret)
		return ret;
	*h = p;
	tg_set_u32(*h, size / 4, v);
	return 0;
}

/* Submit @t on @queue (named @name when not NULL). */
static inline int tg_submit_on(struct accel_tg *tg, struct accel_task *t, uint32_t queue,
			       const char *name, uint64_t *id)
{
	t->queue = queue;
	if (name)
		t->name = name;
	return accel_tg_submit(tg, t, id);
}

/* Submit dst = src (an OUTPUT copy) on queue @queue of the first device. */
static inline int tg_copy(struct accel_tg *tg, struct accel_tensor *dst, struct accel_tensor *src,
			  uint32_t queue)
{
	struct accel_task t;

	accel_task_prep_copy(&t, dst, src, ACCEL_OUTPUT);
	t.queue = queue;
	return accel_tg_submit(tg, &t, NULL);
}

static inline int64_t tg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Poll accel_tg_task_done() (no waiting call, so no host task runs here). */
static inline int tg_poll_done(struct accel_tg *tg, uint64_t id, int64_t timeout_ns)
{
	int64_t end = tg_now_ns() + timeout_ns;
	int r;

	while ((r = accel_tg_task_done(tg, id)) == 0) {
		if (tg_now_ns() > end)
			return 0;
		usleep(500);
	}
	return r;
}

/*
 * A small JSON reader: checks the syntax of a whole document and collects,
 * for every object with a "ph" member (a Trace Event Format event), its
 * "ph", "pid", "tid" and "name" as raw text.
 */
struct jev {
	char ph[8], pid[32], tid[32], name[64], ts_s[32], dur_s[32];
	double ts, dur;			/* from ts_s, dur_s (0 when absent) */
};

struct jp {
	const char *s;
	size_t i, n;
	int err;
	struct jev *evs;
	unsigned int nev, max;
};

static inline void jp_ws(struct jp *p)
{
	while (p->i < p->n && p->s[p->i] && strchr(" \t\r\n", p->s[p->i]))
		p->i++;
}

/* After white space: @c, consumed (1), or something else, left (0). */
static inline int jp_eat(struct jp *p, char c)
{
	jp_ws(p);
	if (p->i < p->n && p->s[p->i] == c) {
		p->i++;
		return 1;
	}
	return 0;
}

/* After a member or element: ',' (1, another follows) or @close (0, the end). */
static inline int jp_more(struct jp *p, char close)
{
	if (jp_eat(p, ','))
		return 1;
	if (!jp_eat(p, close))
		p->err = 1;
	return 0;
}

static inline void jp_copy(char *out, size_t len, const char *s, size_t n)
{
	if (!out)
		return;
	if (n >= len)
		n = len - 1;
	memcpy(out, s, n);
	out[n] = 0;
}

/* A string; its contents (escapes kept as they are) into @out. */
static inline void jp_string(struct jp *p, char *out, size_t len)
{
	size_t start;

	if (p->i >= p->n || p->s[p->i] != '"') {
		p->err = 1;
		return;
	}
	start = ++p->i;
	while (p->i < p->n && p->s[p->i] != '"') {
		if ((unsigned char)p->s[p->i] < 0x20) {
			p->err = 1;
			return;
		}
		if (p->s[p->i] == '\\') {
			p->i++;
			if (p->i >= p->n || !strchr("\"\\/bfnrtu", p->s[p->i])) {
				p->err = 1;
				return;
			}
		}
		p->i++;
	}
	if (p->i >= p->n) {
		p->err = 1;
		return;
	}
	jp_copy(out, len, p->s + start, p->i - start);
	p->i++;
}

static inline void jp_value(struct jp *p, char *raw, size_t len, int depth);

static inline void jp_object(struct jp *p, int depth)
{
	static const struct {
		const char *key;
		size_t off, len;
	} kept[] = {
		{ "ph", offsetof(struct jev, ph), sizeof(((struct jev *)0)->ph) },
		{ "pid", offsetof(struct jev, pid), sizeof(((struct jev *)0)->pid) },
		{ "tid", offsetof(struct jev, tid), sizeof(((struct jev *)0)->tid) },
		{ "name", offsetof(struct jev, name), sizeof(((struct jev *)0)->name) },
		{ "ts", offsetof(struct jev, ts_s), sizeof(((struct jev *)0)->ts_s) },
		{ "dur", offsetof(struct jev, dur_s), sizeof(((struct jev *)0)->dur_s) },
	};
	struct jev ev;
	char key[32];
	unsigned int k;

	memset(&ev, 0, sizeof(ev));
	p->i++;
	if (jp_eat(p, '}'))
		return;
	do {
		char *raw = NULL;
		size_t rl = 0;

		jp_ws(p);
		jp_string(p, key, sizeof(key));
		if (p->err || !jp_eat(p, ':')) {
			p->err = 1;
			return;
		}
		for (k = 0; k < sizeof(kept) / sizeof(kept[0]); k++)
			if (!strcmp(key, kept[k].key)) {
				raw = (char *)&ev + kept[k].off;
				rl = kept[k].len;
			}
		jp_value(p, raw, rl, depth + 1);
	} while (!p->err && jp_more(p, '}'));
	if (!p->err && ev.ph[0] && p->nev < p->max) {
		ev.ts = strtod(ev.ts_s, NULL);
		ev.dur = strtod(ev.dur_s, NULL);
		p->evs[p->nev++] = ev;
	}
}

static inline void jp_array(struct jp *p, int depth)
{
	p->i++;
	if (jp_eat(p, ']'))
		return;
	do
		jp_value(p, NULL, 0, depth + 1);
	while (!p->err && jp_more(p, ']'));
}

static inline void jp_value(struct jp *p, char *raw, size_t len, int depth)
{
	size_t start;

	jp_ws(p);
	if (p->i >= p->n || depth > 32) {
		p->err = 1;
		return;
	}
	switch (p->s[p->i]) {
	case '{':
		jp_object(p, depth);
		return;
	case '[':
		jp_array(p, depth);
		return;
	case '"':
		jp_string(p, raw, len);
		return;
	}
	start = p->i;
	if (!strncmp(p->s + p->i, "true", 4) || !strncmp(p->s + p->i, "null", 4)) {
		p->i += 4;
	} else if (!strncmp(p->s + p->i, "false", 5)) {
		p->i += 5;
	} else {
		char *end;

		strtod(p->s + p->i, &end);
		if (end == p->s + p->i) {
			p->err = 1;
			return;
		}
		p->i = (size_t)(end - p->s);
	}
	jp_copy(raw, len, p->s + start, p->i - start);
}

/* 0 if @s is one JSON document (events into @evs), else -1. */
static inline int json_parse(const char *s, size_t n, struct jev *evs, unsigned int max,
			     unsigned int *nev)
{
	struct jp p = { .s = s, .n = n, .evs = evs, .max = max };

	jp_value(&p, NULL, 0, 0);
	jp_ws(&p);
	*nev = p.nev;
	return p.err || p.i != p.n ? -1 : 0;
}

#endif /* LIBACCEL_TG_UTIL_H */
