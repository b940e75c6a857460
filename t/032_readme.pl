# The README's first screen and quick start run as written.  The first
# screen is an SQL session and the output psql prints for it: the SQL runs
# in a new database and prints rows of that shape (the same columns, as
# many rows, each an ID, a time and node 1).  The quick start: every
# ```sql block of its "Quick start" section, in order, in one psql
# session with ON_ERROR_STOP, on a server configured as the section says.
# So the first example a new user copies cannot go stale.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $readme = slurp_file("$FindBin::RealBin/../README.md");
my ($screen) = $readme =~ /\A(.*?)^## /ms;
my ($screen_sql, $screen_out) =
  ($screen // '') =~ /^```sql\n(.*?)^```\s*^```text\n(.*?)^```/ms;
ok(defined $screen_out, 'the first screen shows an SQL session and its output');
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

# --- the first screen: what psql prints, in shape -------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE first_screen');
my ($ret, $out, $err) = $node->psql('first_screen', "\\set QUIET off\n" . ($screen_sql // ''),
	on_error_stop => 1, extra_params => [ '-P', 'format=aligned', '-P', 'tuples_only=off' ]);
is($ret, 0, 'the first screen\'s SQL runs without error in a new database') or diag $err;
# a row: an ID, a time with milliseconds (psql drops trailing zeros), node 1
my $row = qr/^ *\d+ +\| \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,3})?[-+]\d\d +\| +1$/;
my @shown = grep { /\S/ } split /\n/, $screen_out // '';
my @printed = grep { /\S/ } split /\n/, $out;
my @head = map { [ /^\s*(\S+)\s*\|\s*(\S+)\s*\|\s*(\S+)\s*$/ ] } grep { /\|/ && !/\d/ } @shown, @printed;
is_deeply($head[0], [qw(id created node)], 'the page shows the columns id, created, node');
is_deeply($head[-1], $head[0], 'and psql prints the same columns');
is(scalar(grep { $_ =~ $row } @printed), scalar(grep { $_ =~ $row } @shown),
	'as many rows as the page shows, each an ID, a time and node 1')
  or diag "psql printed:\n$out";
cmp_ok(scalar(grep { $_ =~ $row } @shown), '>=', 1, 'the page shows rows');
my @tags = grep { /^[A-Z ]+[\d ]*$/ && !/\|/ } @shown;
my @printed_tags = grep { /^[A-Z ]+[\d ]*$/ && !/\|/ } @printed;
is_deeply(\@printed_tags, \@tags, 'and the command tags the page shows (' . join(', ', @tags) . ')');
is(($out =~ /^\((\d+) rows?\)$/m)[0], ($screen_out // '') =~ /^\((\d+) rows?\)$/m ? $1 : 'none',
	'and the same row count');

# --- the quick start -------------------------------------------------------------
($ret, $out, $err) = $node->psql('shop', $blocks[0] // '', on_error_stop => 1);
is($ret, 0, 'the first block runs without error in a new database') or diag $err;
like($out, qr/^\d+\|\d{4}-\d\d-\d\d [\d:.]+[-+]\d\d\|1$/m, 'and decodes an ID of node 1');
($ret, $out, $err) = $node->psql('postgres', join("\n", @blocks[ 1 .. $#blocks ]),
	on_error_stop => 1);
is($ret, 0, 'the named-generator block runs without error in idgen.database') or diag $err;
like($out, qr/^\d+\|\d{4}-\d\d-\d\d /m, 'and draws and decodes an ID');

$node->stop;
done_testing();
