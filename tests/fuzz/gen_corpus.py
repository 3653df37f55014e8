#!/usr/bin/env python3
"""Write the seed corpus of fuzz_proto to tests/fuzz/corpus/.

    python3 tests/fuzz/gen_corpus.py        # rewrites corpus/ from scratch
    python3 tests/fuzz/gen_corpus.py --words   # the words it seeds, one a line

wire-*   what peers send: every word bare, with \\n and \\r\\n, uppercase,
         short, binary junk, a long line.
world-*  a word followed by the control bytes fuzz_proto.c reads after it
         (see the layout at the top of that file): failing mallctls, allow
         lists, dump directories, host words.
"""
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")


def proto_words():
    """The names of proto/words.c's proto_words[], in order: the word
    table itself, so a new word gets its seeds (docs.tables checks this
    reading against jm4lwd --list words)."""
    src = open(os.path.join(HERE, "..", "..", "proto", "words.c"),
               encoding="utf-8").read()
    m = re.search(r"proto_words\[\]\s*=\s*\{(.*?)\n\};", src, re.S)
    if m is None:
        sys.exit("gen_corpus.py: no proto_words[] in proto/words.c")
    return re.findall(r'\.name\s*=\s*"([^"]{4})"', m.group(1))


WORDS = proto_words()
if "--words" in sys.argv[1:]:
    print("\n".join(WORDS))
    sys.exit(0)
HOST = ["hwid", "hbin", "herr"]
ITEMS = HOST + ["dyn"] + WORDS  # allow-list items, bit i % 16
ERRNOS = ["none", "enoent", "efault", "eperm", "einval", "eagain"]
TARGETS = ["all", "opt.prof", "prof.active", "prof.dump", "epoch", "stats",
           "purge", "lg_sample", "stats.resident", "prof.reset",
           "stats.allocated"]
HBIN = ["null", "nope", "ruo", "hbin", "ruokk", "empty"] + WORDS
DIRS = ["plain", "slashes", "missing", "file", "long", "long-prefix",
        "relative", "name-too-long"]
LG = ["keep", "0", "19", "62"]

seeds = {}


def world(word, split=0, allow=0, items=(), fail=0, c5=0, c6=0, width=0,
          dyn=b"\0\0\0\0", c12=0, c13=0, c14=0, text=b""):
    """word + control bytes c[0..15] + the second word / herr's text."""
    mask = 0
    for i in items:
        mask |= 1 << (ITEMS.index(i) % 16)
    return (word.encode() + bytes([split, allow, mask & 0xff, mask >> 8,
                                   fail, c5, c6, width]) + dyn +
            bytes([c12, c13, c14, 0]) + text)


def fail_byte(target, errno):
    return ERRNOS.index(errno) + 6 * TARGETS.index(target)


def hbin(target):
    return HBIN.index(target) << 3


# Wire seeds.
for w in WORDS + HOST:
    seeds[f"wire-{w}"] = w.encode()
    seeds[f"wire-{w}-lf"] = w.encode() + b"\n"
    seeds[f"wire-{w}-crlf"] = w.encode() + b"\r\n"
for w in ["ruok", "mntr", "jmfp", "jmst"]:
    seeds[f"wire-{w.upper()}-lf"] = w.upper().encode() + b"\n"
seeds["wire-empty"] = b""
seeds["wire-1-r"] = b"r"
seeds["wire-2-ru"] = b"ru"
seeds["wire-3-ruo"] = b"ruo"
seeds["wire-1-lf"] = b"\n"
seeds["wire-2-crlf"] = b"\r\n"
seeds["wire-3-nul"] = b"\0\0\0"
seeds["wire-junk-nul"] = b"\0\0\0\0\n"
seeds["wire-junk-ff"] = b"\xff\xfe\xfd\xfc\r\n"
seeds["wire-junk-quote-backslash"] = b'"\\"\\\n'
seeds["wire-junk-tls-hello"] = bytes.fromhex(
    "160301020001000200030312345678")
