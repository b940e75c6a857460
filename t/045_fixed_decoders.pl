# The decoders and builders of snowflake_id() and instagram_id() give, for
# every non-negative ID, what the layouts' bits say: each result is checked
# against a decode written here in SQL bit arithmetic, on issued IDs, on
# IDs built at the edges of every field, and on arbitrary bigints; the
# builders give back the ID they decoded; the errors at the edges keep
# their words.  And the generators issue the bits 1.0 issued.  The decoders read only the IDs and idgen.epoch, so this
# pins them whatever code computes them.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# An epoch that is no round number, so that an ID's time cannot come out
# right from another epoch.
my $epoch = '2021-03-04 05:06:07.089+00';
my $node = idgen_node('fixed_decoders', conf => qq{
idgen.node_id = 677
idgen.epoch = '$epoch'
});
$node->start;
wait_for_keeper($node);

# The IDs: issued (snowflake_id() under node 677, instagram_id() on shards
# at both ends and between), built at every field's edges (the first and
# the last ms of the layout, node, shard and seq 0, 1 and max), and
# arbitrary non-negative bigints with 0 and the largest.
$node->safe_psql('postgres', qq{
CREATE TABLE e AS SELECT '$epoch'::timestamptz AS epoch,
	extract(epoch FROM '$epoch'::timestamptz) * 1000 AS epoch_ms,
	'1999-12-31 23:59:59.999+00'::timestamptz AS other;
CREATE TABLE sf (id bigint, how text);
CREATE TABLE ig (id bigint, how text);
INSERT INTO sf SELECT snowflake_id(), 'issued' FROM generate_series(1, 5000);
INSERT INTO sf SELECT id, 'issued in a batch' FROM unnest(snowflake_id_batch(3000)) id;
INSERT INTO ig SELECT instagram_id(s), 'issued' FROM generate_series(1, 400),
	unnest(ARRAY[0, 1, 2, 77, 1023, 1024, 4095, 4096, 8190, 8191]) s;
INSERT INTO ig SELECT id, 'issued in a batch' FROM unnest(instagram_id_batch(5, 2000)) id;
INSERT INTO sf SELECT snowflake_id_from_parts(e.epoch + ms * interval '1 ms', n, q), 'built'
  FROM e, unnest(ARRAY[0, 1, 1000, 2199023255551]::bigint[]) ms,
	unnest(ARRAY[0, 1, 31, 32, 677, 992, 1023]) n, unnest(ARRAY[0, 1, 4095]) q;
INSERT INTO sf SELECT snowflake_id_from_time(e.epoch + ms * interval '1 ms'), 'built from a time'
  FROM e, unnest(ARRAY[0, 1, 2199023255551]::bigint[]) ms;
INSERT INTO ig SELECT instagram_id_from_parts(e.epoch + ms * interval '1 ms', s, q), 'built'
  FROM e, unnest(ARRAY[0, 1, 1000, 1099511627775]::bigint[]) ms,
	unnest(ARRAY[0, 1, 4096, 8191]) s, unnest(ARRAY[0, 1, 1023]) q;
INSERT INTO ig SELECT instagram_id_from_time(e.epoch + ms * interval '1 ms', s), 'built from a time'
  FROM e, unnest(ARRAY[0, 1, 1099511627775]::bigint[]) ms, unnest(ARRAY[0, 8191]) s;
INSERT INTO ig SELECT instagram_id_from_time(e.epoch), 'built from a time, no shard' FROM e;
SELECT setseed(0.45);
CREATE TABLE raw AS SELECT (random() * 9223372036854775807)::bigint AS id, 'arbitrary' AS how
  FROM generate_series(1, 3000)
  UNION ALL SELECT unnest(ARRAY[0, 1, 4194303, 4194304, 8388607, 8388608,
	9223372036854775806, 9223372036854775807]::bigint[]), 'edge';
INSERT INTO sf SELECT * FROM raw;
INSERT INTO ig SELECT * FROM raw;
});

