"""The summarize_documents tool: many documents summarized at once, every claim cited.

Thin on purpose: the tool hands the documents to the answer pipeline
(`answering.documents_answer`: the result cache, the client's deadline and limits, the
structure beside the text), returns its text with its structure (the topic index), and counts
and logs it.
"""

# No `from __future__ import annotations`: the tool's annotations hold values of this
# configuration (the budget ceiling), which the SDK can only read if they are evaluated here.
import logging
import time
from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from mcp_summarizer.answering.call import Call
from mcp_summarizer.answering.documents_answer import documents_answer
from mcp_summarizer.documents.compose import DocumentsOutcome
from mcp_summarizer.documents.schema import DocumentIn, DocumentsSummary
from mcp_summarizer.errors import SummarizerError
from mcp_summarizer.summarize.deadline import Partial
from mcp_summarizer.summarize.engine import by_llm

from .arguments import bounded
from .registry import SUMMARIZE_ANNOTATIONS, Tools
from .results import structured_result
from .service import Service, answered, call_of, rejected
from .summarize_tools import budget_description

__all__ = ["register"]

logger = logging.getLogger("mcp_summarizer")


def register(tools: Tools, service: Service) -> None:
    """summarize_documents."""
    ceiling = service.engine.budget.max_output
    budget = budget_description(service)
    tool = tools.tool

    @tool(SUMMARIZE_ANNOTATIONS, structured=True)
    async def summarize_documents(
        documents: Annotated[
            list[DocumentIn],
            Field(
                description='The documents, e.g. [{"text": "...", "title": "Elwynn Forest", '
                '"url": "https://..."}]. Each is cut into excerpts with ids <doc id>~<version>#<n>.',
                max_length=10_000,
            ),
        ],
        ctx: Context,
        focus: Annotated[
            str,
            Field(description='What matters, e.g. "NPCs, factions, lore events". Ranks topics; empty = all.'),
        ] = "",
        max_output_tokens: Annotated[int, bounded(budget, ceiling)] = 0,
    ) -> Annotated[CallToolResult, DocumentsSummary]:
        """Summarize many documents at once, every claim traceable to its source.

        Returns a master summary, then a summary per topic (most relevant to focus first), at
        most max_output_tokens tokens in all. Claims cite excerpts inline as [doc#n]; open one
        with expand to read the original text. The structured result holds the topic index
        (clusters with their source_ids and relevance), the summaries and the documents.
        """
        return await service.run(
            "summarize_documents", _summarize_documents(service, ctx, documents, focus, max_output_tokens)
        )


async def _summarize_documents(
    service: Service, ctx: Context, documents: list[DocumentIn], focus: str, max_output_tokens: int
) -> CallToolResult:
    call = call_of(service, ctx, "summarize_documents")
    try:
        made = await documents_answer(
            service.answering, service.documents, call, documents, focus, max_output_tokens
        )
    except SummarizerError as exc:
        raise rejected(service, call.tool, exc) from None
    if made.outcome is not None:  # made here (a cached one was counted and logged as it was found)
        _report(service, call, made.outcome, made.budget, made.partial)
    return structured_result(made.text, made.structured, made.facts)


def _report(
    service: Service, call: Call, outcome: DocumentsOutcome, budget: int, partial: Partial | None
) -> None:
    """An answer made: counted, measured and logged (``documents_summary_complete``)."""
    answered(service, call.tool, outcome.degraded, outcome.input_tokens, outcome.output_tokens)
    coverage = outcome.structured.index.coverage
    logger.info(
        "documents_summary_complete",
        extra={
            "tool": call.tool,
            "documents": coverage.documents,
            "excerpts": coverage.excerpts,
            "clusters": coverage.clusters,
            "clusters_summarized": coverage.clusters_summarized,
            "documents_not_covered": len(coverage.documents_not_covered),
            "citations_removed": coverage.citations_removed,
            "json_retries": outcome.json_retries,
            "json_fallbacks": outcome.json_fallbacks,
            "input_tokens": outcome.input_tokens,
            "output_tokens": outcome.output_tokens,
            "llm_calls": outcome.llm_calls,
            "llm_prompt_tokens": outcome.llm_prompt_tokens,
            "model": service.engine.model if by_llm(outcome.backend) else "extractive",
            "degraded": outcome.degraded,
            "cause": outcome.cause or None,
            "max_output_tokens": budget,
            "partial": partial is not None,
            **(partial.as_log() if partial is not None else {}),
            **(outcome.fidelity.as_log() if outcome.fidelity else {}),
            "duration_ms": round((time.perf_counter() - call.started) * 1000, 1),
        },
    )
