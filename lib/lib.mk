# SPDX-License-Identifier: MIT
#
# libaccel: the shared and static libraries, the .pc file, installation and
# the native tests. Included by the top Makefile.
#
# Variables for other fragments (tools, examples, tests linked with the
# library):
#   LIBACCEL_A       build/lib/libaccel.a
#   LIBACCEL_SO      build/lib/libaccel.so (the link name; soname libaccel.so.1)
#   LIBACCEL_CFLAGS  include paths: lib/include, uapi/ and libdrm's
#   LIBACCEL_LIBS    what a program linked with the library needs besides it
#                    (libdrm, -pthread)
# e.g.  $(CC) $(LIBACCEL_CFLAGS) -o prog prog.c $(LIBACCEL_A) $(LIBACCEL_LIBS)

# The version is lib/include/accel/version.h's; the soname carries its major.
LIBACCEL_VERSION := $(shell awk '/^\#define ACCEL_VERSION_(MAJOR|MINOR|PATCH)/ { v[$$2] = $$3 } \
	END { print v["ACCEL_VERSION_MAJOR"] "." v["ACCEL_VERSION_MINOR"] "." v["ACCEL_VERSION_PATCH"] }' \
	lib/include/accel/version.h)
LIBACCEL_SONAME := libaccel.so.$(firstword $(subst ., ,$(LIBACCEL_VERSION)))
LIBACCEL_DIR := $(BUILD)/lib
LIBACCEL_A := $(LIBACCEL_DIR)/libaccel.a
LIBACCEL_SO := $(LIBACCEL_DIR)/libaccel.so
LIBACCEL_SO_REAL := $(LIBACCEL_DIR)/libaccel.so.$(LIBACCEL_VERSION)
LIBACCEL_PC := $(LIBACCEL_DIR)/libaccel.pc
LIBACCEL_CFLAGS = -I$(TOP)/lib/include -I$(TOP)/uapi $(shell pkg-config --cflags libdrm)
LIBACCEL_LIBS = $(shell pkg-config --libs libdrm) -pthread

LIBACCEL_SRCS := $(addprefix lib/,transport.c device.c backend.c va.c slots.c buffer.c signal.c \
	queue.c membarrier.c describe.c error.c version.c copy_struct.c ffi.c graph/tensormap.c graph/heap.c \
	graph/lower.c graph/taskgraph.c graph/registry.c graph/validate.c graph/deps.c \
	graph/outputs.c graph/submit.c graph/host.c graph/maps.c graph/wait.c graph/stats.c \
	graph/capture.c graph/instantiate.c graph/launch.c graph/dot.c graph/trace.c \
	coll/comm.c coll/transport.c coll/algo.c coll/ring.c coll/oneshot.c coll/ops.c coll/errors.c \
	coll/bootstrap.c coll/monitor.c coll/alltoallv.c coll/p2p.c coll/split.c coll/recorder.c \
	coll/xproc.c graph/coll_task.c)
