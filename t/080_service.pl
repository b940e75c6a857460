# The HTTP ID service (service/): its contract, replicas and fallback.
#
# Two servers with different node ids (65: datacenter 1 worker 1; 130:
# datacenter 2 worker 2) hold the same named generators; two service
# instances run against each, all as the role docs/service.md creates,
# with its own setup SQL, one with its configuration as written (listening
# and connecting where the test says), which must be
# service/config.example.json: it serves both namespaces and is ready, and
# the docs' decode answer has the shape of a real one.  Tested: the exact
# response of POST /api/snowflake/v1/gen/ {"namespace": 1}, the ID as a JSON number
# with its string beside it, batches, decoding by field name, a table of
# requests that must be refused (no type coercion, no unknown fields or
# nulls, 415 for what is not JSON), readiness with that role, metrics;
# every answer of an instance above the one before it; zero duplicates
# across all four instances under concurrent load; and the fallback: with
# PostgreSQL stopped an instance serves its prefetched IDs and then 503s,
# never anything else, and serves again once the server is back; a
# restarted instance never reuses an ID.  Properties only: no raw IDs, no
# timings.
#
# Needs node and npm, and npm's registry or an npm cache holding the
# service's locked dependencies (IDGEN_NPM_CACHE, a directory kept between
# runs).  Skipped with a message otherwise, unless IDGEN_NODE_REQUIRED is
# set: then a missing tool or package is a failure.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use JSON::PP;
use HTTP::Tiny;
use File::Copy;
use POSIX ':sys_wait_h';
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $r;

require_node();

