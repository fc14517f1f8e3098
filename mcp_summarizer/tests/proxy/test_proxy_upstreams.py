"""The proxy in front of MCP servers nobody here wrote, started the way users start them
(`npx -y @modelcontextprotocol/server-filesystem DIR`, the "everything" reference server over
stdio and over streamable HTTP), the proxy itself a subprocess over both of its transports,
the LLM the local test server.  Needs npx (Node.js) and the npm registry the first time."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from mcp_summarizer.text import tokens
from shared.testing import free_port, scrubbed_environ
from tests.support.fake_llm import FakeLLM
from tests.support.servers import RunningServer, start_server, stop_server
from tests.support.system_packages import needs

pytestmark = needs("npm")  # npx starts the upstream servers

FS = ["-y", "@modelcontextprotocol/server-filesystem"]
EVERYTHING = ["-y", "@modelcontextprotocol/server-everything"]
START = 180.0  # seconds: the first npx run downloads the servers


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("proxy-data")
    (root / "docs").mkdir()
    (root / "docs" / "small.txt").write_text("The small file: it fits.\n")
    big = "\n\n".join(
        f"## Gate {i}\n\nThe gate {i} of Stormwind opens at {i % 24}:00; keeper Aldric-{i} has key K{i * 7}."
        for i in range(2500)
    )
    (root / "docs" / "big.md").write_text(big)
    tree = root / "docs" / "tree"
    for i in range(40):
        sub = tree / f"zone-{i:02d}"
        sub.mkdir(parents=True)
        for j in range(15):
            (sub / f"npc-{j:02d}.md").write_text("x")
    (root / "other").mkdir()
    (root / "other" / "note.txt").write_text("another server's file\n")
    return root


@pytest.fixture(scope="module")
def everything_http() -> Iterator[str]:
    """The everything server over streamable HTTP, as its README starts it."""
    port = free_port()
    proc = subprocess.Popen(
        ["npx", *EVERYTHING, "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + START
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the everything server did not start over HTTP")
    yield f"http://127.0.0.1:{port}/mcp"
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(10)


def write_config(path: Path, servers: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


@pytest.fixture(scope="module")
def proxy(
    data: Path, everything_http: str, llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    config = write_config(
        tmp_path_factory.mktemp("proxy-config") / "servers.json",
        {
            "fs": {"command": "npx", "args": [*FS, str(data / "docs")]},
            "fs2": {"command": "npx", "args": [*FS, str(data / "other")]},
            "everything": {"command": "npx", "args": EVERYTHING, "toolOutputMaxTokens": 400},
            "remote": {"type": "http", "url": everything_http},
            "broken": {"command": str(data / "no-such-server")},
        },
    )
    env = {
        "OPENROUTER_BASE_URL": llm.base_url,
        "LLM_RETRY_BASE_SECONDS": "0",
        "UPSTREAM_START_TIMEOUT_SECONDS": "150",
    }
    server = start_server(env, ["proxy", "--config", str(config), "--transport", "streamable-http"])
    yield server
    stop_server(server)


async def call(url: str, tool: str, arguments: dict[str, Any], **kw: Any) -> types.CallToolResult:
    async with Client(url) as client:
        return await client.call_tool(tool, arguments, **kw)


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent), result
    return block.text


async def original_behind(url: str, handle: str) -> str:
    """Every part from the handle on, following each answer's Next: line, joined."""
    parts, current = [], handle
    async with Client(url) as client:
        while True:
            answer = text_of(await client.call_tool("expand", {"source_id": current}))
            head, _, body = answer.partition("\n\n")
            parts.append(body)
            following = next(
                line.split(": ", 1)[1] for line in head.splitlines() if line.startswith("Next: ")
            )
            if following.startswith("none"):
                return "".join(parts)
            current = following


