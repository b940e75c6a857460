# A definition altered by hand, past its guard trigger, so that it no
# longer parses: the keeper skips it with a LOG line that says why, loads
# the others, and stays ready.  The keeper reads the rows with the same
# parsers the SQL functions use, which return their problem rather than
# raise it; the LOG line's DETAIL is that problem, as the creation would
# have been refused with it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('altered', conf => q{
idgen.node_id = 3
});
$node->start;
wait_for_keeper($node);

$node->safe_psql('postgres', q{
SELECT idgen_create_generator('kept', 'time:41 node:10 seq:12');
SELECT idgen_create_generator('bad_layout', 'time:41 node:10 seq:12', space => 'other');
SELECT idgen_create_generator('bad_counter', 'seq:20', stripes => 2, owned => '1');
});
ok($node->safe_psql('postgres', "SELECT idgen_next('kept') > 0"), 'kept issues');

# what a careless hand does, past the trigger that forbids it
$node->safe_psql('postgres', q{
ALTER TABLE idgen_generator DISABLE TRIGGER idgen_generator_guard;
UPDATE idgen_generator SET layout = 'time:41 node:10 seq:99' WHERE name = 'bad_layout';
UPDATE idgen_generator SET owned = '5' WHERE name = 'bad_counter';
ALTER TABLE idgen_generator ENABLE TRIGGER idgen_generator_guard;
});

# slots keep their definitions while the server runs: a restart reads the rows
my $log_from = -s $node->logfile;
$node->restart;
wait_for_keeper($node);
ok($node->safe_psql('postgres', "SELECT idgen_next('kept') > 0"),
	'kept issues after the restart');
ok(keeper_ready($node), 'the keeper is ready');

my $log;
wait_until(
	sub {
		$log = slurp_file($node->logfile, $log_from);
		return $log =~ /"bad_counter" has an invalid layout/;
	}) or diag("the log:\n$log");
like($log,
	qr/LOG:\s+idgen keeper: named generator "bad_layout" has an invalid layout "time:41 node:10 seq:99"; not loaded\n[^\n]*DETAIL:\s+invalid layout "time:41 node:10 seq:99": Field "seq" must have from 1 to 63 bits\./,
	'the altered layout is skipped, and the log says why');
like($log,
	qr/LOG:\s+idgen keeper: named generator "bad_counter" has an invalid layout "seq:20"; not loaded\n[^\n]*DETAIL:\s+invalid counter options: Owned stripes range from 0 to 1 \("stripes" is 2\)\./,
	'the altered counter options are skipped, and the log says why');
is((() = $log =~ /FATAL|PANIC|server process .* was terminated/g), 0,
	'nothing failed on their account');

done_testing();