# The service as a user deploys it: its files, then `npm ci --omit=dev` from
# the lock file (not the benchmark's load generator, a devDependency): from
# the cache alone if it holds everything, else from the registry.
my $dir = PostgreSQL::Test::Utils::tempdir('service');
my $app = "$dir/app";
mkdir $app or die "mkdir $app: $!";
my $src = "$FindBin::RealBin/../service";
mkdir "$app/test" or die "mkdir $app/test: $!";
for my $f ('server.js', 'buffer.js', 'config.js', 'package.json', 'package-lock.json',
	'test/buffer.test.js')
{
	copy("$src/$f", "$app/$f") or die "copy $src/$f: $!";
}
my $cache = $ENV{IDGEN_NPM_CACHE} || "$dir/npm-cache";
my ($npm_out, $npm_err) = ('', '');
my $npm_ok;
for my $mode ('--offline', '--prefer-offline')
{
	$npm_err = '';
	$npm_ok = eval {
		IPC::Run::run(
			[ 'npm', 'ci', '--omit=dev', '--prefix', $app, '--no-audit', '--no-fund',
			  '--no-update-notifier', $mode, '--cache', $cache ],
			'>', \$npm_out, '2>', \$npm_err, IPC::Run::timeout(240));
	};
	last if $npm_ok && -d "$app/node_modules/fastify" && -d "$app/node_modules/pg";
	note "npm ci $mode: " . ((split /\n/, $npm_err || $@ || 'failed')[0] // '');
}
node_cannot_run("npm could not install the service's dependencies (no registry, nothing cached?): "
	  . ((grep { !/complete log of this run/ } split /\n/, $npm_err || $@ || 'unknown error')[0]
		// 'unknown error'))
  unless $npm_ok && -d "$app/node_modules/fastify" && -d "$app/node_modules/pg";

# The prefetch buffer alone, against a fake database
{
	my ($bout, $berr) = ('', '');
	my $bran = eval {
		IPC::Run::run([ 'node', "$app/test/buffer.test.js" ], '>', \$bout, '2>', \$berr,
			IPC::Run::timeout(60));
	};
	my @lines = split /\n/, $bout;
	ok($bran && @lines == 10 && !(grep { !/^ok - / } @lines), 'the buffer\'s own checks pass')
	  or diag "stdout: $bout\nstderr: $berr";
	note $_ for @lines;
}

# A configuration that cannot work stops the service at start, saying why
{
	my ($cout, $cerr) = ('', '');
	append_to_file("$dir/bad.json", '{"namespaces": {"one": "legacy"}}');
	IPC::Run::run([ 'node', "$app/server.js", "$dir/bad.json" ], '>', \$cout, '2>', \$cerr,
		IPC::Run::timeout(60));
	is($? >> 8, 2, 'a bad configuration: exit status 2');
	like($cerr, qr/^idgen-service: namespace "one" is not a non-negative integer$/m, 'saying what is wrong');
}

# Every process started here, by PID, so that none outlives the test.
my %running;    # pid => name

sub stop_service
{
	my ($svc) = @_;
	return unless $svc->{pid} && $running{ $svc->{pid} };
	kill 'TERM', $svc->{pid};
	my $deadline = time + scaled(30);
	while (waitpid($svc->{pid}, WNOHANG) == 0)
	{
		if (time > $deadline)
		{
			kill 'KILL', $svc->{pid};
			waitpid($svc->{pid}, 0);
			last;
		}
		select(undef, undef, undef, 0.05);
	}
	$svc->{status} = $?;
	delete $running{ $svc->{pid} };
	$svc->{pid} = undef;
}

END
{
	for my $pid (keys %running)
	{
		kill 'KILL', $pid;
		waitpid($pid, 0);
	}
}

my $http = HTTP::Tiny->new(timeout => scaled(60), keep_alive => 0);

sub url_of { my ($svc, $path) = @_; return "http://127.0.0.1:$svc->{port}$path"; }

# POST a body (a Perl structure, or raw text) to a service; the answer as
# { status, body (raw), json (decoded or undef) }.
sub post
{
	my ($svc, $path, $body, $type) = @_;
	my $r = $http->post(url_of($svc, $path),
		{ headers => { 'content-type' => $type // 'application/json' },
		  content => ref $body ? encode_json($body) : $body });
	return { status => $r->{status}, body => $r->{content},
		json => scalar eval { decode_json($r->{content}) } };
}

sub get
{
	my ($svc, $path) = @_;
	my $r = $http->get(url_of($svc, $path));
	return { status => $r->{status}, body => $r->{content},
		json => scalar eval { decode_json($r->{content}) } };
}

# Start a service instance for $node on a free loopback port.
sub start_service
{
	my ($name, $node, %conf) = @_;
	my $user = delete $conf{user} // 'idgen_service';
	my $env = delete $conf{env} // {};
	my $svc = { name => $name, port => PostgreSQL::Test::Cluster::get_free_port(),
		log => "$PostgreSQL::Test::Utils::log_path/080_service_$name.log",
		conf => "$dir/$name.json", env => $env };
	# a whole configuration given (the docs'): only where to listen and
	# which server to connect to are the test's own
	my $base = delete $conf{base};
	my %config = $base
	  ? (%$base,
		listen => { %{ $base->{listen} // {} }, host => '127.0.0.1', port => $svc->{port} },
		database => { %{ $base->{database} // {} }, host => $node->host, port => $node->port },
		%conf)
	  : (
		listen => { host => '127.0.0.1', port => $svc->{port} },
		database => { host => $node->host, port => $node->port,
			database => 'postgres', user => $user },
		namespaces => { 1 => 'legacy', 3 => 'small' },
		%conf);
	open my $fh, '>', $svc->{conf} or die "write $svc->{conf}: $!";
	print $fh encode_json(\%config);
	close $fh;
	$svc->{port} = $env->{IDGEN_SERVICE_PORT} if $env->{IDGEN_SERVICE_PORT};
	return launch($svc);
}

sub launch
{
	my ($svc) = @_;
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		open STDOUT, '>>', $svc->{log} or die "open $svc->{log}: $!";
		open STDERR, '>&', \*STDOUT or die "dup: $!";
		$ENV{$_} = $svc->{env}{$_} for keys %{ $svc->{env} // {} };
		exec 'node', "$app/server.js", $svc->{conf} or die "exec node: $!";
	}
	$svc->{pid} = $pid;
	$running{$pid} = $svc->{name};
	wait_until(sub { ($http->get(url_of($svc, '/health'))->{status} // 0) == 200 })
	  or die "service $svc->{name} did not start:\n" . slurp_file($svc->{log});
	return $svc;
}

# The buffer level a service reports for a namespace
sub buffered
{
	my ($svc, $ns) = @_;
	my $m = get($svc, '/metrics')->{body} // '';
	return $m =~ /^idgen_service_buffer_ids\{namespace="$ns"\} (\d+)$/m ? $1 : -1;
}

# The setup SQL of docs/service.md: its first sql block
my ($docs_setup) = slurp_file("$FindBin::RealBin/../docs/service.md") =~ /^```sql\n(.*?)^```$/ms;
ok(defined $docs_setup && $docs_setup =~ /CREATE ROLE idgen_service LOGIN/,
	'docs/service.md has the setup SQL, creating the role idgen_service');
$docs_setup //= '';

# The configuration of docs/service.md: its ```json block with namespaces,
# which is service/config.example.json
my ($docs_config_text) = grep { /"namespaces"/ }
  slurp_file("$FindBin::RealBin/../docs/service.md") =~ /^```json\n(.*?)^```$/msg;
my $docs_config = eval { decode_json($docs_config_text // '') };
ok(ref $docs_config eq 'HASH' && ref $docs_config->{namespaces} eq 'HASH',
	'docs/service.md has the configuration, as JSON') or diag $@;
is($docs_config_text, slurp_file("$src/config.example.json"),
	'the very text of service/config.example.json');
$docs_config = { namespaces => {} } unless ref $docs_config eq 'HASH';

# Two servers, two node ids, the same generators
my %dc_of = (a => 1, b => 2);
my %nodes;
my $small_epoch;
for my $n ('a', 'b')
{
	my $node = idgen_node("service_$n",
		conf => "idgen.node_id = " . ($dc_of{$n} * 64 + $dc_of{$n}) . "\n");
	$node->start;
	wait_for_keeper($node);
	# a 53-bit layout (its IDs fit a JavaScript number) counting from
	# yesterday, so that its 2^38 ms last for years after any run
	$small_epoch //= $node->safe_psql('postgres',
		"SELECT date_trunc('day', now() - interval '1 day')::text");
	# the generator 'legacy' and the role idgen_service, exactly as the docs
	# set them up, then one more generator granted to that role
	$node->safe_psql('postgres', $docs_setup);
	$node->safe_psql('postgres', qq{
		SELECT idgen_create_generator('small',
			layout => 'time:38 datacenter:3 worker:6 seq:6',
			epoch => '$small_epoch', unit => '1 ms');
		SELECT idgen_grant_generator('small', 'idgen_service');
	});
	$nodes{$n} = $node;
}

my %seen;    # every ID any instance returned
my $dups = 0;
sub saw { for (grep { defined } @_) { $dups++ if $seen{$_}++; } }

# every instance connects as idgen_service, an ordinary role; a2 runs the
# docs' configuration as written (a buffer of 1000, batches up to 1000,
# namespaces 1 and 2), listening and connecting where the test says
my $a1 = start_service('a1', $nodes{a}, max_batch => 500);
my $a2 = start_service('a2', $nodes{a}, base => $docs_config);
my $b1 = start_service('b1', $nodes{b});
my $b2 = start_service('b2', $nodes{b});

ok(wait_until(sub { get($a1, '/ready')->{status} == 200 }),
	'an instance connected as the docs\' role is ready once its database is')
  or diag explain get($a1, '/ready')->{json};
is(get($a1, '/health')->{status}, 200, '/health answers');

# readiness the role may not check is a permission problem, not an outage
$nodes{b}->safe_psql('postgres', 'REVOKE ALL ON idgen_generator_status FROM idgen_service');
$r = get($b1, '/ready');
my $problems = join "\n", @{ $r->{json}{problems} // [] };
ok($r->{status} == 503 && $problems =~ /permission denied/ && $problems !~ /unreachable/,
	'without the grant of the docs: /ready 503, a permission problem, not "unreachable"')
  or diag $r->{body};
$nodes{b}->safe_psql('postgres', $docs_setup =~ /^(GRANT [^;]*idgen_generator_status[^;]*;)/m ? $1 : 'SELECT');
ok(wait_until(sub { get($b1, '/ready')->{status} == 200 }), 'granted again: ready');

# --- the docs' configuration serves both its namespaces, and is ready
# What is wrong with an answer to POST .../gen/, judged as below: status,
# message, code, data and its keys, the ID as a number and the same digits
# as a string, the datacenter
sub id_answer_problems
{
	my ($r, $dc) = @_;
	my @p;
	push @p, "status $r->{status}" unless $r->{status} == 200;
	push @p, 'keys ' . join(',', sort keys %{ $r->{json} // {} })
	  unless join(',', sort keys %{ $r->{json} // {} }) eq 'code,data,message';
	push @p, 'not success, 0'
	  unless ($r->{json}{message} // '') eq 'success' && ($r->{json}{code} // -1) eq '0';
	push @p, 'data keys'
	  unless join(',', sort keys %{ $r->{json}{data} // {} }) eq 'datacenter_id,snowflake_id,snowflake_id_str';
	my ($number) = $r->{body} =~ /"snowflake_id":([0-9]+)[,}]/;
	push @p, 'the ID is not a JSON number and the same digits as a string'
	  unless defined $number && $number =~ /^[1-9][0-9]*$/
	  && $r->{body} =~ /"snowflake_id_str":"$number"/;
	push @p, 'datacenter_id ' . ($r->{json}{data}{datacenter_id} // 'none')
	  unless ($r->{json}{data}{datacenter_id} // -1) eq $dc;
	push @p, "body: $r->{body}" if @p;
	return @p;
}
ok(wait_until(sub { get($a2, '/ready')->{status} == 200 }),
	'the docs\' configuration: /ready 200 (every generator it names exists and is granted)')
  or diag get($a2, '/ready')->{body};
my @docs_problems = id_answer_problems(post($a2, '/api/snowflake/v1/gen/', { namespace => 1 }), 1);
is_deeply(\@docs_problems, [], 'the docs\' configuration: namespace 1 answers 200 with an ID of datacenter 1');
$r = post($a2, '/api/snowflake/v1/gen/', { namespace => 2 });
@docs_problems = id_answer_problems($r, 1);
is_deeply(\@docs_problems, [], 'and namespace 2 too');
# namespace 2 is orders, its own ID space: its IDs go to no %seen of legacy's
my $orders_id = $r->{json}{data}{snowflake_id_str} // '';
my $orders_fields = $orders_id =~ /^[0-9]+$/
  ? eval { decode_json($nodes{a}->safe_psql('postgres', "SELECT idgen_decode('orders', $orders_id)")) }
  : undef;
is_deeply([ @{ $orders_fields // {} }{ 'datacenter', 'worker' } ], [ 1, 1 ],
	'namespace 2\'s ID decodes by the generator orders with the server\'s datacenter and worker')
  or diag $@;

# --- the contract
$r = post($a1, '/api/snowflake/v1/gen/', { namespace => 1 });
is($r->{status}, 200, 'POST /api/snowflake/v1/gen/ {"namespace": 1} answers 200');
is_deeply([ sort keys %{ $r->{json} // {} } ], [ 'code', 'data', 'message' ],
	'the answer has message, code and data');
is_deeply([ $r->{json}{message}, $r->{json}{code} ], [ 'success', 0 ], 'message "success", code 0');
is_deeply([ sort keys %{ $r->{json}{data} // {} } ], [ 'datacenter_id', 'snowflake_id', 'snowflake_id_str' ],
	'data has snowflake_id, its string snowflake_id_str, and datacenter_id');
my ($id_number) = $r->{body} =~ /"snowflake_id":([0-9]+)[,}]/;
ok(defined $id_number && $id_number =~ /^[1-9][0-9]*$/ && $id_number > 2**53,
	'the ID is a JSON number, an integer (this layout\'s IDs are above 2^53)');
my $id = $r->{json}{data}{snowflake_id_str};
ok(defined $id && $r->{body} =~ /"snowflake_id_str":"[1-9][0-9]*"/ && $id eq ($id_number // ''),
	'snowflake_id_str is a JSON string of the same digits, exactly');
is($r->{json}{data}{datacenter_id}, 1, 'datacenter_id is the server\'s datacenter');
saw($id);
# without them (checks failed above), go on with a stand-in rather than stop
$id = '0' unless defined $id && $id =~ /^[0-9]+$/;
$id_number //= $id;

$r = post($a1, '/api/snowflake/v1/decode/', "{\"namespace\": 1, \"id\": $id_number}");
ok($r->{status} == 200 && ($r->{json}{data}{snowflake_id_str} // '') eq $id,
	'the ID decodes given as the JSON number it came as: its digits survive the round trip');
$r = post($a1, '/api/snowflake/v1/decode/', { namespace => 1, id => $id });
is($r->{status}, 200, 'decode answers 200');
like($r->{body}, qr/"snowflake_id":$id[,}].*"snowflake_id_str":"$id"/, 'and names the ID as a number and a string');
is_deeply([ sort keys %{ $r->{json}{data}{fields} // {} } ],
	[ 'datacenter', 'seq', 'time', 'worker' ], 'decode names every field of the layout');
is_deeply([ $r->{json}{data}{fields}{datacenter}, $r->{json}{data}{fields}{worker},
	$r->{json}{data}{datacenter_id}, $r->{json}{data}{snowflake_id_str} ],
	[ 1, 1, 1, $id ], 'the decoded datacenter and worker are the server\'s node id');
is_deeply($r->{json}{data}{fields},
	decode_json($nodes{a}->safe_psql('postgres', "SELECT idgen_decode('legacy', $id)")),
	'the fields are what idgen_decode() says');
# the docs' example of a decode answer (its ```json block with "fields"):
# the same keys as this one, each value of the same JSON type
sub json_shape
{
	my ($v) = @_;
	return ref $v eq 'HASH' ? { map { $_ => json_shape($v->{$_}) } keys %$v }
	  : ref $v eq 'ARRAY' ? [ map { json_shape($_) } @$v ]
	  : !defined $v ? 'null'
	  : JSON::PP::is_bool($v) ? 'boolean'
	  : JSON::PP->new->allow_nonref->encode($v) =~ /^"/ ? 'string' : 'number';
}
my ($docs_decode) = grep { /"fields"/ }
  slurp_file("$FindBin::RealBin/../docs/service.md") =~ /^```json\n(.*?)^```$/msg;
is_deeply(json_shape(eval { decode_json($docs_decode // '') }), json_shape(eval { decode_json($r->{body}) }),
	'the docs\' decode answer has the shape of this one: its keys, each of its JSON type');

$r = post($a1, '/api/snowflake/v1/gen/batch/', { namespace => 1, count => 500 });
is($r->{status}, 200, 'a batch of 500 answers 200');
my @batch = @{ $r->{json}{data}{snowflake_ids_str} // [] };
is(scalar @batch, 500, 'with 500 IDs');
my ($numbers) = $r->{body} =~ /"snowflake_ids":\[([0-9,]*)\]/;
is_deeply([ split /,/, $numbers // '' ], \@batch,
	'snowflake_ids: JSON numbers, snowflake_ids_str: JSON strings of exactly the same digits');
ok(@batch && !(grep { !/^[1-9][0-9]*$/ } @batch), 'integers, all of them');
ok(!(grep { $batch[ $_ - 1 ] >= $batch[$_] } 1 .. $#batch) && $batch[0] > $id,
	'strictly increasing, after the single ID');
is($r->{json}{data}{datacenter_id}, 1, 'the batch names its datacenter');
saw(@batch);

# a 53-bit layout's IDs (the js53 preset's size) are numbers and strings too
$r = post($a1, '/api/snowflake/v1/gen/batch/', { namespace => 3, count => 100 });
($numbers) = $r->{body} =~ /"snowflake_ids":\[([0-9,]*)\]/;
my @small = @{ $r->{json}{data}{snowflake_ids_str} // [] };
ok($r->{status} == 200 && @small == 100 && join(',', @small) eq ($numbers // ''),
	'a 53-bit namespace: 100 JSON numbers and the same 100 strings');
ok(!(grep { $_ >= 2**53 } @{ $r->{json}{data}{snowflake_ids} // [1e300] }),
	'each below 2^53, exact as a JavaScript number');
saw(@small);

# --- errors
$r = post($a1, '/api/snowflake/v1/gen/', { namespace => 7 });
is($r->{status}, 404, 'an unknown namespace: 404');
like($r->{json}{message} // '', qr/^unknown namespace 7: this service serves namespaces 1, 3$/,
	'naming it and the namespaces served');
is($r->{json}{code}, 404, 'with the status as code');
$r = post($a1, '/api/snowflake/v1/gen/', '{"namespace": 1');
is($r->{status}, 400, 'a body that is not JSON: 400');
like($r->{json}{message} // '', qr/not valid JSON/, 'saying so');
$r = post($a1, '/api/snowflake/v1/gen/', {});
ok($r->{status} == 400 && ($r->{json}{message} // '') =~ /namespace/,
	'no namespace: 400 naming it');
$r = post($a1, '/api/snowflake/v1/gen/batch/', { namespace => 1, count => 501 });
ok($r->{status} == 400 && ($r->{json}{message} // '') =~ /count/,
	'a batch beyond max_batch: 400 naming count');
$r = post($a1, '/api/snowflake/v1/gen/batch/', { namespace => 1, count => 0 });
is($r->{status}, 400, 'a batch of 0: 400');
$r = post($a1, '/api/snowflake/v1/decode/', { namespace => 1, id => 'abc' });
ok($r->{status} == 400 && ($r->{json}{message} // '') =~ /64-bit integer/,
	'decoding what is not an ID: 400');

# Strict input, as a table: path, content type, body, the status expected,
# and for a 400 what its message must name.  No type is coerced (a string,
# boolean, array or null is not a number), no field is unknown, and a body
# that is not JSON by its content type is 415.  ID stands for an ID
# served above, as a JSON number or inside a string.
my $G = '/api/snowflake/v1/gen/';
my $B = '/api/snowflake/v1/gen/batch/';
my $D = '/api/snowflake/v1/decode/';
my $J = 'application/json';
my @matrix = (
	[ $G, $J, '{"namespace":1}', 200 ],
	[ $G, "$J; charset=utf-8", '{"namespace":1}', 200 ],
	[ $G, $J, '{"namespace":"1"}', 400, 'namespace' ],
	[ $G, $J, '{"namespace":true}', 400, 'namespace' ],
	[ $G, $J, '{"namespace":[1]}', 400, 'namespace' ],
	[ $G, $J, '{"namespace":{"n":1}}', 400, 'namespace' ],
	[ $G, $J, '{"namespace":null}', 400, 'namespace' ],
	[ $G, $J, '{"namespace":1.5}', 400, 'namespace' ],
	[ $G, $J, '{"namespace":-1}', 400, 'namespace' ],
	[ $G, $J, '{"namespace":1,"extra":1}', 400, 'extra' ],
	[ $G, $J, '{"namespace":1,"id_format":"number"}', 400, 'id_format' ],
	[ $G, $J, '{}', 400, 'namespace' ],
	[ $G, $J, '[1]', 400, 'object' ],
	[ $G, $J, '1', 400, 'object' ],
	[ $G, $J, 'null', 400, 'object' ],
	[ $G, $J, '{"namespace": 1', 400, 'not valid JSON' ],
	[ $G, $J, '', 400, 'empty' ],
	[ $G, $J, '{"namespace":7}', 404, 'unknown namespace 7' ],
	[ $G, 'text/plain', '{"namespace":1}', 415, 'application/json' ],
	[ $G, 'application/x-www-form-urlencoded', 'namespace=1', 415, 'application/json' ],
	[ $G, 'application/xml', '<namespace>1</namespace>', 415, 'application/json' ],
	[ $G, 'application/octet-stream', '{"namespace":1}', 415, 'application/json' ],
	[ $B, $J, '{"namespace":1,"count":5}', 200 ],
	[ $B, $J, '{"namespace":1,"count":"5"}', 400, 'count' ],
	[ $B, $J, '{"namespace":1,"count":true}', 400, 'count' ],
	[ $B, $J, '{"namespace":1,"count":[5]}', 400, 'count' ],
	[ $B, $J, '{"namespace":1,"count":null}', 400, 'count' ],
	[ $B, $J, '{"namespace":1,"count":0}', 400, 'count' ],
	[ $B, $J, '{"namespace":1,"count":501}', 400, 'count' ],
	[ $B, $J, '{"namespace":1}', 400, 'count' ],
	[ $B, $J, '{"namespace":"1","count":5}', 400, 'namespace' ],
	[ $B, $J, '{"namespace":1,"count":5,"extra":null}', 400, 'extra' ],
	[ $B, 'text/plain', '{"namespace":1,"count":5}', 415, 'application/json' ],
	[ $D, $J, '{"namespace":1,"id":"ID"}', 200 ],
	[ $D, $J, '{"namespace":1,"id":ID}', 200 ],
	[ $D, $J, '{"namespace":1,"id":null}', 400, 'id' ],
	[ $D, $J, '{"namespace":1,"id":true}', 400, 'id' ],
	[ $D, $J, '{"namespace":1,"id":["ID"]}', 400, 'id' ],
	[ $D, $J, '{"namespace":1,"id":"abc"}', 400, '64-bit integer' ],
	[ $D, $J, '{"namespace":1,"id":1.5}', 400, 'id' ],
	[ $D, $J, '{"namespace":1,"id":99999999999999999999}', 400, '64-bit integer' ],
	[ $D, $J, '{"namespace":1,"id":"99999999999999999999"}', 400, '64-bit integer' ],
	[ $D, $J, '{"namespace":"1","id":"ID"}', 400, 'namespace' ],
	[ $D, $J, '{"namespace":null,"id":"ID"}', 400, 'namespace' ],
	[ $D, $J, '{"namespace":1,"id":"ID","extra":1}', 400, 'extra' ],
	[ $D, $J, '{"namespace":1}', 400, 'id' ],
	[ $D, 'text/plain', '{"namespace":1,"id":"ID"}', 415, 'application/json' ],
);
my @wrong;
for my $row (@matrix)
{
	my ($path, $type, $body, $status, $names) = @$row;
	$body =~ s/ID/$id/g;
	$r = post($a1, $path, $body, $type);
	my $ok = ($r->{status} // 0) == $status && ($r->{json}{code} // -1) == ($status == 200 ? 0 : $status);
	$ok &&= index($r->{json}{message} // '', $names) >= 0 if defined $names;
	push @wrong, "$path $type $body: expected $status"
	  . (defined $names ? " naming $names" : '') . ", got $r->{status} $r->{body}"
	  unless $ok;
	if ($status == 200)
	{
		saw($r->{json}{data}{snowflake_id_str}) if $path eq $G;
		saw(@{ $r->{json}{data}{snowflake_ids_str} // [] }) if $path eq $B;
	}
}
is(scalar @wrong, 0, 'each of ' . scalar(@matrix) . ' requests answers its status, naming what is wrong')
  or diag join "\n", @wrong;
$r = post($a1, $G, { namespace => 1 });
ok($r->{status} == 200 && get($a1, '/health')->{status} == 200,
	'and after them all, the instance serves others');
saw($r->{json}{data}{snowflake_id_str});

# --- four instances, two servers, concurrent load: no duplicates
my $load_js = "$dir/load.js";
append_to_file($load_js, <<'EOF');
'use strict';
// usage: load.js OUT PORT... ; 12 clients per instance, 60 requests each,
// singles and batches of 25 in turn; writes "instance datacenter id" lines
const http = require('http');
const fs = require('fs');
const [out, ...ports] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function post(port, path, body) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => { text += c; });
        res.on('end', () => resolve({ status: res.statusCode, text }));
      });
    req.on('error', reject);
    req.end(data);
  });
}
async function client(i, port, lines, stats) {
  for (let k = 0; k < 60; k++) {
    const batch = k % 2 === 1;
    const r = await post(port, batch ? '/api/snowflake/v1/gen/batch/' : '/api/snowflake/v1/gen/',
      batch ? { namespace: 1, count: 25 } : { namespace: 1 });
    stats.requests++;
    if (r.status !== 200) { stats.failed++; stats.last = r.text; continue; }
    const d = JSON.parse(r.text).data;
    for (const id of (batch ? d.snowflake_ids_str : [d.snowflake_id_str]) || [])
      lines.push(`${i} ${d.datacenter_id} ${id}`);
  }
}
(async () => {
  const lines = [];
  const stats = { requests: 0, failed: 0 };
  const all = [];
  ports.forEach((port, i) => { for (let c = 0; c < 12; c++) all.push(client(i, port, lines, stats)); });
  await Promise.all(all);
  fs.writeFileSync(out, lines.join('\n') + '\n');
  console.log(JSON.stringify(stats));
  agent.destroy();
})().catch((e) => { console.error(e.stack || e); process.exit(1); });
EOF

my ($out, $err) = ('', '');
my $ran = eval {
	IPC::Run::run([ 'node', $load_js, "$dir/load.out", map { $_->{port} } $a1, $a2, $b1, $b2 ],
		'>', \$out, '2>', \$err, IPC::Run::timeout(300));
};
ok($ran, 'the load ran: 48 concurrent clients over four instances') or diag "stdout: $out\nstderr: $err";
my $stats = eval { decode_json((split /\n/, $out)[-1]) } // {};
is_deeply([ $stats->{requests}, $stats->{failed} ], [ 2880, 0 ], 'all 2,880 requests answered 200')
  or diag $stats->{last} // '';
my (%per_instance, $wrong_dc, $load_dups, $b_id);
($wrong_dc, $load_dups) = (0, 0);
for (split /\n/, slurp_file("$dir/load.out"))
{
	my ($i, $dc, $lid) = split / /;
	$b_id //= $lid if $i == 3;
	$per_instance{$i}++;
	$wrong_dc++ if $dc != ($i < 2 ? 1 : 2);
	$load_dups++ if $seen{$lid}++;
}
is_deeply([ map { $per_instance{$_} // 0 } 0 .. 3 ], [ (12 * 30 * 26) x 4 ],
	'each instance returned 9,360 IDs');
is($load_dups, 0, 'zero duplicates across the four instances and the IDs before');
is($wrong_dc, 0, 'each ID names the datacenter of its instance\'s server');
$r = post($a1, '/api/snowflake/v1/decode/', { namespace => 1, id => $b_id });
is_deeply([ @{ $r->{json}{data}{fields} // {} }{ 'datacenter', 'worker' }, $r->{json}{data}{datacenter_id} ],
	[ 2, 2, 2 ], 'decoded anywhere, an ID of the second server shows its datacenter 2, worker 2');

my $metrics = get($a1, '/metrics')->{body} // '';
like($metrics, qr/^idgen_service_ids_served_total\{namespace="1"\} [1-9][0-9]*$/m,
	'metrics count the IDs served');
like($metrics, qr/^idgen_service_requests_total\{route="\/api\/snowflake\/v1\/gen\/",status="200"\} [1-9]/m,
	'and the requests by route and status');
like($metrics, qr/^idgen_service_db_seconds_count [1-9]/m, 'and the database round trips');

# --- one instance's answers are in order: each above the one before it,
# whether it comes from the buffer, a batch larger than the buffer, or
# both.  Ordered steps against an instance whose buffer (300) is smaller
# than its largest batch (1000), then clients in parallel against a2, which
# has the docs' configuration (a buffer of 1000, batches up to 1000).
my $o = start_service('o', $nodes{a}, max_batch => 1000,
	buffer => { size => 300, refill_below => 150, chunk => 100 });
ok(wait_until(sub { buffered($o, 1) == 300 }), 'an instance with a buffer of 300 fills it');
my (@steps, $step_fail);
for my $count (1, 400, 1, 299, 1, 1000, 1, 300, 1, 301, 1)
{
	$r = $count == 1 ? post($o, $G, { namespace => 1 }) : post($o, $B, { namespace => 1, count => $count });
	my @got = $count == 1 ? ($r->{json}{data}{snowflake_id_str} // ()) : @{ $r->{json}{data}{snowflake_ids_str} // [] };
	$step_fail = "$count: $r->{status} $r->{body}" unless $r->{status} == 200 && @got == $count;
	push @steps, [ $count, @got ];
	saw(@got);
}
ok(!defined $step_fail, 'singles and batches of 299 to 1000, in turn: all served') or diag $step_fail;
my @out_of_order;
for my $k (1 .. $#steps)
{
	my ($before, $now) = ($steps[ $k - 1 ], $steps[$k]);
	push @out_of_order, "$now->[0] ID(s) after $before->[0]"
	  unless @$before > 1 && @$now > 1 && $now->[1] > $before->[-1];
}
is_deeply(\@out_of_order, [], 'each answer is above the one before it, through the buffer or past its size');
stop_service($o);

my $order_js = "$dir/order.js";
append_to_file($order_js, <<'EOF');
'use strict';
// usage: order.js OUT PORT; 8 clients, each asking in turn for one ID and
// for batches of 1000, 999 and 600, 60 requests; each client checks that
// every answer is above its previous one (its requests are sequential, so
// the instance took them in that order).  Writes the IDs to OUT, and the
// counts as JSON on stdout.
const http = require('http');
const fs = require('fs');
const [out, port] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
function post(path, body) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => { text += c; });
        res.on('end', () => resolve({ status: res.statusCode, text }));
      });
    req.on('error', reject);
    req.end(data);
  });
}
async function client(ids, stats) {
  let last = -1n;
  for (let k = 0; k < 60; k++) {
    const count = [1, 1000, 1, 999, 1, 600][k % 6];
    const r = await post(count === 1 ? '/api/snowflake/v1/gen/' : '/api/snowflake/v1/gen/batch/',
      count === 1 ? { namespace: 1 } : { namespace: 1, count });
    stats.answers++;
    if (r.status !== 200) { stats.failed++; stats.last = r.text; continue; }
    const d = JSON.parse(r.text).data;
    const got = (count === 1 ? [d.snowflake_id_str] : d.snowflake_ids_str || [])
      .filter((id) => typeof id === 'string').map(BigInt);
    if (got.length !== count || got.some((id, i) => id <= (i ? got[i - 1] : last)))
      stats.out_of_order++;
    if (got.length)
      last = got[got.length - 1];
    ids.push(...got);
  }
}
(async () => {
  const ids = [];
  const stats = { answers: 0, failed: 0, out_of_order: 0 };
  await Promise.all([...Array(8).keys()].map(() => client(ids, stats)));
  fs.writeFileSync(out, ids.join('\n') + '\n');
  console.log(JSON.stringify(stats));
  agent.destroy();
})().catch((e) => { console.error(e.stack || e); process.exit(1); });
EOF
($out, $err) = ('', '');
$ran = eval {
	IPC::Run::run([ 'node', $order_js, "$dir/order.out", $a2->{port} ],
		'>', \$out, '2>', \$err, IPC::Run::timeout(300));
};
$stats = eval { decode_json((split /\n/, $out // '')[-1]) } // {};
is_deeply([ $stats->{answers}, $stats->{failed} ], [ 480, 0 ],
	'8 clients in parallel, singles and batches up to the buffer\'s size: all 480 answered')
  or diag "$out\n$err\n" . ($stats->{last} // '');
is($stats->{out_of_order}, 0, 'each client\'s every answer above its previous one, in the docs\' configuration');
my $order_dups = 0;
for (split /\n/, slurp_file("$dir/order.out")) { $order_dups++ if $seen{$_}++; }
is($order_dups, 0, 'and no ID twice');

# --- the fallback: only the prefetched IDs, then 503, never anything else
stop_service($_) for $a2, $b2;
my $c = start_service('c', $nodes{a}, max_batch => 1000,
	buffer => { size => 300, refill_below => 150, chunk => 100 });
ok(wait_until(sub { buffered($c, 1) == 300 }), 'an instance prefetches its buffer (300 IDs)');
$nodes{a}->stop('fast');
is(get($c, '/health')->{status}, 200, 'with PostgreSQL stopped, /health still answers');
$r = get($c, '/ready');
ok($r->{status} == 503 && ($r->{json}{problems}[0] // '') =~ /unreachable/,
	'/ready says 503: the database is unreachable');

my ($served, $after, $other, @fallback) = (0, 0, 0);
for my $k (1 .. 320)
{
	$r = post($c, '/api/snowflake/v1/gen/', { namespace => 1 });
	if ($r->{status} == 200 && !$after && ($r->{json}{data}{snowflake_id_str} // '') =~ /^[1-9][0-9]*$/)
	{
		$served++;
		push @fallback, $r->{json}{data}{snowflake_id_str};
	}
	elsif ($r->{status} == 503
		&& ($r->{json}{message} // '') =~ /^no IDs available for namespace 1 .*unreachable.*no ID is ever made up/)
	{
		$after++;
	}
	else
	{
		$other++;
		diag "unexpected answer $r->{status}: $r->{body}";
	}
	last if $after >= 5;
}
is($served, 300, 'the database down: the instance served its 300 prefetched IDs');
is($after, 5, 'and then 503 saying why, every time');
is($other, 0, 'and never anything else');
my $fallback_dups = 0;
for (@fallback) { $fallback_dups++ if $seen{$_}++; }
is($fallback_dups, 0, 'the prefetched IDs are unique against every ID issued before');

# recovery
$nodes{a}->start;
ok(wait_until(sub { get($c, '/ready')->{status} == 200 }), 'PostgreSQL back: /ready is 200 again');
my @recovered;
for (1 .. 20)
{
	$r = post($c, '/api/snowflake/v1/gen/', { namespace => 1 });
	push @recovered, $r->{json}{data}{snowflake_id_str} if $r->{status} == 200;
}
is(scalar @recovered, 20, 'and the instance serves IDs again');
my $recovered_dups = 0;
for (@recovered) { $recovered_dups++ if $seen{$_}++; }
is($recovered_dups, 0, 'unique against every ID before the outage');

# Stopped mid-load: 8 clients keep asking while PostgreSQL stops and comes
# back.  Every answer is an ID or a 503 saying why, the clients see the 503s
# and then IDs again, and no ID repeats.
my $outage_js = "$dir/outage.js";
append_to_file($outage_js, <<'EOF');
'use strict';
// usage: outage.js OUT PORT BACKFILE; 8 clients ask for single IDs until
// BACKFILE exists, then until 20 more IDs each; writes "client status
// id-or-message", and "client back" when the client saw BACKFILE
const http = require('http');
const fs = require('fs');
const [out, port, backFile] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function post(body) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port, path: '/api/snowflake/v1/gen/', method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => { text += c; });
        res.on('end', () => resolve({ status: res.statusCode, text }));
      });
    req.on('error', reject);
    req.end(data);
  });
}
async function client(i, lines) {
  let more = -1;
  const deadline = Date.now() + 150000;    // a safety net, not an assertion
  while (more !== 0 && Date.now() < deadline) {
    const r = await post({ namespace: 1 });
    let body = null;
    try { body = JSON.parse(r.text); } catch (e) { /* reported below */ }
    if (r.status === 200 && body && body.data)
      lines.push(`${i} 200 ${body.data.snowflake_id_str}`);
    else
      lines.push(`${i} ${r.status} ${body ? body.message : r.text}`.replace(/\n/g, ' '));
    if (r.status !== 200)
      await sleep(20);
    if (more > 0 && r.status === 200)
      more--;
    else if (more < 0 && fs.existsSync(backFile)) {
      more = 20;
      lines.push(`${i} back`);
    }
  }
}
(async () => {
  const lines = [];
  await Promise.all([...Array(8).keys()].map((i) => client(i, lines)));
  fs.writeFileSync(out, lines.join('\n') + '\n');
  agent.destroy();
})().catch((e) => { console.error(e.stack || e); process.exit(1); });
EOF

sub requests_with_status
{
	my ($svc, $status) = @_;
	my $m = get($svc, '/metrics')->{body} // '';
	return $m =~ /^idgen_service_requests_total\{route="\/api\/snowflake\/v1\/gen\/",status="$status"\} (\d+)$/m
	  ? $1 : 0;
}
my ($ok_before, $busy_before) = (requests_with_status($c, 200), requests_with_status($c, 503));
my $outage = { log => "$PostgreSQL::Test::Utils::log_path/080_service_outage.log" };
{
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		open STDOUT, '>>', $outage->{log} or die "open $outage->{log}: $!";
		open STDERR, '>&', \*STDOUT or die "dup: $!";
		exec 'node', $outage_js, "$dir/outage.out", $c->{port}, "$dir/back" or die "exec node: $!";
	}
	$outage->{pid} = $pid;
	$running{$pid} = 'outage.js';
}
ok(wait_until(sub { requests_with_status($c, 200) >= $ok_before + 500 }), 'under load');
$nodes{a}->stop('fast');
ok(wait_until(sub { requests_with_status($c, 503) >= $busy_before + 40 }),
	'PostgreSQL stopped mid-load: the clients get 503s');
$nodes{a}->start;
ok(wait_until(sub { get($c, '/ready')->{status} == 200 }), 'PostgreSQL back: ready again');
append_to_file("$dir/back", "back\n");
my $outage_status;
ok(wait_until(sub {
	my $p = waitpid($outage->{pid}, WNOHANG);
	$outage_status = $? if $p > 0;
	return $p != 0; }), 'the clients finished');
is($outage_status, 0, 'without an error') or diag slurp_file($outage->{log});
delete $running{ $outage->{pid} };
my (%by_status, $outage_dups, $bad_503, %tail);
($outage_dups, $bad_503) = (0, 0);
for (split /\n/, slurp_file("$dir/outage.out"))
{
	my ($client, $status, $rest) = split / /, $_, 3;
	if ($status eq 'back')
	{
		$tail{$client} = 0;
		next;
	}
	$by_status{$status}++;
	$tail{$client}++ if defined $tail{$client} && $status == 200;
	if ($status == 200)
	{
		$outage_dups++ if $rest !~ /^[1-9][0-9]*$/ || $seen{$rest}++;
	}
	elsif ($status == 503)
	{
		$bad_503++ unless $rest =~ /^no IDs available for namespace 1 .*no ID is ever made up/;
	}
}
note "answers during the mid-load outage: " . join(', ', map { "$by_status{$_} x $_" } sort keys %by_status);
is_deeply([ sort keys %by_status ], [ 200, 503 ], 'every answer was an ID or a 503');
is($bad_503, 0, 'each 503 saying why');
is($outage_dups, 0, 'no ID repeated, before, during or after the outage');
is(scalar(grep { $_ == 20 } values %tail), 8, 'each client got IDs again once the server was back');

# a restart drops the buffer and never reuses it
my $left = buffered($c, 1);
stop_service($c);
is($c->{status}, 0, 'SIGTERM: the instance shuts down cleanly');
like(slurp_file($c->{log}), qr/"msg":"shutting down: finishing requests; prefetched IDs are dropped, never reused"/,
	'and logs it (structured)');
launch($c);
ok(wait_until(sub { get($c, '/ready')->{status} == 200 }), 'the restarted instance is ready');
$r = post($c, '/api/snowflake/v1/gen/batch/', { namespace => 1, count => 400 });
my @restarted = @{ $r->{json}{data}{snowflake_ids_str} // [] };
is(scalar @restarted, 400, 'and serves a batch larger than its buffer');
my $restart_dups = 0;
for (@restarted) { $restart_dups++ if $seen{$_}++; }
is($restart_dups, 0, "none of them an ID served before ($left prefetched IDs were dropped)");

# a namespace whose generator does not exist: 503 saying so; never created
# (and the environment over the file: the port); and one dropped
$nodes{b}->safe_psql('postgres', q{
	SELECT idgen_create_generator('gone', layout => 'time:42 datacenter:3 worker:6 seq:12',
		epoch => '2024-01-01 00:00:00+00', unit => '1 ms');
	SELECT idgen_drop_generator('gone', force => true);
	SELECT idgen_create_generator('ungranted', layout => 'time:42 datacenter:3 worker:6 seq:12',
		epoch => '2024-02-01 00:00:00+00', unit => '1 ms');
});
my $d = start_service('d', $nodes{b}, namespaces => { 9 => 'nosuch', 10 => 'gone', 11 => 'ungranted' },
	env => { IDGEN_SERVICE_PORT => PostgreSQL::Test::Cluster::get_free_port() });
is(get($d, '/health')->{status}, 200, 'IDGEN_SERVICE_PORT overrides the port of the file');
$r = get($d, '/ready');
ok($r->{status} == 503 && (join "\n", @{ $r->{json}{problems} // [] }) =~ /^namespace 9: generator nosuch does not exist/m,
	'a configured generator that does not exist: /ready 503 naming it');
like(join("\n", @{ $r->{json}{problems} // [] }), qr/^namespace 10: generator gone is dropped/m,
	'and one that was dropped');
ok(wait_until(sub {
	(join "\n", @{ get($d, '/ready')->{json}{problems} // [] })
	  =~ /^namespace 11: the database refuses IDs of generator ungranted: /m }),
	'and one not granted to the service\'s role, once the database refused it IDs')
  or diag get($d, '/ready')->{body};
$r = post($d, '/api/snowflake/v1/gen/', { namespace => 9 });
ok($r->{status} == 503 && ($r->{json}{message} // '') =~ /nosuch.*does not exist/,
	'and a request for it 503s with the database\'s reason');
is($nodes{b}->safe_psql('postgres', "SELECT count(*) FROM idgen_generator_status WHERE name = 'nosuch'"),
	'0', 'the service did not create it');

is($dups, 0, 'no ID was returned twice in the whole test');

stop_service($_) for $a1, $b1, $c, $d;
is(scalar keys %running, 0, 'every service instance stopped');
$_->stop for values %nodes;
done_testing();
