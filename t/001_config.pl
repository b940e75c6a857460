# Server configurations other than the test default: no preload, no node
# id, settings the server must refuse at start, and an epoch so old that
# the instagram layout has run out while snowflake still works.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

# --- 1. Not in shared_preload_libraries -------------------------------
my $plain = PostgreSQL::Test::Cluster->new('no_preload');
$plain->init;
$plain->append_conf('postgresql.conf', "idgen.node_id = 3\n");
$plain->start;

$plain->safe_psql('postgres', 'CREATE EXTENSION idgen');
is( $plain->safe_psql(
		'postgres',
		"SELECT snowflake_id_node(snowflake_id_from_parts(now(), 3, 7)), "
		  . "instagram_id_shard(instagram_id_from_parts(now(), 42, 1))"),
	'3|42',
	'without preload: CREATE EXTENSION, builders and decoders work');
like(error_of($plain, 'SELECT snowflake_id()'),
	qr/^55000: snowflake_id\(\) requires idgen to be loaded via "shared_preload_libraries"/,
	'without preload: snowflake_id() fails with 55000');
like(error_of($plain, 'SELECT instagram_id(1)'),
	qr/^55000: instagram_id\(\) requires idgen/,
	'without preload: instagram_id() fails with 55000');
my ($ret, $out, $err) =
  $plain->psql('postgres', 'SELECT instagram_id(1)', on_error_stop => 1);
like($err, qr/HINT:\s+Add idgen to "shared_preload_libraries"/,
	'without preload: the error hints at the fix');
is($plain->safe_psql('postgres',
		'SELECT preloaded, node_id, snowflake_issued IS NULL FROM idgen_status()'),
	'f|3|t', 'without preload: idgen_status() reports configuration, no live state');
$plain->stop;

# --- 2. Preloaded, but idgen.node_id not set ---------------------------
my $nonode = idgen_node('no_node_id');
$nonode->start;
wait_for_keeper($nonode);
like(error_of($nonode, 'SELECT snowflake_id()'),
	qr/^55000: "idgen.node_id" is not set/,
	'no node id: snowflake_id() fails with 55000');
($ret, $out, $err) =
  $nonode->psql('postgres', 'SELECT snowflake_id()', on_error_stop => 1);
like($err, qr/HINT:\s+Set "idgen.node_id" to a value from 0 to 1023/,
	'no node id: the error hints at the setting');
is($nonode->safe_psql('postgres',
		'SELECT count(DISTINCT instagram_id(9)) FROM generate_series(1, 1000)'),
	'1000', 'no node id: instagram_id() needs none and works');
is($nonode->safe_psql('postgres', 'SELECT node_id IS NULL FROM idgen_status()'),
	't', 'no node id: idgen_status() shows node_id NULL');

# --- 3. Settings refused at server start -------------------------------
# PostgreSQL only warns about a bad value for an extension's setting and
# uses the default.  For the node id and the epoch that would issue IDs
# under the wrong node or epoch, so idgen refuses to start instead, and the
# log says why.
#
# An epoch must state its UTC offset: without one, or with a zone name or
# abbreviation, the moment it means depends on "TimeZone" (or on
# "timezone_abbreviations" and the time zone database), so the same
# postgresql.conf line could mean another epoch after a settings change.
$nonode->stop;
my $offset_re = qr/The epoch must state its UTC offset/;
my @refused = (
	[ 'idgen.node_id = 1024', qr/1024 is outside the valid range for parameter "idgen.node_id"/ ],
	[ 'idgen.node_id = -2', qr/-2 is outside the valid range for parameter "idgen.node_id"/ ],
	[ "idgen.epoch = 'not a time'", qr/invalid value for parameter "idgen.epoch"/ ],
	[ "idgen.epoch = '2999-01-01 00:00:00+00'", qr/The epoch 2999-01-01 00:00:00\+00 is in the future/ ],
	[ "idgen.epoch = 'now'", qr/The epoch must be a fixed moment/ ],
	[ "idgen.epoch = 'today'", qr/The epoch must be a fixed moment/ ],
	[ "idgen.epoch = '2024-01-01 00:00:00.0005+00'", qr/The epoch must be a whole millisecond/ ],
	[ "idgen.epoch = '1900-01-01 00:00:00+00'", qr/More than 2\^41 milliseconds have passed since the epoch/ ],
	[ "idgen.epoch = '2024-01-01 00:00:00'", $offset_re ],
	[ "idgen.epoch = '2024-01-01T00:00:00'", $offset_re ],
	[ "idgen.epoch = '2024-01-01'", $offset_re ],
	[ "idgen.epoch = 'Jan 1 2024 00:00'", $offset_re ],
	[ "idgen.epoch = '2024-01-01 00:00:00 EST'", $offset_re ],
	[ "idgen.epoch = '2024-01-01 00:00:00 Europe/Paris'", $offset_re ],
	# an unknown zone name: PostgreSQL 15's parser throws for it, later
	# ones report it, and either way it is refused
	[ "idgen.epoch = '2024-01-01 00:00:00 Nowhere/Zone'",
	  qr/$offset_re|The value must be a finite timestamp with time zone/ ],
	[ "idgen.epoch = '2024-01-01 00:00:00 UTC+3'", $offset_re ]);
