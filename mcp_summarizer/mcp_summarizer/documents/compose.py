"""The answer of `summarize_documents`: the budget planned over the clusters, then the
markdown and its structure written within it.

Both paths end here (the LLM's, in `pipeline`, and the embedded one, in `embedded`), so an
answer reads the same whichever wrote its summaries: a master section, one section per
summarized cluster, a footer for the clusters left out, and the same content as a
`DocumentsSummary`.  Headings inside a summary become bold lines, so the answer's own
headings stay its only structure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mcp_summarizer.documents import render
from mcp_summarizer.documents.index import Group, Plan, plan
from mcp_summarizer.documents.schema import (
    Cluster,
    ClusterSummary,
    Coverage,
    DocumentInfo,
    DocumentsSummary,
    Index,
    MasterSummary,
)
from mcp_summarizer.documents.sources import Cut, plain
from mcp_summarizer.fidelity.receipt import Receipt
from mcp_summarizer.store.content import doc_of
from mcp_summarizer.summarize.engine import Writer
from mcp_summarizer.text import tokens

__all__ = ["SECTION_GAP", "Counts", "DocumentsOutcome", "answer", "demote_headings", "plan_budget"]

SECTION_GAP = "\n\n"
_HEADING_LINE = re.compile(r"^[ ]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


@dataclass(slots=True, kw_only=True)
class DocumentsOutcome:
    """A `summarize_documents` answer (its text and structure) and what making it took."""

    text: str
    structured: DocumentsSummary
    input_tokens: int
    output_tokens: int
    backend: Writer
    degraded: bool = False
    cause: str = ""
    notice: str = ""  # the line the text opens with when degraded or partial (`_meta` says it too)
    llm_calls: int = 0
    llm_prompt_tokens: int = 0
    json_retries: int = 0
    json_fallbacks: int = 0
    fidelity: Receipt | None = None
    sources_stored: bool = True  # False: expand cannot open the ids (the text says so)
    rejected: dict[str, object] | None = None  # the LLM's answers not used (`Outcome.rejected_meta`)
    llm_share: float | None = None  # of the excerpts' tokens, the LLM's map summaries (`watch.llm_share`)


@dataclass(slots=True)
class Counts:
    """What a run counted: map answers asked again, map answers that got the fallback, and
    citations removed (made up by a model, or quoted from a document)."""

    retries: int = 0
    fallbacks: int = 0
    removed: int = 0


def plan_budget(groups: list[Group], cuts: Cut, budget: int, *, focused: bool, min_relevance: float) -> Plan:
    """The budget shared out over ``groups``, each charged the frame its section takes in the
    answer (heading, relevance, sources) and the master the frame of its own and of the footer."""
    docs = {d.id: d for d in cuts.documents}

    def overhead(g: Group) -> int:
        frame = render.cluster_section(
            g.topic, g.subtopic, g.relevance, "", g.source_ids, docs, focused=focused
        )
        return tokens.count(frame + SECTION_GAP) + 2

    # The master's frame, and the footer a dropped cluster adds (at its longest).
    master_overhead = tokens.count(render.master_section(len(cuts.documents), "")) + tokens.count(
        SECTION_GAP + render.footer(len(groups))
    )
    return plan(
        groups,
        budget,
        min_relevance=min_relevance,
        overhead=overhead,
        master_overhead=master_overhead,
    )


def answer(
    cuts: Cut,
    groups: list[Group],
    shape: Plan,
    summaries: list[str],
    rests_on: list[list[str]],
    master: str,
    budget: int,
    counts: Counts,
    terms: Sequence[str],
    notice: str,
) -> DocumentsOutcome:
    """The answer: ``summaries`` (one per kept cluster, resting on ``rests_on``) and ``master``
    in their sections, within ``budget`` tokens after ``notice``, and the same as a structure.
    Planned sizes are close, not exact: the longest summary is cut until the text fits."""
    docs = {d.id: d for d in cuts.documents}
    focused = bool(terms)
    kept = shape.kept
    summaries = [demote_headings(s) for s in summaries]
    master = demote_headings(master)

    def compose() -> str:
        sections = [notice, render.master_section(len(cuts.documents), master)]
        for g, s, ids in zip(kept, summaries, rests_on, strict=True):
            sections.append(
                render.cluster_section(g.topic, g.subtopic, g.relevance, s, ids, docs, focused=focused)
            )
        sections.append(render.footer(len(groups) - len(kept)))
        return SECTION_GAP.join(s for s in sections if s)

    text = compose()
    limit = budget + (tokens.count(notice + SECTION_GAP) if notice else 0)
    for _ in range(8):  # planned sizes are close; a model's tokenizer may not be
        excess = tokens.count(text) - limit
        if excess <= 0:
            break
        longest = max(range(len(summaries)), key=lambda i: tokens.count(summaries[i]), default=None)
        if longest is None:
            master = tokens.truncate(master, max(tokens.count(master) - excess - 2, 0))
        else:
            size = tokens.count(summaries[longest])
            summaries[longest] = tokens.truncate(summaries[longest], max(size - excess - 2, 0))
        text = compose()
    text = tokens.truncate(text, limit)

    structured = _structure(cuts, groups, kept, summaries, rests_on, master, counts)
    return DocumentsOutcome(
        text=text,
        structured=structured,
        input_tokens=cuts.tokens,
        output_tokens=tokens.count(text),
        backend="none",
    )


def _structure(
    cuts: Cut,
    groups: list[Group],
    kept: list[Group],
    summaries: list[str],
    rests_on: list[list[str]],
    master: str,
    counts: Counts,
) -> DocumentsSummary:
    """The answer as a structure: the clusters (summarized or why not), the coverage, each
    kept cluster's summary and the master's, with the ids they rest on, and the documents."""
    covered = {sid for ids in rests_on for sid in ids}
    covered_docs = {doc_of(sid) for sid in covered}
    return DocumentsSummary(
        index=Index(
            clusters=[
                Cluster(
                    cluster_id=g.cluster_id,
                    topic=g.topic,
                    subtopic=g.subtopic,
                    relevance_score=g.relevance,
                    source_ids=g.source_ids,
                    doc_ids=g.doc_ids,
                    excerpt_count=len(g.members),
                    summarized=g in kept,
                    dropped_because=None if g in kept else g.dropped_because,
                )
                for g in groups
            ],
            coverage=Coverage(
                documents=len(cuts.documents),
                clusters=len(groups),
                excerpts=len(cuts.excerpts),
                clusters_summarized=len(kept),
                documents_not_covered=[d.id for d in cuts.documents if d.id not in covered_docs],
                citations_removed=counts.removed,
            ),
        ),
        cluster_summaries=[
            ClusterSummary(
                cluster_id=g.cluster_id,
                topic=g.topic,
                subtopic=g.subtopic,
                relevance_score=g.relevance,
                summary=s,
                source_ids=ids,
                doc_ids=list(dict.fromkeys(doc_of(i) for i in ids)),
            )
            for g, s, ids in zip(kept, summaries, rests_on, strict=True)
        ],
        master_summary=MasterSummary(
            summary=master,
            source_ids=[sid for ids in rests_on for sid in ids],
            cluster_ids=[g.cluster_id for g in kept],
            doc_ids=[d.id for d in cuts.documents if d.id in covered_docs],
        ),
        documents=[
            DocumentInfo(
                id=d.id,
                title=d.title,
                url=d.url,
                chunk_count=d.chunk_count,
                tokens=d.tokens,
                version=d.version,
            )
            for d in cuts.documents
        ],
    )


def demote_headings(text: str) -> str:
    """Headings inside a summary become bold lines: the answer's own headings (master, one
    per cluster) must stay its only structure."""
    return _HEADING_LINE.sub(lambda m: f"**{plain(m.group(1))}**", text)
