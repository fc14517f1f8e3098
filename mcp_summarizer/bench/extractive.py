"""Extractive summarizer benchmark: speed against one tokenizer pass, and entity fidelity.

1. Speed: `extractive.summarize(text, budget)` on corpus prefixes (200k and 1M tokens),
   timed interleaved with one `tokens.encoding().encode_ordinary(text)` pass (order flipped
   every repeat); the ratio of best-of-N times and the median of paired ratios are shown.
2. Fidelity at 5:1: every page of at least 3,000 tokens is summarized to tokens // 5 and
   truncated to the same budget (`tokens.truncate`, the first N tokens).  The share of
   the page's salient entities (see `salient`) found in each output is reported, overall
   (micro: surviving / total) and as a mean of per-page shares (macro), by corpus section.
3. Category fidelity: only the salient entities of one category (exceptions and dotted
   names; numbers), for kind="general", kind="extraction" and kind="extraction" with a
   schema hint naming the category, against truncation.

    cd mcp_summarizer && python -m bench.extractive [--sizes 200k,1M] [--budgets 5000] [--repeats N]
        [--compression 5] [--skip-speed] [--skip-fidelity] [--example tutorial/errors.md]
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from bench import corpus
from bench.corpus import human, parse_size, table_row
from mcp_summarizer.summarize.extractive import summarize
from mcp_summarizer.text import tokens

PAGES = corpus.DATA_DIR / "pages"
MIN_PAGE_TOKENS = 3000
COMPRESSION = 5

# --- salient entities --------------------------------------------------------------------------
#
# Counted in the *visible* text: a markdown link [text](target "title") counts as its text,
# so a name that only occurs in a URL or a link title does not count (for the page nor for
# an output).  An entity is any of:
#   identifier  a dotted name (os.path.join; some part of 2+ characters, so not "e.g"), a
#               `backticked` name (its identifier part, "()" dropped), or a CamelCase word
#               (JSONDecodeError, JavaScript);
#   number      a number of 2+ digits or with a decimal point (3.11, 1024, 0.5; not "3");
#   name        two or more capitalized words in a row (Python Software Foundation).
# It is *salient* when it occurs at least twice in the page.  It survives when the same
# extraction finds it in the output's visible text.

_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_ENTITY = re.compile(
    r"""
      `(?P<tick>[A-Za-z_][\w.]*)(?:\(\))?`
    | (?P<dotted>\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b)
    | (?P<number>\b\d+(?:\.\d+)+\b|\b\d{2,}\b)
    | (?P<camel>\b[A-Z][a-z0-9]+[A-Z]\w*\b|\b[A-Z]{2,}[a-z]\w*\b|\b[a-z]+[A-Z]\w*\b)
    | (?P<name>\b[A-Z][a-z]+(?:[ ][A-Z][a-z]+)+\b)
    """,
    re.VERBOSE,
)
_EXCEPTION = re.compile(r"(?:Error|Exception|Warning)$")


def visible(text: str) -> str:
    return _LINK.sub(r"\1", text)


def entities(text: str) -> Counter[tuple[str, str]]:
    """(entity, class) -> occurrences in the visible text; classes: identifier, number, name."""
    found: Counter[tuple[str, str]] = Counter()
    for m in _ENTITY.finditer(visible(text)):
        kind = m.lastgroup or ""
        value = m.group(kind)
        if kind in ("tick", "dotted"):
            if kind == "dotted" and max(map(len, value.split("."))) < 2:
                continue  # e.g, i.e
            found[(value, "identifier")] += 1
        elif kind == "camel":
            found[(value, "identifier")] += 1
        else:
            found[(value, kind)] += 1
    return found


def salient(text: str) -> set[tuple[str, str]]:
    return {e for e, n in entities(text).items() if n >= 2}


@dataclass(frozen=True)
class Category:
    label: str
    focus: str
    test: Callable[[str, str], bool]  # (entity, class) -> in the category


CATEGORIES = (
    Category(
        "exceptions and dotted function names",
        "function names, exceptions",
        lambda e, c: c == "identifier" and (bool(_EXCEPTION.search(e)) or "." in e),
    ),
    Category("numbers and versions", "numbers, versions", lambda e, c: c == "number"),
)


# --- fidelity --------------------------------------------------------------------------------------


def pages(min_tokens: int = MIN_PAGE_TOKENS) -> list[tuple[str, str, int]]:
    """(relative path, text, tokens) of the pages with at least ``min_tokens`` tokens."""
    out = []
    for path in sorted(PAGES.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        n = tokens.count(text)
        if n >= min_tokens:
            out.append((path.relative_to(PAGES).as_posix(), text, n))
    return out


@dataclass
class Tally:
    pages: int = 0
    salient: int = 0
    ours: int = 0
    trunc: int = 0
    ours_shares: list[float] | None = None
    trunc_shares: list[float] | None = None

    def add(self, total: int, ours: int, trunc: int) -> None:
        if self.ours_shares is None or self.trunc_shares is None:
            self.ours_shares, self.trunc_shares = [], []
        self.pages += 1
        self.salient += total
        self.ours += ours
        self.trunc += trunc
        if total:
            self.ours_shares.append(ours / total)
            self.trunc_shares.append(trunc / total)

    def row(self, label: str) -> list[str]:
        micro_o = self.ours / self.salient if self.salient else 0.0
        micro_t = self.trunc / self.salient if self.salient else 0.0
        macro_o = statistics.mean(self.ours_shares) if self.ours_shares else 0.0
        macro_t = statistics.mean(self.trunc_shares) if self.trunc_shares else 0.0
        gain = f"{micro_o / micro_t:.2f}x" if micro_t else "n/a"
        return [
            label,
            str(self.pages),
            f"{self.salient:,}",
            f"{micro_o:.1%}",
            f"{micro_t:.1%}",
            gain,
            f"{macro_o:.1%}",
            f"{macro_t:.1%}",
        ]


def fidelity(
    docs: list[tuple[str, str, int]],
    *,
    focus: str = "",
    kind: str = "general",
    categories: tuple[Category | None, ...] = (None,),
    compression: int = COMPRESSION,
) -> tuple[dict[Category | None, dict[str, Tally]], int]:
    """Per category (None: all salient entities), per-section tallies ("all" included); and
    the largest overshoot of the budget over all pages (must be <= 0)."""
    tallies: dict[Category | None, dict[str, Tally]] = {c: defaultdict(Tally) for c in categories}
    worst = -(10**9)
    for rel, text, n in docs:
        budget = n // compression
        ours = summarize(text, budget, focus=focus, kind=kind)  # type: ignore[arg-type]
        trunc = tokens.truncate(text, budget)
        worst = max(worst, tokens.count(ours) - budget)
        every = salient(text)
        got_o, got_t = set(entities(ours)), set(entities(trunc))
        section = rel.split("/")[0] if "/" in rel else "(top)"
        for category in categories:
            keep = every if category is None else {e for e in every if category.test(*e)}
            for key in (section, "all"):
                tallies[category][key].add(len(keep), len(keep & got_o), len(keep & got_t))
    return tallies, worst


FIDELITY_COLUMNS = ["corpus", "pages", "salient entities", "ours", "truncation", "ours / trunc"]
FIDELITY_COLUMNS += ["ours (page mean)", "trunc (page mean)"]


def print_fidelity(tallies: dict[str, Tally]) -> None:
    table_row(*FIDELITY_COLUMNS)
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for key in sorted(k for k in tallies if k != "all"):
        table_row(*tallies[key].row(key))
    table_row(*[f"**{c}**" for c in tallies["all"].row("all")])


def _share(t: Tally, ours: bool = True) -> float:
    return (t.ours if ours else t.trunc) / t.salient if t.salient else 0.0


def run_fidelity(compression: int) -> None:
    docs = pages()
    c = compression
    every = (None, *CATEGORIES)
    general, worst_g = fidelity(docs, kind="general", categories=every, compression=c)
    extraction, worst_e = fidelity(docs, kind="extraction", categories=every, compression=c)
    print(
        f"\nSalient entities surviving at {c}:1, kind=general, no focus, by corpus section "
        f"({len(docs)} pages of >= {MIN_PAGE_TOKENS} tokens)\n"
    )
    print_fidelity(general[None])
    print(f"\nAll pages at {c}:1, both kinds\n")
    table_row(*["kind", *FIDELITY_COLUMNS[1:], "largest overshoot"])
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind, tallies, worst in (("general", general, worst_g), ("extraction", extraction, worst_e)):
        table_row(*[kind, *tallies[None]["all"].row("")[1:], f"{worst:+d} tokens"])
    print(f"\nOne category of salient entities at {c}:1, all pages: share that survives\n")
    table_row(
        "category", "salient", "truncation", "general", "extraction", "extraction + hint", "hint",
        "hinted / trunc", "largest overshoot",
    )  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|")
    for category in CATEGORIES:
        hinted, worst_h = fidelity(
            docs, focus=category.focus, kind="extraction", categories=(category,), compression=c
        )
        h = hinted[category]["all"]
        t = _share(h, ours=False)
        table_row(
            category.label,
            f"{h.salient:,}",
            f"{t:.1%}",
            f"{_share(general[category]['all']):.1%}",
            f"{_share(extraction[category]['all']):.1%}",
            f"{_share(h):.1%}",
            repr(category.focus),
            f"{_share(h) / t:.2f}x" if t else "n/a",
            f"{worst_h:+d} tokens",
        )


# --- speed ------------------------------------------------------------------------------------------


def _timed(fn: Callable[[], object]) -> float:
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def speed(text: str, budget: int, repeats: int, kind: str) -> dict[str, float]:
    encode = tokens.encoding().encode_ordinary
    encode(text[:2000])
    summarize(text[:20000], 200)  # warm-up: imports, regex compilation
    base, ours = [], []
    for r in range(repeats):
        for side in ("base", "ours") if r % 2 == 0 else ("ours", "base"):
            if side == "base":
                base.append(_timed(lambda: encode(text)))
            else:
                ours.append(_timed(lambda: summarize(text, budget, kind=kind)))  # type: ignore[arg-type]
    return {
        "base": min(base),
        "ours": min(ours),
        "ratio": min(ours) / min(base),
        "paired": statistics.median(o / b for b, o in zip(base, ours, strict=True)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="200k,1M", help="corpus prefixes in tokens (default: %(default)s)")
    parser.add_argument("--repeats", type=int, help="best of N (default: 5 below 1M tokens, 3 from 1M)")
    parser.add_argument(
        "--budgets", default="5000", help="summary budgets for the speed runs (default: %(default)s)"
    )
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-fidelity", action="store_true")
    parser.add_argument(
        "--compression", type=int, default=COMPRESSION, help="N for N:1 (default %(default)s)"
    )
    parser.add_argument("--example", default="tutorial/errors.md", help="page to print a summary of")
    parser.add_argument("--example-lines", type=int, default=15)
    args = parser.parse_args(argv)
    try:
        corpus.load(1)
    except corpus.CorpusMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{date.today()}, {os.cpu_count()} cpus, python {sys.version.split()[0]}")
    if not args.skip_speed:
        print("\nSpeed: summarize() against one encode_ordinary pass over the same text\n")
        table_row(
            "size", "exact tokens", "budget", "kind", "encode s", "summarize s", "ratio", "paired median"
        )
        print("|---|---:|---:|---|---:|---:|---:|---:|")
        for n in (parse_size(s) for s in args.sizes.split(",")):
            text = corpus.load(n)
            repeats = args.repeats or (3 if n >= 1_000_000 else 5)
            head = (f"{human(n)} (best of {repeats})", f"{tokens.count(text):,}")
            for budget in (parse_size(b) for b in args.budgets.split(",")):
                for kind in ("general", "extraction"):
                    r = speed(text, budget, repeats, kind)
                    table_row(
                        *head,
                        f"{budget:,}",
                        kind,
                        f"{r['base']:.3f}",
                        f"{r['ours']:.3f}",
                        f"{r['ratio']:.2f}x",
                        f"{r['paired']:.2f}x",
                    )
    if not args.skip_fidelity:
        run_fidelity(args.compression)
    if args.example:
        text = (PAGES / args.example).read_text(encoding="utf-8")
        n = tokens.count(text)
        budget = n // args.compression
        out = summarize(text, budget)
        print(f"\nExample: {args.example}, {n:,} tokens -> budget {budget:,}, {tokens.count(out):,} used\n")
        print("\n".join(out.splitlines()[: args.example_lines]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
