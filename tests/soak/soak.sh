#!/bin/bash
# soak: hours of running lose nothing. For --minutes N:
#   - the agent in Debian's redis-server under redis-benchmark load, with
#     dump_interval=2, dump_on_growth, a small dump_keep, dump_symbolized
#     and the history ring at 1 s, dumping into a small tmpfs;
#   - clients ask every word over both faces, round after round, and the
#     page's polling is replayed with curl (status every 2 s, history
#     since the last row, the dumps, the leaks);
#   - jm4lwd beside it, reloaded with SIGHUP every minute, and killed with
#     SIGKILL mid-dump and restarted: no half file is ever visible under a
#     dump name, the staging directories of dead processes are swept (or
#     still young), retention's count holds afterwards;
#   - the tmpfs is filled and freed again: dumps are refused (the disk
#     guard, a 503) and come back;
#   - tests/host/leak_host forks while its worker dumps, once a minute:
#     the child's jmfp succeeds.
# Checked and reported at the end: the host's RSS slope over the second
# half, its descriptors back to the start's, every reply well formed,
# every dump path a reply gave either present or deleted by retention (the
# log says so), no error line but the expected refusals.
#
#	bash tests/soak/soak.sh --minutes 2     (CI: ctest -L soak)
#
# Binaries from the environment (ctest) or build/: JM4LWD, JM4LW_RUN,
# LEAK_HOST. Without root (no tmpfs) the disk-full part is skipped with a
# line saying so.
. "$(dirname "$0")/../lib.sh"

MINUTES=2
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) MINUTES=$2; shift 2 ;;
	*) die "usage: soak.sh [--minutes N]" ;;
	esac
done
case $MINUTES in '' | *[!0-9]*) die "--minutes wants a number" ;; esac
SECONDS_TOTAL=$((MINUTES * 60))

need redis-server redis-benchmark redis-cli nc.openbsd curl timeout
[ -x "$JM4LW_RUN" ] || die "$JM4LW_RUN is not executable"

W=$(scratch soak)
DUMPS=$W/dumps
mkdir -p "$DUMPS" "$W/leak"
TMPFS=0
if mount -t tmpfs -o size=48m,mode=0700 tmpfs "$DUMPS" 2>"$W/mount.err"; then
	TMPFS=1
	at_exit "umount '$DUMPS' 2>/dev/null || umount -l '$DUMPS'"
else
	echo "# no tmpfs ($(head -1 "$W/mount.err")): the disk-full part is skipped"
fi

# --- the agent in redis-server -------------------------------------------
cat >"$W/agent.conf" <<CONF
dump_interval = 2
dump_min_interval = 1
dump_on_growth = 16M
growth_check_interval = 1
dump_keep = 6
dump_symbolized = on
dump_min_free = 4M
history_interval = 1
history_points = 86400
CONF
start_redis_agent soak_redis JM4LW_CONF="$W/agent.conf" \
	JM4LW_DUMP_DIR="$DUMPS" MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:17 ||
	die "the agent in redis-server"
ALOG=$RDIR/err
# The baseline: the fewest descriptors over 3 s (a scheduled dump's
# symbolizer holds the objects it reads open while it runs).
FD0=100000
for _ in $(seq 10); do
	n=$(fds_own "$RPID")
	[ "$n" -lt "$FD0" ] && FD0=$n
	sleep 0.3
done
echo "# redis-server $RPID: words on $APORT, HTTP on $AHTTP; $FD0 descriptors at start"

# Load: SET/GET over 20k keys of 512 B, pipelined: the heap reaches its
# plateau in seconds, and allocates and frees all the time. Not LPUSH/LPOP:
# redis-benchmark pushes its 200k values onto one list before it pops
# them, a 100 MB swing that a 2-minute run's RSS check took for a leak.
(while :; do
	redis-benchmark -p "$RPORT" -q -n 200000 -r 20000 -d 512 -P 16 -t set,get >/dev/null 2>&1
done) &
BENCH=$!
track "$BENCH"

