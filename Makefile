# SPDX-License-Identifier: GPL-2.0-only
#
# vaccel + libaccel top-level build.
#
#   make          build the module, libaccel, its tools and examples, and the tests
#   make run      the main job: build, boot the test VM, load the module,
#                 accel-info, the libaccel examples, accel-bench (library)
#                 and vaccel-bench (raw uAPI); then, natively on the host,
#                 taskgraph-bench and tensormap-bench (the task graph's
#                 host cost and lookup rate, no module)
#   make check    all tests: host and library tests, fuzzing, DKMS build,
#                 the install test, kselftests and library tests in the VM
#   make check-debug  host tests, and the kselftests on a debug kernel
#                 (KASAN, lockdep, kmemleak, debugobjects) built from source
#   make lint     checkpatch --strict and sparse (C=2, W=1) on the module
#   make bench    the raw-uAPI submission/copy benchmark, in the VM
#   make deps     install the Debian packages everything needs
#   make install  install the module (modules_install, depmod), the udev
#                 rule giving group "render" the device nodes, and libaccel
#                 with its headers, libaccel.pc and tools (PREFIX, DESTDIR);
#                 make install-lib installs the library part alone
#
# KDIR=<kernel build tree> selects the target kernel; by default the newest
# installed kernel >= 6.12 that has headers (tools/kernel-version).

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD := $(TOP)/build

ifeq ($(origin KDIR),undefined)
KVER := $(shell tools/kernel-version 2>/dev/null)
KDIR := /lib/modules/$(KVER)/build
else
KVER := $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
endif

COMPAT_H := kmod/generated/$(KVER)/vaccel_compat_gen.h
LINUX_SRC := $(BUILD)/linux-source
LINUX_SRC_STAMP := $(LINUX_SRC)/.stamp
KSFT := $(LINUX_SRC)/tools/testing/selftests

CC := gcc
DRM_CFLAGS = $(shell pkg-config --cflags libdrm)
DRM_LIBS = $(shell pkg-config --libs libdrm)
WARN_CFLAGS := -Wall -Wextra -Werror
# kselftest_harness.h is not -Wextra clean (upstream builds selftests with -Wall)
TEST_CFLAGS = -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Werror -pthread \
	-isystem $(KSFT) -I$(TOP)/uapi -I$(TOP)/tests/include $(DRM_CFLAGS)

