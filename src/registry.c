/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  Named generators: definitions in idgen.database, state in shared memory.
 *
 * A named generator is a layout (layout.c) with an epoch and a unit, and
 * server-wide state.  Its definition is a row of the table idgen_generator
 * in idgen.database: WAL-logged, replicated, in backups.  Rows are written
 * only by idgen_create_generator() and idgen_drop_generator(), superuser
 * functions that run in that database; a trigger forbids changing a
 * definition, and a dropped name keeps its row, so it can only ever be
 * re-created with the same definition.
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
 * A slot's generator is an ordinary one of the engine (generator.c), with
 * the layout's own clock: its positions are (tick << seq_bits) | seq, it
 * is switched off ("owned" false) while the slot is dropped or its
 * definition is refused, and the keeper floors it above the durable
 * reservation when shared memory is new.  Sharded layouts take 2^bits
 * generators from one pool of idgen.max_generator_shards.
 *
 * Shared memory: the IdgenRegistry header, then idgen.max_generators
 * padded generators, then the shard pool, then the slots' metadata.  Only
 * the keeper writes a slot; it fills one completely before it publishes
 * the new count with a write barrier, so readers need no lock.
 *
 * IDENTIFICATION
 *	  src/registry.c
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
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "idgen.h"
#include "storage.h"
#include "registry.h"

/*
 * How long the keeper leaves a slot whose dropped mark a commit changed:
 * its load may run on a snapshot taken before that commit.
 */
#define IDGEN_REGISTRY_SETTLE_MS 5000

typedef union IdgenRegistryPadded
{
	IdgenRegistry registry;
	char		pad[PG_CACHE_LINE_SIZE];
} IdgenRegistryPadded;

IdgenRegistry *idgen_registry_shm = NULL;
IdgenGeneratorPadded *idgen_registry_gens = NULL;
static IdgenGeneratorPadded *registry_pool = NULL;
IdgenNamedSlot *idgen_registry_slots = NULL;

/* ---- shared memory ---- */

Size
idgen_registry_shmem_size(void)
{
	Size		size = sizeof(IdgenRegistryPadded);

	size = add_size(size, mul_size(idgen_max_generators, sizeof(IdgenGeneratorPadded)));
	size = add_size(size, mul_size(idgen_max_generator_shards, sizeof(IdgenGeneratorPadded)));
	size = add_size(size, mul_size(idgen_max_generators, sizeof(IdgenNamedSlot)));
	return size;
}

/* Caller holds AddinShmemInitLock. */
void
idgen_registry_shmem_init(void)
{
	bool		found;
	char	   *base = ShmemInitStruct("idgen registry",
									   idgen_registry_shmem_size(), &found);

	idgen_registry_shm = &((IdgenRegistryPadded *) base)->registry;
	idgen_registry_gens = (IdgenGeneratorPadded *) (base + sizeof(IdgenRegistryPadded));
	registry_pool = idgen_registry_gens + idgen_max_generators;
	idgen_registry_slots = (IdgenNamedSlot *) (registry_pool + idgen_max_generator_shards);
	if (found)
		return;

	SpinLockInit(&idgen_registry_shm->mutex);
	pg_atomic_init_u32(&idgen_registry_shm->nslots, 0);
	pg_atomic_init_u64(&idgen_registry_shm->load_requests, 0);
	pg_atomic_init_u64(&idgen_registry_shm->loads_served, 0);
	pg_atomic_init_u64(&idgen_registry_shm->changes, 0);
	idgen_registry_shm->pool_used = 0;
	idgen_registry_shm->floor_unix_ms = 0;
}

/* The generator of slot i, and of shard "shard" if it is sharded. */
IdgenGenerator *
idgen_slot_generator(int i, int32 shard)
{
	if (idgen_registry_slots[i].shard_base < 0)
		return &idgen_registry_gens[i].gen;
	return &registry_pool[idgen_registry_slots[i].shard_base + shard].gen;
}

int
idgen_slot_ngenerators(int i)
{
	const IdgenSpec *spec = &idgen_registry_slots[i].spec;

	return spec->shard_field < 0 ? 1 : 1 << spec->fields[spec->shard_field].bits;
}

