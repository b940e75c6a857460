/*-------------------------------------------------------------------------
 *
 * lease/etcd.c
 *	  The etcd transport of node-id leases: HTTP over libcurl, TLS and
 *	  authentication, and the reading of etcd's JSON answers.
 *
 * The lease's requests (lease/record.c) come here as JSON text for a
 * path of etcd's v3 JSON gateway (/v3/kv/txn, /v3/lease/grant, ...) and
 * get back the parsed answer, or NULL with the caller's IdgenEtcdResult
 * saying why.
 * Requests go to the endpoints of idgen.lease_endpoints in turn, starting
 * with the one that answered last.  Keys and values travel in base64, as
 * the gateway wants them; the helpers for both, and for reading jsonb
 * answers without throwing, are here too.
 *
 * Only the keeper calls in here, outside transactions: nothing throws on
 * etcd's account (a failure is noted in the caller's result), and the
 * connection, the endpoint list and the token are the keeper process's
 * own, in TopMemoryContext or static storage.  No shared memory is used
 * and no lock is taken.
 *
 * TLS and users.  Over https:// libcurl verifies etcd's certificate and
 * name (idgen.lease_ca_file) and presents ours (idgen.lease_cert_file,
 * idgen.lease_key_file).  With idgen.lease_user set, the keeper gets a
 * token from etcd (/v3/auth/authenticate, the password read from
 * idgen.lease_password_file) and sends it with every request, getting a
 * new one when etcd refuses it as expired or stale.  These settings are
 * reloadable and read at every request.  A wrong one fails every request,
 * which stops generation as an unreachable etcd does, with an error (in
 * the lease's status and the log) that names the setting; the password
 * appears nowhere but in the one request that carries it.
 *
 * IDENTIFICATION
 *	  src/lease/etcd.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef IDGEN_WITHOUT_LIBCURL
#include <curl/curl.h>
#endif

#include "common/base64.h"
#include "common/jsonapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/varlena.h"

#include "idgen.h"
#include "lease/etcd.h"

/* the largest etcd answer we read: a listing of 1,024 node keys is ~300 kB */
#define IDGEN_ETCD_MAX_RESPONSE (4 * 1024 * 1024)

/*
 * How long an authentication may take.  etcd checks the password with
 * bcrypt and passes the request through raft: hundreds of milliseconds on
 * a busy member, more than the quarter of idgen.reservation other requests
 * get.  It is rare (a new token), and it changes nothing the lease's
 * deadline protects: the generators enforce the deadline themselves.
 */
#define IDGEN_ETCD_AUTH_TIMEOUT_MS 1000

#ifndef IDGEN_WITHOUT_LIBCURL

/* the keeper's connection to etcd; NULL until first used */
static CURL *curl = NULL;
static List *endpoints = NIL;
static int	endpoint_next = 0;

/* libcurl's own words for the last failed transfer */
static char curl_errbuf[CURL_ERROR_SIZE];

/* the kind of configuration error last logged, so that it is logged once */
static const char *config_error_logged = NULL;

/*
 * etcd's token for idgen.lease_user (in TopMemoryContext; "" if etcd has
 * authentication off), and the user and password file it was obtained
 * with.  NULL until the first request authenticates.
 */
static char *auth_token = NULL;
static char *auth_settings = NULL;

/*
 * gRPC status codes of etcd's answers that pass by themselves (a leader
 * election, a request timed out, too many requests), unlike a refusal.
 */
#define IDGEN_GRPC_DEADLINE_EXCEEDED 4
#define IDGEN_GRPC_RESOURCE_EXHAUSTED 8
#define IDGEN_GRPC_UNAVAILABLE 14

static void idgen_etcd_config_error(IdgenEtcdResult *res, int sqlstate,
									const char *fmt,...) pg_attribute_printf(3, 4);
static void idgen_etcd_maybe_config_error(IdgenEtcdResult *res, int sqlstate,
										  const char *fmt,...) pg_attribute_printf(3, 4);
