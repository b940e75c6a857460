/*-------------------------------------------------------------------------
 *
 * shared/reservation.c
 *	  The backends' side of the keeper's durable reservation: waiting for it.
 *
 * A generator whose next position lies beyond the published reservation
 * (IdgenKeeper.hwm_ms) posts what it needs in want_ms, sets the keeper's
 * latch and sleeps on IdgenKeeper.cv until the keeper has made a
 * reservation beyond it durable, or until its deadline, when it fails with
 * the SQLSTATE the keeper's state gives (idgen_keeper_errcode).  The shard
 * floors and releases of instagram_id_advance() and instagram_id_release(),
 * and a counter generator's reservation (counter_want, counter_reserved),
 * are waited for on the same condition variable; a lookup of a named
 * generator waiting for the keeper's load uses the keeper's latch and the
 * error from here.  The keeper broadcasts after each publication and
 * change of its state, and so does a change of a named generator's state.
 * Every sleep is also bounded (100 ms a turn), so a change that is not
 * broadcast costs latency, never a wait beyond the deadline.
 *
 * This file reads the keeper's state and writes only what a waiter posts:
 * want_ms, a counter slot's counter_want, the shard control's pending
 * floors and releases with floors_pending and a cleared floor_message, and
 * the count of waits.  It runs in backends, never in the keeper.
 *
 * Locking.  Every turn of a wait reads the keeper's state, its SQLSTATE
 * and its latch under IdgenKeeper.mutex, a spinlock held for a few words;
 * the message an error quotes is copied only when the error is raised,
 * under the keeper's LWLock (IdgenKeeper.lock) in LW_SHARED, which every
 * writer of the state and the message holds exclusively, so that the two
 * agree.  The shard control is read and posted under that LWLock.  No lock
 * is held across a sleep or an ereport, and none is taken while holding
 * another (src/README gives the order).
 *
 * IDENTIFICATION
 *	  src/shared/reservation.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/spin.h"

#include "idgen.h"
#include "shared/slots.h"

/* wait event id, registered on first use (compat.h) */
static uint32 wait_event_reservation = 0;

/* The keeper's latch while it runs, else NULL. */
Latch *
idgen_keeper_latch(void)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	Latch	   *latch;

	SpinLockAcquire(&keeper->mutex);
	latch = keeper->latch;
	SpinLockRelease(&keeper->mutex);
	return latch;
}

/*
 * The keeper's state and the SQLSTATE a wait that runs out gets
 * (idgen_keeper_errcode_locked).  With message NULL they are read under
 * the spinlock, as every turn of a wait reads them; otherwise the message
 * (room for sizeof(IdgenKeeper.message)) is copied with them under the
 * LWLock, so that all three agree, for an error that quotes it.
 */
static IdgenKeeperState
idgen_keeper_read_state(int *code, char *message)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	IdgenKeeperState state;

	if (message == NULL)
	{
		SpinLockAcquire(&keeper->mutex);
		state = keeper->state;
		*code = idgen_keeper_errcode_locked(keeper);
		SpinLockRelease(&keeper->mutex);
		return state;
	}
	LWLockAcquire(keeper->lock, LW_SHARED);
	state = keeper->state;
	*code = idgen_keeper_errcode_locked(keeper);
	strlcpy(message, keeper->message, sizeof(keeper->message));
	LWLockRelease(keeper->lock);
	return state;
}

/* A keeper in this state loads no definitions (named generators). */
static inline bool
idgen_keeper_loads_nothing(IdgenKeeperState state)
{
	return state == IDGEN_KEEPER_FAILED || state == IDGEN_KEEPER_EPOCH_CHANGED;
}

/* The error of a wait for the keeper that ran out of time. */
static void
idgen_keeper_report_unavailable(int code, IdgenKeeperState state,
								const char *message)
{
	ereport(ERROR,
			(errcode(code),
			 errmsg("no durable ID reservation is available"),
			 errdetail("The idgen keeper's state is \"%s\": %s.",
					   idgen_keeper_state_name(state), message),
			 errhint("idgen issues no ID that is not durably reserved. Check the server log for the \"idgen keeper\" background worker; it keeps the reservation in database \"%s\" (\"idgen.database\").",
					 idgen_database)));
}

