/*-------------------------------------------------------------------------
 *
 * backend/uuid.c
 *	  idgen_uuidv7() and idgen_flake128(): time-ordered 128-bit IDs.
 *
 * Both are generators of the same engine as snowflake_id() (shared/generator.c):
 * a position (ms << seq_bits) | seq under one server-wide spinlock, the
 * same clock policy, covered by the same durable reservation, floored the
 * same way after a restart.  Only the way a position becomes 16 bytes
 * differs.
 *
 * idgen_uuidv7() follows RFC 9562, section 5.7: 48-bit Unix ms | version 7
 * | 12-bit rand_a | variant 10 | 62-bit rand_b.  rand_a is a counter
 * (RFC 9562 section 6.2, method 1: a fixed-length dedicated counter), so
 * the UUIDs of one server are strictly increasing across all backends
 * (PostgreSQL 18's uuidv7() is monotonic only within one backend); a full
 * millisecond borrows the next, as snowflake_id() does.  rand_b starts
 * with the 10-bit node id, which keeps servers apart, and the remaining 52
 * bits are random.  uuid_extract_timestamp() reads the time back.
 *
 * idgen_flake128() is Boundary's flake (seed 003): 64-bit Unix ms | 48-bit
 * worker | 16-bit sequence, big-endian.  The worker field holds the node
 * id.  It is not an RFC 9562 UUID (no version or variant bits); the uuid
 * type is only its 128-bit container, and it sorts as its bytes do.
 *
 * IDENTIFICATION
 *	  src/backend/uuid.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/pg_prng.h"
#include "fmgr.h"
#include "utils/uuid.h"

#include "idgen.h"

/* Store the low "bytes" bytes of value big-endian at out. */
static inline void
idgen_put_be(unsigned char *out, uint64 value, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
	{
		out[i] = (unsigned char) (value & 0xFF);
		value >>= 8;
	}
}

PG_FUNCTION_INFO_V1(idgen_uuidv7);
Datum
idgen_uuidv7(PG_FUNCTION_ARGS)
{
	IdgenShared *shared = idgen_require_shared("idgen_uuidv7");
	pg_uuid_t  *uuid = palloc(sizeof(pg_uuid_t));
	uint64		position;
	uint64		unix_ms;
	uint64		counter;
	uint64		rand_b;
	int32		node;

	position = idgen_issue_with_node(&shared->uuidv7.gen, &idgen_uuidv7_layout,
									 1, "idgen_uuidv7", &node);
	unix_ms = (position >> IDGEN_UUIDV7_SEQ_BITS) + idgen_epoch_unix_ms;
	counter = position & ((1 << IDGEN_UUIDV7_SEQ_BITS) - 1);

	/* 62 bits: the node id, then 52 random bits */
	rand_b = ((uint64) node << 52) |
		(pg_prng_uint64(&pg_global_prng_state) & ((UINT64CONST(1) << 52) - 1));

	idgen_put_be(uuid->data, unix_ms, 6);
	idgen_put_be(uuid->data + 6, (UINT64CONST(0x7) << 12) | counter, 2);
	idgen_put_be(uuid->data + 8, (UINT64CONST(0x2) << 62) | rand_b, 8);
	PG_RETURN_UUID_P(uuid);
}

PG_FUNCTION_INFO_V1(idgen_flake128);
Datum
idgen_flake128(PG_FUNCTION_ARGS)
{
	IdgenShared *shared = idgen_require_shared("idgen_flake128");
	pg_uuid_t  *uuid = palloc(sizeof(pg_uuid_t));
	uint64		position;
	int32		node;

	position = idgen_issue_with_node(&shared->flake128.gen,
									 &idgen_flake128_layout, 1,
									 "idgen_flake128", &node);

	idgen_put_be(uuid->data,
				 (position >> IDGEN_FLAKE128_SEQ_BITS) + idgen_epoch_unix_ms, 8);
	idgen_put_be(uuid->data + 8, (uint64) node, 6);
	idgen_put_be(uuid->data + 14,
				 position & ((1 << IDGEN_FLAKE128_SEQ_BITS) - 1), 2);
	PG_RETURN_UUID_P(uuid);
}
