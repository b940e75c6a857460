/*-------------------------------------------------------------------------
 *
 * lease.c
 *	  Node-id leases in etcd: two live servers never embed the same node id.
 *
 * With idgen.lease_endpoints set, the keeper (keeper.c calls in here from
 * its loop) grants an etcd lease and claims the key <prefix>node/<id> with
 * it, in one transaction that succeeds only if the key is absent.  While
 * the claim stands, the word in shared memory (IdgenShared.lease_word)
 * holds IDGEN_LEASE_VALID and the node id; every generator that embeds the
 * node id reads it once per call, after it has taken its position.
 *
 * Safety.  Three rules together keep two servers from issuing the same ID
 * under one node id:
 *
 * 1. Generation under the id stops before the lease can expire.  A renewal
 *	  sent at local monotonic time t and answered with TTL s keeps the
 *	  lease at etcd until at least t + s (etcd counts from when it
 *	  handles the request, which is later).  The keeper clears the word at
 *	  t + s - margin (margin = a quarter of the TTL, at least 500 ms), so
 *	  etcd's clock may run up to a third faster than ours before a lease
 *	  could expire while we still issue.  Each request's timeout ends by that
 *	  deadline.
 *
 * 2. The next holder starts above the last one.  The key
 *	  <prefix>reservation/<id> (no lease: it outlives its writer) records
 *	  how far the holder's durable reservation may reach; the keeper writes
 *	  it, guarded by "our lease still holds the node key", before it
 *	  publishes a reservation beyond it, and publishes nothing beyond it
 *	  while the word is valid.  A server that claims the id floors every
 *	  generator embedding it above that value before it sets the word.
 *	  This holds even if rule 1 fails (the keeper stalls in a synchronous
 *	  replication wait, or is descheduled past its deadline): an old holder
 *	  cannot issue beyond what it recorded.
 *
 *	  The record must then never go back, and etcd restored from a
 *	  snapshot does go back.  So every write is conditional on the record's
 *	  mod_revision being the one this keeper last wrote or read: a record
 *	  changed behind its back is read, compared and merged first
 *	  (idgen_etcd_write_record), so whoever writes, it only grows.  Each
 *	  renewal reads the record back with the check of the node key and
 *	  writes it again, before anything more is published, if it lacks
 *	  anything this server reserved (a restored snapshot that our lease
 *	  outlived); a holder that finds its lease or key gone writes what it
 *	  reserved into the record before it claims again
 *	  (idgen_lease_hand_over).  Each case is logged as a WARNING naming the
 *	  key, what it held and what it should hold.
 *
 * 3. A new claim waits out any holder etcd forgot.  A restored etcd may
 *	  have lost a live holder's lease and node key: the id looks free, while
 *	  that holder issues under it until its next renewal finds the lease
 *	  gone, at the latest until its deadline, less than a TTL after its last
 *	  renewal, which came before our claim.  So a claim sets the word only a
 *	  TTL after its answer (the longest of ours, etcd's grant and the one
 *	  the record names), and reads the record again then: the forgotten
 *	  holder has stopped, and has handed over what it reserved (rule 2).
 *	  Every claim waits, since nothing in etcd can tell a forgotten holder
 *	  from none: a record that says "released cleanly" may itself come from
 *	  a snapshot older than the holder's claim.  A keeper that takes over
 *	  a live lease from the keeper before it, or renews its own, does not
 *	  wait: the lease proves that nobody else claimed the id since.
 *
 * Nothing here is trusted that etcd does not confirm; nothing home-made
 * goes on the wire: libcurl speaks HTTP to etcd's v3 JSON gateway and
 * PostgreSQL's own jsonb parser reads the answers (etcd.c, which also
 * holds TLS and authentication).  All of it runs in the keeper, outside
 * transactions; an etcd failure is recorded, never thrown.
 *
 * Locking.  The word (IdgenShared.lease_word) and the deadline
 * (lease_deadline.ms) are atomics that only this file writes, after
 * shared memory's initialisation; the generators read them without a
 * lock.  The lease's bookkeeping (IdgenLease: state, holder, deadline,
 * what etcd records) is under IdgenLease.mutex, held for a few
 * instructions; src/README lists every lock.
 *
 * IDENTIFICATION
 *	  src/lease.c
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
#include "etcd.h"

#define LEASE(s) (&(s)->lease)

/* a recorded reservation beyond this (year 10000) is not believed */
#define IDGEN_UNIX_MS_SANE_MAX INT64CONST(253402300800000)

/* how soon to try again after a failed claim or renewal */
#define IDGEN_LEASE_RETRY_MS 500
#define IDGEN_LEASE_CLAIM_RETRY_MS 1000

/*
 * Whether this keeper process has read the record of the lease it holds
 * (its memory of what the server reserved under the node id is then
 * complete), and the record's mod_revision as this keeper last wrote or
 * read it: every write is conditional on it (idgen_etcd_write_record).
 */
static bool record_known = false;
static int64 record_rev = 0;

/*
 * A lease was lost while this server may have reserved beyond what etcd
 * records: write it into the record before claiming again
 * (idgen_lease_hand_over).
 */
static bool handover_pending = false;

/* keeper-local schedule, on idgen_clock_monotonic_ms()'s scale */
static int64 next_renew_ms = 0;
static int64 next_claim_ms = 0;

static bool key_lost = false;	/* our lease no longer holds the node key */

/*
 * Counter generators that embed the node id, as the reservation record
 * carries them: name and exclusive bound of the local counter values
 * handed out under the id, by us or by previous holders (matched by name).
 * The keeper's own copy of what etcd holds, rebuilt from etcd whenever a
 * keeper takes over a lease.  In TopMemoryContext.
 */
