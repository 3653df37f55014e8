# lib.sh — the one harness of the shell test suites (integration, abuse,
# agent). Source it, do not run it:
#
#	. "$(dirname "$0")/../lib.sh"
#
# It gives every test its own scratch directory ($T), a pass/fail counter
# whose last line is "N passed, M failed", and start_daemon/stop_daemon for
# real jm4lwd processes on ports the kernel picks, so tests can run in
# parallel. Everything started here is killed on exit.
#
# Binaries come from the environment (ctest sets them), else from build/:
#	JM4LWD        jm4lwd
#	JM4LW_CLIENT  the jm4lw client
#	JEPROF_HOST   tests/host/jeprof_host
#	JM4LW_RUN     jm4lw-run (the preload agent's wrapper)
#	LEAK_HOST     tests/host/leak_host
# KEEP_TMP=1 keeps the scratch directory for a post-mortem.
# JM4LWD_WRAP, if set, is a command prefix start_daemon puts before jm4lwd
# (split on white space, e.g. "valgrind --error-exitcode=99 --quiet"); the
# wrapper must exec jm4lwd in the same process and pass its exit status on,
# so stop_daemon's exit-status check catches what it reports. Under a
# wrapper the bounds below that wait on jm4lwd are $SLOW (5) times longer.
set -u

TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$TESTS_DIR/.." && pwd)
JM4LWD=${JM4LWD:-$ROOT/build/jm4lwd}
JM4LW_CLIENT=${JM4LW_CLIENT:-$ROOT/build/jm4lw}
JEPROF_HOST=${JEPROF_HOST:-$ROOT/build/tests/host/jeprof_host}
JM4LW_RUN=${JM4LW_RUN:-$ROOT/build/jm4lw-run}
LEAK_HOST=${LEAK_HOST:-$ROOT/build/tests/host/leak_host}
BENCH_HOST=${BENCH_HOST:-$ROOT/build/tests/bench/bench_host}
JM4LWD_WRAP=${JM4LWD_WRAP:-}
read -ra _wrap <<<"$JM4LWD_WRAP"
SLOW=1
[ -n "$JM4LWD_WRAP" ] && SLOW=5

# The documented way to run with profiling on but sampling off until jmep.
# shellcheck disable=SC2034 # used by the scripts sourcing this
PROF_ON=MALLOC_CONF=prof:true,prof_active:false
# The agent's HTTP on a free port (the default 9182 is one port for every
# suite running in parallel); a case that tests HTTP sets its own.
export JM4LW_HTTP_LISTEN=${JM4LW_HTTP_LISTEN-127.0.0.1:0}

T=$(mktemp -d "${TMPDIR:-/tmp}/jm4lw-test.XXXXXX") || exit 2
passed=0
failed=0
skipped=0
_pids=()  # every process track took, for the exit trap ("-PID": a group)
_at_exit=()  # commands at_exit registered, run after the processes are gone

# Stop what we started (TERM, then KILL after 5 s), remove the scratch dir.
_lib_cleanup() {
	local pid i
	for pid in "${_pids[@]}"; do
		kill -TERM -- "$pid" 2>/dev/null
	done
	for pid in "${_pids[@]}"; do
		for i in $(seq $((50 * SLOW))); do
			_alive "${pid#-}" || break
			sleep 0.1
		done
		kill -KILL -- "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	for i in "${_at_exit[@]}"; do
		eval "$i"
	done
	if [ "${KEEP_TMP:-0}" = 1 ]; then
		echo "# scratch kept in $T" >&2
	else
		rm -rf "$T"
	fi
}
trap _lib_cleanup EXIT
trap 'echo "interrupted"; exit 2' INT TERM HUP

# track [-g] PID: stop PID on exit (TERM, then KILL after 5 s). With -g,
# PID leads its own process group (setsid) and the whole group goes.
track() {
	if [ "$1" = -g ]; then
		_pids+=("-$2")
	else
		_pids+=("$1")
	fi
}

# at_exit COMMAND: run COMMAND (a string, eval'ed) on exit, after every
# process started here is gone and before the scratch directory is removed
# (e.g. to unmount a file system mounted under $T).
at_exit() {
	_at_exit+=("$1")
}

# --- results -------------------------------------------------------------------

pass() {
	passed=$((passed + 1))
	echo "ok - $1"
}

