--
-- Named generators: definitions, presets, generation from another
-- database, decoding, building, errors.  Properties only: uniqueness,
-- order, round trips, fields, exact SQLSTATEs.
--
\set SHOW_CONTEXT never

-- defined only in idgen.database ("postgres" here)
SELECT idgen_create_generator('legacy', 'time:42 datacenter:3 worker:6 seq:12');
\echo :LAST_ERROR_SQLSTATE

\c postgres
\set SHOW_CONTEXT never
-- seed 002's layout, epoch and unit
SELECT idgen_create_generator('legacy', 'time:42 datacenter:3 worker:6 seq:12',
                              epoch => '2020-08-02 18:33:54.706+00', unit => '1 ms');
-- presets, and layouts of every kind of field
SELECT idgen_create_generator('sony', 'sonyflake');
SELECT idgen_create_generator('disc', 'discord');
SELECT idgen_create_generator('ts', 'tsid');
SELECT idgen_create_generator('tw', 'twitter');
SELECT idgen_create_generator('sharded', 'time:41 shard:4 seq:18', epoch => '2023-01-01+00');
SELECT idgen_create_generator('zoned', 'zone:4=3 time:41 node:10 seq:8');
SELECT idgen_create_generator('simple', 'time:41 random:23', epoch => '2023-01-01+00');
SELECT name, layout, epoch, unit_ms FROM idgen_generator ORDER BY name;

-- bad definitions: 22023, 22008, 42710, 42501
SELECT idgen_create_generator('x', 'time:41 seq:24');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'time:41 a:10 a:12');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'time:41 time:10 seq:12');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'node:10 zone:41 extra:12');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'seq:12 time:41 node:10');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'time:41 random:10 seq:12');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'time:41 node:5 seq:17');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'time:41 Node:10 seq:12');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'time:41 shard:14 seq:8');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'zone:7=200 time:41 seq:15');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'twitterx');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'time:41 node:10 seq:12', unit => '1.5 ms');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'time:41 node:10 seq:12', unit => '2 days');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'time:41 node:10 seq:12', epoch => now() + interval '1 day');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'time:30 node:10 seq:23', epoch => '2000-01-01+00');
\echo :LAST_ERROR_SQLSTATE
-- definitions that join the ID space of snowflake_id(), instagram_id() or
-- another generator and would issue its IDs: 42710
SELECT idgen_create_generator('x', 'snowflake', space => 'snowflake_id');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'time:41 node:10 seq:12', space => 'snowflake_id');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'time:41 shard:13 seq:10', space => 'instagram_id');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('legacy_a', 'time:42 datacenter:3 worker:6 seq:12',
                              epoch => '2020-08-02 18:33:54.706+00', space => 'legacy_ids');
SELECT idgen_create_generator('x', 'time:42 dc:3 w:6 seq:12', epoch => '2020-08-02 18:33:54.706+00',
                              space => 'legacy_ids');
\echo :LAST_ERROR_SQLSTATE
-- a space's name is a lower-case identifier, as a generator's: 22023
SELECT idgen_create_generator('x', 'tsid', space => 'Snowflake');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'tsid', space => '');
\echo :LAST_ERROR_SQLSTATE
-- the same layouts, each a generator of its own space (the default): one
-- server holds any number of generators of one layout, as of sequences
SELECT idgen_create_generator('orders_ts', 'time:42 datacenter:3 worker:6 seq:12',
                              epoch => '2020-08-02 18:33:54.706+00');
SELECT idgen_create_generator('users_ts', 'time:42 datacenter:3 worker:6 seq:12',
                              epoch => '2020-08-02 18:33:54.706+00');
SELECT idgen_create_generator('snowflake_like', 'snowflake');
SELECT count(*) AS created
  FROM (SELECT idgen_create_generator('many_' || i, 'time:41 node:10 seq:12')
          FROM generate_series(1, 100) i) s;
-- each issues (the first call waits for the keeper to load it)
SELECT count(*) AS many, bool_and(id > 0) AS all_issued,
       bool_and((idgen_decode('many_' || i, id) ->> 'node')::int = 37) AS node_37
  FROM (SELECT i, idgen_next('many_' || i) AS id FROM generate_series(1, 100) i) s;