typedef struct IdgenLeaseCounter
{
	char		name[NAMEDATALEN];
	uint64		value;
} IdgenLeaseCounter;

static List *recorded_counters = NIL;

static void idgen_lease_apply_floor(int64 floor_unix_ms, bool claimed);

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
 * says that someone has to correct something (idgen_etcd_error_config for
 * a failure that idgen_etcd_error tells).
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

static void
idgen_lease_set_state(IdgenLeaseState state, const char *holder)
{
	IdgenLease *lease = LEASE(idgen_shared);

	SpinLockAcquire(&lease->mutex);
	lease->state = state;
	strlcpy(lease->holder, holder ? holder : "", sizeof(lease->holder));
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
	idgen_lease_set_state(state, NULL);
}

/* How long the next request may take: it must end by the deadline. */
static int64
idgen_lease_request_timeout(void)
{
	IdgenLease *lease = LEASE(idgen_shared);

	/*
	 * The keeper also keeps every other generator's reservation: a request
	 * must not hold it up longer than a quarter of idgen.reservation (the
	 * keeper extends when half of it is left).
	 */
	int64		timeout = Max(100, Min((int64) idgen_lease_ttl_s * 1000 / 4,
									   idgen_reservation_ms / 4));
	int64		deadline;

	SpinLockAcquire(&lease->mutex);
	deadline = lease->deadline_ms;
	SpinLockRelease(&lease->mutex);
	if (idgen_lease_word_valid(pg_atomic_read_u32(&idgen_shared->lease_word.word)))
		timeout = Min(timeout, Max(100, deadline - idgen_clock_monotonic_ms()));
	return timeout;
}

static char *
idgen_lease_key(const char *kind, int32 node_id)
{
	return idgen_base64(psprintf("%s%s/%d", idgen_lease_prefix, kind, node_id));
}

/* Who we are, as the value of a node key we hold. */
static char *
idgen_lease_holder_value(void)
{
	char		host[256];
	StringInfoData buf;

	if (gethostname(host, sizeof(host)) != 0)
		strlcpy(host, "unknown", sizeof(host));
	host[sizeof(host) - 1] = '\0';
	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"host\": ");
	escape_json(&buf, host);
	appendStringInfo(&buf, ", \"port\": %d, \"system_identifier\": \"" UINT64_FORMAT "\", \"postmaster_pid\": %d, \"since\": ",
					 PostPortNumber, GetSystemIdentifier(), (int) PostmasterPid);
	escape_json(&buf, timestamptz_to_str(GetCurrentTimestamp()));
	appendStringInfoChar(&buf, '}');
	return buf.data;
}

/* A holder's value (base64 of our JSON above) in words, for errors. */
static char *
idgen_lease_describe_holder(const char *value64)
{
	char	   *value = value64 ? idgen_unbase64(value64) : NULL;
	Jsonb	   *json = value ? idgen_etcd_parse(value, "holder") : NULL;
	JsonbContainer *c = json ? &json->root : NULL;
	char	   *host = idgen_json_string(c, "host");
	char	   *sysid = idgen_json_string(c, "system_identifier");
	char	   *since = idgen_json_string(c, "since");
	int64		port = 0;
	int64		pid = 0;
	char	   *text;

	if (c == NULL || host == NULL)
		return pstrdup("a holder whose key does not say who it is");
	(void) idgen_json_int64(c, "port", &port);
	(void) idgen_json_int64(c, "postmaster_pid", &pid);
	text = psprintf("host \"%s\", port " INT64_FORMAT ", system identifier %s, since %s",
					host, port, sysid ? sysid : "?", since ? since : "?");
	if (port == PostPortNumber && pid == PostmasterPid && sysid != NULL &&
		strtou64(sysid, NULL, 10) == GetSystemIdentifier())
		text = psprintf("%s (this server, before a crash restart: that lease expires within \"idgen.lease_ttl\")",
						text);
	return text;
}

/*
 * Grant a lease; returns its id, or 0.  *sent is when we asked, *ttl_s the
 * TTL to go by: etcd's, but never more than we asked for.  The holder's
 * deadline follows from it, and an answer naming a longer TTL (etcd's
 * minimum TTL, or an answer gone wrong) must not let it issue after etcd
 * may have let the lease expire.
 */
static int64
idgen_etcd_grant(int64 *sent, int64 *ttl_s)
{
	JsonbContainer *answer;
	int64		id = 0;

	*sent = idgen_clock_monotonic_ms();
	answer = idgen_etcd_call("/v3/lease/grant",
							 psprintf("{\"TTL\": %d}", idgen_lease_ttl_s),
							 idgen_lease_request_timeout());
	if (answer == NULL)
		return 0;
	if (!idgen_json_int64(answer, "ID", &id) ||
		!idgen_json_int64(answer, "TTL", ttl_s) || *ttl_s <= 0)
	{
		IDGEN_ETCD_ERROR("etcd granted no lease");
		return 0;
	}
	*ttl_s = Min(*ttl_s, idgen_lease_ttl_s);
	return id;
}

static void
idgen_etcd_revoke(int64 lease_id, int64 timeout_ms)
{
	(void) idgen_etcd_call("/v3/lease/revoke",
						   psprintf("{\"ID\": \"" INT64_FORMAT "\"}", lease_id),
						   timeout_ms);
}

