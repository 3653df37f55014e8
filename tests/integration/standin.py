#!/usr/bin/env python3
"""A stand-in four-letter-word server for client.sh: one process serves
every connection (a thread each), so the client's tests start no shell or
interpreter per connection. Prints "listening on HOST:PORT" (HOST
127.0.0.1 or [::1]) once bound to a port the kernel picked.

    standin.py KIND [-6] [--count FILE] [--big FILE]

Each connection: append "x" to FILE (--count), read up to 4 bytes (fewer
if the peer half-closes), answer as KIND says, shut down our side and read
what the peer still sends until it closes (as jm4lwd does, so no reset
cuts a reply short), then close. KIND:
    dispatch  a reply per word, shaped like jm4lwd's (below); the big
              word's reply is the bytes of --big
    error     every word: an error line
    delay     every word: imok after 1 s
    http-cut, http-long, http-short, http-head-cut
              an HTTP answer to jm4lw --merge's GET /pprof/heap, the bytes
              of --big its body: cut at half of its Content-Length; whole,
              with a Content-Length 1000 bytes too large, or too small; or
              cut inside the header
"""
import socket
import sys
import threading
import time

WHITELIST = b"jmfp is not executed because it is not in the whitelist.\n"


def dispatch_reply(word, big):
    """What KIND dispatch sends for WORD: bytes, or a callable that sends
    them itself (the replies too large to build)."""
    table = {
        b"ruok": b"imok",
        b"mntr": b"k1\tv1\nk2\tv2\n",
        b"noeo": b"no newline",
        b"badw": b'error: unknown word "badw"; known words: ruok mntr\n',
        b"jmfp": WHITELIST,
        b"othr": WHITELIST,
    }
    if word == b"slow":
        time.sleep(30)
        return b""
    if word == b"bigr":
        with open(big, "rb") as f:
            return f.read()
    if word == b"huge":
        return huge
    return table.get(word, b"")


def huge(conn):
    """70,000,000 zero bytes: more than the client takes (64 MiB)."""
    chunk = bytes(1 << 20)
    left = 70000000
    while left > 0:
        conn.sendall(chunk[:left])
        left -= len(chunk)


def http_reply(kind, big):
    """An HTTP/1.0 answer with the bytes of BIG, gone wrong as KIND says."""
    with open(big, "rb") as f:
        body = f.read()
    if kind == "http-head-cut":
        return b"HTTP/1.0 200 OK\r\nContent-Len"
    length = len(body) + {"http-long": 1000, "http-short": -1000}.get(kind, 0)
    head = (b"HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\n"
            b"Content-Length: %d\r\n\r\n" % length)
    return head + (body[:len(body) // 2] if kind == "http-cut" else body)


def reply(kind, word, big):
    if kind == "error":
        return b"error: heap profiling is not enabled in this process\n"
    if kind == "delay":
        time.sleep(1)
        return b"imok"
    if kind.startswith("http-"):
        return http_reply(kind, big)
    return dispatch_reply(word, big)


def serve(conn, kind, count, big):
    try:
        if count:
            with open(count, "a") as f:
                f.write("x\n")
        conn.settimeout(60)
        word = b""
        while len(word) < 4:
            b = conn.recv(4 - len(word))
            if not b:
                break
            word += b
        r = reply(kind, word, big)
        if callable(r):
            r(conn)
        elif r:
            conn.sendall(r)
        conn.shutdown(socket.SHUT_WR)
        while conn.recv(65536):
            pass
    except OSError:
        pass  # the client went away (a timeout, a reply it refused)
    finally:
        conn.close()


def main(argv):
    if len(argv) < 2 or argv[1] not in ("dispatch", "error", "delay", "http-cut",
                                      "http-long", "http-short",
                                      "http-head-cut"):
        print(__doc__, file=sys.stderr)
        return 2
    kind, args = argv[1], argv[2:]
    six = "-6" in args
    count = args[args.index("--count") + 1] if "--count" in args else None
    big = args[args.index("--big") + 1] if "--big" in args else None
    s = socket.socket(socket.AF_INET6 if six else socket.AF_INET)
    s.bind(("::1" if six else "127.0.0.1", 0))
    s.listen(128)
    port = s.getsockname()[1]
    print(f"listening on {'[::1]' if six else '127.0.0.1'}:{port}", flush=True)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn, kind, count, big),
                         daemon=True).start()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
