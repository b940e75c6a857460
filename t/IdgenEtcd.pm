# An etcd of the test's own, for the node-id lease tests: Debian's
# etcd-server on loopback ports chosen free, in a temporary directory,
# stopped by its PID (stop_etcd, and at exit).  etcdctl (Debian's
# etcd-client) reads and changes keys, and restores snapshots (etcd 3.4
# has no etcdutl).
package IdgenEtcd;

use strict;
use warnings;
use Exporter 'import';
use IPC::Run;
use IO::Socket::INET;
use POSIX ();
use File::Path ();
use Time::HiRes qw(time sleep);
use Test::More;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IdgenTest ();

our @EXPORT = qw(etcd_url etcd_dir start_etcd stop_etcd restore_etcd etcdctl
  etcd_get wait_for_key_gone etcdctl_user lease_node wait_for_lease
  wait_until_generating start_etcd_proxy drop_next_record_answer);

my $etcd_bin = '/usr/bin/etcd';
my ($dir, $url, $peer_url, $etcd);

# start_etcd's options, kept for a restart (restore_etcd), and etcdctl's
# matching ones: TLS files, and the user once authentication is on.
my %opts;
my @ctl_opts;

sub setup
{
	return if $dir;
	# Without etcd the lease tests skip, with the reason, so that "make
	# installcheck" runs the rest; the test command sets
	# IDGEN_ETCD_REQUIRED=1, and then a missing etcd fails.
	if (!-x $etcd_bin)
	{
		BAIL_OUT("etcd not found at $etcd_bin (Debian package etcd-server)")
		  if $ENV{IDGEN_ETCD_REQUIRED};
		plan skip_all => "etcd not found at $etcd_bin (Debian package etcd-server); IDGEN_ETCD_REQUIRED=1 makes this a failure";
	}
	$dir = PostgreSQL::Test::Utils::tempdir('etcd');
	$url = 'http://127.0.0.1:' . PostgreSQL::Test::Cluster::get_free_port();
	$peer_url = 'http://127.0.0.1:' . PostgreSQL::Test::Cluster::get_free_port();
	$ENV{ETCDCTL_API} = 3;
}

# The client URL, for idgen.lease_endpoints; the directory, for snapshots.
sub etcd_url { setup(); return $url; }
sub etcd_dir { setup(); return $dir; }

# start_etcd(%options): with no options, plain HTTP without
# authentication.  TLS: cert_file and key_file (the server's certificate,
# which must also allow client authentication: etcd's gateway connects to
# etcd with it), trusted_ca_file (with client_cert_auth => 1, clients must
# present a certificate this CA signed); the URL becomes https://, and
# etcdctl uses ca (the CA file) and client_cert and client_key.
# ctl_user => 'user:password' makes etcdctl authenticate (once auth is
# enabled).  args => [...]: more of etcd's options.  A restart
# (restore_etcd) keeps the options.
sub start_etcd
{
	my (%o) = @_;
	setup();
	%opts = %o if %o;
	my @tls;
	if ($opts{cert_file})
	{
		$url =~ s{^http://}{https://};
		push @tls, '--cert-file', $opts{cert_file}, '--key-file', $opts{key_file};
		push @tls, '--trusted-ca-file', $opts{trusted_ca_file}
		  if $opts{trusted_ca_file};
		push @tls, '--client-cert-auth' if $opts{client_cert_auth};
	}
	set_ctl_opts();
	$etcd = IPC::Run::start(
		[
			$etcd_bin, '--name', 'idgen-test',
			'--data-dir', "$dir/data",
			'--listen-client-urls', $url,
			'--advertise-client-urls', $url,
			'--listen-peer-urls', $peer_url,
			'--initial-advertise-peer-urls', $peer_url,
			'--initial-cluster', "idgen-test=$peer_url",
			@tls, @{ $opts{args} // [] }
		],
		'>>', "$dir/etcd.log", '2>>', "$dir/etcd.log");
	IdgenTest::wait_until(sub { etcd_get('/health-check') ne 'unreachable' })
	  or BAIL_OUT("etcd did not start; see $dir/etcd.log");
}

# etcdctl authenticates as 'user:password' from now on ('' for no one).
sub etcdctl_user
{
	($opts{ctl_user}) = @_;
	set_ctl_opts();
}

sub set_ctl_opts
{
	@ctl_opts = ();
	push @ctl_opts, '--cacert', $opts{ca} if $opts{ca};
	push @ctl_opts, '--cert', $opts{client_cert}, '--key', $opts{client_key}
	  if $opts{client_cert};
	push @ctl_opts, '--user', $opts{ctl_user} if $opts{ctl_user};
}

sub stop_etcd
{
	return unless $etcd;
	$etcd->signal('TERM');
	$etcd->finish;
	undef $etcd;
}

END { local $?; stop_etcd(); }

# Run etcdctl against our etcd; its output, or die with its error.
sub etcdctl
{
	my @args = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'etcdctl', '--endpoints', etcd_url(), @ctl_opts, @args ],
		'>', \$out, '2>', \$err)
	  or die "etcdctl @args: $err";
	return $out;
}

# The value of a key, '' if absent, 'unreachable' if etcd does not answer
# three tries of 5 s each: a TLS handshake on a loaded machine can take
# seconds, and one slow answer is not an etcd that is gone.
sub etcd_get
{
	my ($key) = @_;
	for my $try (1 .. 3)
	{
		my ($out, $err) = ('', '');
		my $ok = IPC::Run::run(
			[ 'etcdctl', '--endpoints', etcd_url(), @ctl_opts, '--dial-timeout', '5s',
			  'get', $key, '--print-value-only' ],
			'>', \$out, '2>', \$err);
		next unless $ok;
		chomp $out;
		return $out;
	}
	return 'unreachable';
}

