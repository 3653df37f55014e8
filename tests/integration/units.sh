#!/bin/bash
# Dumps from outside, on a schedule: conf/jm4lw-dump.service + .timer (the
# systemd pair) and conf/jm4lw-dump.cron (a crontab line).
#
#	bash units.sh     (JM4LWD, JM4LW_CLIENT: see ../lib.sh)
#
# - the units: a structural check (sections, the keys that matter, the
#   ExecStart binary and arguments), always; `systemd-analyze verify` when
#   systemd-analyze is installed (it needs no running systemd), on copies
#   whose ExecStart points at the built client (verify refuses a command
#   that does not exist, and /usr/local/bin/jm4lw is not installed here),
#   plus a misspelled copy it must refuse, so the check can fail;
# - the cron file: exactly one job line, five valid time fields meaning
#   "hourly", a command cron can run (absolute path, no %);
# - the commands themselves, with the client's path, the port and the log
#   file substituted, against a live jm4lwd: the cron line, the unit's
#   ExecStart, and the fleet variant in the cron file's header (two
#   daemons) each produce a profile.
. "$(dirname "$0")/../lib.sh"

CONF=$ROOT/conf
SVC=$CONF/jm4lw-dump.service
TMR=$CONF/jm4lw-dump.timer
CRON=$CONF/jm4lw-dump.cron
INSTALLED=/usr/local/bin/jm4lw

need nc.openbsd timeout
[ -x "$JM4LWD" ] || die "$JM4LWD is not executable"
[ -x "$JM4LW_CLIENT" ] || die "$JM4LW_CLIENT is not executable"
for f in "$SVC" "$TMR" "$CRON"; do
	[ -f "$f" ] || die "$f exists"
done

# --- the systemd pair: structure ------------------------------------------------

