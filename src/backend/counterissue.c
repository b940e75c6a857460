/*-------------------------------------------------------------------------
 *
 * backend/counterissue.c
 *	  Counter values taken ahead of the durable reservation, and the waits
 *	  at a statement's end and at commit that make them durable.
 *
 * The engine hands out a counter's values below its durable reservation
 * at once, a few beyond it (idgen_counter_lead) at once but pending the
 * end of the statement that took them, when this file decides they may be
 * taken ahead, and further ones only after waiting for the keeper.  The
 * pending values are a backend-local list that the statement's end (the
 * executor hooks in idgen.c) and the commit (the transaction callback
 * here) wait for, on the keeper's condition variable, or fail closed.  Of
 * the shared state it writes only a slot's want word and its generator's
 * wait count (under its spinlock).
 *
 * IDENTIFICATION
 *	  src/backend/counterissue.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"
#include "tcop/pquery.h"
#include "utils/memutils.h"

#include "idgen.h"
#include "shared/slots.h"

/*
 * Values this session took beyond the durable reservation of counter
 * generators, pending the end of the statement that took them, or the
 * commit (base/counter.c): for each such slot, how far its reservation must
 * reach before either.  An entry goes once the reservation covers it; not
 * when the keeper is late (the next statement waits again), nor when a
 * subtransaction or transaction rolls back, since the code around it may
 * still hold its values (a PL/pgSQL variable assigned in an exception
 * block, or before a procedure's ROLLBACK; session state).  An entry that
 * can never be made durable (the counter was dropped, or raised to a floor
 * from outside, or the node-id claim it was taken under has changed) is
 * doomed: every statement end and commit refuses it, saying why, until a
 * transaction aborts outside any portal (the client's statement failed or
 * it rolled back: no variable of a procedure or function holds a value any
 * more), so a caught refusal cannot let its values into a committed row.  At most one entry per slot; the array is
 * allocated once, before any value is taken, so that recording one cannot
 * fail.
 */
typedef struct IdgenCounterPending
{
	int			slot;
	uint64		need;			/* local values below this must be durable */
	uint32		word;			/* under a leased node id: the lease word
								 * they were taken under, else 0 */
	uint32		epoch;			/* the slot's counter_floor_epoch before the
								 * first of them was taken */
	const char *doomed;			/* why they can never be made durable, or
								 * NULL */
} IdgenCounterPending;

static IdgenCounterPending *counter_pending = NULL;
static int	idgen_counter_pending_n = 0;

/*
 * Set from the start of this transaction's commit (or PREPARE) until its
 * end: values taken then (by another extension's commit callback, after
 * idgen's wait) would not be waited for, so none is taken ahead.
 */
static bool idgen_counter_committing = false;

/* idgen_counter_xact_callback is registered */
static bool callback_registered = false;

/*
 * Values taken ahead cannot be made durable: the statement that took them
 * (at_commit false) or the commit fails.  "keeper" says whether the keeper
 * failed to reserve them (check on it: its state decides the SQLSTATE) or
 * the counter moved under them from outside (a new transaction takes values
 * above that, so it is worth retrying).
 */
static pg_noinline void
idgen_counter_pending_refused(IdgenNamedSlot *slot, bool at_commit,
							  bool keeper, const char *why)
{
	ereport(ERROR,
			(errcode(keeper ? idgen_keeper_errcode() : ERRCODE_IDGEN_RETRY),
			 errmsg("no durable reservation is available for counter generator \"%s\"",
					slot->name),
			 at_commit ?
			 errdetail("This session drew values of it beyond the durable reservation, and %s; the transaction is rolled back.", why) :
			 errdetail("This session drew values of it beyond the durable reservation, and %s; the statement fails.", why),
			 keeper ?
			 errhint("idgen hands out no counter value that is not durably reserved, and each statement of this session waits for these again until the keeper has reserved them (a new session does not). Check the server log for the \"idgen keeper\" background worker.") :
			 errhint("Do not use values of it this session took before this error; roll back and retry the transaction, or use a new session.")));
}

/* Entry p can never be made durable: doom it, and refuse it. */
static pg_noinline void
idgen_counter_pending_doom(int p, bool at_commit, const char *why)
{
	counter_pending[p].doomed = why;
	idgen_counter_pending_refused(&idgen_registry_slots[counter_pending[p].slot],
								  at_commit, false, why);
	pg_unreachable();
}

