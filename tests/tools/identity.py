#!/usr/bin/env python3
"""identity.py OLD_BUILD NEW_BUILD: is every answer the same?

For each build directory: start its jm4lwd (profiling on, sampling off:
the documented way; it profiles itself, so its profiles stay empty until
the words that change state come last) and a deterministic host under its
preload agent (tests/tools/identity_host.c, compiled here once and run by
both, under jm4lw-run with lg_prof_sample:0 and ASLR off; sampling turned
on by jmep after the agent's start-up, then the host allocates), then
ask both processes every word of the word table over the words port (nc)
and every GET route of the route table with curl -i: each format= the
route names in its "unknown format" error, the main query parameters, and
a few error cases. The lists come from the builds themselves (the
"known words" of an unknown word's error, the route table of the sources
the build was configured from, the index page's links), never from a list
typed here, so a new word or route is asked too.

The answers are normalized for what differs between any two runs (times,
pids, ports, paths, memory figures of the allocator that drift, addresses
that the agent's size moves) -- but not the profile rows of the host,
which must be the same to the byte -- and compared request by request:
"same", or a unified diff. The last line is "N same, M differ"; the exit
status is 1 when anything differs, 2 when the harness itself failed.

	python3 identity.py [--keep DIR] [--max-diff N] OLD_BUILD NEW_BUILD
	python3 identity.py --replay DIR x y   (compare a kept run again)
"""
import argparse
import difflib
import gzip
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

TIMEOUT = 60  # one request, on a busy machine
STARTED = []  # every server started, stopped at exit whatever happens

# The host's configuration, and jm4lwd's: no rate limits (dumps follow
# each other), the history ring sampled once an hour (its row count does
# not depend on how long the run took), snapshots every second and kept
# for the whole run (the first, before the leaks, stays the oldest).
CONF = """dump_min_interval = 0
dump_min_free = 0
history_interval = 3600
snapshot_interval = 1
snapshot_count = 10000
snapshot_max_bytes = 256M
"""

# The main query parameters, each asked of every GET route alone; the
# first three also with every format a route takes.
PARAMS = ["seconds=1", "base=previous", "since=2s", "at=peak",
          "labels=thread", "min_size=65536", "live=1"]
FORMAT_PARAMS = ["base=previous", "since=2s", "at=peak"]


def stop_all():
    """Stop every server started here (an interrupt, a failure)."""
    for p in STARTED:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def die(msg):
    print("identity: " + msg, file=sys.stderr)
    sys.exit(2)


# --- the builds -----------------------------------------------------------


class Build:
    """A build directory, its binaries and the sources it was made from."""

    def __init__(self, path):
        self.dir = os.path.realpath(path)
        self.jm4lwd = os.path.join(self.dir, "jm4lwd")
        self.run = os.path.join(self.dir, "jm4lw-run")
        for f in (self.jm4lwd, self.run):
            if not os.access(f, os.X_OK):
                die("%s is not executable (is %s a build directory?)"
                    % (f, path))
        self.src = None
        try:
            with open(os.path.join(self.dir, "CMakeCache.txt")) as f:
                for line in f:
                    m = re.match(r"CMAKE_HOME_DIRECTORY:INTERNAL=(.*)", line)
                    if m:
                        self.src = os.path.realpath(m.group(1))
        except OSError:
            pass
        if self.src is None or not os.path.isdir(self.src):
            die("%s: no CMakeCache.txt naming its source directory" % path)


# Route table rows: {"/path", HTTP_GET | ..., handler, ...
ROUTE_RE = re.compile(r'\{\s*"(/[^"]*)"\s*,\s*(HTTP_[A-Z_]+(?:\s*\|\s*HTTP_[A-Z_]+)*)')


def source_routes(src):
    """The GET routes of the route table in the sources (the HTTP face's
    folder, else anywhere outside tests/ and build trees):
    [(path, is_prefix)]."""
    out = []
    for top in (os.path.join(src, "http"), src):
        for root, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if not d.startswith(
                ("build", "tests", ".")))
            for name in sorted(files):
                if not name.endswith(".c"):
                    continue
                with open(os.path.join(root, name), errors="replace") as f:
                    text = f.read()
                for m in ROUTE_RE.finditer(text):
                    row = (m.group(1), "HTTP_PREFIX" in m.group(2))
                    if "HTTP_GET" in m.group(2) and row not in out:
                        out.append(row)
        if out:
            return out
    die("no GET route found in %s: the route table's rows are no longer "
        '{"/path", HTTP_GET ...? (ROUTE_RE in %s)' % (src, __file__))


