#!/bin/bash
# Hostile dump directories: another local user plants files or
# symlinks where our dumps go. Each case is named after the defect it pins:
#   dump_dir_foreign_symlink  dump_dir a symlink (to a stand-in for /etc)
#                             another user made: jmfp wrote through it,
#                             jmls listed the target;
#   dump_dir_foreign_dir      dump_dir a directory another user owns, and
#                             one anybody may write to (not sticky);
#   retention_foreign_owner   files named like ours, another user's, with
#                             future mtimes: dump_keep deleted root's own;
#   dump_dir_private_default  a dump_dir naming %u is made, mode 0700, and
#                             refused when someone else made it first.
# Other users' files need root (chown); elsewhere the cases print a skip.
#
#	bash hostile_dumps.sh    (JM4LWD=path/to/jm4lwd)
. "$(dirname "$0")/common.sh"

NOBODY=65534

# root_only CASE: 0 if we may chown files to another user.
root_only() {
	[ "$(id -u)" = 0 ] && return 0
	skip "SKIP $1: making another user's files needs root"
	return 1
}

# A symlink another user made, as dump_dir: refused, nothing written at its
# target, jmls refuses too.
case_dump_dir_foreign_symlink() {
	local d
	root_only dump_dir_foreign_symlink || return
	d=$(scratch foreign_symlink)
	mkdir "$d/etc"
	echo secret >"$d/etc/passwd"
	ln -s "$d/etc" "$d/dumps"
	chown -h "$NOBODY:$NOBODY" "$d/dumps"
	conf_file "$d" "dump_dir = $d/dumps" "dump_min_free = 0" "dump_min_interval = 0"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 || return
	baseline "dump_dir_foreign_symlink" || return
	ask jmfp >"$d/jmfp.out"
	assert_grep "dump_dir_foreign_symlink: jmfp refused, naming the symlink and its owner" \
		"^error: heap profile dump refused: dump_dir $d/dumps: $d/dumps is a symlink owned by uid $NOBODY, neither us nor root: not trusted with dumps$" "$d/jmfp.out"
	ask jmls >"$d/jmls.out"
	assert_grep "dump_dir_foreign_symlink: jmls refused, not listing the target" \
		"^error: cannot list $d/dumps: dump_dir $d/dumps: .* not trusted with dumps$" "$d/jmls.out"
	ask jmtp >"$d/jmtp.out"
	assert_grep "dump_dir_foreign_symlink: jmtp refused too" \
		"not trusted with dumps$" "$d/jmtp.out"
	assert_eq "dump_dir_foreign_symlink: nothing written at the symlink's target" \
		"passwd" "$(ls -A "$d/etc" | tr '\n' ' ' | sed 's/ $//')"
	check_clean "dump_dir_foreign_symlink"
	stop_daemon
}

# A directory another user owns, and a directory anybody may write to that
# is not sticky (anybody could rename our dumps away or swap them).
case_dump_dir_foreign_dir() {
	local d
	d=$(scratch foreign_dir)
	mkdir -m 0777 "$d/open"
	chmod 0777 "$d/open"
	conf_file "$d" "dump_dir = $d/open" "dump_min_free = 0" "dump_min_interval = 0"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 || return
	baseline "dump_dir_foreign_dir" || return
	ask jmfp >"$d/jmfp.out"
	assert_grep "dump_dir_foreign_dir: a world-writable dump_dir is refused" \
		"^error: heap profile dump refused: dump_dir $d/open: $d/open is writable by others \(mode 0777\) and not sticky: not trusted with dumps$" "$d/jmfp.out"
	chmod 1777 "$d/open"
	ask jmfp >"$d/jmfp.out"
	assert_grep "dump_dir_foreign_dir: sticky (as /tmp), it is written" \
		"^$d/open/jm4lw\.[0-9]+\.[0-9]+\.[a-z]\.heap$" "$d/jmfp.out"
	if root_only dump_dir_foreign_dir; then
		chmod 0755 "$d/open"
		chown "$NOBODY:$NOBODY" "$d/open"
		ask jmfp >"$d/jmfp.out"
		assert_grep "dump_dir_foreign_dir: another user's directory is refused" \
			"^error: heap profile dump refused: dump_dir $d/open: $d/open is a directory owned by uid $NOBODY, neither us nor root: not trusted with dumps$" "$d/jmfp.out"
	fi
	check_clean "dump_dir_foreign_dir"
	stop_daemon
}

