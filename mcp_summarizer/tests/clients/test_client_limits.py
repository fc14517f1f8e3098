"""Golden tests: every answer within what the asking client keeps, over real HTTP, for the
service's own tools and through the proxy.

The client names itself as Claude Code, Codex, Copilot CLI and OpenCode do (clientInfo.name),
with the real MCP client, against the server started as users start it; the summarizer is
the embedded one (no LLM needed).  The text is a long reference page: 2,100 lines, ~110 KB,
~34,000 tokens, asked for with a token budget (30,000) that alone fits none of them.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from mcp_summarizer.text import tokens
from tests.clients.doc_upstream import reference
from tests.support.documents import forty_documents
from tests.support.fake_llm import FakeLLM, error
from tests.support.servers import RunningServer, start_server, stop_server

REFERENCE = reference(150)
BUDGET = 30_000
INLINE = "anthropic/maxResultSizeChars"

# clientInfo.name as each client sends it, and what it keeps (clients.profiles cites where
# each limit is documented): (tokens, bytes, lines).
CLIENTS: dict[str, tuple[int | None, int | None, int | None]] = {
    "claude-code": (10_000, None, None),
    "codex-mcp-client": (None, 10 * 1024, 256),
    "github-copilot-developer": (None, 10_000, None),
    "opencode": (None, 50 * 1024, 2000),
}


# What the service promises each (README, "Answers sized to the client"): under or at what
# the client keeps.
PROMISED: dict[str, tuple[int | None, int | None, int | None]] = {
    "claude-code": (10_000, None, None),
    "codex-mcp-client": (None, 10_000, 256),
    "github-copilot-developer": (None, 10_000, None),
    "opencode": (None, 51_200, 2000),
}


def within(
    text: str, client: str, limits: dict[str, tuple[int | None, int | None, int | None]] = CLIENTS
) -> None:
    max_tokens, max_bytes, max_lines = limits[client]
    size, lines = len(text.encode()), text.count("\n") + 1
    if max_bytes is not None:
        assert size <= max_bytes, f"{client}: {size} bytes"
    if max_lines is not None:
        assert lines <= max_lines, f"{client}: {lines} lines"
    if max_tokens is not None:
        assert tokens.count(text) <= max_tokens, f"{client}: {tokens.count(text)} tokens"


def text_of(result: types.CallToolResult) -> str:
    assert not result.is_error, result
    block = result.content[0]
    assert isinstance(block, types.TextContent), result
    return block.text


# How the real MCP client connects: the initialize handshake (the protocol 2025-11-25, as the
# TypeScript SDK and Codex do) or discover (2026-07-28), and the version each settles on.
MODES = ["legacy", "auto"]
PROTOCOLS = {"legacy": "2025-11-25", "auto": "2026-07-28"}


def named(url: str, client: str, **kw: Any) -> Client:
    return Client(url, client_info=types.Implementation(name=client, version="1.0.0"), **kw)


def test_the_reference_page_fits_none_of_them_as_it_is() -> None:
    """The premise: unchanged, the text breaks every client's limit but its token budget."""
    assert tokens.count(REFERENCE) > BUDGET / 2 and len(REFERENCE.encode()) > 100_000
    assert REFERENCE.count("\n") > 2000


# -- the service's own tools -----------------------------------------------------------------


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = REFERENCE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/markdown; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/reference.md"
    httpd.shutdown()


@pytest.fixture(scope="module")
def service() -> Iterator[RunningServer]:
    srv = start_server(
        {"SUMMARIZER_BACKEND": "extractive", "FETCH_ALLOW_PRIVATE": "true", "FETCH_RESPECT_ROBOTS": "false"}
    )
    yield srv
    stop_server(srv)


@pytest.mark.parametrize("client", list(CLIENTS))
async def test_summaries_are_made_to_fit_each_client(service: RunningServer, client: str) -> None:
    async with named(service.url, client) as mcp:
        for tool, args in [
            ("summarize", {"content": REFERENCE, "max_output_tokens": BUDGET}),
            (
                "summarize_for_extraction",
                {"content": REFERENCE, "schema_hint": "functions", "max_output_tokens": BUDGET},
            ),
        ]:
            text = text_of(await mcp.call_tool(tool, args))
            within(text, client)
            assert text.startswith("## Section")  # a summary, from its start: no cut, no notice
            assert tokens.count(text) > 1000  # and of some size: the room is used


