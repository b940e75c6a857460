/*-------------------------------------------------------------------------
 *
 * backend/named.c
 *	  Named generators by name: lookup, call sites, issuing and decoding.
 *
 * The backends' side of named generators: a name is looked up among the
 * slots (idgen_registry_find), asking the keeper to load definitions
 * committed since it last looked; a call site caches its slot, layout and
 * usage check in fn_extra; IDs are issued through the engine
 * (idgen_issue), a counter's values through idgen_issue_counter.  The
 * decoders and builders by name use only a definition: from its slot, or
 * on a standby from idgen_generator (idgen_registry_read_definition).  Of
 * the shared state it writes only the load requests, and the generators,
 * through the engine.
 *
 * IDENTIFICATION
 *	  src/backend/named.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/heapam.h"
#include "access/xact.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "common/pg_prng.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "storage/condition_variable.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "idgen.h"
#include "shared/storage.h"
#include "shared/slots.h"

/*
 * How long a lookup of a name not loaded yet waits for the keeper to load
 * the definitions: long enough for a keeper busy with a durable commit or an
 * etcd request, and it ends as soon as a load has answered the request.
 */
#define IDGEN_REGISTRY_LOOKUP_WAIT_MS 5000

/* the wait events of those waits (compat.h) */
static uint32 wait_event_lookup = 0;
static uint32 wait_event_grants = 0;

/* ---- the backends' side ---- */

/* idgen_next() and friends need the preload, and the registry. */
static void
idgen_registry_require(const char *funcname)
{
	(void) idgen_require_shared(funcname);
}

/*
 * The slot of a name, loading definitions committed since the keeper last
 * looked if need be.  Errors: 42704 for an unknown or dropped name.
 */
static int
idgen_registry_lookup(const char *name, bool allow_dropped)
{
	int			i = idgen_registry_find(name);

	/*
	 * An unknown name, or a dropped one that may have been re-created with
	 * another definition since (its new slot comes with a load): ask for a
	 * load and wait for it.
	 */
	if (i < 0 ||
		(!allow_dropped &&
		 pg_atomic_read_u32(&idgen_registry_slots[i].state) == IDGEN_SLOT_DROPPED))
	{
		uint64		request;
		int64		started = idgen_clock_monotonic_ms();
		int64		deadline = started + IDGEN_REGISTRY_LOOKUP_WAIT_MS;
		int64		next_wake = 0;
		Latch	   *latch;

		if (RecoveryInProgress())
			ereport(ERROR,
					(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
					 errmsg("named generators are not available during recovery"),
					 errdetail("The keeper loads their definitions, and it runs only on a primary."),
					 errhint("Issue IDs on the primary. Decoding by name works here, in database \"%s\".",
							 idgen_database)));
		idgen_registry_require_committed(name);

		/*
		 * A load that serves this request sees every definition whose
		 * commit this session could have seen before it.  The keeper
		 * answers such requests together, at most every
		 * IDGEN_KEEPER_LOOKUP_LOAD_MS (at once after a commit that created
		 * a generator), so a loop of unknown names waits rather than keeps
		 * it from its reservations.  The keeper may
		 * reset its latch in a wait of its own (a lock, a synchronous
		 * standby) and miss ours: set it again now and then.  A keeper
		 * that has stopped loading says why after a second (a failed one
		 * may be restarting); without a load the name is not unknown.
		 */
		request = pg_atomic_add_fetch_u64(&idgen_registry_shm->load_requests, 1);
		ConditionVariablePrepareToSleep(&idgen_shared->keeper.keeper.cv);
		for (;;)
		{
			int64		now = idgen_clock_monotonic_ms();

			if (pg_atomic_read_u64(&idgen_registry_shm->loads_served) >= request ||
				((i = idgen_registry_find(name)) >= 0 &&
				 pg_atomic_read_u32(&idgen_registry_slots[i].state) != IDGEN_SLOT_DROPPED) ||
				now >= deadline)
				break;
			if (now >= next_wake)
			{
				if (now - started >= 1000)
					idgen_keeper_report_not_loaded(name, false);
				latch = idgen_keeper_latch();
				if (latch != NULL)
					SetLatch(latch);
				next_wake = now + 50;
			}
			/* the keeper broadcasts when it has served the loads asked for */
			(void) ConditionVariableTimedSleep(&idgen_shared->keeper.keeper.cv,
											   Max(Min(next_wake, deadline) - now, 1),
											   idgen_wait_event("IdgenRegistryLookup",
																&wait_event_lookup));
		}
		ConditionVariableCancelSleep();
		/* what the load that served us installed */
		pg_read_barrier();
		i = idgen_registry_find(name);
		if (i < 0 && pg_atomic_read_u64(&idgen_registry_shm->loads_served) < request)
			idgen_keeper_report_not_loaded(name, true);
	}
	if (i >= 0 && !allow_dropped &&
		pg_atomic_read_u32(&idgen_registry_slots[i].state) == IDGEN_SLOT_DROPPED)
		idgen_registry_require_committed(name);
	if (i < 0 ||
		(!allow_dropped &&
		 pg_atomic_read_u32(&idgen_registry_slots[i].state) == IDGEN_SLOT_DROPPED))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("generator \"%s\" does not exist", name),
				 errhint("Create it with idgen_create_generator() in database \"%s\" (\"idgen.database\"); it is then usable in every database.",
						 idgen_database)));
	return i;
}

