"""How much each term and unit is worth to an extractive summary: the term weights and
their decay when taken, and the units' score factors (`selector`'s steps 2 and 3, where the
why is told).  Pure: a parsed text, its units' terms and the focus in, numbers out."""

from __future__ import annotations

import math
from collections import Counter
from itertools import chain

from mcp_summarizer.text.code import is_docstring
from mcp_summarizer.text.lexicon import read_focus, word_stems
from mcp_summarizer.text.units import CODE, KIND, PATH, TEXT, Doc

__all__ = ["ENTITY_WEIGHT", "Weights", "boosts", "weights"]

# --- tuning (see `selector`'s docstring; bench/extractive.py judges a change) ---------------------

REDUNDANCY_DECAY = 0.3  # a taken unit's word weights are multiplied by this
FOCUS_UNIT_BOOST = 3.0  # the score of a unit that mentions a focus term is multiplied by this
SECTION_FOCUS_BOOST = 1.5  # ... of a unit under a header that mentions one (and not itself)
FOCUS_GAIN = 1.0  # a focus term also weighs as much as the heaviest document word
FOCUS_DECAY = 0.7
ENTITY_WEIGHT = {"general": 0.3, "extraction": 0.5}  # a named thing, relative to the heaviest word
ENTITY_SINGLETON = 0.6  # a named thing seen once weighs this much of a repeated one
CATEGORY_GAIN = 3.0  # a named thing of a category the focus names
ENTITY_DECAY = 0.1
CODE_FACTOR = 0.6  # code blocks' scores are multiplied by this
LEAD_IN_FACTOR = 0.3  # a sentence ending with ":" introduces something: little use alone
ASIDE_FACTOR = 0.5  # a sentence in parentheses is an aside
OUTLINE_FACTOR = 2.0  # a table's first column names what its rows are about, in a fraction of their tokens
_BATCH = 4096  # units per C-level loop (which holds the GIL: /health must not wait for it)

# (weight by term, decay by term when a unit with it is taken, the focus' topical terms)
Weights = tuple[dict[str, float], dict[str, float], tuple[str, ...]]


def weights(unit_terms: list[tuple[str, ...]], n_units: int, focus: str, kind: str) -> Weights:
    """Each term's weight: ``df/N * log(1 + N/df)`` scaled so the heaviest word weighs 1; a
    named thing ("\\x00"-prefixed) a constant of ``kind``, more when repeated or of a category
    the focus names; a focus term FOCUS_GAIN.  And how much each decays once taken."""
    df: Counter[str] = Counter()
    for k in range(0, len(unit_terms), _BATCH):  # C loops of bounded length: each holds the GIL
        df.update(chain.from_iterable(unit_terms[k : k + _BATCH]))
    n = max(n_units, 1)
    weight = {t: c / n * math.log(1.0 + n / c) for t, c in df.items() if t[0] != "\x00"}
    top = max(weight.values(), default=1.0) or 1.0
    weight = {t: w / top for t, w in weight.items()}
    decay = dict.fromkeys(weight, REDUNDANCY_DECAY)
    focus_terms, topical, categories = read_focus(focus, kind)
    named_weight = ENTITY_WEIGHT[kind]
    for t, c in df.items():
        if t[0] == "\x00":
            w = named_weight if c > 1 else named_weight * ENTITY_SINGLETON
            weight[t] = w * CATEGORY_GAIN if t[1] in categories else w
            decay[t] = ENTITY_DECAY
    for t in focus_terms:
        weight[t] = FOCUS_GAIN
        decay[t] = FOCUS_DECAY
    return weight, decay, topical


def boosts(doc: Doc, unit_terms: list[tuple[str, ...]], focus_terms: tuple[str, ...]) -> list[float]:
    """Score factors: FOCUS_UNIT_BOOST for a unit that mentions a focus term, else
    SECTION_FOCUS_BOOST under a header that mentions one; CODE_FACTOR for code blocks;
    LEAD_IN_FACTOR for a sentence that announces what follows ("Compact encoding:"),
    which says little alone; ASIDE_FACTOR for a sentence in parentheses."""
    units = doc.units
    out = [
        (1.0 if is_docstring(u[TEXT]) else CODE_FACTOR)
        if u[KIND] == CODE
        else LEAD_IN_FACTOR
        if u[TEXT][-1] == ":"
        else ASIDE_FACTOR
        if u[TEXT][0] == "(" and u[TEXT].rstrip(".")[-1:] == ")"
        else 1.0
        for u in units
    ]
    for i in doc.outlines.values():
        out[i] = OUTLINE_FACTOR
    if focus_terms:
        wanted = frozenset(focus_terms)
        hot = [not wanted.isdisjoint(word_stems(h)) for h in doc.headers]
        by_path: dict[tuple[int, ...], bool] = {}
        for i, u in enumerate(units):
            if not wanted.isdisjoint(unit_terms[i]):
                out[i] *= FOCUS_UNIT_BOOST
                continue
            if u[PATH] not in by_path:
                by_path[u[PATH]] = any(hot[h] for h in u[PATH])
            if by_path[u[PATH]]:
                out[i] *= SECTION_FOCUS_BOOST
    return out
