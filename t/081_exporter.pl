# Monitoring with Debian's prometheus-postgres-exporter and idgen's
# queries file (monitoring/prometheus-postgres-exporter.yaml), as
# docs/operations.md sets it up.
#
# One server with node id 5 under an etcd lease, a named time generator
# and a counter generator, IDs issued from each, one shard released and
# one released and taken back.  The role the docs create (their first sql
# block of "Monitoring", run as a superuser) runs every other sql block of
# that section; it is no superuser, and a role without the docs' grants
# cannot read what the file reads.  Then the real exporter runs as the
# docs say (their DATA_SOURCE_NAME, with this server's socket directory
# and port; the file by --extend.query-path), on a free loopback port, and
# one scrape of /metrics must have: every series the file defines, and
# exactly the set this test knows; sane values (the reservation's
# headroom above 0 and within idgen.reservation, the keeper up, the lease
# held with at most three quarters of its TTL left, counts of IDs equal to
# what the server says it issued, a counter's remaining values exactly
# those above the last one handed out, a label per generator and per
# shard); and no error: none loading the file, none in the last scrape,
# none in the exporter's log.
#
# Needs /usr/bin/prometheus-postgres-exporter (Debian's package) and etcd.
# Skipped with a message without the exporter, unless
# IDGEN_EXPORTER_REQUIRED is set: then that is a failure.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use HTTP::Tiny;
use CPAN::Meta::YAML;
use POSIX ':sys_wait_h';
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $exporter = '/usr/bin/prometheus-postgres-exporter';
if (!-x $exporter)
{
	my $why = "$exporter not found (Debian package prometheus-postgres-exporter)";
	if ($ENV{IDGEN_EXPORTER_REQUIRED})
	{
		fail($why);
		done_testing();
		exit;
	}
	plan skip_all => "$why; IDGEN_EXPORTER_REQUIRED=1 makes this a failure";
}

# (after the check: without etcd, IdgenEtcd skips or, required, bails out)
require IdgenEtcd;
IdgenEtcd->import;

my $root = "$FindBin::RealBin/..";
my $queries = "$root/monitoring/prometheus-postgres-exporter.yaml";

# ---- the queries file: its series, and the set this test checks ----

my $yaml = CPAN::Meta::YAML->read_string(slurp_file($queries))
  or die "$queries: " . CPAN::Meta::YAML->errstr;
my %series;    # name => [labels of its query]
for my $ns (sort keys %{ $yaml->[0] })
{
	my @labels;
	my @values;
	for my $m (@{ $yaml->[0]{$ns}{metrics} })
	{
		my ($col) = keys %$m;
		if ($m->{$col}{usage} eq 'LABEL') { push @labels, $col; }
		else { push @values, "${ns}_$col"; }
	}
	$series{$_} = [@labels] for @values;
}
my @expected = qw(
  idgen_reservation_headroom_seconds idgen_reservation_seconds
  idgen_reservation_writes_total idgen_reservation_waits_total
  idgen_snowflake_lead_seconds idgen_instagram_lead_seconds idgen_max_lead_seconds
  idgen_snowflake_issued_total idgen_instagram_issued_total idgen_borrowed_total
  idgen_waits_total idgen_clock_regressions_total idgen_keeper_up idgen_standby idgen_node_id
  idgen_keeper_running idgen_keeper_uptime_seconds
  idgen_lease_held idgen_lease_seconds_left idgen_lease_error idgen_lease_error_age_seconds
  idgen_generator_active idgen_generator_issued_total idgen_generator_waits_total
  idgen_generator_borrowed_total idgen_generator_lead_seconds
  idgen_generator_remaining idgen_generator_range
  idgen_shard_released idgen_shards_released);
is(join(' ', sort keys %series), join(' ', sort @expected),
	'the queries file defines exactly the series this test checks');

# ---- the server ----

