"""Boilerplate removal: each rule on chrome it must remove and on look-alike content it must
keep, a realistic crawled page, and properties (idempotent, deterministic, never grows,
kept lines byte-identical, code blocks untouched) over generated markdown."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_summarizer.text.boilerplate import Cleaned, find_boilerplate, strip_boilerplate
from mcp_summarizer.text.boilerplate_rules import RULES


def removed_lines(text: str) -> list[tuple[str, str]]:
    """(rule, line) for every line the module removes."""
    return [(r.rule, text[r.start : r.end]) for r in find_boilerplate(text)]


def keeps(text: str) -> None:
    cleaned = strip_boilerplate(text)
    assert cleaned.text == text, removed_lines(text)
    assert cleaned.removed == {} and cleaned.removed_chars == 0


def page(*blocks: str) -> str:
    """Blocks around some prose, separated by blank lines, as a converter writes them."""
    return "\n\n".join(["# Title", "Intro paragraph with real content.", *blocks, "Closing prose."]) + "\n"


# -- link_only and nav_menu ------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "[Home](/) › [Docs](/docs)",
        "* [Index](genindex.html) | [Modules](py-modindex.html)",
        "[Home](/) › [Docs](/docs) › Getting started",
        "[Home](https://example.com/) » [Blog](https://example.com/blog/ 'The blog')",
        '- [next](mailbox.html "mailbox — Manipulate mailboxes") |',
        "[Python](https://www.python.org/) »",
        "**[Home](/)** | **[About](/about)**",
        "[Privacy](/p) · [Terms](/t) · [Contact](/c)",
        "[![logo](/logo.png)](/) | [Docs](/docs)",
    ],
)
def test_link_only_lines_go(line: str) -> None:
    text = page(line)
    cleaned = strip_boilerplate(text)
    assert line not in cleaned.text
    assert cleaned.text == page()
    assert sum(cleaned.removed.values()) == 1
    assert set(cleaned.removed) <= {"link_only", "footer"}


@pytest.mark.parametrize(
    "line",
    [
        "- [json](json.html) — JSON encoder and decoder",
        "[json](json.html) — JSON encoder and decoder",
        "See [the tutorial](tutorial.html) | it explains everything.",
        "[PEP 8](https://peps.python.org/pep-0008/)",  # a single link: a "see also", not a menu
        "- [PEP 8](https://peps.python.org/pep-0008/)",
        "[`forward()`](#turtle.forward) | [`fd()`](#turtle.fd)",  # API aliases
        "[`hex()`](functions.html#hex), [`oct()`](functions.html#oct), [`bin()`](functions.html#bin).",
        "[[1]](#footnote-1)",
        "([bpo-18416](https://bugs.python.org/issue18416)).",
        "[A very long link label that describes a whole document](doc.html) | [Home](/)",
        "[Home](/) › [Docs](/docs) › This is a sentence that ends with a period.",
        "> [Home](/) | [Docs](/docs)",  # a quote
        "| [Home](/) | [Docs](/docs) |",  # a table row
    ],
)
def test_link_lines_with_content_stay(line: str) -> None:
    keeps(page(line))


def test_nav_menu_run_goes_as_a_block() -> None:
    menu = "\n\n".join(["- [Home](/)", "- [Blog](/blog)", "-", "- [About us](/about) |", "- |"])
    text = page(menu)
    cleaned = strip_boilerplate(text)
    assert cleaned.text == page()
    assert cleaned.removed == {"nav_menu": 5}


def test_nav_menu_tight_and_nested_lists() -> None:
    menu = "* [Products](/products)\n  + [Pricing](/pricing)\n  + [Enterprise](/enterprise)\n* [Docs](/docs)"
    cleaned = strip_boilerplate(page(menu))
    assert cleaned.text == page()
    assert cleaned.removed == {"nav_menu": 4}


def test_two_link_items_are_not_a_menu() -> None:
    keeps(page("- [Home](/)\n- [Blog](/blog)"))


def test_lone_separator_lines() -> None:
    cleaned = strip_boilerplate(page("- |", "«"))
    assert cleaned.text == page() and cleaned.removed == {"link_only": 2}
    keeps(page("-", "Read the program from standard input."))  # "-": a command-line option


def test_api_reference_lists_and_tables_of_contents_stay() -> None:
    keeps(page("- [`os.read()`](#os.read)\n- [`os.write()`](#os.write)\n- [`os.close()`](#os.close)"))
    # Links to sections of other pages: a table of contents, not a menu.
    keeps(page("- [Install](guide.html#install)\n- [Usage](guide.html#usage)\n- [API](guide.html#api)"))


def test_list_of_links_with_explanations_stays() -> None:
    keeps(
        page(
            "- [json](json.html) — JSON encoder and decoder\n"
            "- [csv](csv.html) — CSV File Reading and Writing\n"
            "- [pickle](pickle.html) — Python object serialization"
        )
    )


def test_link_line_inside_a_paragraph_stays() -> None:
    keeps(page("The navigation of the old site was\n[Home](/) | [Docs](/docs)\nand nothing else."))


def test_menu_run_broken_by_content() -> None:
    text = page("- [Home](/)\n- [Blog](/blog)", "A paragraph in between.", "- [About](/about)")
    keeps(text)


# -- cookie -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "We use cookies to improve your experience on our website.",
        "This website uses cookies to analyse traffic. By continuing to browse you agree to this.",
        "By continuing to use this site, you accept our use of cookies.",
        "Accept all cookies",
        "Reject all",
        "Cookie settings",
        "Cookie Policy",
        "Manage your consent",
        "[Manage cookies](/cookies)",
        "- [Accept all cookies](#accept)",
        "Necessary cookies only",
    ],
)
def test_cookie_banner_lines_go(line: str) -> None:
    cleaned = strip_boilerplate(page(line))
    assert cleaned.text == page()
    assert set(cleaned.removed) <= {"cookie", "footer"} and sum(cleaned.removed.values()) == 1


@pytest.mark.parametrize(
    "line",
    [
        "We use cookies from the store for the crust: crush them finely with the butter.",
        "Bake the cookies for 12 minutes, then allow cookies to cool on the sheet.",
        "Cookies are small files that a web server asks the browser to store.",
        "Accept",  # an HTTP header name in a reference, alone on its line
        "The cookie consent requirement of the ePrivacy directive dates from 2009, and the "
        "regulators have since published long guidance on what a valid consent is.",
    ],
)
def test_cookie_look_alikes_stay(line: str) -> None:
    keeps(page(line))


# -- edit_share ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "[edit]",
        "[[edit](https://en.wikipedia.org/w/index.php?title=X&action=edit&section=1)]",
        "Edit this page",
        "[Edit on GitHub](https://github.com/org/repo/edit/main/docs/index.md)",
        "Improve this page",
        "Share on X",
        "Share on Twitter | Share on Facebook",
        "Share",
        "- [Show Source](https://github.com/python/cpython/blob/3.11/Doc/library/json.rst)",
        "- [Report a Bug](../bugs.html)",
        "Print this page",
        "Back to top",
        "[↑ Back to top](#top)",
        "Skip to main content",
        "Toggle navigation",
        "Was this page helpful?",
    ],
)
def test_action_lines_go(line: str) -> None:
    cleaned = strip_boilerplate(page(line))
    assert cleaned.text == page()
    assert cleaned.removed == {"edit_share": 1}


@pytest.mark.parametrize(
    "line",
    [
        "Marshal Dughan shares a border with Westfall.",
        "Share your results with the team before Friday.",
        "Print the value of x after the loop.",
        "Edit the configuration file and restart the server.",
        "Report a bug if the installer crashes on startup, with the log attached.",
        "Sharing",
        "- Share the load between the two workers.",
        "Email:",  # a field label: "Email:" then the address
    ],
)
def test_action_look_alikes_stay(line: str) -> None:
    keeps(page(line))


# -- footer -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "© 2024 Acme Corp. All rights reserved.",
        "Copyright © 2001-2024 Python Software Foundation.",
        "Copyright 2024, the Sphinx developers",
        "(c) 2019 Example Ltd",
        "All rights reserved.",
        "Privacy Policy | Terms",
        "[Privacy Policy](/privacy) · [Terms of Service](/terms) · [Contact](/contact)",
        "Powered by [Discourse](https://discourse.org)",
        "Powered by WordPress",
        "Last updated on October 07, 2026. [Found a bug](/bugs.html)?",
        "Last updated: 2024-03-01",
        "This page was last edited on 5 March 2024, at 12:00 (UTC).",
        "Found a bug?",
        "Created using [Sphinx](https://www.sphinx-doc.org/) 5.3.0.",
        "Built with MkDocs using a theme provided by Read the Docs.",
        "This page is licensed under the Python Software Foundation License Version 2.",
        "Privacy Policy",
    ],
)
def test_footer_lines_go(line: str) -> None:
    cleaned = strip_boilerplate(page(line))
    assert cleaned.text == page()
    assert cleaned.removed == {"footer": 1}


@pytest.mark.parametrize(
    "line",
    [
        "Copyright law protects original works of authorship.",
        "Powered by a 2.0 L turbocharged engine, the car reaches 100 km/h in 6 seconds.",
        "Last updated values are cached for ten minutes.",
        "The privacy policy of the company changed in 2018 after the GDPR came into force.",
        "Privacy",
        "Terms and conditions of the contract are in annex B, signed by both parties.",
        "This page describes the licensing terms of the project.",
    ],
)
def test_footer_look_alikes_stay(line: str) -> None:
    keeps(page(line))


def test_footer_words_inside_a_paragraph_stay() -> None:
    keeps(
        page(
            "The act was amended in 1998: see the text under\nCopyright 1998 Act, section 2\nfor the details."
        )
    )


# -- code, headers, tables ---------------------------------------------------------------------

CHROME = [
    "[Home](/) › [Docs](/docs)",
    "- [Home](/)",
    "- [Blog](/blog)",
    "- [About](/about)",
    "We use cookies to improve your experience on our website.",
    "Edit on GitHub",
    "© 2024 Acme",
    "Back to top",
]


@pytest.mark.parametrize("fence", ["```", "~~~", "````", "   ```"])
def test_nothing_inside_a_fenced_code_block_is_touched(fence: str) -> None:
    marker = fence.strip()
    keeps(page(f"{fence}markdown\n" + "\n\n".join(CHROME) + f"\n{marker}"))
    keeps(page(f"{fence}\n" + "\n".join(CHROME)))  # an unclosed fence runs to the end


def test_fence_rules() -> None:
    # A shorter or different closing marker does not close; text after a closer means it is not one.
    body = "\n".join(CHROME)
    keeps(page(f"````\n```\n{body}\n~~~\n{body}\n```` x\n{body}\n````"))
    # "```x``` y" is inline code, not a fence: chrome after it is removed.
    cleaned = strip_boilerplate(page("```python``` is how you mark code", "Back to top"))
    assert cleaned.removed == {"edit_share": 1}


def test_indented_code_is_not_touched() -> None:
    keeps(page("Example:", "    [Home](/) › [Docs](/docs)\n    Back to top\n    © 2024 Acme"))
    keeps(page("Example:", "\t[Home](/) › [Docs](/docs)\n\tBack to top\n\t© 2024 Acme"))
    # ...but a nested list item is not code.
    cleaned = strip_boilerplate(page("- [Home](/)\n    - [Docs](/docs)\n\t- [Blog](/blog)"))
    assert cleaned.removed == {"nav_menu": 3}


def test_headers_are_never_removed() -> None:
    keeps(page("## [Home](/) › [Docs](/docs)", "### Edit on GitHub", "# © 2024", "Back to top\n==========="))
    keeps(page("[Home](/) | [Docs](/docs)\n---"))  # setext header


def test_tables_are_content() -> None:
    table = (
        "| link | what |\n| --- | --- |\n| [Home](/) | [Docs](/docs) |\n| [Blog](/blog) | [About](/about) |"
    )
    keeps(page(table))
    keeps(page("link | what\n--- | ---\n[Home](/) | [Docs](/docs)\n[Blog](/blog) | [About](/about)"))


# -- repeated ---------------------------------------------------------------------------------

BLURB = "Acme Docs is written by volunteers; join us on the forum to help."


def site_page(n: int) -> str:
    return (
        f"# Page {n}\n\nContent of page {n}, which is unique.\n\n"
        f"### About\n\n{BLURB}\n\n### Follow\n\nSome more text {n}.\n"
    )


def test_repeated_blurb_across_pages_keeps_the_first() -> None:
    text = "\n".join(site_page(n) for n in range(4))
    cleaned = strip_boilerplate(text)
    assert cleaned.removed == {"repeated": 3}
    assert cleaned.text.count(BLURB) == 1
    assert cleaned.text.index(BLURB) == text.index(BLURB)
    for n in range(4):
        assert f"Content of page {n}, which is unique." in cleaned.text


def test_repeated_notes_within_one_page_stay() -> None:
    # Documentation repeats a note under every item on purpose: that is content.
    items = "\n\n".join(
        f"## f{i}()\n\nDoes thing {i}.\n\nAvailability: Unix, not Emscripten, not WASI." for i in range(6)
    )
    keeps(f"# os\n\n{items}\n")


def test_repeated_lines_in_different_contexts_stay() -> None:
    pages = "\n".join(
        f"# Page {n}\n\nItem {n} first.\n\nAvailability: Unix, not Emscripten.\n\nItem {n} second.\n"
        for n in range(5)
    )
    keeps(pages)


def test_short_or_structural_repeats_stay() -> None:
    pages = "\n".join(
        f"# Page {n}\n\n## Overview\n\nNew in 3.10.\n\n| a | b |\n\n---\n\nText {n}.\n" for n in range(5)
    )
    keeps(pages)


# -- blank lines and byte identity -----------------------------------------------------------


def test_blank_lines_left_behind_collapse() -> None:
    text = "# T\n\nPara one.\n\n\n[Home](/) › [Docs](/docs)\n\n\n\nPara two.\n"
    assert strip_boilerplate(text).text == "# T\n\nPara one.\n\nPara two.\n"
    # ...but blank lines elsewhere are untouched.
    keeps("# T\n\n\n\nPara one.\n\n\n\nPara two.\n")


def test_removal_at_the_edges() -> None:
    assert strip_boilerplate("[Home](/) › [Docs](/docs)\n\n# T\n\nBody.\n").text == "# T\n\nBody.\n"
    assert strip_boilerplate("# T\n\nBody.\n\n© 2024 Acme\n").text == "# T\n\nBody.\n"
    assert strip_boilerplate("# T\n\nBody.\n\n© 2024 Acme").text == "# T\n\nBody.\n"
    assert strip_boilerplate("© 2024 Acme").text == ""
    assert strip_boilerplate("") == Cleaned("", {}, 0)


def test_crlf_lines_are_kept_byte_identical() -> None:
    text = page("[Home](/) › [Docs](/docs)", "Edit on GitHub").replace("\n", "\r\n")
    cleaned = strip_boilerplate(text)
    assert cleaned.text == page().replace("\n", "\r\n")
    assert cleaned.removed == {"link_only": 1, "edit_share": 1}


def test_hard_broken_footer_lines() -> None:
    footer = (
        "© [Copyright](../copyright.html) 2001-2026, Python Software Foundation.  \n"
        "This page is licensed under the Python Software Foundation License Version 2.  \n"
        "See [History and License](/license.html) for more information.  \n"
        "Last updated on October 07, 2026. [Found a bug](/bugs.html)?  \n"
        "Created using [Sphinx](https://www.sphinx-doc.org/) 5.3.0."
    )
    cleaned = strip_boilerplate(page(footer))
    assert cleaned.removed == {"footer": 4}
    assert "See [History and License](/license.html) for more information.  \n" in cleaned.text


# -- a realistic crawled page ----------------------------------------------------------------

CONTENT = """\
# Goldshire