# Three files of another user named like ours, with mtimes a day ahead, in
# a shared sticky directory: dump_keep=3 keeps our three newest and leaves
# theirs alone.
case_retention_foreign_owner() {
	local d i ours=() r
	root_only retention_foreign_owner || return
	d=$(scratch retention_foreign)
	mkdir -m 1777 "$d/shared"
	chmod 1777 "$d/shared"
	for i in 1 2 3; do
		echo "heap_v2/524288" >"$d/shared/jm4lw.1.$i.heap"
		touch -d "+1 day" "$d/shared/jm4lw.1.$i.heap"
		chown "$NOBODY:$NOBODY" "$d/shared/jm4lw.1.$i.heap"
	done
	conf_file "$d" "dump_dir = $d/shared" "dump_min_free = 0" "dump_min_interval = 0" \
		"dump_keep = 3"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 || return
	baseline "retention_foreign_owner" || return
	for i in 1 2 3 4; do
		r=$(ask jmfp)
		case $r in
		/*) ours+=("$(basename "$r")") ;;
		*) fail "retention_foreign_owner: jmfp $i" "$r" ;;
		esac
	done
	assert_eq "retention_foreign_owner: mntr dumps_deleted 1 (the oldest of ours)" 1 \
		"$(mntr_value jm4lw_dumps_deleted)"
	ask jmls >"$d/jmls.out"
	assert_eq "retention_foreign_owner: jmls lists our 3, not theirs" \
		"# 3 dumps" "$(head -1 "$d/jmls.out" | cut -d, -f1)"
	check_clean "retention_foreign_owner" "$d/shared" "${ours[@]:1}" \
		jm4lw.1.1.heap jm4lw.1.2.heap jm4lw.1.3.heap
	stop_daemon
}

# dump_dir = DIR/priv-%u: made 0700 at the first dump; if another user made
# it first, refused.
case_dump_dir_private_default() {
	local d me
	d=$(scratch private)
	me=$(id -u)
	conf_file "$d" "dump_dir = $d/priv-%u" "dump_min_free = 0" "dump_min_interval = 0"
	start_daemon -C "$d" -e "$PROF_ON" -- -f jm4lwd.conf -l 127.0.0.1:0 || return
	baseline "dump_dir_private_default" || return
	ask jmfp >"$d/jmfp.out"
	assert_grep "dump_dir_private_default: jmfp writes in priv-$me" \
		"^$d/priv-$me/jm4lw\.[0-9]+\.[0-9]+\.[a-z]\.heap$" "$d/jmfp.out"
	assert_eq "dump_dir_private_default: made with mode 0700" 700 \
		"$(stat -c %a "$d/priv-$me" 2>&1)"
	if root_only dump_dir_private_default; then
		rm -rf "$d/priv-$me"
		mkdir -m 0700 "$d/priv-$me"
		chown "$NOBODY:$NOBODY" "$d/priv-$me"
		ask jmfp >"$d/jmfp.out"
		assert_grep "dump_dir_private_default: one another user made first is refused" \
			"^error: heap profile dump refused: .* owned by uid $NOBODY" "$d/jmfp.out"
	fi
	check_clean "dump_dir_private_default"
	stop_daemon
}

case_dump_dir_foreign_symlink
case_dump_dir_foreign_dir
case_retention_foreign_owner
case_dump_dir_private_default
finish
