"""The fidelity receipt: what a summary kept of its source's facts, what it dropped, and what
it holds that its source does not.  Deterministic, no model.  Pure, no I/O.

* Kept: a source fact whose normalized form is among the summary's facts, or appears in the
  summary's text (a summary may keep "Marshal Dughan" inside a longer name).
* Dropped: the rest, the most salient first: salience is how often the fact occurs in the
  source, multiplied for facts that hold a focus word (the focus's word stems, as `extractive`
  reads them) and for facts in the source's first and last tenth (where documents most often
  put what matters).
* Possibly invented: a summary fact that is neither among the source's facts nor anywhere in
  its text.  A notice line the service added (``[summarized offline: ...]``) is not the
  summary's claim and is left out.
Lists are capped at ``LIST_CAP`` items; the counts are exact.

Most of the cost is finding the source's facts (`source_facts`), which does not need the
summary: the engine runs it while the LLM works and passes the result in.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from mcp_summarizer.errors import Stopped
from mcp_summarizer.fidelity.facts import KINDS, Fact, facts
from mcp_summarizer.process import pacing
from mcp_summarizer.text.lexicon import stemmed_words
from shared.gcpause import no_gc_pauses

__all__ = ["LIST_CAP", "Receipt", "SourceFacts", "receipt", "source_facts"]

LIST_CAP = 20
FOCUS_FACTOR = 4.0  # a fact that holds a focus word counts as if it occurred 4x as often
EDGE_FACTOR = 1.5  # ... and one in the source's first or last tenth, 1.5x
_NOTICE = re.compile(r"\A\[(?:summarized offline|truncated to|not summarized)[^\n]*\]\n*")
_INDEX_AFTER = 64  # summary facts unknown to the source beyond which the source's words are indexed
_PUNCTUATION = ".,;:!?()[]{}\"'`“”‘’*_"
# How a summary's value must stand in the source's text to be found there (see `_alone`):
# "2001" is not in "20017", "JIRA-123" not in "JIRA-1234", the number "180" not in
# "10.180.3.4" nor in "0.180"; a hash, or a code span of hex, may be abbreviated ("a1b2c3d" is
# in its sha).
_HEX = re.compile(r"[0-9a-f]{7,}")


@dataclass(slots=True)
class Receipt:
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # kind -> {"source", "kept"}
    kept: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    # The dropped facts that hold a focus word, most salient first: what a repair restores.
    # Not in `dropped` when twenty commoner facts outrank them (a fact met once, say).
    dropped_focus: list[str] = field(default_factory=list)
    invented: list[str] = field(default_factory=list)
    source_facts: int = 0
    kept_facts: int = 0
    invented_facts: int = 0
    kept_keys: set[tuple[str, str]] = field(default_factory=set)  # every (kind, key) kept: for checks
    invented_keys: set[tuple[str, str]] = field(default_factory=set)  # every one possibly invented
    repair: dict[str, object] | None = None  # FIDELITY_REPAIR: the counts before and after
    baseline: dict[str, object] | None = None  # held against the embedded summary (ON_LOW_FIDELITY)

    def totals(self) -> dict[str, int]:
        return {
            "source_facts": self.source_facts,
            "kept_facts": self.kept_facts,
            "invented_facts": self.invented_facts,
        }

    def as_meta(self) -> dict[str, object]:
        return {
            "counts": self.counts,
            "source_facts": self.source_facts,
            "kept_facts": self.kept_facts,
            "invented_facts": self.invented_facts,
            "kept": self.kept,
            "dropped": self.dropped,
            "invented": self.invented,
            **({"repair": self.repair} if self.repair is not None else {}),
            **({"baseline": self.baseline} if self.baseline is not None else {}),
        }

    def as_log(self) -> dict[str, int]:
        return {
            "fidelity_source_facts": self.source_facts,
            "fidelity_kept_facts": self.kept_facts,
            "fidelity_invented_facts": self.invented_facts,
        }


def _distinct(text: str, halt: threading.Event | None = None) -> dict[tuple[str, str], tuple[Fact, int]]:
    """Each distinct (kind, key): its first occurrence and how often it occurs."""
    seen: dict[tuple[str, str], tuple[Fact, int]] = {}
    for f in facts(text, halt):
        k = (f.kind, f.key)
        first, n = seen.get(k, (f, 0))
        seen[k] = (first, n + 1)
    return seen


@dataclass(slots=True)
class SourceFacts:
    """What a receipt needs of the source alone: its distinct facts, and (computed ahead, or
    when first needed) its text as summary facts are looked up in, with its word index."""

    facts: dict[tuple[str, str], tuple[Fact, int]]  # (kind, key) -> first occurrence, count
    text: str | None = None  # casefolded, spaces collapsed, commas dropped
    words: set[str] | None = None


def source_facts(source: str, halt: threading.Event | None = None) -> SourceFacts:
    """All of it, for `receipt`: computed ahead, while the LLM works (window by window: see
    `_searchable_parts`).  ``halt`` set (the request is over): `Stopped` at the next window,
    so a worker thread scanning megabytes for a gone client stops with it."""
    with no_gc_pauses():  # every fact of a megabyte: see shared.gcpause
        distinct = _distinct(source, halt)
        parts: list[str] = []
        words: set[str] = set()
        cut: list[str] = []  # the pieces so far of a word cut at parts' ends (megabytes long)
        for part, in_word in _searchable_parts(source):
            if halt is not None and halt.is_set():
                raise Stopped
            pacing.step()
            parts.append(part)
            if cut:  # the word goes on into this part, up to its first space
                head, space, part = part.partition(" ")
                cut.append(head)
                if not space and in_word:
                    continue
                words |= _words("".join(cut))
                cut = []
            if in_word:
                part, _, last = part.rpartition(" ")
                cut.append(last)
            words |= _words(part)
        words |= _words("".join(cut))
        return SourceFacts(distinct, "".join(parts), words)


def receipt(source: str, summary: str, focus: str = "", src: SourceFacts | None = None) -> Receipt:
    """The receipt of ``summary``; ``src``: ``source_facts(source)``, if already known."""
    with no_gc_pauses():
        return _receipt(source, summary, focus, SourceFacts(_distinct(source)) if src is None else src)


def _searchable(text: str) -> str:
    return "".join(part for part, _ in _searchable_parts(text))


_PART_CHARS = 1 << 15
_MAX_PART_CHARS = 1 << 20
_BEFORE_SPACE = re.compile(r"(?<=\S)(?=\s)")


def _searchable_parts(text: str) -> Iterator[tuple[str, bool]]:
    """``text`` casefolded, whitespace runs collapsed, commas dropped, in consecutive parts,
    each with whether it ends inside a word.

    A part is cut where a whitespace run starts, so no run spans two parts and the parts join
    into what one pass over the whole text gives (each step works character by character);
    its words are whole words, but for a word longer than `_MAX_PART_CHARS` (a run of one
    letter, a blob), cut there.  One regex call over megabytes holds the GIL for all of its
    run (the event loop, /health and the LLM calls' hand-offs wait), and a request that ends
    stops the scan between parts only: a part holds it briefly."""
    start, size, in_space = 0, len(text), False
    while start < size:
        end, in_word = size, False
        if size - start > _PART_CHARS:
            found = _BEFORE_SPACE.search(text, start + _PART_CHARS, start + _MAX_PART_CHARS)
            end, in_word = (found.start(), False) if found else (min(start + _MAX_PART_CHARS, size), True)
        part = _collapsed(text[start:end]).casefold().replace(",", "")
        if in_space and part.startswith(" "):  # a whitespace run cut in two: still one space
            part = part[1:]
        in_space = text[end - 1].isspace()
        yield part, in_word and end < size
        start = end


def _collapsed(text: str) -> str:
    """``text`` with each whitespace run one space: ``re.sub(r"\\s+", " ", text)``, at a third
    of its cost (`str.split` knows the same whitespace as ``\\s``)."""
    words = text.split()
    if not words:
        return " " if text else ""
    lead = " " if text[0].isspace() else ""
    return lead + " ".join(words) + (" " if text[-1].isspace() else "")


def _words(searchable: str) -> set[str]:
    return {w.strip(_PUNCTUATION) for w in searchable.split()}


def _receipt(source: str, summary: str, focus: str, known: SourceFacts) -> Receipt:
    summary = _NOTICE.sub("", summary, count=1)
    src = known.facts
    out = _distinct(summary)
    summary_keys = {key for _, key in out}
    summary_text = _searchable(summary)
    source_keys = {key for _, key in src}
    # A substring search is the fallback for facts whose key is not a fact of the other text;
    # it runs only when the fact's first word is a word of that text (a set lookup), so the
    # cost stays near one pass over each text, not facts x text.
    summary_words = _words(summary_text)
    focus_stems = {stem for _, stem in stemmed_words(focus)}
    length = max(len(source), 1)

    r = Receipt(counts={kind: {"source": 0, "kept": 0} for kind in KINDS})
    dropped: list[tuple[float, int, str]] = []
    dropped_focus: list[tuple[float, int, str]] = []
    for (kind, key), (fact, n) in src.items():
        r.counts[kind]["source"] += 1
        r.source_facts += 1
        plain = key.replace(",", "") if kind != "negation" else key.split(" ", 1)[-1]
        if key in summary_keys or (kind != "negation" and _contains(summary_text, summary_words, plain)):
            r.counts[kind]["kept"] += 1
            r.kept_facts += 1
            r.kept_keys.add((kind, key))
            if len(r.kept) < LIST_CAP:
                r.kept.append(fact.text)
            continue
        salience = float(n)
        on_focus = bool(focus_stems) and any(stem in key for stem in focus_stems)  # keys are casefolded
        if on_focus:
            salience *= FOCUS_FACTOR
        if fact.start < length // 10 or fact.start > length - length // 10:
            salience *= EDGE_FACTOR
        dropped.append((-salience, fact.start, fact.text))
        if on_focus:
            dropped_focus.append((-salience, fact.start, fact.text))
    dropped.sort()
    r.dropped = [text for _, _, text in dropped[:LIST_CAP]]
    r.dropped_focus = [text for _, _, text in sorted(dropped_focus)[:LIST_CAP]]
    unknown = [(kind, key, fact) for (kind, key), (fact, _) in out.items() if key not in source_keys]
    source_text = (known.text if known.text is not None else _searchable(source)) if unknown else ""
    # The word index pays off only for many searches: a few are plain substring searches.
    # Which one runs depends on the count alone (they differ at the edges: a fact at the
    # start of a longer word), never on whether the index was built ahead.
    source_words = None
    if len(unknown) > _INDEX_AFTER:
        source_words = known.words if known.words is not None else _words(source_text)
    for kind, key, fact in unknown:
        plain = (key if kind != "negation" else key.split(" ", 1)[-1]).replace(",", "")
        if (
            _starts_a_word(source_text, plain, _alone(kind, plain))
            if source_words is None
            else _contains(source_text, source_words, plain)
        ):
            continue
        r.invented_facts += 1
        r.invented_keys.add((kind, key))
        if len(r.invented) < LIST_CAP:
            r.invented.append(fact.text)
    r.counts = {kind: c for kind, c in r.counts.items() if c["source"]}
    return r


def _contains(text: str, words: set[str], value: str) -> bool:
    """``value`` occurs in ``text``, checked only when its first word is one of ``words``."""
    first = value.split(" ", 1)[0].strip(_PUNCTUATION)
    return bool(first) and first in words and value in text


def _alone(kind: str, value: str) -> str:
    """How ``value`` must stand in the source's text: "number" (a bare number: not after "."
    or ",", nor before one and a digit, nor before a digit), "digits" (not before a digit: any
    other value that ends in one), or "" (a word start is enough)."""
    if kind == "bare_number":
        return "number"
    if not value[-1:].isdigit() or kind == "hash" or (kind == "identifier" and _HEX.fullmatch(value)):
        return ""
    return "digits"


def _starts_a_word(text: str, value: str, alone: str = "") -> bool:
    """``value`` occurs in ``text`` where no letter or digit comes before it (as ``_contains``
    asks of its first word): "99 km" is not in "199 km"; and as ``_alone`` says."""
    at = text.find(value)
    while at >= 0:
        if _stands_alone(text, at, at + len(value), alone):
            return True
        at = text.find(value, at + 1)
    return False


def _stands_alone(text: str, at: int, end: int, alone: str) -> bool:
    before = text[at - 1] if at else " "
    if before.isalnum():
        return False
    after = text[end : end + 2]
    if alone and after[:1].isdigit():
        return False
    if alone == "number":
        return before not in ".," and not (after[:1] in ".," and after[1:].isdigit())
    return True