@pytest.mark.parametrize("client", list(CLIENTS))
async def test_text_within_the_token_budget_but_over_the_bytes_is_summarized(
    service: RunningServer, client: str
) -> None:
    """Unchanged (it is within its token budget), it would be cut by the client: summarized."""
    content = reference(40)  # ~13,500 tokens, ~43 KB, 600 lines
    async with named(service.url, client) as mcp:
        result = await mcp.call_tool("summarize", {"content": content, "max_output_tokens": 20_000})
    text = text_of(result)
    within(text, client)
    fits_as_it_is = client == "opencode"
    assert (text == content) is fits_as_it_is
    assert (result.meta or {})["io.github.mythline/summary"]["fidelity"].get(
        "unchanged", False
    ) is fits_as_it_is


@pytest.mark.parametrize("client", list(CLIENTS))
async def test_fetch_url_fits_summarized_and_raw(service: RunningServer, site: str, client: str) -> None:
    async with named(service.url, client) as mcp:
        summary = text_of(await mcp.call_tool("fetch_url", {"url": site}))
        within(summary, client)
        assert "Status: summarized from" in summary
        # Raw windows: smaller than asked where the client needs it, and they say where the next starts.
        start, seen = 0, []
        while True:
            window = text_of(
                await mcp.call_tool(
                    "fetch_url", {"url": site, "raw": True, "start_index": start, "max_length": BUDGET}
                )
            )
            within(window, client)
            head, _, body = window.partition("\n\n")
            seen.append(body)
            status = head.splitlines()[2]
            if "end of page" in status:
                break
            start = int(status.rsplit("next start_index=", 1)[1])
    assert "".join(seen) == REFERENCE  # the windows tile the page: nothing lost


@pytest.mark.parametrize("client", list(CLIENTS))
async def test_documents_and_expand_pages_fit_and_join_into_the_excerpt(
    service: RunningServer, client: str
) -> None:
    documents = [{"text": REFERENCE, "title": "os.path", "id": f"ref-{client}"}]
    async with named(service.url, client) as mcp:
        summary = await mcp.call_tool(
            "summarize_documents", {"documents": documents, "max_output_tokens": BUDGET}
        )
        within(text_of(summary), client)
        version = (summary.structured_content or {})["documents"][0]["version"]
        sid = f"ref-{client}~{version}#0"
        pages, offset = [], 0
        while True:
            answer = text_of(await mcp.call_tool("expand", {"source_id": sid, "offset": offset}))
            within(answer, client)
            head, _, body = answer.partition("\n\n")
            pages.append(body)
            status = head.splitlines()[-1]
            if "next offset=" not in status:
                break
            offset = int(status.rsplit("next offset=", 1)[1])
    async with Client(service.url) as anyone:  # a client with no limits: the excerpt whole
        whole = text_of(await anyone.call_tool("expand", {"source_id": sid}))
    head, _, excerpt = whole.partition("\n\n")
    assert "whole excerpt" in head
    assert "".join(pages) == excerpt
    assert len(pages) > 1 or client in ("opencode", "claude-code")  # an excerpt is ~25 KB, 8,000 tokens


@pytest.mark.parametrize("client", ["codex-mcp-client", "github-copilot-developer"])
async def test_the_structured_copy_of_forty_documents_fits_and_keeps_the_schema(
    service: RunningServer, client: str
) -> None:
    """Codex reads structuredContent instead of the text, as compact JSON: it fits too, and
    still conforms to the outputSchema the tool publishes."""
    async with named(service.url, client) as mcp:
        result = await mcp.call_tool("summarize_documents", {"documents": forty_documents()})
        tools = (await mcp.list_tools()).tools
        schema = next(t.output_schema for t in tools if t.name == "summarize_documents")
    within(text_of(result), client)
    structured = result.structured_content
    assert structured is not None and schema is not None
    wire = json.dumps(structured, separators=(",", ":"), ensure_ascii=False)
    within(wire, client)
    jsonschema.validate(structured, schema)
    assert "_left_out" in wire  # shrunk, and says so: as made it is over 10,000 bytes
    assert structured["cluster_summaries"] and structured["master_summary"]["summary"]


# -- every protocol version and transport: the initialize handshake and discover ---------------


