#!/bin/sh
# Install what is missing, build, and run the whole suite with ctest:
#   0. the style: clang-format --dry-run --Werror over every C file;
#   1. gcc build, warnings as errors, every test (unit, integration with the real clients, jeprof);
#   2. clang build, warnings as errors, unit tests;
#   2b. without libdw (ELF symbol tables only): jm4lw-prof, the heap
#      profile's unit and integration tests (against jeprof with nm alone),
#      and the profile words in a host;
#   3. AddressSanitizer + UndefinedBehaviorSanitizer build: unit and
#      integration tests (jm4lwd itself sanitized, driven by the real clients);
#   4. ThreadSanitizer build, the thread-mode tests;
#   5. libFuzzer targets (framing and dispatch; the heap_v2 parser): 1M
#      runs each over their seed corpora;
#   6. benchmark smoke run, so the harness never rots (figures not judged).
# (valgrind runs the thread-mode tests inside step 1.)
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh test
jobs=$(nproc)

# .clang-format is the house style; a file it would change fails here.
find include core proto daemon client examples tests -name '*.[ch]' |
	xargs clang-format --dry-run --Werror

cmake -S . -B build -DCMAKE_C_COMPILER=gcc -DJM4LW_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

cmake -S . -B build-clang -DCMAKE_C_COMPILER=clang -DJM4LW_WERROR=ON \
	>/dev/null
cmake --build build-clang -j"$jobs"
(cd build-clang && ctest --output-on-failure -j"$jobs" -L unit)

# libdw is optional: only what symbolizes is built and run (~1 min).
cmake -S . -B build-nodw -DCMAKE_C_COMPILER=gcc -DJM4LW_WERROR=ON \
	-DJM4LW_LIBDW=OFF >/dev/null
cmake --build build-nodw -j"$jobs" --target jm4lw_prof test_heapprof \
	test_symbolize heapprof_dump jeprof_host bench_host jm4lwd
(cd build-nodw && ctest --output-on-failure -R 'heapprof|symbolize|words_profile')

cmake -S . -B build-asan -DCMAKE_C_COMPILER=clang -DJM4LW_WERROR=ON \
	-DJM4LW_SANITIZE=address,undefined >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ctest --output-on-failure -j"$jobs" -L 'unit|integration|abuse')

cmake -S . -B build-tsan -DCMAKE_C_COMPILER=clang -DJM4LW_WERROR=ON \
	-DJM4LW_SANITIZE=thread >/dev/null
cmake --build build-tsan -j"$jobs" --target test_thread test_worker
(cd build-tsan && ctest --output-on-failure -L thread -LE valgrind)

cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DJM4LW_FUZZ=ON \
	-DJM4LW_WERROR=ON >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_proto fuzz_heapprof fuzz_http
(cd build-fuzz && ctest --output-on-failure -L fuzz)

# The bench harness end to end, ~1 s a case: every server must start and
# every reply be right; the ratios are printed, never judged.
tests/bench/run.sh --smoke