Goldshire is a small town in Elwynn Forest, south of Stormwind City.

## Geography

The town lies on a crossroads. Marshal Dughan shares a border with Westfall.

- [Lion's Pride Inn](/wiki/Lions_Pride_Inn) — the inn where adventurers rest
- [Elwynn Forest](/wiki/Elwynn_Forest) — the zone around the town

| NPC | Role |
| --- | --- |
| [Marshal Dughan](/wiki/Dughan) | [Guard](/wiki/Guard) |

```python
nav = "[Home](/) › [Docs](/docs)"
```

## History

Goldshire grew around the inn. We use cookies in the inn's famous recipe, baked daily.
"""

CRAWLED = f"""\
[Skip to main content](#main)

- [Home](/)
- [Wiki](/wiki)
- [Forums](/forums)
- [Shop](/shop)

[Home](/) › [Wiki](/wiki) › [Elwynn Forest](/wiki/Elwynn_Forest) › Goldshire

We use cookies to give you the best experience on our website. [Learn more](/privacy)

[Accept all cookies](#accept)

{CONTENT}
[Edit on GitHub](https://github.com/example/wiki/edit/main/goldshire.md)

Share on X | Share on Facebook

---

[Privacy Policy](/privacy) · [Terms of Use](/terms) · [Contact](/contact)

© 2024 Example Wiki. All rights reserved.

Powered by [MediaWiki](https://www.mediawiki.org)
"""


def test_realistic_crawled_page_keeps_exactly_the_content() -> None:
    cleaned = strip_boilerplate(CRAWLED)
    assert cleaned.text == CONTENT + "\n---\n"  # the thematic break is structure: kept
    assert cleaned.removed == {
        "nav_menu": 5,  # the breadcrumb under the menu joins its run
        "cookie": 2,
        "edit_share": 3,
        "footer": 3,
    }
    assert cleaned.removed_chars == len(CRAWLED) - len(cleaned.text)
    assert strip_boilerplate(CONTENT) == Cleaned(CONTENT, {}, 0)


# -- properties -------------------------------------------------------------------------------

WORDS = st.sampled_from(
    ["the", "Goldshire", "cookies", "share", "edit", "Copyright", "Home", "Privacy", "Terms",
     "top", "x" * 30, "日本語", "😀", "—", "|", "›", "[", "]", "(", ")", "`", "*", "#", "©", "\t"]
)  # fmt: skip
PROSE = st.lists(WORDS, min_size=1, max_size=14).map(" ".join)
LINK = st.builds(
    lambda label, url: f"[{label}]({url})",
    st.sampled_from(["Home", "Docs", "Blog", "About us", "`code()`", "A very long label of many words here"]),
    st.sampled_from(["/", "/docs", "page.html", "#anchor", "page.html#section", "https://example.com/x"]),
)
CHROME_LINE = st.one_of(
    st.sampled_from([*CHROME, "Share", "Cookie settings", "Privacy Policy | Terms", "-", "- |", "«", BLURB]),
    st.builds(lambda a, b: f"{a} › {b}", LINK, LINK),
    st.builds(lambda a, b: f"- {a} | {b}", LINK, LINK),
    st.builds(lambda a: f"- {a}", LINK),
    st.builds(lambda a: f"  * {a}", LINK),
)


@st.composite
def crawled_markdown(draw: st.DrawFn) -> str:
    blocks: list[str] = []
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(
            st.sampled_from(["prose", "chrome", "chrome", "menu", "h1", "h", "code", "table", "blank"])
        )
        if kind == "prose":
            blocks.append(draw(PROSE))
        elif kind == "chrome":
            blocks.append(draw(CHROME_LINE))
        elif kind == "menu":
            sep = draw(st.sampled_from(["\n", "\n\n"]))
            blocks.append(sep.join(draw(st.lists(CHROME_LINE, min_size=1, max_size=6))))
        elif kind == "h1":
            blocks.append(f"# {draw(PROSE)}")
        elif kind == "h":
            blocks.append(f"{'#' * draw(st.integers(2, 6))} {draw(st.one_of(PROSE, CHROME_LINE))}")
        elif kind == "code":
            fence = draw(st.sampled_from(["```", "~~~", "````"]))
            body = "\n".join(draw(st.lists(st.one_of(CHROME_LINE, PROSE), max_size=5)))
            blocks.append(f"{fence}\n{body}\n{fence if draw(st.booleans()) else ''}")
        elif kind == "table":
            blocks.append(f"| a | b |\n| --- | --- |\n| {draw(LINK)} | {draw(LINK)} |")
        else:
            blocks.append("")
    joiner = draw(st.sampled_from(["\n\n", "\n", "\n\n\n"]))
    text = joiner.join(blocks) + draw(st.sampled_from(["", "\n", "\n\n"]))
    return text.replace("\n", "\r\n") if draw(st.booleans()) and draw(st.booleans()) else text


ANY_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=300)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_invariants(text: str) -> None:
    cleaned = strip_boilerplate(text)
    out = cleaned.text
    # idempotent and deterministic
    assert strip_boilerplate(out).text == out, removed_lines(out)
    assert strip_boilerplate(text) == cleaned
    # never grows; the accounting adds up
    assert len(out) <= len(text)
    assert cleaned.removed_chars == len(text) - len(out)
    removals = find_boilerplate(text)
    assert sum(cleaned.removed.values()) == len(removals)
    assert set(cleaned.removed) <= set(RULES) and all(n > 0 for n in cleaned.removed.values())
    assert (out == text) == (not removals)
    # every kept line is an original line, in order, byte-identical
    original = text.split("\n")
    kept = out.split("\n")
    if kept[-1] == "":
        kept.pop()  # the text ended with a newline (or is empty)
    pos = 0
    for line in kept:
        while original[pos] != line:
            pos += 1
        pos += 1
    # removed lines are never headers or inside code
    for r in removals:
        line = text[r.start : r.end]
        assert not re.match(r" {0,3}#{1,6}(\s|$)", line)
        assert line.strip()


@SETTINGS
@given(crawled_markdown())
def test_properties_on_generated_crawled_markdown(text: str) -> None:
    check_invariants(text)


@SETTINGS
@given(ANY_TEXT)
def test_properties_on_any_text(text: str) -> None:
    check_invariants(text)


@SETTINGS
@given(st.lists(st.one_of(CHROME_LINE, PROSE, st.just(""), st.just("```")), max_size=40).map("\n".join))
def test_code_fence_content_survives(text: str) -> None:
    out = strip_boilerplate(text).text
    inside, fence = [], None
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = None if fence else line
        elif fence:
            inside.append(line)
    kept = out.split("\n")
    for line in inside:
        assert line in kept


@pytest.mark.no_cover  # timed (pyproject.toml, markers)
def test_linear_time_on_a_large_page() -> None:
    """One page of chrome and content repeated: no quadratic blow-up (a few seconds if so)."""
    import time

    text = "\n".join(site_page(n) + CRAWLED for n in range(300))  # ~1 MB
    t0 = time.thread_time()  # this thread's CPU: a loaded machine's other processes do not count
    cleaned = strip_boilerplate(text)
    assert time.thread_time() - t0 < 2.0
    assert cleaned.removed["nav_menu"] == 5 * 300
