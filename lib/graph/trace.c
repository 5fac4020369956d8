// SPDX-License-Identifier: MIT
/*
 * Traces of executed tasks (ACCEL_TG_TRACE): a TIMESTAMP packet before and
 * after each eager task and each graph launch writes the device clock
 * (CLOCK_MONOTONIC ns) into a per-queue buffer; host tasks take the host
 * clock. accel_tg_trace_write() turns completed records into the Chrome
 * Trace Event Format, which Perfetto and chrome://tracing open: one process
 * per device, one thread (track) per queue, one more for host tasks.
 *
 * Records are kept in a ring of TG_TRACE_SLOTS per line, indexed by the
 * line value: a program that runs more than that many tasks on a queue
 * between two accel_tg_trace_write() calls loses the older ones.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tg_internal.h"

int tg_trace_init(struct accel_tg *tg, struct tg_line *l)
{
	int ret;

	if (l->kind == TG_LINE_MAP)
		return 0;
	l->trace = calloc(TG_TRACE_SLOTS, sizeof(*l->trace));
	if (!l->trace)
		return -ENOMEM;
	if (l->kind != TG_LINE_QUEUE)
		return 0;
	ret = accel_buffer_create(tg->devs[l->devi], TG_TRACE_SLOTS * 16, ACCEL_BUFFER_HOST,
				  &l->tsbuf);
	return ret;
}

void tg_trace_fini(struct tg_line *l)
{
	accel_buffer_destroy(l->tsbuf);
	l->tsbuf = NULL;
	free(l->trace);
	l->trace = NULL;
}

void tg_trace_stamp(const struct tg_line *l, uint64_t value, int end,
		    struct drm_vaccel_packet *p)
{
	accel_prep_timestamp(p, l->tsbuf->va + (value % TG_TRACE_SLOTS) * 16 + (end ? 8 : 0));
}

void tg_trace_note(struct tg_line *l, uint64_t value, uint64_t id, const char *name)
{
	struct tg_trace_rec *r = &l->trace[value % TG_TRACE_SLOTS];

	if (l->tsbuf) {
		/*
		 * The device writes the stamps after this (the packets are not
		 * published yet); 0 means "not written": the work's completion
		 * signal comes before its end stamp, so a record is complete
		 * only once the end stamp is there too.
		 */
		volatile uint64_t *ts = (volatile uint64_t *)
			((char *)accel_buffer_host(l->tsbuf) + (value % TG_TRACE_SLOTS) * 16);

		ts[0] = 0;
		ts[1] = 0;
	}
	r->value = value;
	r->id = id;
	r->ge = NULL;
	snprintf(r->name, sizeof(r->name), "%s", name ? name : "task");
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void tg_trace_forget_exec(struct accel_tg *tg, const struct accel_graph_exec *ge)
{
	uint32_t i, k;

	for (i = 0; i < tg->nq; i++)
		for (k = 0; tg->lines[i].trace && k < TG_TRACE_SLOTS; k++)
			if (tg->lines[i].trace[k].ge == ge)
				tg->lines[i].trace[k].ge = NULL;
}

/*
 * The tasks of a launch on line @r->ge_line, from the launch's slot of
 * timestamps, if no later launch has taken the slot since. Returns the
 * number of slices written.
 */
static int launch_tasks(FILE *f, uint32_t pid, uint32_t tid, const struct tg_trace_rec *r,
			uint32_t devi)
{
	const struct accel_graph_exec *ge = r->ge;
	const struct accel_graph *g = ge->g;
	const volatile uint64_t *ts;
	uint32_t i, line = ge->lines[r->ge_line].line;
	int n = 0;

	if (ge->table_last[(uint64_t)r->ge_slot * ge->nlines + r->ge_line] != r->value ||
	    !ge->tstamps[devi])
		return 0;
	ts = (const volatile uint64_t *)accel_buffer_host(ge->tstamps[devi]) +
	     (uint64_t)r->ge_slot * g->ntasks * 2;
	for (i = 0; i < g->ntasks; i++) {
		int64_t t0 = (int64_t)ts[2 * i], t1 = (int64_t)ts[2 * i + 1];

		if (g->tasks[i].line != line)
			continue;
		fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"name\":",
			pid, tid, (double)t0 / 1000.0, (double)(t1 > t0 ? t1 - t0 : 0) / 1000.0);
		json_str(f, g->tasks[i].name);
		fprintf(f, ",\"args\":{\"graph task\":%u}}", i);
		n++;
	}
	return n;
}

ACCEL_API int accel_tg_trace_write(struct accel_tg *tg, FILE *f)
{
	uint32_t i, k;
	int n = 0;
	bool first = true;

	if (!tg || !f || !(tg->p.flags & ACCEL_TG_TRACE))
		return -EINVAL;
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	for (i = 0; i <= tg->host_line; i++) {
		struct tg_line *l = &tg->lines[i];
		bool host = l->kind == TG_LINE_HOST;
		uint32_t pid = host ? tg->ndevs : l->devi;
		uint64_t done = accel_signal_read(l->sig);

		fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":",
			first ? "" : ",\n", pid);
		json_str(f, host ? "host" : tg->devs[l->devi]->path);
		fprintf(f, "}},\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":\"%s %u\"}}",
			pid, i, host ? "host tasks" : "queue", host ? 0 : l->qi);
		first = false;
		if (host)
			pthread_mutex_lock(&tg->host_lock);
		for (k = 0; k < TG_TRACE_SLOTS; k++) {
			struct tg_trace_rec *r = &l->trace[k];
			int64_t t0, t1;

			if (!r->value || !acc_ge(done, r->value))
				continue;
			if (host) {
				t0 = r->host_start;
				t1 = r->host_end;
			} else {
				const volatile uint64_t *ts = (const volatile uint64_t *)
					((char *)accel_buffer_host(l->tsbuf) + k * 16);

				t0 = (int64_t)__atomic_load_n(&ts[0], __ATOMIC_ACQUIRE);
				t1 = (int64_t)__atomic_load_n(&ts[1], __ATOMIC_ACQUIRE);
				if (!t1)
					continue;	/* its end stamp is not written yet */
			}
			fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"name\":",
				pid, i, (double)t0 / 1000.0,
				(double)(t1 > t0 ? t1 - t0 : 0) / 1000.0);
			json_str(f, r->name);
			fprintf(f, ",\"args\":{\"task\":\"0x%llx\"}}", (unsigned long long)r->id);
			if (r->ge)
				n += launch_tasks(f, pid, i, r, l->devi);
			r->value = 0;
			r->ge = NULL;
			n++;
		}
		if (host)
			pthread_mutex_unlock(&tg->host_lock);
	}
	fprintf(f, "\n]}\n");
	if (fflush(f) || ferror(f))
		return -EIO;
	return n;
}
