# Node-id leases in an etcd that speaks only TLS, requires a client
# certificate and has authentication on, as Patroni's and Kubernetes'
# etcd clusters do.  The keeper reaches it over https:// with the CA file,
# its own certificate and a user whose password is in a file
# (idgen.lease_ca_file, idgen.lease_cert_file, idgen.lease_key_file,
# idgen.lease_user, idgen.lease_password_file): it claims, generates and
# renews.  A wrong CA and a wrong password each stop generation (55000,
# someone must fix it) with an error that names the setting to correct; a
# certificate etcd does not trust stops it with 55P03, since libcurl cannot
# tell etcd's refusal from a connection lost otherwise (an etcd member
# killed), but the error still names the certificate.  A reload with the
# setting corrected recovers.
# The password never reaches the log, and a non-superuser cannot read
# the settings.
#
# Certificates are made here by openssl; etcd runs on loopback and is
# stopped by its PID.  Nothing depends on the machine's speed: every wait
# polls.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time);
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;
use IdgenEtcd;

my $ttl = 4;
my $password = 'Pw-8f3kq2-never-logged';

# ---- certificates: a CA, etcd's server certificate, our client's; and
# a second CA with a client certificate of its own, which etcd does not
# trust ----
my $certs = PostgreSQL::Test::Utils::tempdir('certs');

sub openssl
{
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'openssl', @_ ], '>', \$out, '2>', \$err)
	  or die "openssl @_: $err";
}

sub make_ca
{
	my ($name) = @_;
	openssl('req', '-x509', '-new', '-nodes', '-newkey', 'ec',
		'-pkeyopt', 'ec_paramgen_curve:prime256v1',
		'-keyout', "$certs/$name.key", '-out', "$certs/$name.crt",
		'-days', '2', '-subj', "/CN=idgen test $name",
		'-addext', 'basicConstraints=critical,CA:TRUE',
		'-addext', 'keyUsage=critical,keyCertSign,cRLSign');
}

sub make_cert
{
	my ($name, $ca, $subject, $ext) = @_;
	PostgreSQL::Test::Utils::append_to_file("$certs/$name.ext", $ext);
	openssl('req', '-new', '-nodes', '-newkey', 'ec',
		'-pkeyopt', 'ec_paramgen_curve:prime256v1',
		'-keyout', "$certs/$name.key", '-out', "$certs/$name.csr",
		'-subj', $subject);
	openssl('x509', '-req', '-in', "$certs/$name.csr",
		'-CA', "$certs/$ca.crt", '-CAkey', "$certs/$ca.key",
		'-CAcreateserial', '-days', '2',
		'-extfile', "$certs/$name.ext", '-out', "$certs/$name.crt");
	chmod 0600, "$certs/$name.key";
}

make_ca('ca');
make_ca('other-ca');
# etcd's gateway connects to etcd with the server certificate: clientAuth too
make_cert('server', 'ca', '/CN=etcd-server',
	"subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n");
# etcd's JSON gateway refuses a client certificate with a Common Name
make_cert('client', 'ca', '/O=idgen', "extendedKeyUsage=clientAuth\n");
make_cert('other-client', 'other-ca', '/O=idgen', "extendedKeyUsage=clientAuth\n");

# etcd's tokens: JWTs that expire after $token_ttl s, so that the keeper
# must get new ones all along (etcd's default "simple" tokens last as long
# as they are used)
my $token_ttl = 3;
openssl('ecparam', '-genkey', '-name', 'prime256v1', '-noout',
	'-out', "$certs/jwt.key");
openssl('ec', '-in', "$certs/jwt.key", '-pubout', '-out', "$certs/jwt.pub");

# ---- etcd with TLS, client certificates and users ----
start_etcd(
	args => [
		'--auth-token',
		"jwt,pub-key=$certs/jwt.pub,priv-key=$certs/jwt.key,sign-method=ES256,ttl=${token_ttl}s"
	],
	cert_file => "$certs/server.crt",
	key_file => "$certs/server.key",
	trusted_ca_file => "$certs/ca.crt",
	client_cert_auth => 1,
	ca => "$certs/ca.crt",
	client_cert => "$certs/client.crt",
	client_key => "$certs/client.key");
