"""The content store and CACHE_DIR through the real server over HTTP (the real MCP client):
a summary whose sources could not be stored says so, reads work on a full disk, the Redis
store keeps its cap across requests, CACHE=off never touches CACHE_DIR, an unusable CACHE_DIR
is one warning, and a store file deleted under the service is made again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from mcp_summarizer.store.content import StoreOptions
from mcp_summarizer.store.redis import RedisStore
from mcp_summarizer.text import tokens
from shared.testing import free_port, scrubbed_environ, start_service
from tests.support.redis_server import RedisServer
from tests.support.servers import RunningServer, start_server, stop_server
from tests.support.system_packages import needs

FACTS = "io.github.mythline/summary"
EMBEDDED = {"SUMMARIZER_BACKEND": "extractive"}


def doc(name: str, paragraphs: int = 3) -> dict[str, str]:
    text = "\n\n".join(
        f"{name} paragraph {p}: Marshal Dughan of {name} counts {p * 7} wolves in year {600 + p}."
        for p in range(paragraphs)
    )
    return {"id": name, "text": text, "title": name}


async def call(server: RunningServer, tool: str, **args: Any) -> CallToolResult:
    async with Client(server.url) as client:
        return await client.call_tool(tool, args)


def text_of(result: CallToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


async def summarize_documents(
    server: RunningServer, *docs: dict[str, str], budget: int = 400
) -> CallToolResult:
    result = await call(server, "summarize_documents", documents=list(docs), max_output_tokens=budget)
    assert not result.is_error, text_of(result)
    return result


def first_id(result: CallToolResult, name: str) -> str:
    """The id of document ``name``'s first excerpt (``<name>~<version>#0``), as the index lists it."""
    assert result.structured_content is not None
    ids = [sid for c in result.structured_content["index"]["clusters"] for sid in c["source_ids"]]
    found = [sid for sid in ids if sid.startswith(name + "~") and sid.endswith("#0")]
    assert len(found) == 1, ids
    return found[0]


def no_traceback(server: RunningServer) -> None:
    assert not any("Traceback" in line for line in server.lines), server.lines[-20:]


async def test_sources_over_the_cap_are_not_stored_and_the_answer_says_so() -> None:
    server = start_server({**EMBEDDED, "CACHE": "on", "SOURCE_STORE_MAX_MB": "0.001"})  # 1,000 bytes
    try:
        result = await summarize_documents(server, doc("big", 40), budget=300)
        text = text_of(result)
        assert result.meta is not None and result.meta[FACTS]["sources_stored"] is False
        assert text.startswith("[sources not stored (over SOURCE_STORE_MAX_MB)"), text[:200]
        assert tokens.count(text) <= 300, "the notice line is counted in the budget"
        opened = await call(server, "expand", source_id=first_id(result, "big"))
        assert opened.is_error and "never stored" in text_of(opened)
        small = await summarize_documents(server, doc("small", 1))
        assert small.meta is not None and small.meta[FACTS]["sources_stored"] is True
        assert not text_of(small).startswith("[sources not stored")
        assert not (await call(server, "expand", source_id=first_id(small, "small"))).is_error
        no_traceback(server)
    finally:
        stop_server(server)


@needs("redis-server")
async def test_the_redis_store_keeps_its_cap_over_many_requests() -> None:
    """Issue 21, item 5: with a 5 MB cap the Redis store held 15.2 MB, every document still
    expandable.  Here: a 20 kB cap, 40 documents of about 2 kB, one request each."""
    redis = RedisServer().start()
    server = start_server({**EMBEDDED, "REDIS_URL": redis.url, "SOURCE_STORE_MAX_MB": "0.02"})
    store = RedisStore(redis.url, StoreOptions(ttl_seconds=3600, max_bytes=20_000))
    try:
        ids = []
        for i in range(40):
            result = await summarize_documents(server, doc(f"page{i}", 20), budget=200)
            assert result.meta is not None and result.meta[FACTS].get("sources_stored") is not False
            ids.append(first_id(result, f"page{i}"))
        stats = await store.stats()
        assert 0 < stats.bytes <= 20_000, stats
        assert not (await call(server, "expand", source_id=ids[39])).is_error
        first = await call(server, "expand", source_id=ids[0])
        assert first.is_error and "SOURCE_STORE_MAX_MB" in text_of(first)
    finally:
        await store.aclose()
        stop_server(server)
        redis.stop()


