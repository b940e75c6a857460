--
-- What a definition's bits mean: two definitions in one ID space that could
-- issue the same ID on this server (idgen.node_id = 37) are refused (42710),
-- whatever their spelling; definitions that differ in a bit both fix, or
-- count other ticks, are accepted.  The cases join the spaces of
-- snowflake_id() and instagram_id(), so that they are compared with those
-- too.  And numbers past a layout's range give errors, never a wrapped
-- value or a wrong date.
--
\set SHOW_CONTEXT never
\c postgres
\set SHOW_CONTEXT never

CREATE FUNCTION pg_temp.try_create(n text, l text, e timestamptz DEFAULT NULL,
                                   u interval DEFAULT NULL,
                                   sp text DEFAULT 'snowflake_id')
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	PERFORM idgen_create_generator(n, l, epoch => e, unit => u, space => sp);
	RETURN 'created';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ' ' || coalesce('same as ' || substring(SQLERRM FROM 'same IDs as (.*) in ID space'), SQLERRM);
END $$;

-- in order: each row is tried after the ones above it
CREATE TEMP TABLE cases (n serial, layout text, epoch timestamptz, unit interval, why text,
                         space text DEFAULT 'snowflake_id');
INSERT INTO cases (layout, epoch, unit, why) VALUES
  ('time:42 node:10 seq:12', NULL, NULL, '64 bits: its sign bit is never used, the rest is snowflake'),
  ('time:41 dc:5 worker:5 seq:12', NULL, NULL, 'snowflake with the node split in two'),
  ('time:41 tag:2=0 node:8 seq:12', NULL, NULL, '37 fits 8 bits, and the constant 0 fills the top two'),
  ('time:41 seq:12 node:10', NULL, NULL, 'sequence values from 148 meet snowflake''s node bits');
INSERT INTO cases (layout, epoch, unit, why, space) VALUES
  ('time:40 shard:13 seq:10', NULL, NULL, '63 bits: instagram''s effective time bits', 'instagram_id'),
  ('time:41 node:13 seq:10', NULL, NULL, 'node 37 where instagram has its shard', 'instagram_id'),
  ('time:41 shard:3 node:10 seq:10', NULL, NULL, 'a shard argument and node 37 inside instagram''s shard bits', 'instagram_id');
INSERT INTO cases (layout, epoch, unit, why) VALUES
  ('time:41 tag:1=1 node:9 seq:12', NULL, NULL, 'bit 21 is 1 where snowflake''s node 37 has 0'),
  ('time:41 flag:1=1 worker:9 seq:12', NULL, NULL, 'the generator just created, spelled otherwise'),
  ('time:41 flag:1=1 worker:9 seq:12', '2022-06-01+00', NULL, 'another epoch counts other ticks'),
  ('time:41 node:10 seq:12', NULL, '2 ms', 'another unit counts other ticks'),
  ('time:40 node:11 seq:12', '2022-06-01+00', NULL, 'time one bit higher: other ticks'),
  ('time:41 node:10 seq:12', '2022-06-01+00', '2 ms', 'the one with unit 2 ms differs in its epoch');

SELECT n, layout, epoch IS NOT NULL AS own_epoch, unit, why, space,
       pg_temp.try_create('same_' || n, layout, epoch, unit, space) AS outcome
  FROM cases ORDER BY n;

