// SPDX-License-Identifier: MIT
/*
 * Waiting, faults, abort and recovery.
 *
 * Every host wait of a task graph is bounded: by its own timeout, the task
 * graph's timeout (internal waits), a fault of one of the task graph's
 * queues (-EIO: the task graph is one fault domain; faults of queues that
 * are not its own do not end its waits), a removal (-ENODEV) or
 * accel_tg_abort() (-ECANCELED). A sleeping wait sleeps in WAIT_SIGNALS on
 * two conditions: the awaited line value and the task graph's abort signal
 * on that device, so an abort from another thread or a signal handler
 * wakes it at once.
 *
 * A fault stops the task graph: every later submission, launch, map and
 * wait fails with -EIO (accel_tg_status() says which queue, task and
 * packet) until accel_tg_recover() abandons the in-flight work, replaces
 * the queues and resets the dependency state. An abort does the same with
 * -ECANCELED.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tg_internal.h"

#define TG_SLEEP_SLICE	10000000ll	/* ns: fault checks while sleeping */
#define TG_HOST_SLICE	1000000ll	/* ns: with host tasks this thread runs */

void tg_flush(struct accel_tg *tg)
{
	uint32_t i;

	for (i = 0; i < tg->nq; i++) {
		struct accel_queue *q = tg->lines[i].q;

		if (q && q->pi != q->wi)
			accel_queue_submit(q);
	}
}

static bool aborted(struct accel_tg *tg)
{
	return atomic_load_explicit(&tg->aborted, memory_order_acquire);
}

int tg_sleep(struct accel_tg *tg, uint64_t id, int64_t deadline)
{
	struct tg_line *l = &tg->lines[TG_ID_LINE(id)];
	struct accel_event ev = { .signal = l->sig, .value = TG_ID_VALUE(id) };
	struct acc_abort ab = { .sig = tg->abort_sig[l->devi],
				.value = atomic_load(&tg->abort_level) };

	if (aborted(tg))
		return -ECANCELED;
	/* the task graph's queues are its fault domain: another queue's fault does not end it */
	return acc_wait_events(&ev, 1, false, deadline, tg->qarr, tg->nq, &ab, NULL);
}

/* the task a faulted ring index of queue line @l belongs to, NULL if gone */
static const struct tg_ring_rec *fault_rec(const struct tg_line *l, uint64_t ring_index)
{
	uint32_t i;

	for (i = 0; i < l->q->size; i++) {
		const struct tg_ring_rec *r = &l->recs[i];

		if (r->value && r->first <= ring_index && ring_index <= r->last)
			return r;
	}
	return NULL;
}

/* the graph task of a faulted packet inside a launch's body, or UINT32_MAX */
static uint32_t fault_graph_task(const struct accel_tg *tg, const struct tg_ring_rec *r,
				 uint32_t line, const struct accel_queue_fault *f)
{
	const struct accel_graph_exec *ge = r ? r->ge : NULL;
	uint32_t i;

	(void)tg;
	if (!ge || !f->depth)
		return UINT32_MAX;
	for (i = 0; i < ge->nlines; i++)
		if (ge->lines[i].line == line && f->exec_index < ge->lines[i].npk)
			return ge->lines[i].task_of[f->exec_index];
	return UINT32_MAX;
}

int tg_check_faults(struct accel_tg *tg)
{
	struct accel_queue_fault f;
	const struct tg_ring_rec *r;
	uint32_t i, gt;
	int ret;

	if (tg->fault)
		return tg->fault;
	for (i = 0; i < tg->nq; i++) {
		struct tg_line *l = &tg->lines[i];

		if (!l->q)
			continue;
		ret = accel_queue_status(l->q, &f, sizeof(f));
		if (!ret)
			continue;
		tg->fault = ret;
		tg->fault_line = i;
		if (ret != -EIO) {
			acc_err("task graph: queue %u of %s: %s", l->qi, tg->devs[l->devi]->path,
				strerror(-ret));
			return ret;
		}
		r = fault_rec(l, f.ring_index);
		gt = fault_graph_task(tg, r, i, &f);
		acc_err("task graph: queue %u of %s faulted: %s at ring index %llu (%s%s%s, value %llu%s%s), address 0x%llx",
			l->qi, tg->devs[l->devi]->path, accel_fault_name(f.code),
			(unsigned long long)f.ring_index, r ? (r->ge ? "graph launch" : "task ") : "a task",
			r && !r->ge ? r->name : "", "", r ? (unsigned long long)r->value : 0ull,
			gt != UINT32_MAX ? ", graph task " : "",
			gt != UINT32_MAX ? r->ge->g->tasks[gt].name : "",
			(unsigned long long)f.addr);
		return ret;
	}
	return 0;
}

