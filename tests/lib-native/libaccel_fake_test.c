// SPDX-License-Identifier: MIT
/*
 * The fake kernel of fake_kmod.h follows the module's rules where the
 * library and the oracle rely on them: sealing and PRIME with their errnos
 * (Documentation/memory.rst), WAITs that block their queue and time out,
 * EXEC with binding tables and epochs, TIMESTAMP, DELAY, the doorbell
 * rules, WAIT_SIGNALS' -EIO, and the NEED_WAKEUP protocol of its engine
 * thread; and the work-end record the oracle reads. The same expectations
 * as the kselftests', over the library and raw ioctls, natively (ASan,
 * UBSan).
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <stdlib.h>

#include "fake_kmod.h"

/* the harness ends test processes with _exit(), before LeakSanitizer's own check */
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define NO_LEAKS() EXPECT_EQ(0, __lsan_do_recoverable_leak_check())
#else
#define NO_LEAKS() do { } while (0)
#endif
#include "kselftest_harness.h"

#define SEC	1000000000ll
#define MS	1000000ll

static int raw(struct accel_device *dev, unsigned long req, void *arg)
{
	return fake_ops.ioctl(accel_device_fd(dev), req, arg);
}

static int raw_bind(struct accel_device *dev, uint32_t handle, uint32_t flags, uint64_t va)
{
	struct drm_vaccel_vm_bind b = { .handle = handle, .flags = flags, .va = va,
					.size = FAKE_PAGE };

	return raw(dev, DRM_IOCTL_VACCEL_VM_BIND, &b);
}

/* a device address nothing uses on any of the fake's devices */
#define SPARE_VA	(FAKE_VA_START + FAKE_VA_SIZE - 16 * FAKE_PAGE)

static uint64_t bo_offset(struct accel_buffer *b)
{
	struct drm_vaccel_bo_info info = { .handle = b->handle };

	return raw(b->dev, DRM_IOCTL_VACCEL_BO_INFO, &info) ? 0 : info.mmap_offset;
}

static uint32_t bo_status(struct accel_buffer *b)
{
	struct drm_vaccel_bo_info info = { .handle = b->handle };

	return raw(b->dev, DRM_IOCTL_VACCEL_BO_INFO, &info) ? ~0u : info.status;
}

FIXTURE(two) {
	struct accel_device *dev[2];
};

FIXTURE_SETUP(two)
{
	accel_log_set_level(ACCEL_LOG_NONE);	/* the refusals are expected */
	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake0", &self->dev[0]));
	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake1", &self->dev[1]));
	ASSERT_EQ(-EBUSY, acc_device_open_ops(&fake_ops, "fake1", &(struct accel_device *){ 0 }));
}

FIXTURE_TEARDOWN(two)
{
	fake_engine_stop();
	accel_device_close(self->dev[0]);
	accel_device_close(self->dev[1]);
	EXPECT_EQ(0, fake_mem_used(0));
	EXPECT_EQ(0, fake_mem_used(1));
	fake_stamp_reset();
	NO_LEAKS();
}

