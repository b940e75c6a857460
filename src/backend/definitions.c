/*-------------------------------------------------------------------------
 *
 * backend/definitions.c
 *	  Named generators' definitions: create, drop, grant, revoke, the view.
 *
 * idgen_create_generator(), idgen_drop_generator(),
 * idgen_grant_generator() and idgen_revoke_generator() write the rows of
 * idgen_generator and idgen_generator_grant in idgen.database, refusing a
 * definition that could issue the same IDs as another (under a table lock
 * held to commit).  Their transaction callbacks apply a drop or
 * re-creation to the slot at commit and ask the keeper to load (the wait
 * for counter values taken ahead is backend/counterissue.c's own callback).
 * idgen_generator_status_rows() is the view of the slots.
 *
 * Uses the slots through shared/slots.h (shared/slots.c, keeper/load.c); the keeper
 * installs what these functions commit.
 *
 * IDENTIFICATION
 *	  src/backend/definitions.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/heapam.h"
#include "access/xact.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/dependency.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class_d.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "common/pg_prng.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "nodes/primnodes.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "idgen.h"
#include "shared/storage.h"
#include "shared/slots.h"

/* ---- definitions ---- */

/*
 * A drop or re-creation takes effect in shared memory when its transaction
 * commits, at once, rather than at the keeper's next look: "dropped" must
 * mean that no session issues from it any more.
 */
typedef struct IdgenPendingState
{
	char		name[NAMEDATALEN];
	IdgenSlotState state;
	bool		apply;			/* set the slot's state at commit; false for
								 * a new row, which only the keeper installs */
	int			slot;			/* only if the name's slot is still this one
								 * (-1: whichever it is) */
	uint64		restart;		/* idgen_restart_generator(): its local value
								 * plus one, asked of slot (0: none) */
	SubTransactionId subid;
} IdgenPendingState;

static List *pending_states = NIL;
static bool pending_callback_registered = false;
static bool load_at_commit = false;	/* grants changed: the keeper loads */

static void
idgen_registry_xact_callback(XactEvent event, void *arg)
{
	ListCell   *lc;

	/*
	 * A restart is carried out by this session's commit: a prepared
	 * transaction may commit in another session, which would not know it.
	 */
	if (event == XACT_EVENT_PRE_PREPARE)
		foreach(lc, pending_states)
			if (((IdgenPendingState *) lfirst(lc))->restart != 0)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that has restarted a counter generator")));

	if (event == XACT_EVENT_COMMIT)
	{
		foreach(lc, pending_states)
		{
			IdgenPendingState *p = lfirst(lc);
			int			i;

			if (p->restart != 0)
			{
				/*
				 * The keeper restarts it, if the name still runs there;
				 * meanwhile it is switched off ("parked": callers are told
				 * to retry), so that no value of the old line is handed
				 * out after this commit.
				 */
				if (idgen_registry_find(p->name) == p->slot)
				{
					IdgenGenerator *gen = &idgen_registry_gens[p->slot].gen;

					/* the request first: an unpark meanwhile sees it */
					pg_atomic_write_u64(&idgen_registry_slots[p->slot].restart_at,
										p->restart);
					SpinLockAcquire(&gen->mutex);
					idgen_registry_slots[p->slot].parked = true;
					gen->owned = false;
					SpinLockRelease(&gen->mutex);
				}
				continue;
			}
			if (!p->apply)
				continue;
			i = idgen_registry_find(p->name);
			if (i >= 0 && (p->slot < 0 || p->slot == i) &&
				pg_atomic_read_u32(&idgen_registry_slots[i].state) != IDGEN_SLOT_REFUSED)
			{
				idgen_registry_slots[i].state_changed_ms = idgen_clock_monotonic_ms();
				pg_write_barrier();		/* the stamp before the state */
				idgen_slot_set_state(i, p->state, NULL);
			}
		}
	}

	/*
	 * A definition or grant committed: the keeper loads at once, without
	 * waiting for its interval between the loads that lookups ask for.
	 */
	if (event == XACT_EVENT_COMMIT && (load_at_commit || pending_states != NIL))
	{
		Latch	   *latch = idgen_keeper_latch();

		pg_atomic_fetch_add_u64(&idgen_registry_shm->changes, 1);
		pg_atomic_fetch_add_u64(&idgen_registry_shm->load_requests, 1);
		if (latch != NULL)
			SetLatch(latch);
	}

	/*
	 * A prepared transaction may commit in another session or never: the
	 * keeper's next load applies it then, as for any other session.
	 */
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE)
	{
		list_free_deep(pending_states);
		pending_states = NIL;
		load_at_commit = false;
	}
}

/* A rolled-back subtransaction takes its drops and re-creations with it. */
static void
idgen_registry_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								SubTransactionId parentSubid, void *arg)
{
	ListCell   *lc;

	foreach(lc, pending_states)
	{
		IdgenPendingState *p = lfirst(lc);

		if (p->subid != mySubid)
			continue;
		if (event == SUBXACT_EVENT_COMMIT_SUB)
			p->subid = parentSubid;
		else if (event == SUBXACT_EVENT_ABORT_SUB)
		{
			pending_states = foreach_delete_current(pending_states, lc);
			pfree(p);
		}
	}
}

/*
 * A name this transaction created or re-created is usable once it commits:
 * no load can see it before, so say so rather than wait for one (55000).
 */
void
idgen_registry_require_committed(const char *name)
{
	ListCell   *lc;
	IdgenPendingState *last = NULL;

	/* the last of the transaction's creations and drops of the name counts */
	foreach(lc, pending_states)
	{
		IdgenPendingState *p = lfirst(lc);

		if (strcmp(p->name, name) == 0 && p->restart == 0)
			last = p;
	}
	if (last != NULL && last->state == IDGEN_SLOT_ACTIVE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("generator \"%s\" is not usable before the transaction that creates it commits", name),
				 errdetail("Every database learns of a definition from the keeper, which sees only committed ones."),
				 errhint("Commit the transaction that calls idgen_create_generator(), then use the generator.")));
}

static void
idgen_registry_register_callbacks(void)
{
	if (!pending_callback_registered)
	{
		RegisterXactCallback(idgen_registry_xact_callback, NULL);
		RegisterSubXactCallback(idgen_registry_subxact_callback, NULL);
		pending_callback_registered = true;
	}
}

