"""The embedded path of `summarize_documents`: the answer made without a model.

It answers when no LLM is configured, and when the LLM fails for good (then after a notice
line, with ``degraded`` set).  Labels come from the text (`topics`), relevance from the focus
terms; a cluster's summary is its most relevant excerpts' extractive summaries, each cited;
the overview is each summarized cluster's leading sentence, cited too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mcp_summarizer.citations import syntax as cite
from mcp_summarizer.documents import render
from mcp_summarizer.documents.compose import SECTION_GAP, Counts, DocumentsOutcome, answer, plan_budget
from mcp_summarizer.documents.index import Group, group
from mcp_summarizer.documents.sources import Cut, plain
from mcp_summarizer.documents.topics import focus_terms, label_excerpts, read_words, relevances
from mcp_summarizer.summarize import extractive
from mcp_summarizer.summarize.engine import offline_notice
from mcp_summarizer.text import tokens
from mcp_summarizer.text.lexicon import Lexicon

__all__ = ["summarize"]

_MEMBER_TOKENS = 50  # the least an excerpt's share of a cluster summary may be
_SENTENCE = re.compile(r"[^\n]*?[.!?\u3002\uff01\uff1f](?=\s|$)|[^\n]+")
_LEAD_WORDS = 5  # a lead sentence is prose: a line of links or a heading is not one


def summarize(
    cuts: Cut,
    focus: str,
    budget: int,
    cause: str,
    *,
    min_relevance: float,
    mapped: Mapping[str, str] | None = None,
    notice: str | None = None,
) -> DocumentsOutcome:
    """The answer within ``budget`` tokens, made without a model: labels from the text,
    relevance from focus terms, each cluster's summary made of its most relevant excerpts'
    extractive summaries, each cited.  A ``cause`` (why the LLM failed) puts a notice first
    (or ``notice``, given).  ``mapped``: the LLM's summaries of some excerpts (at a deadline),
    which stand for those excerpts' text."""
    terms = focus_terms(focus)
    mapped = mapped or {}
    if notice is None:
        notice = offline_notice(cause, budget) if cause else ""
    room = budget - (tokens.count(notice + SECTION_GAP) if notice else 0)
    excerpts = cuts.excerpts
    words = read_words(excerpts)
    labels = label_excerpts(excerpts, words)
    scores = relevances(excerpts, terms, words)
    groups = group(excerpts, labels, scores)
    shape = plan_budget(groups, cuts, room, focused=bool(terms), min_relevance=min_relevance)
    summaries: list[str] = []
    rests_on: list[list[str]] = []
    leads: list[str] = []
    counts = Counts()
    lexicon = Lexicon()  # one for the request's summaries: each word or name classified once
    for g, share in zip(shape.kept, shape.shares, strict=True):
        text, ids, lead = _cluster_extract(g, share, focus, counts, lexicon, mapped)
        summaries.append(text)
        rests_on.append(ids)
        leads.append(lead)
    master = _master_extract(shape.kept, leads, shape.master_tokens)
    outcome = answer(cuts, groups, shape, summaries, rests_on, master, room, counts, terms, notice)
    # At a deadline: the LLM's where it summarized every excerpt, mixed where only some.
    every = all(e.source_id in mapped for e in excerpts)
    outcome.backend = ("llm" if every else "mixed") if mapped else "extractive"
    outcome.degraded, outcome.cause, outcome.notice = bool(cause), cause, notice
    return outcome


def _cluster_extract(
    g: Group, share: int, focus: str, counts: Counts, lexicon: Lexicon, mapped: Mapping[str, str]
) -> tuple[str, list[str], str]:
    """A cluster's embedded summary: its most relevant (then largest) excerpts, as many as
    can have ``_MEMBER_TOKENS`` each, summarized in document order, each with its id.  An id
    the text quotes is removed (and counted): only the id written after it is a citation."""
    n = max(1, min(len(g.members), share // _MEMBER_TOKENS))
    order = sorted(range(len(g.members)), key=lambda i: (-g.scores[i], -g.members[i].tokens, i))
    chosen = sorted(order[:n])
    each = share // n
    parts: list[str] = []
    ids: list[str] = []
    lead = ""
    for i in chosen:
        e = g.members[i]
        cite_tag = f" [{e.source_id}]"
        room = each - tokens.count(cite_tag) - 2
        if room <= 0:
            continue
        text = mapped.get(e.source_id, e.text)  # the LLM's summary of it, where there is one
        summary, removed = cite.clean(extractive.summarize(text, room, focus=focus, lexicon=lexicon), ())
        counts.removed += removed
        summary = summary.strip()
        if not summary:
            continue
        parts.append(summary + cite_tag)
        ids.append(e.source_id)
        if not lead:
            lead = _lead(summary)
            lead = lead + cite_tag if lead else ""
    return "\n\n".join(parts), ids, lead


def _lead(summary: str) -> str:
    """The first sentence of a summary that reads as prose, in plain words."""
    for line in summary.splitlines():
        if line.lstrip().startswith("#"):
            continue
        words = plain(line.lstrip(" \t-*>0123456789."))
        if len(words.split()) >= _LEAD_WORDS:
            first = _SENTENCE.search(words)
            return first.group(0).strip() if first else words
    return ""


def _master_extract(kept: list[Group], leads: list[str], budget: int) -> str:
    """The embedded overview: each summarized cluster's leading sentence, with its id, most
    relevant first, as many as fit."""
    lines: list[str] = []
    used = 0
    for g, lead in zip(kept, leads, strict=True):
        if not lead:
            continue
        line = f"- **{render.title(g.topic, g.subtopic)}**: {tokens.truncate(lead, 80)}"
        cost = tokens.count(line + "\n")
        if used + cost > budget:
            break
        lines.append(line)
        used += cost
    return "\n".join(lines)
