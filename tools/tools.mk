# SPDX-License-Identifier: GPL-2.0-only
#
# libaccel's tools (included by the top Makefile):
#   build/tools/accel-info   devices, settings, memory, topology, debugfs
#   build/tools/accel-bench  library vs raw-uAPI submission figures, COPY
#                            bandwidth, the task graph's (in the VM, and
#                            natively on the in-process device;
#                            tools/accel-bench-check is its smoke test)
#   build/tools/taskgraph-bench  the task graph's host cost, natively over
#                            the fake kernel (not installed)
# both linked statically against libaccel.a (and libdrm.a) so that they
# run in the VM's initramfs as they are. lib/lib.mk defines LIBACCEL_A,
# LIBACCEL_CFLAGS, LIBACCEL_LIBS and install-lib.

ACCEL_HDRS := $(wildcard lib/include/accel/*.h) uapi/drm/vaccel_accel.h

# Static programs on libaccel: C11 with POSIX, the project's warnings.
ACCEL_APP_CFLAGS = -std=gnu11 -D_GNU_SOURCE -O2 -g $(WARN_CFLAGS) -pthread $(LIBACCEL_CFLAGS)
ACCEL_APP_LIBS = $(LIBACCEL_A) $(LIBACCEL_LIBS) -lm

ACCEL_TOOLS := $(BUILD)/tools/accel-info $(BUILD)/tools/accel-bench
# accel-comm-trace: merges the flight recorders of a communicator's ranks
# (python3, installed as it is)
ACCEL_SCRIPTS := tools/accel-comm-trace
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin

.PHONY: accel-tools install-tools uninstall-tools

all: accel-tools
install: install-tools
uninstall: uninstall-tools

accel-tools: $(ACCEL_TOOLS)

$(BUILD)/tools/accel-info: tools/accel-info.c $(ACCEL_HDRS) $(LIBACCEL_A)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(ACCEL_APP_CFLAGS) -static -o $@ $< $(ACCEL_APP_LIBS)

# The raw path is measured exactly as vaccel-bench does it
# (tests/kselftest/vaccel_queue_util.h).
$(BUILD)/tools/accel-bench: tools/accel-bench.c tools/taskgraph_work.h tools/queue_path_work.h tools/bench_noise.h $(ACCEL_HDRS) \
		tools/accel_bench_coll.c tools/accel_bench_coll.h \
		$(LIBACCEL_A) $(wildcard tests/kselftest/*.h)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(ACCEL_APP_CFLAGS) -static -o $@ $< tools/accel_bench_coll.c $(ACCEL_APP_LIBS)

# The collectives' issue-path profile driver (Documentation/collectives.rst,
# "Issue cost and small-message latency"): built so that it keeps
# compiling, not installed.
COMM_ISSUE_PROFILE := $(BUILD)/tools/comm_issue_profile

$(COMM_ISSUE_PROFILE): tools/comm_issue_profile.c $(ACCEL_HDRS) $(LIBACCEL_A)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(ACCEL_APP_CFLAGS) -o $@ $< $(ACCEL_APP_LIBS)

all: $(COMM_ISSUE_PROFILE)

# The task graph's host cost natively (no module): the whole library over
# the fake kernel of tests/lib-native/fake_kmod.h, -O2. Run by "make run"
# on the host, after the VM, next to tensormap-bench (lib/graph/graph.mk).
TASKGRAPH_BENCH := $(BUILD)/tools/taskgraph-bench

$(TASKGRAPH_BENCH): tools/taskgraph-bench.c tools/taskgraph_work.h tools/queue_path_work.h tools/bench_noise.h \
		tests/lib-native/fake_kmod.h \
		tests/include/signal_ref.h $(LIBACCEL_SRCS) $(LIBACCEL_HDRS)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g $(WARN_CFLAGS) -pthread -I$(TOP)/lib \
		-I$(TOP)/tests/include $(LIBACCEL_CFLAGS) -o $@ tools/taskgraph-bench.c \
		$(LIBACCEL_SRCS) $(LIBACCEL_LIBS) -lm

all: $(TASKGRAPH_BENCH)

# The VM tests (tests/lib/libaccel_*_test.c) are built by lib/lib.mk's
# rule; they also use tests/lib/libaccel_test.h.
$(LIB_VM_TESTS): $(wildcard tests/lib/*.h)

install-tools: $(ACCEL_TOOLS)
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(ACCEL_TOOLS) $(DESTDIR)$(BINDIR)/
	install -m 0755 $(ACCEL_SCRIPTS) $(DESTDIR)$(BINDIR)/

uninstall-tools:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(ACCEL_TOOLS) $(ACCEL_SCRIPTS)))
