# A counter defined again under its name after the extension was
# re-created, with other stripes, resumes above every value the old one
# handed out on this server: the data directory's floor counts seq values,
# not the local values of the definition that wrote it.  One with a seq
# field of another width cannot be floored so, and is refused (55000),
# never guessed at.  Re-defined while the server runs (another slot for
# the name), the line continues the same way, through a clean restart, a
# crash and a re-created extension.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('redefined', conf => "idgen.node_id = 3\n");
$node->start;
wait_for_keeper($node);

# Re-create the extension in the keeper's database and restart, so that the
# name's definition, slot and row are all gone; the plain table of IDs stays.
sub recreate_extension
{
	$node->safe_psql('postgres', 'DROP EXTENSION idgen CASCADE');
	$node->restart;
	wait_for_keeper($node);
	$node->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS idgen');
}

# The old definition: stripe 0 of 4, so seq values 0, 4, 8, ...  The
# file records its reservation; read as local values of the new
# definition, that bound would lie in the middle of the old values.
$node->safe_psql('postgres', q{
	CREATE TABLE ids (era text NOT NULL, id bigint NOT NULL);
	SELECT idgen_create_generator('c', 'seq:31', stripes => 4, owned => '0', prefetch => 100);
	INSERT INTO ids SELECT 'old', idgen_next('c') FROM generate_series(1, 1500);});
recreate_extension();

# The new one: stripe 0 of 2, seq values 0, 2, 4, ...  Resumed at the old
# floor's local value, it would hand out the old values between.
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('c', 'seq:31', stripes => 2, owned => '0', prefetch => 100);
	INSERT INTO ids SELECT 'new', idgen_next('c') FROM generate_series(1, 1500);});
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM ids'),
	'3000|3000', 'the counter defined again with other stripes repeats no ID');
is($node->safe_psql('postgres', q{
	SELECT min(id) FILTER (WHERE era = 'new') > max(id) FILTER (WHERE era = 'old') FROM ids}),
	't', 'every new ID lies above every old one');
is($node->safe_psql('postgres', q{SELECT bool_and(id % 2 = 0) FROM ids WHERE era = 'new'}),
	't', 'in its own stripe');

# Another width: the floor cannot be carried over.
recreate_extension();
$node->safe_psql('postgres', q{SELECT idgen_create_generator('c', 'seq:40', prefetch => 10)});
my $err = error_report_of($node, q{SELECT idgen_next('c')});
like($err, qr/ERROR:\s+55000: generator "c" cannot issue IDs on this server\s+DETAIL:\s+IDs were issued under the name with a 31-bit seq field/,
	'a counter of another seq width under the name is refused, with the reason');

# --- re-defined while the server runs -------------------------------------
# A dropped name created again with other stripes takes a slot of its own
# at once and continues the line, through a clean restart, a crash, and a
# re-created extension; a session's prepared statement follows it.
$node->safe_psql('postgres', q{
	CREATE TABLE line (era text NOT NULL, id bigint NOT NULL);
	SELECT idgen_create_generator('r', 'top:2=1 seq:31', prefetch => 100);
	INSERT INTO line SELECT 'r1', idgen_next('r') FROM generate_series(1, 500);});
my $session = psql_session($node, 'postgres');
session_safe($session, q{PREPARE draw(text) AS INSERT INTO line SELECT $1, idgen_next('r') FROM generate_series(1, 200)});
session_safe($session, q{EXECUTE draw('r1')});
$node->safe_psql('postgres', q{
	SELECT idgen_drop_generator('r', force => true);
	SET client_min_messages = warning;
	SELECT idgen_create_generator('r', 'top:2=2 seq:31', stripes => 2, owned => '1', prefetch => 100);});
session_safe($session, q{EXECUTE draw('r2')});
session_end($session);
$node->safe_psql('postgres',
	q{INSERT INTO line SELECT 'r2', idgen_next('r') FROM generate_series(1, 500)});
is($node->safe_psql('postgres', q{SELECT state, stripes FROM idgen_generator_status WHERE name = 'r'}),
	'active|2', 'the new definition runs at once, one row in the status view');

# each era above the one before it, in its own stripe
sub line_holds
{
	my ($era, $before, $stripes, $owned, $what) = @_;
	is($node->safe_psql('postgres', qq{
		SELECT count(*) = count(DISTINCT id & ((1::bigint << 31) - 1))
		   AND (SELECT min(id & ((1::bigint << 31) - 1)) FROM line WHERE era = '$era')
		     > (SELECT max(id & ((1::bigint << 31) - 1)) FROM line WHERE era = ANY ('{$before}'))
		   AND (SELECT bool_and((id & ((1::bigint << 31) - 1)) % $stripes = $owned)
		          FROM line WHERE era = '$era')
		  FROM line}),
		't', $what);
}
line_holds('r2', 'r1', 2, 1,
	're-created with other stripes while running: no seq value repeats, all above the old ones');

$node->restart;
wait_for_keeper($node);
$node->safe_psql('postgres',
	q{INSERT INTO line SELECT 'r3', idgen_next('r') FROM generate_series(1, 500)});
line_holds('r3', 'r1,r2', 2, 1, 'after a clean restart it continues the new definition, above both');

$node->stop('immediate');
$node->start;
wait_for_keeper($node);
$node->safe_psql('postgres',
	q{INSERT INTO line SELECT 'r4', idgen_next('r') FROM generate_series(1, 500)});
line_holds('r4', 'r1,r2,r3', 2, 1, 'after a crash too');

# dropped, then the extension re-created while the slot of the dropped
# definition still runs here: the next definition continues above it
$node->safe_psql('postgres', q{SELECT idgen_drop_generator('r', force => true)});
$node->safe_psql('postgres', 'DROP EXTENSION idgen CASCADE');
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_extension WHERE extname = 'idgen'"),
	'the keeper re-creates the extension');
$node->safe_psql('postgres', q{
	SET client_min_messages = warning;
	SELECT idgen_create_generator('r', 'top:2=3 seq:31', stripes => 3, owned => '2', prefetch => 100);
	INSERT INTO line SELECT 'r5', idgen_next('r') FROM generate_series(1, 500);});
line_holds('r5', 'r1,r2,r3,r4', 3, 2,
	'after the extension was re-created, without a restart, it continues above every era');
like(error_of($node, q{SELECT idgen_drop_generator('r', force => true);
	SELECT idgen_create_generator('r', 'top:2=3 seq:31', space => 'elsewhere')}),
	qr/^42710: generator "r" cannot be re-created with this definition/,
	'a re-creation in another ID space is refused with 42710');

$node->stop;
done_testing();
