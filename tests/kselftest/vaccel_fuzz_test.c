// SPDX-License-Identifier: GPL-2.0-only
/*
 * A seeded, time-bounded fuzzer of the whole vaccel uAPI, run in the VM.
 *
 * Several threads, each with private files on two devices and a view of
 * two files shared by all, run random operations for VACCEL_FUZZ_SECONDS:
 * every vaccel ioctl, the DRM core's GEM_CLOSE, PRIME and VERSION, mmap,
 * munmap, mremap, mprotect and madvise of buffers, dma-bufs and queue
 * pages, plausible and random packets written into rings followed by
 * doorbell stores and KICKs, fork (the child goes on briefly on the
 * inherited files), close, dup and reopen of files, dma-bufs passed
 * between files and devices, signals that interrupt waits, debugfs reads
 * and the fault-injection knobs. Arguments mix real values (live handles,
 * bound addresses, valid sizes) with boundary and garbage values.
 *
 * Oracles:
 *  - every call returns 0 or an errno documented for it (the table below,
 *    from the uAPI header and Documentation/uapi.rst); on a private file
 *    whose state this thread knows exactly, the result must also be the
 *    one the contract gives for that state (a seal with a writable mapping
 *    is -EBUSY, a known handle's BO_INFO succeeds, an invalid field fails);
 *  - a "checked" queue per private file runs valid FILL, COPY, REDUCE,
 *    SIGNAL, WAIT, DELAY and TIMESTAMP packets whose results are computed
 *    here too: it must produce exactly those bytes and signal values, or
 *    stop with an injected fault or a reset, and never stall;
 *  - queue state read through QUEUE_QUERY and the control page is
 *    consistent and monotonic; nothing crashes or hangs (a watchdog names
 *    any operation that takes more than FZ_STUCK_S seconds);
 *  - afterwards, with every file, mapping and dma-buf closed and every
 *    child reaped, the module's object counters are back to where they
 *    started and the devices' memory is all free.
 * The VM rig fails the run on any kernel BUG/WARNING/Oops (and the debug
 * kernel's KASAN/lockdep/kmemleak reports).
 *
 * Each operation draws its random numbers from a generator seeded with
 * (thread seed, operation number), so the sequence of operations and of
 * arguments a thread tries is a function of the seed alone; what they act
 * on (handles, addresses) follows the kernel's results. VACCEL_FUZZ_SEED
 * replays a run, VACCEL_FUZZ_THREADS=1 makes it single-threaded, and
 * VACCEL_FUZZ_TRACE=1 prints every call. The smoke test replays a fixed
 * seed on one thread for a fixed number of operations.
 *
 * Copyright (C) 2026 The vaccel authors
 */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "vaccel_common.h"
#include "vaccel_queue_util.h"
#include "kselftest_harness.h"

/*
 * Queue pages: QUEUE_CREATE returns doorbell and control offsets at
 * QPAGE_BASE + id * 2 pages (uAPI 3: below 4 GiB, so that 32-bit processes
 * can map them; GEM offsets start at 4 GiB); checked at every creation.
 */
#define QPAGE_BASE	(1ULL << 30)

static bool is_qpage(uint64_t off)
{
	return off >= QPAGE_BASE && off < (1ULL << 32);
}

/* Devices the fuzzer creates, so that knobs and resets touch nothing else. */
#define FZ_DEV_A		(VACCEL_TEST_ID + 20)
#define FZ_DEV_B		(VACCEL_TEST_ID + 21)
#define FZ_SECONDS_DEFAULT	40
#define FZ_THREADS_DEFAULT	4
#define FZ_MAX_THREADS		16
#define FZ_SMOKE_SEED		0x76616363656cULL	/* "vaccel" */
#define FZ_SMOKE_OPS		3000
#define FZ_STUCK_S		60	/* one call longer than this hangs */
#define FZ_SETTLE_MS		20000	/* counters back, memory freed */
#define FZ_CHK_DRAIN_MS		20000	/* a checked queue finishes its work */

/* Per-thread model sizes */
#define F_PRIV		3	/* private files: two on device A, one on B */
#define F_VIEWS		2	/* this thread's view of the two shared files */
#define F_ALL		(F_PRIV + F_VIEWS)
#define F_BOS		40
#define F_MAPS		40
#define F_QS		10
#define F_EXECS		6
#define F_STALE		8
#define W_HMAPS		24
#define W_EFDS		3
#define W_ARMS		16
#define W_DMABUFS	4
#define FZ_POOL		24

/* Plausible binds land in [VA_LO, VA_LO + FZ_VA_SPAN): overlaps happen. */
#define FZ_VA_SPAN	(32ULL << 20)
/* The checked queue's resources, far from anything random. */
#define CHK_VA		(VACCEL_VA_LO + (1ULL << 40))
#define CHK_RING	64
#define CHK_DATA	(64 * 1024)
#define VA_R		DRM_VACCEL_VM_READ
#define VA_W		DRM_VACCEL_VM_WRITE

#ifndef fallthrough
#define fallthrough	__attribute__((__fallthrough__))
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* ---------------------------------------------------------------------
 * Random numbers: splitmix64, reseeded for every operation
 */
struct rng {
	uint64_t s;
};

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t r64(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ULL;
	return mix64(r->s);
}

/* Uniform in [0, n); 0 for n == 0. */
static uint32_t rn(struct rng *r, uint64_t n)
{
	if (!n)
		return 0;
	if (n > UINT32_MAX)
		return (uint32_t)(r64(r) % n);
	return (uint32_t)(((r64(r) >> 32) * n) >> 32);
}

#define R64()		r64(&w->r)
#define RN(n)		rn(&w->r, (n))
#define ONE_IN(n)	(RN(n) == 0)

/* ---------------------------------------------------------------------
 * Operation kinds and their documented errnos
 */
typedef unsigned __int128 eset;
#define E(e)		((eset)1 << (e))
#define OK		((eset)1)	/* bit 0: success */
#define ANY		((eset)0)	/* whatever is documented, or success */

enum kind {
	K_GET_PARAM, K_BO_CREATE, K_BO_INFO, K_BO_SEAL, K_VM_BIND, K_VM_UNBIND,
	K_QUEUE_CREATE, K_QUEUE_DESTROY, K_QUEUE_QUERY, K_KICK, K_WAIT_SIGNALS,
	K_SIGNAL_WRITE, K_SIGNAL_EVENTFD, K_GEM_CLOSE, K_PRIME_EXPORT,
	K_PRIME_IMPORT, K_VERSION, K_BAD_IOCTL, K_MMAP_BO, K_MMAP_QUEUE,
	K_MMAP_DMABUF, K_MPROTECT, K_MREMAP, K_DEBUGFS,
	/* checks that are not one call's result */
	K_QUEUE_STATE, K_CHECKED, K_HOSTMEM, K_CHILD, K_HANG, K_LEAK,
	K_NKINDS
};

/*
 * EFAULT is in every ioctl's set: the DRM core copies the argument and
 * fails with it for a bad pointer (only the bad-pointer calls expect it).
 * ENODEV is in every ioctl's set (uapi.rst: after an unplug); nothing is
 * unplugged here, so no call expects it. ENOMEM is allowed wherever the
 * kernel allocates (and where the fail_* knobs inject it).
 */
#define IOCTL_ALWAYS	(E(EFAULT) | E(ENODEV))
static const struct kind_info {
	const char *name;
	eset doc;
	bool enomem;
} kinds[K_NKINDS] = {
	/* uapi.h: unknown param or non-zero pad */
	[K_GET_PARAM] = { "GET_PARAM", E(EINVAL) },
	/* zero size, bad flags; above capacity; capacity/memlock; MAX_BOS */
	[K_BO_CREATE] = { "BO_CREATE", E(EINVAL) | E(E2BIG) | E(ENOSPC), true },
	[K_BO_INFO] = { "BO_INFO", E(ENOENT) | E(EINVAL) },
	[K_BO_SEAL] = { "BO_SEAL", E(ENOENT) | E(EINVAL) | E(EBUSY) },
	[K_VM_BIND] = { "VM_BIND", E(ENOENT) | E(EINVAL) | E(EOVERFLOW) |
			E(ERANGE) | E(EBUSY) | E(EACCES) | E(ENOSPC), true },
	[K_VM_UNBIND] = { "VM_UNBIND", E(EINVAL) | E(ENOENT) },
	/*
	 * The header's ENXIO (not mapped) and EACCES (not readable); EPERM
	 * (priority without CAP_SYS_NICE); uapi.rst's EFAULT (uAPI 2).
	 */
	[K_QUEUE_CREATE] = { "QUEUE_CREATE", E(EINVAL) | E(EPERM) | E(ENXIO) |
			     E(EACCES) | E(ENOSPC), true },
	[K_QUEUE_DESTROY] = { "QUEUE_DESTROY", E(EINVAL) | E(ENOENT) },
	[K_QUEUE_QUERY] = { "QUEUE_QUERY", E(EINVAL) | E(ENOENT) },
	[K_KICK] = { "KICK", E(EINVAL) | E(ENOENT) },
	[K_WAIT_SIGNALS] = { "WAIT_SIGNALS", E(EINVAL) | E(ENOENT) | E(ETIME) |
			     E(EIO) | E(EINTR), true },
	[K_SIGNAL_WRITE] = { "SIGNAL_WRITE", E(EINVAL) | E(ENOENT) | E(EACCES) },
	/* as WAIT_SIGNALS for the condition; the eventfd; arms; CANCEL */
	[K_SIGNAL_EVENTFD] = { "SIGNAL_EVENTFD", E(EINVAL) | E(ENOENT) |
			       E(EBADF) | E(ENOSPC), true },
	/* the DRM core: unknown handle */
	[K_GEM_CLOSE] = { "GEM_CLOSE", E(EINVAL) },
	/* the DRM core: flags, handle, no free fd */
	[K_PRIME_EXPORT] = { "PRIME_HANDLE_TO_FD", E(EINVAL) | E(ENOENT) |
			     E(EMFILE) | E(ENFILE), true },
	/* not a file, not a dma-buf, MAX_BOS */
	[K_PRIME_IMPORT] = { "PRIME_FD_TO_HANDLE", E(EBADF) | E(EINVAL) |
			     E(ENOSPC), true },
	[K_VERSION] = { "VERSION", 0 },
	/* unknown numbers (DRM core: EINVAL), other files (ENOTTY) */
	[K_BAD_IOCTL] = { "bad ioctl", E(EINVAL) | E(ENOTTY) },
	/*
	 * memory.rst: other files EACCES, MAP_PRIVATE EINVAL; the mm's own
	 * EOVERFLOW for an offset that wraps (mmap(2))
	 */
	[K_MMAP_BO] = { "mmap(buffer)", E(EINVAL) | E(EACCES) | E(EOVERFLOW), true },
	/* queues.rst/uapi.rst: one page, shared, own queue; control R only */
	[K_MMAP_QUEUE] = { "mmap(queue page)", E(EINVAL) | E(EACCES) | E(EOVERFLOW), true },
	[K_MMAP_DMABUF] = { "mmap(dma-buf)", E(EINVAL) | E(EACCES) | E(EOVERFLOW), true },
	[K_MPROTECT] = { "mprotect", E(EACCES) | E(EINVAL), true },
	[K_MREMAP] = { "mremap", E(EFAULT) | E(EINVAL), true },
	/* knobs: bad values, no such queue; devices.rst */
	[K_DEBUGFS] = { "debugfs", E(EINVAL) | E(ENOENT), true },
	[K_QUEUE_STATE] = { "queue state" },
	[K_CHECKED] = { "checked queue" },
	[K_HOSTMEM] = { "host access" },
	[K_CHILD] = { "forked child" },
	[K_HANG] = { "hang" },
	[K_LEAK] = { "leak" },
};

static bool is_ioctl_kind(int k)
{
	return k <= K_BAD_IOCTL;
}

static eset kind_doc(int k)
{
	return kinds[k].doc | (is_ioctl_kind(k) ? IOCTL_ALWAYS : 0) |
	       (kinds[k].enomem ? E(ENOMEM) : 0);
}

static void eset_str(eset s, char *buf, size_t len)
{
	size_t n = 0;
	int e;

	buf[0] = '\0';
	for (e = 0; e < 128 && n < len; e++) {
		const char *name;

		if (!(s & E(e)))
			continue;
		name = e ? strerrorname_np(e) : "0";
		n += snprintf(buf + n, len - n, "%s%s", n ? " " : "",
			      name ? name : "?");
	}
}

/* ---------------------------------------------------------------------
 * Results shared with forked children: violations, counters
 */
#define FZ_NVIOL	128

struct fz_violation {
	_Atomic uint64_t key;
	_Atomic uint64_t count;
	_Atomic int ready;
	bool note;
	int kind, err;
	int worker, pid;
	uint64_t seed, op;
	char why[48];
	char what[96];
	char detail[200];
};

struct fz_shared {
	struct fz_violation viol[FZ_NVIOL];
	_Atomic uint64_t failures, notes, lost;
	_Atomic uint64_t calls[K_NKINDS], oks[K_NKINDS];
	_Atomic uint64_t packets, doorbells, kicks, forks, killed, knobs;
	_Atomic uint64_t checked_rounds, checked_bytes, checked_dropped;
	_Atomic uint64_t faults[16];
	_Atomic uint64_t interrupts;
};

static struct fz_shared *fz;

struct fz_cfg {
	uint64_t seed;
	unsigned int threads;
	uint64_t ms;		/* run time; 0: bounded by ops only */
	uint64_t ops;		/* operations per thread; 0: unbounded */
	bool trace;
};

static struct fz_cfg cfg;

/* A device the fuzzer created */
struct fz_dev {
	unsigned int id;
	unsigned int engines;
	uint64_t memory;
};

static struct fz_dev devs[2] = {
	{ FZ_DEV_A, 2, 32ULL << 20 },
	{ FZ_DEV_B, 1, 16ULL << 20 },
};

static const char *const dev_specs[2] = {
	"%u engines=2 memory=32M",
	/* sleeps at once (KICK path), throttled link to A's memory */
	"%u engines=1 memory=16M poll_budget_ns=0 link_bw_mbps=4000 link_latency_ns=2000",
};

static int shared_fd[2] = { -1, -1 };
static uint64_t dev_caps;
static bool have_nice;
static _Atomic bool fz_stop;

/*
 * A forked child gets a copy of every mapping of the process, other
 * threads' too, so while one lives an object may have writable mappings
 * its owner does not know of: sealing may then fail with EBUSY.
 */
static _Atomic unsigned int forks_live;
static _Atomic uint64_t forks_started;

/* A token for fork_quiet(): no child lives now */
static uint64_t fork_quiet_begin(void)
{
	return atomic_load(&forks_live) ? ~0ULL : atomic_load(&forks_started);
}

/* No child lived at any time since fork_quiet_begin() returned @token */
static bool fork_quiet(uint64_t token)
{
	return token != ~0ULL && !atomic_load(&forks_live) &&
	       atomic_load(&forks_started) == token;
}

/* dma-bufs exported by anyone, imported by anyone */
struct fz_dmabuf {
	int fd;
	int dev;
	bool rdwr;
	uint64_t size;
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fz_dmabuf pool[FZ_POOL];
static unsigned int npool;

/* ---------------------------------------------------------------------
 * The model of what a thread made
 */
struct mbo {
	uint32_t handle;
	uint32_t flags;		/* DRM_VACCEL_BO_*; the exporter's for imports */
	uint64_t size;
	uint64_t offset;	/* mmap offset through this file */
	uint64_t uid;		/* identifies the object in host mappings */
	bool imported;		/* status IMPORTED */
	bool shared;		/* other files may hold it: may be sealed, bound */
	bool sealed;		/* seen sealed: sealing is for good */
	bool prot;		/* the checked queue's: random ops keep away */
	uint8_t *map;		/* our read-write mapping of all of it */
};

struct mmapping {
	uint64_t va, size;
	uint64_t uid;		/* the object (handles get reused) */
	uint32_t handle, access, bo_flags;
	bool prot;
};

struct mqueue {
	uint32_t id, ring_size;
	uint64_t ring_va, db_off, ctrl_off;
	volatile uint64_t *db;
	const volatile struct drm_vaccel_queue_control *ctrl;
	struct drm_vaccel_packet *ring;	/* host view of the ring, or NULL */
	uint8_t *ring_map;
	size_t ring_map_len;
	uint64_t ring_uid;
	uint64_t wi;		/* packets written */
	uint64_t db_max;	/* largest doorbell value stored */
	uint64_t last_read;	/* monotonic read index */
	bool prot;
};

struct mexec {
	uint64_t va;
	uint32_t n;
};

struct checked;

struct mfile {
	int fd, fd2;		/* fd2: a dup of fd, or -1 */
	int dev;
	bool view;		/* a shared file: not ours to close */
	bool tainted;		/* used by others: the model is a guess */
	unsigned int nbo, nmap, nq, nexec, nstale;
	struct mbo bo[F_BOS];
	struct mmapping map[F_MAPS];
	struct mqueue q[F_QS];
	struct mexec exec[F_EXECS];
	uint32_t stale[F_STALE];
	struct mbo *scratch;	/* descriptors, binding tables */
	uint64_t scratch_va;
	struct checked *chk;
};

enum { HM_BO, HM_DMABUF, HM_DB, HM_CTRL };

struct hmap {
	uint8_t *p;
	size_t len;
	int kind;
	uint64_t uid;		/* the object, 0 if unknown */
	bool maywrite;		/* made with PROT_WRITE: counts for sealing */
	bool writable;		/* PROT_WRITE now */
	bool zapped;		/* pages dropped by madvise: do not touch */
	bool dontfork;
};

struct worker {
	unsigned int idx;
	uint64_t seed;
	struct rng r;
	uint64_t op_no;
	uint64_t until_ms;
	pthread_t thread;
	pid_t tid;
	bool child;		/* a forked child, not the thread itself */
	uint64_t next_uid;
	const char *_Atomic cur_op;
	_Atomic uint64_t op_start_ms;
	bool hang_reported;
	bool joined;

	struct mfile f[F_ALL];
	struct hmap hm[W_HMAPS];
	unsigned int nhm;
	int efd[W_EFDS];
	uint64_t arm[W_ARMS];
	unsigned int narm;
	int dmabuf[W_DMABUFS];	/* a child's own exports */
	unsigned int ndmabuf;

