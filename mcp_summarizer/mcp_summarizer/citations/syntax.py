"""Inline citations, ``[doc#chunk]``: found, checked against the ids that exist, and the
made-up ones removed.  Pure, no I/O.

A model may cite several ids in one bracket (``[a#1, b#2]``); each is checked on its own.
A bracket left with no valid id is removed whole, with the space before it.
"""

from __future__ import annotations

import re
from collections.abc import Collection

__all__ = ["CITATION", "cited", "clean"]

# <doc id>~<version>#<n>; the version is optional here so a made-up id without one is found
# (and removed) too.
_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}(?:~[0-9a-f]{1,32})?#\d{1,7}"
# One bracket of ids separated by commas or semicolons.  Bounded repeats: linear on any text.
CITATION = re.compile(rf"[ \t]?\[({_ID}(?:[ \t]*[,;][ \t]*{_ID}){{0,50}})\]")
_SPLIT = re.compile(r"[ \t]*[,;][ \t]*")


def cited(text: str) -> list[str]:
    """The ids ``text`` cites, in order of first citation."""
    found: dict[str, None] = {}
    for m in CITATION.finditer(text):
        for sid in _SPLIT.split(m.group(1)):
            found.setdefault(sid, None)
    return list(found)


def clean(text: str, allowed: Collection[str]) -> tuple[str, int]:
    """``text`` with every citation of an id not in ``allowed`` removed, and how many were."""
    removed = 0

    def fix(m: re.Match[str]) -> str:
        nonlocal removed
        ids = _SPLIT.split(m.group(1))
        kept = [i for i in ids if i in allowed]
        removed += len(ids) - len(kept)
        if not kept:
            return ""
        lead = m.group(0)[0] if m.group(0)[0] in " \t" else ""
        return f"{lead}[{', '.join(kept)}]"

    return CITATION.sub(fix, text), removed
