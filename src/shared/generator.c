/*-------------------------------------------------------------------------
 *
 * shared/generator.c
 *	  The engine: the one issuing path of every generator, with a rule for
 *	  time layouts and one for counters.
 *
 * Both rules run under the generator's spinlock, where the only other
 * work is a few comparisons and counter increments; a failed attempt
 * leaves the state as it was.  The time rule is next = max(last + 1,
 * now_tick << seq_bits), within the clock policy (idgen.max_lead,
 * idgen.max_wait) and below the keeper's durable reservation; the counter
 * rule (idgen_issue_counter_values) hands out values below the slot's
 * counter_reserved, a few beyond it taken ahead (idgen_counter_lead), or
 * waits for the keeper.  A call that outruns the reservation waits on the
 * keeper's condition variable, never less than
 * IDGEN_MIN_RESERVATION_WAIT_MS, then fails closed.  A generator switched
 * off for this server ("owned" false: an instagram shard handed to
 * another server, a dropped named generator) returns IDGEN_SWITCHED_OFF,
 * for the caller to report.  src/README ("The model") says why each rule
 * is safe.
 *
 * IDENTIFICATION
 *	  src/shared/generator.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/int.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "utils/timestamp.h"

#include "idgen.h"
#include "shared/slots.h"

/* see the header comment */
#define IDGEN_MIN_RESERVATION_WAIT_MS 1000
#define IDGEN_STARTUP_RESERVATION_WAIT_MS 10000

typedef enum IdgenAttempt
{
	IDGEN_ISSUED,				/* *position holds the new position */
	IDGEN_NOT_OWNED,			/* the generator is switched off here */
	IDGEN_BEFORE_EPOCH,			/* wall clock reads before idgen.epoch */
	IDGEN_EXHAUSTED,			/* next position is past the layout's range */
	IDGEN_TOO_FAR_AHEAD,		/* next position would exceed max_lead */
	IDGEN_BEYOND_RESERVATION	/* next position is not durably reserved */
} IdgenAttempt;

/*
 * A wall-clock reading (ms since idgen.epoch) in the layout's ticks since
 * its epoch.  For unit 1 (every fixed layout, and most named ones) no
 * division: the offset is 0 for the fixed layouts.
 */
static inline int64
idgen_layout_tick(const IdgenLayout *layout, int64 ms)
{
	if (likely(layout->unit_ms == 1))
		return ms - layout->offset_ms;
	return idgen_unit_div(layout, ms - layout->offset_ms);
}

/* The wall clock in the layout's ticks since its epoch. */
static inline int64
idgen_layout_now(const IdgenLayout *layout)
{
	return idgen_layout_tick(layout, idgen_clock_ms());
}

/*
 * The first millisecond of a tick, in ms since idgen.epoch.
 */
static inline int64
idgen_tick_start_ms(const IdgenLayout *layout, int64 tick)
{
	return layout->offset_ms + tick * layout->unit_ms;
}

/*
 * The moment of a position, in ms since idgen.epoch: the scale of the
 * durable reservation and of idgen.max_lead.  A tick's positions are
 * spread evenly through its unit: position (tick, seq) stands at
 * tick_start + floor(seq * unit / 2^seq_bits).  For unit 1 (every fixed
 * layout, and most named ones) that is the tick's start.
 *
 * A position is issued only when its moment is covered by the reservation
 * and within idgen.max_lead of the clock; after a restart every generator
 * resumes at the first position whose moment is at or after the durable
 * reservation (idgen_raise_floor).  So a generator with a coarse unit (a
 * minute, a day) issues on average 2^seq_bits per unit, spread over it, and
 * resumes within its current tick after a restart rather than at the next
 * one, a whole unit ahead of the clock.
 *
 * Only the top 32 bits of seq take part, so that seq * unit fits 63 bits
 * (unit_ms < 2^31) without 128-bit arithmetic; the moment is still
 * non-decreasing in the position, and below the next tick's start.
 */
#define IDGEN_MOMENT_SEQ_BITS 32

