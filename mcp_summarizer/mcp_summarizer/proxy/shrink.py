"""A JSON tool result made to fit a token budget without losing its shape.  Pure, no I/O.

An API response or a listing is read by a program-minded agent: it needs the keys, the ids,
the error messages, how many items there were, and what the first and last ones look like.
A prose summary of JSON loses exactly those.  So JSON is cut, not summarized: every object
keeps its keys (an object with very many keys keeps the first ones, and every key whose name
says id, name, error, status, count...), a long array keeps its first and last items with a
marker saying how many were left out of how many, a long string keeps its start with a
marker saying how many characters were cut, and numbers, booleans and nulls stay as they are.

The cut grows in steps (items kept per array, characters per string) until the text fits;
the gentlest step that fits wins.  Strings under keys that name an error or a message keep
four times as much, so an error is read whole wherever it fits.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mcp_summarizer.text import tokens

__all__ = ["Shrunk", "parse_json", "shrink"]

# (items kept at each end of an array, characters kept of a string), gentlest first.
_STEPS: tuple[tuple[int, int], ...] = (
    (50, 2000),
    (20, 1000),
    (10, 400),
    (5, 200),
    (3, 100),
    (2, 60),
    (1, 40),
    (1, 20),
    (0, 12),
)
_DEPTH = 64  # deeper than any real API response; past it a subtree becomes a marker
_KEYS_PER_ITEM = 8  # an object keeps at least this many keys per array item kept, at least 16
# Key names whose values are what a reader of JSON looks for first (the last word of the key).
_SALIENT = frozenset(
    "id ids uuid key name title error errors message msg reason detail status code type kind "
    "count total size url uri path".split()
)
_LOUD = frozenset("error errors message msg reason detail".split())
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


@dataclass(frozen=True, slots=True)
class Shrunk:
    text: str  # compact JSON, valid, within the budget
    tokens: int
    items_omitted: int  # array items (and object keys) left out
    strings_cut: int


def parse_json(text: str) -> Any | None:
    """The text's value when it is a JSON object or array, else None (plain text, a bare
    scalar, or nesting too deep for the parser)."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


def shrink(value: Any, budget: int) -> Shrunk | None:
    """The gentlest cut of ``value`` whose compact JSON is at most ``budget`` tokens, or None
    when even the harshest does not fit (the caller then cuts the text itself)."""
    for items, chars in _STEPS:
        counts = [0, 0]
        text = _dumps(_cut(value, items, chars, 0, counts, loud=False))
        n = tokens.count(text)
        if n <= budget:
            return Shrunk(text, n, counts[0], counts[1])
    return None


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _cut(value: Any, items: int, chars: int, depth: int, counts: list[int], *, loud: bool) -> Any:
    if isinstance(value, str):
        limit = chars * 4 if loud else chars
        if len(value) <= limit + 24:  # a marker would cost more than it saves
            return value
        counts[1] += 1
        return f"{value[:limit]}…(+{len(value) - limit} chars)"
    if not isinstance(value, (dict, list)):
        return value
    if depth >= _DEPTH:
        counts[0] += 1
        return f"…(nested deeper than {_DEPTH} levels)"
    if isinstance(value, list):
        n = len(value)
        if n <= 2 * items + 1:
            return [_cut(v, items, chars, depth + 1, counts, loud=loud) for v in value]
        counts[0] += n - 2 * items
        head = [_cut(v, items, chars, depth + 1, counts, loud=loud) for v in value[:items]]
        tail = (
            [_cut(v, items, chars, depth + 1, counts, loud=loud) for v in value[n - items :]] if items else []
        )
        return [*head, f"…({n - 2 * items} more items, {n} in all)", *tail]
    keep = max(16, _KEYS_PER_ITEM * items)
    out: dict[str, Any] = {}
    left = 0
    for i, (key, v) in enumerate(value.items()):
        words = [w.lower() for w in _WORDS.findall(str(key))]
        last = words[-1] if words else ""
        if i < keep or last in _SALIENT:
            out[key] = _cut(v, items, chars, depth + 1, counts, loud=last in _LOUD)
        else:
            left += 1
    if left:
        counts[0] += left
        out["…"] = f"{left} more keys, {len(value)} in all"
    return out
