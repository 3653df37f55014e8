#!/bin/bash
# shellcheck disable=SC2154 # $API_je_first, $LIB_DIR...: set by ctest
# shellcheck disable=SC2119 # lib.sh's stop_daemon: its argument is optional
# lazy_libdw.sh: libdw is loaded on the first profile, not at start
# A host that never asks for a profile maps neither
# libdw nor libelf (nor liblzma and libbz2, theirs), and its profile
# shows none of their memory; the first jmcs/jmtp loads them, on the
# worker. Checked on jm4lwd, on a host linking libjm4lw.so and on the
# preload agent, through /proc/PID/maps; and where libdw.so.1 cannot be
# loaded, the words still answer, from the ELF symbol tables, saying so
# in one line (reply and log).
#
#	LIB_DIR      the build tree, with libjm4lw.so and the agent
#	JM4LWD, JM4LW_CLIENT, JM4LW_RUN, API_je_first (api_host, -ljm4lw)
. "$(dirname "$0")/../lib.sh"

need readelf nm nc.openbsd curl timeout
ELFUTILS='lib(dw|elf)[-.]'            # libdw.so.1, libdw-0.188.so, libelf...
THEIRS='lib(dw|elf|lzma|bz2)[-.]'     # and what they bring
CONF=$T/jm4lw.conf
printf 'dump_min_interval = 0\n' >"$CONF"

# mapped PID: the elfutils objects (and theirs) PID maps, one a line.
mapped() {
	grep -oE "/[^/ ]*${THEIRS}[^/ ]*$" "/proc/$1/maps" | sort -u
}

# none_mapped DESC PID: PID maps no libdw, libelf, liblzma or libbz2.
none_mapped() {
	local m
	m=$(mapped "$2")
	if [ -z "$m" ]; then
		pass "$1"
	else
		fail "$1" "mapped: $m"
	fi
}

# both_mapped DESC PID: PID maps libdw and libelf.
both_mapped() {
	local m
	m=$(mapped "$2")
	if grep -q '^/libdw[-.]' <<<"$m" && grep -q '^/libelf[-.]' <<<"$m"; then
		pass "$1 ($(echo "$m" | tr '\n' ' '))"
	else
		fail "$1" "mapped: ${m:-nothing of elfutils}"
	fi
}

# [needed] No object of ours names libdw or libelf among its NEEDED
# entries, and libjm4lw.so leaves none of their functions undefined (a
# call not routed through prof/dw_load.h would be one: a shared library
# links with undefined symbols).
case_needed() {
	local f
	for f in "$LIB_DIR/libjm4lw.so" "$LIB_DIR/libjm4lw_agent.so" "$JM4LWD"; do
		readelf -d "$f" >"$T/dyn" 2>&1
		assert_grep "[needed] ${f##*/} has NEEDED entries" 'NEEDED' "$T/dyn"
		assert_no_grep "[needed] ${f##*/} needs no libdw, libelf" \
			"NEEDED.*$ELFUTILS" "$T/dyn"
	done
	nm -D --undefined-only "$LIB_DIR/libjm4lw.so" >"$T/undef"
	assert_no_grep "[needed] libjm4lw.so calls no libdw or libelf function directly" \
		' (dwfl|dwarf|dwelf|elf|gelf)_' "$T/undef"
}

# [daemon] jm4lwd: nothing of elfutils through the words and routes that
# are no profile; then jmfp and jmcs have loaded libdw and libelf, and neither that
# profile nor the next (taken with libdw loaded) has a frame in them.
case_daemon() {
	local w
	start_daemon -e MALLOC_CONF=prof:true,prof_active:true -- \
		-f "$CONF" -l 127.0.0.1:0 -D "$T" || return 1
	none_mapped "[daemon] jm4lwd started: no libdw, libelf, liblzma, libbz2 mapped" "$PID"
	for w in ruok mntr conf srvr jmst jmdr; do
		ask "$w" >"$T/$w.out"
	done
	hreq metrics /metrics >/dev/null
	hreq status /jemalloc/status >/dev/null
	none_mapped "[daemon] after ruok mntr conf srvr jmst jmdr, /metrics, /jemalloc/status: none mapped" "$PID"
	# jmfp is a profile too: a kept dump gets its leak index,
	# its functions' names, so it may be the first to load libdw.
	ask jmfp >"$T/jmfp.out"
	assert_grep "[daemon] jmfp wrote a dump" '\.heap$' "$T/jmfp.out"
	ask jmcs >"$T/jmcs1.out"
	assert_grep "[daemon] jmcs answers stacks" '^[^ ].* [0-9]+$' "$T/jmcs1.out"
	both_mapped "[daemon] jmcs loaded libdw and libelf" "$PID"
	assert_no_grep "[daemon] the first profile has no frame of elfutils" \
		"$ELFUTILS|(^|;)(dwfl|dwarf|elf|gelf)_" "$T/jmcs1.out"
	ask jmcs >"$T/jmcs2.out"
	assert_no_grep "[daemon] nor the next, taken with libdw loaded (the worker samples nothing)" \
		"$ELFUTILS|(^|;)(dwfl|dwarf|elf|gelf)_" "$T/jmcs2.out"
	ask jmtp >"$T/jmtp.out"
	assert_grep "[daemon] jmtp answers its table" '^Total: ' "$T/jmtp.out"
	assert_no_grep "[daemon] jmtp: no warning (libdw loaded)" '^# warning' "$T/jmtp.out"
	alive "[daemon] still serving"
	stop_daemon
}