static inline int64
idgen_position_ms(const IdgenLayout *layout, uint64 position)
{
	int64		tick = (int64) (position >> layout->seq_bits);
	int			k;
	uint64		hi;

	if (likely(layout->unit_ms == 1))
		return layout->offset_ms + tick;
	k = Min(layout->seq_bits, IDGEN_MOMENT_SEQ_BITS);
	hi = (position & ((UINT64CONST(1) << layout->seq_bits) - 1)) >>
		(layout->seq_bits - k);
	return idgen_tick_start_ms(layout, tick) +
		(int64) ((hi * (uint64) layout->unit_ms) >> k);
}

/* The moment of a position as a Unix ms, for the view's lead. */
int64
idgen_position_unix_ms(const IdgenLayout *layout, uint64 position)
{
	return idgen_epoch_unix_ms + idgen_position_ms(layout, position);
}

/*
 * The first position whose moment is at or after ms (ms since
 * idgen.epoch), the inverse of idgen_position_ms(); past the layout's
 * range, the first position of its limit, which can never be issued.
 */
static uint64
idgen_first_position_from(const IdgenLayout *layout, int64 ms)
{
	int64		tick;
	int64		rest;
	int			k;
	uint64		hi;

	if (ms <= layout->offset_ms)
		return 0;
	tick = idgen_floor_div(ms - layout->offset_ms, layout->unit_ms);
	rest = ms - layout->offset_ms - tick * layout->unit_ms;
	k = Min(layout->seq_bits, IDGEN_MOMENT_SEQ_BITS);
	/* the least hi with (hi * unit) >> k >= rest; rest < unit < 2^31 */
	hi = (((uint64) rest << k) + (uint64) layout->unit_ms - 1) /
		(uint64) layout->unit_ms;
	if (hi >> k)
	{
		tick++;
		hi = 0;
	}
	if (tick >= layout->tick_limit)
		return idgen_tick_position(layout, layout->tick_limit);
	return idgen_tick_position(layout, tick) + (hi << (layout->seq_bits - k));
}

/* ms in ticks: how long to wait for a number of ticks. */
static inline int64
idgen_ticks_to_ms(const IdgenLayout *layout, int64 ticks)
{
	return ticks * layout->unit_ms;
}

/*
 * Record the wall-clock reading "now" and return the reading to issue
 * against.  Caller must hold gen->mutex.
 *
 * A reading older than one already recorded means either that we were
 * descheduled between reading the clock and taking the lock while another
 * backend issued, or that the clock really went backwards.  Only a fresh
 * reading tells the two apart.  This path is rare (a race at a millisecond
 * boundary, or a real clock step) and the read is a vDSO call, not a system
 * call, so we accept it under the spinlock to count regressions honestly.
 */
static inline int64
idgen_observe_clock(IdgenGenerator *gen, const IdgenLayout *layout, int64 now)
{
	if (likely(now >= gen->clock_tick))
	{
		gen->clock_tick = now;
		return now;
	}
	now = idgen_layout_now(layout);
	if (now < gen->clock_tick)
		gen->regressions++;
	gen->clock_tick = now;
	return now;
}

/*
 * One attempt to issue "count" consecutive positions against the wall-clock
 * reading "now_ms" (ms since idgen.epoch).  Takes and releases gen->mutex.  On IDGEN_ISSUED,
 * *position is the first of them.  On anything else the state is
 * unchanged, and *gap_ms says by how many ms the clock is short (before the
 * epoch, or of letting the last position within idgen.max_lead), or, for
 * IDGEN_BEYOND_RESERVATION, which millisecond needs reserving.  Inline, so
 * that the single-ID hot path (count 1) folds to what it was.
 */
