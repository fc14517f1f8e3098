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
