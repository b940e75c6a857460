#!/usr/bin/perl
# The figures of the source's shape, for a before/after comparison of a
# change to how the code is organised:
#
#   perl scripts/house-figures.pl [src]
#
# prints the number of .c and .h files (in src/ and its folders), the mutable statics (at file
# scope, and inside functions), the mutable globals that headers export,
# the comment-to-code line ratio and the longest functions (from the line
# with the name to the closing brace in column 0, as pgindent lays out a
# function).  A line counts as a comment line when it holds only comment,
# as a code line when it holds anything else but blanks; a line holding
# both counts as code.  Mutable: not const, not a function.
use strict;
use warnings;
use File::Find;

my $dir = shift // 'src';
my @files;
find({ wanted => sub { push @files, $File::Find::name =~ s{^\Q$dir\E/}{}r if /\.[ch]$/ },
		no_chdir => 0 }, $dir);
@files = sort @files;

my ($nc, $nh) = (0, 0);
my ($file_statics, $local_statics, $globals) = (0, 0, 0);
my ($comment_lines, $code_lines) = (0, 0);
my @functions;

foreach my $f (@files)
{
	my $path = "$dir/$f";
	open(my $fh, '<', $path) or die "$path: $!";
	my @lines = <$fh>;
	close $fh;
	$f =~ /\.c$/ ? $nc++ : $nh++;

	my $in_comment = 0;
	my $depth = 0;
	my ($fname, $fstart);
	my $prev = '';
	for (my $i = 0; $i < @lines; $i++)
	{
		my $line = $lines[$i];

		# strip comments, remembering whether anything else is left
		my $code = '';
		my $rest = $line;
		my $had_comment = $in_comment;
		while (length $rest)
		{
			if ($in_comment)
			{
				if ($rest =~ s{^.*?\*/}{}s) { $in_comment = 0; }
				else { $rest = ''; }
			}
			elsif ($rest =~ s{^(.*?)/\*}{}s)
			{
				$code .= $1;
				$in_comment = 1;
				$had_comment = 1;
			}
			elsif ($rest =~ s{^(.*?)//.*$}{}s)
			{
				$code .= $1;
				$had_comment = 1;
				$rest = '';
			}
			else
			{
				$code .= $rest;
				$rest = '';
			}
		}
		if ($code =~ /\S/) { $code_lines++; }
		elsif ($had_comment) { $comment_lines++; }

		# declarations at file scope, and statics inside functions
		if ($code =~ /^\s*static\s/ && $code !~ /^\s*static\s+(const|inline)\b/ &&
			$code =~ /[;=]/ &&
			($code !~ /\(/ || $code =~ /^[^(]*=/ || $code =~ /\(\s*\*\s*\w+\s*\)/))
		{
			if ($depth == 0) { $file_statics++; }
			else { $local_statics++; }
		}
		if ($f =~ /\.h$/ && $depth == 0 && $code =~ /^\s*extern\s/ &&
			$code !~ /\bconst\b/ && $code !~ /\(/)
		{
			$globals++;
		}

		# functions: "name(" in column 0, then "{" in column 0
		if ($depth == 0 && $code =~ /^\{/ && defined $fname)
		{
			$fstart //= $i;
		}
		if ($depth == 0 && $code =~ /^([A-Za-z_]\w*)\s*\(/)
		{
			$fname = $1;
			$fstart = $i;
		}
		my $opens = () = $code =~ /\{/g;
		my $closes = () = $code =~ /\}/g;
		$depth += $opens - $closes;
		if ($depth == 0 && $code =~ /^\}/ && defined $fname)
		{
			push @functions, [ $i - $fstart + 1, "$f:$fname" ];
			undef $fname;
			undef $fstart;
		}
		undef $fname if $depth == 0 && $code =~ /;\s*$/ && $code !~ /^\}/;
	}
}

@functions = sort { $b->[0] <=> $a->[0] } @functions;
printf "files: %d (.c %d, .h %d)\n", $nc + $nh, $nc, $nh;
printf "mutable statics: %d at file scope, %d in functions\n",
  $file_statics, $local_statics;
printf "mutable globals exported by headers: %d\n", $globals;
printf "lines: %d code, %d comment; comment/code %.2f\n",
  $code_lines, $comment_lines, $comment_lines / ($code_lines || 1);
printf "functions: %d; longest:\n", scalar @functions;
printf "  %4d %s\n", @$_ for @functions[ 0 .. 7 ];
