/*-------------------------------------------------------------------------
 *
 * base/guc.c
 *	  idgen's configuration settings.
 *
 * idgen.node_id and idgen.epoch shape every ID the server issues, so they
 * are PGC_POSTMASTER: all backends of a running server agree on them
 * (see idgen_define_gucs for the library loaded without preloading).  The
 * clock policy (idgen.max_lead, idgen.max_wait) only bounds how far ahead
 * of the wall clock IDs may run and how long a call may sleep; changing it
 * on reload cannot produce a duplicate, so it is PGC_SIGHUP.
 *
 * The epoch is text ("a timestamp with time zone", which must state its
 * UTC offset: see idgen_epoch_has_offset) but is used as an integer
 * millisecond count on the hot path, so the assign hook keeps the parsed
 * value in idgen_epoch_unix_ms and idgen_epoch_ts.
 *
 * IDENTIFICATION
 *	  src/base/guc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <limits.h>

#include "miscadmin.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#include "compat.h"
#include "idgen.h"

#define IDGEN_DEFAULT_EPOCH "2024-01-01 00:00:00+00"

int			idgen_node_id = -1;
char	   *idgen_node_id_string = NULL;
bool		idgen_leases_on = false;
char	   *idgen_lease_endpoints = NULL;
char	   *idgen_lease_prefix = NULL;
int			idgen_lease_ttl_s = 10;
char	   *idgen_lease_ca_file = NULL;
char	   *idgen_lease_cert_file = NULL;
char	   *idgen_lease_key_file = NULL;
char	   *idgen_lease_user = NULL;
char	   *idgen_lease_password_file = NULL;
int			idgen_max_lead_ms = 2000;
int			idgen_max_wait_ms = 1000;
bool		idgen_counter_lead_on = true;
int			idgen_reservation_ms = 1000;
char	   *idgen_database = NULL;
char	   *idgen_shards_string = NULL;
char	   *idgen_epoch_string = NULL;
int64		idgen_epoch_unix_ms = 0;
TimestampTz idgen_epoch_ts = 0;
int			idgen_max_generators = 1024;
int			idgen_max_generator_shards = 8192;
#ifdef IDGEN_TEST_HOOKS
static char *idgen_test_clock_string = NULL;
int64		idgen_test_clock_unix_ms = 0;
#endif

/*
 * Is a word (a DTK_STRING field, lower-cased) a name of UTC itself, as
 * idgen_epoch_has_offset below accepts it?
 */
static bool
idgen_epoch_utc_name(const char *word)
{
	return strcmp(word, "z") == 0 || strcmp(word, "utc") == 0 ||
		strcmp(word, "gmt") == 0;
}

/*
 * Does an epoch, split into fields by ParseDateTime, state its UTC offset?
 *
 * Without an offset, timestamptz input reads the value in the "TimeZone"
 * of whichever process parses it, so one postgresql.conf line would mean
 * another epoch after a change of "TimeZone" (and every ID's time with it).
 * Zone names and abbreviations ("Europe/Paris", "EST") are no better: what
 * they mean depends on the time zone database, "timezone_abbreviations"
 * and, from PostgreSQL 18, on "TimeZone" again.  So we accept exactly two
 * forms, both fixed for good:
 *
 *	- a numeric offset: "+00", "-05", "+05:30", "+0530", as in
 *	  "2024-01-01 00:00:00+00" (ParseDateTime makes it a DTK_TZ field);
 *	- the name of UTC itself, "Z", "UTC" or "GMT" (any case), as in
 *	  "2024-01-01T00:00:00Z".  The caller checks that the parsed offset of
 *	  such a name really is zero, in case "timezone_abbreviations" says
 *	  otherwise.
 *
 * *utc_name tells which form was found.  Must run before DecodeDateTime,
 * which may rewrite fields.
 */
static bool
idgen_epoch_has_offset(char **field, const int *ftype, int nf, bool *utc_name)
{
	for (int i = 0; i < nf; i++)
	{
		if (ftype[i] == DTK_TZ)
		{
			*utc_name = false;
			return true;
		}
		/* ParseDateTime has lower-cased the fields */
		if (ftype[i] == DTK_STRING && idgen_epoch_utc_name(field[i]))
		{
			*utc_name = true;
			return true;
		}
	}
	return false;
}

