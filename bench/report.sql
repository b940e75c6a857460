-- Markdown tables from the figures bench/bench.sh collected.
\pset format unaligned
\pset tuples_only on
\pset fieldsep ''

\echo
\echo '### ns per call, one session (1,000,000 calls; median (min..max) over repetitions)'
\echo
\echo '| generator | gross ns/call | net ns/call (minus floor) | net vs nextval() |'
\echo '|---|---|---|---|'
WITH per AS (
    SELECT gen, rep, ms * 1e6 / 1e6 AS gross, (ms - floor_ms) * 1e6 / 1e6 AS net FROM bench.percall
), s AS (
    SELECT gen,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY gross) AS gross_med,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY net) AS net_med,
           min(net) AS net_min, max(net) AS net_max
      FROM per GROUP BY gen
)
SELECT format('| `%s` | %s | %s (%s..%s) | %s |', gen,
              round(gross_med::numeric, 1), round(net_med::numeric, 1),
              round(net_min::numeric, 1), round(net_max::numeric, 1),
              round((net_med / (SELECT net_med FROM s WHERE gen LIKE 'nextval%'))::numeric, 2))
  FROM s ORDER BY net_med;
SELECT format('| floor: `count(g)` per row | %s (%s..%s) | | |',
              round((percentile_cont(0.5) WITHIN GROUP (ORDER BY floor_ms))::numeric, 1),
              round(min(floor_ms)::numeric, 1), round(max(floor_ms)::numeric, 1))
  FROM (SELECT DISTINCT rep, floor_ms FROM bench.percall) f;

\echo
\echo 'named generators: net per call relative to snowflake_id() (median)'
SELECT string_agg(format('%s %s', gen, round((net / (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms - floor_ms) FROM bench.percall WHERE gen = 'snowflake_id()'))::numeric, 2)), ', ' ORDER BY gen)
  FROM (SELECT gen, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms - floor_ms) AS net
          FROM bench.percall WHERE gen LIKE 'idgen_next%' GROUP BY gen) n;

-- The net figures subtract a floor that varies from repetition to
-- repetition by more than snowflake_id()'s own cost on a shared machine;
-- the gross ratio within one repetition (same floor, measured moments
-- apart) is the steadier comparison.
\echo 'named generators: gross time per call relative to snowflake_id() in the same repetition, median (min..max)'
SELECT string_agg(format('%s %s (%s..%s)', gen, round(med::numeric, 2), round(lo::numeric, 2), round(hi::numeric, 2)), ', ' ORDER BY gen)
  FROM (SELECT p.gen, percentile_cont(0.5) WITHIN GROUP (ORDER BY p.ms / s.ms) AS med,
               min(p.ms / s.ms) AS lo, max(p.ms / s.ms) AS hi
          FROM bench.percall p
          JOIN bench.percall s ON s.rep = p.rep AND s.gen = 'snowflake_id()'
         WHERE p.gen LIKE 'idgen_next%' GROUP BY p.gen) r;

\echo
\echo '### batches of 1,000 delivered to one client over a Unix socket'
\echo
\echo '| call | IDs/s median (min..max) | of the layout ceiling (4,096,000/s) |'
\echo '|---|---|---|'
SELECT format('| `%s` | %s (%s..%s) | %s %% |',
              CASE gen WHEN 'snowflake' THEN 'snowflake_id_batch(1000)' ELSE 'idgen_next_batch(''b_legacy'', 1000)' END,
              to_char(percentile_cont(0.5) WITHIN GROUP (ORDER BY ids_per_s), 'FM9,999,999'),
              to_char(min(ids_per_s), 'FM9,999,999'), to_char(max(ids_per_s), 'FM9,999,999'),
              round((100 * percentile_cont(0.5) WITHIN GROUP (ORDER BY ids_per_s) / 4096000)::numeric, 1))
  FROM bench.batches GROUP BY gen ORDER BY gen DESC;

\echo
\echo '### sustained single-session rate, after borrowing is used up'
\echo
\echo '| generator | IDs/s median (min..max) | of the layout ceiling | lead before..after, ms |'
\echo '|---|---|---|---|'
SELECT format('| `%s` | %s (%s..%s) | %s %% (%s..%s) | %s..%s |', gen,
              to_char(percentile_cont(0.5) WITHIN GROUP (ORDER BY r), 'FM9,999,999'),
              to_char(min(r), 'FM9,999,999'), to_char(max(r), 'FM9,999,999'),
              round((100 * percentile_cont(0.5) WITHIN GROUP (ORDER BY r) / min(ceiling))::numeric, 1),
              round((100 * min(r) / min(ceiling))::numeric, 1),
              round((100 * max(r) / min(ceiling))::numeric, 1),
              round(min(lead_before)::numeric), round(max(lead_after)::numeric))
  FROM (SELECT gen, ids / (ms / 1000) AS r, ceiling, lead_before, lead_after FROM bench.sustained) s
 GROUP BY gen ORDER BY gen DESC;

\echo
\echo '### INSERT rows/s, 100-row statements, generator as column DEFAULT (median (min..max))'
\echo
SELECT '| DEFAULT | ' || string_agg(format('%s client%s', c, CASE WHEN c > 1 THEN 's' ELSE '' END), ' | ' ORDER BY c) || ' | duplicates |'
  FROM (SELECT DISTINCT clients AS c FROM bench.inserts) x;
SELECT '|---|' || string_agg('---|', '' ORDER BY c) || '---|'
  FROM (SELECT DISTINCT clients AS c FROM bench.inserts) x;
WITH s AS (
    SELECT gen, clients,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY rows_per_s) AS med,
           min(rows_per_s) AS lo, max(rows_per_s) AS hi, sum(duplicates) AS dups
      FROM bench.inserts GROUP BY gen, clients
)
SELECT format('| %s | %s | %s |',
              CASE gen WHEN 'snowflake' THEN '`snowflake_id()`' WHEN 'instagram' THEN '`instagram_id(1)`'
                       WHEN 'serial' THEN 'bigserial' WHEN 'uuid' THEN '`gen_random_uuid()`'
                       ELSE 'PL/pgSQL `next_id()`' END,
              string_agg(format('%s (%s..%s)', to_char(med, 'FM9,999,999'), to_char(lo, 'FM9,999,999'),
                                to_char(hi, 'FM9,999,999')), ' | ' ORDER BY clients),
              sum(dups))
  FROM s GROUP BY gen
 ORDER BY array_position(ARRAY['snowflake', 'instagram', 'serial', 'uuid', 'plpgsql'], gen);

SELECT count(*) > 0 AS have_large FROM bench.large \gset
\if :have_large
\echo
\echo '### large table: 1,000-row INSERTs by one client into a table with PRIMARY KEY DEFAULT generator (one load each)'
\echo
\echo '| PRIMARY KEY DEFAULT | rows | rows/s over the whole load | primary key index | table |'
\echo '|---|---|---|---|---|'
SELECT format('| %s | %s | %s | %s | %s |',
              CASE gen WHEN 'snowflake' THEN '`snowflake_id()`' WHEN 'bigserial' THEN 'bigserial'
                       WHEN 'uuid' THEN '`gen_random_uuid()`' WHEN 'uuidv7' THEN '`uuidv7()`' ELSE gen END,
              to_char(rows, 'FM999,999,999'), to_char(rows / seconds, 'FM9,999,999'),
              pg_size_pretty(index_bytes), pg_size_pretty(table_bytes))
  FROM bench.large
 ORDER BY array_position(ARRAY['snowflake', 'bigserial', 'uuid', 'uuidv7'], gen);
\endif