	/* host accesses that may fault */
	sigjmp_buf jb;
	volatile sig_atomic_t guard;
	volatile int guard_sig;
};

static struct worker *workers;
static __thread struct worker *cur;

/*
 * The checked queue of a private file: valid work whose results are known.
 * Its objects, mappings and queue are model entries marked prot; the host
 * views below belong to those entries.
 */
struct checked {
	uint32_t ring_h, data_h, sig_h, qid;
	struct drm_vaccel_packet *ring;
	volatile uint64_t *db;
	const volatile struct drm_vaccel_queue_control *ctrl;
	uint8_t *dmap;
	volatile uint64_t *smap;
	uint64_t wi;		/* packets submitted */
	uint64_t sig0;		/* SIGNAL ADDs to word 0 */
	uint64_t sig1;		/* completion ADDs to word 1 */
	uint64_t ts_after;	/* the last TIMESTAMP (word 2) ran after this */
	bool ts;
	uint8_t shadow[CHK_DATA];
};

/* ---------------------------------------------------------------------
 * Reporting
 */
static uint64_t hash_str(uint64_t h, const char *s)
{
	while (s && *s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ULL;
	return h;
}

/*
 * Record a failure (or a note, which does not fail the run): the first
 * of a kind is printed at once with what reproduces it, repeats counted.
 */
static void report(struct worker *w, bool note, int kind, int err,
		   const char *why, const char *what, const char *fmt, ...)
{
	uint64_t key = hash_str(hash_str(0xcbf29ce484222325ULL ^ (kind * 131 + err),
					 why), what) | 1;
	struct fz_violation *v = NULL;
	bool first = false;
	unsigned int i;
	va_list ap;

	atomic_fetch_add(note ? &fz->notes : &fz->failures, 1);
	for (i = 0; i < FZ_NVIOL; i++) {
		struct fz_violation *s = &fz->viol[(key + i) % FZ_NVIOL];
		uint64_t k = atomic_load(&s->key), zero = 0;

		if (!k && atomic_compare_exchange_strong(&s->key, &zero, key)) {
			first = true;
			v = s;
			break;
		}
		if (atomic_load(&s->key) == key) {
			v = s;
			break;
		}
	}
	if (!v) {
		atomic_fetch_add(&fz->lost, 1);
		return;
	}
	atomic_fetch_add(&v->count, 1);
	if (!first)
		return;
	v->note = note;
	v->kind = kind;
	v->err = err;
	v->worker = w ? (int)w->idx : -1;
	v->pid = getpid();
	v->seed = w ? w->seed : cfg.seed;
	v->op = w ? w->op_no : 0;
	snprintf(v->why, sizeof(v->why), "%s", why);
	snprintf(v->what, sizeof(v->what), "%s", what);
	va_start(ap, fmt);
	vsnprintf(v->detail, sizeof(v->detail), fmt, ap);
	va_end(ap);
	atomic_store(&v->ready, 1);
	dprintf(STDERR_FILENO,
		"# %s: %s %s%s%s (%s): %s [seed 0x%llx thread %d op %llu pid %d]\n",
		note ? "NOTE" : "FAILURE", kinds[kind].name, why,
		err ? " " : "", err ? strerrorname_np(err) ?: "?" : "", what,
		v->detail, (unsigned long long)cfg.seed, v->worker,
		(unsigned long long)v->op, v->pid);
}

#define FAIL(w, kind, what, ...)	report(w, false, kind, 0, "", what, __VA_ARGS__)
#define NOTE(w, kind, what, ...)	report(w, true, kind, 0, "", what, __VA_ARGS__)

/*
 * The oracle of one call: @ret is 0 or -errno; @allow the results this
 * state admits (ANY: whatever is documented). An errno outside the
 * documented set fails whatever @allow says.
 */
static void check(struct worker *w, int kind, int ret, eset allow, const char *what)
{
	int err = ret < 0 ? -ret : 0;
	eset bit = err < 128 ? E(err) : 0, doc = kind_doc(kind);
	char exp[160];

	atomic_fetch_add(&fz->calls[kind], 1);
	if (!err)
		atomic_fetch_add(&fz->oks[kind], 1);
	if (cfg.trace)
		dprintf(STDERR_FILENO, "# t%u#%llu %s %s -> %s\n", w->idx,
			(unsigned long long)w->op_no, kinds[kind].name, what,
			err ? strerrorname_np(err) ?: "?" : "0");
	if (allow == ANY)
		allow = doc | OK;
	if (kinds[kind].enomem)
		allow |= E(ENOMEM);
	if (!(bit & (doc | OK))) {
		eset_str(doc, exp, sizeof(exp));
		report(w, false, kind, err, "undocumented errno", what,
		       "documented: %s", exp);
	} else if (!(bit & allow)) {
		eset_str(allow, exp, sizeof(exp));
		report(w, false, kind, err, err ? "wrong errno" : "succeeded", what,
		       "expected here: %s", exp);
	}
}

/* ioctl() as 0 or -errno */
static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* A long operation made progress: its calls are what the watchdog times. */
static void heartbeat(struct worker *w)
{
	atomic_store(&w->op_start_ms, vaccel_now_ms());
}

static void op_begin(struct worker *w, const char *name)
{
	atomic_store(&w->cur_op, name);
	atomic_store(&w->op_start_ms, vaccel_now_ms());
	if (cfg.trace)
		dprintf(STDERR_FILENO, "# t%u#%llu %s\n", w->idx,
			(unsigned long long)w->op_no, name);
}

/* ---------------------------------------------------------------------
 * Values: real ones from the model, boundary and garbage ones
 */
static uint64_t garbage64(struct worker *w)
{
	static const uint64_t special[] = {
		0, 1, 7, 8, 63, 64, PAGE - 1, PAGE, PAGE + 1, 1ULL << 31,
		1ULL << 32, (1ULL << 32) - PAGE, (1ULL << 48) - PAGE, 1ULL << 48,
		(1ULL << 48) + PAGE, 1ULL << 63, ~0ULL, ~0ULL - PAGE + 1,
		0x7fffffffffffffffULL, ~0ULL << 12, 0xdeadbeefcafef00dULL,
		(1ULL << 63) | 1, 1ULL << 40, (32ULL << 20) + 1,
	};

	switch (RN(4)) {
	case 0:
		return special[RN(ARRAY_SIZE(special))];
	case 1:
		return R64();
	case 2:
		return RN(1ULL << RN(21));
	default:
		return special[RN(ARRAY_SIZE(special))] + RN(3) - 1;
	}
}

static uint32_t garbage32(struct worker *w)
{
	static const uint32_t special[] = {
		0, 1, 2, 3, 4, 63, 64, 65, 255, 4095, 4096, 0x7fffffff,
		0x80000000, 0xffffffff, 0xfffffffe, 0x10000, 0x8000,
	};

	if (ONE_IN(2))
		return special[RN(ARRAY_SIZE(special))];
	return ONE_IN(2) ? (uint32_t)R64() : RN(1U << RN(17));
}

/* Something non-zero for a must-be-zero field */
static uint32_t nonzero32(struct worker *w)
{
	uint32_t v = garbage32(w);

	return v ? v : 1U << RN(32);
}

static uint64_t fuzz_va(struct worker *w)
{
	return VACCEL_VA_LO + (uint64_t)RN(FZ_VA_SPAN / PAGE) * PAGE;
}

static uint64_t page_align(uint64_t v)
{
	return (v + PAGE - 1) & ~(PAGE - 1);
}

static bool exact(const struct mfile *f)
{
	return !f->tainted;
}

static bool file_open(const struct mfile *f)
{
	return f->fd >= 0;
}

static struct mbo *find_bo(struct mfile *f, uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < f->nbo; i++)
		if (f->bo[i].handle == handle)
			return &f->bo[i];
	return NULL;
}

static bool is_prot_handle(struct mfile *f, uint32_t handle)
{
	struct mbo *b = find_bo(f, handle);

	return b && b->prot;
}

static struct mbo *pick_bo(struct worker *w, struct mfile *f, uint32_t need_flags)
{
	struct mbo *cand[F_BOS];
	unsigned int i, n = 0;

	for (i = 0; i < f->nbo; i++)
		if (!f->bo[i].prot && (f->bo[i].flags & need_flags) == need_flags)
			cand[n++] = &f->bo[i];
	return n ? cand[RN(n)] : NULL;
}

/*
 * A handle for @f: mostly a live one, else stale, another file's, or
 * garbage; never one of the checked queue's (random calls leave those
 * alone, but they may be read).
 */
static uint32_t pick_handle(struct worker *w, struct mfile *f, uint32_t need_flags)
{
	struct mfile *o;
	struct mbo *b;
	uint32_t h;

	switch (RN(12)) {
	case 0:
		h = garbage32(w);
		break;
	case 1:
		h = f->nstale ? f->stale[RN(f->nstale)] : garbage32(w);
		break;
	case 2:
		o = &w->f[RN(F_ALL)];
		b = o->nbo ? &o->bo[RN(o->nbo)] : NULL;
		h = b ? b->handle : RN(64);
		break;
	default:
		b = pick_bo(w, f, need_flags);
		if (!b)
			b = pick_bo(w, f, 0);
		h = b ? b->handle : 1 + RN(64);
		break;
	}
	return is_prot_handle(f, h) ? 0 : h;
}

static struct mmapping *find_map_at(struct mfile *f, uint64_t va)
{
	unsigned int i;

	for (i = 0; i < f->nmap; i++)
		if (f->map[i].va == va)
			return &f->map[i];
	return NULL;
}

/* The mapping that contains @va, if the model knows one */
static struct mmapping *find_map_in(struct mfile *f, uint64_t va)
{
	unsigned int i;

	for (i = 0; i < f->nmap; i++)
		if (va >= f->map[i].va && va - f->map[i].va < f->map[i].size)
			return &f->map[i];
	return NULL;
}

static bool overlaps(struct mfile *f, uint64_t va, uint64_t size)
{
	unsigned int i;

	for (i = 0; i < f->nmap; i++)
		if (va < f->map[i].va + f->map[i].size && f->map[i].va < va + size)
			return true;
	return false;
}

static struct mmapping *pick_map(struct worker *w, struct mfile *f, bool sig)
{
	struct mmapping *cand[F_MAPS];
	unsigned int i, n = 0;

	for (i = 0; i < f->nmap; i++)
		if (!f->map[i].prot &&
		    !!(f->map[i].bo_flags & DRM_VACCEL_BO_SIGNAL) == sig)
			cand[n++] = &f->map[i];
	if (!n)
		for (i = 0; i < f->nmap; i++)
			if (!f->map[i].prot)
				cand[n++] = &f->map[i];
	return n ? cand[RN(n)] : NULL;
}

static struct mqueue *find_q(struct mfile *f, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < f->nq; i++)
		if (f->q[i].id == id)
			return &f->q[i];
	return NULL;
}

static struct mqueue *pick_q(struct worker *w, struct mfile *f)
{
	struct mqueue *cand[F_QS];
	unsigned int i, n = 0;

	for (i = 0; i < f->nq; i++)
		if (!f->q[i].prot)
			cand[n++] = &f->q[i];
	return n ? cand[RN(n)] : NULL;
}

/* A queue id for @f: a live one, or garbage; never the checked one's. */
static uint32_t pick_qid(struct worker *w, struct mfile *f)
{
	struct mqueue *q = pick_q(w, f);
	uint32_t id;

	if (q && !ONE_IN(4))
		id = q->id;
	else
		id = ONE_IN(2) ? RN(70) : garbage32(w);
	if (f->chk && id == f->chk->qid)
		id = 64;	/* never a queue id */
	return id;
}

/* ---------------------------------------------------------------------
 * Host mappings
 */
static void hm_add(struct worker *w, uint8_t *p, size_t len, int kind, uint64_t uid,
		   bool writable)
{
	if (w->nhm == W_HMAPS) {
		unsigned int i = RN(W_HMAPS);

		munmap(w->hm[i].p, w->hm[i].len);
		w->hm[i] = w->hm[--w->nhm];
	}
	w->hm[w->nhm++] = (struct hmap){
		.p = p, .len = len, .kind = kind, .uid = uid,
		.maywrite = writable, .writable = writable,
	};
}

/* Writable host mappings of object @uid that this thread holds */
static unsigned int writable_maps(struct worker *w, uint64_t uid)
{
	unsigned int i, j, n = 0;

	for (i = 0; i < w->nhm; i++)
		n += w->hm[i].uid == uid && w->hm[i].maywrite;
	for (i = 0; i < F_ALL; i++) {
		struct mfile *f = &w->f[i];

		for (j = 0; j < f->nbo; j++)
			n += f->bo[j].uid == uid && f->bo[j].map;
		for (j = 0; j < f->nq; j++)
			n += f->q[j].ring_uid == uid && f->q[j].ring_map;
	}
	return n;
}

static unsigned int writable_binds(struct mfile *f, uint64_t uid)
{
	unsigned int i, n = 0;

	for (i = 0; i < f->nmap; i++)
		n += f->map[i].uid == uid && (f->map[i].access & VA_W);
	return n;
}

/* The signal handlers: interrupting signals, and faults of host accesses */
static void on_interrupt(int sig)
{
	(void)sig;
	atomic_fetch_add(&fz->interrupts, 1);
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	struct worker *w = cur;

	(void)uc;
	if (w && w->guard) {
		w->guard = 0;
		w->guard_sig = sig;
		siglongjmp(w->jb, 1);
	}
	dprintf(STDERR_FILENO,
		"# FAILURE: signal %d (%s) at address %p in thread %d op %llu (%s), seed 0x%llx\n",
		sig, strsignal(sig), si->si_addr, w ? (int)w->idx : -1,
		w ? (unsigned long long)w->op_no : 0ULL,
		w ? atomic_load(&w->cur_op) : "?", (unsigned long long)cfg.seed);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The line of /proc/self/maps that covers @addr (for failure reports) */
static void maps_line(const volatile void *addr, char *out, size_t len)
{
	unsigned long a = (unsigned long)addr, lo, hi;
	char line[512];
	FILE *m = fopen("/proc/self/maps", "r");

	snprintf(out, len, "not mapped");
	while (m && fgets(line, sizeof(line), m))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, len, "%.*s", (int)len - 1, line);
			break;
		}
	if (m)
		fclose(m);
}

/* Read (or write) one byte that may fault; 0 or the signal taken. */
static int guarded_access(struct worker *w, volatile uint8_t *p, bool write, uint8_t v)
{
	w->guard_sig = 0;
	if (sigsetjmp(w->jb, 1))
		return w->guard_sig;
	w->guard = 1;
	if (write)
		*p = v;
	else
		(void)*p;
	w->guard = 0;
	return 0;
}

/* ---------------------------------------------------------------------
 * Model bookkeeping
 */
static struct mbo *bo_add(struct worker *w, struct mfile *f, uint32_t handle,
			  uint32_t flags, uint64_t size, uint64_t offset)
{
	struct mbo *b;

	if (f->nbo == F_BOS)
		return NULL;
	b = &f->bo[f->nbo++];
	*b = (struct mbo){
		.handle = handle, .flags = flags, .size = size, .offset = offset,
		.uid = ((uint64_t)(w->idx + 1) << 48) | ++w->next_uid,
	};
	return b;
}

static void stale_add(struct mfile *f, uint32_t handle)
{
	if (f->nstale < F_STALE)
		f->stale[f->nstale++] = handle;
	else
		f->stale[handle % F_STALE] = handle;
}

/* Forget a handle; its host mapping lives on in the thread's list. */
static void bo_drop(struct worker *w, struct mfile *f, struct mbo *b)
{
	if (b->map)
		hm_add(w, b->map, b->size, HM_BO, b->uid, true);
	if (f->scratch == b)
		f->scratch = NULL;
	stale_add(f, b->handle);
	*b = f->bo[--f->nbo];
	/* the scratch entry may have moved into the hole */
	if (f->scratch == &f->bo[f->nbo])
		f->scratch = b;
}

static void map_drop(struct mfile *f, struct mmapping *m)
{
	*m = f->map[--f->nmap];
}

static void q_drop(struct worker *w, struct mfile *f, struct mqueue *q)
{
	if (q->ring_map)
		hm_add(w, q->ring_map, q->ring_map_len, HM_BO, q->ring_uid, true);
	if (q->db)
		hm_add(w, (uint8_t *)q->db, PAGE, HM_DB, 0, true);
	if (q->ctrl)
		hm_add(w, (uint8_t *)q->ctrl, PAGE, HM_CTRL, 0, false);
	*q = f->q[--f->nq];
}

/* The checked queue's resources become ordinary ones. */
static void checked_drop(struct mfile *f)
{
	struct checked *c = f->chk;
	unsigned int i;

	if (!c)
		return;
	for (i = 0; i < f->nbo; i++)
		f->bo[i].prot = false;
	for (i = 0; i < f->nmap; i++)
		f->map[i].prot = false;
	for (i = 0; i < f->nq; i++)
		f->q[i].prot = false;
	free(c);
	f->chk = NULL;
	atomic_fetch_add(&fz->checked_dropped, 1);
}

static void file_taint(struct mfile *f)
{
	f->tainted = true;
	checked_drop(f);
}

/* The file is closed: forget everything it held. */
static void file_forget(struct worker *w, struct mfile *f)
{
	checked_drop(f);
	while (f->nq)
		q_drop(w, f, &f->q[f->nq - 1]);
	while (f->nbo)
		bo_drop(w, f, &f->bo[f->nbo - 1]);
	f->nmap = 0;
	f->nexec = 0;
	f->nstale = 0;
	f->scratch = NULL;
	f->fd = -1;
	f->fd2 = -1;
	f->tainted = false;
}

/* ---------------------------------------------------------------------
 * Calls with their oracles, keeping the model up to date
 */
static int do_gem_close(struct worker *w, struct mfile *f, uint32_t handle,
			const char *what)
{
	struct drm_gem_close c = { .handle = handle };
	struct mbo *b = find_bo(f, handle);
	int ret = xioctl(f->fd, DRM_IOCTL_GEM_CLOSE, &c);

	check(w, K_GEM_CLOSE, ret, !exact(f) ? ANY : b ? OK : E(EINVAL), what);
	if (!ret && b)
		bo_drop(w, f, b);
	return ret;
}

/* Close a handle the model does not hold (yet) but that is live */
static void close_unmodelled(struct worker *w, struct mfile *f, uint32_t handle,
			     const char *what)
{
	struct drm_gem_close c = { .handle = handle };

	check(w, K_GEM_CLOSE, xioctl(f->fd, DRM_IOCTL_GEM_CLOSE, &c), exact(f) ? OK : ANY, what);
}

static struct mbo *do_bo_create(struct worker *w, struct mfile *f, uint64_t size,
				uint32_t flags, bool map, const char *what)
{
	struct drm_vaccel_bo_create c = { .size = size, .flags = flags };
	const uint32_t both = DRM_VACCEL_BO_PERSISTENT | DRM_VACCEL_BO_SIGNAL;
	eset allow = ANY;
	struct mbo *b;
	void *p;
	int ret;

	if ((flags & ~both) || flags == both || !size)
		allow = E(EINVAL) | (size > devs[f->dev].memory ? E(E2BIG) : 0);
	else if (size > devs[f->dev].memory)
		allow = E(E2BIG);
	else if (exact(f))
		allow = OK;
	ret = xioctl(f->fd, DRM_IOCTL_VACCEL_BO_CREATE, &c);
	check(w, K_BO_CREATE, ret, allow, what);
	if (ret)
		return NULL;
	if (c.size != page_align(size) || !c.handle || !c.mmap_offset || c.mmap_offset % PAGE)
		FAIL(w, K_BO_CREATE, what, "size %llu came back as %llu, handle %u, offset 0x%llx",
		     (unsigned long long)size, (unsigned long long)c.size, c.handle,
		     (unsigned long long)c.mmap_offset);
	b = find_bo(f, c.handle);
	if (b && exact(f))
		FAIL(w, K_BO_CREATE, what, "handle %u is already live", c.handle);
	if (b)		/* someone closed it behind our back: forget the old one */
		bo_drop(w, f, b);
	b = bo_add(w, f, c.handle, flags, c.size, c.mmap_offset);
	if (!b) {
		close_unmodelled(w, f, c.handle, "model full");
		return NULL;
	}
	if (map) {
		p = vaccel_bo_mmap(f->fd, b->offset, b->size, PROT_READ | PROT_WRITE);
		check(w, K_MMAP_BO, p == MAP_FAILED ? -errno : 0,
		      exact(f) ? OK : ANY, "new object, read-write");
		if (p != MAP_FAILED)
			b->map = p;
	}
	return b;
}

/* The result VM_BIND must give for these arguments in this model */
static eset bind_expect(struct mfile *f, uint32_t handle, uint32_t flags,
			uint64_t off, uint64_t va, uint64_t size)
{
	uint64_t end, bo_end;
	struct mbo *b;
	eset e = 0;

	if (!flags || (flags & ~(VA_R | VA_W)) || !size || size % PAGE ||
	    va % PAGE || off % PAGE)
		return E(EINVAL);
	if (__builtin_add_overflow(va, size, &end) ||
	    __builtin_add_overflow(off, size, &bo_end))
		return E(EOVERFLOW);
	if (va < VACCEL_VA_LO || end > VACCEL_VA_HI)
		return E(ERANGE);
	if (!exact(f))
		return ANY;
	b = find_bo(f, handle);
	if (!b)
		return E(ENOENT);
	if (bo_end > b->size)
		return E(EINVAL);
	if (flags & VA_W) {
		if (b->sealed)
			return E(EACCES);
		if (b->shared)
			e |= E(EACCES);
	}
	return e | (overlaps(f, va, size) ? E(EBUSY) : OK);
}

