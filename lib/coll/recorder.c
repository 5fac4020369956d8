// SPDX-License-Identifier: MIT
/*
 * The flight recorder of a communicator: each rank's last N operations in
 * a ring, written as versioned, self-describing JSON (format
 * "accel-comm-trace", version 1) on request (accel_comm_dump()) and, once,
 * when the communicator fails (timeout, abort, mismatch) into the trace
 * directory. tools/accel-comm-trace merges the files of all ranks.
 *
 * Locking: the ring of a rank is written by the thread issuing on that
 * rank and read by dumps, both under group->lock, which the issue path
 * holds anyway to take its sequence number: recording adds one clock read
 * and a copy of one entry to a call. A failure's dumps are rendered in
 * memory under the lock (group->rec_pending) and written to the trace
 * directory by acc_group_unlock() once the lock is released: no file I/O
 * while other ranks (and other processes) wait for the lock.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "coll.h"

#define REC_DEF_OPS	256u
#define REC_FORMAT	"accel-comm-trace"
#define REC_VERSION	1

int acc_rec_settings(struct acc_group *g, const struct accel_comm_params *p)
{
	const char *env, *dir = p->trace_dir;
	uint32_t ops = p->recorder_ops;

	if (ops == 0) {
		ops = REC_DEF_OPS;
		env = getenv("ACCEL_COMM_RECORDER_OPS");
		if (env && *env) {
			char *end;
			unsigned long v = strtoul(env, &end, 10);

			if (*end || v > ACCEL_COMM_RECORDER_MAX) {
				acc_err("comm_init: ACCEL_COMM_RECORDER_OPS=%s: not 0 to %u", env,
					ACCEL_COMM_RECORDER_MAX);
				return -EINVAL;
			}
			ops = v ? (uint32_t)v : ACCEL_COMM_RECORDER_OFF;
		}
	} else if (ops != ACCEL_COMM_RECORDER_OFF && ops > ACCEL_COMM_RECORDER_MAX) {
		acc_err("comm_init: accel_comm_params.recorder_ops %u: not 1 to %u (or OFF)", ops,
			ACCEL_COMM_RECORDER_MAX);
		return -EINVAL;
	}
	g->rec_ops = ops == ACCEL_COMM_RECORDER_OFF ? 0 : ops;
	if (!dir) {
		env = getenv("ACCEL_COMM_TRACE_DIR");
		dir = env && *env ? env : NULL;
	}
	if (dir) {
		g->rec_dir = strdup(dir);
		if (!g->rec_dir)
			return -ENOMEM;
	}
	if (getrandom(&g->rec_id, sizeof(g->rec_id), GRND_NONBLOCK) != sizeof(g->rec_id))
		g->rec_id = (uint64_t)acc_now_ns() ^ ((uint64_t)getpid() << 32) ^
			    (uint64_t)(uintptr_t)g;
	return 0;
}

void acc_rec_group_fini(struct acc_group *g)
{
	struct acc_rec_doc *docs = g->rec_pending;

	/* none left: acc_group_unlock() writes them; never lose one if it did not */
	g->rec_pending = NULL;
	acc_rec_write_docs(docs);
	free(g->rec_dir);
	g->rec_dir = NULL;
}

/* Test hook (hidden): the next recorder allocation of this process fails. */
bool acc_comm_test_rec_nomem;

int acc_rec_init(struct accel_comm *c)
{
	c->rec.cap = c->g->rec_ops;
	if (!c->rec.cap)
		return 0;
	if (acc_comm_test_rec_nomem) {
		acc_comm_test_rec_nomem = false;
		return -ENOMEM;
	}
	c->rec.e = calloc(c->rec.cap, sizeof(*c->rec.e));
	return c->rec.e ? 0 : -ENOMEM;
}

void acc_rec_fini(struct accel_comm *c)
{
	free(c->rec.e);
	c->rec.e = NULL;
}

