"""Topic labels and focus relevance without a model (the embedded path).  Pure, no I/O.

Topics: each excerpt becomes a TF-IDF vector of its word stems (the words `extractive`
scores by), keeping only its strongest terms and only terms shared with another excerpt, so
that similarity means a shared subject rather than a shared stray word.  Excerpts are then
grouped greedily in document order ("leader" clustering): an excerpt joins the most similar
group if their cosine similarity reaches ``SIMILARITY``, else it starts a group.  That is one
pass, deterministic, and O(excerpts x groups x terms kept), fast enough for thousands of
excerpts; no embedding model is shipped for it.  A group's topic is its heaviest term, its
subtopic the heading most of its excerpts sit under (else its next terms).

Relevance to a focus is the share of the focus's terms an excerpt mentions (1.0 with no
focus), its document's title and the headings above it included: a manual titled "find -
search for files in a directory hierarchy" is about directories wherever its excerpts say
so.  Terms match by word family (the Snowball English stemmer: "traversal", "traverse" and
"traversing" are one), so a focus need not use the text's own forms.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer  # type: ignore[import-untyped]  # it ships no type information

from mcp_summarizer.documents.sources import Excerpt
from mcp_summarizer.text.lexicon import stemmed_words

__all__ = ["SIMILARITY", "Label", "focus_terms", "label_excerpts", "relevance"]

# Cosine of TF-IDF vectors: 0.1 merges the most excerpts of one subject while keeping apart
# excerpts of different documents (a lower threshold mixes them; bench/documents.py).
SIMILARITY = 0.1
TERMS_KEPT = 40  # an excerpt's strongest terms: its subject, not its every word
_MIN_WORD = 3  # shorter Latin words are mostly noise as labels ("id", "os")


@dataclass(frozen=True, slots=True)
class Label:
    topic: str
    subtopic: str


def focus_terms(focus: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(stem for _, stem in stemmed_words(focus)))


def relevance(text: str, terms: Sequence[str], *, titles: str = "") -> float:
    """Share of the focus terms (word families) that ``text`` or its ``titles`` (the
    document's title, the headings above the excerpt) mention; 1.0 when there is no focus."""
    if not terms:
        return 1.0
    wanted = dict.fromkeys(map(_family, terms))
    present = {_family(stem) for _, stem in stemmed_words(f"{titles}\n{text}" if titles else text)}
    return round(sum(1 for t in wanted if t in present) / len(wanted), 3)


_STEMMER = snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def _family(stem: str) -> str:
    """The word family of a stem ("recursive", "recursing" -> "recurs")."""
    return str(_STEMMER.stemWord(stem))


def _useful(word: str, stem: str) -> bool:
    return not stem.isdigit() and (len(word) >= _MIN_WORD or not word.isascii())


def label_excerpts(excerpts: Sequence[Excerpt]) -> list[Label]:
    """A label for each excerpt; excerpts about the same subject get the same label."""
    counts: list[Counter[str]] = []
    pairs: Counter[tuple[str, str]] = Counter()  # (word, stem) -> uses, in order of first use
    for e in excerpts:
        kept = [(word, stem) for word, stem in stemmed_words(e.text) if _useful(word, stem)]
        counts.append(Counter(stem for _, stem in kept))
        pairs.update(kept)
    surface: dict[str, Counter[str]] = {}
    for (word, stem), uses in pairs.items():
        surface.setdefault(stem, Counter())[word] = uses
    df: Counter[str] = Counter()
    for c in counts:
        df.update(c.keys())
    n = len(excerpts)
    vectors = [_vector(c, df, n) for c in counts]

    groups: list[list[int]] = []
    centroids: list[dict[str, float]] = []
    for i, v in enumerate(vectors):
        best, best_sim = -1, 0.0
        for g, centroid in enumerate(centroids):
            sim = _cosine(v, centroid)
            if sim > best_sim:
                best, best_sim = g, sim
        if best >= 0 and best_sim >= SIMILARITY:
            groups[best].append(i)
            for term, w in v.items():
                centroids[best][term] = centroids[best].get(term, 0.0) + w
        else:
            groups.append([i])
            centroids.append(dict(v))

    labels: list[Label] = [Label("", "")] * n
    for members, centroid in zip(groups, centroids, strict=True):
        label = _name(members, centroid, excerpts, counts, surface)
        for i in members:
            labels[i] = label
    return labels


def _vector(c: Counter[str], df: Counter[str], n: int) -> dict[str, float]:
    """An excerpt's strongest shared terms, TF-IDF weighted and L2-normalized.  With no shared
    term (a lone excerpt, or one unlike all others) its own strongest terms stand in."""
    # idf = log((n + 1) / df): a term in every excerpt weighs almost nothing (a site's chrome,
    # a template's words), one in few weighs most.
    weights = {t: (1 + math.log(tf)) * math.log((n + 1) / df[t]) for t, tf in c.items() if df[t] > 1}
    if not weights:
        weights = {t: 1 + math.log(tf) for t, tf in c.items()}
    top = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:TERMS_KEPT]
    norm = math.sqrt(sum(w * w for _, w in top)) or 1.0
    return {t: w / norm for t, w in top}


def _cosine(v: dict[str, float], centroid: dict[str, float]) -> float:
    if not v or not centroid:
        return 0.0
    dot = sum(w * centroid.get(t, 0.0) for t, w in v.items())
    if dot <= 0:
        return 0.0
    return dot / math.sqrt(sum(w * w for w in centroid.values()))


def _name(
    members: list[int],
    centroid: dict[str, float],
    excerpts: Sequence[Excerpt],
    counts: list[Counter[str]],
    surface: dict[str, Counter[str]],
) -> Label:
    ranked = [t for t, _ in sorted(centroid.items(), key=lambda kv: (-kv[1], kv[0]))]
    if not ranked:  # no words at all (numbers, symbols): say where it came from
        first = excerpts[members[0]]
        return Label(first.title or first.heading or first.doc_id, first.heading or "text")
    words = [surface[t].most_common(1)[0][0] for t in ranked[:3]]
    headings = Counter(excerpts[i].heading for i in members if excerpts[i].heading)
    common = headings.most_common(1)
    if common and (len(members) == 1 or common[0][1] > 1):
        subtopic = common[0][0]
    else:
        subtopic = ", ".join(words[1:3]) or words[0]
    return Label(words[0], subtopic)
