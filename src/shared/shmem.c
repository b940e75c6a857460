/*-------------------------------------------------------------------------
 *
 * shared/shmem.c
 *	  Shared memory for idgen's generator states.
 *
 * One IdgenShared block holds the keeper's reservation state, the
 * snowflake generator and the 8,192 instagram shard generators, each on
 * its own cache line(s) with its own lock (see idgen.h).  The block exists
 * only when idgen is in shared_preload_libraries; without it idgen_shared
 * stays NULL and the generators refuse to run, while the decoders, which
 * need no shared state, keep working.
 *
 * The keeper's structure and the shard control are under one LWLock, of a
 * named tranche requested here (IDGEN_LWLOCK_TRANCHE): PostgreSQL 15 to 18
 * register a named tranche's name in the postmaster, so every backend
 * inherits it and pg_stat_activity shows a wait for it as wait_event
 * "idgen" (wait_event_type "LWLock").  Lock order: that LWLock, then a
 * generator's or the keeper's spinlock, never the other way round and
 * never with another LWLock (src/README).
 *
 * IDENTIFICATION
 *	  src/shared/shmem.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "idgen.h"

IdgenShared *idgen_shared = NULL;

/*
 * The fixed generators, one entry per layout: what visits them all (this
 * file's initialisation, the keeper's floors, a claimed node id's floor)
 * walks this table.  Only the instagram shards are ever switched off.
 */
const IdgenFixedGenerator idgen_fixed_generators[IDGEN_NFIXED] = {
	{&idgen_builtin_snowflake.layout, offsetof(IdgenShared, snowflake), 1, true},
	{&idgen_uuidv7_layout, offsetof(IdgenShared, uuidv7), 1, true},
	{&idgen_flake128_layout, offsetof(IdgenShared, flake128), 1, true},
	{&idgen_builtin_instagram.layout, offsetof(IdgenShared, instagram),
	IDGEN_INSTAGRAM_NSHARDS, false},
};

/* Generator i (0 unless the layout has one per shard) of a fixed layout. */
IdgenGenerator *
idgen_fixed_generator(const IdgenFixedGenerator *fixed, int i)
{
	Assert(i >= 0 && i < fixed->ngenerators);
	return &((IdgenGeneratorPadded *) ((char *) idgen_shared +
									   fixed->shared_offset))[i].gen;
}

/* The node-id lease's state at server start (lease/protocol.c runs the protocol). */
void
idgen_lease_init(IdgenLease *lease)
{
	SpinLockInit(&lease->mutex);
	lease->state = idgen_leases_on && idgen_node_id != -1 ?
		IDGEN_LEASE_CLAIMING : IDGEN_LEASE_OFF;
	lease->generation = 0;
	lease->lease_id = 0;
	lease->node_id = -1;
	lease->deadline_ms = 0;
	lease->recorded_unix_ms = 0;
	lease->fence_until_ms = 0;
	lease->since = 0;
	lease->renewals = 0;
	lease->holder[0] = '\0';
	lease->error[0] = '\0';
	lease->error_config = false;
	lease->holder_is_self = false;
	lease->error_at = 0;
}

/* A generator's state at server start: nothing issued yet. */
void
idgen_generator_init(IdgenGenerator *gen, bool owned)
{
	SpinLockInit(&gen->mutex);
	gen->owned = owned;
	gen->at.last = 0;
	gen->clock_tick = 0;
	gen->issued = 0;
	gen->borrowed = 0;
	gen->waits = 0;
	gen->regressions = 0;
}

/* From the shmem_request_hook (idgen.c): IdgenShared and its lock. */
void
idgen_shmem_request(void)
{
	RequestAddinShmemSpace(sizeof(IdgenShared));
	RequestNamedLWLockTranche(IDGEN_LWLOCK_TRANCHE, 1);
}

/*
 * From the shmem_startup_hook (idgen.c): IdgenShared, initialised if new.
 * Caller holds AddinShmemInitLock.
 */
