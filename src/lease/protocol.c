/*-------------------------------------------------------------------------
 *
 * lease/protocol.c
 *	  Node-id leases in etcd: two live servers never embed the same node id.
 *
 * The keeper's side of node-id leases, as a protocol (it runs in the
 * keeper alone, from its loop, outside transactions): claim a node id in
 * etcd under a lease, wait out the claim's fence, renew the lease and
 * check the node key, record in etcd how far this server's reservation may
 * reach before it is published, hand that over when the lease is lost,
 * and give the id back on a clean stop.  Its invariants: only this file
 * writes the lease word and the deadline; the word is valid only while the
 * claim stands and only before the deadline, never before the generators
 * that embed the node id are floored above what etcd records, and nothing
 * is published beyond what etcd records while it is valid; an etcd failure
 * is noted (etcd_failure, IdgenLease.error), not thrown, but for a
 * reservation etcd did not answer for (idgen_lease_record_failed).  Why
 * this is safe (its three rules) and its locking are in src/README, "Node
 * identity and leases"; what each request sends and how each answer is
 * read is in lease/record.c.
 *
 * IDENTIFICATION
 *	  src/lease/protocol.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid_d.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "postmaster/postmaster.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "idgen.h"
#include "keeper/keeper.h"
#include "lease/counters.h"
#include "lease/etcd.h"
#include "lease/lease.h"
#include "lease/protocol.h"

/* how soon to try again after a failed claim or renewal */
#define IDGEN_LEASE_RETRY_MS 500
#define IDGEN_LEASE_CLAIM_RETRY_MS 1000

/*
 * What this keeper knows of the reservation record between its writes
 * (lease/lease.h), handed to every write (idgen_etcd_write_record).
 */
static IdgenLeaseRecordState record_state = {0, false, false};

/*
 * Whether this keeper process has read the record of the lease it holds:
 * its memory of what the server reserved under the node id is then
 * complete (the record's revision is record_state.rev).
 */
static bool record_known = false;

/*
 * A lease was lost while this server may have reserved beyond what etcd
 * records: write it into the record before claiming again
 * (idgen_lease_hand_over).
 */
static bool handover_pending = false;

/*
 * The last failure of any etcd request the protocol made, as the request
 * noted it (lease/etcd.h): every request here is handed this one, so it is the
 * keeper's "last etcd error", which the lease's status and the messages
 * that stop generation under the node id report (idgen_lease_set_error,
 * idgen_lease_invalidate), even one made requests after it failed (the
 * deadline passed).  In static storage: the keeper resets its memory
 * context at every turn of its loop, and this outlives the turn.
 */
static IdgenEtcdResult etcd_failure = {false, "no answer"};

/* keeper-local schedule, on idgen_clock_monotonic_ms()'s scale */
static int64 next_renew_ms = 0;
static int64 next_claim_ms = 0;

/*
 * Since when (same scale) the node id has been held by what looks like this
 * server before a restart, or 0.  Such a lease expires within a TTL; one
 * that lasts twice "idgen.lease_ttl" is another live server that looks like
 * us (a copy of this one, with the same host name and port), which someone
 * has to stop or renumber.
 */
static int64 self_taken_since_ms = 0;

static int64
idgen_lease_margin_ms(void)
{
	return Max(500, (int64) idgen_lease_ttl_s * 1000 / 4);
}

/* ---- the keeper's side ---- */

/*
 * Make a new deadline visible to the generators (idgen_require_node_id).
 * Called before the word is made valid, and after each renewal.
 */
static void
idgen_lease_publish_deadline(int64 deadline_ms)
{
	pg_atomic_write_u64(&idgen_shared->lease_deadline.ms, (uint64) Max(deadline_ms, 0));
	pg_write_barrier();
}

/*
 * Note an etcd failure for the generators' errors and the status; "config"
 * says that someone has to correct something (etcd_failure.config for a
 * failure that etcd_failure.message tells).
 */
