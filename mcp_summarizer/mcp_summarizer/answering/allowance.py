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
