"""HTML → markdown benchmark for `fetch_url`: main-content extractors and converters on real pages.

Input: Debian's python3.11-doc HTML (real Sphinx pages: sidebar table of contents, "Previous
topic" / "Next topic", "This Page" / "Show Source", navigation bars, copyright footer).  The
reference for every page is its `<div role="main">` (Sphinx's `div.body`): what a reader came
for.  Every candidate gets the whole page as a `str` and must return markdown; per page and
candidate we measure (outside the timed region):

* **kept**: bag-of-words recall of the reference's text in the output (words are runs of
  letters/digits, lowercased; markdown link targets and titles are dropped from the output
  first, so a link's URL cannot stand in for its text);
* **extra**: output words that are not in the reference (multiset difference), as a share of
  the output: chrome that survived (sidebar TOC, breadcrumbs, footer) plus noise;
* **chrome**: pages whose output still contains a sidebar/nav/footer string that is not in
  that page's reference text (`CHROME` below);
* **fenced**: reference `<pre>` blocks whose first line is inside a fenced (```/~~~) block;
  **#**: reference headings found on a `#` line; **tables**: reference tables whose first
  cell is on a `|` row; **links**: the reference's external http(s) hrefs found in the output.

Timing: each page is converted by every candidate back to back (the order rotates from page
to page, so drift on this shared machine hits all alike), one call each, `time.perf_counter`;
reported as seconds per MB of HTML (UTF-8) and as a ratio to the fastest candidate.  The
largest pages (the 3.9 MB changelog, the 2.5 MB contents page, a synthetic ~5 MB page of
concatenated docs bodies) are timed separately, once per candidate.  A socket guard refuses
and counts every connection attempt: nothing may touch the network.

    python -m bench.convert [--pages N] [--html DIR] [--dump DIR] [--skip-large]

Writes per-page rows to `data/convert_pages.tsv` and prints markdown tables.
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import socket
import statistics
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from importlib.metadata import version
from pathlib import Path

import html_to_markdown
import lxml.html
import markdownify
import readabilipy
import readability
import trafilatura

from bench import build_corpus
from bench.corpus import table_row
from mcp_summarizer.web import convert as ours
from mcp_summarizer.web import htmldoc

DATA_DIR = Path(__file__).resolve().parent / "data"
BASE_URL = "https://docs.python.org/3.11/"
# Sidebar, navigation-bar and footer strings of the Sphinx "python_docs_theme" pages.
CHROME = (
    "Navigation",
    "Table of Contents",
    "Previous topic",
    "Next topic",
    "This Page",
    "Report a Bug",
    "Show Source",
    "Quick search",
    "Documentation »",
    "© Copyright",
    "Created using Sphinx",
    "Last updated on",
)
VARIANTS = ("as served", "without role=main")
KEPT_LOW = 0.9  # a page is "short" when less than this share of its reference words survive
WORD = re.compile(r"[^\W_]+")
LINK_TARGET = re.compile(r"\]\(\s*<?[^)\s>]*>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(?:>\s*)*(`{3,}|~{3,})")


# --------------------------------------------------------------------------------------------
# Candidates
# --------------------------------------------------------------------------------------------

H2M_WHOLE = html_to_markdown.ConversionOptions(extract_metadata=False)
H2M_AGGRESSIVE = html_to_markdown.ConversionOptions(
    extract_metadata=False,
    preprocessing=html_to_markdown.PreprocessingOptions(enabled=True, preset="aggressive"),
)
MARKDOWNIFY = {"heading_style": "ATX", "bullets": "-"}
TRAFILATURA = {
    "output_format": "markdown",
    "include_links": True,
    "include_tables": True,
    "include_formatting": True,
    "include_comments": False,
    "include_images": False,
    "with_metadata": False,
    "deduplicate": False,
}


def h2m(html: str, options: html_to_markdown.ConversionOptions = H2M_WHOLE) -> str:
    return html_to_markdown.convert(html, options).content or ""


def trafilatura_md(html: str, **extra: object) -> str:
    return trafilatura.extract(html, url=BASE_URL, **TRAFILATURA, **extra) or ""


def trafilatura_html_h2m(html: str) -> str:
    options = {**TRAFILATURA, "output_format": "html"}
    return h2m(trafilatura.extract(html, url=BASE_URL, **options) or "")


def readabilipy_markdownify(html: str) -> str:
    article = readabilipy.simple_json_from_html_string(html, use_readability=False)
    return markdownify.markdownify(article["content"] or "", **MARKDOWNIFY)


def readability_summary(html: str) -> str:
    return readability.Document(html, url=BASE_URL).summary(html_partial=True)


FALLBACK_SHARE = 0.5
FALLBACKS: Counter[str] = Counter()  # candidate name -> pages where it fell back to the whole page


def trafilatura_with_fallback(html: str) -> str:
    """trafilatura, or the whole page (html-to-markdown aggressive) when it keeps < 50% of its words."""
    extracted = trafilatura_md(html)
    whole = h2m(html, H2M_AGGRESSIVE)
    if len(words(extracted)) < FALLBACK_SHARE * len(words(whole)):
        FALLBACKS[TRAFILATURA_FALLBACK] += 1
        return whole
    return extracted


def ours_convert(html: str) -> str:
    """The shipped converter; counts its whole-body fallbacks (a second `_prepare` call)."""
    before = PREPARE_CALLS[0]
    markdown = ours.convert(html.encode(), "text/html", "utf-8", BASE_URL).markdown
    if PREPARE_CALLS[0] - before > 1:
        FALLBACKS[OURS] += 1
    return markdown


PREPARE_CALLS = [0]
_real_prepare = htmldoc._prepare


def _counting_prepare(html: str, url: str) -> object:
    PREPARE_CALLS[0] += 1
    return _real_prepare(html, url)


htmldoc._prepare = _counting_prepare  # instrumentation only: the bench reports how often the fallback runs
OURS = "ours: convert() (lxml + html-to-markdown)"
TRAFILATURA_FALLBACK = f"trafilatura markdown + fallback (< {FALLBACK_SHARE:.0%} of page words)"


@dataclass(frozen=True)
class Candidate:
    name: str
    run: Callable[[str], str]
    finds_content: bool  # looks for the main content (so a page without role="main" can change its output)


def candidates() -> list[Candidate]:
    def markdownify_readability(html: str) -> str:
        return markdownify.markdownify(readability_summary(html), **MARKDOWNIFY)

    return [
        Candidate(OURS, ours_convert, True),
        Candidate("trafilatura markdown", trafilatura_md, True),
        Candidate("trafilatura markdown, favor_recall", lambda h: trafilatura_md(h, favor_recall=True), True),
        Candidate(TRAFILATURA_FALLBACK, trafilatura_with_fallback, True),
        Candidate("trafilatura html → html-to-markdown", trafilatura_html_h2m, True),
        Candidate("readability-lxml → markdownify", markdownify_readability, True),
        Candidate("readability-lxml → html-to-markdown", lambda h: h2m(readability_summary(h)), True),
        Candidate("readabilipy (pure Python) → markdownify", readabilipy_markdownify, False),
        Candidate("html-to-markdown, preset aggressive", lambda h: h2m(h, H2M_AGGRESSIVE), False),
        Candidate("html-to-markdown, whole page", h2m, False),
        Candidate("markdownify, whole page", lambda h: markdownify.markdownify(h, **MARKDOWNIFY), False),
    ]


# --------------------------------------------------------------------------------------------
# Reference (the page's div role=main) and scoring
# --------------------------------------------------------------------------------------------


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def squash(text: str) -> str:
    return " ".join(words(text))


@dataclass
class Reference:
    words: Counter[str]
    text: str
    pres: list[str]  # squashed first non-empty line of every <pre>
    headings: list[str]  # squashed heading texts
    tables: list[str]  # squashed first non-empty cell of every <table>
    links: set[str]  # external hrefs


def reference(html: str) -> Reference:
    root = lxml.html.fromstring(html)
    main = root.xpath('//div[@role="main"]')[0]
    for anchor in main.xpath('.//a[contains(concat(" ", @class, " "), " headerlink ")]'):
        anchor.drop_tree()
    text = main.text_content()
    pres = []
    for pre in main.iter("pre"):
        first = next((line for line in pre.text_content().splitlines() if words(line)), "")
        if first:
            pres.append(squash(first))
    headings = [squash(h.text_content()) for h in main.xpath(".//h1|.//h2|.//h3|.//h4|.//h5|.//h6")]
    tables = []
    for table in main.iter("table"):
        cell = next(
            (squash(c.text_content()) for c in table.xpath(".//td|.//th") if words(c.text_content())), ""
        )
        if cell:
            tables.append(cell)
    links = {a.get("href") for a in main.xpath(".//a[@href]") if a.get("href", "").startswith("http")}
    return Reference(Counter(words(text)), text, pres, [h for h in headings if h], tables, links)


@dataclass
class Score:
    ref_words: int = 0
    kept: int = 0
    out_words: int = 0
    extra: int = 0
    chrome: list[str] = field(default_factory=list)
    pres: tuple[int, int] = (0, 0)
    headings: tuple[int, int] = (0, 0)
    tables: tuple[int, int] = (0, 0)
    links: tuple[int, int] = (0, 0)


def fenced_text(markdown: str) -> str:
    """The squashed text of every fenced code block (``` or ~~~, also inside lists/quotes)."""
    inside: list[str] = []
    fence = ""
    for line in markdown.splitlines():
        found = FENCE.match(line)
        if fence:
            if found and found.group(1)[0] == fence[0] and len(found.group(1)) >= len(fence):
                fence = ""
            else:
                inside.append(line)
        elif found:
            fence = found.group(1)
    return "\n".join(squash(line) for line in inside)


def score(ref: Reference, markdown: str) -> Score:
    plain = LINK_TARGET.sub("]", markdown)
    out = Counter(words(plain))
    s = Score(ref_words=sum(ref.words.values()), out_words=sum(out.values()))
    s.kept = sum(min(n, out[w]) for w, n in ref.words.items())
    s.extra = sum(max(0, n - ref.words[w]) for w, n in out.items())
    s.chrome = [c for c in CHROME if c in markdown and c not in ref.text]
    code = fenced_text(markdown)
    s.pres = (sum(p in code for p in ref.pres), len(ref.pres))
    lines = plain.splitlines()
    heads = "\n".join(squash(line) for line in lines if line.lstrip().startswith("#"))
    s.headings = (sum(h in heads for h in ref.headings), len(ref.headings))
    rows = "\n".join(squash(line) for line in lines if line.lstrip().startswith("|"))
    s.tables = (sum(t in rows for t in ref.tables), len(ref.tables))
    s.links = (sum(link in markdown for link in ref.links), len(ref.links))
    return s


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------


class NetworkGuard:
    """Refuse (and count) every outgoing connection and name lookup while installed."""

    def __init__(self) -> None:
        self.attempts: list[str] = []

    def __enter__(self) -> NetworkGuard:
        self._saved = (socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo)

        def refuse(*args: object, **kwargs: object) -> None:
            self.attempts.append(repr(args[1:] or args)[:80])
            raise OSError("network disabled by bench/convert.py")

        socket.socket.connect = refuse  # type: ignore[method-assign]
        socket.socket.connect_ex = refuse  # type: ignore[method-assign]
        socket.getaddrinfo = refuse  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = self._saved  # type: ignore[method-assign]


def sample_pages(html_dir: Path, n: int) -> list[tuple[str, str]]:
    """n pages evenly spaced over the sorted doc pages (changelog excluded: it is a large page)."""
    pages = [(name, path) for name, path in build_corpus.source_pages(html_dir) if "changelog" not in name]
    step = max(1, len(pages) / n) if n else 1
    picked = [pages[int(i * step)] for i in range(min(n, len(pages)))] if n else pages
    return [(name, build_corpus.read(path)) for name, path in picked]


def large_pages(html_dir: Path) -> list[tuple[str, str]]:
    changelog = html_dir / "whatsnew" / "changelog.html.gz"
    pages = []
    if changelog.is_file():
        pages.append(("whatsnew/changelog.html", gzip.decompress(changelog.read_bytes()).decode("utf-8")))
    contents = html_dir / "contents.html"
    if contents.is_file():
        pages.append(("contents.html", contents.read_text(encoding="utf-8")))
    # ~5 MB: one real page (its chrome kept) whose main div holds the bodies of many pages.
    library = sorted((html_dir / "library").glob("*.html"))
    if library:
        shell = library[0].read_text(encoding="utf-8")
        bodies: list[str] = []
        size = len(shell)
        for path in library:
            main = re.search(
                r'<div class="body" role="main">(.*?)<div class="sphinxsidebar"',
                path.read_text(encoding="utf-8"),
                re.S,
            )
            if main:
                bodies.append(main.group(1))
                size += len(main.group(1))
            if size > 5_000_000:
                break
        head, sep, tail = shell.partition('<div class="body" role="main">')
        pages.append(("synthetic 5 MB", head + sep + "".join(bodies) + tail))
    return pages


@dataclass
class Totals:
    seconds: float = 0.0
    fallbacks: int = 0
    failures: list[str] = field(default_factory=list)
    scores: list[Score] = field(default_factory=list)


def strip_landmarks(html: str) -> str:
    """The page without its ARIA main landmark: what a extractor sees on a site without one."""
    return html.replace(' role="main"', "")


def run_all(
    pages: list[tuple[str, str]], cands: list[Candidate], dump: Path | None, variant: str
) -> tuple[dict[str, Totals], list[str]]:
    totals = {c.name: Totals() for c in cands}
    rows = []
    for i, (name, served) in enumerate(pages):
        ref = reference(served)
        html = served if variant == "as served" else strip_landmarks(served)
        k = i % len(cands)
        for cand in cands[k:] + cands[:k]:
            t0 = time.perf_counter()
            try:
                markdown = cand.run(html)
            except Exception as exc:  # report and go on
                totals[cand.name].seconds += time.perf_counter() - t0
                totals[cand.name].failures.append(f"{name}: {type(exc).__name__}: {exc}"[:200])
                markdown = ""
            else:
                totals[cand.name].seconds += time.perf_counter() - t0
            s = score(ref, markdown)
            totals[cand.name].scores.append(s)
            rows.append(
                f"{variant}\t{name}\t{len(html.encode())}\t{cand.name}\t{totals[cand.name].seconds:.4f}\t"
                f"{s.kept / max(1, s.ref_words):.3f}\t{s.extra / max(1, s.out_words):.3f}\t"
                f"{','.join(s.chrome)}\t{s.pres[0]}/{s.pres[1]}\t{s.headings[0]}/{s.headings[1]}"
            )
            if dump is not None:
                target = (
                    dump
                    / variant.replace(" ", "_")
                    / re.sub(r"\W+", "_", cand.name)
                    / (name.removesuffix(".html") + ".md")
                )
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(markdown, encoding="utf-8")
        if (i + 1) % 25 == 0:
            print(f"  {i + 1}/{len(pages)} pages", file=sys.stderr, flush=True)
    return totals, rows


def share(pairs: list[tuple[int, int]]) -> str:
    got, total = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    return f"{got / total:.1%}" if total else "n/a"


def print_main_table(totals: dict[str, Totals], megabytes: float, fastest: float | None = None) -> float:
    """Print one variant's table; "vs fastest" is relative to ``fastest`` s/MB (default: this table's)."""
    fastest = fastest or min(t.seconds for t in totals.values()) / megabytes
    table_row(
        "candidate",
        "s/MB",
        "vs fastest",
        "failed",
        "kept: all",
        "kept: mean / min",
        f"pages < {KEPT_LOW:.0%}",
        "extra words",
        "pages with chrome",
        "fenced code",
        "headings #",
        "tables as rows",
        "ext links",
        "fallbacks",
    )
    print("|---|" + "---:|" * 13)
    for name, t in totals.items():
        per_page = [s.kept / s.ref_words for s in t.scores if s.ref_words]
        kept_all = sum(s.kept for s in t.scores) / max(1, sum(s.ref_words for s in t.scores))
        extra = sum(s.extra for s in t.scores) / max(1, sum(s.out_words for s in t.scores))
        chrome = sum(bool(s.chrome) for s in t.scores)
        table_row(
            name,
            f"{t.seconds / megabytes:.3f}",
            f"{t.seconds / megabytes / fastest:.1f}x",
            len(t.failures),
            f"{kept_all:.1%}",
            f"{statistics.mean(per_page):.1%} / {min(per_page):.1%}",
            sum(k < KEPT_LOW for k in per_page),
            f"{extra:.1%}",
            f"{chrome} / {len(t.scores)}",
            share([s.pres for s in t.scores]),
            share([s.headings for s in t.scores]),
            share([s.tables for s in t.scores]),
            share([s.links for s in t.scores]),
            t.fallbacks if name in (OURS, TRAFILATURA_FALLBACK) else "",
        )
    return fastest


def time_large(pages: list[tuple[str, str]], cands: list[Candidate]) -> None:
    table_row("candidate", *(f"{name} ({len(html.encode()) / 1e6:.1f} MB)" for name, html in pages))
    print("|---|" + "---:|" * len(pages))
    for cand in cands:
        cells = []
        for _name, html in pages:
            t0 = time.perf_counter()
            try:
                out = cand.run(html)
                cells.append(f"{time.perf_counter() - t0:.2f} s ({len(out) / 1e6:.2f} MB out)")
            except Exception as exc:
                cells.append(f"{time.perf_counter() - t0:.2f} s: {type(exc).__name__}")
        table_row(cand.name, *cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--pages", type=int, default=250, help="pages sampled evenly (0 = all; default %(default)s)"
    )
    parser.add_argument("--html", type=Path, default=build_corpus.HTML_DIR, help="Sphinx HTML root")
    parser.add_argument("--dump", type=Path, help="write every output to DIR/<candidate>/<page>.md")
    parser.add_argument("--skip-large", action="store_true", help="do not time the largest pages")
    args = parser.parse_args(argv)
    if not build_corpus.docs_installed(args.html):
        return 2
    warnings.simplefilter("ignore")
    pages = sample_pages(args.html, args.pages)
    megabytes = sum(len(html.encode()) for _, html in pages) / 1e6
    cands = candidates()
    libs = ("trafilatura", "readability-lxml", "readabilipy", "markdownify", "html-to-markdown", "lxml")
    print(
        f"{date.today()}, {os.cpu_count()} cpus, python {sys.version.split()[0]}; "
        + ", ".join(f"{lib} {version(lib)}" for lib in libs)
    )
    print(f"{len(pages)} pages, {megabytes:.1f} MB of HTML, from {args.html}\n")
    with NetworkGuard() as guard:
        for cand in cands:  # warm-up: imports, lazy tables, compiled regexes
            cand.run(pages[0][1])
        FALLBACKS.clear()
        rows = ["variant\tpage\tbytes\tcandidate\tseconds\tkept\textra\tchrome\tfenced\theadings"]
        all_totals = {}
        fastest = None
        for variant in VARIANTS:
            print(f"\nPages {variant}\n")
            subset = cands if variant == VARIANTS[0] else [c for c in cands if c.finds_content]
            FALLBACKS.clear()
            totals, variant_rows = run_all(pages, subset, args.dump, variant)
            for name, t in totals.items():
                t.fallbacks = FALLBACKS[name]
            fastest = print_main_table(totals, megabytes, fastest)
            rows += variant_rows
            all_totals.update({f"{variant}: {k}": v for k, v in totals.items()})
        totals = all_totals
        if not args.skip_large:
            print("\nLargest pages (one call each)\n")
            time_large(large_pages(args.html), cands)
    DATA_DIR.mkdir(exist_ok=True)
    (DATA_DIR / "convert_pages.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"\nnetwork attempts: {len(guard.attempts)} {guard.attempts[:3] or ''}")
    for name, t in totals.items():
        for failure in t.failures[:3]:
            print(f"failure: {name}: {failure}")
    return 1 if guard.attempts or any(t.failures for t in totals.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