/* A slot by name, or -1. */
int
idgen_registry_find(const char *name)
{
	uint32		n = pg_atomic_read_u32(&idgen_registry_shm->nslots);

	pg_read_barrier();
	for (uint32 i = 0; i < n; i++)
		if (strcmp(idgen_registry_slots[i].name, name) == 0)
			return (int) i;
	return -1;
}

/* ---- the keeper's side ---- */

/* The floor of every slot installed from now on (Unix ms). */
void
idgen_registry_set_floor(int64 floor_unix_ms)
{
	idgen_registry_shm->floor_unix_ms = floor_unix_ms;
}

/*
 * Floor every slot that embeds the node id, installed or still to come, at
 * floor_unix_ms: this server has just claimed a node id whose previous
 * holder may have issued up to there (lease.c).
 */
void
idgen_registry_raise_node_floors(int64 floor_unix_ms)
{
	uint32		n = pg_atomic_read_u32(&idgen_registry_shm->nslots);

	idgen_registry_shm->node_floor_unix_ms = Max(idgen_registry_shm->node_floor_unix_ms, floor_unix_ms);
	for (uint32 i = 0; i < n; i++)
	{
		IdgenLayout layout;

		if (idgen_registry_slots[i].spec.node_bits == 0 ||
			idgen_registry_slots[i].spec.time_field < 0)
			continue;
		idgen_slot_layout(i, &layout);
		for (int s = 0; s < idgen_slot_ngenerators(i); s++)
			idgen_raise_floor(idgen_slot_generator(i, s), &layout,
							  floor_unix_ms - idgen_epoch_unix_ms);
	}
}

/*
 * Raise counter slot i to a floor from outside this server's own
 * reservations: then bump its floor epoch, so that a transaction holding
 * values it took ahead before the raise cannot commit them (they may lie
 * below the floor).  The raise comes first: a caller that reads the new
 * epoch takes its values above the floor.  Keeper only.
 */
static void
idgen_counter_raise_floor(int i, uint64 floor)
{
	idgen_raise_position(&idgen_registry_gens[i].gen, floor);
	pg_write_barrier();
	pg_atomic_fetch_add_u32(&idgen_registry_slots[i].counter_floor_epoch, 1);
}

/*
 * Counter generators that embed the node id resume above what the lease
 * record gives them (leasekeys.c): values a previous holder of the node id may
 * have handed out.  Keeper only.
 */
void
idgen_registry_raise_node_counters(void)
{
	uint32		n = pg_atomic_read_u32(&idgen_registry_shm->nslots);
	uint64		floor;

	for (uint32 i = 0; i < n; i++)
		if (idgen_registry_slots[i].spec.node_bits > 0 &&
			idgen_registry_slots[i].spec.time_field < 0 &&
			idgen_lease_counter_floor(idgen_registry_slots[i].name, &floor))
			idgen_counter_raise_floor(i, floor);
}

/* Tell the lease record what those counters have published.  Keeper only. */
void
idgen_registry_note_node_counters(void)
{
	uint32		n = pg_atomic_read_u32(&idgen_registry_shm->nslots);

	for (uint32 i = 0; i < n; i++)
		if (idgen_registry_slots[i].spec.node_bits > 0 &&
			idgen_registry_slots[i].spec.time_field < 0)
			(void) idgen_lease_note_counter(idgen_registry_slots[i].name,
											pg_atomic_read_u64(&idgen_registry_slots[i].counter_reserved));
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
}

/* The engine's view of a slot's layout. */
void
idgen_slot_layout(int i, IdgenLayout *layout)
{
	const IdgenSpec *spec = &idgen_registry_slots[i].spec;

	memset(layout, 0, sizeof(*layout));
	layout->name = idgen_registry_slots[i].name;
	layout->funcname = "idgen_next";
	layout->seq_bits = spec->seq_field < 0 ? 0 : spec->fields[spec->seq_field].bits;
	layout->tick_limit = spec->tick_limit;
	layout->report_not_owned = idgen_named_not_owned;
	layout->offset_ms = spec->epoch_unix_ms - idgen_epoch_unix_ms;
	layout->unit_ms = spec->unit_ms;
	layout->unit_inverse = 1.0 / spec->unit_ms;
}

