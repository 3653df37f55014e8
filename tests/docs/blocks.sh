#!/bin/bash
# blocks.sh: every fenced block of README.md and docs/*.md, as a reader
# pastes it. blocks.py lists them with their annotations (its header has
# the syntax); each `sh` block runs with bash in one scratch directory
# laid out as a clone (`build` is the build tree, the sources beside it),
# the well-known ports moved to the ones this test chose (in its expect
# lines too), and must exit 0,
# say no "command not found" and match each of its expect lines. Blocks
# that start servers (`&`) get a process group of their own, killed when
# the block is done. Shared fixtures, started on first use:
#	daemon       jm4lwd as scripts/run.sh starts it (profiling enabled,
#	             sampling off): 9181 and 9182 are its ports
#	agent-redis  redis-server under build/jm4lw-run --prof-active after
#	             some redis-benchmark load: 9191, 9192 and 6390
# (6391, a second redis, always gets a fresh port)
# A block without a fixture gets fresh ports for all of them, so the servers
# it starts meet no one else's. `ini` blocks go through `jm4lwd -n`,
# `yaml` blocks a YAML parser, `alloy` blocks a brace check; a skipped
# block is checked by the tool it names: promtool, yaml, braces, jm4lwd,
# scripts (sh -n on the scripts it runs) or a ctest test that runs it
# (api.readme, integration.units), which must exist in this build.
# Each docs/ page's contents list must be its headings, and every
# relative link must name a file and a heading that exist; no page
# names an issue number.
#	bash blocks.sh [FILE...]   (default README.md docs/*.md; ctest sets
#	                            SRC_DIR, BUILD_DIR, JM4LWD, JM4LW_RUN)
. "$(dirname "$0")/../lib.sh"

SRC_DIR=${SRC_DIR:-$ROOT}
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
need python3 nc curl redis-server redis-benchmark redis-cli
# py ARGS...: blocks.py.
py() { python3 "$TESTS_DIR/docs/blocks.py" "$@"; }
BLOCK_TIMEOUT=${BLOCK_TIMEOUT:-60}