# fail DESC [DETAIL...]: record a failure; each DETAIL is printed indented.
fail() {
	local line
	failed=$((failed + 1))
	echo "FAIL - $1"
	shift
	for line in "$@"; do
		printf '%s\n' "$line" | sed 's/^/    /'
	done
}

skip() {
	skipped=$((skipped + 1))
	echo "skip - $1"
}

# Abort the script: a prerequisite is missing, nothing else can be tested.
die() {
	fail "$1"
	finish
}

# Print the totals as the last line; exit non-zero on any failure (or when
# nothing at all was checked, which would be a broken script, not a pass).
finish() {
	[ "$skipped" -gt 0 ] && echo "# $skipped skipped"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ] && exit 0
	exit 1
}

# Show bytes unambiguously (for failure messages): at most 400 of them.
show() {
	head -c 400 "$1" | od -An -c | head -8
}

# Show a file's tail as text (daemon logs).
show_tail() {
	echo "--- tail of $1:"
	tail -n "${2:-15}" "$1" 2>/dev/null
}

# --- assertions ------------------------------------------------------------------
# Each records one pass or fail and returns 0/1, so callers may stop early.

# assert_eq DESC EXPECTED ACTUAL
assert_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "expected: $(printf '%q' "$2")" "actual:   $(printf '%q' "$3")"
		return 1
	fi
}

# assert_bytes DESC FILE EXPECTED: FILE holds exactly the bytes EXPECTED
# (a printf format, so '\n' may be written as such).
assert_bytes() {
	# shellcheck disable=SC2059
	if cmp -s "$2" <(printf -- "$3"); then
		pass "$1"
	else
		fail "$1" "expected bytes:" "$(printf -- "$3" | od -An -c | head -4)" \
			"actual bytes ($(wc -c <"$2") in all):" "$(show "$2")"
		return 1
	fi
}

# assert_grep DESC ERE FILE: some line of FILE matches ERE.
assert_grep() {
	_assert_found -E "no line matches /$2/ in $3:" "$@"
}

# assert_grep_F DESC STRING FILE: FILE contains STRING literally.
assert_grep_F() {
	_assert_found -F "\"$2\" not found in $3:" "$@"
}

# _assert_found GREP_OPTION WHY DESC PATTERN FILE: the two above.
_assert_found() {
	local opt=$1 why=$2
	shift 2
	if grep "$opt" -q -- "$2" "$3"; then
		pass "$1"
	else
		fail "$1" "$why" "$(head -c 600 "$3")"
		return 1
	fi
}

# assert_no_grep DESC ERE FILE: no line of FILE matches ERE.
assert_no_grep() {
	if ! grep -Eq -- "$2" "$3"; then
		pass "$1"
	else
		fail "$1" "unexpected match of /$2/ in $3:" "$(grep -E -- "$2" "$3" | head -5)"
		return 1
	fi
}

# assert_cmd DESC CMD...: CMD exits 0 (its output is shown on failure).
assert_cmd() {
	local desc=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		pass "$desc"
	else
		fail "$desc" "command: $*" "exit status $rc" "$(printf '%s' "$out" | head -20)"
		return 1
	fi
}

# need TOOL...: a missing tool is a failure (CI installs them all).
need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null ||
			die "$t is not installed (scripts/deps.sh test installs it)"
	done
}

# --- processes -------------------------------------------------------------------

# Is PID alive and not a zombie? kill -0 says whether it exists (a zombie
# too); its state in /proc says whether it is a zombie. A stat that cannot
# be read while kill -0 finds the process is not taken for its end: it
# vanishes for a moment while a multi-threaded process exits, or while
# LeakSanitizer stops it to scan.
_alive() {
	local st
	kill -0 "$1" 2>/dev/null || return 1
	st=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null)
	[ "$st" != Z ]
}

# _running PID: PID, a job of this shell, has not ended: bash's job table,
# which waitpid keeps (a job ends when its last thread has, and only
# then can its status be had), with no look at /proc.
_running() {
	jobs -rp | grep -qx "$1"
}

# scratch NAME: make and print a fresh directory under $T. (mktemp, not a
# counter: this runs in $(...), where a counter would not count.)
scratch() {
	mktemp -d "$T/$1.XXXX"
}