static pg_attribute_always_inline IdgenAttempt
idgen_try_issue(IdgenGenerator *gen, const IdgenLayout *layout, int64 now_ms,
				uint64 count, bool waited, uint64 *position, int64 *gap_ms)
{
	int64		now = idgen_layout_tick(layout, now_ms);
	uint64		next;
	uint64		last;
	uint64		first_borrowed;
	int64		next_tick;
	int64		next_ms;
	int64		ahead;

	/*
	 * The reservation only grows, so a value read before taking the lock
	 * can only be too low, which sends us to the slow path, never too high.
	 *
	 * It also answers "are we a primary?" for free: the keeper runs only
	 * once recovery has ended, and a server never re-enters recovery without
	 * new shared memory.  So on a standby the reservation is 0, every call
	 * takes the slow path, and that is where RecoveryInProgress() is asked.
	 */
	int64		reserved_ms = (int64)
		pg_atomic_read_u64(&idgen_shared->keeper.keeper.hwm_ms);

	SpinLockAcquire(&gen->mutex);
	if (unlikely(!gen->owned))
	{
		SpinLockRelease(&gen->mutex);
		return IDGEN_NOT_OWNED;
	}
	now = idgen_observe_clock(gen, layout, now);
	if (unlikely(now < 0))
	{
		SpinLockRelease(&gen->mutex);
		*gap_ms = idgen_ticks_to_ms(layout, -now);
		return IDGEN_BEFORE_EPOCH;
	}
	/* a tick at or past the limit is never shifted: it would wrap */
	if (unlikely(now >= layout->tick_limit))
	{
		SpinLockRelease(&gen->mutex);
		return IDGEN_EXHAUSTED;
	}
	next = Max(gen->at.last + 1, idgen_tick_position(layout, now));
	last = next + count - 1;
	next_tick = (int64) (last >> layout->seq_bits);
	if (unlikely(next_tick >= layout->tick_limit))
	{
		SpinLockRelease(&gen->mutex);
		return IDGEN_EXHAUSTED;
	}

	/*
	 * Within idgen.max_lead, and covered by the reservation?  Both are
	 * measured at the moment of the last position.  For unit 1 the lead in
	 * ticks is the lead in ms: no multiplication on the hot path.
	 */
	next_ms = idgen_position_ms(layout, last);
	if (likely(layout->unit_ms == 1))
		ahead = next_tick - now;
	else
	{
		/*
		 * Measured against a clock read under the lock: a reading taken
		 * before it may be older than the one a session that got the lock
		 * first issued against, by less than a tick, which
		 * idgen_observe_clock() cannot see.
		 */
		now_ms = Max(now_ms, idgen_clock_ms());
		ahead = next_ms - now_ms;
	}
	if (unlikely(ahead > idgen_max_lead_ms))
	{
		SpinLockRelease(&gen->mutex);
		*gap_ms = ahead - idgen_max_lead_ms;
		return IDGEN_TOO_FAR_AHEAD;
	}
	if (unlikely(reserved_ms <= 0 || next_ms >= reserved_ms))
	{
		SpinLockRelease(&gen->mutex);
		*gap_ms = next_ms;
		return IDGEN_BEYOND_RESERVATION;
	}
	gen->at.last = last;
	gen->issued += count;
	if (likely(layout->unit_ms == 1))
		first_borrowed = Max(next, idgen_tick_position(layout, now + 1));
	else
		first_borrowed = next_ms <= now_ms ? PG_UINT64_MAX :
			Max(next, idgen_first_position_from(layout, now_ms + 1));
	if (last >= first_borrowed)
		gen->borrowed += last - first_borrowed + 1;
	if (unlikely(waited))
		gen->waits++;
	SpinLockRelease(&gen->mutex);

	/* the keeper reserves from the highest millisecond issued */
	if (unlikely(next_ms > 0 && (uint64) next_ms >
				 pg_atomic_read_u64(&idgen_shared->issued.ms)))
		idgen_note_issued(next_ms);

	*position = next;
	return IDGEN_ISSUED;
}

/*
 * Record that millisecond ms has been issued (or floored to), so that the
 * keeper's reservation reaches beyond it.  Only ever raises the value.
 */
void
idgen_note_issued(int64 ms)
{
	uint64		seen = pg_atomic_read_u64(&idgen_shared->issued.ms);

	while (seen < (uint64) ms &&
		   !pg_atomic_compare_exchange_u64(&idgen_shared->issued.ms, &seen,
										   (uint64) ms))
		;
}

/*
 * The deadline, on idgen_clock_monotonic_ms()'s scale, for a wait for the
 * keeper's durable reservation that starts now.
 */
