/*-------------------------------------------------------------------------
 *
 * base/layout.c
 *	  Bit layouts of named generators: parsing, presets, composing, decoding.
 *
 * A layout is a list of fields from the most significant bit down,
 * separated by spaces, each "name:bits" or "name:bits=constant":
 *
 *		time	ticks of the unit since the epoch (required)
 *		seq		the per-tick sequence (absent: one ID per tick)
 *		shard	a call argument, idgen_next(name, shard); one sequence each
 *		random	random bits
 *		other	node fields: together, in order, they hold idgen.node_id;
 *				with "=constant" a constant instead
 *
 * The widths add up to 63 (bit 63 stays 0) or 64 (then, as for instagram,
 * the time field comes first and its top bit, the sign bit, is never
 * used).  IDs of one generator (and shard) are strictly increasing only if
 * time is more significant than seq, and random bits less significant than
 * both; the parser insists.  A preset name stands for a published layout
 * with its epoch and unit.
 *
 * Nothing here reads the clock or shared state: idgen_decode_layout() is
 * IMMUTABLE.  Times in decoded output are ISO 8601 in UTC, so they do not
 * depend on TimeZone or DateStyle either.
 *
 * IDENTIFICATION
 *	  src/base/layout.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "common/int.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "idgen.h"

/*
 * Published layouts.  epoch_unix_ms 0 means idgen.epoch.
 */
typedef struct IdgenPreset
{
	const char *name;
	const char *layout;
	int64		epoch_unix_ms;
	int32		unit_ms;
} IdgenPreset;

static const IdgenPreset idgen_presets[] = {
	/* idgen's own snowflake_id(): Twitter's split under idgen.epoch */
	{"snowflake", "time:41 datacenter:5 worker:5 seq:12", 0, 1},

	/*
	 * Twitter's Snowflake (twitter-archive/snowflake, IdWorker.scala):
	 * twepoch = 1288834974657 (2010-11-04 01:42:54.657 UTC), 5 datacenter
	 * bits, 5 worker bits, 12 sequence bits, milliseconds.
	 */
	{"twitter", "time:41 datacenter:5 worker:5 seq:12", INT64CONST(1288834974657), 1},

	/*
	 * Instagram ("Sharding & IDs at Instagram", Instagram Engineering,
	 * 2012): 41 bits of ms since a custom epoch (the post's example uses
	 * 2011-01-01 00:00:00 UTC), 13 bits of logical shard, 10 bits of
	 * sequence.
	 */
	{"instagram", "time:41 shard:13 seq:10", INT64CONST(1293840000000), 1},

	/*
	 * Discord (developer documentation, Reference, "Snowflakes"): 42 bits
	 * of ms since the Discord epoch 1420070400000 (2015-01-01 UTC), 5 bits
	 * internal worker, 5 bits internal process, 12 bits increment.
	 */
	{"discord", "time:42 worker:5 process:5 seq:12", INT64CONST(1420070400000), 1},

	/*
	 * Sonyflake (sony/sonyflake): 39 bits of time in units of 10 ms, 8 bits
	 * of sequence, 16 bits of machine id, in that order; default start time
	 * 2014-09-01 00:00:00 UTC.
	 */
	{"sonyflake", "time:39 seq:8 machine:16", INT64CONST(1409529600000), 10},

	/*
	 * TSID (f4b6a3/tsid-creator): 42 bits of ms since 2020-01-01 00:00:00
	 * UTC, then 22 bits of node and counter; TSID-1024 splits them 10 + 12.
	 */
	{"tsid", "time:42 node:10 seq:12", INT64CONST(1577836800000), 1},

	/*
	 * idgen's own for JavaScript clients: 53 bits, so that every ID is a
	 * "safe integer" a JavaScript number holds exactly.  41 bits of ms
	 * since idgen.epoch (69 years), 5 node bits (node ids 0-31), 7 bits of
	 * sequence (128 IDs per ms per node).
	 */
	{"js53", "time:41 node:5 seq:7", 0, 1},
};

