#!/usr/bin/env python3
"""Load and abuse drivers for tests/abuse: peers no ordinary client is.
Talks only to a real jm4lwd on loopback. Each command prints what happened
(the last line a summary) and exits 0 when that is what the case expects,
1 when it is not, 2 on a usage error. Every wait has a bound.

    abuse.py sessions PORT N CONC SEED
        N short sessions, CONC at a time, of 0-64 random bytes (40% with a
        real word in front; the daemon must run with profiling off). Each
        session sends, half-closes or not, and reads to the end. Every
        reply is checked against its first 4 bytes; prints the counts the
        daemon's mntr must agree with.
    abuse.py trickle PORT PAYLOAD GAP COUNT
        COUNT peers at once send PAYLOAD (\\r, \\n escapes) a byte per GAP
        seconds, then read; the reply must be right for its word.
    abuse.py trickle_cut PORT GAP BOUND
        send "ruok" a byte per GAP seconds (GAP < read_timeout < 3*GAP);
        expect no reply and the connection ended within BOUND s.
    abuse.py halfclose PORT WORD COUNT
        COUNT times: send WORD, shut down our side, read the whole reply.
    abuse.py reset PORT WORD COUNT RCVBUF MSS
        COUNT times: tiny receive buffer (and TCP_MAXSEG MSS unless 0),
        send WORD, read a few bytes of the reply, then close with
        SO_LINGER 0 (a reset). Counts the times the daemon was still
        writing (its socket not yet shut down) when the reset came.
    abuse.py hold PORT N [--send W] [--rcvbuf B] [--mss M] [--wait S] [--max S]
                 [--ensure] [--answered]
        open N connections at once (optionally send W on each, never
        read), print "connected C of N" once each connected or failed (at
        most --wait s; --ensure: and redo the ones the daemon's kernel
        dropped from an overflowing backlog; --answered: and until a first
        byte of each reply is there, peeked), hold them until stdin
        closes (at most --max s), then report which ones the server had
        ended, and close them all.
    abuse.py overcap PORT N CAP BOUND
        open N idle connections with max_connections=CAP: exactly CAP must
        stay open, N-CAP be closed without a byte within BOUND s (each
        newcomer takes the slot of the oldest that sent no word), and one
        more while full must get imok for its ruok.
    abuse.py flood PORT N SECONDS [--bind A] [--max-lost PCT]
        keep N connections open for SECONDS (from A if given): half idle,
        half trickling "ru" a byte a second and never finishing the word;
        every one the server closes is opened again at once. Meanwhile a
        second client (from 127.0.0.1) sends ruok every 20 ms: each must
        get imok, except that up to PCT % (default 0) may be closed before
        any reply (a probe whose word had not arrived yet looks idle).
        Prints the probes' count and latency percentiles, and how many
        flood connections the server closed.
    abuse.py jmfp_storm PORT TOTAL PAR
        TOTAL jmfp, PAR clients at once, as fast as they go: prints
        "REPLY <line>" for each and "ELAPSED <seconds>" (first send to
        last reply).
    abuse.py closed PORT N BYTES [--want PREFIX] [--bound S]
        N connections at once (threads of this one process) each send
        BYTES (\\r, \\n escapes) and nothing more, never half-closing;
        each must be ended by the server with a FIN within S s (30),
        after a reply starting with PREFIX if given. Prints the first
        one's outcome.
    abuse.py junk PORT N SEED
        N connections, one after the other, each sending 1-2000 random
        bytes, half-closing and reading to the end: each must be ended by
        the server with a FIN within 15 s.
    abuse.py talk HOST PORT WORD [--bind A] [--bound S] [--out FILE]
                 [--expect TEXT | --silent] [--repeat N]
        one session (or N, one after the other; WORD "-" sends nothing):
        the reply must be exactly TEXT and end in a FIN, or --silent: no
        byte at all and the connection ended by the server within --bound
        s; without either, any reply ending in a FIN.
"""
import asyncio
import json
import random
import select
import socket
import struct
import os
import sys
import threading
import time