/*
 * What a call of idgen_next() keeps in fn_extra: the name it was last
 * called with and everything needed to compose an ID, so that the hot path
 * is the engine and a few shifts.
 */
typedef struct IdgenNamedCache
{
	bool		constant_name;	/* the name argument is a Const */
	char		name[NAMEDATALEN];
	int			namelen;
	int			slot;
	IdgenGenerator *gen;		/* the slot's generator; NULL if sharded */
	IdgenLayout layout;
	IdgenCompose compose;		/* with the node and constant bits */
	int			shard_field;	/* -1 if none */
	int32		max_shard;
	bool		counter;		/* a counter layout (no time field) */
	uint64		counter_limit;	/* its local values lie below this */
	uint64		int_limit;		/* and those whose ID fits integer */
	bool		int_limit_known;	/* int_limit computed */
	bool		leased;			/* embeds the node id under a lease */
	Oid			usage_user;		/* the user last allowed to draw here */
	uint32		usage_version;	/* the slot's acl_version then */
	uint32		usage_roles;	/* idgen_roles_changed then */
	/* during recovery (idgen_named_definition): the definition read last */
	char		standby_name[NAMEDATALEN];
	IdgenSpec  *standby_spec;	/* NULL until one is read */
} IdgenNamedCache;

/*
 * Is the name argument of this call site a constant?  Then it cannot
 * change for the life of the FmgrInfo, and once resolved it need not be
 * looked at again.  Only a Const counts: an external Param, which
 * get_fn_expr_arg_stable() also accepts, is re-bound between evaluations
 * of one expression state by PL/pgSQL's simple expressions.
 */
static bool
idgen_name_is_constant(FmgrInfo *flinfo)
{
	List	   *args;

	if (flinfo->fn_expr == NULL || !IsA(flinfo->fn_expr, FuncExpr))
		return false;
	args = ((FuncExpr *) flinfo->fn_expr)->args;
	return args != NIL && IsA(linitial(args), Const);
}

/*
 * Resolve the name argument (argument 0) of a call into its cache entry:
 * the slot, loading definitions committed since the keeper last looked if
 * need be (42704 for an unknown or, unless allow_dropped, dropped name).
 */
