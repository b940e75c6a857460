# Tables partitioned by day on an idgen ID, managed by pg_partman
# (PostgreSQL 15 only: Debian 12's postgresql-15-partman, pg_partman 4.7).
#
# pg_partman 4 partitions an integer column by ranges of a fixed width, so
# a day of IDs is the width: the IDs of one day of ticks.  With an epoch at
# a UTC midnight (idgen.epoch's default, and the Sonyflake preset's), the
# partitions are UTC days.  Two tables, built the way docs/partitioning.md
# shows: "events", keyed by DEFAULT snowflake_id(), and "readings", keyed
# by a named generator with the Sonyflake layout (10 ms ticks, time above
# sequence above machine).  Older days are added with create_partition_id
# and filled with IDs made by the builders, today's rows come from the
# generators.  Checked: no row in the default partition, every row in the
# partition of its ID's UTC day, a time-range query on the ID scans only
# the partitions of that range (EXPLAIN), maintenance keeps partitions
# ahead of the newest ID, and retention drops exactly the partitions older
# than the retention before the newest ID.
#
# Skips when pg_partman is not installed in the PostgreSQL under test,
# unless IDGEN_PARTMAN_REQUIRED is set (scripts/test-it.sh sets it for
# PostgreSQL 15): then it fails.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my ($major) = `pg_config --version` =~ /PostgreSQL (\d+)/
  or die "cannot run pg_config";
plan skip_all =>
  "the pg_partman test runs on PostgreSQL 15 only (this is $major)"
  if $major != 15;
my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
unless (-e "$sharedir/extension/pg_partman.control")
{
	my $why = "pg_partman is not installed in $sharedir/extension "
	  . "(Debian package postgresql-15-partman)";
	if ($ENV{IDGEN_PARTMAN_REQUIRED})
	{
		fail($why);
		done_testing();
		exit;
	}
	plan skip_all => $why;
}

my $node = idgen_node('partman', conf => qq{
idgen.node_id = 7
timezone = 'America/New_York'
});
$node->start;
wait_for_keeper($node);
note 'pg_partman '
  . $node->safe_psql('postgres', q{
	CREATE SCHEMA partman;
	CREATE EXTENSION pg_partman SCHEMA partman;
	SELECT extversion FROM pg_extension WHERE extname = 'pg_partman'});

# Days are UTC days whatever the session's time zone (set above to one
# that is not UTC): the boundaries come from the epoch, a UTC midnight.
$node->safe_psql('postgres', q{
	SELECT idgen_create_generator('sony', 'sonyflake');

	CREATE TABLE events (
	    id      bigint NOT NULL DEFAULT snowflake_id(),
	    payload text,
	    PRIMARY KEY (id)
	) PARTITION BY RANGE (id);
	-- one day of snowflake IDs per partition, starting with today's
	SELECT partman.create_parent('public.events', 'id', 'native',
	         p_interval => (snowflake_id_from_time('2025-01-02 00:00+00')
	                        - snowflake_id_from_time('2025-01-01 00:00+00'))::text,
	         p_start_partition => snowflake_id_from_time(now())::text,
	         p_premake => 4);

	CREATE TABLE readings (
	    id    bigint NOT NULL DEFAULT idgen_next('sony'),
	    value float8,
	    PRIMARY KEY (id)
	) PARTITION BY RANGE (id);
	SELECT partman.create_parent('public.readings', 'id', 'native',
	         p_interval => (idgen_from_time('sony', '2025-01-02 00:00+00')
	                        - idgen_from_time('sony', '2025-01-01 00:00+00'))::text,
	         p_start_partition => idgen_from_time('sony', now())::text,
	         p_premake => 4);
});

# The previous five days, as when a table with history is partitioned:
# one partition per day (create_partition_id takes each day's first ID),
# and rows with IDs made from times in those days.
$node->safe_psql('postgres', q{
	SELECT partman.create_partition_id('public.events',
	         array(SELECT snowflake_id_from_time(date_trunc('day', now() - d * interval '1 day', 'UTC'))
	                 FROM generate_series(1, 5) d));
	SELECT partman.create_partition_id('public.readings',
	         array(SELECT idgen_from_time('sony', date_trunc('day', now() - d * interval '1 day', 'UTC'))
	                 FROM generate_series(1, 5) d));
	-- 200 rows on each past day, spread over the day (node 7, distinct sequences)
	INSERT INTO events (id, payload)
	SELECT snowflake_id_from_parts(date_trunc('day', now() - d * interval '1 day', 'UTC')
	                               + s * interval '7 min 11 s', 7, s), 'old'
	  FROM generate_series(1, 5) d, generate_series(0, 199) s;
	INSERT INTO readings (id, value)
	SELECT idgen_from_parts('sony', jsonb_build_object(
	         'time', date_trunc('day', now() - d * interval '1 day', 'UTC') + s * interval '7 min 11 s',
	         'seq', 0, 'machine', 7)), s
	  FROM generate_series(1, 5) d, generate_series(0, 199) s;
	-- today's rows from the generators
	INSERT INTO events (payload) SELECT 'new' FROM generate_series(1, 1000);
	INSERT INTO readings (value) SELECT g FROM generate_series(1, 1000) g;
});

# For each table: its builder of "the first ID at a time", as SQL text
my %first_id = (
	events => sub { "snowflake_id_from_time($_[0])" },
	readings => sub { "idgen_from_time('sony', $_[0])" });
my %id_time = (
	events => sub { "snowflake_id_time($_[0])" },
	readings => sub { "idgen_time('sony', $_[0])" });

