# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# 10. in-process profiles: the host's memory and its other threads.
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

# In-process profiles: what jmtp, jmcs and jmfg cost the host. Memory:
# tests/bench/inproc.py reads RssAnon before, during and after each word,
# in clangd under jm4lw-run and in bench_host -S (~30000 stacks), and
# valgrind massif says what the peak is made of (jm4lw-prof -f collapsed
# of a dump of the same heap: the same pipeline, offline). The host's other
# threads: bench_host -S -A N (N threads allocating, their latency read by
# the host word alst) idle, then under jmfg back to back (stall above).
# inproc_parse HOST FILE: record inproc.py's lines as ip.HOST.WORD.*.
inproc_parse() {
	local line w
	while IFS= read -r line; do
		w=$(kv "$line" word)
		[ -n "$w" ] && [ -n "$(kv "$line" peak_kb)" ] || continue
		rec "ip.$1.$w.bytes" "$(kv "$line" reply_bytes)"
		rec "ip.$1.$w.secs" "$(kv "$line" secs)"
		rec "ip.$1.$w.base" "$(kv "$line" base_kb)"
		rec "ip.$1.$w.extra" $(($(kv "$line" peak_kb) - $(kv "$line" base_kb)))
		rec "ip.$1.$w.after" $(($(kv "$line" after_kb) - $(kv "$line" base_kb)))
	done <"$2"
}
# inproc_massif HOST DUMP: massif's peak of jm4lw-prof -f collapsed DUMP,
# its allocation sites in $WORK/massif.HOST.sites (full runs only).
inproc_massif() {
	[ "$MODE" = full ] && [ -s "$2" ] && command -v valgrind >/dev/null || return 0
	note_cmd "valgrind --tool=massif jm4lw-prof -f collapsed DUMP; tests/bench/inproc.py massif massif.out"
	valgrind --tool=massif --massif-out-file="$WORK/massif.$1.out" "$BUILD/jm4lw-prof" -f collapsed "$2" \
		>/dev/null 2>"$WORK/massif.$1.err" || { bench_fail "massif of jm4lw-prof ($1)"; return 1; }
	python3 "$BENCH_SRC/inproc.py" massif "$WORK/massif.$1.out" >"$WORK/massif.$1.sites" ||
		bench_fail "inproc.py massif ($1)"
	R[ip.$1.massif]=$(sed -n 's/^peak_bytes=//p' "$WORK/massif.$1.sites")
}
SECTION=13
if want inproc; then
	log "10. in-process profiles: the host's memory, and its other threads"
	# --smoke: bench_host only, one round, thread mode (~8 s): clangd
	# takes ~10 s to start and parse.
	if [ "$MODE" = full ] && command -v clangd >/dev/null; then
		note_cmd "TMPDIR=\$WORK tests/bench/inproc.py clangd $BUILD $INPROC_ROUNDS"
		if TMPDIR=$WORK python3 "$BENCH_SRC/inproc.py" clangd "$BUILD" "$INPROC_ROUNDS" \
			>"$WORK/inproc.clangd" 2>"$WORK/inproc.clangd.err"; then
			inproc_parse clangd "$WORK/inproc.clangd"
			sed -n 's/^top: //p' "$WORK/inproc.clangd" >"$WORK/inproc.clangd.top"
			inproc_massif clangd "$(sed -n 's/^dump=//p' "$WORK/inproc.clangd")"
		else
			bench_fail "inproc: clangd: $(grep -m3 -e error "$WORK/inproc.clangd" "$WORK/inproc.clangd.err" | tr '\n' ' ')"
		fi
	fi
	# bench_host -S, idle: many stacks.
	mkdir -p "$WORK/idumps"
	note_cmd "MALLOC_CONF=prof:true,lg_prof_sample:$STALL_LG ${ON_SERVER[*]} bench_host -S -m $HEAP_MB \$WORK/idumps"
	start inproc-host env MALLOC_CONF=prof:true,lg_prof_sample:$STALL_LG "${ON_SERVER[@]}" \
		"$BIN/bench_host" -S -m "$HEAP_MB" "$WORK/idumps"
	IPID=$STARTED
	if IPORT=$(wait_listen inproc-host "$IPID" "bench_host: listening on" 300); then
		PORTNAME[$IPORT]=BENCH_HOST_PORT
		note_cmd "tests/bench/inproc.py attach \$BENCH_HOST_PID \$BENCH_HOST_PORT $INPROC_ROUNDS"
		python3 "$BENCH_SRC/inproc.py" attach "$IPID" "$IPORT" "$INPROC_ROUNDS" >"$WORK/inproc.host" 2>&1 ||
			bench_fail "inproc: bench_host: $(grep -m3 error "$WORK/inproc.host" | tr '\n' ' ')"
		inproc_parse host "$WORK/inproc.host"
		f=$("$CLIENT_BIN" -h 127.0.0.1 -p "$IPORT" -t 60 jmfp 2>&1)
		R[ip.host.traces]=$(grep -c '^@' "$f" 2>/dev/null)
		R[ip.host.dumpsize]=$(stat -c %s "$f" 2>/dev/null)
		inproc_massif host "$f"
	else
		bench_fail "bench_host -S (inproc) did not start"
	fi
	stop "$IPID"
	rm -rf "$WORK/idumps"
	# Rounds of both modes in alternation: a shared machine's load moves
	# between the idle and the busy window of one round less than across.
	for r in $(seq 1 "$INPROC_STALL_ROUNDS"); do
		for m in $(order "$r" thread embedded); do
			[ "$MODE" = smoke ] && [ $m = embedded ] && continue
			tflag=()
			[ $m = thread ] && tflag=(-T)
			stall "inproc.$m" jmfg "$INPROC_SECS" "${tflag[@]}" -A "$CHURN_THREADS" -P "$CHURN_PCT"
		done
	done
fi