static void idgen_etcd_warn_error_va(IdgenEtcdResult *res, bool config,
									 int sqlstate, const char *fmt,
									 va_list args) pg_attribute_printf(4, 0);

static size_t
idgen_etcd_collect(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	StringInfo	buf = userdata;
	size_t		n = size * nmemb;

	/* returning less than n makes libcurl fail the transfer */
	if (buf->len + n > IDGEN_ETCD_MAX_RESPONSE)
		return 0;
	appendBinaryStringInfo(buf, ptr, (int) n);
	return n;
}

#endif							/* !IDGEN_WITHOUT_LIBCURL */

/*
 * The deepest nesting of a text we parse.  etcd's answers nest a few
 * levels (a transaction's responses, a range's key-values); PostgreSQL's
 * JSON parser recurses once a level, and its check_stack_depth() raises
 * if the stack runs short, so the nesting is counted before it runs.
 */
#define IDGEN_JSON_MAX_DEPTH 64

/*
 * The most digits a number may have before or after its point, and the
 * largest exponent.  Within them numeric_in takes every number (it
 * refuses exponents beyond 1,000 on PostgreSQL 15, and more than 16,383
 * digits after the point on any version); etcd sends nothing near them.
 */
#define IDGEN_JSON_MAX_NUMBER_DIGITS 1000

/* what the number check found: the first number jsonb would refuse */
typedef struct IdgenJsonCheck
{
	const char *problem;
} IdgenJsonCheck;

/* Does a JSON number (the lexer has checked its syntax) fit the limits? */
static bool
idgen_json_number_fits(const char *p)
{
	int			digits;
	int			exponent = 0;

	if (*p == '-')
		p++;
	for (digits = 0; isdigit((unsigned char) *p); p++)
		if (++digits > IDGEN_JSON_MAX_NUMBER_DIGITS)
			return false;
	if (*p == '.')
		for (p++, digits = 0; isdigit((unsigned char) *p); p++)
			if (++digits > IDGEN_JSON_MAX_NUMBER_DIGITS)
				return false;
	if (*p == 'e' || *p == 'E')
	{
		p++;
		if (*p == '+' || *p == '-')
			p++;
		for (; isdigit((unsigned char) *p); p++)
		{
			exponent = exponent * 10 + (*p - '0');
			if (exponent > IDGEN_JSON_MAX_NUMBER_DIGITS)
				return false;
		}
	}
	return true;
}

static IDGEN_JSON_ACTION
idgen_json_check_scalar(void *state, char *token, JsonTokenType tokentype)
{
	IdgenJsonCheck *check = state;

	if (tokentype == JSON_TOKEN_NUMBER && check->problem == NULL &&
		!idgen_json_number_fits(token))
		check->problem = psprintf("a number has more than %d digits before or after its point, or an exponent beyond %d",
								  IDGEN_JSON_MAX_NUMBER_DIGITS,
								  IDGEN_JSON_MAX_NUMBER_DIGITS);
	return IDGEN_JSON_ACTION_DONE;
}

/*
 * What would keep a text from becoming jsonb, or NULL if nothing would:
 * the checks that come before PostgreSQL's JSON parser may run on it (its
 * length, its nesting, and, on PostgreSQL 15, whose lexer raises for them
 * in a database that is not UTF8, \u escapes of characters beyond ASCII:
 * refused everywhere, for one behaviour), the parser's own verdict, then
 * the numbers jsonb's numeric_in would refuse.  The parser lexes as
 * jsonb_in does (de-escaping, in the database's encoding), so that a text
 * passed is one jsonb_in accepts without raising.
 */
