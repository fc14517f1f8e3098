"""cl100k_base token counting that never touches the network (`shared.tokens` reads and checks
the vocabulary and holds the helpers every service uses), plus the numpy helpers the
chunker's one-pass sizing needs.

Long text is encoded in `shared.tokens.pieces` (exact ids; see there): each tiktoken call
releases the GIL while it works, and here its ids come back as a numpy buffer, never as a
Python int per token, so no step holds the GIL for long on a megabyte (the service must
keep answering /health meanwhile).  Because the calls release the GIL, the pieces of one long
text are encoded by two threads at once, in about half the time on two cores; a machine with
one core encodes them in turn.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Generator, Iterable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from itertools import islice

import numpy as np
import numpy.typing as npt
import tiktoken

from shared.tokens import CL100K_SPECIAL, PIECE_CHARS, cl100k, encode, pieces, ranks, truncate, utf8_safe
from shared.tokens import count as _count_short

__all__ = [
    "arrays_ahead",
    "count",
    "encode",
    "encode_array",
    "encoding",
    "pieces",
    "token_byte_lengths",
    "truncate",
]


def encoding() -> tiktoken.Encoding:
    return cl100k()


def _array(piece: str) -> npt.NDArray[np.uint32]:
    return cl100k().encode_to_numpy(utf8_safe(piece), disallowed_special=())


_THREADS = min(2, os.cpu_count() or 1)
_PARALLEL_PIECES = 8  # fewer pieces are not worth handing to the pool
_AHEAD = 4 * _THREADS  # pieces a streamed text has queued for encoding at most


@cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=_THREADS, thread_name_prefix="encode")


def _arrays(text: str) -> list[npt.NDArray[np.uint32]]:
    """The ids of ``text``'s pieces, in order; by two threads when it is long."""
    parts = list(pieces(text))
    if _THREADS < 2 or len(parts) < _PARALLEL_PIECES:
        return [_array(piece) for piece in parts]
    return list(_pool().map(_array, parts))


def arrays_ahead(parts: Iterable[str]) -> Generator[tuple[str, npt.NDArray[np.uint32]]]:
    """Each of ``parts`` with its ids, in order, as soon as it is encoded: the pool works ahead
    of the reader (the streaming chunker reads a piece while the next ones are being encoded),
    `_AHEAD` pieces at most, so that texts read at the same time (a summary's chunks and its
    source's excerpts, two requests) share the pool instead of the later one waiting for
    all of the earlier; ``parts`` is read as far ahead, no further (`pieces` of a long text
    are cut as they are needed).  Closing the iterator early cancels what was not started."""
    rest = iter(parts)
    if _THREADS < 2:
        yield from ((piece, _array(piece)) for piece in rest)
        return
    ahead = deque((piece, _pool().submit(_array, piece)) for piece in islice(rest, _AHEAD))
    try:
        while ahead:
            piece, future = ahead.popleft()
            for more in islice(rest, 1):
                ahead.append((more, _pool().submit(_array, more)))
            yield piece, future.result()
    finally:
        for _, future in ahead:
            future.cancel()


def encode_array(text: str) -> npt.NDArray[np.uint32]:
    """Token ids as a uint32 array (no Python list: cheaper for megabyte inputs)."""
    if len(text) <= PIECE_CHARS:
        return _array(text)
    return np.concatenate(_arrays(text))


def count(text: str) -> int:
    """``shared.tokens.count``, without a Python list of ids for a long text."""
    if len(text) <= PIECE_CHARS:
        return _count_short(text)
    return sum(map(len, _arrays(text)))


@cache
def token_byte_lengths() -> npt.NDArray[np.int64]:
    """UTF-8 byte length of every token id, so token offsets can be computed with numpy."""
    lengths = np.zeros(cl100k().n_vocab, dtype=np.int64)
    for token_bytes, rank in ranks().items():
        lengths[rank] = len(token_bytes)
    for special, rank in CL100K_SPECIAL.items():
        lengths[rank] = len(special.encode())
    return lengths
