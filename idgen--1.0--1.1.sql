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

--
-- Named generators: any snowflake-family layout, defined once in the
-- database named by idgen.database and used by name from every database.
--

-- The definitions.  Written only by idgen_create_generator() and
-- idgen_drop_generator(); read by the keeper, by OID.  In other databases
-- the table stays empty.
CREATE TABLE idgen_generator (
	name text NOT NULL,
	layout text NOT NULL,
	epoch timestamptz NOT NULL,
	unit_ms integer NOT NULL,
	created timestamptz NOT NULL DEFAULT pg_catalog.now(),
	dropped timestamptz,
	-- counter layouts (no time field) only; NULL otherwise
	prefetch integer,
	refill integer,
	stripes integer,
	owned text,
	segment bigint
);
CREATE UNIQUE INDEX idgen_generator_name ON idgen_generator (name);
COMMENT ON TABLE idgen_generator IS
'idgen: named generator definitions (in idgen.database); never changed once created';
REVOKE ALL ON TABLE idgen_generator FROM PUBLIC;
-- pg_dump carries the definitions (they are configuration, not state)
SELECT pg_catalog.pg_extension_config_dump('idgen_generator', '');

-- A definition never changes and is never deleted: IDs issued under it may
-- exist, and a name must not come back with another meaning.  Only the
-- dropped mark moves.
CREATE FUNCTION idgen_generator_guard()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog
AS $$
BEGIN
	IF TG_OP = 'DELETE' OR TG_OP = 'TRUNCATE' THEN
		RAISE EXCEPTION 'idgen generator definitions are never deleted'
			USING ERRCODE = '55000',
			      HINT = 'Use idgen_drop_generator(name, force => true).';
	END IF;
	IF NEW.name IS DISTINCT FROM OLD.name OR NEW.layout IS DISTINCT FROM OLD.layout
	   OR NEW.epoch IS DISTINCT FROM OLD.epoch OR NEW.unit_ms IS DISTINCT FROM OLD.unit_ms
	   OR NEW.created IS DISTINCT FROM OLD.created
	   OR NEW.prefetch IS DISTINCT FROM OLD.prefetch OR NEW.refill IS DISTINCT FROM OLD.refill
	   OR NEW.stripes IS DISTINCT FROM OLD.stripes OR NEW.owned IS DISTINCT FROM OLD.owned
	   OR NEW.segment IS DISTINCT FROM OLD.segment THEN
		RAISE EXCEPTION 'the definition of generator "%" cannot change', OLD.name
			USING ERRCODE = '55000',
			      HINT = 'Drop it and create one under a new name.';
	END IF;
	RETURN NEW;
END
$$;
COMMENT ON FUNCTION idgen_generator_guard() IS
'idgen: keeps named generator definitions unchanged';

CREATE TRIGGER idgen_generator_guard
	BEFORE UPDATE OR DELETE ON idgen_generator
	FOR EACH ROW EXECUTE FUNCTION idgen_generator_guard();
CREATE TRIGGER idgen_generator_guard_truncate
	BEFORE TRUNCATE ON idgen_generator
	FOR EACH STATEMENT EXECUTE FUNCTION idgen_generator_guard();

-- Counter generators' durable reservations, one row each, kept by the
-- keeper (by OID, through the heap: no index).
CREATE TABLE idgen_counter_state (
	name text NOT NULL,
	reserved bigint NOT NULL
);
COMMENT ON TABLE idgen_counter_state IS
'idgen: durable reservations of counter generators; kept by the keeper';
REVOKE ALL ON TABLE idgen_counter_state FROM PUBLIC;