/* BO_SEAL: -EBUSY while writable anywhere; afterwards nothing writes it. */
TEST_F(two, seal_rules)
{
	struct accel_buffer *p, *imp, *plain;
	struct drm_vaccel_bo_seal s = { 0 };
	int fd, err;
	void *m;

	ASSERT_EQ(0, accel_buffer_create(self->dev[0], 8192,
					 ACCEL_BUFFER_PERSISTENT | ACCEL_BUFFER_HOST, &p));
	/* a writable host mapping and a writable bind */
	s.handle = p->handle;
	EXPECT_EQ(-EBUSY, raw(self->dev[0], DRM_IOCTL_VACCEL_BO_SEAL, &s));
	/* a writable bind on the other device, through an import */
	ASSERT_EQ(0, accel_buffer_export(p, 0, &fd));
	ASSERT_EQ(0, accel_buffer_import(self->dev[1], fd, 0, &imp));
	EXPECT_FALSE(imp->read_only);
	EXPECT_EQ(-EBUSY, accel_buffer_seal(p));
	accel_buffer_destroy(imp);
	EXPECT_EQ(0, accel_buffer_seal(p));
	EXPECT_EQ(DRM_VACCEL_BO_STATUS_SEALED, bo_status(p));
	/* nobody writes it any more: write binds and writable mmaps refused */
	EXPECT_EQ(-EACCES, raw_bind(self->dev[0], p->handle, DRM_VACCEL_VM_READ |
				    DRM_VACCEL_VM_WRITE, SPARE_VA));
	EXPECT_EQ(NULL, fake_ops.mmap(accel_device_fd(self->dev[0]), bo_offset(p), 8192,
				      PROT_READ | PROT_WRITE, &err));
	EXPECT_EQ(-EACCES, err);
	ASSERT_EQ(0, accel_buffer_map(p, &m));		/* read-only */
	EXPECT_EQ(PROT_READ, p->host_prot);
	EXPECT_EQ(0, raw_bind(self->dev[0], p->handle, DRM_VACCEL_VM_READ, SPARE_VA));
	EXPECT_EQ(0, raw(self->dev[0], DRM_IOCTL_VACCEL_VM_UNBIND,
			 &(struct drm_vaccel_vm_unbind){ .va = SPARE_VA, .size = FAKE_PAGE }));
	/* an import of a sealed object is read-only, and cannot be sealed itself */
	ASSERT_EQ(0, accel_buffer_import(self->dev[1], fd, 0, &imp));
	close(fd);
	EXPECT_TRUE(imp->read_only);
	EXPECT_TRUE(imp->sealed);
	EXPECT_EQ(DRM_VACCEL_BO_STATUS_SEALED | DRM_VACCEL_BO_STATUS_IMPORTED, bo_status(imp));
	EXPECT_EQ(-EACCES, raw_bind(self->dev[1], imp->handle, DRM_VACCEL_VM_READ |
				    DRM_VACCEL_VM_WRITE, SPARE_VA));
	s.handle = imp->handle;
	EXPECT_EQ(-EINVAL, raw(self->dev[1], DRM_IOCTL_VACCEL_BO_SEAL, &s));
	/* only persistent objects; unknown handles */
	ASSERT_EQ(0, accel_buffer_create(self->dev[0], 4096, 0, &plain));
	s.handle = plain->handle;
	EXPECT_EQ(-EINVAL, raw(self->dev[0], DRM_IOCTL_VACCEL_BO_SEAL, &s));
	s.handle = 999;
	EXPECT_EQ(-ENOENT, raw(self->dev[0], DRM_IOCTL_VACCEL_BO_SEAL, &s));
	s.handle = p->handle;
	s.flags = 1;
	EXPECT_EQ(-EINVAL, raw(self->dev[0], DRM_IOCTL_VACCEL_BO_SEAL, &s));
	accel_buffer_destroy(plain);
	accel_buffer_destroy(imp);
	accel_buffer_destroy(p);
}

static void inode_of(int fd, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	fstat(fd, st);
}

