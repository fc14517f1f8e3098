"""What `expand` answers: a stored original, with where it sits among its neighbours.

Shared by the service's `expand` and the proxy's: both open ids from the same store.  The
answer starts with Source:, Title:, URL:, Previous:, Next: and Status: lines, then a blank
line and the exact original text (cut to ``max_tokens`` only when asked).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from mcp_summarizer.errors import InputError
from mcp_summarizer.store.content import ContentStore, Source, source_id
from mcp_summarizer.summarize import tokens

__all__ = ["Expanded", "expand"]


@dataclass(frozen=True, slots=True)
class Expanded:
    text: str
    source: Source
    tokens: int  # of the whole original


async def expand(store: ContentStore, source_id_: str, max_tokens: int) -> Expanded:
    """The answer for one id; an unknown, expired or malformed id is an InputError naming it."""
    if max_tokens < 0:
        raise InputError(f"max_tokens must be 0 (the whole excerpt) or positive, got {max_tokens}")
    source = await store.get(source_id_.strip())
    whole = await asyncio.to_thread(tokens.count, source.text)
    text, status = source.text, f"whole excerpt, {whole} tokens"
    if max_tokens and whole > max_tokens:
        text = await asyncio.to_thread(tokens.truncate, source.text, max_tokens)
        status = f"cut to max_tokens={max_tokens} of {whole} tokens"
    lines = [f"Source: {source.source_id} (excerpt {source.index + 1} of {source.chunk_count})"]
    if source.title:
        lines.append(f"Title: {' '.join(source.title.split())}")
    if source.url:
        lines.append(f"URL: {source.url}")
    before = source_id(source.doc_id, source.index - 1) if source.index > 0 else "none (the first)"
    after = (
        source_id(source.doc_id, source.index + 1)
        if source.index + 1 < source.chunk_count
        else "none (the last)"
    )
    lines += [f"Previous: {before}", f"Next: {after}", f"Status: {status}"]
    return Expanded("\n".join(lines) + "\n\n" + text, source, whole)
