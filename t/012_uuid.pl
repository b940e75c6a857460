# idgen_uuidv7() and idgen_flake128() are generators of the same engine:
# the clock policy, bursts that borrow the next millisecond, and the
# durable reservation across an immediate stop with the clock set back.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = idgen_node('uuid', conf => q{
idgen.node_id = 5
idgen.max_lead = 10ms
idgen.max_wait = 100ms
});
my ($set_clock, $start) = fake_clock($node, '2026-06-01 12:00:00');
$start->('start');
wait_for_keeper($node);

# Unix ms of a uuidv7 / flake128, read from its hex digits
my $v7_ms = q{('x' || substr(replace(%s::text, '-', ''), 1, 12))::bit(48)::bigint};
my $flake_ms = q{('x' || substr(replace(%s::text, '-', ''), 1, 16))::bit(64)::bigint};
my $frozen_ms = q{(extract(epoch FROM '2026-06-01 12:00:00+00'::timestamptz) * 1000)::bigint};

# --- the frozen clock: capacity per ms, then the clock policy ---------------
# 4,096 uuidv7 per ms (a 12-bit counter) and 65,536 flakes per ms, from the
# frozen ms up to max_lead (10 ms), then the call waits max_wait for the
# clock and fails with 53400.
for my $case (['idgen_uuidv7', 4096, $v7_ms], ['idgen_flake128', 65536, $flake_ms])
{
	my ($fn, $per_ms, $ms) = @$case;
	my $n = $per_ms * 11;
	$node->safe_psql('postgres', "CREATE TABLE t_$fn AS SELECT g, $fn() AS u FROM generate_series(1, $n) g");
	is($node->safe_psql('postgres', sprintf(q{
		SELECT count(*) = %d, count(DISTINCT u) = count(*),
		       min(ms) = %s, max(ms) = %s + 10,
		       bool_and(per_ms = %d)
		  FROM (SELECT u, ms, count(*) OVER (PARTITION BY ms) AS per_ms
		          FROM (SELECT u, %s AS ms FROM t_%s) s) c},
			$n, $frozen_ms, $frozen_ms, $per_ms, sprintf($ms, 'u'), $fn)),
		't|t|t|t|t', "$fn: exactly $per_ms per ms, from the frozen ms up to max_lead");
	like(error_of($node, "SELECT $fn()"), qr/^53400: /,
		"$fn: past max_lead, 53400 after waiting for the frozen clock");
}
is($node->safe_psql('postgres',
		'SELECT bool_and(u > p) FROM (SELECT u, lag(u) OVER (ORDER BY g) AS p FROM t_idgen_uuidv7) s'),
	't', 'uuidv7: strictly increasing through the borrowed milliseconds');

# --- immediate stop, clock 10 s back, start: above every earlier UUID -------
$set_clock->('+0');
set_and_reload($node, 'idgen.max_lead' => '30s', 'idgen.max_wait' => '1s');
$node->safe_psql('postgres', q{
	CREATE TABLE r AS SELECT 1 AS round, idgen_uuidv7() AS v7, idgen_flake128() AS flake
	  FROM generate_series(1, 5000)});
$node->stop('immediate');
$set_clock->('-10s');
$start->('start');
wait_for_keeper($node);
$node->safe_psql('postgres', q{
	INSERT INTO r SELECT 2, idgen_uuidv7(), idgen_flake128() FROM generate_series(1, 5000)});
is($node->safe_psql('postgres', q{
	SELECT (SELECT v7 FROM r WHERE round = 2 ORDER BY v7 LIMIT 1)
	         > (SELECT v7 FROM r WHERE round = 1 ORDER BY v7 DESC LIMIT 1),
	       (SELECT flake FROM r WHERE round = 2 ORDER BY flake LIMIT 1)
	         > (SELECT flake FROM r WHERE round = 1 ORDER BY flake DESC LIMIT 1),
	       count(DISTINCT v7) = count(*), count(DISTINCT flake) = count(*)
	  FROM r}),
	't|t|t|t', 'after an immediate stop with the clock 10 s back, both continue above every earlier ID');

# --- RFC 9562 version 7, read from the bits on every PostgreSQL ----------
# The text form is xxxxxxxx-xxxx-Vxxx-Nxxx-xxxxxxxxxxxx: V (the 15th
# character) is the version, 7; the top two bits of N (the 20th) are the
# variant, binary 10, so N is one of 8, 9, a, b.  rand_b, the last 62 bits,
# starts with the node id.  flake128 has no version: its 48-bit worker
# field holds the node id.
is($node->safe_psql('postgres', q{
	SELECT count(*) = 10000,
	       bool_and(substr(v7::text, 15, 1) = '7'),
	       bool_and(substr(v7::text, 20, 1) IN ('8', '9', 'a', 'b')),
	       bool_and(((('x' || substr(replace(v7::text, '-', ''), 17, 16))::bit(64)::bigint
	                  >> 52) & 1023) = 5),
	       bool_and(('x' || substr(replace(flake::text, '-', ''), 17, 12))::bit(48)::bigint = 5)
	  FROM r}),
	't|t|t|t|t',
	'idgen_uuidv7() sets version 7 and variant 10 and carries the node id; flake128 carries it as worker');

# uuid_extract_version() exists from PostgreSQL 17 on, and
# uuid_extract_timestamp() reads version 7 from 18 on: where the server has
# them, they agree with the bits read above.
if ($node->safe_psql('postgres', 'SHOW server_version_num') >= 170000)
{
	is($node->safe_psql('postgres',
			'SELECT bool_and(uuid_extract_version(v7) = 7) FROM r'),
		't', 'uuid_extract_version() says 7');
}
if ($node->safe_psql('postgres', 'SHOW server_version_num') >= 180000)
{
	is($node->safe_psql('postgres', sprintf(q{
		SELECT bool_and((extract(epoch FROM uuid_extract_timestamp(v7)) * 1000)::bigint = %s)
		  FROM r},
			sprintf($v7_ms, 'v7'))),
		't', 'uuid_extract_timestamp() reads the same time as the bits');
}

$node->stop;
done_testing();
