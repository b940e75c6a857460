/*-------------------------------------------------------------------------
 *
 * guc.c
 *	  idgen's configuration settings.
 *
 * idgen.node_id and idgen.epoch shape every ID the server issues, so they
 * are PGC_POSTMASTER: all backends of a running server agree on them.  The
 * clock policy (idgen.max_lead, idgen.max_wait) only bounds how far ahead
 * of the wall clock IDs may run and how long a call may sleep; changing it
 * on reload cannot produce a duplicate, so it is PGC_SIGHUP.
 *
 * The epoch is text ("a timestamp with time zone") but is used as an
 * integer millisecond count on the hot path, so the assign hook keeps the
 * parsed value in idgen_epoch_unix_ms and idgen_epoch_ts.
 *
 * IDENTIFICATION
 *	  src/guc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "idgen.h"

#define IDGEN_DEFAULT_EPOCH "2024-01-01 00:00:00+00"

int			idgen_node_id = -1;
int			idgen_max_lead_ms = 2000;
int			idgen_max_wait_ms = 1000;
char	   *idgen_epoch_string = NULL;
int64		idgen_epoch_unix_ms = 0;
TimestampTz idgen_epoch_ts = 0;

/*
 * Parse an epoch string the way timestamptz input does, without throwing.
 * Returns NULL on success, else a sentence for GUC_check_errdetail.
 */
static const char *
idgen_parse_epoch(const char *str, TimestampTz *result)
{
	char		workbuf[MAXDATELEN + MAXDATEFIELDS];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype;
	int			tz;
	struct pg_tm tt;
	fsec_t		fsec;
	int			dterr;

	dterr = ParseDateTime(str, workbuf, sizeof(workbuf), field, ftype,
						  MAXDATEFIELDS, &nf);
	if (dterr == 0)
		dterr = idgen_decode_datetime(field, ftype, nf, &dtype, &tt, &fsec,
									  &tz);
	if (dterr != 0 || dtype != DTK_DATE)
		return "The value must be a finite timestamp with time zone, such as \"2024-01-01 00:00:00+00\".";
	if (tm2timestamp(&tt, fsec, &tz, result) != 0)
		return "The timestamp is out of range.";
	if (*result % 1000 != 0)
		return "The epoch must be a whole millisecond.";
	return NULL;
}

static bool
idgen_check_epoch(char **newval, void **extra, GucSource source)
{
	TimestampTz epoch;
	TimestampTz now;
	const char *problem;

	problem = idgen_parse_epoch(*newval, &epoch);
	if (problem != NULL)
	{
		GUC_check_errdetail("%s", problem);
		return false;
	}

	/*
	 * An epoch in the future would make every generator fail, and one so old
	 * that even the longer snowflake range is used up can never work.  Both
	 * are configuration mistakes, best caught before IDs are needed.  (The
	 * generators re-check against the live clock on every call.)
	 */
	now = GetCurrentTimestamp();
	if (epoch > now)
	{
		GUC_check_errdetail("The epoch %s is in the future; IDs count milliseconds since the epoch.",
							*newval);
		return false;
	}
	if ((now - epoch) / 1000 >= IDGEN_SNOWFLAKE_MS_LIMIT)
	{
		GUC_check_errdetail("More than 2^41 milliseconds have passed since the epoch %s, so no layout can issue IDs.",
							*newval);
		return false;
	}
	return true;
}

static void
idgen_assign_epoch(const char *newval, void *extra)
{
	TimestampTz epoch;

	/* the check hook has validated newval, so this cannot fail */
	if (idgen_parse_epoch(newval, &epoch) != NULL)
		elog(ERROR, "idgen.epoch \"%s\" failed to parse after validation",
			 newval);
	idgen_epoch_ts = epoch;
	idgen_epoch_unix_ms = epoch / 1000 + IDGEN_UNIX_TO_PG_MS;
}

void
idgen_define_gucs(void)
{
	DefineCustomIntVariable("idgen.node_id",
							"Node id (0..1023) embedded in every snowflake ID this server issues.",
							"Give every server, standbys included, its own node id. "
							"-1 means unset: snowflake_id() then refuses to run.",
							&idgen_node_id,
							-1,
							-1,
							IDGEN_SNOWFLAKE_MAX_NODE,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomStringVariable("idgen.epoch",
							   "Moment from which ID timestamps count milliseconds.",
							   "Must not change once IDs have been issued.",
							   &idgen_epoch_string,
							   IDGEN_DEFAULT_EPOCH,
							   PGC_POSTMASTER,
							   0,
							   idgen_check_epoch, idgen_assign_epoch, NULL);

	DefineCustomIntVariable("idgen.max_lead",
							"How far IDs may run ahead of the wall clock.",
							"Covers bursts beyond a layout's per-millisecond capacity and "
							"small backward clock steps without waiting.",
							&idgen_max_lead_ms,
							2000,
							0,
							3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("idgen.max_wait",
							"How long a generator call may sleep for the wall clock to catch up.",
							"Beyond this the call fails instead of blocking.",
							&idgen_max_wait_ms,
							1000,
							0,
							60 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("idgen");
}