/*
 * For a caller waiting for the keeper to load the definitions of generator
 * "name": a keeper that has failed, or refuses a changed epoch, loads none.
 * Report its state then, or always once the caller has waited long enough:
 * without a load, the name may well exist.  The SQLSTATE is that of
 * idgen_keeper_errcode().
 */
void
idgen_keeper_report_not_loaded(const char *name, bool always)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	IdgenKeeperState state;
	int			code;
	char		message[sizeof(keeper->message)];

	/* each turn of the lookup's wait asks; the message only for the error */
	state = idgen_keeper_read_state(&code, NULL);
	if (!always && !idgen_keeper_loads_nothing(state))
		return;
	state = idgen_keeper_read_state(&code, message);
	if (always || idgen_keeper_loads_nothing(state))
		ereport(ERROR,
				(errcode(code),
				 errmsg("the definition of generator \"%s\" is not loaded", name),
				 errdetail("The idgen keeper loads the definitions; its state is \"%s\": %s.",
						   idgen_keeper_state_name(state), message),
				 errhint("Check the server log for the \"idgen keeper\" background worker, and retry.")));
}

/*
 * One turn of a wait for the keeper, for a caller that has posted what it
 * needs and checks for it itself: wake the keeper, and sleep on its
 * condition variable, which it broadcasts after each change, for at most
 * 100 ms.  False, without sleeping, once the deadline (on
 * idgen_clock_monotonic_ms()'s scale) has passed.  Every wait for the
 * keeper in this file loops on it.  Unless the caller prepared to sleep
 * before its first check, the first turn only enters the condition
 * variable's wait list and returns at once, so that a broadcast between
 * the caller's check and the next turn is not lost; the caller ends its
 * loop with ConditionVariableCancelSleep().
 */
static bool
idgen_keeper_sleep(int64 deadline, const char *event, uint32 *wait_event)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	int64		remaining_ms = deadline - idgen_clock_monotonic_ms();
	Latch	   *latch;

	if (remaining_ms <= 0)
		return false;
	latch = idgen_keeper_latch();
	if (latch != NULL)
		SetLatch(latch);
	(void) ConditionVariableTimedSleep(&keeper->cv, Min(remaining_ms, 100),
									   idgen_wait_event(event, wait_event));
	return true;
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
	int			code;
	char		message[sizeof(keeper->message)];
	bool		waited = false;
	int64		started = idgen_clock_monotonic_ms();

	/* post what we need: the keeper reserves at least that far */
	while (want < (uint64) need_ms &&
		   !pg_atomic_compare_exchange_u64(&keeper->want_ms, &want,
										   (uint64) need_ms))
		;

	ConditionVariablePrepareToSleep(&keeper->cv);
	for (;;)
	{
		if ((int64) pg_atomic_read_u64(&keeper->hwm_ms) > need_ms)
			break;

		state = idgen_keeper_read_state(&code, NULL);

		/* the message goes with the state read again (it may have passed) */
		if (state == IDGEN_KEEPER_EPOCH_CHANGED &&
			idgen_keeper_read_state(&code, message) == IDGEN_KEEPER_EPOCH_CHANGED)
		{
			ConditionVariableCancelSleep();
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("\"idgen.epoch\" changed since IDs were issued"),
					 errdetail("%s", message),
					 errhint("Set \"idgen.epoch\" back and restart. Only if no ID issued under the old epoch is in use any more, run \"ALTER SEQUENCE idgen_epoch RESTART; ALTER SEQUENCE idgen_hwm RESTART\" in database \"%s\" to adopt the new one.",
							 idgen_database)));
		}

		/*
		 * The deadline may allow for a keeper that is still starting (see
		 * idgen_reservation_deadline); one that has failed, or waits for a
		 * commit, gets the ordinary bound.
		 */
		if ((state != IDGEN_KEEPER_STARTING &&
			 idgen_clock_monotonic_ms() - started >= Max(idgen_max_wait_ms, 1000)) ||
			!idgen_keeper_sleep(deadline, "IdgenReservation",
								&wait_event_reservation))
		{
			ConditionVariableCancelSleep();
			state = idgen_keeper_read_state(&code, message);
			idgen_keeper_report_unavailable(code, state, message);
		}
		waited = true;
	}
	ConditionVariableCancelSleep();

	if (waited)
	{
		SpinLockAcquire(&keeper->mutex);
		keeper->waits++;
		SpinLockRelease(&keeper->mutex);
	}
}