# wait_exit PID SECONDS: wait for our child PID to end; sets EXIT_STATUS.
# Returns 1 (and kills it) if it is still running after SECONDS. PID must
# be a job of this shell (started with & here): its end is read from the
# job table (_running), not /proc.
wait_exit() {
	local pid=$1 n=$(($2 * 10)) i
	for i in $(seq "$n"); do
		_running "$pid" || break
		sleep 0.1
	done
	if _running "$pid"; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		EXIT_STATUS=timeout
		return 1
	fi
	wait "$pid" 2>/dev/null
	EXIT_STATUS=$?
	_forget "$pid"
	return 0
}

_forget() {
	local p keep=()
	for p in "${_pids[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	_pids=("${keep[@]}")
}

# start_daemon [-C DIR] [-e VAR=VALUE]... [-L NLISTENERS] [--] ARGS...
#
# Start jm4lwd ARGS in the foreground of a background job, with MALLOC_CONF
# unset unless -e sets it, working directory DIR (default: a new scratch
# dir), stderr in $DLOG, behind $JM4LWD_WRAP if that is set. Waits (up to
# 10 s, times $SLOW) for NLISTENERS (default 1)
# "listening on" lines and sets:
#	PID    the daemon's pid
#	PORT   the first listener's port;  PORTS  all of them
#	HTTP_PORT  the HTTP listener's (-W 127.0.0.1:0 unless ARGS say -W)
#	ADDRS  the listeners as logged (127.0.0.1:PORT, [::1]:PORT)
#	D      its directory;  DLOG  its stderr
# Returns 1 after recording a failure if it does not come up.
start_daemon() {
	local envs=() nl=1 i re n wrap=()
	# Read here, not once at the top: a case may set it for one daemon.
	read -ra wrap <<<"${JM4LWD_WRAP:-}"
	D=
	while [ $# -gt 0 ]; do
		case $1 in
		-C) D=$2; shift 2 ;;
		-e) envs+=("$2"); shift 2 ;;
		-L) nl=$2; shift 2 ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	[ -n "$D" ] || D=$(scratch daemon)
	# HTTP on a free port unless the case says where (-W): suites run in
	# parallel, and the default 9182 is one port for all of them.
	case " $* " in
	*" -W "*) ;;
	*) set -- -W 127.0.0.1:0 "$@" ;;
	esac
	DLOG=$D/jm4lwd.log
	: >"$DLOG"
	(cd "$D" && exec env -u MALLOC_CONF "${envs[@]}" "${wrap[@]}" "$JM4LWD" "$@") \
		</dev/null >>"$DLOG" 2>&1 &
	PID=$!
	track "$PID"
	# The subshell execs env, which execs jm4lwd (or the wrapper, which
	# execs or becomes it): $! is the daemon's pid.
	re='^jm4lwd: listening on (127\.0\.0\.1|\[::1\]):[0-9]+$'
	for i in $(seq $((100 * SLOW))); do
		n=$(grep -Ec "$re" "$DLOG")
		[ "$n" -ge "$nl" ] && break
		_alive "$PID" || break
		sleep 0.1
	done
	if [ "$n" -lt "$nl" ]; then
		fail "jm4lwd $* came up with $nl listener(s) within $((10 * SLOW)) s" \
			"$(show_tail "$DLOG")"
		return 1
	fi
	# HTTP binds right after the words: its port, unless -W "" is off.
	HTTP_PORT=
	for i in $(seq $((20 * SLOW))); do
		HTTP_PORT=$(sed -n 's/^jm4lwd: HTTP listening on .*:\([0-9]*\)$/\1/p' "$DLOG" | head -1)
		[ -n "$HTTP_PORT" ] && break
		case " $* " in *" -W  "*) break ;; esac
		_alive "$PID" || break
		sleep 0.05
	done
	mapfile -t ADDRS < <(grep -E "$re" "$DLOG" | sed 's/^jm4lwd: listening on //')
	PORTS=()
	for i in "${ADDRS[@]}"; do
		PORTS+=("${i##*:}")
	done
	PORT=${PORTS[0]}
	return 0
}