is($node->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE how = 'issued'),
	       count(DISTINCT id) FILTER (WHERE how LIKE 'issued%'),
	       bool_and(snowflake_id_node(id) = 677) FILTER (WHERE how LIKE 'issued%')
	  FROM sf}),
	'5000|8000|t', 'the IDs: 8,000 snowflake IDs issued, all of node 677');
is($node->safe_psql('postgres', q{
	SELECT count(DISTINCT id) FILTER (WHERE how LIKE 'issued%'),
	       count(DISTINCT instagram_id_shard(id)) FILTER (WHERE how LIKE 'issued%'),
	       count(*) FILTER (WHERE how LIKE 'built%')
	  FROM ig}),
	'6000|11|55', 'and 6,000 instagram IDs of 11 shards, and 55 built');

# What the generators issue is 1.0's bits, checked here in SQL whatever
# code composes them: snowflake_id() puts the node id (677) at bits 12-21
# and the ms since the epoch above, instagram_id() the shard given at bits
# 10-22; each ID's time lies between the clocks read before and after
# (a generator may run ahead of the clock, never by seconds here), and the
# positions, time and seq together, strictly increase in the order issued,
# per shard for instagram_id().
$node->safe_psql('postgres', q{
CREATE TABLE b (t0 timestamptz, t1 timestamptz);
INSERT INTO b VALUES (clock_timestamp(), NULL);
CREATE TABLE sfo (n bigserial, id bigint);
INSERT INTO sfo (id) SELECT snowflake_id() FROM generate_series(1, 3000);
INSERT INTO sfo (id) SELECT unnest(snowflake_id_batch(2000));
INSERT INTO sfo (id) SELECT snowflake_id() FROM generate_series(1, 100);
CREATE TABLE igo (n bigserial, shard int, id bigint);
INSERT INTO igo (shard, id) SELECT s, instagram_id(s)
  FROM generate_series(1, 300), unnest(ARRAY[0, 77, 8191]) s;
INSERT INTO igo (shard, id) SELECT 5, unnest(instagram_id_batch(5, 1500));
INSERT INTO igo (shard, id) SELECT 5, instagram_id(5) FROM generate_series(1, 100);
UPDATE b SET t1 = clock_timestamp();
});
is($node->safe_psql('postgres', q{
	SELECT count(*),
	       count(*) FILTER (WHERE id < 0 OR ((id >> 12) & 1023) <> 677
	                          OR e.epoch_ms + (id >> 22) < floor(extract(epoch FROM b.t0) * 1000)
	                          OR e.epoch_ms + (id >> 22) > extract(epoch FROM b.t1) * 1000 + 10000),
	       count(*) FILTER (WHERE pos <= prev)
	  FROM (SELECT id, ((id >> 22) << 12) | (id & 4095) AS pos,
	               lag(((id >> 22) << 12) | (id & 4095)) OVER (ORDER BY n) AS prev
	          FROM sfo) s, e, b}),
	'5100|0|0', 'snowflake_id() issues the node id and the time where 1.0 did, in order');
is($node->safe_psql('postgres', q{
	SELECT count(*),
	       count(*) FILTER (WHERE id < 0 OR ((id >> 10) & 8191) <> shard
	                          OR e.epoch_ms + (id >> 23) < floor(extract(epoch FROM b.t0) * 1000)
	                          OR e.epoch_ms + (id >> 23) > extract(epoch FROM b.t1) * 1000 + 10000),
	       count(*) FILTER (WHERE pos <= prev)
	  FROM (SELECT id, shard, ((id >> 23) << 10) | (id & 1023) AS pos,
	               lag(((id >> 23) << 10) | (id & 1023)) OVER (PARTITION BY shard ORDER BY n) AS prev
	          FROM igo) s, e, b}),
	'2500|0|0', 'instagram_id() issues the shard and the time where 1.0 did, in order');

