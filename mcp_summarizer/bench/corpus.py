"""Load a prefix of the benchmark corpus (built by build_corpus.py) of about n cl100k tokens.

Whole pages are taken in corpus order while they fit; the remainder is filled with whole
lines of the next page, so the text always ends at a line boundary and has at most n tokens.
The pages' counts are each page's alone, and tokens may merge or split where two pages meet,
so the prefix is counted whole at the end and cut back by lines while it is over (a benchmark
that asks for MAX_INPUT_TOKENS must not get one token more).  Count the result with
`tokens.count` for the exact figure.
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path

from mcp_summarizer.text import tokens

DATA_DIR = Path(__file__).resolve().parent / "data"


class CorpusMissing(FileNotFoundError):
    pass


@cache
def _corpus(data_dir: Path) -> tuple[str, tuple[tuple[int, int, int], ...]]:
    """The corpus text and its pages as (start, end, tokens)."""
    corpus, index = data_dir / "corpus.md", data_dir / "index.tsv"
    if not corpus.is_file() or not index.is_file():
        raise CorpusMissing(
            f"no corpus in {data_dir}: run `cd mcp_summarizer && python -m bench.build_corpus` first"
        )
    rows = index.read_text(encoding="utf-8").splitlines()[1:]
    pages = tuple((int(s), int(e), int(t)) for _, s, e, t in (row.split("\t") for row in rows))
    return corpus.read_text(encoding="utf-8"), pages


def load(n_tokens: int, data_dir: Path = DATA_DIR) -> str:
    """The first n_tokens at most of the corpus, cut at a page boundary or else a line boundary."""
    prefix = _pages_prefix(n_tokens, data_dir)
    while prefix and (over := tokens.count(prefix) - n_tokens) > 0:
        prefix = _without_last_lines(prefix, over)
    return prefix


def _without_last_lines(text: str, over: int) -> str:
    """``text`` less its last lines, at least one, whose own tokens add up to ``over``."""
    lines = text.splitlines(keepends=True)
    dropped = 0
    while lines and (dropped < over or not dropped):
        dropped += max(1, tokens.count(lines.pop()))
    return "".join(lines)


def _pages_prefix(n_tokens: int, data_dir: Path) -> str:
    """About the first n_tokens of the corpus by the pages' own counts."""
    text, pages = _corpus(data_dir)
    end, used = 0, 0
    for start, stop, count in pages:
        if used + count > n_tokens:
            lines = text[start:stop].splitlines(keepends=True)
            budget = n_tokens - used
            lo, hi = 0, len(lines)  # the largest number of lines whose tokens fit in budget
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if tokens.count("".join(lines[:mid])) <= budget:
                    lo = mid
                else:
                    hi = mid - 1
            return text[: start + sum(map(len, lines[:lo]))] if lo else text[:end]
        end, used = stop, used + count
    return text[:end]


def load_sizes(spec: str, data_dir: Path = DATA_DIR) -> dict[int, str] | None:
    """Corpus prefixes for a comma-separated list such as "200k,1M"; None (and a message on
    stderr) when the corpus has not been built."""
    try:
        return {n: load(n, data_dir) for n in map(parse_size, spec.split(","))}
    except CorpusMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def parse_size(value: str) -> int:
    """'10k' -> 10_000, '1M' -> 1_000_000, '500' -> 500."""
    scale = {"k": 1_000, "m": 1_000_000}.get(value[-1].lower(), 1)
    return int(float(value[:-1] if scale > 1 else value) * scale)


def human(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k" if n % 1000 == 0 else str(n)


def table_row(*cells: object) -> None:
    """Print one row of a markdown table."""
    print("| " + " | ".join(map(str, cells)) + " |", flush=True)


def man_page(path: Path) -> str:
    """A manual page (``*.1.gz``) as plain text: rendered by `man`, bold and underline
    overstrikes removed.  The second real source of the documents and fidelity benchmarks."""
    text = subprocess.run(
        ["man", "-l", str(path)],
        capture_output=True,
        text=True,
        env={"MANWIDTH": "100", "PATH": "/usr/bin:/bin"},
    ).stdout
    return re.sub(r".\x08", "", text)