static pg_noinline IdgenNamedCache *
idgen_named_cache_lookup(FunctionCallInfo fcinfo, bool allow_dropped)
{
	IdgenNamedCache *cache = fcinfo->flinfo->fn_extra;
	text	   *name;
	int			len;
	const IdgenSpec *spec;
	char	   *cname;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("generator name must not be null")));
	name = PG_GETARG_TEXT_PP(0);
	len = VARSIZE_ANY_EXHDR(name);
	if (cache != NULL && cache->namelen == len &&
		memcmp(cache->name, VARDATA_ANY(name), len) == 0)
		return cache;

	cname = text_to_cstring(name);
	if (len >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("generator \"%s\" does not exist", cname)));
	if (cache == NULL)
		cache = fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(IdgenNamedCache));
	cache->constant_name = false;	/* invalid until complete */
	cache->namelen = -1;
	cache->usage_user = InvalidOid;
	cache->slot = idgen_registry_lookup(cname, allow_dropped);
	spec = &idgen_registry_slots[cache->slot].spec;
	idgen_slot_layout(cache->slot, &cache->layout);
	cache->gen = spec->shard_field < 0 ? idgen_slot_generator(cache->slot, 0) : NULL;
	idgen_compose_plan(spec, idgen_registry_slots[cache->slot].node_value,
					   &cache->compose);
	cache->counter = spec->time_field < 0;
	cache->counter_limit = cache->counter ? spec->counter.limit : 0;
	cache->int_limit_known = false; /* idgen_next_int() computes it */
	cache->leased = idgen_leases_on && spec->node_bits > 0;
	cache->shard_field = spec->shard_field;
	cache->max_shard = spec->shard_field < 0 ? -1 :
		(1 << spec->fields[spec->shard_field].bits) - 1;
	memcpy(cache->name, VARDATA_ANY(name), len);
	cache->namelen = len;
	cache->constant_name = idgen_name_is_constant(fcinfo->flinfo);
	return cache;
}

/*
 * The cache entry of this call's generator.  A slot is never reused while
 * the server runs (a dropped name keeps it, switched off), so an entry
 * stays right for as long as its name does.
 */
static inline IdgenNamedCache *
idgen_named_cache(FunctionCallInfo fcinfo, bool allow_dropped)
{
	IdgenNamedCache *cache = fcinfo->flinfo->fn_extra;

	if (likely(cache != NULL && cache->constant_name))
		return cache;
	return idgen_named_cache_lookup(fcinfo, allow_dropped);
}

/*
 * Role memberships and attributes (superuser, inherit) as this backend
 * knows them change: a call site allowed before must check again, as
 * has_privs_of_role() would answer anew.  Counted by an invalidation
 * callback, so the hot path compares one more word.
 */
static uint32 idgen_roles_changed = 1;

static void
idgen_roles_changed_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	idgen_roles_changed++;
}

/*
 * May the current user draw from the generator?  Superusers may; others
 * if it is granted to PUBLIC or to a role whose privileges they have
 * (idgen_grant_generator), as USAGE on a sequence.  42501 otherwise.
 */
