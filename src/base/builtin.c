/*-------------------------------------------------------------------------
 *
 * base/builtin.c
 *	  A spec as the engine counts and composes it, for named and built-in
 *	  generators alike; snowflake and instagram as their presets' specs,
 *	  and the two 128-bit layouts.
 *
 * snowflake_id() and instagram_id() are named layouts that need no
 * definition: their presets (base/layout.c) are parsed once per process,
 * with the clock idgen.epoch and 1 ms, into the spec the decoders read,
 * the layout the engine counts and the compose plan that turns positions
 * into IDs, as a named generator's are.  The parse is checked against the
 * widths their SQL functions check arguments with (a node id, a shard),
 * so the two cannot come apart.  The 128-bit layouts have no spec: their
 * IDs are built in backend/uuid.c.
 *
 * IDENTIFICATION
 *	  src/base/builtin.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "idgen.h"

/* ---- a spec as the engine and the composer see it ---- */

/*
 * The layout the engine counts a time spec's positions in: its ticks
 * since its epoch, offset from idgen.epoch.  A built-in one's is 0.
 */
void
idgen_spec_layout(const IdgenSpec *spec, const char *name,
				  const char *funcname, IdgenLayout *layout)
{
	memset(layout, 0, sizeof(*layout));
	layout->name = name;
	layout->funcname = funcname;
	layout->seq_bits = spec->seq_field < 0 ? 0 : spec->fields[spec->seq_field].bits;
	layout->tick_limit = spec->tick_limit;
	layout->offset_ms = spec->epoch_unix_ms - idgen_epoch_unix_ms;
	layout->unit_ms = spec->unit_ms;
	layout->unit_inverse = 1.0 / spec->unit_ms;
}

/*
 * The compose plan of a spec whose node and constant fields hold "fixed"
 * (idgen_spec_node_value): a counter's has only its seq shift and fixed.
 */
void
idgen_compose_plan(const IdgenSpec *spec, int64 fixed, IdgenCompose *plan)
{
	memset(plan, 0, sizeof(*plan));
	plan->seq_bits = spec->seq_field < 0 ? 0 : spec->fields[spec->seq_field].bits;
	plan->time_shift = spec->time_field < 0 ? 0 : spec->fields[spec->time_field].shift;
	plan->seq_shift = spec->seq_field < 0 ? 0 : spec->fields[spec->seq_field].shift;
	plan->shard_shift = spec->shard_field < 0 ? 0 : spec->fields[spec->shard_field].shift;
	plan->fixed = (uint64) fixed;
	for (int f = 0; f < spec->nfields; f++)
		if (spec->fields[f].kind == IDGEN_FIELD_RANDOM)
			plan->random_mask |= ((UINT64CONST(1) << spec->fields[f].bits) - 1) <<
				spec->fields[f].shift;
}

/* ---- snowflake and instagram ---- */

IdgenBuiltin idgen_builtin_snowflake = {.preset = "snowflake", .node_id = -1};
IdgenBuiltin idgen_builtin_instagram = {.preset = "instagram", .node_id = -1};

/* positions use ms since idgen.epoch, like every generator */
const IdgenLayout idgen_uuidv7_layout = {
	.name = "uuidv7",
	.funcname = "idgen_uuidv7",
	.seq_bits = IDGEN_UUIDV7_SEQ_BITS,
	.tick_limit = IDGEN_UUID_MS_LIMIT,
	IDGEN_LAYOUT_MS_SINCE_EPOCH,
};

const IdgenLayout idgen_flake128_layout = {
	.name = "flake128",
	.funcname = "idgen_flake128",
	.seq_bits = IDGEN_FLAKE128_SEQ_BITS,
	.tick_limit = IDGEN_UUID_MS_LIMIT,
	IDGEN_LAYOUT_MS_SINCE_EPOCH,
};

