# A counter defined again under its name after the extension was
# re-created, with other stripes, resumes above every value the old one
# handed out on this server: the data directory's floor counts seq values,
# not the local values of the definition that wrote it.  One with a seq
# field of another width cannot be floored so, and is refused (55000),
# never guessed at.
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

$node->stop;
done_testing();
