# idgen behind pgbouncer in transaction pooling mode (PostgreSQL 15 only).
#
# A server with idgen and a pgbouncer of its own (Unix socket in the
# test's directory, pool_mode = transaction, two server connections per
# role shared by six pgbench clients, round robin so that one client's
# transactions land on different server connections).  Clients log in as
# the superuser and as an ordinary role granted the named generators.  Each transaction inserts keys
# from DEFAULT snowflake_id(), snowflake_id_batch(), a named time
# generator and a counter generator, both called by a constant name from
# a multi-row INSERT (one call site evaluated many times), and records the
# server connection's backend PID.  Runs with pgbench's simple and
# extended query protocols at the same time; with --protocol=prepared too
# when pgbouncer can keep prepared statements in transaction mode
# (max_prepared_statements, pgbouncer 1.21 and later).  Every run must end
# with status 0, no aborted client and no failed transaction; no ID
# occurs twice; and the rows prove that transactions really were spread
# over the shared server connections.
#
# Debian 12's pgbouncer is 1.18; the test skips when pgbouncer is not
# installed, unless IDGEN_PGBOUNCER_REQUIRED is set (scripts/test-it.sh
# sets it for PostgreSQL 15): then it fails.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my ($major) = `pg_config --version` =~ /PostgreSQL (\d+)/
  or die "cannot run pg_config";
plan skip_all =>
  "the pgbouncer test runs on PostgreSQL 15 only (this is $major)"
  if $major != 15;

# Debian's, unless IDGEN_PGBOUNCER names another binary
my $pgbouncer = $ENV{IDGEN_PGBOUNCER} // '/usr/sbin/pgbouncer';
unless (-x $pgbouncer)
{
	my $why = "pgbouncer is not installed at $pgbouncer (Debian package pgbouncer)";
	if ($ENV{IDGEN_PGBOUNCER_REQUIRED})
	{
		fail($why);
		done_testing();
		exit;
	}
	plan skip_all => $why;
}
my ($bouncer_version) = `$pgbouncer --version` =~ /PgBouncer (\d+\.\d+)/
  or die "cannot run $pgbouncer --version";
# max_prepared_statements: protocol-level prepared statements in
# transaction pooling, from pgbouncer 1.21 on
my ($bmaj, $bmin) = split /\./, $bouncer_version;
my $prepared_ok = $bmaj > 1 || ($bmaj == 1 && $bmin >= 21);
note "pgbouncer $bouncer_version: --protocol=prepared "
  . ($prepared_ok ? 'tested' : 'not tested (needs 1.21 for max_prepared_statements)');

my $node = idgen_node('pooled', conf => qq{
idgen.node_id = 42
max_connections = 20
log_min_messages = warning
});
$node->start;
wait_for_keeper($node);
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('sony', 'sonyflake');
	SELECT idgen_create_generator('tickets', 'zone:7=3 worker:16 seq:40');
	CREATE TABLE sf (id bigint DEFAULT snowflake_id(), run int, client int, pid int,
	                 who name DEFAULT current_user);
	CREATE TABLE named (id bigint, run int, client int, pid int);
	CREATE TABLE counter (id bigint, run int, client int, pid int);
	-- applications log in as an ordinary role, granted what they draw from
	CREATE ROLE app LOGIN;
	GRANT INSERT ON sf, named, counter TO app;
	SELECT idgen_grant_generator('sony', 'app');
	SELECT idgen_grant_generator('tickets', 'app');
});

# ---- pgbouncer, on a Unix socket in a short directory of its own ----
my $dir = PostgreSQL::Test::Utils::tempdir_short();
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $user = $node->safe_psql('postgres', 'SELECT current_user');
my $host = $node->host;
my $server_port = $node->port;
append_to_file("$dir/userlist.txt", qq{"$user" ""\n"app" ""\n});
append_to_file("$dir/pgbouncer.ini", qq{[databases]
postgres = host=$host port=$server_port dbname=postgres

[pgbouncer]
listen_addr =
listen_port = $port
unix_socket_dir = $dir
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = 2
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 50
server_round_robin = 1
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
} . ($prepared_ok ? "max_prepared_statements = 100\n" : ''));

my $bouncer_out = '';
my $bouncer = IPC::Run::start([ $pgbouncer, "$dir/pgbouncer.ini" ],
	'>', \$bouncer_out, '2>', \$bouncer_out);
# stop it whatever happens to the test
END { $bouncer->kill_kill if $bouncer && $bouncer->pumpable; }

my $bouncer_connstr = "host=$dir port=$port dbname=postgres";
ok( wait_until(
		sub {
			system("psql -X -q -c 'SELECT 1' '$bouncer_connstr user=$user' >/dev/null 2>&1") == 0;
		}),
	"pgbouncer $bouncer_version accepts connections")
  or BAIL_OUT("pgbouncer did not start: $bouncer_out "
	  . (-e "$dir/pgbouncer.log" ? slurp_file("$dir/pgbouncer.log") : ''));

