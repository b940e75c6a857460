# On a physical standby every entry point that issues IDs or changes
# server-wide state refuses with 25006; decoding by layout works, and so
# does decoding by name in idgen.database, from the replicated definitions.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $primary = idgen_node('primary', allows_streaming => 1, conf => q{
idgen.node_id = 7
});
$primary->start;
wait_for_keeper($primary);
$primary->safe_psql('postgres', q{
	CREATE ROLE app;
	SELECT idgen_create_generator('timed', 'time:41 tag:3=3 node:10 seq:9');
	SELECT idgen_create_generator('count', 'zone:4=5 seq:27');
	SELECT idgen_create_generator('sharded', 'time:40 shard:4 seq:19', epoch => '2022-06-01+00');
	SELECT idgen_create_generator('odd', 'half:1=1 seq:30', stripes => 2, owned => '1');
	SELECT idgen_create_generator('gone', 'time:41 tag:3=6 node:10 seq:9', unit => '10 ms');
	SELECT idgen_grant_generator('timed', 'app');
	SELECT idgen_next('timed'), idgen_next('count'), idgen_next('sharded', 1), snowflake_id(), instagram_id(3);
	CREATE DATABASE other;
});
$primary->safe_psql('other', 'CREATE EXTENSION idgen');
# IDs of each generator, several calls apart
my %ids;
for my $gen ('timed', 'count', 'odd', 'gone')
{
	$ids{$gen} = [ split /\n/, $primary->safe_psql('postgres',
		qq{SELECT idgen_next('$gen') FROM generate_series(1, 3) UNION ALL SELECT idgen_next('$gen')}) ];
}
$ids{sharded} = [ split /\n/, $primary->safe_psql('postgres',
	q{SELECT unnest(idgen_next_batch('sharded', 5, 2)) UNION ALL SELECT idgen_next('sharded', 11)}) ];
$primary->safe_psql('postgres', q{SELECT idgen_drop_generator('gone', true)});
my $id = $primary->safe_psql('postgres', 'SELECT snowflake_id()');
my $ig3 = $primary->safe_psql('postgres', 'SELECT instagram_id(3)');

my $standby = standby_from_backup($primary, 'standby', conf => "idgen.node_id = 8\n");
$primary->wait_for_catchup($standby);

for my $call (
	'snowflake_id()', 'instagram_id(3)', 'snowflake_id_batch(10)',
	'instagram_id_batch(3, 10)', 'idgen_uuidv7()', 'idgen_flake128()',
	q{idgen_next('timed')}, q{idgen_next('count')}, q{idgen_next_int('count')},
	q{idgen_next('sharded', 1)}, q{idgen_next_batch('timed', 10)},
	q{idgen_next_batch('count', 10)}, q{idgen_next_batch('sharded', 1, 10)},
	"instagram_id_advance(3, $ig3)", "instagram_id_advance(3, $ig3, true)",
	'instagram_id_release(3)',
	q{idgen_create_generator('new_one', 'time:41 tag:3=4 node:10 seq:9')},
	q{idgen_drop_generator('timed', true)},
	q{idgen_grant_generator('timed', 'app')},
	q{idgen_revoke_generator('timed', 'app')})
{
	like(error_of($standby, "SELECT $call"), qr/^25006: /, "on a standby, $call refuses with 25006");
}

# The output of SQL on the standby, or its error, as one string to compare.
sub on_standby
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $standby->psql('postgres', $sql);
	return $ret == 0 ? $out : "error: $err";
}

# Decoding by name reads the definition the primary replicated, and agrees
# with the primary: time and counter layouts, constants, shards, stripes,
# and a dropped generator (its IDs are still in tables).
# A role without any grant may decode, as on the primary.
for my $gen ('timed', 'count', 'odd', 'sharded', 'gone')
{
	for my $gid (@{ $ids{$gen} })
	{
		my $sql = qq{SELECT idgen_decode('$gen', $gid),
			CASE WHEN idgen_decode('$gen', $gid) ? 'time' THEN idgen_time('$gen', $gid) END,
			idgen_from_parts('$gen', idgen_decode('$gen', $gid)) = $gid};
		my $want = $primary->safe_psql('postgres', $sql);
		like($want, qr/^\{.*\}\|.*\|t$/, "the primary decodes $gen ID $gid");
		is(on_standby($sql), $want,
			"the standby decodes $gen ID $gid as the primary does");
	}
}
is(on_standby(qq{SET ROLE app;
	SELECT (idgen_decode('count', $ids{count}[0]) ->> 'zone')::int,
	       idgen_time('timed', $ids{timed}[0]) = idgen_time('timed', $ids{timed}[0])}),
	'5|t', 'a role without a grant on count (app has one on timed only) decodes by name on the standby');

like(error_of($standby, "SELECT idgen_decode('nosuch', $id)"),
	qr/^42704: generator "nosuch" does not exist/,
	'on a standby, an unknown name is 42704');
