/*-------------------------------------------------------------------------
 *
 * fuzz_etcd_answer.c
 *	  libFuzzer target: etcd's JSON answers, as the keeper reads them
 *	  (src/lease/etcd.c, src/lease/record.c and the src/lease/protocol.c it serves).
 *
 * The input is the text of an answer of etcd's v3 JSON gateway.  It goes
 * through idgen's own code: idgen_etcd_parse (its checks and PostgreSQL's
 * JSON parser, then jsonb's input function),
 * the readers of etcd.h, and the functions of leasekeys.c that interpret an
 * answer (a grant, a keepalive, a range of node keys, a reservation
 * record, a claim's and a check's transaction), which this target
 * compiles whole with lease.c, as the epoch target does guc.c.  etcd.c is
 * compiled without libcurl; the lease's requests go to fuzz_etcd_call
 * below, which answers every request with the input, as idgen_etcd_call
 * does with a 200 answer: the parsed answer, or NULL if it is not JSON or carries
 * etcd's error message.
 *
 * jsonb comes from the installed server: jsonb.c, jsonb_util.c,
 * jsonfuncs.c, json.c, numeric.c and list.c from its bitcode
 * (pkglibdir/bitcode), uninstrumented, and the JSON lexer and parser,
 * src/common/jsonapi.c, from libpgcommon.a, which is its frontend build
 * (the server's bitcode does not hold src/common).  PostgreSQL 15's
 * common/jsonapi.h, which both builds include, declares JsonLexContext
 * and JsonSemAction with no FRONTEND-dependent field, so the frontend
 * jsonapi.o and the backend's jsonb.c agree on their layout.  The
 * frontend build differs from the server's in three ways that matter
 * here: it does not call check_stack_depth() (so the input is limited to
 * IDGEN_FUZZ_MAX_ANSWER bytes, whose nesting the stack holds); it turns a
 * \u escape into UTF-8 itself rather than through pg_unicode_to_server,
 * which is the same in a UTF8 database, the one this target stands for;
 * and it has no json_errdetail, which a stand-in below replaces (naming
 * the error by its number, where the server's says it in words).
 *
 * Checked, for any input:
 *
 *	- nothing crashes, and nothing raises an ERROR: a text that is not
 *	  JSON is NULL from idgen_etcd_parse, with the result it was given
 *	  saying so, and jsonb's input function is given only texts it takes; a text
 *	  refused by the JSON parser (rather than by idgen's limits on
 *	  nesting, numbers, length and escapes) is one jsonb refuses too;
 *	- every field of every object reads back as what it is: present, a
 *	  string exactly when it is one, a container exactly when it is one;
 *	  a field of an array or a scalar is absent, and so is any element of
 *	  an object or past an array's end;
 *	- an int64 read from a string is what strtoi64 gives for it (blanks,
 *	  a sign, decimal digits, nothing after, within int64: checked here
 *	  in 128 bits), else refused; one read from a number is refused unless
 *	  numeric_int8 gives the same value, and is accepted when the number
 *	  is an integer that fits;
 *	- base64: any string encodes and decodes back to itself, in 4 bytes
 *	  for each 3 or part; a string that decodes, decodes again to the same
 *	  bytes after encoding;
 *	- etcd's message is the answer's "message" or its "error"'s;
 *	- leasekeys.c: a grant's lease id and TTL are the answer's (TTL above 0),
 *	  the TTL cut to the one asked for (idgen.lease_ttl); a keepalive's TTL
 *	  is its "result"'s, cut the same way, or 0; no more node ids are
 *	  held than there are keys; a reservation record is absent, readable
 *	  (its floor at or above the recorded time, its TTL 0-3600 s, its
 *	  counters' names short and their values at least 0) or unreadable
 *	  with nothing believed; a claim and a check say what the transaction
 *	  did.
 *
 * The input is also read as the value of a reservation key (base64 in a
 * key-value, as etcd carries it), by the record's reader and the holder's
 * description, with the same checks.
 *
 * IDENTIFICATION
 *	  fuzz/fuzz_etcd_answer.c
 *
 *-------------------------------------------------------------------------
 */
