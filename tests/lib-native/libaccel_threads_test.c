// SPDX-License-Identifier: MIT
/*
 * libaccel's threading rules under ThreadSanitizer, natively, over a fake
 * kernel backend (fake_kmod.h): a device, its buffers and signals used
 * from any thread; a queue fed by one producer while other threads read
 * accel_queue_completed(), accel_queue_status() and accel_queue_describe();
 * a thread playing the engine; and two devices joined by PRIME exports and
 * imports, sealing, cross-device WAITs and the fake's own engine thread,
 * which sleeps so that submissions KICK it (two_devices). The device's
 * memory accesses (the packet core's COPY and FILL, signal updates) are
 * seen by TSan, so a host access that nothing orders with them is
 * reported too. Built with -fsanitize=thread: any report ends the test
 * process with exit code 66 (__tsan_default_options below), which fails
 * the test.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fake_kmod.h"
#include "kselftest_harness.h"

const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "halt_on_error=1:exitcode=66:second_deadlock_stack=1";
}

#define WORKERS		4
#define WORKER_ITERS	2000
#define PRODUCERS	2
#define READERS		2
#define PACKETS		30000
#define MAILS		8	/* see worker(): how far a neighbour can run ahead, and more */
#define SEC		1000000000ll

/* accel_tg_get_stats() with the size set */
static void tg_stats(const struct accel_tg *tg, struct accel_tg_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	if (accel_tg_get_stats(tg, st))
		abort();
}

static struct accel_device *dev;
static struct accel_signal *box[WORKERS];
static uint64_t mail[WORKERS][MAILS];	/* plain: ordered by the box signals */
static struct accel_queue *queues[PRODUCERS];
static int stop_engine, producers_left;
static unsigned int failures, describes;

#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);	\
			fprintf(stderr, "# %s:%d: %s: ", __func__, __LINE__, #cond);	\
			fprintf(stderr, __VA_ARGS__);				\
			fprintf(stderr, "\n");					\
			return NULL;						\
		}								\
	} while (0)

static void *engine(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_engine, __ATOMIC_RELAXED))
		if (!fake_engine_step(32))
			nanosleep(&(struct timespec){ 0, 5000 }, NULL);
	return NULL;
}

/* @n NOPs, a record waited for, a sync: on a queue of its own. */
static void *short_queue(int n)
{
	struct accel_queue_params params = { .size = sizeof(params), .ring_size = 16 };
	struct drm_vaccel_packet *p;
	struct accel_queue *q;
	struct accel_event ev;
	int i, ret;

	ret = accel_queue_create(dev, &params, &q);
	CHECK(!ret, "queue_create: %d", ret);
	for (i = 0; i < n; i++) {
		while (!(p = accel_queue_get_packet(q))) {
			ret = accel_queue_submit(q);
			CHECK(ret >= 0, "submit: %d", ret);
			ret = accel_queue_reserve(q, 1, 5 * SEC);
			CHECK(!ret, "reserve: %d", ret);
		}
		accel_prep_nop(p);
	}
	ret = accel_queue_submit(q);
	CHECK(ret > 0, "submit: %d", ret);
	ret = accel_queue_reserve(q, 1, 5 * SEC);
	CHECK(!ret, "reserve: %d", ret);
	ret = accel_queue_record(q, &ev);
	CHECK(!ret, "record: %d", ret);
	ret = accel_queue_submit(q);
	CHECK(ret > 0, "submit: %d", ret);
	ret = accel_event_wait(&ev, 5 * SEC);
	CHECK(!ret, "event_wait on the record: %d", ret);
	ret = accel_queue_sync(q, 5 * SEC);
	CHECK(!ret, "sync: %d", ret);
	CHECK(accel_queue_completed(q) == accel_queue_submitted(q), "completed %llu of %llu",
	      (unsigned long long)accel_queue_completed(q),
	      (unsigned long long)accel_queue_submitted(q));
	accel_queue_destroy(q);
	return NULL;
}

/*
 * Buffers, signals, memory use and a short-lived queue, and a ring of
 * event waits: worker i raises box[i] to k and waits for box[i + 1] >= k
 * and box[i + 2] >= k - 1, so no worker runs more than WORKERS - 1
 * iterations ahead of another; the mail it then reads was written before
 * the neighbour's raise (the event wait orders it, as a kernel would).
 */
