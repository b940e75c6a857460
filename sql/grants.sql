--
-- Who may draw from a named generator: superusers, and the roles it is
-- granted to (with their members) or PUBLIC, in every database.  Others
-- get 42501 from idgen_next(), idgen_next_int() and idgen_next_batch(),
-- also through a column DEFAULT; decoding by name needs no grant.
--
\set SHOW_CONTEXT never
CREATE ROLE regress_idgen_granted;
CREATE ROLE regress_idgen_member IN ROLE regress_idgen_granted;
CREATE ROLE regress_idgen_ungranted;

\c postgres
\set SHOW_CONTEXT never
SELECT idgen_create_generator('guarded', 'zone:7=9 worker:16 seq:40');
SELECT idgen_create_generator('guarded31', 'zone:4=8 seq:31');
SELECT idgen_create_generator('guarded_time', 'time:41 tag:3=7 node:10 seq:9');

-- granting is a superuser's, in idgen.database, and names what exists
SET ROLE regress_idgen_granted;
SELECT idgen_grant_generator('guarded', 'regress_idgen_granted');
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT idgen_grant_generator('guarded', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_grant_generator(NULL, 'regress_idgen_granted');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_grant_generator('no_such_generator', 'regress_idgen_granted');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_grant_generator('guarded', 'regress_idgen_no_such_role');
\echo :LAST_ERROR_SQLSTATE
\c contrib_regression
\set SHOW_CONTEXT never
SELECT idgen_grant_generator('guarded', 'regress_idgen_granted');
\echo :LAST_ERROR_SQLSTATE

-- Until the keeper has loaded a change (right after its commit), a call
-- may still see the old grants: wait for the outcome wanted, bounded.
CREATE FUNCTION draw_as(gen text, who text, want text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	got text;
BEGIN
	FOR i IN 1 .. 600 LOOP
		BEGIN
			EXECUTE format('SET LOCAL ROLE %I', who);
			PERFORM idgen_next(gen);
			got := 'drew';
		EXCEPTION WHEN OTHERS THEN
			got := SQLSTATE;
		END;
		RESET ROLE;
		EXIT WHEN got = want;
		PERFORM pg_sleep(0.05);
	END LOOP;
	RETURN got;
END $$;

-- no grant yet: only superusers draw
SELECT idgen_next('guarded') > 0 AS superuser_draws;
SET ROLE regress_idgen_ungranted;
SELECT idgen_next('guarded');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_next_batch('guarded', 100000);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_next_int('guarded31');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_next('guarded_time');
\echo :LAST_ERROR_SQLSTATE
-- decoding by name needs none
SELECT (idgen_decode('guarded', 0) ->> 'zone')::int AS zone;
RESET ROLE;

\c postgres
SELECT idgen_grant_generator('guarded', 'regress_idgen_granted');
SELECT idgen_grant_generator('guarded_time', 'regress_idgen_granted');
-- granting twice is one grant
SELECT idgen_grant_generator('guarded', 'regress_idgen_granted');
SELECT name, grantee FROM idgen_generator_grant ORDER BY name, grantee::text;
\c contrib_regression
\set SHOW_CONTEXT never
SELECT draw_as('guarded', 'regress_idgen_granted', 'drew') AS granted,
       draw_as('guarded', 'regress_idgen_member', 'drew') AS member,
       draw_as('guarded_time', 'regress_idgen_member', 'drew') AS member_time,
       draw_as('guarded', 'regress_idgen_ungranted', '42501') AS ungranted,
       draw_as('guarded31', 'regress_idgen_granted', '42501') AS other_generator;

-- a column DEFAULT runs as the role that inserts
CREATE TABLE guarded_rows (id bigint PRIMARY KEY DEFAULT idgen_next('guarded'), v int);
GRANT SELECT, INSERT ON guarded_rows TO regress_idgen_granted, regress_idgen_ungranted;
SET ROLE regress_idgen_granted;
INSERT INTO guarded_rows (v) SELECT g FROM generate_series(1, 1000) g;
RESET ROLE;
SET ROLE regress_idgen_ungranted;
INSERT INTO guarded_rows (v) VALUES (0);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT count(*) AS rows, count(DISTINCT id) = count(*) AS distinct_ids FROM guarded_rows;

-- a role taken away takes the grant with it, also for a call site that
-- was allowed a moment before in the same transaction
CREATE ROLE regress_idgen_leaving IN ROLE regress_idgen_granted;
BEGIN;
CREATE FUNCTION pg_temp.draw_guarded() RETURNS boolean LANGUAGE plpgsql
  AS $$ BEGIN RETURN idgen_next('guarded') > 0; END $$;
SET LOCAL ROLE regress_idgen_leaving;
SELECT pg_temp.draw_guarded() AS while_a_member;
RESET ROLE;
REVOKE regress_idgen_granted FROM regress_idgen_leaving;
SET LOCAL ROLE regress_idgen_leaving;
SELECT pg_temp.draw_guarded() AS after_leaving;
\echo :LAST_ERROR_SQLSTATE
ROLLBACK;
DROP ROLE regress_idgen_leaving;

-- revoked: refused again; PUBLIC: everyone
\c postgres
SELECT idgen_revoke_generator('guarded', 'regress_idgen_granted');
\c contrib_regression
\set SHOW_CONTEXT never
SELECT draw_as('guarded', 'regress_idgen_member', '42501') AS member_after_revoke;
\c postgres
SELECT idgen_grant_generator('guarded', 'PUBLIC');
\c contrib_regression
\set SHOW_CONTEXT never
SELECT draw_as('guarded', 'regress_idgen_ungranted', 'drew') AS public_grant;
\c postgres
SELECT idgen_revoke_generator('guarded', 'public');
SELECT idgen_revoke_generator('guarded_time', 'regress_idgen_granted');
-- dropping a generator drops its grants: created again, it is granted to no one
SELECT idgen_grant_generator('guarded31', 'PUBLIC');
\c contrib_regression
\set SHOW_CONTEXT never
SELECT draw_as('guarded31', 'regress_idgen_ungranted', 'drew') AS granted_to_public;
\c postgres
SELECT idgen_drop_generator('guarded31', force => true);
SELECT idgen_create_generator('guarded31', 'zone:4=8 seq:31');
SELECT count(*) AS grants_left FROM idgen_generator_grant;
\c contrib_regression
\set SHOW_CONTEXT never
SELECT draw_as('guarded', 'regress_idgen_ungranted', '42501') AS public_revoked;
SELECT draw_as('guarded31', 'regress_idgen_ungranted', '42501') AS dropped_and_created_again;

DROP TABLE guarded_rows;
DROP FUNCTION draw_as(text, text, text);
DROP ROLE regress_idgen_member;
DROP ROLE regress_idgen_granted;
DROP ROLE regress_idgen_ungranted;
