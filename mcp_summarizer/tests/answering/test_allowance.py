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
