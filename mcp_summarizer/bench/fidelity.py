"""Planted-facts benchmark: what summaries keep, from where, and whether the receipt says so.

Two real documents (a slice of the python-docs corpus, and git's manual pages rendered with
`man`), each with 60 facts planted at known positions from start to end (numbers with units,
dates, names, identifiers, URLs, negations; one of each kind in every tenth), generated from
a seed (``--seeds N``: the means over N seeds).  Each is summarized at 2%, 5% and 10% of its
length by:

* extractive: the embedded backend (`summarize.extractive`),
* truncation: the first N tokens (the baseline),
* llm: the service's map-reduce against an OpenAI-compatible endpoint (``--llm-url``; with the
  stand-in of the tests it only proves the plumbing: `--llm-url stand-in`),
* llm+repair (``--repair``): the same with FIDELITY_REPAIR=true, and a table of what the repair
  costs (LLM calls, share of summaries repaired) and gains (recall, focus recall, invented).

Reported: recall of the planted facts by kind and by position decile, recall of the facts
the focus names (5 planted identifiers and names), the share of the summary's facts the
receipt calls possibly invented, and the receipt's accuracy on the planted facts (it says
"kept" exactly when the planted sentence's fact is in the summary).  Also the receipt's cost
as a ratio to one `encode_ordinary` pass over the source.

    cd mcp_summarizer && ../.venv/bin/python -m bench.fidelity [--tokens 60000] [--seed 7] [--seeds 8]
        [--llm-url http://localhost:8000/v1 --llm-model my-model --llm-key KEY] [--repair]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import gc
import importlib
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from bench import corpus
from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.config import load_settings
from mcp_summarizer.fidelity.facts import facts
from mcp_summarizer.fidelity.receipt import SourceFacts, receipt, source_facts
from mcp_summarizer.summarize import extractive
from mcp_summarizer.summarize.engine import Request
from mcp_summarizer.text import tokens

FIRST = "Aldric Brenna Corvin Dalia Eamon Fiora Garrick Helena Ivor Jessa Kestrel Lorcan Maren Nolan".split()
LAST = "Ashford Blackwood Crane Dunmore Everhart Fairbanks Greaves Holloway Ironside Kingsley".split()
WORDS = "zorblax quintor velmar trindle oskup fenwick marrow galdor pellix rundle sorvik tamber".split()


@dataclass(frozen=True)
class Plant:
    kind: str
    key: str  # the fact as the receipt normalizes it
    sentence: str
    fraction: float  # where in the document, 0..1


def make_plants(rng: random.Random, n: int) -> list[Plant]:
    plants = []
    for i in range(n):
        # Anywhere in its 1/n of the document, drawn per seed: at fixed places (the middle of
        # each slot) every seed planted next to the same six passages per tenth, and the
        # deciles compared those passages, not positions.
        where = (i + rng.random()) / n
        kind = ("number", "date", "name", "identifier", "url", "negation")[i % 6]
        a, b = rng.choice(WORDS), rng.choice(WORDS)
        if kind == "number":
            v = rng.randint(101, 9999)
            plants.append(Plant(kind, f"{v}km", f"The {a} survey measured {v} km of {b} roads.", where))
        elif kind == "date":
            d = f"{rng.randint(1990, 2029)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            plants.append(Plant(kind, d, f"The {a} release shipped on {d} after review.", where))
        elif kind == "name":
            name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
            plants.append(
                Plant(kind, name.casefold(), f"The {a} module was written by {name} years ago.", where)
            )
        elif kind == "identifier":
            ident = f"{a}_{b}_{i}"
            plants.append(Plant(kind, ident, f"Set the option `{ident}` to enable the {a} mode.", where))
        elif kind == "url":
            url = f"https://plant.example/{a}/{b}{i}"
            plants.append(Plant(kind, url, f"The {a} guide is at {url} for reference.", where))
        else:
            v = rng.randint(2, 64)
            plants.append(Plant(kind, f"not {v}gb", f"The {a} cache is not {v} GB in size.", where))
    return plants


def plant(text: str, plants: list[Plant]) -> str:
    """Each planted sentence as its own paragraph, at the paragraph break nearest its place."""
    breaks = [m.start() for m in re.finditer(r"\n\n", text)] or [len(text)]
    inserts: dict[int, list[str]] = defaultdict(list)
    for p in plants:
        target = int(p.fraction * len(text))
        at = min(breaks, key=lambda b: abs(b - target))
        inserts[at].append(p.sentence)
    out, last = [], 0
    for at in sorted(inserts):
        out.append(text[last:at])
        out.append("\n\n" + "\n\n".join(inserts[at]))
        last = at
    out.append(text[last:])
    return "".join(out)


def git_manual(n_tokens: int) -> str:
    parts, total = [], 0
    for page in sorted(Path("/usr/share/man/man1").glob("git-*.1.gz")):
        text = corpus.man_page(page)
        parts.append(text)
        total += tokens.count(text)
        if total >= n_tokens:
            break
    return tokens.truncate("\n\n".join(parts), n_tokens)


def kept_plant(p: Plant, summary: str) -> bool:
    """Ground truth: the planted fact appears in the summary as written."""
    fact = {
        "number": lambda: re.search(rf"\b{p.key[:-2]} km\b", summary),
        "negation": lambda: re.search(rf"not {p.key[4:-2]} GB", summary),
        "name": lambda: p.key in summary.casefold(),
    }.get(p.kind, lambda: p.key in summary)()
    return bool(fact)


def evaluate(source: str, summary: str, plants: list[Plant], focus_plants: list[Plant]) -> dict[str, object]:
    r = receipt(source, summary, " ".join(p.key for p in focus_plants))
    truth = [kept_plant(p, summary) for p in plants]
    said = [(p.kind, p.key) in r.kept_keys for p in plants]
    by_kind: dict[str, list[bool]] = defaultdict(list)
    by_decile: dict[int, list[bool]] = defaultdict(list)
    for p, t in zip(plants, truth, strict=True):
        # The plants the focus names are kept almost always (that is what a focus is for) and
        # all five sit in the first seven tenths: counted here, they made the first tenths
        # look better than the last for a reason that has nothing to do with position.
        if p in focus_plants:
            continue
        by_kind[p.kind].append(t)
        by_decile[min(int(p.fraction * 10), 9)].append(t)
    summary_facts = sum(1 for _ in facts(summary))
    focus_truth = [kept_plant(p, summary) for p in focus_plants]
    return {
        "recall": sum(truth) / len(truth),
        "kind": {k: sum(v) / len(v) for k, v in sorted(by_kind.items())},
        "decile": [sum(by_decile[d]) / max(len(by_decile[d]), 1) for d in range(10)],
        "focus": sum(focus_truth) / len(focus_truth),
        "invented": r.invented_facts / max(summary_facts, 1),
        "receipt_accuracy": sum(a == b for a, b in zip(truth, said, strict=True)) / len(truth),
    }


async def llm_summary(
    url: str, model: str, key: str, text: str, budget: int, focus: str, repair: bool
) -> tuple[str, dict[str, float]]:
    """The LLM path's summary, and its LLM calls and whether a repair call was made."""
    engine = build_engine(
        load_settings(
            {
                "OPENROUTER_BASE_URL": url,
                "OPENROUTER_API_KEY": key,
                "LLM_MODEL": model,
                "ON_LLM_FAILURE": "truncate",
                "FIDELITY_REPAIR": "true" if repair else "false",
            }
        )
    )
    try:
        outcome = await engine.summarize(Request(content=text, max_output_tokens=budget, focus=focus))
    finally:
        await engine.aclose()
    repaired = outcome.fidelity is not None and "after" in (outcome.fidelity.repair or {})
    return outcome.text, {"calls": float(outcome.llm_calls), "repaired": float(repaired)}


