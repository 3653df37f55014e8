#!/usr/bin/perl
# names_truth.pl: our names of one object's addresses, per address, held
# to the tools people trust on the unstripped object: the
# inline chain of each address of the object's executable mapping in a
# symbolized profile (written as looked up), against
# `llvm-symbolizer-14 --inlining --demangle` and `eu-addr2line -f -i -C`
# on OBJECT at the same address (its ELF virtual address). Frame by
# frame, innermost first, names compared without their parameter lists
# and GCC's clone marks (" [clone .part.0]", a C clone's ".part.0", which
# llvm-symbolizer takes from the symbol table); where a tool prints a function's bare
# name and ours has its namespaces (a static function in a namespace has
# no linkage name; llvm-symbolizer qualifies it from the symbol table out
# of line, neither tool inline), "ns::f" matches "f".
#
# Prints "DIFF <address> <tool>: ours | theirs" per disagreement, then
#   addresses N frames F agree-llvm A agree-eu E
#
#	perl names_truth.pl OBJECT SYMBOLIZED
use strict;
use warnings;
no warnings 'portable';

my ($obj, $symfile) = @ARGV;
die "usage: names_truth.pl OBJECT SYMBOLIZED\n" unless defined $symfile;

my ($seg_off, $seg_vaddr);
for (`eu-readelf -l '$obj'`) {
	if (/^\s*LOAD\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+\S+\s+\S+\s+\S+\s+R?\s*W?\s*E/) {
		($seg_off, $seg_vaddr) = (hex($1), hex($2));
		last;
	}
}
die "names_truth: no executable segment in $obj\n" unless defined $seg_off;

