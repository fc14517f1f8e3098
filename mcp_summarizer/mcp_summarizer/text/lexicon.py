"""Words, stems and named things: the terms text is weighed by.

Terms are lowercased words (CJK: single characters) minus stopwords, crudely stemmed
("NPCs" -> "npc", "wolves" -> "wolf"), from the visible text (link targets are skipped),
plus *named things*: identifiers (dotted names, ``code spans``, CamelCase, snake_case),
numbers of 2+ digits and versions, dates, and capitalized words that do not start a
sentence.  The extractive summarizer scores units by them; `documents/` labels topics and
`fidelity/` compares a summary with its source with the same words and stems.
"""

from __future__ import annotations

import re
from itertools import chain

__all__ = ["Lexicon", "Stems", "named_things", "read_focus", "stemmed_words", "word_stems", "words"]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
# A run of word characters first: most of any text, and three times faster than trying the
# CJK class at every character (the two alternatives never match the same character).
_WORD = re.compile(rf"[^\W{_CJK}]++|[{_CJK}]")
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*+\.?"
# Named things.  At a word start the lookahead skips a plain lowercase word in one
# possessive scan (most of the text), so the alternatives only run where one can start.  A
# name is matched with the space before it (a capitalized word right after a sentence end
# is no evidence of a name), and not when it is the start of a dotted name or a call.
_NAMED = rf"""
      `(?P<code>[^`\n]{{2,80}})`
    | \b(?=[a-z]*+[A-Z0-9_.])(?:
        (?P<date>\d{{4}}-\d{{2}}-\d{{2}}\b|{_MONTH}\s+\d{{1,2}}(?:,\s*\d{{4}})?\b|\d{{1,2}}\s+{_MONTH}\s+\d{{4}}\b)
      | (?P<dotted>[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)++)(?:\(\))?
      | (?P<number>\d++(?:[.,:]\d++)++\b|\d{{2,}}+\b)
      | (?P<camel>[A-Z]*+[a-z]++[A-Z]\w*+|[A-Z]{{2,}}+[a-z]\w*+)
      | (?P<snake>[A-Za-z]++_\w++)
    )
    | [ ](?=[A-Z])(?<=[^\s.!?:;][ ])(?!{_MONTH}\s+\d)
      (?P<name>[A-Z][\w'’-]*+(?![.(][\w)])(?:[ ][A-Z][\w'’-]*+(?![.(][\w)]))*+)
"""
_NAMED_RE = re.compile(_NAMED, re.VERBOSE)
# A link target ends at the first ")" or blank, and never runs over the next "](": else
# each "](" of a long run of them would scan to the run's end (quadratic).
_LINK_TARGET = r"\]\([^)\s\]]*+(?:\](?!\()[^)\s\]]*+)*+(?:\s++\"[^\"]*+\")?+\)"
# One scan for everything: a word, a link target (skipped) or a named thing.  No groups,
# so findall returns plain strings, each classified once per document (see Lexicon).
_SCAN = re.compile(
    r"[a-z]++(?![\w.])|"  # the common case first: a plain lowercase word (cannot start a named thing)
    + _LINK_TARGET
    + "|"
    + re.sub(r"\(\?P<\w+>", "(?:", _NAMED)
    + rf"|[{_CJK}]|[^\W{_CJK}]+",
    re.VERBOSE,
)
_CATEGORY = {
    "code": "code",
    "dotted": "code",
    "camel": "code",
    "snake": "code",
    "number": "number",
    "date": "date",
    "name": "name",
}
_CATEGORY_KEY = {"code": "c", "exception": "e", "number": "n", "date": "d", "name": "p"}
_EXCEPTION_SUFFIX = re.compile(r"(?:Error|Exception|Warning)$")
_STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each either else etc
    few for from further had has have having he her here hers herself him himself his how however
    i if in into is it its itself just may me might more most must my myself neither no nor not of
    off on once only or other our ours ourselves out over own same shall she should so some such
    than that the their theirs them themselves then there these they this those through to too
    under until up upon us very via was we were what when where which while who whom why will with
    would yet you your yours yourself yourselves one two see use used using eg ie
    http https www com org html htm""".split()
)
# Words of a focus / schema hint that name a category of named things.
_CATEGORY_WORDS = {
    "code": "function functions method methods class classes api apis identifier identifiers module "
    "modules attribute attributes parameter parameters argument arguments variable variables",
    "exception": "exception exceptions error errors warning warnings",
    "number": "number numbers numeric version versions amount amounts count counts price prices "
    "quantity quantities statistic statistics figure figures size sizes value values percentage",
    "date": "date dates year years time times timeline when period periods era eras event events",
    "name": "person persons people character characters npc npcs faction factions organization "
    "organizations place places location locations company companies entity entities",
}
_CATEGORY_OF_WORD = {w: c for c, words in _CATEGORY_WORDS.items() for w in words.split()}
# Stems of hint words that describe a kind of content rather than a topic ("numbers",
# "dates", "names"): they select a category, they are not focus terms.
_META_WORDS = frozenset(
    "number numeric value date name identifier figure amount count statistic percentage quantity "
    "entity".split()
)


def _stem(word: str) -> str:
    """A lowercase word's stem; "" for stopwords and one-character words (but CJK)."""
    if word in _STOPWORDS or (len(word) < 2 and not ("\u3040" <= word <= "\ud7af")):
        return ""
    if len(word) > 3 and word.isalpha():
        if word.endswith("ies") and len(word) > 4:
            return word[:-3] + "y"
        if word.endswith("ves") and len(word) > 4:
            return word[:-3] + "f"  # wolves -> wolf
        if word.endswith(("sses", "xes", "ches", "shes", "zes")):
            return word[:-2]
        if word.endswith("s") and not word.endswith(("ss", "us", "is")):
            return word[:-1]
    return word