my $etcd_url = etcd_url();
like($etcd_url, qr{^https://127\.0\.0\.1:\d+$}, 'etcd listens on https://');

etcdctl('user', 'add', 'root:root-pw');
etcdctl('user', 'grant-role', 'root', 'root');
etcdctl('user', 'add', "idgen:$password");
etcdctl('role', 'add', 'idgen');
etcdctl('role', 'grant-permission', 'idgen', 'readwrite', '--prefix=true', '/idgen/');
etcdctl('user', 'grant-role', 'idgen', 'idgen');
etcdctl('auth', 'enable');
etcdctl_user('root:root-pw');

# the password files: the keeper refuses one that others can read
my $pwfile = "$certs/etcd-password";
my $wrong_pwfile = "$certs/wrong-password";
PostgreSQL::Test::Utils::append_to_file($pwfile, "$password\n");
PostgreSQL::Test::Utils::append_to_file($wrong_pwfile, "not-the-password\n");
chmod 0600, $pwfile, $wrong_pwfile;

# ---- a server holding node id 7 over https, as user idgen ----
my $node = lease_node('tls', 7, ttl => $ttl, extra => qq{
idgen.lease_ca_file = '$certs/ca.crt'
idgen.lease_cert_file = '$certs/client.crt'
idgen.lease_key_file = '$certs/client.key'
idgen.lease_user = 'idgen'
idgen.lease_password_file = '$pwfile'
});
$node->start;
wait_for_keeper($node);

sub status
{
	return $node->safe_psql('postgres',
		'SELECT lease_state, lease_id, lease_error FROM idgen_lease_status()');
}

# Poll until snowflake_id() works again, and say so.
sub generates
{
	my ($what) = @_;
	$node->poll_query_until('postgres', 'SELECT snowflake_id() > 0')
	  or die "$what: never generated: " . status();
	pass("$what: generates");
}

# Change the settings (name => value, undef for RESET) with
# alter_system_and_reload, then poll until generation fails closed with
# SQLSTATE $code (55000 unless given); its error, and the lease's, must
# name $setting.  The lease was
# held, so the error is that it is not current, or, once the keeper claims
# again, that the node id is not claimed yet.
my $refusal = qr/(?:this server's lease on node id 7 in etcd is not current|this server has not claimed its node id in etcd yet)/;
sub wait_until_refused
{
	my ($settings, $what, $setting, $code) = @_;
	$code //= '55000';
	my $err;
	# this case's own warning: the log from just before its settings
	# changed (the keeper may warn before the reload has been waited
	# for), not an earlier case's
	my $offset = -s $node->logfile;
	alter_system_and_reload($node, $settings);
	wait_until(sub {
		$err = error_of($node, 'SELECT snowflake_id()');
		return $err =~ /^$code: $refusal$/;
	}) or die "$what: generation never stopped with $code: $err; " . status();
	like($err, qr/^$code: $refusal$/, "$what: snowflake_id() refuses with $code");
	# A renewal over a connection made before the change may fail first
	# with another TLS error; the next request's handshake names the
	# setting.
	my $stderr = '';
	wait_until(sub {
		(undef, undef, $stderr) = $node->psql('postgres', 'SELECT snowflake_id()');
		return $stderr =~ /DETAIL:[^\n]*\Q"$setting"\E/;
	});
	like($stderr, qr/DETAIL:[^\n]*\Q"$setting"\E/,
		"$what: the error's detail names $setting");
	my $lease_error = $node->safe_psql('postgres',
		'SELECT lease_error FROM idgen_lease_status()');
	like($lease_error, qr/\Q"$setting"\E/, "$what: the lease's error names $setting");
	note "$what: $lease_error";
	ok(wait_until(sub {
		slurp_file($node->logfile, $offset) =~ /WARNING:  idgen keeper: [^\n]*\Q"$setting"\E/;
	}), "$what: the server log names $setting");
}

wait_for_lease($node, 'held');
generates('over TLS with a client certificate and a user');
like(etcd_get('/idgen/node/7'), qr/"system_identifier"/,
	'the node key is in etcd, written as user idgen');

# It renews: the same lease is held two TTLs later.
my $lease_id = $node->safe_psql('postgres', 'SELECT lease_id FROM idgen_lease_status()');
my $start = time;
ok( wait_until(sub {
		time > $start + 2 * $ttl
		  && $node->safe_psql('postgres',
			"SELECT lease_state = 'held' AND lease_id = $lease_id FROM idgen_lease_status()") eq 't';
	}),
	'renewals: the same lease is held two TTLs later');

# Meanwhile the keeper's tokens expired (etcd: "invalid auth token"),
# several times.  etcd also makes every token stale when its users or
# roles change ("revision of auth store is old"), and when authentication
# is turned off and on.  Each time the keeper gets a new token: the lease
# is held, and IDs are issued, two token lifetimes (and two lease TTLs)
# later.  (Whether generation pauses meanwhile depends on how fast etcd
# answers; that it resumes does not.)
sub still_held
{
	my ($what) = @_;
	my $start = time;
	my $span = 2 * ($ttl > $token_ttl ? $ttl : $token_ttl);
	ok( wait_until(sub {
			time > $start + $span
			  && $node->safe_psql('postgres',
				"SELECT lease_state = 'held' FROM idgen_lease_status()") eq 't';
		}),
		"$what: the lease is held later");
	generates($what);
	is($node->safe_psql('postgres',
			"SELECT count(DISTINCT snowflake_id()) FROM generate_series(1, 1000)"),
		'1000', "$what: distinct IDs");
}
still_held('tokens expired');
etcdctl('role', 'grant-permission', 'idgen', 'read', '/elsewhere/');
still_held('tokens made stale');
etcdctl('auth', 'disable');
etcdctl('auth', 'enable');
still_held('authentication turned off and on');

# ---- a wrong CA: etcd's certificate does not verify ----
wait_until_refused({ 'idgen.lease_ca_file' => "$certs/other-ca.crt" },
	'a wrong CA', 'idgen.lease_ca_file');
alter_system_and_reload($node, { 'idgen.lease_ca_file' => undef });
generates('the CA corrected and reloaded');

# ---- a client certificate etcd does not trust ----
# etcd closes the connection: libcurl cannot tell that from a lost one,
# so generators say 55P03 (retry), while the errors name the certificate
wait_until_refused({ 'idgen.lease_cert_file' => "$certs/other-client.crt",
		'idgen.lease_key_file' => "$certs/other-client.key" },
	'an untrusted client certificate', 'idgen.lease_cert_file', '55P03');
alter_system_and_reload($node, { 'idgen.lease_cert_file' => undef, 'idgen.lease_key_file' => undef });
generates('the certificate corrected and reloaded');

# ---- a wrong password ----
wait_until_refused({ 'idgen.lease_password_file' => "$wrong_pwfile" },
	'a wrong password', 'idgen.lease_password_file');
alter_system_and_reload($node, { 'idgen.lease_password_file' => undef });
generates('the password corrected and reloaded');

# ---- a password file that others can read is refused ----
chmod 0644, $wrong_pwfile;
wait_until_refused({ 'idgen.lease_password_file' => "$wrong_pwfile" },
	'a password file others can read', 'idgen.lease_password_file');
like($node->safe_psql('postgres', 'SELECT lease_error FROM idgen_lease_status()'),
	qr/must be a file of the database user with permissions u=rw \(0600\) or less/,
	'... because of its permissions');
alter_system_and_reload($node, { 'idgen.lease_password_file' => undef });
generates('the password file corrected and reloaded');

# ---- secrets ----
unlike(slurp_file($node->logfile), qr/\Q$password\E/, 'the password is never logged');
$node->safe_psql('postgres', 'CREATE ROLE alice LOGIN');
for my $setting (qw(idgen.lease_password_file idgen.lease_user idgen.lease_key_file))
{
	like(error_of($node, "SET ROLE alice; SHOW $setting"), qr/^42501: /,
		"a non-superuser cannot read $setting");
}
is($node->safe_psql('postgres',
		"SET ROLE alice; SELECT count(*) FROM pg_settings WHERE name IN ('idgen.lease_password_file', 'idgen.lease_user')"),
	'0', 'nor see them in pg_settings');

$node->stop;
stop_etcd();
done_testing();