def summarize_with(
    system: str, source: str, budget: int, focus: str, args: argparse.Namespace
) -> tuple[str, dict[str, float]]:
    if system == "extractive":
        return extractive.summarize(source, budget, focus=focus), {"calls": 0.0, "repaired": 0.0}
    if system == "truncation":
        return tokens.truncate(source, budget), {"calls": 0.0, "repaired": 0.0}
    repair = system == "llm+repair"
    return asyncio.run(llm_summary(args.llm_url, args.llm_model, args.llm_key, source, budget, focus, repair))


def receipt_of(rev: str) -> Callable[[str, str], Any]:
    """The ``receipt`` function of git revision ``rev``, loaded next to the current one."""
    return fidelity_at(rev).receipt  # type: ignore[no-any-return]


def fidelity_at(rev: str) -> ModuleType:
    """The receipt module of git revision ``rev``, loaded next to the current one: its
    fidelity modules copied into a temporary package whose imports point at each other."""
    root = Path(__file__).resolve().parents[1]
    package = Path(tempfile.mkdtemp(prefix="fidelity-bench-")) / "fidelity_at_rev"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in ("facts", "receipt"):
        shown = subprocess.run(
            ["git", "show", f"{rev}:./mcp_summarizer/fidelity/{name}.py"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        )
        (package / f"{name}.py").write_text(
            shown.stdout.replace("mcp_summarizer.fidelity.", "fidelity_at_rev.")
        )
    sys.path.insert(0, str(package.parent))
    return importlib.import_module("fidelity_at_rev.receipt")


def timed(runs: dict[str, Callable[[], Any]], repeats: int) -> dict[str, list[float]]:
    """Each run's times over ``repeats`` rounds, interleaved (the order turned every round)."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for k in range(repeats):
        for name in names[k % len(names) :] + names[: k % len(names)]:
            gc.collect()
            start = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - start)
    return times


def receipt_cost(n_tokens: int, repeats: int, against: str = "", source: str = "", label: str = "") -> None:
    """The receipt's cost against one `encode_ordinary` pass over the same source of
    ``n_tokens`` python-docs tokens (or ``source``), the summary its extractive summary at 5%:
    best of ``repeats`` each, interleaved (the order turned every repeat).  With ``against`` (a
    git revision), that revision's receipt too, in the same run."""
    source = source or corpus.load(n_tokens)
    summary = extractive.summarize(source, n_tokens // 20)
    encoding = tokens.encoding()
    runs: dict[str, Callable[[], Any]] = {
        "encode": lambda: encoding.encode_ordinary(source),
        "receipt": lambda: receipt(source, summary),
    }
    if against:
        before = receipt_of(against)
        runs[f"receipt at {against}"] = lambda: before(source, summary)
    best = {name: min(times) for name, times in timed(runs, repeats).items()}
    counted = f", source facts {receipt(source, summary).source_facts:,}"
    if against:
        counted += f" (at {against}: {before(source, summary).source_facts:,})"
    print(
        f"receipt cost{label} at {n_tokens:,} tokens ({len(source):,} chars), best of {repeats}: "
        + ", ".join(f"{name} {t:.3f} s" for name, t in best.items())
        + "; ratio to encode: "
        + ", ".join(f"{name} {t / best['encode']:.2f}x" for name, t in best.items() if name != "encode")
        + counted
    )


# -- fabrication: how many made-up facts the receipt flags ----------------------------------------

PROJECTS = "JIRA OPS INC SEC PLAT".split()
MODULES = "worker scheduler api storage billing auth".split()


def tool_output(rng: random.Random, n_tokens: int) -> str:
    """A tool output of about ``n_tokens``: a server inventory, an access log, a git log,
    tracebacks and security notes, interleaved: the ports, statuses, ids, addresses, UUIDs,
    hashes, e-mail addresses and file:line an agent reads in tool results."""

    def date() -> str:
        return f"{rng.randint(2015, 2026)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"

    def ip() -> str:
        return f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"

    def person() -> tuple[str, str]:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        return f"{first} {last}", f"{first.lower()}.{last.lower()}@example.org"

    lines: list[str] = []
    chars = n_tokens * 5
    while sum(map(len, lines)) < chars:
        i = len(lines)
        shape = rng.randrange(5)
        if shape == 0:
            lines.append(
                f"Server node-{i:03d} at {ip()} listens on port {rng.randint(1024, 65535)} since {date()}."
            )
        elif shape == 1:
            lines.append(
                f"{ip()} - - [{date()}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z] "
                f'"GET /api/items/{rng.randint(1, 99999)} HTTP/1.1" '
                f"{rng.choice([200, 201, 301, 404, 500, 503])} {rng.randint(100, 99999)}"
            )
        elif shape == 2:
            name, email = person()
            lines.append(
                f"commit {rng.randbytes(20).hex()}\nAuthor: {name} <{email}>\nDate: {date()}\n\n"
                f"    Fix {rng.choice(PROJECTS)}-{rng.randint(100, 9999)}: handle E{rng.randint(1000, 9999)} "
                f"in {rng.choice(MODULES)}.py:{rng.randint(10, 999)}\n"
            )
        elif shape == 3:
            lines.append(
                f'Traceback (most recent call last):\n  File "/app/src/{rng.choice(MODULES)}.py", line '
                f"{rng.randint(10, 999)}, in run\nValueError: job {rng.randbytes(16).hex()[:8]}-"
                f"{rng.randbytes(2).hex()}-4{rng.randbytes(2).hex()[1:]}-a{rng.randbytes(2).hex()[1:]}-"
                f"{rng.randbytes(6).hex()} failed with exit code {rng.randint(1, 255)}"
            )
        else:
            name, email = person()
            lines.append(
                f"CVE-{rng.randint(2015, 2026)}-{rng.randint(1000, 99999)} affects libfoo "
                f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)} on host "
                f"fe80::{rng.randbytes(2).hex()}:{rng.randbytes(2).hex()}:{rng.randbytes(2).hex()}; "
                f"reported by {name} ({email}) on {date()}."
            )
    return tokens.truncate("\n".join(lines), n_tokens)


