/*-------------------------------------------------------------------------
 *
 * lease/record.c
 *	  The node-id lease's keys in etcd and the requests made on them: the
 *	  node key a holder claims with its lease, the reservation record that
 *	  outlives it, and the grant, renewal, claim, check and conditional
 *	  writes that lease/protocol.c's protocol is made of, and the floors a record
 *	  read from etcd sets.
 *
 * lease/protocol.c runs the protocol (src/README, "Node identity and leases", says
 * why it is safe: its three rules); this file holds what each request
 * sends and how each answer is read.
 * Nothing in an answer is believed that does not read as what it must be:
 * a record naming a reservation past the year 10000, a TTL beyond
 * idgen.lease_ttl's range or a malformed counter is unreadable, and a TTL
 * etcd grants is never taken as longer than the one asked for.  All of it
 * runs in the keeper, outside transactions; an etcd failure is noted in
 * the caller's IdgenEtcdResult and returned, never thrown.
 *
 * IDENTIFICATION
 *	  src/lease/record.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <unistd.h>

#include "access/xlog.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "postmaster/postmaster.h"
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

/* a recorded reservation beyond this (year 10000) is not believed */
#define IDGEN_UNIX_MS_SANE_MAX INT64CONST(253402300800000)

/*
 * This keeper process's tag in the records it writes, drawn at its first
 * write from the time (in microseconds) and its process id: a record that
 * carries it, with this server's system identifier and the lease it holds
 * now, is one this very process wrote (idgen_lease_record_is_ours).  A
 * keeper started again under the same lease has another, so it takes the
 * records of the one before it as a previous holder's, and floors above
 * them.  (Were two ever equal, nothing would repeat: such a keeper still
 * floors time from the record it reads first, and its counters from what
 * the one before it published, in shared memory.)
 */
static uint64 lease_writer_tag = 0;

static uint64
idgen_lease_writer_tag(void)
{
	if (lease_writer_tag == 0)
		lease_writer_tag = ((uint64) GetCurrentTimestamp() ^
							((uint64) getpid() << 44)) | 1;
	return lease_writer_tag;
}

/* How long the next request may take: it must end by the deadline. */
int64
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

char *
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

/*
 * A holder's value (base64 of our JSON above) in words, for errors;
 * *is_self says whether the holder looks like this server before a restart
 * (same host name, port and system identifier: no other live server can
 * listen there), whose lease passes by itself within "idgen.lease_ttl";
 * the keeper stops believing it if it does not pass (lease/protocol.c).
 */
static char *
idgen_lease_describe_holder(const char *value64, bool *is_self,
							IdgenEtcdResult *res)
{
	char	   *value = value64 ? idgen_unbase64(value64) : NULL;
	Jsonb	   *json = value ? idgen_etcd_parse(value, "holder", res) : NULL;
	JsonbContainer *c = json ? &json->root : NULL;
	char	   *host = idgen_json_string(c, "host");
	char	   *sysid = idgen_json_string(c, "system_identifier");
	char	   *since = idgen_json_string(c, "since");
	int64		port = 0;
	char		ours[256];
	char	   *text;

	*is_self = false;
	if (c == NULL || host == NULL)
		return pstrdup("a holder whose key does not say who it is");
	(void) idgen_json_int64(c, "port", &port);
	text = psprintf("host \"%s\", port " INT64_FORMAT ", system identifier %s, since %s",
					host, port, sysid ? sysid : "?", since ? since : "?");
	if (gethostname(ours, sizeof(ours)) != 0)
		strlcpy(ours, "unknown", sizeof(ours));
	ours[sizeof(ours) - 1] = '\0';
	if (strcmp(host, ours) == 0 && port == PostPortNumber && sysid != NULL &&
		strtou64(sysid, NULL, 10) == GetSystemIdentifier())
	{
		*is_self = true;
		text = psprintf("%s" IDGEN_LEASE_SELF_NOTE, text);
	}
	return text;
}

/*
 * Grant a lease; returns its id, or 0.  *sent is when we asked, *ttl_s the
 * TTL to go by: etcd's, but never more than we asked for.  The holder's
 * deadline follows from it, and an answer naming a longer TTL (etcd's
 * minimum TTL, or an answer gone wrong) must not let it issue after etcd
 * may have let the lease expire.
 */
