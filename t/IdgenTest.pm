# Helpers shared by idgen's TAP tests.
package IdgenTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

our @EXPORT = qw(error_of wait_for_keeper fake_clock concurrent_pgbench);

# Run SQL that must fail in database postgres; return "SQLSTATE: message"
# of its error, or "no error".
sub error_of
{
	my ($node, $sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\n$sql", on_error_stop => 1, timeout => 60);
	return "no error" if $ret == 0;
	return $err =~ /ERROR:\s+(\w{5}: [^\n]*)/ ? $1 : $err;
}

# The keeper creates the extension in idgen.database (postgres) at start
# and then makes the first reservation; wait for both, as a user would
# before generating.
sub wait_for_keeper
{
	my ($node) = @_;
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_extension WHERE extname = 'idgen'")
	  or die "the idgen keeper did not create the extension";
	$node->poll_query_until('postgres',
		"SELECT keeper_state = 'ready' FROM idgen_status()")
	  or die "the idgen keeper did not become ready";
}

my $libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

# Give $node its own libfaketime wall clock, read from a file that starts
# as $spec ("+0", "-10s", or an absolute time, which freezes the clock).
# CLOCK_MONOTONIC stays real, so waits still end.  Returns two closures:
# set($spec) changes the clock of the running server, and start(@args)
# starts (or restarts) the server under the fake clock: pg_ctl hands its
# environment to the postmaster, and it to every backend.
sub fake_clock
{
	my ($node, $spec) = @_;
	BAIL_OUT("libfaketime not found at $libfaketime (Debian package libfaketime)")
	  unless -e $libfaketime;

	my $file = $node->basedir . '/clock';
	my $set = sub {
		my ($new) = @_;
		open my $fh, '>', "$file.tmp" or die "$file.tmp: $!";
		print $fh "$new\n";
		close $fh;
		rename "$file.tmp", $file or die "$file: $!";
	};
	my $start = sub {
		my ($method, @args) = @_;
		local $ENV{LD_PRELOAD} = $libfaketime;
		local $ENV{FAKETIME_TIMESTAMP_FILE} = $file;
		local $ENV{FAKETIME_NO_CACHE} = 1;
		local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = 1;
		# absolute specs are read in local time: make that UTC
		local $ENV{TZ} = 'UTC';
		$node->$method(@args);
	};
	$set->($spec);
	return ($set, $start);
}

# Run a pgbench script on several servers at the same time: each run is
# [$node, $script_text] and gets 2 clients for $seconds.  Checks that every
# run ends with no failed transaction.
sub concurrent_pgbench
{
	my ($seconds, @runs) = @_;
	my @started;

	for my $run (@runs)
	{
		my ($node, $text) = @$run;
		my $script = $node->basedir . '/pgbench_' . scalar(@started) . '.sql';
		my $out = '';
		append_to_file($script, $text);
		push @started, [ $node, \$out, IPC::Run::start(
			[ 'pgbench', '-n', '-c', '2', '-j', '1', '-T', $seconds, '-f', $script,
			  $node->connstr('postgres') ],
			'>', \$out, '2>', \$out, IPC::Run::timeout(120 + $seconds)) ];
	}
	for my $run (@started)
	{
		my ($node, $out, $h) = @$run;
		$h->finish;
		like($$out, qr/number of failed transactions: 0 /,
			$node->name . ': pgbench ran without failures');
	}
}

1;