/* One writable dma-buf per object; imports share the pages; read-only stays read-only. */
TEST_F(two, prime_rules)
{
	struct accel_buffer *b, *same, *imp, *imp2, *ro;
	struct accel_signal *sig;
	struct stat s1, s2;
	uint64_t used1;
	uint32_t handle;
	int fd1, fd2, fdr, sfd;
	uint8_t *h0, *h1;
	void *m;

	ASSERT_EQ(0, accel_buffer_create(self->dev[0], 8192, ACCEL_BUFFER_HOST, &b));
	ASSERT_EQ(0, accel_buffer_export(b, 0, &fd1));
	ASSERT_EQ(0, accel_buffer_export(b, 0, &fd2));
	inode_of(fd1, &s1);
	inode_of(fd2, &s2);
	EXPECT_EQ(s1.st_ino, s2.st_ino);
	EXPECT_EQ(0, f_dmabuf_read_only(fd1));
	/* the exporting device gets its own buffer back */
	ASSERT_EQ(0, accel_buffer_import(self->dev[0], fd1, 0, &same));
	EXPECT_EQ(b, same);
	accel_buffer_destroy(same);
	/* the other device an import of the same pages, once per dma-buf, not charged */
	used1 = fake_mem_used(1);
	ASSERT_EQ(0, accel_buffer_import(self->dev[1], fd1, 0, &imp));
	EXPECT_EQ(used1, fake_mem_used(1));
	ASSERT_EQ(0, accel_buffer_import(self->dev[1], fd2, 0, &imp2));
	EXPECT_EQ(imp, imp2);
	accel_buffer_destroy(imp2);
	EXPECT_EQ(DRM_VACCEL_BO_STATUS_IMPORTED, bo_status(imp));
	EXPECT_EQ(8192, accel_buffer_size(imp));
	h0 = accel_buffer_host(b);
	ASSERT_EQ(0, accel_buffer_map(imp, &m));
	h1 = m;
	h0[100] = 0x5a;
	EXPECT_EQ(0x5a, h1[100]);
	/* read-only: a new dma-buf, O_RDONLY, imports that cannot write */
	ASSERT_EQ(0, accel_buffer_export(b, ACCEL_EXPORT_READ_ONLY, &fdr));
	inode_of(fdr, &s2);
	EXPECT_NE(s1.st_ino, s2.st_ino);
	EXPECT_EQ(1, f_dmabuf_read_only(fdr));
	ASSERT_EQ(0, accel_buffer_import(self->dev[1], fdr, 0, &ro));
	EXPECT_NE(imp, ro);
	EXPECT_TRUE(ro->read_only);
	EXPECT_EQ(-EACCES, raw_bind(self->dev[1], ro->handle, DRM_VACCEL_VM_READ |
				    DRM_VACCEL_VM_WRITE, SPARE_VA));
	ASSERT_EQ(0, accel_buffer_map(ro, &m));
	EXPECT_EQ(PROT_READ, ro->host_prot);
	EXPECT_EQ(0x5a, ((uint8_t *)m)[100]);
	/* a read-only import of a signal page refuses SIGNAL_WRITE */
	ASSERT_EQ(0, accel_signal_create(self->dev[0], &sig));
	ASSERT_EQ(0, f_prime_export(accel_device_fd(self->dev[0]), sig->page->buf->handle, 0,
				    &sfd));
	ASSERT_EQ(0, f_prime_import(accel_device_fd(self->dev[1]), sfd, &handle));
	EXPECT_EQ(-EACCES, raw(self->dev[1], DRM_IOCTL_VACCEL_SIGNAL_WRITE,
			       &(struct drm_vaccel_signal_write){ .handle = handle,
				       .offset = sig->offset, .op = DRM_VACCEL_SIGNAL_SET, .value = 1 }));
	EXPECT_EQ(0, raw(self->dev[1], DRM_IOCTL_GEM_CLOSE,
			 &(struct drm_gem_close){ .handle = handle }));
	/* not a dma-buf of ours */
	EXPECT_EQ(-EINVAL, f_prime_import(accel_device_fd(self->dev[1]), accel_device_fd(self->dev[0]),
					  &handle));
	EXPECT_EQ(-EBADF, f_prime_import(accel_device_fd(self->dev[1]), 9999, &handle));
	close(sfd);
	close(fd1);
	close(fd2);
	close(fdr);
	accel_signal_destroy(sig);
	accel_buffer_destroy(ro);
	accel_buffer_destroy(imp);
	accel_buffer_destroy(b);
}