int64
idgen_etcd_grant(int64 *sent, int64 *ttl_s, IdgenEtcdResult *res)
{
	JsonbContainer *answer;
	int64		id = 0;

	*sent = idgen_clock_monotonic_ms();
	answer = idgen_etcd_call("/v3/lease/grant",
							 psprintf("{\"TTL\": %d}", idgen_lease_ttl_s),
							 idgen_lease_request_timeout(), res);
	if (answer == NULL)
		return 0;
	if (!idgen_json_int64(answer, "ID", &id) ||
		!idgen_json_int64(answer, "TTL", ttl_s) || *ttl_s <= 0)
	{
		IDGEN_ETCD_FAIL(res, "etcd granted no lease");
		return 0;
	}
	*ttl_s = Min(*ttl_s, idgen_lease_ttl_s);
	return id;
}

void
idgen_etcd_revoke(int64 lease_id, int64 timeout_ms, IdgenEtcdResult *res)
{
	(void) idgen_etcd_call("/v3/lease/revoke",
						   psprintf("{\"ID\": \"" INT64_FORMAT "\"}", lease_id),
						   timeout_ms, res);
}

/* ---- the reservation record ---- */

/* the largest idgen.lease_ttl (base/guc.c) */
#define IDGEN_LEASE_TTL_MAX_S 3600

/*
 * One entry of a record's "counter_floors": {"name": ..., "seq": bound,
 * "bits": width, "shift": position, "space": ID space, "fixed": fixed bits,
 * "form": "form"} (idgen 1.1.0 wrote none of the last four).  A field that
 * is said must read as what it is, or nothing is believed: NULL.
 */
static IdgenLeaseCounter *
idgen_lease_parse_counter(JsonbContainer *entry)
{
	IdgenLeaseCounter *c;
	char	   *name;
	char	   *space = NULL;
	int64		bound;
	int64		bits;
	int64		shift = -1;
	int64		fixed = 0;
	uint64		form = 0;
	bool		fixed_known;
	JsonbValue	f;

	if ((name = idgen_json_string(entry, "name")) == NULL ||
		strlen(name) == 0 || strlen(name) >= NAMEDATALEN ||
		!idgen_json_int64(entry, "seq", &bound) || bound < 0 ||
		!idgen_json_int64(entry, "bits", &bits) ||
		bits < 1 || bits > 63)
		return NULL;
	if (idgen_json_get(entry, "shift", &f) &&
		(!idgen_json_int64(entry, "shift", &shift) ||
		 shift < 0 || shift + bits > 64))
		return NULL;
	if (idgen_json_get(entry, "space", &f) &&
		((space = idgen_json_string(entry, "space")) == NULL ||
		 strlen(space) >= NAMEDATALEN))
		return NULL;
	fixed_known = idgen_json_get(entry, "fixed", &f);
	if (fixed_known && !idgen_json_int64(entry, "fixed", &fixed))
		return NULL;
	if (idgen_json_get(entry, "form", &f))
	{
		char	   *text = idgen_json_string(entry, "form");
		char	   *end;

		/* digits only: strtou64 would take "-1" as 2^64 - 1 */
		if (text == NULL || !isdigit((unsigned char) text[0]))
			return NULL;
		errno = 0;
		form = strtou64(text, &end, 10);
		if (errno != 0 || *end != '\0' || end == text || form == 0)
			return NULL;
	}
	c = palloc0(sizeof(IdgenLeaseCounter));
	strlcpy(c->name, name, sizeof(c->name));
	c->value = (uint64) bound;
	c->seq_bits = (int) bits;
	c->seq_shift = (int) shift;
	c->fixed_known = fixed_known;
	c->fixed = fixed;
	c->form = form;
	if (space != NULL)
		strlcpy(c->space, space, sizeof(c->space));
	return c;
}

/*
 * Read a record from its key-value kv (NULL: the key is absent).  The time
 * floor lies above the writer's IDs' times read both as Unix time (named
 * generators) and as raw milliseconds since its epoch (snowflake_id under
 * another epoch).  Returns false, with rec->unreadable set and res saying
 * why, if the value cannot be believed.
 */
