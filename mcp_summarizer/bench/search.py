"""BM25 for `search`: its arrays (`search.rank`, since issue 33) and SQLite FTS5 in memory
(what it used before) against bm25s and rank-bm25.

Each stored source is cut into passages and terms once (`search.passages`, common to all
three, timed apart), then each implementation builds its index and answers 20 queries.
Texts: the python-docs corpus at 150k and 2M tokens, and hostile ones: one 300k-token line,
long runs of one character, CJK.

    cd mcp_summarizer && ../.venv/bin/python bench/search.py [--sizes 150k,2M]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence

import bm25s
import numpy as np
from rank_bm25 import BM25Okapi

from bench import corpus
from bench.search_size import Fts5
from mcp_summarizer.search import passages as P
from mcp_summarizer.search import rank
from mcp_summarizer.text import tokens

QUERIES = 20
K = 10


def bm25s_impl(docs: Sequence[list[str]]) -> Callable[[list[str]], list[int]]:
    bm = bm25s.BM25()
    bm.index([d or [""] for d in docs], show_progress=False)

    def query(q: list[str]) -> list[int]:
        known = [t for t in dict.fromkeys(q) if t in bm.vocab_dict]
        if not known:
            return []
        scores = bm.get_scores(known)
        return [int(i) for i in np.argsort(-scores)[:K] if scores[i] > 0]

    return query


def rank_bm25_impl(docs: Sequence[list[str]]) -> Callable[[list[str]], list[int]]:
    bm = BM25Okapi([d or [""] for d in docs])

    def query(q: list[str]) -> list[int]:
        scores = bm.get_scores(q)
        return [int(i) for i in np.argsort(-scores)[:K] if scores[i] > 0]

    return query


def arrays_impl(docs: Sequence[list[str]]) -> Callable[[list[str]], list[int]]:
    index = rank.build(docs)  # what `search` uses
    return lambda q: [i for i, _ in index.best(q, K)]


def fts5_impl(docs: Sequence[list[str]]) -> Callable[[list[str]], list[int]]:
    index = Fts5(docs)  # what `search` used before issue 33
    return lambda q: [i for i, _ in index.best(q, K)]


IMPLS = {"arrays": arrays_impl, "fts5": fts5_impl, "bm25s": bm25s_impl, "rank-bm25": rank_bm25_impl}


def hostile() -> dict[str, str]:
    rng = random.Random(3)
    words = "alpha beta gamma delta port node listens since error code".split()
    one_line = " ".join(rng.choice(words) + str(rng.randint(0, 999)) for _ in range(150_000))
    runs = "a" * 600_000 + "\n" + "." * 600_000 + "\n" + " " * 600_000 + "b" * 10
    cjk = "".join(chr(0x4E00 + rng.randint(0, 5000)) for _ in range(300_000))
    return {"one 300k-token line": one_line, "runs of one character": runs, "CJK 300k chars": cjk}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="150k,2M")
    ap.add_argument("--impls", default=",".join(IMPLS))
    args = ap.parse_args(argv)
    texts = {f"python docs {corpus.human(n)}": t for n, t in (corpus.load_sizes(args.sizes) or {}).items()}
    texts.update(hostile())
    corpus.table_row(
        "text",
        "tokens",
        "passages",
        "cut+terms s",
        *(f"{n} build s / query ms" for n in args.impls.split(",")),
    )
    corpus.table_row(*["---"] * (4 + len(args.impls.split(","))))
    rng = random.Random(5)
    for name, text in texts.items():
        t0 = time.perf_counter()
        ps = P.passages([text])
        docs = [P.terms(text[p.start : p.end]) for p in ps]
        cut = time.perf_counter() - t0
        vocab = [t for d in docs[:: max(len(docs) // 200, 1)] for t in d] or ["x"]
        queries = [[rng.choice(vocab) for _ in range(5)] for _ in range(QUERIES)]
        cells = []
        for impl in args.impls.split(","):
            t0 = time.perf_counter()
            query = IMPLS[impl](docs)
            built = time.perf_counter() - t0
            t0 = time.perf_counter()
            for q in queries:
                query(q)
            each = (time.perf_counter() - t0) / QUERIES
            cells.append(f"{built:.2f} / {each * 1000:.1f}")
        corpus.table_row(name, tokens.count(text), len(ps), f"{cut:.2f}", *cells)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
