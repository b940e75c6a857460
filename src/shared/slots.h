/*-------------------------------------------------------------------------
 *
 * shared/slots.h
 *	  Named generators' slots, shared by the files of named generators.
 *
 * For the code of named generators, in backends and in the keeper: the
 * slots in shared memory (which the keeper's load fills, and whose
 * comments say who writes and reads each field), the definition rows, and
 * the few functions one of these files uses from another.  What every
 * file uses is declared in idgen.h; what only the keeper's files use of
 * each other, in keeper/keeper.h.
 *
 * IDENTIFICATION
 *	  src/shared/slots.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_REGISTRY_H
#define IDGEN_REGISTRY_H

#include "access/htup.h"
#include "access/tupdesc.h"
#include "utils/relcache.h"

#include "idgen.h"

typedef enum IdgenSlotState
{
	IDGEN_SLOT_ACTIVE = 1,
	IDGEN_SLOT_DROPPED,
	IDGEN_SLOT_REFUSED			/* definition changed, or node id too wide */
} IdgenSlotState;

/* roles one generator may be granted to, PUBLIC aside */
#define IDGEN_MAX_GRANTEES 32

typedef struct IdgenNamedSlot
{
	pg_atomic_uint32 state;
	char		name[NAMEDATALEN];
	IdgenSpec	spec;
	int64		node_value;		/* node and constant bits */
	int32		shard_base;		/* first pool generator, or -1 */
	char		message[256];	/* why refused; under the registry mutex */

	/*
	 * Counter layouts: local counter values below counter_reserved are
	 * durably reserved (published by the keeper only after a durable
	 * commit); counter_want is the highest a waiting caller, or a
	 * statement or commit waiting for values taken ahead, needs.  The
	 * generator's at.next is the next local value to hand out; it may run
	 * up to idgen_counter_lead() beyond counter_reserved, pending the end
	 * of the statement that took them (the rule in shared/generator.c, the
	 * pending list and its waits in backend/counterissue.c).  A caller that
	 * takes a value beyond counter_wake (the reservation less refill)
	 * claims it, setting it to PG_UINT64_MAX, and wakes the keeper: so the
	 * keeper starts extending when fewer than refill values remain, not
	 * when a caller has run out.
	 */
	pg_atomic_uint64 counter_reserved;
	pg_atomic_uint64 counter_want;
	pg_atomic_uint64 counter_wake;

	/*
	 * Bumped by the keeper after it raises the counter to a floor from
	 * outside (a restored state row, a lease record): values a transaction
	 * took ahead before that may lie below the floor, so its commit fails.
	 */
	pg_atomic_uint32 counter_floor_epoch;

	/*
	 * A committed idgen_restart_generator(): the local value to restart at,
	 * plus one (0: none).  Set by the committing backend, taken by the
	 * keeper (idgen_registry_plan_restarts).
	 */
	pg_atomic_uint64 restart_at;
	/*
	 * Who may draw from the generator besides superusers (table
	 * idgen_generator_grant): PUBLIC, or these roles and their members.
	 * Written by the keeper under the registry mutex; acl_version is bumped
	 * after each change, so a call site re-checks only then.
	 */
	pg_atomic_uint32 acl_version;
	bool		acl_public;
	int			acl_n;
	Oid			acl_roles[IDGEN_MAX_GRANTEES];
	bool		state_loaded;	/* durable state applied (written by the
								 * keeper only, after the next values) */
	bool		check_after_load;	/* compare with dropped counters once
									 * their state is loaded (keeper only) */
	bool		state_missing;	/* refused until its state row appears
								 * (keeper only) */
	bool		defined_dropped;	/* its row's dropped mark meanwhile */
	bool		state_rewrite;	/* durable state missing or low (keeper only) */
	int			untranslatable_bits;	/* a floor elsewhere counts another
										 * seq width: refused for good, also
										 * if dropped and re-created (keeper
										 * only writes it) */
	bool		parked;			/* switched off by a stopping keeper, its
								 * durable state lowered to its next value
								 * (written under the generator's lock) */
	int64		state_changed_ms;	/* monotonic ms of a drop/re-create commit */

	/*
	 * Dropped, and its name re-created since with another definition,
	 * which a later slot runs: idgen_registry_find() passes over it.  Its
	 * values still count (set by the keeper before it publishes the
	 * successor; never cleared while the server runs).
	 */
	bool		retired;
} IdgenNamedSlot;

typedef struct IdgenRegistry
{
	slock_t		mutex;			/* the slots' messages */
	pg_atomic_uint32 nslots;	/* slots filled; only the keeper adds */
	pg_atomic_uint64 load_requests; /* lookups that asked for a load */
	pg_atomic_uint64 loads_served;	/* requests up to here have seen a load
									 * that began after them */
	pg_atomic_uint64 changes;	/* commits that created or dropped a
								 * generator or changed its grants */
	int32		pool_used;		/* keeper only */
	int64		floor_unix_ms;	/* floor of new slots in this shared memory */
	int64		node_floor_unix_ms; /* and of new slots embedding the node id:
									 * the previous holder's record (lease/record.c) */
} IdgenRegistry;

/* the options of a definition as stored (0 / NULL: default) */
typedef struct IdgenCounterOptions
{
	int32		prefetch;
	int32		refill;
	int32		stripes;
	char	   *owned;
	int64		segment;
	int64		start;
} IdgenCounterOptions;

