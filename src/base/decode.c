/*-------------------------------------------------------------------------
 *
 * base/decode.c
 *	  Decoders (ID -> parts) and builders (parts -> ID) of snowflake_id()
 *	  and instagram_id(), and the core they share with the named ones.
 *
 * Every decoder and builder reads its layout as an IdgenSpec: the named
 * generators' from their definitions (backend/named.c), the fixed ones'
 * from their presets (base/layout.c, parsed by base/builtin.c) under
 * idgen.epoch.  So one piece of code turns an ID and a spec into a time
 * and fields, and a time and fields into an ID; only the messages differ,
 * each SQL function keeping its own.
 *
 * These read no clock and no shared state: the result depends only on the
 * arguments and on idgen.epoch, which is fixed for the life of a server
 * that preloads idgen (PGC_POSTMASTER; without the preload nothing is
 * issued) and guarded against changes once IDs exist.  That is
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
 * (idgen_spec_tick_of) this cannot overflow: ms is within 0..2^41
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
 * The node fields of id together, most significant first: the node id
 * that idgen_spec_node_value() split over them.
 */
int64
idgen_spec_node_of(const IdgenSpec *spec, int64 id)
{
	int64		node = 0;

	for (int i = 0; i < spec->nfields; i++)
		if (spec->fields[i].kind == IDGEN_FIELD_NODE)
			node = (node << spec->fields[i].bits) | idgen_spec_field(spec, i, id);
	return node;
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

/* ---- snowflake_id() and instagram_id() as specs ---- */

/* The largest value of field i. */
static inline int32
idgen_spec_field_max(const IdgenSpec *spec, int i)
{
	return (int32) ((INT64CONST(1) << spec->fields[i].bits) - 1);
}

/* The largest node id the node fields hold together. */
static inline int32
idgen_spec_node_max(const IdgenSpec *spec)
{
	return (int32) ((INT64CONST(1) << spec->node_bits) - 1);
}

/*
 * The ID of a built-in layout's parts: tick, the node id or the shard,
 * seq; each checked by the caller.
 */
static int64
idgen_parts_id(const IdgenSpec *spec, int64 tick, int32 which, int32 seq)
{
	bool		fits;

	return idgen_spec_from_tick(spec, tick, 0, which) |
		(spec->node_bits > 0 ? idgen_spec_node_value(spec, which, &fits) : 0) |
		((int64) seq << spec->fields[spec->seq_field].shift);
}

/*
 * The spec of a built-in layout, as the decoders read it.  idgen.epoch is
 * fixed for the life of a server that preloads idgen (PGC_POSTMASTER), but
 * one that does not may change it at a reload (PGC_SIGHUP): it is read on
 * every call as it always was, so the decoders follow whatever the
 * setting says.  Only the spec's clock follows it: the layout and compose
 * plan the generators use count from idgen.epoch whatever it is.
 */
static inline const IdgenSpec *
idgen_fixed_spec(IdgenBuiltin *builtin)
{
	if (unlikely(builtin->spec.epoch_unix_ms != idgen_epoch_unix_ms))
		idgen_spec_set_clock(&builtin->spec, idgen_epoch_unix_ms, 1);
	return &builtin->spec;
}

/*
 * The millisecond of a builder's time: 22003 if the layout cannot
 * represent that moment, with the range it can.  timestamptz_to_str()
 * returns a static buffer, so each result is copied before the next call.
 */
static int64
idgen_fixed_tick(IdgenBuiltin *fixed, TimestampTz ts, const char *funcname)
{
	const IdgenSpec *spec = idgen_fixed_spec(fixed);
	int64		tick;
	char	   *from;
	char	   *to;

	if (likely(idgen_spec_tick_of(spec, ts, &tick)))
		return tick;
	from = pstrdup(timestamptz_to_str(idgen_unix_ms_to_timestamptz(spec->epoch_unix_ms)));
	to = pstrdup(timestamptz_to_str(idgen_unix_ms_to_timestamptz(spec->epoch_unix_ms +
																 spec->tick_limit * spec->unit_ms)));
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("timestamp is out of range for %s()", funcname),
			 errdetail("The %s layout covers %s to %s.", fixed->preset, from, to)));
	pg_unreachable();
}

