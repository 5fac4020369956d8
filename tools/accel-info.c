// SPDX-License-Identifier: MIT
/*
 * accel-info: what vaccel devices this machine has, through libaccel.
 *
 * The backend it sees (ACCEL_BACKEND: the kernel module, or "sim", the
 * in-process device). For each device: its node (or sim:ID) and id, the
 * uAPI version, engines, capabilities, memory capacity and use, VA window,
 * link settings, poll budget and per-context limits; then the topology
 * matrix of all of them (what device i pays to reach device j's memory);
 * and, when readable (the module's /sys/kernel/debug/accel/vaccelID: root,
 * debugfs mounted; always for the sim), the device's queues, engines and
 * statistics from its debugfs files (Documentation/devices.rst), through
 * accel_device_debug_read(). --json prints the same as one JSON object
 * for scripts.
 *
 * Exit status: 0; 1 if there is no vaccel device or one cannot be opened;
 * 2 for a usage error.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <accel/accel.h>

#define MAX_DEVICES	64
#define DEBUGFS_DIR	"/sys/kernel/debug/accel"

static const char *const cap_names[] = {
	"hotplug", "exec-bindings", "matmul", "signal-eventfd", "engine-split",
};

struct dev {
	unsigned int index;		/* in accel_device_list() order */
	struct accel_device_info info;
	struct accel_device *dev;
	struct accel_device_props props;
	uint64_t mem_used;
	int mem_err;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: accel-info [--json] [--device INDEX] [--no-debugfs]\n"
		"\n"
		"Show the vaccel devices (through libaccel): the backend (ACCEL_BACKEND:\n"
		"the kernel module, or sim, the in-process device), settings, memory in\n"
		"use, the topology matrix of link bandwidth/latency, and, when debugfs is\n"
		"readable, each device's queues, engines and statistics.\n"
		"\n"
		"  -j, --json          one JSON object on stdout, for scripts\n"
		"  -d, --device INDEX  only this device (accel_device_list() order)\n"
		"  -n, --no-debugfs    do not read /sys/kernel/debug\n"
		"  -h, --help          this text\n"
		"\n"
		"Exit status: 0; 1 if no vaccel device is present or one cannot be opened;\n"
		"2 for a usage error. ACCEL_DEBUG=info|trace logs the library's steps.\n");
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* A debugfs token as a JSON value: decimal numbers as numbers, the rest as strings. */
static void json_value(const char *tok)
{
	char *end;

	errno = 0;
	strtoll(tok, &end, 10);
	if (*tok && !*end && !errno)
		fputs(tok, stdout);
	else
		json_string(tok);
}

/*
 * The module's debugfs files are lines of "key value key value ...". As
 * JSON: an array of objects, one per line; @flat: a single object of all
 * pairs (the "stats" file, one pair per line).
 */
static void json_kv_lines(char *text, bool flat)
{
	char *save_line, *line, *save_tok, *key, *val;
	bool first_line = true, first = true;

	putchar(flat ? '{' : '[');
	for (line = strtok_r(text, "\n", &save_line); line;
	     line = strtok_r(NULL, "\n", &save_line)) {
		if (!flat) {
			printf("%s{", first_line ? "" : ", ");
			first = true;
		}
		first_line = false;
		for (key = strtok_r(line, " ", &save_tok); key;
		     key = strtok_r(NULL, " ", &save_tok)) {
			val = strtok_r(NULL, " ", &save_tok);
			if (!val)
				break;
			printf("%s", first ? "" : ", ");
			json_string(key);
			putchar(':');
			json_value(val);
			first = false;
		}
		if (!flat)
			putchar('}');
	}
	putchar(flat ? '}' : ']');
}

static void print_caps(uint64_t caps, bool json)
{
	bool first = true;
	unsigned int i;

	for (i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++) {
		if (!(caps & (1ull << i)))
			continue;
		if (json)
			printf("%s\"%s\"", first ? "" : ", ", cap_names[i]);
		else
			printf(" %s", cap_names[i]);
		first = false;
	}
	if (caps >> i && !json)
		printf(" +0x%" PRIx64, caps >> i << i);
}

static const char *const debugfs_files[] = { "queues", "engines", "stats" };

