/*-------------------------------------------------------------------------
 *
 * base/counter.c
 *	  Counter generators: clock-free, durable, striped across servers.
 *
 * A named layout without a time field is a counter generator (seeds 000,
 * 001, 004).  Its seq field is a counter that never repeats and never
 * depends on the clock.  The server draws local counter values c = 0, 1,
 * 2, ... and maps each to a value of the seq field:
 *
 *		the value space is cut into segments of S values; segment g covers
 *		[g*S, (g+1)*S) and belongs to stripe g mod N; this server owns the
 *		stripes o_0 < o_1 < ... < o_{m-1} and hands out whole segments of
 *		them in increasing order:
 *
 *		k = c / S (the server's k-th segment), g = (k / m) * N + o_{k mod m}
 *		value(c) = g * S + c mod S
 *
 * value() is strictly increasing in c, so a server's IDs increase; servers
 * with disjoint stripes never share a value; and servers under equal load
 * stay within a few segments of each other.  N = 1 (the default) is a plain
 * counter; S = 1, N = 2 is Flickr's pair of odd and even ticket servers.
 *
 * Durability: the keeper reserves counter values ahead, "prefetch" at a
 * time, when fewer than "refill" remain (seed 000: 1,000 and 500), in the
 * table idgen_counter_state of idgen.database, with the same durable
 * commit as the time reservation: one prefetch beyond what is used or
 * wanted, never more.  After a crash, restart or failover the counter
 * resumes at the durable reservation, so a crash skips at most prefetch
 * values beyond the last one handed out.
 *
 * Durable by the statement's end.  A session calling in a tight loop uses
 * 1,000 values in a few microseconds, far less than one durable commit,
 * so if it waited for the keeper whenever it ran out it would wait for a
 * WAL flush every prefetch values.  Instead a caller that outruns the
 * durable reservation takes up to idgen_counter_lead() values beyond it
 * at once, and the end of the statement that took them (any executor's
 * end, a utility command's end) waits until the keeper has made them
 * durable; if the keeper cannot within max_wait, the statement fails
 * (55000).  Values no statement end covers (a deferred trigger's) are
 * waited for by the commit, PREPARE TRANSACTION or a parallel worker's
 * end.  This is close to what PostgreSQL's sequences do: nextval() logs
 * ahead without waiting for a flush, and the calling transaction's commit
 * flushes that record; waiting at the statement's end rather than in a
 * commit callback keeps the values from other extensions' commit work
 * (postgres_fdw commits remote transactions there), whichever runs
 * first.  So no transaction of this server, nor one a statement's
 * transactional foreign tables take part in, commits a value that the
 * counter could hand out again (a statement that sends values out of its
 * transaction before it ends, through dblink say, is the exception the
 * docs name), and the values of a statement that had not ended when the
 * server crashed may be handed out again after it, as a sequence's
 * would.  Values below the durable reservation, which is
 * all of them for a caller that does not outrun the keeper, are never
 * handed out again, committed or not.
 *
 * The lead is prefetch, or 2^20 values (about a quarter of a second of the
 * fastest single session, many durable commits' worth), but no more than
 * 1/1024 of the counter's own range, so that a small counter never loses
 * much of it to transactions that roll back.
 *
 * IDENTIFICATION
 *	  src/base/counter.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "common/int.h"
#include "lib/stringinfo.h"

#include "idgen.h"

#define IDGEN_DEFAULT_PREFETCH	1000
#define IDGEN_MAX_PREFETCH		10000000

/*
 * The lead (see the header): at most this many values, and this fraction
 * of the counter's local range, beyond the durable reservation.
 */
#define IDGEN_COUNTER_MAX_LEAD		(UINT64CONST(1) << 20)
#define IDGEN_COUNTER_RANGE_SHARE	1024

/* Fill *problem with a refusal of counter options; false. */
static bool
idgen_counter_problem(IdgenProblem *problem, const char *detail)
{
	problem->sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
	problem->message = "invalid counter options";
	problem->detail = detail;
	problem->hint = NULL;
	return false;
}

