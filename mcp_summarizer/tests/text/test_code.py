"""Source code pasted without a fence (`text.code`, read by `text.units`): a region opens at
what only a program has at column 0, runs over its strings, comments and indented lines, is
cut into whole statements, and gives the text after it back."""

from __future__ import annotations

import ast
import textwrap

from mcp_summarizer.summarize import extractive
from mcp_summarizer.text import tokens
from mcp_summarizer.text.code import code_region, is_docstring, is_imports
from mcp_summarizer.text.units import CODE, HEADER, KIND, TEXT, parse

MODULE = textwrap.dedent(
    '''\
    """A module whose docstring has a blank line,

    and a line at column 0 that reads as prose: it is still the string.
    # not a comment either
    """

    from __future__ import annotations

    import re

    # --- tuning ------------------------------------------------------------------

    LIMIT = 10  # how many
    NAME: str = "x = '"


    @cache
    def first(a: int,
              b: int) -> int:
        """Docstring.

    Its own column-0 line."""

        return a


    class Second(Base):
        x = 1
    else_value = {
        "key": 1,
    }
    if __name__ == "__main__":
        first(1, 2)
    else:
        pass
    # trailing comment, no code after it
    '''
)


def _code(text: str) -> list[str]:
    return [u[TEXT] for u in parse(text).units if u[KIND] == CODE]


def test_a_module_is_cut_into_whole_statements() -> None:
    end, starts = code_region(MODULE, 0)
    pieces = [MODULE[a:b].rstrip() for a, b in zip(starts, [*starts[1:], end], strict=True)]
    assert [p.split("\n", 1)[0] for p in pieces] == [
        '"""A module whose docstring has a blank line,',
        "from __future__ import annotations",
        "import re",
        "# --- tuning ------------------------------------------------------------------",
        "@cache",
        "class Second(Base):",
    ]
    assert pieces[3].endswith('NAME: str = "x = \'"'), "comments start the statement after them"
    assert pieces[4].count("\n") == 7, "decorator, signature over two lines, docstring, body"
    assert pieces[5].endswith("\nelse:\n    pass"), "else: continues its if; the last comment is not kept"
    for piece in pieces:
        ast.parse(piece)  # whole statements: none starts inside a string or a line
    assert end == MODULE.index("\n# trailing comment")


def test_comments_are_not_headings_and_lines_are_not_joined() -> None:
    doc = parse(MODULE)
    # Comments after the last statement go back to the text, as a markdown file's title
    # pasted right after the code must: there it reads as a heading.
    assert doc.headers == ["# trailing comment, no code after it"]
    assert [u[KIND] for u in doc.units] == [CODE] * 6 + [HEADER]
    assert "\n\n".join(_code(MODULE)) in MODULE.replace("\n\n\n", "\n\n")  # verbatim, in order


def test_text_after_code_is_text_again() -> None:
    text = MODULE + "\n# Guide\n\nThe guide starts here. It has two sentences.\n\n## Setup\n\nRun it.\n"
    doc = parse(text)
    assert doc.headers == ["# trailing comment, no code after it", "# Guide", "## Setup"]
    assert [u[TEXT] for u in doc.units if u[KIND] != CODE][-3:] == [
        "The guide starts here.",
        "It has two sentences.",
        "Run it.",
    ]


def test_files_pasted_without_a_blank_line_between() -> None:
    """A markdown file's last paragraph, then a module's docstring on the next line, then a
    second module right after the first one's last line."""
    text = (
        "# Notes\n\nThe notes end here.\n"
        '"""First module.\n\nIts docstring goes on."""\n\ndef f():\n    return 1\n'
        '"""Second module."""\nimport os\n'
    )
    doc = parse(text)
    assert [u[TEXT] for u in doc.units if u[KIND] != CODE] == ["The notes end here."]
    assert _code(text) == [
        '"""First module.\n\nIts docstring goes on."""',
        "def f():\n    return 1",
        '"""Second module."""\nimport os',
    ]
    assert parse(text).units[1][4] == (), "a file's opening is not under the headings before it"


def test_comments_right_above_code_open_it_and_other_comments_are_headings() -> None:
    text = "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\nimport sys\n\n# Title\n\nSome prose here.\n"
    assert _code(text) == ["#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\nimport sys"]
    assert parse(text).headers == ["# Title"]
    assert parse("# Title\nimport sys\n").headers == [], "a comment above an import is code"


def test_a_section_rule_above_definitions_opens_their_region_across_blank_lines() -> None:
    """A text cut into pieces may start at a section rule with two blank lines under it (the
    repository's own tests have 109): it opens the code, with the definition under it as one
    statement, not a heading alone, as inside a module (the first-impression test found one
    printed as a heading)."""
    piece = "# -- success ------------\n\n\nasync def f():\n    pass\n\n\ndef g(x):\n    return x\n"
    doc = parse(piece)
    assert doc.headers == []
    rule_and_f = "# -- success ------------\n\n\nasync def f():\n    pass"
    assert _code(piece) == [rule_and_f, "def g(x):\n    return x"]
    assert _code(MODULE + "\n" + piece)[-2:] == _code(piece), "the same statements inside a module"
    # A heading over prose stays a heading, whatever code comes later.
    assert parse("# Usage\n\nRun it like this.\n\ndef f():\n    pass\n").headers == ["# Usage"]


def test_prose_that_merely_mentions_code_stays_prose() -> None:
    text = textwrap.dedent(
        """\
        # Usage

        Call the function once, then import the results into a sheet.
        from here the reader goes on, since from X import Y needs the whole line.
        The class of a wolf pack: alpha.
        Note: x = 1 is a line of prose.
        """
    )
    doc = parse(text)
    assert not _code(text) and doc.headers == ["# Usage"]


def test_other_languages_open_regions_by_their_first_lines() -> None:
    js = "Some text before the script.\n\nfunction add(a, b) {\n  return a + b;\n}\nconst x = add(1, 2);\n"
    assert _code(js) == ["function add(a, b) {\n  return a + b;\n}\nconst x = add(1, 2);"]
    c = "#include <stdio.h>\n\nint main(void) {\n    return 0;\n}\n"
    assert _code(c)[0].startswith("#include <stdio.h>")


def test_statement_kinds() -> None:
    assert is_imports("from a import (\n    b,\n    c,\n)")
    assert is_imports("# why\nimport a\nfrom b import c  # note")
    assert not is_imports("import a\nx = 1")
    assert is_docstring('"""Doc.\n\nMore.\n"""') and is_docstring("r'''x'''")
    assert not is_docstring('"""a""" + """b"""') and not is_docstring("x = 1")


def test_a_summary_of_code_never_joins_its_lines_or_ends_on_a_signature() -> None:
    source = "\n".join(
        MODULE.replace("first", f"first_{i}").replace("Second", f"Second{i}") for i in range(30)
    )
    for budget in (12, 30, 60, 150, 400):
        out = extractive.summarize(source, budget)
        assert out and tokens.count(out) <= budget
        lines = source.split("\n")
        assert all(line in lines for line in out.split("\n")), "whole lines of the source"
        last = out.rstrip().split("\n")[-1].split("#")[0].rstrip()
        assert not last.endswith((":", "(", ",")) and not last.startswith("@"), out
    out = extractive.summarize(source, 400)
    assert "import re" not in out, "a statement that only imports is not selected"
