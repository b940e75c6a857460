--
-- Counter generators: layouts without a time field.  Clock-free, dense,
-- striped; properties and exact SQLSTATEs only.
--
\set SHOW_CONTEXT never
\c postgres
\set SHOW_CONTEXT never
-- seed 000: 1 | 7-bit zone (constant 3) | 16-bit worker (the node id) | 40-bit counter
SELECT idgen_create_generator('tickets', 'zone:7=3 worker:16 seq:40');
-- Counters of one shared ID space must not be able to hand out the same
-- value, so these two, in space "legacy_ids", keep apart with a constant
-- top bit ("half").
-- Flickr's ticket servers: this one hands out the odd ones
SELECT idgen_create_generator('odd', 'half:1=0 seq:30', stripes => 2, owned => '1',
                              space => 'legacy_ids');
-- seed 004: 4 stripes of 100-value segments, this server owns 0 and 2
SELECT idgen_create_generator('balanced', 'half:1=1 seq:30', stripes => 4, owned => '0, 2',
                              segment => 100, prefetch => 50, refill => 10,
                              space => 'legacy_ids');
SELECT idgen_create_generator('tiny', 'flag:1=1 gap:21=0 seq:10', prefetch => 100);
SELECT name, layout, prefetch, refill, stripes, owned, segment
  FROM idgen_generator WHERE layout !~ 'time' ORDER BY name;

-- bad counter definitions: 22023
SELECT idgen_create_generator('x', 'tsid', stripes => 2);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'seq:31', stripes => 2, owned => '2');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'seq:31', prefetch => 10, refill => 10);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'seq:31', stripes => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'node:10 random:20');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'node:10 seq:53');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('x', 'seq:31', stripes => 2, owned => '');
\echo :LAST_ERROR_SQLSTATE
-- the same IDs as another counter of its space: 42710
SELECT idgen_create_generator('x', 'half:1=1 seq:30', stripes => 4, owned => '2,0', segment => 100,
                              space => 'legacy_ids');
\echo :LAST_ERROR_SQLSTATE

-- ID spaces: by default each counter is a number line of its own, as a
-- sequence is.  Two of one layout each count from 0 (or their start), and
-- neither moves the other.
SELECT idgen_create_generator('invoices', 'seq:40');
SELECT idgen_create_generator('tickets_b', 'seq:40');
SELECT idgen_create_generator('tickets_c', 'seq:40', start => 1000000);
-- for integer's edge: three values fit, the fourth does not
SELECT idgen_create_generator('int_edge', 'seq:40', start => 2147483645);
-- a counter starts with its durable state row (which the keeper, told of
-- the commit, may have extended already)
SELECT name, reserved >= 0 AS has_state FROM idgen_counter_state ORDER BY name;

\c contrib_regression
\set SHOW_CONTEXT never
-- counters of their own spaces, drawn in turn: each dense from its first
-- value, as if the others were not there
SELECT count(DISTINCT a) AS drawn,
       min(a) = 0 AND max(a) = count(*) - 1 AS invoices_from_0,
       min(b) = 0 AND max(b) = count(*) - 1 AS tickets_b_from_0,
       min(c) = 1000000 AND max(c) = 1000000 + count(*) - 1 AS tickets_c_from_start
  FROM (SELECT n, idgen_next('invoices') AS a, idgen_next('tickets_b') AS b,
               idgen_next('tickets_c') AS c
          FROM generate_series(1, 3000) n) s;
SELECT name, space FROM idgen_generator_status
 WHERE name IN ('invoices', 'tickets_b', 'tickets_c', 'odd', 'balanced') ORDER BY name;
-- seed 000: dense from 0 while the server runs, zone and worker in place
SELECT count(*) AS ids, count(DISTINCT id) = count(*) AS all_distinct,
       bool_and(id > prev) AS strictly_increasing,
       max(seq) - min(seq) + 1 = count(*) AS dense,
       bool_and(zone = 3 AND worker = 37) AS zone_and_worker
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev,
               (idgen_decode('tickets', id) ->> 'seq')::bigint AS seq,
               (idgen_decode('tickets', id) ->> 'zone')::int AS zone,
               (idgen_decode('tickets', id) ->> 'worker')::int AS worker
          FROM (SELECT n, idgen_next('tickets') AS id FROM generate_series(1, 20000) n) g) s;

-- Flickr: odd values only, each the previous plus 2; as integer
SELECT pg_typeof(idgen_next_int('odd')) AS type;
SELECT bool_and(id % 2 = 1) AS all_odd, bool_and(id = prev + 2) AS step_2,
       bool_and((idgen_decode('odd', id) ->> 'stripe')::int = 1) AS stripe_1
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev
          FROM (SELECT n, idgen_next_int('odd') AS id FROM generate_series(1, 5000) n) g) s
 WHERE prev IS NOT NULL;

