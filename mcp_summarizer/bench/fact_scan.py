"""What the fidelity receipt's scan of a source costs, against one tiktoken encode pass over it.

`source_facts` (every fact of the source, and its searchable text and words, as the engine
computes them while the LLM works) on three sources: the pages `bench.documents` summarizes
(``--pages`` from each manual, joined as `summarize_documents` joins them for its receipt), a
prefix of the python-docs corpus (``--tokens``), and a tool output of the same size
(`bench.fidelity.tool_output`: ports, ids, addresses, hashes, e-mails, file:line).  With
``--against REV`` the same function at a git revision runs in the same process, interleaved
(the order turned every repeat), so a loaded machine weighs on both alike; the facts of both
are compared.  Best and median of ``--repeats``: seconds, and ratios to the encode pass's.

    cd mcp_summarizer && ../.venv/bin/python -m bench.fact_scan [--pages 20] [--tokens 2000000]
        [--repeats 5] [--against main]
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections.abc import Callable
from typing import Any

from bench import corpus, documents
from bench.fidelity import fidelity_at, timed, tool_output
from mcp_summarizer.fidelity.receipt import source_facts
from mcp_summarizer.text import tokens


def cell(times: dict[str, list[float]], run: str) -> str:
    """Best / median seconds of ``run``, and their ratios to the encode pass's best / median."""
    best, median = min(times[run]), statistics.median(times[run])
    ratios = best / min(times["encode"]), median / statistics.median(times["encode"])
    return f"{best:.3f} s / {median:.3f} s ({ratios[0]:.2f}x / {ratios[1]:.2f}x)"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=20, help="pages from each manual (bench.documents)")
    parser.add_argument("--tokens", type=int, default=2_000_000, help="corpus and tool output size")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--against", default="", help="a git revision timed in the same run (e.g. main)")
    args = parser.parse_args()
    sources = {
        f"bench.documents pages ({args.pages} + {args.pages})": "\n\n".join(
            d.text for d in documents.mixed(args.pages)
        ),
        f"python-docs corpus ({args.tokens:,} tokens)": corpus.load(args.tokens),
        f"tool output ({args.tokens:,} tokens)": tool_output(random.Random(7), args.tokens),
    }
    encoding = tokens.encoding()
    before = fidelity_at(args.against).source_facts if args.against else None
    against = f" source_facts at {args.against} |" if before else ""
    print("| source | chars | encode | source_facts |" + against)
    print("|---|---|---|---|" + ("---|" if before else ""))
    for name, text in sources.items():
        runs: dict[str, Callable[[], Any]] = {
            "encode": lambda text=text: encoding.encode_ordinary(text),
            "now": lambda text=text: source_facts(text),
        }
        if before is not None:
            runs["before"] = lambda text=text: before(text)
            same = [(f.kind, f.key, f.text, f.start, n) for f, n in source_facts(text).facts.values()] == [
                (f.kind, f.key, f.text, f.start, n) for f, n in before(text).facts.values()
            ]
            if not same:
                raise SystemExit(f"{name}: the facts differ from {args.against}'s")
        times = timed(runs, args.repeats)
        cells = [cell(times, run) for run in ("encode", "now", "before") if run in times]
        row = [name, f"{len(text):,}", *cells]
        print("| " + " | ".join(row) + " |")
    print(f"\nseconds, best / median of {args.repeats} (ratio to the encode pass's best / median)")


if __name__ == "__main__":
    main()