static const char *
idgen_json_refusal(const char *text)
{
	size_t		len = strlen(text);
	bool		utf8 = GetDatabaseEncoding() == PG_UTF8;
	bool		in_string = false;
	int			depth = 0;
	JsonLexContext *lex;
	JsonSemAction sem;
	IdgenJsonCheck check = {NULL};
	JsonParseErrorType result;

	if (len > IDGEN_ETCD_MAX_RESPONSE)
		return psprintf("it is longer than %d bytes", IDGEN_ETCD_MAX_RESPONSE);
	for (const char *p = text; *p != '\0'; p++)
	{
		if (in_string)
		{
			if (*p == '"')
				in_string = false;
			else if (*p == '\\' && p[1] != '\0')
			{
				p++;
				/* \u00XY with X at most 7 is ASCII; the lexer checks the rest */
				if (*p == 'u' && !utf8 &&
					!(p[1] == '0' && p[2] == '0' && p[3] >= '0' && p[3] <= '7'))
					return "a \\u escape stands for a character beyond ASCII in a database whose encoding is not UTF8";
			}
		}
		else if (*p == '"')
			in_string = true;
		else if (*p == '[' || *p == '{')
		{
			if (++depth > IDGEN_JSON_MAX_DEPTH)
				return psprintf("it nests deeper than %d levels", IDGEN_JSON_MAX_DEPTH);
		}
		else if (*p == ']' || *p == '}')
			depth--;
	}

	lex = idgen_json_lex_context(text, (int) len, GetDatabaseEncoding());
	memset(&sem, 0, sizeof(sem));
	sem.semstate = &check;
	sem.scalar = idgen_json_check_scalar;
	result = pg_parse_json(lex, &sem);
	if (result != JSON_SUCCESS)
		return json_errdetail(result, lex);
	return check.problem;
}

/*
 * Parse with jsonb's input function; NULL, and the reason noted in res,
 * for a text that is not JSON or that jsonb would refuse.
 * The text is checked first (idgen_json_refusal), so that jsonb_in raises
 * nothing: the keeper reads answers outside any transaction, where an
 * ERROR caught without a subtransaction would leave unknown state behind.
 */
Jsonb *
idgen_etcd_parse(const char *text, const char *url, IdgenEtcdResult *res)
{
	const char *problem = idgen_json_refusal(text);

	if (problem != NULL)
	{
		IDGEN_ETCD_FAIL(res, "%s: the answer is not JSON: %s", url, problem);
		return NULL;
	}
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
}

bool
idgen_json_get(JsonbContainer *c, const char *key, JsonbValue *v)
{
	return c != NULL && JsonContainerIsObject(c) &&
		getKeyJsonValueFromContainer(c, key, strlen(key), v) != NULL;
}

JsonbContainer *
idgen_json_container(JsonbContainer *c, const char *key)
{
	JsonbValue	v;

	if (!idgen_json_get(c, key, &v) || v.type != jbvBinary)
		return NULL;
	return v.val.binary.data;
}

JsonbContainer *
idgen_json_element(JsonbContainer *array, uint32 i)
{
	JsonbValue *v;

	if (array == NULL || !JsonContainerIsArray(array))
		return NULL;
	v = getIthJsonbValueFromContainer(array, i);
	if (v == NULL || v->type != jbvBinary)
		return NULL;
	return v->val.binary.data;
}

char *
idgen_json_string(JsonbContainer *c, const char *key)
{
	JsonbValue	v;

	if (!idgen_json_get(c, key, &v) || v.type != jbvString)
		return NULL;
	return pnstrdup(v.val.string.val, v.val.string.len);
}

/*
 * A JSON number as int64, without throwing (numeric_int8 would, on a value
 * out of range): false unless it is a whole number that fits.
 */
bool
idgen_json_numeric_int64(JsonbValue *v, int64 *out)
{
	char	   *text = DatumGetCString(DirectFunctionCall1(numeric_out,
														   NumericGetDatum(v->val.numeric)));
	char	   *end;

	errno = 0;
	*out = strtoi64(text, &end, 10);
	return errno == 0 && *end == '\0' && end != text;
}