static int64 idgen_spec_time_bits_limit(const IdgenSpec *spec);

/* Fill *problem with the refusal of a layout, for which see detail; false. */
static bool
idgen_layout_problem(IdgenProblem *problem, const char *text, const char *detail)
{
	problem->sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
	problem->message = psprintf("invalid layout \"%s\"", text);
	problem->detail = detail;
	problem->hint = "Give fields from the most significant bit down, such as \"time:42 datacenter:3 worker:6 seq:12\", or a preset: snowflake, twitter, instagram, discord, sonyflake, tsid, js53.";
	return false;
}

static const IdgenPreset *
idgen_find_preset(const char *name)
{
	for (int i = 0; i < lengthof(idgen_presets); i++)
		if (strcmp(idgen_presets[i].name, name) == 0)
			return &idgen_presets[i];
	return NULL;
}

/* Parse "name:bits" or "name:bits=constant" into *field; see the caller. */
static bool
idgen_parse_field(const char *text, char *token, IdgenField *field,
				  IdgenProblem *problem)
{
	char	   *colon = strchr(token, ':');
	char	   *equals;
	char	   *end;
	long		bits;
	int			len;

	if (colon == NULL)
		return idgen_layout_problem(problem, text, psprintf("Field \"%s\" has no \":bits\".", token));
	len = colon - token;
	if (len == 0 || len >= IDGEN_FIELD_NAME_LEN)
		return idgen_layout_problem(problem, text,
									psprintf("Field names have 1 to %d characters.",
											 IDGEN_FIELD_NAME_LEN - 1));
	for (int i = 0; i < len; i++)
		if (!(islower((unsigned char) token[i]) || token[i] == '_' ||
			  (i > 0 && isdigit((unsigned char) token[i]))))
			return idgen_layout_problem(problem, text,
										psprintf("Field name \"%.*s\" is not a lower-case identifier.",
												 len, token));
	memcpy(field->name, token, len);
	field->name[len] = '\0';

	errno = 0;
	bits = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || errno != 0 || bits < 1 || bits > 63 ||
		(*end != '\0' && *end != '='))
		return idgen_layout_problem(problem, text,
									psprintf("Field \"%s\" must have from 1 to 63 bits.",
											 field->name));
	field->bits = (int) bits;
	field->constant = 0;

	if (strcmp(field->name, "time") == 0)
		field->kind = IDGEN_FIELD_TIME;
	else if (strcmp(field->name, "seq") == 0)
		field->kind = IDGEN_FIELD_SEQ;
	else if (strcmp(field->name, "shard") == 0)
		field->kind = IDGEN_FIELD_SHARD;
	else if (strcmp(field->name, "random") == 0)
		field->kind = IDGEN_FIELD_RANDOM;
	else
		field->kind = IDGEN_FIELD_NODE;

	equals = (*end == '=') ? end : NULL;
	if (equals != NULL)
	{
		long long	value;

		if (field->kind != IDGEN_FIELD_NODE)
			return idgen_layout_problem(problem, text,
										psprintf("Field \"%s\" cannot be a constant.",
												 field->name));
		errno = 0;
		value = strtoll(equals + 1, &end, 10);
		if (end == equals + 1 || *end != '\0' || errno != 0 || value < 0 ||
			(field->bits < 63 && value >= (INT64CONST(1) << field->bits)))
			return idgen_layout_problem(problem, text,
										psprintf("The constant of field \"%s\" must be from 0 to 2^%d - 1.",
												 field->name, field->bits));
		field->kind = IDGEN_FIELD_CONST;
		field->constant = value;
	}
	return true;
}

/*
 * Parse a layout (fields, or a preset name) into *spec.  A preset also sets
 * the epoch and unit, and says so in *epoch_given and *unit_given; for
 * fields the caller sets them with idgen_spec_set_clock().  Errors are
 * 22023.
 */