# Each check: its name, and a condition on id (of table sf or ig, with e's
# epoch_ms and other) that must hold for every row.  Times are compared as
# exact numeric Unix ms.
my $ms = q{(extract(epoch FROM %s) * 1000)};
my @snowflake = (
	['snowflake_id_time(id)', "$ms = e.epoch_ms + (id >> 22)", 'snowflake_id_time(id)'],
	['snowflake_id_time(id, epoch)', "$ms = extract(epoch FROM e.other) * 1000 + (id >> 22)",
		'snowflake_id_time(id, e.other)'],
	['snowflake_id_node', "%s = ((id >> 12) & 1023)::int", 'snowflake_id_node(id)'],
	['snowflake_id_datacenter', "%s = ((id >> 17) & 31)::int", 'snowflake_id_datacenter(id)'],
	['snowflake_id_worker', "%s = ((id >> 12) & 31)::int", 'snowflake_id_worker(id)'],
	['snowflake_id_seq', "%s = (id & 4095)::int", 'snowflake_id_seq(id)'],
	['snowflake_id_decode',
		"(d).node = ((id >> 12) & 1023)::int AND (d).seq = (id & 4095)::int AND "
		  . sprintf($ms, '(d).time') . " = e.epoch_ms + (id >> 22) AND %s",
		'true'],
	['snowflake_id_from_parts(decode(id)) = id', "%s = id",
		'snowflake_id_from_parts((d).time, (d).node, (d).seq)'],
	['snowflake_id_from_time(time(id)) is id with node and seq 0', "%s = (id >> 22) << 22",
		'snowflake_id_from_time(snowflake_id_time(id))'],);
my @instagram = (
	['instagram_id_time(id)', "$ms = e.epoch_ms + (id >> 23)", 'instagram_id_time(id)'],
	['instagram_id_time(id, epoch)', "$ms = extract(epoch FROM e.other) * 1000 + (id >> 23)",
		'instagram_id_time(id, e.other)'],
	['instagram_id_shard', "%s = ((id >> 10) & 8191)::int", 'instagram_id_shard(id)'],
	['instagram_id_seq', "%s = (id & 1023)::int", 'instagram_id_seq(id)'],
	['instagram_id_decode',
		"(d).shard = ((id >> 10) & 8191)::int AND (d).seq = (id & 1023)::int AND "
		  . sprintf($ms, '(d).time') . " = e.epoch_ms + (id >> 23) AND %s",
		'true'],
	['instagram_id_from_parts(decode(id)) = id', "%s = id",
		'instagram_id_from_parts((d).time, (d).shard, (d).seq)'],
	['instagram_id_from_time(time(id), shard(id)) is id with seq 0', "%s = (id >> 10) << 10",
		'instagram_id_from_time(instagram_id_time(id), instagram_id_shard(id))'],);

for my $case (['sf', 'snowflake_id_decode', \@snowflake], ['ig', 'instagram_id_decode', \@instagram])
{
	my ($table, $decode, $checks) = @$case;
	for my $check (@$checks)
	{
		my ($name, $cond, $expr) = @$check;
		my $sql = sprintf(q{
			SELECT count(*), count(*) FILTER (WHERE NOT ok),
			       string_agg(how || ' ' || id, ', ') FILTER (WHERE NOT ok)
			  FROM (SELECT id, how, coalesce(%s, false) AS ok
			          FROM %s, e, LATERAL (SELECT %s(id) AS d) x) s},
			sprintf($cond, $expr), $table, $decode);
		my $rows = $table eq 'sf' ? 11095 : 9063;
		is($node->safe_psql('postgres', $sql), "$rows|0|", "$name: as the bits say, for every ID");
	}
}

