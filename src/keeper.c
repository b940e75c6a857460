/*-------------------------------------------------------------------------
 *
 * keeper.c
 *	  The keeper: a background worker that makes idgen's reservation durable.
 *
 * Guarantee: no ID with timestamp t is issued unless a reservation > t is
 * durable (the reservation is an exclusive bound).  Then after an immediate stop, a crash that resets shared
 * memory, a restart with an earlier clock, or the promotion of a standby,
 * every new ID can be put above every ID issued before: the keeper raises
 * each generator's floor past the durable reservation before it lets any
 * generator run.
 *
 * Storage.  The reservation lives in the sequence idgen_hwm, a member of
 * the extension in the database idgen.database (created there by the keeper
 * if missing), as an absolute Unix millisecond.  A sequence is WAL-logged,
 * so the value reaches physical standbys and survives crashes, and setval()
 * updates it in place.  The keeper commits each setval() with
 * synchronous_commit at least "on": the commit returns only once the record
 * is flushed, and on a synchronous standby if one is configured.  Only then
 * is the value published in shared memory (IdgenKeeper.hwm_ms).  Backends
 * never write WAL.
 *
 * The sequence idgen_epoch records the epoch the reservation was made
 * under.  If idgen.epoch differs, the keeper publishes nothing and the
 * generators refuse, since IDs under a new epoch would collide with or sort
 * before the old ones.
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
 * worker exits; the postmaster starts it again after a second.  Meanwhile
 * the generators use up what is already reserved, then fail with 55000
 * after idgen.max_wait, naming the problem: never do they fall back to the
 * bare clock.
 *
 * IDENTIFICATION
 *	  src/keeper.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "idgen.h"

/* background worker entry point, looked up by name */
PGDLLEXPORT void idgen_keeper_main(Datum main_arg);

/* schema-qualified names of the two sequences, once found */
static char *keeper_hwm_seq = NULL;
static char *keeper_epoch_seq = NULL;

/* reset at every turn of the worker's loop */
static MemoryContext keeper_cxt = NULL;

/* whether this keeper got its database connection */
static bool keeper_connected = false;

/* how often the keeper re-reads its durable state */
#define IDGEN_KEEPER_CHECK_MS 2000

static void idgen_keeper_reserve(int64 target_ms);

#define KEEPER(s) (&(s)->keeper.keeper)

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
	ConditionVariableInit(&keeper->cv);
	SpinLockInit(&keeper->mutex);
	keeper->state = IDGEN_KEEPER_STARTING;
	keeper->latch = NULL;
	keeper->durable_unix_ms = 0;
	keeper->writes = 0;
	keeper->waits = 0;
	strlcpy(keeper->message, "the keeper has not loaded the reservation yet",
			sizeof(keeper->message));
}

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

	SpinLockAcquire(&keeper->mutex);
	keeper->state = state;
	strlcpy(keeper->message, message, sizeof(keeper->message));
	SpinLockRelease(&keeper->mutex);
	ConditionVariableBroadcast(&keeper->cv);
}

/*
 * Wait until the reservation covers need_ms, or fail.  Called by generators
 * (not holding any lock) whose next position is beyond it; deadline is on
 * the CLOCK_MONOTONIC millisecond scale of idgen_clock_monotonic_ms().
 */
