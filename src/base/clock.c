/*-------------------------------------------------------------------------
 *
 * base/clock.c
 *	  The clocks idgen reads.
 *
 * IDs carry wall-clock time (CLOCK_REALTIME), read fresh on every call:
 * never the transaction or statement timestamp, which would hand the same
 * millisecond to a whole statement.  Waits and deadlines are timed on a
 * monotonic clock so that a wall clock stepping while we sleep cannot
 * stretch or cut them: CLOCK_BOOTTIME where there is one (Linux), which
 * unlike CLOCK_MONOTONIC also counts a host's suspension, so that a node-id
 * lease's deadline passes while the host sleeps, as etcd's TTL does.
 *
 * On Linux both reads go through the vDSO and cost tens of nanoseconds,
 * with no system call.  The wall-clock read, being on the hot path, is
 * inline in idgen.h; this file holds the monotonic ones, used for waits
 * and for the keeper's measure of a counter generator's demand.  Tests
 * can stand the wall clock still with the test-only setting
 * idgen.test_clock (base/guc.c); the monotonic clocks always run.
 *
 * IDENTIFICATION
 *	  src/base/clock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "idgen.h"

#ifdef CLOCK_BOOTTIME
#define IDGEN_MONOTONIC_CLOCK CLOCK_BOOTTIME
#else
#define IDGEN_MONOTONIC_CLOCK CLOCK_MONOTONIC
#endif

int64
idgen_clock_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(IDGEN_MONOTONIC_CLOCK, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64
idgen_clock_monotonic_us(void)
{
	struct timespec ts;

	clock_gettime(IDGEN_MONOTONIC_CLOCK, &ts);
	return (int64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
