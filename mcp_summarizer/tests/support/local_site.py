"""A local web site for fetch_url tests: real python-docs pages and crafted misbehaviour.

Runs a stdlib ThreadingHTTPServer on 127.0.0.1 in a thread.  Routes:

    /docs/<path>          files from the Debian python3.11-doc HTML tree (real Sphinx pages)
    /redirect/<n>         a chain of n redirects ending at /small.txt
    /to/<target>          302 to the (URL-quoted) absolute target
    /small.txt, /note.md, /data.json, /bad.json, /page.html, /cjk.txt
    /slow                 headers, then one byte every 0.5 s, forever
    /huge                 more bytes than any test's FETCH_MAX_BYTES, chunked (no Content-Length)
    /bomb                 a gzip bomb: 60 KB on the wire, 50 MB decoded
    /image.png            a PNG; /png-as-html the same bytes labelled text/html
    /hogger.pdf           a two-page PDF with a text layer and a title
    /bad-charset          text/html; charset=bogus-xyz
    /private/...          disallowed by robots.txt for every user agent
    /robots.txt           see ``robots_status``/``robots``
"""

from __future__ import annotations

import gzip
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Self

DOCS = Path("/usr/share/doc/python3.11/html")
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
BOMB = gzip.compress(b"\0" * 50_000_000, compresslevel=9)
PAGE_HTML = """<!doctype html><html><head><title>Goldshire Inn</title></head><body>
<nav><a href="/">Home</a> | <a href="/zones">Zones</a> | <a href="/login">Log in</a></nav>
<main><h1>Goldshire</h1>
<p>Goldshire is a small town in Elwynn Forest, south of Stormwind City. The Lion's Pride Inn
is run by Innkeeper Farley, and Marshal Dughan keeps the peace for the Stormwind Army.</p>
<h2>Notable NPCs</h2><ul><li>Marshal Dughan</li><li>Innkeeper Farley</li><li>Remy "Two Times"</li></ul>
</main><footer>Copyright 2026 Example Wiki. All rights reserved.</footer></body></html>"""


def make_pdf(pages: list[str], title: str | None = None) -> bytes:
    """A minimal valid PDF with one Helvetica text line per page (and a correct xref table)."""
    n_pages = len(pages)
    font = 3 + 2 * n_pages
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids ["
        + b" ".join(b"%d 0 R" % (3 + 2 * i) for i in range(n_pages))
        + b"] /Count %d >>" % n_pages,
    ]
    for i, text in enumerate(pages):
        stream = b"BT /F1 18 Tf 72 720 Td (" + text.encode("latin-1") + b") Tj ET"
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (4 + 2 * i, font)
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    if title is not None:
        objects.append(b"<< /Title (" + title.encode("latin-1") + b") >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    info = b" /Info %d 0 R" % len(objects) if title is not None else b""
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, info, xref)
    return bytes(out)


PDF = make_pdf(["Hogger is a gnoll chieftain in Elwynn Forest", "He camps near the Edge"], title="Hogger")


class Site:
    def __init__(
        self, robots: str = "User-agent: *\nDisallow: /private/\n", robots_status: int = 200
    ) -> None:
        self.robots = robots
        self.robots_status = robots_status
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.served: dict[str, tuple[bytes, str]] = {}  # a test's own pages: path -> body, type
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                site.requests.append((self.path, dict(self.headers)))
                site.route(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # A short poll interval: shutdown() waits for the loop to notice, up to one interval.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def paths(self) -> list[str]:
        return [p for p, _ in self.requests]

    # -- routes --------------------------------------------------------------------------------

    def route(self, h: BaseHTTPRequestHandler) -> None:
        path = urllib.parse.urlsplit(h.path).path
        if path == "/robots.txt":
            return self.send(h, self.robots_status, self.robots.encode(), "text/plain")
        if path.startswith("/docs/"):
            file = (DOCS / path.removeprefix("/docs/")).resolve()
            if not file.is_relative_to(DOCS) or not file.is_file():
                return self.send(h, 404, b"not found", "text/plain")
            return self.send(h, 200, file.read_bytes(), "text/html; charset=utf-8")
        if path.startswith("/redirect/"):
            n = int(path.rsplit("/", 1)[1])
            target = f"/redirect/{n - 1}" if n > 1 else "/small.txt"
            return self.send(h, 302, b"", "text/plain", {"Location": target})
        if path.startswith("/to/"):
            target = urllib.parse.unquote(path.removeprefix("/to/"))
            return self.send(h, 302, b"", "text/plain", {"Location": target})
        if path.startswith("/private/"):
            return self.send(h, 200, b"secret", "text/plain")
        static = {
            "/small.txt": (
                b"Elwynn Forest is a zone in the Eastern Kingdoms.\n",
                "text/plain; charset=utf-8",
            ),
            "/note.md": (b"# Notes\n\n- Hogger is a gnoll.\n", "text/markdown"),
            "/data.json": (b'{"zone": "Elwynn Forest", "level": [1, 10]}', "application/json"),
            "/bad.json": (b'{"zone": "Elwynn', "application/json"),
            "/page.html": (PAGE_HTML.encode(), "text/html; charset=utf-8"),
            "/cjk.txt": (("艾尔文森林是暴风城南边的区域。" * 12).encode(), "text/plain; charset=utf-8"),
            "/image.png": (PNG, "image/png"),
            "/hogger.pdf": (PDF, "application/pdf"),
            "/png-as-html": (PNG, "text/html"),
            "/bad-charset": (PAGE_HTML.encode(), "text/html; charset=bogus-xyz"),
        }
        if path in self.served or path in static:
            body, ctype = self.served.get(path) or static[path]
            return self.send(h, 200, body, ctype)
        if path == "/bomb":
            return self.send(h, 200, BOMB, "text/plain", {"Content-Encoding": "gzip"})
        if path == "/slow":
            return self.drip(h)
        if path == "/huge":
            return self.chunked(h, b"x" * 65536, 1000)
        return self.send(h, 404, b"not found", "text/plain")

    @staticmethod
    def send(
        h: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None
    ) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)

    @staticmethod
    def drip(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", "1000000")
        h.end_headers()
        try:
            for _ in range(600):
                h.wfile.write(b"a")
                h.wfile.flush()
                time.sleep(0.5)
        except OSError:
            pass  # the client gave up, as it should

    @staticmethod
    def chunked(h: BaseHTTPRequestHandler, piece: bytes, times: int) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        try:
            for _ in range(times):
                h.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            h.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass
