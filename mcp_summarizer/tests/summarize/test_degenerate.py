"""The checks of a model's answer (`summarize.degenerate`), as pure functions: what the small
models really answered is rejected, with the reason; ordinary summaries, list-like pages, real
LLM-ish text and the repository's own docs pass; any text said over and over is a loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_summarizer.citations.ask import Ask
from mcp_summarizer.summarize.degenerate import LOOP_N, LOOP_SHARE, check
from shared.prompt_loader import load_prompt, render

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = ROOT / "mcp_summarizer" / "mcp_summarizer" / "prompts"
SOURCE = (
    "# Elwynn Forest\n\nGoldshire is a small town in Elwynn Forest, guarded by Marshal Dughan. "
    "Twelve wolves roam near the Lion's Pride Inn. The Defias Brotherhood raids farms in Westfall."
)


def prompt(name: str, **values: str) -> str:
    template = (PROMPTS / f"{name}.md").read_text(encoding="utf-8")
    base = {"focus_instructions": "", "citations": "", "max_tokens": "300", "schema_hint": "NPCs"}
    return render(template, **{**base, **values})


MAP = prompt("map_general")
SOURCE_OF_PAGES = "\n\n".join(f"Section {i}. " + SOURCE for i in range(20))
CITED_MAP = prompt(
    "map_general",
    citations=Ask(SOURCE_OF_PAGES, (), [SOURCE_OF_PAGES.find(f"Section {i}.") for i in range(20)]).map_values(
        None
    )["citations"],
)


def reason(answer: str, *, system: str = MAP, given_text: str = SOURCE, finish: str = "stop") -> str | None:
    return check(answer, prompt=system, given=given_text, finish_reason=finish).reason


# -- what the small models answered -----------------------------------------------------------

SMOLLM_LOOP = "The summary is then used to create a summary of the topic itself. " * 24
ARCH_LOOP = "The [tutorial.md](https.md) document is a guide to the [tutorial.md](https.md) document. " * 24
# Gemma 3 270M, a base model, read the map prompt back (with its own first words).
GEMMA_ECHO = CITED_MAP.replace("You are a summarization engine", "You are a modeler")


@pytest.mark.parametrize(
    ("answer", "expected", "system", "finish"),
    [
        (SMOLLM_LOOP, "loop", MAP, "length"),
        (ARCH_LOOP, "loop", MAP, "stop"),
        (
            "Goldshire is a town in Elwynn.\n\n" + "- The wolves roam the forest.\n" * 30,
            "loop",
            MAP,
            "length",
        ),
        ("大森林的城镇" * 120, "loop", MAP, "length"),  # no word breaks: zlib sees it
        (GEMMA_ECHO, "prompt_echo", CITED_MAP, "stop"),
        (prompt("reduce") + "\nGoldshire is a town.", "prompt_echo", prompt("reduce"), "stop"),
        (prompt("map_extraction"), "prompt_echo", prompt("map_extraction"), "length"),
        ("I'm sorry, but I can't help with that request.", "refusal", MAP, "stop"),
        ("I\u2019m sorry, but I cannot summarize this document.", "refusal", MAP, "stop"),
        ("As an AI language model, I cannot browse the internet.", "refusal", MAP, "stop"),
        (
            "I cannot provide a summary of this content as it may contain harmful material.",
            "refusal",
            MAP,
            "stop",
        ),
        ("Unfortunately, I am unable to assist with this request.", "refusal", MAP, "stop"),
        ("Goldshire is a town in Elwynn Forest.", "refusal", MAP, "content_filter"),
        ("", "empty", MAP, "stop"),
        ("  \n --- \n ** ", "empty", MAP, "stop"),
        ("Here is a summary of the section:", "empty", MAP, "length"),
        (
            "Goldshire is guarded by Marshal Dughan.<|im_end|>\n<|im_start|>user",
            "template_tokens",
            MAP,
            "stop",
        ),
        ("Goldshire is a small town.<|endoftext|>", "template_tokens", MAP, "stop"),
        ("Goldshire is a small town.<|eot_id|><|start_header_id|>user", "template_tokens", MAP, "stop"),
        ("<start_of_turn>model\nGoldshire is a small town.<end_of_turn>", "template_tokens", MAP, "stop"),
        ("[INST] Summarize the document [/INST] Goldshire is a town.", "template_tokens", MAP, "stop"),
        ("Goldshire is a small town in Elwynn Forest.</s>", "template_tokens", MAP, "stop"),
        ("Goldshire is a small town.<\uff5cend\u2581of\u2581sentence\uff5c>", "template_tokens", MAP, "stop"),
        ("Goldshire is a small\x00 town.", "template_tokens", MAP, "stop"),
        ("The document describes how the", "cut", MAP, "length"),
        ("<think>The user wants a summary of the section. First I will read", "cut", MAP, "length"),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 16 else None,
)
def test_degenerate_answers_are_rejected_with_their_reason(
    answer: str, expected: str, system: str, finish: str
) -> None:
    verdict = check(answer, prompt=system, given=SOURCE, finish_reason=finish)
    assert verdict.reason == expected, verdict
    assert verdict.detail


# SmolLM2 through the service (tests/real_llm): a few sentences, then one over and over; said
# three times it is under LOOP_SHARE of the answer's n-grams.
SMOLLM_TAIL_LOOP = (
    "The MCP service is a service that compiles and compresses text for LLM agents. It is a "
    "research agent that prints a summary that fits its context. It is a stand-in that always "
    "prints sensible text. The README explains how to install it with one script and how to run "
    "the tests on two cores. Budgets are counted in tokens of the cl100k encoding. "
    + "It is a service that uses a library that is designed to be used by other services. "
    * 3
)


def test_one_sentence_said_three_times_is_a_loop_whatever_its_share() -> None:
    verdict = check(SMOLLM_TAIL_LOOP, prompt=MAP, given=SOURCE, finish_reason="length")
    assert verdict.reason == "loop" and "said 3 times" in verdict.detail, verdict
    sentence = "It is a service that uses a library that is designed to be used by other services. "
    assert reason(SMOLLM_TAIL_LOOP.replace(sentence, "", 1)) is None, "twice is no loop by itself"
    source = sentence.strip() + "\n" + sentence * 3
    assert reason(SMOLLM_TAIL_LOOP, given_text=source) is None, "the source says it as often"


def test_the_reason_holds_no_words_of_the_answer() -> None:
    """The detail goes to the logs: the answer may hold the caller's content."""
    for answer, system in (
        (SMOLLM_LOOP, MAP),
        (GEMMA_ECHO, CITED_MAP),
        ("I'm sorry, I can't help Dughan.", MAP),
    ):
        detail = check(answer, prompt=system, given=SOURCE).detail
        assert "summary" not in detail and "Dughan" not in detail and "modeler" not in detail, detail