static void
idgen_registry_at_commit(const char *name, IdgenSlotState state, bool apply,
						 int slot)
{
	IdgenPendingState *p;
	MemoryContext oldcxt;

	if (idgen_registry_shm == NULL)
		return;
	idgen_registry_register_callbacks();
	/* the list outlives the caller's contexts (SPI's among them) */
	oldcxt = MemoryContextSwitchTo(TopMemoryContext);
	p = palloc(sizeof(IdgenPendingState));
	strlcpy(p->name, name, sizeof(p->name));
	p->state = state;
	p->apply = apply;
	p->slot = slot;
	p->restart = 0;
	p->subid = GetCurrentSubTransactionId();
	pending_states = lappend(pending_states, p);
	MemoryContextSwitchTo(oldcxt);
}

/* Named generators are defined in idgen.database only (55000). */
static void
idgen_require_control_database(const char *funcname)
{
	char	   *here = get_database_name(MyDatabaseId);

	if (here == NULL || strcmp(here, idgen_database) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("named generators are defined in database \"%s\"", idgen_database),
				 errdetail("This is database \"%s\".", here ? here : "?"),
				 errhint("Connect to database \"%s\" (\"idgen.database\") and call %s() there; the generator is then usable in every database.",
						 idgen_database, funcname)));
}

/*
 * The schema-qualified name of idgen_generator, in a schema only
 * superusers control (the caller is a superuser in idgen.database).
 */
static char *
idgen_registry_table(void)
{
	Oid			nsp = idgen_extension_schema();

	if (!idgen_schema_trusted(nsp))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("extension idgen is in a schema that is not a superuser's"),
				 errhint("Move it with ALTER EXTENSION idgen SET SCHEMA.")));
	return psprintf("%s.idgen_generator",
					quote_identifier(get_namespace_name(nsp)));
}

/* The OID of idgen_generator, in the schema idgen_registry_table() checks. */
static Oid
idgen_registry_relid(void)
{
	Oid			relid;

	(void) idgen_registry_table();
	relid = get_relname_relid("idgen_generator", idgen_extension_schema());
	if (!OidIsValid(relid))
		elog(ERROR, "table idgen_generator of extension idgen not found");
	return relid;
}

/* "<schema>.idgen", to which table names are appended */
static char *
idgen_registry_schema_prefix(void)
{
	char	   *table = idgen_registry_table();

	table[strlen(table) - strlen("_generator")] = '\0';
	return table;
}

/* A generator's or an ID space's name (what: "generator" or "ID space"). */
static void
idgen_check_generator_name(const char *name, const char *what)
{
	int			len = strlen(name);

	if (len == 0 || len >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid %s name \"%s\"", what, name),
				 errdetail("A name has 1 to %d characters.", NAMEDATALEN - 1)));
	for (int i = 0; i < len; i++)
		if (!(islower((unsigned char) name[i]) || name[i] == '_' ||
			  (i > 0 && isdigit((unsigned char) name[i]))))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid %s name \"%s\"", what, name),
					 errdetail("A name is a lower-case identifier: letters, digits and underscores.")));
}

/*
 * The definition in an SPI row whose first columns are IDGEN_REG_COLUMNS,
 * read as the keeper reads the table (idgen_registry_row), and whether it
 * is dropped.  False for a row that holds no definition or no longer
 * parses (after a LOG line).
 */
static bool
idgen_row_spec(HeapTuple tup, TupleDesc desc, IdgenSpec *spec, bool *dropped)
{
	IdgenRegistryRow row;

	if (!idgen_registry_row(tup, desc, &row))
		return false;
	*dropped = row.dropped;
	return idgen_registry_row_spec(&row, spec);
}

/*
 * The first of snowflake_id(), instagram_id() and the other named
 * generators of spec's shared ID space, dropped or not, that may issue an
 * ID on this server that spec could issue, as a phrase; NULL if none.
 * Time layouts are compared by what their bits mean
 * (idgen_spec_time_overlap), counters by their signature, a dropped
 * counter up to the bound of what it handed out.  With dropped_floor, the
 * highest such bound of the dropped counters in the table whose values
 * spec's would meet is raised into it: where a successor begins.
 *
 * Every definition that can commit before ours is seen: the caller holds
 * idgen_generator locked against other creations until its transaction
 * ends, and the rows are read with a snapshot taken after that lock (the
 * statement's own snapshot, or a repeatable-read transaction's, may
 * predate a creation that committed while we waited).  Caller is
 * connected to SPI.
 */