void
idgen_parse_layout(const char *text, IdgenSpec *spec, bool *epoch_given,
				   bool *unit_given)
{
	IdgenProblem problem;

	if (!idgen_parse_layout_soft(text, spec, epoch_given, unit_given, &problem))
		idgen_raise_problem(&problem);
}

/*
 * idgen_parse_layout without raising: false, and *problem says why (as
 * the ERROR idgen_parse_layout would raise), for a layout it refuses.  The
 * keeper parses stored definitions with it, which must not stop it.
 */
bool
idgen_parse_layout_soft(const char *text, IdgenSpec *spec, bool *epoch_given,
						bool *unit_given, IdgenProblem *problem)
{
	const IdgenPreset *preset;
	char	   *copy;
	char	   *token;
	char	   *save;
	int			total = 0;
	int			shift;

	memset(spec, 0, sizeof(*spec));
	spec->time_field = spec->seq_field = spec->shard_field = -1;
	*epoch_given = *unit_given = false;

	preset = idgen_find_preset(text);
	if (preset != NULL)
	{
		if (!idgen_parse_layout_soft(preset->layout, spec, epoch_given,
									 unit_given, problem))
			return false;
		idgen_spec_set_clock(spec,
							 preset->epoch_unix_ms != 0 ? preset->epoch_unix_ms : idgen_epoch_unix_ms,
							 preset->unit_ms);
		*epoch_given = *unit_given = true;
		return true;
	}
	if (strchr(text, ':') == NULL)
	{
		problem->sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
		problem->message = psprintf("unknown layout preset \"%s\"", text);
		problem->detail = NULL;
		problem->hint = "The presets are snowflake, twitter, instagram, discord, sonyflake, tsid and js53; or give fields such as \"time:41 node:10 seq:12\".";
		return false;
	}

	copy = pstrdup(text);
	for (token = strtok_r(copy, " \t\n", &save); token != NULL;
		 token = strtok_r(NULL, " \t\n", &save))
	{
		IdgenField *field;

		if (spec->nfields == IDGEN_MAX_FIELDS)
			return idgen_layout_problem(problem, text,
										psprintf("A layout has at most %d fields.",
												 IDGEN_MAX_FIELDS));
		field = &spec->fields[spec->nfields];
		if (!idgen_parse_field(text, token, field, problem))
			return false;
		for (int i = 0; i < spec->nfields; i++)
			if (strcmp(spec->fields[i].name, field->name) == 0)
				return idgen_layout_problem(problem, text, psprintf("Field \"%s\" appears twice.", field->name));
		switch (field->kind)
		{
			case IDGEN_FIELD_TIME:
				spec->time_field = spec->nfields;
				break;
			case IDGEN_FIELD_SEQ:
				spec->seq_field = spec->nfields;
				break;
			case IDGEN_FIELD_SHARD:
				if (field->bits > IDGEN_NAMED_MAX_SHARD_BITS)
					return idgen_layout_problem(problem, text,
												psprintf("A shard field has at most %d bits.",
														 IDGEN_NAMED_MAX_SHARD_BITS));
				spec->shard_field = spec->nfields;
				break;
			case IDGEN_FIELD_NODE:
				spec->node_bits += field->bits;
				break;
			default:
				break;
		}
		total += field->bits;
		spec->nfields++;
	}

	if (spec->nfields == 0)
		return idgen_layout_problem(problem, text, "The layout has no fields.");
	if (spec->time_field < 0)
	{
		/* a counter layout (base/counter.c): seq is the counter */
		if (spec->seq_field < 0)
			return idgen_layout_problem(problem, text, "A layout needs a time field, or, for a counter generator, a seq field.");
		if (spec->fields[spec->seq_field].bits > 52)
			return idgen_layout_problem(problem, text, "The counter (seq) of a counter layout has at most 52 bits.");
		if (total > 63)
			return idgen_layout_problem(problem, text, psprintf("The widths of a counter layout add up to at most 63 bits, not %d.", total));
		for (int i = 0; i < spec->nfields; i++)
			if (spec->fields[i].kind == IDGEN_FIELD_RANDOM ||
				spec->fields[i].kind == IDGEN_FIELD_SHARD)
				return idgen_layout_problem(problem, text, "A counter layout has no random or shard field.");
	}
	else if (total > 64)
		return idgen_layout_problem(problem, text, psprintf("The widths add up to %d bits, more than 64.", total));
	if (total == 64 && spec->time_field != 0)
		return idgen_layout_problem(problem, text, "A 64-bit layout must start with its time field, whose top bit (the sign bit) is never used.");
	if (spec->node_bits > 31)
		return idgen_layout_problem(problem, text, "The node fields have more than 31 bits together.");
	if (spec->seq_field >= 0 && spec->seq_field < spec->time_field)
		return idgen_layout_problem(problem, text, "The time field must be more significant than seq, or IDs would not increase.");
	for (int i = 0; i < spec->nfields; i++)
		if (spec->fields[i].kind == IDGEN_FIELD_RANDOM &&
			(i < spec->time_field || i < spec->seq_field))
			return idgen_layout_problem(problem, text, "Random bits must be less significant than time and seq, or IDs would not increase.");

	spec->width = total;
	shift = total;
	for (int i = 0; i < spec->nfields; i++)
	{
		shift -= spec->fields[i].bits;
		spec->fields[i].shift = shift;
	}
	if (spec->time_field >= 0)
	{
		spec->tick_limit = idgen_spec_time_bits_limit(spec);
		return true;
	}
	return idgen_parse_counter_options_soft(spec, 0, 0, 0, NULL, 0, 0, problem);
}

