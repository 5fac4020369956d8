# SPDX-License-Identifier: MIT
#
# The in-process device (ACCEL_BACKEND=sim, Documentation/sim.rst), built
# into libaccel.so and libaccel.a with the module's packet core
# (kmod/core/, GPL-2.0-only OR MIT) compiled in by sim_core.c. Included by
# lib/lib.mk right after its source list.

SIM_SRCS := $(addprefix lib/sim/,sim_core.c sim_sync.c sim_bus.c sim_transport.c sim_bo.c \
	sim_vm.c sim_queue.c sim_engine.c sim_split.c sim_signal.c sim_os.c sim_knobs.c)
SIM_HDRS := $(wildcard lib/sim/*.h) $(wildcard kmod/core/*.h)

LIBACCEL_SRCS += $(SIM_SRCS)
LIBACCEL_HDRS += $(SIM_HDRS)

# the core's sources are included by sim_core.c
$(LIBACCEL_DIR)/obj/sim/sim_core.o: $(wildcard kmod/core/*.c)

# ---- tests ----

# The in-process device's native tests: the whole library compiled in
# under ASan and UBSan (libaccel_sim_test: the uAPI's rules and errnos,
# protections, queues, waits, removal, knobs; libaccel_sim_api_test: the
# public API end to end), and its concurrent test under ThreadSanitizer
# (clang: gcc refuses atomic_thread_fence() under TSan). lib.mk keeps them
# out of its own native tests.
SIM_TEST_SRCS := tests/lib-native/libaccel_sim_test.c tests/lib-native/libaccel_sim_api_test.c
SIM_TSAN_SRC := tests/lib-native/libaccel_sim_threads_test.c
SIM_TESTS := $(patsubst tests/lib-native/%.c,$(BUILD)/host-tests/%,$(SIM_TEST_SRCS))
SIM_TSAN_TEST := $(BUILD)/host-tests/libaccel_sim_threads_test
SIM_TEST_DEPS = $(LIBACCEL_SRCS) $(LIBACCEL_HDRS) $(wildcard kmod/core/*.c) \
	tests/lib-native/sim_raw.h $(LINUX_SRC_STAMP)

$(SIM_TESTS): $(BUILD)/host-tests/%: tests/lib-native/%.c $(SIM_TEST_DEPS)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(TEST_CFLAGS) -O1 $(SAN_FLAGS) -I$(TOP)/lib $(LIBACCEL_CFLAGS) -o $@ $< \
		$(LIBACCEL_SRCS) $(LIBACCEL_LIBS)

$(SIM_TSAN_TEST): $(SIM_TSAN_SRC) $(SIM_TEST_DEPS)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)clang $(TEST_CFLAGS) -O1 -fsanitize=thread -fno-omit-frame-pointer -I$(TOP)/lib \
		$(LIBACCEL_CFLAGS) -o $@ $< $(LIBACCEL_SRCS) $(LIBACCEL_LIBS)

tests: $(SIM_TESTS) $(SIM_TSAN_TEST)
