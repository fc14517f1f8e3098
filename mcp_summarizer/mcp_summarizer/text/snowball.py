"""English Snowball stems, right from any thread.

A stemmer object works on its word in its own fields (snowballstemmer's pure-Python one and
PyStemmer's alike): one object shared by threads returned another thread's word, or raised
IndexError, and a cache then kept the wrong stem for the process's life (issue 33 item 5).
Each thread has its own stemmer, so the cached function is pure: a stem cached is the stem.

PyStemmer (the Snowball project's C build) rather than snowballstemmer (pure Python, the same
algorithm): 1-2 µs a word against 110-160 µs, which decided a 2M-token `search`
(bench/README.md, "search at size").
"""

from __future__ import annotations

import threading
from functools import lru_cache

import Stemmer  # type: ignore[import-not-found]  # PyStemmer: a C module, no type information

__all__ = ["stem"]

_LOCAL = threading.local()


def _stemmer() -> Stemmer.Stemmer:
    """This thread's stemmer (made on first use: a few microseconds)."""
    stemmer = getattr(_LOCAL, "stemmer", None)
    if stemmer is None:
        stemmer = _LOCAL.stemmer = Stemmer.Stemmer("english")
    return stemmer


@lru_cache(maxsize=200_000)  # words repeat: a source of 2M tokens has 15-150k distinct ones
def stem(word: str) -> str:
    """The Snowball English stem of a lowercase ``word`` ("listening" -> "listen")."""
    return str(_stemmer().stemWord(word))