# The socket helpers the integration suite's raw.py already has.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
from raw import HOST, connect, read_to_end  # noqa: E402
# The words this driver knows replies of; sessions also sends the ones the
# daemon lists (a word added later gets the generic check).
WORDS = [b"ruok", b"mntr", b"srvr", b"conf", b"jmst", b"jmsj", b"jmfp",
         b"jmep", b"jmdp", b"jmpg", b"jmls", b"jmrs"]
PROF_WORDS = [b"jmfp", b"jmep", b"jmdp", b"jmrs"]  # need MALLOC_CONF=prof:true
TOO_MANY = b"error: too many connections (max_connections=%d)\n"


def unescape(s):
    return s.encode().decode("unicode_escape").encode("latin-1")


def reply_ok(head, reply, known=WORDS, prof_off=True):
    """Is REPLY right for a session whose first bytes were HEAD, from a
    daemon serving the KNOWN words? Returns None if so, else a reason."""
    if len(head) < 4:
        return None if reply == b"" else "a reply to fewer than 4 bytes"
    w = head[:4]
    if w == b"ruok":
        return None if reply == b"imok" else "ruok not answered imok"
    if w == b"jmsj":
        # JSON whole (whether it ends in a newline is checked on its own).
        try:
            o = json.loads(reply)
            return None if "jemalloc" in o else "jmsj has no jemalloc key"
        except ValueError as e:
            return f"jmsj is not JSON: {e}"
    if not reply.endswith(b"\n"):
        return "reply does not end in a newline"
    if w not in known:
        ok = reply.startswith(b'error: unknown word "') and reply.count(b"\n") == 1
        return None if ok else "not one unknown-word line"
    if w == b"mntr":
        ok = b"jm4lw_words_served\t" in reply and all(
            b"\t" in l for l in reply.splitlines())
        return None if ok else "mntr is not key<TAB>value lines"
    if w == b"srvr":
        return None if b"\nMode: " in reply else "srvr has no Mode: line"
    if w == b"conf":
        return None if reply.startswith(b"listen=") else "conf has no listen="
    if w == b"jmst":
        ok = reply.startswith(b"___ Begin jemalloc statistics ___") and \
            reply.rstrip().endswith(b"--- End jemalloc statistics ---")
        return None if ok else "jmst is not the whole statistics text"
    if w == b"jmpg":
        ok = reply.startswith(b"ok: purged all arenas") and reply.count(b"\n") == 1
        return None if ok else "jmpg is not one ok line"
    if w == b"jmls":
        ok = reply.startswith(b"# ") and b" dumps, " in reply.split(b"\n")[0]
        return None if ok else "jmls has no '# N dumps, ...' line first"
    if w in PROF_WORDS and prof_off:
        ok = reply.startswith(b"error: heap profiling is not enabled") and \
            reply.count(b"\n") == 1
        return None if ok else "not the one-line profiling-off error"
    return None


def known_words(port):
    """The words the daemon serves, from its unknown-word line."""
    s = connect(port)
    s.sendall(b"\x00\x00\x00\x00")
    got, _, _ = read_to_end(s, 30)
    s.close()
    tail = got.split(b"known words: ", 1)
    if len(tail) != 2:
        raise SystemExit(f"no list of known words in {got!r}")
    words = [w for w in tail[1].split() if len(w) == 4]
    if b"ruok" not in words:
        raise SystemExit(f"no ruok among the known words {words!r}")
    return words


