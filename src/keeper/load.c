/*-------------------------------------------------------------------------
 *
 * keeper/load.c
 *	  Named generators: definitions in idgen.database, state in shared
 *	  memory; and the floors of every time generator, fixed or named.
 *
 * A named generator is a layout (base/layout.c) with an epoch and a unit, and
 * server-wide state.  Its definition is a row of the table idgen_generator
 * in idgen.database: WAL-logged, replicated, in backups.  Rows are written
 * only by idgen_create_generator() and idgen_drop_generator(), superuser
 * functions that run in that database; a trigger forbids changing a
 * definition, and a dropped name keeps its row: created again, it takes
 * the same definition, or another that continues its number line
 * (idgen_redefinition_problem).
 *
 * The keeper loads the rows into shared memory (idgen_registry_load), so
 * that every database can use a generator by name.  Slots are never reused
 * while the server runs: a name keeps its slot and its generator state,
 * dropped or not.  A backend that does not find a name asks the keeper to
 * load again (a definition committed a moment ago) and waits briefly.
 *
 * On a standby the keeper does not run and no slot is filled: generation
 * by name refuses (25006), and the functions that need only a definition
 * (the decoders, idgen_from_parts) read its row from idgen_generator in
 * idgen.database on every call, through the keeper's checks and parser
 * (idgen_registry_read_definition).
 *
 * A slot's generator is an ordinary one of the engine (shared/generator.c), with
 * the layout's own clock: its positions are (tick << seq_bits) | seq, it
 * is switched off ("owned" false) while the slot is dropped or its
 * definition is refused, and the keeper floors it above the durable
 * reservation when shared memory is new.  Sharded layouts take 2^bits
 * generators from one pool of idgen.max_generator_shards.
 *
 * The slots' shared memory, and finding one by name, are shared/slots.c's.  The
 * keeper fills a slot here, completely, before it publishes the new count
 * with a write barrier, so finding one takes no lock; a committing drop
 * (backend/definitions.c) also sets a slot's state, through idgen_slot_set_state.
 *
 * IDENTIFICATION
 *	  src/keeper/load.c
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
#include "catalog/pg_am_d.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "common/pg_prng.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/shmem.h"
#include "tcop/pquery.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "idgen.h"
#include "shared/storage.h"
#include "keeper/keeper.h"
#include "lease/counters.h"

/*
 * How long the keeper leaves a slot whose dropped mark a commit changed:
 * its load may run on a snapshot taken before that commit.
 */
#define IDGEN_REGISTRY_SETTLE_MS 5000

/* ---- the keeper's side ---- */

/*
 * Floor the time generators, fixed and named, installed or still to come,
 * at floor_unix_ms: every one when shared memory is new (the keeper's
 * load at start: IDs below the last durable reservation may have been
 * issued before a restart, crash or failover), or only those whose IDs
 * carry the node id (node_only: the reservation of a claimed node id's
 * previous holder, lease/record.c).  This is the one floor path: the
 * fixed generators are visited through shared/shmem.c's table, so that
 * none is forgotten, the slots through the registry, and a slot installed
 * later takes the floor at its install (idgen_registry_install).
 */
void
idgen_keeper_raise_floors(int64 floor_unix_ms, bool node_only)
{
	int64		floor_ms = floor_unix_ms - idgen_epoch_unix_ms;
	uint32		n;

	if (node_only)
		idgen_registry_shm->node_floor_unix_ms =
			Max(idgen_registry_shm->node_floor_unix_ms, floor_unix_ms);
	else
		idgen_registry_shm->floor_unix_ms =
			Max(idgen_registry_shm->floor_unix_ms, floor_unix_ms);
	if (floor_unix_ms <= 0)
		return;

	for (int k = 0; k < IDGEN_NFIXED; k++)
	{
		const IdgenFixedGenerator *fixed = &idgen_fixed_generators[k];

		if (node_only && !fixed->carries_node)
			continue;
		for (int i = 0; i < fixed->ngenerators; i++)
			idgen_raise_floor(idgen_fixed_generator(fixed, i), fixed->layout,
							  floor_ms);
	}

	n = pg_atomic_read_u32(&idgen_registry_shm->nslots);
	for (uint32 i = 0; i < n; i++)
	{
		const IdgenSpec *spec = &idgen_registry_slots[i].spec;
		IdgenLayout layout;

		if (spec->time_field < 0 || (node_only && spec->node_bits == 0))
			continue;
		idgen_slot_layout(i, &layout);
		for (int s = 0; s < idgen_slot_ngenerators(i); s++)
			idgen_raise_floor(idgen_slot_generator(i, s), &layout, floor_ms);
	}
}

