#!/bin/bash
# shellcheck disable=SC2119 # lib.sh's stop_daemon: its argument is optional
# The profile formats, typed by hand where people read them, against the
# one list the code goes by: views[] in prof/view.c (each row with a
# .name is a format; those with a .render are drawn from a parsed
# profile). A format added to or dropped from views[] must show in
#   - jm4lw-prof's usage (-f a|b|...) and its "-f NAME" lines: the drawn
#     formats, the ones it takes;
#   - the route index (GET /, from http/routes.c): the format=a|b|...
#     lists of /jemalloc/profile and /jemalloc/dump, every format;
#   - the page (/jemalloc, http/page/jemalloc.html): its dump download
#     links, every format, from /jemalloc/formats, which the page asks.
# Each list is held to views[] both ways: a name missing is a format
# nobody is told of, a name too many one that no longer exists. The
# usage, the index and the page are read from the built programs, so a
# build that lags its sources fails too.
#
#	bash formats.sh   (JM4LWD, JM4LW_PROF; VIEW_C: another view.c to read)
. "$(dirname "$0")/../lib.sh"

need curl perl python3
JM4LW_PROF=${JM4LW_PROF:-$ROOT/build/jm4lw-prof}
VIEW_C=${VIEW_C:-$ROOT/prof/view.c}

# views ALL|DRAWN: the format names of views[] in $VIEW_C (DRAWN: the rows
# with a renderer), sorted, one line, space-separated.
views() {
	perl -e '
		use strict; use warnings;
		my ($file, $which) = @ARGV;
		open(my $fh, "<", $file) or die "$file: $!\n";
		my $src = do { local $/; <$fh> };
		$src =~ s{/\*.*?\*/}{}gs;
		my ($table) = $src =~ /\bviews\[[A-Z_]*\]\s*=\s*\{(.*?)\n\};/s
		    or die "$file: no views[] table\n";
		my @names;
		for my $row (split /\[DUMP_VIEW_\w+\]\s*=/, $table) {
			my ($n) = $row =~ /\.name\s*=\s*"([^"]+)"/ or next;
			next if $which eq "DRAWN" && $row !~ /\.render\s*=/;
			push @names, $n;
		}
		print join(" ", sort @names), "\n";' "$VIEW_C" "$1"
}

# words: the words of stdin (split on "|", spaces and new lines), sorted,
# one line.
words() {
	sed 's/[| ]/\n/g' | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//'
	echo
}

ALL=$(views ALL) || die "read views[] in $VIEW_C"
DRAWN=$(views DRAWN) || die "read views[] in $VIEW_C"
# Fewer would be a table this script no longer reads, not a pass.
if [ "$(wc -w <<<"$ALL")" -lt 3 ] || [ "$(wc -w <<<"$DRAWN")" -lt 3 ]; then
	die "views[] in $VIEW_C: formats found: \"$ALL\", drawn: \"$DRAWN\""
fi
echo "# views[]: $ALL; drawn: $DRAWN"

case_prof() {
	local u=$T/prof.usage got
	"$JM4LW_PROF" --help >"$u" 2>&1 || { fail "jm4lw-prof --help exits 0" "$(cat "$u")"; return; }
	# The first usage line's "-f a|b|c" (the second, --trend's, has its own).
	got=$(sed -n '1s/^usage: jm4lw-prof \[-f \([a-z|]*\)\].*/\1/p' "$u" | words)
	assert_eq "jm4lw-prof's usage: -f takes the drawn formats of views[]" "$DRAWN" "$got"
	# Each format's own line, up to --trend's usage.
	got=$(sed -n '2,/^usage:/s/^  -f \([a-z]*\) .*/\1/p' "$u" | words)
	assert_eq "jm4lw-prof's usage: a \"-f NAME\" line for each drawn format" "$DRAWN" "$got"
}

case_index() {
	local d path got
	d=$(scratch index)
	start_daemon -C "$d" -- -l 127.0.0.1:0 -D "$d" || return
	assert_http "GET / (the route index)" 200 index / || return
	for path in /jemalloc/profile /jemalloc/dump; do
		got=$(grep -F "<a href=\"$path\">" "$T/index.body" |
			sed -n 's/.*format=\([a-z|]*\).*/\1/p' | words)
		assert_eq "GET /: $path's format= list is views[]'s" "$ALL" "$got"
	done
	assert_http "GET /jemalloc (the page)" 200 page /jemalloc || return
	assert_grep "the page draws its download links from /jemalloc/formats" \
		'req\("/jemalloc/formats"' "$T/page.body"
	assert_http "GET /jemalloc/formats" 200 fmts /jemalloc/formats || return
	got=$(python3 -c 'import json, sys
print("\n".join(f["name"] for f in json.load(open(sys.argv[1]))["formats"]))' \
		"$T/fmts.body" | words)
	assert_eq "/jemalloc/formats (the page's download links) is views[]'s" "$ALL" "$got"
	stop_daemon
}

case_prof
case_index
finish