# What the stand-in rewrites, found by its own patterns (not the receipt's): a bare number or
# the number of a quantity, an id, a date, a name, an IP address, a hash, an e-mail address.
FABRICABLE = {
    "number": re.compile(r"(?<![\w.,:/#-])\d{2,7}(?![\w:/-]|[.,]\d)"),
    "id": re.compile(r"\b[A-Za-z]{1,10}-\d{1,6}\b"),
    "date": re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d(?!\d)"),
    "name": re.compile(r"\b[A-Z][a-z]{2,} [A-Z][a-z]{2,}\b"),
    "ip": re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b"),
    "hash": re.compile(r"\b(?=[0-9a-f]{0,63}\d)(?=[0-9a-f]{0,63}[a-f])[0-9a-f]{7,64}\b"),
    "email": re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),
}


def stand_in_answer(source: str, budget: int) -> str:
    """The stand-in LLM's own answer: the extractive summary's sentences reworded as a model
    rewords without changing a fact (one bullet a sentence, a leading article dropped, an id's
    letters in the other case and in code ticks, hashes and file:line in code ticks, names in
    bold, thousands separators dropped, versions without their "v")."""
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", extractive.summarize(source, budget)):
        line = re.sub(r"^(?:The|A|An) ", "", sentence.strip())
        if not line:
            continue
        line = re.sub(r"\b([A-Za-z]{1,10})-(\d+)\b", lambda m: f"`{m[1].swapcase()}-{m[2]}`", line)
        line = re.sub(r"(?<![\w`])([0-9a-f]{7,64}|\w+\.py:\d+)(?![\w`])", r"`\1`", line)
        line = re.sub(r"\b([A-Z][a-z]{2,} [A-Z][a-z]{2,})\b", r"**\1**", line)
        line = re.sub(r"\b(\d{1,3}),(\d{3})\b", r"\1\2", line)
        line = re.sub(r"\bv(\d+\.\d+)", r"\1", line)
        out.append(f"- {line}")
    return "\n".join(out)


