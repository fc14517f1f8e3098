"""A part the LLM server's context cannot take, cut smaller and sent again: a map call's chunk
into smaller chunks, a merge's group into halves (one summary: its text cut), each part
summarized and the summaries joined within the call's budget.  Nothing already summarized is
thrown away: only the refused call is done again, in parts.

When a part is refused (`ContextOverflow`; the engine has learned from it by then) its parts
are at most half its size, and at most what the budget now says fits, so the splitting ends;
a part the budget already says cannot fit (a rejection elsewhere taught it) is cut before it
is sent.  Parts under `MIN_CHUNK_TOKENS` are not worth a call: then the server's context is
too small for the service's prompts, and `ContextTooSmall` says so, naming
LLM_CONTEXT_TOKENS and the server's limit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mcp_summarizer.errors import ContextOverflow, ContextTooSmall
from mcp_summarizer.summarize.budget import MESSAGE_OVERHEAD, MIN_CHUNK_TOKENS
from mcp_summarizer.summarize.chunker import Chunk, chunk
from mcp_summarizer.summarize.engine.context import ServerContext
from mcp_summarizer.summarize.engine.gather import gather
from mcp_summarizer.summarize.engine.model import Prompt, Run
from mcp_summarizer.summarize.engine.reduce import SEPARATOR, Fit
from mcp_summarizer.text import tokens

__all__ = ["Fitting", "Said", "split_chunk", "split_summaries"]

PART_SEPARATOR = "\n\n"  # between the summaries of one refused part's parts
_MIN_ANSWER = 16  # no part's answer is asked for fewer tokens (budget's smallest answer)


@dataclass(frozen=True, slots=True)
class Said:
    """A call's answer, and whether (some of) it is the embedded summary standing in for
    answers the checks rejected (`vetting`)."""

    text: str
    embedded: bool = False


# One LLM call of a run (system, content, max_tokens, phase): the engine's, under its limiter.
Caller = Callable[[Run, str, str, int, str], Awaitable[Said]]


@dataclass(frozen=True, slots=True)
class Fitting:
    """One request's map and merge calls, split while the server's context cannot take them."""

    run: Run
    context: ServerContext
    wrapper_tokens: int  # the <document> wrapper's
    send: Caller
    fit: Fit  # the engine's `_fit`

    async def map(self, system: Prompt, piece: Chunk, max_tokens: int) -> Said:
        """``piece``'s summary in at most ``max_tokens`` (embedded if any part of it is)."""
        rendered = system(max_tokens, piece)
        if self.context.learned and piece.tokens > self._room(rendered, max_tokens):
            parts = split_chunk(piece, self._part(rendered, max_tokens, piece.tokens, None))
        else:
            try:
                return await self.send(self.run, rendered, piece.text, max_tokens, "map")
            except ContextOverflow as exc:
                parts = split_chunk(piece, self._part(rendered, max_tokens, piece.tokens, exc))
        share = _share(max_tokens, len(parts))
        answers = await gather(self.map(system, p, share) for p in parts)
        joined = PART_SEPARATOR.join(a.text for a in answers)
        return Said(self.fit(self.run, joined, max_tokens), any(a.embedded for a in answers))

    async def merge(self, system: Prompt, group: list[str], max_tokens: int, phase: str) -> str:
        """One merge of ``group``'s summaries in at most ``max_tokens``."""
        rendered = system(max_tokens)
        content = SEPARATOR.join(group)
        if self.context.learned and (size := tokens.count(content)) > self._room(rendered, max_tokens):
            parts = split_summaries(group, self._part(rendered, max_tokens, size, None))
        else:
            try:
                return (await self.send(self.run, rendered, content, max_tokens, phase)).text
            except ContextOverflow as exc:
                size = tokens.count(content)
                parts = split_summaries(group, self._part(rendered, max_tokens, size, exc))
        share = _share(max_tokens, len(parts))
        answers = await gather(self.merge(system, p, share, phase) for p in parts)
        return self.fit(self.run, PART_SEPARATOR.join(answers), max_tokens)

    def _room(self, system: str, max_tokens: int) -> int:
        """Tokens of content a call with this prompt and answer can send, as the budget now is."""
        return self.context.budget.prompt_room(max_tokens) - self.wrapper_tokens - tokens.count(system)

    def _part(self, system: str, max_tokens: int, size: int, refused: ContextOverflow | None) -> int:
        """The size of the parts a ``size``-token content is cut into: what fits, and when it
        was refused, at most half of it."""
        part = self._room(system, max_tokens)
        if refused is not None:
            part = min(part, size // 2)
        self.run.outcome.context_splits += 1
        if part < MIN_CHUNK_TOKENS:
            self.run.failed = True  # no other call of the request may start: it is over
            system_tokens = tokens.count(system)
            raise ContextTooSmall(_too_small(self.context, system_tokens, self.wrapper_tokens, max_tokens))
        return part


def split_chunk(piece: Chunk, size: int) -> list[Chunk]:
    """``piece`` cut into chunks of at most ``size`` tokens at its markdown structure, each
    placed in the source as ``piece`` is (its excerpts' citations still found)."""
    lead = len(piece.context)
    return [
        Chunk(
            text=part.text,
            start=piece.start + max(0, part.start - lead),
            end=piece.start + max(0, part.end - lead),
            context=part.context,
            tokens=part.tokens,
        )
        for part in chunk(piece.text, chunk_size=size)
    ]


def split_summaries(group: list[str], size: int) -> list[list[str]]:
    """A merge's summaries in two halves of about equal size, or one summary's text cut into
    parts of at most ``size`` tokens."""
    if len(group) > 1:
        sizes = [tokens.count(s) for s in group]
        half, total, cut = sum(sizes) / 2, 0, 1
        for i, n in enumerate(sizes[:-1], start=1):
            total += n
            if total >= half:
                cut = i
                break
        return [group[:cut], group[cut:]]
    return [[part.text] for part in chunk(group[0], chunk_size=size)]


def _share(max_tokens: int, parts: int) -> int:
    return max(min(_MIN_ANSWER, max_tokens), max_tokens // max(parts, 1))


def _too_small(context: ServerContext, system_tokens: int, wrapper_tokens: int, max_tokens: int) -> str:
    """The failure's one line: the server's limit, the setting, and the context needed."""
    b, configured = context.budget, context.configured.context_tokens
    prompt = MESSAGE_OVERHEAD + wrapper_tokens + system_tokens + MIN_CHUNK_TOKENS
    need = int(b.tokenizer_ratio * prompt) + max_tokens
    if b.context_tokens < configured:
        server = f"the LLM server's context is {b.context_tokens} tokens (LLM_CONTEXT_TOKENS={configured})"
    else:
        server = f"the LLM server refuses prompts within LLM_CONTEXT_TOKENS={configured}"
    return f"{server}: too small for a prompt with a part of the text, which needs about {need}"