void
idgen_shmem_init(void)
{
	bool		found;

	idgen_shared = ShmemInitStruct("idgen", sizeof(IdgenShared), &found);
	if (!found)
	{
		/*
		 * Shard ownership starts as the postmaster read idgen.shards; from
		 * here on the keeper applies changes of the setting (keeper/main.c).
		 */
		idgen_keeper_init(KEEPER(idgen_shared));
		pg_atomic_init_u32(&idgen_shared->lease_word.word, 0);
		pg_atomic_init_u64(&idgen_shared->lease_deadline.ms, 0);
		idgen_lease_init(&idgen_shared->lease);
		pg_atomic_init_u64(&idgen_shared->issued.ms, 0);
		for (int k = 0; k < IDGEN_NFIXED; k++)
		{
			const IdgenFixedGenerator *fixed = &idgen_fixed_generators[k];

			for (int i = 0; i < fixed->ngenerators; i++)
				idgen_generator_init(idgen_fixed_generator(fixed, i),
									 fixed->ngenerators == 1 ||
									 idgen_owns_shard(i));
		}
		memset(idgen_shared->shards.floor_pending, 0,
			   sizeof(idgen_shared->shards.floor_pending));
		memset(idgen_shared->shards.floor_durable, 0,
			   sizeof(idgen_shared->shards.floor_durable));
		memset(idgen_shared->shards.release_pending, 0,
			   sizeof(idgen_shared->shards.release_pending));
		memset(idgen_shared->shards.released, 0,
			   sizeof(idgen_shared->shards.released));
		idgen_shared->shards.last_event = 0;
		memcpy(idgen_shared->shards.applied, idgen_owned_shards,
			   sizeof(idgen_shared->shards.applied));
	}
}

/* The error of idgen_require_shared() (idgen.h), kept off the hot path. */
void
idgen_report_not_preloaded(const char *funcname)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("%s() requires idgen to be loaded via \"shared_preload_libraries\"",
					funcname),
			 errhint("Add idgen to \"shared_preload_libraries\" in postgresql.conf and restart the server.")));
	pg_unreachable();
}

/*
 * Functions with a server-wide effect check this in C, not only by ACL:
 * a GRANT in one database must not hand a non-superuser a lever on every
 * database's IDs.
 */
void
idgen_require_superuser(const char *funcname)
{
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for function %s", funcname),
				 errdetail("%s() changes how every database of the server issues IDs.",
						   funcname),
				 errhint("Only superusers may call it, whatever EXECUTE privileges say.")));
}

/*
 * A standby replays its primary's rows; IDs it issued could collide with
 * the primary's, so it issues none.
 */
void
idgen_refuse_in_recovery(const char *funcname)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot call %s() during recovery", funcname),
				 errdetail("IDs are issued only by a primary server."),
				 errhint("Call %s() on the primary.", funcname)));
}

#ifdef IDGEN_TEST_HOOKS
/*
 * idgen_test_hold_keeper_lock(ms), in a test build only, and declared by
 * no install script: t/041_keeper_lock.pl creates it, to hold the keeper's
 * LWLock exclusively for ms while other sessions wait for it, and check
 * that pg_stat_activity names their wait after the tranche.  Interrupts
 * are held as long (LWLockAcquire holds them), so ms must be short; the
 * keeper waits too.  Superuser only.
 */
PG_FUNCTION_INFO_V1(idgen_test_hold_keeper_lock);
Datum
idgen_test_hold_keeper_lock(PG_FUNCTION_ARGS)
{
	int32		ms = PG_GETARG_INT32(0);
	IdgenShared *shared = idgen_require_shared("idgen_test_hold_keeper_lock");

	idgen_require_superuser("idgen_test_hold_keeper_lock");
	if (ms < 0 || ms > 60000)
		elog(ERROR, "idgen_test_hold_keeper_lock() holds for 0 to 60000 ms");
	LWLockAcquire(KEEPER(shared)->lock, LW_EXCLUSIVE);
	pg_usleep(ms * 1000L);
	LWLockRelease(KEEPER(shared)->lock);
	PG_RETURN_VOID();
}

