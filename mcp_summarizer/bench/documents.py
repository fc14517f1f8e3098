"""summarize_documents benchmark: cluster purity, citation validity, speed, and LLM cost.

Inputs: a mixed set of real pages from two unrelated manuals, interleaved: the CPython 3.11
library docs (the markdown corpus of `build_corpus.py`) and git's manual pages (Debian's
`git-man`, rendered to text with `man`).  Both are on this machine; nothing is downloaded.

1. Embedded path (no key), in process: the pipeline with the real content store.
   * Cluster purity: each cluster's share of excerpts from its majority manual, averaged
     over clusters weighted by excerpts (1.0: no cluster mixes the manuals).
   * Citation validity: every id the markdown cites, and every id in the structure, is a
     stored excerpt, and the store gives back text that is in its document (100% required).
   * Time: the pipeline's wall time as a ratio to one `encode_ordinary` pass over all the
     documents' text, each run followed by one pass (the same load for both): best of
     ``--repeats`` over best, and median over median; the same in CPU time (all threads:
     steadier than wall time on a shared machine); and per 100k tokens.
2. LLM path, end to end: the real server called with the real MCP client over HTTP, its LLM
   the stand-in (`tests.support.fake_llm.FakeLLM`) answering the map with JSON and merges with cited
   text after ``--latency`` s: LLM calls, billed prompt tokens per source token, wall time.

    cd mcp_summarizer && ../.venv/bin/python -m bench.documents [--pages 20] [--repeats 3] [--embedded-only]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from mcp import Client
from tests.support.fake_llm import FakeLLM, Recorded, Reply, ok
from tests.support.servers import start_server, stop_server

from bench import corpus
from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.assembly.store_setup import open_store, store_options
from mcp_summarizer.config import load_settings
from mcp_summarizer.documents.pipeline import DocumentsPipeline
from mcp_summarizer.documents.schema import DocumentIn, DocumentsSummary
from mcp_summarizer.tenant import LOCAL
from mcp_summarizer.text import tokens

DATA = Path(__file__).resolve().parent / "data" / "pages" / "library"
MAN = Path("/usr/share/man/man1")
CITED = re.compile(r"\[([A-Za-z0-9][A-Za-z0-9._~-]*#\d+)\]")


def python_pages(n: int) -> list[DocumentIn]:
    if not DATA.is_dir():
        raise SystemExit(
            f"no corpus in {DATA}: run `cd mcp_summarizer && python -m bench.build_corpus` first"
        )
    pages = sorted(p for p in DATA.glob("*.md") if p.stat().st_size > 8000)
    step = max(len(pages) // n, 1)
    return [
        DocumentIn(
            id=f"py-{p.stem}",
            title=p.stem,
            url=f"https://docs.python.org/3.11/library/{p.stem}.html",
            text=p.read_text(),
        )
        for p in pages[::step][:n]
    ]


def git_pages(n: int) -> list[DocumentIn]:
    pages = sorted(p for p in MAN.glob("git-*.1.gz") if p.stat().st_size > 4000)
    if not pages:
        raise SystemExit("no git manual pages in /usr/share/man/man1: apt-get install git-man")
    step = max(len(pages) // n, 1)
    out = []
    for p in pages[::step][:n]:
        name = p.name.removesuffix(".1.gz")
        text = corpus.man_page(p)
        out.append(
            DocumentIn(id=f"git-{name[4:]}", title=name, url=f"https://git-scm.com/docs/{name}", text=text)
        )
    return out


def mixed(n: int) -> list[DocumentIn]:
    py, git = python_pages(n), git_pages(n)
    return [d for pair in zip(py, git, strict=False) for d in pair]


def purity(s: DocumentsSummary) -> float:
    total = weighted = 0
    for c in s.index.clusters:
        manuals = Counter(sid.split("-", 1)[0] for sid in c.source_ids)
        weighted += max(manuals.values())
        total += sum(manuals.values())
    return weighted / total


async def embedded(docs: list[DocumentIn], repeats: int, budget: int, focus: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as cache:
        settings = load_settings({"SUMMARIZER_BACKEND": "extractive", "CACHE_DIR": cache})
        store = open_store(settings, store_options(settings, 0))
        pipeline = DocumentsPipeline(
            build_engine(settings), store, min_relevance=settings.documents.cluster_min_relevance
        )
        joined = "\n\n".join(d.text for d in docs)
        walls, encodes, cpus, encode_cpus = [], [], [], []
        for _ in range(repeats):  # one encode pass after each run: the same load for both
            start, cpu = time.perf_counter(), time.process_time()
            outcome = await pipeline.summarize(docs, focus, budget, tenant=LOCAL)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
            start, cpu = time.perf_counter(), time.process_time()
            tokens.encoding().encode_ordinary(joined)
            encodes.append(time.perf_counter() - start)
            encode_cpus.append(time.process_time() - cpu)
        s = outcome.structured
        by_id = {d.id: d.text for d in docs}
        cited = set(CITED.findall(outcome.text))
        everywhere = cited | {sid for c in s.index.clusters for sid in c.source_ids}
        valid = 0
        for sid in everywhere:
            source = await store.get(LOCAL, sid)
            valid += source.text in by_id[source.doc_id]
        await store.aclose()
    n_tokens = outcome.input_tokens
    return {
        "documents": len(docs),
        "tokens": n_tokens,
        "excerpts": s.index.coverage.excerpts,
        "clusters": s.index.coverage.clusters,
        "summarized": s.index.coverage.clusters_summarized,
        "purity": purity(s),
        "cited": len(cited),
        "ids_checked": len(everywhere),
        "valid": valid,
        "output_tokens": outcome.output_tokens,
        "wall": min(walls),
        "encode": min(encodes),
        "median_ratio": statistics.median(walls) / statistics.median(encodes),
        "cpu_ratio": min(cpus) / min(encode_cpus),
        "per_100k": min(walls) / n_tokens * 100_000,
    }


EXCERPT = re.compile(r'<excerpt id="([^"]+)" max_tokens="(\d+)">\n(.*?)\n</excerpt>', re.DOTALL)


def _label(text: str) -> str:
    words = re.findall(r"[a-z]{5,}", text.lower())
    return Counter(words).most_common(1)[0][0] if words else "text"


def stand_in(r: Recorded) -> Reply:
    """A model that follows the prompts: one JSON object for an excerpt (its first 400
    characters as the summary, its commonest long word as the topic), a JSON array entry per
    excerpt of a batch, and merges that cite the ids they were given."""
    if "indexing engine" in r.system:
        batch = EXCERPT.findall(r.user)
        if batch:
            entries = [
                {
                    "id": sid,
                    "summary": tokens.truncate(body, int(limit)),
                    "topic": _label(body),
                    "subtopic": "details",
                    "relevance_score": 1.0,
                }
                for sid, limit, body in batch
            ]
            return ok(json.dumps(entries, ensure_ascii=False))
        return ok(
            json.dumps(
                {
                    "summary": r.user[:400],
                    "topic": _label(r.user),
                    "subtopic": "details",
                    "relevance_score": 1.0,
                }
            )
        )
    ids = CITED.findall(r.user)
    return ok(" ".join(f"A fact [{i}]." for i in ids[:20]) or "Nothing.")


async def with_llm(docs: list[DocumentIn], latency: float, budget: int, focus: str) -> dict[str, Any]:
    with FakeLLM() as llm, tempfile.TemporaryDirectory() as cache:
        llm.latency = latency
        llm.responder = stand_in
        srv = start_server(
            {"OPENROUTER_BASE_URL": llm.base_url, "OPENROUTER_API_KEY": "bench", "CACHE_DIR": cache}
        )
        try:
            args = {
                "documents": [d.model_dump(exclude_none=True) for d in docs],
                "focus": focus,
                "max_output_tokens": budget,
            }
            start = time.perf_counter()
            async with Client(f"{srv.base}/mcp") as client:
                result = await client.call_tool("summarize_documents", args)
            wall = time.perf_counter() - start
        finally:
            stop_server(srv)
        assert not result.is_error, result
        s = DocumentsSummary.model_validate(result.structured_content)
        source = sum(tokens.count(d.text) for d in docs)
        phases = Counter(
            "map" if "indexing engine" in r.system else "master" if "overview" in r.system else "cluster"
            for r in llm.requests
        )
        return {
            "calls": len(llm.requests),
            "phases": dict(phases),
            "billed_per_source": sum(r.prompt_tokens for r in llm.requests) / source,
            "wall": wall,
            "clusters": s.index.coverage.clusters,
            "summarized": s.index.coverage.clusters_summarized,
            "removed": s.index.coverage.citations_removed,
        }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=20, help="pages from each manual")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.2, help="stand-in LLM seconds per call")
    parser.add_argument("--focus", default="")
    parser.add_argument("--embedded-only", action="store_true", help="skip the LLM path")
    args = parser.parse_args()
    docs = mixed(args.pages)
    e = await embedded(docs, args.repeats, args.budget, args.focus)
    print(
        f"documents: {e['documents']} ({args.pages} python docs + {args.pages} git manual pages), "
        f"{e['tokens']:,} tokens"
    )
    print(
        "| path | excerpts | clusters (summarized) | purity | citations valid | output tokens | wall "
        "| wall / encode (best; median) | CPU / encode CPU | per 100k tokens |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(
        f"| embedded | {e['excerpts']} | {e['clusters']} ({e['summarized']}) | {e['purity']:.3f} | "
        f"{e['valid']}/{e['ids_checked']} ({e['cited']} cited in the text) | {e['output_tokens']} | "
        f"{e['wall']:.2f} s | {e['wall'] / e['encode']:.2f}x; {e['median_ratio']:.2f}x | "
        f"{e['cpu_ratio']:.2f}x | {e['per_100k']:.3f} s |"
    )
    if args.embedded_only:
        return
    m = await with_llm(docs, args.latency, args.budget, args.focus)
    print(
        f"\nstand-in LLM ({args.latency} s/call, default MAX_CONCURRENT_LLM_CALLS): "
        f"{m['calls']} calls {m['phases']}, "
        f"billed prompt tokens / source tokens {m['billed_per_source']:.2f}, wall {m['wall']:.1f} s, "
        f"{m['clusters']} clusters ({m['summarized']} summarized), {m['removed']} citations removed"
    )


if __name__ == "__main__":
    asyncio.run(main())
