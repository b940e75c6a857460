/*-------------------------------------------------------------------------
 *
 * fuzz_layout.c
 *	  libFuzzer target: the layout grammar and its presets (src/base/layout.c).
 *
 * The input is a layout as a user writes it ("time:41 node:10 seq:12",
 * "twitter").  A layout the parser refuses must be refused, without an
 * ERROR, with a problem of SQLSTATE 22023, and the raising parser the SQL
 * functions call must raise exactly that problem.
 * A layout it accepts must be what the grammar promises:
 *
 *	- 1 to IDGEN_MAX_FIELDS fields of 1 to 63 bits, unique lower-case
 *	  names, each of the kind its name says; the shifts place the fields
 *	  from the most significant bit down, without overlap or gap, in the
 *	  low "width" bits, width the sum of the bits and at most 64 (63 for a
 *	  counter); a 64-bit layout starts with its time field;
 *	- time before seq, random after both, at most 13 shard bits and 31
 *	  node bits, constants that fit their fields; a counter has a seq field
 *	  of at most 52 bits and no random or shard field;
 *	- the last tick fits the time field without reaching the sign bit,
 *	  and its last position ((tick << seq_bits) | seq) fits 63 bits; a
 *	  counter's last local value maps into its seq field;
 *	- printing it (idgen_spec_text) and parsing the print gives the same
 *	  layout, and printing that gives the same text;
 *	- an ID split into its fields and put together again is the same ID;
 *	  the node id spread over the node fields reads back whole;
 *	- a layout could issue the same IDs as itself (the overlap checks that
 *	  refuse a second definition agree on the trivial case).
 *
 * IDENTIFICATION
 *	  fuzz/fuzz_layout.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "utils/elog.h"

#include "idgen.h"
#include "fuzz.h"

static uint64
fuzz_hash(const uint8_t *data, size_t size)
{
	uint64		h = UINT64CONST(1469598103934665603);

	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * UINT64CONST(1099511628211);
	return h;
}

static uint64
fuzz_low_bits(int bits)
{
	return bits >= 64 ? ~UINT64CONST(0) : (UINT64CONST(1) << bits) - 1;
}

static void
check_fields(const char *text, const IdgenSpec *spec)
{
	uint64		seen = 0;
	int			total = 0;
	int			node_bits = 0;
	int			ntime = 0,
				nseq = 0,
				nshard = 0;

	FUZZ_CHECK(spec->nfields >= 1 && spec->nfields <= IDGEN_MAX_FIELDS,
			   "\"%s\": %d fields", text, spec->nfields);
	for (int i = 0; i < spec->nfields; i++)
		total += spec->fields[i].bits;
	FUZZ_CHECK(spec->width == total && total <= 64,
			   "\"%s\": width %d, fields add up to %d", text, spec->width, total);

	for (int i = 0; i < spec->nfields; i++)
	{
		const IdgenField *f = &spec->fields[i];
		int			len = strnlen(f->name, IDGEN_FIELD_NAME_LEN);
		uint64		mask;

		FUZZ_CHECK(len >= 1 && len < IDGEN_FIELD_NAME_LEN,
				   "\"%s\": field %d's name has %d characters", text, i, len);
		for (int j = 0; j < len; j++)
			FUZZ_CHECK(islower((unsigned char) f->name[j]) || f->name[j] == '_' ||
					   (j > 0 && isdigit((unsigned char) f->name[j])),
					   "\"%s\": field name \"%s\"", text, f->name);
		for (int j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(spec->fields[j].name, f->name) != 0,
					   "\"%s\": field \"%s\" twice", text, f->name);
		FUZZ_CHECK(f->bits >= 1 && f->bits <= 63, "\"%s\": field \"%s\" has %d bits",
				   text, f->name, f->bits);

		/* the kind is the name's */
		if (strcmp(f->name, "time") == 0)
			FUZZ_CHECK(f->kind == IDGEN_FIELD_TIME, "\"%s\": time's kind %d", text, f->kind);
		else if (strcmp(f->name, "seq") == 0)
			FUZZ_CHECK(f->kind == IDGEN_FIELD_SEQ, "\"%s\": seq's kind %d", text, f->kind);
		else if (strcmp(f->name, "shard") == 0)
			FUZZ_CHECK(f->kind == IDGEN_FIELD_SHARD, "\"%s\": shard's kind %d", text, f->kind);
		else if (strcmp(f->name, "random") == 0)
			FUZZ_CHECK(f->kind == IDGEN_FIELD_RANDOM, "\"%s\": random's kind %d", text, f->kind);
		else
			FUZZ_CHECK(f->kind == IDGEN_FIELD_NODE || f->kind == IDGEN_FIELD_CONST,
					   "\"%s\": field \"%s\" has kind %d", text, f->name, f->kind);

		switch (f->kind)
		{
			case IDGEN_FIELD_TIME:
				ntime++;
				FUZZ_CHECK(spec->time_field == i, "\"%s\": time_field %d, not %d",
						   text, spec->time_field, i);
				break;
			case IDGEN_FIELD_SEQ:
				nseq++;
				FUZZ_CHECK(spec->seq_field == i, "\"%s\": seq_field %d, not %d",
						   text, spec->seq_field, i);
				break;
			case IDGEN_FIELD_SHARD:
				nshard++;
				FUZZ_CHECK(spec->shard_field == i && f->bits <= IDGEN_NAMED_MAX_SHARD_BITS,
						   "\"%s\": shard field %d of %d bits", text, spec->shard_field, f->bits);
				break;
			case IDGEN_FIELD_RANDOM:
				FUZZ_CHECK(i > spec->time_field && i > spec->seq_field,
						   "\"%s\": random bits above time or seq", text);
				break;
			case IDGEN_FIELD_NODE:
				node_bits += f->bits;
				break;
			case IDGEN_FIELD_CONST:
				FUZZ_CHECK(f->constant >= 0 &&
						   (uint64) f->constant <= fuzz_low_bits(f->bits),
						   "\"%s\": constant " INT64_FORMAT " in %d bits", text,
						   f->constant, f->bits);
				break;
		}

		/* from the most significant bit down, no overlap, no gap */
		total -= f->bits;
		FUZZ_CHECK(f->shift == total, "\"%s\": field \"%s\" at shift %d, not %d",
				   text, f->name, f->shift, total);
		mask = fuzz_low_bits(f->bits) << f->shift;
		FUZZ_CHECK((seen & mask) == 0, "\"%s\": field \"%s\" overlaps", text, f->name);
		seen |= mask;
	}
	FUZZ_CHECK(seen == fuzz_low_bits(spec->width), "\"%s\": fields leave gaps", text);
	FUZZ_CHECK(ntime == (spec->time_field >= 0) && nseq == (spec->seq_field >= 0) &&
			   nshard == (spec->shard_field >= 0),
			   "\"%s\": time, seq, shard indexes %d %d %d", text,
			   spec->time_field, spec->seq_field, spec->shard_field);
	FUZZ_CHECK(spec->node_bits == node_bits && node_bits <= 31,
			   "\"%s\": node bits %d, fields %d", text, spec->node_bits, node_bits);
	FUZZ_CHECK(spec->seq_field < 0 || spec->time_field < 0 ||
			   spec->time_field < spec->seq_field,
			   "\"%s\": seq above time", text);
	FUZZ_CHECK(spec->width < 64 || spec->time_field == 0,
			   "\"%s\": a 64-bit layout that does not start with time", text);
}

