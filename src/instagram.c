/*-------------------------------------------------------------------------
 *
 * instagram.c
 *	  instagram_id(shard): Instagram's sharded layout, one generator per shard.
 *
 * Each of the 8,192 logical shards has its own generator, so IDs of one
 * shard are strictly increasing and shards never contend with each other.
 * Unlike Instagram's original nextval() % 1024, a shard that uses up a
 * millisecond's 1,024 sequence values moves on to the next millisecond
 * instead of wrapping around to values already issued.
 *
 * IDENTIFICATION
 *	  src/instagram.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "idgen.h"

const IdgenLayout idgen_instagram_layout = {
	.name = "instagram",
	.funcname = "instagram_id",
	.seq_bits = IDGEN_INSTAGRAM_SEQ_BITS,
	.ms_limit = IDGEN_INSTAGRAM_MS_LIMIT,
};

/*
 * Not STRICT: a NULL shard is a mistake to report, never a silent NULL key.
 */
PG_FUNCTION_INFO_V1(idgen_instagram_id);
Datum
idgen_instagram_id(PG_FUNCTION_ARGS)
{
	IdgenShared *shared;
	int32		shard;
	uint64		position;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("shard must not be null"),
				 errhint("Pass the logical shard number, from 0 to %d.",
						 IDGEN_INSTAGRAM_MAX_SHARD)));
	shard = PG_GETARG_INT32(0);
	idgen_check_part("shard", shard, IDGEN_INSTAGRAM_MAX_SHARD);

	if (unlikely(!idgen_owns_shard(shard)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shard %d is not owned by this server", shard),
				 errdetail("\"idgen.shards\" is \"%s\".", idgen_shards_string),
				 errhint("Generate IDs for shard %d on the server that owns it. To move it here, remove it from the other server's \"idgen.shards\", copy its rows, call instagram_id_advance() with its highest ID, then add it to \"idgen.shards\" here.",
						 shard)));

	shared = idgen_require_shared("instagram_id");
	position = idgen_issue(&shared->instagram[shard].gen,
						   &idgen_instagram_layout);

	PG_RETURN_INT64(idgen_instagram_compose(position >> IDGEN_INSTAGRAM_SEQ_BITS,
											shard,
											position & IDGEN_INSTAGRAM_MAX_SEQ));
}

/*
 * instagram_id_advance(shard, id): make this server's generator for the
 * shard issue only IDs above "id", durably.  For moving a shard between
 * servers: the receiving server's clock may be behind the IDs the old owner
 * issued, and only this makes its new IDs sort above them.  Returns once
 * the reservation covers id's millisecond, so a restart cannot undo it.
 */
PG_FUNCTION_INFO_V1(idgen_instagram_id_advance);
Datum
idgen_instagram_id_advance(PG_FUNCTION_ARGS)
{
	int32		shard = PG_GETARG_INT32(0);
	int64		id = PG_GETARG_INT64(1);
	IdgenShared *shared;
	int64		ms;

	idgen_check_part("shard", shard, IDGEN_INSTAGRAM_MAX_SHARD);
	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ID does not belong to shard %d", shard),
				 errdetail("Instagram IDs are never negative.")));
	if (((id >> IDGEN_INSTAGRAM_SHARD_SHIFT) & IDGEN_INSTAGRAM_MAX_SHARD) != shard)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ID does not belong to shard %d", shard),
				 errdetail("It is an ID of shard %d.",
						   (int) ((id >> IDGEN_INSTAGRAM_SHARD_SHIFT) & IDGEN_INSTAGRAM_MAX_SHARD))));

	shared = idgen_require_shared("instagram_id_advance");
	idgen_refuse_in_recovery("instagram_id_advance");
	ms = id >> IDGEN_INSTAGRAM_TIME_SHIFT;
	idgen_raise_position(&shared->instagram[shard].gen,
						 ((uint64) ms << IDGEN_INSTAGRAM_SEQ_BITS) |
						 (id & IDGEN_INSTAGRAM_MAX_SEQ));
	idgen_keeper_wait(ms, idgen_clock_monotonic_ms() + idgen_max_wait_ms);
	PG_RETURN_VOID();
}
