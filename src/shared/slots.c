/*-------------------------------------------------------------------------
 *
 * shared/slots.c
 *	  Named generators' slots in shared memory.
 *
 * Shared memory: the IdgenRegistry header, then idgen.max_generators
 * padded generators, then the shard pool (idgen.max_generator_shards),
 * then the slots' metadata.  The keeper fills a slot (keeper/load.c)
 * completely before it publishes the new count with a write barrier, so
 * finding one by name takes no lock; a slot's state is an atomic, which
 * the keeper and a committing drop (backend/definitions.c) set; its message is
 * read under IdgenRegistry.mutex, and a generator's position under the
 * generator's spinlock.
 *
 * Also what the slots tell every caller: why one cannot issue
 * (idgen_report_slot), and whether a definition could issue an ID that a
 * fixed generator or a slot, dropped or not, may issue on this server
 * (idgen_collides_with): asked by idgen_create_generator (backend/definitions.c),
 * by the keeper before it installs a definition (keeper/load.c), and again
 * for the counters a load installed once the dropped counters' states are
 * loaded (keeper/counters.c).
 *
 * IDENTIFICATION
 *	  src/shared/slots.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/shmem.h"
#include "storage/spin.h"

#include "idgen.h"
#include "shared/slots.h"

typedef union IdgenRegistryPadded
{
	IdgenRegistry registry;
	char		pad[PG_CACHE_LINE_SIZE];
} IdgenRegistryPadded;

IdgenRegistry *idgen_registry_shm = NULL;
IdgenGeneratorPadded *idgen_registry_gens = NULL;
static IdgenGeneratorPadded *registry_pool = NULL;
IdgenNamedSlot *idgen_registry_slots = NULL;

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

/*
 * A slot by name, or -1: the newest of the name, which a re-creation with
 * another definition adds after the one it retires.
 */
int
idgen_registry_find(const char *name)
{
	uint32		n = pg_atomic_read_u32(&idgen_registry_shm->nslots);

	pg_read_barrier();
	for (uint32 i = n; i-- > 0;)
		if (strcmp(idgen_registry_slots[i].name, name) == 0)
			return (int) i;
	return -1;
}

/* The engine's view of a slot's layout. */
void
idgen_slot_layout(int i, IdgenLayout *layout)
{
	idgen_spec_layout(&idgen_registry_slots[i].spec, idgen_registry_slots[i].name,
					  "idgen_next", layout);
}

/* Raise the error of a slot that is switched off. */
void
idgen_report_slot(int i)
{
	IdgenNamedSlot *slot = &idgen_registry_slots[i];
	char		message[sizeof(slot->message)];

	if (pg_atomic_read_u32(&slot->state) == IDGEN_SLOT_DROPPED)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("generator \"%s\" does not exist", slot->name),
				 errdetail("It was dropped.")));
	if (slot->parked && pg_atomic_read_u32(&slot->state) == IDGEN_SLOT_ACTIVE &&
		pg_atomic_read_u64(&slot->restart_at) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_IDGEN_RETRY),
				 errmsg("counter generator \"%s\" is being restarted", slot->name),
				 errdetail("idgen_restart_generator() committed; the keeper records the new position, then the counter issues from it."),
				 errhint("Retry in a moment.  If this lasts, idgen_status() tells what the keeper is doing.")));
	if (slot->parked && pg_atomic_read_u32(&slot->state) == IDGEN_SLOT_ACTIVE)
		ereport(ERROR,
				(errcode(ERRCODE_IDGEN_RETRY),
				 errmsg("counter generator \"%s\" is not available while the idgen keeper stops or restarts",
						slot->name),
				 errdetail("The keeper recorded where the counter stopped; it resumes there once the keeper runs again."),
				 errhint("Retry in a moment.")));
	SpinLockAcquire(&idgen_registry_shm->mutex);
	strlcpy(message, slot->message, sizeof(message));
	SpinLockRelease(&idgen_registry_shm->mutex);
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("generator \"%s\" cannot issue IDs on this server", slot->name),
			 errdetail("%s.", message),
			 errhint("A definition never changes once IDs were issued under it: drop it and create one under a new name.")));
}

