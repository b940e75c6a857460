# A shared ID space keeps its floors when its members' rows are lost.  The
# members of space "orders" hand out values, are dropped, and the
# extension is re-created (its tables, and with them every row of the
# space, are gone); a new member under another name whose IDs meet the
# forgotten ones' starts above every value they handed out on this
# server: the data directory's file records each counter's space and the
# position of its seq field.  One whose seq field lies elsewhere cannot
# be floored so, and is refused (55000), naming the space and the
# forgotten member, never guessed at.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('spacefloors', conf => "idgen.node_id = 3\n");
$node->start;
wait_for_keeper($node);

# Re-create the extension in the keeper's database and restart, so that
# the space's definitions, slots and rows are all gone; the plain table of
# IDs stays.
sub recreate_extension
{
	$node->safe_psql('postgres', 'DROP EXTENSION idgen CASCADE');
	$node->restart;
	wait_for_keeper($node);
	$node->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS idgen');
}

# Two members of $space, $one and $two, apart by a constant field, hand out
# values (kept in table ids under their names) and are dropped; then the
# extension is re-created, so that nothing in its tables remembers them.
sub forgotten_pair
{
	my ($space, $one, $two) = @_;
	$node->safe_psql('postgres', qq{
		SELECT idgen_create_generator('$one', 'top:2=1 seq:31', space => '$space', prefetch => 100);
		SELECT idgen_create_generator('$two', 'top:2=2 seq:31', space => '$space', prefetch => 100);
		INSERT INTO ids SELECT '$one', idgen_next('$one') FROM generate_series(1, 1500);
		INSERT INTO ids SELECT '$two', idgen_next('$two') FROM generate_series(1, 700);
		SELECT idgen_drop_generator('$one', force => true);
		SELECT idgen_drop_generator('$two', force => true);});
	recreate_extension();
}

$node->safe_psql('postgres', 'CREATE TABLE ids (era text NOT NULL, id bigint NOT NULL)');
forgotten_pair('orders', 'a', 'b');

# c joins "orders" with a's layout and no start: nothing in the table
# remembers a, yet its IDs must not come again.
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('c', 'top:2=1 seq:31', space => 'orders', prefetch => 100);
	INSERT INTO ids SELECT 'c', idgen_next('c') FROM generate_series(1, 1500);});
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM ids'),
	'3700|3700', 'a new member of the space repeats no ID of a forgotten member');
is($node->safe_psql('postgres', q{
	SELECT min(id) FILTER (WHERE era = 'c') > max(id) FILTER (WHERE era = 'a') FROM ids}),
	't', 'it starts above every value the forgotten members handed out');

# Through a clean restart and a crash, the new member keeps its line and the
# forgotten ones their floors.
$node->restart;
wait_for_keeper($node);
$node->safe_psql('postgres',
	q{INSERT INTO ids SELECT 'c', idgen_next('c') FROM generate_series(1, 300)});
$node->stop('immediate');
$node->start;
wait_for_keeper($node);
$node->safe_psql('postgres',
	q{INSERT INTO ids SELECT 'c', idgen_next('c') FROM generate_series(1, 300)});
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM ids'),
	'4300|4300', 'no ID repeated after a restart and a crash');

# Generators of their own spaces, and of other spaces, are not floored by
# the forgotten members of "orders".
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('own', 'top:2=1 seq:31');
	SELECT idgen_create_generator('other', 'top:2=1 seq:31', space => 'invoices');});
is($node->safe_psql('postgres', q{SELECT idgen_next('own'), idgen_next('other')}),
	(1 << 31) . '|' . (1 << 31), 'another space starts at its own beginning');

# A member whose seq field lies elsewhere, and whose IDs could meet the
# forgotten members' (no fixed bit tells them apart), cannot be floored
# above their values: refused, naming the space and the member.  (One
# that a constant bit keeps apart from them is not: see "racks" below.)
recreate_extension();
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('d', 'seq:40', space => 'orders', prefetch => 10)});
my $err = error_report_of($node, q{SELECT idgen_next('d')});
like($err, qr/ERROR:\s+55000: generator "d" cannot issue IDs on this server\s+DETAIL:.*ID space "orders".*"[ab]"/s,
	'a member with its seq field elsewhere is refused, naming the space and the forgotten member');

# A counter of its own space whose rows are lost, created again under its
# name with its seq field elsewhere and IDs that could meet the old ones,
# cannot be floored above its own old
# values either: refused, saying where the seq field was.
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('mv', 'top:2=1 seq:31', prefetch => 10);
	SELECT count(idgen_next('mv')) FROM generate_series(1, 50)});
recreate_extension();
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('mv', 'seq:31 low:1=1', prefetch => 10)});
like(error_report_of($node, q{SELECT idgen_next('mv')}),
	qr/ERROR:\s+55000: generator "mv" cannot issue IDs on this server\s+DETAIL:.*seq field at bit 0, above whose values one at bit 1 cannot be floored/s,
	'its own name with its seq field moved is refused, never guessed at');

