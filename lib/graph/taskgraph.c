// SPDX-License-Identifier: MIT
/*
 * The task graph object: create, destroy, its lines (timelines) and the
 * checks every entry point makes. The rest is split by concern (see
 * tg_internal.h).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tg_internal.h"

#define TG_DEFAULT_HEAP		(16ull << 20)
#define TG_DEFAULT_TIMEOUT	10000000000ll

void *tg_grow(void *arr, uint32_t *cap, uint32_t need, size_t size, uint32_t min)
{
	uint32_t ncap = *cap ? *cap : min;
	void *na;

	if (need <= *cap)
		return arr;
	while (ncap < need)
		ncap *= 2;
	na = realloc(arr, (size_t)ncap * size);
	if (na)
		*cap = ncap;
	return na;
}

int tg_devi_of(const struct accel_tg *tg, const struct accel_device *dev)
{
	unsigned int i;

	for (i = 0; i < tg->ndevs; i++)
		if (tg->devs[i] == dev)
			return (int)i;
	return -ENOENT;
}

int tg_tm_done(void *arg, uint64_t id)
{
	return tg_id_done(arg, id);
}

uint64_t tg_tm_progress(void *arg)
{
	const struct accel_tg *tg = arg;
	uint64_t sum = 0;
	uint32_t i;
	int err;

	/* timelines only grow (a dead device reads 0: a change as well) */
	for (i = 0; i < tg->nlines; i++)
		sum += acc_signal_load(tg->lines[i].sig, &err);
	return sum;
}

int tg_enter(struct accel_tg *tg, unsigned int flags, const char *fn)
{
	if (!tg)
		return -EINVAL;
	if (tg_in_host_task(tg)) {
		acc_err("%s: called from a host task of the same task graph (a host task may not call its task graph)",
			fn);
		return -EDEADLK;
	}
	if (acc_dev_forked(tg->devs[0])) {
		acc_err("%s: the task graph belongs to the parent process (fork)", fn);
		return -ECHILD;
	}
	if ((flags & TG_E_ABORT) && atomic_load_explicit(&tg->aborted, memory_order_acquire)) {
		acc_err("%s: the task graph was aborted (accel_tg_recover() makes it usable again)",
			fn);
		return -ECANCELED;
	}
	if ((flags & TG_E_FAULT) && tg->fault) {
		acc_err("%s: the task graph stopped at a fault of queue line %u (accel_tg_status(), accel_tg_recover())",
			fn, tg->fault_line);
		return tg->fault;
	}
	return 0;
}

int tg_line_room(const struct tg_line *l, uint64_t n, const char *what)
{
	if (n > TG_VALUE_MAX || l->next > TG_VALUE_MAX - n + 1) {
		acc_err("%s: timeline values exhausted (2^%u per line)", what, TG_VALUE_BITS);
		return -EOVERFLOW;
	}
	return 0;
}

/* --- line pages --- */

static int lpage_create(struct accel_tg *tg, uint32_t devi, struct tg_sigpage *lp)
{
	struct accel_buffer *b;
	int ret;

	ret = acc_buffer_new(tg->devs[devi], ACC_PAGE, DRM_VACCEL_BO_SIGNAL,
			     DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE, PROT_READ, true, &b);
	if (ret)
		return ret;
	lp->pg.buf = b;
	lp->pg.host = b->host;
	return 0;
}

static void lpage_free(struct tg_sigpage *lp)
{
	unsigned int d;

	for (d = 0; d < ACCEL_TG_MAX_DEVICES; d++)
		if (lp->import[d])
			acc_buffer_unpin(lp->import[d], &lp->pin[d]);
	if (lp->pg.buf)
		acc_buffer_free(lp->pg.buf);
	memset(lp, 0, sizeof(*lp));
}

