# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# Report: analysis of the missed targets, from the figures above.
# Sourced by tests/bench/report.sh over a run's results, never run.

SECTION=8
hdr=0
ana() {
	if [ $hdr = 0 ]; then
		out "## Analysis of the missed targets"
		out ""
		hdr=1
	fi
	out "$*"
}
below() { awk -v a="$1" -v t="$2" 'BEGIN { print (a != "nan" && a != "" && a + 0 < t + 0) }'; }
above() { awk -v a="$1" -v t="$2" 'BEGIN { print (a != "nan" && a != "" && a + 0 > t + 0) }'; }
# Do the per-round ratios of A/B (or B/A) reach target T (op ge/le) in some round?
spans() { pratios "$1" "$2" "${5:-0}" | awk -v t="$3" -v op="$4" '(op == "ge" && $1 >= t) || (op == "le" && $1 <= t) { f = 1 } END { print f + 0 }'; }

if [ "$S1_MISS" = 1 ] || [ "$S1_CAP_MISS" = 1 ]; then
	jc=$(med s1.c32.j.cpu) fc=$(med s1.c32.f.cpu)
	ana "**1. ruok ÷ floor.** At c=32, over $ROUNDS alternated rounds, jm4lwd spent $(fmt "$jc" %.1f) µs of CPU per connection and the"
	ana "floor $(fmt "$fc" %.1f) µs: $(awk -v a="$jc" -v b="$fc" 'BEGIN { printf "%.1f", a - b }') µs more — in user space $(fmt "$(med s1.c32.j.ucpu)" %.1f) against $(fmt "$(med s1.c32.f.ucpu)" %.1f) µs,"
	ana "in the kernel $(fmt "$(med s1.c32.j.scpu)" %.1f) against $(fmt "$(med s1.c32.f.scpu)" %.1f) µs (\`/proc/PID/stat\` utime and stime)."
	if [ $PERF = 1 ]; then
		ana "perf stat (median of 3 alternated runs): $(fmt "$(med p.j.ruok.cpu_us)" %.1f) against $(fmt "$(med p.f.ruok.cpu_us)" %.1f) µs of CPU, $(fmt "$(med p.j.ruok.sys)" %.1f) system calls per"
		ana "connection against $(fmt "$(med p.f.ruok.sys)" %.1f), of which \`epoll_ctl\` $(fmt "$(med p.j.ruok.epctl)" %.1f) against $(fmt "$(med p.f.ruok.epctl)" %.1f)."
		ana "perf record: of jm4lwd's samples the kernel has $(dso p.j.ruok kernel) %, libc $(dso p.j.ruok libc) %, libevent $(dso p.j.ruok libevent) %, our code"
		ana "$(dso p.j.ruok '^jm4lwd$') %, jemalloc $(dso p.j.ruok jemalloc) % (the floor: kernel $(dso p.f.ruok kernel) %, libc $(dso p.f.ruok libc) %)."
		if [ -n "${R[p.j.ruok.epctl_pct]:-}" ]; then
			ana "With call graphs, \`epoll_ctl\` and the kernel work under it are ${R[p.j.ruok.epctl_pct]} % of jm4lwd's CPU, ~$(awk -v p="${R[p.j.ruok.epctl_pct]}" -v c="$jc" 'BEGIN { printf "%.1f", p * c / 100 }') µs per"
			ana "connection, against ${R[p.f.ruok.epctl_pct]:-?} % (~$(awk -v p="${R[p.f.ruok.epctl_pct]:-0}" -v c="$fc" 'BEGIN { printf "%.1f", p * c / 100 }') µs) for the floor's single call; libc's formatting functions"
			ana "(\`vfprintf\` and helpers) are ${R[p.j.ruok.fmt_pct]:-?} % (~$(awk -v p="${R[p.j.ruok.fmt_pct]:-0}" -v c="$jc" 'BEGIN { printf "%.1f", p * c / 100 }') µs)."
		fi
	fi
	if [ "$S1_MISS1" = 1 ]; then
		ana "At c=1 the rate is one over the round trip, so those microseconds land in every request: jm4lwd's median"
		ana "was $(fmt "$(med s1.c1.j.p50)") µs against the floor's $(fmt "$(med s1.c1.f.p50)") µs (per-round conn/s ratios $(prng s1.c1.j.rps s1.c1.f.rps))."
	fi
	if [ "$S1_CAP_MISS" = 0 ]; then
		ana "By CPU per connection at c=32 jm4lwd meets the target (capacity $(fmt "$(pmed s1.c32.j.cpu s1.c32.f.cpu 1)" %.3f)), by a small margin."
	fi
	ana ""
	ana "The difference is libevent's, which the module must use (it runs on the host's \`event_base\`) — not the"
	ana "allocator's. Per connection, \`daemon/conn.c\` makes two \`epoll_ctl\` calls: the read event's \`EPOLL_CTL_ADD\` after"
	ana "accept, and the \`EPOLL_CTL_DEL\` that libevent's \`event_del()\` must issue before \`conn_close()\` closes the fd (it"
	ana "cannot know the fd is about to go); the floor lets \`close()\` drop the fd from epoll."
	if [ $PERF = 1 ]; then
		ana "Leaving \`epoll_ctl\` out, the two make the same number of system calls: $(awk -v a="$(med p.j.ruok.sys)" -v b="$(med p.j.ruok.epctl)" 'BEGIN { printf "%.1f", a - b }') against $(awk -v a="$(med p.f.ruok.sys)" -v b="$(med p.f.ruok.epctl)" 'BEGIN { printf "%.1f", a - b }') per connection."
	fi
	[ "${CG:-0}" = 1 ] && ana "In user space (callgrind, below) a ruok is $(fmt "$(med cg.j.ruok)") instructions against the floor's $(fmt "$(med cg.f.ruok)"): libevent's event and timer bookkeeping, a \`calloc\` +"
	[ "${CG:-0}" = 1 ] && ana "two \`event_new\` + \`evbuffer_new\` and their frees, the allow list and the word table."
	ana "How much a system call weighs depends on the machine: here the floor spent"
	ana "$(fmt "$(med s1.c32.f.scpu)" %.1f) µs per connection in the kernel$([ $PERF = 1 ] && echo " for $(fmt "$(med p.f.ruok.sys)" %.1f) system calls")."
	ana ""
