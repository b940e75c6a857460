# The README's quick start runs as written: every ```sql block of its
# "Quick start" section, in order, in one psql session with
# ON_ERROR_STOP, on a server configured as the section says.  So the
# first example a new user copies cannot go stale.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $readme = slurp_file("$FindBin::RealBin/../README.md");
my ($section) = $readme =~ /^## Quick start\n(.*?)^## /ms;
ok(defined $section, 'the README has a Quick start section');
my @blocks = ($section // '') =~ /^```sql\n(.*?)^```/msg;
cmp_ok(scalar @blocks, '>=', 2, 'with SQL blocks to run (' . scalar(@blocks) . ')');

# the postgresql.conf lines the section gives
my ($conf) = ($section // '') =~ /^```\n(shared_preload_libraries.*?)^```/ms;
ok(defined $conf, 'and the postgresql.conf lines');

my $node = PostgreSQL::Test::Cluster->new('readme');
$node->init;
$node->append_conf('postgresql.conf', $conf // '');
$node->start;
wait_for_keeper($node);
# the keeper created the extension in idgen.database (postgres); the quick
# start runs in a database of the user's
$node->safe_psql('postgres', 'CREATE DATABASE shop');
my ($ret, $out, $err) = $node->psql('shop', $blocks[0] // '', on_error_stop => 1);
is($ret, 0, 'the first block runs without error in a new database') or diag $err;
like($out, qr/^\d+\|\d{4}-\d\d-\d\d [\d:.]+[-+]\d\d\|1$/m, 'and decodes an ID of node 1');
($ret, $out, $err) = $node->psql('postgres', join("\n", @blocks[ 1 .. $#blocks ]),
	on_error_stop => 1);
is($ret, 0, 'the named-generator block runs without error in idgen.database') or diag $err;
like($out, qr/^\d+\|\d{4}-\d\d-\d\d /m, 'and draws and decodes an ID');

$node->stop;
done_testing();