void
idgen_keeper_wait(int64 need_ms, int64 deadline)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	uint64		want = pg_atomic_read_u64(&keeper->want_ms);
	IdgenKeeperState state;
	Latch	   *latch;
	char		message[sizeof(keeper->message)];
	bool		waited = false;

	/* post what we need: the keeper reserves at least that far */
	while (want < (uint64) need_ms &&
		   !pg_atomic_compare_exchange_u64(&keeper->want_ms, &want,
										   (uint64) need_ms))
		;

	ConditionVariablePrepareToSleep(&keeper->cv);
	for (;;)
	{
		int64		remaining_ms;

			if ((int64) pg_atomic_read_u64(&keeper->hwm_ms) > need_ms)
			break;

		SpinLockAcquire(&keeper->mutex);
		state = keeper->state;
		latch = keeper->latch;
		strlcpy(message, keeper->message, sizeof(message));
		SpinLockRelease(&keeper->mutex);

		if (state == IDGEN_KEEPER_EPOCH_CHANGED)
		{
			ConditionVariableCancelSleep();
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("\"idgen.epoch\" changed since IDs were issued"),
					 errdetail("%s", message),
					 errhint("Set \"idgen.epoch\" back and restart. Only if no ID issued under the old epoch is in use any more, run \"ALTER SEQUENCE idgen_epoch RESTART\" in database \"%s\" to adopt the new one.",
							 idgen_database)));
		}

		remaining_ms = deadline - idgen_clock_monotonic_ms();
		if (remaining_ms <= 0)
		{
			ConditionVariableCancelSleep();
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("no durable ID reservation is available"),
					 errdetail("The idgen keeper's state is \"%s\": %s.",
							   idgen_keeper_state_name(state), message),
					 errhint("idgen issues no ID that is not durably reserved. Check the server log for the \"idgen keeper\" background worker; it keeps the reservation in database \"%s\" (\"idgen.database\").",
							 idgen_database)));
		}

		if (latch != NULL)
			SetLatch(latch);
		waited = true;
		(void) ConditionVariableTimedSleep(&keeper->cv,
										   Min(remaining_ms, 100),
										   PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();

	if (waited)
	{
		SpinLockAcquire(&keeper->mutex);
		keeper->waits++;
		SpinLockRelease(&keeper->mutex);
	}
}

/* ---- the worker ---- */

static void
idgen_keeper_begin(const char *activity)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, activity);
}

static void
idgen_keeper_commit(void)
{
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextSwitchTo(keeper_cxt);
	pgstat_report_activity(STATE_IDLE, NULL);
}

/* Run a query returning one bigint (possibly NULL); args are bigints. */
static bool
idgen_keeper_int8(const char *sql, int nargs, int64 *args, int64 *result)
{
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1];
	bool		isnull;
	int			ret;

	Assert(nargs <= 1);
	if (nargs == 1)
		values[0] = Int64GetDatum(args[0]);
	ret = SPI_execute_with_args(sql, nargs, argtypes, values, NULL, false, 1);
	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "idgen keeper query failed: %s", sql);
	*result = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
										  SPI_tuptable->tupdesc, 1, &isnull));
	return !isnull;
}

/*
 * Find the extension's sequences, creating the extension in this database
 * if it is not there.  Caller has begun a transaction.
 */