IdgenEtcd::start_etcd();
my $ttl = 6;
my $node = IdgenEtcd::lease_node('exporter', 5, ttl => $ttl, extra => qq{
idgen.reservation = 30s
idgen.max_wait = 30s
});
$node->start;
wait_for_keeper($node);
IdgenEtcd::wait_for_lease($node, 'held');
IdgenEtcd::wait_until_generating($node);

# The docs' Monitoring section: its sql blocks, the first creating the role
my $docs = slurp_file("$root/docs/operations.md");
my ($section) = $docs =~ /^## Monitoring\n(.*?)(?=^## )/ms;
my @blocks = ($section // '') =~ /^```sql\n(.*?)^```$/msg;
ok(@blocks >= 7, 'docs/operations.md has a Monitoring section with its queries')
  or diag scalar(@blocks) . ' sql blocks';
my @undocumented = grep { ($section // '') !~ /`\Q$_\E[`{]/ } sort keys %series;
ok(!@undocumented, 'the Monitoring section names every series of the file')
  or diag "not named: @undocumented";
my $setup = shift(@blocks) // '';
like($setup, qr/CREATE ROLE prometheus LOGIN/, 'its first block creates the role prometheus');

# A role without those grants cannot read what the file reads: the grants
# are needed, and the file needs no more than they give
$node->safe_psql('postgres', 'CREATE ROLE plain_monitor LOGIN');
for my $rel ('idgen_generator_status', 'idgen_shard_floor')
{
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT count(*) FROM $rel",
		extra_params => [ '-U', 'plain_monitor' ]);
	like($err, qr/permission denied/, "a role without the docs' grants may not read $rel");
}
$node->safe_psql('postgres', $setup);
is($node->safe_psql('postgres',
		"SELECT rolsuper::text || pg_has_role('prometheus', 'pg_monitor', 'member')::text "
		  . "FROM pg_roles WHERE rolname = 'prometheus'"),
	'falsetrue', 'prometheus is no superuser, and a member of pg_monitor');

# Some of everything, so that counters move
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('orders_id', 'snowflake');
	SELECT idgen_create_generator('invoices', 'seq:20');
	SELECT instagram_id_release(4);
	SELECT instagram_id_release(5);
	SELECT instagram_id_advance(5, instagram_id_from_time(now(), 5));
});
$node->safe_psql('postgres', q{
	SELECT count(idgen_next('orders_id')) FROM generate_series(1, 3);
	SELECT count(idgen_next('invoices')) FROM generate_series(1, 5);
	SELECT count(snowflake_id()) FROM generate_series(1, 7);
	SELECT count(instagram_id(3)) FROM generate_series(1, 2);
});

# Every other sql block of the section runs, as that role
for my $i (0 .. $#blocks)
{
	my ($ret, $out, $err) = $node->psql('postgres', $blocks[$i],
		extra_params => [ '-U', 'prometheus', '-v', 'ON_ERROR_STOP=1' ]);
	ok($ret == 0 && $err eq '' && $out ne '', "the docs' query " . ($i + 1) . ' runs as prometheus, giving rows')
	  or diag "$blocks[$i]\nstderr: $err";
}

# ---- the exporter, as the docs run it ----

my ($dsn) = $docs =~ /^DATA_SOURCE_NAME='([^']*)'$/m;
ok(defined $dsn && $dsn =~ m{host=/run/postgresql\b}, 'the docs give DATA_SOURCE_NAME');
$dsn //= '';
$dsn =~ s{host=/run/postgresql}{'host=' . $node->host . ' port=' . $node->port}e;
my $port = PostgreSQL::Test::Cluster::get_free_port();
my @args = ("--web.listen-address=127.0.0.1:$port", "--extend.query-path=$queries");
# 0.11's bgwriter collector reads columns that PostgreSQL 17 moved: the
# docs say to turn it off there
push @args, '--no-collector.bgwriter' if $node->safe_psql('postgres', 'SHOW server_version_num') >= 170000;
my $log = "$PostgreSQL::Test::Utils::log_path/081_exporter.log";
# setpriv: the exporter dies with this test, however it ends
my @cmd = -x '/usr/bin/setpriv' ? ('/usr/bin/setpriv', '--pdeathsig', 'KILL', '--') : ();
my $pid = fork();
die "fork: $!" unless defined $pid;
if ($pid == 0)
{
	open STDOUT, '>>', $log or die "open $log: $!";
	open STDERR, '>&', \*STDOUT or die "dup: $!";
	$ENV{DATA_SOURCE_NAME} = $dsn;
	exec @cmd, $exporter, @args or die "exec $exporter: $!";
}