void
idgen_slot_set_state(int i, IdgenSlotState state, const char *message)
{
	IdgenNamedSlot *slot = &idgen_registry_slots[i];
	int			n = idgen_slot_ngenerators(i);

	SpinLockAcquire(&idgen_registry_shm->mutex);
	strlcpy(slot->message, message ? message : "", sizeof(slot->message));
	SpinLockRelease(&idgen_registry_shm->mutex);
	pg_atomic_write_u32(&slot->state, state);
	for (int s = 0; s < n; s++)
	{
		IdgenGenerator *gen = idgen_slot_generator(i, s);

		SpinLockAcquire(&gen->mutex);
		gen->owned = (state == IDGEN_SLOT_ACTIVE);
		SpinLockRelease(&gen->mutex);
	}
}

/*
 * Parse a stored layout.  It was validated when created; a row that fails
 * now was altered by hand, and is logged and skipped rather than allowed
 * to stop the keeper.
 */
static bool
idgen_registry_parse(const char *name, const char *layout_text,
					 const IdgenCounterOptions *options, IdgenSpec *spec)
{
	MemoryContext cxt = CurrentMemoryContext;
	bool		epoch_given;
	bool		unit_given;
	volatile bool ok = true;

	PG_TRY();
	{
		idgen_parse_layout(layout_text, spec, &epoch_given, &unit_given);
		if (spec->time_field < 0)
			idgen_parse_counter_options(spec, options->prefetch, options->refill,
										options->stripes, options->owned,
										options->segment, options->start);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		ok = false;
	}
	PG_END_TRY();
	if (!ok)
		ereport(LOG,
				(errmsg("idgen keeper: named generator \"%s\" has an invalid layout \"%s\"; not loaded",
						name, layout_text)));
	return ok;
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
	return true;
}

/*
 * Install a definition in a new slot.  A definition this server cannot
 * serve (its node id does not fit, the pool is full) still gets a slot, in
 * state refused, so that idgen_next() says why.
 */
static void
idgen_registry_install(const IdgenRegistryRow *row)
{
	const char *name = row->name;
	bool		dropped = row->dropped;
	uint32		i = pg_atomic_read_u32(&idgen_registry_shm->nslots);
	IdgenNamedSlot *slot;
	IdgenSpec	spec;
	bool		fits;
	const char *refusal = NULL;
	IdgenLayout layout;

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
	slot->node_value = idgen_spec_node_value(&spec, idgen_node_id, &fits);
	slot->shard_base = -1;
	if (spec.node_bits > 0 && !fits)
		refusal = psprintf("\"idgen.node_id\" (%d) does not fit its %d node bits",
						   idgen_node_id, spec.node_bits);
	else if (!dropped)
	{
		/*
		 * Created under another node id, a definition may now collide with
		 * a fixed generator or one installed before it: refuse it here
		 * rather than issue the same IDs.
		 */
		const char *other = idgen_collides_with(name, &spec, true, i);

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

			if (idgen_lease_counter_floor(name, &floor))
				idgen_raise_position(gen, floor);
		}
	}
	pg_atomic_init_u32(&slot->state, IDGEN_SLOT_REFUSED);
	pg_atomic_init_u32(&slot->acl_version, 0);	/* grants not loaded yet */
	pg_atomic_init_u64(&slot->counter_reserved, 0);
	pg_atomic_init_u64(&slot->counter_want, 0);
	pg_atomic_init_u64(&slot->counter_wake, PG_UINT64_MAX);
	pg_atomic_init_u32(&slot->counter_floor_epoch, 0);

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

