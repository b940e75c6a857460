# SQLsmith against a server with idgen preloaded: random, type-correct
# SQL generated from the catalog, run as a plain role in a database where
# idgen is installed, with named, counter and shard generators defined and
# tables and views that call idgen's functions (SQLsmith draws its tables
# from those, not from the system catalogs, so that its queries reach
# idgen more often than the ~3,000 functions of the catalog alone would).
# The server must never crash, hit an assertion or log a PANIC; the errors
# of SQLsmith's own queries (bad casts and the like) are expected, and
# counted by SQLSTATE.
#
# SQLsmith is Debian's package sqlsmith.  Without it the test skips,
# unless IDGEN_SQLSMITH_REQUIRED=1, which makes that a failure.  A fixed
# seed (IDGEN_SQLSMITH_SEED, default 20261125), at most
# IDGEN_SQLSMITH_QUERIES queries (default 30000) and IDGEN_SQLSMITH_SECONDS
# seconds (default 90).  On PostgreSQL 15 only, unless
# IDGEN_FUZZ_ALL_VERSIONS=1: the API is the same on every version.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time);
use File::Spec;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = PostgreSQL::Test::Cluster->new('smith');
if ($node->pg_version->major ne '15' && !$ENV{IDGEN_FUZZ_ALL_VERSIONS})
{
	plan skip_all =>
	  'SQLsmith runs on PostgreSQL 15 only (the API is the same on every version); set IDGEN_FUZZ_ALL_VERSIONS=1 to run it here';
}

my ($sqlsmith) = grep { -x } map { File::Spec->catfile($_, 'sqlsmith') } File::Spec->path;
if (!$sqlsmith)
{
	if ($ENV{IDGEN_SQLSMITH_REQUIRED})
	{
		fail('sqlsmith is installed (IDGEN_SQLSMITH_REQUIRED is set)');
		done_testing();
		exit;
	}
	plan skip_all => 'sqlsmith is not installed (Debian package sqlsmith)';
}

my $seed = $ENV{IDGEN_SQLSMITH_SEED} // 20261125;
my $max_queries = $ENV{IDGEN_SQLSMITH_QUERIES} // 30000;
my $seconds = $ENV{IDGEN_SQLSMITH_SECONDS} // 90;
die "IDGEN_SQLSMITH_SEED, IDGEN_SQLSMITH_QUERIES and IDGEN_SQLSMITH_SECONDS must be integers"
  if grep { !/^\d+$/ } $seed, $max_queries, $seconds;
diag("SQLsmith: seed $seed (IDGEN_SQLSMITH_SEED), at most $max_queries queries "
	  . "(IDGEN_SQLSMITH_QUERIES) and $seconds s (IDGEN_SQLSMITH_SECONDS)");

$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'idgen'
idgen.node_id = 37
idgen.shards = '0-99'
# every function call is counted, C functions too: shows what reached idgen
track_functions = all
# the SQLSTATE, database and application of each log line, and where in
# the code and in which statement an error arose
log_line_prefix = '%m [%p] %e %d %a '
log_error_verbosity = verbose
log_min_error_statement = error
log_statement = none
});
$node->start;
wait_for_keeper($node);

