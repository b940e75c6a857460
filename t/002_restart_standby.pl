# IDs keep increasing across a server restart, and a standby refuses to
# generate (it would collide with its primary) while decoding replicated
# IDs normally.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf',
	"shared_preload_libraries = 'idgen'\nidgen.node_id = 1\n");
$primary->start;
wait_for_keeper($primary);
$primary->safe_psql('postgres', q{
	CREATE TABLE t (round int, sf bigint DEFAULT snowflake_id(), ig bigint DEFAULT instagram_id(11));
});

my $insert = 'INSERT INTO t (round) SELECT %d FROM generate_series(1, 5000)';
$primary->safe_psql('postgres', sprintf($insert, 1));

# Every round's IDs must lie above all IDs of earlier rounds.
sub rounds_ordered
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
		SELECT bool_and(sf_min > prev_sf_max AND ig_min > prev_ig_max)
		  FROM (SELECT min(sf) AS sf_min, min(ig) AS ig_min,
		               lag(max(sf), 1, 0::bigint) OVER (ORDER BY round) AS prev_sf_max,
		               lag(max(ig), 1, 0::bigint) OVER (ORDER BY round) AS prev_ig_max
		          FROM t GROUP BY round) r});
}

# Restart: shared memory starts afresh, the clock has moved on.
$primary->restart;
$primary->safe_psql('postgres', sprintf($insert, 2));
$primary->restart;
$primary->safe_psql('postgres', sprintf($insert, 3));
is(rounds_ordered($primary), 't', 'IDs after each restart are above all earlier IDs');
is($primary->safe_psql('postgres',
		'SELECT count(*), count(DISTINCT sf), count(DISTINCT ig) FROM t'),
	'15000|15000|15000', 'no duplicates across restarts');
is($primary->safe_psql('postgres', 'SELECT snowflake_issued, instagram_issued FROM idgen_status()'),
	'5000|5000', 'counters start afresh with the server');

# A burst to the limit of idgen.max_lead, then an immediate stop and a
# start at once: the durable reservation reaches up to max_lead plus
# idgen.reservation ahead of the old clock.  With the defaults (reservation
# <= max_wait) the first calls may wait, but must not fail.
#
# The burst goes on until a call had to wait for the clock, which a call
# does only when its IDs would lie beyond max_lead.  It issues batches:
# one call takes 24 ms of snowflake sequence space (98 ms of a shard's)
# and costs far less, so even a slow machine gets there, where single
# calls may never get ahead of the clock.  Bounded by time all the same;
# on the deadline, reached is false.
$primary->safe_psql('postgres', qq{
	CREATE FUNCTION burst(batch text, OUT reached boolean, OUT last bigint)
	LANGUAGE plpgsql AS \$\$
	DECLARE
		deadline timestamptz := clock_timestamp()
		                        + interval '$PostgreSQL::Test::Utils::timeout_default s';
		waits_before bigint := (SELECT waits FROM idgen_status());
		ids bigint[];
	BEGIN
		LOOP
			EXECUTE 'SELECT ' || batch INTO ids;
			last := ids[array_upper(ids, 1)];
			reached := (SELECT waits > waits_before FROM idgen_status());
			EXIT WHEN reached OR clock_timestamp() > deadline;
		END LOOP;
	END \$\$});
my ($sf_reached, $sf_last) = split /\|/,
  $primary->safe_psql('postgres', q{SELECT * FROM burst('snowflake_id_batch(100000)')});
my ($ig_reached, $ig_last) = split /\|/,
  $primary->safe_psql('postgres', q{SELECT * FROM burst('instagram_id_batch(11, 100000)')});
is("$sf_reached|$ig_reached", 't|t',
	'the burst reached max_lead: both generators had to wait for the clock');
note 'lead before the stop: '
  . $primary->safe_psql('postgres', 'SELECT snowflake_lead_ms, instagram_lead_ms FROM idgen_status()');
$primary->stop('immediate');
$primary->start;
my ($ret, $out, $err) = $primary->psql('postgres',
	"SELECT snowflake_id() > $sf_last, instagram_id(11) > $ig_last");
is($out, 't|t', 'after a burst and an immediate restart, the first calls succeed above every earlier ID');
is($err, '', '(no error)');

# A streaming standby, configured with its own node id as it should be.
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf', "idgen.node_id = 2\n");
$standby->start;
$primary->safe_psql('postgres', sprintf($insert, 4));
$primary->wait_for_catchup($standby);

for my $call ('snowflake_id()', 'instagram_id(11)')
{
	my ($ret, $out, $err) = $standby->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT $call", on_error_stop => 1);
	like($err, qr/ERROR:\s+25006: cannot call \w+\(\) during recovery/,
		"standby refuses $call with 25006");
	like($err, qr/HINT:\s+Call \w+\(\) on the primary/, "standby's $call error hints at the primary");
}
is($standby->safe_psql('postgres',
		'SELECT count(*), bool_and(snowflake_id_node(sf) = 1), bool_and(instagram_id_shard(ig) = 11) FROM t'),
	'20000|t|t', 'the standby decodes replicated IDs');
is($standby->safe_psql('postgres', 'SELECT node_id, snowflake_issued FROM idgen_status()'),
	'2|0', 'idgen_status() works on the standby and shows nothing issued');

$standby->stop;
$primary->stop;
done_testing();