static void
check_range(const char *text, const IdgenSpec *spec)
{
	if (spec->time_field >= 0)
	{
		const IdgenField *t = &spec->fields[spec->time_field];
		int			seq_bits = spec->seq_field < 0 ? 0 : spec->fields[spec->seq_field].bits;
		uint64		last_tick = (uint64) spec->tick_limit - 1;
		uint64		max_id;

		FUZZ_CHECK(spec->tick_limit >= 1, "\"%s\": tick limit " INT64_FORMAT, text,
				   spec->tick_limit);

		/* the last tick fits its field, and the ID it makes is not negative */
		FUZZ_CHECK(last_tick <= fuzz_low_bits(t->bits),
				   "\"%s\": last tick " UINT64_FORMAT " beyond %d bits", text,
				   last_tick, t->bits);
		max_id = (last_tick << t->shift) | fuzz_low_bits(t->shift);
		FUZZ_CHECK(max_id <= (uint64) PG_INT64_MAX,
				   "\"%s\": the last tick's IDs reach the sign bit", text);
		/* a position never wraps (idgen_tick_position) */
		FUZZ_CHECK(last_tick <= ((uint64) PG_INT64_MAX >> seq_bits),
				   "\"%s\": the last tick's position does not fit 63 bits", text);
	}
	else
	{
		int			seq_bits = spec->fields[spec->seq_field].bits;

		FUZZ_CHECK(spec->width <= 63 && seq_bits <= 52 && spec->shard_field < 0,
				   "\"%s\": counter of width %d, seq %d bits", text, spec->width, seq_bits);
		FUZZ_CHECK(spec->counter.limit >= 1 && spec->tick_limit == 0,
				   "\"%s\": counter limit " UINT64_FORMAT ", tick limit " INT64_FORMAT,
				   text, spec->counter.limit, spec->tick_limit);
		FUZZ_CHECK(idgen_counter_value(&spec->counter, spec->counter.limit - 1) <
				   (UINT64CONST(1) << seq_bits),
				   "\"%s\": the last local value does not fit the seq field", text);
	}
}

