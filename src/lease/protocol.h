/*-------------------------------------------------------------------------
 *
 * lease/protocol.h
 *	  What the keeper's loop calls of the node-id lease protocol
 *	  (lease/protocol.c).
 *
 * IDENTIFICATION
 *	  src/lease/protocol.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LEASE_PROTOCOL_H
#define IDGEN_LEASE_PROTOCOL_H

#include "idgen.h"

extern long idgen_lease_step(void);
extern void idgen_lease_before_publish(int64 unix_ms);
extern void idgen_lease_release(void);
extern void idgen_lease_on_keeper_exit(void);
extern void idgen_lease_record_counters(void);
extern bool idgen_lease_claim_blocked(void);
extern bool idgen_lease_awaiting_claim(void);

#endif							/* IDGEN_LEASE_PROTOCOL_H */
