/* SPDX-License-Identifier: GPL-2.0-only */
/* The fuzz target's address space, shared with the seed generator. */
#ifndef CORE_FUZZ_H
#define CORE_FUZZ_H

#define RING_VA		0x10000ull
#define RING_N		16
#define EXEC_VA		0x20000ull
#define DATA_VA		0x30000ull
#define RO_VA		0x50000ull
#define WO_VA		0x51000ull
#define SIG_VA		0x52000ull

#endif