#define IDGEN_WITHOUT_LIBCURL
#include "../src/lease/etcd.c"

/* the lease's transport: this input's answer */
static JsonbContainer *fuzz_etcd_call(const char *path, const char *request,
									  int64 timeout_ms, IdgenEtcdResult *res);

#define idgen_etcd_call fuzz_etcd_call
#include "../src/lease/protocol.c"
#include "../src/lease/record.c"
#include "../src/lease/counters.c"
#undef idgen_etcd_call

#include <ctype.h>

#include "common/jsonapi.h"
#include "mb/pg_wchar.h"

#include "fuzz.h"

/* etcd's answers are small; this much nesting the stack holds */
#define IDGEN_FUZZ_MAX_ANSWER 4096

/* ----- what the keeper's code and jsonb need from the backend ----- */

static IdgenShared fuzz_shared;
IdgenShared *idgen_shared = &fuzz_shared;
bool		idgen_leases_on = true;
int			idgen_node_id = 7;
int			idgen_reservation_ms = 10000;
char	   *idgen_node_id_string = "7";
char	   *idgen_lease_prefix = "/idgen/";
int			idgen_lease_ttl_s = 10;
MemoryContext TopMemoryContext = NULL;
int			PostPortNumber = 5432;
pid_t		PostmasterPid = 4242;

int64
idgen_clock_monotonic_ms(void)
{
	return 0;
}

uint64
GetSystemIdentifier(void)
{
	return UINT64CONST(7000000000000000001);
}

TimestampTz
GetCurrentTimestamp(void)
{
	return INT64CONST(820454400000000);	/* 2026-01-01 00:00:00+00 */
}

const char *
timestamptz_to_str(TimestampTz t)
{
	return "2026-01-01 00:00:00+00";
}

int
GetDatabaseEncoding(void)
{
	return PG_UTF8;
}

/* jsonapi.c's frontend build does not call it; jsonb_util.c does */
void
check_stack_depth(void)
{
}

void *
MemoryContextAlloc(MemoryContext context, Size size)
{
	return palloc(size);
}

/* as detoast_attr: nothing here is toasted; a short header is made long */
struct varlena *
pg_detoast_datum(struct varlena *datum)
{
	struct varlena *result;

	if (!VARATT_IS_EXTENDED(datum))
		return datum;
	if (!VARATT_IS_SHORT(datum))
		abort();
	result = palloc(VARSIZE_SHORT(datum) - VARHDRSZ_SHORT + VARHDRSZ);
	SET_VARSIZE(result, VARSIZE_SHORT(datum) - VARHDRSZ_SHORT + VARHDRSZ);
	memcpy(VARDATA(result), VARDATA_SHORT(datum), VARSIZE_SHORT(datum) - VARHDRSZ_SHORT);
	return result;
}

/* fmgr.c's, without its detoasting (the stubs' stands in) */
Datum
DirectFunctionCall1Coll(PGFunction func, Oid collation, Datum arg1)
{
	LOCAL_FCINFO(fcinfo, 1);
	Datum		result;

	InitFunctionCallInfoData(*fcinfo, NULL, 1, collation, NULL, NULL);
	fcinfo->args[0].value = arg1;
	fcinfo->args[0].isnull = false;
	result = (*func) (fcinfo);
	if (fcinfo->isnull)
		elog(ERROR, "function %p returned NULL", (void *) func);
	return result;
}

Datum
DirectFunctionCall3Coll(PGFunction func, Oid collation, Datum arg1, Datum arg2,
						Datum arg3)
{
	LOCAL_FCINFO(fcinfo, 3);
	Datum		result;

	InitFunctionCallInfoData(*fcinfo, NULL, 3, collation, NULL, NULL);
	fcinfo->args[0].value = arg1;
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value = arg2;
	fcinfo->args[1].isnull = false;
	fcinfo->args[2].value = arg3;
	fcinfo->args[2].isnull = false;
	result = (*func) (fcinfo);
	if (fcinfo->isnull)
		elog(ERROR, "function %p returned NULL", (void *) func);
	return result;
}

