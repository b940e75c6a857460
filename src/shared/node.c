/*-------------------------------------------------------------------------
 *
 * shared/node.c
 *	  Node identity: the node id a generator embeds, and why there is none.
 *
 * Without node-id leases the node id is idgen.node_id.  Under leases it is
 * the one the keeper's claim in etcd holds (lease/protocol.c), published in the
 * lease word (idgen_shared->lease_word), which idgen.h alone decodes, and
 * valid only before the lease's deadline, which the generators check
 * themselves (idgen_require_node_id).  This file holds the side of it the
 * generators, the registry and the status functions use: the node id, the
 * lease's shared state named (shared/shmem.c initialises it), and the errors of a
 * generator that has no node id to embed, with the keeper's SQLSTATE they
 * follow (which shared/reservation.c's waits report too).  The protocol with etcd is
 * lease/protocol.c's, in the keeper.
 *
 * IDENTIFICATION
 *	  src/shared/node.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_authid_d.h"
#include "miscadmin.h"
#include "utils/acl.h"

#include "idgen.h"

const char *
idgen_lease_state_name(IdgenLeaseState state)
{
	switch (state)
	{
		case IDGEN_LEASE_OFF:
			return "off";
		case IDGEN_LEASE_CLAIMING:
			return "claiming";
		case IDGEN_LEASE_HELD:
			return "held";
		case IDGEN_LEASE_TAKEN:
			return "taken";
		case IDGEN_LEASE_LOST:
			return "lost";
		case IDGEN_LEASE_FENCING:
			return "fencing";
	}
	return "unknown";
}

/*
 * The keeper's SQLSTATE, which its waiters report and which the lease
 * errors below follow: here, below the keeper, since the generators'
 * node-id errors need it too.
 */

/*
 * Whether a keeper failure with SQLSTATE sqlerrcode may pass by itself: a
 * lost connection, a cancelled wait, a lock or resource not available, or
 * a commit not confirmed.  Anything else (a missing database or object, a
 * privilege, an altered table) needs someone to fix it, and so does a full
 * disk (53100 disk_full, in the otherwise passing class 53): someone has to
 * free space.
 */
bool
idgen_keeper_failure_passes(int sqlerrcode)
{
	if (sqlerrcode == ERRCODE_DISK_FULL)
		return false;
	switch (ERRCODE_TO_CATEGORY(sqlerrcode))
	{
		case ERRCODE_CONNECTION_EXCEPTION:
		case ERRCODE_TRANSACTION_ROLLBACK:
		case ERRCODE_INSUFFICIENT_RESOURCES:
		case ERRCODE_OPERATOR_INTERVENTION:
			return true;
	}
	return sqlerrcode == ERRCODE_IDGEN_RETRY;
}

/*
 * The SQLSTATE of a wait for the keeper that ran out: ERRCODE_IDGEN_RETRY
 * while it starts, waits for a commit, or was restarted after a failure
 * that passes by itself; 55000 when it refuses a changed epoch, failed for
 * a reason someone has to fix, or (with "idgen.node_id" = 'auto') waits to
 * claim a node id behind a wrong etcd setting.  Caller holds
 * keeper->mutex, or keeper->lock in either mode: the words read here are
 * written only under both.
 */
int
idgen_keeper_errcode_locked(IdgenKeeper *keeper)
{
	if (keeper->state == IDGEN_KEEPER_EPOCH_CHANGED ||
		(keeper->state == IDGEN_KEEPER_STARTING && keeper->claim_blocked))
		return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
	if ((keeper->state == IDGEN_KEEPER_FAILED || keeper->failures > 0) &&
		!idgen_keeper_failure_passes(keeper->failed_errcode))
		return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
	return ERRCODE_IDGEN_RETRY;
}