int64
idgen_reservation_deadline(void)
{
	int64		wait_ms = Max(idgen_max_wait_ms, IDGEN_MIN_RESERVATION_WAIT_MS);

	/*
	 * Until the keeper has published its first reservation in this shared
	 * memory (server start, crash restart, promotion) it is connecting and
	 * loading; on a busy machine that can take longer than a second, and a
	 * call made right after a start should wait for it rather than fail.
	 * A keeper that has failed is reported at once by idgen_keeper_wait().
	 */
	if (pg_atomic_read_u64(&idgen_shared->keeper.keeper.hwm_ms) == 0)
		wait_ms = Max(wait_ms, IDGEN_STARTUP_RESERVATION_WAIT_MS);
	return idgen_clock_monotonic_ms() + wait_ms;
}

static void
idgen_report_before_epoch(int64 gap_ms)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("wall clock is before \"idgen.epoch\""),
			 errdetail("The clock reads %lld ms before the epoch %s.",
					   (long long) gap_ms, idgen_epoch_string),
			 errhint("Check the server's clock; the epoch cannot change once IDs have been issued.")));
}

static void
idgen_report_exhausted(const IdgenLayout *layout)
{
	TimestampTz end = idgen_ms_to_timestamptz(idgen_tick_start_ms(layout,
																  layout->tick_limit));

	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("%s ID range is exhausted", layout->name),
			 errdetail("The layout's timestamp field ran out at %s, %lld ticks after its epoch.",
					   timestamptz_to_str(end), (long long) layout->tick_limit),
			 errhint("IDs of this layout cannot be issued any more with this epoch; use a new ID column or a layout with a later epoch.")));
}

/*
 * How far, in ms, the moment of the last of "count" more positions can lie
 * past the last issued one's, for a unit coarser than 1 ms: the moments
 * they span, count * unit / 2^seq_bits, and one step of the moment within
 * the unit (idgen_position_ms), and 1 ms for rounding.  count is at most IDGEN_MAX_BATCH and unit
 * below 2^31, so the product fits.
 */
static int64
idgen_pace_ms(const IdgenLayout *layout, uint64 count)
{
	int			k = Min(layout->seq_bits, IDGEN_MOMENT_SEQ_BITS);
	uint64		span = (uint64) count * (uint64) layout->unit_ms;

	return (int64) (((span >> (layout->seq_bits - k)) + (UINT64CONST(1) << k) - 1) >> k) +
		(((int64) layout->unit_ms + (INT64CONST(1) << k) - 1) >> k) + 1;
}

static void
idgen_report_capacity(const IdgenLayout *layout)
{
	ereport(ERROR,
			(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
			 errmsg("%s ID capacity exceeded", layout->name),
			 errdetail("IDs were requested faster than " UINT64_FORMAT " per %d ms for longer than \"idgen.max_lead\" (%d ms) and \"idgen.max_wait\" (%d ms) absorb.",
					   UINT64CONST(1) << layout->seq_bits,
					   layout->unit_ms,
					   idgen_max_lead_ms, idgen_max_wait_ms),
			 layout->unit_ms > 1 ?
			 errhint("This layout issues at most that many IDs per unit, spread over the unit; for more, define a generator with more seq bits or a finer unit, or raise \"idgen.max_lead\".") :
			 errhint("Spread the load over more shards or node ids, or raise \"idgen.max_lead\" or \"idgen.max_wait\".")));
}

/*
 * The slow path: anything the fast path in idgen_issue() did not handle.
 * Loops, sleeping for the clock, until it issues or must fail.
 */
