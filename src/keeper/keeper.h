/*-------------------------------------------------------------------------
 *
 * keeper/keeper.h
 *	  What the keeper's files use of each other.
 *
 * The keeper's load of named generators into their slots and its
 * counters' durable state, for the keeper's loop and the node id's lease.
 * Backend code never includes this header (t/000_layers.pl checks).
 *
 * IDENTIFICATION
 *	  src/keeper/keeper.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_KEEPER_H
#define IDGEN_KEEPER_H

#include "shared/slots.h"

/* keeper/load.c: the load into the slots, and the floors it applies */
extern void idgen_keeper_raise_floors(int64 floor_unix_ms, bool node_only);
extern void idgen_registry_raise_node_counters(void);
extern void idgen_registry_note_node_counters(void);
extern void idgen_registry_load(Oid relid);
extern void idgen_registry_load_grants(Oid relid);
extern uint64 idgen_registry_load_requests(void);
extern bool idgen_registry_load_requested(uint64 requests);
extern void idgen_registry_loads_served(uint64 requests);
extern uint64 idgen_registry_changes(void);
extern void idgen_counter_refuse_untranslatable(int i, int seq_bits);
extern void idgen_counter_refuse_forgotten(int i, const char *member,
										   int seq_bits, int seq_shift);
extern bool idgen_registry_has_row(const char *name);
extern bool idgen_registry_remembers(const char *name, const char *space,
									 int seq_bits, int seq_shift,
									 bool fixed_known, int64 fixed,
									 uint64 form);
extern void idgen_counter_raise_floor(int i, uint64 floor);

/* keeper/counters.c: counter generators' durable state */
extern void idgen_registry_load_counters(Oid relid);
extern int	idgen_registry_plan_counters(void);
extern void idgen_registry_write_counters(Oid relid);
extern void idgen_registry_publish_counters(void);
extern int	idgen_registry_plan_parking(void);
extern void idgen_registry_floors_exact(void);
extern int	idgen_registry_plan_restarts(void);
extern void idgen_registry_publish_restarts(void);

#endif							/* IDGEN_KEEPER_H */