static const char *const idgen_epoch_offset_problem =
"The epoch must state its UTC offset, as in \"2024-01-01 00:00:00+00\" (\"Z\", \"UTC\" and offsets such as \"+05:30\" work too); without one, or with a time zone name or abbreviation, its meaning would depend on settings such as \"TimeZone\".";

/*
 * Refuse, before DecodeDateTime sees them, the fields it could raise an
 * ERROR for: NULL if there are none, else the check hook's complaint.  The
 * epoch is parsed in a check hook, which must return its complaint: in the
 * postmaster, on a reload, an ERROR is FATAL and shuts the server down,
 * and catching one without a subtransaction is not safe in general.
 *
 * PostgreSQL 15's DecodeDateTime raises in two places, both for time zone
 * names (16 on return DTERR_BAD_TIMEZONE instead):
 *
 *	- a date field beginning with a letter, such as "Europe/Paris", once
 *	  the month and the day are known, is a zone name; one that pg_tzset
 *	  does not know raises.  So a date field not beginning with a digit is
 *	  refused unless every field before it is one that gives no month or
 *	  day (a time, a numeric offset, a day of the week, AM/PM, AD/BC, "at"
 *	  or "on"): "Jan-01-2024" still reads as a date.
 *	- a word that "timezone_abbreviations" makes a dynamic abbreviation
 *	  (one that stands for a zone) raises if the zone cannot be loaded
 *	  (FetchDynamicTimeZone).  Abbreviations are looked up before
 *	  DecodeSpecial's own words, so only words of DecodeSpecial ("jan",
 *	  "t", "epoch", "now", ...) and the names of UTC pass; the sets
 *	  PostgreSQL ships make none of them dynamic (a hand-written set that
 *	  made "utc" stand for a missing zone would still reach it).
 *
 * The epoch accepts neither zone names nor abbreviations
 * (idgen_epoch_has_offset), so what is refused here is refused with the
 * same complaint as before.
 */
static const char *
idgen_epoch_screen(char **field, const int *ftype, int nf)
{
	bool		date_given = false;

	for (int i = 0; i < nf; i++)
	{
		int			type;
		int			val;

		switch (ftype[i])
		{
			case DTK_DATE:
				if (!isdigit((unsigned char) field[i][0]) && date_given)
					return idgen_epoch_offset_problem;
				date_given = true;
				break;
			case DTK_STRING:
			case DTK_SPECIAL:
				if (idgen_epoch_utc_name(field[i]))
					break;
				type = DecodeSpecial(i, field[i], &val);
				if (type == UNKNOWN_FIELD)
					return idgen_epoch_offset_problem;
				if (type != DOW && type != AMPM && type != ADBC &&
					type != IGNORE_DTF)
					date_given = true;
				break;
			case DTK_TIME:
			case DTK_TZ:
				break;
			default:
				date_given = true;
				break;
		}
	}
	return NULL;
}

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
	bool		has_offset = false;
	bool		utc_name = false;

	dterr = ParseDateTime(str, workbuf, sizeof(workbuf), field, ftype,
						  MAXDATEFIELDS, &nf);
	if (dterr == 0)
	{
		const char *problem;

		has_offset = idgen_epoch_has_offset(field, ftype, nf, &utc_name);
		problem = idgen_epoch_screen(field, ftype, nf);
		if (problem != NULL)
			return problem;
		dterr = idgen_decode_datetime(field, ftype, nf, &dtype, &tt, &fsec, &tz);
	}
	if (dterr != 0 || dtype != DTK_DATE)
		return "The value must be a finite timestamp with time zone, such as \"2024-01-01 00:00:00+00\".";

	/*
	 * DecodeDateTime resolves "now", "today" and friends against the current
	 * time, which would move the epoch at every restart.  ParseDateTime has
	 * lower-cased the fields already.
	 */
	for (int i = 0; i < nf; i++)
	{
		if (ftype[i] == DTK_STRING &&
			(strcmp(field[i], "now") == 0 || strcmp(field[i], "today") == 0 ||
			 strcmp(field[i], "tomorrow") == 0 || strcmp(field[i], "yesterday") == 0))
			return "The epoch must be a fixed moment, not one relative to the current time.";
	}
	if (!has_offset || (utc_name && tz != 0))
		return idgen_epoch_offset_problem;
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

