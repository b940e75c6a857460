# A targeted fuzzer of idgen's SQL API.  Every function of the installed
# extension, read from the catalog at run time (so that a new function is
# covered without touching this file), is called thousands of times with
# random and edge arguments chosen by type and argument name: NULL, 0, -1,
# the type's extremes, huge, empty and odd strings, other generators'
# names, valid and broken layouts and presets, infinite and far
# timestamps, odd intervals and jsonb, text IDs with bad characters.  The
# calls come from a superuser and a plain role in two databases, over
# long-lived psql sessions, interleaved with named and counter generators
# being created, granted, revoked and dropped.
#
# It checks that the server never crashes (postmaster alive, nothing in
# its log about a backend killed by a signal, a PANIC or a failed
# assertion), that every error carries an SQLSTATE the documentation
# lists, and that every ID a generator returns is never NULL, unique per
# generator over the whole run and, as calls are issued one at a time,
# strictly increasing per generator (and shard).
#
# IDGEN_FUZZ_SEED (default 20261125) fixes the random choices; it is
# printed first.  IDGEN_FUZZ_SECONDS (default 60) bounds the run.  The
# API is the same on every PostgreSQL version, so the bounded run happens
# on PostgreSQL 15 only; IDGEN_FUZZ_ALL_VERSIONS=1 runs it on any.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = PostgreSQL::Test::Cluster->new('fuzz');
if ($node->pg_version->major ne '15' && !$ENV{IDGEN_FUZZ_ALL_VERSIONS})
{
	plan skip_all =>
	  'the API fuzzer runs on PostgreSQL 15 only (the API is the same on every version); set IDGEN_FUZZ_ALL_VERSIONS=1 to run it here';
}

my $seed = $ENV{IDGEN_FUZZ_SEED} // 20261125;
my $seconds = $ENV{IDGEN_FUZZ_SECONDS} // 60;
die "IDGEN_FUZZ_SEED must be an integer" unless $seed =~ /^\d+$/;
die "IDGEN_FUZZ_SECONDS must be a number" unless $seconds =~ /^\d+(\.\d+)?$/;
diag("API fuzzer: seed $seed (IDGEN_FUZZ_SEED), $seconds s (IDGEN_FUZZ_SECONDS)");
srand($seed);

# --- which SQLSTATEs an idgen function may raise ------------------------------
# The union of the error tables of the user documentation: every table
# whose header ends in "SQLSTATE" (docs/reference.md's "Errors",
# idgen_convert_column()'s in docs/applications.md); a code is any
# five-character SQLSTATE in a row's last cell.
my %allowed;
my $docs = "$FindBin::RealBin/../docs";
for my $page (glob("$docs/*.md"))
{
	my $in_table = 0;
	for my $line (split /\n/, slurp_file($page))
	{
		if ($line =~ /^\|.*\|\s*SQLSTATE\s*\|\s*$/)
		{
			$in_table = 1;
			next;
		}
		if ($in_table && $line =~ /^\|/)
		{
			my @cells = split /\|/, $line;
			my $last = $cells[-1] =~ /\S/ ? $cells[-1] : $cells[-2];
			$allowed{$1} = "docs" while $last =~ /\b([0-9][0-9A-Z]{4})\b/g;
			next;
		}
		$in_table = 0;
	}
}
ok(exists $allowed{'22023'} && exists $allowed{'42501'} && exists $allowed{'22P02'},
	'the documented SQLSTATEs were read from docs/*.md: '
	  . join(' ', sort keys %allowed));

# --- the server ---------------------------------------------------------------
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'idgen'
idgen.node_id = 37
idgen.shards = '0-99, 8000-8191'
max_connections = 20
# errors are the normal case here; keep the log to what matters
log_min_error_statement = fatal
});
$node->start;
wait_for_keeper($node);

my $plain = 'fuzz_user';
# Roles to grant generators to, more than a generator may be granted to.
my @grantees = map { "fz_role$_" } 1 .. 40;
$node->safe_psql('postgres', join('', map { "CREATE ROLE $_;\n" } @grantees));
$node->safe_psql('postgres', qq{
	CREATE ROLE $plain LOGIN;
	CREATE DATABASE fuzzdb;
	GRANT CREATE ON SCHEMA public TO $plain;
});
$node->safe_psql('fuzzdb', qq{
	CREATE EXTENSION idgen;
	GRANT CREATE ON SCHEMA public TO $plain;
});
my $ext_version = $node->safe_psql('postgres',
	"SELECT extversion FROM pg_extension WHERE extname = 'idgen'");
my $pg_num = $node->safe_psql('postgres', 'SHOW server_version_num');

