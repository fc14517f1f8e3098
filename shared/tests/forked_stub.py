"""A stand-in service for `fork_service`: answers /health, prints its environment's names and
one JSON line per request; ``fail`` prints a line and exits 2."""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
        print(json.dumps({"event": "request", "path": self.path}))

    def log_message(self, *args: object) -> None:
        pass


def main(argv: list[str]) -> None:
    print(json.dumps({"event": "starting", "argv": argv, "environ": sorted(os.environ)}))
    print(json.dumps({"event": "on stderr"}), file=sys.stderr)
    HTTPServer(("127.0.0.1", int(argv[0])), Handler).serve_forever()


def fail(argv: list[str]) -> None:
    print("bad setting: PORT")
    raise SystemExit(2)
