"""Tests for mcp_summarizer.web.body: the body cap on decoded bytes, through fetch() against a raw
server on loopback, and the bounded inflater."""

from __future__ import annotations

import gzip
import time
import zlib

import pytest

from mcp_summarizer.errors import FetchError
from mcp_summarizer.web import body as body_mod
from mcp_summarizer.web.fetch import FetchLimits, fetch
from tests.support.raw_http import BOMB

LOCAL = FetchLimits(allow_private=True, timeout_seconds=5.0)


async def test_oversized_with_content_length_refused_up_front(server):
    with pytest.raises(FetchError, match="Content-Length 10000 exceeds max_bytes=1000"):
        await fetch(f"{server.base}/big-cl", FetchLimits(allow_private=True, max_bytes=1000))


async def test_oversized_chunked_aborts_early(server):
    start = time.monotonic()
    with pytest.raises(FetchError, match=r"more than max_bytes=2500"):
        await fetch(f"{server.base}/big-chunked", FetchLimits(allow_private=True, max_bytes=2500))
    assert time.monotonic() - start < 10.0  # a freeze, not speed


async def test_body_exactly_at_limit_is_fine(server):
    result = await fetch(f"{server.base}/big-cl", FetchLimits(allow_private=True, max_bytes=10_000))
    assert len(result.body) == 10_000


async def test_gzip_is_decoded(server):
    result = await fetch(f"{server.base}/gzip-small", LOCAL)
    assert result.body == b"a" * 5000


async def test_gzip_bomb_counts_decoded_bytes(server):
    assert len(BOMB) < 100_000  # small on the wire, so Content-Length passes the up-front check
    with pytest.raises(FetchError, match=r"max_bytes=1000000 bytes \(decoded\)"):
        await fetch(f"{server.base}/gzip-bomb", FetchLimits(allow_private=True, max_bytes=1_000_000))


def test_inflater_never_inflates_past_the_room():
    """The bomb is decoded a bounded piece at a time: memory never exceeds the cap."""
    inflater = body_mod._Inflater("gzip")
    pieces = inflater.feed(BOMB[:65536], 1000)
    assert sum(len(p) for p in pieces) == 1001  # one byte over: the caller's "too large" signal


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate, as some servers send it
        ("identity", lambda b: b),
    ],
)
def test_inflater_decodes_in_small_feeds(encoding, encode):
    data = b"Stormwind " * 5000
    wire = encode(data)
    inflater = body_mod._Inflater(encoding)
    out = b"".join(p for i in range(0, len(wire), 7) for p in inflater.feed(wire[i : i + 7], 10**9))
    assert out == data


def test_inflater_names_corruption_and_unknown_encodings():
    with pytest.raises(FetchError, match="corrupt gzip"):
        body_mod._Inflater("gzip").feed(b"not gzip at all", 1000)
    with pytest.raises(FetchError, match="unsupported Content-Encoding 'br'"):
        body_mod._Inflater("br")
