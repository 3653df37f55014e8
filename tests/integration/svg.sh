#!/bin/bash
# jm4lw-prof -f svg, the flame graph, against its real consumers: xmllint
# (well-formed XML), jeprof (the functions it puts at the top are in the
# graph, and the totals are the parser's, which heapprof.sh holds to
# jeprof's) and headless Chromium (it draws the file, its script runs
# without an error, and search and zoom work from the URL). The file must
# name no other host or file. A --base difference is coloured by the
# change: the leak red when it grew, blue when the dumps are swapped.
#
#	bash svg.sh   (BENCH_HOST, HEAPPROF_DUMP, JEPROF_HOST, JM4LW_PROF
#	               from ctest)
. "$(dirname "$0")/../lib.sh"

need jeprof nc.openbsd timeout xmllint chromium python3 c++filt
[ -x "$HEAPPROF_DUMP" ] || die "$HEAPPROF_DUMP is not executable"
[ -x "$BENCH_HOST" ] || die "$BENCH_HOST is not executable"
[ -x "$JM4LW_PROF" ] || die "$JM4LW_PROF is not executable"

# chrome ARGS... URL: headless Chromium with a profile of its own (other
# runs may share the machine); its log (console messages) in $T/chrome.err.
chrome() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu \
		--user-data-dir="$T/chrome" --enable-logging=stderr --v=0 \
		--no-first-run --window-size=1280,800 "$@" 2>>"$T/chrome.err"
}

# xml_escape: stdin as it must appear in XML text.
xml_escape() {
	sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' \
		-e 's/"/\&quot;/g' -e "s/'/\\&apos;/g"
}

# well_formed NAME SVG: xmllint reads it; it names no other host or file.
well_formed() {
	local name=$1 svg=$2 urls
	assert_cmd "$name: xmllint --noout accepts the SVG" xmllint --noout "$svg"
	urls=$(grep -oE '[A-Za-z][A-Za-z0-9+.-]*://[^"'\'' <>)]*' "$svg" |
		grep -vx 'http://www.w3.org/2000/svg' | sort -u)
	assert_eq "$name: no URL but the SVG namespace" "" "$urls"
	assert_no_grep "$name: no href, src, @import or url() (self-contained)" \
		'href=|src=|@import|url\(' "$svg"
	assert_grep "$name: its style and script are inline" \
		'^<script><!\[CDATA\[$' "$svg"
}

# top_names JEPROF_TXT: the functions of jeprof's text table with a flat
# figure above 0, as jm4lw-prof names them (heapprof.sh holds the two to
# the same names).
top_names() {
	awk 'NR > 1 && $1 + 0 > 0 { $1 = $2 = $3 = $4 = $5 = ""; print }' "$1" |
		head -n 10 | c++filt |
		sed -E -e 's/@@[^ ]*//' -e 's/([^ ])\([^()]*\)/\1/g' \
			-e 's/^ *//' -e 's/  */ /g'
}

# svg_total SVG: the exact bytes of the subtitle's first figure.
svg_total() {
	sed -n 's/^<text id="subtitle"[^>]*>[^(]*(\([-+0-9]*\) bytes).*/\1/p' "$1"
}

# same_total NAME PROFILE SVG: the subtitle's total is the parser's
# inuse_space (1 B apart at most: rounded in different places), which
# heapprof.sh holds to jeprof's Total:, whatever frames were left out.
same_total() {
	local t s
	t=$("$HEAPPROF_DUMP" "$2" | awk '$1 == "inuse_space" { printf "%.0f", $2 }')
	s=$(svg_total "$3")
	if [ -n "$t" ] && [ -n "$s" ] && [ $((t - s)) -le 1 ] && [ $((s - t)) -le 1 ]; then
		pass "$1: the subtitle's total ($s bytes) is the parser's inuse_space"
	else
		fail "$1: the subtitle's total is the parser's inuse_space" \
			"parser: ${t:-none}" "svg: ${s:-none}"
	fi
}

