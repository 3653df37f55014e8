# shellcheck shell=bash disable=SC2034,SC2154
# (SC2034, SC2154: variables cross files; R is run.sh's associative array.)
# 1. ruok conn/s: jm4lwd against the floor (tests/bench/floor.c).
# Sourced by tests/bench/run.sh (over tests/bench/lib.sh), never run.

SECTION=1
if want floor; then
	log "1. ruok: jm4lwd vs floor"
	for r in $(seq 1 "$ROUNDS"); do
		for c in $CONCS; do
			for s in $(order "$r" j f fc); do
				case $s in
				j) bench "s1.c$c.j" "$JPID" "$JPORT" -c "$c" -d "$DUR" -w ruok ;;
				f) bench "s1.c$c.f" "$FPID" "$FPORT" -c "$c" -d "$DUR" -w ruok ;;
				fc) bench "s1.c$c.fc" "$FCPID" "$FCPORT" -c "$c" -d "$DUR" -w ruok ;;
				esac
			done
		done
	done
	if [ $PERF = 1 ]; then
		for i in 1 2 3; do
			for s in $(order "$i" j f); do
				if [ "$s" = j ]; then pstat p.j.ruok "$JPID" "$JPORT" -c 32 -n 40000 -w ruok
				else pstat p.f.ruok "$FPID" "$FPORT" -c 32 -n 40000 -w ruok; fi
			done
		done
		prof p.j.ruok "$JPID" "$JPORT" -c 32 -n 40000 -w ruok
		prof p.f.ruok "$FPID" "$FPORT" -c 32 -n 40000 -w ruok
	fi
fi
stop "$FCPID"

