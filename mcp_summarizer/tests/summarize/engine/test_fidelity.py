"""The engine's fidelity pass on its own: the receipt of a scan made ahead is the receipt made at
the end, and FIDELITY_REPAIR asks one call to fix exactly what the receipt found (the model here
is the `ask` the engine passes in; tests/fidelity/test_fidelity_meta.py drives it through the
server and the test LLM)."""

from __future__ import annotations

import pytest

from mcp_summarizer.citations.ask import Ask
from mcp_summarizer.errors import LLMError
from mcp_summarizer.fidelity.receipt import receipt
from mcp_summarizer.summarize.engine.fidelity_pass import SCAN_AHEAD_CHARS, SourceScan, line_around, repair
from mcp_summarizer.summarize.engine.model import Outcome
from mcp_summarizer.summarize.engine.prompts import Prompts
from mcp_summarizer.text import tokens

SOURCE = (
    "# Goldshire\n\nThe Lion's Pride Inn has 42 rooms.\n"
    "Marshal Dughan posted 7 bounties in 1842 against the Defias.\n"
)
INVENTING = "The inn has 42 rooms and 99 cellars, says Captain Zorbo."


def test_line_around_gives_the_source_line_of_a_fact() -> None:
    assert line_around(SOURCE, "1842") == "Marshal Dughan posted 7 bounties in 1842 against the Defias."
    assert line_around(SOURCE, "Stormwind") == ""
    long_line = "word " * 200 + "1842 " + "word " * 200
    around = line_around(long_line, "1842")
    assert "1842" in around and len(around) <= 300 + len("1842"), "150 characters either side"


async def test_a_scan_made_ahead_gives_the_receipt_made_at_the_end() -> None:
    source = (SOURCE * (SCAN_AHEAD_CHARS // len(SOURCE) + 1)) + "Elwynn has 3 towers."
    scan = SourceScan(source)
    scan.start()
    got = await scan.receipt(INVENTING, "Defias")
    want = receipt(source, INVENTING, "Defias")
    assert got.totals() == want.totals() and got.invented == want.invented and got.kept == want.kept


def outcome_of(summary: str, focus: str = "") -> Outcome:
    out = Outcome(text=summary, input_tokens=tokens.count(SOURCE), output_tokens=tokens.count(summary))
    out.fidelity = receipt(SOURCE, summary, focus)
    return out


async def test_a_faithful_summary_is_not_sent_for_repair() -> None:
    asked: list[tuple[str, str]] = []

    async def ask(system: str, content: str) -> str:
        asked.append((system, content))
        return "never"

    out = outcome_of("The Lion's Pride Inn has 42 rooms.")
    await repair(
        out,
        scan=SourceScan(SOURCE),
        focus="",
        max_tokens=100,
        template=Prompts().repair,
        room=lambda s: 1000,
        ask=ask,
    )
    assert asked == [] and out.text == "The Lion's Pride Inn has 42 rooms."
    assert out.fidelity is not None and out.fidelity.repair is None


async def test_a_repair_names_the_invented_facts_and_its_answer_replaces_the_summary() -> None:
    asked: list[tuple[str, str]] = []
    fixed = "The Lion's Pride Inn has 42 rooms."

    async def ask(system: str, content: str) -> str:
        asked.append((system, content))
        return fixed

    out = outcome_of(INVENTING)
    before = out.fidelity
    assert before is not None and before.invented
    await repair(
        out,
        scan=SourceScan(SOURCE),
        focus="",
        max_tokens=100,
        template=Prompts().repair,
        room=lambda s: 1000,
        ask=ask,
    )
    [(system, content)] = asked
    assert "99" in system and "Captain Zorbo" in system and "at most 100 tokens" in system
    assert content.startswith(INVENTING)
    assert out.text == fixed and out.output_tokens == tokens.count(fixed)
    assert out.fidelity is not None and out.fidelity.invented == []
    assert out.fidelity.repair == {"before": before.totals(), "after": out.fidelity.totals(), "calls": 1}


async def test_a_repair_keeps_the_citations_and_its_receipt_does_not_count_them() -> None:
    asked: list[str] = []
    cited = "The Lion's Pride Inn has 42 rooms [src#12]. Marshal Dughan posted 7 bounties [src#13]."

    async def ask(system: str, content: str) -> str:
        asked.append(system)
        return cited  # the labels kept, as the prompt asks

    out = outcome_of(cited.replace(" [src#13].", ", says Captain Zorbo [src#13]."))
    await repair(
        out,
        scan=SourceScan(SOURCE),
        focus="",
        max_tokens=100,
        template=Prompts().repair,
        room=lambda s: 1000,
        ask=ask,
        citations=Ask(SOURCE, ["h#0", "h#1"], [0, 20]).repair_values()["citations"],
    )
    [system] = asked
    assert "Keep those citations exactly as written" in system and "[src#0]" in system
    # 12 and 13 are the citations' labels, not facts of the summary: nothing invented.
    assert out.text == cited and out.fidelity is not None and out.fidelity.invented == [], out.fidelity


async def test_the_repair_content_is_held_to_its_room() -> None:
    asked: list[str] = []

    async def ask(system: str, content: str) -> str:
        asked.append(content)
        return "The inn has 42 rooms."

    out = outcome_of(INVENTING + " " + "More words about the town. " * 100)
    await repair(
        out,
        scan=SourceScan(SOURCE),
        focus="",
        max_tokens=100,
        template=Prompts().repair,
        room=lambda s: 30,
        ask=ask,
    )
    assert tokens.count(asked[0]) <= 30


async def test_a_failed_repair_keeps_the_summary_and_says_why() -> None:
    async def ask(system: str, content: str) -> str:
        raise LLMError("HTTP 503: busy", attempts=2)

    out = outcome_of(INVENTING)
    before = out.fidelity
    assert before is not None
    await repair(
        out,
        scan=SourceScan(SOURCE),
        focus="",
        max_tokens=100,
        template=Prompts().repair,
        room=lambda s: 1000,
        ask=ask,
    )
    assert out.text == INVENTING and out.fidelity is before
    assert before.repair == {"failed": "HTTP 503: busy", "before": before.totals()}


@pytest.mark.parametrize("focus", ["Dughan", "bounties 1842"])
async def test_lost_focus_facts_are_asked_back_with_their_source_lines(focus: str) -> None:
    asked: list[tuple[str, str]] = []

    async def ask(system: str, content: str) -> str:
        asked.append((system, content))
        return "The inn has 42 rooms. Marshal Dughan posted 7 bounties in 1842 against the Defias."

    out = outcome_of("The Lion's Pride Inn has 42 rooms.", focus)
    assert out.fidelity is not None and out.fidelity.dropped_focus, "the summary lost a focus fact"
    out_before_focus = list(out.fidelity.dropped_focus)
    await repair(
        out,
        scan=SourceScan(SOURCE),
        focus=focus,
        max_tokens=100,
        template=Prompts().repair,
        room=lambda s: 1000,
        ask=ask,
    )
    [(system, content)] = asked
    restore = system.split("the summary lost, using the source lines given: ", 1)[1].split("\n", 1)[0]
    assert restore == "; ".join(out_before_focus)
    assert "Source lines:\n- Marshal Dughan posted 7 bounties in 1842 against the Defias." in content
