/*-------------------------------------------------------------------------
 *
 * keeper/counters.c
 *	  Counter generators' durable state, the keeper's side: the rows of
 *	  idgen_counter_state, the floors file of last resort, and the plan by
 *	  which each reservation is written before it is published.
 *
 * A counter generator has no clock: what keeps it from handing out a
 * value twice after a restart is its reservation, a row of
 * idgen_counter_state in idgen.database, written and flushed before the
 * keeper publishes it to the backends (idgen_registry_plan_counters,
 * idgen_registry_write_counters, idgen_registry_publish_counters, called in
 * that order by keeper/main.c).  Where those rows cannot be trusted (the
 * extension re-created, idgen.database changed) the floors file in the
 * data directory bounds what was handed out (idgen_registry_load_counters).
 * Keeper only; the slots are shared/slots.c's and keeper/load.c's.  The backends'
 * side: issuing is the engine's (idgen_issue_counter_values, shared/generator.c),
 * its wait for the keeper shared/reservation.c's, and the values taken ahead of
 * the reservation backend/counterissue.c's.
 *
 * IDENTIFICATION
 *	  src/keeper/counters.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/heapam.h"
#include "access/xact.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "common/pg_prng.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "storage/fd.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/shmem.h"
#include "tcop/pquery.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "idgen.h"
#include "shared/storage.h"
#include "keeper/keeper.h"
#include "lease/counters.h"
#include "lease/protocol.h"

/*
 * The counters' floor of last resort: a file in the data directory
 * listing, for every counter this server reserved for, its reservation as
 * published (written after the row's durable commit, before the backends
 * see it: idgen_counter_floors_cover), with the database and table
 * (idgen_counter_state) the reservation was written to.  The bound is
 * counted in seq values, with the width of the seq field, so that it
 * means the same to a definition under the same name with other stripes,
 * segment or start (a line without the width, written before, counts
 * local values of the definition that reads it).  Every load of a
 * counter's state takes the higher of its row and this bound: a row
 * restored from an older copy, lost, or written anew after the extension
 * was re-created or idgen.database changed may lie below values the
 * server handed out under the same name and node value.  Since the bound
 * is the reservation itself, a crash still skips at most a prefetch.  At
 * a clean stop the keeper records both at the exact next value
 * (idgen_registry_plan_parking).  Not replicated: a promoted standby or a
 * restored backup has its own copy, older, which is only ever used as a
 * floor.  Keeper only.
 *
 * Each line also says the counter's ID space, its seq field's position
 * and its definition's form (idgen_counter_form): "dboid relid node_value
 * bound name seq_bits seq_shift space form", space "-" for its own; idgen
 * 1.1.0 wrote the first six, and reads the first six of a longer line.
 * So a shared space keeps its floors when its rows are gone: a new member
 * under another name starts above the values of every member the table
 * has forgotten, and of every earlier definition of a name defined again
 * (idgen_counter_space_floor).
 */
#define IDGEN_COUNTER_FLOOR_FILE "idgen_counters"

typedef struct IdgenCounterFloor
{
	char		name[NAMEDATALEN];
	int64		node_value;
	uint64		bound;			/* seq values below it may have been issued */
	int			seq_bits;		/* the seq field's width; 0: bound counts the
								 * local values of the running definition */
	int			seq_shift;		/* the seq field's position; -1: unsaid (a
								 * line written by idgen 1.1.0) */
	char		space[NAMEDATALEN]; /* its shared ID space; "": its own, or
									 * unsaid */
	uint64		form;			/* idgen_counter_form of the definition that
								 * wrote it; 0: unsaid */
	Oid			dboid;			/* where the reservation was written */
	Oid			relid;
} IdgenCounterFloor;

/*
 * A line's ID space where it has none: no shared space's name can be it
 * (idgen_check_generator_name allows lower-case letters, digits and
 * underscores), and idgen_counter_recordable refuses a counter whose name
 * or space the line could not hold.
 */
#define IDGEN_COUNTER_FLOOR_OWN_SPACE "-"

static IdgenCounterFloor *counter_floors = NULL;
static int	counter_floors_n = 0;
static int	counter_floors_max = 0;
static Oid	counter_state_relid = InvalidOid;	/* last written to */

/*
 * The line of counter name under node_value whose seq field is at shift
 * (-1: unsaid), whose ID space is space ("": its own, or unsaid) and whose
 * definition has form form (0: unsaid); with add, made if missing.  A
 * name's lines of other spaces, positions or definitions are kept apart:
 * a space's forgotten members are found by them.
 */
static IdgenCounterFloor *
idgen_counter_floor_line(const char *name, int64 node_value, int shift,
						 const char *space, uint64 form, bool add)
{
	for (int i = 0; i < counter_floors_n; i++)
		if (counter_floors[i].node_value == node_value &&
			counter_floors[i].seq_shift == shift &&
			counter_floors[i].form == form &&
			strcmp(counter_floors[i].name, name) == 0 &&
			strcmp(counter_floors[i].space, space) == 0)
			return &counter_floors[i];
	if (!add)
		return NULL;
	if (counter_floors_n == counter_floors_max)
	{
		counter_floors_max = Max(16, counter_floors_max * 2);
		counter_floors = counter_floors == NULL ?
			MemoryContextAllocZero(TopMemoryContext,
								   sizeof(IdgenCounterFloor) * counter_floors_max) :
			repalloc(counter_floors, sizeof(IdgenCounterFloor) * counter_floors_max);
	}
	memset(&counter_floors[counter_floors_n], 0, sizeof(IdgenCounterFloor));
	strlcpy(counter_floors[counter_floors_n].name, name, NAMEDATALEN);
	counter_floors[counter_floors_n].node_value = node_value;
	counter_floors[counter_floors_n].seq_shift = shift;
	strlcpy(counter_floors[counter_floors_n].space, space, NAMEDATALEN);
	counter_floors[counter_floors_n].form = form;
	return &counter_floors[counter_floors_n++];
}

