// SPDX-License-Identifier: MIT
/*
 * A captured graph in Graphviz DOT: a node per task, a node per region of
 * a buffer a task touches (named by the buffer's device address and size,
 * so that it maps back to the program's buffers), edges for the accesses
 * and the task-to-task dependencies the TensorMap found.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>

#include "tg_internal.h"

ACCEL_API int accel_graph_dot(const struct accel_graph *g, FILE *f)
{
	static const char *const kinds[] = { "RAW", "WAR", "WAW" };
	static const char *const colors[] = { "black", "blue", "red" };
	uint32_t i, k, bi;

	if (!g || !f)
		return -EINVAL;
	fprintf(f, "digraph taskgraph {\n\trankdir=LR;\n\tnode [fontname=\"monospace\"];\n");
	for (i = 0; i < g->ntasks; i++) {
		const struct tg_gtask *t = &g->tasks[i];
		const struct tg_line *l = &g->tg->lines[t->line];

		if (l->kind == TG_LINE_HOST)
			fprintf(f, "\tt%u [shape=box, style=rounded, label=\"%s\\nhost #%u\"];\n", i,
				t->name, i);
		else
			fprintf(f, "\tt%u [shape=box, label=\"%s\\n%s #%u\\ndevice %u queue %u\"];\n",
				i, t->name, tg_op_name(t->op), i, l->devi, l->qi);
	}
	for (i = 0; i < g->ntasks; i++) {
		const struct tg_gtask *t = &g->tasks[i];
		const struct accel_tensor *tv = tg_gt_ct(t);
		const uint32_t *acc = tg_gt_cacc(t);

		for (k = 0; k < t->nargs; k++) {
			const struct accel_buffer *buf = tv[k].buf;
			struct tm_layout lay;

			if (tm_layout_make(&tv[k], &lay) || lay.empty)
				continue;
			bi = tg_graph_buf_index(g, buf);
			fprintf(f, "\tb%u_%lld_%lld [shape=ellipse, label=\"buffer %u: 0x%llx (%llu bytes)%s\\nbytes [%lld, %lld)%s\"];\n",
				bi, (long long)lay.lo, (long long)lay.hi, bi,
				(unsigned long long)buf->va, (unsigned long long)buf->size,
				tg_heap_of(g->tg, buf) >= 0 ? ", output heap" : "", (long long)lay.lo,
				(long long)lay.hi, lay.interleaved ? " interleaved" : "");
			if (acc[k] != ACCEL_INPUT)
				fprintf(f, "\tt%u -> b%u_%lld_%lld [label=\"%s\"];\n", i, bi,
					(long long)lay.lo, (long long)lay.hi,
					acc[k] == ACCEL_INOUT ? "inout" :
					acc[k] == ACCEL_OUTPUT_NEW ? "new" : "out");
			if (acc[k] == ACCEL_INPUT || acc[k] == ACCEL_INOUT)
				fprintf(f, "\tb%u_%lld_%lld -> t%u;\n", bi, (long long)lay.lo,
					(long long)lay.hi, i);
		}
		for (k = 0; k < t->ndeps; k++)
			fprintf(f, "\tt%u -> t%u [style=dashed, color=%s, label=\"%s\"];\n",
				t->deps[k].task, i, colors[t->deps[k].kind], kinds[t->deps[k].kind]);
	}
	fprintf(f, "}\n");
	return fflush(f) || ferror(f) ? -EIO : 0;
}
