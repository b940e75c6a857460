--
-- idgen_convert_column(): serial, bigserial, identity and DEFAULT nextval()
-- columns get an idgen DEFAULT; integer keys and every foreign-key column
-- that reaches them are widened to bigint; rows, keys and constraints stay;
-- the column's own sequence is dropped; new IDs sort above the old ones.
-- Bad input fails with an exact SQLSTATE and changes nothing.
--
-- (the suite may have created it already: no NOTICE either way)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;
\set SHOW_CONTEXT never
SET client_min_messages = notice;

-- A schema with every kind of reference to customers.id: a self-reference,
-- a plain child with ON DELETE CASCADE, a composite key, a smallint child,
-- a one-to-one table whose own key is referenced further (widened
-- transitively), and a child that is already bigint.
CREATE TABLE customers (
    id serial PRIMARY KEY,
    region text NOT NULL DEFAULT 'eu',
    name text NOT NULL,
    referred_by integer REFERENCES customers (id),
    UNIQUE (id, region)
);
CREATE TABLE orders (
    id bigserial PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES customers ON DELETE CASCADE,
    item text
);
CREATE TABLE invoices (
    customer_id integer,
    region text,
    amount numeric,
    FOREIGN KEY (customer_id, region) REFERENCES customers (id, region)
);
CREATE TABLE badges (customer_id smallint REFERENCES customers, badge text);
CREATE TABLE vip (customer_id integer PRIMARY KEY REFERENCES customers, since date);
CREATE TABLE vip_notes (vip_id integer REFERENCES vip, note text);
CREATE TABLE audit (customer_id bigint REFERENCES customers, what text);
CREATE INDEX ON orders (customer_id);

INSERT INTO customers (name, referred_by)
SELECT 'c' || g, CASE WHEN g > 1 THEN g / 2 END FROM generate_series(1, 1000) g;
INSERT INTO orders (customer_id, item) SELECT 1 + g % 1000, 'i' || g FROM generate_series(1, 3000) g;
INSERT INTO invoices SELECT id, region, id * 1.5 FROM customers WHERE id % 3 = 0;
INSERT INTO badges SELECT id, 'gold' FROM customers WHERE id <= 100;
INSERT INTO vip SELECT id, date '2024-01-01' FROM customers WHERE id % 10 = 0;
INSERT INTO vip_notes SELECT customer_id, 'n' FROM vip;
INSERT INTO audit SELECT id, 'created' FROM customers;

CREATE TEMP TABLE before_customers AS SELECT * FROM customers;
CREATE TEMP TABLE before_orders AS SELECT * FROM orders;
SELECT count(*) AS rows_before FROM customers;

SELECT idgen_convert_column('customers', 'id');

-- every column on the path is bigint now; the one already bigint stays
SELECT a.attrelid::regclass AS rel, a.attname, format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_attribute a
 WHERE (a.attrelid, a.attname) IN (('customers'::regclass, 'id'), ('customers'::regclass, 'referred_by'),
                                   ('orders'::regclass, 'customer_id'), ('invoices'::regclass, 'customer_id'),
                                   ('badges'::regclass, 'customer_id'), ('vip'::regclass, 'customer_id'),
                                   ('vip_notes'::regclass, 'vip_id'), ('audit'::regclass, 'customer_id'))
 ORDER BY a.attrelid::regclass::text, a.attname;

-- the new default, the sequence gone, NOT NULL and the key kept
SELECT pg_get_expr(d.adbin, d.adrelid) AS "default", a.attnotnull, a.attidentity = '' AS no_identity
  FROM pg_attribute a JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE a.attrelid = 'customers'::regclass AND a.attname = 'id';
SELECT to_regclass('customers_id_seq') IS NULL AS sequence_dropped,
       pg_get_serial_sequence('customers', 'id') IS NULL AS nothing_owned;

-- every row and every key as before, every constraint still there and valid
SELECT (SELECT count(*) FROM (SELECT * FROM before_customers EXCEPT SELECT * FROM customers) s) AS lost_customers,
       (SELECT count(*) FROM (SELECT * FROM customers EXCEPT SELECT * FROM before_customers) s) AS new_customers,
       (SELECT count(*) FROM (SELECT * FROM before_orders EXCEPT SELECT * FROM orders) s) AS lost_orders,
       (SELECT count(*) FROM invoices) AS invoices, (SELECT count(*) FROM vip_notes) AS vip_notes;
