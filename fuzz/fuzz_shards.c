/*-------------------------------------------------------------------------
 *
 * fuzz_shards.c
 *	  libFuzzer target: the range list of idgen.shards (src/base/guc.c).
 *
 * The parser is static to guc.c, the file the server compiles, so this
 * target compiles that file itself.  The input is the setting's value.  A
 * value the parser refuses must come with a sentence for the error's
 * detail.  A value it accepts sets only shards 0 to 8191, and the
 * canonical list printed here from the bitmap ("0-4095,5000") parses to
 * the same bitmap.  A list of single shards and ranges written out here
 * from the fuzzer's own bitmap parses to that bitmap too, so the parser
 * is checked against an independent reading, not only against itself.
 *
 * IDENTIFICATION
 *	  fuzz/fuzz_shards.c
 *
 *-------------------------------------------------------------------------
 */
#include "../src/base/guc.c"

#include "lib/stringinfo.h"

#include "fuzz.h"

#define NBYTES (IDGEN_INSTAGRAM_NSHARDS / 8)

static bool
has_shard(const uint8 *bitmap, int s)
{
	return (bitmap[s >> 3] >> (s & 7)) & 1;
}

/* The canonical print: ascending ranges, "a-b" or "a", comma-separated. */
static char *
print_shards(const uint8 *bitmap)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int s = 0; s < IDGEN_INSTAGRAM_NSHARDS; s++)
	{
		int			e = s;

		if (!has_shard(bitmap, s))
			continue;
		while (e + 1 < IDGEN_INSTAGRAM_NSHARDS && has_shard(bitmap, e + 1))
			e++;
		appendStringInfo(&buf, "%s%d", buf.len > 0 ? "," : "", s);
		if (e != s)
			appendStringInfo(&buf, "-%d", e);
		s = e;
	}
	return buf.data;
}

static void
check_reparse(const char *what, const char *in, const uint8 *bitmap)
{
	uint8		again[NBYTES];
	const char *problem = idgen_parse_shards(in, again);

	FUZZ_CHECK(problem == NULL, "%s \"%s\" is refused: %s", what, in, problem);
	FUZZ_CHECK(memcmp(again, bitmap, NBYTES) == 0,
			   "%s \"%s\" parses to other shards (\"%s\")", what, in, print_shards(again));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *in;
	uint8		bitmap[NBYTES];
	const char *problem;

	if (size > 4096)
		return -1;

	/* the input's bytes as a bitmap, written as a list by hand */
	if (size > 0)
	{
		uint8		model[NBYTES] = {0};

		memcpy(model, data, Min(size, NBYTES));
		check_reparse("the print of the input's bits", print_shards(model), model);
	}

	in = fuzz_cstring(data, size);
	if (in == NULL)
	{
		fuzz_reset();
		return 0;
	}
	problem = idgen_parse_shards(in, bitmap);
	if (problem != NULL)
		FUZZ_CHECK(problem[0] != '\0', "\"%s\": refused without a reason", in);
	else
	{
		char	   *printed = print_shards(bitmap);

		check_reparse("the print of", printed, bitmap);
		/* an empty list owns nothing, a list of anything owns something */
		FUZZ_CHECK((printed[0] == '\0') == (strspn(in, " \t\n\r\f\v") == strlen(in)),
				   "\"%s\" owns %s", in, printed[0] ? printed : "nothing");
	}
	fuzz_reset();
	return 0;
}
