// SPDX-License-Identifier: MIT
/*
 * Host tasks: functions the task graph runs on the host once their
 * dependencies completed, in submission order (the host line completes in
 * order), on a thread that waits (accel_tg_sync(), accel_tg_task_wait(),
 * accel_tg_map(), a submission waiting for room) or on the worker
 * accel_tg_start_worker() starts. A host task completes by raising the host
 * line's signal (SIGNAL_WRITE), so device work waits for it like for any
 * task.
 *
 * A host task may not call a function of its own task graph: it may run
 * inside one of those calls (a submission waiting for heap space runs ready
 * host tasks), and the task graph is single-threaded. Each such call fails
 * with -EDEADLK (a thread-local marks the running host task). It may use
 * everything else: its memory, buffers' host mappings, signals, queues,
 * other task graphs; accel_tg_host_buffer() names the buffers bound for the
 * launch that runs it.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tg_internal.h"

/*
 * The host tasks this thread runs now, innermost first: a host task of one
 * task graph may wait on another, which runs its host tasks meanwhile.
 */
struct host_frame {
	struct accel_tg *tg;
	const struct tg_host *h;
	struct host_frame *outer;
};

static _Thread_local struct host_frame *cur;

bool tg_in_host_task(const struct accel_tg *tg)
{
	const struct host_frame *f;

	for (f = cur; f; f = f->outer)
		if (f->tg == tg)
			return true;
	return false;
}

void tg_bindings_put(struct accel_tg *tg, struct tg_bindings *b)
{
	bool last;

	if (!b)
		return;
	pthread_mutex_lock(&tg->host_lock);
	last = --b->refs == 0;
	pthread_mutex_unlock(&tg->host_lock);
	if (last)
		free(b);
}

void tg_host_free(struct tg_host *h)
{
	free(h->deps);
	free(h);
}

void tg_host_queue(struct accel_tg *tg, struct list *batch)
{
	pthread_mutex_lock(&tg->host_lock);
	while (!list_empty(batch)) {
		struct tg_host *h = container_of(batch->next, struct tg_host, node);

		list_del(&h->node);
		list_add_tail(&tg->host_pending, &h->node);
	}
	pthread_cond_broadcast(&tg->host_cond);
	pthread_mutex_unlock(&tg->host_lock);
}

/* host_lock held (the head of the list cannot go meanwhile) */
static bool host_ready(struct accel_tg *tg, const struct tg_host *h)
{
	uint32_t i;

	for (i = 0; i < h->ndeps; i++)
		if (!tg_id_done(tg, h->deps[i]))
			return false;
	return true;
}

static void host_run(struct accel_tg *tg, struct tg_host *h)
{
	struct tg_line *l = &tg->lines[tg->host_line];
	struct host_frame frame = { .tg = tg, .h = h, .outer = cur };
	int64_t t0 = acc_now_ns(), t1;
	int ret;

	cur = &frame;
	h->fn(h->arg);
	cur = frame.outer;
	t1 = acc_now_ns();
	if (tg->p.flags & ACCEL_TG_TRACE && l->trace) {
		struct tg_trace_rec *r = &l->trace[h->value % TG_TRACE_SLOTS];

		/* the worker writes, accel_tg_trace_write() reads */
		pthread_mutex_lock(&tg->host_lock);
		tg_trace_note(l, h->value, tg_id(tg->host_line, h->value), h->name);
		r->host_start = t0;
		r->host_end = t1;
		pthread_mutex_unlock(&tg->host_lock);
	}
	/* counted before it completes: whoever sees it done sees it counted */
	atomic_fetch_add(&tg->host_tasks_run, 1);
	ret = accel_signal_write(l->sig, DRM_VACCEL_SIGNAL_MAX, h->value);
	if (ret)
		acc_err("host task %s: completing its signal: %s", h->name, strerror(-ret));
}

/*
 * Sleep at most @ns until the dependencies of the first pending host task
 * may be done (the worker).
 */
static void tg_host_wait_deps(struct accel_tg *tg, int64_t ns)
{
	uint64_t id = 0;
	struct tg_host *h;
	uint32_t i;

	pthread_mutex_lock(&tg->host_lock);
	if (!list_empty(&tg->host_pending)) {
		h = container_of(tg->host_pending.next, struct tg_host, node);
		for (i = 0; i < h->ndeps; i++)
			if (!tg_id_done(tg, h->deps[i])) {
				id = h->deps[i];
				break;
			}
	}
	pthread_mutex_unlock(&tg->host_lock);
	if (id && tg_sleep(tg, id, acc_deadline(ns)) == -ECANCELED) {
		/* aborted: tg_sleep() returns at once; sleep until a recovery or the stop */
		pthread_mutex_lock(&tg->host_lock);
		if (!tg->worker_stop) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += ns % 1000000000;
			ts.tv_sec += ns / 1000000000 + ts.tv_nsec / 1000000000;
			ts.tv_nsec %= 1000000000;
			pthread_cond_timedwait(&tg->host_cond, &tg->host_lock, &ts);
		}
		pthread_mutex_unlock(&tg->host_lock);
	}
}