# -- what passes --------------------------------------------------------------------------------

LLM_LIKE = [
    "Goldshire is a small town in Elwynn Forest, guarded by Marshal Dughan. Twelve wolves roam near "
    "the Lion's Pride Inn, and the Defias Brotherhood raids the farms of Westfall.",
    "- **Goldshire**: a town in Elwynn Forest; Marshal Dughan guards it.\n- **Wolves**: twelve, near "
    "the Lion's Pride Inn.\n- **Defias Brotherhood**: raids farms in Westfall.",
    "## Quests\n\n| Quest | Giver | Reward |\n|---|---|---|\n| A Threat Within | Marshal McBride | 40 XP |\n"
    "| Wolves Across the Border | Eagan Peltskinner | 80 XP |\n"
    "| The Fargodeep Mine | Marshal Dughan | 250 XP |",
    "The service failed to start: `redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379`."
    " Retries: 3, each after 2 s. The fix was `REDIS_URL=redis://cache:6379/0` in `.env`.",
    "```python\nfor chunk in chunks:\n    summary = await engine.map(chunk)\n```\nThe loop above maps each "
    "chunk; the results are merged in a tree.",
    "1. Install the package.\n2. Set `OPENROUTER_API_KEY`.\n3. Run `mcp-summarizer` and open port 8007.\n"
    "4. Call `summarize` with the content.",
    "Sure! The section covers Goldshire's history: founded in year 600, burned in year 603, rebuilt by "
    "the Stormwind masons in year 610 [src#0]. Its inn is the oldest building [src#1].",
    json.dumps(
        {
            "summary": "Goldshire is a town in Elwynn Forest guarded by Marshal Dughan.",
            "topic": "Elwynn Forest",
            "subtopic": "Goldshire and its guards",
            "relevance_score": 0.8,
        }
    ),
    "I'm sorry to report that the log shows 14 failed deployments between 09:00 and 11:00; each failed "
    "on the same migration, `0042_add_index`, which timed out after 300 s on the `events` table. The "
    "team rolled back at 11:05 and the error rate fell from 12% to 0.3%.",
]


