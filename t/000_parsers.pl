# The parsers catch no ERROR: the layout and counter parsers return their
# problem (IdgenProblem), the epoch's check hook refuses what
# DecodeDateTime could raise on before calling it, and etcd's answers are
# checked before jsonb_in sees them.  PG_TRY without a subtransaction, as
# these files once used, swallows whatever ERROR comes (an interrupt, out
# of memory) and leaves the process in unknown state; in the postmaster and
# the keeper nothing would roll it back.  So none of these files may catch,
# copy or flush an ERROR again.
#
# Reads the sources, comments removed.  Needs no server.  IDGEN_SRC_DIR
# names another source tree to check (the test of this test plants a
# PG_TRY in a copy).
use strict;
use warnings;
use Test::More;

my $src = $ENV{IDGEN_SRC_DIR} // 'src';
my @parsers = qw(layout.c counter.c ranges.c registry.c etcd.c guc.c);
my $catching = qr/\b(PG_TRY|PG_CATCH|PG_FINALLY|PG_END_TRY|FlushErrorState|CopyErrorData|ReThrowError)\b/;

for my $file (@parsers)
{
	open my $fh, '<', "$src/$file" or die "$src/$file: $!";
	my $text = do { local $/; <$fh> };
	close $fh;
	# comments and string literals may name them; code may not
	$text =~ s{/\*(.*?)\*/}{"\n" x ($1 =~ tr/\n//)}gse;
	$text =~ s{"(?:\\.|[^"\\])*"}{""}g;
	my @found;
	my $line = 1;
	for (split /\n/, $text)
	{
		push @found, "line $line: $1" if /$catching/;
		$line++;
	}
	is(join('; ', @found), '', "$file catches no ERROR");
}

done_testing();