def _absent(source: str, value: str) -> bool:
    """No letter or digit before it, no digit after: "2023-09-02" is in "2023-09-02T10:00Z"."""
    return re.search(rf"(?<![0-9A-Za-z]){re.escape(value)}(?!\d)", source, re.IGNORECASE) is None


def invent(kind: str, value: str, source: str, rng: random.Random) -> str:
    """A value of ``kind`` in place of ``value`` that the source does not hold anywhere (a
    number one digit longer where the source holds every number of its length)."""
    for attempt in range(1000):
        if kind == "number":
            digits = len(value) + attempt // 100
            new = str(rng.randint(10 ** (digits - 1), 10**digits - 1))
        elif kind == "id":
            prefix, digits = value.rsplit("-", 1)
            new = f"{prefix}-{rng.randint(10 ** (len(digits) - 1), 10 ** len(digits) - 1)}"
        elif kind == "date":
            new = f"{rng.randint(1990, 2029)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        elif kind == "name":
            new = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        elif kind == "ip":
            new = f"{value.rsplit('.', 1)[0]}.{rng.randint(1, 254)}"
        elif kind == "hash":
            new = rng.randbytes(len(value)).hex()[: len(value)]
        else:
            local = f"{rng.choice(FIRST).lower()}.{rng.choice(LAST).lower()}{rng.randint(1, 99)}"
            new = f"{local}@{value.split('@')[1]}"
        if new != value and _absent(source, new):
            return new
    raise RuntimeError(f"no {kind} absent from the source in place of {value!r}")