@pytest.mark.parametrize("answer", LLM_LIKE)
def test_ordinary_summaries_pass(answer: str) -> None:
    verdict = check(answer, prompt=CITED_MAP, given=SOURCE)
    assert verdict.reason is None, verdict
    assert verdict.text == answer.strip() and verdict.removed_lines == 0


def test_a_cut_answer_with_something_to_say_passes() -> None:
    """The engine ends it at its last sentence (`end_cleanly`), as before."""
    answer = "Marshal Dughan guards Goldshire and the roads to Stormwind and Westf"
    assert reason(answer, finish="length") is None


def test_a_closed_reasoning_block_is_removed_not_rejected() -> None:
    verdict = check(
        "<think>Short section; keep the names.</think>\n\nGoldshire is a town.", prompt=MAP, given=SOURCE
    )
    assert verdict.reason is None and verdict.text == "Goldshire is a town."
    assert reason("<think>Nothing to say.</think>") == "empty"


def test_what_the_call_read_may_be_repeated() -> None:
    """A summary of a page about chat templates, of a support chat, of a log that repeats a
    line, of the service's own prompt: the source's words are no degeneracy."""
    template_page = "Qwen's chat template opens each turn with <|im_start|> and ends it with <|im_end|>."
    assert (
        reason("Each turn opens with <|im_start|> and ends with <|im_end|>.", given_text=template_page)
        is None
    )
    chat = "Customer: where is my order?\nAgent: I'm sorry, but I can't help with refunds here."
    assert reason("I'm sorry, but I can't help with refunds here.", given_text=chat) is None
    log = "ERROR 2024-05-01 disk /dev/sda1 is 97% full, writes are throttled by the kernel now\n" * 40
    assert reason(log[: len(log) // 2], given_text=log) is None
    assert reason(MAP, given_text=MAP) is None, "a summary of the map prompt itself"


def test_a_summary_that_read_back_a_few_lines_of_the_prompt_loses_them() -> None:
    """An excerpt list read back would turn into citations of excerpts the model never read:
    those lines go, the summary stays."""
    listed = [line for line in CITED_MAP.splitlines() if line.startswith("- [src#")]
    summary = [
        f"- Section {i}: Goldshire is guarded by Marshal Dughan and its wolves [src#{i}]." for i in range(12)
    ]
    answer = "\n".join(summary + listed[:2])
    verdict = check(answer, prompt=CITED_MAP, given=SOURCE_OF_PAGES)
    assert verdict.reason is None and verdict.removed_lines == 2
    assert verdict.text == "\n".join(summary)


def test_the_calls_framing_read_back_loses_its_line() -> None:
    """SmolLM2 ended a summary with ``</document>``, the tag its content came in (tests/real_llm,
    2026-12-02): that line goes, unless the text it read holds it; a tag the prompt does not
    name stays."""
    verdict = check("Goldshire is a small town.\n</document>", prompt=MAP, given=SOURCE)
    assert verdict.reason is None and verdict.removed_lines == 1
    assert verdict.text == "Goldshire is a small town."
    assert reason("<document>\n</document>") == "empty"
    page_with_tags = SOURCE + "\n<document>\n</document>\n"
    kept = check("Goldshire is a small town.\n</document>", prompt=MAP, given=page_with_tags)
    assert kept.reason is None and kept.removed_lines == 0 and kept.text.endswith("</document>")
    other = check("Goldshire is a small town.\n</section>", prompt=MAP, given=SOURCE)
    assert other.reason is None and other.removed_lines == 0 and other.text.endswith("</section>")


# -- properties ----------------------------------------------------------------------------------

NAMES = [
    f"{a}{b}"
    for a in ("Al", "Bry", "Cae", "Dor", "Ed", "Fen", "Gor", "Hal")
    for b in ("dric", "n", "ra", "wyn")
]
WORDS = st.sampled_from(
    "gold wolf inn forest town guard road mine farm river bridge tower king queen market harbour".split()
)


@settings(max_examples=150)
@given(
    st.lists(
        st.tuples(st.sampled_from(NAMES), WORDS, WORDS, st.integers(1, 999), st.sampled_from(NAMES)),
        min_size=1,
        max_size=40,
        unique=True,
    ),
    st.sampled_from(["- ", "", "1. "]),
)
def test_varied_summaries_are_never_flagged(facts: list[tuple[str, str, str, int, str]], bullet: str) -> None:
    lines = [f"{bullet}{a} keeps the {w} {v} with {n} guards, as {b} said." for a, w, v, n, b in facts]
    assert reason("\n".join(lines)) is None


@settings(max_examples=150)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(NAMES), st.sampled_from(["Stormwind", "Defias", "Ironforge"]), st.integers(1, 60)
        ),
        min_size=1,
        max_size=60,
        unique_by=lambda t: t[0],
    ),
    st.booleans(),
)
def test_list_like_pages_pass(rows: list[tuple[str, str, int]], table: bool) -> None:
    """Repeated structure ("NPC: X, faction: Y"), not repeated text: every eight words hold a name."""
    if table:
        lines = ["| NPC | Faction | Level |", "|---|---|---|"] + [
            f"| {n} | {f} | {lvl} |" for n, f, lvl in rows
        ]
    else:
        lines = [f"- NPC: {n}, faction: {f}, level: {lvl}" for n, f, lvl in rows]
    assert (
        reason("\n".join(lines), system=prompt("map_extraction", schema_hint="NPC, faction, level")) is None
    )


