/*-------------------------------------------------------------------------
 *
 * backend/instagram.c
 *	  instagram_id(shard): Instagram's sharded layout, one generator per shard.
 *
 * Each of the 8,192 logical shards has its own generator, so IDs of one
 * shard are strictly increasing and shards never contend with each other.
 * Unlike Instagram's original nextval() % 1024, a shard that uses up a
 * millisecond's 1,024 sequence values moves on to the next millisecond
 * instead of wrapping around to values already issued.
 *
 * Moving a shard between servers.  Ownership has two parts: the setting
 * idgen.shards, which each backend reads at its own next idle point, and
 * the generator's "owned" flag in shared memory, read under the
 * generator's lock on every call.  A shard issues only where both say so.
 * instagram_id_release() clears the flag, so the old server stops at once
 * for every session, statements already running included, and returns the
 * last position the shard reached there; instagram_id_advance() on the new
 * server puts the shard above it, durably (the keeper keeps per-shard
 * floors apart from the reservation, so an advanced shard never holds back the
 * other generators after a restart).
 *
 * IDENTIFICATION
 *	  src/backend/instagram.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"

#include "idgen.h"

static pg_noinline void
idgen_report_shard_not_owned(int32 shard)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("shard %d is not owned by this server", shard),
			 errdetail("\"idgen.shards\" is \"%s\"%s.", idgen_shards_string,
					   idgen_owns_shard(shard) ?
					   ", but the shard was released with instagram_id_release()" : ""),
			 errhint("Generate IDs for shard %d on the server that owns it. To move it here: on the old server remove it from \"idgen.shards\" and call instagram_id_release(%d); here call instagram_id_advance(%d, <the ID it returned>), then add it to \"idgen.shards\".",
					 shard, shard, shard)));
}

/*
 * The shard argument of a generator: not NULL (a mistake to report, never
 * a silent NULL key), in range, and listed in idgen.shards.
 */
static int32
idgen_shard_argument(FunctionCallInfo fcinfo)
{
	int32		shard;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("shard must not be null"),
				 errhint("Pass the logical shard number, from 0 to %d.",
						 IDGEN_INSTAGRAM_MAX_SHARD)));
	shard = PG_GETARG_INT32(0);
	idgen_check_part("shard", shard, IDGEN_INSTAGRAM_MAX_SHARD);

	if (unlikely(!idgen_owns_shard(shard)))
		idgen_report_shard_not_owned(shard);
	return shard;
}

/* Not STRICT: see idgen_shard_argument. */
PG_FUNCTION_INFO_V1(idgen_instagram_id);
Datum
idgen_instagram_id(PG_FUNCTION_ARGS)
{
	int32		shard = idgen_shard_argument(fcinfo);
	IdgenShared *shared = idgen_require_shared("instagram_id");
	uint64		position;

	position = idgen_issue(&shared->instagram[shard].gen,
						   &idgen_builtin_instagram.layout);
	if (unlikely(position == IDGEN_SWITCHED_OFF))
		idgen_report_shard_not_owned(shard);

	PG_RETURN_INT64(idgen_instagram_id_at(position, shard));
}

/*
 * instagram_id_batch(shard, n): n IDs of the shard in one lock round trip.
 */