static void
idgen_lease_set_error(const char *message, bool config)
{
	IdgenLease *lease = LEASE(idgen_shared);
	TimestampTz now = GetCurrentTimestamp();

	SpinLockAcquire(&lease->mutex);
	strlcpy(lease->error, message ? message : "unknown", sizeof(lease->error));
	lease->error_config = config;
	lease->error_at = now;
	SpinLockRelease(&lease->mutex);
}

/*
 * Set the state and who holds our node id (holder_is_self: this server
 * before a crash restart).  A claim that went through (FENCING, and HELD in
 * idgen_lease_validate) clears error_config: the last failure's text and
 * time stay for idgen_lease_status(), but no longer make the generators
 * say that someone has to fix something.
 */
static void
idgen_lease_set_state(IdgenLeaseState state, const char *holder,
					  bool holder_is_self)
{
	IdgenLease *lease = LEASE(idgen_shared);

	SpinLockAcquire(&lease->mutex);
	lease->state = state;
	strlcpy(lease->holder, holder ? holder : "", sizeof(lease->holder));
	lease->holder_is_self = holder_is_self;
	if (state == IDGEN_LEASE_FENCING || state == IDGEN_LEASE_HELD)
		lease->error_config = false;
	SpinLockRelease(&lease->mutex);
}

/*
 * Stop generation under the node id: clear the word with a full barrier,
 * before anything that follows (a reservation etcd does not record).
 */
static void
idgen_lease_invalidate(IdgenLeaseState state, const char *why, bool config)
{
	uint32		old = pg_atomic_exchange_u32(&idgen_shared->lease_word.word, 0);

	if (idgen_lease_word_valid(old))
		ereport(LOG,
				(errmsg("idgen keeper: generation under node id %d stopped: %s",
						idgen_lease_word_node(old), why)));
	idgen_lease_set_error(why, config);
	idgen_lease_set_state(state, NULL, false);
}

/*
 * For a keeper that waits for its first claim ("idgen.node_id" = 'auto'):
 * whether the claim waits on an etcd failure of configuration (a wrong
 * password file, say), which someone has to fix.
 */
bool
idgen_lease_claim_blocked(void)
{
	IdgenLease *lease = LEASE(idgen_shared);
	bool		blocked;

	SpinLockAcquire(&lease->mutex);
	blocked = lease->error_config &&
		lease->state != IDGEN_LEASE_HELD && lease->state != IDGEN_LEASE_FENCING;
	SpinLockRelease(&lease->mutex);
	return blocked;
}

/*
 * With "idgen.node_id" = 'auto' under leases: whether this server has not
 * claimed a node id yet in this shared memory.  The keeper loads named
 * generators only once it has (they have the node id composed into their
 * slots, idgen_current_node_id()).
 */
bool
idgen_lease_awaiting_claim(void)
{
	IdgenLease *lease = LEASE(idgen_shared);
	int32		node_id;

	if (!idgen_leases_on || pg_strcasecmp(idgen_node_id_string, "auto") != 0)
		return false;
	SpinLockAcquire(&lease->mutex);
	node_id = lease->node_id;
	SpinLockRelease(&lease->mutex);
	return node_id < 0;
}

/* The published reservation in Unix ms (0 if none yet). */
static int64
idgen_lease_published_unix_ms(void)
{
	int64		hwm = (int64) pg_atomic_read_u64(&idgen_shared->keeper.keeper.hwm_ms);

	return hwm == 0 ? 0 : hwm + idgen_epoch_unix_ms;
}

/*
 * Let generation run under the claimed lease: record our reservation in
 * etcd as far as it reaches now, then set the word.  The caller has taken
 * the record in (idgen_lease_reconcile, with the time floors), and the
 * claim's fence is over.
 *
 * Every path that sets the word comes here, so the counters that embed the
 * node id are raised here, to what this keeper knows etcd records: a slot
 * may have been installed before the record was read (a keeper restarted
 * under a live lease loads definitions whatever the lease state), and then
 * took no floor from it.
 */