-- (NOT NULL constraints are catalogued from PostgreSQL 18 on: left out, so
-- that every version prints the same)
SELECT conrelid::regclass AS rel, contype, pg_get_constraintdef(oid) AS def, convalidated
  FROM pg_constraint
 WHERE conrelid IN ('customers'::regclass, 'orders'::regclass, 'invoices'::regclass, 'badges'::regclass,
                    'vip'::regclass, 'vip_notes'::regclass, 'audit'::regclass)
   AND contype <> 'n'
 ORDER BY conrelid::regclass::text, contype, pg_get_constraintdef(oid);

-- new rows, by DEFAULT and by COPY, get IDs above every old one, from the
-- generator (the node id of this server)
INSERT INTO customers (name) SELECT 'new' || g FROM generate_series(1, 500) g;
COPY customers (name, region) FROM stdin;
copied1	us
copied2	us
\.
SELECT count(*) AS new_rows,
       bool_and(id > (SELECT max(id) FROM before_customers)) AS above_old,
       bool_and(snowflake_id_node(id) = (SELECT node_id FROM idgen_status())) AS from_this_node,
       count(DISTINCT id) = count(*) AS unique_ids
  FROM customers WHERE name LIKE 'new%' OR name LIKE 'copied%';
-- in insertion order, as with a table created with DEFAULT snowflake_id()
SELECT bool_and(id > prev) AS increasing
  FROM (SELECT id, lag(id) OVER (ORDER BY substr(name, 4)::int) AS prev
          FROM customers WHERE name LIKE 'new%') s;

-- the new keys work with the widened children, cascades included
INSERT INTO orders (customer_id, item)
SELECT id, 'for new' FROM customers WHERE name LIKE 'new%';
INSERT INTO vip SELECT id, current_date FROM customers WHERE name = 'new1';
INSERT INTO vip_notes SELECT customer_id, 'big key' FROM vip WHERE customer_id > 2147483647;
SELECT count(*) AS vip_notes_with_big_keys FROM vip_notes WHERE vip_id > 2147483647;
DELETE FROM vip_notes WHERE vip_id IN (SELECT id FROM customers WHERE name = 'new1');
DELETE FROM vip WHERE customer_id IN (SELECT id FROM customers WHERE name = 'new1');
DELETE FROM customers WHERE name LIKE 'new%';
SELECT count(*) AS orders_of_deleted FROM orders WHERE item = 'for new';
INSERT INTO orders (customer_id) VALUES (9223372036854775807);
\echo :LAST_ERROR_SQLSTATE

-- the column now looks like one created with idgen
CREATE TABLE made_with_idgen (id bigint NOT NULL PRIMARY KEY DEFAULT snowflake_id());
SELECT count(DISTINCT (format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attidentity,
                       a.attgenerated, pg_get_expr(d.adbin, d.adrelid))) AS distinct_definitions
  FROM pg_attribute a JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE (a.attrelid, a.attname) IN (('customers'::regclass, 'id'), ('made_with_idgen'::regclass, 'id'));

--
-- The other column kinds
--
-- bigserial: nothing to widen
CREATE TABLE events (id bigserial PRIMARY KEY, what text);
INSERT INTO events (what) SELECT 'e' FROM generate_series(1, 100);
SELECT idgen_convert_column('events', 'id');
INSERT INTO events (what) VALUES ('after');
SELECT bool_and(id > 100) AS above_old, count(*) AS rows FROM events WHERE what = 'after';
SELECT to_regclass('events_id_seq') IS NULL AS sequence_dropped;

-- smallserial
CREATE TABLE tiny (id smallserial PRIMARY KEY);
INSERT INTO tiny DEFAULT VALUES;
SELECT idgen_convert_column('tiny', 'id');
INSERT INTO tiny DEFAULT VALUES;
SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = 'tiny'::regclass AND attname = 'id';
SELECT count(*) AS rows, count(*) FILTER (WHERE id > 1) AS new_rows FROM tiny;

-- identity, ALWAYS and BY DEFAULT: the identity and its sequence go
CREATE TABLE ident_always (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v int);
CREATE TABLE ident_default (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, v int);
CREATE TABLE ident_child (parent integer REFERENCES ident_always);
INSERT INTO ident_always (v) SELECT g FROM generate_series(1, 50) g;
INSERT INTO ident_default (v) SELECT g FROM generate_series(1, 50) g;
INSERT INTO ident_child SELECT id FROM ident_always;
SELECT count(*) AS identity_sequences FROM pg_depend
 WHERE classid = 'pg_class'::regclass AND deptype = 'i'
   AND refobjid IN ('ident_always'::regclass, 'ident_default'::regclass)
   AND objid IN (SELECT oid FROM pg_class WHERE relkind = 'S');