/*
 * The columns of idgen_generator, in order; a query that reads rows for
 * idgen_registry_row() selects IDGEN_REG_COLUMNS first.
 */
enum
{
	IDGEN_REG_NAME,
	IDGEN_REG_LAYOUT,
	IDGEN_REG_EPOCH,
	IDGEN_REG_UNIT_MS,
	IDGEN_REG_CREATED,
	IDGEN_REG_DROPPED,
	IDGEN_REG_PREFETCH,
	IDGEN_REG_REFILL,
	IDGEN_REG_STRIPES,
	IDGEN_REG_OWNED,
	IDGEN_REG_SEGMENT,
	IDGEN_REG_START,
	IDGEN_REG_SPACE,
	IDGEN_REG_NCOLUMNS
};
#define IDGEN_REG_COLUMNS "name, layout, epoch, unit_ms, created, dropped, " \
	"prefetch, refill, stripes, owned, segment, start, space"

/* a row of idgen_generator, as idgen_registry_row() reads it */
typedef struct IdgenRegistryRow
{
	char	   *name;
	char	   *layout_text;
	int64		epoch;			/* Unix ms */
	int32		unit;			/* ms */
	bool		dropped;
	IdgenCounterOptions options;
	char	   *space;			/* NULL: its own */
} IdgenRegistryRow;

/* shared/slots.c: the slots in shared memory, and what they tell */
extern IdgenRegistry *idgen_registry_shm;
extern IdgenGeneratorPadded *idgen_registry_gens;
extern IdgenNamedSlot *idgen_registry_slots;

extern IdgenGenerator *idgen_slot_generator(int i, int32 shard);
extern int	idgen_slot_ngenerators(int i);
extern int	idgen_registry_find(const char *name);
extern void idgen_slot_layout(int i, IdgenLayout *layout);
IDGEN_NORETURN extern void idgen_report_slot(int i);
extern bool idgen_specs_collide(const IdgenSpec *a, const IdgenSpec *b,
								int32 node_id, uint64 b_below);
extern uint64 idgen_dropped_counter_below(const IdgenSpec *spec, const char *name,
										  bool reserved_known, uint64 reserved);
extern uint64 idgen_slot_dropped_below(int i, const IdgenSpec *spec,
									   bool reserved_known, uint64 reserved);
extern const char *idgen_redefinition_problem(const IdgenSpec *had,
											  IdgenSpec *spec,
											  uint64 had_below, int32 node_id,
											  bool *raised);
extern const char *idgen_collides_with(const char *name, const IdgenSpec *spec,
									   int32 node_id, bool at_install,
									   uint32 nslots);

/* shared/slots.c: a slot's state, set by the keeper and by a creation */
extern void idgen_slot_set_state(int i, IdgenSlotState state, const char *message);
extern char *idgen_counter_untranslatable_message(const IdgenNamedSlot *slot,
												  int seq_bits);
extern void idgen_counter_untranslatable_format(const IdgenNamedSlot *slot,
												int seq_bits, char *buf,
												size_t len);

/* shared/rows.c: the rows of idgen_generator */
extern bool idgen_registry_columns_known(TupleDesc desc);
extern Relation idgen_registry_open(Oid relid);
extern bool idgen_registry_row(HeapTuple tup, TupleDesc desc, IdgenRegistryRow *row);
extern void idgen_registry_check_table(Oid relid);
extern bool idgen_registry_row_spec(const IdgenRegistryRow *row, IdgenSpec *spec);
extern bool idgen_spec_same(const IdgenSpec *have, const IdgenSpec *now);
extern void idgen_registry_read_definition(const char *name, IdgenSpec *spec);

/* backend/counterissue.c: counter values taken ahead, and the pending list */
extern uint64 idgen_issue_counter(int i, uint64 count, uint64 limit, uint32 word);
IDGEN_NORETURN extern void idgen_report_switched_off(int i);

/* shared/reservation.c: one turn of a wait for a counter's reservation */
extern bool idgen_keeper_wait_counter(IdgenNamedSlot *slot, uint64 need,
									  int64 deadline, const char *event,
									  uint32 *wait_event);

/*
 * shared/generator.c: the engine's counter rule.  IDGEN_LEAD_ASK returns
 * IDGEN_COUNTER_MAY_LEAD where values beyond the reservation could be
 * taken ahead; IDGEN_LEAD_TAKE takes them within the lead and says so in
 * *ahead; IDGEN_LEAD_NEVER waits for the keeper instead.
 */
typedef enum IdgenLeadMode
{
	IDGEN_LEAD_ASK,
	IDGEN_LEAD_TAKE,
	IDGEN_LEAD_NEVER
} IdgenLeadMode;

typedef struct IdgenCounterAhead
{
	bool		taken;			/* the values lie beyond the reservation */
	uint64		need;			/* the reservation must reach this */
	uint32		epoch;			/* counter_floor_epoch before they were taken */
} IdgenCounterAhead;

/* not values: every counter's values lie below 2^63, like positions */
#define IDGEN_COUNTER_MAY_LEAD (PG_UINT64_MAX - 1)
#define IDGEN_COUNTER_BEYOND_LIMIT (PG_UINT64_MAX - 2)

extern uint64 idgen_issue_counter_values(int i, uint64 count, uint64 limit,
										 IdgenLeadMode lead,
										 IdgenCounterAhead *ahead);

/* backend/definitions.c: definitions and their transaction callbacks */
extern void idgen_registry_require_committed(const char *name);

#endif							/* IDGEN_REGISTRY_H */
