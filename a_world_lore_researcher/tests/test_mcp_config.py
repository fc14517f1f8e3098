"""The MCP config loader: timeouts applied, ${VAR} substitution, clear errors."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from conftest import ThreadedApp
from mcp.server.mcpserver import MCPServer
from pydantic_ai.exceptions import ModelRetry

from world_lore_researcher.mcp_config import (
    DEFAULT_MCP_CONFIG,
    MCPConfigError,
    build_toolset,
    load_mcp_config,
)

ENV = {"MCP_WEB_SEARCH_URL": "http://search:8080/mcp", "MCP_SUMMARIZER_URL": "http://mcp-summarizer:8007/mcp"}


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "mcp_config.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def read_timeout(toolset: object) -> float | None:
    """The read timeout the toolset's FastMCP client applies to every request."""
    return toolset.client._session_kwargs["read_timeout_seconds"]  # type: ignore[attr-defined]


def test_shipped_config_and_its_timeouts_reach_the_toolsets() -> None:
    specs = load_mcp_config(DEFAULT_MCP_CONFIG, ENV)
    assert [(s.name, s.url, s.timeout) for s in specs] == [
        ("search", "http://search:8080/mcp", 30.0),
        ("summarizer", "http://mcp-summarizer:8007/mcp", 120.0),
    ]
    toolsets = [build_toolset(s, connect_timeout=4) for s in specs]
    assert [read_timeout(t) for t in toolsets] == [30.0, 120.0]
    assert [t.id for t in toolsets] == ["search", "summarizer"]
    assert toolsets[0].client._init_timeout == 4


def test_the_default_file_ships_inside_the_package() -> None:
    assert DEFAULT_MCP_CONFIG.is_file()
    assert DEFAULT_MCP_CONFIG.parent.parent.name == "world_lore_researcher"


async def test_timeout_cuts_a_slow_tool_call(tmp_path: Path) -> None:
    """Behaviour, not just the attribute: a tool slower than `timeout` fails at `timeout`."""
    server = MCPServer(name="slow")

    @server.tool(structured_output=False)
    async def slow(seconds: float) -> str:
        """Sleep."""
        await asyncio.sleep(seconds)
        return "done"

    app = ThreadedApp(server.streamable_http_app(stateless_http=True, host="127.0.0.1")).start()
    try:
        config = write(tmp_path, {"mcpServers": {"s": {"url": app.url, "timeout": 0.5}}})
        [spec] = load_mcp_config(config, {})
        toolset = build_toolset(spec)
        async with toolset:
            assert await toolset.direct_call_tool("slow", {"seconds": 0}) == "done"
            started = time.monotonic()
            with pytest.raises(ModelRetry, match="timed out"):
                await toolset.direct_call_tool("slow", {"seconds": 60})
            assert 0.4 < time.monotonic() - started < 20  # the 0.5 s timeout applied, not the 60 s
    finally:
        app.stop()


def test_defaults_and_substitution_everywhere(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "mcpServers": {
                "search": {"url": "http://${HOST:-localhost}:${PORT:-8080}/mcp", "timeout": "${T:-15}"},
                "summarizer": {"url": "${URL}", "headers": {"Authorization": "Bearer ${TOKEN:-none}"}},
            }
        },
    )
    specs = load_mcp_config(path, {"PORT": "9000", "URL": "https://s.example/mcp", "HOST": ""})
    assert specs[0].url == "http://localhost:9000/mcp"  # empty HOST takes the default, like the shell's :-
    assert specs[0].timeout == 15.0
    assert specs[1].timeout is None  # no timeout: the library default
    assert specs[1].headers == {"Authorization": "Bearer none"}


def test_missing_variable_names_it_and_the_file(tmp_path: Path) -> None:
    with pytest.raises(MCPConfigError) as err:
        load_mcp_config(DEFAULT_MCP_CONFIG, {"MCP_WEB_SEARCH_URL": "http://s/mcp"})
    message = str(err.value)
    assert "MCP_SUMMARIZER_URL" in message and str(DEFAULT_MCP_CONFIG) in message
    assert "mcpServers.summarizer.url" in message


def test_bad_json_gives_the_position(tmp_path: Path) -> None:
    path = write(tmp_path, '{"mcpServers": {"search": {"url": "http://x/mcp",}}}')
    with pytest.raises(MCPConfigError, match=r"not valid JSON: .* line 1, column \d+") as err:
        load_mcp_config(path, {})
    assert str(path) in str(err.value)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"servers": {}}, "expected"),
        ({"mcpServers": {"s": {"url": "http://x/mcp", "timeout": 0}}}, "timeout must be a positive number"),
        (
            {"mcpServers": {"s": {"url": "http://x/mcp", "timeout": "soon"}}},
            "timeout must be a positive number",
        ),
        (
            {"mcpServers": {"s": {"url": "http://x/mcp", "timeout": True}}},
            "timeout must be a positive number",
        ),
        ({"mcpServers": {"s": {"url": "ftp://x"}}}, "must be an http"),
        ({"mcpServers": {"s": {"command": "npx", "args": ["mcp-searxng"]}}}, "only HTTP servers"),
        ({"mcpServers": {"s": "http://x/mcp"}}, "must be an object"),
    ],
)
def test_invalid_entries(tmp_path: Path, data: object, expected: str) -> None:
    with pytest.raises(MCPConfigError, match=expected):
        load_mcp_config(write(tmp_path, data), {})


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(MCPConfigError, match="cannot read the MCP config"):
        load_mcp_config(tmp_path / "missing.json", {})
