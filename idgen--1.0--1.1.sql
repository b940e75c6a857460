/* idgen--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.1'" to load this file. \quit

--
-- Moving an instagram shard between servers without a window for
-- duplicates (see README, "Moving a shard").
--

-- Durable floors set by instagram_id_advance(), kept by the keeper in the
-- database named by idgen.database (in other databases it stays empty).
-- Rows are only ever added; a shard's floor is its highest ID.  No index:
-- the keeper reads and writes it through the heap directly, by OID.
CREATE TABLE idgen_shard_floor (
	shard integer NOT NULL,
	id bigint NOT NULL
);
COMMENT ON TABLE idgen_shard_floor IS
'idgen: per-shard floors set by instagram_id_advance(); kept by the keeper';
REVOKE ALL ON TABLE idgen_shard_floor FROM PUBLIC;

-- Stops the shard on this server at once, statements already running
-- included, and returns the ID to pass to instagram_id_advance() on the
-- shard's new server.  Superuser only (checked in C too).
CREATE FUNCTION instagram_id_release(shard integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_instagram_id_release'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION instagram_id_release(integer) IS
'stop issuing IDs for the shard on this server at once; returns the highest ID it may have issued for it';

REVOKE EXECUTE ON FUNCTION instagram_id_release(integer) FROM PUBLIC;

-- instagram_id_advance() refuses an ID more than idgen.max_lead ahead of
-- the clock (it would stall the shard until the clock catches up) unless
-- force is true.  A separate function, not a default on the old one, so
-- that two-argument calls keep resolving to 1.0's.
CREATE FUNCTION instagram_id_advance(shard integer, id bigint, force boolean)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_instagram_id_advance'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION instagram_id_advance(integer, bigint, boolean) IS
'make this server issue only IDs above the given ID for its shard; force allows one beyond idgen.max_lead';

REVOKE EXECUTE ON FUNCTION instagram_id_advance(integer, bigint, boolean) FROM PUBLIC;

--
-- Batches: n IDs in one lock round trip, for clients that assign keys
-- before inserting.  Not STRICT: a NULL count or shard is an error, never a
-- NULL array.
--

CREATE FUNCTION snowflake_id_batch(n integer)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'idgen_snowflake_id_batch'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_id_batch(integer) IS
'n (1..100000) strictly increasing snowflake IDs, issued in one lock round trip';

CREATE FUNCTION instagram_id_batch(shard integer, n integer)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'idgen_instagram_id_batch'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION instagram_id_batch(integer, integer) IS
'n (1..100000) strictly increasing instagram IDs of a shard, issued in one lock round trip';

--
-- 128-bit IDs from the same engine: strictly increasing across all backends
-- of the server, covered by the durable reservation and the clock policy.
--

CREATE FUNCTION idgen_uuidv7()
RETURNS uuid
AS 'MODULE_PATHNAME', 'idgen_uuidv7'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION idgen_uuidv7() IS
'RFC 9562 version 7 UUID: Unix ms | 12-bit counter | idgen.node_id and random bits; strictly increasing across the server';

CREATE FUNCTION idgen_flake128()
RETURNS uuid
AS 'MODULE_PATHNAME', 'idgen_flake128'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION idgen_flake128() IS
'Boundary flake as a uuid: 64-bit Unix ms | 48-bit worker (idgen.node_id) | 16-bit sequence';
