"""answering.allowance: an answer's budget, room and reserve, resolved once."""

from __future__ import annotations

import pytest

from mcp_summarizer.answering.allowance import allowance
from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import PROFILES, Limits
from mcp_summarizer.errors import InputError
from mcp_summarizer.summarize.budget import Budget
from mcp_summarizer.text import tokens

RULES = Budget(
    context_tokens=32_000,
    chunk_tokens=4_000,
    overlap_tokens=200,
    default_output=2_000,
    fetch_output=5_000,
    max_input=1_000_000,
)


def test_zero_asks_for_the_default_and_the_ceiling_is_checked() -> None:
    assert allowance(0, Limits(), ceiling=RULES).budget == RULES.default_output
    assert allowance(1_200, Limits(), ceiling=RULES).budget == 1_200
    with pytest.raises(InputError, match=f"max_output_tokens={RULES.max_output + 1} is over the limit"):
        allowance(RULES.max_output + 1, Limits(), ceiling=RULES)
    # Without the rules, what is asked is taken as it is (a tool's own default).
    assert allowance(RULES.max_output + 1, Limits()).budget == RULES.max_output + 1


def test_the_clients_token_cap_bounds_the_budget() -> None:
    claude = PROFILES["claude-code"]
    assert claude.tokens is not None
    assert allowance(30_000, claude).budget == claude.tokens
    assert allowance(3_000, claude).budget == 3_000


def test_the_room_is_what_the_clients_bytes_and_lines_leave() -> None:
    codex = PROFILES["codex"]
    allowed = allowance(8_000, codex)
    assert allowed.budget == 8_000
    assert allowed.room == fit.room(8_000, codex) < 8_000
    assert allowance(100, codex).room == 100  # a small budget fits them as it is
    # The source itself, already within them, keeps the whole budget.
    assert allowance(8_000, codex, fits=True).room == 8_000


def test_a_header_is_outside_the_budget_but_inside_the_clients_cap() -> None:
    header = "URL: https://example.com\nTitle: " + "word " * 30 + "\nStatus: whole\n\n"
    capped = Limits(tokens=1_000)
    assert allowance(5_000, capped, header=header).budget == 1_000 - tokens.count(header)
    assert allowance(500, capped, header=header).budget == 500
    sized = Limits(bytes=2_000)
    assert allowance(5_000, sized, header=header).room == fit.room(5_000, sized, header)


def test_the_reserve_is_taken_from_the_room_of_the_summary() -> None:
    allowed = allowance(2_000, PROFILES["codex"])
    assert allowed.summary == allowed.room
    kept = allowed.reserving(300)
    assert (kept.budget, kept.room, kept.summary) == (allowed.budget, allowed.room, allowed.room - 300)
    assert allowed.reserving(allowed.room + 5).summary == 1  # never nothing


def test_the_room_under_a_line_that_is_part_of_the_budget() -> None:
    line = "[proxy: 40,000 tokens summarized; expand doc~1#0]\n\n"
    allowed = allowance(3_000, Limits(bytes=4_000))
    assert allowed.under(line) == fit.room(3_000 - tokens.count(line), Limits(bytes=4_000), line)
    assert allowance(3_000, Limits()).under(line) == 3_000 - tokens.count(line)


def test_what_other_parts_take_is_left_out_of_the_texts_allowance() -> None:
    codex = PROFILES["codex"]
    assert codex.bytes is not None
    left = allowance(3_000, codex).less(2_000, 500)
    assert left.limits == Limits(bytes=codex.bytes - 2_000, lines=codex.lines, seconds=codex.seconds)
    assert (left.budget, left.room) == (2_500, fit.room(2_500, left.limits))
    # Bytes are taken only where the client counts them; never all of them.
    assert allowance(3_000, Limits(tokens=5_000)).less(2_000).limits == Limits(tokens=5_000)
    assert allowance(3_000, Limits(bytes=1_000)).less(4_000).limits.bytes == 1
    assert allowance(3_000, codex).less(0) == allowance(3_000, codex)


def test_fits_is_the_clients_bytes_and_lines() -> None:
    allowed = allowance(3_000, Limits(bytes=10, lines=2))
    assert allowed.fits("a\nb") and not allowed.fits("a\nb\nc") and not allowed.fits("x" * 11)
    assert allowance(3, Limits()).fits("word " * 100)  # its tokens are the caller's to count


def test_the_start_of_a_text_kept_exact_ends_at_a_line_end_within_the_allowance() -> None:
    head = "[proxy: cut at the limit]\n\n"
    text = "".join(f"line {i} of the upstream's own text\n" for i in range(200))
    allowed = allowance(100, Limits())
    assert allowed.left(head) == 100 - tokens.count(head)
    assert allowance(2, Limits()).left(head) == 1  # never nothing
    start = allowed.start(text, head)
    assert text.startswith(start) and start.endswith("\n")
    # About as many lines as fit (a line's tokens count a little differently at the cut).
    two_more = text[: text.index("\n", text.index("\n", len(start)) + 1) + 1]
    assert tokens.count(start) <= allowed.left(head) < tokens.count(two_more)
    assert tokens.count(allowed.start(text, head, room=30)) <= 30
    sized = allowance(5_000, Limits(bytes=400))
    assert len((head + sized.start(text, head)).encode()) <= 400