static void *worker(void *arg)
{
	unsigned int i = (unsigned int)(uintptr_t)arg, seed = i, next = (i + 1) % WORKERS;
	struct accel_buffer *b;
	struct accel_signal *s;
	struct accel_event evs[2];
	uint64_t k, v, used, size;
	unsigned char *host;
	void *ptr;
	int ret;

	for (k = 1; k <= WORKER_ITERS; k++) {
		size = FAKE_PAGE * (1 + rand_r(&seed) % 8);
		ret = accel_buffer_create(dev, size, k & 1 ? ACCEL_BUFFER_HOST : 0, &b);
		CHECK(!ret, "buffer_create %llu: %d", (unsigned long long)size, ret);
		CHECK(accel_buffer_va(b) >= FAKE_VA_START &&
		      accel_buffer_va(b) + size <= FAKE_VA_START + FAKE_VA_SIZE, "va 0x%llx",
		      (unsigned long long)accel_buffer_va(b));
		ret = accel_buffer_map(b, &ptr);
		CHECK(!ret, "buffer_map: %d", ret);
		host = ptr;
		CHECK(!host[0] && !host[size - 1], "a new buffer is not zero");
		memset(host, (int)i + 1, size);
		CHECK(host[size / 2] == i + 1, "buffer contents");
		ret = accel_device_memory_used(dev, &used);
		CHECK(!ret && used >= size && used <= FAKE_CAPACITY, "memory_used %d %llu", ret,
		      (unsigned long long)used);
		accel_buffer_destroy(b);

		ret = accel_signal_create(dev, &s);
		CHECK(!ret, "signal_create: %d", ret);
		v = accel_signal_read(s);
		CHECK(accel_signal_next(s) == v + 1, "signal_next");
		ret = accel_signal_write(s, DRM_VACCEL_SIGNAL_SET, v + 1);
		CHECK(!ret, "signal_write: %d", ret);
		CHECK(accel_signal_read(s) == v + 1, "signal_read");
		if (!(k % 16)) {
			/* nobody raises it: spin, then time out in WAIT_SIGNALS */
			evs[0] = (struct accel_event){ .signal = s, .value = v + 2 };
			ret = accel_event_wait(&evs[0], 50000);
			CHECK(ret == -ETIMEDOUT, "event_wait on a silent signal: %d", ret);
		}
		accel_signal_destroy(s);

		mail[i][k % MAILS] = k;
		ret = accel_signal_write(box[i], DRM_VACCEL_SIGNAL_MAX, k);
		CHECK(!ret, "signal_write box: %d", ret);
		evs[0] = (struct accel_event){ .signal = box[next], .value = k };
		evs[1] = (struct accel_event){ .signal = box[(i + 2) % WORKERS], .value = k - 1 };
		ret = accel_events_wait(evs, 2, ACCEL_WAIT_ALL, 5 * SEC, NULL);
		CHECK(!ret, "events_wait for boxes %u, %u at %llu: %d", next, (i + 2) % WORKERS,
		      (unsigned long long)k, ret);
		CHECK(mail[next][k % MAILS] == k, "mail of %u: %llu at %llu", next,
		      (unsigned long long)mail[next][k % MAILS], (unsigned long long)k);

		if (!(k % 100))
			short_queue(40 + (int)i);
	}
	return NULL;
}

/* One queue, one producer: NOPs in batches, a record waited for now and then. */
static void *produce(void *arg)
{
	struct accel_queue *q = queues[(uintptr_t)arg];
	struct drm_vaccel_packet *p;
	struct accel_event ev;
	unsigned int n;
	int ret;

	for (n = 1; n <= PACKETS; n++) {
		while (!(p = accel_queue_get_packet(q))) {
			ret = accel_queue_submit(q);
			CHECK(ret >= 0, "submit: %d", ret);
			ret = accel_queue_reserve(q, 1, 5 * SEC);
			CHECK(!ret, "reserve: %d", ret);
		}
		accel_prep_nop(p);
		if (!(n % 8)) {
			ret = accel_queue_submit(q);
			CHECK(ret > 0, "submit: %d", ret);
		}
		if (!(n % 1000)) {
			ret = accel_queue_reserve(q, 1, 5 * SEC);
			CHECK(!ret, "reserve: %d", ret);
			ret = accel_queue_record(q, &ev);
			CHECK(!ret, "record: %d", ret);
			ret = accel_queue_submit(q);
			CHECK(ret > 0, "submit: %d", ret);
			ret = accel_event_wait(&ev, 5 * SEC);
			CHECK(!ret, "event_wait on the record: %d", ret);
		}
	}
	ret = accel_queue_submit(q);
	CHECK(ret >= 0, "submit: %d", ret);
	ret = accel_queue_sync(q, 5 * SEC);
	CHECK(!ret, "sync: %d", ret);
	CHECK(accel_queue_completed(q) == accel_queue_submitted(q), "completed %llu of %llu",
	      (unsigned long long)accel_queue_completed(q),
	      (unsigned long long)accel_queue_submitted(q));
	return NULL;
}

static void *producer(void *arg)
{
	produce(arg);
	__atomic_fetch_sub(&producers_left, 1, __ATOMIC_RELAXED);	/* even on a failure */
	return NULL;
}