/*
 * The ticks a time field's bits can hold: 2^bits, less the sign bit of a
 * 64-bit layout.  A 63-bit time field (the whole of a 63-bit layout) holds
 * one tick less than 2^63, so that the limit itself fits int64.  Since the
 * time field is more significant than seq, (limit << seq_bits) fits 63 bits:
 * a position never wraps (idgen_tick_position).
 */
static int64
idgen_spec_time_bits_limit(const IdgenSpec *spec)
{
	int			bits = spec->fields[spec->time_field].bits -
		(spec->width == 64 ? 1 : 0);

	return bits >= 63 ? PG_INT64_MAX : INT64CONST(1) << bits;
}

/* The last millisecond PostgreSQL's timestamptz can hold, in Unix ms. */
#define IDGEN_TIMESTAMP_END_UNIX_MS \
	((END_TIMESTAMP - 1) / 1000 + IDGEN_UNIX_TO_PG_MS)

/*
 * Set the epoch (Unix ms) and the unit (ms) of a parsed layout.  A time
 * layout's range ends where its bits end, or where timestamptz ends if
 * that comes first: a tick beyond it could be neither decoded nor built,
 * and the arithmetic epoch + tick * unit never overflows below it.
 */
void
idgen_spec_set_clock(IdgenSpec *spec, int64 epoch_unix_ms, int32 unit_ms)
{
	spec->epoch_unix_ms = epoch_unix_ms;
	spec->unit_ms = unit_ms;
	if (spec->time_field >= 0)
	{
		int64		last = IDGEN_TIMESTAMP_END_UNIX_MS - epoch_unix_ms;

		Assert(unit_ms >= 1);
		spec->tick_limit = last < 0 ? 0 :
			Min(idgen_spec_time_bits_limit(spec), last / unit_ms + 1);
	}
}

/*
 * An epoch given by a user, in Unix ms: a finite timestamp no later than
 * the end of timestamptz's range (22008 otherwise).
 */
int64
idgen_epoch_to_unix_ms(TimestampTz epoch)
{
	if (TIMESTAMP_NOT_FINITE(epoch))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("an epoch must be a finite timestamp"),
				 errdetail("IDs count ticks since the epoch.")));
	return idgen_timestamptz_to_unix_ms(epoch);
}

