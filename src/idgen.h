/*-------------------------------------------------------------------------
 *
 * idgen.h
 *	  Bit layouts, shared-memory types and cross-file declarations of idgen.
 *
 * What every folder of src/ shares (src/README has the map).  The fixed
 * layouts are "milliseconds since idgen.epoch, then a discriminator (node
 * or shard), then a per-millisecond sequence".  Their bits are the presets
 * "snowflake" and "instagram", which every generator, decoder and builder
 * of theirs reads as a spec (IdgenBuiltin); the widths below are what
 * their SQL functions check arguments against, and the presets are
 * checked against them once per process (base/builtin.c).
 *
 * A generator's live state is a single 64-bit "position":
 *
 *		position = (ms << seq_bits) | seq
 *
 * The next position is max(last + 1, now_ms << seq_bits).  Because the
 * sequence is the low end of the same integer, running out of a
 * millisecond's sequence values simply carries into the next millisecond
 * ("borrowing" a timestamp ahead of the wall clock); the sequence can never
 * wrap inside a millisecond.  The ID is the position with the discriminator
 * spliced in between the ms and seq fields.
 *
 * IDENTIFICATION
 *	  src/idgen.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_H
#define IDGEN_H

#include <time.h>

#include "datatype/timestamp.h"
#include "utils/timestamp.h"
#include "common/pg_prng.h"
#include "fmgr.h"
#include "nodes/pg_list.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/spin.h"

#include "compat.h"

/*
 * The SQLSTATE of a condition that passes by itself: idgen could not get,
 * within "idgen.max_wait", what it waits for (the durable reservation, the
 * node-id lease, the clock, the keeper's load).  Nothing was issued, and
 * the statement is safe to retry after a moment.  53400 (capacity, after
 * max_wait) is retryable too; 55000 (object_not_in_prerequisite_state)
 * stays for what someone has to fix.
 */
#define ERRCODE_IDGEN_RETRY			ERRCODE_LOCK_NOT_AVAILABLE

/* Layout: 41-bit timestamp shared by both layouts. */
#define IDGEN_TIME_BITS				41

/*
 * snowflake: 0 | 41-bit ms | 10-bit node | 12-bit seq.  Its split into
 * 5 datacenter and 5 worker bits is the preset's (base/layout.c), for the
 * decoders.
 */
#define IDGEN_SNOWFLAKE_NODE_BITS	10
#define IDGEN_SNOWFLAKE_SEQ_BITS	12
#define IDGEN_SNOWFLAKE_MAX_NODE	((1 << IDGEN_SNOWFLAKE_NODE_BITS) - 1)
#define IDGEN_SNOWFLAKE_MAX_SEQ		((1 << IDGEN_SNOWFLAKE_SEQ_BITS) - 1)
/* bit 63 stays 0, so all 41 timestamp bits are usable */
#define IDGEN_SNOWFLAKE_MS_LIMIT	(INT64CONST(1) << IDGEN_TIME_BITS)

/* instagram: 41-bit ms | 13-bit shard | 10-bit seq (all 64 bits) */
#define IDGEN_INSTAGRAM_SHARD_BITS	13
#define IDGEN_INSTAGRAM_SEQ_BITS	10
#define IDGEN_INSTAGRAM_NSHARDS		(1 << IDGEN_INSTAGRAM_SHARD_BITS)
#define IDGEN_INSTAGRAM_MAX_SHARD	(IDGEN_INSTAGRAM_NSHARDS - 1)
#define IDGEN_INSTAGRAM_MAX_SEQ		((1 << IDGEN_INSTAGRAM_SEQ_BITS) - 1)

/*
 * The instagram layout fills all 64 bits, so its timestamp would reach the
 * sign bit at 2^40 ms.  We refuse to issue from there on rather than return
 * negative IDs that sort before older ones.
 */
#define IDGEN_INSTAGRAM_MS_LIMIT	(INT64CONST(1) << (IDGEN_TIME_BITS - 1))

/*
 * 128-bit IDs (backend/uuid.c): the sequence bits of idgen_uuidv7() (RFC 9562's
 * 12-bit rand_a, used as a counter) and of idgen_flake128() (Boundary's
 * flake: 16 bits).  Their timestamps are Unix ms of 48 and 64 bits; 2^47 ms
 * past the epoch (about 4,460 years) bounds both positions.
 */
#define IDGEN_UUIDV7_SEQ_BITS		12
#define IDGEN_FLAKE128_SEQ_BITS		16
#define IDGEN_UUID_MS_LIMIT			(INT64CONST(1) << 47)

/* Unix epoch minus PostgreSQL epoch (2000-01-01), in milliseconds */
#define IDGEN_UNIX_TO_PG_MS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

/*
 * One generator's state: the snowflake node, or one instagram shard.
 *
 * Everything here is protected by mutex.  Each generator occupies its own
 * cache line(s) so that backends hammering different shards, or the
 * snowflake generator and a shard, never contend through false sharing.
 */
