/* idgen--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION idgen" to load this file. \quit

--
-- Durable state, used only in the database named by idgen.database, where
-- the keeper background worker keeps it (and creates this extension if it
-- is missing).  Sequences are WAL-logged, so the values survive crashes and
-- reach physical standbys.  Nobody else needs to touch them.
--

CREATE SEQUENCE idgen_hwm AS bigint MINVALUE 0 START 0;
COMMENT ON SEQUENCE idgen_hwm IS
'idgen: durable ID reservation (Unix ms); no ID is issued at or beyond it';

CREATE SEQUENCE idgen_epoch AS bigint
	MINVALUE -9223372036854775808 START 0;
COMMENT ON SEQUENCE idgen_epoch IS
'idgen: idgen.epoch (Unix ms) under which IDs were issued; a different epoch is refused';

REVOKE ALL ON SEQUENCE idgen_hwm, idgen_epoch FROM PUBLIC;

--
-- Generators.  VOLATILE: every call returns a new ID.  PARALLEL SAFE: their
-- state lives in shared memory, not in the backend, so a parallel worker
-- issues from the same generator as its leader.
--

CREATE FUNCTION snowflake_id()
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_snowflake_id'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_id() IS
'next snowflake ID: 41-bit ms since idgen.epoch | 10-bit idgen.node_id | 12-bit sequence';

-- not STRICT: a NULL shard raises an error instead of yielding a NULL key
CREATE FUNCTION instagram_id(shard integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_instagram_id'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION instagram_id(integer) IS
'next instagram ID of a logical shard (0..8191): 41-bit ms since idgen.epoch | 13-bit shard | 10-bit sequence';

-- Moving a shard between servers: issue only IDs above the given one of
-- that shard (the highest copied from its old server), durably.  Not for
-- PUBLIC: an ID far in the future would stall the shard.
CREATE FUNCTION instagram_id_advance(shard integer, id bigint)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_instagram_id_advance'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION instagram_id_advance(integer, bigint) IS
'make this server issue only IDs above the given ID for its shard (for moving a shard here)';

REVOKE EXECUTE ON FUNCTION instagram_id_advance(integer, bigint) FROM PUBLIC;

--
-- Decoders.  IMMUTABLE: they read no clock and no shared state.
--

CREATE FUNCTION snowflake_id_time(id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'idgen_snowflake_id_time'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_id_time(bigint) IS
'time (millisecond precision) encoded in a snowflake ID';

CREATE FUNCTION snowflake_id_node(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'idgen_snowflake_id_node'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_id_node(bigint) IS
'node id (0..1023) encoded in a snowflake ID';

CREATE FUNCTION snowflake_id_datacenter(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'idgen_snowflake_id_datacenter'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_id_datacenter(bigint) IS
'upper 5 bits of the node id of a snowflake ID (0..31)';

CREATE FUNCTION snowflake_id_worker(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'idgen_snowflake_id_worker'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_id_worker(bigint) IS
'lower 5 bits of the node id of a snowflake ID (0..31)';

CREATE FUNCTION snowflake_id_seq(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'idgen_snowflake_id_seq'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_id_seq(bigint) IS
'per-millisecond sequence (0..4095) of a snowflake ID';

CREATE FUNCTION snowflake_id_decode(id bigint,
	OUT "time" timestamptz, OUT node integer, OUT seq integer)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_snowflake_id_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_id_decode(bigint) IS
'all parts of a snowflake ID: time, node, seq';

CREATE FUNCTION instagram_id_time(id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'idgen_instagram_id_time'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION instagram_id_time(bigint) IS
'time (millisecond precision) encoded in an instagram ID';

CREATE FUNCTION instagram_id_shard(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'idgen_instagram_id_shard'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION instagram_id_shard(bigint) IS
'logical shard (0..8191) encoded in an instagram ID';

CREATE FUNCTION instagram_id_seq(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'idgen_instagram_id_seq'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION instagram_id_seq(bigint) IS
'per-millisecond sequence (0..1023) of an instagram ID';

CREATE FUNCTION instagram_id_decode(id bigint,
	OUT "time" timestamptz, OUT shard integer, OUT seq integer)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_instagram_id_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION instagram_id_decode(bigint) IS
'all parts of an instagram ID: time, shard, seq';

--
-- Builders.  *_from_time gives the smallest ID of a millisecond, for
-- "WHERE id >= x_from_time(t1) AND id < x_from_time(t2)" on the key.
--

CREATE FUNCTION snowflake_id_from_time(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_snowflake_id_from_time'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_id_from_time(timestamptz) IS
'smallest snowflake ID of the millisecond of ts, for range scans';

CREATE FUNCTION snowflake_id_from_parts(ts timestamptz, node integer, seq integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_snowflake_id_from_parts'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_id_from_parts(timestamptz, integer, integer) IS
'snowflake ID composed of a time (truncated to the ms), node and seq';

CREATE FUNCTION instagram_id_from_time(ts timestamptz, shard integer DEFAULT 0)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_instagram_id_from_time'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION instagram_id_from_time(timestamptz, integer) IS
'smallest instagram ID of the millisecond of ts (for the shard, default 0), for range scans';

CREATE FUNCTION instagram_id_from_parts(ts timestamptz, shard integer, seq integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_instagram_id_from_parts'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION instagram_id_from_parts(timestamptz, integer, integer) IS
'instagram ID composed of a time (truncated to the ms), shard and seq';

--
-- Monitoring.  VOLATILE: it reads the clock and live state.
--

CREATE FUNCTION idgen_status(
	OUT preloaded boolean,
	OUT node_id integer,
	OUT epoch timestamptz,
	OUT max_lead_ms integer,
	OUT max_wait_ms integer,
	OUT snowflake_last_time timestamptz,
	OUT snowflake_lead_ms bigint,
	OUT snowflake_issued bigint,
	OUT instagram_last_time timestamptz,
	OUT instagram_lead_ms bigint,
	OUT instagram_issued bigint,
	OUT instagram_shards_used integer,
	OUT borrowed bigint,
	OUT waits bigint,
	OUT clock_regressions bigint,
	OUT keeper_state text,
	OUT keeper_message text,
	OUT reserved_until timestamptz,
	OUT reservation_ms integer,
	OUT reservation_writes bigint,
	OUT reservation_waits bigint,
	OUT snowflake_range_end timestamptz,
	OUT instagram_range_end timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_status'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_status() IS
'idgen configuration and live generator state, one row';
