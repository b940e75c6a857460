--
-- Batches: n IDs in one lock round trip, strictly increasing, and unique
-- with every other call.
--
\set SHOW_CONTEXT never

SELECT snowflake_id() AS before \gset
SELECT snowflake_id_batch(1000) AS b \gset
SELECT snowflake_id() AS after \gset
SELECT cardinality(:'b'::bigint[]) AS n,
       count(DISTINCT id) AS distinct_ids,
       bool_and(id > prev) AS strictly_increasing,
       min(id) > :before AS above_earlier_call,
       max(id) < :after AS below_later_call,
       bool_and(snowflake_id_node(id) = 37) AS node_ok
  FROM (SELECT id, lag(id) OVER (ORDER BY ord) AS prev
          FROM unnest(:'b'::bigint[]) WITH ORDINALITY u(id, ord)) s;

-- the largest batch; a shard's batch spans many milliseconds
SELECT cardinality(snowflake_id_batch(100000)) AS largest;
SELECT instagram_id(5) AS before \gset
SELECT count(*) AS n, count(DISTINCT id) AS distinct_ids,
       bool_and(id > prev) AS strictly_increasing,
       min(id) > :before AS above_earlier_call,
       bool_and(instagram_id_shard(id) = 5) AS shard_ok,
       count(DISTINCT instagram_id_time(id)) >= 97 AS spans_97_ms_or_more
  FROM (SELECT id, lag(id) OVER (ORDER BY ord) AS prev
          FROM unnest(instagram_id_batch(5, 100000)) WITH ORDINALITY u(id, ord)) s;

-- batches and single calls mixed in one statement never collide
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids
  FROM (SELECT unnest(snowflake_id_batch(97)) AS id FROM generate_series(1, 200)
        UNION ALL
        SELECT snowflake_id() FROM generate_series(1, 20000)) s;

-- bounds: 1..100000, never NULL
SELECT snowflake_id_batch(0);
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id_batch(100001);
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id_batch(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_batch(NULL, 10);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_batch(8192, 10);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_batch(5, -1);
\echo :LAST_ERROR_SQLSTATE
-- a failed batch consumed nothing: the next ID follows the last good one
-- in the same or a later millisecond, and the issued counter moved only
-- for the good calls
SELECT snowflake_issued AS issued0 FROM idgen_status() \gset
SELECT snowflake_id_batch(100001);
SELECT cardinality(snowflake_id_batch(10)) AS ten;
SELECT snowflake_issued - :issued0 AS issued_since FROM idgen_status();