# one data directory for all of them: each attempt starts from the same
# configuration plus one bad line, and reads only the log it wrote
my $refusing = PostgreSQL::Test::Cluster->new('refused');
$refusing->init;
my $conf_file = $refusing->data_dir . '/postgresql.conf';
my $base_conf = slurp_file($conf_file) . "shared_preload_libraries = 'idgen'\n";
for my $r (@refused)
{
	my ($setting, $log_re) = @$r;
	open my $fh, '>', $conf_file or die "$conf_file: $!";
	print $fh "$base_conf$setting\n";
	close $fh;
	my $log_from = -s $refusing->logfile // 0;
	ok(!$refusing->start(fail_ok => 1), "server refuses to start with $setting");
	my $log = slurp_file($refusing->logfile, $log_from);
	like($log, $log_re, "log explains what is wrong with $setting");
	like($log, qr/FATAL:\s+invalid value for parameter "idgen\.\w+"/,
		"log names the refused setting for $setting");
	# never leave a server running into the next attempt
	$refusing->stop if $refusing->{_pid};
}

# The reloadable clock policy and misspelt names keep PostgreSQL's usual
# behaviour: a warning, and the default (or nothing) in their place.
my $lenient = idgen_node('lenient', conf => "idgen.max_lead = -1\nidgen.nodeid = 1\n");
$lenient->start;
my $log = slurp_file($lenient->logfile);
like($log, qr/-1 ms is outside the valid range for parameter "idgen.max_lead"/,
	'a bad idgen.max_lead is reported');
like($log, qr/invalid configuration parameter name "idgen.nodeid"/,
	'a misspelt idgen setting is reported');
is($lenient->safe_psql('postgres', 'SHOW idgen.max_lead'), '2s',
	'idgen.max_lead falls back to its default');

# A reload that meets a zone name PostgreSQL does not know in idgen.epoch
# (PostgreSQL 15's date parser raises an error for it, which the
# postmaster would take for a fatal one) refuses the value and keeps the
# server running.
my $log_from = -s $lenient->logfile;
$lenient->append_conf('postgresql.conf', "idgen.epoch = '2024-01-01 00:00:00 Nowhere/Zone'\n");
$lenient->reload;
my $refused = 0;
for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
{
	if (slurp_file($lenient->logfile, $log_from) =~ /invalid value for parameter "idgen\.epoch"/)
	{
		$refused = 1;
		last;
	}
	last if slurp_file($lenient->logfile, $log_from) =~ /FATAL|shut down/;
	select(undef, undef, undef, 0.1);
}
ok($refused, 'a reload with an unknown zone name in idgen.epoch is refused');
is($lenient->safe_psql('postgres', 'SELECT 1'), '1', 'and the server keeps running');
$lenient->stop;

# --- 4. An epoch 35 years back: instagram exhausted, snowflake fine ----
# 35 years back, a little over the instagram layout's 34.8
my @t = gmtime(time - 35 * 366 * 86400);
my $epoch = sprintf('%04d-%02d-%02d 00:00:00+00', $t[5] + 1900, $t[4] + 1, $t[3]);
my $old = idgen_node('old_epoch', conf => "idgen.node_id = 5\nidgen.epoch = '$epoch'\n");
$old->start;
wait_for_keeper($old);
like(error_of($old, 'SELECT instagram_id(1)'),
	qr/^22008: instagram ID range is exhausted/,
	'instagram_id() refuses the sign bit with 22008 instead of going negative');