typedef struct IdgenGenerator
{
	slock_t		mutex;
	bool		owned;			/* may issue here (instagram: idgen.shards
								 * and instagram_id_release) */

	/*
	 * Where it stands: for a time layout, the position of the last ID
	 * issued (0 = none); for a counter, the next local value to hand out.
	 * One word under two names, so that each use says which it reads.
	 */
	union
	{
		uint64		last;
		uint64		next;
	}			at;
	int64		clock_tick;		/* latest wall-clock tick read under mutex */
	uint64		issued;			/* IDs issued */
	uint64		borrowed;		/* IDs issued with a timestamp ahead of the
								 * wall clock */
	uint64		waits;			/* calls that had to sleep for the clock */
	uint64		regressions;	/* wall clock seen going backwards */
} IdgenGenerator;

typedef union IdgenGeneratorPadded
{
	IdgenGenerator gen;
	char		pad[PG_CACHE_LINE_SIZE];
} IdgenGeneratorPadded;

StaticAssertDecl(sizeof(IdgenGenerator) <= PG_CACHE_LINE_SIZE,
				 "IdgenGenerator must fit one cache line");

/*
 * The durable reservation (high-water mark, HWM) kept by the keeper
 * background worker (keeper/main.c).  No ID with a timestamp beyond hwm_ms is
 * issued: the keeper publishes a value only once it is durable (flushed to
 * WAL, and on a synchronous standby if one is configured).
 *
 * hwm_ms is read on every generator call and written a few times a second,
 * so it is atomic, as are want_ms and floors_pending.  The rest is under
 * two locks:
 *
 * lock, an LWLock (tranche "idgen", shared/shmem.c), protects the structure: the
 * messages, durable_unix_ms and writes, and the shard control
 * (IdgenShared.shards).  LW_SHARED to read, LW_EXCLUSIVE to write; taken
 * once for a whole copy or scan, never across a sleep, never while holding
 * another lock.
 *
 * mutex, a spinlock, protects the few words a backend reads on every turn
 * of a wait for the keeper (shared/reservation.c): the state and what its
 * SQLSTATE is made of (failures, failed_errcode, claim_blocked), written
 * only while lock is held in LW_EXCLUSIVE too, so that they may be read
 * under either: under mutex alone by a wait's turn, under lock with the
 * message they go with.  latch, starts and waits are under mutex alone.
 * mutex is taken inside lock, never the other way round, and held for a
 * few assignments.
 */
#define IDGEN_LWLOCK_TRANCHE "idgen"

typedef enum IdgenKeeperState
{
	IDGEN_KEEPER_STARTING = 0,	/* no reservation loaded yet */
	IDGEN_KEEPER_READY,			/* hwm_ms is durable and being extended */
	IDGEN_KEEPER_FAILED,		/* last attempt failed: see message */
	IDGEN_KEEPER_EPOCH_CHANGED	/* idgen.epoch differs from the recorded one */
} IdgenKeeperState;

typedef struct IdgenKeeper
{
	pg_atomic_uint64 hwm_ms;	/* IDs' ms since epoch stay below this */
	pg_atomic_uint64 want_ms;	/* highest ms a waiting backend needs */
	pg_atomic_uint32 floors_pending;	/* an instagram_id_advance() waits */
	ConditionVariable cv;		/* broadcast when hwm_ms or state changes */
	LWLock	   *lock;			/* the structure and the shard control */

	/* under mutex; the first four written under lock too */
	slock_t		mutex;
	IdgenKeeperState state;
	uint32		failures;		/* consecutive failed keeper runs */
	int			failed_errcode; /* SQLSTATE of the last failure */
	bool		claim_blocked;	/* starting: an 'auto' claim waits on a wrong
								 * etcd setting (the message says which) */
	Latch	   *latch;			/* the keeper's latch while it runs */
	uint32		starts;			/* times the keeper process started */
	uint64		waits;			/* generator calls that waited for one */

	/* under lock */
	int64		durable_unix_ms;	/* last value known durable (Unix ms) */
	uint64		writes;			/* reservations made durable */
	char		message[256];	/* why not ready, for errors and status */
	char		floor_message[256]; /* why shard floors cannot be kept */

#ifdef IDGEN_TEST_HOOKS
	/* for t/044: see idgen_test_hold_keeper_ticks() in shared/shmem.c */
	pg_atomic_uint64 test_durable_commits;	/* commits that wrote, durable */
	pg_atomic_uint32 test_tick_hold;	/* 0: ticks run; n > 0: n - 1 more run */
#endif
} IdgenKeeper;

typedef union IdgenKeeperPadded
{
	IdgenKeeper keeper;
	char		pad[8 * PG_CACHE_LINE_SIZE];
} IdgenKeeperPadded;

StaticAssertDecl(sizeof(IdgenKeeper) <= 8 * PG_CACHE_LINE_SIZE,
				 "IdgenKeeper must fit its padding");

/*
 * The highest millisecond any generator has issued or been floored to.
 * Written at most about once per millisecond (only when it grows), read by
 * the keeper to know how far the reservation must reach: one atomic on its
 * own cache line instead of visiting every generator's lock.
 */
typedef union IdgenIssuedPadded
{
	pg_atomic_uint64 ms;
	char		pad[PG_CACHE_LINE_SIZE];
} IdgenIssuedPadded;