/*
 * The value postgresql.conf or the command line gave a custom setting
 * before the library defined it (a placeholder), or NULL.  Palloc'd copy.
 */
static char *
idgen_configured_value(const char *name)
{
	const char *raw = GetConfigOption(name, true, false);

	return raw ? pstrdup(raw) : NULL;
}

/*
 * When a custom setting is defined, a configured value that fails
 * validation only draws a WARNING and the default is used instead (see
 * define_custom_variable in base/guc.c).  For the node id and the epoch a
 * substituted default would issue IDs under the wrong node or epoch, so
 * while preloading we refuse to start instead.
 */
static void
idgen_refuse_substituted_default(const char *name, bool accepted)
{
	if (!accepted)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\"", name),
				 errdetail("idgen will not issue IDs with a default in place of the configured value; the warning above says what is wrong with it."),
				 errhint("Correct \"%s\" and start the server again.", name)));
}

/*
 * idgen.node_id: a number from -1 (unset) to IDGEN_SNOWFLAKE_MAX_NODE, or
 * "auto" (the keeper claims the lowest free id in etcd).  Sets *node_id.
 */
static bool
idgen_parse_node_id(const char *value, int *node_id)
{
	if (pg_strcasecmp(value, "auto") == 0)
	{
		*node_id = IDGEN_NODE_AUTO;
		return true;
	}
	return parse_int(value, node_id, 0, NULL) &&
		*node_id >= -1 && *node_id <= IDGEN_SNOWFLAKE_MAX_NODE;
}

static bool
idgen_check_node_id(char **newval, void **extra, GucSource source)
{
	int			node_id;

	if (!idgen_parse_node_id(*newval, &node_id))
	{
		/* an integer out of range is told as PostgreSQL tells it */
		if (pg_strcasecmp(*newval, "auto") != 0 &&
			parse_int(*newval, &node_id, 0, NULL))
			GUC_check_errmsg("%d is outside the valid range for parameter \"%s\" (%d .. %d)",
							 node_id, "idgen.node_id", -1, IDGEN_SNOWFLAKE_MAX_NODE);
		GUC_check_errdetail("\"idgen.node_id\" must be an integer from -1 (unset) to %d, or \"auto\".",
							IDGEN_SNOWFLAKE_MAX_NODE);
		return false;
	}
	*extra = idgen_guc_malloc(sizeof(int));
	if (*extra == NULL)
		return false;
	*(int *) *extra = node_id;
	return true;
}

static void
idgen_assign_node_id(const char *newval, void *extra)
{
	idgen_node_id = *(int *) extra;
}

/* idgen.lease_endpoints: a list of http(s) URLs of etcd; empty = off */
static bool
idgen_check_lease_endpoints(char **newval, void **extra, GucSource source)
{
	char	   *copy;
	List	   *list;
	ListCell   *lc;

#ifdef IDGEN_WITHOUT_LIBCURL
	if (*newval != NULL && (*newval)[0] != '\0')
	{
		GUC_check_errdetail("This idgen was built without libcurl, which node-id leases need to talk to etcd.");
		GUC_check_errhint("Build idgen with libcurl's development files installed (Debian: libcurl4-openssl-dev), or leave \"idgen.lease_endpoints\" empty.");
		return false;
	}
#endif
	copy = pstrdup(*newval);
	if (!SplitGUCList(copy, ',', &list))
	{
		GUC_check_errdetail("List syntax is invalid.");
		return false;
	}
	foreach(lc, list)
	{
		const char *url = lfirst(lc);

		if ((strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) ||
			strlen(url) > 200 || strpbrk(url, " \t\r\n\"") != NULL)
		{
			GUC_check_errdetail("Each endpoint must be an http:// or https:// URL of etcd's client port, such as \"http://127.0.0.1:2379\".");
			return false;
		}
	}
	return true;
}

static void
idgen_assign_lease_endpoints(const char *newval, void *extra)
{
	idgen_leases_on = newval != NULL && newval[0] != '\0';
}

/* idgen.lease_prefix: the etcd key prefix, "/" at both ends */
static bool
idgen_check_lease_prefix(char **newval, void **extra, GucSource source)
{
	const char *p = *newval;
	size_t		len = strlen(p);

	if (len < 1 || len > 200 || p[0] != '/' || p[len - 1] != '/' ||
		strpbrk(p, "\"\\") != NULL)
	{
		GUC_check_errdetail("The prefix must start and end with \"/\", as in \"/idgen/\" or \"/idgen/prod/\", and hold no quote or backslash.");
		return false;
	}
	for (; *p; p++)
		if ((unsigned char) *p < 0x20)
		{
			GUC_check_errdetail("The prefix must not hold control characters.");
			return false;
		}
	return true;
}