/* Queue state from another thread than the producer's. */
static void *reader(void *arg)
{
	uint64_t last[PRODUCERS] = { 0 }, c;
	struct accel_queue_fault f;
	unsigned int j, round;
	char buf[4096];
	int ret;

	(void)arg;
	for (round = 0; __atomic_load_n(&producers_left, __ATOMIC_RELAXED); round++) {
		for (j = 0; j < PRODUCERS; j++) {
			c = accel_queue_completed(queues[j]);
			CHECK(c >= last[j], "completed went back from %llu to %llu",
			      (unsigned long long)last[j], (unsigned long long)c);
			last[j] = c;
			ret = accel_queue_status(queues[j], &f, sizeof(f));
			CHECK(!ret, "status: %d", ret);
			if (round % 4)
				continue;
			ret = accel_queue_describe(queues[j], buf, sizeof(buf));
			CHECK(ret > 0 && (size_t)ret < sizeof(buf), "describe: %d", ret);
			CHECK(strstr(buf, "on fake") && strstr(buf, ", running\n") &&
			      strstr(buf, "operations (oldest first"), "describe:\n%s", buf);
			__atomic_fetch_add(&describes, 1, __ATOMIC_RELAXED);
		}
		sched_yield();
	}
	return NULL;
}

static void start(pthread_t *t, void *(*fn)(void *), uintptr_t arg)
{
	if (pthread_create(t, NULL, fn, (void *)arg))
		abort();
}

TEST(shared_device)
{
	struct accel_queue_params params = { .size = sizeof(params), .ring_size = 64 };
	pthread_t eng, work[WORKERS], prod[PRODUCERS], rd[READERS];
	int64_t t0 = fake_now();
	uint64_t used;
	unsigned int i;

	setenv("ACCEL_SPIN_NS", "1000", 1);	/* reach WAIT_SIGNALS often */
	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake", &dev));
	for (i = 0; i < WORKERS; i++)
		ASSERT_EQ(0, accel_signal_create(dev, &box[i]));
	for (i = 0; i < PRODUCERS; i++)
		ASSERT_EQ(0, accel_queue_create(dev, &params, &queues[i]));
	producers_left = PRODUCERS;

	start(&eng, engine, 0);
	for (i = 0; i < PRODUCERS; i++)
		start(&prod[i], producer, i);
	for (i = 0; i < READERS; i++)
		start(&rd[i], reader, i);
	for (i = 0; i < WORKERS; i++)
		start(&work[i], worker, i);
	for (i = 0; i < WORKERS; i++)
		pthread_join(work[i], NULL);
	for (i = 0; i < PRODUCERS; i++)
		pthread_join(prod[i], NULL);
	for (i = 0; i < READERS; i++)
		pthread_join(rd[i], NULL);
	__atomic_store_n(&stop_engine, 1, __ATOMIC_RELAXED);
	pthread_join(eng, NULL);

	ASSERT_EQ(0, failures);
	for (i = 0; i < PRODUCERS; i++)
		ASSERT_LE(PACKETS, accel_queue_completed(queues[i]));
	ASSERT_LE(PRODUCERS * PACKETS, fake_packets_run);
	ASSERT_LT(0, describes);
	ASSERT_LT(0, fake_waits);	/* some waits slept in the "kernel" */
	ASSERT_LE(WORKERS * WORKER_ITERS * 2, fake_signal_writes);
	for (i = 0; i < PRODUCERS; i++)
		accel_queue_destroy(queues[i]);
	for (i = 0; i < WORKERS; i++)
		accel_signal_destroy(box[i]);
	/* what is left: the signal pages */
	ASSERT_EQ(0, accel_device_memory_used(dev, &used));
	ASSERT_EQ(used, fake_mem_used(0));
	accel_device_close(dev);
	ASSERT_EQ(0, fake_mem_used(0));
	TH_LOG("%.1f s, %llu packets, %u describes, %llu WAIT_SIGNALS",
	       (double)(fake_now() - t0) / 1e9, (unsigned long long)fake_packets_run, describes,
	       (unsigned long long)fake_waits);
}

/* A faulted queue: the producer and two readers all see it. */
static struct accel_queue *faulted;

static void *fault_reader(void *arg)
{
	int64_t deadline = fake_now() + 5 * SEC;
	struct accel_queue_fault f;
	unsigned int seen;
	char buf[4096];
	int ret;

	(void)arg;
	for (seen = 0; seen < 100; seen++) {
		ret = accel_queue_status(faulted, &f, sizeof(f));
		if (!ret) {
			CHECK(fake_now() < deadline, "no fault seen in 5 s");
			seen--;
			sched_yield();
			continue;
		}
		CHECK(ret == -EIO && f.code == DRM_VACCEL_FAULT_BAD_PACKET, "status %d code %u",
		      ret, f.code);
		ret = accel_queue_describe(faulted, buf, sizeof(buf));
		CHECK(ret > 0 && strstr(buf, "FAULTED") && strstr(buf, "fault BAD_PACKET"),
		      "describe:\n%s", buf);
	}
	return NULL;
}