static bool
idgen_lease_validate(int32 node_id, int64 lease_id)
{
	IdgenLease *lease = LEASE(idgen_shared);
	uint32		generation;

	idgen_registry_raise_node_counters();

	/*
	 * Never below what etcd already records for the id (read at the claim,
	 * or written since), nor below what generators may use: the published
	 * reservation, and what the counters that embed the node id published.
	 */
	idgen_registry_note_node_counters();
	if (!idgen_etcd_write_record(&record_state, node_id, lease_id,
								 idgen_lease_published_unix_ms() + idgen_reservation_ms,
								 &etcd_failure))
		return false;
	SpinLockAcquire(&lease->mutex);
	lease->state = IDGEN_LEASE_HELD;
	lease->holder[0] = '\0';
	lease->holder_is_self = false;
	lease->error_config = false;	/* renewed: the last failure has passed */
	generation = ++lease->generation;
	SpinLockRelease(&lease->mutex);
	handover_pending = false;	/* what we reserved is in the record */

	/*
	 * With a full barrier: the record is in etcd, and the floors are in
	 * place, before any call can use the word.  A new generation each time,
	 * so that a call that took its position under an earlier word fails.
	 */
	pg_atomic_exchange_u32(&idgen_shared->lease_word.word,
						   idgen_lease_word_make(node_id, generation));
	return true;
}

/*
 * The record, read with a renewal.  A keeper new under the lease (the one
 * before it exited) takes it in and floors from it, as a claim does.  And
 * whatever the keeper, a record that lacks what this server reserved
 * (etcd restored from a snapshot that the lease outlived, a hand edit) is
 * written again at once, before anything more is published.  False if
 * that write failed.
 */
static bool
idgen_lease_take_record(int32 node_id, int64 lease_id, const IdgenLeaseRecord *rec)
{
	bool		behind;

	/*
	 * A new keeper knows only what is published, not the previous holders'
	 * counters that an unreadable record carried: refuse rather than
	 * overwrite them (etcd_failure says why).
	 */
	if (!record_known && rec->unreadable)
		return false;

	/* what is published counts as reserved */
	if (!record_known)
		idgen_registry_note_node_counters();
	behind = idgen_lease_reconcile(node_id, rec, true, !record_known);
	if (!record_known)
	{
		idgen_lease_apply_floor(rec->floor_unix_ms, false);
		record_known = true;
	}
	record_state.rev = rec->mod_revision;
	return !behind ||
		idgen_etcd_write_record(&record_state, node_id, lease_id, 0, &etcd_failure);
}

/*
 * This server lost its lease on node_id, perhaps having issued beyond what
 * etcd records (etcd restored from a snapshot older than the claim, or a
 * write that failed).  Write what it reserved into the record, without a
 * lease but only upwards (idgen_etcd_write_record), so that the next
 * holder, which waits out its fence before it issues, starts above it.
 * True once done, or if the record lacked nothing.
 */
static bool
idgen_lease_hand_over(int32 node_id)
{
	JsonbContainer *kv;
	IdgenLeaseRecord rec;

	if (!idgen_etcd_get_key("reservation", node_id, &kv, &etcd_failure))
		return false;
	(void) idgen_lease_parse_record(node_id, kv, &rec, &etcd_failure);
	record_state.rev = rec.mod_revision;
	if (!idgen_lease_reconcile(node_id, &rec, false, true))
		return true;
	return idgen_etcd_write_record(&record_state, node_id, 0, 0, &etcd_failure);
}

