/*-------------------------------------------------------------------------
 *
 * lease/counters.h
 *	  What the keeper's counter code uses of lease/counters.c: the counters
 *	  a node id's reservation record carries.
 *
 * IDENTIFICATION
 *	  src/lease/counters.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LEASE_COUNTERS_H
#define IDGEN_LEASE_COUNTERS_H

#include "nodes/pg_list.h"

#include "idgen.h"

/*
 * The counter generators that embed the node id, as the node id's
 * reservation record carries them: name and exclusive bound of the local
 * counter values handed out under the id, by us or by previous holders
 * (matched by name).  A List of these is idgen_lease_counters, the
 * keeper's copy of what etcd holds, and rec->counters of a record read.
 */
typedef struct IdgenLeaseCounter
{
	char		name[NAMEDATALEN];
	uint64		value;			/* seq values below it may have been issued */
	int			seq_bits;		/* the seq field's width; 0: a record of the
								 * old form, in the reader's local values */
	int			seq_shift;		/* the seq field's position; -1: unsaid (an
								 * entry written by idgen 1.1.0) */
	char		space[NAMEDATALEN]; /* its shared ID space; "": its own, or
									 * unsaid */
	bool		fixed_known;	/* fixed said (not by idgen 1.1.0) */
	int64		fixed;			/* its fixed bits (node and constant fields)
								 * in place, as IdgenNamedSlot.node_value */
	uint64		form;			/* idgen_counter_form of its definition; 0:
								 * unsaid */
} IdgenLeaseCounter;

extern List *idgen_lease_counters;
extern bool idgen_lease_note_counter(const IdgenLeaseCounter *seen);
extern void idgen_lease_counter_of(IdgenLeaseCounter *c, const char *name,
								   const IdgenSpec *spec, int64 fixed,
								   uint64 seq_bound);
extern bool idgen_lease_counter_floor(const IdgenSpec *spec, const char *name,
									  int64 fixed,
									  uint64 *local_floor, int *untranslatable);
/*
 * Can no ID of a counter whose fixed bits (node and constant fields, in
 * place) are fixed, with a seq field of seq_bits at seq_shift, be one of
 * counter spec's with fixed bits spec_fixed?  So where the two differ in
 * a bit outside both seq fields: a counter layout has no other variable
 * field, and a bit beyond a layout is 0 in its IDs.
 */
static inline bool
idgen_counter_fixed_apart(const IdgenSpec *spec, int64 spec_fixed,
						  int seq_bits, int seq_shift, int64 fixed)
{
	const IdgenField *seq = &spec->fields[spec->seq_field];
	uint64		seqs = (((UINT64CONST(1) << seq->bits) - 1) << seq->shift) |
		(((UINT64CONST(1) << seq_bits) - 1) << seq_shift);

	return (((uint64) spec_fixed ^ (uint64) fixed) & ~seqs) != 0;
}

/* is a recorded counter still the definition of a row (keeper/load.c)? */
typedef bool (*IdgenRememberedFn) (const char *name, const char *space,
								   int seq_bits, int seq_shift,
								   bool fixed_known, int64 fixed,
								   uint64 form);
extern uint64 idgen_lease_space_floor(const IdgenSpec *spec, const char *name,
									  int64 fixed, IdgenRememberedFn remembered,
									  const IdgenLeaseCounter **untranslatable);
extern IdgenLeaseCounter *idgen_lease_find_counter(List *counters,
												   const IdgenLeaseCounter *like);


#endif							/* IDGEN_LEASE_COUNTERS_H */
