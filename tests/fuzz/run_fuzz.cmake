# ctest driver for the fuzz targets: run FUZZER for RUNS inputs over a fresh copy
# of CORPUS in WORK (libFuzzer adds what it finds to its first directory,
# so the committed seeds stay as they are). Fails on any crash, leak,
# sanitizer report or timeout; the input that caused it is kept in
# WORK/artifacts/ and the command to reproduce it is printed.
foreach(v FUZZER CORPUS WORK RUNS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_fuzz.cmake: -D${v}=... is required")
  endif()
endforeach()
if(NOT DEFINED MAXLEN)
  set(MAXLEN 4096)
endif()
get_filename_component(name ${FUZZER} NAME)

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts ${WORK}/tmp)
file(GLOB seeds ${CORPUS}/*)
file(COPY ${seeds} DESTINATION ${WORK}/corpus)

# fuzz_proto's dump directory: here, so a crash leaves nothing elsewhere.
set(ENV{TMPDIR} ${WORK}/tmp)
set(ENV{ASAN_OPTIONS} "detect_leaks=1:abort_on_error=0:symbolize=1")
set(ENV{UBSAN_OPTIONS} "print_stacktrace=1:halt_on_error=1")
string(TIMESTAMP t0 "%s")
execute_process(
  COMMAND ${FUZZER} ${WORK}/corpus -runs=${RUNS} -detect_leaks=1
    -max_len=${MAXLEN} -timeout=25 -rss_limit_mb=2048 -print_final_stats=1
    -artifact_prefix=${WORK}/artifacts/
  RESULT_VARIABLE rc)
string(TIMESTAMP t1 "%s")
math(EXPR secs "${t1} - ${t0}")
message(STATUS "${name}: ${RUNS} runs in ${secs} s, exit ${rc}")

file(GLOB found ${WORK}/artifacts/*)
if(NOT rc EQUAL 0 OR found)
  foreach(f ${found})
    message(STATUS "reproduce: ${FUZZER} ${f}")
  endforeach()
  message(FATAL_ERROR "${name} failed (exit ${rc})")
endif()