/* The module's checks of VM_BIND and QUEUE_CREATE, in its order. */
TEST_F(two, bind_and_queue_errnos)
{
	struct drm_vaccel_queue_create qc = { .ring_size = 16 };
	struct accel_buffer *b;

	ASSERT_EQ(0, accel_buffer_create(self->dev[0], 8192, 0, &b));
	EXPECT_EQ(-EINVAL, raw_bind(self->dev[0], b->handle, 0, SPARE_VA));
	EXPECT_EQ(-EINVAL, raw_bind(self->dev[0], b->handle, DRM_VACCEL_VM_READ, SPARE_VA + 1));
	EXPECT_EQ(-ERANGE, raw_bind(self->dev[0], b->handle, DRM_VACCEL_VM_READ, 4096));
	EXPECT_EQ(-ENOENT, raw_bind(self->dev[0], 999, DRM_VACCEL_VM_READ, SPARE_VA));
	EXPECT_EQ(-EBUSY, raw_bind(self->dev[0], b->handle, DRM_VACCEL_VM_READ, b->va));
	EXPECT_EQ(-ENOENT, raw(self->dev[0], DRM_IOCTL_VACCEL_VM_UNBIND,
			       &(struct drm_vaccel_vm_unbind){ .va = SPARE_VA, .size = 4096 }));
	EXPECT_EQ(-EINVAL, raw(self->dev[0], DRM_IOCTL_VACCEL_VM_UNBIND,
			       &(struct drm_vaccel_vm_unbind){ .va = b->va, .size = 4096 }));
	/* another device's VA space: the buffer is not mapped there */
	qc.ring_va = b->va;
	EXPECT_EQ(-ENXIO, raw(self->dev[1], DRM_IOCTL_VACCEL_QUEUE_CREATE, &qc));
	qc.ring_size = 12;
	EXPECT_EQ(-EINVAL, raw(self->dev[0], DRM_IOCTL_VACCEL_QUEUE_CREATE, &qc));
	qc.ring_size = 16;
	qc.priority = DRM_VACCEL_QUEUE_PRIORITY_HIGH;
	EXPECT_EQ(-EPERM, raw(self->dev[0], DRM_IOCTL_VACCEL_QUEUE_CREATE, &qc));
	EXPECT_EQ(-ENOENT, raw(self->dev[0], DRM_IOCTL_VACCEL_KICK,
			       &(struct drm_vaccel_kick){ .queue_id = 7 }));
	accel_buffer_destroy(b);
}

static void start_engine(struct __test_metadata *_metadata, uint64_t poll_ns)
{
	struct fake_engine_params ep = { .seed = 7, .poll_ns = poll_ns, .max_burst = 3 };

	ASSERT_EQ(0, fake_engine_start(&ep));
}

static struct drm_vaccel_packet *pk(struct accel_queue *q)
{
	struct drm_vaccel_packet *p = accel_queue_get_packet(q);

	if (!p)
		abort();
	return p;
}

/* A WAIT blocks its queue until the condition holds (GE, EQ, NE, masks). */
TEST_F(two, waits_block)
{
	static const struct { uint32_t cond; uint64_t value, mask, set; } c[] = {
		{ DRM_VACCEL_WAIT_GE, 5, 0, 5 },
		{ DRM_VACCEL_WAIT_EQ, 0x0200, 0xff00, 0x1234020f },
		{ DRM_VACCEL_WAIT_NE, 7, 0, 8 },
		/* masked GE compares in the mask's width: 0x01 is after 0xfe */
		{ DRM_VACCEL_WAIT_GE, 0xfe, 0xff, 0x101 },
	};
	struct accel_signal *s, *done;
	struct accel_buffer *buf;
	struct accel_queue *q;
	struct accel_event ev;
	unsigned int i;
	uint64_t base, db;
	uint8_t *h;

	start_engine(_metadata, 20000);
	ASSERT_EQ(0, accel_queue_create(self->dev[0], NULL, &q));
	ASSERT_EQ(0, accel_signal_create(self->dev[0], &s));
	ASSERT_EQ(0, accel_signal_create(self->dev[1], &done));
	ASSERT_EQ(0, accel_buffer_create(self->dev[0], 4096, ACCEL_BUFFER_HOST, &buf));
	h = accel_buffer_host(buf);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ASSERT_EQ(0, accel_signal_write(s, DRM_VACCEL_SIGNAL_SET, 0));
		if (c[i].cond == DRM_VACCEL_WAIT_NE)
			ASSERT_EQ(0, accel_signal_write(s, DRM_VACCEL_SIGNAL_SET, 7));
		if (c[i].mask == 0xff)
			ASSERT_EQ(0, accel_signal_write(s, DRM_VACCEL_SIGNAL_SET, 0x1fd));
		base = accel_signal_read(done);
		accel_prep_wait(pk(q), accel_signal_va(s), c[i].cond, c[i].value, c[i].mask, 0);
		accel_prep_fill(pk(q), accel_buffer_va(buf) + 64 * i, 64, 0xa0 + i, 1);
		/* the completion on a signal of the other device (an imported page) */
		{
			uint32_t handle;
			uint64_t va;

			ASSERT_EQ(0, acc_signal_on(self->dev[0], done, &handle, &va));
			accel_prep_signal(pk(q), va, DRM_VACCEL_SIGNAL_SET, base + 1);
		}
		ASSERT_LT(0, accel_queue_submit(q));
		usleep(20000);
		EXPECT_EQ(0, h[64 * i]) TH_LOG("condition %u did not block", i);
		EXPECT_EQ(base, accel_signal_read(done));
		ASSERT_EQ(0, accel_signal_write(s, DRM_VACCEL_SIGNAL_SET, c[i].set));
		ev = (struct accel_event){ .signal = done, .value = base + 1 };
		ASSERT_EQ(0, accel_event_wait(&ev, 5 * SEC)) TH_LOG("condition %u", i);
		EXPECT_EQ(0xa0 + i, h[64 * i + 63]);
	}
	/* doorbell values at or below the last accepted one are ignored */
	db = *q->doorbell;
	*q->doorbell = db - 1;
	accel_prep_nop(pk(q));
	ASSERT_EQ(1, accel_queue_submit(q));
	ASSERT_EQ(0, accel_queue_sync(q, 5 * SEC));
	EXPECT_EQ(0, accel_queue_status(q, NULL, 0));
	/* one more than a ring ahead faults the queue */
	*q->doorbell = accel_queue_completed(q) + q->size + 1;
	feng_wake();
	for (i = 0; i < 500 && !accel_queue_status(q, NULL, 0); i++)
		usleep(1000);
	EXPECT_EQ(DRM_VACCEL_FAULT_DOORBELL, q->ctrl->fault);
	accel_queue_destroy(q);
	accel_buffer_destroy(buf);
	accel_signal_destroy(done);
	accel_signal_destroy(s);
}

