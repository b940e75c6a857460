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
 * generators from one pool of idgen.generator_shards.
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

typedef enum IdgenSlotState
{
	IDGEN_SLOT_ACTIVE = 1,
	IDGEN_SLOT_DROPPED,
	IDGEN_SLOT_REFUSED			/* definition changed, or node id too wide */
} IdgenSlotState;

/* roles one generator may be granted to, PUBLIC aside */
#define IDGEN_MAX_GRANTEES 32

typedef struct IdgenNamedSlot
{
	pg_atomic_uint32 state;
	char		name[NAMEDATALEN];
	IdgenSpec	spec;
	int64		node_value;		/* node and constant bits */
	int32		shard_base;		/* first pool generator, or -1 */
	char		message[256];	/* why refused; under the registry mutex */

	/*
	 * Counter layouts: local counter values below counter_reserved are
	 * durably reserved (published by the keeper only after a durable
	 * commit); counter_want is the highest a waiting caller, or a
	 * statement or commit waiting for values taken ahead, needs.  The
	 * generator's "last" is the next local value to hand out; it may run
	 * up to idgen_counter_lead() beyond counter_reserved, pending the end
	 * of the statement that took them (counter.c).  A caller that
	 * takes a value beyond counter_wake (the reservation less refill)
	 * claims it, setting it to PG_UINT64_MAX, and wakes the keeper: so the
	 * keeper starts extending when fewer than refill values remain, not
	 * when a caller has run out.
	 */
	pg_atomic_uint64 counter_reserved;
	pg_atomic_uint64 counter_want;
	pg_atomic_uint64 counter_wake;

	/*
	 * Bumped by the keeper after it raises the counter to a floor from
	 * outside (a restored state row, a lease record): values a transaction
	 * took ahead before that may lie below the floor, so its commit fails.
	 */
	pg_atomic_uint32 counter_floor_epoch;
	/*
	 * Who may draw from the generator besides superusers (table
	 * idgen_generator_grant): PUBLIC, or these roles and their members.
	 * Written by the keeper under the registry mutex; acl_version is bumped
	 * after each change, so a call site re-checks only then.
	 */
	pg_atomic_uint32 acl_version;
	bool		acl_public;
	int			acl_n;
	Oid			acl_roles[IDGEN_MAX_GRANTEES];
	bool		state_loaded;	/* durable state applied (keeper only) */
	bool		check_after_load;	/* compare with dropped counters once
									 * their state is loaded (keeper only) */
	bool		state_missing;	/* refused until its state row appears
								 * (keeper only) */
	bool		defined_dropped;	/* its row's dropped mark meanwhile */
	bool		state_rewrite;	/* durable state missing or low (keeper only) */
	int64		state_changed_ms;	/* monotonic ms of a drop/re-create commit */
} IdgenNamedSlot;

/*
 * How long the keeper leaves a slot whose dropped mark a commit changed:
 * its load may run on a snapshot taken before that commit.
 */
#define IDGEN_REGISTRY_SETTLE_MS 5000

/*
 * How long a lookup of a name not loaded yet waits for the keeper to load
 * the definitions: long enough for a keeper busy with a durable commit or an
 * etcd request, and it ends as soon as a load has answered the request.
 */
#define IDGEN_REGISTRY_LOOKUP_WAIT_MS 5000

typedef struct IdgenRegistry
{
	slock_t		mutex;			/* the slots' messages */
	pg_atomic_uint32 nslots;	/* slots filled; only the keeper adds */
	pg_atomic_uint64 load_requests; /* lookups that asked for a load */
	pg_atomic_uint64 loads_served;	/* requests up to here have seen a load
									 * that began after them */
	pg_atomic_uint64 changes;	/* commits that created or dropped a
								 * generator or changed its grants */
	int32		pool_used;		/* keeper only */
	int64		floor_unix_ms;	/* floor of new slots in this shared memory */
	int64		node_floor_unix_ms; /* and of new slots embedding the node id:
									 * the previous holder's lease (lease.c) */
} IdgenRegistry;

typedef union IdgenRegistryPadded
{
	IdgenRegistry registry;
	char		pad[PG_CACHE_LINE_SIZE];
} IdgenRegistryPadded;

static IdgenRegistry *registry = NULL;
static IdgenGeneratorPadded *registry_gens = NULL;
static IdgenGeneratorPadded *registry_pool = NULL;
static IdgenNamedSlot *registry_slots = NULL;


/* the columns of idgen_generator, in order */
enum
{
	IDGEN_REG_NAME,
	IDGEN_REG_LAYOUT,
	IDGEN_REG_EPOCH,
	IDGEN_REG_UNIT_MS,
	IDGEN_REG_CREATED,
	IDGEN_REG_DROPPED,
	IDGEN_REG_PREFETCH,
	IDGEN_REG_REFILL,
	IDGEN_REG_STRIPES,
	IDGEN_REG_OWNED,
	IDGEN_REG_SEGMENT,
	IDGEN_REG_START,
	IDGEN_REG_NCOLUMNS
};

/* the options of a definition as stored (0 / NULL: default) */
typedef struct IdgenCounterOptions
{
	int32		prefetch;
	int32		refill;
	int32		stripes;
	char	   *owned;
	int64		segment;
	int64		start;
} IdgenCounterOptions;

/* a row of idgen_generator, as idgen_registry_row() reads it */
typedef struct IdgenRegistryRow
{
	char	   *name;
	char	   *layout_text;
	int64		epoch;			/* Unix ms */
	int32		unit;			/* ms */
	bool		dropped;
	IdgenCounterOptions options;
} IdgenRegistryRow;

/* ---- shared memory ---- */

Size
idgen_registry_shmem_size(void)
{
	Size		size = sizeof(IdgenRegistryPadded);

	size = add_size(size, mul_size(idgen_max_generators, sizeof(IdgenGeneratorPadded)));
	size = add_size(size, mul_size(idgen_generator_shards, sizeof(IdgenGeneratorPadded)));
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

	registry = &((IdgenRegistryPadded *) base)->registry;
	registry_gens = (IdgenGeneratorPadded *) (base + sizeof(IdgenRegistryPadded));
	registry_pool = registry_gens + idgen_max_generators;
	registry_slots = (IdgenNamedSlot *) (registry_pool + idgen_generator_shards);
	if (found)
		return;

	SpinLockInit(&registry->mutex);
	pg_atomic_init_u32(&registry->nslots, 0);
	pg_atomic_init_u64(&registry->load_requests, 0);
	pg_atomic_init_u64(&registry->loads_served, 0);
	pg_atomic_init_u64(&registry->changes, 0);
	registry->pool_used = 0;
	registry->floor_unix_ms = 0;
}

/* The generator of slot i, and of shard "shard" if it is sharded. */
static IdgenGenerator *
idgen_slot_generator(int i, int32 shard)
{
	if (registry_slots[i].shard_base < 0)
		return &registry_gens[i].gen;
	return &registry_pool[registry_slots[i].shard_base + shard].gen;
}

static int
idgen_slot_ngenerators(int i)
{
	const IdgenSpec *spec = &registry_slots[i].spec;

	return spec->shard_field < 0 ? 1 : 1 << spec->fields[spec->shard_field].bits;
}

/* A slot by name, or -1. */
static int
idgen_registry_find(const char *name)
{
	uint32		n = pg_atomic_read_u32(&registry->nslots);

	pg_read_barrier();
	for (uint32 i = 0; i < n; i++)
		if (strcmp(registry_slots[i].name, name) == 0)
			return (int) i;
	return -1;
}

/* ---- the keeper's side ---- */

/* The floor of every slot installed from now on (Unix ms). */
void
idgen_registry_set_floor(int64 floor_unix_ms)
{
	registry->floor_unix_ms = floor_unix_ms;
}

static void idgen_slot_layout(int i, IdgenLayout *layout);

/*
 * Floor every slot that embeds the node id, installed or still to come, at
 * floor_unix_ms: this server has just claimed a node id whose previous
 * holder may have issued up to there (lease.c).
 */
