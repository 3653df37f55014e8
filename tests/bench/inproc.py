#!/usr/bin/env python3
"""What symbolizing costs a host: the anonymous memory (RssAnon in
/proc/PID/status) a process holds before, during and after jmtp, jmcs and
jmfg, which dump the heap, symbolize it in the process and render it on
the module's worker thread.

	inproc.py clangd BUILD_DIR [ROUNDS]
	inproc.py attach PID PORT [ROUNDS]
	inproc.py massif MASSIF_OUT_FILE

clangd: a large C++ program from Debian's packages, clangd (libLLVM-14 and
libclang-cpp-14: ~73,000 exported symbols, 100+ MB of code), run under
BUILD_DIR/jm4lw-run with the agent, is given a C++ file that includes
much of the standard library, so it parses it and keeps an AST (a live
heap of tens of MB with deep C++ stacks). attach: the same measurement on
a process already serving the words on PORT (tests/bench/run.sh uses it on
bench_host -S, a profile of ~30000 stacks).

For each round and word, while the host idles, the word is sent and
RssAnon is read every 2 ms from before it until 1 s after the reply
(INPROC_SETTLE seconds in the environment; tests/bench/run.sh --smoke
waits 0.3): the
baseline (least of 20 reads before), the peak while the job ran, and
where it settled after. One line of key=value pairs per word and round
(word round reply_bytes secs base_kb peak_kb after_kb reads); clangd also
prints pid= and port= first, the first lines of a jmtp as "top: " lines,
and dump=PATH, a profile kept by a jmfp at the end for offline analysis
(valgrind massif of jm4lw-prof over the same heap; the caller removes it).

massif: the peak snapshot of a massif.out file, for what the peak consists
of: "peak_bytes=N" then "site_bytes=N site=F1 < F2 < ..." for the
largest allocation sites (the first level of massif's tree), largest
first, each named by its call chain down to the program's own code.

Exit 1 if a word did not answer or answered an error line.
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

SOURCE = """#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <variant>
#include <vector>
template <typename T> struct Box { std::vector<T> v; std::map<int, T> m; };
int main() {
  Box<std::string> b; std::regex r("a+b*");
  std::unordered_map<std::string, std::vector<int>> u;
  for (int i = 0; i < 10; i++) u[std::to_string(i)].push_back(i);
  std::cout << b.v.size() << u.size() << std::regex_match("aab", r) << "\\n";
}
"""
WORDS = ("jmtp", "jmcs", "jmfg")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def lsp(proc, obj):
    body = json.dumps(obj).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def lsp_read(proc):
    n = 0
    while True:
        line = proc.stdout.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":")[1])
    return json.loads(proc.stdout.read(n))


def rss_anon(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])  # kB
    return 0


def ask(port, word):
    with socket.create_connection(("127.0.0.1", port), timeout=300) as s:
        s.sendall(word.encode() + b"\n")
        s.shutdown(socket.SHUT_WR)
        out = bytearray()
        while True:
            b = s.recv(1 << 16)
            if not b:
                return bytes(out)
            out += b


SETTLE = float(os.environ.get("INPROC_SETTLE", "1.0"))


def measure(pid, port, word):
    """Baseline, peak during, and after, in kB; the reply and its time."""
    samples, stop = [], threading.Event()

    def sampler():
        while not stop.is_set():
            samples.append((time.monotonic(), rss_anon(pid)))
            time.sleep(0.002)

    base = []
    for _ in range(20):
        base.append(rss_anon(pid))
        time.sleep(0.005)
    t = threading.Thread(target=sampler)
    t.start()
    t0 = time.monotonic()
    reply = ask(port, word)
    t1 = time.monotonic()
    time.sleep(SETTLE)
    stop.set()
    t.join()
    during = [v for (ts, v) in samples if t0 <= ts <= t1 + 0.01] or [0]
    after = [v for (ts, v) in samples if ts > t1 + SETTLE - 0.1] or \
        [rss_anon(pid)]
    return min(base), max(during), after[-1], len(during), t1 - t0, reply


def rounds(pid, port, n, gap):
    """n rounds of WORDS; one key=value line each. False on a bad reply."""
    ok = True
    for r in range(1, n + 1):
        for word in WORDS:
            b, peak, after, reads, secs, reply = measure(pid, port, word)
            if not reply or reply.startswith(b"error:") or \
                    reply.startswith(b"%s is not" % word.encode()):
                ok = False
                print("word=%s round=%d error=%s" %
                      (word, r, reply[:100].decode(errors="replace")
                       .strip().replace(" ", "_") or "no_reply"),
                      flush=True)
                continue
            print("word=%s round=%d reply_bytes=%d secs=%.3f base_kb=%d "
                  "peak_kb=%d after_kb=%d reads=%d" %
                  (word, r, len(reply), secs, b, peak, after, reads),
                  flush=True)
            time.sleep(gap)
    return ok


def clangd(build, n):
    run = os.path.join(os.path.abspath(build), "jm4lw-run")
    port = free_port()
    work = tempfile.mkdtemp(prefix="jm4lw-inproc.")
    src = os.path.join(work, "big.cc")
    with open(src, "w") as f:
        f.write(SOURCE)
    env = dict(os.environ, MALLOC_CONF="lg_prof_sample:17",
               JM4LW_DUMP_DIR=work)
    proc = subprocess.Popen(
        [run, "-l", "127.0.0.1:%d" % port, "--prof-active", "--",
         "clangd", "--background-index=false", "--log=error"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, env=env, cwd=work)
    try:
        lsp(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"processId": os.getpid(),
                              "rootUri": "file://" + work,
                              "capabilities": {}}})
        while (m := lsp_read(proc)) is not None and m.get("id") != 1:
            pass
        lsp(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
        lsp(proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                   "params": {"textDocument": {
                       "uri": "file://" + src, "languageId": "cpp",
                       "version": 1, "text": SOURCE}}})
        # Diagnostics come once the file is parsed and its AST is held.
        while (m := lsp_read(proc)) is not None and \
                m.get("method") != "textDocument/publishDiagnostics":
            pass
        if m is None:
            print("error=clangd_exited", flush=True)
            return 1
        time.sleep(1)
        print("pid=%d port=%d" % (proc.pid, port), flush=True)
        ok = rounds(proc.pid, port, n, 1.1)  # dump_min_interval is 1 s
        for line in ask(port, "jmtp").decode(errors="replace") \
                .splitlines()[:8]:
            print("top: " + line)
        time.sleep(1.1)
        dump = ask(port, "jmfp").decode(errors="replace").strip()
        if dump.startswith("/"):
            print("dump=" + dump, flush=True)
        else:
            ok = False
            print("error=jmfp:_" + dump.replace(" ", "_"), flush=True)
        return 0 if ok else 1
    finally:
        proc.stdin.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for f in os.listdir(work):
            if f.endswith(".cc"):
                os.unlink(os.path.join(work, f))


def frame(desc):
    """(function, where) of a massif tree line's code location."""
    m = re.match(r"0x[0-9A-Fa-f]+: (\S+) \((?:in )?([^)]*)\)", desc)
    if not m:
        return None, desc
    return m.group(1), m.group(2)