/*
 * Raise counter slot i to a floor from outside this server's own
 * reservations: then bump its floor epoch, so that a transaction holding
 * values it took ahead before the raise cannot commit them (they may lie
 * below the floor).  The raise comes first: a caller that reads the new
 * epoch takes its values above the floor.  Keeper only.
 */
void
idgen_counter_raise_floor(int i, uint64 floor)
{
	idgen_raise_counter_next(&idgen_registry_gens[i].gen, floor);
	pg_write_barrier();
	pg_atomic_fetch_add_u32(&idgen_registry_slots[i].counter_floor_epoch, 1);
	/*
	 * Waiters look again; one whose values the floor dooms (backend/counterissue.c)
	 * learns it once the reservation covers them, which the keeper
	 * broadcasts too.
	 */
	ConditionVariableBroadcast(&idgen_shared->keeper.keeper.cv);
}

/*
 * Counter generators that embed the node id resume above what the lease
 * record gives them (lease/record.c): values a previous holder of the node id may
 * have handed out.  Keeper only.
 */
void
idgen_registry_raise_node_counters(void)
{
	uint32		n = pg_atomic_read_u32(&idgen_registry_shm->nslots);
	uint64		floor;

	for (uint32 i = 0; i < n; i++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[i];
		int			untranslatable;
		const IdgenLeaseCounter *member;

		if (slot->spec.node_bits == 0 || slot->spec.time_field >= 0)
			continue;
		/* the forgotten members of its shared ID space, if any */
		floor = idgen_lease_space_floor(&slot->spec, slot->name, slot->node_value,
										idgen_registry_remembers, &member);
		if (member != NULL)
			idgen_counter_refuse_forgotten(i, member->name, member->seq_bits,
										   member->seq_shift);
		else if (floor > 0)
			idgen_counter_raise_floor(i, floor);
		if (!idgen_lease_counter_floor(&slot->spec, slot->name, slot->node_value,
									   &floor, &untranslatable))
			continue;
		if (untranslatable)
			idgen_counter_refuse_untranslatable(i, untranslatable);
		else
			idgen_counter_raise_floor(i, floor);
	}
}

/*
 * Refuse counter slot i for good: a floor recorded for its name (the lease
 * record, the data directory's file) counts a seq field of another width,
 * so no value of it can be placed above the values issued.  Dropped, it
 * stays dropped, and cannot be switched on again by a re-creation
 * (idgen_slot_set_state).  Keeper only.
 */
void
idgen_counter_refuse_untranslatable(int i, int seq_bits)
{
	IdgenNamedSlot *slot = &idgen_registry_slots[i];
	uint32		state;

	SpinLockAcquire(&idgen_registry_shm->mutex);
	slot->untranslatable_bits = seq_bits;
	state = pg_atomic_read_u32(&slot->state);
	SpinLockRelease(&idgen_registry_shm->mutex);
	if (state != IDGEN_SLOT_DROPPED)
		idgen_slot_set_state(i, IDGEN_SLOT_REFUSED,
							 idgen_counter_untranslatable_message(slot, seq_bits));
}

/*
 * Refuse counter slot i: a forgotten member of its shared ID space (a name
 * recorded in the data directory's file or the lease record, with no row
 * in idgen_generator any more) handed out values with a seq field of
 * seq_bits at seq_shift, another than slot i's, so no value of it can be
 * placed above them.  A dropped slot stays dropped.  Keeper only.
 */
void
idgen_counter_refuse_forgotten(int i, const char *member, int seq_bits,
							   int seq_shift)
{
	IdgenNamedSlot *slot = &idgen_registry_slots[i];
	const IdgenField *seq = &slot->spec.fields[slot->spec.seq_field];
	uint32		state;

	/*
	 * For good, as idgen_counter_refuse_untranslatable: a dropped slot
	 * stays dropped, and a re-creation committing later finds it refused.
	 */
	SpinLockAcquire(&idgen_registry_shm->mutex);
	if (slot->untranslatable_bits == 0)
		slot->untranslatable_bits = IDGEN_SEQ_FORGOTTEN;
	state = pg_atomic_read_u32(&slot->state);
	SpinLockRelease(&idgen_registry_shm->mutex);
	if (state == IDGEN_SLOT_DROPPED)
		return;
	idgen_slot_set_state(i, IDGEN_SLOT_REFUSED,
						 psprintf("IDs were issued in ID space \"%s\" by \"%s\", a member no longer defined, with a %d-bit seq field at bit %d, above which one of %d bits at bit %d cannot be floored; give it that seq field, or another ID space",
								  slot->spec.space, member, seq_bits, seq_shift,
								  seq->bits, seq->shift));
}

