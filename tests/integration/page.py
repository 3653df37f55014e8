#!/usr/bin/env python3
"""Drive the /jemalloc page in headless Chromium, as a person would.

page.sh starts redis-server with the agent and runs this. It speaks the
DevTools protocol over --remote-debugging-pipe (fd 3 in, fd 4 out, JSON
messages ended by NUL): Python's standard library only, no npm, no
websocket module. Clicks and typing are real input events
(Input.dispatchMouseEvent, Input.insertText) at the elements' places on
the screen, so a frame that is covered, hidden or not drawn cannot be
clicked. Every request the page makes is recorded (Network events).

Prints one line per check: "ok<TAB>what" or "FAIL<TAB>what<TAB>detail";
page.sh counts them. Screenshots go to OUT/*.png.

    python3 page.py HTTP_PORT REDIS_PORT OUT
    python3 page.py --noprof HTTP_PORT OUT   (a process without opt.prof)
"""
import base64
import json
import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

NOPROF = sys.argv[1] == "--noprof"
if NOPROF:
    HTTP, RPORT, OUT = int(sys.argv[2]), 0, sys.argv[3]
else:
    HTTP, RPORT, OUT = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ORIGIN = "http://127.0.0.1:%d" % HTTP
# Functions of Redis's own that hold its heap under a SET load.
REDIS_FNS = ("zmalloc_usable", "ztrymalloc_usable", "createStringObject",
             "_sdsnewlen", "sdsnewlen", "dictAddRaw", "zmalloc")


def log(*a):
    print("#", *a, file=sys.stderr, flush=True)


def result(ok, what, detail=""):
    line = ("ok\t%s" if ok else "FAIL\t%s") % what
    if not ok and detail:
        line += "\t" + str(detail).replace("\n", " | ")[:800]
    print(line, flush=True)
    return ok


