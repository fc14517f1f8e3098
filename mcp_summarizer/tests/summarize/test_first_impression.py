"""The embedded (extractive, no API key) summary's first impression, on the cases a new user
met: the repository's README at 150 tokens, a 200 KB hard-wrapped text, site chrome (HTML
comments, badges, link-only lines), and focus relevance on two real manuals."""

from __future__ import annotations

import ast
import gzip
import io
import itertools
import re
import subprocess
import sys
import textwrap
import tokenize
from pathlib import Path

import pytest

from mcp_summarizer.assembly.engine_setup import build_engine
from mcp_summarizer.config import load_settings
from mcp_summarizer.documents.topics import focus_terms, relevance
from mcp_summarizer.summarize import extractive
from mcp_summarizer.summarize.engine import Request
from mcp_summarizer.text import tokens
from mcp_summarizer.text.boilerplate import find_boilerplate, strip_boilerplate
from tests.cli.test_cli import PYTHONPATH
from tests.support.repository import repository_files

README = Path(__file__).resolve().parents[3] / "README.md"
MANUALS = Path("/usr/share/man/man1")
HEADER = re.compile(r"#{1,6} ")


def text_lines(summary: str) -> list[str]:
    """The summary's lines that are text (not headers, not blank)."""
    return [line for line in summary.splitlines() if line.strip() and not HEADER.match(line)]


