"""What checking every LLM answer costs (`summarize.degenerate`, `summarize/engine/vetting.py`)
and what holding the summary against the embedded one costs (`summarize/engine/baseline.py`).

1. The call path, with and without the check: the engine in process, the real openai client
   against the stand-in LLM of the tests (`tests.support.fake_llm.FakeLLM`, answering each call
   after ``--latency`` s with the chunk's leading words), a corpus prefix summarized to 5,000
   tokens.  "without" replaces the check by one that passes every answer as it is; the two
   alternate (ABBA), ``--repeats`` times each, in one run.  Reported: the median wall time and the
   median CPU time of this process (the stand-in's thread included, the same on both sides)
   of each, their ratios, and the check's own CPU time a call (its thread's CPU time around
   each check of the "with" runs).  ON_LOW_FIDELITY=off on both sides: only the check differs.
2. One check in its costly cases, its thread's CPU time (best of ``--repeats``), against one
   `encode_ordinary` pass over the answer: an answer that copies its chunk's words while the
   map prompt names the chunk's excerpts by their first words (the prompt-echo path looks the
   shared words up in the chunk), and a loop (the chunk's 8-grams of the repeated words are
   counted).
3. The comparison with the embedded summary: the same summary with ON_LOW_FIDELITY=off and
   =flag, alternating (ABBA); medians and ratios as in 1.  The machine is shared: wall times are
   noisy where the work is short, the CPU ratio less so.

    cd mcp_summarizer && ../.venv/bin/python -m bench.vetting [--sizes 10k,200k,1M] [--latency 0.05]
        [--repeats 5] [--parts 1,2,3]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.support.fake_llm import FakeLLM

from bench import corpus
from bench.corpus import human, table_row
from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.citations.ask import Ask
from mcp_summarizer.config import load_settings
from mcp_summarizer.summarize import degenerate
from mcp_summarizer.summarize.chunker import chunk
from mcp_summarizer.summarize.engine import Request, vetting
from mcp_summarizer.summarize.engine import prompts as engine_prompts
from mcp_summarizer.text import tokens
from shared.prompt_loader import load_prompt, render

TARGET = 5000


class Timed:
    """The check, timed: CPU seconds spent in it and how many calls."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0
        self.real = degenerate.check

    def __call__(self, answer: str, **kw: Any) -> degenerate.Verdict:
        t0 = time.thread_time()  # its thread's CPU: not the stand-in's, whose thread shares the GIL
        try:
            return self.real(answer, **kw)
        finally:
            self.seconds += time.thread_time() - t0
            self.calls += 1


def passing(answer: str, **_: Any) -> degenerate.Verdict:
    """No check: every answer as it is."""
    return degenerate.Verdict(None, text=answer.strip())


@contextmanager
def checked_by(fn: Any) -> Iterator[None]:
    saved = vetting.check
    vetting.check = fn
    try:
        yield
    finally:
        vetting.check = saved


async def summarize(llm: FakeLLM, text: str, **env: str) -> tuple[float, float]:
    """The wall and CPU seconds (this process: the stand-in's thread too) of one summary."""
    settings = load_settings(
        {"OPENROUTER_BASE_URL": llm.base_url, "LLM_MODEL": "bench/stand-in", "ON_LOW_FIDELITY": "off", **env}
    )
    engine = build_engine(settings)
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        out = await engine.summarize(Request(content=text, max_output_tokens=TARGET))
        took, cpu = time.perf_counter() - t0, time.process_time() - c0
        assert not out.degraded and not out.rejected, (out.degraded, out.cause, out.rejected)
        return took, cpu
    finally:
        await engine.aclose()