void
idgen_registry_raise_node_floors(int64 floor_unix_ms)
{
	uint32		n = pg_atomic_read_u32(&registry->nslots);

	registry->node_floor_unix_ms = Max(registry->node_floor_unix_ms, floor_unix_ms);
	for (uint32 i = 0; i < n; i++)
	{
		IdgenLayout layout;

		if (registry_slots[i].spec.node_bits == 0 ||
			registry_slots[i].spec.time_field < 0)
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
	idgen_raise_position(&registry_gens[i].gen, floor);
	pg_write_barrier();
	pg_atomic_fetch_add_u32(&registry_slots[i].counter_floor_epoch, 1);
}

/*
 * Counter generators that embed the node id resume above what the lease
 * record gives them (lease.c): values a previous holder of the node id may
 * have handed out.  Keeper only.
 */
void
idgen_registry_raise_node_counters(void)
{
	uint32		n = pg_atomic_read_u32(&registry->nslots);
	uint64		floor;

	for (uint32 i = 0; i < n; i++)
		if (registry_slots[i].spec.node_bits > 0 &&
			registry_slots[i].spec.time_field < 0 &&
			idgen_lease_counter_floor(registry_slots[i].name, &floor))
			idgen_counter_raise_floor(i, floor);
}

/* Tell the lease record what those counters have published.  Keeper only. */
void
idgen_registry_note_node_counters(void)
{
	uint32		n = pg_atomic_read_u32(&registry->nslots);

	for (uint32 i = 0; i < n; i++)
		if (registry_slots[i].spec.node_bits > 0 &&
			registry_slots[i].spec.time_field < 0)
			(void) idgen_lease_note_counter(registry_slots[i].name,
											pg_atomic_read_u64(&registry_slots[i].counter_reserved));
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
	uint64		requests = pg_atomic_read_u64(&registry->load_requests);

	pg_memory_barrier();
	return requests;
}

bool
idgen_registry_load_requested(uint64 requests)
{
	return requests != pg_atomic_read_u64(&registry->loads_served);
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
	uint64		changes = pg_atomic_read_u64(&registry->changes);

	pg_memory_barrier();
	return changes;
}

void
idgen_registry_loads_served(uint64 requests)
{
	/* the slots the load installed before the lookups look again */
	pg_write_barrier();
	pg_atomic_write_u64(&registry->loads_served, requests);
}

/* The engine's view of a slot's layout. */
static void idgen_named_not_owned(IdgenGenerator *gen);
static const char *idgen_collides_with(const char *name, const IdgenSpec *spec, bool at_install,
									   uint32 nslots);
static void idgen_registry_require_committed(const char *name);

static void
idgen_slot_layout(int i, IdgenLayout *layout)
{
	const IdgenSpec *spec = &registry_slots[i].spec;

	memset(layout, 0, sizeof(*layout));
	layout->name = registry_slots[i].name;
	layout->funcname = "idgen_next";
	layout->seq_bits = spec->seq_field < 0 ? 0 : spec->fields[spec->seq_field].bits;
	layout->ms_limit = spec->tick_limit;
	layout->report_not_owned = idgen_named_not_owned;
	layout->offset_ms = spec->epoch_unix_ms - idgen_epoch_unix_ms;
	layout->unit_ms = spec->unit_ms;
	layout->unit_inverse = 1.0 / spec->unit_ms;
}

static void
idgen_slot_set_state(int i, IdgenSlotState state, const char *message)
{
	IdgenNamedSlot *slot = &registry_slots[i];
	int			n = idgen_slot_ngenerators(i);

	SpinLockAcquire(&registry->mutex);
	strlcpy(slot->message, message ? message : "", sizeof(slot->message));
	SpinLockRelease(&registry->mutex);
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
static bool
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
	uint32		i = pg_atomic_read_u32(&registry->nslots);
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

	slot = &registry_slots[i];
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

		if (registry->pool_used + need > idgen_generator_shards)
			refusal = psprintf("its %d shards do not fit \"idgen.generator_shards\" (%d, %d in use)",
							   need, idgen_generator_shards, registry->pool_used);
		else
		{
			slot->shard_base = registry->pool_used;
			registry->pool_used += need;
		}
	}

	idgen_slot_layout(i, &layout);
	for (int s = 0; s < idgen_slot_ngenerators(i); s++)
	{
		IdgenGenerator *gen = idgen_slot_generator(i, s);

		idgen_generator_init(gen, false);
		if (registry->floor_unix_ms > 0 && spec.time_field >= 0)
			idgen_raise_floor(gen, &layout,
							  registry->floor_unix_ms - idgen_epoch_unix_ms);
		if (registry->node_floor_unix_ms > 0 && spec.time_field >= 0 &&
			spec.node_bits > 0)
			idgen_raise_floor(gen, &layout,
							  registry->node_floor_unix_ms - idgen_epoch_unix_ms);
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
	pg_atomic_write_u32(&registry->nslots, i + 1);
}

/* Do two parsed definitions issue the same IDs from the same state? */
static bool
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
	return idgen_spec_same(&registry_slots[i].spec, now);
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
					registry_slots[i].name, row)));
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

	uint32		n = pg_atomic_read_u32(&registry->nslots);
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
		if (i < 0 || (uint32) i >= n || registry_slots[i].spec.time_field >= 0)
			continue;
		seen[i] = true;
		row = (uint64) DatumGetInt64(values[1]);
		if (!registry_slots[i].state_loaded || registry_slots[i].state_missing)
		{
			uint64		floor = idgen_counter_floor_of(&registry_slots[i], relid);

			idgen_raise_position(&registry_gens[i].gen, Max(row, floor));
			if (floor > row)
			{
				registry_slots[i].state_rewrite = true;
				ereport(WARNING,
						(errmsg("idgen keeper: counter \"%s\" resumes above " UINT64_FORMAT ", where this server reserved it before",
								registry_slots[i].name, floor),
						 errdetail("Its durable state in database \"%s\" is newer than the reservation this server recorded in file \"%s\": the extension was re-created, or \"idgen.database\" changed.",
								   idgen_database, IDGEN_COUNTER_FLOOR_FILE)));
			}

			/*
			 * Refused for want of this row, so nothing was issued here
			 * under the name: the row arrived after its definition (a
			 * parallel pg_restore commits them in either order), and is
			 * taken as a start would take it.
			 */
			if (registry_slots[i].state_missing)
			{
				registry_slots[i].state_missing = false;
				idgen_slot_set_state(i, registry_slots[i].defined_dropped ?
									 IDGEN_SLOT_DROPPED : IDGEN_SLOT_ACTIVE, NULL);
				ereport(LOG,
						(errmsg("idgen keeper: counter \"%s\" found its durable state; it resumes above " UINT64_FORMAT,
								registry_slots[i].name, Max(row, floor))));
			}
		}
		else if (row < pg_atomic_read_u64(&registry_slots[i].counter_reserved))
			registry_slots[i].state_rewrite = true;
		else if (row > pg_atomic_read_u64(&registry_slots[i].counter_reserved))
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
		IdgenNamedSlot *slot = &registry_slots[i];

		if (slot->spec.time_field < 0 && !seen[i] &&
			pg_atomic_read_u32(&slot->state) != IDGEN_SLOT_REFUSED)
		{
			uint64		floor = slot->state_loaded ? 0 :
				idgen_counter_floor_of(slot, InvalidOid);

			if (!slot->state_loaded && floor > 0)
			{
				/* lost, but this server recorded how far it had got */
				idgen_raise_position(&registry_gens[i].gen, floor);
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
		IdgenNamedSlot *slot = &registry_slots[i];
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
	uint32		n = pg_atomic_read_u32(&registry->nslots);

	if (counter_plan == NULL)
		counter_plan = MemoryContextAlloc(TopMemoryContext,
										  sizeof(IdgenCounterPlan) * idgen_max_generators);
	counter_plan_n = 0;
	pg_read_barrier();
	for (uint32 i = 0; i < n; i++)
	{
		IdgenNamedSlot *slot = &registry_slots[i];
		IdgenGenerator *gen = &registry_gens[i].gen;
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
						idgen_database)));

	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Datum		values[2];
		bool		nulls[2];

		heap_deform_tuple(tup, desc, values, nulls);
		if (nulls[0])
			continue;
		for (int p = 0; p < counter_plan_n; p++)
			if (strcmp(registry_slots[counter_plan[p].slot].name,
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

		values[0] = CStringGetTextDatum(registry_slots[counter_plan[p].slot].name);
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
		IdgenNamedSlot *slot = &registry_slots[counter_plan[p].slot];
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
		if (registry_slots[counter_plan[p].slot].spec.node_bits > 0)
			noted |= idgen_lease_note_counter(registry_slots[counter_plan[p].slot].name,
											  counter_plan[p].reserved);
	if (noted)
		idgen_lease_record_counters();

	for (int p = 0; p < counter_plan_n; p++)
	{
		const IdgenCounterPlan *plan = &counter_plan[p];
		IdgenNamedSlot *slot = &registry_slots[plan->slot];
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
						idgen_database)));
	return rel;
}

/*
 * A row of idgen_generator (opened by idgen_registry_open) as stored.
 * False for a row that holds no definition (a part of it NULL, a name too
 * long for a slot, a unit below 1 ms): it is skipped.
 */
static bool
idgen_registry_row(HeapTuple tup, TupleDesc desc, IdgenRegistryRow *row)
{
	Datum		values[IDGEN_REG_NCOLUMNS];
	bool		nulls[IDGEN_REG_NCOLUMNS];
	IdgenCounterOptions *options = &row->options;

	heap_deform_tuple(tup, desc, values, nulls);
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
		state = pg_atomic_read_u32(&registry_slots[i].state);
		pg_read_barrier();
		if (idgen_clock_monotonic_ms() - registry_slots[i].state_changed_ms <
			IDGEN_REGISTRY_SETTLE_MS)
			continue;
		if (state == IDGEN_SLOT_REFUSED && !registry_slots[i].state_missing)
			continue;
		if (!idgen_registry_same(i, &row))
		{
			registry_slots[i].state_missing = false;
			idgen_slot_set_state(i, IDGEN_SLOT_REFUSED,
								 "its definition in idgen_generator changed after IDs were issued under it");
		}
		else if (registry_slots[i].state_missing)
			registry_slots[i].defined_dropped = row.dropped;
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
	uint32		n = pg_atomic_read_u32(&registry->nslots);
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
						idgen_database)));
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
		IdgenNamedSlot *slot = &registry_slots[i];
		bool		changed;

		SpinLockAcquire(&registry->mutex);
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
		SpinLockRelease(&registry->mutex);
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
 * The table is read on every call, with no cache in shared memory or in the
 * call site: it is small, a standby issues nothing, and every call sees the
 * definitions replayed up to its snapshot.  Caller is in a transaction.
 */
static void
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

/* ---- the backends' side ---- */

/* idgen_next() and friends need the preload, and the registry. */
static void
idgen_registry_require(const char *funcname)
{
	(void) idgen_require_shared(funcname);
}

/*
 * The slot of a name, loading definitions committed since the keeper last
 * looked if need be.  Errors: 42704 for an unknown or dropped name.
 */
static int
idgen_registry_lookup(const char *name, bool allow_dropped)
{
	int			i = idgen_registry_find(name);

	if (i < 0)
	{
		uint64		request;
		int64		started = idgen_clock_monotonic_ms();
		int64		deadline = started + IDGEN_REGISTRY_LOOKUP_WAIT_MS;
		int64		next_wake = 0;
		Latch	   *latch;

		if (RecoveryInProgress())
			ereport(ERROR,
					(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
					 errmsg("named generators are not available during recovery"),
					 errdetail("The keeper loads their definitions, and it runs only on a primary."),
					 errhint("Issue IDs on the primary. Decoding by name works here, in database \"%s\".",
							 idgen_database)));
		idgen_registry_require_committed(name);

		/*
		 * A load that serves this request sees every definition whose
		 * commit this session could have seen before it.  The keeper
		 * answers such requests together, at most every
		 * IDGEN_KEEPER_LOOKUP_LOAD_MS (at once after a commit that created
		 * a generator), so a loop of unknown names waits rather than keeps
		 * it from its reservations.  The keeper may
		 * reset its latch in a wait of its own (a lock, a synchronous
		 * standby) and miss ours: set it again now and then.  A keeper
		 * that has stopped loading says why after a second (a failed one
		 * may be restarting); without a load the name is not unknown.
		 */
		request = pg_atomic_add_fetch_u64(&registry->load_requests, 1);
		for (;;)
		{
			int64		now = idgen_clock_monotonic_ms();

			if (pg_atomic_read_u64(&registry->loads_served) >= request ||
				(i = idgen_registry_find(name)) >= 0 ||
				now >= deadline)
				break;
			if (now >= next_wake)
			{
				if (now - started >= 1000)
					idgen_keeper_report_not_loaded(name, false);
				latch = idgen_keeper_latch();
				if (latch != NULL)
					SetLatch(latch);
				next_wake = now + 50;
			}
			CHECK_FOR_INTERRUPTS();
			pg_usleep(1000L);
		}
		/* what the load that served us installed */
		pg_read_barrier();
		i = idgen_registry_find(name);
		if (i < 0 && pg_atomic_read_u64(&registry->loads_served) < request)
			idgen_keeper_report_not_loaded(name, true);
	}
	if (i >= 0 && !allow_dropped &&
		pg_atomic_read_u32(&registry_slots[i].state) == IDGEN_SLOT_DROPPED)
		idgen_registry_require_committed(name);
	if (i < 0 ||
		(!allow_dropped &&
		 pg_atomic_read_u32(&registry_slots[i].state) == IDGEN_SLOT_DROPPED))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("generator \"%s\" does not exist", name),
				 errhint("Create it with idgen_create_generator() in database \"%s\" (\"idgen.database\"); it is then usable in every database.",
						 idgen_database)));
	return i;
}

