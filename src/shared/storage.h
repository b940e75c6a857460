/*-------------------------------------------------------------------------
 *
 * shared/storage.h
 *	  The durable objects in idgen.database, found and trusted.
 *
 * The functions run in a transaction of the keeper (or, for a standby's
 * read of a definition, of a backend) and throw on anything they cannot
 * trust.  idgen_schema_trusted() and idgen_extension_schema(), which a
 * creation uses too, are declared in idgen.h.
 *
 * IDENTIFICATION
 *	  src/shared/storage.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_STORAGE_H
#define IDGEN_STORAGE_H

#include "storage/lockdefs.h"
#include "utils/relcache.h"

/* The keeper's objects in idgen.database, found anew in each transaction. */
typedef struct IdgenKeeperObjects
{
	Oid			hwm;			/* sequence idgen_hwm */
	Oid			epoch;			/* sequence idgen_epoch */
	Oid			floors;			/* table idgen_shard_floor; invalid in 1.0 */
	Oid			registry;		/* table idgen_generator; invalid in 1.0 */
	Oid			counters;		/* table idgen_counter_state; invalid in 1.0 */
	Oid			grants;			/* table idgen_generator_grant; invalid in 1.0 */
} IdgenKeeperObjects;

/*
 * Present in the data directory once the keeper has had durable state
 * there.  A file, not WAL: it only has to survive what loses the durable
 * state, and base backups copy it to standbys.
 */
#define IDGEN_MARKER_FILE "idgen_state"

/* idgen_shard_floor's columns: shard, id, released, event */
#define IDGEN_FLOOR_NCOLUMNS 4

/* the objects, by OID, checked; the caller has begun a transaction */
extern void idgen_keeper_find_objects(IdgenKeeperObjects *objs);

/* the sequences idgen_hwm and idgen_epoch */
extern bool idgen_keeper_read_sequence(Oid seqoid, int64 *value);
extern void idgen_keeper_write_sequence(Oid seqoid, int64 value);

/* the table idgen_shard_floor, checked when opened */
extern Relation idgen_keeper_open_floors(Oid relid, LOCKMODE lockmode);
extern void idgen_keeper_read_floors(Oid relid, uint64 *floors, bool *released,
									 int64 *last_event);

/* errhint() for an object of the extension idgen does not trust */
extern int	idgen_errhint_repair(void);

/* the marker file */
extern bool idgen_keeper_marker_exists(void);
extern void idgen_keeper_write_marker(void);

#endif							/* IDGEN_STORAGE_H */
