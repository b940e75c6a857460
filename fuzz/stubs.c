/*-------------------------------------------------------------------------
 *
 * stubs.c
 *	  The backend functions idgen's parsers call, for the fuzz targets.
 *
 * Enough of palloc, ereport/elog, StringInfo, text and printf for the
 * base-layer files to run outside a server.  The parsers raise nothing;
 * an ERROR of the code that does by design longjmps to the caller's
 * FUZZ_TRY (fuzz.h); an ERROR with no FUZZ_TRY around it, a FATAL or a
 * PANIC aborts.  No error state is kept beyond the last SQLSTATE and
 * message: nothing compiled here catches an ERROR (PG_TRY), copies or
 * flushes it.  Functions the fuzzed paths never reach, but that the
 * compiled files mention, are weak and abort if called, so a target that
 * wanders into one says so instead of silently doing nothing.
 *
 * IDENTIFICATION
 *	  fuzz/stubs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdarg.h>

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "fuzz.h"

/* PostgreSQL's port.h routes these to its own printf; use the C library's. */
#undef vsnprintf
#undef snprintf
#undef vsprintf
#undef sprintf
#undef vfprintf
#undef fprintf
#undef vprintf
#undef printf

MemoryContext CurrentMemoryContext = NULL;	/* palloc here ignores it */
sigjmp_buf *PG_exception_stack = NULL;
int			fuzz_last_sqlstate = 0;
char		fuzz_last_message[1024];

/* ----- printf ----- */

int
pg_vsnprintf(char *str, size_t count, const char *fmt, va_list args)
{
	return vsnprintf(str, count, fmt, args);
}

int
pg_snprintf(char *str, size_t count, const char *fmt,...)
{
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(str, count, fmt, ap);
	va_end(ap);
	return n;
}

int
pg_vsprintf(char *str, const char *fmt, va_list args)
{
	return vsprintf(str, fmt, args);
}

int
pg_sprintf(char *str, const char *fmt,...)
{
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsprintf(str, fmt, ap);
	va_end(ap);
	return n;
}

int
pg_vfprintf(FILE *stream, const char *fmt, va_list args)
{
	return vfprintf(stream, fmt, args);
}

int
pg_fprintf(FILE *stream, const char *fmt,...)
{
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vfprintf(stream, fmt, ap);
	va_end(ap);
	return n;
}

int
pg_printf(const char *fmt,...)
{
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vprintf(fmt, ap);
	va_end(ap);
	return n;
}

/* ----- memory: every chunk on one list, freed by fuzz_reset() ----- */

typedef struct FuzzChunk
{
	struct FuzzChunk *prev;
	struct FuzzChunk *next;
	size_t		size;
	size_t		pad;			/* keeps the data 16-byte aligned */
} FuzzChunk;

static FuzzChunk fuzz_chunks = {&fuzz_chunks, &fuzz_chunks, 0, 0};

static void *
fuzz_alloc(size_t size)
{
	FuzzChunk  *c = malloc(sizeof(FuzzChunk) + (size ? size : 1));

	if (c == NULL)
		abort();
	c->size = size;
	c->next = fuzz_chunks.next;
	c->prev = &fuzz_chunks;
	c->next->prev = c;
	fuzz_chunks.next = c;
	return c + 1;
}

static void
fuzz_unlink(FuzzChunk *c)
{
	c->prev->next = c->next;
	c->next->prev = c->prev;
}

void
fuzz_reset(void)
{
	while (fuzz_chunks.next != &fuzz_chunks)
	{
		FuzzChunk  *c = fuzz_chunks.next;

		fuzz_unlink(c);
		free(c);
	}
}

void *
palloc(Size size)
{
	if (!AllocSizeIsValid(size))
		elog(ERROR, "invalid memory alloc request size %zu", size);
	return fuzz_alloc(size);
}

void *
palloc0(Size size)
{
	void	   *p = palloc(size);

	memset(p, 0, size);
	return p;
}

void *
palloc_extended(Size size, int flags)
{
	void	   *p = fuzz_alloc(size);

	if (flags & MCXT_ALLOC_ZERO)
		memset(p, 0, size);
	return p;
}

void
pfree(void *pointer)
{
	FuzzChunk  *c = (FuzzChunk *) pointer - 1;

	fuzz_unlink(c);
	free(c);
}

