/*-------------------------------------------------------------------------
 *
 * snowflake.c
 *	  snowflake_id(): Twitter's layout, one node-wide generator.
 *
 * All backends of all databases share one generator, so IDs of one node
 * are strictly increasing however many sessions call it.
 *
 * IDENTIFICATION
 *	  src/snowflake.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "idgen.h"

/* The node-wide generator is never switched off. */
static void
idgen_snowflake_not_owned(IdgenGenerator *gen)
{
	elog(ERROR, "snowflake generator is switched off");
}

const IdgenLayout idgen_snowflake_layout = {
	.name = "snowflake",
	.funcname = "snowflake_id",
	.seq_bits = IDGEN_SNOWFLAKE_SEQ_BITS,
	.ms_limit = IDGEN_SNOWFLAKE_MS_LIMIT,
	.report_not_owned = idgen_snowflake_not_owned,
};

PG_FUNCTION_INFO_V1(idgen_snowflake_id);
Datum
idgen_snowflake_id(PG_FUNCTION_ARGS)
{
	IdgenShared *shared = idgen_require_shared("snowflake_id");
	uint64		position;

	/*
	 * A forgotten node id on a second server would silently duplicate the
	 * first server's IDs, so there is no default.
	 */
	if (unlikely(idgen_node_id < 0))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("\"idgen.node_id\" is not set"),
				 errdetail("snowflake_id() embeds the node id in every ID, and servers sharing one would issue duplicates."),
				 errhint("Set \"idgen.node_id\" to a value from 0 to %d that no other server uses, and restart the server.",
						 IDGEN_SNOWFLAKE_MAX_NODE)));

	position = idgen_issue(&shared->snowflake.gen, &idgen_snowflake_layout);

	PG_RETURN_INT64(idgen_snowflake_compose(position >> IDGEN_SNOWFLAKE_SEQ_BITS,
											idgen_node_id,
											position & IDGEN_SNOWFLAKE_MAX_SEQ));
}