/*
 * The time of tick "tick" of a layout, in Unix ms; 22008 for a tick past
 * the layout's range, such as the time field of a foreign ID decoded with
 * a layout it does not have.
 */
int64
idgen_spec_tick_unix_ms(const IdgenSpec *spec, uint64 tick)
{
	if (tick >= (uint64) spec->tick_limit)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("time field " UINT64_FORMAT " is out of range for the layout", tick),
				 errdetail("With its epoch and a unit of %d ms, the time field holds 0 to " INT64_FORMAT ".",
						   spec->unit_ms, spec->tick_limit - 1)));
	return spec->epoch_unix_ms + (int64) tick * spec->unit_ms;
}

/* The canonical text of a layout: its fields, one space apart. */
char *
idgen_spec_text(const IdgenSpec *spec)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < spec->nfields; i++)
	{
		const IdgenField *f = &spec->fields[i];

		appendStringInfo(&buf, "%s%s:%d", i > 0 ? " " : "", f->name, f->bits);
		if (f->kind == IDGEN_FIELD_CONST)
			appendStringInfo(&buf, "=" INT64_FORMAT, f->constant);
	}
	return buf.data;
}

/*
 * The bits the node and constant fields contribute to every ID, with
 * node_id split over the node fields in order (most significant first).
 * *fits is false if node_id needs more bits than they have.
 */
int64
idgen_spec_node_value(const IdgenSpec *spec, int32 node_id, bool *fits)
{
	int64		value = 0;
	int			left = spec->node_bits;

	*fits = node_id >= 0 && (spec->node_bits >= 31 ||
							 node_id < (INT64CONST(1) << spec->node_bits));
	for (int i = 0; i < spec->nfields; i++)
	{
		const IdgenField *f = &spec->fields[i];

		if (f->kind == IDGEN_FIELD_CONST)
			value |= f->constant << f->shift;
		else if (f->kind == IDGEN_FIELD_NODE)
		{
			left -= f->bits;
			value |= (((int64) node_id >> left) & ((INT64CONST(1) << f->bits) - 1)) << f->shift;
		}
	}
	return value;
}

/*
 * Could two time layouts, both issuing on this server under node id
 * node_id, ever issue the same ID?  This compares what the bits mean,
 * never how the layouts are spelled.
 *
 * Two time fields count the same ticks only with the same epoch, unit and
 * position; the effective width then follows from the position (a 64-bit
 * layout never uses its sign bit), so "time:42 node:10 seq:12" counts
 * exactly as snowflake_id() does.  Below the time field, sequence, shard
 * and random bits take any value over time, so the two sets of IDs are
 * disjoint only if some bit fixed by both (node and constant fields, this
 * server's node id in place) differs.  Layouts whose time fields differ
 * are different formats: idgen does not compare them, as it does not
 * compare an ID column of one format with another's.
 */
bool
idgen_spec_time_overlap(const IdgenSpec *a, const IdgenSpec *b, int32 node_id)
{
	const IdgenField *ta = &a->fields[a->time_field];
	const IdgenField *tb = &b->fields[b->time_field];
	bool		node_known = node_id >= 0;
	uint64		mask_a = idgen_spec_fixed_mask(a, node_known);
	uint64		mask_b = idgen_spec_fixed_mask(b, node_known);
	bool		fits;
	uint64		value_a = (uint64) idgen_spec_node_value(a, Max(node_id, 0), &fits);
	uint64		value_b = (uint64) idgen_spec_node_value(b, Max(node_id, 0), &fits);

	Assert(a->time_field >= 0 && b->time_field >= 0);
	if (ta->shift != tb->shift || a->epoch_unix_ms != b->epoch_unix_ms ||
		a->unit_ms != b->unit_ms)
		return false;
	return ((value_a ^ value_b) & mask_a & mask_b) == 0;
}

