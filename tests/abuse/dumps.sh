#!/bin/bash
# Abuse cases 7, 8 and 9: jmfp where the disk says no, and jmfp in a storm.
#   7  an unwritable dump_dir (its parent a regular file; a read-only
#      mount): an error line naming the directory, no file anywhere;
#   8  a full file system (a 1 MiB tmpfs): with dump_min_free=0 jemalloc
#      runs out of space half-way, the reply is an error line and the
#      half-written temporary is gone; with dump_min_free=2M the dump is
#      refused up front with the free space; with 512K it is written;
#   9  50 jmfp from 4 clients at once against dump_min_interval=2: at most
#      one dump per interval, every other one gets the "retry in" line.
# Mounting needs root (CAP_SYS_ADMIN); where it is impossible the cases
# that need it print a skip line. Mounts are undone on exit, always.
#
#	bash dumps.sh    (JM4LWD=path/to/jm4lwd)
. "$(dirname "$0")/common.sh"

# expect_one_line DESC FILE ERE: FILE is exactly one line and matches ERE.
expect_one_line() {
	if [ "$(wc -l <"$2")" = 1 ] && grep -Eq -- "$3" "$2"; then
		pass "$1: $(head -c 160 "$2")"
	else
		fail "$1" "want one line matching /$3/, got:" "$(show "$2")"
		return 1
	fi
}

# 7a/7b. dump_dir below a regular file, and dump_dir a regular file.
case_dir_not_dir() {
	local d
	d=$(scratch notdir)
	echo data >"$d/file"
	conf_file "$d" "dump_dir = $d/file/sub" "dump_min_free = 0"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 || return
	baseline "dump_dir below a file" || return
	ask jmfp >"$d/jmfp.out"
	expect_one_line "dump_dir below a regular file: error line naming it" "$d/jmfp.out" \
		"^error: heap profile dump to ${d//./\\.}/file/sub failed: Not a directory$"
	assert_eq "dump_dir below a regular file: mntr dumps_failed 1, written 0" "1 0" \
		"$(mntr_value jm4lw_dumps_failed) $(mntr_value jm4lw_dumps_written)"
	assert_eq "dump_dir below a regular file: the file is untouched" data "$(cat "$d/file")"
	check_clean "dump_dir below a file" "$d" file jm4lwd.conf jm4lwd.log jmfp.out
	stop_daemon

	conf_file "$d" "dump_dir = $d/file" "dump_min_free = 0"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 || return
	baseline "dump_dir a file" || return
	ask jmfp >"$d/jmfp.out"
	expect_one_line "dump_dir a regular file: error line naming it" "$d/jmfp.out" \
		"^error: heap profile dump to ${d//./\\.}/file failed: Not a directory$"
	check_clean "dump_dir a file" "$d" file jm4lwd.conf jm4lwd.log jmfp.out
	stop_daemon
}

# 7c. A read-only mount (root writes through permissions, not through ro).
case_dir_read_only() {
	local d m
	d=$(scratch readonly)
	m=$d/ro
	if ! mount_tmpfs "$m" ro,size=1m; then
		skip "SKIP read-only dump_dir: cannot mount a tmpfs here ($(cat "$T/mount.err"))"
		return
	fi
	conf_file "$d" "dump_min_free = 0"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$m" || return
	baseline "read-only dump_dir" || return
	ask jmfp >"$d/jmfp.out"
	expect_one_line "read-only dump_dir: error line naming it and why" "$d/jmfp.out" \
		"^error: heap profile dump to ${m//./\\.} failed: Read-only file system$"
	assert_eq "read-only dump_dir: mntr dumps_failed 1" 1 "$(mntr_value jm4lw_dumps_failed)"
	check_clean "read-only dump_dir" "$m"
	stop_daemon
}

# Free bytes for unprivileged users on the file system holding $1.
free_bytes() {
	stat -f -c '%a %S' "$1" | awk '{ print $1 * $2 }'
}

