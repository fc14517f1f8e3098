"""Needle recovery: can an agent that reads a 2,000-token summary find a fact the summary
left out?  50 facts planted in haystacks of 150k, 500k and 2M tokens.

Haystack: the python-docs corpus (build_corpus.py) with git's manual pages rendered by `man`
(a fifth of it, at most 300k tokens), the facts planted as paragraphs of their own, evenly
from start to end.  Each fact has a question an agent would ask, in words that are not the
answer ("Which port does the zorblax relay on node-7 listen on?").

Driven through the real MCP client against the real server started as a subprocess, on its
embedded extractive summarizer (no LLM): `summarize_documents` summarizes the haystack to
2,000 tokens (and keeps its excerpts in the content store); then, for each fact, a fixed
agent policy reads the summary and makes at most two calls:

1. `search(handle, question)` (max_tokens 2,000), handle the document id the summary cites;
2. `expand` of the best passage's id from its offset (max_tokens 2,000): the excerpt on
   from that passage.

(A fact already in the summary needs no call.)

A fact counts as recovered when its exact sentence is in what the agent read.  Side by side:
summary-only (the sentence in the summary), truncation (in the first 2,000 tokens of the
haystack) and summary+search.

    cd mcp_summarizer && ../.venv/bin/python bench/recovery.py [--sizes 150k,500k,2M] [--seed 7]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import random
import re
import time
from dataclasses import dataclass
from typing import Any

from mcp import Client
from tests.support.servers import start_server, stop_server

from bench import corpus
from bench.fidelity import FIRST, LAST, WORDS, git_manual, plant
from mcp_summarizer.text import tokens

FACTS = 50
BUDGET = 2000
_ID = re.compile(r"^\[([^\]\s]+#\d+)\] \(offset (\d+)\) ", re.M)


@dataclass(frozen=True)
class Fact:
    sentence: str
    question: str
    fraction: float


def make_facts(rng: random.Random, n: int) -> list[Fact]:
    pairs = [(a, b) for a in WORDS for b in WORDS if a != b]
    rng.shuffle(pairs)
    facts = []
    for i, (a, b) in enumerate(pairs[:n]):
        where = (i + rng.random()) / n
        kind = i % 5
        if kind == 0:
            port = rng.randint(1025, 65535)
            s = f"The {a} {b} relay on node-{i} listens on port {port}."
            q = f"Which port does the {a} {b} relay on node-{i} listen on?"
        elif kind == 1:
            d = f"{rng.randint(1990, 2029)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            s = f"The {a} {b} release shipped on {d} after review."
            q = f"When did the {a} {b} release ship?"
        elif kind == 2:
            name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
            s = f"The {a} {b} module was written by {name} years ago."
            q = f"Who wrote the {a} {b} module?"
        elif kind == 3:
            v = rng.randint(2, 512)
            s = f"Set {a}_{b}_limit to {v} to enable the strict {a} mode."
            q = f"What value of the {a} {b} limit enables the strict {a} mode?"
        else:
            v = rng.randint(2, 64)
            s = f"The {a} {b} cache is not {v} GB in size."
            q = f"How big is the {a} {b} cache?"
        facts.append(Fact(s, q, where))
    return facts


def haystack(n_tokens: int, facts: list[Fact]) -> str:
    man = min(n_tokens // 5, 300_000)
    text = corpus.load(n_tokens - man) + "\n\n" + git_manual(man)
    planted = plant(text, [_Plant(f.sentence, f.fraction) for f in facts])
    return planted


@dataclass(frozen=True)
class _Plant:  # what fidelity.plant reads
    sentence: str
    fraction: float


def text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


async def run_size(url: str, n_tokens: int, seed: int) -> dict[str, Any]:
    facts = make_facts(random.Random(seed), FACTS)
    text = haystack(n_tokens, facts)
    size = tokens.count(text)
    first = tokens.truncate(text, BUDGET)
    async with Client(url) as c:
        t0 = time.perf_counter()
        result = await c.call_tool(
            "summarize_documents",
            {"documents": [{"id": "haystack", "text": text}], "max_output_tokens": BUDGET},
        )
        summarize_s = time.perf_counter() - t0
        if result.is_error:
            raise SystemExit(f"summarize_documents failed: {text_of(result)}")
        summary = text_of(result)
        handle = (
            result.structured_content["documents"][0]["id"]
            + "~"
            + result.structured_content["documents"][0]["version"]
        )
        counts = {"summary-only": 0, "truncation": 0, "search alone": 0, "in expand": 0, "summary+search": 0}
        calls, search_s, missed = 0, 0.0, []
        for f in facts:
            counts["summary-only"] += f.sentence in summary
            counts["truncation"] += f.sentence in first
            read = summary
            if f.sentence not in read:  # the policy: search, then expand the best passage
                t0 = time.perf_counter()
                found = await c.call_tool(
                    "search", {"handle": handle, "query": f.question, "max_tokens": BUDGET}
                )
                search_s += time.perf_counter() - t0
                calls += 1
                read += "\n" + text_of(found)
                counts["search alone"] += f.sentence in read
                best = _ID.search(text_of(found))
                if best:
                    opened = await c.call_tool(
                        "expand",
                        {"source_id": best.group(1), "offset": int(best.group(2)), "max_tokens": BUDGET},
                    )
                    calls += 1
                    read += "\n" + text_of(opened)
                    counts["in expand"] += f.sentence in text_of(opened)
            if f.sentence in read:
                counts["summary+search"] += 1
            else:
                missed.append(f.question)
    return {
        "size": size,
        "summary_tokens": tokens.count(summary),
        "summarize_s": summarize_s,
        "counts": counts,
        "calls": calls,
        "search_s": search_s,
        "searches": sum(1 for f in facts if f.sentence not in summary),
        "missed": missed,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="150k,500k,2M")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    server = start_server(
        {
            "SUMMARIZER_BACKEND": "extractive",
            "LOG_LEVEL": "WARNING",
            "MAX_INPUT_TOKENS": "3000000",
            "MAX_INFLIGHT_INPUT_TOKENS": "8000000",
        }
    )
    try:
        print(
            f"bench/recovery.py --sizes {args.sizes} --seed {args.seed}, {datetime.date.today()}, "
            f"{FACTS} facts, summaries of {BUDGET} tokens (extractive), real MCP client over HTTP\n"
        )
        corpus.table_row(
            "haystack",
            "tokens",
            "summary-only",
            "truncation",
            "summary+search",
            "of which by the 1st call (search)",
            "2nd call (expand) page holds it",
            "calls",
            "summarize s",
            "search s (mean)",
        )
        corpus.table_row(*["---"] * 10)
        for n in map(corpus.parse_size, args.sizes.split(",")):
            r = asyncio.run(run_size(server.url, n, args.seed))
            c = r["counts"]
            corpus.table_row(
                corpus.human(n),
                r["size"],
                f"{c['summary-only']}/{FACTS}",
                f"{c['truncation']}/{FACTS}",
                f"{c['summary+search']}/{FACTS}",
                f"{c['search alone']}/{FACTS}",
                f"{c['in expand']}/{c['search alone']}",
                r["calls"],
                f"{r['summarize_s']:.1f}",
                f"{r['search_s'] / max(r['searches'], 1):.2f}",
            )
            for q in r["missed"]:
                print(f"  missed at {corpus.human(n)}: {q}", flush=True)
    finally:
        stop_server(server)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
