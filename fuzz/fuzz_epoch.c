/*-------------------------------------------------------------------------
 *
 * fuzz_epoch.c
 *	  libFuzzer target: the text of idgen.epoch (src/base/guc.c).
 *
 * The parser is static to guc.c, so this target compiles that file
 * itself; PostgreSQL's own date and time parser, which it calls, comes
 * from the server's bitcode (datetime.c, timestamp.c and date.c of the
 * installed PostgreSQL, compiled without instrumentation: coverage
 * guides the fuzzer through idgen's code only).  The time zone database
 * is not loaded: the session's "TimeZone" is a fixed UTC offset that the
 * target sets, and zone names are unknown.
 *
 * The input is the setting's value.  A value the parser accepts must be:
 *
 *	- the same moment whatever the fixed offset standing for "TimeZone"
 *	  (UTC, +05:30, -08:00), and accepted under each; a value it refuses
 *	  is refused under each;
 *	- a whole millisecond that timestamptz holds;
 *	- printed in ISO 8601 with "+00" (as "2024-01-01 00:00:00.000+00",
 *	  "BC" for years before 1), parsed again to the same moment.
 *
 * IDENTIFICATION
 *	  fuzz/fuzz_epoch.c
 *
 *-------------------------------------------------------------------------
 */
#include "../src/base/guc.c"

#include "pgtime.h"

#include "fuzz.h"

/* ----- what PostgreSQL's date and time code needs from the backend ----- */

/* "TimeZone": a zone without daylight saving, fuzz_gmtoff seconds east */
static long fuzz_gmtoff = 0;
static char fuzz_zone[8192];
pg_tz	   *session_timezone = (pg_tz *) fuzz_zone;
int			DateOrder = DATEORDER_MDY;

int
pg_next_dst_boundary(const pg_time_t *timep, long int *before_gmtoff,
					 int *before_isdst, pg_time_t *boundary,
					 long int *after_gmtoff, int *after_isdst, const pg_tz *tz)
{
	*before_gmtoff = fuzz_gmtoff;
	*before_isdst = 0;
	return 0;
}

bool
pg_interpret_timezone_abbrev(const char *abbrev, const pg_time_t *timep,
							 long int *gmtoff, int *isdst, const pg_tz *tz)
{
	return false;
}

struct pg_tm *
pg_localtime(const pg_time_t *timep, const pg_tz *tz)
{
	static struct pg_tm result;
	time_t		t = (time_t) (*timep + fuzz_gmtoff);
	struct tm	tm;

	if (gmtime_r(&t, &tm) == NULL)
		return NULL;
	result.tm_sec = tm.tm_sec;
	result.tm_min = tm.tm_min;
	result.tm_hour = tm.tm_hour;
	result.tm_mday = tm.tm_mday;
	result.tm_mon = tm.tm_mon;
	result.tm_year = tm.tm_year;
	result.tm_wday = tm.tm_wday;
	result.tm_yday = tm.tm_yday;
	result.tm_isdst = 0;
	result.tm_gmtoff = fuzz_gmtoff;
	result.tm_zone = "FUZZ";
	return &result;
}

pg_tz *
pg_tzset(const char *tzname)
{
	return NULL;				/* no time zone database */
}

/* a fixed "now", for the relative words the parser refuses afterwards */
TimestampTz
GetCurrentTransactionStartTimestamp(void)
{
	return INT64CONST(820454400000000);	/* 2026-01-01 00:00:00+00 */
}

unsigned char
pg_tolower(unsigned char ch)
{
	return (ch >= 'A' && ch <= 'Z') ? ch + 'a' - 'A' : ch;
}

unsigned char
pg_toupper(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') ? ch - ('a' - 'A') : ch;
}

/* as src/common/string.c */
int
strtoint(const char *pg_restrict str, char **pg_restrict endptr, int base)
{
	long		val;

	val = strtol(str, endptr, base);
	if (val != (int) val)
		errno = ERANGE;
	return (int) val;
}

/* ----- the target ----- */

static const char *
parse_under(const char *in, long gmtoff, TimestampTz *result)
{
	fuzz_gmtoff = gmtoff;
	return idgen_parse_epoch(in, result);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long offsets[] = {5 * 3600 + 1800, -8 * 3600};
	char	   *in;
	TimestampTz epoch;
	const char *problem;
	struct pg_tm tm;
	fsec_t		fsec;
	char		printed[128];
	TimestampTz again;

	if (size > MAXDATELEN)
		return -1;
	in = fuzz_cstring(data, size);
	if (in == NULL)
		return -1;

	problem = parse_under(in, 0, &epoch);
	for (int i = 0; i < lengthof(offsets); i++)
	{
		TimestampTz other;
		const char *other_problem = parse_under(in, offsets[i], &other);

		FUZZ_CHECK((problem == NULL) == (other_problem == NULL),
				   "\"%s\" is %s under UTC, %s under UTC%+ld s: %s", in,
				   problem ? "refused" : "accepted",
				   other_problem ? "refused" : "accepted", offsets[i],
				   problem ? problem : other_problem);
		FUZZ_CHECK(problem != NULL || other == epoch,
				   "\"%s\" is " INT64_FORMAT " under UTC, " INT64_FORMAT
				   " under UTC%+ld s", in, epoch, other, offsets[i]);
	}
	fuzz_gmtoff = 0;
	if (problem != NULL)
	{
		fuzz_reset();
		return 0;
	}

	FUZZ_CHECK(IS_VALID_TIMESTAMP(epoch) && epoch % 1000 == 0,
			   "\"%s\" accepted as " INT64_FORMAT, in, epoch);
	FUZZ_CHECK(timestamp2tm(epoch, NULL, &tm, &fsec, NULL, NULL) == 0,
			   "\"%s\" accepted as " INT64_FORMAT ", which has no date", in, epoch);
	snprintf(printed, sizeof(printed), "%04d-%02d-%02d %02d:%02d:%02d.%03d+00%s",
			 tm.tm_year > 0 ? tm.tm_year : -(tm.tm_year - 1), tm.tm_mon, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (fsec / 1000),
			 tm.tm_year > 0 ? "" : " BC");
	problem = parse_under(printed, 0, &again);
	FUZZ_CHECK(problem == NULL && again == epoch,
			   "\"%s\" is " INT64_FORMAT ", printed \"%s\", which is %s " INT64_FORMAT,
			   in, epoch, printed, problem ? problem : "", problem ? 0 : again);
	fuzz_reset();
	return 0;
}