/*
 * The line of running counter slot (its name, node value, seq position,
 * space and form), made if missing.  A line of idgen 1.1.0 under the name
 * and node value, which says neither position, space nor form, is taken
 * over: it was this counter's, as idgen_counter_floors_cover takes over
 * one counting local values.  A line under the name of another form stays
 * apart: it records values an earlier definition handed out.
 */
static IdgenCounterFloor *
idgen_counter_floor_find(const IdgenNamedSlot *slot)
{
	int			shift = slot->spec.fields[slot->spec.seq_field].shift;
	uint64		form = idgen_counter_form(&slot->spec);
	IdgenCounterFloor *cf = idgen_counter_floor_line(slot->name, slot->node_value,
													 shift, slot->spec.space,
													 form, false);

	if (cf != NULL)
		return cf;
	cf = idgen_counter_floor_line(slot->name, slot->node_value, -1, "", 0, false);
	if (cf != NULL)
	{
		cf->seq_shift = shift;
		strlcpy(cf->space, slot->spec.space, NAMEDATALEN);
		cf->form = form;
		return cf;
	}
	return idgen_counter_floor_line(slot->name, slot->node_value, shift,
									slot->spec.space, form, true);
}

/*
 * Can the file's line hold counter slot's name and space?  A line is
 * words separated by blanks; names created through idgen_create_generator
 * always fit, a row written by hand might not.  Such a counter is refused:
 * no floor of it could be read back.
 */
static bool
idgen_counter_recordable(const IdgenNamedSlot *slot)
{
	const char *words[2] = {slot->name, slot->spec.space};

	if (strcmp(slot->spec.space, IDGEN_COUNTER_FLOOR_OWN_SPACE) == 0)
		return false;
	for (int w = 0; w < 2; w++)
		for (const char *c = words[w]; *c != '\0'; c++)
			if (isspace((unsigned char) *c) || !isprint((unsigned char) *c))
				return false;
	return true;
}

/* Read the file once per keeper process; a line that does not parse is skipped. */
static void
idgen_counter_floors_read(void)
{
	static bool read_once = false;
	FILE	   *f;
	char		line[256];

	if (read_once)
		return;
	read_once = true;
	f = AllocateFile(IDGEN_COUNTER_FLOOR_FILE, "r");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
	{
		unsigned int dboid;
		unsigned int relid;
		long long	node_value;
		unsigned long long bound;
		char		name[NAMEDATALEN];
		char		space[NAMEDATALEN];
		int			seq_bits = 0;
		int			seq_shift = -1;
		unsigned long long form = 0;
		int			fields;
		IdgenCounterFloor *cf;

		/*
		 * "dboid relid node_value bound name [seq_bits [seq_shift space
		 * [form]]]": idgen 1.1.0 wrote the first six (and reads a longer
		 * line, as its sscanf stops after them)
		 */
		fields = sscanf(line, "%u %u %lld %llu %63s %d %d %63s %llu", &dboid,
						&relid, &node_value, &bound, name, &seq_bits,
						&seq_shift, space, &form);
		if (fields < 5 || (fields >= 6 && (seq_bits < 1 || seq_bits > 63)))
			continue;
		if (fields >= 8 && (seq_shift < 0 || seq_shift + seq_bits > 64))
			continue;
		if (fields < 9)
			form = 0;
		if (fields < 8)
		{
			seq_shift = -1;
			space[0] = '\0';
		}
		else if (strcmp(space, IDGEN_COUNTER_FLOOR_OWN_SPACE) == 0)
			space[0] = '\0';
		cf = idgen_counter_floor_line(name, node_value, seq_shift, space,
									  (uint64) form, true);
		cf->bound = cf->seq_bits == seq_bits ? Max(cf->bound, (uint64) bound) : (uint64) bound;
		cf->seq_bits = seq_bits;
		cf->dboid = dboid;
		cf->relid = relid;
	}
	FreeFile(f);
}

/* Write the whole file durably: a temporary file, fsynced, renamed. */
static void
idgen_counter_floors_write(void)
{
	const char *tmp = IDGEN_COUNTER_FLOOR_FILE ".tmp";
	FILE	   *f = AllocateFile(tmp, PG_BINARY_W);

	if (f == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp)));
	for (int i = 0; i < counter_floors_n; i++)
	{
		fprintf(f, "%u %u " INT64_FORMAT " " UINT64_FORMAT " %s %d",
				counter_floors[i].dboid, counter_floors[i].relid,
				counter_floors[i].node_value, counter_floors[i].bound,
				counter_floors[i].name, counter_floors[i].seq_bits);
		/* a line of idgen 1.1.0 stays as it came (it says none) */
		if (counter_floors[i].seq_shift >= 0)
			fprintf(f, " %d %s", counter_floors[i].seq_shift,
					counter_floors[i].space[0] != '\0' ? counter_floors[i].space :
					IDGEN_COUNTER_FLOOR_OWN_SPACE);
		if (counter_floors[i].seq_shift >= 0 && counter_floors[i].form != 0)
			fprintf(f, " " UINT64_FORMAT, counter_floors[i].form);
		fputc('\n', f);
	}
	if (fflush(f) != 0 || pg_fsync(fileno(f)) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp)));
	if (FreeFile(f) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", tmp)));
	(void) durable_rename(tmp, IDGEN_COUNTER_FLOOR_FILE, ERROR);
}

