"""Build the "crawled" variant of the benchmark corpus: whole Python-doc pages as markdown.

`build_corpus.py` keeps only each page's main content, which is what a summary should be
about but not what a crawler hands us: real crawled pages carry the site chrome (navigation
bars, breadcrumbs, sidebar table of contents, "Show Source", copyright footer).  To measure
boilerplate removal we need that chrome, so this script converts the WHOLE `<body>` of the
same pages (same page list, same `html-to-markdown` options) into `data/crawled/<path>.md`.
Same inputs give byte-identical outputs.

    cd mcp_summarizer && python -m bench.build_crawled [--html DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from importlib.metadata import version
from pathlib import Path

import html_to_markdown

from bench import build_corpus
from mcp_summarizer.text import tokens

BODY = re.compile(r"<body\b[^>]*>.*</body>", re.S | re.I)


def convert_whole(page: str) -> str:
    """The page's `<body>` (everything a crawler sees) as markdown ending with one newline."""
    found = BODY.search(page)
    body = found.group(0) if found else page
    result = html_to_markdown.convert(body, build_corpus.OPTIONS)
    return (result.content or "").strip() + "\n"


def build(html_dir: Path, out: Path) -> tuple[int, int]:
    """Write `out/<path>.md` for every page; return (pages, total cl100k tokens)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    n_pages = n_tokens = 0
    for name, path in build_corpus.source_pages(html_dir):
        md = convert_whole(build_corpus.read(path))
        target = out / (name.removesuffix(".html") + ".md")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(md, encoding="utf-8", newline="\n")
        n_pages += 1
        n_tokens += tokens.count(md)
    return n_pages, n_tokens


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--html", type=Path, default=build_corpus.HTML_DIR, help="Sphinx HTML root (default: %(default)s)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=build_corpus.DATA_DIR / "crawled",
        help="output dir (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if not build_corpus.docs_installed(args.html):
        return 2
    n_pages, n_tokens = build(args.html, args.out)
    print(f"html-to-markdown {version('html-to-markdown')}, source {args.html}")
    print(f"{n_pages} crawled pages, {n_tokens:,} cl100k tokens -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
