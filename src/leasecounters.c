/*-------------------------------------------------------------------------
 *
 * leasecounters.c
 *	  The counters recorded under the node id: the keeper's copy.
 *
 * A counter generator that embeds the node id hands out local values that
 * another server may hand out again once it holds the id.  So the node
 * id's reservation record in etcd carries, per counter, the bound of the
 * values handed out under it (leasekeys.c writes and reads it), and the
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

/* Raise the recorded bound of counter "name" to value; true if it grew. */
bool
idgen_lease_note_counter(const char *name, uint64 value)
{
	ListCell   *lc;
	IdgenLeaseCounter *c;
	MemoryContext old;

	foreach(lc, idgen_lease_counters)
	{
		c = lfirst(lc);
		if (strcmp(c->name, name) == 0)
		{
			if (c->value >= value)
				return false;
			c->value = value;
			return true;
		}
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	c = palloc0(sizeof(IdgenLeaseCounter));
	strlcpy(c->name, name, sizeof(c->name));
	c->value = value;
	idgen_lease_counters = lappend(idgen_lease_counters, c);
	MemoryContextSwitchTo(old);
	return true;
}

/* The counter called name in a list of IdgenLeaseCounter, or NULL. */
IdgenLeaseCounter *
idgen_lease_find_counter(List *counters, const char *name)
{
	ListCell   *lc;

	foreach(lc, counters)
	{
		IdgenLeaseCounter *c = lfirst(lc);

		if (strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

/*
 * A counter generator installed in this keeper (registry.c): the floor the
 * record gives it, if any.
 */
bool
idgen_lease_counter_floor(const char *name, uint64 *value)
{
	IdgenLeaseCounter *c = idgen_lease_find_counter(idgen_lease_counters, name);

	if (c == NULL)
		return false;
	*value = c->value;
	return true;
}