/*
 * Durable per-shard floors set by instagram_id_advance(), as positions.
 * pending is what callers asked for, durable what the keeper has committed
 * (table idgen_shard_floor); both only grow.  A release is durable too:
 * release_pending is a change asked for, released the state committed; a
 * released shard is never owned here, whatever idgen.shards says, until
 * instagram_id_advance() takes it back.  All protected by the keeper's
 * LWLock (IdgenKeeper.lock), taken once for a whole scan, not per shard.
 * applied is the idgen.shards bitmap the keeper last copied into the
 * generators' "owned" flags: only shards whose setting changed since are
 * copied again; the keeper alone reads and writes it, without a lock.
 */
typedef enum IdgenReleaseChange
{
	IDGEN_RELEASE_KEEP = 0,		/* no change asked for */
	IDGEN_RELEASE_RELEASE,		/* instagram_id_release() */
	IDGEN_RELEASE_TAKE_BACK		/* instagram_id_advance() */
} IdgenReleaseChange;

typedef struct IdgenShardControl
{
	uint64		floor_pending[IDGEN_INSTAGRAM_NSHARDS];
	uint64		floor_durable[IDGEN_INSTAGRAM_NSHARDS];
	uint8		release_pending[IDGEN_INSTAGRAM_NSHARDS];	/* IdgenReleaseChange */
	bool		released[IDGEN_INSTAGRAM_NSHARDS];	/* durably released here */
	int64		last_event;		/* highest event of idgen_shard_floor */
	uint8		applied[IDGEN_INSTAGRAM_NSHARDS / 8];
} IdgenShardControl;

/*
 * Node-id leases in etcd (lease/protocol.c).  The word is read by every call of a
 * generator that embeds the node id, once leases are on: IDGEN_LEASE_VALID
 * and the node id while this server's claim stands, 0 otherwise.  The rest
 * is the keeper's, protected by mutex, for errors and status.
 */
#define IDGEN_LEASE_VALID			((uint32) 1 << 31)
#define IDGEN_LEASE_NODE_MASK		((uint32) 0x3FF)	/* node id: 10 bits */
#define IDGEN_LEASE_GENERATION_ONE	((uint32) 1 << 10)	/* then a claim count */

/*
 * The lease word is decoded and composed only here.  Its generation bits
 * (bits 10..30) make every claim's word differ from the last one's, so a
 * node id must never be read from it without masking them away.
 */
static inline bool
idgen_lease_word_valid(uint32 word)
{
	return (word & IDGEN_LEASE_VALID) != 0;
}

static inline int32
idgen_lease_word_node(uint32 word)
{
	return (int32) (word & IDGEN_LEASE_NODE_MASK);
}

static inline uint32
idgen_lease_word_make(int32 node_id, uint32 generation)
{
	return IDGEN_LEASE_VALID |
		((generation * IDGEN_LEASE_GENERATION_ONE) &
		 ~(IDGEN_LEASE_VALID | IDGEN_LEASE_NODE_MASK)) |
		((uint32) node_id & IDGEN_LEASE_NODE_MASK);
}

/* idgen.node_id = 'auto': the keeper claims the lowest free id */
#define IDGEN_NODE_AUTO				(-2)

typedef enum IdgenLeaseState
{
	IDGEN_LEASE_OFF = 0,		/* idgen.lease_endpoints is empty */
	IDGEN_LEASE_CLAIMING,		/* no claim yet (etcd not reached) */
	IDGEN_LEASE_HELD,			/* claimed, renewed in time */
	IDGEN_LEASE_TAKEN,			/* another server holds our node id */
	IDGEN_LEASE_LOST,			/* was held; not renewed in time, or gone */
	IDGEN_LEASE_FENCING			/* claimed; no IDs until fence_until_ms */
} IdgenLeaseState;

typedef union IdgenLeaseWordPadded
{
	pg_atomic_uint32 word;
	char		pad[PG_CACHE_LINE_SIZE];
} IdgenLeaseWordPadded;

/*
 * The lease's deadline on idgen_clock_monotonic_ms()'s scale, as the
 * keeper last set it (before it makes the word valid, and at each
 * renewal).  Generators refuse past it themselves: a keeper stuck in a
 * lock, a synchronous-replication wait or a stopped process must not let
 * them run on after etcd may have given the node id to another server.
 */
typedef union IdgenLeaseDeadlinePadded
{
	pg_atomic_uint64 ms;
	char		pad[PG_CACHE_LINE_SIZE];
} IdgenLeaseDeadlinePadded;

typedef struct IdgenLease
{
	slock_t		mutex;
	IdgenLeaseState state;
	int64		lease_id;		/* 0 if none */
	int32		node_id;		/* claimed, or being claimed; -1 if none */
	int64		deadline_ms;	/* monotonic: generation stops here */
	int64		recorded_unix_ms;	/* our reservation as etcd records it */
	int64		fence_until_ms; /* monotonic: no IDs under a new claim before */
	TimestampTz since;			/* claimed at */
	uint64		renewals;
	uint32		generation;		/* bumped each time the word is set */
	char		holder[256];	/* who holds our node id, when another does */
	char		error[256];		/* the last etcd failure */
	bool		error_config;	/* ... is one of configuration (cleared
								 * once a claim or renewal succeeds) */
	bool		holder_is_self; /* TAKEN by this server before a crash
								 * restart: passes within the TTL */
	TimestampTz error_at;
} IdgenLease;