TEST(faulted_queue)
{
	pthread_t eng, rd[READERS];
	struct drm_vaccel_packet *p;
	struct accel_queue_fault f;
	unsigned int i, n;
	int ret = 0;

	accel_log_set_level(ACCEL_LOG_NONE);	/* the fault report is expected */
	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake", &dev));
	ASSERT_EQ(0, accel_queue_create(dev, NULL, &faulted));
	start(&eng, engine, 0);
	for (i = 0; i < READERS; i++)
		start(&rd[i], fault_reader, i);
	for (n = 0; n < 8; n++) {
		p = accel_queue_get_packet(faulted);
		ASSERT_NE(NULL, p);
		accel_prep_nop(p);
		if (n == 5)
			p->header = 0xff;	/* an unknown type: BAD_PACKET */
	}
	ASSERT_EQ(8, accel_queue_submit(faulted));
	for (n = 0; n < 100000 && (ret = accel_queue_submit(faulted)) >= 0; n++) {
		p = accel_queue_get_packet(faulted);
		if (p)
			accel_prep_nop(p);
		sched_yield();
	}
	ASSERT_EQ(-EIO, ret);
	for (i = 0; i < READERS; i++)
		pthread_join(rd[i], NULL);
	__atomic_store_n(&stop_engine, 1, __ATOMIC_RELAXED);
	pthread_join(eng, NULL);
	ASSERT_EQ(0, failures);
	ASSERT_EQ(-EIO, accel_queue_status(faulted, &f, sizeof(f)));
	ASSERT_EQ(DRM_VACCEL_FAULT_BAD_PACKET, f.code);
	ASSERT_EQ(5, f.ring_index);
	ASSERT_EQ(0xff, f.packet.header);
	ASSERT_EQ(5, accel_queue_completed(faulted));
	accel_queue_destroy(faulted);
	accel_device_close(dev);
}

/*
 * A buffer sealed by one thread while another maps it and reads its host
 * pointer: every field they share is read under the device lock (the seal
 * changes the mapping's protection, the binding and the sealed flag).
 */
#define SEAL_ROUNDS	300

static struct accel_buffer *_Atomic sealing;
static _Atomic int seal_round, map_round;

static void *mapper(void *arg)
{
	struct accel_buffer *b;
	void *p;
	int r, ret;

	(void)arg;
	for (r = 1; r <= SEAL_ROUNDS; r++) {
		while (atomic_load_explicit(&seal_round, memory_order_acquire) < r)
			sched_yield();
		b = atomic_load_explicit(&sealing, memory_order_relaxed);
		ret = accel_buffer_map(b, &p);
		CHECK(!ret, "map: %d", ret);
		CHECK(accel_buffer_host(b) == p, "host %p, mapped at %p", accel_buffer_host(b), p);
		CHECK(((volatile char *)p)[0] == (char)r, "contents");
		atomic_store_explicit(&map_round, r, memory_order_release);
	}
	return NULL;
}

TEST(seal_while_mapping)
{
	struct accel_buffer *b;
	pthread_t t;
	void *p;
	int r;

	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake", &dev));
	start(&t, mapper, 0);
	for (r = 1; r <= SEAL_ROUNDS; r++) {
		ASSERT_EQ(0, accel_buffer_create(dev, 8192, ACCEL_BUFFER_PERSISTENT, &b));
		ASSERT_EQ(0, accel_buffer_map(b, &p));
		((char *)p)[0] = (char)r;
		if (r % 2) {
			/* half of the rounds: the mapper maps first, then races the seal */
			atomic_store_explicit(&sealing, b, memory_order_relaxed);
			atomic_store_explicit(&seal_round, r, memory_order_release);
			ASSERT_EQ(0, accel_buffer_seal(b));
		} else {
			ASSERT_EQ(0, accel_buffer_seal(b));
			atomic_store_explicit(&sealing, b, memory_order_relaxed);
			atomic_store_explicit(&seal_round, r, memory_order_release);
		}
		while (atomic_load_explicit(&map_round, memory_order_acquire) < r)
			sched_yield();
		accel_buffer_destroy(b);
	}
	pthread_join(t, NULL);
	ASSERT_EQ(0, failures);
	accel_device_close(dev);
}

/*
 * fake_complete_all (the benchmarks' mode): every packet completes with
 * only its completion action, a WAIT that does not hold included; an EXEC
 * of a sealed buffer applies its body's SIGNALs (epoch-relative, through
 * the binding table) and completion actions; an unsealed body faults.
 */