/*
 * The frontend jsonapi.o has no json_errdetail (the server's has): the
 * detail of a JSON syntax error, which idgen does not read, in short.
 */
char *
json_errdetail(JsonParseErrorType error, JsonLexContext *lex)
{
	return psprintf("JSON parse error %d at line %d.", (int) error, lex->line_number);
}

/*
 * the context line of a JSON syntax error (report_json_context), which
 * jsonb_in raises only when this target checks a refusal against it
 */
int
errcontext_msg(const char *fmt,...)
{
	char		buf[1024];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return 0;
}

int
set_errcontext_domain(const char *domain)
{
	return 0;
}

/* as mbutils.c, in a UTF8 database */
int
pg_mblen_range(const char *mbstr, const char *end)
{
	int			len = pg_mblen(mbstr);

	Assert(end > mbstr);
	return Min(len, end - mbstr);
}

/* ----- the transport ----- */

static const char *fuzz_text;	/* this input, as etcd's answer */
static int	fuzz_calls;

static JsonbContainer *
fuzz_etcd_call(const char *path, const char *request, int64 timeout_ms,
			   IdgenEtcdResult *res)
{
	Jsonb	   *answer = idgen_etcd_parse(fuzz_text, path, res);
	char	   *message;

	fuzz_calls++;
	if (answer == NULL)
		return NULL;
	message = idgen_etcd_message(&answer->root);
	if (message != NULL)
	{
		IDGEN_ETCD_FAIL(res, "%s: HTTP status 200: %s", path, message);
		return NULL;
	}
	return &answer->root;
}

/* ----- independent readings ----- */

/*
 * strtoi64's reading of a whole text (blanks, a sign, decimal digits and
 * nothing after, within int64), computed in 128 bits.
 */
static bool
fuzz_text_int64(const char *s, int64 *out)
{
	__int128	value = 0;
	bool		negative = false;
	bool		digits = false;

	while (isspace((unsigned char) *s))
		s++;
	if (*s == '+' || *s == '-')
		negative = (*s++ == '-');
	for (; *s >= '0' && *s <= '9'; s++)
	{
		digits = true;
		value = value * 10 + (*s - '0');
		if (value > (__int128) PG_INT64_MAX + 1)
			return false;
	}
	if (!digits || *s != '\0')
		return false;
	if (negative)
		value = -value;
	if (value > PG_INT64_MAX || value < PG_INT64_MIN)
		return false;
	*out = (int64) value;
	return true;
}

/* A scalar's reading as idgen_json_int64 should give it, or false. */
static bool
fuzz_value_int64(JsonbValue *v, int64 *out)
{
	if (v->type == jbvString)
		return v->val.string.len > 0 &&
			fuzz_text_int64(pnstrdup(v->val.string.val, v->val.string.len), out);
	if (v->type == jbvNumeric)
	{
		volatile int64 value = 0;
		char	   *text = DatumGetCString(DirectFunctionCall1(numeric_out,
															   NumericGetDatum(v->val.numeric)));

		/* an integer prints without a point; numeric_int8 refuses beyond int64 */
		if (strchr(text, '.') != NULL ||
			!FUZZ_TRY(value = DatumGetInt64(DirectFunctionCall1(numeric_int8,
																NumericGetDatum(v->val.numeric)))))
			return false;
		*out = value;
		return true;
	}
	return false;
}

/* The int64 of c's field key as idgen reads it, checked; false if none. */
static bool
fuzz_field_int64(JsonbContainer *c, const char *key, int64 *out)
{
	JsonbValue	v;
	int64		expected = 0;
	bool		expect = idgen_json_get(c, key, &v) && fuzz_value_int64(&v, &expected);
	bool		got = idgen_json_int64(c, key, out);

	FUZZ_CHECK(got == expect && (!got || *out == expected),
			   "field \"%s\": idgen read %s " INT64_FORMAT ", expected %s " INT64_FORMAT,
			   key, got ? "accepted" : "refused", got ? *out : 0,
			   expect ? "accepted" : "refused", expected);
	return got;
}

