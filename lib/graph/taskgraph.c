// SPDX-License-Identifier: MIT
/*
 * The task graph: timelines, dependencies, eager submission, the output
 * heaps, host tasks and host maps. Graph capture, instantiation and launch
 * are in graph.c, the packets of each operation in lower.c, traces in
 * trace.c.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tg_internal.h"

#define TG_DEFAULT_HEAP		(16ull << 20)
#define TG_DEFAULT_TIMEOUT	10000000000ll
#define TG_HEAP_ALIGN		256u
#define TG_SWEEP_EVERY		256u

static const char *tname(const struct accel_task *task)
{
	return task->name ? task->name : "task";
}

/* --- lines and ids --- */

uint64_t tg_value(const struct accel_tg *tg, uint64_t id)
{
	return tg->lines[TG_ID_LINE(id)].base + TG_ID_REL(id);
}

bool tg_id_done(struct accel_tg *tg, uint64_t id)
{
	const struct tg_line *l = &tg->lines[TG_ID_LINE(id)];

	return acc_ge(accel_signal_read(l->sig), l->base + TG_ID_REL(id));
}

static int tm_done(void *arg, uint64_t id)
{
	return tg_id_done(arg, id);
}

int tg_line_va(struct accel_tg *tg, uint32_t line, uint32_t devi, uint64_t *va)
{
	struct tg_line *l = &tg->lines[line];
	uint32_t handle;
	int ret;

	if (!l->va_on[devi]) {
		ret = acc_signal_on(tg->devs[devi], l->sig, &handle, &l->va_on[devi]);
		if (ret)
			return ret;
	}
	*va = l->va_on[devi];
	return 0;
}

int tg_devi_of(const struct accel_tg *tg, const struct accel_device *dev)
{
	unsigned int i;

	for (i = 0; i < tg->ndevs; i++)
		if (tg->devs[i] == dev)
			return (int)i;
	return -ENOENT;
}

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

/* --- buffers the task graph has seen --- */

static uint32_t bhash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (uint32_t)x;
}

static struct tg_buf *buf_slot(struct accel_tg *tg, const struct accel_buffer *buf)
{
	uint32_t i = bhash(buf) & (tg->bcap - 1);

	while (tg->bufs[i].buf && tg->bufs[i].buf != buf)
		i = (i + 1) & (tg->bcap - 1);
	return &tg->bufs[i];
}

static int buf_grow(struct accel_tg *tg)
{
	struct tg_buf *old = tg->bufs;
	uint32_t ocap = tg->bcap, i;

	tg->bufs = calloc(ocap * 2, sizeof(*tg->bufs));
	if (!tg->bufs) {
		tg->bufs = old;
		return -ENOMEM;
	}
	tg->bcap = ocap * 2;
	for (i = 0; i < ocap; i++)
		if (old[i].buf)
			*buf_slot(tg, old[i].buf) = old[i];
	free(old);
	return 0;
}

void tg_buffer_get(struct accel_buffer *buf)
{
	pthread_mutex_lock(&buf->dev->lock);
	buf->refs++;
	pthread_mutex_unlock(&buf->dev->lock);
}

static unsigned int buf_refs(struct accel_buffer *buf)
{
	unsigned int r;

	pthread_mutex_lock(&buf->dev->lock);
	r = buf->refs;
	pthread_mutex_unlock(&buf->dev->lock);
	return r;
}

/*
 * Register @buf: the task graph keeps a reference while the TensorMap may
 * hold entries keyed by its address, so that the address cannot be reused
 * by another buffer meanwhile. Returns 0, -ENOENT (another device), -ENOMEM.
 */
int tg_buf_index(struct accel_tg *tg, struct accel_buffer *buf)
{
	struct tg_buf *b;
	int ret;

	if (tg_devi_of(tg, buf->dev) < 0)
		return -ENOENT;
	b = buf_slot(tg, buf);
	if (b->buf)
		return 0;
	if ((tg->nbufs + 1) * 2 > tg->bcap) {
		ret = buf_grow(tg);
		if (ret)
			return ret;
		b = buf_slot(tg, buf);
	}
	memset(b, 0, sizeof(*b));
	b->buf = buf;
	tg_buffer_get(buf);
	tg->nbufs++;
	return 0;
}

static void buf_drop(struct accel_tg *tg, struct tg_buf *b)
{
	unsigned int d;

	tm_forget_buffer(tg->tm, b->buf);
	for (d = 0; d < ACCEL_TG_MAX_DEVICES; d++)
		accel_buffer_destroy(b->import[d]);
	accel_buffer_destroy(b->buf);
	b->buf = NULL;
	tg->nbufs--;
}

/* Drop the buffers only the task graph still holds, once nothing runs. */
static void bufs_sweep(struct accel_tg *tg)
{
	struct tg_buf *old;
	uint32_t i, ocap;
	bool orphans = false;

	for (i = 0; i < tg->bcap && !orphans; i++)
		orphans = tg->bufs[i].buf && buf_refs(tg->bufs[i].buf) == 1;
	if (!orphans)
		return;
	for (i = 0; i < tg->nlines; i++)
		if (tg->lines[i].next != tg->lines[i].base + 1 &&
		    !acc_ge(accel_signal_read(tg->lines[i].sig), tg->lines[i].next - 1))
			return;
	/* rebuild the table without the orphans (keeps probing chains whole) */
	old = tg->bufs;
	ocap = tg->bcap;
	tg->bufs = calloc(ocap, sizeof(*tg->bufs));
	if (!tg->bufs) {
		tg->bufs = old;
		return;
	}
	tg->nbufs = 0;
	for (i = 0; i < ocap; i++) {
		if (!old[i].buf)
			continue;
		if (buf_refs(old[i].buf) == 1) {
			tg->nbufs++;
			buf_drop(tg, &old[i]);
			continue;
		}
		*buf_slot(tg, old[i].buf) = old[i];
		tg->nbufs++;
	}
	free(old);
}

