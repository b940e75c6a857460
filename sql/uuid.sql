--
-- idgen_uuidv7(): RFC 9562 version 7; idgen_flake128(): Boundary's flake.
-- Properties only: version and variant bits, the node id where it belongs,
-- the time near the clock, strict order and uniqueness.
--
-- the clock read just before and just after each row's IDs
CREATE TEMP TABLE u AS
SELECT n, clock_timestamp() AS before, idgen_uuidv7() AS v7,
       idgen_flake128() AS flake, clock_timestamp() AS after
  FROM generate_series(1, 100000) n;

-- the fields, read from the hex digits
CREATE TEMP VIEW fields AS
SELECT n, v7, flake,
       floor(extract(epoch FROM before) * 1000)::bigint AS before_ms,
       floor(extract(epoch FROM after) * 1000)::bigint AS after_ms,
       ('x' || substr(h7, 1, 12))::bit(48)::bigint AS v7_ms,
       substr(h7, 13, 1) AS v7_version,
       ('x' || substr(h7, 17, 1))::bit(4)::int >> 2 AS v7_variant,
       (('x' || substr(h7, 17, 16))::bit(64)::bigint >> 52) & 1023 AS v7_node,
       ('x' || substr(hf, 1, 16))::bit(64)::bigint AS flake_ms,
       ('x' || substr(hf, 17, 12))::bit(48)::bigint AS flake_worker,
       ('x' || substr(hf, 29, 4))::bit(16)::int AS flake_seq
  FROM (SELECT *, replace(v7::text, '-', '') AS h7,
               replace(flake::text, '-', '') AS hf FROM u) s;

SELECT count(*) AS uuids,
       count(DISTINCT v7) = count(*) AS v7_distinct,
       count(DISTINCT flake) = count(*) AS flake_distinct,
       bool_and(v7_version = '7') AS version_7,
       bool_and(v7_variant = 2) AS variant_rfc9562,
       bool_and(v7_node = 37) AS v7_node_ok,
       bool_and(flake_worker = 37) AS flake_worker_ok,
       max(flake_seq) < 65536 AS flake_seq_ok
  FROM fields;

-- strictly increasing in the order issued, both forms
SELECT bool_and(v7 > prev_v7) AS v7_increasing,
       bool_and(flake > prev_flake) AS flake_increasing
  FROM (SELECT v7, flake, lag(v7) OVER (ORDER BY n) AS prev_v7,
               lag(flake) OVER (ORDER BY n) AS prev_flake FROM u) s;

-- the time is the wall clock's, in Unix ms: not before the clock read
-- just before the row, not beyond the one read after it plus max_lead
SELECT bool_and(v7_ms >= before_ms) AS v7_not_behind,
       bool_and(v7_ms <= after_ms + 2000) AS v7_within_lead,
       bool_and(flake_ms >= before_ms) AS flake_not_behind,
       bool_and(flake_ms <= after_ms + 2000) AS flake_within_lead
  FROM fields;

SELECT pg_column_size(idgen_uuidv7()) AS bytes,
       idgen_uuidv7() < idgen_uuidv7() AS next_is_greater,
       idgen_flake128() < idgen_flake128() AS flake_next_is_greater;