/*
 * A WAIT's timeout faults the queue; WAIT_SIGNALS then fails with -EIO
 * (the library's waits outside that queue's fault domain do not).
 */
TEST_F(two, wait_timeout_faults)
{
	struct accel_signal *s, *other;
	struct accel_queue_fault f;
	struct drm_vaccel_signal_cond cond;
	struct accel_queue *q;
	struct accel_event ev;
	unsigned int i;

	start_engine(_metadata, 20000);
	ASSERT_EQ(0, accel_queue_create(self->dev[0], NULL, &q));
	ASSERT_EQ(0, accel_signal_create(self->dev[0], &s));
	ASSERT_EQ(0, accel_signal_create(self->dev[0], &other));
	accel_prep_nop(pk(q));
	accel_prep_wait(pk(q), accel_signal_va(s), DRM_VACCEL_WAIT_GE, accel_signal_read(s) + 1,
			0, 2 * MS);
	ASSERT_EQ(2, accel_queue_submit(q));
	for (i = 0; i < 2000 && !accel_queue_status(q, NULL, 0); i++)
		usleep(1000);
	ASSERT_EQ(-EIO, accel_queue_status(q, &f, sizeof(f)));
	EXPECT_EQ(DRM_VACCEL_FAULT_WAIT_TIMEOUT, f.code);
	EXPECT_EQ(1, f.ring_index);
	EXPECT_EQ(accel_signal_va(s), f.addr);
	ev = (struct accel_event){ .signal = other, .value = accel_signal_read(other) + 1 };
	/* the library's wait of a user signal is in no queue's fault domain */
	EXPECT_EQ(-ETIMEDOUT, accel_event_wait(&ev, 100 * MS));
	/* the module's WAIT_SIGNALS fails with -EIO ... */
	cond = (struct drm_vaccel_signal_cond){ .handle = other->page->buf->handle,
						.offset = other->offset, .value = ev.value,
						.cond = DRM_VACCEL_WAIT_GE };
	EXPECT_EQ(-EIO, raw(self->dev[0], DRM_IOCTL_VACCEL_WAIT_SIGNALS,
			    &(struct drm_vaccel_wait_signals){ .conds = (uintptr_t)&cond,
				    .count = 1, .timeout_ns = fake_now() + 100 * MS }));
	/* ... unless told to ignore faults: then the deadline */
	EXPECT_EQ(-ETIME, raw(self->dev[0], DRM_IOCTL_VACCEL_WAIT_SIGNALS,
			      &(struct drm_vaccel_wait_signals){ .conds = (uintptr_t)&cond,
				      .count = 1, .flags = DRM_VACCEL_WAIT_IGNORE_FAULTS,
				      .timeout_ns = fake_now() + 10 * MS }));
	/* the other device's file has no faulted queue */
	accel_queue_destroy(q);
	accel_signal_destroy(other);
	accel_signal_destroy(s);
}

