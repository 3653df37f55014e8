# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# Report, 4: jmfp against a bare prof.dump.
# Sourced by tests/bench/report.sh over a run's results, never run.

SECTION=4
out "## 4. jmfp against a bare \`mallctl(\"prof.dump\")\`"
out ""
if [ "$(med s4.tjfp.wall)" != nan ]; then
	out "\`tests/bench/bench_host.c\` embeds the module (libjm4lw.a) and, with sampling on from the start at the default"
	out "rate (\`lg_prof_sample\` 19, one sample per 512 KiB), holds a heap of live blocks, 32 B – 128 KiB, allocated through"
	out "call chains of 1–12 frames ($HEAP_LINE; VmRSS ${HRSS:-?} kB). Its host word \`bdmp\` is the bare"
	out "\`mallctl(\"prof.dump\", path)\`; \`jmfp\` adds what makes it safe (jemalloc writes in a private 0700 staging directory,"
	out "the profile's tail is read back to check it is whole, \`statvfs\` for \`dump_min_free\`, \`fchmod\` 0600, \`rename\`, an"
	out "\`epoch\` and \`stats.allocated\` read for \`dump_on_growth\`). Both are timed by loadgen over the"
	out "same port, to the same directory (\`/tmp\`'s file system)."
	out ""
	ratio=$(pmed s4.tjfp.wall s4.bdmp.proc)
	v=$(verdict "$ratio" le 1.05)
	out "The figure the target is set on is jmfp as an operator gets it (connect → \`jmfp\` → path → EOF) against the bare"
	out "\`mallctl\` timed inside the process; the two rows under it split the difference into the connection (the same"
	out "for any word) and what \`core_job_sync()\` adds in the process. \`tjfp\` is \`jmfp\` itself (\`jm4lw_reply_builtin()\`),"
	out "timed around the call. $((ROUNDS * DUMPS)) pairs of single dumps, each pair side by side in time, the order alternating; ratios"
	out "are medians of the per-pair ratios (range in brackets)."
	out ""
	out "| | jmfp | bare prof.dump (\`bdmp\`) | **ratio** (pairs) | target | result |"
	out "| --- | --- | --- | --- | --- | --- |"
	out "| **jmfp wall time ÷ bare \`mallctl\` in the process**, median µs | $(fmt "$(med s4.tjfp.wall)") | $(fmt "$(med s4.bdmp.proc)") | **$(fmt "$ratio" %.3f)** ($(prng s4.tjfp.wall s4.bdmp.proc)) | ≤ 1.05 | $v |"
	out "| the same transport on both sides: wall ÷ wall | $(fmt "$(med s4.tjfp.wall)") | $(fmt "$(med s4.bdmp.wall)") | $(fmt "$(pmed s4.tjfp.wall s4.bdmp.wall)" %.3f) ($(prng s4.tjfp.wall s4.bdmp.wall)) | | |"
	ratio_p=$(pmed s4.tjfp.proc s4.bdmp.proc)
	v_p=$(verdict "$ratio_p" le 1.05)
	out "| **in the process only: all of jmfp ÷ the bare \`mallctl\`** | $(fmt "$(med s4.tjfp.proc)") | $(fmt "$(med s4.bdmp.proc)") | **$(fmt "$ratio_p" %.3f)** ($(prng s4.tjfp.proc s4.bdmp.proc)) | ≤ 1.05 | $v_p |"
	out "| what jmfp adds in the process (median of per-pair differences), µs | $(fmt "$(pdiff s4.tjfp.proc s4.bdmp.proc)") | | | | |"
	out "| the connection: wall − in the process, median µs | $(fmt "$(pdiff s4.tjfp.wall s4.tjfp.proc)") | $(fmt "$(pdiff s4.bdmp.wall s4.bdmp.proc)") | | | |"
	out "| the same with a client whose CPU never idles (\`loadgen -S\`), median µs | $(fmt "$(pdiff s4.tjfp.spin.wall s4.tjfp.spin.proc)") | $(fmt "$(pdiff s4.bdmp.spin.wall s4.bdmp.spin.proc)") | | | |"
	out "| jmfp wall time with \`loadgen -S\` ÷ bare \`mallctl\` in the process | $(fmt "$(med s4.tjfp.spin.wall)") | $(fmt "$(med s4.bdmp.spin.proc)") | $(fmt "$(pmed s4.tjfp.spin.wall s4.bdmp.spin.proc)" %.3f) ($(prng s4.tjfp.spin.wall s4.bdmp.spin.proc)) | | |"
	out "| profile size, bytes | $(fmt "$(med s4.tjfp.size)") | $(fmt "$(med s4.bdmp.size)") | | | |"
	out "| backtraces in the profile | $(fmt "$(med s4.tjfp.traces)") | $(fmt "$(med s4.bdmp.traces)") | | | |"
	[ -n "${R[s4.close.jmfp]:-}" ] && out "| \`close()\` of the profile under strace, median µs | $(fmt "$(med s4.close.jmfp)") | $(fmt "$(med s4.close.bdmp)") | | | |"
	[ -n "${R[s4.rbn.jmfp]:-}" ] && out "| profile read back after the dump, under strace: \`read()\`/\`pread()\` calls / µs in them | $(fmt "$(med s4.rbn.jmfp)") / $(fmt "$(med s4.rbt.jmfp)") | $(fmt "$(med s4.rbn.bdmp)") / $(fmt "$(med s4.rbt.bdmp)") | | | |"
	[ -n "$EPOCH_LINE" ] && out "" && out "One \`mallctl(\"epoch\")\` in this process takes $EPOCH_LINE."
	summary "4. jmfp wall ÷ bare prof.dump in the process, ${HEAP_MB} MiB heap" "$(fmt "$ratio" %.3f)" "≤ 1.05" "$v"
	summary "4. jmfp ÷ bare prof.dump, both in the process" "$(fmt "$ratio_p" %.3f)" "≤ 1.05" "$v_p"
else
	out "**Not measured**: bench_host did not start or no dump succeeded."
	summary "4. jmfp ÷ bare prof.dump" "—" "≤ 1.05" "not measured"
fi
cmds