static void
check_same(const char *text, const IdgenSpec *a, const IdgenSpec *b)
{
	FUZZ_CHECK(a->nfields == b->nfields && a->width == b->width &&
			   a->time_field == b->time_field && a->seq_field == b->seq_field &&
			   a->shard_field == b->shard_field && a->node_bits == b->node_bits,
			   "\"%s\": the print parses to another layout", text);
	for (int i = 0; i < a->nfields; i++)
		FUZZ_CHECK(strcmp(a->fields[i].name, b->fields[i].name) == 0 &&
				   a->fields[i].kind == b->fields[i].kind &&
				   a->fields[i].bits == b->fields[i].bits &&
				   a->fields[i].shift == b->fields[i].shift &&
				   a->fields[i].constant == b->fields[i].constant,
				   "\"%s\": field %d differs after print and parse", text, i);
}

static void
check_bits(const char *text, const IdgenSpec *spec, uint64 seed)
{
	uint64		width_mask = fuzz_low_bits(spec->width);
	uint64		ids[] = {0, (uint64) PG_INT64_MAX, UINT64CONST(0x5555555555555555),
	seed & (uint64) PG_INT64_MAX};
	int32		node_id = (int32) (seed >> 33) & 0x7FFFFFFF;
	uint64		fixed = idgen_spec_fixed_mask(spec, true);
	uint64		node_value;
	bool		fits;
	int64		back = 0;

	for (int k = 0; k < lengthof(ids); k++)
	{
		uint64		id = ids[k] & width_mask & (uint64) PG_INT64_MAX;
		uint64		again = 0;

		for (int i = 0; i < spec->nfields; i++)
		{
			uint64		v = idgen_spec_field(spec, i, (int64) id);

			FUZZ_CHECK(v <= fuzz_low_bits(spec->fields[i].bits),
					   "\"%s\": field %d's value is wider than the field", text, i);
			again |= v << spec->fields[i].shift;
		}
		FUZZ_CHECK(again == id, "\"%s\": ID " UINT64_FORMAT " split and joined is "
				   UINT64_FORMAT, text, id, again);
	}

	/* node ids: small ones fit, and read back from the node fields */
	if (spec->node_bits < 31)
		node_id &= (int32) fuzz_low_bits(spec->node_bits);
	FUZZ_CHECK((fixed & ~width_mask) == 0, "\"%s\": fixed bits beyond the width", text);
	node_value = (uint64) idgen_spec_node_value(spec, node_id, &fits);
	FUZZ_CHECK(fits, "\"%s\": node id %d does not fit %d node bits", text,
			   node_id, spec->node_bits);
	FUZZ_CHECK((node_value & ~fixed) == 0, "\"%s\": node value outside the fixed bits", text);
	for (int i = 0; i < spec->nfields; i++)
	{
		const IdgenField *f = &spec->fields[i];

		if (f->kind == IDGEN_FIELD_NODE)
			back = (back << f->bits) | (int64) idgen_spec_field(spec, i, (int64) node_value);
		else if (f->kind == IDGEN_FIELD_CONST)
			FUZZ_CHECK(idgen_spec_field(spec, i, (int64) node_value) == (uint64) f->constant,
					   "\"%s\": constant field %d not in the node value", text, i);
	}
	FUZZ_CHECK(back == node_id, "\"%s\": node id %d reads back as " INT64_FORMAT,
			   text, node_id, back);

	/* a layout issues the IDs it issues */
	if (spec->time_field >= 0)
		FUZZ_CHECK(idgen_spec_time_overlap(spec, spec, node_id),
				   "\"%s\": a time layout does not overlap itself", text);
	else
		FUZZ_CHECK(idgen_spec_counter_overlap(spec, spec, node_id, PG_UINT64_MAX),
				   "\"%s\": a counter layout does not overlap itself", text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *text;
	IdgenSpec	spec;
	IdgenSpec	again;
	bool		epoch_given;
	bool		unit_given;
	char	   *printed = NULL;
	IdgenProblem problem;

	if (size > 4096)
		return -1;
	text = fuzz_cstring(data, size);
	if (text == NULL)
		return -1;

	if (!idgen_parse_layout_soft(text, &spec, &epoch_given, &unit_given, &problem))
	{
		FUZZ_CHECK(problem.sqlstate == ERRCODE_INVALID_PARAMETER_VALUE &&
				   problem.message != NULL,
				   "\"%s\": refused with SQLSTATE %s: %s", text,
				   unpack_sql_state(problem.sqlstate),
				   problem.message ? problem.message : "(no message)");
		FUZZ_CHECK(!FUZZ_TRY(idgen_parse_layout(text, &again, &epoch_given, &unit_given)) &&
				   fuzz_last_sqlstate == problem.sqlstate &&
				   strncmp(fuzz_last_message, problem.message,
						   sizeof(fuzz_last_message) - 1) == 0,
				   "\"%s\": refused with \"%s\", but the raising parser says %s: %s",
				   text, problem.message, unpack_sql_state(fuzz_last_sqlstate),
				   fuzz_last_message);
		fuzz_reset();
		return 0;
	}

	check_fields(text, &spec);
	check_range(text, &spec);
	FUZZ_CHECK(epoch_given == unit_given && (!epoch_given || strchr(text, ':') == NULL),
			   "\"%s\": a clock given by fields", text);

	/* parse, print, parse: the same layout, and the same print */
	printed = idgen_spec_text(&spec);
	FUZZ_CHECK(idgen_parse_layout_soft(printed, &again, &epoch_given, &unit_given, &problem),
			   "\"%s\" prints as \"%s\", which does not parse: %s", text, printed,
			   problem.message);
	check_same(text, &spec, &again);
	if (strchr(text, ':') != NULL)
		FUZZ_CHECK(again.tick_limit == spec.tick_limit &&
				   (spec.time_field >= 0 || again.counter.limit == spec.counter.limit),
				   "\"%s\": tick or counter limit changes after print and parse", text);
	FUZZ_CHECK(strcmp(idgen_spec_text(&again), printed) == 0,
			   "\"%s\": \"%s\" prints as \"%s\"", text, printed, idgen_spec_text(&again));

	check_bits(text, &spec, fuzz_hash(data, size));

	fuzz_reset();
	return 0;
}