bool
idgen_lease_parse_record(int32 node_id, JsonbContainer *kv, IdgenLeaseRecord *rec,
						 IdgenEtcdResult *res)
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
	json = value ? idgen_etcd_parse(value, "reservation", res) : NULL;
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

	/*
	 * who wrote it (idgen 1.1.0 said only its system identifier): a tag
	 * that does not read whole is no tag, and the record then counts as
	 * another's, which can only floor
	 */
	{
		char	   *sysid = idgen_json_string(&json->root, "system_identifier");
		char	   *writer = idgen_json_string(&json->root, "writer");
		char	   *end;

		if (!idgen_json_int64(&json->root, "lease_id", &rec->lease_id))
			rec->lease_id = 0;
		if (sysid != NULL)
		{
			errno = 0;
			rec->system_identifier = strtou64(sysid, &end, 10);
			if (errno != 0 || *end != '\0')
				rec->system_identifier = 0;
		}
		if (writer != NULL)
		{
			errno = 0;
			rec->writer = strtou64(writer, &end, 10);
			if (errno != 0 || *end != '\0')
				rec->writer = 0;
		}
	}

	/*
	 * the counters: [entry, ...] (idgen_lease_parse_counter), and in the
	 * old form { "name": bound, ... } (local values)
	 */
	counters = idgen_json_container(&json->root, "counter_floors");
	if (counters != NULL && JsonContainerIsArray(counters))
	{
		JsonbIterator *it = JsonbIteratorInit(counters);
		JsonbIteratorToken tok;

		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		{
			IdgenLeaseCounter *c;

			if (tok != WJB_ELEM)
				continue;
			if (v.type != jbvBinary ||
				(c = idgen_lease_parse_counter(v.val.binary.data)) == NULL)
				goto unreadable;
			rec->counters = lappend(rec->counters, c);
		}
	}
	else if (counters != NULL)
		goto unreadable;
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
				c->seq_shift = -1;
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
	rec->lease_id = 0;
	rec->writer = 0;
	IDGEN_ETCD_FAIL(res, "the reservation key of node id %d cannot be read; fix or delete it",
					node_id);
	res->config = true;
	return false;
}

/*
 * The value of the record of what this server has reserved under its node
 * id: the time (unix_ms) and the counters, tagged with the writer: its
 * lease (lease_id, 0 without one), system identifier and keeper process
 * (idgen_lease_record_is_ours).
 */
static char *
idgen_lease_record_value_of(int64 unix_ms, int64 lease_id)
{
	StringInfoData value;
	ListCell   *lc;
	bool		first = true;

	initStringInfo(&value);
	appendStringInfo(&value, "{\"reserved_unix_ms\": " INT64_FORMAT ", \"epoch_unix_ms\": " INT64_FORMAT ", \"system_identifier\": \"" UINT64_FORMAT "\", \"lease_id\": \"" INT64_FORMAT "\", \"writer\": \"" UINT64_FORMAT "\", \"lease_ttl_s\": %d, \"counter_floors\": [",
					 unix_ms, idgen_epoch_unix_ms, GetSystemIdentifier(),
					 lease_id, idgen_lease_writer_tag(), idgen_lease_ttl_s);
	foreach(lc, idgen_lease_counters)
	{
		IdgenLeaseCounter *c = lfirst(lc);

		if (c->seq_bits == 0)
			continue;
		if (!first)
			appendStringInfoString(&value, ", ");
		appendStringInfoString(&value, "{\"name\": ");
		escape_json(&value, c->name);
		appendStringInfo(&value, ", \"seq\": " UINT64_FORMAT ", \"bits\": %d",
						 c->value, c->seq_bits);
		/* an entry read from idgen 1.1.0's record is passed on as it came */
		if (c->seq_shift >= 0)
		{
			appendStringInfo(&value, ", \"shift\": %d, \"space\": ", c->seq_shift);
			escape_json(&value, c->space);
		}
		if (c->fixed_known)
			appendStringInfo(&value, ", \"fixed\": " INT64_FORMAT, c->fixed);
		if (c->form != 0)
			appendStringInfo(&value, ", \"form\": \"" UINT64_FORMAT "\"", c->form);
		appendStringInfoChar(&value, '}');
		first = false;
	}
	/* bounds of the old form, taken from a record, are passed on as they came */
	appendStringInfoString(&value, "], \"counters\": {");
	first = true;
	foreach(lc, idgen_lease_counters)
	{
		IdgenLeaseCounter *c = lfirst(lc);

		if (c->seq_bits != 0)
			continue;
		if (!first)
			appendStringInfoString(&value, ", ");
		escape_json(&value, c->name);
		appendStringInfo(&value, ": " UINT64_FORMAT, c->value);
		first = false;
	}
	appendStringInfoString(&value, "}}");
	return value.data;
}

/* The record's value, written under the lease this server holds now, if any. */
char *
idgen_lease_record_value(int64 unix_ms)
{
	IdgenLease *lease = LEASE(idgen_shared);
	int64		lease_id;

	SpinLockAcquire(&lease->mutex);
	lease_id = lease->lease_id;
	SpinLockRelease(&lease->mutex);
	return idgen_lease_record_value_of(unix_ms, lease_id);
}

/*
 * Did this keeper process write rec, under the lease it holds now?  Then
 * it is a write of ours whose answer never came (a slow etcd applied it,
 * and the request timed out): what it holds was reserved by us and not
 * yet published, nothing of a previous holder's.  A record of an earlier
 * lease of ours, of a keeper before this one, or of another server is
 * not, nor one without a lease (a hand-over).
 */
