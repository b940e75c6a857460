# Helpers shared by idgen's TAP tests.
package IdgenTest;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use PostgreSQL::Test::Cluster;

our @EXPORT = qw(error_of wait_for_keeper fake_clock concurrent_pgbench
  keeper_pid restart_keeper set_and_reload node_cannot_run require_node);

# $seconds scaled as PostgreSQL's own tests scale their waits: by
# PG_TEST_TIMEOUT_DEFAULT over its default of 180 s, so that a slow
# machine given a longer timeout gets longer bounds here too.
sub scaled
{
	my ($seconds) = @_;
	return $seconds * $PostgreSQL::Test::Utils::timeout_default / 180;
}
push @EXPORT, 'scaled';

# Run SQL that must fail in database postgres (or $db); return
# "SQLSTATE: message" of its error, or "no error".
sub error_of
{
	my ($node, $sql, $db) = @_;
	my ($ret, $out, $err) = $node->psql($db // 'postgres',
		"\\set VERBOSITY verbose\n$sql", on_error_stop => 1, timeout => scaled(60));
	return "no error" if $ret == 0;
	return $err =~ /ERROR:\s+(\w{5}: [^\n]*)/ ? $1 : $err;
}

# psql's whole report (verbose: "ERROR:  SQLSTATE: message", DETAIL, HINT,
# ...) of the error that SQL raises in database postgres (or $db), for
# checks of more than its first line; "no error" if it raised none.
sub error_report_of
{
	my ($node, $sql, $db) = @_;
	my ($ret, $out, $err) = $node->psql($db // 'postgres',
		"\\set VERBOSITY verbose\n$sql", on_error_stop => 1, timeout => scaled(60));
	return $ret == 0 ? "no error" : $err;
}
push @EXPORT, 'error_report_of';

# The DETAIL of the error that SQL raises in database postgres (or $db),
# or "no detail: " and psql's stderr.
sub detail_of
{
	my ($node, $sql, $db) = @_;
	my ($ret, $out, $err) = $node->psql($db // 'postgres', $sql,
		on_error_stop => 1, timeout => scaled(60));
	return $err =~ /DETAIL:\s+([^\n]*)/ ? $1 : "no detail: $err";
}
push @EXPORT, 'detail_of';

# Whether $node's keeper reaches keeper_state 'ready' (asked in database
# postgres, or $db) within the suite's timeout.
sub keeper_ready
{
	my ($node, $db) = @_;
	return $node->poll_query_until($db // 'postgres',
		"SELECT keeper_state = 'ready' FROM idgen_status()");
}
push @EXPORT, 'keeper_ready';

# The keeper creates the extension in idgen.database (postgres) at start
# and then makes the first reservation; wait for both, as a user would
# before generating.
sub wait_for_keeper
{
	my ($node) = @_;
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_extension WHERE extname = 'idgen'")
	  or die "the idgen keeper did not create the extension";
	keeper_ready($node)
	  or die "the idgen keeper did not become ready";
}

# A new server named $name, initialised but not started (tests start it
# themselves, often after more configuration or under fake_clock), whose
# postgresql.conf gets shared_preload_libraries = 'idgen' (or
# $opt{preload}) and then the lines of $opt{conf}.  Options of
# PostgreSQL::Test::Cluster's new (install_path) and init
# (allows_streaming, has_archiving, extra) are passed on; any other option
# dies, so that a misspelt one cannot be ignored.
sub idgen_node
{
	my ($name, %opt) = @_;
	my %new = map { exists $opt{$_} ? ($_ => delete $opt{$_}) : () } qw(install_path);
	my %init = map { exists $opt{$_} ? ($_ => delete $opt{$_}) : () }
	  qw(allows_streaming has_archiving extra);
	my $preload = delete $opt{preload} // 'idgen';
	my $conf = delete $opt{conf} // '';
	die 'idgen_node: unknown options ' . join(', ', sort keys %opt) if %opt;
	my $node = PostgreSQL::Test::Cluster->new($name, %new);
	$node->init(%init);
	$node->append_conf('postgresql.conf', "shared_preload_libraries = '$preload'\n$conf");
	return $node;
}
push @EXPORT, 'idgen_node';

