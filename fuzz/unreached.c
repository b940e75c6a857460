/*-------------------------------------------------------------------------
 *
 * unreached.c
 *	  Backend functions that the compiled files mention but no fuzzed path
 *	  calls.
 *
 * Each aborts if called, so that a target wandering into one says so
 * instead of doing nothing.  Weak, so that a target may define a real one.
 * No PostgreSQL header is included: the declarations would not match.
 *
 * IDENTIFICATION
 *	  fuzz/unreached.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_UNREACHED(name) \
void name(void) __attribute__((weak)); \
void \
name(void) \
{ \
	fprintf(stderr, "idgen fuzz: %s called, which the stubs do not provide\n", #name); \
	abort(); \
}

/* layout.c: the jsonb decoder and its timestamps */
FUZZ_UNREACHED(jsonb_in)
FUZZ_UNREACHED(DirectFunctionCall1Coll)
FUZZ_UNREACHED(timestamp2tm)