static int do_unbind(struct worker *w, struct mfile *f, uint64_t va, uint64_t size,
		     uint32_t flags, uint32_t pad, const char *what)
{
	struct drm_vaccel_vm_unbind u = { .va = va, .size = size, .flags = flags, .pad = pad };
	struct mmapping *m = find_map_at(f, va);
	eset allow = ANY;
	int ret;

	if (flags || pad)
		allow = E(EINVAL);
	else if (exact(f))
		allow = !m ? E(ENOENT) : m->size != size ? E(EINVAL) : OK;
	ret = xioctl(f->fd, DRM_IOCTL_VACCEL_VM_UNBIND, &u);
	check(w, K_VM_UNBIND, ret, allow, what);
	if (!ret && m)
		map_drop(f, m);
	return ret;
}

static bool do_bind(struct worker *w, struct mfile *f, uint32_t handle, uint32_t flags,
		    uint64_t off, uint64_t va, uint64_t size, const char *what)
{
	struct drm_vaccel_vm_bind b = {
		.handle = handle, .flags = flags, .bo_offset = off, .va = va, .size = size,
	};
	eset allow = bind_expect(f, handle, flags, off, va, size);
	struct mbo *bo = find_bo(f, handle);
	int ret = xioctl(f->fd, DRM_IOCTL_VACCEL_VM_BIND, &b);

	check(w, K_VM_BIND, ret, allow, what);
	if (ret == -EACCES && bo)
		bo->sealed = true;
	if (ret)
		return false;
	if (f->nmap == F_MAPS) {
		struct drm_vaccel_vm_unbind u = { .va = va, .size = size };

		check(w, K_VM_UNBIND, xioctl(f->fd, DRM_IOCTL_VACCEL_VM_UNBIND, &u),
		      exact(f) ? OK : ANY, "model full");
		return false;
	}
	f->map[f->nmap++] = (struct mmapping){
		.va = va, .size = size, .handle = handle, .access = flags,
		.bo_flags = bo ? bo->flags : 0, .uid = bo ? bo->uid : 0,
	};
	return true;
}

/* A free range of @size in the fuzz window, as far as the model knows */
static uint64_t free_va(struct worker *w, struct mfile *f, uint64_t size)
{
	unsigned int tries;
	uint64_t va = fuzz_va(w);

	for (tries = 0; tries < 8 && overlaps(f, va, size); tries++)
		va = fuzz_va(w);
	return va;
}

/* Map both pages of a queue; the oracle is the mmap rules. */
static void map_qpages(struct worker *w, struct mfile *f, struct mqueue *q)
{
	void *db = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd,
			(off_t)q->db_off);
	void *ctrl = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, f->fd, (off_t)q->ctrl_off);

	check(w, K_MMAP_QUEUE, db == MAP_FAILED ? -errno : 0, exact(f) ? OK : ANY,
	      "doorbell of a new queue");
	check(w, K_MMAP_QUEUE, ctrl == MAP_FAILED ? -errno : 0, exact(f) ? OK : ANY,
	      "control page of a new queue");
	q->db = db == MAP_FAILED ? NULL : db;
	q->ctrl = ctrl == MAP_FAILED ? NULL : ctrl;
}

/*
 * The result QUEUE_CREATE must give. A ring inside one readable mapping
 * works; a ring over several adjacent readable mappings is not ruled out
 * by the contract either (a note if it fails); anything else fails with
 * ENXIO/EACCES (uapi.rst still says EFAULT).
 */
static eset qc_expect(struct mfile *f, uint64_t ring_va, uint32_t n, uint32_t prio,
		      uint32_t flags, bool *spans)
{
	uint64_t len = (uint64_t)n * sizeof(struct drm_vaccel_packet), at, end;
	struct mmapping *m;
	eset bad = E(ENXIO) | E(EACCES) | E(EFAULT);

	*spans = false;
	if (flags || n < DRM_VACCEL_RING_MIN || n > DRM_VACCEL_RING_MAX || (n & (n - 1)) ||
	    prio > DRM_VACCEL_QUEUE_PRIORITY_HIGH || ring_va % 64)
		return E(EINVAL);
	if (!exact(f))
		return ANY;
	if (f->nq >= 64)
		return E(ENOSPC);
	if (prio && !have_nice)
		return E(EPERM);
	if (__builtin_add_overflow(ring_va, len, &end))
		return bad;
	for (at = ring_va; at < end; at = m->va + m->size) {
		m = find_map_in(f, at);
		if (!m || !(m->access & VA_R))
			return bad;
		if (at != ring_va)
			*spans = true;
	}
	return *spans ? OK | bad : OK;
}

static struct mqueue *do_queue_create(struct worker *w, struct mfile *f, uint64_t ring_va,
				      uint32_t n, uint32_t prio, uint32_t flags,
				      const char *what)
{
	struct drm_vaccel_queue_create c = {
		.ring_va = ring_va, .ring_size = n, .priority = prio, .flags = flags,
	};
	bool spans;
	eset allow = qc_expect(f, ring_va, n, prio, flags, &spans);
	struct mqueue *q;
	int ret = xioctl(f->fd, DRM_IOCTL_VACCEL_QUEUE_CREATE, &c);

	if (spans && ret && ret != -ENOMEM)
		NOTE(w, K_QUEUE_CREATE, "ring over two adjacent mappings",
		     "fails with %s although every byte of the ring is mapped readable",
		     strerrorname_np(-ret));
	else
		check(w, K_QUEUE_CREATE, ret, allow, what);
	if (ret)
		return NULL;
	if (c.doorbell_offset != QPAGE_BASE + (uint64_t)c.queue_id * 2 * PAGE ||
	    c.control_offset != c.doorbell_offset + PAGE || c.queue_id >= 64)
		FAIL(w, K_QUEUE_CREATE, what, "queue %u offsets 0x%llx 0x%llx", c.queue_id,
		     (unsigned long long)c.doorbell_offset, (unsigned long long)c.control_offset);
	q = find_q(f, c.queue_id);
	if (q && exact(f))
		FAIL(w, K_QUEUE_CREATE, what, "queue id %u is already live", c.queue_id);
	if (q)
		q_drop(w, f, q);
	if (f->nq == F_QS) {
		struct drm_vaccel_queue_destroy d = { .queue_id = c.queue_id };

		check(w, K_QUEUE_DESTROY, xioctl(f->fd, DRM_IOCTL_VACCEL_QUEUE_DESTROY, &d),
		      exact(f) ? OK : ANY, "model full");
		return NULL;
	}
	q = &f->q[f->nq++];
	*q = (struct mqueue){
		.id = c.queue_id, .ring_size = n, .ring_va = ring_va,
		.db_off = c.doorbell_offset, .ctrl_off = c.control_offset,
	};
	if (!ONE_IN(16))
		map_qpages(w, f, q);
	return q;
}

/* ---------------------------------------------------------------------
 * Packets
 */

/* The scratch object of a file: binding tables and MATMUL descriptors */
static struct mbo *ensure_scratch(struct worker *w, struct mfile *f)
{
	uint64_t va, size = 4 * PAGE;
	struct mbo *b;
	uint32_t h;

	if (f->scratch || f->nbo + 1 >= F_BOS || f->nmap + 1 >= F_MAPS)
		return f->scratch;
	b = do_bo_create(w, f, size, 0, true, "scratch object");
	if (!b)
		return NULL;
	h = b->handle;
	if (!b->map) {
		do_gem_close(w, f, h, "scratch object without a mapping");
		return NULL;
	}
	va = free_va(w, f, size);
	if (!do_bind(w, f, h, VA_R | VA_W, 0, va, size, "scratch object")) {
		do_gem_close(w, f, h, "scratch object not bound");
		return NULL;
	}
	f->scratch = b;		/* binding moved no entry */
	f->scratch_va = va;
	return f->scratch;
}

/* A device address for an operand: usually inside a mapping of the kind asked */
static uint64_t pk_addr(struct worker *w, struct mfile *f, bool sig, uint64_t len,
			uint64_t align, bool in_exec)
{
	struct mmapping *m;
	uint64_t off = 0;
	unsigned int how = RN(24);

	if (how == 0)
		return garbage64(w);
	if (how == 1 || (in_exec && how < 6))
		return DRM_VACCEL_BINDING_ADDR(ONE_IN(8) ? RN(256) : RN(4),
					       RN(ONE_IN(8) ? 1ULL << 48 : 64) * align);
	m = pick_map(w, f, sig);
	if (!m)
		return VACCEL_VA_LO + RN(64) * PAGE;
	if (len <= m->size)
		off = (uint64_t)RN((m->size - len) / align + 1) * align;
	if (ONE_IN(16))
		off = m->size - align;
	if (how == 2)
		off += 1 + RN(align > 1 ? align - 1 : 7);
	return m->va + off;
}

/* A binding table of @nb addresses in the scratch object; its address */
static uint64_t gen_table(struct worker *w, struct mfile *f, unsigned int nb)
{
	struct mbo *s = ensure_scratch(w, f);
	unsigned int slot = RN(24), i;
	uint64_t *t;

	if (!s)
		return garbage64(w);
	t = (uint64_t *)(s->map + slot * 128);
	for (i = 0; i < nb && i < DRM_VACCEL_EXEC_MAX_BINDINGS; i++) {
		struct mmapping *m = pick_map(w, f, ONE_IN(3));

		t[i] = m && !ONE_IN(16) ? m->va : garbage64(w);
	}
	return f->scratch_va + slot * 128 + (ONE_IN(32) ? 4 : 0);
}

static uint32_t mm_dim(struct worker *w)
{
	static const uint32_t odd[] = { 0, 4096, 4097, 0xffffffff, 1024 };

	return ONE_IN(16) ? odd[RN(ARRAY_SIZE(odd))] : 1 + RN(8);
}

/* A MATMUL descriptor in the scratch object; its address */
static uint64_t gen_matmul(struct worker *w, struct mfile *f, uint32_t dtype, bool in_exec)
{
	struct mbo *s = ensure_scratch(w, f);
	struct drm_vaccel_matmul d = {};
	unsigned int slot = RN(64);
	uint64_t es = dtype == DRM_VACCEL_DTYPE_F32 ? 4 : 2;

	if (!s)
		return garbage64(w);
	d.m = mm_dim(w);
	d.n = mm_dim(w);
	d.k = mm_dim(w);
	d.lda = d.k + (ONE_IN(4) ? RN(4) : 0) - (ONE_IN(16) ? 1 : 0);
	d.ldb = d.n + (ONE_IN(4) ? RN(4) : 0) - (ONE_IN(16) ? 1 : 0);
	d.ldc = d.n + (ONE_IN(4) ? RN(4) : 0) - (ONE_IN(16) ? 1 : 0);
	d.a = pk_addr(w, f, false, (uint64_t)d.m * d.lda * es, es, in_exec);
	d.b = pk_addr(w, f, false, (uint64_t)d.k * d.ldb * es, es, in_exec);
	d.c = pk_addr(w, f, false, (uint64_t)d.m * d.ldc * 4, 4, in_exec);
	if (ONE_IN(32))
		d.reserved[RN(2)] = garbage64(w);
	memcpy(s->map + 2 * PAGE + slot * 64, &d, sizeof(d));
	return f->scratch_va + 2 * PAGE + slot * 64 + (ONE_IN(32) ? 8 : 0);
}

/* Current value of the signal at device address @va, if we can see it */
static uint64_t sig_value(struct mfile *f, uint64_t va)
{
	struct mmapping *m = find_map_in(f, va);
	struct mbo *b = m ? find_bo(f, m->handle) : NULL;
	uint64_t off;

	if (!b || !b->map || !(b->flags & DRM_VACCEL_BO_SIGNAL))
		return 0;
	off = (va - m->va) & ~7ULL;
	return off < b->size ? __atomic_load_n((uint64_t *)(b->map + off), __ATOMIC_RELAXED) : 0;
}

/* A plausible packet: real addresses, valid operands, sometimes not */
static void gen_packet(struct worker *w, struct mfile *f, struct drm_vaccel_packet *p,
		       bool in_exec)
{
	static const uint8_t types[] = {
		DRM_VACCEL_PKT_NOP, DRM_VACCEL_PKT_COPY, DRM_VACCEL_PKT_COPY,
		DRM_VACCEL_PKT_FILL, DRM_VACCEL_PKT_FILL, DRM_VACCEL_PKT_FILL,
		DRM_VACCEL_PKT_REDUCE, DRM_VACCEL_PKT_REDUCE,
		DRM_VACCEL_PKT_SIGNAL, DRM_VACCEL_PKT_SIGNAL, DRM_VACCEL_PKT_SIGNAL,
		DRM_VACCEL_PKT_WAIT, DRM_VACCEL_PKT_WAIT, DRM_VACCEL_PKT_EXEC,
		DRM_VACCEL_PKT_EXEC, DRM_VACCEL_PKT_TIMESTAMP, DRM_VACCEL_PKT_DELAY,
		DRM_VACCEL_PKT_MATMUL, DRM_VACCEL_PKT_MATMUL,
	};
	uint32_t type = ONE_IN(64) ? 10 + RN(246) : types[RN(ARRAY_SIZE(types))];
	uint64_t len, es, v;
	__u64 *op = p->operand;
	struct mexec *e;
	uint32_t wd, nb;

	memset(p, 0, sizeof(*p));
	p->header = type;
	if (ONE_IN(4))
		p->header |= DRM_VACCEL_PKT_BARRIER;
	if (ONE_IN(3))
		p->header |= RN(3) << DRM_VACCEL_PKT_ACQUIRE_SHIFT |
			     RN(3) << DRM_VACCEL_PKT_RELEASE_SHIFT;
	switch (type) {
	case DRM_VACCEL_PKT_COPY:
		len = ONE_IN(8) ? RN(1U << 22) : 1 + RN(8192);
		op[0] = pk_addr(w, f, false, len, 1, in_exec);
		op[1] = pk_addr(w, f, false, len, 1, in_exec);
		op[2] = len;
		break;
	case DRM_VACCEL_PKT_FILL:
		wd = 1U << RN(4);
		len = (uint64_t)RN(ONE_IN(8) ? 1U << 20 : 4096) * wd;
		op[0] = pk_addr(w, f, false, len, wd, in_exec);
		op[1] = len;
		op[2] = wd == 8 ? R64() : R64() & ((1ULL << (8 * wd)) - 1);
		p->arg = wd;
		break;
	case DRM_VACCEL_PKT_REDUCE:
		p->arg = RN(6) | RN(4) << 8;
		es = p->arg % 256 == DRM_VACCEL_DTYPE_I64 ? 8 :
		     p->arg % 256 == DRM_VACCEL_DTYPE_U8 ? 1 :
		     p->arg % 256 == DRM_VACCEL_DTYPE_F16 ||
		     p->arg % 256 == DRM_VACCEL_DTYPE_BF16 ? 2 : 4;
		op[3] = 1 + RN(ONE_IN(8) ? 1U << 18 : 2048);
		op[0] = pk_addr(w, f, false, op[3] * es, es, in_exec);
		op[1] = pk_addr(w, f, false, op[3] * es, es, in_exec);
		op[2] = ONE_IN(3) ? op[0] : pk_addr(w, f, false, op[3] * es, es, in_exec);
		break;
	case DRM_VACCEL_PKT_SIGNAL:
		p->arg = 1 + RN(3);
		op[0] = pk_addr(w, f, true, 8, 8, in_exec);
		op[1] = p->arg == DRM_VACCEL_SIGNAL_ADD ? RN(4) : sig_value(f, op[0]) + RN(4);
		if (in_exec && ONE_IN(3))
			p->flags = DRM_VACCEL_SIGNAL_F_EPOCH;
		if (ONE_IN(2))
			p->header |= DRM_VACCEL_PKT_IRQ;
		break;
	case DRM_VACCEL_PKT_WAIT:
		p->arg = RN(3);
		op[0] = pk_addr(w, f, true, 8, 8, in_exec);
		v = sig_value(f, op[0]);
		op[1] = v + RN(4) - 1;
		switch (RN(8)) {
		case 0:		/* one run of bits */
			op[2] = ((1ULL << (1 + RN(63))) - 1) << RN(8);
			break;
		case 1:		/* not one run: GE rejects it (uAPI 3) */
			op[2] = 0x0f0fULL << RN(40);
			break;
		default:
			break;
		}
		op[3] = ONE_IN(16) ? 0 : 1000 + RN(5000000);
		if (in_exec && ONE_IN(3))
			p->flags = DRM_VACCEL_WAIT_F_EPOCH;
		break;
	case DRM_VACCEL_PKT_EXEC:
		e = f->nexec ? &f->exec[RN(f->nexec)] : NULL;
		if (e) {
			uint32_t skip = ONE_IN(4) ? RN(e->n) : 0;

			op[0] = e->va + (uint64_t)skip * 64;
			op[1] = 1 + RN(e->n - skip);
			if (ONE_IN(16))
				op[1] = ONE_IN(2) ? e->n + 1 + RN(4) : garbage64(w);
		} else {
			op[0] = pk_addr(w, f, false, 64, 64, in_exec);
			op[1] = 1 + RN(4);
		}
		op[2] = RN(8);
		if (ONE_IN(3)) {	/* uAPI 3: a binding table */
			nb = ONE_IN(16) ? DRM_VACCEL_EXEC_MAX_BINDINGS + RN(240) : 1 + RN(4);
			p->arg = nb;
			op[3] = gen_table(w, f, nb);
		}
		if (in_exec && ONE_IN(2))
			p->flags = DRM_VACCEL_EXEC_F_EPOCH;
		break;
	case DRM_VACCEL_PKT_TIMESTAMP:
		op[0] = pk_addr(w, f, false, 8, 8, in_exec);
		break;
	case DRM_VACCEL_PKT_DELAY:
		op[0] = ONE_IN(128) ? 1000000000ULL + RN(2) : RN(200000);
		break;
	case DRM_VACCEL_PKT_MATMUL:
		p->arg = ONE_IN(16) ? 3 + RN(8) : RN(3);
		op[0] = gen_matmul(w, f, p->arg, in_exec);
		if (ONE_IN(4))
			p->flags = DRM_VACCEL_MATMUL_F_ACCUMULATE;
		break;
	default:
		break;
	}
	if (ONE_IN(3)) {
		p->completion_op = ONE_IN(32) ? garbage32(w) : 1 + RN(3);
		p->completion_addr = pk_addr(w, f, true, 8, 8, in_exec);
		p->completion_value = RN(4);
		if (ONE_IN(2))
			p->header |= DRM_VACCEL_PKT_IRQ;
	}
	/* a field out of bounds now and then */
	switch (RN(48)) {
	case 0:
		p->reserved = nonzero32(w);
		break;
	case 1:
		p->header |= ONE_IN(2) ? DRM_VACCEL_PKT_RESERVED :
			     3 << (ONE_IN(2) ? DRM_VACCEL_PKT_ACQUIRE_SHIFT :
					       DRM_VACCEL_PKT_RELEASE_SHIFT);
		break;
	case 2:
		p->flags = nonzero32(w);
		break;
	case 3:
		p->arg = (uint16_t)nonzero32(w);
		break;
	case 4:
		op[RN(4)] = garbage64(w);
		break;
	default:
		break;
	}
}

/* A packet to write into a ring: plausible, damaged, random or zero */
static void gen_ring_packet(struct worker *w, struct mfile *f, struct drm_vaccel_packet *p)
{
	unsigned int i, n;

	switch (RN(20)) {
	case 0:
	case 1:
		for (i = 0; i < 8; i++)
			((uint64_t *)p)[i] = R64();
		break;
	case 2:
		memset(p, 0, sizeof(*p));
		break;
	case 3:
	case 4:
		gen_packet(w, f, p, false);
		for (i = 0, n = 1 + RN(3); i < n; i++)
			((uint8_t *)p)[RN(64)] ^= 1U << RN(8);
		break;
	default:
		gen_packet(w, f, p, false);
		break;
	}
}

