/*-------------------------------------------------------------------------
 *
 * keeper/main.c
 *	  The keeper: a background worker that makes idgen's reservation durable.
 *
 * Guarantee: no ID with timestamp t is issued unless a reservation > t is
 * durable (the reservation is an exclusive bound).  Then after an immediate
 * stop, a crash that resets shared memory, a restart with an earlier clock,
 * or the promotion of a standby, every new ID can be put above every ID
 * issued before: the keeper raises each generator's floor past the durable
 * reservation before it lets any generator run.
 *
 * Durability.  A value is published in shared memory (IdgenKeeper.hwm_ms)
 * only after its commit is known flushed locally and, when
 * synchronous_standby_names is set, confirmed flushed by the synchronous
 * standbys: synchronous_commit is forced to "on" before every commit,
 * whatever a reload says, and the commit's end is checked against the
 * flush and sync-rep positions afterwards, because a cancelled
 * synchronous-replication wait lets a commit return with only a warning.
 *
 * Storage and trust.  shared/storage.c finds the objects that hold the durable
 * state by OID, checks that only superusers control them, and reads and
 * writes them.  The keeper runs as the bootstrap superuser; it pins the
 * settings it depends on (keeper_settings) whatever the database's or
 * role's defaults say.
 *
 * Lost state.  If the reservation and the epoch record are both missing
 * when shared memory is new, this is either the first start or a loss
 * (extension dropped and re-created, idgen.database pointed elsewhere,
 * sequences reset).  The file IDGEN_MARKER_FILE in the data directory,
 * written once durable state first exists, tells the two apart.  After a
 * loss, IDs of a burst may have run up to idgen.max_lead ahead of the
 * clock, so every generator is floored at now + max_lead + 1 and a warning
 * is logged; an epoch changed at the same time cannot be detected any
 * more (README).  If only one of the two is missing the state is refused
 * as incomplete.  While shared memory lives, a missing or lowered value is
 * restored from what was published.
 *
 * Timing.  While IDs are being issued, the keeper keeps the reservation
 * idgen.reservation ahead of the clock, extending it when half of that is
 * left, so generators do not wait.  A generator that outruns it (a burst
 * borrowing timestamps ahead of the clock) posts the millisecond it needs
 * in want_ms, sets the keeper's latch and sleeps on the condition variable.
 * An idle server writes nothing; every two seconds the keeper only re-reads
 * its durable state, and restores it if it went missing or backwards.
 *
 * Failure.  Any error in the keeper is recorded in shared memory and the
 * worker exits; the postmaster starts it again, and consecutive failures
 * back off up to IDGEN_KEEPER_MAX_BACKOFF_MS.  Meanwhile the generators use
 * up what is already reserved, then fail with 55000 naming the problem:
 * never do they fall back to the bare clock.
 *
 * Shard floors and releases.  keeper/shards.c writes and reads them; this
 * loop decides when, and owns the transaction they are written in.
 *
 * Rounds.  Each tick is one round (idgen_keeper_tick): the shard floors,
 * the counters' restarts or reservations and the time reservation it
 * plans are written in one transaction and made durable by one commit,
 * then published, so that a busy server pays one WAL flush and one wait
 * for the synchronous standbys per tick, not one per kind of write.
 *
 * Locking.  The keeper's structure (its messages, its durable value and
 * count of writes) and the shard control are under IdgenKeeper.lock, an
 * LWLock; the few words a waiting backend reads on every turn (the state
 * and what its SQLSTATE is made of, the latch) are under IdgenKeeper.mutex,
 * a spinlock, taken inside the LWLock: the state is changed with both held,
 * so that it agrees with its message.  The keeper is the only process that
 * writes them.  Neither is held across a transaction, a sleep, an error or
 * another lock (SyncRepLock is taken with neither held), so an error's
 * longjmp finds only what LWLockReleaseAll() frees.  hwm_ms, want_ms and
 * floors_pending are atomics (only the keeper writes hwm_ms, once the
 * value is durable).  Waiting backends sleep on IdgenKeeper.cv
 * (shared/reservation.c), which the keeper broadcasts after each change.
 * src/README lists every lock and their order.
 *
 * IDENTIFICATION
 *	  src/keeper/main.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "replication/walsender_private.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

#include "idgen.h"
#include "shared/storage.h"
#include "keeper/keeper.h"
#include "keeper/shards.h"
#include "lease/protocol.h"

/* background worker entry point, looked up by name */
PGDLLEXPORT void idgen_keeper_main(Datum main_arg);

/* reset at every turn of the worker's loop */
static MemoryContext keeper_cxt = NULL;

/* whether this keeper got its database connection */
static bool keeper_connected = false;

/*
 * Set just before the connection is attempted: a keeper terminated while it
 * backs off (SIGTERM, pg_terminate_backend(), a fast shutdown) has not
 * failed to connect, and must not be recorded as if it had.
 */
static bool keeper_connecting = false;

/* wait event ids, registered on first use (compat.h) */
static uint32 wait_event_main = 0;

static void idgen_keeper_reserve_to(int64 target_ms);
static void idgen_keeper_note_durable(int64 unix_ms);

/* how often the keeper re-reads its durable state */
#define IDGEN_KEEPER_CHECK_MS 2000

/* the longest pause between two failed keeper runs */
#define IDGEN_KEEPER_MAX_BACKOFF_MS 30000

/*
 * Settings the keeper depends on, pinned over whatever the configuration,
 * the database or the role set.  search_path matters only to CREATE
 * EXTENSION (which sets its own); the others keep a commit synchronous,
 * writable and free of timeouts that would turn into spurious failures.
 */
static const char *const keeper_settings[][2] = {
	{"search_path", "pg_catalog, pg_temp"},
	{"synchronous_commit", "on"},
	{"default_transaction_read_only", "off"},
	{"default_transaction_isolation", "read committed"},
	{"statement_timeout", "0"},
	{"lock_timeout", "0"},
	{"idle_in_transaction_session_timeout", "0"},
	{"default_tablespace", ""},
	{"default_table_access_method", "heap"},
	{"session_replication_role", "origin"},
};