def starts_a_source_line(line: str, source: str) -> bool:
    """``line`` (its list marker aside) begins where a line of ``source`` begins."""
    body = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line)[:40]
    starts = {re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", s).strip()[:40] for s in source.splitlines()}
    return body in starts


def assert_clean_edges(summary: str, source: str) -> None:
    lines = text_lines(summary)
    assert lines, summary
    first, last = lines[0], summary.rstrip().splitlines()[-1]
    assert starts_a_source_line(first, source), f"starts mid-line: {first[:80]!r}"
    item = re.match(r"\s*(?:[-*+]|\d+[.)])\s", first)
    assert item or not first.lstrip()[:1].islower(), f"starts mid-sentence: {first[:80]!r}"
    assert not HEADER.match(last), f"ends on a heading: {last!r}"
    assert not last.rstrip("*_` ").endswith(":"), f"ends on a lead-in: {last!r}"


async def test_the_readme_at_150_tokens_opens_and_ends_cleanly_without_markup() -> None:
    source = README.read_text(encoding="utf-8")
    assert "<!-- mcp-name:" in source, "the case: the README opens with an HTML comment"
    engine = build_engine(load_settings({}))  # no API key: the embedded summary
    outcome = await engine.summarize(Request(content=source, max_output_tokens=150))
    summary = outcome.text
    assert outcome.backend == "extractive" and tokens.count(summary) <= 150
    assert "<!--" not in summary and "mcp-name" not in summary
    assert_clean_edges(summary, source)


def hard_wrapped(n_paragraphs: int) -> str:
    """Prose wrapped at 72 columns, ~200 KB: most sentences start in the middle of a line."""
    out = []
    for p in range(n_paragraphs):
        sentences = [
            f"the caravan from Kettleford reached the ford on day {p}.",
            f"Wolves of the Grey Wake shadowed caravan {p} along the Silver River for {p % 9 + 2} nights.",
            f"Elder Maren recorded the toll of {p * 3} coins paid at the bridge.",
            "Nobody slept well.",
        ]
        out.append(textwrap.fill(" ".join(s[0].upper() + s[1:] for s in sentences), 72))
    return "\n\n".join(out) + "\n"


@pytest.mark.parametrize("focus", ["", "wolves"])
def test_a_200_kb_hard_wrapped_text_opens_at_a_line_start(focus: str) -> None:
    source = hard_wrapped(950)
    assert len(source.encode()) > 200_000
    summary = extractive.summarize(source, 300, focus=focus)
    assert tokens.count(summary) <= 300
    assert_clean_edges(summary, source)


CARAVANS = [f"Paragraph {i} tells how the caravans cross the ford {i} at dawn." for i in range(60)]


def test_a_lead_in_never_ends_the_summary() -> None:
    """The README's "What the proxy does with each result:" case: a lead-in dense in what the
    focus asks for, before a block too large to follow it into the summary."""
    source = "\n\n".join(
        [
            *CARAVANS,
            "The wolves of the Grey Wake, Elder Maren and the Kettleford toll bridge are listed below:",
            "```\n" + "x = 1\n" * 400 + "```",
        ]
    )
    summary = extractive.summarize(source, 80, focus="wolves")
    assert_clean_edges(summary, source)


def test_a_heading_never_ends_the_summary_unless_it_is_all_there_is() -> None:
    # An empty section (its header a unit of its own), then one whose only content is too large.
    source = "\n\n".join(
        [
            *CARAVANS,
            "## Wolves of the Grey Wake and their hunting grounds",
            "## Appendix",
            "```\n" + "x = 1\n" * 400 + "```",
        ]
    )
    summary = extractive.summarize(source, 80, focus="wolves")
    assert_clean_edges(summary, source)
    outline = "\n\n".join(f"## Wolves of region {i}" for i in range(300))
    assert extractive.summarize(outline, 40, focus="wolves").startswith("## Wolves of region")


def test_html_comments_and_badges_are_chrome() -> None:
    page = textwrap.dedent(
        """\
        # mcp-summarizer
        <!-- mcp-name: io.github.example/mcp-summarizer -->

        [![CI](https://github.com/x/y/actions/workflows/ci.yml/badge.svg)](https://github.com/x/y/actions) [![PyPI](https://img.shields.io/pypi/v/y.svg)](https://pypi.org/project/y/)

        ![Architecture of the service](docs/architecture.png)

        The service compresses large text for agents.

        ```html
        <!-- a comment in code stays -->
        ```
        """
    )
    removed = {(r.rule, page[r.start : r.end]) for r in find_boilerplate(page)}
    assert {rule for rule, _ in removed} == {"html_comment", "badge"}, removed
    cleaned = strip_boilerplate(page).text
    assert "mcp-name" not in cleaned and "badge.svg" not in cleaned
    assert "![Architecture of the service]" in cleaned, "a plain image is not a badge"
    assert "<!-- a comment in code stays -->" in cleaned and "The service compresses" in cleaned


def test_link_only_lines_are_never_selected() -> None:
    link = "[Wolves of the Grey Wake hunting grounds](wolves.html)"  # the focus, in a link only
    source = "\n\n".join([*CARAVANS, link, "<!-- wolves of the Grey Wake -->"])
    summary = extractive.summarize(source, 80, focus="wolves")
    assert "](" not in summary and "<!--" not in summary, summary


def _manual(name: str) -> str:
    path = MANUALS / f"{name}.1.gz"
    if not path.exists():
        pytest.skip(f"{path} is not installed (the {name} package's manual)")
    return gzip.decompress(path.read_bytes()).decode("utf-8", "replace")


def test_focus_relevance_ranks_the_find_manual_above_make() -> None:
    terms = focus_terms("recursive directory traversal")
    find, make = _manual("find"), _manual("make")
    assert relevance(find, terms) > relevance(make, terms), "word families: traversal ~ traversing"
    # Titles and headings count as the excerpt's words: an excerpt of find that never says
    # "directory" is still from a manual about a directory hierarchy.
    excerpt = "The -maxdepth option descends at most levels below the starting-points when recursing."
    title = "find - search for files in a directory hierarchy"
    assert relevance(excerpt, terms) == 0.333 and relevance(excerpt, terms, titles=title) == 0.667


# -- the README example and the repository's own files ------------------------------------------

TOOLS_TABLE = re.compile(r"^## Tools\n\n((?:\|.*\n)+)", re.M)


def readme_lead(source: str) -> str:
    """The README's first paragraph of prose (after its title and its HTML comment), on one line."""
    block = next(b for b in source.split("\n\n")[1:] if b[:1].isalpha())
    return " ".join(block.split())


def readme_tools(source: str) -> list[str]:
    """The first column of the README's table of tools (`summarize`, ...), as written."""
    table = TOOLS_TABLE.search(source)
    assert table, "the README has a '## Tools' table"
    return [row.split("|")[1].strip() for row in table.group(1).splitlines()[2:]]


def test_the_readme_example_says_what_the_project_is(tmp_path: Path) -> None:
    """The README's own example, as a user runs it (no API key: the embedded summary): its
    lead paragraph and the names of its tools, in 150 tokens."""
    source = README.read_text(encoding="utf-8")
    (tmp_path / "README.md").write_text(source, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_summarizer", "summarize", "README.md", "--max-output-tokens", "150"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": PYTHONPATH},
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    summary = proc.stdout.decode()
    assert tokens.count(summary.rstrip("\n")) <= 150 and "extractive]" in proc.stderr.decode()
    assert summary.startswith("# mcp-summarizer\n\n" + readme_lead(source) + "\n"), summary
    tools = readme_tools(source)
    assert len(tools) >= 6 and all(tool in summary for tool in tools), (tools, summary)
    assert_clean_edges(summary, source)


def markdown_headings(files: dict[str, str]) -> set[str]:
    headings = set()
    for name, text in files.items():
        if name.endswith(".md"):
            fenced = False
            for line in text.splitlines():
                fenced ^= line.lstrip().startswith(("```", "~~~"))
                if not fenced and HEADER.match(line):
                    headings.add(line.strip())
    return headings


def statement_starts(files: dict[str, str]) -> set[str]:
    """The lines where a top-level statement of a .py file starts (its first decorator for a
    decorated one), and the comment lines at column 0: Python's own parser and tokenizer
    say where a piece of code may start without starting inside a string or a line."""
    starts = set()
    for name, text in files.items():
        if name.endswith(".py"):
            lines = text.splitlines()
            for node in ast.parse(text).body:
                decorators = getattr(node, "decorator_list", [])
                starts.add(lines[(decorators[0] if decorators else node).lineno - 1])
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                if token.type == tokenize.COMMENT and token.start[1] == 0:
                    starts.add(token.line.rstrip("\n"))
    return starts


CODE_LIKE = re.compile(r"(?:import |from \S+ import |def |class |@)|.* = ")


@pytest.mark.no_cover  # the whole checkout, megabytes (pyproject.toml, markers)
async def test_the_repositorys_own_code_and_prose_read_as_code_and_prose() -> None:
    """All .md and .py files of the checkout (627k tokens, 2.4 MB at the time of writing),
    summarized by the embedded backend: comments are not headings, code lines are never
    joined, a piece of code never starts inside a string, headings do not stack on empty
    sections, and the summary does not end on a heading or a signature."""
    files = repository_files()
    source = "".join(files.values())
    engine = build_engine(load_settings({}))
    outcome = await engine.summarize(Request(content=source, max_output_tokens=5000))
    summary = outcome.text
    assert outcome.backend == "extractive" and 4000 <= tokens.count(summary) <= 5000
    py_lines = {line for name, text in files.items() if name.endswith(".py") for line in text.splitlines()}
    md_lines = {line for name, text in files.items() if name.endswith(".md") for line in text.splitlines()}
    headings, starts = markdown_headings(files), statement_starts(files)
    py_text = "".join(text for name, text in files.items() if name.endswith(".py"))
    lines = summary.split("\n")
    padded = ["", *lines, ""]
    printed_headings = []
    for i, line in enumerate(lines):
        alone = not padded[i].strip() and not padded[i + 2].strip()  # a block of its own
        # A comment printed with the code under it, blank lines and all, as its file has them
        # (a section rule above the definitions it names), is that code's, not a heading.
        after = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
        with_its_code = after is not None and "\n".join(lines[i : after + 1]) in py_text
        if HEADER.match(line) and alone and not with_its_code:
            assert line in headings, f"a comment printed as a heading: {line!r}"
            printed_headings.append(i)
        if line in py_lines and line not in md_lines and line[:1].strip() and not padded[i].strip():
            # After a blank line: a piece of code starts here, unless the line before the
            # blank one is its neighbour in a file (a blank line inside a docstring, say).
            before = max((j for j in range(i) if lines[j].strip()), default=-1)
            if before < 0 or lines[before] + "\n" * (i - before) + line not in py_text:
                assert line in starts, f"code starts inside a string or a statement: {line!r}"
        if line not in py_lines and line not in md_lines:  # sentences of one paragraph, joined
            joined = [p for p in py_lines - md_lines if len(p) > 24 and CODE_LIKE.match(p) and p in line]
            assert not joined, f"lines of code joined into one: {line[:120]!r}"
    for a, b in itertools.pairwise(printed_headings):
        if b == a + 2:  # nothing between two headings: the second must open a subsection
            assert len(lines[b].split()[0]) > len(lines[a].split()[0]), f"{lines[a]!r} then {lines[b]!r}"
    last = lines[-1]
    assert not HEADER.match(last) or not alone, f"ends on a heading: {last!r}"
    code = last.split("#")[0].rstrip()
    assert not code.endswith((":", "(", ",")) and not last.startswith("@"), f"ends on a signature: {last!r}"
    assert readme_lead(files["README.md"]) in summary, "it says what the project is"