/* KICK with its oracle */
static void do_kick(struct worker *w, struct mfile *f, uint32_t id, uint32_t pad,
		    const char *what)
{
	struct drm_vaccel_kick k = { .queue_id = id, .pad = pad };
	eset allow = ANY;

	if (pad)
		allow = E(EINVAL) | E(ENOENT);
	else if (exact(f))
		allow = find_q(f, id) ? OK : E(ENOENT);
	check(w, K_KICK, xioctl(f->fd, DRM_IOCTL_VACCEL_KICK, &k), allow, what);
	atomic_fetch_add(&fz->kicks, 1);
}

/* What a fresh mapping of the queue's control page shows, for a report */
static void diag_ctrl(struct worker *w, struct mfile *f, struct mqueue *q)
{
	const volatile struct drm_vaccel_queue_control *c;
	char where[256];

	maps_line(q->ctrl, where, sizeof(where));
	dprintf(STDERR_FILENO, "# diag: thread %u file %d queue %u: our control view %p is %s\n",
		w->idx, (int)(f - w->f), q->id, (void *)q->ctrl, where);
	c = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, f->fd, (off_t)q->ctrl_off);
	if (c == MAP_FAILED) {
		dprintf(STDERR_FILENO, "# diag: a new mapping of 0x%llx fails: %s\n",
			(unsigned long long)q->ctrl_off, strerror(errno));
		return;
	}
	dprintf(STDERR_FILENO,
		"# diag: a new mapping shows state %u fault %u index %llu addr 0x%llx read %llu; ours state %u fault %u index %llu addr 0x%llx read %llu\n",
		c->state, c->fault, (unsigned long long)c->fault_index,
		(unsigned long long)c->fault_addr, (unsigned long long)c->read_index,
		q->ctrl->state, q->ctrl->fault, (unsigned long long)q->ctrl->fault_index,
		(unsigned long long)q->ctrl->fault_addr, (unsigned long long)q->ctrl->read_index);
	munmap((void *)c, PAGE);
}

/* The control page's record must make sense whenever it is read */
static void ctrl_check(struct worker *w, struct mfile *f, struct mqueue *q)
{
	uint32_t state = __atomic_load_n(&q->ctrl->state, __ATOMIC_ACQUIRE);
	uint32_t fault = q->ctrl->fault;
	uint64_t rd = q->ctrl->read_index;

	if (state > DRM_VACCEL_QUEUE_ERROR ||
	    (state == DRM_VACCEL_QUEUE_ERROR &&
	     (!fault || fault > DRM_VACCEL_FAULT_REMOVED || q->ctrl->fault_depth > 4 ||
	      q->ctrl->fault_binding > DRM_VACCEL_EXEC_MAX_BINDINGS))) {
		FAIL(w, K_QUEUE_STATE, "control page",
		     "queue %u state %u fault %u depth %u binding %u", q->id, state, fault,
		     q->ctrl->fault_depth, q->ctrl->fault_binding);
		diag_ctrl(w, f, q);
	}
	if (exact(f) && rd < q->last_read)
		FAIL(w, K_QUEUE_STATE, "control page read index went back",
		     "queue %u: %llu after %llu", q->id, (unsigned long long)rd,
		     (unsigned long long)q->last_read);
	if (exact(f) && rd > q->db_max)
		FAIL(w, K_QUEUE_STATE, "control page read index past the doorbell",
		     "queue %u: read %llu, largest doorbell %llu", q->id,
		     (unsigned long long)rd, (unsigned long long)q->db_max);
	if (rd > q->last_read)
		q->last_read = rd;
}

/*
 * Write @n packets at the queue's write index, then the doorbell with
 * release, a full fence, and KICK if the engine sleeps (or for fun).
 */
static void ring_submit(struct worker *w, struct mfile *f, struct mqueue *q,
			const struct drm_vaccel_packet *pk, unsigned int n, uint64_t db)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		q->ring[(q->wi + i) & (q->ring_size - 1)] = pk[i];
	q->wi += n;
	if (!db)
		db = q->wi;
	__atomic_store_n(q->db, db, __ATOMIC_RELEASE);
	if (db > q->db_max)
		q->db_max = db;
	atomic_thread_fence(memory_order_seq_cst);
	atomic_fetch_add(&fz->doorbells, 1);
	atomic_fetch_add(&fz->packets, n);
	if ((q->ctrl && __atomic_load_n(&q->ctrl->need_wakeup, __ATOMIC_RELAXED)) ||
	    !q->ctrl || ONE_IN(16))
		do_kick(w, f, q->id, 0, "after a doorbell");
}

/* ---------------------------------------------------------------------
 * The checked queue
 */
static void checked_create(struct worker *w, struct mfile *f)
{
	uint32_t h[3] = {};
	struct checked *c;
	struct mqueue *q;
	struct mbo *b;
	unsigned int i;

	if (!exact(f) || f->view || f->chk || f->nbo + 4 > F_BOS ||
	    f->nmap + 4 > F_MAPS || f->nq + 1 >= F_QS || overlaps(f, CHK_VA, 3 << 20))
		return;
	b = do_bo_create(w, f, CHK_RING * 64, 0, true, "checked ring");
	h[0] = b && b->map ? b->handle : 0;
	b = do_bo_create(w, f, CHK_DATA, 0, true, "checked data");
	h[1] = b && b->map ? b->handle : 0;
	b = do_bo_create(w, f, PAGE, DRM_VACCEL_BO_SIGNAL, true, "checked signals");
	h[2] = b && b->map ? b->handle : 0;
	if (!h[0] || !h[1] || !h[2])
		return;		/* what was made stays, as ordinary objects */
	if (!do_bind(w, f, h[0], VA_R, 0, CHK_VA, PAGE, "checked ring") ||
	    !do_bind(w, f, h[1], VA_R | VA_W, 0, CHK_VA + (1 << 20), CHK_DATA, "checked data") ||
	    !do_bind(w, f, h[2], VA_R | VA_W, 0, CHK_VA + (2 << 20), PAGE, "checked signals"))
		return;
	q = do_queue_create(w, f, CHK_VA, CHK_RING, 0, 0, "checked queue");
	if (!q)
		return;
	if (!q->db || !q->ctrl)
		map_qpages(w, f, q);
	if (!q->db || !q->ctrl)
		return;
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->ring_h = h[0];
	c->data_h = h[1];
	c->sig_h = h[2];
	c->qid = q->id;
	/* the ring's view belongs to the queue entry from now on */
	b = find_bo(f, h[0]);
	q->ring_map = b->map;
	q->ring_map_len = b->size;
	q->ring_uid = b->uid;
	b->map = NULL;
	c->ring = (void *)q->ring_map;
	c->dmap = find_bo(f, h[1])->map;
	c->smap = (volatile uint64_t *)find_bo(f, h[2])->map;
	c->db = q->db;
	c->ctrl = q->ctrl;
	q->ring = c->ring;
	q->prot = true;
	for (i = 0; i < 3; i++)
		find_bo(f, h[i])->prot = true;
	for (i = 0; i < 3; i++)
		find_map_at(f, CHK_VA + ((uint64_t)i << 20))->prot = true;
	f->chk = c;
}

/*
 * Is the checked queue done, and right? True when it finished all its
 * work (and the results were checked) or was dropped.
 */
static bool checked_check(struct worker *w, struct mfile *f)
{
	struct checked *c = f->chk;
	uint32_t state = __atomic_load_n(&c->ctrl->state, __ATOMIC_ACQUIRE);
	uint64_t rd, t;
	unsigned int i;

	if (state != DRM_VACCEL_QUEUE_RUNNING) {
		uint32_t fault = c->ctrl->fault;

		/* fault_access, force_fault and reset may hit it; nothing else */
		if (fault != DRM_VACCEL_FAULT_INJECTED && fault != DRM_VACCEL_FAULT_RESET)
			FAIL(w, K_CHECKED, "valid packet faulted",
			     "fault %u at index %llu address 0x%llx (queue %u)", fault,
			     (unsigned long long)c->ctrl->fault_index,
			     (unsigned long long)c->ctrl->fault_addr, c->qid);
		checked_drop(f);
		return true;
	}
	rd = __atomic_load_n(&c->ctrl->read_index, __ATOMIC_ACQUIRE);
	if (rd > c->wi) {
		FAIL(w, K_CHECKED, "read index past the doorbell", "read %llu of %llu",
		     (unsigned long long)rd, (unsigned long long)c->wi);
		checked_drop(f);
		return true;
	}
	if (rd < c->wi)
		return false;
	for (i = 0; i < CHK_DATA && c->dmap[i] == c->shadow[i]; i++)
		;
	if (i < CHK_DATA) {
		FAIL(w, K_CHECKED, "wrong data", "byte %u is 0x%02x, expected 0x%02x (after %llu packets)",
		     i, c->dmap[i], c->shadow[i], (unsigned long long)c->wi);
		checked_drop(f);
		return true;
	}
	if (c->smap[0] != c->sig0 || c->smap[1] != c->sig1) {
		FAIL(w, K_CHECKED, "wrong signal values",
		     "SIGNAL word %llu, expected %llu; completion word %llu, expected %llu",
		     (unsigned long long)c->smap[0], (unsigned long long)c->sig0,
		     (unsigned long long)c->smap[1], (unsigned long long)c->sig1);
		checked_drop(f);
		return true;
	}
	t = c->smap[2];
	if (c->ts && (t < c->ts_after || t > now_ns())) {
		FAIL(w, K_CHECKED, "TIMESTAMP out of its window", "%llu not in [%llu, now]",
		     (unsigned long long)t, (unsigned long long)c->ts_after);
		checked_drop(f);
		return true;
	}
	c->ts = false;
	atomic_fetch_add(&fz->checked_rounds, 1);
	return true;
}

/* Offsets [a, a + n) and [b, b + n) are disjoint */
static bool disjoint(uint64_t a, uint64_t b, uint64_t n)
{
	return a + n <= b || b + n <= a;
}

static int64_t chk_iop(int64_t x, int64_t y, uint32_t op)
{
	switch (op) {
	case DRM_VACCEL_REDOP_SUM:
		return (int64_t)((uint64_t)x + (uint64_t)y);
	case DRM_VACCEL_REDOP_PROD:
		return (int64_t)((uint64_t)x * (uint64_t)y);
	case DRM_VACCEL_REDOP_MIN:
		return y < x ? y : x;
	default:
		return y > x ? y : x;
	}
}

/* What an integer REDUCE does to the shadow copy */
static void chk_reduce(uint8_t *m, uint64_t a, uint64_t b, uint64_t d, uint64_t n,
		       uint32_t dtype, uint32_t op)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		if (dtype == DRM_VACCEL_DTYPE_U8) {
			m[d + i] = (uint8_t)chk_iop(m[a + i], m[b + i], op);
		} else if (dtype == DRM_VACCEL_DTYPE_I32) {
			int32_t x, y, r;

			memcpy(&x, m + a + 4 * i, 4);
			memcpy(&y, m + b + 4 * i, 4);
			r = (int32_t)(uint32_t)chk_iop(x, y, op);
			memcpy(m + d + 4 * i, &r, 4);
		} else {
			int64_t x, y, r;

			memcpy(&x, m + a + 8 * i, 8);
			memcpy(&y, m + b + 8 * i, 8);
			r = chk_iop(x, y, op);
			memcpy(m + d + 8 * i, &r, 8);
		}
	}
}

/* One valid packet for the checked queue, applied to the shadow copy */
static void checked_packet(struct worker *w, struct checked *c, struct drm_vaccel_packet *p)
{
	static const uint32_t dtypes[] = {
		DRM_VACCEL_DTYPE_I32, DRM_VACCEL_DTYPE_I64, DRM_VACCEL_DTYPE_U8,
	};
	const uint64_t data = CHK_VA + (1 << 20), sig = CHK_VA + (2 << 20);
	__u64 *op = p->operand;
	uint64_t a, b, d, n, es, wd, pat, i;
	unsigned int tries;
	uint32_t dt;

	memset(p, 0, sizeof(*p));
	switch (RN(9)) {
	case 0:
	case 1:		/* FILL */
		wd = 1U << RN(4);
		d = RN(CHK_DATA / wd) * wd;
		n = (1 + RN(ONE_IN(4) ? (CHK_DATA - d) / wd : 512)) * wd;
		if (d + n > CHK_DATA)
			n = (CHK_DATA - d) / wd * wd;
		pat = wd == 8 ? R64() : R64() & ((1ULL << (8 * wd)) - 1);
		*p = pkt(DRM_VACCEL_PKT_FILL, data + d, n, pat, 0);
		p->arg = wd;
		for (i = 0; i < n; i++)
			c->shadow[d + i] = (uint8_t)(pat >> (8 * (i % wd)));
		break;
	case 2:
	case 3:		/* COPY */
		n = 1 + RN(ONE_IN(4) ? CHK_DATA / 2 : 4096);
		a = RN(CHK_DATA - n + 1);
		for (tries = 0, d = RN(CHK_DATA - n + 1); tries < 8 && !disjoint(a, d, n); tries++)
			d = RN(CHK_DATA - n + 1);
		if (!disjoint(a, d, n))
			break;	/* a NOP */
		*p = pkt(DRM_VACCEL_PKT_COPY, data + a, data + d, n, 0);
		memcpy(c->shadow + d, c->shadow + a, n);
		break;
	case 4:		/* REDUCE, integers: exact */
		dt = dtypes[RN(3)];
		es = dt == DRM_VACCEL_DTYPE_U8 ? 1 : dt == DRM_VACCEL_DTYPE_I32 ? 4 : 8;
		n = 1 + RN(1024);
		a = RN((CHK_DATA - n * es) / es + 1) * es;
		b = RN((CHK_DATA - n * es) / es + 1) * es;
		d = a;
		if (ONE_IN(2)) {
			for (tries = 0; tries < 8; tries++) {
				d = RN((CHK_DATA - n * es) / es + 1) * es;
				if (disjoint(d, a, n * es) && disjoint(d, b, n * es))
					break;
			}
			if (tries == 8)
				d = a;
		}
		/* the destination equals each source or misses it */
		if (d == a && b != a && !disjoint(a, b, n * es))
			b = a;
		*p = pkt(DRM_VACCEL_PKT_REDUCE, data + a, data + b, data + d, n);
		p->arg = dt | RN(4) << 8;
		chk_reduce(c->shadow, a, b, d, n, dt, p->arg >> 8);
		break;
	case 5:		/* SIGNAL ADD 1, word 0 */
		*p = pkt(DRM_VACCEL_PKT_SIGNAL, sig, 1, 0, 0);
		p->arg = DRM_VACCEL_SIGNAL_ADD;
		if (ONE_IN(2))
			p->header |= DRM_VACCEL_PKT_IRQ;
		c->sig0++;
		break;
	case 6:		/* WAIT for what is there already */
		*p = pkt(DRM_VACCEL_PKT_WAIT, sig, c->sig0, 0, 1000000000ULL);
		if (ONE_IN(4)) {
			op[2] = 0xffff;
			op[1] = c->sig0 & 0xffff;
		}
		p->arg = ONE_IN(4) ? DRM_VACCEL_WAIT_EQ : DRM_VACCEL_WAIT_GE;
		break;
	case 7:
		if (ONE_IN(2)) {
			*p = pkt(DRM_VACCEL_PKT_DELAY, RN(50000), 0, 0, 0);
		} else {
			*p = pkt(DRM_VACCEL_PKT_TIMESTAMP, sig + 16, 0, 0, 0);
			c->ts = true;
			c->ts_after = now_ns();
		}
		break;
	default:
		break;		/* NOP */
	}
	if (ONE_IN(3)) {
		p->completion_op = DRM_VACCEL_SIGNAL_ADD;
		p->completion_addr = sig + 8;
		p->completion_value = 1;
		if (ONE_IN(2))
			p->header |= DRM_VACCEL_PKT_IRQ;
		c->sig1++;
	}
	if (ONE_IN(4))
		p->header |= DRM_VACCEL_PKT_BARRIER;
}

static void checked_submit(struct worker *w, struct mfile *f)
{
	struct drm_vaccel_packet pk[6];
	struct checked *c = f->chk;
	struct mqueue *q = find_q(f, c->qid);
	unsigned int n = 1 + RN(5), i;
	uint64_t rd;

	if (checked_check(w, f) && !f->chk)
		return;
	rd = __atomic_load_n(&c->ctrl->read_index, __ATOMIC_ACQUIRE);
	if (c->wi - rd + n > CHK_RING)
		return;
	for (i = 0; i < n; i++)
		checked_packet(w, c, &pk[i]);
	q->wi = c->wi;
	ring_submit(w, f, q, pk, n, 0);
	c->wi = q->wi;
}

/* Wait (bounded) until the checked queue finished; it must. */
static void checked_finish(struct worker *w, struct mfile *f)
{
	uint64_t end = vaccel_now_ms() + FZ_CHK_DRAIN_MS;
	struct checked *c = f->chk;
	char buf[4096];

	while (f->chk && !checked_check(w, f)) {
		if (vaccel_now_ms() > end) {
			FAIL(w, K_CHECKED, "stalled",
			     "queue %u read %llu of %llu, need_wakeup %u after %u ms",
			     c->qid, (unsigned long long)c->ctrl->read_index,
			     (unsigned long long)c->wi, c->ctrl->need_wakeup,
			     FZ_CHK_DRAIN_MS);
			if (vaccel_dev_debugfs(devs[f->dev].id, "queues", buf, sizeof(buf)) > 0)
				dprintf(STDERR_FILENO, "# debugfs queues of vaccel%u:\n%s",
					devs[f->dev].id, buf);
			checked_drop(f);
			return;
		}
		usleep(1000);
	}
}

/* ---------------------------------------------------------------------
 * Operations on a file
 */
static void op_get_param(struct worker *w, struct mfile *f)
{
	struct drm_vaccel_get_param g = {
		.param = ONE_IN(8) ? garbage32(w) : RN(16),
		.pad = ONE_IN(8) ? nonzero32(w) : 0,
	};
	bool bad = g.pad || g.param > DRM_VACCEL_PARAM_MAX_QUEUES;
	const struct fz_dev *d = &devs[f->dev];
	uint64_t want = ~0ULL;
	int ret = xioctl(f->fd, DRM_IOCTL_VACCEL_GET_PARAM, &g);

	check(w, K_GET_PARAM, ret, bad ? E(EINVAL) : OK,
	      g.pad ? "pad" : bad ? "unknown param" : "valid");
	if (ret)
		return;
	switch (g.param) {
	case DRM_VACCEL_PARAM_UAPI_VERSION:
		want = VACCEL_UAPI_VERSION;
		break;
	case DRM_VACCEL_PARAM_DEVICE_ID:
		want = d->id;
		break;
	case DRM_VACCEL_PARAM_NUM_ENGINES:
		want = d->engines;
		break;
	case DRM_VACCEL_PARAM_MEMORY_CAPACITY:
		want = d->memory;
		break;
	case DRM_VACCEL_PARAM_VA_START:
		want = VACCEL_VA_LO;
		break;
	case DRM_VACCEL_PARAM_VA_SIZE:
		want = VACCEL_VA_HI - VACCEL_VA_LO;
		break;
	case DRM_VACCEL_PARAM_MEMORY_USED:
		if (g.value > d->memory)
			FAIL(w, K_GET_PARAM, "MEMORY_USED", "%llu of %llu",
			     (unsigned long long)g.value, (unsigned long long)d->memory);
		break;
	case DRM_VACCEL_PARAM_MAX_BOS:
	case DRM_VACCEL_PARAM_MAX_MAPPINGS:
		want = 4096;
		break;
	case DRM_VACCEL_PARAM_MAX_QUEUES:
		want = 64;
		break;
	}
	if (want != ~0ULL && g.value != want)
		FAIL(w, K_GET_PARAM, "value", "param %u is %llu, expected %llu", g.param,
		     (unsigned long long)g.value, (unsigned long long)want);
}

