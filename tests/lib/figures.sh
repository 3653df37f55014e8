# shellcheck shell=bash disable=SC2154
# (SC2154: R and OUT are the caller's.)
# tests/lib/figures.sh — the benchmarks' figures: series recorded one value
# a round in the associative array R (key -> "v1 v2 ...", which the caller
# declares), their medians, ranges and per-round ratios, and arithmetic on
# figures that may be unknown ("nan"). Definitions only: tests/bench/lib.sh
# and the helper scripts beside it (http_bench.sh, doctor_bench.sh, ...)
# source it.

# rec KEY VALUE: one more value of series KEY.
rec() { R[$1]="${R[$1]:-} $2"; }

# median < NUMBERS: the median of the numbers on stdin, one a line (blank
# and nan lines left out); "nan" when there are none.
median() {
	awk '$1 != "" && $1 !~ /nan/' | sort -g |
		awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# med KEY, rng KEY: the median and the range ("low–high") of series KEY.
med() {
	# shellcheck disable=SC2086 # the series splits into its values
	printf '%s\n' ${R[$1]:-} | median
}
rng() {
	# shellcheck disable=SC2086
	printf '%s\n' ${R[$1]:-} | grep -v -e '^$' -e nan | sort -g |
		awk '{ a[NR] = $1 } END { if (NR) printf "%s–%s", a[1], a[NR]; else print "nan" }'
}
# Per-round ratios of two series recorded side by side, one per line.
pratios() {
	# shellcheck disable=SC2086
	paste -d' ' <(printf '%s\n' ${R[$1]:-}) <(printf '%s\n' ${R[$2]:-}) |
		awk -v inv="${3:-0}" 'NF == 2 && $1 != "nan" && $2 != "nan" && $1 + 0 > 0 && $2 + 0 > 0 {
			printf "%.4f\n", inv ? $2 / $1 : $1 / $2 }'
}
# Median and range of the per-round ratios A/B (B/A with a third argument 1).
pmed() { pratios "$@" | median; }
prng() {
	pratios "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR) printf "%.2f–%.2f", a[1], a[NR]; else print "—" }'
}
# Median of the per-round differences A - B.
pdiff() {
	# shellcheck disable=SC2086
	paste -d' ' <(printf '%s\n' ${R[$1]:-}) <(printf '%s\n' ${R[$2]:-}) |
		awk 'NF == 2 && $1 != "nan" && $2 != "nan" { print $1 - $2 }' | median
}

# A / B (printf FORMAT, default %.2f), A - B, and A as a percentage of B
# ("nan" when either is unknown or B is 0).
div() { awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" 'BEGIN { if (a == "nan" || b == "nan" || b + 0 == 0) print "nan"; else printf f, a / b }'; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan") print "nan"; else print a - b }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b + 0 == 0) print "nan"; else print 100 * a / b }'; }
# fmt VALUE [FORMAT]: VALUE in printf FORMAT (default %.0f), "—" if unknown.
fmt() { awk -v a="$1" -v f="${2:-%.0f}" 'BEGIN { if (a == "nan" || a == "") print "—"; else printf f, a }'; }
# verdict VALUE OP TARGET: met / missed (OP ge or le)
verdict() {
	awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN { if (v == "nan" || v == "") print "not measured";
		else if ((op == "ge" && v + 0 >= t + 0) || (op == "le" && v + 0 <= t + 0)) print "**met**"; else print "**missed**" }'
}

# kv LINE KEY: the value of KEY in LINE, a line of key=value words (what
# loadgen and the other measuring clients print).
kv() { awk -v k="$2" '{ for (i = 1; i <= NF; i++) { n = index($i, "="); if (substr($i, 1, n - 1) == k) { print substr($i, n + 1); exit } } }' <<<"$1"; }

# o TEXT...: one line of the Markdown section a helper script writes ($OUT).
o() { echo "$*" >>"$OUT"; }