/* Parse "0-3, 5" into a sorted list of stripes below N; see the caller. */
static bool
idgen_parse_owned(const char *text, IdgenCounterSpec *counter,
				  IdgenProblem *problem)
{
	bool		owned[IDGEN_MAX_STRIPES];

	switch (idgen_parse_ranges(text, counter->stripes - 1, owned))
	{
		case IDGEN_RANGES_OK:
			break;
		case IDGEN_RANGES_SYNTAX:
			return idgen_counter_problem(problem, "\"owned\" lists stripes or ranges separated by commas, such as \"0-3, 5\".");
		case IDGEN_RANGES_HALF:
			return idgen_counter_problem(problem, "A range of stripes needs two numbers, such as \"0-3\".");
		case IDGEN_RANGES_TOO_HIGH:
		case IDGEN_RANGES_BACKWARDS:
			return idgen_counter_problem(problem,
										 psprintf("Owned stripes range from 0 to %d (\"stripes\" is %d).",
												  counter->stripes - 1, counter->stripes));
	}
	counter->nowned = 0;
	for (int s = 0; s < counter->stripes; s++)
		if (owned[s])
			counter->owned[counter->nowned++] = s;
	if (counter->nowned == 0)
		return idgen_counter_problem(problem, "A server must own at least one stripe.");
	return true;
}

/* Is the seq value of local value c at least v?  Never overflows. */
static bool
idgen_counter_value_reaches(const IdgenCounterSpec *counter, uint64 c, uint64 v)
{
	uint64		k = c / (uint64) counter->segment;
	uint64		g;
	uint64		value;

	if (pg_mul_u64_overflow(k / counter->nowned, (uint64) counter->stripes, &g) ||
		pg_add_u64_overflow(g, (uint64) counter->owned[k % counter->nowned], &g) ||
		pg_mul_u64_overflow(g, (uint64) counter->segment, &value) ||
		pg_add_u64_overflow(value, c % (uint64) counter->segment, &value))
		return true;
	return value >= v;
}

/*
 * The first local value c whose seq value is at or above v (at most 2^63
 * local values: the seq field is at most 63 bits, a value is at least its
 * local value).  Values grow with c, so a binary search.
 */