TEST(complete_all)
{
	struct accel_buffer *body, *table, *plain;
	struct accel_signal *sig[3];
	struct drm_vaccel_packet *p, *b;
	struct accel_queue *q, *q2;
	struct accel_queue_fault f;
	uint64_t base[3], *t;
	pthread_t eng;
	unsigned int i;

	accel_log_set_level(ACCEL_LOG_NONE);	/* the fault report is expected */
	fake_complete_all = true;
	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake", &dev));
	ASSERT_EQ(0, accel_queue_create(dev, NULL, &q));
	ASSERT_EQ(0, accel_queue_create(dev, NULL, &q2));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, accel_signal_create(dev, &sig[i]));
		base[i] = accel_signal_read(sig[i]);
	}
	ASSERT_EQ(0, accel_buffer_create(dev, 4096, ACCEL_BUFFER_HOST, &table));
	t = accel_buffer_host(table);
	t[0] = accel_signal_va(sig[0]);
	t[1] = accel_signal_va(sig[1]);
	ASSERT_EQ(0, accel_buffer_create(dev, 4096, ACCEL_BUFFER_PERSISTENT | ACCEL_BUFFER_HOST,
					 &body));
	ASSERT_EQ(0, accel_buffer_create(dev, 4096, ACCEL_BUFFER_PERSISTENT | ACCEL_BUFFER_HOST,
					 &plain));
	b = accel_buffer_host(body);
	/* a WAIT that would never hold, then sig0 = max(sig0, epoch + base0 + 5) */
	accel_prep_wait(&b[0], DRM_VACCEL_BINDING_ADDR(0, 0), DRM_VACCEL_WAIT_GE, ~0ull >> 1, 0, 0);
	accel_prep_signal(&b[1], DRM_VACCEL_BINDING_ADDR(0, 0), DRM_VACCEL_SIGNAL_MAX,
			  base[0] + 5);
	b[1].flags = DRM_VACCEL_SIGNAL_F_EPOCH;
	/* a MATMUL of no descriptor at all whose completion adds 1 to sig1 */
	accel_prep_matmul(&b[2], 0, DRM_VACCEL_DTYPE_F32, 0);
	accel_prep_completion(&b[2], DRM_VACCEL_BINDING_ADDR(1, 0), DRM_VACCEL_SIGNAL_ADD, 1);
	memcpy(accel_buffer_host(plain), b, 3 * sizeof(*b));
	ASSERT_EQ(0, accel_buffer_seal(body));

	start(&eng, engine, 0);
	for (i = 0; i < 2; i++) {
		p = accel_queue_get_packet(q);
		accel_prep_exec(p, accel_buffer_va(body), 3, 100 * (i + 1));
		accel_prep_exec_bindings(p, accel_buffer_va(table), 2);
		accel_prep_completion(p, accel_signal_va(sig[2]), DRM_VACCEL_SIGNAL_ADD, 10);
	}
	p = accel_queue_get_packet(q);
	accel_prep_delay(p, 1000000000);
	accel_prep_completion(p, accel_signal_va(sig[2]), DRM_VACCEL_SIGNAL_ADD, 1);
	ASSERT_EQ(3, accel_queue_submit(q));
	ASSERT_EQ(0, accel_queue_sync(q, 5 * SEC));
	EXPECT_EQ(base[0] + 205, accel_signal_read(sig[0]));
	EXPECT_EQ(base[1] + 2, accel_signal_read(sig[1]));
	EXPECT_EQ(base[2] + 21, accel_signal_read(sig[2]));

	p = accel_queue_get_packet(q2);
	accel_prep_exec(p, accel_buffer_va(plain), 3, 1);
	accel_prep_exec_bindings(p, accel_buffer_va(table), 2);
	ASSERT_EQ(1, accel_queue_submit(q2));
	for (i = 0; i < 5000 && !accel_queue_status(q2, &f, sizeof(f)); i++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	__atomic_store_n(&stop_engine, 1, __ATOMIC_RELAXED);
	pthread_join(eng, NULL);
	ASSERT_EQ(-EIO, accel_queue_status(q2, &f, sizeof(f)));
	EXPECT_EQ(DRM_VACCEL_FAULT_BAD_PACKET, f.code);
	EXPECT_EQ(base[0] + 205, accel_signal_read(sig[0]));

	accel_buffer_destroy(plain);
	accel_buffer_destroy(body);
	accel_buffer_destroy(table);
	for (i = 0; i < 3; i++)
		accel_signal_destroy(sig[i]);
	accel_queue_destroy(q2);
	accel_queue_destroy(q);
	accel_device_close(dev);
	EXPECT_EQ(0, fake_mem_used(0));
}

