# Moving an instagram shard while it is being written, with default
# settings: instagram_id_release() stops the old server at once, statements
# already running included, and returns the ID the new server continues
# above.  And an advanced shard keeps its floor across a restart without
# holding back any other generator.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $a = idgen_node('a', conf => "idgen.node_id = 1\nidgen.shards = '0-7'\n");
$a->start;
my $b = idgen_node('b', conf => "idgen.node_id = 2\nidgen.shards = '8-15'\n");
$b->start;
wait_for_keeper($_) for ($a, $b);
$_->safe_psql('postgres', 'CREATE TABLE t (id bigint, via text)') for ($a, $b);

# Writers on A: one long statement (10^8 IDs of shard 3 need at least 97 s
# at 1,024 per ms, so it is still running when the shard moves), and
# pgbench inserting one committed row at a time, for longer than the test
# may take: only the release ends either.
my $long = psql_background($a, 'postgres',
	"INSERT INTO t SELECT instagram_id(3), 'long' FROM generate_series(1, 100000000)",
	timeout => scaled(90));
my $forever = 10 * $PostgreSQL::Test::Utils::timeout_default;
my $script = $a->basedir . '/insert.sql';
append_to_file($script, "INSERT INTO t VALUES (instagram_id(3), 'pgbench');\n");
my $bench_out = '';
my $bench = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '2', '-j', '1', '-T', $forever, '-f', $script,
	  $a->connstr('postgres') ],
	'>', \$bench_out, '2>', \$bench_out,
	IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
ok($a->poll_query_until('postgres', "SELECT count(*) > 1000 FROM t WHERE via = 'pgbench'"),
	'A is inserting rows of shard 3');
ok($a->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE 'INSERT INTO t SELECT instagram_id(3)%' AND state = 'active'"),
	'and a long statement is running');

# The move, as the README says.  1. A: drop the shard from idgen.shards,
# reload, release.  The long statement is still running at this point.
alter_system_and_reload($a, { 'idgen.shards' => '0-2,4-7' });
my $released = $a->safe_psql('postgres', 'SELECT instagram_id_release(3)');
like($released, qr/^\d+$/, 'instagram_id_release(3) returns the last ID of shard 3 on A');