KSELFTEST_SRCS := $(wildcard tests/kselftest/*_test.c)
KSELFTESTS := $(patsubst tests/kselftest/%.c,$(BUILD)/tests/%,$(KSELFTEST_SRCS))
# Built as 32-bit static binaries (gcc-multilib): the compat ioctl path.
COMPAT32_SRCS := $(wildcard tests/compat32/*_test.c)
COMPAT32_TESTS := $(patsubst tests/compat32/%.c,$(BUILD)/tests/%,$(COMPAT32_SRCS))
HOST_TEST_SRCS := $(wildcard tests/host/*_test.c)
HOST_TESTS := $(patsubst tests/host/%.c,$(BUILD)/host-tests/%,$(HOST_TEST_SRCS))

# The packet core (kmod/core/) built natively: unit tests under ASan and
# UBSan with gcc, and a libFuzzer target with clang.
CORE_SRCS := kmod/core/vaccel_core.c kmod/core/vaccel_matmul.c kmod/core/vaccel_reduce.c \
	tests/core/os_native.c
CORE_DEPS := $(CORE_SRCS) $(wildcard kmod/core/*.h tests/core/*.h tests/include/*.h) uapi/drm/vaccel_accel.h
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CORE_TEST_SRCS := $(wildcard tests/core/*_test.c)
CORE_TESTS := $(patsubst tests/core/%.c,$(BUILD)/host-tests/%,$(CORE_TEST_SRCS))
CORE_FUZZ := $(BUILD)/core/core_fuzz
FUZZ_SEEDS := $(BUILD)/core/fuzz_seeds
BENCH := $(BUILD)/tools/vaccel-bench
# alarm() scaling preloaded by tests/vm/kselftests on the debug kernel
KSFT_SHIM := $(BUILD)/lib/ksft_timeout_scale.so

.PHONY: all module tests check run lint deps deps-run clean kernel-check dkms-install \
	dkms-uninstall bench \
	install uninstall
.PHONY: debug-kernel debug-module check-debug

# Build lines are short, kernel style ("  CC      build/lib/obj/buffer.o",
# Kbuild's own for the module); V=1 prints the whole commands. Recipes
# start with $(call quiet,WHAT,TARGET) or $(Q).
ifeq ($(V),1)
quiet =
Q =
else
quiet = @printf '  %-7s %s\n' '$(1)' '$(patsubst $(TOP)/%,%,$(2))';
Q = @
endif
MAKEFLAGS += --no-print-directory

# libaccel, its tools, examples and tests add their rules (and add to
# "all", "install" and "uninstall") in these fragments.
.DEFAULT_GOAL := all
include $(wildcard lib/lib.mk tools/tools.mk examples/examples.mk)

all: module tests

kernel-check:
	@if [ -z "$(KVER)" ] || [ ! -d "$(KDIR)" ]; then \
		echo "No kernel >= 6.12 headers found (KDIR=$(KDIR)); run 'make deps'." >&2; \
		exit 1; fi

$(COMPAT_H): kmod/compat/probe $(wildcard kmod/compat/probes/*.c) | kernel-check
	$(call quiet,PROBE,$@)kmod/compat/probe $(KDIR) $@

module: $(COMPAT_H) | kernel-check
	$(Q)$(MAKE) -C $(KDIR) M=$(TOP) W=1 modules

$(LINUX_SRC_STAMP): tools/fetch-linux-source
	$(call quiet,FETCH,$(LINUX_SRC))tools/fetch-linux-source $(LINUX_SRC)

tests: $(KSELFTESTS) $(COMPAT32_TESTS) $(HOST_TESTS) $(CORE_TESTS) $(CORE_FUZZ) $(FUZZ_SEEDS) \
	$(BENCH) $(KSFT_SHIM)

$(BUILD)/tests/%: tests/kselftest/%.c $(wildcard tests/kselftest/*.h tests/include/*.h) uapi/drm/vaccel_accel.h $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(TEST_CFLAGS) -o $@ $< -lm

$(COMPAT32_TESTS): $(BUILD)/tests/%: tests/compat32/%.c $(wildcard tests/kselftest/*.h) uapi/drm/vaccel_accel.h $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -m32 -static -D_FILE_OFFSET_BITS=64 $(TEST_CFLAGS) -o $@ $<

$(BUILD)/host-tests/%: tests/host/%.c uapi/drm/vaccel_accel.h $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(TEST_CFLAGS) -o $@ $<

$(BUILD)/host-tests/bench_noise_test: tools/bench_noise.h

$(CORE_TESTS): $(BUILD)/host-tests/%: tests/core/%.c $(CORE_DEPS) $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(TEST_CFLAGS) -O1 $(SAN_FLAGS) -o $@ $< $(CORE_SRCS) -lm

$(CORE_FUZZ): tests/core/core_fuzz.c $(CORE_DEPS)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)clang -std=gnu11 -g -O1 -Wall -Wextra -Werror -fsanitize=fuzzer $(SAN_FLAGS) \
		-I$(TOP)/uapi -I$(TOP)/tests/include $(DRM_CFLAGS) -o $@ $< $(CORE_SRCS)

$(FUZZ_SEEDS): tests/core/fuzz_seeds.c tests/core/core_fuzz.h uapi/drm/vaccel_accel.h
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=c11 -O2 $(WARN_CFLAGS) -I$(TOP)/uapi $(DRM_CFLAGS) -o $@ $<

$(KSFT_SHIM): tests/vm/ksft_timeout_scale.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -O2 $(WARN_CFLAGS) -shared -fPIC -o $@ $<

$(BENCH): tools/vaccel-bench.c tools/bench_noise.h $(wildcard tests/kselftest/*.h) \
		uapi/drm/vaccel_accel.h
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 $(WARN_CFLAGS) -pthread \
		-I$(TOP)/uapi $(DRM_CFLAGS) \
		-o $@ $<

deps:
	tools/install-deps

deps-run:
	tools/install-deps --run

check: deps
	$(MAKE) all
	tests/run-all

# The debug kernel (tools/build-debug-kernel, cached in build/debug-kernel/)
# and vaccel.ko built against it from a copy of the module sources, so that
# ./vaccel.ko stays the one for the distribution kernel.
DEBUG_KERNEL := $(BUILD)/debug-kernel
DEBUG_MODULE := $(DEBUG_KERNEL)/module

debug-kernel:
	tools/build-debug-kernel

debug-module: debug-kernel
	@mkdir -p $(DEBUG_MODULE)
	tar -cf - --exclude=generated --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
		Kbuild Makefile kmod uapi | tar -xf - -C $(DEBUG_MODULE)
	$(MAKE) -C $(DEBUG_MODULE) KDIR=$$(tools/build-debug-kernel --print-kdir) module

check-debug: deps
	$(MAKE) all
	$(MAKE) debug-module
	tests/run-all --debug-kernel $(CHECK_DEBUG_FLAGS)

# The product as a user meets it: the module loads, accel-info shows the
# devices, the libaccel examples run (each checks its result), then the
# benchmark tables (accel-bench: the library; vaccel-bench: the device).
# The task graph's native figures follow, measured on the host: its host
# cost over the fake kernel (taskgraph-bench) and the TensorMap's lookup
# rate against a linear scan (tensormap-bench); the TCG VM cannot judge
# per-task costs of a microsecond.
# It installs and builds only what it runs: no test packages, no kernel
# source (the kselftest headers are for the tests), no test binaries.
RUN_FILES = $(BUILD)/tools/accel-info $(EXAMPLES) $(BUILD)/tools/accel-bench $(BENCH)
run: deps-run
	$(Q)$(MAKE) module $(RUN_FILES) $(TASKGRAPH_BENCH) $(TENSORMAP_BENCH)
	$(Q)tests/vm/run --module $(TOP)/vaccel.ko $(addprefix --file ,$(RUN_FILES)) -- \
		'accel-info && fill_copy_wait && two_devices && replay_exec && tiled_matmul && \
		accel-bench && vaccel-bench'
	$(Q)$(TASKGRAPH_BENCH)
	$(Q)$(TENSORMAP_BENCH)

# The benchmark table (Documentation/queues.rst), measured in the VM.
bench: deps-run
	$(Q)$(MAKE) module $(BENCH)
	$(Q)tests/vm/run --module $(TOP)/vaccel.ko --file $(BENCH) -- vaccel-bench

# vaccel_trace.h is left out of checkpatch: the TRACE_EVENT macro language
# is laid out like upstream trace headers, which --strict's C layout checks
# (alignment, lines ending in '(') do not fit. sparse and W=1 still cover it.
lint: $(LINUX_SRC_STAMP) $(COMPAT_H)
	perl $(LINUX_SRC)/scripts/checkpatch.pl --strict --no-tree --quiet \
		--ignore FILE_PATH_CHANGES -f $(filter-out kmod/vaccel_trace.h,$(wildcard kmod/*.c kmod/*.h)) \
		kmod/core/*.c kmod/core/*.h uapi/drm/*.h
	@mkdir -p $(BUILD)
	$(MAKE) -C $(KDIR) M=$(TOP) C=2 W=1 modules 2>&1 | tee $(BUILD)/lint.log
	@if grep -E '(warning|error):' $(BUILD)/lint.log; then \
		echo "lint: the W=1 / sparse build is not clean" >&2; exit 1; fi
	@# "cmd | grep -q" under pipefail fails when grep exits at its match
	@# before cmd's next write (SIGPIPE): search a captured output instead.
	@if grep -rlE --exclude-dir=build 'set -[a-z]*o pipefail' .ci tests tools kmod | \
		xargs -r grep -nE '^[^#]*[|][[:space:]]*grep[[:space:]]+(-[[:alnum:]]*[qm]|--quiet|--max-count)'; then \
		echo "lint: a pipefail script pipes into an early-exiting grep" >&2; exit 1; fi
	@echo "lint: clean"

clean:
	-$(MAKE) -C $(KDIR) M=$(TOP) clean
	rm -rf $(BUILD)/tests $(BUILD)/host-tests $(BUILD)/core $(BUILD)/vm $(BUILD)/lib kmod/generated \
		$(DEBUG_MODULE)

dkms-install:
	tools/dkms-install

# DESTDIR stages everything (module under DESTDIR/lib/modules); without it
# depmod runs and a running udev applies the rule at once.
UDEV_RULES_DIR ?= /usr/lib/udev/rules.d
UDEV_RELOAD = if [ -z "$(DESTDIR)" ] && [ -S /run/udev/control ]; then \
	udevadm control --reload && udevadm trigger --subsystem-match=accel --action=change; fi

# Debian's kernel headers carry no module signing key (CONFIG_MODULE_SIG_KEY)
# and no System.map: left alone, modules_install would try to sign (and
# print sign-file's errors; the module stays unsigned) and skip depmod with
# a warning. So it signs only when the key is there, and depmod runs here:
# on the system itself, or, for a DESTDIR stage, where the staged module
# is finally installed (a stage has no modules.order to run it on).
MODULE_SIG_KEY = $(shell sed -n 's/^CONFIG_MODULE_SIG_KEY="*\([^"]*\)"*$$/\1/p' \
	$(KDIR)/include/config/auto.conf 2>/dev/null)
MODULES_INSTALL_FLAGS = INSTALL_MOD_PATH=$(DESTDIR) cmd_depmod=: quiet_cmd_depmod= \
	$(if $(MODULE_SIG_KEY),$(if $(wildcard $(MODULE_SIG_KEY) $(KDIR)/$(MODULE_SIG_KEY)),, \
	CONFIG_MODULE_SIG_ALL=))

install: module
	$(MAKE) -C $(KDIR) M=$(TOP) $(MODULES_INSTALL_FLAGS) modules_install
	$(if $(DESTDIR),@echo "  staged: run 'depmod $(KVER)' where vaccel.ko is installed", \
		depmod -a $(KVER))
	install -D -m 0644 udev/60-vaccel.rules $(DESTDIR)$(UDEV_RULES_DIR)/60-vaccel.rules
	$(UDEV_RELOAD)

uninstall: | kernel-check
	rm -f $(DESTDIR)/lib/modules/$(KVER)/updates/vaccel.ko*
	depmod $(if $(DESTDIR),-b $(DESTDIR)) $(KVER)
	rm -f $(DESTDIR)$(UDEV_RULES_DIR)/60-vaccel.rules
	$(UDEV_RELOAD)

dkms-uninstall:
	tools/dkms-install --uninstall