/* etcd sends 64-bit integers as strings; our own values are numbers */
bool
idgen_json_int64(JsonbContainer *c, const char *key, int64 *out)
{
	JsonbValue	v;
	char	   *end;

	if (!idgen_json_get(c, key, &v))
		return false;
	if (v.type == jbvNumeric)
		return idgen_json_numeric_int64(&v, out);
	if (v.type != jbvString || v.val.string.len == 0)
		return false;
	errno = 0;
	*out = strtoi64(pnstrdup(v.val.string.val, v.val.string.len), &end, 10);
	return errno == 0 && *end == '\0';
}

/* etcd's error message in an answer: top level, or a stream's "error" */
char *
idgen_etcd_message(JsonbContainer *answer)
{
	char	   *message = idgen_json_string(answer, "message");

	if (message == NULL)
		message = idgen_json_string(idgen_json_container(answer, "error"), "message");
	return message;
}

char *
idgen_base64(const char *data)
{
	int			len = strlen(data);
	int			size = pg_b64_enc_len(len) + 1;
	char	   *out = palloc(size);
	int			n = pg_b64_encode((void *) data, len, out, size);

	if (n < 0)
		elog(ERROR, "could not encode to base64");
	out[n] = '\0';
	return out;
}

char *
idgen_unbase64(const char *data)
{
	int			len = strlen(data);
	int			size = pg_b64_dec_len(len) + 1;
	char	   *out = palloc(size);
	int			n = pg_b64_decode(data, len, (void *) out, size);

	if (n < 0)
		return NULL;
	out[n] = '\0';
	return out;
}

#ifndef IDGEN_WITHOUT_LIBCURL

/*
 * Note the request's error in res and log it as a WARNING, once per kind
 * of error (its format) until a request succeeds again, not at every retry.
 * "config" says whether it is one of configuration, which only the server's
 * administrator can correct (res->config); otherwise it is
 * logged all the same, since it likely names a setting, but generators go
 * on saying that a retry may succeed.  Never given a secret.
 */
static void
idgen_etcd_warn_error_va(IdgenEtcdResult *res, bool config, int sqlstate,
						 const char *fmt, va_list args)
{
	vsnprintf(res->message, sizeof(res->message), fmt, args);
	res->config = config;
	if (config_error_logged == fmt)
		return;
	config_error_logged = fmt;
	ereport(WARNING,
			(errcode(sqlstate),
			 errmsg("idgen keeper: %s", res->message)));
}

/* A configuration error: like IDGEN_ETCD_FAIL, but someone must fix it. */
static void
idgen_etcd_config_error(IdgenEtcdResult *res, int sqlstate, const char *fmt,...)
{
	va_list		args;

	va_start(args, fmt);
	idgen_etcd_warn_error_va(res, true, sqlstate, fmt, args);
	va_end(args);
}

/*
 * An error that may be one of configuration or may pass by itself (libcurl
 * cannot tell): logged as a WARNING naming the likely setting, but not a
 * configuration error.
 */
static void
idgen_etcd_maybe_config_error(IdgenEtcdResult *res, int sqlstate,
							  const char *fmt,...)
{
	va_list		args;

	va_start(args, fmt);
	idgen_etcd_warn_error_va(res, false, sqlstate, fmt, args);
	va_end(args);
}

/*
 * A transfer that failed: say which setting is at fault where libcurl's
 * code tells (TLS verification, the certificate files), so that the lease
 * status and the log name what to correct.
 */