static pg_noinline void
idgen_named_check_usage_slow(IdgenNamedCache *cache)
{
	IdgenNamedSlot *slot = &idgen_registry_slots[cache->slot];
	Oid			user = GetUserId();
	uint32		version = pg_atomic_read_u32(&slot->acl_version);
	bool		pub;
	int			n;
	Oid			roles[IDGEN_MAX_GRANTEES];
	bool		allowed;
	static bool callbacks_registered = false;

	if (!callbacks_registered)
	{
		CacheRegisterSyscacheCallback(AUTHMEMROLEMEM, idgen_roles_changed_callback, (Datum) 0);
		CacheRegisterSyscacheCallback(AUTHOID, idgen_roles_changed_callback, (Datum) 0);
		callbacks_registered = true;
	}

	/*
	 * A slot is published before the keeper loads its grants (a moment
	 * after a start): wait for them rather than refuse a granted role.
	 */
	if (version == 0 && !superuser_arg(user))
	{
		int64		deadline = idgen_clock_monotonic_ms() + IDGEN_REGISTRY_LOOKUP_WAIT_MS;
		Latch	   *latch;

		pg_atomic_fetch_add_u64(&idgen_registry_shm->load_requests, 1);
		ConditionVariablePrepareToSleep(&idgen_shared->keeper.keeper.cv);
		while ((version = pg_atomic_read_u32(&slot->acl_version)) == 0)
		{
			int64		now = idgen_clock_monotonic_ms();

			if (now >= deadline)
				ereport(ERROR,
						(errcode(idgen_keeper_errcode()),
						 errmsg("the grants of generator \"%s\" are not loaded", slot->name),
						 errdetail("The keeper loads them from database \"%s\" with the definitions.",
								   idgen_database),
						 errhint("Retry; if it persists, keeper_state and keeper_message in idgen_status() say why the keeper does not load.")));
			latch = idgen_keeper_latch();
			if (latch != NULL)
				SetLatch(latch);
			/* the keeper broadcasts once it has loaded grants */
			(void) ConditionVariableTimedSleep(&idgen_shared->keeper.keeper.cv,
											   Max(Min(deadline - now, 50), 1),
											   idgen_wait_event("IdgenGrantsLoad",
																&wait_event_grants));
		}
		ConditionVariableCancelSleep();
	}
	pg_read_barrier();
	SpinLockAcquire(&idgen_registry_shm->mutex);
	pub = slot->acl_public;
	n = slot->acl_n;
	memcpy(roles, slot->acl_roles, sizeof(Oid) * n);
	SpinLockRelease(&idgen_registry_shm->mutex);

	allowed = pub || superuser_arg(user);
	for (int i = 0; i < n && !allowed; i++)
		allowed = has_privs_of_role(user, roles[i]);
	if (!allowed)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for generator \"%s\"", slot->name),
				 errhint("A superuser can grant it with idgen_grant_generator('%s', role) in database \"%s\".",
						 slot->name, idgen_database)));
	cache->usage_user = user;
	cache->usage_version = version;
	cache->usage_roles = idgen_roles_changed;
}

/*
 * The hot path's part of it: three comparisons once a call site is
 * allowed: the user, the slot's grants, and role memberships.
 */
static inline void
idgen_named_check_usage(IdgenNamedCache *cache)
{
	if (likely(cache->usage_user == GetUserId() &&
			   cache->usage_roles == idgen_roles_changed &&
			   cache->usage_version ==
			   pg_atomic_read_u32(&idgen_registry_slots[cache->slot].acl_version)))
		return;
	idgen_named_check_usage_slow(cache);
}

/* The shard argument (argno) of a call: given iff the layout has one. */
static pg_noinline int32
idgen_named_shard_argument(FunctionCallInfo fcinfo, IdgenNamedCache *cache, int argno,
				  bool given)
{
	int32		shard;

	if (cache->shard_field < 0)
	{
		if (given)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("generator \"%s\" has no shard field", cache->layout.name),
					 errhint("Call it without a shard argument.")));
		return 0;
	}
	if (!given)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("generator \"%s\" needs a shard argument", cache->layout.name),
				 errhint("Pass the shard right after the name, as in idgen_next('%s', shard).", cache->layout.name)));
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("shard must not be null")));
	shard = PG_GETARG_INT32(argno);
	idgen_check_part("shard", shard, cache->max_shard);
	return shard;
}

/* The shard of a call; an unsharded layout called without one costs a test. */
static inline int32
idgen_named_shard(FunctionCallInfo fcinfo, IdgenNamedCache *cache, int argno,
				  bool given)
{
	if (likely(cache->shard_field < 0 && !given))
		return 0;
	return idgen_named_shard_argument(fcinfo, cache, argno, given);
}

/* The generator of a call's shard. */
static inline IdgenGenerator *
idgen_named_generator(IdgenNamedCache *cache, int32 shard)
{
	if (likely(cache->gen != NULL))
		return cache->gen;
	return idgen_slot_generator(cache->slot, shard);
}

/* The ID of local counter value c. */
static inline int64
idgen_counter_compose(IdgenNamedCache *cache, uint64 c)
{
	const IdgenSpec *spec = &idgen_registry_slots[cache->slot].spec;

	return (int64) ((idgen_counter_value(&spec->counter, c) << cache->compose.seq_shift) |
					cache->compose.fixed);
}