# A forgotten member's name taken again by a counter of another space
# does not make its old values remembered: that row's definition is not
# the one that issued them, and no creation in the space checks them.
forgotten_pair('parcels', 'pa', 'pb');
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('pa', 'top:2=1 seq:31');
	SELECT idgen_create_generator('pc', 'top:2=1 seq:31', space => 'parcels', prefetch => 100);
	INSERT INTO ids SELECT 'pc', idgen_next('pc') FROM generate_series(1, 1500);});
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM ids n JOIN ids o ON o.id = n.id
	 WHERE n.era = 'pc' AND o.era IN ('pa', 'pb')}),
	'0', 'a forgotten member whose name another space took again still floors the space');

# A member refused for a forgotten member is refused for good: loaded
# first as dropped, it is not switched on by its re-creation.
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('qa', 'top:1=1 seq:10', space => 'quays', prefetch => 10);
	INSERT INTO ids SELECT 'qa', idgen_next('qa') FROM generate_series(1, 500);
	SELECT idgen_drop_generator('qa', force => true);});
recreate_extension();
$node->safe_psql('postgres', q{
	BEGIN;
	SELECT idgen_create_generator('qd', 'seq:11', space => 'quays');
	SELECT idgen_drop_generator('qd', force => true);
	COMMIT;});
ok($node->poll_query_until('postgres',
		q{SELECT state = 'dropped' FROM idgen_generator_status WHERE name = 'qd'}),
	'the keeper loaded it dropped');
$node->safe_psql('postgres', q{SELECT idgen_create_generator('qd', 'seq:11', space => 'quays')});
like(error_report_of($node, q{SELECT idgen_next('qd')}),
	qr/ERROR:\s+55000: generator "qd" cannot issue IDs on this server\s+DETAIL:.*ID space "quays"/s,
	're-created, it stays refused');

# Members apart by a constant field may place their seq fields as they
# like: a dropped one's line does not refuse the others after a restart
# (their IDs differ outside both seq fields, so they can never meet).
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('ra', 'top:1=0 seq:31', space => 'racks', prefetch => 10);
	SELECT idgen_create_generator('rb', 'top:1=1 pad:10=0 seq:21', space => 'racks', prefetch => 10);
	SELECT count(idgen_next('ra')) FROM generate_series(1, 50);
	SELECT count(idgen_next('rb')) FROM generate_series(1, 50);
	SELECT idgen_drop_generator('ra', force => true);});
$node->restart;
wait_for_keeper($node);
is(error_of($node, q{SELECT idgen_next('rb')}), 'no error',
	'a live member is not refused for a dropped one whose IDs it can never meet');

# Its own name created again with another seq field is not refused where
# a constant bit outside both seq fields keeps the old IDs apart.
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('dcx', 'dc:2=1 seq:20', prefetch => 10);
	SELECT count(idgen_next('dcx')) FROM generate_series(1, 50)});
recreate_extension();
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('dcx', 'dc:2=2 seq:22', prefetch => 10)});
is(error_of($node, q{SELECT idgen_next('dcx')}), 'no error',
	'a name whose old IDs a constant bit keeps apart runs with another seq field');

# A member created again under its name after its rows were lost, in
# other stripes of the same space, does not make its old values
# remembered: its new definition covers other values, and a creation that
# takes the freed stripes checks against that one only.  The newcomer
# starts above the values the old definition handed out.
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('sx', 'seq:31', space => 'stripes', stripes => 2, owned => '0', prefetch => 100);
	INSERT INTO ids SELECT 'sx', idgen_next('sx') FROM generate_series(1, 1000);});
recreate_extension();
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('sx', 'seq:31', space => 'stripes', stripes => 2, owned => '1', prefetch => 100);
	SELECT idgen_create_generator('sy', 'seq:31', space => 'stripes', stripes => 2, owned => '0', prefetch => 100);
	INSERT INTO ids SELECT 'sx2', idgen_next('sx') FROM generate_series(1, 500);
	INSERT INTO ids SELECT 'sy', idgen_next('sy') FROM generate_series(1, 1000);});
is($node->safe_psql('postgres', q{
	SELECT count(*), count(DISTINCT id) FROM ids WHERE era IN ('sx', 'sx2', 'sy')}),
	'2500|2500', 'a member re-defined in other stripes leaves its old values floored for the space');

# The file is still read by a server that writes the old form: every line
# keeps the old fields first (1.1.0 reads them and ignores the rest).
my $file = slurp_file($node->data_dir . '/idgen_counters');
like($file, qr/^\d+ \d+ -?\d+ \d+ a 31 0 orders [1-9]\d*$/m,
	'the file records the space, the seq position and the form');
like($file, qr/^\d+ \d+ -?\d+ \d+ sx 31 0 stripes [1-9]\d*\n(?:.*\n)*\d+ \d+ -?\d+ \d+ sx 31 0 stripes [1-9]\d*$/m,
	'a name defined again in other stripes keeps a line of each definition');

$node->stop;
done_testing();