static void
idgen_keeper_find_sequences(void)
{
	char	   *schema;
	MemoryContext oldcxt;

	/* not read-only, so that SPI sees the extension once we create it */
	if (SPI_execute("SELECT n.nspname FROM pg_catalog.pg_extension e "
					"JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace "
					"WHERE e.extname = 'idgen'", false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up extension idgen");
	if (SPI_processed == 0)
	{
		ereport(LOG,
				(errmsg("idgen keeper: creating extension idgen in database \"%s\" to hold the ID reservation",
						idgen_database)));
		if (SPI_execute("CREATE EXTENSION idgen", false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not create extension idgen");
		idgen_keeper_find_sequences();
		return;
	}
	schema = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

	oldcxt = MemoryContextSwitchTo(TopMemoryContext);
	keeper_hwm_seq = psprintf("%s.idgen_hwm", quote_identifier(schema));
	keeper_epoch_seq = psprintf("%s.idgen_epoch", quote_identifier(schema));
	MemoryContextSwitchTo(oldcxt);
}

/*
 * Load the durable state: check the recorded epoch (recording it on first
 * use) and, if shared memory is new, raise every generator's floor above
 * the durable reservation.  Returns false if the epoch has changed.
 */
static bool
idgen_keeper_load(void)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	int64		recorded_epoch;
	int64		durable = 0;
	bool		have_epoch;
	bool		have_hwm;
	char	   *sql;

	idgen_keeper_begin("idgen keeper: loading reservation");
	if (keeper_hwm_seq == NULL)
		idgen_keeper_find_sequences();

	sql = psprintf("SELECT CASE WHEN is_called THEN last_value END FROM %s",
				   keeper_epoch_seq);
	have_epoch = idgen_keeper_int8(sql, 0, NULL, &recorded_epoch);
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
	if (!have_epoch)
	{
		int64		epoch = idgen_epoch_unix_ms;

		(void) idgen_keeper_int8(psprintf("SELECT pg_catalog.setval('%s', $1)",
										  keeper_epoch_seq),
								 1, &epoch, &recorded_epoch);
	}

	sql = psprintf("SELECT CASE WHEN is_called THEN last_value END FROM %s",
				   keeper_hwm_seq);
	have_hwm = idgen_keeper_int8(sql, 0, NULL, &durable);
	idgen_keeper_commit();

	/*
	 * If hwm_ms is still 0, shared memory is new (server start, crash
	 * restart, promotion) and nothing has been issued in it yet: generators
	 * cannot issue before a reservation is published.  IDs below the durable
	 * reservation may exist from before, so start everyone at it.  A
	 * restarted keeper in the same shared memory finds hwm_ms set and the
	 * generators' state intact.
	 */
	if (pg_atomic_read_u64(&keeper->hwm_ms) == 0 && have_hwm)
	{
		int64		floor_ms = durable - idgen_epoch_unix_ms;

		idgen_raise_floor(&idgen_shared->snowflake.gen,
						  &idgen_snowflake_layout, floor_ms);
		for (int i = 0; i < IDGEN_INSTAGRAM_NSHARDS; i++)
			idgen_raise_floor(&idgen_shared->instagram[i].gen,
							  &idgen_instagram_layout, floor_ms);
		ereport(LOG,
				(errmsg("idgen keeper: IDs resume above the durable reservation %s",
						timestamptz_to_str((durable - IDGEN_UNIX_TO_PG_MS) * 1000))));
	}

	SpinLockAcquire(&keeper->mutex);
	if (have_hwm)
		keeper->durable_unix_ms = durable;
	SpinLockRelease(&keeper->mutex);

	/*
	 * Generators may already issue below the published reservation.  If the
	 * durable value is missing or lower (the extension was dropped and has
	 * just been re-created), restore it now rather than at the next write.
	 */
	{
		int64		published = (int64) pg_atomic_read_u64(&keeper->hwm_ms);

		if (published > 0 &&
			(!have_hwm || durable - idgen_epoch_unix_ms < published))
		{
			ereport(LOG,
					(errmsg("idgen keeper: restoring the durable reservation in database \"%s\"",
							idgen_database)));
			idgen_keeper_reserve(published);
		}
	}
	return true;
}

/*
 * Make a reservation of everything below target_ms (ms since epoch)
 * durable, then publish it.  The commit waits for the WAL flush (and a synchronous
 * standby), since the keeper runs with synchronous_commit at least "on".
 */
static void
idgen_keeper_reserve(int64 target_ms)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	int64		unix_ms = target_ms + idgen_epoch_unix_ms;
	int64		stored;

	/*
	 * Say what we wait for: if the commit blocks (a synchronous standby that
	 * is gone), generators that run out of reservation report this.
	 */
	SpinLockAcquire(&keeper->mutex);
	strlcpy(keeper->message,
			"a new reservation is waiting to become durable (WAL flush, and the synchronous standbys of \"synchronous_standby_names\" if any)",
			sizeof(keeper->message));
	SpinLockRelease(&keeper->mutex);

	idgen_keeper_begin("idgen keeper: extending reservation");
	(void) idgen_keeper_int8(psprintf("SELECT pg_catalog.setval('%s', $1)",
									  keeper_hwm_seq),
							 1, &unix_ms, &stored);
	idgen_keeper_commit();

	SpinLockAcquire(&keeper->mutex);
	keeper->durable_unix_ms = unix_ms;
	keeper->writes++;
	keeper->state = IDGEN_KEEPER_READY;
	strlcpy(keeper->message, "the reservation is durable", sizeof(keeper->message));
	SpinLockRelease(&keeper->mutex);

	pg_atomic_write_u64(&keeper->hwm_ms, (uint64) target_ms);
	ConditionVariableBroadcast(&keeper->cv);
}

/* Highest millisecond any generator has issued (or been floored to). */
static int64
idgen_keeper_issued_ms(void)
{
	uint64		ms = 0;

	SpinLockAcquire(&idgen_shared->snowflake.gen.mutex);
	ms = idgen_shared->snowflake.gen.last >> IDGEN_SNOWFLAKE_SEQ_BITS;
	SpinLockRelease(&idgen_shared->snowflake.gen.mutex);
	for (int i = 0; i < IDGEN_INSTAGRAM_NSHARDS; i++)
	{
		IdgenGenerator *gen = &idgen_shared->instagram[i].gen;

		SpinLockAcquire(&gen->mutex);
		ms = Max(ms, gen->last >> IDGEN_INSTAGRAM_SEQ_BITS);
		SpinLockRelease(&gen->mutex);
	}
	return (int64) ms;
}

/*
 * Decide whether to extend the reservation and do it.  Returns how long to
 * sleep before looking again.
 */
static long
idgen_keeper_tick(void)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	int64		hwm = (int64) pg_atomic_read_u64(&keeper->hwm_ms);
	int64		want = (int64) pg_atomic_read_u64(&keeper->want_ms);
	int64		now = idgen_clock_ms();
	int64		half = idgen_reservation_ms / 2;

	int64		issued = idgen_keeper_issued_ms();
	int64		edge = Max(now, issued);

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
		int64		target = Max(edge, want) + idgen_reservation_ms;

		idgen_keeper_reserve(Max(target, hwm));
	}
	return Max(half / 2, 1);
}

