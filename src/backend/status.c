/*-------------------------------------------------------------------------
 *
 * backend/status.c
 *	  idgen_status(): configuration and live state in one row;
 *	  idgen_lease_status(): the node-id lease in etcd, in one row.
 *
 * The row is a monitoring snapshot.  The snowflake generator is copied
 * under its spinlock.  The 8,192 shard generators are read without their
 * locks: taking them all would pull every shard's cache line away from the
 * backends issuing IDs, for figures that are stale a moment later anyway.
 * Each field is a single aligned 64-bit word, read whole; the sums are not
 * taken at one instant.  The keeper's state is copied with its message
 * under the keeper's LWLock in LW_SHARED, so that the two agree; its count
 * of waits under its spinlock.  Without shared_preload_libraries
 * the configuration columns are filled and the live ones are NULL.
 *
 * IDENTIFICATION
 *	  src/backend/status.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_authid_d.h"
#include "miscadmin.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "storage/lwlock.h"
#include "utils/timestamp.h"

#include "idgen.h"

typedef enum IdgenStatusColumn
{
	IDGEN_STATUS_PRELOADED,
	IDGEN_STATUS_NODE_ID,
	IDGEN_STATUS_EPOCH,
	IDGEN_STATUS_MAX_LEAD,
	IDGEN_STATUS_MAX_WAIT,
	IDGEN_STATUS_SNOWFLAKE_LAST,
	IDGEN_STATUS_SNOWFLAKE_LEAD,
	IDGEN_STATUS_SNOWFLAKE_ISSUED,
	IDGEN_STATUS_INSTAGRAM_LAST,
	IDGEN_STATUS_INSTAGRAM_LEAD,
	IDGEN_STATUS_INSTAGRAM_ISSUED,
	IDGEN_STATUS_INSTAGRAM_SHARDS,
	IDGEN_STATUS_BORROWED,
	IDGEN_STATUS_WAITS,
	IDGEN_STATUS_REGRESSIONS,
	IDGEN_STATUS_KEEPER_STATE,
	IDGEN_STATUS_KEEPER_MESSAGE,
	IDGEN_STATUS_RESERVED_UNTIL,
	IDGEN_STATUS_RESERVATION_MS,
	IDGEN_STATUS_RESERVATION_WRITES,
	IDGEN_STATUS_RESERVATION_WAITS,
	IDGEN_STATUS_SNOWFLAKE_END,
	IDGEN_STATUS_INSTAGRAM_END,
	/* idgen_lease_status(), 1.1: the node-id lease (lease/protocol.c) */
	IDGEN_STATUS_LEASE_STATE,
	IDGEN_STATUS_LEASE_ID,
	IDGEN_STATUS_LEASE_NODE_ID,
	IDGEN_STATUS_LEASE_EXPIRES_IN,
	IDGEN_STATUS_LEASE_HOLDER,
	IDGEN_STATUS_LEASE_ERROR,
	IDGEN_STATUS_LEASE_ERROR_AT,
	IDGEN_STATUS_NCOLUMNS
} IdgenStatusColumn;

/* idgen_status()'s row, unchanged since 1.0; the lease columns follow it */
#define IDGEN_STATUS_NCOLUMNS_1_0 IDGEN_STATUS_LEASE_STATE

/* Copy one generator's state under its lock. */
static IdgenGenerator
idgen_snapshot(IdgenGenerator *gen)
{
	IdgenGenerator copy;

	SpinLockAcquire(&gen->mutex);
	copy = *gen;
	SpinLockRelease(&gen->mutex);
	return copy;
}

/* Every column starts NULL; setting a value clears its NULL. */
#define STATUS_SET(col, datum) (values[(col)] = (datum), nulls[(col)] = false)

/* Last issued ms and its lead over the clock; left NULL if none issued. */
static void
idgen_set_last(Datum *values, bool *nulls, int lastcol, int leadcol,
			   uint64 last, uint64 issued, int seq_bits, int64 now)
{
	int64		ms = (int64) (last >> seq_bits);

	if (issued == 0)
		return;
	STATUS_SET(lastcol, TimestampTzGetDatum(idgen_ms_to_timestamptz(ms)));
	STATUS_SET(leadcol, Int64GetDatum(Max(ms - now, 0)));
}

