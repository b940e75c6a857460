# idgen_convert_column() on a live table: the caller's lock_timeout bounds
# its wait for a busy table (55P03, nothing changed); an application
# inserting through prepared statements while the column is converted
# waits or succeeds and never loses a row; a transaction open across the
# conversion keeps its row; new IDs sort above the old ones.  Then the
# converted database survives pg_dump/pg_restore into a fresh server, whose
# DEFAULTs keep generating (with that server's node id).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $a = idgen_node('app', conf => "idgen.node_id = 1\n");
$a->start;
wait_for_keeper($a);
$a->safe_psql('postgres', 'CREATE DATABASE shop');
$a->safe_psql('shop', q{
	CREATE EXTENSION idgen;
	CREATE TABLE customers (id serial PRIMARY KEY, client int NOT NULL, name text);
	CREATE TABLE orders (
		id bigserial PRIMARY KEY,
		customer_id integer NOT NULL REFERENCES customers ON DELETE CASCADE,
		client int NOT NULL);
	INSERT INTO customers (client, name) SELECT 0, 'seed' FROM generate_series(1, 200);
	INSERT INTO orders (customer_id, client) SELECT id, 0 FROM customers;
});

# A transaction holding a referencing table: with lock_timeout set, the
# conversion gives up with 55P03 and changes nothing.
my $busy = psql_session($a, 'shop', application_name => 'busy');
session_safe($busy, 'BEGIN');
session_safe($busy, 'INSERT INTO orders (customer_id, client) VALUES (1, 0)');
ok($a->poll_query_until('shop',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'busy' AND state = 'idle in transaction'"),
	'a transaction holds the referencing table');
my (undef, undef, $timeout_err) = $a->psql('shop',
	"SET lock_timeout = '200ms';\n\\set VERBOSITY verbose\nSELECT idgen_convert_column('customers', 'id')",
	timeout => scaled(120));
like($timeout_err, qr/ERROR:\s+55P03:/, "the conversion obeys the caller's lock_timeout (55P03)");
session_safe($busy, 'ROLLBACK');
ok(session_end($busy), 'the holding transaction ends');
is($a->safe_psql('shop', q{
	SELECT format_type(atttypid, atttypmod) || ' ' || (to_regclass('customers_id_seq') IS NOT NULL)
	  FROM pg_attribute WHERE attrelid = 'customers'::regclass AND attname = 'id'}),
	'integer true', 'after the timeout the column is as it was');

# The application: two pgbench clients with prepared statements, each
# transaction one customer and one order of it.  It must still be running
# when the conversion comes, on any machine: each client writes until the
# test sets app_control.done, and reads the flag after every write; after
# that its remaining transactions run no SQL at all, and end at once.
$a->safe_psql('shop', 'CREATE TABLE app_control (done int NOT NULL); INSERT INTO app_control VALUES (0)');
my $script = $a->basedir . '/app.sql';
append_to_file($script, q{
\if :done = 0
WITH c AS (INSERT INTO customers (client, name) VALUES (:client_id + 1, 'bench') RETURNING id)
INSERT INTO orders (customer_id, client) SELECT id, :client_id + 1 FROM c;
SELECT done FROM app_control \gset
\endif
});
my $bench_out = '';
my $bench = IPC::Run::start(
	[ 'pgbench', '-n', '-M', 'prepared', '-c', '2', '-j', '1', '-t', '1000000', '-D', 'done=0',
	  '-f', $script, $a->connstr('shop') . ' application_name=app' ],
	'>', \$bench_out, '2>', \$bench_out, IPC::Run::timeout(300));
ok($a->poll_query_until('shop', "SELECT count(*) >= 100 FROM customers WHERE name = 'bench'"),
	'the application is inserting');

# A transaction that inserted with the old sequence and stays open: the
# conversion must wait for it, and the application must queue behind.
my $holder = psql_session($a, 'shop', application_name => 'holder');
session_safe($holder, 'BEGIN');
session_safe($holder, "INSERT INTO customers (client, name) VALUES (9, 'held')");
ok($a->poll_query_until('shop',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'holder' AND state = 'idle in transaction'"),
	'a transaction holding an inserted row is open');

my $conversion = psql_background($a, 'shop', "SELECT idgen_convert_column('customers', 'id')",
	application_name => 'conversion', timeout => scaled(300));
ok($a->poll_query_until('shop',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE application_name = 'conversion' AND wait_event_type = 'Lock'"),
	'the conversion waits for the open transaction');
ok($a->poll_query_until('shop',
		"SELECT count(*) = 2 FROM pg_stat_activity WHERE application_name = 'app' AND wait_event_type = 'Lock'"),
	'both application clients wait behind the conversion');

is(session_run($holder, 'COMMIT')->{stderr}, '', 'the open transaction commits');
session_end($holder);
ok(eval { $conversion->{h}->finish }, 'the conversion succeeds')
  or diag("conversion: $conversion->{err}") and $conversion->{h}->kill_kill;
like($conversion->{err}, qr/widened public\.orders\(customer_id\) to bigint/, 'it widened the referencing column');

# Let the application write on after the conversion, then stop it.
ok($a->poll_query_until('shop',
		"SELECT count(*) >= 100 FROM customers WHERE name = 'bench' AND id > 2147483647"),
	'the application keeps inserting, now with idgen IDs');
$a->safe_psql('shop', 'UPDATE app_control SET done = 1');
ok(eval { $bench->finish }, 'the application ran to its end, no client failing')
  or diag($bench_out) and $bench->kill_kill;
like($bench_out, qr/number of transactions actually processed: 2000000\/2000000/,
	'every application transaction succeeded');
like($bench_out, qr/number of failed transactions: 0 /, 'none failed');
unlike($bench_out, qr/\bclient \d+ [^\n]*\baborted\b/, 'no client aborted');
my $bench_rows = $a->safe_psql('shop', "SELECT count(*) FROM customers WHERE name = 'bench'");
cmp_ok($bench_rows, '<', 2000000, "the test, not the transaction count, ended the writes ($bench_rows rows)");

is($a->safe_psql('shop', q{
	SELECT (SELECT count(*) FROM customers WHERE name = 'bench') || ' ' ||
	       (SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id
	         WHERE c.name = 'bench' AND o.client = c.client) || ' ' ||
	       (SELECT count(*) FROM customers WHERE name = 'held') || ' ' ||
	       (SELECT count(*) FROM customers WHERE name = 'seed') || ' ' ||
	       (SELECT count(*) FROM orders WHERE client = 0)}),
	"$bench_rows $bench_rows 1 200 200",
	'every committed row is there: one customer and its order per transaction, the held row, the seed rows');
is($a->safe_psql('shop', q{
	SELECT count(DISTINCT id) = count(*)
	   AND min(id) FILTER (WHERE id > 2147483647) > max(id) FILTER (WHERE id <= 2147483647)
	   AND bool_and(snowflake_id_node(id) = 1) FILTER (WHERE id > 2147483647)
	  FROM customers}),
	't', 'IDs are unique, and the idgen IDs all sort above the sequence IDs');
is($a->safe_psql('shop', q{
	SELECT string_agg(format_type(atttypid, atttypmod), ',' ORDER BY attrelid::regclass::text)
	  FROM pg_attribute
	 WHERE (attrelid, attname) IN (('customers'::regclass, 'id'), ('orders'::regclass, 'customer_id'))}),
	'bigint,bigint', 'key and foreign key are bigint');
is($a->safe_psql('shop', "SELECT to_regclass('customers_id_seq') IS NULL"), 't',
	'the old sequence is gone');

# pg_dump of the converted database, restored into a fresh server with
# another node id.
my $dump = $a->basedir . '/shop.dump';
command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $a->connstr('shop') ], 'pg_dump of the converted database');
my $max_before = $a->safe_psql('shop', 'SELECT max(id) FROM customers');
my $counts = $a->safe_psql('shop', 'SELECT (SELECT count(*) FROM customers), (SELECT count(*) FROM orders)');

my $b = idgen_node('restored', conf => "idgen.node_id = 2\n");
$b->start;
wait_for_keeper($b);
$b->safe_psql('postgres', 'CREATE DATABASE shop');
command_ok([ 'pg_restore', '--exit-on-error', '-d', $b->connstr('shop'), $dump ],
	'pg_restore into a fresh server');
is($b->safe_psql('shop', 'SELECT (SELECT count(*) FROM customers), (SELECT count(*) FROM orders)'),
	$counts, 'every row restored');
is($b->safe_psql('shop', q{
	SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'customers'::regclass}),
	'snowflake_id()', 'the restored DEFAULT is snowflake_id()');
$b->safe_psql('shop', q{
	INSERT INTO customers (client, name) SELECT 7, 'restored' FROM generate_series(1, 100);
	INSERT INTO orders (customer_id, client) SELECT id, 7 FROM customers WHERE name = 'restored';
COPY customers (client, name) FROM stdin;
8	copied
8	copied
\.
});
is($b->safe_psql('shop', qq{
	SELECT count(*), bool_and(id > $max_before), bool_and(snowflake_id_node(id) = 2)
	  FROM customers WHERE name IN ('restored', 'copied')}),
	"102|t|t", 'the restored DEFAULT generates (INSERT and COPY) above every old ID, with the new node id');
is($b->safe_psql('shop', q{
	DELETE FROM customers WHERE name = 'restored';
	SELECT count(*) FROM orders WHERE client = 7}),
	'0', 'foreign keys and ON DELETE CASCADE work after the restore');

$a->stop;
$b->stop;
done_testing();