# --- jm4lwd beside it, for SIGHUP and SIGKILL ------------------------------
JDUMPS=$W/jdumps
mkdir -p "$JDUMPS"
# dump_symbolized: each dump symbolizes after prof.dump, so a SIGKILL a
# few ms in meets a job on the worker.
printf 'dump_min_interval = 0\ndump_min_free = 0\ndump_keep = 4\nhistory_interval = 1\ndump_symbolized = on\nsnapshot_interval = 1\n' >"$W/jm4lwd.conf"
start_daemon -e MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:8 \
	-- -f "$W/jm4lwd.conf" -l 127.0.0.1:0 -D "$JDUMPS" || die "jm4lwd"
JPID=$PID
JPORT=$PORT
JLOG=$DLOG

# --- leak_host, for the fork -----------------------------------------------
printf 'dump_min_interval = 0\ndump_min_free = 0\ndump_keep = 4\n' >"$W/leak/conf"
start_leak_host "$W/leak" 10 || die "leak_host" "$(cat "$W/leak/err")"

# --- the clients -------------------------------------------------------------
WORDS="ruok mntr srvr conf jmst jmsj jmfp jmtp jmcs jmfg jmcg jmth jmdf jmgr jmpk jmep jmpg jmls jmrs jmfr jmhi jmlk jmrc"
MUTATES=" jmfp jmdf jmep jmdp jmpg jmrs "
# The refusals a busy module gives: expected, and counted apart.
# (jmcs right after jmrs's reset: no samples yet, and the line says so;
# jmgr and jmpk before the first snapshot.)
REFUSAL='in progress|dump_min_interval|dump_min_free|refused: .* free|need at least 3 dumps|no space|No space left|cut short|has no samples|no snapshot yet'

# One round of every word on the words' port of $1; replies checked.
words_round() {
	local port=$1 w f
	for w in $WORDS; do
		f=$W/r.$w
		ask "$w" "$port" >"$f" 2>&1
		echo "$w" >>"$W/asked"
		reply_check "$w" "$f" words
	done
}

# One round over HTTP: /4lw/<word> (POST for the words that change state).
http_round() {
	local port=$1 w f code
	for w in $WORDS; do
		f=$W/h.$w
		if [[ $MUTATES == *" $w "* ]]; then
			code=$(timeout 60 curl -sS -o "$f" -w '%{http_code}' -X POST -H 'X-Jm4lw: 1' "http://127.0.0.1:$port/4lw/$w")
		else
			code=$(timeout 60 curl -sS -o "$f" -w '%{http_code}' "http://127.0.0.1:$port/4lw/$w")
		fi
		echo "$w" >>"$W/asked"
		case $code in
		200) reply_check "$w" "$f" http ;;
		# 409 with "has no samples": jmcs right after jmrs; 400 with
		# "no snapshot yet": jmgr, jmpk before the agent's first.
		400 | 409 | 429 | 503)
			if grep -Eq "$REFUSAL" "$f"; then echo refusal >>"$W/tally"; else
				bad "http $w: $code $(head -c 200 "$f")"
			fi ;;
		*) bad "http $w: status $code $(head -c 200 "$f")" ;;
		esac
	done
}

# bad LINE: a reply that is not well formed.
bad() {
	printf '%s\n' "$1" >>"$W/bad"
}

