"""Keep the C allocator from holding on to memory the service no longer uses.

glibc gives every thread that allocates its own malloc arena, up to eight per core, and an
arena keeps the pages it once needed.  The service hands megabyte strings to worker threads
(encoding, chunking, the cache's JSON, SQLite), so after a few large requests each of those
threads sits on tens of megabytes that no request holds (the bad-input suite checks the
server's RSS against its post-warm-up baseline; figures: CHANGELOG.md, 2026-11-26).  Two
arenas (as ``MALLOC_ARENA_MAX=2`` would set, a common setting for Python servers) is enough for
the few threads that allocate at once here: the encoder's work happens inside tiktoken, with
the GIL released, and in numpy buffers allocated once per request.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

__all__ = ["limit_arenas"]

_M_MMAP_THRESHOLD = -3  # malloc.h
_M_ARENA_MAX = -8
ARENAS = 2
# Allocations from this size on get their own mapping, given back to the system when freed.
# glibc raises its threshold (up to 32 MB) each time such a block is freed, after which the
# 10 MB strings of the next requests come from the heap and stay there, and the server grows
# with each further pass of large requests.  A fixed threshold keeps them in mappings.
MMAP_THRESHOLD = 1 << 20


def limit_arenas() -> bool:
    """Set glibc's arena limit to `ARENAS` and its mmap threshold to `MMAP_THRESHOLD`, unless
    MALLOC_ARENA_MAX / MALLOC_MMAP_THRESHOLD_ say otherwise (glibc has read them already).
    Call it before the service starts threads.  False where the C library is not glibc
    (musl, macOS): nothing to do there."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # glibc only  # noqa: B018
    except (OSError, AttributeError):
        return False
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    return bool(libc.mallopt(_M_ARENA_MAX, ARENAS))