SELECT name, space FROM idgen_generator_status
 WHERE name IN ('orders_ts', 'users_ts', 'snowflake_like', 'legacy', 'legacy_a')
 ORDER BY name;
SELECT idgen_create_generator('Bad Name', 'tsid');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('legacy', 'time:42 datacenter:3 worker:6 seq:12',
                              epoch => '2020-08-02 18:33:54.706+00');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('legacy', 'tsid');
\echo :LAST_ERROR_SQLSTATE
CREATE ROLE regress_idgen_nonsuper;
SET ROLE regress_idgen_nonsuper;
SELECT idgen_create_generator('y', 'tsid');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE regress_idgen_nonsuper;
-- a definition never changes, and is never deleted
UPDATE idgen_generator SET layout = 'time:41 node:10 seq:12' WHERE name = 'legacy';
\echo :LAST_ERROR_SQLSTATE
DELETE FROM idgen_generator WHERE name = 'legacy';
\echo :LAST_ERROR_SQLSTATE

-- usable from every database at once
\c contrib_regression
\set SHOW_CONTEXT never
SELECT count(*) AS ids,
       count(DISTINCT id) = count(*) AS all_distinct,
       bool_and(id > prev) AS strictly_increasing,
       bool_and((idgen_decode('legacy', id) ->> 'datacenter')::int = 0
            AND (idgen_decode('legacy', id) ->> 'worker')::int = 37) AS node_37_in_datacenter_and_worker,
       bool_and(idgen_time('legacy', id) BETWEEN before - interval '1 ms' AND after + interval '2 s') AS time_from_clock
  FROM (SELECT id, before, after, lag(id) OVER (ORDER BY n) AS prev
          FROM (SELECT n, clock_timestamp() AS before, idgen_next('legacy') AS id,
                       clock_timestamp() AS after
                  FROM generate_series(1, 2000000) n) g) s;

-- round trips: decode, then build from the parts; from_time is the
-- smallest ID of the tick
SELECT bool_and(idgen_from_parts('legacy', idgen_decode('legacy', id)) = id) AS parts_round_trip,
       bool_and(idgen_from_time('legacy', idgen_time('legacy', id)) <= id) AS from_time_below,
       bool_and(idgen_from_time('legacy', idgen_time('legacy', id) + interval '1 ms') > id) AS next_tick_above
  FROM (SELECT idgen_next('legacy') AS id FROM generate_series(1, 10000)) s;

-- Sonyflake: 10 ms ticks, sequence before the machine id, 256 per tick
SELECT count(DISTINCT id) = count(*) AS all_distinct,
       bool_and(id > prev) AS strictly_increasing,
       bool_and((idgen_decode('sony', id) ->> 'machine')::int = 37) AS machine_37,
       max((idgen_decode('sony', id) ->> 'seq')::int) <= 255 AS seq_8_bits,
       bool_and(extract(milliseconds FROM idgen_time('sony', id))::int % 10 = 0) AS ten_ms_ticks,
       (SELECT count(*) FROM (SELECT idgen_time('sony', id) FROM unnest(array_agg(id)) id GROUP BY 1 HAVING count(*) > 256) c) AS ticks_over_256
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev
          FROM (SELECT n, idgen_next('sony') AS id FROM generate_series(1, 20000) n) g) s;

-- Discord, TSID (64-bit layouts), Twitter, a constant field, random bits
SELECT bool_and(id > 0) AS positive, count(DISTINCT id) = count(*) AS distinct_ids,
       bool_and((idgen_decode('disc', id) ->> 'worker')::int = 1
            AND (idgen_decode('disc', id) ->> 'process')::int = 5) AS worker_process_of_37
  FROM (SELECT idgen_next('disc') AS id FROM generate_series(1, 5000)) s;
SELECT bool_and(id > 0) AS positive, bool_and((idgen_decode('ts', id) ->> 'node')::int = 37) AS node_ok
  FROM (SELECT idgen_next('ts') AS id FROM generate_series(1, 5000)) s;
SELECT bool_and((idgen_decode('zoned', id) ->> 'zone')::int = 3) AS zone_3,
       bool_and(id >> 59 = 3) AS zone_in_top_bits
  FROM (SELECT idgen_next('zoned') AS id FROM generate_series(1, 1000)) s;
