--
-- Bit layouts, checked against IDs assembled here with plain bit
-- arithmetic from the documented field positions, independently of the C
-- code that builds them.
--
\set VERBOSITY terse
SELECT epoch AS epoch FROM idgen_status() \gset

-- snowflake: 0 | 41-bit ms | 10-bit node (5 datacenter + 5 worker) | 12-bit seq
CREATE TEMP TABLE sf_parts (ms bigint, node int, seq int);
INSERT INTO sf_parts VALUES
  (0, 0, 0), (1, 1, 1), (123456789, 37, 4095), (98765, 1023, 0),
  (5, 0, 4095), ((1::bigint << 41) - 1, 1023, 4095), ((1::bigint << 40), 512, 2048);

SELECT ms, node, seq,
       id >= 0 AS non_negative,
       snowflake_id_time(id) = :'epoch'::timestamptz + ms * interval '1 ms' AS time_ok,
       snowflake_id_node(id) = node AS node_ok,
       snowflake_id_seq(id) = seq AS seq_ok,
       snowflake_id_datacenter(id) = node >> 5 AS dc_ok,
       snowflake_id_worker(id) = node & 31 AS worker_ok,
       snowflake_id_decode(id) = (:'epoch'::timestamptz + ms * interval '1 ms', node, seq) AS decode_ok,
       snowflake_id_from_parts(:'epoch'::timestamptz + ms * interval '1 ms', node, seq) = id AS build_ok
  FROM (SELECT *, (ms << 22) | (node::bigint << 12) | seq AS id FROM sf_parts) s
 ORDER BY ms, node, seq;

-- the largest snowflake ID is the largest bigint: bit 63 always stays 0
SELECT snowflake_id_from_parts(:'epoch'::timestamptz + ((1::bigint << 41) - 1) * interval '1 ms', 1023, 4095)
       = 9223372036854775807 AS max_is_int8_max;

-- instagram: 41-bit ms | 13-bit shard | 10-bit seq
CREATE TEMP TABLE ig_parts (ms bigint, shard int, seq int);
INSERT INTO ig_parts VALUES
  (0, 0, 0), (1, 1, 1), (123456789, 8191, 1023), (98765, 4096, 0),
  (5, 0, 1023), ((1::bigint << 40) - 1, 8191, 1023);

SELECT ms, shard, seq,
       id >= 0 AS non_negative,
       instagram_id_time(id) = :'epoch'::timestamptz + ms * interval '1 ms' AS time_ok,
       instagram_id_shard(id) = shard AS shard_ok,
       instagram_id_seq(id) = seq AS seq_ok,
       instagram_id_decode(id) = (:'epoch'::timestamptz + ms * interval '1 ms', shard, seq) AS decode_ok,
       instagram_id_from_parts(:'epoch'::timestamptz + ms * interval '1 ms', shard, seq) = id AS build_ok
  FROM (SELECT *, (ms << 23) | (shard::bigint << 10) | seq AS id FROM ig_parts) s
 ORDER BY ms, shard, seq;

-- the last instagram millisecond before the sign bit gives the largest bigint
SELECT instagram_id_from_parts(:'epoch'::timestamptz + ((1::bigint << 40) - 1) * interval '1 ms', 8191, 1023)
       = 9223372036854775807 AS max_is_int8_max;

-- decode(): usable as a set-returning FROM item, with named columns
SELECT d.node, d.seq, d.time = :'epoch'::timestamptz + interval '1 ms' AS time_ok
  FROM snowflake_id_decode((1::bigint << 22) | (37 << 12) | 9) AS d;
SELECT d.shard, d.seq, d.time = :'epoch'::timestamptz + interval '2 ms' AS time_ok
  FROM instagram_id_decode((2::bigint << 23) | (4242 << 10) | 7) AS d;

--
-- Round trips and order on many pseudo-random parts (fixed seed, so the
-- same parts every run; only the properties are printed).
--
SELECT setseed(0.4242);
CREATE TEMP TABLE rnd AS
SELECT :'epoch'::timestamptz + (random() * 60 * 365 * 86400) * interval '1 s' AS t,
       (random() * 1023)::int AS node,
       (random() * 8191)::int AS shard,
       (random() * 4095)::int AS sfseq,
       (random() * 1023)::int AS igseq
  FROM generate_series(1, 20000);