int tg_wait_id(struct accel_tg *tg, uint64_t id, int64_t deadline, const char *what)
{
	struct tg_line *l = &tg->lines[TG_ID_LINE(id)];
	int64_t now, until, spin_end;
	int ret;

	if (tg_id_done(tg, id))
		return 0;
	if (tg->open_maps) {
		int m = tg_map_blocking(tg, TG_ID_LINE(id), TG_ID_VALUE(id));

		if (m >= 0) {
			acc_err("task graph: %s (line %u value %llu) waits for the open map %p: unmap it first (only this thread could)",
				what, TG_ID_LINE(id), (unsigned long long)TG_ID_VALUE(id),
				tg->maps[m].ptr);
			return -EDEADLK;
		}
	}
	tg_flush(tg);
	spin_end = acc_now_ns() + acc_spin_ns();
	for (;;) {
		if (tg_id_done(tg, id))
			return 0;
		if (aborted(tg))
			return -ECANCELED;
		if (!tg->worker_running) {
			tg_run_host_tasks(tg, false);
			if (tg_id_done(tg, id))
				return 0;
		}
		ret = tg_check_faults(tg);
		if (ret)
			return ret;
		now = acc_now_ns();
		if (now >= deadline) {
			acc_err("task graph: timed out waiting for %s (line %u value %llu, at %llu)",
				what, TG_ID_LINE(id), (unsigned long long)TG_ID_VALUE(id),
				(unsigned long long)accel_signal_read(l->sig));
			return -ETIMEDOUT;
		}
		if (now < spin_end) {
			acc_cpu_relax();
			continue;
		}
		/* sleep a slice: faults and host work pending are looked at again */
		until = deadline - now > TG_SLEEP_SLICE ? now + TG_SLEEP_SLICE : deadline;
		if (!tg->worker_running && !list_empty(&tg->host_pending) &&
		    until - now > TG_HOST_SLICE)
			until = now + TG_HOST_SLICE;
		ret = tg_sleep(tg, id, until);
		if (ret && ret != -ETIMEDOUT)
			return ret;
	}
}

int tg_reserve(struct accel_tg *tg, struct tg_line *l, unsigned int n)
{
	struct acc_abort ab;
	int64_t deadline;
	int ret = accel_queue_reserve(l->q, n, 0);

	if (ret != -EAGAIN)
		return ret;
	tg->st.stall_ring++;
	tg_flush(tg);
	ab.sig = tg->abort_sig[l->devi];
	ab.value = atomic_load(&tg->abort_level);
	deadline = acc_deadline(tg->timeout_ns);
	for (;;) {
		int64_t until = deadline;

		/* the ring may wait for a host task only this thread runs */
		if (!tg->worker_running && !list_empty(&tg->host_pending)) {
			tg_run_host_tasks(tg, false);
			if (deadline - acc_now_ns() > TG_HOST_SLICE)
				until = acc_now_ns() + TG_HOST_SLICE;
		}
		ret = acc_queue_reserve(l->q, n, until, &ab);
		if (ret != -ETIMEDOUT || until == deadline)
			break;
	}
	if (ret == -ETIMEDOUT)
		acc_err("task graph: queue %u of %s stayed full for the timeout", l->qi,
			tg->devs[l->devi]->path);
	if (ret == -EIO)
		tg_check_faults(tg);
	return ret;
}

ACCEL_API int accel_tg_task_done(struct accel_tg *tg, uint64_t id)
{
	int ret = tg_enter(tg, 0, "accel_tg_task_done");
	uint32_t line = TG_ID_LINE(id);

	if (ret)
		return ret;
	if (line >= tg->nlines || !TG_ID_VALUE(id) || TG_ID_VALUE(id) >= tg->lines[line].next)
		return -EINVAL;
	return tg_id_done(tg, id);
}

