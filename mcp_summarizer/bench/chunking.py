"""Chunking benchmark: chunkers timed as a ratio to one cl100k encoding pass of the same text.

Every candidate is timed interleaved with the baseline `tokens.encoding().encode_ordinary(text)`
(baseline and candidate alternate within each repeat, order flipped every repeat), and the
ratio of best-of-N times is reported, so noise on a shared machine hits both sides; the
median of the per-repeat ratios (each candidate run over its neighbouring baseline run) is
shown beside it as a cross-check that is less sensitive to one lucky baseline run.
Chunker objects are built fresh for every repeat outside the timed region, so no repeat
benefits from a token-count cache warmed by the one before.  Chunk counts, chunks over the
limit and our coverage check are computed outside the timed region.

    cd mcp_summarizer && python -m bench.chunking [--sizes 10k,200k,1M] [--repeats N]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

import chonkie
import semchunk

from bench import corpus
from bench.corpus import human, table_row
from mcp_summarizer.text import tokens

CHUNK_SIZE = 8000
OVERLAP = 500
COLUMNS = ("size", "exact tokens", "chunker", "encode s", "chunker s", "ratio", "paired median")
COLUMNS += ("chunks", "> 8000", "max tokens", "lossless")

# chonkie's "markdown" recipe (recipes/markdown_en.json v0.1.0 of the chonkie-ai/recipes
# dataset).  `RecursiveChunker.from_recipe` downloads it from the HuggingFace hub, which is
# not allowed here (and imports huggingface_hub even when given a local path), so the same
# rules are built locally with `RecursiveRules.from_dict`.
CHONKIE_MARKDOWN_RECIPE: dict[str, Any] = {
    "levels": [
        {
            "delimiters": ["######", "#####", "####", "###", "##", "#"],
            "whitespace": False,
            "include_delim": "next",
        },
        {"delimiters": ["\n\n", "\n\r"], "whitespace": False, "include_delim": "prev"},
        {"delimiters": ["\n", "\r"], "whitespace": False, "include_delim": "prev"},
        {"delimiters": [".", "!", "?"], "whitespace": False, "include_delim": "prev"},
        {"delimiters": None, "whitespace": False, "include_delim": "prev"},
    ]
}


@dataclass(frozen=True)
class Candidate:
    name: str
    make: Callable[[], Callable[[str], Any]]  # a fresh chunker; called outside the timed region
    texts: Callable[[Any], list[str]]  # chunk texts of a result


def _ours(strategy: str) -> Candidate:
    from mcp_summarizer.summarize.chunker import chunk

    def make() -> Callable[[str], Any]:
        return lambda text: chunk(text, strategy=strategy, chunk_size=CHUNK_SIZE, overlap=OVERLAP)

    return Candidate(f"ours {strategy}", make, lambda result: [c.text for c in result])


def _chonkie() -> Candidate:
    rules = chonkie.RecursiveRules.from_dict(CHONKIE_MARKDOWN_RECIPE)

    def make() -> Callable[[str], Any]:
        chonkie.RecursiveChunker._estimate_token_count.cache_clear()  # an lru_cache shared by instances
        chunker = chonkie.RecursiveChunker(tokenizer=tokens.encoding(), chunk_size=CHUNK_SIZE, rules=rules)
        return chunker.chunk

    return Candidate("chonkie recursive markdown", make, lambda result: [c.text for c in result])


def _semchunk(overlap: int | None) -> Candidate:
    def make() -> Callable[[str], Any]:
        semchunk.semchunk._memoized_token_counters.clear()  # memoized counters live in a module dict
        chunker = semchunk.chunkerify(tokens.encoding(), CHUNK_SIZE)
        return lambda text: chunker(text, overlap=overlap)

    return Candidate(f"semchunk overlap={overlap or 0}", make, list)


def candidates() -> list[Candidate]:
    found = [_chonkie(), _semchunk(OVERLAP), _semchunk(None)]
    try:
        found[:0] = [_ours("semantic"), _ours("token")]
    except ImportError as exc:
        print(f"warning: our chunker is not importable yet ({exc}); skipping it", file=sys.stderr)
    return found


def coverage(text: str, chunks: list[Any]) -> str:
    """'yes' if each chunk's text ends with its body text[start:end] and the bodies cover the
    whole source in order (neighbours may overlap, never leave a gap), else the first problem."""
    pos, last_start = 0, 0
    for i, c in enumerate(chunks):
        if not c.text.endswith(text[c.start : c.end]):
            return f"no: chunk {i} text does not end with text[{c.start}:{c.end}]"
        if c.start > pos or c.start < last_start or c.end < pos:
            kind = "whitespace gap" if text[pos : c.start].isspace() else "gap/out of order"
            return f"no: {kind} at {pos}..{c.start} (chunk {i})"
        pos, last_start = c.end, c.start
    return "yes" if pos == len(text) else f"no: ends at {pos} of {len(text)}"


def _timed(fn: Callable[[str], Any], text: str) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    result = fn(text)
    return time.perf_counter() - t0, result


def measure(candidate: Candidate, text: str, repeats: int) -> dict[str, Any]:
    encode = tokens.encoding().encode_ordinary
    base, cand, result = [], [], None
    encode(text[:2000])  # warm-up: lazy imports and caches, outside the measurements
    candidate.make()(text[:2000])
    for r in range(repeats):
        fn = candidate.make()
        for side in ("base", "cand") if r % 2 == 0 else ("cand", "base"):
            if side == "base":
                base.append(_timed(encode, text)[0])
            else:
                seconds, result = _timed(fn, text)
                cand.append(seconds)
    counts = [tokens.count(t) for t in candidate.texts(result)]
    row = {
        "base": min(base),
        "cand": min(cand),
        "ratio": min(cand) / min(base),
        "paired": statistics.median(c / b for b, c in zip(base, cand, strict=True)),
        "chunks": len(counts),
        "over": sum(n > CHUNK_SIZE for n in counts),
        "max": max(counts, default=0),
        "lossless": "n/a",
    }
    if candidate.name.startswith("ours"):
        row["lossless"] = coverage(text, result)
        wrong = sum(c.tokens != n for c, n in zip(result, counts, strict=True))
        if wrong:
            row["lossless"] += f"; {wrong} chunks with a wrong .tokens"
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", default="10k,200k,1M", help="corpus prefixes in tokens (default: %(default)s)"
    )
    parser.add_argument("--repeats", type=int, help="best of N (default: 5 below 1M tokens, 3 from 1M)")
    args = parser.parse_args(argv)
    texts = corpus.load_sizes(args.sizes)
    if texts is None:
        return 2
    failed = False
    print(
        f"chunk_size={CHUNK_SIZE}, overlap={OVERLAP}; {date.today()}, {os.cpu_count()} cpus, "
        f"python {sys.version.split()[0]}\n"
    )
    table_row(*COLUMNS)
    print("|---|---:|---|" + "---:|" * 7 + "---|")
    chunkers = candidates()
    for n, text in texts.items():
        repeats = args.repeats or (3 if n >= 1_000_000 else 5)
        head = (f"{human(n)} (best of {repeats})", f"{tokens.count(text):,}")
        for candidate in chunkers:
            try:
                r = measure(candidate, text, repeats)
            except Exception as exc:  # report and go on with the other candidates
                failed = True
                table_row(
                    *head, candidate.name, f"error: {type(exc).__name__}: {exc}", *[""] * (len(COLUMNS) - 4)
                )
                continue
            table_row(
                *head,
                candidate.name,
                f"{r['base']:.4f}",
                f"{r['cand']:.4f}",
                f"{r['ratio']:.2f}x",
                f"{r['paired']:.2f}x",
                r["chunks"],
                r["over"],
                r["max"],
                r["lossless"],
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