/*
 * A transaction aborted outside any portal (the client's statement failed,
 * or the client rolled back): no procedure or function is running, so no
 * variable holds a doomed entry's values any more; drop those entries.
 */
static void
idgen_counter_pending_forget_doomed(void)
{
	int			kept = 0;

	for (int p = 0; p < idgen_counter_pending_n; p++)
		if (counter_pending[p].doomed == NULL)
			counter_pending[kept++] = counter_pending[p];
	idgen_counter_pending_n = kept;
}

static void
idgen_counter_pending_note(int slot, uint64 need, uint32 word, uint32 epoch)
{
	for (int p = 0; p < idgen_counter_pending_n; p++)
		if (counter_pending[p].slot == slot)
		{
			/*
			 * Values under two claims, or on both sides of a floor raised
			 * from outside: the earlier ones can never be made durable
			 * (see IdgenCounterPending).  This call's values are refused
			 * with them.
			 */
			if (counter_pending[p].doomed != NULL)
				idgen_counter_pending_doom(p, false, counter_pending[p].doomed);
			if (counter_pending[p].word != word)
				idgen_counter_pending_doom(p, false,
										   "this server's claim on its node id changed since it took them");
			if (counter_pending[p].epoch != epoch)
				idgen_counter_pending_doom(p, false,
										   "the counter was raised to a floor from outside meanwhile (a restored state, or a lease record), or restarted by idgen_restart_generator()");
			counter_pending[p].need = Max(counter_pending[p].need, need);
			return;
		}
	Assert(idgen_counter_pending_n < idgen_max_generators);
	counter_pending[idgen_counter_pending_n].slot = slot;
	counter_pending[idgen_counter_pending_n].need = need;
	counter_pending[idgen_counter_pending_n].word = word;
	counter_pending[idgen_counter_pending_n].epoch = epoch;
	counter_pending[idgen_counter_pending_n].doomed = NULL;
	idgen_counter_pending_n++;
}

/*
 * At the end of a statement, or before this transaction (or parallel
 * worker) commits or prepares: wait until the keeper has made durable
 * every value it took beyond a counter's reservation, or fail closed
 * (55000), which rolls back the statement's (sub)transaction.  Under a
 * leased node id the lease word must still be the one the values were
 * taken under once the reservation covers them: the keeper clears it
 * before it publishes a reservation that etcd does not record (see
 * idgen_issued_node), so then etcd records them for the next holder.
 */
static void
idgen_counter_pending_wait(bool at_commit)
{
	int64		deadline = 0;
	static uint32 wait_event = 0;

	for (int p = 0; p < idgen_counter_pending_n; p++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[counter_pending[p].slot];
		IdgenGenerator *gen = &idgen_registry_gens[counter_pending[p].slot].gen;
		uint64		need = counter_pending[p].need;
		bool		waited = false;

		if (counter_pending[p].doomed != NULL)
			idgen_counter_pending_doom(p, at_commit, counter_pending[p].doomed);
		while (pg_atomic_read_u64(&slot->counter_reserved) < need)
		{
			/* a dropped or refused counter is reserved no further */
			if (pg_atomic_read_u32(&slot->state) != IDGEN_SLOT_ACTIVE)
				idgen_counter_pending_doom(p, at_commit,
										   "the counter was dropped or refused meanwhile");
			if (deadline == 0)
				deadline = idgen_reservation_deadline();
			if (!idgen_keeper_wait_counter(slot, need, deadline,
										   "IdgenCounterDurable", &wait_event))
				idgen_counter_pending_refused(slot, at_commit, true,
											  "the keeper has not reserved them within idgen.max_wait");
			waited = true;
		}
		if (waited)
			ConditionVariableCancelSleep();
		pg_read_barrier();		/* the epoch and word after the reservation */
		if (pg_atomic_read_u32(&slot->counter_floor_epoch) != counter_pending[p].epoch)
			idgen_counter_pending_doom(p, at_commit,
									   "the counter was raised to a floor from outside meanwhile (a restored state, or a lease record), or restarted by idgen_restart_generator()");
		if (counter_pending[p].word != 0 &&
			pg_atomic_read_u32(&idgen_shared->lease_word.word) !=
			counter_pending[p].word)
			idgen_counter_pending_doom(p, at_commit,
									   "this server's claim on its node id changed meanwhile");
		if (waited)
		{
			SpinLockAcquire(&gen->mutex);
			gen->waits++;
			SpinLockRelease(&gen->mutex);
		}
	}
	idgen_counter_pending_n = 0;
}