async def test_cache_off_never_touches_cache_dir(tmp_path: Path) -> None:
    folder = tmp_path / "never"
    server = start_server({**EMBEDDED, "CACHE": "off", "CACHE_DIR": str(folder)})
    try:
        result = await summarize_documents(server, doc("elwynn"))
        opened = await call(server, "expand", source_id=first_id(result, "elwynn"))
        assert not opened.is_error, "sources are kept in memory"
        assert not folder.exists()
        no_traceback(server)
    finally:
        stop_server(server)


@pytest.mark.parametrize("cache", ["on", "off"])
async def test_an_unusable_cache_dir_is_one_warning_not_a_traceback(tmp_path: Path, cache: str) -> None:
    """Issue 21, item 7: a 15-line traceback at start-up, even with CACHE=off.  (A path under
    a regular file: unusable even for root, whom permissions do not stop.)"""
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    server = start_server({**EMBEDDED, "CACHE": cache, "CACHE_DIR": str(blocker / "cache")})
    try:
        result = await summarize_documents(server, doc("elwynn"))
        assert not (await call(server, "expand", source_id=first_id(result, "elwynn"))).is_error
        warnings = server.events("cache_dir_unusable")
        assert len(warnings) == (1 if cache == "on" else 0), server.lines
        if warnings:
            assert "CACHE_DIR" in warnings[0]["reason"] and warnings[0]["level"] == "warning"
        no_traceback(server)
    finally:
        stop_server(server)


async def test_a_store_file_deleted_under_the_service_is_made_again(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    env = {**EMBEDDED, "CACHE": "on", "CACHE_DIR": str(folder)}
    server = start_server(env)
    try:
        before = first_id(await summarize_documents(server, doc("before")), "before")
        for name in os.listdir(folder):
            if name.startswith("content.sqlite3"):
                os.remove(folder / name)
        after = first_id(await summarize_documents(server, doc("after")), "after")
        assert (folder / "content.sqlite3").exists()
        assert server.wait_for_event("store_file_recreated", 1)[0]["what"] == "content store"
        opened = await call(server, "expand", source_id=before)
        assert opened.is_error and "never stored" in text_of(opened)
    finally:
        stop_server(server)
    # Another process on the same folder reads what was stored after the deletion: it is on disk.
    again = start_server(env)
    try:
        opened = await call(again, "expand", source_id=after)
        assert not opened.is_error, text_of(opened)
    finally:
        stop_server(again)


def fill(path: Path) -> None:
    """Write zeros to ``path`` until its disk is full (OSError: no space left)."""
    with path.open("wb") as f:
        while True:
            f.write(b"\0" * 65536)
            f.flush()


def _can_mount() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        return False
    probe = subprocess.run(
        [unshare, "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"], capture_output=True, check=False
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _can_mount(), reason="needs root and mount namespaces (unshare -m) for a small tmpfs")
async def test_a_full_disk_fails_no_read_and_the_summary_says_its_sources_are_not_stored() -> None:
    """Issue 21, item 6, on a real full disk: the server runs in its own mount namespace with
    a 1 MB tmpfs as CACHE_DIR, which the test fills through /proc/<pid>/root.  expand of an
    excerpt stored before still opens; a summary whose excerpts could not be stored says so."""
    folder = tempfile.mkdtemp(prefix="summarizer-full-")
    port = free_port()
    env = scrubbed_environ(("OPENROUTER_", "LLM_", "MCP_SUMMARIZER_"))
    env.update({**EMBEDDED, "MCP_SUMMARIZER_PORT": str(port), "CACHE": "on", "CACHE_DIR": folder})
    script = f'mount -t tmpfs -o size=1m tmpfs "{folder}" && exec "{sys.executable}" -m mcp_summarizer'
    server = start_service(["unshare", "-m", "sh", "-c", script], env, port)
    try:
        early = first_id(await summarize_documents(server, doc("early")), "early")
        filler = Path(f"/proc/{server.proc.pid}/root{folder}/filler")
        with pytest.raises(OSError, match="No space left"):
            fill(filler)
        for _ in range(3):  # each read's bookkeeping write meets the full disk
            opened = await call(server, "expand", source_id=early)
            assert not opened.is_error, text_of(opened)
            assert "early paragraph 0" in text_of(opened)
        result = await call(server, "summarize_documents", documents=[doc("late", 30)], max_output_tokens=300)
        assert not result.is_error, text_of(result)
        assert result.meta is not None and result.meta[FACTS]["sources_stored"] is False
        assert text_of(result).startswith("[sources not stored (the content store failed)")
        assert tokens.count(text_of(result)) <= 300
        os.remove(filler)  # room again: the store works again
        result = await summarize_documents(server, doc("later"))
        assert result.meta is not None and result.meta[FACTS]["sources_stored"] is True
        no_traceback(server)
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
