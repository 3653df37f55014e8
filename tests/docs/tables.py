#!/usr/bin/env python3
"""The docs' lists of words, routes and formats against the tables, for
tables.sh.

    tables.py SRC LISTS

SRC is the source tree; LISTS a directory holding what this build's
tables are: words (jm4lwd --list words), routes (--list routes), formats
(--list formats), prof.help (jm4lw-prof --help) and corpus.words
(tests/fuzz/gen_corpus.py --words). Prints one line per check,
"ok<TAB>WHAT" or "not ok<TAB>WHAT<TAB>WHY"; tables.sh counts them.

A word, route or format the tables have and a list leaves out fails, and
so does a name a list has that the tables do not (a stale one):
  - docs/PROTOCOL.md's word table names every word of proto_words[];
  - conf/jm4lwd.conf's `allow` comment lists every word, and its
    `readonly` list the words that change nothing;
  - docs/PROTOCOL.md's route table names every path of the route table;
  - README.md's question table names only words, routes and formats
    that exist;
  - every format=a|b list of /jemalloc/profile or /jemalloc/dump names
    formats only, and the route table's /jemalloc/profile line all of
    them, in views[]'s order;
  - a prose list of five formats or more (`a`, `b`, ... and `z`) in
    README.md or docs/ names them all in its sentence (those it takes
    and those it does not);
  - docs/PROF.md's usage is jm4lw-prof --help;
  - the fuzz corpus's words are proto_words[].
"""
import glob
import os
import re
import sys


def rows(path):
    """Tab-separated lines of @path, as lists."""
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def say(ok, what, why=""):
    """One check's line."""
    print(("ok\t%s" % what) if ok else ("not ok\t%s\t%s" % (what, why)))


def same_set(what, want, got):
    """@got names exactly @want: say what is missing and what is stale."""
    missing = [w for w in want if w not in got]
    stale = sorted(set(got) - set(want))
    why = []
    if missing:
        why.append("missing " + " ".join(missing))
    if stale:
        why.append("not in the table " + " ".join(stale))
    say(not why, what, "; ".join(why))


