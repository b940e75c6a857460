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

my $primary = idgen_node('primary', allows_streaming => 1, conf => "idgen.node_id = 1\n");
# --- a restart with the clock frozen: only the durable floor helps --------
# idgen's clock (the test-only idgen.test_clock, which the keeper reads
# too) stands still a minute in the past, so every round of IDs runs ahead
# of it: more IDs than one millisecond holds, asserted before each stop.
# A generator that came back from a restart at the clock, rather than at
# the durable reservation, would issue below the last round.  Each kind
# of generator: snowflake, an instagram shard, idgen_uuidv7(),
# idgen_flake128(), a named time generator and a counter; after a clean
# restart and after an immediate stop.  max_lead is wide enough for the
# floors, which lie a reservation ahead of the frozen clock.
my $frozen_ms = (time() - 60) * 1000;
$primary->append_conf('postgresql.conf',
	"idgen.test_clock = '$frozen_ms'\nidgen.max_lead = 30s\n");
$primary->start;
need_test_clock($primary);
wait_for_keeper($primary);
$primary->safe_psql('postgres', q{
	SELECT idgen_create_generator('legacy', 'time:42 datacenter:3 worker:6 seq:12',
	                              epoch => '2020-08-02 18:33:54.706+00');
	SELECT idgen_create_generator('tickets', 'zone:7=3 worker:16 seq:40');
	CREATE TABLE ids (round int, kind text, id bigint, u uuid);
});

# kind => [SQL that adds round %d, the ID's Unix ms (undef: no clock)]
my %kinds = (
	snowflake => [ q{INSERT INTO ids (round, kind, id)
		SELECT %d, 'snowflake', unnest(snowflake_id_batch(20000))},
		q{(extract(epoch FROM snowflake_id_time(id)) * 1000)::bigint} ],
	instagram => [ q{INSERT INTO ids (round, kind, id)
		SELECT %d, 'instagram', unnest(instagram_id_batch(11, 20000))},
		q{(extract(epoch FROM instagram_id_time(id)) * 1000)::bigint} ],
	uuidv7 => [ q{INSERT INTO ids (round, kind, u)
		SELECT %d, 'uuidv7', idgen_uuidv7() FROM generate_series(1, 20000)},
		q{('x' || substr(replace(u::text, '-', ''), 1, 12))::bit(48)::bigint} ],
	flake128 => [ q{INSERT INTO ids (round, kind, u)
		SELECT %d, 'flake128', idgen_flake128() FROM generate_series(1, 100000)},
		q{('x' || substr(replace(u::text, '-', ''), 1, 16))::bit(64)::bigint} ],
	legacy => [ q{INSERT INTO ids (round, kind, id)
		SELECT %d, 'legacy', unnest(idgen_next_batch('legacy', 20000))},
		q{(extract(epoch FROM idgen_time('legacy', id)) * 1000)::bigint} ],
	tickets => [ q{INSERT INTO ids (round, kind, id)
		SELECT %d, 'tickets', idgen_next('tickets') FROM generate_series(1, 1000)},
		undef ],
);
my @kinds = sort keys %kinds;

sub add_round
{
	my ($round) = @_;
	$primary->safe_psql('postgres', sprintf($kinds{$_}[0], $round)) for @kinds;
}

# The kinds whose IDs of $round, or of an earlier round, do not all lie
# above every earlier ID of their kind, or repeat one: "" when every kind
# continues above.
sub not_above
{
	my ($round) = @_;
	return rounds_not_above($primary, 'SELECT round, kind, id, u FROM ids', $round);
}

# The time kinds whose last ID of $round is not ahead of the frozen clock:
# "" when all are, so that a restart at the clock would go below them.
sub not_ahead
{
	my ($round) = @_;
	return join(' ', grep {
		defined $kinds{$_}[1]
		  && $primary->safe_psql('postgres', sprintf(
			  q{SELECT max(%s) > %s FROM ids WHERE round = %d AND kind = '%s'},
			  $kinds{$_}[1], $frozen_ms, $round, $_)) ne 't'
	} @kinds);
}

add_round(1);
is(not_ahead(1), '', 'the first round runs ahead of the frozen clock, every time generator');
is($primary->safe_psql('postgres',
		'SELECT snowflake_lead_ms > 0, instagram_lead_ms > 0 FROM idgen_status()'),
	't|t', 'idgen_status() shows the lead');
$primary->restart;
wait_for_keeper($primary);
add_round(2);
is(not_above(2), '', 'after a clean restart, every kind of generator continues above all earlier IDs');
is(not_ahead(2), '', 'the second round runs ahead of the frozen clock too');
$primary->stop('immediate');
$primary->start;
wait_for_keeper($primary);
add_round(3);
is(not_above(3), '', 'after an immediate stop, every kind of generator continues above all earlier IDs');
is($primary->safe_psql('postgres', 'SELECT snowflake_issued, instagram_issued FROM idgen_status()'),
	'20000|20000', 'counters start afresh with the server');

# The real clock again, a minute past every ID so far, and the default
# clock policy.
set_and_reload($primary, 'idgen.test_clock' => '', 'idgen.max_lead' => '2s');
$primary->safe_psql('postgres', q{
	CREATE TABLE t (round int, sf bigint DEFAULT snowflake_id(), ig bigint DEFAULT instagram_id(11));
});
my $insert = 'INSERT INTO t (round) SELECT %d FROM generate_series(1, 5000)';

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
my $standby = standby_from_backup($primary, 'standby', conf => "idgen.node_id = 2\n");
$primary->safe_psql('postgres', sprintf($insert, 4));
$primary->wait_for_catchup($standby);

for my $call ('snowflake_id()', 'instagram_id(11)')
{
	my $err = error_report_of($standby, "SELECT $call");
	like($err, qr/ERROR:\s+25006: cannot call \w+\(\) during recovery/,
		"standby refuses $call with 25006");
	like($err, qr/HINT:\s+Call \w+\(\) on the primary/, "standby's $call error hints at the primary");
}
is($standby->safe_psql('postgres',
		'SELECT count(*), bool_and(snowflake_id_node(sf) = 1), bool_and(instagram_id_shard(ig) = 11) FROM t'),
	'5000|t|t', 'the standby decodes replicated IDs');
is($standby->safe_psql('postgres', 'SELECT node_id, snowflake_issued FROM idgen_status()'),
	'2|0', 'idgen_status() works on the standby and shows nothing issued');

$standby->stop;
$primary->stop;
done_testing();
