--
-- Lock in the SQL API: every function's name, signature, result type,
-- volatility, strictness and parallel safety, and that each has a comment;
-- and the settings' names, contexts and bounds.
--
CREATE EXTENSION idgen;

SELECT p.oid::regprocedure AS function,
       pg_get_function_result(p.oid) AS result,
       p.provolatile AS vol,
       p.proisstrict AS strict,
       p.proparallel AS par,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
  JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass
                     AND d.refobjid = e.oid
 WHERE e.extname = 'idgen'
 ORDER BY p.oid::regprocedure::text;

-- decoders and builders must be usable in indexes and generated columns
SELECT count(*) AS not_immutable
  FROM pg_proc
 WHERE proname ~ '^(snowflake|instagram)_id_'
   AND proname NOT IN ('instagram_id_advance', 'instagram_id_release')  -- admin functions
   AND proname !~ '_batch$'  -- generators
   AND (provolatile <> 'i' OR NOT proisstrict OR proparallel <> 's');

SELECT name, context, vartype, unit, min_val, max_val, boot_val
  FROM pg_settings
 WHERE name LIKE 'idgen.%'
 ORDER BY name;

-- the prefix is reserved: a misspelt setting is an error, not a placeholder
SET idgen.nodeid = 1;
\echo :LAST_ERROR_SQLSTATE
-- fixed at server start, or only by reload
SET idgen.node_id = 1;
\echo :LAST_ERROR_SQLSTATE
SET idgen.epoch = '2025-01-01 00:00:00+00';
\echo :LAST_ERROR_SQLSTATE
SET idgen.max_lead = 10;
\echo :LAST_ERROR_SQLSTATE