static void op_bo_create(struct worker *w, struct mfile *f)
{
	static const uint32_t flags[] = {
		0, 0, 0, DRM_VACCEL_BO_PERSISTENT, DRM_VACCEL_BO_PERSISTENT,
		DRM_VACCEL_BO_SIGNAL, DRM_VACCEL_BO_SIGNAL,
	};
	uint64_t mem = devs[f->dev].memory, size;
	uint32_t fl = ONE_IN(32) ? garbage32(w) : flags[RN(ARRAY_SIZE(flags))];
	const char *what = "pages";

	switch (RN(16)) {
	case 0:
		size = garbage64(w);
		what = "any size";
		break;
	case 1:
		size = ONE_IN(2) ? mem : mem + RN(2);
		what = "the capacity";
		break;
	case 2:
		size = (1 + RN(256)) * PAGE;
		break;
	case 3:
		size = 1 + RN(3 * PAGE);
		what = "unaligned size";
		break;
	default:
		size = (1 + RN(4)) * PAGE;
		break;
	}
	if (f->nbo >= F_BOS - 4 && exact(f))
		do_gem_close(w, f, pick_handle(w, f, 0), "make room");
	if (fl & ~3U || fl == 3)
		what = "flags";
	do_bo_create(w, f, size, fl, fl == DRM_VACCEL_BO_SIGNAL || ONE_IN(8), what);
}

static void op_bo_info(struct worker *w, struct mfile *f)
{
	struct drm_vaccel_bo_info i = { .handle = pick_handle(w, f, 0) };
	struct mbo *b = find_bo(f, i.handle);
	eset allow = ANY;
	int ret;

	if (ONE_IN(8))
		i.pad = nonzero32(w);
	if (i.pad)
		allow = E(EINVAL) | E(ENOENT);
	else if (exact(f))
		allow = b ? OK : E(ENOENT);
	ret = xioctl(f->fd, DRM_IOCTL_VACCEL_BO_INFO, &i);
	check(w, K_BO_INFO, ret, allow, i.pad ? "pad" : b ? "live handle" : "random handle");
	if (ret || !b)
		return;
	if (i.status & DRM_VACCEL_BO_STATUS_SEALED)
		b->sealed = true;
	if (!exact(f))
		return;
	if (i.size != b->size || i.flags != b->flags || i.mmap_offset != b->offset ||
	    !!(i.status & DRM_VACCEL_BO_STATUS_IMPORTED) != b->imported ||
	    (i.status & ~3U) ||
	    (!b->shared && !!(i.status & DRM_VACCEL_BO_STATUS_SEALED) != b->sealed))
		FAIL(w, K_BO_INFO, "contents",
		     "handle %u: size %llu flags 0x%x offset 0x%llx status 0x%x; model: size %llu flags 0x%x offset 0x%llx imported %d sealed %d",
		     i.handle, (unsigned long long)i.size, i.flags,
		     (unsigned long long)i.mmap_offset, i.status, (unsigned long long)b->size,
		     b->flags, (unsigned long long)b->offset, b->imported, b->sealed);
}

static void op_bo_seal(struct worker *w, struct mfile *f)
{
	struct drm_vaccel_bo_seal s = {
		.handle = pick_handle(w, f, DRM_VACCEL_BO_PERSISTENT),
		.flags = ONE_IN(16) ? nonzero32(w) : 0,
	};
	struct mbo *b = find_bo(f, s.handle);
	eset allow = ANY;
	uint64_t token;
	int ret;

	if (s.flags)
		allow = E(EINVAL) | E(ENOENT);
	else if (exact(f) && !b)
		allow = E(ENOENT);
	else if (exact(f) && (b->imported || !(b->flags & DRM_VACCEL_BO_PERSISTENT)))
		allow = E(EINVAL);
	else if (exact(f) && b->sealed)
		allow = OK;
	else if (exact(f) && !b->shared)
		allow = writable_maps(w, b->uid) || writable_binds(f, b->uid) ? E(EBUSY) : OK;
	else if (exact(f))
		allow = OK | E(EBUSY);
	token = fork_quiet_begin();
	ret = xioctl(f->fd, DRM_IOCTL_VACCEL_BO_SEAL, &s);
	if (!fork_quiet(token) && (allow & OK))
		allow |= E(EBUSY);
	check(w, K_BO_SEAL, ret, allow, s.flags ? "flags" : b ? "live handle" : "random handle");
	if (!ret && b)
		b->sealed = true;
}

static void op_gem_close(struct worker *w, struct mfile *f)
{
	do_gem_close(w, f, pick_handle(w, f, 0), "random handle");
}

static void op_vm_bind(struct worker *w, struct mfile *f)
{
	static const uint32_t acc[] = { VA_R, VA_W, VA_R | VA_W, VA_R | VA_W, VA_R };
	uint32_t h = pick_handle(w, f, 0), flags = acc[RN(ARRAY_SIZE(acc))];
	struct mbo *b = find_bo(f, h);
	uint64_t bsize = b ? b->size : PAGE * (1 + RN(4));
	uint64_t off = 0, size, va;
	const char *what = "plausible";
	struct mmapping *m;

	if (ONE_IN(2) && bsize > PAGE)
		off = RN(bsize / PAGE) * PAGE;
	size = bsize - off;
	if (ONE_IN(3))
		size = (1 + RN((bsize - off) / PAGE)) * PAGE;
	va = free_va(w, f, size);
	switch (RN(24)) {
	case 0:
		flags = ONE_IN(2) ? 0 : garbage32(w);
		what = "flags";
		break;
	case 1:
		size = garbage64(w);
		what = "size";
		break;
	case 2:
		off = garbage64(w);
		what = "bo_offset";
		break;
	case 3:
		va = garbage64(w);
		what = "va";
		break;
	case 4:	/* the end of the window */
		va = VACCEL_VA_HI - size + (ONE_IN(2) ? PAGE : 0);
		what = "window end";
		break;
	case 5:
		va = VACCEL_VA_LO - PAGE * RN(2);
		what = "window start";
		break;
	case 6:
	case 7:	/* onto a mapping */
		m = pick_map(w, f, ONE_IN(2));
		if (m)
			va = m->va + RN(m->size / PAGE) * PAGE;
		what = "onto a mapping";
		break;
	case 8:
		size += PAGE;
		what = "past the object";
		break;
	case 9:
		va += 1 + RN(PAGE - 1);
		what = "misaligned va";
		break;
	default:
		break;
	}
	do_bind(w, f, h, flags, off, va, size, what);
}

static void op_vm_unbind(struct worker *w, struct mfile *f)
{
	struct mmapping *m = pick_map(w, f, ONE_IN(2));
	uint64_t va = m ? m->va : fuzz_va(w), size = m ? m->size : PAGE;
	uint32_t flags = 0, pad = 0;
	const char *what = m ? "live mapping" : "no mapping";

	switch (RN(12)) {
	case 0:
		va = garbage64(w);
		what = "va";
		break;
	case 1:
		size = ONE_IN(2) ? size + PAGE : garbage64(w);
		what = "size";
		break;
	case 2:
		va += PAGE;
		what = "inside a mapping";
		break;
	case 3:
		flags = nonzero32(w);
		what = "flags";
		break;
	case 4:
		pad = nonzero32(w);
		what = "pad";
		break;
	default:
		break;
	}
	if (va >= CHK_VA && va < CHK_VA + (3 << 20) && f->chk)
		va = garbage64(w) & ~(CHK_VA | (CHK_VA - 1));
	do_unbind(w, f, va, size, flags, pad, what);
}

static void op_queue_create(struct worker *w, struct mfile *f)
{
	uint32_t n = 1U << (1 + RN(ONE_IN(8) ? 16 : 7)), prio = 0, flags = 0;
	uint64_t bytes = (uint64_t)n * 64, ring_off = 0, va = 0;
	uint8_t *map = NULL;
	size_t maplen = 0;
	struct mqueue *q;
	struct mmapping *m;
	struct mbo *b;
	const char *what = "new ring";
	uint64_t uid = 0;
	uint32_t h;

	if (ONE_IN(8))
		prio = ONE_IN(4) ? garbage32(w) : 1 + RN(2);
	if (ONE_IN(32))
		flags = nonzero32(w);
	switch (RN(8)) {
	case 0:		/* an existing mapping */
		m = pick_map(w, f, false);
		va = m ? m->va + RN(m->size / 64) * 64 : fuzz_va(w);
		what = "existing mapping";
		break;
	case 1:
		va = ONE_IN(2) ? garbage64(w) : fuzz_va(w) + 64 * RN(64);
		what = "ring_va";
		break;
	case 2:
		n = ONE_IN(2) ? garbage32(w) : n + 1;
		va = fuzz_va(w);
		what = "ring_size";
		break;
	default:	/* a new ring object, bound for the queue */
		if (bytes > 64 * PAGE) {
			n = 1024;
			bytes = n * 64;
		}
		b = do_bo_create(w, f, bytes + (ONE_IN(4) ? PAGE : 0),
				 ONE_IN(4) ? DRM_VACCEL_BO_PERSISTENT : 0, false, "ring");
		if (!b)
			return;
		h = b->handle;
		uid = b->uid;
		maplen = b->size;
		map = vaccel_bo_mmap(f->fd, b->offset, maplen, PROT_READ | PROT_WRITE);
		check(w, K_MMAP_BO, map == MAP_FAILED ? -errno : 0, exact(f) ? OK : ANY,
		      "ring object");
		if (map == MAP_FAILED)
			return;
		ring_off = RN((maplen - bytes) / 64 + 1) * 64;
		va = free_va(w, f, maplen);
		if (!do_bind(w, f, h, ONE_IN(16) ? VA_W : ONE_IN(2) ? VA_R : VA_R | VA_W, 0, va,
			     maplen, "ring")) {
			munmap(map, maplen);
			map = NULL;
		}
		va += ring_off;
		break;
	}
	if (f->nq >= F_QS - 1 && exact(f)) {
		struct mqueue *old = pick_q(w, f);
		struct drm_vaccel_queue_destroy d = { .queue_id = old ? old->id : 0 };

		if (old) {
			check(w, K_QUEUE_DESTROY,
			      xioctl(f->fd, DRM_IOCTL_VACCEL_QUEUE_DESTROY, &d), OK,
			      "make room");
			q_drop(w, f, old);
		}
	}
	if (flags)
		what = "flags";
	else if (prio > DRM_VACCEL_QUEUE_PRIORITY_HIGH)
		what = "priority";
	q = do_queue_create(w, f, va, n, prio, flags, what);
	if (q && map) {
		q->ring = (void *)(map + ring_off);
		q->ring_map = map;
		q->ring_map_len = maplen;
		q->ring_uid = uid;
	} else if (map) {
		hm_add(w, map, maplen, HM_BO, uid, true);
	}
}

static void op_queue_destroy(struct worker *w, struct mfile *f)
{
	struct drm_vaccel_queue_destroy d = {
		.queue_id = pick_qid(w, f), .pad = ONE_IN(8) ? nonzero32(w) : 0,
	};
	struct mqueue *q = find_q(f, d.queue_id);
	eset allow = ANY;
	int ret;

	if (d.pad)
		allow = E(EINVAL) | E(ENOENT);
	else if (exact(f))
		allow = q ? OK : E(ENOENT);
	ret = xioctl(f->fd, DRM_IOCTL_VACCEL_QUEUE_DESTROY, &d);
	check(w, K_QUEUE_DESTROY, ret, allow, d.pad ? "pad" : q ? "live queue" : "random id");
	if (!ret && q)
		q_drop(w, f, q);
}

static void op_queue_query(struct worker *w, struct mfile *f)
{
	struct drm_vaccel_queue_query r = {
		.queue_id = pick_qid(w, f), .pad = ONE_IN(8) ? nonzero32(w) : 0,
	};
	struct mqueue *q = find_q(f, r.queue_id);
	eset allow = ANY;
	int ret;

	if (ONE_IN(4) && f->chk)
		r.queue_id = f->chk->qid;	/* reading it is fine */
	q = find_q(f, r.queue_id);
	if (r.pad)
		allow = E(EINVAL) | E(ENOENT);
	else if (exact(f))
		allow = q ? OK : E(ENOENT);
	ret = xioctl(f->fd, DRM_IOCTL_VACCEL_QUEUE_QUERY, &r);
	check(w, K_QUEUE_QUERY, ret, allow, r.pad ? "pad" : q ? "live queue" : "random id");
	if (ret)
		return;
	if (r.state > DRM_VACCEL_QUEUE_ERROR || r.fault > DRM_VACCEL_FAULT_REMOVED ||
	    (r.state == DRM_VACCEL_QUEUE_RUNNING) != !r.fault ||
	    r.read_index > r.write_index || r.fault_depth > 4 ||
	    r.fault_binding > DRM_VACCEL_EXEC_MAX_BINDINGS)
		FAIL(w, K_QUEUE_STATE, "QUEUE_QUERY record",
		     "state %u fault %u read %llu write %llu depth %u binding %u", r.state,
		     r.fault, (unsigned long long)r.read_index,
		     (unsigned long long)r.write_index, r.fault_depth, r.fault_binding);
	if (r.fault < 16)
		atomic_fetch_add(&fz->faults[r.fault], 1);
	if (!q || !exact(f))
		return;
	if (r.write_index > q->db_max && r.write_index > r.read_index)
		FAIL(w, K_QUEUE_STATE, "write index past every doorbell value",
		     "queue %u: write %llu, largest doorbell %llu", q->id,
		     (unsigned long long)r.write_index, (unsigned long long)q->db_max);
	if (r.read_index < q->last_read)
		FAIL(w, K_QUEUE_STATE, "read index went back", "queue %u: %llu after %llu",
		     q->id, (unsigned long long)r.read_index, (unsigned long long)q->last_read);
	q->last_read = r.read_index;
	if (q->ctrl) {
		uint32_t st = __atomic_load_n(&q->ctrl->state, __ATOMIC_ACQUIRE);

		if ((r.state == DRM_VACCEL_QUEUE_ERROR &&
		     (st != DRM_VACCEL_QUEUE_ERROR || q->ctrl->fault != r.fault ||
		      q->ctrl->fault_index != r.fault_index)) ||
		    q->ctrl->read_index < r.read_index) {
			FAIL(w, K_QUEUE_STATE, "control page behind QUEUE_QUERY",
			     "queue %u: query state %u fault %u read %llu; page state %u fault %u read %llu",
			     q->id, r.state, r.fault, (unsigned long long)r.read_index, st,
			     q->ctrl->fault, (unsigned long long)q->ctrl->read_index);
			diag_ctrl(w, f, q);
		}
		ctrl_check(w, f, q);
	}
}

static void op_kick(struct worker *w, struct mfile *f)
{
	uint32_t id = pick_qid(w, f), pad = ONE_IN(8) ? nonzero32(w) : 0;

	do_kick(w, f, id, pad, pad ? "pad" : find_q(f, id) ? "live queue" : "random id");
}

static void op_submit(struct worker *w, struct mfile *f)
{
	struct drm_vaccel_packet pk[8];
	struct mqueue *cand[F_QS], *q;
	unsigned int i, n = 0, space;
	uint64_t rd = 0, db = 0;

	for (i = 0; i < f->nq; i++)
		if (!f->q[i].prot && f->q[i].ring && f->q[i].db)
			cand[n++] = &f->q[i];
	if (!n) {
		op_queue_create(w, f);
		return;
	}
	q = cand[RN(n)];
	if (q->ctrl) {
		ctrl_check(w, f, q);
		if (q->ctrl->state != DRM_VACCEL_QUEUE_RUNNING && !ONE_IN(8))
			return;
		rd = __atomic_load_n(&q->ctrl->read_index, __ATOMIC_ACQUIRE);
	}
	if (rd > q->wi)		/* a doorbell ran ahead of what we wrote */
		q->wi = rd;
	space = q->wi - rd < q->ring_size ? q->ring_size - (unsigned int)(q->wi - rd) : 0;
	if (!space && !ONE_IN(8))
		return;
	n = 1 + RN(space < 8 ? (space ? space : 1) : 8);
	for (i = 0; i < n; i++)
		gen_ring_packet(w, f, &pk[i]);
	switch (RN(24)) {
	case 0:		/* more than a ring ahead: faults the queue */
		db = rd + q->ring_size + 1 + RN(4);
		break;
	case 1:		/* backwards: ignored */
		db = q->wi > n ? q->wi - 1 : 1;
		break;
	case 2:
		db = garbage64(w);
		break;
	default:
		break;
	}
	ring_submit(w, f, q, pk, n, db);
	/* accepted values become the write index */
	if (db > q->wi && db - rd <= q->ring_size)
		q->wi = db;
}

/* A signal condition: mostly a real signal word of this file */
static void gen_cond(struct worker *w, struct mfile *f, struct drm_vaccel_signal_cond *c,
		     bool *unsure)
{
	struct mbo *b;

	memset(c, 0, sizeof(*c));
	c->handle = pick_handle(w, f, DRM_VACCEL_BO_SIGNAL);
	if (f->chk && ONE_IN(8))
		c->handle = f->chk->sig_h;	/* waiting on it is harmless */
	b = find_bo(f, c->handle);
	c->offset = b ? RN(b->size / 8) * 8 : RN(512) * 8;
	c->cond = RN(3);
	c->value = b && b->map ? *(volatile uint64_t *)(b->map + c->offset % b->size) + RN(3) - 1
			       : RN(4);
	switch (RN(16)) {
	case 0:
		c->cond = 3 + RN(8);
		break;
	case 1:
		c->offset += 1 + RN(7);
		break;
	case 2:
		c->offset = ONE_IN(2) ? (b ? b->size : PAGE) : garbage64(w);
		break;
	case 3:
		c->mask = ((1ULL << (1 + RN(63))) - 1) << RN(8);
		break;
	case 4:		/* not one run of bits: GE rejects it (uAPI 3) */
		c->mask = 0x0f0fULL << RN(40);
		break;
	default:
		break;
	}
	if (!exact(f) || !b)
		*unsure = true;
}

/* Why this condition is certainly invalid (the header's rules), or NULL */
static const char *cond_invalid(struct mfile *f, const struct drm_vaccel_signal_cond *c)
{
	struct mbo *b = find_bo(f, c->handle);
	uint64_t run;

	if (c->cond > DRM_VACCEL_WAIT_NE)
		return "unknown cond";
	if (c->cond == DRM_VACCEL_WAIT_GE && c->mask) {
		run = c->mask >> __builtin_ctzll(c->mask);
		if (run & (run + 1))
			return "GE with a mask that is not one run of bits";
	}
	if (!exact(f))
		return NULL;
	if (!b)
		return "unknown handle";
	if (c->offset % 8)
		return "misaligned offset";
	if (c->offset >= b->size)
		return "offset past the object";
	if (!(b->flags & DRM_VACCEL_BO_SIGNAL))
		return "not a signal object";
	return NULL;
}

