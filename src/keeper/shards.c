/*-------------------------------------------------------------------------
 *
 * keeper/shards.c
 *	  The keeper's side of moving instagram shards: their floors and
 *	  releases made durable, read back, and idgen.shards applied.
 *
 * instagram_id_advance() and instagram_id_release() ask for a floor or a
 * release in shared memory (IdgenShardControl) and wait (shared/reservation.c);
 * the keeper writes each as a row of
 * idgen_shard_floor in idgen.database, durably, before it tells them.
 * When shared memory is new the keeper takes the table's floors and
 * releases before it publishes any reservation, so a released shard is
 * off before it could issue.  While shared memory lives, rows that only a
 * restore can have put there are taken, and a table that is not the one
 * written to (the extension re-created) gets everything again.  Keeper
 * only; the loop that calls this is keeper/main.c's.
 *
 * Locking.  The shard control is under the keeper's LWLock
 * (IdgenKeeper.lock): each function here takes it once for its whole scan
 * of the 8,192 shards, LW_SHARED to read and LW_EXCLUSIVE to write, and
 * does the work that needs no lock (palloc, reading the table, logging)
 * outside it.  Under it a generator's spinlock may be taken (switching its
 * "owned" flag); it is never taken while holding a spinlock or another
 * LWLock, and nothing under it sleeps, allocates or reports.
 *
 * IDENTIFICATION
 *	  src/keeper/shards.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "storage/lwlock.h"
#include "utils/rel.h"

#include "idgen.h"
#include "shared/storage.h"
#include "keeper/shards.h"

static void idgen_keeper_apply_shard_locked(int32 shard);

/*
 * The table of shard floors this keeper last read or wrote: another OID
 * means the extension was dropped and re-created in idgen.database while
 * shared memory lived, and took the durable floors and releases with it.
 */
static Oid	keeper_floors_relid = InvalidOid;

/*
 * Make every floor and release this shared memory holds durable again in
 * table relid, if the table is not the one they were written to: one that
 * is only in memory would be lost at the next restart, and its shard would
 * issue below its floor, or issue again after its release.  Marks them
 * pending; the keeper's next round (idgen_keeper_tick) writes them.
 */
static void
idgen_keeper_recheck_floors(Oid relid)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	IdgenShardControl *sc = &idgen_shared->shards;
	uint64	   *floors;
	bool	   *released;
	int64		last_event;
	bool		missing = false;

	if (relid == keeper_floors_relid)
		return;
	floors = palloc0(sizeof(uint64) * IDGEN_INSTAGRAM_NSHARDS);
	released = palloc0(sizeof(bool) * IDGEN_INSTAGRAM_NSHARDS);
	idgen_keeper_read_floors(relid, floors, released, &last_event);

	LWLockAcquire(keeper->lock, LW_EXCLUSIVE);
	for (int i = 0; i < IDGEN_INSTAGRAM_NSHARDS; i++)
	{
		if (sc->floor_durable[i] > floors[i])
		{
			/* floor_pending >= the old floor_durable: rewritten from it */
			sc->floor_durable[i] = floors[i];
			missing = true;
		}
		if (sc->released[i] != released[i] &&
			sc->release_pending[i] == IDGEN_RELEASE_KEEP)
		{
			sc->release_pending[i] = sc->released[i] ?
				IDGEN_RELEASE_RELEASE : IDGEN_RELEASE_TAKE_BACK;
			missing = true;
		}
	}
	sc->last_event = Max(sc->last_event, last_event);
	LWLockRelease(keeper->lock);
	if (missing)
	{
		ereport(LOG,
				(errmsg("idgen keeper: restoring shard floors and releases in database \"%s\"",
						idgen_database)));
		pg_atomic_write_u32(&keeper->floors_pending, 1);
	}
	keeper_floors_relid = relid;
}

/*
 * Take the shard floors and releases of table relid into shared memory: a
 * higher floor raises the shard's generator, and a shard whose latest
 * event there is a release is switched off.  Never the other way: a floor
 * is never lowered nor a release undone here.  When shared memory is new
 * (restored false), this runs before any reservation is published, so a
 * released shard is off before it could issue, whatever idgen.shards says.
 * While shared memory lives (restored true), rows of this keeper's own
 * table can only come from a restore (pg_dump carries the table) or by
 * hand: a release is then taken only if no change of this server's own is
 * pending (that one is newer), and what is taken is logged.
 *
 * The shard control is updated in one pass under the LWLock; the
 * generators are raised and switched off after it, from what that pass
 * left in floors[] and released[] (only the changes).  Nothing can come
 * between that matters: raising a position and switching a shard off are
 * idempotent, and only the keeper switches one back on.
 */