/* Raise the error of a slot that is switched off. */
static void
idgen_report_slot(int i)
{
	IdgenNamedSlot *slot = &registry_slots[i];
	char		message[sizeof(slot->message)];

	if (pg_atomic_read_u32(&slot->state) == IDGEN_SLOT_DROPPED)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("generator \"%s\" does not exist", slot->name),
				 errdetail("It was dropped.")));
	SpinLockAcquire(&registry->mutex);
	strlcpy(message, slot->message, sizeof(message));
	SpinLockRelease(&registry->mutex);
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("generator \"%s\" cannot issue IDs on this server", slot->name),
			 errdetail("%s.", message),
			 errhint("A definition never changes once IDs were issued under it: drop it and create one under a new name.")));
}

/* report_not_owned of every named layout */
static void
idgen_named_not_owned(IdgenGenerator *gen)
{
	uint32		n = pg_atomic_read_u32(&registry->nslots);

	for (uint32 i = 0; i < n; i++)
	{
		int			ngen = idgen_slot_ngenerators(i);

		for (int s = 0; s < ngen; s++)
			if (idgen_slot_generator(i, s) == gen)
				idgen_report_slot(i);
	}
	elog(ERROR, "named generator not found");
}

/*
 * What a call of idgen_next() keeps in fn_extra: the name it was last
 * called with and everything needed to compose an ID, so that the hot path
 * is the engine and a few shifts.
 */
typedef struct IdgenNamedCache
{
	bool		constant_name;	/* the name argument is a Const */
	char		name[NAMEDATALEN];
	int			namelen;
	int			slot;
	IdgenGenerator *gen;		/* the slot's generator; NULL if sharded */
	IdgenLayout layout;
	int64		fixed;			/* node and constant bits */
	int			time_shift;
	int			seq_shift;
	int			shard_field;	/* -1 if none */
	int			shard_shift;
	int32		max_shard;
	uint64		random_mask;	/* in place; 0 if none */
	bool		counter;		/* a counter layout (no time field) */
	bool		leased;			/* embeds the node id under a lease */
	Oid			usage_user;		/* the user last allowed to draw here */
	uint32		usage_version;	/* the slot's acl_version then */
	uint32		usage_roles;	/* idgen_roles_changed then */
} IdgenNamedCache;

/*
 * Is the name argument of this call site a constant?  Then it cannot
 * change for the life of the FmgrInfo, and once resolved it need not be
 * looked at again.  Only a Const counts: an external Param, which
 * get_fn_expr_arg_stable() also accepts, is re-bound between evaluations
 * of one expression state by PL/pgSQL's simple expressions.
 */
static bool
idgen_name_is_constant(FmgrInfo *flinfo)
{
	List	   *args;

	if (flinfo->fn_expr == NULL || !IsA(flinfo->fn_expr, FuncExpr))
		return false;
	args = ((FuncExpr *) flinfo->fn_expr)->args;
	return args != NIL && IsA(linitial(args), Const);
}

/*
 * Resolve the name argument (argument 0) of a call into its cache entry:
 * the slot, loading definitions committed since the keeper last looked if
 * need be (42704 for an unknown or, unless allow_dropped, dropped name).
 */
static pg_noinline IdgenNamedCache *
idgen_named_cache_lookup(FunctionCallInfo fcinfo, bool allow_dropped)
{
	IdgenNamedCache *cache = fcinfo->flinfo->fn_extra;
	text	   *name;
	int			len;
	const IdgenSpec *spec;
	char	   *cname;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("generator name must not be null")));
	name = PG_GETARG_TEXT_PP(0);
	len = VARSIZE_ANY_EXHDR(name);
	if (cache != NULL && cache->namelen == len &&
		memcmp(cache->name, VARDATA_ANY(name), len) == 0)
		return cache;

	cname = text_to_cstring(name);
	if (len >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("generator \"%s\" does not exist", cname)));
	if (cache == NULL)
		cache = fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(IdgenNamedCache));
	cache->constant_name = false;	/* invalid until complete */
	cache->namelen = -1;
	cache->usage_user = InvalidOid;
	cache->slot = idgen_registry_lookup(cname, allow_dropped);
	spec = &registry_slots[cache->slot].spec;
	idgen_slot_layout(cache->slot, &cache->layout);
	cache->gen = spec->shard_field < 0 ? idgen_slot_generator(cache->slot, 0) : NULL;
	cache->fixed = registry_slots[cache->slot].node_value;
	cache->counter = spec->time_field < 0;
	cache->leased = idgen_leases_on && spec->node_bits > 0;
	cache->time_shift = cache->counter ? 0 : spec->fields[spec->time_field].shift;
	cache->seq_shift = spec->seq_field < 0 ? 0 : spec->fields[spec->seq_field].shift;
	cache->shard_field = spec->shard_field;
	cache->shard_shift = spec->shard_field < 0 ? 0 : spec->fields[spec->shard_field].shift;
	cache->max_shard = spec->shard_field < 0 ? -1 :
		(1 << spec->fields[spec->shard_field].bits) - 1;
	cache->random_mask = 0;
	for (int f = 0; f < spec->nfields; f++)
		if (spec->fields[f].kind == IDGEN_FIELD_RANDOM)
			cache->random_mask |= ((UINT64CONST(1) << spec->fields[f].bits) - 1) << spec->fields[f].shift;
	memcpy(cache->name, VARDATA_ANY(name), len);
	cache->namelen = len;
	cache->constant_name = idgen_name_is_constant(fcinfo->flinfo);
	return cache;
}

/*
 * The cache entry of this call's generator.  A slot is never reused while
 * the server runs (a dropped name keeps it, switched off), so an entry
 * stays right for as long as its name does.
 */
static inline IdgenNamedCache *
idgen_named_cache(FunctionCallInfo fcinfo, bool allow_dropped)
{
	IdgenNamedCache *cache = fcinfo->flinfo->fn_extra;

	if (likely(cache != NULL && cache->constant_name))
		return cache;
	return idgen_named_cache_lookup(fcinfo, allow_dropped);
}

/*
 * Role memberships and attributes (superuser, inherit) as this backend
 * knows them change: a call site allowed before must check again, as
 * has_privs_of_role() would answer anew.  Counted by an invalidation
 * callback, so the hot path compares one more word.
 */
static uint32 idgen_roles_changed = 1;

static void
idgen_roles_changed_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	idgen_roles_changed++;
}

/*
 * May the current user draw from the generator?  Superusers may; others
 * if it is granted to PUBLIC or to a role whose privileges they have
 * (idgen_grant_generator), as USAGE on a sequence.  42501 otherwise.
 */
static pg_noinline void
idgen_named_check_usage_slow(IdgenNamedCache *cache)
{
	IdgenNamedSlot *slot = &registry_slots[cache->slot];
	Oid			user = GetUserId();
	uint32		version = pg_atomic_read_u32(&slot->acl_version);
	bool		pub;
	int			n;
	Oid			roles[IDGEN_MAX_GRANTEES];
	bool		allowed;
	static bool callbacks_registered = false;

	if (!callbacks_registered)
	{
		CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, idgen_roles_changed_callback, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHOID, idgen_roles_changed_callback, (Datum) 0);
		callbacks_registered = true;
	}

	/*
	 * A slot is published before the keeper loads its grants (a moment
	 * after a start): wait for them rather than refuse a granted role.
	 */
	if (version == 0 && !superuser_arg(user))
	{
		int64		deadline = idgen_clock_monotonic_ms() + IDGEN_REGISTRY_LOOKUP_WAIT_MS;
		Latch	   *latch;

		pg_atomic_fetch_add_u64(&registry->load_requests, 1);
		while ((version = pg_atomic_read_u32(&slot->acl_version)) == 0)
		{
			if (idgen_clock_monotonic_ms() >= deadline)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("the grants of generator \"%s\" are not loaded", slot->name),
						 errdetail("The keeper loads them from database \"%s\" with the definitions.",
								   idgen_database),
						 errhint("Retry; if it persists, keeper_state and keeper_message in idgen_status() say why the keeper does not load.")));
			latch = idgen_keeper_latch();
			if (latch != NULL)
				SetLatch(latch);
			CHECK_FOR_INTERRUPTS();
			pg_usleep(1000L);
		}
	}
	pg_read_barrier();
	SpinLockAcquire(&registry->mutex);
	pub = slot->acl_public;
	n = slot->acl_n;
	memcpy(roles, slot->acl_roles, sizeof(Oid) * n);
	SpinLockRelease(&registry->mutex);

	allowed = pub || superuser_arg(user);
	for (int i = 0; i < n && !allowed; i++)
		allowed = has_privs_of_role(user, roles[i]);
	if (!allowed)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for generator \"%s\"", slot->name),
				 errhint("A superuser can grant it with idgen_grant_generator('%s', role) in database \"%s\".",
						 slot->name, idgen_database)));
	cache->usage_user = user;
	cache->usage_version = version;
	cache->usage_roles = idgen_roles_changed;
}

/*
 * The hot path's part of it: three comparisons once a call site is
 * allowed: the user, the slot's grants, and role memberships.
 */