static void op_wait_signals(struct worker *w, struct mfile *f)
{
	struct drm_vaccel_signal_cond conds[DRM_VACCEL_WAIT_MAX_ITEMS + 1];
	struct drm_vaccel_wait_signals a = {};
	const char *what = "valid conditions", *why;
	bool unsure = false, invalid = false;
	unsigned int i, n;
	eset allow;
	int ret;

	n = ONE_IN(16) ? (ONE_IN(2) ? 0 : DRM_VACCEL_WAIT_MAX_ITEMS + RN(2)) : 1 + RN(4);
	for (i = 0; i < n && i <= DRM_VACCEL_WAIT_MAX_ITEMS; i++) {
		gen_cond(w, f, &conds[i], &unsure);
		why = cond_invalid(f, &conds[i]);
		if (why && !invalid)
			what = why;
		invalid |= !!why;
	}
	a.conds = (uintptr_t)conds;
	a.count = n;
	a.flags = RN(4);
	a.timeout_ns = (int64_t)now_ns() + RN(3000000);
	switch (RN(16)) {
	case 0:
		a.flags = nonzero32(w) | 4;
		break;
	case 1:
		a.pad = nonzero32(w);
		break;
	case 2:		/* a deadline in the past: just look */
		a.timeout_ns = ONE_IN(2) ? -(int64_t)RN(1000) : (int64_t)now_ns() - RN(1000000);
		break;
	case 3:
		a.conds = ONE_IN(2) ? 0 : ONE_IN(2) ? 8 : (uint64_t)garbage64(w) | 1ULL << 47;
		break;
	default:
		break;
	}
	if (!a.count || a.count > DRM_VACCEL_WAIT_MAX_ITEMS) {
		allow = E(EINVAL);
		what = "count";
	} else if (a.pad || (a.flags & ~3U)) {
		allow = E(EINVAL);
		what = a.pad ? "pad" : "unknown flags";
	} else if (a.conds != (uintptr_t)conds) {
		allow = E(EFAULT);
		what = "unreadable conditions";
	} else if (invalid) {
		allow = E(EINVAL) | E(ENOENT);
	} else if (!unsure) {
		allow = OK | E(ETIME) | E(EIO) | E(EINTR);
	} else {
		allow = ANY;
		what = "maybe valid";
	}
	ret = xioctl(f->fd, DRM_IOCTL_VACCEL_WAIT_SIGNALS, &a);
	check(w, K_WAIT_SIGNALS, ret, allow, what);
	if (!ret && a.first >= a.count)
		FAIL(w, K_WAIT_SIGNALS, "first", "first %u of %u", a.first, a.count);
}

/* SIGNAL_WRITE, sometimes with uAPI 2's argument size (no flags, no pad) */
static void op_signal_write(struct worker *w, struct mfile *f)
{
	struct drm_vaccel_signal_write s = {
		.handle = pick_handle(w, f, DRM_VACCEL_BO_SIGNAL),
		.op = ONE_IN(16) ? garbage32(w) : 1 + RN(3),
		.value = ONE_IN(2) ? RN(8) : R64(),
	};
	struct mbo *b = find_bo(f, s.handle);
	bool v2 = ONE_IN(8);
	unsigned long cmd = v2 ? _IOC(_IOC_WRITE, DRM_IOCTL_BASE,
				      DRM_COMMAND_BASE + DRM_VACCEL_SIGNAL_WRITE, 24)
			       : DRM_IOCTL_VACCEL_SIGNAL_WRITE;
	const char *what = v2 ? "uAPI 2 size" : "valid";
	eset allow = ANY;
	int ret;

	s.offset = b ? RN(b->size / 8) * 8 : RN(64) * 8;
	switch (RN(16)) {
	case 0:
		s.offset += 1 + RN(7);
		break;
	case 1:
		s.offset = ONE_IN(2) ? (b ? b->size : PAGE) : garbage64(w);
		break;
	case 2:
		s.flags = v2 ? 0 : nonzero32(w);
		break;
	case 3:
		s.pad = v2 ? 0 : nonzero32(w);
		break;
	default:
		break;
	}
	if (s.op < DRM_VACCEL_SIGNAL_SET || s.op > DRM_VACCEL_SIGNAL_MAX || s.flags || s.pad ||
	    s.offset % 8) {
		allow = E(EINVAL) | E(ENOENT);
		what = s.flags ? "flags (uAPI 3)" : s.pad ? "pad (uAPI 3)" :
		       s.offset % 8 ? "misaligned offset" : "unknown op";
	} else if (exact(f) && !b) {
		allow = E(ENOENT);
		what = "unknown handle";
	} else if (exact(f) && (!(b->flags & DRM_VACCEL_BO_SIGNAL) || s.offset >= b->size)) {
		allow = E(EINVAL);
		what = s.offset >= b->size ? "offset past the object" : "not a signal object";
	} else if (exact(f)) {
		allow = b->imported ? OK | E(EACCES) : OK;
	}
	ret = xioctl(f->fd, cmd, &s);
	check(w, K_SIGNAL_WRITE, ret, allow, what);
}

static int pick_efd(struct worker *w)
{
	unsigned int i = RN(W_EFDS);

	if (w->efd[i] < 0)
		w->efd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return w->efd[i];
}

static void op_signal_eventfd(struct worker *w, struct mfile *f)
{
	struct drm_vaccel_signal_eventfd a = {};
	bool have = dev_caps & DRM_VACCEL_CAP_SIGNAL_EVENTFD, unsure = false;
	eset allow = ANY;
	int ret;

	gen_cond(w, f, &a.cond, &unsure);
	a.fd = pick_efd(w);
	a.flags = ONE_IN(4) ? DRM_VACCEL_EVENTFD_IGNORE_FAULTS : 0;
	switch (RN(12)) {
	case 0:
		a.fd = ONE_IN(2) ? -1 : ONE_IN(2) ? f->fd : 1 << 20;
		unsure = true;
		break;
	case 1:
		a.flags = nonzero32(w) | 4;
		break;
	case 2:
	case 3:
		a.flags = DRM_VACCEL_EVENTFD_CANCEL;
		a.id = w->narm && !ONE_IN(4) ? w->arm[RN(w->narm)] : garbage64(w);
		break;
	default:
		break;
	}
	if (!have)
		allow = E(EINVAL);	/* not implemented yet: an unknown ioctl */
	else if (a.flags & ~3U)
		allow = E(EINVAL) | E(EBADF);
	else if (a.flags & DRM_VACCEL_EVENTFD_CANCEL)
		allow = OK | E(ENOENT);
	else if (cond_invalid(f, &a.cond))
		allow = E(EINVAL) | E(ENOENT) | E(EBADF);
	else if (!unsure && w->narm < W_ARMS)
		allow = OK;
	ret = xioctl(f->fd, DRM_IOCTL_VACCEL_SIGNAL_EVENTFD, &a);
	check(w, K_SIGNAL_EVENTFD, ret, allow, a.flags & DRM_VACCEL_EVENTFD_CANCEL ? "cancel" : "arm");
	if (!ret && !(a.flags & DRM_VACCEL_EVENTFD_CANCEL)) {
		if (w->narm == W_ARMS)
			w->narm--;
		w->arm[w->narm++] = a.id;
	}
}

/* Keep a dma-buf fd for others; the pool closes the oldest when full. */
static void pool_put(struct worker *w, int fd, int dev, bool rdwr, uint64_t size)
{
	if (w->child) {
		if (w->ndmabuf == W_DMABUFS)
			close(w->dmabuf[--w->ndmabuf]);
		w->dmabuf[w->ndmabuf++] = fd;
		return;
	}
	pthread_mutex_lock(&pool_lock);
	if (npool == FZ_POOL) {
		close(pool[0].fd);
		memmove(pool, pool + 1, sizeof(pool[0]) * --npool);
	}
	pool[npool++] = (struct fz_dmabuf){ .fd = fd, .dev = dev, .rdwr = rdwr, .size = size };
	pthread_mutex_unlock(&pool_lock);
}

static void op_prime_export(struct worker *w, struct mfile *f)
{
	struct drm_prime_handle a = {
		.handle = pick_handle(w, f, 0), .flags = DRM_CLOEXEC | DRM_RDWR, .fd = -1,
	};
	struct mbo *b = find_bo(f, a.handle);
	eset allow = ANY;
	int ret;

	if (ONE_IN(4))
		a.flags = DRM_CLOEXEC;
	if (ONE_IN(16))
		a.flags |= nonzero32(w) & ~(DRM_CLOEXEC | DRM_RDWR) ?: 4;
	if (a.flags & ~(DRM_CLOEXEC | DRM_RDWR))
		allow = E(EINVAL) | E(ENOENT);
	else if (exact(f))
		allow = b ? OK | E(EMFILE) | E(ENFILE) : E(ENOENT);
	ret = xioctl(f->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &a);
	check(w, K_PRIME_EXPORT, ret, allow, "random handle");
	if (ret)
		return;
	if (b)
		b->shared = true;
	if (ONE_IN(4))
		close(a.fd);
	else
		pool_put(w, a.fd, f->dev, a.flags & DRM_RDWR, b && exact(f) ? b->size : 0);
}

/* Import @fd; on success learn what it is with BO_INFO */
static void do_import(struct worker *w, struct mfile *f, int fd, bool valid, const char *what)
{
	struct drm_prime_handle a = { .fd = fd };
	struct drm_vaccel_bo_info i = {};
	struct mbo *b;
	int ret;

	ret = xioctl(f->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &a);
	check(w, K_PRIME_IMPORT, ret, valid && exact(f) ? OK : ANY, what);
	if (ret)
		return;
	i.handle = a.handle;
	ret = xioctl(f->fd, DRM_IOCTL_VACCEL_BO_INFO, &i);
	check(w, K_BO_INFO, ret, exact(f) ? OK : ANY, "imported handle");
	if (ret)
		return;
	b = find_bo(f, a.handle);
	if (b) {	/* the same object again: the same handle */
		if (exact(f) && (b->size != i.size || b->offset != i.mmap_offset))
			FAIL(w, K_PRIME_IMPORT, "import of a held object",
			     "handle %u: size %llu offset 0x%llx, model %llu 0x%llx", a.handle,
			     (unsigned long long)i.size, (unsigned long long)i.mmap_offset,
			     (unsigned long long)b->size, (unsigned long long)b->offset);
		b->shared = true;
		return;
	}
	b = bo_add(w, f, a.handle, i.flags, i.size, i.mmap_offset);
	if (!b) {
		close_unmodelled(w, f, a.handle, "model full");
		return;
	}
	b->imported = i.status & DRM_VACCEL_BO_STATUS_IMPORTED;
	b->sealed = i.status & DRM_VACCEL_BO_STATUS_SEALED;
	b->shared = true;
	if ((b->flags & DRM_VACCEL_BO_SIGNAL) && ONE_IN(2)) {
		void *p = vaccel_bo_mmap(f->fd, b->offset, b->size, PROT_READ | PROT_WRITE);

		check(w, K_MMAP_BO, p == MAP_FAILED ? -errno : 0, ANY, "imported signals");
		if (p != MAP_FAILED)
			b->map = p;
	}
}

static void op_prime_import(struct worker *w, struct mfile *f)
{
	int fd;

	switch (RN(8)) {
	case 0:
		do_import(w, f, ONE_IN(2) ? -1 : 1 << 20, false, "not a file");
		return;
	case 1:
		do_import(w, f, ONE_IN(2) ? f->fd : pick_efd(w), false, "not a dma-buf");
		return;
	default:
		break;
	}
	if (w->child) {
		if (w->ndmabuf)
			do_import(w, f, w->dmabuf[RN(w->ndmabuf)], true, "a dma-buf");
		return;
	}
	/* held under the lock, so nobody closes (and reuses) the fd meanwhile */
	pthread_mutex_lock(&pool_lock);
	if (npool) {
		fd = pool[RN(npool)].fd;
		do_import(w, f, fd, true, "a dma-buf");
	}
	pthread_mutex_unlock(&pool_lock);
}

static void op_version(struct worker *w, struct mfile *f)
{
	char name[64], date[64], desc[128];
	struct drm_version v = {};
	bool bad = false;
	size_t asked;
	int ret;

	v.name_len = RN(sizeof(name) + 1);
	v.name = ONE_IN(8) ? NULL : name;
	v.date_len = RN(sizeof(date) + 1);
	v.date = ONE_IN(8) ? NULL : date;
	v.desc_len = RN(sizeof(desc) + 1);
	v.desc = ONE_IN(8) ? NULL : desc;
	if (ONE_IN(8)) {
		v.desc = (char *)(uintptr_t)(garbage64(w) | 1ULL << 47);
		v.desc_len = 1 + RN(64);
		bad = true;
	}
	asked = v.name_len;
	ret = xioctl(f->fd, DRM_IOCTL_VERSION, &v);
	check(w, K_VERSION, ret, bad ? E(EFAULT) : OK, bad ? "bad buffer" : "buffers");
	if (ret)
		return;
	if (v.name_len != 6 || (v.name && strncmp(name, "vaccel", asked < 6 ? asked : 6)))
		FAIL(w, K_VERSION, "name", "%.*s, length %zu", (int)(asked < 6 ? asked : 6),
		     v.name ? name : "", v.name_len);
}

/* Unknown numbers, bad pointers, old sizes, the wrong kind of file */
static void op_bad_ioctl(struct worker *w, struct mfile *f)
{
	static const unsigned long cmds[] = {
		DRM_IOCTL_VACCEL_GET_PARAM, DRM_IOCTL_VACCEL_BO_CREATE,
		DRM_IOCTL_VACCEL_BO_INFO, DRM_IOCTL_VACCEL_BO_SEAL,
		DRM_IOCTL_VACCEL_VM_BIND, DRM_IOCTL_VACCEL_VM_UNBIND,
		DRM_IOCTL_VACCEL_QUEUE_CREATE, DRM_IOCTL_VACCEL_QUEUE_DESTROY,
		DRM_IOCTL_VACCEL_QUEUE_QUERY, DRM_IOCTL_VACCEL_KICK,
		DRM_IOCTL_VACCEL_WAIT_SIGNALS, DRM_IOCTL_VACCEL_SIGNAL_WRITE,
	};
	uint64_t buf[64] = {};
	unsigned long cmd;
	int ret, fd;

	switch (RN(5)) {
	case 0:		/* past the table */
		cmd = _IOC(RN(4), DRM_IOCTL_BASE, DRM_COMMAND_BASE + 0x0d + RN(0x60 - 0x0d),
			   RN(256));
		check(w, K_BAD_IOCTL, xioctl(f->fd, cmd, buf), E(EINVAL), "unknown number");
		break;
	case 1:		/* the argument cannot be read */
		cmd = cmds[RN(ARRAY_SIZE(cmds))];
		ret = xioctl(f->fd, cmd, ONE_IN(2) ? NULL : (void *)(uintptr_t)(1ULL << 46));
		check(w, K_BAD_IOCTL, ret, E(EFAULT), "argument pointer");
		break;
	case 2:		/* a larger argument than the driver's: the rest is ignored */
		buf[0] = ONE_IN(2) ? DRM_VACCEL_PARAM_DEVICE_ID : DRM_VACCEL_PARAM_UAPI_VERSION;
		buf[1 + RN(60)] = R64();
		cmd = _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE,
			   DRM_COMMAND_BASE + DRM_VACCEL_GET_PARAM, 256);
		check(w, K_GET_PARAM, xioctl(f->fd, cmd, buf), OK, "larger argument");
		break;
	case 3:		/* a vaccel ioctl on another kind of file */
		fd = pick_efd(w);
		if (fd >= 0)
			check(w, K_BAD_IOCTL, xioctl(fd, cmds[RN(ARRAY_SIZE(cmds))], buf),
			      E(ENOTTY) | E(EINVAL), "an eventfd");
		break;
	default:	/* another ioctl type on the accel file */
		cmd = _IOC(RN(4), 'x' + RN(4), RN(256), RN(64));
		check(w, K_BAD_IOCTL, xioctl(f->fd, cmd, buf), E(ENOTTY), "not a DRM ioctl");
		break;
	}
}

/* ---------------------------------------------------------------------
 * Host mappings of objects, dma-bufs and queue pages
 */
static struct mbo *find_bo_at(struct mfile *f, uint64_t offset)
{
	unsigned int i;

	for (i = 0; i < f->nbo; i++)
		if (f->bo[i].offset == offset)
			return &f->bo[i];
	return NULL;
}

/* Which handle of @f has mmap offset @off, that the model does not know of? */
static void diag_offset(struct worker *w, struct mfile *f, uint64_t off)
{
	struct drm_vaccel_bo_info i = {};
	unsigned int n = 0;

	for (i.handle = 1; i.handle < 5000; i.handle++) {
		if (xioctl(f->fd, DRM_IOCTL_VACCEL_BO_INFO, &i))
			continue;
		n++;
		if (i.mmap_offset == off || !find_bo(f, i.handle))
			dprintf(STDERR_FILENO,
				"# diag: file %d handle %u offset 0x%llx size %llu flags 0x%x status 0x%x%s\n",
				(int)(f - w->f), i.handle, (unsigned long long)i.mmap_offset,
				(unsigned long long)i.size, i.flags, i.status,
				find_bo(f, i.handle) ? "" : " (not in the model)");
		i = (struct drm_vaccel_bo_info){ .handle = i.handle };
	}
	dprintf(STDERR_FILENO, "# diag: the kernel has %u handles, the model %u; mapped offset 0x%llx\n",
		n, f->nbo, (unsigned long long)off);
}

static void op_mmap_bo(struct worker *w, struct mfile *f)
{
	struct mbo *b = pick_bo(w, f, 0), *o;
	bool wr = ONE_IN(2), priv = ONE_IN(16);
	uint64_t off = b ? b->offset : garbage64(w) & ~(PAGE - 1);
	size_t len = b ? b->size : PAGE;
	struct mfile *of;
	eset allow = ANY;
	uint8_t *p;

	switch (RN(12)) {
	case 0:
		len += PAGE;
		break;
	case 1:		/* another file's object */
		of = &w->f[RN(F_ALL)];
		o = of != f ? pick_bo(w, of, 0) : NULL;
		if (o) {
			off = o->offset;
			len = o->size;
		}
		break;
	case 2:		/* the next page: another object's offset, or nothing */
		off += PAGE;
		break;
	default:
		if (b && len > PAGE && ONE_IN(2))
			len = PAGE * (1 + RN(len / PAGE));
		break;
	}
	/* the object at that offset, if this file holds it */
	b = find_bo_at(f, off);
	if (b && b->prot)
		return;
	if (!exact(f) || is_qpage(off))	/* queue pages: op_mmap_qpage */
		allow = ANY;
	else if (!b)
		allow = E(EINVAL) | E(EACCES) | E(EOVERFLOW);
	else if (len > b->size || priv)
		allow = E(EINVAL);
	else if (wr && b->sealed)
		allow = E(EACCES);
	else if (wr && b->shared)
		allow = OK | E(EACCES);
	else
		allow = OK;
	p = mmap(NULL, len, wr ? PROT_READ | PROT_WRITE : PROT_READ,
		 priv ? MAP_PRIVATE : MAP_SHARED, f->fd, (off_t)off);
	check(w, K_MMAP_BO, p == MAP_FAILED ? -errno : 0, allow,
	      wr ? "read-write" : "read-only");
	if (p != MAP_FAILED && !b && exact(f) && !is_qpage(off))
		diag_offset(w, f, off);
	if (p == MAP_FAILED) {
		if (errno == EACCES && wr && b && !priv && len <= b->size)
			b->sealed = true;
		return;
	}
	/* on a tainted file, an unknown object: it cannot be counted */
	hm_add(w, p, len, is_qpage(off) ? ((off >> 12) & 1 ? HM_CTRL : HM_DB) : HM_BO,
	       b ? b->uid : 0, wr);
	if (guarded_access(w, p + RN(len), wr, (uint8_t)R64()))
		FAIL(w, K_HOSTMEM, "fresh mapping of an object", "signal %d", w->guard_sig);
}

static void op_mmap_dmabuf(struct worker *w, struct mfile *f)
{
	bool wr = ONE_IN(2);
	struct fz_dmabuf d = { .fd = -1 };
	uint8_t *p;
	int err;

	(void)f;
	if (w->child) {
		if (!w->ndmabuf)
			return;
		d.fd = w->dmabuf[RN(w->ndmabuf)];
		d.rdwr = true;
	} else {
		pthread_mutex_lock(&pool_lock);
		if (npool)
			d = pool[RN(npool)];
	}
	if (d.fd >= 0) {
		size_t len = d.size ? d.size : PAGE;

		off_t off = ONE_IN(16) ? PAGE : 0;
		eset allow = ANY;

		/*
		 * An object has one dma-buf: its first export's access mode
		 * holds for later ones, so read-only may be read-write.
		 */
		if (d.size)
			allow = off ? E(EINVAL) | (wr ? E(EACCES) : 0) : !wr ? OK : OK | E(EACCES);
		p = mmap(NULL, len, wr ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, d.fd, off);
		err = p == MAP_FAILED ? -errno : 0;
		check(w, K_MMAP_DMABUF, err, allow, wr ? "read-write" : "read-only");
		if (!err) {
			hm_add(w, p, len, HM_DMABUF, 0, wr);
			if (guarded_access(w, p + RN(len), false, 0))
				FAIL(w, K_HOSTMEM, "fresh mapping of a dma-buf", "signal %d",
				     w->guard_sig);
		}
	}
	if (!w->child)
		pthread_mutex_unlock(&pool_lock);
}

