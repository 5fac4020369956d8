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
