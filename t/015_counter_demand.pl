# A counter generator under demand: a session calling it in a tight loop
# must not wait for a durable commit every "prefetch" values.  The keeper
# grows the counter's reservation step (shown as prefetch and refill in
# idgen_generators), up to its ceiling, and shrinks it back to the defined
# prefetch when demand drops.  Properties only, read from the view and
# from transaction ids (each durable counter extension is one keeper
# transaction); no timing.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = PostgreSQL::Test::Cluster->new('demand');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'idgen'\nidgen.node_id = 5\n");
$node->start;
wait_for_keeper($node);
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('burst', 'zone:7=3 worker:16 seq:40');
	SELECT idgen_create_generator('narrow', 'tag:12=2048 seq:20');
	SELECT idgen_create_generator('striped', 'seq:31', stripes => 3, owned => '0,2', segment => 7);
	CREATE TABLE s (n bigint, id bigint);});

sub view
{
	my ($name, $cols) = @_;
	return $node->safe_psql('postgres',
		"SELECT $cols FROM idgen_generators WHERE name = '$name'");
}

# No extension is due: at least refill values remain, so the view's
# reservation is the durable one and stays put while nobody calls.
sub settle
{
	my ($name) = @_;
	$node->poll_query_until('postgres', qq{
		SELECT counter_reserved - counter_value - 1 >= refill
		  FROM idgen_generators WHERE name = '$name'})
	  or die "the keeper did not extend counter $name";
}

# --- a quiet counter reserves prefetch at a time -----------------------------
# once the keeper has loaded the new definition and made its first
# reservation; a call before that waits for it
ok($node->poll_query_until('postgres',
		"SELECT counter_reserved = 1000 FROM idgen_generators WHERE name = 'burst'"),
	'the keeper reserves a new counter ahead of its first call');
$node->safe_psql('postgres', "SELECT idgen_next('burst')") for 1 .. 10;
is(view('burst', 'waits, prefetch, refill, counter_reserved'), '0|1000|500|1000',
	'a quiet counter reserves the defined prefetch (1,000) and refill (500)');

# --- a tight loop: far fewer waits and durable writes than N / prefetch ------
# Before the adaptive step, 2,000,000 calls at prefetch 1,000 waited 1,998
# times for 1,998 durable commits.
my $n = 2_000_000;
my $xid0 = $node->safe_psql('postgres', 'SELECT txid_current()');
is($node->safe_psql('postgres', qq{
	SELECT count(DISTINCT id), max(id) - min(id) + 1
	  FROM (SELECT idgen_next('burst') AS id FROM generate_series(1, $n)) s}),
	"$n|$n", "$n values from one statement: distinct and dense");
my $writes = $node->safe_psql('postgres', 'SELECT txid_current()') - $xid0 - 1;
my ($waits, $step, $refill) = split /\|/, view('burst', 'waits, prefetch, refill');
# The step aims at about 100 ms of demand, so the writes grow with the
# statement's duration: the bound (a quarter of N / prefetch) leaves a slow
# machine 25 s.
cmp_ok($waits, '<', $n / 1000 / 4,
	"the loop waited $waits times for a reservation, far fewer than $n / prefetch");
cmp_ok($writes, '<', $n / 1000 / 4,
	"the keeper made $writes durable writes, far fewer than $n / prefetch");
cmp_ok($step, '>', 1000, "under demand the step grew beyond prefetch: $step");
cmp_ok($step, '<=', 1 << 20, 'and stays within its ceiling of 2^20 values');
is($refill, int($step / 2), 'refill grows with it (refill / prefetch as defined)');

# one reservation (the step in force) at most beyond the last value
settle('burst');
is(view('burst', 'counter_reserved - counter_value - 1 <= prefetch'), 't',
	'the reservation reaches at most one step beyond the last value handed out');