/*
 * Issue "count" positions (a time layout) or local values (a counter) of
 * the generator the cache names, between the two halves of the node-id
 * guard (idgen.h) when its IDs carry the leased node id: idgen_next,
 * idgen_next_int and idgen_next_batch issue through here alone.  A
 * generator switched off here (dropped, or its definition refused) is
 * reported.
 */
static inline uint64
idgen_named_issue(IdgenNamedCache *cache, int32 shard, uint64 count,
				  uint64 limit, const char *funcname)
{
	uint32		word = 0;
	uint64		position;

	if (unlikely(cache->leased))
		word = idgen_require_node_id(funcname);
	if (cache->counter)
		position = idgen_issue_counter(cache->slot, count, limit, word);
	else
	{
		IdgenGenerator *gen = idgen_named_generator(cache, shard);

		position = count == 1 ? idgen_issue(gen, &cache->layout) :
			idgen_issue_batch(gen, &cache->layout, count);
		if (unlikely(position == IDGEN_SWITCHED_OFF))
			idgen_report_switched_off(cache->slot);
	}
	if (unlikely(cache->leased))
		(void) idgen_issued_node(funcname, word);
	return position;
}

/*
 * idgen_next(name [, shard]): the next ID of a named generator.  Not
 * STRICT: a NULL name or shard is an error, never a NULL key.
 */
PG_FUNCTION_INFO_V1(idgen_next);
Datum
idgen_next(PG_FUNCTION_ARGS)
{
	IdgenNamedCache *cache;
	int32		shard;
	uint64		position;

	idgen_registry_require("idgen_next");
	cache = idgen_named_cache(fcinfo, false);
	idgen_named_check_usage(cache);
	shard = idgen_named_shard(fcinfo, cache, 1, PG_NARGS() > 1);
	position = idgen_named_issue(cache, shard, 1, cache->counter_limit, "idgen_next");
	if (cache->counter)
		PG_RETURN_INT64(idgen_counter_compose(cache, position));
	PG_RETURN_INT64(idgen_compose(&cache->compose, position, shard));
}

/*
 * The first local value of a counter whose ID would not fit integer (or
 * its limit, if all do; 0 if none does).  IDs grow with the local value
 * (stripes and segments keep the order, and the fixed bits do not
 * change), so the first is found by bisection.
 */
static uint64
idgen_counter_int_limit(IdgenNamedCache *cache)
{
	uint64		lo = 0;			/* every value below lo fits */
	uint64		hi = cache->counter_limit;	/* none at or above hi does */

	while (lo < hi)
	{
		uint64		mid = lo + (hi - lo) / 2;

		if (idgen_counter_compose(cache, mid) <= PG_INT32_MAX)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * idgen_next_int(name): the next ID of a counter generator narrow enough
 * for integer (a 31-bit layout such as "seq:31"), as integer.  22003
 * rather than overflow, and before a value is taken: a failed call
 * consumes nothing.
 */
PG_FUNCTION_INFO_V1(idgen_next_int);
Datum
idgen_next_int(PG_FUNCTION_ARGS)
{
	IdgenNamedCache *cache;
	uint64		position;
	int64		id;

	idgen_registry_require("idgen_next_int");
	cache = idgen_named_cache(fcinfo, false);
	idgen_named_check_usage(cache);
	if (!cache->counter)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("generator \"%s\" is not a counter generator", cache->layout.name),
				 errhint("idgen_next_int() is for counter layouts of at most 31 bits, such as \"seq:31\"; use idgen_next().")));
	if (!cache->int_limit_known)
	{
		cache->int_limit = idgen_counter_int_limit(cache);
		cache->int_limit_known = true;
	}
	position = idgen_named_issue(cache, 0, 1, cache->int_limit, "idgen_next_int");
	if (unlikely(position == IDGEN_COUNTER_BEYOND_LIMIT))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("ID of generator \"%s\" is out of range for type integer",
						cache->layout.name),
				 errdetail("Its next value would be above 2147483647; none was taken."),
				 errhint("Use idgen_next() and bigint, or a layout of at most 31 bits.")));
	id = idgen_counter_compose(cache, position);
	Assert(id <= PG_INT32_MAX);
	PG_RETURN_INT32((int32) id);
}

