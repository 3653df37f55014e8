#!/usr/bin/env python3
"""What symbolizing costs a host: jmtp, jmcs and jmfg inside a large C++
program from Debian's packages, clangd (libLLVM-14 and libclang-cpp-14:
~73,000 exported symbols, 100+ MB of code), under the preload agent.

clangd is given a C++ file that includes much of the standard library, so
it parses and keeps an AST (a live heap of tens of MB with deep C++
stacks). Then, while the host idles, each word is sent and the host's
anonymous memory (RssAnon in /proc/PID/status) is read every 2 ms from
before the word until after the reply: the baseline, the peak during the
job, and where it settles after. A second host thread is not needed to
show "others keep allocating": the agent's worker runs at SCHED_IDLE and
takes no allocator lock the host's threads wait on (sampling is off on the
worker), which the stall bench (section 7) measures for jmfp.

	python3 tests/bench/inproc.py BUILD_DIR [ROUNDS]

Prints one Markdown table; exit 1 if a word did not answer.
"""
import json
import os
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
    with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
        s.sendall(word.encode() + b"\n")
        s.shutdown(socket.SHUT_WR)
        out = bytearray()
        while True:
            b = s.recv(1 << 16)
            if not b:
                return bytes(out)
            out += b


def measure(pid, port, word):
    """Baseline, peak during, and after, in kB; the reply's size."""
    samples, stop = [], threading.Event()

    def sampler():
        while not stop.is_set():
            samples.append((time.monotonic(), rss_anon(pid)))
            time.sleep(0.002)

    base = [rss_anon(pid) for _ in range(20) if not time.sleep(0.005)]
    t = threading.Thread(target=sampler)
    t.start()
    t0 = time.monotonic()
    reply = ask(port, word)
    t1 = time.monotonic()
    time.sleep(1.0)
    stop.set()
    t.join()
    during = [v for (ts, v) in samples if t0 <= ts <= t1 + 0.01] or [0]
    after = [v for (ts, v) in samples if ts > t1 + 0.9] or [rss_anon(pid)]
    return min(base), max(during), after[-1], len(reply), t1 - t0, reply


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    run = os.path.join(build, "jm4lw-run")
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
    lsp(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"processId": os.getpid(), "rootUri": "file://" + work,
                          "capabilities": {}}})
    while (m := lsp_read(proc)) is not None and m.get("id") != 1:
        pass
    lsp(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    lsp(proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen",
               "params": {"textDocument": {"uri": "file://" + src,
                                           "languageId": "cpp", "version": 1,
                                           "text": SOURCE}}})
    # Diagnostics come once the file is parsed and its AST is held.
    while (m := lsp_read(proc)) is not None and \
            m.get("method") != "textDocument/publishDiagnostics":
        pass
    time.sleep(1)
    ok = True
    print("| word | reply | time | RssAnon before | peak during | "
          "extra at peak | after |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for _ in range(rounds):
        for word in ("jmtp", "jmcs", "jmfg"):
            b, peak, after, n, secs, reply = measure(proc.pid, port, word)
            if n == 0 or reply.startswith(b"error:"):
                ok = False
                print("| %s | %s | | | | | |" % (word, reply[:80]))
            print("| %s | %d KiB | %.2f s | %.1f MiB | %.1f MiB | %.1f MiB "
                  "| %+.1f MiB |" % (word, n // 1024, secs, b / 1024,
                                     peak / 1024, (peak - b) / 1024,
                                     (after - b) / 1024))
            time.sleep(1.1)  # dump_min_interval
    top = ask(port, "jmtp").decode(errors="replace").splitlines()[:8]
    print("\njmtp's first lines:\n\n```\n" + "\n".join(top) + "\n```")
    proc.stdin.close()
    proc.terminate()
    proc.wait(timeout=10)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
