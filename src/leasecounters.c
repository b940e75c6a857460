/*-------------------------------------------------------------------------
 *
 * leasecounters.c
 *	  The counters recorded under the node id: the keeper's copy.
 *
 * A counter generator that embeds the node id hands out values that
 * another server may hand out again once it holds the id.  So the node
 * id's reservation record in etcd carries, per counter, the bound of the
 * seq values handed out under it, with the seq field's width, whatever
 * the stripes or segment of the definition on either server (leasekeys.c
 * writes and reads it), and the
 * keeper keeps its own copy here: rebuilt from etcd whenever a keeper
 * takes over a lease, raised as counter reservations are planned
 * (counterstate.c), and read by the registry's load (registry.c) to floor
 * each counter above what earlier holders handed out.  Kept apart from the
 * lease protocol so that the registry below it can read it.
 *
 * IDENTIFICATION
 *	  src/leasecounters.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/pg_list.h"
#include "utils/memutils.h"

#include "idgen.h"

/*
 * The counters the node id's reservation record in etcd carries (see
 * IdgenLeaseCounter): the keeper's own copy, rebuilt from etcd whenever a
 * keeper takes over a lease (leasekeys.c), and read by the registry's load
 * to floor each counter above what earlier holders handed out.  Only the
 * keeper has it.  In TopMemoryContext.
 */
List	   *idgen_lease_counters = NIL;

/*
 * Raise the recorded bound of counter "name", counted in seq values of a
 * seq_bits-wide field (0: the old form, see IdgenLeaseCounter), to value;
 * true if it grew.  Bounds of other widths under one name are kept apart:
 * they cannot be compared.
 */
bool
idgen_lease_note_counter(const char *name, uint64 value, int seq_bits)
{
	IdgenLeaseCounter *c = idgen_lease_find_counter(idgen_lease_counters, name,
													seq_bits);
	MemoryContext old;

	if (c != NULL)
	{
		if (c->value >= value)
			return false;
		c->value = value;
		return true;
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	c = palloc0(sizeof(IdgenLeaseCounter));
	strlcpy(c->name, name, sizeof(c->name));
	c->value = value;
	c->seq_bits = seq_bits;
	idgen_lease_counters = lappend(idgen_lease_counters, c);
	MemoryContextSwitchTo(old);
	return true;
}

/* The counter called name, of width seq_bits, in a list of IdgenLeaseCounter, or NULL. */
IdgenLeaseCounter *
idgen_lease_find_counter(List *counters, const char *name, int seq_bits)
{
	ListCell   *lc;

	foreach(lc, counters)
	{
		IdgenLeaseCounter *c = lfirst(lc);

		if (c->seq_bits == seq_bits && strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

/*
 * A counter generator installed in this keeper (registry.c): the floor
 * the record gives it, in its own local values, if any.  A bound counted
 * in a seq field of another width cannot be translated: *untranslatable
 * is then that width (the counter is refused, never guessed at).
 */
bool
idgen_lease_counter_floor(const IdgenSpec *spec, const char *name,
						  uint64 *local_floor, int *untranslatable)
{
	int			bits = spec->fields[spec->seq_field].bits;
	bool		found = false;
	ListCell   *lc;

	*local_floor = 0;
	*untranslatable = 0;
	foreach(lc, idgen_lease_counters)
	{
		IdgenLeaseCounter *c = lfirst(lc);

		if (strcmp(c->name, name) != 0)
			continue;
		/*
		 * the old form counts the writer's local values, of stripes and a
		 * width it does not say: they cannot be carried over
		 */
		if (c->seq_bits == 0 && c->value > 0)
			*untranslatable = -1;
		else if (c->seq_bits == 0)
			continue;
		else if (c->seq_bits == bits)
			*local_floor = Max(*local_floor, idgen_counter_local_bound(spec, c->value));
		else if (c->value > 0)
			*untranslatable = c->seq_bits;
		found = true;
	}
	return found;
}
