/*-------------------------------------------------------------------------
 *
 * lease/counters.c
 *	  The counters recorded under the node id: the keeper's copy.
 *
 * A counter generator that embeds the node id hands out values that
 * another server may hand out again once it holds the id.  So the node
 * id's reservation record in etcd carries, per counter, the bound of the
 * seq values handed out under it, with the seq field's width and
 * position and the counter's ID space, whatever the stripes or segment of
 * the definition on either server (lease/record.c writes and reads it), and
 * the keeper keeps its own copy here: rebuilt from etcd whenever a keeper
 * takes over a lease, raised as counter reservations are planned
 * (idgen_registry_plan_counters), and read by the keeper's load
 * (idgen_registry_load_counters) to floor each counter above what earlier
 * holders handed out under its name, and a member of a shared ID space
 * above what its forgotten members (names this server has no definition
 * of) handed out.
 *
 * IDENTIFICATION
 *	  src/lease/counters.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/pg_list.h"
#include "utils/memutils.h"

#include "idgen.h"
#include "lease/counters.h"

/*
 * The counters the node id's reservation record in etcd carries (see
 * IdgenLeaseCounter): the keeper's own copy, rebuilt from etcd whenever a
 * keeper takes over a lease (lease/record.c), and read by the registry's load
 * to floor each counter above what earlier holders handed out.  Only the
 * keeper has it.  In TopMemoryContext.
 */
List	   *idgen_lease_counters = NIL;

/*
 * Raise the recorded bound of the counter seen (name, seq field, ID
 * space, fixed bits and form; value, counted in seq values of its seq
 * field) to its value; true if it grew.  Bounds under one name with
 * another definition are kept apart (idgen_lease_find_counter).
 */
bool
idgen_lease_note_counter(const IdgenLeaseCounter *seen)
{
	IdgenLeaseCounter *c = idgen_lease_find_counter(idgen_lease_counters, seen);
	MemoryContext old;

	if (c != NULL)
	{
		if (c->value >= seen->value)
			return false;
		c->value = seen->value;
		return true;
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	c = palloc(sizeof(IdgenLeaseCounter));
	memcpy(c, seen, sizeof(IdgenLeaseCounter));
	idgen_lease_counters = lappend(idgen_lease_counters, c);
	MemoryContextSwitchTo(old);
	return true;
}

/*
 * The entry of counter name, defined as spec with fixed bits fixed (its
 * slot's node_value), that has handed out seq values below seq_bound.
 */
void
idgen_lease_counter_of(IdgenLeaseCounter *c, const char *name,
					   const IdgenSpec *spec, int64 fixed, uint64 seq_bound)
{
	memset(c, 0, sizeof(IdgenLeaseCounter));
	strlcpy(c->name, name, sizeof(c->name));
	c->value = seq_bound;
	c->fixed_known = true;
	c->fixed = fixed;
	c->seq_bits = spec->fields[spec->seq_field].bits;
	c->seq_shift = spec->fields[spec->seq_field].shift;
	strlcpy(c->space, spec->space, sizeof(c->space));
	c->form = idgen_counter_form(spec);
}

/*
 * The entry of a list of IdgenLeaseCounter with like's name, seq field,
 * space, fixed bits and form, or NULL.  Entries of one name under other
 * definitions are kept apart: a space's forgotten members are found by
 * them (idgen_lease_space_floor).
 */
IdgenLeaseCounter *
idgen_lease_find_counter(List *counters, const IdgenLeaseCounter *like)
{
	ListCell   *lc;

	foreach(lc, counters)
	{
		IdgenLeaseCounter *c = lfirst(lc);

		if (c->seq_bits == like->seq_bits && c->seq_shift == like->seq_shift &&
			c->fixed_known == like->fixed_known && c->fixed == like->fixed &&
			c->form == like->form && strcmp(c->name, like->name) == 0 && strcmp(c->space, like->space) == 0)
			return c;
	}
	return NULL;
}

/*
 * A counter generator installed in this keeper, with fixed bits fixed (its
 * slot's node_value): the floor the record gives it, in its own local
 * values, if any.  A bound counted in a seq field of another width cannot
 * be translated: *untranslatable is then that width (the counter is
 * refused, never guessed at); one of the same width at another position
 * neither, IDGEN_SEQ_MOVED(position).  An entry whose fixed bits differ
 * from the counter's outside both seq fields is skipped, as the data
 * directory's file skips such a line (idgen_counter_floor_of): none of
 * its IDs can be one of the counter's.
 */
bool
idgen_lease_counter_floor(const IdgenSpec *spec, const char *name, int64 fixed,
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
		if (c->fixed_known && c->seq_bits > 0 && c->seq_shift >= 0 &&
			idgen_counter_fixed_apart(spec, fixed, c->seq_bits, c->seq_shift,
									  c->fixed))
			continue;
		/*
		 * the old form counts the writer's local values, of stripes and a
		 * width it does not say: they cannot be carried over
		 */
		if (c->seq_bits == 0 && c->value > 0)
			*untranslatable = -1;
		else if (c->seq_bits == 0)
			continue;
		else if (c->seq_bits != bits)
		{
			if (c->value > 0)
				*untranslatable = c->seq_bits;
		}
		else if (c->seq_shift >= 0 &&
				 c->seq_shift != spec->fields[spec->seq_field].shift)
		{
			/* seq values above the bound may still meet its IDs */
			if (c->value > 0)
				*untranslatable = IDGEN_SEQ_MOVED(c->seq_shift);
		}
		else
			*local_floor = Max(*local_floor, idgen_counter_local_bound(spec, c->value));
		found = true;
	}
	return found;
}

/*
 * The floor, in spec's local values, that the forgotten members of spec's
 * shared ID space give counter name: the entries of the space under
 * another name that has no row in idgen_generator (has_row says, from the
 * keeper's last load), whose values no creation can check any more.  An
 * entry whose seq field has the position and width of spec's floors it at
 * its bound: no seq value above lies in that member's IDs, whatever the
 * other fields.  One whose seq field lies elsewhere cannot be translated:
 * *untranslatable is set to it (the counter is refused, never guessed at).
 * Entries that do not say their space (idgen 1.1.0's) are no space's.
 */
uint64
idgen_lease_space_floor(const IdgenSpec *spec, const char *name, int64 fixed,
						IdgenRememberedFn remembered,
						const IdgenLeaseCounter **untranslatable)
{
	const IdgenField *seq = &spec->fields[spec->seq_field];
	uint64		floor = 0;
	ListCell   *lc;

	*untranslatable = NULL;
	if (spec->space[0] == '\0')
		return 0;
	foreach(lc, idgen_lease_counters)
	{
		IdgenLeaseCounter *c = lfirst(lc);

		if (c->value == 0 || strcmp(c->space, spec->space) != 0 ||
			strcmp(c->name, name) == 0 ||
			(c->fixed_known &&
			 idgen_counter_fixed_apart(spec, fixed, c->seq_bits, c->seq_shift,
									   c->fixed)) ||
			remembered(c->name, c->space, c->seq_bits, c->seq_shift,
					   c->fixed_known, c->fixed, c->form))
			continue;
		if (c->seq_bits == seq->bits && c->seq_shift == seq->shift)
			floor = Max(floor, idgen_counter_local_bound(spec, c->value));
		else if (*untranslatable == NULL)
			*untranslatable = c;
	}
	return floor;
}
