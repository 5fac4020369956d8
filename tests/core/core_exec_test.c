// SPDX-License-Identifier: GPL-2.0-only
/*
 * Native tests of the uAPI 3 parts of the packet core: EXEC binding
 * tables and binding addresses, nested epochs, the fault record's EXEC
 * depth, body index and binding, masked wrap-safe WAIT GE, busy time
 * charged by the OS layer, and split bulk packets.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include "core_fixture.h"

#define B(i, off)	DRM_VACCEL_BINDING_ADDR(i, off)

/* An EXEC of @n packets at @body with a binding table at @table. */
static struct drm_vaccel_packet exec_pkt(u64 body, u64 n, u64 epoch, u64 table,
					 u16 nbind)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_EXEC, body, n, epoch, table);

	p.arg = nbind;
	return p;
}

static struct drm_vaccel_packet signal_pkt(u64 addr, u32 op, u64 value)
{
	struct drm_vaccel_packet p = pkt(DRM_VACCEL_PKT_SIGNAL, addr, value, 0, 0);

	p.arg = op;
	return p;
}

/*
 * One sealed body, two launches with different tables: the same packets
 * copy a different source to a different destination and signal a
 * different word each launch, without touching the body.
 */
TEST_F(core, bindings_retarget_a_sealed_body)
{
	struct drm_vaccel_packet body[2];
	u64 *table = (u64 *)self->data;	/* tables live in plain memory */
	u64 va;

	body[0] = pkt(DRM_VACCEL_PKT_COPY, B(0, 16), B(1, 32), 64, 0);
	body[1] = with_completion(signal_pkt(B(2, 8), DRM_VACCEL_SIGNAL_ADD, 5),
				  B(2, 16), DRM_VACCEL_SIGNAL_SET, 9);
	va = exec_buf(self->exec, 0, body, 2);
	fill_random(self->data + 4096, 8192, 21);

	table[0] = DATA_VA + 4096;	/* launch 1 */
	table[1] = DATA_VA + 65536;
	table[2] = SIG_VA;
	table[3] = DATA_VA + 8192;	/* launch 2 */
	table[4] = DATA_VA + 131072;
	table[5] = SIG_VA + 64;
	EMIT(exec_pkt(va, 2, 0, DATA_VA, 3));
	EMIT(exec_pkt(va, 2, 0, DATA_VA + 24, 3));
	/* the table is copied at EXEC start: later changes do not count */
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(0, memcmp(self->data + 4096 + 16, self->data + 65536 + 32, 64));
	EXPECT_EQ(0, memcmp(self->data + 8192 + 16, self->data + 131072 + 32, 64));
	EXPECT_EQ(5, self->sig[1]);
	EXPECT_EQ(9, self->sig[2]);
	EXPECT_EQ(5, self->sig[9]);
	EXPECT_EQ(9, self->sig[10]);
	EXPECT_EQ(2, self->q.read_index);
	EXPECT_EQ(0, self->os.maps);
}

/* A nested EXEC without a table runs with its parent's; with one, its own. */
TEST_F(core, bindings_inherited_or_replaced_by_nested_exec)
{
	struct drm_vaccel_packet inner = signal_pkt(B(0, 0), DRM_VACCEL_SIGNAL_ADD, 1);
	struct drm_vaccel_packet outer[2];
	u64 *table = (u64 *)self->data;
	u64 iva, ova;

	iva = exec_buf(self->exec, 0, &inner, 1);
	outer[0] = exec_pkt(iva, 1, 0, 0, 0);			/* inherits */
	outer[1] = exec_pkt(iva, 1, 0, DATA_VA + 8, 1);		/* its own */
	ova = exec_buf(self->exec, 64, outer, 2);
	table[0] = SIG_VA;
	table[1] = SIG_VA + 8;
	EMIT(exec_pkt(ova, 2, 0, DATA_VA, 1));
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(1, self->sig[0]);
	EXPECT_EQ(1, self->sig[1]);
}

