"""A response body read under a cap on *decoded* bytes, decompression bombs included.

The raw bytes are decoded here (gzip or deflate, the only encodings a fetch asks for) with a
bound, so a compressed bomb stops at the cap without more than that ever held in memory.
"""

from __future__ import annotations

import zlib

import httpx

from mcp_summarizer.errors import FetchError
from mcp_summarizer.web.quoting import shown

__all__ = ["ACCEPT_ENCODING", "read_body"]

# Only encodings _Inflater decodes with a bound (httpx would also offer br/zstd).
ACCEPT_ENCODING = "gzip, deflate"


class _Inflater:
    """Bounded Content-Encoding decoder: never produces more than the bytes still allowed.

    httpx's own decoders inflate a whole network read at once (a 64 KiB gzip read can
    become 64 MB before anyone counts it); zlib's ``max_length`` lets us stop at the cap.
    """

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._zlib: zlib._Decompress | None = None
        if encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj()  # zlib-wrapped; raw deflate is tried on the first error
            self._first = True
        elif encoding not in ("", "identity"):
            raise FetchError(
                f"unsupported Content-Encoding {shown(encoding)} (we ask for gzip or deflate only)"
            )

    def feed(self, data: bytes, room: int) -> list[bytes]:
        """Decoded pieces of ``data``, in total at most ``room + 1`` bytes (one over = too large)."""
        if self._zlib is None:
            return [data[: room + 1]]
        out: list[bytes] = []
        while data and room >= 0:
            try:
                piece = self._zlib.decompress(data, room + 1)
            except zlib.error as exc:
                if self.encoding == "deflate" and getattr(self, "_first", False):
                    self._first = False
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)  # some servers send raw deflate
                    continue
                raise FetchError(f"corrupt {self.encoding} response body: {exc}") from exc
            self._first = False
            out.append(piece)
            room -= len(piece)
            data = self._zlib.unconsumed_tail
        return out


async def read_body(response: httpx.Response, max_bytes: int) -> bytes:
    """The decoded body; a :class:`FetchError` once it would exceed ``max_bytes``."""
    declared = response.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > max_bytes:
        raise FetchError(f"response too large: Content-Length {int(declared)} exceeds max_bytes={max_bytes}")
    encoding = response.headers.get("content-encoding", "").strip().lower()
    inflater = _Inflater(encoding)
    chunks: list[bytes] = []
    total = 0
    # Raw bytes, decoded here with a bound, so compressed bombs are stopped at the cap of
    # *decoded* bytes without ever holding more than that in memory.
    async for raw in response.aiter_raw():
        for piece in inflater.feed(raw, max_bytes - total):
            total += len(piece)
            if total > max_bytes:
                raise FetchError(
                    f"response too large: more than max_bytes={max_bytes} bytes (decoded) received"
                )
            chunks.append(piece)
    return b"".join(chunks)