-- the same layouts again, each a generator of its own ID space (the
-- default), as sequences are: all are created, and none is compared
-- (but instagram's shards, which take room in shared memory for each)
SELECT n, pg_temp.try_create('own_' || n, layout, epoch, unit, NULL) AS outcome
  FROM cases WHERE layout NOT LIKE '%shard%' ORDER BY n;

-- a name's earlier definition is compared by meaning too: the same
-- definition spelled otherwise is "already exists", another is refused
SELECT pg_temp.try_create('same_8', 'time:41  tag:1=1   node:9 seq:12') AS same_spacing;
SELECT pg_temp.try_create('same_8', 'time:41 tag:1=1 node:9 seq:12', '2022-06-01+00') AS other_epoch;

-- counters: the same values, spelled otherwise, are refused; values apart
-- are accepted.  ("top" keeps them clear of the counters other files define.)
CREATE FUNCTION pg_temp.try_counter(n text, l text, st int DEFAULT NULL,
                                    ow text DEFAULT NULL, seg bigint DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	PERFORM idgen_create_generator(n, l, stripes => st, owned => ow, segment => seg,
	                               space => 'counter_edges');
	RETURN 'created';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ' ' || coalesce('same as ' || substring(SQLERRM FROM 'same IDs as (.*) in ID space'), SQLERRM);
END $$;
CREATE TEMP TABLE counter_cases (n serial, layout text, stripes int, owned text,
                                 segment bigint, why text);
INSERT INTO counter_cases (layout, stripes, owned, segment, why) VALUES
  ('top:2=3 gap:1=0 seq:31', NULL, NULL, NULL, 'a plain counter'),
  ('top:2=3 seq:32', NULL, NULL, NULL, 'one bit wider: the same values from 0'),
  ('top:2=3 gap:1=0 seq:31', 2, '0-1', NULL, 'both of two stripes: every value'),
  ('top:2=3 gap:1=0 seq:31', NULL, NULL, 1000, 'segments of one stripe: every value'),
  ('top:2=3 gap:1=1 seq:31', NULL, NULL, NULL, 'a constant bit apart'),
  ('top:2=2 gap:1=0 seq:31', 2, '0', NULL, 'the even values'),
  ('top:2=2 gap:1=0 seq:31', 2, '1', NULL, 'the odd values: none of them even'),
  ('top:2=2 gap:1=0 seq:31', 4, '0,2', NULL, 'the even values again, as two of four stripes'),
  ('top:2=2 gap:1=0 seq:31', 3, '2', 5, 'segments of 5 in stripe 2 of 3: 10..14 holds even and odd values'),
  ('top:2=1 gap:1=0 seq:31', 2, '0', 3, 'segments of 3 in stripe 0 of 2'),
  ('top:2=1 gap:1=0 seq:31', 3, '1', 2, 'segments of 2 in stripe 1 of 3: 2..3 meets 0..2'),
  ('top:2=1 gap:1=0 seq:31', 2, '1', 3, 'the other stripe of 2: never meets stripe 0');
SELECT n, layout, stripes, owned, segment, why,
       pg_temp.try_counter('count_' || n, layout, stripes, owned, segment) AS outcome
  FROM counter_cases ORDER BY n;

-- epochs must be finite: 22008
SELECT pg_temp.try_create('inf_1', 'time:41 node:10 seq:12', '-infinity') AS minus_infinity;
SELECT pg_temp.try_create('inf_2', 'time:41 node:10 seq:12', 'infinity') AS plus_infinity;

-- a decoded time past what the layout and timestamptz can hold: 22008
\set VERBOSITY terse
SELECT idgen_decode_layout('time:63', 9223372036854775807);
SELECT idgen_decode_layout('time:63', 9223372036854775807, unit => '1 day');
SELECT idgen_decode_layout('time:41 node:10 seq:12', 1, epoch => '-infinity');
-- within range, decoding still works at the edges
SELECT idgen_decode_layout('time:41 node:10 seq:12', 1 << 22, epoch => '2000-01-01+00') AS one_ms;
SELECT (idgen_decode_layout('time:41 node:10 seq:12', ((1::bigint << 41) - 1) << 22,
                            epoch => '2000-01-01+00') ->> 'time') AS last_ms;
\set VERBOSITY default

-- a coarse unit spreads its positions through the tick: a day of 16 IDs
-- has one every 90 minutes.  A new one issues at once (it has issued
-- nothing), the day's positions up to now, then says the layout's
-- capacity is exhausted (53400), never that the clock is behind (55000).
SELECT idgen_create_generator('coarse_16', 'time:20 seq:4 pad:39=0', unit => '1 day');
SELECT idgen_grant_generator('coarse_16', 'public');
DO $$
DECLARE
  n int := 0;
  state text;
  -- the day's positions whose moment is at most max_lead ahead: before and after
  lead double precision := extract(epoch FROM current_setting('idgen.max_lead')::interval);
  reached_before int := floor((extract(epoch FROM clock_timestamp())::numeric % 86400 + lead) * 16 / 86400) + 1;
  reached_after int;
BEGIN
  LOOP
    BEGIN
      PERFORM idgen_next('coarse_16');
      n := n + 1;
    EXCEPTION WHEN OTHERS THEN
      state := SQLSTATE;
      EXIT;
    END;
    EXIT WHEN n > 17;
  END LOOP;
  reached_after := floor((extract(epoch FROM clock_timestamp())::numeric % 86400 + lead) * 16 / 86400) + 1;
  -- (past midnight the count starts again: the next day's first positions)
  RAISE NOTICE 'issued at once: %, then %',
    CASE WHEN n BETWEEN reached_before AND reached_after
              OR (reached_after < reached_before AND n BETWEEN 1 AND 17)
         THEN 'the day''s positions up to now' ELSE n || ' of ' || reached_before END, state;
END
$$;
SELECT idgen_drop_generator('coarse_16', true);

-- generators this file defined keep to themselves
SELECT count(*) AS created FROM idgen_generator
 WHERE name LIKE 'same\_%' OR name LIKE 'count\_%' OR name LIKE 'own\_%';

\c contrib_regression