static void
fuzz_check_base64(const char *s, int len)
{
	char	   *encoded;
	char	   *decoded;

	if (len != strlen(s))
		return;					/* jsonb holds no NUL, but be sure */
	encoded = idgen_base64(s);
	FUZZ_CHECK(strlen(encoded) == (len + 2) / 3 * 4,
			   "\"%s\" (%d bytes) encoded to \"%s\"", s, len, encoded);
	decoded = idgen_unbase64(encoded);
	FUZZ_CHECK(decoded != NULL && strcmp(decoded, s) == 0,
			   "\"%s\" encoded to \"%s\", which decoded to \"%s\"", s, encoded,
			   decoded ? decoded : "(nothing)");

	decoded = idgen_unbase64(s);
	if (decoded != NULL)
	{
		char	   *again = idgen_unbase64(idgen_base64(decoded));

		FUZZ_CHECK(again != NULL && strcmp(again, decoded) == 0,
				   "\"%s\" decoded to \"%s\", encoded and decoded to \"%s\"", s,
				   decoded, again ? again : "(nothing)");
	}
}

/* ----- the readers, over every container of the answer ----- */

static void fuzz_walk(JsonbContainer *c);

static void
fuzz_scalar(JsonbValue *v)
{
	if (v->type == jbvString)
		fuzz_check_base64(pnstrdup(v->val.string.val, v->val.string.len),
						  v->val.string.len);
}

static void
fuzz_walk_object(JsonbContainer *c)
{
	JsonbIterator *it = JsonbIteratorInit(c);
	JsonbIteratorToken tok;
	JsonbValue	v;
	char	   *key = NULL;
	int			key_len = 0;

	FUZZ_CHECK(idgen_json_element(c, 0) == NULL, "an object has an element 0");
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		JsonbValue	got;
		char	   *s;
		int64		n;

		if (tok == WJB_KEY)
		{
			key = pnstrdup(v.val.string.val, v.val.string.len);
			key_len = v.val.string.len;
			fuzz_check_base64(key, key_len);
			continue;
		}
		if (tok == WJB_BEGIN_OBJECT || tok == WJB_END_OBJECT)
			continue;
		FUZZ_CHECK(tok == WJB_VALUE && key != NULL && strlen(key) == key_len,
				   "an object's token %d without its key", tok);

		FUZZ_CHECK(idgen_json_get(c, key, &got) && got.type == v.type,
				   "field \"%s\" of type %d reads as %d", key, v.type, got.type);
		s = idgen_json_string(c, key);
		FUZZ_CHECK((s != NULL) == (v.type == jbvString) &&
				   (s == NULL || (strlen(s) == v.val.string.len &&
								  memcmp(s, v.val.string.val, v.val.string.len) == 0)),
				   "field \"%s\" of type %d reads as string \"%s\"", key, v.type,
				   s ? s : "(none)");
		FUZZ_CHECK((idgen_json_container(c, key) != NULL) == (v.type == jbvBinary),
				   "field \"%s\" of type %d, container or not", key, v.type);
		(void) fuzz_field_int64(c, key, &n);

		if (v.type == jbvBinary)
			fuzz_walk(v.val.binary.data);
		else
			fuzz_scalar(&v);
		key = NULL;
	}
}

static void
fuzz_walk_array(JsonbContainer *c)
{
	uint32		n = JsonContainerSize(c);
	JsonbValue	v;
	int64		i64;

	FUZZ_CHECK(!idgen_json_get(c, "message", &v) && idgen_json_string(c, "key") == NULL &&
			   idgen_json_container(c, "kvs") == NULL && !idgen_json_int64(c, "TTL", &i64),
			   "an array or a scalar has a field");
	for (uint32 i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(c, i);
		JsonbContainer *got = idgen_json_element(c, i);

		FUZZ_CHECK(e != NULL && (got != NULL) == (e->type == jbvBinary),
				   "element %u of %u: type %d, container %s", i, n,
				   e ? e->type : -1, got ? "read" : "not read");
		if (e->type == jbvBinary)
			fuzz_walk(e->val.binary.data);
		else
			fuzz_scalar(e);
	}
	FUZZ_CHECK(idgen_json_element(c, n) == NULL, "element %u of %u is read", n, n);
}