static const char *
idgen_space_meets(const char *name, const IdgenSpec *spec, const char *table,
				  uint64 *dropped_floor)
{
	const char *other;
	SPIPlanPtr	plan;

	other = idgen_collides_with(name, spec, idgen_current_node_id(), false,
								idgen_registry_shm != NULL ? pg_atomic_read_u32(&idgen_registry_shm->nslots) : 0);

	/* with each dropped counter's durable reservation */
	plan = SPI_prepare(psprintf("SELECT " IDGEN_REG_COLUMNS ","
								" (SELECT s.reserved FROM %s_counter_state s"
								" WHERE s.name OPERATOR(pg_catalog.=) g.name)"
								" FROM %s g",
								idgen_registry_schema_prefix(), table),
					   0, NULL);
	if (plan == NULL ||
		SPI_execute_snapshot(plan, NULL, NULL, GetLatestSnapshot(),
							 InvalidSnapshot, false, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read idgen_generator");
	for (uint64 r = 0; r < SPI_processed && (other == NULL || dropped_floor != NULL); r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		char	   *rname = SPI_getvalue(tup, SPI_tuptable->tupdesc, 1);
		IdgenSpec  *rspec = palloc(sizeof(IdgenSpec));

		bool		isnull;
		bool		dropped;
		Datum		reserved;
		uint64		below = PG_UINT64_MAX;

		if (strcmp(rname, name) == 0 ||
			!idgen_row_spec(tup, SPI_tuptable->tupdesc, rspec, &dropped))
			continue;
		reserved = SPI_getbinval(tup, SPI_tuptable->tupdesc,
								 IDGEN_REG_NCOLUMNS + 1, &isnull);
		if (dropped)
			below = idgen_dropped_counter_below(rspec, rname, !isnull,
												isnull ? 0 : (uint64) DatumGetInt64(reserved));
		if (idgen_specs_collide(spec, rspec, idgen_current_node_id(), below))
		{
			if (other == NULL)
				other = psprintf("generator \"%s\"", rname);
			if (dropped_floor != NULL && below != PG_UINT64_MAX)
				*dropped_floor = Max(*dropped_floor, below);
		}
	}
	return other;
}

/*
 * Refuse a definition that joins a shared ID space in which it could issue
 * an ID another member may issue (see idgen_space_meets).
 */
static void
idgen_refuse_same_ids(const char *name, const IdgenSpec *spec, const char *table)
{
	const char *other;

	if (spec->space[0] == '\0')
		return;
	other = idgen_space_meets(name, spec, table, NULL);
	if (other != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("generator \"%s\" would issue the same IDs as %s in ID space \"%s\"",
						name, other, spec->space),
				 errdetail("Both count the same ticks (or values) in the same bits, and no bit that both fix on this server tells their IDs apart."),
				 spec->time_field < 0 ?
				 errhint("Use %s itself, leave out \"space\" for a number line of its own, or change the layout or a constant field.  A counter that replaces a dropped one can begin at its \"counter_bound\" (\"start\").", other) :
				 errhint("Use %s itself, leave out \"space\" for a number line of its own, or change the epoch, the layout or a constant field.", other)));
}

/*
 * The definition idgen_create_generator()'s arguments give, checked: its
 * layout with epoch and unit (a preset brings its own unless given; fields
 * take idgen.epoch and 1 ms), its counter options, a time field that has
 * not run out, and node fields that hold this server's node id.
 */
static void
idgen_definition_of_args(FunctionCallInfo fcinfo, const char *name,
						 IdgenSpec *spec)
{
	char	   *layout_text = text_to_cstring(PG_GETARG_TEXT_PP(1));
	bool		epoch_given;
	bool		unit_given;
	int64		epoch;
	int32		unit;
	bool		fits;
	int32		prefetch = PG_ARGISNULL(4) ? 0 : PG_GETARG_INT32(4);
	int32		refill = PG_ARGISNULL(5) ? 0 : PG_GETARG_INT32(5);
	int32		stripes = PG_ARGISNULL(6) ? 0 : PG_GETARG_INT32(6);
	char	   *owned = PG_ARGISNULL(7) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(7));
	int64		segment = PG_ARGISNULL(8) ? 0 : PG_GETARG_INT64(8);
	int64		start = PG_ARGISNULL(9) ? 0 : PG_GETARG_INT64(9);
	char	   *space = PG_ARGISNULL(10) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(10));

	if (space != NULL)
		idgen_check_generator_name(space, "ID space");
	idgen_parse_layout(layout_text, spec, &epoch_given, &unit_given);
	if (space != NULL)
		strlcpy(spec->space, space, sizeof(spec->space));
	epoch = epoch_given ? spec->epoch_unix_ms : idgen_epoch_unix_ms;
	unit = unit_given ? spec->unit_ms : 1;
	if (!PG_ARGISNULL(2))
		epoch = idgen_epoch_to_unix_ms(PG_GETARG_TIMESTAMPTZ(2));
	if (!PG_ARGISNULL(3))
		unit = idgen_interval_to_unit_ms(PG_GETARG_INTERVAL_P(3));
	idgen_spec_set_clock(spec, epoch, unit);
	if ((!PG_ARGISNULL(4) && prefetch == 0) || (!PG_ARGISNULL(6) && stripes == 0) ||
		(!PG_ARGISNULL(8) && segment == 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid counter options"),
				 errdetail("\"prefetch\", \"stripes\" and \"segment\" are at least 1.")));
	idgen_parse_counter_options(spec, prefetch, refill, stripes, owned, segment,
								start);

	if (epoch > idgen_clock_unix_ms())
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("the epoch of generator \"%s\" is in the future", name),
				 errdetail("IDs count ticks since the epoch.")));
	if (spec->time_field >= 0 &&
		idgen_floor_div(idgen_clock_unix_ms() - epoch, unit) >= spec->tick_limit)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("the time field of generator \"%s\" has run out already", name),
				 errdetail("%d bits of %d ms ticks since the epoch end before now.",
						   spec->fields[spec->time_field].bits, unit)));
	if (spec->node_bits > 0)
	{
		int32		node_id = idgen_current_node_id();

		if (node_id < 0)
			idgen_report_no_node("idgen_create_generator");
		(void) idgen_spec_node_value(spec, node_id, &fits);
		if (!fits)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("\"idgen.node_id\" (%d) does not fit the layout's %d node bits",
							node_id, spec->node_bits),
					 errhint("Widen the node fields, or give this server a smaller node id.")));
	}
}

/* The columns of idgen_generator a definition is stored in, as SPI wants them. */
#define IDGEN_DEF_NCOLUMNS 11

typedef struct IdgenDefinitionRow
{
	Oid			argtypes[IDGEN_DEF_NCOLUMNS];
	Datum		values[IDGEN_DEF_NCOLUMNS];
	char		nulls[IDGEN_DEF_NCOLUMNS + 1];
} IdgenDefinitionRow;

static void
idgen_definition_row(const char *name, const IdgenSpec *spec,
					 IdgenDefinitionRow *row)
{
	static const Oid argtypes[IDGEN_DEF_NCOLUMNS] = {TEXTOID, TEXTOID,
		TIMESTAMPTZOID, INT4OID, INT4OID, INT4OID, INT4OID, TEXTOID, INT8OID,
	INT8OID, TEXTOID};

	memcpy(row->argtypes, argtypes, sizeof(argtypes));
	memset(row->nulls, ' ', IDGEN_DEF_NCOLUMNS);
	row->nulls[IDGEN_DEF_NCOLUMNS] = '\0';
	row->values[0] = CStringGetTextDatum(name);
	row->values[1] = CStringGetTextDatum(idgen_spec_text(spec));
	row->values[2] = TimestampTzGetDatum(idgen_unix_ms_to_timestamptz(spec->epoch_unix_ms));
	row->values[3] = Int32GetDatum(spec->unit_ms);
	if (spec->time_field < 0)
	{
		row->values[4] = Int32GetDatum(spec->counter.prefetch);
		row->values[5] = Int32GetDatum(spec->counter.refill);
		row->values[6] = Int32GetDatum(spec->counter.stripes);
		row->values[7] = CStringGetTextDatum(idgen_counter_options_text(spec));
		row->values[8] = Int64GetDatum(spec->counter.segment);
		row->values[9] = Int64GetDatum((int64) spec->counter.start);
	}
	else
		memset(row->nulls + 4, 'n', 6);
	row->values[10] = CStringGetTextDatum(spec->space);
	if (spec->space[0] == '\0')
		row->nulls[10] = 'n';
}

