/*-------------------------------------------------------------------------
 *
 * shared/storage.c
 *	  Where the keeper's durable state lives: its objects in idgen.database,
 *	  found by OID and trusted only if superusers control them, the
 *	  sequences and the shard floor table's rows, and the marker file.
 *
 * The keeper (keeper/main.c) decides what to load, reserve and floor, and when;
 * the functions here find, check, read and write, inside the transactions
 * the keeper begins and commits durably.  They touch no shared memory and
 * take no lock of idgen's: only the table locks of the relations they
 * open.  The front uses the trust check too: definitions are written into
 * the extension's schema (idgen_create_generator) only if
 * idgen_schema_trusted() says that superusers alone control it.  The rows
 * of idgen_generator and idgen_generator_grant are read by the registry's
 * load (idgen_registry_load), those of idgen_counter_state and the data
 * directory's file of counter bounds by the counters' durable state
 * (idgen_registry_load_counters, idgen_registry_write_counters).
 *
 * Storage.  The reservation lives in the sequence idgen_hwm, a member of
 * the extension in the database idgen.database (created there by the keeper
 * in schema public if missing), as an absolute Unix millisecond; the
 * sequence idgen_epoch records the epoch it was made under, and the table
 * idgen_shard_floor (1.1) the floors instagram_id_advance() set.  All are
 * WAL-logged, so they reach physical standbys and survive crashes.  The
 * marker file IDGEN_MARKER_FILE in the data directory says that durable
 * state has existed (keeper/main.c, "Lost state").
 *
 * Trust.  The keeper runs as the bootstrap superuser, so everything a
 * non-superuser could own or rename is hostile.  It runs no SQL built from
 * names: it finds its objects by OID through the extension's membership
 * (pg_depend), checks every time that they are what they should be and
 * owned by a superuser, and reads and writes them through the sequence
 * functions and the heap directly.  The only SQL text it runs is the
 * constant CREATE EXTENSION.  It refuses (fails closed) a control database
 * that a non-superuser owns, or an extension in a schema a non-superuser
 * owns, and pins the settings it depends on whatever the database's or
 * role's defaults say.
 *
 * IDENTIFICATION
 *	  src/shared/storage.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "idgen.h"
#include "shared/storage.h"

static Oid
idgen_keeper_database_owner(void)
{
	HeapTuple	tup;
	Oid			owner;

	tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(MyDatabaseId));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for database %u", MyDatabaseId);
	owner = ((Form_pg_database) GETSTRUCT(tup))->datdba;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * Is a role that owns something in this database a superuser?  A schema
 * owned by pg_database_owner (public, from PostgreSQL 15 on) is in effect
 * owned by the database's owner.
 */
static bool
idgen_keeper_role_trusted(Oid roleid)
{
	if (roleid == ROLE_PG_DATABASE_OWNER)
		roleid = idgen_keeper_database_owner();
	return superuser_arg(roleid);
}

