#!/bin/sh
# Install what is missing, build, and run the whole suite with ctest:
#   deps   scripts/deps.sh test (apt, only what is missing);
#   style  clang-format --dry-run --Werror over every C file;
#   gcc    gcc build, warnings as errors, every test (unit, integration
#          with the real clients, jeprof; valgrind runs the thread-mode
#          tests and daemon.sh);
#   clang  clang build, warnings as errors, unit tests;
#   nodw   without libdw (ELF symbol tables only): jm4lw-prof, the heap
#          profile's unit and integration tests (against jeprof with nm
#          alone), and the profile words in a host;
#   example the example job word (jmxx) built in, asked with nc and curl;
#   asan   AddressSanitizer + UndefinedBehaviorSanitizer build: unit,
#          integration and abuse tests (jm4lwd itself sanitized, driven by
#          the real clients);
#   tsan   ThreadSanitizer build, the thread-mode tests and the worker's
#          dump path with prof:true (tsan.dump_path);
#   fuzz   libFuzzer targets (framing and dispatch; the heap_v2 parser;
#          the HTTP face's decisions; jemalloc's prof_recent JSON): 1M runs
#          each over their seed corpora (500k for framing and dispatch,
#          whose inputs symbolize: tests/fuzz/CMakeLists.txt says why);
#   bench  benchmark smoke run, so the harness never rots (figures not
#          judged).
# Each stage's elapsed time is printed at the end, with the total (also
# when a stage fails: then the last line names it).
#
# Every build directory is configured with all of its options spelled out,
# so a directory left by another command (scripts/run.sh configures build/
# with JM4LW_TESTS=OFF) or by an earlier run is brought back to what the
# suite needs. Tests pick free ports (never 9181/9182) and keep their files
# under the build directories, so this can run twice in a row, and beside
# scripts/run.sh's jm4lwd.
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc)

t_start=$(date +%s)
times=""
stage=""

# begin NAME: the stage NAME starts (the one before it is over).
begin() {
	finish_stage
	stage=$1
	t0=$(date +%s)
	echo "=== stage $stage" >&2
}

# finish_stage: record the running stage's elapsed time, if one runs.
finish_stage() {
	[ -n "$stage" ] || return 0
	times="$times
stage $stage: $(($(date +%s) - t0)) s"
	stage=""
}

# report: the stages' times and the total; on failure, which stage.
report() {
	rc=$?
	failed=$stage
	finish_stage
	echo "$times" | sed '/^$/d'
	echo "total: $(($(date +%s) - t_start)) s"
	[ "$rc" = 0 ] || echo "test.sh: FAILED in stage ${failed:-?} (exit $rc)"
}
trap report EXIT

begin deps
scripts/deps.sh test

# .clang-format is the house style; a file it would change fails here.
begin style
find include lib core prof answer proto http daemon module client examples tests \
	-name '*.[ch]' -exec clang-format --dry-run --Werror {} +

begin gcc
cmake -S . -B build -DCMAKE_C_COMPILER=gcc -DJM4LW_WERROR=ON \
	-DJM4LW_TESTS=ON -DJM4LW_FUZZ=OFF -DJM4LW_SANITIZE= -DJM4LW_LIBDW=AUTO \
	>/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure --no-tests=error -j"$jobs")

begin clang
cmake -S . -B build-clang -DCMAKE_C_COMPILER=clang -DJM4LW_WERROR=ON \
	-DJM4LW_TESTS=ON -DJM4LW_FUZZ=OFF -DJM4LW_SANITIZE= -DJM4LW_LIBDW=AUTO \
	>/dev/null
cmake --build build-clang -j"$jobs"
(cd build-clang && ctest --output-on-failure --no-tests=error -j"$jobs" -L unit)

# libdw is optional: only what symbolizes is built and run (~1 min).
begin nodw
cmake -S . -B build-nodw -DCMAKE_C_COMPILER=gcc -DJM4LW_WERROR=ON \
	-DJM4LW_TESTS=ON -DJM4LW_FUZZ=OFF -DJM4LW_SANITIZE= -DJM4LW_LIBDW=OFF \
	>/dev/null
cmake --build build-nodw -j"$jobs" --target jm4lw_prof test_heapprof \
	test_symbolize heapprof_dump jeprof_host bench_host jm4lwd
(cd build-nodw && ctest --output-on-failure --no-tests=error \
	-R 'heapprof|symbolize|words_profile')

# The example job word (core/job_example.c, -DJM4LW_EXAMPLE_WORD=ON):
# one file and its table lines, asked over both faces, and the word and
# job tables' unit test with it; only the daemon and that test are built.
begin example
cmake -S . -B build-example -DCMAKE_C_COMPILER=gcc -DJM4LW_WERROR=ON \
	-DJM4LW_TESTS=ON -DJM4LW_FUZZ=OFF -DJM4LW_SANITIZE= -DJM4LW_LIBDW=AUTO \
	-DJM4LW_EXAMPLE_WORD=ON >/dev/null
cmake --build build-example -j"$jobs" --target jm4lwd test_proto
(cd build-example && ctest --output-on-failure --no-tests=error \
	-R '^(integration\.example_word|unit\.test_proto)$')

begin asan
cmake -S . -B build-asan -DCMAKE_C_COMPILER=clang -DJM4LW_WERROR=ON \
	-DJM4LW_TESTS=ON -DJM4LW_FUZZ=OFF -DJM4LW_SANITIZE=address,undefined \
	-DJM4LW_LIBDW=AUTO >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ctest --output-on-failure --no-tests=error -j"$jobs" \
	-L 'unit|integration|abuse')

begin tsan
cmake -S . -B build-tsan -DCMAKE_C_COMPILER=clang -DJM4LW_WERROR=ON \
	-DJM4LW_TESTS=ON -DJM4LW_FUZZ=OFF -DJM4LW_SANITIZE=thread \
	-DJM4LW_LIBDW=AUTO >/dev/null
cmake --build build-tsan -j"$jobs" --target test_thread test_worker test_tsan_dump
(cd build-tsan && ctest --output-on-failure --no-tests=error -L 'thread|tsan' -LE valgrind)

begin fuzz
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DJM4LW_WERROR=ON \
	-DJM4LW_TESTS=ON -DJM4LW_FUZZ=ON -DJM4LW_SANITIZE= -DJM4LW_LIBDW=AUTO \
	>/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_proto fuzz_heapprof fuzz_http \
	fuzz_memory fuzz_recent
(cd build-fuzz && ctest --output-on-failure --no-tests=error -j"$jobs" -L fuzz)

# The bench harness end to end, ~1 s a case: every server must start and
# every reply be right; the ratios are printed, never judged, so the gcc
# build serves (a Release build-bench is for the full run).
begin bench
JM4LW_BUILD=build tests/bench/run.sh --smoke
finish_stage