/*
 * A definition that replaces a dropped one while the server runs takes a
 * slot of its own (the old one keeps its values until a restart): refuse
 * (53400) where none is left, rather than commit a definition the keeper
 * cannot run.  Racy by nature (the keeper fills slots), so only a hint.
 */
static void
idgen_require_slot_room(const char *name, const IdgenSpec *spec)
{
	int			need = spec->shard_field < 0 ? 0 : 1 << spec->fields[spec->shard_field].bits;

	if (idgen_registry_shm == NULL)
		return;
	if (pg_atomic_read_u32(&idgen_registry_shm->nslots) >= (uint32) idgen_max_generators ||
		idgen_registry_shm->pool_used + need > idgen_max_generator_shards)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("no room on this server for a new definition of generator \"%s\"", name),
				 errdetail("Every name defined on this server, dropped or not, keeps a slot, and a new definition needs one of its own: \"idgen.max_generators\" (%d) or \"idgen.max_generator_shards\" (%d) are used up.",
						   idgen_max_generators, idgen_max_generator_shards),
				 errhint("Raise those settings (a restart), then create it again.")));
}

/*
 * A dropped name re-created with definition spec after had (NULL: a row
 * that no longer parses), whose values lie below "below": continue its
 * line (idgen_redefinition_problem), raising a counter's start into the
 * row to be stored, with a NOTICE, or refuse (42710) with the reason.
 */
static void
idgen_continue_line(const char *name, const IdgenSpec *had, IdgenSpec *spec,
					uint64 below, IdgenDefinitionRow *row)
{
	bool		raised = false;
	const char *problem = had != NULL ?
		idgen_redefinition_problem(had, spec, below, idgen_current_node_id(), &raised) :
		"Its stored definition no longer parses";

	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("generator \"%s\" cannot be re-created with this definition", name),
				 errdetail("%s.", problem),
				 errhint("Create it with its old definition, or choose another name.")));
	if (raised)
	{
		row->values[9] = Int64GetDatum((int64) spec->counter.start);
		ereport(NOTICE,
				(errmsg("generator \"%s\" begins at " UINT64_FORMAT " (\"start\"), above the values its old definition handed out on this server",
						name, spec->counter.start)));
	}
}

/*
 * Re-create a dropped generator, whose row is locked in SPI's tuple table.
 * With the same definition it is un-dropped, and switched on at commit.
 * With another, the row takes the new definition, which must continue the
 * name's number line (idgen_redefinition_problem): a counter resumes
 * above every value the old definition handed out here, counted in seq
 * values, and its durable state starts there.  The keeper then runs it in
 * a slot of its own and retires the old one.
 */