# ---- pgbench through pgbouncer ----
# One transaction: IDs from every kind of generator, the client and the
# server connection (backend PID) it ran on.
my $script = q{
BEGIN;
INSERT INTO sf (run, client, pid) SELECT :run::int, :client_id::int, pg_backend_pid() FROM generate_series(1, 5);
INSERT INTO sf (id, run, client, pid) SELECT unnest(snowflake_id_batch(5)), :run::int, :client_id::int, pg_backend_pid();
INSERT INTO named (id, run, client, pid) SELECT idgen_next('sony'), :run::int, :client_id::int, pg_backend_pid() FROM generate_series(1, 5);
INSERT INTO counter (id, run, client, pid) SELECT idgen_next('tickets'), :run::int, :client_id::int, pg_backend_pid() FROM generate_series(1, 5);
COMMIT;
};
append_to_file("$dir/idgen.sql", $script);

# the simple protocol as the superuser, the others as role app: two pools
my @protocols = ('simple', 'extended');
push @protocols, 'prepared' if $prepared_ok;
my %user_of = (simple => $user, extended => 'app', prepared => 'app');
my $clients = 6;
my $transactions = 100;
my @runs;
for my $i (0 .. $#protocols)
{
	my $protocol = $protocols[$i];
	my $out = '';
	push @runs, [ $protocol, \$out, IPC::Run::start(
		[ 'pgbench', '-n', '-c', $clients, '-j', '1', '-t', $transactions,
		  "--protocol=$protocol", '-D', "run=$i", '-f', "$dir/idgen.sql",
		  "$bouncer_connstr user=$user_of{$protocol}" ],
		'>', \$out, '2>', \$out,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default * 3)) ];
}
for my $run (@runs)
{
	my ($protocol, $out, $h) = @$run;
	$h->finish;
	my $status = $h->full_result(0);
	is($status & 127 ? 'signal ' . ($status & 127) : 'exit ' . ($status >> 8),
		'exit 0', "$protocol protocol: pgbench exited with status 0")
	  or diag($$out);
	unlike($$out, qr/\bclient \d+ [^\n]*\baborted\b/,
		"$protocol protocol: no pgbench client aborted");
	like($$out, qr/number of failed transactions: 0 /,
		"$protocol protocol: no failed transaction");
	like($$out, qr/number of transactions actually processed: @{[ $clients * $transactions ]}\//,
		"$protocol protocol: all $clients x $transactions transactions ran");
}

# ---- what landed ----
my $expect = scalar(@protocols) * $clients * $transactions * 5;
is($node->safe_psql('postgres', q{
	SELECT (SELECT count(*) FROM sf), (SELECT count(*) FROM named), (SELECT count(*) FROM counter)}),
	join('|', 2 * $expect, $expect, $expect),
	'every transaction inserted all its rows');
is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM sf'),
	'0', 'snowflake_id() and snowflake_id_batch() together: zero duplicates');
is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM named'),
	'0', 'named time generator: zero duplicates');
is($node->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM counter'),
	'0', 'counter generator: zero duplicates');
is($node->safe_psql('postgres', q{
	SELECT bool_and(snowflake_id_node(id) = 42) FROM sf}),
	't', 'every snowflake ID carries this server\'s node id');
is($node->safe_psql('postgres', q{
	SELECT bool_and((idgen_decode('sony', id) ->> 'machine')::int = 42) FROM named}),
	't', 'every named-generator ID carries this server\'s node id');

# The pools really were shared: at most two server connections per role
# served all its clients, and clients' transactions moved between them.
is($node->safe_psql('postgres', q{
	SELECT string_agg(who || ':' || (n <= 2), ' ' ORDER BY who)
	  FROM (SELECT who, count(DISTINCT pid) AS n FROM sf GROUP BY who) p}),
	"app:true $user:true",
	'at most default_pool_size = 2 server connections per role served its clients');
cmp_ok($node->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT run, client FROM sf GROUP BY run, client
	                      HAVING count(DISTINCT pid) > 1) c}),
	'>', 0, 'transactions of one client ran on different server connections');

# no error anywhere: not in the server's log, not in pgbouncer's
my $log = slurp_file($node->logfile);
unlike($log, qr/\b(ERROR|FATAL|PANIC):/, 'the server logged no error');
my $blog = slurp_file("$dir/pgbouncer.log");
unlike($blog, qr/\b(ERROR|FATAL)\b/, 'pgbouncer logged no error');

# ---- stop pgbouncer by its PID, then the server ----
my $pid = slurp_file("$dir/pgbouncer.pid");
chomp $pid;
is(kill('TERM', $pid), 1, 'pgbouncer stopped by its PID');
$bouncer->finish;
$node->stop;
done_testing();