/*
 * The transaction's end: values taken beyond a counter's reservation must
 * be durable before it commits or prepares (at_commit), and a rollback
 * outside any portal forgets the doomed entries.  Registered once, by the
 * first call that takes values ahead: a session that never does pays
 * nothing.
 */
static void
idgen_counter_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PARALLEL_PRE_COMMIT ||
		event == XACT_EVENT_PRE_PREPARE)
	{
		idgen_counter_committing = true;
		if (idgen_counter_pending_n > 0)
			idgen_counter_pending_wait(true);
	}
	/* a rollback keeps what is pending, but doomed (see IdgenCounterPending) */
	if (event == XACT_EVENT_ABORT && ActivePortal == NULL && idgen_counter_pending_n > 0)
		idgen_counter_pending_forget_doomed();
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
		idgen_counter_committing = false;
}

/*
 * At the end of a statement (the executor's run, finish and end at any
 * nesting level, or a utility command's end), while its transaction is
 * still in progress: make
 * the counter values it took ahead durable, or fail the statement (55000).
 * Another extension's commit work cannot then ship a value that is not
 * durable, whatever the order in which the extensions' commit callbacks
 * run (postgres_fdw sets up its own when a session first opens a foreign
 * table, which may be after idgen's); the commit's own wait is left for
 * values taken where no statement ends before the commit.
 */
void
idgen_counter_statement_end(void)
{
	if (likely(idgen_counter_pending_n == 0) || !IsTransactionState())
		return;
	idgen_counter_pending_wait(false);
}

/*
 * Raise the error of slot i, which is switched off.  One refused for want
 * of a node id says so as snowflake_id() does, not that its definition
 * changed.
 */
void
idgen_report_switched_off(int i)
{
	if (idgen_registry_slots[i].spec.node_bits > 0 && idgen_current_node_id() < 0)
		idgen_report_no_node("idgen_next");
	idgen_report_slot(i);
}

/*
 * Hand out "count" consecutive local counter values of a counter
 * generator (slot i); returns the first.  The engine issues them
 * (idgen_issue_counter_values, shared/generator.c): below the durable
 * reservation at once; beyond it, within idgen_counter_lead(), at once but
 * pending the end of this statement, which this file then waits for;
 * further, after waiting for the keeper.  Taking values ahead needs a
 * statement to wait at its end (a portal) and no commit under way: the
 * engine asks first (IDGEN_COUNTER_MAY_LEAD), so that a session that never
 * outruns the reservation never sets up the list and the callbacks.
 */
uint64
idgen_issue_counter(int i, uint64 count, uint64 limit, uint32 word)
{
	IdgenCounterAhead ahead = {false, 0, 0};
	uint64		first;

	first = idgen_issue_counter_values(i, count, limit, IDGEN_LEAD_ASK, &ahead);
	if (unlikely(first == IDGEN_COUNTER_MAY_LEAD))
	{
		if (idgen_counter_lead_on && !idgen_counter_committing &&
			ActivePortal != NULL)
		{
			if (!callback_registered)
			{
				RegisterXactCallback(idgen_counter_xact_callback, NULL);
				callback_registered = true;
			}
			if (counter_pending == NULL)
				counter_pending = MemoryContextAlloc(TopMemoryContext,
													 sizeof(IdgenCounterPending) * idgen_max_generators);
			first = idgen_issue_counter_values(i, count, limit, IDGEN_LEAD_TAKE, &ahead);
		}
		else
			first = idgen_issue_counter_values(i, count, limit, IDGEN_LEAD_NEVER, &ahead);
	}
	if (unlikely(first == IDGEN_SWITCHED_OFF))
		idgen_report_switched_off(i);
	if (unlikely(ahead.taken))
		idgen_counter_pending_note(i, ahead.need, word, ahead.epoch);
	return first;
}
