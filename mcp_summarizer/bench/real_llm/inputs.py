"""The bench's fixed inputs, each cut to its first ``tokens`` cl100k tokens at a line end.

A 135M model on one CPU thread reads a few hundred tokens a second at best and writes a few
dozen: the whole README (14k tokens) took 11 minutes.  Cutting keeps a run to minutes and
still gives several chunks (the bench's chunk size is small for that reason).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mcp_summarizer.text import tokens

__all__ = ["INPUTS", "PYDOC", "cut", "load"]

REPO = Path(__file__).resolve().parents[3]
# The Python docs' HTML, as Debian's python3.11-doc installs it (scripts/system-packages.txt).
PYDOC = Path("/usr/share/doc/python3.11/html")


def cut(text: str, n_tokens: int) -> str:
    """The longest run of whole lines from the start that holds at most ``n_tokens`` tokens."""
    lines = text.splitlines(keepends=True)
    lo, hi = 0, len(lines)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if tokens.count("".join(lines[:mid])) <= n_tokens:
            lo = mid
        else:
            hi = mid - 1
    return "".join(lines[:lo])


def _readme() -> str:
    return (REPO / "README.md").read_text(encoding="utf-8")


def _pydoc(page: str) -> Callable[[], str]:
    def load() -> str:
        from bench.build_corpus import convert  # html-to-markdown, as the corpus is made

        path = PYDOC / "library" / page
        if not path.exists():
            raise SystemExit(f"{path} is missing: apt-get install python3.11-doc")
        return convert(path.read_text(encoding="utf-8"))

    return load


INPUTS: dict[str, Callable[[], str]] = {
    "readme": _readme,  # this repository's README: prose, tables, commands
    "pydoc-json": _pydoc("json.html"),  # reference prose with signatures and examples
    "pydoc-argparse": _pydoc("argparse.html"),  # a long page, much code
}


def load(name: str, n_tokens: int) -> str:
    if name not in INPUTS:
        raise SystemExit(f"unknown input {name!r}: one of {', '.join(INPUTS)}")
    return cut(INPUTS[name](), n_tokens)