static uint64
idgen_counter_first_at(const IdgenCounterSpec *counter, uint64 v)
{
	uint64		lo = 0;
	uint64		hi = v;

	while (lo < hi)
	{
		uint64		mid = lo + (hi - lo) / 2;

		if (idgen_counter_value_reaches(counter, mid, v))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * A bound of local values as a bound of seq values: every local value
 * below c has its seq value below the result (2^bits, past the field, for
 * c at the counter's limit).  Floors kept apart from a definition (the
 * data directory's file) are counted in seq values, which mean the same
 * whatever the stripes, segment or start of the definition that reads
 * them.
 */
uint64
idgen_counter_seq_bound(const IdgenSpec *spec, uint64 c)
{
	if (c >= spec->counter.limit)
		return UINT64CONST(1) << spec->fields[spec->seq_field].bits;
	return idgen_counter_value(&spec->counter, c);
}

/*
 * The other way: the first local value whose seq value is at or above
 * seq, the counter's limit if none is.  Resuming there, the counter hands
 * out no seq value below the bound.
 */
uint64
idgen_counter_local_bound(const IdgenSpec *spec, uint64 seq)
{
	return Min(idgen_counter_first_at(&spec->counter, seq), spec->counter.limit);
}

/* one value into a form: MurmurHash3's 64-bit finalizer over the two */
static inline uint64
idgen_form_mix(uint64 h, uint64 v)
{
	h ^= v;
	h ^= h >> 33;
	h *= UINT64CONST(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64CONST(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

/*
 * A counter definition's form: a hash, never 0, of what decides which seq
 * values it hands out (its stripes, the ones it owns, its segment and its
 * start).  The records of what a counter handed out (the data directory's
 * file, a node id's lease record) carry it, so that a running definition
 * is taken to cover recorded values only where it is the definition that
 * handed them out (idgen_registry_remembers): one created again under the
 * name in other stripes does not.  Two definitions of one form hand out
 * the same values, save a collision of the 64-bit hash.  Computed from
 * the values, not their bytes, so that servers of either byte order
 * agree (a node id's record is read by every server that holds it).
 */
uint64
idgen_counter_form(const IdgenSpec *spec)
{
	const IdgenCounterSpec *c = &spec->counter;
	uint64		h = UINT64CONST(0x696467656e);	/* "idgen" */

	h = idgen_form_mix(h, (uint64) c->stripes);
	h = idgen_form_mix(h, (uint64) c->segment);
	h = idgen_form_mix(h, c->start);
	h = idgen_form_mix(h, (uint64) c->nowned);
	for (int i = 0; i < c->nowned; i++)
		h = idgen_form_mix(h, (uint64) c->owned[i]);
	return h != 0 ? h : 1;
}

/*
 * Set the counter options of a parsed layout; NULL-like arguments (0,
 * NULL) take the defaults.  Time layouts take none (22023).
 */
void
idgen_parse_counter_options(IdgenSpec *spec, int32 prefetch, int32 refill,
							int32 stripes, const char *owned, int64 segment,
							int64 start)
{
	IdgenProblem problem;

	if (!idgen_parse_counter_options_soft(spec, prefetch, refill, stripes,
										  owned, segment, start, &problem))
		idgen_raise_problem(&problem);
}

/*
 * idgen_parse_counter_options without raising: false, and *problem says
 * why (as the ERROR idgen_parse_counter_options would raise), for options
 * it refuses; the spec's counter is then partly set.
 */
bool
idgen_parse_counter_options_soft(IdgenSpec *spec, int32 prefetch, int32 refill,
								 int32 stripes, const char *owned,
								 int64 segment, int64 start,
								 IdgenProblem *problem)
{
	IdgenCounterSpec *counter = &spec->counter;
	int			seq_bits;

	if (spec->time_field >= 0)
	{
		if (prefetch || refill || stripes || owned || segment || start)
		{
			problem->sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
			problem->message = "prefetch, refill, stripes, owned, segment and start apply only to counter layouts";
			problem->detail = "A counter layout is one without a time field.";
			problem->hint = NULL;
			return false;
		}
		return true;
	}
	seq_bits = spec->fields[spec->seq_field].bits;

	counter->prefetch = prefetch ? prefetch : IDGEN_DEFAULT_PREFETCH;
	if (counter->prefetch < 1 || counter->prefetch > IDGEN_MAX_PREFETCH)
		return idgen_counter_problem(problem, psprintf("\"prefetch\" is from 1 to %d.", IDGEN_MAX_PREFETCH));
	counter->refill = refill ? refill : counter->prefetch / 2;
	if (counter->refill < 0 || counter->refill >= counter->prefetch)
		return idgen_counter_problem(problem, "\"refill\" is at least 0 and below \"prefetch\".");
	counter->stripes = stripes ? stripes : 1;
	if (counter->stripes < 1 || counter->stripes > IDGEN_MAX_STRIPES)
		return idgen_counter_problem(problem, psprintf("\"stripes\" is from 1 to %d.", IDGEN_MAX_STRIPES));
	counter->segment = segment ? segment : 1;
	if (counter->segment < 1 ||
		(seq_bits < 63 && counter->segment > (INT64CONST(1) << seq_bits) / counter->stripes))
		return idgen_counter_problem(problem, "\"segment\" must be at least 1, and \"stripes\" segments must fit the seq field.");
	if (owned != NULL)
	{
		if (!idgen_parse_owned(owned, counter, problem))
			return false;
	}
	else
	{
		counter->nowned = counter->stripes;
		for (int s = 0; s < counter->stripes; s++)
			counter->owned[s] = s;
	}
	/* the local values whose seq values fit */
	counter->limit = idgen_counter_first_at(counter, UINT64CONST(1) << seq_bits);
	spec->tick_limit = 0;

	/* a start: the first local value at or above it */
	if (start < 0 || (seq_bits < 63 && start >= (INT64CONST(1) << seq_bits)))
	{
		problem->sqlstate = ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
		problem->message = psprintf("\"start\" " INT64_FORMAT " is out of range", start);
		problem->detail = psprintf("A %d-bit seq field holds values from 0 to " UINT64_FORMAT ".",
								   seq_bits, (UINT64CONST(1) << seq_bits) - 1);
		problem->hint = NULL;
		return false;
	}
	counter->start = (uint64) start;
	counter->first = idgen_counter_first_at(counter, counter->start);
	if (counter->first >= counter->limit)
	{
		problem->sqlstate = ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE;
		problem->message = psprintf("no value of the owned stripes lies at or above \"start\" " INT64_FORMAT, start);
		problem->detail = NULL;
		problem->hint = NULL;
		return false;
	}
	return true;
}

/* The options as text, for the registry and the view. */
char *
idgen_counter_options_text(const IdgenSpec *spec)
{
	const IdgenCounterSpec *counter = &spec->counter;
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < counter->nowned; i++)
	{
		int			lo = counter->owned[i];

		while (i + 1 < counter->nowned && counter->owned[i + 1] == counter->owned[i] + 1)
			i++;
		appendStringInfo(&buf, "%s%d", buf.len > 0 ? "," : "", lo);
		if (counter->owned[i] != lo)
			appendStringInfo(&buf, "-%d", counter->owned[i]);
	}
	return buf.data;
}

/* Does the counter own the seq value's stripe? */
static bool
idgen_counter_owns(const IdgenCounterSpec *counter, uint64 value)
{
	int32		stripe = (int32) ((value / (uint64) counter->segment) %
								  (uint64) counter->stripes);

	for (int i = 0; i < counter->nowned; i++)
		if (counter->owned[i] == stripe)
			return true;
	return false;
}

/* how many segment boundaries idgen_counter_sets_meet() walks at most */
#define IDGEN_COUNTER_MEET_STEPS (1 << 22)

/*
 * Can two counters whose seq fields lie in the same bits hand out a common
 * seq value in [from, below)?  Their owned sets repeat every lcm(N * S)
 * values, so one period from "from" is walked, segment boundary by segment
 * boundary; beyond IDGEN_COUNTER_MEET_STEPS boundaries (periods of
 * billions with small segments) the answer is "yes", which refuses a
 * definition rather than risk a duplicate.
 */
bool
idgen_counter_sets_meet(const IdgenCounterSpec *a, const IdgenCounterSpec *b,
						uint64 from, uint64 below)
{
	uint64		limit = below > from ? below - from : 0;
	uint64		pa;
	uint64		pb;
	uint64		gcd;
	uint64		r;
	uint64		period;
	uint64		v = from;

	/*
	 * stripes * segment fits: a counter's seq field has at most 52 bits and
	 * its stripes' segments fit it (idgen_parse_counter_options); were it
	 * ever not so, meeting is the safe answer.
	 */
	if (pg_mul_u64_overflow((uint64) a->stripes, (uint64) a->segment, &pa) ||
		pg_mul_u64_overflow((uint64) b->stripes, (uint64) b->segment, &pb) ||
		pa == 0 || pb == 0)
		return true;
	gcd = pa;
	r = pb;

	while (r != 0)
	{
		uint64		t = gcd % r;

		gcd = r;
		r = t;
	}
	if (pa / gcd > limit / pb + 1)
		period = limit;
	else
		period = Min(limit, pa / gcd * pb);

	for (int steps = 0; v - from < period; steps++)
	{
		uint64		next_a;
		uint64		next_b;

		if (steps >= IDGEN_COUNTER_MEET_STEPS)
			return true;
		if (idgen_counter_owns(a, v) && idgen_counter_owns(b, v))
			return true;
		next_a = (v / (uint64) a->segment + 1) * (uint64) a->segment;
		next_b = (v / (uint64) b->segment + 1) * (uint64) b->segment;
		v = Min(next_a, next_b);
	}
	return false;
}

/* The seq value of the c-th local counter value (see the header). */
uint64
idgen_counter_value(const IdgenCounterSpec *counter, uint64 c)
{
	uint64		k = c / (uint64) counter->segment;
	uint64		g = (k / counter->nowned) * counter->stripes +
		counter->owned[k % counter->nowned];

	return g * (uint64) counter->segment + c % (uint64) counter->segment;
}

/*
 * How many values beyond the durable reservation a caller may take,
 * pending the end of the statement that took them (see the header).
 */
uint64
idgen_counter_lead(const IdgenSpec *spec)
{
	uint64		share = spec->counter.limit / IDGEN_COUNTER_RANGE_SHARE;

	return Max((uint64) spec->counter.prefetch, Min(IDGEN_COUNTER_MAX_LEAD, share));
}