TEST_F(core, binding_faults_name_entry_depth_and_index)
{
	struct drm_vaccel_packet body[3];
	u64 *table = (u64 *)self->data;
	u64 va;

	/* entry 1 points at an unmapped page: UNMAPPED, binding 2 */
	body[0] = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	body[1] = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	body[2] = pkt(DRM_VACCEL_PKT_COPY, B(0, 0), B(1, 8), 8, 0);
	va = exec_buf(self->exec, 0, body, 3);
	table[0] = DATA_VA + 4096;
	table[1] = 0x900000000ull;
	EMIT(pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0));
	EMIT(exec_pkt(va, 3, 0, DATA_VA, 2));
	ASSERT_EQ(VACCEL_CORE_FAULT, RUN());
	EXPECT_EQ(DRM_VACCEL_FAULT_UNMAPPED, self->q.fault);
	EXPECT_EQ(0x900000008ull, self->q.fault_addr);
	EXPECT_EQ(2, self->q.fault_binding);
	EXPECT_EQ(1, self->q.fault_depth);
	EXPECT_EQ(2, self->q.fault_exec_index);
	EXPECT_EQ(1, self->q.fault_index);
	EXPECT_EQ(0, self->os.maps);
}

TEST_F(core, bad_binding_addresses)
{
	static const struct { u64 addr; u16 nbind; u64 base; } c[] = {
		{ B(2, 0), 2, DATA_VA },		/* past the table */
		{ B(0, 0), 0, 0 },			/* no table at all */
		{ B(0, 0x10) | (1ull << 60), 1, DATA_VA },	/* stray bits */
		{ B(0, 0xffffffffffffull), 1, ~0ull - 16 },	/* wraps */
	};
	u64 *table = (u64 *)self->data;
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct drm_vaccel_packet body = signal_pkt(c[i].addr,
							   DRM_VACCEL_SIGNAL_SET, 1);
		u64 va = exec_buf(self->exec, 64 * i, &body, 1);

		vaccel_core_queue_init(&self->q, &self->os, RING_VA, RING_N);
		os_track_reset(&self->os);
		self->wi = 0;
		table[0] = c[i].base;
		table[1] = c[i].base;
		EMIT(exec_pkt(va, 1, 0, c[i].nbind ? DATA_VA : 0, c[i].nbind));
		ASSERT_EQ(VACCEL_CORE_FAULT, RUN()) TH_LOG("case %u", i);
		EXPECT_EQ(DRM_VACCEL_FAULT_BINDING, self->q.fault) TH_LOG("case %u", i);
		EXPECT_EQ(c[i].addr, self->q.fault_addr) TH_LOG("case %u", i);
		EXPECT_EQ(1, self->q.fault_depth) TH_LOG("case %u", i);
		EXPECT_EQ(0, self->os.maps);
	}
	/* a binding address on the ring has no table to name */
	vaccel_core_queue_init(&self->q, &self->os, RING_VA, RING_N);
	os_track_reset(&self->os);
	self->wi = 0;
	EMIT(signal_pkt(B(0, 0), DRM_VACCEL_SIGNAL_SET, 1));
	ASSERT_EQ(VACCEL_CORE_FAULT, RUN());
	EXPECT_EQ(DRM_VACCEL_FAULT_BINDING, self->q.fault);
	EXPECT_EQ(0, self->q.fault_depth);
}

