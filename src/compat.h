/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  The one place where idgen adapts to PostgreSQL major versions.
 *
 * idgen supports PostgreSQL 15 through 18.  Every difference between those
 * versions that the code depends on is bridged here, so the rest of the
 * source reads as if there were a single server version.
 *
 * IDENTIFICATION
 *	  src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_COMPAT_H
#define IDGEN_COMPAT_H

#include "catalog/pg_extension.h"
#include "common/jsonapi.h"
#include "utils/acl.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/wait_event.h"

#if PG_VERSION_NUM < 150000
#error "idgen requires PostgreSQL 15 or later"
#endif

/*
 * A function that never returns: PostgreSQL 18 replaced the suffix
 * pg_attribute_noreturn() by the prefix pg_noreturn (C11 _Noreturn).  The
 * GCC attribute behind the old macro may stand first too, so one prefix
 * serves every version.
 */
#if PG_VERSION_NUM >= 180000
#define IDGEN_NORETURN pg_noreturn
#else
#define IDGEN_NORETURN pg_attribute_noreturn()
#endif

/*
 * PostgreSQL 18 lets a module report its name and version.
 */
#if PG_VERSION_NUM >= 180000
#define IDGEN_MODULE_MAGIC PG_MODULE_MAGIC_EXT(.name = "idgen", .version = "1.1")
#else
#define IDGEN_MODULE_MAGIC PG_MODULE_MAGIC
#endif

/*
 * PostgreSQL 16 added a DateTimeErrorExtra argument to DecodeDateTime().
 * We only need the error code, so the extra is local and discarded.
 */
static inline int
idgen_decode_datetime(char **field, int *ftype, int nf, int *dtype,
					  struct pg_tm *tm, fsec_t *fsec, int *tzp)
{
#if PG_VERSION_NUM >= 160000
	DateTimeErrorExtra extra;

	return DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp, &extra);
#else
	return DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp);
#endif
}

/*
 * A lexer over a JSON text, de-escaping strings as jsonb's input function
 * does.  PostgreSQL 17 gave makeJsonLexContextCstringLen a context to fill
 * (NULL: palloc one) and a const text.
 */
static inline JsonLexContext *
idgen_json_lex_context(const char *json, int len, int encoding)
{
#if PG_VERSION_NUM >= 170000
	return makeJsonLexContextCstringLen(NULL, json, len, encoding, true);
#else
	return makeJsonLexContextCstringLen(unconstify(char *, json), len, encoding,
										true);
#endif
}

/*
 * A semantic action of pg_parse_json: from PostgreSQL 16 on it returns
 * JSON_SUCCESS (or an error that stops the parse), in 15 nothing.  An
 * action is declared "static IDGEN_JSON_ACTION" and ends with "return
 * IDGEN_JSON_ACTION_DONE;".
 */
#if PG_VERSION_NUM >= 160000
#define IDGEN_JSON_ACTION JsonParseErrorType
#define IDGEN_JSON_ACTION_DONE JSON_SUCCESS
#else
#define IDGEN_JSON_ACTION void
#define IDGEN_JSON_ACTION_DONE
#endif

/*
 * A GUC check hook's "extra" is freed by the GUC machinery: with free() up
 * to PostgreSQL 15, with guc_free() (its own memory context) from 16 on.
 * Returns NULL when out of memory, which the check hook reports.
 */
static inline void *
idgen_guc_malloc(size_t size)
{
#if PG_VERSION_NUM >= 160000
	return guc_malloc(LOG, size);
#else
	return malloc(size);
#endif
}

/*
 * Wait events.  From PostgreSQL 17 on an extension names its own, so that
 * pg_stat_activity tells its waits apart; before, all of them show as
 * "Extension".  A name is registered once per backend (it takes a lock and
 * a shared hash lookup), which is why callers keep the result in *cache;
 * only waiting paths ask, never the hot path.
 */
static inline uint32
idgen_wait_event(const char *name, uint32 *cache)
{
#if PG_VERSION_NUM >= 170000
	if (*cache == 0)
		*cache = WaitEventExtensionNew(name);
	return *cache;
#else
	return PG_WAIT_EXTENSION;
#endif
}

/*
 * Whether synchronous standbys are in force, as the walsenders see it
 * (set by the checkpointer from synchronous_standby_names).  The minor
 * releases of May 2025 (13.21, 14.18, 15.13, 16.9, 17.5; 18 from the
 * start) replaced the flag sync_standbys_defined (a bool) by the bits of
 * sync_standbys_status (SYNC_STANDBY_INIT 1, SYNC_STANDBY_DEFINED 2), in
 * the same byte.  A build against one minor's headers runs on another's
 * server, so the byte is read whatever its name here and read as the
 * running server's version says (idgen_sync_standbys_defined, keeper/main.c).
 * Caller includes replication/walsender_private.h and holds SyncRepLock.
 */
#ifdef SYNC_STANDBY_DEFINED
#define IDGEN_SYNC_STANDBYS_BYTE(ctl) idgen_byte_at(&(ctl)->sync_standbys_status)
#else
#define IDGEN_SYNC_STANDBYS_BYTE(ctl) idgen_byte_at(&(ctl)->sync_standbys_defined)
#endif
StaticAssertDecl(sizeof(bool) == 1, "the flag and the bits share one byte");

/*
 * The byte at p as the server wrote it.  Read through a bool, a compiler
 * may assume 0 or 1 and fold "& 2" away: read it as a byte.
 */
static inline uint8
idgen_byte_at(const void *p)
{
	return *(const volatile uint8 *) p;
}

/*
 * Does a server of version version_num (server_version_num) keep the bits
 * of sync_standbys_status in that byte, rather than the bool?
 */
static inline bool
idgen_sync_standbys_bits(int version_num)
{
	switch (version_num / 10000)
	{
		case 13:
			return version_num >= 130021;
		case 14:
			return version_num >= 140018;
		case 15:
			return version_num >= 150013;
		case 16:
			return version_num >= 160009;
		case 17:
			return version_num >= 170005;
		default:
			return version_num >= 180000;
	}
}

/* The byte read as a server of version_num writes it. */
static inline bool
idgen_sync_standbys_defined(uint8 byte, int version_num)
{
	if (idgen_sync_standbys_bits(version_num))
		return (byte & 2) != 0; /* SYNC_STANDBY_DEFINED */
	return byte != 0;
}

/*
 * PostgreSQL 18 dropped ExecutorRun's execute_once argument.  A hook
 * declares its parameters with IDGEN_EXECUTOR_RUN_PARAMS and passes them
 * on with IDGEN_EXECUTOR_RUN_ARGS.
 */
#if PG_VERSION_NUM >= 180000
#define IDGEN_EXECUTOR_RUN_PARAMS \
	QueryDesc *queryDesc, ScanDirection direction, uint64 count
#define IDGEN_EXECUTOR_RUN_ARGS queryDesc, direction, count
#else
#define IDGEN_EXECUTOR_RUN_PARAMS \
	QueryDesc *queryDesc, ScanDirection direction, uint64 count, bool execute_once
#define IDGEN_EXECUTOR_RUN_ARGS queryDesc, direction, count, execute_once
#endif

#endif							/* IDGEN_COMPAT_H */