typedef struct IdgenShared
{
	IdgenKeeperPadded keeper;
	IdgenLeaseWordPadded lease_word;
	IdgenLeaseDeadlinePadded lease_deadline;
	IdgenLease	lease;
	IdgenIssuedPadded issued;
	IdgenGeneratorPadded snowflake;
	IdgenGeneratorPadded uuidv7;
	IdgenGeneratorPadded flake128;
	IdgenGeneratorPadded instagram[IDGEN_INSTAGRAM_NSHARDS];
	IdgenShardControl shards;
} IdgenShared;

/* The keeper's structure in shared memory s (an IdgenShared *). */
#define KEEPER(s) (&(s)->keeper.keeper)

/*
 * A layout as the shared issuing code sees it.  Every layout counts ticks
 * of unit_ms milliseconds from its own epoch, offset_ms after idgen.epoch:
 * the fixed layouts (snowflake, instagram, the 128-bit ones) are unit 1,
 * offset 0, and a named generator counting milliseconds takes exactly
 * their path, plus one subtraction.
 */
typedef struct IdgenLayout
{
	const char *name;			/* "snowflake" or "instagram" */
	const char *funcname;		/* its generator: "snowflake_id", ... */
	int			seq_bits;
	int64		tick_limit;		/* first tick that cannot be issued */
	int64		offset_ms;		/* its epoch, in ms since idgen.epoch */
	int32		unit_ms;		/* 1 for the fixed layouts */
	double		unit_inverse;	/* 1.0 / unit_ms, for idgen_unit_div */
} IdgenLayout;

/*
 * The first position of a tick: tick << seq_bits.  Caller guarantees
 * 0 <= tick <= layout->tick_limit; every layout's limit is chosen so that
 * tick_limit << seq_bits fits 63 bits, so this never wraps.  Every place
 * that turns a tick into a position goes through here.
 */
static inline uint64
idgen_tick_position(const IdgenLayout *layout, int64 tick)
{
	Assert(tick >= 0 && tick <= layout->tick_limit);
	return (uint64) tick << layout->seq_bits;
}

/* The clock fields of a fixed layout, which counts ms since idgen.epoch. */
#define IDGEN_LAYOUT_MS_SINCE_EPOCH \
	.offset_ms = 0, .unit_ms = 1, .unit_inverse = 1.0

/* floor(a / b), also for negative a (a time before an epoch). */
static inline int64
idgen_floor_div(int64 a, int64 b)
{
	return a / b - ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0);
}

/*
 * floor(ms / unit_ms) without a 64-bit division, which would cost as much
 * as the rest of a generator call: a double holds any millisecond count
 * below 2^52 exactly, so its reciprocal estimate is within one or two of
 * the quotient, and the loops make it exact.
 */
static inline int64
idgen_unit_div(const IdgenLayout *layout, int64 ms)
{
	int64		q;

	if (unlikely(ms >= (INT64CONST(1) << 52) || ms <= -(INT64CONST(1) << 52)))
		return idgen_floor_div(ms, layout->unit_ms);
	q = (int64) ((double) ms * layout->unit_inverse);
	while (q * layout->unit_ms > ms)
		q--;
	while ((q + 1) * layout->unit_ms <= ms)
		q++;
	return q;
}

/*
 * What idgen_issue() and idgen_issue_batch() return for a generator that is
 * switched off here ("owned" false), instead of a position: no layout's
 * positions reach 2^63 (see idgen_tick_position).  The caller reports it,
 * knowing which shard or named generator that is.
 */
#define IDGEN_SWITCHED_OFF PG_UINT64_MAX

/* base/builtin.c: the 128-bit layouts, which no spec describes */
extern const IdgenLayout idgen_uuidv7_layout;
extern const IdgenLayout idgen_flake128_layout;

/*
 * A layout of a named generator (base/layout.c): fields from the most
 * significant bit down.  Parsed from text such as
 * "time:42 datacenter:3 worker:6 seq:12" or a preset name, with an epoch
 * and a unit; validated once, then plain data that shared memory holds.
 */
#define IDGEN_MAX_FIELDS		16
#define IDGEN_FIELD_NAME_LEN	32

typedef enum IdgenFieldKind
{
	IDGEN_FIELD_TIME,			/* ticks of unit since epoch */
	IDGEN_FIELD_SEQ,			/* per-tick sequence */
	IDGEN_FIELD_SHARD,			/* a call argument */
	IDGEN_FIELD_RANDOM,			/* random bits */
	IDGEN_FIELD_NODE,			/* part of idgen.node_id */
	IDGEN_FIELD_CONST			/* a constant given in the layout */
} IdgenFieldKind;

typedef struct IdgenField
{
	char		name[IDGEN_FIELD_NAME_LEN];
	IdgenFieldKind kind;
	int			bits;
	int			shift;			/* of its least significant bit */
	int64		constant;		/* IDGEN_FIELD_CONST only */
} IdgenField;