SELECT count(DISTINCT id) = count(*) AS distinct_ids, bool_and(id > prev) AS increasing,
       count(DISTINCT idgen_decode('simple', id) ->> 'random') > 900 AS random_varies
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev
          FROM (SELECT n, idgen_next('simple') AS id FROM generate_series(1, 1000) n) g) s;

-- a shard field: one sequence per shard, like instagram_id()
SELECT count(*) AS ids, count(DISTINCT id) = count(*) AS distinct_ids,
       bool_and((idgen_decode('sharded', id) ->> 'shard')::int = shard) AS shard_ok,
       bool_and(id > prev OR prev IS NULL) AS per_shard_increasing
  FROM (SELECT shard, id, lag(id) OVER (PARTITION BY shard ORDER BY n) AS prev
          FROM (SELECT n, n % 16 AS shard, idgen_next('sharded', (n % 16)::int) AS id
                  FROM generate_series(1, 32000) n) g) s;
SELECT idgen_from_time('sharded', 7, now()) >> 18 & 15 AS from_time_shard;

-- batches
SELECT cardinality(b) AS n, (SELECT bool_and(x > p) FROM (SELECT x, lag(x) OVER (ORDER BY o) AS p
                              FROM unnest(b) WITH ORDINALITY u(x, o)) s) AS increasing
  FROM (SELECT idgen_next_batch('legacy', 5000) AS b) s;
-- a shard's batch: the shard comes before the count (swapped, this would
-- be five IDs of shard 3)
SELECT count(*) AS n, bool_and((idgen_decode('sharded', x) ->> 'shard')::int = 5) AS all_of_shard_5
  FROM unnest(idgen_next_batch('sharded', 5, 3)) x;
-- a database that ran a build of 1.1 from before its release still binds
-- the old argument orders to the old C symbols: refused (55000), never
-- read in the new order
CREATE FUNCTION pre_release_batch(text, integer, integer) RETURNS bigint[]
  AS '$libdir/idgen', 'idgen_next_batch' LANGUAGE C STRICT;
CREATE FUNCTION pre_release_from_time(text, timestamptz, integer) RETURNS bigint
  AS '$libdir/idgen', 'idgen_from_time' LANGUAGE C STRICT;
CREATE FUNCTION pre_release_decode(bigint, text) RETURNS jsonb
  AS '$libdir/idgen', 'idgen_decode_layout' LANGUAGE C;
SELECT pre_release_batch('sharded', 3, 5);
\echo :LAST_ERROR_SQLSTATE
SELECT pre_release_from_time('sharded', now(), 7);
\echo :LAST_ERROR_SQLSTATE
SELECT pre_release_decode(1, 'snowflake');
\echo :LAST_ERROR_SQLSTATE
DROP FUNCTION pre_release_batch, pre_release_from_time, pre_release_decode;