/*
 * Called from _PG_init while preloading.  No keeper in binary-upgrade mode:
 * pg_upgrade's server must not write to user databases.
 */
void
idgen_keeper_register(void)
{
	BackgroundWorker worker;

	if (IsBinaryUpgrade)
		return;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* a standby issues nothing; its keeper starts when it is promoted */
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	strlcpy(worker.bgw_library_name, "idgen", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "idgen_keeper_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "idgen keeper", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "idgen keeper", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

/* Set the keeper's state and message, and wake everyone who waits on it. */
static void
idgen_keeper_set_state(IdgenKeeperState state, const char *message)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);

	LWLockAcquire(keeper->lock, LW_EXCLUSIVE);
	strlcpy(keeper->message, message, sizeof(keeper->message));
	SpinLockAcquire(&keeper->mutex);
	keeper->state = state;
	SpinLockRelease(&keeper->mutex);
	LWLockRelease(keeper->lock);
	ConditionVariableBroadcast(&keeper->cv);
}

/*
 * Replace the keeper's message, and with if_ready only while its state is
 * "ready": a word on the last round must not replace the message of
 * another state.  Keeper process only.
 */
static void
idgen_keeper_set_message(const char *message, bool if_ready)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);

	LWLockAcquire(keeper->lock, LW_EXCLUSIVE);
	if (!if_ready || keeper->state == IDGEN_KEEPER_READY)
		strlcpy(keeper->message, message, sizeof(keeper->message));
	LWLockRelease(keeper->lock);
}

/*
 * With "idgen.node_id" = 'auto' the keeper starts only once it has claimed
 * a node id in etcd.  While it waits, say so, and whether etcd refuses a
 * setting someone has to fix: waits for the keeper then fail with 55000,
 * not 55P03 (idgen_keeper_errcode_locked).  etcd's own words are for
 * pg_monitor (idgen_lease_status()) and the log, not in the message.
 * waiting false: claimed, or not waiting; keeper process only.
 */
static void
idgen_keeper_note_claim_wait(bool waiting)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	bool		blocked = waiting && idgen_lease_claim_blocked();
	bool		changed;

	LWLockAcquire(keeper->lock, LW_EXCLUSIVE);
	SpinLockAcquire(&keeper->mutex);
	changed = keeper->claim_blocked != blocked;
	keeper->claim_blocked = blocked;
	SpinLockRelease(&keeper->mutex);
	if (waiting && keeper->state == IDGEN_KEEPER_STARTING)
		strlcpy(keeper->message, blocked ?
				"the keeper waits to claim a node id in etcd (\"idgen.node_id\" is 'auto'), and etcd refuses a setting; idgen_lease_status() and the server log say which" :
				"the keeper waits to claim a node id in etcd (\"idgen.node_id\" is 'auto')",
				sizeof(keeper->message));
	LWLockRelease(keeper->lock);
	if (changed)
		ConditionVariableBroadcast(&keeper->cv);
}

/* Record a failure of the keeper, and why, and wake everyone who waits. */
static void
idgen_keeper_set_failed(int sqlerrcode, const char *message)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);

	LWLockAcquire(keeper->lock, LW_EXCLUSIVE);
	strlcpy(keeper->message, message, sizeof(keeper->message));
	SpinLockAcquire(&keeper->mutex);
	keeper->failed_errcode = sqlerrcode;
	keeper->state = IDGEN_KEEPER_FAILED;
	SpinLockRelease(&keeper->mutex);
	LWLockRelease(keeper->lock);
	ConditionVariableBroadcast(&keeper->cv);
}

/* ---- the worker: transactions (trust: shared/storage.c) ---- */

static volatile sig_atomic_t keeper_terminating = false;
static bool keeper_parking = false;

static void
idgen_keeper_begin(const char *activity)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();

	/*
	 * A SIGTERM that came between transactions is taken at the loop's next
	 * look; no other transaction, which could wait for a lock or a
	 * synchronous standby unbounded, begins meanwhile: die as any backend.
	 */
	if (keeper_terminating && !keeper_parking)
	{
		ProcDiePending = true;
		InterruptPending = true;
		CHECK_FOR_INTERRUPTS();
	}
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, activity);
}

static void
idgen_keeper_commit(void)
{
	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextSwitchTo(keeper_cxt);
	pgstat_report_activity(STATE_IDLE, NULL);
}

/*
 * The running server's server_version_num: the minor release whose
 * private structures the keeper reads (compat.h), which may be another
 * than the one whose headers idgen was built with.
 */
static int
idgen_server_version_num(void)
{
	static int	version_num = 0;

	if (version_num == 0)
		version_num = atoi(GetConfigOption("server_version_num", false, false));
	return version_num;
}

/*
 * Commit, and make sure that what was written is durable: flushed here,
 * and flushed by the synchronous standbys if synchronous_standby_names is
 * set.  The commit itself waits for both, but a cancelled (or terminated)
 * synchronous-replication wait returns with only a warning, so we check
 * the positions afterwards and throw if the commit is not covered: the
 * caller then publishes nothing.
 */