class Chrome:
    """Chromium over a pipe; one page, one flat session."""

    def __init__(self, width, height):
        cmd_r, cmd_w = os.pipe()  # we write, Chromium reads (its fd 3)
        ev_r, ev_w = os.pipe()    # Chromium writes (its fd 4), we read
        # Out of the way of 3 and 4 before the child's dup2s.
        hi_r, hi_w = 200, 201
        os.dup2(cmd_r, hi_r)
        os.dup2(ev_w, hi_w)
        os.close(cmd_r)
        os.close(ev_w)

        def child():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        self.err = open(os.path.join(OUT, "chromium.err"), "wb")
        self.p = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking",
             "--disable-component-update", "--disable-sync",
             "--user-data-dir=" + os.path.join(OUT, "profile"),
             "--window-size=%d,%d" % (width, height),
             "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.err, stderr=self.err,
            preexec_fn=child, pass_fds=(3, 4, hi_r, hi_w))
        os.close(hi_r)
        os.close(hi_w)
        self.w = os.fdopen(cmd_w, "wb", buffering=0)
        self.r = os.fdopen(ev_r, "rb", buffering=0)
        self.q = queue.Queue()
        self.id = 0
        self.session = None
        self.requests = []     # every URL the page asked for
        self.exceptions = []   # uncaught script errors
        self.security = []     # CSP and other security console lines
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        buf = b""
        while True:
            b = self.r.read(65536)
            if not b:
                self.q.put(None)
                return
            buf += b
            while b"\0" in buf:
                msg, buf = buf.split(b"\0", 1)
                self.q.put(json.loads(msg))

    def _event(self, m):
        meth, p = m.get("method"), m.get("params", {})
        if meth == "Network.requestWillBeSent":
            self.requests.append(p["request"]["url"])
        elif meth == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.exceptions.append(
                (d.get("exception") or {}).get("description") or d.get("text"))
        elif meth == "Log.entryAdded":
            e = p["entry"]
            if e.get("source") == "security" or "Content Security Policy" in e.get("text", ""):
                self.security.append(e.get("text"))

    def call(self, method, params=None, session=True, timeout=60):
        self.id += 1
        mid = self.id
        msg = {"id": mid, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        self.w.write(json.dumps(msg).encode() + b"\0")
        end = time.time() + timeout
        while True:
            try:
                m = self.q.get(timeout=max(0.1, end - time.time()))
            except queue.Empty:
                raise RuntimeError("no answer to %s in %d s" % (method, timeout))
            if m is None:
                raise RuntimeError("Chromium closed the pipe")
            if m.get("id") == mid:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self._event(m)

    def pump(self, seconds):
        """Let events in for a while (and time pass)."""
        end = time.time() + seconds
        while time.time() < end:
            try:
                m = self.q.get(timeout=max(0.05, end - time.time()))
            except queue.Empty:
                continue
            if m is None:
                raise RuntimeError("Chromium closed the pipe")
            self._event(m)

    def open(self, width, height):
        t = self.call("Target.createTarget", {"url": "about:blank"}, False)
        s = self.call("Target.attachToTarget",
                      {"targetId": t["targetId"], "flatten": True}, False)
        self.session = s["sessionId"]
        for d in ("Network", "Page", "Runtime", "Log"):
            self.call(d + ".enable")
        self.size(width, height, False)

    def size(self, width, height, mobile):
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1,
                   "mobile": mobile})

    def ev(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr,
                                           "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate %s: %s" % (expr[:80], r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def wait(self, expr, timeout):
        end = time.time() + timeout
        while True:
            try:
                v = self.ev(expr)
            except RuntimeError:  # the page is not there yet
                v = None
            if v or time.time() > end:
                return v
            self.pump(0.25)

    def point(self, expr):
        """The middle of the element EXPR names, scrolled into view."""
        # Scroll first and let the scroll events pass (the page hides its
        # tooltip on scroll), then measure.
        if not self.ev("""(() => { const e = %s; if (!e) return false;
            e.scrollIntoView({block: "center", inline: "nearest"}); return true; })()""" % expr):
            return None
        self.pump(0.2)
        return self.ev("""(() => { const e = %s; if (!e) return null;
            const r = e.getBoundingClientRect();
            return [r.left + Math.min(r.width / 2, 40), r.top + r.height / 2]; })()""" % expr)

    def mouse(self, kind, x, y, **kw):
        p = {"type": kind, "x": x, "y": y}
        p.update(kw)
        self.call("Input.dispatchMouseEvent", p)

    def click(self, expr):
        xy = self.point(expr)
        if not xy:
            return False
        x, y = xy
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, button="left", clickCount=1)
        self.mouse("mouseReleased", x, y, button="left", clickCount=1)
        return True

    def hover(self, expr):
        xy = self.point(expr)
        if xy:
            self.mouse("mouseMoved", xy[0], xy[1])
        return bool(xy)

    def type(self, sel, text):
        self.click("document.querySelector(%s)" % json.dumps(sel))
        self.ev("document.querySelector(%s).select()" % json.dumps(sel))
        self.call("Input.insertText", {"text": text})

    def shot(self, name, full=False, upto=None):
        """A PNG of the viewport; FULL: of the page, or down to the end
        of the element UPTO (a selector)."""
        p = {"format": "png"}
        if full:
            w, h = self.ev("[document.documentElement.clientWidth, document.documentElement.scrollHeight]")
            if upto:
                h = self.ev("Math.ceil(document.querySelector(%s).getBoundingClientRect().bottom + window.scrollY + 8)" % json.dumps(upto))
            p.update({"captureBeyondViewport": True,
                      "clip": {"x": 0, "y": 0, "width": w, "height": h, "scale": 1}})
        data = base64.b64decode(self.call("Page.captureScreenshot", p)["data"])
        path = os.path.join(OUT, name)
        with open(path, "wb") as f:
            f.write(data)
        log("screenshot", path, len(data), "bytes")
        return path

    def close(self):
        try:
            self.call("Browser.close", session=False, timeout=10)
        except Exception:
            pass
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()


def status():
    with urllib.request.urlopen(ORIGIN + "/jemalloc/status", timeout=30) as r:
        return json.load(r)


def get(path):
    try:
        with urllib.request.urlopen(ORIGIN + path, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def redis_grow(prefix, n, size):
    """SET n keys of size bytes each, pipelined: what must show as growth."""
    s = socket.create_connection(("127.0.0.1", RPORT), timeout=60)
    v = "g" * size
    cmds = []
    for i in range(n):
        k = "%s:%d" % (prefix, i)
        cmds.append("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
    s.sendall("".join(cmds).encode())
    got = b""
    while got.count(b"+OK\r\n") < n:
        b = s.recv(65536)
        if not b:
            break
        got += b
    s.close()
    return got.count(b"+OK\r\n")


def names(c, graph):
    return c.ev("Array.from(document.querySelectorAll('#%s-graph g.fr')).map(g => g.dataset.name)" % graph) or []


def table_rows(c, sel):
    return c.ev("""Array.from(document.querySelectorAll('%s tbody tr')).map(
        tr => Array.from(tr.children).map(td => td.textContent))""" % sel) or []


def reply_of(c, word, before):
    """The reply line of the word pressed after the BEFORE-th reply."""
    expr = """(() => { const l = Array.from(document.querySelectorAll('#replies li[data-word=%s]'));
        return l.length > %d && l[0].dataset.status ? [l[0].dataset.status, l[0].textContent] : null; })()""" % (word, before)
    return c.wait(expr, 60)


def press(c, word):
    """Click WORD's button as a person would, and its reply line.

    A mouse click lands where the button was measured; on a loaded machine
    the page can still move under it (a status poll, a list that loads)
    or have the button disabled for a moment. The page adds the word's
    line to #replies in the click's own handler, so a click that pressed
    nothing is seen at once, and is made again (at most three times)."""
    btn = "document.querySelector('#controls button[data-word=%s]')" % word
    count = "document.querySelectorAll('#replies li[data-word=%s]').length" % word
    before = c.ev(count)
    for _ in range(3):
        c.wait("(b => b && !b.disabled)(%s)" % btn, 30)
        if not c.click(btn):
            return None
        if c.wait("%s > %d" % (count, before), 5):
            return reply_of(c, word, before)
    return None


CG_FIT = """(() => {
    const box = document.querySelector('#cg-graph'), g = box.querySelector('svg g.graph');
    if (!g) return null;
    const b = box.getBoundingClientRect(), r = g.getBoundingClientRect();
    const n1 = Array.from(box.querySelectorAll('g.node')).find(n => (n.querySelector('title') || {}).textContent === 'N1');
    const h = n1 ? n1.getBoundingClientRect() : null;
    const inside = (r) => r.left >= b.left - 1 && r.right <= b.right + 1 && r.top >= b.top - 1 && r.bottom <= b.bottom + 1;
    return {box: [b.width, b.height], drawn: [r.width, r.height], fits: inside(r),
            heaviest: h ? inside(h) : null, scale: g.getScreenCTM().a,
            vb: box.querySelector('svg').getAttribute('viewBox')};
})()"""


PICKERS = """(() => Array.from(document.querySelectorAll('#g-base, #g-target')).map(s => ({
    value: s.value,
    group: s.selectedOptions[0] && s.selectedOptions[0].parentNode.dataset ? (s.selectedOptions[0].parentNode.dataset.whose || '') : '',
    groups: Array.from(s.querySelectorAll('optgroup')).map(g => [g.dataset.whose, g.label, Array.from(g.querySelectorAll('option')).map(o => o.value)])})))()"""


def other_dumps(c):
    """Another process's dumps in the shared dump_dir (page.sh's second
    jm4lwd): never the pickers' default, in a group of their own, and a
    comparison against one says so."""
    c.click("document.querySelector('#dumps-refresh')")
    c.wait("/as of/.test(document.querySelector('#dumps-state').textContent)", 30)
    j = json.loads(get("/jemalloc/dumps")[1])
    others = [d["name"] for d in j["dumps"] if not d.get("this")]
    mine = [d["name"] for d in j["dumps"] if d.get("this")]
    p = c.ev(PICKERS) or []
    result(len(others) >= 2 and p and all(x["value"] in mine + [""] for x in p) and
           all(x["value"] not in others for x in p),
           "with %d dumps of another process and %d of this one, the growth pickers default to none of the other's: %s"
           % (len(others), len(mine), [x["value"] for x in p]), p)
    grp = [g for g in (p[0]["groups"] if p else []) if g[0] == "other"]
    result(grp and sorted(grp[0][2]) == sorted(others) and "other process" in grp[0][1],
           "the other process's dumps are in their own group: %s" % (grp[0][1] if grp else "-"), p)
    rows = c.ev("Array.from(document.querySelectorAll('#dlist tbody tr[data-name]')).map(r => [r.dataset.name, r.querySelector('td.whose').textContent])") or []
    want = [[d["name"], "this process" if d.get("this") else "pid %s jm4lwd" % d.get("pid")] for d in j["dumps"]]
    result(rows == want, "the Dumps list shows this process's first and says whose each is (%s)" % (rows[-1] if rows else "-"), rows)
    # Chosen on purpose: another process's base against its newer dump
    # of the same process is no mix; against this one's, it says so.
    if len(others) >= 2:
        c.ev("(() => { const b = document.querySelector('#g-base'), t = document.querySelector('#g-target');"
             " b.value = %s; t.value = %s; b.dispatchEvent(new Event('change')); t.dispatchEvent(new Event('change')); })()"
             % (json.dumps(others[1]), json.dumps(others[0])))
        prev = c.ev("document.querySelector('#growth').dataset.loaded || ''")
        c.click("document.querySelector('#g-compare')")
        c.wait("(document.querySelector('#growth').dataset.loaded || '') != %s" % json.dumps(prev), 60)
        warn = c.ev("document.querySelector('#g-state').dataset.warning")
        result(warn == "", "comparing two dumps of the other process: no mixing warning (%s)" % warn,
               c.ev("document.querySelector('#g-state').textContent"))
        # The growth checks that follow wait for the section's first
        # load, and for the pickers' own choice (a person's stays).
        c.ev("delete document.querySelector('#growth').dataset.loaded;"
             " for (const s of document.querySelectorAll('#g-base, #g-target')) s.dataset.auto = '1'")


def other_base(c):
    """Another process's dump chosen as the base of this one's: the
    growth line warns that it mixes two heaps."""
    j = json.loads(get("/jemalloc/dumps")[1])
    others = [d for d in j["dumps"] if not d.get("this")]
    mine = [d for d in j["dumps"] if d.get("this")]
    if not others or not mine:
        result(False, "another process's dump and this one's to compare", j)
        return
    c.ev("(() => { const b = document.querySelector('#g-base'), t = document.querySelector('#g-target');"
         " b.value = %s; t.value = %s; b.dispatchEvent(new Event('change')); t.dispatchEvent(new Event('change')); })()"
         % (json.dumps(others[0]["name"]), json.dumps(mine[0]["name"])))
    prev = c.ev("document.querySelector('#growth').dataset.loaded || ''")
    c.pump(1.2)  # dump_min_interval
    c.click("document.querySelector('#g-compare')")
    c.wait("(document.querySelector('#growth').dataset.loaded || '') != %s" % json.dumps(prev), 60)
    st = c.ev("document.querySelector('#g-state').textContent") or ""
    result("another process's dump (pid %s jm4lwd" % others[0].get("pid") in st and "mixes two heaps" in st,
           "a base of another process, chosen on purpose, is labelled: %s" % st)


def snapshot_choices(c):
    """The in-memory snapshots (page.sh's agent takes one a second): "last
    minute" shows the growth since the snapshot of then, labelled with its
    time and age, or the server's one-line reason (no snapshot that old
    yet) with no table under it; "Heap at the peak" shows the snapshot's
    heading above its top functions."""
    done = "(document.querySelector('#growth').dataset.loaded || '') != %s || (document.querySelector('#growth').dataset.refused || '') != %s"
    g = "document.querySelector('#growth').dataset"
    t0 = time.time()
    prev = [c.ev("%s.loaded || ''" % g), c.ev("%s.refused || ''" % g)]
    c.pump(1.2)  # dump_min_interval: since= dumps the live heap
    c.click("document.querySelector('#g-since button[data-since=\"1m\"]')")
    ok = c.wait(done % (json.dumps(prev[0]), json.dumps(prev[1])), 60)
    st = c.ev("document.querySelector('#g-state').textContent") or ""
    rows = table_rows(c, "#gtop")
    grew = re.match(r"^growth since the snapshot of \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(\d+ s ago, \d+ of \d+ kept\): [-+0-9]", st)
    said = re.search(r"no snapshot is 60 s old: the oldest is .* old .*snapshot_count", st)
    result(ok and ((grew and rows) or (said and not rows)),
           "since the last minute: the growth labelled with its snapshot, or the server's reason and no table: %s (%d rows)"
           % (st, len(rows)), st)
    # The agent is younger than a minute here: the same choice for 10 s
    # shows the growth itself, labelled from X-Jm4lw-Base.
    prev = c.ev("%s.loaded || ''" % g)
    c.ev("document.querySelector('#g-since button[data-since=\"1m\"]').dataset.since = '10s'")
    c.pump(1.2)  # dump_min_interval
    c.click("document.querySelector('#g-since button[data-since=\"10s\"]')")
    ok = c.wait("(%s.loaded || '') != %s" % (g, json.dumps(prev)), 60)
    c.ev("document.querySelector('#g-since button[data-since=\"10s\"]').dataset.since = '1m'")
    st = c.ev("document.querySelector('#g-state').textContent") or ""
    rows = table_rows(c, "#gtop")
    grew = re.match(r"^growth since the snapshot of \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \((\d+) s ago, \d+ of \d+ kept\): [-+0-9]", st)
    result(ok and grew and 10 <= int(grew.group(1)) < 60 and rows,
           "since 10 s: the growth, labelled with its snapshot's time and age: %s (%d rows)" % (st, len(rows)), st)
    prev = c.ev("%s.loaded || ''" % g)
    c.click("document.querySelector('#g-peak')")
    ok = c.wait("(%s.loaded || '') != %s" % (g, json.dumps(prev)), 60)
    head = c.ev("(e => e.classList.contains('hidden') ? '' : e.textContent)(document.querySelector('#g-heading'))") or ""
    rows = table_rows(c, "#gtop")
    result(ok and re.match(r"^the heap at the peak: the snapshot of \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(\d+ s ago, \d+ of \d+ kept\), stats.allocated ", head)
           and "snapshot_interval 1 s apart" in head and rows and rows[0][1].endswith("%"),
           "Heap at the peak: its heading above its top functions (%s; %d rows)" % (head.split("\n")[0], len(rows)),
           [head, c.ev("document.querySelector('#g-state').textContent")])
    log("the snapshots' choices took %.1f s" % (time.time() - t0))


def callgraph_view(c):
    """The drawn call graph fits its box at first view (the heaviest
    node, N1, in it); +, the wheel and Fit change its scale, a drag
    moves it."""
    c.ev("document.querySelector('#cg-graph').scrollIntoView({block: 'start'})")
    c.pump(0.2)
    first = c.ev(CG_FIT) or {}
    result(first.get("fits") and first.get("heaviest"),
           "the call graph opens fitted: the whole drawing and its heaviest node (N1) inside the box",
           first)
    c.click("document.querySelector('#cg-in')")
    zin = c.ev(CG_FIT) or {}
    result(zin.get("scale", 0) > first.get("scale", 0) * 1.4,
           "+ zooms in (%.3f -> %.3f px per point)" % (first.get("scale", 0), zin.get("scale", 0)), zin)
    xy = c.point("document.querySelector('#cg-graph')")
    c.mouse("mousePressed", xy[0] + 100, xy[1], button="left", clickCount=1)
    c.mouse("mouseMoved", xy[0] + 40, xy[1] - 30, button="left", buttons=1)
    c.mouse("mouseReleased", xy[0] + 40, xy[1] - 30, button="left", clickCount=1)
    drag = c.ev(CG_FIT) or {}
    result(drag.get("vb") != zin.get("vb") and abs(drag.get("scale", 0) - zin.get("scale", 1)) < 1e-6,
           "a drag pans it (viewBox %s -> %s, same scale)" % (zin.get("vb"), drag.get("vb")))
    c.mouse("mouseWheel", xy[0], xy[1], deltaX=0, deltaY=-120)
    c.pump(0.2)
    wheel = c.ev(CG_FIT) or {}
    result(wheel.get("scale", 0) > drag.get("scale", 0) * 1.1,
           "the wheel zooms in (%.3f -> %.3f)" % (drag.get("scale", 0), wheel.get("scale", 0)), wheel)
    c.click("document.querySelector('#cg-fit')")
    fit = c.ev(CG_FIT) or {}
    result(fit.get("fits") and abs(fit.get("scale", 0) - first.get("scale", 1)) < 1e-3,
           "Fit shows the whole drawing again at the first scale", fit)


def noprof(c):
    """Without opt.prof: the profiling buttons are off and say why."""
    c.call("Page.navigate", {"url": ORIGIN + "/jemalloc"})
    n = c.wait("+document.querySelector('#chart').dataset.points >= 2 && document.querySelector('#chart').dataset.points", 30)
    result(n, "no profiling: the chart still grows (%s points)" % n)
    dis = c.ev("Array.from(document.querySelectorAll('#controls button')).map(b => [b.dataset.word, b.disabled])")
    result(dis == [["jmep", True], ["jmdp", True], ["jmfp", True], ["jmrs", True], ["jmpg", False]],
           "no profiling: on, off, dump and reset are disabled, purge is not", dis)
    note = c.ev("(n => n.classList.contains('hidden') ? '' : n.textContent)(document.querySelector('#profnote'))")
    result("MALLOC_CONF=prof:true" in note, "no profiling: the page says which MALLOC_CONF to set", note)
    tip = c.ev("document.querySelector('#controls button[data-word=jmep]').title")
    result(tip.startswith("disabled: profiling is not enabled"), "no profiling: a disabled button says why", tip)
    result(c.ev("document.querySelector('#heap-refresh').disabled && document.querySelector('#g-previous').disabled"),
           "no profiling: Refresh and Since the last dump are disabled")
    result("lg_sample" not in c.ev("document.querySelector('#badges').textContent"),
           "no profiling: no sampling rate is claimed")
    result("not enabled" in c.ev("document.querySelector('#heap-state').textContent") and
           not any("/jemalloc/profile" in u for u in c.requests),
           "no profiling: the page asks for no profile, and says why")
    r = press(c, "jmpg")
    result(r and r[0] == "200" and "purged" in r[1], "no profiling: Purge works and shows its reply", r)
    # A button pressed anyway (a stale page): the error line, in red.
    # Enabled and clicked in one turn of the page's loop: its status poll
    # disables the button again, and a mouse click that came after it
    # (under load) pressed nothing.
    before = c.ev("document.querySelectorAll('#replies li[data-word=jmfp]').length")
    c.ev("(b => { b.disabled = false; b.click(); })(document.querySelector('#controls button[data-word=jmfp]'))")
    r = reply_of(c, "jmfp", before)
    cls = c.ev("(e => e && e.className)(document.querySelector('#replies li[data-word=jmfp]'))")
    result(r and r[0] == "501" and "error: " in r[1] and "MALLOC_CONF" in r[1] and cls == "err",
           "no profiling: a dump pressed anyway shows 501 and the error line", r)
    c.shot("noprof.png")
    foreign = [u for u in c.requests if not (u.startswith(ORIGIN + "/") or u.startswith("data:") or u == "about:blank")]
    result(not foreign and not c.exceptions, "no profiling: own origin only, no script error", (foreign + c.exceptions)[:5])


def main():
    c = Chrome(1280, 800)
    try:
        c.open(1280, 800)
        noprof(c) if NOPROF else run(c)
    finally:
        c.close()


def run(c):
    c.call("Page.navigate", {"url": ORIGIN + "/jemalloc"})

    # The chart grows while the page is open: three polls (~2 s apart).
    n = c.wait("+document.querySelector('#chart').dataset.points >= 3 && document.querySelector('#chart').dataset.points", 30)
    result(n, "the chart has three points within 30 s (it has %s)" % n,
           c.ev("document.body.innerText.slice(0, 400)"))
    lines = c.ev("document.querySelectorAll('#chart polyline.series').length")
    result(lines == 6, "the chart draws six series (allocated ... metadata): %s" % lines)
    leg = c.ev("document.querySelector('#legend').textContent")
    result("allocated" in leg and "resident" in leg and "iB" in leg,
           "the legend names the figures with their values", leg)

    # The nav names every section, and every link lands on one.
    nav = c.ev("Array.from(document.querySelectorAll('nav a')).map(a => a.getAttribute('href'))") or []
    secs = c.ev("Array.from(document.querySelectorAll('section[id]')).map(s => '#' + s.id)") or []
    result(nav and sorted(nav) == sorted(secs),
           "the nav links each of the %d sections, and nothing else" % len(secs),
           "nav %s; sections %s" % (nav, secs))

    # The live heap, from /jemalloc/profile?format=collapsed.
    ok = c.wait("document.querySelector('#heap').dataset.loaded", 60)
    result(ok, "the live heap's flame graph loads",
           c.ev("document.querySelector('#heap-state').textContent"))
    fr = names(c, "heap")
    found = sorted(set(fr) & set(REDIS_FNS))
    result(len(found) >= 2, "the flame graph names Redis's functions: %s" % ", ".join(found),
           "frames: %s" % ", ".join(sorted(set(fr))[:40]))
    hsum = c.ev("document.querySelector('#heap-sum').textContent") or ""
    result(re.match(r"~[0-9.]+ [KMG]iB in use \(sampled estimate, \u00b1[0-9.]+% at 95%\) in ", hsum),
           "the live heap's total says it is a sampled estimate, with its error: %s" % hsum, hsum)
    # By self bytes: redis's own code, the zmalloc wrappers it allocates
    # through folded into it (X-Jm4lw-Folded), as jmtp does.
    top = table_rows(c, "#top")
    wrappers = ("zmalloc", "zmalloc_usable", "ztrymalloc_usable",
                "zrealloc_usable", "zcalloc_usable", "ztrycalloc_usable")
    result(top and not any(r[0] in wrappers for r in top[:3]),
           "the top functions table puts redis's own code at the top by self bytes, "
           "not a zmalloc wrapper (%s)" % (top[0][0] if top else "empty"), top[:5])
    fold = c.ev("document.querySelector('#top-fold').textContent") or ""
    result(fold.startswith("Folded allocation wrappers into their callers: ") and "zmalloc" in fold,
           "the table says which wrappers it folded", fold)
    c.shot("heap.png")

    # Threads: format=threads as a table; jm4lw-run names threads
    # (prof_sys_thread_name), so redis's main thread is there by name.
    c.click("document.querySelector('#th-refresh')")
    ok = c.wait("document.querySelector('#threads').dataset.loaded", 60)
    result(ok, "the Threads section loads", c.ev("document.querySelector('#th-state').textContent"))
    th = table_rows(c, "#thtop")
    result(any(r[0].endswith(" redis-server") and "B" in r[1] and r[3].endswith("%") for r in th),
           "the Threads table names redis's main thread with its bytes and share (%s)"
           % (th[0][0] if th else "empty"), th[:3])

    # Hover: the tooltip names the frame, its bytes and its share.
    target = next((f for f in ("createStringObject", "_sdsnewlen", "zmalloc_usable") if f in fr), None)
    frame = "document.querySelector('#heap-graph g.fr[data-name=\"%s\"]')" % target
    c.hover(frame)
    c.pump(0.3)
    tiptext = c.ev("(t => t.classList.contains('hidden') ? '' : t.textContent)(document.querySelector('#tip'))")
    result(target and target in (tiptext or "") and "%" in tiptext and "iB" in tiptext,
           "hovering %s shows its name, bytes and percent" % target, tiptext)

    # Click: the frame zooms to the graph's width.
    before = c.ev("%s.getBoundingClientRect().width" % frame)
    c.click(frame)
    c.pump(0.3)
    zoomed = c.ev("document.querySelector('#heap-graph').dataset.zoom")
    after = c.ev("""(() => { const g = %s; const s = document.querySelector('#heap-graph svg');
        return [g.getBoundingClientRect().width, s.getBoundingClientRect().width]; })()""" % frame)
    result(zoomed == target and after[0] >= after[1] - 2 and after[0] > before,
           "clicking %s zooms it to the full width (%.0f px -> %.0f of %.0f)"
           % (target, before or 0, after[0], after[1]), "zoom: %r" % zoomed)
    crumb = c.ev("document.querySelector('#heap-zoom').textContent")
    result(target in crumb, "the zoom line names the frame: %s" % crumb)
    n_zoomed = len(names(c, "heap"))
    c.shot("zoom.png")
    c.click("document.querySelector('#heap-reset')")
    c.pump(0.3)
    result(c.ev("document.querySelector('#heap-graph').dataset.zoom") == "" and len(names(c, "heap")) > n_zoomed,
           "Reset zoom shows the whole graph again (%d frames, %d zoomed)" % (len(names(c, "heap")), n_zoomed))

    # Search: matches are highlighted and summed.
    c.type("#heap-search", "sdsnewlen")
    c.pump(0.3)
    hits = c.ev("document.querySelectorAll('#heap-graph g.fr.hit').length")
    magenta = c.ev("Array.from(document.querySelectorAll('#heap-graph g.fr.hit rect')).every(r => r.getAttribute('fill') === 'rgb(230,0,230)')")
    m = c.ev("document.querySelector('#heap-matched').textContent")
    msum = int(c.ev("document.querySelector('#heap-graph').dataset.matched") or 0)
    result(hits > 0 and magenta, "searching sdsnewlen highlights %d frames in magenta" % hits)
    result(m.startswith("matched ") and "%" in m and msum > 0, "the search sums what matched: %s" % m)
    c.shot("search.png")
    c.type("#heap-search", "no-such-function-xyz")
    c.pump(0.3)
    result(c.ev("document.querySelector('#heap-matched').textContent") == "no frame matches" and
           c.ev("document.querySelectorAll('#heap-graph g.fr.hit').length") == 0,
           "a search that matches nothing says so and highlights nothing")
    c.type("#heap-search", "")

    # Controls: profiling off and on through the buttons.
    r = press(c, "jmdp")
    st = status()
    result(r and r[0] == "200" and "ok" in r[1], "Profiling off: the page shows jmdp's reply", r)
    result(st["prof_active"] is False, "after Profiling off /jemalloc/status says prof_active false", st.get("prof_active"))
    badge = c.wait("document.querySelector('#badges').textContent.includes('sampling off') && document.querySelector('#badges').textContent", 10)
    result(badge, "the page's badge follows: sampling off", badge)
    # An answer while sampling is off says why, in sight.
    c.click("document.querySelector('#th-refresh')")
    why = c.wait("!document.querySelector('#th-why').classList.contains('hidden') && "
                 "document.querySelector('#th-why').textContent", 60)
    result(why and "sampling is inactive (prof.active is false) since " in why and "jmep" in why,
           "with sampling off, the Threads section says why, in sight: %s" % why, why)
    c.pump(1.2)  # dump_min_interval, before the growth's dumps
    r = press(c, "jmep")
    st = status()
    result(r and r[0] == "200" and "ok" in r[1], "Profiling on: the page shows jmep's reply", r)
    result(st["prof_active"] is True, "after Profiling on /jemalloc/status says prof_active true", st.get("prof_active"))

    other_dumps(c)
    # Growth: dump, make Redis grow, compare.
    r = press(c, "jmfp")
    result(r and r[0] == "200" and ".heap" in r[1], "Dump now: the page shows the dump's path", r)
    grew = redis_grow("pagegrow", 2500, 16000)
    log("SET", grew, "keys of 16000 bytes")
    c.pump(1.2)  # dump_min_interval
    c.click("document.querySelector('#g-previous')")
    ok = c.wait("document.querySelector('#growth').dataset.loaded", 60)
    g1 = table_rows(c, "#gtop")
    result(ok and g1 and g1[0][1].startswith("+"), "Since the last dump: the top growth table's first row grew (%s %s)"
           % (g1[0][0], g1[0][1]) if g1 else "Since the last dump: a growth table",
           c.ev("document.querySelector('#g-state').textContent"))
    prev_loaded = c.ev("document.querySelector('#growth').dataset.loaded")
    c.pump(1.2)  # that profile was a dump too: dump_min_interval
    r = press(c, "jmfp")
    result(r and r[0] == "200", "Dump now again", r)
    # This process's rows (page.sh's other process has its own there).
    mine = "Array.from(document.querySelectorAll('#dlist tbody tr[data-name] td.whose')).filter(t => t.textContent === 'this process').length"
    nd = c.wait("%s >= 2 && %s" % (mine, mine), 30)
    result(nd, "the dump list shows both dumps of this process (%s)" % nd)
    picked = c.ev("[document.querySelector('#g-base').value, document.querySelector('#g-target').value]")
    dumps = json.loads(get("/jemalloc/dumps")[1])["dumps"]
    result(picked == [dumps[1]["name"], dumps[0]["name"]],
           "the pickers offer the two newest dumps, older as from: %s" % picked, dumps[:2])
    c.click("document.querySelector('#g-compare')")
    c.wait("document.querySelector('#growth').dataset.loaded != %s" % json.dumps(prev_loaded), 60)
    state = c.ev("document.querySelector('#g-state').textContent")
    result(picked[1] + " minus " + picked[0] in state and ": +" in state,
           "Compare dumps: %s" % state)
    # The growth table by total change names the function that grew.
    c.click("Array.from(document.querySelectorAll('#gtop th')).find(th => th.textContent.startsWith('total'))")
    c.pump(0.2)
    g2 = table_rows(c, "#gtop")
    row = next((r for r in g2 if r[0] == "createStringObject"), None)
    result(row and row[2].startswith("+") and ("MiB" in row[2] or "GiB" in row[2]),
           "the top growth table names createStringObject, grown %s" % (row[2] if row else "-"),
           [r[:3] for r in g2[:12]])
    selfrow = g2 and max(g2, key=lambda r: r[1].startswith("+"))
    fill = c.ev("(g => g && g.querySelector('rect').getAttribute('fill'))(document.querySelector('#growth-graph g.fr[data-name=\"createStringObject\"]'))")
    result(fill and fill.startswith("rgb(255,"), "createStringObject is red in the differential flame graph (%s)" % fill)
    c.shot("growth.png")
    other_base(c)
    snapshot_choices(c)

    # Dumps: each row says why it was taken, as the JSON does.
    whys = c.ev("Array.from(document.querySelectorAll('#dlist tbody tr[data-name]')).map(r => [r.dataset.name, r.querySelector('td.why').textContent])")
    result(whys and sorted(whys) == sorted([d["name"], d["cause"]] for d in dumps),
           "each dump's row says why it was taken (%s)" % (whys[0] if whys else "-"), whys)
    # Dumps: every format downloads.
    links = c.ev("Array.from(document.querySelectorAll('#dlist tbody tr[data-name]')[0].querySelectorAll('a')).map(a => [a.textContent, a.getAttribute('href'), a.getAttribute('download')])")
    # The formats are the server's views table (/jemalloc/formats): a
    # link each, saved under the row's suffix.
    code, body = get("/jemalloc/formats")
    formats = json.loads(body)["formats"] if code == 200 else []
    fnames = [f["name"] for f in formats]
    result(len(fnames) >= 9 and [l[0] for l in links] == fnames and
           all(l[2].endswith(f["suffix"]) for l, f in zip(links, formats)),
           "each dump has a link per format of /jemalloc/formats (%s), saved with its suffix" % ", ".join(fnames), links)
    for name, href, dl in links:
        # page.sh's agent takes a snapshot a second: a download asked
        # meanwhile waits its turn behind it, never a 409 (a plain <a>
        # download does not retry).
        code, body = get(href)
        want = {"raw": b"heap_v2/", "pprof": b"\x1f\x8b", "svg": b"<?xml", "dot": b"digraph",
                "callgraph": b"<?xml", "threads": b"# live heap by thread"}.get(name, b"")
        result(code == 200 and len(body) > 0 and body.startswith(want),
               "the %s link answers 200 (%d bytes, saved as %s)" % (name, len(body), dl), body[:60])

    # The call graph: Graphviz's SVG drawn in the page, naming Redis's own.
    c.pump(1.2)  # dump_min_interval
    c.click("document.querySelector('#cg-load')")
    ok = c.wait("document.querySelector('#callgraph').dataset.loaded", 60)
    view = c.ev("document.querySelector('#cg-graph').dataset.view")
    texts = c.ev("Array.from(document.querySelectorAll('#cg-graph svg text')).map(t => t.textContent)") or []
    hit = [f for f in REDIS_FNS if f in texts]
    result(ok and view == "svg" and hit, "Draw call graph: an SVG laid out by Graphviz naming %s" % (hit[:2] or "-"),
           "%s %s; %s" % (view, c.ev("document.querySelector('#cg-state').textContent"), texts[:12]))
    callgraph_view(c)
    c.shot("callgraph.png")
    # Recent allocations: jemalloc's prof_recent records, redis's own, both
    # stacks named; then only the live ones of 100 bytes or more.
    c.click("document.querySelector('#recent-load')")
    ok = c.wait("/^[0-9]+ of [0-9]+ /.test(document.querySelector('#recent-state').textContent)", 60)
    rows = table_rows(c, "#rlist")
    result(ok and rows and all(r[3] == "live" or r[3].startswith("freed") for r in rows),
           "Recent allocations lists records, live or freed (%d rows)" % len(rows),
           c.ev("document.querySelector('#recent-state').textContent"))
    result(any(f in r[4] for r in rows for f in REDIS_FNS),
           "... where redis allocated them, by name", [r[4] for r in rows[:5]])
    c.click("document.querySelector('#recent-live')")
    c.type("#recent-min", "100")
    c.click("document.querySelector('#recent-load')")
    ok = c.wait("/only|^[0-9]+ of/.test(document.querySelector('#recent-state').textContent) && "
                "document.querySelector('#recent-live').checked", 60)
    c.pump(1.5)
    rows = table_rows(c, "#rlist")
    sizes = c.ev("Array.from(document.querySelectorAll('#rlist tbody tr.live, #rlist tbody tr.freed')).length")
    result(ok and all(r[3] == "live" for r in rows if len(r) == 6),
           "live only and size >= 100: every row live (%d rows, %s records)" % (len(rows), sizes),
           rows[:3])

    # Fragmentation: the worst size classes and redis's sites in them.
    c.pump(1.2)  # dump_min_interval
    c.click("document.querySelector('#frag-load')")
    ok = c.wait("/free in small slabs/.test(document.querySelector('#frag-state').textContent)", 60)
    rows = table_rows(c, "#flist")
    # The page's writes are of two sizes from one stack: a class may have
    # no site of its own, and then the mixed stacks are listed.
    result(ok and rows and any(f in " ".join(r) for r in rows for f in REDIS_FNS),
           "Fragmentation lists the worst classes and redis's sites in them or mixed (%d rows)" % len(rows),
           "%s; %s" % (c.ev("document.querySelector('#frag-state').textContent"), rows[:3]))

    # Allocator detail: jemalloc's JSON as a tree, filtered.
    c.click("document.querySelector('#stats-load')")
    ok = c.wait("!document.querySelector('#stree').classList.contains('hidden') && document.querySelectorAll('#stree summary').length", 30)
    result(ok, "Allocator detail loads /jemalloc/stats?format=json as a tree")
    c.click("Array.from(document.querySelectorAll('#stree summary')).find(s => s.textContent.startsWith('stats.arenas'))")
    c.pump(0.3)
    sub = c.ev("Array.from(document.querySelectorAll('#stree summary')).map(s => s.textContent).filter(t => /^(merged|bins|0) /.test(t)).length")
    result(sub and sub > 0, "opening stats.arenas shows its arenas (%s branches)" % sub)
    c.type("#stats-filter", "retained")
    c.pump(0.8)
    st_state = c.ev("document.querySelector('#stats-state').textContent")
    marks = c.ev("document.querySelectorAll('#stree mark').length")
    result(st_state.endswith("matches") and marks > 0, "the filter finds retained: %s, %d marked" % (st_state, marks))
    c.shot("stats.png")

    # The page at phone width: no sideways scrolling.
    c.ev("window.scrollTo(0, 0)")
    c.size(390, 844, True)
    c.pump(1.0)
    sw = c.ev("document.documentElement.scrollWidth")
    # What sticks out, if anything: elements past the edge that no
    # scrolling box of theirs clips.
    wide = c.ev("Array.from(document.querySelectorAll('body *')).filter(e => { if (e.getBoundingClientRect().right <= 392) return false;"
                " for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) if (getComputedStyle(p).overflowX !== 'visible') return false;"
                " return true; }).slice(0, 8).map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))")
    result(sw <= 391, "at 390 px wide nothing overflows sideways (scrollWidth %s)" % sw, wide)
    c.shot("phone.png", full=True)
    c.size(1280, 800, False)
    c.pump(0.6)
    c.type("#heap-search", "createStringObject")
    c.ev("window.scrollTo(0, 0)")
    c.pump(0.3)
    c.mouse("mouseMoved", 5, 5)
    c.shot("page.png", full=True, upto="#growth")

    # Nothing but our own origin, and no script errors or CSP refusals.
    foreign = [u for u in c.requests if not (u.startswith(ORIGIN + "/") or u.startswith("data:") or u == "about:blank")]
    result(len(c.requests) > 10 and not foreign,
           "all %d requests the page made went to %s" % (len(c.requests), ORIGIN), foreign[:10])
    paths = sorted({u[len(ORIGIN):].split("?")[0] for u in c.requests if u.startswith(ORIGIN)})
    log("paths asked for:", " ".join(paths))
    result(not c.exceptions, "the page threw no script error", c.exceptions[:5])
    result(not c.security, "no Content-Security-Policy refusal", c.security[:5])


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a broken driver is a failure, not a skip
        result(False, "the browser session ran to its end", repr(e))
        sys.exit(1)
