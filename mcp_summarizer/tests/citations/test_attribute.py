"""Citing a summary into its kept source (citations/attribute.py): pure, no I/O."""

from __future__ import annotations

import re
import textwrap
import time

import pytest

from mcp_summarizer.citations.attribute import cite, uncited
from mcp_summarizer.documents.schema import DocumentIn
from mcp_summarizer.documents.sources import cut
from mcp_summarizer.store.ids import IdKey
from mcp_summarizer.summarize.extractive import summarize
from mcp_summarizer.tenant import LOCAL

SOURCE = (
    "# Racks\n\nServer node-001 listens on port 20001 since 2019-08-01. It serves billing.\n\n"
    "```\nServer node-002 listens on port 20002 since 2019-08-02.\n```\n\n"
    "Server node-003 listens on port 20003 since 2019-08-03 in the mail cluster."
)
IDS = ["h~00000000000000aa#0", "h~00000000000000aa#1", "h~00000000000000aa#2"]
STARTS = [0, SOURCE.index("```"), SOURCE.index("Server node-003")]


def test_each_sentence_cites_the_excerpt_it_came_from_and_code_stays_exact() -> None:
    summary = (
        "Server node-001 listens on port 20001 since 2019-08-01.\n"
        "```\nServer node-002 listens on port 20002 since 2019-08-02.\n```\n"
        "Server node-003 listens on port 20003 since 2019-08-03 in the mail cluster."
    )
    done = cite(summary, SOURCE, IDS, STARTS, lambda _: True, verbatim=True)
    assert done.text == (
        "Server node-001 listens on port 20001 since 2019-08-01. [h~00000000000000aa#0]\n"
        "```\nServer node-002 listens on port 20002 since 2019-08-02.\n```\n"
        "Server node-003 listens on port 20003 since 2019-08-03 in the mail cluster. [h~00000000000000aa#2]"
    )
    assert (
        done.citations == 2 and uncited(done.text + "\n\nSource: h~00000000000000aa (3 excerpts)") == summary
    )


def test_citations_are_dropped_from_the_end_to_fit_and_made_up_ones_removed() -> None:
    summary = (
        "Server node-001 listens on port 20001 since 2019-08-01. [made~0123456789abcdef#9]\n"
        "Server node-003 listens on port 20003 since 2019-08-03 in the mail cluster."
    )
    done = cite(summary, SOURCE, IDS, STARTS, lambda t: t.count("[") <= 1, verbatim=True)
    assert done.removed == 1 and done.citations == 1
    assert done.text.splitlines()[0].endswith("[h~00000000000000aa#0]")
    assert "[" not in done.text.splitlines()[1]


def test_a_written_line_cites_the_excerpt_sharing_its_words_or_none() -> None:
    summary = "- The mail cluster runs node-003 on port 20003.\n- Weather is sunny today everywhere."
    done = cite(summary, SOURCE, IDS, STARTS, lambda _: True, verbatim=False)
    first, second = done.text.splitlines()
    assert first.endswith(" [h~00000000000000aa#2]") and "[" not in second


# -- hard-wrapped text -----------------------------------------------------------------------

_TOPICS = ["billing", "search", "auth", "mail", "backup", "metrics", "queue", "gateway"]


def wrapped_markdown() -> str:
    """A markdown document hard-wrapped at 72 characters, as READMEs are: paragraphs whose
    sentences run across line breaks, and list items whose continuation lines are indented."""
    sections = []
    for k, topic in enumerate(_TOPICS):
        prose = " ".join(
            f"The {topic} service number {k}{s} keeps {10 * k + s} replicas of its {topic} "
            f"records in zone {chr(97 + s)} and rotates their {topic} keys every {k + s + 2} days."
            for s in range(4)
        )
        bullets = "\n".join(
            textwrap.fill(
                f"The {topic} worker pool {k}{b} drains {100 * k + b} {topic} jobs a minute through "
                f"port {20000 + 10 * k + b} while the standby pool {k}{b} waits in zone {chr(100 + b)}.",
                72,
                initial_indent="- ",
                subsequent_indent="  ",
            )
            for b in range(3)
        )
        sections.append(f"## The {topic} section\n\n{textwrap.fill(prose, 72)}\n\n{bullets}")
    return "# Services\n\n" + "\n\n".join(sections) + "\n"


def flat(text: str) -> str:
    return " ".join(text.split())


def test_sentences_of_hard_wrapped_text_cite_the_excerpt_that_holds_them() -> None:
    source = wrapped_markdown()
    assert max(map(len, source.splitlines())) <= 72
    key = IdKey(b"k" * 32)
    doc = DocumentIn(text=source, id="svc", title="", url="")
    _, excerpts = cut(doc, "svc", 300, key, LOCAL)
    assert len(excerpts) >= 4
    ids = [e.source_id for e in excerpts]
    starts, at = [], 0
    for e in excerpts:
        at = source.index(e.text, at)
        starts.append(at)
    summary = summarize(source, 700)
    # The summary's sentences are the source's with its line breaks joined: not in it as such.
    joined = [
        s for s in re.split(r"(?<=\.)\s+", summary) if not s.startswith("#") and s.lstrip("- ") not in source
    ]
    assert len(joined) >= 10, summary
    done = cite(summary, source, ids, starts, lambda _: True, verbatim=True)
    body = {e.source_id: flat(e.text) for e in excerpts}
    # Each citation ends a run of sentences from the excerpts it names: every sentence of the
    # summary is in a run, and is in one of those excerpts, word for word (white space aside).
    runs = re.split(r" \[([^\]]+)\]", done.text)
    texts, cites = runs[0::2], runs[1::2]
    assert not flat("\n".join(x for x in texts[-1].splitlines() if not x.startswith("#"))), texts[-1]
    checked = 0
    for text, named in zip(texts, cites, strict=False):
        opened = [body[i] for i in named.split(", ")]
        for line in text.splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            for sentence in re.split(r"(?<=[.!?])\s+", line.lstrip("- ").strip()):
                assert any(flat(sentence) in o for o in opened), (sentence, named)
                checked += 1
    assert checked >= 10 and done.citations == len(cites) >= 4, done.text


@pytest.mark.no_cover  # timed (pyproject.toml, markers)
def test_citing_hostile_wrapped_text_is_linear() -> None:
    # Runs of one character, of spaces and of line breaks, then CJK hard-wrapped with no
    # sentence mark (the second excerpt): the summary's sentence, two of its lines joined, is
    # found past all the runs.  Compared with a source 10x shorter.
    line = "敏捷的狐狸跳过了懒惰的狗它们在山谷里奔跑" * 2

    def run(n: int) -> tuple[float, str]:
        runs = ("a" * 500 + " " * 500 + "\n" * 500) * (n // 50)
        source = runs + "\n".join([line] * n) + "\nend"
        starts = [0, len(runs)]
        summary = f"{line} {line}"
        best = float("inf")
        for _ in range(3):
            start = time.thread_time()  # this thread's CPU: a loaded machine's other processes do not count
            done = cite(summary, source, IDS[:2], starts, lambda _: True, verbatim=True)
            best = min(best, time.thread_time() - start)
        return best, done.text

    # linear: ~10x; quadratic: ~100x.  Over the limit it is measured again (a loaded machine
    # can stall one measurement; a quadratic scan is over it every time).
    for _ in range(3):
        (small, cited_small), (big, cited_big) = run(2_000), run(20_000)
        if big < small * 30:
            break
    assert cited_small.endswith(f"{line} [{IDS[1]}]") and cited_big.endswith(f"{line} [{IDS[1]}]")
    assert big < small * 30, (small, big)
