"""Build the chunking-benchmark corpus: the CPython 3.11 docs as markdown.

Source: Debian's `python3.11-doc` (HTML under /usr/share/doc/python3.11/html). Each page's
main content (Sphinx's `<div class="body" role="main">`, not the sidebar, header or footer)
is converted with `html-to-markdown` and written to `data/pages/<path>.md`; `data/corpus.md`
is every page in sorted path order, each starting with its `# Title`, and `data/index.tsv`
records each page's character span in corpus.md.  Same inputs give byte-identical outputs.

    cd mcp_summarizer && python -m bench.build_corpus [--html DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import html
import re
import shutil
import sys
from html.parser import HTMLParser
from importlib.metadata import version
from pathlib import Path

import html_to_markdown

from mcp_summarizer.text import tokens

HTML_DIR = Path("/usr/share/doc/python3.11/html")
DATA_DIR = Path(__file__).resolve().parent / "data"
# Index pages that are only link lists, not documentation prose.
SKIP = re.compile(r"^(genindex.*|py-modindex|search|contents)\.html$")
OPTIONS = html_to_markdown.ConversionOptions(
    exclude_selectors=["a.headerlink"],  # the "¶" permalink after every heading
    extract_metadata=False,
)


class _MainSpan(HTMLParser):
    """Finds the (line, col) span of the first `<div role="main">` and its matching `</div>`."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.start: tuple[int, int] | None = None
        self.end: tuple[int, int] | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "div" or self.end is not None:
            return
        if self.start is not None:
            self._depth += 1
        elif dict(attrs).get("role") == "main":
            self.start, self._depth = self.getpos(), 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self.start is not None and self.end is None:
            self._depth -= 1
            if self._depth == 0:
                self.end = self.getpos()


def main_content(page: str) -> str:
    """The HTML of the page's main-content div (inclusive), or '' if there is none."""
    parser = _MainSpan()
    parser.feed(page)
    parser.close()
    if parser.start is None or parser.end is None:
        return ""
    line_starts = [0]
    for line in page.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))

    def offset(pos: tuple[int, int]) -> int:
        return line_starts[pos[0] - 1] + pos[1]

    return page[offset(parser.start) : offset(parser.end)] + "</div>"


def convert(page: str) -> str:
    """One HTML page as markdown that starts with `# Title` and ends with one newline."""
    result = html_to_markdown.convert(main_content(page), OPTIONS)
    md = (result.content or "").strip()
    if not md.startswith("# "):
        found = re.search(r"<title>(.*?)</title>", page, re.S)
        title = html.unescape(found.group(1)).split(" \u2014 Python")[0].strip() if found else "Untitled"
        md = f"# {title}\n\n{md}"
    return md + "\n"


def source_pages(html_dir: Path) -> list[tuple[str, Path]]:
    """(relative .html path, file) for every doc page, sorted; Debian gzips some (changelog)."""
    pages: dict[str, Path] = {}
    for path in html_dir.rglob("*.html*"):
        rel = path.relative_to(html_dir).as_posix()
        name = rel.removesuffix(".gz")
        if rel.startswith("_") or not name.endswith(".html") or SKIP.match(name):
            continue
        pages[name] = path
    return sorted(pages.items())


def read(path: Path) -> str:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return data.decode("utf-8")


def build(html_dir: Path, out: Path) -> tuple[int, int, str]:
    """Write pages, corpus.md and index.tsv; return (pages, cl100k tokens, sha256 of corpus.md)."""
    pages_dir = out / "pages"
    if pages_dir.exists():
        shutil.rmtree(pages_dir)
    pages_dir.mkdir(parents=True)
    parts: list[str] = []
    index = ["path\tstart\tend\ttokens"]
    pos = 0
    for name, path in source_pages(html_dir):
        md = convert(read(path))
        target = pages_dir / (name.removesuffix(".html") + ".md")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(md, encoding="utf-8")
        separator = "\n" if parts else ""  # a blank line between pages
        parts.append(separator + md)
        start = pos + len(separator)
        pos = start + len(md)
        index.append(f"{name}\t{start}\t{pos}\t{tokens.count(md)}")
    corpus = "".join(parts)
    (out / "corpus.md").write_text(corpus, encoding="utf-8", newline="\n")
    (out / "index.tsv").write_text("\n".join(index) + "\n", encoding="utf-8")
    return len(parts), tokens.count(corpus), hashlib.sha256(corpus.encode()).hexdigest()


def docs_installed(html: Path) -> bool:
    """Whether the Sphinx HTML docs are at ``html``; if not, say how to install them."""
    if (html / "index.html").is_file():
        return True
    print(
        f"error: no Python docs at {html}. Install them first:\n"
        "    sudo apt-get update && sudo apt-get install -y python3.11-doc",
        file=sys.stderr,
    )
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--html", type=Path, default=HTML_DIR, help="Sphinx HTML root (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="output dir (default: %(default)s)")
    args = parser.parse_args(argv)
    if not docs_installed(args.html):
        return 2
    n_pages, n_tokens, digest = build(args.html, args.out)
    print(f"html-to-markdown {version('html-to-markdown')}, source {args.html}")
    print(f"{n_pages} pages, {n_tokens:,} cl100k tokens -> {args.out / 'corpus.md'} (sha256 {digest[:16]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
