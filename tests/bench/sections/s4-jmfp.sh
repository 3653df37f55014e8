# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# 4. jmfp wall time against a bare mallctl("prof.dump"), same heap.
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

# dump1 WORD [size|spin]: one dump over bench_host's port (loadgen -n 1).
# Records s4.WORD.wall (µs, connect to EOF), s4.WORD.proc (µs in the
# process, from the reply: tjfp's whole jmfp, bdmp's mallctl) and with
# "size" the profile's bytes and backtraces. "spin": loadgen -S, whose CPU
# never idles, recorded as s4.WORD.spin.*.
dump1() {
	local w=$1 k=$1 f ns spin=()
	[ "${2:-}" = spin ] && { spin=(-S); k=$w.spin; }
	rm -f "$WORK/$w.out"
	if ! lg "s4.$k" "$HPORT" -c 1 -n 1 -w "$w" -x / -o "$WORK/$w.out" "${spin[@]}"; then
		rec "s4.$k.wall" nan
		rec "s4.$k.proc" nan
		return 1
	fi
	rec "s4.$k.wall" "$(kv "$LG" max_us)"
	f=$(head -1 "$WORK/$w.out" | cut -f1)
	case $w in
	tjfp) ns=$(awk -F'\t' '$1 == "took" { print $2 }' "$WORK/$w.out") ;;
	*) ns=$(head -1 "$WORK/$w.out" | cut -f2) ;;
	esac
	rec "s4.$k.proc" "$(awk -v n="${ns:-x}" 'BEGIN { if (n !~ /^[0-9]+$/) print "nan"; else printf "%.1f", n / 1000 }')"
	if [ ! -s "$f" ]; then
		bench_fail "s4.$w: no dump file at '$f'"
	elif [ "${2:-}" = size ]; then
		rec "s4.$w.size" "$(stat -c %s "$f")"
		rec "s4.$w.traces" "$(grep -c '^@' "$f")"
	fi
	rm -f "$f"
}
SECTION=4
if want jmfp; then
	log "4. jmfp vs a bare prof.dump over a ${HEAP_MB} MiB heap"
	mkdir -p "$WORK/hdumps"
	note_cmd "MALLOC_CONF=prof:true ${ON_SERVER[*]} bench_host -m $HEAP_MB \$WORK/hdumps"
	start bench_host env MALLOC_CONF=prof:true "${ON_SERVER[@]}" "$BIN/bench_host" -m "$HEAP_MB" "$WORK/hdumps"
	HPID=$STARTED
	if HPORT=$(wait_listen bench_host "$HPID" "bench_host: listening on" 300); then
		PORTNAME[$HPORT]=BENCH_HOST_PORT
		HEAP_LINE=$(grep -m1 'blocks, stats.allocated' "$WORK/bench_host.log" | sed 's/^bench_host: //')
		HRSS=$(rss "$HPID" VmRSS)
		# Pairs of single dumps, tjfp (jmfp, timed in the process) and bdmp
		# side by side in time, the order alternating: a ratio per pair.
		for r in $(seq 1 "$ROUNDS"); do
			for i in $(seq 1 "$DUMPS"); do
				for w in $(order $((r + i)) tjfp bdmp); do
					dump1 "$w" "$([ "$i" = 1 ] && echo size)"
				done
				# The same pair with a client that never lets its CPU idle.
				for w in $(order $((r + i + 1)) tjfp bdmp); do
					dump1 "$w" spin
				done
			done
		done
		# Where jmfp's extra time goes: close() of the profile, timed by strace.
		if [ "$MODE" = full ] && command -v strace >/dev/null; then
			strace -T -e trace=creat,close,openat,read,pread64 -p "$HPID" -o "$WORK/dump.strace" 2>/dev/null &
			st=$!
			sleep 0.5
			for i in 1 2 3 4 5; do
				"${ON_CLIENT[@]}" "$LOADGEN" -p "$HPORT" -n 1 -w jmfp -x / >/dev/null 2>&1
				"${ON_CLIENT[@]}" "$LOADGEN" -p "$HPORT" -n 1 -w bdmp -x / >/dev/null 2>&1
			done
			sleep 0.3
			kill "$st" 2>/dev/null
			wait "$st" 2>/dev/null
			note_cmd "strace -T -e trace=creat,close,openat,read,pread64 -p \$BENCH_HOST_PID   # during 5 jmfp and 5 bdmp"
			# close() of the file jemalloc creat()ed; reads of a profile
			# opened read-only afterwards (a read-back), per dump.
			while read -r what kind v; do rec "s4.$what.$kind" "$v"; done < <(awk '
				/^creat\(/ { match($0, /"[^"]*"/); n = substr($0, RSTART + 1, RLENGTH - 2)
					k[$(NF - 1)] = (n ~ /\/bare\./) ? "bdmp" : "jmfp"; next }
				/^openat\(.*O_RDONLY/ && /\.heap/ { match($0, /"[^"]*"/); n = substr($0, RSTART + 1, RLENGTH - 2)
					rb[$(NF - 1)] = (n ~ /\/bare\./) ? "bdmp" : "jmfp"; rn[$(NF - 1)] = 0; rt[$(NF - 1)] = 0; next }
				/^(read|pread64)\(/ { fd = $0; sub(/^p?read(64)?\(/, "", fd); sub(/,.*/, "", fd)
					if (fd in rb) { d = $NF; gsub(/[<>]/, "", d); rn[fd]++; rt[fd] += d }; next }
				/^close\(/ { fd = $0; sub(/^close\(/, "", fd); sub(/\).*/, "", fd); d = $NF; gsub(/[<>]/, "", d)
					if (fd in k) { printf "close %s %.0f\n", k[fd], d * 1e6; delete k[fd] }
					if (fd in rb) { printf "rbn %s %d\nrbt %s %.0f\n", rb[fd], rn[fd], rb[fd], rt[fd] * 1e6; delete rb[fd] } }' \
				"$WORK/dump.strace" 2>/dev/null)
			rm -f "$WORK"/hdumps/*.heap
		fi
		DUMP_FS="$(findmnt -n -o FSTYPE -T "$WORK/hdumps" 2>/dev/null) ($(findmnt -n -o OPTIONS -T "$WORK/hdumps" 2>/dev/null))"
	else
		bench_fail "bench_host did not start"
	fi
	stop "$HPID"
fi