static bool
idgen_lease_record_is_ours(const IdgenLeaseRecord *rec)
{
	IdgenLease *lease = LEASE(idgen_shared);
	int64		lease_id;

	if (!rec->present || rec->unreadable || rec->lease_id == 0 ||
		rec->writer != lease_writer_tag || lease_writer_tag == 0 ||
		rec->system_identifier != GetSystemIdentifier())
		return false;
	SpinLockAcquire(&lease->mutex);
	lease_id = lease->lease_id;
	SpinLockRelease(&lease->mutex);
	return rec->lease_id == lease_id;
}

/*
 * Floor every generator that embeds the node id above floor_unix_ms, the
 * record read from etcd (counters: idgen_lease_validate).  Raising is
 * idempotent, so a keeper that takes over a lease raises again from the
 * record, which is then its own server's; claimed says whether it is the
 * previous holder's, for the log.
 */
void
idgen_lease_apply_floor(int64 floor_unix_ms, bool claimed)
{
	if (floor_unix_ms <= 0)
		return;
	idgen_keeper_raise_floors(floor_unix_ms + 1, true);
	if (claimed)
		ereport(LOG,
				(errmsg("idgen keeper: IDs under the claimed node id resume above %s, the previous holder's reservation",
						timestamptz_to_str((floor_unix_ms - IDGEN_UNIX_TO_PG_MS) * 1000))));
}

/*
 * Compare a record read from etcd with what this server has reserved under
 * node_id as far as this keeper knows: the time in lease->recorded_unix_ms,
 * the counters in idgen_lease_counters.
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
 *
 * Except a record this keeper wrote itself under the lease it holds
 * (idgen_lease_record_is_ours): a write that etcd applied but whose answer
 * never came.  What it holds beyond is this keeper's own reservation, not
 * yet published, and is taken in as recorded, quietly: no floor is raised
 * (nothing was issued from it).  What it lacks is warned of all the same:
 * an older write of ours, brought back by a restore of etcd, has lost the
 * later ones.
 */
bool
idgen_lease_reconcile(int32 node_id, const IdgenLeaseRecord *rec, bool holding,
					  bool quiet)
{
	IdgenLease *lease = LEASE(idgen_shared);
	StringInfoData held;
	StringInfoData should;
	int64		recorded;
	bool		ahead = false;
	bool		ours = idgen_lease_record_is_ours(rec);
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
	foreach(lc, idgen_lease_counters)
	{
		IdgenLeaseCounter *mine = lfirst(lc);
		IdgenLeaseCounter *theirs = idgen_lease_find_counter(rec->counters, mine);

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

		ahead |= idgen_lease_note_counter(theirs);
	}
	if (ahead && !ours)
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
bool
idgen_etcd_get_key(const char *kind, int32 node_id, JsonbContainer **kv,
				   IdgenEtcdResult *res)
{
	JsonbContainer *answer;

	answer = idgen_etcd_call("/v3/kv/range",
							 psprintf("{\"key\": \"%s\"}",
									  idgen_lease_key(kind, node_id)),
							 idgen_lease_request_timeout(), res);
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
 * keeper last wrote or read it (its mod_revision is record->rev), and, with
 * a lease, only while that lease holds the node key.  A key changed behind
 * the keeper's back (etcd restored from a snapshot, a previous holder
 * handing over, a hand edit) is read, reconciled (idgen_lease_reconcile
 * says what it lacked and takes in what it has beyond), and written again.
 * So the record only ever grows, whoever writes it.
 *
 * record->rev follows each revision written or read.  Returns false with
 * res set, record->unanswered if etcd did not answer, and record->key_lost
 * if the lease no longer holds the node key.
 */
bool
idgen_etcd_write_record(IdgenLeaseRecordState *record, int32 node_id,
						int64 lease_id, int64 unix_ms, IdgenEtcdResult *res)
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
						 key, record->rev);
		appendStringInfo(&txn, "\"success\": [{\"request_put\": {\"key\": \"%s\", \"value\": \"%s\"}}], ",
						 key, idgen_base64(idgen_lease_record_value_of(recorded, lease_id)));
		appendStringInfoString(&txn, "\"failure\": [");
		if (lease_id != 0)
			appendStringInfo(&txn, "{\"request_range\": {\"key\": \"%s\"}}, ", node_key);
		appendStringInfo(&txn, "{\"request_range\": {\"key\": \"%s\"}}]}", key);

		answer = idgen_etcd_call("/v3/kv/txn", txn.data, idgen_lease_request_timeout(),
								 res);
		record->unanswered = (answer == NULL);
		if (answer == NULL)
			return false;
		if (idgen_etcd_txn_succeeded(answer))
		{
			/* the put's revision is the transaction's */
			(void) idgen_json_int64(idgen_json_container(answer, "header"),
									"revision", &revision);
			record->rev = revision;
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
				IDGEN_ETCD_FAIL(res, "the node key of node id %d is no longer held by this server's lease",
								node_id);
				record->key_lost = true;
				return false;
			}
		}
		(void) idgen_lease_parse_record(node_id,
										idgen_etcd_txn_kv(answer, lease_id != 0 ? 1 : 0),
										&rec, res);
		(void) idgen_lease_reconcile(node_id, &rec, lease_id != 0, false);
		record->rev = rec.mod_revision;
	}
	IDGEN_ETCD_FAIL(res, "the reservation key of node id %d kept changing while this server wrote it",
					node_id);
	return false;
}