/*
 * Could two counter layouts, both on this server under node id node_id,
 * ever hand out the same ID?  Neither hands out seq values below its
 * start; b hands out none at or above b_below (a dropped counter that has
 * stopped: its reservation; PG_UINT64_MAX otherwise).  Outside their seq fields every bit is fixed
 * (node and constant fields, zeros above the width), and those must agree
 * wherever both fix them.  With seq fields in the same bits, the IDs meet
 * only on a common seq value (idgen_counter_sets_meet); seq fields in
 * different bits are taken to meet (their values grow into each other's
 * bits, as "seq:31" and "seq:32" do from 0).
 */
bool
idgen_spec_counter_overlap(const IdgenSpec *a, const IdgenSpec *b,
						   int32 node_id, uint64 b_below)
{
	const IdgenField *sa = &a->fields[a->seq_field];
	const IdgenField *sb = &b->fields[b->seq_field];
	bool		node_known = node_id >= 0;
	bool		fits;
	uint64		mask_a = idgen_spec_fixed_mask(a, node_known) |
		~((UINT64CONST(1) << a->width) - 1);
	uint64		mask_b = idgen_spec_fixed_mask(b, node_known) |
		~((UINT64CONST(1) << b->width) - 1);
	uint64		value_a = (uint64) idgen_spec_node_value(a, Max(node_id, 0), &fits);
	uint64		value_b = (uint64) idgen_spec_node_value(b, Max(node_id, 0), &fits);

	Assert(a->time_field < 0 && b->time_field < 0);
	if (((value_a ^ value_b) & mask_a & mask_b) != 0)
		return false;
	if (sa->shift != sb->shift || sa->bits != sb->bits)
		return true;
	return idgen_counter_sets_meet(&a->counter, &b->counter,
								   Max(a->counter.start, b->counter.start),
								   Min(b_below, UINT64CONST(1) << sa->bits));
}

/*
 * The bits a layout fixes in every ID: its constant fields, and its node
 * fields if the node id is known (without one, a node field may come to
 * hold any value).
 */
uint64
idgen_spec_fixed_mask(const IdgenSpec *spec, bool with_node)
{
	uint64		mask = 0;

	for (int i = 0; i < spec->nfields; i++)
	{
		const IdgenField *f = &spec->fields[i];

		if ((f->kind == IDGEN_FIELD_NODE && with_node) ||
			f->kind == IDGEN_FIELD_CONST)
			mask |= ((UINT64CONST(1) << f->bits) - 1) << f->shift;
	}
	return mask;
}

/* Field i of an ID. */
uint64
idgen_spec_field(const IdgenSpec *spec, int i, int64 id)
{
	const IdgenField *f = &spec->fields[i];

	return ((uint64) id >> f->shift) & ((UINT64CONST(1) << f->bits) - 1);
}

/* A unit as whole milliseconds, 1 ms to 1 day (22023 otherwise). */
int32
idgen_interval_to_unit_ms(Interval *unit)
{
	int64		usecs;

	if (unit->month != 0 ||
		pg_mul_s64_overflow((int64) unit->day, USECS_PER_DAY, &usecs) ||
		pg_add_s64_overflow(usecs, unit->time, &usecs) ||
		usecs % 1000 != 0 || usecs < 1000 || usecs > USECS_PER_DAY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid unit"),
				 errdetail("The unit must be a whole number of milliseconds from 1 ms to 1 day.")));
	return (int32) (usecs / 1000);
}

int64
idgen_timestamptz_to_unix_ms(TimestampTz ts)
{
	/* floor, so that a time inside a millisecond maps to that millisecond */
	int64		ms = ts / 1000 - (ts % 1000 < 0 ? 1 : 0);

	return ms + IDGEN_UNIX_TO_PG_MS;
}