def sessions(port, n, conc, seed):
    words = known_words(port)
    rng = random.Random(seed)
    plan = []
    for _ in range(n):
        if rng.random() < 0.4:
            data = rng.choice(words) + rng.randbytes(rng.randint(0, 60))
        else:
            data = rng.randbytes(rng.randint(0, 64))
        # Fewer than 4 bytes without a half-close would only wait for
        # read_timeout; with 4 or more, half the peers keep their side open.
        plan.append((data, len(data) < 4 or rng.random() < 0.5))
    st = {"replied": 0, "errors": 0, "bad": 0, "silent": 0}
    problems = []
    it = iter(enumerate(plan))

    async def one(i, data, half):
        r = w = None
        try:
            r, w = await asyncio.wait_for(
                asyncio.open_connection(HOST, port), 30)
            w.write(data)
            await w.drain()
            if half:
                w.write_eof()
            reply = await asyncio.wait_for(r.read(), 30)
        except (OSError, asyncio.TimeoutError) as e:
            st["errors"] += 1
            problems.append(f"session {i} ({data[:8]!r}...): {e!r}")
            return
        finally:
            if w is not None:
                w.close()
        why = reply_ok(data, reply, words)
        if why:
            st["bad"] += 1
            problems.append(f"session {i} sent {data!r}: {why}; got {reply[:80]!r}")
        if reply:
            st["replied"] += 1
        else:
            st["silent"] += 1

    async def worker():
        for i, (data, half) in it:
            await one(i, data, half)

    async def run():
        await asyncio.gather(*(worker() for _ in range(conc)))

    start = time.monotonic()
    asyncio.run(run())
    secs = time.monotonic() - start
    # The counts the daemon's mntr must agree with include the one
    # connection known_words() made (an unknown word).
    ge4 = sum(1 for d, _ in plan if len(d) >= 4)
    unknown = sum(1 for d, _ in plan if len(d) >= 4 and d[:4] not in words)
    for p in problems[:10]:
        print(p)
    print(f"RESULT sessions={n} connections={n + 1} sent_word={ge4 + 1} "
          f"unknown={unknown + 1} words={len(words)} "
          f"replied={st['replied']} silent={st['silent']} errors={st['errors']} "
          f"bad={st['bad']} secs={secs:.1f} seed={seed}")
    return 0 if st["errors"] == 0 and st["bad"] == 0 and \
        st["replied"] == ge4 else 1


def trickle(port, payload, gap, count):
    results = [None] * count

    def one(k):
        try:
            s = connect(port)
            for i, b in enumerate(payload):
                if i:
                    time.sleep(gap)
                s.sendall(bytes([b]))
            got, end, _ = read_to_end(s, 30)
            s.close()
            results[k] = (got, end)
        except OSError as e:
            results[k] = (b"", repr(e))

    ts = [threading.Thread(target=one, args=(k,)) for k in range(count)]
    start = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    bad = [(g, e) for g, e in results
           if e != "eof" or reply_ok(payload, g)]
    for g, e in bad[:5]:
        print(f"bad: ended by {e}, reply {g[:60]!r}: {reply_ok(payload, g)}")
    print(f"{count} peer(s) trickled {payload!r} a byte per {gap} s: "
          f"{count - len(bad)} right replies ({results[0][0][:20]!r}...) "
          f"in {time.monotonic() - start:.1f} s")
    return 0 if not bad else 1


def trickle_cut(port, gap, bound):
    s = connect(port)
    start = time.monotonic()
    res = {}

    def reader():
        res["r"] = read_to_end(s, bound)
        res["at"] = time.monotonic() - start

    t = threading.Thread(target=reader)
    t.start()
    sent = 0
    for i, b in enumerate(b"ruok"):
        if i:
            # Stop early once the server ended it: sending on would only
            # draw a reset.
            t.join(gap)
            if not t.is_alive():
                break
        try:
            s.send(bytes([b]))
            sent += 1
        except OSError:
            break
    t.join()
    got, end, _ = res["r"]
    s.close()
    print(f"trickle a byte per {gap} s: {sent} of 4 bytes sent; ended by "
          f"{end} {res['at']:.2f} s after connecting; reply {got!r}")
    return 0 if end in ("eof", "reset") and got == b"" else 1