/* Do two parsed definitions issue the same IDs from the same state? */
bool
idgen_spec_same(const IdgenSpec *have, const IdgenSpec *now)
{
	if (strcmp(idgen_spec_text(have), idgen_spec_text(now)) != 0 ||
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
 * The counters' floor of last resort: a file in the data directory
 * listing, for every counter this server reserved for, an upper bound of
 * its reservation, with the database and table (idgen_counter_state) the
 * reservation was written to.  It is read only where that table's rows
 * cannot be trusted: the extension was re-created, or idgen.database
 * changed, so a counter's row (missing, or 0 from a new creation) may lie
 * below values the server handed out under the same name and node value.
 * Then the counter resumes above the bound, skipping at most the margin
 * (IDGEN_COUNTER_FLOOR_STEPS prefetches, or leads under a tight loop:
 * idgen_counter_floors_cover), instead of starting again at 0.
 * Not replicated: a promoted standby or a restored backup has its own
 * copy, older, which is only ever used as a floor.  Keeper only.
 */
#define IDGEN_COUNTER_FLOOR_FILE "idgen_counters"
#define IDGEN_COUNTER_FLOOR_STEPS 16

typedef struct IdgenCounterFloor
{
	char		name[NAMEDATALEN];
	int64		node_value;
	uint64		bound;			/* local values below it may have been issued */
	Oid			dboid;			/* where the reservation was written */
	Oid			relid;
	int64		raised_ms;		/* monotonic ms of the last raise, or 0 */
} IdgenCounterFloor;

static IdgenCounterFloor *counter_floors = NULL;
static int	counter_floors_n = 0;
static int	counter_floors_max = 0;
static Oid	counter_state_relid = InvalidOid;	/* last written to */

static IdgenCounterFloor *
idgen_counter_floor_find(const char *name, int64 node_value, bool add)
{
	for (int i = 0; i < counter_floors_n; i++)
		if (counter_floors[i].node_value == node_value &&
			strcmp(counter_floors[i].name, name) == 0)
			return &counter_floors[i];
	if (!add)
		return NULL;
	if (counter_floors_n == counter_floors_max)
	{
		counter_floors_max = Max(16, counter_floors_max * 2);
		counter_floors = counter_floors == NULL ?
			MemoryContextAllocZero(TopMemoryContext,
								   sizeof(IdgenCounterFloor) * counter_floors_max) :
			repalloc(counter_floors, sizeof(IdgenCounterFloor) * counter_floors_max);
	}
	memset(&counter_floors[counter_floors_n], 0, sizeof(IdgenCounterFloor));
	strlcpy(counter_floors[counter_floors_n].name, name, NAMEDATALEN);
	counter_floors[counter_floors_n].node_value = node_value;
	return &counter_floors[counter_floors_n++];
}

/* Read the file once per keeper process; a line that does not parse is skipped. */
static void
idgen_counter_floors_read(void)
{
	static bool read_once = false;
	FILE	   *f;
	char		line[256];

	if (read_once)
		return;
	read_once = true;
	f = AllocateFile(IDGEN_COUNTER_FLOOR_FILE, "r");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
	{
		unsigned int dboid;
		unsigned int relid;
		long long	node_value;
		unsigned long long bound;
		char		name[NAMEDATALEN];
		IdgenCounterFloor *cf;

		if (sscanf(line, "%u %u %lld %llu %63s", &dboid, &relid, &node_value,
				   &bound, name) != 5)
			continue;
		cf = idgen_counter_floor_find(name, node_value, true);
		cf->bound = Max(cf->bound, (uint64) bound);
		cf->dboid = dboid;
		cf->relid = relid;
	}
	FreeFile(f);
}

/* Write the whole file durably: a temporary file, fsynced, renamed. */
static void
idgen_counter_floors_write(void)
{
	const char *tmp = IDGEN_COUNTER_FLOOR_FILE ".tmp";
	FILE	   *f = AllocateFile(tmp, PG_BINARY_W);

	if (f == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp)));
	for (int i = 0; i < counter_floors_n; i++)
		fprintf(f, "%u %u " INT64_FORMAT " " UINT64_FORMAT " %s\n",
				counter_floors[i].dboid, counter_floors[i].relid,
				counter_floors[i].node_value, counter_floors[i].bound,
				counter_floors[i].name);
	if (fflush(f) != 0 || pg_fsync(fileno(f)) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp)));
	if (FreeFile(f) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", tmp)));
	(void) durable_rename(tmp, IDGEN_COUNTER_FLOOR_FILE, ERROR);
}

/*
 * The floor of a counter whose row in table relid cannot be trusted (see
 * above), or 0.
 */
static uint64
idgen_counter_floor_of(const IdgenNamedSlot *slot, Oid relid)
{
	IdgenCounterFloor *cf;

	idgen_counter_floors_read();
	cf = idgen_counter_floor_find(slot->name, slot->node_value, false);
	if (cf == NULL || (cf->relid == relid && cf->dboid == MyDatabaseId))
		return 0;
	return cf->bound;
}