-- seed 004: whole segments of stripes 0 and 2, in increasing order
SELECT count(*) AS ids, bool_and(id > prev) AS strictly_increasing,
       array_agg(DISTINCT (seq / 100) % 4) AS stripes_used,
       bool_and((idgen_decode('balanced', id) ->> 'stripe')::int = (seq / 100) % 4) AS decode_says_stripe,
       count(DISTINCT seq / 100) AS segments
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev,
               (idgen_decode('balanced', id) ->> 'seq')::bigint AS seq
          FROM (SELECT n, idgen_next('balanced') AS id FROM generate_series(1, 1000) n) g) s;

-- batches take consecutive counter values
SELECT cardinality(b) AS n, b[5000] - b[1] = 4999 AS consecutive
  FROM (SELECT idgen_next_batch('tickets', 5000) AS b) s;

-- exhaustion: a 10-bit counter holds 1,024 values, then 22003
SELECT count(idgen_next('tiny')) AS all_of_them FROM generate_series(1, 1024);
SELECT idgen_next('tiny');
\echo :LAST_ERROR_SQLSTATE
-- integer only where it fits; no time functions on a counter
SELECT idgen_next('tickets') AS before_int \gset
SELECT idgen_next_int('tickets');
\echo :LAST_ERROR_SQLSTATE
-- a failed call consumes nothing: the next value follows the one before
SELECT idgen_next_int('tickets');
SELECT idgen_next('tickets') - :before_int AS next_after_failures;
SELECT count(*) AS fit, max(id) = 2147483647 AS up_to_int_max
  FROM (SELECT idgen_next_int('int_edge') AS id FROM generate_series(1, 3)) s;
SELECT idgen_next_int('int_edge');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_next_int('int_edge');
SELECT idgen_next('int_edge') = 2147483648 AS none_taken_by_failures;
SELECT idgen_next_int('legacy');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_time('tickets', 1);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_time('tickets', now());
\echo :LAST_ERROR_SQLSTATE
-- parts round trip (the decoded stripe is implied by seq)
SELECT bool_and(idgen_from_parts('balanced', idgen_decode('balanced', id)) = id) AS round_trip
  FROM (SELECT idgen_next('balanced') AS id FROM generate_series(1, 100)) s;
-- a field named "stripe" in a striped counter: decoding keeps the field's
-- value (the stripe follows from seq), and its parts build the ID back
\c postgres
\set SHOW_CONTEXT never
SELECT idgen_create_generator('stripy', 'stripe:3=5 seq:40', stripes => 2, owned => '0');
SELECT bool_and((idgen_decode('stripy', id) ->> 'stripe')::int = 5) AS field_kept,
       bool_and(idgen_from_parts('stripy', idgen_decode('stripy', id)) = id) AS round_trip
  FROM (SELECT idgen_next('stripy') AS id FROM generate_series(1, 10)) s;
SELECT idgen_drop_generator('stripy', force => true);
\c contrib_regression
\set SHOW_CONTEXT never

-- the view: value, reservation (local count), options; prefetch and
-- refill are those in force: at least the defined ones (more under
-- demand), refill in the defined proportion
SELECT name, counter_value IS NOT NULL AS has_value,
       counter_reserved >= issued AS reserved_ahead,
       g.prefetch >= d.prefetch AS prefetch_at_least_defined,
       g.refill = g.prefetch::bigint * d.refill / d.prefetch AS refill_in_proportion,
       stripes, owned
  FROM idgen_generator_status g
  JOIN (VALUES ('balanced', 50, 10), ('odd', 1000, 500), ('tickets', 1000, 500),
               ('tiny', 100, 50)) d(name, prefetch, refill) USING (name)
 ORDER BY name;
-- a counter of 1,024 values never reserves more than its prefetch at a time
SELECT prefetch, refill FROM idgen_generator_status WHERE name = 'tiny';

-- rebalancing stripes: a counter over the same values is refused while the
-- old one can still hand them out; once that is dropped, the new one
-- begins at or above the old one's bound ("start"), never below
\c postgres
\set SHOW_CONTEXT never
SELECT idgen_create_generator('orders', 'top:3=5 seq:31', stripes => 2, owned => '0',
                              space => 'orders');
SELECT count(DISTINCT idgen_next('orders')) AS orders_drawn FROM generate_series(1, 5);
\set VERBOSITY terse
SELECT idgen_create_generator('orders_v2', 'top:3=5 seq:31', stripes => 4, owned => '0,2',
                              space => 'orders');