/*
 * idgen.shards: the instagram shards this server may issue IDs for, as a
 * bitmap of IDGEN_INSTAGRAM_NSHARDS bits.  Until the setting is assigned,
 * all shards are owned.
 */
static uint8 idgen_all_shards[IDGEN_INSTAGRAM_NSHARDS / 8];
const uint8 *idgen_owned_shards = idgen_all_shards;

/*
 * Parse "0-4095, 5000, 6000-6100" into a bitmap.  An empty list owns no
 * shard.  Returns NULL on success, else a sentence for GUC_check_errdetail.
 */
static const char *
idgen_parse_shards(const char *str, uint8 *bitmap)
{
	bool		owned[IDGEN_INSTAGRAM_NSHARDS];

	memset(bitmap, 0, IDGEN_INSTAGRAM_NSHARDS / 8);
	switch (idgen_parse_ranges(str, IDGEN_INSTAGRAM_MAX_SHARD, owned))
	{
		case IDGEN_RANGES_OK:
			break;
		case IDGEN_RANGES_SYNTAX:
			return "Give shard numbers or ranges separated by commas, such as \"0-4095, 5000\".";
		case IDGEN_RANGES_HALF:
			return "A range needs two shard numbers, such as \"0-4095\".";
		case IDGEN_RANGES_TOO_HIGH:
			return "Shards range from 0 to 8191.";
		case IDGEN_RANGES_BACKWARDS:
			return "A range must not end below its start.";
	}
	for (int s = 0; s < IDGEN_INSTAGRAM_NSHARDS; s++)
		if (owned[s])
			bitmap[s >> 3] |= 1 << (s & 7);
	return NULL;
}

static bool
idgen_check_shards(char **newval, void **extra, GucSource source)
{
	uint8		bitmap[IDGEN_INSTAGRAM_NSHARDS / 8];
	const char *problem = idgen_parse_shards(*newval, bitmap);

	if (problem != NULL)
	{
		GUC_check_errdetail("%s", problem);
		return false;
	}
	*extra = idgen_guc_malloc(sizeof(bitmap));
	if (*extra == NULL)
		return false;
	memcpy(*extra, bitmap, sizeof(bitmap));
	return true;
}

static void
idgen_assign_shards(const char *newval, void *extra)
{
	idgen_owned_shards = extra;
}

#ifdef IDGEN_TEST_HOOKS
/*
 * idgen.test_clock, for tests only: empty (the real clock), or a Unix time
 * in milliseconds at which idgen's wall clock (idgen_clock_unix_ms) stands
 * still in every process.  The TAP tests freeze the clock with libfaketime
 * too, which does not reach every process: on PostgreSQL 15 the
 * postmaster forks background workers, the keeper among them, from a
 * signal handler that interrupted libfaketime's select(), during which
 * libfaketime does not fake the clock, and the child never leaves it
 * (fake_clock in t/IdgenTest.pm tells more).  A setting read through the
 * one clock function reaches backends and keeper alike.  PGC_SIGHUP: one
 * value for the whole server, from postgresql.conf; hidden from SHOW ALL
 * and the sample file.
 *
 * It exists only in a test build ("make WITH_TEST_HOOKS=yes", as the
 * test scripts build): set on a server that issues real IDs it would
 * move every reservation to wherever it points.  Elsewhere the name is
 * reserved like every idgen.* name, so PostgreSQL refuses it.
 */
static bool
idgen_check_test_clock(char **newval, void **extra, GucSource source)
{
	int64		ms = 0;
	char	   *end;

	if (**newval != '\0')
	{
		errno = 0;
		ms = strtoi64(*newval, &end, 10);
		if (errno != 0 || *end != '\0' || ms <= 0)
		{
			GUC_check_errdetail("\"idgen.test_clock\" is empty, or a positive Unix time in milliseconds.");
			return false;
		}
	}
	*extra = idgen_guc_malloc(sizeof(int64));
	if (*extra == NULL)
		return false;
	*(int64 *) *extra = ms;
	return true;
}

