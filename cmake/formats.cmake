# Writes OUT, jm4lw's formats.h: the formats jm4lw-prof --merge draws, as
# PROF (jm4lw-prof) lists them from its views[] table, so jm4lw's usage
# names what the merge it runs takes without linking the renderers.
execute_process(COMMAND ${PROF} --formats merge
  OUTPUT_VARIABLE formats RESULT_VARIABLE rc
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR formats STREQUAL "")
  message(FATAL_ERROR "${PROF} --formats merge: exit ${rc}")
endif()
file(WRITE ${OUT}.tmp
  "/* Written by cmake/formats.cmake from jm4lw-prof --formats merge. */\n"
  "#define JM4LW_MERGE_FORMATS \"${formats}\"\n")
# Unchanged, left alone: jm4lw is not rebuilt for nothing.
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