CREATE FUNCTION idgen_create_generator(name text, layout text,
	epoch timestamptz DEFAULT NULL, unit interval DEFAULT NULL,
	prefetch integer DEFAULT NULL, refill integer DEFAULT NULL,
	stripes integer DEFAULT NULL, owned text DEFAULT NULL,
	segment bigint DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_create_generator'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION idgen_create_generator(text, text, timestamptz, interval, integer, integer, integer, text, bigint) IS
'define a named generator (superuser, in idgen.database): layout fields or a preset; epoch and unit default to the preset''s, else idgen.epoch and 1 ms; prefetch, refill, stripes, owned, segment for counter layouts';

REVOKE EXECUTE ON FUNCTION idgen_create_generator(text, text, timestamptz, interval, integer, integer, integer, text, bigint) FROM PUBLIC;

CREATE FUNCTION idgen_drop_generator(name text, force boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_drop_generator'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION idgen_drop_generator(text, boolean) IS
'stop a named generator everywhere (superuser, in idgen.database; needs force => true); its name stays reserved for its definition';

REVOKE EXECUTE ON FUNCTION idgen_drop_generator(text, boolean) FROM PUBLIC;

-- Not STRICT: a NULL name or shard is an error, never a NULL key.
CREATE FUNCTION idgen_next(name text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next(text) IS
'next ID of a named generator';

CREATE FUNCTION idgen_next(name text, shard integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next(text, integer) IS
'next ID of a shard of a named generator with a shard field';

CREATE FUNCTION idgen_next_int(name text)
RETURNS integer
AS 'MODULE_PATHNAME', 'idgen_next_int'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next_int(text) IS
'next ID of a counter generator of at most 31 bits, as integer (22003 rather than overflow)';

CREATE FUNCTION idgen_next_batch(name text, n integer)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'idgen_next_batch'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next_batch(text, integer) IS
'n (1..100000) strictly increasing IDs of a named generator, in one lock round trip';

CREATE FUNCTION idgen_next_batch(name text, n integer, shard integer)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'idgen_next_batch'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next_batch(text, integer, integer) IS
'n (1..100000) strictly increasing IDs of a shard of a named generator';

-- Decoding and building by name read the definition in shared memory:
-- STABLE (the registry belongs to the server, not to the arguments).
CREATE FUNCTION idgen_time(name text, id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'idgen_time'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_time(text, bigint) IS
'time (start of its tick) of an ID of a named generator';

CREATE FUNCTION idgen_decode(name text, id bigint)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'idgen_decode'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_decode(text, bigint) IS
'every field of an ID of a named generator by name, time as ISO 8601 UTC';

CREATE FUNCTION idgen_from_time(name text, ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_from_time'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_from_time(text, timestamptz) IS
'smallest ID of a named generator in the tick of ts, for range scans';

CREATE FUNCTION idgen_from_time(name text, ts timestamptz, shard integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_from_time'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_from_time(text, timestamptz, integer) IS
'smallest ID of a shard of a named generator in the tick of ts';

CREATE FUNCTION idgen_from_parts(name text, parts jsonb)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_from_parts'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_from_parts(text, jsonb) IS
'ID of a named generator composed of fields by name ({"time": ..., "worker": 3, ...}), each range-checked';

-- Foreign IDs: no definition, no server state.  Not STRICT so that the
-- epoch and unit can default to NULL (the preset's, else idgen.epoch and
-- 1 ms); a NULL ID or layout gives NULL.
CREATE FUNCTION idgen_decode_layout(id bigint, layout text,
	epoch timestamptz DEFAULT NULL, unit interval DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'idgen_decode_layout'
LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_decode_layout(bigint, text, timestamptz, interval) IS
'every field of an ID of any layout or preset, time as ISO 8601 UTC; needs no definition';

CREATE FUNCTION idgen_generators_info(
	OUT name text,
	OUT layout text,
	OUT epoch timestamptz,
	OUT unit_ms integer,
	OUT state text,
	OUT message text,
	OUT issued bigint,
	OUT borrowed bigint,
	OUT waits bigint,
	OUT last_time timestamptz,
	OUT lead_ms bigint,
	OUT generators integer,
	OUT counter_value bigint,
	OUT counter_reserved bigint,
	OUT prefetch integer,
	OUT refill integer,
	OUT stripes integer,
	OUT owned text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_generators_info'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_generators_info() IS
'named generators loaded on this server: definition and live state';

CREATE VIEW idgen_generators AS SELECT * FROM idgen_generators_info();
COMMENT ON VIEW idgen_generators IS
'named generators loaded on this server: definition and live state';