/* Pick a node id and claim it.  Called with no lease held. */
static void
idgen_lease_claim(void)
{
	IdgenLease *lease = LEASE(idgen_shared);
	int64		sent;
	int64		ttl_s = 0;
	int64		lease_id;
	int32		wanted;
	bool		held[IDGEN_SNOWFLAKE_MAX_NODE + 1];
	int			tries = 0;

	SpinLockAcquire(&lease->mutex);
	wanted = lease->node_id;
	SpinLockRelease(&lease->mutex);
	if (idgen_node_id >= 0)
		wanted = idgen_node_id;

	lease_id = idgen_etcd_grant(&sent, &ttl_s, &etcd_failure);
	if (lease_id == 0)
	{
		idgen_lease_set_error(etcd_failure.message, etcd_failure.config);
		return;
	}

	/*
	 * With "auto", once an id was claimed in this shared memory we keep to
	 * it: named generators have it composed into their slots.
	 */
	if (wanted < 0 && !idgen_etcd_held_ids(held, &etcd_failure))
	{
		idgen_lease_set_error(etcd_failure.message, etcd_failure.config);
		idgen_etcd_revoke(lease_id, idgen_lease_request_timeout(), &etcd_failure);
		return;
	}

	for (int32 candidate = 0; candidate <= IDGEN_SNOWFLAKE_MAX_NODE && tries < 8; candidate++)
	{
		int32		node_id = wanted >= 0 ? wanted : candidate;
		IdgenLeaseRecord rec;
		char	   *holder = NULL;
		bool		holder_is_self = false;
		TimestampTz since;
		int64		fence_ms;
		int			rc;

		if (wanted < 0 && held[candidate])
			continue;
		tries++;
		rc = idgen_etcd_claim(node_id, lease_id, &rec, &holder, &holder_is_self,
							  &etcd_failure);
		if (rc < 0)
		{
			idgen_lease_set_error(etcd_failure.message, etcd_failure.config);
			break;
		}
		if (rc == 0)
		{
			int64		now = idgen_clock_monotonic_ms();

			if (!holder_is_self)
				self_taken_since_ms = 0;
			else if (self_taken_since_ms == 0)
				self_taken_since_ms = now;
			else if (now - self_taken_since_ms > 2 * (int64) idgen_lease_ttl_s * 1000)
			{
				size_t		len = strlen(holder);
				size_t		note_len = strlen(IDGEN_LEASE_SELF_NOTE);

				holder_is_self = false;
				if (len >= note_len &&
					strcmp(holder + len - note_len, IDGEN_LEASE_SELF_NOTE) == 0)
					holder[len - note_len] = '\0';
				holder = psprintf("%s (like this server, but holding the node id for over twice \"idgen.lease_ttl\": another server)",
								  holder);
			}
			SpinLockAcquire(&lease->mutex);
			if (wanted >= 0)
				lease->node_id = node_id;
			SpinLockRelease(&lease->mutex);
			idgen_lease_set_state(wanted >= 0 ? IDGEN_LEASE_TAKEN : IDGEN_LEASE_CLAIMING,
								  holder, holder_is_self);
			if (wanted >= 0)
				break;
			continue;
		}

		/* claimed: take the record in and floor from it */
		self_taken_since_ms = 0;
		since = GetCurrentTimestamp();
		SpinLockAcquire(&lease->mutex);
		lease->lease_id = lease_id;
		lease->node_id = node_id;
		lease->deadline_ms = sent + ttl_s * 1000 - idgen_lease_margin_ms();
		lease->since = since;
		SpinLockRelease(&lease->mutex);
		idgen_lease_publish_deadline(sent + ttl_s * 1000 - idgen_lease_margin_ms());
		(void) idgen_lease_reconcile(node_id, &rec, true, true);
		record_state.rev = rec.mod_revision;
		record_known = true;
		idgen_lease_apply_floor(rec.floor_unix_ms, true);

		/*
		 * The fence.  The id was free in etcd, but etcd may have been
		 * restored from a snapshot older than another server's claim of it:
		 * that server still issues under it until its next renewal finds its
		 * lease gone, or at the latest until its deadline, less than a TTL
		 * after the last renewal etcd forgot.  So nothing is issued under
		 * the new claim until a TTL after it was answered (the longest of
		 * ours, etcd's grant and the previous writer's); meanwhile that
		 * server, finding its lease gone, writes what it reserved into the
		 * record, which is read again when the fence ends.
		 */
		fence_ms = Max(Max(ttl_s, rec.ttl_s), (int64) idgen_lease_ttl_s) * 1000;
		SpinLockAcquire(&lease->mutex);
		lease->fence_until_ms = idgen_clock_monotonic_ms() + fence_ms;
		lease->state = IDGEN_LEASE_FENCING;
		lease->holder[0] = '\0';
		lease->holder_is_self = false;
		lease->error_config = false;	/* claimed: the last failure passed */
		SpinLockRelease(&lease->mutex);
		ereport(LOG,
				(errmsg("idgen keeper: claimed node id %d in etcd with lease " INT64_FORMAT " (TTL " INT64_FORMAT " s); IDs under it in " INT64_FORMAT " ms",
						node_id, lease_id, ttl_s, fence_ms),
				 errdetail("A server whose claim etcd lost (restored from a snapshot) could still issue under the node id until then.")));
		next_renew_ms = sent + ttl_s * 1000 / 3;
		return;
	}
	idgen_etcd_revoke(lease_id, idgen_lease_request_timeout(), &etcd_failure);
}

