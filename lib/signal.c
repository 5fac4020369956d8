// SPDX-License-Identifier: MIT
/*
 * Signals and events: the slot allocator over signal pages (one signal
 * per 64-byte line of a DRM_VACCEL_BO_SIGNAL page, pages added on demand,
 * slots reused, values never reset), host reads and writes, host waits
 * (spin for ACCEL_SPIN_NS, then DRM_IOCTL_VACCEL_WAIT_SIGNALS with an
 * absolute CLOCK_MONOTONIC deadline) in fault domains and with an abort
 * condition, pollable events (SIGNAL_EVENTFD), and signal pages shared
 * with other processes (export, import). Signals of other devices are
 * imported (dma-buf) once per page and cached, for WAIT packets and for
 * waits on events of several devices.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

static _Atomic uint64_t page_uid;

static uint64_t new_uid(void)
{
	return atomic_fetch_add_explicit(&page_uid, 1, memory_order_relaxed) + 1;	/* unique only */
}

/* A new signal page; dev->lock held (dropped around the buffer's creation). */
static int add_page(struct accel_device *dev)
{
	struct acc_sigpage *pg, **pages;
	struct accel_buffer *b;
	int ret, idx;

	pg = calloc(1, sizeof(*pg));
	if (!pg)
		return -ENOMEM;
	acc_dev_unlock(dev);
	ret = acc_buffer_new(dev, ACC_PAGE, DRM_VACCEL_BO_SIGNAL,
			     DRM_VACCEL_VM_READ | DRM_VACCEL_VM_WRITE, PROT_READ, true, &b);
	acc_dev_lock(dev);
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
		acc_dev_unlock(dev);
		acc_buffer_free(b);
		acc_dev_lock(dev);
		free(pg);
		return idx;
	}
	pg->buf = b;
	pg->uid = new_uid();
	pg->host = b->host;
	dev->pages[idx] = pg;
	dev->npages = (unsigned int)idx + 1;
	acc_info("%s: signal page %d at 0x%llx", dev->path, idx, (unsigned long long)b->va);
	return 0;
}

