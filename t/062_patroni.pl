# idgen under Patroni with etcd (PostgreSQL 15 only).
#
# One etcd of the test's own and three-member Patroni clusters on
# loopback, idgen preloaded on every member through Patroni's
# configuration.  Under load, whichever member is primary, the primary
# changes: a patronictl switchover, then its postmaster killed by PID
# (Patroni's primary_start_timeout 0 makes that a failover).  The load is
# pgbench (four clients, reconnecting to whichever member is primary) and
# a psql session that logs every row it saw committed.  Each row takes
# DEFAULT snowflake_id(), a named time generator (tsid, with a node
# field) and a counter (seq:40), and records the timeline of the primary
# that wrote it: one timeline per primary, so rows of a later timeline
# were written after the change of primary.
#
# 1. synchronous_mode: true, each member its own idgen.node_id in its own
#    postgresql.parameters: no duplicate, every ID of a later primary
#    above every ID of the earlier ones on each generator, and every row
#    the client saw committed survives both changes.
# 2. synchronous_mode: true, idgen.node_id = 'auto' with node-id leases
#    on the same etcd (idgen.lease_ttl 3 s): the same checks across a
#    switchover, and each primary holds the lease of its node id.
# 3. synchronous_mode: false (asynchronous), leases as in 2: the same
#    checks across a switchover; then a failover, where what the new
#    primary issues is above every ID it received.  Committed rows the
#    failover lost are counted from the client's log; snowflake and tsid
#    IDs (node field, leased node id) never repeat one of them, which is
#    asserted; a counter without a node field may, which is printed, not
#    asserted.
#
# About 2 minutes on 2 cores.
#
# Skips unless Debian's patroni is installed, or fails when
# IDGEN_PATRONI_REQUIRED is set (scripts/test-it.sh sets it on 15).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use POSIX ();
use JSON::PP ();
use List::Util ();
use Time::HiRes qw(time sleep);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IdgenEtcd;

my ($major) = `pg_config --version` =~ /PostgreSQL (\d+)/
  or die "cannot run pg_config";
plan skip_all => "the Patroni test runs on PostgreSQL 15 only (this is $major)"
  if $major != 15;
my $patroni = $ENV{IDGEN_PATRONI} // '/usr/bin/patroni';
my $patronictl = $ENV{IDGEN_PATRONICTL} // '/usr/bin/patronictl';
unless (-x $patroni && -x $patronictl)
{
	my $why = "Patroni is not installed at $patroni (Debian package patroni)";
	if ($ENV{IDGEN_PATRONI_REQUIRED})
	{
		fail($why);
		done_testing();
		exit;
	}
	plan skip_all => $why;
}

my $bindir = `pg_config --bindir`;
chomp $bindir;
my $user = getpwuid($<);
my $root = PostgreSQL::Test::Utils::tempdir('patroni');
start_etcd();
my $etcd_hostport = etcd_url() =~ s{^http://}{}r;

# ---- processes of our own: each in a process group of its own ----
my @spawned;
sub spawn
{
	my ($log, @cmd) = @_;
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		setpgrp(0, 0);
		open STDIN, '<', '/dev/null';
		open STDOUT, '>>', $log or POSIX::_exit(127);
		open STDERR, '>&', \*STDOUT;
		exec @cmd or POSIX::_exit(127);
	}
	push @spawned, $pid;
	return $pid;
}

# Signal the group of $pid, wait up to $secs for it, then SIGKILL it.
sub stop_group
{
	my ($pid, $sig, $secs) = @_;
	return unless $pid;
	kill $sig, -$pid;
	my $until = time + $secs;
	while (time < $until)
	{
		my $r = waitpid($pid, POSIX::WNOHANG());
		if ($r == $pid || $r == -1)
		{
			@spawned = grep { $_ != $pid } @spawned;
			kill 'KILL', -$pid;    # stragglers of the group
			return;
		}
		sleep 0.1;
	}
	kill 'KILL', -$pid;
	waitpid($pid, 0);
	@spawned = grep { $_ != $pid } @spawned;
}