static void
idgen_keeper_commit_durably(const char *what)
{
	XLogRecPtr	before = XactLastCommitEnd;
	XLogRecPtr	end;

	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
	idgen_keeper_commit();

	end = XactLastCommitEnd;
	if (end == before)
		return;					/* nothing was written */

	if (GetFlushRecPtr(NULL) < end)
		ereport(ERROR,
				(errcode(ERRCODE_IDGEN_RETRY),
				 errmsg("%s was committed but not flushed to WAL", what)));

	/*
	 * The commit waited (or should have) if the walsenders consider
	 * synchronous standbys defined, or if this process's own copy of
	 * synchronous_standby_names says so (a reload it has not processed
	 * yet, or one the checkpointer has not yet passed on): either way the
	 * commit must be confirmed.
	 */
	if (max_wal_senders > 0)
	{
		XLogRecPtr	confirmed;
		bool		defined;

		LWLockAcquire(SyncRepLock, LW_SHARED);
		defined = idgen_sync_standbys_defined(IDGEN_SYNC_STANDBYS_BYTE(WalSndCtl),
											  idgen_server_version_num());
		confirmed = WalSndCtl->lsn[SYNC_REP_WAIT_FLUSH];
		LWLockRelease(SyncRepLock);
		if ((defined || (SyncRepStandbyNames != NULL && SyncRepStandbyNames[0] != '\0')) &&
			confirmed < end)
			ereport(ERROR,
					(errcode(ERRCODE_IDGEN_RETRY),
					 errmsg("%s was not confirmed by the synchronous standbys", what),
					 errdetail("The wait for \"synchronous_standby_names\" ended before they confirmed it (cancelled or terminated); nothing is published until a commit is confirmed.")));
	}
#ifdef IDGEN_TEST_HOOKS
	pg_atomic_fetch_add_u64(&KEEPER(idgen_shared)->test_durable_commits, 1);
#endif
}

/* ---- the worker: loading, reserving, floors ---- */

/* The definitions, their grants and the counters' states, if the tables exist. */
static void
idgen_keeper_load_definitions(const IdgenKeeperObjects *objs)
{
	if (OidIsValid(objs->registry))
		idgen_registry_load(objs->registry);
	if (OidIsValid(objs->registry) && OidIsValid(objs->grants))
		idgen_registry_load_grants(objs->grants);
	if (OidIsValid(objs->counters))
		idgen_registry_load_counters(objs->counters);
}

/*
 * The load into new shared memory (a start, a crash, a promotion), where
 * nothing has been issued yet: every generator's floor is raised above the
 * durable reservation, or, if the reservation was lost, above anything a
 * burst before the loss could have issued, and the shard floors applied.
 * An epoch record never becomes durable alone (a start that found it
 * without a reservation would refuse the state as incomplete), so a new
 * one is written with a reservation at the floor or the clock.  Caller has
 * begun the transaction; false, after committing it, if the state is
 * incomplete.
 */
static bool
idgen_keeper_load_at_start(const IdgenKeeperObjects *objs, bool have_epoch,
						   bool have_hwm, int64 durable)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	int64		floor_unix_ms = 0;

	if (have_hwm != have_epoch)
	{
		idgen_keeper_commit();
		idgen_keeper_set_failed(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
								psprintf("the durable state in database \"%s\" is incomplete: %s is missing; restore it from a backup, or reset both with \"ALTER SEQUENCE idgen_epoch RESTART; ALTER SEQUENCE idgen_hwm RESTART\" to start afresh above the clock",
										 idgen_database,
										 have_hwm ? "the epoch record idgen_epoch" : "the reservation idgen_hwm"));
		return false;
	}
	if (have_hwm)
		floor_unix_ms = durable;
	else if (idgen_keeper_marker_exists())
	{
		/*
		 * The state was lost.  A burst before the loss may have issued up
		 * to idgen.max_lead ahead of the clock.
		 */
		floor_unix_ms = idgen_clock_unix_ms() + idgen_max_lead_ms + 1;
		ereport(WARNING,
				(errmsg("idgen keeper: the durable ID reservation in database \"%s\" is missing; IDs resume %d ms ahead of the clock",
						idgen_database, idgen_max_lead_ms + 1),
				 errdetail("This server had durable idgen state before (file \"%s\"); it was dropped, reset, or \"idgen.database\" was changed. IDs issued before under another \"idgen.epoch\" can no longer be detected.",
						   IDGEN_MARKER_FILE)));
	}
	if (OidIsValid(objs->floors))
		idgen_keeper_floors_at_start(objs->floors);
	idgen_keeper_raise_floors(floor_unix_ms, false);
	if (!have_hwm)
	{
		idgen_keeper_write_sequence(objs->epoch, idgen_epoch_unix_ms);
		idgen_keeper_write_sequence(objs->hwm,
									Max(floor_unix_ms, idgen_clock_unix_ms()));
	}
	idgen_keeper_load_definitions(objs);
	if (!have_hwm)
		idgen_keeper_commit_durably("the epoch record");
	else
		idgen_keeper_commit();
	idgen_keeper_write_marker();

	if (floor_unix_ms > 0)
		ereport(LOG,
				(errmsg("idgen keeper: IDs resume above %s",
						timestamptz_to_str((floor_unix_ms - IDGEN_UNIX_TO_PG_MS) * 1000))));

	/*
	 * What is on disk is what a new shared memory starts from.  Later, only
	 * what was published counts: a value whose synchronous-replication wait
	 * was cancelled is on disk here, but not durable in our sense.
	 */
	if (have_hwm)
	{
		LWLockAcquire(keeper->lock, LW_EXCLUSIVE);
		keeper->durable_unix_ms = durable;
		LWLockRelease(keeper->lock);
	}
	return true;
}

/*
 * The load while generators run (published: the reservation they issue
 * below, ms since epoch): what went missing is restored.  If the durable
 * reservation is missing or lower than the published one (the extension
 * was dropped and has just been re-created, or the sequence was reset),
 * it is made durable again now rather than at the next write.  Caller has
 * begun the transaction.
 */
