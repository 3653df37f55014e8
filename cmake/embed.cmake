# cmake -DIN=FILE -DOUT=FILE.c -DNAME=sym -P embed.cmake: FILE as a C array
# NAME[] and its length NAME_len, so the module serves it with nothing to
# install beside the library.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR n "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" hex "${hex}")
file(WRITE "${OUT}" "/* Generated from ${IN} by cmake/embed.cmake. */\n"
  "#include <stddef.h>\n"
  "extern const unsigned char ${NAME}[];\n"
  "extern const size_t ${NAME}_len;\n"
  "const unsigned char ${NAME}[] = {\n${hex}0};\n"
  "const size_t ${NAME}_len = ${n};\n")