# The postmaster's PID from its data directory, if it runs.
sub postmaster_pid
{
	my ($m) = @_;
	open my $fh, '<', "$m->{data}/postmaster.pid" or return undef;
	my $pid = <$fh>;
	close $fh;
	return undef unless defined $pid;
	chomp $pid;
	return ($pid =~ /^\d+$/ && kill(0, $pid)) ? $pid : undef;
}

my @clusters;
my $t0 = time;
sub step { note sprintf('%6.1f s  %s', time - $t0, $_[0]); }

# Stop a cluster's Patronis (each stops its PostgreSQL), then any
# postmaster left behind by PID.
sub stop_cluster
{
	my ($c) = @_;
	stop_group($_->{pid}, 'TERM', 60) for grep { $_->{pid} } @{ $c->{members} };
	for my $m (@{ $c->{members} })
	{
		delete $m->{pid};
		if (my $pm = postmaster_pid($m))
		{
			kill 'QUIT', $pm;
			for (1 .. 100) { last unless kill 0, $pm; sleep 0.1; }
			kill 'KILL', $pm if kill 0, $pm;
		}
	}
}

END
{
	local $?;
	# the load first, then Patroni (a copy: stop_group edits @spawned)
	my @load = map { @{ $_->{load} // [] } } @clusters;
	stop_group($_, 'TERM', 10) for @load;
	stop_cluster($_) for @clusters;
	stop_group($_, 'TERM', 10) for my @rest = @spawned;
}

# ---- a Patroni cluster ----
sub yaml_of
{
	my ($c, $m) = @_;
	my $sync = $c->{sync} ? 'true' : 'false';
	my $node = $c->{leases}
	  ? "idgen.node_id: 'auto'\n    idgen.lease_endpoints: '"
	  . etcd_url()
	  . "'\n    idgen.lease_prefix: '/idgen/$c->{scope}/'\n    idgen.lease_ttl: 3"
	  : "idgen.node_id: $m->{node_id}";
	return qq{scope: $c->{scope}
namespace: /service/
name: $m->{name}
restapi:
  listen: 127.0.0.1:$m->{rport}
  connect_address: 127.0.0.1:$m->{rport}
etcd3:
  hosts: $etcd_hostport
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 3
    primary_start_timeout: 0
    maximum_lag_on_failover: 1073741824
    synchronous_mode: $sync
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        shared_preload_libraries: 'idgen'
        max_connections: 40
        wal_keep_size: '256MB'
  initdb:
  - encoding: UTF8
postgresql:
  listen: 127.0.0.1:$m->{port}
  connect_address: 127.0.0.1:$m->{port}
  data_dir: $m->{data}
  bin_dir: $bindir
  pgpass: $m->{dir}/pgpass
  authentication:
    superuser:
      username: $user
    replication:
      username: $user
    rewind:
      username: $user
  pg_hba:
  - local all all trust
  - host all all 127.0.0.1/32 trust
  - host replication all 127.0.0.1/32 trust
  parameters:
    $node
    unix_socket_directories: '$m->{sock}'
    logging_collector: 'on'
    log_directory: '$m->{dir}/log'
    log_min_messages: 'warning'
};
}

sub start_cluster
{
	my ($scope, %opt) = @_;
	my $c = { scope => $scope, sync => $opt{sync}, leases => $opt{leases}, members => [] };
	push @clusters, $c;
	for my $i (1 .. 3)
	{
		my $m = {
			name => "$scope-$i",
			node_id => $i,
			port => PostgreSQL::Test::Cluster::get_free_port(),
			rport => PostgreSQL::Test::Cluster::get_free_port(),
			dir => "$root/$scope-$i",
			sock => PostgreSQL::Test::Utils::tempdir_short(),
		};
		$m->{data} = "$m->{dir}/data";
		mkdir $m->{dir};
		$m->{yaml} = "$m->{dir}/patroni.yml";
		append_to_file($m->{yaml}, yaml_of($c, $m));
		push @{ $c->{members} }, $m;
	}
	# the first one bootstraps; the others then clone it
	my ($first, @rest) = @{ $c->{members} };
	$first->{pid} = spawn("$first->{dir}/patroni.log", $patroni, $first->{yaml});
	my $p = wait_primary($c);
	$_->{pid} = spawn("$_->{dir}/patroni.log", $patroni, $_->{yaml}) for @rest;
	ok( wait_until(sub {
				(sql($p, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'") // 0) == 2
				  && (!$c->{sync}
					|| (sql($p, "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'") // 0) == 1);
			}),
		"$scope: three members, two streaming replicas" . ($c->{sync} ? ', one synchronous' : ''));
	return $c;
}

# Run SQL on a member over TCP; its output, or undef on any error.
sub sql
{
	my ($m, $query) = @_;
	my ($out, $err) = ('', '');
	my $ok = eval {
		IPC::Run::run(
			[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1',
			  '-p', $m->{port}, '-U', $user, '-d', 'postgres', '-c', $query ],
			'>', \$out, '2>', \$err, IPC::Run::timeout(60));
	};
	return undef unless $ok;
	chomp $out;
	return $out;
}

# Wait for a primary other than $not whose keeper is ready; return it.
sub wait_primary
{
	my ($c, $not) = @_;
	my $found;
	wait_until(sub {
		for my $m (@{ $c->{members} })
		{
			next if $not && $m == $not;
			if ((sql($m, "SELECT NOT pg_is_in_recovery() AND keeper_state = 'ready' FROM idgen_status()") // '') eq 't')
			{
				$found = $m;
				return 1;
			}
		}
		return 0;
	});
	BAIL_OUT("$c->{scope}: no primary became ready") unless $found;
	step("$found->{name} is primary");
	return $found;
}

# ---- the load: pgbench and a logging psql, on whichever member is primary ----
sub start_load
{
	my ($c) = @_;
	my $d = "$root/$c->{scope}-load";
	mkdir $d;
	append_to_file("$d/bench.sql",
		"INSERT INTO ids (src) SELECT 'pgbench' FROM generate_series(1, 5);\n");
	append_to_file("$d/logged.sql",
		"INSERT INTO ids (src) VALUES ('psql') RETURNING sf, tg, ctr;\n" x 1000);
	my $ports = join ' ', map { $_->{port} } @{ $c->{members} };
	# each loop tries every member; the replicas refuse the first statement
	my $loop = sub {
		my ($what) = @_;
		return qq{while [ ! -e $d/stop ]; do
  for p in $ports; do
    [ -e $d/stop ] && break
    if [ "\$(psql -XAtq -h 127.0.0.1 -p \$p -U $user -d postgres -c 'SELECT NOT pg_is_in_recovery()' 2>/dev/null)" = t ]; then
      $what
    fi
  done
  sleep 0.2
done
};
	};
	append_to_file("$d/bench.sh", $loop->(
		"timeout -s INT 30 pgbench -n -h 127.0.0.1 -p \$p -U $user -c 4 -j 2 -T 3 -f $d/bench.sql postgres >> $d/bench.log 2>&1"));
	append_to_file("$d/logged.sh", $loop->(
		"timeout -s INT 30 psql -XAtq -v ON_ERROR_STOP=1 -h 127.0.0.1 -p \$p -U $user -d postgres -f $d/logged.sql >> $d/logged.txt 2>> $d/logged.err"));
	$c->{load} = [ spawn("$d/bench.out", 'bash', "$d/bench.sh"),
				   spawn("$d/logged.out", 'bash', "$d/logged.sh") ];
	$c->{loaddir} = $d;
}

sub stop_load
{
	my ($c) = @_;
	# the loops end after the run in progress: a psql killed could leave
	# half a line in its log
	append_to_file("$c->{loaddir}/stop", '');
	stop_group($_, 0, 60) for @{ $c->{load} };
	delete $c->{load};
}

# Wait until the current primary has committed $n more rows of its own
# timeline.
sub wait_rows
{
	my ($c, $p, $n) = @_;
	step("waiting for rows on $p->{name}");
	my $tli = sql($p, "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int");
	ok( wait_until(sub {
				(sql($p, "SELECT count(*) FROM ids WHERE tli = $tli") // 0) >= $n;
			}),
		"$c->{scope}: the load writes on " . $p->{name} . " (timeline $tli)");
	return $tli;
}

sub setup_schema
{
	my ($p) = @_;
	sql($p, q{
		SELECT idgen_create_generator('tickets', 'tsid');
		SELECT idgen_create_generator('orders', 'seq:40');
		CREATE TABLE ids (
			sf bigint DEFAULT snowflake_id(),
			tg bigint DEFAULT idgen_next('tickets'),
			ctr bigint DEFAULT idgen_next('orders'),
			-- the primary's timeline: one per primary
			tli int DEFAULT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int,
			port int DEFAULT inet_server_port(),
			src text)}) // BAIL_OUT('cannot create the schema');
}

# The members as patronictl lists them: name => role ('Leader',
# 'Sync Standby', 'Replica').
sub roles
{
	my ($c) = @_;
	my ($out, $err) = ('', '');
	my $ok = eval {
		IPC::Run::run([ $patronictl, '-c', $c->{members}[0]{yaml}, 'list', '-f', 'json', $c->{scope} ],
			'>', \$out, '2>', \$err, IPC::Run::timeout(60));
	};
	return {} unless $ok;
	my $list = eval { JSON::PP::decode_json($out) } // [];
	return { map { $_->{Member} => $_->{Role} } @$list };
}

# In synchronous mode Patroni hands the primary only to the standby it
# has recorded as synchronous: wait until it has recorded one.
sub wait_sync_standby
{
	my ($c) = @_;
	return 1 unless $c->{sync};
	my $ok = wait_until(sub { grep { $_ eq 'Sync Standby' } values %{ roles($c) } });
	ok($ok, "$c->{scope}: Patroni has a synchronous standby");
	return $ok;
}

sub switchover
{
	my ($c, $p) = @_;
	wait_sync_standby($c);
	step("switchover away from $p->{name}");
	my ($out, $err) = ('', '');
	my $ok = eval {
		IPC::Run::run([ $patronictl, '-c', $p->{yaml}, 'switchover', '--leader', $p->{name},
				'--force', $c->{scope} ], '>', \$out, '2>', \$err, IPC::Run::timeout(120));
	};
	ok($ok && $out =~ /Successfully switched over/,
		"$c->{scope}: patronictl switchover away from $p->{name}") or diag("$out\n$err");
	return wait_primary($c, $p);
}

sub kill_primary
{
	my ($c, $p) = @_;
	wait_sync_standby($c);
	# Patroni fails over only to a replica that is running; without one
	# it restarts the old primary in place
	ok( wait_until(sub {
				(sql($p, "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'") // 0) >= 1;
			}),
		"$c->{scope}: a replica streams from $p->{name}");
	my $pm = postmaster_pid($p);
	ok($pm, "$c->{scope}: the postmaster of $p->{name} runs") or return $p;
	kill 'KILL', $pm;
	note "$c->{scope}: killed the postmaster of $p->{name} (PID $pm)";
	return wait_primary($c, $p);
}

# Checks on the final primary, for each generator: duplicates, and the
# eras (timelines) in order.  Returns the row count.
sub check_rows
{
	my ($c, $p) = @_;
	my $s = $c->{scope};
	my ($rows, @dups) = split /\|/, sql($p,
		'SELECT count(*), count(*) - count(DISTINCT sf), count(*) - count(DISTINCT tg), count(*) - count(DISTINCT ctr) FROM ids');
	is(join(',', @dups), '0,0,0', "$s: no duplicate among $rows rows (snowflake_id, tsid generator, counter)");
	for my $g (qw(sf tg ctr))
	{
		is( sql($p, qq{
			WITH per AS (SELECT tli, min($g) mn, max($g) mx FROM ids GROUP BY tli)
			SELECT count(*) FROM per p WHERE p.mn <= (SELECT max(mx) FROM per q WHERE q.tli < p.tli)}),
			'0', "$s: $g: every ID of a later primary is above every ID committed before");
		is(sql($p, "SELECT count(*) FROM ids WHERE $g IS NULL"), '0', "$s: $g: no NULL");
	}
	note "$s: rows per primary (timeline, member port, node id of snowflake_id, rows):\n"
	  . sql($p, 'SELECT tli, port, snowflake_id_node(sf), count(*) FROM ids GROUP BY 1, 2, 3 ORDER BY 1');
	$c->{dups} = List::Util::sum0(@dups);
	return $rows;
}

# The rows the psql client saw committed, against the table: how many
# are missing, and how many of the missing IDs the table holds all the
# same (issued again by a later primary), per generator.
sub check_logged
{
	my ($c, $p) = @_;
	my $d = $c->{loaddir};
	my ($out, $err) = ('', '');
	my @lines = grep { /^\d+\|\d+\|\d+$/ } split /\n/, slurp_file("$d/logged.txt");
	append_to_file("$d/logged.clean", join('', map { "$_\n" } @lines));
	IPC::Run::run(
		[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', $p->{port},
		  '-U', $user, '-d', 'postgres',
		  '-c', 'CREATE TEMP TABLE logged (sf bigint, tg bigint, ctr bigint)',
		  '-c', "\\copy logged FROM '$d/logged.clean' (DELIMITER '|')",
		  '-c', q{SELECT (SELECT count(*) FROM logged),
			count(*),
			count(*) FILTER (WHERE EXISTS (SELECT FROM ids i WHERE i.sf = l.sf)),
			count(*) FILTER (WHERE EXISTS (SELECT FROM ids i WHERE i.tg = l.tg)),
			count(*) FILTER (WHERE EXISTS (SELECT FROM ids i WHERE i.ctr = l.ctr))
		  FROM logged l WHERE NOT EXISTS (SELECT FROM ids i WHERE i.sf = l.sf AND i.tg = l.tg AND i.ctr = l.ctr)} ],
		'>', \$out, '2>', \$err, IPC::Run::timeout(120))
	  or die "checking the logged rows: $err";
	chomp $out;
	my ($logged, $lost, $sf_again, $tg_again, $ctr_again) = split /\|/, $out;
	ok($logged > 0, "$c->{scope}: the client logged $logged committed rows");
	return ($logged, $lost, $sf_again, $tg_again, $ctr_again);
}

# What pgbench did: transactions, and errors that must never happen.
sub bench_summary
{
	my ($c) = @_;
	my $log = -e "$c->{loaddir}/bench.log" ? slurp_file("$c->{loaddir}/bench.log") : '';
	my $txns = 0;
	$txns += $1 while $log =~ /number of transactions actually processed: (\d+)/g;
	unlike($log, qr/duplicate key|23505/, "$c->{scope}: no duplicate-key error in pgbench's output");
	# what the clients saw while the primary changed
	my $err = -e "$c->{loaddir}/logged.err" ? slurp_file("$c->{loaddir}/logged.err") : '';
	my %seen;
	$seen{$_}++ for "$log\n$err" =~ /(?:ERROR|FATAL):\s+([^\n]{0,70})/g;
	note "$c->{scope}: errors the clients saw:\n"
	  . join("\n", map { "$seen{$_} x $_" } sort { $seen{$b} <=> $seen{$a} } keys %seen);
	return $txns;
}

# ================= 1. synchronous replication, a node id per member =================
my %fig;
{
	my $c = start_cluster('idgen-sync', sync => 1);
	my $p = wait_primary($c);
	setup_schema($p);
	is(join(',', map { sql($_, 'SHOW idgen.node_id') // 'none' } @{ $c->{members} }), '1,2,3',
		'each member has its own idgen.node_id from its own postgresql.parameters');
	start_load($c);
	wait_rows($c, $p, 200);
	$p = switchover($c, $p);
	$fig{switchovers}++;
	wait_rows($c, $p, 200);
	$p = kill_primary($c, $p);
	$fig{failovers}++;
	wait_rows($c, $p, 200);
	stop_load($c);
	my $rows = check_rows($c, $p);
	my ($logged, $lost) = check_logged($c, $p);
	is($lost, 0, "idgen-sync: every one of the $logged rows the client saw committed survived both changes");
	my $txns = bench_summary($c);
	$fig{rows} += $rows;
	$fig{dups} += $c->{dups};
	note "FIGURES idgen-sync: $rows rows ($txns pgbench transactions, $logged logged by psql), "
	  . "$c->{dups} duplicates, 1 switchover, 1 failover, $lost committed rows lost";
	stop_cluster($c);
}

# ====== 2. synchronous replication, node ids leased from the same etcd ======
# The node id a primary leased; etcd must name it as the holder.
sub leased_id
{
	my ($c, $p) = @_;
	my $id = sql($p, 'SELECT lease_node_id FROM idgen_lease_status()') // 'none';
	like(etcd_get("/idgen/$c->{scope}/node/$id"), qr/"port": $p->{port}\b/,
		"$c->{scope}: $p->{name} holds the lease of node id $id in etcd");
	return $id;
}

{
	my $c = start_cluster('idgen-lease', sync => 1, leases => 1);
	my $p = wait_primary($c);
	setup_schema($p);
	start_load($c);
	wait_rows($c, $p, 200);
	my $before = leased_id($c, $p);
	$p = switchover($c, $p);
	$fig{switchovers}++;
	wait_rows($c, $p, 200);
	# the old primary's lease is left to expire ('auto'): the new one
	# claims another id unless it has expired meanwhile, and then starts
	# above what etcd recorded for it
	my $after = leased_id($c, $p);
	note "idgen-lease: node id $before before the switchover, $after after";
	stop_load($c);
	my $rows = check_rows($c, $p);
	my ($logged, $lost) = check_logged($c, $p);
	is($lost, 0, "idgen-lease: every one of the $logged rows the client saw committed survived the switchover");
	my $txns = bench_summary($c);
	$fig{rows} += $rows;
	$fig{dups} += $c->{dups};
	note "FIGURES idgen-lease: $rows rows ($txns pgbench transactions, $logged logged by psql), "
	  . "$c->{dups} duplicates, 1 switchover, node ids $before then $after";
	stop_cluster($c);
}

# ====== 3. asynchronous replication, node ids leased from the same etcd ======
{
	my $c = start_cluster('idgen-async', sync => 0, leases => 1);
	my $p = wait_primary($c);
	setup_schema($p);
	start_load($c);
	wait_rows($c, $p, 200);
	my $before = leased_id($c, $p);
	$p = switchover($c, $p);
	$fig{switchovers}++;
	wait_rows($c, $p, 200);
	my $after = leased_id($c, $p);
	note "idgen-async: node id $before before the switchover, $after after";

	# the failover: received IDs vs the new primary's, and the lost ones
	$p = kill_primary($c, $p);
	$fig{failovers}++;
	wait_rows($c, $p, 200);
	stop_load($c);
	my $rows = check_rows($c, $p);
	my ($logged, $lost, $sf_again, $tg_again, $ctr_again) = check_logged($c, $p);
	is("$sf_again,$tg_again", '0,0',
		'idgen-async: no snowflake_id or tsid ID of a lost row issued again (leased node ids)');
	note "idgen-async: of $logged rows the client saw committed, the failover lost $lost; "
	  . "the new primary issued again $ctr_again of their counter values (seq:40 has no node field)";
	my $txns = bench_summary($c);
	$fig{rows} += $rows;
	$fig{dups} += $c->{dups};
	note "FIGURES idgen-async: $rows rows ($txns pgbench transactions, $logged logged by psql), "
	  . "$c->{dups} duplicates, 1 switchover, 1 failover, $lost committed rows lost, $ctr_again counter values issued again";
	stop_cluster($c);
}

note "FIGURES total: $fig{rows} rows, $fig{dups} duplicates, $fig{switchovers} switchovers, $fig{failovers} failovers";
done_testing();
