# SPDX-License-Identifier: MIT
#
# The task graph's pure-logic parts (lib/graph/): the TensorMap and the
# output heap, built alone into their native tests and into
# tools/tensormap-bench (the whole of lib/graph/ is in LIBACCEL_SRCS).
# Included at the end of lib/lib.mk.

GRAPH_SRCS := lib/graph/tensormap.c lib/graph/heap.c
GRAPH_HDRS := $(wildcard lib/graph/*.h) lib/include/accel/tensor.h

# The native tests are in LIB_NATIVE_TESTS (lib.mk's wildcard); add the
# sources each needs.
$(BUILD)/host-tests/libaccel_tensormap_test: LIB_NATIVE_LIBSRCS += lib/graph/tensormap.c
$(BUILD)/host-tests/libaccel_tensormap_test: lib/graph/tensormap.c $(GRAPH_HDRS)
# (this one compiles tensormap.c into itself, with a failing allocator)
$(BUILD)/host-tests/libaccel_tensormap_internal_test: lib/graph/tensormap.c $(GRAPH_HDRS)
$(BUILD)/host-tests/libaccel_heap_test: LIB_NATIVE_LIBSRCS += lib/graph/heap.c
$(BUILD)/host-tests/libaccel_heap_test: lib/graph/heap.c $(GRAPH_HDRS)

# Lookups per second, the interval tree against a linear scan (native, -O2).
TENSORMAP_BENCH := $(BUILD)/tools/tensormap-bench

$(TENSORMAP_BENCH): tools/tensormap-bench.c tools/bench_noise.h lib/graph/tensormap.c $(GRAPH_HDRS)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 $(WARN_CFLAGS) -I$(TOP)/lib -I$(TOP)/lib/include \
		-o $@ tools/tensormap-bench.c lib/graph/tensormap.c

all: $(TENSORMAP_BENCH)
