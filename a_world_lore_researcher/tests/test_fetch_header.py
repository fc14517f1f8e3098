"""parse_fetch_result: fetch_url's header lines, tolerant of missing and unknown ones."""

from __future__ import annotations

from world_lore_researcher.tools import parse_fetch_result


def test_full_page() -> None:
    page = parse_fetch_result(
        "URL: https://a.example/x\nTitle: Elwynn\nStatus: full page, 812 tokens\n\n# Body\ntext"
    )
    assert (page.url, page.title, page.kind, page.summarized) == (
        "https://a.example/x",
        "Elwynn",
        "full",
        False,
    )
    assert page.body == "# Body\ntext"
    assert page.original_tokens == 812
    assert page.reason == ""


def test_summarized() -> None:
    page = parse_fetch_result(
        "URL: u\nTitle: t\nStatus: summarized from 23,456 to 3,990 tokens (FETCH_MAX_TOKENS 4096)\n\nsummary"
    )
    assert page.kind == "summarized" and page.summarized
    assert page.original_tokens == 23456
    assert page.body == "summary" and page.reason == ""


def test_summarized_offline_keeps_the_reason() -> None:
    page = parse_fetch_result(
        "URL: u\nTitle: t\nStatus: summarized from 23,456 to 3,990 tokens (embedded extractive "
        "summary: the LLM failed: HTTP 500: upstream exploded (retry later) after 3 attempts)\n\nsummary"
    )
    assert page.kind == "summarized" and page.summarized and page.body == "summary"
    why = "the LLM failed: HTTP 500: upstream exploded (retry later) after 3 attempts"
    assert page.reason == f"embedded extractive summary: {why}"


def test_not_summarized_keeps_the_reason_and_the_next_index() -> None:
    page = parse_fetch_result(
        "URL: u\nTitle: t\n"
        "Status: not summarized (LLM unavailable: 429 after 3 attempts); raw tokens 0-4096 of 23,456, "
        "next start_index=4096\n\nraw text"
    )
    assert page.kind == "not_summarized" and not page.summarized
    assert page.reason == "LLM unavailable: 429 after 3 attempts"
    assert page.original_tokens == 23456
    assert page.next_start_index == 4096


def test_raw() -> None:
    page = parse_fetch_result(
        "URL: u\nTitle: t\nStatus: raw tokens 0-4096 of 23,456, next start_index=4096\n\nx"
    )
    assert page.kind == "raw" and page.next_start_index == 4096 and page.original_tokens == 23456


def test_missing_lines_and_unknown_status() -> None:
    page = parse_fetch_result("URL: u\n\nbody")
    assert (page.url, page.title, page.kind, page.body) == ("u", "", "unknown", "body")
    assert page.reason == "no status line"
    page = parse_fetch_result("Title: t\nStatus: compressed somehow\nContent-Type: text/html\n\nbody")
    assert page.kind == "unknown" and page.reason == "unrecognised status: compressed somehow"
    assert page.headers["content-type"] == "text/html"


def test_no_header_is_all_content() -> None:
    for text in ("Just a page.\n\nWith paragraphs.", "Note: this line looks like a header\n\nbody", ""):
        page = parse_fetch_result(text)
        assert page.body == text and page.kind == "unknown" and page.url == ""


def test_body_keeps_blank_lines_and_header_like_lines() -> None:
    body = "Intro\n\nURL: not a header here\n\nend\n"
    page = parse_fetch_result(f"URL: u\nTitle: t\nStatus: full page, 5 tokens\n\n{body}")
    assert page.body == body


def test_no_title_placeholder() -> None:
    assert parse_fetch_result("URL: u\nTitle: (none)\nStatus: full page, 3 tokens\n\nx").title == ""


def test_reason_with_parentheses_and_end_of_page() -> None:
    page = parse_fetch_result(
        "URL: u\nTitle: t\nStatus: not summarized (the LLM failed: HTTP 503 (Service Unavailable) after 3 "
        "attempts); raw tokens 0-4096 of 23,456, next start_index=4096\n\nx"
    )
    assert page.reason == "the LLM failed: HTTP 503 (Service Unavailable) after 3 attempts"
    page = parse_fetch_result("URL: u\nTitle: t\nStatus: raw tokens 4096-5000 of 5,000, end of page\n\nx")
    assert page.kind == "raw" and page.next_start_index is None and page.original_tokens == 5000
