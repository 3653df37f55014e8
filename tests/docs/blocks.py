#!/usr/bin/env python3
"""The fenced blocks of README.md and docs/*.md, for blocks.sh.

    blocks.py extract OUT FILE...    one directory per block under OUT
    blocks.py rewrite SRC DST K=V... a block's code with ports K moved to V
    blocks.py expect OUT REGEX...    each regex against the output file OUT
    blocks.py yaml FILE              parse a YAML block
    blocks.py braces FILE            an Alloy block's braces and brackets
    blocks.py toc [--write] FILE...  each page's contents list is its headings
    blocks.py links FILE...          each relative link's file and #anchor exist

A fence must name its language. `sh` blocks run; `text` (output, a
transcript), `c` and `cmake` (fragments of a program) are not run; `ini`
(jm4lwd.conf lines), `yaml` and `alloy` blocks are checked by the tool
for their kind (blocks.sh). Annotations are HTML comments on the lines
just before the fence:

    <!-- doc-test: expect REGEX -->      must match the block's output
    <!-- doc-test: setup NAME -->        a shared fixture the block needs
    <!-- doc-test: skip REASON; checked-by TOOL -->   not run here

extract writes OUT/NNN/{code,lang,where,setup,expect,skip,checked_by}
and prints one line per block: NNN<TAB>FILE:LINE<TAB>LANG<TAB>run|skip|check.
A block it cannot accept (no language, an unknown one, a `sh` block with
an unknown setup, a skip without checked-by, an annotation it does not
read) is an error line on stderr and exit status 1, after the others.
"""
import os
import re
import sys

RUN = {"sh"}
CHECK = {"ini", "yaml", "alloy"}
SHOW = {"text", "c", "cmake"}
SETUPS = {"daemon", "agent-redis"}
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)\s*$")
NOTE = re.compile(r"^<!--\s*doc-test:\s*(\w[\w-]*)\s*(.*?)\s*-->\s*$")


def blocks(path):
    """(line, lang, code, notes) for each fenced block of @path."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, fence, lang = i, m.group(2), m.group(3)
        notes = []
        j = i - 1
        while j >= 0 and NOTE.match(lines[j]):
            notes.insert(0, NOTE.match(lines[j]).groups())
            j -= 1
        # A doc-test comment separated from its fence is a mistake.
        if j >= 0 and "doc-test" in lines[j]:
            notes.insert(0, ("bad", lines[j]))
        i += 1
        code = []
        while i < len(lines) and not lines[i].strip().startswith(fence[:3]):
            code.append(lines[i][len(m.group(1)):])
            i += 1
        i += 1
        yield start + 1, lang, "\n".join(code) + "\n", notes


def extract(out, files):
    errors = []
    n = 0
    for path in files:
        for line, lang, code, notes in blocks(path):
            where = "%s:%d" % (path, line)
            n += 1
            d = os.path.join(out, "%03d" % n)
            os.makedirs(d)
            setup, expect, skip, checked = [], [], "", ""
            for key, arg in notes:
                if key == "setup" and arg in SETUPS:
                    setup.append(arg)
                elif key == "expect" and arg:
                    try:
                        re.compile(arg)
                    except re.error as e:
                        errors.append("%s: expect %s: %s" % (where, arg, e))
                    expect.append(arg)
                elif key == "skip" and "; checked-by " in arg:
                    skip, checked = arg.rsplit("; checked-by ", 1)
                else:
                    errors.append("%s: doc-test annotation not understood: "
                                  "%s %s (setup %s, expect REGEX, skip "
                                  "REASON; checked-by TOOL)"
                                  % (where, key, arg, "|".join(sorted(SETUPS))))
            if not lang:
                errors.append("%s: a fenced block without a language: say "
                              "sh (runs in docs.blocks), text, c, cmake, "
                              "ini, yaml or alloy" % where)
                continue
            if lang not in RUN | CHECK | SHOW:
                errors.append("%s: language %s: docs.blocks knows sh, text, "
                              "c, cmake, ini, yaml, alloy" % (where, lang))
                continue
            if lang == "text" and re.match(r"^\$ ", code):
                errors.append("%s: a transcript (`$ command`): make the "
                              "command an sh block with expect lines, and "
                              "its output a text block" % where)
            if (setup or expect) and lang not in RUN:
                errors.append("%s: setup and expect are for sh blocks"
                              % where)
            if skip:
                kind = "skip"
            elif lang in RUN:
                kind = "run"
            elif lang in CHECK:
                kind = "check"
            else:
                kind = "show"
            for name, text in (("code", code), ("lang", lang),
                               ("where", where), ("setup", " ".join(setup)),
                               ("expect", "\n".join(expect)),
                               ("skip", skip), ("checked_by", checked)):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            print("%03d\t%s\t%s\t%s" % (n, where, lang, kind))
    for e in errors:
        print("error: " + e, file=sys.stderr)
    return 1 if errors else 0


def rewrite(src, dst, pairs):
    """The well-known ports in @src moved to the ones the harness chose."""
    text = open(src).read()
    for pair in pairs:
        old, new = pair.split("=")
        text = re.sub(r"(?<![0-9])%s(?![0-9])" % old, new, text)
    open(dst, "w").write(text)
    return 0


def expect(out, regexes):
    """Each regex must match somewhere in the output; one line per miss."""
    text = open(out, errors="replace").read()
    bad = 0
    for r in regexes:
        if not re.search(r, text, re.M):
            print("expected /%s/" % r)
            bad = 1
    return bad


def yaml_check(path):
    import yaml
    yaml.safe_load(open(path))
    return 0


def braces(path):
    """Balanced {} [] () outside strings and // comments."""
    stack, pairs = [], {"}": "{", "]": "[", ")": "("}
    for n, line in enumerate(open(path), 1):
        line = re.sub(r'"(\\.|[^"\\])*"', '""', line).split("//")[0]
        for c in line:
            if c in "{[(":
                stack.append((c, n))
            elif c in pairs:
                if not stack or stack[-1][0] != pairs[c]:
                    print("line %d: unbalanced %s" % (n, c))
                    return 1
                stack.pop()
    if stack:
        print("line %d: %s never closed" % (stack[-1][1], stack[-1][0]))
        return 1
    return 0


