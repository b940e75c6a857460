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

/* guc.c, compiled whole by the shards target: all but the shard parser */
FUZZ_UNREACHED(DecodeDateTime)
FUZZ_UNREACHED(DecodeSpecial)
FUZZ_UNREACHED(DefineCustomBoolVariable)
FUZZ_UNREACHED(DefineCustomIntVariable)
FUZZ_UNREACHED(DefineCustomStringVariable)
FUZZ_UNREACHED(GetConfigOption)
FUZZ_UNREACHED(GetCurrentTimestamp)
FUZZ_UNREACHED(MarkGUCPrefixReserved)
FUZZ_UNREACHED(ParseDateTime)
FUZZ_UNREACHED(SplitGUCList)
FUZZ_UNREACHED(format_elog_string)
FUZZ_UNREACHED(parse_int)
FUZZ_UNREACHED(pre_format_elog_string)
FUZZ_UNREACHED(tm2timestamp)

/*
 * lease.c, compiled whole by the etcd_answer target: the lease protocol
 * beyond reading answers; and the date and time printing of json.c
 */
FUZZ_UNREACHED(s_lock)
FUZZ_UNREACHED(idgen_keeper_raise_floors)
FUZZ_UNREACHED(idgen_registry_note_node_counters)
FUZZ_UNREACHED(idgen_registry_raise_node_counters)
FUZZ_UNREACHED(EncodeDateOnly)
FUZZ_UNREACHED(EncodeDateTime)
FUZZ_UNREACHED(EncodeSpecialDate)
FUZZ_UNREACHED(EncodeSpecialTimestamp)
FUZZ_UNREACHED(EncodeTimeOnly)
FUZZ_UNREACHED(j2date)
FUZZ_UNREACHED(time2tm)
FUZZ_UNREACHED(timetz2tm)

char	   *GUC_check_errdetail_string __attribute__((weak));
char	   *GUC_check_errmsg_string __attribute__((weak));
_Bool		process_shared_preload_libraries_in_progress __attribute__((weak));