/*
 * Counter layouts (no time field) stripe their counter: the value space is
 * cut into segments of "segment" values, segment g belongs to stripe
 * g mod stripes, and this server hands out whole segments of the stripes
 * it owns, in increasing order (base/counter.c).
 */
#define IDGEN_MAX_STRIPES		1024

typedef struct IdgenCounterSpec
{
	int32		stripes;
	int64		segment;
	int32		nowned;			/* owned stripes, ascending */
	int32		owned[IDGEN_MAX_STRIPES];
	int32		prefetch;
	int32		refill;
	uint64		start;			/* no seq value below it is handed out */
	uint64		first;			/* the first local value at or above it */
	uint64		limit;			/* the first local value whose seq value
								 * does not fit the seq field */
} IdgenCounterSpec;

typedef struct IdgenSpec
{
	int			nfields;
	IdgenField	fields[IDGEN_MAX_FIELDS];
	int			width;			/* sum of the fields' bits: at most 64 */
	int			time_field;		/* index, or -1 for a counter layout */
	int			seq_field;		/* index, or -1 */
	int			shard_field;	/* index, or -1 */
	int			node_bits;		/* all node fields together */
	int64		epoch_unix_ms;
	int32		unit_ms;
	int64		tick_limit;		/* first tick that cannot be issued (0 for
								 * a counter: counter.limit bounds it) */
	IdgenCounterSpec counter;	/* counter layouts only */
	char		space[NAMEDATALEN]; /* the ID space it shares ("" for its own:
									 * a named generator's default) */
} IdgenSpec;

/*
 * Why a parser refused its input, as the ERROR it stands for would say it:
 * SQLSTATE, message, detail and hint (detail and hint NULL if none).
 * Parsers that the keeper and check hooks call fill one and return false
 * rather than raise; idgen_raise_problem (base/ranges.c) raises it for the SQL
 * functions.
 */
typedef struct IdgenProblem
{
	int			sqlstate;
	const char *message;
	const char *detail;
	const char *hint;
} IdgenProblem;

/* base/ranges.c */
IDGEN_NORETURN extern void idgen_raise_problem(const IdgenProblem *problem);
typedef enum IdgenRangesProblem
{
	IDGEN_RANGES_OK,
	IDGEN_RANGES_SYNTAX,		/* not numbers and ranges separated by commas */
	IDGEN_RANGES_HALF,			/* a range without its end */
	IDGEN_RANGES_TOO_HIGH,		/* a number above the maximum */
	IDGEN_RANGES_BACKWARDS		/* a range that ends below its start */
} IdgenRangesProblem;
extern IdgenRangesProblem idgen_parse_ranges(const char *text, int max, bool *member);

/* base/counter.c */
extern bool idgen_parse_counter_options_soft(IdgenSpec *spec, int32 prefetch,
											 int32 refill, int32 stripes,
											 const char *owned, int64 segment,
											 int64 start, IdgenProblem *problem);
extern void idgen_parse_counter_options(IdgenSpec *spec, int32 prefetch,
										int32 refill, int32 stripes,
										const char *owned, int64 segment,
										int64 start);
extern char *idgen_counter_options_text(const IdgenSpec *spec);
extern uint64 idgen_counter_value(const IdgenCounterSpec *counter, uint64 c);
extern bool idgen_counter_sets_meet(const IdgenCounterSpec *a,
									const IdgenCounterSpec *b, uint64 from,
									uint64 below);
extern uint64 idgen_counter_lead(const IdgenSpec *spec);
extern uint64 idgen_counter_seq_bound(const IdgenSpec *spec, uint64 c);
extern uint64 idgen_counter_local_bound(const IdgenSpec *spec, uint64 seq);
extern uint64 idgen_counter_form(const IdgenSpec *spec);

/* base/layout.c */
extern bool idgen_parse_layout_soft(const char *text, IdgenSpec *spec,
									bool *epoch_given, bool *unit_given,
									IdgenProblem *problem);
extern void idgen_parse_layout(const char *text, IdgenSpec *spec,
							   bool *epoch_given, bool *unit_given);
extern void idgen_spec_set_clock(IdgenSpec *spec, int64 epoch_unix_ms,
								 int32 unit_ms);
extern char *idgen_spec_text(const IdgenSpec *spec);
extern int64 idgen_spec_node_value(const IdgenSpec *spec, int32 node_id,
								   bool *fits);
extern uint64 idgen_spec_field(const IdgenSpec *spec, int i, int64 id);
extern uint64 idgen_spec_fixed_mask(const IdgenSpec *spec, bool with_node);
extern bool idgen_spec_time_overlap(const IdgenSpec *a, const IdgenSpec *b,
									int32 node_id);
extern bool idgen_spec_counter_overlap(const IdgenSpec *a, const IdgenSpec *b,
									   int32 node_id, uint64 b_below);
extern int64 idgen_epoch_to_unix_ms(TimestampTz epoch);
extern int64 idgen_spec_tick_unix_ms(const IdgenSpec *spec, uint64 tick);
extern int32 idgen_interval_to_unit_ms(Interval *unit);
extern int64 idgen_timestamptz_to_unix_ms(TimestampTz ts);
extern TimestampTz idgen_unix_ms_to_timestamptz(int64 unix_ms);
extern Datum idgen_spec_decode_jsonb(const IdgenSpec *spec, int64 id);