static Oid
idgen_keeper_namespace_owner(Oid nspid)
{
	HeapTuple	tup;
	Oid			owner;

	tup = SearchSysCache1(NAMESPACEOID, ObjectIdGetDatum(nspid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for schema %u", nspid);
	owner = ((Form_pg_namespace) GETSTRUCT(tup))->nspowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * Is the schema controlled by superusers only?  For keeper/load.c, which
 * writes definitions into the extension's schema in idgen.database.
 */
bool
idgen_schema_trusted(Oid nspid)
{
	return idgen_keeper_role_trusted(idgen_keeper_namespace_owner(nspid));
}

/*
 * The owner of idgen.database can drop or rename anything in it that it
 * owns, and set the keeper's defaults with ALTER DATABASE: only a
 * superuser may own it.
 */
static void
idgen_keeper_check_database(void)
{
	Oid			owner = idgen_keeper_database_owner();

	if (!superuser_arg(owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("database \"%s\" is owned by role \"%s\", which is not a superuser",
						idgen_database, GetUserNameFromId(owner, true)),
				 errdetail("The keeper keeps the durable ID reservation of the whole server there; a non-superuser owner could tamper with it."),
				 errhint("Make a superuser the owner of database \"%s\", or set \"idgen.database\" to a database a superuser owns.",
						 idgen_database)));
}

/*
 * Create the extension in schema public, which must be controlled by
 * superusers only.  The statement is constant text: nothing in it comes
 * from the catalogs.
 */
/*
 * After CREATE EXTENSION failed with edata because a name was taken: if
 * schema public (nsp) holds a relation, type or function under one of
 * the extension's prefixes, named in the error, that a role the keeper
 * does not trust owns, that is the cause: say which and whose, with the
 * original error's SQLSTATE.  Otherwise return, and the caller raises the
 * original error.
 */
static void
idgen_keeper_refuse_squatter(Oid nsp, ErrorData *edata)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(nsp)};

	/* only a name already taken, and only the one the error names */
	if (edata->sqlerrcode != ERRCODE_DUPLICATE_TABLE &&
		edata->sqlerrcode != ERRCODE_DUPLICATE_OBJECT &&
		edata->sqlerrcode != ERRCODE_DUPLICATE_FUNCTION)
		return;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(
							  "SELECT o.kind, o.name, o.owner::pg_catalog.oid, pg_catalog.pg_get_userbyid(o.owner)"
							  "  FROM (SELECT 'relation' AS kind, relname AS name, relowner AS owner"
							  "          FROM pg_catalog.pg_class WHERE relnamespace = $1"
							  "        UNION ALL"
							  "        SELECT 'type', typname, typowner"
							  "          FROM pg_catalog.pg_type WHERE typnamespace = $1"
							  "        UNION ALL"
							  "        SELECT 'function', proname, proowner"
							  "          FROM pg_catalog.pg_proc WHERE pronamespace = $1) o"
							  " WHERE o.name OPERATOR(pg_catalog.~) '^(idgen|snowflake|instagram)_'"
							  " ORDER BY 2, 1",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the catalogs");
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	row = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		Oid			owner = DatumGetObjectId(SPI_getbinval(row, desc, 3, &isnull));

		if (idgen_keeper_role_trusted(owner) ||
			edata->message == NULL ||
			strstr(edata->message, psprintf("\"%s\"", SPI_getvalue(row, desc, 2))) == NULL)
			continue;
		ereport(ERROR,
				(errcode(edata->sqlerrcode),
				 errmsg("extension idgen cannot be created in database \"%s\": schema \"public\" has a %s \"%s\" owned by role \"%s\"",
						idgen_database, SPI_getvalue(row, desc, 1),
						SPI_getvalue(row, desc, 2), SPI_getvalue(row, desc, 4)),
				 errdetail("Role \"%s\" may create objects in schema \"public\", and took a name the extension needs: until it is gone, no generator on this server issues IDs.  CREATE EXTENSION said: %s",
						   SPI_getvalue(row, desc, 4), edata->message),
				 errhint("As a superuser, drop or rename it, and REVOKE CREATE ON SCHEMA public FROM PUBLIC.")));
	}
	SPI_finish();
}

static void
idgen_keeper_create_extension(void)
{
	Oid			nsp = get_namespace_oid("public", true);
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	if (!OidIsValid(nsp) ||
		!idgen_keeper_role_trusted(idgen_keeper_namespace_owner(nsp)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension idgen is not installed in database \"%s\"",
						idgen_database),
				 errdetail("The keeper creates it only in schema \"public\", and only if that schema exists and belongs to a superuser."),
				 errhint("As a superuser, run CREATE EXTENSION idgen in database \"%s\", in a schema only superusers own.",
						 idgen_database)));

	ereport(LOG,
			(errmsg("idgen keeper: creating extension idgen in database \"%s\" to hold the ID reservation",
					idgen_database)));

	/*
	 * In a subtransaction, so that a failure can be explained: where
	 * PUBLIC may create in schema public (clusters upgraded from
	 * PostgreSQL 14 or earlier), any role can squat one of the
	 * extension's names there and so stop every generator.
	 */
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		if (SPI_execute("CREATE EXTENSION idgen SCHEMA public", false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not create extension idgen");
		SPI_finish();
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		idgen_keeper_refuse_squatter(nsp, edata);
		ReThrowError(edata);
	}
	PG_END_TRY();
	CommandCounterIncrement();
}

/* The owner and schema of the extension with OID extoid. */
static void
idgen_keeper_extension_owner(Oid extoid, Oid *owner, Oid *schema)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "could not find extension %u", extoid);
	*owner = ((Form_pg_extension) GETSTRUCT(tup))->extowner;
	*schema = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
}

/* The schema of extension idgen in this database (error if absent). */
Oid
idgen_extension_schema(void)
{
	Oid			owner;
	Oid			schema;

	idgen_keeper_extension_owner(get_extension_oid("idgen", false), &owner,
								 &schema);
	return schema;
}

/*
 * Check one member relation of the extension and note it if it is one of
 * ours: a permanent relation of the expected kind, owned by a superuser.
 */
