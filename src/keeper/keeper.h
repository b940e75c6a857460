/*-------------------------------------------------------------------------
 *
 * keeper/keeper.h
 *	  What the keeper's files use of each other.
 *
 * The keeper's load of named generators into their slots
 * (keeper/load.c), as its counters' durable state (keeper/counters.c)
 * and the node id's lease (lease/) use it.  Backend code never includes
 * this header (t/000_layers.pl checks).
 *
 * IDENTIFICATION
 *	  src/keeper/keeper.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_KEEPER_H
#define IDGEN_KEEPER_H

#include "shared/slots.h"

/* keeper/load.c */
extern void idgen_counter_refuse_untranslatable(int i, int seq_bits);
extern void idgen_counter_refuse_forgotten(int i, const char *member,
										   int seq_bits, int seq_shift);
extern bool idgen_registry_has_row(const char *name);
extern bool idgen_registry_remembers(const char *name, const char *space,
									 int seq_bits, int seq_shift,
									 bool fixed_known, int64 fixed,
									 uint64 form);
extern void idgen_counter_raise_floor(int i, uint64 floor);

#endif							/* IDGEN_KEEPER_H */