/* The width of a counter's seq field. */
static inline int
idgen_counter_seq_bits(const IdgenSpec *spec)
{
	return spec->fields[spec->seq_field].bits;
}

/*
 * The file's floor of a counter under its name, in the slot's local values,
 * or 0; whether it was recorded for table relid (the row's) in
 * *same_table.  Every line of the name and node value counts, whatever ID
 * space it says, and a line of other fixed bits whose seq field lies
 * elsewhere: a name's values are never handed out again under it.  A bound recorded for a seq field of another width
 * cannot be translated: *untranslatable is set (the counter is then
 * refused, never guessed at).
 */
static uint64
idgen_counter_floor_of(const IdgenNamedSlot *slot, Oid relid,
					   int *untranslatable, bool *same_table)
{
	uint64		floor = 0;

	*untranslatable = 0;
	*same_table = false;
	idgen_counter_floors_read();
	for (int i = 0; i < counter_floors_n; i++)
	{
		IdgenCounterFloor *cf = &counter_floors[i];
		bool		same = cf->relid == relid && cf->dboid == MyDatabaseId;
		uint64		local = 0;

		if (strcmp(cf->name, slot->name) != 0)
			continue;

		/*
		 * Under other fixed bits (node and constant fields) with the seq
		 * field in the same place, no ID can be the same: the fixed bits
		 * lie outside the seq field; nor where they differ outside both
		 * seq fields.  With the seq field elsewhere they may otherwise meet, and the line counts as below (a line of 1.1.0, which
		 * does not say where, is taken as it was then: apart).
		 */
		if (cf->node_value != slot->node_value &&
			(cf->seq_shift < 0 ||
			 (cf->seq_bits == idgen_counter_seq_bits(&slot->spec) &&
			  cf->seq_shift == slot->spec.fields[slot->spec.seq_field].shift) ||
			 idgen_counter_fixed_apart(&slot->spec, slot->node_value,
									   cf->seq_bits, cf->seq_shift,
									   cf->node_value)))
			continue;

		/*
		 * A line of the old form counts local values of the definition
		 * that wrote it, and says neither its stripes nor its width: the
		 * same definition only in the same table (a name never changes its
		 * definition there).  Otherwise it cannot be translated.
		 */
		if (cf->seq_bits == 0)
		{
			if (same)
				local = Min(cf->bound, slot->spec.counter.limit);
			else if (cf->bound > 0)
				*untranslatable = -1;
		}
		else if (cf->seq_bits != idgen_counter_seq_bits(&slot->spec))
		{
			if (cf->bound > 0)
				*untranslatable = cf->seq_bits;
		}
		else if (cf->seq_shift >= 0 &&
				 cf->seq_shift != slot->spec.fields[slot->spec.seq_field].shift)
		{
			/* seq values above the bound may still meet its IDs */
			if (cf->bound > 0)
				*untranslatable = IDGEN_SEQ_MOVED(cf->seq_shift);
		}
		else
			local = idgen_counter_local_bound(&slot->spec, cf->bound);
		if (local > floor || (floor == 0 && same))
		{
			floor = local;
			*same_table = same;
		}
	}
	return *untranslatable ? 0 : floor;
}

/*
 * The floor, in counter slot i's local values, that the forgotten members
 * of its shared ID space give it: counters of the space recorded in the
 * file (and, if it embeds the node id, in the node id's lease record)
 * under another name that has no row in idgen_generator any more (the
 * extension re-created, or the server's database changed), so that no
 * creation could check it against them.  A member whose seq field has the
 * same position and width floors it at the member's bound: no seq value
 * above it lies in that member's IDs, whatever their other fields.  One
 * with its seq field elsewhere cannot be translated: the counter is
 * refused (*refused), never guessed at; so is one whose name or space a
 * line of the file could not hold.  Lines of idgen 1.1.0 say no space,
 * and are no space's member.  A floor beyond above (what the counter's own
 * state gives it) is logged.  Keeper only, after a complete load of
 * idgen_generator.
 */