@settings(max_examples=200)
@given(
    st.lists(WORDS | st.sampled_from(NAMES), min_size=1, max_size=40),
    st.integers(2, 40),
    st.sampled_from([" ", "\n"]),
)
def test_any_text_said_over_and_over_is_a_loop(words: list[str], times: int, gap: str) -> None:
    """A text of w words said N times has at most w distinct n-grams among N*w - n + 1: a loop
    whenever the repeats reach LOOP_SHARE (see the module), and it has 16 words or more."""
    w, n = len(words), LOOP_N
    grams = times * w - n + 1
    if times * w < 16 or grams * (1 - LOOP_SHARE) < w:
        return
    text = gap.join([" ".join(words)] * times)
    assert reason(text, given_text="") == "loop"


def test_the_repositorys_own_docs_are_never_flagged() -> None:
    """Every markdown file of the repository (but the prompts), in pieces of 400 words, as
    the answer to a map call that read it: never flagged.  As the answer to a call that read
    another text, only for the chat-template tokens the docs name (which that text does not)."""
    skip = {"prompts", "data", "node_modules", "build", "dist"}  # the prompts; the benchmarks' corpus
    files = [
        p
        for p in ROOT.rglob("*.md")
        if not any(part.startswith(".") or part in skip for part in p.parts[len(ROOT.parts) :])
    ]
    assert ROOT / "README.md" in files and ROOT / "mcp_summarizer" / "CHANGELOG.md" in files
    pieces = []
    for path in files:
        words = path.read_text(encoding="utf-8").split(" ")
        pieces += [" ".join(words[i : i + 400]) for i in range(0, len(words), 400)]
    assert len(pieces) > 50
    for piece in pieces:
        verdict = check(piece, prompt=CITED_MAP, given=piece)
        assert verdict.reason is None and verdict.removed_lines == 0, (verdict, piece[:200])
        verdict = check(piece, prompt=CITED_MAP, given=SOURCE)
        if verdict.reason == "template_tokens":
            assert verdict.detail.strip("'\"") in piece, verdict
            continue
        assert verdict.reason is None, (verdict, piece[:200])
        # bench/README quotes what a real model read back of the citation prompt: those lines,
        # and only such quotations, go when the call read another text (they are the prompt's).
        kept = {line.strip() for line in verdict.text.split("\n")}
        removed = [line for line in piece.split("\n") if line.strip() and line.strip() not in kept]
        assert len(removed) == verdict.removed_lines <= 2, (verdict, removed)
        assert all('"' in line for line in removed), removed


def test_the_retry_note_is_a_prompt_file() -> None:
    note = load_prompt(PROMPTS / "x.md", "retry_rejected")
    assert "{reason}" in note and note.startswith("\n\n")