# Generators of every kind, and a plain role that may draw from them.
$node->safe_psql('postgres', q{
	CREATE ROLE smith LOGIN;
	CREATE DATABASE smithdb OWNER smith;
	SELECT idgen_create_generator('smith_time', 'time:42 datacenter:3 worker:6 seq:12',
	                              epoch => '2020-08-02 18:33:54.706+00');
	SELECT idgen_create_generator('smith_shard', 'time:40 shard:8 seq:15',
	                              epoch => '2023-01-01+00');
	SELECT idgen_create_generator('smith_counter', 'seq:31', stripes => 2, owned => '0',
	                              segment => 100);
	SELECT idgen_create_generator('smith_sony', 'sonyflake');
	SELECT idgen_grant_generator(g, 'smith')
	  FROM unnest(ARRAY['smith_time', 'smith_shard', 'smith_counter', 'smith_sony']) g;
});
$node->safe_psql('smithdb', 'CREATE EXTENSION idgen');
# The tables and views SQLsmith draws from, owned by the plain role:
# DEFAULTs that generate, generated columns and views that decode.
$node->safe_psql('smithdb', q{
	SET ROLE smith;
	CREATE TABLE orders (
		id bigint PRIMARY KEY DEFAULT snowflake_id(),
		created timestamptz GENERATED ALWAYS AS (snowflake_id_time(id)) STORED,
		item text);
	CREATE TABLE photos (
		id bigint PRIMARY KEY DEFAULT instagram_id(7),
		shard integer GENERATED ALWAYS AS (instagram_id_shard(id)) STORED,
		caption text);
	CREATE TABLE legacy (
		id bigint PRIMARY KEY DEFAULT idgen_next('smith_time'),
		sid bigint DEFAULT idgen_next('smith_shard', 3),
		sony bigint DEFAULT idgen_next('smith_sony'),
		code text GENERATED ALWAYS AS (idgen_to_text(id)) STORED);
	CREATE TABLE tickets (
		id integer PRIMARY KEY DEFAULT idgen_next_int('smith_counter'),
		u uuid DEFAULT idgen_uuidv7(),
		f uuid DEFAULT idgen_flake128());
	CREATE TABLE adopt (id serial PRIMARY KEY, v text);
	INSERT INTO orders (item) SELECT 'item ' || i FROM generate_series(1, 50) i;
	INSERT INTO photos (caption) SELECT 'photo ' || i FROM generate_series(1, 50) i;
	INSERT INTO legacy DEFAULT VALUES;
	INSERT INTO legacy DEFAULT VALUES;
	INSERT INTO tickets DEFAULT VALUES;
	INSERT INTO adopt (v) VALUES ('a'), ('b');
	CREATE VIEW decoded AS
		SELECT o.id, d.time, d.node, d.seq, idgen_to_text(o.id, 'base62') AS b62,
		       idgen_decode_layout('snowflake', o.id) AS fields
		  FROM orders o, snowflake_id_decode(o.id) d;
	CREATE VIEW legacy_fields AS
		SELECT id, idgen_decode('smith_time', id) AS fields, idgen_time('smith_time', id) AS t,
		       idgen_from_text(code) AS back
		  FROM legacy;
	CREATE VIEW fresh AS
		SELECT snowflake_id() AS s, instagram_id(1) AS i, idgen_next('smith_time') AS n,
		       idgen_next_batch('smith_shard', 2, 3) AS b, idgen_uuidv7() AS u;
	CREATE VIEW status AS SELECT * FROM idgen_status();
	CREATE VIEW generators AS SELECT * FROM idgen_generator_status;
});

# --- the run ----------------------------------------------------------------
my ($out, $err) = ('', '');
my $target = $node->connstr('smithdb') . ' user=smith application_name=sqlsmith';
my $t0 = time;
my $timer = IPC::Run::timer($seconds);
my $h = IPC::Run::start(
	[ $sqlsmith, "--target=$target", "--seed=$seed", "--max-queries=$max_queries",
	  '--exclude-catalog', '--verbose' ],
	'>', \$out, '2>', \$err, $timer);
$h->pump while $h->pumpable && !$timer->is_expired;
my $stopped = 0;
if ($h->pumpable)
{
	# the time bound: what SQLsmith did shows in its progress output
	$stopped = 1;
	$h->kill_kill(grace => 5);
}
else
{
	$h->finish;
}
my $elapsed = time - $t0;
my $status = $h->full_result(0) // 0;