static uint64
idgen_counter_space_floor(int i, uint64 above, bool *refused)
{
	IdgenNamedSlot *slot = &idgen_registry_slots[i];
	const IdgenSpec *spec = &slot->spec;
	const IdgenField *seq = &spec->fields[spec->seq_field];
	const char *member = NULL;
	uint64		floor = 0;

	*refused = false;
	if (!idgen_counter_recordable(slot))
	{
		*refused = true;
		idgen_slot_set_state(i, IDGEN_SLOT_REFUSED,
							 psprintf("its name or ID space holds a blank, which the file \"%s\" cannot record; drop it and create one under a name made by idgen_create_generator",
									  IDGEN_COUNTER_FLOOR_FILE));
		return 0;
	}
	if (spec->space[0] == '\0')
		return 0;
	idgen_counter_floors_read();
	for (int f = 0; f < counter_floors_n; f++)
	{
		IdgenCounterFloor *cf = &counter_floors[f];

		if (cf->bound == 0 || cf->seq_shift < 0 ||
			strcmp(cf->space, spec->space) != 0 ||
			strcmp(cf->name, slot->name) == 0 ||
			idgen_counter_fixed_apart(spec, slot->node_value, cf->seq_bits,
									  cf->seq_shift, cf->node_value) ||
			idgen_registry_remembers(cf->name, cf->space, cf->seq_bits,
									 cf->seq_shift, true, cf->node_value,
									 cf->form))
			continue;
		if (cf->seq_bits != seq->bits || cf->seq_shift != seq->shift)
		{
			*refused = true;
			idgen_counter_refuse_forgotten(i, cf->name, cf->seq_bits, cf->seq_shift);
			return 0;
		}
		if (idgen_counter_local_bound(spec, cf->bound) > floor)
		{
			floor = idgen_counter_local_bound(spec, cf->bound);
			member = cf->name;
		}
	}
	if (spec->node_bits > 0)
	{
		const IdgenLeaseCounter *other;
		uint64		lease_floor = idgen_lease_space_floor(spec, slot->name,
														  slot->node_value,
														  idgen_registry_remembers,
														  &other);

		if (other != NULL)
		{
			*refused = true;
			idgen_counter_refuse_forgotten(i, other->name, other->seq_bits,
										   other->seq_shift);
			return 0;
		}
		if (lease_floor > floor)
			floor = lease_floor;
	}
	if (floor > above)
		ereport(LOG,
				(errmsg("idgen keeper: counter \"%s\" of ID space \"%s\" begins at or above " UINT64_FORMAT ", above the values of members no longer defined",
						slot->name, spec->space, floor),
				 member != NULL ?
				 errdetail("Generator \"%s\" of the space handed out values on this server; file \"%s\" recorded them.",
						   member, IDGEN_COUNTER_FLOOR_FILE) :
				 errdetail("A holder of the node id handed out values under it; etcd's record of the node id holds them.")));
	return floor;
}

/*
 * A running counter's row is higher than anything this server reserved:
 * restored from elsewhere (a backup of a server that went further), so
 * values below it may exist.  The counter resumes above it, and the keeper
 * never writes it back lower (idgen_registry_write_counters).  Keeper only.
 */
static void
idgen_counter_take_restored(int i, uint64 row)
{
	idgen_counter_raise_floor(i, row);
	ereport(LOG,
			(errmsg("idgen keeper: counter \"%s\" continues above its restored durable state " UINT64_FORMAT,
					idgen_registry_slots[i].name, row)));
}

/*
 * Take counter slot i's row of idgen_counter_state (table relid): its
 * first, with the floors of the data directory's file and of its space,
 * or a later one restored or lowered under it.
 */
static void
idgen_counter_load_row(int i, uint64 row, Oid relid)
{
	int			untranslatable;
	bool		same_table;
	bool		refused = false;
	uint64		floor = idgen_counter_floor_of(&idgen_registry_slots[i], relid,
											   &untranslatable, &same_table);
	uint64		space_floor = 0;

	/* refused for good, but raised to its own row all the same */
	if (untranslatable)
	{
		idgen_counter_refuse_untranslatable(i, untranslatable);
		idgen_registry_slots[i].state_missing = false;
		floor = 0;
	}
	else
		space_floor = idgen_counter_space_floor(i, Max(row, floor), &refused);
	if (refused)
		idgen_registry_slots[i].state_missing = false;

	idgen_raise_counter_next(&idgen_registry_gens[i].gen,
							 Max(row, Max(floor, space_floor)));
	if (space_floor > Max(row, floor))
		idgen_registry_slots[i].state_rewrite = true;
	if (floor > row)
	{
		idgen_registry_slots[i].state_rewrite = true;
		ereport(WARNING,
				(errmsg("idgen keeper: counter \"%s\" resumes above " UINT64_FORMAT ", where this server reserved it before",
						idgen_registry_slots[i].name, floor),
				 same_table ?
				 errdetail("Its durable state in database \"%s\" lies below the reservation this server recorded in file \"%s\": the row was changed by hand, or restored from an older copy.",
						   idgen_database, IDGEN_COUNTER_FLOOR_FILE) :
				 errdetail("Its durable state in database \"%s\" is newer than the reservation this server recorded in file \"%s\": the extension was re-created, or \"idgen.database\" changed.",
						   idgen_database, IDGEN_COUNTER_FLOOR_FILE)));
	}

	/*
	 * Refused for want of this row, so nothing was issued here
	 * under the name: the row arrived after its definition (a
	 * parallel pg_restore commits them in either order), and is
	 * taken as a start would take it.
	 */
	if (idgen_registry_slots[i].state_missing && !untranslatable && !refused)
	{
		idgen_registry_slots[i].state_missing = false;
		idgen_slot_set_state(i, idgen_registry_slots[i].defined_dropped ?
							 IDGEN_SLOT_DROPPED : IDGEN_SLOT_ACTIVE, NULL);
		ereport(LOG,
				(errmsg("idgen keeper: counter \"%s\" found its durable state; it resumes above " UINT64_FORMAT,
						idgen_registry_slots[i].name, Max(row, floor))));
	}
}

/*
 * A counter without its row: created with one, so the state was lost.
 * Before this shared memory ran it, refuse it (no floor can be derived
 * for a counter); while it runs, write the row again from memory.
 */
