/*-------------------------------------------------------------------------
 *
 * base/decode.c
 *	  Decoders (ID -> parts) and builders (parts -> ID) for both layouts.
 *
 * These read no clock and no shared state: the result depends only on the
 * arguments and on idgen.epoch, which is fixed for the life of the server
 * (PGC_POSTMASTER) and guarded against changes once IDs exist.  That is
 * what lets them be IMMUTABLE, usable in indexes and generated columns, and
 * work without shared_preload_libraries.  Another server (a restore
 * target, a logical-replication subscriber) may run with another epoch,
 * and would compute other times from the same IDs: the time decoders have
 * a form that takes the epoch as an argument and reads no setting at all,
 * the one to use in an index or a stored column that may travel.
 *
 * Builders exist for range scans on the primary key:
 *		WHERE id >= snowflake_id_from_time(t1) AND id < snowflake_id_from_time(t2)
 * selects exactly the IDs whose time is in [t1, t2), because the timestamp
 * is the most significant field and *_from_time() gives the smallest ID of
 * a millisecond.
 *
 * IDENTIFICATION
 *	  src/base/decode.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "common/int.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/regproc.h"
#include "utils/timestamp.h"

#include "idgen.h"

/*
 * The moment of a millisecond since the epoch.  Unlike the other direction
 * (idgen_timestamptz_to_ms) this cannot overflow: ms is within 0..2^41
 * wherever it comes from (a decoded ID's time field, or a layout's
 * tick_limit), and the check hook of idgen.epoch only accepts an epoch in
 * the past, so the result lies at most about 70 years after a moment
 * before the server started.
 */
TimestampTz
idgen_ms_to_timestamptz(int64 ms)
{
	return idgen_epoch_ts + ms * 1000;
}

/*
 * Report a time a layout cannot represent.  timestamptz_to_str() returns a
 * static buffer, so each result is copied before the next call.
 */
static void
idgen_report_time_range(const IdgenLayout *layout, const char *funcname)
{
	char	   *from = pstrdup(timestamptz_to_str(idgen_epoch_ts));
	char	   *to = pstrdup(timestamptz_to_str(idgen_ms_to_timestamptz(layout->tick_limit)));

	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("timestamp is out of range for %s()", funcname),
			 errdetail("The %s layout covers %s to %s.", layout->name, from, to)));
}

/*
 * Milliseconds since the epoch of ts, truncated, for a builder; throws if
 * the layout cannot represent that moment.
 *
 * "ts - epoch" itself can overflow: timestamptz ends in 294276 AD, only
 * about 8 days of microseconds short of the int64 limit, so with an epoch
 * before 1999-12-23 a time near that end is more than 2^63 microseconds
 * after the epoch.  Such a time is far outside every layout's range, so an
 * overflow gets the same out-of-range error (22003) as any other.
 */
int64
idgen_timestamptz_to_ms(TimestampTz ts, const IdgenLayout *layout,
						const char *funcname)
{
	int64		us;

	if (!TIMESTAMP_NOT_FINITE(ts) && ts >= idgen_epoch_ts &&
		!pg_sub_s64_overflow(ts, idgen_epoch_ts, &us) &&
		us / 1000 < layout->tick_limit)
		return us / 1000;
	idgen_report_time_range(layout, funcname);
	pg_unreachable();
}

/* The error of idgen_check_part() (idgen.h), kept off the hot path. */
void
idgen_report_part_out_of_range(const char *what, int32 value, int32 max)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("%s %d is out of range", what, value),
			 errdetail("The %s must be between 0 and %d.", what, max)));
	pg_unreachable();
}


/* ---- the core: an ID and a time layout's spec, both ways ---- */

/*
 * The start of the tick of id's time field: 22023 for a negative ID, 22008
 * for a time field beyond the layout's range (a foreign ID).
 */