/* Tell the lease record what those counters have published.  Keeper only. */
void
idgen_registry_note_node_counters(void)
{
	uint32		n = pg_atomic_read_u32(&idgen_registry_shm->nslots);

	for (uint32 i = 0; i < n; i++)
		if (idgen_registry_slots[i].spec.node_bits > 0 &&
			idgen_registry_slots[i].spec.time_field < 0 &&
			pg_atomic_read_u64(&idgen_registry_slots[i].counter_reserved) > 0)
		{
			IdgenLeaseCounter c;

			idgen_lease_counter_of(&c, idgen_registry_slots[i].name,
								   &idgen_registry_slots[i].spec,
								   idgen_registry_slots[i].node_value,
								   idgen_counter_seq_bound(&idgen_registry_slots[i].spec,
														   pg_atomic_read_u64(&idgen_registry_slots[i].counter_reserved)));
			(void) idgen_lease_note_counter(&c);
		}
}

/*
 * The keeper's side of a lookup's request for a load.  It reads the
 * requests before the load begins its transaction, so the load's snapshot
 * sees every definition committed before any of them was made; once the
 * load has finished it marks them served.  A request made meanwhile waits
 * for the next load: the one running may have begun before that commit.
 */
uint64
idgen_registry_load_requests(void)
{
	uint64		requests = pg_atomic_read_u64(&idgen_registry_shm->load_requests);

	pg_memory_barrier();
	return requests;
}

bool
idgen_registry_load_requested(uint64 requests)
{
	return requests != pg_atomic_read_u64(&idgen_registry_shm->loads_served);
}

/*
 * How many commits changed the definitions or the grants.  Only the
 * functions that do so bump it (superusers, or roles they chose), so a
 * keeper that sees it move may load at once; lookups of unknown names,
 * which any role can make, only ask for a load that the keeper may defer.
 * Read by the keeper before a load begins its transaction, as the requests.
 */
uint64
idgen_registry_changes(void)
{
	uint64		changes = pg_atomic_read_u64(&idgen_registry_shm->changes);

	pg_memory_barrier();
	return changes;
}

void
idgen_registry_loads_served(uint64 requests)
{
	/* the slots the load installed before the lookups look again */
	pg_write_barrier();
	pg_atomic_write_u64(&idgen_registry_shm->loads_served, requests);
	/* lookups waiting for the load sleep on the keeper's condition variable */
	ConditionVariableBroadcast(&idgen_shared->keeper.keeper.cv);
}

/*
 * Install a definition in a new slot.  A definition this server cannot
 * serve (its node id does not fit, the pool is full) still gets a slot, in
 * state refused, so that idgen_next() says why.
 */
