"""The topic index: excerpts grouped by (topic, subtopic), near-duplicate labels merged, ranked
by relevance, and the output budget shared out among the clusters that get a summary.
Pure, no I/O.

Labels from a model vary in wording ("Quest givers" / "quest-givers" / "Quest giver NPCs"), so
a label is compared by its word stems: two groups merge when their topics have the same
stems and their subtopics share at least half of theirs (Jaccard), or when the whole labels
share ``MERGE_SIMILARITY`` of their stems.

Budget: the markdown answer is the master summary, then one section per summarized cluster
(heading, summary, sources).  The master summary gets ``MASTER_SHARE`` of the budget; each
cluster section needs at least ``MIN_CLUSTER_TOKENS`` of summary beside its heading and
sources, so only as many clusters as that allows get one, the most relevant first; clusters
under ``CLUSTER_MIN_RELEVANCE`` rank last, so they are the first to go.  Every cluster stays
in the index, a dropped one with the reason.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mcp_summarizer.documents.sources import Excerpt
from mcp_summarizer.documents.topics import Label
from mcp_summarizer.text.lexicon import stemmed_words

__all__ = ["MASTER_SHARE", "MIN_CLUSTER_TOKENS", "Group", "Plan", "group", "plan"]

MERGE_SIMILARITY = 0.75
MASTER_SHARE = 4  # 1/4 of the budget: the master summary
MIN_CLUSTER_TOKENS = 60  # a cluster summary shorter than this says too little to be worth its heading


@dataclass(slots=True)
class Group:
    """One cluster: its label, its excerpts in document order, and its relevance (the highest
    of its excerpts')."""

    cluster_id: str
    topic: str
    subtopic: str
    members: list[Excerpt]
    scores: list[float]
    relevance: float = 0.0
    dropped_because: str | None = None

    @property
    def source_ids(self) -> list[str]:
        return [e.source_id for e in self.members]

    @property
    def doc_ids(self) -> list[str]:
        return list(dict.fromkeys(e.doc_id for e in self.members))


def _stems(text: str) -> frozenset[str]:
    return frozenset(stem for _, stem in stemmed_words(text))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def _same(a: tuple[frozenset[str], frozenset[str]], b: tuple[frozenset[str], frozenset[str]]) -> bool:
    if a[0] == b[0] and _jaccard(a[1], b[1]) >= 0.5:
        return True
    return _jaccard(a[0] | a[1], b[0] | b[1]) >= MERGE_SIMILARITY


def group(excerpts: Sequence[Excerpt], labels: Sequence[Label], scores: Sequence[float]) -> list[Group]:
    """Clusters of excerpts by label, near-duplicates merged; most relevant first (then the
    largest, then the first to appear), with unique, readable ids."""
    groups: list[Group] = []
    keys: list[tuple[frozenset[str], frozenset[str]]] = []
    exact: dict[tuple[frozenset[str], frozenset[str]], int] = {}
    for excerpt, label, score in zip(excerpts, labels, scores, strict=True):
        key = (_stems(label.topic), _stems(label.subtopic))
        at = exact.get(key)
        if at is None:
            at = next((i for i, k in enumerate(keys) if _same(k, key)), None)
        if at is None:
            at = len(groups)
            groups.append(Group("", _tidy(label.topic) or "untitled", _tidy(label.subtopic), [], []))
            keys.append(key)
        exact[key] = at
        groups[at].members.append(excerpt)
        groups[at].scores.append(score)
    for g in groups:
        g.relevance = max(g.scores, default=0.0)
    order = sorted(range(len(groups)), key=lambda i: (-groups[i].relevance, -len(groups[i].members), i))
    ranked = [groups[i] for i in order]
    taken: set[str] = set()
    for g in ranked:
        base = f"{_slug(g.topic)}::{_slug(g.subtopic)}" if g.subtopic else _slug(g.topic)
        cid, n = base, 2
        while cid in taken:
            cid, n = f"{base}-{n}", n + 1
        taken.add(cid)
        g.cluster_id = cid
    return ranked


@dataclass(slots=True)
class Plan:
    """Which clusters get a summary, and how many tokens each (and the master) may use."""

    master_tokens: int
    kept: list[Group] = field(default_factory=list)
    shares: list[int] = field(default_factory=list)


def plan(
    groups: Sequence[Group],
    budget: int,
    *,
    min_relevance: float,
    overhead: Callable[[Group], int],
    master_overhead: int,
) -> Plan:
    """Share ``budget`` out: ``overhead(g)`` is what a cluster's section costs besides its
    summary (heading and sources), ``master_overhead`` what the master's section does."""
    ranked = sorted(groups, key=lambda g: g.relevance < min_relevance)  # stable: low relevance last
    master = max(min(budget // MASTER_SHARE, budget - master_overhead), 0)
    room = budget - master_overhead - master
    kept: list[Group] = []
    spent = 0
    for g in ranked:
        cost = overhead(g) + MIN_CLUSTER_TOKENS
        if spent + cost <= room:
            kept.append(g)
            spent += cost
            continue
        if g.relevance < min_relevance:
            g.dropped_because = (
                f"relevance {g.relevance:g} is under CLUSTER_MIN_RELEVANCE={min_relevance:g} "
                "and the budget had no room left"
            )
        else:
            g.dropped_because = "the budget (max_output_tokens) had no room left for it"
    if not kept:
        # No room for any cluster section: the master summary takes it all.
        return Plan(master_tokens=max(budget - master_overhead, 0))
    spare = room - spent
    weights = [len(g.members) for g in kept]
    total = sum(weights)
    shares = [MIN_CLUSTER_TOKENS + spare * w // total for w in weights]
    return Plan(master_tokens=master, kept=kept, shares=shares)


def _tidy(label: str) -> str:
    """A label as shown: one line, no markup, at most 80 characters."""
    text = " ".join(label.replace("#", " ").replace("[", "(").replace("]", ")").split())
    return text[:80].strip()


def _slug(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:40].strip("-")
    if slug:
        return slug
    # A label with no ASCII letters (CJK): its characters as code points keep it unique.
    return "-".join(f"{ord(c):x}" for c in text[:8]) or "untitled"