SELECT idgen_convert_column('ident_always', 'id');
SELECT idgen_convert_column('ident_default', 'id');
SELECT count(*) AS identity_sequences FROM pg_depend
 WHERE classid = 'pg_class'::regclass AND deptype = 'i'
   AND refobjid IN ('ident_always'::regclass, 'ident_default'::regclass)
   AND objid IN (SELECT oid FROM pg_class WHERE relkind = 'S');
SELECT attrelid::regclass AS rel, attidentity = '' AS no_identity, attnotnull,
       format_type(atttypid, atttypmod) AS type
  FROM pg_attribute
 WHERE attrelid IN ('ident_always'::regclass, 'ident_default'::regclass, 'ident_child'::regclass)
   AND attnum = 1
 ORDER BY attrelid::regclass::text;
INSERT INTO ident_always (v) VALUES (51);
INSERT INTO ident_default (v) VALUES (51);
SELECT (SELECT id > 50 FROM ident_always WHERE v = 51) AS always_above,
       (SELECT id > 50 FROM ident_default WHERE v = 51) AS by_default_above;

-- a plain DEFAULT nextval() of a sequence that is not the column's own:
-- converted, the sequence kept (it is not ours to drop)
CREATE SEQUENCE standalone_seq;
CREATE TABLE plain (id integer PRIMARY KEY DEFAULT nextval('standalone_seq'), v int);
INSERT INTO plain (v) VALUES (1), (2);
SELECT idgen_convert_column('plain', 'id');
SELECT to_regclass('standalone_seq') IS NOT NULL AS sequence_kept;
INSERT INTO plain (v) VALUES (3);
SELECT bool_and(id > 2) AS above_old FROM plain WHERE v = 3;

-- a DEFAULT nextval() owned by the column, in a schema with a quoted name
CREATE SCHEMA "Shop";
CREATE SEQUENCE "Shop"."Item seq";
CREATE TABLE "Shop"."Items" ("Item Id" integer PRIMARY KEY DEFAULT nextval('"Shop"."Item seq"'), v int);
ALTER SEQUENCE "Shop"."Item seq" OWNED BY "Shop"."Items"."Item Id";
INSERT INTO "Shop"."Items" (v) VALUES (1);
SELECT idgen_convert_column('"Shop"."Items"', 'Item Id');
SELECT to_regclass('"Shop"."Item seq"') IS NULL AS sequence_dropped;

-- instagram: the shard is in every new ID
CREATE TABLE photos (id serial PRIMARY KEY, caption text);
INSERT INTO photos (caption) VALUES ('old');
SELECT idgen_convert_column('photos', 'id', 'instagram:17');
INSERT INTO photos (caption) SELECT 'new' FROM generate_series(1, 10);
SELECT pg_get_expr(adbin, adrelid) AS "default" FROM pg_attrdef WHERE adrelid = 'photos'::regclass;
SELECT count(*) AS new_rows, bool_and(instagram_id_shard(id) = 17) AS shard_17,
       bool_and(id > 1) AS above_old
  FROM photos WHERE caption = 'new';

--
-- Bad input: exact SQLSTATE, and nothing changed
--
CREATE TABLE victim (id serial PRIMARY KEY, t text, n integer, d integer DEFAULT 0,
                     e bigint DEFAULT nextval('standalone_seq') + 1);
CREATE TABLE generated (id bigint, g bigint GENERATED ALWAYS AS (id * 2) STORED);
-- the largest integer key converts (and stays as it is)
INSERT INTO victim (t) VALUES ('x');
INSERT INTO victim (id, t) VALUES (2147483647, 'x');
CREATE VIEW victim_state AS
SELECT (SELECT format_type(atttypid, atttypmod) FROM pg_attribute
         WHERE attrelid = 'victim'::regclass AND attname = 'id') AS type,
       (SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef d JOIN pg_attribute a
            ON a.attrelid = d.adrelid AND a.attnum = d.adnum
         WHERE d.adrelid = 'victim'::regclass AND a.attname = 'id') AS "default",
       to_regclass('victim_id_seq') IS NOT NULL AS has_sequence,
       (SELECT count(*) FROM victim) AS rows;
SELECT * FROM victim_state;