static void
idgen_assign_test_clock(const char *newval, void *extra)
{
	idgen_test_clock_unix_ms = *(int64 *) extra;
}
#endif							/* IDGEN_TEST_HOOKS */

void
idgen_define_gucs(void)
{
	/*
	 * PostgreSQL only allows PGC_POSTMASTER settings to be defined while
	 * shared_preload_libraries is processed (later it is FATAL).  When the
	 * library is loaded on demand, by CREATE EXTENSION or a decoder call, the
	 * two fixed settings are defined as PGC_SIGHUP instead, so the decoders
	 * still see the configured epoch.  That is safe: without the preload the
	 * generators refuse to run, so no ID can be issued under a changed value.
	 */
	GucContext	fixed = process_shared_preload_libraries_in_progress ?
		PGC_POSTMASTER : PGC_SIGHUP;
	char	   *node_id_configured = idgen_configured_value("idgen.node_id");
	char	   *epoch_configured = idgen_configured_value("idgen.epoch");
	char	   *endpoints_configured = idgen_configured_value("idgen.lease_endpoints");
	char	   *prefix_configured = idgen_configured_value("idgen.lease_prefix");

	DefineCustomStringVariable("idgen.node_id",
							   "Node id (0..1023) embedded in every snowflake ID this server issues, or \"auto\".",
							   "Give every server, standbys included, its own node id. "
							   "-1 means unset: snowflake_id() then refuses to run. "
							   "\"auto\" claims the lowest free id in etcd (\"idgen.lease_endpoints\").",
							   &idgen_node_id_string,
							   "-1",
							   fixed,
							   0,
							   idgen_check_node_id, idgen_assign_node_id, NULL);

	DefineCustomStringVariable("idgen.lease_endpoints",
							   "etcd client URLs at which the keeper leases this server's node id; empty means no leases.",
							   "A comma-separated list, such as \"http://10.0.0.1:2379,http://10.0.0.2:2379\".",
							   &idgen_lease_endpoints,
							   "",
							   fixed,
							   /* etcd's addresses, like lease_error: pg_monitor's */
							   GUC_SUPERUSER_ONLY,
							   idgen_check_lease_endpoints, idgen_assign_lease_endpoints, NULL);

	DefineCustomStringVariable("idgen.lease_prefix",
							   "etcd key prefix under which node ids are leased.",
							   "Servers that must not share a node id use the same prefix; give each cluster its own, such as \"/idgen/prod/\".",
							   &idgen_lease_prefix,
							   "/idgen/",
							   fixed,
							   0,
							   idgen_check_lease_prefix, NULL, NULL);

	DefineCustomIntVariable("idgen.lease_ttl",
							"Time to live of the node-id lease in etcd.",
							"Generation under the node id stops when the lease is not renewed within this less a quarter of it.",
							&idgen_lease_ttl_s,
							10,
							2,
							3600,
							fixed,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	/*
	 * TLS and authentication with etcd.  Reloadable: the keeper hands them to
	 * libcurl at every request (a connection made under other settings is not
	 * reused), so certificates and passwords can be rotated without a
	 * restart.  A wrong value cannot produce a duplicate: etcd then refuses
	 * the renewals and generation stops at the lease's deadline.  Named after
	 * the server's own ssl_ca_file, ssl_cert_file and ssl_key_file.
	 */
	DefineCustomStringVariable("idgen.lease_ca_file",
							   "File of CA certificates that verify etcd's server certificate (https:// endpoints).",
							   "Empty means the system's trusted CAs.",
							   &idgen_lease_ca_file,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("idgen.lease_cert_file",
							   "File of the client certificate the keeper presents to etcd.",
							   "For an etcd started with --client-cert-auth.  Empty means none.",
							   &idgen_lease_cert_file,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("idgen.lease_key_file",
							   "File of the private key of \"idgen.lease_cert_file\".",
							   "Empty means the key is in the certificate's file.",
							   &idgen_lease_key_file,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("idgen.lease_user",
							   "etcd user as which the keeper authenticates; empty means none.",
							   "For an etcd with authentication enabled; the password is read from \"idgen.lease_password_file\".",
							   &idgen_lease_user,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	/*
	 * The password itself is never a setting: a value in postgresql.conf or
	 * postgresql.auto.conf is copied into base backups and shown to members
	 * of pg_read_all_settings.  Like libpq's passfile and the server's
	 * ssl_key_file, it lives in a file only the server's user can read.
	 */
	DefineCustomStringVariable("idgen.lease_password_file",
							   "File holding the password of \"idgen.lease_user\" (its first line).",
							   "It must not be readable by group or others.  Read at every authentication.",
							   &idgen_lease_password_file,
							   "",
							   PGC_SIGHUP,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);

	DefineCustomStringVariable("idgen.epoch",
							   "Moment from which ID timestamps count milliseconds.",
							   "A timestamp with an explicit UTC offset (\"+00\", \"Z\", \"UTC\", "
							   "\"+05:30\", ...), so that it means the same moment whatever "
							   "\"TimeZone\" says.  Must not change once IDs have been issued.",
							   &idgen_epoch_string,
							   IDGEN_DEFAULT_EPOCH,
							   fixed,
							   0,
							   idgen_check_epoch, idgen_assign_epoch, NULL);

	DefineCustomStringVariable("idgen.database",
							   "Database in which idgen keeps its durable reservation.",
							   "The keeper background worker connects to it and creates "
							   "the extension there if it is missing.",
							   &idgen_database,
							   "postgres",
							   fixed,
							   0,
							   NULL, NULL, NULL);

	DefineCustomIntVariable("idgen.max_generators",
							"How many named generators shared memory holds.",
							"Each takes about 5.5 kB; every name defined takes one, dropped or not, and a name created again with another definition takes a second one until the server restarts.",
							&idgen_max_generators,
							1024,
							1,
							4096,
							fixed,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("idgen.max_generator_shards",
							"How many shard generators named generators with a shard field share.",
							"A shard field of k bits takes 2^k of them, 128 bytes each.",
							&idgen_max_generator_shards,
							8192,
							0,
							1 << 20,
							fixed,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("idgen.reservation",
							"How far ahead of the clock each durable reservation reaches.",
							"Larger values mean fewer WAL flushes; after a crash, IDs "
							"resume up to this far ahead of the clock.",
							&idgen_reservation_ms,
							1000,
							10,
							600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	memset(idgen_all_shards, 0xFF, sizeof(idgen_all_shards));
	DefineCustomStringVariable("idgen.shards",
							   "Instagram shards this server issues IDs for, as ranges such as \"0-4095, 5000\".",
							   "instagram_id() refuses other shards, so that two servers never "
							   "issue IDs for the same shard.",
							   &idgen_shards_string,
							   "0-8191",
							   PGC_SIGHUP,
							   0,
							   idgen_check_shards, idgen_assign_shards, NULL);

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

	DefineCustomBoolVariable("idgen.counter_lead",
							 "Lets a counter generator hand out values beyond its durable reservation, made durable by the end of the statement that took them.",
							 "Off: a counter hands out only durably reserved values, and a caller that outruns the reservation waits for the keeper, as for values that leave the server before their statement ends.",
							 &idgen_counter_lead_on,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

#ifdef IDGEN_TEST_HOOKS
	DefineCustomStringVariable("idgen.test_clock",
							   "For tests only: freezes idgen's wall clock at this Unix time in milliseconds.",
							   "Empty means the real clock.  Never set it on a server that issues real IDs.",
							   &idgen_test_clock_string,
							   "",
							   PGC_SIGHUP,
							   GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							   idgen_check_test_clock, idgen_assign_test_clock, NULL);
#endif

	MarkGUCPrefixReserved("idgen");

	if (fixed == PGC_POSTMASTER)
	{
		int			node_id;

		if (node_id_configured)
			idgen_refuse_substituted_default("idgen.node_id",
											 idgen_parse_node_id(node_id_configured, &node_id) &&
											 node_id == idgen_node_id);
		if (epoch_configured)
			idgen_refuse_substituted_default("idgen.epoch",
											 strcmp(epoch_configured, idgen_epoch_string) == 0);
		/* a bad endpoint list must not quietly switch the leases off */
		if (endpoints_configured)
			idgen_refuse_substituted_default("idgen.lease_endpoints",
											 strcmp(endpoints_configured, idgen_lease_endpoints) == 0);
		if (prefix_configured)
			idgen_refuse_substituted_default("idgen.lease_prefix",
											 strcmp(prefix_configured, idgen_lease_prefix) == 0);
	}
}
