# The reference is complete and its examples run: every function and view
# of the extension is named in docs/reference.md, every setting idgen
# defines in docs/configuration.md, and every ```sql block of the
# reference runs as written, in order, in one session with ON_ERROR_STOP,
# in a database of the user's on a server with idgen preloaded, and the
# trigger example inserts a row.  So a new function cannot ship
# undocumented and an example cannot go stale.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $docs = "$FindBin::RealBin/../docs";
my $reference = slurp_file("$docs/reference.md");
my $configuration = slurp_file("$docs/configuration.md");

my $node = idgen_node('reference', conf => "idgen.node_id = 1\n");
$node->start;
wait_for_keeper($node);

# --- every function, view and setting is documented --------------------------
my @functions = split /\n/, $node->safe_psql('postgres', q{
	SELECT DISTINCT p.proname
	  FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
	 WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
	   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen')
	 ORDER BY 1});
my @views = split /\n/, $node->safe_psql('postgres', q{
	SELECT c.relname
	  FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
	 WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e' AND c.relkind = 'v'
	   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'idgen')
	 ORDER BY 1});
# idgen.test_clock is for tests only, and documented as such
my @settings = split /\n/, $node->safe_psql('postgres', q{
	SELECT name FROM pg_settings WHERE name LIKE 'idgen.%' ORDER BY 1});
cmp_ok(scalar @functions, '>=', 40, 'the extension has its functions (' . scalar(@functions) . ')');
cmp_ok(scalar @views, '>=', 1, 'and its views (' . scalar(@views) . ')');
cmp_ok(scalar @settings, '>=', 10, 'and its settings (' . scalar(@settings) . ')');
my @undocumented = grep { $reference !~ /`\Q$_\E[(`\s]/ } @functions, @views;
is_deeply(\@undocumented, [], 'every function and view is named in docs/reference.md');
@undocumented = grep { $configuration !~ /`\Q$_\E[`\s=]/ } @settings;
is_deeply(\@undocumented, [], 'every setting is named in docs/configuration.md');

# --- the reference's examples run as written ---------------------------------
my @blocks = $reference =~ /^```sql\n(.*?)^```/msg;
cmp_ok(scalar @blocks, '>=', 1, 'the reference has SQL examples (' . scalar(@blocks) . ')');
$node->safe_psql('postgres', 'CREATE DATABASE shop');
# One psql session for all of them, as a reader runs them one after the
# other; a marker before each block tells which one an error stopped.
my $script = join('', map { "\\echo idgen-example-$_\n$blocks[$_]\n" } 0 .. $#blocks);
my ($ret, $out, $err) = $node->psql('shop', $script, on_error_stop => 1);
my @reached = $out =~ /^idgen-example-(\d+)$/mg;
my $last = @reached ? $reached[-1] : -1;
for my $i (0 .. $#blocks)
{
	my $ran = $i < $last || ($i == $last && $ret == 0);
	ok($ran, 'example ' . ($i + 1) . ' of docs/reference.md runs without error, in the session of those before it')
	  or diag($i == $last ? $err : $i > $last ? 'not reached: an earlier example failed' : '');
}

# the trigger example inserted a row, with the shard its user_id gives
is($node->safe_psql('shop',
		q{SELECT count(*) FILTER (WHERE instagram_id_shard(id) = user_id % 8192) || '/' || count(*) FROM likes}),
	'1/1', 'the trigger example inserts a row, keyed in the shard of its user');

$node->stop;
done_testing();