static void
idgen_keeper_load_while_running(const IdgenKeeperObjects *objs,
								bool have_epoch, bool have_hwm, int64 durable,
								int64 published)
{
	int64		hwm_written = 0;

	/* lost while we run: the epoch cannot have changed (start-time) */
	if (!have_epoch)
	{
		idgen_keeper_write_sequence(objs->epoch, idgen_epoch_unix_ms);
		/* never alone: nothing is issued beyond what was published */
		if (!have_hwm)
		{
			hwm_written = published + idgen_epoch_unix_ms;
			idgen_keeper_write_sequence(objs->hwm, hwm_written);
		}
	}
	if (OidIsValid(objs->floors))
		idgen_keeper_floors_while_running(objs->floors);
	idgen_keeper_load_definitions(objs);
	if (!have_epoch)
		idgen_keeper_commit_durably("the epoch record");
	else
		idgen_keeper_commit();
	idgen_keeper_write_marker();

	if (hwm_written > 0 || !have_hwm ||
		durable - idgen_epoch_unix_ms < published)
	{
		ereport(LOG,
				(errmsg("idgen keeper: restoring the durable reservation in database \"%s\"",
						idgen_database)));
		if (hwm_written > 0)
			idgen_keeper_note_durable(hwm_written);		/* done above */
		else
			idgen_keeper_reserve_to(published);
	}
	else
	{
		/*
		 * A new keeper in running shared memory, whose published reservation
		 * is on disk: it is ready now, not at the next write, which an idle
		 * server may not need for a long time.
		 */
		idgen_keeper_note_durable(0);
	}
}

/*
 * Load the durable state: check the recorded epoch, then load into new
 * shared memory or into running generators.  Returns false if generation
 * must not go on (epoch changed, state incomplete); the state says why.
 */
static bool
idgen_keeper_load(void)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	IdgenKeeperObjects objs;
	int64		recorded_epoch = 0;
	int64		durable = 0;
	bool		have_epoch;
	bool		have_hwm;
	int64		published = (int64) pg_atomic_read_u64(&keeper->hwm_ms);

	idgen_keeper_begin("idgen keeper: loading reservation");
	idgen_keeper_find_objects(&objs);
	have_epoch = idgen_keeper_read_sequence(objs.epoch, &recorded_epoch);
	have_hwm = idgen_keeper_read_sequence(objs.hwm, &durable);

	if (have_epoch && recorded_epoch != idgen_epoch_unix_ms)
	{
		char	   *message;

		idgen_keeper_commit();
		message = psprintf("IDs were issued under the epoch %s; \"idgen.epoch\" is now %s",
						   timestamptz_to_str((recorded_epoch - IDGEN_UNIX_TO_PG_MS) * 1000),
						   idgen_epoch_string);
		idgen_keeper_set_state(IDGEN_KEEPER_EPOCH_CHANGED, message);
		return false;
	}
	if (published == 0)
		return idgen_keeper_load_at_start(&objs, have_epoch, have_hwm, durable);
	idgen_keeper_load_while_running(&objs, have_epoch, have_hwm, durable,
									published);
	return true;
}

/*
 * The published reservation is durable: the keeper is ready.  unix_ms is
 * a reservation just committed (Unix ms), recorded and counted as a
 * write; 0 when a new keeper finds the published one on disk.
 */
static void
idgen_keeper_note_durable(int64 unix_ms)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);

	LWLockAcquire(keeper->lock, LW_EXCLUSIVE);
	if (unix_ms > 0)
	{
		keeper->durable_unix_ms = unix_ms;
		keeper->writes++;
	}
	strlcpy(keeper->message, "the reservation is durable", sizeof(keeper->message));
	SpinLockAcquire(&keeper->mutex);
	keeper->failures = 0;
	keeper->state = IDGEN_KEEPER_READY;
	SpinLockRelease(&keeper->mutex);
	LWLockRelease(keeper->lock);
}

/*
 * One round of the keeper: what each part plans to make durable, written
 * in one transaction and made durable by one commit (one WAL flush, one
 * wait for the synchronous standbys), then published.  Each part keeps its
 * own plan (keeper/shards.c, keeper/counters.c); this says only which parts
 * take part.  Planning publishes nothing, so an error before the publish
 * phase leaves nothing of the round visible, and the next round plans
 * again: the floors' request is looked at again (idgen_keeper_recover),
 * restarts stay asked for until published, and counters and the time
 * reservation are planned from shared memory, which the failed round did
 * not change.
 */
typedef struct IdgenKeeperRound
{
	int			floors;			/* shard floors and releases planned */
	int			counters;		/* counter reservations planned */
	bool		restarts;		/* the counters planned are restarts */
	bool		reserve;		/* the time reservation is extended */
	int64		target_ms;		/* to there (ms since epoch) */
} IdgenKeeperRound;

/*
 * The round's parts, named for its message and errors: "the ID
 * reservation", or "the keeper's write of a shard floor and the ID
 * reservation".
 */
static char *
idgen_keeper_round_what(const IdgenKeeperRound *round)
{
	const char *parts[3];
	int			n = 0;
	StringInfoData buf;

	if (round->floors > 0)
		parts[n++] = "a shard floor";
	if (round->counters > 0)
		parts[n++] = round->restarts ? "a counter restart" : "a counter reservation";
	if (round->reserve)
		parts[n++] = "the ID reservation";
	if (n == 1)
		return pstrdup(parts[0]);
	initStringInfo(&buf);
	appendStringInfoString(&buf, "the keeper's write of ");
	for (int i = 0; i < n; i++)
		appendStringInfo(&buf, "%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ",
						 parts[i]);
	return buf.data;
}

/*
 * Say what the round waits for: if its commit blocks (a synchronous
 * standby that is gone), callers that run out report this.  A round with
 * the time reservation says so whatever the state, as its publish makes
 * the keeper ready; one without says so only while ready, and says the
 * reservation is durable again once published.
 */
static void
idgen_keeper_round_message(const IdgenKeeperRound *round)
{
	const char *waits = "(WAL flush, and the synchronous standbys of \"synchronous_standby_names\" if any)";
	const char *others = round->floors > 0 && round->counters > 0 ?
		(round->restarts ? "counter restarts and shard floors" :
		 "counter reservations and shard floors") :
		round->floors > 0 ? "shard floors" :
		round->restarts ? "counter restarts" : "counter reservations";

	if (round->reserve)
		idgen_keeper_set_message(round->floors > 0 || round->counters > 0 ?
								 psprintf("a new reservation is waiting to become durable %s, with %s",
										  waits, others) :
								 psprintf("a new reservation is waiting to become durable %s",
										  waits),
								 false);
	else
		idgen_keeper_set_message(psprintf("%s are waiting to become durable %s",
										  others, waits),
								 true);
}