/* the page of line @line's signal as imported into device @devi */
static int lpage_on(struct accel_tg *tg, struct tg_line *l, uint32_t devi)
{
	struct tg_sigpage *lp = l->lp;
	struct accel_device *src = tg->devs[l->devi];
	int ret, fd;

	if (lp->import[devi])
		return 0;
	/* into this process only: the fd is closed below */
	ret = tp_export_local(&src->tp, lp->pg.buf->handle, 1, &fd);
	if (ret) {
		acc_err("%s: export of the task graph's signal page 0x%llx: %s", src->path,
			(unsigned long long)lp->pg.buf->va, strerror(-ret));
		return ret;
	}
	ret = acc_buffer_import_pinned(tg->devs[devi], fd, &lp->pin[devi], &lp->import[devi]);
	tp_close_fd(fd);
	if (ret) {
		acc_err("%s: import of the task graph's signal page of %s: %s",
			tg->devs[devi]->path, src->path, strerror(-ret));
		lp->import[devi] = NULL;
	}
	return ret;
}

int tg_line_va(struct accel_tg *tg, uint32_t line, uint32_t devi, uint64_t *va)
{
	struct tg_line *l = &tg->lines[line];
	int ret;

	if (!l->va_on[devi]) {
		if (l->devi == devi) {
			l->va_on[devi] = l->sig->va;
			l->handle_on[devi] = l->lp->pg.buf->handle;
		} else {
			ret = lpage_on(tg, l, devi);
			if (ret)
				return ret;
			l->va_on[devi] = l->lp->import[devi]->va + l->sig->offset;
			l->handle_on[devi] = l->lp->import[devi]->handle;
		}
	}
	*va = l->va_on[devi];
	return 0;
}

int tg_line_handle(struct accel_tg *tg, uint32_t line, uint32_t devi, uint32_t *handle)
{
	uint64_t va;
	int ret = tg_line_va(tg, line, devi, &va);

	if (!ret)
		*handle = tg->lines[line].handle_on[devi];
	return ret;
}

/*
 * Signal slot @slot of device @devi's line pages (64 per page): the page
 * is created on first use.
 */
static int line_signal(struct accel_tg *tg, uint32_t devi, uint32_t slot,
		       struct tg_sigpage **lpp, struct accel_signal **sig)
{
	struct tg_sigpage *lp = &tg->lpages[devi][slot / ACC_SLOTS_PER_PAGE];
	int ret;

	if (!lp->pg.buf) {
		ret = lpage_create(tg, devi, lp);
		if (ret)
			return ret;
	}
	*lpp = lp;
	return acc_signal_at(tg->devs[devi], &lp->pg, slot % ACC_SLOTS_PER_PAGE, sig);
}

static int line_init(struct accel_tg *tg, struct tg_line *l, enum tg_line_kind kind,
		     uint32_t devi, uint32_t slot)
{
	int ret;

	l->kind = kind;
	l->devi = devi;
	ret = line_signal(tg, devi, slot, &l->lp, &l->sig);
	if (ret)
		return ret;
	l->next = 1;
	if (kind == TG_LINE_QUEUE) {
		l->recs = calloc(l->q->size, sizeof(*l->recs));
		if (!l->recs)
			return -ENOMEM;
	}
	if (tg->p.flags & ACCEL_TG_TRACE)
		return tg_trace_init(tg, l);
	return 0;
}

static void line_fini(struct tg_line *l)
{
	tg_trace_fini(l);
	accel_buffer_destroy(l->desc);
	accel_signal_destroy(l->sig);
	free(l->holds);
	free(l->recs);
}

/* --- create / destroy --- */

/* the accel_tg_params of the first release (libaccel 1.0) */
#define TG_PARAMS_SIZE_1_0	sizeof(struct accel_tg_params)

