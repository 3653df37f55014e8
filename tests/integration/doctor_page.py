#!/usr/bin/env python3
"""The page's "Where resident memory goes" in headless Chromium.

doctor.sh starts redis-server with the agent, fragments its heap with
dirty_decay_ms:600000 so dirty pages wait, and runs this. It borrows
page.py's DevTools-pipe driver (Chrome) and its result lines, and checks:
the stacked bar's parts add up to resident and fill the bar; the worst
size classes and the advice are shown; the sampling badge shows the cost;
the section's Purge button shows the gain predicted next to the gain got.

Prints "ok<TAB>what" or "FAIL<TAB>what<TAB>detail" per check.

    python3 doctor_page.py HTTP_PORT OUT
"""
import os
import sys

HTTP, OUT = int(sys.argv[1]), sys.argv[2]
# page.py reads its arguments when imported: hand it ours.
sys.argv = [sys.argv[0], str(HTTP), "0", OUT]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import page  # noqa: E402

result, log = page.result, page.log
ORIGIN = "http://127.0.0.1:%d" % HTTP


def run(c):
    c.call("Page.navigate", {"url": ORIGIN + "/jemalloc"})
    n = c.wait("document.querySelectorAll('#dr-bar > div').length", 30)
    result(bool(n), "the bar is drawn (%s parts)" % n)
    bar = c.ev("""(() => { const b = document.querySelector('#dr-bar');
        const parts = [...b.children];
        return { resident: +b.dataset.resident,
                 sum: parts.reduce((s, p) => s + +p.dataset.bytes, 0),
                 width: b.clientWidth,
                 widths: parts.reduce((s, p) => s + p.getBoundingClientRect().width, 0),
                 keys: parts.map((p) => p.dataset.key) }; })()""")
    result(bar["resident"] > 0 and bar["sum"] == bar["resident"],
           "the bar's parts add up to resident (%s of %s bytes)" % (bar["sum"], bar["resident"]), bar)
    result(abs(bar["widths"] - bar["width"]) <= 2,
           "and fill the bar (%.1f of %d px)" % (bar["widths"], bar["width"]), bar)
    result("dirty" in bar["keys"] and "small_frag" in bar["keys"],
           "dirty pages and small-slab fragmentation are parts of it", bar["keys"])
    rows = c.ev("document.querySelectorAll('#dr-classes tbody tr').length")
    result(rows and rows > 0, "the worst size classes are listed (%s)" % rows)
    adv = c.ev("[...document.querySelectorAll('#dr-advice li')].map((l) => l.dataset.kind + ': ' + l.textContent)")
    result(any(a.startswith("purge: jmpg returns") for a in adv or []),
           "the advice says what jmpg returns", adv)
    badge = c.wait("[...document.querySelectorAll('#badges .badge')].map((b) => b.textContent)"
                   ".find((t) => /a sample every .*costs/.test(t))", 15)
    result(bool(badge), "the sampling badge shows the cost (%s)" % badge)
    c.shot("doctor.png", full=True, upto="#doctor")

    # Purge: the gain predicted next to the gain got.
    c.click("document.querySelector('#dr-purge')")
    got = c.wait("document.querySelector('#dr-purged').dataset.got", 30)
    pred = c.ev("document.querySelector('#dr-purged').dataset.predicted")
    text = c.ev("document.querySelector('#dr-purged').textContent")
    result(got is not None and pred is not None and text.startswith("predicted "),
           "Purge shows predicted and got (%s)" % text)
    ok = got is not None and pred is not None and int(pred) > 0 and \
        abs(int(pred) - int(got)) <= 0.25 * max(int(got), 1)
    result(ok, "what it got is within 25%% of what it predicted (%s, %s)" % (pred, got))
    after = c.ev("+document.querySelector('#dr-bar > [data-key=dirty]').dataset.bytes")
    result(after is not None and pred is not None and after < int(pred),
           "the bar shows the dirty pages gone (%s bytes left)" % after)
    result(not c.exceptions, "the page threw no script error", c.exceptions[:5])
    result(not c.security, "no Content-Security-Policy refusal", c.security[:5])


def main():
    c = page.Chrome(1280, 900)
    try:
        c.open(1280, 900)
        run(c)
    finally:
        c.close()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a broken driver is a failure, not a skip
        result(False, "the browser session ran to its end", repr(e))
        sys.exit(1)