# stop_daemon [SIGNAL]: send SIGTERM (or SIGNAL) and check a clean exit 0
# within 10 s (times $SLOW). Records a pass or a fail. Under JM4LWD_WRAP a
# non-zero status is also what the wrapper reports (valgrind's
# --error-exitcode), and its report is in the log.
stop_daemon() {
	local sig=${1:-TERM}
	kill -"$sig" "$PID" 2>/dev/null
	if ! wait_exit "$PID" $((10 * SLOW)); then
		fail "jm4lwd exits on SIG$sig" "still running after $((10 * SLOW)) s, killed" \
			"$(show_tail "$DLOG")"
		return 1
	fi
	if [ "$EXIT_STATUS" = 0 ]; then
		pass "jm4lwd exits 0 on SIG$sig${JM4LWD_WRAP:+ (under ${_wrap[0]}: no errors)}"
	elif [ -n "$JM4LWD_WRAP" ]; then
		fail "jm4lwd exits 0 on SIG$sig under ${_wrap[0]}" \
			"exit status $EXIT_STATUS: ${_wrap[0]} or jm4lwd reported errors" \
			"$(show_tail "$DLOG" 60)"
		return 1
	else
		fail "jm4lwd exits 0 on SIG$sig" "exit status $EXIT_STATUS" \
			"$(show_tail "$DLOG")"
		return 1
	fi
}

# wait_log ERE [SECONDS]: wait until the daemon log has a line matching ERE
# (SECONDS times $SLOW).
wait_log() {
	local i
	for i in $(seq $((${2:-10} * 10 * SLOW))); do
		grep -Eq -- "$1" "$DLOG" && return 0
		sleep 0.1
	done
	return 1
}

# --- profiles against jeprof -------------------------------------------------------

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
	jb=$(timeout 300 jeprof --text --show_bytes ${4:+--base="$4"} "$bin" "$prof" 2>/dev/null |
		sed -n 's/^Total: \([0-9]*\) B$/\1/p')
	jo=$(timeout 300 jeprof --text --inuse_objects ${4:+--base="$4"} "$bin" "$prof" 2>/dev/null |
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
			next if $. == 1;
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
# "object+0xSTART" names (a function no symbol contains, issue 21) as
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

# --- talking to the daemon ---------------------------------------------------------

# start_jeprof_host NAME|DIR [VAR=VALUE...]: tests/host/jeprof_host with
# profiling on (sampling off) and the VARs, in scratch dir NAME (or in DIR,
# an existing directory), dumping to $D/dumps; its port from the "listening
# on" line on its stdout. Sets D, DLOG, PID and PORT; returns 1 after
# recording a failure.
start_jeprof_host() {
	local name=$1
	shift
	if [ -d "$name" ]; then D=$name; else D=$(scratch "$name"); fi
	mkdir -p "$D/dumps"
	DLOG=$D/host.err
	: >"$D/host.out"
	(cd "$D" && exec env "$PROF_ON" "$@" "$JEPROF_HOST" "$D/dumps") \
		</dev/null >"$D/host.out" 2>"$DLOG" &
	PID=$!
	track "$PID"
	PORT=
	for _ in $(seq $((100 * SLOW))); do
		PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$D/host.out")
		[ -n "$PORT" ] && break
		_alive "$PID" || break
		sleep 0.1
	done
	if [ -z "$PORT" ]; then
		fail "jeprof_host ($name) printed its port within 10 s" \
			"stdout: $(cat "$D/host.out")" "$(show_tail "$DLOG")"
		return 1
	fi
}

# stop_jeprof_host [PREFIX]: SIGTERM the jeprof_host in $PID and check
# that it exits 0 within 10 s (never under JM4LWD_WRAP, so not times
# $SLOW); PREFIX goes before the description ("growth: ").
stop_jeprof_host() {
	kill -TERM "$PID"
	if wait_exit "$PID" 10 && [ "$EXIT_STATUS" = 0 ]; then
		pass "${1:-}jeprof_host exits 0 on SIGTERM"
	else
		fail "${1:-}jeprof_host exits 0 on SIGTERM" "status $EXIT_STATUS" "$(show_tail "$DLOG")"
	fi
}

# leftovers DIR...: what dumps left behind in DIRs, one name and a space
# each: hidden .jm4lw.* entries, except staging directories
# (.jm4lw.PID.XXXXXX, where jemalloc writes; a live module keeps its own)
# while they are empty.
leftovers() {
	local f n
	while IFS= read -r f; do
		n=${f##*/}
		if [ -d "$f" ] && [ ! -L "$f" ] && [ -z "$(ls -A "$f")" ] &&
			[[ $n =~ ^\.jm4lw\.[0-9]+\.[A-Za-z0-9]{6}$ ]]; then
			continue
		fi
		printf '%s ' "$n"
	done < <(find "$@" -mindepth 1 -maxdepth 1 -name '.jm4lw.*' 2>/dev/null)
}

# have_ipv6: this machine has ::1 to bind to.
have_ipv6() {
	python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' \
		2>/dev/null
}

# free_port [HOST]: a port nobody listens on right now on HOST (default
# 127.0.0.1; "::1" for IPv6), as the kernel picks it.
free_port() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET)
s.bind((sys.argv[1], 0))
print(s.getsockname()[1])' "${1:-127.0.0.1}"
}