static inline void
idgen_named_check_usage(IdgenNamedCache *cache)
{
	if (likely(cache->usage_user == GetUserId() &&
			   cache->usage_roles == idgen_roles_changed &&
			   cache->usage_version ==
			   pg_atomic_read_u32(&registry_slots[cache->slot].acl_version)))
		return;
	idgen_named_check_usage_slow(cache);
}

/* The shard argument (argno) of a call: given iff the layout has one. */
static pg_noinline int32
idgen_named_shard_argument(FunctionCallInfo fcinfo, IdgenNamedCache *cache, int argno,
				  bool given)
{
	int32		shard;

	if (cache->shard_field < 0)
	{
		if (given)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("generator \"%s\" has no shard field", cache->layout.name),
					 errhint("Call it without a shard argument.")));
		return 0;
	}
	if (!given)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("generator \"%s\" needs a shard argument", cache->layout.name),
				 errhint("Call idgen_next('%s', shard).", cache->layout.name)));
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("shard must not be null")));
	shard = PG_GETARG_INT32(argno);
	idgen_check_part("shard", shard, cache->max_shard);
	return shard;
}

/* The shard of a call; an unsharded layout called without one costs a test. */
static inline int32
idgen_named_shard(FunctionCallInfo fcinfo, IdgenNamedCache *cache, int argno,
				  bool given)
{
	if (likely(cache->shard_field < 0 && !given))
		return 0;
	return idgen_named_shard_argument(fcinfo, cache, argno, given);
}

/* The generator of a call's shard. */
static inline IdgenGenerator *
idgen_named_generator(IdgenNamedCache *cache, int32 shard)
{
	if (likely(cache->gen != NULL))
		return cache->gen;
	return idgen_slot_generator(cache->slot, shard);
}

static inline int64
idgen_named_compose(IdgenNamedCache *cache, uint64 position, int32 shard)
{
	int			seq_bits = cache->layout.seq_bits;
	uint64		id = ((position >> seq_bits) << cache->time_shift) |
		((position & ((UINT64CONST(1) << seq_bits) - 1)) << cache->seq_shift) |
		(uint64) cache->fixed |
		((uint64) shard << cache->shard_shift);

	if (cache->random_mask != 0)
		id |= pg_prng_uint64(&pg_global_prng_state) & cache->random_mask;
	return (int64) id;
}

/*
 * A caller took values beyond slot->counter_wake: fewer than the refill
 * remain.  The first to claim the mark wakes the keeper, once per
 * reservation; a mark the keeper moved meanwhile is looked at again.
 */
static pg_noinline void
idgen_counter_wake_keeper(IdgenNamedSlot *slot, uint64 need)
{
	uint64		wake = pg_atomic_read_u64(&slot->counter_wake);

	while (need > wake && wake != PG_UINT64_MAX)
	{
		if (pg_atomic_compare_exchange_u64(&slot->counter_wake, &wake,
										   PG_UINT64_MAX))
		{
			Latch	   *latch = idgen_keeper_latch();

			if (latch != NULL)
				SetLatch(latch);
			return;
		}
	}
}

/*
 * Values this session took beyond the durable reservation of counter
 * generators, pending the end of the statement that took them, or the
 * commit (counter.c): for each such slot, how far its reservation must
 * reach before either.  An entry goes once the reservation covers it; not
 * when the keeper is late (the next statement waits again), nor when a
 * subtransaction or transaction rolls back, since the code around it may
 * still hold its values (a PL/pgSQL variable assigned in an exception
 * block, or before a procedure's ROLLBACK; session state).  An entry that
 * can never be made durable (the counter was dropped, or raised to a floor
 * from outside, or the node-id claim it was taken under has changed) is
 * doomed: every statement end and commit refuses it, saying why, until a
 * transaction aborts outside any portal (the client's statement failed or
 * it rolled back: no variable of a procedure or function holds a value any
 * more), so a caught refusal cannot let its values into a committed row.  At most one entry per slot; the array is
 * allocated once, before any value is taken, so that recording one cannot
 * fail.
 */
typedef struct IdgenCounterPending
{
	int			slot;
	uint64		need;			/* local values below this must be durable */
	uint32		word;			/* under a leased node id: the lease word
								 * they were taken under, else 0 */
	uint32		epoch;			/* the slot's counter_floor_epoch before the
								 * first of them was taken */
	const char *doomed;			/* why they can never be made durable, or
								 * NULL */
} IdgenCounterPending;

static IdgenCounterPending *counter_pending = NULL;
static int	counter_pending_n = 0;

/*
 * Set from the start of this transaction's commit (or PREPARE) until its
 * end: values taken then (by another extension's commit callback, after
 * idgen's wait) would not be waited for, so none is taken ahead.
 */
static bool counter_committing = false;

/*
 * Values taken ahead cannot be made durable: the statement that took them
 * (at_commit false) or the commit fails.  "keeper" says whether the keeper
 * failed to reserve them (check on it) or the counter moved under them
 * from outside (a new transaction takes values above that).
 */
static pg_noinline void
idgen_counter_pending_refused(IdgenNamedSlot *slot, bool at_commit,
							  bool keeper, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("no durable reservation is available for counter generator \"%s\"",
					slot->name),
			 at_commit ?
			 errdetail("This session drew values of it beyond the durable reservation, and %s; the transaction is rolled back.", why) :
			 errdetail("This session drew values of it beyond the durable reservation, and %s; the statement fails.", why),
			 keeper ?
			 errhint("idgen hands out no counter value that is not durably reserved, and each statement of this session waits for these again until the keeper has reserved them (a new session does not). Check the server log for the \"idgen keeper\" background worker.") :
			 errhint("Do not use values of it this session took before this error; roll back and retry the transaction, or use a new session.")));
}

/* Entry p can never be made durable: doom it, and refuse it. */
static pg_noinline void
idgen_counter_pending_doom(int p, bool at_commit, const char *why)
{
	counter_pending[p].doomed = why;
	idgen_counter_pending_refused(&registry_slots[counter_pending[p].slot],
								  at_commit, false, why);
	pg_unreachable();
}

/*
 * A transaction aborted outside any portal (the client's statement failed,
 * or the client rolled back): no procedure or function is running, so no
 * variable holds a doomed entry's values any more; drop those entries.
 */
static void
idgen_counter_pending_forget_doomed(void)
{
	int			kept = 0;

	for (int p = 0; p < counter_pending_n; p++)
		if (counter_pending[p].doomed == NULL)
			counter_pending[kept++] = counter_pending[p];
	counter_pending_n = kept;
}

static void
idgen_counter_pending_note(int slot, uint64 need, uint32 word, uint32 epoch)
{
	for (int p = 0; p < counter_pending_n; p++)
		if (counter_pending[p].slot == slot)
		{
			/*
			 * Values under two claims, or on both sides of a floor raised
			 * from outside: the earlier ones can never be made durable
			 * (see IdgenCounterPending).  This call's values are refused
			 * with them.
			 */
			if (counter_pending[p].doomed != NULL)
				idgen_counter_pending_doom(p, false, counter_pending[p].doomed);
			if (counter_pending[p].word != word)
				idgen_counter_pending_doom(p, false,
										   "this server's claim on its node id changed since it took them");
			if (counter_pending[p].epoch != epoch)
				idgen_counter_pending_doom(p, false,
										   "the counter was raised to a floor from outside meanwhile (a restored state, or a lease record)");
			counter_pending[p].need = Max(counter_pending[p].need, need);
			return;
		}
	Assert(counter_pending_n < idgen_max_generators);
	counter_pending[counter_pending_n].slot = slot;
	counter_pending[counter_pending_n].need = need;
	counter_pending[counter_pending_n].word = word;
	counter_pending[counter_pending_n].epoch = epoch;
	counter_pending[counter_pending_n].doomed = NULL;
	counter_pending_n++;
}

static void idgen_registry_register_callbacks(void);
static void idgen_registry_xact_callback(XactEvent event, void *arg);

/*
 * One turn of waiting until the keeper has reserved the counter's local
 * values below "need": ask for them (counter_want), wake the keeper, sleep
 * for at most 1 ms.  False, without sleeping, once the deadline (monotonic
 * ms) has passed.  Shared by callers that outran the lead and commits.
 */
static bool
idgen_counter_wait_turn(IdgenNamedSlot *slot, uint64 need, int64 deadline,
						const char *event, uint32 *wait_event)
{
	uint64		want = pg_atomic_read_u64(&slot->counter_want);
	Latch	   *latch = idgen_keeper_latch();
	int64		remaining = deadline - idgen_clock_monotonic_ms();

	while (want < need &&
		   !pg_atomic_compare_exchange_u64(&slot->counter_want, &want, need))
		;
	if (remaining <= 0)
		return false;
	if (latch != NULL)
		SetLatch(latch);
	CHECK_FOR_INTERRUPTS();
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 Min(remaining, 1), idgen_wait_event(event, wait_event));
	ResetLatch(MyLatch);
	return true;
}

/*
 * At the end of a statement, or before this transaction (or parallel
 * worker) commits or prepares: wait until the keeper has made durable
 * every value it took beyond a counter's reservation, or fail closed
 * (55000), which rolls back the statement's (sub)transaction.  Under a
 * leased node id the lease word must still be the one the values were
 * taken under once the reservation covers them: the keeper clears it
 * before it publishes a reservation that etcd does not record (see
 * idgen_issued_node), so then etcd records them for the next holder.
 */
static void
idgen_counter_pending_wait(bool at_commit)
{
	int64		deadline = 0;
	static uint32 wait_event = 0;

	for (int p = 0; p < counter_pending_n; p++)
	{
		IdgenNamedSlot *slot = &registry_slots[counter_pending[p].slot];
		IdgenGenerator *gen = &registry_gens[counter_pending[p].slot].gen;
		uint64		need = counter_pending[p].need;
		bool		waited = false;

		if (counter_pending[p].doomed != NULL)
			idgen_counter_pending_doom(p, at_commit, counter_pending[p].doomed);
		while (pg_atomic_read_u64(&slot->counter_reserved) < need)
		{
			/* a dropped or refused counter is reserved no further */
			if (pg_atomic_read_u32(&slot->state) != IDGEN_SLOT_ACTIVE)
				idgen_counter_pending_doom(p, at_commit,
										   "the counter was dropped or refused meanwhile");
			if (deadline == 0)
				deadline = idgen_reservation_deadline();
			if (!idgen_counter_wait_turn(slot, need, deadline,
										 "IdgenCounterDurable", &wait_event))
				idgen_counter_pending_refused(slot, at_commit, true,
											  "the keeper has not reserved them within idgen.max_wait");
			waited = true;
		}
		pg_read_barrier();		/* the epoch and word after the reservation */
		if (pg_atomic_read_u32(&slot->counter_floor_epoch) != counter_pending[p].epoch)
			idgen_counter_pending_doom(p, at_commit,
									   "the counter was raised to a floor from outside meanwhile (a restored state, or a lease record)");
		if (counter_pending[p].word != 0 &&
			pg_atomic_read_u32(&idgen_shared->lease_word.word) !=
			counter_pending[p].word)
			idgen_counter_pending_doom(p, at_commit,
									   "this server's claim on its node id changed meanwhile");
		if (waited)
		{
			SpinLockAcquire(&gen->mutex);
			gen->waits++;
			SpinLockRelease(&gen->mutex);
		}
	}
	counter_pending_n = 0;
}