/*
 * The task graph's host-task worker against the submitting thread: the
 * worker runs host tasks (and writes their trace records and the host
 * timeline) while the main thread submits device and host tasks, maps
 * tensors, reads statistics and writes traces. Over fake_complete_all, so
 * this checks the threads' synchronisation, not the dependency order (the
 * VM tests do that).
 */
static _Atomic unsigned int host_runs;

static void host_bump(void *arg)
{
	unsigned int *cell = arg;

	(*cell)++;	/* plain: ordered by the host timeline and its waits */
	atomic_fetch_add(&host_runs, 1);
}

TEST(taskgraph_worker)
{
	struct accel_tg_params params = { .size = sizeof(params), .queues_per_device = 2,
					  .flags = ACCEL_TG_TRACE };
	struct accel_tensor x, y;
	struct accel_buffer *buf;
	struct accel_tg_stats st;
	struct accel_task t;
	struct accel_tg *tg;
	unsigned int cell = 0, i;
	uint64_t shape = 256;
	FILE *devnull;
	pthread_t eng;
	void *m;

	fake_complete_all = true;
	stop_engine = 0;
	atomic_store(&host_runs, 0);
	devnull = fopen("/dev/null", "w");
	ASSERT_NE(NULL, devnull);
	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake", &dev));
	ASSERT_EQ(0, accel_tg_create(&dev, 1, &params, &tg));
	ASSERT_EQ(0, accel_buffer_create(dev, 4096, ACCEL_BUFFER_HOST, &buf));
	ASSERT_EQ(0, accel_tensor_init(&x, buf, 0, ACCEL_DTYPE_U8, 1, &shape));
	ASSERT_EQ(0, accel_tensor_init(&y, buf, 1024, ACCEL_DTYPE_U8, 1, &shape));
	start(&eng, engine, 0);
	ASSERT_EQ(0, accel_tg_start_worker(tg));
	ASSERT_EQ(-EBUSY, accel_tg_start_worker(tg));
	for (i = 0; i < 2000; i++) {
		accel_task_prep_delay(&t, 0);
		accel_task_arg(&t, &x, ACCEL_OUTPUT);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		accel_task_prep_host(&t, host_bump, &cell);
		accel_task_arg(&t, &x, ACCEL_INPUT);
		accel_task_arg(&t, &y, ACCEL_OUTPUT);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		accel_task_prep_delay(&t, 0);
		accel_task_arg(&t, &y, ACCEL_INPUT);
		ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
		if (i % 100 == 0) {
			ASSERT_EQ(0, accel_tg_map(tg, &y, ACCEL_MAP_READ, 5 * SEC, &m));
			ASSERT_EQ(0, accel_tg_unmap(tg, m));
			tg_stats(tg, &st);
			ASSERT_LE(0, accel_tg_trace_write(tg, devnull));
		}
	}
	/*
	 * A host task is counted before it completes: with the worker held
	 * 50 ms after its last SIGNAL_WRITE, sync still sees it counted.
	 */
	__atomic_store_n(&fake_signal_write_delay_us, 50000, __ATOMIC_RELAXED);
	accel_task_prep_host(&t, host_bump, &cell);
	accel_task_arg(&t, &y, ACCEL_OUTPUT);
	ASSERT_EQ(0, accel_tg_submit(tg, &t, NULL));
	ASSERT_EQ(0, accel_tg_sync(tg, 10 * SEC));
	tg_stats(tg, &st);
	__atomic_store_n(&fake_signal_write_delay_us, 0, __ATOMIC_RELAXED);
	ASSERT_EQ(2001, atomic_load(&host_runs));
	ASSERT_EQ(2001, cell);
	ASSERT_EQ(6001, st.tasks);
	ASSERT_EQ(2001, st.host_tasks);
	ASSERT_LT(0, accel_tg_trace_write(tg, devnull));
	accel_tg_destroy(tg);
	__atomic_store_n(&stop_engine, 1, __ATOMIC_RELAXED);
	pthread_join(eng, NULL);
	accel_buffer_destroy(buf);
	accel_device_close(dev);
	fclose(devnull);
	fake_complete_all = false;
	EXPECT_EQ(0, fake_mem_used(0));
}

/*
 * Two devices, the paths that join them, from several threads at once,
 * with the fake's engine thread blocking queues on WAITs and sleeping
 * after its poll budget (NEED_WAKEUP, so submissions KICK it):
 *  - two threads, each with its own task graph over both devices and a
 *    host-task worker: cross-device tasks (the library exports buffers and
 *    signal pages and imports them on the other device), cross-queue
 *    WAITs, host tasks, maps, and graphs captured, instantiated (sealed
 *    bodies), launched with buffers rebound and destroyed;
 *  - a thread sharing buffers and signals the other way by hand: exports,
 *    imports, seals (refused while an import can write), read-only
 *    imports of sealed buffers, queue WAITs on another device's signal.
 */