# 8. A 1 MiB tmpfs as dump_dir, filled up: completely, then all but a page.
case_disk_full() {
	local d m f0 r
	d=$(scratch full)
	m=$d/full
	if ! mount_tmpfs "$m" size=1m; then
		skip "SKIP full dump_dir: cannot mount a tmpfs here ($(cat "$T/mount.err"))"
		return
	fi
	# The failed dump counts for dump_min_interval (conf/jm4lwd.conf:
	# "Failed dumps count too"): 60 s, so the second jmfp is refused.
	conf_file "$d" "dump_min_free = 0" "dump_min_interval = 60"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$m" || return
	baseline "full dump_dir" || return
	dd if=/dev/zero of="$m/filler" bs=64k 2>/dev/null
	echo "# $m: $(free_bytes "$m") bytes free"
	ask jmfp >"$d/jmfp1.out"
	expect_one_line "disk full, dump_min_free=0: an error line naming the dir" "$d/jmfp1.out" \
		"^error: heap profile dump to ${m//./\\.} failed: .+"
	ask jmfp >"$d/jmfp2.out"
	expect_one_line "disk full: the failed dump counts for dump_min_interval" "$d/jmfp2.out" \
		'^error: .*retry in '
	assert_eq "disk full: mntr dumps_failed 1, dumps_refused 1, written 0" "1 1 0" \
		"$(mntr_value jm4lw_dumps_failed) $(mntr_value jm4lw_dumps_refused) $(mntr_value jm4lw_dumps_written)"
	check_clean "disk full" "$m" filler

	# One page left: a profile (~6 KB here) starts to be written and runs
	# out of space half-way. A half profile must not be served as a dump.
	truncate -s -4096 "$m/filler"
	conf_file "$d" "dump_min_free = 0" "dump_min_interval = 0"
	kill -HUP "$PID"
	wait_log '^jm4lwd: configuration reloaded' 10 ||
		fail "disk full: SIGHUP reload logged" "$(show_tail "$DLOG")"
	f0=$(free_bytes "$m")
	echo "# $m: $f0 bytes free"
	ask jmfp >"$d/jmfp3.out"
	expect_one_line "disk nearly full: an error line naming the dir, not the path of a cut-off profile" \
		"$d/jmfp3.out" "^error: heap profile dump to ${m//./\\.} failed: .+"
	assert_eq "disk nearly full: the half-written file is gone, its space free again" \
		"$f0" "$(free_bytes "$m")"
	assert_eq "disk nearly full: mntr dumps_failed 2, written 0" "2 0" \
		"$(mntr_value jm4lw_dumps_failed) $(mntr_value jm4lw_dumps_written)"
	check_clean "disk nearly full" "$m" filler
	rm -f "$m"/jm4lw.*.heap # what the daemon left if it served a cut-off one

	conf_file "$d" "dump_min_free = 2M" "dump_min_interval = 0"
	kill -HUP "$PID"
	for r in $(seq $((50 * SLOW))); do
		[ "$(grep -c '^jm4lwd: configuration reloaded' "$DLOG")" -ge 2 ] && break
		sleep 0.1
	done
	assert_grep "conf: dump_min_free=2M shown in bytes" '^dump_min_free=2097152$' \
		<(ask conf)
	ask jmfp >"$d/jmfp4.out"
	expect_one_line "dump_min_free=2M on a 1 MiB disk: refused, saying how much is free" \
		"$d/jmfp4.out" "^error: .*${m//./\\.}.*refused.* free"
	assert_eq "dump_min_free: mntr dumps_refused 2" 2 "$(mntr_value jm4lw_dumps_refused)"
	check_clean "dump_min_free refusal" "$m" filler

	# The control: room enough (an empty 1 MiB disk, 512K required).
	rm -f "$m/filler"
	conf_file "$d" "dump_min_free = 512K" "dump_min_interval = 0"
	kill -HUP "$PID"
	for r in $(seq $((50 * SLOW))); do
		[ "$(grep -c '^jm4lwd: configuration reloaded' "$DLOG")" -ge 3 ] && break
		sleep 0.1
	done
	r=$(ask jmfp)
	if [[ $r =~ ^${m//./\.}/jm4lw\.$PID\.[0-9]+\.[a-z]\.heap$ ]] && [ -s "$r" ]; then
		pass "dump_min_free=512K, 1 MiB free: the dump is written ($r)"
	else
		fail "dump_min_free=512K, 1 MiB free: the dump is written" "$r"
	fi
	check_clean "dump_min_free=512K" "$m" "${r##*/}"
	stop_daemon
}

# 9. The storm. dump_min_free=0: this case is about the interval only.
case_jmfp_storm() {
	local d r ok refused other elapsed bound i files=()
	local retry='^REPLY error: jmfp refused: .*retry (in [0-9.]+ s|when it is done)$'
	d=$(scratch storm)
	mkdir "$d/dumps"
	conf_file "$d" "dump_min_interval = 2" "dump_min_free = 0"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 -D dumps || return
	baseline "jmfp storm" || return
	if ! ab jmfp_storm "$PORT" 50 4 >"$d/storm.out" 2>&1; then
		fail "jmfp storm: 50 requests, every one answered" "$(tail -5 "$d/storm.out")"
	fi
	# Refused with a retry line: the interval's ("retry in N s"), or, while
	# the one dump still runs on the worker, "retry when it is done".
	ok=$(grep -c '^REPLY /' "$d/storm.out")
	refused=$(grep -Ec "$retry" "$d/storm.out")
	other=$(grep '^REPLY ' "$d/storm.out" | grep -v '^REPLY /' | grep -Evc "$retry")
	elapsed=$(sed -n 's/^ELAPSED //p' "$d/storm.out")
	# One dump at the start, then at most one per 2 s that passed.
	bound=$(awk -v e="$elapsed" 'BEGIN { print int(e / 2) + 1 }')
	echo "# storm: $ok dumps, $refused refused, $other other, in $elapsed s (bound $bound)"
	if [ "$ok" -ge 1 ] && [ "$ok" -le "$bound" ]; then
		pass "jmfp storm: $ok dump(s) in $elapsed s, at most one per dump_min_interval"
	else
		fail "jmfp storm: 1 to $bound dumps in $elapsed s" "$ok written" \
			"$(head -5 "$d/storm.out")"
	fi
	assert_eq "jmfp storm: all 50 answered, the rest with the retry line" \
		"50 0" "$((ok + refused)) $other"
	grep '^REPLY error: ' "$d/storm.out" | head -1 | sed 's/^REPLY /# e.g. /'
	assert_eq "jmfp storm: mntr dumps_written and dumps_refused agree" \
		"$ok $refused" \
		"$(mntr_value jm4lw_dumps_written) $(mntr_value jm4lw_dumps_refused)"
	# Once the interval is over, the next one is written (polled; a
	# bound only).
	for i in $(seq $((40 * SLOW))); do
		r=$(ask jmfp)
		case $r in /*) break ;; esac
		sleep 0.25
	done
	case $r in
	/*) pass "jmfp storm: once the interval is over, jmfp writes again" ;;
	*) fail "jmfp storm: jmfp writes again within 10 s" "$r" ;;
	esac
	mapfile -t files < <({ sed -n 's/^REPLY //p' "$d/storm.out"; echo "$r"; } |
		grep '^/' | xargs -r -n 1 basename)
	check_clean "jmfp storm" "$d/dumps" "${files[@]}"
	stop_daemon
}

# -n rejects bad values of the new keys with FILE:LINE: reason.
case_bad_values() {
	local d v out
	d=$(scratch bad_values)
	for v in "dump_min_free = 64MB" "dump_min_free = 1.5G" "dump_min_free = -1" \
		"dump_min_interval = 86401" "dump_min_interval = soon"; do
		printf '[jm4lw]\n%s\n' "$v" >"$d/bad.conf"
		out=$(timeout 30 "$JM4LWD" -n -f "$d/bad.conf" 2>&1)
		if [ $? = 1 ] && [[ $out == "$d/bad.conf:2: "* ]]; then
			pass "-n: \"$v\" refused ($out)"
		else
			fail "-n: \"$v\" refused with $d/bad.conf:2: reason" "$out"
		fi
	done
}

# Pinned memory dumps planted read-only in dump_dir: six of ours at 0400
# (DUMPS_PINNED_MAX is 4), another user's at 0400, and a 0400 dump of
# ours of another cause; dump_keep = 1. A jmfp's retention keeps the four
# newest pins, unpins the two older ones and deletes them (each said in
# the log), deletes the read-only word dump, and leaves the other user's
# alone; jmls lists ours and not theirs.
case_pinned_planted() {
	local d now i r n other=
	d=$(scratch pinned)
	mkdir "$d/dumps"
	conf_file "$d" "dump_min_interval = 0" "dump_min_free = 0" "dump_keep = 1"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 -D dumps || return
	now=$(date +%s)
	for i in 1 2 3 4 5 6; do
		printf 'heap_v2/524288\n  t*: 0: 0 [0: 0]\n' >"$d/dumps/jm4lw.7.$i.o.heap"
		touch -d "@$((now - 600 + 60 * i))" "$d/dumps/jm4lw.7.$i.o.heap"
		chmod 400 "$d/dumps/jm4lw.7.$i.o.heap"
	done
	printf 'heap_v2/524288\n' >"$d/dumps/jm4lw.7.9.w.heap"
	touch -d "@$((now - 30))" "$d/dumps/jm4lw.7.9.w.heap"
	chmod 400 "$d/dumps/jm4lw.7.9.w.heap"
	if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
		other=$d/dumps/jm4lw.8.1.o.heap
		printf 'heap_v2/524288\n' >"$other"
		chown nobody "$other"
		chmod 400 "$other"
	fi
	r=$(ask jmfp)
	assert_cmd "pinned planted: jmfp writes ($r)" test -f "$r"
	n=0
	for i in 3 4 5 6; do
		[ "$(stat -c %a "$d/dumps/jm4lw.7.$i.o.heap" 2>/dev/null)" = 400 ] && n=$((n + 1))
	done
	assert_eq "pinned planted: the four newest pins are kept, still read-only" 4 "$n"
	assert_eq "pinned planted: the two older ones and the read-only word dump are deleted" \
		"" "$(ls "$d/dumps" | grep -E '^jm4lw\.7\.(1|2|9)\.')"
	assert_grep "pinned planted: the log says which pin was released" \
		"retention: .*/jm4lw\.7\.2\.o\.heap unpinned \(more than 4 memory dumps pinned\)" "$DLOG"
	assert_grep "pinned planted: ... and which dumps retention deleted" \
		"retention: deleted .*/jm4lw\.7\.1\.o\.heap \(.*dump_keep=1" "$DLOG"
	ask jmls >"$d/jmls"
	assert_eq "pinned planted: jmls lists the new dump and the four pins" 5 \
		"$(grep -cE '(^|/)jm4lw\.7\.[3-6]\.o\.heap|'"${r##*/}" "$d/jmls")"
	if [ -n "$other" ]; then
		assert_cmd "pinned planted: another user's is left alone" test -f "$other"
		assert_no_grep "pinned planted: ... and not listed" 'jm4lw\.8\.1\.o\.heap' "$d/jmls"
	else
		skip "pinned planted: another user's file (needs root and a nobody user)"
	fi
	alive "pinned planted: the daemon still serves"
	stop_daemon
}

case_dir_not_dir
case_dir_read_only
case_disk_full
case_jmfp_storm
case_bad_values
case_pinned_planted
finish