/*
 * One turn of waiting until the keeper has reserved a counter's local
 * values below "need": ask for them (counter_want), then wake the keeper
 * and sleep on its condition variable, which it broadcasts once it has
 * published them.  False, without sleeping, once the deadline (monotonic
 * ms) has passed.  The engine's counter rule (shared/generator.c) and the waits
 * at a statement's end and at commit (backend/counterissue.c) loop on it, checking
 * counter_reserved themselves, and end the loop with
 * ConditionVariableCancelSleep() (an error does it in the abort).
 */
bool
idgen_keeper_wait_counter(IdgenNamedSlot *slot, uint64 need, int64 deadline,
						  const char *event, uint32 *wait_event)
{
	uint64		want = pg_atomic_read_u64(&slot->counter_want);

	while (want < need &&
		   !pg_atomic_compare_exchange_u64(&slot->counter_want, &want, need))
		;
	return idgen_keeper_sleep(deadline, event, wait_event);
}

/*
 * Ask the keeper to make "position" the durable floor of an instagram
 * shard, and the release change "change" durable, and wait until it has
 * (instagram_id_advance, instagram_id_release).  The caller has raised or
 * switched off the generator itself already.
 */
void
idgen_keeper_wait_shard(int32 shard, uint64 position,
						IdgenReleaseChange change, int64 deadline)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	IdgenShardControl *sc = &idgen_shared->shards;
	bool		want_released = (change == IDGEN_RELEASE_RELEASE);

	LWLockAcquire(keeper->lock, LW_EXCLUSIVE);
	sc->floor_pending[shard] = Max(sc->floor_pending[shard], position);
	if (change != IDGEN_RELEASE_KEEP)
		sc->release_pending[shard] = (uint8) change;
	keeper->floor_message[0] = '\0';
	LWLockRelease(keeper->lock);
	pg_atomic_write_u32(&keeper->floors_pending, 1);

	ConditionVariablePrepareToSleep(&keeper->cv);
	for (;;)
	{
		bool		done;
		IdgenKeeperState state;
		int			code;
		char		message[sizeof(keeper->message)];
		char		floor_message[sizeof(keeper->floor_message)];

		LWLockAcquire(keeper->lock, LW_SHARED);
		done = sc->floor_durable[shard] >= position &&
			(change == IDGEN_RELEASE_KEEP ||
			 (sc->release_pending[shard] == IDGEN_RELEASE_KEEP &&
			  sc->released[shard] == want_released));
		strlcpy(floor_message, keeper->floor_message, sizeof(floor_message));
		LWLockRelease(keeper->lock);

		if (done)
			break;
		if (floor_message[0] != '\0')
		{
			ConditionVariableCancelSleep();
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the new floor or release of shard %d could not be made durable", shard),
					 errdetail("%s.", floor_message)));
		}
		if (!idgen_keeper_sleep(deadline, "IdgenReservation",
								&wait_event_reservation))
		{
			ConditionVariableCancelSleep();
			state = idgen_keeper_read_state(&code, message);
			idgen_keeper_report_unavailable(code, state, message);
		}
	}
	ConditionVariableCancelSleep();
}