-- not a generator (22023, with a hint); an unknown named generator (42704);
-- shard out of range (22003)
SELECT idgen_convert_column('victim', 'id', 'Not A Generator');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_convert_column('victim', 'id', 'nosuch');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_convert_column('victim', 'id', 'instagram:');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_convert_column('victim', 'id', 'instagram:8192');
\echo :LAST_ERROR_SQLSTATE
-- NULL arguments (22004), not a silent no-op
SELECT idgen_convert_column('victim', 'id', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_convert_column('victim', NULL);
\echo :LAST_ERROR_SQLSTATE
-- no such column, a system column (42703)
SELECT idgen_convert_column('victim', 'nope');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_convert_column('victim', 'ctid');
\echo :LAST_ERROR_SQLSTATE
-- not an integer (42804)
SELECT idgen_convert_column('victim', 't');
\echo :LAST_ERROR_SQLSTATE
-- generated, no default, a default that is not a bare nextval() (55000)
SELECT idgen_convert_column('generated', 'g');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_convert_column('victim', 'n');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_convert_column('victim', 'd');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_convert_column('victim', 'e');
\echo :LAST_ERROR_SQLSTATE
-- already converted (55000)
SELECT idgen_convert_column('events', 'id');
\echo :LAST_ERROR_SQLSTATE
-- a sequence with another user (55000)
CREATE TABLE sharer (id integer DEFAULT nextval('victim_id_seq'));
SELECT idgen_convert_column('victim', 'id');
\echo :LAST_ERROR_SQLSTATE
DROP TABLE sharer;
-- a view on the column: ALTER TABLE's own error (0A000), all undone
CREATE VIEW victim_view AS SELECT id FROM victim;
SELECT idgen_convert_column('victim', 'id');
\echo :LAST_ERROR_SQLSTATE
DROP VIEW victim_view;
-- existing keys at or above the generator's IDs (55000)
CREATE TABLE far_ahead (id bigserial PRIMARY KEY);
INSERT INTO far_ahead VALUES (9223372036854775807);
\set VERBOSITY terse
SELECT idgen_convert_column('far_ahead', 'id');
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY default
SELECT pg_get_expr(adbin, adrelid) AS "default", to_regclass('far_ahead_id_seq') IS NOT NULL AS has_sequence
  FROM pg_attrdef WHERE adrelid = 'far_ahead'::regclass;
-- not an ordinary table standing alone (42809)
CREATE TABLE parted (id serial, k int) PARTITION BY RANGE (k);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (10);
SELECT idgen_convert_column('parted', 'id');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_convert_column('parted_1', 'id');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE heir () INHERITS (victim);
SELECT idgen_convert_column('victim', 'id');
\echo :LAST_ERROR_SQLSTATE
DROP TABLE heir;
SELECT idgen_convert_column('victim_state', 'rows');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_convert_column('victim_id_seq', 'last_value');
\echo :LAST_ERROR_SQLSTATE
-- not the owner (42501)
CREATE ROLE regress_idgen_convert;
GRANT SELECT, INSERT ON victim TO regress_idgen_convert;
SET ROLE regress_idgen_convert;
SELECT idgen_convert_column('victim', 'id');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- after all these failures the column is as it was
SELECT * FROM victim_state;
-- and converts once the obstacles are gone
SELECT idgen_convert_column('victim', 'id');
SELECT * FROM victim_state;

REVOKE ALL ON victim FROM regress_idgen_convert;
DROP ROLE regress_idgen_convert;

-- a named generator (sql/named.sql defined "legacy"): the DEFAULT becomes
-- idgen_next('legacy'), and its IDs sort above the old keys
CREATE TABLE t_named (id serial PRIMARY KEY, v text);
INSERT INTO t_named (v) SELECT 'old' FROM generate_series(1, 100);
SELECT idgen_convert_column('t_named', 'id', 'legacy');
INSERT INTO t_named (v) SELECT 'new' FROM generate_series(1, 100);
SELECT pg_get_expr(d.adbin, d.adrelid) AS "default",
       (SELECT min(id) FROM t_named WHERE v = 'new') > (SELECT max(id) FROM t_named WHERE v = 'old') AS above,
       (SELECT bool_and((idgen_decode('legacy', id) ->> 'worker')::int = 37) FROM t_named WHERE v = 'new') AS decodes
  FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
 WHERE d.adrelid = 't_named'::regclass AND a.attname = 'id';
DROP TABLE t_named;