static void
idgen_registry_install(const IdgenRegistryRow *row, int retire)
{
	const char *name = row->name;
	bool		dropped = row->dropped;
	uint32		i = pg_atomic_read_u32(&idgen_registry_shm->nslots);
	IdgenNamedSlot *slot;
	IdgenSpec	spec;
	bool		fits;
	const char *refusal = NULL;
	IdgenLayout layout;
	int32		node_id;

	if (i >= (uint32) idgen_max_generators)
	{
		ereport(LOG,
				(errmsg("idgen keeper: no room for named generator \"%s\": \"idgen.max_generators\" is %d",
						name, idgen_max_generators)));
		return;
	}

	if (!idgen_registry_row_spec(row, &spec))
		return;

	slot = &idgen_registry_slots[i];
	memset(slot, 0, sizeof(*slot));
	strlcpy(slot->name, name, sizeof(slot->name));
	slot->spec = spec;

	/*
	 * The node id composed in: the setting's, or with 'auto' the one this
	 * server claimed (the keeper loads nothing before it has one).
	 */
	node_id = idgen_current_node_id();
	slot->node_value = idgen_spec_node_value(&spec, node_id, &fits);
	slot->shard_base = -1;
	if (spec.node_bits > 0 && !fits)
		refusal = node_id < 0 ? "\"idgen.node_id\" is not set" :
			psprintf("\"idgen.node_id\" (%d) does not fit its %d node bits",
					 node_id, spec.node_bits);
	else if (!dropped)
	{
		/*
		 * Created under another node id, a definition may now collide with
		 * a fixed generator or one installed before it: refuse it here
		 * rather than issue the same IDs.
		 */
		const char *other = idgen_collides_with(name, &spec,
												idgen_current_node_id(),
												true, i);

		if (other != NULL)
			refusal = psprintf("under node id %d it would issue the same IDs as %s",
							   idgen_current_node_id(), other);
	}
	if (spec.shard_field >= 0)
	{
		int			need = 1 << spec.fields[spec.shard_field].bits;

		if (idgen_registry_shm->pool_used + need > idgen_max_generator_shards)
			refusal = psprintf("its %d shards do not fit \"idgen.max_generator_shards\" (%d, %d in use)",
							   need, idgen_max_generator_shards, idgen_registry_shm->pool_used);
		else
		{
			slot->shard_base = idgen_registry_shm->pool_used;
			idgen_registry_shm->pool_used += need;
		}
	}

	idgen_slot_layout(i, &layout);
	for (int s = 0; s < idgen_slot_ngenerators(i); s++)
	{
		IdgenGenerator *gen = idgen_slot_generator(i, s);

		idgen_generator_init(gen, false);
		if (idgen_registry_shm->floor_unix_ms > 0 && spec.time_field >= 0)
			idgen_raise_floor(gen, &layout,
							  idgen_registry_shm->floor_unix_ms - idgen_epoch_unix_ms);
		if (idgen_registry_shm->node_floor_unix_ms > 0 && spec.time_field >= 0 &&
			spec.node_bits > 0)
			idgen_raise_floor(gen, &layout,
							  idgen_registry_shm->node_floor_unix_ms - idgen_epoch_unix_ms);
		if (spec.time_field < 0 && spec.node_bits > 0)
		{
			uint64		floor;
			int			untranslatable;

			if (idgen_lease_counter_floor(&spec, name, slot->node_value, &floor,
										  &untranslatable))
			{
				if (untranslatable)
				{
					slot->untranslatable_bits = untranslatable;
					if (refusal == NULL && !dropped)
						refusal = idgen_counter_untranslatable_message(slot, untranslatable);
				}
				idgen_raise_counter_next(gen, floor);
			}
		}
	}
	/*
	 * A re-creation with another definition: it continues the line of the
	 * slot it retires, above every value that one handed out (its row was
	 * checked so by idgen_create_generator(); a row changed by hand is
	 * held to the same here).
	 */
	if (retire >= 0)
	{
		IdgenSpec  *had = &idgen_registry_slots[retire].spec;
		uint64		below = idgen_slot_dropped_below(retire, had, false, 0);
		bool		raised;
		const char *problem = idgen_redefinition_problem(had, &spec, below,
														 idgen_current_node_id(),
														 &raised);

		if (problem != NULL)
		{
			if (refusal == NULL)
				refusal = problem;
		}
		else if (spec.time_field < 0)
			idgen_raise_counter_next(idgen_slot_generator(i, 0), spec.counter.first);
		idgen_registry_slots[retire].retired = true;
	}
	pg_atomic_init_u32(&slot->state, IDGEN_SLOT_REFUSED);
	pg_atomic_init_u32(&slot->acl_version, 0);	/* grants not loaded yet */
	pg_atomic_init_u64(&slot->counter_reserved, 0);
	pg_atomic_init_u64(&slot->counter_want, 0);
	pg_atomic_init_u64(&slot->counter_wake, PG_UINT64_MAX);
	pg_atomic_init_u32(&slot->counter_floor_epoch, 0);
	pg_atomic_init_u64(&slot->restart_at, 0);

	/*
	 * A counter is compared with dropped counters, which it may meet below
	 * their reservations, once those are loaded: idgen_collides_with()
	 * leaves them out above, and idgen_registry_load_counters() checks it
	 * before any value of it is reserved.
	 */
	slot->check_after_load = spec.time_field < 0 && !dropped && refusal == NULL;

	/*
	 * Switch the slot on, then publish it: a caller that finds it sees its
	 * state, never the refusal it was initialised with.
	 */
	if (refusal != NULL)
		idgen_slot_set_state(i, IDGEN_SLOT_REFUSED, refusal);
	else
		idgen_slot_set_state(i, dropped ? IDGEN_SLOT_DROPPED : IDGEN_SLOT_ACTIVE, NULL);
	pg_write_barrier();
	pg_atomic_write_u32(&idgen_registry_shm->nslots, i + 1);
}