cd "$SRC_DIR" || die "no $SRC_DIR"
if [ $# -eq 0 ]; then
	set -- README.md docs/*.md
fi
B=$(scratch blocks)
if py extract "$B" "$@" >"$T/index" 2>"$T/extract.err"; then
	pass "every fenced block has a language and annotations that read ($(wc -l <"$T/index") blocks)"
else
	fail "every fenced block has a language and annotations that read" "$(cat "$T/extract.err")"
fi

pages=()
for f in "$@"; do
	[ "$f" = README.md ] || pages+=("$f")
done
if [ "${#pages[@]}" -eq 0 ] || py toc "${pages[@]}" >"$T/toc.err"; then
	pass "each docs/ page's contents list is its headings"
else
	fail "each docs/ page's contents list is its headings" "$(cat "$T/toc.err")"
fi
if py links "$@" >"$T/links.err"; then
	pass "every relative link names a file and a heading that exist"
else
	fail "every relative link names a file and a heading that exist" "$(cat "$T/links.err")"
fi

# Users never see the project's issue numbers: the pages speak of features.
if grep -n -i -E 'issue #?[0-9]' "$@" >"$T/issues"; then
	fail "no page names an issue number" "$(cat "$T/issues")"
else
	pass "no page names an issue number"
fi

# The reader's directory: a clone with its build tree as build/.
W=$(scratch work)
ln -s "$BUILD_DIR" "$W/build"
for f in scripts conf examples include tests CMakeLists.txt; do
	ln -s "$SRC_DIR/$f" "$W/$f"
done

# go tool pprof and jeprof keep what they fetch under $HOME unless told:
# here, in the scratch directory.
export PPROF_TMPDIR=$W/pprof JEPROF_TMPDIR=$W/jeprof

# Fixtures, started on first use; their port maps.
DAEMON_MAP=
AGENT_MAP=
fixture() {
	local t1=$EPOCHREALTIME
	case $1 in
	daemon)
		[ -n "$DAEMON_MAP" ] && return 0
		start_daemon -e "$PROF_ON" -- -l 127.0.0.1:0 -D "$(scratch dumps)" || return 1
		DAEMON_MAP="9181=$PORT 9182=$HTTP_PORT"
		;;
	agent-redis)
		[ -n "$AGENT_MAP" ] && return 0
		start_redis_agent redis || return 1
		redis-benchmark -p "$RPORT" -t set,lpush,hset -n 20000 -d 256 \
			-r 100000 -q >/dev/null 2>&1
		AGENT_MAP="9191=$APORT 9192=$AHTTP 6390=$RPORT"
		;;
	esac
	log "fixture $1 started in $(awk -v a="$t1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
}

# ports SETUPS: old=new pairs for every well-known port: the fixtures'
# for the blocks that name them, else free ones (one python for all).
ports() {
	local fresh
	read -ra fresh < <(python3 -c 'import socket
ss = [socket.socket() for _ in range(6)]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
	case " $1 " in
	*" daemon "*) echo -n "$DAEMON_MAP" ;;
	*) echo -n "9181=${fresh[0]} 9182=${fresh[1]}" ;;
	esac
	case " $1 " in
	*" agent-redis "*) echo " $AGENT_MAP 6391=${fresh[5]}" ;;
	*) echo " 9191=${fresh[2]} 9192=${fresh[3]} 6390=${fresh[4]} 6391=${fresh[5]}" ;;
	esac
}

# run_block DIR: run one sh block, check its status and output.
run_block() {
	local d=$1 where setup s pid status map expects t1
	where=$(cat "$d/where")
	setup=$(cat "$d/setup")
	for s in $setup; do
		fixture "$s" || { fail "$where: fixture $s"; return; }
	done
	map=$(ports "$setup")
	t1=$EPOCHREALTIME
	# shellcheck disable=SC2086 # the map is a list of words
	py rewrite "$d/code" "$d/run.sh" $map
	# shellcheck disable=SC2086
	py rewrite "$d/expect" "$d/expect.run" $map
	(cd "$W" && exec setsid bash "$d/run.sh") </dev/null >"$d/out" 2>&1 &
	pid=$!
	for _ in $(seq $((BLOCK_TIMEOUT * 10))); do
		_alive "$pid" || break
		sleep 0.1
	done
	if _alive "$pid"; then
		kill -TERM -- "-$pid" 2>/dev/null
		fail "$where: done within $BLOCK_TIMEOUT s" "$(tail -5 "$d/out")"
	fi
	wait "$pid"
	status=$?
	log "$where: ran in $(awk -v a="$t1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
	# What the block left running (a server started with &).
	kill -TERM -- "-$pid" 2>/dev/null
	if [ "$status" -ne 0 ]; then
		fail "$where: exits 0 (ports $map)" "status $status" "$(tail -8 "$d/out")"
		return
	fi
	if grep -q 'command not found' "$d/out"; then
		fail "$where: every command exists" "$(grep 'command not found' "$d/out")"
		return
	fi
	mapfile -t expects <"$d/expect.run"
	if [ "${#expects[@]}" -eq 0 ] || [ -z "${expects[0]}" ]; then
		pass "$where: runs (no expect)"
	elif py expect "$d/out" "${expects[@]}" >"$d/miss"; then
		pass "$where: runs, output as the text says (${#expects[@]} checks)"
	else
		fail "$where: output as the text says" "$(cat "$d/miss")" \
			"$(head -c 1500 "$d/out")"
	fi
}

# check_with TOOL DIR: a block not run here, checked by TOOL.
check_with() {
	local tool=$1 d=$2 where
	where=$(cat "$d/where")
	case $tool in
	promtool)
		assert_cmd "$where: promtool check config" promtool check config "$d/code" ;;
	yaml)
		assert_cmd "$where: YAML that parses" py yaml "$d/code" ;;
	braces)
		assert_cmd "$where: balanced braces" py braces "$d/code" ;;
	jm4lwd)
		assert_cmd "$where: jm4lwd -n accepts it" "$JM4LWD" -n -f "$d/code" ;;
	scripts)
		# Each command is a script of the repository that its own shell
		# (its #! line: sh or bash) reads with -n.
		local cmd ok=1 shebang
		while read -r cmd _; do
			case $cmd in '' | '#'*) continue ;; esac
			[ -x "$SRC_DIR/$cmd" ] && read -r shebang <"$SRC_DIR/$cmd" &&
				"${shebang##*[/ ]}" -n "$SRC_DIR/$cmd" || ok=0
		done <"$d/code"
		if [ "$ok" = 1 ]; then
			pass "$where: its scripts exist and parse (their shell's -n)"
		else
			fail "$where: its scripts exist and parse (their shell's -n)" "$(cat "$d/code")"
		fi
		;;
	*.*)
		# A ctest test of this build runs it.
		if (cd "$BUILD_DIR" && ctest -N -R "^${tool//./\\.}\$") | grep -q '^Total Tests: 1$'; then
			pass "$where: the ctest $tool runs it"
		else
			fail "$where: checked by the ctest $tool, which this build does not have"
		fi
		;;
	*)
		fail "$where: checked-by $tool: no such checker (promtool, yaml, braces, jm4lwd, scripts, a ctest name)" ;;
	esac
}

nrun=0 nskip=0 ncheck=0
t0=$(date +%s)
while IFS=$'\t' read -r -u 3 n where lang kind; do
	d=$B/$n
	case $kind in
	run)
		nrun=$((nrun + 1))
		run_block "$d"
		;;
	skip)
		nskip=$((nskip + 1))
		check_with "$(cat "$d/checked_by")" "$d"
		;;
	check)
		ncheck=$((ncheck + 1))
		case $lang in
		ini) check_with jm4lwd "$d" ;;
		yaml) check_with yaml "$d" ;;
		alloy) check_with braces "$d" ;;
		esac
		;;
	esac
done 3<"$T/index"
log "blocks: $nrun run, $nskip skipped (each checked by its tool), $ncheck config blocks checked, in $(($(date +%s) - t0)) s"
finish