/*
 * The lease is no longer ours: claim again at once, and hand over first
 * what this server reserved if the record was known (idgen_lease_hand_over:
 * a holder etcd forgot writes it back before it claims again).
 */
static void
idgen_lease_forget(void)
{
	IdgenLease *lease = LEASE(idgen_shared);

	SpinLockAcquire(&lease->mutex);
	lease->lease_id = 0;
	SpinLockRelease(&lease->mutex);
	next_claim_ms = 0;
	handover_pending = record_known;
}

/*
 * Our lease no longer holds the node key (deleted by hand, or etcd
 * restored from a snapshot older than the claim): the lease is worth
 * nothing.  Stop generation, give the lease back, and claim afresh at the
 * next step, which hands over what we reserved and reads the record.
 */
static void
idgen_lease_give_up(int64 lease_id)
{
	idgen_lease_invalidate(IDGEN_LEASE_LOST, etcd_failure.message, etcd_failure.config);
	idgen_etcd_revoke(lease_id, idgen_lease_request_timeout(), &etcd_failure);
	idgen_lease_forget();
}

/*
 * Renew the lease, check the node key and read the record: the step's
 * work while a lease is held and a renewal is due, or the claim's fence is
 * over.  valid and fence_until are the word's and the fence's as the step
 * found them.
 */
static void
idgen_lease_renew(int64 lease_id, int32 node_id, bool valid,
				  int64 fence_until, int64 now)
{
	IdgenLease *lease = LEASE(idgen_shared);
	int64		sent = now;
	int64		ttl_s = idgen_etcd_keepalive(lease_id, &etcd_failure);
	IdgenLeaseRecord rec;
	int			ours = 1;

	/*
	 * After a renewal, check that the lease still holds the node key (an
	 * idle server writes no record that would notice otherwise), and
	 * read the record in the same request: etcd restored from a snapshot
	 * that our lease outlived may hold less than we reserved.  The
	 * deadline is extended only when the check confirmed the key: a
	 * restored etcd may keep our lease alive while another server has
	 * claimed the key our lease lost, so a renewal alone proves nothing.
	 * A key found gone gives up; an unanswered check is tried again soon,
	 * the deadline left where it was; only a confirmed key, with a
	 * record that lacks nothing, makes the word valid.
	 */
	if (ttl_s > 0)
		ours = idgen_etcd_check(node_id, lease_id, &rec, &etcd_failure);
	if (ttl_s > 0 && ours == 0)
		idgen_lease_give_up(lease_id);
	else if (ttl_s > 0 && ours < 0)
	{
		idgen_lease_set_error(etcd_failure.message, etcd_failure.config);
		next_renew_ms = now + IDGEN_LEASE_RETRY_MS;
	}
	else if (ttl_s > 0)
	{
		SpinLockAcquire(&lease->mutex);
		lease->deadline_ms = sent + ttl_s * 1000 - idgen_lease_margin_ms();
		lease->renewals++;
		SpinLockRelease(&lease->mutex);
		idgen_lease_publish_deadline(sent + ttl_s * 1000 - idgen_lease_margin_ms());
		next_renew_ms = sent + ttl_s * 1000 / 3;
		if (!idgen_lease_take_record(node_id, lease_id, &rec))
		{
			idgen_lease_invalidate(IDGEN_LEASE_LOST, etcd_failure.message, etcd_failure.config);
			next_renew_ms = Min(next_renew_ms, now + IDGEN_LEASE_RETRY_MS);
		}

		/*
		 * The claim's fence is over; or back in time, or a new keeper
		 * under the lease of the one before it, which has just read the
		 * record.
		 */
		else if (!valid && idgen_clock_monotonic_ms() >= fence_until)
		{
			if (!idgen_lease_validate(node_id, lease_id))
				idgen_lease_invalidate(IDGEN_LEASE_LOST, etcd_failure.message, etcd_failure.config);
		}
		else if (!valid)
			idgen_lease_set_state(IDGEN_LEASE_FENCING, NULL, false);
	}
	else if (ttl_s == 0)
	{
		/* gone at etcd: whatever we still held is someone else's now */
		idgen_lease_invalidate(IDGEN_LEASE_LOST,
							   psprintf("the lease " INT64_FORMAT " is gone from etcd: it expired, or etcd was restored from a snapshot older than it",
									lease_id),
							   false);
		idgen_lease_forget();
	}
	else
	{
		idgen_lease_set_error(etcd_failure.message, etcd_failure.config);
		next_renew_ms = now + IDGEN_LEASE_RETRY_MS;
	}
}