# Every function of the extension, with its argument types and names.
# Trigger functions are left out: PostgreSQL refuses to call them outside
# a trigger (0A000) before any idgen code runs.
my @functions;
for my $row (split /\n/, $node->safe_psql('postgres', q{
	SELECT p.proname, p.oid::regprocedure,
	       array_to_string(p.proargtypes::regtype[], ','),
	       array_to_string(coalesce(p.proargnames[1:p.pronargs], '{}'), ','),
	       p.pronargdefaults, p.prorettype::regtype, p.proretset
	  FROM pg_proc p
	  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
	                  AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
	  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'idgen'
	 WHERE p.prorettype <> 'trigger'::regtype
	 ORDER BY 2::text}))
{
	my ($name, $sig, $types, $argnames, $ndefaults, $ret, $retset) = split /\|/, $row, -1;
	my @types = split /,/, $types;
	my @names = split /,/, $argnames;
	push @functions, {
		name => $name, sig => $sig, types => \@types,
		argnames => [ map { $names[$_] // "arg$_" } 0 .. $#types ],
		ndefaults => $ndefaults, ret => $ret, retset => $retset eq 't' };
}
cmp_ok(scalar(@functions), '>=', 40,
	"idgen $ext_version has " . scalar(@functions) . " SQL functions to fuzz");

# --- long-lived psql sessions ---------------------------------------------------
# One psql per role and database (psql_session), fed a statement at a
# time.  A session whose psql ends or stops answering is "lost": a crash,
# unless we know better.
sub open_session
{
	my ($db, $user) = @_;
	my $s = psql_session($node, $db, user => $user);
	my $r = session_run($s, q{SET statement_timeout = '60s';
SET lock_timeout = '10s';
SET client_min_messages = warning});
	die "cannot set up a psql session as $s->{label}: " . ($r->{lost} // $r->{stderr})
	  if $r->{lost} || $r->{stderr} ne '';
	return $s;
}

# --- the record ------------------------------------------------------------------
my $calls = 0;
my (%errors, %by_function, %called, %succeeded);
my (%last, $disorder, $nulls);
my @unexpected;
my $lost;
my @recent;    # the last calls, shown when something goes wrong
$disorder = $nulls = 0;

# Every ID returned goes to a file, "key<TAB>id" a line, sorted at the end
# to find repeats: a long run returns more IDs than fit in memory.
my $id_file = "$PostgreSQL::Test::Utils::tmp_check/070_ids";
open my $id_log, '>', $id_file or die "$id_file: $!";

# Record the IDs one generator call returned, in the order returned:
# never NULL, above the last one for $order_key, and (checked by
# repeated_ids() at the end) never returned before for $key.
sub record_ids
{
	my ($key, $order_key, $call, @values) = @_;
	my @problems;
	for my $v (@values)
	{
		if ($v eq '<NULL>' || $v eq '')
		{
			$nulls++;
			push @problems, "NULL from a generator: $call";
			next;
		}
		print $id_log "$key\t$v\n";
		my $prev = $last{$order_key};
		if (defined $prev && !id_greater($v, $prev))
		{
			$disorder++;
			push @problems, "$order_key: $v after $prev: $call";
		}
		$last{$order_key} = $v;
	}
	diag($_) for grep { defined } @problems[ 0 .. 4 ];
	return scalar(@problems);
}

# The IDs of file $path returned more than once for their key, and the
# number of distinct IDs per key.
sub repeated_ids
{
	my ($path) = @_;
	my (@repeated, %distinct);
	local $ENV{LC_ALL} = 'C';
	open my $sorted, '-|', 'sort', '-T', $PostgreSQL::Test::Utils::tmp_check, $path
	  or die "sort $path: $!";
	my $prev = '';
	while (my $line = <$sorted>)
	{
		chomp $line;
		if ($line eq $prev)
		{
			push @repeated, $line;
			next;
		}
		$distinct{ (split /\t/, $line)[0] }++;
		$prev = $line;
	}
	close $sorted or die "sort $path failed";
	return (\@repeated, \%distinct);
}

# Numbers compare as numbers (bigint fits Perl's integers), UUIDs as text
# (fixed-width lowercase hex sorts as the bytes do).
sub id_greater
{
	my ($a, $b) = @_;
	return $a > $b if $a =~ /^-?\d+$/ && $b =~ /^-?\d+$/;
	return $a gt $b;
}

# The harness checks itself first: each check must be able to fail.
{
	my $before = $disorder + $nulls;
	my $real_log = $id_log;
	undef $id_log;    # a handle of its own, not the run's reopened
	open $id_log, '>', "$id_file.selftest" or die "$id_file.selftest: $!";
	{
		no warnings 'redefine';
		local *diag = sub { };
		record_ids('selftest', 'selftest', 'self test', 5, 7, 7, 3, '<NULL>', 3);
	}
	close $id_log;
	$id_log = $real_log;
	my ($repeated, $distinct) = repeated_ids("$id_file.selftest");
	is(join(',', $disorder + $nulls - $before, @$repeated, $distinct->{selftest}),
		"4,selftest\t3,selftest\t7,3",
		'the ID record catches repeats, a decrease and a NULL');
	delete $last{selftest};
	$disorder = $nulls = 0;
	ok(!exists $allowed{'22012'} && !exists $allowed{'XX000'},
		'division by zero and internal_error are not among the allowed SQLSTATEs');
	my $s = open_session('postgres', 'postgres');
	my $r = session_run($s, 'SELECT 1/0');
	is($r->{sqlstate}, '22012', 'a session reports the SQLSTATE of an error');
	$r = session_run($s, q{SELECT 'a' UNION ALL SELECT NULL});
	is($r->{stdout}, "a\n<NULL>\n", 'a session returns rows, NULL visibly');
}

# --- argument values -------------------------------------------------------------
sub pick { return $_[ int(rand(@_)) ]; }
sub chance { return rand() < $_[0]; }

sub lit
{
	my ($text, $type) = @_;
	return "NULL::$type" unless defined $text;
	$text =~ s/'/''/g;
	return "'$text'::$type";
}

my @int4_edges = (0, -1, 1, 2, 31, 32, 1023, 1024, 4095, 4096, 8191, 8192,
	65535, 65536, 100000, 100001, 2147483647, -2147483648);
my @int8_edges = ('0', '-1', '1', '4095', '4096', '2147483647', '2147483648',
	'4294967296', '9007199254740991', '9007199254740992',
	'4611686018427387904', '9223372036854775807', '-9223372036854775808');

# Names of generators: those this run created (and dropped), presets and
# the fixed generators' names, and hostile strings.
my @gen_names;       # created by this run, dropped or not
my %gen_info;        # name -> { shard => has a shard field, counter => ..., dropped => ... }
my @other_names = ('snowflake', 'instagram', 'twitter', 'tsid', 'js53', 'nope',
	'fz', 'FZ0', 'a' x 63, 'a' x 64, 'b' x 200);
my @presets = qw(snowflake twitter instagram discord sonyflake tsid js53);
my @hostile = ('', ' ', "'", '"', "a'b", 'a"b', "\t", "\n", '\\', '\\x00',
	'%s%s%n', "x'); DROP TABLE t; --", 'é', '名前', "\xF0\x9F\x98\x80", '-', '--', ':',
	'::', '0', '-0', '+1', '1e400', 'NaN', 'infinity', 'null', '{}', '[]',
	'PUBLIC', 'public', 'x' x 1000, 'y' x 70000);

sub string_edge
{
	return chance(0.05) ? undef : pick(@hostile);
}

sub gen_name
{
	return undef if chance(0.04);
	return pick(@gen_names) if @gen_names && chance(0.7);
	return chance(0.5) ? pick(@other_names) : string_edge() // '';
}

# A layout: mostly valid time and counter layouts, presets, and broken
# ones.
sub random_layout
{
	my $r = rand();
	return pick(@presets, 'SNOWFLAKE', 'Instagram', 'snowflake ', 'nopreset')
	  if $r < 0.15;
	return pick('', ' ', 'time', 'time:', 'time:0', 'time:-1', 'time:65', 'time:41 seq:0',
		'time:41 time:22', 'seq:12 time:41', 'time:41 random:12 seq:10',
		'time:41 seq:23 seq:1', 'time:41 shard:14 seq:8', 'time:41 node:10=',
		'time:41 node:10=1024 seq:12', 'time:41 node:10=-1 seq:12', 'time:41 Node:10 seq:12',
		'time:41 n-o:10 seq:12', 'time:41 node:10 seq:12 extra:1', 'time:64',
		'time:41 node:10 seq:12,', 'time:41  node:10 seq:13', 'time:2147483648 seq:1',
		'time:41 node:10 seq:99999999999999999999', 'seq:64', 'seq:0', 'seq:63 x:1',
		'random:63', 'shard:13 seq:50', 'time:41 é:10 seq:12', "time:41\tnode:10 seq:12",
		'time:41 x:10=3 seq:12 shard:1', 'seq:31=5', 'time:41=1 seq:22')
	  if $r < 0.35;
	return valid_layout(28);
}

# A layout the grammar accepts: a time layout of random widths (the time
# field at least $min_time bits), node fields, constants, a shard and
# random bits, or a counter layout.
sub valid_layout
{
	my ($min_time) = @_;
	my @fields;
	if (chance(0.75))
	{
		my $bits = 64 - (chance(0.5) ? 1 : 0);
		my $time = $min_time + int(rand(44 - $min_time));
		push @fields, "time:$time";
		my $left = $bits - $time;
		if (chance(0.3) && $left > 8)
		{
			my $k = 1 + int(rand(8));
			push @fields, "zone:$k=" . int(rand(2**$k));
			$left -= $k;
		}
		if (chance(0.3) && $left > 13)
		{
			my $k = 1 + int(rand(13));
			push @fields, "shard:$k";
			$left -= $k;
		}
		if (chance(0.7) && $left > 10)
		{
			push @fields, 'node:10';
			$left -= 10;
		}
		my $seq = chance(0.1) ? 0 : 1 + int(rand($left > 1 ? $left : 1));
		$seq = $left if $seq > $left;
		push @fields, "seq:$seq" if $seq > 0;
		$left -= $seq;
		push @fields, "random:$left" if $left > 0 && chance(0.5);
	}
	else
	{
		my $seq = pick(8, 16, 20, 24, 31, 32, 40, 48, 53, 63);
		push @fields, "zone:7=" . int(rand(128)) if chance(0.4) && $seq <= 56;
		push @fields, "worker:" . pick(4, 10, 16) if chance(0.3) && $seq <= 40;
		push @fields, "seq:$seq";
		push @fields, "pad:" . pick(1, 2, 3) . '=' . int(rand(2)) if chance(0.2) && $seq <= 40;
	}
	return join(' ', @fields);
}

my @ts_edges = ('infinity', '-infinity', 'epoch', '1970-01-01 00:00:00.001+00',
	'4714-11-24 00:00:00+00 BC', '294276-12-31 23:59:59.999999+00',
	'0001-01-01 00:00:00+00', '1900-01-01+00', '2000-01-01+00',
	'2010-11-04 01:42:54.657+00', '2011-01-01+00', '2014-09-01+00', '2015-01-01+00',
	'2020-01-01+00', '2024-01-01+00', '2026-01-01+00', '2038-01-19 03:14:08+00',
	'2050-01-01+00', '2100-01-01+00', '2300-01-01+00', '9999-12-31 23:59:59+00');

sub timestamp_arg
{
	return 'NULL::timestamptz' if chance(0.05);
	return 'now()' if chance(0.15);
	return "now() + '" . (chance(0.5) ? '-' : '') . int(rand(10**(1 + int(rand(9))))) . " ms'::interval"
	  if chance(0.2);
	if (chance(0.2))
	{
		my @t = gmtime(int(rand(2**32)) - 2**31 + 1.6e9);
		return lit(sprintf('%04d-%02d-%02d %02d:%02d:%02d.%03d+00', $t[5] + 1900, $t[4] + 1,
			$t[3], $t[2], $t[1], $t[0], int(rand(1000))), 'timestamptz');
	}
	return lit(pick(@ts_edges), 'timestamptz');
}

sub interval_arg
{
	return 'NULL::interval' if chance(0.1);
	my @edges = ('1 ms', '1 ms', '2 ms', '3 ms', '10 ms', '1 s', '1 min', '1 hour', '1 day',
		'1 day 1 ms', '2 days', '0', '-1 ms', '0.5 ms', '1 us', '1.5 ms', '1 mon', '1 year',
		'178000000 years', '-178000000 years', '2147483647 days', '24:00:00');
	push @edges, 'infinity', '-infinity' if $pg_num >= 170000;
	return lit(pick(@edges), 'interval');
}

# Values returned by decoders: fed back as idgen_from_parts() input,
# sometimes broken.
my @parts_pool;
sub jsonb_arg
{
	return 'NULL::jsonb' if chance(0.05);
	if (@parts_pool && chance(0.4))
	{
		my $j = pick(@parts_pool);
		my $r = rand();
		$j =~ s/("seq": )\d+/$1 . pick('-1', '1e400', '9223372036854775808', '"1"', 'null', '1.5', '4096')/e
		  if $r < 0.15;
		$j =~ s/("time": )"[^"]*"/$1 . pick('"infinity"', '"-infinity"', '"2300-01-01T00:00:00Z"', '"4714-11-24T00:00:00Z BC"', '1', 'null', '"x"')/e
		  if $r >= 0.15 && $r < 0.3;
		$j =~ s/\}$/, "bogus": 1}/ if $r >= 0.3 && $r < 0.35;
		return lit($j, 'jsonb');
	}
	my @edges = ('{}', '[]', 'null', '1', '"x"', 'true', '{"time": null}',
		'{"time": "infinity"}', '{"time": "-infinity"}', '{"time": 0}', '{"time": "2026-01-01"}',
		'{"time": "2026-01-01T00:00:00Z", "seq": 0}', '{"time": "2026-01-01T00:00:00Z", "seq": -1}',
		'{"time": "2026-01-01T00:00:00Z", "seq": 1e400}', '{"seq": 9223372036854775807}',
		'{"seq": 9223372036854775808}', '{"seq": -9223372036854775809}', '{"seq": 1.5}',
		'{"seq": "1"}', '{"seq": {"a": 1}}', '{"seq": [1]}', '{"node": 37, "seq": 1}',
		'{"shard": 8192}', '{"shard": -1}', '{"stripe": 1, "seq": 1}', '{"nope": 1}',
		'{"time": "2026-01-01T00:00:00Z", "time ": 1}', '{"": 0}',
		'{' . join(', ', map { "\"k$_\": $_" } 1 .. 2000) . '}');
	return lit(pick(@edges), 'jsonb');
}

