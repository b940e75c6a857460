/*-------------------------------------------------------------------------
 *
 * shared/rows.c
 *	  The rows of idgen_generator, as backends and the keeper read them.
 *
 * A definition is stored as text and numbers in a row of the table
 * idgen_generator of idgen.database, and parsed again by whoever reads
 * it: the keeper's load into the slots (idgen_registry_load), a creation
 * that checks the rows of its ID space (idgen_create_generator), a
 * standby that decodes by name (idgen_registry_read_definition).  Each
 * reader checks the table's columns first: a superuser can alter the
 * table, and a datum of another type must not be read as text or a
 * number.  A row that no longer parses is logged and skipped, never
 * raised: the parsers return their problem.
 *
 * IDENTIFICATION
 *	  src/shared/rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "idgen.h"
#include "shared/slots.h"
#include "shared/storage.h"

/*
 * Parse a stored layout.  It was validated when created; a row that fails
 * now was altered by hand, and is logged, with the reason, and skipped
 * rather than allowed to stop the keeper.  The parsers return their
 * problem instead of raising it, so nothing is caught here.
 */
static bool
idgen_registry_parse(const char *name, const char *layout_text,
					 const IdgenCounterOptions *options, IdgenSpec *spec)
{
	bool		epoch_given;
	bool		unit_given;
	IdgenProblem problem;

	if (idgen_parse_layout_soft(layout_text, spec, &epoch_given, &unit_given,
								&problem) &&
		(spec->time_field >= 0 ||
		 idgen_parse_counter_options_soft(spec, options->prefetch,
										  options->refill, options->stripes,
										  options->owned, options->segment,
										  options->start, &problem)))
		return true;
	ereport(LOG,
			(errmsg("idgen keeper: named generator \"%s\" has an invalid layout \"%s\"; not loaded",
					name, layout_text),
			 problem.detail ?
			 errdetail("%s: %s", problem.message, problem.detail) :
			 errdetail("%s.", problem.message)));
	return false;
}

/*
 * The definition of a row of idgen_generator, parsed as idgen_registry_parse()
 * parses it; false, after a LOG line, if it no longer parses.
 */
bool
idgen_registry_row_spec(const IdgenRegistryRow *row, IdgenSpec *spec)
{
	if (!idgen_registry_parse(row->name, row->layout_text, &row->options, spec))
		return false;
	idgen_spec_set_clock(spec, row->epoch, row->unit);
	if (row->space != NULL)
		strlcpy(spec->space, row->space, sizeof(spec->space));
	return true;
}

/* Do two parsed definitions issue the same IDs from the same state? */
bool
idgen_spec_same(const IdgenSpec *have, const IdgenSpec *now)
{
	if (strcmp(idgen_spec_text(have), idgen_spec_text(now)) != 0 ||
		strcmp(have->space, now->space) != 0 ||
		have->epoch_unix_ms != now->epoch_unix_ms ||
		have->unit_ms != now->unit_ms)
		return false;
	if (have->time_field < 0 &&
		(have->counter.stripes != now->counter.stripes ||
		 have->counter.segment != now->counter.segment ||
		 have->counter.prefetch != now->counter.prefetch ||
		 have->counter.refill != now->counter.refill ||
		 have->counter.start != now->counter.start ||
		 have->counter.nowned != now->counter.nowned ||
		 memcmp(have->counter.owned, now->counter.owned,
				sizeof(int32) * have->counter.nowned) != 0))
		return false;
	return true;
}

/*
 * Does a tuple descriptor of idgen_generator, or of a query that selects
 * IDGEN_REG_COLUMNS first, have columns of the types idgen_registry_row()
 * reads?  Not if the table was altered by hand (a superuser can), and a
 * datum of another type must not be read as text or a number.
 */