static void
idgen_undrop_definition(const char *name, IdgenSpec *spec,
						const char *table, IdgenDefinitionRow *row)
{
	IdgenSpec  *had = palloc(sizeof(IdgenSpec));
	bool		dropped = false;
	bool		parsed = idgen_row_spec(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, had, &dropped);
	uint64		below = PG_UINT64_MAX;
	int			slot;
	Oid			state_types[2] = {TEXTOID, INT8OID};
	Datum		state_values[2];

	if (parsed && !dropped)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("generator \"%s\" already exists", name)));
	if (parsed && idgen_spec_same(had, spec))
	{
		/* others created since it was dropped may begin above its values */
		idgen_refuse_same_ids(name, spec, table);
		if (SPI_execute_with_args(psprintf("UPDATE %s SET dropped = NULL WHERE name OPERATOR(pg_catalog.=) $1", table),
								  1, row->argtypes, row->values, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not update idgen_generator");

		/*
		 * Switched on at commit if this server runs this very definition
		 * under the name then; otherwise the keeper installs it.
		 */
		slot = idgen_registry_shm != NULL ? idgen_registry_find(name) : -1;
		idgen_registry_at_commit(name, IDGEN_SLOT_ACTIVE,
								 slot >= 0 && idgen_spec_same(&idgen_registry_slots[slot].spec, spec),
								 slot);
		return;
	}

	/*
	 * How far the old definition got here: its durable state, and its slot
	 * if this server runs that very definition (a slot of another, left
	 * from a definition dropped with the extension, tells nothing of it).
	 */
	slot = idgen_registry_shm != NULL ? idgen_registry_find(name) : -1;
	if (parsed && had->time_field < 0)
	{
		bool		isnull = true;
		Datum		reserved = (Datum) 0;

		if (SPI_execute_with_args(psprintf("SELECT reserved FROM %s_counter_state WHERE name OPERATOR(pg_catalog.=) $1",
										   idgen_registry_schema_prefix()),
								  1, row->argtypes, row->values, NULL, true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read idgen_counter_state");
		if (SPI_processed > 0)
			reserved = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (slot < 0 || idgen_spec_same(&idgen_registry_slots[slot].spec, had))
			below = idgen_slot_dropped_below(slot, had, !isnull,
											 isnull ? 0 : (uint64) DatumGetInt64(reserved));
	}
	idgen_continue_line(name, parsed ? had : NULL, spec, below, row);
	if (slot >= 0)
		idgen_require_slot_room(name, spec);
	idgen_refuse_same_ids(name, spec, table);
	if (SPI_execute_with_args(psprintf("UPDATE %s SET layout = $2, epoch = $3, unit_ms = $4, prefetch = $5, refill = $6, stripes = $7, owned = $8, segment = $9, start = $10, space = $11, dropped = NULL WHERE name OPERATOR(pg_catalog.=) $1", table),
							  IDGEN_DEF_NCOLUMNS, row->argtypes, row->values,
							  row->nulls, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update idgen_generator");

	/* the new definition's durable state, at its first local value */
	state_values[0] = row->values[0];
	state_values[1] = Int64GetDatum((int64) spec->counter.first);
	if (spec->time_field < 0 &&
		(SPI_execute_with_args(psprintf("DELETE FROM %s_counter_state WHERE name OPERATOR(pg_catalog.=) $1",
										idgen_registry_schema_prefix()),
							   1, state_types, state_values, NULL, false, 0) != SPI_OK_DELETE ||
		 SPI_execute_with_args(psprintf("INSERT INTO %s_counter_state (name, reserved) VALUES ($1, $2)",
										idgen_registry_schema_prefix()),
							   2, state_types, state_values, NULL, false, 0) != SPI_OK_INSERT))
		elog(ERROR, "could not write idgen_counter_state");
	/* noted for idgen_registry_require_committed(); the keeper installs it */
	idgen_registry_at_commit(name, IDGEN_SLOT_ACTIVE, false, -1);
}

/*
 * Store a new definition, and a counter's durable state at its first local
 * value.
 */
static void
idgen_insert_definition(const char *name, IdgenSpec *spec,
						const char *table, IdgenDefinitionRow *row,
						bool start_given)
{
	int			slot = idgen_registry_shm != NULL ? idgen_registry_find(name) : -1;
	Oid			state_types[2] = {TEXTOID, INT8OID};
	Datum		state_values[2];

	/*
	 * No row, but this server still runs the name: its row went with a
	 * dropped extension.  IDs of that definition may exist.
	 */
	if (slot >= 0 && !idgen_spec_same(&idgen_registry_slots[slot].spec, spec))
	{
		const IdgenSpec *had = &idgen_registry_slots[slot].spec;

		if (pg_atomic_read_u32(&idgen_registry_slots[slot].state) != IDGEN_SLOT_DROPPED)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("generator \"%s\" already exists on this server with another definition", name),
					 errdetail("This server still runs it, though its row was dropped with the extension since."),
					 errhint("Create it with the definition it runs, or choose another name.")));

		/* dropped before the extension was: continue its line */
		idgen_continue_line(name, had, spec,
							idgen_slot_dropped_below(slot, had, false, 0), row);
		idgen_require_slot_room(name, spec);
		slot = -1;				/* the keeper installs it, retiring the old */
	}

	/*
	 * A counter that joins a shared space without a "start" continues its
	 * number line: it begins above every value the space's dropped
	 * counters handed out here that its own values would meet (a "start"
	 * given is the user's, and checked as given).
	 */
	if (spec->time_field < 0 && spec->space[0] != '\0' && !start_given)
	{
		uint64		floor = 0;
		int			seq_bits = spec->fields[spec->seq_field].bits;

		(void) idgen_space_meets(name, spec, table, &floor);
		if (floor > spec->counter.start &&
			(seq_bits >= 63 || floor < (UINT64CONST(1) << seq_bits)) &&
			idgen_counter_local_bound(spec, floor) < spec->counter.limit)
		{
			spec->counter.start = floor;
			spec->counter.first = idgen_counter_local_bound(spec, floor);
			row->values[9] = Int64GetDatum((int64) floor);
			ereport(NOTICE,
					(errmsg("generator \"%s\" begins at " UINT64_FORMAT " (\"start\"), above the values the dropped counters of ID space \"%s\" handed out on this server",
							name, floor, spec->space)));
		}
	}
	idgen_refuse_same_ids(name, spec, table);
	if (SPI_execute_with_args(psprintf("INSERT INTO %s (name, layout, epoch, unit_ms, prefetch, refill, stripes, owned, segment, start, space) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)", table),
							  IDGEN_DEF_NCOLUMNS, row->argtypes, row->values,
							  row->nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not insert into idgen_generator");

	/*
	 * A slot of the name left from before the extension was re-created
	 * runs this very definition (checked above): switch it on at commit,
	 * as for a re-creation.  Otherwise only noted, for
	 * idgen_registry_require_committed(); the keeper installs it.
	 */
	idgen_registry_at_commit(name, IDGEN_SLOT_ACTIVE, slot >= 0, slot);

	/*
	 * A counter starts with its durable state, at its first local value (0,
	 * or the first at or above "start"): a counter whose row is missing
	 * later has lost it, and is refused rather than started again at 0.
	 */
	state_values[0] = row->values[0];
	state_values[1] = Int64GetDatum((int64) spec->counter.first);
	if (spec->time_field < 0 &&
		SPI_execute_with_args(psprintf("INSERT INTO %s_counter_state (name, reserved) SELECT $1, $2 WHERE NOT EXISTS (SELECT FROM %s_counter_state WHERE name OPERATOR(pg_catalog.=) $1)",
									   idgen_registry_schema_prefix(), idgen_registry_schema_prefix()),
							  2, state_types, state_values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not insert into idgen_counter_state");
}

/*
 * idgen_create_generator(name, layout, epoch DEFAULT NULL, unit DEFAULT
 * NULL, counter options DEFAULT NULL, space DEFAULT NULL): define a named
 * generator, or re-create a dropped one with the same definition.
 * Superuser, in idgen.database.
 */
PG_FUNCTION_INFO_V1(idgen_create_generator);
Datum
idgen_create_generator(PG_FUNCTION_ARGS)
{
	char	   *name;
	char	   *table;
	IdgenSpec	spec;
	IdgenDefinitionRow row;

	idgen_require_superuser("idgen_create_generator");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name and layout must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	idgen_require_control_database("idgen_create_generator");
	idgen_refuse_in_recovery("idgen_create_generator");
	idgen_check_generator_name(name, "generator");
	idgen_definition_of_args(fcinfo, name, &spec);
	table = idgen_registry_table();

	/*
	 * One creation at a time, to the end of its transaction: the check for
	 * definitions that would issue the same IDs must see every one that can
	 * commit (idgen_refuse_same_ids).  The lock is self-conflicting but
	 * lets readers, the keeper's loads included, go on.
	 */
	LockRelationOid(idgen_registry_relid(), ShareRowExclusiveLock);
	/* a table altered by hand is refused, not written (as the keeper does) */
	idgen_registry_check_table(idgen_registry_relid());
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	idgen_definition_row(name, &spec, &row);

	/* a name keeps its line; re-creating un-drops, or continues it */
	if (SPI_execute_with_args(psprintf("SELECT " IDGEN_REG_COLUMNS
									   " FROM %s WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
									   table),
							  1, row.argtypes, row.values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read idgen_generator");
	if (SPI_processed > 0)
		idgen_undrop_definition(name, &spec, table, &row);
	else
		idgen_insert_definition(name, &spec, table, &row, !PG_ARGISNULL(9));
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * idgen_restart_generator(name, start DEFAULT NULL): restart a counter at
 * "start" (default: its definition's), the first value of its stripes at
 * or above it, even below values it handed out: the superuser's explicit
 * choice, as ALTER SEQUENCE ... RESTART.  IDs it issued before may then be
 * issued again.  Not for a member of a shared ID space (0A000).
 * Takes effect when the transaction commits, once the keeper has recorded
 * it durably (in the table and the data directory's file); a node id's
 * lease record keeps its higher bound.  Superuser, in idgen.database.
 */
PG_FUNCTION_INFO_V1(idgen_restart_generator);
Datum
idgen_restart_generator(PG_FUNCTION_ARGS)
{
	char	   *name;
	char	   *table;
	IdgenSpec	spec;
	bool		dropped;
	uint64		start;
	uint64		first;
	int			seq_bits;
	int			slot;
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];
	MemoryContext oldcxt;
	IdgenPendingState *p;

	idgen_require_superuser("idgen_restart_generator");
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("generator name must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	idgen_require_control_database("idgen_restart_generator");
	idgen_refuse_in_recovery("idgen_restart_generator");
	table = idgen_registry_table();
	/* one change of definitions at a time, as idgen_create_generator() */
	LockRelationOid(idgen_registry_relid(), ShareRowExclusiveLock);
	idgen_registry_check_table(idgen_registry_relid());

	values[0] = CStringGetTextDatum(name);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(psprintf("SELECT " IDGEN_REG_COLUMNS
									   " FROM %s WHERE name OPERATOR(pg_catalog.=) $1 AND dropped IS NULL FOR UPDATE",
									   table),
							  1, argtypes, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read idgen_generator");
	if (SPI_processed == 0 ||
		!idgen_row_spec(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, &spec, &dropped))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("generator \"%s\" does not exist", name)));
	if (spec.time_field >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("generator \"%s\" is not a counter generator", name),
				 errdetail("A time generator follows the clock; it has no position to restart.")));

	seq_bits = spec.fields[spec.seq_field].bits;
	if (!PG_ARGISNULL(1) &&
		(PG_GETARG_INT64(1) < 0 ||
		 (seq_bits < 63 && PG_GETARG_INT64(1) >= (int64) (UINT64CONST(1) << seq_bits))))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("start " INT64_FORMAT " is out of range for generator \"%s\"",
						PG_GETARG_INT64(1), name),
				 errdetail("Its seq field holds 0 to " UINT64_FORMAT ".",
						   (seq_bits < 63 ? UINT64CONST(1) << seq_bits : UINT64CONST(1) << 63) - 1)));
	start = PG_ARGISNULL(1) ? spec.counter.start : (uint64) PG_GETARG_INT64(1);
	first = idgen_counter_local_bound(&spec, start);
	if (first >= spec.counter.limit)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("generator \"%s\" has no value at or above " UINT64_FORMAT, name, start),
				 errdetail("Its stripes end below it.")));

	/*
	 * Not in a shared ID space: its other members are checked against a
	 * dropped member's values from its stored start to its position, and
	 * a restart hides those it handed out before.
	 */
	if (spec.space[0] != '\0')
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("generator \"%s\" of the shared ID space \"%s\" cannot be restarted", name, spec.space),
				 errdetail("The space's other members would no longer be kept from the values it handed out before."),
				 errhint("Create a successor under another name in that space, with the \"start\" you want.")));
	slot = idgen_registry_shm != NULL ? idgen_registry_find(name) : -1;
	if (slot < 0 || !idgen_spec_same(&idgen_registry_slots[slot].spec, &spec) ||
		pg_atomic_read_u32(&idgen_registry_slots[slot].state) != IDGEN_SLOT_ACTIVE ||
		!idgen_registry_slots[slot].state_loaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("generator \"%s\" does not run on this server yet", name),
				 errdetail("The keeper restarts a counter that it runs."),
				 errhint("Use it once (idgen_next), then restart it.")));
	SPI_finish();

	idgen_registry_register_callbacks();
	oldcxt = MemoryContextSwitchTo(TopMemoryContext);
	p = palloc0(sizeof(IdgenPendingState));
	strlcpy(p->name, name, sizeof(p->name));
	p->state = IDGEN_SLOT_ACTIVE;
	p->slot = slot;
	p->restart = first + 1;
	p->subid = GetCurrentSubTransactionId();
	pending_states = lappend(pending_states, p);
	MemoryContextSwitchTo(oldcxt);
	PG_RETURN_VOID();
}

/*
 * Before idgen's table idgen_generator in idgen.database is dropped (the
 * object access hook, idgen.c): the named generators' definitions and
 * grants live in the extension's tables, and dropping them would lose
 * them silently (the grants at once, the definitions at the next start).
 * The table goes only with the extension, and every statement that drops
 * the extension comes here: DROP EXTENSION, DROP SCHEMA ... CASCADE of its
 * schema, DROP OWNED BY its owner.  While a generator is defined (not
 * dropped), refuse as DROP ... RESTRICT refuses for a dependent object
 * (2BP01), unless the statement said CASCADE; then say what goes with it.
 * Anything else (another table, another database, idgen 1.0 without the
 * table) is left to PostgreSQL.
 *
 * The deletion has locked the table AccessExclusive already, after any
 * creation in progress (ShareRowExclusiveLock to its commit,
 * backend/definitions.c) committed: a snapshot taken now sees it.
 */
void
idgen_check_drop_registry(Oid relid, bool cascade)
{
	char	   *relname;
	char	   *here;
	Oid			extoid;
	Relation	rel;
	Snapshot	snapshot;
	TableScanDesc scan;
	HeapTuple	tup;
	int			defined = 0;
	StringInfoData names;

	/* cheapest first: every table dropped anywhere comes by */
	relname = get_rel_name(relid);
	if (relname == NULL || strcmp(relname, "idgen_generator") != 0 ||
		RecoveryInProgress() || idgen_database == NULL)
		return;
	here = get_database_name(MyDatabaseId);
	if (here == NULL || strcmp(here, idgen_database) != 0)
		return;
	extoid = get_extension_oid("idgen", true);
	if (!OidIsValid(extoid) ||
		getExtensionOfObject(RelationRelationId, relid) != extoid)
		return;

	initStringInfo(&names);
	rel = table_open(relid, ShareLock);
	if (!idgen_registry_columns_known(RelationGetDescr(rel)))
	{
		/*
		 * Altered by hand: the keeper refuses every definition in it
		 * already, and its hint is to drop and re-create the extension.
		 */
		table_close(rel, NoLock);
		ereport(NOTICE,
				(errmsg("idgen's table idgen_generator has been altered; the definitions in it are dropped with the extension")));
		return;
	}
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	scan = table_beginscan(rel, snapshot, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		IdgenRegistryRow row;

		if (!idgen_registry_row(tup, RelationGetDescr(rel), &row) || row.dropped)
			continue;
		if (defined < 5)
			appendStringInfo(&names, "%s%s", defined > 0 ? ", " : "",
							 quote_identifier(row.name));
		defined++;
	}
	table_endscan(scan);
	UnregisterSnapshot(snapshot);
	table_close(rel, NoLock);
	if (defined > 5)
		appendStringInfo(&names, " and %d more", defined - 5);

	/*
	 * Only a superuser defines generators, and only a superuser drops them,
	 * or the durable state that keeps IDs from coming twice (the
	 * reservation, shard floors and releases, counters' states), by
	 * cascade: the owner of the extension's schema (public's is often a
	 * database's owner, an ordinary role) may drop what it holds.
	 */
	if (cascade && !superuser() && defined > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to drop extension idgen with its %d named generator(s): %s",
						defined, names.data),
				 errdetail("Only a superuser may drop the definitions of named generators, and this statement would drop them with the extension."),
				 errhint("Ask a superuser to drop them with idgen_drop_generator(), or to run the statement.")));
	if (cascade && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to drop extension idgen in database \"%s\"",
						idgen_database),
				 errdetail("This statement would drop idgen's durable state with the extension: its ID reservation, shard floors and releases, and counters' states, which keep IDs from being issued twice.  Only a superuser may."),
				 errhint("Ask a superuser to run the statement.")));
	if (defined == 0)
		return;
	if (cascade)
	{
		ereport(NOTICE,
				(errmsg("drop cascades to %d named generator(s): %s", defined, names.data),
				 errdetail("Their definitions and who may draw from them go with the extension; applications lose their grants at once.")));
		return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
			 errmsg("cannot drop extension idgen because %d named generator(s) are defined in it: %s",
					defined, names.data),
			 errdetail("Their definitions and who may draw from them are kept in the extension's tables in this database (\"idgen.database\"); dropping it would lose them."),
			 errhint("Drop them first with idgen_drop_generator(), or add CASCADE to drop them with it.  pg_dump keeps them, with the extension.")));
}