# Debian's libfaketime, in this machine's multiarch directory
my ($libfaketime) = (glob('/usr/lib/*/faketime/libfaketime.so.1'),
	'/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1');

# Die unless $node's idgen is a test build, which has the setting
# idgen.test_clock ("make WITH_TEST_HOOKS=yes"; test-it.sh builds so).
sub need_test_clock
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{SELECT current_setting('idgen.test_clock', true) IS NOT NULL}) eq 't'
	  or die 'this test freezes the clock with idgen.test_clock, which only a test build has: '
	  . 'build and install idgen with "make WITH_TEST_HOOKS=yes" (scripts/test-it.sh does)';
}
push @EXPORT, 'need_test_clock';

# Give $node its own libfaketime wall clock, read from a file that starts
# as $spec ("+0", "-10s", or an absolute time, which freezes the clock).
# CLOCK_MONOTONIC stays real, so waits still end.  Returns two closures:
# set($spec) changes the clock of the running server, and start(@args)
# starts (or restarts) the server under the fake clock: pg_ctl hands its
# environment to the postmaster, and it to every backend.
#
# On PostgreSQL 15 the background workers, idgen's keeper among them, read
# the real clock all the same.  libfaketime marks the calls it makes to
# the real functions, select() among them, with a per-thread flag that
# tells its clock wrappers not to fake; the 15 postmaster unblocks
# signals only around its wait in select(), and starts its background
# workers from the SIGCHLD handler that runs there once the startup
# process is done; the child inherits the flag set and, never returning
# from that select(), keeps it.  (A keeper that the postmaster restarts later is forked from
# its main loop and sees the fake clock.  From 16 on the postmaster does
# that work in its main loop.)  Where the keeper's clock matters, as for
# the floor after lost state, a test freezes idgen's clock with the
# test-only setting idgen.test_clock instead, which every process reads.
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
# run exits with status 0, that none of its clients aborted, and that it
# reports no failed transaction.  All three are needed: pgbench counts
# only serialization and deadlock failures as failed transactions, so a
# client aborted by any other error (23505 on a duplicate ID, 55P03, 55000,
# 53400) still leaves "number of failed transactions: 0"; it shows only in
# "client N ... aborted" and in exit status 2.
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
		my $status = $h->full_result(0);
		is($status & 127 ? 'signal ' . ($status & 127) : 'exit ' . ($status >> 8),
			'exit 0', $node->name . ': pgbench exited with status 0')
		  or diag($$out);
		unlike($$out, qr/\bclient \d+ [^\n]*\baborted\b/,
			$node->name . ': no pgbench client aborted');
		like($$out, qr/number of failed transactions: 0 /,
			$node->name . ': pgbench ran without failures');
	}
}

# Call $check every 100 ms until it returns true, for at most
# $PostgreSQL::Test::Utils::timeout_default seconds; return whether it did.
# For conditions that are not a query on one server (the log, a process).
sub wait_until
{
	my ($check) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		return 1 if $check->();
		select(undef, undef, undef, 0.1);
	}
	return $check->() ? 1 : 0;
}
push @EXPORT, 'wait_until';

# ---- helpers added for the platform tests (t/02x) ----

push @EXPORT, qw(wait_for_keeper_in utc_clock_spec extension_members);

# wait_for_keeper for a server whose idgen.database is $dbname.
sub wait_for_keeper_in
{
	my ($node, $dbname) = @_;
	keeper_ready($node, $dbname)
	  or die "the idgen keeper did not become ready in database $dbname";
}

# A libfaketime spec that freezes the clock at Unix time $secs (fractions
# allowed), in the form fake_clock() passes on: "YYYY-MM-DD HH:MM:SS[.f]".
sub utc_clock_spec
{
	my ($secs) = @_;
	# whole milliseconds first: 0.9996 s must not print as ".000"
	$secs = sprintf('%.3f', $secs);
	my $whole = int($secs);
	my @t = gmtime($whole);
	my $spec = sprintf('%04d-%02d-%02d %02d:%02d:%02d',
		$t[5] + 1900, $t[4] + 1, $t[3], $t[2], $t[1], $t[0]);
	my $frac = $secs - $whole;
	$spec .= substr(sprintf('%.3f', $frac), 1) if $frac > 0;
	return $spec;
}