/* The SQLSTATE of a wait for the keeper that ran out (see above). */
int
idgen_keeper_errcode(void)
{
	IdgenKeeper *keeper = KEEPER(idgen_shared);
	int			code;

	SpinLockAcquire(&keeper->mutex);
	code = idgen_keeper_errcode_locked(keeper);
	SpinLockRelease(&keeper->mutex);
	return code;
}

/*
 * The error of a generator that embeds the node id when the word is not
 * valid (or, without leases, when no node id is set).  Off the hot path.
 *
 * The holder (host, port, system identifier) and etcd's last error (its
 * addresses) are shown to the caller only with the privileges of
 * pg_monitor, as in idgen_lease_status(); the server log has them always.
 */
void
idgen_report_no_node(const char *funcname)
{
	IdgenLease *lease;
	IdgenLeaseState state;
	char		holder[sizeof(lease->holder)];
	char		error[sizeof(lease->error)];
	int32		node_id;
	int64		fence_until;
	bool		config;
	bool		holder_is_self;
	int			code;
	bool		privileged;

	if (!idgen_leases_on || idgen_shared == NULL || idgen_node_id == -1)
	{
		if (idgen_node_id == IDGEN_NODE_AUTO)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("\"idgen.node_id\" is \"auto\" but \"idgen.lease_endpoints\" is empty"),
					 errdetail("Only a lease in etcd can pick a node id that no other server uses."),
					 errhint("Set \"idgen.lease_endpoints\", or set \"idgen.node_id\" to a number, and restart the server.")));
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("\"idgen.node_id\" is not set"),
				 errdetail("%s() embeds the node id in every ID, and servers sharing one would issue duplicates.",
						   funcname),
				 errhint("Set \"idgen.node_id\" to a value from 0 to %d that no other server uses, and restart the server.",
						 IDGEN_SNOWFLAKE_MAX_NODE)));
	}

	lease = (&idgen_shared->lease);
	SpinLockAcquire(&lease->mutex);
	state = lease->state;
	node_id = lease->node_id;
	fence_until = lease->fence_until_ms;
	strlcpy(holder, lease->holder, sizeof(holder));
	strlcpy(error, lease->error, sizeof(error));
	config = lease->error_config;
	holder_is_self = lease->holder_is_self;
	SpinLockRelease(&lease->mutex);
	if (!error[0])
		strlcpy(error, "none", sizeof(error));
	privileged = IsTransactionState() &&
		has_privs_of_role(GetUserId(), ROLE_PG_MONITOR);

	/*
	 * Not claimed, or not current: worth retrying while etcd is out of
	 * reach, but not while its last answer says a setting, a certificate,
	 * a password or a record in etcd is wrong, nor while the keeper, which
	 * claims and renews, failed for a reason someone has to fix (asked
	 * after lease->mutex is released: never two spinlocks at once).
	 */
	if (config ||
		idgen_keeper_errcode() == ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE)
		code = ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
	else
		code = ERRCODE_IDGEN_RETRY;

	/*
	 * Held by another server: someone has to stop it or renumber.  Held by
	 * this server before a crash restart: that lease expires by itself
	 * within "idgen.lease_ttl".
	 */
	if (state == IDGEN_LEASE_TAKEN && holder_is_self)
		ereport(ERROR,
				(errcode(ERRCODE_IDGEN_RETRY),
				 errmsg("node id %d is still held in etcd by this server's lease from before a restart", node_id),
				 privileged ?
				 errdetail("%s() embeds the node id; the holder is %s.", funcname, holder) :
				 errdetail("%s() embeds the node id.", funcname),
				 errdetail_log("%s() embeds the node id; the holder is %s.", funcname, holder),
				 errhint("That lease was not revoked and expires within \"idgen.lease_ttl\"; the keeper then claims the node id again.")));
	if (state == IDGEN_LEASE_TAKEN)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("node id %d is held by another server in etcd", node_id),
				 privileged ?
				 errdetail("%s() embeds the node id; the holder is %s.", funcname, holder) :
				 errdetail("%s() embeds the node id. Members of pg_monitor see the holder in idgen_lease_status(); the server log names it.",
						   funcname),
				 errdetail_log("%s() embeds the node id; the holder is %s.", funcname, holder),
				 errhint("Give this server another \"idgen.node_id\" (or \"auto\"), or stop the holder; its lease expires within \"idgen.lease_ttl\".")));
	if (state == IDGEN_LEASE_FENCING)
		ereport(ERROR,
				(errcode(ERRCODE_IDGEN_RETRY),
				 errmsg("this server claimed node id %d in etcd and does not issue under it yet", node_id),
				 errdetail("%s() embeds the node id. A server whose claim of it etcd lost (etcd restored from a snapshot) could still issue under it for up to \"idgen.lease_ttl\" after the claim.",
						   funcname),
				 errhint("Generation under the node id starts in about " INT64_FORMAT " ms.",
						 Max(fence_until - idgen_clock_monotonic_ms(), 0))));
	if (state == IDGEN_LEASE_LOST)
		ereport(ERROR,
				(errcode(code),
				 errmsg("this server's lease on node id %d in etcd is not current", node_id),
				 privileged ?
				 errdetail("%s() embeds the node id and stops before the lease could expire. Last etcd error: %s",
						   funcname, error) :
				 errdetail("%s() embeds the node id and stops before the lease could expire. Members of pg_monitor see the last etcd error in idgen_lease_status(); the server log has it.",
						   funcname),
				 errdetail_log("%s() embeds the node id and stops before the lease could expire. Last etcd error: %s",
							   funcname, error),
				 errhint("Check that etcd at \"idgen.lease_endpoints\" is reachable; generation resumes once the keeper renews or claims the lease again.")));
	ereport(ERROR,
			(errcode(code),
			 errmsg("this server has not claimed its node id in etcd yet"),
			 privileged ?
			 errdetail("%s() embeds the node id, and issues only under a lease. Last etcd error: %s",
					   funcname, error) :
			 errdetail("%s() embeds the node id, and issues only under a lease. Members of pg_monitor see the last etcd error in idgen_lease_status(); the server log has it.",
					   funcname),
			 errdetail_log("%s() embeds the node id, and issues only under a lease. Last etcd error: %s",
						   funcname, error),
			 errhint("Check that etcd at \"idgen.lease_endpoints\" is reachable, and that the server is not in recovery.")));
	pg_unreachable();
}