# reply_check WORD FILE FACE: the reply's shape; a dump path is noted.
reply_check() {
	local w=$1 f=$2 face=$3
	if [ ! -s "$f" ]; then bad "$face $w: empty reply"; return; fi
	if grep -q '^error: ' "$f"; then
		if grep -Eq "$REFUSAL" "$f"; then echo refusal >>"$W/tally"; else bad "$face $w: $(head -1 "$f")"; fi
		return
	fi
	echo ok >>"$W/tally"
	case $w in
	ruok) [ "$(cat "$f")" = imok ] || bad "$face ruok: $(head -c 40 "$f")" ;;
	mntr) grep -q '^jemalloc_allocated	[0-9]' "$f" || bad "$face mntr: no jemalloc_allocated" ;;
	jmfp) grep -Eq '^/.*\.heap$' "$f" || bad "$face jmfp: $(head -1 "$f")"
		grep -E '^/.*\.heap$' "$f" >>"$W/paths" ;;
	jmdf) grep -Eq '^/.*\.heap$' "$f" || bad "$face jmdf: no path"
		grep -E '^/.*\.heap$' "$f" >>"$W/paths" ;;
	jmfg) grep -q '</svg>' "$f" || bad "$face jmfg: no </svg>" ;;
	jmcg) grep -q '^digraph ' "$f" || bad "$face jmcg: $(head -c 60 "$f")" ;;
	jmth) grep -q "^Total: [0-9]* bytes" "$f" || bad "$face jmth: $(head -1 "$f")" ;;
	jmsj) tail -c 3 "$f" | grep -q '}' || bad "$face jmsj: not JSON's end" ;;
	jmhi) grep -q '^allocated ' "$f" || bad "$face jmhi: no allocated line" ;;
	jmlk) grep -q '^# [0-9]* leak suspects over' "$f" || bad "$face jmlk: $(head -1 "$f")" ;;
	jmrc) grep -q '^# [0-9]* of [0-9]* recent sampled allocations' "$f" || bad "$face jmrc: $(head -1 "$f")" ;;
	jmgr | jmpk) grep -q '^# snapshots: [0-9]* kept' "$f" || bad "$face $w: $(head -1 "$f")" ;;
	esac
}

# The page's polling, replayed: status every 2 s, the history since the
# last row, the dumps and the leaks now and then.
page_poll() {
	local since=0 i=0 code
	while :; do
		code=$(timeout 30 curl -sS -o "$W/p.status" -w '%{http_code}' "http://127.0.0.1:$AHTTP/jemalloc/status")
		[ "$code" = 200 ] || bad "page: /jemalloc/status $code"
		code=$(timeout 30 curl -sS -o "$W/p.hist" -w '%{http_code}' "http://127.0.0.1:$AHTTP/jemalloc/history?since=$since")
		if [ "$code" = 200 ]; then
			t=$(grep -o '^\[[0-9]*' "$W/p.hist" | tail -1 | tr -d '[')
			[ -n "$t" ] && since=$t
			echo page >>"$W/tally"
		else
			bad "page: /jemalloc/history $code"
		fi
		if [ $((i % 5)) = 0 ]; then
			code=$(timeout 30 curl -sS -o "$W/p.dumps" -w '%{http_code}' "http://127.0.0.1:$AHTTP/jemalloc/dumps")
			[ "$code" = 200 ] || bad "page: /jemalloc/dumps $code"
			code=$(timeout 60 curl -sS -o "$W/p.leaks" -w '%{http_code}' "http://127.0.0.1:$AHTTP/jemalloc/leaks")
			case $code in 200 | 409) ;; *) bad "page: /jemalloc/leaks $code" ;; esac
		fi
		i=$((i + 1))
		sleep 2
	done
}

: >"$W/bad"
: >"$W/tally"
: >"$W/paths"
: >"$W/asked"
: >"$W/fills"
: >"$W/killwin"
: >"$W/missing"
page_poll &
POLL=$!
track "$POLL"

