#!/bin/bash
# tables.sh: the lists in README.md, docs/ and conf/jm4lwd.conf that name
# words, routes and formats agree with the tables this build has: the
# words of proto_words[], the paths of the route table and the formats of
# views[], as jm4lwd --list prints them, jm4lw-prof's usage as docs/PROF.md
# shows it, and the fuzz corpus's words (tables.py's header has each
# check). A word, route or format added to a table and left out of a list
# fails here, as does a name a list keeps after its row is gone.
#	bash tables.sh   (ctest sets SRC_DIR, JM4LWD, JM4LW_PROF)
. "$(dirname "$0")/../lib.sh"

SRC_DIR=${SRC_DIR:-$ROOT}
JM4LW_PROF=${JM4LW_PROF:-$ROOT/build/jm4lw-prof}
need python3

L=$(scratch lists)
for what in words routes formats; do
	"$JM4LWD" --list "$what" >"$L/$what" ||
		die "jm4lwd --list $what: exit status $?"
done
"$JM4LW_PROF" --help >"$L/prof.help" || die "jm4lw-prof --help: exit status $?"
python3 "$SRC_DIR/tests/fuzz/gen_corpus.py" --words >"$L/corpus.words" ||
	die "gen_corpus.py --words: exit status $?"
# Every list must be refused a wrong name too: a --list that printed
# nothing for anything would pass nothing below (tables.py counts rows).
if "$JM4LWD" --list nothing >/dev/null 2>&1; then
	fail "jm4lwd --list nothing is refused"
else
	pass "jm4lwd --list nothing is refused"
fi

while IFS=$'\t' read -r verdict what why; do
	case $verdict in
	ok) pass "$what" ;;
	*) fail "$what" "$why" ;;
	esac
done < <(python3 "$TESTS_DIR/docs/tables.py" "$SRC_DIR" "$L" ||
	printf 'not ok\ttables.py ran\texit status %s\n' "$?")
finish
