"""BM25 over passages: an index built once per stored source, queried many times.  Pure
(an in-memory database is a data structure here: no file, no I/O).

The index is SQLite FTS5 in memory, ranked by its `bm25()`: in the standard library, and of
the implementations measured in bench/search.py (bm25s, rank-bm25) the quickest to build,
which is what an agent's first search waits for.  Each distinct term is stored as a code
word (``t<n>``), so FTS5's own tokenizer sees plain ASCII words and the terms are exactly
`passages.terms`' (CJK characters, digits, stems), whatever the script.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

__all__ = ["PassageIndex", "build"]


class PassageIndex:
    def __init__(self, passage_terms: Sequence[Sequence[str]]) -> None:
        self.size = len(passage_terms)
        self._codes: dict[str, str] = {}
        self._lock = threading.Lock()  # one connection, used from worker threads in turn
        self._db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._db.execute("CREATE VIRTUAL TABLE p USING fts5(t, tokenize='ascii')")
        codes = self._codes
        rows = (
            (i, " ".join([codes.setdefault(t, f"t{len(codes)}") for t in terms]))
            for i, terms in enumerate(passage_terms)
        )
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT INTO p(rowid, t) VALUES (?, ?)", rows)
            self._db.execute("COMMIT")

    def best(self, query: Sequence[str], k: int) -> list[tuple[int, float]]:
        """The (passage, score) pairs of the ``k`` best passages holding any query term,
        best first (ties: earlier passage first); higher scores are better."""
        known = [self._codes[t] for t in dict.fromkeys(query) if t in self._codes]
        if not known:
            return []
        with self._lock:
            rows = self._db.execute(
                "SELECT rowid, bm25(p) AS s FROM p WHERE p MATCH ? ORDER BY s, rowid LIMIT ?",
                (" OR ".join(known), k),
            ).fetchall()
        return [(int(i), -float(s)) for i, s in rows]


def build(passage_terms: Sequence[Sequence[str]]) -> PassageIndex:
    return PassageIndex(passage_terms)