SELECT idgen_drop_generator('orders', force => true);
SELECT counter_bound AS orders_bound FROM idgen_generator_status WHERE name = 'orders' \gset
-- (the old one's values are even and below its bound: bound - 2 may be one)
SELECT idgen_create_generator('orders_v2', 'top:3=5 seq:31', stripes => 4, owned => '0,2',
                              start => :orders_bound - 2, space => 'orders');
SELECT idgen_create_generator('orders_v2', 'top:3=5 seq:31', stripes => 4, owned => '0,2',
                              start => :orders_bound, space => 'orders');
SELECT bool_and(id & ((1::bigint << 31) - 1) >= :orders_bound) AS above_the_old_bound,
       bool_and(id % 2 = 0) AS own_stripes, count(DISTINCT id) AS drawn
  FROM (SELECT idgen_next('orders_v2') AS id FROM generate_series(1, 100)) s;
-- the old one cannot come back over the new one's values, nor in
-- another space: a name keeps its definition
SELECT idgen_create_generator('orders', 'top:3=5 seq:31', stripes => 2, owned => '0',
                              space => 'orders');
SELECT idgen_create_generator('orders', 'top:3=5 seq:31', stripes => 2, owned => '0');
-- a dropped counter re-created with another definition (stripes,
-- segment, start, constant fields) continues its number line: it
-- resumes above every value the old one handed out here, counted in seq
-- values, and its own start gives way
SELECT idgen_create_generator('redef', 'top:3=1 seq:31');
CREATE TEMP TABLE redef_ids AS
  SELECT idgen_next('redef') AS id FROM generate_series(1, 300);
SELECT idgen_drop_generator('redef', force => true);
-- (its NOTICE says where it begins: a number that depends on prefetch)
SET client_min_messages = warning;
SELECT idgen_create_generator('redef', 'top:3=2 seq:31', stripes => 3, owned => '1',
                              start => 5);
RESET client_min_messages;
INSERT INTO redef_ids SELECT idgen_next('redef') FROM generate_series(1, 300);
SELECT count(*) AS drawn, count(DISTINCT id & ((1::bigint << 31) - 1)) AS distinct_seq_values,
       bool_and(id >> 31 = 1 OR (id & ((1::bigint << 31) - 1)) % 3 = 1) AS own_stripe_or_old
  FROM redef_ids;
SELECT min(id & ((1::bigint << 31) - 1)) > (SELECT max(id & ((1::bigint << 31) - 1))
                                             FROM redef_ids WHERE id >> 31 = 1) AS above_the_old
  FROM redef_ids WHERE id >> 31 = 2;
SELECT layout, stripes, state FROM idgen_generator_status WHERE name = 'redef';
-- the line's width, kind and ID space stay; so do fixed bits that would
-- meet the old IDs
SELECT idgen_drop_generator('redef', force => true);
SELECT idgen_create_generator('redef', 'top:2=2 seq:32');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('redef', 'time:41 seq:22');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('redef', 'top:3=2 seq:31', space => 'redef_line');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('redef', 'seq:31 top:3=2');
\echo :LAST_ERROR_SQLSTATE
-- a member of a shared space keeps its stored definition (the space's
-- other members are checked against it), and the node id keeps its bits
SELECT idgen_create_generator('redef_sp', 'top:3=3 seq:31', space => 'redef_sp');
SELECT idgen_next('redef_sp') >= 0 AS drawn;
SELECT idgen_drop_generator('redef_sp', force => true);
SELECT idgen_create_generator('redef_sp', 'top:3=3 seq:31', stripes => 2, owned => '0',
                              space => 'redef_sp');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('redef_node', 'worker:10 seq:40');
SELECT idgen_next('redef_node') >= 0 AS drawn;
SELECT idgen_drop_generator('redef_node', force => true);
SELECT idgen_create_generator('redef_node', 'dc:2=1 worker:8 seq:40');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_create_generator('redef_node', 'worker:10=4 seq:40');
\echo :LAST_ERROR_SQLSTATE
-- and a re-creation with the first definition continues above both
SET client_min_messages = warning;
SELECT idgen_create_generator('redef', 'top:3=1 seq:31');
RESET client_min_messages;
SELECT count(*) = 0 AS none_below
  FROM (SELECT idgen_next('redef') AS id FROM generate_series(1, 100)) s
 WHERE id & ((1::bigint << 31) - 1) <= (SELECT max(id & ((1::bigint << 31) - 1)) FROM redef_ids);
-- a counter that joins a shared space without "start" continues its
-- number line above the space's dropped counters, whatever its stripes
SELECT idgen_create_generator('line_a', 'top:3=6 seq:31', space => 'line');
SELECT count(DISTINCT idgen_next('line_a')) AS line_a_drawn FROM generate_series(1, 50);
SELECT idgen_drop_generator('line_a', force => true);
SELECT counter_bound AS line_bound FROM idgen_generator_status WHERE name = 'line_a' \gset
SET client_min_messages = warning;
SELECT idgen_create_generator('line_b', 'top:3=6 seq:31', stripes => 2, owned => '1', space => 'line');
RESET client_min_messages;
SELECT start >= :line_bound AS begins_above_line_a FROM idgen_generator WHERE name = 'line_b';
SELECT bool_and(id & ((1::bigint << 31) - 1) >= :line_bound) AS above_line_a,
       bool_and(id % 2 = 1) AS own_stripe, count(DISTINCT id) AS drawn
  FROM (SELECT idgen_next('line_b') AS id FROM generate_series(1, 100)) s;
-- start is for counters, within the seq field, on an owned value
SELECT idgen_create_generator('bad_start', 'time:41 node:10 seq:12', start => 5);
SELECT idgen_create_generator('bad_start', 'gap:55=0 seq:8', start => 256);
SELECT idgen_create_generator('bad_start', 'gap:55=0 seq:8', start => -1);
SELECT idgen_create_generator('bad_start', 'gap:55=0 seq:8', stripes => 2, owned => '0', start => 255);
\set VERBOSITY default
\c contrib_regression