void *
repalloc(void *pointer, Size size)
{
	FuzzChunk  *old = (FuzzChunk *) pointer - 1;
	void	   *p;

	if (!AllocSizeIsValid(size))
		elog(ERROR, "invalid memory alloc request size %zu", size);
	p = fuzz_alloc(size);
	memcpy(p, pointer, Min(size, old->size));
	pfree(pointer);
	return p;
}

char *
pstrdup(const char *in)
{
	size_t		len = strlen(in);
	char	   *out = palloc(len + 1);

	memcpy(out, in, len + 1);
	return out;
}

char *
pnstrdup(const char *in, Size len)
{
	char	   *out;

	len = strnlen(in, len);
	out = palloc(len + 1);
	memcpy(out, in, len);
	out[len] = '\0';
	return out;
}

char *
psprintf(const char *fmt,...)
{
	va_list		ap;
	int			n;
	char	   *out;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	out = palloc(n + 1);
	va_start(ap, fmt);
	vsnprintf(out, n + 1, fmt, ap);
	va_end(ap);
	return out;
}

char *
fuzz_cstring(const unsigned char *data, size_t size)
{
	char	   *out;

	if (memchr(data, '\0', size) != NULL)
		return NULL;
	out = palloc(size + 1);
	memcpy(out, data, size);
	out[size] = '\0';
	return out;
}

/* ----- ereport and elog ----- */

static int	fuzz_elevel;

bool
errstart(int elevel, const char *domain)
{
	fuzz_elevel = elevel;
	if (elevel < ERROR)
		return false;			/* nothing below ERROR matters here */
	fuzz_last_sqlstate = ERRCODE_INTERNAL_ERROR;
	fuzz_last_message[0] = '\0';
	return true;
}

bool
errstart_cold(int elevel, const char *domain)
{
	return errstart(elevel, domain);
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	if (fuzz_elevel >= FATAL || PG_exception_stack == NULL)
	{
		fprintf(stderr, "idgen fuzz: unexpected %s at %s:%d (%s): %s\n",
				fuzz_elevel >= FATAL ? "FATAL or PANIC" : "ERROR outside FUZZ_TRY",
				filename, lineno, funcname, fuzz_last_message);
		abort();
	}
	pg_re_throw();
}

void
pg_re_throw(void)
{
	if (PG_exception_stack == NULL)
		abort();
	siglongjmp(*PG_exception_stack, 1);
}

int
errcode(int sqlerrcode)
{
	fuzz_last_sqlstate = sqlerrcode;
	return 0;
}

static int
fuzz_errmsg_va(const char *fmt, va_list ap)
{
	vsnprintf(fuzz_last_message, sizeof(fuzz_last_message), fmt, ap);
	return 0;
}

int
errmsg(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	fuzz_errmsg_va(fmt, ap);
	va_end(ap);
	return 0;
}

int
errmsg_internal(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	fuzz_errmsg_va(fmt, ap);
	va_end(ap);
	return 0;
}

/* Details and hints are formatted, so that a bad format argument shows. */
static int
fuzz_discard_va(const char *fmt, va_list ap)
{
	char		buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	return 0;
}

#define FUZZ_DISCARDING(name) \
int \
name(const char *fmt,...) \
{ \
	va_list		ap; \
	va_start(ap, fmt); \
	fuzz_discard_va(fmt, ap); \
	va_end(ap); \
	return 0; \
}

FUZZ_DISCARDING(errdetail)
FUZZ_DISCARDING(errdetail_internal)
FUZZ_DISCARDING(errdetail_log)
FUZZ_DISCARDING(errhint)

char *
unpack_sql_state(int sql_state)
{
	static char buf[6];

	for (int i = 0; i < 5; i++)
	{
		buf[i] = PGUNSIXBIT(sql_state);
		sql_state >>= 6;
	}
	buf[5] = '\0';
	return buf;
}

void
ExceptionalCondition(const char *conditionName, const char *errorType,
					 const char *fileName, int lineNumber)
{
	fprintf(stderr, "idgen fuzz: %s(\"%s\") failed at %s:%d\n",
			errorType, conditionName, fileName, lineNumber);
	abort();
}

/* ----- StringInfo ----- */

StringInfo
makeStringInfo(void)
{
	StringInfo	res = palloc(sizeof(StringInfoData));

	initStringInfo(res);
	return res;
}

void
initStringInfo(StringInfo str)
{
	str->maxlen = 1024;
	str->data = palloc(str->maxlen);
	resetStringInfo(str);
}

