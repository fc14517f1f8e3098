"""A text with no line break, space or digit (CJK written without spaces) is chunked without
searching its windows for a hinted cut: the chunks are the ones the search gives."""

from __future__ import annotations

import re

import pytest

from mcp_summarizer.summarize import chunker
from mcp_summarizer.text import tokens

CJK = "東京は日本の首都です人口は約千四百万人です"


@pytest.mark.parametrize("strategy", ["semantic", "token"])
@pytest.mark.parametrize("text", [CJK * 900, "あ" * 5000 + "。" + CJK * 300])
def test_the_same_chunks_as_with_the_search(
    monkeypatch: pytest.MonkeyPatch, text: str, strategy: str
) -> None:
    fast = chunker.chunk(text, strategy=strategy, chunk_size=512, overlap=64)
    monkeypatch.setattr(chunker, "_DIGIT", re.compile(""))  # every text "has" a hint: searched
    searched = chunker.chunk(text, strategy=strategy, chunk_size=512, overlap=64)
    assert fast == searched
    assert len(fast) > 10
    assert all(c.tokens == tokens.count(c.text) <= 512 for c in fast)


RUNS = {
    "one letter": "a" * 60_000,
    "CJK": CJK * 900,
    "dots": "." * 200_000,
    "symbols": "=-" * 40_000,
    "under a header": "# Title\n\n" + "b" * 60_000,
}


@pytest.mark.parametrize("strategy", ["semantic", "token"])
@pytest.mark.parametrize("name", list(RUNS))
def test_a_run_is_sized_off_the_one_encoding(
    monkeypatch: pytest.MonkeyPatch, name: str, strategy: str
) -> None:
    """A run with no safe cut (one letter, CJK without spaces, a line of dots) is cut inside
    one pre-tokenizer piece: its windows are sized off the one encoding, never counted again,
    and they are the chunks that counting each window gives."""
    text = RUNS[name]
    counted: list[int] = []
    count = tokens.count

    def counting(s: str) -> int:
        counted.append(len(s))
        return count(s)

    monkeypatch.setattr(tokens, "count", counting)
    fast = chunker.chunk(text, strategy=strategy, chunk_size=512, overlap=64)
    assert len(fast) > 5
    # Only header contexts are counted, and a token window that starts with the header.
    assert len([n for n in counted if n > 200]) == (name == "under a header" and strategy == "token")
    monkeypatch.setattr(chunker, "encodes_as_slice", lambda text, a, b: False)
    assert chunker.chunk(text, strategy=strategy, chunk_size=512, overlap=64) == fast
    assert all(c.tokens == count(c.text) <= 512 for c in fast)
