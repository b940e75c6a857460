/*-------------------------------------------------------------------------
 *
 * slots.c
 *	  Named generators' slots in shared memory.
 *
 * Shared memory: the IdgenRegistry header, then idgen.max_generators
 * padded generators, then the shard pool (idgen.max_generator_shards),
 * then the slots' metadata.  Only the keeper writes a slot (registry.c);
 * it fills one completely before it publishes the new count with a write
 * barrier, so the readers here need no lock.
 *
 * IDENTIFICATION
 *	  src/slots.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/shmem.h"

#include "idgen.h"
#include "registry.h"

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
	layout->offset_ms = spec->epoch_unix_ms - idgen_epoch_unix_ms;
	layout->unit_ms = spec->unit_ms;
	layout->unit_inverse = 1.0 / spec->unit_ms;
}
