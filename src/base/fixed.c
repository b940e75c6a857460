/*-------------------------------------------------------------------------
 *
 * base/fixed.c
 *	  The layouts of the fixed generators: snowflake, instagram, and the
 *	  two 128-bit ones.
 *
 * Plain data that the engine and the keeper's floors use, and that the
 * decoders check the presets they read the bits from against
 * (base/decode.c);
 * the generators themselves live in shared memory (shared/shmem.c keeps the table
 * of them) and their SQL functions in backend/snowflake.c, backend/instagram.c and backend/uuid.c.
 * Every fixed layout counts milliseconds since idgen.epoch.
 *
 * IDENTIFICATION
 *	  src/base/fixed.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "idgen.h"

const IdgenLayout idgen_snowflake_layout = {
	.name = "snowflake",
	.funcname = "snowflake_id",
	.seq_bits = IDGEN_SNOWFLAKE_SEQ_BITS,
	.tick_limit = IDGEN_SNOWFLAKE_MS_LIMIT,
	IDGEN_LAYOUT_MS_SINCE_EPOCH,
};

const IdgenLayout idgen_instagram_layout = {
	.name = "instagram",
	.funcname = "instagram_id",
	.seq_bits = IDGEN_INSTAGRAM_SEQ_BITS,
	.tick_limit = IDGEN_INSTAGRAM_MS_LIMIT,
	IDGEN_LAYOUT_MS_SINCE_EPOCH,
};

/* positions use ms since idgen.epoch, like every generator */
const IdgenLayout idgen_uuidv7_layout = {
	.name = "uuidv7",
	.funcname = "idgen_uuidv7",
	.seq_bits = IDGEN_UUIDV7_SEQ_BITS,
	.tick_limit = IDGEN_UUID_MS_LIMIT,
	IDGEN_LAYOUT_MS_SINCE_EPOCH,
};

const IdgenLayout idgen_flake128_layout = {
	.name = "flake128",
	.funcname = "idgen_flake128",
	.seq_bits = IDGEN_FLAKE128_SEQ_BITS,
	.tick_limit = IDGEN_UUID_MS_LIMIT,
	IDGEN_LAYOUT_MS_SINCE_EPOCH,
};