static void
idgen_keeper_on_exit(int code, Datum arg)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);

	SpinLockAcquire(&keeper->mutex);
	keeper->latch = NULL;
	if (!keeper_connected)
	{
		/* a FATAL connection failure skips PG_CATCH; the log has the cause */
		keeper->state = IDGEN_KEEPER_FAILED;
		snprintf(keeper->message, sizeof(keeper->message),
				 "the keeper could not connect to database \"%s\"; the server log says why",
				 idgen_database);
	}
	else if (keeper->state == IDGEN_KEEPER_READY)
	{
		keeper->state = IDGEN_KEEPER_STARTING;
		strlcpy(keeper->message, "the keeper exited and is being restarted",
				sizeof(keeper->message));
	}
	SpinLockRelease(&keeper->mutex);
	ConditionVariableBroadcast(&keeper->cv);
}

void
idgen_keeper_main(Datum main_arg)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	SpinLockAcquire(&keeper->mutex);
	keeper->latch = MyLatch;
	SpinLockRelease(&keeper->mutex);
	before_shmem_exit(idgen_keeper_on_exit, 0);

	idgen_keeper_set_state(IDGEN_KEEPER_STARTING,
						   psprintf("the keeper is connecting to database \"%s\"",
									idgen_database));
	keeper_cxt = AllocSetContextCreate(TopMemoryContext, "idgen keeper",
									   ALLOCSET_DEFAULT_SIZES);

	PG_TRY();
	{
		bool		loaded = false;
		int64		next_load = 0;

		BackgroundWorkerInitializeConnection(idgen_database, NULL, 0);
		keeper_connected = true;
		MemoryContextSwitchTo(keeper_cxt);

		/*
		 * A reservation must be durable before it is used: whatever the
		 * server's defaults, commit with at least a local and
		 * synchronous-standby flush, and in read-write transactions.
		 */
		if (synchronous_commit < SYNCHRONOUS_COMMIT_ON)
			SetConfigOption("synchronous_commit", "on", PGC_SUSET,
							PGC_S_OVERRIDE);
		SetConfigOption("default_transaction_read_only", "off", PGC_SUSET,
						PGC_S_OVERRIDE);

		for (;;)
		{
			long		sleep_ms = 1000;

			MemoryContextReset(keeper_cxt);
			CHECK_FOR_INTERRUPTS();
			if (ConfigReloadPending)
			{
				ConfigReloadPending = false;
				ProcessConfigFile(PGC_SIGHUP);
			}

			/*
			 * Load again every IDGEN_KEEPER_CHECK_MS, even when idle: that
			 * notices a changed epoch being resolved, and a durable value
			 * that went missing or backwards (extension dropped, sequence
			 * reset), which it restores.  A read-only transaction: no WAL.
			 */
			if (!loaded || idgen_clock_monotonic_ms() >= next_load)
			{
				loaded = idgen_keeper_load();
				next_load = idgen_clock_monotonic_ms() + IDGEN_KEEPER_CHECK_MS;
			}
			if (loaded)
				sleep_ms = idgen_keeper_tick();

			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 sleep_ms, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
		}
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		MemoryContext ecxt = MemoryContextSwitchTo(TopMemoryContext);

		/* record why, for the generators' errors and idgen_status() */
		edata = CopyErrorData();
		MemoryContextSwitchTo(ecxt);
		idgen_keeper_set_state(IDGEN_KEEPER_FAILED, edata->message);
		PG_RE_THROW();
	}
	PG_END_TRY();
}