# Everything that defines the idgen extension's member objects in database
# $dbname, one line per object, sorted: each object's identity
# (pg_describe_object over pg_depend deptype 'e') and its definition:
# functions with arguments, result, kind, volatility, strictness, parallel
# marking, security, cost, settings, language, body, ACL and comment;
# relations with kind, columns and defaults, indexes, constraints,
# triggers, view text, sequence parameters, ACL and comment; types; and
# the extension's configuration tables.  Two databases whose extension
# came about differently (created at one version and updated, or created
# at the current one) must give the same text.
sub extension_members
{
	my ($node, $dbname) = @_;
	return $node->safe_psql($dbname, q{
SELECT string_agg(line, E'\n' ORDER BY line) FROM (
SELECT pg_describe_object(d.classid, d.objid, d.objsubid)
       || coalesce(' | ' || (
           SELECT format('args=(%s) result=%s kind=%s volatile=%s strict=%s parallel=%s secdef=%s leakproof=%s cost=%s rows=%s config=%s language=%s src=%s bin=%s acl=%s comment=%s',
                         pg_get_function_arguments(p.oid), pg_get_function_result(p.oid),
                         p.prokind, p.provolatile, p.proisstrict, p.proparallel, p.prosecdef,
                         p.proleakproof, p.procost, p.prorows, p.proconfig, l.lanname,
                         p.prosrc, p.probin, p.proacl, obj_description(p.oid, 'pg_proc'))
             FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
            WHERE d.classid = 'pg_proc'::regclass AND p.oid = d.objid), '')
       || coalesce(' | ' || (
           SELECT format('relkind=%s persistence=%s acl=%s comment=%s columns=(%s) indexes=(%s) constraints=(%s) triggers=(%s) view=%s sequence=%s',
                         c.relkind, c.relpersistence, c.relacl, obj_description(c.oid, 'pg_class'),
                         (SELECT string_agg(format('%s %s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                                                   CASE WHEN a.attnotnull THEN ' not null' ELSE '' END,
                                                   coalesce(' default ' || pg_get_expr(ad.adbin, ad.adrelid), '')),
                                            ', ' ORDER BY a.attnum)
                            FROM pg_attribute a
                            LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
                           WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
                         (SELECT string_agg(pg_get_indexdef(i.indexrelid), '; ' ORDER BY 1)
                            FROM pg_index i WHERE i.indrelid = c.oid),
                         (SELECT string_agg(co.conname || ' ' || pg_get_constraintdef(co.oid), '; ' ORDER BY 1)
                            FROM pg_constraint co WHERE co.conrelid = c.oid),
                         (SELECT string_agg(pg_get_triggerdef(tg.oid), '; ' ORDER BY 1)
                            FROM pg_trigger tg WHERE tg.tgrelid = c.oid AND NOT tg.tgisinternal),
                         CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid) END,
                         (SELECT format('%s start %s increment %s min %s max %s cache %s cycle %s',
                                        format_type(s.seqtypid, NULL), s.seqstart, s.seqincrement,
                                        s.seqmin, s.seqmax, s.seqcache, s.seqcycle)
                            FROM pg_sequence s WHERE s.seqrelid = c.oid))
             FROM pg_class c
            WHERE d.classid = 'pg_class'::regclass AND c.oid = d.objid), '')
       || coalesce(' | ' || (
           SELECT format('typtype=%s %s', t.typtype,
                         CASE t.typtype
                           WHEN 'e' THEN (SELECT string_agg(enumlabel, ',' ORDER BY enumsortorder)
                                            FROM pg_enum WHERE enumtypid = t.oid)
                           WHEN 'c' THEN (SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
                                            FROM pg_attribute WHERE attrelid = t.typrelid AND attnum > 0)
                           WHEN 'd' THEN format_type(t.typbasetype, t.typtypmod)
                         END)
             FROM pg_type t
            WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid), '') AS line
  FROM pg_depend d
  JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
 WHERE e.extname = 'idgen' AND d.deptype = 'e'
UNION ALL
SELECT format('extension: relocatable=%s schema=%s config=%s conditions=%s',
              extrelocatable, extnamespace::regnamespace, extconfig::regclass[], extcondition)
  FROM pg_extension WHERE extname = 'idgen') x});
}