like(error_of($standby, "SELECT idgen_time('count', $ids{count}[0])"),
	qr/^22023: generator "count" has no time field/,
	'on a standby, idgen_time() of a counter is 22023, as on the primary');
like(error_of($standby, "SELECT idgen_decode('timed', $id)", 'other'),
	qr/^25006: named generators are decoded only in database "postgres" during recovery/,
	'on a standby, decoding by name outside idgen.database refuses with 25006, saying where');
like(error_of($standby, "SELECT idgen_from_time('timed', now())"),
	qr/^25006: /, 'on a standby, idgen_from_time() (it embeds the node id) refuses with 25006');

# a generator created after the standby started decodes there once replayed
$primary->safe_psql('postgres',
	q{SELECT idgen_create_generator('later', 'time:41 tag:3=2 node:10 seq:9', unit => '2 ms')});
my $later = $primary->safe_psql('postgres', q{SELECT idgen_next('later')});
my $later_want = $primary->safe_psql('postgres', qq{SELECT idgen_decode('later', $later)});
ok($standby->poll_query_until('postgres',
		qq{SELECT idgen_decode('later', $later) = '$later_want'::jsonb}),
	'a generator created on the primary decodes on the standby once replayed');
is(on_standby(qq{SELECT idgen_time('later', $later)}),
	$primary->safe_psql('postgres', qq{SELECT idgen_time('later', $later)}),
	'and its time agrees with the primary');
# generation by it still refuses
like(error_of($standby, "SELECT idgen_next('later')"), qr/^25006: /,
	'on a standby, idgen_next() of a replayed generator refuses with 25006');

# DROP EXTENSION on a standby, where generators are defined: PostgreSQL's
# own refusal of a write during recovery, not a lock error of idgen's check
like(error_of($standby, 'DROP EXTENSION idgen'), qr/^25006: /,
	'on a standby, DROP EXTENSION idgen is refused as a write in recovery (25006)');

# A statement decoding many IDs reads the definition once (its call site
# keeps it), and nothing kept may outlive the statement: the checks below
# also run in one session on the standby that decoded by that name just
# before, and must see each change of who controls the table.
my $reader = psql_session($standby, 'postgres');
my $many = qq{SELECT count(idgen_time('timed', $ids{timed}[0] + g)) = 1000
	FROM generate_series(0, 999) g};
is(session_safe($reader, $many), 't', 'a session on the standby decodes 1,000 IDs by name');

# The standby trusts the table as the keeper does: owned by a superuser,
# its columns unaltered (a superuser's mistake on the primary reaches the
# standby too).  Last, since the primary's keeper refuses it as well.
# A table of the extension handed to a non-superuser on the primary: the
# standby refuses to read the definitions (42501), also in the session
# that read one before; given back, that session decodes again.
sub handed_over
{
	my ($table, %name) = @_;
	my $refused = qr/idgen's "$table" in database "postgres" is not a logged table owned by a superuser/;
	$primary->safe_psql('postgres', "ALTER TABLE $table OWNER TO app");
	$primary->wait_for_catchup($standby);
	like(error_of($standby, "SELECT idgen_decode('timed', $id)"), qr/^42501: $refused/, $name{fresh})
	  if $name{fresh};
	like(session_run($reader, "SELECT idgen_decode('timed', $id)")->{message} // 'no error',
		qr/^$refused/, $name{session});
	$primary->safe_psql('postgres', "ALTER TABLE $table OWNER TO CURRENT_USER");
	$primary->wait_for_catchup($standby);
	is(session_safe($reader, $many), 't', $name{back});
}
handed_over('idgen_generator',
	fresh => 'on a standby, a definition table a non-superuser owns is not read (42501)',
	session => 'nor by a session that read the definition before the change',
	back => 'the owner restored, the session decodes again');
handed_over('idgen_shard_floor',
	session => 'nor when another of its tables has changed hands',
	back => 'and again once it is back');
$primary->safe_psql('postgres', q{ALTER TABLE idgen_generator ADD COLUMN note text});
$primary->wait_for_catchup($standby);
like(error_of($standby, "SELECT idgen_decode('timed', $id)"),
	qr/^55000: idgen's table idgen_generator in database "postgres" has been altered/,
	'on a standby, an altered definition table is not read (55000)');
like(error_report_of($standby, "SELECT idgen_decode('timed', $id)"),
	qr/HINT:\s+On the primary, drop and re-create the extension in database "postgres"/,
	'the hint says where it can be repaired: on the primary');
is(session_run($reader, "SELECT idgen_decode('timed', $id)")->{sqlstate}, '55000',
	'nor by a session that read the definition before');
session_end($reader);

# decoding by layout reads no server state
is($standby->safe_psql('postgres', qq{
	SELECT snowflake_id_node($id), (snowflake_id_decode($id)).node,
	       (idgen_decode_layout('snowflake', $id) ->> 'worker')::int,
	       instagram_id_shard(instagram_id_from_parts(now(), 3, 0))}),
	'7|7|7|3', 'decoding by layout works on the standby');

$standby->stop;
$primary->stop;
done_testing();