ACCEL_API int accel_tg_task_wait(struct accel_tg *tg, uint64_t id, int64_t timeout_ns)
{
	int ret = accel_tg_task_done(tg, id);

	if (ret < 0)
		return ret;
	if (ret)
		return 0;
	ret = tg_enter(tg, TG_E_ABORT | TG_E_FAULT, "accel_tg_task_wait");
	if (ret)
		return ret;
	return tg_wait_id(tg, id, acc_deadline(timeout_ns), "a task");
}

/*
 * A trace's end stamps follow the work whose completion a wait sees
 * (tg_trace_stamp()): with ACCEL_TG_TRACE, drain queue line @line's ring
 * too, so that accel_tg_trace_write() after a sync or an exec wait has
 * every record. A fault is left to tg_check_faults().
 */
int tg_trace_drain(struct accel_tg *tg, uint32_t line, int64_t deadline)
{
	struct tg_line *l = &tg->lines[line];
	struct acc_abort ab;
	int ret;

	if (!(tg->p.flags & ACCEL_TG_TRACE) || l->kind != TG_LINE_QUEUE || l->next == 1)
		return 0;
	ab.sig = tg->abort_sig[l->devi];
	ab.value = atomic_load(&tg->abort_level);
	ret = acc_queue_sync(l->q, deadline, &ab);
	return ret == -EIO ? 0 : ret;
}

ACCEL_API int accel_tg_sync(struct accel_tg *tg, int64_t timeout_ns)
{
	int64_t deadline = acc_deadline(timeout_ns);
	uint32_t i, pass;
	int ret;

	ret = tg_enter(tg, TG_E_ABORT | TG_E_FAULT, "accel_tg_sync");
	if (ret)
		return ret;
	/* twice: host tasks run meanwhile may have let more device work go */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i <= tg->host_line; i++) {
			struct tg_line *l = &tg->lines[i];

			if (l->next == 1 || (pass && i == tg->host_line))
				continue;
			ret = tg_wait_id(tg, tg_id(i, l->next - 1), deadline,
					 i == tg->host_line ? "host tasks" : "a queue");
			if (ret)
				return ret;
		}
	}
	for (i = 0; i < tg->host_line; i++) {
		ret = tg_trace_drain(tg, i, deadline);
		if (ret)
			return ret;
	}
	ret = tg_check_faults(tg);
	if (ret)
		return ret;
	tg_retire_holds(tg);
	tm_reclaim(tg->tm);
	tg_bufs_collect(tg);
	return 0;
}

/* --- status, abort, recovery --- */

/* struct accel_tg_status as of the first release (libaccel 1.0) */
#define STATUS_SIZE_1_0	sizeof(struct accel_tg_status)

ACCEL_API int accel_tg_status(struct accel_tg *tg, struct accel_tg_status *st)
{
	struct accel_tg_status s;
	struct accel_queue_fault f;
	const struct tg_ring_rec *r;
	struct tg_line *l;
	uint32_t size, gt;
	int ret = tg_enter(tg, 0, "accel_tg_status");

	if (ret)
		return ret;
	if (!st)
		return -EINVAL;
	size = st->size;
	ret = acc_struct_size_check(size, STATUS_SIZE_1_0);
	if (ret)
		return ret;
	memset(&s, 0, sizeof(s));
	s.size = (uint32_t)sizeof(s);
	s.graph_task = UINT32_MAX;
	tg_check_faults(tg);
	if (atomic_load_explicit(&tg->aborted, memory_order_acquire))
		s.error = -ECANCELED;
	if (tg->fault) {
		l = &tg->lines[tg->fault_line];
		s.error = tg->fault;
		s.device = l->devi;
		s.queue = l->qi;
		if (tg->fault == -EIO && l->q && accel_queue_status(l->q, &f, sizeof(f)) == -EIO) {
			s.fault = f;
			r = fault_rec(l, f.ring_index);
			if (r) {
				s.task = tg_id(tg->fault_line, r->value);
				gt = fault_graph_task(tg, r, tg->fault_line, &f);
				snprintf(s.task_name, sizeof(s.task_name), "%s",
					 r->ge ? (gt != UINT32_MAX ? r->ge->g->tasks[gt].name :
						  "graph launch") : r->name);
				s.graph_task = gt;
			}
		}
	}
	acc_put_struct(st, size, &s, sizeof(s), STATUS_SIZE_1_0);
	st->size = size;
	return s.error;
}