def table_rows(text, header):
    """The body rows of the Markdown table whose header row starts with
    @header, each as its list of cells (a \\| in a cell is a |)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(header):
            out = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                cells = re.split(r"(?<!\\)\|", row)[1:-1]
                out.append([c.strip().replace("\\|", "|") for c in cells])
            return out
    return []


def path_of(code):
    """The route a backticked path names: up to ? or [, /4lw/<word> as
    /4lw/."""
    p = re.split(r"[?\[]", code, maxsplit=1)[0]
    return "/4lw/" if p.startswith("/4lw/") else p


def routed(path, routes):
    """Is @path a route (or one with its trailing slash)?"""
    return path in routes or path + "/" in routes


def main():
    src, lists = sys.argv[1], sys.argv[2]
    words = [r[0] for r in rows(os.path.join(lists, "words"))]
    readonly = [r[0] for r in rows(os.path.join(lists, "words"))
                if r[1] == "readonly"]
    routes = [r[0] for r in rows(os.path.join(lists, "routes"))]
    formats = [r[0] for r in rows(os.path.join(lists, "formats"))]
    if len(words) < 4 or len(routes) < 4 or len(formats) < 4:
        say(False, "the tables listed", "%d words, %d routes, %d formats"
            % (len(words), len(routes), len(formats)))
        return

    def read(name):
        with open(os.path.join(src, name), encoding="utf-8") as f:
            return f.read()

    protocol, readme = read("docs/PROTOCOL.md"), read("README.md")

    # The words.
    got = [c[0].strip("`") for c in table_rows(protocol, "| word |")]
    same_set("docs/PROTOCOL.md's word table names every word", words, got)
    conf = read("conf/jm4lwd.conf")
    comment = " ".join(l[1:].strip() for l in conf.split("\n")
                       if l.startswith("#"))
    m = re.search(r"a comma-separated list of words \(([^)]*)\)", comment)
    same_set("conf/jm4lwd.conf's allow comment lists every word", words,
             m.group(1).split() if m else [])
    m = re.search(r"every word that changes nothing \(([^,)]*)", comment)
    same_set("conf/jm4lwd.conf's readonly list is the words that change "
             "nothing", readonly, m.group(1).split() if m else [])

    # The routes.
    paths = []
    for c in table_rows(protocol, "| path |"):
        paths += [path_of(p) for p in re.findall(r"`([^`]+)`", c[0])]
    missing = [r for r in routes
               if r not in paths and r.rstrip("/") not in paths]
    stale = sorted({p for p in paths if not routed(p, routes)})
    say(not missing and not stale,
        "docs/PROTOCOL.md's route table names every route",
        "; ".join(x for x in ("missing " + " ".join(missing) if missing
                              else "", "not a route " + " ".join(stale)
                              if stale else "") if x))

    # README's questions: only what exists.
    bad = []
    for c in table_rows(readme, "| the question |"):
        for code in re.findall(r"`([^`]+)`", " | ".join(c)):
            if re.fullmatch(r"jm[a-z]{2}", code) and code not in words:
                bad.append(code)
            elif code.startswith("/") and not routed(path_of(code), routes):
                bad.append(code)
    say(not bad, "README.md's question table names words and routes that "
        "exist", " ".join(bad))

    # format=a|b lists.
    docs = {"README.md": readme}
    for p in sorted(glob.glob(os.path.join(src, "docs", "*.md"))):
        docs["docs/" + os.path.basename(p)] = read(p)
    bad = []
    for name, text in docs.items():
        for m in re.finditer(r"/jemalloc/(?:profile|dump)\?[^`\s]*?"
                             r"format=([a-z|\\]+)", text):
            for f in m.group(1).replace("\\", "").split("|"):
                if f and f not in formats and f != "F":
                    bad.append("%s: %s" % (name, f))
    say(not bad, "each format=a|b names formats of views[]", ", ".join(bad))
    full = [m.group(1).replace("\\", "").split("|") for m in re.finditer(
        r"^\| `/jemalloc/profile\?format=([a-z|\\]+)", protocol, re.M)]
    say(full == [formats], "docs/PROTOCOL.md's /jemalloc/profile lists "
        "every format in views[]'s order", "%s, want %s"
        % (full, "|".join(formats)))

    # Prose lists of formats: five or more are all of them.
    name = "|".join(re.escape(f) for f in formats)
    run = re.compile(r"`(?:%s)`(?:(?:,|;|,? and|,? or) `(?:%s)`)+"
                     % (name, name))
    for doc, text in docs.items():
        flat = re.sub(r"\s*\n\s*", " ", text)
        for m in run.finditer(flat):
            if len(set(re.findall(r"`([^`]+)`", m.group(0)))) < 5:
                continue
            # The rest may follow in its sentence ("...; `raw` is not").
            end = flat.find(". ", m.end())
            sentence = flat[m.start():end if end != -1 else len(flat)]
            got = [f for f in re.findall(r"`([^`]+)`", sentence)
                   if f in formats]
            same_set("%s's list %s names every format"
                     % (doc, m.group(0)[:40] + "..."), formats, got)

    # jm4lw-prof's usage, as docs/PROF.md shows it.
    m = re.search(r"^## Usage\n.*?^```text\n(.*?)^```", read("docs/PROF.md"),
                  re.S | re.M)
    with open(os.path.join(lists, "prof.help"), encoding="utf-8") as f:
        helptext = f.read()
    say(m is not None and m.group(1) == helptext,
        "docs/PROF.md's usage is jm4lw-prof --help",
        "run jm4lw-prof --help and paste it there")

    # The fuzzer's seeds.
    got = [r[0] for r in rows(os.path.join(lists, "corpus.words"))]
    say(got == words, "tests/fuzz/gen_corpus.py reads every word, in order",
        "%s, want %s" % (" ".join(got), " ".join(words)))


main()
