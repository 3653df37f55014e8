# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# tests/bench/lib.sh — what the benchmark sections and the report share:
# the run's failures, the servers' start and stop, loadgen and
# redis-benchmark runs that record figures, perf, and the report's text;
# over the pieces of the test harness it stands on (tests/lib/base.sh:
# log, free_port; tests/lib/figures.sh: the figures' arithmetic), sourced
# alone: tests/lib.sh itself would set -u, make a scratch directory and
# trap EXIT, which are run.sh's to set.
# Sourced by tests/bench/run.sh (measuring), tests/bench/busy.sh and
# tests/bench/report.sh (writing BENCHMARKS.md from a run's results), never
# run; they set BENCH_SRC (this directory).
#
# Figures live in R (key -> "v1 v2 ...", one value per round): sections
# record them with rec/bench/rb, the report reads them with med/pmed/...
# WORK is the run's directory (its results.sh, logs, perf and massif
# outputs, the commands noted per section); MD=$WORK/md the report's
# per-section Markdown.

# shellcheck source=../lib/base.sh
. "$BENCH_SRC/../lib/base.sh"
# shellcheck source=../lib/figures.sh
. "$BENCH_SRC/../lib/figures.sh"

# bench_cleanup: the EXIT trap of run.sh, busy.sh and snapshots.sh: stop
# what PIDS holds, by pid only (TERM, up to 5 s of grace, then KILL), and
# remove WORK unless KEEP=1.
# shellcheck disable=SC2317 # called by the trap
bench_cleanup() {
	local p i
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for i in $(seq 1 50); do
		local alive=0
		for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ "${KEEP:-0}" = 1 ]; then log "scratch kept in $WORK"; else rm -rf "$WORK"; fi
}

# Is section NAME (run.sh's SECTION_NAMES) to run? ONLY=... or --only
want() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }
# bench_fail MESSAGE...: the run fails (its exit status, the report's list
# of FAILURES), and goes on. Not the harness's fail (tests/lib/core.sh):
# that one counts a failed check of a test script on stdout; this one is
# said on stderr, where the bench logs, and kept for the report.
bench_fail() {
	FAILURES+=("$*")
	log "FAIL: $*"
}

# Stop one server we started.
stop() {
	local p=$1 i
	kill -TERM "$p" 2>/dev/null
	for i in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$p" 2>/dev/null
	wait "$p" 2>/dev/null
}

# bench_need TOOL WHY: TOOL is installed, else a bench_fail saying WHY and
# status 1, so a section without its tool is left out and the run goes on
# (the harness's need ends the test script).
bench_need() {
	command -v "$1" >/dev/null 2>&1 || { bench_fail "$1 is not installed ($2)"; return 1; }
}

# ---------------------------------------------------------------- helpers

# start NAME CMD...: run in the background (stdout+stderr to $WORK/NAME.log);
# the pid is in STARTED.
start() {
	local name=$1
	shift
	"$@" >"$WORK/$name.log" 2>&1 &
	STARTED=$!
	PIDS+=("$STARTED")
}

# busy_start, busy_stop: two busy loops beside what is measured (the
# 2 cores taken, as on a machine people profile), and gone again.
BUSY_PIDS=()
busy_start() {
	local i
	for i in 1 2; do
		start "busyloop$i" bash -c 'while :; do :; done'
		BUSY_PIDS+=("$STARTED")
	done
}
busy_stop() {
	local p
	for p in "${BUSY_PIDS[@]}"; do stop "$p"; done
	BUSY_PIDS=()
}

# wait_listen NAME PID PATTERN SECONDS: the port of the first "PATTERN
# 127.0.0.1:PORT" line in NAME's log.
wait_listen() {
	local name=$1 pid=$2 pat=$3 secs=$4 i port
	for i in $(seq 1 $((secs * 10))); do
		port=$(sed -n "s/.*$pat 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p" "$WORK/$name.log" | head -1)
		if [ -n "$port" ]; then echo "$port"; return 0; fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	tail -5 "$WORK/$name.log" >&2
	return 1
}

# CPU time (user, system) of a process and all its threads, in ticks.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12, $13 }'; }
TICK_US=$((1000000 / $(getconf CLK_TCK)))