TEST_F(core, exec_table_validated)
{
	struct drm_vaccel_packet body = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	u64 va = exec_buf(self->exec, 0, &body, 1);
	static const struct { u64 table; u16 n; u32 fault; } c[] = {
		{ DATA_VA, DRM_VACCEL_EXEC_MAX_BINDINGS + 1, DRM_VACCEL_FAULT_BAD_PACKET },
		{ DATA_VA, 0, DRM_VACCEL_FAULT_BAD_PACKET },	/* table, no count */
		{ 0, 1, DRM_VACCEL_FAULT_BAD_PACKET },		/* count, no table */
		{ DATA_VA + 4, 1, DRM_VACCEL_FAULT_ALIGNMENT },
		{ 0x900000000ull, 1, DRM_VACCEL_FAULT_UNMAPPED },
		{ WO_VA, 1, DRM_VACCEL_FAULT_ACCESS },
		{ DATA_VA + DATA_SIZE - 8, 2, DRM_VACCEL_FAULT_UNMAPPED },	/* runs off */
	};
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		vaccel_core_queue_init(&self->q, &self->os, RING_VA, RING_N);
		os_track_reset(&self->os);
		self->wi = 0;
		EMIT(exec_pkt(va, 1, 0, c[i].table, c[i].n));
		ASSERT_EQ(VACCEL_CORE_FAULT, RUN()) TH_LOG("case %u", i);
		EXPECT_EQ(c[i].fault, self->q.fault) TH_LOG("case %u", i);
		EXPECT_EQ(0, self->q.fault_depth);
		EXPECT_EQ(0, self->os.maps);
	}
	/* MAX_BINDINGS entries are fine */
	vaccel_core_queue_init(&self->q, &self->os, RING_VA, RING_N);
	os_track_reset(&self->os);
	self->wi = 0;
	EMIT(exec_pkt(va, 1, 0, DATA_VA, DRM_VACCEL_EXEC_MAX_BINDINGS));
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
}

/*
 * Nested epochs: an inner EXEC with DRM_VACCEL_EXEC_F_EPOCH runs at the
 * outer epoch plus its own operand, so a sealed graph that calls a sealed
 * sub-graph stays launch-relative; without the flag the operand is taken
 * as it is (uAPI 2 behaviour).
 */
TEST_F(core, nested_epochs_compose)
{
	struct drm_vaccel_packet inner = signal_pkt(SIG_VA, DRM_VACCEL_SIGNAL_SET, 0);
	struct drm_vaccel_packet outer[2];
	u64 iva, ova;

	inner.flags = DRM_VACCEL_SIGNAL_F_EPOCH;
	iva = exec_buf(self->exec, 0, &inner, 1);
	outer[0] = exec_pkt(iva, 1, 3, 0, 0);
	outer[0].flags = DRM_VACCEL_EXEC_F_EPOCH;
	outer[1] = with_completion(exec_pkt(iva, 1, 3, 0, 0), SIG_VA + 8,
				   DRM_VACCEL_SIGNAL_SET, 1);
	ova = exec_buf(self->exec, 64, outer, 2);

	EMIT(exec_pkt(ova, 1, 100, 0, 0));	/* only outer[0] */
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(103, self->sig[0]);
	EMIT(exec_pkt(ova + 64, 1, 100, 0, 0));	/* only outer[1] */
	ASSERT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(3, self->sig[0]);
	EXPECT_EQ(1, self->sig[1]);
}

/* An EXEC's own completion fault is recorded one level out. */
TEST_F(core, exec_completion_fault_depth)
{
	struct drm_vaccel_packet inner = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	struct drm_vaccel_packet outer[2];
	u64 iva, ova;

	iva = exec_buf(self->exec, 0, &inner, 1);
	outer[0] = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);
	outer[1] = with_completion(exec_pkt(iva, 1, 0, 0, 0), DATA_VA,
				   DRM_VACCEL_SIGNAL_SET, 1);	/* not a signal */
	ova = exec_buf(self->exec, 64, outer, 2);
	EMIT(exec_pkt(ova, 2, 0, 0, 0));
	ASSERT_EQ(VACCEL_CORE_FAULT, RUN());
	EXPECT_EQ(DRM_VACCEL_FAULT_NOT_SIGNAL, self->q.fault);
	EXPECT_EQ(DATA_VA, self->q.fault_addr);
	EXPECT_EQ(1, self->q.fault_depth);
	EXPECT_EQ(1, self->q.fault_exec_index);
}

/*
 * WAIT GE with a mask compares in the mask's width: a counter kept in the
 * low 8 bits is "at or after" its target across its own wrap-around.
 */