/*
 * How long the keeper may sleep before the lease's next step: the
 * deadline is absolute, whatever etcd did or did not answer.
 */
static long
idgen_lease_next_wake(void)
{
	IdgenLease *lease = LEASE(idgen_shared);
	int64		lease_id;
	int64		deadline;
	int64		fence_until;
	int64		now;

	SpinLockAcquire(&lease->mutex);
	lease_id = lease->lease_id;
	deadline = lease->deadline_ms;
	fence_until = lease->fence_until_ms;
	SpinLockRelease(&lease->mutex);
	now = idgen_clock_monotonic_ms();
	if (lease_id != 0 &&
		idgen_lease_word_valid(pg_atomic_read_u32(&idgen_shared->lease_word.word)))
	{
		if (now >= deadline)
		{
			idgen_lease_invalidate(IDGEN_LEASE_LOST,
								   psprintf("could not renew the lease in etcd within \"idgen.lease_ttl\" minus %d ms: %s",
											(int) idgen_lease_margin_ms(),
											etcd_failure.message),
								   etcd_failure.config);
			return IDGEN_LEASE_RETRY_MS;
		}
		return (long) Max(1, Min(deadline, next_renew_ms) - now);
	}
	/* a claim waiting out its fence: wake when it ends */
	if (lease_id != 0 && now < fence_until)
		return (long) Max(1, Min(fence_until, next_renew_ms) - now);
	return IDGEN_LEASE_RETRY_MS;
}

/*
 * One step of the lease, from the keeper's loop: claim, renew, or stop
 * generation at the deadline.  Returns how soon (ms) the keeper must call
 * again.
 */
long
idgen_lease_step(void)
{
	IdgenLease *lease = LEASE(idgen_shared);
	int64		now;
	int64		lease_id;
	int64		fence_until;
	int32		node_id;
	bool		valid;

	/* leases are for a node id that is set, or "auto" */
	if (!idgen_leases_on || idgen_node_id == -1)
		return 60 * 1000;
	if (!idgen_lease_connect())
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("could not set up the connection to etcd"),
				 errdetail("\"idgen.lease_endpoints\" is not valid, or libcurl failed to initialise."),
				 errhint("Check \"idgen.lease_endpoints\" and the server log's earlier messages.")));

	SpinLockAcquire(&lease->mutex);
	lease_id = lease->lease_id;
	node_id = lease->node_id;
	fence_until = lease->fence_until_ms;
	SpinLockRelease(&lease->mutex);
	valid = idgen_lease_word_valid(pg_atomic_read_u32(&idgen_shared->lease_word.word));
	now = idgen_clock_monotonic_ms();

	/*
	 * The node key went while our lease lives (deleted by hand, say): the
	 * lease is worth nothing.  Give it back and claim afresh, which reads
	 * the record and floors again.
	 */
	if (record_state.key_lost)
	{
		record_state.key_lost = false;
		if (lease_id != 0)
		{
			idgen_lease_give_up(lease_id);
			lease_id = 0;
		}
	}

	if (lease_id == 0)
	{
		if (now >= next_claim_ms)
		{
			/* first what we reserved under the lease we lost, if anything */
			if (handover_pending && node_id >= 0 && idgen_lease_hand_over(node_id))
				handover_pending = false;
			idgen_lease_claim();
			next_claim_ms = idgen_clock_monotonic_ms() + IDGEN_LEASE_CLAIM_RETRY_MS;
		}
	}
	else if (now >= next_renew_ms || (!valid && now >= fence_until))
		idgen_lease_renew(lease_id, node_id, valid, fence_until, now);
	return idgen_lease_next_wake();
}