def compile_host(out):
    """identity_host.c, next to this script: both builds run this one
    binary."""
    here = os.path.dirname(os.path.realpath(__file__))
    c = os.path.join(here, "identity_host.c")
    exe = os.path.join(out, "identity_host")
    cc = os.environ.get("CC", "cc")
    # Its file names in DWARF (pprof's, the callgraph's) name no tree.
    r = subprocess.run([cc, "-O1", "-g", "-fno-omit-frame-pointer",
                        "-fno-optimize-sibling-calls", "-pthread",
                        "-fdebug-prefix-map=%s=/identity" % here, "-o",
                        exe, c],
                       capture_output=True, text=True)
    if r.returncode != 0:
        die("cannot compile %s: %s" % (c, r.stderr.strip()))
    return exe


# --- asking ---------------------------------------------------------------


def ask_word(port, word):
    """WORD over the words port with nc, as an operator asks: the reply."""
    try:
        r = subprocess.run(["nc.openbsd", "127.0.0.1", str(port)],
                           input=word.encode("latin-1") + b"\n",
                           capture_output=True, timeout=TIMEOUT)
        return r.stdout
    except subprocess.TimeoutExpired as e:
        return (e.stdout or b"") + b"\n<identity: no end within %d s>\n" % TIMEOUT


def http_get(port, path, headers=()):
    """GET PATH with curl -i: status line, headers and body, as bytes."""
    cmd = ["curl", "-s", "-i", "--max-time", str(TIMEOUT), "--path-as-is"]
    for h in headers:
        cmd += ["-H", h]
    cmd.append("http://127.0.0.1:%d%s" % (port, path))
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT + 10)
    except subprocess.TimeoutExpired:
        return b"<identity: curl did not end>\n"
    if r.returncode != 0 and not r.stdout:
        return b"<identity: curl exit %d>\n" % r.returncode
    return r.stdout


def split_http(raw):
    """(status line, [header lines], body) of curl -i's output."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        return raw.decode("latin-1"), [], b""
    lines = head.decode("latin-1").split("\r\n")
    return lines[0], lines[1:], body


def http_status(raw):
    m = re.match(rb"HTTP/\S+ (\d+)", raw)
    return int(m.group(1)) if m else 0


class Target:
    """One process answering: jm4lwd ("daemon") or the host ("agent")."""

    def __init__(self, name, proc, words, http, dumps):
        self.name = name
        self.proc = proc
        self.words = words
        self.http = http
        self.dumps = dumps
        self.answers = []  # [(key, kind, raw bytes)]

    def word(self, key, word):
        if word == "jmlk":
            indexed(self)
        self.answers.append((key, "word", ask_word(self.words, word)))
        return self.answers[-1][2]

    def get(self, key, path, headers=()):
        if "leaks" in path or "jmlk" in path:
            indexed(self)
        self.answers.append((key, "http", http_get(self.http, path, headers)))
        return self.answers[-1][2]


def wait_for(path, pattern, proc, what, seconds=60):
    """The first match of PATTERN in the file at PATH, while PROC runs
    and the agent did not give up."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with open(path, errors="replace") as f:
                text = f.read()
            m = re.search(pattern, text, re.M)
            if m:
                return m
            if "not starting;" in text:
                break
        except OSError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    with open(path, errors="replace") as f:
        tail = f.read()[-2000:]
    die("%s did not come up: %s" % (what, tail))


