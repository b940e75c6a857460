/*-------------------------------------------------------------------------
 *
 * fuzz_clock.c
 *	  libFuzzer target: a named generator's epoch and unit, and the range
 *	  of ticks they give a layout (src/base/layout.c).
 *
 * The input is binary: an epoch (timestamptz, microseconds), a unit
 * (interval: microseconds, days, months), a tick, and a byte choosing a
 * time layout; missing bytes are zero.  Checked:
 *
 *	- a unit is accepted exactly when it is a whole number of milliseconds
 *	  from 1 ms to 1 day with no months (computed here in 128 bits), and
 *	  is then that many milliseconds; otherwise 22023;
 *	- an infinite epoch is refused with 22008; a finite one becomes the
 *	  Unix millisecond it falls in, which converts back to at most the
 *	  epoch, less than a millisecond before it;
 *	- with that epoch and unit a layout's tick limit is at least 1; every
 *	  tick below it has a time that timestamptz holds, at epoch + tick *
 *	  unit exactly, and fits the time field below the sign bit; the limit
 *	  is the first tick for which one of these fails (nothing is given
 *	  away), and it and every tick above are refused with 22008.
 *
 * IDENTIFICATION
 *	  fuzz/fuzz_clock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "datatype/timestamp.h"
#include "utils/elog.h"

#include "idgen.h"
#include "fuzz.h"

typedef __int128 int128_t;

typedef struct FuzzClockInput
{
	int64		epoch;
	int64		unit_time;
	int32		unit_day;
	int32		unit_month;
	uint64		tick;
	uint8		layout;
} FuzzClockInput;

static const char *const layouts[] = {
	"snowflake", "twitter", "instagram", "discord", "sonyflake", "tsid", "js53",
	"time:63", "time:1 seq:63", "time:62 x:1", "time:2", "time:20 seq:12",
	"time:32 node:10 seq:21", "time:50 random:13", "time:44 shard:8 seq:12",
	"time:40 seq:12 random:12",
};

/* Is Unix ms a time timestamptz holds? */
static bool
valid_unix_ms(int128_t ms)
{
	int128_t	ts = (ms - IDGEN_UNIX_TO_PG_MS) * 1000;

	return ts >= MIN_TIMESTAMP && ts < END_TIMESTAMP;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzClockInput in;
	Interval	unit;
	int128_t	usecs;
	bool		unit_ok;
	volatile int32 unit_ms = 0;
	volatile int64 epoch_ms = 0;
	TimestampTz back;
	IdgenSpec	spec;
	bool		epoch_given;
	bool		unit_given;
	IdgenProblem problem;
	const IdgenField *t;
	int			eff_bits;
	int128_t	cap;
	int64		limit;
	volatile int64 at = 0;

	if (size > sizeof(in))
		return -1;
	memset(&in, 0, sizeof(in));
	memcpy(&in, data, size);

	/* the unit */
	unit.time = in.unit_time;
	unit.day = in.unit_day;
	unit.month = in.unit_month;
	usecs = (int128_t) in.unit_day * USECS_PER_DAY + in.unit_time;
	unit_ok = in.unit_month == 0 && usecs % 1000 == 0 && usecs >= 1000 &&
		usecs <= USECS_PER_DAY;
	if (FUZZ_TRY(unit_ms = idgen_interval_to_unit_ms(&unit)))
		FUZZ_CHECK(unit_ok && (int128_t) unit_ms * 1000 == usecs,
				   "unit (%d months, %d days, " INT64_FORMAT " us) taken as %d ms",
				   in.unit_month, in.unit_day, in.unit_time, unit_ms);
	else
	{
		FUZZ_CHECK(!unit_ok && fuzz_last_sqlstate == ERRCODE_INVALID_PARAMETER_VALUE,
				   "unit (%d months, %d days, " INT64_FORMAT " us) refused with %s: %s",
				   in.unit_month, in.unit_day, in.unit_time,
				   unpack_sql_state(fuzz_last_sqlstate), fuzz_last_message);
		unit_ms = 1 + (int32) (in.tick % USECS_PER_DAY / 1000);
	}

	/* the epoch */
	if (TIMESTAMP_NOT_FINITE(in.epoch))
	{
		FUZZ_CHECK(!FUZZ_TRY(idgen_epoch_to_unix_ms(in.epoch)) &&
				   fuzz_last_sqlstate == ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
				   "infinite epoch " INT64_FORMAT " not refused with 22008", in.epoch);
		fuzz_reset();
		return 0;
	}
	/* timestamptz input holds no other value */
	if (!IS_VALID_TIMESTAMP(in.epoch))
		in.epoch = (int64) ((uint64) MIN_TIMESTAMP +
							(uint64) in.epoch %
							((uint64) END_TIMESTAMP - (uint64) MIN_TIMESTAMP));
	FUZZ_CHECK(FUZZ_TRY(epoch_ms = idgen_epoch_to_unix_ms(in.epoch)),
			   "epoch " INT64_FORMAT " refused: %s", in.epoch, fuzz_last_message);
	back = idgen_unix_ms_to_timestamptz(epoch_ms);
	FUZZ_CHECK(back <= in.epoch && in.epoch - back < 1000 &&
			   idgen_timestamptz_to_unix_ms(back) == epoch_ms,
			   "epoch " INT64_FORMAT " is Unix ms " INT64_FORMAT ", which is " INT64_FORMAT,
			   in.epoch, epoch_ms, back);

	/* a layout under that clock */
	FUZZ_CHECK(idgen_parse_layout_soft(layouts[in.layout % lengthof(layouts)], &spec,
									   &epoch_given, &unit_given, &problem),
			   "layout \"%s\" refused: %s", layouts[in.layout % lengthof(layouts)],
			   problem.message);
	idgen_spec_set_clock(&spec, epoch_ms, unit_ms);
	t = &spec.fields[spec.time_field];
	eff_bits = t->bits - (spec.width == 64 ? 1 : 0);
	cap = eff_bits >= 63 ? PG_INT64_MAX : (int128_t) 1 << eff_bits;
	limit = spec.tick_limit;

	FUZZ_CHECK(limit >= 1 && limit <= cap,
			   "\"%s\", epoch " INT64_FORMAT ", unit %d: tick limit " INT64_FORMAT,
			   idgen_spec_text(&spec), epoch_ms, unit_ms, limit);
	FUZZ_CHECK(FUZZ_TRY(at = idgen_spec_tick_unix_ms(&spec, (uint64) limit - 1)),
			   "\"%s\": last tick " INT64_FORMAT " refused: %s", idgen_spec_text(&spec),
			   limit - 1, fuzz_last_message);
	FUZZ_CHECK(at == (int128_t) epoch_ms + (int128_t) (limit - 1) * unit_ms &&
			   valid_unix_ms(at),
			   "\"%s\", epoch " INT64_FORMAT ", unit %d: last tick at " INT64_FORMAT,
			   idgen_spec_text(&spec), epoch_ms, unit_ms, at);
	FUZZ_CHECK(limit == cap ||
			   !valid_unix_ms((int128_t) epoch_ms + (int128_t) limit * unit_ms),
			   "\"%s\", epoch " INT64_FORMAT ", unit %d: tick " INT64_FORMAT
			   " refused but representable", idgen_spec_text(&spec), epoch_ms,
			   unit_ms, limit);
	FUZZ_CHECK(!FUZZ_TRY(idgen_spec_tick_unix_ms(&spec, (uint64) limit)) &&
			   fuzz_last_sqlstate == ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
			   "\"%s\": tick limit " INT64_FORMAT " not refused with 22008",
			   idgen_spec_text(&spec), limit);

	/* any tick */
	if (FUZZ_TRY(at = idgen_spec_tick_unix_ms(&spec, in.tick)))
		FUZZ_CHECK(in.tick < (uint64) limit &&
				   at == (int128_t) epoch_ms + (int128_t) in.tick * unit_ms,
				   "\"%s\": tick " UINT64_FORMAT " at " INT64_FORMAT,
				   idgen_spec_text(&spec), in.tick, at);
	else
		FUZZ_CHECK(in.tick >= (uint64) limit &&
				   fuzz_last_sqlstate == ERRCODE_DATETIME_VALUE_OUT_OF_RANGE,
				   "\"%s\": tick " UINT64_FORMAT " below the limit refused: %s",
				   idgen_spec_text(&spec), in.tick, fuzz_last_message);

	fuzz_reset();
	return 0;
}
