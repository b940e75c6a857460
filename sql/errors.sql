--
-- Bad input: each error with its SQLSTATE (DESIGN.md section 5), and a
-- failed call leaves the generators as they were.
--
\set SHOW_CONTEXT never
SET timezone = 'UTC';
SELECT epoch AS epoch FROM idgen_status() \gset

-- instagram_id(): NULL shard is an error, never a NULL key (22004)
SELECT instagram_id(NULL);
\echo :LAST_ERROR_SQLSTATE
-- shard out of range (22003)
SELECT instagram_id(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id(8192);
\echo :LAST_ERROR_SQLSTATE

-- a NULL shard in a column DEFAULT fails the INSERT instead of storing NULL
CREATE TABLE t_null_shard (shard int, id bigint DEFAULT instagram_id(NULL));
INSERT INTO t_null_shard (shard) VALUES (1);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS rows FROM t_null_shard;
DROP TABLE t_null_shard;

-- decoders reject negative IDs (22023)
SELECT snowflake_id_time(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id_node(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id_seq(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id_datacenter(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id_worker(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM snowflake_id_decode(-9223372036854775808);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_time(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_shard(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_seq(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM instagram_id_decode(-1);
\echo :LAST_ERROR_SQLSTATE

-- builders range-check every part (22003)
SELECT snowflake_id_from_parts(:'epoch', 1024, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id_from_parts(:'epoch', -1, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id_from_parts(:'epoch', 0, 4096);
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id_from_parts(:'epoch', 0, -1);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_from_parts(:'epoch', 8192, 0);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_from_parts(:'epoch', 0, 1024);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_from_time(:'epoch', 8192);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_from_time(:'epoch', -1);
\echo :LAST_ERROR_SQLSTATE

-- times outside a layout's range (22003): before the epoch, infinite, and
-- the first millisecond past each layout's end
SELECT snowflake_id_from_time(:'epoch'::timestamptz - interval '1 ms');
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id_from_time('-infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id_from_time('infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id_from_time(:'epoch'::timestamptz + (1::bigint << 41) * interval '1 ms');
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_from_time(:'epoch'::timestamptz + (1::bigint << 40) * interval '1 ms');
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_from_parts(:'epoch'::timestamptz + (1::bigint << 40) * interval '1 ms', 0, 0);
\echo :LAST_ERROR_SQLSTATE
-- ... while the last millisecond of each range is accepted
SELECT snowflake_id_from_time(:'epoch'::timestamptz + ((1::bigint << 41) - 1) * interval '1 ms') > 0 AS sf_last_ok,
       instagram_id_from_time(:'epoch'::timestamptz + ((1::bigint << 40) - 1) * interval '1 ms') > 0 AS ig_last_ok;

-- STRICT builders and decoders: NULL in, NULL out
SELECT snowflake_id_time(NULL) IS NULL AS a, instagram_id_from_time(NULL) IS NULL AS b,
       snowflake_id_from_parts(now(), NULL, 0) IS NULL AS c;

-- a failed call does not disturb the generator: the next ID is still
-- above the last one, and only the good calls were counted
SELECT instagram_issued AS before_n FROM idgen_status() \gset
SELECT instagram_id(2) AS before_id \gset
SELECT instagram_id(9000);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id(2) > :before_id AS still_increasing,
       instagram_issued - :before_n AS issued_since
  FROM idgen_status();