/*
 * A running counter's row is higher than anything this server reserved:
 * restored from elsewhere (a backup of a server that went further), so
 * values below it may exist.  The counter resumes above it, and the keeper
 * never writes it back lower (idgen_registry_write_counters).  Keeper only.
 */
static void
idgen_counter_take_restored(int i, uint64 row)
{
	idgen_counter_raise_floor(i, row);
	ereport(LOG,
			(errmsg("idgen keeper: counter \"%s\" continues above its restored durable state " UINT64_FORMAT,
					idgen_registry_slots[i].name, row)));
}

/*
 * Apply the durable counter reservations of idgen_counter_state (relid) to
 * the slots installed since the last call: every value below one may have
 * been handed out before (a restart, a crash, a failover), so such a
 * counter resumes at its reservation.  Nothing is published: the keeper's
 * next durable commit does that.  Slots already running are left alone;
 * their rows are the keeper's own writes.
 */
void
idgen_registry_load_counters(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TableScanDesc scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	HeapTuple	tup;

	uint32		n = pg_atomic_read_u32(&idgen_registry_shm->nslots);
	bool	   *seen = palloc0(sizeof(bool) * Max(n, 1));

	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Datum		values[2];
		bool		nulls[2];
		int			i;
		uint64		row;

		heap_deform_tuple(tup, RelationGetDescr(rel), values, nulls);
		if (nulls[0] || nulls[1])
			continue;
		i = idgen_registry_find(TextDatumGetCString(values[0]));
		if (i < 0 || (uint32) i >= n || idgen_registry_slots[i].spec.time_field >= 0)
			continue;
		seen[i] = true;
		row = (uint64) DatumGetInt64(values[1]);
		if (!idgen_registry_slots[i].state_loaded || idgen_registry_slots[i].state_missing)
		{
			uint64		floor = idgen_counter_floor_of(&idgen_registry_slots[i], relid);

			idgen_raise_position(&idgen_registry_gens[i].gen, Max(row, floor));
			if (floor > row)
			{
				idgen_registry_slots[i].state_rewrite = true;
				ereport(WARNING,
						(errmsg("idgen keeper: counter \"%s\" resumes above " UINT64_FORMAT ", where this server reserved it before",
								idgen_registry_slots[i].name, floor),
						 errdetail("Its durable state in database \"%s\" is newer than the reservation this server recorded in file \"%s\": the extension was re-created, or \"idgen.database\" changed.",
								   idgen_database, IDGEN_COUNTER_FLOOR_FILE)));
			}

			/*
			 * Refused for want of this row, so nothing was issued here
			 * under the name: the row arrived after its definition (a
			 * parallel pg_restore commits them in either order), and is
			 * taken as a start would take it.
			 */
			if (idgen_registry_slots[i].state_missing)
			{
				idgen_registry_slots[i].state_missing = false;
				idgen_slot_set_state(i, idgen_registry_slots[i].defined_dropped ?
									 IDGEN_SLOT_DROPPED : IDGEN_SLOT_ACTIVE, NULL);
				ereport(LOG,
						(errmsg("idgen keeper: counter \"%s\" found its durable state; it resumes above " UINT64_FORMAT,
								idgen_registry_slots[i].name, Max(row, floor))));
			}
		}
		else if (row < pg_atomic_read_u64(&idgen_registry_slots[i].counter_reserved))
			idgen_registry_slots[i].state_rewrite = true;
		else if (row > pg_atomic_read_u64(&idgen_registry_slots[i].counter_reserved))
			idgen_counter_take_restored(i, row);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);

	/*
	 * A counter without its row: created with one, so the state was lost.
	 * Before this shared memory ran it, refuse it (no floor can be derived
	 * for a counter); while it runs, write the row again from memory.
	 */
	for (uint32 i = 0; i < n; i++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[i];

		if (slot->spec.time_field < 0 && !seen[i] &&
			pg_atomic_read_u32(&slot->state) != IDGEN_SLOT_REFUSED)
		{
			uint64		floor = slot->state_loaded ? 0 :
				idgen_counter_floor_of(slot, InvalidOid);

			if (!slot->state_loaded && floor > 0)
			{
				/* lost, but this server recorded how far it had got */
				idgen_raise_position(&idgen_registry_gens[i].gen, floor);
				slot->state_rewrite = true;
				ereport(WARNING,
						(errmsg("idgen keeper: counter \"%s\" lost its durable state; it resumes above " UINT64_FORMAT ", where this server reserved it before",
								slot->name, floor)));
			}
			else if (!slot->state_loaded)
			{
				/* taken if the row appears: see above */
				slot->state_missing = true;
				slot->defined_dropped =
					pg_atomic_read_u32(&slot->state) == IDGEN_SLOT_DROPPED;
				idgen_slot_set_state(i, IDGEN_SLOT_REFUSED,
									 "its durable counter state is missing from idgen_counter_state; restore it from a backup, or drop the generator and create one under a new name");
			}
			else
				slot->state_rewrite = true;
		}
		slot->state_loaded = true;
	}

	/*
	 * Counters installed by this load, against every other slot, dropped
	 * counters now bounded by their loaded state: created under another
	 * node id, or before a counter it now meets was dropped, a counter may
	 * collide with one that handed out values.  Refused before the keeper
	 * reserves anything for it.
	 */
	for (uint32 i = 0; i < n; i++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[i];
		const char *other;

		if (!slot->check_after_load)
			continue;
		slot->check_after_load = false;
		if (pg_atomic_read_u32(&slot->state) != IDGEN_SLOT_ACTIVE)
			continue;
		other = idgen_collides_with(slot->name, &slot->spec, false, n);
		if (other != NULL)
			idgen_slot_set_state(i, IDGEN_SLOT_REFUSED,
								 psprintf("under node id %d it would issue the same IDs as %s",
										  idgen_current_node_id(), other));
	}
}

