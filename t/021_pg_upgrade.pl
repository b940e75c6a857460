# pg_upgrade of a server with idgen in use, from an older PostgreSQL (the
# installation in IDGEN_OLD_INSTALL, with idgen installed) to the one under
# test.  scripts/test-it.sh sets IDGEN_OLD_INSTALL for the PostgreSQL 18
# run (from 17 by default, see IDGEN_UPGRADE_FROM there for why not 15);
# without it the test skips.
#
# The old server runs on a frozen libfaketime clock, so a burst must issue
# IDs ahead of it.  After the upgrade the new server starts on that same
# frozen clock, so only the keeper's durable reservation, carried over by
# pg_upgrade, can put its IDs above the old ones.  Checked: pg_upgrade
# carries the reservation (idgen_hwm) and the recorded epoch (idgen_epoch)
# in the keeper's database; the data is intact; new IDs of both generators
# are above every ID issued before; and the epoch guard still holds on the
# new server (a different idgen.epoch is refused with 55000 until restored).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use Cwd;

my $old_install = $ENV{IDGEN_OLD_INSTALL};
if (!$old_install)
{
	plan skip_all =>
	  'IDGEN_OLD_INSTALL is not set (the PostgreSQL installation to upgrade from, with idgen installed; scripts/test-it.sh sets it for the PostgreSQL 18 run)';
}

# 10 minutes ahead of the real clock: where libfaketime does not reach the
# background workers (Debian's PostgreSQL 15), the keeper reads the real
# clock, and a reservation driven by the backends' IDs then ends where it
# does when the keeper sees the frozen clock too.
my $clock = utc_clock_spec(time + 600);
my $node_conf = "shared_preload_libraries = 'idgen'\nidgen.node_id = 21\n";

# --- the old server, idgen in use ---------------------------------------------
my $old = PostgreSQL::Test::Cluster->new('old', install_path => $old_install);
$old->init;
# a small max_lead: a burst of this size fills it on the frozen clock
$old->append_conf('postgresql.conf', $node_conf . "idgen.max_lead = 100ms\n");
my (undef, $start_old) = fake_clock($old, $clock);
$start_old->('start');
wait_for_keeper($old);
note 'old server: ' . $old->safe_psql('postgres', 'SELECT version()');

$old->safe_psql('postgres', 'CREATE DATABASE app');
$old->safe_psql('app', q{
	CREATE EXTENSION idgen;
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_id(), item text NOT NULL);
	CREATE TABLE photos (id bigint PRIMARY KEY DEFAULT instagram_id(17), caption text NOT NULL);
	INSERT INTO orders (item) SELECT 'order ' || g FROM generate_series(1, 100000) g;
	INSERT INTO photos (caption) SELECT 'photo ' || g FROM generate_series(1, 50000) g;
});
my ($sf_lead, $ig_lead) = split /\|/,
  $old->safe_psql('app', 'SELECT snowflake_lead_ms, instagram_lead_ms FROM idgen_status()');
ok($sf_lead > 0 && $ig_lead > 0,
	"the burst ran ahead of the old server's clock (snowflake $sf_lead ms, instagram $ig_lead ms)");

my $fingerprint = q{
	SELECT (SELECT format('%s %s %s', count(*), sum(id), md5(string_agg(id || item, ',' ORDER BY id))) FROM orders)
	       || ' / ' ||
	       (SELECT format('%s %s %s', count(*), sum(id), md5(string_agg(id || caption, ',' ORDER BY id))) FROM photos)};
my $data_before = $old->safe_psql('app', $fingerprint);
my ($old_sf, $old_ig) = split /\|/,
  $old->safe_psql('app', 'SELECT (SELECT max(id) FROM orders), (SELECT max(id) FROM photos)');
my $durable = q{SELECT format('hwm %s %s, epoch %s %s', h.last_value, h.is_called, e.last_value, e.is_called)
                  FROM idgen_hwm h, idgen_epoch e};
# (read while running: on the frozen clock, with no more IDs issued, the
# keeper has no reason to extend its reservation before the stop)
my $durable_before = $old->safe_psql('postgres', $durable);
$old->stop;
like($durable_before, qr/^hwm \d+ t, epoch \d+ t$/,
	"the old server's keeper state: $durable_before");

# --- pg_upgrade -----------------------------------------------------------------
my $new = PostgreSQL::Test::Cluster->new('new');
# PostgreSQL 18 initdb enables data checksums by default; the old cluster has none
$new->init($new->pg_version >= 18 ? (extra => ['--no-data-checksums']) : ());
my $old_bindir = "$old_install/bin";
my $new_bindir = $new->config_data('--bindir');

