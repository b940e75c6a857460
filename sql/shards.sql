--
-- Shard ownership (idgen.shards) and moving a shard (instagram_id_advance).
-- Reloading a new idgen.shards is covered by t/008_logical_shards.pl.
--
\set SHOW_CONTEXT never

-- by default a server owns every shard
SHOW idgen.shards;
SELECT instagram_id_shard(instagram_id(0)) AS first, instagram_id_shard(instagram_id(8191)) AS last;

-- malformed lists are refused when set (22023), with what is wrong
ALTER SYSTEM SET idgen.shards = '0-8192';
\echo :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET idgen.shards = '10-5';
\echo :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET idgen.shards = '1,,2';
\echo :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET idgen.shards = '0-';
\echo :LAST_ERROR_SQLSTATE
ALTER SYSTEM SET idgen.shards = 'all';
\echo :LAST_ERROR_SQLSTATE
-- well-formed ones are accepted (and then put back)
ALTER SYSTEM SET idgen.shards = ' 0 - 4095 , 5000,6000-6100 ';
ALTER SYSTEM SET idgen.shards = '';
ALTER SYSTEM RESET idgen.shards;
-- reload only, not per session
SET idgen.shards = '1';
\echo :LAST_ERROR_SQLSTATE

-- instagram_id_advance: the shard's next IDs lie above the given ID, even
-- one ahead of the clock (here 500 ms, within idgen.max_lead)
SELECT instagram_id_from_parts(clock_timestamp() + interval '500 ms', 4000, 1000) AS ahead \gset
SELECT instagram_id_advance(4000, :ahead);
SELECT min(id) > :ahead AS above, count(DISTINCT id) AS distinct_ids,
       bool_and(instagram_id_shard(id) = 4000) AS shard_ok
  FROM (SELECT instagram_id(4000) AS id FROM generate_series(1, 5000)) s;
-- it only ever raises: an older ID changes nothing
SELECT instagram_id(4000) AS last \gset
SELECT instagram_id_advance(4000, instagram_id_from_parts('2025-01-01', 4000, 0));
SELECT instagram_id(4000) > :last AS still_increasing;
-- the IDs issued above it are covered by the reservation (and the advance
-- itself by a durable floor: t/011_shard_release.pl restarts to prove it)
SELECT reserved_until > instagram_id_time(:ahead) AS durable FROM idgen_status();
-- an ID further ahead than idgen.max_lead would stall the shard: refused
-- unless forced
\set VERBOSITY sqlstate
SELECT instagram_id_advance(4000, instagram_id_from_parts(clock_timestamp() + interval '1 hour', 4000, 0));
\set VERBOSITY default

-- instagram_id_release: the shard stops at once, and the ID returned is at
-- or above every ID issued for it
SELECT max(id) AS last_4001 FROM (SELECT instagram_id(4001) AS id FROM generate_series(1, 3000)) s \gset
SELECT instagram_id_release(4001) >= :last_4001 AS released_at_or_above;
SELECT instagram_id(4001);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_release(8192);
\echo :LAST_ERROR_SQLSTATE

-- bad arguments
SELECT instagram_id_advance(8192, 1);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_advance(7, instagram_id_from_parts(now(), 8, 0));
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_advance(7, -1);
\echo :LAST_ERROR_SQLSTATE

-- superuser only by default: an ID far ahead would stall the shard
CREATE ROLE regress_idgen_user;
SET ROLE regress_idgen_user;
SELECT instagram_id_advance(7, instagram_id_from_parts(now(), 7, 0));
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
DROP ROLE regress_idgen_user;