fi

if [ $ZK_OK = 1 ] && [ "$(below "$(pmed s2.mntr.c1.j.rps s2.mntr.c1.z.rps)" 5)" = 1 ]; then
	jm=$(med s2.mntr.c1.j.p50) jr=$(med s2.ruok.c1.j.p50) zm=$(med s2.mntr.c1.z.p50)
	ana "**2. mntr ÷ ZooKeeper at c=1.** One request at a time, the rate is one over the mean time per request:"
	ana "jm4lwd's mean was $(awk -v r="$(med s2.mntr.c1.j.rps)" 'BEGIN { printf "%.0f", 1e6 / r }') µs against a median of $(fmt "$jm") µs, ZooKeeper's $(awk -v r="$(med s2.mntr.c1.z.rps)" 'BEGIN { printf "%.0f", 1e6 / r }') µs against $(fmt "$zm") µs:"
	ana "the rates are set by the tails (p99 $(fmt "$(med s2.mntr.c1.j.p99)") and $(fmt "$(med s2.mntr.c1.z.p99)") µs; the floor's ruok p99 was $(fmt "$(med s1.c1.f.p99)") µs, so the"
	ana "machine's scheduling makes them). By medians ZooKeeper is $(div "$zm" "$jm" %.1f)× slower. In the same rounds jm4lwd's ruok"
	ana "took $(fmt "$jr") µs at the median and its mntr $(fmt "$jm") µs; an mntr as cheap as ruok would make the median ratio"
	ana "$(awk -v z="$zm" -v r="$jr" 'BEGIN { printf "%.1f", z / r }')×. $(awk -v z="$zm" -v j="$jm" 'BEGIN { if (z / j >= 5) print "By medians the target is met; the rate misses it through the tails, which the mean pays."; else print "mntr'"'"'s own microseconds keep the median ratio under 5×." }')"
	ana "What mntr costs over ruok is described below. By CPU per connection jm4lwd's mntr costs"
	ana "$(fmt "$(med s2.mntr.c1.j.cpu)" %.1f) µs against ZooKeeper's $(fmt "$(med s2.mntr.c1.z.cpu)" %.1f) µs ($(fmt "$(pmed s2.mntr.c1.j.cpu s2.mntr.c1.z.cpu 1)" %.1f)×)."
	ana ""
fi
if [ $ZK_OK = 1 ] && [ "$(below "$(pmed s2.mntr.c32.j.rps s2.mntr.c32.z.rps)" 5)" = 1 ]; then
	ana "**2. mntr ÷ ZooKeeper at c=32.** jm4lwd's mntr costs $(fmt "$(med s2.mntr.c32.j.cpu)" %.1f) µs of CPU per connection against $(fmt "$(med s2.ruok.c32.j.cpu)" %.1f) µs for"
	ana "its ruok, ZooKeeper's $(fmt "$(med s2.mntr.c32.z.cpu)" %.1f) µs: by CPU jm4lwd is $(fmt "$(pmed s2.mntr.c32.j.cpu s2.mntr.c32.z.cpu 1)" %.1f)× cheaper. ZooKeeper was busy"
	ana "$(awk -v a="$(med s2.mntr.c32.z.cpu)" -v r="$(med s2.mntr.c32.z.rps)" 'BEGIN { printf "%.0f", a * r / 1e4 }') % of its CPU (its limit), jm4lwd $(awk -v a="$(med s2.mntr.c32.j.cpu)" -v r="$(med s2.mntr.c32.j.rps)" 'BEGIN { printf "%.0f", a * r / 1e4 }') %: jm4lwd's conn/s was set by loadgen and by the rest"
	ana "of the machine's load (section 1's floor reached $(fmt "$(med s1.c32.f.rps)") conn/s with the same loadgen), so conn/s understates it."
	ana ""
