"""clients.profiles and clients.fit: which client is asking, and answers that fit it."""

from __future__ import annotations

import pytest

from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits, detect, limits_for
from mcp_summarizer.text import tokens

REFERENCE = "\n".join(
    f"- `os.path.func_{i}(path)` returns the value number {i} for a path; see also item {i % 12}."
    for i in range(3000)
)


@pytest.mark.parametrize(
    ("name", "profile"),
    [
        ("claude-code", "claude-code"),
        ("codex-mcp-client", "codex"),
        ("Codex", "codex"),
        ("github-copilot-developer", "copilot"),
        ("opencode", "opencode"),
        ("mcp", None),
        ("", None),
        (None, None),
        ("Visual Studio Code", None),
    ],
)
def test_clients_are_told_apart_by_their_client_info_name(name: str | None, profile: str | None) -> None:
    assert detect(name) == profile


def test_the_tightest_limit_of_profile_and_settings_wins() -> None:
    assert limits_for("auto", "codex-mcp-client") == Limits(bytes=10_000, lines=256, seconds=60)
    assert limits_for("auto", "codex-mcp-client", max_bytes=4096, max_lines=1000) == Limits(
        bytes=4096, lines=256, seconds=60
    )
    assert limits_for("auto", "some-agent", max_lines=300) == Limits(lines=300)
    assert limits_for("none", "codex-mcp-client") == Limits()  # no detection: the settings alone
    assert limits_for("opencode", "codex-mcp-client") == Limits(bytes=51_200, lines=2_000)  # chosen
    assert limits_for("claude-code", None).budget(25_000) == 10_000


@pytest.mark.parametrize(
    "limits", [Limits(bytes=10_000, lines=256), Limits(bytes=10_000), Limits(lines=40), Limits(bytes=1024)]
)
def test_pages_join_into_exactly_the_text_and_each_fits(limits: Limits) -> None:
    header = "Source: x#0\nStatus: characters 0-999999 of 999999; next offset=999999\n\n"
    text = REFERENCE + "\n" + "a-very-long-line " * 2000 + "\nlast line"  # one line over any page
    pages, start = [], 0
    while start < len(text):
        end = fit.page_end(text, start, limits, header)
        assert end > start
        pages.append(text[start:end])
        start = end
    assert "".join(pages) == text
    assert all(fit.fits(header + p, limits) for p in pages)
    # Pages end at line ends; inside the line too long for one page, at a space.
    for p in pages[:-1]:
        assert p.endswith("\n") or (p.endswith(" ") and set(p.split()) <= {"a-very-long-line"}), p[-80:]


def test_a_page_keeps_to_a_token_cap_too() -> None:
    end = fit.page_end(REFERENCE, 0, Limits(), "", max_tokens=500)
    assert 400 < tokens.count(REFERENCE[:end]) <= 500 and REFERENCE[:end].endswith("\n")


def test_multibyte_text_is_never_cut_inside_a_character() -> None:
    text = "北京市" * 5000  # one line of 45,000 bytes
    end = fit.page_end(text, 0, Limits(bytes=1000), "")
    assert len(text[:end].encode()) <= 1000 and end == 333


def test_the_room_follows_the_tightest_of_tokens_bytes_and_lines() -> None:
    assert fit.room(5000, Limits()) == 5000
    assert fit.room(5000, Limits(bytes=10_000)) == 2500
    assert fit.room(5000, Limits(lines=40)) == 40 * 12
    assert fit.room(1000, Limits(bytes=51_200)) == 1000


def test_a_summary_over_the_limits_gets_a_smaller_room_each_time() -> None:
    body = REFERENCE[:30_000]
    limits = Limits(bytes=10_000, lines=256)
    made = tokens.count(body)
    room = fit.shrink(made + 100, body, limits)
    assert room < made * 10_000 / 30_000  # scaled by how far over, with a margin
    assert fit.shrink(fit.MIN_ROOM, body, limits) == fit.MIN_ROOM  # the floor: the caller stops


def test_claude_code_is_told_to_keep_long_answers_inline() -> None:
    assert fit.inline_meta(49_000) == {}
    assert fit.inline_meta(60_000) == {"anthropic/maxResultSizeChars": 60_000}
    assert fit.inline_meta(600_000) == {}  # over Claude Code's own ceiling: no use


def test_tools_declare_the_most_characters_their_answers_can_have() -> None:
    assert fit.tool_meta(0) == {"anthropic/maxResultSizeChars": 500_000}
    assert fit.tool_meta(80_000) == {"anthropic/maxResultSizeChars": 80_000}
    assert fit.tool_meta(2_000_000) == {"anthropic/maxResultSizeChars": 500_000}
    assert fit.tool_meta(10_000) == {}  # Claude Code keeps 50,000 anyway


def test_limits_say_what_they_are() -> None:
    assert Limits(bytes=10_000, lines=256).describe() == "10,000 bytes / 256 lines"
    assert Limits(tokens=10_000).describe() == "10,000 tokens"