/*
 * EXEC of a sealed body: a binding table, epoch-relative WAIT and SIGNAL,
 * a nested EXEC with a relative epoch, TIMESTAMPs around a DELAY; an
 * unsealed body faults NOT_SEALED.
 */
TEST_F(two, exec_bodies)
{
	struct accel_buffer *body, *inner, *table, *data, *ts, *plain;
	struct drm_vaccel_packet *b, *in, *p;
	struct accel_signal *s, *t;
	struct accel_queue_fault f;
	struct accel_queue *q;
	struct accel_event ev;
	uint64_t *tab, *stamp, sb, tb, prev;
	uint8_t *h;
	unsigned int i;

	start_engine(_metadata, 20000);
	ASSERT_EQ(0, accel_queue_create(self->dev[0], NULL, &q));
	ASSERT_EQ(0, accel_signal_create(self->dev[0], &s));
	ASSERT_EQ(0, accel_signal_create(self->dev[0], &t));
	sb = accel_signal_read(s);
	tb = accel_signal_read(t);
	ASSERT_EQ(0, accel_buffer_create(self->dev[0], 4096, ACCEL_BUFFER_HOST, &table));
	ASSERT_EQ(0, accel_buffer_create(self->dev[0], 4096, ACCEL_BUFFER_HOST, &data));
	ASSERT_EQ(0, accel_buffer_create(self->dev[0], 4096, ACCEL_BUFFER_HOST, &ts));
	ASSERT_EQ(0, accel_buffer_create(self->dev[0], 4096,
					 ACCEL_BUFFER_PERSISTENT | ACCEL_BUFFER_HOST, &inner));
	ASSERT_EQ(0, accel_buffer_create(self->dev[0], 4096,
					 ACCEL_BUFFER_PERSISTENT | ACCEL_BUFFER_HOST, &body));
	tab = accel_buffer_host(table);
	tab[0] = accel_buffer_va(data);
	tab[1] = accel_signal_va(s);
	tab[2] = accel_buffer_va(ts);
	/* inner: SIGNAL t := epoch + 3 (the enclosing epoch plus 10, with EXEC_F_EPOCH) */
	in = accel_buffer_host(inner);
	accel_prep_signal(&in[0], accel_signal_va(t), DRM_VACCEL_SIGNAL_MAX, tb + 3);
	in[0].flags = DRM_VACCEL_SIGNAL_F_EPOCH;
	b = accel_buffer_host(body);
	/* WAIT s >= epoch + 1, through the table */
	accel_prep_wait(&b[0], DRM_VACCEL_BINDING_ADDR(1, 0), DRM_VACCEL_WAIT_GE, sb + 1, 0, 0);
	b[0].flags = DRM_VACCEL_WAIT_F_EPOCH;
	accel_prep_timestamp(&b[1], DRM_VACCEL_BINDING_ADDR(2, 0));
	accel_prep_fill(&b[2], DRM_VACCEL_BINDING_ADDR(0, 128), 64, 0x77, 1);
	accel_prep_delay(&b[3], 2 * MS);
	accel_prep_timestamp(&b[4], DRM_VACCEL_BINDING_ADDR(2, 8));
	accel_prep_exec(&b[5], accel_buffer_va(inner), 1, 10);
	b[5].flags = DRM_VACCEL_EXEC_F_EPOCH;
	accel_prep_signal(&b[6], DRM_VACCEL_BINDING_ADDR(1, 0), DRM_VACCEL_SIGNAL_MAX, sb + 2);
	b[6].flags = DRM_VACCEL_SIGNAL_F_EPOCH;
	ASSERT_EQ(0, accel_buffer_seal(inner));
	ASSERT_EQ(0, accel_buffer_seal(body));
	p = pk(q);
	accel_prep_exec(p, accel_buffer_va(body), 7, 100);
	accel_prep_exec_bindings(p, accel_buffer_va(table), 3);
	ASSERT_EQ(1, accel_queue_submit(q));
	usleep(20000);
	h = accel_buffer_host(data);
	EXPECT_EQ(0, h[128]);	/* blocked on the epoch-relative WAIT */
	ASSERT_EQ(0, accel_signal_write(s, DRM_VACCEL_SIGNAL_SET, sb + 101));
	ev = (struct accel_event){ .signal = s, .value = sb + 102 };
	ASSERT_EQ(0, accel_event_wait(&ev, 5 * SEC));
	EXPECT_EQ(sb + 102, accel_signal_read(s));
	EXPECT_EQ(tb + 113, accel_signal_read(t));
	for (i = 0; i < 64; i++)
		EXPECT_EQ(0x77, h[128 + i]);
	stamp = accel_buffer_host(ts);
	EXPECT_LE(stamp[0] + 2 * MS, stamp[1]);	/* DELAY runs on the clock */
	/* the work before the second TIMESTAMP: the DELAY, after the first */
	ASSERT_EQ(0, fake_stamp_prev(stamp[1], &prev));
	EXPECT_LT(stamp[0] + 2 * MS, prev);
	EXPECT_LT(prev, stamp[1]);
	EXPECT_EQ(-ENOENT, fake_stamp_prev(stamp[1] + 1, &prev));
	ASSERT_EQ(0, accel_queue_sync(q, 5 * SEC));
	/* an unsealed body */
	ASSERT_EQ(0, accel_buffer_create(self->dev[0], 4096, ACCEL_BUFFER_PERSISTENT, &plain));
	accel_prep_exec(pk(q), accel_buffer_va(plain), 1, 0);
	ASSERT_EQ(1, accel_queue_submit(q));
	for (i = 0; i < 2000 && !accel_queue_status(q, NULL, 0); i++)
		usleep(1000);
	ASSERT_EQ(-EIO, accel_queue_status(q, &f, sizeof(f)));
	EXPECT_EQ(DRM_VACCEL_FAULT_NOT_SEALED, f.code);
	accel_queue_destroy(q);
	accel_buffer_destroy(plain);
	accel_buffer_destroy(body);
	accel_buffer_destroy(inner);
	accel_buffer_destroy(ts);
	accel_buffer_destroy(data);
	accel_buffer_destroy(table);
	accel_signal_destroy(t);
	accel_signal_destroy(s);
}