fi
if [ $ZK_OK = 1 ] && { [ "$(below "$(pmed s2.mntr.c1.j.rps s2.mntr.c1.z.rps)" 5)" = 1 ] || [ "$(below "$(pmed s2.mntr.c32.j.rps s2.mntr.c32.z.rps)" 5)" = 1 ]; }; then
	t="What mntr costs over ruok: ~25 lines of \`printf\`, ~10 \`mallctl\` reads by name, and the allocator's \`epoch\`"
	t="$t refresh, which clears and re-merges every arena's statistics"
	[ -n "$EPOCH_LINE" ] && t="$t (one \`epoch\` in bench_host: $EPOCH_LINE)"
	t="$t; \`word_mntr()\` (\`proto/words.c\`) refreshes it at most once a millisecond (\`ctl_epoch_coalesced()\`)"
	[ $PERF = 1 ] && t="$t. perf puts $(dso p.j.mntr jemalloc) % of jm4lwd's mntr samples in libjemalloc, against $(dso p.j.ruok jemalloc) % for ruok, and $(dso p.j.mntr libc) % in libc"
	ana "$t."
	ana ""
fi

if [ $REDIS_OK = 1 ]; then
	for c in $CONCS; do
		M=MEMORY_MALLOC-STATS
		[ "$(below "$(pmed s3.c$c.j.rps s3.c$c.r.$M.rps)" 1)" = 1 ] || continue
		ana "**3. jmst ÷ Redis at c=$c.** Both run the same \`malloc_stats_print()\` over heaps of similar size; jm4lwd also pays a"
		ana "TCP connection per reply, which redis-benchmark's kept connections do not. Against Redis over fresh connections"
		ana "(\`-k 0\`) the ratio is $(fmt "$(pmed s3.c$c.j.rps s3.c$c.rk0.$M.rps)" %.2f); on one heap (agent ÷ that redis) $(fmt "$(pmed s3.c$c.a.rps s3.c$c.ra.$M.rps)" %.2f)."
		[ "$(spans s3.c$c.j.rps s3.c$c.r.$M.rps 1 ge)" = 1 ] && ana "Some rounds met the target: per-round ratios $(prng s3.c$c.j.rps s3.c$c.r.$M.rps)."
		[ $PERF = 1 ] && ana "perf: jemalloc $(dso p.j.jmst jemalloc) % and libc $(dso p.j.jmst libc) % of jm4lwd's jmst samples (the statistics walk and its \`printf\`s), the kernel $(dso p.j.jmst kernel) %."
		[ "${CG:-0}" = 1 ] && ana "callgrind (section above): a jmst reply is $(div "$(med cg.j.jmst)" "$(med cg.r.ms)" %.3f)× the user-space instructions of Redis's, $(fmt "$(pct "$(med cg.j.jmst.malloc_stats_print)" "$(med cg.j.jmst)")" %.2f) % of them in"
		[ "${CG:-0}" = 1 ] && ana "\`malloc_stats_print()\`: the cost is the allocator's walk, which both pay; jm4lwd adds the TCP connection Redis's kept one does not."
		ana ""
	done
fi

