"""What `expand` answers: a stored original, with where it sits among its neighbours, within
the client's limits.

Shared by the service's `expand` and the proxy's.  The excerpt is `store.opened`'s; this
module makes the answer of it: Source:, Title:, URL:, Previous:, Next: and Status: lines,
then a blank line and the exact original text.

An excerpt too long for the answer (``max_tokens``, or the client's bytes and lines) comes a
page at a time, never cut: each page ends at a line end (a line longer than a page, at a
space), and Status says which characters it holds, the ``offset`` the next page starts at,
and that it was fitted to the client.  The pages join into exactly the excerpt.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from mcp_summarizer.answering.allowance import allowance
from mcp_summarizer.clients import fit
from mcp_summarizer.clients.profiles import Limits
from mcp_summarizer.errors import InputError
from mcp_summarizer.store.content import ContentStore, Source
from mcp_summarizer.store.opened import Opened, open_excerpt
from mcp_summarizer.tenant import Tenant
from mcp_summarizer.text import tokens

__all__ = ["Expanded", "expand"]


@dataclass(frozen=True, slots=True)
class Expanded:
    text: str
    source: Source
    tokens: int  # of the whole original


async def expand(
    store: ContentStore,
    tenant: Tenant,
    source_id_: str,
    max_tokens: int,
    *,
    offset: int = 0,
    limits: Limits | None = None,
) -> Expanded:
    """The answer for one id of ``tenant``'s, from character ``offset`` on; an unknown,
    expired or malformed id, or an offset past the end, is an InputError naming it."""
    if max_tokens < 0:
        raise InputError(f"max_tokens must be 0 (the whole excerpt) or positive, got {max_tokens}")
    opened = await open_excerpt(store, tenant, source_id_, offset)
    limits = limits or Limits()
    source, offset = opened.source, opened.start
    text, n = source.text, len(source.text)
    whole = await asyncio.to_thread(tokens.count, text)
    lines = _about(opened)
    # Sized under a Status line longer than the real one can be (its numbers, "next offset=").
    head = _render(lines, _status(n, n, n + 1, max_tokens, whole, limits), "")
    # The text's tokens (0: all of them); the client's cap counts the lines above too.
    asked = max_tokens or limits.tokens
    room = None if asked is None else allowance(asked, limits, header=head).budget
    if offset == 0 and (room is None or whole <= room):
        answer = _render(lines, f"whole excerpt, {whole} tokens", text)
        if fit.fits(answer, limits):
            return Expanded(answer, source, whole)
    end = await asyncio.to_thread(fit.page_end, text, offset, limits, head, room)
    status = _status(offset, end, n, max_tokens, whole, limits)
    return Expanded(_render(lines, status, text[offset:end]), source, whole)


def _about(opened: Opened) -> list[str]:
    """The lines before Status: which excerpt it is, its title and address, its neighbours."""
    source = opened.source
    lines = [f"Source: {source.source_id} (excerpt {source.index + 1} of {source.chunk_count})"]
    if source.title:
        lines.append(f"Title: {' '.join(source.title.split())}")
    if source.url:
        lines.append(f"URL: {source.url}")
    return [
        *lines,
        f"Previous: {opened.previous or 'none (the first)'}",
        f"Next: {opened.next or 'none (the last)'}",
    ]


def _render(lines: list[str], status: str, body: str) -> str:
    return "\n".join([*lines, f"Status: {status}"]) + "\n\n" + body


def _status(start: int, end: int, n: int, max_tokens: int, whole: int, limits: Limits) -> str:
    why = f"cut to max_tokens={max_tokens} of {whole} tokens" if max_tokens and whole > max_tokens else ""
    if limits.sized or limits.tokens:
        fitted = f"to fit this client's {limits.describe()}"
        why = f"{why}, {fitted}" if why else fitted
    more = f"next offset={end}" if end < n else "the end"
    return f"characters {start}-{end} of {n} ({why}); {more}"
