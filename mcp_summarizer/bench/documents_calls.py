"""summarize_documents: LLM calls and wall time by workload shape (few large documents, many
small ones).

End to end, as `engine.py` runs the engine: the real server (`tests.support.servers.start_server`,
default settings but OPENROUTER_BASE_URL) called with the real MCP client over streamable
HTTP, its LLM the stand-in `tests.support.fake_llm.FakeLLM` answering after ``--latency`` seconds
(the single map prompt with one JSON object, the batched map prompt with one JSON array
entry per excerpt, merges with cited text: `documents.stand_in`).  Workloads:

* ``pages``: the 40 pages of two manuals of `documents.py` (20 + 20), ~307k tokens;
* ``small``: 500 notes of one or two sentences;
* ``lines``: 2,000 one-line documents.

For each: LLM calls by phase (map, cluster merges, master), billed prompt tokens per source
token, the answer's tokens and the wall time of the tool call (client side).

    cd mcp_summarizer && ../.venv/bin/python -m bench.documents_calls [--latency 0.2]
        [--workloads pages,small,lines] [--budget 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import Counter
from datetime import date
from typing import Any

from mcp import Client
from tests.support.fake_llm import FakeLLM
from tests.support.servers import start_server, stop_server

from bench.documents import mixed, stand_in
from mcp_summarizer.documents.schema import DocumentIn, DocumentsSummary
from mcp_summarizer.text import tokens

SUBJECTS = ["wolves", "mines", "harbour", "bridges", "bakery"]


def small_notes(n: int) -> list[DocumentIn]:
    return [
        DocumentIn(
            id=f"note{i}",
            title=f"Note {i}",
            text=f"The {SUBJECTS[i % 5]} report {i} counts {i * 3} items in year {600 + i % 40}. "
            f"Marshal Dughan filed it on day {i % 28 + 1} and asked for {i % 9 + 2} more guards.",
        )
        for i in range(n)
    ]


def one_liners(n: int) -> list[DocumentIn]:
    return [DocumentIn(id=f"l{i}", text=f"The {SUBJECTS[i % 5]} line {i} says {i * 7}.") for i in range(n)]


def phase(system: str, user: str) -> str:
    if "indexing engine" in system:
        return "map (batched)" if '<excerpt id="' in user else "map"
    return "master" if "overview" in system else "cluster"


async def run(name: str, docs: list[DocumentIn], latency: float, budget: int) -> dict[str, Any]:
    with FakeLLM() as llm, tempfile.TemporaryDirectory() as cache:
        llm.latency = latency
        llm.responder = stand_in
        srv = start_server(
            {"OPENROUTER_BASE_URL": llm.base_url, "OPENROUTER_API_KEY": "bench", "CACHE_DIR": cache}
        )
        try:
            args = {"documents": [d.model_dump(exclude_none=True) for d in docs], "max_output_tokens": budget}
            start = time.perf_counter()
            async with Client(f"{srv.base}/mcp") as client:
                result = await client.call_tool("summarize_documents", args)
            wall = time.perf_counter() - start
            event = srv.wait_for_event("documents_summary_complete")[-1]
        finally:
            stop_server(srv)
    assert not result.is_error, result
    s = DocumentsSummary.model_validate(result.structured_content)
    source = sum(tokens.count(d.text) for d in docs)
    phases = Counter(phase(r.system, r.user) for r in llm.requests)
    return {
        "workload": name,
        "documents": len(docs),
        "tokens": source,
        "excerpts": s.index.coverage.excerpts,
        "calls": len(llm.requests),
        "phases": dict(phases),
        "billed": sum(r.prompt_tokens for r in llm.requests) / source,
        "output": result.meta["io.github.mythline/summary"]["output_tokens"],
        "degraded": result.meta["io.github.mythline/summary"]["degraded"],
        "wall": wall,
        "retries": event["json_retries"],
        "fallbacks": event["json_fallbacks"],
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.2, help="stand-in LLM seconds per call")
    parser.add_argument("--workloads", default="pages,small,lines")
    parser.add_argument("--budget", type=int, default=5000)
    args = parser.parse_args()
    workloads = {
        "pages": lambda: mixed(20),
        "small": lambda: small_notes(500),
        "lines": lambda: one_liners(2000),
    }
    print(f"{date.today()}, stand-in latency {args.latency} s, max_output_tokens {args.budget}, defaults")
    print(
        "| workload | documents | tokens | excerpts | LLM calls | by phase | billed / source "
        "| JSON retries / fallbacks | answer tokens | wall |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.workloads.split(","):
        r = await run(name, workloads[name](), args.latency, args.budget)
        by_phase = ", ".join(f"{k} {v}" for k, v in sorted(r["phases"].items()))
        flag = " (degraded)" if r["degraded"] else ""
        print(
            f"| {name} | {r['documents']:,} | {r['tokens']:,} | {r['excerpts']:,} | {r['calls']:,}{flag} "
            f"| {by_phase} | {r['billed']:.2f} | {r['retries']} / {r['fallbacks']} | {r['output']:,} "
            f"| {r['wall']:.1f} s |",
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main())