static void
fuzz_walk(JsonbContainer *c)
{
	if (JsonContainerIsObject(c))
		fuzz_walk_object(c);
	else
		fuzz_walk_array(c);
}

/* ----- leasekeys.c's readings ----- */

static void
fuzz_check_record(const char *what, JsonbContainer *kv, bool readable,
				  const IdgenLeaseRecord *rec)
{
	ListCell   *lc;

	FUZZ_CHECK(readable == !rec->unreadable, "%s: returned %d, unreadable %d",
			   what, readable, rec->unreadable);
	FUZZ_CHECK(rec->present == (kv != NULL), "%s: present %d", what, rec->present);
	if (!readable)
	{
		FUZZ_CHECK(rec->floor_unix_ms == 0 && rec->ttl_s == 0 && rec->counters == NIL,
				   "%s: an unreadable record gives a floor " INT64_FORMAT, what,
				   rec->floor_unix_ms);
		return;
	}
	FUZZ_CHECK(rec->floor_unix_ms >= 0 && rec->ttl_s >= 0 &&
			   rec->ttl_s <= IDGEN_LEASE_TTL_MAX_S,
			   "%s: floor " INT64_FORMAT ", TTL " INT64_FORMAT, what,
			   rec->floor_unix_ms, rec->ttl_s);
	if (kv != NULL)
	{
		int64		rev = 0;

		(void) fuzz_field_int64(kv, "mod_revision", &rev);
		FUZZ_CHECK(rev == rec->mod_revision, "%s: mod_revision " INT64_FORMAT ", read "
				   INT64_FORMAT, what, rev, rec->mod_revision);
	}
	if (kv != NULL && idgen_json_string(kv, "value") != NULL)
	{
		IdgenEtcdResult res = {0};
		Jsonb	   *json = idgen_etcd_parse(idgen_unbase64(idgen_json_string(kv, "value")),
											"value", &res);
		int64		reserved = -1;

		FUZZ_CHECK(json != NULL && fuzz_field_int64(&json->root, "reserved_unix_ms", &reserved) &&
				   reserved >= 0 && rec->floor_unix_ms >= reserved,
				   "%s: floor " INT64_FORMAT " below the reservation " INT64_FORMAT,
				   what, rec->floor_unix_ms, reserved);
		/* each field read is checked against its text on the way */
		fuzz_walk(&json->root);

		/* a readable record believes each counter as written, and only those */
		if (idgen_json_container(&json->root, "counters") != NULL &&
			JsonContainerIsObject(idgen_json_container(&json->root, "counters")))
		{
			JsonbIterator *it = JsonbIteratorInit(idgen_json_container(&json->root, "counters"));
			JsonbIteratorToken tok;
			JsonbValue	v;
			int			i = 0;

			while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
			{
				IdgenLeaseCounter *c;
				int64		bound;

				if (tok != WJB_VALUE)
					continue;
				c = i < list_length(rec->counters) ? list_nth(rec->counters, i) : NULL;
				FUZZ_CHECK(c != NULL && fuzz_value_int64(&v, &bound) && v.type == jbvNumeric &&
						   bound >= 0 && c->value == (uint64) bound,
						   "%s: counter %d read as " UINT64_FORMAT ", written otherwise",
						   what, i, c ? c->value : 0);
				i++;
			}
			FUZZ_CHECK(i == list_length(rec->counters), "%s: %d counters read, %d written",
					   what, list_length(rec->counters), i);
		}
		else
			FUZZ_CHECK(rec->counters == NIL, "%s: counters read, none written", what);
	}
	foreach(lc, rec->counters)
	{
		IdgenLeaseCounter *c = lfirst(lc);

		FUZZ_CHECK(strlen(c->name) < NAMEDATALEN && c->value <= (uint64) PG_INT64_MAX,
				   "%s: counter \"%s\" " UINT64_FORMAT, what, c->name, c->value);
	}
}