# wait_port FILE: the port of the first "listening on 127.0.0.1:PORT" line
# a program wrote to FILE (up to 20 s), or nothing and status 1.
wait_port() {
	local i port
	for i in $(seq 1 200); do
		port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$1" | head -1)
		if [ -n "$port" ]; then echo "$port"; return 0; fi
		sleep 0.1
	done
	return 1
}

# ask WORD [PORT [HOST]]: send WORD as an operator would, with nc.openbsd
# (it exits once the server closes), reply on stdout. The outer timeout
# only keeps a hung server from hanging the suite.
ask() {
	printf '%s\n' "$1" | timeout $((30 * SLOW)) nc.openbsd "${3:-127.0.0.1}" "${2:-$PORT}"
}

# alive DESC [PORT [HOST]]: the daemon still answers ruok with exactly imok.
# It is not a liveness probe only: the process must not have died either.
alive() {
	local f="$T/alive.out"
	ask ruok "${2:-$PORT}" "${3:-127.0.0.1}" >"$f" 2>&1
	if ! _alive "$PID"; then
		fail "$1" "jm4lwd (pid $PID) is gone" "$(show_tail "$DLOG")"
		return 1
	fi
	assert_bytes "$1" "$f" 'imok'
}

# mntr_value KEY [PORT]: one figure from mntr (empty if absent).
mntr_value() {
	ask mntr "${2:-$PORT}" | awk -F '\t' -v k="$1" '$1 == k { print $2 }'
}

# wait_quiet DESC: within 10 s (times $SLOW) the daemon holds no connection
# but the mntr one asking (no leak after the case before).
wait_quiet() {
	local i v=
	for i in $(seq $((50 * SLOW))); do
		v=$(mntr_value jm4lw_open_connections)
		[ "$v" = 1 ] && break
		sleep 0.2
	done
	assert_eq "$1" 1 "$v"
}

# raw_case DESC ARGS...: run the raw-socket helper (for bytes no ordinary
# client sends) and record its verdict with the line it printed.
raw_case() {
	local desc=$1 r
	shift
	if r=$(timeout $((60 * SLOW)) python3 "$TESTS_DIR/integration/raw.py" "$@" 2>&1); then
		pass "$desc ($r)"
	else
		fail "$desc" "raw.py $*: $r"
		return 1
	fi
}

# --- HTTP --------------------------------------------------------------------------

# hreq NAME PATH [CURL ARGS...]: one request to the daemon's HTTP face
# ($HTTP_PORT) with curl; the body in $T/NAME.body, the headers in
# $T/NAME.head, and the status printed ("000": no answer).
hreq() {
	local name=$1 path=$2
	shift 2
	timeout $((30 * SLOW)) curl -s -o "$T/$name.body" -D "$T/$name.head" \
		-w '%{http_code}' "$@" "http://127.0.0.1:$HTTP_PORT$path"
}

# hheader NAME HEADER: the value of HEADER in $T/NAME.head (CR cut off).
hheader() {
	awk -v h="$2" '
		index(tolower($0), tolower(h) ":") == 1 {
			sub(/^[^:]*:[ \t]*/, ""); sub(/\r$/, ""); print; exit }' "$T/$1.head"
}

# assert_http DESC WANT NAME PATH [CURL ARGS...]: hreq answers WANT.
assert_http() {
	local desc=$1 want=$2 name=$3 got
	shift 3
	got=$(hreq "$name" "$@")
	if [ "$got" = "$want" ]; then
		pass "$desc ($want)"
	else
		fail "$desc" "expected status $want, got $got" \
			"$(head -c 300 "$T/$name.body" 2>/dev/null)"
		return 1
	fi
}