# png_pixels PNG rgb(R,G,B): "WIDTH HEIGHT N", N the pixels of that
# colour (the PNGs Chromium writes: 8-bit RGB or RGBA, not interlaced).
png_pixels() {
	python3 - "$@" <<'EOF'
import re, struct, sys, zlib
b = open(sys.argv[1], "rb").read()
if b[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("not a PNG")
pos, idat, hdr = 8, b"", None
while pos < len(b):
    n, t = struct.unpack(">I4s", b[pos:pos + 8])
    if t == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", b[pos + 8:pos + 8 + n])
    if t == b"IDAT":
        idat += b[pos + 8:pos + 8 + n]
    pos += 12 + n
w, h, depth, ctype, _, _, interlace = hdr
if depth != 8 or interlace != 0 or ctype not in (2, 6):
    sys.exit("unexpected PNG format %r" % (hdr,))
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
want = tuple(int(x) for x in re.findall(r"\d+", sys.argv[2]))
prev, count = bytearray(stride), 0
for y in range(h):
    at = y * (stride + 1)
    f, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        c = prev[i - bpp] if i >= bpp else 0
        u = prev[i]
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + u) & 255
        elif f == 3:
            line[i] = (line[i] + (a + u) // 2) & 255
        elif f == 4:
            p = a + u - c
            pa, pb, pc = abs(p - a), abs(p - u), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc
                                  else u if pb <= pc else c)) & 255
    count += sum(1 for x in range(0, stride, bpp)
                 if tuple(line[x:x + 3]) == want)
    prev = line
print(w, h, count)
EOF
}

