"""BM25 over passages: an index built once per stored source, queried many times.  Pure.

The index is an inverted index in numpy arrays: the distinct terms sorted and packed into
one byte string (looked up by binary search: a query has a few words), and for each term the
passages holding it and how often, one slice of two arrays.  At 2M tokens that is ~10 MB
where SQLite FTS5 in memory (used before, with a dict of its code words) took 55-65 MB and
three times as long to build (bench/README.md, "search at size"); a query adds up a few
slices.  Scores are FTS5's `bm25()`: k1 1.2, b 0.75, an idf of at least 1e-6, the query's
distinct terms in order, so the ranking is the one FTS5 gave.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import chain

import numpy as np
import numpy.typing as npt

__all__ = ["PassageIndex", "build"]

K1 = 1.2
B = 0.75
_MIN_IDF = 1e-6  # FTS5's: a term in over half the passages still counts, a little


class PassageIndex:
    def __init__(self, passage_terms: Sequence[Sequence[str]]) -> None:
        n = self.size = len(passage_terms)
        lengths = np.fromiter(map(len, passage_terms), dtype=np.int64, count=n)
        # A term's number is its place in code-point order, which is the UTF-8 bytes' order.
        words = sorted(dict.fromkeys(chain.from_iterable(passage_terms)))
        number = {w: i for i, w in enumerate(words)}
        flat = np.fromiter(
            map(number.__getitem__, chain.from_iterable(passage_terms)),
            dtype=np.int64,
            count=int(lengths.sum()),
        )
        del number
        encoded = [w.encode("utf-8", "surrogatepass") for w in words]
        self._blob = b"".join(encoded)
        self._starts = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=self._starts[1:])
        # (term, passage) pairs, sorted by term then passage: one slice of each array per term.
        width = max(n, 1)
        pairs, counts = np.unique(flat * width + np.repeat(np.arange(n), lengths), return_counts=True)
        self._passages = (pairs % width).astype(np.int32)
        self._tf = counts.astype(np.uint16)  # a passage holds at most MAX_CHARS terms
        self._first = np.searchsorted(pairs // width, np.arange(len(words) + 1))
        mean = float(lengths.mean()) if n else 0.0
        # BM25's length normalization of each passage, computed once.
        self._norm = K1 * (1 - B + B * lengths / mean) if mean else np.full(n, K1)

    @property
    def nbytes(self) -> int:
        """The memory the index holds (its arrays and the packed terms)."""
        arrays = (self._starts, self._passages, self._tf, self._first, self._norm)
        return len(self._blob) + sum(a.nbytes for a in arrays)

    def _term(self, word: str) -> int:
        """The term's number, -1 if no passage holds it (binary search in the packed terms)."""
        key, blob, starts = word.encode("utf-8", "surrogatepass"), self._blob, self._starts
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if blob[starts[mid] : starts[mid + 1]] < key:
                lo = mid + 1
            else:
                hi = mid
        return lo if lo < len(starts) - 1 and blob[starts[lo] : starts[lo + 1]] == key else -1

    def best(self, query: Sequence[str], k: int) -> list[tuple[int, float]]:
        """The (passage, score) pairs of the ``k`` best passages holding any query term,
        best first (ties: earlier passage first); higher scores are better."""
        known = [t for t in (self._term(w) for w in dict.fromkeys(query)) if t >= 0]
        if not known:
            return []
        scores = np.zeros(self.size, dtype=np.float64)
        for t in known:
            a, b = int(self._first[t]), int(self._first[t + 1])
            held = b - a
            idf = max(math.log((self.size - held + 0.5) / (held + 0.5)), _MIN_IDF)
            where, tf = self._passages[a:b], self._tf[a:b].astype(np.float64)
            scores[where] += idf * ((tf * (K1 + 1)) / (tf + self._norm[where]))  # as FTS5 does it
        matched: npt.NDArray[np.int32] = np.unique(
            np.concatenate([self._passages[self._first[t] : self._first[t + 1]] for t in known])
        )
        order = np.lexsort((matched, -scores[matched]))[:k]
        return [(int(matched[i]), float(scores[matched[i]])) for i in order]


def build(passage_terms: Sequence[Sequence[str]]) -> PassageIndex:
    return PassageIndex(passage_terms)