static void
idgen_etcd_transport_error(const char *url, CURLcode rc, IdgenEtcdResult *res)
{
	const char *why = curl_errbuf[0] ? curl_errbuf : curl_easy_strerror(rc);

	switch (rc)
	{
		case CURLE_PEER_FAILED_VERIFICATION:
			idgen_etcd_config_error(res, ERRCODE_CONFIG_FILE_ERROR,
									"%s: etcd's certificate does not verify with \"idgen.lease_ca_file\": %s",
									url, why);
			return;
		case CURLE_SSL_CACERT_BADFILE:
			idgen_etcd_config_error(res, ERRCODE_CONFIG_FILE_ERROR,
									"could not use \"idgen.lease_ca_file\": %s", why);
			return;
		case CURLE_SSL_CERTPROBLEM:
			idgen_etcd_config_error(res, ERRCODE_CONFIG_FILE_ERROR,
									"could not use \"idgen.lease_cert_file\" and \"idgen.lease_key_file\": %s",
									why);
			return;
		case CURLE_SSL_CONNECT_ERROR:
		case CURLE_SEND_ERROR:
		case CURLE_RECV_ERROR:
		case CURLE_GOT_NOTHING:

			/*
			 * etcd refuses a client certificate by closing the connection,
			 * with a TLS alert or not, during the handshake or, under TLS 1.3
			 * (the server checks the certificate after the client's side of
			 * the handshake is done), at the first read or write.  libcurl
			 * cannot tell that from a connection lost otherwise (an etcd
			 * member killed or restarted, a reset connection), so name the
			 * certificate as the likely cause, but do not call it one of
			 * configuration: generators keep saying that a retry may succeed.
			 */
			if (pg_strncasecmp(url, "https://", 8) == 0)
			{
				idgen_etcd_maybe_config_error(res, ERRCODE_CONFIG_FILE_ERROR,
											  "%s: etcd closed the TLS connection; check that etcd trusts \"idgen.lease_cert_file\": %s",
											  url, why);
				return;
			}
			break;
		default:
			break;
	}
	IDGEN_ETCD_FAIL(res, "%s: %s", url, why);
}

/* Forget etcd's token: the next request authenticates again. */
static void
idgen_etcd_forget_token(void)
{
	if (auth_token != NULL)
	{
		explicit_bzero(auth_token, strlen(auth_token));
		pfree(auth_token);
	}
	auth_token = NULL;
	if (auth_settings != NULL)
		pfree(auth_settings);
	auth_settings = NULL;
}

/*
 * Read the password from idgen.lease_password_file into buf: its first
 * line.  The file must be the server's user's and not readable by group or
 * others (0640 is allowed when root owns it), the rule the server applies
 * to ssl_key_file.  False, with res naming the setting, if not.
 */