/* the worker stops waiting: it is told to stop */
static bool host_stop(struct accel_tg *tg)
{
	return tg->worker_stop;
}

/*
 * Run the host tasks that are ready, in order (the host line completes in
 * order). @block: wait for the first one's dependencies (the worker). A
 * task is taken off the list before it runs, so that a recovery may drop
 * the others meanwhile.
 */
void tg_run_host_tasks(struct accel_tg *tg, bool block)
{
	struct tg_host *h;

	for (;;) {
		pthread_mutex_lock(&tg->host_lock);
		for (;;) {
			/* the worker, held by a recovery: out of every wait on the queues */
			while (block && tg->worker_pause && !host_stop(tg)) {
				tg->worker_paused = true;
				pthread_cond_broadcast(&tg->host_cond);
				pthread_cond_wait(&tg->host_cond, &tg->host_lock);
			}
			if (block)
				tg->worker_paused = false;
			if (!block || !list_empty(&tg->host_pending) || host_stop(tg))
				break;
			pthread_cond_wait(&tg->host_cond, &tg->host_lock);
		}
		if (list_empty(&tg->host_pending) || host_stop(tg)) {
			pthread_mutex_unlock(&tg->host_lock);
			return;
		}
		h = container_of(tg->host_pending.next, struct tg_host, node);
		if (host_ready(tg, h)) {
			list_del(&h->node);
			pthread_mutex_unlock(&tg->host_lock);
			host_run(tg, h);
			tg_bindings_put(tg, h->bind);
			tg_host_free(h);
			continue;
		}
		pthread_mutex_unlock(&tg->host_lock);
		if (!block)
			return;
		/* the worker: sleep until the first one may be ready, a bounded slice */
		tg_host_wait_deps(tg, 10000000);
	}
}

static void *worker_main(void *arg)
{
	struct accel_tg *tg = arg;

	tg_run_host_tasks(tg, true);
	return NULL;
}

ACCEL_API int accel_tg_start_worker(struct accel_tg *tg)
{
	int ret = tg_enter(tg, TG_E_ABORT, "accel_tg_start_worker");

	if (ret)
		return ret;
	if (tg->worker_running)
		return -EBUSY;
	tg->worker_stop = false;
	tg->worker_running = true;
	ret = pthread_create(&tg->worker, NULL, worker_main, tg);
	if (ret) {
		tg->worker_running = false;
		acc_err("accel_tg_start_worker: pthread_create: %s", strerror(ret));
		return -ENOMEM;
	}
	return 0;
}

void tg_worker_stop(struct accel_tg *tg)
{
	if (!tg->worker_running)
		return;
	pthread_mutex_lock(&tg->host_lock);
	tg->worker_stop = true;
	pthread_cond_broadcast(&tg->host_cond);
	pthread_mutex_unlock(&tg->host_lock);
	pthread_join(tg->worker, NULL);
	tg->worker_running = false;
}

void tg_worker_pause(struct accel_tg *tg)
{
	if (!tg->worker_running)
		return;
	pthread_mutex_lock(&tg->host_lock);
	tg->worker_pause = true;
	pthread_cond_broadcast(&tg->host_cond);
	/* at most one host task and one bounded wait slice (tg_host_wait_deps()) */
	while (!tg->worker_paused)
		pthread_cond_wait(&tg->host_cond, &tg->host_lock);
	pthread_mutex_unlock(&tg->host_lock);
}

void tg_worker_resume(struct accel_tg *tg)
{
	if (!tg->worker_running)
		return;
	pthread_mutex_lock(&tg->host_lock);
	tg->worker_pause = false;
	pthread_cond_broadcast(&tg->host_cond);
	pthread_mutex_unlock(&tg->host_lock);
}

/* drop every host task not run (destroy, recovery) */
void tg_host_abandon(struct accel_tg *tg)
{
	struct list gone;

	list_init(&gone);
	pthread_mutex_lock(&tg->host_lock);
	while (!list_empty(&tg->host_pending)) {
		struct tg_host *h = container_of(tg->host_pending.next, struct tg_host, node);

		list_del(&h->node);
		list_add_tail(&gone, &h->node);
	}
	pthread_mutex_unlock(&tg->host_lock);
	while (!list_empty(&gone)) {
		struct tg_host *h = container_of(gone.next, struct tg_host, node);

		list_del(&h->node);
		tg_bindings_put(tg, h->bind);
		tg_host_free(h);
	}
}

ACCEL_API struct accel_buffer *accel_tg_host_buffer(struct accel_buffer *captured)
{
	const struct tg_host *h = cur ? cur->h : NULL;
	unsigned int i;

	if (!h || !h->bind)
		return captured;
	for (i = 0; i < h->bind->n; i++)
		if (h->bind->b[i].from == captured)
			return h->bind->b[i].to;
	return captured;
}