# dom_check NAME SVG: Chromium loads it, its script runs to the end
# without an error, and every frame keeps its tooltip.
dom_check() {
	local name=$1 svg=$2 dom=$T/$1.dom
	: >"$T/chrome.err"
	chrome --dump-dom "file://$svg" >"$dom"
	assert_grep "$name: Chromium ran the script to its end (data-ready)" \
		'^<svg [^>]*data-ready="1"' "$dom"
	assert_no_grep "$name: no script error in Chromium's console" \
		'Uncaught|SyntaxError|TypeError|ReferenceError' "$T/chrome.err"
	assert_grep "$name: the script wrote its details line" \
		'<text id="details"[^>]*>Hover: a frame' "$dom"
	assert_eq "$name: every frame has its hover text in the DOM" \
		"$(grep -c '<g class="f"><title>' "$svg")" \
		"$(grep -c '<g class="f[^"]*"><title>' "$dom")"
}

# A plain profile: jeprof_host's ring through jm4lw_test_distinctive_alloc.
case_profile() {
	local p d=$T/profile n name fill
	mkdir -p "$d"
	start_jeprof_host svg_host \
		MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:16 || return
	sleep 1
	p=$(ask jmfp)
	stop_jeprof_host
	[ -s "$p" ] || { fail "jeprof_host: jmfp wrote a profile" "$p"; return; }
	assert_cmd "jm4lw-prof -f svg exits 0" \
		"$JM4LW_PROF" -f svg -o "$d/p.svg" "$p" || return
	well_formed profile "$d/p.svg"
	# [stripped-static]: our object+0xSTART frames under jeprof's names.
	as_jeprof "$p" <"$d/p.svg" >"$d/p.jp.svg"

	timeout 300 jeprof --text "$JEPROF_HOST" "$p" >"$d/jeprof.txt" 2>/dev/null
	top_names "$d/jeprof.txt" >"$d/top"
	n=0
	while IFS= read -r name; do
		n=$((n + 1))
		# A frame's line is its group and the first line of its
		# tooltip: the whole name, escaped.
		assert_cmd "the graph has a frame for jeprof's top function $name" \
			grep -qFx "<g class=\"f\"><title>$(printf '%s' "$name" |
				xml_escape)" "$d/p.jp.svg"
	done <"$d/top"
	assert_cmd "jeprof's top functions include jm4lw_test_distinctive_alloc ($n of them)" \
		grep -qx jm4lw_test_distinctive_alloc "$d/top"
	same_total profile "$p" "$d/p.svg"
	assert_grep "the root frame is all of it" \
		'^[0-9.]+ [KMG]iB \([0-9]+ bytes\), 100\.00% of all</title>' "$d/p.svg"
	"$JM4LW_PROF" -f svg -o "$d/again.svg" "$p"
	assert_cmd "the same profile gives the same file" cmp "$d/p.svg" "$d/again.svg"
	assert_cmd "--objects -f svg exits 0" \
		"$JM4LW_PROF" --objects -f svg -o "$d/objs.svg" "$p"
	assert_cmd "--objects: xmllint accepts it" xmllint --noout "$d/objs.svg"
	assert_grep "--objects: counted in objects" \
		'^<text id="subtitle"[^>]*>In use [0-9]+ objects' "$d/objs.svg"

	# Chromium: it draws the file (the root frame, 1180 x 15 px, in its
	# colour: not an error page) ...
	: >"$T/chrome.err"
	chrome --screenshot="$d/p.png" "file://$d/p.svg" >/dev/null
	fill=$(xmllint --xpath "string((//*[local-name()='rect'])[2]/@fill)" "$d/p.svg")
	png_pixels "$d/p.png" "$fill" >"$d/pixels"
	assert_cmd "Chromium draws it: a 1280x800 PNG, the root frame's $fill in $(cut -d' ' -f3 "$d/pixels") px" \
		awk '$1 == 1280 && $2 == 800 && $3 > 10000 { ok = 1 } END { exit !ok }' "$d/pixels"
	dom_check profile "$d/p.svg"
	# ... searches (?s=) and zooms (?z=) as a person would by Ctrl-F and
	# a click.
	chrome --dump-dom \
		"file://$d/p.svg?s=distinctive&z=jm4lw_test_distinctive_alloc" \
		>"$d/search.dom"
	assert_grep "search: the match is summed as a share of the total" \
		'<text id="matched"[^>]*>Matched: [1-9][0-9.]*% \([0-9.]+ [KMG]iB\) in [1-9]' \
		"$d/search.dom"
	assert_grep "search: the matching frame is highlighted" \
		'fill="rgb\(230,0,230\)"' "$d/search.dom"
	python3 - "$d/search.dom" <<'EOF' >"$d/zoom.out"
import re, sys
dom = open(sys.argv[1]).read()
z = hidden = 0
for m in re.finditer(r'<g class="([^"]*)"><title>([^\n]*)\n.*?<rect x="([0-9.]+)" y="[0-9]+" width="([0-9.]+)"', dom, re.S):
    if m.group(2) == "jm4lw_test_distinctive_alloc" and "hide" not in m.group(1):
        z += float(m.group(3)) == 10 and float(m.group(4)) == 1180
    hidden += "hide" in m.group(1)
print("zoomed=%d hidden=%s reset=%s" % (z, "yes" if hidden else "no",
    "shown" if 'class="btn"' in dom.split('id="unzoom"')[1][:20] else "hidden"))
EOF
	assert_eq "zoom: the frame spans the graph, the rest is hidden, Reset Zoom shows" \
		"zoomed=1 hidden=yes reset=shown" "$(cat "$d/zoom.out")"
}

