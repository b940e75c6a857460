--
-- The generators: uniqueness, strict order, and decoding of what they issue.
-- (This server runs with idgen.node_id = 37; see idgen.conf.)
--
\set VERBOSITY terse

-- volatile: two calls in one row differ, and later calls are larger
SELECT a < b AS sf_increasing FROM (SELECT snowflake_id() AS a, snowflake_id() AS b) s;
SELECT a < b AS ig_increasing FROM (SELECT instagram_id(3) AS a, instagram_id(3) AS b) s;

-- 2,000,000 IDs from one statement, for each generator: far more than one
-- millisecond's sequence space, so IDs roll into later milliseconds (and run
-- ahead of the clock) rather than wrap.  All distinct, strictly increasing in
-- call order, and decoding to this node or shard.
--
-- Each row also reads the wall clock just before and just after its call
-- (a row's expressions are evaluated left to right).  An ID's time is the
-- clock's millisecond at the call, or later by at most max_lead, so it is
-- above the reading before less 1 ms (the clock's microseconds are cut
-- off), and at most max_lead above the reading after.
SELECT count(*) AS ids,
       count(DISTINCT id) = count(*) AS all_distinct,
       bool_and(id > prev) AS strictly_increasing,
       bool_and(snowflake_id_node(id) = 37) AS node_ok,
       bool_and(snowflake_id_time(id) > before - interval '1 ms') AS not_behind_clock,
       bool_and(snowflake_id_time(id) <= after + current_setting('idgen.max_lead')::interval) AS within_max_lead
  FROM (SELECT id, before, after, lag(id) OVER (ORDER BY n) AS prev
          FROM (SELECT n, clock_timestamp() AS before, snowflake_id() AS id, clock_timestamp() AS after
                  FROM generate_series(1, 2000000) n) g) s;

-- (that a millisecond holds exactly 1,024 IDs of a shard, and no more, is
-- proven under a frozen clock in t/004: here it would depend on the speed)
SELECT count(*) AS ids,
       count(DISTINCT id) = count(*) AS all_distinct,
       bool_and(id > prev) AS strictly_increasing,
       bool_and(instagram_id_shard(id) = 1) AS shard_ok,
       bool_and(instagram_id_time(id) > before - interval '1 ms') AS not_behind_clock,
       bool_and(instagram_id_time(id) <= after + current_setting('idgen.max_lead')::interval) AS within_max_lead
  FROM (SELECT id, before, after, lag(id) OVER (ORDER BY n) AS prev
          FROM (SELECT n, clock_timestamp() AS before, instagram_id(1) AS id, clock_timestamp() AS after
                  FROM generate_series(1, 2000000) n) g) s;

-- many shards in one statement: each shard's IDs increase, all are
-- distinct, and each decodes to its own shard
SELECT count(*) AS ids,
       count(DISTINCT shard) AS shards,
       count(DISTINCT id) = count(*) AS all_distinct,
       bool_and(id > prev OR prev IS NULL) AS per_shard_increasing,
       bool_and(instagram_id_shard(id) = shard) AS shard_ok
  FROM (SELECT shard, id, lag(id) OVER (PARTITION BY shard ORDER BY n) AS prev
          FROM (SELECT n, n % 8192 AS shard, instagram_id(n % 8192) AS id
                  FROM generate_series(1, 100000) n) g) s;

-- the first and last shard are usable
SELECT instagram_id_shard(instagram_id(0)) AS first_shard,
       instagram_id_shard(instagram_id(8191)) AS last_shard;