static void op_mmap_qpage(struct worker *w, struct mfile *f)
{
	struct mqueue *q = pick_q(w, f);
	uint32_t id = q && !ONE_IN(4) ? q->id : RN(70);
	bool ctrl = ONE_IN(2), priv = ONE_IN(16);
	int prot = ctrl ? PROT_READ : PROT_READ | PROT_WRITE;
	size_t len = ONE_IN(16) ? 2 * PAGE : PAGE;
	uint64_t off = QPAGE_BASE + (uint64_t)id * 2 * PAGE + (ctrl ? PAGE : 0);
	eset allow = ANY;
	uint8_t *p;

	if (f->chk && id == f->chk->qid && !ctrl)
		return;		/* its doorbell is the checked submitter's */
	if (ONE_IN(8))
		prot = ctrl ? PROT_READ | (ONE_IN(2) ? PROT_WRITE : PROT_EXEC) : PROT_READ;
	if (ONE_IN(32)) {	/* any page: what it is follows from the offset */
		/* below the GEM offsets, which start at 4 GiB */
		off = QPAGE_BASE + garbage64(w) % (1ULL << 18) * PAGE;
		id = (off - QPAGE_BASE) / (2 * PAGE);
		ctrl = (off / PAGE) & 1;
		if (f->chk && id == f->chk->qid && !ctrl)
			return;
	}
	if (len != PAGE || priv || off >= QPAGE_BASE + 128 * PAGE)
		allow = E(EINVAL) | (ctrl && (prot & ~PROT_READ) ? E(EACCES) : 0);
	else if (ctrl && (prot & ~PROT_READ))
		allow = E(EACCES) | (exact(f) && find_q(f, id) ? 0 : E(EINVAL));
	else if (exact(f))
		allow = find_q(f, id) ? OK : E(EINVAL);
	p = mmap(NULL, len, prot, priv ? MAP_PRIVATE : MAP_SHARED, f->fd, (off_t)off);
	check(w, K_MMAP_QUEUE, p == MAP_FAILED ? -errno : 0, allow,
	      ctrl ? "control page" : "doorbell page");
	if (p == MAP_FAILED)
		return;
	hm_add(w, p, len, ctrl ? HM_CTRL : HM_DB, 0, prot & PROT_WRITE);
	if (guarded_access(w, p, false, 0))
		FAIL(w, K_HOSTMEM, "fresh mapping of a queue page", "signal %d", w->guard_sig);
}

/* munmap (all or part), mprotect, mremap, madvise, or touch one mapping */
static void op_hmap(struct worker *w, struct mfile *f)
{
	static const int advice[] = {
		MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED, MADV_DONTNEED,
		MADV_FREE, MADV_REMOVE, MADV_DONTFORK, MADV_DOFORK, MADV_DONTDUMP,
		MADV_COLD, MADV_PAGEOUT, MADV_POPULATE_READ, MADV_POPULATE_WRITE,
		MADV_HUGEPAGE, MADV_MERGEABLE,
	};
	struct hmap *h;
	unsigned int i;
	int sig, adv, ret;
	void *p;

	(void)f;
	if (!w->nhm)
		return;
	i = RN(w->nhm);
	h = &w->hm[i];
	switch (RN(10)) {
	case 0:		/* all of it */
		munmap(h->p, h->len);
		w->hm[i] = w->hm[--w->nhm];
		break;
	case 1:		/* the first or the last page: the VMA splits */
		if (h->len <= PAGE)
			break;
		if (ONE_IN(2)) {
			munmap(h->p, PAGE);
			h->p += PAGE;
		} else {
			munmap(h->p + h->len - PAGE, PAGE);
		}
		h->len -= PAGE;
		break;
	case 2:		/* mprotect: only a mapping made writable may become it */
		ret = mprotect(h->p, h->len, PROT_READ | PROT_WRITE) ? -errno : 0;
		check(w, K_MPROTECT, ret,
		      h->kind == HM_CTRL || (h->kind == HM_BO && !h->maywrite) ?
		      E(EACCES) : ANY, "to read-write");
		if (!ret)
			h->writable = true;
		break;
	case 3:
		ret = mprotect(h->p, h->len, PROT_READ) ? -errno : 0;
		check(w, K_MPROTECT, ret, OK, "to read-only");
		if (!ret)
			h->writable = false;
		break;
	case 4:		/* move it, or try to grow it */
		if (ONE_IN(2)) {
			p = mremap(h->p, h->len, h->len + PAGE, 0);
			check(w, K_MREMAP, p == MAP_FAILED ? -errno : 0, ANY, "grow in place");
			if (p != MAP_FAILED)
				h->len += PAGE;
		} else {
			/* onto a range of our own, never onto someone's mapping */
			void *to = mmap(NULL, h->len, PROT_NONE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (to == MAP_FAILED)
				break;
			p = mremap(h->p, h->len, h->len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
			check(w, K_MREMAP, p == MAP_FAILED ? -errno : 0, ANY, "move");
			if (p != MAP_FAILED)
				h->p = p;
			else
				munmap(to, h->len);
		}
		break;
	case 5:
		adv = advice[RN(ARRAY_SIZE(advice))];
		ret = madvise(h->p, h->len, adv);
		if (!ret && (adv == MADV_DONTNEED || adv == MADV_FREE || adv == MADV_REMOVE ||
			     adv == MADV_PAGEOUT)) {
			h->zapped = true;
			/*
			 * A queue page's PTE is gone: the page must come back
			 * on the next access, as for any shared file mapping
			 * (madvise(2)); the mapping stays valid until unplug
			 * (queues.rst).
			 */
			sig = h->kind == HM_DB || h->kind == HM_CTRL ?
			      guarded_access(w, h->p, false, 0) : 0;
			if (sig)
				FAIL(w, K_HOSTMEM, "queue page after madvise",
				     "signal %d reading a %s page after madvise(%d) succeeded",
				     sig, h->kind == HM_DB ? "doorbell" : "control", adv);
		}
		if (!ret && adv == MADV_DONTFORK)
			h->dontfork = true;
		if (!ret && adv == MADV_DOFORK)
			h->dontfork = false;
		break;
	default:	/* touch: read, or write what may be written */
		if (h->zapped && h->kind != HM_BO && h->kind != HM_DMABUF)
			break;
		sig = guarded_access(w, h->p + RN(h->len),
				     h->writable && (h->kind == HM_BO || h->kind == HM_DMABUF),
				     (uint8_t)R64());
		if (sig && h->zapped)
			NOTE(w, K_HOSTMEM, "access after madvise", "signal %d on a %s mapping",
			     sig, h->kind == HM_BO ? "buffer" : "dma-buf");
		else if (sig)
			FAIL(w, K_HOSTMEM, "access", "signal %d on a %s mapping", sig,
			     h->kind == HM_BO ? "buffer" : h->kind == HM_DMABUF ? "dma-buf" :
			     h->kind == HM_DB ? "doorbell" : "control page");
		break;
	}
}

/* A sealed object full of packets, bound read-only: for EXEC */
static void op_exec_build(struct worker *w, struct mfile *f)
{
	unsigned int n = 1 + RN(ONE_IN(4) ? 128 : 8), i;
	struct drm_vaccel_packet *pk;
	struct drm_vaccel_bo_seal s = {};
	uint64_t size = page_align(n * 64) + (ONE_IN(4) ? PAGE : 0), va, token;
	struct mbo *b;
	int ret;

	if (f->nmap >= F_MAPS - 2)
		return;
	b = do_bo_create(w, f, size, DRM_VACCEL_BO_PERSISTENT, false, "EXEC buffer");
	if (!b)
		return;
	s.handle = b->handle;
	size = b->size;
	pk = vaccel_bo_mmap(f->fd, b->offset, size, PROT_READ | PROT_WRITE);
	check(w, K_MMAP_BO, pk == MAP_FAILED ? -errno : 0, exact(f) ? OK : ANY, "EXEC buffer");
	if (pk == MAP_FAILED)
		return;
	for (i = 0; i < n; i++) {
		gen_packet(w, f, &pk[i], true);
		if (ONE_IN(16))
			((uint8_t *)&pk[i])[RN(64)] ^= 1U << RN(8);
	}
	/* gen_packet() may have made objects: b may point elsewhere now */
	munmap(pk, size);
	token = fork_quiet_begin();
	ret = xioctl(f->fd, DRM_IOCTL_VACCEL_BO_SEAL, &s);
	check(w, K_BO_SEAL, ret, !exact(f) ? ANY : fork_quiet(token) ? OK : OK | E(EBUSY),
	      "a new EXEC buffer");
	if (ret)
		return;
	b = find_bo(f, s.handle);
	if (b)
		b->sealed = true;
	va = free_va(w, f, size);
	if (!do_bind(w, f, s.handle, VA_R, 0, va, size, "EXEC buffer"))
		return;
	if (f->nexec == F_EXECS)
		f->exec[RN(F_EXECS)] = (struct mexec){ va, n };
	else
		f->exec[f->nexec++] = (struct mexec){ va, n };
}

static void op_checked(struct worker *w, struct mfile *f)
{
	if (!f->chk)
		checked_create(w, f);
	else if (ONE_IN(4))
		checked_check(w, f);
	else
		checked_submit(w, f);
}

/* ---------------------------------------------------------------------
 * Files: open, dup, close, reopen
 */
static int file_open_dev(struct worker *w, struct mfile *f)
{
	int fd = vaccel_open(devs[f->dev].id);

	if (fd < 0) {
		FAIL(w, K_CHILD, "open", "device %u: %s", devs[f->dev].id, strerror(-fd));
		return fd;
	}
	f->fd = fd;
	f->fd2 = -1;
	f->tainted = false;
	return 0;
}

/* Close a private file with whatever it holds; its checked queue finishes first. */
static void file_close(struct worker *w, struct mfile *f)
{
	if (f->chk && !w->child)
		checked_finish(w, f);
	close(f->fd);
	if (f->fd2 >= 0)
		close(f->fd2);
	file_forget(w, f);
}

static void op_file(struct worker *w, struct mfile *f)
{
	(void)f;
	f = &w->f[RN(F_PRIV)];
	if (!file_open(f)) {
		file_open_dev(w, f);
		return;
	}
	switch (RN(4)) {
	case 0:		/* a second fd for the same file */
		if (f->fd2 < 0)
			f->fd2 = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
		break;
	case 1:		/* close one fd: with a dup left, the file stays */
		if (f->fd2 >= 0) {
			if (ONE_IN(2)) {
				close(f->fd);
				f->fd = f->fd2;
			} else {
				close(f->fd2);
			}
			f->fd2 = -1;
			break;
		}
		fallthrough;
	default:	/* close the file with everything in it, maybe reopen */
		file_close(w, f);
		if (ONE_IN(2))
			file_open_dev(w, f);
		break;
	}
}

/* ---------------------------------------------------------------------
 * debugfs: state files, vm_read, fault-injection knobs
 */
static int debugfs_write(unsigned int id, const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), ACCEL_DEBUGFS "/vaccel%u/%s", id, file);
	return vaccel_sysfs_write(path, val);
}

/* Context ids of this process on device @dev (debugfs "contexts") */
static unsigned int my_contexts(unsigned int dev, uint32_t *ids, unsigned int max)
{
	char buf[8192], *line, *save;
	unsigned int n = 0, ctx;
	int pid;

	if (vaccel_dev_debugfs(devs[dev].id, "contexts", buf, sizeof(buf)) < 0)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "ctx %u pid %d", &ctx, &pid) == 2 && pid == getpid())
			ids[n++] = ctx;
	return n;
}

static void op_debugfs(struct worker *w, struct mfile *f)
{
	static const char *const files[] = {
		"info", "contexts", "buffers", "vm", "queues", "engines", "stats", "name",
		"clients", "gem_names",
	};
	static const char *const knobs[] = {
		"fail_bo_create", "fail_vm_bind", "fail_queue_create", "fault_access",
	};
	unsigned int dev = RN(2), id = devs[dev].id, n;
	char buf[16384], val[96], path[128];
	uint32_t ctx[16];
	int fd, ret;

	(void)f;
	switch (RN(12)) {
	case 0:		/* vm_read: device memory as the device sees it */
		n = my_contexts(dev, ctx, 16);
		snprintf(path, sizeof(path), ACCEL_DEBUGFS "/vaccel%u/vm_read", id);
		fd = open(path, O_RDWR);
		if (fd < 0)
			break;
		snprintf(val, sizeof(val), "%u %llx %llu", n ? ctx[RN(n)] : RN(8),
			 (unsigned long long)(ONE_IN(4) ? garbage64(w) : fuzz_va(w) + RN(PAGE)),
			 (unsigned long long)(ONE_IN(8) ? garbage64(w) : 1 + RN(64)));
		ret = write(fd, val, strlen(val)) < 0 ? -errno : 0;
		check(w, K_DEBUGFS, ret, ANY, "vm_read");
		if (!ret && read(fd, buf, sizeof(buf)) < 0)
			check(w, K_DEBUGFS, -errno, OK, "vm_read result");
		close(fd);
		break;
	case 1:		/* one of the fail_* knobs: the next N fail with ENOMEM */
		snprintf(val, sizeof(val), "%u", 1 + RN(3));
		ret = debugfs_write(id, knobs[RN(ARRAY_SIZE(knobs))], val);
		check(w, K_DEBUGFS, ret, OK, "fail_* knob");
		atomic_fetch_add(&fz->knobs, 1);
		break;
	case 2:		/* stop one of our queues with an injected fault */
		n = my_contexts(dev, ctx, 16);
		snprintf(val, sizeof(val), "%u %u", n ? ctx[RN(n)] : RN(8), RN(12));
		if (ONE_IN(8))
			snprintf(val, sizeof(val), "%llu x", (unsigned long long)garbage64(w));
		ret = debugfs_write(id, "force_fault", val);
		check(w, K_DEBUGFS, ret, ANY, "force_fault");
		atomic_fetch_add(&fz->knobs, 1);
		break;
	case 3:		/* stall an engine (or a bad engine, or too long) */
		snprintf(val, sizeof(val), "%u %llu", RN(devs[dev].engines + 1),
			 (unsigned long long)(ONE_IN(8) ?
					      60000000001ULL + garbage64(w) % (1ULL << 62) :
					      RN(20000000)));
		ret = debugfs_write(id, "stall_engine", val);
		check(w, K_DEBUGFS, ret, ANY, "stall_engine");
		atomic_fetch_add(&fz->knobs, 1);
		break;
	case 4:		/* reset the device: now and then */
		if (ONE_IN(16)) {
			ret = debugfs_write(id, "reset", ONE_IN(8) ? "0" : "1");
			check(w, K_DEBUGFS, ret > 0 ? 0 : ret, ANY, "reset");
			atomic_fetch_add(&fz->knobs, 1);
		}
		break;
	case 5:
		snprintf(val, sizeof(val), "%u", ONE_IN(2) ? 0 : RN(100000));
		ret = debugfs_write(id, "packet_latency_ns", val);
		check(w, K_DEBUGFS, ret, OK, "packet_latency_ns");
		break;
	default:	/* read a state file whole */
		ret = vaccel_dev_debugfs(id, files[RN(ARRAY_SIZE(files))], buf, sizeof(buf));
		/* no such file (a DRM core one), or our own SIGUSR1 */
		if (ret < 0 && ret != -ENOENT && ret != -EINTR)
			check(w, K_DEBUGFS, ret, OK, "read");
		if (ONE_IN(4))
			vaccel_read_file(VACCEL_DEBUGFS "/objects", buf, sizeof(buf));
		break;
	}
}

/* Interrupt another thread: its WAIT_SIGNALS returns EINTR or restarts. */
static void op_signal_thread(struct worker *w, struct mfile *f)
{
	struct worker *o = &workers[RN(cfg.threads)];

	(void)f;
	if (o != w && o->tid)
		syscall(SYS_tgkill, getpid(), o->tid, ONE_IN(2) ? SIGUSR1 : SIGUSR2);
}

/* eventfds: read what fired, close, make new ones */
static void op_eventfd(struct worker *w, struct mfile *f)
{
	unsigned int i = RN(W_EFDS);
	uint64_t v;

	(void)f;
	if (w->efd[i] < 0)
		return;
	if (ONE_IN(4)) {
		close(w->efd[i]);
		w->efd[i] = -1;
	} else if (read(w->efd[i], &v, sizeof(v)) < 0 && errno != EAGAIN && errno != EINTR) {
		FAIL(w, K_SIGNAL_EVENTFD, "read of the eventfd", "%s", strerror(errno));
	}
}

/*
 * The per-context limits, on a private file whose state is known: the
 * queue, mapping and handle counts one past the limit fail with ENOSPC.
 */
static void op_limits(struct worker *w, struct mfile *f)
{
	uint32_t ids[64], h;
	unsigned int i, n = 0;
	struct mbo *b;
	int ret = 0;

	if (!exact(f) || f->view)
		return;
	switch (RN(10)) {
	case 0:		/* MAX_BOS handles */
		for (i = f->nbo; i < 4096 && !ret; i++) {
			heartbeat(w);
			ret = vaccel_bo_new(f->fd, PAGE, 0, &h);
			check(w, K_BO_CREATE, ret, OK, "up to MAX_BOS");
		}
		if (!ret) {
			ret = vaccel_bo_new(f->fd, PAGE, 0, &h);
			check(w, K_BO_CREATE, ret, E(ENOSPC), "past MAX_BOS");
			b = pick_bo(w, f, 0);
			if (b && !b->imported) {
				int d;

				/* an import counts too */
				ret = vaccel_prime_export(f->fd, b->handle, &d);
				check(w, K_PRIME_EXPORT, ret, OK, "at MAX_BOS");
				if (!ret) {
					pool_put(w, d, f->dev, true, b->size);
					b->shared = true;
				}
			}
		}
		/* the file goes, with every one of them */
		file_close(w, f);
		break;
	case 1:
	case 2:		/* MAX_MAPPINGS: one page bound 4096 times */
		b = do_bo_create(w, f, PAGE, 0, false, "for MAX_MAPPINGS");
		if (!b)
			break;
		h = b->handle;
		for (i = f->nmap; i < 4096 && !ret; i++) {
			heartbeat(w);
			ret = vaccel_vm_bind(f->fd, h, VA_R, 0, CHK_VA + (4ULL << 20) + i * PAGE,
					     PAGE);
			check(w, K_VM_BIND, ret, OK, "up to MAX_MAPPINGS");
		}
		if (!ret)
			check(w, K_VM_BIND, vaccel_vm_bind(f->fd, h, VA_R, 0, CHK_VA - PAGE, PAGE),
			      E(ENOSPC), "past MAX_MAPPINGS");
		for (i = f->nmap; i < 4096; i++) {
			heartbeat(w);
			if (vaccel_vm_unbind(f->fd, CHK_VA + (4ULL << 20) + i * PAGE, PAGE))
				break;
		}
		break;
	default:	/* MAX_QUEUES, all on one ring */
		if (!f->nmap || !(f->map[0].access & VA_R) || f->map[0].prot)
			break;
		for (i = f->nq; i < 64 && !ret; i++) {
			struct drm_vaccel_queue_create c = {
				.ring_va = f->map[0].va, .ring_size = 2,
			};

			ret = xioctl(f->fd, DRM_IOCTL_VACCEL_QUEUE_CREATE, &c);
			check(w, K_QUEUE_CREATE, ret, OK, "up to MAX_QUEUES");
			if (!ret)
				ids[n++] = c.queue_id;
		}
		if (!ret) {
			struct drm_vaccel_queue_create c = {
				.ring_va = f->map[0].va, .ring_size = 2,
			};

			ret = xioctl(f->fd, DRM_IOCTL_VACCEL_QUEUE_CREATE, &c);
			check(w, K_QUEUE_CREATE, ret, E(ENOSPC), "past MAX_QUEUES");
		}
		for (i = 0; i < n; i++) {
			struct drm_vaccel_queue_destroy d = { .queue_id = ids[i] };

			check(w, K_QUEUE_DESTROY, xioctl(f->fd, DRM_IOCTL_VACCEL_QUEUE_DESTROY, &d),
			      OK, "back below MAX_QUEUES");
		}
		break;
	}
}