bool
idgen_registry_columns_known(TupleDesc desc)
{
	return !(desc->natts < IDGEN_REG_NCOLUMNS ||
		TupleDescAttr(desc, IDGEN_REG_NAME)->atttypid != TEXTOID ||
		TupleDescAttr(desc, IDGEN_REG_LAYOUT)->atttypid != TEXTOID ||
		TupleDescAttr(desc, IDGEN_REG_EPOCH)->atttypid != TIMESTAMPTZOID ||
		TupleDescAttr(desc, IDGEN_REG_UNIT_MS)->atttypid != INT4OID ||
		TupleDescAttr(desc, IDGEN_REG_DROPPED)->atttypid != TIMESTAMPTZOID ||
		TupleDescAttr(desc, IDGEN_REG_PREFETCH)->atttypid != INT4OID ||
		TupleDescAttr(desc, IDGEN_REG_REFILL)->atttypid != INT4OID ||
		TupleDescAttr(desc, IDGEN_REG_STRIPES)->atttypid != INT4OID ||
		TupleDescAttr(desc, IDGEN_REG_OWNED)->atttypid != TEXTOID ||
		TupleDescAttr(desc, IDGEN_REG_SEGMENT)->atttypid != INT8OID ||
		TupleDescAttr(desc, IDGEN_REG_START)->atttypid != INT8OID ||
		TupleDescAttr(desc, IDGEN_REG_SPACE)->atttypid != TEXTOID);
}

/* Refuse (55000) a tuple descriptor idgen_registry_columns_known() does not know. */
static void
idgen_registry_check_columns(TupleDesc desc)
{
	if (!idgen_registry_columns_known(desc))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen's table idgen_generator in database \"%s\" has been altered",
						idgen_database),
				 idgen_errhint_repair()));
}

/*
 * Open idgen_generator (relid, found by OID with idgen_keeper_find_objects(),
 * which checks that superusers own it) and check that its columns are the
 * ones idgen_registry_row() reads, and no others: a table altered by hand
 * is refused, not read.  Caller has begun a transaction and closes it.
 */
Relation
idgen_registry_open(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);

	if (rel->rd_rel->relam != HEAP_TABLE_AM_OID ||
		desc->natts != IDGEN_REG_NCOLUMNS)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen's table idgen_generator in database \"%s\" has been altered",
						idgen_database),
				 idgen_errhint_repair()));
	idgen_registry_check_columns(desc);
	return rel;
}

/*
 * Refuse idgen_generator (relid) if it was altered, as the keeper would:
 * for a creation, which may read no row of it before it writes one.
 */
void
idgen_registry_check_table(Oid relid)
{
	table_close(idgen_registry_open(relid), AccessShareLock);
}

/*
 * A row of idgen_generator as stored: a tuple of the table (opened by
 * idgen_registry_open), or of a query whose first columns are
 * IDGEN_REG_COLUMNS; their types are checked, whoever reads.  False for a
 * row that holds no definition (a part of it NULL, a name too long for a
 * slot, a unit below 1 ms): it is skipped.
 */
