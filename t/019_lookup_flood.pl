# A loop of unknown generator names, from any role, cannot keep the keeper
# from its reservations.
#
# Each call for a name not loaded asks the keeper to load the definitions
# and waits for a load that began after it.  The keeper answers such
# requests at most every 100 ms (together: one load answers every request
# made before it began), does its reservation work first each round, and
# loads at once only for a definition that a transaction committed.  Here
# plain roles flood it with unknown names while another session draws from
# a counter with a small prefetch and from snowflake_id() with a short
# reservation: those calls never fail, the unknown names are refused with
# 42704, no more often than one load per 100 ms allows, and a generator
# created meanwhile is usable at its first call after the commit.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $flooders = 4;
my $flood_seconds = 4;
my $min_interval_ms = 100;	# the keeper's documented rate of lookup loads

my $node = idgen_node('flood', conf => q{
idgen.node_id = 1
idgen.reservation = '50ms'
max_connections = 40
});
$node->start;
wait_for_keeper($node);
$node->safe_psql('postgres', q{
	CREATE ROLE flooder LOGIN;
	CREATE TABLE stop_drawing (done boolean);
	GRANT SELECT ON stop_drawing TO flooder;
	SELECT idgen_create_generator('ctr', 'zone:7=3 worker:16 seq:40',
	                              prefetch => 10, refill => 5);
	SELECT idgen_grant_generator('ctr', 'PUBLIC');});
is($node->safe_psql('postgres', q{SELECT idgen_next('ctr') > 0 AND snowflake_id() > 0}),
	't', 'the counter and snowflake_id() issue before the flood');

# the session that draws until told to stop, counting failures
my $drawer = psql_background($node, 'postgres', q{
DO $$
DECLARE
	drawn int := 0;
	failed int := 0;
	last_ctr bigint := 0;
	last_sf bigint := 0;
	c bigint;
	s bigint;
	decreasing int := 0;
BEGIN
	WHILE NOT EXISTS (SELECT FROM stop_drawing) LOOP
		BEGIN
			c := idgen_next('ctr');
			s := snowflake_id();
			IF c <= last_ctr OR s <= last_sf THEN
				decreasing := decreasing + 1;
			END IF;
			last_ctr := c;
			last_sf := s;
			drawn := drawn + 1;
		EXCEPTION WHEN OTHERS THEN
			failed := failed + 1;
			RAISE WARNING 'draw failed: % %', SQLSTATE, SQLERRM;
		END;
	END LOOP;
	RAISE NOTICE 'drawn: % failed: % decreasing: %', drawn, failed, decreasing;
END $$}, user => 'flooder', timeout => $PostgreSQL::Test::Utils::timeout_default);

# the flooders: distinct unknown names, so no call site remembers one
my @flood;
for my $f (1 .. $flooders)
{
	push @flood, psql_background($node, 'postgres', qq{
DO \$\$
DECLARE
	t0 timestamptz := clock_timestamp();
	unknown int := 0;
	other int := 0;
	g int := 0;
BEGIN
	WHILE clock_timestamp() < t0 + interval '$flood_seconds s' LOOP
		g := g + 1;
		BEGIN
			PERFORM idgen_next('no_such_${f}_' || g);
		EXCEPTION
			WHEN undefined_object THEN
				unknown := unknown + 1;
			WHEN OTHERS THEN
				other := other + 1;
		END;
	END LOOP;
	RAISE NOTICE 'unknown: % other: % ms: %', unknown, other,
		round(extract(epoch FROM clock_timestamp() - t0) * 1000);
END \$\$}, user => 'flooder', timeout => $PostgreSQL::Test::Utils::timeout_default);
}
ok($node->poll_query_until('postgres', qq{
	SELECT count(*) = $flooders FROM pg_stat_activity
	 WHERE state = 'active' AND query LIKE '%no_such_%'
	   AND pid <> pg_backend_pid()}),
	'the flooders are running');

# a definition committed during the flood is usable at the next call
my ($ret, $out, $err) = $node->psql('postgres', q{
DO $$
BEGIN
	PERFORM idgen_create_generator('fresh', 'time:41 tag:7=5 node:10 seq:5');
	COMMIT;
	RAISE NOTICE 'fresh: %', idgen_next('fresh') > 0;
END $$});
like($err, qr/NOTICE:\s+fresh: t/,
	'a generator created during the flood issues at its first call');

for my $h (@flood)
{
	$h->{h}->finish;
}
$node->safe_psql('postgres', 'INSERT INTO stop_drawing VALUES (true)');
$drawer->{h}->finish;

note(join("\n", grep { /NOTICE/ } split /\n/, $drawer->{err}));
note('reservation writes/waits: ',
	$node->safe_psql('postgres', 'SELECT reservation_writes, reservation_waits FROM idgen_status()'));
like($drawer->{err}, qr/NOTICE:\s+drawn: [1-9]\d* failed: 0 decreasing: 0\b/,
	'throughout the flood the counter and snowflake_id() issued, in order, and never failed')
  or diag($drawer->{err});

# Each flooder's call waits for a load that began after it, and lookup
# loads are at least $min_interval_ms apart: a few more for the loads that
# follow a definition's commit and for the flood's edges.
for my $f (0 .. $#flood)
{
	my $h = $flood[$f];
	if ($h->{err} =~ /NOTICE:\s+unknown: (\d+) other: (\d+) ms: (\d+)/)
	{
		my ($unknown, $other, $ms) = ($1, $2, $3);
		my $bound = int($ms / $min_interval_ms) + 5;
		note("flooder $f: $unknown unknown names refused in $ms ms");
		ok($unknown > 0 && $other == 0,
			"flooder $f: every unknown name refused with 42704");
		cmp_ok($unknown, '<=', $bound,
			"flooder $f: no more lookups answered than one load per $min_interval_ms ms allows");
	}
	else
	{
		fail("flooder $f reported: $h->{err}");
	}
}

$node->stop;
done_testing();
