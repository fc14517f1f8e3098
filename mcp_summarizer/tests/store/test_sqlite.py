"""The embedded content store on a real SQLite file: exact text, time to live, size cap with
least-recently-used eviction, messages that tell unknown from expired from evicted, and two
processes sharing one file."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

from mcp_summarizer.errors import ExpiredSource, InputError, StoreError, UnknownSource
from mcp_summarizer.store.content import Source, StoreOptions
from mcp_summarizer.store.sqlite import SQLiteStore
from mcp_summarizer.tenant import LOCAL


def src(sid: str, text: str = "text", **kw: object) -> Source:
    doc, _, index = sid.partition("#")
    return Source(source_id=sid, doc_id=doc, index=int(index), chunk_count=3, text=text, **kw)  # type: ignore[arg-type]


def store(tmp_path: Path, ttl: float = 3600, max_bytes: int = 10_000_000) -> SQLiteStore:
    return SQLiteStore(tmp_path, StoreOptions(ttl_seconds=ttl, max_bytes=max_bytes))


@pytest.mark.parametrize(
    "text",
    [
        "東京は日本の首都です。" * 100,
        "emoji 🐺🐺 and combining é",
        "windows\r\nline\rends\n",
        "x" * 1_000_000,
        "",
    ],
    ids=["cjk", "emoji", "crlf", "1MB", "empty"],
)
async def test_text_comes_back_exactly(tmp_path: Path, text: str) -> None:
    s = store(tmp_path)
    await s.put(LOCAL, [src("d#0", text, title="T", url="https://e.example/x")])
    got = await s.get(LOCAL, "d#0")
    assert got == src("d#0", text, title="T", url="https://e.example/x")
    await s.aclose()


async def test_replace_keeps_one_record_and_the_byte_count_right(tmp_path: Path) -> None:
    s = store(tmp_path)
    await s.put(LOCAL, [src("d#0", "a" * 100), src("d#1", "b" * 50)])
    await s.put(LOCAL, [src("d#0", "c" * 10)])
    assert (await s.get(LOCAL, "d#0")).text == "c" * 10
    stats = await s.stats()
    assert (stats.entries, stats.bytes) == (2, 60)


async def test_unknown_id_says_so(tmp_path: Path) -> None:
    s = store(tmp_path)
    with pytest.raises(UnknownSource, match="never stored"):
        await s.get(LOCAL, "nope#1")


@pytest.mark.parametrize(
    ("sid", "words"), [("", "empty"), ("a" * 201, "201 characters"), ("a\x00#1", "control")]
)
async def test_impossible_ids_are_refused_before_the_lookup(tmp_path: Path, sid: str, words: str) -> None:
    with pytest.raises(InputError, match=words):
        await store(tmp_path).get(LOCAL, sid)


async def test_expired_records_say_expired_and_name_the_setting(tmp_path: Path) -> None:
    s = store(tmp_path, ttl=0.3)
    await s.put(LOCAL, [src("d#0"), src("d#1")])
    assert (await s.get(LOCAL, "d#0")).text == "text"
    await asyncio.sleep(0.4)
    with pytest.raises(ExpiredSource, match=r"expired .* SOURCE_TTL_SECONDS=0\.3"):
        await s.get(LOCAL, "d#0")  # found expired on read
    await s.put(LOCAL, [src("e#0")])  # a put purges the rest
    assert (await s.stats()).entries == 1
    with pytest.raises(ExpiredSource, match="expired"):
        await s.get(LOCAL, "d#1")
    await s.put(LOCAL, [src("d#1", "again")])  # stored again: no longer a tombstone
    assert (await s.get(LOCAL, "d#1")).text == "again"


async def test_the_cap_evicts_the_least_recently_used_first(tmp_path: Path) -> None:
    s = store(tmp_path, max_bytes=300)
    await s.put(LOCAL, [src("d#0", "a" * 100), src("d#1", "b" * 100), src("d#2", "c" * 100)])
    await asyncio.sleep(0.01)
    await s.get(LOCAL, "d#0")  # d#0 is now more recent than d#1
    await s.put(LOCAL, [src("e#0", "d" * 100)])
    assert (await s.get(LOCAL, "d#0")).text == "a" * 100
    with pytest.raises(ExpiredSource, match="SOURCE_STORE_MAX_MB"):
        await s.get(LOCAL, "d#1")
    stats = await s.stats()
    assert stats.bytes <= 300


async def test_a_put_larger_than_the_cap_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"SOURCE_STORE_MAX_MB=0\.0001, so it was not stored"):
        await store(tmp_path, max_bytes=100).put(LOCAL, [src("d#0", "x" * 101)])


def test_an_unwritable_cache_dir_names_the_setting(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(Exception, match="CACHE_DIR"):
        SQLiteStore(blocker / "sub", StoreOptions(ttl_seconds=1, max_bytes=1))


async def test_two_processes_share_one_file(tmp_path: Path) -> None:
    """Another process writes 200 records in 20 transactions while this one writes and
    reads: nobody fails on a lock, and each sees the other's records."""
    writer = textwrap.dedent(
        f"""
        import asyncio
        from pathlib import Path
        from mcp_summarizer.store.sqlite import SQLiteStore
        from mcp_summarizer.tenant import LOCAL
        from mcp_summarizer.store.content import Source, StoreOptions
        async def main():
            s = SQLiteStore(Path({str(tmp_path)!r}), StoreOptions(ttl_seconds=3600, max_bytes=10**8))
            for batch in range(20):
                await s.put(LOCAL, [Source(source_id=f"other#{{n}}", doc_id="other", index=n, chunk_count=200,
                                    text="o" * 1000) for n in range(batch * 10, batch * 10 + 10)])
            await s.aclose()
        asyncio.run(main())
        """
    )
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", writer)
    s = store(tmp_path, max_bytes=10**8)
    for i in range(100):
        await s.put(LOCAL, [src(f"mine#{i}", "m" * 1000)])
        await s.get(LOCAL, f"mine#{i}")
    assert await asyncio.wait_for(proc.wait(), 60) == 0
    assert (await s.get(LOCAL, "other#199")).text == "o" * 1000
    stats = await s.stats()
    assert (stats.entries, stats.bytes) == (300, 300_000)
