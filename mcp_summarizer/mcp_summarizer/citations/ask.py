"""Asking a model for citations: each map call's prompt names the excerpts its chunk holds,
and the reduce prompt asks to keep the ids.  Pure, no I/O.

The prompts name excerpt ``n`` by a label, ``[src#n]``, which `relabel` turns into its id,
``<handle>#n``, in the final text: a map prompt, and so the map cache's key, then depends on
the chunk and where the excerpts start in it, not on the handle, which changes with every edit
of the source (a page changed in one section still costs map calls for that section only).

A chunk is placed in the kept source by character offsets: the engine chunks the source,
or the source with some lines of site chrome cut out (then a chunk starts at or after its
offset in the source, and is found from there).  The model's ids are checked afterwards
(`citations.attribute`): any that is not one of the source's is removed and counted.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from mcp_summarizer.citations.syntax import CITATION
from shared.prompt_loader import load_prompt, render

__all__ = ["LABEL", "LISTED", "NO_CITATIONS", "Ask", "relabel"]

LABEL = "src"  # excerpt n is [src#n] in the prompts

NO_CITATIONS = {"citations": ""}  # the prompts' value when nobody asks for ids
LISTED = 16  # excerpts named with their first words in one map prompt; ids only beyond
_MAX_IDS = 2 * LISTED  # and at most this many ids in all (a chunk spans few excerpts)
_WORDS = 8  # the first words that show where an excerpt begins
_PROBE = 64  # characters of a chunk looked for in the source
_SPLIT = re.compile(r"[ \t]*[,;][ \t]*")
_LABELED = re.compile(rf"(?<![A-Za-z0-9._~-]){LABEL}#(\d{{1,7}})\b")


class Placed(Protocol):
    """What `Ask` reads of a chunk (summarize.chunker.Chunk): its text, after its header
    context, is ``source[start:...]``.  A protocol, so drill/ needs nothing from summarize/."""

    @property
    def text(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def context(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Ask:
    """A kept source's excerpts: ``ids[i]`` starts at ``starts[i]`` of ``source``.  While the
    source is still being cut, ``starts`` grows and there are no ids yet: the prompts need
    only the starts, each once the excerpts it `needs` are cut (the caller waits for them)."""

    source: str
    ids: Sequence[str]
    starts: Sequence[int]

    def needs(self, piece: Placed | None) -> tuple[int, int]:
        """What ``piece``'s prompt names, as (the first excerpts, the character the excerpts
        starting before it end at): for None (the prompts' size), the first `LISTED`."""
        if piece is None:
            return LISTED, 0
        span = self._span(piece)
        return 0, span[1] if span is not None else 0

    def map_values(self, piece: Placed | None) -> dict[str, str]:
        """The map prompt's ``citations``: the excerpts ``piece`` holds; for None (the
        prompt's size, before the chunks are known), the longest such list."""
        if not self.starts:
            return NO_CITATIONS
        held = range(min(len(self.starts), LISTED)) if piece is None else self.held(piece)
        if not held:
            return NO_CITATIONS
        lines = []
        for k, n in enumerate(held[:_MAX_IDS]):
            if k == 0:
                lines.append(f"- [{LABEL}#{n}] from the start of the section")
            elif len(held) <= LISTED:
                lines.append(f'- [{LABEL}#{n}] from "{self._first_words(n)}"')
            else:
                lines.append(f"- [{LABEL}#{n}]")
        text = render(_template("cite_map"), excerpts="\n".join(lines), example=f"{LABEL}#{held[0]}")
        return {"citations": text}

    def reduce_values(self) -> dict[str, str]:
        """The reduce prompt's ``citations``: keep the ids."""
        if not self.starts:
            return NO_CITATIONS
        return {"citations": render(_template("cite_reduce"), example=f"{LABEL}#0")}

    def repair_values(self) -> dict[str, str]:
        """The repair prompt's ``citations``: keep the ids of the summary it corrects."""
        if not self.starts:
            return NO_CITATIONS
        return {"citations": render(_template("cite_repair"), example=f"{LABEL}#0")}

    def held(self, piece: Placed) -> range:
        """The excerpts a chunk's text overlaps, in the source's order."""
        span = self._span(piece)
        if span is None:
            return range(0)
        at, end = span
        first = max(bisect_right(self.starts, at) - 1, 0)
        last = bisect_left(self.starts, min(end, len(self.source)))  # excerpts starting before the end
        return range(first, max(last, first + 1))

    def _span(self, piece: Placed) -> tuple[int, int] | None:
        """Where a chunk's text is in the source (None: it is all white space)."""
        body = piece.text[len(piece.context) :]
        lead = len(body) - len(body.lstrip())
        body = body.strip()  # white space at its ends belongs to no excerpt in particular
        if not body:
            return None
        src, start = self.source, min(piece.start + lead, len(self.source))
        # Site chrome goes in whole lines: a chunk's first and last lines are in the source as
        # they are, at or after the chunk's offsets.
        probe = body[: min(_PROBE, (body.find("\n") + 1) or len(body))]
        at = start if src.startswith(probe, start) else src.find(probe, start)
        at = at if at >= 0 else start  # changed on the way (never expected): about there
        end = at + len(body)
        tail = body[body.rfind("\n") + 1 :][-_PROBE:]
        if not src.startswith(tail, end - len(tail)):
            found = src.find(tail, end - len(tail))
            end = found + len(tail) if found >= 0 else end
        return at, end

    def _first_words(self, n: int) -> str:
        at = self.starts[n]
        words = self.source[at : at + 300].split()[:_WORDS]
        return " ".join(words).replace('"', "'")


def relabel(text: str, ids: Sequence[str]) -> str:
    """``text`` with each label a citation holds, ``src#n``, turned into ``ids[n]``; a label of
    no excerpt is left as it is (`citations.syntax.clean` then removes and counts it)."""

    def one(m: re.Match[str]) -> str:
        n = int(m.group(1))
        return ids[n] if n < len(ids) else m.group(0)

    def bracket(m: re.Match[str]) -> str:
        lead = m.group(0)[: m.start(1) - m.start(0) - 1]  # the space before the bracket
        cited = dict.fromkeys(_LABELED.sub(one, i) for i in _SPLIT.split(m.group(1)))
        return f"{lead}[{', '.join(cited)}]"

    return CITATION.sub(bracket, text)


def _template(name: str) -> str:
    return load_prompt(__file__, name)
