# SPDX-License-Identifier: GPL-2.0-only
#
# libaccel's tools (included by the top Makefile):
#   build/tools/accel-info   devices, settings, memory, topology, debugfs
#   build/tools/accel-bench  library vs raw-uAPI submission figures
# and the VM tests of the library (tests/lib/*_test.c ->
# build/tests/libaccel_*_test). All are linked statically against
# libaccel.a (and libdrm.a) so that they run in the VM's initramfs as they
# are.
#
# lib/lib.mk defines LIBACCEL_A, LIBACCEL_CFLAGS and install-lib; the
# defaults below only matter while it is absent (syntax checks).

LIBACCEL_A ?= $(BUILD)/lib/libaccel.a
LIBACCEL_CFLAGS ?= -I$(TOP)/lib/include -I$(TOP)/uapi $(DRM_CFLAGS)
ACCEL_HDRS := $(wildcard lib/include/accel/*.h) uapi/drm/vaccel_accel.h

# Static programs on libaccel: C11 with POSIX, the project's warnings.
ACCEL_APP_CFLAGS = -std=gnu11 -D_GNU_SOURCE -O2 -g $(WARN_CFLAGS) -pthread $(LIBACCEL_CFLAGS)
ACCEL_APP_LIBS = $(LIBACCEL_A) $(DRM_LIBS) -lm

ACCEL_TOOLS := $(BUILD)/tools/accel-info $(BUILD)/tools/accel-bench
LIBACCEL_TEST_SRCS := $(wildcard tests/lib/*_test.c)
LIBACCEL_TESTS := $(patsubst tests/lib/%.c,$(BUILD)/tests/libaccel_%,$(LIBACCEL_TEST_SRCS))
BINDIR ?= $(PREFIX)/bin
PREFIX ?= /usr/local

.PHONY: accel-tools libaccel-tests install-tools uninstall-tools

all: accel-tools libaccel-tests
install: install-tools
uninstall: uninstall-tools

accel-tools: $(ACCEL_TOOLS)
libaccel-tests: $(LIBACCEL_TESTS)

$(BUILD)/tools/accel-info: tools/accel-info.c $(ACCEL_HDRS) $(LIBACCEL_A)
	@mkdir -p $(@D)
	$(CC) $(ACCEL_APP_CFLAGS) -static -o $@ $< $(ACCEL_APP_LIBS)

# The raw path is measured exactly as vaccel-bench does it
# (tests/kselftest/vaccel_queue_util.h).
$(BUILD)/tools/accel-bench: tools/accel-bench.c $(ACCEL_HDRS) $(LIBACCEL_A) \
		$(wildcard tests/kselftest/*.h)
	@mkdir -p $(@D)
	$(CC) $(ACCEL_APP_CFLAGS) -static -o $@ $< $(ACCEL_APP_LIBS)

# kselftest harness programs (not -Wextra clean, as TEST_CFLAGS says)
$(LIBACCEL_TESTS): $(BUILD)/tests/libaccel_%: tests/lib/%.c $(wildcard tests/lib/*.h) \
		$(wildcard tests/kselftest/*.h) $(ACCEL_HDRS) $(LIBACCEL_A) $(LINUX_SRC_STAMP)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(LIBACCEL_CFLAGS) -static -o $@ $< $(ACCEL_APP_LIBS)

install-tools: $(ACCEL_TOOLS)
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(ACCEL_TOOLS) $(DESTDIR)$(BINDIR)/

uninstall-tools:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(ACCEL_TOOLS)))