static void
idgen_keeper_take_floors(Oid relid, bool restored)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	IdgenShardControl *sc = &idgen_shared->shards;
	uint64	   *floors = palloc0(sizeof(uint64) * IDGEN_INSTAGRAM_NSHARDS);
	bool	   *released = palloc0(sizeof(bool) * IDGEN_INSTAGRAM_NSHARDS);
	int64		last_event;
	int			taken = 0;

	idgen_keeper_read_floors(relid, floors, released, &last_event);
	LWLockAcquire(keeper->lock, LW_EXCLUSIVE);
	for (int i = 0; i < IDGEN_INSTAGRAM_NSHARDS; i++)
	{
		if (floors[i] > sc->floor_durable[i])
		{
			sc->floor_durable[i] = floors[i];
			sc->floor_pending[i] = Max(sc->floor_pending[i], floors[i]);
		}
		else
			floors[i] = 0;		/* nothing to raise */
		if (released[i] && !sc->released[i] &&
			(!restored || sc->release_pending[i] == IDGEN_RELEASE_KEEP))
			sc->released[i] = true;
		else
			released[i] = false;	/* nothing to switch off */
	}
	sc->last_event = Max(sc->last_event, last_event);
	LWLockRelease(keeper->lock);

	for (int i = 0; i < IDGEN_INSTAGRAM_NSHARDS; i++)
	{
		IdgenGenerator *gen = &idgen_shared->instagram[i].gen;

		if (floors[i] > 0)
			idgen_raise_position(gen, floors[i]);
		if (released[i])
		{
			SpinLockAcquire(&gen->mutex);
			gen->owned = false;
			SpinLockRelease(&gen->mutex);
		}
		if (floors[i] > 0 || released[i])
			taken++;
	}
	if (restored && taken > 0)
		ereport(LOG,
				(errmsg("idgen keeper: took restored floors or releases of %d shards from idgen_shard_floor in database \"%s\"",
						taken, idgen_database)));
}

/*
 * When shared memory is new: take the table's floors and releases before
 * any reservation is published (see idgen_keeper_take_floors).
 */
void
idgen_keeper_floors_at_start(Oid relid)
{
	idgen_keeper_take_floors(relid, false);
	keeper_floors_relid = relid;
}

/*
 * While shared memory lives: take what a restore put into this keeper's own
 * table, or make everything durable again in a table that is not that one.
 */
void
idgen_keeper_floors_while_running(Oid relid)
{
	if (relid == keeper_floors_relid)
		idgen_keeper_take_floors(relid, true);
	else
		idgen_keeper_recheck_floors(relid);
}

/*
 * The shard floors and releases that instagram_id_advance() and
 * instagram_id_release() asked for, as the keeper makes them durable:
 * idgen_shard_floors_plan() collects them, idgen_shard_floors_write()
 * writes their rows in the keeper's transaction, and once that commit is
 * durable idgen_shard_floors_publish() records them and tells the waiting
 * callers (keeper/main.c calls the three in that order).  Each shard that needs
 * either gets one row: its floor, whether it is released after this
 * change, and the next event number.  Rows are only added.  The plan lives
 * in the keeper's memory context of this turn of its loop.
 */
static int	plan_n = 0;
static int32 *plan_shards;
static uint64 *plan_positions;
static uint8 *plan_changes;
static bool *plan_released;
static int64 plan_event;

/* Collect the pending floors and releases; returns how many shards. */
int
idgen_shard_floors_plan(void)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	IdgenShardControl *sc = &idgen_shared->shards;
	int			n = 0;

	plan_n = 0;
	if (pg_atomic_exchange_u32(&keeper->floors_pending, 0) == 0)
		return 0;

	plan_shards = palloc(sizeof(int32) * IDGEN_INSTAGRAM_NSHARDS);
	plan_positions = palloc(sizeof(uint64) * IDGEN_INSTAGRAM_NSHARDS);
	plan_changes = palloc(sizeof(uint8) * IDGEN_INSTAGRAM_NSHARDS);
	plan_released = palloc(sizeof(bool) * IDGEN_INSTAGRAM_NSHARDS);
	LWLockAcquire(keeper->lock, LW_SHARED);
	for (int i = 0; i < IDGEN_INSTAGRAM_NSHARDS; i++)
	{
		uint8		change = sc->release_pending[i];

		if (sc->floor_pending[i] > sc->floor_durable[i] ||
			change != IDGEN_RELEASE_KEEP)
		{
			plan_shards[n] = i;
			plan_positions[n] = Max(sc->floor_pending[i], sc->floor_durable[i]);
			plan_changes[n] = change;
			plan_released[n++] = change == IDGEN_RELEASE_KEEP ? sc->released[i] :
				change == IDGEN_RELEASE_RELEASE;
		}
	}
	plan_event = sc->last_event;
	LWLockRelease(keeper->lock);
	plan_n = n;
	return n;
}

/*
 * idgen.database has idgen 1.0, which has no table for the floors: say so
 * to the waiting callers (the plan is dropped).
 */
