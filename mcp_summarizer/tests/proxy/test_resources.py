"""The proxy's stored results as MCP resources: the proxy as a subprocess over real HTTP with
AUTH_TOKENS, the tests' own stdio upstream whose one tool returns a long text.

A stored result's answer carries a ``resource_link`` to each part; each reads back
(``resources/read`` on ``summary://{handle}/{n}``) as exactly the text ``expand`` gives; an
unknown part, another tenant's part and a URI of no template of ours are clear errors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.support.servers import start_server, stop_server
from tests.support.tenants import ALICE, BOB, TOKENS, client, text_of


async def test_stored_parts_are_linked_and_read_as_resources(tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    upstream = str(Path(__file__).parent / "big_upstream.py")
    config.write_text(json.dumps({"mcpServers": {"big": {"command": sys.executable, "args": [upstream]}}}))
    env = {
        "AUTH_TOKENS": TOKENS,
        "CACHE_DIR": str(tmp_path),
        "SUMMARIZER_BACKEND": "extractive",
        "TOOL_OUTPUT_MAX_TOKENS": "500",
    }
    proxy = start_server(env, ["proxy", "--config", str(config), "--transport", "streamable-http"])
    try:
        async with client(proxy, ALICE) as alice:
            templates = await alice.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == ["summary://{handle}/{n}"]
            assert (await alice.list_resources()).resources == []
            shaped = await alice.call_tool("dump", {"lines": 3000})
            facts = (shaped.meta or {})["io.github.mythline/summary"]
            handle, parts = facts["handle"], facts["excerpts"]
            assert handle and parts > 1, facts
            links = [c for c in shaped.content if c.type == "resource_link"]
            ids = [f"{handle}#{n}" for n in range(min(parts, 20))]
            assert [link.name for link in links] == ids
            assert [str(link.uri) for link in links] == [f"summary://{handle}/{n}" for n in range(len(ids))]
            whole = ""
            for link in links:
                read = await alice.read_resource(link.uri)
                expanded = await alice.call_tool("expand", {"source_id": link.name, "max_tokens": 0})
                # expand's answer is its header lines, a blank line, then the part's exact text.
                body = text_of(expanded).split("\n\n", 1)[1]
                assert [c.text for c in read.contents] == [body]  # type: ignore[union-attr]
                whole += body
            # The parts read in order are the original's start, exactly (118 parts: 20 linked).
            original = "\n".join(
                f"line {i}: the gate {i} of Stormwind opens at {i % 24}:00." for i in range(3000)
            )
            assert len(whole) > 1000 and original.startswith(whole)
            with pytest.raises(MCPError, match=r"never stored|unknown"):
                await alice.read_resource(f"summary://{handle}/{parts + 5}")
            with pytest.raises(MCPError, match=r"summary://\{handle\}/\{n\}"):
                await alice.read_resource("file:///etc/passwd")
        async with client(proxy, BOB) as bob:
            with pytest.raises(MCPError) as refused:
                await bob.read_resource(links[0].uri)
            mine = str(refused.value)
            assert "never stored" in mine and "Stormwind" not in mine
            with pytest.raises(MCPError) as unknown:
                await bob.read_resource(f"summary://r{'0' * 16}/0")
            # Another tenant's part reads as an unknown one does (only the id differs).
            assert mine.replace(handle, "X") == str(unknown.value).replace(f"r{'0' * 16}", "X")
    finally:
        stop_server(proxy)
