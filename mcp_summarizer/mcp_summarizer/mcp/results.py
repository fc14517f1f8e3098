"""What a tool call returns: the text a model reads, the facts about it in `_meta`.

Tools return a `CallToolResult`: the text (and blocks beside it, such as the resource links
to a summary's sources), the facts about the answer under `META_SUMMARY`, and the `_meta`
that lets Claude Code keep a long answer in its context rather than in a file.  No
structured copy of a text is sent, which would send it twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mcp.types import CallToolResult, ContentBlock, TextContent

from mcp_summarizer.answering.meta import summary_facts
from mcp_summarizer.clients import fit
from mcp_summarizer.summarize.engine import Outcome

__all__ = [
    "META_SUMMARY",
    "cached_result",
    "inline",
    "structured_result",
    "summary_facts",
    "summary_result",
    "text_result",
]

# The result's `_meta` key for the facts about an answer (one key per kind, namespaced as the
# MCP spec asks for vendor keys): degraded, cause, notice, backend, model, token counts.
META_SUMMARY = "io.github.mythline/summary"


def summary_result(
    text: str,
    outcome: Outcome | None,
    model: str,
    more: Mapping[str, object] | None = None,
    extra: Sequence[ContentBlock] = (),
) -> CallToolResult:
    """The text a model reads (and ``extra`` blocks beside it, such as the links to its
    source), and the facts about it (with ``more``) in `_meta` for the client."""
    return cached_result(text, {**summary_facts(outcome, model), **(more or {})}, extra)


def cached_result(
    text: str, facts: Mapping[str, object], extra: Sequence[ContentBlock] = ()
) -> CallToolResult:
    """The text and ``extra`` blocks, with ``facts`` (already made: a cached answer's) in `_meta`."""
    content: list[ContentBlock] = [TextContent(type="text", text=text), *extra]
    return inline(CallToolResult(content=content, _meta={META_SUMMARY: dict(facts)}))


def text_result(text: str) -> CallToolResult:
    """A plain text answer with no facts about it (expand, search)."""
    return inline(CallToolResult(content=[TextContent(type="text", text=text)]))


def structured_result(
    text: str, structured: dict[str, Any] | None, facts: Mapping[str, Any]
) -> CallToolResult:
    """summarize_documents' answer: its text, its structure beside it (the topic index, fit to
    the client: Codex and OpenCode read it instead of the text), the facts in `_meta`."""
    return inline(
        CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=structured,
            _meta={META_SUMMARY: dict(facts)},
        )
    )


def inline(answer: CallToolResult) -> CallToolResult:
    """``answer``, with the `_meta` that lets Claude Code keep a long answer in its context
    rather than in a file (the main server's tools and the proxy's alike)."""
    chars = sum(len(b.text) for b in answer.content if isinstance(b, TextContent))
    if extra := fit.inline_meta(chars):
        return answer.model_copy(update={"meta": {**(answer.meta or {}), **extra}})
    return answer
