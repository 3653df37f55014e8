# shellcheck shell=bash
# tests/lib/profiles.sh — profiles held to jeprof: totals, tables by
# function name, jeprof's names for what it names wrongly, and
# libjemalloc's frames cut as render_dump cuts them; fragmentation held
# to jemalloc's bins. Definitions only;
# sourced by tests/lib.sh over core.sh.

# jeprof_memo ARG...: jeprof's output for these arguments (its stderr
# dropped, 300 s at most), run once in a test for the same arguments over
# the same files (each file's size, mtime, ctime and inode are in the
# key, --base='s too): same_totals and a test's table ask jeprof the same
# question of one profile, and jeprof takes seconds over thousands of
# stacks.
jeprof_memo() {
	local a key f
	key=$({
		printf '%s\n' "$PWD"
		for a in "$@"; do
			printf '%s\n' "$a"
			a=${a#--base=}
			[ -f "$a" ] && stat -c '%s %.9Y %.9Z %i' "$a"
		done
	} | md5sum | cut -c1-32)
	f=$T/jeprof-memo.$key
	if [ ! -f "$f" ]; then
		timeout 300 jeprof "$@" >"$f.part" 2>/dev/null
		mv -f "$f.part" "$f"
	fi
	cat "$f"
}

# same_totals NAME BINARY PROFILE [BASE]: prof/heapprof.c's unsampled
# totals (tests/host/heapprof_dump, $HEAPPROF_DUMP) and jeprof's, bytes
# and objects; with BASE, of PROFILE minus BASE (jeprof --base). jeprof
# prints its float sum truncated; ours, truncated, must be equal (one
# unit apart at most: the two sum in different orders).
same_totals() {
	local name=$1 bin=$2 prof=$3 ours jb jo ob oo base=()
	[ -n "${4:-}" ] && base=(--base "$4")
	ours=$("$HEAPPROF_DUMP" "${base[@]}" "$prof" 2>&1) || {
		fail "$name: heapprof_dump reads it" "$ours"
		return
	}
	echo "# $name: $(echo "$ours" | tr '\n' ' ')"
	jb=$(jeprof_memo --text --show_bytes ${4:+--base="$4"} "$bin" "$prof" |
		sed -n 's/^Total: \([0-9]*\) B$/\1/p')
	jo=$(jeprof_memo --text --inuse_objects ${4:+--base="$4"} "$bin" "$prof" |
		sed -n 's/^Total: \([0-9]*\) objects$/\1/p')
	ob=$(echo "$ours" | awk '$1 == "inuse_space" { printf "%d", $2 }')
	oo=$(echo "$ours" | awk '$1 == "inuse_objects" { printf "%d", $2 }')
	if [ -n "$jb" ] && [ -n "$ob" ] && [ "$jb" -gt 0 ] &&
		[ $((ob - jb)) -le 1 ] && [ $((jb - ob)) -le 1 ]; then
		pass "$name: inuse_space $ob B, jeprof's Total: $jb B"
	else
		fail "$name: inuse_space equals jeprof's Total" "ours: $ob" \
			"jeprof: ${jb:-none}"
	fi
	if [ -n "$jo" ] && [ -n "$oo" ] && [ $((oo - jo)) -le 1 ] &&
		[ $((jo - oo)) -le 1 ]; then
		pass "$name: inuse_objects $oo, jeprof's Total: $jo objects"
	else
		fail "$name: inuse_objects equals jeprof's Total" "ours: $oo" \
			"jeprof: ${jo:-none}"
	fi
}

# table_by_name COLUMN [FILTER] < TABLE: a --text table's rows as
# "figure<TAB>rows<TAB>name", the figure (column 1 flat, 4 cum) summed per
# name in jeprof's short form (c++filt, symbol versions off, argument
# lists and template arguments off, a leading return type off; see
# differential.sh's header), the largest first; only names matching the
# Perl regex FILTER, if given. Our "inlined_buffer (inline)" goes under
# the name jeprof gives it (differential.sh's [binutils-inline-static]).
table_by_name() {
	c++filt | perl -e '
		use strict; use warnings;
		my ($col, $filter) = @ARGV;
		my (%f, %r);
		while (<STDIN>) {
			next if $. == 1 || /^#/; # our comments: notes, the estimate
			chomp;
			my @c = split " ", $_, 6;
			next unless @c == 6;
			my $n = $c[5];
			$n =~ s/\@\@?[A-Za-z0-9_.]+//g;
			my $inl = ($n =~ s/ \(inline\)$//) ? " (inline)" : "";
			while ($n =~ s/\([^()]*\)(\s*const)?//g) { }
			while ($n =~ s/<[^<>]*>//g) { }
			$n =~ s/^.*\s+(\w+::)/$1/;
			$n = "cxxhost::make_buffers"
			    if $n =~ /^(cxxhost::)?inlined_buffer$/;
			next if defined $filter && "$n$inl" !~ /$filter/;
			$f{"$n$inl"} += $c[$col - 1];
			$r{"$n$inl"}++;
		}
		printf "%.1f\t%d\t%s\n", $f{$_}, $r{$_}, $_
		    for sort { $f{$b} <=> $f{$a} || $a cmp $b } keys %f;' "$@"
}

# as_jeprof PROFILE < TEXT: TEXT (a table, stacks, an SVG) with each of our
# "object+0xSTART" names (a function no symbol contains) as
# jeprof names it: after the nearest symbol of that object at or below
# START (its nm table, else nm -D's, as jeprof reads a stripped object),
# demangled, without its argument list. jeprof's names are wrong there
# ([stripped-static] in the tests that compare with it); this lets a test
# hold everything else to jeprof. The objects are PROFILE's
# MAPPED_LIBRARIES, as they are on this machine.
as_jeprof() {
	perl -e '
		use strict; use warnings; no warnings "portable";
		my (%path, %syms);
		open(my $fh, "<", $ARGV[0]) or die "as_jeprof: $ARGV[0]: $!\n";
		while (<$fh>) {
			next unless /^[0-9a-f]+-[0-9a-f]+ r-xp \S+ \S+ \S+\s+(\/\S+)$/;
			my $p = $1;
			(my $o = $p) =~ s{.*/}{};
			$path{$o} //= $p;
		}
		close($fh);
		# The name without its trailing parameter list.
		sub short {
			my $n = shift;
			$n =~ s/\@\@?\S+$//;
			my $e = $n =~ /\)(\s*const)?$/ ? rindex($n, ")") : -1;
			return $n if $e < 0;
			my $d = 0;
			for (my $i = $e; $i >= 0; $i--) {
				my $c = substr($n, $i, 1);
				$d++ if $c eq ")";
				return substr($n, 0, $i) if $c eq "(" && --$d == 0;
			}
			return $n;
		}
		sub table {
			my $o = shift;
			return $syms{$o} if $syms{$o};
			my @t;
			for my $opt ("", "-D") {
				for (`nm $opt -n -C --defined-only "$path{$o}" 2>/dev/null`) {
					push @t, [hex($1), short($2)]
					    if /^([0-9a-f]+) [TtWwi] (.+)$/;
				}
				last if @t;
			}
			return $syms{$o} = \@t;
		}
		sub name {
			my ($o, $start) = @_;
			my $best;
			for my $s (@{table($o)}) {
				last if $s->[0] > $start;
				$best = $s->[1];
			}
			return $best // "$o+0x" . sprintf("%x", $start);
		}
		my $re = join "|", map { quotemeta } sort { length($b) <=> length($a) } keys %path;
		while (my $l = <STDIN>) {
			$l =~ s/(?<![\w.+-])($re)\+0x([0-9a-f]+)\b/name($1, hex($2))/ge
			    if $re ne "";
			print $l;
		}' "$1"
}

# cut_libjemalloc PROFILE OUT: PROFILE (raw or symbolized) with the frames
# in libjemalloc's executable mappings cut off the front of each stack,
# the new leaf written as its address - 1 (jeprof looks a leaf up as is,
# a caller at - 1); a stack of such frames only stays whole. It is the
# rule of render_dump (prof/render_symbolized.c), which the raw profiles
# over HTTP and our symbolized files follow, written again apart to hold
# them to it; and what differential.sh does to the dumps jemalloc
# writes before jeprof reads them ([stripped-jemalloc]).
cut_libjemalloc() {
	perl -e '
		use strict; use warnings; no warnings "portable";
		my @lines = <STDIN>;
		my ($maps, @r) = (0);
		for (@lines) {
			$maps = 1, next if /^MAPPED_LIBRARIES:/;
			next unless $maps;
			my ($lo, $hi, $path) =
			    /^([0-9a-f]+)-([0-9a-f]+)\s+r.x.\s.*\s(\S+)$/ or next;
			push @r, [hex($lo), hex($hi)] if $path =~ /libjemalloc/;
		}
		for (@lines) {
			if (/^@ (.*)$/) {
				my @a = split " ", $1;
				my $i = 0;
				while ($i <= $#a) {
					my $pc = hex($a[$i]);
					last unless grep { $pc >= $_->[0] && $pc < $_->[1] } @r;
					$i++;
				}
				if ($i > 0 && $i <= $#a && hex($a[$i]) > 0) {
					my @k = @a[$i .. $#a];
					$k[0] = sprintf("0x%x", hex($k[0]) - 1);
					$_ = "@ @k\n";
				}
			}
			print;
		}' <"$1" >"$2"
}

# same_rows DESC N OURS JEPROF: the first N rows with a figure above 0 of
# each table_by_name list are the same names, and each of those names has
# the same figure on both sides within 0.05 MB per table row that went
# into it (each row is rounded to 0.1 MB before they are summed). Prints
# both sides on failure.
same_rows() {
	local desc=$1 n=$2 ours=$3 jep=$4 bad
	bad=$(perl -e '
		use strict; use warnings;
		my ($n, $of, $jf) = @ARGV;
		my (%o, %j, %rows, @top);
		for my $side ([$of, \%o], [$jf, \%j]) {
			open(my $fh, "<", $side->[0]) or die;
			my $k = 0;
			while (my $l = <$fh>) {
				chomp $l;
				my ($v, $r, $name) = split /\t/, $l, 3;
				$side->[1]{$name} = $v;
				$rows{$name} += $r;
				push @top, $name if $v > 0 && $k++ < $n;
			}
		}
		my %seen;
		for my $name (grep { !$seen{$_}++ } @top) {
			my ($a, $b) = ($o{$name}, $j{$name});
			my $ok = defined $a && defined $b &&
			    abs($a - $b) <= 0.05 * $rows{$name} + 0.001;
			printf "%s %8s %8s  %s\n", $ok ? "  " : "!!",
			    $a // "-", $b // "-", $name;
		}' "$n" "$ours" "$jep")
	if [ -n "$bad" ] && ! grep -q '^!!' <<<"$bad"; then
		pass "$desc ($(head -1 "$ours" | cut -f3) first)"
	else
		fail "$desc" "   jm4lw-prof  jeprof (MB; !! where they differ)" \
			"${bad:-nothing to compare}"
	fi
}

# jeprof_total FILE: the first line of our text table as jeprof writes
# it: our "Total: N MiB" is jeprof's "Total: N MB", the same number (jeprof
# divides by 2^20 too); an objects line is the same in both.
jeprof_total() {
	head -1 "$1" | sed 's/^Total: \(.*\) MiB$/Total: \1 MB/'
}

# frag_vs_bins PREFIX JSON STATS SIZE TOL EST: the worst class of a
# /jemalloc/fragmentation answer (JSON) held to jemalloc's own bins as
# jmsj reads them (STATS), SIZE the class's size: its free regions,
# (curslabs x nregs - curregs) x SIZE, within 1 %; and EST (a jq path in
# JSON: sampled live bytes) less the sampled objects jemalloc keeps
# outside slabs (promoted to a large extent, a fraction
# exp(-size/period) of them in slabs), curregs x SIZE within TOL (a
# fraction; $LG is lg_prof_sample). PREFIX starts each line. Sets regs
# (the class's curregs) for the caller's further checks.
frag_vs_bins() {
	local pre=$1 json=$2 stats=$3 size=$4 tol=$5 path=$6 j nregs slabs want got est
	j=$(jq '.worst[0].bin' "$json")
	read -r nregs < <(jq -r ".jemalloc.arenas.bin[$j].nregs" "$stats")
	read -r slabs regs < <(jq -r ".jemalloc[\"stats.arenas\"].merged.bins[$j] | \"\(.curslabs) \(.curregs)\"" "$stats")
	want=$(((slabs * nregs - regs) * size))
	got=$(jq '.worst[0].free_bytes' "$json")
	if awk -v g="$got" -v w="$want" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(w > 0 && d <= w / 100) }'; then
		pass "${pre}the class's free regions are jemalloc's bins' within 1 % ($got vs $want)"
	else
		fail "${pre}the class's free regions are jemalloc's bins'" "got $got, jmsj says $want"
	fi
	est=$(jq "$path" "$json")
	if awk -v e="$est" -v r="$regs" -v s="$size" -v lg="$LG" -v t="$tol" 'BEGIN {
		in_slabs = e * exp(-s / 2 ^ lg); live = r * s
		d = in_slabs - live; if (d < 0) d = -d; exit !(live > 0 && d <= live * t) }'; then
		pass "${pre}the sampled live bytes ($path) are curregs x size within sampling error ($est)"
	else
		fail "${pre}the sampled live bytes ($path) are curregs x size" "estimate $est, curregs $regs x $size"
	fi
}