/*
 * Plan the counter reservations to extend: a counter whose reservation
 * has fewer than its refill values left, or that a caller or a commit
 * waits for, gets prefetch values beyond what is used or wanted.  Returns
 * how many; the plan stays here for idgen_registry_write_counters() and
 * idgen_registry_publish_counters().
 */
typedef struct IdgenCounterPlan
{
	int			slot;
	uint64		reserved;		/* the new reservation */
} IdgenCounterPlan;

static int	counter_plan_n = 0;
static IdgenCounterPlan *counter_plan = NULL;

int
idgen_registry_plan_counters(void)
{
	uint32		n = pg_atomic_read_u32(&idgen_registry_shm->nslots);

	if (counter_plan == NULL)
		counter_plan = MemoryContextAlloc(TopMemoryContext,
										  sizeof(IdgenCounterPlan) * idgen_max_generators);
	counter_plan_n = 0;
	pg_read_barrier();
	for (uint32 i = 0; i < n; i++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[i];
		IdgenGenerator *gen = &idgen_registry_gens[i].gen;
		uint64		reserved;
		uint64		want;
		uint64		next;
		uint64		target;
		IdgenCounterPlan *plan;

		if (slot->spec.time_field >= 0 ||
			pg_atomic_read_u32(&slot->state) != IDGEN_SLOT_ACTIVE)
			continue;
		reserved = pg_atomic_read_u64(&slot->counter_reserved);
		want = pg_atomic_read_u64(&slot->counter_want);
		SpinLockAcquire(&gen->mutex);
		next = gen->last;
		SpinLockRelease(&gen->mutex);
		if (!(slot->state_rewrite || want > reserved || next >= reserved ||
			  reserved - next < (uint64) slot->spec.counter.refill))
			continue;

		/*
		 * prefetch beyond what is used or wanted, never backwards: after a
		 * crash the counter resumes at most prefetch values above the last
		 * value handed out
		 */
		target = Min(Max(reserved, Max(next, want) + (uint64) slot->spec.counter.prefetch),
					 (uint64) slot->spec.tick_limit);
		if (target <= reserved && !slot->state_rewrite)
			continue;			/* at the end of its range: nothing to add */
		plan = &counter_plan[counter_plan_n++];
		plan->slot = i;
		plan->reserved = target;
	}
	return counter_plan_n;
}

/*
 * Write the planned reservations into idgen_counter_state (relid): one row
 * per counter, replaced.  Caller has begun a transaction and commits it
 * durably before publishing.
 */
