# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# Report: where the time goes (perf), from sections 1, 2 and 3.
# Sourced by tests/bench/report.sh over a run's results, never run.

SECTION=7
if [ $PERF = 1 ] && { want floor || want zk || want redis; }; then
	out "## Where the time goes (perf)"
	out ""
	out "Each server under loadgen at concurrency 32 for a fixed number of connections: \`perf stat\` for CPU time, system"
	out "calls and \`epoll_ctl\` calls per connection (median of 3 runs, alternating between the servers compared), then"
	out "\`perf record -g -e cpu-clock\` for the share of samples per DSO"
	out "(\`jm4lwd\` is our code: the daemon links libjm4lw statically; Debian's libjemalloc2 is stripped, so its own"
	out "functions show as addresses). The commands are listed with the sections they belong to."
	out ""
	out "| server, word | CPU µs/conn | syscalls/conn | epoll_ctl/conn | kernel | our code | libevent | libc | jemalloc |"
	out "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	for k in p.f.ruok p.j.ruok p.j.mntr p.j.jmst p.z.mntr; do
		[ -n "${R[$k.cpu_us]:-}" ] || continue
		cu=$(med "$k.cpu_us") sy=$(med "$k.sys") ep=$(med "$k.epctl")
		case $k in
		p.f.*) name="floor, ruok" ;;
		p.z.*) name="ZooKeeper, mntr" ;;
		*) name="jm4lwd, ${k##*.}" ;;
		esac
		if [ "$k" = p.z.mntr ]; then
			out "| $name | $cu | $sy | $ep | $(dso "$k" kernel) % | (JIT code: $(awk '$2 !~ /kernel/ { s += $1 } END { printf "%.0f", s }' "$WORK/dso.$k" 2>/dev/null) % outside the kernel) | | | |"
		else
			out "| $name | $cu | $sy | $ep | $(dso "$k" kernel) % | $(dso "$k" '^(jm4lwd|floor)$') % | $(dso "$k" libevent) % | $(dso "$k" libc) % | $(dso "$k" jemalloc) % |"
		fi
	done
	for k in p.j.ruok p.j.mntr; do
		[ -s "$WORK/usym.$k" ] || continue
		out ""
		out "Top user-space symbols, jm4lwd ${k##*.} (self, % of all samples):"
		out ""
		out '```'
		cat "$WORK/usym.$k" >>"$MD/$SECTION"
		out '```'
	done
fi