def swap_in(kind: str, value: str, source: str, rng: random.Random) -> str | None:
    """Another value of ``kind`` that the source holds elsewhere (a misattribution), or None."""
    others = sorted({m.group() for m in FABRICABLE[kind].finditer(source)} - {value})
    return rng.choice(others) if others else None


def fabricate(
    answer: str, source: str, n: int, rng: random.Random, swap: bool = False
) -> tuple[str, list[tuple[str, int, int, str]]]:
    """``answer`` with ``n`` of its facts rewritten (kinds in turn, then at random within a
    kind), and each rewrite as (kind, start, end, new value) in the new text."""
    spans: list[tuple[int, int, str]] = []
    for kind, pattern in FABRICABLE.items():
        spans += [(m.start(), m.end(), kind) for m in pattern.finditer(answer)]
    spans.sort(key=lambda s: (s[0], -s[1]))
    free, end = [], -1
    for a, b, kind in spans:  # no two overlap: the earlier, then the longer, wins
        if a >= end:
            free.append((a, b, kind))
            end = b
    by_kind: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    for span in free:
        by_kind[span[2]].append(span)
    for spans_of_kind in by_kind.values():
        rng.shuffle(spans_of_kind)
    chosen: list[tuple[int, int, str]] = []
    kinds = sorted(by_kind)
    rng.shuffle(kinds)
    while len(chosen) < n and any(by_kind.values()):
        for kind in kinds:
            if by_kind[kind] and len(chosen) < n:
                chosen.append(by_kind[kind].pop())
    out, made, last, shift = [], [], 0, 0
    for a, b, kind in sorted(chosen):
        old = answer[a:b]
        new = swap_in(kind, old, source, rng) if swap else invent(kind, old, source, rng)
        if new is None:
            continue
        out.append(answer[last:a] + new)
        made.append((kind, a + shift, a + shift + len(new), new))
        shift += len(new) - (b - a)
        last = b
    out.append(answer[last:])
    return "".join(out), made


def flagged(answer: str, made: list[tuple[str, int, int, str]], src: SourceFacts, source: str) -> list[bool]:
    """For each rewrite, whether the receipt lists a fact at its place, holding its new value,
    as possibly invented."""
    r = receipt(source, answer, "", src)
    found = [f for f in facts(answer) if (f.kind, f.key) in r.invented_keys]
    out = []
    for _, a, b, new in made:
        value = new.casefold().replace(",", "")
        out.append(any(f.start < b and f.start + len(f.text) > a - 16 and value in f.key for f in found))
    return out


