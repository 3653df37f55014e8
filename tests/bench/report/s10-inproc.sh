# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# Report, 10: in-process profiles.
# Sourced by tests/bench/report.sh over a run's results, never run.

SECTION=13
if want inproc; then
	# kB (median or max of KEY) in MiB.
	mib() { fmt "$(awk -v a="$1" 'BEGIN { if (a == "nan" || a == "") print "nan"; else print a / 1024 }')" "${2:-%.1f}"; }
	kmax() { printf '%s\n' ${R[$1]:-} | sort -g | tail -1; }
	out "## 10. In-process profiles: the host's memory and its other threads"
	out ""
	out "\`jmtp\`, \`jmcs\` and \`jmfg\` dump the heap, parse the dump, symbolize it in the process (libdw) and render it, on the"
	out "module's worker thread (nice +5, \`prof.dump\` on a thread at the host's priority; its allocations unsampled, in an arena of its own purged after each job)."
	out "The requirement: the host's extra anonymous memory (RssAnon in \`/proc/PID/status\`) during the job ≤ 16 MiB and"
	out "back to its baseline after, and the host's other threads keep allocating unhindered."
	out ""
	out "**Memory.** \`tests/bench/inproc.py\` sends each word while the host idles and reads RssAnon every 2 ms from before"
	out "it until 1 s after the reply: the baseline (least of 20 reads before), the peak while the job ran, and the"
	out "last read ${INPROC_SETTLE:-1} s after; $INPROC_ROUNDS round(s) of the three words per host, medians (largest in brackets). Hosts:"
	out "*clangd* (Debian's clangd 14: libLLVM-14 and libclang-cpp-14, stripped, ~73,000 exported symbols) under"
	out "\`jm4lw-run --prof-active\` at \`lg_prof_sample:17\`, holding the AST of a C++ file that includes much of the standard"
	out "library; *bench_host -S* (the embedded module; ${R[ip.host.traces]:-?} backtraces in a profile of $(fmt "${R[ip.host.dumpsize]:-nan}") bytes at \`lg_prof_sample:$STALL_LG\`"
	out "over ${HEAP_MB} MiB; its own code has DWARF, \`-g\`)."
	out ""
	out "| host | word | reply bytes | time, median (max) s | RssAnon before, MiB | **extra at peak, MiB** median (max) | target | result | after − before, MiB (max) |"
	out "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	for h in clangd host; do
		if [ -z "${R[ip.$h.jmtp.extra]:-}" ]; then
			why="see the run's errors"
			[ $h = clangd ] && ! command -v clangd >/dev/null && why="clangd is not installed (Debian package clangd)"
			[ $h = clangd ] && [ "$MODE" = smoke ] && why="full run only"
			out "| $([ $h = clangd ] && echo clangd || echo "bench_host -S") | — | not measured: $why | | | | | | |"
			continue
		fi
		for w in jmtp jmcs jmfg; do
			v=$(verdict "$(awk -v a="$(kmax ip.$h.$w.extra)" 'BEGIN { print a / 1024 }')" le 16)
			out "| $([ $h = clangd ] && echo clangd || echo "bench_host -S") | $w | $(fmt "$(med ip.$h.$w.bytes)") | $(fmt "$(med ip.$h.$w.secs)" %.2f) ($(fmt "$(kmax ip.$h.$w.secs)" %.2f)) | $(mib "$(med ip.$h.$w.base)") | **$(mib "$(med ip.$h.$w.extra)")** ($(mib "$(kmax ip.$h.$w.extra)")) | ≤ 16 | $v | $(mib "$(med ip.$h.$w.after)") ($(mib "$(kmax ip.$h.$w.after)")) |"
		done
		summary "10. extra RssAnon at peak during jmfg, $([ $h = clangd ] && echo clangd || echo "bench_host -S") (max of rounds)" "$(mib "$(kmax ip.$h.jmfg.extra)") MiB" "≤ 16 MiB" "$(verdict "$(awk -v a="$(kmax ip.$h.jmfg.extra)" 'BEGIN { print a / 1024 }')" le 16)"
	done
	for h in clangd host; do
		[ -s "$WORK/massif.$h.sites" ] || continue
		out ""
		out "What the peak is made of, $([ $h = clangd ] && echo clangd || echo "bench_host -S"): \`valgrind --tool=massif\` of \`jm4lw-prof -f collapsed\` on a dump of the same heap (\`jmfp\` after the"
		out "rounds; the same parse, symbolizer and renderer, offline), its peak heap $(fmt "$(awk -v a="${R[ip.$h.massif]:-nan}" 'BEGIN { if (a == "nan") print a; else print a / 1048576 }')" %.1f) MiB, by allocation site (the"
		out "chain of named functions down to the caller with a source line; sites under 1 % of the peak are summed):"
		out ""
		out "| MiB | site |"
		out "| --- | --- |"
		awk -F'site=' '/^site_bytes=/ { b = $1; sub(/site_bytes=/, "", b); printf "| %.1f | %s |\n", b / 1048576, $2 }' \
			"$WORK/massif.$h.sites" | sed 's/</←/g' >>"$MD/$SECTION"
	done
	if [ -s "$WORK/inproc.clangd.top" ]; then
		out ""
		out "clangd's jmtp, its first lines (ELF symbols only: Debian's LLVM libraries are stripped, so a name is the nearest"
		out "exported symbol below the address):"
		out ""
		out '```'
		cut -c1-160 "$WORK/inproc.clangd.top" >>"$MD/$SECTION"
		out '```'
	fi
	out ""
	out "**The host's other threads.** \`bench_host -S -A $CHURN_THREADS -P $CHURN_PCT\` over the same heap: $CHURN_THREADS more host threads, each"
	out "freeing one block of a live set of 1024 (32 B – 4 KiB) and allocating its successor, sampled like the rest of"
	out "the heap, $CHURN_PCT % of every 4 ms (a service that is not saturated: the process, pinned to one CPU, leaves CPU to the"
	out "module); each operation (free + malloc + a write) timed with \`clock_gettime\` into the thread's own fixed"
	out "histogram. The host word \`alst\` reads the operations since its last call. $INPROC_STALL_ROUNDS round(s) per mode, the modes alternating, each a fresh"
	out "process: over ${INPROC_SECS} s with only the ruok prober"
	out "of section 7 (one connection a millisecond), then over ${INPROC_SECS} s while one loadgen sends \`jmfg\` back to back"
	out "(\`dump_min_interval\` is 0) and the prober runs; *thread*: the module on its own thread (\`-T\`), *embedded*: on"
	out "the host's libevent loop. Figures are medians over the rounds; the ratio is the median of the per-round ratios (range"
	out "in brackets). Latencies include \`clock_gettime\` itself and any preemption: the host's threads, its"
	out "loop and the worker share one CPU, so an operation's max is at least a scheduler's time slice of a sibling's."
	out ""
	out "| mode | jmfg replies per round, median / max ms | ops/s idle | ops/s during | **during ÷ idle** | op p50 / p99 / max µs, idle | **during** | ruok p99 / max ms, idle | **during** |"
	out "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	us() { fmt "$(awk -v a="$(med "$1")" 'BEGIN { if (a == "nan") print a; else print a / 1000 }')" "${2:-%.2f}"; }
	for m in thread embedded; do
		k=inproc.$m
		[ -n "${R[$k.alst.idle.ops_per_s]:-}" ] || continue
		r=$(fmt "$(pmed $k.alst.during.ops_per_s $k.alst.idle.ops_per_s)" %.3f)
		out "| $m | $(fmt "$(med $k.dumps)"), $(us $k.dump.p50 %.0f) / $(us $k.dump.max %.0f) | $(fmt "$(med $k.alst.idle.ops_per_s)") | $(fmt "$(med $k.alst.during.ops_per_s)") | **$r** ($(prng $k.alst.during.ops_per_s $k.alst.idle.ops_per_s)) | $(us $k.alst.idle.p50_ns %.3f) / $(us $k.alst.idle.p99_ns) / $(us $k.alst.idle.max_ns %.0f) | **$(us $k.alst.during.p50_ns %.3f) / $(us $k.alst.during.p99_ns) / $(us $k.alst.during.max_ns %.0f)** | $(us $k.quiet.p99) / $(us $k.quiet.max) | **$(us $k.ruok.p99) / $(us $k.ruok.max)** |"
		summary "10. host threads' alloc ops/s during back-to-back jmfg ÷ idle, $m mode (op max µs idle → during)" "$r ($(us $k.alst.idle.max_ns %.0f) → $(us $k.alst.during.max_ns %.0f))" "—" "figure only"
	done
	cmds
fi

