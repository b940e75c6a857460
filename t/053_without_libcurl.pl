# idgen builds without libcurl ("make WITH_LIBCURL=no", or no libcurl
# development files): warning-free, not linked to libcurl, and then a
# lease configured in idgen.lease_endpoints is refused with an error that
# says why, at server start and by ALTER SYSTEM, while the server without
# one starts.  The build is also not a test build (no WITH_TEST_HOOKS, as
# a package or "make install" builds): the test-only idgen.test_clock is
# refused, in postgresql.conf and by ALTER SYSTEM.  The library built here is loaded through
# dynamic_library_path, ahead of the installed one, by the postmaster and
# the keeper alike.  (The keeper's CREATE EXTENSION then loads the
# installed library as well, through the extension's own path, and logs
# that it cannot define the settings twice: this test starts no
# generator.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use File::Copy qw(copy);
use lib $FindBin::RealBin;
use IdgenTest;

my $top = "$FindBin::RealBin/..";
my $dir = PostgreSQL::Test::Utils::tempdir;
mkdir "$dir/src" or die "mkdir: $!";
for my $f (glob("$top/src/*.[ch]"), glob("$top/src/*/*.[ch]"))
{
	my ($rel) = $f =~ m{/src/(.*)$};
	my ($sub) = $rel =~ m{^(.*)/};
	mkdir "$dir/src/$sub" if defined $sub && !-d "$dir/src/$sub";
	copy($f, "$dir/src/$rel") or die "copy $f: $!";
}
for my $f ('Makefile', 'idgen.control', glob("$top/idgen--*.sql"))
{
	my $from = $f =~ m{^/} ? $f : "$top/$f";
	copy($from, "$dir/") or die "copy $from: $!";
}

my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my ($out, $err) = ('', '');
my $built = IPC::Run::run(
	[ 'make', '-s', '-C', $dir, "PG_CONFIG=$pg_config", 'WITH_LIBCURL=no',
	  'PG_CFLAGS=-Wall -Wextra -Werror -Wno-unused-parameter -Wno-sign-compare' ],
	'>', \$out, '2>', \$err);
ok($built, 'idgen builds warning-free with WITH_LIBCURL=no') or diag($err);
ok(-e "$dir/idgen.so", 'and makes idgen.so');
my $ldd = `ldd $dir/idgen.so 2>&1`;
like($ldd, qr/libc\.so/, 'ldd lists the library\'s dependencies');
unlike($ldd, qr/libcurl/, 'which is not linked to libcurl');

# (dynamic_library_path is read with the rest of postgresql.conf, before
# the preloaded idgen is looked for: its line may follow that one)
my $node = idgen_node('no_libcurl', conf => qq{
dynamic_library_path = '$dir:\$libdir'
idgen.node_id = 3
idgen.lease_endpoints = 'http://127.0.0.1:2379'
});
ok(!$node->start(fail_ok => 1), 'a server with a lease configured refuses to start');
like(slurp_file($node->logfile),
	qr/invalid value for parameter "idgen\.lease_endpoints".*\n.*DETAIL:\s+This idgen was built without libcurl, which node-id leases need to talk to etcd\./,
	'and says that this idgen was built without libcurl');

$node->append_conf('postgresql.conf', "idgen.lease_endpoints = ''\nidgen.test_clock = '1700000000000'\n");
my $log_offset = -s $node->logfile;
$node->start;
is($node->safe_psql('postgres', q{
	SELECT setting FROM pg_settings WHERE name = 'idgen.node_id'}),
	'3', 'without a lease the server starts');
# the postmaster mapped the library built here, not the installed one
like(slurp_file("/proc/$node->{_pid}/maps"), qr/\Q$dir\E\/idgen\.so$/m,
	'with the library built here');
like(error_of($node, q{ALTER SYSTEM SET idgen.lease_endpoints = 'http://127.0.0.1:2379'}),
	qr/^22023: invalid value for parameter "idgen\.lease_endpoints"/,
	'ALTER SYSTEM refuses a lease with 22023');
# a build that is not a test build has no test clock
like(substr(slurp_file($node->logfile), $log_offset),
	qr/WARNING:\s+invalid configuration parameter name "idgen\.test_clock", removing it/,
	'idgen.test_clock in postgresql.conf is removed with a warning: this is not a test build');
like(error_of($node, q{ALTER SYSTEM SET idgen.test_clock = '1700000000000'}),
	qr/^(?:42704: unrecognized configuration parameter|42602: invalid configuration parameter name) "idgen\.test_clock"/,
	'ALTER SYSTEM refuses idgen.test_clock (42704 on 15, 42602 for a reserved prefix from 16)');
is($node->safe_psql('postgres', q{SELECT current_setting('idgen.test_clock', true) IS NULL}),
	't', 'and no session has it');
$node->stop;
done_testing();