/*
 * The engine thread sleeps after its poll budget and the library KICKs it:
 * thousands of submissions with pauses between them, each waited for, none
 * lost.
 */
TEST_F(two, need_wakeup_and_kick)
{
	uint64_t kicks = fake_kicks, sleeps = fake_sleeps;
	struct accel_queue *q[2];
	struct accel_event ev;
	unsigned int i, k;

	start_engine(_metadata, 0);
	ASSERT_EQ(0, accel_queue_create(self->dev[0], NULL, &q[0]));
	ASSERT_EQ(0, accel_queue_create(self->dev[1], NULL, &q[1]));
	for (i = 0; i < 2000; i++) {
		k = i % 2;
		accel_prep_nop(pk(q[k]));
		ASSERT_EQ(0, accel_queue_record(q[k], &ev));
		ASSERT_LT(0, accel_queue_submit(q[k]));
		ASSERT_EQ(0, accel_event_wait(&ev, 5 * SEC)) TH_LOG("submission %u lost", i);
		if (i % 3 == 0)
			usleep(50);
	}
	EXPECT_LT(kicks, fake_kicks);
	EXPECT_LT(sleeps, fake_sleeps);
	TH_LOG("%llu kicks, %llu engine sleeps", (unsigned long long)(fake_kicks - kicks),
	       (unsigned long long)(fake_sleeps - sleeps));
	accel_queue_destroy(q[0]);
	accel_queue_destroy(q[1]);
}

TEST_HARNESS_MAIN