/*
 * How a time layout's positions become IDs: the shifts of its spec, taken
 * once (idgen_compose_plan), so that issuing is the engine and a few
 * shifts.  A named generator keeps one per call site, a built-in one per
 * process.
 */
typedef struct IdgenCompose
{
	int			seq_bits;
	int			time_shift;
	int			seq_shift;
	int			shard_shift;	/* 0 if no shard field */
	uint64		fixed;			/* node and constant bits */
	uint64		random_mask;	/* random fields in place; 0 if none */
} IdgenCompose;

/* The ID of a position (a time layout's) and shard (0 if none). */
static inline int64
idgen_compose(const IdgenCompose *plan, uint64 position, int32 shard)
{
	uint64		id = ((position >> plan->seq_bits) << plan->time_shift) |
		((position & ((UINT64CONST(1) << plan->seq_bits) - 1)) << plan->seq_shift) |
		plan->fixed |
		((uint64) shard << plan->shard_shift);

	if (plan->random_mask != 0)
		id |= pg_prng_uint64(&pg_global_prng_state) & plan->random_mask;
	return (int64) id;
}

/*
 * snowflake_id() and instagram_id() as specs: their presets' bits, counting
 * ms since idgen.epoch, parsed once per process (idgen_builtin_init, from
 * _PG_init) and checked there against the widths their SQL functions'
 * arguments are checked with.  They issue, decode, build and are floored
 * through the same code as named generators; only their generators live
 * apart, in the shared block (shared/shmem.c's table).
 */
typedef struct IdgenBuiltin
{
	const char *preset;			/* and the layout's name in messages */
	IdgenSpec	spec;			/* its clock follows idgen.epoch (decoders) */
	IdgenLayout layout;			/* ms since idgen.epoch */
	IdgenCompose compose;		/* fixed: the node value of node_id */
	int32		node_id;		/* whose value compose.fixed holds; -1 none */
	int			datacenter;		/* snowflake's node fields, by index */
	int			worker;
} IdgenBuiltin;

/* base/builtin.c */
extern IdgenBuiltin idgen_builtin_snowflake;
extern IdgenBuiltin idgen_builtin_instagram;
extern void idgen_builtin_init(void);
extern void idgen_builtin_set_node(IdgenBuiltin *builtin, int32 node_id);
extern uint64 idgen_instagram_position(int64 id);
extern int32 idgen_instagram_shard_of(int64 id);
extern int64 idgen_instagram_ms_of(int64 id);

/* A snowflake_id() of a position, under node id "node". */
static inline int64
idgen_snowflake_id_at(uint64 position, int32 node)
{
	if (unlikely(node != idgen_builtin_snowflake.node_id))
		idgen_builtin_set_node(&idgen_builtin_snowflake, node);
	return idgen_compose(&idgen_builtin_snowflake.compose, position, 0);
}

/* An instagram_id() of a shard's position. */
static inline int64
idgen_instagram_id_at(uint64 position, int32 shard)
{
	return idgen_compose(&idgen_builtin_instagram.compose, position, shard);
}

/* base/builtin.c: a spec as the engine and the composer see it */
extern void idgen_spec_layout(const IdgenSpec *spec, const char *name,
							  const char *funcname, IdgenLayout *layout);
extern void idgen_compose_plan(const IdgenSpec *spec, int64 fixed,
							   IdgenCompose *plan);

/* base/guc.c */
extern int	idgen_node_id;
extern int	idgen_max_lead_ms;
extern int	idgen_max_wait_ms;
extern bool idgen_counter_lead_on;
extern int	idgen_reservation_ms;
extern char *idgen_database;
extern char *idgen_shards_string;
extern const uint8 *idgen_owned_shards;
extern char *idgen_epoch_string;
extern int64 idgen_epoch_unix_ms;
extern TimestampTz idgen_epoch_ts;
#ifdef IDGEN_TEST_HOOKS
extern int64 idgen_test_clock_unix_ms;
#endif
extern void idgen_define_gucs(void);

/* shared/shmem.c */
extern void idgen_keeper_init(IdgenKeeper *keeper);
extern const char *idgen_keeper_state_name(IdgenKeeperState state);
extern IdgenShared *idgen_shared;
extern void idgen_require_superuser(const char *funcname);
extern void idgen_shmem_request(void);
extern void idgen_shmem_init(void);
IDGEN_NORETURN extern void idgen_report_not_preloaded(const char *funcname);
extern void idgen_refuse_in_recovery(const char *funcname);
extern void idgen_generator_init(IdgenGenerator *gen, bool owned);
extern void idgen_lease_init(IdgenLease *lease);

/*
 * A fixed layout's generators in IdgenShared: ngenerators padded ones at
 * shared_offset.  carries_node: its IDs carry the node id (snowflake, the
 * 128-bit ones), so a claimed node id's previous holder floors them.
 */
typedef struct IdgenFixedGenerator
{
	const IdgenLayout *layout;
	size_t		shared_offset;
	int			ngenerators;
	bool		carries_node;
} IdgenFixedGenerator;