void
idgen_shard_floors_no_table(void)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);

	plan_n = 0;
	LWLockAcquire(keeper->lock, LW_EXCLUSIVE);
	snprintf(keeper->floor_message, sizeof(keeper->floor_message),
			 "Database \"%s\" has idgen 1.0, which has no table for shard floors; run ALTER EXTENSION idgen UPDATE there",
			 idgen_database);
	LWLockRelease(keeper->lock);
	ConditionVariableBroadcast(&keeper->cv);
}

/* Write the plan's rows into table relid, in the caller's transaction. */
void
idgen_shard_floors_write(Oid relid)
{
	Relation	rel;

	/*
	 * A table other than the one the floors were written to: the extension
	 * was re-created.  Mark everything it lacks for the next round first,
	 * so that writing these rows cannot make it look complete.
	 */
	if (relid != keeper_floors_relid)
		idgen_keeper_recheck_floors(relid);
	rel = idgen_keeper_open_floors(relid, RowExclusiveLock);
	for (int i = 0; i < plan_n; i++)
	{
		Datum		values[IDGEN_FLOOR_NCOLUMNS];
		bool		nulls[IDGEN_FLOOR_NCOLUMNS] = {false, false, false, false};

		values[0] = Int32GetDatum(plan_shards[i]);
		values[1] = Int64GetDatum(idgen_instagram_id_at(plan_positions[i],
														plan_shards[i]));
		values[2] = BoolGetDatum(plan_released[i]);
		values[3] = Int64GetDatum(plan_event + 1 + i);
		simple_heap_insert(rel, heap_form_tuple(RelationGetDescr(rel),
												values, nulls));
	}
	table_close(rel, RowExclusiveLock);
}

/* The plan's rows are durable: record them, then tell the callers. */
void
idgen_shard_floors_publish(void)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	IdgenShardControl *sc = &idgen_shared->shards;

	LWLockAcquire(keeper->lock, LW_EXCLUSIVE);
	for (int i = 0; i < plan_n; i++)
	{
		int32		shard = plan_shards[i];

		sc->floor_durable[shard] = Max(sc->floor_durable[shard], plan_positions[i]);
		sc->released[shard] = plan_released[i];
		/* a change asked for while we wrote waits for the next round */
		if (sc->release_pending[shard] == plan_changes[i])
			sc->release_pending[shard] = IDGEN_RELEASE_KEEP;
	}
	sc->last_event = Max(sc->last_event, plan_event + plan_n);

	/* a shard taken back issues again if idgen.shards lists it */
	for (int i = 0; i < plan_n; i++)
		if (plan_changes[i] == IDGEN_RELEASE_TAKE_BACK)
			idgen_keeper_apply_shard_locked(plan_shards[i]);
	LWLockRelease(keeper->lock);
	plan_n = 0;
	ConditionVariableBroadcast(&keeper->cv);
}

/*
 * Set one shard generator's "owned" flag from idgen.shards as the keeper
 * read it and from its durable release, and note the setting as applied.
 * Keeper only; caller holds the keeper's LWLock, in either mode, so that
 * a release asked for cannot come between reading it and switching the
 * generator (the generator's spinlock is taken inside it).
 */
static void
idgen_keeper_apply_shard_locked(int32 shard)
{
	IdgenShardControl *sc = &idgen_shared->shards;
	IdgenGenerator *gen = &idgen_shared->instagram[shard].gen;
	uint8	   *applied = sc->applied;
	bool		listed = idgen_owns_shard(shard);

	/* a release being made durable counts already */
	bool		released = sc->released[shard] ||
		sc->release_pending[shard] == IDGEN_RELEASE_RELEASE;

	SpinLockAcquire(&gen->mutex);
	gen->owned = listed && !released;
	SpinLockRelease(&gen->mutex);
	if (listed)
		applied[shard >> 3] |= (uint8) (1 << (shard & 7));
	else
		applied[shard >> 3] &= (uint8) ~(1 << (shard & 7));
}

/*
 * Copy changes of idgen.shards (as this process last read it) into the
 * generators' owned flags.  Only shards whose setting changed since the
 * last copy are touched, so a shard released with instagram_id_release()
 * stays released until its setting changes.
 */
void
idgen_keeper_apply_shards(void)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	uint8	   *applied = idgen_shared->shards.applied;
	bool		locked = false;

	for (int byte = 0; byte < IDGEN_INSTAGRAM_NSHARDS / 8; byte++)
	{
		uint8		changed = applied[byte] ^ idgen_owned_shards[byte];

		if (changed == 0)
			continue;
		/* once for all the changes, and not at all in the usual round */
		if (!locked)
			LWLockAcquire(keeper->lock, LW_SHARED);
		locked = true;
		for (int bit = 0; bit < 8; bit++)
			if ((changed >> bit) & 1)
				idgen_keeper_apply_shard_locked(byte * 8 + bit);
	}
	if (locked)
		LWLockRelease(keeper->lock);
}
