// SPDX-License-Identifier: MIT
/*
 * Signals and events: the slot allocator over signal pages (one signal
 * per 64-byte line of a DRM_VACCEL_BO_SIGNAL page, pages added on demand,
 * slots reused, values never reset), host reads and writes, and host
 * waits: spin for ACCEL_SPIN_NS, then DRM_IOCTL_VACCEL_WAIT_SIGNALS with an
 * absolute CLOCK_MONOTONIC deadline. Signals of other devices are imported
 * (dma-buf) once per page and cached, for WAIT packets and for waits on
 * events of several devices.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

static _Atomic uint64_t page_uid;

/* A new signal page; dev->lock held. */
static int add_page(struct accel_device *dev)
{
	struct acc_sigpage *pg, **pages;
	struct accel_buffer *b;
	int ret, idx;

	pg = calloc(1, sizeof(*pg));
	if (!pg)
		return -ENOMEM;
	pthread_mutex_unlock(&dev->lock);
	ret = acc_buffer_new(dev, ACC_PAGE, DRM_VACCEL_BO_SIGNAL,
			     DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE, PROT_READ, true, &b);
	pthread_mutex_lock(&dev->lock);
	if (ret) {
		acc_err("%s: cannot add signal page %u: %s", dev->path, dev->npages,
			strerror(-ret));
		free(pg);
		return ret;
	}
	/* the page count is the slot allocator's (another thread may add one) */
	pages = realloc(dev->pages, (dev->slots.npages + 1) * sizeof(*pages));
	idx = pages ? slots_add_page(&dev->slots) : -ENOMEM;
	if (pages)
		dev->pages = pages;
	if (idx < 0) {
		pthread_mutex_unlock(&dev->lock);
		acc_buffer_free(b);
		pthread_mutex_lock(&dev->lock);
		free(pg);
		return idx;
	}
	pg->buf = b;
	pg->uid = atomic_fetch_add(&page_uid, 1) + 1;
	pg->host = b->host;
	dev->pages[idx] = pg;
	dev->npages = (unsigned int)idx + 1;
	acc_info("%s: signal page %d at 0x%llx", dev->path, idx, (unsigned long long)b->va);
	return 0;
}

uint64_t acc_signal_load(const struct accel_signal *sig, int *err)
{
	const struct acc_tp *tp = &sig->dev->tp;

	if (tp_is_gone(tp)) {
		*err = -ENODEV;
		return 0;
	}
	*err = 0;
	return __atomic_load_n(sig->word, __ATOMIC_ACQUIRE);
}

int acc_signal_new(struct accel_device *dev, bool internal, struct accel_signal **out)
{
	struct accel_signal *s = calloc(1, sizeof(*s));
	unsigned int page, slot;
	int ret, err;

	if (!s)
		return -ENOMEM;
	pthread_mutex_lock(&dev->lock);
	while ((ret = slots_alloc(&dev->slots, &page, &slot)) == -ENOSPC) {
		ret = add_page(dev);
		if (ret)
			break;
	}
	if (ret) {
		pthread_mutex_unlock(&dev->lock);
		free(s);
		return ret;
	}
	s->dev = dev;
	s->page = dev->pages[page];
	s->pageno = page;
	s->slot = slot;
	s->offset = (uint64_t)slot * ACC_SIGNAL_STRIDE;
	s->va = s->page->buf->va + s->offset;
	s->word = (const volatile uint64_t *)((const volatile char *)s->page->host + s->offset);
	s->internal = internal;
	list_init(&s->node);
	if (!internal)
		list_add_tail(&dev->signals, &s->node);
	pthread_mutex_unlock(&dev->lock);
	/* a reused slot counts on from its value */
	atomic_store(&s->next, acc_signal_load(s, &err));
	if (err) {
		acc_signal_free(s);
		return err;
	}
	*out = s;
	return 0;
}

void acc_signal_free(struct accel_signal *s)
{
	struct accel_device *dev = s->dev;

	pthread_mutex_lock(&dev->lock);
	list_del(&s->node);
	if (s->pageno != ACC_PAGE_FOREIGN)
		slots_free(&dev->slots, s->pageno, s->slot);
	pthread_mutex_unlock(&dev->lock);
	free(s);
}

int acc_signal_at(struct accel_device *dev, struct acc_sigpage *pg, unsigned int slot,
		  struct accel_signal **out)
{
	struct accel_signal *s;
	int err;

