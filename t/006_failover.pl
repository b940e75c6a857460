# Failover: the reservation is WAL-logged, so it reaches the standby; with
# synchronous replication every reservation the primary used is on the
# standby before any ID under it was returned.  A standby refuses to
# generate; once promoted, it continues above every ID the old primary
# issued, although its own clock is behind those IDs.
#
# Both servers run with the default clock policy (idgen.max_lead 2s,
# idgen.max_wait 1s, idgen.reservation 1s) and with libfaketime clocks
# frozen at moments the test chooses, so nothing depends on the machine's
# speed: the primary's clock stands still, so its burst must borrow
# timestamps ahead of it; the standby's clock stands 0.5 s behind the
# primary's, so only the replicated reservation can put its IDs above the
# old primary's.  The promoted standby's first IDs lie at the end of the
# old primary's reservation, 1 s past the primary's clock and so 1.5 s
# ahead of its own: within max_lead, so they are issued at once.  (With a
# skew beyond max_lead minus the reservation the standby would have to
# wait for its clock, and beyond max_lead + max_wait minus the reservation
# it would refuse with 55P03 until its clock caught up: never a duplicate,
# but a frozen clock never catches up.  That is why the skew is 0.5 s and
# not more.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# The primary's frozen clock: a whole second, 10 minutes ahead of the real
# one; the standby's 0.5 s earlier.  Ahead, because on some builds
# (Debian's PostgreSQL 15) libfaketime does not reach the background
# workers: the keeper then reads the real clock.  With the backends' clock
# ahead of it, the keeper's reservation follows what the backends ask for,
# so it ends where it does when the keeper sees the frozen clock too:
# 1 s (idgen.reservation) past the primary's clock.
my $now = time + 600;
my $primary_clock = utc_clock_spec($now);
my $standby_clock = utc_clock_spec($now - 0.5);

my $primary = idgen_node('primary', allows_streaming => 1, conf => q{
idgen.node_id = 1
});
my (undef, $start_primary) = fake_clock($primary, $primary_clock);
$start_primary->('start');
wait_for_keeper($primary);
$primary->safe_psql('postgres', 'CREATE TABLE ids (sf bigint, ig bigint, at timestamptz)');

# The standby: its own node id (as recommended) and its own clock, 0.5 s
# behind the primary's.
my $standby = standby_from_backup($primary, 'standby',
	conf => "idgen.node_id = 2\n", start => 0);
my (undef, $start_standby) = fake_clock($standby, $standby_clock);
$start_standby->('start');
$primary->wait_for_catchup($standby);

# Synchronous from here on: the keeper's commits wait for the standby.
$primary->append_conf('postgresql.conf', "synchronous_standby_names = 'standby'\n");
$primary->reload;
ok($primary->poll_query_until('postgres',
		"SELECT sync_state = 'sync' FROM pg_stat_replication WHERE application_name = 'standby'"),
	'the standby is synchronous');

# A burst on the frozen clock: 100,000 IDs need 25 ms of snowflake and
# 98 ms of instagram sequence space, so the last IDs run ahead of the clock.
$primary->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_id(), instagram_id(300), clock_timestamp() FROM generate_series(1, 100000)');
my ($old_sf, $old_ig, $sf_lead, $ig_lead) = split /\|/, $primary->safe_psql('postgres',
	'SELECT (SELECT max(sf) FROM ids), (SELECT max(ig) FROM ids), snowflake_lead_ms, instagram_lead_ms FROM idgen_status()');
ok($sf_lead > 0 && $ig_lead > 0,
	"the old primary's last IDs are ahead of its clock (snowflake $sf_lead ms, instagram $ig_lead ms)");
is($standby->safe_psql('postgres', qq{
	SELECT clock_timestamp() < snowflake_id_time($old_sf), clock_timestamp() < instagram_id_time($old_ig)}),
	't|t', "the standby's clock is behind the old primary's last IDs");

like(error_of($standby, 'SELECT instagram_id(300)'), qr/^25006: /, 'the standby refuses to generate (25006)');

# Lose the primary without a clean shutdown and promote the standby.
$primary->stop('immediate');
$standby->promote;
ok(keeper_ready($standby),
	'the promoted standby loaded the replicated reservation');

$standby->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_id(), instagram_id(300), clock_timestamp() FROM generate_series(1, 2000)');
is($standby->safe_psql('postgres', qq{
	SELECT min(instagram_id_time(ig)) > instagram_id_time($old_ig),
	       bool_and(ig > $old_ig), bool_and(snowflake_id_time(sf) >= snowflake_id_time($old_sf))
	  FROM ids WHERE snowflake_id_node(sf) = 2}),
	't|t|t', 'the new primary continues above every ID of the old one, its slower clock notwithstanding');
is($standby->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT ig), count(*) - count(DISTINCT sf) FROM ids'),
	'0|0', 'no duplicate across the failover');
is($standby->safe_psql('postgres',
		"SELECT bool_and(instagram_id_time(ig) > at) FROM ids WHERE snowflake_id_node(sf) = 2"),
	't', 'it bridged its slower clock with timestamps ahead of it');

$standby->stop;
done_testing();