/* (time, node or shard, seq) of a non-negative ID */
static Datum
idgen_parts_tuple(FunctionCallInfo fcinfo, const IdgenSpec *spec, int64 id,
				  int32 which)
{
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	values[0] = TimestampTzGetDatum(idgen_spec_id_time(spec, id));
	values[1] = Int32GetDatum(which);
	values[2] = Int32GetDatum((int32) idgen_spec_field(spec, spec->seq_field, id));

	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
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

/* *_time(id, epoch): the spec's bits, the epoch given (see the header) */
static TimestampTz
idgen_fixed_time_after(IdgenBuiltin *fixed, int64 id, TimestampTz epoch)
{
	const IdgenSpec *spec = idgen_fixed_spec(fixed);

	idgen_check_id(id);
	return idgen_ms_after(epoch, (int64) idgen_spec_field(spec, spec->time_field, id) *
						  spec->unit_ms);
}

/* ---- snowflake decoders ---- */

PG_FUNCTION_INFO_V1(idgen_snowflake_id_time);
Datum
idgen_snowflake_id_time(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(idgen_spec_id_time(idgen_fixed_spec(&idgen_builtin_snowflake),
											 PG_GETARG_INT64(0)));
}

PG_FUNCTION_INFO_V1(idgen_snowflake_id_node);
Datum
idgen_snowflake_id_node(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32((int32) idgen_spec_node_of(idgen_fixed_spec(&idgen_builtin_snowflake),
											   idgen_check_id(PG_GETARG_INT64(0))));
}

PG_FUNCTION_INFO_V1(idgen_snowflake_id_datacenter);
Datum
idgen_snowflake_id_datacenter(PG_FUNCTION_ARGS)
{
	const IdgenSpec *spec = idgen_fixed_spec(&idgen_builtin_snowflake);

	PG_RETURN_INT32((int32) idgen_spec_field(spec, idgen_builtin_snowflake.datacenter,
											 idgen_check_id(PG_GETARG_INT64(0))));
}

PG_FUNCTION_INFO_V1(idgen_snowflake_id_worker);
Datum
idgen_snowflake_id_worker(PG_FUNCTION_ARGS)
{
	const IdgenSpec *spec = idgen_fixed_spec(&idgen_builtin_snowflake);

	PG_RETURN_INT32((int32) idgen_spec_field(spec, idgen_builtin_snowflake.worker,
											 idgen_check_id(PG_GETARG_INT64(0))));
}

PG_FUNCTION_INFO_V1(idgen_snowflake_id_seq);
Datum
idgen_snowflake_id_seq(PG_FUNCTION_ARGS)
{
	const IdgenSpec *spec = idgen_fixed_spec(&idgen_builtin_snowflake);

	PG_RETURN_INT32((int32) idgen_spec_field(spec, spec->seq_field,
											 idgen_check_id(PG_GETARG_INT64(0))));
}

PG_FUNCTION_INFO_V1(idgen_snowflake_id_decode);
Datum
idgen_snowflake_id_decode(PG_FUNCTION_ARGS)
{
	const IdgenSpec *spec = idgen_fixed_spec(&idgen_builtin_snowflake);
	int64		id = idgen_check_id(PG_GETARG_INT64(0));

	return idgen_parts_tuple(fcinfo, spec, id, (int32) idgen_spec_node_of(spec, id));
}

/* snowflake_id_time(id, epoch): reads no setting (see the header) */
PG_FUNCTION_INFO_V1(idgen_snowflake_id_time_epoch);
Datum
idgen_snowflake_id_time_epoch(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(idgen_fixed_time_after(&idgen_builtin_snowflake,
												 PG_GETARG_INT64(0),
												 PG_GETARG_TIMESTAMPTZ(1)));
}

/* ---- instagram decoders ---- */

PG_FUNCTION_INFO_V1(idgen_instagram_id_time);
Datum
idgen_instagram_id_time(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(idgen_spec_id_time(idgen_fixed_spec(&idgen_builtin_instagram),
											 PG_GETARG_INT64(0)));
}

/* instagram_id_time(id, epoch): reads no setting (see the header) */
PG_FUNCTION_INFO_V1(idgen_instagram_id_time_epoch);
Datum
idgen_instagram_id_time_epoch(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(idgen_fixed_time_after(&idgen_builtin_instagram,
												 PG_GETARG_INT64(0),
												 PG_GETARG_TIMESTAMPTZ(1)));
}

PG_FUNCTION_INFO_V1(idgen_instagram_id_shard);
Datum
idgen_instagram_id_shard(PG_FUNCTION_ARGS)
{
	const IdgenSpec *spec = idgen_fixed_spec(&idgen_builtin_instagram);

	PG_RETURN_INT32((int32) idgen_spec_field(spec, spec->shard_field,
											 idgen_check_id(PG_GETARG_INT64(0))));
}

PG_FUNCTION_INFO_V1(idgen_instagram_id_seq);
Datum
idgen_instagram_id_seq(PG_FUNCTION_ARGS)
{
	const IdgenSpec *spec = idgen_fixed_spec(&idgen_builtin_instagram);

	PG_RETURN_INT32((int32) idgen_spec_field(spec, spec->seq_field,
											 idgen_check_id(PG_GETARG_INT64(0))));
}

PG_FUNCTION_INFO_V1(idgen_instagram_id_decode);
Datum
idgen_instagram_id_decode(PG_FUNCTION_ARGS)
{
	const IdgenSpec *spec = idgen_fixed_spec(&idgen_builtin_instagram);
	int64		id = idgen_check_id(PG_GETARG_INT64(0));

	return idgen_parts_tuple(fcinfo, spec, id,
							 (int32) idgen_spec_field(spec, spec->shard_field, id));
}

/* ---- builders ---- */

PG_FUNCTION_INFO_V1(idgen_snowflake_id_from_time);
Datum
idgen_snowflake_id_from_time(PG_FUNCTION_ARGS)
{
	int64		tick = idgen_fixed_tick(&idgen_builtin_snowflake, PG_GETARG_TIMESTAMPTZ(0),
										"snowflake_id_from_time");

	PG_RETURN_INT64(idgen_spec_from_tick(idgen_fixed_spec(&idgen_builtin_snowflake), tick, 0, 0));
}

PG_FUNCTION_INFO_V1(idgen_snowflake_id_from_parts);
Datum
idgen_snowflake_id_from_parts(PG_FUNCTION_ARGS)
{
	int64		tick = idgen_fixed_tick(&idgen_builtin_snowflake, PG_GETARG_TIMESTAMPTZ(0),
										"snowflake_id_from_parts");
	const IdgenSpec *spec = idgen_fixed_spec(&idgen_builtin_snowflake);
	int32		node = PG_GETARG_INT32(1);
	int32		seq = PG_GETARG_INT32(2);

	idgen_check_part("node", node, idgen_spec_node_max(spec));
	idgen_check_part("sequence", seq, idgen_spec_field_max(spec, spec->seq_field));
	PG_RETURN_INT64(idgen_parts_id(spec, tick, node, seq));
}

PG_FUNCTION_INFO_V1(idgen_instagram_id_from_time);
Datum
idgen_instagram_id_from_time(PG_FUNCTION_ARGS)
{
	int64		tick = idgen_fixed_tick(&idgen_builtin_instagram, PG_GETARG_TIMESTAMPTZ(0),
										"instagram_id_from_time");
	const IdgenSpec *spec = idgen_fixed_spec(&idgen_builtin_instagram);
	int32		shard = PG_GETARG_INT32(1);

	idgen_check_part("shard", shard, idgen_spec_field_max(spec, spec->shard_field));
	PG_RETURN_INT64(idgen_spec_from_tick(spec, tick, 0, shard));
}

PG_FUNCTION_INFO_V1(idgen_instagram_id_from_parts);
Datum
idgen_instagram_id_from_parts(PG_FUNCTION_ARGS)
{
	int64		tick = idgen_fixed_tick(&idgen_builtin_instagram, PG_GETARG_TIMESTAMPTZ(0),
										"instagram_id_from_parts");
	const IdgenSpec *spec = idgen_fixed_spec(&idgen_builtin_instagram);
	int32		shard = PG_GETARG_INT32(1);
	int32		seq = PG_GETARG_INT32(2);

	idgen_check_part("shard", shard, idgen_spec_field_max(spec, spec->shard_field));
	idgen_check_part("sequence", seq, idgen_spec_field_max(spec, spec->seq_field));
	PG_RETURN_INT64(idgen_parts_id(spec, tick, shard, seq));
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