TEST(masked_ge_is_wrap_safe_in_its_width)
{
	EXPECT_TRUE(vaccel_core_wait_done(0x01, 0xff, 0xff, DRM_VACCEL_WAIT_GE));
	EXPECT_FALSE(vaccel_core_wait_done(0xff, 0x01, 0xff, DRM_VACCEL_WAIT_GE));
	EXPECT_TRUE(vaccel_core_wait_done(0x7f, 0x00, 0xff, DRM_VACCEL_WAIT_GE));
	EXPECT_FALSE(vaccel_core_wait_done(0x80, 0x00, 0xff, DRM_VACCEL_WAIT_GE));
	/* other bits do not count, whatever their value */
	EXPECT_TRUE(vaccel_core_wait_done(0xabcd0001ull, 0x12ff, 0xff, DRM_VACCEL_WAIT_GE));
	/* a shifted run: bits 8-15 */
	EXPECT_TRUE(vaccel_core_wait_done(0x0100, 0xff00, 0xff00, DRM_VACCEL_WAIT_GE));
	EXPECT_FALSE(vaccel_core_wait_done(0xff00, 0x0100, 0xff00, DRM_VACCEL_WAIT_GE));
	/* one bit: GE means equal */
	EXPECT_TRUE(vaccel_core_wait_done(0x4, 0x4, 0x4, DRM_VACCEL_WAIT_GE));
	EXPECT_FALSE(vaccel_core_wait_done(0x0, 0x4, 0x4, DRM_VACCEL_WAIT_GE));
	/* all bits, as before */
	EXPECT_TRUE(vaccel_core_wait_done(1, ~0ull, 0, DRM_VACCEL_WAIT_GE));
	EXPECT_TRUE(vaccel_core_wait_done(1, ~0ull, ~0ull, DRM_VACCEL_WAIT_GE));
	EXPECT_FALSE(vaccel_core_wait_done(1ull << 63, 0, 0, DRM_VACCEL_WAIT_GE));

	EXPECT_TRUE(vaccel_core_wait_valid(0xff00, DRM_VACCEL_WAIT_GE));
	EXPECT_TRUE(vaccel_core_wait_valid(0, DRM_VACCEL_WAIT_GE));
	EXPECT_TRUE(vaccel_core_wait_valid(1ull << 63, DRM_VACCEL_WAIT_GE));
	EXPECT_FALSE(vaccel_core_wait_valid(0xf0f, DRM_VACCEL_WAIT_GE));
	EXPECT_TRUE(vaccel_core_wait_valid(0xf0f, DRM_VACCEL_WAIT_EQ));
	EXPECT_TRUE(vaccel_core_wait_valid(0xf0f, DRM_VACCEL_WAIT_NE));
	EXPECT_FALSE(vaccel_core_wait_valid(0, 3));
}

TEST_F(core, masked_ge_needs_one_run_of_bits)
{
	EMIT(wait_pkt(SIG_VA, 1, 0x0f0f, 0, DRM_VACCEL_WAIT_GE));
	ASSERT_EQ(VACCEL_CORE_FAULT, RUN());
	EXPECT_EQ(DRM_VACCEL_FAULT_BAD_PACKET, self->q.fault);

	vaccel_core_queue_init(&self->q, &self->os, RING_VA, RING_N);
	os_track_reset(&self->os);
	self->wi = 0;
	self->sig[0] = 0x301;
	EMIT(wait_pkt(SIG_VA, 0xff, 0xff, 0, DRM_VACCEL_WAIT_GE));	/* 0x01 >= 0xff */
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
}

/*
 * Time the OS layer charges (the link model, injected latency) makes the
 * queue busy after the step, and defers the packet's completion.
 */
TEST_F(core, charged_time_defers_completion)
{
	struct drm_vaccel_packet c = pkt(DRM_VACCEL_PKT_COPY, DATA_VA, DATA_VA + 4096, 64, 0);

	self->os.now = 500;
	self->os.charge = 7000;	/* as if the copy crossed a slow link */
	EMIT(with_completion(c, SIG_VA, DRM_VACCEL_SIGNAL_SET, 1));
	EMIT(signal_pkt(SIG_VA + 8, DRM_VACCEL_SIGNAL_SET, 2));
	EXPECT_EQ(VACCEL_CORE_BUSY, RUN());
	EXPECT_EQ(7500, self->q.busy_until);
	EXPECT_EQ(0, self->sig[0]);
	EXPECT_EQ(0, self->sig[1]);
	self->os.now = 7499;
	EXPECT_EQ(VACCEL_CORE_BUSY, RUN());
	self->os.now = 7500;
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(1, self->sig[0]);
	EXPECT_EQ(2, self->sig[1]);
}

