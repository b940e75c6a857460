--
-- Who may issue IDs, and who may move shards.
--
-- Generator capacity is shared by every role and database of the server,
-- so a DBA may want to keep the generators to the application's roles.
-- Revoking EXECUTE from PUBLIC does that per database; a column DEFAULT
-- runs with the privileges of the role that inserts, so the DEFAULT keeps
-- working for the roles granted EXECUTE and fails for the others.
--
\set SHOW_CONTEXT never
CREATE ROLE regress_idgen_app;
CREATE ROLE regress_idgen_other;
CREATE TABLE priv_t (id bigint PRIMARY KEY DEFAULT snowflake_id(),
                     shard_id bigint DEFAULT instagram_id(12), v text);
GRANT INSERT, SELECT ON priv_t TO regress_idgen_app, regress_idgen_other;

REVOKE EXECUTE ON FUNCTION snowflake_id(), instagram_id(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION snowflake_id(), instagram_id(integer) TO regress_idgen_app;

SET ROLE regress_idgen_app;
INSERT INTO priv_t (v) SELECT 'app' FROM generate_series(1, 100);
SELECT count(*) AS app_rows, count(DISTINCT id) AS distinct_ids FROM priv_t;
SET ROLE regress_idgen_other;
INSERT INTO priv_t (v) VALUES ('other');
\echo :LAST_ERROR_SQLSTATE
SELECT snowflake_id();
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id(12);
\echo :LAST_ERROR_SQLSTATE
-- decoding stays open to everyone
SELECT count(*) AS decodable FROM priv_t WHERE snowflake_id_node(id) = 37;
RESET ROLE;
SELECT count(*) FILTER (WHERE v = 'other') AS other_rows FROM priv_t;

GRANT EXECUTE ON FUNCTION snowflake_id(), instagram_id(integer) TO PUBLIC;

-- Functions with a server-wide effect are superuser-only in C: a GRANT in
-- one database does not open them (42501 all the same).
GRANT EXECUTE ON FUNCTION instagram_id_advance(integer, bigint),
                          instagram_id_advance(integer, bigint, boolean),
                          instagram_id_release(integer) TO regress_idgen_app;
SET ROLE regress_idgen_app;
SELECT instagram_id_advance(7, instagram_id_from_parts(now(), 7, 0));
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_advance(7, instagram_id_from_parts(now(), 7, 0), true);
\echo :LAST_ERROR_SQLSTATE
SELECT instagram_id_release(7);
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
SELECT instagram_id_shard(instagram_id(7)) = 7 AS shard_7_still_issues;

-- So are the definitions of named generators and their grants, server-wide
-- too.  In idgen.database ("postgres" here), where a superuser may call
-- them, a non-superuser granted EXECUTE still gets 42501, from the check in
-- C (its DETAIL and HINT; an ACL failure has neither), before any argument
-- is looked at: the generator named does not even exist.
\c postgres
\set SHOW_CONTEXT never
GRANT EXECUTE ON FUNCTION
      idgen_create_generator(text, text, timestamptz, interval, integer, integer, integer, text, bigint, bigint, text),
      idgen_drop_generator(text, boolean),
      idgen_grant_generator(text, text),
      idgen_revoke_generator(text, text) TO regress_idgen_app;
SET ROLE regress_idgen_app;
SELECT idgen_create_generator('regress_priv', 'time:41 node:10 seq:12');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_drop_generator('regress_priv');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_drop_generator('regress_priv', force => true);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_grant_generator('regress_priv', 'regress_idgen_app');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_revoke_generator('regress_priv', 'regress_idgen_app');
\echo :LAST_ERROR_SQLSTATE
-- the status of named generators is the view's to give: the function it
-- reads refuses a role that may not read the view, as the view does
SELECT count(*) FROM idgen_generator_status;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM idgen_generator_status_rows();
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
GRANT SELECT ON idgen_generator_status TO regress_idgen_app;
SET ROLE regress_idgen_app;
SELECT count(*) >= 0 AS readable FROM idgen_generator_status;
SELECT count(*) >= 0 AS readable FROM idgen_generator_status_rows();
RESET ROLE;
REVOKE SELECT ON idgen_generator_status FROM regress_idgen_app;
SELECT count(*) AS regress_priv_defined FROM idgen_generator_status WHERE name = 'regress_priv';
-- those grants are in this database: DROP OWNED here revokes them
DROP OWNED BY regress_idgen_app;
\c contrib_regression
\set SHOW_CONTEXT never

DROP TABLE priv_t;
-- the roles still hold the EXECUTE grants above: DROP OWNED revokes them
-- (and would drop anything they owned), so that DROP ROLE succeeds
DROP OWNED BY regress_idgen_app, regress_idgen_other;
DROP ROLE regress_idgen_app;
DROP ROLE regress_idgen_other;
SELECT count(*) AS roles_left FROM pg_roles
 WHERE rolname IN ('regress_idgen_app', 'regress_idgen_other');