/*
 * Write everything the round planned, in one transaction, and commit it
 * durably.  objs is set to the objects found.  A table missing (idgen 1.0)
 * writes nothing of its part; the publish phase tells.
 */
static void
idgen_keeper_round_write(const IdgenKeeperRound *round, IdgenKeeperObjects *objs)
{
	/* named before the transaction, whose memory the commit frees */
	char	   *what = idgen_keeper_round_what(round);

	idgen_keeper_round_message(round);
	idgen_keeper_begin(round->reserve ? "idgen keeper: extending reservation" :
					   "idgen keeper: recording counters and shard floors");
	idgen_keeper_find_objects(objs);

	if (round->floors > 0 && OidIsValid(objs->floors))
		idgen_shard_floors_write(objs->floors);
	if (round->counters > 0 && OidIsValid(objs->counters))
		idgen_registry_write_counters(objs->counters);
	if (round->reserve)
	{
		int64		recorded_epoch;

		/*
		 * An extension re-created just now (find_objects) has no epoch
		 * record either: write it with the reservation, or a stop before
		 * the next load leaves a reservation without its epoch, refused at
		 * the start as incomplete.  (The epoch cannot have changed while
		 * we run.)
		 */
		if (!idgen_keeper_read_sequence(objs->epoch, &recorded_epoch))
			idgen_keeper_write_sequence(objs->epoch, idgen_epoch_unix_ms);
		idgen_keeper_write_sequence(objs->hwm,
									round->target_ms + idgen_epoch_unix_ms);
	}
	idgen_keeper_commit_durably(what);
}

/*
 * The round is durable: publish it, each part by its own rules, then wake
 * the callers.  Shard floors first (keeper/shards.c tells their callers);
 * then the counters, whose publish writes the data directory's floors
 * file before the backends see the reservation (idgen_counter_floors_cover)
 * and has etcd record them under a leased node id; then the time
 * reservation, which etcd records first (idgen_lease_before_publish).  An
 * error here leaves what follows it unpublished, though durable: the next
 * round plans and writes it again.
 */
static void
idgen_keeper_round_publish(const IdgenKeeperRound *round,
						   const IdgenKeeperObjects *objs)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);

	if (round->floors > 0)
	{
		if (OidIsValid(objs->floors))
			idgen_shard_floors_publish();
		else
			idgen_shard_floors_no_table();
	}
	if (round->counters > 0 && OidIsValid(objs->counters))
	{
		if (round->restarts)
			idgen_registry_publish_restarts();
		else
			idgen_registry_publish_counters();
	}
	if (round->reserve)
	{
		int64		unix_ms = round->target_ms + idgen_epoch_unix_ms;

		/* etcd records it before a generator under a leased node id can use it */
		idgen_lease_before_publish(unix_ms);
		idgen_keeper_note_durable(unix_ms);
		pg_atomic_write_u64(&keeper->hwm_ms, (uint64) round->target_ms);
	}
	else
		idgen_keeper_set_message("the reservation is durable", true);
	ConditionVariableBroadcast(&keeper->cv);
}

/*
 * Make a reservation of everything below target_ms (ms since epoch)
 * durable, then publish it: a round of the time reservation alone.
 */
static void
idgen_keeper_reserve_to(int64 target_ms)
{
	IdgenKeeperRound round = {0};
	IdgenKeeperObjects objs;

	round.reserve = true;
	round.target_ms = target_ms;
	idgen_keeper_round_write(&round, &objs);
	idgen_keeper_round_publish(&round, &objs);
}

/* the last round restarted counters (idgen_keeper_tick) */
static bool restarted_last = false;

/*
 * Decide what to make durable, and do it in one round: the shard floors
 * and releases instagram_id_advance() and instagram_id_release() asked
 * for, the counters to restart or extend, and the time reservation.
 * Returns how long to sleep before looking again.
 */
static long
idgen_keeper_tick(void)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	int64		hwm = (int64) pg_atomic_read_u64(&keeper->hwm_ms);
	int64		want = (int64) pg_atomic_read_u64(&keeper->want_ms);
	int64		now = idgen_clock_ms();
	int64		half = idgen_reservation_ms / 2;
	int64		issued = (int64) pg_atomic_read_u64(&idgen_shared->issued.ms);
	int64		edge = Max(now, issued);
	IdgenKeeperRound round = {0};
	IdgenKeeperObjects objs = {0};
	bool		extend_first;

#ifdef IDGEN_TEST_HOOKS
	/* held by idgen_test_hold_keeper_ticks(): n - 1 more ticks, then none */
	{
		uint32		hold = pg_atomic_read_u32(&keeper->test_tick_hold);

		if (hold == 1)
			return 50;
		if (hold > 1 &&
			!pg_atomic_compare_exchange_u32(&keeper->test_tick_hold, &hold, hold - 1))
			return 0;
	}
#endif

	round.floors = idgen_shard_floors_plan();

	/*
	 * Restarts and extensions share keeper/counters.c's one plan, and a
	 * restart's row is written exactly where an extension's never goes
	 * lower: a round with restarts leaves the extensions to the next
	 * round, which follows at once (a restarted counter has nothing
	 * reserved beyond its new start, so its callers wait for that one).
	 * A round after one with restarts extends first, so that restarts
	 * asked for round after round cannot starve the other counters'
	 * callers; the restarts wait a round, their counters switched off.
	 */
	/* taken now: a round that throws must not leave it set */
	extend_first = restarted_last;
	restarted_last = false;
	if (!extend_first)
	{
		round.counters = idgen_registry_plan_restarts();
		round.restarts = round.counters > 0;
	}
	if (!round.restarts)
		round.counters = idgen_registry_plan_counters();

	/*
	 * Extend when a generator waits for it, on first start, or when IDs are
	 * being issued (recently enough) within half a reservation of its end,
	 * measured from the clock or from the IDs, whichever is ahead: a burst
	 * borrowing timestamps moves the IDs ahead of the clock.  Reserve from
	 * there.  The reservation never moves back, whatever the clock does.
	 */
	if (want >= hwm || hwm == 0 ||
		(hwm - edge < half && issued > hwm - 2 * idgen_reservation_ms))
	{
		round.reserve = true;
		round.target_ms = Max(Max(edge, want) + idgen_reservation_ms, hwm);
	}

	if (round.floors > 0 || round.counters > 0 || round.reserve)
	{
		idgen_keeper_round_write(&round, &objs);
		idgen_keeper_round_publish(&round, &objs);
	}
	/* restarts carried out: their counters' extensions next, at once */
	restarted_last = round.restarts && OidIsValid(objs.counters);
	if (restarted_last)
		return 0;
	return Max(half / 2, 1);
}