# The leak: two dumps of jeprof_host leaking ~25 MiB/s. --base OLD NEW
# makes the leak red; --base NEW OLD makes it blue.
case_diff() {
	local a b d=$T/diff fill
	mkdir -p "$d"
	start_jeprof_host svg_leak JM4LW_TEST_LEAK=1 \
		MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:16 || return
	a=$(ask jmfp)
	sleep 1.5 # dump_min_interval, and ~35 MiB more leaked
	b=$(ask jmfp)
	stop_jeprof_host
	[ -s "$a" ] && [ -s "$b" ] || { fail "--base: two dumps" "$a" "$b"; return; }
	assert_cmd "--base -f svg exits 0" \
		"$JM4LW_PROF" -f svg --base "$a" -o "$d/grew.svg" "$b" || return
	assert_cmd "--base swapped -f svg exits 0" \
		"$JM4LW_PROF" -f svg --base "$b" -o "$d/shrank.svg" "$a" || return
	well_formed diff "$d/grew.svg"
	assert_cmd "swapped: xmllint accepts it" xmllint --noout "$d/shrank.svg"
	# leak_fill SVG: the fill of the leak's frame.
	leak_fill() {
		xmllint --xpath "string((//*[local-name()='g'][starts-with(*[local-name()='title'], 'jm4lw_test_leaky_function')])[1]/*[local-name()='rect']/@fill)" "$1"
	}
	fill=$(leak_fill "$d/grew.svg")
	if [[ $fill =~ ^rgb\(255,([0-9]+),([0-9]+)\)$ ]] &&
		[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] &&
		[ "${BASH_REMATCH[1]}" -lt 200 ]; then
		pass "--base OLD NEW: the leak is red ($fill)"
	else
		fail "--base OLD NEW: the leak is red" "fill: $fill"
	fi
	fill=$(leak_fill "$d/shrank.svg")
	if [[ $fill =~ ^rgb\(([0-9]+),([0-9]+),255\)$ ]] &&
		[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] &&
		[ "${BASH_REMATCH[1]}" -lt 200 ]; then
		pass "--base NEW OLD: the leak is blue ($fill)"
	else
		fail "--base NEW OLD: the leak is blue" "fill: $fill"
	fi
	assert_grep "the leak's tooltip says it grew, in bytes" \
		'^grew \+[0-9.]+ MiB \(\+[0-9]+ bytes\): from ' "$d/grew.svg"
	assert_grep "swapped, it says it shrank" \
		'^shrank -[0-9.]+ MiB \(-[0-9]+ bytes\): from ' "$d/shrank.svg"
	assert_grep "the legend says how to read it" \
		'Width: the larger of before and after\..*Red: grew.*blue: shrank' \
		"$d/grew.svg"
	# The growth is jm4lw-prof --base's Total:, which heapprof.sh holds
	# to jeprof --base's.
	"$JM4LW_PROF" --base "$a" "$b" >"$d/base.txt"
	assert_eq "the subtitle's change is the text table's Total: (MiB)" \
		"$(sed -n 's/^Total: \(.*\) MiB$/\1/p' "$d/base.txt")" \
		"$(sed -n 's/^<text id="subtitle"[^>]*>Change +\([0-9.]*\) MiB.*/\1/p' "$d/grew.svg")"
	dom_check diff "$d/grew.svg"
}

# A big profile: bench_host's thousands of stacks, 8-16 frames deep. The
# file stays small (frames under 0.1 px are left out) and its total is
# still the whole profile's.
case_big() {
	local d p size
	bench_dump big || return
	p=$DUMP
	d=$(dirname "$p")
	assert_cmd "bench_host: jm4lw-prof -f svg exits 0 ($(grep -c '^@' "$p") stacks)" \
		"$JM4LW_PROF" -f svg -o "$d/big.svg" "$p" || return
	size=$(stat -c %s "$d/big.svg")
	echo "# bench_host: $(grep -c '^@' "$p") stacks -> $size bytes, $(grep -c '<g class="f">' "$d/big.svg") frames"
	assert_cmd "bench_host: xmllint accepts it" xmllint --noout "$d/big.svg"
	assert_cmd "bench_host: under 2 MiB ($size bytes)" test "$size" -lt 2097152
	same_total bench_host "$p" "$d/big.svg"
	dom_check big "$d/big.svg"
}

case_profile
case_diff
case_big
finish