#define TG_THREADS	2
#define TG_ROUNDS	600
#define SHARE_ROUNDS	400

static struct accel_device *devs2[2];

static void host_touch(void *arg)
{
	uint8_t *p = arg;

	p[0]++;	/* plain: the task graph orders host tasks on one buffer */
}

static void *tg_thread(void *arg)
{
	struct accel_tg_params params = { .size = sizeof(params), .queues_per_device = 2,
					  .timeout_ns = 20 * SEC };
	unsigned int me = (unsigned int)(uintptr_t)arg, i, k;
	struct accel_buffer *b[2][2], *hostb;
	struct accel_tensor x[2][2], h;
	struct accel_graph_exec *ge;
	struct accel_binding bind;
	struct accel_graph *g;
	struct accel_task t;
	struct accel_tg *tg;
	uint64_t shape = 4096;
	void *m, *hp;
	int ret;

	ret = accel_tg_create(devs2, 2, &params, &tg);
	CHECK(!ret, "tg_create: %d", ret);
	ret = accel_tg_start_worker(tg);
	CHECK(!ret, "start_worker: %d", ret);
	for (k = 0; k < 2; k++)
		for (i = 0; i < 2; i++) {
			ret = accel_buffer_create(devs2[k], 4096, 0, &b[k][i]);
			CHECK(!ret, "buffer_create: %d", ret);
			accel_tensor_init(&x[k][i], b[k][i], 0, ACCEL_DTYPE_U8, 1, &shape);
		}
	ret = accel_buffer_create(devs2[me % 2], 4096, ACCEL_BUFFER_HOST, &hostb);
	CHECK(!ret, "buffer_create: %d", ret);
	hp = accel_buffer_host(hostb);
	accel_tensor_init(&h, hostb, 0, ACCEL_DTYPE_U8, 1, &shape);
	for (i = 0; i < TG_ROUNDS; i++) {
		/* device 0's buffer into device 1's, on device 1: an import */
		accel_task_prep_copy(&t, &x[1][0], &x[0][0], ACCEL_OUTPUT);
		t.device = 1;
		ret = accel_tg_submit(tg, &t, NULL);
		CHECK(!ret, "copy: %d", ret);
		/* and back, on device 0, after it (a WAIT on device 1's timeline) */
		accel_task_prep_copy(&t, &x[0][1], &x[1][0], ACCEL_OUTPUT);
		t.device = 0;
		ret = accel_tg_submit(tg, &t, NULL);
		CHECK(!ret, "copy back: %d", ret);
		accel_task_prep_fill(&t, &x[0][0], ACCEL_OUTPUT, i);
		ret = accel_tg_submit(tg, &t, NULL);
		CHECK(!ret, "fill: %d", ret);
		accel_task_prep_host(&t, host_touch, hp);
		accel_task_arg(&t, &x[0][1], ACCEL_INPUT);
		accel_task_arg(&t, &h, ACCEL_INOUT);
		ret = accel_tg_submit(tg, &t, NULL);
		CHECK(!ret, "host: %d", ret);
		if (i % 10 == 5) {
			ret = accel_tg_map(tg, &x[1][0], ACCEL_MAP_READ, 20 * SEC, &m);
			CHECK(!ret, "map: %d", ret);
			ret = accel_tg_unmap(tg, m);
			CHECK(!ret, "unmap: %d", ret);
		}
		if (i % 25 == 0) {
			ret = accel_tg_capture_begin(tg);
			CHECK(!ret, "capture: %d", ret);
			accel_task_prep_fill(&t, &x[1][1], ACCEL_OUTPUT, 7);
			t.device = 1;
			ret = accel_tg_submit(tg, &t, NULL);
			CHECK(!ret, "capture fill: %d", ret);
			accel_task_prep_copy(&t, &x[0][1], &x[1][1], ACCEL_OUTPUT);
			t.device = 0;
			ret = accel_tg_submit(tg, &t, NULL);
			CHECK(!ret, "capture copy: %d", ret);
			accel_task_prep_host(&t, host_touch, hp);
			accel_task_arg(&t, &x[0][1], ACCEL_INPUT);
			accel_task_arg(&t, &h, ACCEL_INOUT);
			ret = accel_tg_submit(tg, &t, NULL);
			CHECK(!ret, "capture host: %d", ret);
			ret = accel_tg_capture_end(tg, &g);
			CHECK(!ret, "capture_end: %d", ret);
			ret = accel_graph_instantiate(g, &ge);
			CHECK(!ret, "instantiate: %d", ret);
			accel_graph_destroy(g);
			for (k = 0; k < 6; k++) {
				bind = (struct accel_binding){ .from = b[1][1], .to = b[1][k % 2] };
				ret = accel_graph_launch(ge, k % 2 ? NULL : &bind, k % 2 ? 0 : 1);
				CHECK(!ret, "launch: %d", ret);
			}
			accel_graph_exec_destroy(ge);
		}
	}
	ret = accel_tg_sync(tg, 20 * SEC);
	CHECK(!ret, "sync: %d", ret);
	accel_tg_destroy(tg);
	for (k = 0; k < 2; k++)
		for (i = 0; i < 2; i++)
			accel_buffer_destroy(b[k][i]);
	accel_buffer_destroy(hostb);
	return NULL;
}