static int
idgen_builtin_field(const IdgenBuiltin *builtin, const char *name)
{
	for (int i = 0; i < builtin->spec.nfields; i++)
		if (strcmp(builtin->spec.fields[i].name, name) == 0)
			return i;
	return -1;
}

/* The width of field i, or -1 if there is none. */
static int
idgen_builtin_bits(const IdgenBuiltin *builtin, int i)
{
	return i < 0 ? -1 : builtin->spec.fields[i].bits;
}

/*
 * Parse a preset, and check it against what the SQL functions take:
 * seq_bits and tick_limit, the node id's width or the shard's.
 */
static void
idgen_builtin_parse(IdgenBuiltin *builtin, const char *funcname,
					int seq_bits, int64 tick_limit, int node_bits,
					int shard_bits)
{
	IdgenSpec  *spec = &builtin->spec;
	bool		epoch_given;
	bool		unit_given;

	idgen_parse_layout(builtin->preset, spec, &epoch_given, &unit_given);
	idgen_spec_set_clock(spec, idgen_epoch_unix_ms, 1);
	idgen_spec_layout(spec, builtin->preset, funcname, &builtin->layout);
	idgen_compose_plan(spec, 0, &builtin->compose);
	builtin->node_id = -1;
	builtin->datacenter = idgen_builtin_field(builtin, "datacenter");
	builtin->worker = idgen_builtin_field(builtin, "worker");
	if (spec->time_field < 0 || spec->seq_field < 0 ||
		builtin->layout.seq_bits != seq_bits ||
		builtin->layout.tick_limit != tick_limit ||
		builtin->layout.offset_ms != 0 ||
		spec->node_bits != node_bits ||
		idgen_builtin_bits(builtin, spec->shard_field) != shard_bits ||
		(node_bits > 0 && (builtin->datacenter < 0 || builtin->worker < 0)))
		elog(ERROR, "the %s preset's bits differ from those %s() takes",
			 builtin->preset, funcname);
}

/* Parse both presets: _PG_init, after idgen.epoch is defined. */
void
idgen_builtin_init(void)
{
	idgen_builtin_parse(&idgen_builtin_snowflake, "snowflake_id",
						IDGEN_SNOWFLAKE_SEQ_BITS, IDGEN_SNOWFLAKE_MS_LIMIT,
						IDGEN_SNOWFLAKE_NODE_BITS, -1);
	idgen_builtin_parse(&idgen_builtin_instagram, "instagram_id",
						IDGEN_INSTAGRAM_SEQ_BITS, IDGEN_INSTAGRAM_MS_LIMIT,
						0, IDGEN_INSTAGRAM_SHARD_BITS);
}

/*
 * Compose the IDs that follow under node id node_id (checked by whoever
 * assigned it: the setting, or a lease).
 */
void
idgen_builtin_set_node(IdgenBuiltin *builtin, int32 node_id)
{
	bool		fits;

	builtin->compose.fixed = (uint64) idgen_spec_node_value(&builtin->spec,
															 node_id, &fits);
	Assert(fits);
	builtin->node_id = node_id;
}

/*
 * An instagram ID's shard generator's position, (ms << seq_bits) | seq,
 * and its shard and ms: for a non-negative ID (the callers check).
 */
uint64
idgen_instagram_position(int64 id)
{
	const IdgenSpec *spec = &idgen_builtin_instagram.spec;

	return idgen_spec_field(spec, spec->time_field, id) <<
		idgen_builtin_instagram.layout.seq_bits |
		idgen_spec_field(spec, spec->seq_field, id);
}

int32
idgen_instagram_shard_of(int64 id)
{
	const IdgenSpec *spec = &idgen_builtin_instagram.spec;

	return (int32) idgen_spec_field(spec, spec->shard_field, id);
}

int64
idgen_instagram_ms_of(int64 id)
{
	const IdgenSpec *spec = &idgen_builtin_instagram.spec;

	return (int64) idgen_spec_field(spec, spec->time_field, id);
}