int tg_buf_va(struct accel_tg *tg, struct accel_buffer *buf, uint32_t devi, uint64_t *va)
{
	struct accel_device *dev = tg->devs[devi];
	struct tg_buf *b;
	int ret, fd;

	if (buf->dev == dev) {
		*va = buf->va;
		return 0;
	}
	ret = tg_buf_index(tg, buf);
	if (ret)
		return ret;
	b = buf_slot(tg, buf);
	if (!b->import[devi]) {
		ret = accel_buffer_export(buf, 0, &fd);
		if (ret)
			return ret;
		ret = accel_buffer_import(dev, fd, 0, &b->import[devi]);
		close(fd);
		if (ret) {
			acc_err("%s: import of buffer 0x%llx of %s: %s", dev->path,
				(unsigned long long)buf->va, buf->dev->path, strerror(-ret));
			return ret;
		}
	}
	*va = b->import[devi]->va;
	return 0;
}

/* --- create / destroy --- */

static int line_init(struct accel_tg *tg, struct tg_line *l, enum tg_line_kind kind,
		     uint32_t devi)
{
	int ret;

	l->kind = kind;
	l->devi = devi;
	ret = accel_signal_create(tg->devs[devi], &l->sig);
	if (ret)
		return ret;
	l->base = accel_signal_read(l->sig);
	l->next = l->base + 1;
	if (tg->p.flags & ACCEL_TG_TRACE)
		return tg_trace_init(tg, l);
	return 0;
}

static void line_fini(struct tg_line *l)
{
	tg_trace_fini(l);
	accel_buffer_destroy(l->desc);
	accel_queue_destroy(l->q);
	accel_signal_destroy(l->sig);
	free(l->holds);
}

static void *worker_main(void *arg);

