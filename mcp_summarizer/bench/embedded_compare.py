"""The embedded summary's cost, this checkout against another (the previous main), side by side.

Each round runs one child process per version, in alternating order; a child times
`extractive.summarize(text, budget)` ("summarize") and the engine's whole answer without an
LLM (`Engine.summarize`: chrome removed, text counted, summary, fidelity receipt: "engine"),
each against one `encode_ordinary` pass over the same text timed in the same child, so a
ratio is measured under the load of its moment.  The table gives each version's median
ratio over the rounds and their quotient (after / before): a change that costs 10% more
reads 1.10x.  The inputs: corpus prefixes (`bench.corpus`) and the repository's own .md and
.py files joined (2.4 MB of mixed prose and code).

    git archive main mcp_summarizer/mcp_summarizer shared/shared | tar -x -C /tmp/before
    cd mcp_summarizer && python -m bench.embedded_compare --before /tmp/before [--rounds 5]
        [--sizes 200k,1M] [--budget 5000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench.corpus import CorpusMissing, load, parse_size, table_row

HERE = Path(__file__).resolve().parents[2]  # the checkout this file is in

_CHILD = r"""
import asyncio, gc, json, sys, time
from mcp_summarizer.config import load_settings
from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.summarize import extractive
from mcp_summarizer.summarize.engine import Request
from mcp_summarizer.text import tokens

text, budget, mode = open(sys.argv[1], encoding="utf-8").read(), int(sys.argv[2]), sys.argv[3]
encode = tokens.encoding().encode_ordinary
engine = build_engine(load_settings({}))
extractive.summarize(text[:20000], 200)  # warm-up: regexes compiled, vocabulary loaded

def timed(fn):
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0

base = timed(lambda: encode(text))
if mode == "summarize":
    ours = timed(lambda: extractive.summarize(text, budget))
else:
    ours = timed(lambda: asyncio.run(engine.summarize(Request(content=text, max_output_tokens=budget))))
base = min(base, timed(lambda: encode(text)))
print(json.dumps({"base": base, "ours": ours}))
"""


def child(root: Path, path: Path, budget: int, mode: str) -> dict[str, float]:
    """One measurement in a fresh process that imports the packages under ``root``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(root / p) for p in ("mcp_summarizer", "shared"))}
    for name in list(env):
        if name.startswith(("OPENROUTER_", "LLM_", "SUMMARIZER_")):
            del env[name]  # the embedded backend, whatever the shell has
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), str(budget), mode],
        env=env,
        cwd=path.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def repository_text() -> str:
    names = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.md", "*.py"], cwd=HERE, capture_output=True, check=True
    ).stdout.decode()
    return "".join((HERE / n).read_text(encoding="utf-8") for n in sorted(names.strip("\0").split("\0")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", type=Path, required=True, help="a tree with mcp_summarizer/ and shared/")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="200k,1M", help="corpus prefixes (default: %(default)s)")
    parser.add_argument("--budget", type=int, default=5000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/embedded_compare"))
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    inputs: dict[str, Path] = {}
    try:
        for size in args.sizes.split(","):
            inputs[f"python docs {size}"] = args.work / f"corpus-{size}.md"
            inputs[f"python docs {size}"].write_text(load(parse_size(size)), encoding="utf-8")
    except CorpusMissing as exc:
        print(f"(no corpus: {exc})", file=sys.stderr)
    inputs["this repository's .md and .py"] = args.work / "repository.txt"
    inputs["this repository's .md and .py"].write_text(repository_text(), encoding="utf-8")
    versions = {"before": args.before.resolve(), "after": HERE}
    print(f"{args.rounds} rounds, budget {args.budget:,}, versions alternating; ratios to one encode pass\n")
    table_row("input", "chars", "step", "before (median)", "after (median)", "after / before")
    print("|---|---:|---|---:|---:|---:|")
    for label, path in inputs.items():
        for mode in ("summarize", "engine"):
            ratios: dict[str, list[float]] = {"before": [], "after": []}
            for r in range(args.rounds):
                for version in ("before", "after") if r % 2 == 0 else ("after", "before"):
                    m = child(versions[version], path, args.budget, mode)
                    ratios[version].append(m["ours"] / m["base"])
            before, after = (statistics.median(ratios[v]) for v in ("before", "after"))
            chars = len(path.read_text(encoding="utf-8"))
            table_row(label, f"{chars:,}", mode, f"{before:.2f}x", f"{after:.2f}x", f"{after / before:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