# IDs seen (issued or built), fed back to decoders and encoders.
my @id_pool;
my @text_pool;    # idgen_to_text() results
sub int8_arg
{
	my ($argname) = @_;
	return 'NULL::bigint' if chance(0.05);
	return pick(@id_pool) . '::bigint' if @id_pool && chance(0.4);
	if (chance(0.5))
	{
		my $v = pick(@int8_edges);
		$v = "-$v" if $v !~ /^-/ && chance(0.3);
		return "($v)::bigint";
	}
	return int(rand(2**62)) . '::bigint';
}

sub int4_arg
{
	my ($argname, $fname) = @_;
	return 'NULL::integer' if chance(0.06);
	if ($argname eq 'shard' && chance(0.6))
	{
		return pick(0, 1, 2, 17, 99, 100, 8000, 8191) . '::integer';
	}
	if ($argname eq 'n' && chance(0.8))
	{
		return (chance(0.005) ? 100000 : pick(1, 1, 2, 3, 10, 64, 100, 1000)) . '::integer';
	}
	my $v = chance(0.7) ? pick(@int4_edges) : int(rand(2**31)) * (chance(0.2) ? -1 : 1);
	return "($v)::integer";
}

my @alphabets = ('crockford32', 'base62', 'BASE62', 'Crockford32', 'base64', 'base32', '');
my @roles = ($plain, 'PUBLIC', 'public', 'postgres', 'pg_monitor', 'nope_role', '"fuzz_user"', '',
	'FUZZ_USER', 'a.b.c.d', 'pg_catalog.fuzz_user', @grantees[ 0 .. 3 ]);
