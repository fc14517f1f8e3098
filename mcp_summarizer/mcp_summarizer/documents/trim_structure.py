"""`summarize_documents`' structure made to fit a client's byte limit.  Pure, no I/O.

Some agents (Codex, OpenCode) read a result's ``structuredContent`` instead of its text when
it is there, re-serialized as compact JSON, and cut it at their own limit like any output.  A
tool with an outputSchema must send a structure that conforms to it, so the structure is
shrunk instead, the least useful parts first, until its compact JSON fits the bytes:

0. a list of ids that alone takes over an eighth of the limit (the documents a cluster holds,
   those no summary covers, ...: 10,000 of them are 110 KB) is kept as its first and last ids;
1. the master summary's ``source_ids`` (each is in a cluster summary's too);
2. the index's ``source_ids`` beyond the first few, then all of them (clusters not summarized
   first, the least relevant first): each id left out is counted in ``source_ids_left_out``;
3. the cluster summaries' ``source_ids`` beyond the first few (their text cites them inline);
   then the entries of the documents no summary's text cites (their ids stay in the index);
4. the cluster summaries' text, cut at sentence ends with a notice, least relevant first: to
   their first sentence, then left out; the most relevant one's to its first sentence (after
   each of these, the entries of the documents only what was cut cited);
5. the cluster summaries' last ``source_ids``, the other documents' entries (from the end),
   then the master summary's text, cut at sentence ends to its first sentence: kept longest;
6. every other list of ids kept as its first and last; the index's clusters and then the
   cluster summaries left out from the least relevant; the lists of ids emptied; and last the
   master summary cut to the bytes left, with the notice.

Each list shortened says how much it left out (``*_left_out``), and a structure that lost any
of its lists says where it is kept whole (``whole_structure_id``, when the caller could keep
it: `expand` opens it).  At the end of the order the structure is a few hundred bytes (its
counts, the ids that open the rest): it fits any limit the settings allow (1,024 bytes and up).

Lines are no concern: compact JSON is one line.  Its size is counted in UTF-8 bytes, with
non-ASCII characters as they are (as Rust's serde_json and JavaScript's JSON.stringify write
them), not ``\\u`` escapes; `documents.jsonsize` keeps it current step by step.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import partial
from typing import Protocol

from mcp_summarizer.citations.syntax import cited
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.documents.jsonsize import Sizes, json_bytes, value_bytes
from mcp_summarizer.documents.schema import (
    Cluster,
    ClusterSummary,
    DocumentInfo,
    DocumentsSummary,
    MasterSummary,
)
from mcp_summarizer.store.content import doc_of

__all__ = ["KEPT_IDS", "fit_structure", "json_bytes"]

KEPT_IDS = 3  # source ids a list keeps before it is emptied
_LONG_LIST = 8  # a list of ids over 1/8 of the limit is shortened first (step 0)

# Where a summary may be cut: after a sentence's end (with closing quotes or brackets and any
# citations that follow it) or before a line break.  Full-width CJK ends need no space after.
_CLOSERS = "\"'\u201d\u2019\u00bb)*_"
_CITES = r"(?:[ \t]*\[[^\[\]\n]*#\d+\])*"
_END = re.compile(
    rf"(?:[.!?\u2026][{re.escape(_CLOSERS)}]*{_CITES}(?=\s|\Z)"
    rf"|[\u3002\uff01\uff1f][{re.escape(_CLOSERS)}]*{_CITES})"
    r"|(?=\n)"
)


def fit_structure(summary: DocumentsSummary, limits: Limits, whole: str | None = None) -> DocumentsSummary:
    """``summary``, shrunk until its compact JSON is within ``limits.bytes`` (see the module's
    order); ``summary`` itself when there is no byte limit or it fits.  ``whole``: the id under
    which the caller keeps ``summary`` whole, named in the structure when it is shrunk.  Always
    a valid `DocumentsSummary`, within the limit."""
    if limits.bytes is None or json_bytes(summary) <= limits.bytes:
        return summary
    work = summary.model_copy(deep=True)
    work.whole_structure_id = whole
    shrink = _Shrink(work, limits)
    for step in shrink.steps():
        step()
        if shrink.sizes.total() <= limits.bytes:
            break
    work.documents = [d for d in work.documents if id(d) not in shrink.dropped]
    return DocumentsSummary.model_validate(work.model_dump())


class _Cited(Protocol):
    source_ids: list[str]
    source_ids_left_out: int | None


class _Summary(Protocol):
    summary: str


_IdLists = Cluster | ClusterSummary | MasterSummary


class _Shrink:
    """The steps of the module's order over ``s``, each telling `sizes` what it changed."""

    def __init__(self, s: DocumentsSummary, limits: Limits) -> None:
        self.s = s
        self.sizes = Sizes(s)
        self.limit = limits.bytes or 0
        limit = limits.describe()
        self.notice = f"[mcp-summarizer: cut at a sentence end to fit this client's limit of {limit}]"
        self.left_out = f"[mcp-summarizer: left out to fit this client's limit of {limit}]"
        self.dropped: set[int] = set()  # documents left out (filtered out at the end, once)

    def steps(self) -> Iterator[Callable[[], None]]:
        s, master = self.s, self.s.master_summary
        yield from self._id_lists(self.limit // _LONG_LIST)
        yield partial(self._trim, master, 0)
        # Not summarized first, then the least relevant: both lists are most relevant first.
        clusters = [c for c in reversed(s.index.clusters) if not c.summarized]
        clusters += [c for c in reversed(s.index.clusters) if c.summarized]
        for keep in (KEPT_IDS, 0):
            yield from (partial(self._trim, c, keep) for c in clusters)
        summaries = list(reversed(s.cluster_summaries))
        yield from (partial(self._trim, cs, KEPT_IDS) for cs in summaries)
        yield from self._uncited()  # the documents no summary covers
        rest = summaries[:-1]  # all but the most relevant
        for cs in rest:
            yield from self._sentences(cs)
        yield from self._uncited()  # those only the cut sentences cited
        yield from (partial(self._say, cs, self.left_out) for cs in rest)
        if s.cluster_summaries:
            yield from self._sentences(s.cluster_summaries[0])
        yield from self._uncited()
        yield from (partial(self._trim, cs, 0) for cs in summaries)
        yield from (partial(self._drop, d) for d in reversed(s.documents))
        yield from self._sentences(master)
        # The smallest: lists of ids to their ends, lists of parts from their ends, then none.
        yield from self._id_lists(0)
        yield from (partial(self._remove_cluster, c) for c in reversed(s.index.clusters))
        yield from (partial(self._remove_summary, cs) for cs in summaries)
        yield from self._id_lists(0, keep=0)
        yield self._cut_master

    # -- the steps ---------------------------------------------------------------------------

    def _id_lists(self, over: int, keep: int = 2) -> Iterator[Callable[[], None]]:
        """Steps that shorten each list of ids over ``over`` bytes to its first and last ids
        (``keep=0``: to none): the coverage's, the master's, the clusters' and summaries'."""
        coverage, master = self.s.index.coverage, self.s.master_summary
        if value_bytes(coverage.documents_not_covered) > over:
            yield partial(self._ends, coverage, "documents_not_covered", keep)
        for field in ("cluster_ids", "doc_ids"):
            if value_bytes(getattr(master, field)) > over:
                yield partial(self._ends, master, field, keep)
        owners: list[Cluster | ClusterSummary] = [*self.s.index.clusters, *self.s.cluster_summaries]
        yield from (partial(self._ends, o, "doc_ids", keep) for o in owners if value_bytes(o.doc_ids) > over)

    def _ends(self, owner: object, field: str, keep: int) -> None:
        """Keep ``owner``'s list ``field`` as its first and last (``keep=2``) or none, counted
        in ``<field>_left_out``."""
        ids: list[str] = getattr(owner, field)
        if len(ids) <= keep:
            return
        kept = [ids[0], ids[-1]] if keep else []
        setattr(owner, field, kept)
        counted = f"{field}_left_out"
        setattr(owner, counted, (getattr(owner, counted) or 0) + len(ids) - len(kept))
        self._touched(owner)

    def _trim(self, owner: _Cited, keep: int) -> None:
        """Leave out ``owner``'s source ids beyond the first ``keep``, counted."""
        extra = len(owner.source_ids) - keep
        if extra > 0:
            owner.source_ids = owner.source_ids[:keep]
            owner.source_ids_left_out = (owner.source_ids_left_out or 0) + extra
            self._touched(owner)

    def _drop(self, document: DocumentInfo) -> None:
        """Leave ``document`` out of the list, counted."""
        if id(document) in self.dropped:
            return
        self.dropped.add(id(document))
        self.sizes.removed(document)
        self.s.documents_left_out = (self.s.documents_left_out or 0) + 1

    def _remove_cluster(self, cluster: Cluster) -> None:
        index = self.s.index
        _remove(index.clusters, cluster)
        self.sizes.removed(cluster)
        index.clusters_left_out = (index.clusters_left_out or 0) + 1

    def _remove_summary(self, summary: ClusterSummary) -> None:
        _remove(self.s.cluster_summaries, summary)
        self.sizes.removed(summary)
        self.s.cluster_summaries_left_out = (self.s.cluster_summaries_left_out or 0) + 1

    def _say(self, owner: _Summary, text: str) -> None:
        owner.summary = text
        self._touched(owner)

    def _uncited(self) -> Iterator[Callable[[], None]]:
        """Steps that leave out the entries of the documents no summary's text cites now, from
        the end (taken when the first is: the texts are as the steps before left them)."""
        s = self.s
        text = "\n".join([s.master_summary.summary, *(cs.summary for cs in s.cluster_summaries)])
        cited_docs = {doc_of(sid) for sid in cited(text)}
        yield from (partial(self._drop, d) for d in reversed(s.documents) if d.id not in cited_docs)

    def _sentences(self, owner: _Summary) -> Iterator[Callable[[], None]]:
        """Steps that cut ``owner``'s summary one sentence at a time from its end, down to its
        first sentence, the notice after what is kept."""
        text = owner.summary
        ends = sorted({m.end() for m in _END.finditer(text)} - {len(text.rstrip())})
        ends = [e for e in ends if text[:e].strip()]
        for end in reversed(ends):
            yield partial(self._say, owner, f"{text[:end].rstrip()}\n{self.notice}")

    def _cut_master(self) -> None:
        """The master summary's longest start that fits the bytes left, the notice after it
        (found by halving: each try is one measure of the frame)."""
        master = self.s.master_summary
        text = master.summary.split(f"\n{self.notice}")[0]
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            self._say(master, f"{text[:mid]}\n{self.notice}")
            if self.sizes.total() <= self.limit:
                lo = mid
            else:
                hi = mid - 1
        self._say(master, f"{text[:lo]}\n{self.notice}" if lo else self.notice)

    def _touched(self, owner: object) -> None:
        if isinstance(owner, Cluster | ClusterSummary):
            self.sizes.changed(owner)
        else:  # the master summary or the coverage: the frame
            self.sizes.frame_changed()


def _remove(items: list[Cluster] | list[ClusterSummary], item: object) -> None:
    """Take ``item`` out of ``items``, in place (the steps remove from the end: one pop)."""
    at = next(i for i in range(len(items) - 1, -1, -1) if items[i] is item)
    del items[at]
