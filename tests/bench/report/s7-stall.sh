# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# Report, 7: ruok while jmfp dumps back to back.
# Sourced by tests/bench/report.sh over a run's results, never run.

SECTION=10
if want stall; then
	out "## 7. ruok while jmfp dumps back to back"
	out ""
	out "\`bench_host -S\` over a heap of ${HEAP_MB} MiB of blocks of 32 B – 8 KiB allocated through chains of 8–16 frames, sampled"
	out "once per $((1 << (STALL_LG - 10))) KiB (\`MALLOC_CONF=prof:true,lg_prof_sample:$STALL_LG\`), so that nearly every sample has a"
	out "backtrace of its own: a profile as large as a big service's. One loadgen sends \`jmfp\` back to back on a"
	out "connection at a time (\`dump_min_interval\` is 0); another, started 0.5 s later, opens a connection every"
	out "millisecond for \`ruok\` (\`-i 1\`: a slot starts its next request 1 ms after the last one started) and records"
	out "each latency, ${STALL_SECS} s per mode. *thread*: the module on its own thread (\`jm4lw_start_thread_ex()\`, as the"
	out "preload agent runs it; \`-T\`); *embedded*: on the host's own libevent loop. The server is pinned to one CPU"
	out "like every server here. The prober waits for each reply, so a stall of T ms is one probe of about T ms"
	out "and fewer probes in all: look at the count as well as the percentiles."
	out ""
	out "| mode | heap (stats.allocated) | backtraces in a profile | profile bytes | dumps | dump time, median / max ms | ruok answered | **ruok p50 / p99 / max ms** | with no dump: answered, p50 / p99 / max ms |"
	out "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	# The median of KEY (µs) in ms.
	ms() { fmt "$(awk -v a="$(med "$1")" 'BEGIN { if (a == "nan") print a; else print a / 1000 }')" %.2f; }
	for m in thread embedded; do
		out "| $m | ${R[stall.$m.heap]:-—} | $(fmt "${R[stall.$m.traces]:-nan}") | $(fmt "${R[stall.$m.size]:-nan}") | $(fmt "$(med stall.$m.dumps)") | $(ms stall.$m.dump.p50) / $(ms stall.$m.dump.max) | $(fmt "$(med stall.$m.ruok.n)") | **$(ms stall.$m.ruok.p50) / $(ms stall.$m.ruok.p99) / $(ms stall.$m.ruok.max)** | $(fmt "$(med stall.$m.quiet.n)"), $(ms stall.$m.quiet.p50) / $(ms stall.$m.quiet.p99) / $(ms stall.$m.quiet.max) |"
		summary "7. ruok p99 / max during back-to-back jmfp, $m mode (dump median)" "$(ms stall.$m.ruok.p99) / $(ms stall.$m.ruok.max) ms ($(ms stall.$m.dump.p50) ms)" "$([ $m = thread ] && echo "p99 ≤ 2 ms, max ≤ 10 ms with dumps ≥ 50 ms" || echo "—")" "figure only"
	done
	out ""
	out "Target, thread mode: ruok p99 ≤ 2 ms and max ≤ 10 ms while each dump takes ≥ 50 ms; reported, not judged. The"
	out "dump runs on the module's worker threads (nice +5, \`prof.dump\` at the host's priority; their allocations unsampled), so the loop keeps answering;"
	out "the last column is the same prober on the same host with no dump running, the floor this machine allows. In"
	out "embedded mode the loop is the host's thread: the module's own allocations there are unsampled; the host's"
	out "own sampled allocations, on any thread, would still wait on jemalloc's profiling locks while a dump merges"
	out "its samples (bench_host allocates nothing on its loop once its heap is built)."
	cmds
fi