void acc_rec_add(struct accel_comm *c, const struct acc_call *call, int64_t issued_ns,
		 struct accel_queue *q, uint64_t gate, const struct accel_event *ev, int error)
{
	struct acc_rec_entry *e;

	if (!c->rec.e)
		return;
	e = &c->rec.e[c->rec.n % c->rec.cap];
	e->call = *call;
	e->issued_ns = issued_ns;
	e->end_ns = error ? issued_ns : 0;
	if (ev && !error) {
		e->ev = *ev;
	} else {
		e->ev.signal = NULL;
		e->ev.value = 0;
	}
	e->q = q;
	e->qid = q ? q->id : 0;
	e->state = error ? ACC_REC_FAILED : ACC_REC_ISSUED;
	e->error = error;
	e->gate = gate;
	c->rec.n++;
}

void acc_rec_end(struct accel_comm *c, uint64_t n, int error)
{
	struct acc_rec_entry *e;

	if (!c->rec.e || c->rec.n <= n || c->rec.n - n > c->rec.cap)
		return;
	e = &c->rec.e[n % c->rec.cap];
	e->end_ns = acc_now_ns();
	e->state = error ? ACC_REC_FAILED : ACC_REC_DONE;
	e->error = error;
}

void acc_rec_done(struct accel_comm *c, const struct accel_event *ev)
{
	uint64_t i, lo;
	int64_t now;

	if (!c->rec.e || !ev->signal)
		return;
	now = acc_now_ns();
	acc_group_lock(c->g);
	lo = c->rec.n > c->rec.cap ? c->rec.n - c->rec.cap : 0;
	for (i = c->rec.n; i > lo; i--) {
		struct acc_rec_entry *e = &c->rec.e[(i - 1) % c->rec.cap];

		if (e->ev.signal != ev->signal || e->ev.value != ev->value)
			continue;
		if (e->state != ACC_REC_FAILED && e->state != ACC_REC_DONE) {
			e->state = ACC_REC_DONE;
			e->end_ns = now;
		}
		break;
	}
	acc_group_unlock(c->g);
}

void acc_rec_not_done(struct accel_comm *c, const struct accel_event *ev, int64_t waited_ns)
{
	struct acc_rec_entry e = { 0 };
	char call[128], where[512] = "";
	uint64_t i, lo;
	bool found = false;

	if (!acc_log_enabled(ACCEL_LOG_WARN))
		return;
	acc_group_lock(c->g);
	lo = c->rec.e && c->rec.n > c->rec.cap ? c->rec.n - c->rec.cap : 0;
	for (i = c->rec.e ? c->rec.n : 0; i > lo; i--) {
		e = c->rec.e[(i - 1) % c->rec.cap];
		if (e.ev.signal == ev->signal && e.ev.value == ev->value) {
			found = true;
			break;
		}
	}
	if (found && e.q && acc_comm_queue_alive(c->dev, e.q, e.qid))
		acc_queue_where(e.q, where, sizeof(where));
	acc_group_unlock(c->g);
	if (!found) {
		acc_warn("comm %p rank %u: accel_comm_wait(): event (signal 0x%llx, value %llu) "
			 "not done after %lld ms; not one of the communicator's last operations",
			 (void *)c->g, c->rank, (unsigned long long)accel_signal_va(ev->signal),
			 (unsigned long long)ev->value, (long long)(waited_ns / 1000000));
		return;
	}
	acc_call_describe(&e.call, call, sizeof(call));
	acc_warn("comm %p rank %u: accel_comm_wait(): %s seq %llu (algorithm %s) not done after "
		 "%lld ms, issued %lld ms ago; the communicator has not failed (its timeout, %llu ms, "
		 "counts per device wait); %s", (void *)c->g, c->rank, call,
		 (unsigned long long)e.call.seq, acc_algo_name(e.call.algo),
		 (long long)(waited_ns / 1000000),
		 (long long)((acc_now_ns() - e.issued_ns) / 1000000),
		 (unsigned long long)(c->g->timeout_ns / 1000000),
		 where[0] ? where : "its queue is gone");
}