async def test_every_upstream_tool_is_listed_colliding_names_prefixed(
    proxy: RunningServer, data: Path
) -> None:
    async with Client(proxy.url) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    async with Client(StdioServerParameters(command="npx", args=[*FS, str(data / "docs")])) as direct:
        upstream = {t.name: t for t in (await direct.list_tools()).tools}
    assert {"call_tool_summarized", "expand", "search"} <= set(listed)
    # fs and fs2 are the same server: every tool collides, so both are prefixed.
    assert "read_text_file" not in listed and {"fs__read_text_file", "fs2__read_text_file"} <= set(listed)
    # everything (stdio) and remote (HTTP) likewise; fs and everything share no name.
    assert {"everything__echo", "remote__echo", "everything__get-sum"} <= set(listed)
    mine, theirs = listed["fs__read_text_file"], upstream["read_text_file"]
    assert mine.annotations == theirs.annotations and mine.description == theirs.description
    properties = dict(mine.input_schema["properties"])
    assert properties.pop("mcp_summarizer_goal")["type"] == "string"  # the one argument added
    assert properties == theirs.input_schema["properties"]
    assert {k: v for k, v in mine.input_schema.items() if k != "properties"} == {
        k: v for k, v in theirs.input_schema.items() if k != "properties"
    }
    # broken never started: none of its tools, and /health says why.
    health = json.loads(urllib_get(proxy.base + "/health"))
    assert health["upstreams"]["broken"]["up"] is False and health["upstreams"]["broken"]["last_error"]
    assert all(health["upstreams"][n]["up"] for n in ("fs", "fs2", "everything", "remote"))


def urllib_get(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode())


async def test_a_small_result_passes_through_unchanged(proxy: RunningServer, data: Path) -> None:
    path = str(data / "docs" / "small.txt")
    mine = await call(proxy.url, "fs__read_text_file", {"path": path})
    async with Client(StdioServerParameters(command="npx", args=[*FS, str(data / "docs")])) as direct:
        theirs = await direct.call_tool("read_text_file", {"path": path})
    assert [b.model_dump() for b in mine.content] == [b.model_dump() for b in theirs.content]
    assert mine.structured_content == theirs.structured_content and mine.structured_content is not None
    assert mine.is_error is theirs.is_error is False


async def test_a_large_result_fits_and_its_handle_expands_to_the_exact_original(
    proxy: RunningServer, data: Path, fresh_llm: FakeLLM
) -> None:
    path = data / "docs" / "big.md"
    result = await call(
        proxy.url, "fs__read_text_file", {"path": str(path), "mcp_summarizer_goal": "who keeps gate 1999"}
    )
    text = text_of(result)
    assert not result.is_error and tokens.count(text) <= 8000
    assert text.startswith(
        f"[mcp-summarizer: this fs/read_text_file result was {tokens.count(path.read_text())} tokens"
    )
    # Its structuredContent ({"content": <the file>}) is cut too, in its share of the budget.
    assert "Its structuredContent is cut too" in text
    cut = result.structured_content or {}
    assert cut["content"].startswith("## Gate 0") and "expand(" in cut["mcp_summarizer"]
    meta = (result.meta or {})["io.github.mythline/proxy"]
    assert meta["how"] == "summarized" and meta["output_tokens"] <= 8000
    assert fresh_llm.calls > 0  # the LLM path, through the real openai client
    assert any("who keeps gate 1999" in r.user + r.system for r in fresh_llm.requests)
    assert await original_behind(proxy.url, meta["original"]) == path.read_text()
    # The handle where every summary carries it: the parts are <handle>#<n>.
    summary = (result.meta or {})["io.github.mythline/summary"]
    assert summary["handle"] == meta["original"].rpartition("#")[0] and summary["sources_stored"] is True
    assert summary["excerpts"] == meta["parts"]


async def test_an_upstream_error_is_kept(proxy: RunningServer, data: Path) -> None:
    result = await call(proxy.url, "fs__read_text_file", {"path": str(data / "docs" / "missing.md")})
    assert result.is_error and "ENOENT" in text_of(result)


async def test_json_is_cut_within_the_callers_budget_and_stays_json(proxy: RunningServer, data: Path) -> None:
    tree = data / "docs" / "tree"
    result = await call(
        proxy.url,
        "call_tool_summarized",
        {
            "server": "fs",
            "tool": "directory_tree",
            "arguments": {"path": str(tree)},
            # The server repeats the tree in structuredContent, which takes its third of the
            # budget (cut too, with its own handle): 450 leaves the text room for two zones.
            "max_output_tokens": 450,
        },
    )
    text = text_of(result)
    assert tokens.count(text) + tokens.count(json.dumps(result.structured_content)) <= 450, text
    assert "expand(" in (result.structured_content or {})["mcp_summarizer"]
    meta = (result.meta or {})["io.github.mythline/proxy"]
    assert meta["how"] == "json" and meta["input_tokens"] > 450
    cut = json.loads(text.split("\n\n", 1)[1])
    assert cut[0]["name"] == "zone-00" and cut[-1]["name"] == "zone-39"
    assert json.loads(await original_behind(proxy.url, meta["original"]))[39]["name"] == "zone-39"