#define IDGEN_NFIXED 4
extern const IdgenFixedGenerator idgen_fixed_generators[IDGEN_NFIXED];
extern IdgenGenerator *idgen_fixed_generator(const IdgenFixedGenerator *fixed,
											 int i);

/*
 * The shared block, or an error if idgen was not preloaded.  Inline: it is
 * on every generator call.  (Refusing on a standby is not done here but in
 * the generators' slow path: see idgen_try_issue.)
 */
static inline IdgenShared *
idgen_require_shared(const char *funcname)
{
	if (unlikely(idgen_shared == NULL))
		idgen_report_not_preloaded(funcname);
	return idgen_shared;
}

/* base/clock.c */
extern int64 idgen_clock_monotonic_ms(void);
extern int64 idgen_clock_monotonic_us(void);

/*
 * Wall clock in Unix ms, read fresh on every call (never the transaction
 * timestamp).  Inline: it is half of a generator call's cost, and on Linux
 * it is a vDSO read, not a system call.  The one exception is the
 * setting idgen.test_clock (base/guc.c), which stands this clock still for
 * backends and keeper alike; it exists only in a test build.
 */
static inline int64
idgen_clock_unix_ms(void)
{
	struct timespec ts;

#ifdef IDGEN_TEST_HOOKS
	if (unlikely(idgen_test_clock_unix_ms != 0))
		return idgen_test_clock_unix_ms;
#endif
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Does this server's idgen.shards, as this backend last read it, list the shard? */
static inline bool
idgen_owns_shard(int32 shard)
{
	return (idgen_owned_shards[shard >> 3] >> (shard & 7)) & 1;
}

/* Wall clock in ms since idgen.epoch; negative before the epoch. */
static inline int64
idgen_clock_ms(void)
{
	return idgen_clock_unix_ms() - idgen_epoch_unix_ms;
}

/* shared/generator.c */
extern uint64 idgen_issue(IdgenGenerator *gen, const IdgenLayout *layout);

/*
 * The most IDs one batch call returns: 100,000 is under 25 ms of snowflake
 * capacity and under 100 ms of a shard's, well inside the default
 * idgen.max_lead, and an 800 kB array.
 */
#define IDGEN_MAX_BATCH 100000
extern uint64 idgen_issue_batch(IdgenGenerator *gen, const IdgenLayout *layout,
								uint64 count);
extern int32 idgen_check_batch_size(FunctionCallInfo fcinfo, int argno);
extern void idgen_note_issued(int64 ms);
extern int64 idgen_reservation_deadline(void);
extern int64 idgen_position_unix_ms(const IdgenLayout *layout, uint64 position);
extern void idgen_raise_floor(IdgenGenerator *gen, const IdgenLayout *layout,
							  int64 floor_ms);
extern void idgen_raise_position(IdgenGenerator *gen, uint64 position);
extern void idgen_raise_counter_next(IdgenGenerator *gen, uint64 next);
IDGEN_NORETURN extern void idgen_report_never_switched_off(void);

/* shared/node.c */
extern const char *idgen_lease_state_name(IdgenLeaseState state);
IDGEN_NORETURN extern void idgen_report_no_node(const char *funcname);
IDGEN_NORETURN extern void idgen_report_lease_deadline(const char *funcname);
extern int32 idgen_current_node_id(void);

/*
 * A floor that cannot be translated (the counter is refused): its seq
 * field's width (> 0), -1 for a floor in another definition's own values,
 * or IDGEN_SEQ_MOVED(shift) for a seq field of the same width at another
 * position, or IDGEN_SEQ_FORGOTTEN (idgen_counter_refuse_forgotten).
 */
#define IDGEN_SEQ_MOVED(shift)			(-2 - (shift))
#define IDGEN_SEQ_MOVED_SHIFT(code)		(-2 - (code))
/* a forgotten member of its shared ID space, with its seq field elsewhere */
#define IDGEN_SEQ_FORGOTTEN				(-1000)

/* base/guc.c: the node-id lease's settings */
extern bool idgen_leases_on;
extern char *idgen_node_id_string;
extern char *idgen_lease_endpoints;
extern char *idgen_lease_prefix;
extern int	idgen_lease_ttl_s;
extern char *idgen_lease_ca_file;
extern char *idgen_lease_cert_file;
extern char *idgen_lease_key_file;
extern char *idgen_lease_user;
extern char *idgen_lease_password_file;

/*
 * Before a generator that embeds the node id takes a position: without
 * leases, the node id must be set; with leases, the claim must stand.
 * Returns the lease word read (0 without leases), for idgen_issued_node.
 */
static inline uint32
idgen_require_node_id(const char *funcname)
{
	uint32		word;

	if (likely(!idgen_leases_on))
	{
		if (unlikely(idgen_node_id < 0))
			idgen_report_no_node(funcname);
		return 0;
	}
	word = pg_atomic_read_u32(&idgen_shared->lease_word.word);
	if (unlikely(!idgen_lease_word_valid(word)))
		idgen_report_no_node(funcname);
	/* the deadline was set before the word became valid */
	pg_read_barrier();
	if (unlikely(idgen_clock_monotonic_ms() >=
				 (int64) pg_atomic_read_u64(&idgen_shared->lease_deadline.ms)))
		idgen_report_lease_deadline(funcname);
	/* the position is taken after this read */
	pg_read_barrier();
	return word;
}

/*
 * After such a generator has taken its position: the node id to compose
 * it with.  With leases, the word must not have changed since
 * idgen_require_node_id read it: each claim sets it with a new generation,
 * and the keeper floors the generators before, and clears the word before
 * it publishes a reservation that etcd does not record (lease/protocol.c).  So a
 * position taken between two equal reads was taken under one claim, above
 * its floor and within what etcd records.
 */
static inline int32
idgen_issued_node(const char *funcname, uint32 word)
{
	if (likely(!idgen_leases_on))
		return idgen_node_id;
	pg_read_barrier();
	if (unlikely(pg_atomic_read_u32(&idgen_shared->lease_word.word) != word))
		idgen_report_no_node(funcname);
	return idgen_lease_word_node(word);
}

/*
 * Issue "count" positions of a fixed generator whose IDs carry the node id
 * (snowflake, the 128-bit ones; never switched off) between the two halves
 * of the guard above; *node is the node id to compose them with.  Their
 * SQL functions issue through here alone.  (Named generators apply the
 * same guard in idgen_named_issue, backend/named.c.)
 */
static inline uint64
idgen_issue_with_node(IdgenGenerator *gen, const IdgenLayout *layout,
					  uint64 count, const char *funcname, int32 *node)
{
	uint32		word = idgen_require_node_id(funcname);
	uint64		position;

	position = count == 1 ? idgen_issue(gen, layout) :
		idgen_issue_batch(gen, layout, count);
	if (unlikely(position == IDGEN_SWITCHED_OFF))
		idgen_report_never_switched_off();
	*node = idgen_issued_node(funcname, word);
	return position;
}

/* shared/node.c: the keeper's SQLSTATE (_locked: caller holds keeper->mutex or ->lock) */
extern int	idgen_keeper_errcode(void);
extern bool idgen_keeper_failure_passes(int sqlerrcode);
extern int	idgen_keeper_errcode_locked(IdgenKeeper *keeper);

/* keeper/main.c */
extern void idgen_keeper_register(void);

/* shared/reservation.c: the backends' waits for the keeper */
extern void idgen_keeper_wait(int64 need_ms, int64 deadline);
extern void idgen_keeper_wait_shard(int32 shard, uint64 position,
									IdgenReleaseChange change,
									int64 deadline);
extern Latch *idgen_keeper_latch(void);
extern void idgen_keeper_report_not_loaded(const char *name, bool always);

/* shared/storage.c (the rest of it, for the keeper only, in shared/storage.h) */
extern bool idgen_schema_trusted(Oid nspid);
extern Oid	idgen_extension_schema(void);

/*
 * Named generators (keeper/load.c).  A named layout's shard field has at most
 * this many bits; all their shards share one pool of generators, sized by
 * idgen.max_generator_shards.
 */
#define IDGEN_NAMED_MAX_SHARD_BITS 13
extern int	idgen_max_generators;
extern int	idgen_max_generator_shards;
extern Size idgen_registry_shmem_size(void);
extern void idgen_registry_shmem_init(void);

/*
 * The keeper loads the definitions for lookups of names it has not loaded
 * at most this often (one load answers every lookup made before it began),
 * so that lookups of unknown names, which any role can make, cannot keep
 * it from its reservations.  A commit that created or dropped a generator,
 * or changed its grants, is loaded at once.
 */
#define IDGEN_KEEPER_LOOKUP_LOAD_MS 100

/* backend/counterissue.c: counter values taken ahead are durable by a statement's end */
extern void idgen_counter_statement_end(void);

/* backend/definitions.c: DROP EXTENSION idgen keeps no generator's definition */
extern void idgen_check_drop_registry(Oid relid, bool cascade);

/*
 * Decoders refuse negative input (22023): no idgen layout produces one.
 * Returns id.
 */
static inline int64
idgen_check_id(int64 id)
{
	if (unlikely(id < 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ID %lld is negative", (long long) id),
				 errdetail("idgen never issues negative IDs, so this value did not come from idgen.")));
	return id;
}

/* base/decode.c */
IDGEN_NORETURN extern void idgen_report_part_out_of_range(const char *what,
														  int32 value,
														  int32 max);
IDGEN_NORETURN extern void idgen_refuse_pre_release(FunctionCallInfo fcinfo);

/* A node, shard or sequence value must be within 0..max (22003). */
static inline void
idgen_check_part(const char *what, int32 value, int32 max)
{
	if (unlikely(value < 0 || value > max))
		idgen_report_part_out_of_range(what, value, max);
}
extern TimestampTz idgen_ms_to_timestamptz(int64 ms);
extern TimestampTz idgen_spec_id_time(const IdgenSpec *spec, int64 id);
extern int64 idgen_spec_node_of(const IdgenSpec *spec, int64 id);
extern bool idgen_spec_tick_of(const IdgenSpec *spec, TimestampTz ts,
							   int64 *tick);
extern int64 idgen_spec_from_tick(const IdgenSpec *spec, int64 tick,
								  int64 above, int32 shard);

#endif							/* IDGEN_H */
