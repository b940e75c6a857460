# The parsers catch no ERROR: the layout and counter parsers return their
# problem (IdgenProblem), the epoch's check hook refuses what
# DecodeDateTime could raise on before calling it, and etcd's answers are
# checked before jsonb_in sees them.  PG_TRY without a subtransaction, as
# these files once used, swallows whatever ERROR comes (an interrupt, out
# of memory) and leaves the process in unknown state; in the postmaster and
# the keeper nothing would roll it back.  So none of these files may catch,
# copy or flush an ERROR again.
#
# Reads the sources, comments and literals removed.  Needs no server.
# IDGEN_SRC_DIR names another source tree to check.  The check is shown
# to fail: a copy of the files with a PG_TRY planted in each, after a
# character literal '"' where one is, must be found.
use strict;
use warnings;
use File::Temp qw(tempdir);
use Test::More;

my $src = $ENV{IDGEN_SRC_DIR} // 'src';
my @parsers = qw(base/layout.c base/counter.c base/ranges.c keeper/load.c lease/etcd.c base/guc.c);
my $catching = qr/\b(PG_TRY|PG_CATCH|PG_FINALLY|PG_END_TRY|FlushErrorState|CopyErrorData|ReThrowError)\b/;

sub read_file
{
	my ($path) = @_;
	open my $fh, '<', $path or die "$path: $!";
	my $text = do { local $/; <$fh> };
	close $fh;
	return $text;
}

# The lines of text that catch an ERROR.
sub catches
{
	my ($text) = @_;
	# comments and literals may name them; code may not.  Character
	# literals first: '"' would open a string.
	$text =~ s{/\*(.*?)\*/}{"\n" x ($1 =~ tr/\n//)}gse;
	$text =~ s{'(?:\\.|[^'\\\n])+'}{''}g;
	$text =~ s{"(?:\\.|[^"\\])*"}{""}g;
	my @found;
	my $line = 1;
	for (split /\n/, $text)
	{
		push @found, "line $line: $1" if /$catching/;
		$line++;
	}
	return @found;
}

for my $file (@parsers)
{
	is(join('; ', catches(read_file("$src/$file"))), '', "$file catches no ERROR");
}

# the check finds a catch planted in each file, even behind a '"'
for my $file (@parsers)
{
	my $text = read_file("$src/$file");
	my $planted = ($text =~ s{(\n[^\n]*'"'[^\n]*\n)}{$1\tPG_TRY();\n})
	  ? "after a '\"'" : do { $text .= "\nstatic void f(void) { FlushErrorState(); }\n"; 'at the end' };
	cmp_ok(scalar(catches($text)), '>', 0, "a catch planted in $file $planted is found");
}

done_testing();
