#!/usr/bin/env python3
"""The /jemalloc page in headless Firefox, the second engine it must work in.

Firefox is driven through WebDriver BiDi (its --remote-debugging-port
speaks it on ws://.../session), with a small WebSocket client of the
standard library's sockets: no geckodriver, no selenium, no npm. Fewer
checks than page.py (which holds the page's behaviour): that Gecko runs
the script without an error, draws the chart and the flame graph, zooms
on a real click, searches on real keys, and asks no other host.

Prints "ok<TAB>what" or "FAIL<TAB>what<TAB>detail" lines, as page.py.

    python3 page_firefox.py HTTP_PORT OUT
"""
import base64
import json
import os
import re
import socket
import struct
import subprocess
import sys
import time

HTTP, OUT = int(sys.argv[1]), sys.argv[2]
ORIGIN = "http://127.0.0.1:%d" % HTTP
REDIS_FNS = ("zmalloc_usable", "ztrymalloc_usable", "createStringObject",
             "_sdsnewlen", "sdsnewlen", "dictAddRaw", "zmalloc")


def result(ok, what, detail=""):
    line = ("ok\t%s" if ok else "FAIL\t%s") % what
    if not ok and detail:
        line += "\t" + str(detail).replace("\n", " | ")[:800]
    print(line, flush=True)
    return ok