/*
 * Bring an entry's state up to date from its queue (group->lock held):
 * done when its event is, failed when its queue stopped before it
 * completed, running once the queue has completed its first packet.
 */
static void rec_refresh(struct accel_comm *c, struct acc_rec_entry *e, int64_t now)
{
	struct accel_queue_fault f;
	int gerr;

	if (e->state == ACC_REC_DONE || e->state == ACC_REC_FAILED || !e->q ||
	    !acc_comm_queue_alive(c->dev, e->q, e->qid))
		return;
	if (e->ev.signal && accel_event_done(&e->ev)) {
		e->state = ACC_REC_DONE;
		e->end_ns = now;
		return;
	}
	if (accel_queue_status(e->q, &f, sizeof(f)) == -EIO) {
		gerr = acc_comm_group_error(c->g, c->rank);
		e->state = ACC_REC_FAILED;
		e->error = gerr ? gerr : -EIO;
		e->end_ns = now;
		return;
	}
	if (e->q->ctrl && (int64_t)(acc_load_acquire_u64(&e->q->ctrl->read_index) - e->gate) > 0)
		e->state = ACC_REC_RUNNING;
}

/* --- JSON --- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static const char *dtype_name(uint32_t t)
{
	static const char *const names[] = {
		"u8", "i8", "u16", "i16", "f16", "bf16", "u32", "i32", "f32", "u64", "i64", "f64",
	};

	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

static const char *redop_name(uint32_t op)
{
	static const char *const names[] = { "sum", "prod", "min", "max", "avg" };

	return op < sizeof(names) / sizeof(names[0]) ? names[op] : "none";
}

static const char *state_name(uint32_t s)
{
	static const char *const names[] = { "issued", "running", "done", "failed" };

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static const char *errno_name(int e)
{
	const char *n = e ? strerrorname_np(-e) : NULL;

	return n ? n : "";
}

/* What each field of an operation means: the document describes itself. */
static const char *const rec_fields[][2] = {
	{ "seq", "the communicator's sequence number of the call (64-bit, one per call)" },
	{ "op", "allreduce, reduce, broadcast, allgather, reducescatter, alltoall, barrier, "
		"alltoallv, send, recv, split (completed by the host: no queue)" },
	{ "dtype", "element type (u8 ... f64)" },
	{ "count", "elements per rank, as passed" },
	{ "redop", "reduction (sum, prod, min, max, avg), none if not a reduction" },
	{ "root", "root rank of reduce and broadcast, -1 otherwise" },
	{ "in_place", "the call was in place (NCCL's definition)" },
	{ "algo", "algorithm that ran it (ring, oneshot)" },
	{ "issued_ns", "host time of the call (time.clock)" },
	{ "start_ns", "device start time: null, the device does not report it" },
	{ "end_ns", "host time the library saw it complete or fail, null if not yet" },
	{ "state", "issued, running (its queue passed its first packet), done, failed" },
	{ "errno", "failed: the negative errno, else 0" },
	{ "error", "failed: the errno's name" },
};

