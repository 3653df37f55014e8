# A man page from a program's --help, at build time, so the page says
# what the program says and never drifts from it (help2man's idea, without
# the dependency): NAME and SYNOPSIS from the arguments, the help text
# verbatim as DESCRIPTION.
#   cmake -DPROG=path -DNAME=jm4lwd -DSECTION=8 -DSUMMARY="..."
#         -DVERSION=0.1.0 -DOUT=file -P help2man.cmake
foreach(v PROG NAME SECTION SUMMARY VERSION OUT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "help2man.cmake: ${v} not set")
  endif()
endforeach()
execute_process(COMMAND ${PROG} --help OUTPUT_VARIABLE help
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR help STREQUAL "")
  message(FATAL_ERROR "${PROG} --help: exit ${rc}, no usage")
endif()
# roff: a backslash is \e; a line starting with . or ' is a request
# unless escaped with \&.
string(REPLACE "\\" "\\e" help "${help}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
string(TOUPPER "${NAME}" upper)
file(WRITE "${OUT}.tmp"
".TH ${upper} ${SECTION} \"\" \"jm4lw ${VERSION}\" \"jm4lw\"
.SH NAME
${NAME} \\- ${SUMMARY}
.SH DESCRIPTION
The text of
.B ${NAME} --help:
.PP
.nf
${help}.fi
.SH SEE ALSO
.BR jm4lwd (8),
.BR jm4lw (1),
.BR jm4lw-prof (1),
.BR jm4lw-run (1);
the example configuration and units in share/doc/jm4lw/examples.
")
file(RENAME "${OUT}.tmp" "${OUT}")