static pg_noinline uint64
idgen_issue_slow(IdgenGenerator *gen, const IdgenLayout *layout, uint64 count)
{
	int64		deadline = idgen_clock_monotonic_ms() + idgen_max_wait_ms;
	int64		reservation_deadline = idgen_reservation_deadline();
	bool		waited = false;
	static uint32 wait_event_clock = 0;

	idgen_refuse_in_recovery(layout->funcname);

	for (;;)
	{
		uint64		position;
		int64		gap_ms;
		int64		remaining_ms;

		CHECK_FOR_INTERRUPTS();

		switch (idgen_try_issue(gen, layout, idgen_clock_ms(), count, waited,
								&position, &gap_ms))
		{
			case IDGEN_ISSUED:
				return position;
			case IDGEN_NOT_OWNED:
				return IDGEN_SWITCHED_OFF;
			case IDGEN_BEFORE_EPOCH:
				idgen_report_before_epoch(gap_ms);
				break;
			case IDGEN_EXHAUSTED:
				idgen_report_exhausted(layout);
				break;
			case IDGEN_BEYOND_RESERVATION:
				/* a tick starting before idgen.epoch needs any reservation */
				idgen_keeper_wait(Max(gap_ms, 0), reservation_deadline);
				continue;
			case IDGEN_TOO_FAR_AHEAD:
				break;
		}

		/*
		 * A burst alone never leaves the next position more than 1 ms
		 * beyond the lead we allow, for unit 1, since nothing is issued
		 * past it; for a coarser unit, no more than the positions' own
		 * pace.  A larger gap means the clock went backwards; if even a
		 * full max_wait cannot close it, say so now rather than sleep in
		 * vain.  A gap of the pace alone that max_wait cannot close is the
		 * layout's capacity.
		 */
		if (!waited && gap_ms > Max(idgen_max_wait_ms, 1))
		{
			if (layout->unit_ms > 1 && gap_ms <= idgen_pace_ms(layout, count))
				idgen_report_capacity(layout);
			ereport(ERROR,
					(errcode(ERRCODE_IDGEN_RETRY),
					 errmsg("wall clock is behind the %s IDs already issued", layout->name),
					 errdetail("The clock must advance %lld ms before the next ID; \"idgen.max_lead\" is %d ms and \"idgen.max_wait\" is %d ms.",
							   (long long) gap_ms, idgen_max_lead_ms,
							   idgen_max_wait_ms),
					 errhint("Retry in %lld ms, and find out what stepped the clock back (NTP, VM migration).",
							 (long long) gap_ms)));
		}

		remaining_ms = deadline - idgen_clock_monotonic_ms();
		if (remaining_ms <= 0)
			idgen_report_capacity(layout);

		waited = true;
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Min(gap_ms, remaining_ms),
						 idgen_wait_event("IdgenClock", &wait_event_clock));
		ResetLatch(MyLatch);
	}
}

/*
 * Issue the next position of a generator.  This is the hot path: one clock
 * read, one spinlock round trip.  Returns (ms << seq_bits) | seq; the caller
 * splices its node or shard in.  IDGEN_SWITCHED_OFF if the generator is
 * switched off here: the caller reports that.
 */
uint64
idgen_issue(IdgenGenerator *gen, const IdgenLayout *layout)
{
	uint64		position;
	int64		gap_ms;

	if (likely(idgen_try_issue(gen, layout, idgen_clock_ms(), 1, false,
							   &position, &gap_ms) == IDGEN_ISSUED))
		return position;
	return idgen_issue_slow(gen, layout, 1);
}

/*
 * Issue "count" consecutive positions in one lock round trip; returns the
 * first.  They are all covered by the same checks as a single one: the
 * last must lie within idgen.max_lead and the reservation, so a batch
 * larger than (max_lead + 1 ms) of the layout's capacity can never be
 * issued and fails like a burst that outlasts max_wait.
 */
uint64
idgen_issue_batch(IdgenGenerator *gen, const IdgenLayout *layout,
				  uint64 count)
{
	uint64		position;
	int64		gap_ms;

	Assert(count >= 1);
	if (likely(idgen_try_issue(gen, layout, idgen_clock_ms(), count, false,
							   &position, &gap_ms) == IDGEN_ISSUED))
		return position;
	return idgen_issue_slow(gen, layout, count);
}

/* ---- the counter rule ---- */

/*
 * A caller took values beyond slot->counter_wake: fewer than the refill
 * remain.  The first to claim the mark wakes the keeper, once per
 * reservation; a mark the keeper moved meanwhile is looked at again.
 */