void
idgen_registry_write_counters(Oid relid)
{
	Relation	rel = table_open(relid, RowExclusiveLock);
	TupleDesc	desc = RelationGetDescr(rel);
	TableScanDesc scan;
	HeapTuple	tup;

	counter_state_relid = relid;

	if (rel->rd_rel->relam != HEAP_TABLE_AM_OID || desc->natts != 2 ||
		TupleDescAttr(desc, 0)->atttypid != TEXTOID ||
		TupleDescAttr(desc, 1)->atttypid != INT8OID ||
		rel->rd_rel->relhasindex)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen's table idgen_counter_state in database \"%s\" has been altered",
						idgen_database),
				 idgen_errhint_repair()));

	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Datum		values[2];
		bool		nulls[2];

		heap_deform_tuple(tup, desc, values, nulls);
		if (nulls[0])
			continue;
		for (int p = 0; p < counter_plan_n; p++)
			if (strcmp(idgen_registry_slots[counter_plan[p].slot].name,
					   TextDatumGetCString(values[0])) == 0)
			{
				uint64		row = nulls[1] ? 0 : (uint64) DatumGetInt64(values[1]);

				/* never lower: a row restored since the last load */
				if (row > counter_plan[p].reserved)
				{
					idgen_counter_take_restored(counter_plan[p].slot, row);
					counter_plan[p].reserved = row;
				}
				simple_heap_delete(rel, &tup->t_self);
				break;
			}
	}
	table_endscan(scan);

	for (int p = 0; p < counter_plan_n; p++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		values[0] = CStringGetTextDatum(idgen_registry_slots[counter_plan[p].slot].name);
		values[1] = Int64GetDatum((int64) counter_plan[p].reserved);
		simple_heap_insert(rel, heap_form_tuple(desc, values, nulls));
	}
	table_close(rel, RowExclusiveLock);
}

/*
 * Before a counter reservation is published: make sure the file's bound
 * covers it, raising the bound IDGEN_COUNTER_FLOOR_STEPS prefetches at a
 * time, so that the file is written rarely and a quiet counter that
 * resumes from it skips little; or, if it was raised less than a second
 * before (a tight loop), that many leads, so that it is still written at
 * most a few times a second.
 */
static void
idgen_counter_floors_cover(void)
{
	bool		changed = false;

	if (!OidIsValid(counter_state_relid))
		return;
	idgen_counter_floors_read();
	for (int p = 0; p < counter_plan_n; p++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[counter_plan[p].slot];
		IdgenCounterFloor *cf = idgen_counter_floor_find(slot->name,
														 slot->node_value, true);

		if (cf->bound >= counter_plan[p].reserved &&
			cf->relid == counter_state_relid && cf->dboid == MyDatabaseId)
			continue;
		{
			int64		now_ms = idgen_clock_monotonic_ms();
			uint64		step = (cf->raised_ms != 0 && now_ms - cf->raised_ms < 1000) ?
				idgen_counter_lead(&slot->spec) : (uint64) slot->spec.counter.prefetch;

			cf->bound = Max(cf->bound,
							Min(counter_plan[p].reserved + IDGEN_COUNTER_FLOOR_STEPS * step,
								(uint64) slot->spec.tick_limit));
			cf->raised_ms = now_ms;
		}
		cf->dboid = MyDatabaseId;
		cf->relid = counter_state_relid;
		changed = true;
	}
	if (changed)
		idgen_counter_floors_write();
}

/*
 * The planned reservations are durable: hand them to the callers, with
 * the point past which a caller wakes the keeper (the reservation less
 * refill).
 */
void
idgen_registry_publish_counters(void)
{
	bool		noted = false;

	/* the data directory's floor of last resort covers them first */
	idgen_counter_floors_cover();

	/* under a leased node id, etcd records them first (lease.c) */
	for (int p = 0; p < counter_plan_n && idgen_leases_on; p++)
		if (idgen_registry_slots[counter_plan[p].slot].spec.node_bits > 0)
			noted |= idgen_lease_note_counter(idgen_registry_slots[counter_plan[p].slot].name,
											  counter_plan[p].reserved);
	if (noted)
		idgen_lease_record_counters();

	for (int p = 0; p < counter_plan_n; p++)
	{
		const IdgenCounterPlan *plan = &counter_plan[p];
		IdgenNamedSlot *slot = &idgen_registry_slots[plan->slot];
		uint64		old = pg_atomic_read_u64(&slot->counter_reserved);
		uint64		refill = (uint64) slot->spec.counter.refill;

		slot->state_rewrite = false;
		while (old < plan->reserved &&
			   !pg_atomic_compare_exchange_u64(&slot->counter_reserved, &old,
											   plan->reserved))
			;
		old = Max(old, plan->reserved);
		pg_atomic_write_u64(&slot->counter_wake, old - Min(old, refill));
		/* a commit waiting for these values wakes on its latch poll */
	}
	counter_plan_n = 0;
}