static void
idgen_keeper_note_member(Oid relid, IdgenKeeperObjects *objs)
{
	HeapTuple	tup;
	Form_pg_class cls;
	Oid		   *slot = NULL;
	char		kind = RELKIND_SEQUENCE;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	cls = (Form_pg_class) GETSTRUCT(tup);
	if (strcmp(NameStr(cls->relname), "idgen_hwm") == 0)
		slot = &objs->hwm;
	else if (strcmp(NameStr(cls->relname), "idgen_epoch") == 0)
		slot = &objs->epoch;
	else if (strcmp(NameStr(cls->relname), "idgen_shard_floor") == 0)
	{
		slot = &objs->floors;
		kind = RELKIND_RELATION;
	}
	else if (strcmp(NameStr(cls->relname), "idgen_generator") == 0)
	{
		slot = &objs->registry;
		kind = RELKIND_RELATION;
	}
	else if (strcmp(NameStr(cls->relname), "idgen_counter_state") == 0)
	{
		slot = &objs->counters;
		kind = RELKIND_RELATION;
	}
	else if (strcmp(NameStr(cls->relname), "idgen_generator_grant") == 0)
	{
		slot = &objs->grants;
		kind = RELKIND_RELATION;
	}
	if (slot != NULL)
	{
		if (cls->relkind != kind ||
			cls->relpersistence != RELPERSISTENCE_PERMANENT ||
			!superuser_arg(cls->relowner))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("idgen's \"%s\" in database \"%s\" is not a logged %s owned by a superuser",
							NameStr(cls->relname), idgen_database,
							kind == RELKIND_SEQUENCE ? "sequence" : "table"),
					 errdetail("The keeper keeps the durable ID reservation there and trusts nothing else."),
					 idgen_errhint_repair()));
		*slot = relid;
	}
	ReleaseSysCache(tup);
}

/*
 * Find the keeper's objects by OID, creating the extension if it is not
 * there, and check that no non-superuser controls them.  Caller has begun
 * a transaction.
 */
void
idgen_keeper_find_objects(IdgenKeeperObjects *objs)
{
	Oid			extoid;
	Oid			extowner;
	Oid			extschema;
	Relation	rel;
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;

	idgen_keeper_check_database();

	extoid = get_extension_oid("idgen", true);
	if (!OidIsValid(extoid))
	{
		idgen_keeper_create_extension();
		extoid = get_extension_oid("idgen", false);
	}
	idgen_keeper_extension_owner(extoid, &extowner, &extschema);
	if (!superuser_arg(extowner) ||
		!idgen_keeper_role_trusted(idgen_keeper_namespace_owner(extschema)))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("extension idgen in database \"%s\" is in a schema, or has an owner, that is not a superuser",
						idgen_database),
				 errdetail("The keeper keeps the durable ID reservation there; whoever owns the schema could drop or replace it."),
				 errhint("As a superuser, move it with ALTER EXTENSION idgen SET SCHEMA to a schema only superusers own.")));

	objs->hwm = InvalidOid;
	objs->epoch = InvalidOid;
	objs->floors = InvalidOid;
	objs->registry = InvalidOid;
	objs->counters = InvalidOid;
	objs->grants = InvalidOid;

	rel = table_open(DependRelationId, AccessShareLock);
	ScanKeyInit(&key[0], Anum_pg_depend_refclassid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(ExtensionRelationId));
	ScanKeyInit(&key[1], Anum_pg_depend_refobjid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(extoid));
	scan = systable_beginscan(rel, DependReferenceIndexId, true, NULL, 2, key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_depend dep = (Form_pg_depend) GETSTRUCT(tup);

		if (dep->deptype == DEPENDENCY_EXTENSION &&
			dep->classid == RelationRelationId)
			idgen_keeper_note_member(dep->objid, objs);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);

	if (!OidIsValid(objs->hwm) || !OidIsValid(objs->epoch))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension idgen in database \"%s\" lacks its sequences idgen_hwm and idgen_epoch",
						idgen_database),
				 idgen_errhint_repair()));
}