ACCEL_API int accel_tg_abort(struct accel_tg *tg)
{
	unsigned int d;

	if (!tg)
		return -EINVAL;
	atomic_store_explicit(&tg->aborted, true, memory_order_release);
	/* one SIGNAL_WRITE per device wakes the sleepers (async-signal-safe) */
	for (d = 0; d < tg->ndevs; d++) {
		struct accel_signal *ab = tg->abort_sig[d];

		tp_signal_write(&tg->devs[d]->tp, ab->page->buf->handle, ab->offset,
				DRM_VACCEL_SIGNAL_MAX, atomic_load(&tg->abort_level));
	}
	return 0;
}

ACCEL_API int accel_tg_recover(struct accel_tg *tg)
{
	struct accel_queue_params qp = { .size = sizeof(qp), .ring_size = tg ? tg->p.ring_size : 0 };
	struct accel_queue *nq[ACCEL_TG_MAX_DEVICES * 64];
	struct tensormap *tm;
	struct list *l2, *ln;
	uint32_t i;
	int ret = tg_enter(tg, 0, "accel_tg_recover");

	if (ret)
		return ret;
	for (i = 0; i < ACCEL_TG_MAX_MAPS; i++)
		if (tg->maps[i].ptr) {
			acc_err("accel_tg_recover: map %p is open: unmap it first", tg->maps[i].ptr);
			return -EBUSY;
		}
	/* check, then commit: every new queue and a new TensorMap first */
	ret = tm_create(tg_tm_done, tg, &tm);
	if (ret)
		return ret;
	tm_set_progress(tm, tg_tm_progress);
	for (i = 0; i < tg->nq; i++) {
		ret = accel_queue_create(tg->devs[tg->lines[i].devi], &qp, &nq[i]);
		if (ret) {
			acc_err("accel_tg_recover: a new queue on %s: %s",
				tg->devs[tg->lines[i].devi]->path, strerror(-ret));
			while (i--)
				accel_queue_destroy(nq[i]);
			tm_destroy(tm);
			return ret;
		}
	}
	/* the old queues stop (their in-flight packets finish), the new take over */
	tg_worker_pause(tg);
	for (i = 0; i < tg->nq; i++) {
		struct tg_line *l = &tg->lines[i];

		accel_queue_destroy(l->q);
		l->q = nq[i];
		tg->qarr[i] = nq[i];
		memset(l->recs, 0, l->q->size * sizeof(*l->recs));
	}
	tg_host_abandon(tg);
	/* executables the program destroyed while they ran: nothing runs them now */
	for (l2 = tg->execs.next; l2 != &tg->execs; l2 = ln) {
		ln = l2->next;
		if (container_of(l2, struct accel_graph_exec, node)->zombie)
			tg_exec_free(container_of(l2, struct accel_graph_exec, node));
	}
	/* abandoned work counts as done: values only grow, nothing waits forever */
	for (i = 0; i < tg->nlines; i++) {
		struct tg_line *l = &tg->lines[i];

		if (l->next > 1 && !acc_ge(accel_signal_read(l->sig), l->next - 1))
			accel_signal_write(l->sig, DRM_VACCEL_SIGNAL_MAX, l->next - 1);
	}
	tg_holds_abandon(tg);
	tm_destroy(tg->tm);
	tg->tm = tm;
	tg_bufs_collect(tg);
	tg->fault = 0;
	if (atomic_load_explicit(&tg->aborted, memory_order_acquire)) {
		/* the abort signals stay at the old level: the next abort raises them further */
		atomic_fetch_add(&tg->abort_level, 1);
		atomic_store_explicit(&tg->aborted, false, memory_order_release);
	}
	tg_worker_resume(tg);
	acc_info("accel_tg_recover: %u queues replaced, in-flight work abandoned", tg->nq);
	return 0;
}