/*
 * Link time runs from the step's first charged access, or from the end of
 * the busy period the queue went straight on from, whichever is earlier:
 * back-to-back transfers keep the link's rate however late the engine
 * comes back. A step that charges nothing, or the ring running dry, ends
 * the chain. (The rule was in both OS layers and both engine loops.)
 */
TEST_F(core, link_time_runs_from_the_first_access_or_the_busy_end)
{
	struct drm_vaccel_packet c = pkt(DRM_VACCEL_PKT_COPY, DATA_VA, DATA_VA + 4096, 64, 0);
	struct drm_vaccel_packet nop = pkt(DRM_VACCEL_PKT_NOP, 0, 0, 0, 0);

	EMIT(c);
	EMIT(c);
	EMIT(nop);
	EMIT(c);
	/* the copy itself took 400 ns of its 7000 ns transfer */
	self->os.now = 500;
	self->os.charge = 7000;
	self->os.charge_first = 100;
	ASSERT_EQ(VACCEL_CORE_BUSY, vaccel_core_run(&self->q, self->wi, 1));
	EXPECT_EQ(7100, self->q.busy_until);

	/* the engine comes back 1900 ns late; the next copy started at 8800 */
	self->os.now = 9000;
	ASSERT_EQ(VACCEL_CORE_BUDGET, vaccel_core_run(&self->q, self->wi, 1));
	EXPECT_EQ(0, self->q.busy_until);
	self->os.charge = 7000;
	self->os.charge_first = 8800;
	ASSERT_EQ(VACCEL_CORE_BUSY, vaccel_core_run(&self->q, self->wi, 1));
	EXPECT_EQ(7100 + 7000, self->q.busy_until);	/* not 8800 + 7000 */

	/* a NOP in between: the third copy's transfer starts with its access */
	self->os.now = 14100;
	ASSERT_EQ(VACCEL_CORE_BUDGET, vaccel_core_run(&self->q, self->wi, 1));
	ASSERT_EQ(VACCEL_CORE_BUDGET, vaccel_core_run(&self->q, self->wi, 1));
	self->os.now = 20000;
	self->os.charge = 7000;
	self->os.charge_first = 19900;
	ASSERT_EQ(VACCEL_CORE_BUSY, vaccel_core_run(&self->q, self->wi, 1));
	EXPECT_EQ(19900 + 7000, self->q.busy_until);

	/* the ring ran dry in between: the same */
	self->os.now = 30000;
	ASSERT_EQ(VACCEL_CORE_BUDGET, vaccel_core_run(&self->q, self->wi, 1));
	ASSERT_EQ(VACCEL_CORE_IDLE, vaccel_core_run(&self->q, self->wi, 1));
	EMIT(c);
	self->os.now = 31000;
	self->os.charge = 7000;
	self->os.charge_first = 30950;
	ASSERT_EQ(VACCEL_CORE_BUSY, vaccel_core_run(&self->q, self->wi, 1));
	EXPECT_EQ(30950 + 7000, self->q.busy_until);

	/* all of its link time passed already: no busy time, the copy completes */
	self->os.now = 50000;
	ASSERT_EQ(VACCEL_CORE_BUDGET, vaccel_core_run(&self->q, self->wi, 1));
	EMIT(c);
	self->os.charge = 7000;
	self->os.charge_first = 1;
	EXPECT_EQ(VACCEL_CORE_BUDGET, vaccel_core_run(&self->q, self->wi, 1));
	EXPECT_EQ(0, self->q.busy_until);
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
}

/*
 * A bulk packet split into ranges run out of order (as idle engines do):
 * the result is the same as one engine's, and the packet completes once
 * on its queue, in order with the packets around it.
 */
