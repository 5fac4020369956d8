# SPDX-License-Identifier: GPL-2.0-only
#
# libaccel's examples (included by the top Makefile): examples/*.c ->
# build/examples/*, linked statically against libaccel.a so that they run
# in the VM. Each exits 0 only if its own check passed;
# build/tests/libaccel_examples_test runs them in the VM (tests/run-all
# copies build/examples/ there).

EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLES := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRCS))

.PHONY: examples

all: examples

examples: $(EXAMPLES)

$(EXAMPLES): $(BUILD)/examples/%: examples/%.c $(ACCEL_HDRS) $(LIBACCEL_A)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(ACCEL_APP_CFLAGS) -static -o $@ $< $(ACCEL_APP_LIBS)