sub text_arg
{
	my ($argname, $fname) = @_;
	return 'NULL::text' if chance(0.05);
	my $v;
	if ($argname eq 'name' || $argname eq 'generator')
	{
		if ($fname eq 'idgen_convert_column')
		{
			$v = chance(0.7) ? pick('snowflake', 'instagram:17', 'instagram:0', 'instagram:8191',
				'instagram:8192', 'instagram:-1', 'instagram:', 'instagram', 'instagram:1e3')
			  : gen_name();
		}
		else
		{
			$v = gen_name();
		}
	}
	elsif ($argname eq 'layout')
	{
		$v = chance(0.9) ? random_layout() : string_edge();
	}
	elsif ($argname eq 'alphabet')
	{
		$v = chance(0.85) ? pick(@alphabets) : string_edge();
	}
	elsif ($argname eq 'txt')
	{
		my $r = rand();
		if (@text_pool && $r < 0.4)
		{
			$v = pick(@text_pool);
			substr($v, int(rand(length $v)), 1) = pick('I', 'L', 'O', 'U', 'i', 'o', '-', '!', 'é', 'z')
			  if chance(0.3);
		}
		elsif ($r < 0.6)
		{
			$v = pick('7ZZZZZZZZZZZZ', '8000000000000', 'ZZZZZZZZZZZZZ', '0000000000000',
				'0000-0000-0000-0', '-------------', 'AzL8n0Y58m7', 'zzzzzzzzzzz', '00000000000',
				'7ZZZ-ZZZZ-ZZZZ-Z', '000000000000', '00000000000000');
		}
		else
		{
			$v = string_edge() // '';
		}
	}
	elsif ($argname eq 'owned')
	{
		$v = pick('0', '1', '0,2', '0-3', '1-2', '3', '', ' ', '-1', '5-2', '0-2147483647',
			'0,0', '0-1,1', 'a', '0;1', '2147483648', ('0,' x 500) . '1', undef);
	}
	elsif ($argname eq 'role')
	{
		$v = chance(0.8) ? pick(@roles) : string_edge();
	}
	else
	{
		$v = chance(0.5) ? gen_name() : string_edge();
	}
	return lit($v, 'text');
}