/* The device's debugfs text, or NULL (not root, not mounted, no such file). */
static char *debugfs_read(const struct dev *d, const char *file)
{
	size_t len = 1 << 20;
	char *buf = malloc(len);

	if (buf && accel_device_debug_read(d->dev, file, buf, len) < 0) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* The backend ACCEL_BACKEND names, as the library reads it. */
static const char *backend_name(void)
{
	const char *env = getenv("ACCEL_BACKEND");

	return env && !strcmp(env, "sim") ? "sim" : "module";
}

static const char *backend_text(const char *backend)
{
	return strcmp(backend, "sim") ? "the vaccel kernel module" : "the in-process device";
}

static void print_text(struct dev *d, unsigned int n, bool debugfs)
{
	struct accel_device *devs[MAX_DEVICES];
	struct accel_link *m;
	unsigned int i, j, f;

	printf("libaccel %d.%d: %u vaccel device%s on %s (backend %s)\n", accel_version_major(),
	       accel_version_minor(), n, n == 1 ? "" : "s", backend_text(backend_name()),
	       backend_name());
	for (i = 0; i < n; i++) {
		struct accel_device_props *p = &d[i].props;

		printf("\ndevice %u: %s (vaccel%u)\n", d[i].index, d[i].info.path, p->id);
		printf("  %-16s %s\n", "backend", accel_device_backend(d[i].dev));
		printf("  %-16s %u\n", "uapi version", p->uapi_version);
		printf("  %-16s %u\n", "engines", p->engines);
		printf("  %-16s 0x%" PRIx64, "capabilities", p->capabilities);
		print_caps(p->capabilities, false);
		printf("\n  %-16s %" PRIu64 " MiB\n", "memory", p->memory_capacity >> 20);
		if (d[i].mem_err)
			printf("  %-16s (%s)\n", "memory in use", accel_strerror(d[i].mem_err));
		else
			printf("  %-16s %" PRIu64 " bytes\n", "memory in use", d[i].mem_used);
		printf("  %-16s 0x%" PRIx64 " - 0x%" PRIx64 "\n", "VA window", p->va_start,
		       p->va_start + p->va_size);
		if (p->link_bandwidth_mbps)
			printf("  %-16s %" PRIu64 " MB/s, %" PRIu64 " ns\n", "link",
			       p->link_bandwidth_mbps, p->link_latency_ns);
		else
			printf("  %-16s unthrottled, %" PRIu64 " ns\n", "link", p->link_latency_ns);
		printf("  %-16s %" PRIu64 " ns\n", "poll budget", p->poll_budget_ns);
		printf("  %-16s %u buffers, %u mappings, %u queues per context\n", "limits",
		       p->max_buffers, p->max_mappings, p->max_queues);
	}

	m = calloc((size_t)n * n, sizeof(*m));
	for (i = 0; i < n; i++)
		devs[i] = d[i].dev;
	if (m && !accel_device_topology(devs, n, m, sizeof(*m))) {
		printf("\ntopology: what the row's device pays to reach the column's memory\n");
		printf("%8s", "");
		for (j = 0; j < n; j++)
			printf(" %20u", d[j].index);
		putchar('\n');
		for (i = 0; i < n; i++) {
			printf("%8u", d[i].index);
			for (j = 0; j < n; j++) {
				struct accel_link *l = &m[i * n + j];
				char cell[64];

				if (l->local)
					snprintf(cell, sizeof(cell), "local");
				else if (l->bandwidth_mbps)
					snprintf(cell, sizeof(cell), "%" PRIu64 " MB/s %" PRIu64 " ns",
						 l->bandwidth_mbps, l->latency_ns);
				else
					snprintf(cell, sizeof(cell), "unthrottled %" PRIu64 " ns",
						 l->latency_ns);
				printf(" %20s", cell);
			}
			putchar('\n');
		}
	}
	free(m);

	if (!debugfs)
		return;
	for (i = 0; i < n; i++) {
		for (f = 0; f < sizeof(debugfs_files) / sizeof(debugfs_files[0]); f++) {
			char *text = debugfs_read(&d[i], debugfs_files[f]), *line, *save;

			if (!text) {
				if (f == 0)
					printf("\ndevice %u: debugfs not readable (%s/vaccel%u): "
					       "run as root with debugfs mounted\n",
					       d[i].index, DEBUGFS_DIR, d[i].props.id);
				break;
			}
			printf("\ndevice %u %s (debugfs):\n", d[i].index, debugfs_files[f]);
			line = strtok_r(text, "\n", &save);
			if (!line)
				printf("  (none)\n");
			for (; line; line = strtok_r(NULL, "\n", &save))
				printf("  %s\n", line);
			free(text);
		}
	}
}

static void print_json(struct dev *d, unsigned int n, bool debugfs)
{
	struct accel_device *devs[MAX_DEVICES];
	struct accel_link *m;
	unsigned int i, j, f;

	printf("{\"library\": \"%d.%d\", \"backend\": \"%s\", \"devices\": [",
	       accel_version_major(), accel_version_minor(), backend_name());
	for (i = 0; i < n; i++) {
		struct accel_device_props *p = &d[i].props;

		printf("%s\n  {\"index\": %u, \"backend\": \"%s\", \"path\": ", i ? "," : "",
		       d[i].index, accel_device_backend(d[i].dev));
		json_string(d[i].info.path);
		printf(", \"minor\": %u, \"id\": %u, \"uapi_version\": %u, \"engines\": %u, "
		       "\"capabilities\": %" PRIu64 ", \"capability_names\": [",
		       d[i].info.minor, p->id, p->uapi_version, p->engines, p->capabilities);
		print_caps(p->capabilities, true);
		printf("], \"memory_capacity\": %" PRIu64 ", \"memory_used\": ",
		       p->memory_capacity);
		if (d[i].mem_err)
			printf("null");
		else
			printf("%" PRIu64, d[i].mem_used);
		printf(", \"va_start\": %" PRIu64 ", \"va_size\": %" PRIu64
		       ", \"link_bandwidth_mbps\": %" PRIu64 ", \"link_latency_ns\": %" PRIu64
		       ", \"poll_budget_ns\": %" PRIu64 ", \"max_buffers\": %u"
		       ", \"max_mappings\": %u, \"max_queues\": %u",
		       p->va_start, p->va_size, p->link_bandwidth_mbps, p->link_latency_ns,
		       p->poll_budget_ns, p->max_buffers, p->max_mappings, p->max_queues);
		if (debugfs) {
			char *text = debugfs_read(&d[i], debugfs_files[0]);

			printf(", \"debugfs\": ");
			if (!text) {
				printf("null");
			} else {
				putchar('{');
				for (f = 0; f < sizeof(debugfs_files) / sizeof(debugfs_files[0]);
				     f++) {
					if (f)
						text = debugfs_read(&d[i], debugfs_files[f]);
					printf("%s\"%s\": ", f ? ", " : "", debugfs_files[f]);
					if (text)
						json_kv_lines(text, !strcmp(debugfs_files[f], "stats"));
					else
						printf("null");
					free(text);
				}
				putchar('}');
			}
		}
		putchar('}');
	}
	printf("],\n \"topology\": [");
	m = calloc((size_t)n * n, sizeof(*m));
	for (i = 0; i < n; i++)
		devs[i] = d[i].dev;
	if (m && n && !accel_device_topology(devs, n, m, sizeof(*m))) {
		for (i = 0; i < n; i++) {
			printf("%s\n  [", i ? "," : "");
			for (j = 0; j < n; j++) {
				struct accel_link *l = &m[i * n + j];

				printf("%s{\"local\": %s, \"bandwidth_mbps\": %" PRIu64
				       ", \"latency_ns\": %" PRIu64 "}", j ? ", " : "",
				       l->local ? "true" : "false", l->bandwidth_mbps, l->latency_ns);
			}
			putchar(']');
		}
	}
	free(m);
	printf("]}\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "device", required_argument, NULL, 'd' },
		{ "no-debugfs", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct accel_device_info list[MAX_DEVICES];
	struct dev d[MAX_DEVICES];
	bool json = false, debugfs = true;
	long only = -1;
	unsigned int i, n = 0, first = 0;
	int c, total, ret, status = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "jd:nh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'd':
			only = strtol(optarg, &end, 10);
			if (*end || only < 0 || only >= MAX_DEVICES) {
				fprintf(stderr, "accel-info: bad device index '%s'\n", optarg);
				return 2;
			}
			break;
		case 'n':
			debugfs = false;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "accel-info: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}

	total = accel_device_list(list, MAX_DEVICES, sizeof(*list));
	/* no /sys/class/accel: no accel driver at all, so no vaccel device */
	if (total == -ENOENT && !strcmp(backend_name(), "module"))
		total = 0;
	if (total < 0) {
		fprintf(stderr, "accel-info: cannot list devices: %s%s\n", accel_strerror(total),
			total == -EINVAL ? " (ACCEL_BACKEND is module or sim; a wrong "
			"ACCEL_SIM_DEVICES is refused too: ACCEL_DEBUG=error says why)" : "");
		return 1;
	}
	if (total > MAX_DEVICES)
		total = MAX_DEVICES;
	if (only >= 0) {
		if (only >= total) {
			fprintf(stderr, "accel-info: no device %ld (%d found)\n", only, total);
			return 1;
		}
		first = (unsigned int)only;
		total = (int)only + 1;
	}
	if (total == 0 && !json) {
		if (!strcmp(backend_name(), "sim"))
			fprintf(stderr, "accel-info: no in-process devices (ACCEL_SIM_DEVICES is "
				"empty)\n");
		else
			fprintf(stderr, "accel-info: no vaccel devices: load the module (modprobe "
				"vaccel), or use the in-process device (ACCEL_BACKEND=sim)\n");
		return 1;
	}

	memset(d, 0, sizeof(d));
	for (i = first; i < (unsigned int)total; i++) {
		struct dev *x = &d[n];

		x->index = i;
		x->info = list[i];
		ret = accel_device_open_path(list[i].path, &x->dev);
		if (ret) {
			fprintf(stderr, "accel-info: %s: %s\n", list[i].path, accel_strerror(ret));
			status = 1;
			continue;
		}
		x->props.size = sizeof(x->props);
		ret = accel_device_query(x->dev, &x->props);
		if (ret) {
			fprintf(stderr, "accel-info: %s: query: %s\n", list[i].path,
				accel_strerror(ret));
			accel_device_close(x->dev);
			status = 1;
			continue;
		}
		x->mem_err = accel_device_memory_used(x->dev, &x->mem_used);
		n++;
	}

	if (json)
		print_json(d, n, debugfs);
	else
		print_text(d, n, debugfs);
	for (i = 0; i < n; i++)
		accel_device_close(d[i].dev);
	return n ? status : 1;
}