bool
idgen_registry_row(HeapTuple tup, TupleDesc desc, IdgenRegistryRow *row)
{
	Datum		values[IDGEN_REG_NCOLUMNS];
	bool		nulls[IDGEN_REG_NCOLUMNS];
	IdgenCounterOptions *options = &row->options;

	idgen_registry_check_columns(desc);
	for (int c = 0; c < IDGEN_REG_NCOLUMNS; c++)
		values[c] = heap_getattr(tup, c + 1, desc, &nulls[c]);
	options->prefetch = nulls[IDGEN_REG_PREFETCH] ? 0 : DatumGetInt32(values[IDGEN_REG_PREFETCH]);
	options->refill = nulls[IDGEN_REG_REFILL] ? 0 : DatumGetInt32(values[IDGEN_REG_REFILL]);
	options->stripes = nulls[IDGEN_REG_STRIPES] ? 0 : DatumGetInt32(values[IDGEN_REG_STRIPES]);
	options->owned = nulls[IDGEN_REG_OWNED] ? NULL : TextDatumGetCString(values[IDGEN_REG_OWNED]);
	options->segment = nulls[IDGEN_REG_SEGMENT] ? 0 : DatumGetInt64(values[IDGEN_REG_SEGMENT]);
	options->start = nulls[IDGEN_REG_START] ? 0 : DatumGetInt64(values[IDGEN_REG_START]);
	row->space = nulls[IDGEN_REG_SPACE] ? NULL : TextDatumGetCString(values[IDGEN_REG_SPACE]);
	if (nulls[IDGEN_REG_NAME] || nulls[IDGEN_REG_LAYOUT] ||
		nulls[IDGEN_REG_EPOCH] || nulls[IDGEN_REG_UNIT_MS])
		return false;
	row->name = TextDatumGetCString(values[IDGEN_REG_NAME]);
	row->layout_text = TextDatumGetCString(values[IDGEN_REG_LAYOUT]);
	row->epoch = idgen_timestamptz_to_unix_ms(DatumGetTimestampTz(values[IDGEN_REG_EPOCH]));
	row->unit = DatumGetInt32(values[IDGEN_REG_UNIT_MS]);
	row->dropped = !nulls[IDGEN_REG_DROPPED];
	return strlen(row->name) < NAMEDATALEN && row->unit >= 1 &&
		(row->space == NULL || strlen(row->space) < NAMEDATALEN);
}

/*
 * The definition of a named generator during recovery, for the functions
 * that need nothing else (the decoders, idgen_from_parts).  The keeper,
 * which loads the definitions into shared memory for every database, does
 * not run on a standby, so this reads the replicated table idgen_generator
 * itself, and can only in idgen.database (25006 elsewhere).  The table is
 * found and checked as the keeper finds and checks it (by OID through the
 * extension, owned by superusers, its columns unaltered), and its row read
 * and parsed as the keeper reads and parses it.  42704 for a name with no
 * row, or one that no longer parses.  A dropped generator keeps its row,
 * marked, and decodes as its slot does on the primary: the IDs it issued
 * are still in tables.
 *
 * Each call reads the table and checks everything afresh, under the
 * caller's snapshot; idgen_named_definition() keeps what it read for the
 * rest of its statement.  Caller is in a transaction.
 */
void
idgen_registry_read_definition(const char *name, IdgenSpec *spec)
{
	char	   *here = get_database_name(MyDatabaseId);
	IdgenKeeperObjects objs;
	Relation	rel;
	TupleDesc	desc;
	TableScanDesc scan;
	HeapTuple	tup;
	IdgenRegistryRow row;
	bool		found = false;

	if (here == NULL || strcmp(here, idgen_database) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("named generators are decoded only in database \"%s\" during recovery",
						idgen_database),
				 errdetail("On a standby their definitions are read from idgen_generator there; the keeper, which makes them available in every database, runs only on a primary."),
				 errhint("Connect to database \"%s\" (\"idgen.database\"), or decode with idgen_decode_layout() and the definition.",
						 idgen_database)));
	/* the keeper's checks, without its creating a missing extension */
	if (!OidIsValid(get_extension_oid("idgen", true)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension idgen is not installed in database \"%s\"",
						idgen_database)));
	idgen_keeper_find_objects(&objs);
	if (!OidIsValid(objs.registry))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension idgen in database \"%s\" has no table idgen_generator",
						idgen_database),
				 errhint("Update the extension on the primary with ALTER EXTENSION idgen UPDATE.")));

	rel = idgen_registry_open(objs.registry);
	desc = RelationGetDescr(rel);
	scan = table_beginscan(rel, ActiveSnapshotSet() ? GetActiveSnapshot() :
						   GetTransactionSnapshot(), 0, NULL);
	while (!found && (tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
		found = idgen_registry_row(tup, desc, &row) &&
			strcmp(row.name, name) == 0;
	table_endscan(scan);
	table_close(rel, AccessShareLock);

	if (!found || !idgen_registry_row_spec(&row, spec))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("generator \"%s\" does not exist", name)));
}