/*
 * etcd did not take the record of the reservation the keeper is about to
 * publish (what: "the reservation").  Nothing is
 * published beyond what etcd holds: the error ends the keeper's round
 * before it publishes, and the keeper tries again after its pause
 * (idgen_keeper_recover).  Generation goes on meanwhile within what was
 * published before, under the lease, whose deadline still holds; so an
 * etcd that is away for less than the reservation costs no caller an
 * error (08006, which passes by itself).
 */
static void
idgen_lease_record_failed(const char *what)
{
	/*
	 * Only an etcd that did not answer: one that answered that the node key
	 * is no longer ours, or kept changing the record, stops generation
	 * under the node id at once, as does a refused setting.
	 */
	if (!record_state.unanswered || record_state.key_lost ||
		etcd_failure.config)
	{
		idgen_lease_invalidate(IDGEN_LEASE_LOST,
							   psprintf("could not record %s in etcd: %s", what,
										etcd_failure.message),
							   etcd_failure.config);
		return;
	}
	idgen_lease_set_error(etcd_failure.message, false);
	ereport(ERROR,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("could not record %s in etcd: %s", what, etcd_failure.message),
			 errdetail("Nothing beyond what etcd holds is published; generation goes on within what was published before.")));
}

/*
 * Before the keeper publishes counter reservations (keeper/load.c), which it
 * has noted with idgen_lease_note_counter(): have etcd record them, or
 * stop generation under the node id first.
 */
void
idgen_lease_record_counters(void)
{
	IdgenLease *lease;
	int64		lease_id;
	int32		node_id;

	if (!idgen_leases_on ||
		!idgen_lease_word_valid(pg_atomic_read_u32(&idgen_shared->lease_word.word)))
		return;
	lease = LEASE(idgen_shared);
	SpinLockAcquire(&lease->mutex);
	lease_id = lease->lease_id;
	node_id = lease->node_id;
	SpinLockRelease(&lease->mutex);
	/*
	 * Stop generation under the node id: the bounds noted are not noted
	 * again (idgen_lease_note_counter), so a later round would not record
	 * them before publishing.
	 */
	if (!idgen_etcd_write_record(&record_state, node_id, lease_id, 0, &etcd_failure))
		idgen_lease_invalidate(IDGEN_LEASE_LOST,
							   psprintf("could not record a counter reservation in etcd: %s",
										etcd_failure.message),
							   etcd_failure.config);
}

/*
 * Before the keeper publishes a reservation reaching unix_ms: have etcd
 * record it, or publish nothing (idgen_lease_record_failed).
 */
void
idgen_lease_before_publish(int64 unix_ms)
{
	IdgenLease *lease;
	int64		recorded;
	int64		lease_id;
	int32		node_id;

	if (!idgen_leases_on ||
		!idgen_lease_word_valid(pg_atomic_read_u32(&idgen_shared->lease_word.word)))
		return;
	lease = LEASE(idgen_shared);
	SpinLockAcquire(&lease->mutex);
	recorded = lease->recorded_unix_ms;
	lease_id = lease->lease_id;
	node_id = lease->node_id;
	SpinLockRelease(&lease->mutex);
	if (unix_ms <= recorded)
		return;
	if (!idgen_etcd_write_record(&record_state, node_id, lease_id,
								 unix_ms + idgen_reservation_ms, &etcd_failure))
		idgen_lease_record_failed("the reservation");
}