static void
fuzz_lease(JsonbContainer *answer)
{
	int64		sent;
	int64		ttl = 0;
	int64		id;
	int64		expected;
	bool		held[IDGEN_SNOWFLAKE_MAX_NODE + 1];
	JsonbContainer *kv;
	IdgenLeaseRecord rec;
	char	   *holder = NULL;
	bool		holder_is_self = false;
	int			n;
	int			result;
	IdgenEtcdResult res = {0};

	/* a grant: {"ID": "...", "TTL": "..."} */
	id = idgen_etcd_grant(&sent, &ttl, &res);
	if (id != 0)
	{
		/*
		 * The TTL the holder goes by is the answer's, but never more than
		 * it asked for (idgen.lease_ttl): its deadline is what keeps it
		 * from issuing once etcd may have given the id to another server.
		 */
		FUZZ_CHECK(answer != NULL && fuzz_field_int64(answer, "ID", &expected) &&
				   expected == id && fuzz_field_int64(answer, "TTL", &expected) &&
				   ttl == Min(expected, idgen_lease_ttl_s) && ttl > 0,
				   "granted lease " INT64_FORMAT " for " INT64_FORMAT " s", id, ttl);
	}
	else
		FUZZ_CHECK(answer == NULL || !idgen_json_int64(answer, "ID", &expected) ||
				   expected == 0 || !idgen_json_int64(answer, "TTL", &expected) ||
				   expected <= 0, "a lease in the answer was not granted");

	/* a keepalive: {"result": {"ID": ..., "TTL": ...}} */
	ttl = idgen_etcd_keepalive(1, &res);
	if (answer == NULL || idgen_json_container(answer, "result") == NULL)
		FUZZ_CHECK(ttl == -1, "keepalive without a result gives " INT64_FORMAT, ttl);
	else
	{
		if (!fuzz_field_int64(idgen_json_container(answer, "result"), "TTL", &expected))
			expected = 0;
		FUZZ_CHECK(ttl == Min(expected, idgen_lease_ttl_s), "keepalive gives " INT64_FORMAT
				   ", its TTL " INT64_FORMAT " (asked for %d)", ttl, expected, idgen_lease_ttl_s);
	}

	/* the node keys held: a range of keys */
	memset(held, 0x7f, sizeof(held));
	FUZZ_CHECK(idgen_etcd_held_ids(held, &res) == (answer != NULL), "held ids, answer or not");
	if (answer != NULL)
	{
		JsonbContainer *kvs = idgen_json_container(answer, "kvs");
		int			count = 0;
		int			keys = 0;

		for (int i = 0; i <= IDGEN_SNOWFLAKE_MAX_NODE; i++)
		{
			/* as bytes: a bool holding 0x7f would compare as anything */
			unsigned char byte = ((unsigned char *) held)[i];

			FUZZ_CHECK(byte == 0 || byte == 1, "held[%d] not set (%d)", i, byte);
			count += held[i];
		}
		while (idgen_json_element(kvs, keys) != NULL)
			keys++;
		FUZZ_CHECK(count <= keys, "%d node ids held by %d keys", count, keys);
	}

	/* a reservation record, read alone and in transactions */
	FUZZ_CHECK(idgen_etcd_get_key("reservation", 7, &kv, &res) == (answer != NULL),
			   "a key read, answer or not");
	fuzz_check_record("range", kv, idgen_lease_parse_record(7, kv, &rec, &res), &rec);
	kv = idgen_etcd_txn_kv(answer, 1);
	fuzz_check_record("txn", kv, idgen_lease_parse_record(7, kv, &rec, &res), &rec);

	result = idgen_etcd_claim(7, 1, &rec, &holder, &holder_is_self, &res);
	if (answer == NULL)
		FUZZ_CHECK(result == -1, "a claim without an answer gives %d", result);
	else if (idgen_etcd_txn_succeeded(answer))
		FUZZ_CHECK(result == (rec.unreadable ? -1 : 1), "a claim that succeeded gives %d",
				   result);
	else
		FUZZ_CHECK(result == 0 && holder != NULL, "a claim that failed gives %d", result);

	n = idgen_etcd_check(7, 1, &rec, &res);
	FUZZ_CHECK(n == (answer == NULL ? -1 : idgen_etcd_txn_succeeded(answer) ? 1 : 0),
			   "a check gives %d", n);
}