static bool
idgen_lease_read_password(char *buf, size_t size, IdgenEtcdResult *res)
{
	const char *path = idgen_lease_password_file;
	struct stat st;
	int			fd;
	ssize_t		n;
	int			save_errno;

	if (path[0] == '\0')
	{
		idgen_etcd_config_error(res, ERRCODE_CONFIG_FILE_ERROR,
								"\"idgen.lease_user\" is set but \"idgen.lease_password_file\" is empty");
		return false;
	}
	fd = open(path, O_RDONLY | PG_BINARY, 0);
	if (fd < 0 || fstat(fd, &st) < 0)
	{
		idgen_etcd_config_error(res, ERRCODE_CONFIG_FILE_ERROR,
								"could not read \"idgen.lease_password_file\" \"%s\": %m", path);
		if (fd >= 0)
			close(fd);
		return false;
	}
	if (!S_ISREG(st.st_mode) ||
		(st.st_uid == geteuid() && (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) ||
		(st.st_uid == 0 && (st.st_mode & (S_IWGRP | S_IXGRP | S_IRWXO)) != 0) ||
		(st.st_uid != geteuid() && st.st_uid != 0))
	{
		close(fd);
		idgen_etcd_config_error(res, ERRCODE_CONFIG_FILE_ERROR,
								"\"idgen.lease_password_file\" \"%s\" must be a file of the database user with permissions u=rw (0600) or less, or of root with u=rw,g=r (0640) or less",
								path);
		return false;
	}
	n = read(fd, buf, size - 1);
	save_errno = errno;
	close(fd);
	if (n < 0)
	{
		errno = save_errno;
		idgen_etcd_config_error(res, ERRCODE_CONFIG_FILE_ERROR,
								"could not read \"idgen.lease_password_file\" \"%s\": %m", path);
		return false;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return true;
}

/*
 * One POST to url, with etcd's token if we have one.  The answer's text is
 * appended to body; false, with res set, if no HTTP answer came.
 */
static bool
idgen_etcd_post(const char *url, const char *request, long timeout_ms,
				StringInfo body, long *status, IdgenEtcdResult *res)
{
	struct curl_slist *headers = NULL;
	CURLcode	rc;

	*status = 0;
	headers = curl_slist_append(headers, "Content-Type: application/json");
	if (auth_token != NULL && auth_token[0] != '\0')
	{
		/* etcd's gateway passes this header on as the gRPC token */
		char	   *auth = psprintf("Authorization: %s", auth_token);

		headers = curl_slist_append(headers, auth);
		explicit_bzero(auth, strlen(auth));
		pfree(auth);
	}
	curl_easy_reset(curl);
	curl_easy_setopt(curl, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS, (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	/* straight to etcd, whatever proxy the environment names */
	curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	/* as over http://: one request at a time needs nothing of HTTP/2 */
	curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, (long) CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_errbuf);

	/*
	 * TLS, read at every request so that a reload takes effect at once:
	 * libcurl does not reuse a connection made under other TLS settings.
	 * Verification of the server's certificate and name stays on, always.
	 */
	if (idgen_lease_ca_file[0] != '\0')
		curl_easy_setopt(curl, CURLOPT_CAINFO, idgen_lease_ca_file);
	if (idgen_lease_cert_file[0] != '\0')
		curl_easy_setopt(curl, CURLOPT_SSLCERT, idgen_lease_cert_file);
	if (idgen_lease_key_file[0] != '\0')
		curl_easy_setopt(curl, CURLOPT_SSLKEY, idgen_lease_key_file);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, idgen_etcd_collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
	curl_errbuf[0] = '\0';
	rc = curl_easy_perform(curl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
	/* the token is in the header list: libcurl keeps no copy of it */
	curl_slist_free_all(headers);
	if (rc != CURLE_OK)
	{
		idgen_etcd_transport_error(url, rc, res);
		return false;
	}
	return true;
}

/*
 * An answer that is not etcd's JSON: the gateway's own refusals are plain
 * text.  Note it, and name the client certificate where etcd's words point
 * at it.  A refusal of the request itself (4xx: plain HTTP to a TLS port,
 * a URL that is not etcd's gateway) is one of configuration; a server's
 * failure (5xx), a timeout or too many requests passes.  False if the
 * answer may be JSON.
 */
static bool
idgen_etcd_plain_refusal(const char *url, long status, StringInfo body,
						 IdgenEtcdResult *res)
{
	if (status == 200 || (body->len > 0 && body->data[0] == '{'))
		return false;
	body->data[strcspn(body->data, "\r\n")] = '\0';
	if (strstr(body->data, "CommonName") != NULL)
		idgen_etcd_config_error(res, ERRCODE_CONFIG_FILE_ERROR,
								"%s: etcd's JSON gateway refuses a client certificate with a Common Name; \"idgen.lease_cert_file\" needs one without: %s",
								url, body->data);
	else if (status >= 400 && status < 500 && status != 408 && status != 429)
		idgen_etcd_config_error(res, ERRCODE_CONFIG_FILE_ERROR,
								"%s: HTTP status %ld: %.100s; check that \"idgen.lease_endpoints\" names etcd's client URLs, with https:// where etcd serves TLS",
								url, status, body->data);
	else
		IDGEN_ETCD_FAIL(res, "%s: HTTP status %ld: %.100s", url, status, body->data);
	return true;
}

/*
 * With idgen.lease_user set, get a token from etcd at base (an endpoint):
 * POST /v3/auth/authenticate with the user and the password, which is
 * read from its file now and wiped from memory after the request.  Only
 * the key "idgen.lease_user" and the file's name appear in errors, never
 * the password.  True once auth_token is set ("" if etcd has
 * authentication off: no token is needed).
 */
static bool
idgen_etcd_authenticate(const char *base, long timeout_ms, IdgenEtcdResult *res)
{
	char		password[1024];
	char	   *url = psprintf("%s/v3/auth/authenticate", base);
	StringInfoData request;
	StringInfoData body;
	long		status;
	Jsonb	   *answer;
	char	   *token;
	char	   *message;
	int64		grpc_code = 0;
	bool		sent;

	if (!idgen_lease_read_password(password, sizeof(password), res))
		return false;
	initStringInfo(&request);
	appendStringInfoString(&request, "{\"name\": ");
	escape_json(&request, idgen_lease_user);
	appendStringInfoString(&request, ", \"password\": ");
	escape_json(&request, password);
	appendStringInfoChar(&request, '}');
	explicit_bzero(password, sizeof(password));

	initStringInfo(&body);
	sent = idgen_etcd_post(url, request.data, timeout_ms, &body, &status, res);
	explicit_bzero(request.data, request.maxlen);
	pfree(request.data);
	if (!sent || idgen_etcd_plain_refusal(url, status, &body, res))
		return false;

	answer = idgen_etcd_parse(body.data, url, res);
	if (answer == NULL)
		return false;
	message = idgen_etcd_message(&answer->root);
	token = idgen_json_string(&answer->root, "token");
	explicit_bzero(body.data, body.maxlen);
	/* the token goes into a header line: it must not end it */
	if (status == 200 && token != NULL && message == NULL &&
		strpbrk(token, "\r\n") == NULL)
	{
		auth_token = MemoryContextStrdup(TopMemoryContext, token);
		explicit_bzero(token, strlen(token));
		return true;
	}
	if (message != NULL && strstr(message, "authentication is not enabled") != NULL)
	{
		auth_token = MemoryContextStrdup(TopMemoryContext, "");
		return true;
	}
	(void) idgen_json_int64(&answer->root, "code", &grpc_code);
	if (message != NULL && strstr(message, "invalid user ID or password") != NULL)
		idgen_etcd_config_error(res, ERRCODE_INVALID_PASSWORD,
								"%s: etcd refused \"idgen.lease_user\" \"%s\" with the password in \"idgen.lease_password_file\": %s",
								base, idgen_lease_user, message);
	else if (status >= 500 || grpc_code == IDGEN_GRPC_DEADLINE_EXCEEDED ||
			 grpc_code == IDGEN_GRPC_RESOURCE_EXHAUSTED ||
			 grpc_code == IDGEN_GRPC_UNAVAILABLE)
		IDGEN_ETCD_FAIL(res, "%s: etcd could not authenticate \"idgen.lease_user\" \"%s\" now: HTTP status %ld: %s",
						base, idgen_lease_user, status,
						message ? message : "no message");
	else
		idgen_etcd_config_error(res, ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION,
								"%s: could not authenticate to etcd as \"idgen.lease_user\" \"%s\": HTTP status %ld: %s",
								base, idgen_lease_user, status,
								message ? message : "no message");
	return false;
}

/*
 * POST a request to etcd's JSON gateway, trying each endpoint once,
 * starting with the one that answered last, within timeout_ms in all.
 * Returns the parsed answer, or NULL with res set.
 *
 * With idgen.lease_user set, a token is obtained first and sent with every
 * request.  As etcd's own client does, a request refused because the
 * token expired or the users and roles changed since it was issued
 * ("invalid auth token", "revision of auth store is old") authenticates
 * again and is sent once more: etcd refused it before applying anything.
 */
JsonbContainer *
idgen_etcd_call(const char *path, const char *request, int64 timeout_ms,
				IdgenEtcdResult *res)
{
	int			n = list_length(endpoints);
	long		per_try = (long) Max(50, timeout_ms / Max(n, 1));
	char	   *settings;

	/* a token is for the user and password file it was obtained with */
	settings = psprintf("%s\n%s", idgen_lease_user, idgen_lease_password_file);
	if (auth_settings != NULL && strcmp(auth_settings, settings) != 0)
		idgen_etcd_forget_token();

	for (int attempt = 0; attempt < n; attempt++)
	{
		int			e = (endpoint_next + attempt) % n;
		const char *base = (char *) list_nth(endpoints, e);
		char	   *url = psprintf("%s%s", base, path);

		for (int round = 0; round < 2; round++)
		{
			StringInfoData body;
			long		status = 0;
			Jsonb	   *answer;
			char	   *message;

			if (idgen_lease_user[0] != '\0' && auth_token == NULL)
			{
				if (!idgen_etcd_authenticate(base, Max(per_try, IDGEN_ETCD_AUTH_TIMEOUT_MS),
											 res))
					break;
				auth_settings = MemoryContextStrdup(TopMemoryContext, settings);
			}
			else if (idgen_lease_user[0] == '\0' && auth_token != NULL)
				idgen_etcd_forget_token();

			initStringInfo(&body);
			if (!idgen_etcd_post(url, request, per_try, &body, &status, res))
				break;

			if (idgen_etcd_plain_refusal(url, status, &body, res))
				break;
			answer = idgen_etcd_parse(body.data, url, res);
			if (answer == NULL)
				break;
			message = idgen_etcd_message(&answer->root);
			if (status == 200 && message == NULL)
			{
				endpoint_next = e;
				config_error_logged = NULL;
				return &answer->root;
			}
			if (message != NULL && round == 0 && idgen_lease_user[0] != '\0' &&
				(strstr(message, "invalid auth token") != NULL ||
				 strstr(message, "revision of auth store is old") != NULL ||
				 strstr(message, "user name is empty") != NULL))
			{
				idgen_etcd_forget_token();
				continue;
			}
			if (message != NULL && strstr(message, "user name is empty") != NULL)
				idgen_etcd_config_error(res, ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION,
										"%s: etcd requires authentication: set \"idgen.lease_user\" and \"idgen.lease_password_file\": %s",
										url, message);
			else if (message != NULL && strstr(message, "permission denied") != NULL)
				idgen_etcd_config_error(res, ERRCODE_INSUFFICIENT_PRIVILEGE,
										"%s: etcd denied \"idgen.lease_user\" \"%s\" (it needs a role with readwrite on \"idgen.lease_prefix\"): %s",
										url, idgen_lease_user, message);
			else
				IDGEN_ETCD_FAIL(res, "%s: HTTP status %ld: %s", url, status,
								message ? message : "no message");
			break;
		}
	}
	return NULL;
}

/*
 * Set up libcurl and the endpoint list, once per keeper (the setting is
 * fixed at server start).  Returns false, throwing nothing, if it cannot:
 * the exit path calls it too.
 */
bool
idgen_lease_connect(void)
{
	MemoryContext old;

	if (curl != NULL)
		return true;
	old = MemoryContextSwitchTo(TopMemoryContext);
	if (endpoints == NIL &&
		!SplitGUCList(pstrdup(idgen_lease_endpoints), ',', &endpoints))
		endpoints = NIL;
	if (endpoints != NIL && curl_global_init(CURL_GLOBAL_DEFAULT) == 0)
		curl = curl_easy_init();
	MemoryContextSwitchTo(old);
	return curl != NULL;
}

#else							/* IDGEN_WITHOUT_LIBCURL */

/*
 * Built without libcurl: no lease can be configured (the check of
 * idgen.lease_endpoints refuses one), so the keeper never gets here; if it
 * did, it would find etcd unreachable and issue nothing under a lease (and
 * the keeper's error for a connection it cannot set up says why).
 */
bool
idgen_lease_connect(void)
{
	return false;
}

JsonbContainer *
idgen_etcd_call(const char *path, const char *request, int64 timeout_ms,
				IdgenEtcdResult *res)
{
	IDGEN_ETCD_FAIL(res, "idgen was built without libcurl");
	return NULL;
}

#endif							/* IDGEN_WITHOUT_LIBCURL */