static void *share_thread(void *arg)
{
	struct accel_buffer *p, *imp;
	struct accel_signal *s;
	struct accel_queue *q;
	struct accel_event ev;
	unsigned int i;
	int fd, ret;

	(void)arg;
	ret = accel_queue_create(devs2[1], NULL, &q);
	CHECK(!ret, "queue_create: %d", ret);
	ret = accel_signal_create(devs2[0], &s);
	CHECK(!ret, "signal_create: %d", ret);
	for (i = 0; i < SHARE_ROUNDS; i++) {
		ret = accel_buffer_create(devs2[0], 8192, ACCEL_BUFFER_PERSISTENT | ACCEL_BUFFER_HOST,
					  &p);
		CHECK(!ret, "buffer_create: %d", ret);
		memset(accel_buffer_host(p), (int)i, 8192);
		ret = accel_buffer_export(p, 0, &fd);
		CHECK(!ret, "export: %d", ret);
		ret = accel_buffer_import(devs2[1], fd, 0, &imp);
		CHECK(!ret, "import: %d", ret);
		ret = accel_buffer_seal(p);
		CHECK(ret == -EBUSY, "seal with a writable import: %d", ret);
		accel_buffer_destroy(imp);
		ret = accel_buffer_seal(p);
		CHECK(!ret, "seal: %d", ret);
		ret = accel_buffer_import(devs2[1], fd, 0, &imp);
		CHECK(!ret && imp->read_only, "import of a sealed buffer: %d", ret);
		close(fd);
		accel_buffer_destroy(imp);
		accel_buffer_destroy(p);
		/* a queue of device 1 waits for device 0's signal, raised by the host */
		ev = (struct accel_event){ .signal = s, .value = accel_signal_read(s) + 1 };
		ret = accel_queue_wait_event(q, &ev);
		CHECK(!ret, "wait_event: %d", ret);
		ret = accel_queue_record(q, &ev);
		CHECK(!ret, "record: %d", ret);
		ret = accel_queue_submit(q);
		CHECK(ret > 0, "submit: %d", ret);
		if (i % 2)
			usleep(100);
		ret = accel_signal_write(s, DRM_VACCEL_SIGNAL_ADD, 1);
		CHECK(!ret, "signal_write: %d", ret);
		ret = accel_event_wait(&ev, 10 * SEC);
		CHECK(!ret, "event_wait: %d", ret);
	}
	accel_signal_destroy(s);
	accel_queue_destroy(q);
	return NULL;
}

TEST(two_devices)
{
	struct fake_engine_params ep = { .seed = 11, .poll_ns = 20000, .max_burst = 4 };
	uint64_t kicks = fake_kicks, sleeps = fake_sleeps, waits = fake_waits;
	pthread_t tgs[TG_THREADS], share;
	int64_t t0 = fake_now();
	unsigned int i;

	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake0", &devs2[0]));
	ASSERT_EQ(0, acc_device_open_ops(&fake_ops, "fake1", &devs2[1]));
	ASSERT_EQ(0, fake_engine_start(&ep));
	for (i = 0; i < TG_THREADS; i++)
		start(&tgs[i], tg_thread, i);
	start(&share, share_thread, 0);
	for (i = 0; i < TG_THREADS; i++)
		pthread_join(tgs[i], NULL);
	pthread_join(share, NULL);
	fake_engine_stop();
	ASSERT_EQ(0, failures);
	EXPECT_LT(kicks, fake_kicks);
	EXPECT_LT(sleeps, fake_sleeps);
	EXPECT_LT(waits, fake_waits);
	accel_device_close(devs2[1]);
	accel_device_close(devs2[0]);
	EXPECT_EQ(0, fake_mem_used(0));
	EXPECT_EQ(0, fake_mem_used(1));
	TH_LOG("%.1f s, %llu packets, %llu kicks, %llu engine sleeps, %llu WAIT_SIGNALS",
	       (double)(fake_now() - t0) / 1e9, (unsigned long long)fake_packets_run,
	       (unsigned long long)(fake_kicks - kicks), (unsigned long long)(fake_sleeps - sleeps),
	       (unsigned long long)(fake_waits - waits));
}

TEST_HARNESS_MAIN