-- composing then decoding returns the parts, time truncated to the ms
SELECT count(*) AS rows,
       count(*) FILTER (WHERE snowflake_id_decode(snowflake_id_from_parts(t, node, sfseq))
                              IS DISTINCT FROM (date_trunc('milliseconds', t), node, sfseq)) AS sf_mismatch,
       count(*) FILTER (WHERE t < :'epoch'::timestamptz + (1::bigint << 40) * interval '1 ms'
                          AND instagram_id_decode(instagram_id_from_parts(t, shard, igseq))
                              IS DISTINCT FROM (date_trunc('milliseconds', t), shard, igseq)) AS ig_mismatch
  FROM rnd;

-- decoding then composing returns the ID
SELECT count(*) FILTER (WHERE snowflake_id_from_parts(d.time, d.node, d.seq) <> id) AS sf_mismatch
  FROM (SELECT snowflake_id_from_parts(t, node, sfseq) AS id FROM rnd) s,
       snowflake_id_decode(id) d;

-- IDs sort exactly as (time, node, seq) and (time, shard, seq) do; the
-- instagram times are clamped into its shorter range
CREATE TEMP TABLE ord AS
SELECT row_number() OVER () AS n, *,
       snowflake_id_from_parts(sfms, node, sfseq) AS sf,
       instagram_id_from_parts(igms, shard, igseq) AS ig
  FROM (SELECT date_trunc('milliseconds', t) AS sfms,
               date_trunc('milliseconds', least(t, :'epoch'::timestamptz + interval '34 years')) AS igms,
               node, sfseq, shard, igseq
          FROM rnd) r;

SELECT count(*) AS pairs,
       count(*) FILTER (WHERE sign(a.sf - b.sf) <> CASE
           WHEN (a.sfms, a.node, a.sfseq) < (b.sfms, b.node, b.sfseq) THEN -1
           WHEN (a.sfms, a.node, a.sfseq) > (b.sfms, b.node, b.sfseq) THEN 1 ELSE 0 END) AS sf_misordered,
       count(*) FILTER (WHERE sign(a.ig - b.ig) <> CASE
           WHEN (a.igms, a.shard, a.igseq) < (b.igms, b.shard, b.igseq) THEN -1
           WHEN (a.igms, a.shard, a.igseq) > (b.igms, b.shard, b.igseq) THEN 1 ELSE 0 END) AS ig_misordered
  FROM ord a JOIN ord b ON b.n = a.n % 20000 + 1;

-- The time decoders with the epoch as an argument read no setting: under
-- this server's epoch they agree with the one-argument forms, under
-- another they shift by exactly the epochs' difference, and a time
-- beyond timestamptz is 22008.
SELECT bool_and(snowflake_id_time(id, :'epoch') = snowflake_id_time(id)) AS sf_same_epoch,
       bool_and(extract(epoch FROM snowflake_id_time(id)) - extract(epoch FROM snowflake_id_time(id, '2010-11-04 01:42:54.657+00'))
                = extract(epoch FROM :'epoch'::timestamptz) - extract(epoch FROM timestamptz '2010-11-04 01:42:54.657+00')) AS sf_other_epoch,
       bool_and(instagram_id_time(id, :'epoch') = instagram_id_time(id)) AS ig_same_epoch,
       bool_and(extract(epoch FROM instagram_id_time(id)) - extract(epoch FROM instagram_id_time(id, '2011-01-01+00'))
                = extract(epoch FROM :'epoch'::timestamptz) - extract(epoch FROM timestamptz '2011-01-01+00')) AS ig_other_epoch
  FROM (SELECT ((ms << 22) | (node::bigint << 12) | seq) AS id FROM sf_parts
        UNION ALL
        SELECT ((ms << 23) | (shard::bigint << 10) | seq) FROM ig_parts) ids;
SELECT snowflake_id_time(9223372036854775807, '294276-12-01+00');
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_time(1, 'infinity');
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id_time(-1, '2024-01-01+00');
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id_time(NULL, '2024-01-01+00') IS NULL AS strict_id,
       instagram_id_time(1, NULL) IS NULL AS strict_epoch;