ACCEL_API int accel_tg_create(struct accel_device *const *devs, unsigned int ndevs,
			      const struct accel_tg_params *params, struct accel_tg **out)
{
	struct accel_queue_params qp = { .size = sizeof(qp) };
	struct accel_tg_params p = { .size = sizeof(p) };
	uint32_t slot[ACCEL_TG_MAX_DEVICES] = { 0 };
	struct accel_tg *tg;
	unsigned int d, i, j;
	uint32_t line = 0;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!devs || !ndevs || ndevs > ACCEL_TG_MAX_DEVICES)
		return -EINVAL;
	if (params) {
		ret = acc_copy_struct(&p, sizeof(p), params, params->size, TG_PARAMS_SIZE_1_0);
		if (ret) {
			acc_err("accel_tg_create: params.size %u: %s", params->size,
				ret == -E2BIG ? "unknown non-zero fields past what this library knows" :
				"smaller than any release's struct accel_tg_params");
			return ret;
		}
		if ((p.flags & ~ACCEL_TG_TRACE) || p.heap_size % GHEAP_MAX_ALIGN ||
		    p.queues_per_device > 64 || p.timeout_ns < -1) {
			acc_err("accel_tg_create: bad params (flags 0x%x, heap_size %llu, queues_per_device %u, timeout %lld)",
				p.flags, (unsigned long long)p.heap_size, p.queues_per_device,
				(long long)p.timeout_ns);
			return -EINVAL;
		}
	}
	for (d = 0; d < ndevs; d++) {
		ret = acc_check_dev(devs[d], "accel_tg_create");
		if (ret)
			return ret;
		if (acc_dev_forked(devs[d]))
			return -ECHILD;
		for (j = 0; j < d; j++)
			if (devs[j] == devs[d])
				return -EINVAL;
	}
	if (!p.heap_size)
		p.heap_size = TG_DEFAULT_HEAP;
	tg = calloc(1, sizeof(*tg));
	if (!tg)
		return -ENOMEM;
	tg->p = p;
	tg->timeout_ns = p.timeout_ns ? p.timeout_ns : TG_DEFAULT_TIMEOUT;
	tg->ndevs = ndevs;
	pthread_mutex_init(&tg->host_lock, NULL);
	pthread_cond_init(&tg->host_cond, NULL);
	list_init(&tg->host_pending);
	list_init(&tg->graphs);
	list_init(&tg->execs);
	list_init(&tg->pending_drop);
	for (d = 0; d < ndevs; d++) {
		tg->devs[d] = devs[d];
		tg->qbase[d] = tg->nq;
		tg->qcount[d] = p.queues_per_device ? p.queues_per_device :
				(devs[d]->props.engines ? devs[d]->props.engines : 1);
		tg->nq += tg->qcount[d];
	}
	tg->host_line = tg->nq;
	tg->map_line = tg->nq + 1;
	tg->nlines = tg->nq + 1 + ACCEL_TG_MAX_MAPS;
	tg->lines = calloc(tg->nlines, sizeof(*tg->lines));
	tg->deps.need = calloc(tg->nlines, sizeof(*tg->deps.need));
	tg->deps.touched = calloc(tg->nlines, sizeof(*tg->deps.touched));
	tg->pk = malloc(TG_MAX_TASK_PACKETS * sizeof(*tg->pk));
	tg->qarr = calloc(tg->nq, sizeof(*tg->qarr));
	tg->bcap = 64;
	tg->bufs = calloc(tg->bcap, sizeof(*tg->bufs));
	if (!tg->lines || !tg->deps.need || !tg->deps.touched || !tg->pk || !tg->bufs ||
	    !tg->qarr) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = tm_create(tg_tm_done, tg, &tg->tm);
	if (ret)
		goto fail;
	tm_set_progress(tg->tm, tg_tm_progress);
	/* an abort signal on every device: slot 0 of its first line page */
	for (d = 0; d < ndevs; d++) {
		struct tg_sigpage *lp;

		ret = line_signal(tg, d, slot[d]++, &lp, &tg->abort_sig[d]);
		if (ret)
			goto fail;
	}
	atomic_store(&tg->abort_level, 1);
	qp.ring_size = p.ring_size;
	for (d = 0; d < ndevs; d++) {
		for (i = 0; i < tg->qcount[d]; i++, line++) {
			struct tg_line *l = &tg->lines[line];

			l->qi = i;
			ret = accel_queue_create(devs[d], &qp, &l->q);
			if (ret)
				goto fail;
			tg->qarr[line] = l->q;
			ret = line_init(tg, l, TG_LINE_QUEUE, d, slot[d]++);
			if (ret)
				goto fail;
		}
	}
	ret = line_init(tg, &tg->lines[tg->host_line], TG_LINE_HOST, 0, slot[0]++);
	for (i = 0; !ret && i < ACCEL_TG_MAX_MAPS; i++)
		ret = line_init(tg, &tg->lines[tg->map_line + i], TG_LINE_MAP, 0, slot[0]++);
	if (ret)
		goto fail;
	*out = tg;
	return 0;