TimestampTz
idgen_unix_ms_to_timestamptz(int64 unix_ms)
{
	return (unix_ms - IDGEN_UNIX_TO_PG_MS) * 1000;
}

/* Does the layout have a field of this name? */
static bool
idgen_spec_has_field(const IdgenSpec *spec, const char *name)
{
	for (int i = 0; i < spec->nfields; i++)
		if (strcmp(spec->fields[i].name, name) == 0)
			return true;
	return false;
}

/* ISO 8601 in UTC with milliseconds: independent of TimeZone and DateStyle. */
static void
idgen_append_utc(StringInfo buf, int64 unix_ms)
{
	struct pg_tm tm;
	fsec_t		fsec;

	if (timestamp2tm(idgen_unix_ms_to_timestamptz(unix_ms), NULL, &tm, &fsec,
					 NULL, NULL) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range")));
	appendStringInfo(buf, "\"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\"",
					 tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min,
					 tm.tm_sec, (int) (fsec / 1000));
}

/*
 * Every field of an ID by name, time as an ISO 8601 UTC string (the start
 * of its tick), as jsonb.  Negative IDs are no layout's (22023).
 */
Datum
idgen_spec_decode_jsonb(const IdgenSpec *spec, int64 id)
{
	StringInfoData buf;

	idgen_check_id(id);
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int i = 0; i < spec->nfields; i++)
	{
		uint64		value = idgen_spec_field(spec, i, id);

		appendStringInfo(&buf, "%s\"%s\": ", i > 0 ? ", " : "",
						 spec->fields[i].name);
		if (spec->fields[i].kind == IDGEN_FIELD_TIME)
			idgen_append_utc(&buf, idgen_spec_tick_unix_ms(spec, value));
		else
			appendStringInfo(&buf, UINT64_FORMAT, value);
	}
	/*
	 * A striped counter: which stripe, and so which server, issued it.  Not
	 * if a field has that name: jsonb keeps the last of two equal keys, so
	 * the field's value would be lost, and an ID built from the result
	 * would differ.  The stripe follows from seq anyway.
	 */
	if (spec->time_field < 0 && spec->counter.stripes > 1 &&
		!idgen_spec_has_field(spec, "stripe"))
		appendStringInfo(&buf, ", \"stripe\": " UINT64_FORMAT,
						 (idgen_spec_field(spec, spec->seq_field, id) /
						  (uint64) spec->counter.segment) % spec->counter.stripes);
	appendStringInfoChar(&buf, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

/*
 * idgen_decode_layout(layout, id, epoch DEFAULT NULL, unit DEFAULT NULL):
 * decode a foreign ID with no definition and no server state.  With a
 * preset its own epoch and unit apply unless given; with fields, a missing
 * epoch is idgen.epoch and a missing unit 1 ms.  Not STRICT, so that the
 * defaults can be NULL; a NULL layout or ID gives NULL.
 */
PG_FUNCTION_INFO_V1(idgen_decode_by_layout);
Datum
idgen_decode_by_layout(PG_FUNCTION_ARGS)
{
	IdgenSpec	spec;
	bool		epoch_given;
	bool		unit_given;
	int64		epoch = idgen_epoch_unix_ms;
	int32		unit = 1;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	idgen_parse_layout(text_to_cstring(PG_GETARG_TEXT_PP(0)), &spec,
					   &epoch_given, &unit_given);
	if (epoch_given)
		epoch = spec.epoch_unix_ms;
	if (unit_given)
		unit = spec.unit_ms;
	if (!PG_ARGISNULL(2))
		epoch = idgen_epoch_to_unix_ms(PG_GETARG_TIMESTAMPTZ(2));
	if (!PG_ARGISNULL(3))
		unit = idgen_interval_to_unit_ms(PG_GETARG_INTERVAL_P(3));
	idgen_spec_set_clock(&spec, epoch, unit);
	PG_RETURN_DATUM(idgen_spec_decode_jsonb(&spec, PG_GETARG_INT64(1)));
}
