// SPDX-License-Identifier: GPL-2.0-only
/*
 * LD_PRELOAD shim for the debug-kernel test run: alarm(s) arms the timer for
 * s * $KSFT_TIMEOUT_SCALE seconds.
 *
 * The kselftest harness limits each test with alarm(t->timeout) (30 s unless
 * TEST_F_TIMEOUT says otherwise), and tests use alarm() for their own time
 * limits. Under the debug kernel (KASAN, lockdep, kmemleak, debugobjects) in
 * qemu TCG, everything runs several times slower, so tests/vm/kselftests
 * preloads this when KSFT_TIMEOUT_SCALE is set: a time limit stays a limit,
 * scaled to the slower kernel. alarm(0) still cancels.
 */
#include <limits.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

static unsigned int scale(void)
{
	const char *s = getenv("KSFT_TIMEOUT_SCALE");
	char *end;
	unsigned long v;

	if (!s)
		return 1;
	v = strtoul(s, &end, 10);
	if (end == s || *end || v < 1 || v > 1000)
		return 1;
	return (unsigned int)v;
}

unsigned int alarm(unsigned int seconds)
{
	unsigned int k = scale();
	unsigned long long want = (unsigned long long)seconds * k;
	struct itimerval new = { 0 }, old;

	if (want > INT_MAX)
		want = INT_MAX;
	new.it_value.tv_sec = (time_t)want;
	if (setitimer(ITIMER_REAL, &new, &old) < 0)
		return 0;
	/* remaining time of the previous alarm, in the caller's (unscaled) units */
	if (!old.it_value.tv_sec && !old.it_value.tv_usec)
		return 0;
	return (unsigned int)((old.it_value.tv_sec + (old.it_value.tv_usec ? 1 : 0) + k - 1) / k);
}