fail:
	acc_err("accel_tg_create: %s", strerror(-ret));
	tg->timeout_ns = 0;
	accel_tg_destroy(tg);
	return ret;
}

void tg_exec_free(struct accel_graph_exec *ge);

ACCEL_API void accel_tg_destroy(struct accel_tg *tg)
{
	bool forked;
	unsigned int i, d;

	if (!tg)
		return;
	forked = acc_dev_forked(tg->devs[0]);
	if (tg_in_host_task(tg)) {
		acc_err("accel_tg_destroy: called from a host task of the same task graph: not destroyed");
		return;
	}
	if (!forked && tg->lines && tg->timeout_ns &&
	    !atomic_load_explicit(&tg->aborted, memory_order_acquire)) {
		int ret = accel_tg_sync(tg, tg->timeout_ns);

		if (ret)
			acc_warn("accel_tg_destroy: work still running (%s): the queues stop first",
				 strerror(-ret));
	}
	tg_worker_stop(tg);
	/*
	 * The queues go first: once destroyed, nothing on the device reads or
	 * writes the buffers, descriptors and tables freed below.
	 */
	for (i = 0; tg->lines && i < tg->nq; i++) {
		accel_queue_destroy(tg->lines[i].q);
		tg->lines[i].q = NULL;
	}
	while (!list_empty(&tg->execs))
		tg_exec_free(container_of(tg->execs.next, struct accel_graph_exec, node));
	while (!list_empty(&tg->graphs)) {
		struct accel_graph *g = container_of(tg->graphs.next, struct accel_graph, node);

		list_del(&g->node);
		g->destroyed = true;
		tg_graph_put(g);
	}
	if (tg->capture) {
		struct accel_graph *g = tg->capture;

		tg->capture = NULL;
		g->destroyed = true;
		tg_graph_put(g);
	}
	tg_host_abandon(tg);
	for (i = 0; i < ACCEL_TG_MAX_MAPS; i++) {
		tg->maps[i].ptr = NULL;
		free(tg->maps[i].from);
	}
	if (tg->bufs)
		tg_bufs_fini(tg);
	for (i = 0; tg->lines && i < tg->nlines; i++)
		line_fini(&tg->lines[i]);
	for (d = 0; d < ACCEL_TG_MAX_DEVICES; d++)
		accel_signal_destroy(tg->abort_sig[d]);
	tg_heaps_fini(tg);
	for (d = 0; d < ACCEL_TG_MAX_DEVICES; d++)
		for (i = 0; i < 2; i++)
			lpage_free(&tg->lpages[d][i]);
	tm_destroy(tg->tm);
	pthread_mutex_destroy(&tg->host_lock);
	pthread_cond_destroy(&tg->host_cond);
	free(tg->bufs);
	free(tg->lines);
	free(tg->deps.need);
	free(tg->deps.touched);
	free(tg->pk);
	free(tg->qarr);
	free(tg);
}

ACCEL_API unsigned int accel_tg_num_queues(const struct accel_tg *tg, unsigned int dev)
{
	return tg && dev < tg->ndevs ? tg->qcount[dev] : 0;
}

ACCEL_API struct accel_queue *accel_tg_queue(const struct accel_tg *tg, unsigned int dev,
					     unsigned int queue)
{
	if (!tg || dev >= tg->ndevs || queue >= tg->qcount[dev])
		return NULL;
	return tg->lines[tg->qbase[dev] + queue].q;
}