/* ---- could two definitions issue the same ID? ---- */

/*
 * A built-in generator's spec (idgen_builtin_init), under idgen.epoch and
 * 1 ms, in the ID space named after its function: the bits it issues, not
 * a copy of them.
 */
static void
idgen_builtin_in_space(const IdgenBuiltin *builtin, const char *space,
					   IdgenSpec *spec)
{
	*spec = builtin->spec;
	idgen_spec_set_clock(spec, idgen_epoch_unix_ms, 1);
	strlcpy(spec->space, space, sizeof(spec->space));
}

/*
 * Could definitions a and b, both on this server under node id node_id
 * (idgen_current_node_id()), issue the same ID in one ID space?  IDs are
 * unique within a space: a generator of its own space (the default, as a
 * sequence is its own number line) shares it with no other, and two in
 * different spaces never collide, whatever their bits.  For a counter b
 * that has stopped for good (dropped), b_below bounds the seq values it
 * handed out; PG_UINT64_MAX otherwise.
 */
bool
idgen_specs_collide(const IdgenSpec *a, const IdgenSpec *b, int32 node_id,
					uint64 b_below)
{
	if (a->space[0] == '\0' || strcmp(a->space, b->space) != 0)
		return false;
	if (a->time_field >= 0 && b->time_field >= 0)
		return idgen_spec_time_overlap(a, b, node_id);
	if (a->time_field < 0 && b->time_field < 0)
		return idgen_spec_counter_overlap(a, b, node_id, b_below);
	return false;
}

/*
 * The bound of the seq values a dropped counter handed out on this
 * server, from its reservation (local values below it may have been
 * handed out), or PG_UINT64_MAX while it may still hand out more: its
 * slot still runs (a drop not yet committed), or its reservation is not
 * known.
 */
uint64
idgen_dropped_counter_below(const IdgenSpec *spec, const char *name,
							bool reserved_known, uint64 reserved)
{
	return idgen_slot_dropped_below(idgen_registry_shm != NULL ? idgen_registry_find(name) : -1,
									spec, reserved_known, reserved);
}

/* The same for slot i (-1: none), whose definition is spec. */
uint64
idgen_slot_dropped_below(int i, const IdgenSpec *spec, bool reserved_known,
						 uint64 reserved)
{
	if (spec->time_field >= 0)
		return PG_UINT64_MAX;
	if (i >= 0)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[i];

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
			next = gen->at.next;
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
	if (!reserved_known || reserved >= spec->counter.limit)
		return PG_UINT64_MAX;
	return idgen_counter_value(&spec->counter, reserved);
}

/*
 * The first of snowflake_id(), instagram_id() and the first nslots slots
 * (other than the name's own) in spec's shared ID space, if it has one
 * (idgen_specs_collide), that could issue an ID spec may issue under
 * node id node_id (the caller's idgen_current_node_id()), as
 * a phrase for a message; NULL if none.  Active and dropped slots count,
 * also those whose rows went with a dropped extension: their IDs exist.
 * A dropped counter counts up to its reservation.  When the keeper
 * installs definitions (at_install), a dropped counter's reservation is
 * not loaded yet: it is left out, as its creation and any re-creation
 * compared it under the creation lock.
 */
const char *
idgen_collides_with(const char *name, const IdgenSpec *spec, int32 node_id,
					bool at_install, uint32 nslots)
{
	IdgenSpec  *fixed = palloc(sizeof(IdgenSpec));

	if (spec->space[0] == '\0')
		return NULL;
	idgen_builtin_in_space(&idgen_builtin_snowflake, "snowflake_id", fixed);
	if (idgen_specs_collide(spec, fixed, node_id, PG_UINT64_MAX))
		return "snowflake_id()";
	idgen_builtin_in_space(&idgen_builtin_instagram, "instagram_id", fixed);
	if (idgen_specs_collide(spec, fixed, node_id, PG_UINT64_MAX))
		return "instagram_id()";
	for (uint32 i = 0; i < nslots; i++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[i];
		uint32		state = pg_atomic_read_u32(&slot->state);
		uint64		below = PG_UINT64_MAX;

		if (strcmp(slot->name, name) == 0 || state == IDGEN_SLOT_REFUSED)
			continue;
		if (state == IDGEN_SLOT_DROPPED && slot->spec.time_field < 0)
		{
			if (at_install && !slot->state_loaded)
				continue;
			below = idgen_slot_dropped_below(i, &slot->spec, false, 0);
		}
		if (idgen_specs_collide(spec, &slot->spec, node_id, below))
			return psprintf("generator \"%s\"", slot->name);
	}
	return NULL;
}

