"""`search` over a 2M-token source, and where the time and memory go (issue 33 item 5).

For each text, stored in a real content store (SQLite, in memory) as 32k-character
excerpts: the first `search` (read, cut, terms, index, query, render) and the next ones,
each phase of the build timed apart, side by side with what it replaced in the same run:
terms stemmed by snowballstemmer's pure-Python stemmer (before) against PyStemmer (now), and
the index in SQLite FTS5 in memory (before) against `search.rank`'s arrays (now), with the
memory each holds (RSS growth while it is built and kept, after malloc_trim), all that a kept
index held (before: the excerpts' text, a Passage object a passage and FTS5; now: arrays),
and whether both rank the same passages.  Texts: the python-docs corpus at 2M tokens, and
2M tokens of service logs (a request id, user, latency and path a line: 150k distinct words).

    cd mcp_summarizer && ../.venv/bin/python -m bench.search_size [--sizes 2M] [--log-lines 34000]
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import gc
import random
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence

from snowballstemmer.english_stemmer import EnglishStemmer  # type: ignore[import-untyped]

from bench import corpus
from mcp_summarizer.answering.search_answer import search
from mcp_summarizer.search import find, rank
from mcp_summarizer.search import passages as P
from mcp_summarizer.store.content import Source, StoreOptions, source_id
from mcp_summarizer.store.sqlite import SQLiteStore
from mcp_summarizer.tenant import LOCAL
from mcp_summarizer.text import tokens

QUERIES = [
    "how do I open a file for reading",
    "asyncio event loop run until complete",
    "status 500 upstream node17",
]


def rss_mb() -> float:
    """Resident MB, after handing freed memory back (so it counts what is held)."""
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 1e6


def service_logs(lines: int) -> str:
    rng = random.Random(1)
    paths = ["/api/v1/items", "/api/v1/users", "/health", "/api/v2/orders"]
    return "\n".join(
        f"2026-11-30T12:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z "
        f"worker-{rng.randint(1, 64)} req={rng.getrandbits(64):016x} user=u{rng.randint(1, 10**6)} "
        f"latency={rng.randint(1, 5000)}ms status={rng.choice([200, 200, 404, 500])} "
        f"path={rng.choice(paths)}/{rng.randint(1, 10**6)} "
        f'msg="request handled by upstream node{rng.randint(1, 999)}"'
        for _ in range(lines)
    )


def excerpts(text: str, doc: str) -> list[Source]:
    parts, i = [], 0
    while i < len(text):
        j = text.find("\n", i + 32_000)
        j = len(text) if j < 0 else j + 1
        parts.append(text[i:j])
        i = j
    return [
        Source(source_id=source_id(doc, k), doc_id=doc, index=k, chunk_count=len(parts), text=t)
        for k, t in enumerate(parts)
    ]


class Fts5:
    """The index `search` used before: FTS5 in memory, each distinct term a code word."""

    def __init__(self, passage_terms: Sequence[Sequence[str]]) -> None:
        self.codes: dict[str, str] = {}
        self.db = sqlite3.connect(":memory:", isolation_level=None)
        self.db.execute("CREATE VIRTUAL TABLE p USING fts5(t, tokenize='ascii')")
        codes = self.codes
        rows = (
            (i, " ".join([codes.setdefault(t, f"t{len(codes)}") for t in terms]))
            for i, terms in enumerate(passage_terms)
        )
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO p(rowid, t) VALUES (?, ?)", rows)
        self.db.execute("COMMIT")

    def best(self, query: Sequence[str], k: int) -> list[tuple[int, float]]:
        known = [self.codes[t] for t in dict.fromkeys(query) if t in self.codes]
        if not known:
            return []
        rows = self.db.execute(
            "SELECT rowid, bm25(p) AS s FROM p WHERE p MATCH ? ORDER BY s, rowid LIMIT ?",
            (" OR ".join(known), k),
        ).fetchall()
        return [(int(i), -float(s)) for i, s in rows]


def timed(work: Callable[[], object]) -> tuple[object, float, float]:
    """(result, seconds, MB of RSS it grew by and kept)."""
    before, t0 = rss_mb(), time.perf_counter()
    out = work()
    return out, time.perf_counter() - t0, rss_mb() - before


async def run(name: str, text: str) -> None:
    doc = "big~0123456789abcdef"
    sources = excerpts(text, doc)
    store = SQLiteStore(None, StoreOptions(ttl_seconds=3600, max_bytes=10**10))
    await store.put(LOCAL, sources)
    cut = P.passages([s.text for s in sources])
    pieces = [sources[p.excerpt].text[p.start : p.end] for p in cut]
    slow = EnglishStemmer()
    old_terms = []
    t0 = time.perf_counter()
    seen: dict[str, str] = {}  # as the lru_cache did: each distinct word stemmed once
    for piece in pieces:
        words = P._TERM.findall(piece.casefold())
        old_terms.append([seen.get(w) or seen.setdefault(w, slow.stemWord(w[:64])) for w in words])
    old_s = time.perf_counter() - t0
    new_terms, new_s, _ = timed(lambda: [P.terms(p) for p in pieces])
    assert new_terms == old_terms, "PyStemmer's stems are snowballstemmer's"
    fts, fts_s, fts_mb = timed(lambda: Fts5(old_terms))
    arrays, arrays_s, arrays_mb = timed(lambda: rank.build(old_terms))
    assert isinstance(fts, Fts5) and isinstance(arrays, rank.PassageIndex)
    queries = [P.terms(q) for q in QUERIES]
    same = sum([i for i, _ in fts.best(q, 10)] == [i for i, _ in arrays.best(q, 10)] for q in queries)
    t0 = time.perf_counter()
    for q in queries:
        fts.best(q, 1000)
    fts_q = (time.perf_counter() - t0) / len(queries)
    t0 = time.perf_counter()
    for q in queries:
        arrays.best(q, 1000)
    arrays_q = (time.perf_counter() - t0) / len(queries)
    del fts, arrays
    # What a kept index held: before, the excerpts' text, a Passage object a passage and FTS5
    # (with its code words); now, `find.build_index`'s arrays.
    text_mb = sum(sys.getsizeof(s.text) for s in sources) / 1e6
    kept_before, _, before_mb = timed(lambda: (tuple(P.passages([s.text for s in sources])), Fts5(old_terms)))
    kept_now, _, now_mb = timed(lambda: find.build_index(tuple(sources)))
    del kept_before, kept_now
    indexes = find.Indexes()
    t0 = time.perf_counter()
    await search(store, LOCAL, doc, QUERIES[0], 2000, indexes=indexes)
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    for q in QUERIES:
        await search(store, LOCAL, doc, q, 2000, indexes=indexes)
    later = (time.perf_counter() - t0) / len(QUERIES)
    corpus.table_row(
        name,
        tokens.count(text),
        len(cut),
        f"{old_s:.2f} / {new_s:.2f}",
        f"{fts_s:.2f} / {arrays_s:.2f}",
        f"{fts_q * 1000:.0f} / {arrays_q * 1000:.0f}",
        f"{fts_mb:.0f} / {arrays_mb:.0f}",
        f"{text_mb + before_mb:.0f} / {now_mb:.0f} ({indexes.held / 1e6:.1f})",
        f"{same} of {len(queries)}",
        f"{first:.2f} / {later:.2f}",
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2M")
    ap.add_argument("--log-lines", type=int, default=34_000)
    args = ap.parse_args(argv)
    texts = {f"python docs {corpus.human(n)}": t for n, t in (corpus.load_sizes(args.sizes) or {}).items()}
    texts["service logs"] = service_logs(args.log_lines)
    corpus.table_row(
        "text",
        "tokens",
        "passages",
        "terms s, before / now",
        "index build s, FTS5 / arrays",
        "query ms, FTS5 / arrays",
        "index MB (RSS), FTS5 / arrays",
        "kept per source MB (RSS), before / now (nbytes)",
        "same top 10",
        "search s, first / next",
    )
    corpus.table_row(*["---"] * 10)
    for name, text in texts.items():
        asyncio.run(run(name, text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
