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

import heapq
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from mcp_summarizer.documents.sources import Excerpt, titles
from mcp_summarizer.text import snowball
from mcp_summarizer.text.lexicon import Stems, stemmed_words
from mcp_summarizer.text.lexicon import words as lowercase_words

__all__ = [
    "SIMILARITY",
    "Label",
    "Words",
    "focus_terms",
    "label_excerpts",
    "read_words",
    "relevance",
    "relevances",
]

# Cosine of TF-IDF vectors: 0.1 merges the most excerpts of one subject while keeping apart
# excerpts of different documents (a lower threshold mixes them; bench/documents.py).
SIMILARITY = 0.1
TERMS_KEPT = 40  # an excerpt's strongest terms: its subject, not its every word
_MIN_WORD = 3  # shorter Latin words are mostly noise as labels ("id", "os")


@dataclass(frozen=True, slots=True)
class Label:
    topic: str
    subtopic: str


@dataclass(frozen=True, slots=True)
class Words:
    """The excerpts' words, read once for their labels and their relevance alike."""

    each: list[list[str]]  # each excerpt's lowercase words, in order
    uses: Counter[str]  # every word's uses in all excerpts, in order of first use


def read_words(excerpts: Sequence[Excerpt]) -> Words:
    """The excerpts' words: each excerpt's text is read once per request."""
    each = [lowercase_words(e.text) for e in excerpts]
    uses: Counter[str] = Counter()
    for listed in each:
        uses.update(listed)
    return Words(each, uses)


def focus_terms(focus: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(stem for _, stem in stemmed_words(focus)))


def relevance(text: str, terms: Sequence[str], *, titles: str = "") -> float:
    """Share of the focus terms (word families) that ``text`` or its ``titles`` (the
    document's title, the headings above the excerpt) mention; 1.0 when there is no focus."""
    if not terms:
        return 1.0
    words = stemmed_words(f"{titles}\n{text}" if titles else text)
    return _share(terms, {_family(stem) for _, stem in words})


def relevances(excerpts: Sequence[Excerpt], terms: Sequence[str], words: Words) -> list[float]:
    """Each excerpt's `relevance` (its title and headings included), from its words already
    read (`read_words`): each distinct word of the request is stemmed once."""
    if not terms:
        return [1.0] * len(excerpts)
    wanted = frozenset(map(_family, terms))
    stems = Stems()
    hits: dict[str, str] = {}  # word -> its family, for the words of a wanted family
    for word in words.uses:
        stem = stems[word]
        if stem and (family := _family(stem)) in wanted:
            hits[word] = family
    out: list[float] = []
    for e, each in zip(excerpts, words.each, strict=True):
        present = {_family(stem) for _, stem in stemmed_words(titles(e))}
        present.update(map(hits.__getitem__, hits.keys() & set(each)))
        out.append(_share(terms, present))
    return out


def _share(terms: Sequence[str], present: set[str]) -> float:
    wanted = dict.fromkeys(map(_family, terms))
    return round(sum(1 for t in wanted if t in present) / len(wanted), 3)


def _family(crude: str) -> str:
    """The word family of a stem ("recursive", "recursing" -> "recurs")."""
    return snowball.stem(crude)


def _useful(word: str, stem: str) -> bool:
    return not stem.isdigit() and (len(word) >= _MIN_WORD or not word.isascii())


def label_excerpts(excerpts: Sequence[Excerpt], words: Words | None = None) -> list[Label]:
    """A label for each excerpt; excerpts about the same subject get the same label.
    ``words``: `read_words(excerpts)`, if already read."""
    if words is None:
        words = read_words(excerpts)
    stems = Stems()
    kept: dict[str, str] = {}  # word -> its stem if it may be a term, else ""
    for word in words.uses:
        stem = stems[word]
        kept[word] = stem if stem and _useful(word, stem) else ""
    stem_of = kept.__getitem__
    counts = [Counter(filter(None, map(stem_of, listed))) for listed in words.each]
    # Each stem's commonest word (the first used, on a tie), for the labels: what they read as.
    commonest: dict[str, tuple[str, int]] = {}
    for word, uses in words.uses.items():
        if (stem := kept[word]) and uses > commonest.get(stem, ("", 0))[1]:
            commonest[stem] = (word, uses)
    df: Counter[str] = Counter()
    for c in counts:
        df.update(c.keys())
    n = len(excerpts)
    # idf = log((n + 1) / df): a term in every excerpt weighs almost nothing (a site's chrome,
    # a template's words), one in few weighs most.  Computed once per term, not per use.
    idf = {t: math.log((n + 1) / d) for t, d in df.items() if d > 1}
    vectors = [_vector(c, idf) for c in counts]

    groups: list[list[int]] = []
    centroids: list[dict[str, float]] = []
    squares: list[float] = []  # each centroid's squared norm, as of its last change
    for i, v in enumerate(vectors):
        best, best_sim = -1, 0.0
        for g, centroid in enumerate(centroids):
            sim = _cosine(v, centroid, squares[g])
            if sim > best_sim:
                best, best_sim = g, sim
        if best >= 0 and best_sim >= SIMILARITY:
            groups[best].append(i)
            centroid = centroids[best]
            for term, w in v.items():
                centroid[term] = centroid.get(term, 0.0) + w
            squares[best] = sum(w * w for w in centroid.values())
        else:
            groups.append([i])
            centroids.append(dict(v))
            squares.append(sum(w * w for w in v.values()))

    labels: list[Label] = [Label("", "")] * n
    for members, centroid in zip(groups, centroids, strict=True):
        label = _name(members, centroid, excerpts, commonest)
        for i in members:
            labels[i] = label
    return labels


def _vector(c: Counter[str], idf: dict[str, float]) -> dict[str, float]:
    """An excerpt's strongest shared terms (``idf`` holds those in more than one excerpt),
    TF-IDF weighted and L2-normalized.  With no shared term (a lone excerpt, or one unlike
    all others) its own strongest terms stand in."""
    weights = {t: (1 + math.log(tf)) * idf[t] for t, tf in c.items() if t in idf}
    if not weights:
        weights = {t: 1 + math.log(tf) for t, tf in c.items()}
    top = heapq.nsmallest(TERMS_KEPT, ((-w, t) for t, w in weights.items()))
    norm = math.sqrt(sum(w * w for w, _ in top)) or 1.0
    return {t: -w / norm for w, t in top}


def _cosine(v: dict[str, float], centroid: dict[str, float], square: float) -> float:
    """Cosine similarity of ``v`` (of norm 1) and ``centroid`` (of squared norm ``square``)."""
    if not v or not centroid:
        return 0.0
    dot = sum(w * centroid.get(t, 0.0) for t, w in v.items())
    if dot <= 0:
        return 0.0
    return dot / math.sqrt(square)


def _name(
    members: list[int],
    centroid: dict[str, float],
    excerpts: Sequence[Excerpt],
    commonest: dict[str, tuple[str, int]],
) -> Label:
    ranked = [t for t, _ in sorted(centroid.items(), key=lambda kv: (-kv[1], kv[0]))]
    if not ranked:  # no words at all (numbers, symbols): say where it came from
        first = excerpts[members[0]]
        return Label(first.title or first.heading or first.doc_id, first.heading or "text")
    words = [commonest[t][0] for t in ranked[:3]]
    headings = Counter(excerpts[i].heading for i in members if excerpts[i].heading)
    common = headings.most_common(1)
    if common and (len(members) == 1 or common[0][1] > 1):
        subtopic = common[0][0]
    else:
        subtopic = ", ".join(words[1:3]) or words[0]
    return Label(words[0], subtopic)