# The errors at the edges: the IDs and parts a layout cannot hold.
my @errors = (
	['SELECT snowflake_id_time(-1)', '22023: ID -1 is negative'],
	['SELECT instagram_id_decode(-9223372036854775808)', '22023: ID -9223372036854775808 is negative'],
	['SELECT snowflake_id_time(-1, now())', '22023: ID -1 is negative'],
	['SELECT snowflake_id_from_parts(e.epoch, 1024, 0) FROM e', '22003: node 1024 is out of range'],
	['SELECT snowflake_id_from_parts(e.epoch, -1, 0) FROM e', '22003: node -1 is out of range'],
	['SELECT snowflake_id_from_parts(e.epoch, 0, 4096) FROM e', '22003: sequence 4096 is out of range'],
	['SELECT snowflake_id_from_parts(e.epoch, 1024, 4096) FROM e', '22003: node 1024 is out of range'],
	['SELECT instagram_id_from_parts(e.epoch, 8192, 0) FROM e', '22003: shard 8192 is out of range'],
	['SELECT instagram_id_from_parts(e.epoch, 0, 1024) FROM e', '22003: sequence 1024 is out of range'],
	['SELECT instagram_id_from_parts(e.epoch, 0, -1) FROM e', '22003: sequence -1 is out of range'],
	['SELECT instagram_id_from_time(e.epoch, -1) FROM e', '22003: shard -1 is out of range'],
	["SELECT snowflake_id_from_time(e.epoch - interval '1 microsecond') FROM e",
		'22003: timestamp is out of range for snowflake_id_from_time()'],
	["SELECT snowflake_id_from_parts(e.epoch + 2199023255552 * interval '1 ms', 0, 0) FROM e",
		'22003: timestamp is out of range for snowflake_id_from_parts()'],
	["SELECT snowflake_id_from_parts(e.epoch - interval '1 ms', 1024, 4096) FROM e",
		'22003: timestamp is out of range for snowflake_id_from_parts()'],
	["SELECT instagram_id_from_time(e.epoch + 1099511627776 * interval '1 ms') FROM e",
		'22003: timestamp is out of range for instagram_id_from_time()'],
	["SELECT instagram_id_from_parts('infinity', 0, 0)",
		'22003: timestamp is out of range for instagram_id_from_parts()'],
	["SELECT instagram_id_from_parts('294276-12-31 23:59:59+00', 0, 0)",
		'22003: timestamp is out of range for instagram_id_from_parts()'],
	["SELECT snowflake_id_time(9223372036854775807, '294276-12-31 23:59:59+00')",
		'22008: timestamp out of range'],
	["SELECT instagram_id_time(0, '-infinity')", '22008: timestamp out of range'],);
for my $e (@errors)
{
	is(error_of($node, $e->[0]), $e->[1], "$e->[0]: $e->[1]");
}

# Their whole reports, with the details and the ranges.
like(error_report_of($node, q{SELECT snowflake_id_from_parts(e.epoch, 0, 4096) FROM e}),
	qr/DETAIL:  The sequence must be between 0 and 4095\./, 'snowflake seq: its range');
like(error_report_of($node, q{SELECT snowflake_id_from_parts(e.epoch, 1024, 0) FROM e}),
	qr/DETAIL:  The node must be between 0 and 1023\./, 'snowflake node: its range');
like(error_report_of($node, q{SELECT instagram_id_from_parts(e.epoch, 8192, 0) FROM e}),
	qr/DETAIL:  The shard must be between 0 and 8191\./, 'instagram shard: its range');
like(error_report_of($node, q{SELECT instagram_id_from_parts(e.epoch, 0, 1024) FROM e}),
	qr/DETAIL:  The sequence must be between 0 and 1023\./, 'instagram seq: its range');
like(error_report_of($node, q{SET TimeZone = 'UTC';
	SELECT snowflake_id_from_time(e.epoch - interval '1 ms') FROM e}),
	qr/DETAIL:  The snowflake layout covers 2021-03-04 05:06:07\.089\+00 to 2090-11-08 20:53:42\.641\+00\./,
	'snowflake time: the range');
like(error_report_of($node, q{SET TimeZone = 'UTC';
	SELECT instagram_id_from_parts(e.epoch + 1099511627776 * interval '1 ms', 0, 0) FROM e}),
	qr/DETAIL:  The instagram layout covers 2021-03-04 05:06:07\.089\+00 to 2056-01-06 00:59:54\.865\+00\./,
	'instagram time: the range');
like(error_report_of($node, q{SELECT snowflake_id_time(9223372036854775807, '294276-12-31 23:59:59+00')}),
	qr/DETAIL:  The ID's time lies 2199023255551 ms after the epoch given, beyond what timestamptz holds\./,
	'a time beyond timestamptz: how far');

$node->stop;
done_testing();