PG_FUNCTION_INFO_V1(idgen_instagram_id_batch);
Datum
idgen_instagram_id_batch(PG_FUNCTION_ARGS)
{
	int32		shard = idgen_shard_argument(fcinfo);
	int32		n = idgen_check_batch_size(fcinfo, 1);
	IdgenShared *shared = idgen_require_shared("instagram_id_batch");
	Datum	   *ids = palloc(sizeof(Datum) * n);
	uint64		position;

	position = idgen_issue_batch(&shared->instagram[shard].gen,
								 &idgen_builtin_instagram.layout, n);
	if (unlikely(position == IDGEN_SWITCHED_OFF))
		idgen_report_shard_not_owned(shard);
	for (int i = 0; i < n; i++, position++)
		ids[i] = Int64GetDatum(idgen_instagram_id_at(position, shard));
	PG_RETURN_ARRAYTYPE_P(construct_array(ids, n, INT8OID, sizeof(int64),
										  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * instagram_id_advance(shard, id [, force]): make this server's generator
 * for the shard issue only IDs above "id", durably.  For moving a shard
 * between servers: the receiving server's clock may be behind the IDs the
 * old owner issued, and only this makes its new IDs sort above them.
 * Returns once the keeper has committed the shard's floor, so a restart
 * cannot undo it.
 *
 * An ID more than idgen.max_lead ahead of the clock would keep the shard
 * from issuing until the clock catches up, so it needs force => true: a
 * typo must not stall a shard for years.  (1.0 declared only the first two
 * arguments; the same C function serves both.)
 */
PG_FUNCTION_INFO_V1(idgen_instagram_id_advance);
Datum
idgen_instagram_id_advance(PG_FUNCTION_ARGS)
{
	int32		shard;
	int64		id;
	bool		force;
	IdgenShared *shared;
	int64		ms;
	int64		ahead_ms;
	uint64		position;

	idgen_require_superuser("instagram_id_advance");

	/*
	 * Not STRICT since 1.1: a NULL from a failed lookup must not make a
	 * shard move do nothing, silently.
	 */
	for (int i = 0; i < PG_NARGS(); i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("arguments of instagram_id_advance() must not be null"),
					 errhint("Pass the ID that instagram_id_release() returned on the shard's old server.")));
	shard = PG_GETARG_INT32(0);
	id = PG_GETARG_INT64(1);
	force = PG_NARGS() > 2 && PG_GETARG_BOOL(2);
	idgen_check_part("shard", shard, IDGEN_INSTAGRAM_MAX_SHARD);
	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ID does not belong to shard %d", shard),
				 errdetail("Instagram IDs are never negative.")));
	if (idgen_instagram_shard_of(id) != shard)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ID does not belong to shard %d", shard),
				 errdetail("It is an ID of shard %d.", idgen_instagram_shard_of(id))));

	shared = idgen_require_shared("instagram_id_advance");
	idgen_refuse_in_recovery("instagram_id_advance");
	ms = idgen_instagram_ms_of(id);
	ahead_ms = ms - idgen_clock_ms();
	if (ahead_ms > idgen_max_lead_ms && !force)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ID is %lld ms ahead of the clock", (long long) ahead_ms),
				 errdetail("Shard %d could issue no ID until the clock is within \"idgen.max_lead\" (%d ms) of it.",
						   shard, idgen_max_lead_ms),
				 errhint("Check the ID. If it is right (the old server's clock ran ahead), call instagram_id_advance() again with force => true.")));

	position = idgen_instagram_position(id);
	idgen_raise_position(&shared->instagram[shard].gen, position);

	/*
	 * Advancing a shard is how a server receives it: a release of it here
	 * ends, durably, with the floor.
	 */
	idgen_keeper_wait_shard(shard, position, IDGEN_RELEASE_TAKE_BACK,
							idgen_reservation_deadline());
	PG_RETURN_VOID();
}

/*
 * instagram_id_release(shard): stop issuing IDs for the shard on this
 * server at once, for every session, and return the highest ID it may have
 * issued for it (NULL if none since the server started and no floor
 * applies), to be passed to instagram_id_advance() on the shard's new
 * server.  The ID returned is at or above every ID this server issued for
 * the shard, also before a restart: the generator was floored above the
 * durable reservation then.
 */
PG_FUNCTION_INFO_V1(idgen_instagram_id_release);
Datum
idgen_instagram_id_release(PG_FUNCTION_ARGS)
{
	int32		shard;
	IdgenShared *shared;
	IdgenGenerator *gen;
	uint64		last;

	idgen_require_superuser("instagram_id_release");
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("shard number must not be null")));
	shard = PG_GETARG_INT32(0);
	idgen_check_part("shard", shard, IDGEN_INSTAGRAM_MAX_SHARD);
	shared = idgen_require_shared("instagram_id_release");
	idgen_refuse_in_recovery("instagram_id_release");

	/*
	 * Until the keeper has published a reservation in this shared memory,
	 * the generator may not be floored yet above what was issued before a
	 * restart: its last position would say too little.  Wait for it, or
	 * fail as a generator would (55000).
	 */
	idgen_keeper_wait(0, idgen_reservation_deadline());

	gen = &shared->instagram[shard].gen;
	SpinLockAcquire(&gen->mutex);
	gen->owned = false;
	last = gen->at.last;
	SpinLockRelease(&gen->mutex);

	/*
	 * Make the release durable (and so replicated) before answering: a
	 * restart, or a standby promoted in this server's place, must not
	 * issue the shard again while its new server does.
	 */
	idgen_keeper_wait_shard(shard, last, IDGEN_RELEASE_RELEASE,
							idgen_reservation_deadline());

	/*
	 * The keeper may have applied idgen.shards to the shard between our
	 * switching it off and its seeing the release asked for; from now on it
	 * sees the release (it has made it durable), so switch the shard off
	 * again and take the last position as it is now.
	 */
	SpinLockAcquire(&gen->mutex);
	gen->owned = false;
	last = gen->at.last;
	SpinLockRelease(&gen->mutex);

	if (idgen_owns_shard(shard))
		ereport(WARNING,
				(errmsg("shard %d is still listed in \"idgen.shards\"", shard),
				 errdetail("It stays released on this server, also after a restart or a failover, until instagram_id_advance() is called for it here."),
				 errhint("Remove shard %d from \"idgen.shards\" on this server and reload.",
						 shard)));

	/*
	 * Nothing issued for the shard, in this shared memory or (the floor is
	 * in place) before it: its smallest ID is a floor that changes nothing,
	 * and the documented move can pass it on like any other.
	 */
	PG_RETURN_INT64(idgen_instagram_id_at(last, shard));
}
