# A real JavaScript client: node-postgres (npm package "pg") against a
# server with idgen.  bigint IDs arrive as strings (JavaScript numbers lose
# integers above 2^53, and every snowflake ID is above it); idgen_to_text()
# text survives JSON.stringify/JSON.parse and decodes to the same ID; the
# text forms sort in JavaScript as the IDs do; and, where the extension has
# it, snowflake_id_batch(n) pre-assigns keys that the client then inserts.
#
# Needs node and npm, and npm's registry (or an npm cache that holds "pg":
# IDGEN_NPM_CACHE, a directory kept between runs) to install "pg" into a
# temporary directory.  Skipped with a message otherwise, unless
# IDGEN_NODE_REQUIRED is set (scripts/test-it.sh installs Debian's nodejs
# and npm and sets it): then a missing tool or package is a failure.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use JSON::PP;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

require_node();

# With a kept cache, --prefer-offline takes "pg" from it without asking
# the registry: fast, and it works offline once cached.
my $dir = PostgreSQL::Test::Utils::tempdir('node_client');
my ($npm_out, $npm_err) = ('', '');
my $npm_ok = eval {
	IPC::Run::run(
		[ 'npm', 'install', '--prefix', $dir, '--no-audit', '--no-fund',
		  '--no-update-notifier', '--prefer-offline',
		  '--cache', $ENV{IDGEN_NPM_CACHE} || "$dir/npm-cache", 'pg' ],
		'>', \$npm_out, '2>', \$npm_err, IPC::Run::timeout(240));
};
node_cannot_run("npm could not install the package pg (no registry, nothing cached?): "
	  . ((grep { !/complete log of this run/ } split /\n/, $npm_err || $@ || 'unknown error')[0]
		// 'unknown error'))
  unless $npm_ok && -d "$dir/node_modules/pg";
note 'installed pg ' . slurp_file("$dir/node_modules/pg/package.json") =~ s/.*"version":\s*"([^"]+)".*/$1/sr;

my $node = idgen_node('node_client', conf => "idgen.node_id = 5\n");
$node->start;
wait_for_keeper($node);
$node->safe_psql('postgres', q{
	CREATE TABLE items (
		id   bigint PRIMARY KEY DEFAULT snowflake_id(),
		code text GENERATED ALWAYS AS (idgen_to_text(id)) STORED,
		name text NOT NULL);
	SELECT idgen_create_generator('js', 'js53');
});
my $have_batch = $node->safe_psql('postgres',
	"SELECT count(*) > 0 FROM pg_proc WHERE proname = 'snowflake_id_batch'") eq 't';

my $js = "$dir/client.js";
append_to_file($js, <<'EOF');
'use strict';
const { Client } = require('pg');

async function main() {
  // PGHOST (the socket directory), PGPORT, PGDATABASE, PGUSER from the test
  const client = new Client();
  await client.connect();
  const out = {};

  // 1. int8 arrives as a string, exactly
  let r = await client.query("SELECT snowflake_id() AS id, 9007199254740993::bigint AS big");
  out.id_type = typeof r.rows[0].id;
  out.big_exact = r.rows[0].big === '9007199254740993';
  out.id_beyond_2_53 = BigInt(r.rows[0].id) > 2n ** 53n;
  // not a "safe integer": a JavaScript number cannot hold every such value
  out.id_unsafe_as_number = !Number.isSafeInteger(Number(r.rows[0].id));
  out.big_lossy_as_number = String(Number(r.rows[0].big)) !== r.rows[0].big;

  // 2. insert, ship through JSON as text, decode back on the server
  r = await client.query(
    "INSERT INTO items (name) SELECT 'row ' || g FROM generate_series(1, 200) g RETURNING id, code");
  const wire = JSON.stringify(r.rows.map(row => ({ id: row.id, code: row.code })));
  const back = JSON.parse(wire);
  out.json_rows = back.length;
  let same = 0;
  for (const row of back) {
    const d = await client.query(
      "SELECT idgen_from_text($1) = $2::bigint AS same, idgen_from_text(lower($1)) = $2::bigint AS lower_same",
      [row.code, row.id]);
    if (d.rows[0].same && d.rows[0].lower_same) same++;
  }
  out.json_roundtrips = same;
  // the text forms sort in JavaScript (UTF-16 code units) as the IDs do
  const byCode = [...back].sort((x, y) => (x.code < y.code ? -1 : x.code > y.code ? 1 : 0));
  const byId = [...back].sort((x, y) => (BigInt(x.id) < BigInt(y.id) ? -1 : 1));
  out.code_order_is_id_order = byCode.every((row, i) => row.id === byId[i].id);
  r = await client.query(
    "SELECT array_agg(idgen_to_text(id, 'base62')) AS codes, array_agg(id) AS ids FROM items");
  const pairs = r.rows[0].codes.map((c, i) => [c, BigInt(r.rows[0].ids[i])]);
  pairs.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  out.base62_order_is_id_order = pairs.every((p, i) => i === 0 || pairs[i - 1][1] < p[1]);
  // a lookup by the text form a browser sent back
  r = await client.query("SELECT name FROM items WHERE id = idgen_from_text($1)", [back[7].code]);
  out.lookup_by_code = r.rows.length === 1 && r.rows[0].name === 'row 8';

  // 3. pre-assigned keys from snowflake_id_batch(n), inserted by the client
  if (process.env.IDGEN_HAVE_BATCH === 't') {
    r = await client.query("SELECT snowflake_id_batch(50) AS ids");
    const ids = r.rows[0].ids;
    out.batch_size = ids.length;
    out.batch_strings = ids.every(id => typeof id === 'string');
    out.batch_increasing = ids.every((id, i) => i === 0 || BigInt(ids[i - 1]) < BigInt(id));
    await client.query('BEGIN');
    for (const id of ids)
      await client.query("INSERT INTO items (id, name) VALUES ($1, 'batch')", [id]);
    await client.query('COMMIT');
    r = await client.query("SELECT count(*)::int AS n FROM items WHERE name = 'batch' AND id = ANY($1::bigint[])", [ids]);
    out.batch_inserted = r.rows[0].n;
  } else {
    out.batch = 'missing';
  }

  // 4. a 53-bit layout (preset js53): every ID a JavaScript number holds
  // exactly, so a client may take int8 as a number for it
  r = await client.query({
    text: "SELECT idgen_next('js') AS id FROM generate_series(1, 1000) ORDER BY random()",
    types: { getTypeParser: (oid, format) => oid === 20 ? (v => Number(v)) : require('pg').types.getTypeParser(oid, format) }
  });
  const nums = r.rows.map(row => row.id);
  out.js53_numbers = nums.every(n => typeof n === 'number' && Number.isSafeInteger(n));
  out.js53_distinct = new Set(nums).size;
  // as numbers, they sort exactly as the server orders the IDs
  const sorted = [...nums].sort((x, y) => x - y);
  r = await client.query({
    text: "SELECT array_agg(id::text ORDER BY id) AS ids FROM unnest($1::bigint[]) AS id",
    values: [nums.map(String)] });
  out.js53_order = sorted.every((n, i) => String(n) === r.rows[0].ids[i]);

  await client.end();
  console.log(JSON.stringify(out));
}