/* Does a stored definition still match slot i's? */
static bool
idgen_registry_same(int i, const IdgenRegistryRow *row)
{
	IdgenSpec  *now = palloc(sizeof(IdgenSpec));

	if (!idgen_registry_row_spec(row, now))
		return false;
	return idgen_spec_same(&idgen_registry_slots[i].spec, now);
}

/*
 * The names that had a row in idgen_generator at the last complete load,
 * dropped or not: a counter recorded elsewhere (the floors file, the lease
 * record) under a name without one is a forgotten member of its ID space,
 * whose values no creation can check against any more
 * (idgen_registry_has_row).  Keeper only; each in a context of its own
 * under TopMemoryContext.
 */
static HTAB *registry_rows = NULL;
static HTAB *registry_rows_loading = NULL;

/*
 * Does name have a row in idgen_generator, as the last complete load read
 * it?  Before any load, no: every recorded name counts as forgotten, which
 * can only floor or refuse, never let a value repeat.
 */
bool
idgen_registry_has_row(const char *name)
{
	char		key[NAMEDATALEN];

	if (registry_rows == NULL)
		return false;
	strlcpy(key, name, sizeof(key));
	return hash_search(registry_rows, key, HASH_FIND, NULL) != NULL;
}

/*
 * Is a counter recorded elsewhere (the floors file, the lease record)
 * under name, in ID space space, with its seq field of seq_bits at
 * seq_shift, the fixed bits fixed and the form form (idgen_counter_form),
 * still the definition of a row of idgen_generator?  Only then does a
 * creation in the space check against its values (idgen_space_meets); a
 * row of the name with another definition (another space, its seq field
 * or fixed bits elsewhere, other stripes, segment or start, an entry that
 * does not say its fixed bits or form) checks against other IDs, and the
 * recorded counter is a forgotten member.  So is one whose row is
 * dropped: a creation checks a dropped counter only up to its durable row,
 * which may lie below what the record holds.  A live counter of the same
 * definition keeps every creation in the space from meeting any of its
 * IDs.
 */
bool
idgen_registry_remembers(const char *name, const char *space, int seq_bits,
						 int seq_shift, bool fixed_known, int64 fixed,
						 uint64 form)
{
	int			i;
	IdgenNamedSlot *slot;
	const IdgenField *seq;

	if (!fixed_known || form == 0 || !idgen_registry_has_row(name))
		return false;
	i = idgen_registry_find(name);
	if (i < 0)
		return false;
	slot = &idgen_registry_slots[i];
	if (slot->spec.time_field >= 0 ||
		pg_atomic_read_u32(&slot->state) != IDGEN_SLOT_ACTIVE)
		return false;
	seq = &slot->spec.fields[slot->spec.seq_field];
	return strcmp(slot->spec.space, space) == 0 &&
		seq->bits == seq_bits && seq->shift == seq_shift &&
		slot->node_value == fixed &&
		idgen_counter_form(&slot->spec) == form;
}

/*
 * Load the definitions from idgen_generator (relid, found by OID by the
 * keeper; caller has begun a transaction).  New names get slots; a loaded
 * name follows its row's dropped mark; a row whose definition no longer
 * matches its slot's is refused, never followed.
 */
