-- What scripts/try-it.sh shows: idgen at work on a throwaway server
-- (idgen.node_id = 1).
\pset footer off
\echo
\echo '--- a table keyed by snowflake_id(), the time decoded into a generated column'
CREATE EXTENSION IF NOT EXISTS idgen;
-- A stored column gets the epoch written out (this server's idgen.epoch):
-- the one-argument snowflake_id_time(id) reads the setting, and would
-- store other times on a server with another epoch.
CREATE TABLE orders (
    id         bigint PRIMARY KEY DEFAULT snowflake_id(),
    created_at timestamptz GENERATED ALWAYS AS (snowflake_id_time(id, '2024-01-01+00')) STORED,
    item       text NOT NULL
);
INSERT INTO orders (item) VALUES ('coffee'), ('tea'), ('cake');
INSERT INTO orders (item) SELECT 'bulk #' || g FROM generate_series(1, 100000) g;
SELECT o.id, o.item, d.time, d.node, d.seq
  FROM orders o, snowflake_id_decode(o.id) d
 ORDER BY o.id LIMIT 5;

\echo '--- 100,003 rows, all keys distinct and from node 1'
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       min(snowflake_id_node(id)) AS node, max(snowflake_id_seq(id)) AS highest_seq_in_a_ms
  FROM orders;

\echo '--- the last second of orders, by a range scan on the primary key'
EXPLAIN (COSTS OFF)
SELECT count(*) FROM orders
 WHERE id >= snowflake_id_from_time(now() - interval '1 second')
   AND id <  snowflake_id_from_time(now() + interval '1 second');

\echo '--- Instagram style: one table per logical shard, each with its own DEFAULT'
CREATE SCHEMA shard_17;
CREATE SCHEMA shard_4242;
CREATE TABLE shard_17.photos   (id bigint PRIMARY KEY DEFAULT instagram_id(17),   caption text);
CREATE TABLE shard_4242.photos (id bigint PRIMARY KEY DEFAULT instagram_id(4242), caption text);
INSERT INTO shard_17.photos (caption)   VALUES ('sunset'), ('beach');
INSERT INTO shard_4242.photos (caption) VALUES ('mountain');
SELECT p.id, p.caption, d.*
  FROM (SELECT * FROM shard_17.photos UNION ALL SELECT * FROM shard_4242.photos) p,
       instagram_id_decode(p.id) d
 ORDER BY p.id;

\echo '--- the generator state, and when each layout runs out'
\x on
SELECT * FROM idgen_status();