main().catch(e => { console.error(e.stack || e); process.exit(1); });
EOF

my ($out, $err) = ('', '');
my $ran = eval {
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{PGDATABASE} = 'postgres';
	local $ENV{PGUSER} = scalar getpwuid($<);
	local $ENV{NODE_PATH} = "$dir/node_modules";
	local $ENV{IDGEN_HAVE_BATCH} = $have_batch ? 't' : 'f';
	IPC::Run::run([ 'node', $js ], '>', \$out, '2>', \$err, IPC::Run::timeout(120));
};
ok($ran, 'the node client ran') or diag "stdout: $out\nstderr: $err";
my $r = eval { decode_json((split /\n/, $out)[-1]) } // {};
note "node client reported: $out";

is($r->{id_type}, 'string', 'bigint IDs arrive in JavaScript as strings');
ok($r->{id_beyond_2_53} && $r->{id_unsafe_as_number},
	'snowflake IDs are beyond 2^53, outside the integers a JavaScript number holds exactly');
ok($r->{big_exact} && $r->{big_lossy_as_number},
	'a bigint above 2^53 arrives exactly, where Number() would have changed it');
is($r->{json_rows}, 200, 'rows went through JSON.stringify/JSON.parse');
is($r->{json_roundtrips}, 200,
	'every idgen_to_text() text came back through JSON and decoded to its ID (also in lower case)');
ok($r->{code_order_is_id_order}, 'crockford32 codes sort in JavaScript as the IDs do');
ok($r->{base62_order_is_id_order}, 'base62 codes sort in JavaScript as the IDs do');
ok($r->{lookup_by_code}, 'a row is found by the code the client sent back');
ok($r->{js53_numbers}, 'js53 IDs arrive as JavaScript numbers, every one a safe integer');
is($r->{js53_distinct}, 1000, 'all 1,000 distinct as numbers');
ok($r->{js53_order}, 'sorted as numbers in JavaScript, in the order of the IDs on the server');

# snowflake_id_batch() ships in 1.1: missing, the checks fail, never skip
ok($have_batch, 'this idgen has snowflake_id_batch()');
{
	is($r->{batch_size}, 50, 'snowflake_id_batch(50) gives 50 IDs');
	ok($r->{batch_strings}, 'as an array of strings');
	ok($r->{batch_increasing}, 'strictly increasing');
	is($r->{batch_inserted}, 50, 'the client inserted rows with the pre-assigned keys');
}

is($node->safe_psql('postgres', q{
	SELECT count(*) = count(DISTINCT id) AND bool_and(code = idgen_to_text(id))
	   AND bool_and(snowflake_id_node(id) = 5) FROM items}),
	't', 'the table holds unique IDs of this node, each with its code');

$node->stop;
done_testing();