/* The lease columns, while leases are on. */
static void
idgen_status_lease(Datum *values, bool *nulls)
{
	IdgenLease *lease = &idgen_shared->lease;
	IdgenLease	copy;
	bool		valid;

	SpinLockAcquire(&lease->mutex);
	copy = *lease;
	SpinLockRelease(&lease->mutex);
	valid = idgen_lease_word_valid(pg_atomic_read_u32(&idgen_shared->lease_word.word));

	STATUS_SET(IDGEN_STATUS_LEASE_STATE,
			   CStringGetTextDatum(idgen_lease_state_name(copy.state)));
	if (copy.lease_id != 0)
		STATUS_SET(IDGEN_STATUS_LEASE_ID, Int64GetDatum(copy.lease_id));
	if (copy.node_id >= 0)
		STATUS_SET(IDGEN_STATUS_LEASE_NODE_ID, Int32GetDatum(copy.node_id));
	/* how long generation may go on without another renewal */
	if (valid)
		STATUS_SET(IDGEN_STATUS_LEASE_EXPIRES_IN,
				   Int64GetDatum(Max(0, copy.deadline_ms - idgen_clock_monotonic_ms())));
	/* other servers' identities and etcd's addresses: for monitoring roles */
	if (!has_privs_of_role(GetUserId(), ROLE_PG_MONITOR))
		return;
	if (copy.holder[0] != '\0')
		STATUS_SET(IDGEN_STATUS_LEASE_HOLDER, CStringGetTextDatum(copy.holder));
	if (copy.error[0] != '\0')
	{
		STATUS_SET(IDGEN_STATUS_LEASE_ERROR, CStringGetTextDatum(copy.error));
		STATUS_SET(IDGEN_STATUS_LEASE_ERROR_AT, TimestampTzGetDatum(copy.error_at));
	}
}

/* The row type a status function was declared with, checked for natts. */
static TupleDesc
idgen_status_row(FunctionCallInfo fcinfo, const char *funcname, int natts)
{
	TupleDesc	tupdesc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	if (tupdesc->natts != natts)
		elog(ERROR, "%s() returns %d columns, expected %d",
			 funcname, tupdesc->natts, natts);
	return tupdesc;
}

