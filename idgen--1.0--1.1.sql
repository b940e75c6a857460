/* idgen--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION idgen UPDATE TO '1.1'" to load this file. \quit

--
-- Moving an instagram shard between servers without a window for
-- duplicates (docs/several-servers.md, "Logical shards").
--

-- Durable floors set by instagram_id_advance(), and releases made by
-- instagram_id_release(), kept by the keeper in the database named by
-- idgen.database (in other databases it stays empty).  Rows are only ever
-- added; a shard's floor is its highest ID, and its row with the highest
-- event says whether the shard is released on this server (true after
-- instagram_id_release(), false after instagram_id_advance()).  WAL-logged,
-- so a promoted standby keeps a release too.  No index: the keeper reads
-- and writes it through the heap directly, by OID.
CREATE TABLE idgen_shard_floor (
	shard integer NOT NULL,
	id bigint NOT NULL,
	released boolean NOT NULL DEFAULT false,
	event bigint NOT NULL DEFAULT 0
);
COMMENT ON TABLE idgen_shard_floor IS
'idgen: per-shard floors set by instagram_id_advance() and releases by instagram_id_release(); kept by the keeper';
REVOKE ALL ON TABLE idgen_shard_floor FROM PUBLIC;
-- pg_dump carries the floors and releases: a server restored without them
-- would issue a moved shard's IDs again, or below its floor
SELECT pg_catalog.pg_extension_config_dump('idgen_shard_floor', '');

-- Stops the shard on this server at once, statements already running
-- included, and returns the ID to pass to instagram_id_advance() on the
-- shard's new server.  Superuser only (checked in C too).
CREATE FUNCTION instagram_id_release(shard integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_instagram_id_release'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION instagram_id_release(integer) IS
'stop issuing IDs for the shard on this server at once; returns the highest ID it may have issued for it';

REVOKE EXECUTE ON FUNCTION instagram_id_release(integer) FROM PUBLIC;

-- instagram_id_advance() refuses an ID more than idgen.max_lead ahead of
-- the clock (it would stall the shard until the clock catches up) unless
-- force is true.  A separate function, not a default on the old one, so
-- that two-argument calls keep resolving to 1.0's.
CREATE FUNCTION instagram_id_advance(shard integer, id bigint, force boolean)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_instagram_id_advance'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

-- An administrative call never does nothing on NULL input: a NULL ID (a
-- failed lookup on the shard's old server) must stop a shard move with an
-- error (22004), not skip its floor.
ALTER FUNCTION instagram_id_advance(integer, bigint) CALLED ON NULL INPUT;

COMMENT ON FUNCTION instagram_id_advance(integer, bigint, boolean) IS
'make this server issue only IDs above the given ID for its shard; force allows one beyond idgen.max_lead';

REVOKE EXECUTE ON FUNCTION instagram_id_advance(integer, bigint, boolean) FROM PUBLIC;

--
-- Batches: n IDs in one lock round trip, for clients that assign keys
-- before inserting.  Not STRICT: a NULL count or shard is an error, never a
-- NULL array.
--

CREATE FUNCTION snowflake_id_batch(n integer)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'idgen_snowflake_id_batch'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_id_batch(integer) IS
'n (1..100000) strictly increasing snowflake IDs, issued in one lock round trip';

CREATE FUNCTION instagram_id_batch(shard integer, n integer)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'idgen_instagram_id_batch'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION instagram_id_batch(integer, integer) IS
'n (1..100000) strictly increasing instagram IDs of a shard, issued in one lock round trip';

--
-- 128-bit IDs from the same engine: strictly increasing across all backends
-- of the server, covered by the durable reservation and the clock policy.
--

CREATE FUNCTION idgen_uuidv7()
RETURNS uuid
AS 'MODULE_PATHNAME', 'idgen_uuidv7'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION idgen_uuidv7() IS
'RFC 9562 version 7 UUID: Unix ms | 12-bit counter | idgen.node_id and random bits; strictly increasing across the server';

CREATE FUNCTION idgen_flake128()
RETURNS uuid
AS 'MODULE_PATHNAME', 'idgen_flake128'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION idgen_flake128() IS
'Boundary flake as a uuid: 64-bit Unix ms | 48-bit worker (idgen.node_id) | 16-bit sequence';

--
-- Named generators: any snowflake-family layout, defined once in the
-- database named by idgen.database and used by name from every database.
--

-- The definitions.  Written only by idgen_create_generator() and
-- idgen_drop_generator(); read by the keeper, by OID.  In other databases
-- the table stays empty.
CREATE TABLE idgen_generator (
	name text NOT NULL,
	layout text NOT NULL,
	epoch timestamptz NOT NULL,
	unit_ms integer NOT NULL,
	created timestamptz NOT NULL DEFAULT pg_catalog.now(),
	dropped timestamptz,
	-- counter layouts (no time field) only; NULL otherwise
	prefetch integer,
	refill integer,
	stripes integer,
	owned text,
	segment bigint,
	-- the counter hands out no value below it
	start bigint,
	-- the ID space it shares with the generators of the same space, in
	-- which their IDs are unique; NULL: a number line of its own
	space text
);
CREATE UNIQUE INDEX idgen_generator_name ON idgen_generator (name);
COMMENT ON TABLE idgen_generator IS
'idgen: named generator definitions (in idgen.database); never changed once created';
REVOKE ALL ON TABLE idgen_generator FROM PUBLIC;
-- pg_dump carries the definitions (they are configuration, not state)
SELECT pg_catalog.pg_extension_config_dump('idgen_generator', '');

-- A definition never changes and is never deleted: IDs issued under it may
-- exist, and a name must not come back with another meaning.  Only the
-- dropped mark moves.
CREATE FUNCTION idgen_generator_guard()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog
AS $$
BEGIN
	IF TG_OP = 'DELETE' OR TG_OP = 'TRUNCATE' THEN
		RAISE EXCEPTION 'idgen generator definitions are never deleted'
			USING ERRCODE = '55000',
			      HINT = 'Use idgen_drop_generator(name, force => true).';
	END IF;
	-- a dropped name may be re-created with another definition
	-- (idgen_create_generator() checks that it resumes above the old one)
	IF NEW.name IS DISTINCT FROM OLD.name OR NEW.created IS DISTINCT FROM OLD.created THEN
		RAISE EXCEPTION 'the definition of generator "%" cannot change', OLD.name
			USING ERRCODE = '55000',
			      HINT = 'Drop it and create one under a new name.';
	END IF;
	IF OLD.dropped IS NOT NULL AND NEW.dropped IS NULL THEN
		RETURN NEW;
	END IF;
	IF NEW.layout IS DISTINCT FROM OLD.layout
	   OR NEW.epoch IS DISTINCT FROM OLD.epoch OR NEW.unit_ms IS DISTINCT FROM OLD.unit_ms
	   OR NEW.prefetch IS DISTINCT FROM OLD.prefetch OR NEW.refill IS DISTINCT FROM OLD.refill
	   OR NEW.stripes IS DISTINCT FROM OLD.stripes OR NEW.owned IS DISTINCT FROM OLD.owned
	   OR NEW.segment IS DISTINCT FROM OLD.segment OR NEW.start IS DISTINCT FROM OLD.start
	   OR NEW.space IS DISTINCT FROM OLD.space THEN
		RAISE EXCEPTION 'the definition of generator "%" cannot change', OLD.name
			USING ERRCODE = '55000',
			      HINT = 'Drop it, then create it again with the new definition.';
	END IF;
	RETURN NEW;
END
$$;
COMMENT ON FUNCTION idgen_generator_guard() IS
'idgen: keeps named generator definitions unchanged';

CREATE TRIGGER idgen_generator_guard
	BEFORE UPDATE OR DELETE ON idgen_generator
	FOR EACH ROW EXECUTE FUNCTION idgen_generator_guard();
CREATE TRIGGER idgen_generator_guard_truncate
	BEFORE TRUNCATE ON idgen_generator
	FOR EACH STATEMENT EXECUTE FUNCTION idgen_generator_guard();

-- Who may draw IDs from a named generator, in every database: superusers,
-- and the grantees here (a NULL grantee is PUBLIC) with their members.
-- Written only by idgen_grant_generator() and idgen_revoke_generator();
-- read by the keeper, by OID.
CREATE TABLE idgen_generator_grant (
	name text NOT NULL,
	grantee regrole
);
COMMENT ON TABLE idgen_generator_grant IS
'idgen: who may draw from each named generator (in idgen.database); NULL grantee = PUBLIC';
REVOKE ALL ON TABLE idgen_generator_grant FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('idgen_generator_grant', '');

CREATE FUNCTION idgen_grant_generator(name text, role text)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_grant_generator'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
COMMENT ON FUNCTION idgen_grant_generator(text, text) IS
'let a role (and its members), or PUBLIC, draw IDs from a named generator in every database; superuser, in idgen.database';
REVOKE EXECUTE ON FUNCTION idgen_grant_generator(text, text) FROM PUBLIC;

CREATE FUNCTION idgen_revoke_generator(name text, role text)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_revoke_generator'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
COMMENT ON FUNCTION idgen_revoke_generator(text, text) IS
'take back what idgen_grant_generator() gave; superuser, in idgen.database';
REVOKE EXECUTE ON FUNCTION idgen_revoke_generator(text, text) FROM PUBLIC;

-- Counter generators' durable reservations, one row each, kept by the
-- keeper (by OID, through the heap: no index).
CREATE TABLE idgen_counter_state (
	name text NOT NULL,
	reserved bigint NOT NULL
);
COMMENT ON TABLE idgen_counter_state IS
'idgen: durable reservations of counter generators; kept by the keeper';
REVOKE ALL ON TABLE idgen_counter_state FROM PUBLIC;
-- pg_dump carries it with the definitions: a counter restored without its
-- state would be refused (docs/backup.md)
SELECT pg_catalog.pg_extension_config_dump('idgen_counter_state', '');

CREATE FUNCTION idgen_create_generator(name text, layout text,
	epoch timestamptz DEFAULT NULL, unit interval DEFAULT NULL,
	prefetch integer DEFAULT NULL, refill integer DEFAULT NULL,
	stripes integer DEFAULT NULL, owned text DEFAULT NULL,
	segment bigint DEFAULT NULL, start bigint DEFAULT NULL,
	space text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_create_generator'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION idgen_create_generator(text, text, timestamptz, interval, integer, integer, integer, text, bigint, bigint, text) IS
'define a named generator (superuser, in idgen.database): layout fields or a preset; epoch and unit default to the preset''s, else idgen.epoch and 1 ms; prefetch, refill, stripes, owned, segment and start for counter layouts; space: an ID space shared with other generators, snowflake_id or instagram_id (NULL: its own)';

REVOKE EXECUTE ON FUNCTION idgen_create_generator(text, text, timestamptz, interval, integer, integer, integer, text, bigint, bigint, text) FROM PUBLIC;

CREATE FUNCTION idgen_drop_generator(name text, force boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_drop_generator'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION idgen_drop_generator(text, boolean) IS
'stop a named generator everywhere (superuser, in idgen.database; needs force => true); its name stays reserved for its definition';

REVOKE EXECUTE ON FUNCTION idgen_drop_generator(text, boolean) FROM PUBLIC;

CREATE FUNCTION idgen_restart_generator(name text, start bigint DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'idgen_restart_generator'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

COMMENT ON FUNCTION idgen_restart_generator(text, bigint) IS
'restart a counter generator at start (default: its definition''s), even below values it handed out, as ALTER SEQUENCE ... RESTART (superuser, in idgen.database)';

REVOKE EXECUTE ON FUNCTION idgen_restart_generator(text, bigint) FROM PUBLIC;

-- Not STRICT: a NULL name or shard is an error, never a NULL key.
CREATE FUNCTION idgen_next(name text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next(text) IS
'next ID of a named generator';

CREATE FUNCTION idgen_next(name text, shard integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_next'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next(text, integer) IS
'next ID of a shard of a named generator with a shard field';

CREATE FUNCTION idgen_next_int(name text)
RETURNS integer
AS 'MODULE_PATHNAME', 'idgen_next_int'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next_int(text) IS
'next ID of a counter generator of at most 31 bits, as integer (22003 rather than overflow)';

CREATE FUNCTION idgen_next_batch(name text, n integer)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'idgen_next_batch'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next_batch(text, integer) IS
'n (1..100000) strictly increasing IDs of a named generator, in one lock round trip';

CREATE FUNCTION idgen_next_batch(name text, shard integer, n integer)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'idgen_next_batch_shard'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_next_batch(text, integer, integer) IS
'n (1..100000) strictly increasing IDs of a shard of a named generator';

-- Decoding and building by name read the definition in shared memory:
-- STABLE (the registry belongs to the server, not to the arguments).
CREATE FUNCTION idgen_time(name text, id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'idgen_time'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_time(text, bigint) IS
'time (start of its tick) of an ID of a named generator';

CREATE FUNCTION idgen_decode(name text, id bigint)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'idgen_decode'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_decode(text, bigint) IS
'every field of an ID of a named generator by name, time as ISO 8601 UTC';

CREATE FUNCTION idgen_from_time(name text, ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_from_time'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_from_time(text, timestamptz) IS
'smallest ID of a named generator in the tick of ts, for range scans';

CREATE FUNCTION idgen_from_time(name text, shard integer, ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_from_time_shard'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_from_time(text, integer, timestamptz) IS
'smallest ID of a shard of a named generator in the tick of ts';

CREATE FUNCTION idgen_from_parts(name text, parts jsonb)
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_from_parts'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_from_parts(text, jsonb) IS
'ID of a named generator composed of fields by name ({"time": ..., "worker": 3, ...}), each range-checked';

-- Foreign IDs: no definition, no server state.  Not STRICT so that the
-- epoch and unit can default to NULL (the preset's, else idgen.epoch and
-- 1 ms); a NULL layout or ID gives NULL.
CREATE FUNCTION idgen_decode_layout(layout text, id bigint,
	epoch timestamptz DEFAULT NULL, unit interval DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'idgen_decode_by_layout'
LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_decode_layout(text, bigint, timestamptz, interval) IS
'every field of an ID of any layout or preset, time as ISO 8601 UTC; needs no definition';

CREATE FUNCTION idgen_generator_status_rows(
	OUT name text,
	OUT layout text,
	OUT epoch timestamptz,
	OUT unit_ms integer,
	OUT state text,
	OUT message text,
	OUT issued bigint,
	OUT borrowed bigint,
	OUT waits bigint,
	OUT last_time timestamptz,
	OUT lead_ms bigint,
	OUT generators integer,
	OUT counter_value bigint,
	OUT counter_reserved bigint,
	OUT prefetch integer,
	OUT refill integer,
	OUT stripes integer,
	OUT owned text,
	OUT counter_bound bigint,
	OUT space text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'idgen_generator_status_rows'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_generator_status_rows() IS
'named generators loaded on this server: definition and live state';

CREATE VIEW idgen_generator_status AS SELECT * FROM idgen_generator_status_rows();
COMMENT ON VIEW idgen_generator_status IS
'named generators loaded on this server: definition and live state';
-- ==== For applications: text forms and adopting idgen on existing
-- ==== tables (docs/applications.md, "IDs in JSON", "Adopting idgen on
-- ==== an existing table").  Batches and UUIDs are in their own sections.
--

-- Fixed-width text forms whose byte order (COLLATE "C") is the numeric
-- order; exact inverses over 0 .. 2^63-1.
CREATE FUNCTION idgen_to_text(id bigint, alphabet text DEFAULT 'crockford32')
RETURNS text
AS 'MODULE_PATHNAME', 'idgen_to_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_to_text(bigint, text) IS
'fixed-width text form of a non-negative ID (crockford32: 13 symbols, base62: 11) that sorts like the number under COLLATE "C"';

CREATE FUNCTION idgen_from_text(txt text, alphabet text DEFAULT 'crockford32')
RETURNS bigint
AS 'MODULE_PATHNAME', 'idgen_from_text'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_from_text(text, text) IS
'the ID whose idgen_to_text() text form this is (crockford32: case-insensitive, O=0, I=L=1, hyphens ignored)';

-- Adopt idgen on an existing table: a serial, bigserial, identity or
-- DEFAULT nextval() column gets an idgen DEFAULT instead, widened to
-- bigint together with every foreign-key column that references it
-- (transitively; a referencing column of a composite key too).  The
-- sequence that belonged to the column alone is dropped.  One call is one
-- transaction's worth of DDL: it locks the table and all referencing
-- tables ACCESS EXCLUSIVE first, in OID order, and any error leaves
-- everything as it was.
--
-- PL/pgSQL, run as the caller (who must own the tables).  Every name that
-- reaches dynamic SQL is a regclass output or passes through %I.  Not
-- STRICT: a NULL argument is an error, not a silent no-op.
CREATE FUNCTION idgen_convert_column(tbl regclass, col name,
                                     generator text DEFAULT 'snowflake')
RETURNS void
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $convert$
DECLARE
	v_schema	name;
	v_default	text;			-- the new DEFAULT, schema-qualified
	v_shard		bigint;
	v_rel		record;
	v_att		record;
	v_attnum	int2;
	v_attrdef	oid;
	v_seq		oid;
	v_owned		boolean := false;	-- the sequence belongs to this column
	v_users		text;
	v_locked	oid[] := '{}';
	v_new		oid[];
	v_lock		oid;
	v_wait		oid;			-- the one table whose lock we wait for
	v_busy		oid;			-- the table a NOWAIT lock failed on
	v_attempt	int;
	v_max		bigint;
	v_next		bigint;
	v_child		record;
BEGIN
	IF tbl IS NULL OR col IS NULL OR generator IS NULL THEN
		RAISE EXCEPTION 'idgen_convert_column() arguments must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;

	-- the generator, as the expression the column's DEFAULT will be
	SELECT n.nspname INTO v_schema
	  FROM pg_catalog.pg_extension e
	  JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
	 WHERE e.extname = 'idgen';
	IF generator = 'snowflake' THEN
		v_default := pg_catalog.format('%I.snowflake_id()', v_schema);
	ELSIF generator ~ '^instagram:[0-9]{1,9}$' THEN
		v_shard := pg_catalog.substr(generator, 11)::bigint;
		IF v_shard > 8191 THEN
			RAISE EXCEPTION 'shard % is out of range', v_shard
				USING ERRCODE = 'numeric_value_out_of_range',
					  DETAIL = 'The shard must be between 0 and 8191.';
		END IF;
		v_default := pg_catalog.format('%I.instagram_id(%s)', v_schema, v_shard);
	ELSIF generator ~ '^[a-z_][a-z0-9_]*$' THEN
		-- a named generator; an unknown name fails below, when one ID is drawn
		v_default := pg_catalog.format('%I.idgen_next(%L)', v_schema, generator);
	ELSE
		RAISE EXCEPTION 'unknown generator "%"', generator
			USING ERRCODE = 'invalid_parameter_value',
				  HINT = 'Use ''snowflake'' for snowflake_id(), ''instagram:<shard>'' '
						 'for instagram_id(<shard>), for example ''instagram:17'', '
						 'or the name of a named generator.';
	END IF;

	-- an ordinary table, standing alone
	SELECT c.relkind, c.relispartition INTO v_rel
	  FROM pg_catalog.pg_class c WHERE c.oid = tbl;
	IF v_rel.relkind <> 'r' OR v_rel.relispartition
	   OR EXISTS (SELECT FROM pg_catalog.pg_inherits i
				   WHERE i.inhrelid = tbl OR i.inhparent = tbl) THEN
		RAISE EXCEPTION '"%" is not an ordinary table', tbl
			USING ERRCODE = 'wrong_object_type',
				  DETAIL = CASE
					WHEN v_rel.relkind = 'p' OR v_rel.relispartition
					THEN 'idgen_convert_column() does not convert partitioned tables or partitions.'
					WHEN v_rel.relkind = 'r'
					THEN 'idgen_convert_column() does not convert tables in an inheritance hierarchy.'
					ELSE 'idgen_convert_column() converts columns of ordinary tables only.' END;
	END IF;

	SELECT a.attnum INTO v_attnum
	  FROM pg_catalog.pg_attribute a
	 WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0
	   AND NOT a.attisdropped;
	IF v_attnum IS NULL THEN
		RAISE EXCEPTION 'column "%" of relation "%" does not exist', col, tbl
			USING ERRCODE = 'undefined_column';
	END IF;

	-- Lock the table and every table whose foreign keys reach the column,
	-- directly or through other referencing columns, ACCESS EXCLUSIVE.
	--
	-- Applications lock these tables in either order (an INSERT into a
	-- child locks it, then the parent for the foreign-key check; a
	-- transaction creating a parent row and then a child the other way
	-- round), so waiting for one lock while holding another can deadlock
	-- with them, and the deadlock detector may then cancel the
	-- application's statement rather than ours.  So we wait for one table
	-- only, holding nothing, and take the others NOWAIT; if one is busy,
	-- we release everything (the block's subtransaction) and next wait for
	-- that one.  The caller's lock_timeout bounds each wait.  Once a table
	-- is locked nobody can add a foreign key to it, so the set is checked
	-- again under the locks and the round repeated if it grew.
	v_wait := tbl;
	FOR v_attempt IN 1 .. 1000 LOOP
		WITH RECURSIVE cols(rel, att) AS (
			SELECT tbl::oid, v_attnum
			UNION
			SELECT con.conrelid, con.conkey[k.i]
			  FROM cols
			  JOIN pg_catalog.pg_constraint con
				ON con.contype = 'f' AND con.confrelid = cols.rel
			   AND con.conparentid = 0
			 CROSS JOIN LATERAL pg_catalog.generate_subscripts(con.confkey, 1) AS k(i)
			 WHERE con.confkey[k.i] = cols.att
		)
		SELECT pg_catalog.array_agg(DISTINCT rel ORDER BY rel) INTO v_new FROM cols;
		EXIT WHEN v_new <@ v_locked;
		BEGIN
			v_busy := NULL;
			EXECUTE pg_catalog.format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE',
									  v_wait::regclass);
			FOREACH v_lock IN ARRAY v_new LOOP
				v_busy := v_lock;
				EXECUTE pg_catalog.format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE NOWAIT',
										  v_lock::regclass);
			END LOOP;
			v_locked := v_new;
		EXCEPTION WHEN lock_not_available THEN
			IF v_busy IS NULL THEN
				RAISE;			-- the caller's lock_timeout
			END IF;
			v_locked := '{}';
			v_wait := v_busy;
		END;
	END LOOP;
	IF NOT v_new <@ v_locked THEN
		RAISE EXCEPTION 'could not lock the tables of column "%" of relation "%"', col, tbl
			USING ERRCODE = 'lock_not_available',
				  DETAIL = 'They stayed busy through 1000 attempts.';
	END IF;

	-- From here on nothing can change under us: check the column for real.
	SELECT a.attnum, a.atttypid, a.attidentity, a.attgenerated,
		   pg_catalog.format_type(a.atttypid, a.atttypmod) AS typname
	  INTO v_att
	  FROM pg_catalog.pg_attribute a
	 WHERE a.attrelid = tbl AND a.attname = col AND NOT a.attisdropped;
	IF v_att.attnum IS DISTINCT FROM v_attnum THEN
		RAISE EXCEPTION 'column "%" of relation "%" changed during the conversion', col, tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  HINT = 'Try again.';
	END IF;
	IF v_att.atttypid NOT IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype) THEN
		RAISE EXCEPTION 'column "%" of relation "%" is of type %, not an integer type',
			col, tbl, v_att.typname
			USING ERRCODE = 'datatype_mismatch',
				  DETAIL = 'idgen IDs are bigint; only smallint, integer and bigint columns are converted.';
	END IF;
	IF v_att.attgenerated <> '' THEN
		RAISE EXCEPTION 'column "%" of relation "%" is a generated column', col, tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = 'Its values are computed from other columns, not drawn from a sequence.';
	END IF;

	-- the sequence that feeds the column
	IF v_att.attidentity <> '' THEN
		v_seq := pg_catalog.pg_get_serial_sequence(tbl::text, col::text)::regclass;
		v_owned := true;
	ELSE
		SELECT d.oid INTO v_attrdef
		  FROM pg_catalog.pg_attrdef d
		 WHERE d.adrelid = tbl AND d.adnum = v_attnum;
		IF v_attrdef IS NULL THEN
			RAISE EXCEPTION 'column "%" of relation "%" has no default', col, tbl
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = 'idgen_convert_column() converts columns fed by a sequence: serial, bigserial, identity or DEFAULT nextval().',
					  HINT = pg_catalog.format('To give the column an idgen default without converting it, use ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s.',
											   tbl, col, v_default);
		END IF;
		SELECT dep.refobjid INTO v_seq
		  FROM pg_catalog.pg_depend dep
		  JOIN pg_catalog.pg_class s ON s.oid = dep.refobjid AND s.relkind = 'S'
		 WHERE dep.classid = 'pg_catalog.pg_attrdef'::regclass
		   AND dep.objid = v_attrdef
		   AND dep.refclassid = 'pg_catalog.pg_class'::regclass
		   AND dep.deptype = 'n';
		IF v_seq IS NULL
		   OR (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid)
				 FROM pg_catalog.pg_attrdef d WHERE d.oid = v_attrdef)
			  IS DISTINCT FROM pg_catalog.format('nextval(%L::regclass)', v_seq::regclass) THEN
			RAISE EXCEPTION 'the default of column "%" of relation "%" is not nextval() of a sequence', col, tbl
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  DETAIL = pg_catalog.format('The default is %s.',
							(SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid)
							   FROM pg_catalog.pg_attrdef d WHERE d.oid = v_attrdef)),
					  HINT = 'idgen_convert_column() converts columns fed by a sequence: serial, bigserial, identity or DEFAULT nextval().';
		END IF;
		v_owned := EXISTS (
			SELECT FROM pg_catalog.pg_depend dep
			 WHERE dep.classid = 'pg_catalog.pg_class'::regclass AND dep.objid = v_seq
			   AND dep.refclassid = 'pg_catalog.pg_class'::regclass
			   AND dep.refobjid = tbl AND dep.refobjsubid = v_attnum
			   AND dep.deptype = 'a');
	END IF;

	-- The column must be the sequence's only user: other columns drawing
	-- from it would silently share IDs with a sequence we drop, or lose it.
	SELECT pg_catalog.string_agg(pg_catalog.pg_describe_object(dep.classid, dep.objid, dep.objsubid),
								 ', ' ORDER BY 1)
	  INTO v_users
	  FROM pg_catalog.pg_depend dep
	 WHERE dep.refclassid = 'pg_catalog.pg_class'::regclass AND dep.refobjid = v_seq
	   AND dep.deptype = 'n'
	   AND NOT (dep.classid = 'pg_catalog.pg_attrdef'::regclass
				AND dep.objid IS NOT DISTINCT FROM v_attrdef);
	IF v_users IS NOT NULL THEN
		RAISE EXCEPTION 'sequence "%" is used by more than column "%" of relation "%"',
			v_seq::regclass, col, tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = pg_catalog.format('Also used by: %s.', v_users),
				  HINT = 'Give the other users their own sequence or an idgen default first.';
	END IF;

	-- New IDs must sort above every existing key.  Draw one ID from the
	-- generator itself: that also proves it works here (preloaded, node id
	-- set, shard owned) before any insert depends on it.
	EXECUTE pg_catalog.format('SELECT max(%I)::bigint FROM %s', col, tbl) INTO v_max;
	EXECUTE 'SELECT ' || v_default INTO v_next;
	IF v_max >= v_next THEN
		RAISE EXCEPTION 'existing values of column "%" of relation "%" are not below the generator''s IDs', col, tbl
			USING ERRCODE = 'object_not_in_prerequisite_state',
				  DETAIL = pg_catalog.format('The largest value is %s; the generator''s next ID is %s.', v_max, v_next),
				  HINT = 'New rows would sort before existing ones.  Nothing was changed.';
	END IF;

	-- Convert.  Identity first: an identity column cannot take a DEFAULT.
	IF v_att.attidentity <> '' THEN
		v_users := v_seq::regclass::text;
		EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
		RAISE NOTICE 'dropped identity and its sequence %', v_users;
	END IF;
	-- (as in ALTER TABLE's documentation: the old default must not be
	-- carried through the type change; bigint is not rewritten again)
	EXECUTE pg_catalog.format(
		'ALTER TABLE %s ALTER COLUMN %I DROP DEFAULT, %s ALTER COLUMN %I SET DEFAULT %s',
		tbl, col,
		CASE WHEN v_att.atttypid <> 'int8'::regtype
			 THEN pg_catalog.format('ALTER COLUMN %I TYPE bigint,', col) ELSE '' END,
		col, v_default);
	IF v_att.atttypid <> 'int8'::regtype THEN
		RAISE NOTICE 'widened %(%) to bigint', tbl, pg_catalog.quote_ident(col);
	END IF;
	IF v_att.attidentity <> '' THEN
		NULL;					-- DROP IDENTITY dropped its sequence
	ELSIF v_owned THEN
		v_users := v_seq::regclass::text;
		EXECUTE pg_catalog.format('DROP SEQUENCE %s', v_users);
		RAISE NOTICE 'dropped sequence %', v_users;
	ELSE
		RAISE NOTICE 'sequence % is kept: it does not belong to column "%" of relation "%"',
			v_seq::regclass, col, tbl;
	END IF;

	-- Widen the referencing columns, one ALTER TABLE (one rewrite) per table.
	FOR v_child IN
		WITH RECURSIVE cols(rel, att) AS (
			SELECT tbl::oid, v_attnum
			UNION
			SELECT con.conrelid, con.conkey[k.i]
			  FROM cols
			  JOIN pg_catalog.pg_constraint con
				ON con.contype = 'f' AND con.confrelid = cols.rel
			   AND con.conparentid = 0
			 CROSS JOIN LATERAL pg_catalog.generate_subscripts(con.confkey, 1) AS k(i)
			 WHERE con.confkey[k.i] = cols.att
		)
		SELECT cols.rel::regclass AS rel,
			   pg_catalog.string_agg(pg_catalog.format('ALTER COLUMN %I TYPE bigint', a.attname),
									 ', ' ORDER BY a.attnum) AS alters,
			   pg_catalog.string_agg(pg_catalog.quote_ident(a.attname), ', ' ORDER BY a.attnum) AS names
		  FROM cols
		  JOIN pg_catalog.pg_attribute a ON a.attrelid = cols.rel AND a.attnum = cols.att
		 WHERE a.atttypid IN ('int2'::regtype, 'int4'::regtype)
		 GROUP BY cols.rel
		 ORDER BY cols.rel
	LOOP
		EXECUTE pg_catalog.format('ALTER TABLE %s %s', v_child.rel, v_child.alters);
		RAISE NOTICE 'widened %(%) to bigint', v_child.rel, v_child.names;
	END LOOP;
END
$convert$;

COMMENT ON FUNCTION idgen_convert_column(regclass, name, text) IS
'give a serial, bigserial, identity or DEFAULT nextval() column an idgen DEFAULT (''snowflake'', ''instagram:<shard>'' or a named generator''s name), widening it and its referencing columns to bigint and dropping its own sequence';

-- The node-id lease in etcd (idgen.lease_endpoints): its state, id, node
-- id, how long generation may go on without another renewal, who holds
-- our node id when another server does, and the last etcd error.  A
-- function of its own: idgen_status() keeps its 1.0 columns, so that the
-- views and grants users built on it survive this update.
CREATE FUNCTION idgen_lease_status(
	OUT lease_state text,
	OUT lease_id bigint,
	OUT lease_node_id integer,
	OUT lease_expires_in_ms bigint,
	OUT lease_holder text,
	OUT lease_error text,
	OUT lease_error_at timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'idgen_lease_status'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL SAFE;

COMMENT ON FUNCTION idgen_lease_status() IS
'the node-id lease in etcd, one row (lease_state off without idgen.lease_endpoints)';

-- The time decoders with the epoch as an argument: they read no setting,
-- so an index or a stored generated column built with them gives the
-- same times on a server with another idgen.epoch (a restore target, a
-- logical-replication subscriber).
CREATE FUNCTION snowflake_id_time(id bigint, epoch timestamptz)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'idgen_snowflake_id_time_epoch'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_id_time(bigint, timestamptz) IS
'time (millisecond precision) encoded in a snowflake ID issued under the given epoch; reads no setting';

CREATE FUNCTION instagram_id_time(id bigint, epoch timestamptz)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'idgen_instagram_id_time_epoch'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION instagram_id_time(bigint, timestamptz) IS
'time (millisecond precision) encoded in an instagram ID issued under the given epoch; reads no setting';