TimestampTz
idgen_spec_id_time(const IdgenSpec *spec, int64 id)
{
	idgen_check_id(id);
	return idgen_unix_ms_to_timestamptz(idgen_spec_tick_unix_ms(spec,
																idgen_spec_field(spec, spec->time_field, id)));
}

/*
 * The tick that ts lies in, in *tick; false if ts is not finite or outside
 * the layout's range, which each caller reports in its own words.  ts is
 * floored to its millisecond before the epoch is subtracted, so no
 * subtraction of timestamps can overflow.
 */
bool
idgen_spec_tick_of(const IdgenSpec *spec, TimestampTz ts, int64 *tick)
{
	if (TIMESTAMP_NOT_FINITE(ts))
		return false;
	*tick = idgen_floor_div(idgen_timestamptz_to_unix_ms(ts) - spec->epoch_unix_ms,
							spec->unit_ms);
	return *tick >= 0 && *tick < spec->tick_limit;
}

/*
 * The smallest ID of a tick: the fields more significant than time as in
 * "above" (a named generator's node and constants on this server), the
 * shard field (if any) shard, every other field 0.  The caller has checked
 * the tick and the shard.
 */
int64
idgen_spec_from_tick(const IdgenSpec *spec, int64 tick, int64 above,
					 int32 shard)
{
	uint64		id = (uint64) tick << spec->fields[spec->time_field].shift;

	for (int f = 0; f < spec->time_field; f++)
	{
		const IdgenField *field = &spec->fields[f];

		id |= (uint64) above &
			(((UINT64CONST(1) << field->bits) - 1) << field->shift);
	}
	if (spec->shard_field >= 0)
		id |= (uint64) shard << spec->fields[spec->shard_field].shift;
	return (int64) id;
}

static Datum
idgen_parts_tuple(FunctionCallInfo fcinfo, int64 ms, int32 which, int32 seq)
{
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	values[0] = TimestampTzGetDatum(idgen_ms_to_timestamptz(ms));
	values[1] = Int32GetDatum(which);
	values[2] = Int32GetDatum(seq);

	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

/* field extraction, shared by the single-field decoders and *_decode */
#define SNOWFLAKE_MS(id)	((id) >> IDGEN_SNOWFLAKE_TIME_SHIFT)
#define SNOWFLAKE_NODE(id)	((int32) (((id) >> IDGEN_SNOWFLAKE_NODE_SHIFT) & IDGEN_SNOWFLAKE_MAX_NODE))
#define SNOWFLAKE_SEQ(id)	((int32) ((id) & IDGEN_SNOWFLAKE_MAX_SEQ))
#define INSTAGRAM_MS(id)	idgen_instagram_ms_of(id)
#define INSTAGRAM_SHARD(id) idgen_instagram_shard_of(id)
#define INSTAGRAM_SEQ(id)	((int32) ((id) & IDGEN_INSTAGRAM_MAX_SEQ))

/* ---- snowflake decoders ---- */

PG_FUNCTION_INFO_V1(idgen_snowflake_id_time);
Datum
idgen_snowflake_id_time(PG_FUNCTION_ARGS)
{
	int64		id = idgen_check_id(PG_GETARG_INT64(0));

	PG_RETURN_TIMESTAMPTZ(idgen_ms_to_timestamptz(SNOWFLAKE_MS(id)));
}

PG_FUNCTION_INFO_V1(idgen_snowflake_id_node);
Datum
idgen_snowflake_id_node(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(SNOWFLAKE_NODE(idgen_check_id(PG_GETARG_INT64(0))));
}

PG_FUNCTION_INFO_V1(idgen_snowflake_id_datacenter);
Datum
idgen_snowflake_id_datacenter(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(SNOWFLAKE_NODE(idgen_check_id(PG_GETARG_INT64(0))) >>
					IDGEN_SNOWFLAKE_WORKER_BITS);
}

PG_FUNCTION_INFO_V1(idgen_snowflake_id_worker);
Datum
idgen_snowflake_id_worker(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(SNOWFLAKE_NODE(idgen_check_id(PG_GETARG_INT64(0))) &
					((1 << IDGEN_SNOWFLAKE_WORKER_BITS) - 1));
}

PG_FUNCTION_INFO_V1(idgen_snowflake_id_seq);
Datum
idgen_snowflake_id_seq(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(SNOWFLAKE_SEQ(idgen_check_id(PG_GETARG_INT64(0))));
}

PG_FUNCTION_INFO_V1(idgen_snowflake_id_decode);
Datum
idgen_snowflake_id_decode(PG_FUNCTION_ARGS)
{
	int64		id = idgen_check_id(PG_GETARG_INT64(0));

	return idgen_parts_tuple(fcinfo, SNOWFLAKE_MS(id), SNOWFLAKE_NODE(id),
							 SNOWFLAKE_SEQ(id));
}

/*
 * The moment of "ms" milliseconds after an epoch given as an argument:
 * out of timestamptz's range is 22008, as for any timestamp arithmetic.
 */
static TimestampTz
idgen_ms_after(TimestampTz epoch, int64 ms)
{
	TimestampTz result;

	if (TIMESTAMP_NOT_FINITE(epoch))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range"),
				 errdetail("The epoch must be a finite timestamp, the moment the IDs' time field counts from.")));
	if (pg_add_s64_overflow(epoch, ms * 1000, &result) ||
		!IS_VALID_TIMESTAMP(result))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range"),
				 errdetail("The ID's time lies %lld ms after the epoch given, beyond what timestamptz holds.",
						   (long long) ms)));
	return result;
}