/*
 * At the end of a statement (the executor's run, finish and end at any
 * nesting level, or a utility command's end), while its transaction is
 * still in progress: make
 * the counter values it took ahead durable, or fail the statement (55000).
 * Another extension's commit work cannot then ship a value that is not
 * durable, whatever the order in which the extensions' commit callbacks
 * run (postgres_fdw sets up its own when a session first opens a foreign
 * table, which may be after idgen's); the commit's own wait is left for
 * values taken where no statement ends before the commit.
 */
void
idgen_counter_statement_end(void)
{
	if (likely(counter_pending_n == 0) || !IsTransactionState())
		return;
	idgen_counter_pending_wait(false);
}

/*
 * Hand out "count" consecutive local counter values of a counter
 * generator; returns the first.  Below the durable reservation at once;
 * beyond it, within idgen_counter_lead(), at once but pending the end of
 * this statement (counter.c); further, after waiting for the
 * keeper.  Under the generator's lock only a few comparisons: waits for
 * the keeper (bounded, then 55000) and the error for an exhausted counter
 * (22003) happen outside it.
 */
static uint64
idgen_issue_counter(IdgenNamedCache *cache, uint64 count, uint32 word)
{
	IdgenNamedSlot *slot = &registry_slots[cache->slot];
	IdgenGenerator *gen = &registry_gens[cache->slot].gen;
	int64		deadline = 0;
	bool		waited = false;
	bool		may_lead = false;
	static uint32 wait_event = 0;

	for (;;)
	{
		uint64		reserved = pg_atomic_read_u64(&slot->counter_reserved);
		uint32		epoch = 0;
		uint64		first;
		uint64		need;

		/* only a call taking values ahead needs the epoch (read before) */
		if (unlikely(may_lead))
		{
			epoch = pg_atomic_read_u32(&slot->counter_floor_epoch);
			pg_read_barrier();	/* a floor raised before the new epoch */
		}
		SpinLockAcquire(&gen->mutex);
		if (unlikely(!gen->owned))
		{
			SpinLockRelease(&gen->mutex);
			idgen_report_slot(cache->slot);
		}
		first = gen->last;
		need = first + count;
		if (likely(need <= reserved && need <= (uint64) slot->spec.tick_limit))
		{
			gen->last = need;
			gen->issued += count;
			if (unlikely(waited))
				gen->waits++;
			SpinLockRelease(&gen->mutex);
			if (unlikely(need > pg_atomic_read_u64(&slot->counter_wake)))
				idgen_counter_wake_keeper(slot, need);
			return first;
		}

		/*
		 * Beyond the reservation, once the keeper has published one in
		 * this shared memory (so "last" stands above every floor it
		 * loaded): within the lead, pending this statement's end.
		 */
		if (may_lead && reserved > 0 && need <= (uint64) slot->spec.tick_limit &&
			need - reserved <= idgen_counter_lead(&slot->spec))
		{
			gen->last = need;
			gen->issued += count;
			SpinLockRelease(&gen->mutex);
			idgen_counter_pending_note(cache->slot, need, word, epoch);
			if (need > pg_atomic_read_u64(&slot->counter_wake))
				idgen_counter_wake_keeper(slot, need);
			return first;
		}
		SpinLockRelease(&gen->mutex);

		if (need > (uint64) slot->spec.tick_limit)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("counter generator \"%s\" is exhausted", slot->name),
					 errdetail("Its %d-bit seq field holds no further value of this server's stripes.",
							   slot->spec.fields[slot->spec.seq_field].bits),
					 errhint("Define a generator with a wider seq field under a new name.")));

		/* outran the reservation: take the lead, or ask the keeper and wait */
		idgen_refuse_in_recovery("idgen_next");
		if (!may_lead && idgen_counter_lead_on && !counter_committing &&
			ActivePortal != NULL)
		{
			if (counter_pending == NULL)
				counter_pending = MemoryContextAlloc(TopMemoryContext,
													 sizeof(IdgenCounterPending) * idgen_max_generators);
			idgen_registry_register_callbacks();
			may_lead = true;
			continue;
		}
		if (deadline == 0)
			deadline = idgen_reservation_deadline();
		if (!idgen_counter_wait_turn(slot, need, deadline,
									 "IdgenReservation", &wait_event))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("no durable reservation is available for counter generator \"%s\"",
							slot->name),
					 errdetail("The idgen keeper has not extended it; idgen_status() says why."),
					 errhint("idgen hands out no counter value that is not durably reserved. Check the server log for the \"idgen keeper\" background worker.")));
		waited = true;
	}
}

/* The ID of local counter value c. */
static inline int64
idgen_counter_compose(IdgenNamedCache *cache, uint64 c)
{
	const IdgenSpec *spec = &registry_slots[cache->slot].spec;

	return (int64) ((idgen_counter_value(&spec->counter, c) << cache->seq_shift) |
					(uint64) cache->fixed);
}

/*
 * idgen_next(name [, shard]): the next ID of a named generator.  Not
 * STRICT: a NULL name or shard is an error, never a NULL key.
 */
PG_FUNCTION_INFO_V1(idgen_next);
Datum
idgen_next(PG_FUNCTION_ARGS)
{
	IdgenNamedCache *cache;
	int32		shard;
	uint64		position;
	uint32		word = 0;

	idgen_registry_require("idgen_next");
	cache = idgen_named_cache(fcinfo, false);
	idgen_named_check_usage(cache);
	shard = idgen_named_shard(fcinfo, cache, 1, PG_NARGS() > 1);
	if (unlikely(cache->leased))
		word = idgen_require_node_id("idgen_next");
	if (cache->counter)
		position = idgen_issue_counter(cache, 1, word);
	else
		position = idgen_issue(idgen_named_generator(cache, shard), &cache->layout);
	if (unlikely(cache->leased))
		(void) idgen_issued_node("idgen_next", word);
	if (cache->counter)
		PG_RETURN_INT64(idgen_counter_compose(cache, position));
	PG_RETURN_INT64(idgen_named_compose(cache, position, shard));
}

/*
 * idgen_next_int(name): the next ID of a counter generator narrow enough
 * for integer (a 31-bit layout such as "seq:31"), as integer.  22003
 * rather than overflow.
 */
PG_FUNCTION_INFO_V1(idgen_next_int);
Datum
idgen_next_int(PG_FUNCTION_ARGS)
{
	IdgenNamedCache *cache;
	uint64		position;
	int64		id;
	uint32		word = 0;

	idgen_registry_require("idgen_next_int");
	cache = idgen_named_cache(fcinfo, false);
	idgen_named_check_usage(cache);
	if (!cache->counter)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("generator \"%s\" is not a counter generator", cache->layout.name),
				 errhint("idgen_next_int() is for counter layouts of at most 31 bits, such as \"seq:31\"; use idgen_next().")));
	if (unlikely(cache->leased))
		word = idgen_require_node_id("idgen_next_int");
	position = idgen_issue_counter(cache, 1, word);
	if (unlikely(cache->leased))
		(void) idgen_issued_node("idgen_next_int", word);
	id = idgen_counter_compose(cache, position);
	if (id > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("ID of generator \"%s\" is out of range for type integer",
						cache->layout.name),
				 errhint("Use idgen_next() and bigint, or a layout of at most 31 bits.")));
	PG_RETURN_INT32((int32) id);
}

/*
 * idgen_next_batch(name, n [, shard]): n IDs in one lock round trip.
 */
PG_FUNCTION_INFO_V1(idgen_next_batch);
Datum
idgen_next_batch(PG_FUNCTION_ARGS)
{
	IdgenNamedCache *cache;
	int32		n;
	int32		shard;
	uint64		position;
	Datum	   *ids;
	uint32		word = 0;

	idgen_registry_require("idgen_next_batch");
	cache = idgen_named_cache(fcinfo, false);
	idgen_named_check_usage(cache);
	n = idgen_check_batch_size(fcinfo, 1);
	shard = idgen_named_shard(fcinfo, cache, 2, PG_NARGS() > 2);
	ids = palloc(sizeof(Datum) * n);
	if (unlikely(cache->leased))
		word = idgen_require_node_id("idgen_next_batch");
	if (cache->counter)
	{
		position = idgen_issue_counter(cache, n, word);
		if (unlikely(cache->leased))
			(void) idgen_issued_node("idgen_next_batch", word);
		for (int i = 0; i < n; i++, position++)
			ids[i] = Int64GetDatum(idgen_counter_compose(cache, position));
	}
	else
	{
		position = idgen_issue_batch(idgen_named_generator(cache, shard),
									 &cache->layout, n);
		if (unlikely(cache->leased))
			(void) idgen_issued_node("idgen_next_batch", word);
		for (int i = 0; i < n; i++, position++)
			ids[i] = Int64GetDatum(idgen_named_compose(cache, position, shard));
	}
	PG_RETURN_ARRAYTYPE_P(construct_array(ids, n, INT8OID, sizeof(int64),
										  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* ---- decoding and building by name ---- */

/* The spec of the generator named by argument 0, from its slot. */
static const IdgenSpec *
idgen_named_spec(FunctionCallInfo fcinfo, const char *funcname)
{
	IdgenNamedCache *cache;

	idgen_registry_require(funcname);
	cache = idgen_named_cache(fcinfo, true);
	return &registry_slots[cache->slot].spec;
}

/*
 * The spec of the generator named by argument 0, for a function that needs
 * its definition only: from its slot, as idgen_named_spec(), or during
 * recovery from idgen_generator (idgen_registry_read_definition).  *name
 * is its name, for messages.
 */
static const IdgenSpec *
idgen_named_definition(FunctionCallInfo fcinfo, const char *funcname,
					   const char **name)
{
	IdgenNamedCache *cache;
	IdgenSpec  *spec;
	char	   *cname;

	idgen_registry_require(funcname);
	if (likely(!RecoveryInProgress()))
	{
		cache = idgen_named_cache(fcinfo, true);
		*name = registry_slots[cache->slot].name;
		return &registry_slots[cache->slot].spec;
	}
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("generator name must not be null")));
	cname = text_to_cstring(PG_GETARG_TEXT_PP(0));
	*name = cname;
	if (strlen(cname) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("generator \"%s\" does not exist", cname)));
	spec = palloc(sizeof(IdgenSpec));
	idgen_registry_read_definition(cname, spec);
	return spec;
}

