/*-------------------------------------------------------------------------
 *
 * base/codec.c
 *	  Text forms of IDs for clients that cannot hold a 64-bit integer.
 *
 * JavaScript numbers lose integers above 2^53, so JSON clients want an ID
 * as a string.  idgen_to_text() writes a non-negative bigint in a fixed
 * number of symbols of an alphabet whose symbols are in ascending byte
 * order, so that comparing two encodings byte by byte (COLLATE "C") gives
 * the same order as comparing the numbers; idgen_from_text() is its exact
 * inverse.
 *
 *	crockford32  Douglas Crockford's base 32: 0-9 A-Z without I L O U,
 *				 13 symbols (65 bits) for 63.  Encodes upper case.
 *				 Decoding follows Crockford's spec: case-insensitive, O
 *				 reads as 0, I and L as 1, hyphens are ignored anywhere
 *				 (they do not count towards the 13 symbols).  U and the
 *				 optional check symbols (*~$=U) are not accepted.
 *	base62		 0-9 A-Z a-z, in that (ASCII) order, 11 symbols for 63 bits.
 *				 Case-sensitive; no aliases, no separators.
 *
 * Errors: a negative ID is refused with 22023, as by the decoders (no idgen
 * layout produces one); text that is not exactly one encoded bigint (wrong
 * length, a symbol outside the alphabet, a value beyond 2^63-1) raises
 * 22P02 naming the alphabet; an unknown alphabet raises 22023 listing the
 * known ones.  Alphabet names match case-insensitively, like encode()'s
 * format names.
 *
 * IDENTIFICATION
 *	  src/base/codec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"

#include "idgen.h"

/* widest encoding (crockford32), without terminator */
#define IDGEN_CODEC_MAX_WIDTH	13

typedef struct IdgenAlphabet
{
	const char *name;
	const char *symbols;		/* in ascending byte order; base = strlen */
	int			base;
	int			width;			/* symbols per encoded bigint */
	bool		crockford;		/* case-insensitive, aliases, hyphens */
} IdgenAlphabet;

static const IdgenAlphabet idgen_alphabets[] = {
	{"crockford32", "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 32, 13, true},
	{"base62", "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	62, 11, false},
};

#define IDGEN_NALPHABETS lengthof(idgen_alphabets)

/*
 * Symbol values by byte, one table per alphabet, -1 for bytes that are not
 * symbols.  Filled on first use: a backend is single-threaded.
 */
static int8 idgen_symbol_value[IDGEN_NALPHABETS][256];
static bool idgen_tables_ready = false;

static void
idgen_codec_init_tables(void)
{
	for (int a = 0; a < IDGEN_NALPHABETS; a++)
	{
		const IdgenAlphabet *alpha = &idgen_alphabets[a];

		Assert(strlen(alpha->symbols) == alpha->base);
		memset(idgen_symbol_value[a], -1, 256);
		for (int v = 0; v < alpha->base; v++)
		{
			unsigned char c = (unsigned char) alpha->symbols[v];

			idgen_symbol_value[a][c] = v;
			if (alpha->crockford)
				idgen_symbol_value[a][pg_ascii_tolower(c)] = v;
		}
		if (alpha->crockford)
		{
			/* Crockford's aliases for easily confused letters */
			idgen_symbol_value[a]['O'] = idgen_symbol_value[a]['o'] = 0;
			idgen_symbol_value[a]['I'] = idgen_symbol_value[a]['i'] = 1;
			idgen_symbol_value[a]['L'] = idgen_symbol_value[a]['l'] = 1;
		}
	}
	idgen_tables_ready = true;
}

/* The alphabet named by a text argument, or an error (22023). */
static int
idgen_codec_lookup(text *name)
{
	char	   *cname = text_to_cstring(name);

	for (int a = 0; a < IDGEN_NALPHABETS; a++)
	{
		if (pg_strcasecmp(cname, idgen_alphabets[a].name) == 0)
		{
			if (!idgen_tables_ready)
				idgen_codec_init_tables();
			pfree(cname);
			return a;
		}
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown ID alphabet \"%s\"", cname),
			 errhint("The alphabets are crockford32 (the default) and base62.")));
	pg_unreachable();
}

/* Report text that does not decode (22P02); detail says why. */
static void
idgen_codec_report_bad_text(const IdgenAlphabet *alpha, const char *txt,
							const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for %s ID: \"%s\"", alpha->name, txt),
			 errdetail_internal("%s", detail)));
	pg_unreachable();
}

/*
 * Write v in exactly alpha->width symbols (buf must hold them; no
 * terminator), most significant first: leading zeros keep the width fixed,
 * which is what makes byte order equal numeric order.
 */
static void
idgen_codec_write(const IdgenAlphabet *alpha, uint64 v, char *buf)
{
	for (int i = alpha->width - 1; i >= 0; i--)
	{
		buf[i] = alpha->symbols[v % alpha->base];
		v /= alpha->base;
	}
	Assert(v == 0);
}

PG_FUNCTION_INFO_V1(idgen_to_text);
Datum
idgen_to_text(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	const IdgenAlphabet *alpha = &idgen_alphabets[idgen_codec_lookup(PG_GETARG_TEXT_PP(1))];
	char		buf[IDGEN_CODEC_MAX_WIDTH];

	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ID %lld is negative", (long long) id),
				 errdetail("Only non-negative IDs have a %s form; idgen never issues negative IDs.",
						   alpha->name)));

	idgen_codec_write(alpha, (uint64) id, buf);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(buf, alpha->width));
}

PG_FUNCTION_INFO_V1(idgen_from_text);
Datum
idgen_from_text(PG_FUNCTION_ARGS)
{
	text	   *txt = PG_GETARG_TEXT_PP(0);
	int			a = idgen_codec_lookup(PG_GETARG_TEXT_PP(1));
	const IdgenAlphabet *alpha = &idgen_alphabets[a];
	const char *p = VARDATA_ANY(txt);
	int			len = VARSIZE_ANY_EXHDR(txt);
	int			nsymbols = 0;
	uint64		v = 0;
	bool		overflow = false;

	for (int i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) p[i];
		int			d;

		if (c == '-' && alpha->crockford)
			continue;
		d = idgen_symbol_value[a][c];
		if (d < 0)
		{
			int			clen = pg_mblen(p + i);

			clen = Min(clen, len - i);
			idgen_codec_report_bad_text(alpha, text_to_cstring(txt),
										psprintf("\"%.*s\" is not a %s symbol.",
												 clen, p + i, alpha->name));
		}
		nsymbols++;
		/* keep counting symbols after an overflow: a length error wins */
		if (!overflow)
		{
			if (v > (uint64) (PG_INT64_MAX - d) / alpha->base)
				overflow = true;
			else
				v = v * alpha->base + d;
		}
	}

	if (nsymbols != alpha->width)
		idgen_codec_report_bad_text(alpha, text_to_cstring(txt),
									psprintf(alpha->crockford ?
											 "A %s ID has exactly %d symbols (hyphens not counted), not %d." :
											 "A %s ID has exactly %d symbols, not %d.",
											 alpha->name, alpha->width, nsymbols));
	if (overflow)
	{
		char		max[IDGEN_CODEC_MAX_WIDTH];

		idgen_codec_write(alpha, PG_INT64_MAX, max);
		idgen_codec_report_bad_text(alpha, text_to_cstring(txt),
									psprintf("The value is beyond the bigint range; the largest %s ID is \"%.*s\".",
											 alpha->name, alpha->width, max));
	}

	PG_RETURN_INT64((int64) v);
}
