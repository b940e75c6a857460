/*-------------------------------------------------------------------------
 *
 * fuzz_counter_owned.c
 *	  libFuzzer target: a counter's options and its "owned" range list
 *	  (src/base/counter.c).
 *
 * The input is a line of numbers, "stripes segment seq_bits start",
 * optionally followed by "|" and fields to put above the counter
 * ("|region:3=5 node:4"), then the owned list as a user writes it
 * ("0-3, 5").  Without the line break there is no owned list (every
 * stripe is owned).  The counter is that of the layout "<fields>
 * seq:<seq_bits>".  Options the parser refuses must be refused without
 * an ERROR, with a problem of SQLSTATE 22023 or 22003, which the raising
 * parser the SQL functions call raises as it is.  Accepted options must be
 * what counter.c promises:
 *
 *	- the owned stripes are ascending, distinct, below "stripes", at
 *	  least one; printed (idgen_counter_options_text) and parsed again
 *	  they are the same, and print the same;
 *	- local value c maps to the value the header's formula gives,
 *	  computed here in 128 bits; values grow with c, lie in owned stripes,
 *	  and the last local value (counter.limit - 1) is the last that fits the
 *	  seq field; "first" is the first local value at or above "start";
 *	- the counter meets itself, and never meets a counter that owns the
 *	  other stripes (the check that refuses two definitions that could
 *	  issue the same ID);
 *	- a decoded ID (idgen_spec_decode_jsonb, as idgen_decode() returns it)
 *	  names each key once, and gives each field its value, so that
 *	  building an ID from it gives the ID back.
 *
 * IDENTIFICATION
 *	  fuzz/fuzz_counter_owned.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/elog.h"
#include "utils/fmgrprotos.h"

#include "idgen.h"
#include "fuzz.h"

typedef unsigned __int128 uint128_t;

/* value(c) by the header's formula, without overflow */
static uint128_t
model_value(const IdgenCounterSpec *counter, uint64 c)
{
	uint64		k = c / (uint64) counter->segment;
	uint128_t	g = (uint128_t) (k / counter->nowned) * (uint64) counter->stripes +
		(uint64) counter->owned[k % counter->nowned];

	return g * (uint64) counter->segment + c % (uint64) counter->segment;
}

/*
 * jsonb_in as the decoder calls it: the text itself, which check_decode
 * reads.  jsonb would keep only the last of two equal keys, hiding the
 * first one's value.
 */
Datum
DirectFunctionCall1Coll(PGFunction func, Oid collation, Datum arg1)
{
	FUZZ_CHECK(func == jsonb_in, "an unexpected DirectFunctionCall1");
	return arg1;
}

static void
check_decode(const char *in, const IdgenSpec *spec, int64 id)
{
	char	   *json = DatumGetCString(idgen_spec_decode_jsonb(spec, id));
	const char *p = json;
	char		keys[IDGEN_MAX_FIELDS + 1][IDGEN_FIELD_NAME_LEN];
	int			nkeys = 0;

	FUZZ_CHECK(*p == '{', "\"%s\": decoded as %s", in, json);
	p++;
	while (*p != '}')
	{
		char		key[IDGEN_FIELD_NAME_LEN];
		unsigned long long value;
		int			n = 0;

		p += strspn(p, ", ");
		FUZZ_CHECK(nkeys <= IDGEN_MAX_FIELDS &&
				   sscanf(p, "\"%31[a-z0-9_]\": %llu%n", key, &value, &n) == 2 &&
				   n > 0,
				   "\"%s\": decoded as %s", in, json);
		p += n;
		for (int k = 0; k < nkeys; k++)
			FUZZ_CHECK(strcmp(keys[k], key) != 0,
					   "\"%s\": ID " INT64_FORMAT " decodes with \"%s\" twice: %s",
					   in, id, key, json);
		strcpy(keys[nkeys++], key);
		for (int i = 0; i < spec->nfields; i++)
			if (strcmp(spec->fields[i].name, key) == 0)
				FUZZ_CHECK(value == idgen_spec_field(spec, i, id),
						   "\"%s\": ID " INT64_FORMAT " decodes field \"%s\" as %llu: %s",
						   in, id, key, value, json);
	}
	FUZZ_CHECK(nkeys >= spec->nfields, "\"%s\": decoded as %s", in, json);
}