static void
idgen_counter_load_missing(int i)
{
	IdgenNamedSlot *slot = &idgen_registry_slots[i];
	int			untranslatable = 0;
	bool		same_table;
	uint64		floor = 0;
	bool		refused = false;

	if (pg_atomic_read_u32(&slot->state) == IDGEN_SLOT_REFUSED)
		return;
	if (!slot->state_loaded)
		floor = idgen_counter_floor_of(slot, InvalidOid, &untranslatable,
									   &same_table);

	/* a floor of its own: the forgotten members of its space too */
	if (!untranslatable && !slot->state_loaded && floor > 0)
	{
		/* not inside Max(), which would run it, and its LOG, twice */
		uint64		space_floor = idgen_counter_space_floor(i, floor, &refused);

		floor = Max(floor, space_floor);
	}

	if (untranslatable)
		idgen_counter_refuse_untranslatable(i, untranslatable);
	else if (refused)
	{
		/* beside a forgotten member of its space: refused above */
	}
	else if (!slot->state_loaded && floor > 0)
	{
		/* lost, but this server recorded how far it had got */
		idgen_raise_counter_next(&idgen_registry_gens[i].gen, floor);
		slot->state_rewrite = true;
		ereport(WARNING,
				(errmsg("idgen keeper: counter \"%s\" lost its durable state; it resumes above " UINT64_FORMAT ", where this server reserved it before",
						slot->name, floor)));
	}
	else if (!slot->state_loaded)
	{
		/* taken if the row appears (idgen_counter_load_row) */
		slot->state_missing = true;
		slot->defined_dropped =
			pg_atomic_read_u32(&slot->state) == IDGEN_SLOT_DROPPED;
		idgen_slot_set_state(i, IDGEN_SLOT_REFUSED,
							 "its durable counter state is missing from idgen_counter_state; restore it from a backup, or drop the generator and create one under a new name");
	}
	else
		slot->state_rewrite = true;
}

/*
 * Counters installed by this load, against every other slot, dropped
 * counters now bounded by their loaded state: created under another node
 * id, or before a counter it now meets was dropped, a counter may collide
 * with one that handed out values.  Refused before the keeper reserves
 * anything for it.
 */
static void
idgen_counter_check_installed(uint32 n)
{
	for (uint32 i = 0; i < n; i++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[i];
		const char *other;

		if (!slot->check_after_load)
			continue;
		slot->check_after_load = false;
		if (pg_atomic_read_u32(&slot->state) != IDGEN_SLOT_ACTIVE)
			continue;
		other = idgen_collides_with(slot->name, &slot->spec,
									idgen_current_node_id(), false, n);
		if (other != NULL)
			idgen_slot_set_state(i, IDGEN_SLOT_REFUSED,
								 psprintf("under node id %d it would issue the same IDs as %s",
										  idgen_current_node_id(), other));
	}
}

/*
 * Apply the durable counter reservations of idgen_counter_state (relid) to
 * the slots installed since the last call: every value below one may have
 * been handed out before (a restart, a crash, a failover), so such a
 * counter resumes at its reservation.  Nothing is published: the keeper's
 * next durable commit does that.  Slots already running are left alone;
 * their rows are the keeper's own writes.
 */
void
idgen_registry_load_counters(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TableScanDesc scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	HeapTuple	tup;

	uint32		n = pg_atomic_read_u32(&idgen_registry_shm->nslots);
	bool	   *seen = palloc0(sizeof(bool) * Max(n, 1));

	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Datum		values[2];
		bool		nulls[2];
		int			i;
		uint64		row;

		heap_deform_tuple(tup, RelationGetDescr(rel), values, nulls);
		if (nulls[0] || nulls[1])
			continue;
		i = idgen_registry_find(TextDatumGetCString(values[0]));
		if (i < 0 || (uint32) i >= n || idgen_registry_slots[i].spec.time_field >= 0)
			continue;
		seen[i] = true;
		row = (uint64) DatumGetInt64(values[1]);
		if (!idgen_registry_slots[i].state_loaded || idgen_registry_slots[i].state_missing)
			idgen_counter_load_row(i, row, relid);
		else if (row < pg_atomic_read_u64(&idgen_registry_slots[i].counter_reserved))
			idgen_registry_slots[i].state_rewrite = true;
		else if (row > pg_atomic_read_u64(&idgen_registry_slots[i].counter_reserved))
			idgen_counter_take_restored(i, row);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);

	/* a counter without its row: see idgen_counter_load_missing */
	for (uint32 i = 0; i < n; i++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[i];

		if (slot->spec.time_field < 0 && !seen[i] && !slot->retired)
			idgen_counter_load_missing(i);
		slot->state_loaded = true;
	}
	idgen_counter_check_installed(n);
}

/*
 * Plan the counter reservations to extend: a counter whose reservation
 * has fewer than its refill values left, or that a caller or a commit
 * waits for, gets prefetch values beyond what is used or wanted.  Returns
 * how many; the plan stays here for idgen_registry_write_counters() and
 * idgen_registry_publish_counters().
 */
typedef struct IdgenCounterPlan
{
	int			slot;
	uint64		reserved;		/* the new reservation */
} IdgenCounterPlan;

static int	counter_plan_n = 0;
static IdgenCounterPlan *counter_plan = NULL;
static bool counter_plan_parking = false;	/* exact values of a stopping keeper */
static bool counter_plan_restart = false;	/* exact values of restarts */