int acc_signal_new(struct accel_device *dev, bool internal, struct accel_signal **out)
{
	struct accel_signal *s = calloc(1, sizeof(*s));
	unsigned int page, slot;
	int ret, err;

	if (!s)
		return -ENOMEM;
	acc_dev_lock(dev);
	while ((ret = slots_alloc(&dev->slots, &page, &slot)) == -ENOSPC) {
		ret = add_page(dev);
		if (ret)
			break;
	}
	if (ret) {
		acc_dev_unlock(dev);
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
	acc_dev_unlock(dev);
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
	struct acc_sigpage *pg = s->page;
	bool last = false;

	acc_dev_lock(dev);
	list_del(&s->node);
	if (pg->imported) {
		last = !--pg->users;
		if (last)
			list_del(&pg->node);
	} else if (s->pageno != ACC_PAGE_FOREIGN) {
		slots_free(&dev->slots, s->pageno, s->slot);
	}
	acc_dev_unlock(dev);
	if (last) {
		acc_buffer_unpin(pg->buf, &pg->pin);
		free(pg);
	}
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
	if (!pg->uid)
		pg->uid = atomic_fetch_add(&page_uid, 1) + 1;	/* keys imports of it */
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

int acc_signal_write_raw(const struct accel_signal *sig, uint32_t op, uint64_t value)
{
	return tp_signal_write_raw(&sig->dev->tp, sig->page->buf->handle, sig->offset, op, value);
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

static struct acc_sigimport *sigimport_find(struct accel_device *dev, uint64_t uid)
{
	struct list *l;

	for (l = dev->sigimports.next; l != &dev->sigimports; l = l->next) {
		struct acc_sigimport *si = container_of(l, struct acc_sigimport, node);

		if (si->uid == uid)
			return si;
	}
	return NULL;
}

int acc_signal_on(struct accel_device *dev, const struct accel_signal *sig, uint32_t *handle,
		  uint64_t *va)
{
	struct acc_sigimport *si, *had;
	struct accel_buffer *b;
	int ret, fd;

	if (sig->dev == dev) {
		*handle = sig->page->buf->handle;
		*va = sig->va;
		return 0;
	}
	acc_dev_lock(dev);
	si = sigimport_find(dev, sig->page->uid);
	if (si) {
		*handle = si->buf->handle;
		*va = si->buf->va + sig->offset;
		acc_dev_unlock(dev);
		return 0;
	}
	acc_dev_unlock(dev);
	ACC_HOOK(ACC_HOOK_SIGIMPORT_MISS, &sig->page->uid);
	si = calloc(1, sizeof(*si));
	if (!si)
		return -ENOMEM;
	/* into this process only: the fd is closed below */
	ret = tp_export_local(&sig->dev->tp, sig->page->buf->handle, 1, &fd);
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
	/* another thread may have imported the page meanwhile: keep one entry */
	acc_dev_lock(dev);
	had = sigimport_find(dev, si->uid);
	if (!had)
		list_add_tail(&dev->sigimports, &si->node);
	acc_dev_unlock(dev);
	if (had) {
		acc_buffer_unpin(b, &si->pin);	/* the same buffer: had's pin keeps it */
		free(si);
		si = had;
	} else {
		acc_info("%s: imported signal page 0x%llx of %s at 0x%llx", dev->path,
			 (unsigned long long)sig->page->buf->va, sig->dev->path,
			 (unsigned long long)b->va);
	}
	*handle = si->buf->handle;
	*va = si->buf->va + sig->offset;
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

/* ---- sharing signals with other processes ---- */

ACCEL_API int accel_signal_export(const struct accel_signal *sig, int *fd, uint64_t *offset)
{
	return acc_signal_export(sig, false, fd, offset);
}

int acc_signal_export(const struct accel_signal *sig, bool local, int *fd, uint64_t *offset)
{
	int ret;

	if (!sig || !fd || !offset)
		return -EINVAL;
	ret = acc_check_dev(sig->dev, "signal_export");
	if (ret)
		return ret;
	ret = local ? tp_export_local(&sig->dev->tp, sig->page->buf->handle, 1, fd) :
		      tp_export(&sig->dev->tp, sig->page->buf->handle, 1, fd);
	if (ret) {
		acc_err("signal_export: signal 0x%llx (page handle %u): %s",
			(unsigned long long)sig->va, sig->page->buf->handle, strerror(-ret));
		return ret;
	}
	*offset = sig->offset;
	return 0;
}

ACCEL_API int accel_signal_import(struct accel_device *dev, int fd, uint64_t offset,
				  struct accel_signal **out)
{
	struct acc_sigpage *pg, *had = NULL;
	struct accel_signal *s;
	struct accel_buffer *b;
	struct list *l;
	void *host;
	int ret, err;

	ret = acc_check_dev(dev, "signal_import");
	if (ret)
		return ret;
	if (!out)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	s = calloc(1, sizeof(*s));
	pg = calloc(1, sizeof(*pg));
	if (!s || !pg) {
		free(s);
		free(pg);
		return -ENOMEM;
	}
	ret = acc_buffer_import_pinned(dev, fd, &pg->pin, &b);
	if (ret)
		goto err_free;
	if (!(b->bo_flags & DRM_VACCEL_BO_SIGNAL) || offset % 8 || offset > b->size - 8) {
		acc_err("signal_import: %s: fd %d: %s (offset %llu, %llu bytes)", dev->path, fd,
			b->bo_flags & DRM_VACCEL_BO_SIGNAL ? "offset outside the page" :
			"not a signal page", (unsigned long long)offset,
			(unsigned long long)b->size);
		ret = -EINVAL;
		goto err_unpin;
	}
	ret = acc_buffer_map_prot(b, PROT_READ, &host);
	if (ret)
		goto err_unpin;
	acc_dev_lock(dev);
	for (l = dev->imported_pages.next; l != &dev->imported_pages; l = l->next)
		if (container_of(l, struct acc_sigpage, node)->buf == b)
			had = container_of(l, struct acc_sigpage, node);
	if (had) {
		had->users++;
	} else {
		pg->buf = b;
		pg->uid = new_uid();
		pg->host = host;
		pg->imported = true;
		pg->users = 1;
		list_add_tail(&dev->imported_pages, &pg->node);
	}
	s->dev = dev;
	s->page = had ? had : pg;
	s->pageno = s->slot = ~0u;
	s->offset = offset;
	s->va = b->va + offset;
	s->word = (const volatile uint64_t *)((const volatile char *)host + offset);
	list_add_tail(&dev->signals, &s->node);
	acc_dev_unlock(dev);
	if (had) {
		acc_buffer_unpin(b, &pg->pin);	/* had's pin keeps it */
		free(pg);
	}
	atomic_store(&s->next, acc_signal_load(s, &err));
	acc_trace("%s: imported signal 0x%llx (offset %llu of handle %u)", dev->path,
		  (unsigned long long)s->va, (unsigned long long)offset, b->handle);
	*out = s;
	return 0;
err_unpin:
	acc_buffer_unpin(b, &pg->pin);
err_free:
	free(pg);
	free(s);
	return ret;
}

/* ---- host waits ---- */

#define SLICE_MIN_NS	1000000ll	/* sliced waits: 1 ms, doubling */
#define SLICE_MAX_NS	32000000ll	/* to 32 ms */
/*
 * The longest sleep of any wait: a signal set by a packet without the IRQ
 * bit wakes no host waiter (the uAPI's rule, on both backends), so a wait
 * for it would otherwise sleep to its deadline. The backstop finds it
 * within this time, and the first such find on a device is logged.
 */
#define BACKSTOP_NS	100000000ll	/* 100 ms */
#define HELP_SLICE_NS	1000000ll	/* a spinning waiter lends itself to the device this long at most */

/* The queues whose faults matter: the events' producers and @queues. */
struct domain {
	const struct accel_event *evs;
	unsigned int n;
	struct accel_queue *const *queues;
	unsigned int nq;
};

/* -EIO (logged) if a queue of @d faulted, -ENODEV/-ECHILD, else 0. No syscall. */
static int domain_check(const struct domain *d)
{
	unsigned int i;
	int ret;

	for (i = 0; i < d->n; i++)
		if (d->evs[i].signal->queue) {
			ret = acc_queue_check(d->evs[i].signal->queue);
			if (ret)
				return ret;
		}
	for (i = 0; i < d->nq; i++)
		if (d->queues[i]) {
			ret = acc_queue_check(d->queues[i]);
			if (ret)
				return ret;
		}
	return 0;
}

/*
 * How to sleep (the kernel's WAIT_SIGNALS fails with -EIO when any queue
 * of the context faulted, unless told to ignore faults):
 * - WAIT_PLAIN: every queue of the domain is on one device: sleep there
 *   without IGNORE_FAULTS, so that a fault wakes the wait at once; on -EIO
 *   check the domain, and if the fault was another queue's, go on sliced;
 * - WAIT_IGNORE: no queue in the domain: no fault ends the wait;
 * - WAIT_SLICED: the domain spans devices (or another queue of the device
 *   faulted): IGNORE_FAULTS in slices of 1 ms doubling to 32 ms, checking
 *   the domain's control pages between them.
 */
enum wait_mode { WAIT_PLAIN, WAIT_IGNORE, WAIT_SLICED };

static struct accel_device *domain_device(const struct domain *d, enum wait_mode *mode)
{
	struct accel_device *w = NULL;
	unsigned int i;
	bool one = true;

	for (i = 0; i < d->n + d->nq; i++) {
		struct accel_queue *q = i < d->n ? d->evs[i].signal->queue : d->queues[i - d->n];

		if (!q)
			continue;
		if (w && q->dev != w)
			one = false;
		if (!w)
			w = q->dev;
	}
	*mode = !w ? WAIT_IGNORE : one ? WAIT_PLAIN : WAIT_SLICED;
	return w ? w : d->evs[0].signal->dev;
}

/* -1: not yet; >= 0: done (lowest index for any); err set on a removal or fork */
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

static int abort_check(const struct acc_abort *abort)
{
	int err;

	if (!abort)
		return 0;
	if (acc_ge(acc_signal_load(abort->sig, &err), abort->value))
		return -ECANCELED;
	return err;
}

static void cond_set(struct drm_vaccel_signal_cond *c, uint32_t handle, uint64_t offset,
		     uint64_t value)
{
	memset(c, 0, sizeof(*c));
	c->handle = handle;
	c->cond = DRM_VACCEL_WAIT_GE;
	c->offset = offset;
	c->value = value;
}

int acc_wait_events(const struct accel_event *evs, unsigned int n, bool all, int64_t deadline,
		    struct accel_queue *const *queues, unsigned int nq,
		    const struct acc_abort *abort, unsigned int *first)
{
	struct drm_vaccel_signal_cond conds[DRM_VACCEL_WAIT_MAX_ITEMS];
	struct domain dom = { evs, n, queues, nq };
	int64_t spin_end, now, slice = SLICE_MIN_NS, d;
	struct accel_device *w;
	unsigned int i, nc, pending = 0, base;
	uint32_t f = 0, flags;
	enum wait_mode mode;
	bool unwoken = false;
	uint64_t va;
	int r, err, ret;

	if (!evs || !n || n + !!abort > DRM_VACCEL_WAIT_MAX_ITEMS)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!evs[i].signal)
			return -EINVAL;
		ret = acc_check_dev(evs[i].signal->dev, "wait");
		if (ret)
			return ret;
	}
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
		/*
		 * The clock, the domain's faults and the abort every 8 polls; and
		 * the work of the first event's device if it can use this thread
		 * (tp_help(), as wait_index() in queue.c): a slice that ran some
		 * starts the spin budget again.
		 */
		if (!(i & 7)) {
			ret = domain_check(&dom);
			if (!ret)
				ret = abort_check(abort);
			if (ret)
				return ret;
			now = acc_now_ns();
			if (now >= spin_end)
				break;
			d = deadline - now < HELP_SLICE_NS ? deadline - now : HELP_SLICE_NS;
			if (tp_help(&evs[0].signal->dev->tp, d)) {
				spin_end = acc_now_ns() + acc_spin_ns();
				if (spin_end > deadline)
					spin_end = deadline;
				continue;
			}
		}
		acc_cpu_relax();
	}
	w = domain_device(&dom, &mode);
	for (;;) {
		/* done first: a fault or an abort after the events does not undo them */
		r = poll_events(evs, n, all, &err);
		if (err)
			return err;
		if (r >= 0) {
			if (unwoken && !atomic_exchange(&w->warned_no_irq, true))
				acc_warn("wait: %s: signal 0x%llx reached %llu without waking its "
					 "waiter: the packet that set it had no IRQ bit "
					 "(accel_prep_irq()); such values are found by polling every "
					 "%lld ms (logged once per device)", w->path,
					 (unsigned long long)evs[r > 0 && !all ? r : 0].signal->va,
					 (unsigned long long)evs[r > 0 && !all ? r : 0].value,
					 BACKSTOP_NS / 1000000);
			if (first)
				*first = (unsigned int)r;
			return 0;
		}
		ret = domain_check(&dom);
		if (!ret)
			ret = abort_check(abort);
		if (ret)
			return ret;
		now = acc_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		/*
		 * The conditions on @w: all events (ANY, or ALL), or with an abort
		 * and ALL, the first pending event and the abort (ANY): signals
		 * only grow, so waiting for each in turn is waiting for all.
		 */
		nc = 0;
		base = 0;
		if (all && abort) {
			while (pending < n && acc_ge(acc_signal_load(evs[pending].signal, &err),
						     evs[pending].value))
				pending++;
			base = pending;
		}
		for (i = base; i < (all && abort ? base + 1 : n); i++) {
			uint32_t handle;

			ret = acc_signal_on(w, evs[i].signal, &handle, &va);
			if (ret)
				return ret;
			cond_set(&conds[nc++], handle, evs[i].signal->offset, evs[i].value);
		}
		if (abort) {
			uint32_t handle;

			ret = acc_signal_on(w, abort->sig, &handle, &va);
			if (ret)
				return ret;
			cond_set(&conds[nc++], handle, abort->sig->offset, abort->value);
		}
		flags = all && !abort ? DRM_VACCEL_WAIT_ALL : 0;
		d = deadline;
		if (mode != WAIT_PLAIN)
			flags |= DRM_VACCEL_WAIT_IGNORE_FAULTS;
		if (mode == WAIT_SLICED) {
			if (slice < deadline - now)
				d = now + slice;
			slice = slice * 2 > SLICE_MAX_NS ? SLICE_MAX_NS : slice * 2;
		} else if (BACKSTOP_NS < deadline - now) {
			d = now + BACKSTOP_NS;
		}
		do {
			ret = tp_wait_signals(&w->tp, conds, nc, flags, d, &f);
		} while (ret == -EINTR);	/* the deadline is absolute: restart */
		/*
		 * Slept to its end (the device's wait re-checks the conditions
		 * then, so it may return 0 or -ETIME): not woken by an update.
		 * The loop's poll decides, also at the deadline.
		 */
		unwoken = (!ret || ret == -ETIME) && acc_now_ns() >= d;
		if (ret == -ETIME)
			ret = 0;
		if (ret == -EIO && mode == WAIT_PLAIN) {
			ret = domain_check(&dom);
			if (ret)
				return ret;
			/* another queue of @w faulted: from now on faults are ignored */
			acc_info("%s: a queue outside this wait's fault domain faulted: "
				 "waiting in slices of 1 to 32 ms", w->path);
			mode = WAIT_SLICED;
			continue;
		}
		if (ret) {
			if (ret != -ETIMEDOUT)
				acc_err("wait: %s: %u events on signal 0x%llx...: %s", w->path, n,
					(unsigned long long)evs[0].signal->va, strerror(-ret));
			return ret;
		}
		/* woken: the loop's checks say by what */
	}
}

ACCEL_API int accel_events_wait(const struct accel_event *evs, unsigned int n, uint32_t flags,
				int64_t timeout_ns, unsigned int *first)
{
	int ret;

	if (!evs || !n || n > DRM_VACCEL_WAIT_MAX_ITEMS || flags & ~ACCEL_WAIT_ALL) {
		acc_err("events_wait: %u events, flags 0x%x: invalid", n, flags);
		return -EINVAL;
	}
	ret = acc_wait_events(evs, n, flags & ACCEL_WAIT_ALL, acc_deadline(timeout_ns), NULL, 0,
			      NULL, first);
	if (!ret && first && (flags & ACCEL_WAIT_ALL))
		*first = 0;
	return ret;
}

ACCEL_API int accel_event_wait(const struct accel_event *ev, int64_t timeout_ns)
{
	return accel_events_wait(ev, 1, 0, timeout_ns, NULL);
}

/* ---- pollable events ---- */

/* Another queue of @dev than @q has faulted (its arms would fire at once). */
static bool other_fault(struct accel_device *dev, const struct accel_queue *q)
{
	struct list *l;
	bool seen = false;

	acc_dev_lock(dev);
	for (l = dev->queues.next; l != &dev->queues && !seen; l = l->next) {
		struct accel_queue *o = container_of(l, struct accel_queue, node);

		/* acquire: pairs with the engine's store-release of the state */
		seen = o != q && acc_load_acquire_u32(&o->ctrl->state) != DRM_VACCEL_QUEUE_RUNNING;
	}
	acc_dev_unlock(dev);
	return seen;
}

ACCEL_API int accel_event_fd(const struct accel_event *ev, int *fd)
{
	struct drm_vaccel_signal_cond c;
	struct accel_device *dev;
	struct accel_queue *q;
	uint32_t flags = 0;
	int ret, efd;

	if (!ev || !ev->signal || !fd)
		return -EINVAL;
	dev = ev->signal->dev;
	q = ev->signal->queue;
	ret = acc_check_dev(dev, "event_fd");
	if (ret)
		return ret;
	if (!(dev->props.capabilities & DRM_VACCEL_CAP_SIGNAL_EVENTFD)) {
		acc_err("event_fd: %s: the module has no SIGNAL_EVENTFD (uAPI %u)", dev->path,
			dev->props.uapi_version);
		return -EOPNOTSUPP;
	}
	/*
	 * Faults: only the event's own queue's matter. The kernel fires an arm
	 * on any fault of the context unless told to ignore them, so: ignore
	 * them for a signal no queue records on, and when another queue has
	 * faulted already (it would fire at once, for ever); see event_fd's
	 * documentation for what that leaves out.
	 */
	if (!q || other_fault(dev, q))
		flags |= DRM_VACCEL_EVENTFD_IGNORE_FAULTS;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0) {
		ret = -errno;
		acc_err("event_fd: eventfd: %s", strerror(-ret));
		return ret;
	}
	cond_set(&c, ev->signal->page->buf->handle, ev->signal->offset, ev->value);
	ret = tp_signal_eventfd(&dev->tp, &c, efd, flags);
	if (ret) {
		acc_err("event_fd: %s: SIGNAL_EVENTFD on signal 0x%llx value %llu: %s", dev->path,
			(unsigned long long)ev->signal->va, (unsigned long long)ev->value,
			strerror(-ret));
		tp_close_fd(efd);
		return ret;
	}
	*fd = efd;
	return 0;
}
