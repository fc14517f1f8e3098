"""A raw HTTP/1.1 server on loopback for the fetch tests: routes that redirect, drip, send
oversized or compressed bodies, odd Locations and reason phrases, byte for byte."""

from __future__ import annotations

import asyncio
import gzip

__all__ = ["BOMB", "BOMB_DECODED", "Server"]

BOMB_DECODED = 20_000_000
BOMB = gzip.compress(b"\0" * BOMB_DECODED, compresslevel=9)


def _response(status: str, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Connection: close"]
    hdrs = {"Content-Length": str(len(body))}
    hdrs.update(headers or {})
    lines += [f"{k}: {v}" for k, v in hdrs.items() if v is not None]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class Server:
    """Tiny HTTP/1.1 server: one request per connection, routes by path."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.port = 0
        self.paths: list[str] = []
        self.location = b""  # what /odd sends as its Location, byte for byte
        self.headers: list[dict[str, str]] = []
        self._server: asyncio.Server | None = None

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            path = request_line.split(" ")[1]
            headers = {
                k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines if h)
            }
            self.paths.append(path)
            self.headers.append(headers)
            await self._route(path, headers, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def _route(self, path: str, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        w = writer.write
        if path == "/ok":
            w(_response("200 OK", b"<h1>hello</h1>", {"Content-Type": "Text/HTML; charset=UTF-8"}))
        elif path == "/host":
            w(_response("200 OK", headers.get("host", "").encode(), {"Content-Type": "text/plain"}))
        elif path == "/r1":
            w(_response("302 Found", headers={"Location": "/r2"}))  # relative
        elif path == "/r2":
            w(_response("301 Moved Permanently", headers={"Location": f"{self.base}/ok"}))
        elif path == "/loop":
            w(_response("302 Found", headers={"Location": "/loop"}))
        elif path == "/to-metadata":
            w(_response("302 Found", headers={"Location": "http://169.254.169.254/latest/meta-data/"}))
        elif path == "/to-loopback":
            w(_response("302 Found", headers={"Location": "http://127.0.0.1:9/ok"}))
        elif path == "/odd":
            w(b"HTTP/1.1 302 Found\r\nConnection: close\r\nContent-Length: 0\r\nLocation: ")
            w(self.location.replace(b"{base}", self.base.encode()) + b"\r\n\r\n")
        elif path == "/weird-reason":
            body = b"upstream secret: the database password is hunter2"
            w(b"HTTP/1.1 500 \tOops" + b"A" * 5000 + b" \x80\xff\r\nConnection: close\r\n")
            w(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        elif path == "/to-ftp":
            w(_response("302 Found", headers={"Location": "ftp://example.com/x"}))
        elif path == "/slow":
            w(_response("200 OK", headers={"Content-Length": "1000", "Content-Type": "text/plain"}))
            for _ in range(1000):
                w(b"x")
                await writer.drain()
                await asyncio.sleep(0.1)
        elif path == "/big-cl":
            w(_response("200 OK", b"y" * 10_000))
        elif path == "/big-chunked":
            w(_response("200 OK", headers={"Content-Length": None, "Transfer-Encoding": "chunked"}))
            for _ in range(10_000):  # up to 10 MB, unless the client hangs up first
                w(b"3e8\r\n" + b"z" * 1000 + b"\r\n")
                await writer.drain()
            w(b"0\r\n\r\n")
        elif path == "/gzip-bomb":
            w(_response("200 OK", BOMB, {"Content-Encoding": "gzip", "Content-Type": "text/plain"}))
        elif path == "/gzip-small":
            w(_response("200 OK", gzip.compress(b"a" * 5000), {"Content-Encoding": "gzip"}))
        else:
            w(_response("404 Not Found", b"nope"))
        await writer.drain()