# One progress character per query ("." ok, "e" error, "S" syntax
# error, "t" timeout, "C" crash), in lines of their own after loading.
my $progress = $err =~ /Generating indexes\.\.\.done\.\n(.*)/s ? $1 : '';
my $queries = 0;
for my $line (split /\n/, $progress)
{
	$queries += length($line) if $line =~ /^[.A-Za-z]+$/;
}
my %marks;
$marks{$_}++ for map { /^[.A-Za-z]+$/ ? split(//) : () } split /\n/, $progress;

if ($stopped)
{
	note("SQLsmith was stopped at the time bound, after $queries queries");
}
else
{
	is($status, 0, 'SQLsmith ended on its own with status 0')
	  or diag("its output ends with:\n" . substr($err, -3000));
}
cmp_ok($queries, '>', 500, 'SQLsmith ran queries')
  or diag(substr($err, 0, 3000));

my @crashes = check_crashes($node);
my $log = slurp_file($node->logfile);

# SQLsmith marks a query "C" whenever its connection broke, which is also
# what a query ending its own session does: the plain role may call
# pg_terminate_backend(pg_backend_pid()), and SQLsmith finds that now
# and then.  Such a session ends with a FATAL 57P01 from the backend,
# logged under SQLsmith's application name.  A broken connection is a
# crash unless it is one of those, or the log shows a crash anyway.
sub ended_by_query
{
	my ($text, $app) = @_;
	return grep { /^\S+ \S+ \S+ \[\d+\] 57P01 smithdb \Q$app\E FATAL:/ } split /\n/, $text;
}
my ($probe_ret, $probe_out, $probe_err) = $node->psql('smithdb',
	'SELECT pg_terminate_backend(pg_backend_pid())',
	connstr => $node->connstr('smithdb') . ' user=smith application_name=smithprobe');
is(scalar(ended_by_query(slurp_file($node->logfile), 'smithprobe')) . ($probe_ret != 0 ? 'x' : ''),
	'1x', 'a session that ends itself is told by its FATAL 57P01 in the log');
my @fatal = grep { / smithdb sqlsmith FATAL:/ } split /\n/, $log;
my $ended = scalar(ended_by_query($log, 'sqlsmith'));
note("SQLsmith's queries ended their own session $ended times (pg_terminate_backend)") if $ended;
is(scalar(@fatal) - $ended, 0, 'no SQLsmith session ended by any FATAL but its own termination')
  or diag(join("\n", @fatal));
cmp_ok($marks{C} // 0, '<=', $ended, 'SQLsmith saw no crash: every broken connection was a session ending itself')
  or diag("broken connections: " . ($marks{C} // 0) . ", sessions ended by their own query: $ended");
my $crashed = @crashes || ($marks{C} // 0) > $ended;

# SQLsmith's errors by SQLSTATE, from the server log.  An internal error
# (XX000) is idgen's when the function it was raised in is defined in
# one of idgen's source files; SQLsmith finds some of PostgreSQL's own
# too, which are shown but are not idgen's to fix.
my %idgen_functions;
for my $c (glob("$FindBin::RealBin/../src/*.c $FindBin::RealBin/../src/*/*.c"))
{
	my $file = (File::Spec->splitpath($c))[2];
	$idgen_functions{$file}{$_} = 1 for slurp_file($c) =~ /^(\w+)\(/mg;
}
sub in_idgen
{
	my ($location) = @_;
	return $location =~ /^(\w+), (\S+?):\d+/ && $idgen_functions{$2}{$1} ? 1 : 0;
}
my ($some_idgen_function) = sort keys %{ $idgen_functions{'load.c'} // {} };
is(in_idgen("$some_idgen_function, load.c:100") . in_idgen('coerce_type, parse_coerce.c:100'),
	'10', 'an internal error is told to be idgen\'s by where it was raised');

my (%errors, @internal, $current);
for my $line (split /\n/, $log)
{
	if ($line =~ /^\S+ \S+ \S+ \[\d+\] (\w{5}) smithdb \S* (ERROR|LOCATION|STATEMENT):\s+(.*)$/)
	{
		my ($state, $kind, $text) = ($1, $2, $3);
		if ($kind eq 'ERROR')
		{
			$errors{$state}++;
			$current = undef;
			next unless $state eq 'XX000';
			$text =~ s/^XX000: //;
			$current = { message => $text, location => '', statement => '' };
			push @internal, $current;
		}
		elsif ($current)
		{
			$current->{ lc $kind } = $text;
		}
	}
	elsif ($current && $line =~ /^\t/)
	{
		$current->{statement} .= "\n$line";
	}
	else
	{
		$current = undef if $line =~ /^\S+ \S+ \S+ \[\d+\] /
		  && $line !~ / (?:DETAIL|HINT|CONTEXT|LOCATION|STATEMENT):/;
	}
}
my $errors = 0;
$errors += $_ for values %errors;
my @ours = grep { in_idgen($_->{location}) } @internal;
is(scalar(@ours), 0, 'no internal error (XX000) raised in idgen')
  or diag(join("\n", map { "$_->{message} ($_->{location}) in:\n$_->{statement}" } @ours));
my %theirs;
$theirs{"$_->{message} ($_->{location})"}++ for grep { !in_idgen($_->{location}) } @internal;
diag("PostgreSQL's own internal errors (not idgen's): "
	  . join('; ', map { "$_ ($theirs{$_}x)" } sort keys %theirs))
  if %theirs;

# Which of idgen's functions SQLsmith's queries (and the tables' DEFAULTs,
# generated columns and views) called, counted by the statistics
# collector once SQLsmith's session has ended.
my $reached = '0 functions (the server did not answer)';
wait_until(sub {
	return 1 if $crashed;
	my ($ret, $stdout) = $node->psql('smithdb', q{
		SELECT count(*) || ' functions, ' || coalesce(sum(calls), 0) || ' calls'
		  FROM pg_stat_user_functions f
		  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = f.funcid
		                  AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
		  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'idgen'});
	$reached = $stdout if $ret == 0;
	return $reached !~ /^0 /;
});
unlike($reached, qr/^0 /, "SQLsmith's queries reached idgen's functions: $reached");

diag(sprintf('SQLsmith: seed %d, %.0f s, %d queries (%d ok, %d errors, %d timeouts), idgen reached: %s',
	$seed, $elapsed, $queries, $marks{'.'} // 0, $errors, $marks{t} // 0, $reached));
diag('errors by SQLSTATE: ' . (join(', ', map { "$_ $errors{$_}" } sort keys %errors) || 'none'));
diag('crashes: ' . ($crashed ? scalar(@crashes) + ($marks{C} // 0) - $ended : 0));

stop_after_fuzz($node, $crashed ? 1 : 0);
done_testing();