def halfclose(port, word, count):
    bad = 0
    for i in range(count):
        s = connect(port)
        s.sendall(word)
        s.shutdown(socket.SHUT_WR)
        got, end, _ = read_to_end(s, 30)
        s.close()
        why = reply_ok(word, got) if end == "eof" else f"ended by {end}"
        if why:
            bad += 1
            if bad <= 5:
                print(f"session {i}: {why}; reply {got[:60]!r}")
    print(f"{count} x {word!r} then half-close: {count - bad} whole replies "
          f"ending in a FIN")
    return 0 if bad == 0 else 1


def daemon_side_state(port, lport):
    """The TCP state of the daemon's end of our connection: 1 ESTABLISHED,
    4 FIN_WAIT1 once it shut down its side; 10 (the listener's) or None if
    the kernel has no such connection. One exact
    sock_diag lookup: reading /proc/net/tcp walks every socket, slow when
    a parallel test left thousands in TIME_WAIT."""
    lo = socket.inet_aton(HOST) + bytes(12)
    sockid = struct.pack("!HH16s16s", port, lport, lo, lo) + \
        struct.pack("=III", 0, 0xFFFFFFFF, 0xFFFFFFFF)
    req = struct.pack("=BBBBI", socket.AF_INET, socket.IPPROTO_TCP, 0, 0,
                      0xFFFFFFFF) + sockid
    # nlmsghdr: SOCK_DIAG_BY_FAMILY (20), NLM_F_REQUEST (1)
    msg = struct.pack("=IHHII", 16 + len(req), 20, 1, 1, 0) + req
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 4) as nl:
        nl.settimeout(5)
        nl.send(msg)
        d = nl.recv(65536)
    _, typ = struct.unpack_from("=IH", d)
    if typ != 20:  # NLMSG_ERROR: no such socket
        return None
    return d[17]


def reset(port, word, count, rcvbuf, mss):
    midwrite = got_bytes = 0
    for _ in range(count):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        if mss:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)
        s.settimeout(10)
        s.connect((HOST, port))
        s.sendall(word + b"\n")
        try:
            if s.recv(64):
                got_bytes += 1
        except OSError:
            pass
        if daemon_side_state(port, s.getsockname()[1]) == 1:
            midwrite += 1
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))
        s.close()
    print(f"RESULT {count} x {word!r} (SO_RCVBUF {rcvbuf}, MSS {mss or '-'}): "
          f"read a few bytes then reset; {got_bytes} had reply bytes, "
          f"midwrite={midwrite} (daemon still writing at the reset)")
    return 0 if got_bytes == count else 1


def hold(port, n, send, rcvbuf, mss, wait, maxhold, ensure, answered):
    socks = []
    for _ in range(n):
        s = socket.socket()
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        if mss:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)
        s.setblocking(False)
        s.connect_ex((HOST, port))
        socks.append(s)
    pending = set(socks)
    failed = 0
    deadline = time.monotonic() + wait
    while pending and time.monotonic() < deadline:
        _, w, _ = select.select([], list(pending), [], 0.1)
        for s in w:
            pending.discard(s)
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                failed += 1
    connected = [s for s in socks if s not in pending and
                 s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0]
    redone = 0
    if ensure:
        # A burst overflows the listen backlog: the kernel then keeps the
        # handshake half-done and, when too many are old, forgets it
        # silently while our side believes it is connected. Redo those
        # until the daemon's kernel has each one established.
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            states = {s: daemon_side_state(port, s.getsockname()[1])
                      for s in connected}
            if all(v == 1 for v in states.values()):
                break
            # Not found (the lookup then falls back to the listener, 10):
            # forgotten. 3 or 12 (SYN_RECV): still being retried, wait.
            lost = [s for s, v in states.items() if v in (None, 10)]
            for s in lost:
                connected.remove(s)
                s.close()
                t = connect(port)
                t.setblocking(False)
                connected.append(t)
                redone += 1
            time.sleep(0.2)
        socks = connected + list(pending)
        states = [daemon_side_state(port, s.getsockname()[1])
                  for s in connected]
        hist = {v: states.count(v) for v in set(states)}
        print(f"daemon side: {states.count(1)} established, "
              f"{len(states) - states.count(1)} not (states {hist})",
              flush=True)
    if send:
        for s in connected:
            try:
                s.send(send)
            except OSError:
                pass
    if send and answered:
        # Until a first byte of each reply is there (peeked, not read):
        # the server is then answering, whatever its speed.
        waiting = set(connected)
        deadline = time.monotonic() + wait
        while waiting and time.monotonic() < deadline:
            r, _, _ = select.select(list(waiting), [], [], 0.1)
            waiting.difference_update(r)
    print(f"connected {len(connected)} of {n} ({failed} failed, "
          f"{len(pending)} still connecting, {redone} redone)", flush=True)
    # Hold until the test closes our stdin (or the bound).
    end = time.monotonic() + maxhold
    while time.monotonic() < end:
        r, _, _ = select.select([sys.stdin], [], [], 0.5)
        if r and not sys.stdin.buffer.read1(4096):
            break
    opened = ended = answered = 0
    for s in connected:
        try:
            d = s.recv(1, socket.MSG_PEEK)
            if d == b"":
                ended += 1
            else:
                answered += 1  # unread bytes: a reply, open or not
        except BlockingIOError:
            opened += 1
        except OSError:
            ended += 1
    for s in socks:
        s.close()
    print(f"released {n}: {opened} still open and silent, {answered} with "
          f"unread bytes, {ended} ended by the server")
    return 0


