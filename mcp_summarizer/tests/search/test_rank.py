"""`search.rank`'s arrays rank as SQLite FTS5's `bm25()` did (the same passages, the same
scores), and `find.Indexes` keeps indexes within its bytes, each tenant within its share,
building a source once for all the searches waiting on it (issue 33 item 5)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_summarizer.search import find, rank
from mcp_summarizer.search.passages import terms
from mcp_summarizer.store.content import Source


def fts5_best(docs: Sequence[Sequence[str]], query: Sequence[str], k: int) -> list[tuple[int, float]]:
    """The reference: FTS5 in memory, each term as an ASCII code word (what `search` used)."""
    codes: dict[str, str] = {}
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE p USING fts5(t, tokenize='ascii')")
    rows = [(i, " ".join(codes.setdefault(t, f"t{len(codes)}") for t in d)) for i, d in enumerate(docs)]
    db.executemany("INSERT INTO p(rowid, t) VALUES (?, ?)", rows)
    known = [codes[t] for t in dict.fromkeys(query) if t in codes]
    if not known:
        return []
    found = db.execute(
        "SELECT rowid, bm25(p) AS s FROM p WHERE p MATCH ? ORDER BY s, rowid LIMIT ?", (" OR ".join(known), k)
    ).fetchall()
    return [(int(i), -float(s)) for i, s in found]


WORDS = st.sampled_from(["port", "node", "listen", "the", "of", "東", "017", "émigré", "ß", "z" * 64])
DOCS = st.lists(st.lists(WORDS, max_size=12), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(DOCS, st.lists(WORDS, min_size=1, max_size=5), st.integers(1, 50))
def test_ranks_as_fts5_bm25(docs: list[list[str]], query: list[str], k: int) -> None:
    assert rank.build(docs).best(query, k) == fts5_best(docs, query, k)


def test_an_index_with_no_terms_finds_nothing() -> None:
    cases: list[list[list[str]]] = [[], [[], []]]
    for docs in cases:
        index = rank.build(docs)
        assert index.size == len(docs) and index.best(["port"], 5) == []


def built(words: int) -> find._Built:
    text = "\n".join(f"line {i} of words w{i} x{i} y{i}" for i in range(words))
    return find.build_index(
        (Source(source_id="d~0123456789abcdef#0", doc_id="d", index=0, chunk_count=1, text=text),)
    )


def test_indexes_keep_within_the_total_and_each_tenants_share() -> None:
    one = built(200)
    size = one.nbytes
    indexes = find.Indexes(max_bytes=size * 5, tenant_max_bytes=size * 3)
    for i in range(4):
        indexes.put("alice", f"a{i}", one)
    assert [k for k in ("a0", "a1", "a2", "a3") if indexes.get("alice", k)] == ["a1", "a2", "a3"]
    for i in range(3):
        indexes.put("bob", f"b{i}", one)
    assert indexes.held <= size * 5
    assert indexes.get("bob", "b2") is one and indexes.get("alice", "a1") is None, (
        "the least recently used first"
    )
    indexes.put("alice", "big", built(2000))  # over alice's share: answers, is not kept
    assert indexes.get("alice", "big") is None and indexes.get("alice", "a3") is one


async def test_a_source_searched_at_once_by_many_is_indexed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = find.build_index

    def counting(excerpts: tuple[Source, ...]) -> find._Built:
        calls.append(len(excerpts))
        return real(excerpts)

    monkeypatch.setattr(find, "build_index", counting)
    indexes = find.Indexes()
    source = (Source(source_id="d~0123456789abcdef#0", doc_id="d", index=0, chunk_count=1, text="a port"),)
    got = await asyncio.gather(*(indexes.get_or_build("alice", "d", source) for _ in range(8)))
    assert len(calls) == 1 and all(g is got[0] for g in got)
    assert got[0].index.best(terms("ports"), 3)[0][0] == 0
    await indexes.get_or_build("bob", "d", source)
    assert len(calls) == 2, "another tenant's index is its own"