# Wait for etcd to drop a key (a lease expiring); true once it has.
# Bounded like poll_query_until, by time, not by how fast the machine is.
sub wait_for_key_gone
{
	my ($key) = @_;
	return IdgenTest::wait_until(sub { etcd_get($key) eq '' });
}

# Stop etcd, replace its data directory by one restored from $snapshot,
# and start it again on the same port: etcd as it was when the snapshot
# was taken.
sub restore_etcd
{
	my ($snapshot) = @_;
	stop_etcd();
	File::Path::rmtree("$dir/restored") if -e "$dir/restored";
	etcdctl('snapshot', 'restore', $snapshot,
		'--data-dir', "$dir/restored",
		'--name', 'idgen-test',
		'--initial-cluster', "idgen-test=$peer_url",
		'--initial-advertise-peer-urls', $peer_url);
	File::Path::rmtree("$dir/data");
	rename("$dir/restored", "$dir/data") or die "rename: $!";
	start_etcd();
}


# A proxy on loopback in front of our (plain HTTP) etcd, for a fault etcd
# cannot make by itself: a write it applies whose answer never comes, as
# from an etcd too slow for the request's timeout.  Each request is passed
# on over a connection of its own; once drop_next_record_answer() has
# been called, the next transaction that puts a key (a write of the
# reservation record: the node key is claimed before) is passed on and
# applied, and then its client's connection is closed without an answer
# (libcurl: "Empty reply from server", as good as a timeout to the keeper,
# and quicker).
# Returns the URL to use as idgen.lease_endpoints.  Stopped by its PID at
# exit.
my ($proxy_pid, $proxy_flag);

sub start_etcd_proxy
{
	setup();
	my ($host, $port) = $url =~ m{^http://([^:/]+):(\d+)} or die "no plain HTTP etcd: $url";
	my $listen = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
		Listen => 16, ReuseAddr => 1) or die "proxy: $!";
	my $proxy_url = 'http://127.0.0.1:' . $listen->sockport;
	$proxy_flag = "$dir/drop-next-record-answer";
	$proxy_pid = fork() // die "fork: $!";
	if ($proxy_pid == 0)
	{
		$SIG{CHLD} = 'IGNORE';
		while (1)
		{
			my $client = $listen->accept or next;
			my $child = fork();
			if (defined $child && $child == 0)
			{
				proxy_connection($client, $host, $port);
				POSIX::_exit(0);
			}
			close $client;
		}
	}
	close $listen;
	return $proxy_url;
}

sub drop_next_record_answer
{
	open my $fh, '>', $proxy_flag or die "$proxy_flag: $!";
	close $fh;
}

# Serve one client connection: its one request (the answer closes it).
sub proxy_connection
{
	my ($client, $host, $port) = @_;
	binmode $client;
	my $head = '';
	while ($head !~ /\r\n\r\n/)
	{
		my $n = sysread($client, my $buf, 65536);
		return unless $n;
		$head .= $buf;
	}
	my ($h, $body) = split /\r\n\r\n/, $head, 2;
	my ($length) = $h =~ /^Content-Length:\s*(\d+)/mi;
	while (length($body) < ($length // 0))
	{
		my $n = sysread($client, my $buf, 65536);
		return unless $n;
		$body .= $buf;
	}
	# one request per connection, both ways
	$h =~ s/^Connection:[^\r\n]*\r\n//mig;
	$h =~ s/\r\n/\r\nConnection: close\r\n/;

	my $up = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port) or return;
	binmode $up;
	print $up "$h\r\n\r\n$body";
	my $answer = '';
	while (sysread($up, my $buf, 65536)) { $answer .= $buf; }
	close $up;

	# applied by etcd, but its answer is lost: the request fails
	return if $h =~ m{^POST /v3/kv/txn} && $body =~ /"request_put"/
	  && unlink($proxy_flag);
	$answer =~ s/^Connection:[^\r\n]*\r\n//mig;
	$answer =~ s/\r\n/\r\nConnection: close\r\n/;
	print $client $answer;
}

END
{
	local $?;
	kill 'KILL', $proxy_pid if $proxy_pid;
}

# A server (not started) with idgen preloaded and leases on this etcd:
# node id $node_id ('auto', '-1' or a number), lease TTL $opt{ttl} (6 s),
# key prefix $opt{prefix} ('/idgen/'), idgen.max_lead $opt{max_lead}
# (60s), and $opt{extra} appended to postgresql.conf.
sub lease_node
{
	my ($name, $node_id, %opt) = @_;
	my $ttl = $opt{ttl} // 6;
	my $prefix = $opt{prefix} // '/idgen/';
	my $max_lead = $opt{max_lead} // '60s';
	return IdgenTest::idgen_node($name, allows_streaming => 1, conf => qq{
idgen.node_id = '$node_id'
idgen.lease_endpoints = '${\ etcd_url()}'
idgen.lease_prefix = '$prefix'
idgen.lease_ttl = $ttl
idgen.max_lead = $max_lead
idgen.max_wait = 10s
} . ($opt{extra} // ''));
}

# Poll until the lease of $node is in $state; dies with its status if not.
sub wait_for_lease
{
	my ($node, $state) = @_;
	$node->poll_query_until('postgres',
		"SELECT lease_state = '$state' FROM idgen_lease_status()")
	  or die $node->name . ": lease never reached state $state: "
	  . $node->safe_psql('postgres',
		'SELECT lease_state, lease_holder, lease_error FROM idgen_lease_status()');
}

# Poll until snowflake_id() works; dies after the suite's timeout.
sub wait_until_generating
{
	my ($node) = @_;
	$node->poll_query_until('postgres', 'SELECT snowflake_id() > 0')
	  or die $node->name . ': never generated';
}

1;