def ask_once(port, word, bound):
    """WORD on a connection of its own: (reply, how it ended), or (b"",
    the error) when the connect or the send failed."""
    try:
        s = connect(port)
        s.sendall(word + b"\n")
        got, end, _ = read_to_end(s, bound)
        s.close()
        return got, end
    except OSError as e:
        return b"", repr(e)


def recv_or_end(s):
    """What a non-blocking socket has: bytes, b"" once it ended (EOF or
    reset), or None when nothing came yet."""
    try:
        return s.recv(4096)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def overcap(port, n, cap, bound):
    conns = [connect(port)
             for _ in range(n)]
    for s in conns:
        s.setblocking(False)
    got = {s: b"" for s in conns}
    ended = {}
    start = time.monotonic()

    def sweep(timeout):
        live = [s for s in conns if s not in ended]
        r, _, _ = select.select(live, [], [], timeout)
        for s in r:
            d = recv_or_end(s)
            if d:
                got[s] += d
            elif d is not None:
                ended[s] = time.monotonic() - start

    while len(ended) < n - cap and time.monotonic() - start < bound:
        sweep(0.1)
    # A grace second in which a wrongly closed held one would show.
    grace = time.monotonic() + 1
    while time.monotonic() < grace:
        sweep(0.1)
    held = [s for s in conns if s not in ended]
    silent = sum(1 for s in ended if got[s] == b"")
    last = max(ended.values(), default=0)
    extra = connect(port)
    extra.sendall(b"ruok\n")
    xgot, xend, _ = read_to_end(extra, bound)
    extra.close()
    for s in conns:
        s.close()
    print(f"{n} opened with max_connections={cap}: {len(held)} held, "
          f"{len(ended)} closed by the server (the last {last:.2f} s after the "
          f"first connect), {silent} of them without a byte; one more "
          f"while full: {xend}, {xgot!r}")
    return 0 if len(held) == cap and len(ended) == n - cap and \
        silent == n - cap and xend == "eof" and xgot == b"imok" else 1


