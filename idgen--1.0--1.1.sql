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
-- ==== For applications: text forms and adopting idgen on existing
-- ==== tables (issue 12; README "IDs in JSON", "Adopting idgen on an
-- ==== existing table").  Batches and UUIDs are in their own sections.
--

-- Fixed-width text forms whose byte order (COLLATE "C") is the numeric
-- order; exact inverses over 0 .. 2^63-1.
CREATE FUNCTION idgen_encode(id bigint, alphabet text DEFAULT 'crockford32')
RETURNS text
AS 'MODULE_PATHNAME', 'idgen_encode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_encode(bigint, text) IS
'fixed-width text form of a non-negative ID (crockford32: 13 symbols, base62: 11) that sorts like the number under COLLATE "C"';

CREATE FUNCTION idgen_decode_text(txt text, alphabet text DEFAULT 'crockford32')
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_decode_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_decode_text(text, text) IS
'the ID whose idgen_encode() text form this is (crockford32: case-insensitive, O=0, I=L=1, hyphens ignored)';