seeds["wire-junk-http-get"] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
seeds["wire-junk-percent"] = b"%n%s%x%p\n"
seeds["wire-junk-ctrl"] = bytes(range(0, 32))
seeds["wire-word-space"] = b"ru k\n"
seeds["wire-word-comma"] = b"ru,k\n"
seeds["wire-word-then-word"] = b"ruokmntrjmfp\n"
seeds["wire-long-line"] = b"ruok" + b"x" * 3000 + b"\n"
seeds["wire-long-junk"] = bytes((i * 37) & 0xff for i in range(2048))

# World seeds: which mallctl fails, with which errno.
for e in ERRNOS[1:]:
    seeds[f"world-jmfp-dump-{e}"] = world("jmfp",
                                          fail=fail_byte("prof.dump", e))
    seeds[f"world-jmep-set-{e}"] = world("jmep",
                                         fail=fail_byte("prof.active", e))
    seeds[f"world-mntr-all-{e}"] = world("mntr", fail=fail_byte("all", e))
seeds["world-jmfp-optprof-enoent"] = world(
    "jmfp", fail=fail_byte("opt.prof", "enoent"))
seeds["world-jmfp-optprof-eperm"] = world(
    "jmfp", fail=fail_byte("opt.prof", "eperm"))
seeds["world-jmfp-prof-off"] = world("jmfp", c5=1)
seeds["world-jmdp-prof-off"] = world("jmdp", c5=1)
seeds["world-jmdp-active"] = world("jmdp", c5=2)
seeds["world-jmep-active"] = world("jmep", c5=2)
seeds["world-jmpg-purge-einval"] = world(
    "jmpg", fail=fail_byte("purge", "einval"))
seeds["world-jmpg-resident-enoent"] = world(
    "jmpg", fail=fail_byte("stats.resident", "enoent"))
seeds["world-jmst-epoch-eagain"] = world("jmst",
                                         fail=fail_byte("epoch", "eagain"))
seeds["world-jmrs-reset-einval"] = world(
    "jmrs", fail=fail_byte("prof.reset", "einval"))
seeds["world-jmrs-lg-sample-enoent"] = world(
    "jmrs", fail=fail_byte("lg_sample", "enoent"))
for i, lg in enumerate(LG):
    seeds[f"world-jmrs-lg-{lg}"] = world("jmrs", c12=i)
seeds["world-jmfp-allocated-enoent"] = world(
    "jmfp", fail=fail_byte("stats.allocated", "enoent"))
seeds["world-srvr-active-enoent"] = world(
    "srvr", fail=fail_byte("prof.active", "enoent"))

# Dump directories and limits.
for i, d in enumerate(DIRS):
    seeds[f"world-jmfp-dir-{d}"] = world("jmfp", c5=i << 3)
for i, what in enumerate(["whole", "empty", "cut-short", "no-newline"]):
    seeds[f"world-jmfp-profile-{what}"] = world("jmfp", c14=i)
    seeds[f"world-jmfp-profile-{what}-10k"] = world("jmfp", c14=i | 63 << 2)
seeds["world-jmfp-profile-mark-at-8k"] = world("jmfp", c14=49 << 2)
seeds["world-jmfp-twice"] = world("jmfp", c5=0x40)
seeds["world-jmfp-twice-min-interval"] = world("jmfp", c5=0x40 | 0x80)
seeds["world-jmfp-then-mntr"] = world("jmfp", c5=0x40, text=b"mntr")
seeds["world-jmfp-then-srvr"] = world("jmfp", c5=0x40, text=b"srvr")
seeds["world-jmfp-then-jmls"] = world("jmfp", c5=0x40, c12=0x40,
                                      text=b"jmls")
seeds["world-jmep-then-jmdp"] = world("jmep", c5=0x40, text=b"jmdp")
seeds["world-jmrs-then-jmfp"] = world("jmrs", c5=0x40, text=b"jmfp")

# Retention and jmls among old dumps, a directory, a symlink, other files.
for keep in (1, 2, 3):
    seeds[f"world-jmfp-planted-keep-{keep}"] = world("jmfp",
                                                     c12=0x40 | keep << 3)
