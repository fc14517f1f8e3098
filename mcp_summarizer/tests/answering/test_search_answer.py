"""`answering.search_answer`: the ranked passages an answer shows, within ``max_tokens`` and
the client's bytes and lines, whole, each after its id and offset; the client's limit named
when nothing fits."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mcp_summarizer.answering.search_answer import search
from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import PROFILES, Limits
from mcp_summarizer.errors import InputError
from mcp_summarizer.store.content import Source, StoreOptions
from mcp_summarizer.store.sqlite import SQLiteStore
from mcp_summarizer.tenant import LOCAL
from mcp_summarizer.text import tokens

DOC = "guide~0123456789abcdef"
LINE = re.compile(r"^\[(guide~0123456789abcdef#\d+)\] \(offset (\d+)\) (.+)$")
TEXTS = [
    "\n".join(
        f"Step {i}: the harbour guide sets up node {i} with {'plain ' * (i % 9)}words." for i in range(200)
    ),
    "\n".join(f"Appendix {i}: a guide note on node {i}." for i in range(50)),
]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path, StoreOptions(ttl_seconds=3600, max_bytes=10_000_000))
    await opened.put(
        LOCAL,
        [
            Source(source_id=f"{DOC}#{i}", doc_id="guide", index=i, chunk_count=len(TEXTS), text=t)
            for i, t in enumerate(TEXTS)
        ],
    )
    yield opened
    await opened.aclose()


def shown(text: str) -> list[tuple[str, int, str]]:
    """The passages an answer shows, each checked to be whole: exactly its excerpt's line."""
    out = []
    for line in text.split("\n")[1:]:
        m = LINE.match(line)
        assert m, line
        sid, offset, passage = m.group(1), int(m.group(2)), m.group(3)
        body = TEXTS[int(sid.rpartition("#")[2])]
        assert body[offset : offset + len(passage)] == passage
        assert offset + len(passage) == len(body) or body[offset + len(passage)] == "\n"
        out.append((sid, offset, passage))
    return out


@pytest.mark.parametrize("profile", ["codex", "copilot", "opencode", "claude-code"])
async def test_the_passages_shown_fit_the_clients_limits(store: SQLiteStore, profile: str) -> None:
    limits = PROFILES[profile]
    for max_tokens in (200, 2000, 20_000):
        found = await search(store, LOCAL, DOC, "harbour guide node words", max_tokens, limits=limits)
        assert fit.fits(found.text, limits)
        assert tokens.count(found.text) <= limits.budget(max_tokens)
        assert found.passages == len(shown(found.text)) >= 1
        assert found.matched == 250
        assert found.text.startswith(
            f'Search "harbour guide node words" in {DOC} (2 excerpts, 250 passages): '
        )
        assert f"the {found.passages} best of 250 matching passages" in found.text


async def test_bytes_and_lines_bound_the_passages_as_tokens_do(store: SQLiteStore) -> None:
    wide = await search(store, LOCAL, DOC, "harbour guide node", 20_000)
    narrow = await search(store, LOCAL, DOC, "harbour guide node", 20_000, limits=Limits(bytes=1500, lines=6))
    assert len(wide.text.encode()) > 1500 and wide.text.count("\n") + 1 > 6
    assert len(narrow.text.encode()) <= 1500 and narrow.text.count("\n") + 1 <= 6
    assert 1 <= narrow.passages < wide.passages
    assert set(shown(narrow.text)) <= set(shown(wide.text))


async def test_no_room_names_the_clients_limit_and_no_match_says_so(store: SQLiteStore) -> None:
    with pytest.raises(InputError, match=r"^max_tokens=5 holds no matching passage: give more room"):
        await search(store, LOCAL, DOC, "harbour", 5)
    with pytest.raises(
        InputError, match=r"^max_tokens=2000 \(this client's limit: 100 bytes\) holds no matching passage"
    ):
        await search(store, LOCAL, DOC, "harbour", 2000, limits=Limits(bytes=100))
    # max_tokens is checked first, before the query and the store.
    with pytest.raises(InputError, match=r"^max_tokens must be positive, got 0"):
        await search(store, LOCAL, "", "", 0)
    none = await search(store, LOCAL, DOC, "zorblax", 2000, limits=Limits(bytes=100))
    assert "no passage holds any of these words" in none.text
    assert (none.passages, none.matched) == (0, 0)