PG_FUNCTION_INFO_V1(idgen_status);
Datum
idgen_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[IDGEN_STATUS_NCOLUMNS];
	bool		nulls[IDGEN_STATUS_NCOLUMNS];

	tupdesc = idgen_status_row(fcinfo, "idgen_status", IDGEN_STATUS_NCOLUMNS_1_0);

	memset(nulls, true, sizeof(nulls));

	STATUS_SET(IDGEN_STATUS_PRELOADED, BoolGetDatum(idgen_shared != NULL));
	if (idgen_current_node_id() >= 0)
		STATUS_SET(IDGEN_STATUS_NODE_ID, Int32GetDatum(idgen_current_node_id()));
	STATUS_SET(IDGEN_STATUS_EPOCH, TimestampTzGetDatum(idgen_epoch_ts));
	STATUS_SET(IDGEN_STATUS_MAX_LEAD, Int32GetDatum(idgen_max_lead_ms));
	STATUS_SET(IDGEN_STATUS_MAX_WAIT, Int32GetDatum(idgen_max_wait_ms));
	STATUS_SET(IDGEN_STATUS_RESERVATION_MS, Int32GetDatum(idgen_reservation_ms));
	STATUS_SET(IDGEN_STATUS_SNOWFLAKE_END,
			   TimestampTzGetDatum(idgen_ms_to_timestamptz(IDGEN_SNOWFLAKE_MS_LIMIT)));
	STATUS_SET(IDGEN_STATUS_INSTAGRAM_END,
			   TimestampTzGetDatum(idgen_ms_to_timestamptz(IDGEN_INSTAGRAM_MS_LIMIT)));

	/* live state exists only when preloaded; otherwise it stays NULL */
	if (idgen_shared != NULL)
	{
		int64		now = idgen_clock_ms();
		IdgenGenerator sf = idgen_snapshot(&idgen_shared->snowflake.gen);
		IdgenKeeper *keeper = KEEPER(idgen_shared);
		IdgenKeeperState kstate;
		char		kmessage[sizeof(keeper->message)];
		int64		durable;
		uint64		kwrites;
		uint64		kwaits;
		uint64		ig_last = 0;
		uint64		ig_issued = 0;
		int32		ig_shards = 0;
		uint64		borrowed = sf.borrowed;
		uint64		waits = sf.waits;
		uint64		regressions = sf.regressions;

		for (int shard = 0; shard < IDGEN_INSTAGRAM_NSHARDS; shard++)
		{
			volatile IdgenGenerator *ig_live = &idgen_shared->instagram[shard].gen;
			IdgenGenerator ig;

			ig.at.last = ig_live->at.last;
			ig.issued = ig_live->issued;
			ig.borrowed = ig_live->borrowed;
			ig.waits = ig_live->waits;
			ig.regressions = ig_live->regressions;

			if (ig.issued > 0)
				ig_last = Max(ig_last, ig.at.last);
			ig_issued += ig.issued;
			ig_shards += (ig.issued > 0);
			borrowed += ig.borrowed;
			waits += ig.waits;
			regressions += ig.regressions;
		}

		idgen_set_last(values, nulls, IDGEN_STATUS_SNOWFLAKE_LAST,
					   IDGEN_STATUS_SNOWFLAKE_LEAD, sf.at.last, sf.issued,
					   IDGEN_SNOWFLAKE_SEQ_BITS, now);
		STATUS_SET(IDGEN_STATUS_SNOWFLAKE_ISSUED, Int64GetDatum((int64) sf.issued));
		idgen_set_last(values, nulls, IDGEN_STATUS_INSTAGRAM_LAST,
					   IDGEN_STATUS_INSTAGRAM_LEAD, ig_last, ig_issued,
					   IDGEN_INSTAGRAM_SEQ_BITS, now);
		STATUS_SET(IDGEN_STATUS_INSTAGRAM_ISSUED, Int64GetDatum((int64) ig_issued));
		STATUS_SET(IDGEN_STATUS_INSTAGRAM_SHARDS, Int32GetDatum(ig_shards));
		STATUS_SET(IDGEN_STATUS_BORROWED, Int64GetDatum((int64) borrowed));
		STATUS_SET(IDGEN_STATUS_WAITS, Int64GetDatum((int64) waits));
		STATUS_SET(IDGEN_STATUS_REGRESSIONS, Int64GetDatum((int64) regressions));

		/* the state with its message, under the LWLock; waits, the spinlock's */
		LWLockAcquire(keeper->lock, LW_SHARED);
		kstate = keeper->state;
		strlcpy(kmessage, keeper->message, sizeof(kmessage));
		durable = keeper->durable_unix_ms;
		kwrites = keeper->writes;
		LWLockRelease(keeper->lock);
		SpinLockAcquire(&keeper->mutex);
		kwaits = keeper->waits;
		SpinLockRelease(&keeper->mutex);

		STATUS_SET(IDGEN_STATUS_KEEPER_STATE,
			   CStringGetTextDatum(idgen_keeper_state_name(kstate)));
		STATUS_SET(IDGEN_STATUS_KEEPER_MESSAGE, CStringGetTextDatum(kmessage));
		if (durable != 0)
			STATUS_SET(IDGEN_STATUS_RESERVED_UNTIL,
					   TimestampTzGetDatum((durable - IDGEN_UNIX_TO_PG_MS) * 1000));
		STATUS_SET(IDGEN_STATUS_RESERVATION_WRITES, Int64GetDatum((int64) kwrites));
		STATUS_SET(IDGEN_STATUS_RESERVATION_WAITS, Int64GetDatum((int64) kwaits));
	}

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * idgen_lease_status(): the node-id lease, one row; lease_state "off"
 * without leases (or without the preload), the other columns NULL.
 */
PG_FUNCTION_INFO_V1(idgen_lease_status);
Datum
idgen_lease_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[IDGEN_STATUS_NCOLUMNS];
	bool		nulls[IDGEN_STATUS_NCOLUMNS];

	tupdesc = idgen_status_row(fcinfo, "idgen_lease_status",
							   IDGEN_STATUS_NCOLUMNS - IDGEN_STATUS_NCOLUMNS_1_0);

	memset(nulls, true, sizeof(nulls));
	STATUS_SET(IDGEN_STATUS_LEASE_STATE, CStringGetTextDatum("off"));
	if (idgen_shared != NULL && idgen_leases_on)
		idgen_status_lease(values, nulls);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc,
													  values + IDGEN_STATUS_NCOLUMNS_1_0,
													  nulls + IDGEN_STATUS_NCOLUMNS_1_0)));
}