# order ROUND ITEM...: the items, reversed on even rounds.
order() {
	local r=$1 i
	shift
	if [ $((r % 2)) = 1 ]; then echo "$@"; return; fi
	for ((i = $#; i > 0; i--)); do printf '%s ' "${!i}"; done
	echo
}

SECTION=0
# Note a command for the report (ports shown by name), once per section.
note_cmd() {
	local c=$1 p
	for p in "${!PORTNAME[@]}"; do c=${c//-p $p /-p \$${PORTNAME[$p]} }; c=${c//-p $p/-p \$${PORTNAME[$p]}}; done
	c=${c//$WORK/\$WORK}
	c=${c//$ROOT\//}
	touch "$WORK/cmds.$SECTION"
	grep -qxF -- "$c" "$WORK/cmds.$SECTION" || echo "$c" >>"$WORK/cmds.$SECTION"
}

# lg TAG PORT ARGS...: one loadgen run; the key=value line in LG.
lg() {
	local tag=$1 port=$2 rc a args=
	shift 2
	for a in "$@"; do [[ $a == *" "* ]] && a="\"$a\""; args+=" $a"; done
	note_cmd "${ON_CLIENT[*]} loadgen -p $port$args"
	LG=$("${ON_CLIENT[@]}" "$LOADGEN" -h 127.0.0.1 -p "$port" "$@" 2>"$WORK/lg.err")
	rc=$?
	if [ $rc -ne 0 ] || [ -z "$LG" ]; then
		bench_fail "$tag: loadgen -p $port $*: rc=$rc $(head -3 "$WORK/lg.err" | tr '\n' ' ') $LG"
		return 1
	fi
	return 0
}

# bench KEY PID PORT ARGS...: a measured loadgen run against server PID;
# records rps, p50, p99, reply bytes and the server's CPU per request.
bench() {
	local key=$1 pid=$2 port=$3 u0 s0 u1 s1 n
	shift 3
	read -r u0 s0 < <(cpu_ticks "$pid")
	if ! lg "$key" "$port" "$@"; then
		for u1 in rps p50 p99 max bytes resets cpu ucpu scpu; do rec "$key.$u1" nan; done
		return 1
	fi
	read -r u1 s1 < <(cpu_ticks "$pid")
	n=$(kv "$LG" requests)
	rec "$key.rps" "$(kv "$LG" rps)"
	rec "$key.p50" "$(kv "$LG" p50_us)"
	rec "$key.p99" "$(kv "$LG" p99_us)"
	rec "$key.max" "$(kv "$LG" max_us)"
	rec "$key.bytes" "$(kv "$LG" reply_bytes)"
	rec "$key.resets" "$(kv "$LG" resets)"
	rec "$key.cpu" "$(awk -v a="$u0" -v b="$s0" -v c="$u1" -v d="$s1" -v n="$n" -v t="$TICK_US" \
		'BEGIN { if (n > 0) printf "%.2f", (c - a + d - b) * t / n; else print "nan" }')"
	rec "$key.ucpu" "$(awk -v a="$u0" -v c="$u1" -v n="$n" -v t="$TICK_US" 'BEGIN { if (n > 0) printf "%.2f", (c - a) * t / n; else print "nan" }')"
	rec "$key.scpu" "$(awk -v b="$s0" -v d="$s1" -v n="$n" -v t="$TICK_US" 'BEGIN { if (n > 0) printf "%.2f", (d - b) * t / n; else print "nan" }')"
	log "$key: $(kv "$LG" rps) req/s p50 $(kv "$LG" p50_us) µs p99 $(kv "$LG" p99_us) µs"
}

# rb KEY PID PORT ARGS...: a redis-benchmark --csv run; records rps, p50
# and p99 (µs) and the server's CPU per request for each test it ran.
rb() {
	local key=$1 pid=$2 port=$3 u0 s0 u1 s1 out line test rps p50 p99 n total=0
	shift 3
	note_cmd "${ON_CLIENT[*]} redis-benchmark -p $port $*"
	read -r u0 s0 < <(cpu_ticks "$pid")
	if ! out=$("${ON_CLIENT[@]}" redis-benchmark -h 127.0.0.1 -p "$port" --csv "$@" 2>"$WORK/rb.err"); then
		bench_fail "$key: redis-benchmark $*: $(head -3 "$WORK/rb.err" | tr '\n' ' ')"
		for test in SET GET MEMORY_MALLOC-STATS; do rec "$key.$test.rps" nan; done
		rec "$key.cpu" nan
		return 1
	fi
	read -r u1 s1 < <(cpu_ticks "$pid")
	while IFS= read -r line; do
		case $line in '"test"'*) continue ;; esac
		test=$(awk -F'","' '{ gsub(/"/, "", $1); print $1 }' <<<"$line")
		rps=$(awk -F'","' '{ print $2 }' <<<"$line")
		p50=$(awk -F'","' '{ printf "%.1f", $5 * 1000 }' <<<"$line")
		p99=$(awk -F'","' '{ printf "%.1f", $7 * 1000 }' <<<"$line")
		[ -n "$rps" ] || continue
		test=${test// /_}
		rec "$key.$test.rps" "$rps"
		rec "$key.$test.p50" "$p50"
		rec "$key.$test.p99" "$p99"
		log "$key.$test: $rps req/s p50 $p50 µs p99 $p99 µs"
	done <<<"$out"
	case "$*" in
	*-n\ *) n=$(sed -n 's/.*-n \([0-9]*\).*/\1/p' <<<"$*"); total=$n ;;
	esac
	case "$*" in *-t\ set,get*) total=$((n * 2)) ;; esac
	[ "$(grep -vc '^"test"' <<<"$out")" -gt 0 ] ||
		{ bench_fail "$key: redis-benchmark printed no result"; return 1; }
	rec "$key.cpu" "$(awk -v a="$u0" -v b="$s0" -v c="$u1" -v d="$s1" -v n="$total" -v t="$TICK_US" \
		'BEGIN { if (n > 0) printf "%.2f", (c - a + d - b) * t / n; else print "nan" }')"
}

# The agent thread's context switches (voluntary + involuntary).
agent_switches() {
	local pid=$1 t
	for t in /proc/"$pid"/task/*; do
		if [ "$(cat "$t/comm" 2>/dev/null)" = jm4lw ]; then
			awk '/^voluntary_ctxt_switches|^nonvoluntary_ctxt_switches/ { s += $2 } END { print s }' "$t/status"
			return 0
		fi
	done
	return 1
}

# kB of VmRSS / RssAnon / RssFile.
rss() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# pstat KEY PID PORT ARGS...: perf stat of server PID under loadgen: CPU,
# system calls and epoll_ctl per request, one value per call.
pstat() {
	local key=$1 pid=$2 port=$3 n
	shift 3
	[ $PERF = 1 ] || return 0
	perf stat -x, -e task-clock,raw_syscalls:sys_enter,syscalls:sys_enter_epoll_ctl \
		-p "$pid" -o "$WORK/pstat.$key" -- "${ON_CLIENT[@]}" "$LOADGEN" -p "$port" "$@" \
		>"$WORK/pstat.$key.lg" 2>"$WORK/lg.err" || { bench_fail "$key: perf stat loadgen"; return 1; }
	note_cmd "perf stat -e task-clock,raw_syscalls:sys_enter,syscalls:sys_enter_epoll_ctl -p \$PID -- loadgen -p $port $*"
	n=$(kv "$(cat "$WORK/pstat.$key.lg")" requests)
	R[$key.n]=$n
	rec "$key.cpu_us" "$(awk -F, -v n="$n" '$3 == "task-clock" { printf "%.1f", $1 * 1000 / n }' "$WORK/pstat.$key")"
	rec "$key.sys" "$(awk -F, -v n="$n" '$3 == "raw_syscalls:sys_enter" { printf "%.1f", $1 / n }' "$WORK/pstat.$key")"
	rec "$key.epctl" "$(awk -F, -v n="$n" '$3 == "syscalls:sys_enter_epoll_ctl" { printf "%.1f", $1 / n }' "$WORK/pstat.$key")"
}

# prof KEY PID PORT ARGS...: perf record -g of server PID under loadgen:
# the share of each DSO, the top user-space symbols, epoll_ctl's and the
# formatting functions' inclusive shares.
prof() {
	local key=$1 pid=$2 port=$3
	shift 3
	[ $PERF = 1 ] || return 0
	perf record -q -g -e cpu-clock -F 4999 -p "$pid" -o "$WORK/prec.$key" -- \
		"${ON_CLIENT[@]}" "$LOADGEN" -p "$port" "$@" >/dev/null 2>"$WORK/lg.err" ||
		{ bench_fail "$key: perf record loadgen"; return 1; }
	note_cmd "perf record -g -e cpu-clock -F 4999 -p \$PID -- loadgen -p $port $*; perf report --sort dso; perf report --children --sort sym"
	perf report -i "$WORK/prec.$key" --sort dso --stdio --no-children -g none 2>/dev/null |
		awk '$1 ~ /%$/ { print $1, $2 }' >"$WORK/dso.$key"
	perf report -i "$WORK/prec.$key" --sort dso,sym --stdio --no-children -g none 2>/dev/null |
		awk '$1 ~ /%$/ && $0 !~ /\[k\]/' | head -12 >"$WORK/usym.$key"
	# Inclusive shares (with the kernel time below them): epoll_ctl, and
	# the libc formatting functions' own time.
	perf report -i "$WORK/prec.$key" --children --sort sym --stdio -g none 2>/dev/null |
		awk '$1 ~ /%$/ { print }' >"$WORK/child.$key"
	R[$key.epctl_pct]=$(awk '$3 == "[.]" && $4 == "epoll_ctl" { sub(/%/, "", $1); print $1; exit }' "$WORK/child.$key")
	R[$key.fmt_pct]=$(awk '$3 == "[.]" && $4 ~ /vfprintf|xsputn|strchrnul|_itoa|vsnprintf|inet_ntop|snprintf|_IO_str_|_IO_setb|_IO_no_init|_IO_old_init|_IO_enable_locks|outstring/ {
		sub(/%/, "", $2); t += $2 } END { printf "%.1f", t }' "$WORK/child.$key")
}

# Share (%) of DSO pattern in a profile.
dso() { awk -v p="$2" '$2 ~ p { s += $1 } END { printf "%.0f", s }' "$WORK/dso.$1" 2>/dev/null; }

MD=$WORK/md
mkdir -p "$MD"
# Section text goes to $MD/NN; the commands are added when it is written.
out() { echo "$*" >>"$MD/$SECTION"; }
cmds() {
	[ -s "$WORK/cmds.$SECTION" ] || return 0
	out ""
	out "Commands (\`\$PORT\` names stand for the free ports picked at run time):"
	out ""
	out '```'
	cat "$WORK/cmds.$SECTION" >>"$MD/$SECTION" 2>/dev/null
	out '```'
}
SUMMARY=()
summary() { SUMMARY+=("| $1 | $2 | $3 | $4 |"); }
# ---------------------------------------------------------------- stall
# stall KEY WORD SECS BENCH_HOST_ARGS...: bench_host -S over HEAP_MB with
# the ARGS (-T: thread mode), then ruok on its port while WORD runs back
# to back: a prober (one connection a millisecond, each latency recorded)
# against a loop of WORD on another connection, and the same prober with no
# WORD running first. Records KEY.{heap,size,traces,quiet.*,ruok.*,dumps,
# dump.p50,dump.max}; with -A in ARGS, the host threads' alst over each
# prober run as KEY.alst.{idle,during}.{ops_per_s,p50_ns,p99_ns,max_ns}.
# Section 7 runs it with jmfp, section 10 with jmfg.
stall() {
	local key=$1 word=$2 secs=$3 name=${1//./-} f chk=() churn=0 spid sport sweeper dumper
	shift 3
	[[ " $* " == *" -A "* ]] && churn=1
	[ "$word" = jmfp ] && chk=(-x /)
	mkdir -p "$WORK/sdumps"
	note_cmd "MALLOC_CONF=prof:true,lg_prof_sample:$STALL_LG ${ON_SERVER[*]} bench_host -S ${*:+$* }-m $HEAP_MB \$WORK/sdumps"
	start "$name" env MALLOC_CONF=prof:true,lg_prof_sample:$STALL_LG "${ON_SERVER[@]}" \
		"$BIN/bench_host" -S "$@" -m "$HEAP_MB" "$WORK/sdumps"
	spid=$STARTED
	if ! sport=$(wait_listen "$name" "$spid" "bench_host: listening on" 300); then
		bench_fail "bench_host $* did not start"
		stop "$spid"
		return 1
	fi
	PORTNAME[$sport]=BENCH_HOST_PORT
	R[$key.heap]=$(sed -n 's/^bench_host: \([0-9]*\) blocks, stats.allocated \([0-9]*\) MiB.*/\2 MiB, \1 blocks/p' "$WORK/$name.log" | head -1)
	# One first: its size and backtraces, and a warm cache.
	rm -f "$WORK/stall.one"
	if lg "$key.one" "$sport" -n 1 -w "$word" "${chk[@]}" -o "$WORK/stall.one"; then
		if [ "$word" = jmfp ]; then
			f=$(head -1 "$WORK/stall.one")
			R[$key.size]=$(stat -c %s "$f" 2>/dev/null)
			R[$key.traces]=$(grep -c '^@' "$f" 2>/dev/null)
		else
			R[$key.size]=$(kv "$LG" reply_bytes)
		fi
	fi
	# The same prober with no dump running: the machine's own noise,
	# measured in the same run, to read the figures against.
	[ $churn = 1 ] && alst "$key" "$sport" ""
	if bench "$key.quiet" "$spid" "$sport" -c 1 -i 1 -d "$secs" -w ruok; then
		rec "$key.quiet.n" "$(kv "$LG" requests)"
	fi
	[ $churn = 1 ] && alst "$key" "$sport" idle
	# The dumps would fill the disk: remove each once it is renamed in.
	( while kill -0 "$spid" 2>/dev/null; do rm -f "$WORK"/sdumps/*.heap; sleep 0.5; done ) &
	PIDS+=($!)
	sweeper=$!
	note_cmd "${ON_CLIENT[*]} loadgen -p $sport -c 1 -d $((secs + 1)) -w $word${chk[*]:+ ${chk[*]}} &   # then, 0.5 s later:"
	"${ON_CLIENT[@]}" "$LOADGEN" -h 127.0.0.1 -p "$sport" -c 1 -d $((secs + 1)) -w "$word" "${chk[@]}" \
		>"$WORK/stall.dumps" 2>"$WORK/stall.dumps.err" &
	dumper=$!
	[ $churn = 1 ] && alst "$key" "$sport" ""
	sleep 0.5
	if bench "$key.ruok" "$spid" "$sport" -c 1 -i 1 -d "$secs" -w ruok; then
		rec "$key.ruok.n" "$(kv "$LG" requests)"
	fi
	[ $churn = 1 ] && alst "$key" "$sport" during
	wait "$dumper" || bench_fail "$key: loadgen -w $word: $(head -3 "$WORK/stall.dumps.err" | tr '\n' ' ')"
	D=$(cat "$WORK/stall.dumps")
	rec "$key.dumps" "$(kv "$D" requests)"
	rec "$key.dump.p50" "$(kv "$D" p50_us)"
	rec "$key.dump.max" "$(kv "$D" max_us)"
	log "$key: $(kv "$D" requests) $word, median $(kv "$D" p50_us) µs"
	stop "$spid"
	kill "$sweeper" 2>/dev/null
	wait "$sweeper" 2>/dev/null
	rm -f "$WORK"/sdumps/*.heap
}
# alst KEY PORT [PHASE]: read bench_host's alst (which starts the next
# interval); with PHASE, record the interval's figures as KEY.alst.PHASE.*.
alst() {
	local a k
	a=$("$CLIENT_BIN" -h 127.0.0.1 -p "$2" -t 10 alst 2>&1)
	[[ $a == threads=* ]] || { bench_fail "$1: alst: $a"; return 1; }
	[ -n "${3:-}" ] || return 0
	note_cmd "jm4lw -p $2 alst   # before and after each prober run"
	for k in secs ops ops_per_s p50_ns p99_ns max_ns; do rec "$1.alst.$3.$k" "$(kv "$a" $k)"; done
	log "$1 alst $3: $a"
}

# ---------------------------------------------------------------- results

# save_results FILE: every variable the run set since BENCH_VARS0 (the
# figures in R, what each section found out: versions, ports' names,
# failures) and the settings the report prints, as bash that report.sh
# sources. Bash's own variables are left out.
save_results() {
	local n names=()
	while IFS= read -r n; do
		case $n in
		BASH* | FUNCNAME | PIPESTATUS | COMP_* | RANDOM | LINENO | SECONDS | \
			EPOCH* | SRANDOM | _ | BENCH_VARS0 | OPTIND | OPTARG | n | names) continue ;;
		esac
		names+=("$n")
	done < <(comm -13 <(printf '%s\n' "$BENCH_VARS0" | sort) <(compgen -v | sort))
	# and the settings that may come from the environment, which the
	# comparison above cannot see (report.sh run again has not got them).
	names+=(ONLY CC KEEP INPROC_SETTLE CLIENT_CPU SERVER_CPU ROUNDS AGENT_ROUNDS DUR HEAP_MB)
	{
		echo "# tests/bench results of $(date -u '+%Y-%m-%d %H:%M UTC') (tests/bench/report.sh reads this)"
		for n in "${names[@]}"; do
			declare -p "$n" 2>/dev/null | sed 's/^declare -- /declare -g /; s/^declare -\([a-zA-Z]\{1,\}\) /declare -g\1 /'
		done
	} >"$1"
}
