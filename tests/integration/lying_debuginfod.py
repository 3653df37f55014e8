#!/usr/bin/env python3
"""A stand-in debuginfod server that lies, for debuginfo.sh: it answers
every GET /buildid/<ID>/debuginfo with the bytes of FILE (200), whatever
ID was asked, as a misconfigured or hostile server could. A real
debuginfod cannot be made to do this (it indexes files by the build ID
in them). Prints "listening on 127.0.0.1:PORT" once bound to a port the
kernel picked; each request asked is appended to --log (one path a line).

    lying_debuginfod.py FILE [--log FILE]
"""
import http.server
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    body = b""
    log = None

    def do_GET(self):
        if self.log:
            with open(self.log, "a") as f:
                f.write(self.path + "\n")
        if not self.path.startswith("/buildid/") or \
                not self.path.endswith("/debuginfo"):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, fmt, *args):
        pass


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], "rb") as f:
        Handler.body = f.read()
    if "--log" in argv:
        Handler.log = argv[argv.index("--log") + 1]
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening on 127.0.0.1:{srv.server_address[1]}", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
