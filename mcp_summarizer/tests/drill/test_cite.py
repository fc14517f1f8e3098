"""Citing a summary into its kept source (drill/cite.py): pure, no I/O."""

from __future__ import annotations

from mcp_summarizer.drill.cite import cite, uncited

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
