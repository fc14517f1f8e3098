"""The markdown answer of `summarize_documents`: the master summary, then each summarized
cluster (heading, summary, the sources it rests on), most relevant first.  Pure, no I/O.

Each section's frame (everything but the summary text) is rendered by the same function that
the budget plan measures, so what is planned is what is sent.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_summarizer.documents.sources import Document
from mcp_summarizer.store.content import doc_of

__all__ = ["SOURCES_SHOWN", "cluster_section", "footer", "master_section", "title"]

SOURCES_SHOWN = 12  # per cluster in the markdown; structuredContent lists them all
_TITLE_CHARS = 40


def master_section(documents: int, summary: str) -> str:
    noun = "document" if documents == 1 else "documents"
    return f"# Summary of {documents} {noun}\n\n{summary}".rstrip()


def cluster_section(
    topic: str,
    subtopic: str,
    relevance: float,
    summary: str,
    source_ids: Sequence[str],
    documents: dict[str, Document],
    *,
    focused: bool,
) -> str:
    heading = f"## {title(topic, subtopic)}"
    if focused:
        heading += f" (relevance {relevance:.2f})"
    return f"{heading}\n\n{summary}\n\n{_sources(source_ids, documents)}".replace("\n\n\n\n", "\n\n")


def title(topic: str, subtopic: str) -> str:
    """``topic — subtopic``, or the one that says it all when it contains the other."""
    if not subtopic or topic.casefold() in subtopic.casefold():
        return subtopic or topic
    if subtopic.casefold() in topic.casefold():
        return topic
    return f"{topic} — {subtopic}"


def footer(dropped: int) -> str:
    if not dropped:
        return ""
    noun = "cluster" if dropped == 1 else "clusters"
    return f"_{dropped} more {noun} not summarized here (the budget): see the index._"


def _sources(source_ids: Sequence[str], documents: dict[str, Document]) -> str:
    """``Sources: [a#0], [a#3] (Title A); [b#1] (Title B) +4 more``"""
    shown = source_ids[:SOURCES_SHOWN]
    by_doc: dict[str, list[str]] = {}
    for sid in shown:
        by_doc.setdefault(doc_of(sid), []).append(sid)
    parts = []
    for doc_id, ids in by_doc.items():
        cites = ", ".join(f"[{i}]" for i in ids)
        title = documents[doc_id].title if doc_id in documents else ""
        if title:
            short = " ".join(title.split())
            short = short if len(short) <= _TITLE_CHARS else short[: _TITLE_CHARS - 1] + "…"
            cites += f" ({short})"
        parts.append(cites)
    more = len(source_ids) - len(shown)
    return "Sources: " + "; ".join(parts) + (f" +{more} more" if more > 0 else "")