LIBACCEL_HDRS := $(wildcard lib/*.h lib/graph/*.h lib/coll/*.h lib/include/accel/*.h) uapi/drm/vaccel_accel.h
# the in-process device: adds lib/sim/ to LIBACCEL_SRCS and LIBACCEL_HDRS
include lib/sim/sim.mk
LIBACCEL_OBJS := $(patsubst lib/%.c,$(LIBACCEL_DIR)/obj/%.o,$(LIBACCEL_SRCS))
LIBACCEL_PIC_CFLAGS = -std=c11 -D_GNU_SOURCE -O2 -g $(WARN_CFLAGS) -fPIC -fvisibility=hidden \
	$(LIBACCEL_CFLAGS)

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include

.PHONY: lib install-lib uninstall-lib check-symbols

all: lib
lib: $(LIBACCEL_SO) $(LIBACCEL_A) $(LIBACCEL_PC)
install: install-lib
uninstall: uninstall-lib

$(LIBACCEL_DIR)/obj/%.o: lib/%.c $(LIBACCEL_HDRS)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(LIBACCEL_PIC_CFLAGS) -c -o $@ $<

$(LIBACCEL_SO_REAL): $(LIBACCEL_OBJS) lib/libaccel.map
	$(call quiet,LD,$@)$(CC) -shared -Wl,-soname,$(LIBACCEL_SONAME) -Wl,--version-script=lib/libaccel.map \
		-Wl,-z,defs -o $@ $(LIBACCEL_OBJS) $(LIBACCEL_LIBS)

$(LIBACCEL_DIR)/$(LIBACCEL_SONAME): $(LIBACCEL_SO_REAL)
	$(Q)ln -sf $(notdir $<) $@

$(LIBACCEL_SO): $(LIBACCEL_DIR)/$(LIBACCEL_SONAME)
	$(Q)ln -sf $(notdir $<) $@

$(LIBACCEL_A): $(LIBACCEL_OBJS)
	@rm -f $@
	$(call quiet,AR,$@)ar rcs $@ $^

# Relocatable: the prefix is ${pcfiledir} (LIBDIR/pkgconfig) plus the way
# from there to PREFIX, and libdir and includedir are relative to it, so the
# file works wherever the tree is (a DESTDIR stage, a moved prefix). The
# relative paths depend on PREFIX, LIBDIR and INCLUDEDIR: rebuilt when they
# change.
pc_rel = $(shell realpath -m --relative-to=$(1) $(2))
$(LIBACCEL_PC): lib/libaccel.pc.in FORCE
	@mkdir -p $(@D)
	@sed -e 's|@PC_TO_PREFIX@|$(call pc_rel,$(LIBDIR)/pkgconfig,$(PREFIX))|' \
		-e 's|@LIBDIR_REL@|$(call pc_rel,$(PREFIX),$(LIBDIR))|' \
		-e 's|@INCLUDEDIR_REL@|$(call pc_rel,$(PREFIX),$(INCLUDEDIR))|' \
		-e 's|@VERSION@|$(LIBACCEL_VERSION)|' $< > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

.PHONY: FORCE
FORCE:

# Needs no kernel headers: "make install-lib DESTDIR=/tmp/x" works anywhere.
install-lib: lib
	install -d $(DESTDIR)$(INCLUDEDIR)/accel $(DESTDIR)$(INCLUDEDIR)/drm \
		$(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 0644 lib/include/accel/*.h $(DESTDIR)$(INCLUDEDIR)/accel/
	install -m 0644 uapi/drm/vaccel_accel.h $(DESTDIR)$(INCLUDEDIR)/drm/
	install -m 0755 $(LIBACCEL_SO_REAL) $(DESTDIR)$(LIBDIR)/
	ln -sf libaccel.so.$(LIBACCEL_VERSION) $(DESTDIR)$(LIBDIR)/$(LIBACCEL_SONAME)
	ln -sf $(LIBACCEL_SONAME) $(DESTDIR)$(LIBDIR)/libaccel.so
	install -m 0644 $(LIBACCEL_A) $(DESTDIR)$(LIBDIR)/
	install -m 0644 $(LIBACCEL_PC) $(DESTDIR)$(LIBDIR)/pkgconfig/

uninstall-lib:
	rm -rf $(DESTDIR)$(INCLUDEDIR)/accel
	rm -f $(DESTDIR)$(INCLUDEDIR)/drm/vaccel_accel.h \
		$(DESTDIR)$(LIBDIR)/libaccel.so.$(LIBACCEL_VERSION) \
		$(DESTDIR)$(LIBDIR)/$(LIBACCEL_SONAME) $(DESTDIR)$(LIBDIR)/libaccel.so \
		$(DESTDIR)$(LIBDIR)/libaccel.a $(DESTDIR)$(LIBDIR)/pkgconfig/libaccel.pc

# The ABI: the public headers, lib/libaccel.map, lib/libaccel.symbols and
# nm -D of the library agree (also a check of tests/run-all).
check-symbols: $(LIBACCEL_SO)
	tests/lib/symbols-check --lib $(LIBACCEL_SO)

# ---- tests ----

# Native tests (no device) under ASan/UBSan: the pure parts of the library
# compiled into each test (--gc-sections drops what would need a device,
# such as accel_queue_describe()).
# (libaccel_threads_test is built apart, with TSan: see below)
LIB_TSAN_SRC := tests/lib-native/libaccel_threads_test.c
# (libaccel_abi_test is built apart too, over the whole library: see below)
LIB_ABI_SRC := tests/lib-native/libaccel_abi_test.c
# (and libaccel_tg_native_test, over the whole library too)
LIB_TG_NATIVE_SRC := tests/lib-native/libaccel_tg_native_test.c
LIB_FASTPATH_SRC := tests/lib-native/libaccel_fastpath_test.c
LIB_FAKE_SRCS := tests/lib-native/libaccel_tg_oracle_test.c tests/lib-native/libaccel_fake_test.c
LIB_NATIVE_SRCS := $(filter-out $(LIB_TSAN_SRC) $(LIB_FASTPATH_SRC) $(LIB_ABI_SRC) $(LIB_TG_NATIVE_SRC) $(LIB_FAKE_SRCS) \
	$(SIM_TEST_SRCS) $(SIM_TSAN_SRC), \
	$(wildcard tests/lib-native/*_test.c))
LIB_NATIVE_TESTS := $(patsubst tests/lib-native/%.c,$(BUILD)/host-tests/%,$(LIB_NATIVE_SRCS))
LIB_NATIVE_LIBSRCS := lib/va.c lib/slots.c lib/error.c lib/describe.c lib/version.c lib/copy_struct.c \
	lib/transport.c

$(LIB_NATIVE_TESTS): $(BUILD)/host-tests/%: tests/lib-native/%.c $(LIB_NATIVE_LIBSRCS) \
		$(wildcard tests/lib-native/*.h tests/include/*.h) $(LIBACCEL_HDRS) $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(TEST_CFLAGS) -O1 $(SAN_FLAGS) -ffunction-sections -Wl,--gc-sections \
		-I$(TOP)/lib $(LIBACCEL_CFLAGS) -o $@ $< $(LIB_NATIVE_LIBSRCS) $(LIBACCEL_LIBS)

# The threading rules under ThreadSanitizer (which does not mix with ASan):
# the whole library over the fake kernel backend of fake_kmod.h. clang, as
# gcc refuses atomic_thread_fence() (accel_queue_submit's) under TSan.
LIB_TSAN_TEST := $(BUILD)/host-tests/libaccel_threads_test

$(LIB_TSAN_TEST): $(LIB_TSAN_SRC) $(LIBACCEL_SRCS) tests/lib-native/fake_kmod.h tests/include/signal_ref.h \
		$(wildcard kmod/core/*.c kmod/core/*.h) \
		$(LIBACCEL_HDRS) $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)clang $(TEST_CFLAGS) -O1 -fsanitize=thread -fno-omit-frame-pointer -I$(TOP)/lib \
		$(LIBACCEL_CFLAGS) -o $@ $< $(LIBACCEL_SRCS) $(LIBACCEL_LIBS)

tests: $(LIB_TSAN_TEST)

# The stable-ABI rules (structure sizes, tensor and task rules) under ASan
# and UBSan: the whole library over the fake kernel, like the TSan test.
LIB_ABI_TEST := $(BUILD)/host-tests/libaccel_abi_test

$(LIB_ABI_TEST): $(LIB_ABI_SRC) $(LIBACCEL_SRCS) tests/lib-native/fake_kmod.h \
		tests/lib-native/prng.h tests/include/signal_ref.h $(wildcard kmod/core/*.c kmod/core/*.h) \
		$(LIBACCEL_HDRS) $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(TEST_CFLAGS) -O1 $(SAN_FLAGS) -I$(TOP)/lib $(LIBACCEL_CFLAGS) -o $@ $< \
		$(LIBACCEL_SRCS) $(LIBACCEL_LIBS)

# The whole library over the fake kernel (fake_kmod.h, with the packet core
# compiled in) under ASan and UBSan: the fake's own rules, and the
# whole-task-graph oracle (tests/lib/tg_oracle.h, shared with the VM test).
LIB_FAKE_TESTS := $(patsubst tests/lib-native/%.c,$(BUILD)/host-tests/%,$(LIB_FAKE_SRCS))

$(LIB_FAKE_TESTS): $(BUILD)/host-tests/%: tests/lib-native/%.c $(LIBACCEL_SRCS) \
		tests/lib-native/fake_kmod.h tests/lib/tg_oracle.h tests/include/signal_ref.h tests/include/sweep.h \
		$(wildcard kmod/core/*.c kmod/core/*.h) $(LIBACCEL_HDRS) $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(TEST_CFLAGS) -O1 $(SAN_FLAGS) -I$(TOP)/lib $(LIBACCEL_CFLAGS) -o $@ $< \
		$(LIBACCEL_SRCS) $(LIBACCEL_LIBS)

# The inline helpers' exported twins: the test dlopen()s the built library.
$(BUILD)/host-tests/libaccel_ffi_test: $(LIBACCEL_SO_REAL)
$(BUILD)/host-tests/libaccel_ffi_test: LIB_NATIVE_LIBSRCS += \
	-DLIBACCEL_SO_PATH='"$(LIBACCEL_DIR)/$(LIBACCEL_SONAME)"' -ldl

tests: $(LIB_ABI_TEST)

# The task graph over the fake kernel (task struct sizes), under ASan and UBSan.
LIB_TG_NATIVE_TEST := $(BUILD)/host-tests/libaccel_tg_native_test

$(LIB_TG_NATIVE_TEST): $(LIB_TG_NATIVE_SRC) $(LIBACCEL_SRCS) tests/lib-native/fake_kmod.h \
		tests/lib-native/prng.h tests/include/signal_ref.h $(wildcard kmod/core/*.c kmod/core/*.h) \
		$(LIBACCEL_HDRS) $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(TEST_CFLAGS) -O1 $(SAN_FLAGS) -I$(TOP)/lib $(LIBACCEL_CFLAGS) -o $@ $< \
		$(LIBACCEL_SRCS) $(LIBACCEL_LIBS)

tests: $(LIB_TG_NATIVE_TEST)

tests: $(LIB_FAKE_TESTS)

# The fast path's promises (no clock read, no backend call): the whole
# library over fake_kmod.h under ASan/UBSan, its clock_gettime() calls
# counted through --wrap.
LIB_FASTPATH_TEST := $(BUILD)/host-tests/libaccel_fastpath_test

$(LIB_FASTPATH_TEST): $(LIB_FASTPATH_SRC) $(LIBACCEL_SRCS) tests/lib-native/fake_kmod.h \
		tests/include/signal_ref.h $(wildcard kmod/core/*.c kmod/core/*.h) \
		$(LIBACCEL_HDRS) $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(TEST_CFLAGS) -O1 $(SAN_FLAGS) -I$(TOP)/lib $(LIBACCEL_CFLAGS) \
		-Wl,--wrap=clock_gettime -o $@ $< $(LIBACCEL_SRCS) $(LIBACCEL_LIBS)

tests: $(LIB_FASTPATH_TEST)

# VM tests of the library, linked statically against libaccel.a.
LIB_VM_SRCS := $(wildcard tests/lib/*_test.c)
LIB_VM_TESTS := $(patsubst tests/lib/%.c,$(BUILD)/tests/%,$(LIB_VM_SRCS))

LIB_VM_DEPS = $(LIBACCEL_A) $(wildcard tests/kselftest/*.h tests/lib/*.h tests/include/*.h) $(LIBACCEL_HDRS) \
	$(LINUX_SRC_STAMP)

$(LIB_VM_TESTS): $(BUILD)/tests/%: tests/lib/%.c $(LIB_VM_DEPS)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(TEST_CFLAGS) $(LIBACCEL_CFLAGS) -static -o $@ $< $(LIBACCEL_A) \
		$(shell pkg-config --static --libs libdrm) -pthread -lm

tests: $(LIB_NATIVE_TESTS) $(LIB_VM_TESTS)

# Some VM tests built again with ASan and UBSan over the library's sources
# (dynamically linked: tests/vm/run copies the sanitizer runtimes), with a
# leak check at the end of each test: libaccel_X_test.c gives
# libaccel_X_asan_test.
LIB_VM_ASAN := $(BUILD)/tests/libaccel_core_asan_test $(BUILD)/tests/libaccel_robust_asan_test

$(LIB_VM_ASAN): $(BUILD)/tests/libaccel_%_asan_test: tests/lib/libaccel_%_test.c $(LIBACCEL_SRCS) \
		$(wildcard tests/kselftest/*.h tests/lib/*.h) $(LIBACCEL_HDRS) $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(TEST_CFLAGS) -O1 $(SAN_FLAGS) -I$(TOP)/lib $(LIBACCEL_CFLAGS) -o $@ $< \
		$(LIBACCEL_SRCS) $(LIBACCEL_LIBS)

tests: $(LIB_VM_ASAN)

# The task graph's state tests, likewise (the reused signal slots of
# ids_after_huge_signal_values index arrays by task ids).
LIB_VM_TG_ASAN := $(BUILD)/tests/libaccel_tg_state_asan_test

$(LIB_VM_TG_ASAN): tests/lib/libaccel_tg_state_test.c $(LIBACCEL_SRCS) \
		$(wildcard tests/kselftest/*.h tests/lib/*.h) $(LIBACCEL_HDRS) $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(TEST_CFLAGS) -O1 $(SAN_FLAGS) -I$(TOP)/lib $(LIBACCEL_CFLAGS) -o $@ $< \
		$(LIBACCEL_SRCS) $(LIBACCEL_LIBS)

tests: $(LIB_VM_TG_ASAN)

# The library tests (tests/lib/*_test.c, one source) built once more to run
# natively on the in-process device (ACCEL_BACKEND=sim), under ASan and
# UBSan, linked with a sanitized build of the library (build/lib-san/
# libaccel.a, the sim and the packet core included). tests/run-all runs
# them. Which tests run on which backend: Documentation/testing.rst,
# "Backends".
$(BUILD)/lib-san/obj/%.o: lib/%.c $(LIBACCEL_HDRS)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=c11 -D_GNU_SOURCE -O1 -g $(WARN_CFLAGS) $(SAN_FLAGS) \
		$(LIBACCEL_CFLAGS) -c -o $@ $<

$(BUILD)/lib-san/obj/sim/sim_core.o: $(wildcard kmod/core/*.c)

$(BUILD)/lib-san/libaccel.a: $(patsubst lib/%.c,$(BUILD)/lib-san/obj/%.o,$(LIBACCEL_SRCS))
	@rm -f $@
	$(call quiet,AR,$@)ar rcs $@ $^

LIB_SIM_TESTS := $(patsubst tests/lib/%.c,$(BUILD)/sim-tests/%,$(LIB_VM_SRCS))

$(LIB_SIM_TESTS): $(BUILD)/sim-tests/%: tests/lib/%.c $(BUILD)/lib-san/libaccel.a \
		$(wildcard tests/kselftest/*.h tests/lib/*.h tests/include/*.h) $(LIBACCEL_HDRS) $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(TEST_CFLAGS) -O1 $(SAN_FLAGS) -I$(TOP)/lib $(LIBACCEL_CFLAGS) \
		-o $@ $< $(BUILD)/lib-san/libaccel.a $(LIBACCEL_LIBS) -lm

tests: $(LIB_SIM_TESTS)

# The concurrent library tests under ThreadSanitizer over the whole stack
# on the in-process device: the library, the transport, the sim and its
# engine threads, all built with clang -fsanitize=thread (build/lib-tsan/;
# clang, as gcc refuses atomic_thread_fence() under TSan). In such a build
# the sim gives the program and the engines one mapping of each object
# (SIM_ONE_MAPPING, lib/sim/sim_internal.h), so TSan sees their
# release/acquire pairs. tests/run-all runs the threaded tests of these
# binaries (its sim_tsan list) with ACCEL_BACKEND=sim. (-Wno-empty-body:
# clang's warning on the harness's EXPECT_*() expansion "for (...);".)
TSAN_CFLAGS := -fsanitize=thread -fno-omit-frame-pointer

$(BUILD)/lib-tsan/obj/%.o: lib/%.c $(LIBACCEL_HDRS)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)clang -std=c11 -D_GNU_SOURCE -O1 -g $(WARN_CFLAGS) $(TSAN_CFLAGS) \
		$(LIBACCEL_CFLAGS) -c -o $@ $<

$(BUILD)/lib-tsan/obj/sim/sim_core.o: $(wildcard kmod/core/*.c)

$(BUILD)/lib-tsan/libaccel.a: $(patsubst lib/%.c,$(BUILD)/lib-tsan/obj/%.o,$(LIBACCEL_SRCS))
	@rm -f $@
	$(call quiet,AR,$@)ar rcs $@ $^

LIB_SIM_TSAN_SRCS := $(addprefix tests/lib/libaccel_,core_test.c robust_test.c taskgraph_test.c \
	tg_faults_test.c tg_state_test.c comm_test.c comm_ops_test.c comm_trace_test.c \
	comm_tg_test.c comm_mp_test.c comm_tg_mp_test.c)
LIB_SIM_TSAN_TESTS := $(patsubst tests/lib/libaccel_%_test.c,$(BUILD)/sim-tsan-tests/libaccel_%_tsan_test, \
	$(LIB_SIM_TSAN_SRCS))

$(LIB_SIM_TSAN_TESTS): $(BUILD)/sim-tsan-tests/libaccel_%_tsan_test: tests/lib/libaccel_%_test.c \
		$(BUILD)/lib-tsan/libaccel.a $(wildcard tests/kselftest/*.h tests/lib/*.h) \
		tests/lib/tsan.supp $(LIBACCEL_HDRS) $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)clang $(TEST_CFLAGS) -Wno-empty-body -O1 $(TSAN_CFLAGS) -I$(TOP)/lib \
		$(LIBACCEL_CFLAGS) -o $@ $< $(BUILD)/lib-tsan/libaccel.a $(LIBACCEL_LIBS) -lm

tests: $(LIB_SIM_TSAN_TESTS)

include lib/graph/graph.mk
