"""JSON pretty-printed (2-space indent), when it can be without changing what it says.

Invalid JSON, JSON nested too deep to re-dump, and objects with duplicate keys (re-dumping
would keep only one) are left as they are: :func:`pretty_json` returns None for them.
"""

from __future__ import annotations

import json

__all__ = ["pretty_json"]


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _DuplicateKey
    return result


def pretty_json(text: str) -> str | None:
    """``text`` re-dumped with a 2-space indent, or None when it must stay as it is."""
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError):  # invalid, duplicate keys (re-dumping would lose one), too deep
        return None
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return None