ACCEL_API int accel_tg_create(struct accel_device *const *devs, unsigned int ndevs,
			      const struct accel_tg_params *params, struct accel_tg **out)
{
	struct accel_queue_params qp = { .size = sizeof(qp) };
	struct accel_tg_params p = { .size = sizeof(p) };
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
		if (params->size < sizeof(p) || (params->flags & ~ACCEL_TG_TRACE) ||
		    params->heap_size % GHEAP_MAX_ALIGN || params->queues_per_device > 64 ||
		    params->timeout_ns < -1)
			return -EINVAL;
		memcpy(&p, params, sizeof(p));
	}
	for (d = 0; d < ndevs; d++) {
		ret = acc_check_dev(devs[d], "accel_tg_create");
		if (ret)
			return ret;
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
	tg->need = calloc(tg->nlines, sizeof(*tg->need));
	tg->touched = calloc(tg->nlines, sizeof(*tg->touched));
	tg->bcap = 64;
	tg->bufs = calloc(tg->bcap, sizeof(*tg->bufs));
	if (!tg->lines || !tg->need || !tg->touched || !tg->bufs) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = tm_create(tm_done, tg, &tg->tm);
	if (ret)
		goto fail;
	qp.ring_size = p.ring_size;
	for (d = 0; d < ndevs; d++) {
		for (i = 0; i < tg->qcount[d]; i++, line++) {
			struct tg_line *l = &tg->lines[line];

			l->qi = i;
			ret = accel_queue_create(devs[d], &qp, &l->q);
			if (ret)
				goto fail;
			ret = line_init(tg, l, TG_LINE_QUEUE, d);
			if (ret)
				goto fail;
		}
	}
	ret = line_init(tg, &tg->lines[tg->host_line], TG_LINE_HOST, 0);
	for (i = 0; !ret && i < ACCEL_TG_MAX_MAPS; i++)
		ret = line_init(tg, &tg->lines[tg->map_line + i], TG_LINE_MAP, 0);
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

void accel_graph_exec_destroy(struct accel_graph_exec *ge);

ACCEL_API void accel_tg_destroy(struct accel_tg *tg)
{
	unsigned int i;

	if (!tg)
		return;
	if (tg->lines && tg->timeout_ns) {
		int ret = accel_tg_sync(tg, tg->timeout_ns);

		if (ret)
			acc_warn("accel_tg_destroy: work still running: %s", strerror(-ret));
	}
	while (!list_empty(&tg->execs))
		accel_graph_exec_destroy(container_of(tg->execs.next, struct accel_graph_exec,
						      node));
	while (!list_empty(&tg->graphs)) {
		struct accel_graph *g = container_of(tg->graphs.next, struct accel_graph, node);

		accel_graph_destroy(g);
	}
	if (tg->capture) {
		struct accel_graph *g = tg->capture;

		tg->capture = NULL;
		g->destroyed = true;
		tg_graph_put(g);
	}
	if (tg->worker_running) {
		pthread_mutex_lock(&tg->host_lock);
		tg->worker_stop = true;
		pthread_cond_broadcast(&tg->host_cond);
		pthread_mutex_unlock(&tg->host_lock);
		pthread_join(tg->worker, NULL);
	}
	while (!list_empty(&tg->host_pending)) {
		struct tg_host *h = container_of(tg->host_pending.next, struct tg_host, node);

		list_del(&h->node);
		free(h->deps);
		free(h);
	}
	for (i = 0; i < ACCEL_TG_MAX_MAPS; i++)
		if (tg->maps[i].ptr)
			accel_tg_unmap(tg, tg->maps[i].ptr);
	for (i = 0; tg->bufs && i < tg->bcap; i++)
		if (tg->bufs[i].buf)
			buf_drop(tg, &tg->bufs[i]);
	for (i = 0; tg->lines && i < tg->nlines; i++)
		line_fini(&tg->lines[i]);
	for (i = 0; i < ACCEL_TG_MAX_DEVICES; i++) {
		gheap_destroy(tg->heaps[i].h);
		accel_buffer_destroy(tg->heaps[i].buf);
	}
	tm_destroy(tg->tm);
	pthread_mutex_destroy(&tg->host_lock);
	pthread_cond_destroy(&tg->host_cond);
	free(tg->bufs);
	free(tg->lines);
	free(tg->need);
	free(tg->touched);
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

/* --- waiting --- */

/*
 * Wait until task @id has completed, running ready host tasks meanwhile
 * (unless the worker does): a device task may wait for a host task that
 * only this thread would run. @what names it in the timeout message.
 */
int tg_wait_id(struct accel_tg *tg, uint64_t id, int64_t deadline, const char *what)
{
	struct tg_line *l = &tg->lines[TG_ID_LINE(id)];
	struct accel_event ev = { .signal = l->sig, .value = tg_value(tg, id) };
	int64_t now, slice;
	int ret;

	for (;;) {
		if (accel_event_done(&ev))
			return 0;
		if (!tg->worker_running)
			tg_run_host_tasks(tg, false);
		if (accel_event_done(&ev))
			return 0;
		now = acc_now_ns();
		if (now >= deadline) {
			acc_err("task graph: timed out waiting for %s (line %u value %llu, at %llu)",
				what, TG_ID_LINE(id), (unsigned long long)ev.value,
				(unsigned long long)accel_signal_read(l->sig));
			return -ETIMEDOUT;
		}
		/* host work pending that this thread runs: wake up to run it */
		slice = deadline - now;
		if (!tg->worker_running && !list_empty(&tg->host_pending) && slice > 1000000)
			slice = 1000000;
		ret = accel_event_wait(&ev, slice);
		if (ret && ret != -ETIMEDOUT)
			return ret;
	}
}

ACCEL_API int accel_tg_task_done(struct accel_tg *tg, uint64_t id)
{
	if (!tg || TG_ID_LINE(id) >= tg->nlines || !TG_ID_REL(id) ||
	    !acc_ge(tg->lines[TG_ID_LINE(id)].next - 1, tg_value(tg, id)))
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
	return tg_wait_id(tg, id, acc_deadline(timeout_ns), "a task");
}

ACCEL_API int accel_tg_sync(struct accel_tg *tg, int64_t timeout_ns)
{
	int64_t deadline = acc_deadline(timeout_ns);
	uint32_t i;
	int ret;

	if (!tg)
		return -EINVAL;
	for (i = 0; i <= tg->host_line; i++) {
		struct tg_line *l = &tg->lines[i];

		if (l->next == l->base + 1)
			continue;
		ret = tg_wait_id(tg, TG_ID(i, l->next - 1 - l->base), deadline,
				 i == tg->host_line ? "host tasks" : "a queue");
		if (ret)
			return ret;
	}
	/* host tasks may have made device work wait: look again */
	for (i = 0; i < tg->nq; i++) {
		struct tg_line *l = &tg->lines[i];

		if (l->next != l->base + 1) {
			ret = tg_wait_id(tg, TG_ID(i, l->next - 1 - l->base), deadline, "a queue");
			if (ret)
				return ret;
		}
	}
	for (i = 0; i < tg->nq; i++) {
		ret = accel_queue_status(tg->lines[i].q, NULL, 0);
		if (ret)
			return ret;
	}
	tg_retire_holds(tg);
	tm_reclaim(tg->tm);
	bufs_sweep(tg);
	return 0;
}

/* --- the output heap --- */

static int heap_get(struct accel_tg *tg, uint32_t devi, struct tg_heap **out)
{
	struct tg_heap *hp = &tg->heaps[devi];
	int ret;

	if (!hp->h) {
		ret = accel_buffer_create(tg->devs[devi], tg->p.heap_size, 0, &hp->buf);
		if (ret)
			return ret;
		ret = gheap_create(tg->p.heap_size, &hp->h);
		if (ret) {
			accel_buffer_destroy(hp->buf);
			hp->buf = NULL;
			return ret;
		}
	}
	*out = hp;
	return 0;
}

int tg_heap_of(const struct accel_tg *tg, const struct accel_buffer *buf)
{
	unsigned int d;

	for (d = 0; d < tg->ndevs; d++)
		if (tg->heaps[d].buf && buf == tg->heaps[d].buf)
			return (int)d;
	return -1;
}

/* The heap block @t lies in: 0, or -ENOENT (not a heap tensor). */
int tg_heap_block(struct accel_tg *tg, const struct accel_tensor *t, uint32_t *devi,
		  uint64_t *block)
{
	int d = tg_heap_of(tg, t->buf);
	uint64_t start;

	if (d < 0)
		return -ENOENT;
	*devi = (uint32_t)d;
	return gheap_find(tg->heaps[d].h, t->offset, block, &start);
}

/* Heap blocks of completed tasks back to the heap (each line in order). */
void tg_retire_holds(struct accel_tg *tg)
{
	uint32_t i;

	for (i = 0; i <= tg->host_line; i++) {
		struct tg_line *l = &tg->lines[i];
		uint64_t v;

		if (l->hhead == l->htail)
			continue;
		v = accel_signal_read(l->sig);
		while (l->hhead != l->htail && acc_ge(v, l->holds[l->hhead].value)) {
			struct tg_hold *h = &l->holds[l->hhead];

			gheap_complete(tg->heaps[h->devi].h, h->block);
			l->hhead = (l->hhead + 1) % l->hcap;
		}
	}
	for (i = 0; i < tg->ndevs; i++)
		if (tg->heaps[i].h)
			gheap_reclaim(tg->heaps[i].h);
}

/* room for @n more holds on @l (so that hold_push() cannot fail) */
static int holds_room(struct tg_line *l, size_t n)
{
	size_t used = l->hcap ? (l->htail + l->hcap - l->hhead) % l->hcap : 0, ncap, k = 0, i;
	struct tg_hold *nh;

	if (l->hcap && used + n < l->hcap)
		return 0;
	ncap = l->hcap ? l->hcap : 64;
	while (used + n >= ncap)
		ncap *= 2;
	nh = malloc(ncap * sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	for (i = l->hhead; l->hcap && i != l->htail; i = (i + 1) % l->hcap)
		nh[k++] = l->holds[i];
	free(l->holds);
	l->holds = nh;
	l->hcap = ncap;
	l->hhead = 0;
	l->htail = k;
	return 0;
}

static void hold_push(struct tg_line *l, uint64_t value, uint64_t block, uint32_t devi)
{
	l->holds[l->htail] = (struct tg_hold){ .value = value, .block = block, .devi = devi };
	l->htail = (l->htail + 1) % l->hcap;
}

/* the oldest in-flight heap hold on device @devi: wait for it */
static int heap_wait_progress(struct accel_tg *tg, uint32_t devi, int64_t deadline)
{
	uint32_t i, best = UINT32_MAX;
	uint64_t v = 0;

	for (i = 0; i <= tg->host_line; i++) {
		struct tg_line *l = &tg->lines[i];
		size_t k;

		for (k = l->hhead; k != l->htail; k = (k + 1) % l->hcap)
			if (l->holds[k].devi == devi) {
				if (best == UINT32_MAX) {
					best = i;
					v = l->holds[k].value;
				}
				break;
			}
		if (best != UINT32_MAX)
			break;
	}
	if (best == UINT32_MAX)
		return -EDEADLK;
	return tg_wait_id(tg, TG_ID(best, v - tg->lines[best].base), deadline,
			  "heap space (a task holding a heap block)");
}

static uint64_t t_bytes(const struct accel_tensor *t)
{
	uint64_t n = accel_dtype_size(t->dtype);
	uint32_t i;

	for (i = 0; i < t->ndims; i++)
		n *= t->shape[i];
	return n;
}

/* give every OUTPUT_NEW argument a block of device @devi's heap */
int tg_alloc_outputs(struct accel_tg *tg, struct accel_task *task, uint32_t devi)
{
	int64_t deadline = 0;
	struct gheap_report rep;
	struct tg_heap *hp;
	uint64_t block, off, size, shape[ACCEL_TENSOR_MAX_DIMS];
	uint32_t i, nd;
	bool stalled = false;
	int ret;

	for (i = 0; i < task->nargs; i++) {
		struct accel_tensor *t = task->args[i].t;

		if (task->args[i].access != ACCEL_OUTPUT_NEW)
			continue;
		ret = heap_get(tg, devi, &hp);
		if (ret)
			return ret;
		size = t_bytes(t);
		if (!size)
			size = 1;
		for (;;) {
			tg_retire_holds(tg);
			ret = gheap_alloc(hp->h, size, TG_HEAP_ALIGN, i, &block, &off, &rep);
			if (ret != -EAGAIN)
				break;
			if (!stalled) {
				stalled = true;
				tg->st.stall_heap++;
				deadline = acc_deadline(tg->timeout_ns);
			}
			ret = heap_wait_progress(tg, devi, deadline);
			if (ret)
				break;
		}
		if (ret == -EDEADLK) {
			acc_err("%s: argument %u: %llu bytes of output heap (%s) can never come back: block at offset %llu (%llu bytes) is %s%s%llu",
				tname(task), i, (unsigned long long)size, tg->devs[devi]->path,
				(unsigned long long)rep.offset, (unsigned long long)rep.size,
				rep.reason == GHEAP_HELD_BY_PROGRAM ? "held by the program (not released)" :
				rep.reason == GHEAP_HELD_BY_GRAPH ? "used by a captured graph" :
				"retained by a task not submitted",
				rep.reason == GHEAP_HELD_BY_UNSUBMITTED ? ", task " : "",
				(unsigned long long)rep.task);
			return ret;
		}
		if (ret) {
			if (ret == -E2BIG)
				acc_err("%s: argument %u: %llu bytes exceed the output heap (%llu)",
					tname(task), i, (unsigned long long)size,
					(unsigned long long)tg->p.heap_size);
			return ret;
		}
		nd = t->ndims;
		memcpy(shape, t->shape, sizeof(shape));
		ret = accel_tensor_init(t, hp->buf, off, t->dtype, nd, shape);
		if (ret) {
			gheap_release(hp->h, block);
			return ret;
		}
		tg->st.heap_allocs++;
	}
	return 0;
}

ACCEL_API int accel_tg_release(struct accel_tg *tg, const struct accel_tensor *t)
{
	uint64_t block;
	uint32_t devi;
	int ret;

	if (!tg || !t)
		return -EINVAL;
	ret = tg_heap_block(tg, t, &devi, &block);
	if (ret)
		return ret;
	ret = gheap_release(tg->heaps[devi].h, block);
	gheap_reclaim(tg->heaps[devi].h);
	if (ret == -EINVAL)
		acc_err("accel_tg_release: heap tensor at offset %llu was already released",
			(unsigned long long)t->offset);
	return ret;
}

/* --- dependencies --- */

void tg_deps_begin(struct accel_tg *tg, uint32_t line, uint64_t id)
{
	uint32_t i;

	for (i = 0; i < tg->ntouched; i++)
		tg->need[tg->touched[i]] = 0;
	tg->ntouched = 0;
	tg->cur_line = line;
	tg->cur_id = id;
}

static void dep_cb(void *arg, uint64_t task, enum tm_dep_kind kind)
{
	struct accel_tg *tg = arg;
	uint32_t line = TG_ID_LINE(task);
	uint64_t rel = TG_ID_REL(task);

	tg->st.deps[kind]++;
	if (line == tg->cur_line) {
		tg->st.deps_same_queue++;
		return;
	}
	if (!tg->need[line])
		tg->touched[tg->ntouched++] = line;
	if (rel > tg->need[line])
		tg->need[line] = rel;
}

int tg_deps_arg(struct accel_tg *tg, struct tensormap *tm, const struct accel_tensor *t,
		uint32_t access)
{
	int ret = tm_deps(tm, t, (enum accel_access)access, tg->cur_id, dep_cb, tg);

	return ret < 0 ? ret : 0;
}

/* --- checking a task --- */

static int check_view(const struct accel_task *task, uint32_t i, const struct accel_tensor *t,
		      uint32_t access, struct tm_layout *lay)
{
	struct tm_layout tmp, *l = lay ? lay : &tmp;
	int ret;

	if (access > ACCEL_OUTPUT_NEW) {
		acc_err("%s: argument %u: unknown access %u", tname(task), i, access);
		return -EINVAL;
	}
	if (access == ACCEL_OUTPUT_NEW)
		return 0;
	if (!t->buf) {
		acc_err("%s: argument %u: no buffer", tname(task), i);
		return -EINVAL;
	}
	ret = tm_layout_make(t, l);
	if (ret) {
		acc_err("%s: argument %u: bad view (dtype, dimensions or strides)", tname(task), i);
		return ret;
	}
	if (t->offset % accel_dtype_size(t->dtype)) {
		acc_err("%s: argument %u: offset %llu is not a multiple of the element size",
			tname(task), i, (unsigned long long)t->offset);
		return -EINVAL;
	}
	if (!l->empty && (uint64_t)l->hi > t->buf->size) {
		acc_err("%s: argument %u: view ends at byte %lld, past its buffer (0x%llx, %llu bytes)",
			tname(task), i, (long long)l->hi, (unsigned long long)t->buf->va,
			(unsigned long long)t->buf->size);
		return -EINVAL;
	}
	return 0;
}

static uint64_t task_u0(const struct accel_task *task)
{
	switch (task->op) {
	case ACCEL_TASK_FILL:
		return task->fill.pattern;
	case ACCEL_TASK_REDUCE:
		return task->reduce.op;
	case ACCEL_TASK_MATMUL:
		return task->matmul.accumulate;
	case ACCEL_TASK_DELAY:
		return task->delay.ns;
	default:
		return 0;
	}
}

/*
 * Everything about a task that can be checked before memory is allocated;
 * picks its line. OUTPUT_NEW views are checked for dtype and shape only.
 */
int tg_check_task(struct accel_tg *tg, const struct accel_task *task, uint32_t *line,
		  struct tm_layout *lay)
{
	const struct accel_tensor *tv[ACCEL_TASK_MAX_ARGS];
	uint32_t acc[ACCEL_TASK_MAX_ARGS];
	struct accel_tensor tmp[ACCEL_TASK_MAX_ARGS];
	uint32_t i, devi;
	int ret, d;

	if (task->nargs > ACCEL_TASK_MAX_ARGS) {
		acc_err("%s: %u arguments, at most %u", tname(task), task->nargs,
			ACCEL_TASK_MAX_ARGS);
		return -EINVAL;
	}
	if (task->op > ACCEL_TASK_HOST) {
		acc_err("%s: unknown task op %u", tname(task), task->op);
		return -EINVAL;
	}
	if (task->op == ACCEL_TASK_HOST && !task->host.fn) {
		acc_err("%s: host task without a function", tname(task));
		return -EINVAL;
	}
	for (i = 0; i < task->nargs; i++) {
		if (!task->args[i].t) {
			acc_err("%s: argument %u: no tensor", tname(task), i);
			return -EINVAL;
		}
		ret = check_view(task, i, task->args[i].t, task->args[i].access,
				 lay ? &lay[i] : NULL);
		if (ret)
			return ret;
		acc[i] = task->args[i].access;
		tmp[i] = *task->args[i].t;
		if (acc[i] == ACCEL_OUTPUT_NEW) {
			/* the layout it will get: contiguous, in no buffer yet */
			ret = accel_tensor_init(&tmp[i], NULL, 0, tmp[i].dtype, tmp[i].ndims,
						tmp[i].shape);
			if (ret) {
				acc_err("%s: argument %u: bad OUTPUT_NEW dtype or shape", tname(task), i);
				return ret;
			}
		} else if (tg_devi_of(tg, tmp[i].buf->dev) < 0) {
			acc_err("%s: argument %u: buffer 0x%llx is on %s, not a device of the task graph",
				tname(task), i, (unsigned long long)tmp[i].buf->va,
				tmp[i].buf->dev->path);
			return -ENOENT;
		}
		tv[i] = &tmp[i];
	}
	ret = tg_validate_op(task->op, task->nargs, tv, acc, task_u0(task), task->name);
	if (ret)
		return ret;
	if (task->op == ACCEL_TASK_HOST) {
		*line = tg->host_line;
		return 0;
	}
	if (task->device == ACCEL_TG_AUTO) {
		devi = 0;
		for (i = 0; i < task->nargs; i++) {
			if (acc[i] == ACCEL_OUTPUT_NEW)
				continue;
			d = tg_devi_of(tg, tmp[i].buf->dev);
			if (d >= 0) {
				devi = (uint32_t)d;
				break;
			}
		}
	} else if (task->device >= tg->ndevs) {
		acc_err("%s: device %u, the task graph has %u", tname(task), task->device,
			tg->ndevs);
		return -EINVAL;
	} else {
		devi = task->device;
	}
	if (task->queue == ACCEL_TG_AUTO) {
		*line = tg->qbase[devi] + tg->rr[devi];
		tg->rr[devi] = (tg->rr[devi] + 1) % tg->qcount[devi];
	} else if (task->queue >= tg->qcount[devi]) {
		acc_err("%s: queue %u, device %u has %u", tname(task), task->queue, devi,
			tg->qcount[devi]);
		return -EINVAL;
	} else {
		*line = tg->qbase[devi] + task->queue;
	}
	return 0;
}

/* --- eager submission --- */

static int eager_addr(struct tg_lower *lw, struct accel_buffer *buf, uint64_t off, uint64_t *va)
{
	int ret = tg_buf_va(lw->tg, buf, lw->devi, va);

	*va += off;
	return ret;
}

static int eager_desc(struct tg_lower *lw, const struct drm_vaccel_matmul *m, uint64_t *va)
{
	struct tg_line *l = lw->priv;
	uint64_t value = l->next, slot = value % TG_DESC_SLOTS;
	void *host;
	int ret;

	if (!l->desc) {
		ret = accel_buffer_create(lw->tg->devs[lw->devi], TG_DESC_SLOTS * 64,
					  ACCEL_BUFFER_HOST, &l->desc);
		if (ret)
			return ret;
	}
	/* the task that used this slot last must be done with it */
	if (value - l->base > TG_DESC_SLOTS) {
		ret = tg_wait_id(lw->tg, TG_ID(l - lw->tg->lines, value - TG_DESC_SLOTS - l->base),
				 acc_deadline(lw->tg->timeout_ns), "a MATMUL descriptor slot");
		if (ret)
			return ret;
	}
	host = (char *)accel_buffer_host(l->desc) + slot * 64;
	memcpy(host, m, sizeof(*m));
	*va = l->desc->va + slot * 64;
	return 0;
}

/* wait for @n free slots on a queue line */
int tg_reserve(struct accel_tg *tg, struct tg_line *l, unsigned int n)
{
	int ret = accel_queue_reserve(l->q, n, 0);

	if (ret != -EAGAIN)
		return ret;
	tg->st.stall_ring++;
	ret = accel_queue_reserve(l->q, n, tg->timeout_ns);
	if (ret == -ETIMEDOUT)
		acc_err("task graph: queue %u of %s stayed full for the timeout", l->qi,
			tg->devs[l->devi]->path);
	return ret;
}

/*
 * Resolve the WAITs collected since tg_deps_begin() for queue line @l: a
 * producer already done needs none; the others get their signal's address
 * on @l's device (importing its page once). Returns how many WAITs
 * tg_emit_waits() will write, or a negative errno; nothing is written.
 */
int tg_prepare_waits(struct accel_tg *tg, struct tg_line *l)
{
	uint32_t i, n = 0;
	uint64_t va;
	int ret;

	for (i = 0; i < tg->ntouched; i++) {
		uint32_t src = tg->touched[i];
		struct tg_line *s = &tg->lines[src];

		if (!tg->need[src])
			continue;
		if (acc_ge(accel_signal_read(s->sig), s->base + tg->need[src])) {
			tg->need[src] = 0;	/* done already: no packet */
			continue;
		}
		ret = tg_line_va(tg, src, l->devi, &va);
		if (ret)
			return ret;
		n++;
	}
	return (int)n;
}

/* Write the WAITs tg_prepare_waits() counted; the ring slots are reserved. */
void tg_emit_waits(struct accel_tg *tg, struct tg_line *l)
{
	uint32_t i;

	for (i = 0; i < tg->ntouched; i++) {
		uint32_t src = tg->touched[i];
		struct tg_line *s = &tg->lines[src];
		struct drm_vaccel_packet *p;
		uint64_t v = s->base + tg->need[src];

		if (!tg->need[src])
			continue;
		acc_trace("task graph: queue line %u waits for line %u (%s) value %llu",
			  (unsigned int)(l - tg->lines), src,
			  s->kind == TG_LINE_QUEUE ? "queue" : s->kind == TG_LINE_HOST ? "host" : "map",
			  (unsigned long long)v);
		p = accel_queue_get_packet(l->q);
		accel_prep_wait(p, s->va_on[l->devi], DRM_VACCEL_WAIT_GE, v, 0,
				tg->timeout_ns > 0 ? (uint64_t)tg->timeout_ns : 0);
		tg->st.waits++;
	}
}

static int submit_host(struct accel_tg *tg, struct accel_task *task, uint64_t value)
{
	struct tg_host *h = calloc(1, sizeof(*h));
	uint32_t i;

	if (!h)
		return -ENOMEM;
	h->deps = calloc(tg->ntouched ? tg->ntouched : 1, sizeof(*h->deps));
	if (!h->deps) {
		free(h);
		return -ENOMEM;
	}
	for (i = 0; i < tg->ntouched; i++)
		h->deps[h->ndeps++] = TG_ID(tg->touched[i], tg->need[tg->touched[i]]);
	h->value = value;
	h->fn = task->host.fn;
	h->arg = task->host.arg;
	snprintf(h->name, sizeof(h->name), "%s", tname(task));
	pthread_mutex_lock(&tg->host_lock);
	list_add_tail(&tg->host_pending, &h->node);
	pthread_cond_broadcast(&tg->host_cond);
	pthread_mutex_unlock(&tg->host_lock);
	return 0;
}

ACCEL_API int accel_tg_submit(struct accel_tg *tg, struct accel_task *task, uint64_t *id_out)
{
	struct drm_vaccel_packet pk[TG_MAX_TASK_PACKETS], *p;
	struct tm_layout lay[ACCEL_TASK_MAX_ARGS];
	struct accel_tensor *tv[ACCEL_TASK_MAX_ARGS];
	struct tg_lower lw;
	struct tg_line *l;
	uint64_t id, value, block[ACCEL_TASK_MAX_ARGS], sva;
	uint32_t line, i, bdev[ACCEL_TASK_MAX_ARGS], nblk = 0;
	bool host, trace, lost = false;
	int ret, n = 0, nw;

	if (!tg || !task)
		return -EINVAL;
	ret = tg_check_task(tg, task, &line, lay);
	if (ret)
		return ret;
	if (tg->capture) {
		ret = tg_capture_task(tg, task, line);
		if (!ret && id_out)
			*id_out = 0;
		return ret;
	}
	l = &tg->lines[line];
	host = l->kind == TG_LINE_HOST;
	for (i = 0; i < tg->nq; i++)
		if (tg->lines[i].q && accel_queue_status(tg->lines[i].q, NULL, 0)) {
			acc_err("%s: queue %u of %s has faulted", tname(task), tg->lines[i].qi,
				tg->devs[tg->lines[i].devi]->path);
			return -EIO;
		}
	ret = tg_alloc_outputs(tg, task, host ? 0 : l->devi);
	if (ret)
		goto unalloc;
	value = l->next;
	id = TG_ID(line, value - l->base);
	for (i = 0; i < task->nargs; i++) {
		struct accel_tensor *t = task->args[i].t;

		tv[i] = t;
		if (task->args[i].access == ACCEL_OUTPUT_NEW) {
			ret = tm_layout_make(t, &lay[i]);
			if (ret)
				goto unalloc;
		}
		ret = tg_buf_index(tg, t->buf);
		if (ret)
			goto unalloc;
		/* heap tensors: the task retains the block */
		if (!tg_heap_block(tg, t, &bdev[nblk], &block[nblk])) {
			ret = gheap_retain(tg->heaps[bdev[nblk]].h, block[nblk], id);
			if (ret) {
				acc_err("%s: argument %u: its heap tensor was released", tname(task), i);
				goto unretain;
			}
			nblk++;
		}
	}
	ret = holds_room(l, nblk);
	if (ret)
		goto unretain;
	tg_deps_begin(tg, line, id);
	for (i = 0; i < task->nargs; i++) {
		ret = tm_deps_layout(tg->tm, tv[i]->buf, &lay[i],
				     (enum accel_access)task->args[i].access, id, dep_cb, tg);
		if (ret < 0)
			goto unretain;
	}
	if (host) {
		ret = submit_host(tg, task, value);
		if (ret)
			goto unretain;
	} else {
		lw = (struct tg_lower){ .tg = tg, .devi = l->devi, .addr = eager_addr,
					.desc = eager_desc, .priv = l };
		n = tg_lower_task(&lw, task->op, tv, task_u0(task), pk, TG_MAX_TASK_PACKETS,
				  task->name);
		if (n < 0) {
			ret = n;
			goto unretain;
		}
		trace = tg->p.flags & ACCEL_TG_TRACE;
		nw = tg_prepare_waits(tg, l);
		ret = tg_line_va(tg, line, l->devi, &sva);
		if (nw < 0 || ret) {
			ret = nw < 0 ? nw : ret;
			goto unretain;
		}
		ret = tg_reserve(tg, l, (unsigned int)(nw + n) + (trace ? 2 : 0));
		if (ret == -EINVAL) {
			acc_err("%s: %u packets do not fit in a ring", tname(task), n);
			ret = -E2BIG;
		}
		if (ret)
			goto unretain;
		tg_emit_waits(tg, l);
		if (trace) {
			p = accel_queue_get_packet(l->q);
			tg_trace_stamp(l, value, 0, p);
		}
		accel_prep_completion(&pk[n - 1], sva, DRM_VACCEL_SIGNAL_MAX, value);
		accel_prep_irq(&pk[n - 1]);
		for (i = 0; i < (uint32_t)n; i++) {
			p = accel_queue_get_packet(l->q);
			*p = pk[i];
		}
		if (trace) {
			p = accel_queue_get_packet(l->q);
			tg_trace_stamp(l, value, 1, p);
			tg_trace_note(l, value, id, tname(task));
		}
	}
	for (i = 0; i < task->nargs; i++)
		if (tm_insert_layout(tg->tm, tv[i]->buf, &lay[i],
				     (enum accel_access)task->args[i].access, id))
			lost = true;
	for (i = 0; i < nblk; i++) {
		gheap_submit(tg->heaps[bdev[i]].h, block[i]);
		hold_push(l, value, block[i], bdev[i]);
	}
	l->next = value + 1;
	if (!host) {
		ret = accel_queue_submit(l->q);
		if (ret < 0)
			return ret;
	}
	tg->st.tasks++;
	if (lost) {
		/*
		 * Out of memory for its TensorMap entry, with the packets in the
		 * ring: a completed task needs no entry, so wait for it.
		 */
		acc_warn("%s: no memory for its TensorMap entry: waiting for it", tname(task));
		ret = tg_wait_id(tg, id, acc_deadline(tg->timeout_ns), "a task without an entry");
		if (ret)
			return ret;
	}
	if (id_out)
		*id_out = id;
	if (++tg->submits_since_sweep >= TG_SWEEP_EVERY) {
		tg->submits_since_sweep = 0;
		tg_retire_holds(tg);
		bufs_sweep(tg);
	}
	if (!tg->worker_running && !list_empty(&tg->host_pending))
		tg_run_host_tasks(tg, false);
	return 0;
unretain:
	while (nblk--)
		gheap_unretain(tg->heaps[bdev[nblk]].h, block[nblk]);
unalloc:
	for (i = 0; i < task->nargs; i++) {
		uint64_t b;
		uint32_t d;

		if (task->args[i].access == ACCEL_OUTPUT_NEW && task->args[i].t->buf &&
		    !tg_heap_block(tg, task->args[i].t, &d, &b)) {
			gheap_release(tg->heaps[d].h, b);
			task->args[i].t->buf = NULL;
		}
	}
	return ret;
}

/* --- host tasks --- */

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
	int64_t t0 = acc_now_ns(), t1;
	int ret;

	h->fn(h->arg);
	t1 = acc_now_ns();
	if (tg->p.flags & ACCEL_TG_TRACE && l->trace) {
		struct tg_trace_rec *r = &l->trace[h->value % TG_TRACE_SLOTS];

		/* the worker writes, accel_tg_trace_write() reads */
		pthread_mutex_lock(&tg->host_lock);
		tg_trace_note(l, h->value, TG_ID(tg->host_line, h->value - l->base), h->name);
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
 * Run the host tasks that are ready, in order (the host line completes in
 * order). @block: wait for the first one's dependencies (the worker).
 */
void tg_run_host_tasks(struct accel_tg *tg, bool block)
{
	struct tg_host *h;

	for (;;) {
		pthread_mutex_lock(&tg->host_lock);
		while (block && list_empty(&tg->host_pending) && !tg->worker_stop)
			pthread_cond_wait(&tg->host_cond, &tg->host_lock);
		if (list_empty(&tg->host_pending) || tg->worker_stop) {
			pthread_mutex_unlock(&tg->host_lock);
			return;
		}
		h = container_of(tg->host_pending.next, struct tg_host, node);
		pthread_mutex_unlock(&tg->host_lock);
		if (!host_ready(tg, h)) {
			uint32_t i;

			if (!block)
				return;
			for (i = 0; i < h->ndeps; i++) {
				struct tg_line *dl = &tg->lines[TG_ID_LINE(h->deps[i])];
				struct accel_event ev = { .signal = dl->sig,
							  .value = tg_value(tg, h->deps[i]) };

				if (!accel_event_done(&ev))
					accel_event_wait(&ev, 10000000);
			}
			continue;
		}
		host_run(tg, h);
		pthread_mutex_lock(&tg->host_lock);
		list_del(&h->node);
		pthread_mutex_unlock(&tg->host_lock);
		free(h->deps);
		free(h);
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
	if (!tg)
		return -EINVAL;
	if (tg->worker_running)
		return -EBUSY;
	tg->worker_stop = false;
	tg->worker_running = true;
	if (pthread_create(&tg->worker, NULL, worker_main, tg)) {
		tg->worker_running = false;
		return -EAGAIN;
	}
	return 0;
}

/* --- host maps --- */

ACCEL_API int accel_tg_map(struct accel_tg *tg, const struct accel_tensor *t, uint32_t flags,
			   int64_t timeout_ns, void **ptr)
{
	int64_t deadline = acc_deadline(timeout_ns);
	struct accel_task dummy = { .name = "accel_tg_map" };
	uint32_t acc, slot, i, stalled = 0;
	struct tg_line *l;
	uint64_t id;
	void *host;
	int ret;

	if (!tg || !t || !ptr || !flags || (flags & ~(ACCEL_MAP_READ | ACCEL_MAP_WRITE)))
		return -EINVAL;
	*ptr = NULL;
	ret = check_view(&dummy, 0, t, ACCEL_INPUT, NULL);
	if (ret)
		return ret;
	if (tg_devi_of(tg, t->buf->dev) < 0)
		return -ENOENT;
	for (slot = 0; slot < ACCEL_TG_MAX_MAPS && tg->maps[slot].ptr; slot++)
		;
	if (slot == ACCEL_TG_MAX_MAPS)
		return -EBUSY;
	ret = tg_buf_index(tg, t->buf);
	if (ret)
		return ret;
	ret = accel_buffer_map(t->buf, &host);
	if (ret)
		return ret;
	acc = flags == ACCEL_MAP_READ ? ACCEL_INPUT :
	      flags == ACCEL_MAP_WRITE ? ACCEL_OUTPUT : ACCEL_INOUT;
	l = &tg->lines[tg->map_line + slot];
	id = TG_ID(tg->map_line + slot, l->next - l->base);
	tg_deps_begin(tg, tg->map_line + slot, id);
	ret = tg_deps_arg(tg, tg->tm, t, acc);
	if (ret)
		return ret;
	for (i = 0; i < tg->ntouched; i++) {
		uint64_t dep = TG_ID(tg->touched[i], tg->need[tg->touched[i]]);

		if (tg_id_done(tg, dep))
			continue;
		if (!stalled++)
			tg->st.stall_map++;
		ret = tg_wait_id(tg, dep, deadline, "the tasks a host map waits for");
		if (ret)
			return ret;
	}
	ret = tm_insert(tg->tm, t, (enum accel_access)acc, id);
	if (ret)
		return ret;
	acc_trace("task graph: map slot %u (line %u) value %llu: %p", slot, tg->map_line + slot,
		  (unsigned long long)l->next, (void *)((char *)host + t->offset));
	tg->maps[slot].value = l->next++;
	tg->maps[slot].ptr = (char *)host + t->offset;
	*ptr = tg->maps[slot].ptr;
	return 0;
}

ACCEL_API int accel_tg_unmap(struct accel_tg *tg, void *ptr)
{
	uint32_t slot;

	if (!tg || !ptr)
		return -EINVAL;
	for (slot = 0; slot < ACCEL_TG_MAX_MAPS; slot++)
		if (tg->maps[slot].ptr == ptr)
			break;
	if (slot == ACCEL_TG_MAX_MAPS)
		return -ENOENT;
	tg->maps[slot].ptr = NULL;
	/* the host's accesses happen before whatever waits for this value */
	atomic_thread_fence(memory_order_seq_cst);
	return accel_signal_write(tg->lines[tg->map_line + slot].sig, DRM_VACCEL_SIGNAL_MAX,
				  tg->maps[slot].value);
}

/* --- statistics --- */

ACCEL_API void accel_tg_get_stats(const struct accel_tg *tg, struct accel_tg_stats *st)
{
	struct tm_stats ts;
	struct gheap_stats hs;
	unsigned int d;

	memset(st, 0, sizeof(*st));
	if (!tg)
		return;
	*st = tg->st;
	st->host_tasks = atomic_load(&((struct accel_tg *)tg)->host_tasks_run);
	tm_get_stats(tg->tm, &ts);
	st->fallbacks = ts.fallbacks;
	st->tm_live = ts.live_entries;
	st->tm_max_live = ts.max_live_entries;
	for (d = 0; d < tg->ndevs; d++) {
		if (!tg->heaps[d].h)
			continue;
		gheap_get_stats(tg->heaps[d].h, &hs);
		st->heap_used += hs.used;
		if (hs.high_water > st->heap_high_water)
			st->heap_high_water = hs.high_water;
		st->heap_reclaimed += hs.reclaimed;
	}
}
