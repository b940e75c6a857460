# Named generators keep idgen's guarantees: unique and strictly increasing
# under concurrency and from several databases, bursts that borrow ticks of
# their own unit, the durable reservation across an immediate stop with the
# clock set back, refusal on a standby, failover, and definitions or node
# ids that no longer fit refused rather than followed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Spec;
use POSIX qw(strftime);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('named', allows_streaming => 1, conf => q{
idgen.node_id = 3
});
# The real clock until the burst below: libfaketime is only needed there,
# and the concurrent part runs without it.
my ($set_clock, $start) = fake_clock($node, '+0');
$node->start;
need_test_clock($node);
wait_for_keeper($node);
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('legacy', 'time:42 datacenter:3 worker:6 seq:12',
	                              epoch => '2020-08-02 18:33:54.706+00');
	SELECT idgen_create_generator('sony', 'sonyflake');
	SELECT idgen_create_generator('shards', 'time:41 shard:6 seq:16', epoch => '2023-01-01+00');
	CREATE DATABASE app;
});
$node->safe_psql('app', q{
	CREATE EXTENSION idgen;
	CREATE TABLE t (g text, id bigint);
});

# --- a coarse unit holds back nothing after a restart ------------------------
# A generator counting minutes: its IDs are spread through the minute, so
# an immediate restart floors every other generator no further ahead than
# usual, and snowflake_id() works at once with the default clock policy.
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('minutes', 'time:30 node:10 seq:23',
	                              epoch => '2024-01-01+00', unit => '1 min')});
my $minute_id = $node->safe_psql('app', q{SELECT max(idgen_next('minutes')) FROM generate_series(1, 100)});
$node->stop('immediate');
$node->start;
is(error_of($node, 'SELECT snowflake_id(), instagram_id(1)'), 'no error',
	'after a minute-unit generator and an immediate restart, snowflake_id() works at once');
# The minute generator itself resumes at once, within its current minute,
# above every ID it issued: its positions are spread through the minute,
# so the durable reservation, a moment, bounds them.  (It used to resume
# at the next minute, blaming the clock for a wait of up to a minute.)
my ($ret, $next_minute, $minute_err) = $node->psql('app',
	"\\set VERBOSITY verbose\nSELECT idgen_next('minutes') > $minute_id");
is("$ret|$next_minute|$minute_err", '0|t|',
	'the minute generator continues at once above its IDs after an immediate restart');

# A day-unit generator, new and after an immediate restart, issues at once
# with the default clock policy, and never an ID twice.  idgen's clock is
# frozen (the test-only idgen.test_clock, which the keeper reads too) at
# the generator's epoch, the start of its first day, and the first round
# runs about 1.5 s ahead of it (150,000 of the day's 2^33 positions, about
# 99 a millisecond): only a floor at the durable reservation, not at the
# clock, keeps the second round above it.  The
# clock stands at the real time, and max_lead is 30 s from here on, so
# that generators floored ahead of the frozen clock by the restart go on
# when it runs again.
my $frozen_s = time();
my $frozen_ms = $frozen_s * 1000;
set_and_reload($node, 'idgen.test_clock' => $frozen_ms, 'idgen.max_lead' => '30s');
$node->safe_psql('postgres', qq{
	SELECT idgen_create_generator('daily', 'time:20 node:10 seq:33', unit => '1 day',
	                              epoch => to_timestamp($frozen_s))});
is(error_of($node, q{
	CREATE TABLE daily AS SELECT 1 AS round, idgen_next('daily') AS id FROM generate_series(1, 150000)}),
	'no error', 'a new day-unit generator issues at once');
is($node->safe_psql('postgres', q{SELECT lead_ms >= 1000 FROM idgen_generator_status WHERE name = 'daily'}),
	't', 'its first round ran more than 1 s ahead of the frozen clock');
$node->stop('immediate');
$node->start;
is(error_of($node, q{INSERT INTO daily SELECT 2, idgen_next('daily') FROM generate_series(1, 50000)}),
	'no error', 'a day-unit generator issues at once after an immediate restart');
is($node->safe_psql('postgres', q{
	SELECT count(DISTINCT id) = 200000,
	       (SELECT min(id) FROM daily WHERE round = 2) > (SELECT max(id) FROM daily WHERE round = 1)
	  FROM daily}),
	't|t', 'unique, and above every ID of before the restart, with the same frozen clock');
set_and_reload($node, 'idgen.test_clock' => '');

# --- 8 concurrent clients over two databases -------------------------------
my $insert = q{INSERT INTO t VALUES ('legacy', idgen_next('legacy')), ('sony', idgen_next('sony')), ('shards', idgen_next('shards', 5));};
$node->safe_psql('postgres', 'CREATE TABLE t (g text, id bigint)');
# concurrent_pgbench runs 2 clients per run, in database postgres; the
# same generators meanwhile in database app
concurrent_pgbench(5, map { [ $node, $insert ] } 1 .. 4);
# every pgbench transaction inserts one row per generator
my $pgbench_rows = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
cmp_ok($pgbench_rows, '>', 0, "pgbench inserted rows ($pgbench_rows)");
is($node->safe_psql('postgres',
		q{SELECT count(DISTINCT n) FROM (SELECT count(*) AS n FROM t GROUP BY g) c}),
	'1', 'pgbench inserted as many rows of each generator');