static pg_noinline void
idgen_counter_wake_keeper(IdgenNamedSlot *slot, uint64 need)
{
	uint64		wake = pg_atomic_read_u64(&slot->counter_wake);

	while (need > wake && wake != PG_UINT64_MAX)
	{
		if (pg_atomic_compare_exchange_u64(&slot->counter_wake, &wake,
										   PG_UINT64_MAX))
		{
			Latch	   *latch = idgen_keeper_latch();

			if (latch != NULL)
				SetLatch(latch);
			return;
		}
	}
}

/*
 * Issue "count" consecutive local values of the counter generator in slot
 * i, all below limit (the counter's own, spec.counter.limit, or a lower
 * one the caller needs, as idgen_next_int() for integer); returns the
 * first.  Values that would pass a caller's lower limit are not taken:
 * IDGEN_COUNTER_BEYOND_LIMIT, for the caller to report, and nothing
 * changed.  A counter has no clock: its state at.next is
 * the next value to hand out, and the keeper's durable reservation for it is
 * counter_reserved, an exclusive bound.  Below it, at once.  Beyond it:
 * with IDGEN_LEAD_ASK, IDGEN_COUNTER_MAY_LEAD, for the caller to decide
 * whether values may be taken ahead (it must then wait for them at the end
 * of the statement, backend/counterissue.c); with IDGEN_LEAD_TAKE, within
 * idgen_counter_lead() at once, noted in *ahead; otherwise, or further,
 * after waiting for the keeper, bounded, then failing closed.  Like the
 * time rule: under the generator's lock only a few comparisons, a
 * generator switched off here is IDGEN_SWITCHED_OFF for the caller to
 * report, a standby refuses, and no value is issued that the keeper has
 * not reserved or the statement will not wait for.  An exhausted counter
 * is 22003.
 */
uint64
idgen_issue_counter_values(int i, uint64 count, uint64 limit,
						   IdgenLeadMode lead, IdgenCounterAhead *ahead)
{
	IdgenNamedSlot *slot = &idgen_registry_slots[i];
	IdgenGenerator *gen = &idgen_registry_gens[i].gen;
	int64		deadline = 0;
	bool		waited = false;
	static uint32 wait_event = 0;

	for (;;)
	{
		uint64		reserved;
		uint32		epoch = 0;
		uint64		first;
		uint64		need;

		/* only a call taking values ahead needs the epoch (read before) */
		if (unlikely(lead == IDGEN_LEAD_TAKE))
		{
			epoch = pg_atomic_read_u32(&slot->counter_floor_epoch);
			pg_read_barrier();	/* a floor raised before the new epoch */
		}
		SpinLockAcquire(&gen->mutex);
		if (unlikely(!gen->owned))
		{
			SpinLockRelease(&gen->mutex);
			if (waited)
				ConditionVariableCancelSleep();
			return IDGEN_SWITCHED_OFF;
		}

		/*
		 * Under the lock: a restart (idgen_registry_plan_restarts) lowers
		 * the reservation with the next value, switched off, in one
		 * locked step; read before, an old reservation could cover a value
		 * of the new line that no durable row covers.
		 */
		reserved = pg_atomic_read_u64(&slot->counter_reserved);
		first = gen->at.next;
		need = first + count;
		if (likely(need <= reserved && need <= limit))
		{
			gen->at.next = need;
			gen->issued += count;
			if (unlikely(waited))
				gen->waits++;
			SpinLockRelease(&gen->mutex);
			if (unlikely(waited))
				ConditionVariableCancelSleep();
			if (unlikely(need > pg_atomic_read_u64(&slot->counter_wake)))
				idgen_counter_wake_keeper(slot, need);
			return first;
		}

		/*
		 * Beyond the reservation, once the keeper has published one in
		 * this shared memory (so at.next stands above every floor it
		 * loaded): within the lead, pending this statement's end.
		 */
		if (lead == IDGEN_LEAD_TAKE && reserved > 0 &&
			need <= limit &&
			need - reserved <= idgen_counter_lead(&slot->spec))
		{
			gen->at.next = need;
			gen->issued += count;
			SpinLockRelease(&gen->mutex);
			if (waited)
				ConditionVariableCancelSleep();
			ahead->taken = true;
			ahead->need = need;
			ahead->epoch = epoch;
			if (need > pg_atomic_read_u64(&slot->counter_wake))
				idgen_counter_wake_keeper(slot, need);
			return first;
		}
		SpinLockRelease(&gen->mutex);

		if (need > limit && limit < slot->spec.counter.limit)
		{
			if (waited)
				ConditionVariableCancelSleep();
			return IDGEN_COUNTER_BEYOND_LIMIT;
		}
		if (need > limit)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("counter generator \"%s\" is exhausted", slot->name),
					 errdetail("Its %d-bit seq field holds no further value of this server's stripes.",
							   slot->spec.fields[slot->spec.seq_field].bits),
					 errhint("Define a generator with a wider seq field under a new name.")));

		/* outran the reservation: may the caller take the lead? */
		idgen_refuse_in_recovery("idgen_next");
		if (lead == IDGEN_LEAD_ASK)
			return IDGEN_COUNTER_MAY_LEAD;

		/* no (or beyond it): ask the keeper, and wait */
		if (deadline == 0)
			deadline = idgen_reservation_deadline();
		if (!idgen_keeper_wait_counter(slot, need, deadline,
									   "IdgenReservation", &wait_event))
		{
			ConditionVariableCancelSleep();
			ereport(ERROR,
					(errcode(idgen_keeper_errcode()),
					 errmsg("no durable reservation is available for counter generator \"%s\"",
							slot->name),
					 errdetail("The idgen keeper has not extended it; idgen_status() says why."),
					 errhint("idgen hands out no counter value that is not durably reserved. Check the server log for the \"idgen keeper\" background worker.")));
		}
		waited = true;
	}
}

