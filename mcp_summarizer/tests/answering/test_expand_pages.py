"""expand's pages on a real store: every page within the client's limits, Status line
included, and the pages join into exactly the excerpt."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_summarizer.answering.expand_answer import expand
from mcp_summarizer.clients.profiles import PROFILES, Limits
from mcp_summarizer.errors import InputError
from mcp_summarizer.store.content import Source, StoreOptions
from mcp_summarizer.store.sqlite import SQLiteStore
from mcp_summarizer.tenant import LOCAL
from mcp_summarizer.text import tokens


def excerpt(seed: int) -> str:
    """Lines of varied lengths (so that pages end anywhere near their limit), a long line and
    multi-byte text among them."""
    lines = [f"{i}: " + "word " * ((i * 7 + seed) % 23) + "é" * (seed % 3) for i in range(2500)]
    lines.insert(1200, "a-long-line " * 3000)
    return "\n".join(lines)


@pytest.mark.parametrize("profile", ["codex", "copilot", "opencode", "claude-code"])
async def test_pages_fit_and_join_into_the_excerpt(tmp_path: Path, profile: str) -> None:
    store = SQLiteStore(tmp_path, StoreOptions(ttl_seconds=3600, max_bytes=100_000_000))
    limits = PROFILES[profile]
    try:
        for seed in range(5):
            text = excerpt(seed)
            sid = f"doc{seed}#0"
            await store.put(
                LOCAL, [Source(source_id=sid, doc_id=f"doc{seed}", index=0, chunk_count=1, text=text)]
            )
            pages, offset = [], 0
            while True:
                answer = (await expand(store, LOCAL, sid, 0, offset=offset, limits=limits)).text
                assert len(answer.encode()) <= (limits.bytes or 10**9), (seed, offset)
                assert answer.count("\n") + 1 <= (limits.lines or 10**9), (seed, offset)
                assert tokens.count(answer) <= (limits.tokens or 10**9), (seed, offset)
                head, _, body = answer.partition("\n\n")
                pages.append(body)
                status = head.splitlines()[-1]
                if "next offset=" not in status:
                    assert status.endswith("the end")
                    break
                offset = int(status.rsplit("next offset=", 1)[1])
            assert "".join(pages) == text
    finally:
        await store.aclose()


async def test_an_offset_past_the_end_says_so(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path, StoreOptions(ttl_seconds=3600, max_bytes=10_000_000))
    try:
        await store.put(LOCAL, [Source(source_id="d#0", doc_id="d", index=0, chunk_count=1, text="short")])
        with pytest.raises(InputError, match="offset=9 is past the end of d#0"):
            await expand(store, LOCAL, "d#0", 0, offset=9, limits=Limits(bytes=2000))
        with pytest.raises(InputError, match="offset must be 0"):
            await expand(store, LOCAL, "d#0", 0, offset=-1)
        whole = (await expand(store, LOCAL, "d#0", 0, limits=Limits(bytes=2000))).text
        assert whole.endswith("Status: whole excerpt, 1 tokens\n\nshort")
    finally:
        await store.aclose()
