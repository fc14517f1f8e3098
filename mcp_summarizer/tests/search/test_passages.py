"""Passages and terms of `search`: exact slices, bounded, covering every word; terms that
find what an agent asks in words (stems, split identifiers, digits, CJK)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_summarizer.search import rank
from mcp_summarizer.search.passages import MAX_CHARS, passages, terms

TEXTS = st.text(alphabet=st.sampled_from(list("ab .。\n中 !?-_1")), max_size=3000)


@settings(max_examples=300, deadline=None)
@given(st.lists(TEXTS, min_size=1, max_size=3))
def test_passages_are_bounded_exact_slices_covering_every_character(texts: list[str]) -> None:
    cut = passages(texts)
    for p in cut:
        piece = texts[p.excerpt][p.start : p.end]
        assert piece.strip() == piece and piece, "non-blank, no blank at either end"
        assert "\n" not in piece
        assert len(piece) <= MAX_CHARS
    for i, text in enumerate(texts):
        covered = "".join(texts[i][p.start : p.end] for p in cut if p.excerpt == i)
        assert re.sub(r"\s", "", covered) == re.sub(r"\s", "", text), "every non-blank character, in order"


def test_a_long_line_is_cut_at_sentence_ends() -> None:
    line = " ".join(f"Sentence number {i} says a thing." for i in range(100))
    cut = passages([line])
    assert len(cut) > 1
    assert all(line[p.start : p.end].endswith(".") for p in cut)


def test_terms_stem_split_identifiers_and_cjk() -> None:
    assert terms("Listening ports of worker_pool_size node-017") == [
        "listen", "port", "of", "worker", "pool", "size", "node", "017",
    ]  # fmt: skip
    assert terms("東京1,400") == ["東", "京", "1", "400"]
    assert terms("?! ..") == []


def test_rank_prefers_the_passage_with_the_rare_words() -> None:
    docs = [terms(t) for t in ["the port is open", "the node 17 listens on port 20017", "the end"]]
    index = rank.build(docs)
    best = index.best(terms("which port does node 17 listen on"), 3)
    assert [i for i, _ in best][:2] == [1, 0]
    assert index.best(terms("absent words"), 3) == []
