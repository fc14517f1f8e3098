"""English Snowball stems, right from any thread.

A stemmer object works on its word in its own fields (snowballstemmer's pure-Python one and
PyStemmer's alike): one object shared by threads returned another thread's word, or raised
IndexError, and a cache then kept the wrong stem for the process's life (issue 33 item 5).
Each thread has its own stemmer, so the cached function is pure: a stem cached is the stem.

snowballstemmer hands out PyStemmer's stemmer (the Snowball project's C build, a dependency
too) where it is installed, its own pure-Python one (the same stems) where not: 1-2 µs a word
against 110-160 µs, which decided a 2M-token `search` (bench/README.md, "search at 2M tokens").
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

import snowballstemmer  # type: ignore[import-untyped]  # it ships no type information

__all__ = ["stem"]

_LOCAL = threading.local()


def _stemmer() -> Any:
    """This thread's stemmer (made on first use: a few microseconds)."""
    stemmer = getattr(_LOCAL, "stemmer", None)
    if stemmer is None:
        stemmer = _LOCAL.stemmer = snowballstemmer.stemmer("english")
    return stemmer


@lru_cache(maxsize=200_000)  # words repeat: a source of 2M tokens has 15-150k distinct ones
def stem(word: str) -> str:
    """The Snowball English stem of a lowercase ``word`` ("listening" -> "listen")."""
    return str(_stemmer().stemWord(word))