/* ---------------------------------------------------------------------
 * The operation mix, workers and forked children
 */
static void op_fork(struct worker *w, struct mfile *f);

static const struct op_def {
	const char *name;
	void (*fn)(struct worker *w, struct mfile *f);
	unsigned int weight;
	bool child;		/* forked children do it too */
	bool priv;		/* on a private file only */
} ops[] = {
	{ "GET_PARAM", op_get_param, 25, true },
	{ "BO_CREATE", op_bo_create, 70, true },
	{ "BO_INFO", op_bo_info, 35, true },
	{ "BO_SEAL", op_bo_seal, 25, true },
	{ "GEM_CLOSE", op_gem_close, 45, true },
	{ "VM_BIND", op_vm_bind, 70, true },
	{ "VM_UNBIND", op_vm_unbind, 40, true },
	{ "QUEUE_CREATE", op_queue_create, 30, true },
	{ "QUEUE_DESTROY", op_queue_destroy, 12, true },
	{ "QUEUE_QUERY", op_queue_query, 30, true },
	{ "KICK", op_kick, 12, true },
	{ "submit", op_submit, 110, true },
	{ "WAIT_SIGNALS", op_wait_signals, 35, true },
	{ "SIGNAL_WRITE", op_signal_write, 30, true },
	{ "SIGNAL_EVENTFD", op_signal_eventfd, 20, true },
	{ "PRIME export", op_prime_export, 25, true },
	{ "PRIME import", op_prime_import, 25, true },
	{ "VERSION", op_version, 6, true },
	{ "bad ioctl", op_bad_ioctl, 12, true },
	{ "mmap buffer", op_mmap_bo, 30, true },
	{ "mmap dma-buf", op_mmap_dmabuf, 10, true },
	{ "mmap queue page", op_mmap_qpage, 15, true },
	{ "host mapping", op_hmap, 60, true },
	{ "EXEC buffer", op_exec_build, 15, true },
	{ "checked queue", op_checked, 80, false, true },
	{ "file", op_file, 10, true },
	{ "fork", op_fork, 2, false },
	{ "debugfs", op_debugfs, 15, true },
	{ "signal a thread", op_signal_thread, 6, false },
	{ "eventfd", op_eventfd, 6, true },
	{ "limits", op_limits, 1, false, true },
};

/* Run operations until the time or the count is up (or we are stopped). */
static void worker_run(struct worker *w, uint64_t max_ops)
{
	unsigned int total = 0, i, pick;
	uint64_t first = w->op_no;
	struct mfile *f;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		total += !w->child || ops[i].child ? ops[i].weight : 0;
	while (!atomic_load(&fz_stop) && (!max_ops || w->op_no - first < max_ops) &&
	       (!w->until_ms || vaccel_now_ms() < w->until_ms)) {
		w->r.s = mix64(w->seed ^ mix64(w->op_no + 1));
		pick = RN(total);
		for (i = 0; i < ARRAY_SIZE(ops); i++) {
			unsigned int wt = !w->child || ops[i].child ? ops[i].weight : 0;

			if (pick < wt)
				break;
			pick -= wt;
		}
		/* a private file three times as often as a shared one */
		pick = RN(3 * F_PRIV + F_VIEWS);
		f = &w->f[ops[i].priv ? pick % F_PRIV :
			  pick < 3 * F_PRIV ? pick / 3 : F_PRIV + pick - 3 * F_PRIV];
		if (!file_open(f)) {
			op_begin(w, "open");
			file_open_dev(w, f);
		} else {
			op_begin(w, ops[i].name);
			ops[i].fn(w, f);
		}
		w->op_no++;
	}
}

/* A forked child: a short burst on the files it kept, then exit as is. */
static void __noreturn child_main(struct worker *w, const bool *use)
{
	unsigned int i, j;

	w->child = true;
	w->ndmabuf = 0;
	/* queue pages are VM_DONTCOPY; MADV_DONTFORK mappings stay behind */
	for (i = 0; i < w->nhm;) {
		if (w->hm[i].dontfork || w->hm[i].kind == HM_DB || w->hm[i].kind == HM_CTRL)
			w->hm[i] = w->hm[--w->nhm];
		else
			i++;
	}
	for (i = 0; i < F_ALL; i++) {
		struct mfile *f = &w->f[i];

		for (j = 0; j < f->nq; j++) {
			f->q[j].db = NULL;
			f->q[j].ctrl = NULL;
		}
		if (i >= F_PRIV || use[i]) {
			f->tainted = true;
			free(f->chk);	/* the parent drops it too */
			f->chk = NULL;
			for (j = 0; j < f->nbo; j++)
				f->bo[j].prot = false;
			for (j = 0; j < f->nmap; j++)
				f->map[j].prot = false;
			for (j = 0; j < f->nq; j++)
				f->q[j].prot = false;
			continue;
		}
		/* not ours to touch: leave its mappings alone, close our fds */
		if (f->fd >= 0)
			close(f->fd);
		if (f->fd2 >= 0)
			close(f->fd2);
		free(f->chk);
		memset(f, 0, sizeof(*f));
		f->fd = -1;
		f->fd2 = -1;
		f->dev = i == 2;
	}
	w->seed = mix64(w->seed ^ w->op_no ^ 0xc4111dULL);
	w->op_no = 0;
	w->r.s = w->seed;
	w->until_ms = vaccel_now_ms() + 50 + RN(250);
	worker_run(w, 100 + RN(300));
	_exit(0);
}

static void op_fork(struct worker *w, struct mfile *f)
{
	uint64_t end = vaccel_now_ms() + FZ_CHK_DRAIN_MS;
	bool use[F_PRIV];
	int status = 0;
	unsigned int i;
	pid_t pid, r;

	(void)f;
	for (i = 0; i < F_PRIV; i++)
		use[i] = ONE_IN(2);
	atomic_fetch_add(&forks_started, 1);
	atomic_fetch_add(&forks_live, 1);
	pid = fork();
	if (pid == 0)
		child_main(w, use);
	if (pid < 0) {
		atomic_fetch_sub(&forks_live, 1);
		return;
	}
	atomic_fetch_add(&fz->forks, 1);
	for (i = 0; i < F_PRIV; i++)
		if (use[i])
			file_taint(&w->f[i]);
	if (ONE_IN(4)) {	/* killed in the middle of something */
		usleep(RN(20000));
		kill(pid, SIGKILL);
		atomic_fetch_add(&fz->killed, 1);
	}
	while ((r = waitpid(pid, &status, WNOHANG)) == 0 || (r < 0 && errno == EINTR)) {
		if (vaccel_now_ms() > end) {
			FAIL(w, K_HANG, "forked child", "pid %d still running after %u ms", pid,
			     FZ_CHK_DRAIN_MS);
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			atomic_fetch_sub(&forks_live, 1);
			return;
		}
		usleep(1000);
	}
	atomic_fetch_sub(&forks_live, 1);
	if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
		FAIL(w, K_CHILD, "crashed", "pid %d killed by signal %d", pid, WTERMSIG(status));
	else if (WIFEXITED(status) && WEXITSTATUS(status))
		FAIL(w, K_CHILD, "exit status", "pid %d exited with %d", pid, WEXITSTATUS(status));
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned int i;

	cur = w;
	w->tid = (pid_t)syscall(SYS_gettid);
	for (i = 0; i < W_EFDS; i++)
		w->efd[i] = -1;
	for (i = 0; i < F_ALL; i++) {
		struct mfile *f = &w->f[i];

		f->fd = -1;
		f->fd2 = -1;
		f->dev = i == 2 || i == F_PRIV + 1;
		if (i >= F_PRIV) {
			f->view = true;
			f->tainted = true;
			f->fd = shared_fd[i - F_PRIV];
		} else {
			file_open_dev(w, f);
		}
	}
	worker_run(w, cfg.ops);

	/* the checked queues finish, then everything is closed */
	op_begin(w, "finish");
	for (i = 0; i < F_PRIV; i++) {
		heartbeat(w);
		if (w->f[i].chk)
			checked_finish(w, &w->f[i]);
	}
	for (i = 0; i < F_ALL; i++) {
		struct mfile *f = &w->f[i];

		if (f->view) {
			file_forget(w, f);
			continue;
		}
		if (file_open(f)) {
			close(f->fd);
			if (f->fd2 >= 0)
				close(f->fd2);
		}
		file_forget(w, f);
	}
	while (w->nhm) {
		w->nhm--;
		munmap(w->hm[w->nhm].p, w->hm[w->nhm].len);
	}
	for (i = 0; i < W_EFDS; i++)
		if (w->efd[i] >= 0)
			close(w->efd[i]);
	atomic_store(&w->op_start_ms, 0);
	return NULL;
}

/* ---------------------------------------------------------------------
 * The run: devices, threads, watchdog, summary, leak check
 */
static void dump_stack_of(pid_t tid)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stack", tid);
	if (vaccel_read_file(path, buf, sizeof(buf)) > 0)
		dprintf(STDERR_FILENO, "# kernel stack of thread %d:\n%s", tid, buf);
	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", tid);
	if (vaccel_read_file(path, buf, sizeof(buf)) > 0)
		dprintf(STDERR_FILENO, "# wchan: %s\n", buf);
}

/* Report operations that run for more than FZ_STUCK_S seconds. */
static void watchdog(void)
{
	unsigned int i;

	for (i = 0; i < cfg.threads; i++) {
		struct worker *w = &workers[i];
		uint64_t start = atomic_load(&w->op_start_ms), now = vaccel_now_ms();

		if (!start || w->hang_reported || now < start + FZ_STUCK_S * 1000ULL)
			continue;
		w->hang_reported = true;
		report(w, false, K_HANG, 0, "operation", atomic_load(&w->cur_op),
		       "thread %u has been in it for %llu ms", i,
		       (unsigned long long)(now - start));
		dump_stack_of(w->tid);
	}
}

static void summary(void)
{
	char exp[64];
	unsigned int i;

	fprintf(stderr, "# calls (succeeded):");
	for (i = 0; i < K_NKINDS; i++)
		if (atomic_load(&fz->calls[i]))
			fprintf(stderr, " %s %llu (%llu)", kinds[i].name,
				(unsigned long long)fz->calls[i], (unsigned long long)fz->oks[i]);
	fprintf(stderr, "\n# packets %llu, doorbells %llu, kicks %llu, forks %llu (%llu killed), knob writes %llu, interrupts %llu\n",
		(unsigned long long)fz->packets, (unsigned long long)fz->doorbells,
		(unsigned long long)fz->kicks, (unsigned long long)fz->forks,
		(unsigned long long)fz->killed, (unsigned long long)fz->knobs,
		(unsigned long long)fz->interrupts);
	fprintf(stderr, "# checked queues: %llu rounds verified, %llu dropped (fork, fault injection, reset, file closed)\n",
		(unsigned long long)fz->checked_rounds, (unsigned long long)fz->checked_dropped);
	fprintf(stderr, "# queue faults seen by QUEUE_QUERY:");
	for (i = 1; i < 16; i++)
		if (fz->faults[i])
			fprintf(stderr, " %u:%llu", i, (unsigned long long)fz->faults[i]);
	fprintf(stderr, "\n");
	for (i = 0; i < FZ_NVIOL; i++) {
		struct fz_violation *v = &fz->viol[i];

		if (!atomic_load(&v->ready))
			continue;
		exp[0] = '\0';
		if (v->err)
			snprintf(exp, sizeof(exp), " %s", strerrorname_np(v->err) ?: "?");
		fprintf(stderr, "# %s x%llu: %s %s%s (%s): %s [seed 0x%llx thread %d op %llu]\n",
			v->note ? "note" : "FAILURE", (unsigned long long)v->count,
			kinds[v->kind].name, v->why, exp, v->what, v->detail,
			(unsigned long long)cfg.seed, v->worker, (unsigned long long)v->op);
	}
	if (fz->lost)
		fprintf(stderr, "# %llu more reports did not fit\n", (unsigned long long)fz->lost);
}

static void set_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_interrupt };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);		/* interrupts: EINTR */
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR2, &sa, NULL);		/* restarts */
	sa.sa_handler = NULL;
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

FIXTURE(fuzz) {
	struct vaccel_counts counts;
	long queues;
};

FIXTURE_SETUP(fuzz)
{
	char spec[128];
	unsigned int i;

	if (!vaccel_present())
		SKIP(return, "vaccel is not loaded");
	for (i = 0; i < 2; i++)
		vaccel_del_device(devs[i].id);
	vaccel_counts_read(&self->counts);
	self->queues = vaccel_objects("queues");
	for (i = 0; i < 2; i++) {
		snprintf(spec, sizeof(spec), dev_specs[i], devs[i].id);
		ASSERT_EQ(0, vaccel_new_device(spec));
	}
}

FIXTURE_TEARDOWN(fuzz)
{
	unsigned int i;

	for (i = 0; i < 2; i++)
		vaccel_del_device(devs[i].id);
	EXPECT_COUNTS_BACK(&self->counts, FZ_SETTLE_MS);
}

/*
 * Fuzz with @threads threads from @seed for @ms milliseconds or @nops
 * operations per thread, then check that everything went back.
 */
static void fz_run(struct __test_metadata *_metadata, FIXTURE_DATA(fuzz) *self,
		     uint64_t seed, unsigned int threads, uint64_t ms, uint64_t nops)
{
	uint64_t start = vaccel_now_ms(), until = ms ? start + ms : 0;
	struct vaccel_counts now;
	unsigned int i, done;
	int fd;

	cfg.seed = seed;
	cfg.threads = threads;
	cfg.ms = ms;
	cfg.ops = nops;
	fz = mmap(NULL, sizeof(*fz), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, fz);
	set_handlers();
	have_nice = geteuid() == 0;
	for (i = 0; i < 2; i++) {
		shared_fd[i] = vaccel_open(devs[i].id);
		ASSERT_LE(0, shared_fd[i]);
	}
	ASSERT_EQ(0, vaccel_get_param(shared_fd[0], DRM_VACCEL_PARAM_CAPABILITIES, &dev_caps));
	TH_LOG("seed 0x%llx (VACCEL_FUZZ_SEED), %u threads, %s %llu%s, capabilities 0x%llx",
	       (unsigned long long)seed, threads, ms ? "for" : "each",
	       (unsigned long long)(ms ? ms / 1000 : nops), ms ? " s" : " operations",
	       (unsigned long long)dev_caps);

	workers = calloc(threads, sizeof(*workers));
	ASSERT_NE(NULL, workers);
	for (i = 0; i < threads; i++) {
		workers[i].idx = i;
		workers[i].seed = mix64(seed + i + 1);
		workers[i].until_ms = until;
	}
	for (i = 0; i < threads; i++)
		ASSERT_EQ(0, pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]));

	/* until the time is up, then until they finished (or hang) */
	for (;;) {
		usleep(100000);
		watchdog();
		if (until && vaccel_now_ms() >= until + 2000)
			atomic_store(&fz_stop, true);
		for (i = 0, done = 0; i < threads; i++) {
			if (!workers[i].joined &&
			    pthread_tryjoin_np(workers[i].thread, NULL) != EBUSY)
				workers[i].joined = true;
			done += workers[i].joined;
		}
		if (done == threads)
			break;
		if (vaccel_now_ms() - start > (ms ? ms : 120000) + 4 * 60000ULL) {
			summary();
			/* a thread stuck in the kernel: nothing more can be checked */
			TH_LOG("threads did not finish; giving up");
			_exit(KSFT_FAIL);
		}
	}
	for (i = 0; i < npool; i++)
		close(pool[i].fd);
	npool = 0;
	for (i = 0; i < 2; i++)
		close(shared_fd[i]);
	summary();
	for (i = 0; i < threads; i++)
		TH_LOG("thread %u: seed 0x%llx, %llu operations", i,
		       (unsigned long long)workers[i].seed, (unsigned long long)workers[i].op_no);

	/* every file, mapping and dma-buf is gone: so must their objects be */
	vaccel_counts_read(&now);
	EXPECT_EQ(self->counts.files,
		  vaccel_objects_wait("files", self->counts.files, FZ_SETTLE_MS));
	EXPECT_EQ(self->counts.bos, vaccel_objects_wait("bos", self->counts.bos, FZ_SETTLE_MS));
	EXPECT_EQ(self->counts.mappings,
		  vaccel_objects_wait("mappings", self->counts.mappings, FZ_SETTLE_MS));
	EXPECT_EQ(self->queues, vaccel_objects_wait("queues", self->queues, FZ_SETTLE_MS));
	for (i = 0; i < 2; i++) {
		fd = vaccel_open(devs[i].id);
		ASSERT_LE(0, fd);
		EXPECT_EQ(0, vaccel_memory_used_wait(fd, 0, FZ_SETTLE_MS))
			TH_LOG("vaccel%u: memory still charged", devs[i].id);
		close(fd);
	}
	EXPECT_EQ(0, atomic_load(&fz->failures)) {
		if (nops)
			TH_LOG("replay: vaccel_fuzz_test -t %s", _metadata->name);
		else
			TH_LOG("replay: VACCEL_FUZZ_SEED=0x%llx VACCEL_FUZZ_THREADS=%u; thread N alone: VACCEL_FUZZ_SEED=0x%llx+N VACCEL_FUZZ_THREADS=1",
			       (unsigned long long)seed, threads, (unsigned long long)seed);
	}
	free(workers);
	workers = NULL;
	munmap(fz, sizeof(*fz));
}

/*
 * A fixed seed on one thread for a fixed number of operations: the same
 * calls every time, so that a regression it catches reproduces.
 */
TEST_F_TIMEOUT(fuzz, smoke, 600)
{
	fz_run(_metadata, self, FZ_SMOKE_SEED, 1, 0, FZ_SMOKE_OPS);
}

static uint64_t run_seed, run_seconds;
static unsigned int run_threads;

/* The fuzzer proper; its timeout is set from VACCEL_FUZZ_SECONDS in main(). */
TEST_F_TIMEOUT(fuzz, run, 600)
{
	fz_run(_metadata, self, run_seed, run_threads, run_seconds * 1000, 0);
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	uint64_t x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || *end) {
		fprintf(stderr, "%s=%s is not a number\n", name, v);
		exit(KSFT_FAIL);
	}
	return x;
}

int main(int argc, char **argv)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	run_seed = env_u64("VACCEL_FUZZ_SEED",
			   mix64((uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec) ^ getpid());
	run_seconds = env_u64("VACCEL_FUZZ_SECONDS", FZ_SECONDS_DEFAULT);
	run_threads = env_u64("VACCEL_FUZZ_THREADS", FZ_THREADS_DEFAULT);
	cfg.trace = env_u64("VACCEL_FUZZ_TRACE", 0);
	if (!run_threads || run_threads > FZ_MAX_THREADS) {
		fprintf(stderr, "VACCEL_FUZZ_THREADS must be 1 to %u\n", FZ_MAX_THREADS);
		return KSFT_FAIL;
	}
	/* the harness kills a test after its timeout: the run, plus the finish */
	_fuzz_run_object->timeout = run_seconds + 300;
	return test_harness_run(argc, argv);
}