/* Start an empty plan; returns how many slots there are to look at. */
static uint32
idgen_counter_plan_begin(bool parking)
{
	uint32		n = pg_atomic_read_u32(&idgen_registry_shm->nslots);

	if (counter_plan == NULL)
		counter_plan = MemoryContextAlloc(TopMemoryContext,
										  sizeof(IdgenCounterPlan) * idgen_max_generators);
	counter_plan_n = 0;
	counter_plan_parking = parking;
	counter_plan_restart = false;
	pg_read_barrier();
	return n;
}

int
idgen_registry_plan_counters(void)
{
	uint32		n = idgen_counter_plan_begin(false);

	for (uint32 i = 0; i < n; i++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[i];
		IdgenGenerator *gen = &idgen_registry_gens[i].gen;
		uint64		reserved;
		uint64		want;
		uint64		next;
		uint64		target;
		IdgenCounterPlan *plan;

		if (slot->spec.time_field >= 0 ||
			pg_atomic_read_u32(&slot->state) != IDGEN_SLOT_ACTIVE)
			continue;
		reserved = pg_atomic_read_u64(&slot->counter_reserved);
		want = pg_atomic_read_u64(&slot->counter_want);
		SpinLockAcquire(&gen->mutex);
		next = gen->at.next;
		SpinLockRelease(&gen->mutex);
		if (!(slot->parked || slot->state_rewrite || want > reserved ||
			  next >= reserved ||
			  reserved - next < (uint64) slot->spec.counter.refill))
			continue;

		/*
		 * prefetch beyond what is used or wanted, never backwards: after a
		 * crash the counter resumes at most prefetch values above the last
		 * value handed out
		 */
		target = Min(Max(reserved, Max(next, want) + (uint64) slot->spec.counter.prefetch),
					 slot->spec.counter.limit);
		if (target <= reserved && !slot->state_rewrite && !slot->parked)
			continue;			/* at the end of its range: nothing to add */
		plan = &counter_plan[counter_plan_n++];
		plan->slot = i;
		plan->reserved = target;
	}
	return counter_plan_n;
}

/*
 * Write the planned reservations into idgen_counter_state (relid): one row
 * per counter, replaced.  Caller has begun a transaction and commits it
 * durably before publishing.
 */
void
idgen_registry_write_counters(Oid relid)
{
	Relation	rel = table_open(relid, RowExclusiveLock);
	TupleDesc	desc = RelationGetDescr(rel);
	TableScanDesc scan;
	HeapTuple	tup;

	counter_state_relid = relid;

	if (rel->rd_rel->relam != HEAP_TABLE_AM_OID || desc->natts != 2 ||
		TupleDescAttr(desc, 0)->atttypid != TEXTOID ||
		TupleDescAttr(desc, 1)->atttypid != INT8OID ||
		rel->rd_rel->relhasindex)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("idgen's table idgen_counter_state in database \"%s\" has been altered",
						idgen_database),
				 idgen_errhint_repair()));

	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Datum		values[2];
		bool		nulls[2];

		heap_deform_tuple(tup, desc, values, nulls);
		if (nulls[0])
			continue;
		for (int p = 0; p < counter_plan_n; p++)
			if (strcmp(idgen_registry_slots[counter_plan[p].slot].name,
					   TextDatumGetCString(values[0])) == 0)
			{
				uint64		row = nulls[1] ? 0 : (uint64) DatumGetInt64(values[1]);
				IdgenNamedSlot *slot = &idgen_registry_slots[counter_plan[p].slot];

				/*
				 * A stopping keeper lowers the row it published to the
				 * exact next value; one above that was restored since the
				 * last load (or written but never published): kept.
				 */
				if (counter_plan_restart)
				{
					/* the superuser's restart: exactly there */
				}
				else if (counter_plan_parking)
				{
					if (row > pg_atomic_read_u64(&slot->counter_reserved))
						counter_plan[p].reserved = Max(row, counter_plan[p].reserved);
				}
				/* never lower: a row restored since the last load */
				else if (row > counter_plan[p].reserved)
				{
					idgen_counter_take_restored(counter_plan[p].slot, row);
					counter_plan[p].reserved = row;
				}
				simple_heap_delete(rel, &tup->t_self);
				break;
			}
	}
	table_endscan(scan);

	for (int p = 0; p < counter_plan_n; p++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		values[0] = CStringGetTextDatum(idgen_registry_slots[counter_plan[p].slot].name);
		values[1] = Int64GetDatum((int64) counter_plan[p].reserved);
		simple_heap_insert(rel, heap_form_tuple(desc, values, nulls));
	}
	table_close(rel, RowExclusiveLock);
}

/*
 * Before a counter reservation is published: the file's bound becomes it,
 * so that every load can take the file's bound when it is higher than the
 * row and a crash still skips at most what the row would.
 */
