"""What one answer may be, resolved once: its budget, its room, and the drill's reserve.

An answer's size is asked in tokens (``max_output_tokens``; 0 is the default), held to the
server's ceiling (`summarize.budget.Budget.output_tokens`, whose error names the limit),
capped by the client's own token limit (`clients.profiles.Limits`), and turned into the tokens
the client's bytes and lines leave (`clients.fit.room`); a summary that cites its source
leaves part of that for the handle's line and the citations (`drill.answer.Drill.reserve`).
Each tool did these steps its own way; `allowance` does them in one place, and the tools and
the proxy read the one value it makes.  Pure, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.summarize.budget import Budget
from mcp_summarizer.text import tokens

__all__ = ["Allowance", "allowance"]


@dataclass(frozen=True, slots=True)
class Allowance:
    """The tokens one answer may have.  ``budget``: the whole answer's (its header lines aside,
    see `allowance`); ``room``: what the client's bytes and lines leave of it for the text;
    ``reserve``: what a cited summary leaves of the room for its handle's line and citations."""

    budget: int
    room: int
    limits: Limits
    reserve: int = 0

    @property
    def summary(self) -> int:
        """The tokens the summary itself is asked for: the room less the reserve."""
        return max(self.room - self.reserve, 1)

    def reserving(self, reserve: int) -> Allowance:
        """This allowance once the drill knows what its line and citations take."""
        return replace(self, reserve=reserve)

    def under(self, head: str) -> int:
        """The room of a text under ``head`` when the head's tokens are part of the budget
        (the proxy's first line), its bytes and lines part of the client's."""
        return fit.room(self.budget - tokens.count(head), self.limits, head)

    def fits(self, text: str) -> bool:
        """Whether ``text`` is within the client's bytes and lines (its tokens are the caller's
        to count against the budget)."""
        return fit.fits(text, self.limits)

    def less(self, taken_bytes: int, taken_tokens: int = 0) -> Allowance:
        """What is left for the text once other parts of the answer took ``taken_tokens`` of
        the budget and ``taken_bytes`` of the client's bytes (the proxy's `_meta`, other
        blocks and structuredContent travel with the text)."""
        limits = self.limits
        if limits.bytes is not None and taken_bytes > 0:
            limits = replace(limits, bytes=max(limits.bytes - taken_bytes, 1))
        budget = self.budget - taken_tokens
        return Allowance(budget, fit.room(budget, limits), limits, self.reserve)

    def left(self, head: str) -> int:
        """The budget's tokens left for a text under ``head`` (at least one), its bytes and
        lines aside."""
        return max(self.budget - tokens.count(head), 1)

    def start(self, text: str, head: str, room: int | None = None) -> str:
        """The start of ``text`` that fits under ``head``: whole lines where one fits
        (`clients.fit.page_end`), within the client's bytes and lines and ``room`` tokens
        (at least one; without it, what the budget leaves under the head).  For a text kept
        exact, cut rather than summarized."""
        most = self.left(head) if room is None else max(room, 1)
        return text[: fit.page_end(text, 0, self.limits, head, most)]


def allowance(
    asked: int,
    limits: Limits,
    *,
    ceiling: Budget | None = None,
    header: str = "",
    fits: bool = False,
) -> Allowance:
    """The allowance of an answer ``asked`` that many tokens for a client of ``limits``.

    ``ceiling``: the server's budget rules, which check ``asked`` (0: the default); without
    it ``asked`` is taken as it is (a tool's own default, already within them).  ``header``:
    lines above the text (fetch_url's URL, Title and Status) outside the budget but inside the
    client's limits.  ``fits``: the answer is the source itself, already within the client's
    bytes and lines, so its room is the whole budget."""
    if ceiling is not None:
        asked = ceiling.output_tokens(asked)
    if header and limits.tokens is not None:  # the client's cap is on the whole answer
        asked = min(asked, max(limits.tokens - tokens.count(header), 1))
    budget = limits.budget(asked)
    return Allowance(budget, budget if fits else fit.room(budget, limits, header), limits)
