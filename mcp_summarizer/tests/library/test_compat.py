"""The private names of the MCP SDK and httpx the service relies on, all behind
`mcp_summarizer.compat`: each seam works with the installed versions, nothing else reaches
them, and pyproject.toml pins both libraries from above."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path
from typing import Any

import anyio
import httpcore
import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer

import mcp_summarizer
from mcp_summarizer.compat.httpx_pool import set_connection_pool
from mcp_summarizer.compat.mcp_sdk import connection_closed, lowlevel_server, skip_output_schema_check

PACKAGE = Path(mcp_summarizer.__file__).parent
PRIVATE_ATTRIBUTES = (
    "_pool",
    "_lowlevel_server",
    "_prompt_manager",
    "_request_handlers",
    "_tool_output_schemas",
    "_dispatcher",
    "_closed",
)
PRIVATE_MODULE = re.compile(r"^(mcp|httpx|httpcore)(\.\w+)*\._")


def test_the_httpx_pool_is_replaced() -> None:
    transport = httpx.AsyncHTTPTransport()
    pool = httpcore.AsyncConnectionPool()
    set_connection_pool(transport, pool)
    assert transport._pool is pool


def test_a_changed_httpx_layout_fails_naming_httpx() -> None:
    class Other(httpx.AsyncBaseTransport):
        pass

    with pytest.raises(RuntimeError, match="unsupported httpx version"):
        set_connection_pool(Other(), httpcore.AsyncConnectionPool())  # type: ignore[arg-type]


def test_the_lowlevel_server_is_found() -> None:
    server = MCPServer("t")
    assert isinstance(lowlevel_server(server), Server)
    assert lowlevel_server(lowlevel_server(server)) is lowlevel_server(server)


def test_a_changed_sdk_layout_fails_naming_mcp() -> None:
    with pytest.raises(RuntimeError, match="unsupported mcp version"):
        lowlevel_server(object())  # type: ignore[arg-type]


def test_a_sessions_output_schema_check_is_skipped_per_tool() -> None:
    to_server, _ = anyio.create_memory_object_stream[Any](1)
    _, from_server = anyio.create_memory_object_stream[Any](1)
    session = ClientSession(from_server, to_server)
    skip_output_schema_check(session, "t")
    assert session._tool_output_schemas == {"t": None}
    assert connection_closed(session) is False  # not running: its reader has seen no end


def test_a_changed_session_layout_fails_naming_mcp() -> None:
    with pytest.raises(RuntimeError, match="unsupported mcp version"):
        skip_output_schema_check(object(), "t")


def test_only_compat_reaches_private_names() -> None:
    """No module outside compat/ imports a private module of mcp, httpx or httpcore, or names
    one of the private attributes the seams use."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.parent.name == "compat":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and PRIVATE_MODULE.match(node.module):
                found.append(f"{path.relative_to(PACKAGE)}: from {node.module}")
            elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_ATTRIBUTES:
                found.append(f"{path.relative_to(PACKAGE)}: .{node.attr}")
            elif isinstance(node, ast.Constant) and node.value in PRIVATE_ATTRIBUTES:
                found.append(f"{path.relative_to(PACKAGE)}: {node.value!r}")
    assert found == []


def test_both_libraries_are_pinned_from_above() -> None:
    project = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["project"]
    pins = {re.split(r"[<>=!~ \[]", dep, maxsplit=1)[0]: dep for dep in project["dependencies"]}
    assert "<" in pins["mcp"] and "<" in pins["httpx"], pins