void
idgen_registry_load(Oid relid)
{
	Relation	rel = idgen_registry_open(relid);
	TupleDesc	desc = RelationGetDescr(rel);
	TableScanDesc scan;
	HeapTuple	tup;
	HASHCTL		ctl;

	/* a load that failed half-way left its names: start again */
	if (registry_rows_loading != NULL)
		hash_destroy(registry_rows_loading);
	ctl.keysize = NAMEDATALEN;
	ctl.entrysize = NAMEDATALEN;
	registry_rows_loading = hash_create("idgen generator rows", 64, &ctl,
										HASH_ELEM | HASH_STRINGS);

	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		IdgenRegistryRow row;
		uint32		state;
		int			i;

		if (!idgen_registry_row(tup, desc, &row))
			continue;
		(void) hash_search(registry_rows_loading, row.name, HASH_ENTER, NULL);

		i = idgen_registry_find(row.name);
		if (i < 0)
		{
			/* dropped ones too: their IDs can still be decoded by name */
			idgen_registry_install(&row, -1);
			continue;
		}

		/*
		 * A dropped name re-created with another definition (and maybe
		 * dropped again): a slot of its own, which retires the old one.  No
		 * snapshot from before the re-creation shows the new definition,
		 * so no settling is needed.
		 */
		state = pg_atomic_read_u32(&idgen_registry_slots[i].state);
		if (state == IDGEN_SLOT_DROPPED &&
			!idgen_registry_slots[i].state_missing &&
			!idgen_registry_same(i, &row))
		{
			idgen_registry_install(&row, i);
			continue;
		}
		/*
		 * A drop or re-creation committed after our snapshot: leave it.  A
		 * commit stamps the slot before it sets the state, and we read them
		 * in the other order, so a state we act on is never newer than the
		 * stamp we checked.
		 */
		state = pg_atomic_read_u32(&idgen_registry_slots[i].state);
		pg_read_barrier();
		if (idgen_clock_monotonic_ms() - idgen_registry_slots[i].state_changed_ms <
			IDGEN_REGISTRY_SETTLE_MS)
			continue;
		if (state == IDGEN_SLOT_REFUSED && !idgen_registry_slots[i].state_missing)
			continue;
		if (!idgen_registry_same(i, &row))
		{
			idgen_registry_slots[i].state_missing = false;
			idgen_slot_set_state(i, IDGEN_SLOT_REFUSED,
								 "its definition in idgen_generator changed after IDs were issued under it");
		}
		else if (idgen_registry_slots[i].state_missing)
			idgen_registry_slots[i].defined_dropped = row.dropped;
		else if (row.dropped != (state == IDGEN_SLOT_DROPPED))
			idgen_slot_set_state(i, row.dropped ? IDGEN_SLOT_DROPPED : IDGEN_SLOT_ACTIVE, NULL);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	if (registry_rows != NULL)
		hash_destroy(registry_rows);
	registry_rows = registry_rows_loading;
	registry_rows_loading = NULL;
}

/*
 * Load who may draw from each generator (table idgen_generator_grant,
 * relid): rows (name, grantee), a NULL grantee meaning PUBLIC.  A slot
 * whose grants changed gets them under the registry mutex and a new
 * acl_version.  Keeper only, after idgen_registry_load().
 */
void
idgen_registry_load_grants(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	uint32		n = pg_atomic_read_u32(&idgen_registry_shm->nslots);
	TableScanDesc scan;
	HeapTuple	tup;
	bool	   *pub;
	int		   *nroles;
	Oid		   *roles;

	if (rel->rd_rel->relam != HEAP_TABLE_AM_OID || desc->natts != 2 ||
		TupleDescAttr(desc, 0)->atttypid != TEXTOID ||
		TupleDescAttr(desc, 1)->atttypid != REGROLEOID)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen's table idgen_generator_grant in database \"%s\" has been altered",
						idgen_database),
				 idgen_errhint_repair()));
	pub = palloc0(sizeof(bool) * Max(n, 1));
	nroles = palloc0(sizeof(int) * Max(n, 1));
	roles = palloc0(sizeof(Oid) * Max(n, 1) * IDGEN_MAX_GRANTEES);

	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Datum		values[2];
		bool		nulls[2];
		char	   *name;
		int			i;

		heap_deform_tuple(tup, desc, values, nulls);
		if (nulls[0])
			continue;
		name = TextDatumGetCString(values[0]);
		i = strlen(name) < NAMEDATALEN ? idgen_registry_find(name) : -1;
		if (i < 0 || (uint32) i >= n)
			continue;
		if (nulls[1])
			pub[i] = true;
		else if (nroles[i] < IDGEN_MAX_GRANTEES)
			roles[i * IDGEN_MAX_GRANTEES + nroles[i]++] = DatumGetObjectId(values[1]);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);

	for (uint32 i = 0; i < n; i++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[i];
		bool		changed;

		SpinLockAcquire(&idgen_registry_shm->mutex);
		changed = pg_atomic_read_u32(&slot->acl_version) == 0 ||
			slot->acl_public != pub[i] || slot->acl_n != nroles[i] ||
			memcmp(slot->acl_roles, &roles[i * IDGEN_MAX_GRANTEES],
				   sizeof(Oid) * nroles[i]) != 0;
		if (changed)
		{
			slot->acl_public = pub[i];
			slot->acl_n = nroles[i];
			memcpy(slot->acl_roles, &roles[i * IDGEN_MAX_GRANTEES],
				   sizeof(Oid) * nroles[i]);
		}
		SpinLockRelease(&idgen_registry_shm->mutex);
		if (changed)
			pg_atomic_fetch_add_u32(&slot->acl_version, 1);
	}
	/* callers waiting for a slot's first grants sleep on this */
	ConditionVariableBroadcast(&idgen_shared->keeper.keeper.cv);
}