async def test_images_and_structured_content_pass_through(proxy: RunningServer, everything_http: str) -> None:
    mine = await call(proxy.url, "remote__get-tiny-image", {})
    theirs = await call(everything_http, "get-tiny-image", {})
    assert [b.model_dump() for b in mine.content] == [b.model_dump() for b in theirs.content]
    assert any(isinstance(b, types.ImageContent) for b in mine.content)
    structured = await call(proxy.url, "everything__get-structured-content", {"location": "Chicago"})
    assert structured.structured_content is not None
    assert json.loads(text_of(structured)) == structured.structured_content


async def test_progress_comes_through(proxy: RunningServer) -> None:
    seen: list[tuple[float, float | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total))

    result = await call(
        proxy.url,
        "remote__trigger-long-running-operation",
        {"duration": 1, "steps": 4},
        progress_callback=progress,
    )
    assert not result.is_error and len(seen) >= 2 and seen[-1][1] == 4


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


async def test_an_upstream_killed_mid_call_is_a_clear_error_and_the_next_call_works(
    proxy: RunningServer,
) -> None:
    async def kill_everything_soon() -> None:
        await anyio.sleep(1.5)
        victims = [p for p in descendants(proxy.proc.pid) if "server-everything" in cmdline(p)]
        assert victims, "the everything server is not running under the proxy"
        for pid in victims:
            os.kill(pid, signal.SIGKILL)

    async with anyio.create_task_group() as group:
        group.start_soon(kill_everything_soon)
        result = await call(
            proxy.url, "everything__trigger-long-running-operation", {"duration": 30, "steps": 30}
        )
    assert result.is_error
    assert "MCP server 'everything' stopped while running trigger-long-running-operation" in text_of(result)
    again = await call(proxy.url, "everything__echo", {"message": "back again"})
    assert not again.is_error and text_of(again) == "Echo: back again"
    assert json.loads(urllib_get(proxy.base + "/health"))["upstreams"]["everything"]["up"] is True


async def test_an_upstream_that_exited_while_idle_is_started_again_without_losing_the_call(
    proxy: RunningServer, data: Path
) -> None:
    path = str(data / "other" / "note.txt")
    assert text_of(await call(proxy.url, "fs2__read_text_file", {"path": path})) == "another server's file\n"
    victims = [p for p in descendants(proxy.proc.pid) if str(data / "other") in cmdline(p)]
    assert victims, "fs2 is not running under the proxy"
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    await anyio.sleep(0.5)  # the proxy's reader sees the pipe close
    again = await call(proxy.url, "fs2__read_text_file", {"path": path})
    assert not again.is_error and text_of(again) == "another server's file\n"
    assert any(e["event"] == "upstream_lost" and e["server"] == "fs2" for e in proxy.events())


async def test_a_server_that_never_started_is_a_clear_error_naming_it(proxy: RunningServer) -> None:
    result = await call(proxy.url, "call_tool_summarized", {"server": "broken", "tool": "anything"})
    assert result.is_error and "MCP server 'broken'" in text_of(result)
    unknown = await call(proxy.url, "call_tool_summarized", {"server": "nope", "tool": "x"})
    assert unknown.is_error and "server must be one of" in text_of(unknown)
    typo = await call(proxy.url, "fs__read_txt_file", {"path": "/"})
    assert typo.is_error and "did you mean" in text_of(typo)


def test_every_log_line_is_json_upstream_stderr_included(proxy: RunningServer) -> None:
    events = proxy.events()  # fails on any line that is not JSON
    assert all(e["service_id"] == "mcp_summarizer" for e in events)
    assert any(e["event"] == "upstream_stderr" and e["server"] == "fs" for e in events)