my @tables = ('fz_serial', 'fz_ident', 'fz_plain', 'fz_ref', 'fz_small');
sub regclass_arg
{
	return 'NULL::regclass' if chance(0.05);
	return pick("'0'::regclass", "'1259'::regclass", "'pg_class'::regclass",
		"'pg_catalog.pg_proc'::regclass", "'idgen_generator'::regclass")
	  if chance(0.2);
	return lit(pick(@tables), 'regclass');
}

sub name_arg
{
	return 'NULL::name' if chance(0.05);
	return lit(chance(0.7) ? pick('id', 'id', 'ref', 'v', 'ctid', 'xmin', 'nope', 'ID')
		: string_edge() // '', 'name');
}

sub arg_for
{
	my ($type, $argname, $fname) = @_;
	return int4_arg($argname, $fname) if $type eq 'integer';
	return int8_arg($argname) if $type eq 'bigint';
	return text_arg($argname, $fname) if $type eq 'text';
	return timestamp_arg() if $type eq 'timestamp with time zone';
	return interval_arg() if $type eq 'interval';
	return jsonb_arg() if $type eq 'jsonb';
	return pick('true', 'false', 'NULL::boolean') if $type eq 'boolean';
	return regclass_arg() if $type eq 'regclass';
	return name_arg() if $type eq 'name';
	# A new argument type: this test must learn its edges.
	die "no argument values for type $type (in $fname): teach t/070_api_fuzz.pl";
}

# Generators, whose results go to the ID record: the key their IDs are
# unique under, and which argument (if any) selects the shard.
sub generator_of
{
	my ($f, @args) = @_;
	my $n = $f->{name};
	return ('snowflake', 'snowflake') if $n =~ /^snowflake_id(_batch)?$/;
	return ('instagram', 'instagram:' . ($args[0] // '')) if $n =~ /^instagram_id(_batch)?$/;
	return ('uuidv7', 'uuidv7') if $n eq 'idgen_uuidv7';
	return ('flake128', 'flake128') if $n eq 'idgen_flake128';
	if ($n =~ /^idgen_next(_int|_batch)?$/)
	{
		# idgen_next_batch(name, n) has no shard, (name, shard, n) has one
		my $shard = $n eq 'idgen_next_batch' && @args < 3 ? undef : $args[1];
		my $name = $args[0] // '<NULL>';
		return ("named:$name", "named:$name:" . ($shard // ''));
	}
	return;
}

# --- one call ---------------------------------------------------------------------
sub call
{
	my ($s, $f, $sql, @args) = @_;
	$calls++;
	$called{ $f->{sig} }++;
	push @recent, "[$s->{label}] $sql";
	shift @recent while @recent > 20;
	my $r = session_run($s, $sql);
	note("[$s->{label}] " . substr($sql, 0, 300) . "\n=> " . substr($r->{stdout} // '', 0, 300)
		  . ($r->{stderr} // '') . ($r->{lost} // ''))
	  if $ENV{IDGEN_FUZZ_TRACE};
	if ($r->{lost})
	{
		$lost = "session $s->{label} lost during:\n  " . substr($sql, 0, 2000) . "\n$r->{lost}";
		return;
	}
	if (defined $r->{sqlstate})
	{
		$errors{ $r->{sqlstate} }++;
		$by_function{ $f->{sig} }{ $r->{sqlstate} }++;
		if (!$allowed{ $r->{sqlstate} })
		{
			push @unexpected, "$r->{sqlstate} ($r->{message}) from [$s->{label}] "
			  . (length($sql) > 600 ? substr($sql, 0, 600) . '... (' . length($sql) . ' chars)' : $sql);
			diag("unexpected SQLSTATE: $unexpected[-1]") if @unexpected <= 20;
		}
		return;
	}
	$succeeded{ $f->{sig} }++;
	my @lines = split /\n/, $r->{stdout};
	my ($key, $order_key) = generator_of($f, @args);
	if ($key)
	{
		record_ids($key, $order_key, "[$s->{label}] $sql", @lines);
		if ($key !~ /^(uuidv7|flake128)$/)
		{
			push @id_pool, $lines[-1] if @lines && $lines[-1] =~ /^\d+$/;
			shift @id_pool while @id_pool > 200;
		}
	}
	elsif ($f->{name} eq 'idgen_to_text' && @lines && $lines[0] ne '<NULL>')
	{
		push @text_pool, $lines[0];
		shift @text_pool while @text_pool > 100;
	}
	elsif ($f->{name} =~ /^idgen_decode(_layout)?$/ && @lines && $lines[0] =~ /^\{/)
	{
		push @parts_pool, $lines[0];
		shift @parts_pool while @parts_pool > 100;
	}
	elsif ($f->{name} =~ /_from_(time|parts)$/ && @lines && $lines[0] =~ /^\d+$/)
	{
		push @id_pool, $lines[0];
		shift @id_pool while @id_pool > 200;
	}
}

# Call $f with generated arguments (a random number of its defaulted
# trailing ones left out), in the form its result needs.
sub fuzz_call
{
	my ($s, $f) = @_;
	my $nargs = @{ $f->{types} };
	$nargs -= int(rand($f->{ndefaults} + 1)) if $f->{ndefaults};
	my @args = map { arg_for($f->{types}[$_], $f->{argnames}[$_], $f->{name}) } 0 .. $nargs - 1;
	# the ID record keys on the values, not on their SQL spelling
	my @values = map { /^'(.*)'::\w+$/s ? $1 =~ s/''/'/gr : /^\(?(-?\d+)\)?::\w+$/ ? $1 : /^NULL/ ? undef : $_ } @args;
	my $call = "$f->{name}(" . join(', ', @args) . ')';
	my $sql;
	if ($f->{ret} eq 'bigint[]')
	{
		$sql = "SELECT unnest($call)";
	}
	elsif ($f->{retset} || $f->{ret} eq 'record')
	{
		$sql = "SELECT * FROM $call";
	}
	elsif (generator_of($f, @values) && chance(0.3))
	{
		# several IDs from one statement
		$sql = "SELECT $call FROM generate_series(1, " . (1 + int(rand(200))) . ')';
	}
	else
	{
		$sql = "SELECT $call";
	}
	call($s, $f, $sql, @values);
}

# --- directed actions: definitions come and go ------------------------------
my ($by_name) = {};
$by_name->{ $_->{sig} } = $_ for @functions;
sub fn
{
	my ($sig) = @_;
	return $by_name->{$sig} // die "idgen has no function $sig";
}
my $f_create = fn('idgen_create_generator(text,text,timestamp with time zone,interval,integer,integer,integer,text,bigint,bigint,text)');
my $f_drop = fn('idgen_drop_generator(text,boolean)');
my $f_grant = fn('idgen_grant_generator(text,text)');
my $f_revoke = fn('idgen_revoke_generator(text,text)');
my $gen_count = 0;

sub create_generator
{
	my ($s) = @_;
	my $name = chance(0.9) ? 'fz' . ++$gen_count
	  : pick('fz ' . ++$gen_count, "fz'" . ++$gen_count, 'FZ"' . ++$gen_count,
		'fz-é-' . ++$gen_count, 'z' x 62 . ++$gen_count);
	# mostly definitions that can work: time fields that last, epochs
	# in the past
	my $layout = chance(0.8) ? valid_layout(38) : random_layout();
	my @opt;
	push @opt, 'epoch => ' . (chance(0.9) ? lit(pick(@ts_edges[9 .. 15]), 'timestamptz') : timestamp_arg())
	  if chance(0.6);
	push @opt, 'unit => ' . (chance(0.8) ? lit(pick('1 ms', '2 ms', '10 ms', '1 s'), 'interval') : interval_arg())
	  if chance(0.3);
	if ($layout !~ /time/ || chance(0.1))
	{
		push @opt, 'prefetch => ' . pick(1, 10, 1000, 0, -1, 100000000) if chance(0.3);
		push @opt, 'refill => ' . pick(0, 1, 5, 500, 999, 1000, -1) if chance(0.3);
		if (chance(0.5))
		{
			my $stripes = pick(1, 2, 3, 4, 16, 0, -1);
			push @opt, "stripes => $stripes";
			push @opt, 'owned => ' . lit(pick('0', '1', '0,2', '1-3', '0-15', '', '7'), 'text')
			  if chance(0.8);
			push @opt, 'segment => ' . pick(1, 10, 1000, 0, -1) if chance(0.6);
		}
		push @opt, 'start => ' . pick(0, 1, 123000, 2**31, -1) if chance(0.2);
	}
	# mostly a space of its own; sometimes a shared one, or a bad name
	push @opt, 'space => ' . lit(pick('snowflake_id', 'instagram_id', 'fz_space', 'Fz', ''), 'text')
	  if chance(0.2);
	my $sql = 'SELECT idgen_create_generator(' . join(', ', lit($name, 'text'), lit($layout, 'text'), @opt) . ')';
	my $before = $succeeded{ $f_create->{sig} } // 0;
	call($s, $f_create, $sql);
	if (($succeeded{ $f_create->{sig} } // 0) > $before)
	{
		push @gen_names, $name;
		# most generators are granted to the plain role, some to everyone
		my $grantee = pick($plain, $plain, 'PUBLIC', undef);
		call($s, $f_grant, 'SELECT idgen_grant_generator(' . lit($name, 'text') . ', '
			  . lit($grantee, 'text') . ')') if defined $grantee;
	}
}

sub drop_generator
{
	my ($s) = @_;
	return unless @gen_names;
	my $name = pick(@gen_names);
	call($s, $f_drop, 'SELECT idgen_drop_generator(' . lit($name, 'text') . ', '
		  . pick('true', 'true', 'false', 'NULL') . ')');
}

sub grant_or_revoke
{
	my ($s) = @_;
	my $f = chance(0.6) ? $f_grant : $f_revoke;
	call($s, $f, "SELECT $f->{name}(" . lit(gen_name(), 'text') . ', '
		  . lit(chance(0.8) ? pick($plain, 'PUBLIC') : pick(@roles, undef), 'text') . ')');
}

# Grant one generator to many roles, one after the other: past the
# number of roles a generator may be granted to.
sub grant_many
{
	my ($s) = @_;
	return unless @gen_names;
	my $name = pick(@gen_names);
	call($s, $f_grant, 'SELECT idgen_grant_generator(' . lit($name, 'text') . ', '
		  . lit($_, 'text') . ')') for @grantees;
}

# Tables for idgen_convert_column(), owned by the plain role in each
# database, made afresh now and then (a conversion changes them).
sub make_tables
{
	my ($s) = @_;
	my $r = session_run($s, q{
DROP TABLE IF EXISTS fz_ref, fz_serial, fz_ident, fz_plain, fz_small;
CREATE TABLE fz_serial (id serial PRIMARY KEY, v text);
CREATE TABLE fz_ref (id bigserial PRIMARY KEY, ref integer REFERENCES fz_serial);
CREATE TABLE fz_ident (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY);
CREATE TABLE fz_plain (id bigint PRIMARY KEY, v text);
CREATE TABLE fz_small (id smallserial PRIMARY KEY);
INSERT INTO fz_serial (v) SELECT 'x' FROM generate_series(1, 10);
INSERT INTO fz_ref (ref) SELECT 1 FROM generate_series(1, 10);
INSERT INTO fz_ident DEFAULT VALUES});
	$lost = "session $s->{label} lost while making tables\n$r->{lost}" if $r->{lost};
	die "cannot make the conversion tables as $s->{label}: $r->{stderr}"
	  if !$r->{lost} && $r->{stderr} =~ /ERROR/;
}

# --- the run ----------------------------------------------------------------------
my @all_sessions;
for my $db ('postgres', 'fuzzdb')
{
	for my $user ('postgres', $plain)
	{
		my $s = open_session($db, $user);
		push @all_sessions, $s;
		make_tables($s) if $user eq $plain;
	}
}
my ($super_control) = grep { $_->{label} eq "postgres\@postgres" } @all_sessions;

# Generator functions are drawn more often: their IDs feed the record
# and the decoders.
my @weighted;
for my $f (@functions)
{
	my $w = generator_of($f, 'x', 1, 1) ? 6 : 2;
	push @weighted, ($f) x $w;
}

# A few definitions to start with, so that the first calls find some.
create_generator($super_control) for 1 .. 8;

my $t0 = time;
my $deadline = $t0 + $seconds;
while (!$lost && time < $deadline)
{
	my $r = rand();
	# definitions are made and dropped by the superuser in the control
	# database, where they work; elsewhere and by the plain role they
	# must be refused, which the random calls below try too
	if ($r < 0.05)
	{
		create_generator(chance(0.9) ? $super_control : pick(@all_sessions));
	}
	elsif ($r < 0.065)
	{
		drop_generator(chance(0.9) ? $super_control : pick(@all_sessions));
	}
	elsif ($r < 0.09)
	{
		grant_or_revoke(chance(0.8) ? $super_control : pick(@all_sessions));
	}
	elsif ($r < 0.093)
	{
		make_tables(pick(grep { $_->{user} eq $plain } @all_sessions));
	}
	elsif ($r < 0.095)
	{
		grant_many($super_control);
	}
	else
	{
		fuzz_call(pick(@all_sessions), pick(@weighted));
	}
}
my $elapsed = time - $t0;

# --- verdict -------------------------------------------------------------------------
is($lost, undef, 'no session lost its connection') or diag(join("\n", 'last calls:', @recent));
session_end($_) for @all_sessions;

my @crashes = check_crashes($node);

is(scalar(@unexpected), 0, 'every error carried a documented SQLSTATE')
  or diag(join("\n", @unexpected[ 0 .. ($#unexpected < 19 ? $#unexpected : 19) ]));
close $id_log or die "$id_file: $!";
my ($repeated, $distinct_by_key) = repeated_ids($id_file);
is(scalar(@$repeated), 0, 'no generator returned the same ID twice')
  or diag(join("\n", 'repeated (generator, ID):', grep { defined } @$repeated[ 0 .. 19 ]));
is($disorder, 0, 'every generator\'s IDs increased, call after call');
is($nulls, 0, 'no generator returned NULL');

# The run reached what it is meant to: every function, and IDs of the
# fixed and of named generators.
my @never = grep { !$called{ $_->{sig} } } @functions;
is(join(', ', map { $_->{sig} } @never), '', 'every function was called');
cmp_ok($distinct_by_key->{snowflake} // 0, '>', 0, 'snowflake_id() issued IDs');
cmp_ok(scalar(grep { /^named:/ } keys %$distinct_by_key), '>', 0, 'named generators issued IDs');

my $distinct = 0;
$distinct += $_ for values %$distinct_by_key;
diag(sprintf('API fuzzer: seed %d, %.0f s, %d calls (%.0f/s), %d functions, %d generators defined',
	$seed, $elapsed, $calls, $calls / ($elapsed || 1), scalar(@functions), scalar(@gen_names)));
diag('errors by SQLSTATE: '
	  . (join(', ', map { "$_ $errors{$_}" } sort keys %errors) || 'none'));
diag(sprintf('distinct IDs: %d (%s); repeated %d; crashes %d', $distinct,
	join(', ', map { "$_ $distinct_by_key->{$_}" } grep { !/^named:/ } sort keys %$distinct_by_key)
	  . ', named ' . scalar(grep { /^named:/ } keys %$distinct_by_key) . ' generators',
	scalar(@$repeated), scalar(@crashes) + ($lost ? 1 : 0)));
for my $f (@functions)
{
	note(sprintf('%s: %d calls, %d ok, errors %s', $f->{sig}, $called{ $f->{sig} } // 0,
		$succeeded{ $f->{sig} } // 0,
		join(' ', map { "$_:$by_function{$f->{sig}}{$_}" } sort keys %{ $by_function{ $f->{sig} } // {} })
		  || '-'));
}

stop_after_fuzz($node, ($lost || @crashes) ? 1 : 0);
done_testing();