/*
 * A reservation reaching further ahead than a call may wait makes the first
 * calls after a restart that follows a burst fail instead of wait: say so
 * whenever the pair changes.
 */
static void
idgen_keeper_check_settings(void)
{
	static int	warned_reservation = -1;
	static int	warned_max_wait = -1;

	if (idgen_reservation_ms <= idgen_max_wait_ms ||
		(warned_reservation == idgen_reservation_ms &&
		 warned_max_wait == idgen_max_wait_ms))
		return;
	warned_reservation = idgen_reservation_ms;
	warned_max_wait = idgen_max_wait_ms;
	ereport(WARNING,
			(errmsg("\"idgen.reservation\" (%d ms) is longer than \"idgen.max_wait\" (%d ms)",
					idgen_reservation_ms, idgen_max_wait_ms),
			 errdetail("After a restart that follows a burst, IDs resume up to \"idgen.reservation\" ahead of the clock; calls then wait at most \"idgen.max_wait\" and fail beyond it."),
			 errhint("Set \"idgen.max_wait\" to at least \"idgen.reservation\".")));
}

/*
 * SIGTERM: the server shuts down, or an administrator stops the keeper.
 * Between transactions of its loop, and in its back-off, the keeper stops
 * at its next look (idgen_keeper_stop_if_asked), as the autovacuum
 * launcher does, and gives its node-id lease back on the way out; in a
 * transaction, which may wait for a lock or for synchronous standbys, or
 * while it connects, it dies at once, as any backend (counters then resume
 * at their reservation, as after a crash, and the lease expires).
 */
static volatile sig_atomic_t keeper_in_loop = false;

static void
idgen_keeper_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	keeper_terminating = true;
	if (!keeper_in_loop || IsTransactionOrTransactionBlock())
		die(postgres_signal_arg);
	else
		SetLatch(MyLatch);
	errno = save_errno;
}

/*
 * Stop cleanly if SIGTERM came: record each running counter's exact next
 * value as its durable state, in the table and the data directory's file
 * (the sequence rule: a clean restart skips nothing), then exit.  The
 * counters are switched off first, so nothing is handed out after its
 * value is read (idgen_registry_plan_parking).  Lowering the durable
 * state needs only this server's flush: a standby that still holds the
 * higher state is just as safe.  Exits with 1, so that a keeper stopped
 * by pg_terminate_backend() is started again.
 */
static void
idgen_keeper_stop_if_asked(void)
{
	IdgenKeeperObjects objs;

	if (!keeper_terminating)
		return;
	keeper_parking = true;
	if (idgen_registry_plan_parking() > 0)
	{
		idgen_keeper_begin("idgen keeper: recording where the counters stopped");
		idgen_keeper_find_objects(&objs);
		if (OidIsValid(objs.counters))
			idgen_registry_write_counters(objs.counters);
		SetConfigOption("synchronous_commit", "local", PGC_SUSET, PGC_S_OVERRIDE);
		idgen_keeper_commit();
		if (OidIsValid(objs.counters) && GetFlushRecPtr(NULL) >= XactLastCommitEnd)
		{
			idgen_registry_floors_exact();
			ereport(LOG,
					(errmsg("idgen keeper: stopping; the counters resume where they stopped")));
		}
	}
	idgen_lease_release();
	proc_exit(1);
}

static void
idgen_keeper_on_exit(int code, Datum arg)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	bool		connect_failed = keeper_connecting && !keeper_connected &&
		!keeper_terminating;
	bool		restarting = false;

	idgen_lease_on_keeper_exit();

	/*
	 * Not held here: nothing under it can fail or take interrupts, and an
	 * error in the loop releases it (idgen_keeper_recover).
	 */
	Assert(!LWLockHeldByMe(keeper->lock));
	LWLockAcquire(keeper->lock, LW_EXCLUSIVE);
	SpinLockAcquire(&keeper->mutex);
	keeper->latch = NULL;
	keeper->claim_blocked = false;
	if (connect_failed)
	{
		/* a FATAL connection failure skips PG_CATCH; the log has the cause */
		keeper->state = IDGEN_KEEPER_FAILED;
		keeper->failed_errcode = ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
	}
	else if (keeper->state == IDGEN_KEEPER_READY)
	{
		keeper->state = IDGEN_KEEPER_STARTING;
		restarting = true;
	}
	/* a keeper stopped in its back-off, or while connecting, did not fail again */
	if (keeper->state == IDGEN_KEEPER_FAILED && keeper_connecting &&
		!keeper_terminating)
		keeper->failures++;
	SpinLockRelease(&keeper->mutex);
	/* the message that goes with the state, under the LWLock still held */
	if (connect_failed)
		snprintf(keeper->message, sizeof(keeper->message),
				 "the keeper could not connect to database \"%s\"; the server log says why",
				 idgen_database);
	else if (restarting)
		strlcpy(keeper->message, "the keeper exited and is being restarted",
				sizeof(keeper->message));
	LWLockRelease(keeper->lock);
	ConditionVariableBroadcast(&keeper->cv);
}

