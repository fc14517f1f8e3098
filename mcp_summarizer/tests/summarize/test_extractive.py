"""The extractive summarizer: exact budget, determinism, fidelity to the input's text, order
and structure, and that focus and kind change what is kept."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_summarizer.summarize.extractive import _fits, summarize
from mcp_summarizer.text import tokens
from mcp_summarizer.text.lexicon import Lexicon, named_things
from mcp_summarizer.text.units import BLOCK, KIND, TEXT, parse, sentences
from tests.support.markdown_text import ANY_TEXT, CJK_RUN, markdown

# -- generators ------------------------------------------------------------------------------

BUDGETS = st.sampled_from([1, 2, 5, 20, 50, 120, 400])


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def is_in_order_subsequence(out: str, text: str) -> bool:
    """Every non-space character of ``out`` comes from ``text``, in order."""
    source = iter(_squeeze(text))
    return all(c in source for c in _squeeze(out))


# -- invariants over generated input -----------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(markdown(), ANY_TEXT, CJK_RUN), BUDGETS, st.sampled_from(["general", "extraction"]))
def test_budget_order_and_determinism(text: str, budget: int, kind: str) -> None:
    out = summarize(text, budget, kind=kind)  # type: ignore[arg-type]
    assert tokens.count(out) <= budget
    if tokens.count(text) <= budget:
        assert out == text, "text that fits comes back unchanged"
    else:
        assert is_in_order_subsequence(out, text), "output is the input's own text, in order"
        assert "\ufffd" not in out or "\ufffd" in text, "a character was broken"
    assert summarize(text, budget, kind=kind) == out  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdown(), st.integers(1, 300), st.sampled_from(["", "wolves", "NPCs, factions", "dates"]))
def test_budget_with_focus(text: str, budget: int, focus: str) -> None:
    out = summarize(text, budget, focus=focus, kind="extraction")
    assert tokens.count(out) <= budget
    assert is_in_order_subsequence(out, text) or out == text


@settings(max_examples=300, deadline=None)
@given(st.one_of(markdown(), ANY_TEXT, CJK_RUN), st.integers(0, 200))
def test_fits_is_exact(text: str, budget: int) -> None:
    assert _fits(text, budget) == (tokens.count(text) <= budget)


INDENTED_LINE = st.lists(st.sampled_from(["wolf", "pack", "--all", "x", "42", "é", "  ", "."]), max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(INDENTED_LINE, min_size=1, max_size=60), st.integers(0, 40), st.sampled_from(["   ", "\t"]))
def test_fits_is_exact_on_indented_lines(lines: list[list[str]], budget: int, indent: str) -> None:
    # Every line starts blank (a manual page): the prefix is cut at the space before a word.
    text = "\n".join(indent + " ".join(words) for words in lines)
    assert _fits(text, budget) == (tokens.count(text) <= budget)


def test_fits_encodes_only_a_prefix_of_a_long_indented_page(monkeypatch: pytest.MonkeyPatch) -> None:
    page = "\n".join(f"       --option-{i}  Describe what option {i} does to the index." for i in range(2000))
    counted: list[int] = []
    real = tokens.count

    def count(text: str) -> int:
        counted.append(len(text))
        return real(text)

    monkeypatch.setattr(tokens, "count", count)
    assert not _fits(page, 100)
    assert counted and max(counted) < len(page) // 20, "told from a prefix, not the whole page"


def test_a_lexicon_shared_by_many_summaries_changes_none_of_them() -> None:
    texts = [
        "# Wolves\n\nWolves hunt in packs. The `pack.leader` decides. Marshal Dughan watches.\n" * 30,
        "The json module encodes objects. json.dumps writes JSON text; json.loads reads it.\n\n" * 30,
        "東京は日本の首都です。東京の人口は多い。 Wolves again, and 2024-01-01.\n" * 30,
    ]
    shared = Lexicon()
    for focus in ("", "wolves", "json"):
        for text in texts:
            assert summarize(text, 60, focus=focus, lexicon=shared) == summarize(text, 60, focus=focus)
    assert shared, "the shared lexicon was filled"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdown(), st.sampled_from([20, 60, 150, 400]))
def test_headers_and_code_blocks_survive_whole(text: str, budget: int) -> None:
    out = summarize(text, budget)
    if out == text:
        return
    doc = parse(text.replace("\r\n", "\n").replace("\r", "\n"))
    code_blocks = [u[TEXT] for u in doc.units if u[KIND] == 2]
    if any(_is_code_head(out, block) for block in code_blocks):
        return  # the last resort: a code block's first lines alone (test_hostile_text.py)
    if "\n" not in out and any(header.startswith(out) for header in doc.headers):
        return  # the last resort: a header alone, cut to the budget
    inside_code = set()
    for block in code_blocks:
        if block in out:
            inside_code.update(block.split("\n"))
    headers = set(doc.headers)
    # ATX headers as CommonMark reads them: "#Æ" is text, "# x" and "#" are headers.
    out_headers = [
        line for line in out.split("\n") if re.match(r"#{1,6}(?:[ \t]|$)", line) and line not in inside_code
    ]
    for line in out_headers:
        assert line in headers, f"{line!r} is not an input header"
    assert len(out_headers) == len(set(out_headers)), "a header printed twice"
    # A code block is either entirely in the output or not at all: once the blocks that are
    # there whole are taken out, no fence line of a block is left (a paragraph may start
    # with "```": after a quote line, an indented fence is paragraph text).
    rest = out
    for block in code_blocks:
        if block in rest:
            rest = rest.replace(block, "", 1)
    lines = [line for block in code_blocks for line in block.split("\n")]
    fences = {line for line in lines if line.lstrip().startswith(("```", "~~~"))}
    assert not [line for line in rest.split("\n") if line in fences]


def _is_code_head(out: str, block: str) -> bool:
    """``out`` is the first lines of ``block``, with or without its last (closing) line."""
    lines, kept = block.split("\n"), out.split("\n")
    return kept == lines[: len(kept)] or (kept[:-1] == lines[: len(kept) - 1] and kept[-1] == lines[-1])


# -- deterministic, also across hash seeds -----------------------------------------------------

STORY = textwrap.dedent(
    """\
    # The Northern Marches

    The Northern Marches are a cold frontier ruled by the Iron Compact since 1021.
    Trade flows along the Silver River, and the town of Kettleford taxes every barge.

    ## Factions

    - The Iron Compact holds the passes with hired blades.
    - The Green Circle, led by Elder Maren, guards the old forests.
    - Smugglers of the Grey Wake move salt and rumours by night.

    ## Wildlife

    Wolves hunt in packs of twelve along the ridge. Their howls carry for miles on still nights.
    Shepherds burn juniper to keep them away. Bears sleep through the long winter.

    ## Events

    | year | event |
    |---|---|
    | 1021 | The Compact takes Kettleford |
    | 1187 | The Silver River floods |
    | 1203 | Elder Maren founds the Green Circle |

    ```python
    def toll(barge):
        return barge.weight * 0.05
    ```

    The weather is often grey. People say many things about it. Nobody is sure.
    """
)


def test_deterministic_across_hash_seeds() -> None:
    code = (
        "import sys; from mcp_summarizer.summarize.extractive import summarize; "
        "text = sys.stdin.read(); "
        "print(repr([summarize(text, b, kind=k) for b in (30, 60, 120) for k in ('general', 'extraction')]))"
    )
    outs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", code], input=STORY, env=env, capture_output=True, text=True, check=True
        )
        outs.add(run.stdout)
    assert len(outs) == 1


# -- structure -------------------------------------------------------------------------------


def test_empty_and_tiny() -> None:
    assert summarize("", 100) == ""
    assert summarize("  \n\n ", 100) == "  \n\n "
    assert summarize(" " * 300, 1) == ""
    assert summarize(STORY, 0) == ""
    assert summarize(STORY, -5) == ""
    with pytest.raises(ValueError, match="kind"):
        summarize(STORY, 10, kind="bogus")  # type: ignore[arg-type]


def test_text_that_fits_is_returned_unchanged() -> None:
    n = tokens.count(STORY)
    assert summarize(STORY, n) == STORY
    assert summarize(STORY, n - 1) != STORY


@pytest.mark.parametrize("budget", [1, 5, 20, 40, 80, 150])
def test_exact_budget_on_a_story(budget: int) -> None:
    for kind in ("general", "extraction"):
        out = summarize(STORY, budget, kind=kind)
        assert tokens.count(out) <= budget
        assert is_in_order_subsequence(out, STORY)


def test_budget_is_used() -> None:
    """The greedy fills the budget: little is left over."""
    out = summarize(STORY, 120)
    assert 100 <= tokens.count(out) <= 120


def _story_sentences() -> set[str]:
    doc = parse(STORY)
    return {u[TEXT] for u in doc.units}


def test_output_lines_come_from_the_input_in_order() -> None:
    units = _story_sentences()
    headers = set(parse(STORY).headers)
    source_lines = STORY.split("\n")
    for budget in (40, 90, 160):
        out = summarize(STORY, budget)
        pos = -1
        for line in out.split("\n"):
            if not line or line in headers or line in source_lines:
                if line:
                    at = STORY.index(line, pos + 1)
                    assert at > pos, f"{line!r} out of order"
                    pos = at
                continue
            # Sentences of one paragraph, joined on one line (list items keep their marker).
            body = re.sub(r"^(?:[-*+]|\d+\.) ", "", line)
            rest = body
            while rest:
                match = next((s for s in sorted(units, key=len, reverse=True) if rest.startswith(s)), None)
                assert match, f"{rest!r} does not start with an input sentence"
                at = STORY.replace("\n", " ").index(match)
                assert at > pos, f"{match!r} out of order"
                pos = at
                rest = rest[len(match) :].lstrip()


def test_header_path_comes_with_a_unit_once() -> None:
    out = summarize(STORY, 60, focus="wolves")
    lines = out.split("\n")
    assert "## Wildlife" in lines
    assert "# The Northern Marches" in lines
    assert lines.index("# The Northern Marches") < lines.index("## Wildlife")
    assert sum(line.startswith("#") for line in lines) == len(
        {line for line in lines if line.startswith("#")}
    )


def test_table_rows_bring_the_table_header() -> None:
    out = summarize(STORY, 50, focus="floods")
    assert "| 1187 | The Silver River floods |" in out
    assert "| year | event |\n|---|---|\n| 1187 | The Silver River floods |" in out
    assert out.count("| year | event |") == 1


def test_a_code_block_is_whole_or_absent() -> None:
    block = "```python\ndef toll(barge):\n    return barge.weight * 0.05\n```"
    for budget in range(10, 200, 7):
        for focus in ("", "toll barge weight"):
            out = summarize(STORY, budget, focus=focus)
            assert (block in out) or ("def toll" not in out and "```" not in out)


def test_large_code_blocks_are_not_selected() -> None:
    code = "```\n" + "\n".join(f"value_{i} = compute(value_{i - 1}) + {i}" for i in range(1, 60)) + "\n```"
    text = f"# Doc\n\nSome words about the compute values here.\n\n{code}\n\nMore words about compute.\n"
    budget = tokens.count(code) * 2  # the block is more than a third of the budget
    out = summarize(text + "Filler sentence about other things. " * 200, budget)
    assert "value_1 =" not in out
    assert tokens.count(out) <= budget


def test_paragraph_sentences_join_on_one_line_and_items_stay_lines() -> None:
    out = summarize(STORY, 400 if tokens.count(STORY) > 400 else tokens.count(STORY) - 1)
    assert "- The Iron Compact holds the passes with hired blades.\n- The Green Circle" in out
    assert "Wolves hunt in packs of twelve along the ridge. Their howls carry for miles" in out


# -- what is kept ----------------------------------------------------------------------------

TOPICS = textwrap.dedent(
    """\
    # Field notes

    The valley economy depends on barley, wool and the weekly market in the lower town.
    Merchants from the coast bring salt, iron tools and cloth to the market every week.
    The market hall was rebuilt after the fire, and the market tax pays for the bridge.

    Grey wolves were seen near the northern pasture last spring.

    The river floods in early summer when the snow melts on the high ridges.
    Farmers plant barley on the terraces above the river to keep the crop dry.
    The mill on the river grinds barley for the market and for the monastery.
    """
)


def test_focus_keeps_the_focused_sentence() -> None:
    budget = 30  # the header and one sentence
    assert tokens.count(TOPICS) > budget
    plain = summarize(TOPICS, budget)
    focused = summarize(TOPICS, budget, focus="wolves")
    assert "wolves" not in plain  # the wolves line is off-topic for the document as a whole
    assert "market" in plain
    assert "Grey wolves were seen near the northern pasture last spring." in focused
    assert tokens.count(focused) <= budget


def test_focus_matches_plurals_and_case() -> None:
    text = TOPICS + "\nThe NPC named Odo sells maps at the bridge toll.\n"
    assert "NPC named Odo" in summarize(text, 30, focus="NPCs")
    assert "wolves" in summarize(TOPICS, 30, focus="Wolf")


def test_focus_on_a_section_header_favours_its_section() -> None:
    out = summarize(STORY, 70, focus="wildlife")
    assert "## Wildlife" in out


def test_extraction_prefers_entity_dense_units() -> None:
    text = textwrap.dedent(
        """\
        # Report

        Things happened in the region over a long time and many people were involved in them.
        Some of the things were important and others were less important to the people there.
        On 1203-04-11 Elder Maren of the Green Circle signed the Kettleford Accord with Captain Voss.
        People talked about the things for a long time and the talk went on and on in the region.
        """
    )
    budget = 40
    assert tokens.count(text) > budget
    out = summarize(text, budget, kind="extraction", focus="characters, factions, dates")
    assert "Elder Maren of the Green Circle signed the Kettleford Accord" in out


# -- units -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("paragraph", "expected"),
    [
        ("One. Two.", ["One.", "Two."]),
        ("Use a dict, e.g. Foo. Then stop.", ["Use a dict, e.g. Foo.", "Then stop."]),
        ("Mr. Smith arrived. He sat.", ["Mr. Smith arrived.", "He sat."]),
        (
            "Pi is 3.14 here. Python 3.11.2 is out. Fine.",
            ["Pi is 3.14 here.", "Python 3.11.2 is out.", "Fine."],
        ),
        ("See [this. Link](http://a.b/c). Next one.", ["See [this. Link](http://a.b/c).", "Next one."]),
        ("It failed (see note. Below) badly. Next.", ["It failed (see note. Below) badly.", "Next."]),
        ("A line\nwrapped here. Next\nline.", ["A line wrapped here.", "Next line."]),
        ("Why? Because! Yes.", ["Why?", "Because!", "Yes."]),
        ("done. lowercase continues", ["done. lowercase continues"]),
        ("J. R. R. Tolkien wrote it. True.", ["J. R. R. Tolkien wrote it.", "True."]),
        ("日本語の文。次の文！最後", ["日本語の文。", "次の文！", "最後"]),
    ],
)
def test_sentence_splitter(paragraph: str, expected: list[str]) -> None:
    assert sentences(paragraph) == expected


def test_named_things() -> None:
    found = named_things(
        "On 2023-02-08 the Python Software Foundation released version 3.11.2; see os.path.join() "
        'and `json.dumps`, JSONDecodeError, skip_keys and [a link](https://example.org/x "T").'
    )
    assert found == [
        ("2023-02-08", "date"),
        ("Python Software Foundation", "name"),
        ("3.11.2", "number"),
        ("os.path.join", "code"),
        ("json.dumps", "code"),
        ("JSONDecodeError", "exception"),
        ("skip_keys", "code"),
    ]


def test_parse_units() -> None:
    doc = parse(STORY)
    kinds = {u[TEXT]: u[KIND] for u in doc.units}
    assert kinds["- The Iron Compact holds the passes with hired blades."[2:]] == 0
    assert kinds["| 1187 | The Silver River floods |"] == 1
    assert doc.table_heads == ["| year | event |\n|---|---|"]
    assert doc.headers == ["# The Northern Marches", "## Factions", "## Wildlife", "## Events"]
    code = [u[TEXT] for u in doc.units if u[KIND] == 2]
    assert any(text.startswith("```python") and text.endswith("```") for text in code)


# -- indented code blocks -----------------------------------------------------------------------

# A python-docs-like page whose examples are indented code blocks (4 spaces, a tab), with
# "#" comments and blank lines inside them.
DOCS_PAGE = textwrap.dedent(
    """\
    # json - JSON encoder and decoder

    The json module exposes an API familiar to users of the standard library marshal and pickle modules.
    It can encode basic Python object hierarchies and decode JSON documents into Python objects.

    ## Basic usage

    Encoding basic Python object hierarchies with json.dumps:

        >>> import json
        >>> # serialize a list with a nested dict
        >>> json.dumps(['foo', {'bar': ('baz', None, 1.0, 2)}])
        '["foo", {"bar": ["baz", null, 1.0, 2]}]'

        >>> # compact encoding
        >>> json.dumps([1, 2, 3, {'4': 5, '6': 7}], separators=(',', ':'))
        '[1,2,3,{"4":5,"6":7}]'

    Decoding JSON with json.loads turns a JSON document into Python objects.
    The parse_float argument chooses the type of JSON floats.

        # decode a float as Decimal
        from decimal import Decimal
        json.loads('1.1', parse_float=Decimal)

    ## Exceptions

    json.JSONDecodeError is raised when the data being deserialized is not a valid JSON document.
    It is a subclass of ValueError with extra attributes: msg, doc, pos, lineno and colno.

    \t# dump to a file
    \twith open('data.json', 'w') as f:
    \t    json.dump(data, f)
    """
)
DUMPS_BLOCK = """\
    >>> import json
    >>> # serialize a list with a nested dict
    >>> json.dumps(['foo', {'bar': ('baz', None, 1.0, 2)}])
    '["foo", {"bar": ["baz", null, 1.0, 2]}]'

    >>> # compact encoding
    >>> json.dumps([1, 2, 3, {'4': 5, '6': 7}], separators=(',', ':'))
    '[1,2,3,{"4":5,"6":7}]'"""
DECIMAL_BLOCK = """\
    # decode a float as Decimal
    from decimal import Decimal
    json.loads('1.1', parse_float=Decimal)"""
FILE_BLOCK = "\t# dump to a file\n\twith open('data.json', 'w') as f:\n\t    json.dump(data, f)"


def _code_units(text: str) -> list[str]:
    return [u[TEXT] for u in parse(text).units if u[KIND] == 2]


def test_indented_code_is_one_verbatim_code_unit() -> None:
    doc = parse(DOCS_PAGE)
    assert doc.headers == ["# json - JSON encoder and decoder", "## Basic usage", "## Exceptions"]
    assert _code_units(DOCS_PAGE) == [DUMPS_BLOCK, DECIMAL_BLOCK, FILE_BLOCK]  # a blank line inside too


def test_an_indented_comment_is_not_a_header_in_the_summary() -> None:
    for budget in range(40, 240, 20):
        out = summarize(DOCS_PAGE, budget, focus="json.loads parse_float Decimal")
        assert tokens.count(out) <= budget
        headers = [line for line in out.split("\n") if line.startswith("#")]
        assert "# decode a float as Decimal" not in headers
        assert set(headers) <= {"# json - JSON encoder and decoder", "## Basic usage", "## Exceptions"}
    out = summarize(DOCS_PAGE, 150, focus="json.loads parse_float Decimal")
    assert "## Basic usage\n\nDecoding JSON with json.loads" in out
    assert DECIMAL_BLOCK in out, "the focused example is printed with its line breaks and indentation"


def test_indented_code_lines_are_never_merged() -> None:
    """Any line of an indented block in a summary comes with the whole block, as it was."""
    shown = set()
    for budget in range(20, 260, 10):
        for focus in ("", "json.loads parse_float Decimal", "json.dumps separators", "open file dump"):
            out = summarize(DOCS_PAGE, budget, focus=focus)
            for block in (DUMPS_BLOCK, DECIMAL_BLOCK, FILE_BLOCK):
                pieces = [line.strip() for line in block.split("\n") if line.strip()]
                if any(piece in out for piece in pieces):
                    assert block in out, f"{block!r} not whole in {out!r}"
                    shown.add(block)
    assert shown == {DECIMAL_BLOCK, FILE_BLOCK}  # the >>> block is over a third of these budgets


def test_indented_code_after_a_header_and_an_atx_header_indented_3_spaces() -> None:
    text = "   ## Setup\n    # not a header\n    pip install x\n\n  # Usage\n\nRun it.\n"
    doc = parse(text)
    assert doc.headers == ["## Setup", "# Usage"]
    assert _code_units(text) == ["    # not a header\n    pip install x"]


def test_an_indented_line_right_after_text_continues_it() -> None:
    """Indented code cannot interrupt a paragraph (CommonMark): the line is text, not a header."""
    doc = parse("Run the tool like this\n    # with no arguments\nand read its output.\n")
    assert doc.headers == []
    assert [u[TEXT] for u in doc.units] == ["Run the tool like this # with no arguments and read its output."]


def test_fenced_blocks_still_work_around_indented_code() -> None:
    """A fence line inside indented code is code: it opens no fenced block that would swallow
    the rest; a fenced block after it, or inside a list item, is still one code unit."""
    text = textwrap.dedent(
        """\
        # Guide

        An example of markdown source:

            ~~~
            # not a header

        ## Next

        ```python
        # a comment
        x = 1
        ```

        - Install it:

          ```sh
          pip install x
          ```
        """
    )
    doc = parse(text)
    assert doc.headers == ["# Guide", "## Next"]
    assert _code_units(text) == [
        "    ~~~\n    # not a header",
        "```python\n# a comment\nx = 1\n```",
        "  ```sh\n  pip install x\n  ```",
    ]
    for budget in (20, 40, 60):
        out = summarize(text, budget)
        assert tokens.count(out) <= budget
        assert ("```python\n# a comment\nx = 1\n```" in out) or ("x = 1" not in out)


def test_a_list_items_indented_continuation_is_text_and_its_code_is_code() -> None:
    """In a list item the indentation counts from the item's content column: a continuation
    paragraph indented 3 or 4 columns stays text, nested items stay items, and code in the
    item is indented 4 columns more than its content."""
    text = textwrap.dedent(
        """\
        1. Install the package with pip.

           Then check the version. It prints one line.

               $ tool --version
               # prints the version

        2. Configure it.

            The second step has a paragraph indented 4 spaces.
            - a nested item with 4 spaces
              * and a deeper one

        - Last item.

              # code in a dash item
        """
    )
    doc = parse(text)
    assert doc.headers == []
    assert _code_units(text) == [
        "       $ tool --version\n       # prints the version",
        "      # code in a dash item",
    ]
    texts = {u[TEXT]: (u[KIND], doc.prefixes[u[BLOCK]]) for u in doc.units}
    assert texts["Then check the version."] == (0, "   ")
    assert texts["It prints one line."] == (0, "   ")
    assert texts["The second step has a paragraph indented 4 spaces."] == (0, "    ")
    assert texts["a nested item with 4 spaces"] == (0, "    - ")
    assert texts["and a deeper one"] == (0, "      * ")


def test_docs_page_with_indented_examples_stays_within_budget() -> None:
    page = "\n".join([DOCS_PAGE] + [DOCS_PAGE.replace("json", f"mod{i}") for i in range(8)])
    blocks = _code_units(page)
    headers = set(parse(page).headers)
    for budget in (25, 80, 200, 500, 900):
        for kind in ("general", "extraction"):
            out = summarize(page, budget, kind=kind)
            assert tokens.count(out) <= budget
            assert is_in_order_subsequence(out, page)
            rest = out
            for block in blocks:
                rest = rest.replace(block, "")
            lines = rest.split("\n")
            assert not [line for line in lines if line.startswith("#") and line not in headers]
            assert not [line for line in lines if line.lstrip().startswith((">>>", "from decimal"))]


def _best_time(fn: Callable[[], object], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.thread_time()  # this thread's CPU: a loaded machine's other processes do not count
        fn()
        times.append(time.thread_time() - start)
    return min(times)


def _spaces_text() -> str:  # a blank line, a code line and a text line, each with 1M spaces
    return "# T\n\n" + " " * 1_000_000 + "\n\n" + " " * 1_000_000 + "# x\nText " + " " * 1_000_000 + "end.\n"


@pytest.mark.no_cover  # timed (pyproject.toml, markers)
@pytest.mark.parametrize(
    ("make", "code", "headers"),
    [
        pytest.param(lambda: "Intro.\n\n" + "    x = f(y)  # step\n" * 200_000, 1, 0, id="200k-line block"),
        pytest.param(_spaces_text, 1, 1, id="lines of 1M spaces"),
        pytest.param(lambda: "Text\n" + "    # deep\n" * 200_000, 0, 0, id="200k continuation lines"),
    ],
)
def test_parsing_hostile_indentation_is_linear(make: Callable[[], str], code: int, headers: int) -> None:
    """Timed against a linear reference on the same text (splitting it into lines), with
    generous slack (25 times is about the most seen, under load too): a quadratic scan of a
    200k-line block or of a 1M-space line would be thousands of times slower."""
    text = make()
    doc = parse(text)
    assert (sum(u[KIND] == 2 for u in doc.units), len(doc.headers)) == (code, headers)
    reference = _best_time(lambda: text.splitlines())
    assert _best_time(lambda: parse(text)) < 200 * reference