if [ "$(above "$(pmed s4.tjfp.wall s4.bdmp.proc)" 1.05)" = 1 ]; then
	ana "**4. jmfp ÷ bare prof.dump.** jmfp's wall time was $(fmt "$(pdiff s4.tjfp.wall s4.bdmp.proc)") µs over the bare \`mallctl\` (median of per-pair differences),"
	ana "which took $(fmt "$(med s4.bdmp.proc)") µs for a ${HEAP_MB} MiB heap: $(fmt "$(pdiff s4.tjfp.proc s4.bdmp.proc)") µs of it in the process (\`core_job_sync()\`, \`core/job.c\`), the"
	ana "rest the connection ($(fmt "$(pdiff s4.bdmp.wall s4.bdmp.proc)") µs for bdmp's, which does nothing but the \`mallctl\`). The budget of 5 % is"
	ana "$(awk -v b="$(med s4.bdmp.proc)" 'BEGIN { if (b == "nan") print "—"; else printf "%.0f", b * 0.05 }') µs here; it grows with the heap's profile, the connection does not. The connection of a"
	ana "ruok costs $(fmt "$(med s1.c1.j.p50)") µs at c=1 (section 1); after a wait of milliseconds it costs more because both CPUs have gone idle"
	ana "and must be woken (a VM's halted vCPU). With a client that never lets its CPU idle (\`loadgen -S\`, same pairs),"
	ana "bdmp's connection cost $(fmt "$(pdiff s4.bdmp.spin.wall s4.bdmp.spin.proc)") µs instead of $(fmt "$(pdiff s4.bdmp.wall s4.bdmp.proc)") µs and jmfp's wall ÷ the bare \`mallctl\` was $(fmt "$(pmed s4.tjfp.spin.wall s4.bdmp.spin.proc)" %.3f)."
	ana "What is left of the connection then is the server CPU's own wake-up and the TCP exchange, which any word pays;"
	ana "bdmp, which does nothing but the \`mallctl\`, pays it too (wall ÷ wall above: $(fmt "$(pmed s4.tjfp.wall s4.bdmp.wall)" %.3f))."
	if [ -n "${R[s4.close.jmfp]:-}" ]; then
		ana "- under strace, \`close()\` of the profile took $(fmt "$(med s4.close.jmfp)") µs in jmfp against $(fmt "$(med s4.close.bdmp)") µs in the bare dump (\`dump_dir\`: ${DUMP_FS:-?})."
	fi
	if [ -n "${R[s4.rbn.jmfp]:-}" ]; then
		ana "- the completeness check read the profile back in $(fmt "$(med s4.rbn.jmfp)") call(s), $(fmt "$(med s4.rbt.jmfp)") µs under strace."
	fi
	ana "- fixed work: \`stat\`, \`realpath\`, \`statvfs\` (twice), \`lstat\` (twice), \`open\`, \`fstat\`, \`pread\`, \`fchmod\`, \`close\`, \`rename\`;"
	ana "  with \`dump_on_growth\` set, also an \`epoch\` refresh${EPOCH_LINE:+ ($EPOCH_LINE)} and \`stats.allocated\` after the dump."
	ana ""
fi

if [ $REDIS_OK = 1 ]; then
	for c in $CONCS; do
		for t in SET GET; do
			r=$(pmed s5.c$c.agent.$t.rps s5.c$c.plain.$t.rps)
			[ "$(below "$r" 0.99)" = 1 ] || continue
			ana "**5. redis $t with the agent, c=$c: $(fmt "$r" %.3f).** The agent's thread made ${R[s5.loadsw.agent]:-?} context switches"
			ana "during all the GET/SET runs: it never ran, so no CPU of the agent's was taken from redis. Per-round ratios"
			ana "$(prng s5.c$c.agent.$t.rps s5.c$c.plain.$t.rps); plain redis alone ranged $(rng s5.c$c.plain.$t.rps) req/s over the rounds."
			[ "${CG:-0}" = 1 ] && ana "callgrind: redis with the agent ran $(div "$(med cg.agent.kvnet)" "$(med cg.plain.kvnet)" %.4f)× the instructions per SET/GET of plain redis."
			if [ "$AGENT_ROUNDS" = 1 ]; then
				ana "One short round (smoke): too little to tell a 1 % difference from noise."
			elif [ "$(spans s5.c$c.agent.$t.rps s5.c$c.plain.$t.rps 0.99 ge)" = 1 ]; then
				ana "Some rounds met the target: the median's shortfall is run-to-run noise of redis-benchmark on a shared machine."
			else
				ana "Every round missed it with the agent's thread asleep, so it is not work the agent does; what is left is the"
				ana "preload itself (another library and its dependencies mapped, redis's code and data laid out differently),"
				ana "which this benchmark cannot separate from noise at the 1 % level. Compare the agent + prof:true column."
			fi
			ana ""
		done
	done
fi

for c in $CONCS; do
	p=$(med s6.c$c.idle.p99)
	[ "$(above "$p" 10000)" = 1 ] || continue
	ana "**6. ruok p99 with idle connections, c=$c: $(fmt "$p") µs** against $(fmt "$(med s6.c$c.base.p99)") µs without them"
	ana "(per-round p99 with them: $(rng s6.c$c.idle.p99) µs; without: $(rng s6.c$c.base.p99) µs)."
	if [ "$(above "$(med s6.c$c.base.p99)" 10000)" = 1 ]; then
		ana "The tail is as long without the idle connections: it is the machine's (CPU taken by other work, load average"
		ana "$LOAD0 → $LOAD1), not theirs. jm4lwd keeps idle peers in epoll and a timer heap, touched only when they act."
	else
		ana "The idle connections lengthen the tail: with ${IDLE_CONNS} peers each holding a \`read_timeout\` event, libevent's timer"
		ana "heap and epoll set are larger; see \`conn_accept()\`/\`conn_want_read()\` in \`daemon/conn.c\`."
	fi
	ana ""
done