/*
 * After consecutive failures, wait longer before trying again (the
 * postmaster's restart interval is one second): a database that does not
 * exist should not fill the log with a FATAL every second.
 */
static void
idgen_keeper_back_off(uint32 failures)
{
	long		delay_ms;

	if (failures <= 1)
		return;
	delay_ms = Min((long) IDGEN_KEEPER_MAX_BACKOFF_MS,
				   1000L << Min(failures - 1, 5)) - 1000;
	ereport(LOG,
			(errmsg("idgen keeper: %u consecutive failures; next attempt in %ld ms",
					failures, delay_ms + 1000)));
	/*
	 * The latch may be set already, and is set by every signal.  A SIGTERM
	 * here is waited for, as in the loop, so that the node id a previous
	 * keeper held is given back (idgen_lease_release) on the way out.
	 */
	keeper_in_loop = true;
	for (int64 until = idgen_clock_monotonic_ms() + delay_ms;;)
	{
		int64		remaining_ms = until - idgen_clock_monotonic_ms();

		CHECK_FOR_INTERRUPTS();
		if (keeper_terminating)
		{
			idgen_lease_release();
			proc_exit(1);
		}
		if (remaining_ms <= 0)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 remaining_ms,
						 idgen_wait_event("IdgenKeeperMain", &wait_event_main));
		ResetLatch(MyLatch);
	}
	keeper_in_loop = false;
}

/*
 * What the loop of idgen_keeper_main carries from round to round: static,
 * so that it is defined after an error's longjmp (idgen_keeper_recover).
 */
static sigjmp_buf local_sigjmp_buf;
static bool loaded = false;
static int64 next_load = 0;
static int64 last_load = 0;
static uint64 changes_loaded = 0;
static bool recovering = false;
static uint32 errors_in_a_row = 0;

/*
 * After an error in the keeper's loop (longjmp from ereport): clean up as
 * PostgreSQL's own long-lived processes do, record the error, and pause
 * before the loop goes on: 50 ms, doubling to 1 s, after an error that
 * passes by itself (idgen_keeper_failure_passes: a cancelled query, a lock or a
 * synchronous standby that did not answer in time, etcd unreachable), and
 * then the state is left as it is; after any other, 2 s, 4 s, ... up to
 * IDGEN_KEEPER_MAX_BACKOFF_MS, and the keeper's state is "failed" with the
 * error's SQLSTATE and message, as before (idgen_status(), and what
 * waiting callers are told).  Everything is loaded again, and a request
 * for shard floors looked at again.  A keeper that failed while stopping
 * stops.
 */
static void
idgen_keeper_recover(void)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	ErrorData  *edata;
	long		delay_ms;

	error_context_stack = NULL;
	HOLD_INTERRUPTS();
	disable_all_timeouts(false);
	QueryCancelPending = false;
	MemoryContextSwitchTo(TopMemoryContext);
	edata = CopyErrorData();
	EmitErrorReport();
	AbortCurrentTransaction();
	LWLockReleaseAll();
	ConditionVariableCancelSleep();
	pgstat_report_wait_end();
	pgstat_report_activity(STATE_IDLE, NULL);
	/* files and hash tables of work outside a transaction (the floors file) */
	AtEOXact_Files(false);
	AtEOXact_HashTables(false);
	FlushErrorState();
	MemoryContextSwitchTo(keeper_cxt);
	MemoryContextReset(keeper_cxt);
	RESUME_INTERRUPTS();

	/*
	 * A failed clean stop ends here, as it did; a SIGTERM that came before
	 * the error is taken at the loop's next look, which parks the counters.
	 */
	if (keeper_parking)
		proc_exit(1);

	/*
	 * The plan of shard floors and releases took the request
	 * (idgen_shard_floors_plan) before writing it: the request is looked
	 * at again, as when a keeper starts, so that the floor or release is
	 * written before its caller is answered.
	 */
	pg_atomic_write_u32(&keeper->floors_pending, 1);

	loaded = false;
	next_load = 0;
	last_load = 0;
	changes_loaded = 0;
	recovering = true;
	errors_in_a_row++;
	if (idgen_keeper_failure_passes(edata->sqlerrcode))
	{
		char		message[sizeof(keeper->message)];

		/* the state stays; idgen_status() tells the error until it passed */
		snprintf(message, sizeof(message),
				 "the reservation is durable; the keeper's last round failed and is retried (%s: %s)",
				 unpack_sql_state(edata->sqlerrcode), edata->message);
		idgen_keeper_set_message(message, true);

		/*
		 * Soon: callers live on what is left of the reservation, at worst
		 * a quarter of idgen.reservation (250 ms by default).  Doubling
		 * from 50 ms to 1 s while the error lasts.
		 */
		delay_ms = Min(1000L, 50L << Min(errors_in_a_row - 1, 5));
	}
	else
	{
		idgen_keeper_set_failed(edata->sqlerrcode, edata->message);
		delay_ms = Min((long) IDGEN_KEEPER_MAX_BACKOFF_MS,
					   1000L << Min(errors_in_a_row, 5));
	}
	FreeErrorData(edata);
	ereport(LOG,
			(errmsg("idgen keeper: recovering from the error above; next round in %ld ms",
					delay_ms)));

	for (int64 until = idgen_clock_monotonic_ms() + delay_ms;;)
	{
		int64		remaining_ms = until - idgen_clock_monotonic_ms();

		CHECK_FOR_INTERRUPTS();
		if (remaining_ms <= 0 || keeper_terminating)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 remaining_ms,
						 idgen_wait_event("IdgenKeeperMain", &wait_event_main));
		ResetLatch(MyLatch);
	}
}

/* A whole round went by after an error: it has passed. */
static void
idgen_keeper_recovered(void)
{
	recovering = false;
	errors_in_a_row = 0;
	idgen_keeper_set_message("the reservation is durable", true);
}

/*
 * The keeper's start: signals, its latch in shared memory, the pause after
 * failures, the connection to idgen.database and the settings of its
 * transactions.
 */
