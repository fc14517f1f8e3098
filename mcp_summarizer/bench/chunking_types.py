"""Chunking time by input type, as a ratio to one `encode_ordinary` pass over the same text
(issue 14's goal 3: at most 1.3x for the semantic strategy, 1.15x for token windows).

Each repeat times the baseline and each strategy back to back, order rotated, so a noisy
moment hits all of them; reported are the ratio of best times and the median of the
per-repeat ratios.  Inputs (about 1M tokens unless named): the Python docs as markdown (the
corpus of build_corpus.py), generated prose in paragraphs, 50,000 tiny paragraphs, CJK text
in paragraphs, and 300k tokens without a newline (words, a base64-like blob, CJK without
spaces, one letter repeated).  ``--clock cpu`` times CPU seconds of the process (all its
threads) instead of wall time: steadier on a shared machine.

    cd mcp_summarizer && ../.venv/bin/python -m bench.chunking_types \
        [--repeats 7] [--inputs "no newline"] [--clock cpu]
"""

from __future__ import annotations

import argparse
import base64
import gc
import os
import random
import statistics
import time
from collections.abc import Callable

from bench import corpus
from mcp_summarizer.summarize.chunker import chunk
from mcp_summarizer.text import tokens
from mcp_summarizer.text.offsets import GrowingOffsets


def inputs() -> dict[str, str]:
    rng = random.Random(7)
    words = "the of and to in is was for on that with as by at from lore quest zone faction gate".split()

    def prose(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    out = {}
    try:
        out["python docs (markdown)"] = corpus.load(1_000_000)
    except corpus.CorpusMissing as exc:
        print(f"(skipping the python docs: {exc})")
    out["prose paragraphs"] = "\n\n".join(prose(120) + "." for _ in range(8000))
    out["50k tiny paragraphs"] = "\n\n".join(prose(6) for _ in range(50_000))
    out["CJK paragraphs"] = "\n\n".join(
        "東京は日本の首都です。人口は約千四百万人です。" * 8 for _ in range(12_000)
    )
    out["no newline, words (300k)"] = prose(280_000)
    out["no newline, base64 (300k)"] = base64.b64encode(rng.randbytes(520_000)).decode()
    out["no newline, CJK (300k)"] = "東京は日本の首都です人口は約千四百万人です" * 14_000
    out["no newline, one letter (300k)"] = "a" * 2_400_000
    return out


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def timed(fn: Callable[[], object], clock: Callable[[], float]) -> float:
    gc.collect()
    start = clock()
    fn()
    return clock() - start


def main(repeats: int, only: str, clock_name: str) -> None:
    enc = tokens.encoding()
    clock = CLOCKS[clock_name]
    load = os.getloadavg()[0]
    print(f"nproc {os.cpu_count()}, load average {load:.2f}, {repeats} repeats, {clock_name} time\n")
    print(
        "| input | tokens | semantic: best ratio / paired median | token: best ratio / paired median "
        "| semantic streamed (GrowingOffsets, as the engine does): best / paired |"
    )
    print("|---|---|---|---|---|")
    for name, text in inputs().items():
        if only not in name:
            continue
        runs: dict[str, list[float]] = {"encode": [], "semantic": [], "token": [], "streamed": []}
        jobs: dict[str, Callable[[], object]] = {
            "encode": lambda text=text: enc.encode_ordinary(text),
            "semantic": lambda text=text: chunk(text, strategy="semantic", chunk_size=8000, overlap=500),
            "token": lambda text=text: chunk(text, strategy="token", chunk_size=8000, overlap=500),
            "streamed": lambda text=text: chunk(
                text, chunk_size=8000, overlap=500, offsets=GrowingOffsets(text), on_chunk=lambda c: None
            ),
        }
        order = list(jobs)
        jobs["semantic"]()  # warm caches (the vocabulary's byte lengths) outside the timing
        for r in range(repeats):
            for key in order[r % len(order) :] + order[: r % len(order)]:
                runs[key].append(timed(jobs[key], clock))
        cells = []
        for key in ("semantic", "token", "streamed"):
            best = min(runs[key]) / min(runs["encode"])
            paired = statistics.median(c / e for c, e in zip(runs[key], runs["encode"], strict=True))
            cells.append(f"{best:.2f}x / {paired:.2f}x")
        print(f"| {name} | {tokens.count(text):,} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--inputs", default="", help="only the inputs whose name holds this")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    args = parser.parse_args()
    main(args.repeats, args.inputs, args.clock)