static void rec_json(struct accel_comm *c, const char *reason, FILE *f)
{
	struct acc_group *g = c->g;
	struct accel_comm_error *err = &c->err;
	struct timespec rt;
	uint64_t i, lo = c->rec.n > c->rec.cap ? c->rec.n - c->rec.cap : 0;
	char host[256] = "";
	int64_t now = acc_now_ns();
	int gerr = acc_comm_group_error(g, c->rank);
	size_t k;

	clock_gettime(CLOCK_REALTIME, &rt);
	if (gethostname(host, sizeof(host) - 1))
		host[0] = 0;
	fprintf(f, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n", REC_FORMAT, REC_VERSION);
	fputs("  \"fields\": {", f);
	for (k = 0; k < sizeof(rec_fields) / sizeof(rec_fields[0]); k++) {
		fprintf(f, "%s\n    ", k ? "," : "");
		json_str(f, rec_fields[k][0]);
		fputs(": ", f);
		json_str(f, rec_fields[k][1]);
	}
	fprintf(f, "\n  },\n  \"comm\": {\"id\": \"%016llx\", \"rank\": %u, \"nranks\": %u, "
		"\"pid\": %d, \"host\": ", (unsigned long long)g->rec_id, c->rank, c->nranks,
		(int)getpid());
	json_str(f, host);
	fprintf(f, ", \"algo\": \"%s\", \"timeout_ms\": %llu, \"chunk_bytes\": %llu, "
		"\"slots\": %u, \"oneshot_max\": %llu},\n", acc_algo_name(g->algo),
		(unsigned long long)(g->timeout_ns / 1000000), (unsigned long long)g->chunk,
		g->slots, (unsigned long long)g->oneshot_max);
	fprintf(f, "  \"time\": {\"clock\": \"CLOCK_MONOTONIC\", \"unit\": \"ns\", "
		"\"now_ns\": %lld, \"realtime_ns\": %lld},\n", (long long)now,
		(long long)rt.tv_sec * 1000000000 + rt.tv_nsec);
	fputs("  \"reason\": ", f);
	json_str(f, reason);
	fprintf(f, ",\n  \"error\": ");
	if (err->error) {	/* this rank's report (accel_comm_get_async_error()) */
		fprintf(f, "{\"errno\": %d, \"name\": \"%s\", \"op\": \"%s\", \"seq\": %llu, "
			"\"peer\": %d, \"missing\": \"%#llx\"}", err->error, errno_name(err->error),
			acc_op_name(err->op), (unsigned long long)err->seq, err->peer,
			(unsigned long long)err->missing);
	} else if (gerr) {	/* the communicator's, not reported on this rank yet */
		fprintf(f, "{\"errno\": %d, \"name\": \"%s\"}", gerr, errno_name(gerr));
	} else {
		fputs("null", f);
	}
	fprintf(f, ",\n  \"recorder\": {\"capacity\": %u, \"recorded\": %llu, \"dropped\": %llu, "
		"\"next_seq\": %llu, \"first_seq\": %llu},\n", c->rec.cap,
		(unsigned long long)c->rec.n, (unsigned long long)lo,
		(unsigned long long)g->next_seq[c->rank], (unsigned long long)g->seq0);
	fputs("  \"ops\": [", f);
	for (i = lo; i < c->rec.n; i++) {
		struct acc_rec_entry *e = &c->rec.e[i % c->rec.cap];
		bool red = e->call.op == ACCEL_COMM_OP_ALLREDUCE ||
			   e->call.op == ACCEL_COMM_OP_REDUCE ||
			   e->call.op == ACCEL_COMM_OP_REDUCESCATTER;

		rec_refresh(c, e, now);
		fprintf(f, "%s\n    {\"seq\": %llu, \"op\": \"%s\", \"dtype\": \"%s\", "
			"\"count\": %llu, \"redop\": \"%s\", \"root\": %d, \"in_place\": %s, "
			"\"algo\": \"%s\", \"issued_ns\": %lld, \"start_ns\": null, \"end_ns\": ",
			i > lo ? "," : "", (unsigned long long)e->call.seq, acc_op_name(e->call.op),
			e->call.op == ACCEL_COMM_OP_BARRIER ? "none" : dtype_name(e->call.dtype),
			(unsigned long long)e->call.count, red ? redop_name(e->call.redop) : "none",
			e->call.root, e->call.in_place ? "true" : "false",
			acc_algo_name(e->call.algo), (long long)e->issued_ns);
		if (e->end_ns)
			fprintf(f, "%lld", (long long)e->end_ns);
		else
			fputs("null", f);
		fprintf(f, ", \"state\": \"%s\", \"errno\": %d, \"error\": \"%s\"}",
			state_name(e->state), e->error, errno_name(e->error));
	}
	fputs("\n  ]\n}\n", f);
}

/* The document of rank @c in a malloc'ed buffer (group->lock held). */
static int rec_render(struct accel_comm *c, const char *reason, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);

	if (!f)
		return -ENOMEM;
	rec_json(c, reason, f);
	if (fclose(f)) {
		free(*buf);
		return -ENOMEM;
	}
	return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

ACCEL_API int accel_comm_dump(struct accel_comm *comm, int fd)
{
	char *buf = NULL;
	size_t len = 0;
	int ret;

	if (!comm || fd < 0)
		return -EINVAL;
	if (!comm->rec.e)
		return -ENODATA;
	acc_group_lock(comm->g);
	ret = rec_render(comm, "request", &buf, &len);
	acc_group_unlock(comm->g);
	if (ret)
		return ret;
	ret = write_all(fd, buf, len);
	free(buf);
	return ret;
}

/*
 * A rendered dump waiting for acc_group_unlock(): everything its write and
 * its log line need, so that neither touches the group after the unlock.
 */
struct acc_rec_doc {
	struct acc_rec_doc *next;
	char *buf;
	size_t len;
	int ret;			/* rendering failed: this, and no buf */
	const void *g;			/* for the log line only */
	unsigned int rank, nranks;
	unsigned long long ops;
	const char *reason;		/* a string literal */
	char path[4096];
};

/* Render @c's document (group->lock held) and queue it for the unlock. */
static void rec_queue_file(struct accel_comm *c, const char *reason)
{
	struct acc_group *g = c->g;
	struct acc_rec_doc *d = calloc(1, sizeof(*d)), **tail;

	if (!d) {
		acc_err("comm %p rank %u/%u: flight recorder (%s) not written: out of memory",
			(void *)g, c->rank, c->nranks, reason);
		return;
	}
	snprintf(d->path, sizeof(d->path), "%s/accel-comm-%016llx-rank%u.json", g->rec_dir,
		 (unsigned long long)g->rec_id, c->rank);
	d->g = g;
	d->rank = c->rank;
	d->nranks = c->nranks;
	d->ops = c->rec.n < c->rec.cap ? c->rec.n : c->rec.cap;
	d->reason = reason;
	d->ret = rec_render(c, reason, &d->buf, &d->len);
	/* in the order the ranks were dumped */
	for (tail = &g->rec_pending; *tail; tail = &(*tail)->next)
		;
	*tail = d;
}

/* Write one document: a temporary name, then renamed. */
static int rec_write_file(const struct acc_rec_doc *d)
{
	char tmp[sizeof(d->path) + 16];
	int fd, ret;

	if (d->ret)
		return d->ret;
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", d->path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ret = write_all(fd, d->buf, d->len);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, d->path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

void acc_rec_write_docs(struct acc_rec_doc *docs)
{
	struct acc_rec_doc *d;
	int ret;

	while (docs) {
		d = docs;
		docs = d->next;
		ret = rec_write_file(d);
		if (ret)
			acc_err("comm %p rank %u/%u: flight recorder not written to %s: %s", d->g,
				d->rank, d->nranks, d->path, strerror(-ret));
		else
			acc_err("comm %p rank %u/%u: flight recorder (%s, %llu operations) written to %s",
				d->g, d->rank, d->nranks, d->reason, d->ops, d->path);
		free(d->buf);
		free(d);
	}
}

void acc_rec_dump_group(struct acc_group *g, const char *reason)
{
	bool any = false;
	unsigned int i;

	for (i = 0; i < g->nranks; i++) {
		struct accel_comm *c = g->ranks[i];

		if (!c || !c->rec.e || c->rec.dumped)
			continue;
		c->rec.dumped = true;
		any = true;
		if (g->rec_dir)
			rec_queue_file(c, reason);
	}
	if (any && !g->rec_dir)
		acc_err("comm %p: %s: flight recorder not written: no trace directory "
			"(accel_comm_params.trace_dir or ACCEL_COMM_TRACE_DIR); "
			"accel_comm_dump() writes it on request", (void *)g, reason);
}