/*
 * idgen_drop_generator(name, force DEFAULT false): a generator may have
 * issued IDs, so this refuses unless forced; then the name stays reserved
 * for its definition.
 */
PG_FUNCTION_INFO_V1(idgen_drop_generator);
Datum
idgen_drop_generator(PG_FUNCTION_ARGS)
{
	char	   *name;
	bool		force;
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];

	idgen_require_superuser("idgen_drop_generator");
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("generator name must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	force = !PG_ARGISNULL(1) && PG_GETARG_BOOL(1);
	idgen_require_control_database("idgen_drop_generator");
	idgen_refuse_in_recovery("idgen_drop_generator");

	values[0] = CStringGetTextDatum(name);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(psprintf("SELECT 1 FROM %s WHERE name OPERATOR(pg_catalog.=) $1 AND dropped IS NULL FOR UPDATE",
									   idgen_registry_table()),
							  1, argtypes, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read idgen_generator");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("generator \"%s\" does not exist", name)));
	if (!force)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("generator \"%s\" may have issued IDs", name),
				 errdetail("Dropping it stops it everywhere; its name stays reserved for this definition."),
				 errhint("Call idgen_drop_generator('%s', force => true) to drop it.", name)));
	if (SPI_execute_with_args(psprintf("UPDATE %s SET dropped = pg_catalog.now() WHERE name OPERATOR(pg_catalog.=) $1",
									   idgen_registry_table()),
							  1, argtypes, values, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update idgen_generator");
	/* as DROP does for privileges: a generator created again is granted to no one */
	if (SPI_execute_with_args(psprintf("DELETE FROM %s_generator_grant WHERE name OPERATOR(pg_catalog.=) $1",
									   idgen_registry_schema_prefix()),
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not update idgen_generator_grant");
	idgen_registry_at_commit(name, IDGEN_SLOT_DROPPED, true, -1);
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * idgen_grant_generator(name, role) and idgen_revoke_generator(name, role):
 * who may draw IDs from a named generator, in every database.  role is a
 * role name or PUBLIC.  Superuser, in idgen.database; the keeper applies
 * the change right after the commit.
 */
static void
idgen_change_grant(FunctionCallInfo fcinfo, bool grant)
{
	const char *funcname = grant ? "idgen_grant_generator" : "idgen_revoke_generator";
	char	   *name;
	char	   *role;
	Oid			roleid = InvalidOid;
	char	   *prefix;
	Oid			argtypes[2] = {TEXTOID, OIDOID};
	Datum		values[2];
	char		nulls[3] = "  ";

	idgen_require_superuser(funcname);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("generator name and role must not be null"),
				 errhint("Name a role, or PUBLIC.")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	role = text_to_cstring(PG_GETARG_TEXT_PP(1));
	idgen_require_control_database(funcname);
	idgen_refuse_in_recovery(funcname);
	if (pg_strcasecmp(role, "public") != 0)
		roleid = get_role_oid(role, false);

	prefix = idgen_registry_schema_prefix();
	/* one change of a generator's grants at a time (the limit below) */
	LockRelationOid(idgen_registry_relid(), ShareRowExclusiveLock);
	values[0] = CStringGetTextDatum(name);
	values[1] = ObjectIdGetDatum(roleid);
	if (!OidIsValid(roleid))
		nulls[1] = 'n';
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(psprintf("SELECT FROM %s_generator WHERE name OPERATOR(pg_catalog.=) $1 AND dropped IS NULL",
									   prefix),
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read idgen_generator");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("generator \"%s\" does not exist", name)));

	/* a grant is one row: take the old one out either way */
	if (SPI_execute_with_args(psprintf("DELETE FROM %s_generator_grant WHERE name OPERATOR(pg_catalog.=) $1"
									   " AND ((grantee IS NULL AND $2 IS NULL)"
									   " OR grantee::pg_catalog.oid OPERATOR(pg_catalog.=) $2)",
									   prefix),
							  2, argtypes, values, nulls, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not update idgen_generator_grant");
	if (grant)
	{
		if (OidIsValid(roleid) &&
			SPI_execute_with_args(psprintf("SELECT FROM %s_generator_grant WHERE name OPERATOR(pg_catalog.=) $1 AND grantee IS NOT NULL",
										   prefix),
								  1, argtypes, values, NULL, false, 0) == SPI_OK_SELECT &&
			SPI_processed >= IDGEN_MAX_GRANTEES)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("generator \"%s\" is granted to %d roles already", name,
							IDGEN_MAX_GRANTEES),
					 errhint("Grant it to a group role, and make the roles members of that.")));
		if (SPI_execute_with_args(psprintf("INSERT INTO %s_generator_grant (name, grantee) VALUES ($1, $2::pg_catalog.regrole)",
										   prefix),
								  2, argtypes, values, nulls, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not insert into idgen_generator_grant");
	}
	SPI_finish();
	idgen_registry_register_callbacks();
	load_at_commit = true;
}

PG_FUNCTION_INFO_V1(idgen_grant_generator);
Datum
idgen_grant_generator(PG_FUNCTION_ARGS)
{
	idgen_change_grant(fcinfo, true);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(idgen_revoke_generator);
Datum
idgen_revoke_generator(PG_FUNCTION_ARGS)
{
	idgen_change_grant(fcinfo, false);
	PG_RETURN_VOID();
}

/*
 * idgen_generator_status_rows(): every loaded named generator, its
 * definition and live state, for the view idgen_generator_status.
 * Generators are read without their locks (a monitoring snapshot, as in
 * idgen_status()).
 */
PG_FUNCTION_INFO_V1(idgen_generator_status_rows);
Datum
idgen_generator_status_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	uint32		n;
	int64		now_unix = idgen_clock_unix_ms();
	Oid			view;

	/*
	 * Whoever may read the view may call the function it reads, and no
	 * one else: the function's EXECUTE is PUBLIC's, as a view's functions
	 * run with the privileges of its reader.
	 */
	view = get_relname_relid("idgen_generator_status", idgen_extension_schema());
	if (!superuser() &&
		(!OidIsValid(view) || pg_class_aclcheck(view, GetUserId(), ACL_SELECT) != ACLCHECK_OK))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for view idgen_generator_status"),
				 errhint("Grant SELECT on the view idgen_generator_status to the role that reads it.")));

	InitMaterializedSRF(fcinfo, 0);
	if (idgen_shared == NULL)
		return (Datum) 0;
	n = pg_atomic_read_u32(&idgen_registry_shm->nslots);
	pg_read_barrier();
	for (uint32 i = 0; i < n; i++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[i];
		const IdgenSpec *spec = &slot->spec;
		Datum		values[20];
		bool		nulls[20] = {0};
		uint32		state = pg_atomic_read_u32(&slot->state);
		uint64		issued = 0;
		uint64		borrowed = 0;
		uint64		waits = 0;
		uint64		last = 0;
		uint64		next = 0;
		int			seq_bits = spec->seq_field < 0 ? 0 : spec->fields[spec->seq_field].bits;
		char		message[sizeof(slot->message)];
		bool		state_known = slot->state_loaded && !slot->state_missing;

		/* one row per name: a retired slot's successor has it */
		if (slot->retired && idgen_registry_find(slot->name) != (int) i)
			continue;
		/* the keeper raised the next values before it marked the state loaded */
		pg_read_barrier();
		for (int s = 0; s < idgen_slot_ngenerators(i); s++)
		{
			volatile IdgenGenerator *gen = idgen_slot_generator(i, s);

			issued += gen->issued;
			borrowed += gen->borrowed;
			waits += gen->waits;
			if (gen->issued > 0)
				last = Max(last, spec->time_field >= 0 ? gen->at.last : gen->at.next);
			/* a counter's next value, raised to its durable state at load */
			if (spec->time_field < 0)
				next = Max(next, gen->at.next);
		}
		SpinLockAcquire(&idgen_registry_shm->mutex);
		strlcpy(message, slot->message, sizeof(message));
		SpinLockRelease(&idgen_registry_shm->mutex);

		values[0] = CStringGetTextDatum(slot->name);
		values[1] = CStringGetTextDatum(idgen_spec_text(spec));
		values[2] = TimestampTzGetDatum(idgen_unix_ms_to_timestamptz(spec->epoch_unix_ms));
		values[3] = Int32GetDatum(spec->unit_ms);
		values[4] = CStringGetTextDatum(state == IDGEN_SLOT_ACTIVE ? "active" :
										state == IDGEN_SLOT_DROPPED ? "dropped" : "refused");
		values[5] = CStringGetTextDatum(message);
		nulls[5] = message[0] == '\0';
		values[6] = Int64GetDatum((int64) issued);
		values[7] = Int64GetDatum((int64) borrowed);
		values[8] = Int64GetDatum((int64) waits);
		if (issued > 0)
		{
			int64		last_unix = spec->epoch_unix_ms +
				(int64) (last >> seq_bits) * spec->unit_ms;
			IdgenLayout layout;

			/* the ID's time; the lead is its moment's (shared/generator.c) */
			idgen_slot_layout(i, &layout);
			values[9] = TimestampTzGetDatum(idgen_unix_ms_to_timestamptz(last_unix));
			values[10] = Int64GetDatum(Max(idgen_position_unix_ms(&layout, last) - now_unix, 0));
		}
		else
			nulls[9] = nulls[10] = true;
		values[11] = Int32GetDatum(idgen_slot_ngenerators(i));
		if (spec->time_field < 0)
		{
			/* counters: at.next is the next local value, issued counts them */
			nulls[9] = nulls[10] = true;
			if (last > 0)
				values[12] = Int64GetDatum((int64) idgen_counter_value(&spec->counter, last - 1));
			else
				nulls[12] = true;
			values[13] = Int64GetDatum((int64) pg_atomic_read_u64(&slot->counter_reserved));
			values[14] = Int32GetDatum(spec->counter.prefetch);
			values[15] = Int32GetDatum(spec->counter.refill);
			values[16] = Int32GetDatum(spec->counter.stripes);
			values[17] = CStringGetTextDatum(idgen_counter_options_text(spec));

			/*
			 * every value handed out lies below the value of the
			 * reservation and below the next value, which the keeper's load
			 * raised to the durable state (for a counter that has issued
			 * nothing since a restart, a dropped one among them): where a
			 * counter that replaces this one begins.  Unknown until the
			 * keeper has loaded the state.
			 */
			{
				uint64		reserved = Max(pg_atomic_read_u64(&slot->counter_reserved), next);

				if (!state_known)
					nulls[18] = true;
				else if (reserved < spec->counter.limit)
					values[18] = Int64GetDatum((int64) idgen_counter_value(&spec->counter, reserved));
				else
					values[18] = Int64GetDatum((int64) (UINT64CONST(1) << spec->fields[spec->seq_field].bits));
			}
		}
		else
			for (int c = 12; c < 19; c++)
				nulls[c] = true;
		values[19] = CStringGetTextDatum(spec->space);
		nulls[19] = spec->space[0] == '\0';
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