/*
 * idgen_next_batch(name, n) and idgen_next_batch(name, shard, n): n IDs in
 * one lock round trip.  The count is the last argument in both forms.
 */
static inline Datum
idgen_next_batch_of(FunctionCallInfo fcinfo, bool sharded)
{
	IdgenNamedCache *cache;
	int32		n;
	int32		shard;
	uint64		position;
	Datum	   *ids;

	idgen_registry_require("idgen_next_batch");
	cache = idgen_named_cache(fcinfo, false);
	idgen_named_check_usage(cache);
	n = idgen_check_batch_size(fcinfo, sharded ? 2 : 1);
	shard = idgen_named_shard(fcinfo, cache, 1, sharded);
	ids = palloc(sizeof(Datum) * n);
	position = idgen_named_issue(cache, shard, n, cache->counter_limit, "idgen_next_batch");
	if (cache->counter)
		for (int i = 0; i < n; i++, position++)
			ids[i] = Int64GetDatum(idgen_counter_compose(cache, position));
	else
		for (int i = 0; i < n; i++, position++)
			ids[i] = Int64GetDatum(idgen_compose(&cache->compose, position, shard));
	PG_RETURN_ARRAYTYPE_P(construct_array(ids, n, INT8OID, sizeof(int64),
										  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* idgen_next_batch(name, n); three arguments are a pre-release binding */
PG_FUNCTION_INFO_V1(idgen_next_batch);
Datum
idgen_next_batch(PG_FUNCTION_ARGS)
{
	if (PG_NARGS() != 2)
		idgen_refuse_pre_release(fcinfo);
	return idgen_next_batch_of(fcinfo, false);
}

/* idgen_next_batch(name, shard, n) */
PG_FUNCTION_INFO_V1(idgen_next_batch_shard);
Datum
idgen_next_batch_shard(PG_FUNCTION_ARGS)
{
	return idgen_next_batch_of(fcinfo, true);
}

/* ---- decoding and building by name ---- */

/* The spec of the generator named by argument 0, from its slot. */
static const IdgenSpec *
idgen_named_spec(FunctionCallInfo fcinfo, const char *funcname)
{
	IdgenNamedCache *cache;

	idgen_registry_require(funcname);
	cache = idgen_named_cache(fcinfo, true);
	return &idgen_registry_slots[cache->slot].spec;
}

/*
 * The spec of the generator named by argument 0, for a function that needs
 * its definition only: from its slot, as idgen_named_spec(), or during
 * recovery from idgen_generator (idgen_registry_read_definition).  *name
 * is its name, for messages.
 */
static const IdgenSpec *
idgen_named_definition(FunctionCallInfo fcinfo, const char *funcname,
					   const char **name)
{
	IdgenNamedCache *cache;
	IdgenSpec  *spec;
	char	   *cname;

	idgen_registry_require(funcname);
	if (likely(!RecoveryInProgress()))
	{
		cache = idgen_named_cache(fcinfo, true);
		*name = idgen_registry_slots[cache->slot].name;
		return &idgen_registry_slots[cache->slot].spec;
	}
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("generator name must not be null")));
	cname = text_to_cstring(PG_GETARG_TEXT_PP(0));
	*name = cname;
	if (strlen(cname) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("generator \"%s\" does not exist", cname)));

	/*
	 * A report decodes every row of a table: the call site keeps the
	 * definition it read for as long as it lives, its SQL statement (a
	 * PL/pgSQL expression's call site lives for the transaction).  The rest of the cache stays as a lookup on a primary
	 * leaves a failed one (namelen -1), so that after a promotion in the
	 * middle of the statement the primary's path looks the name up.
	 */
	cache = fcinfo->flinfo->fn_extra;
	if (cache != NULL && cache->standby_spec != NULL &&
		strcmp(cache->standby_name, cname) == 0)
		return cache->standby_spec;
	spec = palloc(sizeof(IdgenSpec));
	idgen_registry_read_definition(cname, spec);
	if (cache == NULL)
	{
		cache = fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(IdgenNamedCache));
		cache->namelen = -1;
	}
	if (cache->standby_spec == NULL)
		cache->standby_spec = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(IdgenSpec));
	*cache->standby_spec = *spec;
	strlcpy(cache->standby_name, cname, NAMEDATALEN);
	return cache->standby_spec;
}

