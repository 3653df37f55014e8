#!/bin/bash
# Files the profile pipeline reads, chosen by someone else.
#   fifo_profile, fifo_binary, fifo_in_mapped_libraries  (a FIFO as the
#      profile, --binary or an object in MAPPED_LIBRARIES blocked open()
#      forever, in jm4lw-prof and in the daemon's worker);
#   sparse_zero_file      (a 4 GB file of zeros was scanned whole before
#      "not a jemalloc heap profile");
#   binary_mismatch       (--binary missing, a directory, not ELF, or
#      another object than the dump's main program gave wrong names, exit 0);
#   cut_mapped_libraries  (a dump cut inside MAPPED_LIBRARIES, silently);
#   base_other_process    (--base from another process, silently);
#   symbolized_symlink_race (format=symbolized followed a symlink swapped
#      over a kept dump after the loop's check, and served the file).
# The configuration file, chosen by whoever can write where it is:
#   config_check_not_regular (jm4lwd -n -f FIFO blocked in open for ever;
#      -f /dev/zero read for ever);
#   config_reload_not_regular (the config replaced by a FIFO, then by a
#      symlink to /dev/zero, and SIGHUP: the loop blocked, ruok 0/5, or spun at
#      100 % CPU deaf to SIGTERM; now the reload fails with one line, the old
#      configuration stays and the words answer);
#   config_too_big (a config over 1 MiB: refused, not read).
# Every jm4lw-prof runs under timeout: a hang is a failure, not a stuck suite.
#
#	bash hostile_files.sh    (JM4LWD, JM4LW_PROF: paths to the binaries)
. "$(dirname "$0")/common.sh"

JM4LW_PROF=${JM4LW_PROF:-$ROOT/build/jm4lw-prof}
need curl timeout python3

# prof DESC_FILE ARGS...: jm4lw-prof ARGS under a 20 s bound; stdout and
# stderr in $T/prof.out and $T/prof.err, the status in PROF_RC (124: hung).
prof() {
	timeout 20 "$JM4LW_PROF" "$@" >"$T/prof.out" 2>"$T/prof.err" </dev/null
	PROF_RC=$?
}