/*
 * The node id this server embeds, or -1 if it has none (yet): the setting,
 * or under leases the claimed one, from shared memory.  With 'auto' that
 * is the id claimed first in this shared memory, which is ours for its
 * life (lease/protocol.c); the keeper composes named generators' slots with it, not
 * with the setting's variable.  Without leases, 'auto' is returned as it
 * is (IDGEN_NODE_AUTO, negative).
 */
int32
idgen_current_node_id(void)
{
	uint32		word;

	if (!idgen_leases_on)
		return idgen_node_id;
	if (idgen_shared == NULL)
		return -1;
	word = pg_atomic_read_u32(&idgen_shared->lease_word.word);
	if (idgen_lease_word_valid(word))
		return idgen_lease_word_node(word);
	return idgen_node_id >= 0 ? idgen_node_id : (&idgen_shared->lease)->node_id;
}

/*
 * A generator found the lease's deadline passed, though the keeper has not
 * cleared the word yet (it is late: stuck, stopped, or the host slept).
 */
void
idgen_report_lease_deadline(const char *funcname)
{
	ereport(ERROR,
			(errcode(ERRCODE_IDGEN_RETRY),
			 errmsg("this server's lease on its node id in etcd was not renewed in time"),
			 errdetail("%s() embeds the node id and stops before the lease could expire; the keeper has not renewed it.",
					   funcname),
			 errhint("Check that the idgen keeper is running and that etcd at \"idgen.lease_endpoints\" is reachable; generation resumes once the keeper renews the lease.")));
}