def fabrication(args: argparse.Namespace) -> None:
    """The stand-in's answers, unaltered and with ``args.fabricate`` facts rewritten
    (``args.rounds`` times each), and the extractive answers: what the receipt flags."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # row -> [flagged, of]
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    examples: list[str] = []
    for seed in range(args.seed, args.seed + args.seeds):
        rng = random.Random(seed)
        documents = {
            "python-docs": plant(corpus.load(args.tokens), make_plants(rng, args.plants)),
            "git-manual": plant(git_manual(args.tokens), make_plants(rng, args.plants)),
            "tool-output": tool_output(rng, args.tokens),
        }
        for name, source in documents.items():
            budget = int(tokens.count(source) * 0.05)
            src = source_facts(source)
            for label, answer in (
                ("extractive", extractive.summarize(source, budget)),
                ("stand-in, unaltered", stand_in_answer(source, budget)),
            ):
                r = receipt(source, answer, "", src)
                for row in (f"{name} | {label}", f"all | {label}"):
                    tally[row][0] += r.invented_facts
                    tally[row][1] += sum(1 for _ in facts(answer))
                if r.invented and len(examples) < 10:
                    examples.append(f"{name}, {label}: {r.invented[:5]}")
            answer = stand_in_answer(source, budget)
            for mode in ("invented", "swapped in"):
                for _ in range(args.rounds):
                    altered, made = fabricate(answer, source, args.fabricate, rng, swap=mode == "swapped in")
                    said = flagged(altered, made, src, source)
                    for (kind, _, _, new), hit in zip(made, said, strict=True):
                        for row in (f"{name} | {mode}", f"all | {mode}"):
                            tally[row][0] += hit
                            tally[row][1] += 1
                        if mode == "invented":
                            by_kind[kind][0] += hit
                            by_kind[kind][1] += 1
                            if not hit and len(examples) < 20:
                                examples.append(f"{name}: missed {kind} {new!r}")
    print(
        f"\nFabrication ({args.seeds} seeds from {args.seed}, {args.fabricate} facts rewritten per answer, "
        f"{args.rounds} rounds per answer, 5% budget, {datetime.date.today()}):\n"
    )
    print("| document | answer | flagged | of | share |")
    print("|---|---|---|---|---|")
    for row, (hit, of) in sorted(tally.items(), key=lambda kv: (kv[0].startswith("all"), kv[0])):
        print(f"| {row} | {hit:,} | {of:,} | {hit / max(of, 1):.1%} |")
    print(
        "\ninvented facts flagged, by kind: "
        + ", ".join(
            f"{kind} {hit}/{of} ({hit / max(of, 1):.0%})" for kind, (hit, of) in sorted(by_kind.items())
        )
    )
    for example in examples:
        print("  " + example)


Row = tuple[str, int, float, str, dict[str, Any], float]


def run_seed(seed: int, documents: dict[str, str], args: argparse.Namespace) -> list[Row]:
    """Every (document, budget, system) row for the plants of one seed."""
    rng = random.Random(seed)
    rows: list[Row] = []
    for name, base in documents.items():
        plants = make_plants(rng, args.plants)
        source = plant(base, plants)
        focus_plants = [p for p in plants if p.kind in ("identifier", "name")][::3][:5]
        focus = ", ".join(p.key for p in focus_plants)
        n = tokens.count(source)
        start = time.perf_counter()
        tokens.encoding().encode_ordinary(source)
        encode = time.perf_counter() - start
        for share in (0.02, 0.05, 0.10):
            budget = int(n * share)
            systems = ["extractive", "truncation"] + (["llm"] if args.llm_url else [])
            systems += ["llm+repair"] if args.llm_url and args.repair else []
            for system in systems:
                summary, spent = summarize_with(system, source, budget, focus, args)
                start = time.perf_counter()
                receipt(source, summary, focus)
                cost = (time.perf_counter() - start) / encode
                scores = {**evaluate(source, summary, plants, focus_plants), **spent}
                rows.append((name, n, share, system, scores, cost))
    return rows


def average(rows: list[Row]) -> list[Row]:
    """One row per (document, budget, system): the means over the seeds, in first-seen order."""
    groups: dict[tuple[str, float, str], list[Row]] = defaultdict(list)
    for row in rows:
        groups[row[0], row[2], row[3]].append(row)
    out: list[Row] = []
    for (name, share, system), group in groups.items():
        es = [r[4] for r in group]
        mean: dict[str, Any] = {
            k: sum(e[k] for e in es) / len(es)
            for k in ("recall", "focus", "invented", "receipt_accuracy", "calls", "repaired")
        }
        mean["kind"] = {k: sum(e["kind"][k] for e in es) / len(es) for k in es[0]["kind"]}
        mean["decile"] = [sum(e["decile"][d] for e in es) / len(es) for d in range(10)]
        out.append((name, group[0][1], share, system, mean, sum(r[5] for r in group) / len(group)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--cost-tokens", type=int, default=1_000_000, help="source size for the cost figure (0: skip)"
    )
    parser.add_argument("--cost-only", action="store_true", help="measure the receipt's cost only")
    parser.add_argument("--tokens", type=int, default=60_000, help="size of each document")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--seeds", type=int, default=1, help="average over seeds seed .. seed+N-1")
    # 60, not 50: the kinds cycle with period 6, so 6 plants a decile give every decile one of
    # each kind (with 5 a decile, the first held a name, the kind kept most, and the last none:
    # the decile comparison measured the kind mix, not the position).
    parser.add_argument("--plants", type=int, default=60)
    parser.add_argument(
        "--llm-url", help='an OpenAI-compatible endpoint, or "stand-in" for the tests\' FakeLLM'
    )
    parser.add_argument("--llm-model", default="test/model")
    parser.add_argument("--llm-key", default="bench")
    parser.add_argument(
        "--repair", action="store_true", help="with --llm-url: also the LLM path with FIDELITY_REPAIR=true"
    )
    parser.add_argument(
        "--cost-against", default="", help="a git revision whose receipt is timed in the same run (e.g. main)"
    )
    parser.add_argument(
        "--fabricate",
        type=int,
        default=0,
        help="the fabrication mode: facts the stand-in rewrites per answer",
    )
    parser.add_argument("--rounds", type=int, default=10, help="fabrication mode: rewrites of each answer")
    args = parser.parse_args()
    if args.cost_tokens:
        receipt_cost(args.cost_tokens, 3, args.cost_against)
        if args.cost_against:  # the tool output the new kinds are for, same size
            text = tool_output(random.Random(args.seed), args.cost_tokens)
            receipt_cost(args.cost_tokens, 3, args.cost_against, text, " (tool output)")
    if args.cost_only:
        return
    if args.fabricate:
        fabrication(args)
        return
    documents = {"python-docs": corpus.load(args.tokens), "git-manual": git_manual(args.tokens)}
    stand_in = None
    if args.llm_url == "stand-in":
        from tests.support.fake_llm import FakeLLM

        stand_in = FakeLLM().__enter__()
        args.llm_url = stand_in.base_url
    rows = []
    for seed in range(args.seed, args.seed + args.seeds):
        rows += run_seed(seed, documents, args)
    if stand_in is not None:
        stand_in.__exit__(None, None, None)
    rows = average(rows)

    print(
        "| document | tokens | budget | system | recall | focus recall | deciles 1-10 | invented "
        "| receipt accuracy | receipt cost / encode |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, n, share, system, e, cost in rows:
        deciles = " ".join(f"{d:.0%}" for d in e["decile"])
        print(
            f"| {name} | {n:,} | {share:.0%} | {system} | {e['recall']:.0%} | {e['focus']:.0%} | {deciles} "
            f"| {e['invented']:.1%} | {e['receipt_accuracy']:.0%} | {cost:.2f}x |"
        )
    if args.repair:
        print("\nFIDELITY_REPAIR: what it costs and what it gains (means per summary)\n")
        print("| document | budget | system | LLM calls | repaired | recall | focus recall | invented |")
        print("|---|---|---|---|---|---|---|---|")
        for name, _, share, system, e, _ in rows:
            if system.startswith("llm"):
                print(
                    f"| {name} | {share:.0%} | {system} | {e['calls']:.1f} | {e['repaired']:.0%} "
                    f"| {e['recall']:.0%} | {e['focus']:.0%} | {e['invented']:.1%} |"
                )
    print("\nrecall by kind (5% budget):")
    for name, _, share, system, e, _ in rows:
        if share == 0.05:
            kinds = ", ".join(f"{k} {v:.0%}" for k, v in e["kind"].items())
            print(f"  {name} {system}: {kinds}")


if __name__ == "__main__":
    main()