# mkdump FILE MAIN START END [TAIL]: a small heap_v2 profile whose main
# program is MAIN mapped executable at START-END (hex, no 0x), two stacks
# in it, a stack mapping, and TAIL appended after the maps (raw).
mkdump() {
	local s=$((16#$3))
	{
		printf 'heap_v2/524288\n  t*: 3: 300 [0: 0]\n'
		printf '@ 0x%x 0x%x\n  t*: 2: 200 [0: 0]\n' $((s + 0x120)) $((s + 0x240))
		printf '@ 0x%x\n  t*: 1: 100 [0: 0]\n\nMAPPED_LIBRARIES:\n' $((s + 0x360))
		printf '%s-%s r-xp 00000000 08:01 1 %s\n' "$3" "$4" "$2"
		printf '7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]\n'
		printf '%s' "${5:-}"
	} >"$1"
}

# not_hung DESC: the last prof() did not hang; a hang is a failure.
not_hung() {
	if [ "$PROF_RC" = 124 ]; then
		fail "$1" "jm4lw-prof still blocked after 20 s"
		return 1
	fi
}

case_fifo_profile() {
	local d
	d=$(scratch fifo_profile)
	mkfifo "$d/fifo"
	prof "$d/fifo"
	not_hung "fifo_profile: jm4lw-prof FIFO returns" || return
	assert_eq "fifo_profile: exit 1" 1 "$PROF_RC"
	assert_grep "fifo_profile: says it is not a regular file" \
		"^jm4lw-prof: $d/fifo: not a regular file$" "$T/prof.err"
}

case_fifo_binary() {
	local d
	d=$(scratch fifo_binary)
	mkfifo "$d/fifo"
	mkdump "$d/p.heap" /usr/bin/true 400000 404000
	prof --binary "$d/fifo" "$d/p.heap"
	not_hung "fifo_binary: jm4lw-prof --binary FIFO returns" || return
	assert_eq "fifo_binary: exit 1" 1 "$PROF_RC"
	assert_grep "fifo_binary: says --binary is not a regular file" \
		"^jm4lw-prof: --binary $d/fifo: not a regular file$" "$T/prof.err"
}

case_fifo_in_mapped_libraries() {
	local d name got
	d=$(scratch fifo_maps)
	mkfifo "$d/fifo"
	# At an address the daemon has nothing mapped at: no map_files, so
	# the path the dump names is what a symbolizer would open.
	mkdump "$d/p.heap" "$d/fifo" 10000000 10004000
	prof "$d/p.heap"
	not_hung "fifo_in_mapped_libraries: jm4lw-prof returns" &&
		assert_eq "fifo_in_mapped_libraries: jm4lw-prof exit 0 (hex frames)" 0 "$PROF_RC"

	# The daemon: a planted dump naming the FIFO, rendered by the worker.
	name=jm4lw.999999.0.heap
	printf 'dump_min_interval = 0\n' >"$d/jm4lwd.conf"
	mkdir "$d/dumps"
	cp "$d/p.heap" "$d/dumps/$name"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 \
		-D "$d/dumps" || return
	got=$(timeout 10 curl -s -o "$T/fifo.body" -w '%{http_code}' \
		"http://127.0.0.1:$HTTP_PORT/jemalloc/dump?name=$name&format=text")
	assert_eq "fifo_in_mapped_libraries: the planted dump is rendered (200)" 200 "$got"
	got=$(ask jmfp)
	case $got in
	/*) pass "fifo_in_mapped_libraries: a later jmfp still works ($got)" ;;
	*) fail "fifo_in_mapped_libraries: a later jmfp still works" "$got" ;;
	esac
	# Free a worker blocked on the FIFO (on a build that has the bug),
	# so the daemon can stop.
	timeout 2 python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK))' \
		"$d/fifo" 2>/dev/null
	alive "fifo_in_mapped_libraries: the daemon answers ruok"
	stop_daemon
}

case_sparse_zero_file() {
	local d t0 t1
	d=$(scratch sparse)
	if ! truncate -s 4G "$d/zeros.heap" 2>"$T/trunc.err"; then
		skip "SKIP sparse_zero_file: no sparse 4 GB file here ($(cat "$T/trunc.err"))"
		return
	fi
	t0=$(date +%s%N)
	prof "$d/zeros.heap"
	t1=$(date +%s%N)
	rm -f "$d/zeros.heap"
	not_hung "sparse_zero_file: jm4lw-prof returns" || return
	assert_eq "sparse_zero_file: exit 1" 1 "$PROF_RC"
	assert_grep "sparse_zero_file: not a jemalloc heap profile" \
		'not a jemalloc heap profile' "$T/prof.err"
	if [ $(((t1 - t0) / 1000000)) -lt 2000 ]; then
		pass "sparse_zero_file: refused at once ($(((t1 - t0) / 1000000)) ms)"
	else
		fail "sparse_zero_file: refused at once" "took $(((t1 - t0) / 1000000)) ms"
	fi
}

case_binary_mismatch() {
	local d
	d=$(scratch binary)
	mkdump "$d/p.heap" /usr/bin/true 400000 404000
	echo 'not an object' >"$d/text"
	prof --binary "$d/missing" "$d/p.heap"
	assert_eq "binary_mismatch: --binary missing: exit 1" 1 "$PROF_RC"
	assert_grep "... saying so" "^jm4lw-prof: --binary $d/missing: No such file or directory$" "$T/prof.err"
	prof --binary "$d" "$d/p.heap"
	assert_eq "binary_mismatch: --binary a directory: exit 1" 1 "$PROF_RC"
	assert_grep "... saying so" "^jm4lw-prof: --binary $d: not a regular file$" "$T/prof.err"
	prof --binary "$d/text" "$d/p.heap"
	assert_eq "binary_mismatch: --binary not ELF: exit 1" 1 "$PROF_RC"
	assert_grep "... saying so" "^jm4lw-prof: --binary $d/text: not an ELF object$" "$T/prof.err"
	# Another build than the file the dump maps (both here: build IDs).
	prof --binary /usr/bin/false "$d/p.heap"
	assert_eq "binary_mismatch: another build: still an answer, exit 0" 0 "$PROF_RC"
	assert_grep "... with a warning naming both" \
		'^jm4lw-prof: warning: --binary /usr/bin/false is another build than the profile.s main program /usr/bin/true \(their GNU build IDs differ\)' \
		"$T/prof.err"
	prof --binary /usr/bin/true "$d/p.heap"
	assert_no_grep "binary_mismatch: the same object: no warning" 'warning' "$T/prof.err"
	# The dump's program not on this machine: by name.
	mkdump "$d/q.heap" /opt/gone/myprog 400000 404000
	prof --binary /usr/bin/false "$d/q.heap"
	assert_grep "binary_mismatch: another name, the mapped file absent: a warning" \
		'^jm4lw-prof: warning: --binary /usr/bin/false is not named as the profile.s main program /opt/gone/myprog' \
		"$T/prof.err"
}

case_cut_mapped_libraries() {
	local d
	d=$(scratch cut)
	# Cut inside a line of the maps, then right after a line: the stacks'
	# objects (past the cut) are not in it either way.
	mkdump "$d/a.heap" /usr/bin/true 7f0000000000 7f0000004000
	head -c -60 "$d/a.heap" >"$d/cut_in_line.heap"
	prof "$d/cut_in_line.heap"
	assert_eq "cut_mapped_libraries: cut in a line: still an answer, exit 0" 0 "$PROF_RC"
	assert_grep "... with a warning" '^jm4lw-prof: warning: profile cut inside MAPPED_LIBRARIES' "$T/prof.err"
	{
		printf 'heap_v2/524288\n@ 0x7f0000001234\n  t*: 1: 100 [0: 0]\nMAPPED_LIBRARIES:\n'
		printf '00400000-00404000 r-xp 00000000 08:01 1 /usr/bin/true\n'
	} >"$d/cut_at_line.heap"
	prof "$d/cut_at_line.heap"
	assert_grep "cut_mapped_libraries: cut after a line: a warning" \
		'^jm4lw-prof: warning: profile cut inside MAPPED_LIBRARIES' "$T/prof.err"
	prof "$d/a.heap"
	assert_no_grep "cut_mapped_libraries: a whole dump: no warning" 'warning' "$T/prof.err"
}

case_base_other_process() {
	local d
	d=$(scratch base)
	mkdump "$d/a.heap" /usr/bin/true 555500000000 555500004000
	mkdump "$d/b.heap" /usr/bin/true 555500000000 555500004000
	mkdump "$d/other.heap" /usr/bin/true 561200000000 561200004000
	prof --base "$d/a.heap" "$d/b.heap"
	assert_no_grep "base_other_process: the same process: no warning" 'warning' "$T/prof.err"
	prof --base "$d/other.heap" "$d/b.heap"
	assert_eq "base_other_process: still an answer, exit 0" 0 "$PROF_RC"
	assert_grep "base_other_process: a warning" \
		'^jm4lw-prof: warning: the base profile is of another process' "$T/prof.err"
}

# A symlink to a secret swapped over a kept dump's name while
# format=symbolized is asked for it, for a bounded time (10 s, 100 requests at most).
case_symbolized_symlink_race() {
	local d name n=0 leaks=0 end
	d=$(scratch race)
	printf 'dump_min_interval = 0\n' >"$d/jm4lwd.conf"
	mkdir "$d/dumps"
	start_daemon -C "$d" -e MALLOC_CONF=prof:true,lg_prof_sample:10 -- \
		-f jm4lwd.conf -l 127.0.0.1:0 -D "$d/dumps" || return
	name=$(basename "$(ask jmfp)")
	[ -f "$d/dumps/$name" ] || { fail "symbolized_symlink_race: jmfp kept a dump" "$name"; return; }
	cp "$d/dumps/$name" "$d/real.heap"
	printf 'SECRET-MARKER-%s\n' "$$" >"$d/secret"
	chmod 0600 "$d/secret"
	# One racer for the whole case: the kept name is the dump, then a
	# symlink to the secret, then the dump again, for 5 s.
	python3 - "$d" "$name" <<'EOF' &
import os, sys, time
d, name = sys.argv[1], sys.argv[2]
dst, tr, ts = os.path.join(d, "dumps", name), os.path.join(d, "dumps", ".r"), os.path.join(d, "dumps", ".s")
end = time.monotonic() + 10
while time.monotonic() < end:
    for t in (tr, ts):
        try: os.unlink(t)
        except FileNotFoundError: pass
    os.link(os.path.join(d, "real.heap"), tr); os.rename(tr, dst)
    time.sleep(0.002)
    os.symlink(os.path.join(d, "secret"), ts); os.rename(ts, dst)
    time.sleep(0.002)
os.link(os.path.join(d, "real.heap"), tr); os.rename(tr, dst)
EOF
	local racer=$!
	end=$((SECONDS + 11))
	for _ in $(seq 100); do
		[ $SECONDS -lt $end ] || break
		hreq race "/jemalloc/dump?name=$name&format=symbolized" >/dev/null
		n=$((n + 1))
		grep -q "SECRET-MARKER-$$" "$T/race.body" 2>/dev/null && leaks=$((leaks + 1))
	done
	wait "$racer"
	if [ "$leaks" = 0 ]; then
		pass "symbolized_symlink_race: no reply of $n carried the secret"
	else
		fail "symbolized_symlink_race: no reply carried the secret" \
			"$leaks of $n replies served the file the symlink named"
	fi
	alive "symbolized_symlink_race: the daemon answers ruok"
	stop_daemon
}

# check_conf DESC FILE WANT: jm4lwd -n -f FILE ends within 20 s, exit 1, with
# exactly the line WANT (a fixed string) on stderr.
check_conf() {
	local rc
	timeout 20 "$JM4LWD" -n -f "$2" >"$T/n.out" 2>"$T/n.err" </dev/null
	rc=$?
	if [ "$rc" = 124 ]; then
		fail "$1: jm4lwd -n returns" "still blocked after 20 s"
		return
	fi
	assert_eq "$1: jm4lwd -n exits 1" 1 "$rc"
	assert_eq "$1: one line says why" "$3" "$(cat "$T/n.err")"
}

case_config_check_not_regular() {
	local d
	d=$(scratch config_check)
	mkfifo "$d/fifo"
	ln -s /dev/zero "$d/zero"
	check_conf "config_check FIFO" "$d/fifo" \
		"$d/fifo: not a regular file (a FIFO)"
	check_conf "config_check /dev/zero" /dev/zero \
		"/dev/zero: not a regular file (a character device)"
	check_conf "config_check symlink to /dev/zero" "$d/zero" \
		"$d/zero: not a regular file (a character device)"
	check_conf "config_check a directory" "$d" \
		"$d: not a regular file (a directory)"
}

case_config_too_big() {
	local d
	d=$(scratch config_big)
	printf 'allow = ruok\n' >"$d/big.conf"
	# 1 MiB and one byte of comment lines.
	yes '# ...............................................................' |
		head -c $((1024 * 1024 + 1)) >>"$d/big.conf"
	check_conf "config_too_big" "$d/big.conf" \
		"$d/big.conf: larger than 1 MiB (a configuration is a few KiB)"
}

# reload_refused DESC WANT: after a SIGHUP, the log says the reload failed
# with WANT, the words still answer, and the old allow list still holds.
reload_refused() {
	kill -HUP "$PID"
	if wait_log "reload failed, configuration unchanged: $2" 20; then
		pass "$1: the reload fails with one line"
	else
		fail "$1: the reload fails with one line" "$(show_tail "$DLOG")"
	fi
	probe_ruok "$1: ruok still answers"
	assert_eq "$1: the old allow list stays (jmfp refused)" \
		"jmfp is not executed because it is not in the whitelist." \
		"$(ask jmfp)"
	: >"$DLOG"
}

case_config_reload_not_regular() {
	local d cpu0 cpu1
	d=$(scratch config_reload)
	conf_file "$d" "listen = 127.0.0.1:0" "allow = ruok,mntr" \
		"dump_dir = $d/dumps"
	start_daemon -f "$d/jm4lwd.conf" || return
	baseline "config_reload" || { stop_daemon; return; }
	mv "$d/jm4lwd.conf" "$d/good.conf"
	mkfifo "$d/jm4lwd.conf"
	reload_refused "config_reload FIFO" \
		"$d/jm4lwd.conf: not a regular file \(a FIFO\)"
	rm "$d/jm4lwd.conf"
	ln -s /dev/zero "$d/jm4lwd.conf"
	cpu0=$(cpu_ticks)
	reload_refused "config_reload /dev/zero" \
		"$d/jm4lwd.conf: not a regular file \(a character device\)"
	sleep 1
	cpu1=$(cpu_ticks)
	# A spinning loop would burn ~100 ticks a second.
	assert_cmd "config_reload /dev/zero: no spinning (cpu $cpu0 -> $cpu1 ticks)" \
		test $((cpu1 - cpu0)) -lt 50
	rm "$d/jm4lwd.conf"
	mv "$d/good.conf" "$d/jm4lwd.conf"
	kill -HUP "$PID"
	if wait_log "configuration reloaded" 20; then
		pass "config_reload: a regular file again reloads"
	else
		fail "config_reload: a regular file again reloads" "$(show_tail "$DLOG")"
	fi
	check_clean "config_reload"
	stop_daemon
}

case_fifo_profile
case_fifo_binary
case_fifo_in_mapped_libraries
case_sparse_zero_file
case_binary_mismatch
case_cut_mapped_libraries
case_base_other_process
case_symbolized_symlink_race
case_config_check_not_regular
case_config_too_big
case_config_reload_not_regular
finish
