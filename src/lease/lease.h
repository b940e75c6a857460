/*-------------------------------------------------------------------------
 *
 * lease/lease.h
 *	  What lease/protocol.c (the protocol) and lease/record.c (its keys and requests in
 *	  etcd) share.  Both run only in the keeper.
 *
 * IDENTIFICATION
 *	  src/lease/lease.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_LEASE_H
#define IDGEN_LEASE_H

#include "nodes/pg_list.h"
#include "utils/jsonb.h"

#include "lease/etcd.h"

#define LEASE(s) (&(s)->lease)

/*
 * What lease/record.c appends to a holder's description when the holder looks
 * like this server before a restart; lease/protocol.c takes it off again when that
 * lease has held too long to be ours.
 */
#define IDGEN_LEASE_SELF_NOTE \
	" (this server, before a restart: that lease expires within \"idgen.lease_ttl\")"

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
	/* who wrote it (idgen_lease_record_is_ours); 0 if unsaid */
	int64		lease_id;		/* the writer's lease, 0 if it had none */
	uint64		system_identifier;
	uint64		writer;			/* the writing keeper process's tag */
} IdgenLeaseRecord;

/*
 * What the keeper knows of the reservation record between its writes.
 * lease/protocol.c's protocol owns it and hands it to idgen_etcd_write_record,
 * which keeps it up to date; the protocol reads what the last write found.
 */
typedef struct IdgenLeaseRecordState
{
	int64		rev;			/* the record's mod_revision as this keeper
								 * last wrote or read it: every write is
								 * conditional on it */
	bool		key_lost;		/* a write found that our lease no longer
								 * holds the node key */
	bool		unanswered;		/* the last write failed for want of an
								 * answer */
} IdgenLeaseRecordState;

/* lease/record.c: keys, the holder's value, the record */
extern void idgen_lease_apply_floor(int64 floor_unix_ms, bool claimed);
extern int64 idgen_lease_request_timeout(void);
extern char *idgen_lease_key(const char *kind, int32 node_id);
extern bool idgen_lease_parse_record(int32 node_id, JsonbContainer *kv,
									 IdgenLeaseRecord *rec, IdgenEtcdResult *res);
extern char *idgen_lease_record_value(int64 unix_ms);
extern bool idgen_lease_reconcile(int32 node_id, const IdgenLeaseRecord *rec,
								  bool holding, bool quiet);

/* lease/record.c: the requests; each notes its failure in res */
extern int64 idgen_etcd_grant(int64 *sent, int64 *ttl_s, IdgenEtcdResult *res);
extern void idgen_etcd_revoke(int64 lease_id, int64 timeout_ms,
							  IdgenEtcdResult *res);
extern bool idgen_etcd_get_key(const char *kind, int32 node_id,
							   JsonbContainer **kv, IdgenEtcdResult *res);
extern bool idgen_etcd_write_record(IdgenLeaseRecordState *record,
									int32 node_id, int64 lease_id,
									int64 unix_ms, IdgenEtcdResult *res);
extern bool idgen_etcd_held_ids(bool *held, IdgenEtcdResult *res);
extern int	idgen_etcd_claim(int32 node_id, int64 lease_id, IdgenLeaseRecord *rec,
							 char **holder, bool *holder_is_self,
							 IdgenEtcdResult *res);
extern int64 idgen_etcd_keepalive(int64 lease_id, IdgenEtcdResult *res);
extern int	idgen_etcd_check(int32 node_id, int64 lease_id, IdgenLeaseRecord *rec,
							 IdgenEtcdResult *res);

#endif							/* IDGEN_LEASE_H */