/* The node ids that are held now, as a bitmap; false if etcd did not say. */
bool
idgen_etcd_held_ids(bool *held, IdgenEtcdResult *res)
{
	char	   *from = psprintf("%snode/", idgen_lease_prefix);
	char	   *to = psprintf("%snode0", idgen_lease_prefix);	/* '/' + 1 */
	JsonbContainer *answer;
	JsonbContainer *kvs;
	JsonbContainer *kv;

	answer = idgen_etcd_call("/v3/kv/range",
							 psprintf("{\"key\": \"%s\", \"range_end\": \"%s\", \"keys_only\": true}",
									  idgen_base64(from), idgen_base64(to)),
							 idgen_lease_request_timeout(), res);
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
 * server holds it (*holder says who, *holder_is_self whether it is this
 * server before a crash restart), -1 if etcd did not answer or the record
 * cannot be read.
 */
int
idgen_etcd_claim(int32 node_id, int64 lease_id, IdgenLeaseRecord *rec,
				 char **holder, bool *holder_is_self, IdgenEtcdResult *res)
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
							 idgen_lease_request_timeout(), res);
	if (answer == NULL)
		return -1;
	if (idgen_etcd_txn_succeeded(answer))
	{
		/* a record we cannot read: refuse rather than guess */
		if (!idgen_lease_parse_record(node_id, idgen_etcd_txn_kv(answer, 1), rec, res))
			return -1;
		return 1;
	}
	kv = idgen_etcd_txn_kv(answer, 0);
	*holder = idgen_lease_describe_holder(kv ? idgen_json_string(kv, "value") : NULL,
										  holder_is_self, res);
	return 0;
}

/*
 * Renew; returns the TTL to go by (etcd's, never more than we asked for,
 * as for a grant; 0: the lease is gone), or -1 on failure.
 */
int64
idgen_etcd_keepalive(int64 lease_id, IdgenEtcdResult *res)
{
	JsonbContainer *answer;
	JsonbContainer *result;
	int64		ttl = 0;

	answer = idgen_etcd_call("/v3/lease/keepalive",
							 psprintf("{\"ID\": \"" INT64_FORMAT "\"}", lease_id),
							 idgen_lease_request_timeout(), res);
	if (answer == NULL)
		return -1;
	result = idgen_json_container(answer, "result");
	if (result == NULL)
	{
		IDGEN_ETCD_FAIL(res, "etcd's keepalive answer has no result");
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
 * 0 if not (res says so), -1 if etcd did not answer.
 */
int
idgen_etcd_check(int32 node_id, int64 lease_id, IdgenLeaseRecord *rec,
				 IdgenEtcdResult *res)
{
	JsonbContainer *answer;

	answer = idgen_etcd_call("/v3/kv/txn",
							 psprintf("{\"compare\": [{\"key\": \"%s\", \"target\": \"LEASE\", \"lease\": \"" INT64_FORMAT "\"}], "
									  "\"success\": [{\"request_range\": {\"key\": \"%s\"}}]}",
									  idgen_lease_key("node", node_id), lease_id,
									  idgen_lease_key("reservation", node_id)),
							 idgen_lease_request_timeout(), res);
	if (answer == NULL)
		return -1;
	if (!idgen_etcd_txn_succeeded(answer))
	{
		IDGEN_ETCD_FAIL(res, "the node key of node id %d is no longer held by this server's lease",
						node_id);
		return 0;
	}
	/* an unreadable record is one to write again (idgen_lease_reconcile) */
	(void) idgen_lease_parse_record(node_id, idgen_etcd_txn_kv(answer, 0), rec, res);
	return 1;
}