$node->safe_psql('app', q{
	INSERT INTO t SELECT 'legacy', idgen_next('legacy') FROM generate_series(1, 20000);
	INSERT INTO t SELECT 'sony', idgen_next('sony') FROM generate_series(1, 2000);
	INSERT INTO t SELECT 'shards', idgen_next('shards', 5) FROM generate_series(1, 20000);});
# server-side paths must be absolute (the server runs in its data directory)
my $csv = File::Spec->rel2abs($node->basedir) . '/t.csv';
$node->safe_psql('postgres', "COPY t TO '$csv'");
$node->safe_psql('app', "COPY t FROM '$csv'");
# the 42,000 rows of database app and all of pgbench's: none left out
is($node->safe_psql('app', qq{
	SELECT sum(n) = 42000 + $pgbench_rows, bool_and(n = 1)
	  FROM (SELECT g, id, count(*) AS n FROM t GROUP BY 1, 2) c}),
	't|t', '8 concurrent clients and a second database: no duplicate in any named generator');

# --- bursts borrow ticks of the generator's unit ----------------------------
# Sonyflake: 256 IDs per 10 ms tick, spread through the tick.  With the
# clock frozen on a tick's start and max_lead 100 ms, the positions up to
# 100 ms ahead are issued: 10 whole ticks of 256, and the 26 positions of
# the 11th that stand at its start (256 * 1/10 ms rounded up), then 53400.
$node->append_conf('postgresql.conf', "idgen.max_lead = 100ms\nidgen.max_wait = 200ms\n");
# The clock is frozen on a whole second (a tick boundary) beyond anything
# the generators issued.  That is not the real clock: the concurrent clients
# above requested sonyflake IDs faster than its 25,600 a second, so its IDs
# run ahead of the clock by however much faster this machine is, up to the
# 30 s max_lead.  So take the furthest the three generators have reached,
# and the real clock, whichever is later, and freeze 5 s beyond it: a
# restart floors the generators up to a reservation, about a second, ahead
# of that.  The clock is set only once the server has stopped, so that its
# keeper never reserves from the frozen clock.
my $frontier_s = $node->safe_psql('app', q{
	SELECT ceil(extract(epoch FROM greatest(idgen_time('legacy', idgen_next('legacy')),
	                                        idgen_time('sony', idgen_next('sony')),
	                                        idgen_time('shards', idgen_next('shards', 5)))))});
$node->stop('fast');
my $burst_s = (time() > $frontier_s ? time() : $frontier_s) + 5;
$set_clock->(strftime('%Y-%m-%d %H:%M:%S', gmtime($burst_s)));
$start->('start');
wait_for_keeper($node);
$node->poll_query_until('postgres', "SELECT current_setting('idgen.max_lead') = '100ms'")
  or die 'idgen.max_lead was not set';
$node->safe_psql('postgres',
	q{CREATE TABLE burst AS SELECT g, idgen_next('sony') AS id FROM generate_series(1, 2586) g});
is($node->safe_psql('postgres', q{
	SELECT count(DISTINCT t), count(*) FILTER (WHERE n = 256), min(n),
	       bool_and(id > p OR p IS NULL), max(t) - min(t)
	  FROM (SELECT id, idgen_time('sony', id) AS t, lag(id) OVER (ORDER BY g) AS p,
	               count(*) OVER (PARTITION BY idgen_time('sony', id)) AS n FROM burst) s}),
	'11|2560|26|t|00:00:00.1', 'sonyflake under a frozen clock: 256 per 10 ms tick for 10 ticks, 26 of the 11th (max_lead 100 ms)');
like(error_of($node, q{SELECT idgen_next('sony')}), qr/^53400: sony ID capacity exceeded/,
	'then 53400 after waiting for the frozen clock');
# --- immediate stop, clock 10 s back, start ---------------------------------
$set_clock->('+0');
# the IDs are now ahead of the clock, by up to the wait for the frozen
# second: only a max_lead that covers that, and the 10 s step back below,
# lets them go on
# (in whole minutes: SHOW, which set_and_reload waits on, prints them so)
my $lead_min = int((($burst_s > time() ? $burst_s - time() : 0) + 40) / 60) + 1;
set_and_reload($node, 'idgen.max_lead' => "${lead_min}min", 'idgen.max_wait' => '1s');
$node->safe_psql('app', q{
	CREATE TABLE r AS SELECT 1 AS round, idgen_next('legacy') AS l, idgen_next('sony') AS s,
	                         idgen_next('shards', 9) AS sh
	  FROM generate_series(1, 3000)});