/* A batch size must be 1..IDGEN_MAX_BATCH (22003 otherwise). */
int32
idgen_check_batch_size(FunctionCallInfo fcinfo, int argno)
{
	int32		n;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("batch size must not be null")));
	n = PG_GETARG_INT32(argno);
	if (n < 1 || n > IDGEN_MAX_BATCH)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("batch size %d is out of range", n),
				 errdetail("A batch holds from 1 to %d IDs.", IDGEN_MAX_BATCH),
				 errhint("Call the function several times for more.")));
	return n;
}

/*
 * Make sure a generator's next position lies at or after floor_ms.  The
 * keeper calls this for every generator, before publishing a reservation,
 * when shared memory is new: then IDs below the previous durable
 * reservation may have been issued before a restart, crash or failover.
 * The floor counts as issued, so the next reservation reaches beyond it.
 */
void
idgen_raise_floor(IdgenGenerator *gen, const IdgenLayout *layout,
				  int64 floor_ms)
{
	/* past the range, nothing may be issued any more: it saturates */
	uint64		first = idgen_first_position_from(layout, floor_ms);

	if (first > 0)
	{
		idgen_raise_position(gen, first - 1);
		idgen_note_issued(floor_ms - 1);
	}
}

/*
 * Make sure a generator never issues a position at or below "position":
 * the generator's last position becomes at least that.  Unlike a floor,
 * this does not move the reservation: a shard advanced far ahead of the
 * clock must not hold every other generator back after a restart.
 */
void
idgen_raise_position(IdgenGenerator *gen, uint64 position)
{
	SpinLockAcquire(&gen->mutex);
	if (gen->at.last < position)
		gen->at.last = position;
	SpinLockRelease(&gen->mutex);
}

/*
 * Make sure a counter never hands out a local value below "next" (a floor
 * from its durable state, a lease record or the data directory's file).
 */
void
idgen_raise_counter_next(IdgenGenerator *gen, uint64 next)
{
	SpinLockAcquire(&gen->mutex);
	if (gen->at.next < next)
		gen->at.next = next;
	SpinLockRelease(&gen->mutex);
}

/*
 * What the fixed generators that are never switched off (all but the
 * instagram shards) do if idgen_issue() says one is.
 */
void
idgen_report_never_switched_off(void)
{
	elog(ERROR, "generator is switched off");
	pg_unreachable();
}