/*
 * idgen_test_hold_keeper_ticks(n), in a test build only, declared by
 * t/044_keeper_one_write.pl itself: the keeper's ticks (its reservations,
 * counters, shard floors; keeper/main.c) run n more times, then none until
 * this is called again; n < 0 lets them all run again.  Loads go on.  So
 * a test can have callers queue their requests, then let exactly one
 * tick serve them, and count its durable commits with
 * idgen_test_durable_commits().  Superuser only.
 */
PG_FUNCTION_INFO_V1(idgen_test_hold_keeper_ticks);
Datum
idgen_test_hold_keeper_ticks(PG_FUNCTION_ARGS)
{
	int32		n = PG_GETARG_INT32(0);
	IdgenShared *shared = idgen_require_shared("idgen_test_hold_keeper_ticks");

	idgen_require_superuser("idgen_test_hold_keeper_ticks");
	pg_atomic_write_u32(&KEEPER(shared)->test_tick_hold,
						n < 0 ? 0 : (uint32) n + 1);
	PG_RETURN_VOID();
}

/*
 * idgen_test_durable_commits(), in a test build only: how many of the
 * keeper's commits that wrote something were made durable
 * (idgen_keeper_commit_durably) since shared memory was made.  Superuser
 * only, as every test hook.
 */
PG_FUNCTION_INFO_V1(idgen_test_durable_commits);
Datum
idgen_test_durable_commits(PG_FUNCTION_ARGS)
{
	IdgenShared *shared = idgen_require_shared("idgen_test_durable_commits");

	idgen_require_superuser("idgen_test_durable_commits");
	PG_RETURN_INT64((int64) pg_atomic_read_u64(&KEEPER(shared)->test_durable_commits));
}
#endif							/* IDGEN_TEST_HOOKS */

/*
 * The keeper's shared state (keeper/main.c): initial values, and its state's
 * name for idgen_status().
 */
const char *
idgen_keeper_state_name(IdgenKeeperState state)
{
	switch (state)
	{
		case IDGEN_KEEPER_STARTING:
			return "starting";
		case IDGEN_KEEPER_READY:
			return "ready";
		case IDGEN_KEEPER_FAILED:
			return "failed";
		case IDGEN_KEEPER_EPOCH_CHANGED:
			return "epoch changed";
	}
	return "unknown";
}

void
idgen_keeper_init(IdgenKeeper *keeper)
{
	pg_atomic_init_u64(&keeper->hwm_ms, 0);
	pg_atomic_init_u64(&keeper->want_ms, 0);
	pg_atomic_init_u32(&keeper->floors_pending, 0);
#ifdef IDGEN_TEST_HOOKS
	pg_atomic_init_u64(&keeper->test_durable_commits, 0);
	pg_atomic_init_u32(&keeper->test_tick_hold, 0);
#endif
	ConditionVariableInit(&keeper->cv);
	keeper->lock = &(GetNamedLWLockTranche(IDGEN_LWLOCK_TRANCHE))->lock;
	SpinLockInit(&keeper->mutex);
	keeper->state = IDGEN_KEEPER_STARTING;
	keeper->latch = NULL;
	keeper->durable_unix_ms = 0;
	keeper->writes = 0;
	keeper->waits = 0;
	keeper->starts = 0;
	keeper->failures = 0;
	keeper->failed_errcode = 0;
	keeper->claim_blocked = false;
	strlcpy(keeper->message,
			"the keeper background worker has not started yet (if the server log says \"too many background workers\", raise \"max_worker_processes\" and restart)",
			sizeof(keeper->message));
	keeper->floor_message[0] = '\0';
}
