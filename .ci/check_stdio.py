"""A stdio round trip with an installed mcp-summarizer: `python check_stdio.py COMMAND [ARGS...]`.

Starts COMMAND as an MCP stdio server (as a coding harness would), lists the tools, and calls
each one: a small text comes back unchanged, a large one within its budget, and fetch_url
converts a page served from a loopback http.server (FETCH_ALLOW_PRIVATE=true for this check).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from mcp import Client, StdioServerParameters

PAGE = """<!doctype html><html><head><title>Elwynn Forest</title></head><body>
<nav>Home | Zones | Log in</nav><main><h1>Elwynn Forest</h1>
<p>Elwynn Forest is the peaceful province south of Stormwind City, home of Goldshire and its
Lion's Pride Inn, where Marshal Dughan keeps watch over the roads.</p></main></body></html>"""


async def main(command: list[str]) -> None:
    site = Path(tempfile.mkdtemp())
    (site / "elwynn.html").write_text(PAGE, encoding="utf-8")

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = partial(Quiet, directory=str(site))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    # The caller's environment (uvx needs its certificates, proxies and cache settings) minus
    # anything that would configure the service; then this check's own settings.
    ours = ("OPENROUTER_", "LLM_", "MCP_SUMMARIZER_", "FETCH_", "SUMMARIZER_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    env.update({"FETCH_ALLOW_PRIVATE": "true", "TIKTOKEN_CACHE_DIR": "", "CACHE_DIR": tempfile.mkdtemp()})
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with Client(params) as client:
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        assert tools == [
            "expand",
            "fetch_url",
            "search",
            "summarize",
            "summarize_documents",
            "summarize_for_extraction",
        ], tools
        small = await client.call_tool("summarize", {"content": "already small", "max_output_tokens": 50})
        assert small.content[0].text == "already small", small
        text = "\n\n".join(f"## Part {i}\n\nThe {i}th gate of Stormwind opens at dawn." for i in range(2000))
        big = await client.call_tool("summarize_for_extraction", {"content": text, "schema_hint": "gates"})
        assert not big.is_error and len(big.content[0].text) < len(text) // 5, big
        page = await client.call_tool(
            "fetch_url", {"url": f"http://127.0.0.1:{httpd.server_port}/elwynn.html"}
        )
        answer = page.content[0].text
        assert not page.is_error and "Title: Elwynn Forest" in answer and "Marshal Dughan" in answer, answer
        pages = [
            {"text": text, "id": "gates"},
            {"text": answer, "id": "elwynn", "url": "https://wiki.example/e"},
        ]
        summary = await client.call_tool(
            "summarize_documents", {"documents": pages, "max_output_tokens": 300}
        )
        assert not summary.is_error and summary.structured_content, summary
        cited = summary.structured_content["cluster_summaries"][0]["source_ids"][0]
        opened = await client.call_tool("expand", {"source_id": cited})
        assert not opened.is_error and f"Source: {cited}" in opened.content[0].text, opened
    httpd.shutdown()
    print(f"stdio round trip ok: {' '.join(command)}")


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(sys.argv[1:]), timeout=300))
