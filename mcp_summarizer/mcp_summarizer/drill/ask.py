"""Asking a model for citations: each map call's prompt names the excerpts its chunk holds,
and the reduce prompt asks to keep the ids.  Pure, no I/O.

A chunk is placed in the kept source by character offsets: the engine chunks the source,
or the source with some lines of site chrome cut out (then a chunk starts at or after its
offset in the source, and is found from there).  The model's ids are checked afterwards
(`drill.cite`): any that is not one of the source's is removed and counted.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from mcp_summarizer.summarize.chunker import Chunk
from shared.prompt_loader import load_prompt, render

__all__ = ["NO_CITATIONS", "Ask"]

NO_CITATIONS = {"citations": ""}  # the prompts' value when nobody asks for ids
_LISTED = 16  # excerpts named with their first words in one map prompt; ids only beyond
_MAX_IDS = 2 * _LISTED  # and at most this many ids in all (a chunk spans few excerpts)
_WORDS = 8  # the first words that show where an excerpt begins
_PROBE = 64  # characters of a chunk looked for in the source


@dataclass(frozen=True, slots=True)
class Ask:
    """The ids of a kept source's excerpts (``ids[i]`` starts at ``starts[i]`` of ``source``)."""

    source: str
    ids: Sequence[str]
    starts: Sequence[int]

    def map_values(self, piece: Chunk | None) -> dict[str, str]:
        """The map prompt's ``citations``: the excerpts ``piece`` holds; for None (the
        prompt's size, before the chunks are known), the longest such list."""
        if not self.ids:
            return NO_CITATIONS
        held = range(min(len(self.ids), _LISTED)) if piece is None else self.held(piece)
        if not held:
            return NO_CITATIONS
        lines = []
        for k, n in enumerate(held[:_MAX_IDS]):
            if k == 0:
                lines.append(f"- [{self.ids[n]}] from the start of the section")
            elif len(held) <= _LISTED:
                lines.append(f'- [{self.ids[n]}] from "{self._first_words(n)}"')
            else:
                lines.append(f"- [{self.ids[n]}]")
        return {"citations": render(_template("cite_map"), excerpts="\n".join(lines), example=self.ids[held[0]])}

    def reduce_values(self) -> dict[str, str]:
        """The reduce prompt's ``citations``: keep the ids."""
        if not self.ids:
            return NO_CITATIONS
        return {"citations": render(_template("cite_reduce"), example=self.ids[0])}

    def held(self, piece: Chunk) -> range:
        """The excerpts a chunk's text overlaps, in the source's order."""
        body = piece.text[len(piece.context) :]
        lead = len(body) - len(body.lstrip())
        body = body.strip()  # white space at its ends belongs to no excerpt in particular
        if not body:
            return range(0)
        src, start = self.source, min(piece.start + lead, len(self.source))
        probe = body[:_PROBE]
        at = start if src.startswith(probe, start) else src.find(probe, start)
        at = at if at >= 0 else start  # changed on the way (never expected): about there
        end = at + len(body)
        tail = body[-_PROBE:]
        if not src.startswith(tail, end - len(tail)):
            found = src.find(tail, at)
            end = found + len(tail) if found >= 0 else end
        first = max(bisect_right(self.starts, at) - 1, 0)
        last = bisect_left(self.starts, min(end, len(src)))  # excerpts starting before the end
        return range(first, max(last, first + 1))

    def _first_words(self, n: int) -> str:
        at = self.starts[n]
        words = self.source[at : at + 300].split()[:_WORDS]
        return " ".join(words).replace('"', "'")


def _template(name: str) -> str:
    return load_prompt(__file__, name)
