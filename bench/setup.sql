-- Objects for bench/bench.sh (run in database postgres of its own server).
CREATE SCHEMA bench;

-- Time a query server-side, in ms, excluding client round trips.
CREATE FUNCTION bench.time_ms(q text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE q;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;

-- Instagram's published PL/pgSQL next_id() ("Sharding & IDs at Instagram",
-- 2012), unchanged but for the schema: note the nextval() % 1024, which
-- wraps within a millisecond beyond 1,024 calls.
CREATE SEQUENCE bench.table_id_seq;
CREATE FUNCTION bench.next_id(OUT result bigint) AS $$
DECLARE
    our_epoch bigint := 1314220021721;
    seq_id bigint;
    now_millis bigint;
    shard_id int := 5;
BEGIN
    SELECT nextval('bench.table_id_seq') % 1024 INTO seq_id;
    SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
    result := (now_millis - our_epoch) << 23;
    result := result | (shard_id << 10);
    result := result | (seq_id);
END;
$$ LANGUAGE PLPGSQL;

-- INSERT targets: the generator as the column DEFAULT, a btree on the id
-- (not unique, so that duplicates can be counted instead of failing).
CREATE TABLE bench.ins_snowflake (id bigint DEFAULT snowflake_id(), v int);
CREATE TABLE bench.ins_instagram (id bigint DEFAULT instagram_id(1), v int);
CREATE TABLE bench.ins_serial (id bigserial, v int);
CREATE TABLE bench.ins_uuid (id uuid DEFAULT gen_random_uuid(), v int);
CREATE TABLE bench.ins_plpgsql (id bigint DEFAULT bench.next_id(), v int);
CREATE INDEX ON bench.ins_snowflake (id);
CREATE INDEX ON bench.ins_instagram (id);
CREATE INDEX ON bench.ins_serial (id);
CREATE INDEX ON bench.ins_uuid (id);
CREATE INDEX ON bench.ins_plpgsql (id);

CREATE TABLE bench.percall (gen text, rep int, ms float8, floor_ms float8);
CREATE TABLE bench.sustained (gen text, rep int, ids bigint, ms float8, ceiling float8,
                              lead_before float8, lead_after float8);
CREATE TABLE bench.inserts (gen text, clients int, rep int, rows_per_s float8, rows bigint, duplicates bigint);

-- Sustained rate of one generator: generate until its IDs run
-- idgen.max_lead ahead of the clock (all timestamp borrowing used up), then
-- at once time n more calls.  Everything runs in this one call, so the lead
-- cannot decay between the steps.  "decoded" wraps the generator call in
-- its time decoder.
CREATE FUNCTION bench.sustained(gen text, decoded text, n bigint,
    OUT lead_before float8, OUT ms float8, OUT lead_after float8)
LANGUAGE plpgsql AS $$
DECLARE
    max_lead float8 := extract(epoch FROM current_setting('idgen.max_lead')::interval) * 1000;
    lead_sql text := format('SELECT extract(epoch FROM %s - clock_timestamp()) * 1000', decoded);
    t0 timestamptz;
BEGIN
    FOR i IN 1 .. 400 LOOP
        EXECUTE format('SELECT count(%s) FROM generate_series(1, 200000)', gen);
        EXECUTE lead_sql INTO lead_before;
        EXIT WHEN lead_before >= max_lead - 5;
    END LOOP;
    t0 := clock_timestamp();
    EXECUTE format('SELECT count(%s) FROM generate_series(1, %s)', gen, n);
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
    EXECUTE lead_sql INTO lead_after;
END $$;

-- part 4: one load per generator into a table keyed by it
CREATE TABLE bench.large (gen text, rows bigint, seconds float8, index_bytes bigint, table_bytes bigint);
CREATE TABLE bench.batches (gen text, rep int, ids_per_s float8);
