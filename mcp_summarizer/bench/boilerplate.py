"""Boilerplate-removal benchmark: what `strip_boilerplate` cuts from crawled pages, how fast,
and what it wrongly cuts from pages that have no chrome.

Inputs (both built from Debian's python3.11-doc HTML, see README.md):

* `data/crawled/**/*.md` — whole `<body>` of every page as markdown (build_crawled.py): nav
  bars, sidebar, "Show Source", footer included.  Recall: how many tokens go.
* `data/pages/**/*.md` — the main content only (build_corpus.py), no chrome at all.
  Precision: every token removed there is a false positive (or a judgement call), so the
  top removals are listed for a human to judge.

Timing is a ratio to one `tokens.encoding().encode_ordinary` pass over the same text, best
of N, interleaved (the machine is noisy; see README.md), with the module's per-line memo
cleared before every timed run: summed over the crawled pages one call each; on ~1M tokens
of crawled pages joined (what a research agent sends; it also shows what `repeated` adds
when pages repeat their chrome); and on ~1M tokens of the main-content corpus (no chrome).

    cd mcp_summarizer && python -m bench.boilerplate [--repeats N] [--examples a,b,c] [--top N]

Writes the per-page table to `data/boilerplate_pages.tsv` and prints markdown.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from bench import corpus
from mcp_summarizer.text import tokens
from mcp_summarizer.text.boilerplate import find_boilerplate, strip_boilerplate
from mcp_summarizer.text.boilerplate_rules import RULES, line_kind

DATA_DIR = Path(__file__).resolve().parent / "data"
EXAMPLES = ("library/json", "tutorial/controlflow", "index")
JOINED_TOKENS = 1_000_000


def load(directory: Path) -> dict[str, str]:
    return {
        p.relative_to(directory).with_suffix("").as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(directory.rglob("*.md"))
    }


def timed(fn: Callable[[], object]) -> float:
    line_kind.cache_clear()  # every timed run starts cold: no line judged by an earlier run
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def ratio(
    work: Callable[[], object], baseline: Callable[[], object], repeats: int
) -> tuple[float, float, float]:
    """(best work s, best baseline s, median of paired ratios), order flipped every repeat."""
    w, b, pairs = [], [], []
    for i in range(repeats):
        if i % 2:
            tw, tb = timed(work), timed(baseline)
        else:
            tb, tw = timed(baseline), timed(work)
        w.append(tw)
        b.append(tb)
        pairs.append(tw / tb)
    return min(w), min(b), statistics.median(pairs)


def joined(pages: dict[str, str], limit: int) -> str:
    """Whole crawled pages, in path order, joined by a blank line, up to ~limit tokens."""
    parts, used = [], 0
    for text in pages.values():
        n = tokens.count(text)
        if used + n > limit:
            break
        parts.append(text)
        used += n
    return "\n".join(parts)


def rule_table(counts: Counter[str]) -> str:
    return ", ".join(f"{rule} {counts[rule]:,}" for rule in RULES if counts[rule])


def marked(text: str, lines: int) -> tuple[str, str]:
    """The first and last ``lines`` lines of ``text``, removed ones prefixed with ✂."""
    cut = {r.start for r in find_boilerplate(text)}
    rows, pos = [], 0
    for line in text.rstrip("\n").split("\n"):
        shown = line if len(line) <= 110 else line[:107] + "..."
        rows.append(("✂ " if pos in cut else "  ") + shown)
        pos += len(line) + 1
    return "\n".join(rows[:lines]), "\n".join(rows[-lines:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5, help="best-of-N timing (default %(default)s)")
    parser.add_argument("--examples", default=",".join(EXAMPLES), help="pages shown before/after")
    parser.add_argument("--top", type=int, default=25, help="top false-positive lines listed")
    parser.add_argument("--lines", type=int, default=22, help="lines shown at each end of an example")
    args = parser.parse_args(argv)

    crawled_dir, pages_dir = DATA_DIR / "crawled", DATA_DIR / "pages"
    if not crawled_dir.is_dir() or not pages_dir.is_dir():
        print(
            "error: build the data first:\n"
            "    cd mcp_summarizer && python -m bench.build_corpus && python -m bench.build_crawled",
            file=sys.stderr,
        )
        return 2
    crawled, main_pages = load(crawled_dir), load(pages_dir)

    # -- recall: crawled pages --------------------------------------------------------------
    rows = ["page\ttokens_before\ttokens_after\tremoved_share\t" + "\t".join(RULES)]
    before_total = after_total = 0
    rule_lines: Counter[str] = Counter()
    per_page: list[tuple[str, int, int]] = []
    for name, text in crawled.items():
        cleaned = strip_boilerplate(text)
        before, after = tokens.count(text), tokens.count(cleaned.text)
        before_total += before
        after_total += after
        rule_lines.update(cleaned.removed)
        per_page.append((name, before, after))
        share = 1 - after / before if before else 0.0
        counts = "\t".join(str(cleaned.removed.get(rule, 0)) for rule in RULES)
        rows.append(f"{name}\t{before}\t{after}\t{share:.4f}\t{counts}")
    (DATA_DIR / "boilerplate_pages.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    main_total = sum(tokens.count(t) for t in main_pages.values())

    print("### Crawled pages (whole `<body>`)\n")
    print(f"{len(crawled)} pages, {before_total:,} → {after_total:,} cl100k tokens: ")
    print(
        f"**{before_total - after_total:,} removed ({(before_total - after_total) / before_total:.1%})**; "
        f"the same pages' main content alone is {main_total:,} tokens, i.e. the chrome is "
        f"{before_total - main_total:,} tokens, of which "
        f"{(before_total - after_total) / (before_total - main_total):.0%} is removed."
    )
    print(f"\nLines removed per rule: {rule_table(rule_lines)}.\n")
    shares = sorted((1 - a / b, n, b, a) for n, b, a in per_page if b)
    print("| page | tokens before | after | removed |\n|---|---:|---:|---:|")
    picks = [*shares[:3], shares[len(shares) // 2], *shares[-3:]]
    picks += [next(s for s in shares if s[1] == e) for e in args.examples.split(",") if e in crawled]
    for share, name, before, after in sorted(set(picks), key=lambda s: -s[0]):
        print(f"| {name} | {before:,} | {after:,} | {share:.1%} |")
    quartiles = statistics.quantiles([s[0] for s in shares], n=4)
    print(
        f"\nRemoved share per page: min {shares[0][0]:.1%}, quartiles "
        + ", ".join(f"{q:.1%}" for q in quartiles)
        + f", max {shares[-1][0]:.1%} (all pages: data/boilerplate_pages.tsv)."
    )

    # -- joined crawled pages (one big input) ----------------------------------------------
    big = joined(crawled, JOINED_TOKENS)
    big_clean = strip_boilerplate(big)
    big_before, big_after = tokens.count(big), tokens.count(big_clean.text)
    print(f"\n### One ~1M-token input: crawled pages joined ({big.count(chr(10)) + 1:,} lines)\n")
    print(
        f"{big_before:,} → {big_after:,} tokens ({(big_before - big_after) / big_before:.1%} removed); "
        f"lines per rule: {rule_table(Counter(big_clean.removed))}."
    )

    # -- precision: main-content pages -------------------------------------------------------
    fp_tokens = 0
    fp_lines: Counter[tuple[str, str]] = Counter()
    fp_pages: Counter[str] = Counter()
    fp_rules: Counter[str] = Counter()
    for name, text in main_pages.items():
        cleaned = strip_boilerplate(text)
        removed = tokens.count(text) - tokens.count(cleaned.text)
        if removed:
            fp_tokens += removed
            fp_pages[name] += removed
        for r in find_boilerplate(text):
            fp_lines[(r.rule, text[r.start : r.end].strip())] += 1
            fp_rules[r.rule] += 1
    print("\n### Precision: main-content pages (no chrome)\n")
    print(
        f"{len(main_pages)} pages, {main_total:,} tokens: **{fp_tokens:,} tokens removed "
        f"({fp_tokens / main_total:.3%})** from {len(fp_pages)} pages; lines per rule: "
        f"{rule_table(fp_rules) or 'none'}.\n"
    )
    if fp_lines:
        print("| rule | times | tokens | line |\n|---|---:|---:|---|")
        scored = sorted(fp_lines.items(), key=lambda kv: (-kv[1] * tokens.count(kv[0][1]), kv[0]))
        for (rule, line), n in scored[: args.top]:
            shown = (line if len(line) <= 100 else line[:97] + "...").replace("|", "\\|")
            print(f"| {rule} | {n} | {n * tokens.count(line)} | `{shown}` |")
        print("\nPages losing most: " + ", ".join(f"{p} ({n})" for p, n in fp_pages.most_common(8)) + ".")

    # -- speed ---------------------------------------------------------------------------------
    enc = tokens.encoding()
    texts = list(crawled.values())
    strip_boilerplate(texts[0][:2000])  # warm-up (regex compilation happens at import)
    per_page_times = ratio(
        lambda: [strip_boilerplate(t) for t in texts],
        lambda: [enc.encode_ordinary(t) for t in texts],
        args.repeats,
    )
    big_times = ratio(lambda: strip_boilerplate(big), lambda: enc.encode_ordinary(big), args.repeats)
    plain = corpus.load(JOINED_TOKENS)  # main content only: what the scan costs without chrome
    plain_times = ratio(lambda: strip_boilerplate(plain), lambda: enc.encode_ordinary(plain), args.repeats)
    print(f"\n### Speed (best of {args.repeats}, ratio to one encode_ordinary pass)\n")
    print("| input | chars | encode s | strip s | ratio | paired median |\n|---|---:|---:|---:|---:|---:|")
    total_chars = sum(map(len, texts))
    for label, chars, (w, b, med) in (
        (f"{len(texts)} crawled pages, one call each", total_chars, per_page_times),
        (f"crawled pages joined, {big_before:,} tokens, one call", len(big), big_times),
        (f"main-content corpus, {tokens.count(plain):,} tokens, one call", len(plain), plain_times),
    ):
        print(f"| {label} | {chars:,} | {b:.3f} | {w:.4f} | {w / b:.1%} | {med:.1%} |")

    # -- examples ------------------------------------------------------------------------------
    print("\n### Before / after\n")
    print("Each line of the crawled page; `✂` marks the lines that were cut.\n")
    for name in args.examples.split(","):
        if name not in crawled:
            continue
        text = crawled[name]
        cleaned = strip_boilerplate(text)
        print(
            f"**{name}** ({tokens.count(text):,} → {tokens.count(cleaned.text):,} tokens; "
            f"lines cut: {rule_table(Counter(cleaned.removed))})\n"
        )
        head, tail = marked(text, args.lines)
        print(f"Top:\n\n```\n{head}\n```\n\nBottom:\n\n```\n{tail}\n```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