# closed_after PORT BYTES [BOUND]: connect to 127.0.0.1:PORT, send BYTES
# (a printf format) and nothing more; print the seconds until the server
# closed and what it sent ("eof"/"reset"), or "timeout" past BOUND (30) s.
closed_after() {
	python3 -c 'import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(sys.argv[2][:-1].encode("latin-1"))
t0 = time.monotonic(); got = b""; s.settimeout(float(sys.argv[3]))
try:
    while True:
        b = s.recv(65536)
        if not b:
            end = "eof"; break
        got += b
except socket.timeout:
    end = "timeout"
except OSError:
    end = "reset"
print("%.2f %s %d bytes: %r" % (time.monotonic() - t0, end, len(got), got[:40]))' \
		"$1" "$(printf -- "$2" && echo .)" "${3:-30}"
}

# --- the agent in a real program --------------------------------------------------

# run_page SCRIPT MIN SECS ARGS...: tests/integration/SCRIPT (a browser
# driver printing "ok|FAIL<TAB>what<TAB>detail" lines), given SECS, its
# lines as this harness's passes and failures; fewer than MIN lines is a
# failure of its own.
run_page() {
	local script=$1 min=$2 secs=$3 res line what detail n=0
	shift 3
	res=$T/$script.results
	timeout "$secs" python3 "$TESTS_DIR/integration/$script" "$@" \
		>"$res" 2>"$T/$script.log"
	while IFS=$'\t' read -r line what detail; do
		n=$((n + 1))
		case $line in
		ok) pass "page: $what" ;;
		FAIL) fail "page: $what" "${detail:-}" ;;
		*) fail "$script printed a line it should not have" "$line $what" ;;
		esac
	done <"$res"
	[ "$n" -ge "$min" ] || fail "$script ran its checks (it printed $n)" \
		"$(tail -20 "$T/$script.log")"
}

