#!/bin/bash
# The example job word, jmxx (core/job_example.c, built only with
# -DJM4LW_EXAMPLE_WORD=ON): one file and one line in each table make a
# word both faces serve.
#  - over the words port (nc): one line, "allocated SIZE (N bytes)", N
#    jemalloc's stats.allocated as mntr reads it (the same heap, moments
#    apart: within a factor of two);
#  - over HTTP as /4lw/jmxx (curl): 200, text/plain, the same line;
#  - the allow list governs it as any word: refused on both faces alike.
#
#	bash example_word.sh   (JM4LWD: a jm4lwd built with the option)
. "$(dirname "$0")/../lib.sh"

need nc.openbsd timeout curl

LINE='^allocated [0-9.]+ (B|KiB|MiB|GiB) \(([0-9]+) bytes\)$'

case_word() {
	local d mntr n
	d=$(scratch word)
	start_daemon -C "$d" -- -l 127.0.0.1:0 -D "$d" || return
	mntr=$(ask mntr | awk -F'\t' '$1 == "jemalloc_allocated" { print $2 }')
	ask jmxx >"$T/jmxx.out"
	assert_eq "jmxx: one line" 1 "$(wc -l <"$T/jmxx.out")"
	assert_grep "jmxx: allocated SIZE (N bytes)" "$LINE" "$T/jmxx.out"
	n=$(sed -nE "s/$LINE/\\2/p" "$T/jmxx.out")
	assert_cmd "jmxx: N is stats.allocated ($n beside mntr's $mntr)" \
		test -n "$n" -a -n "$mntr" -a "$((n * 2))" -gt "$mntr" -a \
		"$n" -lt "$((mntr * 2))"

	assert_http "/4lw/jmxx" 200 hjmxx /4lw/jmxx
	assert_eq "... as text/plain" "text/plain; charset=utf-8" \
		"$(hheader hjmxx Content-Type)"
	assert_grep "... the word's line" "$LINE" "$T/hjmxx.body"
	stop_daemon
}

case_allow() {
	local d
	d=$(scratch allow)
	printf 'allow = ruok, mntr\n' >"$d/jm4lwd.conf"
	start_daemon -C "$d" -- -f jm4lwd.conf -l 127.0.0.1:0 -D "$d" || return
	assert_eq "jmxx outside allow: ZooKeeper's line" \
		"jmxx is not executed because it is not in the whitelist." \
		"$(ask jmxx)"
	assert_http "/4lw/jmxx outside allow" 403 hdeny /4lw/jmxx
	stop_daemon
}

case_word
case_allow
finish