static void
idgen_keeper_start(void)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	uint32		failures;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, idgen_keeper_sigterm);
	BackgroundWorkerUnblockSignals();

	SpinLockAcquire(&keeper->mutex);
	keeper->latch = MyLatch;
	keeper->starts++;
	failures = keeper->failures;
	SpinLockRelease(&keeper->mutex);
	before_shmem_exit(idgen_keeper_on_exit, 0);

	idgen_keeper_back_off(failures);

	/* a request a previous keeper took but did not finish is looked at again */
	pg_atomic_write_u32(&keeper->floors_pending, 1);
	idgen_keeper_set_state(IDGEN_KEEPER_STARTING,
						   psprintf("the keeper is connecting to database \"%s\"",
									idgen_database));
	keeper_cxt = AllocSetContextCreate(TopMemoryContext, "idgen keeper",
									   ALLOCSET_DEFAULT_SIZES);

	keeper_connecting = true;
	BackgroundWorkerInitializeConnection(idgen_database, NULL, 0);
	keeper_connected = true;
	MemoryContextSwitchTo(keeper_cxt);

	for (int i = 0; i < lengthof(keeper_settings); i++)
		SetConfigOption(keeper_settings[i][0], keeper_settings[i][1],
						PGC_SUSET, PGC_S_OVERRIDE);
}

/*
 * Load again every IDGEN_KEEPER_CHECK_MS, even when idle: that notices a
 * changed epoch being resolved, and a durable value that went missing or
 * backwards (extension dropped, sequence reset), which it restores.  A
 * read-only transaction: no WAL.
 *
 * Lookups of names not loaded ask for a load: answered at once if a
 * definition or grant was committed since the last load, otherwise no
 * sooner than IDGEN_KEEPER_LOOKUP_LOAD_MS after the last one began, all of
 * them by one load.  Both counters are read before the load takes its
 * snapshot.  Returns how long the round may sleep, at most sleep_ms.
 */
static long
idgen_keeper_load_when_due(long sleep_ms)
{
	uint64		load_requests = idgen_registry_load_requests();
	uint64		changes = idgen_registry_changes();

	if (!loaded ||
		idgen_clock_monotonic_ms() >= next_load ||
		(idgen_registry_load_requested(load_requests) &&
		 (changes != changes_loaded ||
		  idgen_clock_monotonic_ms() >= last_load + IDGEN_KEEPER_LOOKUP_LOAD_MS)))
	{
		last_load = idgen_clock_monotonic_ms();
		loaded = idgen_keeper_load();
		if (loaded)
		{
			idgen_registry_loads_served(load_requests);
			changes_loaded = changes;
			/* what the load installed: a new counter's first refill */
			sleep_ms = idgen_keeper_tick();
		}
		next_load = idgen_clock_monotonic_ms() + IDGEN_KEEPER_CHECK_MS;
	}

	/* a lookup asked while this round ran: load when allowed */
	if (loaded &&
		idgen_registry_load_requested(idgen_registry_load_requests()))
	{
		if (idgen_registry_changes() != changes_loaded)
			sleep_ms = 0;
		else
			sleep_ms = Min(sleep_ms,
						   Max(last_load + IDGEN_KEEPER_LOOKUP_LOAD_MS -
							   idgen_clock_monotonic_ms(), 0));
	}
	return sleep_ms;
}

/*
 * One round of the loop: settings, shards, the lease, the reservations,
 * a load when one is due.  Returns how long to sleep before the next.
 */
static long
idgen_keeper_round(void)
{
	long		sleep_ms = 1000;
	long		lease_ms;

	MemoryContextReset(keeper_cxt);
	CHECK_FOR_INTERRUPTS();
	idgen_keeper_stop_if_asked();
	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
	}
	idgen_keeper_check_settings();
	idgen_keeper_apply_shards();
	lease_ms = idgen_lease_step();
	/* a SIGTERM during the lease's requests: stop before any transaction */
	idgen_keeper_stop_if_asked();

	/*
	 * With idgen.node_id = 'auto', named generators have the node id
	 * composed into their slots when they are loaded: not before this
	 * server has claimed one.
	 */
	if (idgen_lease_awaiting_claim())
	{
		idgen_keeper_note_claim_wait(true);
		return Min(lease_ms, 1000);
	}
	idgen_keeper_note_claim_wait(false);

	/* the reservations first, whatever the lookups ask for */
	if (loaded)
		sleep_ms = idgen_keeper_tick();
	/* apart: Min() evaluates the call twice, and it loads */
	sleep_ms = idgen_keeper_load_when_due(sleep_ms);
	sleep_ms = Min(sleep_ms, lease_ms);

	/*
	 * A whole round went by, loaded: an error recovered from has passed.
	 * A round whose load refused to go on (an epoch changed, incomplete
	 * state) did not get past it: the next error's pause keeps growing.
	 */
	if (recovering && loaded)
		idgen_keeper_recovered();
	return sleep_ms;
}

void
idgen_keeper_main(Datum main_arg)
{
	idgen_keeper_start();

	/*
	 * An error in the loop is recovered from here, as the autovacuum
	 * launcher and the checkpointer recover: the transaction is aborted,
	 * the error recorded, and the loop goes on after a pause.  The keeper
	 * keeps its node-id lease and etcd session, and callers keep the
	 * reservation already published, so a failure that passes costs no
	 * caller an error unless it outlasts the reservation.  Everything the
	 * loop carries from one round to the next is static, so that it is
	 * defined after the longjmp.
	 */
	if (sigsetjmp(local_sigjmp_buf, 1) != 0)
		idgen_keeper_recover();
	PG_exception_stack = &local_sigjmp_buf;
	keeper_in_loop = true;

	for (;;)
	{
		long		sleep_ms = idgen_keeper_round();

		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms,
						 idgen_wait_event("IdgenKeeperMain", &wait_event_main));
		ResetLatch(MyLatch);
	}
}