void
resetStringInfo(StringInfo str)
{
	str->data[0] = '\0';
	str->len = 0;
	str->cursor = 0;
}

void
enlargeStringInfo(StringInfo str, int needed)
{
	int			newlen;

	if (needed < 0 || ((Size) needed) >= (MaxAllocSize - (Size) str->len))
		elog(ERROR, "out of memory");
	needed += str->len + 1;
	if (needed <= str->maxlen)
		return;
	newlen = 2 * str->maxlen;
	while (needed > newlen)
		newlen = 2 * newlen;
	str->data = repalloc(str->data, newlen);
	str->maxlen = newlen;
}

void
appendBinaryStringInfo(StringInfo str, const char *data, int datalen)
{
	enlargeStringInfo(str, datalen);
	memcpy(str->data + str->len, data, datalen);
	str->len += datalen;
	str->data[str->len] = '\0';
}

void
appendStringInfoString(StringInfo str, const char *s)
{
	appendBinaryStringInfo(str, s, strlen(s));
}

void
appendStringInfoChar(StringInfo str, char ch)
{
	enlargeStringInfo(str, 1);
	str->data[str->len++] = ch;
	str->data[str->len] = '\0';
}

void
appendStringInfo(StringInfo str, const char *fmt,...)
{
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	enlargeStringInfo(str, n);
	va_start(ap, fmt);
	vsnprintf(str->data + str->len, n + 1, fmt, ap);
	va_end(ap);
	str->len += n;
}

/* ----- text ----- */

struct varlena *
pg_detoast_datum_packed(struct varlena *datum)
{
	/* the targets make plain 4-byte-header texts only */
	if (VARATT_IS_EXTENDED(datum) && !VARATT_IS_SHORT(datum))
		abort();
	return datum;
}

text *
cstring_to_text_with_len(const char *s, int len)
{
	text	   *result = palloc(len + VARHDRSZ);

	SET_VARSIZE(result, len + VARHDRSZ);
	memcpy(VARDATA(result), s, len);
	return result;
}

text *
cstring_to_text(const char *s)
{
	return cstring_to_text_with_len(s, strlen(s));
}

char *
text_to_cstring(const text *t)
{
	int			len = VARSIZE_ANY_EXHDR(t);
	char	   *result = palloc(len + 1);

	memcpy(result, VARDATA_ANY(t), len);
	result[len] = '\0';
	return result;
}

/* As in a UTF8 database (pg_utf_mblen). */
int
pg_mblen(const char *mbstr)
{
	unsigned char c = (unsigned char) *mbstr;

	if ((c & 0x80) == 0)
		return 1;
	if ((c & 0xe0) == 0xc0)
		return 2;
	if ((c & 0xf0) == 0xe0)
		return 3;
	if ((c & 0xf8) == 0xf0)
		return 4;
	return 1;
}

unsigned char
pg_ascii_tolower(unsigned char ch)
{
	return (ch >= 'A' && ch <= 'Z') ? ch + 'a' - 'A' : ch;
}

int
pg_strcasecmp(const char *s1, const char *s2)
{
	return pg_strncasecmp(s1, s2, SIZE_MAX);
}

int
pg_strncasecmp(const char *s1, const char *s2, size_t n)
{
	while (n-- > 0)
	{
		unsigned char ch1 = (unsigned char) *s1++;
		unsigned char ch2 = (unsigned char) *s2++;

		if (ch1 != ch2)
		{
			if (ch1 >= 'A' && ch1 <= 'Z')
				ch1 += 'a' - 'A';
			if (ch2 >= 'A' && ch2 <= 'Z')
				ch2 += 'a' - 'A';
			if (ch1 != ch2)
				return (int) ch1 - (int) ch2;
		}
		if (ch1 == 0)
			break;
	}
	return 0;
}

/* as src/port/strlcpy.c */
size_t
strlcpy(char *dst, const char *src, size_t siz)
{
	size_t		len = strlen(src);

	if (siz > 0)
	{
		size_t		n = Min(len, siz - 1);

		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

/* ----- settings the base layer reads (guc.c defines them in the server) ----- */

/* 2024-01-01 00:00:00+00, idgen.epoch's default; weak, for a target that compiles guc.c */
__attribute__((weak)) int64 idgen_epoch_unix_ms = INT64CONST(1704067200000);