# pg_upgrade writes a script into its working directory: run it in a
# temporary one, with absolute paths
my $here = Cwd::getcwd();
my ($old_data, $new_data) = map { Cwd::abs_path($_) } ($old->data_dir, $new->data_dir);
my $cwd = PostgreSQL::Test::Utils::tempdir;
chdir $cwd or die "chdir $cwd: $!";
command_ok(
	[
		'pg_upgrade', '--no-sync',
		'-d', $old_data, '-D', $new_data,
		'-b', $old_bindir, '-B', $new_bindir,
		'-s', $new->host,
		'-p', $old->port, '-P', $new->port
	],
	'pg_upgrade from ' . $old->pg_version . ' to ' . $new->pg_version);
chdir $here or die "chdir $here: $!";

# First without idgen preloaded, so that nothing touches the keeper's state:
# what pg_upgrade carried over.
$new->start;
is($new->safe_psql('postgres', $durable), $durable_before,
	'pg_upgrade carried the keeper\'s reservation and recorded epoch (idgen_hwm, idgen_epoch in database postgres)');
is($new->safe_psql('app', $fingerprint), $data_before, 'the application data is intact');
is($new->safe_psql('app', "SELECT extversion = default_version FROM pg_extension, pg_available_extensions WHERE extname = 'idgen' AND name = 'idgen'"),
	't', 'the extension is at the current version in app');
$new->stop;

# --- the new server, on the old server's frozen clock -----------------------------
# Its clock is behind the old server's last IDs, and max_lead lets it issue
# ahead of it at once; only the durable reservation can lift it above them.
$new->append_conf('postgresql.conf', $node_conf . "idgen.max_lead = 1min\n");
my (undef, $start_new) = fake_clock($new, $clock);
$start_new->('start');
wait_for_keeper($new);
$new->safe_psql('app', q{
	INSERT INTO orders (item) SELECT 'new order ' || g FROM generate_series(1, 1000) g;
	INSERT INTO photos (caption) SELECT 'new photo ' || g FROM generate_series(1, 1000) g;
});
is($new->safe_psql('app', qq{
	SELECT (SELECT min(id) > $old_sf FROM orders WHERE item LIKE 'new %'),
	       (SELECT min(id) > $old_ig FROM photos WHERE caption LIKE 'new %'),
	       (SELECT bool_and(snowflake_id_node(id) = 21) FROM orders),
	       (SELECT bool_and(instagram_id_shard(id) = 17) FROM photos),
	       (SELECT count(*) FROM orders) + (SELECT count(*) FROM photos)}),
	't|t|t|t|152000',
	'after the upgrade, new IDs of both generators are above every ID issued before, on a clock behind them');

# --- the epoch guard ------------------------------------------------------------
$new->append_conf('postgresql.conf', "idgen.epoch = '2025-01-01 00:00:00+00'\n");
$new->stop;
$start_new->('start');
ok($new->poll_query_until('postgres', "SELECT keeper_state = 'epoch changed' FROM idgen_status()"),
	'with a different idgen.epoch the keeper reports the change');
like(error_of($new, 'SELECT snowflake_id()'), qr/^55000: "idgen.epoch" changed since IDs were issued/,
	'snowflake_id() is refused with 55000');
like(error_of($new, 'SELECT instagram_id(17)'), qr/^55000: "idgen.epoch" changed since IDs were issued/,
	'instagram_id() is refused with 55000');
$new->append_conf('postgresql.conf', "idgen.epoch = '2024-01-01 00:00:00+00'\n");
$new->stop;
$start_new->('start');
wait_for_keeper($new);
$new->safe_psql('app', q{
	INSERT INTO orders (item) SELECT 'last order ' || g FROM generate_series(1, 1000) g;
	INSERT INTO photos (caption) SELECT 'last photo ' || g FROM generate_series(1, 1000) g;
});
is($new->safe_psql('app', q{
	SELECT (SELECT min(id) FILTER (WHERE item LIKE 'last %') > max(id) FILTER (WHERE item NOT LIKE 'last %') FROM orders),
	       (SELECT min(id) FILTER (WHERE caption LIKE 'last %') > max(id) FILTER (WHERE caption NOT LIKE 'last %') FROM photos)}),
	't|t', 'with the epoch restored, generation resumes above all earlier IDs');

$new->stop;
done_testing();