# --- the events of each minute ----------------------------------------------
# kill_mid_dump: jmfp to jm4lwd, SIGKILL a few ms into it, restart it on
# the same dump directory; then no half dump under a dump name.
# A dump the killed job's retention deleted has its log line die with the
# process (the module logs a job's lines on its loop, once the job is
# done): the dumps there before the jmfp and gone after the kill are noted
# in $W/killwin, and the path check accounts for them apart.
kills=0
LAST_SWEEP=0
kill_mid_dump() {
	local before
	before=$(find "$JDUMPS" -maxdepth 1 -name 'jm4lw.*.heap' | sort)
	(ask jmfp "$JPORT" >/dev/null 2>&1 &)
	sleep "0.0$((RANDOM % 9 + 1))"
	kill -KILL "$JPID"
	wait_exit "$JPID" 10 >/dev/null 2>&1
	kills=$((kills + 1))
	comm -23 <(printf '%s\n' "$before") \
		<(find "$JDUMPS" -maxdepth 1 -name 'jm4lw.*.heap' | sort) >>"$W/killwin"
	start_daemon -e MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:8 \
		-- -f "$W/jm4lwd.conf" -l 127.0.0.1:0 -D "$JDUMPS" || { bad "jm4lwd restart"; return; }
	JPID=$PID
	JPORT=$PORT
	JLOG=$DLOG
	ask jmfp "$JPORT" >"$W/j.jmfp"
	# Its first dump swept the staging directories of dead processes.
	LAST_SWEEP=$(date +%s)
	reply_check jmfp "$W/j.jmfp" jm4lwd
	local f
	for f in "$JDUMPS"/*.heap; do
		[ -e "$f" ] || continue
		tail -c 300000 "$f" | grep -q '^MAPPED_LIBRARIES:' || bad "jm4lwd: half a dump under a dump name: $f"
	done
}

# fork_mid_dump: leak_host's jmfp, frk1 50 ms in, the child's jmfp.
forks=0
fork_mid_dump() {
	local cpid cport before
	before=$(grep -c '^child ' "$W/leak/out")
	(ask jmfp "$LPORT" >/dev/null 2>&1 &)
	sleep 0.05
	ask frk1 "$LPORT" >/dev/null
	# The child by its own line (the frk1 reply is both processes', and
	# the child's half-close may end it before the parent's line).
	for _ in $(seq 50); do
		[ "$(grep -c '^child ' "$W/leak/out")" -gt "$before" ] && break
		sleep 0.1
	done
	[ "$(grep -c '^child ' "$W/leak/out")" -gt "$before" ] || { bad "leak_host: frk1 did not fork"; return; }
	cpid=$(sed -n 's/^child \([0-9]*\) listening on .*/\1/p' "$W/leak/out" | tail -1)
	track "$cpid"
	cport=$(sed -n "s/^child $cpid listening on 127\.0\.0\.1:\([0-9]*\)\$/\1/p" "$W/leak/out")
	if [ -z "$cport" ]; then bad "leak_host: the child $cpid did not listen"; else
		# The child's first dump starts its worker (it once ran SCHED_IDLE
		# and wrote the leak index first): on a loaded machine that took more
		# than ask's 30 s, an empty reply. Its answer is what counts,
		# not its time: up to 5 minutes, and the time is reported.
		t0=$(date +%s)
		printf 'jmfp\n' | timeout 300 nc.openbsd 127.0.0.1 "$cport" >"$W/c.jmfp"
		t1=$(date +%s)
		echo "$((t1 - t0))" >>"$W/childtimes"
		grep -Eq "^/.*\.$cpid\.[0-9]+\.[a-z]\.heap\$" "$W/c.jmfp" ||
			bad "fork child: jmfp after $((t1 - t0)) s: $(head -1 "$W/c.jmfp")"
		forks=$((forks + 1))
	fi
	kill -TERM "$cpid" 2>/dev/null
}

# fill_disk: the tmpfs full but 1 MiB, ~10 s, then freed (in the
# background: its count goes to a file).
fill_disk() {
	[ "$TMPFS" = 1 ] || return 0
	local free
	free=$(df -B1 --output=avail "$DUMPS" | tail -1)
	fallocate -l $((free - (1 << 20))) "$DUMPS/filler" 2>/dev/null ||
		dd if=/dev/zero of="$DUMPS/filler" bs=1M count=$(((free >> 20) - 1)) 2>/dev/null
	sleep 10
	rm -f "$DUMPS/filler"
	date +%s >>"$W/fills"
}

rss() { awk '/^VmRSS/ { print $2 }' "/proc/$RPID/status"; }
: >"$W/rss"
start=$(date +%s)
minute=0
rounds=0
while [ $(($(date +%s) - start)) -lt "$SECONDS_TOTAL" ]; do
	now=$(($(date +%s) - start))
	echo "$now $(rss)" >>"$W/rss"
	words_round "$APORT"
	http_round "$AHTTP"
	words_round "$JPORT"
	rounds=$((rounds + 1))
	if [ $((now / 60)) -ge "$minute" ]; then
		minute=$((now / 60 + 1))
		kill -HUP "$JPID"
		kill_mid_dump
		fork_mid_dump
		fill_disk &
	fi
	sleep 1