static void
idgen_counter_floors_cover(void)
{
	bool		changed = false;

	if (!OidIsValid(counter_state_relid))
		return;
	idgen_counter_floors_read();
	for (int p = 0; p < counter_plan_n; p++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[counter_plan[p].slot];
		IdgenCounterFloor *cf = idgen_counter_floor_find(slot);
		int			seq_bits = idgen_counter_seq_bits(&slot->spec);

		/*
		 * A line of the old form counts this definition's local values (it
		 * runs, so it was translatable).  One of another width belongs to a
		 * definition this counter was refused beside: never overwritten.
		 */
		if (cf->seq_bits == 0 && cf->bound > 0)
			cf->bound = idgen_counter_seq_bound(&slot->spec,
												Min(cf->bound, slot->spec.counter.limit));
		else if (cf->seq_bits != seq_bits && cf->bound > 0)
			continue;
		cf->seq_bits = seq_bits;
		if (cf->bound >= idgen_counter_seq_bound(&slot->spec, counter_plan[p].reserved) &&
			cf->relid == counter_state_relid && cf->dboid == MyDatabaseId)
			continue;
		cf->bound = Max(cf->bound,
						idgen_counter_seq_bound(&slot->spec, counter_plan[p].reserved));
		cf->dboid = MyDatabaseId;
		cf->relid = counter_state_relid;
		changed = true;
	}
	if (changed)
		idgen_counter_floors_write();
}

/*
 * Switch a parked counter on again (see idgen_registry_plan_parking), once
 * its published reservation is durable again; a drop or refusal since
 * keeps it off.  Under its lock, as idgen_slot_set_state() reads "parked".
 */
static void
idgen_counter_unpark(int i)
{
	IdgenNamedSlot *slot = &idgen_registry_slots[i];
	IdgenGenerator *gen = &idgen_registry_gens[i].gen;

	SpinLockAcquire(&gen->mutex);
	/* a restart committed and not yet carried out keeps it off */
	if (pg_atomic_read_u64(&slot->restart_at) == 0)
	{
		slot->parked = false;
		gen->owned = pg_atomic_read_u32(&slot->state) == IDGEN_SLOT_ACTIVE;
	}
	SpinLockRelease(&gen->mutex);
}

/*
 * The planned reservations are durable: hand them to the callers, with
 * the point past which a caller wakes the keeper (the reservation less
 * refill), and switch parked counters on again.
 */
void
idgen_registry_publish_counters(void)
{
	bool		noted = false;

	/* the data directory's floor of last resort covers them first */
	idgen_counter_floors_cover();

	/* under a leased node id, etcd records them first (lease/protocol.c) */
	for (int p = 0; p < counter_plan_n && idgen_leases_on; p++)
		if (idgen_registry_slots[counter_plan[p].slot].spec.node_bits > 0)
		{
			const IdgenSpec *spec = &idgen_registry_slots[counter_plan[p].slot].spec;
			IdgenLeaseCounter c;

			idgen_lease_counter_of(&c, idgen_registry_slots[counter_plan[p].slot].name,
								   spec, idgen_registry_slots[counter_plan[p].slot].node_value,
								   idgen_counter_seq_bound(spec, counter_plan[p].reserved));
			noted |= idgen_lease_note_counter(&c);
		}
	if (noted)
		idgen_lease_record_counters();

	for (int p = 0; p < counter_plan_n; p++)
	{
		const IdgenCounterPlan *plan = &counter_plan[p];
		IdgenNamedSlot *slot = &idgen_registry_slots[plan->slot];
		uint64		old = pg_atomic_read_u64(&slot->counter_reserved);
		uint64		refill = (uint64) slot->spec.counter.refill;

		slot->state_rewrite = false;
		while (old < plan->reserved &&
			   !pg_atomic_compare_exchange_u64(&slot->counter_reserved, &old,
											   plan->reserved))
			;
		old = Max(old, plan->reserved);
		pg_atomic_write_u64(&slot->counter_wake, old - Min(old, refill));
		/* the keeper broadcasts its condition variable once they are out */
		if (slot->parked)
			idgen_counter_unpark(plan->slot);
	}
	counter_plan_n = 0;
}

/*
 * The keeper stops cleanly (keeper/main.c): switch every running counter off
 * under its lock, so that nothing is handed out once its next value is
 * read, and plan its durable state at exactly that value.  Every value
 * handed out lies below it, values taken ahead of the reservation
 * included.  This is the sequence rule: a clean restart resumes where the
 * counter stopped, only a crash skips.  Returns how many; the caller
 * writes them (idgen_registry_write_counters), commits, and records them
 * in the file (idgen_registry_floors_exact).  The slots stay switched off
 * ("parked"): a keeper started again in this shared memory (after
 * pg_terminate_backend()) first makes their published reservation
 * durable again, then switches them on (idgen_registry_publish_counters).
 */
int
idgen_registry_plan_parking(void)
{
	uint32		n = idgen_counter_plan_begin(true);

	for (uint32 i = 0; i < n; i++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[i];
		IdgenGenerator *gen = &idgen_registry_gens[i].gen;
		bool		parked = false;
		uint64		next = 0;

		if (slot->spec.time_field >= 0 || !slot->state_loaded ||
			slot->state_missing ||
			pg_atomic_read_u32(&slot->state) != IDGEN_SLOT_ACTIVE)
			continue;
		SpinLockAcquire(&gen->mutex);
		if (gen->owned)
		{
			slot->parked = true;
			gen->owned = false;
			parked = true;
		}
		next = gen->at.next;
		SpinLockRelease(&gen->mutex);
		if (!parked && !slot->parked)
			continue;			/* switched off otherwise: not ours to record */
		counter_plan[counter_plan_n].slot = i;
		counter_plan[counter_plan_n].reserved = next;
		counter_plan_n++;
	}
	/* a caller waiting for a reservation fails at once */
	ConditionVariableBroadcast(&idgen_shared->keeper.keeper.cv);
	return counter_plan_n;
}