async def test_the_proxy_over_stdio(data: Path, llm: FakeLLM, tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "servers.json", {"fs": {"command": "npx", "args": [*FS, str(data / "docs")]}}
    )
    env = scrubbed_environ(("OPENROUTER_", "LLM_", "MCP_SUMMARIZER_"))
    env.update(
        {
            "OPENROUTER_BASE_URL": llm.base_url,
            "CACHE_DIR": str(tmp_path / "cache"),
            "TOOL_OUTPUT_MAX_TOKENS": "2000",
        }
    )
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_summarizer", "proxy", "--config", str(config)], env=env
    )
    async with Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"read_text_file", "expand", "call_tool_summarized"} <= names  # no collision: own names
        small = await client.call_tool("read_text_file", {"path": str(data / "docs" / "small.txt")})
        assert text_of(small) == "The small file: it fits.\n"
        llm.reset()
        big = await client.call_tool("read_text_file", {"path": str(data / "docs" / "big.md")})
        assert tokens.count(text_of(big)) <= 2000
        maps = [r for r in llm.requests if "one section of a larger document" in r.system]
        assert maps, "summarized by the LLM, chunk by chunk"
        handle = (big.meta or {})["io.github.mythline/proxy"]["original"]
        first = text_of(await client.call_tool("expand", {"source_id": handle}))
        assert (data / "docs" / "big.md").read_text().startswith(first.split("\n\n", 1)[1])
        # Read again: its chunks' summaries come from the cache (CACHE_DIR above), not the LLM.
        llm.reset()
        again = await client.call_tool("read_text_file", {"path": str(data / "docs" / "big.md")})
        assert 0 < tokens.count(text_of(again)) <= 2000
        assert not [r for r in llm.requests if "one section of a larger document" in r.system], len(maps)


async def test_a_cancelled_call_is_cancelled_upstream(tmp_path: Path) -> None:
    """The client gives up on a call; the proxy's upstream call is cancelled with it, and the
    upstream hears notifications/cancelled (its tool records that it was cancelled)."""
    record = tmp_path / "record.txt"
    upstream = [sys.executable, str(Path(__file__).parent / "slow_upstream.py"), str(record)]
    config = write_config(tmp_path / "servers.json", {"slow": {"command": upstream[0], "args": upstream[1:]}})
    server = start_server({}, ["proxy", "--config", str(config), "--transport", "streamable-http"])
    try:
        async with Client(server.url) as client:
            with anyio.move_on_after(1.5) as scope:
                await client.call_tool("wait", {"seconds": 30})
            assert scope.cancelled_caught
            for _ in range(200):  # up to 10 s: the upstream's record, polled
                if record.read_text() == "cancelled":
                    break
                await anyio.sleep(0.05)
            assert record.read_text() == "cancelled"
            assert (await client.call_tool("wait", {"seconds": 0.1})).content[0].text == "waited"  # type: ignore[union-attr]
        assert json.loads(urllib_get(server.base + "/health"))["requests_in_flight"] == 0
    finally:
        stop_server(server)


async def test_an_upstream_that_hangs_is_cut_off_at_the_timeout(tmp_path: Path) -> None:
    record = tmp_path / "record.txt"
    upstream = [sys.executable, str(Path(__file__).parent / "slow_upstream.py"), str(record)]
    config = write_config(tmp_path / "servers.json", {"slow": {"command": upstream[0], "args": upstream[1:]}})
    server = start_server(
        {"UPSTREAM_TIMEOUT_SECONDS": "1"},
        ["proxy", "--config", str(config), "--transport", "streamable-http"],
    )
    try:
        started = time.monotonic()
        result = await call(server.url, "wait", {"seconds": 60})
        assert time.monotonic() - started < 10
        assert result.is_error
        assert text_of(result) == (
            "MCP server 'slow' did not answer wait within 1 s (UPSTREAM_TIMEOUT_SECONDS); "
            "the call was cancelled"
        )
        for _ in range(100):  # the upstream heard the cancel
            if record.read_text() == "cancelled":
                break
            await anyio.sleep(0.05)
        assert record.read_text() == "cancelled"
        assert text_of(await call(server.url, "wait", {"seconds": 0.1})) == "waited"
    finally:
        stop_server(server)