# ---- helpers added for the Citus test (t/040) ----

push @EXPORT, qw(citus_node citus_fleet_duplicates);

# A new, started server for a Citus cluster: Citus and idgen preloaded
# (Citus first: it refuses to start otherwise), node id $node_id, and
# $extra configuration lines.  Citus' rebalancer connects to the node
# itself by citus.local_hostname, "localhost" by default, over TCP; the
# test servers listen on a Unix socket only, so it gets the socket
# directory instead.  $preload overrides shared_preload_libraries.
sub citus_node
{
	my ($name, $node_id, %opt) = @_;
	my $preload = $opt{preload} // 'citus,idgen';
	my $node = idgen_node($name, preload => $preload);
	$node->append_conf('postgresql.conf', qq{
idgen.node_id = $node_id
max_connections = 100
max_worker_processes = 16
citus.local_hostname = '@{[ $node->host ]}'
citus.shard_count = 8
log_statement = ddl
} . ($opt{extra} // ''));
	$node->start;
	wait_for_keeper($node) if $preload =~ /idgen/;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	return $node;
}

# The fleet check of the README, run on a Citus coordinator: the node ids
# of the coordinator and of every worker, and those that occur more than
# once, as "id:count" in ascending order ("" when all differ).
sub citus_fleet_duplicates
{
	my ($coordinator) = @_;
	return $coordinator->safe_psql('postgres', q{
		SELECT coalesce(string_agg(format('%s:%s', node_id, n), ' ' ORDER BY node_id), '')
		  FROM (SELECT node_id, count(*) AS n
		          FROM (SELECT node_id FROM idgen_status()
		                UNION ALL
		                SELECT result::int FROM run_command_on_workers(
		                         $$SELECT node_id FROM idgen_status()$$)
		                 WHERE success) s
		         GROUP BY node_id HAVING count(*) > 1) d});
}


# A fuzzed server's log: no backend killed by a signal, no PANIC or failed
# assertion (one test); the first such lines and the statements that
# crashed are shown when there are.  Returns them.
push @EXPORT, qw(check_crashes stop_after_fuzz);

sub check_crashes
{
	my ($node) = @_;
	my $log = PostgreSQL::Test::Utils::slurp_file($node->logfile);
	my @crashes = grep {
		/terminated by signal|was terminated by exception|PANIC:|TRAP:|server process \(PID \d+\) was terminated|terminating any other active server processes|all server processes terminated/
	} split /\n/, $log;
	Test::More::is(scalar(@crashes), 0, 'the server log shows no crash, PANIC or failed assertion')
	  or Test::More::diag(join("\n", grep { defined } @crashes[ 0 .. 9 ],
		grep { index($_, 'Failed process was running:') >= 0 } split /\n/, $log));
	return @crashes;
}

# Stop a fuzzed server (one test): after a crash it has shut down (the
# tests run with restart_after_crash off), so say so and stop at once;
# otherwise it must still answer, and stops cleanly.
sub stop_after_fuzz
{
	my ($node, $crashed) = @_;
	if ($crashed)
	{
		Test::More::fail('the server still answers');
		$node->stop('immediate', fail_ok => 1);
	}
	else
	{
		Test::More::is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server still answers');
		$node->stop;
	}
}


# The PID of $node's keeper (in database $db, postgres by default).
sub keeper_pid
{
	my ($node, $db) = @_;
	return $node->safe_psql($db // 'postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'idgen keeper'");
}

# Terminate $node's keeper and wait until the postmaster has started its
# successor; returns the successor's PID.
sub restart_keeper
{
	my ($node, $db) = @_;
	$db //= 'postgres';
	my $pid = keeper_pid($node, $db);
	$node->safe_psql($db, "SELECT pg_terminate_backend($pid)");
	$node->poll_query_until($db,
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'idgen keeper' AND pid <> $pid")
	  or die $node->name . ': the keeper was not restarted';
	return keeper_pid($node, $db);
}

# Set each setting (name => value, the value as SHOW prints it) in
# postgresql.conf, reload, and wait until new sessions see every one.
sub set_and_reload
{
	my ($node, %settings) = @_;
	$node->append_conf('postgresql.conf',
		join('', map { "$_ = '$settings{$_}'\n" } sort keys %settings));
	$node->reload;
	for my $name (sort keys %settings)
	{
		$node->poll_query_until('postgres', "SHOW $name", $settings{$name})
		  or die $node->name . ": $name was not set to '$settings{$name}'";
	}
}


# For the tests that run Node: skip with $why, or fail under
# IDGEN_NODE_REQUIRED (the test command sets it), where Node must run.
sub node_cannot_run
{
	my ($why) = @_;
	if ($ENV{IDGEN_NODE_REQUIRED})
	{
		fail($why);
		done_testing();
		exit;
	}
	plan skip_all => $why;
}

# node and npm must be on the PATH.
sub require_node
{
	for my $tool ('node', 'npm')
	{
		node_cannot_run("$tool is not installed (Debian packages nodejs, npm)")
		  unless grep { -x "$_/$tool" } split /:/, $ENV{PATH};
	}
}

# A streaming standby named $name of $primary, from a new base backup, with
# $opt{conf} appended to its postgresql.conf; started unless $opt{start} is
# 0 (to start it another way, under fake_clock for one).
sub standby_from_backup
{
	my ($primary, $name, %opt) = @_;
	$primary->backup("$name.backup");
	my $standby = PostgreSQL::Test::Cluster->new($name);
	$standby->init_from_backup($primary, "$name.backup", has_streaming => 1);
	$standby->append_conf('postgresql.conf', $opt{conf}) if defined $opt{conf};
	$standby->start if $opt{start} // 1;
	return $standby;
}
push @EXPORT, 'standby_from_backup';

# Start psql running $sql in database $db of $node, in the background.
# Returns a hash: h, the IPC::Run handle (finish it), and out and err,
# psql's output so far.  Options: user (connect as that role),
# application_name, on_error_stop (stop at the first error of a script),
# verbose (errors with their SQLSTATE), timeout (seconds before IPC::Run
# gives up on it; 120).
sub psql_background
{
	my ($node, $db, $sql, %opt) = @_;
	my %s = (out => '', err => '');
	$s{h} = IPC::Run::start(
		[ 'psql', '-XAtq', psql_options(%opt), '-d', psql_connstr($node, $db, %opt), '-c', $sql ],
		'>', \$s{out}, '2>', \$s{err}, IPC::Run::timeout($opt{timeout} // 120));
	return \%s;
}

# psql's options for psql_background's and psql_session's %opt.
sub psql_options
{
	my (%opt) = @_;
	return (($opt{user} ? ('-U', $opt{user}) : ()),
		($opt{on_error_stop} ? ('-v', 'ON_ERROR_STOP=1') : ()),
		($opt{verbose} ? ('-v', 'VERBOSITY=verbose') : ()));
}

sub psql_connstr
{
	my ($node, $db, %opt) = @_;
	return $node->connstr($db)
	  . ($opt{application_name} ? " application_name=$opt{application_name}" : '');
}

# A psql session in database $db of $node, fed one statement at a time
# with session_run(), for a transaction held open across other sessions'
# work, or many statements whose SQLSTATEs matter.  Errors are verbose and
# do not end the session.  Options: user, application_name (as for
# psql_background).  End it with session_end().  The hash returned has
# db, user and label ("user@db") besides psql's handle and buffers.
sub psql_session
{
	my ($node, $db, %opt) = @_;
	my $s = { in => '', out => '', err => '', n => 0, db => $db,
		user => $opt{user} // 'postgres', label => ($opt{user} // 'postgres') . "\@$db",
		timer => IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default) };
	$s->{h} = IPC::Run::start(
		[ 'psql', '-XAtq', psql_options(%opt, verbose => 1), '-v', 'ON_ERROR_STOP=0',
		  '-d', psql_connstr($node, $db, %opt) ],
		'<', \$s->{in}, '>', \$s->{out}, '2>', \$s->{err}, $s->{timer});
	my $r = session_run($s, '\\pset null \'<NULL>\'');
	die "cannot start a psql session as $s->{label}: " . ($r->{lost} // $r->{stderr})
	  if $r->{lost} || $r->{stderr} ne '';
	return $s;
}

# Run $sql (one statement or several; a trailing semicolon or none) in
# session $s and wait for it, for at most the suite's timeout.  Returns a
# hash: stdout and stderr; if any statement failed, even one before a
# statement that succeeded, sqlstate and message of the first error;
# lost, if psql ended or stopped answering, or the server closed the
# connection.  The statement is followed by \r, so that one left open (a
# parenthesis never closed) cannot swallow the next ones: such a
# statement never ran, and session_run dies.
sub session_run
{
	my ($s, $sql) = @_;
	my $tag = '@@session ' . ++$s->{n} . '@@';
	$s->{out} = $s->{err} = '';
	$s->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
	# psql runs each statement of $sql on its own, and the ";" added
	# after it may run an empty one: SQLSTATE is only the last one's, so
	# LAST_ERROR_SQLSTATE, reset first, tells whether any failed.
	$s->{in} .= "\\set SQLSTATE none\n\\set LAST_ERROR_SQLSTATE 00000\n$sql\n;\n\\r\n"
	  . "\\echo '$tag' :SQLSTATE :LAST_ERROR_SQLSTATE\n\\warn '$tag'\n";
	my $done = eval {
		$s->{h}->pump
		  until $s->{out} =~ /^\Q$tag\E \S+ \S+\n/m && $s->{err} =~ /^\Q$tag\E\n/m;
		1;
	};
	return { lost => ($@ || 'psql ended') . "\nstderr: $s->{err}" } unless $done;
	my ($out, $err) = ($s->{out}, $s->{err});
	$out =~ s/^\Q$tag\E (\S+) (\S+)\n//m;
	my ($state, $last_error) = ($1, $2);
	if ($last_error ne '00000')
	{
		# the first error's, as the message (errors are verbose)
		$state = $err =~ /^(?:ERROR|FATAL|PANIC):\s+([0-9A-Z]{5}):/m ? $1 : $last_error;
	}
	$err =~ s/^\Q$tag\E\n//m;
	my %r = (stdout => $out, stderr => $err);
	$r{lost} = $err if $err =~ /server closed the connection|connection to server was lost|no connection to the server/;
	die "the statement did not run (left open?), in [$s->{label}]:\n" . substr($sql, 0, 2000)
	  if $state eq 'none' && !$r{lost};
	if ($state ne '00000')
	{
		$r{sqlstate} = $state;
		$r{message} = $err =~ /(?:ERROR|FATAL|PANIC):\s+[0-9A-Z]{5}:\s*([^\n]*)/ ? $1 : $err;
	}
	return \%r;
}

# session_run() for statements that must succeed: dies with the error
# otherwise, and returns the output without its last newline.
sub session_safe
{
	my ($s, $sql) = @_;
	my $r = session_run($s, $sql);
	die "in [$s->{label}]: " . ($r->{lost} // $r->{stderr}) . "\nwhile running: $sql"
	  if $r->{lost} || $r->{sqlstate} || $r->{stderr} =~ /^(?:ERROR|FATAL|PANIC):/m;
	chomp $r->{stdout};
	return $r->{stdout};
}

# End session $s: quit psql and wait for it.  Returns whether psql exited
# with status 0.
sub session_end
{
	my ($s) = @_;
	$s->{in} .= "\\q\n";
	my $ok = eval { $s->{h}->finish };
	$s->{h}->kill_kill unless defined $ok;
	return $ok ? 1 : 0;
}
push @EXPORT, qw(psql_session session_run session_safe session_end);

# ALTER SYSTEM each setting (name => value, or undef for RESET) in
# database postgres (or $opt{db}), reload, and wait until new sessions
# have loaded the configuration files again: until their
# pg_conf_load_time() is later than before.  Unlike set_and_reload, the
# values need not be given as SHOW prints them.
sub alter_system_and_reload
{
	my ($node, $settings, %opt) = @_;
	my $db = $opt{db} // 'postgres';
	my $before = $node->safe_psql($db, 'SELECT pg_conf_load_time()');
	$node->safe_psql($db, join('', map {
			defined $settings->{$_}
			  ? "ALTER SYSTEM SET $_ = '$settings->{$_}';\n"
			  : "ALTER SYSTEM RESET $_;\n"
		} sort keys %$settings) . 'SELECT pg_reload_conf()');
	$node->poll_query_until($db, "SELECT pg_conf_load_time() > '$before'")
	  or die $node->name . ': the configuration was not reloaded';
}
push @EXPORT, qw(psql_background alter_system_and_reload);

# A session in database postgres of $node that sleeps in "SELECT
# pg_sleep(60)", to be killed; one test says it runs.  Returns
# psql_background()'s hash and pid; err is the session's stderr once
# kill_backend() has ended it.
sub sleeping_backend
{
	my ($node) = @_;
	my $b = psql_background($node, 'postgres', 'SELECT pg_sleep(60)');
	my $running = "FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)' AND pid <> pg_backend_pid()";
	ok($node->poll_query_until('postgres', "SELECT count(*) = 1 $running"),
		'a backend to kill is running');
	$b->{pid} = $node->safe_psql('postgres', "SELECT pid $running");
	return $b;
}

# SIGKILL the backend of sleeping_backend() and wait for its session to
# end; the postmaster then resets shared memory in a crash restart.
sub kill_backend
{
	my ($b) = @_;
	kill 'KILL', $b->{pid};
	eval { $b->{h}->finish };
}

# After a crash restart, whether $sql (database postgres) returns true
# within 180 s.  Connections are retried: the restart drops those being
# opened.  A connection the postmaster accepts before it has seen the
# crash still sees the old shared memory, so $sql should tell the new
# shared memory from the old (a count of IDs issued that is 0, say).
sub wait_after_crash
{
	my ($node, $sql) = @_;
	return wait_until(sub { (eval { $node->safe_psql('postgres', $sql) } // '') eq 't' });
}
push @EXPORT, qw(sleeping_backend kill_backend wait_after_crash);

# The kinds of generator whose IDs do not continue above: a round with an
# ID not above every ID of an earlier round of its kind, a repeated ID, or
# no ID in round $round (the latest); "" when every kind continues above.
# $rows is a query in database postgres with the columns round (integer),
# kind (text), id (bigint) and u (uuid), one of id and u set.  UUIDs
# compare as their text (fixed-width hex, byte order), since min(uuid)
# exists only from PostgreSQL 18.
sub rounds_not_above
{
	my ($node, $rows, $round) = @_;
	return $node->safe_psql('postgres', qq{
		WITH r AS ($rows),
		k AS (SELECT kind, min(id) AS id_min, min(u::text COLLATE "C") AS u_min,
		             max(max(id)) OVER w AS id_before,
		             max(max(u::text COLLATE "C")) OVER w AS u_before
		        FROM r GROUP BY kind, round
		      WINDOW w AS (PARTITION BY kind ORDER BY round
		                   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING))
		SELECT coalesce(string_agg(DISTINCT kind, ' ' ORDER BY kind), '')
		  FROM (SELECT kind FROM k
		         WHERE coalesce(id_min <= id_before, u_min <= u_before, false)
		        UNION ALL
		        SELECT kind FROM r GROUP BY kind
		        HAVING count(DISTINCT coalesce(id::text, u::text)) <> count(*)
		            OR count(*) FILTER (WHERE round = $round) = 0) bad});
}
push @EXPORT, 'rounds_not_above';

1;
