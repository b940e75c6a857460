# Every ```sql block of README.md and docs/*.md runs as written, so no
# example a reader pastes can go stale.
#
# Each page gets a fresh server with idgen preloaded and idgen.node_id = 1
# (what the README's quick start configures); its blocks run in order,
# each in its own psql session with ON_ERROR_STOP, by default in database
# postgres (idgen.database) as a superuser.  An HTML comment on the line
# right before a block (blank lines between are allowed) changes that,
# with items separated by ";":
#
#   <!-- database: shop -->           run in this database (created first
#                                      if missing, owned by the role below)
#   <!-- role: app_writer -->         run as this role (created first if
#                                      missing, LOGIN, no other privilege)
#   <!-- fails: 42501 -->             the block must fail with this SQLSTATE
#   <!-- needs: pg_partman -->        run only where that extension is
#                                      installed; listed as skipped elsewhere
#   <!-- needs: PostgreSQL 17 -->     run only on that major version or later
#   <!-- not run: needs etcd -->      not run here, for the reason given
#
# A comment right before a block that is none of these fails the test, so
# a typo cannot skip a block silently.  Skipped blocks are counted and
# listed.  A ```text block right after a ```sql block (blank lines between
# allowed) is its output: the test checks its shape against what psql
# prints (the same lines in the same order, any number standing for any
# number), never the raw IDs or times.  The roles the pages assume exist
# (app_writer) are created on each server.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IdgenTest;

my $root = "$FindBin::RealBin/..";
my @pages = ('README.md', map { s{^\Q$root\E/}{}r } sort glob("$root/docs/*.md"));

# --- parse the pages ---------------------------------------------------------

# Returns a list of blocks: { page, line, sql, output, directives }.
sub sql_blocks
{
	my ($page) = @_;
	my @lines = split /\n/, slurp_file("$root/$page"), -1;
	my (@blocks, $comment, $last_sql);
	my $i = 0;
	while ($i < @lines)
	{
		my $line = $lines[$i];
		if ($line =~ /^(\s*)```(\w*)\s*$/ && $2 ne '')
		{
			# a fence may be indented, in a list item; so is its body
			my ($indent, $lang, $start) = ($1, $2, $i + 1);
			my @body;
			$i++;
			while ($i < @lines && $lines[$i] !~ /^\s*```\s*$/)
			{
				push @body, $lines[$i] =~ s/^\Q$indent\E//r;
				$i++;
			}
			my $text = join("\n", @body) . "\n";
			if ($lang eq 'sql')
			{
				$last_sql = {
					page => $page,
					line => $start,
					sql => $text,
					directive => $comment,
				};
				push @blocks, $last_sql;
			}
			elsif ($lang eq 'text' && $last_sql)
			{
				$last_sql->{output} = $text;
			}
			undef $last_sql unless $lang eq 'sql';
			undef $comment;
			$i++;
			next;
		}
		elsif ($line =~ /^\s*```/)
		{
			# an unlabelled fence: skip to its end
			$i++;
			$i++ while $i < @lines && $lines[$i] !~ /^\s*```\s*$/;
			undef $comment;
			undef $last_sql;
		}
		elsif ($line =~ /^\s*<!--\s*(.*?)\s*-->\s*$/)
		{
			$comment = $1;
		}
		elsif ($line !~ /^\s*$/)
		{
			undef $comment;
			undef $last_sql;
		}
		$i++;
	}
	return @blocks;
}

# "database: shop; role: x" -> { database => 'shop', role => 'x' }, or an
# error message for anything else.
sub directives
{
	my ($comment) = @_;
	my %d;
	return \%d unless defined $comment;
	for my $item (split /\s*;\s*/, $comment)
	{
		if ($item =~ /^(database|role|fails|needs|not run):\s*(\S.*)$/)
		{
			$d{$1} = $2;
		}
		else
		{
			return "not a directive: <!-- $comment -->";
		}
	}
	return "fails: wants one SQLSTATE, not \"$d{fails}\""
	  if defined $d{fails} && $d{fails} !~ /^[0-9A-Z]{5}$/;
	return \%d;
}

# The shape of psql's output: numbers, times and dates of any value and
# width alike, column padding and rules of any width alike.
sub shape
{
	my ($text) = @_;
	my @lines;
	for my $l (split /\n/, $text)
	{
		$l =~ s/^psql:\S*?:\d+: //;    # where psql read the statement
		$l =~ s/\d+/N/g;
		$l =~ s/N(?:[.:]N)+/N/g;
		1 while $l =~ s/N[-+]N/N/g;    # dates, times with their zone
		$l =~ s/-{2,}/-/g;
		$l =~ s/\s+/ /g;
		$l =~ s/^ | $//g;
		push @lines, $l if $l ne '';
	}
	return @lines;
}

# Whether every line of @want occurs in @got, in order.
sub in_order
{
	my ($want, $got) = @_;
	my $g = 0;
	for my $w (@$want)
	{
		$g++ while $g < @$got && $got->[$g] ne $w;
		return (0, $w) if $g >= @$got;
		$g++;
	}
	return (1, undef);
}

