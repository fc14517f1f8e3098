"""Issue 33: a hostile upstream and a hostile tenant against the proxy, on loopback.

The proxy runs as users run it (a subprocess over streamable HTTP, AUTH_TOKENS for alice and
bob), in front of `tests/proxy/hostile_upstream.py`.  Each attack prints one row: what was
tried, and the figures that say whether it held.

- error replies: alice sends calls that the upstream answers with JSON-RPC errors -32000 and
  -32001 (two sessions, back to back) for --seconds, while bob calls the same upstream (half of
  his calls in flight for 0.3 s): bob's calls that succeeded, and how often the upstream was
  started again;
- answer parts, with TOOL_OUTPUT_MAX_BYTES=20000: 5 MB of structuredContent, of an embedded
  text resource, of `_meta`, of a link's description; a 2 MB error message; 3,000 progress
  notifications: the bytes of the answer on the wire (and of the notifications relayed);
- ids: a result answered at the default budget, then at 300 tokens: does ``<handle>#1`` open
  the same text after the second call;
- listings: an upstream listing 50,000 tools (34 MB) beside a calm one: the bytes and seconds
  of the proxy's tools/list, and the latency of calls to the calm upstream meanwhile (5
  listings, then the huge upstream started again); an upstream listing invalid names.

``--before DIR`` runs every attack against the proxy of another source tree too (DIR holds its
``mcp_summarizer`` package, e.g. ``git archive main mcp_summarizer/mcp_summarizer``), the two
alternating, so that both columns see the same machine.

    cd mcp_summarizer && ../.venv/bin/python -m bench.proxy_attacks [--seconds 20] [--before DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from tests.support.tenants import ALICE, BOB, TOKENS, client

from shared.testing import ServiceProcess, free_port, scrubbed_environ, start_service

HOSTILE = str(Path(__file__).resolve().parents[1] / "tests" / "proxy" / "hostile_upstream.py")
HANDLE = re.compile(r'expand\("(r[0-9a-f]{16})#0"\)')
Attack = Callable[[str, float], Awaitable[tuple[str, str]]]


def hostile(*args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [HOSTILE, *args]}


def start(source: str, servers: dict[str, Any], env: dict[str, str] | None = None) -> ServiceProcess:
    """The proxy of ``source`` ("" for this tree): ``-P`` keeps the working directory off the
    path, so PYTHONPATH decides which package runs."""
    config = Path(tempfile.mkdtemp(prefix="attacks-")) / "servers.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    port = free_port()
    full = scrubbed_environ(("OPENROUTER_", "LLM_", "MCP_SUMMARIZER_"))
    full.update(
        {
            "MCP_SUMMARIZER_PORT": str(port),
            "CACHE_DIR": tempfile.mkdtemp(prefix="attacks-store-"),
            "CACHE": "off",
            "UPSTREAM_START_TIMEOUT_SECONDS": "120",
            "PYTHONPATH": source or str(Path(__file__).resolve().parents[1]),
            **(env or {}),
        }
    )
    command = [sys.executable, "-P", "-m", "mcp_summarizer", "proxy", "--config", str(config)]
    return start_service([*command, "--transport", "streamable-http"], full, port, timeout=180)


def text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


async def error_replies(source: str, seconds: float) -> tuple[str, str]:
    proxy = start(source, {"e": hostile("e")}, {"AUTH_TOKENS": TOKENS})
    try:
        starts = len(proxy.events("upstream_connected"))
        bob_ok, bob_all, alice_all = 0, 0, 0
        deadline = time.monotonic() + seconds

        async def alice() -> None:
            nonlocal alice_all
            async with client(proxy, ALICE) as c:
                while time.monotonic() < deadline:
                    for code in (-32000, -32001):
                        await c.call_tool("fail", {"code": code})
                        alice_all += 1

        async def bob() -> None:
            nonlocal bob_ok, bob_all
            async with client(proxy, BOB) as c:
                while time.monotonic() < deadline:
                    result = await c.call_tool("slow" if bob_all % 2 else "echo", {"seconds": 0.3})
                    bob_all += 1
                    bob_ok += not result.is_error

        async with anyio.create_task_group() as group:
            group.start_soon(alice)
            group.start_soon(alice)
            group.start_soon(bob)
        restarts = len(proxy.events("upstream_connected")) - starts
        return f"alice {alice_all} failing calls", f"bob {bob_ok} of {bob_all} ok, {restarts} restarts"
    finally:
        proxy.stop()


async def answer_parts(source: str, seconds: float) -> tuple[str, str]:
    proxy = start(
        source, {"h": hostile("h")}, {"TOOL_OUTPUT_MAX_BYTES": "20000", "UPSTREAM_TIMEOUT_SECONDS": "60"}
    )
    mb5 = 5_000_000
    try:
        sizes = []
        async with Client(proxy.url) as c:
            for name, args in (
                ("structured", {"structured": mb5}),
                ("resource", {"resource": mb5}),
                ("meta", {"meta": mb5}),
                ("link", {"link": mb5}),
            ):
                result = await c.call_tool("sized", args)
                sizes.append(f"{name} {len(result.model_dump_json(by_alias=True, exclude_none=True)):,}")
            failed = await c.call_tool("fail", {"code": -32602, "bytes": 2_000_000})
            sizes.append(f"error {len(failed.model_dump_json(by_alias=True, exclude_none=True)):,}")
            relayed: list[int] = []

            async def seen(progress: float, total: float | None, message: str | None) -> None:
                relayed.append(len(json.dumps({"progress": progress, "total": total, "message": message})))

            await c.call_tool("progress", {"count": 3000, "message_bytes": 300}, progress_callback=seen)
            sizes.append(f"progress {len(relayed)} notes {sum(relayed):,}")
        return "5 MB each part; 2 MB error; 3,000 notes", "; ".join(sizes)
    finally:
        proxy.stop()


async def ids(source: str, seconds: float) -> tuple[str, str]:
    proxy = start(source, {"h": hostile("h")})
    try:
        async with Client(proxy.url) as c:
            first = await c.call_tool("report", {"lines": 3000})
            found = HANDLE.search(text_of(first))
            assert found is not None, text_of(first)[:200]
            part = f"{found.group(1)}#1"
            before = text_of(await c.call_tool("expand", {"source_id": part}))
            args = {"server": "h", "tool": "report", "arguments": {"lines": 3000}, "max_output_tokens": 300}
            await c.call_tool("call_tool_summarized", args)
            after = text_of(await c.call_tool("expand", {"source_id": part}))
        return "same call at 8000 then 300 tokens", f"{part[:7]}...#1 opens the same text: {before == after}"
    finally:
        proxy.stop()


async def lister(url: str) -> None:
    """The listings of `listings`, in a process of their own (so that parsing 34 MB of tools
    in the client does not stall the calm calls' own event loop): prints their sizes and times."""
    listed = []
    for _ in range(5):
        started = time.monotonic()
        async with Client(url) as c:
            tools = (await c.list_tools()).tools
        size = sum(len(t.model_dump_json(by_alias=True, exclude_none=True).encode()) for t in tools)
        listed.append((size, time.monotonic() - started))
    async with Client(url) as c:  # the huge upstream started again
        await c.call_tool("huge__crash", {})
        await c.call_tool("huge__echo", {})
    print(json.dumps(listed))


async def listings(source: str, seconds: float) -> tuple[str, str]:
    proxy = start(source, {"huge": hostile("--tools", "50000", "huge"), "calm": hostile("calm")})
    try:
        latencies: list[float] = []
        done = anyio.Event()
        out: list[bytes] = []

        async def calm() -> None:
            async with Client(proxy.url) as c:
                while not done.is_set():
                    started = time.monotonic()
                    await c.call_tool("calm__echo", {})
                    latencies.append(time.monotonic() - started)
                    await anyio.sleep(0.02)

        async def lists() -> None:
            command = [sys.executable, "-m", "bench.proxy_attacks", "--lister", proxy.url]
            out.append((await anyio.run_process(command, stderr=None)).stdout)
            done.set()

        async with anyio.create_task_group() as group:
            group.start_soon(calm)
            group.start_soon(lists)
        listed = json.loads(out[0])
        size, took = max(listed)[0], statistics.median(t for _, t in listed)
        calm_figures = f"calm call median {statistics.median(latencies):.3f} s, max {max(latencies):.2f} s"
        return "50,000 tools (34 MB) + calm", f"tools/list {size:,} B in {took:.2f} s; {calm_figures}"
    finally:
        proxy.stop()


async def bad_names(source: str, seconds: float) -> tuple[str, str]:
    proxy = start(source, {"bad": hostile("--bad-names", "--description-mb", "20", "bad")})
    try:
        async with Client(proxy.url) as c:
            tools = (await c.list_tools()).tools
        valid = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
        invalid = [t.name for t in tools if not valid.match(t.name)]
        longest = max(len(t.description or "") for t in tools)
        return (
            "7 invalid names, a 20 MB description",
            f"{len(invalid)} invalid published; longest description {longest:,}",
        )
    finally:
        proxy.stop()


ATTACKS: list[tuple[str, Attack]] = [
    ("error replies", error_replies),
    ("answer parts", answer_parts),
    ("ids", ids),
    ("listings", listings),
    ("bad names", bad_names),
]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--before", default="", help="another source tree's mcp_summarizer project dir")
    parser.add_argument("--lister", default="", help=argparse.SUPPRESS)
    parser.add_argument("--only", default="", help="one attack by name (e.g. listings)")
    args = parser.parse_args()
    if args.lister:
        await lister(args.lister)
        return
    sources = [("before", args.before), ("after", "")] if args.before else [("after", "")]
    print(f"{'attack':14} {'tree':7} {'tried':40} figures")
    for name, attack in ATTACKS:
        if args.only and name != args.only:
            continue
        for label, source in sources:
            try:
                tried, figures = await attack(source, args.seconds)
            except Exception as exc:  # a tree that breaks under an attack: that is its figure
                while isinstance(exc, ExceptionGroup) and exc.exceptions:
                    exc = exc.exceptions[0]
                tried, figures = "", f"failed: {type(exc).__name__}: {str(exc)[:300]}"
            print(f"{name:14} {label:7} {tried:40} {figures}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