/* A sequence's value, or false if it has none yet (not is_called). */
bool
idgen_keeper_read_sequence(Oid seqoid, int64 *value)
{
	LOCAL_FCINFO(fcinfo, 1);
	Datum		result;

	InitFunctionCallInfoData(*fcinfo, NULL, 1, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = ObjectIdGetDatum(seqoid);
	fcinfo->args[0].isnull = false;
	result = pg_sequence_last_value(fcinfo);
	if (fcinfo->isnull)
		return false;
	*value = DatumGetInt64(result);
	return true;
}

void
idgen_keeper_write_sequence(Oid seqoid, int64 value)
{
	(void) DirectFunctionCall2(setval_oid, ObjectIdGetDatum(seqoid),
							   Int64GetDatum(value));
}

/*
 * The hint for an object of the extension that idgen does not trust
 * (missing, altered, of another kind or owner).  A standby follows its
 * primary and can only be repaired there.
 */
int
idgen_errhint_repair(void)
{
	if (RecoveryInProgress())
		return errhint("On the primary, drop and re-create the extension in database \"%s\" as a superuser; this standby follows.",
					   idgen_database);
	return errhint("Drop and re-create the extension in database \"%s\" as a superuser.",
				   idgen_database);
}

/*
 * Open idgen_shard_floor and check that it is a plain heap table of
 * (integer, bigint, boolean, bigint) without indexes, which is all the
 * keeper's direct heap access handles.
 */
Relation
idgen_keeper_open_floors(Oid relid, LOCKMODE lockmode)
{
	Relation	rel = table_open(relid, lockmode);
	TupleDesc	desc = RelationGetDescr(rel);

	if (rel->rd_rel->relam != HEAP_TABLE_AM_OID ||
		desc->natts != IDGEN_FLOOR_NCOLUMNS ||
		TupleDescAttr(desc, 0)->atttypid != INT4OID ||
		TupleDescAttr(desc, 0)->attisdropped ||
		TupleDescAttr(desc, 1)->atttypid != INT8OID ||
		TupleDescAttr(desc, 1)->attisdropped ||
		TupleDescAttr(desc, 2)->atttypid != BOOLOID ||
		TupleDescAttr(desc, 2)->attisdropped ||
		TupleDescAttr(desc, 3)->atttypid != INT8OID ||
		TupleDescAttr(desc, 3)->attisdropped ||
		rel->rd_rel->relhasindex)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen's table idgen_shard_floor in database \"%s\" has been altered",
						idgen_database),
				 idgen_errhint_repair()));
	return rel;
}

/* One row of idgen_shard_floor, decoded here only. */
typedef struct IdgenFloorRow
{
	int32		shard;
	uint64		position;
	bool		released;
	int64		event;
} IdgenFloorRow;

/* Decode a row; false for one that names no shard (altered by hand). */
static bool
idgen_keeper_floor_row(Relation rel, HeapTuple tup, IdgenFloorRow *row)
{
	Datum		values[IDGEN_FLOOR_NCOLUMNS];
	bool		nulls[IDGEN_FLOOR_NCOLUMNS];
	int64		id;

	heap_deform_tuple(tup, RelationGetDescr(rel), values, nulls);
	for (int i = 0; i < IDGEN_FLOOR_NCOLUMNS; i++)
		if (nulls[i])
			return false;
	row->shard = DatumGetInt32(values[0]);
	id = DatumGetInt64(values[1]);
	if (row->shard < 0 || row->shard > IDGEN_INSTAGRAM_MAX_SHARD || id < 0)
		return false;
	row->position = idgen_instagram_position(id);
	row->released = DatumGetBool(values[2]);
	row->event = DatumGetInt64(values[3]);
	return true;
}

/*
 * Read the whole table: each shard's floor (its highest position) and
 * whether its latest event released it.
 */
void
idgen_keeper_read_floors(Oid relid, uint64 *floors, bool *released,
						 int64 *last_event)
{
	Relation	rel = idgen_keeper_open_floors(relid, AccessShareLock);
	TableScanDesc scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	HeapTuple	tup;
	int64	   *latest = palloc0(sizeof(int64) * IDGEN_INSTAGRAM_NSHARDS);

	*last_event = 0;
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		IdgenFloorRow row;

		if (!idgen_keeper_floor_row(rel, tup, &row))
			continue;
		floors[row.shard] = Max(floors[row.shard], row.position);
		if (row.event >= latest[row.shard])
		{
			latest[row.shard] = row.event;
			released[row.shard] = row.released;
		}
		*last_event = Max(*last_event, row.event);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	pfree(latest);
}

bool
idgen_keeper_marker_exists(void)
{
	struct stat st;

	return stat(IDGEN_MARKER_FILE, &st) == 0;
}

/* Write the marker file durably, once durable state exists. */
void
idgen_keeper_write_marker(void)
{
	FILE	   *f;

	if (idgen_keeper_marker_exists())
		return;
	f = AllocateFile(IDGEN_MARKER_FILE, PG_BINARY_W);
	if (f == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", IDGEN_MARKER_FILE)));
	fprintf(f, "idgen keeps its durable ID reservation in database \"%s\" of this cluster.\n"
			"Without this file, a missing reservation is taken for a first start.\n",
			idgen_database);
	if (fflush(f) != 0 || pg_fsync(fileno(f)) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", IDGEN_MARKER_FILE)));
	if (FreeFile(f) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", IDGEN_MARKER_FILE)));
	fsync_fname(".", true);
}