/* snowflake_id_time(id, epoch): reads no setting (see the header) */
PG_FUNCTION_INFO_V1(idgen_snowflake_id_time_epoch);
Datum
idgen_snowflake_id_time_epoch(PG_FUNCTION_ARGS)
{
	int64		id = idgen_check_id(PG_GETARG_INT64(0));

	PG_RETURN_TIMESTAMPTZ(idgen_ms_after(PG_GETARG_TIMESTAMPTZ(1), SNOWFLAKE_MS(id)));
}

/* ---- instagram decoders ---- */

PG_FUNCTION_INFO_V1(idgen_instagram_id_time);
Datum
idgen_instagram_id_time(PG_FUNCTION_ARGS)
{
	int64		id = idgen_check_id(PG_GETARG_INT64(0));

	PG_RETURN_TIMESTAMPTZ(idgen_ms_to_timestamptz(INSTAGRAM_MS(id)));
}

/* instagram_id_time(id, epoch): reads no setting (see the header) */
PG_FUNCTION_INFO_V1(idgen_instagram_id_time_epoch);
Datum
idgen_instagram_id_time_epoch(PG_FUNCTION_ARGS)
{
	int64		id = idgen_check_id(PG_GETARG_INT64(0));

	PG_RETURN_TIMESTAMPTZ(idgen_ms_after(PG_GETARG_TIMESTAMPTZ(1), INSTAGRAM_MS(id)));
}

PG_FUNCTION_INFO_V1(idgen_instagram_id_shard);
Datum
idgen_instagram_id_shard(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(INSTAGRAM_SHARD(idgen_check_id(PG_GETARG_INT64(0))));
}

PG_FUNCTION_INFO_V1(idgen_instagram_id_seq);
Datum
idgen_instagram_id_seq(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(INSTAGRAM_SEQ(idgen_check_id(PG_GETARG_INT64(0))));
}

PG_FUNCTION_INFO_V1(idgen_instagram_id_decode);
Datum
idgen_instagram_id_decode(PG_FUNCTION_ARGS)
{
	int64		id = idgen_check_id(PG_GETARG_INT64(0));

	return idgen_parts_tuple(fcinfo, INSTAGRAM_MS(id), INSTAGRAM_SHARD(id),
							 INSTAGRAM_SEQ(id));
}

/* ---- builders ---- */