class WS:
    """Just enough of RFC 6455 for one client: text frames, masked."""

    def __init__(self, host, port, path):
        self.s = socket.create_connection((host, port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
                        "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                        "Sec-WebSocket-Version: 13\r\n\r\n" % (path, host, port, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            b = self.s.recv(1)
            if not b:
                raise RuntimeError("WebSocket handshake: connection closed")
            head += b
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError("WebSocket handshake: %r" % head[:200])

    def _read(self, n):
        b = b""
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c:
                raise RuntimeError("WebSocket closed")
            b += c
        return b

    def send(self, text, opcode=1):
        data = text.encode() if isinstance(text, str) else text
        n = len(data)
        head = bytes([0x80 | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def recv(self):
        msg = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            data = self._read(n)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            op = b0 & 0x0F
            if op == 9:
                self.send(data, 10)
                continue
            if op == 8:
                raise RuntimeError("WebSocket closed by Firefox")
            msg += data
            if b0 & 0x80:
                return msg.decode()


class Firefox:
    def __init__(self):
        port = free_port()
        prof = os.path.join(OUT, "ffprofile")
        os.makedirs(prof, exist_ok=True)
        self.err = open(os.path.join(OUT, "firefox.err"), "wb")
        self.p = subprocess.Popen(
            ["firefox-esr", "--headless", "--no-remote", "--profile", prof,
             "--remote-debugging-port", str(port), "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.err, stderr=self.err)
        end = time.time() + 60
        while True:
            try:
                self.ws = WS("127.0.0.1", port, "/session")
                break
            except (OSError, RuntimeError):
                if time.time() > end or self.p.poll() is not None:
                    raise RuntimeError("Firefox's BiDi port did not open in 60 s")
                time.sleep(0.3)
        self.id = 0
        self.requests, self.errors = [], []
        self.ctx = None

    def call(self, method, params):
        self.id += 1
        mid = self.id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == mid:
                if m.get("type") == "error":
                    raise RuntimeError("%s: %s %s" % (method, m.get("error"), m.get("message")))
                return m.get("result", {})
            self._event(m)

    def _event(self, m):
        p = m.get("params", {})
        if m.get("method") == "network.beforeRequestSent" and p.get("context") == self.ctx:
            self.requests.append(p["request"]["url"])
        elif m.get("method") == "log.entryAdded" and p.get("level") == "error":
            self.errors.append(p.get("text"))

    def ev(self, expr):
        """EXPR's value, through JSON (BiDi's remote values are verbose)."""
        r = self.call("script.evaluate", {
            "expression": "(async () => JSON.stringify(await (%s)))()" % expr,
            "target": {"context": self.ctx}, "awaitPromise": True,
            "resultOwnership": "none"})
        if r.get("type") != "success":
            raise RuntimeError("evaluate %s: %s" % (expr[:80], r.get("exceptionDetails", {}).get("text")))
        v = r["result"].get("value")
        return json.loads(v) if isinstance(v, str) else None

    def wait(self, expr, timeout):
        end = time.time() + timeout
        while True:
            try:
                v = self.ev(expr)
            except RuntimeError:
                v = None
            if v or time.time() > end:
                return v
            time.sleep(0.25)

    def point(self, expr):
        self.ev("(e => e && e.scrollIntoView({block: 'center'}))(%s)" % expr)
        time.sleep(0.2)
        return self.ev("""(e => { if (!e) return null; const r = e.getBoundingClientRect();
            return [Math.round(r.left + Math.min(r.width / 2, 40)), Math.round(r.top + r.height / 2)]; })(%s)""" % expr)

    def act(self, actions):
        self.call("input.performActions", {"context": self.ctx, "actions": actions})

    def click(self, expr):
        xy = self.point(expr)
        if not xy:
            return False
        self.act([{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
                   "actions": [{"type": "pointerMove", "x": xy[0], "y": xy[1]},
                               {"type": "pointerDown", "button": 0},
                               {"type": "pointerUp", "button": 0}]}])
        return True

    def keys(self, text):
        acts = []
        for ch in text:
            acts += [{"type": "keyDown", "value": ch}, {"type": "keyUp", "value": ch}]
        self.act([{"type": "key", "id": "kb", "actions": acts}])

    def shot(self, name):
        data = self.call("browsingContext.captureScreenshot", {"context": self.ctx})["data"]
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("browser.close", {})
        except Exception:
            pass
        try:
            self.p.wait(15)
        except subprocess.TimeoutExpired:
            self.p.kill()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def run(f):
    f.call("session.new", {"capabilities": {}})
    f.ctx = f.call("browsingContext.getTree", {})["contexts"][0]["context"]
    f.call("session.subscribe", {"events": ["network.beforeRequestSent", "log.entryAdded"]})
    f.call("browsingContext.setViewport", {"context": f.ctx, "viewport": {"width": 1280, "height": 800}})
    f.call("browsingContext.navigate", {"context": f.ctx, "url": ORIGIN + "/jemalloc", "wait": "complete"})

    n = f.wait("+document.querySelector('#chart').dataset.points >= 3 && +document.querySelector('#chart').dataset.points", 30)
    result(n, "firefox: the chart has three points within 30 s (%s)" % n)
    result(f.ev("document.querySelectorAll('#chart polyline.series').length") == 6,
           "firefox: the chart draws six series")
    ok = f.wait("document.querySelector('#heap').dataset.loaded", 60)
    fr = f.ev("Array.from(document.querySelectorAll('#heap-graph g.fr')).map(g => g.dataset.name)") or []
    found = sorted(set(fr) & set(REDIS_FNS))
    result(ok and len(found) >= 2, "firefox: the flame graph names Redis's functions: %s" % ", ".join(found),
           f.ev("document.querySelector('#heap-state').textContent"))
    target = next((x for x in ("createStringObject", "_sdsnewlen", "zmalloc_usable") if x in fr), "")
    frame = "document.querySelector('#heap-graph g.fr[data-name=\"%s\"]')" % target
    f.click(frame)
    time.sleep(0.3)
    w = f.ev("[%s.getBoundingClientRect().width, document.querySelector('#heap-graph svg').getBoundingClientRect().width]" % frame)
    z = f.ev("document.querySelector('#heap-graph').dataset.zoom")
    result(z == target and w and w[0] >= w[1] - 2, "firefox: a click zooms %s to the full width (%s)" % (target, w), z)
    f.click("document.querySelector('#heap-search')")
    f.keys("sdsnewlen")
    time.sleep(0.4)
    m = f.ev("document.querySelector('#heap-matched').textContent")
    hits = f.ev("document.querySelectorAll('#heap-graph g.fr.hit').length")
    result(m.startswith("matched ") and hits > 0, "firefox: typing a search highlights %s frames: %s" % (hits, m))
    f.ev("window.scrollTo(0, 0)")
    f.shot("firefox.png")
    # data: is no host (Gecko asks for its own built-in font so).
    foreign = [u for u in f.requests if not (u.startswith(ORIGIN + "/") or u.startswith("data:"))]
    result(len(f.requests) >= 5 and not foreign,
           "firefox: all %d requests went to %s" % (len(f.requests), ORIGIN), foreign[:5])
    errs = [e for e in f.errors if not re.search(r"favicon", e or "")]
    result(not errs, "firefox: no script error in the console", errs[:5])


def main():
    f = Firefox()
    try:
        run(f)
    finally:
        f.close()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:
        result(False, "firefox: the browser session ran to its end", repr(e))
        sys.exit(1)