def stdio(client: str, mode: str, tmp_path: Path, args: list[str] | None = None, **env: str) -> Client:
    """The real client starting ``python -m mcp_summarizer [args]`` over stdio."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_summarizer", *(args or ["--transport", "stdio"])],
        env={"SUMMARIZER_BACKEND": "extractive", "CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", **env},
    )
    return Client(params, client_info=types.Implementation(name=client, version="1"), mode=mode)


async def known(mcp: Client, client: str, mode: str) -> None:
    """Golden: the asking client's limits hold on a long summary, and text within the token
    budget but over the client's bytes or lines comes back summarized, not as it is (with no
    name the defaults apply: both would come back whole or nearly)."""
    assert mcp.protocol_version == PROTOCOLS[mode]
    text = text_of(await mcp.call_tool("summarize", {"content": REFERENCE, "max_output_tokens": BUDGET}))
    within(text, client, PROMISED)
    assert text.startswith("## Section") and tokens.count(text) > 1000
    content = reference(40)  # ~13,500 tokens, ~43 KB, 600 lines: over all but OpenCode's limits
    short = text_of(await mcp.call_tool("summarize", {"content": content, "max_output_tokens": 20_000}))
    within(short, client, PROMISED)
    assert (short == content) is (client == "opencode")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("client", list(CLIENTS))
async def test_each_client_is_known_over_http_on_either_protocol(
    service: RunningServer, client: str, mode: str
) -> None:
    """On protocol 2025-11-25 the client names itself in its initialize only (another HTTP
    request to a stateless server): the session id that answered it names the client on every
    later request.  On 2026-07-28 each request names it."""
    async with named(service.url, client, mode=mode) as mcp:
        await known(mcp, client, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("client", list(CLIENTS))
async def test_each_client_is_known_over_stdio_on_either_protocol(
    tmp_path: Path, client: str, mode: str
) -> None:
    """Over stdio the connection lasts: the name from the handshake or from each request."""
    async with stdio(client, mode, tmp_path) as mcp:
        await known(mcp, client, mode)


async def test_client_profile_names_the_client_when_it_cannot_be_told() -> None:
    srv = start_server({"SUMMARIZER_BACKEND": "extractive", "CLIENT_PROFILE": "codex"})
    try:
        async with named(srv.url, "mcp", mode="legacy") as mcp:
            text = text_of(
                await mcp.call_tool("summarize", {"content": REFERENCE, "max_output_tokens": BUDGET})
            )
        within(text, "codex-mcp-client")
    finally:
        stop_server(srv)


async def test_tool_output_max_bytes_and_lines_apply_to_every_client() -> None:
    srv = start_server(
        {"SUMMARIZER_BACKEND": "extractive", "TOOL_OUTPUT_MAX_BYTES": "6000", "TOOL_OUTPUT_MAX_LINES": "100"}
    )
    try:
        async with Client(srv.url) as mcp:
            text = text_of(
                await mcp.call_tool("summarize", {"content": REFERENCE, "max_output_tokens": BUDGET})
            )
            tools = (await mcp.list_tools()).tools
    finally:
        stop_server(srv)
    assert len(text.encode()) <= 6000 and text.count("\n") + 1 <= 100
    assert all(INLINE not in (t.meta or {}) for t in tools)  # answers under 50,000 characters


async def test_claude_code_keeps_long_answers_inline(service: RunningServer) -> None:
    """Over 50,000 characters (a client without a profile asking for a large budget), the
    result says how many Claude Code may keep in context; the tools say so in tools/list."""
    content = reference(50)  # ~54,000 characters, ~17,000 tokens
    async with Client(service.url) as mcp:
        result = await mcp.call_tool("summarize", {"content": content, "max_output_tokens": 20_000})
        small = await mcp.call_tool("summarize", {"content": "A short note.", "max_output_tokens": 100})
        tools = (await mcp.list_tools()).tools
    assert text_of(result) == content
    assert (result.meta or {})[INLINE] == len(content)
    assert INLINE not in (small.meta or {})
    assert {t.name: (t.meta or {}).get(INLINE) for t in tools} == dict.fromkeys(
        ["summarize", "summarize_for_extraction", "fetch_url", "summarize_documents", "expand", "search"],
        500_000,
    )


async def test_an_original_kept_on_llm_failure_is_cut_for_the_client_and_says_so(fresh_llm: FakeLLM) -> None:
    """ON_LLM_FAILURE=original hands the text back whole; the client would cut its middle, so it
    is cut at a line end under a line saying so, and the failing LLM is not asked again."""
    fresh_llm.responder = lambda record: error(503)
    srv = start_server(
        {
            "OPENROUTER_BASE_URL": fresh_llm.base_url,
            "ON_LLM_FAILURE": "original",
            "LLM_RETRY_BASE_SECONDS": "0",
        }
    )
    try:
        async with Client(srv.url) as mcp:  # no limits: what one failed summary costs
            whole = await mcp.call_tool("summarize", {"content": REFERENCE, "max_output_tokens": BUDGET})
        async with named(srv.url, "codex-mcp-client") as mcp:
            result = await mcp.call_tool("summarize", {"content": REFERENCE, "max_output_tokens": BUDGET})
        # One failed summary each (the engine logs each one, before the request's completion
        # line): the failing LLM is not asked again for a smaller one.
        srv.wait_for_event("summarization_complete", count=2)
        assert len(srv.events("summarization_degraded")) == 2
    finally:
        stop_server(srv)
    assert text_of(whole) == REFERENCE, "byte for byte"
    text = text_of(result)
    within(text, "codex-mcp-client")
    first, rest = text.split("\n", 1)
    assert (
        first == "[mcp-summarizer: cut at a line end to fit this client's limit of 10,000 bytes / 256 lines]"
    )
    assert REFERENCE.startswith(rest) and rest.endswith("\n")
    facts = (result.meta or {})["io.github.mythline/summary"]
    assert facts["degraded"] is True
    assert facts["notice"].startswith("[not summarized:") and "HTTP 503" in facts["notice"]


# -- through the proxy ------------------------------------------------------------------------


def proxy_config(folder: Path) -> Path:
    config = folder / "servers.json"
    upstream = [sys.executable, str(Path(__file__).parent / "doc_upstream.py")]
    config.write_text(json.dumps({"mcpServers": {"docs": {"command": upstream[0], "args": upstream[1:]}}}))
    return config


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    config = proxy_config(tmp_path_factory.mktemp("proxy-config"))
    srv = start_server(
        {"SUMMARIZER_BACKEND": "extractive", "TOOL_OUTPUT_MAX_TOKENS": str(BUDGET)},
        ["proxy", "--config", str(config), "--transport", "streamable-http"],
    )
    yield srv
    stop_server(srv)


@pytest.mark.parametrize("client", list(CLIENTS))
async def test_the_proxy_fits_each_client_and_its_parts_join_into_the_original(
    proxy: RunningServer, client: str
) -> None:
    async with named(proxy.url, client) as mcp:
        result = await mcp.call_tool("read_reference", {"sections": 150})
        text = text_of(result)
        within(text, client)
        facts = (result.meta or {})["io.github.mythline/proxy"]
        assert facts["how"] == "summarized" and text.startswith("[mcp-summarizer: this docs/read_reference")
        # The original behind the handle, every part and page of it within the client's limits.
        parts, current, offset = [], facts["original"], 0
        while True:
            answer = text_of(await mcp.call_tool("expand", {"source_id": current, "offset": offset}))
            within(answer, client)
            head, _, body = answer.partition("\n\n")
            parts.append(body)
            fields = dict(line.split(": ", 1) for line in head.splitlines())
            if "next offset=" in fields["Status"]:
                offset = int(fields["Status"].rsplit("next offset=", 1)[1])
            elif fields["Next"].startswith("none"):
                break
            else:
                current, offset = fields["Next"], 0
    assert "".join(parts) == REFERENCE


async def proxied(mcp: Client, client: str, mode: str) -> None:
    """Golden, through the proxy: a long result summarized within the client's limits, and one
    within the proxy's token budget but over the client's bytes or lines summarized too."""
    assert mcp.protocol_version == PROTOCOLS[mode]
    result = await mcp.call_tool("read_reference", {"sections": 150})
    within(text_of(result), client, PROMISED)
    assert (result.meta or {})["io.github.mythline/proxy"]["how"] == "summarized"
    result = await mcp.call_tool("read_reference", {"sections": 40})  # ~13,500 tokens, 43 KB, 600 lines
    within(text_of(result), client, PROMISED)
    assert (text_of(result) == reference(40)) is (client == "opencode")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("client", list(CLIENTS))
async def test_the_proxy_knows_each_client_over_http_on_either_protocol(
    proxy: RunningServer, client: str, mode: str
) -> None:
    async with named(proxy.url, client, mode=mode) as mcp:
        await proxied(mcp, client, mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("client", list(CLIENTS))
async def test_the_proxy_knows_each_client_over_stdio_on_either_protocol(
    tmp_path: Path, client: str, mode: str
) -> None:
    args = ["proxy", "--config", str(proxy_config(tmp_path))]
    async with stdio(client, mode, tmp_path, args, TOOL_OUTPUT_MAX_TOKENS=str(BUDGET)) as mcp:
        await proxied(mcp, client, mode)


async def test_the_proxy_passes_a_result_that_fits_the_client_unchanged(proxy: RunningServer) -> None:
    async with named(proxy.url, "codex-mcp-client") as mcp:
        result = await mcp.call_tool("read_reference", {"sections": 8})  # ~8.4 KB, 120 lines
    assert text_of(result) == reference(8) and "io.github.mythline/proxy" not in (result.meta or {})


async def test_the_proxy_tells_claude_code_to_keep_its_tools_answers_inline(proxy: RunningServer) -> None:
    async with named(proxy.url, "claude-code") as mcp:
        tools = (await mcp.list_tools()).tools
    assert {t.name: (t.meta or {}).get(INLINE) for t in tools} == dict.fromkeys(
        ["call_tool_summarized", "search", "expand", "read_reference"], 500_000
    )
