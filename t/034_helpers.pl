# The TAP helpers of t/IdgenTest.pm check what other tests rely on: each
# check here fails with a helper that misses an error or does not wait.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $node = PostgreSQL::Test::Cluster->new('helpers');
$node->init;
$node->start;

# alter_system_and_reload waits for new sessions to have reloaded, and
# dies when no reload comes.
alter_system_and_reload($node, { work_mem => '7MB' });
is($node->safe_psql('postgres', 'SHOW work_mem'), '7MB',
	'alter_system_and_reload: a new session sees the setting');
alter_system_and_reload($node, { work_mem => undef });
is($node->safe_psql('postgres', 'SHOW work_mem'), '4MB', 'and its reset');
{
	no warnings 'redefine';
	my $safe_psql = \&PostgreSQL::Test::Cluster::safe_psql;
	local *PostgreSQL::Test::Cluster::safe_psql = sub {
		my ($self, $db, $sql, @rest) = @_;
		$sql =~ s/SELECT pg_reload_conf\(\)/SELECT 1/;
		return $safe_psql->($self, $db, $sql, @rest);
	};
	local $PostgreSQL::Test::Utils::timeout_default = 3;
	ok(!eval { alter_system_and_reload($node, { work_mem => '9MB' }); 1 },
		'alter_system_and_reload: without a reload it dies');
	like($@, qr/was not reloaded/, 'saying so');
}

# session_run sees every error of what it runs, however it ends.
my $s = psql_session($node, 'postgres');
is(session_run($s, 'SELECT 1/0')->{sqlstate}, '22012', 'session_run: the SQLSTATE of an error');
is(session_run($s, 'SELECT 1/0;')->{sqlstate}, '22012', 'with a trailing semicolon');
is(session_run($s, 'SELECT 1/0; SELECT 1')->{sqlstate}, '22012', 'before a statement that succeeds');
is(session_run($s, 'SELECT 1; SELECT 1/0')->{sqlstate}, '22012', 'after one');
is(session_run($s, 'SELECT 1; SELECT 2;')->{sqlstate}, undef, 'no SQLSTATE when all succeed');
my $r = session_run($s, 'BEGIN; SELECT 1/0; SELECT 1; ROLLBACK');
is("$r->{sqlstate} $r->{message}", '22012 division by zero',
	'SQLSTATE and message of the same error, the first');
is(session_run($s, q{SELECT 'a' UNION ALL SELECT NULL})->{stdout}, "a\n<NULL>\n",
	'rows, NULL visibly');
is(session_safe($s, 'SELECT 2;'), '2', 'session_safe: the output');
ok(!eval { session_safe($s, 'SELECT 1/0'); 1 }, 'session_safe dies on an error');
ok(!eval { session_safe($s, 'SELECT 1/0;'); 1 }, 'and on one before a semicolon');
my $pid = session_safe($s, 'SELECT pg_backend_pid()');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok(session_run($s, 'SELECT 1')->{lost}, 'session_run: a terminated session is lost');
session_end($s);

# psql_background's options reach psql.
my $bg = psql_background($node, 'postgres', '\\echo :ON_ERROR_STOP :VERBOSITY',
	on_error_stop => 1, verbose => 1);
$bg->{h}->finish;
is($bg->{out}, "1 verbose\n", 'psql_background: on_error_stop and verbose');
$bg = psql_background($node, 'postgres', 'SELECT 1/0', verbose => 1);
$bg->{h}->finish;
like($bg->{err}, qr/ERROR:\s+22012:/, 'errors with their SQLSTATE');
$bg = psql_background($node, 'postgres', 'SELECT current_setting($$application_name$$)',
	application_name => 'bg');
$bg->{h}->finish;
is($bg->{out}, "bg\n", 'connects with the application_name');

$node->stop;
done_testing();