seeds["world-jmfp-planted-max-bytes"] = world("jmfp", c12=0x40 | 0x20)
seeds["world-jmfp-planted-no-limit"] = world("jmfp", c12=0x40)
seeds["world-jmfp-planted-long-prefix-keep-1"] = world(
    "jmfp", c5=5 << 3, c12=0x40 | 1 << 3)
seeds["world-jmfp-planted-relative-keep-1"] = world(
    "jmfp", c5=6 << 3, c12=0x40 | 1 << 3)
seeds["world-jmls-planted"] = world("jmls", c12=0x40)
seeds["world-jmls-empty"] = world("jmls")
seeds["world-jmls-missing-dir"] = world("jmls", c5=2 << 3)
seeds["world-jmls-relative"] = world("jmls", c5=6 << 3, c12=0x40)
for i, g in enumerate(["0", "1pct", "50pct", "10000pct", "1", "1K", "512M",
                       "16T"]):
    seeds[f"world-growth-{g}"] = world("jmfp", c12=0x80, c13=i)
seeds["world-jmfp-min-free-huge"] = world("jmfp", c6=3)
seeds["world-jmfp-min-free-1"] = world("jmfp", c6=2)

# Allow lists: readonly, a list, separators, decoys, * in a list.
seeds["world-jmfp-readonly"] = world("jmfp", allow=1)
seeds["world-mntr-readonly"] = world("mntr", allow=1)
seeds["world-herr-readonly"] = world("herr", allow=1)
seeds["world-jmls-readonly"] = world("jmls", allow=1)
seeds["world-jmrs-readonly"] = world("jmrs", allow=1)
seeds["world-jmst-list-ruok-mntr"] = world("jmst", allow=2,
                                           items=("ruok", "mntr"))
seeds["world-mntr-list-ruok-mntr-tab"] = world("mntr", allow=2 | 3 << 2,
                                               items=("ruok", "mntr"))
seeds["world-ruok-list-decoys"] = world("ruok", allow=2 | 0x20)
seeds["world-jmfp-list-decoys-edges"] = world("jmfp", allow=2 | 0x20 | 0x40,
                                              items=("jmfp",))
seeds["world-jmfp-list-readonly"] = world("jmfp", allow=3, items=("jmfp",))
seeds["world-jmpg-list-star"] = world("jmpg", allow=2 | 0x80,
                                      items=("ruok",))
seeds["world-hwid-list-host"] = world("hwid", allow=2 | 4 << 2,
                                      items=HOST)
seeds["world-jmfp-list-empty"] = world("jmfp", allow=2)

# Host words.
seeds["world-hwid-width-max"] = world("hwid", width=255)
seeds["world-hwid-width-1k"] = world("hwid", width=1)
for t in HBIN:
    seeds[f"world-hbin-{t}"] = world("hbin", c6=hbin(t))
seeds["world-hbin-jmfp-dump-efault"] = world(
    "hbin", c6=hbin("jmfp"), fail=fail_byte("prof.dump", "efault"))
seeds["world-herr-text"] = world("herr", text=b"peer\nbytes\r\n\0\xff%s")
seeds["world-herr-long"] = world("herr", c12=4, text=b"x\n" * 300)
seeds["world-mntr-host-mntr"] = world("mntr", c5=4)
seeds["world-dyn-named-ruok"] = world("ruok", c6=4, dyn=b"ruok")
seeds["world-dyn-named-word"] = world("dyn!", c6=4, dyn=b"dyn!")
seeds["world-dyn-bad-name"] = world("ru k", c6=4, dyn=b"ru k")
seeds["world-dyn-listed"] = world("abcd", c6=4, dyn=b"abcd", allow=2,
                                  items=("dyn",))

# Reads split inside the word.
for s in (1, 2, 3):
    seeds[f"world-jmfp-split-{s}"] = world("jmfp", split=s)

if os.path.isdir(OUT):
    shutil.rmtree(OUT)
os.makedirs(OUT)
for name, data in sorted(seeds.items()):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds in {OUT}")
