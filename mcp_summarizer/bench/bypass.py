"""A call whose content is within budget (no LLM, no summary) against a bare echo tool.

Both servers run as real processes on this machine, over streamable HTTP, called with the
real MCP client; the calls alternate between the two so that the machine's noise hits both
alike.  Reported: the median and p90 latency of each, and their ratio (issue 14's target:
the bypass at most 1.2x the echo).  The content is the same text on both sides.

    cd mcp_summarizer && ../.venv/bin/python -m bench.bypass [--calls 300] [--chars 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import textwrap
import time

from mcp import Client
from tests.support.servers import start_server, stop_server

from shared.testing import free_port, scrubbed_environ, start_service

ECHO = textwrap.dedent(
    """
    import sys
    import uvicorn
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(name="echo")

    @server.tool(structured_output=False)
    async def echo(content: str) -> str:
        \"\"\"Return the content.\"\"\"
        return content

    @server.custom_route("/health", methods=["GET"])
    async def health(_):
        from starlette.responses import JSONResponse
        return JSONResponse({"status": "ok"})

    app = server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
    """
)


async def timed(client: Client, tool: str, args: dict[str, object]) -> float:
    start = time.perf_counter()
    result = await client.call_tool(tool, args)
    elapsed = time.perf_counter() - start
    assert not result.is_error, result
    return elapsed


async def measure(ours_url: str, echo_url: str, calls: int, text: str) -> tuple[list[float], list[float]]:
    ours, echo = [], []
    async with Client(ours_url) as a, Client(echo_url) as b:
        for _ in range(20):  # warm-up
            await timed(a, "summarize", {"content": text, "max_output_tokens": 5000})
            await timed(b, "echo", {"content": text})
        for _ in range(calls):
            ours.append(await timed(a, "summarize", {"content": text, "max_output_tokens": 5000}))
            echo.append(await timed(b, "echo", {"content": text}))
    return ours, echo


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--chars", type=int, default=2000)
    args = parser.parse_args()
    text = ("Marshal Dughan guards Goldshire in Elwynn Forest. " * (args.chars // 50 + 1))[: args.chars]
    port = free_port()
    echo = start_service([sys.executable, "-c", ECHO, str(port)], scrubbed_environ(()), port)
    ours = start_server({"SUMMARIZER_BACKEND": "extractive", "LOG_LEVEL": "WARNING"})
    try:
        a, b = asyncio.run(measure(f"{ours.base}/mcp", f"http://127.0.0.1:{port}/mcp", args.calls, text))
    finally:
        stop_server(ours)
        echo.stop()

    def p(values: list[float], q: float) -> float:
        return statistics.quantiles(values, n=100)[int(q) - 1] * 1000

    med_a, med_b = statistics.median(a) * 1000, statistics.median(b) * 1000
    print(f"{args.calls} calls each, alternating, {args.chars} characters of content")
    print("| server | median | p90 |")
    print("|---|---|---|")
    print(f"| mcp-summarizer summarize (within budget) | {med_a:.2f} ms | {p(a, 90):.2f} ms |")
    print(f"| bare MCPServer echo tool | {med_b:.2f} ms | {p(b, 90):.2f} ms |")
    print(f"ratio (median): {med_a / med_b:.2f}x; (p90): {p(a, 90) / p(b, 90):.2f}x")


if __name__ == "__main__":
    main()