-- errors when using them
SELECT idgen_next('nosuch');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_next(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_next('legacy', 3);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_next('sharded');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_next('sharded', 16);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_next('sharded', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_parts('legacy', '{"time": "2024-01-01 00:00:00+00", "worker": 64}');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_parts('legacy', '{"time": "2024-01-01 00:00:00+00", "colour": 1}');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_parts('legacy', '{"worker": 1}');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_parts('legacy', '{"time": "1999-01-01 00:00:00+00"}');
\echo :LAST_ERROR_SQLSTATE
-- parts are a JSON object: time a timestamp string, every other field a
-- number, a constant field only its constant (22023 / 22003)
SELECT idgen_from_parts('legacy', '[1, 2]');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_parts('legacy', '{"time": 1}');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_parts('legacy', '{"time": "2024-01-01 00:00:00+00", "worker": "one"}');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_parts('zoned', '{"time": "2024-01-01 00:00:00+00", "zone": 4}');
\echo :LAST_ERROR_SQLSTATE
-- a definition without a name or a layout is an error, not a no-op (22004)
SELECT idgen_create_generator(NULL, 'tsid');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('unnamed', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_decode('legacy', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_time('legacy', -1);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_decode_layout('snowflake', -1);
\echo :LAST_ERROR_SQLSTATE

-- decoding foreign IDs needs no definition: Instagram's worked example
-- (epoch 2011-01-01, 1,387,263,000 ms, shard 1341, seq 5001 % 1024) and the
-- example ID of Discord's documentation
SELECT idgen_decode_layout('instagram', 11637205501278089) AS instagram_example;
SELECT idgen_decode_layout('discord', 175928847299117063) AS discord_example;
-- a layout with its own epoch and unit; and the preset's epoch overridden
SELECT idgen_decode_layout('time:33 node:22 seq:8', (3::bigint << 30) | (5 << 8) | 7,
                           epoch => '2020-01-01+00', unit => '1 s') AS own_clock;
SELECT idgen_decode_layout('twitter', 1 << 22, epoch => '2000-01-01+00') ->> 'time' AS overridden;
SELECT idgen_decode_layout('twitter', NULL) IS NULL AS null_in_null_out;
SELECT idgen_decode_layout('nosuch', 1);
\echo :LAST_ERROR_SQLSTATE

-- the view
SELECT name, layout, unit_ms, state, issued > 0 AS issued, generators
  FROM idgen_generator_status WHERE name NOT LIKE 'many\_%' ORDER BY name;

-- dropping refuses unless forced; a dropped name comes back only with its
-- own definition
\c postgres
\set SHOW_CONTEXT never
-- a drop rolled back with its savepoint drops nothing
BEGIN;
SAVEPOINT s;
SELECT idgen_drop_generator('sony', force => true);
ROLLBACK TO s;
COMMIT;
SELECT idgen_next('sony') > 0 AS sony_still_there;
SELECT idgen_drop_generator('tw');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_drop_generator('tw', force => true);
SELECT idgen_drop_generator('tw', force => true);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_next('tw');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('tw', 'tsid');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('tw', 'twitter');
SELECT idgen_next('tw') > 0 AS back;

-- narrower layouts: IDs of at most 53 bits are safe integers in
-- JavaScript.  The js53 preset has 5 node bits, which node id 37 does not
-- fit (22023); a layout of its own with 6 does.
SELECT idgen_create_generator('js', 'js53');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('js', 'time:41 node:6 seq:6');
SELECT bool_and(id < (1::bigint << 53)) AS below_2_53,
       bool_and(id > p OR p IS NULL) AS increasing, count(DISTINCT id) AS ids,
       bool_and((idgen_decode('js', id) ->> 'node')::int = 37) AS node_37
  FROM (SELECT id, lag(id) OVER (ORDER BY g) AS p
          FROM (SELECT g, idgen_next('js') AS id FROM generate_series(1, 10000) g) s) t;
SELECT idgen_decode_layout('time:41 node:6 seq:6', idgen_next('js')) ->> 'node' AS decoded_node;

-- A call site resolves a constant name once; any other name argument is
-- looked at on every call: from a column, and from a PL/pgSQL variable
-- (which re-binds a parameter between evaluations of one expression state:
-- the case a cache of parameters would get wrong).  A prepared statement's
-- parameter is only a sanity check: each EXECUTE starts a new cache.
-- k1's IDs carry 1 in their top field, k2's 2.
SELECT idgen_create_generator('k1', 'zone:4=1 time:41 node:10 seq:8'),
       idgen_create_generator('k2', 'zone:4=2 time:41 node:10 seq:8');
SELECT count(*) AS calls,
       count(*) FILTER (WHERE idgen_next(n) >> 59 = z) AS own_generator
  FROM (SELECT CASE WHEN g % 2 = 0 THEN 'k1' ELSE 'k2' END AS n,
               CASE WHEN g % 2 = 0 THEN 1 ELSE 2 END AS z
          FROM generate_series(1, 1000) g) s;
DO $$
DECLARE
	n text;
	z bigint;
	wrong int := 0;
BEGIN
	FOR i IN 1..200 LOOP
		n := 'k' || (1 + i % 2);
		z := 1 + i % 2;
		IF idgen_next(n) >> 59 <> z THEN
			wrong := wrong + 1;
		END IF;
	END LOOP;
	RAISE NOTICE 'PL/pgSQL variable name: % calls to the wrong generator', wrong;
END
$$;
SET plan_cache_mode = force_generic_plan;
PREPARE top_field(text) AS SELECT idgen_next($1) >> 59 AS top_field;
EXECUTE top_field('k1');
EXECUTE top_field('k2');
EXECUTE top_field('k1');
DEALLOCATE top_field;
RESET plan_cache_mode;