TEST_F(core, split_bulk_packet)
{
	u64 size = 5 * VACCEL_CORE_CHUNK + 100, unit, left, from, to, addr;
	unsigned int slot, k;
	struct drm_vaccel_packet c;

	fill_random(self->data, size, 31);
	EMIT(with_completion(pkt(DRM_VACCEL_PKT_COPY, DATA_VA, DATA_VA + (2u << 20), size, 0),
			     SIG_VA, DRM_VACCEL_SIGNAL_SET, 1));
	EMIT(signal_pkt(SIG_VA + 8, DRM_VACCEL_SIGNAL_SET, 2));
	ASSERT_EQ(VACCEL_CORE_BUDGET, vaccel_core_run(&self->q, self->wi, 1));
	left = vaccel_core_bulk_left(&self->q, &unit);
	EXPECT_EQ(1, unit);
	EXPECT_EQ(size - VACCEL_CORE_CHUNK, left);
	c = self->q.pkt;
	/* ranges in reverse order, as other engines might finish them */
	for (k = 5; k >= 1; k--) {
		from = k * VACCEL_CORE_CHUNK;
		to = from + VACCEL_CORE_CHUNK < size ? from + VACCEL_CORE_CHUNK : size;
		ASSERT_EQ(DRM_VACCEL_FAULT_NONE,
			  vaccel_core_bulk_range(&self->os, &c, from, to, &addr, &slot));
	}
	EXPECT_EQ(0, self->sig[0]);
	ASSERT_TRUE(vaccel_core_bulk_done(&self->q, size, 0, 0, VACCEL_CORE_SLOT_NONE));
	EXPECT_EQ(0, vaccel_core_bulk_left(&self->q, &unit));
	EXPECT_EQ(VACCEL_CORE_IDLE, RUN());
	EXPECT_EQ(0, memcmp(self->data, self->data + (2u << 20), size));
	EXPECT_EQ(1, self->sig[0]);
	EXPECT_EQ(2, self->sig[1]);
	EXPECT_EQ(size, self->q.bytes);
	EXPECT_EQ(0, self->os.maps);
}

/* A range that faults reports its address; the queue faults with it. */
TEST_F(core, split_bulk_fault)
{
	struct drm_vaccel_packet c;
	u64 unit, addr;
	unsigned int slot;

	/* REDUCE of 800 KB (several chunks) whose second source runs off */
	c = pkt(DRM_VACCEL_PKT_REDUCE, 0, 0, 0, 0);
	c.arg = DRM_VACCEL_DTYPE_F32 | DRM_VACCEL_REDOP_SUM << 8;
	c.operand[3] = 200000;	/* 800 KB: several chunks */
	c.operand[1] = DATA_VA + DATA_SIZE - 500000;
	c.operand[2] = DATA_VA + 8;
	c.operand[0] = DATA_VA + (1u << 21);
	EMIT(c);
	/* the first step runs one chunk on the queue */
	ASSERT_EQ(VACCEL_CORE_BUDGET, vaccel_core_run(&self->q, self->wi, 1));
	ASSERT_EQ(200000 - VACCEL_CORE_CHUNK / 4, vaccel_core_bulk_left(&self->q, &unit));
	EXPECT_EQ(4, unit);
	c = self->q.pkt;
	EXPECT_EQ(DRM_VACCEL_FAULT_UNMAPPED,
		  vaccel_core_bulk_range(&self->os, &c, 125000, 200000, &addr, &slot));
	EXPECT_EQ(DATA_VA + DATA_SIZE, addr);
	EXPECT_EQ(VACCEL_CORE_SLOT_OP1, slot);
	EXPECT_FALSE(vaccel_core_bulk_done(&self->q, 125000, DRM_VACCEL_FAULT_UNMAPPED,
					   addr, slot));
	EXPECT_EQ(DRM_VACCEL_FAULT_UNMAPPED, self->q.fault);
	EXPECT_EQ(DATA_VA + DATA_SIZE, self->q.fault_addr);
	EXPECT_EQ(VACCEL_CORE_FAULT, RUN());
	EXPECT_EQ(0, self->os.maps);
}

TEST_HARNESS_MAIN