done
sleep 12 # a fill_disk still running ends
# The load and the poller stop (and the benchmark the loop runs): the
# checks look at a quiet process.
for p in $(pgrep -P "$BENCH") $(pgrep -P "$POLL"); do kill -TERM "$p" 2>/dev/null; done
kill -TERM "$BENCH" "$POLL" 2>/dev/null
wait "$BENCH" "$POLL" 2>/dev/null

# --- the checks --------------------------------------------------------------
echo "# $rounds rounds, $(wc -l <"$W/asked") words asked, $(grep -c ok "$W/tally") answers, $(grep -c refusal "$W/tally") expected refusals, $(grep -c page "$W/tally") page polls"
echo "# $kills SIGKILLs mid-dump, $forks forks mid-dump, $(wc -l <"$W/fills") disk fills, $MINUTES SIGHUPs"
[ -s "$W/childtimes" ] && echo "# the fork children's first jmfp: $(sort -n "$W/childtimes" | awk '{ a[NR] = $1 } END { printf "median %d s, max %d s", a[int((NR + 1) / 2)], a[NR] }')"
if [ -s "$W/bad" ]; then
	fail "every reply well formed" "$(sort "$W/bad" | uniq -c | sort -rn | head -20)"
else
	pass "every reply well formed ($(wc -l <"$W/asked") words over both faces, page polls)"
fi

# RSS: the slope over the second half, in KiB/min (reported), and the
# check: the median of the last third against the middle third's grows by
# no more than the history ring's size (86400 rows of 104 bytes) and
# 16 MiB of the allocator's and redis's own noise.
read -r slope first last < <(awk -v half=$((SECONDS_TOTAL / 2)) '$1 >= half {
	n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2; if (!f) f = $2; l = $2 }
	END { d = n * sxx - sx * sx; printf "%.0f %d %d\n", d ? (n * sxy - sx * sy) / d * 60 : 0, f, l }' "$W/rss")
echo "# redis-server RSS: $(head -1 "$W/rss" | cut -d' ' -f2) KiB at start, $first KiB at half time, $last KiB at the end; slope over the second half $slope KiB/min"
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] + 0 }'; }
n=$(wc -l <"$W/rss")
mid=$(awk -v n="$n" 'NR > n / 3 && NR <= 2 * n / 3 { print $2 }' "$W/rss" | median)
end=$(awk -v n="$n" 'NR > 2 * n / 3 { print $2 }' "$W/rss" | median)
allow=$(((86400 * 104 >> 10) + 16384))
echo "# RSS medians: middle third $mid KiB, last third $end KiB (allowed growth $allow KiB)"
if [ $((end - mid)) -le "$allow" ]; then
	pass "host RSS: the last third's median within $allow KiB of the middle third's ($((end - mid)) KiB)"
else
	fail "host RSS: the last third's median within $allow KiB of the middle third's ($((end - mid)) KiB)" "$(tail -5 "$W/rss")"
fi

# Descriptors: the clients are gone; back to the start's count (a
# scheduled dump's body may be open for a moment: a few tries).
for _ in $(seq 30); do
	fd=$(fds_own "$RPID")
	[ "$fd" -le "$FD0" ] && break
	sleep 0.5
done
# The symbolizer's cached object copies stay open by design (fds_own),
# never more than the cache's slots.
cached=$(fds_cached "$RPID")
if [ "$cached" -le "$FDS_CACHED_MAX" ]; then pass "redis-server holds $cached cached object copies (at most $FDS_CACHED_MAX)"; else
	fail "redis-server holds at most $FDS_CACHED_MAX cached object copies" "$cached open"
fi
if [ "$fd" -le "$FD0" ]; then pass "redis-server's descriptors back to the start's ($fd <= $FD0)"; else
	fail "redis-server's descriptors back to the start's ($fd <= $FD0)" "$(ls -l "/proc/$RPID/fd" | tail -n +2 | head -20)"
fi

