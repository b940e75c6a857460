/*-------------------------------------------------------------------------
 *
 * lease/etcd.h
 *	  The etcd transport (lease/etcd.c), for the lease (lease/protocol.c, lease/record.c) only.
 *
 * Everything here runs in the keeper alone and throws nothing on etcd's
 * account: a request that fails returns NULL or false and notes its reason
 * in the IdgenEtcdResult its caller passed.
 *
 * IDENTIFICATION
 *	  src/lease/etcd.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_ETCD_H
#define IDGEN_ETCD_H

#include "utils/jsonb.h"

/*
 * A request's failure, in words for the lease's status and the log, and
 * whether it is one of configuration (a setting, a certificate, a
 * password, a record in etcd to correct) rather than one that passes (etcd
 * not reached, or not answering in time).  The caller owns it and passes
 * it by pointer; a request fills it when it, or a reading inside it, fails
 * (IDGEN_ETCD_FAIL), and leaves it alone otherwise.  So a caller that
 * passes the same one to every request keeps the last failure of all,
 * which the lease reports (lease/protocol.c keeps one for the keeper's protocol).
 */
#define IDGEN_ETCD_ERROR_SIZE 256

typedef struct IdgenEtcdResult
{
	bool		config;			/* someone has to correct something */
	char		message[IDGEN_ETCD_ERROR_SIZE];
} IdgenEtcdResult;

/* Note a failure that passes by itself in res, as printf. */
#define IDGEN_ETCD_FAIL(res, ...) \
	((res)->config = false, \
	 snprintf((res)->message, sizeof((res)->message), __VA_ARGS__))

/* the connection (once per keeper) and one request to etcd's JSON gateway */
extern bool idgen_lease_connect(void);
extern JsonbContainer *idgen_etcd_call(const char *path, const char *request,
									   int64 timeout_ms, IdgenEtcdResult *res);

/* reading etcd's answers and our own values in them, without throwing */
extern Jsonb *idgen_etcd_parse(const char *text, const char *url,
							   IdgenEtcdResult *res);
extern bool idgen_json_get(JsonbContainer *c, const char *key, JsonbValue *v);
extern JsonbContainer *idgen_json_container(JsonbContainer *c, const char *key);
extern JsonbContainer *idgen_json_element(JsonbContainer *array, uint32 i);
extern char *idgen_json_string(JsonbContainer *c, const char *key);
extern bool idgen_json_numeric_int64(JsonbValue *v, int64 *out);
extern bool idgen_json_int64(JsonbContainer *c, const char *key, int64 *out);
extern char *idgen_etcd_message(JsonbContainer *answer);

/* etcd's gateway carries keys and values in base64 */
extern char *idgen_base64(const char *data);
extern char *idgen_unbase64(const char *data);

#endif							/* IDGEN_ETCD_H */
