#!/usr/bin/env python3
"""Raw-socket cases no ordinary client can express: half a word, a peer that
says nothing, connections held open, a sender that floods. Talks to a real
jm4lwd on loopback; prints one line saying what happened and exits 0 when
that is what the case expects, 1 otherwise.

    raw.py partial PORT N half|close   send N (0-3) bytes of "ruok", then
                                       half-close and expect EOF with no
                                       reply, or close at once
    raw.py idle PORT BOUND             send nothing; expect the server to
                                       close within BOUND seconds
    raw.py maxconn PORT HOLD BOUND     hold HOLD idle connections (all the
                                       slots), then expect one more to get
                                       imok for its ruok within BOUND
                                       seconds by taking the oldest idle
                                       one's slot: that one alone is closed
    raw.py maxbusy PORT HOLD BOUND     hold HOLD connections whose reply is
                                       stuck being sent (jmsj, never read),
                                       then expect one more to get the
                                       too-many line within BOUND seconds,
                                       the held ones untouched
    raw.py trickle PORT GAP            send "ruok" a byte at a time, GAP
                                       seconds apart; expect no reply (the
                                       read_timeout counts from accept,
                                       not from the last byte)
    raw.py flood PORT NBYTES           send "ruok" and NBYTES more, reading
                                       meanwhile; expect the server to end
                                       the connection (FIN or RST)
"""
import socket
import sys
import threading
import time

HOST = "127.0.0.1"


def connect(port):
    return socket.create_connection((HOST, port), timeout=10)


def read_to_end(s, bound):
    """Read until EOF or RST; returns (bytes, how, seconds)."""
    s.settimeout(bound)
    got = b""
    start = time.monotonic()
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return got, "eof", time.monotonic() - start
            got += d
    except socket.timeout:
        return got, "timeout", time.monotonic() - start
    except ConnectionResetError:
        return got, "reset", time.monotonic() - start


def partial(port, n, how):
    s = connect(port)
    if n:
        s.sendall(b"ruok"[:n])
    if how == "close":
        s.close()
        print(f"sent {n} bytes and closed")
        return 0
    s.shutdown(socket.SHUT_WR)
    got, end, secs = read_to_end(s, 10)
    s.close()
    print(f"sent {n} bytes, half-closed: {end} after {secs:.2f} s, reply {got!r}")
    return 0 if end == "eof" and got == b"" else 1


def idle(port, bound):
    s = connect(port)
    got, end, secs = read_to_end(s, bound)
    s.close()
    print(f"idle connection: {end} after {secs:.2f} s, reply {got!r}")
    return 0 if end in ("eof", "reset") and got == b"" else 1


def still_open(conns):
    """How many of @conns the server has done nothing to (no byte, no
    EOF, no reset); closes them all."""
    still = 0
    for s in conns:
        s.setblocking(False)
        try:
            s.recv(1)  # EOF or a byte: the server did something to it
        except BlockingIOError:
            still += 1  # no data, no EOF: open and waiting
        except OSError:
            pass  # reset
        s.close()
    return still


def maxconn(port, hold, bound):
    held = []
    for _ in range(hold):
        held.append(connect(port))
        # Accepted in this order, so the first is the oldest (not a
        # pass/fail timing: it only keeps the order certain).
        time.sleep(0.1)
    extra = connect(port)
    extra.sendall(b"ruok\n")
    got, end, secs = read_to_end(extra, bound)
    extra.close()
    # The oldest idle peer gave up its slot: EOF with nothing, at once.
    oldest, how, _ = read_to_end(held[0], bound)
    still = still_open(held[1:])
    held[0].close()
    print(f"connection {hold + 1}: {end} after {secs:.2f} s, reply {got!r}; "
          f"oldest held: {how}, {oldest!r}; {still} of {hold - 1} other held "
          f"connections still open")
    return 0 if got == b"imok" and how == "eof" and oldest == b"" and \
        still == hold - 1 else 1


def busy(port):
    """A connection whose reply cannot be sent: a small advertised segment
    size and receive window keep the server's send buffer small, and jmsj's
    ~50 KB stay stuck in it (write_timeout governs the slot)."""
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    s.settimeout(10)
    s.connect((HOST, port))
    s.sendall(b"jmsj\n")
    return s


def maxbusy(port, hold, bound):
    held = [busy(port) for _ in range(hold)]
    # A first byte of each reply: the server is sending it, so the slot is
    # answering a word (however slow the server is, under valgrind say).
    for s in held:
        s.recv(1)
    time.sleep(0.2)  # the rest of each reply fills the small window
    extra = connect(port)
    extra.sendall(b"ruok\n")
    got, end, secs = read_to_end(extra, bound)
    extra.close()
    # Nothing was closed: each has part of its reply, no EOF.
    still = 0
    for s in held:
        s.setblocking(False)
        try:
            part = s.recv(65536)
            still += part != b"" and not part.endswith(b"}\n")
        except (BlockingIOError, OSError):
            pass
        s.close()
    print(f"connection {hold + 1}: {end} after {secs:.2f} s, reply {got!r}; "
          f"{still} of {hold} busy connections still being answered")
    return 0 if end == "eof" and got == b"error: too many connections " \
        b"(max_connections=%d)\n" % hold and still == hold else 1


def trickle(port, gap):
    s = connect(port)
    start = time.monotonic()
    sent = 0
    try:
        for i, b in enumerate(b"ruok"):
            if i:
                time.sleep(gap)
            s.send(bytes([b]))
            sent += 1
    except OSError:
        pass  # closed under us: what we expect
    got, end, secs = read_to_end(s, 10)
    s.close()
    print(f"trickle: sent {sent} of 4 bytes {gap} s apart; {end} after "
          f"{time.monotonic() - start:.2f} s in all, reply {got!r}")
    return 0 if end in ("eof", "reset") and got == b"" else 1


def flood(port, nbytes):
    s = connect(port)
    result = {}

    def reader():
        result["r"] = read_to_end(s, 30)

    t = threading.Thread(target=reader)
    t.start()
    sent = 0
    chunk = b"x" * 65536
    try:
        s.sendall(b"ruok")
        while sent < nbytes:
            sent += s.send(chunk[: nbytes - sent])
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server stopped reading and closed: allowed
    except socket.timeout:
        pass  # the server stopped reading; the reader says what came
    t.join()
    got, end, secs = result["r"]
    s.close()
    print(f"flood: sent {sent} of {nbytes} extra bytes; connection ended "
          f"by {end} after {secs:.2f} s; reply {got[:40]!r}")
    return 0 if end in ("eof", "reset") else 1


def main(argv):
    cmd, port = argv[1], int(argv[2])
    if cmd == "partial":
        return partial(port, int(argv[3]), argv[4])
    if cmd == "idle":
        return idle(port, float(argv[3]))
    if cmd == "maxconn":
        return maxconn(port, int(argv[3]), float(argv[4]))
    if cmd == "maxbusy":
        return maxbusy(port, int(argv[3]), float(argv[4]))
    if cmd == "trickle":
        return trickle(port, float(argv[3]))
    if cmd == "flood":
        return flood(port, int(argv[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
