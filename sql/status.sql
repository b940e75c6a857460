--
-- idgen_status(): configuration as set in idgen.conf, and live counters
-- that follow what this session does.
--
SELECT preloaded, node_id,
       epoch = '2024-01-01 00:00:00+00' AS default_epoch,
       max_lead_ms = 2000 AS default_max_lead,
       max_wait_ms = 1000 AS default_max_wait,
       snowflake_range_end = epoch + (1::bigint << 41) * interval '1 ms' AS sf_end_ok,
       instagram_range_end = epoch + (1::bigint << 40) * interval '1 ms' AS ig_end_ok
  FROM idgen_status();

SELECT snowflake_issued AS sf0, instagram_issued AS ig0, instagram_shards_used AS used0,
       borrowed AS borrowed0, waits AS waits0
  FROM idgen_status() \gset
SELECT count(snowflake_id()) FROM generate_series(1, 1000);
SELECT count(instagram_id(4321)) FROM generate_series(1, 1000);
-- The counters move by what was done: exactly 1,000 IDs each, one new
-- shard; only issued IDs can be borrowed ones; and no call slept, since
-- 1,000 IDs need at most a millisecond or two of sequence space, far
-- less than max_lead.
SELECT snowflake_issued - :sf0 AS sf_issued,
       instagram_issued - :ig0 AS ig_issued,
       instagram_shards_used - :used0 AS new_shards,
       borrowed - :borrowed0 <= (snowflake_issued - :sf0) + (instagram_issued - :ig0) AS borrowed_were_issued,
       waits - :waits0 AS new_waits,
       snowflake_last_time <= clock_timestamp() + interval '1 ms' * max_lead_ms AS sf_last_ok,
       instagram_last_time <= clock_timestamp() + interval '1 ms' * max_lead_ms AS ig_last_ok,
       snowflake_lead_ms BETWEEN 0 AND max_lead_ms AS sf_lead_ok,
       instagram_lead_ms BETWEEN 0 AND max_lead_ms AS ig_lead_ok
  FROM idgen_status();

-- IDs handed out by a statement that then fails were issued all the same
-- (and are never handed out again): rows 1 to 499 each take an ID before
-- row 500 fails on its shard.  The failing call itself counts nothing.
SELECT instagram_issued AS ig1, instagram_shards_used AS used1 FROM idgen_status() \gset
\set VERBOSITY sqlstate
SELECT count(instagram_id(CASE WHEN n < 500 THEN 4322 ELSE 8192 END))
  FROM generate_series(1, 1000) n;
\set VERBOSITY default
SELECT instagram_issued - :ig1 AS issued_before_failure,
       instagram_shards_used - :used1 AS new_shards
  FROM idgen_status();

-- the last issued time is the time of the last ID
SELECT snowflake_id() AS last_id \gset
SELECT snowflake_id_time(:last_id) = snowflake_last_time AS sf_last_is_latest
  FROM idgen_status();

-- the keeper holds a durable reservation beyond every ID issued
SELECT keeper_state,
       reserved_until > snowflake_last_time AS covers_snowflake,
       reserved_until > instagram_last_time AS covers_instagram,
       reservation_ms = 1000 AS default_reservation,
       reservation_writes > 0 AS written
  FROM idgen_status();
-- without idgen.lease_endpoints the lease is off, and the rest NULL
SELECT lease_state, lease_id IS NULL AS no_lease, lease_node_id IS NULL AS no_node FROM idgen_lease_status();