/* Raise the recorded bound of counter "name" to value; true if it grew. */
bool
idgen_lease_note_counter(const char *name, uint64 value)
{
	ListCell   *lc;
	IdgenLeaseCounter *c;
	MemoryContext old;

	foreach(lc, recorded_counters)
	{
		c = lfirst(lc);
		if (strcmp(c->name, name) == 0)
		{
			if (c->value >= value)
				return false;
			c->value = value;
			return true;
		}
	}
	old = MemoryContextSwitchTo(TopMemoryContext);
	c = palloc0(sizeof(IdgenLeaseCounter));
	strlcpy(c->name, name, sizeof(c->name));
	c->value = value;
	recorded_counters = lappend(recorded_counters, c);
	MemoryContextSwitchTo(old);
	return true;
}

/* The counter called name in a list of IdgenLeaseCounter, or NULL. */
static IdgenLeaseCounter *
idgen_lease_find_counter(List *counters, const char *name)
{
	ListCell   *lc;

	foreach(lc, counters)
	{
		IdgenLeaseCounter *c = lfirst(lc);

		if (strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

/*
 * A counter generator installed in this keeper (registry.c): the floor the
 * record gives it, if any.
 */
bool
idgen_lease_counter_floor(const char *name, uint64 *value)
{
	IdgenLeaseCounter *c = idgen_lease_find_counter(recorded_counters, name);

	if (c == NULL)
		return false;
	*value = c->value;
	return true;
}

/* ---- the reservation record ---- */

/*
 * A reservation record as read from etcd, its counters in the current
 * memory context.
 */
typedef struct IdgenLeaseRecord
{
	bool		present;		/* the key exists */
	bool		unreadable;		/* ... but its value cannot be believed */
	int64		mod_revision;	/* etcd's revision of its last write; 0 if
								 * absent */
	int64		floor_unix_ms;	/* the writer's reservation, as a floor */
	int64		ttl_s;			/* the writer's idgen.lease_ttl; 0 if unsaid */
	List	   *counters;		/* IdgenLeaseCounter */
} IdgenLeaseRecord;

/* the largest idgen.lease_ttl (guc.c) */
#define IDGEN_LEASE_TTL_MAX_S 3600

/*
 * Read a record from its key-value kv (NULL: the key is absent).  The time
 * floor lies above the writer's IDs' times read both as Unix time (named
 * generators) and as raw milliseconds since its epoch (snowflake_id under
 * another epoch).  Returns false, with rec->unreadable and
 * idgen_etcd_error set, if the value cannot be believed.
 */
static bool
idgen_lease_parse_record(int32 node_id, JsonbContainer *kv, IdgenLeaseRecord *rec)
{
	char	   *value64 = idgen_json_string(kv, "value");
	char	   *value;
	Jsonb	   *json;
	int64		reserved = 0;
	int64		epoch = idgen_epoch_unix_ms;
	JsonbContainer *counters;
	JsonbValue	v;

	memset(rec, 0, sizeof(*rec));
	if (kv == NULL)
		return true;
	rec->present = true;
	(void) idgen_json_int64(kv, "mod_revision", &rec->mod_revision);
	if (value64 == NULL)
		return true;			/* etcd omits an empty value: no floor */
	value = idgen_unbase64(value64);
	json = value ? idgen_etcd_parse(value, "reservation") : NULL;
	if (json == NULL || !idgen_json_int64(&json->root, "reserved_unix_ms", &reserved) ||
		reserved < 0 || reserved > IDGEN_UNIX_MS_SANE_MAX)
		goto unreadable;
	if (idgen_json_get(&json->root, "epoch_unix_ms", &v) &&
		(!idgen_json_int64(&json->root, "epoch_unix_ms", &epoch) ||
		 epoch < 0 || epoch > reserved))
		goto unreadable;
	if (idgen_json_get(&json->root, "lease_ttl_s", &v) &&
		(!idgen_json_int64(&json->root, "lease_ttl_s", &rec->ttl_s) ||
		 rec->ttl_s < 0 || rec->ttl_s > IDGEN_LEASE_TTL_MAX_S))
		goto unreadable;

	/* the counters: { "name": bound, ... } */
	counters = idgen_json_container(&json->root, "counters");
	if (counters != NULL && JsonContainerIsObject(counters))
	{
		JsonbIterator *it = JsonbIteratorInit(counters);
		JsonbIteratorToken tok;
		char	   *name = NULL;

		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		{
			if (tok == WJB_KEY)
				name = pnstrdup(v.val.string.val, v.val.string.len);
			else if (tok == WJB_VALUE && name != NULL)
			{
				IdgenLeaseCounter *c;
				int64		bound;

				if (v.type != jbvNumeric || strlen(name) >= NAMEDATALEN ||
					!idgen_json_numeric_int64(&v, &bound) || bound < 0)
					goto unreadable;
				c = palloc0(sizeof(IdgenLeaseCounter));
				strlcpy(c->name, name, sizeof(c->name));
				c->value = (uint64) bound;
				rec->counters = lappend(rec->counters, c);
				name = NULL;
			}
		}
	}
	rec->floor_unix_ms = Max(reserved, reserved - epoch + idgen_epoch_unix_ms);
	return true;

unreadable:
	rec->unreadable = true;
	rec->floor_unix_ms = 0;
	rec->ttl_s = 0;
	rec->counters = NIL;
	IDGEN_ETCD_ERROR("the reservation key of node id %d cannot be read; fix or delete it",
					 node_id);
	idgen_etcd_error_config = true;
	return false;
}

/*
 * The value of the record of what this server has reserved under its node
 * id: the time (unix_ms) and the counters.
 */
static char *
idgen_lease_record_value(int64 unix_ms)
{
	StringInfoData value;
	ListCell   *lc;
	bool		first = true;

	initStringInfo(&value);
	appendStringInfo(&value, "{\"reserved_unix_ms\": " INT64_FORMAT ", \"epoch_unix_ms\": " INT64_FORMAT ", \"system_identifier\": \"" UINT64_FORMAT "\", \"lease_ttl_s\": %d, \"counters\": {",
					 unix_ms, idgen_epoch_unix_ms, GetSystemIdentifier(),
					 idgen_lease_ttl_s);
	foreach(lc, recorded_counters)
	{
		IdgenLeaseCounter *c = lfirst(lc);

		if (!first)
			appendStringInfoString(&value, ", ");
		escape_json(&value, c->name);
		appendStringInfo(&value, ": " UINT64_FORMAT, c->value);
		first = false;
	}
	appendStringInfoString(&value, "}}");
	return value.data;
}

/*
 * Compare a record read from etcd with what this server has reserved under
 * node_id as far as this keeper knows: the time in lease->recorded_unix_ms,
 * the counters in recorded_counters.
 *
 * What the record lacks (etcd restored from a snapshot, a hand edit, a
 * write that failed) is logged as a WARNING naming the key, what it holds
 * and what it should hold; the caller then writes it again, and the
 * function returns true.  holding says whether this server still holds
 * the node id, for the hint.
 *
 * What the record has beyond is taken in, and the generators that embed
 * the node id are floored above it: it is a previous holder's (read at a
 * claim, or written by one handing over since), or a hand edit.  Logged
 * unless quiet (a claim says it itself).
 */
static bool
idgen_lease_reconcile(int32 node_id, const IdgenLeaseRecord *rec, bool holding,
					  bool quiet)
{
	IdgenLease *lease = LEASE(idgen_shared);
	StringInfoData held;
	StringInfoData should;
	int64		recorded;
	bool		ahead = false;
	ListCell   *lc;

	SpinLockAcquire(&lease->mutex);
	recorded = lease->recorded_unix_ms;
	SpinLockRelease(&lease->mutex);

	initStringInfo(&held);
	initStringInfo(&should);
	if (rec->floor_unix_ms < recorded)
	{
		appendStringInfo(&held, "reserved_unix_ms " INT64_FORMAT, rec->floor_unix_ms);
		appendStringInfo(&should, "reserved_unix_ms " INT64_FORMAT, recorded);
	}
	foreach(lc, recorded_counters)
	{
		IdgenLeaseCounter *mine = lfirst(lc);
		IdgenLeaseCounter *theirs = idgen_lease_find_counter(rec->counters, mine->name);

		if (theirs != NULL && theirs->value >= mine->value)
			continue;
		if (should.len > 0)
		{
			appendStringInfoString(&held, ", ");
			appendStringInfoString(&should, ", ");
		}
		appendStringInfoString(&held, "counter ");
		escape_json(&held, mine->name);
		if (theirs != NULL)
			appendStringInfo(&held, " " UINT64_FORMAT, theirs->value);
		else
			appendStringInfoString(&held, " none");
		appendStringInfoString(&should, "counter ");
		escape_json(&should, mine->name);
		appendStringInfo(&should, " " UINT64_FORMAT, mine->value);
	}
	if (rec->unreadable && should.len == 0)
		appendStringInfoString(&should, "a value that can be read");

	if (should.len > 0)
		ereport(WARNING,
				(errmsg("idgen keeper: the reservation record of node id %d in etcd is behind what this server reserved",
						node_id),
				 errdetail("The key \"%sreservation/%d\" holds %s; it should hold %s.",
						   idgen_lease_prefix, node_id,
						   !rec->present ? "nothing" :
						   rec->unreadable ? "a value that cannot be read" : held.data,
						   should.data),
				 holding ?
				 errhint("etcd was restored from a snapshot, the key was changed by hand, or a write to it failed. The keeper writes it again before it issues more under the node id.") :
				 errhint("etcd was restored from a snapshot, the key was changed by hand, or a write to it failed. This server no longer holds the node id; it writes what it reserved into the key, so that the next holder starts above it.")));

	/* take in what it has beyond */
	if (rec->floor_unix_ms > recorded)
	{
		SpinLockAcquire(&lease->mutex);
		lease->recorded_unix_ms = Max(lease->recorded_unix_ms, rec->floor_unix_ms);
		SpinLockRelease(&lease->mutex);
		ahead = true;
	}
	foreach(lc, rec->counters)
	{
		IdgenLeaseCounter *theirs = lfirst(lc);

		ahead |= idgen_lease_note_counter(theirs->name, theirs->value);
	}
	if (ahead)
	{
		idgen_lease_apply_floor(rec->floor_unix_ms, false);
		idgen_registry_raise_node_counters();
		if (!quiet)
			ereport(LOG,
					(errmsg("idgen keeper: the reservation record of node id %d in etcd holds more than this server knew; IDs under it resume above it",
							node_id),
					 errdetail("A previous holder of the node id wrote what it had reserved, or the key was changed by hand.")));
	}
	return should.len > 0;
}

/*
 * Read the key <prefix><kind>/<node_id>: false if etcd did not answer;
 * otherwise true, with *kv its key-value, or NULL if the key is absent.
 */
static bool
idgen_etcd_get_key(const char *kind, int32 node_id, JsonbContainer **kv)
{
	JsonbContainer *answer;

	answer = idgen_etcd_call("/v3/kv/range",
							 psprintf("{\"key\": \"%s\"}",
									  idgen_lease_key(kind, node_id)),
							 idgen_lease_request_timeout());
	*kv = answer ? idgen_json_element(idgen_json_container(answer, "kvs"), 0) : NULL;
	return answer != NULL;
}

/* The key-value that the i-th range of a transaction found, or NULL. */
static JsonbContainer *
idgen_etcd_txn_kv(JsonbContainer *answer, uint32 i)
{
	JsonbContainer *range;

	range = idgen_json_container(idgen_json_element(idgen_json_container(answer, "responses"), i),
								 "response_range");
	return idgen_json_element(idgen_json_container(range, "kvs"), 0);
}

static bool
idgen_etcd_txn_succeeded(JsonbContainer *answer)
{
	JsonbValue	ok;

	return idgen_json_get(answer, "succeeded", &ok) && ok.type == jbvBool && ok.val.boolean;
}

/*
 * Write what this server has reserved under node_id, its time raised to at
 * least unix_ms, into the reservation key; only if the key is as this
 * keeper last wrote or read it (its mod_revision is record_rev), and, with
 * a lease, only while that lease holds the node key.  A key changed behind
 * the keeper's back (etcd restored from a snapshot, a previous holder
 * handing over, a hand edit) is read, reconciled (idgen_lease_reconcile
 * says what it lacked and takes in what it has beyond), and written again.
 * So the record only ever grows, whoever writes it.
 *
 * Returns false with idgen_etcd_error set, and key_lost if the lease no longer
 * holds the node key.
 */
static bool
idgen_etcd_write_record(int32 node_id, int64 lease_id, int64 unix_ms)
{
	IdgenLease *lease = LEASE(idgen_shared);
	char	   *node_key = idgen_lease_key("node", node_id);
	char	   *key = idgen_lease_key("reservation", node_id);

	for (int attempt = 0; attempt < 3; attempt++)
	{
		StringInfoData txn;
		JsonbContainer *answer;
		IdgenLeaseRecord rec;
		int64		recorded;
		int64		revision = 0;

		SpinLockAcquire(&lease->mutex);
		recorded = Max(lease->recorded_unix_ms, unix_ms);
		SpinLockRelease(&lease->mutex);

		initStringInfo(&txn);
		appendStringInfoString(&txn, "{\"compare\": [");
		if (lease_id != 0)
			appendStringInfo(&txn, "{\"key\": \"%s\", \"target\": \"LEASE\", \"lease\": \"" INT64_FORMAT "\"}, ",
							 node_key, lease_id);
		appendStringInfo(&txn, "{\"key\": \"%s\", \"target\": \"MOD\", \"mod_revision\": \"" INT64_FORMAT "\"}], ",
						 key, record_rev);
		appendStringInfo(&txn, "\"success\": [{\"request_put\": {\"key\": \"%s\", \"value\": \"%s\"}}], ",
						 key, idgen_base64(idgen_lease_record_value(recorded)));
		appendStringInfoString(&txn, "\"failure\": [");
		if (lease_id != 0)
			appendStringInfo(&txn, "{\"request_range\": {\"key\": \"%s\"}}, ", node_key);
		appendStringInfo(&txn, "{\"request_range\": {\"key\": \"%s\"}}]}", key);

		answer = idgen_etcd_call("/v3/kv/txn", txn.data, idgen_lease_request_timeout());
		if (answer == NULL)
			return false;
		if (idgen_etcd_txn_succeeded(answer))
		{
			/* the put's revision is the transaction's */
			(void) idgen_json_int64(idgen_json_container(answer, "header"),
									"revision", &revision);
			record_rev = revision;
			SpinLockAcquire(&lease->mutex);
			lease->recorded_unix_ms = Max(lease->recorded_unix_ms, recorded);
			SpinLockRelease(&lease->mutex);
			return true;
		}
		if (lease_id != 0)
		{
			JsonbContainer *kv = idgen_etcd_txn_kv(answer, 0);
			int64		holder_lease = 0;

			if (kv == NULL || !idgen_json_int64(kv, "lease", &holder_lease) ||
				holder_lease != lease_id)
			{
				IDGEN_ETCD_ERROR("the node key of node id %d is no longer held by this server's lease",
								 node_id);
				key_lost = true;
				return false;
			}
		}
		(void) idgen_lease_parse_record(node_id,
										idgen_etcd_txn_kv(answer, lease_id != 0 ? 1 : 0),
										&rec);
		(void) idgen_lease_reconcile(node_id, &rec, lease_id != 0, false);
		record_rev = rec.mod_revision;
	}
	IDGEN_ETCD_ERROR("the reservation key of node id %d kept changing while this server wrote it",
					 node_id);
	return false;
}

/* The node ids that are held now, as a bitmap; false if etcd did not say. */
static bool
idgen_etcd_held_ids(bool *held)
{
	char	   *from = psprintf("%snode/", idgen_lease_prefix);
	char	   *to = psprintf("%snode0", idgen_lease_prefix);	/* '/' + 1 */
	JsonbContainer *answer;
	JsonbContainer *kvs;
	JsonbContainer *kv;

	answer = idgen_etcd_call("/v3/kv/range",
							 psprintf("{\"key\": \"%s\", \"range_end\": \"%s\", \"keys_only\": true}",
									  idgen_base64(from), idgen_base64(to)),
							 idgen_lease_request_timeout());
	if (answer == NULL)
		return false;
	memset(held, 0, sizeof(bool) * (IDGEN_SNOWFLAKE_MAX_NODE + 1));
	kvs = idgen_json_container(answer, "kvs");
	for (uint32 i = 0; (kv = idgen_json_element(kvs, i)) != NULL; i++)
	{
		char	   *key64 = idgen_json_string(kv, "key");
		char	   *key = key64 ? idgen_unbase64(key64) : NULL;
		char	   *end;
		long		id;

		if (key == NULL || strncmp(key, from, strlen(from)) != 0)
			continue;
		errno = 0;
		id = strtol(key + strlen(from), &end, 10);
		if (errno == 0 && *end == '\0' && id >= 0 && id <= IDGEN_SNOWFLAKE_MAX_NODE)
			held[id] = true;
	}
	return true;
}

/*
 * Try to claim node_id under lease_id.  Returns 1 if claimed (*rec the
 * previous holders' record, read in the same transaction), 0 if another
 * server holds it (*holder says who), -1 if etcd did not answer or the
 * record cannot be read.
 */
static int
idgen_etcd_claim(int32 node_id, int64 lease_id, IdgenLeaseRecord *rec,
				 char **holder)
{
	char	   *key = idgen_lease_key("node", node_id);
	JsonbContainer *answer;
	JsonbContainer *kv;

	answer = idgen_etcd_call("/v3/kv/txn",
							 psprintf("{\"compare\": [{\"key\": \"%s\", \"target\": \"CREATE\", \"create_revision\": \"0\"}], "
									  "\"success\": [{\"request_put\": {\"key\": \"%s\", \"value\": \"%s\", \"lease\": \"" INT64_FORMAT "\"}}, "
									  "{\"request_range\": {\"key\": \"%s\"}}], "
									  "\"failure\": [{\"request_range\": {\"key\": \"%s\"}}]}",
									  key, key, idgen_base64(idgen_lease_holder_value()),
									  lease_id, idgen_lease_key("reservation", node_id),
									  key),
							 idgen_lease_request_timeout());
	if (answer == NULL)
		return -1;
	if (idgen_etcd_txn_succeeded(answer))
	{
		/* a record we cannot read: refuse rather than guess */
		if (!idgen_lease_parse_record(node_id, idgen_etcd_txn_kv(answer, 1), rec))
			return -1;
		return 1;
	}
	kv = idgen_etcd_txn_kv(answer, 0);
	*holder = idgen_lease_describe_holder(kv ? idgen_json_string(kv, "value") : NULL);
	return 0;
}

/*
 * Renew; returns the TTL to go by (etcd's, never more than we asked for,
 * as for a grant; 0: the lease is gone), or -1 on failure.
 */
static int64
idgen_etcd_keepalive(int64 lease_id)
{
	JsonbContainer *answer;
	JsonbContainer *result;
	int64		ttl = 0;

	answer = idgen_etcd_call("/v3/lease/keepalive",
							 psprintf("{\"ID\": \"" INT64_FORMAT "\"}", lease_id),
							 idgen_lease_request_timeout());
	if (answer == NULL)
		return -1;
	result = idgen_json_container(answer, "result");
	if (result == NULL)
	{
		IDGEN_ETCD_ERROR("etcd's keepalive answer has no result");
		return -1;
	}
	if (!idgen_json_int64(result, "TTL", &ttl))
		ttl = 0;				/* etcd omits a zero TTL: the lease expired */
	return Min(ttl, idgen_lease_ttl_s);	/* as for a grant */
}

/*
 * Is the node key of node_id still held by lease_id?  A renewal keeps the
 * lease alive, not the key: the key may have been deleted (or, after that,
 * claimed by another server) while the lease lives.  In the same
 * transaction, read the reservation record into *rec.  Returns 1 if ours,
 * 0 if not (idgen_etcd_error says so), -1 if etcd did not answer.
 */
static int
idgen_etcd_check(int32 node_id, int64 lease_id, IdgenLeaseRecord *rec)
{
	JsonbContainer *answer;

	answer = idgen_etcd_call("/v3/kv/txn",
							 psprintf("{\"compare\": [{\"key\": \"%s\", \"target\": \"LEASE\", \"lease\": \"" INT64_FORMAT "\"}], "
									  "\"success\": [{\"request_range\": {\"key\": \"%s\"}}]}",
									  idgen_lease_key("node", node_id), lease_id,
									  idgen_lease_key("reservation", node_id)),
							 idgen_lease_request_timeout());
	if (answer == NULL)
		return -1;
	if (!idgen_etcd_txn_succeeded(answer))
	{
		IDGEN_ETCD_ERROR("the node key of node id %d is no longer held by this server's lease",
						 node_id);
		return 0;
	}
	/* an unreadable record is one to write again (idgen_lease_reconcile) */
	(void) idgen_lease_parse_record(node_id, idgen_etcd_txn_kv(answer, 0), rec);
	return 1;
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
	if (!idgen_etcd_write_record(node_id, lease_id,
								 idgen_lease_published_unix_ms() + idgen_reservation_ms))
		return false;
	SpinLockAcquire(&lease->mutex);
	lease->state = IDGEN_LEASE_HELD;
	lease->holder[0] = '\0';
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
 * Floor every generator that embeds the node id above floor_unix_ms, the
 * record read from etcd (counters: idgen_lease_validate).  Raising is
 * idempotent, so a keeper that takes over a lease raises again from the
 * record, which is then its own server's; claimed says whether it is the
 * previous holder's, for the log.
 */
static void
idgen_lease_apply_floor(int64 floor_unix_ms, bool claimed)
{
	int64		floor_ms = floor_unix_ms - idgen_epoch_unix_ms + 1;

	if (floor_unix_ms <= 0)
		return;
	idgen_raise_floor(&idgen_shared->snowflake.gen, &idgen_snowflake_layout, floor_ms);
	idgen_raise_floor(&idgen_shared->uuidv7.gen, &idgen_uuidv7_layout, floor_ms);
	idgen_raise_floor(&idgen_shared->flake128.gen, &idgen_flake128_layout, floor_ms);
	idgen_registry_raise_node_floors(floor_unix_ms + 1);
	if (claimed)
		ereport(LOG,
				(errmsg("idgen keeper: IDs under the claimed node id resume above %s, the previous holder's reservation",
						timestamptz_to_str((floor_unix_ms - IDGEN_UNIX_TO_PG_MS) * 1000))));
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
	 * overwrite them (idgen_etcd_error says why).
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
	record_rev = rec->mod_revision;
	return !behind || idgen_etcd_write_record(node_id, lease_id, 0);
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

	if (!idgen_etcd_get_key("reservation", node_id, &kv))
		return false;
	(void) idgen_lease_parse_record(node_id, kv, &rec);
	record_rev = rec.mod_revision;
	if (!idgen_lease_reconcile(node_id, &rec, false, true))
		return true;
	return idgen_etcd_write_record(node_id, 0, 0);
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

	lease_id = idgen_etcd_grant(&sent, &ttl_s);
	if (lease_id == 0)
	{
		idgen_lease_set_error(idgen_etcd_error, idgen_etcd_error_config);
		return;
	}

	/*
	 * With "auto", once an id was claimed in this shared memory we keep to
	 * it: named generators have it composed into their slots.
	 */
	if (wanted < 0 && !idgen_etcd_held_ids(held))
	{
		idgen_lease_set_error(idgen_etcd_error, idgen_etcd_error_config);
		idgen_etcd_revoke(lease_id, idgen_lease_request_timeout());
		return;
	}

	for (int32 candidate = 0; candidate <= IDGEN_SNOWFLAKE_MAX_NODE && tries < 8; candidate++)
	{
		int32		node_id = wanted >= 0 ? wanted : candidate;
		IdgenLeaseRecord rec;
		char	   *holder = NULL;
		TimestampTz since;
		int64		fence_ms;
		int			rc;

		if (wanted < 0 && held[candidate])
			continue;
		tries++;
		rc = idgen_etcd_claim(node_id, lease_id, &rec, &holder);
		if (rc < 0)
		{
			idgen_lease_set_error(idgen_etcd_error, idgen_etcd_error_config);
			break;
		}
		if (rc == 0)
		{
			SpinLockAcquire(&lease->mutex);
			if (wanted >= 0)
				lease->node_id = node_id;
			SpinLockRelease(&lease->mutex);
			idgen_lease_set_state(wanted >= 0 ? IDGEN_LEASE_TAKEN : IDGEN_LEASE_CLAIMING,
								  holder);
			if (wanted >= 0)
				break;
			continue;
		}

		/* claimed: take the record in and floor from it */
		since = GetCurrentTimestamp();
		SpinLockAcquire(&lease->mutex);
		lease->lease_id = lease_id;
		lease->node_id = node_id;
		lease->deadline_ms = sent + ttl_s * 1000 - idgen_lease_margin_ms();
		lease->since = since;
		SpinLockRelease(&lease->mutex);
		idgen_lease_publish_deadline(sent + ttl_s * 1000 - idgen_lease_margin_ms());
		if (idgen_node_id == IDGEN_NODE_AUTO)
			idgen_node_id = node_id;	/* this keeper composes named slots */
		(void) idgen_lease_reconcile(node_id, &rec, true, true);
		record_rev = rec.mod_revision;
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
		SpinLockRelease(&lease->mutex);
		ereport(LOG,
				(errmsg("idgen keeper: claimed node id %d in etcd with lease " INT64_FORMAT " (TTL " INT64_FORMAT " s); IDs under it in " INT64_FORMAT " ms",
						node_id, lease_id, ttl_s, fence_ms),
				 errdetail("A server whose claim etcd lost (restored from a snapshot) could still issue under the node id until then.")));
		next_renew_ms = sent + ttl_s * 1000 / 3;
		return;
	}
	idgen_etcd_revoke(lease_id, idgen_lease_request_timeout());
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
	IdgenLease *lease = LEASE(idgen_shared);

	idgen_lease_invalidate(IDGEN_LEASE_LOST, idgen_etcd_error, idgen_etcd_error_config);
	idgen_etcd_revoke(lease_id, idgen_lease_request_timeout());
	SpinLockAcquire(&lease->mutex);
	lease->lease_id = 0;
	SpinLockRelease(&lease->mutex);
	next_claim_ms = 0;
	handover_pending = record_known;
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
	int64		deadline;
	int64		fence_until;
	int32		node_id;
	bool		valid;

	/* leases are for a node id that is set, or "auto" */
	if (!idgen_leases_on || idgen_node_id == -1)
		return 60 * 1000;
	if (!idgen_lease_connect())
		elog(ERROR, "could not set up the connection to etcd: invalid \"idgen.lease_endpoints\", or libcurl failed to initialise");

	SpinLockAcquire(&lease->mutex);
	lease_id = lease->lease_id;
	node_id = lease->node_id;
	fence_until = lease->fence_until_ms;
	SpinLockRelease(&lease->mutex);
	valid = idgen_lease_word_valid(pg_atomic_read_u32(&idgen_shared->lease_word.word));
	now = idgen_clock_monotonic_ms();

	/*
	 * With "auto", the id claimed first in this shared memory is ours for
	 * its life; a keeper started after that one composes named slots with
	 * it too.
	 */
	if (idgen_node_id == IDGEN_NODE_AUTO && node_id >= 0)
		idgen_node_id = node_id;

	/*
	 * The node key went while our lease lives (deleted by hand, say): the
	 * lease is worth nothing.  Give it back and claim afresh, which reads
	 * the record and floors again.
	 */
	if (key_lost)
	{
		key_lost = false;
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
	{
		int64		sent = now;
		int64		ttl_s = idgen_etcd_keepalive(lease_id);
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
			ours = idgen_etcd_check(node_id, lease_id, &rec);
		if (ttl_s > 0 && ours == 0)
			idgen_lease_give_up(lease_id);
		else if (ttl_s > 0 && ours < 0)
		{
			idgen_lease_set_error(idgen_etcd_error, idgen_etcd_error_config);
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
				idgen_lease_invalidate(IDGEN_LEASE_LOST, idgen_etcd_error, idgen_etcd_error_config);
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
					idgen_lease_invalidate(IDGEN_LEASE_LOST, idgen_etcd_error, idgen_etcd_error_config);
			}
			else if (!valid)
				idgen_lease_set_state(IDGEN_LEASE_FENCING, NULL);
		}
		else if (ttl_s == 0)
		{
			/* gone at etcd: whatever we still held is someone else's now */
			idgen_lease_invalidate(IDGEN_LEASE_LOST,
								   psprintf("the lease " INT64_FORMAT " is gone from etcd: it expired, or etcd was restored from a snapshot older than it",
										lease_id),
								   false);
			SpinLockAcquire(&lease->mutex);
			lease->lease_id = 0;
			SpinLockRelease(&lease->mutex);
			next_claim_ms = 0;
			handover_pending = record_known;
		}
		else
		{
			idgen_lease_set_error(idgen_etcd_error, idgen_etcd_error_config);
			next_renew_ms = now + IDGEN_LEASE_RETRY_MS;
		}
	}

	/* the deadline is absolute, whatever etcd did or did not answer */
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
											idgen_etcd_error),
								   idgen_etcd_error_config);
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
 * Before the keeper publishes counter reservations (registry.c), which it
 * has noted with idgen_lease_note_counter(): have etcd record them, or stop
 * generation under the node id first.
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
	if (!idgen_etcd_write_record(node_id, lease_id, 0))
		idgen_lease_invalidate(IDGEN_LEASE_LOST,
							   psprintf("could not record a counter reservation in etcd: %s",
										idgen_etcd_error),
							   idgen_etcd_error_config);
}

/*
 * Before the keeper publishes a reservation reaching unix_ms: have etcd
 * record it, or stop generation under the node id first.
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
	if (!idgen_etcd_write_record(node_id, lease_id, unix_ms + idgen_reservation_ms))
		idgen_lease_invalidate(IDGEN_LEASE_LOST,
							   psprintf("could not record the reservation in etcd: %s",
										idgen_etcd_error),
							   idgen_etcd_error_config);
}

/*
 * The keeper is exiting.  Generation under the node id stops until a
 * keeper renews again.  On a shutdown, give the id back at once.
 */
void
idgen_lease_on_keeper_exit(bool shutdown)
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
		shutdown = false;
	(void) pg_atomic_exchange_u32(&idgen_shared->lease_word.word, 0);
	lease = LEASE(idgen_shared);

	/*
	 * A keeper that never reached the loop (it was backing off after
	 * failures, or could not connect to its database) has no connection to
	 * etcd yet, but may have inherited a lease from the keeper before it:
	 * set one up, so that the revoke below is not skipped.  Bounded, like
	 * the revoke, by the request timeouts.
	 */
	if (shutdown)
	{
		SpinLockAcquire(&lease->mutex);
		lease_id = lease->lease_id;
		SpinLockRelease(&lease->mutex);
		if (lease_id != 0 && !idgen_lease_connect())
			shutdown = false;	/* cannot revoke: the lease expires */
	}

	SpinLockAcquire(&lease->mutex);
	lease_id = lease->lease_id;
	node_id = lease->node_id;
	recorded = lease->recorded_unix_ms;
	if (shutdown)
		lease->lease_id = 0;
	lease->state = lease_id != 0 && !shutdown ? IDGEN_LEASE_LOST : IDGEN_LEASE_CLAIMING;
	SpinLockRelease(&lease->mutex);
	if (!shutdown || lease_id == 0)
		return;

	/*
	 * Before the id is free: the record holds what we reserved.  It does
	 * unless etcd was restored from a snapshot since our last renewal, and
	 * the answer cannot be read here (the exit path parses nothing), so
	 * write it blind, but only while our lease holds the node key and the
	 * record was not written after our last write (a revision no higher):
	 * a restored record is older, and lacks nothing we do not have.
	 */
	if (record_known)
		(void) idgen_etcd_call("/v3/kv/txn",
							   psprintf("{\"compare\": [{\"key\": \"%s\", \"target\": \"LEASE\", \"lease\": \"" INT64_FORMAT "\"}, "
										"{\"key\": \"%s\", \"target\": \"MOD\", \"result\": \"LESS\", \"mod_revision\": \"" INT64_FORMAT "\"}], "
										"\"success\": [{\"request_put\": {\"key\": \"%s\", \"value\": \"%s\"}}]}",
										idgen_lease_key("node", node_id), lease_id,
										idgen_lease_key("reservation", node_id), record_rev + 1,
										idgen_lease_key("reservation", node_id),
										idgen_base64(idgen_lease_record_value(recorded))),
							   1000);
	idgen_etcd_revoke(lease_id, 1000);
}