# [host] A host linking libjm4lw.so (api_host, -ljemalloc -ljm4lw) in
# thread mode: the same, through its own module.
case_host() {
	local pid port
	rm -f "$T/in" && mkfifo "$T/in"
	MALLOC_CONF=prof:true,prof_active:true JM4LW_CONF="$CONF" \
		"$API_je_first" thread <"$T/in" >"$T/host.out" 2>"$T/host.err" &
	pid=$!
	track $pid
	exec 4>"$T/in" # it serves until this closes
	if ! port=$(wait_port "$T/host.err"); then
		fail "[host] api_host listens" "$(cat "$T/host.out" "$T/host.err")"
		exec 4>&-
		return 1
	fi
	none_mapped "[host] started: no libdw, libelf, liblzma, libbz2 mapped" "$pid"
	ask mntr "$port" >/dev/null
	none_mapped "[host] after mntr: none mapped" "$pid"
	ask jmtp "$port" >"$T/host.jmtp"
	assert_grep "[host] jmtp answers its table" '^Total: ' "$T/host.jmtp"
	both_mapped "[host] jmtp loaded libdw and libelf" "$pid"
	exec 4>&-
	wait_exit "$pid" 10
	assert_eq "[host] it stops when asked" 0 "$EXIT_STATUS"
}

# [agent] The preload agent (jm4lw-run) in a program of its own: the same.
case_agent() {
	local pid port
	(exec env JM4LW_CONF="$CONF" "$JM4LW_RUN" --prof-active -l 127.0.0.1:0 \
		-W "" -- sleep 60) </dev/null >"$T/agent.out" 2>"$T/agent.err" &
	pid=$! # jm4lw-run execs sleep
	track $pid
	for _ in $(seq 100); do
		port=$(sed -n 's/^jm4lw agent\[[0-9]*\]: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/agent.err")
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || { fail "[agent] it listens" "$(cat "$T/agent.err")"; return 1; }
	none_mapped "[agent] started: no libdw, libelf, liblzma, libbz2 mapped" "$pid"
	ask jmtp "$port" >"$T/agent.jmtp"
	assert_grep "[agent] jmtp answers its table" '^Total: ' "$T/agent.jmtp"
	both_mapped "[agent] jmtp loaded libdw and libelf" "$pid"
	kill "$pid"
	wait_exit "$pid" 10
}

# [missing] libdw.so.1 that cannot be loaded (a file that is not one,
# first on LD_LIBRARY_PATH): jm4lwd starts (nothing of it is needed at
# start), jmtp and jmcs answer with names from the ELF symbol tables, jmtp
# says why in one warning line, the log says it once per profile, conf and
# mntr name the ELF tables as the symbolizer from then on, and the daemon
# keeps serving.
case_missing() {
	local fake
	fake=$(scratch fake)
	echo 'not a library' >"$fake/libdw.so.1"
	start_daemon -e MALLOC_CONF=prof:true,prof_active:true \
		-e LD_LIBRARY_PATH="$fake" -- -f "$CONF" -l 127.0.0.1:0 -D "$T" ||
		return 1
	ask conf >"$T/miss.conf0"
	assert_grep "[missing] before any profile, conf names libdw (not tried yet)" \
		'^symbolizer=libdw$' "$T/miss.conf0"
	ask jmtp >"$T/miss.jmtp"
	assert_grep "[missing] jmtp answers its table" '^Total: ' "$T/miss.jmtp"
	assert_eq "[missing] jmtp: one warning line" 1 "$(grep -c '^# warning' "$T/miss.jmtp")"
	assert_grep "[missing] it says libdw cannot be loaded and where names come from" \
		'^# warning: libdw\.so\.1 cannot be loaded: .*libdw\.so\.1: .*; names from the ELF symbol tables only: no inline frames, no file:line$' \
		"$T/miss.jmtp"
	assert_no_grep "[missing] no inline frame in the table" '\(inline\)' "$T/miss.jmtp"
	ask jmcs >"$T/miss.jmcs"
	assert_grep "[missing] jmcs answers stacks" '^[^ ].* [0-9]+$' "$T/miss.jmcs"
	assert_grep "[missing] the log says it in one line" \
		'^jm4lwd: .*libdw\.so\.1 cannot be loaded: .*; names from the ELF symbol tables only' "$DLOG"
	none_mapped "[missing] nothing of elfutils mapped" "$PID"
	ask conf >"$T/miss.conf"
	assert_grep "[missing] then conf names the symbolizer in use: elf" \
		'^symbolizer=elf$' "$T/miss.conf"
	ask mntr >"$T/miss.mntr"
	assert_grep "[missing] and mntr" '^jm4lw_symbolizer	elf$' "$T/miss.mntr"
	alive "[missing] still serving"
	stop_daemon
}

case_needed
case_daemon
case_host
case_agent
case_missing
finish