my (@maps, @lines, $sec);
open(my $fh, '<', $symfile) or die "names_truth: $symfile: $!\n";
while (<$fh>) {
	if (/^--- (\w+)/) { $sec = $1; next; }
	if (/^---$/) { $sec = ''; next; }
	if (($sec // '') eq 'symbol' && /^0x([0-9a-f]+) (.*)$/) {
		push @lines, [hex($1), $2];
	} elsif (/^([0-9a-f]+)-([0-9a-f]+) r-xp ([0-9a-f]+) \S+ \S+\s+(\S+)$/ &&
	    $4 eq $obj) {
		push @maps, [hex($1), hex($2), hex($3)];
	}
}
close($fh);
die "names_truth: $obj is not mapped in $symfile\n" unless @maps;

# Ours: innermost first.
my @check;
for my $l (@lines) {
	my ($pc, $names) = @$l;
	for my $m (@maps) {
		next unless $pc >= $m->[0] && $pc < $m->[1];
		my $va = $pc - $m->[0] + $m->[2] - $seg_off + $seg_vaddr;
		push @check, [$pc, $va, [reverse split /--/, $names]];
	}
}
die "names_truth: no address of $obj in $symfile\n" unless @check;
my @va = map { sprintf('0x%x', $_->[1]) } @check;

# llvm-symbolizer: a block per address, (function, file:line) pairs
# innermost first, a blank line after.
my (@llvm, @cur);
for (`llvm-symbolizer-14 --obj='$obj' --inlining --demangle @va`) {
	chomp;
	if ($_ eq '') { push @llvm, [@cur]; @cur = (); next; }
	push @cur, $_ unless m{^(/|\?\?:)};
}
push @llvm, [@cur] if @cur;

# eu-addr2line -a: the address, then function lines (an inline's says
# "f inlined at FILE:LINE in g") each followed by its file:line.
my (@eu, $k);
for (`eu-addr2line -a -f -i -C -e '$obj' @va`) {
	chomp;
	if (/^0x[0-9a-f]+$/) { $k = defined $k ? $k + 1 : 0; $eu[$k] = []; next; }
	next if m{^(/|\?\?:)} || !defined $k;
	s/ inlined at .* in .*$//;
	push @{$eu[$k]}, $_;
}

# Every name through c++filt once: a tool whose demangler refused a name
# (eu-addr2line's, libstdc++'s __cxa_demangle) prints it mangled, and
# c++filt reads it (the differential test's [demangle]).
my %filt;
{
	my @all = grep { /^_Z/ } map { @{$_->[2]} } @check;
	push @all, grep { /^_Z/ } map { @$_ } @llvm, @eu;
	my %u = map { $_ => 1 } @all;
	my @names = sort keys %u;
	if (@names) {
		open(my $in, '>', "$symfile.names") or die;
		print $in "$_\n" for @names;
		close($in);
		my @out = `c++filt <'$symfile.names'`;
		chomp @out;
		@filt{@names} = @out;
	}
}

# A name as compared: demangled, no parameter list, no clone mark, no
# return type, and a lambda as "{lambda}" (libiberty writes
# "{lambda((auto:1&)...)#1}", llvm-symbolizer "'lambda'(auto&...)").
sub norm {
	my $n = shift;
	$n = $filt{$n} // $n;
	$n =~ s/\{lambda\((?:[^()]|\([^()]*\))*\)#\d+\}/{lambda}/g;
	$n =~ s/'lambda\d*'\((?:[^()]|\([^()]*\))*\)/{lambda}/g;
	$n =~ s/ \[clone [^\]]*\]//g;
	# A C clone's symbol (llvm-symbolizer names C functions from the
	# symbol table): "f.part.0" is f's code, as DWARF names it.
	1 while $n =~ s/\.(part|constprop|isra|cold|lto_priv)(\.\d+)?$//;
	$n =~ s/ \(inline\)$//;
	if ($n =~ /\)(\s*const)?(\s*&&?)?$/) {
		my ($d, $i) = (0, length($n) - 1);
		$i-- while $i >= 0 && substr($n, $i, 1) ne ')';
		for (; $i >= 0; $i--) {
			my $c = substr($n, $i, 1);
			$d++ if $c eq ')';
			if ($c eq '(' && --$d == 0) {
				$n = substr($n, 0, $i)
				    unless substr($n, 0, $i) =~ /(^|::)$|\(anonymous$/;
				last;
			}
		}
	}
	# A leading return type (a template's): the name is the last
	# word at depth 0.
	my ($d, $cut) = (0, -1);
	for my $i (0 .. length($n) - 1) {
		my $c = substr($n, $i, 1);
		$d++ if $c eq '<' || $c eq '(';
		$d-- if $c eq '>' || $c eq ')';
		$cut = $i if $c eq ' ' && $d == 0 &&
		    substr($n, 0, $i) !~ /operator$/;
	}
	$n = substr($n, $cut + 1) if $cut >= 0;
	return $n;
}

sub same {
	my ($ours, $theirs) = map { norm($_) } @_;
	return $ours eq $theirs || substr($ours, -length("::$theirs")) eq "::$theirs";
}

my ($nf, $al, $ae) = (0, 0, 0);
for my $i (0 .. $#check) {
	my ($pc, $v, $ours) = @{$check[$i]};
	$nf += @$ours;
	for my $t (['llvm-symbolizer', $llvm[$i] // [], \$al],
	    ['eu-addr2line', $eu[$i] // [], \$ae]) {
		my ($tool, $theirs, $agree) = @$t;
		my $ok = @$ours == @$theirs;
		for my $j (0 .. $#$ours) {
			$ok &&= same($ours->[$j], $theirs->[$j]);
		}
		if ($ok) {
			${$agree}++;
		} else {
			printf "DIFF 0x%x (0x%x) %s: %.300s | %.300s\n", $pc, $v,
			    $tool, join(' <- ', map { norm($_) } @$ours),
			    join(' <- ', map { norm($_) } @$theirs);
		}
	}
}
printf "addresses %d frames %d agree-llvm %d agree-eu %d\n", scalar(@check),
    $nf, $al, $ae;