$node->stop('immediate');
$set_clock->('-10s');
$start->('start');
wait_for_keeper($node);
$node->safe_psql('app', q{
	INSERT INTO r SELECT 2, idgen_next('legacy'), idgen_next('sony'), idgen_next('shards', 9)
	  FROM generate_series(1, 3000)});
is($node->safe_psql('app', q{
	SELECT min(l) FILTER (WHERE round = 2) > max(l) FILTER (WHERE round = 1),
	       min(s) FILTER (WHERE round = 2) > max(s) FILTER (WHERE round = 1),
	       min(sh) FILTER (WHERE round = 2) > max(sh) FILTER (WHERE round = 1)
	  FROM r}),
	't|t|t', 'after an immediate stop with the clock 10 s back, every named generator continues above its earlier IDs');

# --- a standby refuses; promoted, it continues above ------------------------
my $standby = standby_from_backup($node, 'named_standby', conf => "idgen.node_id = 4\n");
$node->safe_psql('app', q{INSERT INTO r SELECT 3, idgen_next('legacy'), idgen_next('sony'), idgen_next('shards', 9) FROM generate_series(1, 3000)});
$node->wait_for_catchup($standby);
like(error_of($standby, "SELECT idgen_next('legacy')", 'app'), qr/^25006: /,
	'a standby refuses idgen_next() with 25006');
$node->stop('immediate');
$standby->promote;
ok(keeper_ready($standby, 'app'),
	'the promoted standby is ready');
$standby->safe_psql('app', q{INSERT INTO r SELECT 4, idgen_next('legacy'), idgen_next('sony'), idgen_next('shards', 9) FROM generate_series(1, 3000)});
is($standby->safe_psql('app', q{
	SELECT min(l) FILTER (WHERE round = 4) > max(l) FILTER (WHERE round < 4),
	       min(s) FILTER (WHERE round = 4) > max(s) FILTER (WHERE round < 4),
	       bool_and((idgen_decode('legacy', l) ->> 'worker')::int = 4) FILTER (WHERE round = 4),
	       count(*) = count(DISTINCT l)
	  FROM r}),
	't|t|t|t', 'after failover the definitions are there and IDs continue above the old primary\'s, with the new node id');

# --- definitions that no longer hold are refused ----------------------------
# a definition changed behind idgen's back (the guard trigger disabled)
$standby->safe_psql('postgres', q{
	ALTER TABLE idgen_generator DISABLE TRIGGER idgen_generator_guard;
	UPDATE idgen_generator SET unit_ms = 2 WHERE name = 'legacy';
	ALTER TABLE idgen_generator ENABLE TRIGGER idgen_generator_guard;
});
ok($standby->poll_query_until('app', "SELECT state = 'refused' FROM idgen_generator_status WHERE name = 'legacy'"),
	'the keeper refuses a definition that changed');
like(error_of($standby, "SELECT idgen_next('legacy')", 'app'),
	qr/^55000: generator "legacy" cannot issue IDs on this server/,
	'idgen_next() on it fails with 55000');
is($standby->safe_psql('app', "SELECT idgen_next('sony') > 0"), 't', 'other generators go on');

# a node id that does not fit the node fields, at start
$standby->append_conf('postgresql.conf', "idgen.node_id = 600\n");
$standby->restart;
ok(keeper_ready($standby, 'app'), 'restarted with node id 600');
my (undef, undef, $err) = $standby->psql('app', "\\set VERBOSITY verbose\nSELECT idgen_next('sony')");
is($err, '', 'sonyflake (16 machine bits) takes node id 600');
(undef, undef, $err) = $standby->psql('app', "\\set VERBOSITY verbose\nSELECT idgen_next('shards', 1)");
is($err, '', 'a layout without node fields needs no node id');
# (a new shared memory loads the row as it is now; the node id decides)
$err = error_report_of($standby, "SELECT idgen_next('legacy')", 'app');
like($err, qr/ERROR:\s+55000: generator "legacy" cannot issue IDs on this server\nDETAIL:\s+"idgen.node_id" \(600\) does not fit its 9 node bits/,
	'node id 600 does not fit legacy\'s 9 node bits: refused with 55000, saying why');

# no node id at all: the error snowflake_id() gives, not a hint to drop it
$standby->append_conf('postgresql.conf', "idgen.node_id = -1\n");
$standby->restart;
ok(keeper_ready($standby, 'app'), 'restarted without a node id');
for my $name ('legacy', 'sony')
{
	$err = error_report_of($standby, "SELECT idgen_next('$name')", 'app');
	like($err, qr/ERROR:\s+55000: "idgen.node_id" is not set/,
		"$name, with node fields, says the node id is not set");
	unlike($err, qr/drop it|does not fit/, "$name: no hint to drop it");
}

$standby->stop;
done_testing();
