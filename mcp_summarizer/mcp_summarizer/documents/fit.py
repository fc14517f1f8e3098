"""`summarize_documents`' structure made to fit a client's byte limit.  Pure, no I/O.

Some agents (Codex, OpenCode) read a result's ``structuredContent`` instead of its text when
it is there, re-serialized as compact JSON, and cut it at their own limit like any output.  A
tool with an outputSchema must send a structure that conforms to it, so the structure is
shrunk instead, the least useful parts first, until its compact JSON fits the bytes:

1. the master summary's ``source_ids`` (each is in a cluster summary's too);
2. the index's ``source_ids`` beyond the first few, then all of them (clusters not summarized
   first, the least relevant first): each id left out is counted in ``source_ids_left_out``;
3. the cluster summaries' ``source_ids`` beyond the first few (their text cites them inline);
   then the entries of the documents no summary's text cites (their ids stay in the index);
4. the cluster summaries' text, cut at sentence ends with a notice, least relevant first: to
   their first sentence, then left out; the most relevant one's to its first sentence (after
   each of these, the entries of the documents only what was cut cited);
5. the cluster summaries' last ``source_ids``, the other documents' entries (from the end),
   then the master summary's text, cut at sentence ends to its first sentence: kept longest.

What is left then (the index's topics, the first sentences) is the smallest the structure is
made; each list shortened says how much it left out (``source_ids_left_out``,
``documents_left_out``).

Lines are no concern: compact JSON is one line.  Its size is counted in UTF-8 bytes, with
non-ASCII characters as they are (as Rust's serde_json and JavaScript's JSON.stringify write
them), not ``\\u`` escapes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from functools import partial
from typing import Protocol

from mcp_summarizer.citations.syntax import cited
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.documents.model import DocumentInfo, DocumentsSummary
from mcp_summarizer.store.content import doc_of

__all__ = ["KEPT_IDS", "fit_structure", "json_bytes"]

KEPT_IDS = 3  # source ids a list keeps before it is emptied

# Where a summary may be cut: after a sentence's end (with closing quotes or brackets and any
# citations that follow it) or before a line break.  Full-width CJK ends need no space after.
_CLOSERS = "\"'\u201d\u2019\u00bb)*_"
_CITES = r"(?:[ \t]*\[[^\[\]\n]*#\d+\])*"
_END = re.compile(
    rf"(?:[.!?\u2026][{re.escape(_CLOSERS)}]*{_CITES}(?=\s|\Z)"
    rf"|[\u3002\uff01\uff1f][{re.escape(_CLOSERS)}]*{_CITES})"
    r"|(?=\n)"
)


def json_bytes(summary: DocumentsSummary) -> int:
    """The size of ``summary`` as clients see it: its compact JSON, in UTF-8 bytes."""
    text = json.dumps(summary.model_dump(mode="json"), separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8", "surrogatepass"))


def fit_structure(summary: DocumentsSummary, limits: Limits) -> DocumentsSummary:
    """``summary``, shrunk until its compact JSON is within ``limits.bytes`` (see the module's
    order); ``summary`` itself when there is no byte limit or it fits.  Always a valid
    `DocumentsSummary`; at the end of the order, the smallest it could be made."""
    if limits.bytes is None or json_bytes(summary) <= limits.bytes:
        return summary
    work = summary.model_copy(deep=True)
    notice = f"[mcp-summarizer: cut at a sentence end to fit this client's limit of {limits.describe()}]"
    left_out = f"[mcp-summarizer: left out to fit this client's limit of {limits.describe()}]"
    for step in _steps(work, notice, left_out):
        step()
        if json_bytes(work) <= limits.bytes:
            break
    return DocumentsSummary.model_validate(work.model_dump())


def _steps(s: DocumentsSummary, notice: str, left_out: str) -> Iterator[Callable[[], None]]:
    """The shrinking steps, in order; each is measured before the next is taken."""
    master = s.master_summary
    yield partial(_trim, master, 0)
    # Not summarized first, then the least relevant: both lists are most relevant first.
    clusters = [c for c in reversed(s.index.clusters) if not c.summarized]
    clusters += [c for c in reversed(s.index.clusters) if c.summarized]
    for keep in (KEPT_IDS, 0):
        yield from (partial(_trim, c, keep) for c in clusters)
    summaries = list(reversed(s.cluster_summaries))
    yield from (partial(_trim, cs, KEPT_IDS) for cs in summaries)
    yield from _uncited(s)  # the documents no summary covers
    rest = summaries[:-1]  # all but the most relevant
    for cs in rest:
        yield from _sentences(cs, notice)
    yield from _uncited(s)  # those only the cut sentences cited
    yield from (partial(_say, cs, left_out) for cs in rest)
    if s.cluster_summaries:
        yield from _sentences(s.cluster_summaries[0], notice)
    yield from _uncited(s)
    yield from (partial(_trim, cs, 0) for cs in summaries)
    yield from (partial(_drop, s, d) for d in reversed(s.documents))
    yield from _sentences(master, notice)


def _uncited(s: DocumentsSummary) -> Iterator[Callable[[], None]]:
    """Steps that leave out the entries of the documents no summary's text cites now, from the
    end (taken when the first is: the texts are as the steps before left them)."""
    text = "\n".join([s.master_summary.summary, *(cs.summary for cs in s.cluster_summaries)])
    cited_docs = {doc_of(sid) for sid in cited(text)}
    yield from (partial(_drop, s, d) for d in reversed(s.documents) if d.id not in cited_docs)


class _Cited(Protocol):
    source_ids: list[str]
    source_ids_left_out: int | None


class _Summary(Protocol):
    summary: str


def _trim(owner: _Cited, keep: int) -> None:
    """Leave out ``owner``'s source ids beyond the first ``keep``, counted."""
    extra = len(owner.source_ids) - keep
    if extra > 0:
        owner.source_ids = owner.source_ids[:keep]
        owner.source_ids_left_out = (owner.source_ids_left_out or 0) + extra


def _drop(s: DocumentsSummary, document: DocumentInfo) -> None:
    """Leave ``document`` out of the list, counted."""
    s.documents = [d for d in s.documents if d is not document]
    s.documents_left_out = (s.documents_left_out or 0) + 1


def _say(owner: _Summary, text: str) -> None:
    owner.summary = text


def _sentences(owner: _Summary, notice: str) -> Iterator[Callable[[], None]]:
    """Steps that cut ``owner``'s summary one sentence at a time from its end, down to its
    first sentence, the notice after what is kept."""
    text = owner.summary
    ends = sorted({m.end() for m in _END.finditer(text)} - {len(text.rstrip())})
    ends = [e for e in ends if text[:e].strip()]
    for end in reversed(ends):
        yield partial(_say, owner, f"{text[:end].rstrip()}\n{notice}")