/* Do two layouts hold the node id in the same fields, bit for bit? */
static bool
idgen_node_fields_same(const IdgenSpec *a, const IdgenSpec *b)
{
	int			i = 0;
	int			j = 0;

	for (;;)
	{
		while (i < a->nfields && a->fields[i].kind != IDGEN_FIELD_NODE)
			i++;
		while (j < b->nfields && b->fields[j].kind != IDGEN_FIELD_NODE)
			j++;
		if (i == a->nfields || j == b->nfields)
			return i == a->nfields && j == b->nfields;
		if (a->fields[i].shift != b->fields[j].shift ||
			a->fields[i].bits != b->fields[j].bits)
			return false;
		i++;
		j++;
	}
}

/*
 * May a dropped generator's name be re-created with definition spec, after
 * definition had?  A name is one number line: it keeps its ID space and
 * its kind, a counter its seq width, and no ID of the new definition may
 * be one the old one issued here.  A counter resumes above every value the
 * old one handed out (had_below, in seq values: idgen_slot_dropped_below;
 * PG_UINT64_MAX if not known), whatever its stripes, segment or start:
 * spec's start is raised to it if need be, and *raised says so.  A time
 * generator must keep its time field (ticks of another epoch, unit or
 * position could land on the old IDs) and fix a bit that tells its IDs
 * from the old ones, under node id node_id (the caller's
 * idgen_current_node_id()).  NULL if it may; otherwise why not, as a
 * sentence.
 */
const char *
idgen_redefinition_problem(const IdgenSpec *had, IdgenSpec *spec,
						   uint64 had_below, int32 node_id, bool *raised)
{
	int			seq_bits;

	*raised = false;
	if (strcmp(had->space, spec->space) != 0)
		return had->space[0] == '\0' ?
			"It was a number line of its own, and a name keeps its ID space" :
			psprintf("It was in ID space \"%s\", and a name keeps its ID space", had->space);

	/*
	 * The other members of a shared space are compared with the stored
	 * definitions of its dropped members: one replaced would be forgotten
	 * (after a restart, nothing here holds its values).
	 */
	if (had->space[0] != '\0')
		return psprintf("It belongs to the shared ID space \"%s\", whose members are checked against each dropped member's definition as stored; create a successor under another name in that space",
						had->space);

	/*
	 * The node id must sit where it sat: moved, narrowed or replaced by a
	 * constant, it could compose another node's IDs, which this server
	 * cannot check, and a lease record would no longer follow it.
	 */
	if (!idgen_node_fields_same(had, spec))
		return "Its node fields lay in other bits, so the new IDs could be another server's";
	if ((had->time_field < 0) != (spec->time_field < 0))
		return had->time_field < 0 ?
			"It was a counter, and a name keeps its kind" :
			"It counted time, and a name keeps its kind";
	if (spec->time_field >= 0)
	{
		const IdgenField *th = &had->fields[had->time_field];
		const IdgenField *ts = &spec->fields[spec->time_field];

		if (th->shift != ts->shift || th->bits != ts->bits ||
			had->epoch_unix_ms != spec->epoch_unix_ms || had->unit_ms != spec->unit_ms)
			return "Its time field counted other ticks or lay in other bits, so the new IDs could be ones the old definition issued";
		if (idgen_spec_time_overlap(spec, had, node_id))
			return "No bit that both fix on this server tells the new IDs from the old ones";
		return NULL;
	}
	seq_bits = spec->fields[spec->seq_field].bits;
	if (had->fields[had->seq_field].bits != seq_bits)
		return psprintf("Its seq field had %d bits: the values it handed out cannot be counted in %d",
						had->fields[had->seq_field].bits, seq_bits);
	if (had_below == PG_UINT64_MAX)
		return "How far it got on this server is not known (its durable state is missing)";
	if (had_below > spec->counter.start)
	{
		if ((seq_bits < 63 && had_below >= (UINT64CONST(1) << seq_bits)) ||
			idgen_counter_local_bound(spec, had_below) >= spec->counter.limit)
			return "None of its values lies above those the old definition handed out on this server";
		spec->counter.start = had_below;
		spec->counter.first = idgen_counter_local_bound(spec, had_below);
		*raised = true;
	}
	if (idgen_spec_counter_overlap(spec, had, node_id, had_below))
		return "Its seq field lies in other bits, so the new IDs could be ones the old definition issued";
	return NULL;
}

