#!/usr/bin/env python3
"""The /jemalloc page's leak parts in Chromium, through page.py's
driver: it opens with the module's history ring drawn, and its Leaks
section draws the leak of tests/host/leak_host (not its cache), each
card linking the flame graph of its growth. Real time, not virtual: a
scheduled dump may hold the worker, and the page's retries wait it out;
the section's "Look again" is pressed while it says a dump is running.

    leak_page.py HTTP_PORT OUT_DIR HISTORY_ROWS LEAK CACHE

Prints page.py's "ok<TAB>what" / "FAIL<TAB>what<TAB>detail" lines.
"""
import os
import sys

HTTP, OUT, ROWS, LEAK, CACHE = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
sys.argv = [sys.argv[0], HTTP, "0", OUT]  # page.py reads its own at import
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import page  # noqa: E402

from page import Chrome, result  # noqa: E402


def check(c):
    c.call("Page.navigate", {"url": page.ORIGIN + "/jemalloc"})
    pts = c.wait("+document.querySelector('#chart').dataset.points >= %d && "
                 "+document.querySelector('#chart').dataset.points" % ROWS, 30)
    result(pts, "the chart opens with the history ring (%s points, %d rows)" % (pts, ROWS))
    note = c.ev("document.querySelector('#figs-note').textContent")
    result("history" in note, "the figures' note says the history is drawn", note)
    cards = None
    for _ in range(20):
        cards = c.wait("document.querySelectorAll('#leaks-list .leak').length && "
                       "Array.from(document.querySelectorAll('#leaks-list .leak')).map(e => e.dataset.function)", 5)
        if cards:
            break
        c.ev("document.querySelector('#leaks-refresh').click()")
    result(cards and cards[0] == LEAK, "the Leaks section draws the leak first", cards)
    result(cards and CACHE not in cards, "and not the cache", cards)
    href = c.ev("(a => a && a.getAttribute('href'))(document.querySelector('#leaks-list .leak a'))") or ""
    result(href.startswith("/jemalloc/dump?format=svg&name=") and "&base=" in href,
           "the leak links its growth's flame graph", href)
    svg = c.ev("!!document.querySelector('#leaks-list .leak svg polyline')")
    result(svg, "each card draws the suspect's bytes over the dumps")
    result(not c.exceptions, "no script error", c.exceptions[:3])


def main():
    c = Chrome(1280, 800)
    try:
        c.open(1280, 800)
        check(c)
    finally:
        c.close()


if __name__ == "__main__":
    try:
        main()
    except Exception as e:
        result(False, "the browser session ran to its end", repr(e))
        sys.exit(1)