def start_daemon(b, d):
    os.makedirs(os.path.join(d, "dumps"))
    with open(os.path.join(d, "jm4lwd.conf"), "w") as f:
        f.write(CONF)
    env = dict(os.environ, MALLOC_CONF="prof:true,prof_active:false")
    log = open(os.path.join(d, "jm4lwd.log"), "w")
    p = subprocess.Popen(["setarch", "-R", b.jm4lwd, "-f", "jm4lwd.conf",
                          "-l", "127.0.0.1:0", "-W", "127.0.0.1:0",
                          "-D", "dumps"], cwd=d, env=env,
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    STARTED.append(p)
    lp = os.path.join(d, "jm4lwd.log")
    w = wait_for(lp, r"^jm4lwd: listening on 127\.0\.0\.1:(\d+)$", p, "jm4lwd")
    h = wait_for(lp, r"^jm4lwd: HTTP listening on 127\.0\.0\.1:(\d+)$", p,
                 "jm4lwd's HTTP")
    return Target("daemon", p, int(w.group(1)), int(h.group(1)),
                  os.path.join(d, "dumps"))


def start_agent(b, d, host):
    os.makedirs(os.path.join(d, "dumps"))
    shutil.copy(host, os.path.join(d, "identity_host"))
    with open(os.path.join(d, "agent.conf"), "w") as f:
        f.write(CONF)
    env = dict(os.environ, MALLOC_CONF="prof:true,lg_prof_sample:0",
               JM4LW_CONF=os.path.join(d, "agent.conf"),
               JM4LW_DUMP_DIR=os.path.join(d, "dumps"),
               JM4LW_HTTP_LISTEN="127.0.0.1:0")
    env.pop("JM4LW_AGENT", None)
    out = open(os.path.join(d, "host.out"), "w")
    err = open(os.path.join(d, "host.err"), "w")
    # Sampling off until the harness says jmep: the agent's own start-up
    # on the host's thread is no part of the profiles.
    p = subprocess.Popen(["setarch", "-R", b.run, "-l", "127.0.0.1:0",
                          "--", "./identity_host"], cwd=d, env=env,
                         stdin=subprocess.PIPE, stdout=out, stderr=err)
    STARTED.append(p)
    ep = os.path.join(d, "host.err")
    w = wait_for(ep, r"^jm4lw agent\[\d+\]: listening on 127\.0\.0\.1:(\d+)$",
                 p, "the agent")
    h = wait_for(ep, r"^jm4lw agent\[\d+\]: HTTP listening on 127\.0\.0\.1:(\d+)$",
                 p, "the agent's HTTP")
    wait_for(os.path.join(d, "host.out"), r"^ready$", p, "identity_host")
    return Target("agent", p, int(w.group(1)), int(h.group(1)),
                  os.path.join(d, "dumps"))


def host_do(t, cmd):
    """identity_host runs CMD (sites, thread, leak), and says so."""
    t.done = getattr(t, "done", 0) + 1
    t.proc.stdin.write(cmd.encode() + b"\n")
    t.proc.stdin.flush()
    wait_for(os.path.join(os.path.dirname(t.dumps), "host.out"),
             r"^done %s %d$" % (cmd, t.done), t.proc,
             "identity_host's %s" % cmd, 30)


def indexed(t):
    """Wait until each kept dump has its leak index (the worker writes it
    after the answer): what the leak answers count must not be a race."""
    end = time.monotonic() + 30
    while time.monotonic() < end:
        names = os.listdir(t.dumps)
        if all(n + ".trend" in names for n in names if n.endswith(".heap")):
            return
        time.sleep(0.05)


def want_list(raw):
    """The names of an error's "(want a, b or c)"."""
    m = re.search(rb"\(want ([^)]*)\)", raw)
    if not m:
        return []
    return [w.decode() for w in re.findall(rb"[a-z][a-z0-9_]*", m.group(1))
            if w not in (b"or", b"and")]


def ask_all(t, routes):
    """Every request, in one fixed order, of target T."""
    # The host: sampling on, then its allocations; the first snapshot
    # (snapshot_interval 1 s) holds them. jm4lwd stays as it started,
    # sampling off (it profiles itself) until the words that change state.
    if t.name == "agent":
        t.word("setup: jmep", "jmep")
        host_do(t, "sites")
        host_do(t, "thread")
    time.sleep(2.5)
    # Kept dumps for jmls, jmlk and /jemalloc/dump: the host leaks 4
    # blocks (256 KiB) before each.
    for i in range(4):
        for _ in range(4):
            if t.name == "agent":
                host_do(t, "leak")
        t.word("setup: jmfp %d" % (i + 1), "jmfp")
        # Each dump's index written (the worker symbolizes for it, which
        # loads libdw and its libraries) before the next dump copies
        # /proc/self/maps.
        indexed(t)
    # The word list, from the binary: an unknown word's error names them.
    raw = t.word("word xyzw (unknown)", "xyzw")
    m = re.search(rb"known words: ([a-z0-9 ]+)", raw)
    if not m:
        die("%s: no word list in the unknown word's error: %r" % (t.name, raw))
    words = m.group(1).decode().split()
    t.word("word ruok + 200 bytes (oversize line)", "ruok" + "x" * 200)
    # Over HTTP first: 405 names the words that change state, asked last.
    mutating = []
    for w in words:
        if http_status(t.get("GET /4lw/%s" % w, "/4lw/" + w)) == 405:
            mutating.append(w)
    t.get("GET /4lw/xyzw (unknown)", "/4lw/xyzw")
    for w in words:
        if w not in mutating:
            t.word("word %s" % w, w)
    # The routes, from the sources' table and the index pages' links.
    paths = [p for p, prefix in routes if not prefix]
    for page in ("/", "/debug/pprof/"):
        for href in re.findall(rb'href="(/[^"?#]*)"', http_get(t.http, page)):
            h = href.decode()
            if h not in paths and not any(p == h for p, x in routes if x):
                paths.append(h)
    names = sorted(f for f in os.listdir(t.dumps) if f.endswith(".heap"))
    if len(names) < 2:
        die("%s: fewer than 2 kept dumps in %s" % (t.name, t.dumps))
    dump_q = "name=%s" % names[1]
    dump_b = "base=%s" % names[0]
    for path in paths:
        base_q = [dump_q] if path == "/jemalloc/dump" else []

        def q(*parts):
            s = "&".join(list(base_q) + [p for p in parts if p])
            return path + ("?" + s if s else "")

        t.get("GET " + q(), q())
        raw = t.get("GET " + q("format=zzzz") + " (bad format)",
                    q("format=zzzz"))
        formats = want_list(raw) if http_status(raw) == 400 else []
        for p in PARAMS:
            if path == "/jemalloc/dump" and p == "base=previous":
                p = dump_b
            t.get("GET " + q(p), q(p))
        for f in formats:
            t.get("GET " + q("format=" + f), q("format=" + f))
            for p in FORMAT_PARAMS:
                if path == "/jemalloc/dump" and p == "base=previous":
                    p = dump_b
                t.get("GET " + q("format=" + f, p), q("format=" + f, p))
    # Errors: no such route, a URL and a header over the limits.
    t.get("GET /nonexistent (unknown route)", "/nonexistent")
    t.get("GET /jemalloc/status?pad=<9000 bytes> (oversize URL)",
          "/jemalloc/status?pad=" + "a" * 9000)
    t.get("GET /jemalloc/status with a 9000-byte header (oversize header)",
          "/jemalloc/status", ["X-Pad: " + "a" * 9000])
    # Last, the words that change state, in the table's order.
    for w in mutating:
        t.word("word %s" % w, w)
    return t.answers


def collect(b, host, scratch, label):
    """Start both processes of build B in SCRATCH, ask them everything;
    the answers by key, and the facts normalization needs."""
    os.makedirs(scratch)
    routes = source_routes(b.src)
    targets = []
    try:
        targets.append(start_daemon(b, os.path.join(scratch, "daemon")))
        targets.append(start_agent(b, os.path.join(scratch, "agent"), host))
        results = {}
        errors = []

        def run(t):
            try:
                results[t.name] = ask_all(t, routes)
            except SystemExit as e:
                errors.append(str(e))
            except Exception as e:  # reported, then the harness fails
                errors.append("%s: %r" % (t.name, e))

        threads = [threading.Thread(target=run, args=(t,), daemon=True)
                   for t in targets]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        if errors:
            die("%s: %s" % (label, "; ".join(errors)))
    finally:
        for t in targets:
            if t.proc.poll() is None:
                t.proc.terminate()
                try:
                    t.proc.wait(10)
                except subprocess.TimeoutExpired:
                    t.proc.kill()
                    t.proc.wait()
    facts = {
        "tmp": scratch,
        "build": b.dir,
        "src": b.src,
        "pids": [t.proc.pid for t in targets],
        "ports": [p for t in targets for p in (t.words, t.http)],
    }
    answers = {}
    for t in targets:
        for key, kind, raw in results[t.name]:
            # Dump names in a request carry the pid.
            for pid in facts["pids"]:
                key = re.sub(r"(?<![0-9])%d(?![0-9])" % pid, "<PID>", key)
            answers["%s: %s" % (t.name, key)] = (kind, raw)
    return answers, facts


# --- pprof ----------------------------------------------------------------


def pb_fields(buf):
    """Protocol buffer wire format: [(field, wiretype, value)]."""
    out, i = [], 0
    while i < len(buf):
        key, i = pb_varint(buf, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = pb_varint(buf, i)
        elif wt == 1:
            v, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wt == 2:
            n, i = pb_varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 5:
            v, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        else:
            raise ValueError("wire type %d" % wt)
        out.append((f, wt, v))
    return out


def pb_varint(buf, i):
    v = s = 0
    while True:
        c = buf[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i


def pb_ints(wt, v):
    """A repeated integer field's values, packed or not."""
    if wt != 2:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = pb_varint(v, i)
        out.append(x)
    return out


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


# profile.proto: per message, the fields that index the string table,
# and the submessages.
PB_STRINGS = {
    "Profile": {7, 8, 13, 14},
    "ValueType": {1, 2},
    "Label": {1, 2, 4},
    "Mapping": {5, 6},
    "Function": {2, 3, 4},
}
PB_MESSAGES = {
    "Profile": {1: "ValueType", 2: "Sample", 3: "Mapping", 4: "Location",
                5: "Function", 11: "ValueType"},
    "Sample": {3: "Label"},
    "Location": {4: "Line"},
}
PB_NAMES = {
    "Profile": {1: "sample_type", 2: "sample", 3: "mapping", 4: "location",
                5: "function", 6: "string_table", 7: "drop_frames",
                8: "keep_frames", 9: "time_nanos", 10: "duration_nanos",
                11: "period_type", 12: "period", 13: "comment",
                14: "default_sample_type"},
    "ValueType": {1: "type", 2: "unit"},
    "Sample": {1: "location_id", 2: "value", 3: "label"},
    "Label": {1: "key", 2: "str", 3: "num", 4: "num_unit"},
    "Mapping": {1: "id", 2: "memory_start", 3: "memory_limit",
                4: "file_offset", 5: "filename", 6: "build_id",
                7: "has_functions", 8: "has_filenames",
                9: "has_line_numbers", 10: "has_inline_frames"},
    "Location": {1: "id", 2: "mapping_id", 3: "address", 4: "line",
                 5: "is_folded"},
    "Line": {1: "function_id", 2: "line"},
    "Function": {1: "id", 2: "name", 3: "system_name", 4: "filename",
                 5: "start_line"},
}
# What differs between two runs of one build: the time, how long a
# delta really took, and where the loader put a library.
PB_VOLATILE = {("Profile", 9), ("Profile", 10), ("Mapping", 2),
               ("Mapping", 3), ("Mapping", 4), ("Location", 3)}


def pprof_text(data):
    """A gzip'd profile.proto, decoded: one line per field, strings
    resolved, addresses and times masked. Mappings go by file name
    (sort_mappings puts them in its order): a library loaded late
    (libgvc's plugins) lands where that run's heap left room, so their
    ids and order move."""
    buf = gzip.decompress(data)
    top = pb_fields(buf)
    strings = [v.decode("utf-8", "replace") for f, wt, v in top if f == 6]
    maps = {}
    for f, wt, v in top:
        if f == 3:
            m = dict((g, x) for g, _, x in pb_fields(v))
            name = m.get(5, 0)
            maps[m.get(1, 0)] = strings[name] if name < len(strings) else "?"
    lines, mapping_blocks, mapping_at = [], [], []

    def walk(msg, fields, indent, out):
        for f, wt, v in fields:
            name = PB_NAMES.get(msg, {}).get(f, "field%d" % f)
            if msg == "Profile" and f == 6:
                continue
            if msg == "Profile" and f == 3:
                if not mapping_at:
                    mapping_at.append(len(out))
                block = []
                walk("Mapping", pb_fields(v), indent + "  ", block)
                mapping_blocks.append(block)
                continue
            sub = PB_MESSAGES.get(msg, {}).get(f)
            if sub is not None:
                out.append("%s%s {" % (indent, name))
                walk(sub, pb_fields(v), indent + "  ", out)
                out.append("%s}" % indent)
                continue
            if (msg, f) in (("Mapping", 1), ("Location", 2)):
                out.append("%s%s: %s" % (
                    indent, "mapping" if msg == "Location" else "file",
                    json.dumps(maps.get(v, "<no mapping %d>" % v))))
                continue
            vals = pb_ints(wt, v) if wt == 2 else [v]
            shown = []
            for x in vals:
                if (msg, f) in PB_VOLATILE:
                    shown.append("<masked>")
                elif f in PB_STRINGS.get(msg, ()):
                    shown.append(json.dumps(strings[x] if x < len(strings)
                                            else "<bad index %d>" % x))
                else:
                    shown.append(str(signed(x)))
            out.append("%s%s: %s" % (indent, name, " ".join(shown)))

    walk("Profile", top, "", lines)
    blocks = []
    for block in mapping_blocks:
        blocks += ["mapping {"] + block + ["}"]
    at = mapping_at[0] if mapping_at else len(lines)
    return "\n".join(lines[:at] + blocks + lines[at:]) + "\n"


def sort_mappings(text):
    """pprof's mappings in file name order (normalized names: the
    scratch and build paths of two runs sort alike)."""
    blocks = re.findall(r"(?ms)^mapping \{\n.*?^\}\n", text)
    if not blocks:
        return text
    at = text.index(blocks[0])
    rest = re.sub(r"(?ms)^mapping \{\n.*?^\}\n", "", text)
    return rest[:at] + "".join(sorted(blocks)) + rest[at:]


# --- normalizing ----------------------------------------------------------

# Figures of the allocator and the process that move between any two runs
# (a dump's buffers, the kernel's pages): their values are masked, their
# names kept. Matched against a line's key (mntr, /metrics, JSON keys).
DRIFT_KEY = re.compile(
    r"allocated|active|metadata|resident|mapped|retained|uptime|rss|"
    r"_bytes|bytes_|memory|usage|dirty|muzzy|nmalloc|ndalloc|nrequests|"
    r"curregs|curslabs|nfills|nflushes|nslabs|reslabs|pactive|pdirty|"
    r"pmuzzy|npurge|nmadvise|purged|mutex|n_lock_ops|n_waiting|"
    r"n_spin_acq|n_owner_switch|total_wait_time|max_wait_time|"
    r"max_n_thds|thp|extents|abandoned|base|internal|tcache|"
    r"zero_reallocs|fragment|waste|utilization|last_dump_time|time|age|"
    r"took|seconds|_ms|history|sparkline|snapshot", re.I)

# Answers that are the allocator's figures: every number on a line whose
# key drifts is masked.
FIGURE_ANSWERS = re.compile(
    r"word (mntr|jmls|srvr)\b|/4lw/(mntr|jmls|srvr)\b|"
    r"GET /metrics|GET /jemalloc/(status|dumps)\b")
# Answers made of the allocator's figures alone: the doctor, the
# history, a purge: every number is the run's.
ALL_NUMBERS = re.compile(r"word (jmdr|jmhi|jmpg)\b|/4lw/(jmdr|jmhi)\b|"
                         r"GET /jemalloc/(doctor|history)\b")
DUMPS_ANSWERS = re.compile(r"GET /jemalloc/dumps\b")
# Fragmentation: jemalloc's bins (which classes are worst, their free
# regions, over which arenas) are the whole process's, the module's own
# allocations too.
FRAG_ANSWERS = re.compile(r"word jmfr\b|/4lw/jmfr\b|GET /jemalloc/fragmentation\b")
# jemalloc's own statistics (malloc_stats_print): every number moves with
# what the module allocated for the last answer; the shape stays.
STATS_ANSWERS = re.compile(r"word (jmst|jmsj)\b|/4lw/(jmst|jmsj)\b|"
                           r"GET /jemalloc/stats\b")

NUM = r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?"


def normalize(key, kind, raw, facts):
    """The answer to KEY as text, with what differs between runs masked."""
    if kind == "http":
        status, headers, body = split_http(raw)
        headers = [h for h in headers
                   if not h.lower().startswith(("date:", "content-length:"))]
        ctype = next((h.split(":", 1)[1].strip().lower() for h in headers
                      if h.lower().startswith("content-type:")), "")
        if body[:2] == b"\x1f\x8b":
            try:
                text = "<gzip'd pprof, decoded>\n" + pprof_text(body)
            except Exception as e:  # not a profile: show it as bytes
                text = "<gzip, not a profile: %r>\n%s" % (
                    e, body.decode("latin-1"))
        else:
            text = body.decode("latin-1")
            if "json" in ctype:
                text = json_lines(text)
        text = "\n".join([status] + headers) + "\n\n" + text
    else:
        text = raw.decode("latin-1")
    for p, name in ((facts["tmp"], "<TMP>"), (facts["build"], "<BUILD>"),
                    (facts["src"], "<SRC>")):
        # As written, and as graphviz's SVG escapes it.
        for form in (p, p.replace("-", "&#45;")):
            text = text.replace(form, name)
    # Shapes only: every number goes, and nothing else here needs doing.
    if STATS_ANSWERS.search(key):
        return stats_shape(text)
    # Pids and ports where they are named: dump names, the agent's log
    # tag, "pid N", ":PORT" (a bare number may be a figure).
    for pid in facts["pids"]:
        text = re.sub(r"(?<=jm4lw\.)%d(?=\.)|(?<=\[)%d(?=\])|"
                      r"(?<=pid )%d(?![0-9])|(?<=/proc/)%d(?![0-9])|"
                      r'(?<="pid":)%d(?![0-9])|(?<="pid": )%d(?![0-9])|'
                      r"(?<=\t)%d(?=\t|\n)" % ((pid,) * 7), "<PID>", text)
    for port in facts["ports"]:
        text = re.sub(r"(?<=:)%d(?![0-9])|(?<=port )%d(?![0-9])"
                      % (port, port), "<PORT>", text)
    # Times: ISO 8601 and the like, epoch seconds and milliseconds.
    # (graphviz's SVG writes each "-" as "&#45;").
    text = re.sub(r"\d{4}(-|&#45;)\d\d(-|&#45;)\d\d[T ]\d\d:\d\d"
                  r"(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?", "<TIME>", text)
    text = re.sub(r"(?<![0-9.])1[6-9]\d{8}(\d{3})?(\.\d+)?(?![0-9])",
                  "<EPOCH>", text)
    # Durations and ages: "12 ms", "3.4 s ago", "took 0.2 s", jmrc's
    # "59.7s", the leaks' "over 4 dumps, 0.4 s (".
    text = re.sub(NUM + r" ?(ms|us|µs|ns)\b", "<DUR>", text)
    text = re.sub(NUM + r" ?[smhd]( ago|\)| old|,? \()", r"<DUR>\1", text)
    text = re.sub(r"(?<![\w.])" + NUM + r"[smhd](?=\s)", "<DUR>", text)
    text = re.sub(r"(took|after|in|within) " + NUM + r" ?s\b", r"\1 <DUR>",
                  text)
    # The snapshots' ring: how many were taken by now, which one a
    # question picked ("8 of 11 kept"), how old it is.
    text = re.sub(r"(?m)^(# snapshots:|X-Jm4lw-Base:|# growth since the snapshot|"
                  r"# the heap at the peak|# the true peak).*$",
                  lambda m: re.sub(NUM, "N", m.group(0)), text)
    # Addresses: the preloaded agent's size moves every library after
    # it; /proc/self/maps lines (dumps' MAPPED_LIBRARIES) also name the
    # device and inode of each file.
    text = re.sub(r"0x[0-9a-fA-F]{6,16}", "0x<ADDR>", text)
    # Anonymous mappings (the heap's, as it grew) are the run's.
    text = re.sub(r"(?m)^[0-9a-f]{8,16}-[0-9a-f]{8,16} \S+ [0-9a-f]+ "
                  r"[0-9a-f]+:[0-9a-f]+ 0 *\n", "", text)
    # The padding before the path is the inode's width: one space.
    text = re.sub(r"(?m)^[0-9a-f]{8,16}-[0-9a-f]{8,16} (\S+) [0-9a-f]+ "
                  r"[0-9a-f]+:[0-9a-f]+ \d+ *",
                  r"<ADDR>-<ADDR> \1 <OFF> <DEV> <INODE> ", text)
    # /proc/self/maps lines (MAPPED_LIBRARIES), in file order: a library
    # loaded late lands where that run's heap left room.
    text = re.sub(r"(?m)(^<ADDR>-<ADDR> .*\n)+",
                  lambda m: "".join(sorted(m.group(0).splitlines(True))), text)
    # JSON's times and ages (one value a line: json_lines).
    text = re.sub(r'"([a-z_]*(time|age)[a-z_]*|[a-z_]*_(ns|s|ms|us)|span|'
                  r'rate_per_[a-z]+)"(\s*):(\s*)' + NUM,
                  r'"\1"\4:\5N', text)
    # The build's own binaries have a build-id of their own: any change
    # of their code changes it (pprof's mappings).
    text = re.sub(r'(filename: "<BUILD>/[^"]*"\n\s*build_id: )"[0-9a-f]*"',
                  r'\1"<BUILD-ID>"', text)
    if text.find("<gzip'd pprof, decoded>") != -1:
        text = sort_mappings(text)
    # A leak's rate: its growth over the seconds between the dumps.
    text = re.sub(r"(?m)^\s+" + NUM + r" [KMGT]?i?B(\s+" + NUM +
                  r" [KMGT]?i?B\s+\d+/\d+)", r"<RATE>\1", text)
    # A masked figure's column: its width was the figure's.
    text = re.sub(r" +<DUR> +", " <DUR> ", text)
    if FRAG_ANSWERS.search(key):
        text = frag_shape(text)
    elif ALL_NUMBERS.search(key):
        text = re.sub(NUM, "N", text)
    elif FIGURE_ANSWERS.search(key):
        text = mask_figures(text)
    if DUMPS_ANSWERS.search(key):
        # A dump's size: its copy of /proc/self/maps is the run's.
        text = re.sub(r'("size"\s*:\s*)\d+', r"\1N", text)
    return text


def json_lines(text):
    """JSON with a line break after each , { and [ outside strings: its
    bytes as they are, but a value per line, for diffs and masks."""
    return re.sub(r'("(?:[^"\\]|\\.)*")|([,{\[])',
                  lambda m: m.group(1) or m.group(2) + "\n", text)


def stats_shape(text):
    """malloc_stats_print's answer, text or JSON, as its shape: the
    header (versions, options) with numbers masked, then the sections
    that follow, each once (how many arenas a thread touched, and all
    their figures, are the run's)."""
    head, sep, text = text.partition("\n\n")
    if not head.startswith("HTTP/"):
        head, sep, text = "", "", head + sep + text
    if text.startswith("{"):
        text = json_lines(text)
    text = re.sub(r"\d+", "N", text)
    out, seen, body = [head + sep] if sep else [], set(), False
    for line in text.split("\n"):
        if re.match(r'\s*("stats"|Merged arenas stats)', line):
            body = True
        if not body:
            out.append(re.sub(r"\s+", " ", line))
            continue
        m = re.match(r'\s*("?[A-Za-z_][\w ]*"?)\s*[:{]', line)
        if m and m.group(1) not in seen:
            seen.add(m.group(1))
            out.append("section " + m.group(1))
    return "\n".join(out)


def frag_shape(text):
    """A fragmentation answer as the set of its lines, figures masked:
    what it says, not how the run's bins came out."""
    head, sep, body = text.partition("\n\n")
    if not text.startswith("HTTP/"):
        head, sep, body = "", "", text
    body = re.sub(NUM, "N", body)
    body = re.sub(r"arena N N [KMGT]?i?B(, arena N N [KMGT]?i?B)*",
                  "<arenas>", body)
    lines = sorted(set(re.sub(r"\s+", " ", line).strip()
                       for line in body.split("\n")))
    return head + sep + "\n".join(lines)


def mask_figures(text):
    """Numbers on the lines whose key names a drifting figure."""
    out = []
    for line in text.split("\n"):
        # "key": v (JSON), key<TAB>v (mntr), key: v (srvr), name{..} v
        # (Prometheus; its # HELP and # TYPE lines hold no figure).
        m = re.match(r'\s*"([^"]+)"\s*:|([A-Za-z_][\w.]*)(\{[^}]*\})?[\t: ]',
                     line)
        if m and DRIFT_KEY.search(m.group(1) or m.group(2)):
            line = re.sub(r"(?<![\w.<])" + NUM + r"(?![\w.>])", "N", line)
        # jmls: each dump's size (its copy of /proc/self/maps is the
        # run's), the total of them.
        line = re.sub(r"^(\S+\.heap(?:\.\w+)?)\t\d+\t", r"\1\tN\t", line)
        line = re.sub(r"^(# \d+ dumps, )\d+ bytes", r"\1N bytes", line)
        out.append(line)
    return "\n".join(out)


# --- comparing ------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--keep", help="keep the answers (raw and normalized) "
                    "in this directory")
    ap.add_argument("--max-diff", type=int, default=40,
                    help="lines of diff shown per request (default 40)")
    ap.add_argument("--replay", metavar="DIR", help="compare again the "
                    "answers a run with --keep DIR kept (OLD and NEW are "
                    "then not read)")
    a = ap.parse_args()
    for tool in ("nc.openbsd", "curl", "setarch"):
        if shutil.which(tool) is None:
            die("needs %s" % tool)
    t0 = time.monotonic()
    if a.replay:
        with open(os.path.join(a.replay, "answers.pickle"), "rb") as f:
            got = pickle.load(f)
        return compare(got, a, t0)
    old, new = Build(a.old), Build(a.new)
    work = os.path.realpath(a.keep or tempfile.mkdtemp(prefix="jm4lw-identity."))
    os.makedirs(work, exist_ok=True)
    try:
        host = compile_host(work)
        got = {}

        def one(label, b):
            # Same-length scratch paths, so that sizes of files naming
            # them match too.
            got[label] = collect(b, host, tempfile.mkdtemp(
                prefix="run.", dir=work) + "/" + label, label)

        ths = [threading.Thread(target=one, args=(lb, b), daemon=True)
               for lb, b in (("old", old), ("new", new))]
        for th in ths:
            th.start()
        for th in ths:
            th.join()
        if len(got) != 2:
            die("a build's run failed (above)")
        if a.keep:
            with open(os.path.join(work, "answers.pickle"), "wb") as f:
                pickle.dump(got, f)
        return compare(got, a, t0)
    finally:
        stop_all()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


def compare(got, a, t0):
    """Each request's normalized answers side by side: "same" or a diff;
    the exit status."""
    (oa, of), (na, nf) = got["old"], got["new"]
    same = differ = 0
    keys = list(oa) + [k for k in na if k not in oa]
    for k in keys:
        if k not in oa or k not in na:
            differ += 1
            print("differ: %s (only in %s)" % (k, "NEW" if k in na else "OLD"))
            continue
        x = normalize(k, *oa[k], of)
        y = normalize(k, *na[k], nf)
        if a.keep:
            save(a.keep, k, oa[k][1], na[k][1], x, y)
        if x == y:
            same += 1
            print("same: %s" % k)
            continue
        differ += 1
        print("differ: %s" % k)
        d = list(difflib.unified_diff(
            x.splitlines(), y.splitlines(), "OLD " + k, "NEW " + k,
            lineterm="", n=2))
        for line in d[:a.max_diff]:
            print("    " + line)
        if len(d) > a.max_diff:
            print("    ... %d more lines" % (len(d) - a.max_diff))
    print("%d same, %d differ (%d s)" % (same, differ,
                                         time.monotonic() - t0))
    return 1 if differ else 0


def save(d, key, ro, rn, x, y):
    """KEY's answers, raw and normalized, under D."""
    name = re.sub(r"[^A-Za-z0-9._=-]+", "_", key)[:150]
    for sub, data in (("old.raw", ro), ("new.raw", rn),
                      ("old.norm", x.encode("latin-1", "replace")),
                      ("new.norm", y.encode("latin-1", "replace"))):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
        with open(os.path.join(d, sub, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    sys.exit(main())