/*
 * Why a counter is refused whose name a floor elsewhere (the lease record,
 * the data directory's file) counts in a seq field of another width.
 */
void
idgen_counter_untranslatable_format(const IdgenNamedSlot *slot, int seq_bits,
									char *buf, size_t len)
{
	int			bits = slot->spec.fields[slot->spec.seq_field].bits;

	if (seq_bits == IDGEN_SEQ_FORGOTTEN)
		snprintf(buf, len, "IDs were issued in ID space \"%s\" by a member no longer defined, with its seq field elsewhere, above whose values this one cannot be floored; give it that seq field, or another ID space",
				 slot->spec.space);
	else if (seq_bits == -1)
		snprintf(buf, len, "IDs were issued under the name with a floor recorded in another definition's own values (by a pre-release build of idgen 1.1), which cannot be carried over; create it under a new name");
	else if (seq_bits < -1)
		snprintf(buf, len, "IDs were issued under the name with its seq field at bit %d, above whose values one at bit %d cannot be floored; create it under a new name, or with its seq field at bit %d",
				 IDGEN_SEQ_MOVED_SHIFT(seq_bits), slot->spec.fields[slot->spec.seq_field].shift,
				 IDGEN_SEQ_MOVED_SHIFT(seq_bits));
	else
		snprintf(buf, len, "IDs were issued under the name with a %d-bit seq field, which a %d-bit one cannot be floored above; create it under a new name, or with a %d-bit seq field",
				 seq_bits, bits, seq_bits);
}

char *
idgen_counter_untranslatable_message(const IdgenNamedSlot *slot, int seq_bits)
{
	char	   *buf = palloc(sizeof(slot->message));

	idgen_counter_untranslatable_format(slot, seq_bits, buf, sizeof(slot->message));
	return buf;
}

void
idgen_slot_set_state(int i, IdgenSlotState state, const char *message)
{
	IdgenNamedSlot *slot = &idgen_registry_slots[i];
	int			n = idgen_slot_ngenerators(i);

	/*
	 * A counter whose recorded floor cannot be translated never runs: the
	 * keeper notes that under the same lock (idgen_counter_refuse_
	 * untranslatable), so a re-creation committing meanwhile sees it.
	 */
	SpinLockAcquire(&idgen_registry_shm->mutex);
	if (state == IDGEN_SLOT_ACTIVE && slot->untranslatable_bits != 0)
	{
		state = IDGEN_SLOT_REFUSED;
		idgen_counter_untranslatable_format(slot, slot->untranslatable_bits,
											slot->message, sizeof(slot->message));
	}
	else
		strlcpy(slot->message, message ? message : "", sizeof(slot->message));
	pg_atomic_write_u32(&slot->state, state);
	SpinLockRelease(&idgen_registry_shm->mutex);
	for (int s = 0; s < n; s++)
	{
		IdgenGenerator *gen = idgen_slot_generator(i, s);

		/* a counter parked by a stopping keeper stays off (keeper/counters.c) */
		SpinLockAcquire(&gen->mutex);
		gen->owned = (state == IDGEN_SLOT_ACTIVE) && !slot->parked;
		SpinLockRelease(&gen->mutex);
	}
	/* a caller waiting for a counter's reservation fails at once */
	ConditionVariableBroadcast(&idgen_shared->keeper.keeper.cv);
}