# --- run them ------------------------------------------------------------------

# the PostgreSQL under test: installcheck puts its bindir first in PATH
my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
my ($major) = `pg_config --version` =~ /PostgreSQL (\d+)/;
my (@skipped, $total, $ran);

for my $page (@pages)
{
	my @blocks = sql_blocks($page);
	next unless @blocks;
	$total += @blocks;

	my $node;
	(my $name = $page) =~ s/\W/_/g;
	for my $b (@blocks)
	{
		my $where = "$b->{page}:$b->{line}";
		my $d = directives($b->{directive});
		if (!ref $d)
		{
			fail("$where: $d");
			next;
		}
		# output pasted into a block makes it fail to paste
		unlike($b->{sql}, qr/^(?:NOTICE|WARNING|ERROR|DETAIL|HINT):|^\(\d+ rows?\)$/m,
			"$where: the block holds SQL only, no psql output");
		if (defined $d->{'not run'})
		{
			push @skipped, "$where: $d->{'not run'}";
			next;
		}
		if (defined $d->{needs} && $d->{needs} =~ /^PostgreSQL (\d+)$/)
		{
			if ($major < $1)
			{
				push @skipped, "$where: needs PostgreSQL $1, this is $major";
				next;
			}
		}
		elsif (defined $d->{needs})
		{
			my $ext = $d->{needs};
			unless (-e "$sharedir/extension/$ext.control")
			{
				# where the scripts install it (IDGEN_PARTMAN_REQUIRED for
				# pg_partman), its absence is a failure, not a skip
				my $required = 'IDGEN_' . uc($ext =~ s/^pg_//r) . '_REQUIRED';
				fail("$where: needs $ext, which $required says is installed")
				  if $ENV{$required};
				push @skipped, "$where: needs $ext, not installed here";
				next;
			}
		}
		unless ($node)
		{
			$node = idgen_node($name, conf => "idgen.node_id = 1\n");
			$node->start;
			wait_for_keeper($node);
			$node->safe_psql('postgres', 'CREATE ROLE app_writer LOGIN');
		}
		my $db = $d->{database} // 'postgres';
		my $role = $d->{role};
		if (defined $role
			&& $node->safe_psql('postgres',
				"SELECT count(*) FROM pg_roles WHERE rolname = '$role'") eq '0')
		{
			$node->safe_psql('postgres', qq{CREATE ROLE "$role" LOGIN});
		}
		if ($node->safe_psql('postgres',
				"SELECT count(*) FROM pg_database WHERE datname = '$db'") eq '0')
		{
			$node->safe_psql('postgres',
				qq{CREATE DATABASE "$db"} . (defined $role ? qq{ OWNER "$role"} : ''));
		}
		my @as = defined $role ? ('-U', $role) : ();
		$ran++;
		if (defined $d->{fails})
		{
			my ($ret, $out, $err) = $node->psql($db, "\\set VERBOSITY verbose\n$b->{sql}",
				on_error_stop => 1, timeout => scaled(120), extra_params => \@as);
			my ($state) = $err =~ /ERROR:\s+(\w{5}):/;
			is($state // "no error ($ret)", $d->{fails},
				"$where: fails with $d->{fails}, as the page says") or diag $err;
			next;
		}
		# psql as a reader runs it: aligned, with headers and command tags
		my ($ret, $out, $err) = $node->psql($db, "\\set QUIET off\n$b->{sql}",
			on_error_stop => 1, timeout => scaled(120),
			extra_params => [ @as, '-P', 'format=aligned', '-P', 'tuples_only=off' ]);
		is($ret, 0, "$where: runs without error"
			  . (defined $role ? " as $role" : '') . " in database $db") or diag $err;
		if (defined $b->{output})
		{
			my @want = shape($b->{output});
			my @notices = grep { /^(?:NOTICE|WARNING|INFO):/ } @want;
			my @rows = grep { !/^(?:NOTICE|WARNING|INFO):/ } @want;
			my ($ok, $missing) = in_order(\@rows, [ shape($out) ]);
			ok($ok, "$where: prints the output the page shows, in shape")
			  or diag "missing: $missing\npsql printed:\n$out";
			($ok, $missing) = in_order(\@notices, [ shape($err) ]);
			ok($ok, "$where: and the notices the page shows")
			  or diag "missing: $missing\npsql printed:\n$err";
		}
	}
	$node->stop if $node;
}

cmp_ok($total, '>=', 30, "the pages have SQL blocks ($total)");
note 'not run here: ' . scalar(@skipped) . " of $total blocks\n" . join("\n", map {"  $_"} @skipped);
cmp_ok(scalar @skipped, '<=', $total / 4, 'few blocks are not run (' . scalar(@skipped) . " of $total)");
cmp_ok($ran + @skipped, '==', $total, 'every block is either run or marked as not run here');
done_testing();
