/*
 * json — the one writer of JSON strings, for every face that writes JSON
 * (the answers, prof/'s leak report), through struct out: quotes,
 * escapes, and valid UTF-8 out whatever bytes come in. A name read from
 * a profile, a symbol table or an index file is any bytes; JSON must be
 * UTF-8 (RFC 8259 section 8.1), and a reader (jq, Python, a browser)
 * refuses or mangles anything else.
 */
#ifndef JM4LW_JSON_H
#define JM4LW_JSON_H

#include "out.h"

/*
 * @p s as a JSON string, its quotes included, onto @p out: '"' and '\'
 * escaped, control characters as \n, \t, ... or \u00XX, U+2028 and
 * U+2029 as \u2028 and \u2029 (they end a line in JavaScript), and each
 * byte that is not part of valid UTF-8 (a stray continuation byte, an
 * overlong form, a surrogate, past U+10FFFF, a sequence cut short) as
 * \ufffd, the replacement character, as Go's encoding/json does.
 */
void json_string(struct out *out, const char *s);

#endif
