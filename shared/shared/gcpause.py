"""Hold off the cyclic garbage collector while CPU-heavy work builds millions of objects.

A worker thread that parses a megabyte into millions of small tuples makes the collector run
full passes over all of them (CPython triggers one as the long-lived objects grow by a
quarter), and each pass holds the GIL for about 100 ms: the event loop, and /health with it,
stops for that long (measured: 94-96 ms stalls on a megabyte of headings or table rows, none
with the collector off).  Reference counting still frees everything as usual; only cycles
wait until the last such block ends, when the collector is turned back on.  Nested and
concurrent blocks share one count, so the collector is on again only when all have ended,
and never turned on if it was off before the first.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["no_gc_pauses"]

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def no_gc_pauses() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