/*
 * The keeper stops cleanly (a SIGTERM between its rounds or in its
 * back-off): give the node id back at once, so that the next holder need
 * not wait out the TTL.  Called from the keeper's loop, never from its
 * exit callback, which does no network I/O: a keeper that dies in a
 * transaction, on an error or on a signal it cannot wait for leaves its
 * lease to expire.  Bounded by two requests of IDGEN_LEASE_RELEASE_MS.
 */
#define IDGEN_LEASE_RELEASE_MS 500

void
idgen_lease_release(void)
{
	IdgenLease *lease;
	int64		lease_id;
	int64		recorded;
	int32		node_id;

	if (!idgen_leases_on || idgen_shared == NULL)
		return;

	/*
	 * SIGTERM also comes from pg_terminate_backend(), after which the keeper
	 * restarts: with "auto" the id must still be ours then (named slots have
	 * it composed in), so the lease is left to expire rather than revoked.
	 */
	if (pg_strcasecmp(idgen_node_id_string, "auto") == 0)
		return;
	lease = LEASE(idgen_shared);
	SpinLockAcquire(&lease->mutex);
	lease_id = lease->lease_id;
	SpinLockRelease(&lease->mutex);

	/*
	 * A keeper stopped in its back-off has no connection to etcd yet, but
	 * may have inherited a lease from the keeper before it: set one up.
	 */
	if (lease_id == 0 || !idgen_lease_connect())
		return;					/* nothing to give back, or it expires */

	/* nothing is issued under the id from here */
	(void) pg_atomic_exchange_u32(&idgen_shared->lease_word.word, 0);
	SpinLockAcquire(&lease->mutex);
	node_id = lease->node_id;
	recorded = lease->recorded_unix_ms;
	lease->lease_id = 0;
	lease->state = IDGEN_LEASE_CLAIMING;
	SpinLockRelease(&lease->mutex);

	/*
	 * Before the id is free: the record holds what we reserved.  It does
	 * unless etcd was restored from a snapshot since our last renewal; the
	 * answer is not read here, so write it blind, but only while our lease
	 * holds the node key and the record was not written after our last
	 * write (a revision no higher): a restored record is older, and lacks
	 * nothing we do not have.
	 */
	if (record_known)
		(void) idgen_etcd_call("/v3/kv/txn",
							   psprintf("{\"compare\": [{\"key\": \"%s\", \"target\": \"LEASE\", \"lease\": \"" INT64_FORMAT "\"}, "
										"{\"key\": \"%s\", \"target\": \"MOD\", \"result\": \"LESS\", \"mod_revision\": \"" INT64_FORMAT "\"}], "
										"\"success\": [{\"request_put\": {\"key\": \"%s\", \"value\": \"%s\"}}]}",
										idgen_lease_key("node", node_id), lease_id,
										idgen_lease_key("reservation", node_id), record_state.rev + 1,
										idgen_lease_key("reservation", node_id),
										idgen_base64(idgen_lease_record_value(recorded))),
							   IDGEN_LEASE_RELEASE_MS, &etcd_failure);
	idgen_etcd_revoke(lease_id, IDGEN_LEASE_RELEASE_MS, &etcd_failure);
}

/*
 * The keeper is exiting.  Generation under the node id stops until a
 * keeper renews again.  Shared memory only: no network I/O on an exit
 * path (idgen_lease_release gave the id back if it could).
 */
void
idgen_lease_on_keeper_exit(void)
{
	IdgenLease *lease;

	if (!idgen_leases_on || idgen_shared == NULL)
		return;
	(void) pg_atomic_exchange_u32(&idgen_shared->lease_word.word, 0);
	lease = LEASE(idgen_shared);
	SpinLockAcquire(&lease->mutex);
	lease->state = lease->lease_id != 0 ? IDGEN_LEASE_LOST : IDGEN_LEASE_CLAIMING;
	lease->holder_is_self = false;
	lease->error_config = false;	/* the next keeper finds out afresh */
	SpinLockRelease(&lease->mutex);
}
