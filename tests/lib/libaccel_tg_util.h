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

#include <stddef.h>
#include <time.h>

#include "libaccel_test.h"

#define MS		1000000ll

/* accel_tg_get_stats() with the size set */
static inline void tg_stats(const struct accel_tg *tg, struct accel_tg_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	if (accel_tg_get_stats(tg, st))
		abort();
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
