"""Unit tests for fetch_url's parts: raw windows, the answer's header, the page cache.

robots.txt has its own file, tests/web/test_robots.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_summarizer.assembly.from_settings import pages_options
from mcp_summarizer.text.offsets import TokenOffsets
from mcp_summarizer.web.pages import Page, render_answer, window


def page_of(text: str) -> Page:
    return Page(url="http://x/", title="T", kind="text", markdown=text, offsets=TokenOffsets(text))


def tile(page: Page, size: int) -> list[str]:
    out, start = [], 0
    while start < page.tokens:
        text, s, end = window(page, start, size)
        assert s == start, "each window starts where the last one ended"
        assert end > start, "every window makes progress"
        if end - start > size:  # only to hold one whole character: no boundary inside
            assert not any(page.offsets.is_char_boundary(i) for i in range(start + 1, end))
        out.append(text)
        start = end
    return out


text_with_multibyte = st.lists(
    st.sampled_from([*list("ab \n.#é中文🙂́"), "艾尔文", "```", "Elwynn "]), max_size=150
).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=text_with_multibyte, size=st.integers(min_value=1, max_value=40))
def test_windows_tile_the_text_losslessly(text: str, size: int) -> None:
    page = page_of(text)
    windows = tile(page, size)
    assert "".join(windows) == text
    assert not any("\ufffd" in w for w in windows)


def test_window_past_the_end_is_empty_and_at_the_end() -> None:
    page = page_of("Elwynn Forest")
    assert window(page, 10**6, 5) == ("", page.tokens, page.tokens)


def test_render_answer_puts_the_three_header_lines_first() -> None:
    page = Page(url="https://w/e", title="", kind="html", markdown="x", offsets=TokenOffsets("x"))
    assert render_answer(page, "full page, 1 tokens", "x") == (
        "URL: https://w/e\nTitle: (none)\nStatus: full page, 1 tokens\n\nx"
    )


def test_page_cache_holds_a_bounded_amount_of_text(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_summarizer.config import load_settings
    from mcp_summarizer.web import pages as pages_module

    monkeypatch.setattr(pages_module, "_CACHE_MAX_CHARS", 100)
    pages = pages_module.Pages(pages_options(load_settings({})))
    for name in "abcd":
        pages._remember(name, page_of(name * 20))
    pages._remember("b", page_of("B" * 20))  # replacing an entry does not count it twice
    assert list(pages._cache) == ["a", "c", "d", "b"] and pages._held == 80
    pages._remember("e", page_of("e" * 25))
    assert list(pages._cache) == ["c", "d", "b", "e"] and pages._held == 85  # oldest out first
    pages._remember("huge", page_of("x" * 26))  # over a quarter of the cap: never cached
    assert "huge" not in pages._cache