def flood(port, n, seconds, bind, max_lost):
    import selectors
    sel = selectors.DefaultSelector()
    trickling = {}
    closed = [0]

    def opener(i):
        s = socket.socket()
        s.setblocking(False)
        if bind:
            s.bind((bind, 0))
        try:
            s.connect((HOST, port))
        except BlockingIOError:
            pass
        sel.register(s, selectors.EVENT_READ, i)
        if i % 2:
            trickling[s] = 0
        return s

    for i in range(n):
        opener(i)
    lat, bad, lost = [], [], 0
    stop = time.monotonic() + seconds
    next_probe = next_trickle = time.monotonic()
    while time.monotonic() < stop:
        now = time.monotonic()
        if now >= next_trickle:
            next_trickle = now + 1
            for s, k in list(trickling.items()):
                if k < 2:
                    try:
                        s.send(b"ru"[k:k + 1])
                        trickling[s] = k + 1
                    except OSError:
                        pass
        if now >= next_probe:
            next_probe = now + 0.02
            t0 = time.monotonic()
            got, end = ask_once(port, b"ruok", 10)
            lat.append(time.monotonic() - t0)
            if got == b"" and end != "timeout":
                lost += 1  # closed (FIN or reset) before any reply
            elif got != b"imok":
                bad.append(got[:60] or end)
        for key, _ in sel.select(0.005):
            s, i = key.fileobj, key.data
            if recv_or_end(s) != b"":
                continue  # nothing yet (no reply is due to an idle peer)
            sel.unregister(s)
            trickling.pop(s, None)
            s.close()
            closed[0] += 1
            opener(i)
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    lat.sort()

    def pct(q):
        return lat[min(len(lat) - 1, int(q * len(lat)))] * 1000
    print(f"flood of {n} from {bind or HOST} for {seconds:.0f} s: "
          f"{len(lat)} probes, {len(bad)} wrong {bad[:3]}, {lost} closed "
          f"before a reply; latency ms p50 {pct(0.5):.2f} p99 "
          f"{pct(0.99):.2f} max {lat[-1] * 1000:.2f}; {closed[0]} flood "
          f"connections closed by the server")
    return 0 if lat and not bad and lost * 100 <= max_lost * len(lat) \
        else 1


def jmfp_storm(port, total, par):
    lock = threading.Lock()
    left = [total]
    replies = []
    errors = []

    def worker():
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            got, end = ask_once(port, b"jmfp", 30)
            with lock:
                if end != "eof":
                    errors.append(end)
                replies.append(got)

    ts = [threading.Thread(target=worker) for _ in range(par)]
    start = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    elapsed = time.monotonic() - start
    for r in replies:
        print("REPLY " + r.decode("latin-1").rstrip("\n").replace("\n", "\\n"))
    print(f"ELAPSED {elapsed:.3f}")
    if errors:
        print(f"connection errors: {errors[:5]}")
    return 0 if not errors else 1