# Every dump path a reply gave: there, or retention's log deleted it, or
# jm4lwd's retention deleted it in a job SIGKILL cut short (above).
missing=0
inkill=0
while IFS= read -r p; do
	[ -e "$p" ] && continue
	grep -qF "retention: deleted $p " "$ALOG" "$JLOG" "$W/leak/err" "$T"/*/jm4lwd.log 2>/dev/null && continue
	if grep -qxF "$p" "$W/killwin"; then
		inkill=$((inkill + 1))
		continue
	fi
	missing=$((missing + 1))
	echo "$p" >>"$W/missing"
done < <(sort -u "$W/paths")
echo "# dump paths deleted by a job SIGKILL cut short before it logged: $inkill"
if [ "$missing" = 0 ]; then
	pass "every dump path a reply gave is present or deleted by retention (logged) ($(sort -u "$W/paths" | wc -l) paths)"
else
	fail "every dump path a reply gave is present or deleted by retention (logged) ($(sort -u "$W/paths" | wc -l) paths)" \
		"$missing missing, e.g. $(head -5 "$W/missing" | tr '\n' ' ')"
fi

# Retention's accounting: jmls lists exactly the files, no more than
# dump_keep, in both processes' directories.
for pair in "$APORT:$DUMPS:6" "$JPORT:$JDUMPS:4"; do
	IFS=: read -r port dir keep <<<"$pair"
	listed=$(ask jmls "$port" | grep -vc '^#')
	files=$(find "$dir" -maxdepth 1 -name 'jm4lw.*.heap' | wc -l)
	assert_eq "$dir: jmls lists the $files dump files" "$files" "$listed"
	if [ "$files" -le "$keep" ]; then pass "$dir: at most dump_keep=$keep dumps"; else
		fail "$dir: at most dump_keep=$keep dumps" "$(ls "$dir")"
	fi
done

# Staging directories: only of live processes, or of dead ones that were
# younger than 600 s when the last jm4lwd started (its first dump sweeps;
# nothing sweeps after it, so one that turned 600 s since stays).
old=0
if [ "$LAST_SWEEP" -gt 0 ]; then
	while IFS= read -r d; do
		pid=${d##*/.jm4lw.}
		pid=${pid%%.*}
		[ "$pid" = "$JPID" ] || [ "$pid" = "$RPID" ] && continue
		old=$((old + 1))
		echo "$d" >>"$W/stale"
	done < <(find "$JDUMPS" "$DUMPS" -maxdepth 1 -name '.jm4lw.*' -type d ! -newermt "@$((LAST_SWEEP - 605))")
fi
if [ "$old" = 0 ]; then
	pass "no staging directory of a dead process older than 600 s at the last sweep"
else
	fail "no staging directory of a dead process older than 600 s at the last sweep" \
		"$(ls -ld --time-style=+%s $(cat "$W/stale") | head -5); last sweep $LAST_SWEEP"
fi

# The logs: nothing at WARN or worse but the expected refusals.
errs=$(cat "$ALOG" "$W/leak/err" "$JLOG" | grep -Ei 'error|warn|fail' |
	grep -Ev "$REFUSAL|retention: deleted|schedule dump|growth dump|reloaded" | sort | uniq -c | sort -rn | head -10)
assert_eq "no error line in the logs but the expected refusals" "" "$errs"
echo "# dumps written by the agent: $(grep -c 'dump: /' "$ALOG"), deleted by retention: $(grep -c 'retention: deleted' "$ALOG")"
# The disk guard refused while the tmpfs was full, and dumps came back.
if [ "$TMPFS" = 1 ]; then
	assert_grep "the full tmpfs: scheduled dumps refused by dump_min_free" 'dump_min_free is' "$ALOG"
	last=$(grep -n 'dump_min_free is' "$ALOG" | tail -1 | cut -d: -f1)
	if tail -n +"$last" "$ALOG" | grep -q 'dump: /'; then
		pass "the freed tmpfs: dumps again after the last refusal"
	else
		fail "the freed tmpfs: dumps again after the last refusal" "$(tail -5 "$ALOG")"
	fi
fi
PID=$RPID alive "redis-server's agent still answers ruok" "$APORT"
finish