is($old->safe_psql('postgres',
		'SELECT count(DISTINCT id), min(id) > 0, bool_and(snowflake_id_node(id) = 5) '
		  . 'FROM (SELECT snowflake_id() AS id FROM generate_series(1, 1000)) s'),
	'1000|t|t', 'snowflake_id() still works on the same epoch');
is($old->safe_psql('postgres',
		'SELECT instagram_range_end < now(), snowflake_range_end > now(), instagram_issued FROM idgen_status()'),
	't|t|0', 'idgen_status() shows the instagram range already ended and nothing issued');

# --- 5. Builders with an epoch before 1999-12-23 ------------------------
# timestamptz counts microseconds from 2000-01-01 and ends at 294276 AD,
# close to the int64 limit.  With an epoch more than about 8 days before
# 2000-01-01, "time - epoch" for a time near that end does not fit 64 bits:
# the builders must say the time is out of range (22003), never wrap into
# a negative or bogus ID.
my $unix = idgen_node('unix_epoch', conf => "idgen.epoch = '1970-01-01 00:00:00+00'\n");
$unix->start;
wait_for_keeper($unix);
is($unix->safe_psql('postgres', "SELECT epoch = 'epoch' FROM idgen_status()"),
	't', 'a server with the Unix epoch as idgen.epoch');
for my $time ("'294276-12-31 23:59:59+00'", "'294276-12-31 23:59:59.999999+00'",
	"'infinity'")
{
	for my $call ([ 'snowflake_id_from_time', "$time" ],
		[ 'snowflake_id_from_parts', "$time, 0, 0" ],
		[ 'instagram_id_from_time', "$time" ],
		[ 'instagram_id_from_time', "$time, 5" ],
		[ 'instagram_id_from_parts', "$time, 0, 0" ])
	{
		my ($f, $args) = @$call;
		like(error_of($unix, "SELECT $f($args)"),
			qr/^22003: timestamp is out of range for \Q$f\E\(\)/,
			"$f($args) with the Unix epoch: 22003");
	}
}
# the same builders still work inside the range of that epoch
is($unix->safe_psql('postgres', q{
	SELECT snowflake_id_time(snowflake_id_from_time(t)) = t,
	       snowflake_id_time(snowflake_id_from_parts(t, 1023, 4095)) = t,
	       instagram_id_time(instagram_id_from_time('1990-01-01 00:00:00+00', 8191))
	         = '1990-01-01 00:00:00+00'
	  FROM (SELECT timestamptz 'epoch' + ((1::bigint << 41) - 1) * interval '1 ms' AS t) s}),
	't|t|t', 'the builders work up to the last millisecond of the range');
$unix->stop;

# --- 6. Epochs that state their offset ---------------------------------
# Every way of writing an explicit offset is accepted and means the same
# moment whatever "TimeZone" says (here six hours off UTC, so reading any
# of them as local time would give another epoch).
my $forms = PostgreSQL::Test::Cluster->new('epoch_forms');
$forms->init;
$conf_file = $forms->data_dir . '/postgresql.conf';
$base_conf = slurp_file($conf_file)
  . "shared_preload_libraries = 'idgen'\ntimezone = 'America/Chicago'\n";
for my $form ('2025-01-01 00:00:00+00', '2025-01-01 05:30:00+05:30',
	'2024-12-31 19:00:00-05', '2025-01-01 01:00:00+0100',
	'2025-01-01T00:00:00Z', '20250101T000000Z', '2025-01-01 00:00:00 UTC',
	'2025-01-01 00:00:00 gmt', 'Jan 1 2025 00:00 UTC')
{
	open my $fh, '>', $conf_file or die "$conf_file: $!";
	print $fh "${base_conf}idgen.epoch = '$form'\n";
	close $fh;
	ok($forms->start(fail_ok => 1), "server starts with idgen.epoch = '$form'");
	next unless $forms->{_pid};
	# the keeper creates the extension on the first start
	wait_for_keeper($forms);
	is($forms->safe_psql('postgres',
			"SELECT epoch = '2025-01-01 00:00:00+00' FROM idgen_status()"),
		't', "'$form' is 2025-01-01 00:00:00 UTC");
	$forms->stop;
}

done_testing();