def anchor(title):
    """GitHub's anchor for a heading."""
    t = re.sub(r"[^\w\- ]", "", title.strip().lower().replace("`", ""))
    return t.replace(" ", "-")


def toc(files, write):
    """The list between <!-- toc --> and <!-- /toc -->: every ## and ###
    heading outside code blocks. Checked, or (--write) rewritten."""
    bad = 0
    for path in files:
        text = open(path, encoding="utf-8").read()
        if "<!-- toc -->" not in text:
            print("%s: no <!-- toc --> contents list" % path)
            bad = 1
            continue
        items, fence = [], False
        for line in text.split("\n"):
            if FENCE.match(line):
                fence = not fence
            m = re.match(r"^(##+) (.*)$", line)
            if m and not fence and len(m.group(1)) <= 3:
                items.append("%s- [%s](#%s)" % (
                    "  " * (len(m.group(1)) - 2), m.group(2),
                    anchor(m.group(2))))
        want = "<!-- toc -->\n" + "\n".join(items) + "\n<!-- /toc -->"
        have = re.search(r"<!-- toc -->(\n.*?<!-- /toc -->)?", text, re.S)
        if have.group(0) != want:
            if write:
                text = text.replace(have.group(0), want)
                open(path, "w", encoding="utf-8").write(text)
            else:
                print("%s: the contents list is not the headings' "
                      "(tests/docs/blocks.py toc --write %s)" % (path, path))
                bad = 1
    return bad


def anchors(path):
    """The anchors of a markdown file's headings."""
    out, fence = set(), False
    for line in open(path, encoding="utf-8"):
        if FENCE.match(line):
            fence = not fence
        m = re.match(r"^#+ (.*)$", line)
        if m and not fence:
            out.add(anchor(m.group(1)))
    return out


def links(files):
    """Every [text](target) that is not a URL names a file that exists
    and, for a markdown file, a heading it has."""
    bad = 0
    for path in files:
        text = re.sub(r"```.*?```", "", open(path, encoding="utf-8").read(),
                      flags=re.S)
        text = re.sub(r"`[^`\n]*`", "", text)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z]+:", target):
                continue
            f, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), f)) \
                if f else path
            if not os.path.exists(dest):
                print("%s: link to %s: no such file" % (path, target))
                bad = 1
            elif frag and dest.endswith(".md") and frag not in anchors(dest):
                print("%s: link to %s: no such heading" % (path, target))
                bad = 1
    return bad


def main(argv):
    cmd = argv[1]
    if cmd == "extract":
        return extract(argv[2], argv[3:])
    if cmd == "rewrite":
        return rewrite(argv[2], argv[3], argv[4:])
    if cmd == "expect":
        return expect(argv[2], argv[3:])
    if cmd == "yaml":
        return yaml_check(argv[2])
    if cmd == "braces":
        return braces(argv[2])
    if cmd == "links":
        return links(argv[2:])
    if cmd == "toc":
        if argv[2] == "--write":
            return toc(argv[3:], True)
        return toc(argv[2:], False)
    print("usage: see the header", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