def massif(path):
    """The peak snapshot's total and first-level allocation sites, each
    named by its chain of named functions down to the program's own code
    (two frames of it: the function that asked, and its caller)."""
    with open(path) as f:
        snaps = f.read().split("#-----------\nsnapshot=")[1:]
    peak = next((s for s in snaps if "heap_tree=peak" in s), None)
    if peak is None:  # no detailed peak: the largest detailed snapshot
        sized = [(int(re.search(r"mem_heap_B=(\d+)", s).group(1)), s)
                 for s in snaps if "heap_tree=detailed" in s]
        if not sized:
            return 1
        peak = max(sized)[1]
    print("peak_bytes=%s" % re.search(r"mem_heap_B=(\d+)", peak).group(1))
    tree = []  # (depth, bytes, desc)
    for line in peak.splitlines():
        m = re.match(r"^( *)n\d+: (\d+) (.*)$", line)
        if m:
            tree.append((len(m.group(1)), int(m.group(2)), m.group(3)))
    for i, (depth, size, desc) in enumerate(tree):
        if depth != 1:
            continue
        names, j, d, ours = [], i, depth, 0
        # Down the largest child (the first line one level deeper), to
        # the second frame of the program's own code (not a .so).
        while j < len(tree) and tree[j][0] == d and ours < 2:
            fn, where = frame(tree[j][2])
            if fn is None:
                names.append(where)
                break
            if fn != "???":
                names.append(fn)
            if not re.search(r"\.so(\.[0-9.]+)?$", where):
                ours += 1
            j, d = j + 1, d + 1
        print("site_bytes=%d site=%s" % (size, " < ".join(names)))
    return 0


def main():
    a = sys.argv[1:]
    if len(a) >= 2 and a[0] == "clangd":
        return clangd(a[1], int(a[2]) if len(a) > 2 else 3)
    if len(a) >= 3 and a[0] == "attach":
        pid, port = int(a[1]), int(a[2])
        print("pid=%d port=%d" % (pid, port), flush=True)
        return 0 if rounds(pid, port, int(a[3]) if len(a) > 3 else 3,
                           0.2) else 1
    if len(a) == 2 and a[0] == "massif":
        return massif(a[1])
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