# ini FILE: "Section.Key=Value" per setting, "[Section]" per section
# header, "BAD: line" for anything else (comments and blank lines dropped;
# a line ending in \ is not continued: we have none and want none).
ini() {
	awk '
		/^[ \t]*([#;]|$)/ { next }
		/^\[[A-Za-z]+\]$/ { sec = substr($0, 2, length($0) - 2); print "[" sec "]"; next }
		/^[A-Za-z][A-Za-z0-9]*=/ && sec != "" {
			k = substr($0, 1, index($0, "=") - 1)
			print sec "." k "=" substr($0, index($0, "=") + 1); next
		}
		{ print "BAD: " $0 }' "$1"
}

# setting FILE Section.Key: its value(s), one per line.
setting() {
	ini "$1" | sed -n "s/^$2=//p"
}

case_structure() {
	echo "# structural check of the units (always runs)"
	ini "$SVC" >"$T/svc.ini"
	ini "$TMR" >"$T/tmr.ini"
	assert_no_grep "service: every line is a [Section], Key=Value or a comment" '^BAD: ' "$T/svc.ini"
	assert_no_grep "timer: every line is a [Section], Key=Value or a comment" '^BAD: ' "$T/tmr.ini"
	assert_eq "service: sections [Unit] [Service], once each" "[Unit] [Service]" \
		"$(grep '^\[' "$T/svc.ini" | tr '\n' ' ' | sed 's/ $//')"
	assert_eq "timer: sections [Unit] [Timer] [Install], once each" "[Unit] [Timer] [Install]" \
		"$(grep '^\[' "$T/tmr.ini" | tr '\n' ' ' | sed 's/ $//')"
	assert_eq "service: no key set twice" "" \
		"$(grep -v '^\[' "$T/svc.ini" | cut -d= -f1 | sort | uniq -d | tr '\n' ' ')"
	assert_eq "timer: no key set twice" "" \
		"$(grep -v '^\[' "$T/tmr.ini" | cut -d= -f1 | sort | uniq -d | tr '\n' ' ')"
	assert_grep "service: Unit.Description set" '^Unit\.Description=.+' "$T/svc.ini"
	assert_eq "service: Type=oneshot" oneshot "$(setting "$SVC" Service.Type)"
	assert_eq "service: ExecStart runs the client for one jmfp on loopback:9181" \
		"$INSTALLED -h 127.0.0.1 -p 9181 jmfp" "$(setting "$SVC" Service.ExecStart)"
	assert_eq "service: it runs as nobody in particular (DynamicUser=yes)" yes \
		"$(setting "$SVC" Service.DynamicUser)"
	assert_eq "service: no capabilities (CapabilityBoundingSet= empty)" "" \
		"$(setting "$SVC" Service.CapabilityBoundingSet)"
	assert_grep "service: CapabilityBoundingSet is there (empty, not missing)" \
		'^Service\.CapabilityBoundingSet=$' "$T/svc.ini"
	assert_eq "service: only loopback reachable (IPAddressDeny=any)" any \
		"$(setting "$SVC" Service.IPAddressDeny)"
	assert_eq "service: ... IPAddressAllow=localhost" localhost \
		"$(setting "$SVC" Service.IPAddressAllow)"
	assert_eq "timer: OnCalendar=hourly" hourly "$(setting "$TMR" Timer.OnCalendar)"
	assert_eq "timer: Persistent=true" true "$(setting "$TMR" Timer.Persistent)"
	assert_eq "timer: RandomizedDelaySec=60" 60 "$(setting "$TMR" Timer.RandomizedDelaySec)"
	assert_eq "timer: WantedBy=timers.target" timers.target "$(setting "$TMR" Install.WantedBy)"
	# No Unit=: the timer starts the service of its own name, which must be
	# the file next to it.
	assert_eq "timer: no Unit= (starts the service of the same name)" "" \
		"$(setting "$TMR" Timer.Unit)"
	assert_eq "timer and service share the name jm4lw-dump" \
		"$(basename "$SVC" .service)" "$(basename "$TMR" .timer)"
}

# --- the systemd pair: systemd-analyze verify ------------------------------------

case_verify() {
	local d out rc
	if ! command -v systemd-analyze >/dev/null; then
		skip "systemd-analyze verify (systemd-analyze not installed: the structural check above is what ran)"
		return
	fi
	echo "# systemd-analyze verify ($(systemd-analyze --version | head -1))"
	d=$T/units
	mkdir -p "$d"
	# The originals: the only complaint allowed is the client not being
	# installed at /usr/local/bin here.
	cp "$SVC" "$TMR" "$d/"
	out=$(cd "$d" && systemd-analyze verify ./jm4lw-dump.service ./jm4lw-dump.timer 2>&1)
	if [ -x "$INSTALLED" ]; then
		assert_eq "verify: the units as shipped, nothing to say" "" "$out"
	else
		assert_eq "verify: the units as shipped: only 'not executable' for the uninstalled $INSTALLED" \
			"jm4lw-dump.service: Command $INSTALLED is not executable: No such file or directory" \
			"$out"
	fi
	# The same with the built client in ExecStart: no complaint at all.
	sed -i "s#^ExecStart=$INSTALLED #ExecStart=$JM4LW_CLIENT #" "$d/jm4lw-dump.service"
	assert_grep_F "verify: copy's ExecStart points at the built client" \
		"ExecStart=$JM4LW_CLIENT -h" "$d/jm4lw-dump.service"
	out=$(cd "$d" && systemd-analyze verify ./jm4lw-dump.service ./jm4lw-dump.timer 2>&1)
	rc=$?
	if [ $rc = 0 ] && [ -z "$out" ]; then
		pass "verify: service + timer verify cleanly (exit 0, no output)"
	else
		fail "verify: service + timer verify cleanly" "exit $rc" "$out"
	fi
	# Control: a misspelled key must be caught.
	sed 's/^OnCalendar=/OnCalender=/' "$d/jm4lw-dump.timer" >"$d/bad.timer"
	mv "$d/bad.timer" "$d/jm4lw-dump.timer"
	out=$(cd "$d" && systemd-analyze verify ./jm4lw-dump.service ./jm4lw-dump.timer 2>&1)
	rc=$?
	if [ $rc != 0 ] && grep -q OnCalender <<<"$out"; then
		pass "verify: control: a timer with OnCalender= is refused"
	else
		fail "verify: control: a timer with OnCalender= is refused" "exit $rc" "$out"
	fi
	out=$(systemd-analyze calendar "$(setting "$TMR" Timer.OnCalendar)" 2>&1)
	assert_grep "OnCalendar=hourly is every hour on the hour" \
		'Normalized form: \*-\*-\* \*:00:00$' <(printf '%s\n' "$out")
}

# --- cron -------------------------------------------------------------------------

# cron_field VALUE MIN MAX: a valid crontab time field: comma list of *,
# N or N-M, each with an optional /STEP. (Names like mon or jan are valid
# in cron but not used here.)
cron_field() {
	local item base step a b
	[[ $1 =~ ^[0-9*/,-]+$ ]] || return 1
	IFS=, read -ra items <<<"$1"
	[ ${#items[@]} -gt 0 ] || return 1
	for item in "${items[@]}"; do
		base=${item%%/*}
		if [ "$base" != "$item" ]; then
			step=${item#*/}
			[[ $step =~ ^[0-9]+$ ]] && [ "$step" -ge 1 ] || return 1
		fi
		case $base in
		'*') ;;
		*-*)
			a=${base%-*} b=${base#*-}
			[[ $a =~ ^[0-9]+$ && $b =~ ^[0-9]+$ ]] || return 1
			[ "$a" -ge "$2" ] && [ "$b" -le "$3" ] && [ "$a" -le "$b" ] || return 1
			;;
		*)
			[[ $base =~ ^[0-9]+$ ]] && [ "$base" -ge "$2" ] && [ "$base" -le "$3" ] || return 1
			;;
		esac
	done
}

# cron_line DESC LINE: five valid time fields meaning hourly and a command
# cron can run; sets CRON_CMD.
cron_line() {
	local desc=$1 m h dom mon dow cmd ok=1
	read -r m h dom mon dow cmd <<<"$2"
	if cron_field "$m" 0 59 && cron_field "$h" 0 23 && cron_field "$dom" 1 31 &&
		cron_field "$mon" 1 12 && cron_field "$dow" 0 7 && [ -n "$cmd" ]; then
		pass "$desc: five valid time fields ($m $h $dom $mon $dow) and a command"
	else
		fail "$desc: five valid time fields and a command" "$2"
		ok=0
	fi
	if [[ $m =~ ^[0-9]+$ ]] && [ "$h $dom $mon $dow" = "* * * *" ]; then
		pass "$desc: hourly (minute $m of every hour)"
	else
		fail "$desc: hourly" "$m $h $dom $mon $dow"
	fi
	# cron turns an unescaped % into a newline; cron's PATH is /usr/bin:/bin.
	assert_eq "$desc: no % in the command" "" "$(tr -cd % <<<"$cmd")"
	assert_eq "$desc: the command is the client by its absolute path" \
		"$INSTALLED" "${cmd%% *}"
	CRON_CMD=$cmd
	[ $ok = 1 ]
}

case_cron() {
	local lines
	lines=$(grep -Ev '^[[:space:]]*(#|$)' "$CRON")
	assert_eq "cron: exactly one job line (the rest comments)" 1 "$(grep -c . <<<"$lines")"
	assert_no_grep "cron: no environment lines (KEY=value) the operator's crontab would inherit" \
		'^[A-Za-z_]+=' <(printf '%s\n' "$lines")
	cron_line "cron" "$lines"
	assert_eq "cron: the command: jmfp on 127.0.0.1:9181, appended to /var/log/jm4lw-dumps.log" \
		"$INSTALLED -h 127.0.0.1 -p 9181 jmfp >> /var/log/jm4lw-dumps.log 2>&1" "$CRON_CMD"
	JOB=$CRON_CMD
	FLEET_LINE=$(sed -n 's/^#[[:space:]]*\([0-9].* -H @\/etc\/jm4lw\/fleet\.txt jmfp .*\)$/\1/p' "$CRON")
	if [ -n "$FLEET_LINE" ]; then
		pass "cron: the header shows the fleet variant (-H @/etc/jm4lw/fleet.txt jmfp)"
		cron_line "cron fleet variant" "$FLEET_LINE"
		FLEET=$CRON_CMD
	else
		fail "cron: the header shows the fleet variant as a crontab line" "$(grep -e '-H' "$CRON")"
	fi
	assert_grep "cron: the header says how to install it" 'crontab' "$CRON"
}

# --- the commands, live ------------------------------------------------------------

# subst CMD: the command with the built client, our port and our log.
subst() {
	local c=$1
	c=${c//$INSTALLED/$JM4LW_CLIENT}
	c=${c//-p 9181/-p $PORT}
	c=${c//\/var\/log\/jm4lw-dumps.log/$T/dumps.log}
	c=${c//@\/etc\/jm4lw\/fleet.txt/@$T/fleet.txt}
	printf '%s' "$c"
}

# profile_in DIR PATH: PATH is a heap_v2 profile in DIR.
profile_in() {
	[ "${2%/*}" = "$(realpath "$1")" ] && [ "$(head -c 8 "$2" 2>/dev/null)" = heap_v2/ ]
}

case_live() {
	local d d1 d2 p1 p2 pid2 cmd argv out rc n
	d1=$(scratch a)
	d2=$(scratch b)
	for d in "$d1" "$d2"; do
		mkdir "$d/dumps"
		printf 'listen = 127.0.0.1:0\ndump_dir = %s/dumps\ndump_min_interval = 0\ndump_min_free = 0\n' \
			"$d" >"$d/jm4lwd.conf"
	done
	start_daemon -C "$d2" -e "$PROF_ON" -- -f "$d2/jm4lwd.conf" || return
	p2=$PORT
	pid2=$PID
	start_daemon -C "$d1" -e "$PROF_ON" -- -f "$d1/jm4lwd.conf" || return
	p1=$PORT

	# The cron job.
	cmd=$(subst "$JOB")
	if [[ $cmd == *"-p 9181 "* || $cmd == */var/log/* || $cmd == *$INSTALLED* ]]; then
		fail "cron job: substitution" "$cmd"
		return
	fi
	timeout 30 sh -c "$cmd"
	rc=$?
	out=$(cat "$T/dumps.log" 2>/dev/null)
	if [ $rc = 0 ] && [ "$(grep -c . <<<"$out")" = 1 ] && profile_in "$d1/dumps" "$out"; then
		pass "cron job (client and port substituted): exit 0, the log got the path of a new profile"
	else
		fail "cron job: exit 0 and a profile path in the log" "sh -c '$cmd': exit $rc" "log: $out"
	fi
	# The unit's ExecStart (systemd passes the words, no shell).
	read -ra argv <<<"$(subst "$(setting "$SVC" Service.ExecStart)")"
	out=$(timeout 30 "${argv[@]}" 2>&1)
	rc=$?
	if [ $rc = 0 ] && profile_in "$d1/dumps" "$out"; then
		pass "service ExecStart (client and port substituted): exit 0, prints a new profile's path"
	else
		fail "service ExecStart: exit 0, a profile path" "${argv[*]}: exit $rc" "$out"
	fi
	n=$(find "$d1/dumps" -name 'jm4lw.*.heap' | wc -l)
	assert_eq "the two commands wrote two profiles" 2 "$n"
	# The fleet variant, over both daemons.
	if [ -n "${FLEET:-}" ]; then
		printf '# fleet\n127.0.0.1:%s\n127.0.0.1:%s\n' "$p1" "$p2" >"$T/fleet.txt"
		: >"$T/dumps.log"
		cmd=$(subst "$FLEET")
		timeout 30 sh -c "$cmd"
		rc=$?
		if [ $rc = 0 ] &&
			profile_in "$d1/dumps" "$(sed -n "s/^127\.0\.0\.1:$p1: //p" "$T/dumps.log")" &&
			profile_in "$d2/dumps" "$(sed -n "s/^127\.0\.0\.1:$p2: //p" "$T/dumps.log")"; then
			pass "fleet variant (file substituted): exit 0, 'host:port: path' of a profile per host"
		else
			fail "fleet variant: a profile per host" "sh -c '$cmd': exit $rc" \
				"$(cat "$T/dumps.log")"
		fi
	fi
	alive "jm4lwd still answers imok" "$p1"
	assert_eq "no .jm4lw.* temporary file left" "" \
		"$(leftovers "$d1/dumps" "$d2/dumps")"
	stop_daemon
	PID=$pid2
	stop_daemon
}

case_structure
case_verify
case_cron
case_live
finish