/* 22023 unless the spec has a time field. */
static void
idgen_require_time_field(const IdgenSpec *spec, const char *name)
{
	if (spec->time_field < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("generator \"%s\" has no time field", name),
				 errdetail("It is a counter generator.")));
}

/* The spec of a named generator with a time field (22023 otherwise). */
static const IdgenSpec *
idgen_named_time_spec(FunctionCallInfo fcinfo, const char *funcname)
{
	const IdgenSpec *spec = idgen_named_spec(fcinfo, funcname);

	idgen_require_time_field(spec,
							 ((IdgenNamedCache *) fcinfo->flinfo->fn_extra)->layout.name);
	return spec;
}

static void
idgen_check_id(int64 id)
{
	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ID must not be negative"),
				 errdetail("No layout produces a negative ID.")));
}

PG_FUNCTION_INFO_V1(idgen_time);
Datum
idgen_time(PG_FUNCTION_ARGS)
{
	const char *name;
	const IdgenSpec *spec = idgen_named_definition(fcinfo, "idgen_time", &name);
	int64		id = PG_GETARG_INT64(1);

	idgen_require_time_field(spec, name);
	idgen_check_id(id);
	PG_RETURN_TIMESTAMPTZ(idgen_unix_ms_to_timestamptz(idgen_spec_tick_unix_ms(spec,
																			   idgen_spec_field(spec, spec->time_field, id))));
}

PG_FUNCTION_INFO_V1(idgen_decode);
Datum
idgen_decode(PG_FUNCTION_ARGS)
{
	const char *name;
	const IdgenSpec *spec = idgen_named_definition(fcinfo, "idgen_decode", &name);

	PG_RETURN_DATUM(idgen_spec_decode_jsonb(spec, PG_GETARG_INT64(1)));
}

/* A field value for a builder: 22003 outside 0 .. 2^bits - 1. */
static uint64
idgen_field_value(const IdgenField *f, int64 value)
{
	if (value < 0 || (f->bits < 63 && value >= (INT64CONST(1) << f->bits)))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("%s " INT64_FORMAT " is out of range", f->name, value),
				 errdetail("The field \"%s\" holds 0 to " INT64_FORMAT ".", f->name,
						   (INT64CONST(1) << f->bits) - 1)));
	return ((uint64) value) << f->shift;
}

/* The tick of a time, checked against the layout's range (22003). */
static int64
idgen_spec_tick(const IdgenSpec *spec, TimestampTz ts)
{
	int64		tick;

	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp is out of range for the layout")));
	tick = idgen_floor_div(idgen_timestamptz_to_unix_ms(ts) - spec->epoch_unix_ms,
						   spec->unit_ms);
	if (tick < 0 || tick >= spec->tick_limit)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp is out of range for the layout"),
				 errdetail("Its time field counts %d ms ticks from %s, " INT64_FORMAT " of them.",
						   spec->unit_ms,
						   timestamptz_to_str(idgen_unix_ms_to_timestamptz(spec->epoch_unix_ms)),
						   spec->tick_limit)));
	return tick;
}

/*
 * idgen_from_time(name, ts [, shard]): the smallest ID of the tick of ts
 * (and shard), for range scans.  Fields more significant than time keep
 * this server's values (node, constants), the shard field the argument,
 * the rest are 0.
 */
PG_FUNCTION_INFO_V1(idgen_from_time);
Datum
idgen_from_time(PG_FUNCTION_ARGS)
{
	const IdgenSpec *spec = idgen_named_time_spec(fcinfo, "idgen_from_time");
	IdgenNamedCache *cache = fcinfo->flinfo->fn_extra;
	int64		tick = idgen_spec_tick(spec, PG_GETARG_TIMESTAMPTZ(1));
	int32		shard = idgen_named_shard(fcinfo, cache, 2, PG_NARGS() > 2);
	uint64		id = (uint64) tick << spec->fields[spec->time_field].shift;

	for (int f = 0; f < spec->time_field; f++)
	{
		const IdgenField *field = &spec->fields[f];

		id |= (uint64) cache->fixed &
			(((UINT64CONST(1) << field->bits) - 1) << field->shift);
	}
	if (spec->shard_field >= 0)
		id |= (uint64) shard << spec->fields[spec->shard_field].shift;
	PG_RETURN_INT64((int64) id);
}

/*
 * idgen_from_parts(name, parts jsonb): compose an ID from its fields by
 * name.  "time" (a timestamptz as text) is required; other fields default
 * to 0, constants to their constant.  Unknown keys are 22023, values out
 * of range 22003.
 */
PG_FUNCTION_INFO_V1(idgen_from_parts);
Datum
idgen_from_parts(PG_FUNCTION_ARGS)
{
	const char *name;
	const IdgenSpec *spec = idgen_named_definition(fcinfo, "idgen_from_parts", &name);
	Jsonb	   *parts = PG_GETARG_JSONB_P(1);
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	uint64		id = 0;
	bool		have_time = false;

	if (!JB_ROOT_IS_OBJECT(parts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("parts must be a JSON object of fields")));

	for (int f = 0; f < spec->nfields; f++)
		if (spec->fields[f].kind == IDGEN_FIELD_CONST)
			id |= (uint64) spec->fields[f].constant << spec->fields[f].shift;

	it = JsonbIteratorInit(&parts->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		char	   *key;
		int			f;
		const IdgenField *field = NULL;

		if (tok != WJB_KEY)
			continue;
		key = pnstrdup(v.val.string.val, v.val.string.len);
		for (f = 0; f < spec->nfields; f++)
			if (strcmp(spec->fields[f].name, key) == 0)
			{
				field = &spec->fields[f];
				break;
			}
		if (field == NULL && strcmp(key, "stripe") == 0 && spec->time_field < 0)
		{
			/* decode's extra key: implied by seq, so skipped here */
			(void) JsonbIteratorNext(&it, &v, true);
			continue;
		}
		if (field == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("generator has no field \"%s\"", key),
					 errhint("Its layout is \"%s\".", idgen_spec_text(spec))));
		tok = JsonbIteratorNext(&it, &v, true);
		if (field->kind == IDGEN_FIELD_TIME)
		{
			char	   *str;

			if (v.type != jbvString)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("field \"time\" must be a timestamp string")));
			str = pnstrdup(v.val.string.val, v.val.string.len);
			id |= (uint64) idgen_spec_tick(spec,
										   DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
																				   CStringGetDatum(str),
																				   ObjectIdGetDatum(InvalidOid),
																				   Int32GetDatum(-1))))
				<< field->shift;
			have_time = true;
		}
		else
		{
			int64		value;

			if (v.type != jbvNumeric)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("field \"%s\" must be a number", field->name)));
			value = DatumGetInt64(DirectFunctionCall1(numeric_int8,
													  NumericGetDatum(v.val.numeric)));
			if (field->kind == IDGEN_FIELD_CONST)
			{
				if (value != field->constant)
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("field \"%s\" is the constant " INT64_FORMAT,
									field->name, field->constant)));
				continue;
			}
			id |= idgen_field_value(field, value);
		}
	}
	if (!have_time && spec->time_field >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("parts need a \"time\" field")));
	PG_RETURN_INT64((int64) id);
}

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
	SubTransactionId subid;
} IdgenPendingState;

static List *pending_states = NIL;
static bool pending_callback_registered = false;
static bool load_at_commit = false;	/* grants changed: the keeper loads */

