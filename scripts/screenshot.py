#!/usr/bin/env python3
"""The /jemalloc page as docs/img/page.png: screenshot.sh runs this.

    python3 screenshot.py HTTP_PORT REDIS_PORT OUT.png

It drives headless Chromium with tests/integration/page.py's Chrome
class (the DevTools protocol over a pipe) as a person would: opens the
page, lets the chart gather points, takes a dump, makes Redis grow,
loads the threads view, shows the growth since that dump, searches the flame graph for
createStringObject, and saves the page down to the Growth section.
"""
import importlib.util
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

HTTP, RPORT, OUT = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
HERE = os.path.dirname(os.path.abspath(__file__))
# page.py reads its ports and output directory from argv when loaded.
sys.argv = ["page.py", str(HTTP), str(RPORT), os.path.dirname(os.path.abspath(OUT))]
spec = importlib.util.spec_from_file_location(
    "page", os.path.join(HERE, "..", "tests", "integration", "page.py"))
page = importlib.util.module_from_spec(spec)
spec.loader.exec_module(page)
ORIGIN = "http://127.0.0.1:%d" % HTTP


def post(word):
    """A word that changes state, as the page's buttons send it; again
    after Retry-After while the page's own profiles hold the rate."""
    for _ in range(20):
        req = urllib.request.Request(ORIGIN + "/4lw/" + word, data=b"",
                                     headers={"X-Jm4lw": "1"}, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.read().decode()
        except urllib.error.HTTPError as e:
            if e.code not in (409, 429):
                raise
            time.sleep(1)
    raise RuntimeError("%s refused for 20 s" % word)


def main():
    c = page.Chrome(1280, 800)
    try:
        c.open(1280, 800)
        c.call("Page.navigate", {"url": ORIGIN + "/jemalloc"})
        if not c.wait("+document.querySelector('#chart').dataset.points >= 3", 40):
            sys.exit("screenshot.py: the page's chart did not fill in 40 s")
        print("screenshot.py: dump:", post("jmfp").strip(), file=sys.stderr)
        subprocess.run(["redis-benchmark", "-p", str(RPORT), "-q", "-n", "20000",
                        "-c", "4", "-t", "set", "-d", "4000", "-r", "1000000"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
        c.pump(1.5)  # dump_min_interval
        # The dump was posted from here, not by the page's button: its
        # Dumps list (and so Growth's pickers) is asked again, and the
        # live heap and the threads are drawn from one dump, after the
        # load, so the picture's figures agree.
        c.click("document.querySelector('#dumps-refresh')")
        c.ev("document.querySelector('#heap').dataset.loaded = ''")
        c.click("document.querySelector('#heap-refresh')")
        c.wait("document.querySelector('#heap').dataset.loaded", 60)
        c.click("document.querySelector('#th-refresh')")
        c.wait("document.querySelector('#threads').dataset.loaded", 60)
        c.click("document.querySelector('#dr-refresh')")  # the doctor's, now
        c.pump(1.5)  # that was a dump too
        c.click("document.querySelector('#g-previous')")
        c.wait("document.querySelector('#growth').dataset.loaded", 60)
        c.pump(1.0)
        c.type("#heap-search", "createStringObject")
        c.ev("window.scrollTo(0, 0)")
        c.pump(0.5)
        c.mouse("mouseMoved", 5, 5)
        path = c.shot(os.path.basename(OUT), full=True, upto="#growth")
        print("screenshot.py: wrote", path, file=sys.stderr)
    finally:
        c.close()


if __name__ == "__main__":
    main()
