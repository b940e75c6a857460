/*-------------------------------------------------------------------------
 *
 * fuzz_codec.c
 *	  libFuzzer target: the text forms of IDs, crockford32 and base62
 *	  (src/base/codec.c).
 *
 * The first byte of the input chooses the alphabet (bit 0), how its name
 * is spelled (bit 1: upper case, which must match too) and the mode
 * (bit 2):
 *
 *	encode	the next 16 bytes are two bigints.  A negative one is refused
 *			with 22023; any other encodes to exactly the alphabet's width
 *			in its symbols, decodes back to itself, and two encodings
 *			compare byte by byte as their numbers do.
 *	decode	the rest is text.  Text that does not decode is refused with
 *			22P02; text that does gives a non-negative bigint whose
 *			encoding is the text itself (base62) or the text normalised
 *			as Crockford says: hyphens dropped, upper case, O as 0, I and
 *			L as 1 (crockford32).
 *
 * The SQL functions are called as the server would, through a
 * FunctionCallInfo.
 *
 * IDENTIFICATION
 *	  fuzz/fuzz_codec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "fuzz.h"

extern Datum idgen_to_text(PG_FUNCTION_ARGS);
extern Datum idgen_from_text(PG_FUNCTION_ARGS);

typedef struct FuzzAlphabet
{
	const char *name;
	const char *upper_name;
	const char *symbols;
	int			width;
	bool		crockford;
} FuzzAlphabet;

static const FuzzAlphabet alphabets[] = {
	{"crockford32", "CROCKFORD32", "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 13, true},
	{"base62", "BASE62",
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 11, false},
};

/* Call f(arg, name) as the executor would; the result, or false on ERROR. */
static bool
call2(PGFunction f, Datum arg, const char *name, Datum *result)
{
	LOCAL_FCINFO(fcinfo, 2);
	volatile Datum out = 0;
	bool		ok;

	InitFunctionCallInfoData(*fcinfo, NULL, 2, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = arg;
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value = PointerGetDatum(cstring_to_text(name));
	fcinfo->args[1].isnull = false;
	ok = FUZZ_TRY(out = f(fcinfo));
	if (ok)
		FUZZ_CHECK(!fcinfo->isnull, "a NULL result");
	*result = out;
	return ok;
}

/* Encode id, check the form, decode it back; the form, palloc'd. */
static char *
check_encode(const FuzzAlphabet *a, const char *name, int64 id)
{
	Datum		d;
	char	   *form;
	Datum		back;

	if (!call2(idgen_to_text, Int64GetDatum(id), name, &d))
	{
		FUZZ_CHECK(id < 0 && fuzz_last_sqlstate == ERRCODE_INVALID_PARAMETER_VALUE,
				   "%s: " INT64_FORMAT " refused with %s: %s", a->name, id,
				   unpack_sql_state(fuzz_last_sqlstate), fuzz_last_message);
		return NULL;
	}
	FUZZ_CHECK(id >= 0, "%s: negative " INT64_FORMAT " encoded", a->name, id);
	form = text_to_cstring(DatumGetTextPP(d));
	FUZZ_CHECK(strlen(form) == a->width, "%s: " INT64_FORMAT " is \"%s\", not %d symbols",
			   a->name, id, form, a->width);
	for (int i = 0; form[i]; i++)
		FUZZ_CHECK(strchr(a->symbols, form[i]) != NULL,
				   "%s: " INT64_FORMAT " is \"%s\", outside the alphabet", a->name, id, form);
	FUZZ_CHECK(call2(idgen_from_text, d, name, &back),
			   "%s: \"%s\" does not decode: %s", a->name, form, fuzz_last_message);
	FUZZ_CHECK(DatumGetInt64(back) == id, "%s: " INT64_FORMAT " -> \"%s\" -> " INT64_FORMAT,
			   a->name, id, form, DatumGetInt64(back));
	return form;
}

/* The text Crockford's rules read the same as txt. */
static char *
crockford_normal(const char *txt)
{
	char	   *out = palloc(strlen(txt) + 1);
	char	   *o = out;

	for (const char *p = txt; *p; p++)
	{
		char		c = *p;

		if (c == '-')
			continue;
		if (c >= 'a' && c <= 'z')
			c -= 'a' - 'A';
		if (c == 'O')
			c = '0';
		else if (c == 'I' || c == 'L')
			c = '1';
		*o++ = c;
	}
	*o = '\0';
	return out;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const FuzzAlphabet *a;
	const char *name;

	if (size < 1 || size > 1024)
		return -1;
	a = &alphabets[data[0] & 1];
	name = (data[0] & 2) ? a->upper_name : a->name;

	if (data[0] & 4)
	{
		int64		x = 0,
					y = 0;
		char	   *fx;
		char	   *fy;

		memcpy(&x, data + 1, Min(size - 1, 8));
		if (size > 9)
			memcpy(&y, data + 9, Min(size - 9, 8));
		fx = check_encode(a, name, x);
		fy = check_encode(a, name, y);
		if (fx && fy)
		{
			int			c = strcmp(fx, fy);

			FUZZ_CHECK((c < 0) == (x < y) && (c == 0) == (x == y),
					   "%s: " INT64_FORMAT " \"%s\" and " INT64_FORMAT " \"%s\" sort apart",
					   a->name, x, fx, y, fy);
		}
	}
	else
	{
		char	   *txt = fuzz_cstring(data + 1, size - 1);
		Datum		v;

		if (txt == NULL)
			return -1;
		if (!call2(idgen_from_text, PointerGetDatum(cstring_to_text(txt)), name, &v))
			FUZZ_CHECK(fuzz_last_sqlstate == ERRCODE_INVALID_TEXT_REPRESENTATION,
					   "%s: \"%s\" refused with %s: %s", a->name, txt,
					   unpack_sql_state(fuzz_last_sqlstate), fuzz_last_message);
		else
		{
			char	   *form = check_encode(a, name, DatumGetInt64(v));
			const char *normal = a->crockford ? crockford_normal(txt) : txt;

			FUZZ_CHECK(form != NULL && strcmp(form, normal) == 0,
					   "%s: \"%s\" decodes to " INT64_FORMAT ", which encodes as \"%s\"",
					   a->name, txt, DatumGetInt64(v), form ? form : "(error)");
		}
	}
	fuzz_reset();
	return 0;
}