ok(eval { $long->{h}->finish; 1 } // 0, 'the long statement ended long before it could have finished')
  or $long->{h}->kill_kill;
like($long->{err}, qr/ERROR:\s+shard 3 is not owned by this server/,
	'it was stopped mid-statement with "shard 3 is not owned by this server"');
ok(eval { $bench->finish; 1 } // 0, 'pgbench ended long before its run time')
  or $bench->kill_kill;
like($bench_out, qr/shard 3 is not owned by this server/, 'pgbench was stopped the same way');
is(($bench->full_result(0) // 0) >> 8, 2, 'its clients aborted (exit status 2)');
is($a->safe_psql('postgres', "SELECT max(id) <= $released FROM t"), 't',
	'every committed row of A is at or below the released ID');
like(error_of($a, 'SELECT instagram_id(3)'), qr/^22023: shard 3 is not owned/,
	'A refuses shard 3 from now on');

# 2. B: advance above the released ID, take the shard, write.
$b->safe_psql('postgres', "SELECT instagram_id_advance(3, $released)");
alter_system_and_reload($b, { 'idgen.shards' => '3,8-15' });
ok($b->poll_query_until('postgres', 'SELECT instagram_id_shard(instagram_id(3)) = 3'),
	'B issues for shard 3');
$b->safe_psql('postgres', "INSERT INTO t SELECT instagram_id(3), 'b' FROM generate_series(1, 20000)");

# all of A's rows meet B's
my $a_rows = $a->safe_psql('postgres', 'SELECT id FROM t');
$b->safe_psql('postgres', "CREATE TABLE from_a (id bigint); INSERT INTO from_a VALUES ("
	  . join('),(', split(/\n/, $a_rows)) . ')');
is($b->safe_psql('postgres', q{
	SELECT (SELECT min(id) FROM t) > (SELECT max(id) FROM from_a),
	       (SELECT count(*) FROM (SELECT id FROM t UNION ALL SELECT id FROM from_a) u)
	     - (SELECT count(DISTINCT id) FROM (SELECT id FROM t UNION ALL SELECT id FROM from_a) u)}),
	't|0', 'every ID of shard 3 on B is above every ID A issued, and none is duplicated');

# --- an advance far ahead: bounded, and never a stall for others ----------
my $ahead = q{instagram_id_from_parts(clock_timestamp() + interval '60 s', 9, 0)};
like(error_of($b, "SELECT instagram_id_advance(9, $ahead)"),
	qr/^22023: ID is \d+ ms ahead of the clock/,
	'an advance beyond idgen.max_lead needs force => true');
like(error_of($b, "SELECT instagram_id_advance(9, $ahead, force => true)"), qr/^no error$/,
	'with force => true it is accepted');
like(error_of($b, 'SELECT instagram_id(9)'), qr/^55P03: wall clock is behind the instagram IDs already issued/,
	'shard 9 then waits for the clock to catch up');
is(error_of($b, 'SELECT snowflake_id(), instagram_id(8)'), 'no error',
	'snowflake_id() and other shards are not held back');

$b->stop('immediate');
$b->start;
wait_for_keeper($b);
is(error_of($b, 'SELECT snowflake_id(), instagram_id(8)'), 'no error',
	'after a restart, snowflake_id() and other shards work at once');
like(error_of($b, 'SELECT instagram_id(9)'), qr/^55P03: wall clock is behind the instagram IDs already issued/,
	'and shard 9 is still above its advanced ID: the floor is durable');
is($b->safe_psql('postgres', "SELECT instagram_id(3) > $released"), 't',
	'so is shard 3\'s');

# --- floors survive the extension being dropped and re-created ----------------
# The keeper re-creates the extension in idgen.database; the floors it
# held in memory must be durable again before the next restart.
# Shard 10 is advanced an hour ahead, so that only its floor, not the
# clock, can keep it there however slow the machine.
my $hour = q{instagram_id_from_parts(clock_timestamp() + interval '1 hour', 10, 0)};
$b->safe_psql('postgres', "SELECT instagram_id_advance(10, $hour, force => true)");
$b->safe_psql('postgres', 'DROP EXTENSION idgen CASCADE');
wait_for_keeper($b);
ok($b->poll_query_until('postgres',
		'SELECT count(*) > 0 FROM idgen_shard_floor WHERE shard = 10'),
	'the keeper writes shard 10\'s floor into the re-created extension');
$b->stop('immediate');
$b->start;
wait_for_keeper($b);
like(error_of($b, 'SELECT instagram_id(10)'), qr/^55P03: wall clock is behind the instagram IDs already issued/,
	'after a restart, shard 10 is still above its advanced ID');

# --- a release never answers without the state it needs ------------------------
# A's keeper cannot load (idgen.database owned by a role that is not a
# superuser): release must fail, not return NULL, which the documented move
# would pass to instagram_id_advance() as "no floor".
my $superuser = $a->safe_psql('postgres', 'SELECT current_user');
my $last4 = $a->safe_psql('postgres', 'SELECT max(instagram_id(4)) FROM generate_series(1, 1000)');
$a->safe_psql('postgres', 'CREATE ROLE plain LOGIN; ALTER DATABASE postgres OWNER TO plain');
$a->stop('immediate');
$a->start;
like(error_of($a, 'SELECT instagram_id_release(4)'), qr/^55000: /,
	'with the keeper refusing to load, instagram_id_release() fails with 55000');
like(error_of($a, 'SELECT instagram_id_release(NULL)'), qr/^22004: /,
	'a NULL shard is an error');
like(error_of($a, 'SELECT instagram_id_advance(4, NULL)'), qr/^22004: /,
	'instagram_id_advance() with a NULL ID is an error, not a silent no-op');
like(error_of($a, 'SELECT instagram_id_advance(4, NULL, true)'), qr/^22004: /,
	'so is its three-argument form');
$a->safe_psql('postgres', qq{ALTER DATABASE postgres OWNER TO "$superuser"});
wait_for_keeper($a);
is($a->safe_psql('postgres', "SELECT instagram_id_release(4) >= $last4"), 't',
	'once the keeper has loaded, the released ID is at or above every ID issued before the restart');
is($a->safe_psql('postgres', 'SELECT instagram_id_shard(instagram_id_release(5)) = 5'), 't',
	'and a shard that never issued releases a floor of its own, never NULL');

# --- a release is durable ------------------------------------------------------
# Shard 3 was released on A.  Listing it in idgen.shards again, or a
# restart, must not let A issue it while B does; advancing it on A above
# B's IDs takes it back.
# Shard 8 (B's) is listed too, only as a probe: once A issues for it, A's
# keeper has applied the new setting to every shard.
alter_system_and_reload($a, { 'idgen.shards' => '0-8' });
ok($a->poll_query_until('postgres', 'SELECT instagram_id_shard(instagram_id(8)) = 8'),
	'A lists shard 3 again, and its keeper has applied that');
like(error_of($a, 'SELECT instagram_id(3)'), qr/^22023: shard 3 is not owned/,
	'A still refuses the released shard 3');
$a->stop('immediate');
$a->start;
wait_for_keeper($a);
like(error_of($a, 'SELECT instagram_id(3)'), qr/^22023: shard 3 is not owned/,
	'and after an immediate restart');
my $b_last3 = $b->safe_psql('postgres', 'SELECT instagram_id_release(3)');
$a->safe_psql('postgres', "SELECT instagram_id_advance(3, $b_last3, true)");
is($a->safe_psql('postgres', "SELECT instagram_id(3) > $b_last3"), 't',
	'advancing shard 3 on A above B\'s last ID takes it back');
like(error_of($b, 'SELECT instagram_id(3)'), qr/^22023: shard 3 is not owned/,
	'while B, which released it, refuses it');

$a->stop;
$b->stop;
done_testing();