/*
 * The input as the value of a key, as etcd would carry it (base64 in a
 * key-value): a reservation record, and a holder's description.  Mutations
 * of the answers' base64 values seldom make JSON; this reaches the
 * record's reader with any text.
 */
static void
fuzz_value(const char *text)
{
	char	   *kv_text = psprintf("{\"key\": \"%s\", \"mod_revision\": \"41\", \"value\": \"%s\"}",
								   idgen_base64("/idgen/reservation/7"), idgen_base64(text));
	IdgenEtcdResult res = {0};
	Jsonb	   *kv = idgen_etcd_parse(kv_text, "value", &res);
	IdgenLeaseRecord rec;
	bool		holder_is_self;

	FUZZ_CHECK(kv != NULL, "a key-value made of the input is not JSON: %s", kv_text);
	fuzz_check_record("value", &kv->root,
					  idgen_lease_parse_record(7, &kv->root, &rec, &res), &rec);
	FUZZ_CHECK(idgen_lease_describe_holder(idgen_json_string(&kv->root, "value"),
										   &holder_is_self, &res) != NULL,
			   "no description of a holder");
}

/* ----- the target ----- */

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *text;
	Jsonb	   *answer;
	JsonbContainer *root = NULL;
	char	   *message;
	JsonbValue	v;
	IdgenEtcdResult res = {0};

	if (size > IDGEN_FUZZ_MAX_ANSWER)
		return -1;
	text = fuzz_cstring(data, size);
	if (text == NULL)
		return -1;
	fuzz_text = text;
	fuzz_calls = 0;

	/* not JSON: NULL and a reason, never an ERROR */
	answer = idgen_etcd_parse(text, "fuzz", &res);
	if (answer == NULL)
	{
		const char *reason = res.message + 30;

		FUZZ_CHECK(strncmp(res.message, "fuzz: the answer is not JSON: ", 30) == 0,
				   "a refused answer noted as \"%s\"", res.message);
		/*
		 * the parser's refusal, not one of idgen's limits: jsonb's too,
		 * or an error jsonb_in meets first on its way there (a number
		 * before the bad token that numeric_in cannot hold)
		 */
		if (strncmp(reason, "JSON parse error ", 17) == 0)
			FUZZ_CHECK(!FUZZ_TRY(DirectFunctionCall1(jsonb_in, CStringGetDatum(text))) &&
					   (fuzz_last_sqlstate == ERRCODE_INVALID_TEXT_REPRESENTATION ||
						fuzz_last_sqlstate == ERRCODE_UNTRANSLATABLE_CHARACTER ||
						fuzz_last_sqlstate == ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					   "\"%s\" refused (%s), but jsonb_in takes it or says %s: %s", text,
					   reason, unpack_sql_state(fuzz_last_sqlstate), fuzz_last_message);
	}
	else
	{
		root = &answer->root;
		fuzz_walk(root);
	}
	FUZZ_CHECK(!idgen_json_get(NULL, "message", &v) && idgen_json_element(NULL, 0) == NULL,
			   "an absent container has a field");
	fuzz_check_base64(text, size);

	/* etcd's error message: {"message": ...} or {"error": {"message": ...}} */
	message = root ? idgen_etcd_message(root) : NULL;
	if (message != NULL)
	{
		char	   *top = idgen_json_string(root, "message");
		char	   *inner = idgen_json_string(idgen_json_container(root, "error"), "message");

		FUZZ_CHECK(strcmp(message, top ? top : inner ? inner : "") == 0,
				   "etcd's message read as \"%s\"", message);
	}
	else if (root != NULL)
		FUZZ_CHECK(idgen_json_string(root, "message") == NULL &&
				   idgen_json_string(idgen_json_container(root, "error"), "message") == NULL,
				   "etcd's message not read");

	fuzz_lease(message == NULL ? root : NULL);
	FUZZ_CHECK(fuzz_calls > 0, "lease.c asked nothing");
	if (size > 0)
		fuzz_value(text);
	fuzz_reset();
	return 0;
}
