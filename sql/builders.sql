--
-- Builders for range scans: *_from_time(t) is the smallest ID of t's
-- millisecond, so [from_time(t1), from_time(t2)) holds exactly the IDs whose
-- time is in [t1, t2), and the primary key index can serve the scan.
--
\set VERBOSITY terse
SELECT '2025-06-01 12:00:00+00'::timestamptz AS base \gset

-- smallest of its millisecond; the ID just below belongs to the previous ms
SELECT snowflake_id_from_time(:'base') = snowflake_id_from_parts(:'base', 0, 0) AS sf_smallest,
       snowflake_id_decode(snowflake_id_from_time(:'base') - 1)
         = (:'base'::timestamptz - interval '1 ms', 1023, 4095) AS sf_below_is_prev_ms,
       instagram_id_from_time(:'base') = instagram_id_from_parts(:'base', 0, 0) AS ig_smallest,
       instagram_id_from_time(:'base', 77) = instagram_id_from_parts(:'base', 77, 0) AS ig_shard_smallest,
       instagram_id_decode(instagram_id_from_time(:'base') - 1)
         = (:'base'::timestamptz - interval '1 ms', 8191, 1023) AS ig_below_is_prev_ms;

-- sub-millisecond input is truncated, never rounded up
SELECT snowflake_id_from_time(:'base'::timestamptz + interval '999 us') = snowflake_id_from_time(:'base') AS sf_truncates,
       instagram_id_from_time(:'base'::timestamptz + interval '999 us') = instagram_id_from_time(:'base') AS ig_truncates;

-- a keyed table of IDs spread over 100 seconds, from many nodes and shards
CREATE TABLE sf_events (id bigint PRIMARY KEY);
INSERT INTO sf_events
SELECT DISTINCT snowflake_id_from_parts(:'base'::timestamptz + (g % 100000) * interval '1 ms', g % 1024, g % 4096)
  FROM generate_series(1, 50000) g;
CREATE TABLE ig_events (id bigint PRIMARY KEY);
INSERT INTO ig_events
SELECT DISTINCT instagram_id_from_parts(:'base'::timestamptz + (g % 100000) * interval '1 ms', g % 8192, g % 1024)
  FROM generate_series(1, 50000) g;
ANALYZE sf_events, ig_events;

-- the key range selects exactly the rows whose decoded time is in range
SELECT count(*) FILTER (WHERE id >= snowflake_id_from_time(:'base'::timestamptz + interval '10 s')
                          AND id < snowflake_id_from_time(:'base'::timestamptz + interval '20.5 s'))
     = count(*) FILTER (WHERE snowflake_id_time(id) >= :'base'::timestamptz + interval '10 s'
                          AND snowflake_id_time(id) < :'base'::timestamptz + interval '20.5 s') AS sf_range_exact,
       count(*) FILTER (WHERE snowflake_id_time(id) >= :'base'::timestamptz + interval '10 s'
                          AND snowflake_id_time(id) < :'base'::timestamptz + interval '20.5 s') > 0 AS sf_range_nonempty
  FROM sf_events;
SELECT count(*) FILTER (WHERE id >= instagram_id_from_time(:'base'::timestamptz + interval '10 s')
                          AND id < instagram_id_from_time(:'base'::timestamptz + interval '20.5 s'))
     = count(*) FILTER (WHERE instagram_id_time(id) >= :'base'::timestamptz + interval '10 s'
                          AND instagram_id_time(id) < :'base'::timestamptz + interval '20.5 s') AS ig_range_exact,
       count(*) FILTER (WHERE instagram_id_time(id) >= :'base'::timestamptz + interval '10 s'
                          AND instagram_id_time(id) < :'base'::timestamptz + interval '20.5 s') > 0 AS ig_range_nonempty
  FROM ig_events;

-- and the primary key index serves it (generic plan, so the plan shows the
-- builder calls rather than folded constants)
SET plan_cache_mode = force_generic_plan;
PREPARE sf_range(timestamptz, timestamptz) AS
  SELECT count(*) FROM sf_events
   WHERE id >= snowflake_id_from_time($1) AND id < snowflake_id_from_time($2);
PREPARE ig_range(timestamptz, timestamptz) AS
  SELECT count(*) FROM ig_events
   WHERE id >= instagram_id_from_time($1) AND id < instagram_id_from_time($2);
-- true if the plan of a query scans the given index (any index scan kind)
CREATE FUNCTION pg_temp.scans_index(query text, index_name text)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        IF line LIKE '%Index%Scan%on ' || index_name || '%' THEN
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END $$;
SELECT pg_temp.scans_index('EXECUTE sf_range(''2025-06-01'', ''2025-06-02'')', 'sf_events_pkey') AS sf_uses_pkey,
       pg_temp.scans_index('EXECUTE ig_range(''2025-06-01'', ''2025-06-02'')', 'ig_events_pkey') AS ig_uses_pkey;
EXECUTE sf_range(:'base', :'base'::timestamptz + interval '1 s') \gset sf_
EXECUTE ig_range(:'base', :'base'::timestamptz + interval '1 s') \gset ig_
SELECT :sf_count = (SELECT count(*) FROM sf_events
                     WHERE snowflake_id_time(id) >= :'base'
                       AND snowflake_id_time(id) < :'base'::timestamptz + interval '1 s') AS sf_index_scan_exact,
       :ig_count = (SELECT count(*) FROM ig_events
                     WHERE instagram_id_time(id) >= :'base'
                       AND instagram_id_time(id) < :'base'::timestamptz + interval '1 s') AS ig_index_scan_exact;
RESET plan_cache_mode;

-- decoders are IMMUTABLE, so they can be indexed, and such an index serves
CREATE INDEX sf_events_node ON sf_events (snowflake_id_node(id));
ANALYZE sf_events;
SELECT pg_temp.scans_index('SELECT count(*) FROM sf_events WHERE snowflake_id_node(id) = 37',
                           'sf_events_node') AS uses_expression_index;
SELECT (SELECT count(*) FROM sf_events WHERE snowflake_id_node(id) = 37)
     = (SELECT count(*) FROM sf_events WHERE (id >> 12) & 1023 = 37) AS expression_index_exact;
DROP TABLE sf_events, ig_events;
