--
-- The generators where users put them: column DEFAULTs, INSERT ... SELECT,
-- COPY, UPDATE, per-shard defaults, and decoders in generated columns and
-- expression indexes.
--
\set VERBOSITY terse

CREATE TABLE orders (
    id bigint PRIMARY KEY DEFAULT snowflake_id(),
    created_at timestamptz GENERATED ALWAYS AS (snowflake_id_time(id)) STORED,
    item text NOT NULL
);

INSERT INTO orders (item) VALUES ('one'), ('two'), ('three');
INSERT INTO orders (item) SELECT 'bulk ' || g FROM generate_series(1, 10000) g;
COPY orders (item) FROM stdin;
copied a
copied b
copied c
\.

-- every row got a distinct key from this node; order of the key follows
-- insertion order; the generated column agrees with the decoder
SELECT count(*) AS rows,
       count(DISTINCT id) = count(*) AS distinct_ids,
       bool_and(snowflake_id_node(id) = 37) AS node_ok,
       bool_and(created_at = snowflake_id_time(id)) AS generated_ok
  FROM orders;
SELECT array_agg(item ORDER BY id) FILTER (WHERE item NOT LIKE 'bulk %') AS in_key_order
  FROM orders;

-- UPDATE: a new key for every row, all distinct and above the old ones
CREATE TEMP TABLE old_max AS SELECT max(id) AS m FROM orders;
UPDATE orders SET id = snowflake_id();
SELECT count(DISTINCT id) = count(*) AS distinct_after_update,
       min(id) > (SELECT m FROM old_max) AS above_old
  FROM orders;

-- Instagram style: a table per logical shard, each with its own default
CREATE SCHEMA shard_5;
CREATE SCHEMA shard_6;
CREATE TABLE shard_5.photos (id bigint PRIMARY KEY DEFAULT instagram_id(5), caption text);
CREATE TABLE shard_6.photos (id bigint PRIMARY KEY DEFAULT instagram_id(6), caption text);
INSERT INTO shard_5.photos (caption) SELECT 'p' || g FROM generate_series(1, 3000) g;
INSERT INTO shard_6.photos (caption) SELECT 'p' || g FROM generate_series(1, 3000) g;
COPY shard_6.photos (caption) FROM stdin;
copied
\.
SELECT instagram_id_shard(id) AS shard, count(*) AS rows
  FROM (SELECT id FROM shard_5.photos UNION ALL SELECT id FROM shard_6.photos) u
 GROUP BY 1 ORDER BY 1;
SELECT count(DISTINCT id) AS distinct_ids
  FROM (SELECT id FROM shard_5.photos UNION ALL SELECT id FROM shard_6.photos) u;

-- or one table with a shard column (here: by user), the shard computed from it
CREATE TABLE likes (
    user_id int NOT NULL,
    id bigint NOT NULL,
    PRIMARY KEY (id)
);
CREATE FUNCTION likes_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.id := instagram_id(NEW.user_id % 8192);
    RETURN NEW;
END $$;
CREATE TRIGGER likes_id BEFORE INSERT ON likes FOR EACH ROW EXECUTE FUNCTION likes_id();
INSERT INTO likes (user_id, id) SELECT g, 0 FROM generate_series(1, 20000) g;
SELECT count(*) AS rows,
       bool_and(instagram_id_shard(id) = user_id % 8192) AS shard_follows_user
  FROM likes;

-- decoding rows
SELECT d.node, count(*) AS rows,
       count(*) FILTER (WHERE (d.time, d.node, d.seq) IS DISTINCT FROM
                              (o.created_at, snowflake_id_node(o.id), snowflake_id_seq(o.id))) AS decode_mismatch
  FROM orders o, snowflake_id_decode(o.id) d
 GROUP BY d.node;

DROP TABLE orders, likes, shard_5.photos, shard_6.photos;
DROP FUNCTION likes_id();
DROP SCHEMA shard_5, shard_6;