/* 22023 unless the spec has a time field. */
static void
idgen_require_time_field(const IdgenSpec *spec, const char *name)
{
	if (spec->time_field < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("generator \"%s\" has no time field", name),
				 errdetail("It is a counter generator.")));
}

/* The spec of a named generator with a time field (22023 otherwise). */
static const IdgenSpec *
idgen_named_time_spec(FunctionCallInfo fcinfo, const char *funcname)
{
	const IdgenSpec *spec = idgen_named_spec(fcinfo, funcname);

	idgen_require_time_field(spec,
							 ((IdgenNamedCache *) fcinfo->flinfo->fn_extra)->layout.name);
	return spec;
}

PG_FUNCTION_INFO_V1(idgen_time);
Datum
idgen_time(PG_FUNCTION_ARGS)
{
	const char *name;
	const IdgenSpec *spec = idgen_named_definition(fcinfo, "idgen_time", &name);
	int64		id = PG_GETARG_INT64(1);

	idgen_require_time_field(spec, name);
	PG_RETURN_TIMESTAMPTZ(idgen_spec_id_time(spec, id));
}

PG_FUNCTION_INFO_V1(idgen_decode);
Datum
idgen_decode(PG_FUNCTION_ARGS)
{
	const char *name;
	const IdgenSpec *spec = idgen_named_definition(fcinfo, "idgen_decode", &name);

	PG_RETURN_DATUM(idgen_spec_decode_jsonb(spec, PG_GETARG_INT64(1)));
}

/* A field value for a builder: 22003 outside 0 .. 2^bits - 1. */
static uint64
idgen_field_value(const IdgenField *f, int64 value)
{
	if (value < 0 || (f->bits < 63 && value >= (INT64CONST(1) << f->bits)))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("%s " INT64_FORMAT " is out of range", f->name, value),
				 errdetail("The field \"%s\" holds 0 to " INT64_FORMAT ".", f->name,
						   (INT64CONST(1) << f->bits) - 1)));
	return ((uint64) value) << f->shift;
}

/*
 * The tick of a time, checked against the layout's range (22003, in the
 * words of the named builders: the fixed ones name their layout).
 */
static int64
idgen_spec_tick(const IdgenSpec *spec, TimestampTz ts)
{
	int64		tick;

	if (likely(idgen_spec_tick_of(spec, ts, &tick)))
		return tick;
	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp is out of range for the layout")));
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("timestamp is out of range for the layout"),
			 errdetail("Its time field counts %d ms ticks from %s, " INT64_FORMAT " of them.",
					   spec->unit_ms,
					   timestamptz_to_str(idgen_unix_ms_to_timestamptz(spec->epoch_unix_ms)),
					   spec->tick_limit)));
	pg_unreachable();
}

/*
 * idgen_from_time(name, [shard,] ts): the smallest ID of the tick of ts
 * (and shard), for range scans.  Fields more significant than time keep
 * this server's values (node, constants), the shard field the argument,
 * the rest are 0.
 */