static void
idgen_registry_xact_callback(XactEvent event, void *arg)
{
	ListCell   *lc;

	/* counter values taken beyond the reservation must be durable first */
	if (event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PARALLEL_PRE_COMMIT ||
		event == XACT_EVENT_PRE_PREPARE)
	{
		counter_committing = true;
		if (counter_pending_n > 0)
			idgen_counter_pending_wait(true);
	}
	/* a rollback keeps what is pending, but doomed (see IdgenCounterPending) */
	if (event == XACT_EVENT_ABORT && ActivePortal == NULL && counter_pending_n > 0)
		idgen_counter_pending_forget_doomed();
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
		counter_committing = false;

	if (event == XACT_EVENT_COMMIT)
	{
		foreach(lc, pending_states)
		{
			IdgenPendingState *p = lfirst(lc);
			int			i;

			if (!p->apply)
				continue;
			i = idgen_registry_find(p->name);
			if (i >= 0 &&
				pg_atomic_read_u32(&registry_slots[i].state) != IDGEN_SLOT_REFUSED)
			{
				registry_slots[i].state_changed_ms = idgen_clock_monotonic_ms();
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

		pg_atomic_fetch_add_u64(&registry->changes, 1);
		pg_atomic_fetch_add_u64(&registry->load_requests, 1);
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
static void
idgen_registry_require_committed(const char *name)
{
	ListCell   *lc;
	IdgenPendingState *last = NULL;

	/* the last of the transaction's creations and drops of the name counts */
	foreach(lc, pending_states)
	{
		IdgenPendingState *p = lfirst(lc);

		if (strcmp(p->name, name) == 0)
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
idgen_registry_at_commit(const char *name, IdgenSlotState state, bool apply)
{
	IdgenPendingState *p;
	MemoryContext oldcxt;

	if (registry == NULL)
		return;
	idgen_registry_register_callbacks();
	/* the list outlives the caller's contexts (SPI's among them) */
	oldcxt = MemoryContextSwitchTo(TopMemoryContext);
	p = palloc(sizeof(IdgenPendingState));
	strlcpy(p->name, name, sizeof(p->name));
	p->state = state;
	p->apply = apply;
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

static void
idgen_check_generator_name(const char *name)
{
	int			len = strlen(name);

	if (len == 0 || len >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid generator name \"%s\"", name),
				 errdetail("A name has 1 to %d characters.", NAMEDATALEN - 1)));
	for (int i = 0; i < len; i++)
		if (!(islower((unsigned char) name[i]) || name[i] == '_' ||
			  (i > 0 && isdigit((unsigned char) name[i]))))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid generator name \"%s\"", name),
					 errdetail("A name is a lower-case identifier: letters, digits and underscores.")));
}

/* A fixed generator's layout as a spec, under idgen.epoch and 1 ms. */
static void
idgen_fixed_spec(const char *layout, IdgenSpec *spec)
{
	bool		epoch_given;
	bool		unit_given;

	idgen_parse_layout(layout, spec, &epoch_given, &unit_given);
	idgen_spec_set_clock(spec, idgen_epoch_unix_ms, 1);
}

/*
 * Could definitions a and b, both on this server, issue the same ID?  For
 * a counter b that has stopped for good (dropped), b_below bounds the seq
 * values it handed out; PG_UINT64_MAX otherwise.
 */
static bool
idgen_specs_collide(const IdgenSpec *a, const IdgenSpec *b, uint64 b_below)
{
	if (a->time_field >= 0 && b->time_field >= 0)
		return idgen_spec_time_overlap(a, b, idgen_current_node_id());
	if (a->time_field < 0 && b->time_field < 0)
		return idgen_spec_counter_overlap(a, b, idgen_current_node_id(), b_below);
	return false;
}

/*
 * The bound of the seq values a dropped counter handed out on this
 * server, from its reservation (local values below it may have been
 * handed out), or PG_UINT64_MAX while it may still hand out more: its
 * slot still runs (a drop not yet committed), or its reservation is not
 * known.
 */
static uint64
idgen_dropped_counter_below(const IdgenSpec *spec, const char *name,
							bool reserved_known, uint64 reserved)
{
	int			i = registry != NULL ? idgen_registry_find(name) : -1;

	if (spec->time_field >= 0)
		return PG_UINT64_MAX;
	if (i >= 0)
	{
		IdgenNamedSlot *slot = &registry_slots[i];

		if (pg_atomic_read_u32(&slot->state) != IDGEN_SLOT_DROPPED)
			return PG_UINT64_MAX;

		/*
		 * Switched off under its lock, so every value it handed out was
		 * within the reservation of that moment, which we read after, and
		 * below its next value, which a floor (a lease record, the data
		 * directory's file) may have raised above its row.
		 */
		for (int s = 0; s < idgen_slot_ngenerators(i); s++)
		{
			IdgenGenerator *gen = idgen_slot_generator(i, s);
			bool		owned;
			uint64		next;

			SpinLockAcquire(&gen->mutex);
			owned = gen->owned;
			next = gen->last;
			SpinLockRelease(&gen->mutex);
			if (owned)
				return PG_UINT64_MAX;
			reserved = Max(reserved, next);
		}
		if (slot->state_loaded)
		{
			reserved = Max(reserved, pg_atomic_read_u64(&slot->counter_reserved));
			reserved_known = true;
		}
	}
	if (!reserved_known || reserved >= (uint64) spec->tick_limit)
		return PG_UINT64_MAX;
	return idgen_counter_value(&spec->counter, reserved);
}

/* the columns idgen_row_spec() reads, in this order */
#define IDGEN_ROW_SPEC_COLUMNS \
	"name, layout, epoch, unit_ms, prefetch, refill, stripes, owned, segment, start"

/*
 * The definition in an SPI row of IDGEN_ROW_SPEC_COLUMNS (and possibly
 * more columns after them).  False, after a LOG line, for a row that no
 * longer parses.
 */
static bool
idgen_row_spec(HeapTuple tup, TupleDesc desc, IdgenSpec *spec)
{
	bool		isnull;
	IdgenRegistryRow row;
	IdgenCounterOptions *options = &row.options;
	Datum		d;

	row.name = SPI_getvalue(tup, desc, 1);
	row.layout_text = SPI_getvalue(tup, desc, 2);
	row.epoch = idgen_timestamptz_to_unix_ms(DatumGetTimestampTz(SPI_getbinval(tup, desc, 3, &isnull)));
	row.unit = DatumGetInt32(SPI_getbinval(tup, desc, 4, &isnull));
	d = SPI_getbinval(tup, desc, 5, &isnull);
	options->prefetch = isnull ? 0 : DatumGetInt32(d);
	d = SPI_getbinval(tup, desc, 6, &isnull);
	options->refill = isnull ? 0 : DatumGetInt32(d);
	d = SPI_getbinval(tup, desc, 7, &isnull);
	options->stripes = isnull ? 0 : DatumGetInt32(d);
	options->owned = SPI_getvalue(tup, desc, 8);
	d = SPI_getbinval(tup, desc, 9, &isnull);
	options->segment = isnull ? 0 : DatumGetInt64(d);
	d = SPI_getbinval(tup, desc, 10, &isnull);
	options->start = isnull ? 0 : DatumGetInt64(d);
	return idgen_registry_row_spec(&row, spec);
}

/*
 * Refuse a definition that could issue an ID that snowflake_id(),
 * instagram_id() or another named generator, dropped or not, may issue on
 * this server (42710).  Time layouts are compared by what their bits mean
 * (idgen_spec_time_overlap), counters by their signature.
 *
 * Every definition that can commit before ours is seen: the caller holds
 * idgen_generator locked against other creations until its transaction
 * ends, and the rows are read with a snapshot taken after that lock (the
 * statement's own snapshot, or a repeatable-read transaction's, may
 * predate a creation that committed while we waited).  Caller is
 * connected to SPI.
 */
/*
 * The first of snowflake_id(), instagram_id() and the first nslots slots
 * (other than the name's own) that could issue an ID spec may issue, as
 * a phrase for a message; NULL if none.  Active and dropped slots count,
 * also those whose rows went with a dropped extension: their IDs exist.
 * A dropped counter counts up to its reservation.  When the keeper
 * installs definitions (at_install), a dropped counter's reservation is
 * not loaded yet: it is left out, as its creation and any re-creation
 * compared it under the creation lock.
 */
static const char *
idgen_collides_with(const char *name, const IdgenSpec *spec, bool at_install,
					uint32 nslots)
{
	IdgenSpec  *fixed = palloc(sizeof(IdgenSpec));

	idgen_fixed_spec("time:41 node:10 seq:12", fixed);
	if (idgen_specs_collide(spec, fixed, PG_UINT64_MAX))
		return "snowflake_id()";
	idgen_fixed_spec("time:41 shard:13 seq:10", fixed);
	if (idgen_specs_collide(spec, fixed, PG_UINT64_MAX))
		return "instagram_id()";
	for (uint32 i = 0; i < nslots; i++)
	{
		IdgenNamedSlot *slot = &registry_slots[i];
		uint32		state = pg_atomic_read_u32(&slot->state);
		uint64		below = PG_UINT64_MAX;

		if (strcmp(slot->name, name) == 0 || state == IDGEN_SLOT_REFUSED)
			continue;
		if (state == IDGEN_SLOT_DROPPED && slot->spec.time_field < 0)
		{
			if (at_install && !slot->state_loaded)
				continue;
			below = idgen_dropped_counter_below(&slot->spec, slot->name, false, 0);
		}
		if (idgen_specs_collide(spec, &slot->spec, below))
			return psprintf("generator \"%s\"", slot->name);
	}
	return NULL;
}

static void
idgen_refuse_same_ids(const char *name, const IdgenSpec *spec, const char *table)
{
	const char *other;
	SPIPlanPtr	plan;

	other = idgen_collides_with(name, spec, false,
								registry != NULL ? pg_atomic_read_u32(&registry->nslots) : 0);

	/* with each dropped counter's durable reservation */
	plan = SPI_prepare(psprintf("SELECT " IDGEN_ROW_SPEC_COLUMNS ", dropped IS NOT NULL,"
								" (SELECT s.reserved FROM %s_counter_state s"
								" WHERE s.name OPERATOR(pg_catalog.=) g.name)"
								" FROM %s g",
								idgen_registry_schema_prefix(), table),
					   0, NULL);
	if (plan == NULL ||
		SPI_execute_snapshot(plan, NULL, NULL, GetLatestSnapshot(),
							 InvalidSnapshot, false, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read idgen_generator");
	for (uint64 r = 0; r < SPI_processed && other == NULL; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		char	   *rname = SPI_getvalue(tup, SPI_tuptable->tupdesc, 1);
		IdgenSpec  *rspec = palloc(sizeof(IdgenSpec));

		bool		isnull;
		bool		dropped;
		Datum		reserved;
		uint64		below = PG_UINT64_MAX;

		if (strcmp(rname, name) == 0 ||
			!idgen_row_spec(tup, SPI_tuptable->tupdesc, rspec))
			continue;
		dropped = DatumGetBool(SPI_getbinval(tup, SPI_tuptable->tupdesc, 11, &isnull));
		reserved = SPI_getbinval(tup, SPI_tuptable->tupdesc, 12, &isnull);
		if (dropped)
			below = idgen_dropped_counter_below(rspec, rname, !isnull,
												isnull ? 0 : (uint64) DatumGetInt64(reserved));
		if (idgen_specs_collide(spec, rspec, below))
			other = psprintf("generator \"%s\"", rname);
	}
	if (other != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("generator \"%s\" would issue the same IDs as %s", name, other),
				 errdetail("Both count the same ticks (or values) in the same bits, and no bit that both fix on this server tells their IDs apart."),
				 spec->time_field < 0 ?
				 errhint("Use %s itself, or change the layout or a constant field.  A counter that replaces a dropped one can begin at its \"counter_bound\" (\"start\").", other) :
				 errhint("Use %s itself, or change the epoch, the layout or a constant field.", other)));
}

/*
 * idgen_create_generator(name, layout, epoch DEFAULT NULL, unit DEFAULT
 * NULL): define a named generator.  A preset brings its epoch and unit
 * unless given; fields take idgen.epoch and 1 ms.  Superuser, in
 * idgen.database.
 */
PG_FUNCTION_INFO_V1(idgen_create_generator);
Datum
idgen_create_generator(PG_FUNCTION_ARGS)
{
	char	   *name;
	char	   *layout_text;
	IdgenSpec	spec;
	bool		epoch_given;
	bool		unit_given;
	int64		epoch;
	int32		unit;
	bool		fits;
	char	   *table;
	char	   *canonical;
	Oid			argtypes[10] = {TEXTOID, TEXTOID, TIMESTAMPTZOID, INT4OID,
	INT4OID, INT4OID, INT4OID, TEXTOID, INT8OID, INT8OID};
	Datum		values[10];
	char		nulls[11] = "          ";
	int			ret;
	int32		prefetch = PG_ARGISNULL(4) ? 0 : PG_GETARG_INT32(4);
	int32		refill = PG_ARGISNULL(5) ? 0 : PG_GETARG_INT32(5);
	int32		stripes = PG_ARGISNULL(6) ? 0 : PG_GETARG_INT32(6);
	char	   *owned = PG_ARGISNULL(7) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(7));
	int64		segment = PG_ARGISNULL(8) ? 0 : PG_GETARG_INT64(8);
	int64		start = PG_ARGISNULL(9) ? 0 : PG_GETARG_INT64(9);

	idgen_require_superuser("idgen_create_generator");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name and layout must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	layout_text = text_to_cstring(PG_GETARG_TEXT_PP(1));
	idgen_require_control_database("idgen_create_generator");
	idgen_refuse_in_recovery("idgen_create_generator");
	idgen_check_generator_name(name);

	idgen_parse_layout(layout_text, &spec, &epoch_given, &unit_given);
	epoch = epoch_given ? spec.epoch_unix_ms : idgen_epoch_unix_ms;
	unit = unit_given ? spec.unit_ms : 1;
	if (!PG_ARGISNULL(2))
		epoch = idgen_epoch_to_unix_ms(PG_GETARG_TIMESTAMPTZ(2));
	if (!PG_ARGISNULL(3))
		unit = idgen_interval_to_unit_ms(PG_GETARG_INTERVAL_P(3));
	idgen_spec_set_clock(&spec, epoch, unit);
	if ((!PG_ARGISNULL(4) && prefetch == 0) || (!PG_ARGISNULL(6) && stripes == 0) ||
		(!PG_ARGISNULL(8) && segment == 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid counter options"),
				 errdetail("\"prefetch\", \"stripes\" and \"segment\" are at least 1.")));
	idgen_parse_counter_options(&spec, prefetch, refill, stripes, owned, segment,
								start);

	if (epoch > idgen_clock_unix_ms())
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("the epoch of generator \"%s\" is in the future", name),
				 errdetail("IDs count ticks since the epoch.")));
	if (spec.time_field >= 0 &&
		idgen_floor_div(idgen_clock_unix_ms() - epoch, unit) >= spec.tick_limit)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("the time field of generator \"%s\" has run out already", name),
				 errdetail("%d bits of %d ms ticks since the epoch end before now.",
						   spec.fields[spec.time_field].bits, unit)));
	if (spec.node_bits > 0)
	{
		int32		node_id = idgen_current_node_id();

		if (node_id < 0)
			idgen_report_no_node("idgen_create_generator");
		(void) idgen_spec_node_value(&spec, node_id, &fits);
		if (!fits)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("\"idgen.node_id\" (%d) does not fit the layout's %d node bits",
							node_id, spec.node_bits),
					 errhint("Widen the node fields, or give this server a smaller node id.")));
	}

	canonical = idgen_spec_text(&spec);
	table = idgen_registry_table();

	/*
	 * One creation at a time, to the end of its transaction: the check for
	 * definitions that would issue the same IDs must see every one that can
	 * commit (idgen_refuse_same_ids).  The lock is self-conflicting but
	 * lets readers, the keeper's loads included, go on.
	 */
	LockRelationOid(idgen_registry_relid(), ShareRowExclusiveLock);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/* the row as it would be stored */
	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(canonical);
	values[2] = TimestampTzGetDatum(idgen_unix_ms_to_timestamptz(epoch));
	values[3] = Int32GetDatum(unit);
	if (spec.time_field < 0)
	{
		values[4] = Int32GetDatum(spec.counter.prefetch);
		values[5] = Int32GetDatum(spec.counter.refill);
		values[6] = Int32GetDatum(spec.counter.stripes);
		values[7] = CStringGetTextDatum(idgen_counter_options_text(&spec));
		values[8] = Int64GetDatum(spec.counter.segment);
		values[9] = Int64GetDatum((int64) spec.counter.start);
	}
	else
		memset(nulls + 4, 'n', 6);

	/* a name is never reused for another definition; re-creating un-drops */
	ret = SPI_execute_with_args(psprintf("SELECT " IDGEN_ROW_SPEC_COLUMNS ", dropped IS NOT NULL"
										 " FROM %s WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
										 table),
								1, argtypes, values, NULL, false, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not read idgen_generator");
	if (SPI_processed > 0)
	{
		bool		isnull;
		IdgenSpec  *had = palloc(sizeof(IdgenSpec));
		bool		same = idgen_row_spec(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, had) &&
			idgen_spec_same(had, &spec);
		bool		dropped = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 11, &isnull));

		if (!same)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("generator \"%s\" was defined before with another layout, epoch, unit or options", name),
					 errdetail("A name is never reused for another definition, dropped or not: its IDs may still exist."),
					 errhint("Choose another name.")));
		if (!dropped)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("generator \"%s\" already exists", name)));
		/* others created since it was dropped may begin above its values */
		idgen_refuse_same_ids(name, &spec, table);
		if (SPI_execute_with_args(psprintf("UPDATE %s SET dropped = NULL WHERE name OPERATOR(pg_catalog.=) $1", table),
								  1, argtypes, values, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not update idgen_generator");
		idgen_registry_at_commit(name, IDGEN_SLOT_ACTIVE, true);
	}
	else
	{
		int			slot = registry != NULL ? idgen_registry_find(name) : -1;

		/*
		 * No row, but this server still runs the name: its row went with a
		 * dropped extension.  IDs of that definition may exist.
		 */
		if (slot >= 0 && !idgen_spec_same(&registry_slots[slot].spec, &spec))
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("generator \"%s\" was defined before with another layout, epoch, unit or options", name),
					 errdetail("This server still runs that definition, whose row was dropped with the extension since; a name is never reused for another definition."),
					 errhint("Choose another name.")));
		idgen_refuse_same_ids(name, &spec, table);
		if (SPI_execute_with_args(psprintf("INSERT INTO %s (name, layout, epoch, unit_ms, prefetch, refill, stripes, owned, segment, start) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)", table),
								  10, argtypes, values, nulls, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not insert into idgen_generator");
		/*
		 * A slot of the name left from before the extension was re-created
		 * runs this very definition (checked above): switch it on at
		 * commit, as for a re-creation.  Otherwise only noted, for
		 * idgen_registry_require_committed(); the keeper installs it.
		 */
		idgen_registry_at_commit(name, IDGEN_SLOT_ACTIVE, slot >= 0);

		/*
		 * A counter starts with its durable state, at its first local
		 * value (0, or the first at or above "start"): a counter whose row
		 * is missing later has lost it, and is refused rather than started
		 * again at 0.
		 */
		values[1] = Int64GetDatum((int64) spec.counter.first);
		argtypes[1] = INT8OID;
		if (spec.time_field < 0 &&
			SPI_execute_with_args(psprintf("INSERT INTO %s_counter_state (name, reserved) SELECT $1, $2 WHERE NOT EXISTS (SELECT FROM %s_counter_state WHERE name OPERATOR(pg_catalog.=) $1)",
										   idgen_registry_schema_prefix(), idgen_registry_schema_prefix()),
								  2, argtypes, values, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not insert into idgen_counter_state");
	}
	SPI_finish();
	PG_RETURN_VOID();
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
	idgen_registry_at_commit(name, IDGEN_SLOT_DROPPED, true);
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
 * idgen_generators_info(): every loaded named generator, its definition
 * and live state, for the view idgen_generators.  Generators are read
 * without their locks (a monitoring snapshot, as in idgen_status()).
 */
PG_FUNCTION_INFO_V1(idgen_generators_info);
Datum
idgen_generators_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	uint32		n;
	int64		now_unix = idgen_clock_unix_ms();

	InitMaterializedSRF(fcinfo, 0);
	if (idgen_shared == NULL)
		return (Datum) 0;
	n = pg_atomic_read_u32(&registry->nslots);
	pg_read_barrier();
	for (uint32 i = 0; i < n; i++)
	{
		IdgenNamedSlot *slot = &registry_slots[i];
		const IdgenSpec *spec = &slot->spec;
		Datum		values[19];
		bool		nulls[19] = {0};
		uint32		state = pg_atomic_read_u32(&slot->state);
		uint64		issued = 0;
		uint64		borrowed = 0;
		uint64		waits = 0;
		uint64		last = 0;
		int			seq_bits = spec->seq_field < 0 ? 0 : spec->fields[spec->seq_field].bits;
		char		message[sizeof(slot->message)];

		for (int s = 0; s < idgen_slot_ngenerators(i); s++)
		{
			volatile IdgenGenerator *gen = idgen_slot_generator(i, s);

			issued += gen->issued;
			borrowed += gen->borrowed;
			waits += gen->waits;
			if (gen->issued > 0)
				last = Max(last, gen->last);
		}
		SpinLockAcquire(&registry->mutex);
		strlcpy(message, slot->message, sizeof(message));
		SpinLockRelease(&registry->mutex);

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

			/* the ID's time; the lead is its moment's (generator.c) */
			idgen_slot_layout(i, &layout);
			values[9] = TimestampTzGetDatum(idgen_unix_ms_to_timestamptz(last_unix));
			values[10] = Int64GetDatum(Max(idgen_position_unix_ms(&layout, last) - now_unix, 0));
		}
		else
			nulls[9] = nulls[10] = true;
		values[11] = Int32GetDatum(idgen_slot_ngenerators(i));
		if (spec->time_field < 0)
		{
			/* counters: "last" is the next local value, issued counts them */
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
			 * reservation: where a counter that replaces this one begins
			 */
			{
				uint64		reserved = Max(pg_atomic_read_u64(&slot->counter_reserved), last);

				if (reserved < (uint64) spec->tick_limit)
					values[18] = Int64GetDatum((int64) idgen_counter_value(&spec->counter, reserved));
				else
					values[18] = Int64GetDatum((int64) (UINT64CONST(1) << spec->fields[spec->seq_field].bits));
			}
		}
		else
			for (int c = 12; c < 19; c++)
				nulls[c] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
