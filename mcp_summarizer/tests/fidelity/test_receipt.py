"""The fidelity receipt on constructed texts whose answer is known: facts by kind, kept,
dropped (most salient first), possibly invented; CJK and code; linear on hostile text."""

from __future__ import annotations

import re
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_summarizer.errors import Stopped
from mcp_summarizer.fidelity import receipt as receipt_module
from mcp_summarizer.fidelity.facts import facts
from mcp_summarizer.fidelity.receipt import LIST_CAP, receipt, source_facts

SOURCE = """# Elwynn Forest

Marshal Dughan guards Goldshire since 2024-05-01. The inn costs 1,000 gold and the road is 12 km long.
Call `json.dumps` with max_output_tokens from /usr/lib/python3/json, or JSONDecoder in version v1.2.3.
See https://example.com/elwynn for "the old map". The bridge is not 30 km from Stormwind City.
"""


def kinds(text: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for f in facts(text):
        out.setdefault(f.kind, set()).add(f.key)
    return out


def test_facts_by_kind() -> None:
    assert kinds(SOURCE) == {
        "name": {"elwynn forest", "marshal dughan", "stormwind city"},
        "date": {"2024-05-01"},
        "number": {"1000gold", "12km", "30km"},
        "identifier": {"json.dumps", "max_output_tokens", "/usr/lib/python3/json"},
        "version": {"1.2.3"},
        "url": {"https://example.com/elwynn"},
        "quote": {"the old map"},
        "negation": {"not 30km"},
    }


def test_kept_dropped_and_invented_counts_are_exact() -> None:
    summary = "Marshal Dughan guards Goldshire (1000 gold). The Lich King lives 99 km away. Use `json.dumps`."
    r = receipt(SOURCE, summary, focus="gold")
    assert r.source_facts == 14 and r.kept_facts == 3  # Marshal Dughan, 1,000 gold, json.dumps
    assert r.counts["number"] == {"source": 3, "kept": 1} and r.counts["name"] == {"source": 3, "kept": 1}
    assert r.counts["identifier"] == {"source": 3, "kept": 1}
    assert sorted(r.invented) == ["99 km", "The Lich King"] and r.invented_facts == 2
    assert len(r.dropped) == 11 and "1,000 gold" not in r.dropped


def test_dropped_facts_are_ranked_by_salience_and_focus() -> None:
    source = (
        "Intro line. "
        + "Hogger attacks Goldshire. " * 1
        + "The Defias Brotherhood raids farms. " * 5
        + ("Edwin VanCleef leads the Deadmines. " * 2)
    )
    r = receipt(source, "Nothing kept.", focus="")
    assert r.dropped[0] == "The Defias Brotherhood"  # five times
    focused = receipt(source, "Nothing kept.", focus="VanCleef")
    assert "VanCleef" in focused.dropped[0]


def test_a_notice_line_is_not_the_summarys_claim() -> None:
    r = receipt(SOURCE, "[summarized offline: the LLM failed: HTTP 500 after 3 attempts]\n\nMarshal Dughan.")
    assert r.invented == [] and r.kept_facts == 1


def test_cjk_and_code() -> None:
    source = (
        "東京の人口は1,400万人です。Tokyo Tower opened in 1958. "
        + "`asyncio.run()` and os.path.join() ship in v3.11."
    )
    r = receipt(source, "Tokyo Tower opened. Use `asyncio.run()`.")
    assert {"tokyo tower", "asyncio.run()", "os.path.join()"} <= {f.key for f in facts(source)}
    assert r.counts["identifier"] == {"source": 2, "kept": 1} and r.counts["name"] == {"source": 1, "kept": 1}
    assert r.invented == []


def test_lists_are_capped_counts_are_not() -> None:
    source = " ".join(f"Item {i}: 5{i} km." for i in range(100))
    r = receipt(source, "Nothing.")
    assert r.counts["number"]["source"] == 100 and len(r.dropped) == LIST_CAP


@pytest.mark.no_cover  # timed (pyproject.toml, markers)
@pytest.mark.parametrize("ch", [*".,:;/_`\"'-#*[]()~$%", "1", "a", "A", "東", " ", "\n"])
def test_linear_on_runs_of_one_character(ch: str) -> None:
    """Runs 10x longer take about 10x longer (a quadratic scan would take ~100x): compared
    with a linear reference, the same text's str.count, not a wall-clock limit."""

    def cost(n: int) -> float:
        text = ch * n + " tail Marshal Dughan 12 km"
        start = time.thread_time()  # this thread's CPU: a loaded machine's other processes do not count
        receipt(text, text[: n // 10])
        return time.thread_time() - start

    # Over the limit it is measured again (a stall in one measurement passes; a quadratic
    # scan is over it every time).
    for _ in range(3):
        small = min(cost(20_000) for _ in range(3))
        big = min(cost(200_000) for _ in range(3))
        if big < small * 30 + 0.05:
            break
    assert big < small * 30 + 0.05, (ch, small, big)


def test_an_invention_inside_a_longer_source_fact_is_still_one() -> None:
    """Version 2.3.1 is not in 12.3.1; "Lich King" is in "the Lich King's hall" (a word start)."""
    source = "Requires 12.3.1 or later. They feared the Lich King's hall."
    r = receipt(source, "Requires 2.3.1. Lich King rules.")
    assert r.invented == ["2.3.1"] and r.invented_facts == 1


def test_a_negation_negates_a_fact_of_its_own_sentence_only() -> None:
    """Within the reach, but past a sentence end, a blank line or a header: no negation."""
    text = "Arguments are no longer used.\n\n## Signal Handling\n\nIt is not 30 km. It is not. Marshal Dughan"
    assert {f.key for f in facts(text) if f.kind == "negation"} == {"not 30km"}
    assert receipt(text, "## Signal Handling").invented == []


@pytest.mark.parametrize("unknown", [3, 200])  # a few substring searches, or the word index
def test_the_source_scanned_ahead_gives_the_same_receipt(unknown: int) -> None:
    """The engine scans the source while the LLM works; the receipt must not depend on it."""
    source = " ".join(
        f"Gate-{i} opens at {i}:00 on 2024-03-{i % 28 + 1:02d}, not before." for i in range(300)
    )
    summary = "Gates open. " + " ".join(
        f"Warden{i} holds v{i}.2.{i} at /srv/gate-{i}." for i in range(unknown)
    )
    summary += " Gate opens at 7:00 on 2024-03-05, not before; Gate-12 too."
    ahead = receipt(source, summary, "gate", source_facts(source))
    inline = receipt(source, summary, "gate")
    assert ahead == inline
    assert ahead.invented_facts >= unknown and ahead.kept_facts > 0


def test_a_dropped_focus_fact_is_listed_for_repair_even_when_commoner_facts_outrank_it() -> None:
    common = " ".join(f"Version v{i}.0.{i} ships on 2024-01-{i:02d}. " * 6 for i in range(1, 26))
    source = common + " The warden is Marshal Dughan."
    r = receipt(source, "Versions ship.", focus="dughan")
    assert "Marshal Dughan" not in r.dropped and len(r.dropped) == LIST_CAP  # outranked
    assert r.dropped_focus == ["Marshal Dughan"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([*"ab,.Éß中 \t\n\r\x0b\x0c\x1c\x85\u2028\u3000\u00a0\u200b", "word", "Straße"]),
        max_size=200,
    ).map("".join),
    st.sampled_from([1, 3, 16]),
    st.sampled_from([1, 2, 5, 1 << 20]),
)
def test_the_searchable_text_made_part_by_part_is_the_whole_texts(
    text: str, part_chars: int, max_part_chars: int
) -> None:
    """`source_facts` builds the searchable text and its words in parts (a regex call over
    megabytes would hold the GIL, and a request that ends stops the scan between parts only);
    parts cut before whitespace, or inside a word or a whitespace run longer than a part may
    be, give exactly the one-pass result."""
    whole = re.sub(r"\s+", " ", text).casefold().replace(",", "")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(receipt_module, "_PART_CHARS", part_chars)
        mp.setattr(receipt_module, "_MAX_PART_CHARS", max_part_chars)
        assert receipt_module._searchable(text) == whole
        src = source_facts(text)
    assert src.text == whole
    assert src.words == receipt_module._words(whole)


@pytest.mark.parametrize("text", ["a" * 16_000_000, "Port 8080 on node-17 since 2019-08-17. " * 400_000])
def test_the_source_scan_stops_when_its_request_ends(text: str) -> None:
    """The scan runs in a worker thread for a request; when the request ends (its client
    went), the thread must stop too instead of scanning megabytes for nobody.  Set before:
    nothing is scanned; set while it runs: `Stopped` at its next window."""
    halt = threading.Event()
    halt.set()
    with pytest.raises(Stopped):
        source_facts(text, halt)
    halt = threading.Event()
    threading.Timer(0.05, halt.set).start()  # the whole scan takes seconds
    with pytest.raises(Stopped):
        source_facts(text, halt)
    assert source_facts("Port 8080.", threading.Event()).facts == source_facts("Port 8080.").facts