# --- demand drops: the step shrinks back to prefetch -------------------------
# Batches of a 32nd of the step, each after the keeper has finished any
# extension and at least 10 ms after the one before: under half a step per
# 100 ms, none while a commit runs, never running out.  Every extension
# then halves the step.  (Sleeping longer only lowers the demand.)
$node->safe_psql('postgres', q{
	DO $$
	DECLARE
		step bigint;
		settled boolean;
	BEGIN
		FOR i IN 1 .. 5000 LOOP
			SELECT counter_reserved - counter_value - 1 >= refill, prefetch
			  INTO settled, step FROM idgen_generators WHERE name = 'burst';
			IF NOT settled THEN
				PERFORM pg_sleep(0.001);
				CONTINUE;
			END IF;
			EXIT WHEN step = 1000;
			PERFORM idgen_next_batch('burst', greatest(step / 32, 1)::int);
			PERFORM pg_sleep(0.01);
		END LOOP;
	END $$});
is(view('burst', 'prefetch, refill'), '1000|500',
	'when demand drops the step shrinks back to the defined prefetch and refill');

# --- a narrow counter: the step stays within 1/1024 of its range -------------
# seq:20 holds 1,048,576 values: its ceiling is max(prefetch, 2^20 / 1024)
is($node->safe_psql('postgres', q{
	SELECT count(DISTINCT id), max(id) - min(id) + 1
	  FROM (SELECT idgen_next('narrow') AS id FROM generate_series(1, 300000)) s}),
	'300000|300000', 'a narrow counter: 300,000 values, distinct and dense');
cmp_ok(view('narrow', 'prefetch'), '<=', 1024,
	'its step stays within 1/1024 of its range (1,024 values)');

# --- a striped counter: the step counts this server's own values ------------
# stripes 0 and 2 of 3, segments of 7: the n-th value (from 0) is
# (n / 14) * 21 + {0, 14}[(n / 7) % 2] + n % 7
$node->safe_psql('postgres', q{
	INSERT INTO s SELECT n - 1, idgen_next('striped') FROM generate_series(1, 500000) n});
is($node->safe_psql('postgres', q{
	SELECT count(*), bool_and(id = (n / 14) * 21 + ((n / 7) % 2) * 14 + n % 7)
	  FROM s}),
	'500000|t', 'a striped counter under demand hands out exactly its own stripes, in order, none skipped');

# --- what a crash skips: at most the documented bound ------------------------
# After an immediate stop a counter resumes at its durable reservation:
# above every value handed out, skipping at most one step, so at most
# max(prefetch, min(2^20, 1/1024 of its values)).  A quiet counter skips at
# most prefetch; one stopped in a tight loop at most 2^20 (seq:40).
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('quiet', 'zone:7=5 worker:16 seq:40')});
$node->poll_query_until('postgres',
	"SELECT counter_reserved = 1000 FROM idgen_generators WHERE name = 'quiet'")
  or die 'the keeper did not reserve counter quiet';
my $quiet_last = $node->safe_psql('postgres',
	"SELECT max(idgen_next('quiet')) FROM generate_series(1, 10)");
my $burst_last = $node->safe_psql('postgres',
	"SELECT max(idgen_next('burst')) FROM generate_series(1, 2000000)");
$node->stop('immediate');
$node->start;
wait_for_keeper($node);
my ($quiet_next, $burst_next) = split /\|/, $node->safe_psql('postgres',
	"SELECT idgen_next('quiet'), idgen_next('burst')");
cmp_ok($quiet_next, '>', $quiet_last, 'a quiet counter resumes above its values after a crash');
cmp_ok($quiet_next - $quiet_last - 1, '<=', 1000,
	'skipping at most prefetch (1,000): ' . ($quiet_next - $quiet_last - 1));
cmp_ok($burst_next, '>', $burst_last, 'a counter stopped in a tight loop resumes above its values');
cmp_ok($burst_next - $burst_last - 1, '<=', 1 << 20,
	'skipping at most one step, within 2^20: ' . ($burst_next - $burst_last - 1));

done_testing();