END
{
	if ($pid)
	{
		kill 'KILL', $pid;
		waitpid($pid, 0);
	}
}

my $http = HTTP::Tiny->new(timeout => scaled(60), keep_alive => 0);
my $url = "http://127.0.0.1:$port/metrics";
ok(wait_until(sub { ($http->get($url)->{status} // 0) == 200 }), 'the exporter serves /metrics')
  or diag slurp_file($log);

# Issue an ID (a durable reservation now), then scrape once
$node->safe_psql('postgres', 'SELECT snowflake_id()');
my $scrape = $http->get($url);
is($scrape->{status}, 200, 'a scrape answers 200');
# what the server itself says, right after
my %now = split /\|/, $node->safe_psql('postgres', q{
	SELECT 'snowflake_issued|' || snowflake_issued || '|instagram_issued|' || instagram_issued
	       || '|epoch_ms|' || (SELECT extract(epoch FROM epoch) * 1000 FROM idgen_generator_status WHERE name = 'orders_id')
	       || '|now_ms|' || (extract(epoch FROM clock_timestamp()) * 1000)::bigint
	  FROM idgen_status()});

# name => [ { labels => {...}, value => number } ]
my %m;
for my $line (split /\n/, $scrape->{content} // '')
{
	next if $line =~ /^#/;
	my ($name, $labels, $value) = $line =~ /^(\w+)(?:\{(.*)\})? (\S+)$/ or next;
	my %l = ($labels // '') =~ /(\w+)="((?:[^"\\]|\\.)*)"/g;
	push @{ $m{$name} }, { labels => \%l, value => $value };
}

# The value of series $name whose labels include %want; undef if none
sub value
{
	my ($name, %want) = @_;
	for my $s (@{ $m{$name} // [] })
	{
		return $s->{value} + 0
		  unless grep { ($s->{labels}{$_} // "\0") ne $want{$_} } keys %want;
	}
	return undef;
}

is(value('pg_up'), 1, 'pg_up 1: the exporter reached the server as prometheus');
is(value('pg_exporter_user_queries_load_error', filename => $queries), 0,
	'the queries file loaded without error');
is(value('pg_exporter_last_scrape_error'), 0, 'the last scrape had no error');

# every series of the file, with its labels
for my $name (sort keys %series)
{
	ok(@{ $m{$name} // [] }, "$name is scraped")
	  or next;
	next unless @{ $series{$name} };
	my @missing = grep { my $l = $_; grep { !exists $_->{labels}{$l} } @{ $m{$name} } } @{ $series{$name} };
	ok(!@missing, "$name has its labels (@{ $series{$name} })") or diag "without: @missing";
}

# sane values
my $reservation = value('idgen_reservation_seconds');
is($reservation, 30, 'idgen_reservation_seconds: idgen.reservation');
my $headroom = value('idgen_reservation_headroom_seconds');
ok(defined $headroom && $headroom > 0 && $headroom <= $reservation + 1,
	'idgen_reservation_headroom_seconds above 0, within idgen.reservation, right after an ID')
  or diag "headroom: " . ($headroom // 'none');
is(value('idgen_max_lead_seconds'), 60, 'idgen_max_lead_seconds: idgen.max_lead');
is(value('idgen_node_id'), 5, 'idgen_node_id: the node id');
is(value('idgen_keeper_up'), 1, 'idgen_keeper_up 1');
is(value('idgen_standby'), 0, 'idgen_standby 0 on a primary');
is(value('idgen_keeper_running', state => 'ready'), 1, 'idgen_keeper_running 1, state ready');
cmp_ok(value('idgen_keeper_uptime_seconds') // -1, '>', 0, 'idgen_keeper_uptime_seconds above 0');
is(value('idgen_snowflake_issued_total'), $now{snowflake_issued},
	'idgen_snowflake_issued_total: what the server issued');
cmp_ok($now{snowflake_issued}, '>=', 8, '... which counts the test\'s 8 IDs');
is(value('idgen_instagram_issued_total'), $now{instagram_issued},
	'idgen_instagram_issued_total: what the server issued');
cmp_ok(value('idgen_reservation_writes_total') // 0, '>=', 1, 'idgen_reservation_writes_total counts a write');
for my $name (grep { /_total$/ } sort keys %series)
{
	my @bad = grep { !($_->{value} =~ /^\d+(?:\.\d+)?(?:e\+\d+)?$/ && $_->{value} >= 0) } @{ $m{$name} // [] };
	ok(!@bad, "$name: counts of 0 or more") or diag join ' ', map { $_->{value} } @bad;
}
for my $g ('snowflake', 'instagram')
{
	my $lead = value("idgen_${g}_lead_seconds");
	ok(defined $lead && $lead >= 0 && $lead <= 60, "idgen_${g}_lead_seconds within 0..max_lead");
}

is(value('idgen_lease_held', state => 'held'), 1, 'idgen_lease_held 1, state held');
my $left = value('idgen_lease_seconds_left');
ok(defined $left && $left > 0 && $left <= $ttl * 0.75 + 0.5,
	'idgen_lease_seconds_left above 0, at most three quarters of the TTL')
  or diag 'left: ' . ($left // 'none');
is(value('idgen_lease_error'), 0, 'idgen_lease_error 0: etcd answered');

is(value('idgen_generator_active', generator => 'orders_id', kind => 'time'), 1,
	'orders_id: a time generator, active');
is(value('idgen_generator_active', generator => 'invoices', kind => 'counter'), 1,
	'invoices: a counter, active');
is(value('idgen_generator_issued_total', generator => 'orders_id'), 3, 'orders_id issued 3');
is(value('idgen_generator_issued_total', generator => 'invoices'), 5, 'invoices issued 5');
is(value('idgen_generator_range', generator => 'invoices'), 2**20, 'invoices: a range of 2^20');
is(value('idgen_generator_remaining', generator => 'invoices'), 2**20 - 1 - 4,
	'invoices: remaining, every value above the last one handed out (4)');
is(value('idgen_generator_range', generator => 'orders_id'), 2**41, 'orders_id: a range of 2^41 ms');
my $used = 2**41 - 1 - (value('idgen_generator_remaining', generator => 'orders_id') // 0);
ok(abs($used - ($now{now_ms} - $now{epoch_ms})) < 60_000,
	'orders_id: the range used is the time since its epoch, in ms')
  or diag "used $used, since the epoch " . ($now{now_ms} - $now{epoch_ms});
my $glead = value('idgen_generator_lead_seconds', generator => 'orders_id');
ok(defined $glead && $glead >= 0 && $glead <= 60, 'orders_id: lead within 0..max_lead');

is(value('idgen_shard_released', shard => '4'), 1, 'shard 4: released');
is(value('idgen_shard_released', shard => '5'), 0, 'shard 5: taken back');
is(value('idgen_shards_released'), 1, 'idgen_shards_released 1');

# no error in the exporter's log (a failed query is logged there, naming
# its query; collectors log theirs at level=error)
my @errors = grep { /level=error|Error running query/ } split /\n/, slurp_file($log);
is(scalar(@errors), 0, 'the exporter logged no error') or diag join "\n", @errors;

# The exporter ends with the test: TERM, and it exits
kill 'TERM', $pid;
ok(wait_until(sub { waitpid($pid, WNOHANG) == $pid }), 'the exporter stops on TERM');
$pid = undef;

$node->stop;
IdgenEtcd::stop_etcd();
done_testing();