/*
 * The lines of counter slot's name that earlier definitions of it, of its
 * own ID space, wrote with the seq field where its own is: a superuser's
 * restart below them (idgen_restart_generator) says their values are free
 * again, and only this name reads them; so are those recorded for another
 * table (an extension re-created, idgen.database changed), as a line of
 * the same definition is one line whatever its table.  A shared space's
 * lines stay: they floor the space's other members.
 */
static void
idgen_counter_floors_forget_earlier(const IdgenNamedSlot *slot)
{
	int			shift = slot->spec.fields[slot->spec.seq_field].shift;
	uint64		form = idgen_counter_form(&slot->spec);
	int			kept = 0;

	if (slot->spec.space[0] != '\0')
		return;
	for (int i = 0; i < counter_floors_n; i++)
	{
		IdgenCounterFloor *cf = &counter_floors[i];

		if (!(cf->node_value == slot->node_value && cf->seq_shift == shift &&
			  cf->form != form && cf->space[0] == '\0' &&
			  cf->seq_bits == idgen_counter_seq_bits(&slot->spec) &&
			  strcmp(cf->name, slot->name) == 0))
			counter_floors[kept++] = *cf;
	}
	counter_floors_n = kept;
}

/*
 * The parked counters' exact next values are committed: record them in
 * the file too, lowering its bounds, so that the next start takes them.
 */
static void
idgen_counter_floors_set_exact(void)
{
	idgen_counter_floors_read();
	for (int p = 0; p < counter_plan_n; p++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[counter_plan[p].slot];
		IdgenCounterFloor *cf;

		if (counter_plan_restart)
			idgen_counter_floors_forget_earlier(slot);
		cf = idgen_counter_floor_find(slot);

		cf->seq_bits = idgen_counter_seq_bits(&slot->spec);
		cf->bound = idgen_counter_seq_bound(&slot->spec, counter_plan[p].reserved);
		cf->dboid = MyDatabaseId;
		cf->relid = counter_state_relid;
	}
	if (counter_plan_n > 0)
		idgen_counter_floors_write();
}

void
idgen_registry_floors_exact(void)
{
	idgen_counter_floors_set_exact();
	counter_plan_n = 0;
}

/*
 * Counters a committed idgen_restart_generator() (backend/definitions.c) asked to
 * restart: each is switched off under its lock ("parked", as by a
 * stopping keeper), set to its new next value, and its published
 * reservation lowered to that; a transaction holding values it took ahead
 * before cannot commit them (counter_floor_epoch).  The caller writes the
 * plan exactly (idgen_registry_write_counters), commits durably, and calls
 * idgen_registry_publish_restarts(), which records them in the file,
 * clears the requests and switches them on.  A round that fails leaves
 * the requests, and the counters parked, for the next round.  Returns
 * how many.
 */
int
idgen_registry_plan_restarts(void)
{
	uint32		n = idgen_counter_plan_begin(false);

	counter_plan_restart = true;
	for (uint32 i = 0; i < n; i++)
	{
		IdgenNamedSlot *slot = &idgen_registry_slots[i];
		IdgenGenerator *gen = &idgen_registry_gens[i].gen;
		uint64		at = pg_atomic_read_u64(&slot->restart_at);

		if (at == 0 || !slot->state_loaded)
			continue;
		/* dropped or refused since: nothing runs to restart */
		if (slot->spec.time_field >= 0 || slot->retired || slot->state_missing ||
			pg_atomic_read_u32(&slot->state) != IDGEN_SLOT_ACTIVE)
		{
			pg_atomic_write_u64(&slot->restart_at, 0);
			continue;
		}
		SpinLockAcquire(&gen->mutex);
		slot->parked = true;
		gen->owned = false;
		gen->at.next = at - 1;
		/* lowered only here, under the lock that callers read it under */
		pg_atomic_write_u64(&slot->counter_reserved, at - 1);
		SpinLockRelease(&gen->mutex);
		pg_atomic_write_u64(&slot->counter_want, at - 1);	/* the old line's */
		pg_atomic_write_u64(&slot->counter_wake, 0);
		pg_write_barrier();
		pg_atomic_fetch_add_u32(&slot->counter_floor_epoch, 1);
		counter_plan[counter_plan_n].slot = i;
		counter_plan[counter_plan_n].reserved = at - 1;
		counter_plan_n++;
	}
	/* a caller waiting for a reservation looks again */
	ConditionVariableBroadcast(&idgen_shared->keeper.keeper.cv);
	return counter_plan_n;
}

/*
 * The restarts planned are durable: the file follows, then the callers.
 * A request is cleared only now, so that a round that fails before leaves
 * it for the next; one that a newer restart replaced meanwhile stays.
 */
void
idgen_registry_publish_restarts(void)
{
	idgen_counter_floors_set_exact();
	for (int p = 0; p < counter_plan_n; p++)
	{
		uint64		asked = counter_plan[p].reserved + 1;

		(void) pg_atomic_compare_exchange_u64(&idgen_registry_slots[counter_plan[p].slot].restart_at,
											  &asked, 0);
	}
	for (int p = 0; p < counter_plan_n; p++)
		ereport(LOG,
				(errmsg("idgen keeper: counter \"%s\" restarted at " UINT64_FORMAT,
						idgen_registry_slots[counter_plan[p].slot].name,
						idgen_counter_value(&idgen_registry_slots[counter_plan[p].slot].spec.counter,
											counter_plan[p].reserved))));
	idgen_registry_publish_counters();
}