for my $t (qw(events readings))
{
	my $from = $first_id{$t};
	my $time = $id_time{$t};

	is($node->safe_psql('postgres', "SELECT count(*) FROM ONLY ${t}_default"),
		'0', "$t: no row in the default partition");
	is($node->safe_psql('postgres', "SELECT count(*) FROM $t"),
		'2000', "$t: all 2000 rows are in the table");

	# every row is in the partition of its ID's UTC day: the partition's
	# first ID is the first ID of that day, its end the first of the next
	is($node->safe_psql('postgres', qq{
		SELECT count(*),
		       count(DISTINCT t.tableoid) >= 6
		       AND count(DISTINCT t.tableoid) = count(DISTINCT date_trunc('day', @{[ $time->('t.id') ]}, 'UTC')),
		       count(*) FILTER (WHERE p.child_start_id = @{[ $from->(
		         "date_trunc('day', " . $time->('t.id') . ", 'UTC')") ]}
		                          AND p.child_end_id + 1 = @{[ $from->(
		         "date_trunc('day', " . $time->('t.id') . ", 'UTC') + interval '1 day'") ]})
		  FROM $t t,
		       LATERAL partman.show_partition_info('public.' || t.tableoid::regclass::text, p_parent_table => 'public.$t') p}),
		'2000|t|2000',
		"$t: every row is in the partition of its UTC day, one partition per day");

	# a time range of [3 days ago 12:00, 2 days ago 06:00) UTC scans exactly the
	# partitions of those two days (plan-time pruning for the IMMUTABLE
	# snowflake builder, executor-startup pruning for the STABLE idgen_from_time)
	my $lo = "date_trunc('day', now() - interval '3 days', 'UTC') + interval '12 hours'";
	my $hi = "date_trunc('day', now() - interval '2 days', 'UTC') + interval '6 hours'";
	my ($lo_text, $hi_text) = split /\|/, $node->safe_psql('postgres',
		"SELECT ($lo)::text, ($hi)::text");
	my $plan = $node->safe_psql('postgres', qq{
		EXPLAIN (COSTS OFF) SELECT count(*) FROM $t
		 WHERE id >= @{[ $from->("'$lo_text'") ]} AND id < @{[ $from->("'$hi_text'") ]}});
	my @scanned = sort($plan =~ /\b(${t}_(?:p\d+|default))\b/g);
	my %seen;
	@scanned = grep { !$seen{$_}++ } @scanned;
	my @expect = sort(split /\n/, $node->safe_psql('postgres', qq{
		SELECT DISTINCT '${t}_p' || @{[ $from->("date_trunc('day', ts, 'UTC')") ]}
		  FROM unnest(ARRAY['$lo_text', '$hi_text']::timestamptz[]) ts}));
	is_deeply(\@scanned, \@expect,
		"$t: a query for a time range scans only the partitions of its two days")
	  or diag($plan);
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM $t
		 WHERE id >= @{[ $from->("'$lo_text'") ]} AND id < @{[ $from->("'$hi_text'") ]}}),
		$node->safe_psql('postgres', qq{
		SELECT count(*) FROM $t
		 WHERE @{[ $time->('id') ]} >= '$lo_text' AND @{[ $time->('id') ]} < '$hi_text'}),
		"$t: the ID range holds exactly the rows of that time range");

	# maintenance keeps four days of partitions ahead of the newest ID
	$node->safe_psql('postgres', "SELECT partman.run_maintenance('public.$t')");
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM partman.show_partitions('public.$t') s,
		       LATERAL partman.show_partition_info(s.partition_schemaname || '.' || s.partition_tablename,
		                                           p_parent_table => 'public.$t') p
		 WHERE p.child_start_id > (SELECT max(id) FROM $t)}),
		'4', "$t: maintenance keeps 4 partitions ahead of the newest ID");

	# retention: partitions whose IDs all lie more than 3 days of IDs below
	# the newest ID are dropped; the newest ID decides, not the clock
	my $before = $node->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE p.child_end_id < (SELECT max(id) FROM $t)
		                         - (@{[ $from->("'2025-01-04 00:00+00'") ]} - @{[ $from->("'2025-01-01 00:00+00'") ]})),
		       count(*)
		  FROM partman.show_partitions('public.$t') s,
		       LATERAL partman.show_partition_info(s.partition_schemaname || '.' || s.partition_tablename,
		                                           p_parent_table => 'public.$t') p});
	my ($old, $all) = split /\|/, $before;
	cmp_ok($old, '>=', 1, "$t: $old partitions are older than the retention");
	my $rows_kept = $node->safe_psql('postgres', qq{
		SELECT count(*) FROM $t
		 WHERE id >= @{[ $from->("date_trunc('day', " . $time->("(SELECT max(id) FROM $t)")
		                         . " - interval '3 days', 'UTC')") ]}});
	$node->safe_psql('postgres', qq{
		UPDATE partman.part_config
		   SET retention = (@{[ $from->("'2025-01-04 00:00+00'") ]} - @{[ $from->("'2025-01-01 00:00+00'") ]})::text,
		       retention_keep_table = false
		 WHERE parent_table = 'public.$t';
		SELECT partman.run_maintenance('public.$t');
	});
	is($node->safe_psql('postgres', "SELECT count(*) FROM partman.show_partitions('public.$t')"),
		$all - $old, "$t: retention dropped exactly those $old partitions");
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_class WHERE relname ~ '^${t}_p[0-9]+\$'}),
		$all - $old, "$t: the dropped partitions' tables are gone");
	is($node->safe_psql('postgres', "SELECT count(*) FROM $t"), $rows_kept,
		"$t: the rows of the last 3 days before the newest ID are kept ($rows_kept), older ones dropped");
}

$node->stop;
done_testing();