def closed(port, n, data, want, bound):
    results = [None] * n

    def one(k):
        try:
            s = connect(port)
            s.sendall(data)
            t0 = time.monotonic()
            got, end, _ = read_to_end(s, bound)
            results[k] = (time.monotonic() - t0, end, got)
            s.close()
        except OSError as e:
            results[k] = (0.0, repr(e), b"")

    ts = [threading.Thread(target=one, args=(k,)) for k in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    bad = [r for r in results
           if r[1] != "eof" or (want and not r[2].startswith(want))]
    for secs, end, got in bad[:3]:
        print(f"bad: {secs:.2f} s {end} {len(got)} bytes: {got[:40]!r}")
    secs, end, got = results[0]
    print(f"{n - len(bad)} of {n} ended by the server"
          f"{f', each after a reply {want!r}...' if want else ''}; e.g. "
          f"{secs:.2f} {end} {len(got)} bytes: {got[:40]!r}")
    return 0 if not bad else 1


def junk(port, n, seed):
    rng = random.Random(seed)
    bad = []
    start = time.monotonic()
    for i in range(n):
        data = rng.randbytes(rng.randint(1, 2000))
        try:
            s = connect(port)
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            got, end, _ = read_to_end(s, 15)
            s.close()
        except OSError as e:
            got, end = b"", repr(e)
        if end != "eof":
            bad.append(f"connection {i} ({len(data)} bytes): ended by {end}")
    for b in bad[:5]:
        print(b)
    print(f"{n} connections of random bytes (seed {seed}): {n - len(bad)} "
          f"ended by the server in {time.monotonic() - start:.1f} s")
    return 0 if not bad else 1


def talk(host, port, word, bind, bound, out, expect, silent, repeat=1):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    ends = {}
    bad = 0
    for _ in range(repeat):
        s = socket.socket(fam)
        s.settimeout(10)
        if bind:
            s.bind((bind, 0))
        s.connect((host, port))
        if word != "-":
            try:
                s.sendall(word.encode() + b"\n")
            except OSError:
                pass  # a peer that was closed at once may see a reset here
        got, end, secs = read_to_end(s, bound)
        s.close()
        ends[end] = ends.get(end, 0) + 1
        if out:
            with open(out, "wb") as f:
                f.write(got)
        if silent:
            ok = got == b"" and end in ("eof", "reset")
        elif expect is not None:
            ok = got == expect and end == "eof"
        else:
            ok = end == "eof"
        bad += not ok
    src = f" from {bind}" if bind else ""
    times = f"{repeat} x " if repeat > 1 else ""
    print(f"{times}{word} to {host}{src}: ended by "
          f"{', '.join(f'{k} ({v})' for k, v in ends.items())}"
          f"{f' after {secs:.2f} s' if repeat == 1 else ''}, "
          f"{'last ' if repeat > 1 else ''}reply {got[:60]!r}"
          f"{f'; {bad} not as expected' if bad else ''}")
    return 0 if bad == 0 else 1


def opts(args, names):
    """--name VALUE pairs (and bare flags listed with a trailing !)."""
    o = {}
    i = 0
    while i < len(args):
        a = args[i]
        if a + "!" in names:
            o[a] = True
            i += 1
        elif a in names:
            o[a] = args[i + 1]
            i += 2
        else:
            raise SystemExit(f"unknown option {a}")
    return o


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, a = argv[1], argv[2:]
    if cmd == "sessions":
        return sessions(int(a[0]), int(a[1]), int(a[2]), int(a[3]))
    if cmd == "trickle":
        return trickle(int(a[0]), unescape(a[1]), float(a[2]), int(a[3]))
    if cmd == "trickle_cut":
        return trickle_cut(int(a[0]), float(a[1]), float(a[2]))
    if cmd == "halfclose":
        return halfclose(int(a[0]), a[1].encode(), int(a[2]))
    if cmd == "reset":
        return reset(int(a[0]), a[1].encode(), int(a[2]), int(a[3]),
                     int(a[4]))
    if cmd == "hold":
        o = opts(a[2:], ["--send", "--rcvbuf", "--mss", "--wait", "--max",
                         "--ensure!", "--answered!"])
        return hold(int(a[0]), int(a[1]),
                    o["--send"].encode() if "--send" in o else None,
                    int(o.get("--rcvbuf", 0)), int(o.get("--mss", 0)),
                    float(o.get("--wait", 10)), float(o.get("--max", 120)),
                    o.get("--ensure", False), o.get("--answered", False))
    if cmd == "overcap":
        return overcap(int(a[0]), int(a[1]), int(a[2]), float(a[3]))
    if cmd == "jmfp_storm":
        return jmfp_storm(int(a[0]), int(a[1]), int(a[2]))
    if cmd == "flood":
        o = opts(a[3:], ["--bind", "--max-lost"])
        return flood(int(a[0]), int(a[1]), float(a[2]), o.get("--bind"),
                     float(o.get("--max-lost", 0)))
    if cmd == "closed":
        o = opts(a[3:], ["--want", "--bound"])
        return closed(int(a[0]), int(a[1]), unescape(a[2]),
                      unescape(o.get("--want", "")),
                      float(o.get("--bound", 30)))
    if cmd == "junk":
        return junk(int(a[0]), int(a[1]), int(a[2]))
    if cmd == "talk":
        o = opts(a[3:], ["--bind", "--bound", "--out", "--expect",
                         "--silent!", "--repeat"])
        return talk(a[0], int(a[1]), a[2], o.get("--bind"),
                    float(o.get("--bound", 10)), o.get("--out"),
                    unescape(o["--expect"]) if "--expect" in o else None,
                    o.get("--silent", False), int(o.get("--repeat", 1)))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
