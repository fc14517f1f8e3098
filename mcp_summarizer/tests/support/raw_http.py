"""A raw HTTP/1.1 server on loopback for the fetch tests: routes that redirect, drip, send
oversized or compressed bodies, odd Locations and reason phrases, byte for byte."""

from __future__ import annotations

import asyncio
import gzip

__all__ = ["BOMB", "BOMB_DECODED", "Server"]

BOMB_DECODED = 20_000_000
BOMB = gzip.compress(b"\0" * BOMB_DECODED, compresslevel=9)


def _response(status: str, body: bytes = b"", headers: dict[str, str | None] | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Connection: close"]
    hdrs: dict[str, str | None] = {"Content-Length": str(len(body))}
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
        if path == "/slow":
            await self._slow(writer)
        elif path == "/big-chunked":
            await self._big_chunked(writer)
        else:
            writer.write(self._answer(path, headers))
        await writer.drain()

    def _answer(self, path: str, headers: dict[str, str]) -> bytes:
        """The whole response to a path answered at once."""
        redirects = {
            "/r1": ("302 Found", "/r2"),  # relative
            "/r2": ("301 Moved Permanently", f"{self.base}/ok"),
            "/loop": ("302 Found", "/loop"),
            "/to-metadata": ("302 Found", "http://169.254.169.254/latest/meta-data/"),
            "/to-loopback": ("302 Found", "http://127.0.0.1:9/ok"),
            "/to-ftp": ("302 Found", "ftp://example.com/x"),
        }
        if path in redirects:
            status, location = redirects[path]
            return _response(status, headers={"Location": location})
        if path == "/ok":
            return _response("200 OK", b"<h1>hello</h1>", {"Content-Type": "Text/HTML; charset=UTF-8"})
        if path == "/host":
            return _response("200 OK", headers.get("host", "").encode(), {"Content-Type": "text/plain"})
        if path == "/odd":
            odd_location = self.location.replace(b"{base}", self.base.encode())
            return (
                b"HTTP/1.1 302 Found\r\nConnection: close\r\nContent-Length: 0\r\nLocation: "
                + odd_location
                + b"\r\n\r\n"
            )
        if path == "/weird-reason":
            body = b"upstream secret: the database password is hunter2"
            return (
                b"HTTP/1.1 500 \tOops" + b"A" * 5000 + b" \x80\xff\r\nConnection: close\r\n"
                b"Content-Length: %d\r\n\r\n" % len(body) + body
            )
        if path == "/big-cl":
            return _response("200 OK", b"y" * 10_000)
        if path == "/gzip-bomb":
            return _response("200 OK", BOMB, {"Content-Encoding": "gzip", "Content-Type": "text/plain"})
        if path == "/gzip-small":
            return _response("200 OK", gzip.compress(b"a" * 5000), {"Content-Encoding": "gzip"})
        return _response("404 Not Found", b"nope")

    @staticmethod
    async def _slow(writer: asyncio.StreamWriter) -> None:
        writer.write(_response("200 OK", headers={"Content-Length": "1000", "Content-Type": "text/plain"}))
        for _ in range(1000):
            writer.write(b"x")
            await writer.drain()
            await asyncio.sleep(0.1)

    @staticmethod
    async def _big_chunked(writer: asyncio.StreamWriter) -> None:
        writer.write(_response("200 OK", headers={"Content-Length": None, "Transfer-Encoding": "chunked"}))
        for _ in range(10_000):  # up to 10 MB, unless the client hangs up first
            writer.write(b"3e8\r\n" + b"z" * 1000 + b"\r\n")
            await writer.drain()
        writer.write(b"0\r\n\r\n")