PG_FUNCTION_INFO_V1(idgen_snowflake_id_from_time);
Datum
idgen_snowflake_id_from_time(PG_FUNCTION_ARGS)
{
	int64		ms = idgen_timestamptz_to_ms(PG_GETARG_TIMESTAMPTZ(0),
											 &idgen_snowflake_layout,
											 "snowflake_id_from_time");

	PG_RETURN_INT64(idgen_snowflake_compose(ms, 0, 0));
}

PG_FUNCTION_INFO_V1(idgen_snowflake_id_from_parts);
Datum
idgen_snowflake_id_from_parts(PG_FUNCTION_ARGS)
{
	int64		ms = idgen_timestamptz_to_ms(PG_GETARG_TIMESTAMPTZ(0),
											 &idgen_snowflake_layout,
											 "snowflake_id_from_parts");
	int32		node = PG_GETARG_INT32(1);
	int32		seq = PG_GETARG_INT32(2);

	idgen_check_part("node", node, IDGEN_SNOWFLAKE_MAX_NODE);
	idgen_check_part("sequence", seq, IDGEN_SNOWFLAKE_MAX_SEQ);
	PG_RETURN_INT64(idgen_snowflake_compose(ms, node, seq));
}

PG_FUNCTION_INFO_V1(idgen_instagram_id_from_time);
Datum
idgen_instagram_id_from_time(PG_FUNCTION_ARGS)
{
	int64		ms = idgen_timestamptz_to_ms(PG_GETARG_TIMESTAMPTZ(0),
											 &idgen_instagram_layout,
											 "instagram_id_from_time");
	int32		shard = PG_GETARG_INT32(1);

	idgen_check_part("shard", shard, IDGEN_INSTAGRAM_MAX_SHARD);
	PG_RETURN_INT64(idgen_instagram_compose(ms, shard, 0));
}

PG_FUNCTION_INFO_V1(idgen_instagram_id_from_parts);
Datum
idgen_instagram_id_from_parts(PG_FUNCTION_ARGS)
{
	int64		ms = idgen_timestamptz_to_ms(PG_GETARG_TIMESTAMPTZ(0),
											 &idgen_instagram_layout,
											 "instagram_id_from_parts");
	int32		shard = PG_GETARG_INT32(1);
	int32		seq = PG_GETARG_INT32(2);

	idgen_check_part("shard", shard, IDGEN_INSTAGRAM_MAX_SHARD);
	idgen_check_part("sequence", seq, IDGEN_INSTAGRAM_MAX_SEQ);
	PG_RETURN_INT64(idgen_instagram_compose(ms, shard, seq));
}

/*
 * A C symbol that a build of 1.1 from before its release bound to a
 * function whose arguments have another order since (idgen_next_batch and
 * idgen_from_time with a shard, idgen_decode_layout).  1.1's script binds
 * those to other symbols; a database that ran the pre-release script still
 * calls these, and must be refused rather than have its arguments read in
 * the new order (a count taken for a shard, an ID for a layout).
 */
void
idgen_refuse_pre_release(FunctionCallInfo fcinfo)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("function %s was defined by a build of idgen 1.1 from before its release",
					format_procedure(fcinfo->flinfo->fn_oid)),
			 errdetail("Its arguments are in another order in idgen 1.1."),
			 errhint("As a superuser, drop and re-create the extension idgen, and check the order of the arguments in its callers. Dropping it drops the named generators' definitions and grants: list them first (the view idgen_generator_status and the table idgen_generator_grant), then create and grant them again.")));
}

/*
 * The symbol a build of 1.1 from before its release bound to
 * idgen_decode_layout(id, layout, ...), with the ID first: refused, never
 * read in the new order.
 */
PG_FUNCTION_INFO_V1(idgen_decode_layout);
Datum
idgen_decode_layout(PG_FUNCTION_ARGS)
{
	idgen_refuse_pre_release(fcinfo);
}
