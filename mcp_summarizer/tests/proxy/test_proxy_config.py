"""The proxy's config: Claude Code's mcpServers format, variables expanded, mistakes named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_summarizer.errors import ConfigError
from mcp_summarizer.proxy.server_list import load_proxy_config, parse_proxy_config


def test_a_claude_code_mcp_json_reads_as_it_is() -> None:
    raw = {
        "mcpServers": {
            "fs": {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/docs"],
                "env": {"LEVEL": "${LEVEL:-info}"},
            },
            "docs": {
                "type": "http",
                "url": "https://example.invalid/mcp",
                "headers": {"Authorization": "Bearer ${TOKEN}"},
                "toolOutputMaxTokens": 4000,
            },
            "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        }
    }
    config = parse_proxy_config(raw, {"HOME": "/home/u", "TOKEN": "t0k"})
    fs, docs, old = config.servers
    assert (fs.transport, fs.command, fs.args[-1], dict(fs.env)) == (
        "stdio",
        "npx",
        "/home/u/docs",
        {"LEVEL": "info"},
    )
    assert (docs.transport, docs.headers["Authorization"], docs.tool_output_max_tokens) == (
        "http",
        "Bearer t0k",
        4000,
    )
    assert old.transport == "sse"
    assert "t0k" not in docs.describe()  # headers hold secrets: never in logs


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({}, '"mcpServers" object'),
        ({"mcpServers": {}}, '"mcpServers" object'),
        ({"mcpServers": {"a b": {"command": "x"}}}, "server name 'a b'"),
        ({"mcpServers": {"a__b": {"command": "x"}}}, "server name 'a__b' must not contain '__'"),
        ({"mcpServers": {"a_": {"command": "x"}}}, "server name 'a_' must not contain '__' nor end in '_'"),
        ({"mcpServers": {"a": {}}}, 'needs "command"'),
        ({"mcpServers": {"a": {"command": "x", "url": "http://h"}}}, "not both"),
        ({"mcpServers": {"a": {"url": "ftp://h"}}}, "http:// or https://"),
        ({"mcpServers": {"a": {"command": "x", "toolOutputMaxTokens": 10}}}, "toolOutputMaxTokens"),
        (
            {"mcpServers": {"a": {"url": "http://h", "headers": {"X": "${UNSET_VAR}"}}}},
            "${UNSET_VAR} is not set",
        ),
    ],
)
def test_mistakes_are_named(raw: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_proxy_config(raw, {})
    assert message in str(caught.value)


def test_a_file_that_is_missing_or_not_json_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the proxy config"):
        load_proxy_config(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{mcpServers: }")
    with pytest.raises(ConfigError, match="is not valid JSON"):
        load_proxy_config(bad)
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"mcpServers": {"a": {"command": "true"}}}))
    assert load_proxy_config(good, {}).servers[0].name == "a"
