"""The run's digest: every source of the research, condensed by the summarizer's
`summarize_documents` into a topic index, cluster summaries and a master summary, each
claim citing the source it rests on.

Each source becomes one document with an id of its own (``<topic>-<n>``, so the same page read
for two topics stays two documents), its URL and title; the output maps every id back to
its source.  The digest is an extra: when the summarizer is missing, down, slow or answers
with an error, the research is still written and the digest says why it is absent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client

# The SDK's own HTTP client factory (its defaults: timeouts, redirects), for a server whose
# config entry has headers; not re-exported, so imported from where it lives.
from mcp.shared._httpx_utils import create_mcp_http_client

from world_lore_researcher import tools
from world_lore_researcher.checkpoint import TopicResearch
from world_lore_researcher.mcp_config import MCPServerSpec

__all__ = ["SUMMARIZE_DOCUMENTS", "digest", "documents_of"]

logger = logging.getLogger("world_lore_researcher.digest")

SUMMARIZE_DOCUMENTS = "summarize_documents"
_META = "io.github.mythline/summary"
_FOCUS_CHARS = 4000  # the schema hints joined: enough to rank topics, far under the service's limit


def documents_of(research: Sequence[TopicResearch]) -> tuple[list[dict[str, str]], dict[str, dict[str, str]]]:
    """The documents to send, and each id's source (topic, url, title)."""
    documents: list[dict[str, str]] = []
    sources: dict[str, dict[str, str]] = {}
    for r in research:
        for n, s in enumerate(r.sources, 1):
            if not s.content.strip():
                continue
            doc_id = f"{r.topic}-{n}"
            documents.append(
                {"id": doc_id, "text": s.content, "title": s.title or s.url or s.tool, "url": s.url}
            )
            sources[doc_id] = {"topic": r.topic, "url": s.url, "title": s.title, "tool": s.tool}
    return documents, sources


def focus_of(zone: str, research: Sequence[TopicResearch]) -> str:
    hints = "; ".join(dict.fromkeys(r.schema_hint.strip() for r in research if r.schema_hint.strip()))
    return f"{zone}: {hints}"[:_FOCUS_CHARS]


async def digest(
    spec: MCPServerSpec | None,
    zone: str,
    research: Sequence[TopicResearch],
    *,
    max_tokens: int,
    seconds: float,
) -> dict[str, Any]:
    """The digest to write next to the research; ``{"available": false, "reason": ...}``
    when there is none."""
    documents, sources = documents_of(research)
    if not documents:
        return {"available": False, "reason": "the research has no source text to summarize"}
    if spec is None:
        return {"available": False, "reason": f"no {tools.SUMMARIZER_SERVER!r} server in the MCP config"}
    args = {"documents": documents, "focus": focus_of(zone, research), "max_output_tokens": max_tokens}
    try:
        result = await asyncio.wait_for(_call(spec, args), seconds)
    except TimeoutError:
        return _absent(f"the summarizer did not answer within RESEARCHER_SUMMARY_TIMEOUT_SECONDS={seconds:g}")
    except Exception as exc:  # down, refused, a broken stream: the research is still written
        cause = _leaf(exc)
        return _absent(f"the summarizer could not be reached at {spec.url}: {type(cause).__name__}: {cause}")
    text = "".join(getattr(c, "text", "") for c in result.content)
    if result.is_error:
        return _absent(f"the summarizer refused: {text[:500]}")
    structured = result.structured_content or {}
    facts = (result.meta or {}).get(_META, {})
    logger.info(
        "digest_written",
        extra={
            "documents": len(documents),
            "clusters": len(structured.get("index", {}).get("clusters", [])),
            "degraded": bool(facts.get("degraded")),
        },
    )
    return {
        "available": True,
        "degraded": bool(facts.get("degraded")),
        "cause": facts.get("cause"),
        "backend": facts.get("backend"),
        "output_tokens": facts.get("output_tokens"),
        "text": text,
        "index": structured.get("index"),
        "cluster_summaries": structured.get("cluster_summaries"),
        "master_summary": structured.get("master_summary"),
        "sources": sources,
    }


async def _call(spec: MCPServerSpec, args: dict[str, Any]) -> Any:
    http = create_mcp_http_client(headers=dict(spec.headers)) if spec.headers else None
    transport = streamable_http_client(spec.url, http_client=http)
    async with Client(transport) as client:
        return await client.call_tool(SUMMARIZE_DOCUMENTS, args)


def _leaf(exc: BaseException) -> BaseException:
    """The first error inside the client's task groups (a 401, a refused connection)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _absent(reason: str) -> dict[str, Any]:
    logger.warning("digest_unavailable", extra={"reason": reason})
    return {"available": False, "reason": reason}