# start_leak_host DIR LG_SAMPLE: tests/host/leak_host with its config in
# DIR/conf (the caller writes it), dumping into DIR/dumps, with
# lg_prof_sample:LG_SAMPLE and sampling on; its stdout (the "listening on"
# lines, a fork child's) in DIR/out, its log in DIR/err. Waits (10 s) for
# both listeners. Sets LPID, LPORT (the words') and LHPORT (HTTP's);
# returns 1 if it did not listen.
start_leak_host() {
	local dir=$1 lg=$2 host
	[ -x "$LEAK_HOST" ] || die "$LEAK_HOST is not executable"
	host=$(realpath "$LEAK_HOST") # it runs in $dir
	mkdir -p "$dir/dumps"
	(cd "$dir" && exec env JM4LW_CONF="$dir/conf" \
		MALLOC_CONF="prof:true,prof_active:true,lg_prof_sample:$lg" \
		"$host" "$dir/dumps") </dev/null >"$dir/out" 2>"$dir/err" &
	LPID=$!
	track "$LPID"
	for _ in $(seq $((100 * SLOW))); do
		LPORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$dir/out")
		LHPORT=$(sed -n 's/^http on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$dir/out")
		[ -n "$LPORT" ] && [ -n "$LHPORT" ] && return 0
		_alive "$LPID" || break
		sleep 0.1
	done
	return 1
}

# start_redis_agent NAME [VAR=VALUE...]: Debian's redis-server with the
# preload agent (jm4lw-run --prof-active: sampling on), its words and its
# HTTP on ports the kernel picks, in scratch dir NAME, with the VARs in
# its environment (say MALLOC_CONF=lg_prof_sample:15). Waits (20 s) for
# the agent's two "listening on" lines and redis's PING. Sets RDIR, RPID
# (redis-server's pid: jm4lw-run execs it), RPORT (redis's port), APORT
# (the words') and AHTTP (HTTP's); returns 1 after recording a failure.
start_redis_agent() {
	local name=$1 i
	shift
	RDIR=$(scratch "$name")
	RPORT=$(free_port)
	APORT=
	AHTTP=
	(cd "$RDIR" && exec env JM4LW_DUMP_DIR="$RDIR" \
		JM4LW_HTTP_LISTEN=127.0.0.1:0 "$@" "$JM4LW_RUN" --prof-active \
		-l 127.0.0.1:0 -- redis-server --port "$RPORT" --bind 127.0.0.1 \
		--save "" --appendonly no --dir "$RDIR") \
		</dev/null >"$RDIR/out" 2>"$RDIR/err" &
	RPID=$!
	track "$RPID"
	for i in $(seq 200); do
		APORT=$(sed -n 's/^jm4lw agent\[[0-9]*\]: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$RDIR/err" | head -1)
		AHTTP=$(sed -n 's/^jm4lw agent\[[0-9]*\]: HTTP listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$RDIR/err" | head -1)
		[ -n "$APORT" ] && [ -n "$AHTTP" ] &&
			redis-cli -p "$RPORT" ping 2>/dev/null | grep -qx PONG && return 0
		_alive "$RPID" || break
		sleep 0.1
	done
	fail "$name: redis-server with the agent: words, HTTP and PING within 20 s" \
		"words port: ${APORT:-none}, HTTP port: ${AHTTP:-none}" \
		"$(show_tail "$RDIR/err")"
	return 1
}

# http_get URL OUT: GET URL into OUT with curl (bounded); status 0 when
# the reply is 200.
http_get() {
	local code
	code=$(timeout $((60 * SLOW)) curl -sS -o "$2" -w '%{http_code}' "$1" 2>"$2.err")
	[ "$code" = 200 ]
}

# start_bench_host DIR MALLOC_CONF ARGS...: tests/bench/bench_host ARGS
# DIR, run in DIR (its stdout and stderr in DIR/out and DIR/err); sets
# PID and PORT, from its "listening on" line (building its heap may take
# a while: up to 60 s, times $SLOW). Returns 1 after recording a failure.
start_bench_host() {
	local d=$1 conf=$2
	shift 2
	(cd "$d" && exec env MALLOC_CONF="$conf" "$BENCH_HOST" "$@" "$d") \
		</dev/null >"$d/out" 2>"$d/err" &
	PID=$!
	track "$PID"
	PORT=
	for _ in $(seq $((600 * SLOW))); do
		PORT=$(sed -n 's/^bench_host: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$d/err")
		[ -n "$PORT" ] && break
		_alive "$PID" || break
		sleep 0.1
	done
	[ -n "$PORT" ] || { fail "bench_host started" "$(tail -3 "$d/err")"; return 1; }
}

# stop_host DESC [PID [LOG]]: SIGTERM the host PID (default $PID) and check
# that it exits 0 within 10 s; LOG (default $D/err) is shown if not.
stop_host() {
	local pid=${2:-$PID}
	kill -TERM "$pid"
	if wait_exit "$pid" 10 && [ "$EXIT_STATUS" = 0 ]; then
		pass "$1 exits 0 on SIGTERM"
	else
		fail "$1 exits 0 on SIGTERM" "status $EXIT_STATUS" "$(tail -5 "${3:-$D/err}")"
	fi
}

# bench_dump NAME: a big real profile -- bench_host's 64 MiB over chains of
# 8-16 frames, sampled every 8 KiB: thousands of distinct stacks -- taken
# with jmfp in scratch dir NAME, the host stopped after. Its path in DUMP;
# returns 1 after recording a failure.
bench_dump() {
	local d
	d=$(scratch "$1")
	DUMP=
	start_bench_host "$d" prof:true,lg_prof_sample:13 -S -m 64 || return 1
	DUMP=$(ask jmfp "$PORT")
	kill "$PID"
	wait_exit "$PID" 10 >/dev/null 2>&1
	[ -s "$DUMP" ] || { fail "bench_host: jmfp wrote a profile" "$DUMP"; return 1; }
}

# leak_dumps: jeprof_host leaking with sampling on (scratch "leak_base"),
# and two jmfp dumps 1.5 s apart (dump_min_interval; ~35 MiB more leaked
# between): their paths in DUMP_A and DUMP_B. Returns 1 after recording
# a failure. The host keeps running (stop_jeprof_host).
leak_dumps() {
	start_jeprof_host leak_base JM4LW_TEST_LEAK=1 \
		MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:16 || return 1
	DUMP_A=$(ask jmfp)
	sleep 1.5
	DUMP_B=$(ask jmfp)
	[ -s "$DUMP_A" ] && [ -s "$DUMP_B" ] ||
		{ fail "--base: two dumps" "$DUMP_A" "$DUMP_B"; return 1; }
}