static Datum
idgen_from_time_of(FunctionCallInfo fcinfo, bool sharded)
{
	const IdgenSpec *spec = idgen_named_time_spec(fcinfo, "idgen_from_time");
	IdgenNamedCache *cache = fcinfo->flinfo->fn_extra;
	int64		tick = idgen_spec_tick(spec, PG_GETARG_TIMESTAMPTZ(sharded ? 2 : 1));
	int32		shard = idgen_named_shard(fcinfo, cache, 1, sharded);

	PG_RETURN_INT64(idgen_spec_from_tick(spec, tick, (int64) cache->compose.fixed, shard));
}

/* idgen_from_time(name, ts); three arguments are a pre-release binding */
PG_FUNCTION_INFO_V1(idgen_from_time);
Datum
idgen_from_time(PG_FUNCTION_ARGS)
{
	if (PG_NARGS() != 2)
		idgen_refuse_pre_release(fcinfo);
	return idgen_from_time_of(fcinfo, false);
}

/* idgen_from_time(name, shard, ts) */
PG_FUNCTION_INFO_V1(idgen_from_time_shard);
Datum
idgen_from_time_shard(PG_FUNCTION_ARGS)
{
	return idgen_from_time_of(fcinfo, true);
}

/*
 * idgen_from_parts(name, parts jsonb): compose an ID from its fields by
 * name.  "time" (a timestamptz as text) is required; other fields default
 * to 0, constants to their constant.  Unknown keys are 22023, values out
 * of range 22003.
 */
PG_FUNCTION_INFO_V1(idgen_from_parts);
Datum
idgen_from_parts(PG_FUNCTION_ARGS)
{
	const char *name;
	const IdgenSpec *spec = idgen_named_definition(fcinfo, "idgen_from_parts", &name);
	Jsonb	   *parts = PG_GETARG_JSONB_P(1);
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	uint64		id = 0;
	bool		have_time = false;

	if (!JB_ROOT_IS_OBJECT(parts))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("parts must be a JSON object of fields")));

	for (int f = 0; f < spec->nfields; f++)
		if (spec->fields[f].kind == IDGEN_FIELD_CONST)
			id |= (uint64) spec->fields[f].constant << spec->fields[f].shift;

	it = JsonbIteratorInit(&parts->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		char	   *key;
		int			f;
		const IdgenField *field = NULL;

		if (tok != WJB_KEY)
			continue;
		key = pnstrdup(v.val.string.val, v.val.string.len);
		for (f = 0; f < spec->nfields; f++)
			if (strcmp(spec->fields[f].name, key) == 0)
			{
				field = &spec->fields[f];
				break;
			}
		if (field == NULL && strcmp(key, "stripe") == 0 && spec->time_field < 0)
		{
			/* decode's extra key: implied by seq, so skipped here */
			(void) JsonbIteratorNext(&it, &v, true);
			continue;
		}
		if (field == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("generator has no field \"%s\"", key),
					 errhint("Its layout is \"%s\".", idgen_spec_text(spec))));
		tok = JsonbIteratorNext(&it, &v, true);
		if (field->kind == IDGEN_FIELD_TIME)
		{
			char	   *str;

			if (v.type != jbvString)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("field \"time\" must be a timestamp string")));
			str = pnstrdup(v.val.string.val, v.val.string.len);
			id |= (uint64) idgen_spec_tick(spec,
										   DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
																				   CStringGetDatum(str),
																				   ObjectIdGetDatum(InvalidOid),
																				   Int32GetDatum(-1))))
				<< field->shift;
			have_time = true;
		}
		else
		{
			int64		value;

			if (v.type != jbvNumeric)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("field \"%s\" must be a number", field->name)));
			value = DatumGetInt64(DirectFunctionCall1(numeric_int8,
													  NumericGetDatum(v.val.numeric)));
			if (field->kind == IDGEN_FIELD_CONST)
			{
				if (value != field->constant)
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("field \"%s\" is the constant " INT64_FORMAT,
									field->name, field->constant)));
				continue;
			}
			id |= idgen_field_value(field, value);
		}
	}
	if (!have_time && spec->time_field >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("parts need a \"time\" field")));
	PG_RETURN_INT64((int64) id);
}
