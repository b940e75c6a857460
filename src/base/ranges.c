/*-------------------------------------------------------------------------
 *
 * base/ranges.c
 *	  Lists of numbers and ranges, such as "0-4095, 5000".
 *
 * idgen.shards (the instagram shards a server owns) and a counter's
 * "owned" option (its stripes) are written the same way, and read by this
 * one parser: numbers and ranges lo-hi separated by commas, blanks allowed
 * around each, an empty list naming nothing.  The callers say what is
 * wrong in their own words, from the problem returned.
 *
 * That is how the base layer's parsers report: the layout and counter
 * parsers fill an IdgenProblem (idgen.h) instead of raising, so that the
 * keeper and the check hooks can refuse a value without an ERROR, and
 * idgen_raise_problem, here, raises one for the SQL functions.
 *
 * No shared state; no error raised but by idgen_raise_problem.
 *
 * IDENTIFICATION
 *	  src/base/ranges.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "idgen.h"

/*
 * Parse text into member[0..max], each number listed set to true and every
 * other one to false.  Returns IDGEN_RANGES_OK, or the first problem met:
 * text that is not a list (IDGEN_RANGES_SYNTAX), a range without its end
 * (IDGEN_RANGES_HALF), a number above max (IDGEN_RANGES_TOO_HIGH), or a
 * range that ends below its start (IDGEN_RANGES_BACKWARDS).  member is
 * then partly set.
 */
IdgenRangesProblem
idgen_parse_ranges(const char *text, int max, bool *member)
{
	const char *p = text;

	memset(member, 0, sizeof(bool) * (max + 1));
	for (;;)
	{
		long		lo;
		long		hi;
		char	   *end;

		while (isspace((unsigned char) *p))
			p++;
		if (*p == '\0')
			return IDGEN_RANGES_OK;
		if (!isdigit((unsigned char) *p))
			return IDGEN_RANGES_SYNTAX;
		lo = hi = strtol(p, &end, 10);
		p = end;
		while (isspace((unsigned char) *p))
			p++;
		if (*p == '-')
		{
			p++;
			while (isspace((unsigned char) *p))
				p++;
			if (!isdigit((unsigned char) *p))
				return IDGEN_RANGES_HALF;
			hi = strtol(p, &end, 10);
			p = end;
		}
		if (lo > max || hi > max)
			return IDGEN_RANGES_TOO_HIGH;
		if (lo > hi)
			return IDGEN_RANGES_BACKWARDS;
		for (long n = lo; n <= hi; n++)
			member[n] = true;
		while (isspace((unsigned char) *p))
			p++;
		if (*p == ',')
			p++;
		else if (*p != '\0')
			return IDGEN_RANGES_SYNTAX;
	}
}

/*
 * Raise a parser's problem as the ERROR it describes, with its SQLSTATE,
 * message, detail and hint.
 */
void
idgen_raise_problem(const IdgenProblem *problem)
{
	ereport(ERROR,
			(errcode(problem->sqlstate),
			 errmsg_internal("%s", problem->message),
			 problem->detail ? errdetail_internal("%s", problem->detail) : 0,
			 problem->hint ? errhint("%s", problem->hint) : 0));
	pg_unreachable();
}
