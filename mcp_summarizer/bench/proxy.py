"""The proxy's overhead on a pass-through call: the same tool called directly and through
`mcp-summarizer proxy`, side by side.

The upstream is the official filesystem server (`npx -y @modelcontextprotocol/server-filesystem`)
reading a small file (its result passes through unchanged).  Two pairs, each the way an
agent would reach the tool:

- stdio: the client starts the upstream itself, or starts the proxy (which starts the upstream);
- HTTP: the everything reference server over streamable HTTP (`echo`), called directly, or
  through the proxy over streamable HTTP.

Calls alternate between the direct and the proxied session so that the machine's noise hits
both alike; reported are the median and p90 of each and their ratios.  The proxy adds one
hop (a process boundary, or an HTTP round trip) to the upstream's own; the ratio says what
that hop costs against a tool that itself does almost nothing, the worst case.

    cd mcp_summarizer && ../.venv/bin/python -m bench.proxy [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from tests.support.servers import start_server, stop_server

from shared.testing import free_port, scrubbed_environ

FS = ["-y", "@modelcontextprotocol/server-filesystem"]
EVERYTHING = ["-y", "@modelcontextprotocol/server-everything"]


async def timed(client: Client, tool: str, args: dict[str, Any]) -> float:
    start = time.perf_counter()
    result = await client.call_tool(tool, args)
    elapsed = time.perf_counter() - start
    assert not result.is_error, result
    return elapsed


async def pair(
    direct: Client, proxied: Client, tool: str, args: dict[str, Any], calls: int
) -> tuple[list[float], list[float]]:
    for _ in range(20):  # warm-up
        await timed(direct, tool, args)
        await timed(proxied, tool, args)
    a, b = [], []
    for i in range(calls):
        first, second = (direct, proxied) if i % 2 == 0 else (proxied, direct)
        t1 = await timed(first, tool, args)
        t2 = await timed(second, tool, args)
        a.append(t1 if first is direct else t2)
        b.append(t2 if first is direct else t1)
    return a, b


def report(name: str, direct: list[float], proxied: list[float]) -> None:
    def p90(xs: list[float]) -> float:
        return statistics.quantiles(xs, n=10)[-1]

    dm, pm = statistics.median(direct), statistics.median(proxied)
    print(
        f"| {name} | {pm * 1000:.2f} / {p90(proxied) * 1000:.2f} ms "
        f"| {dm * 1000:.2f} / {p90(direct) * 1000:.2f} ms "
        f"| {pm / dm:.2f}x / {p90(proxied) / p90(direct):.2f}x |"
    )


def start_everything_http() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        ["npx", *EVERYTHING, "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("the everything server did not start")


async def main(calls: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="proxy-bench-"))
    (folder / "small.txt").write_text("A small file: its result passes through the proxy unchanged.\n")
    env = scrubbed_environ(("OPENROUTER_", "LLM_", "MCP_SUMMARIZER_"))
    env.update({"CACHE_DIR": str(folder / "cache"), "LOG_LEVEL": "WARNING"})
    config = folder / "servers.json"
    everything, url = start_everything_http()
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fs": {"command": "npx", "args": [*FS, str(folder)]},
                    "remote": {"type": "http", "url": url},
                }
            }
        )
    )
    print(
        f"{calls} calls each, alternating, after 20 warm-up calls each; nproc {os.cpu_count()}, "
        f"load average {os.getloadavg()[0]:.2f}\n"
    )
    print("| path | through the proxy median / p90 | direct median / p90 | ratio median / p90 |")
    print("|---|---|---|---|")
    try:
        direct_params = StdioServerParameters(command="npx", args=[*FS, str(folder)])
        proxy_params = StdioServerParameters(
            command=sys.executable, args=["-m", "mcp_summarizer", "proxy", "--config", str(config)], env=env
        )
        args = {"path": str(folder / "small.txt")}
        async with Client(direct_params) as direct, Client(proxy_params) as proxied:
            report(
                "stdio: filesystem read_text_file",
                *await pair(direct, proxied, "read_text_file", args, calls),
            )
        server = start_server(
            {"LOG_LEVEL": "WARNING", "CACHE_DIR": str(folder / "cache2")},
            ["proxy", "--config", str(config), "--transport", "streamable-http"],
        )
        try:
            async with Client(url) as direct, Client(server.url) as proxied:
                report(
                    "HTTP: everything echo", *await pair(direct, proxied, "echo", {"message": "hello"}, calls)
                )
        finally:
            stop_server(server)
    finally:
        os.killpg(everything.pid, signal.SIGTERM)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=300)
    asyncio.run(main(parser.parse_args().calls))