static bool
owns_stripe(const IdgenCounterSpec *counter, int32 stripe)
{
	for (int i = 0; i < counter->nowned; i++)
		if (counter->owned[i] == stripe)
			return true;
	return false;
}

static void
check_counter(const char *in, const IdgenSpec *spec, int seq_bits)
{
	const IdgenCounterSpec *counter = &spec->counter;
	uint128_t	range = (uint128_t) 1 << seq_bits;
	uint64		limit = spec->counter.limit;
	uint64		samples[8];
	int			n = 0;

	FUZZ_CHECK(counter->nowned >= 1 && counter->nowned <= counter->stripes,
			   "\"%s\": %d owned of %d", in, counter->nowned, counter->stripes);
	for (int i = 0; i < counter->nowned; i++)
		FUZZ_CHECK(counter->owned[i] >= 0 && counter->owned[i] < counter->stripes &&
				   (i == 0 || counter->owned[i - 1] < counter->owned[i]),
				   "\"%s\": owned[%d] = %d", in, i, counter->owned[i]);

	/* the range of local values */
	FUZZ_CHECK(limit >= 1, "\"%s\": no local value fits", in);
	FUZZ_CHECK(model_value(counter, limit - 1) < range,
			   "\"%s\": local value " UINT64_FORMAT " is beyond the seq field", in, limit - 1);
	FUZZ_CHECK(model_value(counter, limit) >= range,
			   "\"%s\": local value " UINT64_FORMAT " still fits the seq field", in, limit);
	FUZZ_CHECK(counter->first < limit, "\"%s\": first " UINT64_FORMAT " past the limit", in,
			   counter->first);
	FUZZ_CHECK(model_value(counter, counter->first) >= counter->start &&
			   (counter->first == 0 ||
				model_value(counter, counter->first - 1) < counter->start),
			   "\"%s\": first " UINT64_FORMAT " is not the first at or above " UINT64_FORMAT,
			   in, counter->first, counter->start);

	samples[n++] = 0;
	samples[n++] = limit - 1;
	samples[n++] = counter->first;
	samples[n++] = limit / 2;
	samples[n++] = limit / 3;
	samples[n++] = (uint64) counter->segment * counter->nowned - 1;
	samples[n++] = (uint64) counter->segment * counter->nowned;
	samples[n++] = (uint64) counter->segment;
	for (int i = 0; i < n; i++)
	{
		uint64		c = samples[i];
		uint64		v;

		if (c >= limit)
			continue;
		v = idgen_counter_value(counter, c);
		FUZZ_CHECK((uint128_t) v == model_value(counter, c),
				   "\"%s\": value(" UINT64_FORMAT ") = " UINT64_FORMAT ", not the formula's",
				   in, c, v);
		FUZZ_CHECK(owns_stripe(counter, (int32) ((v / (uint64) counter->segment) %
												 (uint64) counter->stripes)),
				   "\"%s\": value " UINT64_FORMAT " in a stripe not owned", in, v);
		if (c + 1 < limit)
			FUZZ_CHECK(idgen_counter_value(counter, c + 1) > v,
					   "\"%s\": value(" UINT64_FORMAT ") does not grow", in, c);
	}

	/* meets itself; never a counter of the other stripes */
	FUZZ_CHECK(idgen_counter_sets_meet(counter, counter, counter->start,
									   (uint64) range),
			   "\"%s\": the counter does not meet itself", in);
	if (counter->nowned < counter->stripes)
	{
		IdgenCounterSpec *other = palloc(sizeof(IdgenCounterSpec));

		*other = *counter;
		other->nowned = 0;
		for (int s = 0; s < counter->stripes; s++)
			if (!owns_stripe(counter, s))
				other->owned[other->nowned++] = s;
		other->start = other->first = 0;
		FUZZ_CHECK(!idgen_counter_sets_meet(counter, other, 0, (uint64) range),
				   "\"%s\": the counter meets the one of the other stripes", in);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *in;
	char	   *owned;
	char	   *fields;
	unsigned int stripes = 0;
	long long	segment = 0;
	unsigned int seq_bits = 20;
	long long	start = 0;
	char	   *layout;
	IdgenSpec  *spec;
	IdgenSpec  *again;
	bool		epoch_given;
	bool		unit_given;
	char	   *printed;
	IdgenProblem problem;

	if (size > 2048)
		return -1;
	in = fuzz_cstring(data, size);
	if (in == NULL)
		return -1;
	owned = strchr(in, '\n');
	if (owned != NULL)
		*owned++ = '\0';
	fields = strchr(in, '|');
	if (fields != NULL)
		*fields++ = '\0';
	sscanf(in, "%u %lld %u %lld", &stripes, &segment, &seq_bits, &start);
	/* a width a counter may have */
	if (seq_bits < 1 || seq_bits > 52)
		seq_bits = 1 + seq_bits % 52;
	layout = psprintf("%s seq:%u", fields ? fields : "", seq_bits);

	spec = palloc(sizeof(IdgenSpec));
	again = palloc(sizeof(IdgenSpec));
	if (!idgen_parse_layout_soft(layout, spec, &epoch_given, &unit_given, &problem) ||
		spec->time_field >= 0 || spec->seq_field != spec->nfields - 1)
	{
		/* the layout grammar is fuzz_layout's; here only counters matter */
		FUZZ_CHECK(fields != NULL, "\"%s\" does not parse", layout);
		fuzz_reset();
		return -1;
	}
	if (!idgen_parse_counter_options_soft(spec, 0, 0, (int32) stripes, owned,
										  (int64) segment, (int64) start, &problem))
	{
		FUZZ_CHECK((problem.sqlstate == ERRCODE_INVALID_PARAMETER_VALUE ||
					problem.sqlstate == ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE) &&
				   problem.message != NULL,
				   "\"%s\" / \"%s\": refused with %s: %s", in, owned ? owned : "",
				   unpack_sql_state(problem.sqlstate),
				   problem.message ? problem.message : "(no message)");
		/* the raising parser the SQL functions call raises that problem */
		*again = *spec;
		FUZZ_CHECK(!FUZZ_TRY(idgen_parse_counter_options(again, 0, 0, (int32) stripes, owned,
														 (int64) segment, (int64) start)) &&
				   fuzz_last_sqlstate == problem.sqlstate &&
				   strncmp(fuzz_last_message, problem.message,
						   sizeof(fuzz_last_message) - 1) == 0,
				   "\"%s\" / \"%s\": refused with \"%s\", but the raising parser says %s: %s",
				   in, owned ? owned : "", problem.message,
				   unpack_sql_state(fuzz_last_sqlstate), fuzz_last_message);
		fuzz_reset();
		return 0;
	}
	check_counter(owned ? owned : in, spec, seq_bits);
	check_decode(layout, spec,
				 (int64) (idgen_counter_value(&spec->counter, spec->counter.limit / 3) |
						  (uint64) idgen_spec_node_value(spec, 5, &epoch_given)));

	/* parse, print, parse */
	printed = idgen_counter_options_text(spec);
	*again = *spec;
	FUZZ_CHECK(idgen_parse_counter_options_soft(again, 0, 0, spec->counter.stripes,
												printed, spec->counter.segment,
												(int64) spec->counter.start, &problem),
			   "\"%s\" prints as \"%s\", which does not parse: %s", owned ? owned : "",
			   printed, problem.message);
	FUZZ_CHECK(again->counter.nowned == spec->counter.nowned &&
			   memcmp(again->counter.owned, spec->counter.owned,
					  sizeof(int32) * spec->counter.nowned) == 0 &&
			   again->counter.limit == spec->counter.limit &&
			   again->counter.first == spec->counter.first,
			   "\"%s\" prints as \"%s\", which parses to other stripes",
			   owned ? owned : "", printed);
	FUZZ_CHECK(strcmp(idgen_counter_options_text(again), printed) == 0,
			   "\"%s\" prints as \"%s\", then as \"%s\"", owned ? owned : "", printed,
			   idgen_counter_options_text(again));

	fuzz_reset();
	return 0;
}