def best(fn: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.thread_time()
        fn()
        times.append(time.thread_time() - t0)
    return min(times)


def costly_cases(text: str, repeats: int) -> None:
    """Part 2: the check's costly paths on one 8,000-token chunk of ``text``."""
    piece = chunk(text, strategy="semantic", chunk_size=8000, overlap=0)[0].text
    words = piece.split()
    answer = " ".join(words[:400])  # ~500 tokens copied from the chunk
    starts = list(range(0, len(piece), 600))
    ask = Ask(piece, (), starts)
    template = load_prompt(engine_prompts.__file__, "map_general")
    system = render(
        template, focus_instructions="", citations=ask.map_values(None)["citations"], max_tokens=500
    )
    loop = ("The summary is then used to create a summary of the topic itself. " * 40).strip()
    table_row("case", "answer tokens", "chunk tokens", "check ms", "encode ms (answer)", "ratio")
    table_row("---", "---:", "---:", "---:", "---:", "---:")
    for name, ans in (("copies the chunk, prompt lists its excerpts", answer), ("a loop", loop)):
        verdict = degenerate.check(ans, prompt=system, given=piece)
        assert (verdict.reason is None) == (ans is answer), verdict
        check_s = best(lambda a=ans: degenerate.check(a, prompt=system, given=piece), repeats)
        enc_s = best(lambda a=ans: tokens.encoding().encode_ordinary(a), repeats)
        table_row(
            name,
            f"{tokens.count(ans):,}",
            f"{tokens.count(piece):,}",
            f"{check_s * 1000:.2f}",
            f"{enc_s * 1000:.2f}",
            f"{check_s / enc_s:.1f}x",
        )


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10k,200k,1M")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--parts", default="1,2,3", help="which of the three measures to run")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    texts = corpus.load_sizes(args.sizes)
    if texts is None:
        raise SystemExit(2)
    print(f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, stand-in latency {args.latency} s\n")
    async with FakeLLM(latency=args.latency) as llm:
        await summarize(llm, texts[min(texts)])  # warm-up: the client, the tokenizer, the prompts
        if "1" in parts:
            print("1. The call path with and without the check (medians: wall s, process CPU s)\n")
            table_row("size", "exact tokens", "LLM calls", "without", "with", "wall ratio", "CPU ratio")
            table_row("---", "---:", "---:", "---:", "---:", "---:", "---:")
            for size, text in texts.items():
                without, with_, timed = [], [], Timed()
                for k in range(args.repeats):
                    for side in ("without", "with") if k % 2 == 0 else ("with", "without"):  # ABBA
                        llm.reset()
                        with checked_by(timed if side == "with" else passing):
                            (with_ if side == "with" else without).append(await summarize(llm, text))
                        calls = llm.calls
                row(human(size), f"{tokens.count(text):,}", calls, without, with_)
                print(f"  (the check: {timed.seconds / max(timed.calls, 1) * 1000:.2f} ms CPU a call)")
        if "2" in parts:
            print("\n2. One check in its costly cases (best of the repeats, the thread's CPU)\n")
            costly_cases(texts[max(texts)], args.repeats)
        if "3" in parts:
            print("\n3. The comparison with the embedded summary (medians: wall s, process CPU s)\n")
            table_row("size", "exact tokens", "LLM calls", "off", "flag", "wall ratio", "CPU ratio")
            table_row("---", "---:", "---:", "---:", "---:", "---:", "---:")
            for size, text in texts.items():
                off, flag = [], []
                for k in range(args.repeats):
                    for policy in ("off", "flag") if k % 2 == 0 else ("flag", "off"):  # ABBA
                        llm.reset()
                        (off if policy == "off" else flag).append(
                            await summarize(llm, text, ON_LOW_FIDELITY=policy)
                        )
                        calls = llm.calls
                row(human(size), f"{tokens.count(text):,}", calls, off, flag)


def row(
    size: str, exact: str, calls: int, a: list[tuple[float, float]], b: list[tuple[float, float]]
) -> None:
    wa, wb = statistics.median(w for w, _ in a), statistics.median(w for w, _ in b)
    ca, cb = statistics.median(c for _, c in a), statistics.median(c for _, c in b)
    table_row(
        size, exact, calls, f"{wa:.3f} / {ca:.3f}", f"{wb:.3f} / {cb:.3f}", f"{wb / wa:.3f}", f"{cb / ca:.3f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
