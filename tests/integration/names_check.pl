#!/usr/bin/perl
# names_check.pl: is every name a symbolized profile gives the addresses of
# one object a true one? For each address of the object's
# executable mapping in the symbol section (written as looked up: a
# caller's return address - 1, as jeprof reads it):
#   - a name of the object's .dynsym (nm -D -S, the table a stripped
#     object keeps) must be a symbol whose extent [value, value + size)
#     contains the address (a size-0 one: up to the next symbol);
#   - "BASE+0xSTART" must be the start of the FDE that covers the address
#     (llvm-dwarfdump --eh-frame), or the address itself where none does;
#   - with --full UNSTRIPPED, the name must be what the unstripped copy
#     says, per address: the symbol eu-addr2line -S finds there, shown by
#     name when the stripped object's .dynsym has it, else as BASE+0x
#     followed by that symbol's start.
# It also counts what the nearest .dynsym symbol below each address (the
# rule of jeprof, and ours before) would have named wrongly.
#
# Prints "BAD <address> <name>: <why>" per wrong name, then one line:
#   checked N dynsym-named D (inside D) unnamed U functions F
#   nearest-below-wrong W agree-full A
#
#	perl names_check.pl [--full UNSTRIPPED] OBJECT SYMBOLIZED
# OBJECT is the object as the profile maps it (its path in
# MAPPED_LIBRARIES, which must be readable here).
use strict;
use warnings;
no warnings 'portable';

my $full;
if (@ARGV && $ARGV[0] eq '--full') {
	shift;
	$full = shift;
}
my ($obj, $symfile) = @ARGV;
die "usage: names_check.pl [--full UNSTRIPPED] OBJECT SYMBOLIZED\n"
    unless defined $symfile;
(my $base = $obj) =~ s{.*/}{};

# The executable load segment: addresses in the file's terms.
my ($seg_off, $seg_vaddr);
for (`eu-readelf -l '$obj'`) {
	if (/^\s*LOAD\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+\S+\s+\S+\s+\S+\s+R?\s*W?\s*E/) {
		($seg_off, $seg_vaddr) = (hex($1), hex($2));
		last;
	}
}
die "names_check: no executable segment in $obj\n" unless defined $seg_off;

# .dynsym's functions: name -> [value, end]; and all, by address.
my (%dyn, @dyn);
for (`nm -D --defined-only -S -n '$obj'`) {
	my ($v, $s, $t, $n) = /^([0-9a-f]+) (?:([0-9a-f]+) )?([TtWwi]) (\S+)$/
	    or next;
	$n =~ s/@.*//;
	push @dyn, [hex($v), defined $s ? hex($s) : 0, $n];
}
for my $i (0 .. $#dyn) {
	my ($v, $s, $n) = @{$dyn[$i]};
	my $end = $v + $s;
	if ($s == 0) { # up to the next symbol
		my $j = $i + 1;
		$j++ while $j <= $#dyn && $dyn[$j][0] == $v;
		$end = $j <= $#dyn ? $dyn[$j][0] : $v + 1;
	}
	$dyn{$n} = [$v, $end] unless exists $dyn{$n};
}

# FDE ranges.
my @fde;
for (`llvm-dwarfdump-14 --eh-frame '$obj'`) {
	push @fde, [hex($1), hex($2)] if /FDE .*pc=([0-9a-f]+)\.\.\.([0-9a-f]+)/;
}

# The profile's mapping of the object and the symbol section's lines.
my (@maps, @lines, $sec);
open(my $fh, '<', $symfile) or die "names_check: $symfile: $!\n";
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
die "names_check: $obj is not mapped in $symfile\n" unless @maps;

my (@check, %seen);
for my $l (@lines) {
	my ($pc, $names) = @$l;
	for my $m (@maps) {
		next unless $pc >= $m->[0] && $pc < $m->[1];
		my $va = $pc - $m->[0] + $m->[2] - $seg_off + $seg_vaddr;
		# The outermost of an inline chain is the function the
		# address is in.
		my $name = (split /--/, $names)[0];
		push @check, [$pc, $va, $name];
	}
}

# The unstripped copy's answers, in one batch: eu-addr2line -S names the
# symbol of its full table that contains each address, and the offset
# into it (so its start).
my %truth;
if (defined $full && @check) {
	my @va = map { sprintf('0x%x', $_->[1]) } @check;
	my @out = `eu-addr2line -S -e '$full' @va`;
	for my $i (0 .. $#check) {
		my $f = $out[2 * $i] // '??';
		chomp $f;
		my $want = $f;
		if ($f =~ /^(.*)\+0x([0-9a-f]+)$/) {
			$want = exists $dyn{$1} ? $1
			    : sprintf('%s+0x%x', $base, $check[$i][1] - hex($2));
		}
		$truth{$check[$i][1]} = $want;
	}
}

my ($n, $named, $inside, $unnamed, $near, $agree) = (0, 0, 0, 0, 0, 0);
my %funcs;
for my $c (@check) {
	my ($pc, $va, $name) = @$c;
	$n++;
	# What the nearest .dynsym symbol below would have said.
	my ($best);
	for my $d (@dyn) {
		last if $d->[0] > $va;
		$best = $d;
	}
	if (defined $best) {
		my $e = $dyn{$best->[2]};
		$near++ unless $va >= $e->[0] && $va < $e->[1];
	}
	if ($name =~ /^\Q$base\E\+0x([0-9a-f]+)$/) {
		my $start = hex($1);
		$unnamed++;
		$funcs{$start} = 1;
		my ($f) = grep { $va >= $_->[0] && $va < $_->[1] } @fde;
		if (defined $f) {
			printf "BAD 0x%x %s: its FDE starts at 0x%x\n", $pc,
			    $name, $f->[0] if $f->[0] != $start;
		} elsif ($start != $va) {
			printf "BAD 0x%x %s: no FDE covers 0x%x, and that is not it\n",
			    $pc, $name, $va;
		}
		if (defined(my $e = (grep { $va >= $_->[0] && $va < $_->[1] }
		    map { $dyn{$_} } keys %dyn)[0])) {
			printf "BAD 0x%x %s: .dynsym has a symbol containing 0x%x\n",
			    $pc, $name, $va;
		}
	} elsif (exists $dyn{$name}) {
		$named++;
		my $e = $dyn{$name};
		if ($va >= $e->[0] && $va < $e->[1]) {
			$inside++;
		} else {
			printf "BAD 0x%x %s: 0x%x is outside [0x%x, 0x%x)\n", $pc,
			    $name, $va, $e->[0], $e->[1];
		}
	}
	if (defined $full) {
		my $want = $truth{$va};
		if ($want eq $name) {
			$agree++;
		} else {
			printf "BAD 0x%x %s: the unstripped copy says %s\n", $pc,
			    $name, $want;
		}
	}
}
printf "checked %d dynsym-named %d (inside %d) unnamed %d functions %d " .
    "nearest-below-wrong %d agree-full %d\n", $n, $named, $inside, $unnamed,
    scalar(keys %funcs), $near, $agree;