/*
 * Open idgen_generator (relid, found by OID with idgen_keeper_find_objects(),
 * which checks that superusers own it) and check that its columns are the
 * ones idgen_registry_row() reads: a table altered by hand is refused, not
 * read.  Caller has begun a transaction and closes it.
 */
static Relation
idgen_registry_open(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);

	if (rel->rd_rel->relam != HEAP_TABLE_AM_OID ||
		desc->natts != IDGEN_REG_NCOLUMNS ||
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
		TupleDescAttr(desc, IDGEN_REG_START)->atttypid != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen's table idgen_generator in database \"%s\" has been altered",
						idgen_database),
				 idgen_errhint_repair()));
	return rel;
}

/*
 * A row of idgen_generator as stored: a tuple of the table (opened by
 * idgen_registry_open, which checked its columns), or of a query whose
 * first columns are IDGEN_REG_COLUMNS.  False for a row that holds no
 * definition (a part of it NULL, a name too long for a slot, a unit below
 * 1 ms): it is skipped.
 */
bool
idgen_registry_row(HeapTuple tup, TupleDesc desc, IdgenRegistryRow *row)
{
	Datum		values[IDGEN_REG_NCOLUMNS];
	bool		nulls[IDGEN_REG_NCOLUMNS];
	IdgenCounterOptions *options = &row->options;

	Assert(desc->natts >= IDGEN_REG_NCOLUMNS);
	for (int c = 0; c < IDGEN_REG_NCOLUMNS; c++)
		values[c] = heap_getattr(tup, c + 1, desc, &nulls[c]);
	options->prefetch = nulls[IDGEN_REG_PREFETCH] ? 0 : DatumGetInt32(values[IDGEN_REG_PREFETCH]);
	options->refill = nulls[IDGEN_REG_REFILL] ? 0 : DatumGetInt32(values[IDGEN_REG_REFILL]);
	options->stripes = nulls[IDGEN_REG_STRIPES] ? 0 : DatumGetInt32(values[IDGEN_REG_STRIPES]);
	options->owned = nulls[IDGEN_REG_OWNED] ? NULL : TextDatumGetCString(values[IDGEN_REG_OWNED]);
	options->segment = nulls[IDGEN_REG_SEGMENT] ? 0 : DatumGetInt64(values[IDGEN_REG_SEGMENT]);
	options->start = nulls[IDGEN_REG_START] ? 0 : DatumGetInt64(values[IDGEN_REG_START]);
	if (nulls[IDGEN_REG_NAME] || nulls[IDGEN_REG_LAYOUT] ||
		nulls[IDGEN_REG_EPOCH] || nulls[IDGEN_REG_UNIT_MS])
		return false;
	row->name = TextDatumGetCString(values[IDGEN_REG_NAME]);
	row->layout_text = TextDatumGetCString(values[IDGEN_REG_LAYOUT]);
	row->epoch = idgen_timestamptz_to_unix_ms(DatumGetTimestampTz(values[IDGEN_REG_EPOCH]));
	row->unit = DatumGetInt32(values[IDGEN_REG_UNIT_MS]);
	row->dropped = !nulls[IDGEN_REG_DROPPED];
	return strlen(row->name) < NAMEDATALEN && row->unit >= 1;
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

	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		IdgenRegistryRow row;
		uint32		state;
		int			i;

		if (!idgen_registry_row(tup, desc, &row))
			continue;

		i = idgen_registry_find(row.name);
		if (i < 0)
		{
			/* dropped ones too: their IDs can still be decoded by name */
			idgen_registry_install(&row);
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
