/*-------------------------------------------------------------------------
 *
 * backend/snowflake.c
 *	  snowflake_id(): Twitter's layout, one node-wide generator.
 *
 * All backends of all databases share one generator, so IDs of one node
 * are strictly increasing however many sessions call it.  Its bits are the
 * snowflake preset's (base/builtin.c), composed as a named generator's.
 *
 * IDENTIFICATION
 *	  src/backend/snowflake.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"

#include "idgen.h"

PG_FUNCTION_INFO_V1(idgen_snowflake_id);
Datum
idgen_snowflake_id(PG_FUNCTION_ARGS)
{
	IdgenShared *shared = idgen_require_shared("snowflake_id");
	uint64		position;
	int32		node;

	position = idgen_issue_with_node(&shared->snowflake.gen,
									 &idgen_builtin_snowflake.layout, 1,
									 "snowflake_id", &node);
	PG_RETURN_INT64(idgen_snowflake_id_at(position, node));
}

/*
 * snowflake_id_batch(n): n IDs in one lock round trip, strictly increasing
 * and unique with every other call, for clients that assign keys before
 * inserting.  Not STRICT: a NULL count is an error, not a NULL array.
 */
PG_FUNCTION_INFO_V1(idgen_snowflake_id_batch);
Datum
idgen_snowflake_id_batch(PG_FUNCTION_ARGS)
{
	int32		n = idgen_check_batch_size(fcinfo, 0);
	IdgenShared *shared = idgen_require_shared("snowflake_id_batch");
	Datum	   *ids = palloc(sizeof(Datum) * n);
	uint64		position;
	int32		node;

	position = idgen_issue_with_node(&shared->snowflake.gen,
									 &idgen_builtin_snowflake.layout, n,
									 "snowflake_id_batch", &node);
	for (int i = 0; i < n; i++, position++)
		ids[i] = Int64GetDatum(idgen_snowflake_id_at(position, node));
	PG_RETURN_ARRAYTYPE_P(construct_array(ids, n, INT8OID, sizeof(int64),
										  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}