def stemmed_words(text: str) -> list[tuple[str, str]]:
    """(lowercase word, stem) for each word of ``text`` but stopwords, in order: the words
    this module scores by, for other modules that weigh text the same way (topic labels)."""
    stems = Stems()
    return [(w, s) for w in _WORD.findall(text.lower()) if (s := stems[w])]


def words(text: str) -> list[str]:
    """Each lowercase word of ``text``, stopwords included, in order: `stemmed_words` before
    stemming, for a caller that counts them first and stems each distinct word once."""
    return _WORD.findall(text.lower())


def word_stems(text: str) -> tuple[str, ...]:
    return tuple(filter(None, map(_stem, _WORD.findall(text.lower()))))


def _classify(raw: str) -> tuple[str, str] | None:
    """(named thing, category) for a match of ``_SCAN``, or None for a word or a link target.
    Categories: code, exception, number, date, name."""
    first = raw[0]
    if first == "]":
        return None
    if first == "`":  # a code span: no need to match it again
        value = raw[1:-1].strip().removesuffix("()")
        if value[:1].isdigit():
            return value, "number"
        return value, "exception" if _EXCEPTION_SUFFIX.search(value) else "code"
    if first == " ":  # a capitalized word (or run of them) after a word: a name...
        value = raw[1:]
        m = _NAMED_RE.fullmatch(value) if " " not in value else None
        if m is None or m.lastgroup is None:
            return value, "name"
        # ...unless it is an identifier (JSONDecodeError) or a number
    else:
        m = _NAMED_RE.fullmatch(raw)
        if m is None or m.lastgroup is None:
            return None
    kind = m.lastgroup
    value = m.group(kind)
    category = _CATEGORY[kind]
    if kind == "code":
        value = value.strip().removesuffix("()")
        if value[:1].isdigit():
            category = "number"
    elif kind == "dotted":
        value = value.removesuffix("()")
    if category == "code" and _EXCEPTION_SUFFIX.search(value):
        category = "exception"
    return value, category


class Stems(dict[str, str]):
    """Lowercase word -> stem ("" for a stopword), filled on first use: one shared by the
    texts of a request stems each distinct word once."""

    def __missing__(self, word: str) -> str:
        stem = self[word] = _stem(word)
        return stem


class Lexicon(dict[str, tuple[str, ...]]):
    """A match of ``_SCAN`` -> its terms: word stems, and for a named thing also the term
    "\\x00" + category key + name.  Filled on first use: each distinct match is handled once."""

    def __init__(self) -> None:
        super().__init__()
        self.stems = Stems()

    def __missing__(self, raw: str) -> tuple[str, ...]:
        if raw.islower() and raw.isalpha():  # a plain word (most of them): no named thing
            stem = _stem(raw)
            terms: tuple[str, ...] = (stem,) if stem else ()
        elif raw[0] == "]":  # a link target
            terms = ()
        else:
            named = _classify(raw)
            if named is None:
                stem = _stem(raw.lower())
                terms = (stem,) if stem else ()
            else:  # the named thing, and its words
                words = filter(None, map(self.stems.__getitem__, _WORD.findall(named[0].lower())))
                terms = (f"\x00{_CATEGORY_KEY[named[1]]}{named[0]}", *words)
        self[raw] = terms
        return terms

    def terms(self, text: str) -> tuple[str, ...]:
        """Distinct terms of ``text``, in order of first occurrence."""
        return tuple(dict.fromkeys(chain.from_iterable(map(self.__getitem__, _SCAN.findall(text)))))


def named_things(text: str) -> list[tuple[str, str]]:
    """(named thing, category) pairs of ``text`` in order, link targets excluded."""
    return [n for n in map(_classify, _SCAN.findall(text)) if n is not None]


def read_focus(focus: str, kind: str) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """Focus terms (stemmed); those that make a unit that mentions them a focus unit; and
    the category keys of the named things the focus names.  In a schema hint, a word that
    names a category ("exceptions", "NPCs") says what to extract, not what the text is
    about: it weighs as a focus term but does not make a focus unit."""
    words = _WORD.findall(focus.lower())
    categories = dict.fromkeys(_CATEGORY_OF_WORD[w] for w in words if w in _CATEGORY_OF_WORD)
    if "code" in categories:
        categories["exception"] = None  # exceptions are identifiers too
    terms = tuple(dict.fromkeys(s for s in map(_stem, words) if s and s not in _META_WORDS))
    topical = {_stem(w) for w in words if w not in _CATEGORY_OF_WORD} if kind == "extraction" else set(terms)
    return terms, tuple(t for t in terms if t in topical), "".join(_CATEGORY_KEY[c] for c in categories)