	if (slot >= ACC_SLOTS_PER_PAGE)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dev = dev;
	s->page = pg;
	s->pageno = ACC_PAGE_FOREIGN;
	s->slot = slot;
	s->offset = (uint64_t)slot * ACC_SIGNAL_STRIDE;
	s->va = pg->buf->va + s->offset;
	s->word = (const volatile uint64_t *)((const volatile char *)pg->host + s->offset);
	s->internal = true;
	list_init(&s->node);
	atomic_store(&s->next, acc_signal_load(s, &err));
	if (err) {
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

ACCEL_API int accel_signal_create(struct accel_device *dev, struct accel_signal **out)
{
	int ret = acc_check_dev(dev, "signal_create");

	if (ret)
		return ret;
	if (!out)
		return -EINVAL;
	ret = acc_signal_new(dev, false, out);
	if (!ret)
		acc_trace("%s: signal 0x%llx", dev->path, (unsigned long long)(*out)->va);
	return ret;
}

ACCEL_API void accel_signal_destroy(struct accel_signal *sig)
{
	if (sig)
		acc_signal_free(sig);
}

ACCEL_API uint64_t accel_signal_va(const struct accel_signal *sig)
{
	return sig ? sig->va : 0;
}

ACCEL_API struct accel_device *accel_signal_device(const struct accel_signal *sig)
{
	return sig ? sig->dev : NULL;
}

ACCEL_API uint64_t accel_signal_read(const struct accel_signal *sig)
{
	int err;

	return sig ? acc_signal_load(sig, &err) : 0;
}

ACCEL_API int accel_signal_write(struct accel_signal *sig, uint32_t op, uint64_t value)
{
	int ret;

	if (!sig)
		return -EINVAL;
	ret = acc_check_dev(sig->dev, "signal_write");
	if (ret)
		return ret;
	if (op < DRM_VACCEL_SIGNAL_SET || op > DRM_VACCEL_SIGNAL_MAX) {
		acc_err("signal_write: signal 0x%llx: op %u is not SET, ADD or MAX",
			(unsigned long long)sig->va, op);
		return -EINVAL;
	}
	ret = tp_signal_write(&sig->dev->tp, sig->page->buf->handle, sig->offset, op, value);
	if (ret)
		acc_err("signal_write: signal 0x%llx op %u value %llu: %s",
			(unsigned long long)sig->va, op, (unsigned long long)value, strerror(-ret));
	return ret;
}

ACCEL_API uint64_t accel_signal_next(struct accel_signal *sig)
{
	return sig ? atomic_fetch_add(&sig->next, 1) + 1 : 0;
}

ACCEL_API int accel_event_done(const struct accel_event *ev)
{
	int err;

	if (!ev || !ev->signal)
		return 0;
	return acc_ge(acc_signal_load(ev->signal, &err), ev->value) && !err;
}

ACCEL_API int accel_event_signal(const struct accel_event *ev)
{
	if (!ev || !ev->signal)
		return -EINVAL;
	return accel_signal_write(ev->signal, DRM_VACCEL_SIGNAL_MAX, ev->value);
}

/* ---- signals of other devices ---- */

int acc_signal_on(struct accel_device *dev, const struct accel_signal *sig, uint32_t *handle,
		  uint64_t *va)
{
	struct acc_sigimport *si;
	struct accel_buffer *b;
	struct list *l;
	int ret, fd;

	if (sig->dev == dev) {
		*handle = sig->page->buf->handle;
		*va = sig->va;
		return 0;
	}
	pthread_mutex_lock(&dev->lock);
	for (l = dev->sigimports.next; l != &dev->sigimports; l = l->next) {
		si = container_of(l, struct acc_sigimport, node);
		if (si->uid == sig->page->uid) {
			*handle = si->buf->handle;
			*va = si->buf->va + sig->offset;
			pthread_mutex_unlock(&dev->lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	si = calloc(1, sizeof(*si));
	if (!si)
		return -ENOMEM;
	ret = tp_export(&sig->dev->tp, sig->page->buf->handle, 1, &fd);
	if (ret) {
		acc_err("%s: export of signal page 0x%llx: %s", sig->dev->path,
			(unsigned long long)sig->page->buf->va, strerror(-ret));
		free(si);
		return ret;
	}
	ret = acc_buffer_import_pinned(dev, fd, &si->pin, &b);
	tp_close_fd(fd);
	if (ret) {
		free(si);
		return ret;
	}
	si->uid = sig->page->uid;
	si->buf = b;
	pthread_mutex_lock(&dev->lock);
	list_add_tail(&dev->sigimports, &si->node);
	pthread_mutex_unlock(&dev->lock);
	acc_info("%s: imported signal page 0x%llx of %s at 0x%llx", dev->path,
		 (unsigned long long)sig->page->buf->va, sig->dev->path, (unsigned long long)b->va);
	*handle = b->handle;
	*va = b->va + sig->offset;
	return 0;
}

void acc_device_remove_sigimports(struct accel_device *dev)
{
	while (!list_empty(&dev->sigimports)) {
		struct acc_sigimport *si = container_of(dev->sigimports.next,
							struct acc_sigimport, node);

		list_del(&si->node);
		acc_buffer_unpin(si->buf, &si->pin);
		free(si);
	}
}

/* ---- host waits ---- */

int acc_wait(struct accel_device *dev, struct drm_vaccel_signal_cond *conds, uint32_t n,
	     uint32_t flags, int64_t deadline, uint32_t *first)
{
	int ret;

	do {
		ret = tp_wait_signals(&dev->tp, conds, n, flags, deadline, first);
	} while (ret == -EINTR);	/* the deadline is absolute: restart */
	if (ret == -ETIME)
		ret = -ETIMEDOUT;
	return ret;
}

/* -1: not yet; >= 0: done (lowest index for any); < -1: -errno - 1... */
static int poll_events(const struct accel_event *evs, unsigned int n, bool all, int *err)
{
	unsigned int i, done = 0;
	int lowest = -1;

	*err = 0;
	for (i = 0; i < n; i++) {
		uint64_t v = acc_signal_load(evs[i].signal, err);

		if (*err)
			return -1;
		if (acc_ge(v, evs[i].value)) {
			done++;
			if (lowest < 0)
				lowest = (int)i;
		}
	}
	if (all)
		return done == n ? 0 : -1;
	return lowest;
}

ACCEL_API int accel_events_wait(const struct accel_event *evs, unsigned int n, uint32_t flags,
				int64_t timeout_ns, unsigned int *first)
{
	struct drm_vaccel_signal_cond conds[DRM_VACCEL_WAIT_MAX_ITEMS];
	bool all = flags & ACCEL_WAIT_ALL;
	int64_t deadline, spin_end;
	struct accel_device *wdev;
	unsigned int i;
	uint32_t f = 0;
	int r, err, ret;

	if (!evs || !n || n > DRM_VACCEL_WAIT_MAX_ITEMS || flags & ~ACCEL_WAIT_ALL) {
		acc_err("events_wait: %u events, flags 0x%x: invalid", n, flags);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (!evs[i].signal)
			return -EINVAL;
		ret = acc_check_dev(evs[i].signal->dev, "events_wait");
		if (ret)
			return ret;
	}
	deadline = acc_deadline(timeout_ns);
	spin_end = acc_now_ns() + acc_spin_ns();
	if (spin_end > deadline)
		spin_end = deadline;
	for (i = 0;; i++) {
		r = poll_events(evs, n, all, &err);
		if (err)
			return err;
		if (r >= 0) {
			if (first)
				*first = (unsigned int)r;
			return 0;
		}
		/* the clock every 8 polls: the words are the hot part */
		if (!timeout_ns || (!(i & 7) && acc_now_ns() >= spin_end))
			break;
		acc_cpu_relax();
	}
	if (!timeout_ns || acc_now_ns() >= deadline)
		return -ETIMEDOUT;
	/* sleep on the first event's device; others' pages are imported there */
	wdev = evs[0].signal->dev;
	for (i = 0; i < n; i++) {
		uint64_t va;

		memset(&conds[i], 0, sizeof(conds[i]));
		ret = acc_signal_on(wdev, evs[i].signal, &conds[i].handle, &va);
		if (ret)
			return ret;
		conds[i].cond = DRM_VACCEL_WAIT_GE;
		conds[i].offset = evs[i].signal->offset;
		conds[i].value = evs[i].value;
	}
	ret = acc_wait(wdev, conds, n, all ? DRM_VACCEL_WAIT_ALL : 0, deadline, &f);
	if (!ret && first)
		*first = all ? 0 : f;
	if (ret && ret != -ETIMEDOUT)
		acc_err("events_wait: %s: %u events on signal 0x%llx...: %s", wdev->path, n,
			(unsigned long long)evs[0].signal->va, strerror(-ret));
	return ret;
}

ACCEL_API int accel_event_wait(const struct accel_event *ev, int64_t timeout_ns)
{
	return accel_events_wait(ev, 1, 0, timeout_ns, NULL);
}
